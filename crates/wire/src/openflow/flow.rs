//! Asynchronous and flow-table messages: packet_in, packet_out, flow_mod, flow_removed and
//! port_status, for OpenFlow 1.0 and 1.3.
//!
//! One body type serves both versions; fields that exist in only one version say so, are read as
//! zero (or empty) from the other and must be left so when emitting for it, except where emitting
//! checks them (the match kind, actions versus instructions, ports that must fit 16 bits).

use super::action::{
    actions_len, emit_actions, emit_instructions, instructions_len, parse_actions, parse_instructions,
};
use super::action::{Action, Instruction};
use super::matches::{Match10, OxmMatch, MATCH10_LEN};
use super::msg::{PhyPort10, PHY_PORT10_LEN};
use super::{need, read_u64, write_u64, Version};
use crate::ethernet::MacAddr;
use crate::field::{read_u16, read_u32, write_u16, write_u32};
use crate::{Error, Result};

/// A match of either version.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FlowMatch {
    /// OpenFlow 1.0 fixed match.
    V10(Match10),
    /// OpenFlow 1.3 OXM match.
    Oxm(OxmMatch),
}

impl Default for FlowMatch {
    fn default() -> FlowMatch {
        FlowMatch::Oxm(OxmMatch::default())
    }
}

impl FlowMatch {
    /// Reads the match of `version` from the start of `b`; returns it and its padded length.
    pub fn parse(version: Version, b: &[u8]) -> Result<(FlowMatch, usize)> {
        if version == Version::V1_0 {
            Ok((FlowMatch::V10(Match10::parse(b)?), MATCH10_LEN))
        } else {
            let (m, used) = OxmMatch::parse(b)?;
            Ok((FlowMatch::Oxm(m), used))
        }
    }
    /// Bytes this match emits.
    #[inline]
    pub fn buffer_len(&self) -> usize {
        match self {
            FlowMatch::V10(m) => m.buffer_len(),
            FlowMatch::Oxm(m) => m.buffer_len(),
        }
    }
    /// Writes the match for `version`; [`Error::Malformed`] when the kind does not fit the version.
    #[inline]
    pub fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        match (self, version == Version::V1_0) {
            (FlowMatch::V10(m), true) => m.emit(buf),
            (FlowMatch::Oxm(m), false) => m.emit(buf),
            _ => Err(Error::Malformed("match kind does not fit the openflow version")),
        }
    }
}

fn port16(p: u32) -> Result<u16> {
    u16::try_from(p).map_err(|_| Error::Malformed("openflow 1.0 port above 0xffff"))
}

/// A packet_in body.
///
/// 1.0: buffer_id, total_len, in_port (2), reason, pad, data. 1.3: buffer_id, total_len, reason,
/// table_id, cookie, match, pad (2), data.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PacketIn {
    /// Buffer id on the switch (0xffffffff: not buffered).
    pub buffer_id: u32,
    /// Full length of the frame.
    pub total_len: u16,
    /// `OFPR_*` reason.
    pub reason: u8,
    /// Input port (1.0 only; 1.3 carries it in the match).
    pub in_port: u16,
    /// Table id (1.3 only).
    pub table_id: u8,
    /// Cookie of the flow entry (1.3 only).
    pub cookie: u64,
    /// Match fields describing the packet (1.3 only).
    pub oxm: OxmMatch,
    /// The frame, or its first bytes.
    pub data: Vec<u8>,
}

impl PacketIn {
    /// Reads the body for `version`.
    pub fn parse(version: Version, b: &[u8]) -> Result<PacketIn> {
        if version == Version::V1_0 {
            need(b, 10)?;
            return Ok(PacketIn {
                buffer_id: read_u32(b, 0),
                total_len: read_u16(b, 4),
                in_port: read_u16(b, 6),
                reason: b[8],
                data: b[10..].to_vec(),
                ..PacketIn::default()
            });
        }
        need(b, 16)?;
        let (oxm, used) = OxmMatch::parse(&b[16..])?;
        let at = 16 + used + 2;
        need(b, at)?;
        Ok(PacketIn {
            buffer_id: read_u32(b, 0),
            total_len: read_u16(b, 4),
            reason: b[6],
            table_id: b[7],
            cookie: read_u64(b, 8),
            oxm,
            data: b[at..].to_vec(),
            in_port: 0,
        })
    }
    /// Body bytes for `version`.
    pub fn buffer_len(&self, version: Version) -> usize {
        if version == Version::V1_0 {
            10 + self.data.len()
        } else {
            16 + self.oxm.buffer_len() + 2 + self.data.len()
        }
    }
    /// Writes the body for `version`.
    pub fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len(version);
        need(buf, len)?;
        buf[..len].fill(0);
        write_u32(buf, 0, self.buffer_id);
        write_u16(buf, 4, self.total_len);
        let at = if version == Version::V1_0 {
            write_u16(buf, 6, self.in_port);
            buf[8] = self.reason;
            10
        } else {
            buf[6] = self.reason;
            buf[7] = self.table_id;
            write_u64(buf, 8, self.cookie);
            self.oxm.emit(&mut buf[16..])?;
            16 + self.oxm.buffer_len() + 2
        };
        buf[at..len].copy_from_slice(&self.data);
        Ok(())
    }
}

/// A packet_out body.
///
/// 1.0: buffer_id, in_port (2), actions_len (2), actions, data. 1.3: buffer_id, in_port (4),
/// actions_len (2), pad (6), actions, data.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PacketOut {
    /// Buffer id on the switch (0xffffffff: the frame is in `data`).
    pub buffer_id: u32,
    /// Input port the frame is treated as coming from (16 bits in 1.0).
    pub in_port: u32,
    /// Actions to apply.
    pub actions: Vec<Action>,
    /// The frame when not buffered.
    pub data: Vec<u8>,
}

impl PacketOut {
    fn fixed(version: Version) -> usize {
        if version == Version::V1_0 {
            8
        } else {
            16
        }
    }
    /// Reads the body for `version`.
    pub fn parse(version: Version, b: &[u8]) -> Result<PacketOut> {
        let fixed = Self::fixed(version);
        need(b, fixed)?;
        let (in_port, alen) = if version == Version::V1_0 {
            (u32::from(read_u16(b, 4)), read_u16(b, 6))
        } else {
            (read_u32(b, 4), read_u16(b, 8))
        };
        let end = fixed + usize::from(alen);
        need(b, end)?;
        Ok(PacketOut {
            buffer_id: read_u32(b, 0),
            in_port,
            actions: parse_actions(version, &b[fixed..end])?,
            data: b[end..].to_vec(),
        })
    }
    /// Body bytes for `version`.
    #[inline]
    pub fn buffer_len(&self, version: Version) -> usize {
        Self::fixed(version) + actions_len(version, &self.actions) + self.data.len()
    }
    /// Writes the body for `version`.
    #[inline]
    pub fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len(version);
        let fixed = Self::fixed(version);
        let alen = actions_len(version, &self.actions);
        let alen16 = u16::try_from(alen).map_err(|_| Error::Malformed("actions too long"))?;
        need(buf, len)?;
        buf[..fixed].fill(0);
        write_u32(buf, 0, self.buffer_id);
        if version == Version::V1_0 {
            write_u16(buf, 4, port16(self.in_port)?);
            write_u16(buf, 6, alen16);
        } else {
            write_u32(buf, 4, self.in_port);
            write_u16(buf, 8, alen16);
        }
        emit_actions(version, &self.actions, &mut buf[fixed..fixed + alen])?;
        buf[fixed + alen..len].copy_from_slice(&self.data);
        Ok(())
    }
}

/// The flow_mod command (`OFPFC_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FlowModCommand {
    /// 0: add a flow.
    #[default]
    Add,
    /// 1: modify all matching flows.
    Modify,
    /// 2: modify the flow with this exact match and priority.
    ModifyStrict,
    /// 3: delete all matching flows.
    Delete,
    /// 4: delete the flow with this exact match and priority.
    DeleteStrict,
    /// Any other code (8 bits in 1.3).
    Unknown(u16),
}

impl FlowModCommand {
    /// Decodes a command code.
    pub fn from_code(c: u16) -> FlowModCommand {
        match c {
            0 => FlowModCommand::Add,
            1 => FlowModCommand::Modify,
            2 => FlowModCommand::ModifyStrict,
            3 => FlowModCommand::Delete,
            4 => FlowModCommand::DeleteStrict,
            c => FlowModCommand::Unknown(c),
        }
    }
    /// The command code.
    pub fn code(self) -> u16 {
        match self {
            FlowModCommand::Add => 0,
            FlowModCommand::Modify => 1,
            FlowModCommand::ModifyStrict => 2,
            FlowModCommand::Delete => 3,
            FlowModCommand::DeleteStrict => 4,
            FlowModCommand::Unknown(c) => c,
        }
    }
}

/// A flow_mod body.
///
/// 1.0: match (40), cookie, command (2), idle_timeout, hard_timeout, priority, buffer_id,
/// out_port (2), flags, actions. 1.3: cookie, cookie_mask, table_id, command (1), idle_timeout,
/// hard_timeout, priority, buffer_id, out_port (4), out_group, flags, pad (2), match, instructions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FlowMod {
    /// Opaque controller cookie.
    pub cookie: u64,
    /// Cookie bits that must match for modify/delete (1.3 only).
    pub cookie_mask: u64,
    /// Table id (1.3 only).
    pub table_id: u8,
    /// The command.
    pub command: FlowModCommand,
    /// Idle timeout in seconds (0: none).
    pub idle_timeout: u16,
    /// Hard timeout in seconds (0: none).
    pub hard_timeout: u16,
    /// Priority.
    pub priority: u16,
    /// Buffered packet to apply to (0xffffffff: none).
    pub buffer_id: u32,
    /// For delete: only flows outputting to this port (16 bits in 1.0).
    pub out_port: u32,
    /// For delete: only flows outputting to this group (1.3 only).
    pub out_group: u32,
    /// `OFPFF_*` flags.
    pub flags: u16,
    /// The match ([`FlowMatch::V10`] in 1.0, [`FlowMatch::Oxm`] in 1.3).
    pub matches: FlowMatch,
    /// Actions (1.0 only).
    pub actions: Vec<Action>,
    /// Instructions (1.3 only).
    pub instructions: Vec<Instruction>,
}

impl FlowMod {
    /// Reads the body for `version`.
    pub fn parse(version: Version, b: &[u8]) -> Result<FlowMod> {
        if version == Version::V1_0 {
            need(b, 64)?;
            let (matches, _) = FlowMatch::parse(version, b)?;
            return Ok(FlowMod {
                matches,
                cookie: read_u64(b, 40),
                command: FlowModCommand::from_code(read_u16(b, 48)),
                idle_timeout: read_u16(b, 50),
                hard_timeout: read_u16(b, 52),
                priority: read_u16(b, 54),
                buffer_id: read_u32(b, 56),
                out_port: u32::from(read_u16(b, 60)),
                flags: read_u16(b, 62),
                actions: parse_actions(version, &b[64..])?,
                ..FlowMod::default()
            });
        }
        need(b, 40)?;
        let (matches, used) = FlowMatch::parse(version, &b[40..])?;
        Ok(FlowMod {
            cookie: read_u64(b, 0),
            cookie_mask: read_u64(b, 8),
            table_id: b[16],
            command: FlowModCommand::from_code(u16::from(b[17])),
            idle_timeout: read_u16(b, 18),
            hard_timeout: read_u16(b, 20),
            priority: read_u16(b, 22),
            buffer_id: read_u32(b, 24),
            out_port: read_u32(b, 28),
            out_group: read_u32(b, 32),
            flags: read_u16(b, 36),
            matches,
            actions: Vec::new(),
            instructions: parse_instructions(&b[40 + used..])?,
        })
    }
    /// Body bytes for `version`.
    #[inline]
    pub fn buffer_len(&self, version: Version) -> usize {
        if version == Version::V1_0 {
            64 + actions_len(version, &self.actions)
        } else {
            40 + self.matches.buffer_len() + instructions_len(&self.instructions)
        }
    }
    /// Writes the body for `version`.
    #[inline]
    pub fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len(version);
        need(buf, len)?;
        if version == Version::V1_0 {
            if !self.instructions.is_empty() {
                return Err(Error::Malformed("instructions in an openflow 1.0 flow_mod"));
            }
            self.matches.emit(version, buf)?;
            write_u64(buf, 40, self.cookie);
            write_u16(buf, 48, self.command.code());
            write_u16(buf, 50, self.idle_timeout);
            write_u16(buf, 52, self.hard_timeout);
            write_u16(buf, 54, self.priority);
            write_u32(buf, 56, self.buffer_id);
            write_u16(buf, 60, port16(self.out_port)?);
            write_u16(buf, 62, self.flags);
            return emit_actions(version, &self.actions, &mut buf[64..len]);
        }
        if !self.actions.is_empty() {
            return Err(Error::Malformed(
                "actions outside instructions in an openflow 1.3 flow_mod",
            ));
        }
        let command = u8::try_from(self.command.code()).map_err(|_| Error::Malformed("flow_mod command"))?;
        write_u64(buf, 0, self.cookie);
        write_u64(buf, 8, self.cookie_mask);
        buf[16] = self.table_id;
        buf[17] = command;
        write_u16(buf, 18, self.idle_timeout);
        write_u16(buf, 20, self.hard_timeout);
        write_u16(buf, 22, self.priority);
        write_u32(buf, 24, self.buffer_id);
        write_u32(buf, 28, self.out_port);
        write_u32(buf, 32, self.out_group);
        write_u16(buf, 36, self.flags);
        buf[38..40].fill(0);
        self.matches.emit(version, &mut buf[40..])?;
        emit_instructions(&self.instructions, &mut buf[40 + self.matches.buffer_len()..len])
    }
}

/// A flow_removed body.
///
/// 1.0: match (40), cookie, priority, reason, pad, duration_sec, duration_nsec, idle_timeout,
/// pad (2), packet_count, byte_count. 1.3: cookie, priority, reason, table_id, duration_sec,
/// duration_nsec, idle_timeout, hard_timeout, packet_count, byte_count, match.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FlowRemoved {
    /// Cookie of the removed flow.
    pub cookie: u64,
    /// Priority.
    pub priority: u16,
    /// `OFPRR_*` reason.
    pub reason: u8,
    /// Table id (1.3 only).
    pub table_id: u8,
    /// Seconds the flow was alive.
    pub duration_sec: u32,
    /// Nanoseconds beyond `duration_sec`.
    pub duration_nsec: u32,
    /// Idle timeout.
    pub idle_timeout: u16,
    /// Hard timeout (1.3 only).
    pub hard_timeout: u16,
    /// Packets matched.
    pub packet_count: u64,
    /// Bytes matched.
    pub byte_count: u64,
    /// The flow's match.
    pub matches: FlowMatch,
}

impl FlowRemoved {
    /// Reads the body for `version`.
    pub fn parse(version: Version, b: &[u8]) -> Result<FlowRemoved> {
        if version == Version::V1_0 {
            need(b, 80)?;
            if b.len() != 80 {
                return Err(Error::Malformed("flow_removed length"));
            }
            let (matches, _) = FlowMatch::parse(version, b)?;
            return Ok(FlowRemoved {
                matches,
                cookie: read_u64(b, 40),
                priority: read_u16(b, 48),
                reason: b[50],
                duration_sec: read_u32(b, 52),
                duration_nsec: read_u32(b, 56),
                idle_timeout: read_u16(b, 60),
                packet_count: read_u64(b, 64),
                byte_count: read_u64(b, 72),
                ..FlowRemoved::default()
            });
        }
        need(b, 40)?;
        let (matches, used) = FlowMatch::parse(version, &b[40..])?;
        if b.len() != 40 + used {
            return Err(Error::Malformed("flow_removed length"));
        }
        Ok(FlowRemoved {
            cookie: read_u64(b, 0),
            priority: read_u16(b, 8),
            reason: b[10],
            table_id: b[11],
            duration_sec: read_u32(b, 12),
            duration_nsec: read_u32(b, 16),
            idle_timeout: read_u16(b, 20),
            hard_timeout: read_u16(b, 22),
            packet_count: read_u64(b, 24),
            byte_count: read_u64(b, 32),
            matches,
        })
    }
    /// Body bytes for `version`.
    pub fn buffer_len(&self, version: Version) -> usize {
        if version == Version::V1_0 {
            80
        } else {
            40 + self.matches.buffer_len()
        }
    }
    /// Writes the body for `version`.
    pub fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len(version);
        need(buf, len)?;
        buf[..len].fill(0);
        if version == Version::V1_0 {
            self.matches.emit(version, buf)?;
            write_u64(buf, 40, self.cookie);
            write_u16(buf, 48, self.priority);
            buf[50] = self.reason;
            write_u32(buf, 52, self.duration_sec);
            write_u32(buf, 56, self.duration_nsec);
            write_u16(buf, 60, self.idle_timeout);
            write_u64(buf, 64, self.packet_count);
            write_u64(buf, 72, self.byte_count);
            return Ok(());
        }
        write_u64(buf, 0, self.cookie);
        write_u16(buf, 8, self.priority);
        buf[10] = self.reason;
        buf[11] = self.table_id;
        write_u32(buf, 12, self.duration_sec);
        write_u32(buf, 16, self.duration_nsec);
        write_u16(buf, 20, self.idle_timeout);
        write_u16(buf, 22, self.hard_timeout);
        write_u64(buf, 24, self.packet_count);
        write_u64(buf, 32, self.byte_count);
        self.matches.emit(version, &mut buf[40..])
    }
}

/// Length of an OpenFlow 1.3 `ofp_port`.
pub const PORT13_LEN: usize = 64;

/// An OpenFlow 1.3 port description (`ofp_port`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Port13 {
    /// Port number.
    pub port_no: u32,
    /// Hardware address.
    pub hw_addr: MacAddr,
    /// Name, NUL-padded.
    pub name: [u8; 16],
    /// `OFPPC_*` configuration bits.
    pub config: u32,
    /// `OFPPS_*` state bits.
    pub state: u32,
    /// Current features (`OFPPF_*`).
    pub curr: u32,
    /// Advertised features.
    pub advertised: u32,
    /// Supported features.
    pub supported: u32,
    /// Features advertised by the peer.
    pub peer: u32,
    /// Current bit rate in kb/s.
    pub curr_speed: u32,
    /// Maximum bit rate in kb/s.
    pub max_speed: u32,
}

impl Port13 {
    /// Reads a port from the first 64 bytes of `b`.
    pub fn parse(b: &[u8]) -> Result<Port13> {
        need(b, PORT13_LEN)?;
        let mut name = [0u8; 16];
        name.copy_from_slice(&b[16..32]);
        let w = |i: usize| read_u32(b, 32 + 4 * i);
        Ok(Port13 {
            port_no: read_u32(b, 0),
            hw_addr: MacAddr::from_bytes(&b[8..14]),
            name,
            config: w(0),
            state: w(1),
            curr: w(2),
            advertised: w(3),
            supported: w(4),
            peer: w(5),
            curr_speed: w(6),
            max_speed: w(7),
        })
    }
    /// Writes the 64-byte port into the start of `buf` (padding zeroed).
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        need(buf, PORT13_LEN)?;
        buf[..PORT13_LEN].fill(0);
        write_u32(buf, 0, self.port_no);
        buf[8..14].copy_from_slice(&self.hw_addr.0);
        buf[16..32].copy_from_slice(&self.name);
        let words = [
            self.config,
            self.state,
            self.curr,
            self.advertised,
            self.supported,
            self.peer,
            self.curr_speed,
            self.max_speed,
        ];
        for (i, v) in words.into_iter().enumerate() {
            write_u32(buf, 32 + 4 * i, v);
        }
        Ok(())
    }
}

/// A port description of either version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Port {
    /// OpenFlow 1.0 `ofp_phy_port`.
    V10(PhyPort10),
    /// OpenFlow 1.3 `ofp_port`.
    V13(Port13),
}

/// A port_status body: reason (`OFPPR_*`), pad (7), the port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PortStatus {
    /// 0 add, 1 delete, 2 modify.
    pub reason: u8,
    /// The port ([`Port::V10`] in 1.0, [`Port::V13`] in 1.3).
    pub port: Port,
}

impl PortStatus {
    /// Reads the body for `version`.
    pub fn parse(version: Version, b: &[u8]) -> Result<PortStatus> {
        let len = if version == Version::V1_0 {
            8 + PHY_PORT10_LEN
        } else {
            8 + PORT13_LEN
        };
        need(b, len)?;
        if b.len() != len {
            return Err(Error::Malformed("port_status length"));
        }
        let port = if version == Version::V1_0 {
            Port::V10(PhyPort10::parse(&b[8..])?)
        } else {
            Port::V13(Port13::parse(&b[8..])?)
        };
        Ok(PortStatus { reason: b[0], port })
    }
    /// Body bytes this emits.
    pub fn buffer_len(&self) -> usize {
        8 + match self.port {
            Port::V10(_) => PHY_PORT10_LEN,
            Port::V13(_) => PORT13_LEN,
        }
    }
    /// Writes the body for `version`.
    pub fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        need(buf, self.buffer_len())?;
        buf[..8].fill(0);
        buf[0] = self.reason;
        match (&self.port, version == Version::V1_0) {
            (Port::V10(p), true) => p.emit(&mut buf[8..]),
            (Port::V13(p), false) => p.emit(&mut buf[8..]),
            _ => Err(Error::Malformed("port kind does not fit the openflow version")),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::openflow::action::tests::{any_action, any_instruction};
    use crate::openflow::matches::tests::{any_match10, any_oxm_match};
    use crate::openflow::matches::OxmField;
    use crate::openflow::msg::tests::any_phy_port;
    use proptest::prelude::*;

    #[test]
    fn of10_flow_mod_bytes() {
        let fm = FlowMod {
            matches: FlowMatch::V10(Match10::any()),
            cookie: 0x1122,
            command: FlowModCommand::Add,
            idle_timeout: 10,
            hard_timeout: 0,
            priority: 0x8000,
            buffer_id: 0xffff_ffff,
            out_port: 0xffff,
            flags: 1,
            actions: vec![Action::Output { port: 1, max_len: 0 }],
            ..FlowMod::default()
        };
        let mut expected = vec![0u8; 72];
        expected[..4].copy_from_slice(&[0x00, 0x3f, 0xff, 0xff]);
        expected[40..48].copy_from_slice(&[0, 0, 0, 0, 0, 0, 0x11, 0x22]);
        expected[48..64].copy_from_slice(&[0, 0, 0, 10, 0, 0, 0x80, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 1]);
        expected[64..72].copy_from_slice(&[0, 0, 0, 8, 0, 1, 0, 0]);
        let mut out = vec![0xffu8; fm.buffer_len(Version::V1_0)];
        fm.emit(Version::V1_0, &mut out).unwrap();
        assert_eq!(out, expected);
        assert_eq!(FlowMod::parse(Version::V1_0, &expected).unwrap(), fm);
        assert!(FlowMod::parse(Version::V1_0, &expected[..63]).is_err());
    }

    #[test]
    fn of13_flow_mod_bytes() {
        let fm = FlowMod {
            cookie: 1,
            table_id: 2,
            command: FlowModCommand::DeleteStrict,
            priority: 100,
            buffer_id: 0xffff_ffff,
            out_port: 0xffff_ffff,
            out_group: 0xffff_ffff,
            matches: FlowMatch::Oxm(OxmMatch {
                fields: vec![OxmField::InPort(7)],
            }),
            instructions: vec![Instruction::GotoTable(3)],
            ..FlowMod::default()
        };
        let expected: Vec<u8> = [
            &[0, 0, 0, 0, 0, 0, 0, 1][..], // cookie
            &[0; 8],                       // cookie_mask
            &[2, 4, 0, 0, 0, 0, 0, 100],   // table, command, idle, hard, priority
            &[0xff; 12],                   // buffer_id, out_port, out_group
            &[0, 0, 0, 0],                 // flags, pad
            &[0, 1, 0, 12, 0x80, 0, 0, 4], // match header, in_port TLV header
            &[0, 0, 0, 7, 0, 0, 0, 0],     // in_port value, padding
            &[0, 1, 0, 8, 3, 0, 0, 0],     // goto_table 3
        ]
        .concat();
        let mut out = vec![0xffu8; fm.buffer_len(Version::V1_3)];
        fm.emit(Version::V1_3, &mut out).unwrap();
        assert_eq!(out, expected);
        assert_eq!(FlowMod::parse(Version::V1_3, &expected).unwrap(), fm);
        assert!(fm.emit(Version::V1_0, &mut [0u8; 200]).is_err());
    }

    #[test]
    fn packet_in_bytes() {
        let v10 = [0, 0, 1, 0, 0, 60, 0, 3, 0, 0, 0xaa, 0xbb];
        let p = PacketIn::parse(Version::V1_0, &v10).unwrap();
        assert_eq!((p.buffer_id, p.total_len, p.in_port, p.reason), (256, 60, 3, 0));
        assert_eq!(p.data, [0xaa, 0xbb]);
        let mut out = [0u8; 12];
        p.emit(Version::V1_0, &mut out).unwrap();
        assert_eq!(out, v10);
        let v13: Vec<u8> = [
            &[0xff, 0xff, 0xff, 0xff, 0, 60, 1, 0][..],
            &[0, 0, 0, 0, 0, 0, 0, 9],
            &[0, 1, 0, 12, 0x80, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 0],
            &[0, 0, 0xaa],
        ]
        .concat();
        let p = PacketIn::parse(Version::V1_3, &v13).unwrap();
        assert_eq!((p.reason, p.table_id, p.cookie), (1, 0, 9));
        assert_eq!(p.oxm.fields, vec![OxmField::InPort(5)]);
        assert_eq!(p.data, [0xaa]);
        let mut out = vec![0u8; p.buffer_len(Version::V1_3)];
        p.emit(Version::V1_3, &mut out).unwrap();
        assert_eq!(out, v13);
    }

    #[test]
    fn packet_out_and_port_status_bytes() {
        let v13: Vec<u8> = [
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd, 0, 16, 0, 0, 0, 0, 0, 0][..],
            &[0, 0, 0, 16, 0, 0, 0, 2, 0xff, 0xe5, 0, 0, 0, 0, 0, 0],
            &[1, 2, 3],
        ]
        .concat();
        let p = PacketOut::parse(Version::V1_3, &v13).unwrap();
        assert_eq!(p.in_port, 0xffff_fffd);
        assert_eq!(
            p.actions,
            vec![Action::Output {
                port: 2,
                max_len: 0xffe5
            }]
        );
        assert_eq!(p.data, [1, 2, 3]);
        let mut out = vec![0u8; p.buffer_len(Version::V1_3)];
        p.emit(Version::V1_3, &mut out).unwrap();
        assert_eq!(out, v13);
        let mut ps = vec![0u8; 72];
        ps[0] = 2;
        ps[8..12].copy_from_slice(&[0, 0, 0, 9]);
        ps[8 + 56..8 + 60].copy_from_slice(&[0, 0x98, 0x96, 0x80]);
        let s = PortStatus::parse(Version::V1_3, &ps).unwrap();
        let Port::V13(port) = s.port else { panic!("1.3 port") };
        assert_eq!((s.reason, port.port_no, port.curr_speed), (2, 9, 10_000_000));
        let mut out = vec![0u8; s.buffer_len()];
        s.emit(Version::V1_3, &mut out).unwrap();
        assert_eq!(out, ps);
        assert!(PortStatus::parse(Version::V1_0, &ps).is_err());
    }

    fn any_match(version: Version) -> BoxedStrategy<FlowMatch> {
        if version == Version::V1_0 {
            any_match10().prop_map(FlowMatch::V10).boxed()
        } else {
            any_oxm_match().prop_map(FlowMatch::Oxm).boxed()
        }
    }

    pub(crate) fn any_port13() -> impl Strategy<Value = Port13> {
        (any::<u32>(), any::<[u8; 6]>(), any::<[u8; 16]>(), any::<[u32; 8]>()).prop_map(|(p, m, n, w)| Port13 {
            port_no: p,
            hw_addr: MacAddr(m),
            name: n,
            config: w[0],
            state: w[1],
            curr: w[2],
            advertised: w[3],
            supported: w[4],
            peer: w[5],
            curr_speed: w[6],
            max_speed: w[7],
        })
    }

    pub(crate) fn any_packet_in(version: Version) -> impl Strategy<Value = PacketIn> {
        let v10 = version == Version::V1_0;
        (
            any::<(u32, u16, u8, u16, u8, u64)>(),
            any_oxm_match(),
            proptest::collection::vec(any::<u8>(), 0..16),
        )
            .prop_map(
                move |((buffer_id, total_len, reason, in_port, table_id, cookie), oxm, data)| PacketIn {
                    buffer_id,
                    total_len,
                    reason,
                    in_port: if v10 { in_port } else { 0 },
                    table_id: if v10 { 0 } else { table_id },
                    cookie: if v10 { 0 } else { cookie },
                    oxm: if v10 { OxmMatch::default() } else { oxm },
                    data,
                },
            )
    }

    pub(crate) fn any_packet_out(version: Version) -> impl Strategy<Value = PacketOut> {
        let v10 = version == Version::V1_0;
        (
            any::<(u32, u32)>(),
            proptest::collection::vec(any_action(version), 0..3),
            proptest::collection::vec(any::<u8>(), 0..16),
        )
            .prop_map(move |((buffer_id, in_port), actions, data)| PacketOut {
                buffer_id,
                in_port: if v10 { in_port & 0xffff } else { in_port },
                actions,
                data,
            })
    }

    pub(crate) fn any_flow_mod(version: Version) -> impl Strategy<Value = FlowMod> {
        let v10 = version == Version::V1_0;
        (
            any::<(u64, u64, u8, u8, u16, u16, u16, u32)>(),
            any::<(u32, u32, u16)>(),
            any_match(version),
            proptest::collection::vec(any_action(version), 0..3),
            proptest::collection::vec(any_instruction(), 0..3),
        )
            .prop_map(
                move |((cookie, cm, table_id, cmd, idle, hard, prio, buf), (op, og, flags), m, a, i)| FlowMod {
                    cookie,
                    cookie_mask: if v10 { 0 } else { cm },
                    table_id: if v10 { 0 } else { table_id },
                    command: FlowModCommand::from_code(u16::from(cmd)),
                    idle_timeout: idle,
                    hard_timeout: hard,
                    priority: prio,
                    buffer_id: buf,
                    out_port: if v10 { op & 0xffff } else { op },
                    out_group: if v10 { 0 } else { og },
                    flags,
                    matches: m,
                    actions: if v10 { a } else { Vec::new() },
                    instructions: if v10 { Vec::new() } else { i },
                },
            )
    }

    pub(crate) fn any_flow_removed(version: Version) -> impl Strategy<Value = FlowRemoved> {
        let v10 = version == Version::V1_0;
        (
            any::<(u64, u16, u8, u8, u32, u32, u16, u16)>(),
            any::<(u64, u64)>(),
            any_match(version),
        )
            .prop_map(
                move |((cookie, priority, reason, table_id, ds, dn, idle, hard), (pc, bc), matches)| FlowRemoved {
                    cookie,
                    priority,
                    reason,
                    table_id: if v10 { 0 } else { table_id },
                    duration_sec: ds,
                    duration_nsec: dn,
                    idle_timeout: idle,
                    hard_timeout: if v10 { 0 } else { hard },
                    packet_count: pc,
                    byte_count: bc,
                    matches,
                },
            )
    }

    pub(crate) fn any_port_status(version: Version) -> BoxedStrategy<PortStatus> {
        if version == Version::V1_0 {
            (any::<u8>(), any_phy_port())
                .prop_map(|(reason, p)| PortStatus {
                    reason,
                    port: Port::V10(p),
                })
                .boxed()
        } else {
            (any::<u8>(), any_port13())
                .prop_map(|(reason, p)| PortStatus {
                    reason,
                    port: Port::V13(p),
                })
                .boxed()
        }
    }

    fn any_version() -> impl Strategy<Value = Version> {
        prop_oneof![Just(Version::V1_0), Just(Version::V1_3)]
    }

    proptest! {
        #[test]
        fn packet_in_round_trip((v, p) in any_version().prop_flat_map(|v| (Just(v), any_packet_in(v)))) {
            let mut buf = vec![0u8; p.buffer_len(v)];
            p.emit(v, &mut buf).unwrap();
            prop_assert_eq!(PacketIn::parse(v, &buf).unwrap(), p);
        }

        #[test]
        fn packet_out_round_trip((v, p) in any_version().prop_flat_map(|v| (Just(v), any_packet_out(v)))) {
            let mut buf = vec![0u8; p.buffer_len(v)];
            p.emit(v, &mut buf).unwrap();
            prop_assert_eq!(PacketOut::parse(v, &buf).unwrap(), p);
        }

        #[test]
        fn flow_mod_round_trip((v, f) in any_version().prop_flat_map(|v| (Just(v), any_flow_mod(v)))) {
            let mut buf = vec![0u8; f.buffer_len(v)];
            f.emit(v, &mut buf).unwrap();
            prop_assert_eq!(FlowMod::parse(v, &buf).unwrap(), f);
        }

        #[test]
        fn flow_removed_round_trip((v, f) in any_version().prop_flat_map(|v| (Just(v), any_flow_removed(v)))) {
            let mut buf = vec![0u8; f.buffer_len(v)];
            f.emit(v, &mut buf).unwrap();
            prop_assert_eq!(FlowRemoved::parse(v, &buf).unwrap(), f);
        }

        #[test]
        fn port_status_round_trip((v, s) in any_version().prop_flat_map(|v| (Just(v), any_port_status(v)))) {
            let mut buf = vec![0u8; s.buffer_len()];
            s.emit(v, &mut buf).unwrap();
            prop_assert_eq!(PortStatus::parse(v, &buf).unwrap(), s);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..160)) {
            for v in [Version::V1_0, Version::V1_3] {
                let _ = PacketIn::parse(v, &data);
                let _ = PacketOut::parse(v, &data);
                let _ = FlowMod::parse(v, &data);
                let _ = FlowRemoved::parse(v, &data);
                let _ = PortStatus::parse(v, &data);
            }
        }
    }
}
