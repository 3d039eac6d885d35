//! One Axon: its data plane ([`Device`]) and control plane ([`ControlPlane`]) wired together,
//! sans-IO. The simulator's kernel (`model::placed`, which the testbed uses too) and the live
//! driver (`tandem-live`'s `axon`) both run
//! their Axons through this one wiring, so what an Axon does with an upcall, an injected frame
//! or a control-plane wake-up is the same in simulation and live.
//!
//! The node is fed `(now, input)` and appends [`NodeOutput`]s:
//!
//! * a device event ([`AxonNode::handle_device`]: a frame, a finished transmission, a link
//!   change, a tick) or a control input ([`AxonNode::handle_control`]) runs at once;
//! * what the cores ask for later, an upcall at its `at_ps` (the frame's last byte at the
//!   control plane's port), a frame the control plane injects at its `at_ps`, a control-plane
//!   wake-up, becomes a timer of the node's own: the node says [`NodeOutput::Timer`] with a
//!   token, and the driver calls [`AxonNode::on_timer`] with that token at that time (a driver
//!   with one event queue keeps every timer in order among its other events), or
//!   [`AxonNode::on_time`] for everything due (a driver that polls the clock), using
//!   [`AxonNode::poll_timeout`] for when;
//! * wake-up requests are merged: a control plane asking again for a time at or after its
//!   pending wake-up adds no timer;
//! * a device's transmission is [`NodeOutput::Transmit`]; the driver tells the device when the
//!   port is free again with [`Event::TxDone`] (at the frame's end on a simulated link), or
//!   the node does so at once when built with [`TxDone::Immediate`] (a kernel socket queues
//!   the frame).

use crate::control::{ControlAction, ControlInput, ControlPlane, Endpoint};
use crate::dataplane::{Action, Device, Event};
use crate::port::PortKind;
use crate::RouteError;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// What the node asks its driver to do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeOutput {
    /// Send `frame` on `port`, its first byte at `start_ps`.
    Transmit {
        /// The port.
        port: u8,
        /// When the first byte may leave.
        start_ps: u64,
        /// The bytes, without FCS.
        frame: Vec<u8>,
    },
    /// Call [`AxonNode::on_timer`] with `token` at `at_ps` (or [`AxonNode::on_time`] then).
    Timer {
        /// When.
        at_ps: u64,
        /// Which.
        token: u64,
    },
    /// Any other device action (a drop, a port classified), for the driver's log.
    Device(Action),
    /// A control-plane action, for the driver's log: routes installed and removed, drops, the
    /// frames it injects (already scheduled) and, when the node does not schedule its own
    /// wake-ups ([`AxonNode::set_own_wakeups`]), its wake-up requests.
    Control(ControlAction),
}

/// Who says when a transmitting port is free again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxDone {
    /// The driver feeds [`Event::TxDone`] (a simulated link: at the frame's end).
    Driver,
    /// The node feeds it at once after each transmission (a kernel socket queues the frame).
    Immediate,
}

/// What the node counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeCounters {
    /// Frames received (device frame events).
    pub frames_in: u64,
    /// Frames transmitted.
    pub frames_out: u64,
    /// Routes installed.
    pub routes_installed: u64,
    /// Routes removed.
    pub routes_removed: u64,
    /// Link state changes seen.
    pub link_changes: u64,
}

/// A deferred step.
#[derive(Debug, Clone)]
enum Deferred {
    Control(ControlInput),
    Inject(Vec<u8>),
}

/// An Axon's device and control plane, wired. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct AxonNode {
    device_id: u64,
    dev: Device,
    cp: ControlPlane,
    tx_done: TxDone,
    own_wakeups: bool,
    deferred: BTreeMap<u64, (u64, Deferred)>,
    due: BinaryHeap<Reverse<(u64, u64)>>,
    next_token: u64,
    wake: Option<u64>,
    acts: Vec<Action>,
    cp_acts: Vec<ControlAction>,
    counters: NodeCounters,
}

impl AxonNode {
    /// A node of these parts.
    pub fn new(dev: Device, cp: ControlPlane, tx_done: TxDone) -> AxonNode {
        AxonNode {
            device_id: dev.config().device_id,
            dev,
            cp,
            tx_done,
            own_wakeups: true,
            deferred: BTreeMap::new(),
            due: BinaryHeap::new(),
            next_token: 0,
            wake: None,
            acts: Vec::new(),
            cp_acts: Vec::new(),
            counters: NodeCounters::default(),
        }
    }

    /// Sets a port's kind (before traffic: wiring a port to another Axon or to a host).
    pub fn set_port_kind(&mut self, port: u8, kind: PortKind) -> Result<(), RouteError> {
        self.dev.set_port_kind(port, kind)
    }

    /// Whether the control plane's wake-up requests become the node's own timers (on by
    /// default). Off, they are reported as [`NodeOutput::Control`] and the driver feeds ticks.
    pub fn set_own_wakeups(&mut self, on: bool) {
        self.own_wakeups = on;
    }

    /// The device id.
    pub fn device_id(&self) -> u64 {
        self.device_id
    }

    /// The data plane (counters, route memory, configuration).
    pub fn device(&self) -> &Device {
        &self.dev
    }

    /// The control plane (counters, leases, routes, discovery).
    pub fn control(&self) -> &ControlPlane {
        &self.cp
    }

    /// What the node counted.
    pub fn counters(&self) -> NodeCounters {
        self.counters
    }

    /// When the earliest timer is due.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.due.peek().map(|Reverse((at, _))| *at)
    }

    /// Feeds the device an event now.
    pub fn handle_device(&mut self, now: u64, ev: Event, out: &mut Vec<NodeOutput>) {
        match &ev {
            Event::Frame { .. } => self.counters.frames_in += 1,
            Event::LinkUp { .. } | Event::LinkDown { .. } => self.counters.link_changes += 1,
            _ => {}
        }
        let mut acts = std::mem::take(&mut self.acts);
        acts.clear();
        self.dev.handle(now, ev, &mut acts);
        let mut immediate = Vec::new();
        for a in acts.drain(..) {
            if let Some((at, input)) = ControlInput::from_action(&a) {
                self.defer(at.max(now), Deferred::Control(input), out);
                continue;
            }
            match a {
                Action::Transmit { port, start_ps, frame } => {
                    self.counters.frames_out += 1;
                    out.push(NodeOutput::Transmit { port, start_ps, frame });
                    if self.tx_done == TxDone::Immediate {
                        immediate.push(port);
                    }
                }
                other => out.push(NodeOutput::Device(other)),
            }
        }
        self.acts = acts;
        for port in immediate {
            self.handle_device(now, Event::TxDone { port }, out);
        }
    }

    /// Feeds the control plane an input now.
    pub fn handle_control(&mut self, now: u64, input: ControlInput, out: &mut Vec<NodeOutput>) {
        if input == ControlInput::Tick && self.wake == Some(now) {
            self.wake = None;
        }
        let mut acts = std::mem::take(&mut self.cp_acts);
        acts.clear();
        self.cp.handle(now, &mut self.dev, input, &mut acts);
        for a in acts.drain(..) {
            self.control_action(now, a, out);
        }
        self.cp_acts = acts;
    }

    /// A link of this Axon went up or down: the device and the control plane are told.
    pub fn on_link(&mut self, now: u64, port: u8, up: bool, out: &mut Vec<NodeOutput>) {
        let at = Endpoint {
            device: self.device_id,
            port,
        };
        if up {
            self.handle_device(now, Event::LinkUp { port }, out);
            self.handle_control(now, ControlInput::LinkUp { at }, out);
        } else {
            self.handle_device(now, Event::LinkDown { port }, out);
            self.handle_control(now, ControlInput::LinkDown { at }, out);
        }
    }

    /// Runs the timer `token` (announced by [`NodeOutput::Timer`]); nothing if it already ran.
    pub fn on_timer(&mut self, now: u64, token: u64, out: &mut Vec<NodeOutput>) {
        let step = self.deferred.remove(&token);
        // The heap keeps an entry for every timer: drop the ones that have run.
        while let Some(Reverse((_, t))) = self.due.peek() {
            if self.deferred.contains_key(t) {
                break;
            }
            self.due.pop();
        }
        if let Some((_, step)) = step {
            self.run(now, step, out);
        }
    }

    /// Runs every timer due at or before `now`, in order (those they add included).
    pub fn on_time(&mut self, now: u64, out: &mut Vec<NodeOutput>) {
        while let Some(Reverse((at, token))) = self.due.peek().copied() {
            if at > now {
                break;
            }
            self.due.pop();
            if let Some((_, step)) = self.deferred.remove(&token) {
                self.run(now, step, out);
            }
        }
    }

    fn run(&mut self, now: u64, step: Deferred, out: &mut Vec<NodeOutput>) {
        match step {
            Deferred::Control(input) => self.handle_control(now, input, out),
            Deferred::Inject(frame) => self.handle_device(now, Event::FromControlPlane { frame }, out),
        }
    }

    fn defer(&mut self, at: u64, step: Deferred, out: &mut Vec<NodeOutput>) {
        let token = self.next_token;
        self.next_token += 1;
        self.deferred.insert(token, (at, step));
        self.due.push(Reverse((at, token)));
        out.push(NodeOutput::Timer { at_ps: at, token });
    }

    fn control_action(&mut self, now: u64, a: ControlAction, out: &mut Vec<NodeOutput>) {
        match a {
            ControlAction::Inject { at_ps, frame } => {
                self.defer(at_ps.max(now), Deferred::Inject(frame.clone()), out);
                out.push(NodeOutput::Control(ControlAction::Inject { at_ps, frame }));
            }
            ControlAction::WakeAt { at_ps } if self.own_wakeups => {
                if self.wake.is_none_or(|w| w > at_ps || w < now) {
                    self.wake = Some(at_ps);
                    self.defer(at_ps.max(now), Deferred::Control(ControlInput::Tick), out);
                }
            }
            other => {
                match &other {
                    ControlAction::RouteInstalled { .. } => self.counters.routes_installed += 1,
                    ControlAction::RouteRemoved { .. } => self.counters.routes_removed += 1,
                    _ => {}
                }
                out.push(NodeOutput::Control(other));
            }
        }
    }
}

/// One input of an [`AxonNode`] through the shared core contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeInput {
    /// An event of the device (a frame in, a port free, a link change).
    Device(Event),
    /// An input of the control plane.
    Control(ControlInput),
    /// Time passed: every timer due runs ([`AxonNode::on_time`]).
    Time,
}

impl tandem_time::sansio::SansIo for AxonNode {
    type Input<'a> = NodeInput;
    type Output = Vec<NodeOutput>;
    type Error = std::convert::Infallible;

    fn handle(&mut self, now: u64, input: NodeInput, out: &mut Vec<NodeOutput>) -> Result<(), Self::Error> {
        match input {
            NodeInput::Device(ev) => self.handle_device(now, ev, out),
            NodeInput::Control(c) => self.handle_control(now, c, out),
            NodeInput::Time => self.on_time(now, out),
        }
        Ok(())
    }

    fn poll_timeout(&self) -> Option<u64> {
        AxonNode::poll_timeout(self)
    }

    fn timeout() -> NodeInput {
        NodeInput::Time
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DeviceConfig;
    use crate::control::frames::arp_frame;
    use crate::control::{ControlConfig, DhcpPool, Topology};
    use tandem_wire::arp::{ArpOperation, ArpRepr};
    use tandem_wire::{Ipv4Addr, MacAddr};

    fn node(tx_done: TxDone) -> AxonNode {
        let pool = DhcpPool {
            server_ip: Ipv4Addr::new(10, 0, 1, 1),
            subnet_mask: Ipv4Addr::new(255, 255, 0, 0),
            first: Ipv4Addr::new(10, 0, 1, 10),
            last: Ipv4Addr::new(10, 0, 1, 200),
            lease_secs: 100,
        };
        let topo = Topology::parse("axon 1 10.0.1.10 10.0.1.200\n").unwrap();
        let dev = Device::new(DeviceConfig::new(1, 4, 1_000_000_000)).unwrap();
        let cp = ControlPlane::new(ControlConfig::new(1, pool), topo).unwrap();
        let mut n = AxonNode::new(dev, cp, tx_done);
        n.set_port_kind(0, PortKind::Host).unwrap();
        n
    }

    fn arp_request() -> Vec<u8> {
        let me = MacAddr([0x02, 0, 0, 0, 0, 0x11]);
        let ask = ArpRepr {
            operation: ArpOperation::Request,
            sender_mac: me,
            sender_ip: Ipv4Addr::new(10, 0, 1, 10),
            target_mac: MacAddr::ZERO,
            target_ip: Ipv4Addr::new(10, 0, 1, 1),
        };
        arp_frame(MacAddr::BROADCAST, me, &ask)
    }

    #[test]
    fn an_upcall_reaches_the_control_plane_at_its_time() {
        let mut n = node(TxDone::Driver);
        let mut out = Vec::new();
        n.handle_device(
            1_000,
            Event::Frame {
                port: 0,
                frame: arp_request(),
            },
            &mut out,
        );
        let timers: Vec<(u64, u64)> = out
            .iter()
            .filter_map(|o| match o {
                NodeOutput::Timer { at_ps, token } => Some((*at_ps, *token)),
                _ => None,
            })
            .collect();
        assert!(!out.iter().any(|o| matches!(o, NodeOutput::Transmit { .. })), "{out:?}");
        let &(at, token) = timers.first().expect("the upcall waits as a timer");
        assert!(at > 1_000, "the frame's last byte reaches the control plane later");
        assert_eq!(n.poll_timeout(), Some(at));
        out.clear();
        n.on_timer(at, token, &mut out);
        // The answer is injected (another timer), then transmitted on port 0.
        n.on_time(u64::MAX / 2, &mut out);
        assert!(
            out.iter().any(|o| matches!(o, NodeOutput::Transmit { port: 0, .. })),
            "{out:?}"
        );
        // A timer run by token does not run again.
        let before = n.counters();
        n.on_timer(at, token, &mut out);
        assert_eq!(n.counters(), before);
    }

    #[test]
    fn wake_ups_are_merged_and_can_be_left_to_the_driver() {
        let mut n = node(TxDone::Driver);
        let mut out = Vec::new();
        n.handle_control(0, ControlInput::Tick, &mut out);
        let first: Vec<_> = out
            .iter()
            .filter(|o| matches!(o, NodeOutput::Timer { .. }))
            .cloned()
            .collect();
        out.clear();
        // Asking again changes nothing while the pending wake-up is earlier.
        n.handle_control(
            1,
            ControlInput::LinkUp {
                at: Endpoint { device: 1, port: 1 },
            },
            &mut out,
        );
        let wakes_after = out.iter().filter(|o| matches!(o, NodeOutput::Timer { .. })).count();
        assert!(wakes_after <= first.len(), "{first:?} then {out:?}");

        let mut m = node(TxDone::Driver);
        m.set_own_wakeups(false);
        let mut out = Vec::new();
        m.handle_control(0, ControlInput::Tick, &mut out);
        assert!(!out.iter().any(|o| matches!(o, NodeOutput::Timer { .. })), "{out:?}");
        assert_eq!(m.poll_timeout(), None);
    }

    /// Through the shared contract (`SansIo`): an ARP request in, the node's timers run by
    /// `advance`, the answer out on port 0, as the driver-specific calls give it.
    #[test]
    fn the_shared_core_contract_drives_a_node_as_its_own_calls_do() {
        use tandem_time::sansio::{advance, SansIo};
        let frame = Event::Frame {
            port: 0,
            frame: arp_request(),
        };
        let mut by_trait = node(TxDone::Driver);
        let mut a = Vec::new();
        SansIo::handle(&mut by_trait, 1_000, NodeInput::Device(frame.clone()), &mut a).unwrap();
        advance(&mut by_trait, u64::MAX / 2, &mut a).unwrap();
        let mut by_calls = node(TxDone::Driver);
        let mut b = Vec::new();
        by_calls.handle_device(1_000, frame, &mut b);
        while let Some(t) = by_calls.poll_timeout() {
            by_calls.on_time(t, &mut b);
        }
        assert_eq!(a, b);
        assert!(
            a.iter().any(|o| matches!(o, NodeOutput::Transmit { port: 0, .. })),
            "{a:?}"
        );
        assert_eq!(SansIo::poll_timeout(&by_trait), None);
    }

    #[test]
    fn immediate_tx_done_frees_the_port_at_once() {
        let mut n = node(TxDone::Immediate);
        let mut out = Vec::new();
        n.handle_device(
            0,
            Event::Frame {
                port: 0,
                frame: arp_request(),
            },
            &mut out,
        );
        // Run the clock from timer to timer, as a driver does.
        while let Some(t) = n.poll_timeout().filter(|&t| t < 1_000_000_000_000) {
            n.on_time(t, &mut out);
            if out.iter().any(|o| matches!(o, NodeOutput::Transmit { .. })) {
                break;
            }
        }
        let sent = out.iter().filter(|o| matches!(o, NodeOutput::Transmit { .. })).count();
        assert!(sent >= 1);
        assert_eq!(n.counters().frames_out, sent as u64);
        assert_eq!(n.counters().frames_in, 1);
    }
}
