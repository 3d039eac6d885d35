//! ARP interception at the host ports (§3.2.3 "Transparent Route Creation", §4.1.1). Every ARP
//! frame from a host reaches the control plane (broadcasts, and unicast ARP, which the data
//! plane intercepts whatever its destination). A request is answered here:
//!
//! * for the control plane's own address, with the server MAC;
//! * for an address the host already has a route to (a repeated request, or the unicast ARP
//!   refresh of §4.1.1 addressed to a masqueraded MAC the target host would not recognise),
//!   with the MAC the route gave the host; the route counts as used;
//! * for a host on another port of this Axon, by installing routes both ways at once and
//!   answering;
//! * otherwise Axon-ARP starts ([`super::axon_arp`], Phase I).
//!
//! A gratuitous ARP (sender and target address equal) teaches the control plane where its
//! sender is and is never flooded. An ARP reply from a host finishes Phase III when it answers
//! a pending Axon-ARP request.

use super::frames;
use super::routes::{predict_mac, InstalledRoute};
use super::{ControlAction, ControlDrop, ControlPlane, LocalHost};
use crate::dataplane::Device;
use crate::route_memory::RouteEntry;
use tandem_wire::arp::{ArpOperation, ArpRepr};
use tandem_wire::{Ipv4Addr, MacAddr};

impl ControlPlane {
    pub(super) fn host_arp(&mut self, now: u64, dev: &mut Device, port: u8, a: &ArpRepr, out: &mut Vec<ControlAction>) {
        if a.sender_ip == a.target_ip && !a.sender_ip.is_unspecified() {
            self.counters.arp_gratuitous += 1;
            self.hosts.insert(
                a.sender_ip,
                LocalHost {
                    mac: a.sender_mac,
                    port,
                },
            );
            return;
        }
        match a.operation {
            ArpOperation::Request => self.host_arp_request(now, dev, port, a, out),
            ArpOperation::Reply => self.host_arp_reply(now, dev, port, a, out),
            ArpOperation::Unknown(_) => self.drop_input(ControlDrop::MalformedArp, out),
        }
    }

    fn host_arp_request(&mut self, now: u64, dev: &mut Device, port: u8, a: &ArpRepr, out: &mut Vec<ControlAction>) {
        if a.sender_ip.is_unspecified() || a.target_ip == a.sender_ip {
            return self.drop_input(ControlDrop::ArpIgnored, out);
        }
        if a.target_ip == self.cfg.pool.server_ip {
            let mac = self.server_mac(dev, port);
            return self.answer_host(now, port, a, mac, out);
        }
        let known = self
            .routes
            .values_mut()
            .find(|r| r.port == port && r.to_ip == a.target_ip)
            .map(|r| {
                r.last_used_ps = now;
                r.host_mac
            });
        if let Some(mac) = known {
            return self.answer_host(now, port, a, mac, out);
        }
        match self.hosts.get(&a.target_ip).copied() {
            Some(t) if t.port == port => self.answer_host(now, port, a, t.mac, out),
            Some(t) => self.local_pair(now, dev, port, a, t, out),
            None => self.phase_one(now, dev, port, a, out),
        }
    }

    /// Answers a host's request for `a.target_ip` with `mac`.
    pub(super) fn answer_host(&mut self, now: u64, port: u8, a: &ArpRepr, mac: MacAddr, out: &mut Vec<ControlAction>) {
        self.counters.arp_answered += 1;
        let reply = ArpRepr {
            operation: ArpOperation::Reply,
            sender_mac: mac,
            sender_ip: a.target_ip,
            target_mac: a.sender_mac,
            target_ip: a.sender_ip,
        };
        let at = self.work(now, self.cfg.delays.host_arp_reply_ps);
        self.send_to_host(at, port, &frames::arp_frame(a.sender_mac, mac, &reply), out);
    }

    /// Both hosts on this Axon: one hop each way, installed together.
    fn local_pair(
        &mut self,
        now: u64,
        dev: &mut Device,
        port: u8,
        a: &ArpRepr,
        t: LocalHost,
        out: &mut Vec<ControlAction>,
    ) {
        let Ok(s_slot) = dev.reserve_route(port) else {
            return self.drop_input(ControlDrop::RouteMemoryFull, out);
        };
        let Ok(t_slot) = dev.reserve_route(t.port) else {
            let _ = dev.remove_route(port, s_slot);
            return self.drop_input(ControlDrop::RouteMemoryFull, out);
        };
        let (s_key, s_mac) = predict_mac(dev, port, s_slot, t.mac);
        let (t_key, t_mac) = predict_mac(dev, t.port, t_slot, a.sender_mac);
        let me = self.cfg.device_id;
        let there = InstalledRoute {
            port,
            slot: s_slot,
            from_ip: a.sender_ip,
            to_ip: a.target_ip,
            to_device: me,
            to_port: t.port,
            links: vec![],
            entry: RouteEntry {
                forward: vec![t.port],
                dst_mac: t.mac,
                src_mac: t_mac,
            },
            cam_key: s_key,
            host_mac: s_mac,
            last_used_ps: now,
        };
        let back = InstalledRoute {
            port: t.port,
            slot: t_slot,
            from_ip: a.target_ip,
            to_ip: a.sender_ip,
            to_device: me,
            to_port: port,
            links: vec![],
            entry: RouteEntry {
                forward: vec![port],
                dst_mac: a.sender_mac,
                src_mac: s_mac,
            },
            cam_key: t_key,
            host_mac: t_mac,
            last_used_ps: now,
        };
        let at = self.work(now, self.cfg.delays.route_allocation_ps);
        let installed = self.install_tracked(at, dev, there, out);
        if self.install_tracked(at, dev, back, out).is_none() {
            let _ = dev.remove_route(t.port, t_slot);
        }
        if let Some(mac) = installed {
            self.answer_host(now, port, a, mac, out);
        }
    }

    fn host_arp_reply(&mut self, now: u64, dev: &mut Device, port: u8, a: &ArpRepr, out: &mut Vec<ControlAction>) {
        let key = (port, a.target_ip, a.sender_ip);
        if self.pending_tgt.contains_key(&key) {
            self.hosts.insert(
                a.sender_ip,
                LocalHost {
                    mac: a.sender_mac,
                    port,
                },
            );
            return self.phase_three(now, dev, key, a, out);
        }
        self.drop_input(ControlDrop::ArpIgnored, out);
    }

    /// Whether an address is a known host here (used by Phase II).
    pub(super) fn local_host(&self, ip: Ipv4Addr) -> Option<LocalHost> {
        self.hosts.get(&ip).copied()
    }
}
