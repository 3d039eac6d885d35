//! A fast, allocation-free summary of one captured frame: what flow tools need (link layer,
//! VLAN, IPv4 5-tuple, TCP flags, lengths) without building full `Repr`s or checking checksums
//! (captures taken with checksum offload routinely carry wrong ones).
//!
//! Partial data is still reported: a snapped capture whose TCP header was cut keeps its
//! addresses and protocol, with `l4_complete == false`.

use crate::ethernet::{self, EtherType};
use crate::field::read_u16;
use crate::ipv4::{self, IpProtocol};
use crate::pcap::LinkType;
use crate::tcp::Flags;
use std::net::Ipv4Addr;

/// The network layer of a frame, as far as it could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Network {
    /// IPv4, summarised in [`FrameSummary::ipv4`].
    Ipv4,
    /// IPv6 (counted, not decoded further).
    Ipv6,
    /// ARP.
    Arp,
    /// 802.3x MAC control (PAUSE).
    MacControl,
    /// Another EtherType.
    Other(EtherType),
    /// A link type this decoder does not read.
    UnknownLink(u32),
    /// Too short or inconsistent to read the link or network header.
    Malformed,
}

/// What a frame's IPv4 and transport headers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Summary {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Transport protocol.
    pub protocol: IpProtocol,
    /// TCP/UDP source port; 0 for ICMP, other protocols and non-first fragments.
    pub src_port: u16,
    /// TCP/UDP destination port; for ICMP `type << 8 | code` (the NetFlow convention).
    pub dst_port: u16,
    /// TCP flags (empty for other protocols).
    pub tcp_flags: Flags,
    /// IPv4 total length field.
    pub total_len: u16,
    /// Transport payload bytes according to the headers (IP total length less IP and
    /// transport headers); for other protocols, the IP payload length.
    pub l4_payload_len: u16,
    /// Part of a fragmented datagram.
    pub fragment: bool,
    /// The transport header was fully captured (false for snapped or malformed headers).
    pub l4_complete: bool,
}

/// The summary of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSummary {
    /// Network layer kind.
    pub network: Network,
    /// Outermost VLAN ID, 0 when untagged.
    pub vlan: u16,
    /// IPv4 details when `network == Network::Ipv4` and the IPv4 header was readable.
    pub ipv4: Option<Ipv4Summary>,
}

impl FrameSummary {
    fn just(network: Network) -> FrameSummary {
        FrameSummary {
            network,
            vlan: 0,
            ipv4: None,
        }
    }
}

/// Summarises a frame of the given link type. Never panics, never allocates.
pub fn summarize(linktype: LinkType, data: &[u8]) -> FrameSummary {
    match linktype {
        LinkType::ETHERNET => {
            let Ok(frame) = ethernet::Frame::new_checked(data) else {
                return FrameSummary::just(Network::Malformed);
            };
            let vlan = frame.vlan().map_or(0, |t| t.vid);
            let mut s = network_layer(frame.ethertype(), frame.payload());
            s.vlan = vlan;
            s
        }
        LinkType::RAW | LinkType::IPV4 => match data.first().map(|b| b >> 4) {
            Some(4) => network_layer(EtherType::IPV4, data),
            Some(6) => FrameSummary::just(Network::Ipv6),
            _ => FrameSummary::just(Network::Malformed),
        },
        LinkType::LINUX_SLL => {
            // 16-byte header; the protocol (an EtherType) is in the last two bytes.
            if data.len() < 16 {
                return FrameSummary::just(Network::Malformed);
            }
            network_layer(EtherType(read_u16(data, 14)), &data[16..])
        }
        LinkType(other) => FrameSummary::just(Network::UnknownLink(other)),
    }
}

fn network_layer(ethertype: EtherType, payload: &[u8]) -> FrameSummary {
    match ethertype {
        EtherType::IPV4 => {
            let ipv4 = summarize_ipv4(payload);
            FrameSummary {
                network: if ipv4.is_some() {
                    Network::Ipv4
                } else {
                    Network::Malformed
                },
                vlan: 0,
                ipv4,
            }
        }
        EtherType::IPV6 => FrameSummary::just(Network::Ipv6),
        EtherType::ARP => FrameSummary::just(Network::Arp),
        EtherType::MAC_CONTROL => FrameSummary::just(Network::MacControl),
        other => FrameSummary::just(Network::Other(other)),
    }
}

/// Summarises an IPv4 packet (header checks only; checksums are not verified).
pub fn summarize_ipv4(data: &[u8]) -> Option<Ipv4Summary> {
    let ip = ipv4::Packet::new_unchecked(data);
    ip.check_header_len().ok()?;
    let hl = ip.header_len();
    let total_len = ip.total_len();
    let ip_payload_len = total_len - hl as u16;
    let first_fragment = ip.frag_offset() == 0;
    let mut s = Ipv4Summary {
        src: ip.src_addr(),
        dst: ip.dst_addr(),
        protocol: ip.protocol(),
        src_port: 0,
        dst_port: 0,
        tcp_flags: Flags::default(),
        total_len,
        l4_payload_len: ip_payload_len,
        fragment: ip.is_fragment(),
        l4_complete: false,
    };
    if !first_fragment {
        return Some(s);
    }
    let l4 = &data[hl..];
    match s.protocol {
        IpProtocol::TCP if l4.len() >= 14 => {
            s.src_port = read_u16(l4, 0);
            s.dst_port = read_u16(l4, 2);
            s.tcp_flags = Flags(read_u16(l4, 12) & 0x01ff);
            let thl = usize::from(l4[12] >> 4) * 4;
            s.l4_complete = thl >= 20 && l4.len() >= thl && usize::from(ip_payload_len) >= thl;
            s.l4_payload_len = ip_payload_len.saturating_sub(thl as u16);
        }
        IpProtocol::UDP if l4.len() >= 4 => {
            s.src_port = read_u16(l4, 0);
            s.dst_port = read_u16(l4, 2);
            s.l4_complete = l4.len() >= 8;
            s.l4_payload_len = ip_payload_len.saturating_sub(8);
        }
        IpProtocol::ICMP if l4.len() >= 2 => {
            s.dst_port = u16::from_be_bytes([l4[0], l4[1]]);
            s.l4_complete = l4.len() >= 8;
            s.l4_payload_len = ip_payload_len.saturating_sub(8);
        }
        _ => s.l4_complete = s.protocol != IpProtocol::TCP && s.protocol != IpProtocol::UDP,
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tcp_frame() -> Vec<u8> {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x81, 0x00, 0x00, 0x07, 0x08, 0x00]); // VLAN 7, IPv4
        f.extend_from_slice(&[0x45, 0, 0, 45, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend_from_slice(&[
            0x04, 0xd2, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0,
        ]);
        f.extend_from_slice(b"hello");
        f
    }

    #[test]
    fn summarizes_tagged_tcp() {
        let s = summarize(LinkType::ETHERNET, &tcp_frame());
        assert_eq!(s.network, Network::Ipv4);
        assert_eq!(s.vlan, 7);
        let ip = s.ipv4.unwrap();
        assert_eq!(
            (ip.src_port, ip.dst_port, ip.l4_payload_len, ip.l4_complete),
            (1234, 80, 5, true)
        );
        assert_eq!(ip.tcp_flags, Flags::ACK | Flags::PSH);
    }

    #[test]
    fn snapped_tcp_keeps_addresses() {
        let f = tcp_frame();
        let s = summarize(LinkType::ETHERNET, &f[..18 + 20 + 4]);
        let ip = s.ipv4.unwrap();
        assert_eq!(ip.src, Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(ip.src_port, 0);
        assert!(!ip.l4_complete);
    }

    #[test]
    fn raw_and_sll_links() {
        let f = tcp_frame();
        assert_eq!(summarize(LinkType::RAW, &f[18..]).ipv4.unwrap().dst_port, 80);
        let mut sll = vec![0u8; 14];
        sll.extend_from_slice(&[0x08, 0x00]);
        sll.extend_from_slice(&f[18..]);
        assert_eq!(summarize(LinkType::LINUX_SLL, &sll).ipv4.unwrap().src_port, 1234);
        assert_eq!(summarize(LinkType(147), &f).network, Network::UnknownLink(147));
    }

    proptest! {
        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..96), lt in prop_oneof![Just(1u32), Just(101), Just(113), Just(228)]) {
            let _ = summarize(LinkType(lt), &data);
        }
    }
}
