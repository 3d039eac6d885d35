//! Hosts' frames as real bytes: Ethernet II, IPv4 (with its checksum) and a UDP or TCP header,
//! carrying the model's packet id so the receiving host finds the packet's record again.
//!
//! * UDP: the id is the first 8 bytes of the datagram's payload (UDP checksum filled in);
//! * TCP: the 20-byte header (ports, sequence and acknowledgment numbers, flags, window) is
//!   followed by the option bytes the record accounts for (the timestamps option of every
//!   segment, more on a SYN); their first 10 bytes are an experimental option (kind 253,
//!   RFC 6994) holding the id, the rest NOPs. The TCP checksum is left zero: no model verifies it.
//!
//! The frame's length is the record's wire size (without FCS), so serialization is exact.

use tandem_sim::packet::{Packet, Proto};
use tandem_wire::ethernet::EthernetRepr;
use tandem_wire::ipv4::{Ecn, Ipv4Repr};
use tandem_wire::udp::UdpRepr;
use tandem_wire::{EtherType, IpProtocol, Ipv4Addr, MacAddr};

/// Ethernet header bytes.
pub const ETH_LEN: usize = 14;
/// IPv4 header bytes (no options).
pub const IP_LEN: usize = 20;
/// Offset of the id in a UDP frame.
pub const UDP_ID_AT: usize = ETH_LEN + IP_LEN + 8;
/// Offset of the id in a TCP frame (inside the experimental option).
pub const TCP_ID_AT: usize = ETH_LEN + IP_LEN + 20 + 2;
/// The experimental TCP option kind that carries the id (RFC 6994).
pub const ID_OPTION_KIND: u8 = 253;
/// Shortest TCP option space that holds the id option.
const ID_OPTION_LEN: usize = 10;

/// Layer 2 and 3 addressing of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addressing {
    /// Destination MAC (the real one, or the masqueraded one an Axon handed out).
    pub dst_mac: MacAddr,
    /// Source MAC.
    pub src_mac: MacAddr,
    /// Source IPv4 address.
    pub src_ip: Ipv4Addr,
    /// Destination IPv4 address.
    pub dst_ip: Ipv4Addr,
}

fn eth_ip(buf: &mut [u8], a: &Addressing, protocol: IpProtocol, ecn: Ecn) {
    let eth = EthernetRepr {
        dst: a.dst_mac,
        src: a.src_mac,
        vlan: None,
        ethertype: EtherType::IPV4,
    };
    let ip = Ipv4Repr {
        src: a.src_ip,
        dst: a.dst_ip,
        protocol,
        payload_len: (buf.len() - ETH_LEN - IP_LEN).min(usize::from(u16::MAX) - IP_LEN) as u16,
        dscp: 0,
        ecn,
        ident: 0,
        dont_frag: true,
        ttl: 64,
    };
    // Both emits only fail on a short buffer; callers size it to hold both headers.
    let _ = eth.emit(buf);
    let _ = ip.emit(&mut buf[ETH_LEN..]);
}

/// A UDP frame of `len` bytes (at least 50: headers and the id) carrying `id`.
pub fn udp_frame(a: &Addressing, src_port: u16, dst_port: u16, len: usize, id: u64) -> Vec<u8> {
    let len = len.max(UDP_ID_AT + 8);
    let mut f = vec![0u8; len];
    eth_ip(&mut f, a, IpProtocol::UDP, Ecn::NotEct);
    f[UDP_ID_AT..UDP_ID_AT + 8].copy_from_slice(&id.to_be_bytes());
    let udp = UdpRepr {
        src_port,
        dst_port,
        payload_len: (len - UDP_ID_AT) as u16,
    };
    let _ = udp.emit(&mut f[ETH_LEN + IP_LEN..], a.src_ip, a.dst_ip);
    f
}

/// The frame of a TCP record (`p.size` bytes, or more if its options cannot hold the id).
pub fn tcp_frame(a: &Addressing, p: &Packet, id: u64) -> Vec<u8> {
    let base = ETH_LEN + IP_LEN + 20;
    let payload = p.payload as usize;
    let opts = (p.size as usize).saturating_sub(base + payload).max(ID_OPTION_LEN);
    let len = base + opts + payload;
    let mut f = vec![0u8; len];
    eth_ip(&mut f, a, IpProtocol::TCP, p.ecn);
    let t = &mut f[ETH_LEN + IP_LEN..];
    t[0..2].copy_from_slice(&p.src_port.to_be_bytes());
    t[2..4].copy_from_slice(&p.dst_port.to_be_bytes());
    t[4..8].copy_from_slice(&p.seq.to_be_bytes());
    t[8..12].copy_from_slice(&p.ack.to_be_bytes());
    let words = ((20 + opts) / 4).min(15) as u16;
    let flags = p.flags.0 & 0x01ff;
    t[12..14].copy_from_slice(&((words << 12) | flags).to_be_bytes());
    t[14..16].copy_from_slice(&(p.window.min(u32::from(u16::MAX)) as u16).to_be_bytes());
    t[20] = ID_OPTION_KIND;
    t[21] = ID_OPTION_LEN as u8;
    t[22..30].copy_from_slice(&id.to_be_bytes());
    t[30..20 + opts].fill(1);
    f
}

/// What a host makes of a received frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    /// An IPv4 UDP or TCP frame with the model's id.
    Data {
        /// The protocol.
        proto: Proto,
        /// The id.
        id: u64,
    },
    /// An 802.3x PAUSE for this many quanta.
    Pause(u16),
    /// Anything else (ARP announcements, frames for other hosts).
    Other,
}

/// Reads a frame's destination MAC, kind and id.
pub fn parse(frame: &[u8]) -> (MacAddr, Parsed) {
    let Ok(eth) = tandem_wire::ethernet::Frame::new_checked(frame) else {
        return (MacAddr([0; 6]), Parsed::Other);
    };
    let dst = eth.dst_addr();
    let et = eth.ethertype();
    if et == EtherType::MAC_CONTROL {
        let q = tandem_wire::pause::Packet::new_checked(eth.payload())
            .ok()
            .and_then(|p| tandem_wire::pause::PauseRepr::parse(&p).ok());
        return match q {
            Some(tandem_wire::pause::PauseRepr::Pause { quanta }) => (dst, Parsed::Pause(quanta)),
            _ => (dst, Parsed::Other),
        };
    }
    if et != EtherType::IPV4 || frame.len() < ETH_LEN + IP_LEN {
        return (dst, Parsed::Other);
    }
    let read_id = |at: usize| {
        frame
            .get(at..at + 8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_be_bytes)
    };
    let parsed = match frame[ETH_LEN + 9] {
        17 => read_id(UDP_ID_AT).map(|id| Parsed::Data { proto: Proto::Udp, id }),
        6 if frame.get(TCP_ID_AT - 2) == Some(&ID_OPTION_KIND) => {
            read_id(TCP_ID_AT).map(|id| Parsed::Data { proto: Proto::Tcp, id })
        }
        _ => None,
    };
    (dst, parsed.unwrap_or(Parsed::Other))
}

/// A gratuitous ARP announcement from a host (so learning switches know where it is).
pub fn arp_announcement(mac: MacAddr, ip: Ipv4Addr) -> Vec<u8> {
    let mut f = vec![0u8; 60];
    let eth = EthernetRepr {
        dst: MacAddr::BROADCAST,
        src: mac,
        vlan: None,
        ethertype: EtherType::ARP,
    };
    let _ = eth.emit(&mut f);
    let a = &mut f[ETH_LEN..];
    a[0..8].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    a[8..14].copy_from_slice(&mac.0);
    a[14..18].copy_from_slice(&ip.octets());
    a[24..28].copy_from_slice(&ip.octets());
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_wire::tcp::Flags;

    fn addr() -> Addressing {
        Addressing {
            dst_mac: MacAddr([2, 0x10, 0, 0, 0, 2]),
            src_mac: MacAddr([2, 0x10, 0, 0, 0, 1]),
            src_ip: Ipv4Addr::new(10, 0, 0, 1),
            dst_ip: Ipv4Addr::new(10, 0, 0, 2),
        }
    }

    #[test]
    fn ids_round_trip() {
        let f = udp_frame(&addr(), 1, 2, 1514, 77);
        assert_eq!(f.len(), 1514);
        let ip = tandem_wire::ipv4::Packet::new_checked(&f[ETH_LEN..]).unwrap();
        assert!(Ipv4Repr::parse(&ip).is_ok());
        assert_eq!(
            parse(&f),
            (
                addr().dst_mac,
                Parsed::Data {
                    proto: Proto::Udp,
                    id: 77
                }
            )
        );
        let p = Packet {
            size: 66,
            payload: 0,
            flags: Flags::ACK,
            proto: Proto::Tcp,
            ..Packet::default()
        };
        let f = tcp_frame(&addr(), &p, 1 << 40);
        assert_eq!(f.len(), 66);
        assert_eq!(
            parse(&f).1,
            Parsed::Data {
                proto: Proto::Tcp,
                id: 1 << 40
            }
        );
        assert_eq!(parse(&arp_announcement(addr().src_mac, addr().src_ip)).1, Parsed::Other);
        let pause = crate::self_congestion::pause_frame(addr().src_mac, 24);
        assert_eq!(parse(&pause).1, Parsed::Pause(24));
    }
}
