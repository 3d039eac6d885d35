//! The testbed's network, on the simulator's kernel: Axon nodes ([`AxonNode`]: a [`Device`] and
//! its [`ControlPlane`], run by [`AxonSwitch`], the same adapter a scenario's `[[system]]` kind
//! `"axon"` uses) and [`Host`]s that speak frames themselves ([`FrameHost`]), each a node of
//! `tandem-sim`'s kernel, joined by its links. The kernel serialises and propagates every frame
//! (the line rate is the sending port's, 24 bytes of preamble, FCS and gap besides the frame),
//! orders events by time with ties in the order they were queued, and fails links; there is no
//! event loop here and no randomness, so a run gives the same result every time.
//!
//! An Axon takes a frame when its first byte arrives (cut-through); a host when its last byte
//! does. A failed link loses every frame on it or offered to it (the kernel's `link-down`
//! drops). Every device port that is not wired to another Axon leads to a host slot: empty
//! until [`Testbed::add_host`] plugs a host in, and what reaches an empty slot is lost
//! ([`TestbedCounters::lost_unwired`]). The network is built on the kernel the first time it
//! is asked to run or to take a host; Axons and Axon links are added before that.

use super::host::{Host, HostId};
use crate::config::DeviceConfig;
use crate::control::{
    ControlAction, ControlConfig, ControlConfigError, ControlInput, ControlPlane, Endpoint, Topology,
};
use crate::dataplane::{Device, Event};
use crate::model::placed::{frame_packet, AxonSwitch, LinkNotice, NodeInput};
use crate::node::{AxonNode, TxDone};
use crate::port::PortKind;
use crate::ConfigError;
use crate::RouteError;
use core::fmt;
use std::collections::BTreeMap;
use tandem_sim::config::{
    BufferConfig, Ecmp, Forwarding, LinkConfig, Marking, QueueConfig, SwitchConfig, TcpConfig, ETHERNET_HEADER,
};
use tandem_sim::packet::{NodeId, PacketId};
use tandem_sim::queue::DropReason;
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::switch::{SwitchCtx, SwitchModel, Verdict};
use tandem_sim::time::Time;
use tandem_sim::topology::{LinkSpec, NodeKind, NodeSpec, Topology as KernelTopology};
use tandem_wire::Ipv4Addr;

/// Something the testbed cannot build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestbedError {
    /// The device configuration is invalid.
    Device(ConfigError),
    /// The control plane configuration is invalid.
    Control(ControlConfigError),
    /// The device id is already used.
    DuplicateAxon(u64),
    /// No such Axon, or no such port on it.
    NoSuchPort(Endpoint),
    /// The port is already wired.
    PortInUse(Endpoint),
    /// The data plane refused a port setting.
    Route(RouteError),
    /// Axons and Axon links are added before the network first runs or takes a host.
    Started,
}

impl fmt::Display for TestbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TestbedError::Device(e) => write!(f, "device: {e}"),
            TestbedError::Control(e) => write!(f, "control plane: {e}"),
            TestbedError::DuplicateAxon(d) => write!(f, "axon {d} added twice"),
            TestbedError::NoSuchPort(e) => write!(f, "no port {}.{}", e.device, e.port),
            TestbedError::PortInUse(e) => write!(f, "port {}.{} is already wired", e.device, e.port),
            TestbedError::Route(e) => write!(f, "data plane: {e:?}"),
            TestbedError::Started => write!(f, "the network is running: Axons and their links come first"),
        }
    }
}

impl std::error::Error for TestbedError {}

/// How the network learns of a failed link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureNotice {
    /// Both devices see the link go down and every control plane is told
    /// ([`ControlInput::LinkDown`]) at once.
    Everyone,
    /// Nobody is told: frames on the link are just lost (the control planes find out by probe
    /// timeout, when discovery is on).
    Nobody,
}

/// One Axon: its data plane and control plane, wired by the node every driver uses.
pub type Node = AxonNode;

/// Counts the testbed keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TestbedCounters {
    /// Events the kernel handled.
    pub events: u64,
    /// Frames lost on failed links.
    pub lost_on_links: u64,
    /// Frames sent to a port with no host and no Axon behind it.
    pub lost_unwired: u64,
}

/// What a host is told to do at a time.
#[derive(Debug, Clone)]
enum HostInput {
    /// Just plugged in: start DHCP, or announce itself.
    Start,
    /// Send these bytes.
    Raw(Vec<u8>),
    /// Send data frame `seq` to the address (resolving it first if it must).
    Send(Ipv4Addr, u64),
}

/// A host slot on an Axon port, on the kernel: a one-port node whose [`Host`] (once plugged in)
/// takes the frames that reach it and sends what it answers, as packets carrying the frames.
#[derive(Debug, Clone)]
pub struct FrameHost {
    me: NodeId,
    host: Option<Host>,
    inputs: BTreeMap<u64, HostInput>,
    next_input: u64,
    lost_unplugged: u64,
}

impl FrameHost {
    fn new(me: NodeId) -> FrameHost {
        FrameHost {
            me,
            host: None,
            inputs: BTreeMap::new(),
            next_input: 0,
            lost_unplugged: 0,
        }
    }

    /// The host plugged in here, if any.
    pub fn host(&self) -> Option<&Host> {
        self.host.as_ref()
    }

    fn transmit(&self, cx: &mut SwitchCtx<'_>, frame: Vec<u8>) {
        let pkt = frame_packet(cx, self.me, frame);
        cx.send(0, pkt);
    }
}

impl SwitchModel for FrameHost {
    fn on_ingress(&mut self, cx: &mut SwitchCtx<'_>, _in_port: u16, pkt: PacketId) -> Verdict {
        let frame = cx.pool.take_frame(pkt).unwrap_or_default();
        cx.free(pkt);
        let Some(host) = self.host.as_mut() else {
            self.lost_unplugged += 1;
            return Verdict::Consumed;
        };
        for f in host.receive(cx.now, &frame) {
            self.transmit(cx, f);
        }
        Verdict::Consumed
    }

    fn on_timer(&mut self, cx: &mut SwitchCtx<'_>, token: u64) {
        let (Some(input), Some(host)) = (self.inputs.remove(&token), self.host.as_mut()) else {
            return;
        };
        let frame = match input {
            HostInput::Start if host.dhcp => host.dhcp_discover(),
            HostInput::Start => host.announce.then(|| host.gratuitous_arp()),
            HostInput::Raw(f) => Some(f),
            HostInput::Send(ip, seq) => host.send(cx.now, ip, seq),
        };
        if let Some(f) = frame {
            self.transmit(cx, f);
        }
    }
}

/// The network once it is on the kernel.
struct Run {
    sim: Sim,
    /// The kernel node of each Axon, by device id.
    axons: BTreeMap<u64, NodeId>,
    /// The host slot on each port that is not an Axon link.
    slots: BTreeMap<Endpoint, NodeId>,
}

/// A network of Axons and hosts on the simulator's kernel.
#[derive(Default)]
pub struct Testbed {
    /// The Axons until the network is built (then they live in the kernel's nodes).
    pending: BTreeMap<u64, Node>,
    /// Ports per Axon.
    ports: BTreeMap<u64, usize>,
    /// Axon links, both ends: the far end and the propagation delay.
    wires: BTreeMap<Endpoint, (Endpoint, u64)>,
    /// The slot of each host.
    hosts: Vec<Endpoint>,
    run: Option<Run>,
    /// The time the caller ran to (the kernel stops at its last event when nothing is left).
    now: u64,
    timers_off: bool,
}

impl fmt::Debug for Testbed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Testbed")
            .field("axons", &self.ports.len())
            .field("hosts", &self.hosts.len())
            .field("now", &self.now)
            .finish()
    }
}

impl Testbed {
    /// An empty network at time 0.
    pub fn new() -> Testbed {
        Testbed::default()
    }

    /// Adds an Axon; its ports lead to empty host slots unless [`Testbed::connect`] wires them
    /// to another Axon (before the network runs).
    pub fn add_axon(&mut self, dev: DeviceConfig, cp: ControlConfig, topo: Topology) -> Result<(), TestbedError> {
        let id = dev.device_id;
        if self.ports.contains_key(&id) {
            return Err(TestbedError::DuplicateAxon(id));
        }
        let dev = Device::new(dev).map_err(TestbedError::Device)?;
        let cp = ControlPlane::new(cp, topo).map_err(TestbedError::Control)?;
        if self.run.is_some() {
            return Err(TestbedError::Started);
        }
        let mut node = AxonNode::new(dev, cp, TxDone::Driver);
        node.set_own_wakeups(!self.timers_off);
        self.ports.insert(id, node.device().port_count());
        self.pending.insert(id, node);
        Ok(())
    }

    fn check_port(&self, at: Endpoint) -> Result<(), TestbedError> {
        match self.ports.get(&at.device) {
            Some(&n) if usize::from(at.port) < n => {}
            _ => return Err(TestbedError::NoSuchPort(at)),
        }
        if self.wires.contains_key(&at) {
            return Err(TestbedError::PortInUse(at));
        }
        Ok(())
    }

    /// Wires two Axon ports with a link of `delay_ps` propagation delay (both become Axon
    /// ports; the link's rate is the first port's).
    pub fn connect(&mut self, a: Endpoint, b: Endpoint, delay_ps: u64) -> Result<(), TestbedError> {
        if a == b {
            return Err(TestbedError::PortInUse(a));
        }
        self.check_port(a)?;
        self.check_port(b)?;
        if self.run.is_some() {
            return Err(TestbedError::Started);
        }
        for (x, y) in [(a, b), (b, a)] {
            let node = self.pending.get_mut(&x.device).ok_or(TestbedError::NoSuchPort(x))?;
            node.set_port_kind(x.port, PortKind::Axon)
                .map_err(TestbedError::Route)?;
            self.wires.insert(x, (y, delay_ps));
        }
        Ok(())
    }

    /// Puts the network on the kernel (once): a node per Axon and per host slot.
    fn run(&mut self) -> &mut Run {
        if self.run.is_none() {
            let run = self.build();
            self.run = Some(run);
        }
        self.run.as_mut().expect("built above")
    }

    fn build(&mut self) -> Run {
        let mut nodes = Vec::new();
        let mut links = Vec::new();
        let mut numbers = Vec::new();
        let mut axons = BTreeMap::new();
        for &d in self.pending.keys() {
            axons.insert(d, NodeId(nodes.len() as u32));
            nodes.push(NodeSpec {
                name: format!("axon{d}"),
                kind: NodeKind::Switch,
            });
        }
        let rate = |pending: &BTreeMap<u64, Node>, e: Endpoint| {
            pending[&e.device].device().config().ports[usize::from(e.port)].line_rate_bps
        };
        let link = |rate_bps, delay| LinkConfig {
            rate_bps,
            delay,
            framing_overhead: 24,
            l2_header: ETHERNET_HEADER,
        };
        for (&a, &(b, delay)) in &self.wires {
            if a < b {
                links.push(LinkSpec {
                    a: axons[&a.device],
                    b: axons[&b.device],
                    cfg: link(rate(&self.pending, a), delay),
                });
                numbers.push((u16::from(a.port), u16::from(b.port)));
            }
        }
        let mut slots = BTreeMap::new();
        for (&d, &n) in &self.ports {
            for p in 0..n {
                let at = Endpoint {
                    device: d,
                    port: p as u8,
                };
                if self.wires.contains_key(&at) {
                    continue;
                }
                let id = NodeId(nodes.len() as u32);
                nodes.push(NodeSpec {
                    name: format!("host{d}.{p}"),
                    kind: NodeKind::Switch,
                });
                links.push(LinkSpec {
                    a: axons[&d],
                    b: id,
                    cfg: link(rate(&self.pending, at), 0),
                });
                numbers.push((p as u16, 0));
                slots.insert(at, id);
            }
        }
        let topo =
            KernelTopology::with_port_numbers(nodes, links, &numbers).expect("every port numbered once, by its device");
        // One unbounded queue a port: an Axon hands its port one frame at a time (its own
        // output buffers are its queues), and a host's frames wait for its link.
        let queue = QueueConfig {
            classes: 1,
            limit_packets: 0,
            class_limit_packets: [None; 8],
            limit_bytes: 0,
            marking: Marking::None,
        };
        let switch = SwitchConfig {
            queue,
            buffer: BufferConfig::Dedicated,
            forwarding: Forwarding::CutThrough { header_bytes: 0 },
            pipeline_latency: 0,
            ecmp: Ecmp::Flow,
        };
        let mut sim = Sim::new(
            &topo,
            switch,
            queue,
            TcpConfig::default(),
            Vec::new(),
            0,
            SimOptions::default(),
        );
        for (d, node) in std::mem::take(&mut self.pending) {
            let id = axons[&d];
            let frame_peers = (0..self.ports[&d])
                .map(|p| {
                    !self.wires.contains_key(&Endpoint {
                        device: d,
                        port: p as u8,
                    })
                })
                .collect();
            let mut m = AxonSwitch::on_frames(node, id, frame_peers);
            m.keep_control_log();
            sim.attach_model(id, Box::new(m));
        }
        for &id in slots.values() {
            sim.node_mut(id).forwarding = Forwarding::StoreAndForward;
            sim.attach_model(id, Box::new(FrameHost::new(id)));
        }
        Run { sim, axons, slots }
    }

    /// Plugs a host into an Axon port (it becomes a host port); now, the host starts DHCP if
    /// [`Host::dhcp`] is set, else announces itself with a gratuitous ARP if [`Host::announce`]
    /// is. Its link takes the host's rate from the host and its delay both ways.
    pub fn add_host(&mut self, host: Host) -> Result<HostId, TestbedError> {
        let at = host.at;
        self.check_port(at)?;
        if self.hosts.contains(&at) {
            return Err(TestbedError::PortInUse(at));
        }
        let now = self.now;
        let run = self.run();
        let (axon, slot) = (run.axons[&at.device], run.slots[&at]);
        let sim = &mut run.sim;
        sim.model_as_mut::<AxonSwitch>(axon)
            .expect("an Axon")
            .node_mut()
            .set_port_kind(at.port, PortKind::Host)
            .map_err(TestbedError::Route)?;
        sim.node_mut(axon).ports[usize::from(at.port)].link.delay = host.delay_ps;
        let l = &mut sim.node_mut(slot).ports[0].link;
        l.delay = host.delay_ps;
        l.rate_bps = host.rate_bps;
        let m = sim.model_as_mut::<FrameHost>(slot).expect("a host slot");
        m.host = Some(host);
        self.hosts.push(at);
        self.host_input(now, HostId(self.hosts.len() - 1), HostInput::Start);
        Ok(HostId(self.hosts.len() - 1))
    }

    /// Feeds every control plane a first [`ControlInput::Tick`] now (starts discovery).
    pub fn start(&mut self) {
        let ids: Vec<u64> = self.ports.keys().copied().collect();
        for d in ids {
            self.control_input_at(self.now, d, ControlInput::Tick);
        }
    }

    /// Whether the control planes' [`ControlAction::WakeAt`] requests become ticks (on by
    /// default). Off, they only go to the control log and the caller feeds ticks itself, so
    /// [`Testbed::run_until_idle`] stops when the network is quiet instead of running the clock
    /// to the next lease or route timeout.
    pub fn set_timers(&mut self, on: bool) {
        self.timers_off = !on;
        for n in self.pending.values_mut() {
            n.set_own_wakeups(on);
        }
        if let Some(run) = &mut self.run {
            for &id in run.axons.values() {
                if let Some(m) = run.sim.model_as_mut::<AxonSwitch>(id) {
                    m.node_mut().set_own_wakeups(on);
                }
            }
        }
    }

    /// The current time.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// The counters.
    pub fn counters(&self) -> TestbedCounters {
        let Some(run) = &self.run else {
            return TestbedCounters::default();
        };
        let lost_on_links = run
            .sim
            .nodes()
            .iter()
            .flat_map(|n| &n.ports)
            .flat_map(|p| &p.queues.stats.drops)
            .filter(|(r, _, _)| *r == DropReason::LinkDown)
            .map(|(_, n, _)| n)
            .sum();
        let lost_unwired = run
            .slots
            .values()
            .filter_map(|&id| run.sim.model_as::<FrameHost>(id))
            .map(|m| m.lost_unplugged)
            .sum();
        TestbedCounters {
            events: run.sim.events_processed(),
            lost_on_links,
            lost_unwired,
        }
    }

    /// An Axon.
    pub fn node(&self, device: u64) -> Option<&Node> {
        match &self.run {
            None => self.pending.get(&device),
            Some(run) => run
                .sim
                .model_as::<AxonSwitch>(*run.axons.get(&device)?)
                .map(AxonSwitch::node),
        }
    }

    /// The device ids of the Axons.
    pub fn devices(&self) -> impl Iterator<Item = u64> + '_ {
        self.ports.keys().copied()
    }

    fn slot(&self, id: HostId) -> Option<(&Run, NodeId)> {
        let run = self.run.as_ref()?;
        Some((run, *run.slots.get(self.hosts.get(id.0)?)?))
    }

    /// A host.
    pub fn host(&self, id: HostId) -> Option<&Host> {
        let (run, slot) = self.slot(id)?;
        run.sim.model_as::<FrameHost>(slot)?.host.as_ref()
    }

    /// A host, to change or to clear what it recorded.
    pub fn host_mut(&mut self, id: HostId) -> Option<&mut Host> {
        let at = *self.hosts.get(id.0)?;
        let run = self.run.as_mut()?;
        let slot = *run.slots.get(&at)?;
        run.sim.model_as_mut::<FrameHost>(slot)?.host.as_mut()
    }

    /// What the control planes did, with their asking for ticks when [`Testbed::set_timers`]
    /// turned the node's own timers off: (device, time handled, action), in time order (and
    /// by device at one time).
    pub fn control_log(&self) -> Vec<(u64, u64, ControlAction)> {
        let Some(run) = &self.run else { return Vec::new() };
        let mut log: Vec<(u64, u64, ControlAction)> = run
            .axons
            .iter()
            .filter_map(|(&d, &id)| Some((d, run.sim.model_as::<AxonSwitch>(id)?)))
            .flat_map(|(d, m)| m.control_log().iter().map(move |(t, a)| (d, *t, a.clone())))
            .collect();
        log.sort_by_key(|(d, t, _)| (*t, *d));
        log
    }

    /// Forgets the control log.
    pub fn clear_control_log(&mut self) {
        let Some(run) = &mut self.run else { return };
        for &id in run.axons.values() {
            if let Some(m) = run.sim.model_as_mut::<AxonSwitch>(id) {
                m.clear_control_log();
            }
        }
    }

    fn host_input(&mut self, at_ps: u64, from: HostId, input: HostInput) {
        let at = at_ps.max(self.now);
        let Some(&port) = self.hosts.get(from.0) else { return };
        let run = self.run();
        let slot = run.slots[&port];
        let Some(m) = run.sim.model_as_mut::<FrameHost>(slot) else {
            return;
        };
        let token = m.next_input;
        m.next_input += 1;
        m.inputs.insert(token, input);
        run.sim.wake_model_at(at, slot, token);
    }

    fn axon_input(&mut self, at_ps: u64, device: u64, input: NodeInput) {
        let at = at_ps.max(self.now);
        let run = self.run();
        if let Some(&id) = run.axons.get(&device) {
            AxonSwitch::input_at(&mut run.sim, id, at, input);
        }
    }

    /// Host `from` hands `frame` (any bytes) to its link at `at_ps`.
    pub fn transmit_at(&mut self, at_ps: u64, from: HostId, frame: Vec<u8>) {
        self.host_input(at_ps, from, HostInput::Raw(frame));
    }

    /// Feeds a device an event at `at_ps` (a link going down without the wire failing, ...).
    pub fn device_event_at(&mut self, at_ps: u64, device: u64, event: Event) {
        self.axon_input(at_ps, device, NodeInput::Device(event));
    }

    /// Host `from` sends data frame `seq` to `to_ip` at `at_ps` (ARPing first if it must).
    pub fn send_at(&mut self, at_ps: u64, from: HostId, to_ip: Ipv4Addr, seq: u64) {
        self.host_input(at_ps, from, HostInput::Send(to_ip, seq));
    }

    /// The link at `at` fails at `at_ps`, told as `notice` says (from now on, for every
    /// failure to come).
    pub fn fail_link_at(&mut self, at_ps: u64, at: Endpoint, notice: FailureNotice) {
        let when = at_ps.max(self.now);
        let notice = match notice {
            FailureNotice::Everyone => LinkNotice::Everyone,
            FailureNotice::Nobody => LinkNotice::None,
        };
        let run = self.run();
        let Some(&node) = run.axons.get(&at.device) else { return };
        for &id in run.axons.values() {
            if let Some(m) = run.sim.model_as_mut::<AxonSwitch>(id) {
                m.set_link_notice(notice);
            }
        }
        run.sim.schedule_link(when, node, u16::from(at.port), false);
    }

    /// Feeds a control plane an input at `at_ps`.
    pub fn control_input_at(&mut self, at_ps: u64, device: u64, input: ControlInput) {
        self.axon_input(at_ps, device, NodeInput::Control(input));
    }

    /// Runs every event due up to and including `t`, then sets the time to `t`; returns the
    /// events handled.
    pub fn run_until(&mut self, t: u64) -> u64 {
        let sim = &mut self.run().sim;
        let before = sim.events_processed();
        sim.run_until(t as Time);
        let n = sim.events_processed() - before;
        self.now = self.now.max(t);
        n
    }

    /// Runs until nothing is left to do or about `max_events` were handled; returns whether
    /// nothing is left (with discovery on there always is: probes are periodic).
    pub fn run_until_idle(&mut self, max_events: u64) -> bool {
        let sim = &mut self.run().sim;
        let start = sim.events_processed();
        let mut last = None;
        let idle = loop {
            let Some(t) = sim.next_event_at() else { break true };
            if sim.events_processed() - start >= max_events {
                break false;
            }
            sim.run_until(t);
            last = Some(t);
        };
        if let Some(t) = last {
            self.now = self.now.max(t);
        }
        idle
    }
}
