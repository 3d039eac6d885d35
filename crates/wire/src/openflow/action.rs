//! Actions (OpenFlow 1.0 and 1.3) and instructions (OpenFlow 1.3).
//!
//! Every action and instruction starts with type (2) and length (2, a multiple of 8, header
//! included). The modelled kinds must have exactly the specification's length; any other kind is
//! kept as [`Action::Unknown`] / [`Instruction::Unknown`] with its bytes.

use super::matches::OxmField;
use super::{need, read_u64, write_u64, Version};
use crate::field::{read_u16, read_u32, write_u16, write_u32};
use crate::{Error, Result};

/// One action. Which variants exist on the wire depends on the version; emitting one in the other
/// version is [`Error::Unsupported`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Action {
    /// Output to a port (1.0 type 0, 16-bit port; 1.3 type 0, 32-bit port). `max_len`: bytes sent
    /// to the controller when the port is the controller port.
    Output {
        /// Port number (`OFPP_*` reserved values are 0xff00.. in 1.0, 0xffffff00.. in 1.3).
        port: u32,
        /// Bytes to send to the controller.
        max_len: u16,
    },
    /// Set the VLAN id (1.0 `set_vlan_vid`, type 1).
    SetVlanVid(u16),
    /// Remove the outer VLAN tag (1.0 `strip_vlan`, type 3; 1.3 `pop_vlan`, type 18).
    PopVlan,
    /// Push a VLAN tag with this TPID (1.3 `push_vlan`, type 17).
    PushVlan(u16),
    /// Output through a port's queue (1.0 `enqueue`, type 11).
    Enqueue {
        /// Port number.
        port: u16,
        /// Queue id.
        queue_id: u32,
    },
    /// Set the queue for later output (1.3 `set_queue`, type 21).
    SetQueue(u32),
    /// Apply a group (1.3 `group`, type 22).
    Group(u32),
    /// Set a header field (1.3 `set_field`, type 25).
    SetField(OxmField),
    /// Any other action: its type and the bytes after the 4-byte header (padding included).
    Unknown {
        /// Action type.
        kind: u16,
        /// Bytes after the header.
        data: Vec<u8>,
    },
}

fn pad8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

impl Action {
    /// The action type code in `version`.
    pub fn kind(&self, version: Version) -> Result<u16> {
        let v10 = version == Version::V1_0;
        Ok(match (self, v10) {
            (Action::Output { .. }, _) => 0,
            (Action::SetVlanVid(_), true) => 1,
            (Action::PopVlan, true) => 3,
            (Action::PopVlan, false) => 18,
            (Action::Enqueue { .. }, true) => 11,
            (Action::PushVlan(_), false) => 17,
            (Action::SetQueue(_), false) => 21,
            (Action::Group(_), false) => 22,
            (Action::SetField(_), false) => 25,
            (Action::Unknown { kind, .. }, _) => *kind,
            _ => return Err(Error::Unsupported("action not defined in this openflow version")),
        })
    }

    /// Bytes this action emits in `version`.
    #[inline]
    pub fn buffer_len(&self, version: Version) -> usize {
        match self {
            Action::Output { .. } if version != Version::V1_0 => 16,
            Action::Enqueue { .. } => 16,
            Action::SetField(f) => pad8(4 + f.buffer_len()),
            Action::Unknown { data, .. } => 4 + data.len(),
            _ => 8,
        }
    }

    /// Reads one action from the start of `b`; returns it and its length.
    pub fn parse(version: Version, b: &[u8]) -> Result<(Action, usize)> {
        let (kind, b) = tlv8(b, "action length")?;
        let len = b.len();
        let exact = |n: usize| exact_len(len, n, "action length");
        let a = match (version == Version::V1_0, kind) {
            (true, 0) => {
                exact(8)?;
                Action::Output {
                    port: u32::from(read_u16(b, 4)),
                    max_len: read_u16(b, 6),
                }
            }
            (true, 1) => {
                exact(8)?;
                Action::SetVlanVid(read_u16(b, 4))
            }
            (true, 3) | (false, 18) => {
                exact(8)?;
                Action::PopVlan
            }
            (true, 11) => {
                exact(16)?;
                Action::Enqueue {
                    port: read_u16(b, 4),
                    queue_id: read_u32(b, 12),
                }
            }
            (false, 0) => {
                exact(16)?;
                Action::Output {
                    port: read_u32(b, 4),
                    max_len: read_u16(b, 8),
                }
            }
            (false, 17) => {
                exact(8)?;
                Action::PushVlan(read_u16(b, 4))
            }
            (false, 21) => {
                exact(8)?;
                Action::SetQueue(read_u32(b, 4))
            }
            (false, 22) => {
                exact(8)?;
                Action::Group(read_u32(b, 4))
            }
            (false, 25) => {
                let (f, used) = OxmField::parse(&b[4..])?;
                exact(pad8(4 + used))?;
                Action::SetField(f)
            }
            _ => Action::Unknown {
                kind,
                data: b[4..].to_vec(),
            },
        };
        Ok((a, len))
    }

    /// Writes the action into the start of `buf` (padding zeroed).
    #[inline]
    pub fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        let kind = self.kind(version)?;
        let len = self.buffer_len(version);
        if !len.is_multiple_of(8) {
            return Err(Error::Malformed("action length not a multiple of 8"));
        }
        let len16 = u16::try_from(len).map_err(|_| Error::Malformed("action too long"))?;
        need(buf, len)?;
        buf[..len].fill(0);
        write_u16(buf, 0, kind);
        write_u16(buf, 2, len16);
        match self {
            Action::Output { port, max_len } if version == Version::V1_0 => {
                let port = u16::try_from(*port).map_err(|_| Error::Malformed("openflow 1.0 port above 0xffff"))?;
                write_u16(buf, 4, port);
                write_u16(buf, 6, *max_len);
            }
            Action::Output { port, max_len } => {
                write_u32(buf, 4, *port);
                write_u16(buf, 8, *max_len);
            }
            Action::SetVlanVid(v) | Action::PushVlan(v) => write_u16(buf, 4, *v),
            Action::PopVlan => {}
            Action::Enqueue { port, queue_id } => {
                write_u16(buf, 4, *port);
                write_u32(buf, 12, *queue_id);
            }
            Action::SetQueue(v) | Action::Group(v) => write_u32(buf, 4, *v),
            Action::SetField(f) => f.emit(&mut buf[4..])?,
            Action::Unknown { data, .. } => buf[4..len].copy_from_slice(data),
        }
        Ok(())
    }
}

/// Reads a list of actions filling `b` exactly.
pub fn parse_actions(version: Version, mut b: &[u8]) -> Result<Vec<Action>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let (a, used) = Action::parse(version, b)?;
        out.push(a);
        b = &b[used..];
    }
    Ok(out)
}

/// Bytes a list of actions emits.
#[inline]
pub fn actions_len(version: Version, actions: &[Action]) -> usize {
    actions.iter().map(|a| a.buffer_len(version)).sum()
}

/// Writes a list of actions into the start of `buf`.
#[inline]
pub fn emit_actions(version: Version, actions: &[Action], buf: &mut [u8]) -> Result<()> {
    let mut at = 0;
    for a in actions {
        need(buf, at)?;
        a.emit(version, &mut buf[at..])?;
        at += a.buffer_len(version);
    }
    Ok(())
}

/// An OpenFlow 1.3 instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Instruction {
    /// `goto_table` (1).
    GotoTable(u8),
    /// `write_metadata` (2).
    WriteMetadata {
        /// Metadata value.
        metadata: u64,
        /// Bits of the metadata to write.
        mask: u64,
    },
    /// `write_actions` (3): merge into the action set.
    WriteActions(Vec<Action>),
    /// `apply_actions` (4): apply at once.
    ApplyActions(Vec<Action>),
    /// `clear_actions` (5).
    ClearActions,
    /// `meter` (6).
    Meter(u32),
    /// Any other instruction: its type and the bytes after the 4-byte header.
    Unknown {
        /// Instruction type.
        kind: u16,
        /// Bytes after the header.
        data: Vec<u8>,
    },
}

impl Instruction {
    /// The instruction type code.
    pub fn kind(&self) -> u16 {
        match self {
            Instruction::GotoTable(_) => 1,
            Instruction::WriteMetadata { .. } => 2,
            Instruction::WriteActions(_) => 3,
            Instruction::ApplyActions(_) => 4,
            Instruction::ClearActions => 5,
            Instruction::Meter(_) => 6,
            Instruction::Unknown { kind, .. } => *kind,
        }
    }
    /// Bytes this instruction emits.
    #[inline]
    pub fn buffer_len(&self) -> usize {
        match self {
            Instruction::WriteMetadata { .. } => 24,
            Instruction::WriteActions(a) | Instruction::ApplyActions(a) => 8 + actions_len(Version::V1_3, a),
            Instruction::Unknown { data, .. } => 4 + data.len(),
            _ => 8,
        }
    }
    /// Reads one instruction from the start of `b`; returns it and its length.
    pub fn parse(b: &[u8]) -> Result<(Instruction, usize)> {
        let (kind, b) = tlv8(b, "instruction length")?;
        let len = b.len();
        let exact = |n: usize| exact_len(len, n, "instruction length");
        let i = match kind {
            1 => {
                exact(8)?;
                Instruction::GotoTable(b[4])
            }
            2 => {
                exact(24)?;
                Instruction::WriteMetadata {
                    metadata: read_u64(b, 8),
                    mask: read_u64(b, 16),
                }
            }
            3 => Instruction::WriteActions(parse_actions(Version::V1_3, &b[8..])?),
            4 => Instruction::ApplyActions(parse_actions(Version::V1_3, &b[8..])?),
            5 => {
                exact(8)?;
                Instruction::ClearActions
            }
            6 => {
                exact(8)?;
                Instruction::Meter(read_u32(b, 4))
            }
            _ => Instruction::Unknown {
                kind,
                data: b[4..].to_vec(),
            },
        };
        Ok((i, len))
    }
    /// Writes the instruction into the start of `buf` (padding zeroed).
    #[inline]
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len();
        if !len.is_multiple_of(8) {
            return Err(Error::Malformed("instruction length not a multiple of 8"));
        }
        let len16 = u16::try_from(len).map_err(|_| Error::Malformed("instruction too long"))?;
        need(buf, len)?;
        buf[..len].fill(0);
        write_u16(buf, 0, self.kind());
        write_u16(buf, 2, len16);
        match self {
            Instruction::GotoTable(t) => buf[4] = *t,
            Instruction::WriteMetadata { metadata, mask } => {
                write_u64(buf, 8, *metadata);
                write_u64(buf, 16, *mask);
            }
            Instruction::WriteActions(a) | Instruction::ApplyActions(a) => {
                emit_actions(Version::V1_3, a, &mut buf[8..len])?
            }
            Instruction::ClearActions => {}
            Instruction::Meter(m) => write_u32(buf, 4, *m),
            Instruction::Unknown { data, .. } => buf[4..len].copy_from_slice(data),
        }
        Ok(())
    }
}

/// Reads a list of instructions filling `b` exactly.
pub fn parse_instructions(mut b: &[u8]) -> Result<Vec<Instruction>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let (i, used) = Instruction::parse(b)?;
        out.push(i);
        b = &b[used..];
    }
    Ok(out)
}

/// Bytes a list of instructions emits.
pub fn instructions_len(instructions: &[Instruction]) -> usize {
    instructions.iter().map(Instruction::buffer_len).sum()
}

/// Writes a list of instructions into the start of `buf`.
pub fn emit_instructions(instructions: &[Instruction], buf: &mut [u8]) -> Result<()> {
    let mut at = 0;
    for i in instructions {
        need(buf, at)?;
        i.emit(&mut buf[at..])?;
        at += i.buffer_len();
    }
    Ok(())
}

/// Reads the type and length of the action or instruction TLV at the start of `b` (a length of
/// at least 8 and a multiple of 8, as both specifications require) and returns the type and the
/// TLV's bytes; `what` names the field in the error.
fn tlv8<'a>(b: &'a [u8], what: &'static str) -> Result<(u16, &'a [u8])> {
    need(b, 4)?;
    let len = usize::from(read_u16(b, 2));
    if len < 8 || len % 8 != 0 {
        return Err(Error::Malformed(what));
    }
    need(b, len)?;
    Ok((read_u16(b, 0), &b[..len]))
}

/// `Ok` when a TLV of a fixed-size kind has exactly that size.
fn exact_len(len: usize, n: usize, what: &'static str) -> Result<()> {
    if len == n {
        Ok(())
    } else {
        Err(Error::Malformed(what))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::openflow::matches::tests::any_oxm_field;
    use proptest::prelude::*;

    #[test]
    fn of10_action_bytes() {
        let list = [
            0, 0, 0, 8, 0, 2, 0, 0, // output port 2
            0, 1, 0, 8, 0, 100, 0, 0, // set_vlan_vid 100
            0, 3, 0, 8, 0, 0, 0, 0, // strip_vlan
            0, 11, 0, 16, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, // enqueue port 5 queue 7
            0, 4, 0, 16, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, // set_dl_src: kept raw
        ];
        let a = parse_actions(Version::V1_0, &list).unwrap();
        assert_eq!(
            a,
            vec![
                Action::Output { port: 2, max_len: 0 },
                Action::SetVlanVid(100),
                Action::PopVlan,
                Action::Enqueue { port: 5, queue_id: 7 },
                Action::Unknown {
                    kind: 4,
                    data: vec![2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
                },
            ]
        );
        let mut out = vec![0xffu8; actions_len(Version::V1_0, &a)];
        emit_actions(Version::V1_0, &a, &mut out).unwrap();
        assert_eq!(out, list);
        assert!(Action::Group(1).kind(Version::V1_0).is_err());
        assert!(matches!(
            Action::parse(Version::V1_0, &list[..4]),
            Err(Error::Truncated)
        ));
        assert!(matches!(
            Action::parse(Version::V1_0, &[0, 0, 0, 6, 0, 0]),
            Err(Error::Malformed(_))
        ));
    }

    #[test]
    fn of13_instruction_bytes() {
        let instrs = vec![
            Instruction::ApplyActions(vec![
                Action::PushVlan(0x8100),
                Action::SetField(OxmField::VlanVid(0x1000 | 10, None)),
                Action::Output {
                    port: 0xffff_fffd,
                    max_len: 0xffff,
                },
            ]),
            Instruction::GotoTable(1),
            Instruction::Meter(3),
        ];
        let expected: Vec<u8> = [
            &[0, 4, 0, 48, 0, 0, 0, 0][..], // apply_actions, 8 + 8 + 16 + 16
            &[0, 17, 0, 8, 0x81, 0, 0, 0],  // push_vlan 0x8100
            &[0, 25, 0, 16, 0x80, 0, 12, 2, 0x10, 10, 0, 0, 0, 0, 0, 0], // set_field vlan_vid
            &[0, 0, 0, 16, 0xff, 0xff, 0xff, 0xfd, 0xff, 0xff, 0, 0, 0, 0, 0, 0], // output controller
            &[0, 1, 0, 8, 1, 0, 0, 0],      // goto_table 1
            &[0, 6, 0, 8, 0, 0, 0, 3],      // meter 3
        ]
        .concat();
        let mut out = vec![0xffu8; instructions_len(&instrs)];
        emit_instructions(&instrs, &mut out).unwrap();
        assert_eq!(out, expected);
        assert_eq!(parse_instructions(&expected).unwrap(), instrs);
        assert!(matches!(parse_instructions(&expected[..47]), Err(Error::Truncated)));
        let wm = Instruction::WriteMetadata { metadata: 1, mask: 3 };
        let mut b = [0u8; 24];
        wm.emit(&mut b).unwrap();
        assert_eq!(b[..4], [0, 2, 0, 24]);
        assert_eq!(Instruction::parse(&b).unwrap(), (wm, 24));
    }

    pub(crate) fn any_action(version: Version) -> BoxedStrategy<Action> {
        let unknown = |known: &'static [u16]| {
            (any::<u16>(), prop_oneof![Just(4usize), Just(12)], any::<u8>())
                .prop_filter("not a modelled action", move |(k, _, _)| !known.contains(k))
                .prop_map(|(kind, n, x)| Action::Unknown { kind, data: vec![x; n] })
        };
        if version == Version::V1_0 {
            prop_oneof![
                (any::<u16>(), any::<u16>()).prop_map(|(p, max_len)| Action::Output {
                    port: u32::from(p),
                    max_len
                }),
                any::<u16>().prop_map(Action::SetVlanVid),
                Just(Action::PopVlan),
                (any::<u16>(), any::<u32>()).prop_map(|(port, queue_id)| Action::Enqueue { port, queue_id }),
                unknown(&[0, 1, 3, 11]),
            ]
            .boxed()
        } else {
            prop_oneof![
                (any::<u32>(), any::<u16>()).prop_map(|(port, max_len)| Action::Output { port, max_len }),
                any::<u16>().prop_map(Action::PushVlan),
                Just(Action::PopVlan),
                any::<u32>().prop_map(Action::SetQueue),
                any::<u32>().prop_map(Action::Group),
                any_oxm_field().prop_map(Action::SetField),
                unknown(&[0, 17, 18, 21, 22, 25]),
            ]
            .boxed()
        }
    }

    pub(crate) fn any_instruction() -> impl Strategy<Value = Instruction> {
        let actions = || proptest::collection::vec(any_action(Version::V1_3), 0..3);
        prop_oneof![
            any::<u8>().prop_map(Instruction::GotoTable),
            any::<(u64, u64)>().prop_map(|(metadata, mask)| Instruction::WriteMetadata { metadata, mask }),
            actions().prop_map(Instruction::WriteActions),
            actions().prop_map(Instruction::ApplyActions),
            Just(Instruction::ClearActions),
            any::<u32>().prop_map(Instruction::Meter),
            (7u16.., prop_oneof![Just(4usize), Just(12)])
                .prop_map(|(kind, n)| Instruction::Unknown { kind, data: vec![0; n] }),
        ]
    }

    proptest! {
        #[test]
        fn action_round_trip(v in prop_oneof![Just(Version::V1_0), Just(Version::V1_3)]
                             .prop_flat_map(|v| (Just(v), proptest::collection::vec(any_action(v), 0..4)))) {
            let (version, a) = v;
            let mut buf = vec![0u8; actions_len(version, &a)];
            emit_actions(version, &a, &mut buf).unwrap();
            prop_assert_eq!(parse_actions(version, &buf).unwrap(), a);
        }

        #[test]
        fn instruction_round_trip(i in proptest::collection::vec(any_instruction(), 0..4)) {
            let mut buf = vec![0u8; instructions_len(&i)];
            emit_instructions(&i, &mut buf).unwrap();
            prop_assert_eq!(parse_instructions(&buf).unwrap(), i);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..96)) {
            for v in [Version::V1_0, Version::V1_3] {
                if let Ok(a) = parse_actions(v, &data) {
                    let mut buf = vec![0u8; actions_len(v, &a)];
                    emit_actions(v, &a, &mut buf).unwrap();
                    prop_assert_eq!(parse_actions(v, &buf).unwrap(), a);
                }
            }
            if let Ok(i) = parse_instructions(&data) {
                let mut buf = vec![0u8; instructions_len(&i)];
                emit_instructions(&i, &mut buf).unwrap();
                prop_assert_eq!(parse_instructions(&buf).unwrap(), i);
            }
        }
    }
}
