//! Control plane tests on the [`crate::testbed`]: its event loop moves frames between Device +
//! ControlPlane pairs and hosts that answer ARP for their own address; every frame a host gets is
//! kept.

use super::dhcp_server::tests::client;
use super::*;
use crate::config::DeviceConfig;
use crate::dataplane::Event;
use crate::testbed::{FailureNotice, Host, HostId, Testbed};
use tandem_wire::arp::{ArpOperation, ArpRepr};
use tandem_wire::axon::control::{ControlKind, ControlRepr};
use tandem_wire::dhcp::{self, DhcpRepr};
use tandem_wire::ethernet::{EthernetRepr, Frame};
use tandem_wire::ipv4::{self, Ecn, Ipv4Repr};
use tandem_wire::udp::{self, UdpRepr};
use tandem_wire::IpProtocol;

const GBPS: u64 = 1_000_000_000;
const DATA: EtherType = EtherType(0x88b5);

fn pool(d: u64) -> DhcpPool {
    let d = d as u8;
    DhcpPool {
        server_ip: Ipv4Addr::new(10, 0, d, 1),
        subnet_mask: Ipv4Addr::new(255, 255, 0, 0),
        first: Ipv4Addr::new(10, 0, d, 10),
        last: Ipv4Addr::new(10, 0, d, 200),
        lease_secs: 100,
    }
}

fn host_mac(d: u64, port: u8) -> MacAddr {
    MacAddr([0x00, 0x16, 0x3e, 0, d as u8, port])
}

fn host_ip(d: u64, n: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, d as u8, 100 + n)
}

/// A line `1 - 2 - ... - n` (port 0 toward lower ids, port 1 toward higher) or a ring.
fn topo_text(n: u64, ring: bool) -> String {
    let mut s = String::new();
    for d in 1..=n {
        s += &format!("axon {d} 10.0.{d}.10 10.0.{d}.200\n");
    }
    for d in 1..n {
        s += &format!("link {d}.1 {}.0\n", d + 1);
    }
    if ring {
        s += &format!("link {n}.1 1.0\n");
    }
    s
}

/// The testbed with the tests' addressing: hosts by (Axon, port), every frame a host gets kept.
struct Net {
    tb: Testbed,
    ids: BTreeMap<(u64, u8), HostId>,
}

impl Net {
    fn new(n: u64, ring: bool, ports: usize, cam_entries: usize) -> Net {
        let topo = Topology::parse(&topo_text(n, ring)).unwrap();
        let mut tb = Testbed::new();
        tb.set_timers(false);
        for d in 1..=n {
            let mut cfg = DeviceConfig::new(d, ports, GBPS);
            cfg.cam_entries = cam_entries;
            tb.add_axon(cfg, ControlConfig::new(d, pool(d)), topo.clone()).unwrap();
        }
        for l in topo.links() {
            tb.connect(l.a, l.b, 1_000).unwrap();
        }
        Net {
            tb,
            ids: BTreeMap::new(),
        }
    }

    fn add(&mut self, d: u64, port: u8, ip: Ipv4Addr, announce: bool) -> MacAddr {
        let mac = host_mac(d, port);
        let mut h = Host::new(mac, ip, Endpoint { device: d, port }, GBPS, 0);
        h.announce = announce;
        h.keep_frames = true;
        let id = self.tb.add_host(h).unwrap();
        self.ids.insert((d, port), id);
        self.run();
        mac
    }

    /// A host on `(d, port)` that knows its address (told the Axon by a gratuitous ARP).
    fn host(&mut self, d: u64, port: u8, ip: Ipv4Addr) -> MacAddr {
        self.add(d, port, ip, true)
    }

    /// A host on `(d, port)` without an address yet (a DHCP client).
    fn client_host(&mut self, d: u64, port: u8) -> MacAddr {
        self.add(d, port, Ipv4Addr::UNSPECIFIED, false)
    }

    fn host_at(&self, d: u64, port: u8) -> &Host {
        self.tb.host(self.ids[&(d, port)]).unwrap()
    }

    fn send(&mut self, d: u64, port: u8, frame: Vec<u8>) {
        let now = self.tb.now();
        self.tb.transmit_at(now, self.ids[&(d, port)], frame);
    }

    fn cp_input(&mut self, d: u64, input: ControlInput) {
        let now = self.tb.now();
        self.tb.control_input_at(now, d, input);
    }

    /// Lets time pass with nothing happening.
    fn advance(&mut self, ps: u64) {
        let t = self.tb.now() + ps;
        self.tb.run_until(t);
    }

    fn now(&self) -> u64 {
        self.tb.now()
    }

    fn run(&mut self) {
        assert!(self.tb.run_until_idle(100_000), "the network does not settle");
    }

    fn rx(&self, d: u64, port: u8) -> &[(u64, Vec<u8>)] {
        &self.host_at(d, port).frames
    }

    fn clear_rx(&mut self) {
        for id in self.ids.values() {
            if let Some(h) = self.tb.host_mut(*id) {
                h.frames.clear();
            }
        }
    }

    /// The host on `(d, port)` asks for `ip` and gets the answer's MAC.
    fn arp(&mut self, d: u64, port: u8, ip: Ipv4Addr) -> Option<MacAddr> {
        let f = self.host_at(d, port).arp_request(ip);
        self.send(d, port, f);
        self.run();
        self.rx(d, port)
            .iter()
            .filter_map(|(_, f)| arp_of(f))
            .rfind(|a| a.operation == ArpOperation::Reply && a.sender_ip == ip)
            .map(|a| a.sender_mac)
    }

    /// Sends a data frame from a host to `dst` and returns what the far host got.
    fn data(&mut self, from: (u64, u8), dst: MacAddr, to: (u64, u8)) -> Option<(MacAddr, MacAddr)> {
        self.clear_rx();
        let src = self.host_at(from.0, from.1).mac;
        self.send(from.0, from.1, eth(dst, src, DATA, &[7; 50]));
        self.run();
        self.rx(to.0, to.1)
            .iter()
            .filter_map(|(_, f)| {
                Frame::new_checked(&f[..])
                    .ok()
                    .filter(|e| e.ethertype() == DATA)
                    .map(|e| (e.dst_addr(), e.src_addr()))
            })
            .next()
    }

    fn cp(&self, d: u64) -> &ControlPlane {
        self.tb.node(d).unwrap().control()
    }

    fn dev(&self, d: u64) -> &Device {
        self.tb.node(d).unwrap().device()
    }

    fn log(&self) -> Vec<(u64, u64, ControlAction)> {
        self.tb.control_log()
    }

    fn injected(&self, d: u64) -> Vec<(u64, Vec<u8>)> {
        self.log()
            .iter()
            .filter(|(n, _, _)| *n == d)
            .filter_map(|(_, _, a)| match a {
                ControlAction::Inject { at_ps, frame } => Some((*at_ps, frame.clone())),
                _ => None,
            })
            .collect()
    }
}

fn eth(dst: MacAddr, src: MacAddr, t: EtherType, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; 14 + payload.len()];
    EthernetRepr {
        dst,
        src,
        vlan: None,
        ethertype: t,
    }
    .emit(&mut f)
    .unwrap();
    f[14..].copy_from_slice(payload);
    f
}

fn arp_of(frame: &[u8]) -> Option<ArpRepr> {
    let e = Frame::new_checked(frame).ok()?;
    (e.ethertype() == EtherType::ARP)
        .then(|| frames::parse_arp(e.payload()))
        .flatten()
}

fn dhcp_of(frame: &[u8]) -> Option<(MacAddr, MacAddr, DhcpRepr)> {
    let e = Frame::new_checked(frame).ok()?;
    let ip = ipv4::Packet::new_checked(e.payload()).ok()?;
    let u = udp::Packet::new_checked(ip.payload()).ok()?;
    let d = DhcpRepr::parse(&dhcp::Packet::new_checked(u.payload()).ok()?).ok()?;
    Some((e.dst_addr(), e.src_addr(), d))
}

fn dhcp_client_frame(dst: MacAddr, src_ip: Ipv4Addr, dst_ip: Ipv4Addr, d: &DhcpRepr) -> Vec<u8> {
    let u = UdpRepr {
        src_port: dhcp::CLIENT_PORT,
        dst_port: dhcp::SERVER_PORT,
        payload_len: d.buffer_len() as u16,
    };
    let ip = Ipv4Repr {
        src: src_ip,
        dst: dst_ip,
        protocol: IpProtocol::UDP,
        payload_len: u.buffer_len() as u16,
        dscp: 0,
        ecn: Ecn::NotEct,
        ident: 1,
        dont_frag: false,
        ttl: 64,
    };
    let mut p = vec![0u8; ip.total_len()];
    d.emit(&mut p[28..]).unwrap();
    u.emit(&mut p[20..], src_ip, dst_ip).unwrap();
    ip.emit(&mut p).unwrap();
    eth(dst, d.client_mac, EtherType::IPV4, &p)
}

fn last_dhcp(net: &Net, d: u64, port: u8) -> (MacAddr, MacAddr, DhcpRepr) {
    net.rx(d, port)
        .iter()
        .rev()
        .find_map(|(_, f)| dhcp_of(f))
        .expect("a dhcp reply")
}

#[test]
fn dhcp_offer_ack_renew_nak_release_and_expiry_over_frames() {
    let mut net = Net::new(1, false, 4, 64);
    let mac = net.client_host(1, 2);
    let unspec = Ipv4Addr::UNSPECIFIED;
    net.send(
        1,
        2,
        dhcp_client_frame(
            MacAddr::BROADCAST,
            unspec,
            Ipv4Addr::BROADCAST,
            &client(DhcpMessageType::Discover, mac),
        ),
    );
    net.run();
    let (dst, server_mac, offer) = last_dhcp(&net, 1, 2);
    assert_eq!(offer.message_type, DhcpMessageType::Offer);
    assert_eq!(dst, mac);
    assert_eq!(offer.your_ip, Ipv4Addr::new(10, 0, 1, 10));
    assert!(
        server_mac.is_local(),
        "the server MAC is masqueraded and names no route"
    );
    assert!(
        net.rx(1, 2)[0].0 >= SoftwareDelays::default().dhcp_reply_ps,
        "after the software delay"
    );

    let mut req = client(DhcpMessageType::Request, mac);
    req.requested_ip = Some(offer.your_ip);
    req.server_id = Some(pool(1).server_ip);
    net.send(
        1,
        2,
        dhcp_client_frame(MacAddr::BROADCAST, unspec, Ipv4Addr::BROADCAST, &req),
    );
    net.run();
    let (_, _, ack) = last_dhcp(&net, 1, 2);
    assert_eq!(ack.message_type, DhcpMessageType::Ack);
    assert_eq!(net.cp(1).local_hosts()[&offer.your_ip], LocalHost { mac, port: 2 });

    // Renewal: unicast to the server's MAC, which misses in route memory and reaches the
    // control plane.
    net.clear_rx();
    let mut renew = client(DhcpMessageType::Request, mac);
    renew.client_ip = offer.your_ip;
    let before = net.dev(1).counters().lookup_misses;
    net.send(
        1,
        2,
        dhcp_client_frame(server_mac, offer.your_ip, pool(1).server_ip, &renew),
    );
    net.run();
    assert_eq!(net.dev(1).counters().lookup_misses, before + 1);
    let (dst, _, ack) = last_dhcp(&net, 1, 2);
    assert_eq!(
        (ack.message_type, ack.client_ip, dst),
        (DhcpMessageType::Ack, offer.your_ip, mac)
    );
    assert_eq!(net.cp(1).counters().dhcp_acks, 2);

    // A request for an address outside the pool: NAK, broadcast.
    let mut bad = client(DhcpMessageType::Request, host_mac(1, 3));
    bad.requested_ip = Some(Ipv4Addr::new(192, 168, 0, 5));
    net.client_host(1, 3);
    net.send(
        1,
        3,
        dhcp_client_frame(MacAddr::BROADCAST, unspec, Ipv4Addr::BROADCAST, &bad),
    );
    net.run();
    let (dst, _, nak) = last_dhcp(&net, 1, 3);
    assert_eq!((nak.message_type, dst), (DhcpMessageType::Nak, MacAddr::BROADCAST));

    // The lease runs out without renewal: the host is forgotten.
    net.advance(101 * config::SECOND);
    net.cp_input(1, ControlInput::Tick);
    net.run();
    assert!(net.cp(1).local_hosts().is_empty());
    assert_eq!(net.cp(1).counters().dhcp_expired, 1);
    assert!(net
        .log()
        .iter()
        .any(|(_, _, a)| matches!(a, ControlAction::WakeAt { .. })));
}

#[test]
fn arp_for_a_local_host_is_answered_directly_and_routes_go_both_ways() {
    let mut net = Net::new(1, false, 4, 64);
    let a = net.host(1, 1, host_ip(1, 1));
    let b = net.host(1, 2, host_ip(1, 2));
    assert_eq!(net.cp(1).counters().arp_gratuitous, 2);
    assert!(net.rx(1, 2).is_empty(), "gratuitous ARP is not flooded");
    assert_eq!(net.arp(1, 1, host_ip(1, 2)), Some(b), "real MAC: the CAM has room");
    assert_eq!(net.cp(1).counters().axon_arp_started, 0);
    assert_eq!(net.data((1, 1), b, (1, 2)), Some((b, a)));
    assert_eq!(net.data((1, 2), a, (1, 1)), Some((a, b)));
    // The control plane's own address.
    let server = net.arp(1, 1, pool(1).server_ip).unwrap();
    assert!(server.is_local());
}

/// S on Axon 1 port 2 and T on Axon 3 port 2, along the line 1 - 2 - 3.
fn resolved_line(cam_entries: usize) -> (Net, MacAddr, MacAddr, MacAddr) {
    let mut net = Net::new(3, false, 4, cam_entries);
    let s = net.host(1, 2, host_ip(1, 1));
    let t = net.host(3, 2, host_ip(3, 1));
    net.tb.clear_control_log();
    net.clear_rx();
    let start = net.now();
    let got = net.arp(1, 2, host_ip(3, 1)).expect("an ARP reply");
    assert!(net.now() > start);
    (net, s, t, got)
}

#[test]
fn axon_arp_four_phases_across_three_axons() {
    let (net, s, t, got) = resolved_line(64);
    let d = SoftwareDelays::default();
    assert_eq!(got, t, "CAM room at the source: the target's real MAC");

    // Phase I at Axon 1: an Axon-ARP request toward Axon 3's control plane, sent once route
    // calculation, allocation and the request's construction are done.
    let inj1 = net.injected(1);
    let (at, req) = &inj1[0];
    let h = AxonRepr::parse(&Packet::new_checked(&req[..]).unwrap()).unwrap();
    assert_eq!(h.packet_type, PacketType::Control);
    assert_eq!(
        h.forward,
        vec![1, 1, 0xf],
        "out port 1 at Axon 1 and 2, then the control plane"
    );
    let body = frames::parse_control(Packet::new_checked(&req[..]).unwrap().payload()).unwrap();
    let ControlRepr::ArpRequest(m) = body else {
        panic!("not a request")
    };
    assert_eq!(
        (m.src_port, m.src_mac, m.src_ip, m.tgt_ip),
        (2, s, host_ip(1, 1), host_ip(3, 1))
    );
    let phase1 = d.route_calculation_ps + d.route_allocation_ps + d.axon_arp_request_ps;
    assert!(*at >= phase1);

    // Phase II at Axon 3: an ARP request to T that looks like it comes from S.
    let to_t: Vec<_> = net.rx(3, 2).iter().filter_map(|(_, f)| arp_of(f)).collect();
    assert_eq!(to_t.len(), 1);
    assert_eq!(
        (to_t[0].operation, to_t[0].sender_mac, to_t[0].sender_ip),
        (ArpOperation::Request, s, host_ip(1, 1))
    );

    // Phase III at Axon 3: the route back to S is installed, then the Axon-ARP reply leaves.
    let back = net.cp(3).route_to(2, host_ip(1, 1)).unwrap();
    assert_eq!(back.entry.forward, vec![0, 0, 2]);
    assert_eq!((back.entry.dst_mac, back.entry.src_mac), (s, t));
    let inj3 = net.injected(3);
    let reply = inj3
        .iter()
        .find_map(|(at, f)| {
            let p = Packet::new_checked(&f[..]).ok()?;
            (p.packet_type() == PacketType::Control).then(|| (*at, frames::parse_control(p.payload()).unwrap()))
        })
        .unwrap();
    assert_eq!(reply.1.kind(), ControlKind::ArpReply);
    assert!(
        reply.0
            >= phase1
                + d.target_allocation_ps
                + d.host_arp_request_ps
                + d.target_route_storage_ps
                + d.axon_arp_reply_ps
    );

    // Phase IV at Axon 1: route storage, then the ARP reply to S.
    let there = net.cp(1).route_to(2, host_ip(3, 1)).unwrap();
    assert_eq!(there.entry.forward, vec![1, 1, 2]);
    assert_eq!((there.entry.dst_mac, there.entry.src_mac, there.host_mac), (t, s, t));
    let answered = inj1.last().unwrap().0;
    assert!(answered >= reply.0 + d.source_route_storage_ps + d.host_arp_reply_ps);
    let to_s = net.rx(1, 2).iter().find(|(_, f)| arp_of(f).is_some()).unwrap().0;
    assert!(to_s >= answered, "S hears the answer once Phase IV is done");
    assert_eq!(net.cp(1).counters().axon_arp_completed, 1);
    assert_eq!(
        net.cp(2).counters(),
        &ControlCounters::default(),
        "transit Axons are not involved"
    );
    assert_eq!(net.cp(1).link_loads().load(there.links[0]), 1);

    // Both directions flow in the data plane alone.
    let mut net = net;
    let upcalls = net.dev(1).counters().to_control_plane;
    assert_eq!(net.data((1, 2), t, (3, 2)), Some((t, s)));
    assert_eq!(net.data((3, 2), s, (1, 2)), Some((s, t)));
    assert_eq!(net.dev(1).counters().to_control_plane, upcalls);
}

#[test]
fn masqueraded_macs_when_the_cam_is_full_and_unicast_arp_refresh() {
    let (mut net, s, t, got) = resolved_line(0);
    assert!(got.is_local() && got != t, "CAM full: a masqueraded MAC");
    let to_t: Vec<_> = net.rx(3, 2).iter().filter_map(|(_, f)| arp_of(f)).collect();
    let s_as_seen_by_t = to_t[0].sender_mac;
    assert!(s_as_seen_by_t.is_local() && s_as_seen_by_t != s);
    assert_eq!(net.data((1, 2), got, (3, 2)), Some((t, s_as_seen_by_t)));
    assert_eq!(net.data((3, 2), s_as_seen_by_t, (1, 2)), Some((s, got)));

    // §4.1.1: S refreshes with a unicast ARP to the masqueraded MAC; Axon 1 answers it instead
    // of letting T see a request it would answer to an address with no route.
    net.clear_rx();
    let q = ArpRepr {
        operation: ArpOperation::Request,
        sender_mac: s,
        sender_ip: host_ip(1, 1),
        target_mac: got,
        target_ip: host_ip(3, 1),
    };
    net.send(1, 2, frames::arp_frame(got, s, &q));
    net.run();
    assert!(net.rx(3, 2).is_empty(), "intercepted at the source Axon");
    let r = net.rx(1, 2).iter().find_map(|(_, f)| arp_of(f)).unwrap();
    assert_eq!((r.operation, r.sender_mac), (ArpOperation::Reply, got));
}

#[test]
fn routes_spread_over_equal_paths_by_load() {
    // A ring of four: Axon 1 to Axon 3 is two hops either way.
    let mut net = Net::new(4, true, 4, 64);
    net.host(1, 2, host_ip(1, 1));
    net.host(1, 3, host_ip(1, 2));
    net.host(3, 2, host_ip(3, 1));
    net.host(3, 3, host_ip(3, 2));
    net.arp(1, 2, host_ip(3, 1)).unwrap();
    net.arp(1, 3, host_ip(3, 2)).unwrap();
    let a = net.cp(1).route_to(2, host_ip(3, 1)).unwrap().links.clone();
    let b = net.cp(1).route_to(3, host_ip(3, 2)).unwrap().links.clone();
    assert_eq!((a.len(), b.len()), (2, 2));
    assert!(
        a.iter().all(|l| !b.contains(l)),
        "the second route takes the idle side: {a:?} {b:?}"
    );
}

#[test]
fn failover_recomputes_routes_across_a_failed_link() {
    let mut net = Net::new(4, true, 4, 64);
    let s = net.host(1, 2, host_ip(1, 1));
    let t = net.host(2, 2, host_ip(2, 1));
    assert_eq!(net.arp(1, 2, host_ip(2, 1)), Some(t));
    assert_eq!(net.cp(1).route_to(2, host_ip(2, 1)).unwrap().entry.forward, vec![1, 2]);
    // The link 1.1 - 2.0 fails: both data planes see it, both control planes are told.
    let now = net.now();
    net.tb
        .fail_link_at(now, Endpoint { device: 1, port: 1 }, FailureNotice::Nobody);
    for (d, p) in [(1, 1), (2, 0)] {
        net.tb.device_event_at(now, d, Event::LinkDown { port: p });
    }
    net.cp_input(
        1,
        ControlInput::LinkDown {
            at: Endpoint { device: 1, port: 1 },
        },
    );
    net.cp_input(
        2,
        ControlInput::LinkDown {
            at: Endpoint { device: 2, port: 0 },
        },
    );
    net.run();
    assert_eq!(
        net.cp(1).route_to(2, host_ip(2, 1)).unwrap().entry.forward,
        vec![0, 0, 0, 2]
    );
    assert_eq!(
        net.cp(2).route_to(2, host_ip(1, 1)).unwrap().entry.forward,
        vec![1, 1, 1, 2]
    );
    assert_eq!(net.cp(1).counters().routes_rerouted, 1);
    assert_eq!(net.cp(2).counters().routes_rerouted, 1);
    assert_eq!(net.data((1, 2), t, (2, 2)), Some((t, s)), "same MAC, new path");
    assert_eq!(net.data((2, 2), s, (1, 2)), Some((s, t)));
    // Cut the ring a second time: no path is left, the routes go.
    net.cp_input(
        1,
        ControlInput::LinkDown {
            at: Endpoint { device: 3, port: 1 },
        },
    );
    net.run();
    assert!(net.cp(1).route_to(2, host_ip(2, 1)).is_none());
    assert!(net.log().iter().any(|(_, _, a)| matches!(
        a,
        ControlAction::RouteRemoved {
            why: RemovalReason::NoPath,
            ..
        }
    )));
}

#[test]
fn idle_routes_and_stale_transactions_time_out() {
    let (mut net, _, _, _) = resolved_line(64);
    let free = net.dev(1).route_memory(2).unwrap().free_slots();
    // A refresh keeps the route; silence removes it.
    net.advance(200 * config::SECOND);
    net.arp(1, 2, host_ip(3, 1)).unwrap();
    net.advance(200 * config::SECOND);
    net.cp_input(1, ControlInput::Tick);
    net.run();
    assert!(net.cp(1).route_to(2, host_ip(3, 1)).is_some());
    net.advance(301 * config::SECOND);
    net.cp_input(1, ControlInput::Tick);
    net.run();
    assert!(net.cp(1).route_to(2, host_ip(3, 1)).is_none());
    assert_eq!(net.dev(1).route_memory(2).unwrap().free_slots(), free + 1);

    // An address in Axon 2's pool with no host: Axon 2 drops the request, Axon 1 gives up.
    assert_eq!(net.arp(1, 2, Ipv4Addr::new(10, 0, 2, 50)), None);
    assert_eq!(net.cp(2).counters().dropped(ControlDrop::TargetHostUnknown), 1);
    net.advance(2 * config::SECOND);
    net.cp_input(1, ControlInput::Tick);
    net.run();
    assert_eq!(net.cp(1).counters().dropped(ControlDrop::TransactionTimeout), 1);
    assert_eq!(net.dev(1).route_memory(2).unwrap().free_slots(), free + 1);
    // Nobody owns 192.168.0.1.
    assert_eq!(net.arp(1, 2, Ipv4Addr::new(192, 168, 0, 1)), None);
    assert_eq!(net.cp(1).counters().dropped(ControlDrop::UnknownTarget), 1);
}

#[test]
fn malformed_frames_are_counted_and_dropped() {
    let mut net = Net::new(1, false, 4, 64);
    let host = |port: u8, eth: &[u8]| {
        let h = AxonRepr {
            packet_type: PacketType::Ethernet,
            forward: vec![],
            reverse: vec![port],
        };
        h.to_frame(eth).unwrap()
    };
    let mac = host_mac(1, 1);
    let mut bad_dhcp = dhcp_client_frame(
        MacAddr::BROADCAST,
        Ipv4Addr::UNSPECIFIED,
        Ipv4Addr::BROADCAST,
        &client(DhcpMessageType::Discover, mac),
    );
    let n = bad_dhcp.len();
    bad_dhcp[n - 1] ^= 0xff; // breaks the UDP checksum
    let mut bad_arp = eth(MacAddr::BROADCAST, mac, EtherType::ARP, &[0; 28]);
    bad_arp[14] = 9; // hardware type 9
    let control = |body: &[u8]| {
        let h = AxonRepr {
            packet_type: PacketType::Control,
            forward: vec![],
            reverse: vec![0xf, 1],
        };
        h.to_frame(body).unwrap()
    };
    let cases = [
        (Upcall::Broadcast, vec![0xff, 0x00], ControlDrop::MalformedAxon),
        (Upcall::Broadcast, host(1, &[1, 2, 3]), ControlDrop::MalformedEthernet),
        (Upcall::Broadcast, host(1, &bad_arp), ControlDrop::MalformedArp),
        (Upcall::Broadcast, host(1, &bad_dhcp), ControlDrop::MalformedDhcp),
        (Upcall::Addressed, control(&[99, 0, 0]), ControlDrop::MalformedControl),
        (Upcall::Addressed, control(&[1, 0, 0]), ControlDrop::MalformedControl),
        (
            Upcall::LookupMiss,
            host(1, &eth(MacAddr([2, 0, 0, 0, 0, 9]), mac, DATA, &[0; 46])),
            ControlDrop::Unrouted,
        ),
        (
            Upcall::Broadcast,
            host(1, &eth(MacAddr::BROADCAST, mac, DATA, &[0; 46])),
            ControlDrop::BroadcastNotHandled,
        ),
    ];
    let mut expected = BTreeMap::new();
    for (i, (reason, frame, why)) in cases.into_iter().enumerate() {
        net.cp_input(1, ControlInput::Upcall { reason, frame });
        net.run();
        *expected.entry(why).or_insert(0) += 1;
        assert_eq!(net.cp(1).counters().dropped(why), expected[&why], "case {i}: {why:?}");
        assert_eq!(net.cp(1).counters().total_dropped(), i as u64 + 1);
    }
    assert!(net.injected(1).is_empty(), "nothing answered");
}

#[test]
fn arbitrary_upcalls_never_panic() {
    let mut net = Net::new(2, false, 4, 4);
    let mut x: u32 = 12345;
    for len in 0..300usize {
        let frame: Vec<u8> = (0..len)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (x >> 16) as u8
            })
            .collect();
        for reason in [Upcall::Broadcast, Upcall::Addressed, Upcall::Arp, Upcall::LookupMiss] {
            net.cp_input(
                1,
                ControlInput::Upcall {
                    reason,
                    frame: frame.clone(),
                },
            );
        }
        // The same bytes behind valid headers, so the inner parsers see them.
        let mac = host_mac(1, 2);
        let host = |t: EtherType| {
            let h = AxonRepr {
                packet_type: PacketType::Ethernet,
                forward: vec![],
                reverse: vec![2],
            };
            h.to_frame(&eth(MacAddr::BROADCAST, mac, t, &frame)).unwrap()
        };
        for t in [EtherType::ARP, EtherType::IPV4] {
            net.cp_input(
                1,
                ControlInput::Upcall {
                    reason: Upcall::Broadcast,
                    frame: host(t),
                },
            );
        }
        for kind in [1u8, 2] {
            let mut body = frame.clone();
            if let Some(b) = body.first_mut() {
                *b = kind;
            }
            let h = AxonRepr {
                packet_type: PacketType::Control,
                forward: vec![],
                reverse: vec![0xf, 0],
            };
            let f = h.to_frame(&body).unwrap();
            net.cp_input(
                1,
                ControlInput::Upcall {
                    reason: Upcall::Addressed,
                    frame: f,
                },
            );
        }
    }
    net.run();
}

#[test]
fn discovery_inputs_from_the_network_never_panic_and_are_counted() {
    let mut x: u32 = 99;
    let mut cfg = ControlConfig::new(1, pool(1));
    cfg.discovery = Some(DiscoveryConfig::default());
    let mut cp = ControlPlane::new(cfg, Topology::new()).unwrap();
    let mut off = ControlPlane::new(
        ControlConfig::new(1, pool(1)),
        Topology::parse(&topo_text(1, false)).unwrap(),
    )
    .unwrap();
    let mut dev = Device::new(DeviceConfig::new(1, 4, GBPS)).unwrap();
    let mut out = vec![];
    for len in 0..200usize {
        let mut body: Vec<u8> = (0..len)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (x >> 16) as u8
            })
            .collect();
        for (t, first) in [
            (PacketType::Probe, None),
            (PacketType::Control, Some(discovery::ADVERT_KIND)),
        ] {
            if let (Some(b), Some(k)) = (body.first_mut(), first) {
                *b = k;
            }
            let h = AxonRepr {
                packet_type: t,
                forward: vec![],
                reverse: vec![1, 0xf],
            };
            let frame = h.to_frame(&body).unwrap();
            let input = ControlInput::Upcall {
                reason: Upcall::Addressed,
                frame,
            };
            cp.handle(len as u64, &mut dev, input.clone(), &mut out);
            off.handle(len as u64, &mut dev, input, &mut out);
        }
    }
    let c = cp.counters();
    assert!(c.dropped(ControlDrop::MalformedProbe) + c.dropped(ControlDrop::MalformedAdvert) > 300);
    // Every probe, and every control body but the empty one (not an advertisement).
    assert_eq!(off.counters().dropped(ControlDrop::DiscoveryOff), 399);
    let mut bad = ControlConfig::new(1, pool(1));
    bad.discovery = Some(DiscoveryConfig {
        probe_timeout_ps: 10,
        probe_interval_ps: 10,
        advert_refresh_ps: 1,
    });
    assert_eq!(bad.validate(), Err(ControlConfigError::BadDiscoveryTimers));
}

#[test]
fn a_link_down_notice_with_discovery_on_withdraws_the_neighbor_at_once() {
    let mut spec = crate::testbed::LineSpec::ring(3);
    spec.discovery = Some(DiscoveryConfig::default());
    let mut tb = spec.build().unwrap();
    tb.run_until(500 * config::US);
    assert_eq!(
        tb.node(1).unwrap().control().discovery().unwrap().adjacencies().len(),
        2
    );
    let now = tb.now();
    tb.control_input_at(
        now,
        1,
        ControlInput::LinkDown {
            at: Endpoint { device: 1, port: 0 },
        },
    );
    tb.run_until(now + config::US);
    let cp = tb.node(1).unwrap().control();
    assert_eq!(cp.discovery().unwrap().adjacencies().len(), 1);
    assert_eq!(cp.topology().links().iter().filter(|l| l.up).count(), 2);
}

#[test]
fn route_setup_rate_follows_the_table_4_3_delays() {
    // Thirteen hosts on Axon 1 ask for one host on Axon 2 at once: Axon 2's processor (Phases
    // II and III, 216 + 168 us a route) is the bottleneck: about 2,600 routes a second in steady
    // state (the thesis's figure), a little less over a burst that includes the pipeline fill.
    let mut net = Net::new(2, false, 15, 64);
    let sources: Vec<u8> = (2..15).collect();
    for &p in &sources {
        net.host(1, p, host_ip(1, p));
    }
    net.host(2, 2, host_ip(2, 1));
    net.clear_rx();
    let t0 = net.now();
    for &p in &sources {
        let f = net.host_at(1, p).arp_request(host_ip(2, 1));
        net.send(1, p, f);
    }
    net.run();
    assert_eq!(net.cp(1).counters().axon_arp_completed, sources.len() as u64);
    let mut done: Vec<u64> = sources
        .iter()
        .map(|&p| net.rx(1, p).iter().find(|(_, f)| arp_of(f).is_some()).unwrap().0)
        .collect();
    done.sort();
    let per_route_b = 216 * config::US + 168 * config::US;
    let span = done[done.len() - 1] - t0;
    let rate = sources.len() as f64 / (span as f64 / 1e12);
    assert!(
        span >= per_route_b * sources.len() as u64,
        "Axon 2 cannot go faster than its software"
    );
    assert!((2_000.0..2_700.0).contains(&rate), "{rate:.0} routes/s");
}
