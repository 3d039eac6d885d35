//! One partition of a partitioned run ([`crate::parallel`]): the simulation handles the events
//! of the nodes it owns, hands packets bound for other partitions' nodes over as
//! [`Transfer`]s, and orders its events by keys that do not depend on the partitioning.
//!
//! The key of an event is (the node whose handling scheduled it, that node's own count of
//! events it scheduled): the same event gets the same key however the nodes are split, so the
//! events of each node are handled in the same order, and every result is the same, for any
//! number of partitions.

use super::{FlowResult, Sim};
use crate::event::{Event, EventQueue};
use crate::packet::{FlowId, NodeId, Packet};
use crate::tcp::{TcpEndpoint, TcpStats};
use crate::time::Time;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Bits of a key that count a node's events (the node's id is above them): 2^40 events per
/// node, and node ids up to 2^24.
const COUNT_BITS: u32 = 40;

/// A partition's own state.
pub(crate) struct PartState {
    /// This partition's number.
    pub(crate) index: u16,
    /// Each node's partition.
    pub(crate) owner: Arc<Vec<u16>>,
    /// Per node (and the two pseudo-nodes after them), the events it has scheduled.
    counts: Vec<u64>,
    /// The node whose event is being handled (its count keys what that event schedules).
    pub(crate) cur: u32,
    /// The pseudo-node of link failures (global events every partition handles).
    pub(crate) link_node: u32,
    /// The pseudo-node of queue sampling (every partition samples its own nodes).
    sample_node: u32,
    /// Packets sent to other partitions' nodes since the outbox was last emptied.
    pub(crate) outbox: Vec<Transfer>,
    /// Queue samples go on up to this time.
    pub(crate) sample_until: Time,
    /// When each flow that failed here failed, as (time, key of the event it failed in).
    failures: FxHashMap<u32, (Time, u64)>,
    /// Flows whose endpoint here went quiet in this window with none of their packets here
    /// ([`Sim::retire_quiet_flows`]): candidates for retirement, published at its end.
    pub(crate) quiet: Vec<u32>,
    /// Every partition's candidates of the window before, in order: judged at this window's
    /// end, where the run is cut the same way in every partition.
    pending: Vec<u32>,
}

impl PartState {
    /// The next key of the node being handled.
    #[inline]
    pub(crate) fn next_key(&mut self) -> u64 {
        let c = &mut self.counts[self.cur as usize];
        *c += 1;
        (u64::from(self.cur) << COUNT_BITS) | *c
    }

    /// A flow failed here at `at` (time and event key).
    pub(crate) fn note_failure(&mut self, flow: FlowId, at: (Time, u64)) {
        self.failures.insert(flow.0, at);
    }

    /// A flow's failure here no longer stands (a listener opened a new connection for it).
    pub(crate) fn forget_failure(&mut self, flow: FlowId) {
        self.failures.remove(&flow.0);
    }
}

/// What crosses to another partition: the event it will be there.
pub(crate) struct Transfer {
    /// When it arrives (a packet's header, for a cut-through switch).
    pub(crate) at: Time,
    /// Its event's order key.
    pub(crate) key: u64,
    /// The receiving node and port.
    pub(crate) node: NodeId,
    pub(crate) port: u16,
    /// A packet, or an 802.3x PAUSE.
    pub(crate) what: Carried,
}

/// What a [`Transfer`] carries.
pub(crate) enum Carried {
    /// A packet (`Event::Arrive`).
    Packet {
        /// When its last bit is in.
        last_bit: Time,
        /// The packet.
        packet: Packet,
        /// Its frame bytes, if it has some.
        frame: Option<Vec<u8>>,
    },
    /// A PAUSE's last byte (`Event::Pause`).
    Pause {
        /// The pause time.
        duration: Time,
    },
}

impl Sim {
    /// Makes this freshly built simulation partition `index` of a run whose nodes are split as
    /// `owner` says: its events are rescheduled with partition-independent keys (the starts of
    /// the flows whose sources it owns, and queue sampling up to `sample_until`). Call before
    /// anything else is scheduled (link failures come after, through
    /// [`Sim::schedule_link`]).
    pub(crate) fn make_partition(&mut self, index: u16, owner: Arc<Vec<u16>>, sample_until: Time) {
        let n = self.nodes.len() as u32;
        assert!(n < (1 << (64 - COUNT_BITS)) - 2, "too many nodes for a partitioned run");
        let mut part = PartState {
            index,
            owner,
            counts: vec![0; n as usize + 2],
            cur: 0,
            link_node: n,
            sample_node: n + 1,
            outbox: Vec::new(),
            sample_until,
            failures: FxHashMap::default(),
            quiet: Vec::new(),
            pending: Vec::new(),
        };
        let mut events = EventQueue::new();
        for f in &self.flows {
            if part.owner[f.spec.src.0 as usize] == index {
                part.cur = f.spec.src.0;
                events.push_keyed(f.spec.start, part.next_key(), Event::FlowStart { flow: f.spec.id });
            }
        }
        if self.options.queue_sample_interval > 0 {
            part.cur = part.sample_node;
            events.push_keyed(0, part.next_key(), Event::Sample);
        }
        self.events = events;
        self.part = Some(Box::new(part));
    }

    /// Before handling `ev` in a partition: what it schedules is keyed by its node; the
    /// events every partition handles (link changes, samples) count once, in partition 0.
    #[inline]
    pub(super) fn note_partition_event(&mut self, ev: Event) {
        let key_node = match ev {
            Event::Arrive { node, .. }
            | Event::ArriveRouted { node, .. }
            | Event::ArriveHost { node, .. }
            | Event::Enqueue { node, .. }
            | Event::TxDone { node, .. }
            | Event::SwitchTimer { node, .. }
            | Event::Pause { node, .. }
            | Event::Fork { node, .. }
            | Event::ModelStart { node } => node.0,
            Event::FlowTimer { flow, side } => {
                let s = &self.flows[flow.0 as usize].spec;
                if side == 0 {
                    s.src.0
                } else {
                    s.dst.0
                }
            }
            Event::FlowStart { flow } | Event::UdpSend { flow } => self.flows[flow.0 as usize].spec.src.0,
            Event::Link { .. } | Event::Sample => {
                let Some(p) = self.part.as_deref_mut() else { return };
                p.cur = if matches!(ev, Event::Link { .. }) {
                    p.link_node
                } else {
                    p.sample_node
                };
                if p.index != 0 {
                    self.processed -= 1;
                }
                return;
            }
        };
        if let Some(p) = self.part.as_deref_mut() {
            p.cur = key_node;
        }
    }

    /// The packets this partition sent to others since the last call.
    pub(crate) fn take_outbox(&mut self) -> Vec<Transfer> {
        self.part
            .as_deref_mut()
            .map(|p| std::mem::take(&mut p.outbox))
            .unwrap_or_default()
    }

    /// A packet from another partition: its arrival joins this partition's events.
    pub(crate) fn accept(&mut self, t: Transfer) {
        let ev = match t.what {
            Carried::Packet {
                last_bit,
                packet,
                frame,
            } => {
                let id = self.pool.insert(packet);
                if let Some(f) = frame {
                    self.pool.set_frame(id, f);
                }
                let rest = self.rest(id, t.at, last_bit);
                Event::Arrive {
                    node: t.node,
                    port: t.port,
                    pkt: id,
                    rest,
                }
            }
            Carried::Pause { duration } => Event::Pause {
                node: t.node,
                port: t.port,
                duration,
            },
        };
        self.events.push_keyed(t.at, t.key, ev);
    }

    /// The earliest pending event's time (`Time::MAX` when none; ends of transmissions that
    /// have no event are not counted: they need no handling).
    pub(crate) fn next_event_time(&self) -> Time {
        self.events.peek_time().unwrap_or(Time::MAX)
    }

    /// Packets this partition holds now.
    pub(crate) fn packets_held(&self) -> usize {
        self.pool.live()
    }

    /// The flows that went quiet here in the window that just ended, each once and in order,
    /// less those this partition still holds something of (their candidacy comes again when
    /// their endpoint here next goes quiet).
    pub(crate) fn take_quiet(&mut self) -> Vec<u32> {
        let Some(part) = self.part.as_deref_mut() else {
            return Vec::new();
        };
        let mut quiet = std::mem::take(&mut part.quiet);
        quiet.sort_unstable();
        quiet.dedup();
        quiet.retain(|&f| self.holds_nothing_of(f, &[]));
        quiet
    }

    /// At a window's end, with `outbox` the packets this partition has just sent to others:
    /// the flows of the previous window's candidates that this partition still holds something
    /// of (a packet, here or on its way out, or an endpoint with a timer or not yet started).
    /// A flow no partition names has no packet anywhere and no endpoint that can act again.
    pub(crate) fn vetoes(&self, outbox: &[Transfer]) -> Vec<u32> {
        let Some(part) = self.part.as_deref() else {
            return Vec::new();
        };
        if part.pending.is_empty() {
            return Vec::new();
        }
        let mut leaving: Vec<u32> = outbox
            .iter()
            .filter_map(|t| match &t.what {
                Carried::Packet { packet, .. } => Some(packet.flow.0),
                Carried::Pause { .. } => None,
            })
            .collect();
        leaving.sort_unstable();
        leaving.dedup();
        part.pending
            .iter()
            .copied()
            .filter(|&f| !self.holds_nothing_of(f, &leaving))
            .collect()
    }

    /// Whether this partition holds nothing of `flow`: none of its packets (`leaving`, sorted:
    /// the flows of the packets on their way to other partitions), and its endpoints here, if
    /// any, started and waiting for no timer.
    fn holds_nothing_of(&self, flow: u32, leaving: &[u32]) -> bool {
        let Some(part) = self.part.as_deref() else {
            return false;
        };
        let f = &self.flows[flow as usize];
        if f.retired.is_some() {
            return true;
        }
        if self.pool.flow_live(FlowId(flow)) > 0 || leaving.binary_search(&flow).is_ok() {
            return false;
        }
        let own = |n: NodeId| part.owner[n.0 as usize] == part.index;
        let sides = [(own(f.spec.src), &f.eps[0]), (own(f.spec.dst), &f.eps[1])];
        sides.iter().enumerate().all(|(side, (here, ep))| {
            !here
                || match ep.as_deref() {
                    Some(ep) => ep.next_timer().is_none(),
                    // A client not started yet (its start is due); a server that never came
                    // into being holds nothing.
                    None => side == 1,
                }
        })
    }

    /// After the barrier that ends a window: `vetoed` (sorted) are the flows of the previous
    /// window's candidates that some partition still held something of; the others are
    /// retired here (their endpoints in this partition, if any). `quiet` (sorted, every
    /// partition's candidates of this window) are judged at the next window's end.
    pub(crate) fn retire_unvetoed(&mut self, vetoed: &[u32], quiet: Vec<u32>) {
        let Some(part) = self.part.as_deref_mut() else {
            return;
        };
        let pending = std::mem::replace(&mut part.pending, quiet);
        let (owner, index) = (part.owner.clone(), part.index);
        for flow in pending {
            if vetoed.binary_search(&flow).is_ok() {
                continue;
            }
            let f = &mut self.flows[flow as usize];
            if f.retired.is_some() || f.eps.iter().all(Option::is_none) {
                continue;
            }
            f.keep_counters_only();
            // Counted once, where the client is.
            if owner[f.spec.src.0 as usize] == index {
                self.retired_flows += 1;
            }
        }
    }

    /// Merges the partitions of a finished run into the first, as one simulation whose nodes,
    /// flows, samples, captures and counts are the run's: each node's state from its owner,
    /// each flow's endpoints from their hosts' owners and its result from both. `now` is
    /// where the run stands; `peak` the most packets in flight at any window's end.
    pub(crate) fn merge(mut parts: Vec<Sim>, now: Time, peak: usize) -> Sim {
        let mut first = parts.remove(0);
        let owner = first.part.as_ref().map(|p| p.owner.clone()).unwrap_or_default();
        let part_of = |node: NodeId| usize::from(owner[node.0 as usize]);
        // Every partition but the first, by its number (1..).
        let mut others: Vec<Sim> = parts;
        for i in 0..first.nodes.len() {
            let o = part_of(NodeId(i as u32));
            if o != 0 {
                std::mem::swap(&mut first.nodes[i], &mut others[o - 1].nodes[i]);
            }
        }
        for fi in 0..first.flows.len() {
            let (src, dst) = (first.flows[fi].spec.src, first.flows[fi].spec.dst);
            let (ps, pd) = (part_of(src), part_of(dst));
            let take = |others: &mut Vec<Sim>, first: &mut Sim, p: usize| -> super::FlowState {
                let s = if p == 0 { first } else { &mut others[p - 1] };
                let f = &mut s.flows[fi];
                super::FlowState {
                    spec: f.spec,
                    eps: [f.eps[0].take(), f.eps[1].take()],
                    timer_at: f.timer_at,
                    result: f.result.clone(),
                    udp_sent: f.udp_sent,
                    udp_next: f.udp_next,
                    client_failed: f.client_failed,
                    passive_failed_last: f.passive_failed_last,
                    retired: f.retired.take(),
                }
            };
            let a = take(&mut others, &mut first, ps);
            if ps == pd {
                first.flows[fi] = a;
                continue;
            }
            let mut b = take(&mut others, &mut first, pd);
            let mut merged = a;
            merged.eps[1] = b.eps[1].take();
            if merged.retired.is_some() || b.retired.is_some() {
                // Retired on both sides at once (one side may never have had an endpoint).
                let stats = |r: Option<Box<[Option<TcpStats>; 2]>>, ep: &Option<Box<TcpEndpoint>>, side: usize| match r
                {
                    Some(r) => r[side].clone(),
                    None => ep.as_deref().map(|e| e.stats().clone()),
                };
                let s0 = stats(merged.retired.take(), &merged.eps[0], 0);
                let s1 = stats(b.retired.take(), &merged.eps[1], 1);
                merged.retired = Some(Box::new([s0, s1]));
                merged.eps = [None, None];
            }
            merged.result = combine(&merged.result, &b.result);
            // A flow that failed on both sides failed last where it failed later (as one
            // simulation would have written it last).
            if b.result.failed.is_some()
                && merged.result.failed.is_some()
                && last_failure_at(&others, &first, pd, fi) > last_failure_at(&others, &first, ps, fi)
            {
                merged.result.failed = b.result.failed;
            }
            first.flows[fi] = merged;
        }
        let mut samples = std::mem::take(&mut first.samples);
        let mut processed = first.processed;
        let mut taps = std::mem::take(&mut first.taps);
        for s in &mut others {
            samples.append(&mut s.samples);
            processed += s.processed;
            first.retired_flows += s.retired_flows;
            taps.append(&mut s.taps);
        }
        // One simulation takes its samples in time order and, at each time, node by node
        // (or in the order of the ports it was asked to sample).
        let rank: FxHashMap<(NodeId, u16), usize> = first
            .options
            .sample_ports
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, i))
            .collect();
        samples.sort_by_key(|q| {
            let r = rank
                .get(&(q.node, q.port))
                .copied()
                .unwrap_or(((q.node.0 as usize) << 16) | usize::from(q.port));
            (q.time, r)
        });
        first.samples = samples;
        first.processed = processed;
        for n in &mut first.nodes {
            for p in &mut n.ports {
                p.tap = None;
            }
        }
        first.taps = taps;
        first.now = now;
        first.peak_in_flight = Some(peak);
        first.unscheduled_done = 0;
        first
    }
}

/// When a flow last failed in partition `p`, if it did.
fn last_failure_at(others: &[Sim], first: &Sim, p: usize, flow: usize) -> Option<(Time, u64)> {
    let s = if p == 0 { first } else { &others[p - 1] };
    s.part.as_ref().and_then(|x| x.failures.get(&(flow as u32)).copied())
}

/// A flow's result from its source's partition (`a`) and its destination's (`b`): each field
/// is written on one side only (counts add, times and reasons are taken where they were set).
fn combine(a: &FlowResult, b: &FlowResult) -> FlowResult {
    FlowResult {
        start: a.start,
        end: a.end.or(b.end),
        delivered: a.delivered + b.delivered,
        rx_packets: a.rx_packets + b.rx_packets,
        failed: a.failed.or(b.failed),
        delay_sum: a.delay_sum + b.delay_sum,
    }
}
