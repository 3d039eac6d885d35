//! The simulation: nodes, ports and links, the event loop, hosts running TCP and UDP flows,
//! switches running the pipeline of [`crate::switch`].

use crate::config::{Ecmp, Forwarding, Marking, QueueConfig, SwitchConfig, TcpConfig, TcpFlavor};
use crate::event::{Event, EventQueue, FAR};
use crate::ns3_rng::Mrg32k3a;
use crate::packet::{FlowId, NodeId, Packet, PacketId, PacketPool, Proto, L2_L3_HEADER, UDP_HEADER};
use crate::port::PauseState;
pub use crate::port::Port;
use crate::queue::{Admission, DropReason, EgressQueues, SharedBuffer};
use crate::switch::{LinkChange, MatchTable, SwitchCtx, SwitchModel, Verdict};
use crate::tap::Tap;
use crate::tcp::{FlowIds, TcpEndpoint, TcpEvent, TcpOutput, TcpStats};
use crate::time::{tx_time, Time};
use crate::topology::{ecmp_hash, ecmp_pick, NodeKind, Routing, Topology};
use crate::workload::{FlowKind, FlowSpec};
use partition::PartState;
pub(crate) use partition::{Carried, Transfer};
use rustc_hash::FxHashMap;
use tandem_wire::ipv4::Ecn;

mod partition;

/// A host or a switch.
pub struct Node {
    /// Name from the topology.
    pub name: String,
    /// Host or switch.
    pub kind: NodeKind,
    /// Ports in topology order.
    pub ports: Vec<Port>,
    /// Shared buffer (switches; hosts use a dedicated one).
    pub buffer: SharedBuffer,
    /// Store-and-forward or cut-through (switches).
    pub forwarding: Forwarding,
    /// Pipeline latency (switches).
    pub pipeline_latency: Time,
    /// Match tables (switches).
    pub tables: Vec<MatchTable>,
    model: Option<Box<dyn SwitchModel>>,
    levels: Vec<usize>,
}

/// Per-flow outcome, written to flows.csv.
#[derive(Debug, Clone, Default)]
pub struct FlowResult {
    /// When the flow started.
    pub start: Time,
    /// When it completed (all bytes delivered / response received / UDP source done), if it did.
    pub end: Option<Time>,
    /// Application bytes delivered to the receiver(s).
    pub delivered: u64,
    /// Packets received by the destination (UDP) or data segments (TCP).
    pub rx_packets: u64,
    /// Set when the TCP connection failed.
    pub failed: Option<&'static str>,
    /// Times summed, not in flows.csv. UDP: the received datagrams' one-way delays, each from
    /// the source's send to its last bit at the receiver (the mean is over `rx_packets`).
    /// Transactions: the completed transactions' times, each from the request's send to the
    /// whole response in (their count is [`FlowResult::transactions`]).
    pub delay_sum: Time,
}

impl FlowResult {
    /// Transactions (TCP_RR) completed: `delivered` counts each one's request and response.
    pub fn transactions(&self, spec: &FlowSpec) -> u64 {
        match spec.kind {
            FlowKind::Transactions {
                request_bytes,
                response_bytes,
            } => self.delivered / (request_bytes + response_bytes).max(1),
            _ => 0,
        }
    }
}

struct FlowState {
    spec: FlowSpec,
    /// The TCP endpoints, boxed: a UDP flow (or one not yet connected) pays 16 bytes for
    /// them, not two endpoints' 1.8 KB.
    eps: [Option<Box<TcpEndpoint>>; 2],
    timer_at: [Time; 2],
    result: FlowResult,
    /// Datagrams sent (UDP); responses sent (transactions).
    udp_sent: u64,
    /// The next datagram's time (UDP); the current request's send (transactions).
    udp_next: Time,
    /// Why the active side failed last, if it did (what `result.failed` says once a listener
    /// opens a new connection where a passive side that failed stood).
    client_failed: Option<crate::tcp::FailReason>,
    /// The failure `result.failed` holds is the passive side's.
    passive_failed_last: bool,
    /// The counters of the two endpoints, kept when they were retired
    /// ([`Sim::retire_quiet_flows`]).
    retired: Option<Box<[Option<TcpStats>; 2]>>,
}

impl FlowState {
    /// Retires the flow's endpoints: their counters are kept, the rest is given back
    /// ([`Sim::retire_quiet_flows`]).
    fn keep_counters_only(&mut self) {
        let kept = |e: &Option<Box<TcpEndpoint>>| e.as_deref().map(|e| e.stats().clone());
        self.retired = Some(Box::new([kept(&self.eps[0]), kept(&self.eps[1])]));
        self.eps = [None, None];
    }
}

/// Bytes of the simulator's state of one flow (its two TCP endpoints included, as a TCP flow
/// has them), for [`crate::limits`].
pub(crate) fn flow_state_bytes() -> usize {
    std::mem::size_of::<FlowState>() + 2 * std::mem::size_of::<TcpEndpoint>()
}

/// Bytes of the simulator's record of one flow without its TCP endpoints (what each partition
/// of a partitioned run holds per flow), for [`crate::limits`].
pub(crate) fn flow_record_bytes() -> usize {
    std::mem::size_of::<FlowState>()
}

/// Options for a run.
#[derive(Debug, Clone, Default)]
pub struct SimOptions {
    /// Sample queues at this interval (0: never).
    pub queue_sample_interval: Time,
    /// Ports to sample at every tick, empty or not. When empty, every switch port is sampled
    /// but only non-empty queues are recorded (so large topologies stay small on disk).
    pub sample_ports: Vec<(NodeId, u16)>,
}

/// One queue sample.
#[derive(Debug, Clone, Copy)]
pub struct QueueSample {
    /// When.
    pub time: Time,
    /// Switch.
    pub node: NodeId,
    /// Port.
    pub port: u16,
    /// Bytes queued.
    pub bytes: u64,
    /// Packets queued.
    pub packets: u32,
}

/// The whole simulated network.
pub struct Sim {
    now: Time,
    events: EventQueue,
    pool: PacketPool,
    nodes: Vec<Node>,
    routing: Routing,
    /// What picks among equal-cost ports ([`SwitchConfig::ecmp`]).
    ecmp: Ecmp,
    tcp_cfg: TcpConfig,
    flows: Vec<FlowState>,
    /// The scenario's seed (each RED queue's random numbers come from a stream of its own
    /// seeded by it and the port: [`port_seed`]).
    seed: u64,
    out: TcpOutput,
    scratch_sends: Vec<(u16, PacketId)>,
    scratch_timers: Vec<(Time, u64)>,
    scratch_frees: Vec<PacketId>,
    scratch_forwards: Vec<(u16, PacketId)>,
    scratch_drops: Vec<(u16, PacketId, &'static str)>,
    scratch_pauses: Vec<(u16, Time, Time)>,
    /// 802.3x state of the ports that may be paused.
    pauses: FxHashMap<(NodeId, u16), PauseState>,
    scratch_events: Vec<TcpEvent>,
    taps: Vec<Tap>,
    options: SimOptions,
    /// Queue samples taken so far.
    pub samples: Vec<QueueSample>,
    processed: u64,
    /// The last bits of packets in `Arrive` and `Enqueue` events whose `rest` is [`FAR`].
    far_last_bit: FxHashMap<u32, Time>,
    /// Ports whose transmission ends without a scheduled `TxDone` (see [`Sim::start_tx`]).
    unscheduled_done: usize,
    /// False: every transmission's end is a scheduled `TxDone` (the tests' reference).
    elide_tx_done: bool,
    /// Links down now: while 0, no packet pays for looking at its port's link.
    links_down: u32,
    /// The datagrams delivered by the flows whose deliveries are logged
    /// ([`Sim::log_deliveries`]).
    delivery_logs: Vec<(FlowId, Vec<UdpDelivery>)>,
    /// Set when this simulation is one partition of a partitioned run ([`crate::parallel`]).
    part: Option<Box<PartState>>,
    /// A partitioned run's packets in flight at most (at its windows' ends), once merged.
    peak_in_flight: Option<usize>,
    /// `TANDEM_QTRACE` was set: every packet a switch port takes or drops is printed, as
    /// `bench/ns3/scenario.cc` prints ns-3's with `NS3_QTRACE` ([`Sim::qtrace`]).
    qtrace: bool,
    /// Some switch has a model ([`Sim::attach_model`]): while false, no queue change asks a
    /// node for one (a hop reads no node record for it).
    any_model: bool,
    /// Per node, the header bytes after which it takes a frame when it is a cut-through
    /// switch, [`STORE_AND_FORWARD`] otherwise: a transmission reads this dense copy of its
    /// peer's forwarding instead of the peer's node record. Rebuilt before the next event
    /// when a node may have changed ([`Sim::node_mut`]).
    cut_header: Vec<u32>,
    cut_header_stale: bool,
    /// Which ports transmit directly ([`Port::direct`]) has been decided for what the
    /// simulation holds now ([`Sim::decide_direct`]); cleared by whatever may change it.
    direct_decided: bool,
    /// A model was attached to some switch, in this partition or another (a model may hold,
    /// pause or reroute packets: no port transmits directly).
    models_anywhere: bool,
    /// A link change was scheduled (a failed link drops what waits on it: no port transmits
    /// directly).
    link_events: bool,
    /// False: no port transmits directly (the tests' reference).
    direct_ports: bool,
    /// Ports that transmit directly now.
    direct_count: usize,
    /// Per node, what a packet sent to it tells the loop ahead of its arrival ([`Ahead`]);
    /// decided with the direct ports ([`Sim::decide_direct`]).
    ahead: Vec<Ahead>,
    /// False: arrivals carry no hints ([`Ahead::Nothing`] everywhere; the tests' reference).
    arrival_hints: bool,
    /// Quiet flows give their endpoints back ([`Sim::retire_quiet_flows`]).
    retire_quiet: bool,
    /// Flows whose endpoints were retired.
    retired_flows: u64,
    /// Flushes in progress ([`Sim::flush_tcp`] runs the applications, whose writes flush
    /// again): a flow is retired only by the outermost, once every event it carried has run.
    flush_depth: u32,
}

/// What the event of a whole packet's arrival at a node carries besides the packet, so that
/// the loop can fetch what handling it will touch before its turn ([`Sim::prefetch`]): at
/// scale the ports and flows do not fit the caches, and a hop or a delivery would otherwise
/// wait for them one after the other. A hint: every result is that of a plain
/// [`Event::Arrive`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ahead {
    /// Nothing ([`Event::Arrive`]).
    Nothing,
    /// The egress port ([`Event::ArriveRouted`]): a store-and-forward switch without a model
    /// or tables, in a run without link changes, where routing is fixed and so the choice
    /// made as the packet is sent is the one its arrival would make.
    Egress,
    /// The packet's flow ([`Event::ArriveHost`]): a host.
    Flow,
}

/// [`Sim::cut_header`] of a node that takes whole frames (a host, or a store-and-forward
/// switch).
const STORE_AND_FORWARD: u32 = u32::MAX;

/// A UDP datagram a logged flow delivered ([`Sim::log_deliveries`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpDelivery {
    /// Its number in its flow, from 0.
    pub seq: u32,
    /// When its source sent it.
    pub sent: Time,
    /// When its last bit reached the destination.
    pub arrived: Time,
}

/// How many events ahead of the one being handled the loop prefetches for (see
/// [`Sim::prefetch`]; measured on the k = 16 fat-tree benchmark, where events 6 ahead are
/// usually already in the queue's sorted run).
const PREFETCH_AHEAD: usize = 6;

/// The order key of an event scheduled now: the queue's next sequence number, or in a
/// partitioned run the scheduling node's own next key ([`PartState::next_key`]).
#[inline]
fn next_key(part: &mut Option<Box<PartState>>, events: &mut EventQueue) -> u64 {
    match part {
        None => events.reserve_seq(),
        Some(p) => p.next_key(),
    }
}

/// Schedules `ev` at `at` with the next order key ([`next_key`]).
#[inline]
fn push_in(part: &mut Option<Box<PartState>>, events: &mut EventQueue, at: Time, ev: Event) {
    match part {
        None => events.push(at, ev),
        Some(p) => events.push_keyed(at, p.next_key(), ev),
    }
}

/// Schedules `ev` at `at` with a key taken earlier by [`next_key`].
#[inline]
fn push_reserved_in(part: &Option<Box<PartState>>, events: &mut EventQueue, at: Time, key: u64, ev: Event) {
    match part {
        None => events.push_reserved(at, key, ev),
        Some(_) => events.push_keyed(at, key, ev),
    }
}

impl Sim {
    /// Builds the network. Flows start at their `start` times.
    pub fn new(
        topo: &Topology,
        switch: SwitchConfig,
        host_queue: QueueConfig,
        tcp: TcpConfig,
        flows: Vec<FlowSpec>,
        seed: u64,
        options: SimOptions,
    ) -> Sim {
        let mut nodes: Vec<Node> = topo
            .nodes()
            .iter()
            .map(|n| Node {
                name: n.name.clone(),
                kind: n.kind,
                ports: Vec::new(),
                buffer: SharedBuffer::new(if n.kind == NodeKind::Switch {
                    switch.buffer
                } else {
                    crate::config::BufferConfig::Dedicated
                }),
                forwarding: if n.kind == NodeKind::Switch {
                    switch.forwarding
                } else {
                    Forwarding::StoreAndForward
                },
                pipeline_latency: if n.kind == NodeKind::Switch {
                    switch.pipeline_latency
                } else {
                    0
                },
                tables: Vec::new(),
                model: None,
                levels: Vec::new(),
            })
            .collect();
        for (i, node) in nodes.iter_mut().enumerate() {
            let qcfg = if node.kind == NodeKind::Switch {
                switch.queue
            } else {
                host_queue
            };
            let tports = topo.ports(NodeId(i as u32));
            node.ports.reserve_exact(tports.len());
            for (j, tp) in tports.iter().enumerate() {
                let link = topo.link(tp.link).cfg;
                let ns_grid = tcp.flavor == TcpFlavor::Ns3;
                let queues = port_queues(qcfg, link.rate_bps, seed, NodeId(i as u32), j as u16, ns_grid);
                node.ports.push(Port::new(link, queues, tp.peer, tp.peer_port, ns_grid));
            }
            node.levels = vec![0; node.ports.len()];
        }
        let mut events = EventQueue::new();
        let ns3 = tcp.flavor == TcpFlavor::Ns3;
        let states = flows
            .into_iter()
            .map(|mut spec| {
                if ns3 {
                    // ns-3's clock holds whole nanoseconds (`bench/ns3/scenario.cc` rounds each
                    // start to the nearest one).
                    spec.start = crate::port::ns_grid(spec.start);
                }
                FlowState {
                    result: FlowResult {
                        start: spec.start,
                        ..FlowResult::default()
                    },
                    spec,
                    eps: [None, None],
                    timer_at: [Time::MAX; 2],
                    udp_sent: 0,
                    udp_next: 0,
                    client_failed: None,
                    passive_failed_last: false,
                    retired: None,
                }
            })
            .collect::<Vec<_>>();
        for (i, f) in states.iter().enumerate() {
            debug_assert_eq!(f.spec.id.0 as usize, i, "flow ids must be 0..n in order");
        }
        // Flows start in the order of their ids, or, like for like with ns-3, of their source
        // nodes: ns-3 schedules each application's start when its node initializes, node by
        // node at time 0, so starts at the same nanosecond run in node order (then in the
        // order the applications were installed, the flows' order).
        let mut order: Vec<&FlowSpec> = states.iter().map(|f| &f.spec).collect();
        if ns3 {
            order.sort_by_key(|s| (s.start, s.src.0, s.id.0));
        }
        for spec in order {
            events.push(spec.start, Event::FlowStart { flow: spec.id });
        }
        if options.queue_sample_interval > 0 {
            events.push(0, Event::Sample);
        }
        Sim {
            now: 0,
            events,
            pool: PacketPool::new(),
            nodes,
            routing: Routing::compute(topo),
            ecmp: switch.ecmp,
            tcp_cfg: tcp,
            flows: states,
            seed,
            out: TcpOutput::default(),
            scratch_sends: Vec::new(),
            scratch_timers: Vec::new(),
            scratch_frees: Vec::new(),
            scratch_forwards: Vec::new(),
            scratch_drops: Vec::new(),
            scratch_pauses: Vec::new(),
            pauses: FxHashMap::default(),
            scratch_events: Vec::new(),
            taps: Vec::new(),
            options,
            samples: Vec::new(),
            processed: 0,
            far_last_bit: FxHashMap::default(),
            unscheduled_done: 0,
            elide_tx_done: true,
            links_down: 0,
            delivery_logs: Vec::new(),
            part: None,
            peak_in_flight: None,
            qtrace: std::env::var_os("TANDEM_QTRACE").is_some(),
            any_model: false,
            cut_header: Vec::new(),
            cut_header_stale: true,
            direct_decided: false,
            ahead: Vec::new(),
            models_anywhere: false,
            link_events: false,
            direct_ports: true,
            arrival_hints: true,
            retire_quiet: false,
            retired_flows: 0,
            flush_depth: 0,
            direct_count: 0,
        }
    }

    /// Schedules `ev` at `at` with the next order key ([`next_key`]).
    #[inline]
    fn push_event(&mut self, at: Time, ev: Event) {
        push_in(&mut self.part, &mut self.events, at, ev);
    }

    /// Attaches a model to a switch (replacing any other) and applies its watched byte and packet
    /// levels.
    pub fn attach_model(&mut self, node: NodeId, model: Box<dyn SwitchModel>) {
        self.models_anywhere = true;
        self.direct_decided = false;
        if !self.owns(node) {
            // Another partition runs it: only what the neighbours see of it applies here.
            return self.shape_for_model(node, model.as_ref());
        }
        self.shape_for_model(node, model.as_ref());
        let levels = model.watch_levels();
        let packet_levels = model.watch_packet_levels();
        let n = &mut self.nodes[node.0 as usize];
        let notify_idle = model.watch_port_idle();
        for p in &mut n.ports {
            p.notify_idle = notify_idle;
            p.queues.set_watch(levels.clone());
            p.queues.set_watch_packets(packet_levels.clone());
        }
        let start = model.wants_start();
        n.model = Some(model);
        self.any_model = true;
        if start {
            if let Some(p) = &mut self.part {
                p.cur = node.0;
            }
            self.push_event(self.now, Event::ModelStart { node });
        }
    }

    /// What a model on switch `node` changes that its neighbours see: the bytes after which
    /// a cut-through switch takes a frame (when the frame's arrival there is), and the far
    /// ports it may pause.
    fn shape_for_model(&mut self, node: NodeId, model: &dyn SwitchModel) {
        self.cut_header_stale = true;
        let n = &mut self.nodes[node.0 as usize];
        if let (Forwarding::CutThrough { header_bytes }, Some(h)) = (&mut n.forwarding, model.cut_through_header()) {
            *header_bytes = h;
        }
        if model.pauses_peers() {
            let peers: Vec<(NodeId, u16)> = n.ports.iter().map(|p| (p.peer, p.peer_port)).collect();
            for (peer, port) in peers {
                self.nodes[peer.0 as usize].ports[usize::from(port)].pausable = true;
            }
        }
    }

    /// Gives every port of switch `node` fresh egress queues of configuration `cfg` (before a
    /// run: what the old queues held and counted is gone). For a switch whose model needs other
    /// queues than the scenario's, such as TCPU's three classes.
    pub fn set_switch_queues(&mut self, node: NodeId, cfg: QueueConfig) {
        let seed = self.seed;
        let like_for_like = self.tcp_cfg.flavor == TcpFlavor::Ns3;
        self.direct_decided = false;
        for (j, p) in self.nodes[node.0 as usize].ports.iter_mut().enumerate() {
            p.queues = port_queues(cfg, p.link.rate_bps, seed, node, j as u16, like_for_like);
        }
    }

    /// Adds a pcap tap on the egress of `node`'s `port`: every packet it sends is written.
    pub fn add_tap(&mut self, node: NodeId, port: u16, tap: Tap) {
        self.direct_decided = false;
        self.taps.push(tap);
        // Tap numbers fit 32 bits: a tap is a file, and the ports that could have one do too.
        self.nodes[node.0 as usize].ports[usize::from(port)].tap = u32::try_from(self.taps.len() - 1).ok();
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }
    /// Events handled so far.
    pub fn events_processed(&self) -> u64 {
        self.processed
    }
    /// Events still pending (between runs: the ends of transmissions that had no `TxDone`
    /// scheduled count as the events they stand for).
    pub fn events_pending(&self) -> usize {
        self.events.len() + self.unscheduled_done
    }
    /// Packets held now, and the most ever held at once (for a merged partitioned run, the
    /// most held at the end of any of its windows, summed over the partitions).
    pub fn packets_in_flight(&self) -> (usize, usize) {
        (self.pool.live(), self.peak_in_flight.unwrap_or(self.pool.high_water()))
    }
    /// The nodes.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    /// Mutable access to a node (install table rules before a run, ...).
    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        self.cut_header_stale = true;
        self.direct_decided = false;
        &mut self.nodes[id.0 as usize]
    }
    /// From now on a started TCP flow whose endpoints wait for no timer and which has no packet
    /// left in the network gives its endpoints back and keeps only their counters
    /// ([`Sim::flow_records`]). Nothing can happen to such a flow again: an endpoint acts only
    /// on a packet, a timer or its application, and the applications of TCP flows act only
    /// when their endpoints report (a delivery, a failure). So every output is what it would
    /// have been, and memory follows the flows that are still active, not every flow of the
    /// run (a flow whose connection stays half open, as a bulk flow's does in the default
    /// flavour, goes quiet as well). In a partition of a partitioned run a flow's endpoints and
    /// packets may be spread over several partitions, so the flows that go quiet here are only
    /// candidates, retired by every partition at once at the end of a window where none of them
    /// holds anything of the flow ([`crate::parallel`]). Call it before the run starts (it
    /// returns true); [`Sim::flow_results`] shows no endpoints for the flows retired.
    pub fn retire_quiet_flows(&mut self) -> bool {
        self.pool.count_flows(self.flows.len());
        self.retire_quiet = true;
        true
    }
    /// Flows whose endpoints have been retired so far ([`Sim::retire_quiet_flows`]).
    pub fn retired_flows(&self) -> u64 {
        self.retired_flows
    }
    /// Flow specs, results and the two endpoints' counters (client, server; `None` for an
    /// endpoint that never existed), in flow-id order, whether or not the endpoints were
    /// retired.
    pub fn flow_records(&self) -> impl Iterator<Item = (&FlowSpec, &FlowResult, [Option<&TcpStats>; 2])> {
        self.flows.iter().map(|f| {
            let stats = match &f.retired {
                Some(kept) => [kept[0].as_ref(), kept[1].as_ref()],
                None => [
                    f.eps[0].as_deref().map(TcpEndpoint::stats),
                    f.eps[1].as_deref().map(TcpEndpoint::stats),
                ],
            };
            (&f.spec, &f.result, stats)
        })
    }
    /// Flow specs and results, in flow-id order.
    pub fn flow_results(&self) -> impl Iterator<Item = (&FlowSpec, &FlowResult, [Option<&TcpEndpoint>; 2])> {
        self.flows
            .iter()
            .map(|f| (&f.spec, &f.result, [f.eps[0].as_deref(), f.eps[1].as_deref()]))
    }
    /// Takes the taps out (to finish their files); the sim writes no more frames after this.
    pub fn taps_vec(&mut self) -> Vec<Tap> {
        for n in &mut self.nodes {
            for p in &mut n.ports {
                p.tap = None;
            }
        }
        std::mem::take(&mut self.taps)
    }
    /// The attached model of a switch, for its report.
    pub fn model(&self, node: NodeId) -> Option<&dyn SwitchModel> {
        self.nodes[node.0 as usize].model.as_deref()
    }

    /// Packets alive now: in a queue, on a link or held by a model (0 once everything sent has
    /// been delivered or dropped).
    pub fn packets_live(&self) -> usize {
        self.pool.live()
    }

    /// The attached model of a switch as its own type `T` (an experiment reading what its model
    /// recorded); `None` when the switch has no model or one of another type.
    pub fn model_as<T: SwitchModel>(&self, node: NodeId) -> Option<&T> {
        let m: &dyn std::any::Any = self.model(node)?;
        m.downcast_ref::<T>()
    }

    /// [`Sim::model_as`], to change (between runs of [`Sim::run_until`]).
    pub fn model_as_mut<T: SwitchModel>(&mut self, node: NodeId) -> Option<&mut T> {
        let m: &mut dyn std::any::Any = self.nodes[node.0 as usize].model.as_deref_mut()?;
        m.downcast_mut::<T>()
    }

    /// Runs events up to and including time `until`; returns false when no event is left.
    pub fn run_until(&mut self, until: Time) -> bool {
        self.run_events(until);
        self.settle(until)
    }

    /// Handles every event at or before `until` (a partition's window, or [`Sim::run_until`]).
    pub(crate) fn run_events(&mut self, until: Time) {
        if self.cut_header_stale {
            self.refresh_cut_header();
        }
        if !self.direct_decided {
            self.decide_direct();
        }
        while let Some((t, ev)) = self.events.pop_until(until) {
            if let Some((_, e)) = self.events.upcoming(PREFETCH_AHEAD) {
                self.prefetch(e);
            }
            self.now = t;
            self.processed += 1;
            if self.part.is_some() {
                self.note_partition_event(ev);
            }
            self.handle(ev);
        }
    }

    /// Rebuilds [`Sim::cut_header`] from the nodes.
    #[cold]
    fn refresh_cut_header(&mut self) {
        self.cut_header_stale = false;
        self.cut_header = self
            .nodes
            .iter()
            .map(|n| match n.forwarding {
                Forwarding::CutThrough { header_bytes } if n.kind == NodeKind::Switch => header_bytes,
                _ => STORE_AND_FORWARD,
            })
            .collect();
    }

    /// After [`Sim::run_events`] up to `until`: the transmissions that ended by then without
    /// an event go idle, and time stands at `until` (true) or at the last event when nothing
    /// is left (false).
    pub(crate) fn settle(&mut self, until: Time) -> bool {
        self.release_direct(until);
        if self.unscheduled_done > 0 {
            // The transmissions that ended by `until` without a scheduled `TxDone`: the port
            // went idle then, as the event would have made it (counted as one, and the last
            // of them is where time stands if nothing else is left).
            let mut last = self.now;
            for n in &mut self.nodes {
                for p in &mut n.ports {
                    if p.done.1 != 0 && p.done.0 <= until {
                        last = last.max(p.done.0);
                        p.busy = false;
                        p.done = (0, 0);
                        self.processed += 1;
                        self.unscheduled_done -= 1;
                    }
                }
            }
            self.now = last;
        }
        if self.events.is_empty() && self.unscheduled_done == 0 {
            return false;
        }
        self.now = until;
        true
    }

    /// Schedules a `TxDone` for every transmission (the reference the tests compare the
    /// elided ones with; see [`Sim::start_tx`]).
    #[cfg(test)]
    pub(crate) fn schedule_every_tx_done(&mut self) {
        self.elide_tx_done = false;
        self.direct_decided = false;
    }

    /// Lets no port transmit directly (the reference the tests compare direct ports with; see
    /// [`Sim::send_direct`]).
    #[cfg(test)]
    pub(crate) fn without_direct_ports(&mut self) {
        self.direct_ports = false;
        self.direct_decided = false;
    }

    /// Lets no arrival carry a hint (the reference the tests compare hints with; see [`Ahead`]).
    #[cfg(test)]
    pub(crate) fn without_arrival_hints(&mut self) {
        self.arrival_hints = false;
        self.direct_decided = false;
    }

    /// True when an event is pending after the one being handled, counting the ends of
    /// transmissions that had no `TxDone` scheduled.
    fn more_pending(&self) -> bool {
        if !self.events.is_empty() {
            return true;
        }
        let at = (self.now, self.events.popped_seq());
        self.unscheduled_done > 0
            && self
                .nodes
                .iter()
                .flat_map(|n| &n.ports)
                .any(|p| p.done.1 != 0 && p.done > at)
    }

    /// Asks the CPU for what a coming event names (a hint; results never change): its packet,
    /// and the port a `TxDone` or `Enqueue` works on. At scale (hundreds of thousands of
    /// packets in flight, thousands of ports) these are cache misses, which the loop would
    /// otherwise wait for one after the other; a second stage (the egress port an arriving
    /// packet will take, the queue entry a port sends next) measured no better.
    #[inline]
    fn prefetch(&self, ev: Event) {
        let (node, port) = match ev {
            Event::Arrive { pkt, .. } => return self.pool.prefetch(pkt),
            Event::ArriveRouted { node, pkt, out, .. } => {
                self.pool.prefetch(pkt);
                (node, out)
            }
            Event::ArriveHost { node, pkt, flow, .. } => {
                self.pool.prefetch(pkt);
                return self.prefetch_flow(flow, |f| usize::from(f.spec.dst == node));
            }
            Event::FlowTimer { flow, side } => return self.prefetch_flow(flow, |_| usize::from(side)),
            Event::Enqueue { node, port, pkt, .. } => {
                self.pool.prefetch(pkt);
                (node, port)
            }
            Event::TxDone { node, port } => (node, port),
            _ => return,
        };
        if let Some(p) = self
            .nodes
            .get(node.0 as usize)
            .and_then(|n| n.ports.get(usize::from(port)))
        {
            crate::prefetch::prefetch_prefix(p, Port::HOT_BYTES);
        }
    }

    /// Asks the CPU for the state of `flow` that an arrival or a timer will touch: the flow's
    /// record and the endpoint on the side `side` picks from it.
    #[inline]
    fn prefetch_flow(&self, flow: FlowId, side: impl FnOnce(&FlowState) -> usize) {
        if let Some(f) = self.flows.get(flow.0 as usize) {
            crate::prefetch::prefetch(f);
            if let Some(ep) = f.eps.get(side(f)).and_then(|e| e.as_deref()) {
                crate::prefetch::prefetch(ep);
            }
        }
    }

    /// The routing's egress port for a packet at a switch: its equal-cost set, one port chosen
    /// by the flow's hash; `None` without a route.
    #[inline]
    fn ecmp_choice(&self, node: NodeId, p: &Packet) -> Option<u16> {
        let ports = self.routing.next_ports(node, p.dst);
        if self.links_down > 0 {
            return self.ecmp_live(node, p, ports);
        }
        if ports.len() == 1 {
            return Some(ports[0]);
        }
        ecmp_pick(ports, ecmp_hash(self.ecmp_key(p), node))
    }

    /// What ECMP hashes for `p` ([`SwitchConfig::ecmp`]): its flow's number or its
    /// destination's.
    #[inline]
    fn ecmp_key(&self, p: &Packet) -> u32 {
        match self.ecmp {
            Ecmp::Flow => p.flow.0,
            Ecmp::Destination => p.dst.0,
        }
    }

    /// A port whose model watches it has gone idle (rare: off the hot path).
    #[cold]
    #[inline(never)]
    fn port_idle(&mut self, node: NodeId, port: u16) {
        self.with_model(node, |m, cx| m.on_port_idle(cx, port));
    }

    /// The link at `port` of `node` fails (`up` false) or comes back (`up` true) at `at`, both
    /// directions at once. While it is down, a frame on it when it failed or sent onto it since
    /// is lost at the far end, packets waiting at either end are dropped when it fails and
    /// packets offered to either end's port after, all with reason `link-down`; a switch no
    /// longer picks the port among equal-cost next hops (a flow whose port failed moves to
    /// another by its hash; the others stay), and a switch left without a live next hop drops
    /// with `no-route` (routes are not recomputed: a switch that does not see the failure
    /// keeps sending into it). Every switch model hears the change
    /// ([`SwitchModel::on_link_change`]). A frame that was on the wire when its link failed
    /// and would arrive after the link came back is delivered.
    pub fn schedule_link(&mut self, at: Time, node: NodeId, port: u16, up: bool) {
        self.link_events = true;
        self.direct_decided = false;
        if let Some(p) = &mut self.part {
            p.cur = p.link_node;
        }
        self.push_event(at.max(self.now), Event::Link { node, port, up });
    }

    /// Wakes the model of switch `node` at `at` (now, if that has passed) with `token`, as if
    /// the model had set that timer itself ([`SwitchModel::on_timer`]): how a driver outside the
    /// run hands a model an input at a time of its choosing (a test harness's frame to send, a
    /// control-plane notice). The model keeps what the token stands for.
    pub fn wake_model_at(&mut self, at: Time, node: NodeId, token: u64) {
        if let Some(p) = &mut self.part {
            p.cur = node.0;
        }
        self.push_event(at.max(self.now), Event::SwitchTimer { node, token });
    }

    /// When the next event is due (a transmission's end that had no event scheduled counts);
    /// `None` when nothing is left to do.
    pub fn next_event_at(&self) -> Option<Time> {
        let done = self
            .nodes
            .iter()
            .flat_map(|n| &n.ports)
            .filter(|p| p.done.1 != 0)
            .map(|p| p.done.0)
            .min();
        match (self.events.peek_time(), done) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Keeps every datagram UDP flow `flow` delivers from now on, for an experiment that looks
    /// at packets one by one (a source's datagrams are bounded by its rate and duration).
    pub fn log_deliveries(&mut self, flow: FlowId) {
        if !self.delivery_logs.iter().any(|l| l.0 == flow) {
            self.delivery_logs.push((flow, Vec::new()));
        }
    }

    /// The datagrams flow `flow` delivered since [`Sim::log_deliveries`], in order of arrival.
    pub fn deliveries(&self, flow: FlowId) -> &[UdpDelivery] {
        self.delivery_logs
            .iter()
            .find(|l| l.0 == flow)
            .map_or(&[], |l| l.1.as_slice())
    }

    /// Logs a datagram of a flow whose deliveries are logged (off the hot path).
    #[cold]
    #[inline(never)]
    fn log_delivery(&mut self, flow: FlowId, d: UdpDelivery) {
        if let Some(l) = self.delivery_logs.iter_mut().find(|l| l.0 == flow) {
            l.1.push(d);
        }
    }

    /// Whether the link at `port` of `node` is down now.
    pub fn link_down(&self, node: NodeId, port: u16) -> bool {
        self.nodes
            .get(node.0 as usize)
            .and_then(|n| n.ports.get(usize::from(port)))
            .is_some_and(|p| p.down)
    }

    /// A model that asked for it starts (rare: off the hot path).
    #[cold]
    #[inline(never)]
    fn model_start(&mut self, node: NodeId) {
        self.with_model(node, |m, cx| m.on_start(cx));
    }

    /// Drops `pkt`, offered to `port` of `node` whose link is down (rare: off the hot path).
    #[cold]
    #[inline(never)]
    fn refuse_on_down_link(&mut self, node: NodeId, port: u16, pkt: PacketId) {
        let now = self.now;
        let size = self.pool.remove(pkt).size;
        let p = &mut self.nodes[node.0 as usize].ports[usize::from(port)];
        p.queues.count_external_drop(DropReason::LinkDown, size);
        if p.notify_idle && !p.busy {
            // A model that hands the port one frame at a time hears it free at once.
            self.push_event(now, Event::TxDone { node, port });
        }
    }

    /// A link fails or comes back (rare: off the hot path).
    #[cold]
    #[inline(never)]
    fn link_change(&mut self, node: NodeId, port: u16, up: bool) {
        let Some(p) = self
            .nodes
            .get(node.0 as usize)
            .and_then(|n| n.ports.get(usize::from(port)))
        else {
            return;
        };
        if p.down != up {
            return; // no change
        }
        let (peer, peer_port) = (p.peer, p.peer_port);
        let mut dropped = Vec::new();
        for (n, q) in [(node, port), (peer, peer_port)] {
            let n = &mut self.nodes[n.0 as usize];
            let p = &mut n.ports[usize::from(q)];
            p.down = !up;
            if !up && !p.direct {
                // (A direct port's queued packets are on their way already: a link change
                // scheduled once the run had begun finds them committed; those that reach the
                // far end while the link is down are lost there.)
                p.queues.drop_all(&mut n.buffer, DropReason::LinkDown, &mut dropped);
            }
        }
        for pkt in dropped {
            self.pool.remove(pkt);
        }
        if up {
            self.links_down -= 1;
        } else {
            self.links_down += 1;
        }
        let change = LinkChange {
            a: (node, port),
            b: (peer, peer_port),
            up,
        };
        for i in 0..self.nodes.len() {
            if self.nodes[i].model.is_some() {
                self.with_model(NodeId(i as u32), |m, cx| m.on_link_change(cx, change));
            }
        }
    }

    /// Drops `pkt`, arriving on `port` of `node`, if that port's link is down (it was on the
    /// wire when the link failed); false when the link is up.
    #[cold]
    #[inline(never)]
    fn lost_on_link(&mut self, node: NodeId, port: u16, pkt: PacketId) -> bool {
        let p = &mut self.nodes[node.0 as usize].ports[usize::from(port)];
        if !p.down {
            return false;
        }
        let size = self.pool.remove(pkt).size;
        p.queues.count_external_drop(DropReason::LinkDown, size);
        true
    }

    /// [`Sim::ecmp_choice`] while links are down: the flow's port if its link is up, else one
    /// of the live ports by the flow's hash; `None` when none is live.
    #[cold]
    #[inline(never)]
    fn ecmp_live(&self, node: NodeId, p: &Packet, ports: &[u16]) -> Option<u16> {
        let n = &self.nodes[node.0 as usize];
        let live = |q: u16| n.ports.get(usize::from(q)).is_some_and(|x| !x.down);
        let h = ecmp_hash(self.ecmp_key(p), node);
        let first = *ports.get((h % ports.len().max(1) as u64) as usize)?;
        if live(first) {
            return Some(first);
        }
        let alive: Vec<u16> = ports.iter().copied().filter(|&q| live(q)).collect();
        alive.get((h % alive.len().max(1) as u64) as usize).copied()
    }

    /// An 802.3x PAUSE reaches `port` of `node` (rare: off the hot path).
    #[cold]
    #[inline(never)]
    fn pause(&mut self, node: NodeId, port: u16, duration: Time) {
        let now = self.now;
        if let Some(p) = self.nodes[node.0 as usize].ports.get_mut(usize::from(port)) {
            // 802.3x: the timer starts once the frame on the wire has gone, and a new PAUSE
            // replaces the one before (quanta 0: go on now; a port already waiting out a
            // longer pause waits until that ends). A port no model declared pausable becomes
            // so now (its frame on the wire, if any, is taken to have gone).
            p.pausable = true;
            let s = self.pauses.entry((node, port)).or_default();
            s.until = if duration == 0 {
                now
            } else {
                s.tx_end.max(now) + duration
            };
        }
    }

    #[inline]
    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Arrive { node, port, pkt, rest } => {
                let last_bit = self.last_bit(pkt, rest);
                self.arrive(node, port, pkt, last_bit)
            }
            Event::ArriveRouted { node, port, pkt, out } => self.arrive_routed(node, port, pkt, out),
            Event::ArriveHost { node, port, pkt, .. } => self.arrive(node, port, pkt, self.now),
            Event::Enqueue { node, port, pkt, rest } => {
                let last_bit = self.last_bit(pkt, rest);
                self.enqueue(node, port, pkt, last_bit)
            }
            Event::TxDone { node, port } => {
                self.nodes[node.0 as usize].ports[usize::from(port)].busy = false;
                self.start_tx(node, port);
                let p = &mut self.nodes[node.0 as usize].ports[usize::from(port)];
                p.queues.ns3_transmission_ended(self.now);
                if p.notify_idle && !p.busy {
                    self.port_idle(node, port);
                }
            }
            Event::FlowTimer { flow, side } => self.flow_timer(flow, side),
            Event::FlowStart { flow } => self.flow_start(flow),
            Event::UdpSend { flow } => self.udp_send(flow),
            Event::SwitchTimer { node, token } => {
                self.with_model(node, |m, cx| m.on_timer(cx, token));
            }
            Event::Pause { node, port, duration } => self.pause(node, port, duration),
            Event::Link { node, port, up } => self.link_change(node, port, up),
            Event::ModelStart { node } => self.model_start(node),
            Event::Fork { node, pkt } => {
                let p = self.pool.remove(pkt);
                self.host_receive_tcp(node, p, true);
            }
            Event::Sample => self.sample(),
        }
    }

    /// `rest` for an event at `at` about packet `pkt` whose last bit is at `last_bit`.
    #[inline]
    fn rest(&mut self, pkt: PacketId, at: Time, last_bit: Time) -> u32 {
        match u32::try_from(last_bit.saturating_sub(at)) {
            Ok(r) if r != FAR => r,
            _ => {
                self.far_last_bit.insert(pkt.0, last_bit);
                FAR
            }
        }
    }

    /// The last bit of the packet of the event being handled, from its `rest`.
    #[inline]
    fn last_bit(&mut self, pkt: PacketId, rest: u32) -> Time {
        if rest == FAR {
            self.far_last_bit.remove(&pkt.0).unwrap_or(self.now)
        } else {
            self.now + u64::from(rest)
        }
    }

    fn sample(&mut self) {
        self.release_direct(self.now);
        if !self.options.sample_ports.is_empty() {
            for &(node, port) in &self.options.sample_ports {
                if !self.owns(node) {
                    continue;
                }
                if let Some(p) = self
                    .nodes
                    .get(node.0 as usize)
                    .and_then(|n| n.ports.get(usize::from(port)))
                {
                    self.samples.push(QueueSample {
                        time: self.now,
                        node,
                        port,
                        bytes: p.queues.bytes(),
                        packets: p.queues.packets(),
                    });
                }
            }
            self.next_sample();
            return;
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if n.kind != NodeKind::Switch || !self.owns(NodeId(i as u32)) {
                continue;
            }
            for (p, port) in n.ports.iter().enumerate() {
                let bytes = port.queues.bytes();
                if bytes > 0 {
                    self.samples.push(QueueSample {
                        time: self.now,
                        node: NodeId(i as u32),
                        port: p as u16,
                        bytes,
                        packets: port.queues.packets(),
                    });
                }
            }
        }
        self.next_sample();
    }

    /// Schedules the next queue sample: while any other event is pending, or in a partitioned
    /// run (where no partition knows what the others have pending) up to the end of the run.
    fn next_sample(&mut self) {
        let next = self.now + self.options.queue_sample_interval;
        let due = match &self.part {
            None => self.more_pending(),
            Some(p) => next <= p.sample_until,
        };
        if due {
            self.push_event(next, Event::Sample);
        }
    }

    /// Whether this simulation handles `node` (every node, unless it is a partition of a
    /// partitioned run).
    #[inline]
    fn owns(&self, node: NodeId) -> bool {
        self.part.as_ref().is_none_or(|p| p.owner[node.0 as usize] == p.index)
    }

    // ----- links and queues -----

    /// Offers a packet to an egress queue and starts the port if it is idle.
    fn enqueue(&mut self, node: NodeId, port: u16, pkt: PacketId, last_bit: Time) {
        let now = self.now;
        let n = &mut self.nodes[node.0 as usize];
        let Some(p) = n.ports.get_mut(usize::from(port)) else {
            self.pool.remove(pkt);
            return;
        };
        if p.down {
            return self.refuse_on_down_link(node, port, pkt);
        }
        let direct = p.direct;
        if direct {
            // What has started leaves the queue first, so that the packet meets the queue
            // the port with transmission events would show it.
            p.queues.release_started(now, &mut n.buffer);
        }
        let waiting = p.queues.packets();
        let adm = p
            .queues
            .enqueue(pkt, self.pool.get_mut(pkt), last_bit, now, &mut n.buffer);
        if self.qtrace && n.kind == NodeKind::Switch {
            self.qtrace(node, port, pkt, waiting, matches!(adm, Admission::Dropped(_)));
        }
        if let Admission::Dropped(_) = adm {
            self.pool.remove(pkt);
            return;
        }
        if direct {
            return self.send_direct(node, port, pkt, last_bit);
        }
        self.check_level(node, port);
        self.start_tx(node, port);
    }

    /// With `TANDEM_QTRACE` set, one line on standard error per packet a switch port takes (`Q`)
    /// or drops (`D`), in the shape of `bench/ns3/scenario.cc`'s `NS3_QTRACE` lines: time in
    /// ns, source and destination (node numbers: the hosts' link order in an exported ns-3
    /// spec), payload, packets waiting before it, TCP flags, sequence and acknowledgment numbers
    /// (absolute: each connection's own ISN), ports, the switch port, SACK blocks.
    /// `bench/ns3-first-difference.py` sets the two side by side.
    #[cold]
    #[inline(never)]
    fn qtrace(&self, node: NodeId, port: u16, pkt: PacketId, waiting: u32, dropped: bool) {
        let x = self.pool.get(pkt);
        let sack: String = x.sack_blocks().iter().map(|(a, b)| format!(" {a}-{b}")).collect();
        eprintln!(
            "{} {} h{}>h{} len {} waiting {} flags {} seq {} ack {} ports {}>{} at {}:{}{}",
            self.now / 1000,
            if dropped { "D" } else { "Q" },
            x.src.0,
            x.dst.0,
            x.payload,
            waiting,
            x.flags.0,
            x.seq,
            x.ack,
            x.src_port,
            x.dst_port,
            node.0,
            port,
            if sack.is_empty() {
                String::new()
            } else {
                format!(" sack{sack}")
            }
        );
    }

    /// Tells the switch's model, if any, that the port's queue crossed one of its watched levels.
    #[inline]
    fn check_level(&mut self, node: NodeId, port: u16) {
        if self.any_model {
            self.check_model_level(node, port);
        }
    }

    /// [`Sim::check_level`] when some switch has a model.
    #[inline(never)]
    fn check_model_level(&mut self, node: NodeId, port: u16) {
        let n = &mut self.nodes[node.0 as usize];
        if n.model.is_none() {
            return;
        }
        let p = &n.ports[usize::from(port)];
        let level = p.queues.level();
        if level != n.levels[usize::from(port)] {
            n.levels[usize::from(port)] = level;
            let bytes = p.queues.bytes();
            self.with_model(node, |m, cx| m.on_queue_level(cx, port, level, bytes));
        }
    }

    /// Starts the port's next transmission if it is idle and a packet waits.
    ///
    /// The end of a transmission is a `TxDone` event, which makes the port idle and starts
    /// the next packet. When nothing waits as a transmission starts, that event would find
    /// an empty queue unless a packet comes first, and often none does (the last packet of a
    /// burst, an ACK on a host's port): then no event is scheduled. The port keeps the end's
    /// time and a reserved sequence number instead, and becomes idle by it. A packet that
    /// comes earlier (in time, or at that time but earlier in the order of ties) finds the
    /// port busy and schedules the `TxDone` with the reserved number, exactly where it would
    /// have been; one that comes later finds the port idle, as it would have. The run's
    /// events, their order and every result are the same as with the event always scheduled.
    fn start_tx(&mut self, node: NodeId, port: u16) {
        let now = self.now;
        let n = &mut self.nodes[node.0 as usize];
        let p = &mut n.ports[usize::from(port)];
        if p.busy {
            if p.done.1 == 0 {
                return;
            }
            let done = std::mem::take(&mut p.done);
            self.unscheduled_done -= 1;
            if done > (now, self.events.popped_seq()) {
                push_reserved_in(
                    &self.part,
                    &mut self.events,
                    done.0,
                    done.1,
                    Event::TxDone { node, port },
                );
                return;
            }
            // It has passed: the port went idle then (the event it stands for, counted).
            p.busy = false;
            self.processed += 1;
        }
        if p.pausable && pause_holds(&mut self.pauses, &mut self.part, &mut self.events, p, node, port, now) {
            return;
        }
        let Some(q) = p.queues.dequeue(now, &mut n.buffer) else {
            return;
        };
        p.busy = true;
        let wire = p.link.wire_bytes(q.size);
        let end = (now + p.ser_time(wire)).max(q.last_bit);
        if p.pausable {
            note_tx_end(&mut self.pauses, node, port, end);
        }
        let (peer, peer_port, delay) = (p.peer, p.peer_port, p.link.delay);
        if p.queues.packets() == 0 && self.elide_tx_done && !p.notify_idle {
            p.done = (end, next_key(&mut self.part, &mut self.events));
            self.unscheduled_done += 1;
        } else {
            push_in(&mut self.part, &mut self.events, end, Event::TxDone { node, port });
        }
        if let Some(t) = p.tap {
            self.taps[t as usize].write(now, self.pool.get(q.pkt), self.pool.frame(q.pkt));
        }
        let last_bit = end + delay;
        let header_bytes = self.cut_header[peer.0 as usize];
        let at = if header_bytes == STORE_AND_FORWARD {
            last_bit
        } else {
            let header =
                self.nodes[node.0 as usize].ports[usize::from(port)].ser_time(u64::from(header_bytes.min(q.size)));
            (now + delay + header).min(last_bit)
        };
        self.launch(q.pkt, peer, peer_port, at, last_bit);
        self.check_level(node, port);
    }

    /// Sends `pkt` over a link to `peer`'s port `peer_port`, where it arrives at `at` (its
    /// last bit at `last_bit`): an `Arrive` event, or in a partitioned run a transfer to the
    /// partition that owns the far end.
    #[inline]
    fn launch(&mut self, pkt: PacketId, peer: NodeId, peer_port: u16, at: Time, last_bit: Time) {
        if let Some(part) = self.part.as_deref_mut().filter(|x| x.owner[peer.0 as usize] != x.index) {
            // The far end is another partition's: the packet goes to it, with its order key.
            let key = part.next_key();
            let frame = self.pool.take_frame(pkt);
            let packet = self.pool.remove(pkt);
            part.outbox.push(Transfer {
                at,
                key,
                node: peer,
                port: peer_port,
                what: Carried::Packet {
                    last_bit,
                    packet,
                    frame,
                },
            });
        } else {
            let ahead = match self.ahead.get(peer.0 as usize) {
                Some(&a) if at == last_bit => a,
                _ => Ahead::Nothing,
            };
            let routed = match ahead {
                Ahead::Egress => self.ecmp_choice(peer, self.pool.get(pkt)),
                _ => None,
            };
            let ev = match (ahead, routed) {
                (_, Some(out)) => Event::ArriveRouted {
                    node: peer,
                    port: peer_port,
                    pkt,
                    out,
                },
                (Ahead::Flow, _) => Event::ArriveHost {
                    node: peer,
                    port: peer_port,
                    pkt,
                    flow: self.pool.get(pkt).flow,
                },
                _ => Event::Arrive {
                    node: peer,
                    port: peer_port,
                    pkt,
                    rest: self.rest(pkt, at, last_bit),
                },
            };
            self.push_event(at, ev);
        }
    }

    /// A packet [`Sim::enqueue`] has queued on a port that transmits directly ([`Port::direct`]):
    /// its transmission is fixed now. The queue is first-in first-out, one class, never
    /// paused, so the packet starts when the packet before it ends (or now, when the port is
    /// free) whatever comes after it: its start and end are known, and its arrival at the far
    /// end is scheduled at once. No `TxDone` event is needed; the packet stays counted in the
    /// queue until its start (released lazily: [`EgressQueues::release_started`]).
    #[inline]
    fn send_direct(&mut self, node: NodeId, port: u16, pkt: PacketId, last_bit: Time) {
        let size = self.pool.get(pkt).size;
        let p = &mut self.nodes[node.0 as usize].ports[usize::from(port)];
        let start = self.now.max(p.free_at);
        let end = (start + p.ser_time(p.link.wire_bytes(size))).max(last_bit);
        p.free_at = end;
        p.queues.set_tail_start(start);
        let (peer, peer_port) = (p.peer, p.peer_port);
        let arrival = end + p.link.delay;
        self.launch(pkt, peer, peer_port, arrival, arrival);
    }

    /// Releases the packets of the direct ports whose transmissions started by `until`
    /// (their queues then read as the port's would with `TxDone` events).
    fn release_direct(&mut self, until: Time) {
        if self.direct_count == 0 {
            return;
        }
        for n in &mut self.nodes {
            for p in &mut n.ports {
                if p.direct {
                    p.queues.release_started(until, &mut n.buffer);
                }
            }
        }
    }

    /// Decides which ports transmit directly ([`Port::direct`]): before the first event, and
    /// again after anything that changes what a port needs (a model, a tap, a link change, a
    /// node changed by hand). A port qualifies when nothing can change a transmission once
    /// its packet is queued or needs to hear of its end: one first-in first-out class, its
    /// own buffer, no tap, no pause, no model on this switch or anywhere (a model may hold,
    /// pause or reroute), no scheduled link change, a store-and-forward far end, the default
    /// TCP flavour (the like-for-like mode keeps ns-3's order of events).
    /// A port changes mode only while idle with nothing queued; one that is not waits for the
    /// next decision. What arrivals carry ahead ([`Sim::ahead`]) is decided here too, on
    /// the same occasions.
    #[cold]
    fn decide_direct(&mut self) {
        self.direct_decided = true;
        let now = self.now;
        let global = self.direct_ports
            && self.elide_tx_done
            && !self.models_anywhere
            && !self.link_events
            && self.tcp_cfg.flavor != TcpFlavor::Ns3;
        let (hints, link_events) = (self.arrival_hints, self.link_events);
        self.ahead = self
            .nodes
            .iter()
            .map(|n| match n.kind {
                _ if !hints => Ahead::Nothing,
                NodeKind::Host => Ahead::Flow,
                NodeKind::Switch if !link_events && n.model.is_none() && n.tables.is_empty() => Ahead::Egress,
                NodeKind::Switch => Ahead::Nothing,
            })
            .collect();
        for n in &mut self.nodes {
            let own_buffer = matches!(n.buffer.cfg, crate::config::BufferConfig::Dedicated);
            let switch = n.kind == NodeKind::Switch;
            for p in &mut n.ports {
                let want = global
                    && switch
                    && own_buffer
                    && p.tap.is_none()
                    && !p.pausable
                    && !p.notify_idle
                    && p.queues.single_class()
                    && self.cut_header.get(p.peer.0 as usize) == Some(&STORE_AND_FORWARD);
                if want == p.direct {
                    continue;
                }
                if want {
                    if p.busy || p.done.1 != 0 || p.queues.packets() != 0 {
                        self.direct_decided = false;
                        continue;
                    }
                    p.direct = true;
                    p.free_at = now;
                    self.direct_count += 1;
                } else {
                    p.queues.release_started(now, &mut n.buffer);
                    if p.queues.packets() != 0 || p.free_at > now {
                        self.direct_decided = false;
                        continue;
                    }
                    p.direct = false;
                    self.direct_count -= 1;
                }
            }
        }
    }

    // ----- switches -----

    fn with_model(&mut self, node: NodeId, f: impl FnOnce(&mut dyn SwitchModel, &mut SwitchCtx<'_>)) -> bool {
        let n = &mut self.nodes[node.0 as usize];
        let Some(mut model) = n.model.take() else { return false };
        let mut sends = std::mem::take(&mut self.scratch_sends);
        let mut timers = std::mem::take(&mut self.scratch_timers);
        let mut frees = std::mem::take(&mut self.scratch_frees);
        let mut forwards = std::mem::take(&mut self.scratch_forwards);
        let mut drops = std::mem::take(&mut self.scratch_drops);
        let mut pauses = std::mem::take(&mut self.scratch_pauses);
        let mut cx = SwitchCtx {
            now: self.now,
            node,
            pool: &mut self.pool,
            ports: &n.ports,
            tables: &mut n.tables,
            sends: &mut sends,
            timers: &mut timers,
            frees: &mut frees,
            forwards: &mut forwards,
            drops: &mut drops,
            pauses: &mut pauses,
        };
        f(model.as_mut(), &mut cx);
        self.nodes[node.0 as usize].model = Some(model);
        for (at, token) in timers.drain(..) {
            self.push_event(at.max(self.now), Event::SwitchTimer { node, token });
        }
        for pkt in frees.drain(..) {
            self.pool.remove(pkt);
        }
        for (in_port, pkt, why) in drops.drain(..) {
            let size = self.pool.remove(pkt).size;
            if let Some(p) = self.nodes[node.0 as usize].ports.get_mut(usize::from(in_port)) {
                p.queues.count_external_drop(DropReason::Model(why), size);
            }
        }
        self.scratch_drops = drops;
        for (port, mut at, duration) in pauses.drain(..) {
            if let Some(p) = self.nodes[node.0 as usize].ports.get(usize::from(port)) {
                let (peer, peer_port) = (p.peer, p.peer_port);
                if let Some(part) = self.part.as_deref_mut() {
                    // A partitioned run: the pause travels its link (no sooner than its
                    // delay), and to another partition as a transfer.
                    at = at.max(self.now + p.link.delay);
                    if part.owner[peer.0 as usize] != part.index {
                        let key = part.next_key();
                        part.outbox.push(Transfer {
                            at,
                            key,
                            node: peer,
                            port: peer_port,
                            what: Carried::Pause { duration },
                        });
                        continue;
                    }
                }
                self.push_event(
                    at.max(self.now),
                    Event::Pause {
                        node: peer,
                        port: peer_port,
                        duration,
                    },
                );
            }
        }
        self.scratch_pauses = pauses;
        for (port, pkt) in sends.drain(..) {
            let now = self.now;
            self.enqueue(node, port, pkt, now);
        }
        for (in_port, pkt) in forwards.drain(..) {
            let now = self.now;
            self.route(node, in_port, pkt, now);
        }
        self.scratch_forwards = forwards;
        self.scratch_sends = sends;
        self.scratch_timers = timers;
        self.scratch_frees = frees;
        true
    }

    fn arrive(&mut self, node: NodeId, port: u16, pkt: PacketId, last_bit: Time) {
        if self.links_down > 0 && self.lost_on_link(node, port, pkt) {
            return;
        }
        if self.nodes[node.0 as usize].kind == NodeKind::Host {
            let p = self.pool.remove(pkt);
            self.host_receive(node, p);
            return;
        }
        // Model first.
        if self.nodes[node.0 as usize].model.is_some() {
            let mut verdict = Verdict::Continue;
            self.with_model(node, |m, cx| verdict = m.on_ingress(cx, port, pkt));
            match verdict {
                Verdict::Continue => {}
                Verdict::Output { port: out, class } => {
                    self.pool.get_mut(pkt).class = class;
                    self.forward(node, out, pkt, last_bit, 0);
                    return;
                }
                Verdict::OutputAfter {
                    port: out,
                    class,
                    delay,
                } => {
                    self.pool.get_mut(pkt).class = class;
                    self.forward(node, out, pkt, last_bit, delay);
                    return;
                }
                Verdict::Drop(why) => {
                    let size = self.pool.remove(pkt).size;
                    self.nodes[node.0 as usize].ports[usize::from(port)]
                        .queues
                        .count_external_drop(DropReason::Model(why), size);
                    return;
                }
                Verdict::Consumed => return,
            }
        }
        self.route(node, port, pkt, last_bit);
    }

    /// [`Event::ArriveRouted`]: the egress chosen as the packet was sent, if the switch still
    /// routes as it did then (no model, no table, no link down: otherwise it may have changed
    /// since, by hand between two steps of the run, and the packet arrives as any other).
    #[inline]
    fn arrive_routed(&mut self, node: NodeId, port: u16, pkt: PacketId, out: u16) {
        let n = &self.nodes[node.0 as usize];
        let now = self.now;
        if self.links_down == 0 && n.model.is_none() && n.tables.is_empty() && n.kind == NodeKind::Switch {
            self.forward(node, out, pkt, now, 0);
        } else {
            self.arrive(node, port, pkt, now);
        }
    }

    /// The switch pipeline after the model: tables, then routing, then the egress.
    fn route(&mut self, node: NodeId, port: u16, pkt: PacketId, last_bit: Time) {
        // Tables.
        let mut out_port = None;
        {
            let n = &mut self.nodes[node.0 as usize];
            let p = self.pool.get_mut(pkt);
            for t in &mut n.tables {
                if let Some(rule) = t.lookup(p) {
                    let a = rule.action;
                    if a.drop {
                        let size = p.size;
                        n.ports[usize::from(port)]
                            .queues
                            .count_external_drop(DropReason::Model("table-drop"), size);
                        self.pool.remove(pkt);
                        return;
                    }
                    if let Some(c) = a.class {
                        p.class = c;
                    }
                    if a.mark_ce && matches!(p.ecn, Ecn::Ect0 | Ecn::Ect1) {
                        p.ecn = Ecn::Ce;
                    }
                    out_port = a.output;
                    break;
                }
            }
        }
        let out = match out_port {
            Some(o) => o,
            None => match self.ecmp_choice(node, self.pool.get(pkt)) {
                Some(o) => o,
                None => {
                    let size = self.pool.remove(pkt).size;
                    self.nodes[node.0 as usize].ports[usize::from(port)]
                        .queues
                        .count_external_drop(DropReason::NoRoute, size);
                    return;
                }
            },
        };
        self.forward(node, out, pkt, last_bit, 0);
    }

    /// Into the egress queue after the switch's pipeline latency and a model's own `extra`.
    fn forward(&mut self, node: NodeId, port: u16, pkt: PacketId, last_bit: Time, extra: Time) {
        let lat = self.nodes[node.0 as usize].pipeline_latency + extra;
        if lat == 0 {
            self.enqueue(node, port, pkt, last_bit);
        } else {
            let at = self.now + lat;
            let rest = self.rest(pkt, at, last_bit + lat);
            self.push_event(at, Event::Enqueue { node, port, pkt, rest });
        }
    }

    // ----- hosts -----

    fn host_send(&mut self, host: NodeId, p: Packet) {
        let id = self.pool.insert(p);
        let now = self.now;
        self.enqueue(host, 0, id, now);
    }

    fn flush_tcp(&mut self, flow: FlowId, side: usize) {
        let mut out = std::mem::take(&mut self.out);
        let host = if side == 0 {
            self.flows[flow.0 as usize].spec.src
        } else {
            self.flows[flow.0 as usize].spec.dst
        };
        for p in out.packets.drain(..) {
            self.host_send(host, p);
        }
        // The application's events, through a reused buffer (a nested flush takes an empty one).
        let mut events = std::mem::take(&mut self.scratch_events);
        events.append(&mut out.events);
        self.out = out;
        self.flush_depth += 1;
        for e in events.drain(..) {
            self.tcp_event(flow, side, e);
        }
        self.flush_depth -= 1;
        self.scratch_events = events;
        let f = &mut self.flows[flow.0 as usize];
        if let Some(ep) = &f.eps[side] {
            if let Some(t) = ep.next_timer() {
                if t < f.timer_at[side] {
                    f.timer_at[side] = t;
                    let at = t.max(self.now);
                    push_in(
                        &mut self.part,
                        &mut self.events,
                        at,
                        Event::FlowTimer { flow, side: side as u8 },
                    );
                }
            } else if self.retire_quiet && self.flush_depth == 0 {
                match self.part.as_deref_mut() {
                    // Nothing of the flow here: a candidate, judged at the window's end.
                    Some(part) if self.pool.flow_live(flow) == 0 => part.quiet.push(flow.0),
                    Some(_) => {}
                    None => self.retire(flow),
                }
            }
        }
    }

    /// [`Sim::retire_quiet_flows`]: gives `flow`'s endpoints back if it has started, none of
    /// its endpoints waits for a timer and none of its packets is left anywhere (queued, on a
    /// link, held by a model, waiting for a fork).
    fn retire(&mut self, flow: FlowId) {
        // The packet count first: the cheapest test, and the one an active flow fails.
        if self.pool.flow_live(flow) > 0 {
            return;
        }
        let f = &mut self.flows[flow.0 as usize];
        let quiet = |e: &Option<Box<TcpEndpoint>>| e.as_deref().is_none_or(|e| e.next_timer().is_none());
        if f.eps[0].is_none() || !quiet(&f.eps[0]) || !quiet(&f.eps[1]) {
            return;
        }
        f.keep_counters_only();
        self.retired_flows += 1;
    }

    /// The application on `side` of `flow` writes `bytes` more (0: none) and, with `close`,
    /// closes; what its endpoint sends goes out at once.
    fn app_write(&mut self, flow: FlowId, side: usize, bytes: u64, close: bool) {
        let now = self.now;
        let Some(ep) = self.flows[flow.0 as usize].eps[side].as_deref_mut() else {
            return;
        };
        let mut out = std::mem::take(&mut self.out);
        if bytes > 0 {
            ep.send(now, bytes, &mut out);
        }
        if close {
            ep.close(now, &mut out);
        }
        self.out = out;
        self.flush_tcp(flow, side);
    }

    fn tcp_event(&mut self, flow: FlowId, side: usize, e: TcpEvent) {
        let now = self.now;
        let f = &mut self.flows[flow.0 as usize];
        match (f.spec.kind, side, e) {
            (FlowKind::Bulk, 1, TcpEvent::Delivered { total }) => {
                f.result.delivered = total;
                if total >= f.spec.bytes && f.result.end.is_none() {
                    f.result.end = Some(now);
                }
            }
            (
                FlowKind::RequestResponse {
                    request_bytes,
                    response_bytes,
                },
                1,
                TcpEvent::Delivered { total },
            ) if total >= request_bytes && f.result.delivered == 0 => {
                f.result.delivered = total;
                self.app_write(flow, 1, response_bytes, true);
            }
            (FlowKind::RequestResponse { response_bytes, .. }, 0, TcpEvent::Delivered { total })
                if total >= response_bytes && f.result.end.is_none() =>
            {
                f.result.end = Some(now);
                self.app_write(flow, 0, 0, true);
            }
            (
                FlowKind::Transactions {
                    request_bytes,
                    response_bytes,
                },
                1,
                TcpEvent::Delivered { total },
            ) => {
                // The server answers every whole request it has.
                let due = total / request_bytes;
                if due > f.udp_sent {
                    let n = due - f.udp_sent;
                    f.udp_sent = due;
                    self.app_write(flow, 1, n * response_bytes, false);
                }
            }
            (
                FlowKind::Transactions {
                    request_bytes,
                    response_bytes,
                },
                0,
                TcpEvent::Delivered { total },
            ) if total / response_bytes > f.result.delivered / (request_bytes + response_bytes) => {
                // A whole response: the transaction is done, the next request goes now.
                f.result.delay_sum += now - f.udp_next;
                f.result.delivered = total / response_bytes * (request_bytes + response_bytes);
                f.udp_next = now;
                self.app_write(flow, 0, request_bytes, false);
            }
            (_, _, TcpEvent::Failed(reason)) => {
                if let Some(p) = &mut self.part {
                    p.note_failure(flow, (now, self.events.popped_seq()));
                }
                f.result.failed = Some(failure_name(reason));
                f.passive_failed_last = side == 1;
                if side == 0 {
                    f.client_failed = Some(reason);
                }
            }
            _ => {}
        }
    }

    fn flow_ids(&self, flow: FlowId, side: usize) -> FlowIds {
        let s = &self.flows[flow.0 as usize].spec;
        let (cport, sport) = ports_of(s);
        if side == 0 {
            FlowIds {
                flow,
                local: s.src,
                remote: s.dst,
                local_port: cport,
                remote_port: sport,
            }
        } else {
            FlowIds {
                flow,
                local: s.dst,
                remote: s.src,
                local_port: sport,
                remote_port: cport,
            }
        }
    }

    fn flow_start(&mut self, flow: FlowId) {
        let now = self.now;
        let kind = self.flows[flow.0 as usize].spec.kind;
        match kind {
            FlowKind::Bulk | FlowKind::RequestResponse { .. } | FlowKind::Transactions { .. } => {
                self.flows[flow.0 as usize].udp_next = now;
                let ids = self.flow_ids(flow, 0);
                let mut out = std::mem::take(&mut self.out);
                let mut ep = TcpEndpoint::connect(self.tcp_cfg, ids, now, &mut out);
                let f = &self.flows[flow.0 as usize];
                let first = match f.spec.kind {
                    FlowKind::RequestResponse { request_bytes, .. } | FlowKind::Transactions { request_bytes, .. } => {
                        request_bytes
                    }
                    _ => f.spec.bytes,
                };
                ep.send(now, first, &mut out);
                if matches!(f.spec.kind, FlowKind::Bulk) {
                    ep.close(now, &mut out);
                }
                self.flows[flow.0 as usize].eps[0] = Some(Box::new(ep));
                self.out = out;
                self.flush_tcp(flow, 0);
            }
            FlowKind::UdpCbr { .. } | FlowKind::UdpOnOff { .. } | FlowKind::UdpBurst { .. } => {
                self.flows[flow.0 as usize].udp_next = now;
                self.udp_send(flow);
            }
            FlowKind::UdpPoisson { .. } => self.poisson_start(flow),
        }
    }

    /// A [`FlowKind::UdpPoisson`] source starts: its first datagram is due one gap later (none
    /// if that is past its end, when the source is done at once).
    fn poisson_start(&mut self, flow: FlowId) {
        let now = self.now;
        let seed = self.seed;
        let f = &mut self.flows[flow.0 as usize];
        let FlowKind::UdpPoisson {
            rate_bps,
            min_bytes,
            max_bytes,
            duration,
            ..
        } = f.spec.kind
        else {
            return;
        };
        let mean = crate::workload::poisson_interval(rate_bps, min_bytes, max_bytes);
        let first = now.saturating_add(poisson_gap(seed, flow, 0, mean));
        if first >= f.spec.start.saturating_add(duration) {
            f.result.end = Some(now);
            return;
        }
        f.udp_next = first;
        self.push_event(first, Event::UdpSend { flow });
    }

    fn udp_send(&mut self, flow: FlowId) {
        let now = self.now;
        let f = &mut self.flows[flow.0 as usize];
        let start = f.spec.start;
        let (rate, size, next, done) = match f.spec.kind {
            FlowKind::UdpCbr {
                rate_bps,
                packet_bytes,
                duration,
                jitter_permille,
            } => {
                let mut gap = tx_time(u64::from(packet_bytes), rate_bps);
                if jitter_permille > 0 {
                    gap = jittered(gap, jitter_permille, self.seed, flow, f.udp_sent);
                }
                (rate_bps, packet_bytes, now + gap, now + gap >= start + duration)
            }
            FlowKind::UdpOnOff {
                rate_bps,
                packet_bytes,
                on,
                off,
                duration,
            } => {
                let gap = tx_time(u64::from(packet_bytes), rate_bps);
                let period = on + off;
                let mut next = now + gap;
                if period > 0 && (next - start) % period >= on {
                    next = start + ((next - start) / period + 1) * period;
                }
                (rate_bps, packet_bytes, next, next >= start + duration)
            }
            FlowKind::UdpBurst {
                packets,
                packet_bytes,
                rate_bps,
            } => {
                let gap = tx_time(u64::from(packet_bytes), rate_bps);
                (rate_bps, packet_bytes, now + gap, f.udp_sent + 1 >= packets)
            }
            FlowKind::UdpPoisson {
                rate_bps,
                min_bytes,
                max_bytes,
                duration,
                packets,
            } => {
                let (size, gap) = poisson_datagram(self.seed, flow, f.udp_sent, rate_bps, min_bytes, max_bytes);
                let next = now.saturating_add(gap);
                let last = packets > 0 && f.udp_sent + 1 >= u64::from(packets);
                (rate_bps, size, next, last || next >= start.saturating_add(duration))
            }
            _ => return,
        };
        let _ = rate;
        let (cport, sport) = ports_of(&f.spec);
        let payload = size.saturating_sub(L2_L3_HEADER + UDP_HEADER);
        let p = Packet {
            created: now,
            flow,
            src: f.spec.src,
            dst: f.spec.dst,
            seq: f.udp_sent as u32,
            size: size.max(L2_L3_HEADER + UDP_HEADER),
            payload,
            src_port: cport,
            dst_port: sport,
            proto: Proto::Udp,
            ..Packet::default()
        };
        f.udp_sent += 1;
        let src = f.spec.src;
        if done {
            f.result.end = Some(now);
        } else {
            f.udp_next = next;
            self.push_event(next, Event::UdpSend { flow });
        }
        self.host_send(src, p);
    }

    fn flow_timer(&mut self, flow: FlowId, side: u8) {
        let s = usize::from(side);
        let now = self.now;
        let f = &mut self.flows[flow.0 as usize];
        if f.timer_at[s] != now {
            return; // superseded by an earlier or later deadline
        }
        f.timer_at[s] = Time::MAX;
        if let Some(ep) = f.eps[s].as_deref_mut() {
            let mut out = std::mem::take(&mut self.out);
            ep.on_timer(now, &mut out);
            self.out = out;
            self.flush_tcp(flow, s);
        }
    }

    fn host_receive(&mut self, host: NodeId, p: Packet) {
        let Some(f) = self.flows.get_mut(p.flow.0 as usize) else {
            return;
        };
        if p.dst != host {
            return; // misrouted: not ours
        }
        let now = self.now;
        match p.proto {
            Proto::Udp => {
                f.result.delivered += u64::from(p.payload);
                f.result.rx_packets += 1;
                f.result.delay_sum += now.saturating_sub(p.created);
                if !self.delivery_logs.is_empty() {
                    let d = UdpDelivery {
                        seq: p.seq,
                        sent: p.created,
                        arrived: now,
                    };
                    self.log_delivery(p.flow, d);
                }
            }
            Proto::Tcp => self.host_receive_tcp(host, p, false),
        }
    }

    /// A TCP segment reaches its host. A connection request that the listening socket takes
    /// ([`TcpEndpoint::accept`], [`TcpEndpoint::listener_takes`]) is taken at once, or in the
    /// like-for-like mode in an [`Event::Fork`] of its own at the same time (`forked` when
    /// handling that event), as ns-3 forks its socket.
    fn host_receive_tcp(&mut self, host: NodeId, p: Packet, forked: bool) {
        let now = self.now;
        let f = &mut self.flows[p.flow.0 as usize];
        let side = if host == f.spec.dst { 1 } else { 0 };
        if p.payload > 0 {
            f.result.rx_packets += 1;
        }
        let request = side == 1
            && match f.eps[1].as_deref() {
                Some(ep) => ep.listener_takes(&p),
                None => p.flags.contains(tandem_wire::tcp::Flags::SYN),
            };
        if request && !forked && self.tcp_cfg.flavor == TcpFlavor::Ns3 {
            let pkt = self.pool.insert(p);
            self.push_event(now, Event::Fork { node: host, pkt });
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        match f.eps[side].as_deref_mut() {
            Some(ep) if request => {
                // The connection request of a client that still resends its SYN, after the
                // passive side gave up: the listener opens a new one.
                let ep = ep.reaccept(&p, now, &mut out);
                f.eps[1] = Some(Box::new(ep));
                if f.passive_failed_last {
                    // That failure no longer stands; the active side's, if any, does.
                    f.passive_failed_last = false;
                    f.result.failed = f.client_failed.map(failure_name);
                    if let (None, Some(part)) = (f.client_failed, &mut self.part) {
                        part.forget_failure(p.flow);
                    }
                }
            }
            Some(ep) => ep.on_packet(now, &p, &mut out),
            None if request => {
                let ids = self.flow_ids(p.flow, 1);
                let mut ep = TcpEndpoint::accept(self.tcp_cfg, ids, &p, now, &mut out);
                let bulk = matches!(self.flows[p.flow.0 as usize].spec.kind, FlowKind::Bulk);
                if self.tcp_cfg.flavor == TcpFlavor::Ns3 && bulk {
                    // ns-3's receiving application (`PacketSink`) closes when the sender does.
                    ep.close_on_peer_close();
                }
                self.flows[p.flow.0 as usize].eps[1] = Some(Box::new(ep));
            }
            None => {}
        }
        self.out = out;
        self.flush_tcp(p.flow, side);
    }
}

/// A failure's name in the flow results (`flows.csv`'s `failed`).
fn failure_name(reason: crate::tcp::FailReason) -> &'static str {
    match reason {
        crate::tcp::FailReason::SynRetriesExhausted => "syn-retries",
        crate::tcp::FailReason::DataRetriesExhausted => "data-retries",
        crate::tcp::FailReason::Reset => "reset",
    }
}

/// Whether a pausable port waits out a pause now: if so, it is busy until the pause ends (a
/// `TxDone` then) when something waits to go. Off the hot path.
#[cold]
#[inline(never)]
fn pause_holds(
    pauses: &mut FxHashMap<(NodeId, u16), PauseState>,
    part: &mut Option<Box<PartState>>,
    events: &mut EventQueue,
    p: &mut Port,
    node: NodeId,
    port: u16,
    now: Time,
) -> bool {
    let until = pauses.get(&(node, port)).map_or(0, |s| s.until);
    if until <= now {
        return false;
    }
    if p.queues.packets() > 0 {
        p.busy = true;
        push_in(part, events, until, Event::TxDone { node, port });
    }
    true
}

/// Records when a pausable port's transmission ends (a PAUSE heard meanwhile counts from then).
#[cold]
#[inline(never)]
fn note_tx_end(pauses: &mut FxHashMap<(NodeId, u16), PauseState>, node: NodeId, port: u16, end: Time) {
    pauses.entry((node, port)).or_default().tx_end = end;
}

/// `gap` times a draw from `1 - j` to `1 + j` (j = `permille` / 1000), a function of the run's
/// seed, the flow and the datagram's number only (SplitMix64's finaliser): no generator state,
/// so a flow's gaps never depend on other flows.
fn jittered(gap: Time, permille: u16, seed: u64, flow: FlowId, n: u64) -> Time {
    let h = crate::topology::mix64(seed ^ (u64::from(flow.0) << 40) ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    // A uniform fraction in [0, 1) from the top 53 bits.
    let u = (h >> 11) as f64 / (1u64 << 53) as f64;
    let j = f64::from(permille) / 1000.0;
    (gap as f64 * (1.0 - j + 2.0 * j * u)).round().max(1.0) as Time
}

/// Key of a [`FlowKind::UdpPoisson`] datagram's gap draw (SHA-512's first initial hash word:
/// any constant unlike [`POISSON_SIZE`] would do).
const POISSON_GAP: u64 = 0x6A09_E667_F3BC_C908;
/// Key of a [`FlowKind::UdpPoisson`] datagram's size draw (SHA-512's second initial word).
const POISSON_SIZE: u64 = 0xBB67_AE85_84CA_A73B;

/// A hash of the run's seed, the flow, the datagram's number and the draw's key (`stream`):
/// SplitMix64's finaliser of the first three, then again with the key xor-ed in, so that the
/// gap and the size of one datagram are independent.
fn poisson_hash(seed: u64, flow: FlowId, n: u64, stream: u64) -> u64 {
    let mix = crate::topology::mix64;
    mix(mix(seed ^ (u64::from(flow.0) << 40) ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15)) ^ stream)
}

/// The gap before datagram `n` of a Poisson source of mean gap `mean` (datagram 0's counts
/// from the flow's start): `-ln(1 - u) * mean`, `u` uniform in [0, 1), rounded, at least 1 ps.
fn poisson_gap(seed: u64, flow: FlowId, n: u64, mean: Time) -> Time {
    // A uniform fraction in [0, 1) from the top 53 bits.
    let u = (poisson_hash(seed, flow, n, POISSON_GAP) >> 11) as f64 / (1u64 << 53) as f64;
    (-(1.0 - u).ln() * mean as f64).round().max(1.0) as Time
}

/// The size of datagram `n` of a Poisson source: uniform in `min..=max` (multiply-shift of
/// 64 hashed bits: a bias below 2^-32).
fn poisson_size(seed: u64, flow: FlowId, n: u64, min: u32, max: u32) -> u32 {
    let span = u128::from(max.saturating_sub(min)) + 1;
    min + ((u128::from(poisson_hash(seed, flow, n, POISSON_SIZE)) * span) >> 64) as u32
}

/// Datagram `n` of a [`FlowKind::UdpPoisson`] source: its size and the gap after it (before
/// datagram `n + 1`). Kept out of [`Sim::udp_send`] so the other kinds' path stays as it was.
#[inline(never)]
fn poisson_datagram(seed: u64, flow: FlowId, n: u64, rate_bps: u64, min: u32, max: u32) -> (u32, Time) {
    let mean = crate::workload::poisson_interval(rate_bps, min, max);
    (
        poisson_size(seed, flow, n, min, max),
        poisson_gap(seed, flow, n + 1, mean),
    )
}

/// Client and server ports of a flow: the client's is derived from the flow id (so each flow's
/// 5-tuple is unique), the server's from the kind.
fn ports_of(s: &FlowSpec) -> (u16, u16) {
    let client = 10_000 + (s.id.0 % 50_000) as u16;
    let server = match s.kind {
        FlowKind::Bulk => 5001,
        FlowKind::RequestResponse { .. } => 80,
        FlowKind::Transactions { .. } => 12865,
        _ => 9000,
    };
    (client, server)
}

/// The seed of port `port` of `node`'s random numbers for a run seeded `seed`: the scenario's
/// seed and the port's place mixed (SplitMix64's finaliser), so that every port has a stream of
/// its own that no other port's draws move.
pub fn port_seed(seed: u64, node: NodeId, port: u16) -> u64 {
    crate::topology::mix64(seed ^ (u64::from(node.0) << 16 | u64::from(port)).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// The ns-3 random stream of `node`'s `port` in the like-for-like mode: the number
/// `bench/ns3/scenario.cc` hands that port's `RedQueueDisc::AssignStreams`.
pub fn ns3_red_stream(node: NodeId, port: u16) -> u64 {
    u64::from(node.0) << 16 | u64::from(port)
}

/// Fresh egress queues of configuration `cfg` for `node`'s `port` on a link of `rate_bps`.
/// RED draws from the port's own stream: in the like-for-like mode (`like_for_like`) ns-3's
/// generator with the scenario seed, run 1 and [`ns3_red_stream`], as the ns-3 program sets
/// them, so both draw the same numbers (a seed ns-3 cannot take falls back to ours).
fn port_queues(
    cfg: QueueConfig,
    rate_bps: u64,
    seed: u64,
    node: NodeId,
    port: u16,
    like_for_like: bool,
) -> EgressQueues {
    let red = matches!(cfg.marking, Marking::Red { .. });
    let q = EgressQueues::new(cfg).with_link_rate(rate_bps);
    match (red && like_for_like)
        .then(|| Mrg32k3a::ns3_assigned(seed, ns3_red_stream(node, port), 1).ok())
        .flatten()
    {
        Some(rng) => q.with_ns3_stream(rng),
        None => q.with_seed(port_seed(seed, node, port)),
    }
}

#[cfg(test)]
mod port_seed_tests {
    use super::*;

    #[test]
    fn every_port_has_a_stream_of_its_own() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in [0, 1, 7] {
            for node in 0..64 {
                for port in 0..16 {
                    assert!(seen.insert(port_seed(seed, NodeId(node), port)), "{seed} {node} {port}");
                }
            }
        }
        // A function of its arguments only: a run draws the same numbers however it is split.
        assert_eq!(port_seed(1, NodeId(3), 2), port_seed(1, NodeId(3), 2));
    }
}

#[cfg(test)]
mod poisson_tests {
    use super::*;
    use crate::time::US;

    const N: u64 = 200_000;

    /// Sizes stay in range, both ends occur, and the mean is the range's middle (the mean of
    /// 200,000 draws of sd 414 has an sd of 0.93 bytes: 0.5% is about 4 of them).
    #[test]
    fn sizes_are_uniform_over_the_range() {
        let (mut lo, mut hi, mut sum) = (0, 0, 0u64);
        for n in 0..N {
            let s = poisson_size(7, FlowId(3), n, 64, 1500);
            assert!((64..=1500).contains(&s), "{s}");
            lo += u64::from(s == 64);
            hi += u64::from(s == 1500);
            sum += u64::from(s);
        }
        // 200,000 / 1437 = 139 expected at each end.
        assert!(lo > 80 && hi > 80, "{lo} {hi}");
        let mean = sum as f64 / N as f64;
        assert!((mean - 782.0).abs() < 0.005 * 782.0, "{mean}");
        assert!((0..1000).all(|n| poisson_size(7, FlowId(3), n, 1000, 1000) == 1000));
    }

    /// Gaps are exponential of the given mean: the sample mean within 1% (its sd is 0.22% in
    /// 200,000 draws), and a fraction 1/e of them above the mean (within 0.005: its sd is
    /// 0.0011); never 0; independent of the sizes (correlation below 0.01, its sd 0.0022).
    #[test]
    fn gaps_are_exponential_and_independent_of_sizes() {
        let mean = 6_256 * US / 1000;
        let (mut sum, mut above, mut min) = (0u64, 0u64, Time::MAX);
        let (mut sxy, mut sx, mut sy, mut sxx, mut syy) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for n in 0..N {
            let g = poisson_gap(11, FlowId(5), n, mean);
            let s = f64::from(poisson_size(11, FlowId(5), n, 64, 1500));
            sum += g;
            above += u64::from(g > mean);
            min = min.min(g);
            let x = g as f64;
            (sxy, sx, sy, sxx, syy) = (sxy + x * s, sx + x, sy + s, sxx + x * x, syy + s * s);
        }
        let m = sum as f64 / N as f64;
        assert!((m / mean as f64 - 1.0).abs() < 0.01, "{m} vs {mean}");
        let frac = above as f64 / N as f64;
        assert!((frac - (-1.0f64).exp()).abs() < 0.005, "{frac}");
        assert!(min >= 1);
        let n = N as f64;
        let r = (n * sxy - sx * sy) / ((n * sxx - sx * sx).sqrt() * (n * syy - sy * sy).sqrt());
        assert!(r.abs() < 0.01, "{r}");
        // A mean below a picosecond still gives gaps of at least 1 ps.
        assert!((0..1000).all(|n| poisson_gap(1, FlowId(0), n, 0) == 1));
    }

    /// A function of the seed, the flow and the datagram's number only.
    #[test]
    fn draws_depend_on_seed_flow_and_number_only() {
        let draws = |seed, flow| -> Vec<(Time, u32)> {
            (0..64)
                .map(|n| {
                    (
                        poisson_gap(seed, FlowId(flow), n, US),
                        poisson_size(seed, FlowId(flow), n, 64, 1500),
                    )
                })
                .collect()
        };
        assert_eq!(draws(1, 0), draws(1, 0));
        assert_ne!(draws(1, 0), draws(2, 0));
        assert_ne!(draws(1, 0), draws(1, 1));
        assert_eq!(
            poisson_datagram(1, FlowId(0), 9, 8_000_000, 64, 1500),
            (draws(1, 0)[9].1, poisson_gap(1, FlowId(0), 10, 782 * US))
        );
    }
}
