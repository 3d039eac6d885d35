//! The hosts' DHCP client: DISCOVER, REQUEST of the offered address, bound on ACK (RFC 2131's
//! plain exchange, no renewal), broadcast from `0.0.0.0:68` to `255.255.255.255:67`.

use tandem_wire::dhcp::{self, BootpOp, DhcpMessageType, DhcpRepr};
use tandem_wire::ethernet::Frame;
use tandem_wire::ipv4;
use tandem_wire::udp;
use tandem_wire::{EtherType, IpProtocol, Ipv4Addr, MacAddr};

/// A client message of type `t` from `mac`; a REQUEST names the offered address and server.
pub fn message(t: DhcpMessageType, mac: MacAddr, xid: u32, offer: Option<(Ipv4Addr, Ipv4Addr)>) -> DhcpRepr {
    DhcpRepr {
        op: BootpOp::Request,
        hops: 0,
        xid,
        secs: 0,
        flags: 0,
        client_ip: Ipv4Addr::UNSPECIFIED,
        your_ip: Ipv4Addr::UNSPECIFIED,
        server_ip: Ipv4Addr::UNSPECIFIED,
        relay_ip: Ipv4Addr::UNSPECIFIED,
        client_mac: mac,
        message_type: t,
        subnet_mask: None,
        routers: vec![],
        dns_servers: vec![],
        host_name: None,
        requested_ip: offer.map(|o| o.0),
        lease_time: None,
        server_id: offer.map(|o| o.1),
        parameter_request_list: vec![],
        client_id: None,
        other_options: vec![],
    }
}

/// The broadcast Ethernet/IPv4/UDP frame carrying a client message.
pub fn frame(d: &DhcpRepr) -> Option<Vec<u8>> {
    crate::control::frames::dhcp_frame_ports(
        MacAddr::BROADCAST,
        d.client_mac,
        (Ipv4Addr::UNSPECIFIED, Ipv4Addr::BROADCAST),
        (dhcp::CLIENT_PORT, dhcp::SERVER_PORT),
        d,
    )
}

/// A server's message to the client port in an Ethernet frame, if that is what it is.
pub fn parse_reply(frame: &[u8]) -> Option<DhcpRepr> {
    let e = Frame::new_checked(frame).ok()?;
    if e.ethertype() != EtherType::IPV4 {
        return None;
    }
    let ip = ipv4::Packet::new_checked(e.payload()).ok()?;
    if ip.protocol() != IpProtocol::UDP {
        return None;
    }
    let u = udp::Packet::new_checked(ip.payload()).ok()?;
    if u.dst_port() != dhcp::CLIENT_PORT {
        return None;
    }
    DhcpRepr::parse(&dhcp::Packet::new_checked(u.payload()).ok()?).ok()
}
