//! One Axon in real time: the shared node of `tandem-axon` ([`tandem_axon::node::AxonNode`],
//! the same device + control-plane wiring the testbed runs) fed with frames, link changes and
//! the clock, sending through a [`Ports`] implementation and logging what the cores report. The
//! same driver runs on packet sockets ([`super::run`]) and on in-memory ports in the tests.

use tandem_axon::node::{NodeOutput, TxDone};
use tandem_axon::{Action, ControlAction, ControlPlane, Device, Event, PortKind};

pub use tandem_axon::node::NodeCounters;

/// Where a node's frames go.
pub trait Ports {
    /// Sends `frame` out of Axon port `port` (it is handed over: no copy).
    fn send(&mut self, port: u8, frame: Vec<u8>);
}

/// A device and its control plane, on real time.
pub struct AxonNode {
    node: tandem_axon::node::AxonNode,
    out: Vec<NodeOutput>,
    started: bool,
}

impl AxonNode {
    /// A node with these parts; `ports` gives each port's kind. A socket queues each frame, so
    /// a port is free again as soon as it has sent.
    pub fn new(dev: Device, cp: ControlPlane, ports: &[(u8, PortKind)]) -> Result<AxonNode, String> {
        let mut node = tandem_axon::node::AxonNode::new(dev, cp, TxDone::Immediate);
        for (p, k) in ports {
            node.set_port_kind(*p, *k).map_err(|e| format!("port {p}: {e}"))?;
        }
        Ok(AxonNode {
            node,
            out: Vec::new(),
            started: false,
        })
    }

    /// The node's counters.
    pub fn counters(&self) -> NodeCounters {
        self.node.counters()
    }

    /// The device (its counters, route memory).
    pub fn device(&self) -> &Device {
        self.node.device()
    }

    /// The control plane (its counters, leases, routes).
    pub fn control(&self) -> &ControlPlane {
        self.node.control()
    }

    /// A frame arrived on `port`.
    pub fn on_frame(&mut self, now_ps: u64, port: u8, frame: Vec<u8>, io: &mut dyn Ports) {
        let mut out = std::mem::take(&mut self.out);
        self.node.handle_device(now_ps, Event::Frame { port, frame }, &mut out);
        self.carry_out(&mut out, io);
        self.out = out;
    }

    /// A port's link went up or down.
    pub fn on_link(&mut self, now_ps: u64, port: u8, up: bool, io: &mut dyn Ports) {
        let mut out = std::mem::take(&mut self.out);
        self.node.on_link(now_ps, port, up, &mut out);
        self.carry_out(&mut out, io);
        self.out = out;
    }

    /// Runs what is due at `now_ps` (upcalls, injected frames, control-plane wake-ups) and a
    /// device tick; returns when the next timer is due.
    pub fn on_time(&mut self, now_ps: u64, io: &mut dyn Ports) -> Option<u64> {
        let mut out = std::mem::take(&mut self.out);
        if !self.started {
            // The control plane's first tick starts its timers (discovery probes, expiries).
            self.started = true;
            self.node
                .handle_control(now_ps, tandem_axon::ControlInput::Tick, &mut out);
        }
        self.node.on_time(now_ps, &mut out);
        self.node.handle_device(now_ps, Event::Tick, &mut out);
        // What the tick or the timers asked for at once is run now too.
        self.node.on_time(now_ps, &mut out);
        self.carry_out(&mut out, io);
        self.out = out;
        self.node.poll_timeout()
    }

    fn carry_out(&mut self, out: &mut Vec<NodeOutput>, io: &mut dyn Ports) {
        let id = self.node.device_id();
        for o in out.drain(..) {
            match o {
                NodeOutput::Transmit { port, frame, .. } => io.send(port, frame),
                NodeOutput::Timer { .. } => {}
                NodeOutput::Device(Action::Dropped { reason, port, bytes }) => {
                    tracing::debug!("axon {id}: dropped {bytes} B on port {port:?}: {reason:?}")
                }
                NodeOutput::Device(Action::PortClassified { port, kind, .. }) => {
                    tracing::info!("axon {id}: port {port} is a {kind:?} port")
                }
                NodeOutput::Device(_) => {}
                NodeOutput::Control(ControlAction::RouteInstalled { port, mac, hops, .. }) => {
                    tracing::info!("axon {id}: route on port {port} for {mac} ({hops} hops)")
                }
                NodeOutput::Control(ControlAction::RouteRemoved { port, why, .. }) => {
                    tracing::info!("axon {id}: route on port {port} removed: {why:?}")
                }
                NodeOutput::Control(ControlAction::Dropped { reason }) => {
                    tracing::debug!("axon {id}: control drop {reason:?}")
                }
                NodeOutput::Control(_) => {}
            }
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
        // The request reaches the control plane at its upcall time (a few microseconds
        // later): run the clock to each timer until something is sent.
        let mut t = 1_000_000;
        while out.0.is_empty() {
            match n.on_time(t, &mut out) {
                Some(next) if next < 1_000_000_000 => t = next,
                _ => break,
            }
        }
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
