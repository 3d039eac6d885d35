//! `tandem of decode` and `tandem of encode`: OpenFlow 1.0 / 1.3 messages as JSON lines.
//!
//! The mapping (described in docs/formats.md) lives here rather than in the wire crate, which does
//! not depend on serde. Objects keep their key order both ways ([`J`]): an OXM match is a list in
//! wire order, written as an object whose keys are the field names.
//!
//! Every decoded message is checked by encoding its JSON again: a message whose JSON would not
//! give back the same bytes (non-zero padding, an element this mapping does not model) is printed
//! with `"raw": true` and its whole body as `body_hex`, so `decode | encode` is always
//! byte-identical.

use crate::error::CliError;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, BufReader, BufWriter, IsTerminal, Read, Write};
use std::net::Ipv4Addr;
use std::path::Path;
use tandem_wire::ethernet::{self, MacAddr};
use tandem_wire::openflow::{
    Action, AggregateStats, Body, DescStats, ErrorMsg, FeaturesReply, FlowMatch, FlowMod, FlowModCommand, FlowRemoved,
    FlowStats, FlowStatsRequest, Hello, HelloElement, Instruction, Match10, Message, MultipartReply,
    MultipartReplyBody, MultipartRequest, MultipartRequestBody, MultipartType, OxmField, OxmMatch, Packet, PacketIn,
    PacketOut, PhyPort10, Port, Port13, PortStats, PortStatus, SwitchConfig, TableStats, Type10, Type13, Version,
};
use tandem_wire::pcap::{LinkType, TraceReader};
use tandem_wire::{ipv4, tcp, Error as WireError};

/// TCP ports of an OpenFlow session (IANA, and the pre-2013 one).
pub const OPENFLOW_PORTS: [u16; 2] = [6653, 6633];

// ---------------------------------------------------------------------------------------------
// Ordered JSON.

/// A JSON value whose objects keep their key order (and duplicate keys).
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    /// null
    Null,
    /// true / false
    Bool(bool),
    /// A number.
    Num(serde_json::Number),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<J>),
    /// An object, in order.
    Obj(Vec<(String, J)>),
}

impl Serialize for J {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            J::Null => s.serialize_unit(),
            J::Bool(b) => s.serialize_bool(*b),
            J::Num(n) => n.serialize(s),
            J::Str(t) => s.serialize_str(t),
            J::Arr(a) => {
                let mut q = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    q.serialize_element(v)?;
                }
                q.end()
            }
            J::Obj(o) => {
                let mut m = s.serialize_map(Some(o.len()))?;
                for (k, v) in o {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
    }
}

struct JVisitor;

impl<'de> Visitor<'de> for JVisitor {
    type Value = J;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<J, E> {
        Ok(J::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<J, E> {
        Ok(J::Num(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<J, E> {
        Ok(J::Num(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<J, E> {
        Ok(serde_json::Number::from_f64(v).map_or(J::Null, J::Num))
    }
    fn visit_str<E>(self, v: &str) -> Result<J, E> {
        Ok(J::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<J, E> {
        Ok(J::Str(v))
    }
    fn visit_unit<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }
    fn visit_none<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<J, D::Error> {
        J::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<J, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = a.next_element()? {
            v.push(x);
        }
        Ok(J::Arr(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<J, A::Error> {
        let mut v = Vec::new();
        while let Some((k, x)) = a.next_entry::<String, J>()? {
            v.push((k, x));
        }
        Ok(J::Obj(v))
    }
}

impl<'de> Deserialize<'de> for J {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<J, D::Error> {
        d.deserialize_any(JVisitor)
    }
}

impl J {
    fn to_line(&self) -> String {
        serde_json::to_string(self).expect("JSON of plain values")
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Result<Vec<u8>, String> {
    let s: String = s.chars().filter(|c| !c.is_whitespace() && *c != ':').collect();
    if !s.len().is_multiple_of(2) {
        return Err("odd number of hex digits".into());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|_| format!("bad hex `{}`", &s[i..i + 2])))
        .collect()
}

fn mac_str(m: MacAddr) -> String {
    let b = m.0;
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        b[0], b[1], b[2], b[3], b[4], b[5]
    )
}

fn nul_str(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// An object under construction.
#[derive(Default)]
struct O(Vec<(String, J)>);

impl O {
    fn n(mut self, k: &str, v: impl Into<u64>) -> O {
        self.0.push((k.into(), J::Num(v.into().into())));
        self
    }
    fn s(mut self, k: &str, v: impl Into<String>) -> O {
        self.0.push((k.into(), J::Str(v.into())));
        self
    }
    fn j(mut self, k: &str, v: J) -> O {
        self.0.push((k.into(), v));
        self
    }
    fn hex(self, k: &str, b: &[u8]) -> O {
        self.s(k, hex(b))
    }
    fn done(self) -> J {
        J::Obj(self.0)
    }
}

/// Reading fields of an object.
#[derive(Clone, Copy)]
struct R<'a>(&'a [(String, J)]);

type Res<T> = Result<T, String>;

impl<'a> R<'a> {
    fn of(j: &'a J, what: &str) -> Res<R<'a>> {
        match j {
            J::Obj(o) => Ok(R(o)),
            _ => Err(format!("{what}: expected an object")),
        }
    }
    fn get(&self, k: &str) -> Option<&'a J> {
        self.0.iter().find(|(key, _)| key == k).map(|(_, v)| v)
    }
    fn req(&self, k: &str) -> Res<&'a J> {
        self.get(k).ok_or_else(|| format!("missing field `{k}`"))
    }
    fn num<T: TryFrom<u64>>(&self, k: &str) -> Res<T> {
        num_of(self.req(k)?, k)
    }
    fn num_or<T: TryFrom<u64>>(&self, k: &str, default: T) -> Res<T> {
        self.get(k).map_or(Ok(default), |v| num_of(v, k))
    }
    fn str(&self, k: &str) -> Res<&'a str> {
        match self.req(k)? {
            J::Str(s) => Ok(s),
            _ => Err(format!("field `{k}`: expected a string")),
        }
    }
    fn hex(&self, k: &str) -> Res<Vec<u8>> {
        unhex(self.str(k)?).map_err(|e| format!("field `{k}`: {e}"))
    }
    fn hex_or_empty(&self, k: &str) -> Res<Vec<u8>> {
        if self.get(k).is_some() {
            self.hex(k)
        } else {
            Ok(Vec::new())
        }
    }
    fn arr(&self, k: &str) -> Res<&'a [J]> {
        match self.req(k)? {
            J::Arr(a) => Ok(a),
            _ => Err(format!("field `{k}`: expected an array")),
        }
    }
    fn obj(&self, k: &str) -> Res<R<'a>> {
        R::of(self.req(k)?, &format!("field `{k}`"))
    }
    fn mac(&self, k: &str) -> Res<MacAddr> {
        parse_mac(self.str(k)?).map_err(|e| format!("field `{k}`: {e}"))
    }
    fn ip(&self, k: &str) -> Res<Ipv4Addr> {
        self.str(k)?
            .parse()
            .map_err(|_| format!("field `{k}`: expected a dotted IPv4 address"))
    }
    fn fixed<const N: usize>(&self, k: &str) -> Res<[u8; N]> {
        let s = self.str(k)?.as_bytes();
        if s.len() > N {
            return Err(format!("field `{k}`: longer than {N} bytes"));
        }
        let mut out = [0u8; N];
        out[..s.len()].copy_from_slice(s);
        Ok(out)
    }
}

fn num_of<T: TryFrom<u64>>(v: &J, k: &str) -> Res<T> {
    let n = match v {
        J::Num(n) => n.as_u64(),
        _ => None,
    };
    n.and_then(|n| T::try_from(n).ok()).ok_or_else(|| {
        format!(
            "field `{k}`: expected an unsigned integer of {} bits",
            std::mem::size_of::<T>() * 8
        )
    })
}

fn parse_mac(s: &str) -> Res<MacAddr> {
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() != 6 {
        return Err("expected a MAC address aa:bb:cc:dd:ee:ff".into());
    }
    let mut m = [0u8; 6];
    for (i, p) in parts.iter().enumerate() {
        m[i] = u8::from_str_radix(p, 16).map_err(|_| "expected a MAC address aa:bb:cc:dd:ee:ff".to_string())?;
    }
    Ok(MacAddr(m))
}

// ---------------------------------------------------------------------------------------------
// Message -> JSON.

fn type_json(version: Version, code: u8, o: O) -> O {
    match tandem_wire::openflow::type_name(version, code) {
        Some(n) => o.s("type", n),
        None => o.s("type", "unknown").n("type_code", code),
    }
}

fn mp_name(kind: u16) -> J {
    match MultipartType::from_code(kind) {
        Some(t) => J::Str(t.name().into()),
        None => J::Num(kind.into()),
    }
}

fn oxm_into(f: &OxmField, o: O) -> O {
    fn m<V>(o: O, k: &str, mask: &Option<V>, show: impl Fn(&V) -> J) -> O {
        match mask {
            Some(v) => o.j(&format!("{k}_mask"), show(v)),
            None => o,
        }
    }
    let mac = |v: &MacAddr| J::Str(mac_str(*v));
    let ip = |v: &Ipv4Addr| J::Str(v.to_string());
    match f {
        OxmField::InPort(p) => o.n("in_port", *p),
        OxmField::Metadata(v, k) => m(o.n("metadata", *v), "metadata", k, |x| J::Num((*x).into())),
        OxmField::EthDst(v, k) => m(o.s("eth_dst", mac_str(*v)), "eth_dst", k, mac),
        OxmField::EthSrc(v, k) => m(o.s("eth_src", mac_str(*v)), "eth_src", k, mac),
        OxmField::EthType(v) => o.n("eth_type", *v),
        OxmField::VlanVid(v, k) => m(o.n("vlan_vid", *v), "vlan_vid", k, |x| J::Num((*x).into())),
        OxmField::VlanPcp(v) => o.n("vlan_pcp", *v),
        OxmField::IpDscp(v) => o.n("ip_dscp", *v),
        OxmField::IpProto(v) => o.n("ip_proto", *v),
        OxmField::Ipv4Src(v, k) => m(o.s("ipv4_src", v.to_string()), "ipv4_src", k, ip),
        OxmField::Ipv4Dst(v, k) => m(o.s("ipv4_dst", v.to_string()), "ipv4_dst", k, ip),
        OxmField::TcpSrc(v) => o.n("tcp_src", *v),
        OxmField::TcpDst(v) => o.n("tcp_dst", *v),
        OxmField::UdpSrc(v) => o.n("udp_src", *v),
        OxmField::UdpDst(v) => o.n("udp_dst", *v),
        OxmField::Unknown {
            class,
            field,
            has_mask,
            payload,
        } => o.j(
            "unknown",
            O::default()
                .n("class", *class)
                .n("field", *field)
                .j("has_mask", J::Bool(*has_mask))
                .hex("payload_hex", payload)
                .done(),
        ),
    }
}

fn oxm_json(m: &OxmMatch) -> J {
    m.fields.iter().fold(O::default(), |o, f| oxm_into(f, o)).done()
}

fn match10_json(m: &Match10) -> J {
    O::default()
        .n("wildcards", m.wildcards)
        .n("in_port", m.in_port)
        .s("dl_src", mac_str(m.dl_src))
        .s("dl_dst", mac_str(m.dl_dst))
        .n("dl_vlan", m.dl_vlan)
        .n("dl_vlan_pcp", m.dl_vlan_pcp)
        .n("dl_type", m.dl_type)
        .n("nw_tos", m.nw_tos)
        .n("nw_proto", m.nw_proto)
        .s("nw_src", m.nw_src.to_string())
        .s("nw_dst", m.nw_dst.to_string())
        .n("tp_src", m.tp_src)
        .n("tp_dst", m.tp_dst)
        .done()
}

fn match_json(m: &FlowMatch) -> J {
    match m {
        FlowMatch::V10(m) => match10_json(m),
        FlowMatch::Oxm(m) => oxm_json(m),
    }
}

fn action_json(a: &Action) -> J {
    let o = O::default();
    match a {
        Action::Output { port, max_len } => o.s("type", "output").n("port", *port).n("max_len", *max_len),
        Action::SetVlanVid(v) => o.s("type", "set_vlan_vid").n("vlan_vid", *v),
        Action::PopVlan => o.s("type", "pop_vlan"),
        Action::PushVlan(e) => o.s("type", "push_vlan").n("ethertype", *e),
        Action::Enqueue { port, queue_id } => o.s("type", "enqueue").n("port", *port).n("queue_id", *queue_id),
        Action::SetQueue(q) => o.s("type", "set_queue").n("queue_id", *q),
        Action::Group(g) => o.s("type", "group").n("group_id", *g),
        Action::SetField(f) => o.s("type", "set_field").j("field", oxm_into(f, O::default()).done()),
        Action::Unknown { kind, data } => o.n("type", *kind).hex("data_hex", data),
    }
    .done()
}

fn actions_json(a: &[Action]) -> J {
    J::Arr(a.iter().map(action_json).collect())
}

fn instruction_json(i: &Instruction) -> J {
    let o = O::default();
    match i {
        Instruction::GotoTable(t) => o.s("type", "goto_table").n("table_id", *t),
        Instruction::WriteMetadata { metadata, mask } => o
            .s("type", "write_metadata")
            .n("metadata", *metadata)
            .n("metadata_mask", *mask),
        Instruction::WriteActions(a) => o.s("type", "write_actions").j("actions", actions_json(a)),
        Instruction::ApplyActions(a) => o.s("type", "apply_actions").j("actions", actions_json(a)),
        Instruction::ClearActions => o.s("type", "clear_actions"),
        Instruction::Meter(m) => o.s("type", "meter").n("meter_id", *m),
        Instruction::Unknown { kind, data } => o.n("type", *kind).hex("data_hex", data),
    }
    .done()
}

fn actions_or_instructions(v: Version, o: O, actions: &[Action], ins: &[Instruction]) -> O {
    if v == Version::V1_0 {
        o.j("actions", actions_json(actions))
    } else {
        o.j("instructions", J::Arr(ins.iter().map(instruction_json).collect()))
    }
}

fn phy_port_json(p: &PhyPort10) -> J {
    O::default()
        .n("port_no", p.port_no)
        .s("hw_addr", mac_str(p.hw_addr))
        .s("name", nul_str(&p.name))
        .n("config", p.config)
        .n("state", p.state)
        .n("curr", p.curr)
        .n("advertised", p.advertised)
        .n("supported", p.supported)
        .n("peer", p.peer)
        .done()
}

fn port13_json(p: &Port13) -> J {
    O::default()
        .n("port_no", p.port_no)
        .s("hw_addr", mac_str(p.hw_addr))
        .s("name", nul_str(&p.name))
        .n("config", p.config)
        .n("state", p.state)
        .n("curr", p.curr)
        .n("advertised", p.advertised)
        .n("supported", p.supported)
        .n("peer", p.peer)
        .n("curr_speed", p.curr_speed)
        .n("max_speed", p.max_speed)
        .done()
}

const PORT_COUNTERS: [&str; 12] = [
    "rx_packets",
    "tx_packets",
    "rx_bytes",
    "tx_bytes",
    "rx_dropped",
    "tx_dropped",
    "rx_errors",
    "tx_errors",
    "rx_frame_err",
    "rx_over_err",
    "rx_crc_err",
    "collisions",
];

fn flow_stats_request_json(v: Version, r: &FlowStatsRequest, o: O) -> O {
    let o = o.n("table_id", r.table_id).n("out_port", r.out_port);
    let o = if v == Version::V1_0 {
        o
    } else {
        o.n("out_group", r.out_group)
            .n("cookie", r.cookie)
            .n("cookie_mask", r.cookie_mask)
    };
    o.j("match", match_json(&r.matches))
}

fn flow_stats_json(v: Version, f: &FlowStats) -> J {
    let o = O::default()
        .n("table_id", f.table_id)
        .n("duration_sec", f.duration_sec)
        .n("duration_nsec", f.duration_nsec)
        .n("priority", f.priority)
        .n("idle_timeout", f.idle_timeout)
        .n("hard_timeout", f.hard_timeout);
    let o = if v == Version::V1_0 { o } else { o.n("flags", f.flags) };
    let o = o
        .n("cookie", f.cookie)
        .n("packet_count", f.packet_count)
        .n("byte_count", f.byte_count)
        .j("match", match_json(&f.matches));
    actions_or_instructions(v, o, &f.actions, &f.instructions).done()
}

fn body_json(v: Version, body: &Body, o: O) -> O {
    match body {
        Body::Hello(h) => o.j(
            "elements",
            J::Arr(
                h.elements
                    .iter()
                    .map(|e| match e {
                        HelloElement::VersionBitmap(b) => O::default()
                            .s("type", "versionbitmap")
                            .j("bitmaps", J::Arr(b.iter().map(|x| J::Num((*x).into())).collect()))
                            .done(),
                        HelloElement::Unknown { kind, data } => {
                            O::default().n("type", *kind).hex("data_hex", data).done()
                        }
                    })
                    .collect(),
            ),
        ),
        Body::Error(e) => o.n("error_type", e.kind).n("code", e.code).hex("data_hex", &e.data),
        Body::EchoRequest(d) | Body::EchoReply(d) => o.hex("data_hex", d),
        Body::FeaturesRequest | Body::GetConfigRequest | Body::BarrierRequest | Body::BarrierReply => o,
        Body::FeaturesReply(f) => {
            let o = o
                .n("datapath_id", f.datapath_id)
                .n("n_buffers", f.n_buffers)
                .n("n_tables", f.n_tables);
            if v == Version::V1_0 {
                o.n("capabilities", f.capabilities)
                    .n("actions", f.actions)
                    .j("ports", J::Arr(f.ports.iter().map(phy_port_json).collect()))
            } else {
                o.n("auxiliary_id", f.auxiliary_id)
                    .n("capabilities", f.capabilities)
                    .n("reserved", f.actions)
            }
        }
        Body::GetConfigReply(c) | Body::SetConfig(c) => o.n("flags", c.flags).n("miss_send_len", c.miss_send_len),
        Body::PacketIn(p) => {
            let o = o.n("buffer_id", p.buffer_id).n("total_len", p.total_len);
            let o = if v == Version::V1_0 {
                o.n("in_port", p.in_port).n("reason", p.reason)
            } else {
                o.n("reason", p.reason)
                    .n("table_id", p.table_id)
                    .n("cookie", p.cookie)
                    .j("match", oxm_json(&p.oxm))
            };
            o.hex("data_hex", &p.data)
        }
        Body::FlowRemoved(f) => {
            let o = o.n("cookie", f.cookie).n("priority", f.priority).n("reason", f.reason);
            let o = if v == Version::V1_0 {
                o
            } else {
                o.n("table_id", f.table_id)
            };
            let o = o
                .n("duration_sec", f.duration_sec)
                .n("duration_nsec", f.duration_nsec)
                .n("idle_timeout", f.idle_timeout);
            let o = if v == Version::V1_0 {
                o
            } else {
                o.n("hard_timeout", f.hard_timeout)
            };
            o.n("packet_count", f.packet_count)
                .n("byte_count", f.byte_count)
                .j("match", match_json(&f.matches))
        }
        Body::PortStatus(p) => o.n("reason", p.reason).j(
            "desc",
            match &p.port {
                Port::V10(p) => phy_port_json(p),
                Port::V13(p) => port13_json(p),
            },
        ),
        Body::PacketOut(p) => o
            .n("buffer_id", p.buffer_id)
            .n("in_port", p.in_port)
            .j("actions", actions_json(&p.actions))
            .hex("data_hex", &p.data),
        Body::FlowMod(f) => {
            let o = o.j(
                "command",
                match f.command {
                    FlowModCommand::Add => J::Str("add".into()),
                    FlowModCommand::Modify => J::Str("modify".into()),
                    FlowModCommand::ModifyStrict => J::Str("modify_strict".into()),
                    FlowModCommand::Delete => J::Str("delete".into()),
                    FlowModCommand::DeleteStrict => J::Str("delete_strict".into()),
                    FlowModCommand::Unknown(c) => J::Num(c.into()),
                },
            );
            let o = o.n("cookie", f.cookie);
            let o = if v == Version::V1_0 {
                o
            } else {
                o.n("cookie_mask", f.cookie_mask).n("table_id", f.table_id)
            };
            let o = o
                .n("idle_timeout", f.idle_timeout)
                .n("hard_timeout", f.hard_timeout)
                .n("priority", f.priority)
                .n("buffer_id", f.buffer_id)
                .n("out_port", f.out_port);
            let o = if v == Version::V1_0 {
                o
            } else {
                o.n("out_group", f.out_group)
            };
            let o = o.n("flags", f.flags).j("match", match_json(&f.matches));
            actions_or_instructions(v, o, &f.actions, &f.instructions)
        }
        Body::MultipartRequest(m) => {
            let o = o.j("multipart_type", mp_name(m.kind())).n("flags", m.flags);
            match &m.body {
                MultipartRequestBody::Desc | MultipartRequestBody::Table | MultipartRequestBody::PortDesc => o,
                MultipartRequestBody::Flow(r) | MultipartRequestBody::Aggregate(r) => flow_stats_request_json(v, r, o),
                MultipartRequestBody::PortStats(p) => o.n("port_no", *p),
                MultipartRequestBody::Other { body, .. } => o.hex("body_hex", body),
            }
        }
        Body::MultipartReply(m) => {
            let o = o.j("multipart_type", mp_name(m.kind())).n("flags", m.flags);
            match &m.body {
                MultipartReplyBody::Desc(d) => o
                    .s("mfr_desc", String::from_utf8_lossy(&d.mfr_desc))
                    .s("hw_desc", String::from_utf8_lossy(&d.hw_desc))
                    .s("sw_desc", String::from_utf8_lossy(&d.sw_desc))
                    .s("serial_num", String::from_utf8_lossy(&d.serial_num))
                    .s("dp_desc", String::from_utf8_lossy(&d.dp_desc)),
                MultipartReplyBody::Flow(f) => o.j("flows", J::Arr(f.iter().map(|f| flow_stats_json(v, f)).collect())),
                MultipartReplyBody::Aggregate(a) => o
                    .n("packet_count", a.packet_count)
                    .n("byte_count", a.byte_count)
                    .n("flow_count", a.flow_count),
                MultipartReplyBody::PortStats(ps) => o.j(
                    "ports",
                    J::Arr(
                        ps.iter()
                            .map(|p| {
                                let o = PORT_COUNTERS
                                    .iter()
                                    .zip(p.counters)
                                    .fold(O::default().n("port_no", p.port_no), |o, (k, c)| o.n(k, c));
                                if v == Version::V1_0 {
                                    o.done()
                                } else {
                                    o.n("duration_sec", p.duration_sec)
                                        .n("duration_nsec", p.duration_nsec)
                                        .done()
                                }
                            })
                            .collect(),
                    ),
                ),
                MultipartReplyBody::Table(ts) => o.j(
                    "tables",
                    J::Arr(
                        ts.iter()
                            .map(|t| {
                                let o = O::default().n("table_id", t.table_id);
                                let o = if v == Version::V1_0 {
                                    o.s("name", nul_str(&t.name))
                                        .n("wildcards", t.wildcards)
                                        .n("max_entries", t.max_entries)
                                } else {
                                    o
                                };
                                o.n("active_count", t.active_count)
                                    .n("lookup_count", t.lookup_count)
                                    .n("matched_count", t.matched_count)
                                    .done()
                            })
                            .collect(),
                    ),
                ),
                MultipartReplyBody::PortDesc(ps) => o.j("ports", J::Arr(ps.iter().map(port13_json).collect())),
                MultipartReplyBody::Other { body, .. } => o.hex("body_hex", body),
            }
        }
        Body::Opaque { body, .. } => o.hex("body_hex", body),
    }
}

/// The JSON of a message (without the lossless check).
pub fn message_json(m: &Message, code: u8) -> J {
    let o = O::default().n("version", m.version.0);
    let o = type_json(m.version, code, o).n("xid", m.xid);
    body_json(m.version, &m.body, o).done()
}

/// The JSON of one whole raw message: the modelled fields, and when they would not encode back to
/// exactly `raw` (non-zero padding, say), `"raw": true` and the whole body in hex as well.
/// Errors when the message does not parse.
pub fn decode_message(raw: &[u8]) -> Result<J, WireError> {
    let (m, _) = Message::parse(raw)?;
    let p = Packet::new_checked(raw)?;
    let j = message_json(&m, p.msg_type());
    if encode_json(&j).ok().as_deref() == Some(raw) {
        return Ok(j);
    }
    // Keep the fields for the reader, but let the bytes decide.
    let mut fields = match j {
        J::Obj(o) => o,
        other => vec![("message".to_string(), other)],
    };
    fields.retain(|(k, _)| k != "body_hex");
    Ok(O(fields).j("raw", J::Bool(true)).hex("body_hex", p.body()).done())
}

// ---------------------------------------------------------------------------------------------
// JSON -> Message.

fn oxm_from(r: R<'_>) -> Res<Vec<OxmField>> {
    let mut out = Vec::new();
    for (k, v) in r.0 {
        if k.ends_with("_mask") {
            if r.get(k.trim_end_matches("_mask")).is_none() {
                return Err(format!("match field `{k}` without its value"));
            }
            continue;
        }
        let field = R(r.0);
        let has = |m: &str| r.get(&format!("{m}_mask")).is_some();
        let f = match k.as_str() {
            "in_port" => OxmField::InPort(num_of(v, k)?),
            "metadata" => OxmField::Metadata(
                num_of(v, k)?,
                if has(k) {
                    Some(field.num("metadata_mask")?)
                } else {
                    None
                },
            ),
            "eth_dst" | "eth_src" => {
                let val = parse_mac(match v {
                    J::Str(s) => s,
                    _ => return Err(format!("match field `{k}`: expected a MAC address string")),
                })?;
                let mask = if has(k) {
                    Some(field.mac(&format!("{k}_mask"))?)
                } else {
                    None
                };
                if k == "eth_dst" {
                    OxmField::EthDst(val, mask)
                } else {
                    OxmField::EthSrc(val, mask)
                }
            }
            "eth_type" => OxmField::EthType(num_of(v, k)?),
            "vlan_vid" => OxmField::VlanVid(
                num_of(v, k)?,
                if has(k) {
                    Some(field.num("vlan_vid_mask")?)
                } else {
                    None
                },
            ),
            "vlan_pcp" => OxmField::VlanPcp(num_of(v, k)?),
            "ip_dscp" => OxmField::IpDscp(num_of(v, k)?),
            "ip_proto" => OxmField::IpProto(num_of(v, k)?),
            "ipv4_src" | "ipv4_dst" => {
                let val: Ipv4Addr = match v {
                    J::Str(s) => s
                        .parse()
                        .map_err(|_| format!("match field `{k}`: expected a dotted IPv4 address"))?,
                    _ => return Err(format!("match field `{k}`: expected a dotted IPv4 address")),
                };
                let mask = if has(k) {
                    Some(field.ip(&format!("{k}_mask"))?)
                } else {
                    None
                };
                if k == "ipv4_src" {
                    OxmField::Ipv4Src(val, mask)
                } else {
                    OxmField::Ipv4Dst(val, mask)
                }
            }
            "tcp_src" => OxmField::TcpSrc(num_of(v, k)?),
            "tcp_dst" => OxmField::TcpDst(num_of(v, k)?),
            "udp_src" => OxmField::UdpSrc(num_of(v, k)?),
            "udp_dst" => OxmField::UdpDst(num_of(v, k)?),
            "unknown" => {
                let u = R::of(v, "match field `unknown`")?;
                OxmField::Unknown {
                    class: u.num("class")?,
                    field: u.num("field")?,
                    has_mask: matches!(u.req("has_mask")?, J::Bool(true)),
                    payload: u.hex("payload_hex")?,
                }
            }
            other => return Err(format!("unknown match field `{other}`")),
        };
        out.push(f);
    }
    Ok(out)
}

fn match10_from(r: R<'_>) -> Res<Match10> {
    Ok(Match10 {
        wildcards: r.num("wildcards")?,
        in_port: r.num("in_port")?,
        dl_src: r.mac("dl_src")?,
        dl_dst: r.mac("dl_dst")?,
        dl_vlan: r.num("dl_vlan")?,
        dl_vlan_pcp: r.num("dl_vlan_pcp")?,
        dl_type: r.num("dl_type")?,
        nw_tos: r.num("nw_tos")?,
        nw_proto: r.num("nw_proto")?,
        nw_src: r.ip("nw_src")?,
        nw_dst: r.ip("nw_dst")?,
        tp_src: r.num("tp_src")?,
        tp_dst: r.num("tp_dst")?,
    })
}

fn match_from(v: Version, r: R<'_>) -> Res<FlowMatch> {
    let m = r.obj("match")?;
    Ok(if v == Version::V1_0 {
        FlowMatch::V10(match10_from(m)?)
    } else {
        FlowMatch::Oxm(OxmMatch { fields: oxm_from(m)? })
    })
}

fn action_from(j: &J) -> Res<Action> {
    let r = R::of(j, "action")?;
    if let Some(J::Num(_)) = r.get("type") {
        return Ok(Action::Unknown {
            kind: r.num("type")?,
            data: r.hex("data_hex")?,
        });
    }
    Ok(match r.str("type")? {
        "output" => Action::Output {
            port: r.num("port")?,
            max_len: r.num_or("max_len", 0)?,
        },
        "set_vlan_vid" => Action::SetVlanVid(r.num("vlan_vid")?),
        "pop_vlan" => Action::PopVlan,
        "push_vlan" => Action::PushVlan(r.num("ethertype")?),
        "enqueue" => Action::Enqueue {
            port: r.num("port")?,
            queue_id: r.num("queue_id")?,
        },
        "set_queue" => Action::SetQueue(r.num("queue_id")?),
        "group" => Action::Group(r.num("group_id")?),
        "set_field" => {
            let mut f = oxm_from(r.obj("field")?)?;
            if f.len() != 1 {
                return Err("set_field: `field` must hold exactly one match field".into());
            }
            Action::SetField(f.remove(0))
        }
        other => return Err(format!("unknown action type `{other}`")),
    })
}

fn actions_from(r: R<'_>, k: &str) -> Res<Vec<Action>> {
    r.arr(k)?.iter().map(action_from).collect()
}

fn instruction_from(j: &J) -> Res<Instruction> {
    let r = R::of(j, "instruction")?;
    if let Some(J::Num(_)) = r.get("type") {
        return Ok(Instruction::Unknown {
            kind: r.num("type")?,
            data: r.hex("data_hex")?,
        });
    }
    Ok(match r.str("type")? {
        "goto_table" => Instruction::GotoTable(r.num("table_id")?),
        "write_metadata" => Instruction::WriteMetadata {
            metadata: r.num("metadata")?,
            mask: r.num("metadata_mask")?,
        },
        "write_actions" => Instruction::WriteActions(actions_from(r, "actions")?),
        "apply_actions" => Instruction::ApplyActions(actions_from(r, "actions")?),
        "clear_actions" => Instruction::ClearActions,
        "meter" => Instruction::Meter(r.num("meter_id")?),
        other => return Err(format!("unknown instruction type `{other}`")),
    })
}

/// (actions, instructions) of a flow_mod / flow stats entry.
fn acts_ins(v: Version, r: R<'_>) -> Res<(Vec<Action>, Vec<Instruction>)> {
    if v == Version::V1_0 {
        Ok((actions_from(r, "actions")?, Vec::new()))
    } else {
        let ins = r
            .arr("instructions")?
            .iter()
            .map(instruction_from)
            .collect::<Res<_>>()?;
        Ok((Vec::new(), ins))
    }
}

fn phy_port_from(r: R<'_>) -> Res<PhyPort10> {
    Ok(PhyPort10 {
        port_no: r.num("port_no")?,
        hw_addr: r.mac("hw_addr")?,
        name: r.fixed("name")?,
        config: r.num("config")?,
        state: r.num("state")?,
        curr: r.num("curr")?,
        advertised: r.num("advertised")?,
        supported: r.num("supported")?,
        peer: r.num("peer")?,
    })
}

fn port13_from(r: R<'_>) -> Res<Port13> {
    Ok(Port13 {
        port_no: r.num("port_no")?,
        hw_addr: r.mac("hw_addr")?,
        name: r.fixed("name")?,
        config: r.num("config")?,
        state: r.num("state")?,
        curr: r.num("curr")?,
        advertised: r.num("advertised")?,
        supported: r.num("supported")?,
        peer: r.num("peer")?,
        curr_speed: r.num("curr_speed")?,
        max_speed: r.num("max_speed")?,
    })
}

fn v13_or<T: TryFrom<u64>>(v: Version, r: R<'_>, k: &str, default: T) -> Res<T> {
    if v == Version::V1_0 {
        Ok(default)
    } else {
        r.num(k)
    }
}

fn flow_stats_request_from(v: Version, r: R<'_>) -> Res<FlowStatsRequest> {
    Ok(FlowStatsRequest {
        table_id: r.num("table_id")?,
        out_port: r.num("out_port")?,
        out_group: v13_or(v, r, "out_group", 0)?,
        cookie: v13_or(v, r, "cookie", 0)?,
        cookie_mask: v13_or(v, r, "cookie_mask", 0)?,
        matches: match_from(v, r)?,
    })
}

fn flow_stats_from(v: Version, j: &J) -> Res<FlowStats> {
    let r = R::of(j, "flow stats entry")?;
    let (actions, instructions) = acts_ins(v, r)?;
    Ok(FlowStats {
        table_id: r.num("table_id")?,
        duration_sec: r.num("duration_sec")?,
        duration_nsec: r.num("duration_nsec")?,
        priority: r.num("priority")?,
        idle_timeout: r.num("idle_timeout")?,
        hard_timeout: r.num("hard_timeout")?,
        flags: v13_or(v, r, "flags", 0)?,
        cookie: r.num("cookie")?,
        packet_count: r.num("packet_count")?,
        byte_count: r.num("byte_count")?,
        matches: match_from(v, r)?,
        actions,
        instructions,
    })
}

fn mp_kind(r: R<'_>) -> Res<u16> {
    match r.req("multipart_type")? {
        J::Str(s) => MultipartType::ALL
            .iter()
            .find(|t| t.name() == s)
            .map(|t| t.code())
            .ok_or_else(|| format!("unknown multipart_type `{s}`")),
        j => num_of(j, "multipart_type"),
    }
}

fn desc_str(r: R<'_>, k: &str, max: usize) -> Res<Vec<u8>> {
    let s = r.str(k)?.as_bytes().to_vec();
    if s.len() > max {
        return Err(format!("field `{k}`: longer than {max} bytes"));
    }
    Ok(s)
}

fn objs<'a>(r: R<'a>, k: &str) -> Res<Vec<R<'a>>> {
    r.arr(k)?
        .iter()
        .map(|j| R::of(j, &format!("an element of `{k}`")))
        .collect()
}

fn body_from(v: Version, name: &str, r: R<'_>) -> Res<Body> {
    let mp = |r: R<'_>| -> Res<(u16, u16)> { Ok((mp_kind(r)?, r.num("flags")?)) };
    Ok(match name {
        "hello" => Body::Hello(Hello {
            elements: r
                .arr("elements")?
                .iter()
                .map(|e| {
                    let e = R::of(e, "hello element")?;
                    match e.req("type")? {
                        J::Str(s) if s == "versionbitmap" => Ok(HelloElement::VersionBitmap(
                            e.arr("bitmaps")?
                                .iter()
                                .map(|b| num_of(b, "bitmaps"))
                                .collect::<Res<_>>()?,
                        )),
                        _ => Ok(HelloElement::Unknown {
                            kind: e.num("type")?,
                            data: e.hex("data_hex")?,
                        }),
                    }
                })
                .collect::<Res<_>>()?,
        }),
        "error" => Body::Error(ErrorMsg {
            kind: r.num("error_type")?,
            code: r.num("code")?,
            data: r.hex_or_empty("data_hex")?,
        }),
        "echo_request" => Body::EchoRequest(r.hex_or_empty("data_hex")?),
        "echo_reply" => Body::EchoReply(r.hex_or_empty("data_hex")?),
        "features_request" => Body::FeaturesRequest,
        "get_config_request" => Body::GetConfigRequest,
        "barrier_request" => Body::BarrierRequest,
        "barrier_reply" => Body::BarrierReply,
        "features_reply" => Body::FeaturesReply(FeaturesReply {
            datapath_id: r.num("datapath_id")?,
            n_buffers: r.num("n_buffers")?,
            n_tables: r.num("n_tables")?,
            auxiliary_id: v13_or(v, r, "auxiliary_id", 0)?,
            capabilities: r.num("capabilities")?,
            actions: if v == Version::V1_0 {
                r.num("actions")?
            } else {
                r.num("reserved")?
            },
            ports: if v == Version::V1_0 {
                objs(r, "ports")?.into_iter().map(phy_port_from).collect::<Res<_>>()?
            } else {
                Vec::new()
            },
        }),
        "get_config_reply" | "set_config" => {
            let c = SwitchConfig {
                flags: r.num("flags")?,
                miss_send_len: r.num("miss_send_len")?,
            };
            if name == "set_config" {
                Body::SetConfig(c)
            } else {
                Body::GetConfigReply(c)
            }
        }
        "packet_in" => Body::PacketIn(PacketIn {
            buffer_id: r.num("buffer_id")?,
            total_len: r.num("total_len")?,
            reason: r.num("reason")?,
            in_port: if v == Version::V1_0 { r.num("in_port")? } else { 0 },
            table_id: v13_or(v, r, "table_id", 0)?,
            cookie: v13_or(v, r, "cookie", 0)?,
            oxm: if v == Version::V1_0 {
                OxmMatch::default()
            } else {
                OxmMatch {
                    fields: oxm_from(r.obj("match")?)?,
                }
            },
            data: r.hex_or_empty("data_hex")?,
        }),
        "flow_removed" => Body::FlowRemoved(FlowRemoved {
            cookie: r.num("cookie")?,
            priority: r.num("priority")?,
            reason: r.num("reason")?,
            table_id: v13_or(v, r, "table_id", 0)?,
            duration_sec: r.num("duration_sec")?,
            duration_nsec: r.num("duration_nsec")?,
            idle_timeout: r.num("idle_timeout")?,
            hard_timeout: v13_or(v, r, "hard_timeout", 0)?,
            packet_count: r.num("packet_count")?,
            byte_count: r.num("byte_count")?,
            matches: match_from(v, r)?,
        }),
        "port_status" => Body::PortStatus(PortStatus {
            reason: r.num("reason")?,
            port: if v == Version::V1_0 {
                Port::V10(phy_port_from(r.obj("desc")?)?)
            } else {
                Port::V13(port13_from(r.obj("desc")?)?)
            },
        }),
        "packet_out" => Body::PacketOut(PacketOut {
            buffer_id: r.num("buffer_id")?,
            in_port: r.num("in_port")?,
            actions: actions_from(r, "actions")?,
            data: r.hex_or_empty("data_hex")?,
        }),
        "flow_mod" => {
            let (actions, instructions) = acts_ins(v, r)?;
            let command = match r.req("command")? {
                J::Str(s) => match s.as_str() {
                    "add" => FlowModCommand::Add,
                    "modify" => FlowModCommand::Modify,
                    "modify_strict" => FlowModCommand::ModifyStrict,
                    "delete" => FlowModCommand::Delete,
                    "delete_strict" => FlowModCommand::DeleteStrict,
                    other => return Err(format!("unknown flow_mod command `{other}`")),
                },
                j => FlowModCommand::from_code(num_of(j, "command")?),
            };
            Body::FlowMod(FlowMod {
                cookie: r.num("cookie")?,
                cookie_mask: v13_or(v, r, "cookie_mask", 0)?,
                table_id: v13_or(v, r, "table_id", 0)?,
                command,
                idle_timeout: r.num("idle_timeout")?,
                hard_timeout: r.num("hard_timeout")?,
                priority: r.num("priority")?,
                buffer_id: r.num("buffer_id")?,
                out_port: r.num("out_port")?,
                out_group: v13_or(v, r, "out_group", 0)?,
                flags: r.num("flags")?,
                matches: match_from(v, r)?,
                actions,
                instructions,
            })
        }
        "stats_request" | "multipart_request" => {
            let (kind, flags) = mp(r)?;
            let body = match MultipartType::from_code(kind) {
                _ if r.get("body_hex").is_some() => MultipartRequestBody::Other {
                    kind,
                    body: r.hex("body_hex")?,
                },
                Some(MultipartType::Desc) => MultipartRequestBody::Desc,
                Some(MultipartType::Table) => MultipartRequestBody::Table,
                Some(MultipartType::PortDesc) => MultipartRequestBody::PortDesc,
                Some(MultipartType::Flow) => MultipartRequestBody::Flow(flow_stats_request_from(v, r)?),
                Some(MultipartType::Aggregate) => MultipartRequestBody::Aggregate(flow_stats_request_from(v, r)?),
                Some(MultipartType::PortStats) => MultipartRequestBody::PortStats(r.num("port_no")?),
                _ => return Err(format!("multipart type {kind} needs `body_hex`")),
            };
            Body::MultipartRequest(MultipartRequest { flags, body })
        }
        "stats_reply" | "multipart_reply" => {
            let (kind, flags) = mp(r)?;
            let body = match MultipartType::from_code(kind) {
                _ if r.get("body_hex").is_some() => MultipartReplyBody::Other {
                    kind,
                    body: r.hex("body_hex")?,
                },
                Some(MultipartType::Desc) => MultipartReplyBody::Desc(DescStats {
                    mfr_desc: desc_str(r, "mfr_desc", 255)?,
                    hw_desc: desc_str(r, "hw_desc", 255)?,
                    sw_desc: desc_str(r, "sw_desc", 255)?,
                    serial_num: desc_str(r, "serial_num", 31)?,
                    dp_desc: desc_str(r, "dp_desc", 255)?,
                }),
                Some(MultipartType::Flow) => MultipartReplyBody::Flow(
                    r.arr("flows")?
                        .iter()
                        .map(|f| flow_stats_from(v, f))
                        .collect::<Res<_>>()?,
                ),
                Some(MultipartType::Aggregate) => MultipartReplyBody::Aggregate(AggregateStats {
                    packet_count: r.num("packet_count")?,
                    byte_count: r.num("byte_count")?,
                    flow_count: r.num("flow_count")?,
                }),
                Some(MultipartType::PortStats) => MultipartReplyBody::PortStats(
                    objs(r, "ports")?
                        .into_iter()
                        .map(|p| {
                            let mut counters = [0u64; 12];
                            for (c, k) in counters.iter_mut().zip(PORT_COUNTERS) {
                                *c = p.num(k)?;
                            }
                            Ok(PortStats {
                                port_no: p.num("port_no")?,
                                counters,
                                duration_sec: v13_or(v, p, "duration_sec", 0)?,
                                duration_nsec: v13_or(v, p, "duration_nsec", 0)?,
                            })
                        })
                        .collect::<Res<_>>()?,
                ),
                Some(MultipartType::Table) => MultipartReplyBody::Table(
                    objs(r, "tables")?
                        .into_iter()
                        .map(|t| {
                            let v10 = v == Version::V1_0;
                            Ok(TableStats {
                                table_id: t.num("table_id")?,
                                name: if v10 { t.fixed("name")? } else { [0u8; 32] },
                                wildcards: if v10 { t.num("wildcards")? } else { 0 },
                                max_entries: if v10 { t.num("max_entries")? } else { 0 },
                                active_count: t.num("active_count")?,
                                lookup_count: t.num("lookup_count")?,
                                matched_count: t.num("matched_count")?,
                            })
                        })
                        .collect::<Res<_>>()?,
                ),
                Some(MultipartType::PortDesc) => {
                    MultipartReplyBody::PortDesc(objs(r, "ports")?.into_iter().map(port13_from).collect::<Res<_>>()?)
                }
                _ => return Err(format!("multipart type {kind} needs `body_hex`")),
            };
            Body::MultipartReply(MultipartReply { flags, body })
        }
        other => {
            return Err(format!(
                "message type `{other}` needs `body_hex` (its body is not modelled)"
            ))
        }
    })
}

fn type_code_of(v: Version, name: &str) -> Option<u8> {
    match v {
        Version::V1_0 => Type10::ALL.iter().find(|t| t.name() == name).map(|t| t.code()),
        _ => Type13::ALL
            .iter()
            .find(|t| t.name() == name && (v == Version::V1_3 || t.code() <= 3))
            .map(|t| t.code()),
    }
}

/// The bytes of the message a JSON object describes.
pub fn encode_json(j: &J) -> Res<Vec<u8>> {
    let r = R::of(j, "message")?;
    let version = Version(r.num("version")?);
    let xid = r.num("xid")?;
    let name = r.str("type")?;
    let code = match r.get("type_code") {
        Some(c) => num_of(c, "type_code")?,
        None => type_code_of(version, name)
            .ok_or_else(|| format!("no message type `{name}` in OpenFlow version {version}"))?,
    };
    let raw = matches!(r.get("raw"), Some(J::Bool(true)));
    let multipart = r.get("multipart_type").is_some();
    let opaque = r.get("type_code").is_some() || (r.get("body_hex").is_some() && (raw || !multipart));
    let body = if opaque {
        Body::Opaque {
            type_code: code,
            body: r.hex("body_hex")?,
        }
    } else {
        let common = matches!(name, "hello" | "error" | "echo_request" | "echo_reply");
        if !version.is_supported() && !common {
            return Err(format!("OpenFlow version {version} is not modelled: give `body_hex`"));
        }
        body_from(version, name, r)?
    };
    let m = Message { version, xid, body };
    let bytes = m.to_bytes().map_err(|e| format!("cannot encode: {e}"))?;
    if bytes[1] != code {
        return Err(format!("type `{name}` does not fit version {version}"));
    }
    Ok(bytes)
}

// ---------------------------------------------------------------------------------------------
// Commands.

/// The input, streamed: a file (a folder or a missing file is bad input) or standard input.
fn open_input(path: &Path) -> Result<BufReader<Box<dyn Read>>, CliError> {
    let inner: Box<dyn Read> = if path == Path::new("-") {
        Box::new(std::io::stdin())
    } else {
        Box::new(crate::paths::open_input(path)?)
    };
    Ok(BufReader::with_capacity(1 << 16, inner))
}

fn display_name(path: &Path) -> &Path {
    if path == Path::new("-") {
        Path::new("<stdin>")
    } else {
        path
    }
}

fn write_err(e: std::io::Error) -> CliError {
    CliError::Runtime(format!("<stdout>: {e}"))
}

/// `tandem of decode FILE`.
pub fn decode(path: &Path) -> Result<(), CliError> {
    let mut input = open_input(path)?;
    let name = display_name(path);
    // Peek without consuming: a capture or raw messages, streamed either way.
    let head = input.fill_buf().map_err(|e| CliError::input(name, e))?;
    if head.is_empty() {
        return Err(CliError::input(name, "empty: no OpenFlow messages and not a capture"));
    }
    let capture = tandem_wire::pcap::looks_like_trace(head);
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = if capture {
        match TraceReader::new(input) {
            Ok(reader) => decode_trace(name, reader, &mut out),
            Err(e) => Err(CliError::input(name, e)),
        }
    } else {
        decode_raw(name, input, &mut out)
    };
    match result {
        Err(CliError::Runtime(m)) if m.contains("Broken pipe") => Ok(()),
        r => r.and_then(|()| match out.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            r => r.map_err(write_err),
        }),
    }
}

fn decode_raw(name: &Path, mut input: impl Read, out: &mut impl Write) -> Result<(), CliError> {
    let mut at = 0u64;
    let mut msg = Vec::with_capacity(1 << 16);
    loop {
        // One message at a time: its 8-byte header, then the length it gives.
        msg.resize(8, 0);
        let got = read_full(&mut input, &mut msg[..8]).map_err(|e| CliError::input(name, e))?;
        if got == 0 {
            return Ok(());
        }
        let truncated = |left: usize| {
            CliError::input(
                name,
                format!("byte {at}: truncated OpenFlow message ({left} bytes left)"),
            )
        };
        if got < 8 {
            return Err(truncated(got));
        }
        let len = usize::from(u16::from_be_bytes([msg[2], msg[3]]));
        if len < 8 {
            return Err(CliError::input(
                name,
                format!("byte {at}: not an OpenFlow message: length {len} is below the 8-byte header"),
            ));
        }
        msg.resize(len, 0);
        let more = read_full(&mut input, &mut msg[8..]).map_err(|e| CliError::input(name, e))?;
        if more < len - 8 {
            return Err(truncated(8 + more));
        }
        if let Err(e) = Packet::new_checked(&msg[..]) {
            return Err(CliError::input(
                name,
                format!("byte {at}: not an OpenFlow message: {e}"),
            ));
        }
        let j =
            decode_message(&msg).map_err(|e| CliError::input(name, format!("byte {at}: bad OpenFlow message: {e}")))?;
        writeln!(out, "{}", j.to_line()).map_err(write_err)?;
        at += len as u64;
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// One direction of a TCP connection: the next expected sequence number, segments that came
/// early, and the bytes not yet split into messages.
#[derive(Default)]
struct Stream {
    next_seq: Option<u32>,
    early: BTreeMap<u32, Vec<u8>>,
    /// Bytes held in `early`.
    early_bytes: usize,
    buf: Vec<u8>,
    broken: bool,
    /// A gap that was never filled, reported once: (expected sequence number, bytes held
    /// beyond it when the stream gave up on it).
    gap: Option<(u32, usize)>,
}

/// Most bytes one direction holds beyond a gap (segments that arrived early) before it gives
/// up on the gap: a capture that lost a segment cannot make the reader hold the rest.
const EARLY_LIMIT: usize = 4 << 20;

impl Stream {
    /// Adds a segment; in-order bytes go to `buf`.
    fn segment(&mut self, seq: u32, syn: bool, payload: &[u8]) {
        let seq = if syn { seq.wrapping_add(1) } else { seq };
        let next = *self.next_seq.get_or_insert(seq);
        let ahead = seq.wrapping_sub(next) as i32;
        if ahead > 0 {
            if !payload.is_empty() && !self.broken {
                self.early_bytes += payload.len();
                if let Some(old) = self.early.insert(seq, payload.to_vec()) {
                    self.early_bytes -= old.len();
                }
                if self.early_bytes > EARLY_LIMIT {
                    // The missing bytes are not coming (the capture lost them): the message
                    // boundaries after the gap are unknown, so the stream ends here.
                    self.gap = Some((next, self.early_bytes));
                    self.broken = true;
                    self.early.clear();
                    self.early_bytes = 0;
                }
            }
            return;
        }
        // `ahead` is at most 0 here; its magnitude as usize (2^31 for i32::MIN) never overflows.
        let skip = ahead.unsigned_abs() as usize;
        if skip < payload.len() {
            self.buf.extend_from_slice(&payload[skip..]);
            self.next_seq = Some(next.wrapping_add((payload.len() - skip) as u32));
        }
        // Segments that are now in order.
        while let Some((&s, _)) = self.early.iter().next() {
            let next = self.next_seq.unwrap_or(s);
            if (s.wrapping_sub(next) as i32) > 0 {
                break;
            }
            let p = self.early.remove(&s).unwrap_or_default();
            self.early_bytes -= p.len();
            let skip = next.wrapping_sub(s) as usize;
            if skip < p.len() {
                self.buf.extend_from_slice(&p[skip..]);
                self.next_seq = Some(next.wrapping_add((p.len() - skip) as u32));
            }
        }
    }
}

/// A TCP segment of a captured frame.
struct Segment {
    src: Ipv4Addr,
    dst: Ipv4Addr,
    sport: u16,
    dport: u16,
    seq: u32,
    syn: bool,
    payload: Vec<u8>,
}

fn tcp_segment(linktype: LinkType, data: &[u8]) -> Option<Segment> {
    let ip_bytes = match linktype {
        LinkType::ETHERNET => ethernet::Frame::new_checked(data).ok().and_then(|f| {
            (f.ethertype() == ethernet::EtherType::IPV4).then(|| {
                let p = f.payload();
                data[data.len() - p.len()..].to_vec()
            })
        })?,
        LinkType::RAW | LinkType::IPV4 => data.to_vec(),
        LinkType::LINUX_SLL if data.len() >= 16 && data[14..16] == [0x08, 0x00] => data[16..].to_vec(),
        _ => return None,
    };
    let ip = ipv4::Packet::new_checked(&ip_bytes[..]).ok()?;
    if ip.protocol() != ipv4::IpProtocol::TCP || ip.frag_offset() != 0 || ip.more_frags() {
        return None;
    }
    let t = tcp::Packet::new_checked(ip.payload()).ok()?;
    let syn = t.flags().contains(tcp::Flags::SYN);
    Some(Segment {
        src: ip.src_addr(),
        dst: ip.dst_addr(),
        sport: t.src_port(),
        dport: t.dst_port(),
        seq: t.seq_number(),
        syn,
        payload: t.payload().to_vec(),
    })
}

fn decode_trace<R: Read>(name: &Path, mut reader: TraceReader<R>, out: &mut impl Write) -> Result<(), CliError> {
    let mut streams: BTreeMap<(Ipv4Addr, u16, Ipv4Addr, u16), Stream> = BTreeMap::new();
    while let Some(pkt) = reader.next_packet() {
        let pkt = pkt.map_err(|e| CliError::input(name, e))?;
        let Some(Segment {
            src,
            dst,
            sport,
            dport,
            seq,
            syn,
            payload,
        }) = tcp_segment(pkt.linktype, pkt.data)
        else {
            continue;
        };
        if !OPENFLOW_PORTS.contains(&sport) && !OPENFLOW_PORTS.contains(&dport) {
            continue;
        }
        let s = streams.entry((src, sport, dst, dport)).or_default();
        if syn {
            // A new connection on the same addresses starts a new stream.
            *s = Stream::default();
        }
        s.segment(seq, syn, &payload);
        let ts = pkt.ts_ns as f64 / 1e9;
        let direction = format!("{src}:{sport}->{dst}:{dport}");
        let prefix = |o: O| {
            o.j("ts", serde_json::Number::from_f64(ts).map_or(J::Null, J::Num))
                .s("direction", direction.clone())
        };
        if let Some((seq, held)) = s.gap.take() {
            let j = prefix(O::default())
                .s(
                    "error",
                    format!(
                        "stream unreadable from here on: the bytes from sequence number {seq} never came ({held} bytes held beyond the gap)"
                    ),
                )
                .done();
            writeln!(out, "{}", j.to_line()).map_err(write_err)?;
        }
        let mut used = 0usize;
        while !s.broken {
            let rest = &s.buf[used..];
            let len = match Packet::new_checked(rest) {
                Ok(p) => usize::from(p.length()),
                Err(WireError::Truncated) => break,
                Err(e) => {
                    s.broken = true;
                    let j = prefix(O::default())
                        .s("error", format!("stream unreadable from here on: {e}"))
                        .hex("bytes_hex", &rest[..rest.len().min(16)])
                        .done();
                    writeln!(out, "{}", j.to_line()).map_err(write_err)?;
                    break;
                }
            };
            let j = match decode_message(&rest[..len]) {
                Ok(J::Obj(fields)) => {
                    let mut o = prefix(O::default());
                    o.0.extend(fields);
                    o.done()
                }
                Ok(other) => other,
                Err(e) => prefix(O::default())
                    .s("error", e.to_string())
                    .hex("message_hex", &rest[..len])
                    .done(),
            };
            writeln!(out, "{}", j.to_line()).map_err(write_err)?;
            used += len;
        }
        if s.broken {
            s.buf.clear();
        } else {
            s.buf.drain(..used);
        }
    }
    Ok(())
}

/// `tandem of encode FILE [--out OUT]`.
pub fn encode(path: &Path, out_path: Option<&Path>) -> Result<(), CliError> {
    let name = display_name(path);
    let input: Box<dyn Read> = if path == Path::new("-") {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(path).map_err(|e| CliError::input(path, e))?)
    };
    let mut bytes = Vec::new();
    for (i, line) in BufReader::new(input).lines().enumerate() {
        let line = line.map_err(|e| CliError::input(name, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let at = |m: String| CliError::input(name, format!("line {}: {m}", i + 1));
        let j: J = serde_json::from_str(&line).map_err(|e| at(format!("not JSON: {e}")))?;
        if let J::Obj(o) = &j {
            if o.iter().any(|(k, _)| k == "error") {
                return Err(at(
                    "an `error` object (a message decode could not read) has no bytes".into()
                ));
            }
        }
        bytes.extend(encode_json(&j).map_err(at)?);
    }
    match out_path {
        Some(p) => std::fs::write(p, &bytes).map_err(|e| CliError::runtime(p, e)),
        None => {
            let stdout = std::io::stdout();
            if stdout.is_terminal() {
                return Err(CliError::Input(
                    "standard output is a terminal: give --out FILE or redirect it".into(),
                ));
            }
            let mut w = stdout.lock();
            w.write_all(&bytes).and_then(|()| w.flush()).map_err(write_err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_that_never_fills_is_bounded_and_reported() {
        let mut s = Stream::default();
        s.segment(1000, true, &[]);
        // Byte 1001 never comes; megabytes arrive beyond it.
        let chunk = vec![0u8; 1460];
        let mut seq = 1001u32 + 1460;
        while s.gap.is_none() {
            s.segment(seq, false, &chunk);
            seq = seq.wrapping_add(1460);
            assert!(s.early_bytes <= EARLY_LIMIT + chunk.len());
        }
        assert_eq!(s.gap.map(|g| g.0), Some(1001));
        assert!(s.broken && s.early.is_empty() && s.early_bytes == 0);
        // Nothing more is held once the stream is given up.
        s.segment(seq.wrapping_add(5000), false, &chunk);
        assert!(s.early.is_empty());
    }

    #[test]
    fn sequence_numbers_2_31_apart_do_not_panic() {
        let mut s = Stream::default();
        s.segment(0, false, b"abcd");
        // Exactly half the sequence space behind: i32::MIN, whose negation overflows.
        s.segment(4u32.wrapping_add(1 << 31), false, b"efgh");
        s.segment(4, false, b"ijkl");
        assert_eq!(s.buf, b"abcdijkl");
    }

    #[test]
    fn streams_reassemble_out_of_order_and_retransmitted_segments() {
        let mut s = Stream::default();
        s.segment(99, true, &[]);
        s.segment(103, false, b"defg"); // early
        assert!(s.buf.is_empty());
        s.segment(100, false, b"abc");
        assert_eq!(s.buf, b"abcdefg");
        s.segment(105, false, b"fghi"); // overlaps: only "hi" is new
        s.segment(100, false, b"abc"); // a retransmission
        assert_eq!(s.buf, b"abcdefghi");
        // Sequence numbers wrap.
        let mut w = Stream::default();
        w.segment(u32::MAX - 1, false, b"xy");
        w.segment(0, false, b"z");
        assert_eq!(w.buf, b"xyz");
    }

    #[test]
    fn objects_keep_their_order_and_bad_matches_are_named() {
        let j: J = serde_json::from_str(r#"{"b":1,"a":[true,null,"x"],"b":2.5}"#).unwrap();
        assert_eq!(j.to_line(), r#"{"b":1,"a":[true,null,"x"],"b":2.5}"#);
        let m: J = serde_json::from_str(r#"{"tcp_dst":80,"in_port":1}"#).unwrap();
        let f = oxm_from(R::of(&m, "match").unwrap()).unwrap();
        assert_eq!(f, vec![OxmField::TcpDst(80), OxmField::InPort(1)]);
        let bad: J = serde_json::from_str(r#"{"eth_dst_mask":"ff:ff:ff:ff:ff:ff"}"#).unwrap();
        assert!(oxm_from(R::of(&bad, "match").unwrap())
            .unwrap_err()
            .contains("without its value"));
        let bad: J = serde_json::from_str(r#"{"ipv6_src":"::1"}"#).unwrap();
        assert!(oxm_from(R::of(&bad, "match").unwrap())
            .unwrap_err()
            .contains("ipv6_src"));
        assert_eq!(unhex("0a:0B").unwrap(), vec![10, 11]);
        assert!(unhex("abc").is_err());
    }
}
