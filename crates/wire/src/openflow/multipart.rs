//! Statistics (OpenFlow 1.0 stats_request / stats_reply) and multipart (OpenFlow 1.3
//! multipart_request / multipart_reply) bodies.
//!
//! Both start with type (2) and flags (2); 1.3 adds 4 bytes of padding. Desc, flow, aggregate, port
//! stats, table and (1.3) port_desc bodies are modelled; every other type keeps its body as bytes
//! ([`MultipartRequestBody::Other`] / [`MultipartReplyBody::Other`]).

use super::action::{
    actions_len, emit_actions, emit_instructions, instructions_len, parse_actions, parse_instructions,
};
use super::action::{Action, Instruction};
use super::flow::{FlowMatch, Port13, PORT13_LEN};
use super::header::MultipartType;
use super::{need, read_u64, write_u64, Version};
use crate::field::{read_u16, read_u32, write_u16, write_u32};
use crate::{Error, Result};

/// `OFPSF_REPLY_MORE` / `OFPMPF_REPLY_MORE`: more replies follow.
pub const FLAG_MORE: u16 = 1;

fn prefix_len(version: Version) -> usize {
    if version == Version::V1_0 {
        4
    } else {
        8
    }
}

/// The modelled type for a code in `version`, if any.
fn modelled(version: Version, kind: u16) -> Option<MultipartType> {
    use MultipartType::*;
    match MultipartType::from_code(kind)? {
        t @ (Desc | Flow | Aggregate | PortStats | Table) => Some(t),
        PortDesc if version != Version::V1_0 => Some(PortDesc),
        _ => None,
    }
}

fn port16(p: u32) -> Result<u16> {
    u16::try_from(p).map_err(|_| Error::Malformed("openflow 1.0 port above 0xffff"))
}

/// A flow stats request.
///
/// 1.0: match (40), table_id, pad, out_port (2). 1.3: table_id, pad (3), out_port, out_group,
/// pad (4), cookie, cookie_mask, match.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FlowStatsRequest {
    /// Table to read (0xff: all).
    pub table_id: u8,
    /// Only flows outputting to this port (16 bits in 1.0).
    pub out_port: u32,
    /// Only flows outputting to this group (1.3 only).
    pub out_group: u32,
    /// Cookie value to match (1.3 only).
    pub cookie: u64,
    /// Cookie bits to match (1.3 only).
    pub cookie_mask: u64,
    /// Fields to match.
    pub matches: FlowMatch,
}

impl FlowStatsRequest {
    fn parse(version: Version, b: &[u8]) -> Result<FlowStatsRequest> {
        if version == Version::V1_0 {
            need(b, 44)?;
            if b.len() != 44 {
                return Err(Error::Malformed("flow stats request length"));
            }
            let (matches, _) = FlowMatch::parse(version, b)?;
            return Ok(FlowStatsRequest {
                matches,
                table_id: b[40],
                out_port: u32::from(read_u16(b, 42)),
                ..FlowStatsRequest::default()
            });
        }
        need(b, 32)?;
        let (matches, used) = FlowMatch::parse(version, &b[32..])?;
        if b.len() != 32 + used {
            return Err(Error::Malformed("flow stats request length"));
        }
        Ok(FlowStatsRequest {
            table_id: b[0],
            out_port: read_u32(b, 4),
            out_group: read_u32(b, 8),
            cookie: read_u64(b, 16),
            cookie_mask: read_u64(b, 24),
            matches,
        })
    }
    fn buffer_len(&self, version: Version) -> usize {
        if version == Version::V1_0 {
            44
        } else {
            32 + self.matches.buffer_len()
        }
    }
    fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len(version);
        need(buf, len)?;
        buf[..len].fill(0);
        if version == Version::V1_0 {
            self.matches.emit(version, buf)?;
            buf[40] = self.table_id;
            write_u16(buf, 42, port16(self.out_port)?);
            return Ok(());
        }
        buf[0] = self.table_id;
        write_u32(buf, 4, self.out_port);
        write_u32(buf, 8, self.out_group);
        write_u64(buf, 16, self.cookie);
        write_u64(buf, 24, self.cookie_mask);
        self.matches.emit(version, &mut buf[32..])
    }
}

/// A multipart (stats) request body.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MultipartRequestBody {
    /// Switch description (empty body).
    Desc,
    /// Individual flow statistics.
    Flow(FlowStatsRequest),
    /// Aggregate flow statistics (same request body as flow).
    Aggregate(FlowStatsRequest),
    /// Port statistics for one port (`OFPP_ANY` / `OFPP_NONE` for all; 16 bits in 1.0).
    PortStats(u32),
    /// Table statistics (empty body).
    Table,
    /// Port descriptions (1.3 only; empty body).
    PortDesc,
    /// Any other type with its body bytes.
    Other {
        /// The `OFPST_*` / `OFPMP_*` type.
        kind: u16,
        /// Body bytes.
        body: Vec<u8>,
    },
}

/// A stats_request (1.0) or multipart_request (1.3) body.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MultipartRequest {
    /// Flags (none defined for requests in 1.0; `OFPMPF_REQ_MORE` in 1.3).
    pub flags: u16,
    /// The typed body.
    pub body: MultipartRequestBody,
}

impl MultipartRequest {
    /// The type code.
    pub fn kind(&self) -> u16 {
        match &self.body {
            MultipartRequestBody::Desc => MultipartType::Desc.code(),
            MultipartRequestBody::Flow(_) => MultipartType::Flow.code(),
            MultipartRequestBody::PortStats(_) => MultipartType::PortStats.code(),
            MultipartRequestBody::Aggregate(_) => MultipartType::Aggregate.code(),
            MultipartRequestBody::Table => MultipartType::Table.code(),
            MultipartRequestBody::PortDesc => MultipartType::PortDesc.code(),
            MultipartRequestBody::Other { kind, .. } => *kind,
        }
    }
    /// Reads the body for `version`.
    pub fn parse(version: Version, b: &[u8]) -> Result<MultipartRequest> {
        let pre = prefix_len(version);
        need(b, pre)?;
        let kind = read_u16(b, 0);
        let rest = &b[pre..];
        let body = match modelled(version, kind) {
            Some(MultipartType::Desc | MultipartType::Table | MultipartType::PortDesc) if !rest.is_empty() => {
                return Err(Error::Malformed("body on a desc, table or port_desc request"))
            }
            Some(MultipartType::Desc) => MultipartRequestBody::Desc,
            Some(MultipartType::Table) => MultipartRequestBody::Table,
            Some(MultipartType::PortDesc) => MultipartRequestBody::PortDesc,
            Some(MultipartType::Flow) => MultipartRequestBody::Flow(FlowStatsRequest::parse(version, rest)?),
            Some(MultipartType::Aggregate) => MultipartRequestBody::Aggregate(FlowStatsRequest::parse(version, rest)?),
            Some(MultipartType::PortStats) => {
                need(rest, 8)?;
                if rest.len() != 8 {
                    return Err(Error::Malformed("port stats request length"));
                }
                MultipartRequestBody::PortStats(if version == Version::V1_0 {
                    u32::from(read_u16(rest, 0))
                } else {
                    read_u32(rest, 0)
                })
            }
            _ => MultipartRequestBody::Other {
                kind,
                body: rest.to_vec(),
            },
        };
        Ok(MultipartRequest {
            flags: read_u16(b, 2),
            body,
        })
    }
    /// Body bytes for `version`.
    pub fn buffer_len(&self, version: Version) -> usize {
        prefix_len(version)
            + match &self.body {
                MultipartRequestBody::Desc | MultipartRequestBody::Table | MultipartRequestBody::PortDesc => 0,
                MultipartRequestBody::Flow(f) | MultipartRequestBody::Aggregate(f) => f.buffer_len(version),
                MultipartRequestBody::PortStats(_) => 8,
                MultipartRequestBody::Other { body, .. } => body.len(),
            }
    }
    /// Writes the body for `version`.
    pub fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len(version);
        let pre = prefix_len(version);
        need(buf, len)?;
        if let MultipartRequestBody::Other { kind, .. } = &self.body {
            if modelled(version, *kind).is_some() {
                return Err(Error::Malformed("opaque multipart body of a modelled type"));
            }
        }
        buf[..pre].fill(0);
        write_u16(buf, 0, self.kind());
        write_u16(buf, 2, self.flags);
        if self.body == MultipartRequestBody::PortDesc && version == Version::V1_0 {
            return Err(Error::Unsupported("port_desc in openflow 1.0"));
        }
        let rest = &mut buf[pre..len];
        match &self.body {
            MultipartRequestBody::Desc | MultipartRequestBody::Table | MultipartRequestBody::PortDesc => Ok(()),
            MultipartRequestBody::Flow(f) | MultipartRequestBody::Aggregate(f) => f.emit(version, rest),
            MultipartRequestBody::PortStats(p) => {
                rest.fill(0);
                if version == Version::V1_0 {
                    write_u16(rest, 0, port16(*p)?);
                } else {
                    write_u32(rest, 0, *p);
                }
                Ok(())
            }
            MultipartRequestBody::Other { body, .. } => {
                rest.copy_from_slice(body);
                Ok(())
            }
        }
    }
}

/// Length of a desc reply body.
pub const DESC_LEN: usize = 1056;

/// Switch description (`ofp_desc_stats` / `ofp_desc`): NUL-padded ASCII fields, kept as the bytes
/// before the first NUL.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DescStats {
    /// Manufacturer (256).
    pub mfr_desc: Vec<u8>,
    /// Hardware (256).
    pub hw_desc: Vec<u8>,
    /// Software (256).
    pub sw_desc: Vec<u8>,
    /// Serial number (32).
    pub serial_num: Vec<u8>,
    /// Datapath description (256).
    pub dp_desc: Vec<u8>,
}

const DESC_FIELDS: [(usize, usize); 5] = [(0, 256), (256, 256), (512, 256), (768, 32), (800, 256)];

impl DescStats {
    fn fields(&self) -> [&Vec<u8>; 5] {
        [
            &self.mfr_desc,
            &self.hw_desc,
            &self.sw_desc,
            &self.serial_num,
            &self.dp_desc,
        ]
    }
    fn parse(b: &[u8]) -> Result<DescStats> {
        need(b, DESC_LEN)?;
        if b.len() != DESC_LEN {
            return Err(Error::Malformed("desc reply length"));
        }
        let s = |(at, n): (usize, usize)| {
            let f = &b[at..at + n];
            f[..f.iter().position(|&c| c == 0).unwrap_or(n)].to_vec()
        };
        Ok(DescStats {
            mfr_desc: s(DESC_FIELDS[0]),
            hw_desc: s(DESC_FIELDS[1]),
            sw_desc: s(DESC_FIELDS[2]),
            serial_num: s(DESC_FIELDS[3]),
            dp_desc: s(DESC_FIELDS[4]),
        })
    }
    fn emit(&self, buf: &mut [u8]) -> Result<()> {
        need(buf, DESC_LEN)?;
        buf[..DESC_LEN].fill(0);
        for (v, (at, n)) in self.fields().into_iter().zip(DESC_FIELDS) {
            if v.len() > n || v.contains(&0) {
                return Err(Error::Malformed("desc field too long or holding a NUL"));
            }
            buf[at..at + v.len()].copy_from_slice(v);
        }
        Ok(())
    }
}

/// One flow's statistics (`ofp_flow_stats`).
///
/// 1.0: length, table_id, pad, match (40), duration_sec, duration_nsec, priority, idle_timeout,
/// hard_timeout, pad (6), cookie, packet_count, byte_count, actions. 1.3: length, table_id, pad,
/// duration_sec, duration_nsec, priority, idle_timeout, hard_timeout, flags, pad (4), cookie,
/// packet_count, byte_count, match, instructions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FlowStats {
    /// Table id.
    pub table_id: u8,
    /// Seconds alive.
    pub duration_sec: u32,
    /// Nanoseconds beyond `duration_sec`.
    pub duration_nsec: u32,
    /// Priority.
    pub priority: u16,
    /// Idle timeout.
    pub idle_timeout: u16,
    /// Hard timeout.
    pub hard_timeout: u16,
    /// `OFPFF_*` flags (1.3 only).
    pub flags: u16,
    /// Cookie.
    pub cookie: u64,
    /// Packets matched.
    pub packet_count: u64,
    /// Bytes matched.
    pub byte_count: u64,
    /// The match.
    pub matches: FlowMatch,
    /// Actions (1.0 only).
    pub actions: Vec<Action>,
    /// Instructions (1.3 only).
    pub instructions: Vec<Instruction>,
}

impl FlowStats {
    fn parse(version: Version, b: &[u8]) -> Result<(FlowStats, usize)> {
        need(b, 4)?;
        let len = usize::from(read_u16(b, 0));
        let fixed = if version == Version::V1_0 { 88 } else { 48 };
        if len < fixed {
            return Err(Error::Malformed("flow stats length"));
        }
        need(b, len)?;
        let b = &b[..len];
        if version == Version::V1_0 {
            let (matches, _) = FlowMatch::parse(version, &b[4..])?;
            let s = FlowStats {
                table_id: b[2],
                matches,
                duration_sec: read_u32(b, 44),
                duration_nsec: read_u32(b, 48),
                priority: read_u16(b, 52),
                idle_timeout: read_u16(b, 54),
                hard_timeout: read_u16(b, 56),
                cookie: read_u64(b, 64),
                packet_count: read_u64(b, 72),
                byte_count: read_u64(b, 80),
                actions: parse_actions(version, &b[88..])?,
                ..FlowStats::default()
            };
            return Ok((s, len));
        }
        let (matches, used) = FlowMatch::parse(version, &b[48..])?;
        let s = FlowStats {
            table_id: b[2],
            duration_sec: read_u32(b, 4),
            duration_nsec: read_u32(b, 8),
            priority: read_u16(b, 12),
            idle_timeout: read_u16(b, 14),
            hard_timeout: read_u16(b, 16),
            flags: read_u16(b, 18),
            cookie: read_u64(b, 24),
            packet_count: read_u64(b, 32),
            byte_count: read_u64(b, 40),
            matches,
            actions: Vec::new(),
            instructions: parse_instructions(&b[48 + used..])?,
        };
        Ok((s, len))
    }
    fn buffer_len(&self, version: Version) -> usize {
        if version == Version::V1_0 {
            88 + actions_len(version, &self.actions)
        } else {
            48 + self.matches.buffer_len() + instructions_len(&self.instructions)
        }
    }
    fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len(version);
        let len16 = u16::try_from(len).map_err(|_| Error::Malformed("flow stats too long"))?;
        need(buf, len)?;
        buf[..len].fill(0);
        write_u16(buf, 0, len16);
        buf[2] = self.table_id;
        if version == Version::V1_0 {
            if !self.instructions.is_empty() {
                return Err(Error::Malformed("instructions in openflow 1.0 flow stats"));
            }
            self.matches.emit(version, &mut buf[4..])?;
            write_u32(buf, 44, self.duration_sec);
            write_u32(buf, 48, self.duration_nsec);
            write_u16(buf, 52, self.priority);
            write_u16(buf, 54, self.idle_timeout);
            write_u16(buf, 56, self.hard_timeout);
            write_u64(buf, 64, self.cookie);
            write_u64(buf, 72, self.packet_count);
            write_u64(buf, 80, self.byte_count);
            return emit_actions(version, &self.actions, &mut buf[88..len]);
        }
        if !self.actions.is_empty() {
            return Err(Error::Malformed(
                "actions outside instructions in openflow 1.3 flow stats",
            ));
        }
        write_u32(buf, 4, self.duration_sec);
        write_u32(buf, 8, self.duration_nsec);
        write_u16(buf, 12, self.priority);
        write_u16(buf, 14, self.idle_timeout);
        write_u16(buf, 16, self.hard_timeout);
        write_u16(buf, 18, self.flags);
        write_u64(buf, 24, self.cookie);
        write_u64(buf, 32, self.packet_count);
        write_u64(buf, 40, self.byte_count);
        self.matches.emit(version, &mut buf[48..])?;
        emit_instructions(&self.instructions, &mut buf[48 + self.matches.buffer_len()..len])
    }
}

/// One port's counters (`ofp_port_stats`): 1.0 is 104 bytes (16-bit port), 1.3 is 112 (32-bit
/// port, plus the duration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PortStats {
    /// Port number (16 bits in 1.0).
    pub port_no: u32,
    /// rx_packets, tx_packets, rx_bytes, tx_bytes, rx_dropped, tx_dropped, rx_errors, tx_errors,
    /// rx_frame_err, rx_over_err, rx_crc_err, collisions, in wire order.
    pub counters: [u64; 12],
    /// Seconds the port has been alive (1.3 only).
    pub duration_sec: u32,
    /// Nanoseconds beyond `duration_sec` (1.3 only).
    pub duration_nsec: u32,
}

impl PortStats {
    /// Index of rx_packets in [`PortStats::counters`].
    pub const RX_PACKETS: usize = 0;
    /// Index of tx_packets.
    pub const TX_PACKETS: usize = 1;
    /// Index of rx_bytes.
    pub const RX_BYTES: usize = 2;
    /// Index of tx_bytes.
    pub const TX_BYTES: usize = 3;

    fn len(version: Version) -> usize {
        if version == Version::V1_0 {
            104
        } else {
            112
        }
    }
    fn parse(version: Version, b: &[u8]) -> Result<PortStats> {
        need(b, Self::len(version))?;
        let mut counters = [0u64; 12];
        for (i, c) in counters.iter_mut().enumerate() {
            *c = read_u64(b, 8 + 8 * i);
        }
        Ok(if version == Version::V1_0 {
            PortStats {
                port_no: u32::from(read_u16(b, 0)),
                counters,
                ..PortStats::default()
            }
        } else {
            PortStats {
                port_no: read_u32(b, 0),
                counters,
                duration_sec: read_u32(b, 104),
                duration_nsec: read_u32(b, 108),
            }
        })
    }
    fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        let len = Self::len(version);
        need(buf, len)?;
        buf[..len].fill(0);
        if version == Version::V1_0 {
            write_u16(buf, 0, port16(self.port_no)?);
        } else {
            write_u32(buf, 0, self.port_no);
            write_u32(buf, 104, self.duration_sec);
            write_u32(buf, 108, self.duration_nsec);
        }
        for (i, c) in self.counters.iter().enumerate() {
            write_u64(buf, 8 + 8 * i, *c);
        }
        Ok(())
    }
}

/// One table's statistics (`ofp_table_stats`): 1.0 is 64 bytes (with name, wildcards and
/// max_entries), 1.3 is 24.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TableStats {
    /// Table id.
    pub table_id: u8,
    /// Name, NUL-padded (1.0 only).
    pub name: [u8; 32],
    /// Wildcards the table supports (1.0 only).
    pub wildcards: u32,
    /// Maximum entries (1.0 only).
    pub max_entries: u32,
    /// Active entries.
    pub active_count: u32,
    /// Packets looked up.
    pub lookup_count: u64,
    /// Packets that hit.
    pub matched_count: u64,
}

impl TableStats {
    fn len(version: Version) -> usize {
        if version == Version::V1_0 {
            64
        } else {
            24
        }
    }
    fn parse(version: Version, b: &[u8]) -> Result<TableStats> {
        need(b, Self::len(version))?;
        if version == Version::V1_0 {
            let mut name = [0u8; 32];
            name.copy_from_slice(&b[4..36]);
            return Ok(TableStats {
                table_id: b[0],
                name,
                wildcards: read_u32(b, 36),
                max_entries: read_u32(b, 40),
                active_count: read_u32(b, 44),
                lookup_count: read_u64(b, 48),
                matched_count: read_u64(b, 56),
            });
        }
        Ok(TableStats {
            table_id: b[0],
            active_count: read_u32(b, 4),
            lookup_count: read_u64(b, 8),
            matched_count: read_u64(b, 16),
            ..TableStats::default()
        })
    }
    fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        let len = Self::len(version);
        need(buf, len)?;
        buf[..len].fill(0);
        buf[0] = self.table_id;
        if version == Version::V1_0 {
            buf[4..36].copy_from_slice(&self.name);
            write_u32(buf, 36, self.wildcards);
            write_u32(buf, 40, self.max_entries);
            write_u32(buf, 44, self.active_count);
            write_u64(buf, 48, self.lookup_count);
            write_u64(buf, 56, self.matched_count);
        } else {
            write_u32(buf, 4, self.active_count);
            write_u64(buf, 8, self.lookup_count);
            write_u64(buf, 16, self.matched_count);
        }
        Ok(())
    }
}

/// Length of an aggregate stats reply body.
pub const AGGREGATE_LEN: usize = 24;

/// Aggregate flow statistics (`ofp_aggregate_stats_reply`): packet_count, byte_count, flow_count,
/// pad (4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AggregateStats {
    /// Packets matched.
    pub packet_count: u64,
    /// Bytes matched.
    pub byte_count: u64,
    /// Flows matched.
    pub flow_count: u32,
}

impl AggregateStats {
    fn parse(b: &[u8]) -> Result<AggregateStats> {
        need(b, AGGREGATE_LEN)?;
        if b.len() != AGGREGATE_LEN {
            return Err(Error::Malformed("aggregate stats length"));
        }
        Ok(AggregateStats {
            packet_count: read_u64(b, 0),
            byte_count: read_u64(b, 8),
            flow_count: read_u32(b, 16),
        })
    }
    fn emit(&self, buf: &mut [u8]) -> Result<()> {
        need(buf, AGGREGATE_LEN)?;
        buf[..AGGREGATE_LEN].fill(0);
        write_u64(buf, 0, self.packet_count);
        write_u64(buf, 8, self.byte_count);
        write_u32(buf, 16, self.flow_count);
        Ok(())
    }
}

/// A multipart (stats) reply body.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MultipartReplyBody {
    /// Switch description.
    Desc(DescStats),
    /// Flow statistics.
    Flow(Vec<FlowStats>),
    /// Aggregate flow statistics.
    Aggregate(AggregateStats),
    /// Port statistics.
    PortStats(Vec<PortStats>),
    /// Table statistics.
    Table(Vec<TableStats>),
    /// Port descriptions (1.3 only).
    PortDesc(Vec<Port13>),
    /// Any other type with its body bytes.
    Other {
        /// The `OFPST_*` / `OFPMP_*` type.
        kind: u16,
        /// Body bytes.
        body: Vec<u8>,
    },
}

/// A stats_reply (1.0) or multipart_reply (1.3) body.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MultipartReply {
    /// Flags ([`FLAG_MORE`]: more replies follow).
    pub flags: u16,
    /// The typed body.
    pub body: MultipartReplyBody,
}

fn fixed_array<R>(b: &[u8], n: usize, f: impl Fn(&[u8]) -> Result<R>) -> Result<Vec<R>> {
    if !b.len().is_multiple_of(n) {
        return Err(Error::Malformed("stats array length"));
    }
    b.chunks_exact(n).map(f).collect()
}

impl MultipartReply {
    /// The type code.
    pub fn kind(&self) -> u16 {
        match &self.body {
            MultipartReplyBody::Desc(_) => MultipartType::Desc.code(),
            MultipartReplyBody::Flow(_) => MultipartType::Flow.code(),
            MultipartReplyBody::PortStats(_) => MultipartType::PortStats.code(),
            MultipartReplyBody::Table(_) => MultipartType::Table.code(),
            MultipartReplyBody::Aggregate(_) => MultipartType::Aggregate.code(),
            MultipartReplyBody::PortDesc(_) => MultipartType::PortDesc.code(),
            MultipartReplyBody::Other { kind, .. } => *kind,
        }
    }
    /// Reads the body for `version`.
    pub fn parse(version: Version, b: &[u8]) -> Result<MultipartReply> {
        let pre = prefix_len(version);
        need(b, pre)?;
        let kind = read_u16(b, 0);
        let rest = &b[pre..];
        let body = match modelled(version, kind) {
            Some(MultipartType::Desc) => MultipartReplyBody::Desc(DescStats::parse(rest)?),
            Some(MultipartType::Aggregate) => MultipartReplyBody::Aggregate(AggregateStats::parse(rest)?),
            Some(MultipartType::PortDesc) => {
                MultipartReplyBody::PortDesc(fixed_array(rest, PORT13_LEN, Port13::parse)?)
            }
            Some(MultipartType::Flow) => {
                let mut v = Vec::new();
                let mut r = rest;
                while !r.is_empty() {
                    let (s, used) = FlowStats::parse(version, r)?;
                    v.push(s);
                    r = &r[used..];
                }
                MultipartReplyBody::Flow(v)
            }
            Some(MultipartType::PortStats) => {
                MultipartReplyBody::PortStats(fixed_array(rest, PortStats::len(version), |c| {
                    PortStats::parse(version, c)
                })?)
            }
            Some(MultipartType::Table) => {
                MultipartReplyBody::Table(fixed_array(rest, TableStats::len(version), |c| {
                    TableStats::parse(version, c)
                })?)
            }
            _ => MultipartReplyBody::Other {
                kind,
                body: rest.to_vec(),
            },
        };
        Ok(MultipartReply {
            flags: read_u16(b, 2),
            body,
        })
    }
    /// Body bytes for `version`.
    pub fn buffer_len(&self, version: Version) -> usize {
        prefix_len(version)
            + match &self.body {
                MultipartReplyBody::Desc(_) => DESC_LEN,
                MultipartReplyBody::Aggregate(_) => AGGREGATE_LEN,
                MultipartReplyBody::PortDesc(v) => v.len() * PORT13_LEN,
                MultipartReplyBody::Flow(v) => v.iter().map(|s| s.buffer_len(version)).sum(),
                MultipartReplyBody::PortStats(v) => v.len() * PortStats::len(version),
                MultipartReplyBody::Table(v) => v.len() * TableStats::len(version),
                MultipartReplyBody::Other { body, .. } => body.len(),
            }
    }
    /// Writes the body for `version`.
    pub fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len(version);
        let pre = prefix_len(version);
        need(buf, len)?;
        if let MultipartReplyBody::Other { kind, .. } = &self.body {
            if modelled(version, *kind).is_some() {
                return Err(Error::Malformed("opaque multipart body of a modelled type"));
            }
        }
        buf[..pre].fill(0);
        write_u16(buf, 0, self.kind());
        write_u16(buf, 2, self.flags);
        if matches!(self.body, MultipartReplyBody::PortDesc(_)) && version == Version::V1_0 {
            return Err(Error::Unsupported("port_desc in openflow 1.0"));
        }
        let rest = &mut buf[pre..len];
        let mut at = 0;
        match &self.body {
            MultipartReplyBody::Desc(d) => d.emit(rest)?,
            MultipartReplyBody::Aggregate(a) => a.emit(rest)?,
            MultipartReplyBody::PortDesc(v) => {
                for p in v {
                    p.emit(&mut rest[at..])?;
                    at += PORT13_LEN;
                }
            }
            MultipartReplyBody::Flow(v) => {
                for s in v {
                    s.emit(version, &mut rest[at..])?;
                    at += s.buffer_len(version);
                }
            }
            MultipartReplyBody::PortStats(v) => {
                for s in v {
                    s.emit(version, &mut rest[at..])?;
                    at += PortStats::len(version);
                }
            }
            MultipartReplyBody::Table(v) => {
                for s in v {
                    s.emit(version, &mut rest[at..])?;
                    at += TableStats::len(version);
                }
            }
            MultipartReplyBody::Other { body, .. } => rest.copy_from_slice(body),
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::openflow::action::tests::{any_action, any_instruction};
    use crate::openflow::matches::tests::{any_match10, any_oxm_match};
    use crate::openflow::matches::{Match10, OxmMatch};
    use proptest::prelude::*;

    #[test]
    fn request_bytes() {
        // 1.0 port stats for port 0xfffe (OFPP_NONE... any), 1.3 desc, 1.3 flow with empty match.
        let r = MultipartRequest::parse(Version::V1_0, &[0, 4, 0, 0, 0xff, 0xfe, 0, 0, 0, 0, 0, 0]).unwrap();
        assert_eq!(r.body, MultipartRequestBody::PortStats(0xfffe));
        let r = MultipartRequest::parse(Version::V1_3, &[0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        assert_eq!(r.body, MultipartRequestBody::Desc);
        let f = MultipartRequest {
            flags: 0,
            body: MultipartRequestBody::Flow(FlowStatsRequest {
                table_id: 0xff,
                out_port: 0xffff_ffff,
                out_group: 0xffff_ffff,
                matches: FlowMatch::Oxm(OxmMatch::default()),
                ..FlowStatsRequest::default()
            }),
        };
        let expected: Vec<u8> = [
            &[0, 1, 0, 0, 0, 0, 0, 0][..],
            &[
                0xff, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0,
            ],
            &[0; 16],
            &[0, 1, 0, 4, 0, 0, 0, 0],
        ]
        .concat();
        let mut out = vec![0xffu8; f.buffer_len(Version::V1_3)];
        f.emit(Version::V1_3, &mut out).unwrap();
        assert_eq!(out, expected);
        assert_eq!(MultipartRequest::parse(Version::V1_3, &expected).unwrap(), f);
        let g = MultipartRequest::parse(Version::V1_3, &[0, 6, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]).unwrap();
        assert_eq!(
            g.body,
            MultipartRequestBody::Other {
                kind: 6,
                body: vec![1, 2, 3, 4]
            }
        );
    }

    #[test]
    fn reply_bytes() {
        let mut desc = vec![0u8; 4 + DESC_LEN];
        desc[..4].copy_from_slice(&[0, 0, 0, 1]);
        desc[4..8].copy_from_slice(b"acme");
        desc[4 + 768..4 + 771].copy_from_slice(b"sn1");
        let r = MultipartReply::parse(Version::V1_0, &desc).unwrap();
        assert_eq!(r.flags, FLAG_MORE);
        let MultipartReplyBody::Desc(d) = &r.body else {
            panic!("desc")
        };
        assert_eq!((&d.mfr_desc[..], &d.serial_num[..]), (&b"acme"[..], &b"sn1"[..]));
        let mut out = vec![0u8; r.buffer_len(Version::V1_0)];
        r.emit(Version::V1_0, &mut out).unwrap();
        assert_eq!(out, desc);

        let mut table = vec![0u8; 8 + 24];
        table[1] = 3;
        table[8] = 1;
        table[12..16].copy_from_slice(&[0, 0, 0, 5]);
        let r = MultipartReply::parse(Version::V1_3, &table).unwrap();
        let MultipartReplyBody::Table(t) = &r.body else {
            panic!("table")
        };
        assert_eq!((t.len(), t[0].table_id, t[0].active_count), (1, 1, 5));
        assert!(MultipartReply::parse(Version::V1_3, &table[..31]).is_err());

        // 1.3 port_desc reply with one port; in 1.0 type 13 is not defined and stays opaque.
        let mut pd = vec![0u8; 8 + PORT13_LEN];
        pd[1] = 13;
        pd[8..12].copy_from_slice(&[0, 0, 0, 4]);
        let r = MultipartReply::parse(Version::V1_3, &pd).unwrap();
        let MultipartReplyBody::PortDesc(ports) = &r.body else {
            panic!("port_desc")
        };
        assert_eq!(ports[0].port_no, 4);
        assert!(matches!(
            MultipartReply::parse(Version::V1_0, &pd).unwrap().body,
            MultipartReplyBody::Other { kind: 13, .. }
        ));
        let mut agg = vec![0u8; 8 + 24];
        agg[1] = 2;
        agg[15] = 9;
        agg[27] = 3;
        let r = MultipartReply::parse(Version::V1_3, &agg).unwrap();
        assert_eq!(
            r.body,
            MultipartReplyBody::Aggregate(AggregateStats {
                packet_count: 9,
                byte_count: 0,
                flow_count: 3
            })
        );

        let fs = MultipartReply {
            flags: 0,
            body: MultipartReplyBody::Flow(vec![FlowStats {
                priority: 7,
                packet_count: 2,
                matches: FlowMatch::V10(Match10::any()),
                actions: vec![Action::Output { port: 1, max_len: 0 }],
                ..FlowStats::default()
            }]),
        };
        let mut out = vec![0u8; fs.buffer_len(Version::V1_0)];
        fs.emit(Version::V1_0, &mut out).unwrap();
        assert_eq!(out.len(), 4 + 88 + 8);
        assert_eq!(out[4..8], [0, 96, 0, 0]);
        assert_eq!(out[56..58], [0, 7]);
        assert_eq!(MultipartReply::parse(Version::V1_0, &out).unwrap(), fs);
    }

    fn any_match(version: Version) -> BoxedStrategy<FlowMatch> {
        if version == Version::V1_0 {
            any_match10().prop_map(FlowMatch::V10).boxed()
        } else {
            any_oxm_match().prop_map(FlowMatch::Oxm).boxed()
        }
    }

    fn any_fsr(version: Version) -> impl Strategy<Value = FlowStatsRequest> {
        let v10 = version == Version::V1_0;
        (any::<(u8, u32, u32, u64, u64)>(), any_match(version)).prop_map(move |((t, op, og, c, cm), m)| {
            FlowStatsRequest {
                table_id: t,
                out_port: if v10 { op & 0xffff } else { op },
                out_group: if v10 { 0 } else { og },
                cookie: if v10 { 0 } else { c },
                cookie_mask: if v10 { 0 } else { cm },
                matches: m,
            }
        })
    }

    pub(crate) fn any_request(version: Version) -> impl Strategy<Value = MultipartRequest> {
        let v10 = version == Version::V1_0;
        let body = prop_oneof![
            Just(MultipartRequestBody::Desc),
            Just(MultipartRequestBody::Table),
            any::<u32>().prop_map(move |p| MultipartRequestBody::PortStats(if v10 { p & 0xffff } else { p })),
            any_fsr(version).prop_map(MultipartRequestBody::Flow),
            any_fsr(version).prop_map(MultipartRequestBody::Aggregate),
            (6u16.., proptest::collection::vec(any::<u8>(), 0..12))
                .prop_filter("not modelled", move |(k, _)| modelled(version, *k).is_none())
                .prop_map(|(kind, body)| MultipartRequestBody::Other { kind, body }),
        ];
        let body = if v10 {
            body.boxed()
        } else {
            prop_oneof![body, Just(MultipartRequestBody::PortDesc)].boxed()
        };
        (any::<u16>(), body).prop_map(|(flags, body)| MultipartRequest { flags, body })
    }

    fn text(n: usize) -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(1u8.., 0..=n)
    }

    pub(crate) fn any_reply(version: Version) -> impl Strategy<Value = MultipartReply> {
        let v10 = version == Version::V1_0;
        let desc = (text(256), text(8), text(3), text(32), text(256)).prop_map(|(a, b, c, d, e)| DescStats {
            mfr_desc: a,
            hw_desc: b,
            sw_desc: c,
            serial_num: d,
            dp_desc: e,
        });
        let flow = (
            any::<(u8, u32, u32, u16, u16, u16, u16)>(),
            any::<(u64, u64, u64)>(),
            any_match(version),
            proptest::collection::vec(any_action(version), 0..2),
            proptest::collection::vec(any_instruction(), 0..2),
        )
            .prop_map(move |((t, ds, dn, p, i, h, fl), (c, pc, bc), m, a, ins)| FlowStats {
                table_id: t,
                duration_sec: ds,
                duration_nsec: dn,
                priority: p,
                idle_timeout: i,
                hard_timeout: h,
                flags: if v10 { 0 } else { fl },
                cookie: c,
                packet_count: pc,
                byte_count: bc,
                matches: m,
                actions: if v10 { a } else { Vec::new() },
                instructions: if v10 { Vec::new() } else { ins },
            });
        let port =
            (any::<u32>(), any::<[u64; 12]>(), any::<(u32, u32)>()).prop_map(move |(p, counters, (s, n))| PortStats {
                port_no: if v10 { p & 0xffff } else { p },
                counters,
                duration_sec: if v10 { 0 } else { s },
                duration_nsec: if v10 { 0 } else { n },
            });
        let table =
            (any::<(u8, [u8; 32], u32, u32, u32, u64, u64)>()).prop_map(move |(t, name, w, me, ac, l, m)| TableStats {
                table_id: t,
                name: if v10 { name } else { [0; 32] },
                wildcards: if v10 { w } else { 0 },
                max_entries: if v10 { me } else { 0 },
                active_count: ac,
                lookup_count: l,
                matched_count: m,
            });
        let body = prop_oneof![
            desc.prop_map(MultipartReplyBody::Desc),
            proptest::collection::vec(flow, 0..3).prop_map(MultipartReplyBody::Flow),
            proptest::collection::vec(port, 0..3).prop_map(MultipartReplyBody::PortStats),
            proptest::collection::vec(table, 0..3).prop_map(MultipartReplyBody::Table),
            any::<(u64, u64, u32)>().prop_map(|(p, b, f)| MultipartReplyBody::Aggregate(AggregateStats {
                packet_count: p,
                byte_count: b,
                flow_count: f
            })),
            (6u16.., proptest::collection::vec(any::<u8>(), 0..12))
                .prop_filter("not modelled", move |(k, _)| modelled(version, *k).is_none())
                .prop_map(|(kind, body)| MultipartReplyBody::Other { kind, body }),
        ];
        let body = if v10 {
            body.boxed()
        } else {
            prop_oneof![
                body,
                proptest::collection::vec(crate::openflow::flow::tests::any_port13(), 0..3)
                    .prop_map(MultipartReplyBody::PortDesc)
            ]
            .boxed()
        };
        (any::<u16>(), body).prop_map(|(flags, body)| MultipartReply { flags, body })
    }

    fn any_version() -> impl Strategy<Value = Version> {
        prop_oneof![Just(Version::V1_0), Just(Version::V1_3)]
    }

    proptest! {
        #[test]
        fn request_round_trip((v, r) in any_version().prop_flat_map(|v| (Just(v), any_request(v)))) {
            let mut buf = vec![0u8; r.buffer_len(v)];
            r.emit(v, &mut buf).unwrap();
            prop_assert_eq!(MultipartRequest::parse(v, &buf).unwrap(), r);
        }

        #[test]
        fn reply_round_trip((v, r) in any_version().prop_flat_map(|v| (Just(v), any_reply(v)))) {
            let mut buf = vec![0u8; r.buffer_len(v)];
            r.emit(v, &mut buf).unwrap();
            prop_assert_eq!(MultipartReply::parse(v, &buf).unwrap(), r);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            for v in [Version::V1_0, Version::V1_3] {
                let _ = MultipartRequest::parse(v, &data);
                let _ = MultipartReply::parse(v, &data);
            }
        }
    }
}
