//! Building and reading the frames the control plane exchanges: host frames wrapped in an Axon
//! header of one hop (the host port, so the data plane strips it there), Axon control frames
//! along a source route, and the Ethernet, ARP, IPv4, UDP and DHCP layers inside.

use tandem_wire::arp::{self, ArpRepr};
use tandem_wire::axon::control::{self as ctl, ControlRepr};
use tandem_wire::axon::{AxonRepr, PacketType};
use tandem_wire::dhcp::{self, DhcpRepr};
use tandem_wire::ethernet::{EthernetRepr, HEADER_LEN as ETH_LEN};
use tandem_wire::ipv4::{self, Ecn, Ipv4Repr};
use tandem_wire::udp::{self, UdpRepr};
use tandem_wire::{EtherType, IpProtocol, Ipv4Addr, MacAddr};

/// Shortest Ethernet frame without FCS; shorter frames are padded.
pub const MIN_FRAME_LEN: usize = 60;

/// Wraps a host-bound Ethernet frame for [`crate::Event::FromControlPlane`]: one forward hop,
/// the host port.
pub fn to_host(port: u8, ethernet: &[u8]) -> Option<Vec<u8>> {
    AxonRepr::from_path(PacketType::Ethernet, &[port])
        .and_then(|h| h.to_frame(ethernet))
        .ok()
}

/// An Axon control frame that follows `forward` (the last hop `0xf` at the target Axon).
pub fn control_frame(forward: &[u8], msg: &ControlRepr) -> Option<Vec<u8>> {
    let mut body = vec![0u8; msg.buffer_len()];
    msg.emit(&mut body).ok()?;
    AxonRepr::from_path(PacketType::Control, forward)
        .and_then(|h| h.to_frame(&body))
        .ok()
}

/// Reads a control message body.
pub fn parse_control(body: &[u8]) -> Option<ControlRepr> {
    ctl::Packet::new_checked(body).and_then(|p| ControlRepr::parse(&p)).ok()
}

fn ethernet(dst: MacAddr, src: MacAddr, ethertype: EtherType, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; (ETH_LEN + payload.len()).max(MIN_FRAME_LEN)];
    let e = EthernetRepr {
        dst,
        src,
        vlan: None,
        ethertype,
    };
    // The buffer is always long enough for the header.
    let _ = e.emit(&mut f);
    f[ETH_LEN..ETH_LEN + payload.len()].copy_from_slice(payload);
    f
}

/// An Ethernet frame carrying an ARP packet.
pub fn arp_frame(dst: MacAddr, src: MacAddr, a: &ArpRepr) -> Vec<u8> {
    let mut body = [0u8; arp::ETHERNET_IPV4_LEN];
    let _ = a.emit(&mut body);
    ethernet(dst, src, EtherType::ARP, &body)
}

/// An Ethernet/IPv4/UDP frame from the DHCP server port to the client port carrying `d`.
pub fn dhcp_frame(dst: MacAddr, src: MacAddr, ip_src: Ipv4Addr, ip_dst: Ipv4Addr, d: &DhcpRepr) -> Option<Vec<u8>> {
    dhcp_frame_ports(dst, src, (ip_src, ip_dst), (dhcp::SERVER_PORT, dhcp::CLIENT_PORT), d)
}

/// An Ethernet/IPv4/UDP frame carrying `d` between the given addresses and UDP ports (a
/// server's reply, or a client's request).
pub fn dhcp_frame_ports(
    dst: MacAddr,
    src: MacAddr,
    (ip_src, ip_dst): (Ipv4Addr, Ipv4Addr),
    (src_port, dst_port): (u16, u16),
    d: &DhcpRepr,
) -> Option<Vec<u8>> {
    let dlen = d.buffer_len();
    let u = UdpRepr {
        src_port,
        dst_port,
        payload_len: u16::try_from(dlen).ok()?,
    };
    let ip = Ipv4Repr {
        src: ip_src,
        dst: ip_dst,
        protocol: IpProtocol::UDP,
        payload_len: u16::try_from(u.buffer_len()).ok()?,
        dscp: 0,
        ecn: Ecn::NotEct,
        ident: 0,
        dont_frag: false,
        ttl: 64,
    };
    let mut packet = vec![0u8; ip.total_len()];
    let hl = ip.header_len();
    d.emit(&mut packet[hl + 8..]).ok()?;
    u.emit(&mut packet[hl..], ip_src, ip_dst).ok()?;
    ip.emit(&mut packet).ok()?;
    Some(ethernet(dst, src, EtherType::IPV4, &packet))
}

/// Reads an ARP packet (an Ethernet payload).
pub fn parse_arp(payload: &[u8]) -> Option<ArpRepr> {
    arp::Packet::new_checked(payload).and_then(|p| ArpRepr::parse(&p)).ok()
}

/// Whether an IPv4 payload is UDP to the DHCP server port.
pub fn is_dhcp(payload: &[u8]) -> bool {
    let Ok(ip) = ipv4::Packet::new_checked(payload) else {
        return false;
    };
    ip.protocol() == IpProtocol::UDP
        && udp::Packet::new_checked(ip.payload()).is_ok_and(|u| u.dst_port() == dhcp::SERVER_PORT)
}

/// Reads a DHCP message from an IPv4 payload (checksums verified).
pub fn parse_dhcp(payload: &[u8]) -> Option<DhcpRepr> {
    let ip = ipv4::Packet::new_checked(payload).ok()?;
    if !ip.verify_checksum() {
        return None;
    }
    let u = udp::Packet::new_checked(ip.payload()).ok()?;
    UdpRepr::parse(&u, ip.src_addr(), ip.dst_addr()).ok()?;
    DhcpRepr::parse(&dhcp::Packet::new_checked(u.payload()).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_wire::arp::ArpOperation;
    use tandem_wire::dhcp::{BootpOp, DhcpMessageType};
    use tandem_wire::ethernet::Frame;

    #[test]
    fn arp_and_dhcp_frames_read_back() {
        let a = ArpRepr {
            operation: ArpOperation::Reply,
            sender_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            sender_ip: Ipv4Addr::new(10, 0, 0, 1),
            target_mac: MacAddr([2, 0, 0, 0, 0, 2]),
            target_ip: Ipv4Addr::new(10, 0, 0, 2),
        };
        let f = arp_frame(a.target_mac, a.sender_mac, &a);
        assert_eq!(f.len(), MIN_FRAME_LEN);
        let e = Frame::new_checked(&f[..]).unwrap();
        assert_eq!(e.ethertype(), EtherType::ARP);
        assert_eq!(parse_arp(e.payload()), Some(a));

        let d = DhcpRepr {
            op: BootpOp::Reply,
            hops: 0,
            xid: 7,
            secs: 0,
            flags: 0,
            client_ip: Ipv4Addr::UNSPECIFIED,
            your_ip: Ipv4Addr::new(10, 0, 0, 9),
            server_ip: Ipv4Addr::UNSPECIFIED,
            relay_ip: Ipv4Addr::UNSPECIFIED,
            client_mac: MacAddr([2, 0, 0, 0, 0, 9]),
            message_type: DhcpMessageType::Offer,
            subnet_mask: None,
            routers: vec![],
            dns_servers: vec![],
            host_name: None,
            requested_ip: None,
            lease_time: Some(60),
            server_id: None,
            parameter_request_list: vec![],
            client_id: None,
            other_options: vec![],
        };
        let f = dhcp_frame(MacAddr::BROADCAST, a.sender_mac, a.sender_ip, Ipv4Addr::BROADCAST, &d).unwrap();
        let e = Frame::new_checked(&f[..]).unwrap();
        assert!(!is_dhcp(e.payload()), "to the client port, not the server port");
        assert_eq!(parse_dhcp(e.payload()), Some(d));
    }
}
