//! The routes this control plane installed in its host ports' route memory, what they cost each
//! link ([`super::route_calc::LinkLoads`]), their removal when idle, and failover: when a link
//! fails every route across it is recomputed over the remaining topology and reinstalled in the
//! same slot, so the host keeps using the MAC it has (the thesis left fault tolerance to future
//! work). Each Axon recomputes the routes that start at its own host ports; a failure must
//! therefore be reported to the control planes of both Axons of a route, by the driver or, with
//! [`super::discovery`] on, by probe timeouts and flooded advertisements.
//!
//! A route is idle when its host has not asked for it (ARP, including the unicast ARP refreshes
//! of §4.1.1) for [`super::ControlConfig::route_idle_timeout_ps`]: the data plane keeps no
//! per-route hit counters, and hosts revalidate their ARP caches while they use an entry.

use super::topology::{Endpoint, LinkId};
use super::{ControlAction, ControlDrop, ControlPlane};
use crate::dataplane::Device;
use crate::route_memory::{RouteEntry, RouteSlot};
use tandem_wire::axon::CONTROL_PORT;
use tandem_wire::{Ipv4Addr, MacAddr};

/// Why a route went away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RemovalReason {
    /// Its host did not ask for it within the idle timeout.
    Idle,
    /// A link failed and no other path is left.
    NoPath,
    /// A newer route between the same hosts replaced it.
    Replaced,
}

/// A valid route in a host port's route memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledRoute {
    /// The host port it starts at.
    pub port: u8,
    /// Its slot.
    pub slot: RouteSlot,
    /// The local host's address.
    pub from_ip: Ipv4Addr,
    /// The remote host's address.
    pub to_ip: Ipv4Addr,
    /// The Axon the remote host is on.
    pub to_device: u64,
    /// The remote host's port there.
    pub to_port: u8,
    /// The links crossed.
    pub links: Vec<LinkId>,
    /// What is in route memory.
    pub entry: RouteEntry,
    /// The CAM key asked for.
    pub cam_key: Option<MacAddr>,
    /// The MAC the local host sends to for `to_ip` (what its ARP reply said).
    pub host_mac: MacAddr,
    /// When the host last asked for it.
    pub last_used_ps: u64,
}

/// The CAM key to ask for and the MAC the host will have to use for a slot about to be
/// installed: the real MAC when the port's CAM has room for it, else the slot's masqueraded MAC.
pub fn predict_mac(dev: &Device, port: u8, slot: RouteSlot, real: MacAddr) -> (Option<MacAddr>, MacAddr) {
    let masq = dev.masqueraded_mac(port, slot).unwrap_or(MacAddr::ZERO);
    let Some(rm) = dev.route_memory(port) else {
        return (None, masq);
    };
    let room = rm.cam_len() < dev.config().cam_entries
        && !real.is_multicast()
        && rm.masquerade_slot(real).is_none()
        && rm.lookup(real).is_none();
    if room {
        (Some(real), real)
    } else {
        (None, masq)
    }
}

impl ControlPlane {
    /// The route a host port has to an address, if any.
    pub fn route_to(&self, port: u8, to_ip: Ipv4Addr) -> Option<&InstalledRoute> {
        self.routes.values().find(|r| r.port == port && r.to_ip == to_ip)
    }

    /// Installs `route` (its slot reserved) and tracks it; returns the MAC for the host.
    pub(super) fn install_tracked(
        &mut self,
        now: u64,
        dev: &mut Device,
        mut route: InstalledRoute,
        out: &mut Vec<ControlAction>,
    ) -> Option<MacAddr> {
        // An older route of the host to the same address goes first, so that the CAM key it
        // held (the destination's real MAC) is free for the new one: when two hosts ARP for each
        // other at once, a host is told that MAC by the other's Phase II and again by its own
        // Phase IV; installed the other way round the new route got a masqueraded MAC, the
        // reply named it, and Linux (which ignores a reply that changes an address learnt less
        // than a second before) kept sending to the MAC whose route was gone.
        let old: Vec<_> = self
            .routes
            .values()
            .filter(|r| r.port == route.port && r.to_ip == route.to_ip && r.slot != route.slot)
            .map(|r| (r.port, r.slot))
            .collect();
        for (p, s) in old {
            self.remove_tracked(dev, p, s, RemovalReason::Replaced, out);
        }
        let mac = match dev.install_route(route.port, route.slot, &route.entry, route.cam_key) {
            Ok(m) => m,
            Err(_) => {
                let _ = dev.remove_route(route.port, route.slot);
                self.drop_input(ControlDrop::RouteRejected, out);
                return None;
            }
        };
        route.host_mac = mac;
        route.cam_key = route.cam_key.filter(|k| *k == mac);
        route.last_used_ps = now;
        self.loads.add(&route.links);
        self.counters.routes_installed += 1;
        out.push(ControlAction::RouteInstalled {
            port: route.port,
            slot: route.slot,
            mac,
            hops: route.entry.forward.len(),
        });
        self.routes.insert((route.port, route.slot), route);
        Some(mac)
    }

    pub(super) fn remove_tracked(
        &mut self,
        dev: &mut Device,
        port: u8,
        slot: RouteSlot,
        why: RemovalReason,
        out: &mut Vec<ControlAction>,
    ) {
        if let Some(r) = self.routes.remove(&(port, slot)) {
            self.loads.remove(&r.links);
            let _ = dev.remove_route(port, slot);
            self.counters.routes_removed += 1;
            out.push(ControlAction::RouteRemoved { port, slot, why });
        }
    }

    pub(super) fn expire_idle_routes(&mut self, now: u64, dev: &mut Device, out: &mut Vec<ControlAction>) {
        let idle = self.cfg.route_idle_timeout_ps;
        if idle == 0 {
            return;
        }
        let gone: Vec<_> = self
            .routes
            .values()
            .filter(|r| r.last_used_ps.saturating_add(idle) <= now)
            .map(|r| (r.port, r.slot))
            .collect();
        for (p, s) in gone {
            self.remove_tracked(dev, p, s, RemovalReason::Idle, out);
        }
    }

    /// A link went down or came up; on a failure, reroutes every route across it.
    pub(super) fn link_changed(
        &mut self,
        _now: u64,
        dev: &mut Device,
        at: Endpoint,
        up: bool,
        out: &mut Vec<ControlAction>,
    ) {
        if let Some(id) = self.topo.link_at(at) {
            self.set_link(dev, id, up, out);
        }
    }

    /// Marks a link up or down; on a failure, reroutes every route across it.
    pub(super) fn set_link(&mut self, dev: &mut Device, id: LinkId, up: bool, out: &mut Vec<ControlAction>) {
        if !self.topo.set_up(id, up) || up {
            return;
        }
        let hit: Vec<_> = self
            .routes
            .values()
            .filter(|r| r.links.contains(&id))
            .map(|r| (r.port, r.slot))
            .collect();
        for key in hit {
            self.reroute(dev, key, out);
        }
    }

    fn reroute(&mut self, dev: &mut Device, key: (u8, RouteSlot), out: &mut Vec<ControlAction>) {
        let Some(mut r) = self.routes.get(&key).cloned() else {
            return;
        };
        self.loads.remove(&r.links);
        let me = self.cfg.device_id;
        let path = super::route_calc::best_path(&self.topo, &self.loads, me, r.to_device, self.cfg.path_slack_hops);
        let Some(path) = path else {
            self.loads.add(&r.links);
            self.remove_tracked(dev, key.0, key.1, RemovalReason::NoPath, out);
            return;
        };
        let mut forward = path.ports;
        forward.push(r.to_port);
        r.entry.forward = forward;
        match dev.install_route(r.port, r.slot, &r.entry, r.cam_key) {
            Ok(mac) => {
                r.links = path.links;
                r.host_mac = mac;
                self.loads.add(&r.links);
                self.counters.routes_rerouted += 1;
                out.push(ControlAction::RouteInstalled {
                    port: r.port,
                    slot: r.slot,
                    mac,
                    hops: r.entry.forward.len(),
                });
                self.routes.insert(key, r);
            }
            Err(_) => {
                self.loads.add(&r.links);
                self.drop_input(ControlDrop::RouteRejected, out);
                self.remove_tracked(dev, key.0, key.1, RemovalReason::NoPath, out);
            }
        }
    }

    /// The links a source route from here crosses and the Axon it ends at (the last hop, a host
    /// port or `0xf`, is not a link).
    pub(super) fn links_of(&self, forward: &[u8]) -> Option<(Vec<LinkId>, u64)> {
        let (_, hops) = forward.split_last()?;
        self.topo.walk(self.cfg.device_id, hops)
    }
}

/// A route's last hop replaced: the path to a control plane (ending `0xf`) turned into the path
/// to a host port there.
pub fn to_host_port(path_to_cp: &[u8], host_port: u8) -> Option<Vec<u8>> {
    let (last, rest) = path_to_cp.split_last()?;
    if *last != CONTROL_PORT {
        return None;
    }
    let mut v = rest.to_vec();
    v.push(host_port);
    Some(v)
}
