//! What the generator counts as a response, the way cbench does: a flow_mod that adds
//! (ADD or MODIFY_STRICT) or a packet_out whose frame is not LLDP. Read straight from the bytes,
//! so the generator stays cheap next to the controller it measures.

use tandem_wire::openflow::Version;

/// The flow_mod type code in 1.0 and 1.3.
const FLOW_MOD10: u8 = 14;
const FLOW_MOD13: u8 = 14;
/// The packet_out type code in 1.0 and 1.3.
const PACKET_OUT: u8 = 13;
/// `OFPFC_ADD` and `OFPFC_MODIFY_STRICT`.
const ADD: u16 = 0;
const MODIFY_STRICT: u16 = 2;
/// `OFP_NO_BUFFER`.
const NO_BUFFER: u32 = 0xffff_ffff;
/// The LLDP EtherType.
const LLDP: u16 = 0x88cc;

/// A counted response and the buffer id it names (`OFP_NO_BUFFER` when none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    /// The buffer id the message refers to.
    pub buffer_id: u32,
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Classifies one whole message (header included); `None` when it is not a counted response.
pub fn classify(msg: &[u8]) -> Option<Response> {
    let version = Version(*msg.first()?);
    let code = *msg.get(1)?;
    match (version, code) {
        // ofp_flow_mod 1.0: header 8, match 40, cookie 8, command 2 (at 56), timeouts 4,
        // priority 2, buffer_id 4 (at 64).
        (Version::V1_0, FLOW_MOD10) => {
            let cmd = u16_at(msg, 56)?;
            (cmd == ADD || cmd == MODIFY_STRICT).then_some(Response {
                buffer_id: u32_at(msg, 64)?,
            })
        }
        // ofp_flow_mod 1.3: header 8, cookie 8, mask 8, table 1, command 1 (at 25), timeouts 4,
        // priority 2, buffer_id 4 (at 32).
        (Version::V1_3, FLOW_MOD13) => {
            let cmd = u16::from(*msg.get(25)?);
            (cmd == ADD || cmd == MODIFY_STRICT).then_some(Response {
                buffer_id: u32_at(msg, 32)?,
            })
        }
        (Version::V1_0 | Version::V1_3, PACKET_OUT) => {
            let buffer_id = u32_at(msg, 8)?;
            // 1.0: in_port 2, actions_len 2 -> actions at 16; 1.3: in_port 4, actions_len 2,
            // pad 6 -> actions at 24.
            let (len_at, actions_at) = if version == Version::V1_0 { (14, 16) } else { (16, 24) };
            let data_at = actions_at + usize::from(u16_at(msg, len_at)?);
            let ethertype = if buffer_id == NO_BUFFER {
                u16_at(msg, data_at + 12)
            } else {
                None
            };
            (ethertype != Some(LLDP)).then_some(Response { buffer_id })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_wire::openflow::{
        Action, Body, FlowMatch, FlowMod, FlowModCommand, Match10, Message, OxmMatch, PacketOut,
    };

    fn fm(version: Version, command: FlowModCommand, buffer_id: u32) -> Vec<u8> {
        let matches = if version == Version::V1_0 {
            FlowMatch::V10(Match10::default())
        } else {
            FlowMatch::Oxm(OxmMatch::default())
        };
        let f = FlowMod {
            command,
            buffer_id,
            matches,
            ..FlowMod::default()
        };
        Message {
            version,
            xid: 1,
            body: Body::FlowMod(f),
        }
        .to_bytes()
        .unwrap()
    }

    fn po(version: Version, buffer_id: u32, ethertype: u16) -> Vec<u8> {
        let mut data = vec![0u8; 60];
        data[12..14].copy_from_slice(&ethertype.to_be_bytes());
        let p = PacketOut {
            buffer_id,
            in_port: 1,
            actions: vec![Action::Output { port: 2, max_len: 0 }],
            data: if buffer_id == NO_BUFFER { data } else { Vec::new() },
        };
        Message {
            version,
            xid: 1,
            body: Body::PacketOut(p),
        }
        .to_bytes()
        .unwrap()
    }

    #[test]
    fn counts_what_cbench_counts() {
        for v in [Version::V1_0, Version::V1_3] {
            assert_eq!(
                classify(&fm(v, FlowModCommand::Add, 7)),
                Some(Response { buffer_id: 7 }),
                "{v:?}"
            );
            assert!(classify(&fm(v, FlowModCommand::ModifyStrict, 7)).is_some());
            assert_eq!(classify(&fm(v, FlowModCommand::Delete, 7)), None);
            assert_eq!(classify(&po(v, 9, 0)), Some(Response { buffer_id: 9 }));
            assert_eq!(
                classify(&po(v, NO_BUFFER, 0x0800)),
                Some(Response { buffer_id: NO_BUFFER })
            );
            assert_eq!(classify(&po(v, NO_BUFFER, LLDP)), None);
        }
        assert_eq!(classify(&[1, 14, 0]), None);
        assert_eq!(classify(&[]), None);
    }
}
