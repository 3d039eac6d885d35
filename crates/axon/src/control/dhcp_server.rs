//! The per-Axon DHCP server (§3.2.3 "DHCP"): leases from the Axon's pool, keyed by client MAC.
//! DISCOVER gets an OFFER (the client's previous address, else the requested one if free, else
//! the lowest free one); REQUEST gets an ACK when it names the address held for the client or a
//! free one of the pool, else a NAK; a REQUEST naming another server withdraws our offer; a
//! REQUEST from a bound client (unicast through the data plane, since the server's MAC never
//! names a route) renews; RELEASE and DECLINE free the lease, when they come from the host port
//! that holds it; [`DhcpServer::expire`] ends leases and offers whose time ran out. A host port
//! holds at most [`LEASES_PER_PORT`] leases and offers at once, so one host (or one host making
//! up MAC addresses) cannot bind the whole pool. The decisions here are pure;
//! [`super::ControlPlane`] builds the frames.

use super::config::{DhcpPool, SECOND};
use super::counters::ControlDrop;
use std::collections::BTreeMap;
use tandem_wire::dhcp::{BootpOp, DhcpMessageType, DhcpRepr, FLAG_BROADCAST};
use tandem_wire::{Ipv4Addr, MacAddr};

/// Most leases and offers one host port holds at once: room for a host with a few dozen
/// virtual machines, far below a pool (the thesis's pools are /24-sized), so a port that
/// invents client MACs exhausts its share, not the pool.
pub const LEASES_PER_PORT: usize = 32;

/// A client's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lease {
    /// The address.
    pub ip: Ipv4Addr,
    /// The host port the client is on.
    pub port: u8,
    /// Bound (acknowledged) or only offered.
    pub bound: bool,
    /// When the lease or offer ends.
    pub expires_ps: u64,
}

/// What the server decided about one client message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DhcpDecision {
    /// Send this reply.
    Reply {
        /// The message to send.
        reply: Box<DhcpRepr>,
        /// The client's lease after this message (none for a NAK).
        lease: Option<Lease>,
    },
    /// The client gave its lease back.
    Released(Lease),
    /// Nothing to send.
    Ignored(ControlDrop),
}

/// Leases of one Axon's pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DhcpServer {
    pool: DhcpPool,
    offer_hold_ps: u64,
    leases: BTreeMap<MacAddr, Lease>,
}

impl DhcpServer {
    /// A server for `pool` that holds offers for `offer_hold_ps`.
    pub fn new(pool: DhcpPool, offer_hold_ps: u64) -> DhcpServer {
        DhcpServer {
            pool,
            offer_hold_ps,
            leases: BTreeMap::new(),
        }
    }

    /// The pool.
    pub fn pool(&self) -> &DhcpPool {
        &self.pool
    }

    /// A client's lease or offer.
    pub fn lease(&self, mac: MacAddr) -> Option<&Lease> {
        self.leases.get(&mac)
    }

    /// The live bound lease of an address and its client.
    pub fn bound_to(&self, now: u64, ip: Ipv4Addr) -> Option<(MacAddr, Lease)> {
        self.leases
            .iter()
            .find(|(_, l)| l.ip == ip && l.bound && l.expires_ps > now)
            .map(|(m, l)| (*m, *l))
    }

    fn lease_ps(&self) -> u64 {
        u64::from(self.pool.lease_secs).saturating_mul(SECOND)
    }

    fn free(&self, now: u64, ip: Ipv4Addr, for_mac: MacAddr) -> bool {
        self.pool.contains(ip)
            && !self
                .leases
                .iter()
                .any(|(m, l)| *m != for_mac && l.ip == ip && l.expires_ps > now)
    }

    fn lowest_free(&self, now: u64, mac: MacAddr) -> Option<Ipv4Addr> {
        let (first, last) = (u32::from(self.pool.first), u32::from(self.pool.last));
        (first..=last).map(Ipv4Addr::from).find(|ip| self.free(now, *ip, mac))
    }

    /// Decides what to do with a client message that arrived on host port `port`.
    pub fn handle(&mut self, now: u64, port: u8, msg: &DhcpRepr) -> DhcpDecision {
        if msg.op != BootpOp::Request {
            return DhcpDecision::Ignored(ControlDrop::DhcpIgnored);
        }
        let mac = msg.client_mac;
        let live = self.leases.get(&mac).filter(|l| l.expires_ps > now).copied();
        // A client new to this port (or moved to it) takes a share of the port's cap.
        let newcomer = live.is_none_or(|l| l.port != port);
        let at_cap = || {
            self.leases
                .iter()
                .filter(|(m, l)| **m != mac && l.port == port && l.expires_ps > now)
                .count()
                >= LEASES_PER_PORT
        };
        if newcomer && matches!(msg.message_type, DhcpMessageType::Discover | DhcpMessageType::Request) && at_cap() {
            return DhcpDecision::Ignored(ControlDrop::PortLeaseCap);
        }
        match msg.message_type {
            DhcpMessageType::Discover => {
                let ip = live
                    .map(|l| l.ip)
                    .or(msg.requested_ip.filter(|ip| self.free(now, *ip, mac)))
                    .or_else(|| self.lowest_free(now, mac));
                let Some(ip) = ip else {
                    return DhcpDecision::Ignored(ControlDrop::PoolExhausted);
                };
                let lease = match live {
                    Some(l) if l.bound => l,
                    _ => Lease {
                        ip,
                        port,
                        bound: false,
                        expires_ps: now.saturating_add(self.offer_hold_ps),
                    },
                };
                self.leases.insert(mac, lease);
                let reply = Box::new(self.reply(msg, DhcpMessageType::Offer, ip));
                DhcpDecision::Reply {
                    reply,
                    lease: Some(lease),
                }
            }
            DhcpMessageType::Request => {
                if msg.server_id.is_some_and(|s| s != self.pool.server_ip) {
                    if live.is_some_and(|l| !l.bound) {
                        self.leases.remove(&mac);
                    }
                    return DhcpDecision::Ignored(ControlDrop::DhcpOtherServer);
                }
                let want = msg
                    .requested_ip
                    .or((!msg.client_ip.is_unspecified()).then_some(msg.client_ip));
                let ok = want.filter(|ip| live.is_some_and(|l| l.ip == *ip) || self.free(now, *ip, mac));
                let Some(ip) = ok else {
                    return DhcpDecision::Reply {
                        reply: Box::new(self.reply(msg, DhcpMessageType::Nak, Ipv4Addr::UNSPECIFIED)),
                        lease: None,
                    };
                };
                let lease = Lease {
                    ip,
                    port,
                    bound: true,
                    expires_ps: now.saturating_add(self.lease_ps()),
                };
                self.leases.insert(mac, lease);
                DhcpDecision::Reply {
                    reply: Box::new(self.reply(msg, DhcpMessageType::Ack, ip)),
                    lease: Some(lease),
                }
            }
            DhcpMessageType::Release | DhcpMessageType::Decline => match live {
                Some(l) if l.port != port => DhcpDecision::Ignored(ControlDrop::DhcpForeignPort),
                Some(l) if msg.message_type == DhcpMessageType::Decline || l.ip == msg.client_ip => {
                    self.leases.remove(&mac);
                    DhcpDecision::Released(l)
                }
                _ => DhcpDecision::Ignored(ControlDrop::DhcpIgnored),
            },
            _ => DhcpDecision::Ignored(ControlDrop::DhcpIgnored),
        }
    }

    /// Removes leases and offers that ended by `now` and returns them.
    pub fn expire(&mut self, now: u64) -> Vec<(MacAddr, Lease)> {
        let gone: Vec<_> = self
            .leases
            .iter()
            .filter(|(_, l)| l.expires_ps <= now)
            .map(|(m, l)| (*m, *l))
            .collect();
        for (m, _) in &gone {
            self.leases.remove(m);
        }
        gone
    }

    /// The earliest time a lease or offer ends.
    pub fn next_expiry(&self) -> Option<u64> {
        self.leases.values().map(|l| l.expires_ps).min()
    }

    fn reply(&self, req: &DhcpRepr, t: DhcpMessageType, ip: Ipv4Addr) -> DhcpRepr {
        let nak = t == DhcpMessageType::Nak;
        DhcpRepr {
            op: BootpOp::Reply,
            hops: 0,
            xid: req.xid,
            secs: 0,
            flags: if nak { req.flags | FLAG_BROADCAST } else { req.flags },
            client_ip: if t == DhcpMessageType::Ack {
                req.client_ip
            } else {
                Ipv4Addr::UNSPECIFIED
            },
            your_ip: ip,
            server_ip: Ipv4Addr::UNSPECIFIED,
            relay_ip: req.relay_ip,
            client_mac: req.client_mac,
            message_type: t,
            subnet_mask: (!nak).then_some(self.pool.subnet_mask),
            routers: vec![],
            dns_servers: vec![],
            host_name: None,
            requested_ip: None,
            lease_time: (!nak).then_some(self.pool.lease_secs),
            server_id: Some(self.pool.server_ip),
            parameter_request_list: vec![],
            client_id: None,
            other_options: vec![],
        }
    }
}

#[cfg(all(test, feature = "sim"))]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn pool() -> DhcpPool {
        DhcpPool {
            server_ip: Ipv4Addr::new(10, 0, 1, 1),
            subnet_mask: Ipv4Addr::new(255, 255, 0, 0),
            first: Ipv4Addr::new(10, 0, 1, 10),
            last: Ipv4Addr::new(10, 0, 1, 11),
            lease_secs: 100,
        }
    }

    /// A client message.
    pub(crate) fn client(t: DhcpMessageType, mac: MacAddr) -> DhcpRepr {
        crate::testbed::dhcp_client::message(t, mac, 0x1234, None)
    }

    const A: MacAddr = MacAddr([2, 0, 0, 0, 0, 0xa]);
    const B: MacAddr = MacAddr([2, 0, 0, 0, 0, 0xb]);
    const C: MacAddr = MacAddr([2, 0, 0, 0, 0, 0xc]);

    fn reply(d: DhcpDecision) -> DhcpRepr {
        match d {
            DhcpDecision::Reply { reply, .. } => *reply,
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    #[test]
    fn offer_ack_renew_release() {
        let mut s = DhcpServer::new(pool(), SECOND);
        let offer = reply(s.handle(0, 2, &client(DhcpMessageType::Discover, A)));
        assert_eq!(offer.message_type, DhcpMessageType::Offer);
        assert_eq!(offer.your_ip, Ipv4Addr::new(10, 0, 1, 10));
        assert_eq!(offer.server_id, Some(pool().server_ip));
        assert_eq!(offer.lease_time, Some(100));
        assert!(!s.lease(A).unwrap().bound);
        // A second client is offered the next address, not A's.
        let offer_b = reply(s.handle(0, 3, &client(DhcpMessageType::Discover, B)));
        assert_eq!(offer_b.your_ip, Ipv4Addr::new(10, 0, 1, 11));

        let mut req = client(DhcpMessageType::Request, A);
        req.requested_ip = Some(offer.your_ip);
        req.server_id = Some(pool().server_ip);
        let ack = reply(s.handle(10, 2, &req));
        assert_eq!(ack.message_type, DhcpMessageType::Ack);
        assert_eq!(s.lease(A).unwrap().expires_ps, 10 + 100 * SECOND);
        assert_eq!(s.bound_to(10, offer.your_ip).map(|(m, _)| m), Some(A));

        // Renewal: unicast, ciaddr set, no requested-ip option.
        let mut renew = client(DhcpMessageType::Request, A);
        renew.client_ip = offer.your_ip;
        let ack = reply(s.handle(50 * SECOND, 2, &renew));
        assert_eq!(ack.message_type, DhcpMessageType::Ack);
        assert_eq!(ack.client_ip, offer.your_ip);
        assert_eq!(s.lease(A).unwrap().expires_ps, 150 * SECOND);

        let mut rel = client(DhcpMessageType::Release, A);
        rel.client_ip = offer.your_ip;
        assert!(matches!(s.handle(60 * SECOND, 2, &rel), DhcpDecision::Released(_)));
        assert!(s.lease(A).is_none());
    }

    #[test]
    fn nak_other_server_exhaustion_and_expiry() {
        let mut s = DhcpServer::new(pool(), SECOND);
        // A request for an address outside the pool is refused.
        let mut req = client(DhcpMessageType::Request, A);
        req.requested_ip = Some(Ipv4Addr::new(10, 9, 9, 9));
        let nak = reply(s.handle(0, 2, &req));
        assert_eq!(nak.message_type, DhcpMessageType::Nak);
        assert_eq!(nak.flags & FLAG_BROADCAST, FLAG_BROADCAST);
        // The client chose another server: our offer goes.
        reply(s.handle(0, 2, &client(DhcpMessageType::Discover, A)));
        let mut other = client(DhcpMessageType::Request, A);
        other.server_id = Some(Ipv4Addr::new(10, 0, 2, 1));
        assert_eq!(
            s.handle(0, 2, &other),
            DhcpDecision::Ignored(ControlDrop::DhcpOtherServer)
        );
        assert!(s.lease(A).is_none());
        // Two addresses, three clients.
        reply(s.handle(0, 2, &client(DhcpMessageType::Discover, A)));
        reply(s.handle(0, 3, &client(DhcpMessageType::Discover, B)));
        assert_eq!(
            s.handle(0, 4, &client(DhcpMessageType::Discover, C)),
            DhcpDecision::Ignored(ControlDrop::PoolExhausted)
        );
        // Offers not taken up expire and their addresses come back.
        assert_eq!(s.next_expiry(), Some(SECOND));
        assert_eq!(s.expire(SECOND).len(), 2);
        let offer = reply(s.handle(SECOND, 4, &client(DhcpMessageType::Discover, C)));
        assert_eq!(offer.your_ip, Ipv4Addr::new(10, 0, 1, 10));
        // A request for an address another client holds is refused.
        let mut steal = client(DhcpMessageType::Request, A);
        steal.requested_ip = Some(offer.your_ip);
        assert_eq!(reply(s.handle(SECOND, 2, &steal)).message_type, DhcpMessageType::Nak);
        // Server messages and INFORM are ignored.
        let mut r = client(DhcpMessageType::Inform, A);
        assert_eq!(s.handle(0, 2, &r), DhcpDecision::Ignored(ControlDrop::DhcpIgnored));
        r.op = BootpOp::Reply;
        assert_eq!(s.handle(0, 2, &r), DhcpDecision::Ignored(ControlDrop::DhcpIgnored));
    }

    #[test]
    fn one_port_cannot_bind_the_whole_pool() {
        let big = DhcpPool {
            last: Ipv4Addr::new(10, 0, 1, 250),
            ..pool()
        };
        let mut s = DhcpServer::new(big, 100 * SECOND);
        let mac = |i: u8| MacAddr([2, 0, 0, 0, 1, i]);
        for i in 0..LEASES_PER_PORT as u8 {
            assert!(matches!(
                s.handle(0, 2, &client(DhcpMessageType::Discover, mac(i))),
                DhcpDecision::Reply { .. }
            ));
        }
        // The next invented MAC on that port gets nothing, in DISCOVER or straight REQUEST.
        let extra = mac(200);
        assert_eq!(
            s.handle(0, 2, &client(DhcpMessageType::Discover, extra)),
            DhcpDecision::Ignored(ControlDrop::PortLeaseCap)
        );
        let mut req = client(DhcpMessageType::Request, extra);
        req.requested_ip = Some(Ipv4Addr::new(10, 0, 1, 200));
        assert_eq!(s.handle(0, 2, &req), DhcpDecision::Ignored(ControlDrop::PortLeaseCap));
        // A host on another port still gets an address, and clients already there keep theirs.
        assert!(matches!(
            s.handle(0, 3, &client(DhcpMessageType::Discover, C)),
            DhcpDecision::Reply { .. }
        ));
        assert!(matches!(
            s.handle(1, 2, &client(DhcpMessageType::Discover, mac(0))),
            DhcpDecision::Reply { .. }
        ));
        // Once offers lapse, the port has room again.
        s.expire(200 * SECOND);
        assert!(matches!(
            s.handle(200 * SECOND, 2, &client(DhcpMessageType::Discover, extra)),
            DhcpDecision::Reply { .. }
        ));
    }

    #[test]
    fn only_the_lease_holders_port_can_release_or_decline_it() {
        let mut s = DhcpServer::new(pool(), SECOND);
        let offer = reply(s.handle(0, 2, &client(DhcpMessageType::Discover, A)));
        let mut req = client(DhcpMessageType::Request, A);
        req.requested_ip = Some(offer.your_ip);
        reply(s.handle(1, 2, &req));
        // An attacker on port 3 speaks for A's MAC.
        for t in [DhcpMessageType::Decline, DhcpMessageType::Release] {
            let mut m = client(t, A);
            m.client_ip = offer.your_ip;
            assert_eq!(s.handle(2, 3, &m), DhcpDecision::Ignored(ControlDrop::DhcpForeignPort));
        }
        assert_eq!(s.bound_to(3, offer.your_ip).map(|(m, _)| m), Some(A));
        // From A's own port, it works.
        let mut m = client(DhcpMessageType::Decline, A);
        m.client_ip = offer.your_ip;
        assert!(matches!(s.handle(4, 2, &m), DhcpDecision::Released(_)));
    }
}
