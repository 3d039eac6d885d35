//! One Axon in real time: the sans-IO [`Device`] and [`ControlPlane`] wired together, fed with
//! frames, link changes and the clock, sending through a [`Ports`] implementation. The same
//! node runs on packet sockets ([`super::run`]) and on in-memory ports in the tests.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use tandem_axon::control::Endpoint;
use tandem_axon::{Action, ControlAction, ControlInput, ControlPlane, Device, Event, PortKind};

/// Where a node's frames go.
pub trait Ports {
    /// Sends `frame` out of Axon port `port` (it is handed over: no copy).
    fn send(&mut self, port: u8, frame: Vec<u8>);
}

/// Work for the node, in order.
enum Work {
    Dev(Event),
    Cp(ControlInput),
}

/// A timer: inject a frame later, or wake the control plane.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    Inject(Vec<u8>),
    WakeControl,
}

/// Counters of the driver itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeCounters {
    /// Frames received from interfaces.
    pub frames_in: u64,
    /// Frames sent.
    pub frames_out: u64,
    /// Routes installed.
    pub routes_installed: u64,
    /// Routes removed.
    pub routes_removed: u64,
    /// Link state changes seen.
    pub link_changes: u64,
}

/// A device and its control plane.
pub struct AxonNode {
    device_id: u64,
    dev: Device,
    cp: ControlPlane,
    timers: BinaryHeap<Reverse<(u64, u64, Timer)>>,
    seq: u64,
    work: VecDeque<Work>,
    actions: Vec<Action>,
    cp_actions: Vec<ControlAction>,
    counters: NodeCounters,
    started: bool,
}

impl AxonNode {
    /// A node with these parts; `ports` gives each port's kind.
    pub fn new(dev: Device, cp: ControlPlane, ports: &[(u8, PortKind)]) -> Result<AxonNode, String> {
        let mut dev = dev;
        for (p, k) in ports {
            dev.set_port_kind(*p, *k).map_err(|e| format!("port {p}: {e}"))?;
        }
        Ok(AxonNode {
            device_id: dev.config().device_id,
            dev,
            cp,
            timers: BinaryHeap::new(),
            seq: 0,
            work: VecDeque::new(),
            actions: Vec::new(),
            cp_actions: Vec::new(),
            counters: NodeCounters::default(),
            started: false,
        })
    }

    /// The driver's counters.
    pub fn counters(&self) -> NodeCounters {
        self.counters
    }

    /// The device (its counters, route memory).
    pub fn device(&self) -> &Device {
        &self.dev
    }

    /// The control plane (its counters, leases, routes).
    pub fn control(&self) -> &ControlPlane {
        &self.cp
    }

    /// A frame arrived on `port`.
    pub fn on_frame(&mut self, now_ps: u64, port: u8, frame: Vec<u8>, io: &mut dyn Ports) {
        self.counters.frames_in += 1;
        self.work.push_back(Work::Dev(Event::Frame { port, frame }));
        self.run(now_ps, io);
    }

    /// A port's link went up or down.
    pub fn on_link(&mut self, now_ps: u64, port: u8, up: bool, io: &mut dyn Ports) {
        self.counters.link_changes += 1;
        let at = Endpoint {
            device: self.device_id,
            port,
        };
        if up {
            self.work.push_back(Work::Dev(Event::LinkUp { port }));
            self.work.push_back(Work::Cp(ControlInput::LinkUp { at }));
        } else {
            self.work.push_back(Work::Dev(Event::LinkDown { port }));
            self.work.push_back(Work::Cp(ControlInput::LinkDown { at }));
        }
        self.run(now_ps, io);
    }

    /// Runs the timers due at `now_ps` and a device tick; returns when the next timer is due.
    pub fn on_time(&mut self, now_ps: u64, io: &mut dyn Ports) -> Option<u64> {
        while let Some(Reverse((at, _, _))) = self.timers.peek() {
            if *at > now_ps {
                break;
            }
            let Some(Reverse((_, _, t))) = self.timers.pop() else {
                break;
            };
            match t {
                Timer::Inject(frame) => self.work.push_back(Work::Dev(Event::FromControlPlane { frame })),
                Timer::WakeControl => self.work.push_back(Work::Cp(ControlInput::Tick)),
            }
        }
        if !self.started {
            // The control plane's first tick starts its timers (discovery probes, expiries).
            self.started = true;
            self.work.push_back(Work::Cp(ControlInput::Tick));
        }
        self.work.push_back(Work::Dev(Event::Tick));
        self.run(now_ps, io);
        self.timers.peek().map(|Reverse((at, _, _))| *at)
    }

    fn at(&mut self, at: u64, t: Timer) {
        self.seq += 1;
        self.timers.push(Reverse((at, self.seq, t)));
    }

    fn run(&mut self, now: u64, io: &mut dyn Ports) {
        while let Some(w) = self.work.pop_front() {
            match w {
                Work::Dev(ev) => {
                    let mut acts = std::mem::take(&mut self.actions);
                    self.dev.handle(now, ev, &mut acts);
                    for a in acts.drain(..) {
                        self.device_action(now, a, io);
                    }
                    self.actions = acts;
                }
                Work::Cp(input) => {
                    let mut acts = std::mem::take(&mut self.cp_actions);
                    self.cp.handle(now, &mut self.dev, input, &mut acts);
                    for a in acts.drain(..) {
                        self.control_action(now, a);
                    }
                    self.cp_actions = acts;
                }
            }
        }
    }

    fn device_action(&mut self, now: u64, a: Action, io: &mut dyn Ports) {
        if let Some((_, input)) = ControlInput::from_action(&a) {
            self.work.push_back(Work::Cp(input));
            return;
        }
        match a {
            Action::Transmit { port, frame, .. } => {
                io.send(port, frame);
                self.counters.frames_out += 1;
                // The kernel queues the frame: the port is free again at once.
                self.work.push_back(Work::Dev(Event::TxDone { port }));
            }
            Action::Dropped { reason, port, bytes } => {
                tracing::debug!(
                    "axon {}: dropped {bytes} B on port {port:?}: {reason:?}",
                    self.device_id
                )
            }
            Action::PortClassified { port, kind, .. } => {
                tracing::info!("axon {}: port {port} is a {kind:?} port", self.device_id)
            }
            _ => {}
        }
        let _ = now;
    }

    fn control_action(&mut self, now: u64, a: ControlAction) {
        match a {
            ControlAction::Inject { at_ps, frame } if at_ps <= now => {
                self.work.push_back(Work::Dev(Event::FromControlPlane { frame }))
            }
            ControlAction::Inject { at_ps, frame } => self.at(at_ps, Timer::Inject(frame)),
            ControlAction::WakeAt { at_ps } => self.at(at_ps, Timer::WakeControl),
            ControlAction::RouteInstalled { port, mac, hops, .. } => {
                self.counters.routes_installed += 1;
                tracing::info!("axon {}: route on port {port} for {mac} ({hops} hops)", self.device_id);
            }
            ControlAction::RouteRemoved { port, why, .. } => {
                self.counters.routes_removed += 1;
                tracing::info!("axon {}: route on port {port} removed: {why:?}", self.device_id);
            }
            ControlAction::Dropped { reason } => tracing::debug!("axon {}: control drop {reason:?}", self.device_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axon::AxonProcessConfig;
    use tandem_axon::control::frames::arp_frame;
    use tandem_wire::arp::{ArpOperation, ArpRepr, Packet as ArpPacket};
    use tandem_wire::ethernet::Frame;
    use tandem_wire::{Ipv4Addr, MacAddr};

    #[derive(Default)]
    struct Sent(Vec<(u8, Vec<u8>)>);

    impl Ports for Sent {
        fn send(&mut self, port: u8, frame: Vec<u8>) {
            self.0.push((port, frame));
        }
    }

    fn node() -> AxonNode {
        let cfg = AxonProcessConfig::parse(
            "device_id = 1\ntopology = \"axon 1 10.0.1.10 10.0.1.200\"\n[dhcp]\nserver_ip = \"10.0.1.1\"\nsubnet_mask = \"255.255.0.0\"\nfirst = \"10.0.1.10\"\nlast = \"10.0.1.200\"\n[[ports]]\ninterface = \"p0\"\nport = 0\nkind = \"host\"\n",
        )
        .unwrap();
        let (d, c, t, ports) = cfg.build().unwrap();
        let kinds: Vec<_> = ports.iter().map(|(_, p, k)| (*p, *k)).collect();
        AxonNode::new(Device::new(d).unwrap(), ControlPlane::new(c, t).unwrap(), &kinds).unwrap()
    }

    #[test]
    fn a_host_arping_for_its_gateway_gets_the_answer_on_its_port() {
        let mut n = node();
        let mut out = Sent::default();
        let me = MacAddr([0x02, 0, 0, 0, 0, 0x11]);
        let ask = ArpRepr {
            operation: ArpOperation::Request,
            sender_mac: me,
            sender_ip: Ipv4Addr::new(10, 0, 1, 10),
            target_mac: MacAddr::ZERO,
            target_ip: Ipv4Addr::new(10, 0, 1, 1),
        };
        n.on_time(0, &mut out);
        n.on_frame(1_000_000, 0, arp_frame(MacAddr::BROADCAST, me, &ask), &mut out);
        let answer = out
            .0
            .iter()
            .filter(|(p, _)| *p == 0)
            .find_map(|(_, f)| {
                let eth = Frame::new_checked(&f[..]).ok()?;
                ArpRepr::parse(&ArpPacket::new_checked(eth.payload()).ok()?).ok()
            })
            .expect("an ARP reply on port 0");
        assert_eq!(answer.operation, ArpOperation::Reply);
        assert_eq!(answer.sender_ip, Ipv4Addr::new(10, 0, 1, 1));
        assert_eq!(answer.target_mac, me);
        assert_eq!(n.counters().frames_in, 1);
    }

    #[test]
    fn garbage_is_counted_not_fatal() {
        let mut n = node();
        let mut out = Sent::default();
        for len in [0usize, 1, 5, 14, 60, 1600] {
            n.on_frame(0, 0, vec![0xa5; len], &mut out);
        }
        n.on_link(0, 0, false, &mut out);
        n.on_link(0, 0, true, &mut out);
        assert_eq!(n.counters().frames_in, 6);
    }
}
