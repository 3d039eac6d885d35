//! The discrete-event model: integer picosecond time, `tandem-sim`'s event queue (ties leave in
//! scheduling order; frames in flight wait in a slab so that events stay small and `Copy`),
//! randomness only from the seed.
//!
//! * **links**: full duplex, one rate, a propagation delay; a frame's first byte reaches the far
//!   end `prop` after it leaves, and a port is free again after the frame, its FCS, the preamble
//!   and the inter-frame gap (20 bytes) have gone;
//! * **Axons**: the real [`Device`]; the model is its driver (frames in at their first byte,
//!   `Transmit` actions put on the link at their start time, `TxDone` when the port is free).
//!   Routes are installed directly from shortest paths the model computes
//!   ([`Topology::axon_path`]); hosts' MACs are resolved statically (no ARP, DHCP or Axon-ARP);
//! * **switches**: [`EthSwitch`] on the converged spanning tree;
//! * **hosts**: one NIC with an unbounded queue that honours PAUSE (the frame on the wire
//!   finishes, then the NIC starts nothing for the pause time); UDP sources (saturating: the NIC queue kept two
//!   frames deep, or at a mean rate with jittered gaps); TCP with [`TcpEndpoint`] (bulk transfer, or netperf
//!   TCP_RR-style request/response). Records live in a side table keyed by the packet id the
//!   frame carries ([`super::frames`]).

use super::ethswitch::{EthSwitch, SwitchParams};
use super::frames::{self, Addressing, Parsed};
use super::topology::{End, NodeKind, Topology};
use crate::config::DeviceConfig;
use crate::dataplane::{Action, Device, Event};
use crate::port::PortKind;
use crate::route_memory::RouteEntry;
use crate::timing::{wire_time_ps, ForwardingMode};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::collections::{HashMap, VecDeque};
use tandem_sim::config::TcpConfig;
use tandem_sim::event::EventQueue;
use tandem_sim::packet::{FlowId, NodeId, Packet, Proto};
use tandem_sim::tcp::{FlowIds, TcpEndpoint, TcpEvent, TcpOutput};
use tandem_sim::time::{tx_time, US};
use tandem_wire::tcp::Flags;
use tandem_wire::{Ipv4Addr, MacAddr};

/// Preamble, SFD and inter-frame gap: bytes of line time between frames besides the frame.
pub const GAP_BYTES: u64 = 20;

/// Network-wide parameters.
#[derive(Debug, Clone)]
pub struct NetParams {
    /// Link rate (every link), bits per second.
    pub rate_bps: u64,
    /// Propagation delay of every link.
    pub prop_ps: u64,
    /// How Axons forward (cut-through, or store-and-forward through the same device).
    pub axon_mode: ForwardingMode,
    /// Bytes per input buffer of an Axon output port.
    pub axon_buffer_bytes: usize,
    /// Ethernet switch parameters.
    pub switch: SwitchParams,
    /// TCP parameters of every host.
    pub tcp: TcpConfig,
    /// Seed of the flows' start jitter.
    pub seed: u64,
    /// Largest random delay added to each flow's start.
    pub start_jitter_ps: u64,
}

impl NetParams {
    /// 1 GbE with 5 ns links (1 m of cable), cut-through Axons with 32 KiB buffers, switches with
    /// 128 KiB queues and the given latency, Linux-like TCP with a 10 ms minimum RTO.
    pub fn gbe(switch_latency_ps: u64) -> NetParams {
        NetParams {
            rate_bps: 1_000_000_000,
            prop_ps: 5_000,
            axon_mode: ForwardingMode::CutThrough,
            axon_buffer_bytes: 32 * 1024,
            switch: SwitchParams {
                queue_bytes: 128 * 1024,
                latency_ps: switch_latency_ps,
            },
            tcp: TcpConfig {
                min_rto: 10 * tandem_sim::time::MS,
                ..TcpConfig::default()
            },
            seed: 1,
            start_jitter_ps: 10 * US,
        }
    }
}

/// What a flow does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum App {
    /// UDP frames of `frame_len` bytes, as fast as the NIC sends (`rate_bps: None`) or at a
    /// mean rate counted in line occupancy (frame, FCS, preamble and gap), the gaps between
    /// frames drawn uniformly from 0.5 to 1.5 times the mean (from the seed), so that periodic
    /// sources do not lock in phase.
    Udp {
        /// Frame length without FCS.
        frame_len: usize,
        /// Rate, or `None` for saturating.
        rate_bps: Option<u64>,
    },
    /// A TCP connection sending without end.
    TcpBulk,
    /// netperf TCP_RR: a request of `request` bytes, the reply of `response` bytes, repeat.
    TcpRr {
        /// Request bytes.
        request: u64,
        /// Response bytes.
        response: u64,
    },
}

/// A flow between two hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flow {
    /// Sending (client) host node.
    pub src: usize,
    /// Receiving (server) host node.
    pub dst: usize,
    /// What it does.
    pub app: App,
}

/// One flow's measurements.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowResult {
    /// Application bytes delivered after the warm-up.
    pub bytes: u64,
    /// Application goodput after the warm-up, Mb/s.
    pub mbps: f64,
    /// One-way latencies (UDP): first byte out of the sender's NIC to first byte in at the
    /// receiver, after the warm-up (the model's own loop keeps every sample; the kernel none).
    pub latency_ps: Vec<u64>,
    /// Their mean, ps (0 when none arrived): from the samples, or on the kernel from its sums.
    pub latency_mean_ps: f64,
    /// Request/response round trips (TCP_RR) completed after the warm-up.
    pub rtt_ps: Vec<u64>,
}

/// What a run measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Per flow, in the order given.
    pub flows: Vec<FlowResult>,
    /// Frames the Axons dropped.
    pub axon_drops: u64,
    /// PAUSE frames the Axons sent.
    pub pauses: u64,
    /// Frames the Axons handed to their (absent) control planes.
    pub upcalls: u64,
    /// Frames switches dropped on full queues.
    pub switch_drops: u64,
    /// UDP frames a rate-limited source could not queue (NIC queue full).
    pub host_drops: u64,
    /// TCP retransmissions, all flows.
    pub retransmits: u64,
    /// Events processed.
    pub events: u64,
}

/// A frame in flight between events: its place in [`Sim`]'s frame slab.
type FrameRef = u32;

#[derive(Debug, Clone, Copy)]
enum Ev {
    Arrive { node: usize, port: u8, frame: FrameRef },
    TxDone { node: usize, port: u8 },
    HostRx { node: usize, frame: FrameRef },
    SwitchIn { node: usize, port: u8, frame: FrameRef },
    NicWake { node: usize },
    FlowStart { flow: usize },
    UdpTick { flow: usize },
    TcpTimer { conn: usize },
    Warm,
}

#[derive(Debug)]
struct Host {
    mac: MacAddr,
    ip: Ipv4Addr,
    nic: VecDeque<Vec<u8>>,
    busy: bool,
    /// When the frame on the wire (if any) ends.
    tx_end: u64,
    paused_until: u64,
    wake_at: Option<u64>,
    /// Destination MAC to use per destination host node.
    arp: HashMap<usize, MacAddr>,
    saturating: Vec<usize>,
}

enum Node {
    Host(Box<Host>),
    Axon(Box<Device>),
    Switch(Box<EthSwitch>),
}

#[derive(Debug, Clone, Copy)]
enum Role {
    Client,
    Server,
}

struct Conn {
    host: usize,
    peer: usize,
    flow: usize,
    role: Role,
    ep: TcpEndpoint,
    armed: Option<u64>,
    /// Client: delivered total that completes the pending response; server: delivered total
    /// that completes the next request.
    target: u64,
    sent_at: u64,
}

struct Rec {
    pkt: Packet,
    flow: usize,
    sent_at: u64,
}

#[derive(Default)]
struct FlowState {
    delivered: u64,
    at_warm: u64,
    latency: Vec<u64>,
    rtt: Vec<u64>,
}

struct Sim<'a> {
    p: &'a NetParams,
    topo: &'a Topology,
    flows: &'a [Flow],
    now: u64,
    heap: EventQueue<Ev>,
    /// Frames in flight (an event names its frame by place), and the free places.
    frames: Vec<Vec<u8>>,
    free_frames: Vec<FrameRef>,
    nodes: Vec<Node>,
    conns: Vec<Conn>,
    conn_of: HashMap<(usize, u16), usize>,
    records: HashMap<u64, Rec>,
    next_id: u64,
    state: Vec<FlowState>,
    warm: bool,
    out: Outcome,
    actions: Vec<Action>,
    tcp_out: TcpOutput,
    rng: Pcg64,
}

/// A host's MAC: locally administered, prefix 02:10, then the node index.
pub fn host_mac(node: usize) -> MacAddr {
    let b = (node as u32).to_be_bytes();
    MacAddr([0x02, 0x10, b[0], b[1], b[2], b[3]])
}

/// A host's IPv4 address: 10.x.y.z from the node index.
pub fn host_ip(node: usize) -> Ipv4Addr {
    let b = (node as u32).to_be_bytes();
    Ipv4Addr::new(10, b[1], b[2], b[3])
}

fn client_port(flow: usize) -> u16 {
    10_000 + flow as u16
}

fn server_port(flow: usize) -> u16 {
    5_000 + flow as u16
}

/// Builds the network, installs Axon routes for every pair of hosts, runs the flows for
/// `duration_ps` and measures after `warmup_ps`.
pub fn run(
    topo: &Topology,
    p: &NetParams,
    flows: &[Flow],
    duration_ps: u64,
    warmup_ps: u64,
) -> Result<Outcome, String> {
    let mut sim = Sim::new(topo, p, flows)?;
    sim.schedule(warmup_ps, Ev::Warm);
    let mut rng = Pcg64::seed_from_u64(p.seed);
    for f in 0..flows.len() {
        let jitter = if p.start_jitter_ps > 0 {
            rng.random_range(0..p.start_jitter_ps)
        } else {
            0
        };
        sim.schedule(US + jitter, Ev::FlowStart { flow: f });
    }
    for h in topo.hosts() {
        if let Node::Host(host) = &mut sim.nodes[h] {
            host.nic.push_back(frames::arp_announcement(host.mac, host.ip));
        }
        sim.try_send(h);
    }
    while let Some((at, ev)) = sim.heap.pop() {
        if at > duration_ps {
            break;
        }
        sim.now = at;
        sim.out.events += 1;
        sim.dispatch(ev);
    }
    Ok(sim.finish(duration_ps.saturating_sub(warmup_ps)))
}

impl<'a> Sim<'a> {
    fn new(topo: &'a Topology, p: &'a NetParams, flows: &'a [Flow]) -> Result<Sim<'a>, String> {
        let blocked = topo.spanning_tree_blocked();
        let mut nodes = Vec::new();
        for (n, kind) in topo.kinds.iter().enumerate() {
            nodes.push(match kind {
                NodeKind::Host => Node::Host(Box::new(Host {
                    mac: host_mac(n),
                    ip: host_ip(n),
                    nic: VecDeque::new(),
                    busy: false,
                    tx_end: 0,
                    paused_until: 0,
                    wake_at: None,
                    arp: HashMap::new(),
                    saturating: Vec::new(),
                })),
                NodeKind::Switch => Node::Switch(Box::new(EthSwitch::new(p.switch, &blocked[n]))),
                NodeKind::Axon => {
                    let mut cfg = DeviceConfig::new(n as u64 + 1, topo.ports[n].len(), p.rate_bps);
                    cfg.output_buffer_bytes = p.axon_buffer_bytes;
                    cfg.mode = p.axon_mode;
                    let mut d = Device::new(cfg).map_err(|e| format!("axon {n}: {e}"))?;
                    for (port, e) in topo.ports[n].iter().enumerate() {
                        let kind = if topo.kinds[e.node] == NodeKind::Axon {
                            PortKind::Axon
                        } else {
                            PortKind::Host
                        };
                        d.set_port_kind(port as u8, kind).map_err(|e| e.to_string())?;
                    }
                    Node::Axon(Box::new(d))
                }
            });
        }
        let mut sim = Sim {
            p,
            topo,
            flows,
            now: 0,
            heap: EventQueue::new(),
            frames: Vec::new(),
            free_frames: Vec::new(),
            nodes,
            conns: Vec::new(),
            conn_of: HashMap::new(),
            records: HashMap::new(),
            next_id: 1,
            state: (0..flows.len()).map(|_| FlowState::default()).collect(),
            warm: false,
            out: Outcome::default(),
            actions: Vec::new(),
            tcp_out: TcpOutput::new(),
            rng: Pcg64::seed_from_u64(p.seed ^ 0x5eed_0f0a_u64),
        };
        sim.install_routes()?;
        Ok(sim)
    }

    /// Routes between every ordered pair of hosts on Axons, installed at the source's Axon; the
    /// source host's "ARP table" gets the MAC the Axon hands out.
    fn install_routes(&mut self) -> Result<(), String> {
        let hosts = self.topo.hosts();
        let mut load: Vec<Vec<u32>> = self.topo.ports.iter().map(|ps| vec![0; ps.len()]).collect();
        for &a in &hosts {
            for &b in &hosts {
                if a == b {
                    continue;
                }
                let (Some(ea), Some(eb)) = (self.topo.attachment(a), self.topo.attachment(b)) else {
                    continue;
                };
                let on_axons = self.topo.kinds[ea.node] == NodeKind::Axon && self.topo.kinds[eb.node] == NodeKind::Axon;
                let mac = if on_axons {
                    let mut forward = self
                        .topo
                        .axon_path(ea.node, eb.node, &mut load)
                        .ok_or_else(|| format!("no Axon path from host {a} to host {b}"))?;
                    forward.push(eb.port);
                    let entry = RouteEntry {
                        forward,
                        dst_mac: host_mac(b),
                        src_mac: host_mac(a),
                    };
                    let Node::Axon(d) = &mut self.nodes[ea.node] else {
                        return Err("not an Axon".into());
                    };
                    let slot = d.reserve_route(ea.port).map_err(|e| e.to_string())?;
                    d.install_route(ea.port, slot, &entry, Some(host_mac(b)))
                        .map_err(|e| e.to_string())?
                } else {
                    host_mac(b)
                };
                if let Node::Host(h) = &mut self.nodes[a] {
                    h.arp.insert(b, mac);
                }
            }
        }
        Ok(())
    }

    fn schedule(&mut self, at: u64, ev: Ev) {
        self.heap.push(at, ev);
    }

    /// Keeps `frame` until an event takes it.
    fn stash(&mut self, frame: Vec<u8>) -> FrameRef {
        match self.free_frames.pop() {
            Some(i) => {
                self.frames[i as usize] = frame;
                i
            }
            None => {
                self.frames.push(frame);
                (self.frames.len() - 1) as FrameRef
            }
        }
    }

    /// Takes a stashed frame, freeing its place.
    fn take_frame(&mut self, i: FrameRef) -> Vec<u8> {
        self.free_frames.push(i);
        std::mem::take(&mut self.frames[i as usize])
    }

    fn peer(&self, node: usize, port: u8) -> Option<End> {
        self.topo.ports.get(node)?.get(usize::from(port)).copied()
    }

    fn wire(&self, len: usize) -> u64 {
        wire_time_ps(len, self.p.rate_bps)
    }

    /// Puts `frame` on the link of (`node`, `port`) at `start`; the port is free again later.
    fn put_on_link(&mut self, node: usize, port: u8, start: u64, frame: Vec<u8>) {
        let busy = self.wire(frame.len()) + tx_time(GAP_BYTES, self.p.rate_bps);
        self.schedule(start + busy, Ev::TxDone { node, port });
        if let Some(e) = self.peer(node, port) {
            let frame = self.stash(frame);
            self.schedule(
                start + self.p.prop_ps,
                Ev::Arrive {
                    node: e.node,
                    port: e.port,
                    frame,
                },
            );
        }
    }

    fn dispatch(&mut self, ev: Ev) {
        let now = self.now;
        match ev {
            Ev::Arrive { node, port, frame } => {
                let len = self.frames[frame as usize].len();
                match &self.nodes[node] {
                    Node::Host(_) => {
                        let at = now + self.wire(len);
                        self.schedule(at, Ev::HostRx { node, frame });
                    }
                    Node::Switch(s) => {
                        let at = now + self.wire(len) + s.params.latency_ps;
                        self.schedule(at, Ev::SwitchIn { node, port, frame });
                    }
                    Node::Axon(_) => {
                        let frame = self.take_frame(frame);
                        self.axon_event(node, Event::Frame { port, frame })
                    }
                }
            }
            Ev::TxDone { node, port } => match &mut self.nodes[node] {
                Node::Host(h) => {
                    h.busy = false;
                    self.top_up(node);
                    self.try_send(node);
                }
                Node::Switch(s) => {
                    if let Some(p) = s.ports.get_mut(usize::from(port)) {
                        p.busy = false;
                    }
                    self.switch_send(node, port);
                }
                Node::Axon(_) => self.axon_event(node, Event::TxDone { port }),
            },
            Ev::HostRx { node, frame } => {
                let frame = self.take_frame(frame);
                self.host_receive(node, frame)
            }
            Ev::SwitchIn { node, port, frame } => {
                let frame = self.take_frame(frame);
                let outs = match &mut self.nodes[node] {
                    Node::Switch(s) => s.forward(port, &frame),
                    _ => Vec::new(),
                };
                for o in outs {
                    self.switch_send(node, o);
                }
            }
            Ev::NicWake { node } => {
                if let Node::Host(h) = &mut self.nodes[node] {
                    if h.wake_at == Some(now) {
                        h.wake_at = None;
                    }
                }
                self.try_send(node);
            }
            Ev::FlowStart { flow } => self.start_flow(flow),
            Ev::UdpTick { flow } => self.udp_tick(flow),
            Ev::TcpTimer { conn } => {
                if self.conns[conn].armed == Some(now) {
                    self.conns[conn].armed = None;
                    let mut out = std::mem::take(&mut self.tcp_out);
                    out.clear();
                    self.conns[conn].ep.on_timer(now, &mut out);
                    self.after_tcp(conn, &mut out);
                    self.tcp_out = out;
                }
            }
            Ev::Warm => {
                self.warm = true;
                for s in &mut self.state {
                    s.at_warm = s.delivered;
                }
            }
        }
    }

    fn axon_event(&mut self, node: usize, ev: Event) {
        let mut actions = std::mem::take(&mut self.actions);
        actions.clear();
        if let Node::Axon(d) = &mut self.nodes[node] {
            d.handle(self.now, ev, &mut actions);
        }
        for a in actions.drain(..) {
            match a {
                Action::Transmit { port, start_ps, frame } => self.put_on_link(node, port, start_ps, frame),
                Action::Dropped { .. } => self.out.axon_drops += 1,
                Action::ToControlPlane { .. } => self.out.upcalls += 1,
                Action::PortClassified { .. } => {}
            }
        }
        self.actions = actions;
    }

    fn switch_send(&mut self, node: usize, port: u8) {
        let f = match &mut self.nodes[node] {
            Node::Switch(s) => s.next(port),
            _ => None,
        };
        if let Some(f) = f {
            self.put_on_link(node, port, self.now, f);
        }
    }

    fn host(&mut self, node: usize) -> Option<&mut Host> {
        match self.nodes.get_mut(node) {
            Some(Node::Host(h)) => Some(h),
            _ => None,
        }
    }

    /// Starts the NIC's next frame if it is idle and not paused.
    fn try_send(&mut self, node: usize) {
        let now = self.now;
        let rate = self.p.rate_bps;
        let Some(h) = self.host(node) else { return };
        if h.busy || h.nic.is_empty() {
            return;
        }
        if now < h.paused_until {
            let t = h.paused_until;
            if h.wake_at.is_none_or(|w| w > t) {
                h.wake_at = Some(t);
                self.schedule(t, Ev::NicWake { node });
            }
            return;
        }
        let Some(f) = h.nic.pop_front() else { return };
        h.busy = true;
        h.tx_end = now + wire_time_ps(f.len(), rate);
        if let (_, Parsed::Data { id, .. }) = frames::parse(&f) {
            if let Some(r) = self.records.get_mut(&id) {
                r.sent_at = now;
            }
        }
        self.put_on_link(node, 0, now, f);
    }

    fn addressing(&self, src: usize, dst: usize) -> Addressing {
        let dst_mac = match &self.nodes[src] {
            Node::Host(h) => h.arp.get(&dst).copied().unwrap_or(host_mac(dst)),
            _ => host_mac(dst),
        };
        Addressing {
            dst_mac,
            src_mac: host_mac(src),
            src_ip: host_ip(src),
            dst_ip: host_ip(dst),
        }
    }

    fn new_udp_frame(&mut self, flow: usize) -> Option<Vec<u8>> {
        let f = self.flows[flow];
        let App::Udp { frame_len, .. } = f.app else {
            return None;
        };
        let id = self.next_id;
        self.next_id += 1;
        let frame = frames::udp_frame(
            &self.addressing(f.src, f.dst),
            client_port(flow),
            server_port(flow),
            frame_len,
            id,
        );
        let pkt = Packet {
            created: self.now,
            flow: FlowId(flow as u32),
            src: NodeId(f.src as u32),
            dst: NodeId(f.dst as u32),
            size: frame.len() as u32,
            payload: (frame.len() - frames::UDP_ID_AT) as u32,
            src_port: client_port(flow),
            dst_port: server_port(flow),
            proto: Proto::Udp,
            ..Packet::default()
        };
        self.records.insert(
            id,
            Rec {
                pkt,
                flow,
                sent_at: self.now,
            },
        );
        Some(frame)
    }

    /// Keeps saturating UDP sources two frames ahead of the NIC.
    fn top_up(&mut self, node: usize) {
        let flows = match self.host(node) {
            Some(h) => h.saturating.clone(),
            None => return,
        };
        for f in flows {
            while self.host(node).is_some_and(|h| h.nic.len() < 2) {
                let Some(frame) = self.new_udp_frame(f) else { break };
                if let Some(h) = self.host(node) {
                    h.nic.push_back(frame);
                }
            }
        }
    }

    fn start_flow(&mut self, flow: usize) {
        let f = self.flows[flow];
        match f.app {
            App::Udp { rate_bps: None, .. } => {
                if let Some(h) = self.host(f.src) {
                    h.saturating.push(flow);
                }
                self.top_up(f.src);
                self.try_send(f.src);
            }
            App::Udp { rate_bps: Some(_), .. } => self.udp_tick(flow),
            App::TcpBulk | App::TcpRr { .. } => {
                let ids = FlowIds {
                    flow: FlowId(flow as u32),
                    local: NodeId(f.src as u32),
                    remote: NodeId(f.dst as u32),
                    local_port: client_port(flow),
                    remote_port: server_port(flow),
                };
                let mut out = std::mem::take(&mut self.tcp_out);
                out.clear();
                let ep = TcpEndpoint::connect(self.p.tcp, ids, self.now, &mut out);
                let c = self.add_conn(f.src, f.dst, flow, Role::Client, ep, client_port(flow));
                self.after_tcp(c, &mut out);
                self.tcp_out = out;
            }
        }
    }

    fn udp_tick(&mut self, flow: usize) {
        let f = self.flows[flow];
        let App::Udp {
            frame_len,
            rate_bps: Some(rate),
        } = f.app
        else {
            return;
        };
        if rate == 0 {
            return;
        }
        if self.host(f.src).is_some_and(|h| h.nic.len() < 256) {
            if let Some(frame) = self.new_udp_frame(flow) {
                if let Some(h) = self.host(f.src) {
                    h.nic.push_back(frame);
                }
                self.try_send(f.src);
            }
        } else {
            self.out.host_drops += 1;
        }
        let gap = tx_time(frame_len.max(60) as u64 + 4 + GAP_BYTES, rate);
        let gap = self.rng.random_range(gap / 2..=gap + gap / 2);
        self.schedule(self.now + gap, Ev::UdpTick { flow });
    }

    fn add_conn(&mut self, host: usize, peer: usize, flow: usize, role: Role, ep: TcpEndpoint, port: u16) -> usize {
        self.conns.push(Conn {
            host,
            peer,
            flow,
            role,
            ep,
            armed: None,
            target: 0,
            sent_at: 0,
        });
        let c = self.conns.len() - 1;
        self.conn_of.insert((host, port), c);
        c
    }

    fn host_receive(&mut self, node: usize, frame: Vec<u8>) {
        let now = self.now;
        let first_byte = now - self.wire(frame.len());
        let rate = self.p.rate_bps;
        let (dst, parsed) = frames::parse(&frame);
        let Some(h) = self.host(node) else { return };
        match parsed {
            Parsed::Pause(q) => {
                // 802.3x: the frame being sent finishes, then the MAC waits the pause time.
                let until = now.max(h.tx_end) + tx_time(u64::from(q) * 64, rate);
                h.paused_until = if q == 0 { now } else { until };
                return;
            }
            Parsed::Other => return,
            Parsed::Data { .. } if dst != h.mac => return,
            Parsed::Data { .. } => {}
        }
        let Parsed::Data { id, proto } = parsed else { return };
        let Some(rec) = self.records.remove(&id) else { return };
        match proto {
            Proto::Udp => {
                let s = &mut self.state[rec.flow];
                s.delivered += u64::from(rec.pkt.payload);
                if self.warm {
                    s.latency.push(first_byte.saturating_sub(rec.sent_at));
                }
            }
            Proto::Tcp => self.tcp_receive(node, &rec.pkt),
        }
    }

    fn tcp_receive(&mut self, node: usize, pkt: &Packet) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.tcp_out);
        out.clear();
        let c = match self.conn_of.get(&(node, pkt.dst_port)) {
            Some(&c) => {
                self.conns[c].ep.on_packet(now, pkt, &mut out);
                Some(c)
            }
            None if pkt.has(Flags::SYN) && !pkt.has(Flags::ACK) => {
                let flow = pkt.flow.0 as usize;
                let ids = FlowIds {
                    flow: pkt.flow,
                    local: NodeId(node as u32),
                    remote: pkt.src,
                    local_port: pkt.dst_port,
                    remote_port: pkt.src_port,
                };
                let ep = TcpEndpoint::accept(self.p.tcp, ids, pkt, now, &mut out);
                Some(self.add_conn(node, pkt.src.0 as usize, flow, Role::Server, ep, pkt.dst_port))
            }
            None => None,
        };
        if let Some(c) = c {
            self.after_tcp(c, &mut out);
        }
        self.tcp_out = out;
    }

    /// Sends what an endpoint produced, runs the application on its events, rearms its timer.
    fn after_tcp(&mut self, c: usize, out: &mut TcpOutput) {
        let now = self.now;
        let mut k = 0;
        while k < out.events.len() {
            let ev = out.events[k];
            k += 1;
            self.app_event(c, ev, out);
        }
        let (host, peer) = (self.conns[c].host, self.conns[c].peer);
        let addr = self.addressing(host, peer);
        for pkt in out.packets.drain(..) {
            let id = self.next_id;
            self.next_id += 1;
            let frame = frames::tcp_frame(&addr, &pkt, id);
            self.records.insert(
                id,
                Rec {
                    pkt,
                    flow: self.conns[c].flow,
                    sent_at: now,
                },
            );
            if let Some(h) = self.host(host) {
                h.nic.push_back(frame);
            }
        }
        self.try_send(host);
        if let Some(t) = self.conns[c].ep.next_timer() {
            let t = t.max(now);
            if self.conns[c].armed.is_none_or(|a| t < a) {
                self.conns[c].armed = Some(t);
                self.schedule(t, Ev::TcpTimer { conn: c });
            }
        }
    }

    fn app_event(&mut self, c: usize, ev: TcpEvent, out: &mut TcpOutput) {
        let now = self.now;
        let flow = self.conns[c].flow;
        let app = self.flows[flow].app;
        let conn = &mut self.conns[c];
        match (ev, conn.role, app) {
            (TcpEvent::Connected, Role::Client, App::TcpBulk) => conn.ep.send(now, 1 << 50, out),
            (TcpEvent::Connected, Role::Client, App::TcpRr { request, response }) => {
                conn.target = response;
                conn.sent_at = now;
                conn.ep.send(now, request, out);
            }
            (TcpEvent::Delivered { total }, Role::Server, App::TcpBulk) => self.state[flow].delivered = total,
            (TcpEvent::Delivered { total }, Role::Server, App::TcpRr { request, response }) => {
                if conn.target == 0 {
                    conn.target = request;
                }
                while total >= conn.target {
                    conn.target += request;
                    conn.ep.send(now, response, out);
                }
            }
            (TcpEvent::Delivered { total }, Role::Client, App::TcpRr { request, response }) if total >= conn.target => {
                let s = &mut self.state[flow];
                s.delivered += request + response;
                if self.warm {
                    s.rtt.push(now - conn.sent_at);
                }
                conn.target = total + response;
                conn.sent_at = now;
                conn.ep.send(now, request, out);
            }
            _ => {}
        }
    }

    fn finish(mut self, window_ps: u64) -> Outcome {
        let secs = window_ps as f64 / 1e12;
        for s in std::mem::take(&mut self.state) {
            let bytes = s.delivered - s.at_warm.min(s.delivered);
            self.out.flows.push(FlowResult {
                bytes,
                mbps: if secs > 0.0 {
                    bytes as f64 * 8.0 / secs / 1e6
                } else {
                    0.0
                },
                latency_mean_ps: if s.latency.is_empty() {
                    0.0
                } else {
                    s.latency.iter().map(|&x| x as f64).sum::<f64>() / s.latency.len() as f64
                },
                latency_ps: s.latency,
                rtt_ps: s.rtt,
            });
        }
        for n in &self.nodes {
            match n {
                Node::Axon(d) => self.out.pauses += d.counters().pauses_sent,
                Node::Switch(s) => self.out.switch_drops += s.drops,
                Node::Host(_) => {}
            }
        }
        self.out.retransmits = self.conns.iter().map(|c| c.ep.stats().retransmits).sum();
        self.out
    }
}
