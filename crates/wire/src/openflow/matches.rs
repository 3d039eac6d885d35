//! Flow matches: the fixed 40-byte OpenFlow 1.0 `ofp_match` and the OpenFlow 1.3 OXM match.
//!
//! OpenFlow 1.3 `ofp_match`: type (2, 1 = OXM), length (2: header and fields, padding excluded),
//! OXM TLVs, zero padding to a multiple of 8. Each OXM TLV: class (2), field << 1 | hasmask (1),
//! payload length (1), value, then the mask when hasmask is set.

use super::need;
use crate::ethernet::MacAddr;
use crate::field::{ipv4_at, read_u16, read_u32, write_u16, write_u32};
use crate::{Error, Result};
use std::net::Ipv4Addr;

/// Length of an OpenFlow 1.0 `ofp_match`.
pub const MATCH10_LEN: usize = 40;

/// OpenFlow 1.0 wildcard bits (`OFPFW_*`).
pub mod wildcards {
    /// Switch input port.
    pub const IN_PORT: u32 = 1 << 0;
    /// VLAN id.
    pub const DL_VLAN: u32 = 1 << 1;
    /// Ethernet source address.
    pub const DL_SRC: u32 = 1 << 2;
    /// Ethernet destination address.
    pub const DL_DST: u32 = 1 << 3;
    /// Ethernet frame type.
    pub const DL_TYPE: u32 = 1 << 4;
    /// IP protocol.
    pub const NW_PROTO: u32 = 1 << 5;
    /// TCP/UDP source port.
    pub const TP_SRC: u32 = 1 << 6;
    /// TCP/UDP destination port.
    pub const TP_DST: u32 = 1 << 7;
    /// Shift of the 6-bit count of wildcarded low bits of the IPv4 source (>= 32: all).
    pub const NW_SRC_SHIFT: u32 = 8;
    /// Mask of the IPv4 source wildcard count.
    pub const NW_SRC_MASK: u32 = 0x3f << NW_SRC_SHIFT;
    /// Shift of the 6-bit count of wildcarded low bits of the IPv4 destination.
    pub const NW_DST_SHIFT: u32 = 14;
    /// Mask of the IPv4 destination wildcard count.
    pub const NW_DST_MASK: u32 = 0x3f << NW_DST_SHIFT;
    /// VLAN priority.
    pub const DL_VLAN_PCP: u32 = 1 << 20;
    /// IP ToS (DSCP field, 6 bits).
    pub const NW_TOS: u32 = 1 << 21;
    /// Every field wildcarded.
    pub const ALL: u32 = (1 << 22) - 1;
}

/// An OpenFlow 1.0 match (`ofp_match`): the wildcard word and the twelve fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Match10 {
    /// `OFPFW_*` bits (see [`wildcards`]); a set bit means the field is ignored.
    pub wildcards: u32,
    /// Input port.
    pub in_port: u16,
    /// Ethernet source.
    pub dl_src: MacAddr,
    /// Ethernet destination.
    pub dl_dst: MacAddr,
    /// VLAN id (0xffff: no VLAN tag).
    pub dl_vlan: u16,
    /// VLAN priority.
    pub dl_vlan_pcp: u8,
    /// EtherType.
    pub dl_type: u16,
    /// IP ToS (DSCP in the high 6 bits).
    pub nw_tos: u8,
    /// IP protocol (or the ARP opcode's low byte).
    pub nw_proto: u8,
    /// IPv4 source.
    pub nw_src: Ipv4Addr,
    /// IPv4 destination.
    pub nw_dst: Ipv4Addr,
    /// TCP/UDP source port (ICMP type).
    pub tp_src: u16,
    /// TCP/UDP destination port (ICMP code).
    pub tp_dst: u16,
}

impl Default for Match10 {
    /// Every field and the wildcard word zero (an exact match on zeros).
    fn default() -> Match10 {
        Match10 {
            wildcards: 0,
            in_port: 0,
            dl_src: MacAddr::ZERO,
            dl_dst: MacAddr::ZERO,
            dl_vlan: 0,
            dl_vlan_pcp: 0,
            dl_type: 0,
            nw_tos: 0,
            nw_proto: 0,
            nw_src: Ipv4Addr::UNSPECIFIED,
            nw_dst: Ipv4Addr::UNSPECIFIED,
            tp_src: 0,
            tp_dst: 0,
        }
    }
}

impl Match10 {
    /// The match that matches every packet (all wildcard bits set, fields zero).
    pub fn any() -> Match10 {
        Match10 {
            wildcards: wildcards::ALL,
            ..Match10::default()
        }
    }
    /// Prefix length the IPv4 source match uses (32 minus the wildcarded bits, at least 0).
    pub fn nw_src_prefix_len(&self) -> u8 {
        32u8.saturating_sub(((self.wildcards & wildcards::NW_SRC_MASK) >> wildcards::NW_SRC_SHIFT) as u8)
    }
    /// Prefix length the IPv4 destination match uses.
    pub fn nw_dst_prefix_len(&self) -> u8 {
        32u8.saturating_sub(((self.wildcards & wildcards::NW_DST_MASK) >> wildcards::NW_DST_SHIFT) as u8)
    }
    /// Reads the 40-byte match from the start of `b`.
    pub fn parse(b: &[u8]) -> Result<Match10> {
        need(b, MATCH10_LEN)?;
        Ok(Match10 {
            wildcards: read_u32(b, 0),
            in_port: read_u16(b, 4),
            dl_src: MacAddr::from_bytes(&b[6..12]),
            dl_dst: MacAddr::from_bytes(&b[12..18]),
            dl_vlan: read_u16(b, 18),
            dl_vlan_pcp: b[20],
            dl_type: read_u16(b, 22),
            nw_tos: b[24],
            nw_proto: b[25],
            nw_src: ipv4_at(b, 28..32),
            nw_dst: ipv4_at(b, 32..36),
            tp_src: read_u16(b, 36),
            tp_dst: read_u16(b, 38),
        })
    }
    /// Bytes this match emits (40).
    #[inline]
    pub fn buffer_len(&self) -> usize {
        MATCH10_LEN
    }
    /// Writes the 40-byte match into the start of `buf` (padding zeroed).
    #[inline]
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        need(buf, MATCH10_LEN)?;
        buf[..MATCH10_LEN].fill(0);
        write_u32(buf, 0, self.wildcards);
        write_u16(buf, 4, self.in_port);
        buf[6..12].copy_from_slice(&self.dl_src.0);
        buf[12..18].copy_from_slice(&self.dl_dst.0);
        write_u16(buf, 18, self.dl_vlan);
        buf[20] = self.dl_vlan_pcp;
        write_u16(buf, 22, self.dl_type);
        buf[24] = self.nw_tos;
        buf[25] = self.nw_proto;
        buf[28..32].copy_from_slice(&self.nw_src.octets());
        buf[32..36].copy_from_slice(&self.nw_dst.octets());
        write_u16(buf, 36, self.tp_src);
        write_u16(buf, 38, self.tp_dst);
        Ok(())
    }
}

/// OXM class of the basic OpenFlow fields (`OFPXMC_OPENFLOW_BASIC`).
pub const OXM_CLASS_OPENFLOW_BASIC: u16 = 0x8000;
/// `ofp_match` type for OXM matches (`OFPMT_OXM`).
pub const MATCH_TYPE_OXM: u16 = 1;

/// One OXM field. The basic-class fields listed are modelled (with a mask where the 1.3
/// specification allows one); anything else, other classes included, is kept as
/// [`OxmField::Unknown`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OxmField {
    /// `in_port` (0): switch input port.
    InPort(u32),
    /// `metadata` (2), maskable.
    Metadata(u64, Option<u64>),
    /// `eth_dst` (3), maskable.
    EthDst(MacAddr, Option<MacAddr>),
    /// `eth_src` (4), maskable.
    EthSrc(MacAddr, Option<MacAddr>),
    /// `eth_type` (5).
    EthType(u16),
    /// `vlan_vid` (6), maskable: the VID with `OFPVID_PRESENT` (0x1000) set when tagged.
    VlanVid(u16, Option<u16>),
    /// `vlan_pcp` (7).
    VlanPcp(u8),
    /// `ip_dscp` (8): the IPv4 DSCP (6 bits; as a set-field, it rewrites the DSCP, which is how
    /// CoSwitch marks elephants).
    IpDscp(u8),
    /// `ip_proto` (10).
    IpProto(u8),
    /// `ipv4_src` (11), maskable.
    Ipv4Src(Ipv4Addr, Option<Ipv4Addr>),
    /// `ipv4_dst` (12), maskable.
    Ipv4Dst(Ipv4Addr, Option<Ipv4Addr>),
    /// `tcp_src` (13).
    TcpSrc(u16),
    /// `tcp_dst` (14).
    TcpDst(u16),
    /// `udp_src` (15).
    UdpSrc(u16),
    /// `udp_dst` (16).
    UdpDst(u16),
    /// Any other field, kept as it came.
    Unknown {
        /// OXM class.
        class: u16,
        /// Field number (7 bits).
        field: u8,
        /// The hasmask bit.
        has_mask: bool,
        /// Value and mask bytes.
        payload: Vec<u8>,
    },
}

/// Bit set in `vlan_vid` when a VLAN tag is present (`OFPVID_PRESENT`).
pub const OFPVID_PRESENT: u16 = 0x1000;

/// (field number, value length, maskable) of the modelled basic fields.
fn basic_shape(field: u8) -> Option<(usize, bool)> {
    Some(match field {
        0 => (4, false),
        2 => (8, true),
        3 | 4 => (6, true),
        5 => (2, false),
        6 => (2, true),
        7 | 8 | 10 => (1, false),
        11 | 12 => (4, true),
        13..=16 => (2, false),
        _ => return None,
    })
}

impl OxmField {
    /// (class, field, hasmask) of this field.
    pub fn header(&self) -> (u16, u8, bool) {
        let basic = |f: u8, m: bool| (OXM_CLASS_OPENFLOW_BASIC, f, m);
        match self {
            OxmField::InPort(_) => basic(0, false),
            OxmField::Metadata(_, m) => basic(2, m.is_some()),
            OxmField::EthDst(_, m) => basic(3, m.is_some()),
            OxmField::EthSrc(_, m) => basic(4, m.is_some()),
            OxmField::EthType(_) => basic(5, false),
            OxmField::VlanVid(_, m) => basic(6, m.is_some()),
            OxmField::VlanPcp(_) => basic(7, false),
            OxmField::IpDscp(_) => basic(8, false),
            OxmField::IpProto(_) => basic(10, false),
            OxmField::Ipv4Src(_, m) => basic(11, m.is_some()),
            OxmField::Ipv4Dst(_, m) => basic(12, m.is_some()),
            OxmField::TcpSrc(_) => basic(13, false),
            OxmField::TcpDst(_) => basic(14, false),
            OxmField::UdpSrc(_) => basic(15, false),
            OxmField::UdpDst(_) => basic(16, false),
            OxmField::Unknown {
                class, field, has_mask, ..
            } => (*class, *field, *has_mask),
        }
    }

    /// Payload bytes (value and mask).
    pub fn payload_len(&self) -> usize {
        match self {
            OxmField::Unknown { payload, .. } => payload.len(),
            _ => {
                let (_, field, m) = self.header();
                basic_shape(field).map_or(0, |(n, _)| if m { 2 * n } else { n })
            }
        }
    }

    /// Bytes this field emits (4-byte header and payload).
    #[inline]
    pub fn buffer_len(&self) -> usize {
        4 + self.payload_len()
    }

    /// Reads one TLV from the start of `b`; returns it and its length.
    pub fn parse(b: &[u8]) -> Result<(OxmField, usize)> {
        need(b, 4)?;
        let class = read_u16(b, 0);
        let field = b[2] >> 1;
        let has_mask = b[2] & 1 != 0;
        let len = usize::from(b[3]);
        need(b, 4 + len)?;
        let p = &b[4..4 + len];
        let shape = (class == OXM_CLASS_OPENFLOW_BASIC)
            .then(|| basic_shape(field))
            .flatten();
        let Some((n, maskable)) = shape else {
            let f = OxmField::Unknown {
                class,
                field,
                has_mask,
                payload: p.to_vec(),
            };
            return Ok((f, 4 + len));
        };
        if has_mask && !maskable {
            return Err(Error::Malformed("oxm mask on a field that has none"));
        }
        if len != if has_mask { 2 * n } else { n } {
            return Err(Error::Malformed("oxm field length"));
        }
        let m = &p[n..];
        let mac = |s: &[u8]| MacAddr::from_bytes(s);
        let f = match field {
            0 => OxmField::InPort(read_u32(p, 0)),
            2 => {
                let r = |s: &[u8]| u64::from_be_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]);
                OxmField::Metadata(r(p), has_mask.then(|| r(m)))
            }
            3 => OxmField::EthDst(mac(p), has_mask.then(|| mac(m))),
            4 => OxmField::EthSrc(mac(p), has_mask.then(|| mac(m))),
            5 => OxmField::EthType(read_u16(p, 0)),
            6 => OxmField::VlanVid(read_u16(p, 0), has_mask.then(|| read_u16(m, 0))),
            7 => OxmField::VlanPcp(p[0]),
            8 => OxmField::IpDscp(p[0]),
            10 => OxmField::IpProto(p[0]),
            11 => OxmField::Ipv4Src(ipv4_at(p, 0..4), has_mask.then(|| ipv4_at(m, 0..4))),
            12 => OxmField::Ipv4Dst(ipv4_at(p, 0..4), has_mask.then(|| ipv4_at(m, 0..4))),
            13 => OxmField::TcpSrc(read_u16(p, 0)),
            14 => OxmField::TcpDst(read_u16(p, 0)),
            15 => OxmField::UdpSrc(read_u16(p, 0)),
            _ => OxmField::UdpDst(read_u16(p, 0)),
        };
        Ok((f, 4 + len))
    }

    /// Writes the TLV into the start of `buf`.
    #[inline]
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let len = u8::try_from(self.payload_len()).map_err(|_| Error::Malformed("oxm payload too long"))?;
        need(buf, self.buffer_len())?;
        let (class, field, has_mask) = self.header();
        if field > 0x7f {
            return Err(Error::Malformed("oxm field number above 127"));
        }
        write_u16(buf, 0, class);
        buf[2] = field << 1 | u8::from(has_mask);
        buf[3] = len;
        let p = &mut buf[4..4 + usize::from(len)];
        fn put(p: &mut [u8], v: &[u8], m: Option<&[u8]>) {
            p[..v.len()].copy_from_slice(v);
            if let Some(m) = m {
                p[v.len()..2 * v.len()].copy_from_slice(m);
            }
        }
        match self {
            OxmField::InPort(v) => put(p, &v.to_be_bytes(), None),
            OxmField::Metadata(v, m) => put(p, &v.to_be_bytes(), m.map(u64::to_be_bytes).as_ref().map(|a| &a[..])),
            OxmField::EthDst(v, m) | OxmField::EthSrc(v, m) => put(p, &v.0, m.as_ref().map(|a| &a.0[..])),
            OxmField::EthType(v) | OxmField::TcpSrc(v) | OxmField::TcpDst(v) | OxmField::UdpSrc(v) => {
                put(p, &v.to_be_bytes(), None)
            }
            OxmField::UdpDst(v) => put(p, &v.to_be_bytes(), None),
            OxmField::VlanVid(v, m) => put(p, &v.to_be_bytes(), m.map(u16::to_be_bytes).as_ref().map(|a| &a[..])),
            OxmField::VlanPcp(v) | OxmField::IpDscp(v) | OxmField::IpProto(v) => put(p, &[*v], None),
            OxmField::Ipv4Src(v, m) | OxmField::Ipv4Dst(v, m) => {
                put(p, &v.octets(), m.map(|a| a.octets()).as_ref().map(|a| &a[..]))
            }
            OxmField::Unknown { payload, .. } => put(p, payload, None),
        }
        Ok(())
    }
}

/// Reads a run of OXM TLVs filling `b` exactly (as in a set-field action or an OXM match body).
pub fn parse_oxm_list(mut b: &[u8]) -> Result<Vec<OxmField>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let (f, used) = OxmField::parse(b)?;
        out.push(f);
        b = &b[used..];
    }
    Ok(out)
}

/// An OpenFlow 1.3 OXM match (`ofp_match` with type `OFPMT_OXM`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct OxmMatch {
    /// The fields, in wire order; an empty list matches everything.
    pub fields: Vec<OxmField>,
}

impl OxmMatch {
    /// Reads a match from the start of `b`; returns it and the bytes it takes, padding included.
    pub fn parse(b: &[u8]) -> Result<(OxmMatch, usize)> {
        need(b, 4)?;
        if read_u16(b, 0) != MATCH_TYPE_OXM {
            return Err(Error::Unsupported("ofp_match type other than OXM"));
        }
        let len = usize::from(read_u16(b, 2));
        if len < 4 {
            return Err(Error::Malformed("ofp_match length below 4"));
        }
        let padded = len.div_ceil(8) * 8;
        need(b, padded)?;
        let fields = parse_oxm_list(&b[4..len])?;
        Ok((OxmMatch { fields }, padded))
    }
    /// The length field: header and fields, padding excluded.
    pub fn unpadded_len(&self) -> usize {
        4 + self.fields.iter().map(OxmField::buffer_len).sum::<usize>()
    }
    /// Bytes this match emits, padding included.
    #[inline]
    pub fn buffer_len(&self) -> usize {
        self.unpadded_len().div_ceil(8) * 8
    }
    /// Writes the match and its padding into the start of `buf`.
    #[inline]
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let len = u16::try_from(self.unpadded_len()).map_err(|_| Error::Malformed("ofp_match too long"))?;
        let total = self.buffer_len();
        need(buf, total)?;
        buf[..total].fill(0);
        write_u16(buf, 0, MATCH_TYPE_OXM);
        write_u16(buf, 2, len);
        let mut at = 4;
        for f in &self.fields {
            f.emit(&mut buf[at..])?;
            at += f.buffer_len();
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn match10_bytes() {
        // in_port 3, dl_type IPv4, nw_proto TCP, nw_dst 10.0.0.0/24, tp_dst 80; rest wildcarded.
        let w = wildcards::ALL
            & !(wildcards::IN_PORT | wildcards::DL_TYPE | wildcards::NW_PROTO | wildcards::TP_DST)
            & !wildcards::NW_DST_MASK
            | (8 << wildcards::NW_DST_SHIFT);
        let m = Match10 {
            wildcards: w,
            in_port: 3,
            dl_type: 0x0800,
            nw_proto: 6,
            nw_dst: Ipv4Addr::new(10, 0, 0, 0),
            tp_dst: 80,
            nw_src: Ipv4Addr::UNSPECIFIED,
            ..Match10::default()
        };
        assert_eq!(w, 0x0032_3f4e);
        let expected: [u8; 40] = [
            0x00, 0x32, 0x3f, 0x4e, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0x00, 0, 6, 0, 0,
            0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 80,
        ];
        let mut out = [0xffu8; 40];
        m.emit(&mut out).unwrap();
        assert_eq!(out, expected);
        let p = Match10::parse(&expected).unwrap();
        assert_eq!(p, m);
        assert_eq!(p.nw_dst_prefix_len(), 24);
        assert_eq!(p.nw_src_prefix_len(), 0);
        assert_eq!(Match10::parse(&expected[..39]).unwrap_err(), Error::Truncated);
        assert_eq!(Match10::any().wildcards, 0x003f_ffff);
    }

    #[test]
    fn oxm_match_bytes() {
        // in_port 1, eth_type IPv4, ipv4_dst 10.1.0.0/16: 4 + 8 + 6 + 12 = 30, padded to 32.
        let m = OxmMatch {
            fields: vec![
                OxmField::InPort(1),
                OxmField::EthType(0x0800),
                OxmField::Ipv4Dst(Ipv4Addr::new(10, 1, 0, 0), Some(Ipv4Addr::new(255, 255, 0, 0))),
            ],
        };
        let expected: [u8; 32] = [
            0x00, 0x01, 0x00, 0x1e, // type OXM, length 30
            0x80, 0x00, 0x00, 0x04, 0, 0, 0, 1, // in_port
            0x80, 0x00, 0x0a, 0x02, 0x08, 0x00, // eth_type
            0x80, 0x00, 0x19, 0x08, 10, 1, 0, 0, 255, 255, 0, 0, // ipv4_dst/mask
            0, 0, // padding
        ];
        assert_eq!(m.buffer_len(), 32);
        let mut out = [0xffu8; 32];
        m.emit(&mut out).unwrap();
        assert_eq!(out, expected);
        assert_eq!(OxmMatch::parse(&expected).unwrap(), (m, 32));
        // The empty match is 4 bytes plus 4 of padding.
        let mut out = [0xffu8; 8];
        OxmMatch::default().emit(&mut out).unwrap();
        assert_eq!(out, [0, 1, 0, 4, 0, 0, 0, 0]);
        // Missing padding, a truncated TLV, a bad length and a mask where none is allowed.
        assert_eq!(OxmMatch::parse(&expected[..31]).unwrap_err(), Error::Truncated);
        let mut bad = expected;
        bad[3] = 0x1d;
        assert_eq!(OxmMatch::parse(&bad).unwrap_err(), Error::Truncated);
        let mut bad = expected;
        bad[15] = 1;
        bad[3] = 0x1d;
        assert!(matches!(OxmMatch::parse(&bad), Err(Error::Malformed(_))));
        assert!(matches!(
            OxmField::parse(&[0x80, 0, 0x01, 8, 0, 0, 0, 1, 0, 0, 0, 1]),
            Err(Error::Malformed(_))
        ));
    }

    #[test]
    fn unknown_oxm_is_kept() {
        // ipv6_src (26) and an experimenter-class TLV.
        let b = [0x80, 0x00, 26 << 1, 2, 0xfe, 0x80, 0xff, 0xff, 0x02, 3, 1, 2, 3];
        let l = parse_oxm_list(&b).unwrap();
        assert_eq!(
            l[0],
            OxmField::Unknown {
                class: 0x8000,
                field: 26,
                has_mask: false,
                payload: vec![0xfe, 0x80]
            }
        );
        assert_eq!(
            l[1],
            OxmField::Unknown {
                class: 0xffff,
                field: 1,
                has_mask: false,
                payload: vec![1, 2, 3]
            }
        );
        let mut out = vec![0u8; b.len()];
        l[0].emit(&mut out).unwrap();
        l[1].emit(&mut out[6..]).unwrap();
        assert_eq!(out, b);
    }

    pub(crate) fn any_match10() -> impl Strategy<Value = Match10> {
        (
            any::<(u32, u16, [u8; 6], [u8; 6], u16, u8, u16)>(),
            any::<(u8, u8, [u8; 4], [u8; 4], u16, u16)>(),
        )
            .prop_map(|((w, ip, s, d, vl, pcp, ty), (tos, pr, ns, nd, ts, td))| Match10 {
                wildcards: w,
                in_port: ip,
                dl_src: MacAddr(s),
                dl_dst: MacAddr(d),
                dl_vlan: vl,
                dl_vlan_pcp: pcp,
                dl_type: ty,
                nw_tos: tos,
                nw_proto: pr,
                nw_src: ns.into(),
                nw_dst: nd.into(),
                tp_src: ts,
                tp_dst: td,
            })
    }

    pub(crate) fn any_oxm_field() -> impl Strategy<Value = OxmField> {
        let mac = || any::<[u8; 6]>().prop_map(MacAddr);
        let ip = || any::<[u8; 4]>().prop_map(Ipv4Addr::from);
        prop_oneof![
            any::<u32>().prop_map(OxmField::InPort),
            (any::<u64>(), any::<Option<u64>>()).prop_map(|(v, m)| OxmField::Metadata(v, m)),
            (mac(), proptest::option::of(mac())).prop_map(|(v, m)| OxmField::EthDst(v, m)),
            (mac(), proptest::option::of(mac())).prop_map(|(v, m)| OxmField::EthSrc(v, m)),
            any::<u16>().prop_map(OxmField::EthType),
            (any::<u16>(), any::<Option<u16>>()).prop_map(|(v, m)| OxmField::VlanVid(v, m)),
            any::<u8>().prop_map(OxmField::VlanPcp),
            any::<u8>().prop_map(OxmField::IpDscp),
            any::<u8>().prop_map(OxmField::IpProto),
            (ip(), proptest::option::of(ip())).prop_map(|(v, m)| OxmField::Ipv4Src(v, m)),
            (ip(), proptest::option::of(ip())).prop_map(|(v, m)| OxmField::Ipv4Dst(v, m)),
            any::<u16>().prop_map(OxmField::TcpSrc),
            any::<u16>().prop_map(OxmField::TcpDst),
            any::<u16>().prop_map(OxmField::UdpSrc),
            any::<u16>().prop_map(OxmField::UdpDst),
            (
                any::<u16>(),
                0u8..128,
                any::<bool>(),
                proptest::collection::vec(any::<u8>(), 0..10)
            )
                .prop_filter("not a modelled basic field", |(c, f, _, _)| {
                    *c != OXM_CLASS_OPENFLOW_BASIC || basic_shape(*f).is_none()
                })
                .prop_map(|(class, field, has_mask, payload)| OxmField::Unknown {
                    class,
                    field,
                    has_mask,
                    payload
                }),
        ]
    }

    pub(crate) fn any_oxm_match() -> impl Strategy<Value = OxmMatch> {
        proptest::collection::vec(any_oxm_field(), 0..5).prop_map(|fields| OxmMatch { fields })
    }

    proptest! {
        #[test]
        fn match10_round_trip(m in any_match10()) {
            let mut buf = [0u8; 40];
            m.emit(&mut buf).unwrap();
            prop_assert_eq!(Match10::parse(&buf).unwrap(), m);
        }

        #[test]
        fn oxm_round_trip(m in any_oxm_match()) {
            let mut buf = vec![0u8; m.buffer_len()];
            m.emit(&mut buf).unwrap();
            prop_assert_eq!(OxmMatch::parse(&buf).unwrap(), (m, buf.len()));
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..96)) {
            let _ = Match10::parse(&data);
            if let Ok((m, used)) = OxmMatch::parse(&data) {
                prop_assert!(used <= data.len());
                let mut buf = vec![0u8; m.buffer_len()];
                m.emit(&mut buf).unwrap();
                prop_assert_eq!(OxmMatch::parse(&buf).unwrap().0, m);
            }
            let _ = parse_oxm_list(&data);
        }
    }
}
