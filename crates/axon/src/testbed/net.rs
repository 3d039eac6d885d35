//! The testbed's network and event loop: Axon nodes ([`AxonNode`]: a [`Device`] and its
//! [`ControlPlane`], wired as live),
//! links between Axon ports and from host ports to [`Host`]s, each with its own propagation
//! delay (the line rate is the device port's, or the host's), and one queue of timed items.
//!
//! Time is integer picoseconds; the queue (`tandem-sim`'s event queue, over the places of the
//! items kept in a slab) is ordered by time, ties in the order items were queued, so a run is
//! the same every time. There is
//! no randomness. A frame on an Axon link reaches the far device when its first byte does
//! (cut-through); a frame to a host reaches it when its last byte does. A failed link loses
//! every frame that has not reached its far end.

use super::host::{Host, HostId};
use crate::config::DeviceConfig;
use crate::control::{
    ControlAction, ControlConfig, ControlConfigError, ControlInput, ControlPlane, Endpoint, Topology,
};
use crate::dataplane::{Device, Event};
use crate::node::{AxonNode, NodeOutput, TxDone};
use crate::port::PortKind;
use crate::timing::wire_time_ps;
use crate::ConfigError;
use crate::RouteError;
use core::fmt;
use std::collections::BTreeMap;
use tandem_sim::event::EventQueue;
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

/// What is at the far end of a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Peer {
    Axon(Endpoint),
    Host(HostId),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Wire {
    peer: Peer,
    delay_ps: u64,
    up: bool,
}

#[derive(Debug, Clone)]
enum Item {
    Dev(u64, Event),
    Cp(u64, ControlInput),
    Timer(u64, u64),
    HostRx(HostId, Vec<u8>),
    HostSend(HostId, Ipv4Addr, u64),
    HostRaw(HostId, Vec<u8>),
    Fail(Endpoint, FailureNotice),
}

/// Counts the testbed keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TestbedCounters {
    /// Items handled.
    pub events: u64,
    /// Frames lost on failed links.
    pub lost_on_links: u64,
    /// Frames sent to an unwired port.
    pub lost_unwired: u64,
}

/// A network of Axons and hosts and its event loop.
#[derive(Debug, Clone, Default)]
pub struct Testbed {
    nodes: BTreeMap<u64, Node>,
    wires: BTreeMap<Endpoint, Wire>,
    hosts: Vec<Host>,
    queue: EventQueue<u32>,
    /// The queued items, by place (`None`: free), and the free places.
    items: Vec<Option<Item>>,
    free_items: Vec<u32>,
    now: u64,
    counters: TestbedCounters,
    log: Vec<(u64, u64, ControlAction)>,
    timers_off: bool,
}

impl Testbed {
    /// An empty network at time 0.
    pub fn new() -> Testbed {
        Testbed::default()
    }

    /// Adds an Axon; its ports are unwired until [`Testbed::connect`] or [`Testbed::add_host`].
    pub fn add_axon(&mut self, dev: DeviceConfig, cp: ControlConfig, topo: Topology) -> Result<(), TestbedError> {
        let id = dev.device_id;
        if self.nodes.contains_key(&id) {
            return Err(TestbedError::DuplicateAxon(id));
        }
        let dev = Device::new(dev).map_err(TestbedError::Device)?;
        let cp = ControlPlane::new(cp, topo).map_err(TestbedError::Control)?;
        let mut node = AxonNode::new(dev, cp, TxDone::Driver);
        node.set_own_wakeups(!self.timers_off);
        self.nodes.insert(id, node);
        Ok(())
    }

    fn claim(&mut self, at: Endpoint, kind: PortKind) -> Result<(), TestbedError> {
        if self.wires.contains_key(&at) {
            return Err(TestbedError::PortInUse(at));
        }
        let node = self.nodes.get_mut(&at.device).ok_or(TestbedError::NoSuchPort(at))?;
        if usize::from(at.port) >= node.device().port_count() {
            return Err(TestbedError::NoSuchPort(at));
        }
        node.set_port_kind(at.port, kind).map_err(TestbedError::Route)
    }

    /// Wires two Axon ports with a link of `delay_ps` propagation delay (both become Axon ports).
    pub fn connect(&mut self, a: Endpoint, b: Endpoint, delay_ps: u64) -> Result<(), TestbedError> {
        if a == b {
            return Err(TestbedError::PortInUse(a));
        }
        self.claim(a, PortKind::Axon)?;
        self.claim(b, PortKind::Axon)?;
        for (x, y) in [(a, b), (b, a)] {
            let w = Wire {
                peer: Peer::Axon(y),
                delay_ps,
                up: true,
            };
            self.wires.insert(x, w);
        }
        Ok(())
    }

    /// Adds a host on an Axon port (it becomes a host port); now, the host starts DHCP if
    /// [`Host::dhcp`] is set, else announces itself with a gratuitous ARP if [`Host::announce`]
    /// is.
    pub fn add_host(&mut self, mut host: Host) -> Result<HostId, TestbedError> {
        self.claim(host.at, PortKind::Host)?;
        let id = HostId(self.hosts.len());
        let w = Wire {
            peer: Peer::Host(id),
            delay_ps: host.delay_ps,
            up: true,
        };
        self.wires.insert(host.at, w);
        host.tx_free_ps = self.now;
        let g = if host.dhcp {
            host.dhcp_discover()
        } else {
            host.announce.then(|| host.gratuitous_arp())
        };
        self.hosts.push(host);
        if let Some(g) = g {
            self.host_transmit(id, g);
        }
        Ok(id)
    }

    /// Feeds every control plane a first [`ControlInput::Tick`] now (starts discovery).
    pub fn start(&mut self) {
        let ids: Vec<u64> = self.nodes.keys().copied().collect();
        for d in ids {
            self.at(self.now, Item::Cp(d, ControlInput::Tick));
        }
    }

    /// Whether the control planes' [`ControlAction::WakeAt`] requests become ticks (on by
    /// default). Off, they only go to the control log and the caller feeds ticks itself, so
    /// [`Testbed::run_until_idle`] stops when the network is quiet instead of running the clock
    /// to the next lease or route timeout.
    pub fn set_timers(&mut self, on: bool) {
        self.timers_off = !on;
        for n in self.nodes.values_mut() {
            n.set_own_wakeups(on);
        }
    }

    /// The current time.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// The counters.
    pub fn counters(&self) -> &TestbedCounters {
        &self.counters
    }

    /// An Axon.
    pub fn node(&self, device: u64) -> Option<&Node> {
        self.nodes.get(&device)
    }

    /// The Axons, by device id.
    pub fn nodes(&self) -> &BTreeMap<u64, Node> {
        &self.nodes
    }

    /// A host.
    pub fn host(&self, id: HostId) -> Option<&Host> {
        self.hosts.get(id.0)
    }

    /// The hosts, by [`HostId`] index.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// A host, to change or to clear what it recorded.
    pub fn host_mut(&mut self, id: HostId) -> Option<&mut Host> {
        self.hosts.get_mut(id.0)
    }

    /// What the control planes did, except asking for ticks: (device, time handled, action).
    pub fn control_log(&self) -> &[(u64, u64, ControlAction)] {
        &self.log
    }

    /// Forgets the control log.
    pub fn clear_control_log(&mut self) {
        self.log.clear();
    }

    /// Host `from` hands `frame` (any bytes) to its link at `at_ps`.
    pub fn transmit_at(&mut self, at_ps: u64, from: HostId, frame: Vec<u8>) {
        self.at(at_ps.max(self.now), Item::HostRaw(from, frame));
    }

    /// Feeds a device an event at `at_ps` (a link going down without the wire failing, ...).
    pub fn device_event_at(&mut self, at_ps: u64, device: u64, event: Event) {
        self.at(at_ps.max(self.now), Item::Dev(device, event));
    }

    /// Host `from` sends data frame `seq` to `to_ip` at `at_ps` (ARPing first if it must).
    pub fn send_at(&mut self, at_ps: u64, from: HostId, to_ip: Ipv4Addr, seq: u64) {
        self.at(at_ps.max(self.now), Item::HostSend(from, to_ip, seq));
    }

    /// The link at `at` fails at `at_ps`, told as `notice` says.
    pub fn fail_link_at(&mut self, at_ps: u64, at: Endpoint, notice: FailureNotice) {
        self.at(at_ps.max(self.now), Item::Fail(at, notice));
    }

    /// Feeds a control plane an input at `at_ps`.
    pub fn control_input_at(&mut self, at_ps: u64, device: u64, input: ControlInput) {
        self.at(at_ps.max(self.now), Item::Cp(device, input));
    }

    /// Runs every item due up to and including `t`, then sets the time to `t`; returns the items
    /// handled.
    pub fn run_until(&mut self, t: u64) -> u64 {
        let mut n = 0;
        while let Some((when, i)) = self.queue.pop_until(t) {
            let Some(item) = self.take_item(i) else { continue };
            self.now = when;
            self.handle(item);
            n += 1;
        }
        self.now = self.now.max(t);
        n
    }

    /// Runs until nothing is left to do or `max_items` were handled; returns whether the queue
    /// emptied (with discovery on it never does: probes are periodic).
    pub fn run_until_idle(&mut self, max_items: u64) -> bool {
        for _ in 0..max_items {
            let Some((when, i)) = self.queue.pop() else {
                return true;
            };
            let Some(item) = self.take_item(i) else { continue };
            self.now = when;
            self.handle(item);
        }
        self.queue.is_empty()
    }

    fn at(&mut self, t: u64, item: Item) {
        let i = match self.free_items.pop() {
            Some(i) => {
                self.items[i as usize] = Some(item);
                i
            }
            None => {
                self.items.push(Some(item));
                (self.items.len() - 1) as u32
            }
        };
        self.queue.push(t, i);
    }

    /// Takes a queued item out of its place (every place the queue names holds one until it
    /// is popped, once).
    fn take_item(&mut self, i: u32) -> Option<Item> {
        let item = self.items.get_mut(i as usize)?.take()?;
        self.free_items.push(i);
        Some(item)
    }

    fn handle(&mut self, item: Item) {
        self.counters.events += 1;
        let t = self.now;
        match item {
            Item::Dev(d, ev) => {
                if let Event::Frame { port, .. } = &ev {
                    let at = Endpoint { device: d, port: *port };
                    if !self.wires.get(&at).is_some_and(|w| w.up) {
                        self.counters.lost_on_links += 1;
                        return;
                    }
                }
                let mut out = vec![];
                let Some(n) = self.nodes.get_mut(&d) else { return };
                n.handle_device(t, ev, &mut out);
                self.outputs(d, out);
            }
            Item::Cp(d, input) => {
                let mut out = vec![];
                let Some(n) = self.nodes.get_mut(&d) else { return };
                n.handle_control(t, input, &mut out);
                self.outputs(d, out);
            }
            Item::Timer(d, token) => {
                let mut out = vec![];
                let Some(n) = self.nodes.get_mut(&d) else { return };
                n.on_timer(t, token, &mut out);
                self.outputs(d, out);
            }
            Item::HostRx(h, frame) => {
                let Some(host) = self.hosts.get_mut(h.0) else { return };
                for f in host.receive(t, &frame) {
                    self.host_transmit(h, f);
                }
            }
            Item::HostSend(h, ip, seq) => {
                let Some(host) = self.hosts.get_mut(h.0) else { return };
                if let Some(f) = host.send(t, ip, seq) {
                    self.host_transmit(h, f);
                }
            }
            Item::HostRaw(h, frame) => self.host_transmit(h, frame),
            Item::Fail(at, notice) => self.fail(at, notice),
        }
    }

    /// Carries out what node `d` asked for, in order.
    fn outputs(&mut self, d: u64, out: Vec<NodeOutput>) {
        for o in out {
            match o {
                NodeOutput::Transmit { port, start_ps, frame } => self.transmit(d, port, start_ps, frame),
                NodeOutput::Timer { at_ps, token } => self.at(at_ps.max(self.now), Item::Timer(d, token)),
                NodeOutput::Control(a) => self.log.push((d, self.now, a)),
                NodeOutput::Device(_) => {}
            }
        }
    }

    fn transmit(&mut self, d: u64, port: u8, start_ps: u64, frame: Vec<u8>) {
        let here = Endpoint { device: d, port };
        let rate = self
            .nodes
            .get(&d)
            .and_then(|n| n.device().config().ports.get(usize::from(port)))
            .map_or(1, |p| p.line_rate_bps);
        let end = start_ps.saturating_add(wire_time_ps(frame.len(), rate));
        self.at(end, Item::Dev(d, Event::TxDone { port }));
        match self.wires.get(&here).copied() {
            Some(w) if !w.up => self.counters.lost_on_links += 1,
            Some(Wire {
                peer: Peer::Axon(far),
                delay_ps,
                ..
            }) => self.at(
                start_ps.saturating_add(delay_ps),
                Item::Dev(far.device, Event::Frame { port: far.port, frame }),
            ),
            Some(Wire {
                peer: Peer::Host(h),
                delay_ps,
                ..
            }) => self.at(end.saturating_add(delay_ps), Item::HostRx(h, frame)),
            None => self.counters.lost_unwired += 1,
        }
    }

    /// A host hands a frame to its link: it starts when the link is free.
    fn host_transmit(&mut self, h: HostId, frame: Vec<u8>) {
        let now = self.now;
        let Some(host) = self.hosts.get_mut(h.0) else { return };
        let start = host.tx_free_ps.max(now);
        host.tx_free_ps = start.saturating_add(wire_time_ps(frame.len(), host.rate_bps));
        let (at, delay) = (host.at, host.delay_ps);
        if !self.wires.get(&at).is_some_and(|w| w.up) {
            self.counters.lost_on_links += 1;
            return;
        }
        self.at(
            start.saturating_add(delay),
            Item::Dev(at.device, Event::Frame { port: at.port, frame }),
        );
    }

    fn fail(&mut self, at: Endpoint, notice: FailureNotice) {
        let Some(w) = self.wires.get_mut(&at) else { return };
        w.up = false;
        let far = match w.peer {
            Peer::Axon(far) => Some(far),
            Peer::Host(_) => None,
        };
        if let Some(f) = far.and_then(|f| self.wires.get_mut(&f)) {
            f.up = false;
        }
        if notice == FailureNotice::Nobody {
            return;
        }
        for e in [Some(at), far].into_iter().flatten() {
            self.at(self.now, Item::Dev(e.device, Event::LinkDown { port: e.port }));
        }
        let ids: Vec<u64> = self.nodes.keys().copied().collect();
        for d in ids {
            self.at(self.now, Item::Cp(d, ControlInput::LinkDown { at }));
        }
    }
}
