//! Axon-ARP (§3.2.3 "Transparent Route Creation", Table 4.3): the four phases by which the
//! source Axon (the source host's) and the target Axon (the target host's) set up routes both
//! ways, over [`tandem_wire::axon::control`] messages along source routes.
//!
//! * **Phase I** (source Axon, on the host's ARP request): route
//!   calculation to the Axon whose pool holds the target address, route allocation (a slot in
//!   the source host port's route memory), and the Axon-ARP request along the path to the target
//!   Axon's control plane. The request's source route MAC is the slot's masqueraded MAC when the
//!   port's CAM is full, else zero: the source Axon will map the target's real MAC in its CAM.
//! * **Phase II** (target Axon, on the Axon-ARP request): route determination and allocation (a
//!   slot in the target host port's route memory; the route back is the request's reverse path)
//!   and a standard ARP request to the target host whose sender MAC is the source host's real
//!   MAC if the CAM has room, else the new slot's masqueraded MAC.
//! * **Phase III** (target Axon, on the target host's ARP reply, which reaches the control plane
//!   because the slot is not valid yet): route storage (reverse path with its last hop turned
//!   into the source host's port; destination MAC the source's real MAC, source MAC what the
//!   source host will believe the target is) and the Axon-ARP reply along the reverse path.
//! * **Phase IV** (source Axon, on the Axon-ARP reply): route storage in the slot of Phase I and
//!   the ARP reply to the source host with the MAC the data plane returned (real or
//!   masqueraded).
//!
//! Transactions that do not finish within [`super::ControlConfig::arp_timeout_ps`] free their
//! slots. A source whose CAM filled between Phases I and IV ends up with a masqueraded MAC while
//! the target writes the target's real MAC as source: hosts accept it, and the next refresh
//! answers with the MAC in use.

use super::frames;
use super::route_calc::best_path;
use super::routes::{predict_mac, to_host_port, InstalledRoute};
use super::{ControlAction, ControlDrop, ControlPlane};
use crate::dataplane::Device;
use crate::route_memory::{RouteEntry, RouteSlot};
use tandem_wire::arp::{ArpOperation, ArpRepr};
use tandem_wire::axon::control::{AxonArp, ControlRepr};
use tandem_wire::axon::{AxonRepr, CONTROL_PORT};
use tandem_wire::{Ipv4Addr, MacAddr};

/// A transaction at the source Axon, between Phases I and IV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceTxn {
    /// The source host's port.
    pub port: u8,
    /// The slot reserved in Phase I.
    pub slot: RouteSlot,
    /// The request as sent.
    pub request: AxonArp,
    /// Whether the route is to be keyed by the target's real MAC in the CAM.
    pub use_cam: bool,
    /// The target Axon.
    pub target_device: u64,
    /// When it is abandoned.
    pub deadline_ps: u64,
}

/// Identifies a transaction at the target Axon: target host port, source address, target
/// address.
pub type TargetKey = (u8, Ipv4Addr, Ipv4Addr);

/// A transaction at the target Axon, between Phases II and III.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetTxn {
    /// The slot reserved in Phase II.
    pub slot: RouteSlot,
    /// The request received.
    pub request: AxonArp,
    /// The path back to the source Axon's control plane.
    pub back: Vec<u8>,
    /// The CAM key for the route back (the source host's real MAC) if the CAM has room.
    pub cam_key: Option<MacAddr>,
    /// The MAC the target host was told the source has.
    pub source_as_seen: MacAddr,
    /// When it is abandoned.
    pub deadline_ps: u64,
}

impl ControlPlane {
    /// Phase I: route calculation, route allocation, Axon-ARP request.
    pub(super) fn phase_one(
        &mut self,
        now: u64,
        dev: &mut Device,
        port: u8,
        a: &ArpRepr,
        out: &mut Vec<ControlAction>,
    ) {
        if self
            .pending_src
            .values()
            .any(|t| t.port == port && t.request.tgt_ip == a.target_ip)
        {
            return self.drop_input(ControlDrop::AlreadyPending, out);
        }
        let me = self.cfg.device_id;
        let Some(owner) = self.topo.owner_of(a.target_ip).filter(|o| *o != me) else {
            return self.drop_input(ControlDrop::UnknownTarget, out);
        };
        let Some(path) = best_path(&self.topo, &self.loads, me, owner, self.cfg.path_slack_hops) else {
            return self.drop_input(ControlDrop::NoPath, out);
        };
        let Ok(slot) = dev.reserve_route(port) else {
            return self.drop_input(ControlDrop::RouteMemoryFull, out);
        };
        let cam_room = dev
            .route_memory(port)
            .is_some_and(|m| m.cam_len() < dev.config().cam_entries);
        let src_route_mac = if cam_room {
            MacAddr::ZERO
        } else {
            dev.masqueraded_mac(port, slot).unwrap_or(MacAddr::ZERO)
        };
        let xid = self.next_xid;
        self.next_xid = self.next_xid.wrapping_add(1);
        let request = AxonArp {
            xid,
            src_port: port,
            src_mac: a.sender_mac,
            src_route_mac,
            src_ip: a.sender_ip,
            tgt_port: 0,
            tgt_mac: MacAddr::ZERO,
            tgt_route_mac: MacAddr::ZERO,
            tgt_ip: a.target_ip,
        };
        let mut forward = path.ports;
        forward.push(CONTROL_PORT);
        let Some(frame) = frames::control_frame(&forward, &ControlRepr::ArpRequest(request)) else {
            let _ = dev.remove_route(port, slot);
            return self.drop_input(ControlDrop::NoPath, out);
        };
        let d = self.cfg.delays;
        let at = self.work(
            now,
            d.route_calculation_ps + d.route_allocation_ps + d.axon_arp_request_ps,
        );
        self.counters.axon_arp_started += 1;
        self.pending_src.insert(
            xid,
            SourceTxn {
                port,
                slot,
                request,
                use_cam: cam_room,
                target_device: owner,
                deadline_ps: now.saturating_add(self.cfg.arp_timeout_ps),
            },
        );
        out.push(ControlAction::Inject { at_ps: at, frame });
    }

    /// A control message for this control plane: Phase II or Phase IV.
    pub(super) fn control_message(
        &mut self,
        now: u64,
        dev: &mut Device,
        header: &AxonRepr,
        body: &[u8],
        out: &mut Vec<ControlAction>,
    ) {
        let back = header.reply_route();
        if back.last() != Some(&CONTROL_PORT) {
            return self.drop_input(ControlDrop::MalformedControl, out);
        }
        match frames::parse_control(body) {
            Some(ControlRepr::ArpRequest(m)) => self.phase_two(now, dev, back, m, out),
            Some(ControlRepr::ArpReply(m)) => self.phase_four(now, dev, back, m, out),
            _ => self.drop_input(ControlDrop::MalformedControl, out),
        }
    }

    /// Phase II: allocation at the target Axon and an ARP request to the target host.
    fn phase_two(&mut self, now: u64, dev: &mut Device, back: Vec<u8>, m: AxonArp, out: &mut Vec<ControlAction>) {
        let Some(t) = self.local_host(m.tgt_ip) else {
            return self.drop_input(ControlDrop::TargetHostUnknown, out);
        };
        let key = (t.port, m.src_ip, m.tgt_ip);
        if self.pending_tgt.contains_key(&key) {
            return self.drop_input(ControlDrop::AlreadyPending, out);
        }
        let Ok(slot) = dev.reserve_route(t.port) else {
            return self.drop_input(ControlDrop::RouteMemoryFull, out);
        };
        let (cam_key, source_as_seen) = predict_mac(dev, t.port, slot, m.src_mac);
        let request = ArpRepr {
            operation: ArpOperation::Request,
            sender_mac: source_as_seen,
            sender_ip: m.src_ip,
            target_mac: MacAddr::ZERO,
            target_ip: m.tgt_ip,
        };
        let d = self.cfg.delays;
        let at = self.work(now, d.target_allocation_ps + d.host_arp_request_ps);
        self.pending_tgt.insert(
            key,
            TargetTxn {
                slot,
                request: m,
                back,
                cam_key,
                source_as_seen,
                deadline_ps: now.saturating_add(self.cfg.arp_timeout_ps),
            },
        );
        // Unicast to the host we know (its lease or its own ARP told us its MAC): an Axon never
        // broadcasts to a host on behalf of another.
        let frame = frames::arp_frame(t.mac, source_as_seen, &request);
        self.send_to_host(at, t.port, &frame, out);
    }

    /// Phase III: route storage at the target Axon and the Axon-ARP reply.
    pub(super) fn phase_three(
        &mut self,
        now: u64,
        dev: &mut Device,
        key: TargetKey,
        a: &ArpRepr,
        out: &mut Vec<ControlAction>,
    ) {
        let Some(txn) = self.pending_tgt.remove(&key) else {
            return self.drop_input(ControlDrop::NoTransaction, out);
        };
        let port = key.0;
        let m = txn.request;
        let Some(forward) = to_host_port(&txn.back, m.src_port) else {
            let _ = dev.remove_route(port, txn.slot);
            return self.drop_input(ControlDrop::MalformedControl, out);
        };
        let Some((links, src_device)) = self.links_of(&forward) else {
            let _ = dev.remove_route(port, txn.slot);
            return self.drop_input(ControlDrop::NoPath, out);
        };
        // What the source host will believe the target's MAC is.
        let target_as_seen = if m.src_route_mac == MacAddr::ZERO {
            a.sender_mac
        } else {
            m.src_route_mac
        };
        let route = InstalledRoute {
            port,
            slot: txn.slot,
            from_ip: m.tgt_ip,
            to_ip: m.src_ip,
            to_device: src_device,
            to_port: m.src_port,
            links,
            entry: RouteEntry {
                forward,
                dst_mac: m.src_mac,
                src_mac: target_as_seen,
            },
            cam_key: txn.cam_key,
            host_mac: txn.source_as_seen,
            last_used_ps: now,
        };
        let d = self.cfg.delays;
        let at = self.work(now, d.target_route_storage_ps + d.axon_arp_reply_ps);
        let Some(mac) = self.install_tracked(now, dev, route, out) else {
            return;
        };
        let reply = AxonArp {
            tgt_port: port,
            tgt_mac: a.sender_mac,
            tgt_route_mac: mac,
            ..m
        };
        if let Some(frame) = frames::control_frame(&txn.back, &ControlRepr::ArpReply(reply)) {
            out.push(ControlAction::Inject { at_ps: at, frame });
        }
    }

    /// Phase IV: route storage at the source Axon and the ARP reply to the source host.
    fn phase_four(&mut self, now: u64, dev: &mut Device, back: Vec<u8>, m: AxonArp, out: &mut Vec<ControlAction>) {
        let Some(txn) = self
            .pending_src
            .get(&m.xid)
            .filter(|t| t.request.tgt_ip == m.tgt_ip)
            .cloned()
        else {
            return self.drop_input(ControlDrop::NoTransaction, out);
        };
        self.pending_src.remove(&m.xid);
        let Some(forward) = to_host_port(&back, m.tgt_port) else {
            let _ = dev.remove_route(txn.port, txn.slot);
            return self.drop_input(ControlDrop::MalformedControl, out);
        };
        let Some((links, _)) = self.links_of(&forward) else {
            let _ = dev.remove_route(txn.port, txn.slot);
            return self.drop_input(ControlDrop::NoPath, out);
        };
        let route = InstalledRoute {
            port: txn.port,
            slot: txn.slot,
            from_ip: m.src_ip,
            to_ip: m.tgt_ip,
            to_device: txn.target_device,
            to_port: m.tgt_port,
            links,
            entry: RouteEntry {
                forward,
                dst_mac: m.tgt_mac,
                src_mac: m.tgt_route_mac,
            },
            cam_key: txn.use_cam.then_some(m.tgt_mac),
            host_mac: MacAddr::ZERO,
            last_used_ps: now,
        };
        let d = self.cfg.delays;
        let at = self.work(now, d.source_route_storage_ps);
        let Some(mac) = self.install_tracked(now, dev, route, out) else {
            return;
        };
        self.counters.axon_arp_completed += 1;
        let host_request = ArpRepr {
            operation: ArpOperation::Request,
            sender_mac: m.src_mac,
            sender_ip: m.src_ip,
            target_mac: MacAddr::ZERO,
            target_ip: m.tgt_ip,
        };
        self.answer_host(at, txn.port, &host_request, mac, out);
    }

    pub(super) fn expire_transactions(&mut self, now: u64, dev: &mut Device, out: &mut Vec<ControlAction>) {
        let src: Vec<_> = self
            .pending_src
            .iter()
            .filter(|(_, t)| t.deadline_ps <= now)
            .map(|(x, t)| (*x, t.port, t.slot))
            .collect();
        for (xid, port, slot) in src {
            self.pending_src.remove(&xid);
            let _ = dev.remove_route(port, slot);
            self.drop_input(ControlDrop::TransactionTimeout, out);
        }
        let tgt: Vec<_> = self
            .pending_tgt
            .iter()
            .filter(|(_, t)| t.deadline_ps <= now)
            .map(|(k, t)| (*k, t.slot))
            .collect();
        for (key, slot) in tgt {
            self.pending_tgt.remove(&key);
            let _ = dev.remove_route(key.0, slot);
            self.drop_input(ControlDrop::TransactionTimeout, out);
        }
    }
}
