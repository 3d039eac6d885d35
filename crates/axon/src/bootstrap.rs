//! The bootstrap exchange (§3.1.3) that tells Axon ports from host ports.
//!
//! When a link comes up the device sends a hello on it: a control frame whose forward path is
//! `[0xf]` (the neighbor's control plane) and whose reverse path is `[0xf]` (ours), so the
//! neighbor's reverse path after one hop, `[its input port, 0xf]`, routes back to our control
//! plane. A device that receives a hello marks the port an Axon port and answers with a hello
//! reply; a reply marks the port too. A host never sends one (and drops ours: its first byte reads
//! as a unicast, locally administered destination MAC), so a port that hears no hello within the
//! bootstrap timeout is a host port.

use tandem_wire::axon::control::{self, ControlRepr, Hello};
use tandem_wire::axon::{AxonRepr, Packet, PacketType, CONTROL_PORT};

/// A hello (or, with `reply`, a hello reply) to send out of `port`.
pub fn hello_frame(device_id: u64, port: u8, reply: bool) -> Vec<u8> {
    let h = Hello { port, device_id };
    let msg = if reply {
        ControlRepr::HelloReply(h)
    } else {
        ControlRepr::Hello(h)
    };
    let header = AxonRepr {
        packet_type: PacketType::Control,
        forward: vec![CONTROL_PORT],
        reverse: vec![CONTROL_PORT],
    };
    let mut body = vec![0u8; msg.buffer_len()];
    // Emits fail only on short buffers or ports above 15; the device has at most 15 ports.
    let _ = msg.emit(&mut body);
    let mut f = header.to_frame(&body).unwrap_or_default();
    f.resize(f.len().max(60), 0);
    f
}

/// If `frame` is a hello or hello reply bound for this control plane: whether it is a reply, and
/// what it says.
pub fn parse_hello(frame: &[u8]) -> Option<(bool, Hello)> {
    let p = Packet::new_checked(frame).ok()?;
    if p.packet_type() != PacketType::Control || p.next_hop() != Some(CONTROL_PORT) {
        return None;
    }
    match ControlRepr::parse(&control::Packet::new_checked(p.payload()).ok()?).ok()? {
        ControlRepr::Hello(h) => Some((false, h)),
        ControlRepr::HelloReply(h) => Some((true, h)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_round_trip() {
        let f = hello_frame(42, 3, false);
        assert_eq!(&f[..7], &[0x06, 0x00, 0x70, 0x01, 0x00, 0x1f, 0xf0]);
        assert_eq!(f.len(), 60);
        assert_eq!(parse_hello(&f), Some((false, Hello { port: 3, device_id: 42 })));
        assert_eq!(parse_hello(&hello_frame(42, 3, true)).map(|h| h.0), Some(true));
        // Not a hello: a host frame, or a hello whose next hop is not the control plane.
        assert_eq!(parse_hello(&[0xff; 60]), None);
        let mut g = f.clone();
        g[5] = 0x12;
        assert_eq!(parse_hello(&g), None);
    }
}
