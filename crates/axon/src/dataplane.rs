//! The sans-IO device: [`Device::handle`] is fed `(now_ps, Event)` and pushes [`Action`]s. It
//! never reads a clock, socket, global or random number; the same events give the same actions.
//!
//! Per frame (§3.2.1):
//!
//! * **host port**: a broadcast or multicast destination, a unicast ARP frame (§4.1.1: the
//!   control plane answers those itself), or a destination with no valid route in the port's
//!   route memory, goes to the control plane with a default header (forward path
//!   `[0xf]`, so after header processing an empty forward path and reverse path `[port]`). A
//!   valid route's header is prepended, the MACs are rewritten as stored, the header bytes count
//!   toward self-congestion, and the frame goes through header processing. This is the only route
//!   lookup on the frame's path;
//! * **Axon port** (and frames from the control plane, whose port is `0xf`): header processing
//!   only;
//! * **header processing**: pop the next forward hop and push the input port on the reverse path.
//!   `0xf` hands the frame to the control plane; an Axon port gets the frame as is; a host port
//!   gets the encapsulated Ethernet frame with the header stripped. No forward hop left, a hop
//!   naming a port the device lacks, or a non-Ethernet frame bound for a host port turns the frame
//!   into an error report for the control plane ([`Upcall::Error`]);
//! * **output**: the frame waits in the output port's buffer for its input port; buffers are
//!   served round robin, a frame leaves no earlier than the timing model allows, and the driver
//!   reports each transmission's end with [`Event::TxDone`].

use crate::bootstrap::{hello_frame, parse_hello};
use crate::config::{ConfigError, DeviceConfig};
use crate::counters::{Counters, DropReason};
use crate::output::{OutputPort, Queued};
use crate::port::{Neighbor, PortKind, PortState};
use crate::route_memory::{LookupVia, RouteEntry, RouteError, RouteMemory, RouteSlot};
use crate::self_congestion::{pause_frame, quanta_for, HeaderDebt};
use crate::timing::wire_time_ps;
use tandem_wire::axon::error::{ErrorCode, ErrorRepr};
use tandem_wire::axon::probe::{self, ProbeRecord, StampPoint, OPT_TIMESTAMPS};
use tandem_wire::axon::{AxonRepr, Packet, PacketType, CONTROL_PORT, NO_FORWARD_HOP};
use tandem_wire::ethernet::{self, HEADER_LEN as ETHERNET_HEADER_LEN};
use tandem_wire::{Error as WireError, MacAddr};

/// Something that happened to the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A port's link came up: the device starts the bootstrap exchange on it.
    LinkUp {
        /// The port.
        port: u8,
    },
    /// A port's link went down: its waiting frames are dropped.
    LinkDown {
        /// The port.
        port: u8,
    },
    /// A frame (without FCS) began to arrive on a port at `now` (its first byte; see
    /// [`crate::timing`]).
    Frame {
        /// The port.
        port: u8,
        /// The bytes.
        frame: Vec<u8>,
    },
    /// The control plane injects an Axon frame (its port is `0xf`); its first forward hop is the
    /// output port here.
    FromControlPlane {
        /// The Axon frame.
        frame: Vec<u8>,
    },
    /// The driver finished sending the last frame handed to it on `port`.
    TxDone {
        /// The port.
        port: u8,
    },
    /// Time passed: ports past their bootstrap timeout become host ports.
    Tick,
}

/// Why a frame went to the control plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Upcall {
    /// A host's broadcast or multicast frame (ARP, DHCP, ...).
    Broadcast,
    /// A host's unicast frame with no valid route for its destination.
    LookupMiss,
    /// A host's unicast ARP frame, intercepted whatever its destination so the control plane
    /// answers it (the unicast ARP problem of §4.1.1 with masqueraded MACs).
    Arp,
    /// An Axon frame whose next hop was `0xf` (control messages, probes coming home).
    Addressed,
    /// An error report built here (the frame's type is now [`PacketType::Error`]).
    Error(ErrorCode),
}

/// What the device asks its driver (or control plane) to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send `frame` on `port`, its first byte at `start_ps` (never before the event's `now`).
    /// The port takes nothing else until [`Event::TxDone`].
    Transmit {
        /// The port.
        port: u8,
        /// When the first byte may leave.
        start_ps: u64,
        /// The bytes, without FCS.
        frame: Vec<u8>,
    },
    /// Hand an Axon frame to the control plane at `at_ps`.
    ToControlPlane {
        /// When the whole frame has reached the control plane's port.
        at_ps: u64,
        /// Why.
        reason: Upcall,
        /// The Axon frame, header processed (its reverse path leads back to the source).
        frame: Vec<u8>,
    },
    /// A port's kind changed (bootstrap).
    PortClassified {
        /// The port.
        port: u8,
        /// What it is now.
        kind: PortKind,
        /// The neighbor Axon, for an Axon port.
        neighbor: Option<Neighbor>,
    },
    /// A frame was dropped (also counted in [`Counters`]).
    Dropped {
        /// Why.
        reason: DropReason,
        /// The port it arrived on (`0xf` for the control plane), if known.
        port: Option<u8>,
        /// Its length.
        bytes: usize,
    },
}

/// An Axon device's data plane.
#[derive(Debug, Clone)]
pub struct Device {
    cfg: DeviceConfig,
    ports: Vec<PortState>,
    routes: Vec<RouteMemory>,
    outputs: Vec<OutputPort>,
    debt: Vec<HeaderDebt>,
    /// Per port: upcall tokens left (scaled by 10^12 per token) and when they were counted.
    upcall_tokens: Vec<(u128, u64)>,
    counters: Counters,
}

/// Where a frame entered, for header processing and timing.
#[derive(Debug, Clone, Copy)]
struct Ingress {
    /// Input port number (`0xf` for the control plane).
    port: u8,
    /// Output buffer index of that input.
    buffer: usize,
    rx_start: u64,
    rx_end: u64,
    latency: u64,
}

impl Device {
    /// A device with every port's link up since time 0 and of unknown kind.
    pub fn new(cfg: DeviceConfig) -> Result<Device, ConfigError> {
        cfg.validate()?;
        let n = cfg.ports.len();
        Ok(Device {
            ports: vec![PortState::new(); n],
            routes: (0..n)
                .map(|_| RouteMemory::new(cfg.route_slots, cfg.cam_entries, cfg.masquerade_prefix))
                .collect(),
            outputs: (0..n)
                .map(|_| OutputPort::new(n + 1, cfg.output_buffer_bytes))
                .collect(),
            debt: vec![HeaderDebt::default(); n],
            upcall_tokens: vec![(u128::from(cfg.upcall_burst.max(1)) * 1_000_000_000_000, 0); n],
            counters: Counters::default(),
            cfg,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &DeviceConfig {
        &self.cfg
    }

    /// The counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Number of Ethernet ports.
    pub fn port_count(&self) -> usize {
        self.ports.len()
    }

    /// A port's state.
    pub fn port(&self, port: u8) -> Option<&PortState> {
        self.ports.get(usize::from(port))
    }

    /// The MAC a port uses as a source (PAUSE frames): the device MAC plus the port number.
    pub fn port_mac(&self, port: u8) -> MacAddr {
        let mut m = self.cfg.mac;
        m.0[5] = m.0[5].wrapping_add(port);
        m
    }

    /// Sets a port's kind by configuration, as the prototype's control plane does from its file;
    /// a later hello still marks the port an Axon port.
    pub fn set_port_kind(&mut self, port: u8, kind: PortKind) -> Result<(), RouteError> {
        let p = self
            .ports
            .get_mut(usize::from(port))
            .ok_or(RouteError::NoSuchPort(port))?;
        p.kind = kind;
        p.configured = kind != PortKind::Unknown;
        Ok(())
    }

    /// Switches between cut-through and store-and-forward (the prototype's mode register).
    pub fn set_mode(&mut self, mode: crate::timing::ForwardingMode) {
        self.cfg.mode = mode;
    }

    /// A port's route memory.
    pub fn route_memory(&self, port: u8) -> Option<&RouteMemory> {
        self.routes.get(usize::from(port))
    }

    fn routes_mut(&mut self, port: u8) -> Result<&mut RouteMemory, RouteError> {
        self.routes
            .get_mut(usize::from(port))
            .ok_or(RouteError::NoSuchPort(port))
    }

    /// Reserves a slot in a host port's route memory (§3.2.3, on an ARP request).
    pub fn reserve_route(&mut self, port: u8) -> Result<RouteSlot, RouteError> {
        self.routes_mut(port)?.reserve()
    }

    /// Installs a route in a reserved slot; returns the destination MAC the host must use (the
    /// `cam_key` if the CAM took it, else the slot's masqueraded MAC). See
    /// [`RouteMemory::install`].
    pub fn install_route(
        &mut self,
        port: u8,
        slot: RouteSlot,
        entry: &RouteEntry,
        cam_key: Option<MacAddr>,
    ) -> Result<MacAddr, RouteError> {
        self.routes_mut(port)?.install(slot, entry, cam_key)
    }

    /// Frees a slot (and its CAM entry).
    pub fn remove_route(&mut self, port: u8, slot: RouteSlot) -> Result<(), RouteError> {
        self.routes_mut(port)?.remove(slot)
    }

    /// The masqueraded MAC of a slot of a port.
    pub fn masqueraded_mac(&self, port: u8, slot: RouteSlot) -> Option<MacAddr> {
        self.route_memory(port).map(|m| m.masqueraded_mac(slot))
    }

    /// Feeds one event at `now_ps` and pushes the resulting actions onto `out`.
    pub fn handle(&mut self, now_ps: u64, event: Event, out: &mut Vec<Action>) {
        match event {
            Event::LinkUp { port } => self.link_up(now_ps, port, out),
            Event::LinkDown { port } => self.link_down(port, out),
            Event::Frame { port, frame } => self.receive(now_ps, port, frame, out),
            Event::FromControlPlane { frame } => {
                self.counters.from_control_plane += 1;
                let ingress = Ingress {
                    port: CONTROL_PORT,
                    buffer: self.ports.len(),
                    rx_start: now_ps,
                    rx_end: now_ps,
                    latency: self.cfg.timing.from_axon_ps(),
                };
                self.process_header(now_ps, ingress, frame, out);
            }
            Event::TxDone { port } => {
                if let Some(o) = self.outputs.get_mut(usize::from(port)) {
                    o.busy = false;
                    self.start_next(now_ps, port, out);
                }
            }
            Event::Tick => {
                for port in 0..self.ports.len() as u8 {
                    self.bootstrap_timeout(now_ps, port, out);
                }
            }
        }
    }

    fn drop_frame(&mut self, reason: DropReason, port: Option<u8>, bytes: usize, out: &mut Vec<Action>) {
        self.counters.count_drop(reason);
        out.push(Action::Dropped { reason, port, bytes });
    }

    fn classify(&mut self, port: u8, kind: PortKind, neighbor: Option<Neighbor>, out: &mut Vec<Action>) {
        let p = &mut self.ports[usize::from(port)];
        if p.kind != kind || p.neighbor != neighbor {
            p.kind = kind;
            p.neighbor = neighbor;
            out.push(Action::PortClassified { port, kind, neighbor });
        }
    }

    fn link_up(&mut self, now: u64, port: u8, out: &mut Vec<Action>) {
        let Some(p) = self.ports.get_mut(usize::from(port)) else {
            return self.drop_frame(DropReason::NoSuchPort, Some(port), 0, out);
        };
        p.link_up = true;
        p.link_up_at = now;
        self.send_mac_control(now, port, hello_frame(self.cfg.device_id, port, false), out);
        self.counters.hellos_sent += 1;
    }

    fn link_down(&mut self, port: u8, out: &mut Vec<Action>) {
        let i = usize::from(port);
        let Some(p) = self.ports.get_mut(i) else {
            return self.drop_frame(DropReason::NoSuchPort, Some(port), 0, out);
        };
        p.link_up = false;
        if !p.configured {
            p.kind = PortKind::Unknown;
            p.neighbor = None;
        }
        let flushed = self.outputs[i].flush();
        self.outputs[i].busy = false;
        for q in flushed {
            self.drop_frame(DropReason::FlushedOnLinkDown, None, q.frame.len(), out);
        }
    }

    fn bootstrap_timeout(&mut self, now: u64, port: u8, out: &mut Vec<Action>) {
        let p = self.ports[usize::from(port)];
        if p.kind == PortKind::Unknown && p.link_up && now >= p.link_up_at.saturating_add(self.cfg.bootstrap_timeout_ps)
        {
            self.classify(port, PortKind::Host, None, out);
        }
    }

    fn receive(&mut self, now: u64, port: u8, frame: Vec<u8>, out: &mut Vec<Action>) {
        let i = usize::from(port);
        if i >= self.ports.len() {
            return self.drop_frame(DropReason::NoSuchPort, Some(port), frame.len(), out);
        }
        self.counters.received += 1;
        if !self.ports[i].link_up {
            return self.drop_frame(DropReason::InputLinkDown, Some(port), frame.len(), out);
        }
        if frame.len() > self.cfg.max_frame_bytes {
            return self.drop_frame(DropReason::Oversize, Some(port), frame.len(), out);
        }
        if let Some((reply, hello)) = parse_hello(&frame) {
            self.counters.hellos_received += 1;
            let neighbor = Neighbor {
                device_id: hello.device_id,
                port: hello.port,
            };
            self.classify(port, PortKind::Axon, Some(neighbor), out);
            if !reply {
                self.send_mac_control(now, port, hello_frame(self.cfg.device_id, port, true), out);
                self.counters.hellos_sent += 1;
            }
            return;
        }
        self.bootstrap_timeout(now, port, out);
        let rx_end = now + wire_time_ps(frame.len(), self.cfg.ports[i].line_rate_bps);
        match self.ports[i].kind {
            PortKind::Unknown => self.drop_frame(DropReason::PortUnclassified, Some(port), frame.len(), out),
            PortKind::Host => self.host_ingress(now, rx_end, port, frame, out),
            PortKind::Axon => {
                let ingress = Ingress {
                    port,
                    buffer: i,
                    rx_start: now,
                    rx_end,
                    latency: self.cfg.timing.from_axon_ps(),
                };
                self.process_header(now, ingress, frame, out);
            }
        }
    }

    /// Route lookup (§3.2.1): only on a host port, only at the first Axon.
    fn host_ingress(&mut self, now: u64, rx_end: u64, port: u8, frame: Vec<u8>, out: &mut Vec<Action>) {
        let (dst, arp) = match ethernet::Frame::new_checked(&frame[..]) {
            Ok(e) => (e.dst_addr(), e.ethertype() == ethernet::EtherType::ARP),
            Err(_) => return self.drop_frame(DropReason::MalformedEthernet, Some(port), frame.len(), out),
        };
        let route = if dst.is_multicast() {
            self.counters.broadcasts += 1;
            None
        } else if arp {
            None
        } else {
            let found = self.routes[usize::from(port)].lookup(dst);
            match found {
                Some((_, LookupVia::Cam)) => self.counters.cam_hits += 1,
                Some((_, LookupVia::Masquerade)) => self.counters.masquerade_hits += 1,
                None => self.counters.lookup_misses += 1,
            }
            found.map(|(r, _)| (r.header.clone(), r.hops, r.dst_mac, r.src_mac))
        };
        let Some((header, hops, dst_mac, src_mac)) = route else {
            let reason = if dst.is_multicast() {
                Upcall::Broadcast
            } else if arp {
                Upcall::Arp
            } else {
                Upcall::LookupMiss
            };
            // The default header: one hop, to the control plane, already taken.
            let h = AxonRepr {
                packet_type: PacketType::Ethernet,
                forward: vec![],
                reverse: vec![port],
            };
            let at = rx_end + self.cfg.timing.from_host_ps(1);
            if !self.take_upcall_token(port, rx_end) {
                return self.drop_frame(DropReason::UpcallRateLimited, Some(port), frame.len(), out);
            }
            if let Ok(f) = h.to_frame(&frame) {
                self.upcall(at, reason, f, out);
            }
            return;
        };
        let hl = header.len();
        let mut packet = header;
        packet.extend_from_slice(&frame);
        packet[hl..hl + 6].copy_from_slice(&dst_mac.0);
        packet[hl + 6..hl + 12].copy_from_slice(&src_mac.0);
        if self.debt[usize::from(port)].add(&self.cfg.pause, hl) {
            let quanta = quanta_for(self.cfg.pause.pause_for_bytes);
            self.send_mac_control(now, port, pause_frame(self.port_mac(port), quanta), out);
            self.counters.pauses_sent += 1;
        }
        let ingress = Ingress {
            port,
            buffer: usize::from(port),
            rx_start: now,
            rx_end,
            latency: self.cfg.timing.from_host_ps(hops),
        };
        self.process_header(now, ingress, packet, out);
    }

    /// Header processing (§3.2.1).
    fn process_header(&mut self, now: u64, ig: Ingress, mut packet: Vec<u8>, out: &mut Vec<Action>) {
        let (hl, ptype) = match Packet::new_checked(&packet[..]) {
            Ok(p) => (p.header_len(), p.packet_type()),
            Err(_) => {
                let reason = if ig.port == CONTROL_PORT {
                    DropReason::MalformedFromControlPlane
                } else {
                    DropReason::MalformedAxon
                };
                return self.drop_frame(reason, Some(ig.port), packet.len(), out);
            }
        };
        let probe_at = (ptype == PacketType::Probe
            && packet.get(hl).is_some_and(|o| o & OPT_TIMESTAMPS != 0)
            && probe::Packet::new_checked(&packet[hl..]).is_ok())
        .then_some(hl);
        if let Some(at) = probe_at {
            self.stamp(&mut packet, at, ig.port, StampPoint::Input, now);
        }
        let hop = match Packet::new_unchecked(&mut packet[..]).advance(ig.port) {
            Ok(h) => h,
            Err(WireError::Malformed(NO_FORWARD_HOP)) => {
                return self.report_error(ig, ErrorCode::NoForwardHop, packet, true, out)
            }
            Err(_) => return self.report_error(ig, ErrorCode::ReversePathFull, packet, false, out),
        };
        let cp_at = ig.rx_end + ig.latency;
        if hop == CONTROL_PORT {
            return self.upcall(cp_at, Upcall::Addressed, packet, out);
        }
        let o = usize::from(hop);
        if o >= self.ports.len() {
            return self.report_error(ig, ErrorCode::NoSuchPort, packet, false, out);
        }
        let dest = self.ports[o];
        if !dest.link_up {
            return self.drop_frame(DropReason::OutputLinkDown, Some(ig.port), packet.len(), out);
        }
        let (frame, probe_at) = match dest.kind {
            PortKind::Unknown => {
                return self.drop_frame(DropReason::OutputUnclassified, Some(ig.port), packet.len(), out)
            }
            PortKind::Axon => (packet, probe_at),
            PortKind::Host if ptype != PacketType::Ethernet => {
                return self.report_error(ig, ErrorCode::WrongType, packet, false, out)
            }
            PortKind::Host => {
                if packet.len() < hl + ETHERNET_HEADER_LEN {
                    return self.drop_frame(DropReason::MalformedAxon, Some(ig.port), packet.len(), out);
                }
                self.counters.stripped += 1;
                (packet.split_off(hl), None)
            }
        };
        let tx = wire_time_ps(frame.len(), self.cfg.ports[o].line_rate_bps);
        let ready = self
            .cfg
            .timing
            .earliest_start(self.cfg.mode, ig.rx_start, ig.rx_end, ig.latency, tx)
            .max(now);
        let q = Queued {
            frame,
            ready_ps: ready,
            probe_body_at: probe_at,
        };
        match self.outputs[o].enqueue(ig.buffer, q) {
            Ok(()) => self.start_next(now, hop, out),
            Err(q) => self.drop_frame(DropReason::OutputBufferFull, Some(ig.port), q.frame.len(), out),
        }
    }

    /// Turns a frame into an error report for the control plane. `push_input` adds the input port
    /// to the reverse path when header processing could not (no forward hop to pop).
    fn report_error(&mut self, ig: Ingress, code: ErrorCode, packet: Vec<u8>, push_input: bool, out: &mut Vec<Action>) {
        let Ok(view) = Packet::new_checked(&packet[..]) else {
            return self.drop_frame(DropReason::MalformedAxon, Some(ig.port), packet.len(), out);
        };
        let Ok(mut header) = AxonRepr::parse(&view) else {
            return self.drop_frame(DropReason::MalformedAxon, Some(ig.port), packet.len(), out);
        };
        let original_type = header.packet_type;
        header.packet_type = PacketType::Error;
        if push_input && header.reverse.len() < tandem_wire::axon::MAX_HOPS {
            header.push_reverse(ig.port);
        }
        let e = ErrorRepr { code, original_type };
        let mut body = vec![0u8; e.buffer_len()];
        let _ = e.emit(&mut body);
        body.extend_from_slice(view.payload());
        self.counters.count_error(code);
        match header.to_frame(&body) {
            Ok(f) => self.upcall(ig.rx_end + ig.latency, Upcall::Error(code), f, out),
            Err(_) => self.drop_frame(DropReason::MalformedAxon, Some(ig.port), packet.len(), out),
        }
    }

    /// Takes one of `port`'s upcall tokens at `now_ps` (a token bucket of
    /// [`DeviceConfig::upcall_rate_per_s`] with depth [`DeviceConfig::upcall_burst`]).
    fn take_upcall_token(&mut self, port: u8, now_ps: u64) -> bool {
        let (rate, burst) = (self.cfg.upcall_rate_per_s, self.cfg.upcall_burst);
        if rate == 0 {
            return true;
        }
        const ONE: u128 = 1_000_000_000_000;
        let full = u128::from(burst.max(1)) * ONE;
        let Some((tokens, last)) = self.upcall_tokens.get_mut(usize::from(port)) else {
            return true;
        };
        let elapsed = u128::from(now_ps.saturating_sub(*last));
        *tokens = (*tokens + elapsed * u128::from(rate)).min(full);
        *last = (*last).max(now_ps);
        if *tokens >= ONE {
            *tokens -= ONE;
            true
        } else {
            false
        }
    }

    fn upcall(&mut self, at_ps: u64, reason: Upcall, frame: Vec<u8>, out: &mut Vec<Action>) {
        self.counters.to_control_plane += 1;
        out.push(Action::ToControlPlane { at_ps, reason, frame });
    }

    fn stamp(&mut self, frame: &mut Vec<u8>, body_at: usize, port: u8, point: StampPoint, time_ps: u64) {
        let rec = ProbeRecord {
            device_id: self.cfg.device_id,
            port,
            point,
            time_ps,
        };
        if probe::append_record(frame, body_at, &rec).is_ok() {
            self.counters.probe_stamps += 1;
        }
    }

    fn send_mac_control(&mut self, now: u64, port: u8, frame: Vec<u8>, out: &mut Vec<Action>) {
        self.outputs[usize::from(port)].push_mac_control(frame);
        self.start_next(now, port, out);
    }

    /// Hands the driver the next frame of an idle port.
    fn start_next(&mut self, now: u64, port: u8, out: &mut Vec<Action>) {
        let o = usize::from(port);
        if self.outputs[o].busy || !self.ports[o].link_up {
            return;
        }
        let Some(mut q) = self.outputs[o].next(now) else {
            return;
        };
        let start_ps = q.ready_ps.max(now);
        if let Some(at) = q.probe_body_at {
            self.stamp(&mut q.frame, at, port, StampPoint::Output, start_ps);
        }
        self.outputs[o].busy = true;
        self.counters.transmitted += 1;
        out.push(Action::Transmit {
            port,
            start_ps,
            frame: q.frame,
        });
    }
}

#[cfg(test)]
mod tests;
