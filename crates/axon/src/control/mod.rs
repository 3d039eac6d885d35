//! The device's **control plane** (§3.2.3) as a sans-IO core beside a [`Device`]:
//! [`ControlPlane::handle`] is fed `(now_ps, ControlInput)` and the device it runs on, reserves
//! and installs routes in that device's route memory directly (they are register writes in the
//! prototype), and pushes [`ControlAction`]s: frames to inject into the data plane at a time
//! (answers to hosts wrapped in a one-hop Axon header naming the host port, Axon-ARP messages
//! along source routes), notices of routes installed and removed, drops with a reason, and when
//! to be woken for timeouts. It reads no clock, socket or global.
//!
//! The processor is modelled as one busy resource: each piece of work starts when the previous
//! one finished (or at `now`) and lasts the Table 4.3 software delays of its phase
//! ([`SoftwareDelays`]); what it sends leaves when it is done. Route writes take effect at once
//! (the thesis's route storage time only delays what the control plane sends next).
//!
//! Modules: [`config`] (pool, timeouts, delays), [`topology`] (Axons and links from
//! configuration), [`route_calc`] (shortest and least loaded paths), [`dhcp_server`] (leases),
//! [`host_arp`] (ARP interception at the host ports), [`axon_arp`] (the four phases between
//! source and target Axons), [`routes`] (installed routes, idle timeout, failover), [`frames`]
//! (building and reading frames), [`discovery`] (probes, link timeouts and flooded
//! advertisements, so no topology file is needed), [`counters`].

pub mod axon_arp;
pub mod config;
pub mod counters;
pub mod dhcp_server;
pub mod discovery;
pub mod frames;
pub mod host_arp;
pub mod route_calc;
pub mod routes;
pub mod topology;

pub use self::config::{ControlConfig, ControlConfigError, DhcpPool, DiscoveryConfig, SoftwareDelays};
pub use self::counters::{ControlCounters, ControlDrop};
pub use self::routes::{InstalledRoute, RemovalReason};
pub use self::topology::{AxonNode, Endpoint, LinkId, Topology};

use self::axon_arp::{SourceTxn, TargetKey, TargetTxn};
use self::dhcp_server::{DhcpDecision, DhcpServer};
use self::discovery::Discovery;
use self::route_calc::LinkLoads;
use crate::dataplane::{Device, Upcall};
use crate::route_memory::RouteSlot;
use std::collections::BTreeMap;
use tandem_wire::axon::{AxonRepr, Packet, PacketType};
use tandem_wire::dhcp::{DhcpMessageType, FLAG_BROADCAST};
use tandem_wire::ethernet::{self, EtherType};
use tandem_wire::{Ipv4Addr, MacAddr};

/// Something the control plane is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlInput {
    /// A frame the data plane handed up ([`crate::Action::ToControlPlane`]), at its `at_ps`.
    Upcall {
        /// Why the data plane handed it up.
        reason: Upcall,
        /// The Axon frame.
        frame: Vec<u8>,
    },
    /// A link failed: one of this device's ports (as the data plane's driver saw it), or a
    /// failure elsewhere that the network reported. Routes across it are recomputed.
    LinkDown {
        /// Either end of the link.
        at: Endpoint,
    },
    /// A link came back.
    LinkUp {
        /// Either end of the link.
        at: Endpoint,
    },
    /// Time passed: leases, transactions and idle routes time out.
    Tick,
}

impl ControlInput {
    /// The input a data plane action makes, and when: an upcall at its `at_ps`. Other actions
    /// are the driver's.
    pub fn from_action(action: &crate::Action) -> Option<(u64, ControlInput)> {
        match action {
            crate::Action::ToControlPlane { at_ps, reason, frame } => Some((
                *at_ps,
                ControlInput::Upcall {
                    reason: *reason,
                    frame: frame.clone(),
                },
            )),
            _ => None,
        }
    }
}

/// What the control plane asks its driver to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlAction {
    /// Feed `Event::FromControlPlane { frame }` to the device at `at_ps`.
    Inject {
        /// When the control plane has built it.
        at_ps: u64,
        /// The Axon frame (its first forward hop is the output port).
        frame: Vec<u8>,
    },
    /// A route was installed (or reinstalled) in a host port's route memory.
    RouteInstalled {
        /// The host port.
        port: u8,
        /// The slot.
        slot: RouteSlot,
        /// The MAC the host sends to (real via the CAM, or masqueraded).
        mac: MacAddr,
        /// Forward hops of the route.
        hops: usize,
    },
    /// A route was removed.
    RouteRemoved {
        /// The host port.
        port: u8,
        /// The slot.
        slot: RouteSlot,
        /// Why.
        why: RemovalReason,
    },
    /// An input was dropped (also counted in [`ControlCounters`]).
    Dropped {
        /// Why.
        reason: ControlDrop,
    },
    /// Feed [`ControlInput::Tick`] at (or after) this time.
    WakeAt {
        /// When the next timeout falls.
        at_ps: u64,
    },
}

/// A host known on one of this Axon's host ports (from a DHCP lease or a gratuitous ARP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LocalHost {
    /// Its real MAC.
    pub mac: MacAddr,
    /// Its host port.
    pub port: u8,
}

/// One Axon's control plane.
#[derive(Debug, Clone)]
pub struct ControlPlane {
    cfg: ControlConfig,
    topo: Topology,
    loads: LinkLoads,
    dhcp: DhcpServer,
    hosts: BTreeMap<Ipv4Addr, LocalHost>,
    routes: BTreeMap<(u8, RouteSlot), InstalledRoute>,
    pending_src: BTreeMap<u32, SourceTxn>,
    pending_tgt: BTreeMap<TargetKey, TargetTxn>,
    counters: ControlCounters,
    busy_until: u64,
    next_xid: u32,
    disc: Option<Discovery>,
}

impl ControlPlane {
    /// A control plane for `cfg.device_id`, which must be in `topo` unless discovery is on
    /// (then `topo` may be empty: this Axon is added with its pool, the rest is discovered; the
    /// driver must feed a first [`ControlInput::Tick`] to start probing).
    pub fn new(cfg: ControlConfig, mut topo: Topology) -> Result<ControlPlane, ControlConfigError> {
        cfg.validate()?;
        if cfg.discovery.is_some() && !topo.has_axon(cfg.device_id) {
            topo.add_axon(AxonNode {
                device: cfg.device_id,
                pool_first: cfg.pool.first,
                pool_last: cfg.pool.last,
            });
        }
        if !topo.has_axon(cfg.device_id) {
            return Err(ControlConfigError::NotInTopology(cfg.device_id));
        }
        Ok(ControlPlane {
            dhcp: DhcpServer::new(cfg.pool, cfg.offer_hold_ps),
            disc: cfg.discovery.map(Discovery::new),
            cfg,
            topo,
            loads: LinkLoads::default(),
            hosts: BTreeMap::new(),
            routes: BTreeMap::new(),
            pending_src: BTreeMap::new(),
            pending_tgt: BTreeMap::new(),
            counters: ControlCounters::default(),
            busy_until: 0,
            next_xid: 1,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ControlConfig {
        &self.cfg
    }

    /// The counters.
    pub fn counters(&self) -> &ControlCounters {
        &self.counters
    }

    /// The topology as this control plane knows it (links marked down included).
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// Routes this control plane installed and keeps across each link.
    pub fn link_loads(&self) -> &LinkLoads {
        &self.loads
    }

    /// The DHCP server.
    pub fn dhcp(&self) -> &DhcpServer {
        &self.dhcp
    }

    /// The hosts known on this Axon's host ports, by address.
    pub fn local_hosts(&self) -> &BTreeMap<Ipv4Addr, LocalHost> {
        &self.hosts
    }

    /// Installed routes, by host port and slot.
    pub fn routes(&self) -> impl Iterator<Item = &InstalledRoute> {
        self.routes.values()
    }

    /// When the processor is free again.
    pub fn busy_until(&self) -> u64 {
        self.busy_until
    }

    /// The source MAC of the DHCP server and of answers for its address: a masqueraded MAC of a
    /// slot that never exists, so a host's unicast to it always reaches the control plane
    /// (§3.2.3).
    pub fn server_mac(&self, dev: &Device, port: u8) -> MacAddr {
        dev.masqueraded_mac(port, RouteSlot(u32::MAX))
            .unwrap_or(dev.config().mac)
    }

    /// The earliest time a lease, transaction or idle route times out.
    pub fn next_wake(&self) -> Option<u64> {
        let idle = self.cfg.route_idle_timeout_ps;
        let routes = (idle > 0)
            .then(|| self.routes.values().map(|r| r.last_used_ps.saturating_add(idle)).min())
            .flatten();
        [
            self.dhcp.next_expiry(),
            self.pending_src.values().map(|t| t.deadline_ps).min(),
            self.pending_tgt.values().map(|t| t.deadline_ps).min(),
            routes,
            self.disc.as_ref().map(Discovery::next_wake),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Feeds one input at `now_ps`; `dev` is the device this control plane runs on.
    pub fn handle(&mut self, now_ps: u64, dev: &mut Device, input: ControlInput, out: &mut Vec<ControlAction>) {
        match input {
            ControlInput::Upcall { reason, frame } => self.upcall(now_ps, dev, reason, &frame, out),
            ControlInput::LinkDown { at } => {
                self.link_changed(now_ps, dev, at, false, out);
                if at.device == self.cfg.device_id {
                    self.discovery_port_down(now_ps, dev, at.port, out);
                }
            }
            ControlInput::LinkUp { at } => self.link_changed(now_ps, dev, at, true, out),
            ControlInput::Tick => self.tick(now_ps, dev, out),
        }
        if let Some(at_ps) = self.next_wake().filter(|t| *t > now_ps) {
            out.push(ControlAction::WakeAt { at_ps });
        }
    }

    /// Starts a piece of work lasting `ps` and returns when it is done.
    fn work(&mut self, now: u64, ps: u64) -> u64 {
        let start = now.max(self.busy_until);
        self.busy_until = start.saturating_add(ps);
        self.busy_until
    }

    fn drop_input(&mut self, reason: ControlDrop, out: &mut Vec<ControlAction>) {
        self.counters.count_drop(reason);
        out.push(ControlAction::Dropped { reason });
    }

    /// Sends an Ethernet frame out of host port `port` when the work ends at `at_ps`.
    fn send_to_host(&mut self, at_ps: u64, port: u8, ethernet: &[u8], out: &mut Vec<ControlAction>) {
        if let Some(frame) = frames::to_host(port, ethernet) {
            out.push(ControlAction::Inject { at_ps, frame });
        }
    }

    fn upcall(&mut self, now: u64, dev: &mut Device, reason: Upcall, frame: &[u8], out: &mut Vec<ControlAction>) {
        let Ok(p) = Packet::new_checked(frame) else {
            return self.drop_input(ControlDrop::MalformedAxon, out);
        };
        let Ok(header) = AxonRepr::parse(&p) else {
            return self.drop_input(ControlDrop::MalformedAxon, out);
        };
        let payload = p.payload();
        match reason {
            Upcall::Error(_) => self.drop_input(ControlDrop::DataPlaneError, out),
            Upcall::Addressed
                if header.packet_type == PacketType::Control && payload.first() == Some(&discovery::ADVERT_KIND) =>
            {
                self.advert_received(now, dev, &header, payload, out)
            }
            Upcall::Addressed if header.packet_type == PacketType::Control => {
                self.control_message(now, dev, &header, payload, out)
            }
            Upcall::Addressed if header.packet_type == PacketType::Probe => {
                self.probe_received(now, dev, &header, payload, out)
            }
            Upcall::Addressed => self.drop_input(ControlDrop::MalformedControl, out),
            Upcall::Broadcast | Upcall::LookupMiss | Upcall::Arp => match header.reverse.first() {
                Some(&port) if header.packet_type == PacketType::Ethernet => {
                    self.host_frame(now, dev, port, payload, out)
                }
                _ => self.drop_input(ControlDrop::MalformedAxon, out),
            },
        }
    }

    fn host_frame(&mut self, now: u64, dev: &mut Device, port: u8, eth: &[u8], out: &mut Vec<ControlAction>) {
        let Ok(f) = ethernet::Frame::new_checked(eth) else {
            return self.drop_input(ControlDrop::MalformedEthernet, out);
        };
        let (dst, payload) = (f.dst_addr(), f.payload());
        match f.ethertype() {
            EtherType::ARP => match frames::parse_arp(payload) {
                Some(a) => self.host_arp(now, dev, port, &a, out),
                None => self.drop_input(ControlDrop::MalformedArp, out),
            },
            EtherType::IPV4 if frames::is_dhcp(payload) => match frames::parse_dhcp(payload) {
                Some(d) => self.dhcp_message(now, dev, port, &d, out),
                None => self.drop_input(ControlDrop::MalformedDhcp, out),
            },
            _ if dst.is_multicast() => self.drop_input(ControlDrop::BroadcastNotHandled, out),
            _ => self.drop_input(ControlDrop::Unrouted, out),
        }
    }

    fn dhcp_message(
        &mut self,
        now: u64,
        dev: &mut Device,
        port: u8,
        msg: &tandem_wire::dhcp::DhcpRepr,
        out: &mut Vec<ControlAction>,
    ) {
        match self.dhcp.handle(now, port, msg) {
            DhcpDecision::Ignored(why) => self.drop_input(why, out),
            DhcpDecision::Released(l) => {
                self.counters.dhcp_releases += 1;
                self.forget_host(l.ip, msg.client_mac);
            }
            DhcpDecision::Reply { reply, lease } => {
                match reply.message_type {
                    DhcpMessageType::Offer => self.counters.dhcp_offers += 1,
                    DhcpMessageType::Ack => self.counters.dhcp_acks += 1,
                    _ => self.counters.dhcp_naks += 1,
                }
                if let Some(l) = lease.filter(|l| l.bound) {
                    self.hosts.insert(
                        l.ip,
                        LocalHost {
                            mac: msg.client_mac,
                            port,
                        },
                    );
                }
                let broadcast = reply.flags & FLAG_BROADCAST != 0;
                let eth_dst = if broadcast { MacAddr::BROADCAST } else { msg.client_mac };
                let ip_dst = if !reply.client_ip.is_unspecified() {
                    reply.client_ip
                } else if broadcast || reply.your_ip.is_unspecified() {
                    Ipv4Addr::BROADCAST
                } else {
                    reply.your_ip
                };
                let src = self.server_mac(dev, port);
                let Some(frame) = frames::dhcp_frame(eth_dst, src, self.cfg.pool.server_ip, ip_dst, &reply) else {
                    return;
                };
                let at = self.work(now, self.cfg.delays.dhcp_reply_ps);
                self.send_to_host(at, port, &frame, out);
            }
        }
    }

    fn forget_host(&mut self, ip: Ipv4Addr, mac: MacAddr) {
        if self.hosts.get(&ip).is_some_and(|h| h.mac == mac) {
            self.hosts.remove(&ip);
        }
    }

    fn tick(&mut self, now: u64, dev: &mut Device, out: &mut Vec<ControlAction>) {
        for (mac, lease) in self.dhcp.expire(now) {
            self.counters.dhcp_expired += 1;
            if lease.bound {
                self.forget_host(lease.ip, mac);
            }
        }
        self.expire_transactions(now, dev, out);
        self.expire_idle_routes(now, dev, out);
        self.discovery_tick(now, dev, out);
    }
}

// These drive the control plane through the testbed, which needs the `sim` feature.
#[cfg(all(test, feature = "sim"))]
mod tests;
