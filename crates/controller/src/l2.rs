//! The paper's L2 learning switch, for OpenFlow 1.0 and 1.3.
//!
//! On every packet_in the source MAC is learnt on the input port of that datapath (group
//! addresses are never learnt). Then the destination decides:
//! * a learnt unicast destination on another port: a flow_mod ADD matching `(in_port, eth_dst)`
//!   with [`L2Config::idle_timeout_s`], outputting to that port and naming the packet_in's buffer
//!   id; when the frame was not buffered, a packet_out carrying the frame to that port as well;
//! * a learnt destination on the input port itself: nothing is sent (the frame is dropped, never
//!   hair-pinned back), counted in [`L2Counters::hairpin_drops`];
//! * an unknown, multicast or broadcast destination: a packet_out to `OFPP_FLOOD` (with the frame
//!   when it was not buffered).
//!
//! Replies reuse the packet_in's xid. Each datapath's table holds at most
//! [`L2Config::max_macs_per_dpid`] addresses; a new address beyond that is refused (the table is
//! not changed, so the frame is simply flooded whenever that address is a destination) and counted
//! in [`L2Counters::refused`]: refusing rather than evicting keeps the state independent of any
//! eviction order. A station seen on a new port moves there.
//!
//! OpenFlow 1.3 switches drop table misses by default, so [`App::on_switch_connected`] installs a
//! priority-0 table-miss flow sending to the controller for 1.3 (1.0 switches already do so).

use crate::app::{App, Reply};
use crate::event::{PacketInEvent, NO_BUFFER};
use crate::sink::{EncodedReplies, ReplySink};
use rustc_hash::FxHashMap;
use tandem_wire::openflow::matches::wildcards;
use tandem_wire::openflow::{
    Action, Body, FlowMatch, FlowMod, FlowModCommand, Instruction, Match10, Message, OxmField, OxmMatch, PacketOut,
    Version,
};
use tandem_wire::MacAddr;

/// `OFPP_FLOOD` in OpenFlow 1.0.
pub const OFPP10_FLOOD: u16 = 0xfffb;
/// `OFPP_NONE` in OpenFlow 1.0.
pub const OFPP10_NONE: u16 = 0xffff;
/// `OFPP_FLOOD` in OpenFlow 1.3.
pub const OFPP13_FLOOD: u32 = 0xffff_fffb;
/// `OFPP_NORMAL` in OpenFlow 1.3: the switch's own L2/L3 forwarding.
pub const OFPP13_NORMAL: u32 = 0xffff_fffa;
/// `OFPP_CONTROLLER` in OpenFlow 1.3.
pub const OFPP13_CONTROLLER: u32 = 0xffff_fffd;
/// `OFPP_ANY` (and `OFPG_ANY`) in OpenFlow 1.3.
pub const OFPP13_ANY: u32 = 0xffff_ffff;
/// `OFPCML_NO_BUFFER`: send the whole frame to the controller.
pub const OFPCML_NO_BUFFER: u16 = 0xffff;

/// The OpenFlow 1.3 table-miss entry of `table`: priority 0, matching everything, sending the
/// whole frame to the controller (1.3 switches drop misses by default), with `cookie`.
pub fn table_miss_13(table: u8, cookie: u64) -> FlowMod {
    FlowMod {
        cookie,
        table_id: table,
        command: FlowModCommand::Add,
        priority: 0,
        buffer_id: NO_BUFFER,
        out_port: OFPP13_ANY,
        out_group: OFPP13_ANY,
        matches: FlowMatch::Oxm(OxmMatch::default()),
        instructions: vec![Instruction::ApplyActions(vec![Action::Output {
            port: OFPP13_CONTROLLER,
            max_len: OFPCML_NO_BUFFER,
        }])],
        ..FlowMod::default()
    }
}

/// Settings of the learning switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Config {
    /// Idle timeout of installed flows in seconds. Default 60: long enough that an active
    /// conversation keeps its flow, short enough that a moved station is relearnt within a minute.
    pub idle_timeout_s: u16,
    /// Hard timeout of installed flows in seconds (default 0: none).
    pub hard_timeout_s: u16,
    /// Priority of installed flows (default 1, above the priority-0 table-miss flow).
    pub priority: u16,
    /// Most addresses learnt per datapath (default 4096).
    pub max_macs_per_dpid: usize,
}

impl Default for L2Config {
    fn default() -> L2Config {
        L2Config {
            idle_timeout_s: 60,
            hard_timeout_s: 0,
            priority: 1,
            max_macs_per_dpid: 4096,
        }
    }
}

/// What the learning switch did, cumulatively.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct L2Counters {
    /// New addresses learnt.
    pub learned: u64,
    /// Learnt addresses that moved to another port.
    pub moved: u64,
    /// New addresses refused because the datapath's table was full.
    pub refused: u64,
    /// flow_mods sent.
    pub flow_mods: u64,
    /// packet_outs sent (floods and unbuffered forwards).
    pub packet_outs: u64,
    /// Frames flooded.
    pub floods: u64,
    /// Frames dropped because the destination sits on the input port.
    pub hairpin_drops: u64,
    /// OpenFlow 1.0 frames dropped because a port did not fit 16 bits.
    pub invalid_ports: u64,
    /// Unbuffered frames that could not be sent back: the switch did not buffer the frame and
    /// a packet_out carrying it would pass OpenFlow's 65,535-byte message limit (a ~65.5 KB
    /// frame in a packet_in). The flow_mod, if any, is still sent; the frame itself is lost, as
    /// on a switch without buffers.
    pub oversize_packet_outs: u64,
}

impl L2Counters {
    /// Adds every counter of `o` to this one.
    pub fn add(&mut self, o: &L2Counters) {
        self.learned += o.learned;
        self.moved += o.moved;
        self.refused += o.refused;
        self.flow_mods += o.flow_mods;
        self.packet_outs += o.packet_outs;
        self.floods += o.floods;
        self.hairpin_drops += o.hairpin_drops;
        self.invalid_ports += o.invalid_ports;
        self.oversize_packet_outs += o.oversize_packet_outs;
    }
}

/// The learning switch: one MAC table per datapath.
#[derive(Debug, Clone, Default)]
pub struct L2Switch {
    cfg: L2Config,
    tables: FxHashMap<u64, FxHashMap<MacAddr, u32>>,
    counters: L2Counters,
    templates: Templates,
}

impl L2Switch {
    /// A switch with these settings and empty tables.
    pub fn new(cfg: L2Config) -> L2Switch {
        L2Switch {
            cfg,
            ..L2Switch::default()
        }
    }

    /// The settings.
    pub fn config(&self) -> &L2Config {
        &self.cfg
    }

    /// The counters so far.
    pub fn counters(&self) -> L2Counters {
        self.counters
    }

    /// The port `mac` was learnt on at `dpid`.
    pub fn lookup(&self, dpid: u64, mac: MacAddr) -> Option<u32> {
        self.tables.get(&dpid)?.get(&mac).copied()
    }

    /// Addresses learnt at `dpid`.
    pub fn table_len(&self, dpid: u64) -> usize {
        self.tables.get(&dpid).map_or(0, |t| t.len())
    }

    /// Every `(address, port)` learnt at `dpid`, in no particular order.
    pub(crate) fn table_entries(&self, dpid: u64) -> impl Iterator<Item = (MacAddr, u32)> + '_ {
        self.tables
            .get(&dpid)
            .into_iter()
            .flat_map(|t| t.iter().map(|(m, p)| (*m, *p)))
    }

    /// Learns `src` on `port` at `dpid`. Returns `Some(previous entry)` when the table changed,
    /// `None` when it did not (already there, a group address, or refused).
    pub(crate) fn learn(&mut self, dpid: u64, src: MacAddr, port: u32) -> Option<Option<u32>> {
        if src.is_multicast() {
            return None;
        }
        let max = self.cfg.max_macs_per_dpid;
        let table = self.tables.entry(dpid).or_default();
        let full = table.len() >= max;
        match table.get_mut(&src) {
            Some(p) if *p == port => None,
            Some(p) => {
                let old = *p;
                *p = port;
                self.counters.moved += 1;
                Some(Some(old))
            }
            None if full => {
                self.counters.refused += 1;
                None
            }
            None => {
                table.insert(src, port);
                self.counters.learned += 1;
                Some(None)
            }
        }
    }

    /// Sends what the packet_in calls for, given the port its destination resolved to (`None`:
    /// unknown or a group address).
    pub(crate) fn respond<O: ReplySink>(&mut self, dpid: u64, ev: &PacketInEvent, dst_port: Option<u32>, out: &mut O) {
        Responder {
            cfg: &self.cfg,
            counters: &mut self.counters,
            t: &mut self.templates,
        }
        .respond(dpid, ev, dst_port, out);
    }

    /// The reply side alone, counting into `counters` and filling `templates` instead of the
    /// switch's own (for a backend that builds replies on several threads and adds the
    /// counters up afterwards).
    pub(crate) fn responder<'a>(&'a self, counters: &'a mut L2Counters, templates: &'a mut Templates) -> Responder<'a> {
        Responder {
            cfg: &self.cfg,
            counters,
            t: templates,
        }
    }

    /// Adds `c` to the switch's counters.
    pub(crate) fn add_counters(&mut self, c: &L2Counters) {
        self.counters.add(c);
    }

    /// The resolution [`L2Switch::respond`] takes, for a table lookup result.
    pub(crate) fn resolve(dst: MacAddr, learnt: Option<u32>) -> Option<u32> {
        if dst.is_multicast() {
            None
        } else {
            learnt
        }
    }
}

/// The reply messages a [`Responder`] reuses: each event's fields are written into them and the
/// message is handed to the sink by reference, so building a reply allocates nothing once their
/// vectors have grown (a [`crate::sink::EncodedReplies`] sink then encodes it in place).
#[derive(Debug, Clone)]
pub(crate) struct Templates {
    /// OpenFlow 1.0's flow_mod (a 1.0 match and actions) and 1.3's (OXM fields and
    /// instructions), kept apart so that neither gives up its vectors to the other. Kept as
    /// whole messages and filled in place: nothing is moved per event.
    flow_mod_10: Message,
    flow_mod_13: Message,
    packet_out: Message,
}

impl Default for Templates {
    fn default() -> Templates {
        let message = |body| Message {
            version: Version::V1_0,
            xid: 0,
            body,
        };
        Templates {
            flow_mod_10: message(Body::FlowMod(FlowMod::default())),
            flow_mod_13: message(Body::FlowMod(FlowMod::default())),
            packet_out: message(Body::PacketOut(PacketOut::default())),
        }
    }
}

/// The flow_mod body of a template (made one if it is not).
fn flow_mod_of(m: &mut Message) -> &mut FlowMod {
    if !matches!(m.body, Body::FlowMod(_)) {
        m.body = Body::FlowMod(FlowMod::default());
    }
    match &mut m.body {
        Body::FlowMod(fm) => fm,
        _ => unreachable!("made a flow_mod above"),
    }
}

/// The packet_out body of a template (made one if it is not).
fn packet_out_of(m: &mut Message) -> &mut PacketOut {
    if !matches!(m.body, Body::PacketOut(_)) {
        m.body = Body::PacketOut(PacketOut::default());
    }
    match &mut m.body {
        Body::PacketOut(po) => po,
        _ => unreachable!("made a packet_out above"),
    }
}

/// Builds the replies for resolved packet_ins from the switch's settings, counting what it sent;
/// it reads no table, so several can run at once on parts of a batch.
#[derive(Debug)]
pub(crate) struct Responder<'a> {
    cfg: &'a L2Config,
    counters: &'a mut L2Counters,
    t: &'a mut Templates,
}

impl Responder<'_> {
    /// As [`L2Switch::respond`].
    pub(crate) fn respond<O: ReplySink>(&mut self, dpid: u64, ev: &PacketInEvent, dst_port: Option<u32>, out: &mut O) {
        match dst_port {
            Some(port) if port == ev.in_port => self.counters.hairpin_drops += 1,
            Some(port) => self.forward(dpid, ev, port, out),
            None => self.flood(dpid, ev, out),
        }
    }

    fn forward<O: ReplySink>(&mut self, dpid: u64, ev: &PacketInEvent, port: u32, out: &mut O) {
        if ev.version == Version::V1_0 && (u16::try_from(ev.in_port).is_err() || u16::try_from(port).is_err()) {
            self.counters.invalid_ports += 1;
            return;
        }
        if O::BY_REFERENCE {
            let message = if ev.version == Version::V1_0 {
                &mut self.t.flow_mod_10
            } else {
                &mut self.t.flow_mod_13
            };
            message.version = ev.version;
            message.xid = ev.xid;
            fill_flow_mod(flow_mod_of(message), self.cfg, ev, port);
            out.push_ref(dpid, message);
        } else {
            // Room for the one action (1.0) or instruction (1.3), no more.
            out.push(Reply::flow_mod(
                dpid,
                ev.version,
                ev.xid,
                new_flow_mod(self.cfg, ev, port),
            ));
        }
        self.counters.flow_mods += 1;
        // A buffered frame is released by the flow_mod; an unbuffered one goes out in a
        // packet_out to the same port.
        if !ev.is_buffered() {
            self.packet_out(dpid, ev, port, out);
        }
    }

    fn flood<O: ReplySink>(&mut self, dpid: u64, ev: &PacketInEvent, out: &mut O) {
        if ev.version == Version::V1_0 && u16::try_from(ev.in_port).is_err() {
            self.counters.invalid_ports += 1;
            return;
        }
        let port = if ev.version == Version::V1_0 {
            u32::from(OFPP10_FLOOD)
        } else {
            OFPP13_FLOOD
        };
        self.counters.floods += 1;
        self.packet_out(dpid, ev, port, out);
    }

    fn packet_out<O: ReplySink>(&mut self, dpid: u64, ev: &PacketInEvent, port: u32, out: &mut O) {
        // A buffered frame is referred to by its buffer id; an unbuffered one travels in the
        // message, which must fit OpenFlow's 16-bit length (8-byte header + body).
        let data = if ev.is_buffered() { &[][..] } else { &ev.data[..] };
        if 8 + PacketOut::default().buffer_len(ev.version) + data.len() + action_len(ev.version) > usize::from(u16::MAX)
        {
            self.counters.oversize_packet_outs += 1;
            return;
        }
        if O::BY_REFERENCE {
            let message = &mut self.t.packet_out;
            message.version = ev.version;
            message.xid = ev.xid;
            fill_packet_out(packet_out_of(message), ev, port, data);
            out.push_ref(dpid, message);
        } else {
            let po = PacketOut {
                buffer_id: ev.buffer_id,
                in_port: ev.in_port,
                actions: vec![output(port)],
                data: data.to_vec(),
            };
            out.push(Reply::packet_out(dpid, ev.version, ev.xid, po));
        }
        self.counters.packet_outs += 1;
    }
}

/// Bytes of one output action in `version`.
fn action_len(version: Version) -> usize {
    output(0).buffer_len(version)
}

/// The flow_mod that forwards `ev`'s destination to `port`, as a new value (for a sink that keeps
/// owned messages: a value built where it is pushed costs less than one filled through a
/// reference and moved). [`fill_flow_mod`] writes the same message into a reused one; the
/// backend-equivalence property tests compare the two paths' bytes. 1.0 ports are checked to
/// fit 16 bits before.
fn new_flow_mod(cfg: &L2Config, ev: &PacketInEvent, port: u32) -> FlowMod {
    let common = FlowMod {
        command: FlowModCommand::Add,
        idle_timeout: cfg.idle_timeout_s,
        hard_timeout: cfg.hard_timeout_s,
        priority: cfg.priority,
        buffer_id: ev.buffer_id,
        ..FlowMod::default()
    };
    if ev.version == Version::V1_0 {
        FlowMod {
            matches: FlowMatch::V10(Match10 {
                wildcards: wildcards::ALL & !(wildcards::IN_PORT | wildcards::DL_DST),
                in_port: u16::try_from(ev.in_port).unwrap_or(u16::MAX),
                dl_dst: ev.eth_dst,
                ..Match10::default()
            }),
            out_port: u32::from(OFPP10_NONE),
            actions: vec![output(port)],
            ..common
        }
    } else {
        FlowMod {
            matches: FlowMatch::Oxm(OxmMatch {
                fields: vec![OxmField::InPort(ev.in_port), OxmField::EthDst(ev.eth_dst, None)],
            }),
            out_port: OFPP13_ANY,
            out_group: OFPP13_ANY,
            instructions: vec![Instruction::ApplyActions(vec![output(port)])],
            ..common
        }
    }
}

/// Fills `fm` (a reused message) with the flow_mod that forwards `ev`'s destination to `port`,
/// reusing its vectors. 1.0 ports are checked to fit 16 bits before.
#[inline]
fn fill_flow_mod(fm: &mut FlowMod, cfg: &L2Config, ev: &PacketInEvent, port: u32) {
    if ev.version == Version::V1_0 {
        let m = Match10 {
            wildcards: wildcards::ALL & !(wildcards::IN_PORT | wildcards::DL_DST),
            in_port: u16::try_from(ev.in_port).unwrap_or(u16::MAX),
            dl_dst: ev.eth_dst,
            ..Match10::default()
        };
        fm.matches = FlowMatch::V10(m);
        fm.out_port = u32::from(OFPP10_NONE);
        fm.out_group = 0;
        fm.instructions.clear();
        set_output(&mut fm.actions, port);
    } else {
        let fields = [OxmField::InPort(ev.in_port), OxmField::EthDst(ev.eth_dst, None)];
        match &mut fm.matches {
            FlowMatch::Oxm(m) => {
                m.fields.clear();
                m.fields.extend(fields);
            }
            other => {
                *other = FlowMatch::Oxm(OxmMatch {
                    fields: fields.to_vec(),
                })
            }
        }
        fm.out_port = OFPP13_ANY;
        fm.out_group = OFPP13_ANY;
        fm.actions.clear();
        match fm.instructions.as_mut_slice() {
            [Instruction::ApplyActions(actions)] => set_output(actions, port),
            _ => {
                fm.instructions.clear();
                fm.instructions.push(Instruction::ApplyActions(vec![output(port)]));
            }
        }
    }
    fm.command = FlowModCommand::Add;
    fm.idle_timeout = cfg.idle_timeout_s;
    fm.hard_timeout = cfg.hard_timeout_s;
    fm.priority = cfg.priority;
    fm.buffer_id = ev.buffer_id;
}

/// Fills `po` (a reused message) with the packet_out that sends `ev`'s frame (`data`: empty
/// when the switch buffered it) to `port`.
#[inline]
fn fill_packet_out(po: &mut PacketOut, ev: &PacketInEvent, port: u32, data: &[u8]) {
    po.buffer_id = ev.buffer_id;
    po.in_port = ev.in_port;
    set_output(&mut po.actions, port);
    po.data.clear();
    po.data.extend_from_slice(data);
}

/// An output action to `port`, to the whole frame.
fn output(port: u32) -> Action {
    Action::Output { port, max_len: 0 }
}

/// Makes `actions` the one output action to `port`, reusing its storage.
#[inline]
fn set_output(actions: &mut Vec<Action>, port: u32) {
    match actions.as_mut_slice() {
        [Action::Output { port: p, max_len }] => {
            *p = port;
            *max_len = 0;
        }
        _ => {
            actions.clear();
            actions.push(output(port));
        }
    }
}

impl App for L2Switch {
    fn on_switch_connected(&mut self, _now_ps: u64, dpid: u64, version: Version, out: &mut Vec<Reply>) {
        self.tables.entry(dpid).or_default();
        if version == Version::V1_3 {
            out.push(Reply::flow_mod(dpid, version, 0, table_miss_13(0, 0)));
            self.counters.flow_mods += 1;
        }
    }

    fn on_switch_disconnected(&mut self, _now_ps: u64, dpid: u64, _out: &mut Vec<Reply>) {
        self.tables.remove(&dpid);
    }

    fn on_packet_in(&mut self, _now_ps: u64, dpid: u64, ev: &PacketInEvent, out: &mut Vec<Reply>) {
        self.learn(dpid, ev.eth_src, ev.in_port);
        let dst = L2Switch::resolve(ev.eth_dst, self.lookup(dpid, ev.eth_dst));
        self.respond(dpid, ev, dst, out);
    }

    fn on_packet_in_encoded(&mut self, _now_ps: u64, dpid: u64, ev: &PacketInEvent, out: &mut EncodedReplies) {
        self.learn(dpid, ev.eth_src, ev.in_port);
        let dst = L2Switch::resolve(ev.eth_dst, self.lookup(dpid, ev.eth_dst));
        self.respond(dpid, ev, dst, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: MacAddr = MacAddr([0, 0, 0, 0, 0, 0xa]);
    const B: MacAddr = MacAddr([0, 0, 0, 0, 0, 0xb]);

    fn ev(version: Version, xid: u32, buffer_id: u32, in_port: u32, src: MacAddr, dst: MacAddr) -> PacketInEvent {
        let mut f = vec![0u8; 60];
        f[0..6].copy_from_slice(&dst.0);
        f[6..12].copy_from_slice(&src.0);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[59] = 0x5a;
        PacketInEvent::from_frame(version, xid, buffer_id, in_port, 60, f).unwrap()
    }

    fn bytes(r: &Reply) -> Vec<u8> {
        r.message.to_bytes().unwrap()
    }

    fn be16(b: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([b[at], b[at + 1]])
    }

    fn be32(b: &[u8], at: usize) -> u32 {
        u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    #[test]
    fn of10_flood_then_flow_mod() {
        let mut sw = L2Switch::new(L2Config::default());
        let mut out = Vec::new();
        // A on port 1 to unknown B: flood, buffered (no data).
        sw.on_packet_in(0, 1, &ev(Version::V1_0, 11, 100, 1, A, B), &mut out);
        assert_eq!(out.len(), 1);
        let b = bytes(&out[0]);
        assert_eq!((b[0], b[1], be32(&b, 4)), (1, 13, 11));
        assert_eq!(be32(&b, 8), 100); // buffer_id
        assert_eq!(be16(&b, 12), 1); // in_port
        assert_eq!(be16(&b, 14), 8); // actions_len
        assert_eq!((be16(&b, 16), be16(&b, 18), be16(&b, 20)), (0, 8, 0xfffb));
        assert_eq!(b.len(), 24);
        // B on port 2 to A (learnt on 1): flow_mod to port 1 with the buffer id.
        out.clear();
        sw.on_packet_in(0, 1, &ev(Version::V1_0, 12, 101, 2, B, A), &mut out);
        assert_eq!(out.len(), 1);
        let b = bytes(&out[0]);
        assert_eq!((b[0], b[1], be16(&b, 2), be32(&b, 4)), (1, 14, 80, 12));
        let wc = be32(&b, 8);
        assert_eq!(wc & (wildcards::IN_PORT | wildcards::DL_DST), 0);
        assert_eq!(wc | wildcards::IN_PORT | wildcards::DL_DST, wildcards::ALL);
        assert_eq!(be16(&b, 12), 2);
        assert_eq!(&b[20..26], &A.0);
        assert_eq!(be16(&b, 56), 0); // ADD
        assert_eq!(be16(&b, 58), 60); // idle timeout
        assert_eq!(be16(&b, 62), 1); // priority
        assert_eq!(be32(&b, 64), 101); // buffer_id
        assert_eq!((be16(&b, 72), be16(&b, 74), be16(&b, 76)), (0, 8, 1));
        assert_eq!(sw.counters().learned, 2);
        assert_eq!(sw.counters().flow_mods, 1);
    }

    #[test]
    fn of10_unbuffered_forward_sends_flow_mod_and_packet_out() {
        let mut sw = L2Switch::new(L2Config::default());
        let mut out = Vec::new();
        sw.on_packet_in(0, 1, &ev(Version::V1_0, 1, NO_BUFFER, 1, A, B), &mut out);
        let b = bytes(&out[0]);
        assert_eq!(b.len(), 24 + 60); // flood carries the frame
        assert_eq!(b[24 + 59], 0x5a);
        out.clear();
        sw.on_packet_in(0, 1, &ev(Version::V1_0, 2, NO_BUFFER, 2, B, A), &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(bytes(&out[0])[1], 14);
        let b = bytes(&out[1]);
        assert_eq!((b[1], be32(&b, 8), be16(&b, 20)), (13, NO_BUFFER, 1));
        assert_eq!(&b[24..30], &A.0);
    }

    #[test]
    fn of13_table_miss_flood_and_flow_mod() {
        let mut sw = L2Switch::new(L2Config {
            idle_timeout_s: 30,
            ..L2Config::default()
        });
        let mut out = Vec::new();
        sw.on_switch_connected(0, 7, Version::V1_3, &mut out);
        let b = bytes(&out[0]);
        assert_eq!((b[0], b[1], be16(&b, 30)), (4, 14, 0)); // priority 0
        assert_eq!((be16(&b, 48), be16(&b, 50)), (1, 4)); // empty OXM match
        assert_eq!((be16(&b, 56), be16(&b, 64), be32(&b, 68)), (4, 0, OFPP13_CONTROLLER));
        out.clear();
        sw.on_packet_in(0, 7, &ev(Version::V1_3, 5, 300, 0x10, A, MacAddr::BROADCAST), &mut out);
        let b = bytes(&out[0]);
        assert_eq!((b[0], b[1], be32(&b, 4)), (4, 13, 5));
        assert_eq!((be32(&b, 8), be32(&b, 12), be16(&b, 16)), (300, 0x10, 16));
        assert_eq!((be16(&b, 24), be16(&b, 26), be32(&b, 28)), (0, 16, 0xffff_fffb));
        out.clear();
        sw.on_packet_in(0, 7, &ev(Version::V1_3, 6, 301, 0x20, B, A), &mut out);
        assert_eq!(out.len(), 1);
        let b = bytes(&out[0]);
        assert_eq!((b[0], b[1], be16(&b, 2), be32(&b, 4)), (4, 14, 96, 6));
        assert_eq!((b[25], be16(&b, 26), be16(&b, 30), be32(&b, 32)), (0, 30, 1, 301));
        assert_eq!((be16(&b, 48), be16(&b, 50)), (1, 22)); // OXM match, 22 bytes unpadded
        assert_eq!((be16(&b, 52), b[54], b[55], be32(&b, 56)), (0x8000, 0, 4, 0x20));
        assert_eq!((be16(&b, 60), b[62], b[63]), (0x8000, 3 << 1, 6));
        assert_eq!(&b[64..70], &A.0);
        assert_eq!((be16(&b, 72), be16(&b, 74)), (4, 24)); // apply_actions
        assert_eq!((be16(&b, 80), be16(&b, 82), be32(&b, 84)), (0, 16, 0x10));
    }

    #[test]
    fn never_hairpins_and_moves_stations() {
        let mut sw = L2Switch::new(L2Config::default());
        let mut out = Vec::new();
        sw.on_packet_in(0, 1, &ev(Version::V1_3, 1, 1, 3, A, B), &mut out);
        sw.on_packet_in(0, 1, &ev(Version::V1_3, 2, 2, 3, B, A), &mut out);
        assert_eq!(out.len(), 1); // the flood; the second is dropped
        assert_eq!(sw.counters().hairpin_drops, 1);
        sw.on_packet_in(0, 1, &ev(Version::V1_3, 3, 3, 4, A, B), &mut out);
        assert_eq!(sw.lookup(1, A), Some(4));
        assert_eq!(sw.counters().moved, 1);
        assert_eq!(sw.lookup(2, A), None); // tables are per datapath
    }

    #[test]
    fn bounded_table_refuses_and_disconnect_forgets() {
        let mut sw = L2Switch::new(L2Config {
            max_macs_per_dpid: 1,
            ..L2Config::default()
        });
        let mut out = Vec::new();
        sw.on_packet_in(0, 1, &ev(Version::V1_0, 1, 1, 1, A, B), &mut out);
        sw.on_packet_in(0, 1, &ev(Version::V1_0, 2, 2, 2, B, A), &mut out);
        assert_eq!(sw.table_len(1), 1);
        assert_eq!(sw.counters().refused, 1);
        sw.on_packet_in(
            0,
            1,
            &ev(Version::V1_0, 3, 3, 1, MacAddr([1, 0, 0, 0, 0, 1]), A),
            &mut out,
        );
        assert_eq!(sw.table_len(1), 1, "group sources are not learnt");
        sw.on_switch_disconnected(0, 1, &mut out);
        assert_eq!(sw.table_len(1), 0);
    }

    #[test]
    fn of10_wide_port_is_dropped_not_panicking() {
        let mut sw = L2Switch::new(L2Config::default());
        let mut out = Vec::new();
        sw.on_packet_in(0, 1, &ev(Version::V1_0, 1, 1, 0x1_0000, A, B), &mut out);
        assert!(out.is_empty());
        assert_eq!(sw.counters().invalid_ports, 1);
    }

    #[test]
    fn a_frame_too_big_to_send_back_is_counted_not_sent() {
        let mut sw = L2Switch::default();
        let mut out = Vec::new();
        sw.on_switch_connected(0, 1, Version::V1_0, &mut out);
        out.clear();
        // An OpenFlow 1.0 packet_in carries at most 65,535 - 18 bytes of frame; its flood
        // (16 + 8 bytes of packet_out around the frame) would not fit.
        let mut f = vec![0u8; 65_535 - 18];
        f[..6].copy_from_slice(&[0xff; 6]);
        f[6..12].copy_from_slice(&A.0);
        let ev = PacketInEvent::from_frame(Version::V1_0, 1, NO_BUFFER, 1, f.len() as u16, f.clone()).unwrap();
        sw.on_packet_in(0, 1, &ev, &mut out);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(sw.counters().oversize_packet_outs, 1);
        // Buffered, the same frame is flooded by buffer id.
        let ev = PacketInEvent::from_frame(Version::V1_0, 2, 77, 1, f.len() as u16, f).unwrap();
        sw.on_packet_in(0, 1, &ev, &mut out);
        assert_eq!(out.len(), 1);
        assert!(out[0].message.to_bytes().is_ok());
    }

    /// Under the shared core contract (`AppCore`) the switch answers as through its own calls.
    #[test]
    fn the_shared_core_contract_gives_the_same_replies() {
        use crate::app::{AppCore, AppInput};
        use tandem_time::sansio::SansIo;
        let mut core = AppCore(L2Switch::new(L2Config::default()));
        let mut direct = L2Switch::new(L2Config::default());
        let (mut a, mut b) = (Vec::new(), Vec::new());
        SansIo::handle(
            &mut core,
            0,
            AppInput::Connected {
                dpid: 1,
                version: Version::V1_3,
            },
            &mut a,
        )
        .unwrap();
        direct.on_switch_connected(0, 1, Version::V1_3, &mut b);
        for (i, (port, src, dst)) in [(1, A, B), (2, B, A), (1, A, B)].into_iter().enumerate() {
            let e = ev(Version::V1_3, 20 + i as u32, 100, port, src, dst);
            SansIo::handle(&mut core, 5, AppInput::PacketIn { dpid: 1, ev: &e }, &mut a).unwrap();
            direct.on_packet_in(5, 1, &e, &mut b);
        }
        SansIo::handle(&mut core, 9, <AppCore<L2Switch> as SansIo>::timeout(), &mut a).unwrap();
        SansIo::handle(&mut core, 9, AppInput::Disconnected { dpid: 1 }, &mut a).unwrap();
        direct.on_switch_disconnected(9, 1, &mut b);
        assert!(!a.is_empty());
        assert_eq!(
            a.iter().map(bytes).collect::<Vec<_>>(),
            b.iter().map(bytes).collect::<Vec<_>>()
        );
        assert_eq!(SansIo::poll_timeout(&core), direct.poll_timeout());
    }
}
