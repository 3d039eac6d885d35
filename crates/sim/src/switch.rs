//! The switch pipeline: match tables with a capacity and priorities, actions, and the hook
//! through which a system crate (TCPU, TurboSwitch, ...) extends a switch.
//!
//! A packet entering a switch goes: [`SwitchModel::on_ingress`] (if a model is attached) →
//! match tables in order (first table with a hit wins; within a table the highest priority) →
//! the default: shortest-path routing with ECMP by flow hash → pipeline latency → the egress
//! queue of the chosen port and class.

use crate::packet::{FlowId, NodeId, Packet, PacketId, PacketPool};
use crate::port::Port;
use crate::queue::EgressQueues;
use crate::time::Time;
use rustc_hash::FxHashMap;

/// What a rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Match {
    /// One flow exactly (equivalent to an exact 5-tuple match: a simulated flow has one tuple
    /// per direction; this matches both directions).
    Flow(FlowId),
    /// Every packet to this host.
    DstHost(NodeId),
    /// Every packet from this host.
    SrcHost(NodeId),
    /// Everything.
    Any,
}

impl Match {
    fn hits(&self, p: &Packet) -> bool {
        match *self {
            Match::Flow(f) => p.flow == f,
            Match::DstHost(h) => p.dst == h,
            Match::SrcHost(h) => p.src == h,
            Match::Any => true,
        }
    }
}

/// What a matching rule does. Fields left `None`/false fall through to the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Action {
    /// Send out of this port instead of the routed one (also "redirect to the CPU port").
    pub output: Option<u16>,
    /// Put the packet in this traffic class.
    pub class: Option<u8>,
    /// Mark CE if the packet is ECN-capable.
    pub mark_ce: bool,
    /// Drop the packet.
    pub drop: bool,
}

/// One table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Higher wins within a table.
    pub priority: u16,
    /// What it matches.
    pub matches: Match,
    /// What it does.
    pub action: Action,
}

/// Why a rule could not be installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableError {
    /// The table holds `capacity` rules already.
    Full,
}

/// A match table of bounded capacity (a TCAM's worth of rules). Exact flow matches are hashed;
/// other matches are kept sorted by priority.
#[derive(Debug, Clone, Default)]
pub struct MatchTable {
    /// Most rules the table holds.
    pub capacity: usize,
    exact: FxHashMap<FlowId, Rule>,
    wild: Vec<Rule>,
    /// Lookups that hit a rule.
    pub hits: u64,
    /// Lookups that found none.
    pub misses: u64,
}

impl MatchTable {
    /// An empty table of the given capacity.
    pub fn new(capacity: usize) -> MatchTable {
        MatchTable {
            capacity,
            ..MatchTable::default()
        }
    }
    /// Rules installed.
    pub fn len(&self) -> usize {
        self.exact.len() + self.wild.len()
    }
    /// True when no rule is installed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Installs a rule (replacing one with the same exact flow match).
    pub fn insert(&mut self, rule: Rule) -> Result<(), TableError> {
        match rule.matches {
            Match::Flow(f) => {
                if !self.exact.contains_key(&f) && self.len() >= self.capacity {
                    return Err(TableError::Full);
                }
                self.exact.insert(f, rule);
            }
            _ => {
                if self.len() >= self.capacity {
                    return Err(TableError::Full);
                }
                let at = self.wild.partition_point(|r| r.priority >= rule.priority);
                self.wild.insert(at, rule);
            }
        }
        Ok(())
    }
    /// Removes the exact rule of a flow; true if there was one.
    pub fn remove_flow(&mut self, f: FlowId) -> bool {
        self.exact.remove(&f).is_some()
    }
    /// True when the flow has an exact rule.
    pub fn has_flow(&self, f: FlowId) -> bool {
        self.exact.contains_key(&f)
    }
    /// The highest-priority rule matching `p`.
    pub fn lookup(&mut self, p: &Packet) -> Option<Rule> {
        let exact = self.exact.get(&p.flow).copied();
        let wild = self.wild.iter().find(|r| r.matches.hits(p)).copied();
        let best = match (exact, wild) {
            (Some(e), Some(w)) => Some(if w.priority > e.priority { w } else { e }),
            (e, w) => e.or(w),
        };
        if best.is_some() {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
        best
    }
}

/// A model's decision about a packet entering the switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Carry on through the tables and routing.
    Continue,
    /// Send out of this port in this class now (bypassing tables and routing).
    Output {
        /// Egress port.
        port: u16,
        /// Traffic class.
        class: u8,
    },
    /// Send out of this port in this class once `delay` has passed (a model with a pipeline of
    /// its own, like an Axon's Table 4.2 latencies), on top of the switch's pipeline latency; on
    /// a cut-through switch the transmission still ends no earlier than the packet's last bit
    /// plus `delay`.
    OutputAfter {
        /// Egress port.
        port: u16,
        /// Traffic class.
        class: u8,
        /// The model's own latency.
        delay: Time,
    },
    /// Drop it, for this reason.
    Drop(&'static str),
    /// The model has taken the packet (it holds the id and will [`SwitchCtx::send`] it or
    /// [`SwitchCtx::free`] it later).
    Consumed,
}

/// What a model may see and do during a callback.
pub struct SwitchCtx<'a> {
    /// Current time.
    pub now: Time,
    /// The switch.
    pub node: NodeId,
    /// All packets (the model may read and edit the one it was given).
    pub pool: &'a mut PacketPool,
    /// The switch's ports (read-only: queue lengths and stats, links).
    pub ports: &'a [Port],
    /// The switch's match tables (the model installs and removes rules).
    pub tables: &'a mut Vec<MatchTable>,
    pub(crate) sends: &'a mut Vec<(u16, PacketId)>,
    pub(crate) timers: &'a mut Vec<(Time, u64)>,
    pub(crate) frees: &'a mut Vec<PacketId>,
    pub(crate) forwards: &'a mut Vec<(u16, PacketId)>,
    pub(crate) drops: &'a mut Vec<(u16, PacketId, &'static str)>,
    pub(crate) pauses: &'a mut Vec<(u16, Time, Time)>,
}

impl SwitchCtx<'_> {
    /// The egress queues of a port.
    pub fn queue(&self, port: u16) -> Option<&EgressQueues> {
        self.ports.get(usize::from(port)).map(|p| &p.queues)
    }
    /// Queues a packet the model holds on an egress port (its class is the packet's `class`).
    pub fn send(&mut self, port: u16, pkt: PacketId) {
        self.sends.push((port, pkt));
    }
    /// Pauses the far end of `port` as an IEEE 802.3x PAUSE frame does, for a model that puts
    /// the frame on its link itself: at `at` (the frame's last byte there) that port learns to
    /// start nothing for `duration` once its frame on the wire, if any, has gone (a later
    /// pause replaces an earlier one; 0 ends it). The pause travels the link, as every effect
    /// between nodes does.
    pub fn pause_peer(&mut self, port: u16, at: Time, duration: Time) {
        self.pauses.push((port, at, duration));
    }
    /// Asks for [`SwitchModel::on_timer`] with `token` at time `at`.
    pub fn set_timer(&mut self, at: Time, token: u64) {
        self.timers.push((at, token));
    }
    /// Sends a packet the model holds on through the switch's tables and routing now, as if it
    /// had just arrived on `in_port` and the model had said [`Verdict::Continue`] (for a model
    /// that delays packets, such as a CPU queue in front of the forwarding).
    pub fn forward(&mut self, in_port: u16, pkt: PacketId) {
        self.forwards.push((in_port, pkt));
    }
    /// Drops a packet the model holds, counted in drops.csv at ingress port `in_port` of this
    /// switch with reason `why` (as [`Verdict::Drop`] does for a packet just arrived).
    pub fn drop(&mut self, in_port: u16, pkt: PacketId, why: &'static str) {
        self.drops.push((in_port, pkt, why));
    }
    /// Releases a packet the model consumed and will not send (counted as a model drop by the
    /// model itself, if it wants).
    pub fn free(&mut self, pkt: PacketId) {
        self.frees.push(pkt);
    }
}

/// A link failed or came back (both directions at once): its two ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkChange {
    /// One end: node and port.
    pub a: (NodeId, u16),
    /// The other end.
    pub b: (NodeId, u16),
    /// Whether the link is up now.
    pub up: bool,
}

impl LinkChange {
    /// `node`'s port on the link, when `node` is one of its ends.
    pub fn port_of(&self, node: NodeId) -> Option<u16> {
        if self.a.0 == node {
            Some(self.a.1)
        } else if self.b.0 == node {
            Some(self.b.1)
        } else {
            None
        }
    }
}

/// A system's extension of a switch. Every method has a do-nothing default. A model is `Any`
/// so that whoever attached it can read it back as its own type ([`crate::sim::Sim::model_as`]).
pub trait SwitchModel: std::any::Any + Send {
    /// A packet entered on `in_port`. Runs before the tables.
    fn on_ingress(&mut self, _cx: &mut SwitchCtx<'_>, _in_port: u16, _pkt: PacketId) -> Verdict {
        Verdict::Continue
    }
    /// An egress queue crossed one of the levels given by [`SwitchModel::watch_levels`]:
    /// `level` is how many levels the queue is now at or above.
    fn on_queue_level(&mut self, _cx: &mut SwitchCtx<'_>, _port: u16, _level: usize, _bytes: u64) {}
    /// A timer set with [`SwitchCtx::set_timer`] fired.
    fn on_timer(&mut self, _cx: &mut SwitchCtx<'_>, _token: u64) {}
    /// Port `port` has finished sending and nothing waits in its queue (called when
    /// [`SwitchModel::watch_port_idle`] says so): the moment a device that keeps its own
    /// output buffers, handing the kernel one frame at a time, may hand it the next.
    fn on_port_idle(&mut self, _cx: &mut SwitchCtx<'_>, _port: u16) {}
    /// A link of the network failed or came back ([`LinkChange::port_of`] says whether it is
    /// one of this switch's): every model hears every change at the moment it happens, so a
    /// model decides itself what its switch would learn, and when (the ends' PHYs see it at
    /// once; a control plane elsewhere by a notice, or by probes that stop coming back).
    fn on_link_change(&mut self, _cx: &mut SwitchCtx<'_>, _change: LinkChange) {}
    /// Whether the model wants [`SwitchModel::on_start`] (when attached, at the time it is).
    fn wants_start(&self) -> bool {
        false
    }
    /// The run starts (or the model was attached later): a model that does something of its own
    /// accord (sends probes, arms timers) begins here.
    fn on_start(&mut self, _cx: &mut SwitchCtx<'_>) {}
    /// Whether the model hears [`SwitchModel::on_port_idle`] (each transmission then ends by
    /// an event of its own, which the kernel otherwise leaves out when nothing waits).
    fn watch_port_idle(&self) -> bool {
        false
    }
    /// Byte levels to watch on every egress port.
    fn watch_levels(&self) -> Vec<u64> {
        Vec::new()
    }
    /// Packet-count levels to watch on every egress port (for example TCPU's Q_redirect);
    /// they count towards the `level` of [`SwitchModel::on_queue_level`] with the byte levels.
    fn watch_packet_levels(&self) -> Vec<u32> {
        Vec::new()
    }
    /// Counters to put in summary.json under the switch's name.
    fn report(&self) -> Vec<(String, f64)> {
        Vec::new()
    }
    /// Whether the model may pause the far ends of its links ([`SwitchCtx::pause_peer`]): those
    /// ports then keep what 802.3x needs from the first frame on.
    fn pauses_peers(&self) -> bool {
        false
    }
    /// On a cut-through switch, how many bytes of a frame must have come in before the kernel
    /// hands it to the model (`None`: the switch's `cut_through_header`). A model whose own
    /// pipeline counts from a frame's first byte, as the Axon device's does (Table 4.2), says
    /// `Some(0)`; the kernel still never lets a frame leave before its last bit is in.
    fn cut_through_header(&self) -> Option<u32> {
        None
    }
    /// The pcap link type of the frames leaving `port`, for a model whose frames there are not
    /// Ethernet (an Axon port: [`tandem_wire::pcap::LinkType::USER0`]); `None`: Ethernet.
    fn capture_link_type(&self, _port: u16) -> Option<tandem_wire::pcap::LinkType> {
        None
    }
    /// The counters a scenario's `summary.json` lists for a switch that carries a placed
    /// system (`[[system]]`, see [`crate::scenario::system`]): the few a user of that system
    /// looks at first, under names without the system's prefix.
    fn system_counters(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_and_priority() {
        let mut t = MatchTable::new(2);
        let out = |p| Action {
            output: Some(p),
            ..Action::default()
        };
        t.insert(Rule {
            priority: 1,
            matches: Match::Any,
            action: out(1),
        })
        .unwrap();
        t.insert(Rule {
            priority: 5,
            matches: Match::Flow(FlowId(7)),
            action: out(2),
        })
        .unwrap();
        assert_eq!(
            t.insert(Rule {
                priority: 9,
                matches: Match::Flow(FlowId(8)),
                action: out(3)
            }),
            Err(TableError::Full)
        );
        let p = Packet {
            flow: FlowId(7),
            ..Packet::default()
        };
        assert_eq!(t.lookup(&p).unwrap().action.output, Some(2));
        let q = Packet {
            flow: FlowId(9),
            ..Packet::default()
        };
        assert_eq!(t.lookup(&q).unwrap().action.output, Some(1));
        assert!(t.remove_flow(FlowId(7)));
        assert_eq!(t.lookup(&p).unwrap().action.output, Some(1));
        assert_eq!((t.hits, t.misses), (3, 0));
    }
}
