//! The ASIC table-operation channel: the one management path through which the CPU inserts and
//! deletes TCAM entries and reads their counters, at the rates the paper measured (§4: 14,144
//! inserts/s, 9,524 deletes/s, 86,956 counter reads/s).
//!
//! The model is a single serial server. An operation occupies the channel for `1 / rate` of its
//! kind (70.7 us per insert, 105 us per delete, 11.5 us per counter read) and takes effect
//! [`crate::TcpuConfig::rule_setup_latency`] after it leaves the channel. Three lanes feed it,
//! served in this order: the **urgent** lane (R_port, long-flow pins, attack rules), the
//! **placement** lane (a new flow taking a free or inactive TCAM slot, paper §3.1) and the
//! **bulk** lane (the periodic swap plan and counter reads). Operations are only started when
//! the channel is free at the current time (the core asks to be woken when it frees up), and a
//! ranking's counter read is split into batches of
//! [`crate::TcpuConfig::counter_read_batch`] entries (8 by default: 92 us), so an urgent
//! operation waits at most for the one operation in service: at most 105 us (a delete), well
//! within the 20-packet headroom of a 1 Gb/s port (240 us); a new flow's placement waits at
//! most that plus the urgent work, not for a whole table read (20.6 ms for 1,792 entries).
//!
//! Because service times are constant per kind and the latency is the same for all, operations
//! take effect in the order they start: a delete queued before an insert has taken effect by
//! the time the insert does, which is what keeps the TCAM at or under k entries during a swap.

use crate::types::{op_time, Rule, RuleMatch, Time};
use std::collections::VecDeque;

/// One table operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableOp {
    /// Insert (or replace, for the same match) a rule.
    Insert(Rule),
    /// Delete the rule with this match.
    Delete(RuleMatch),
    /// Read the byte counters of `entries` flow entries: one batch of a ranking's table read.
    ReadCounters {
        /// How many counters are read (each costs one counter-read slot).
        entries: u32,
        /// The last batch of the read: when it takes effect, all counters are reported.
        last: bool,
    },
}

/// An operation waiting for, or in, the channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuedOp {
    /// The operation.
    pub op: TableOp,
    /// For a flow delete: whether its completion frees a TCAM slot (false when the slot is
    /// already promised to the insert queued behind it, as in a swap).
    pub frees_slot: bool,
}

/// Which queue an operation waits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// R_port, long-flow pins, attack rules: served first.
    Urgent,
    /// New flows taking a free or inactive slot: served after the urgent lane.
    Placement,
    /// The swap plan and counter reads: served last.
    Bulk,
}

/// An operation that has left the channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dispatched {
    /// The operation.
    pub op: QueuedOp,
    /// When it started.
    pub start: Time,
    /// When it takes effect in the ASIC.
    pub done: Time,
}

/// Counts of operations started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChannelStats {
    /// Inserts started.
    pub inserts: u64,
    /// Deletes started.
    pub deletes: u64,
    /// Counter values read.
    pub counters_read: u64,
}

/// The serial, rate-limited table-operation channel.
#[derive(Debug, Clone)]
pub struct TableChannel {
    insert_t: Time,
    delete_t: Time,
    read_t: Time,
    latency: Time,
    busy_until: Time,
    urgent: VecDeque<QueuedOp>,
    placement: VecDeque<QueuedOp>,
    bulk: VecDeque<QueuedOp>,
    bulk_backlog: Time,
    inflight: VecDeque<Dispatched>,
    stats: ChannelStats,
}

impl TableChannel {
    /// A channel doing `inserts`, `deletes` and `reads` operations per second, each taking
    /// effect `latency` after it leaves the channel.
    pub fn new(inserts: u64, deletes: u64, reads: u64, latency: Time) -> TableChannel {
        TableChannel {
            insert_t: op_time(inserts),
            delete_t: op_time(deletes),
            read_t: op_time(reads),
            latency,
            busy_until: 0,
            urgent: VecDeque::new(),
            placement: VecDeque::new(),
            bulk: VecDeque::new(),
            bulk_backlog: 0,
            inflight: VecDeque::new(),
            stats: ChannelStats::default(),
        }
    }

    /// How long `op` occupies the channel.
    pub fn service(&self, op: &TableOp) -> Time {
        match op {
            TableOp::Insert(_) => self.insert_t,
            TableOp::Delete(_) => self.delete_t,
            TableOp::ReadCounters { entries, .. } => self.read_t.saturating_mul(Time::from(*entries)),
        }
    }

    /// Channel time of one insert.
    pub fn insert_time(&self) -> Time {
        self.insert_t
    }

    /// Channel time of one delete.
    pub fn delete_time(&self) -> Time {
        self.delete_t
    }

    /// Queues an operation at the back of a lane.
    pub fn push(&mut self, lane: Lane, op: QueuedOp) {
        match lane {
            Lane::Urgent => self.urgent.push_back(op),
            Lane::Placement => self.placement.push_back(op),
            Lane::Bulk => {
                self.bulk_backlog = self.bulk_backlog.saturating_add(self.service(&op.op));
                self.bulk.push_back(op);
            }
        }
    }

    /// Queues a bulk operation ahead of the other bulk ones (the counter read a ranking needs).
    pub fn push_bulk_front(&mut self, op: QueuedOp) {
        self.bulk_backlog = self.bulk_backlog.saturating_add(self.service(&op.op));
        self.bulk.push_front(op);
    }

    /// Drops the queued (not yet started) inserts with this match from every lane and returns
    /// how many there were. Used when the ASIC refuses a flow's entry: an insert of it still
    /// waiting must not take effect later, after the flow's slot has been given back.
    pub fn cancel_inserts(&mut self, m: RuleMatch) -> usize {
        let hit = |op: &QueuedOp| matches!(op.op, TableOp::Insert(r) if r.matches == m);
        let before = self.urgent.len() + self.placement.len() + self.bulk.len();
        self.urgent.retain(|op| !hit(op));
        self.placement.retain(|op| !hit(op));
        let mut freed: Time = 0;
        let insert_t = self.insert_t;
        self.bulk.retain(|op| {
            if hit(op) {
                freed = freed.saturating_add(insert_t);
                false
            } else {
                true
            }
        });
        self.bulk_backlog = self.bulk_backlog.saturating_sub(freed);
        before - self.urgent.len() - self.placement.len() - self.bulk.len()
    }

    /// Whether an insert with this match waits in a lane (not yet started).
    pub fn has_queued_insert(&self, m: RuleMatch) -> bool {
        let hit = |op: &QueuedOp| matches!(op.op, TableOp::Insert(r) if r.matches == m);
        self.urgent.iter().chain(&self.placement).chain(&self.bulk).any(hit)
    }

    /// Channel time booked by bulk operations not yet started.
    pub fn bulk_backlog(&self) -> Time {
        self.bulk_backlog
    }

    /// Channel time still owed to the operation in service at `now`.
    pub fn busy_for(&self, now: Time) -> Time {
        self.busy_until.saturating_sub(now)
    }

    /// Starts queued operations while the channel is free at `now` (urgent lane first, then
    /// placement, then bulk) and
    /// appends them to `out`; they are also kept in flight until [`TableChannel::pop_done`].
    pub fn dispatch(&mut self, now: Time, out: &mut Vec<Dispatched>) {
        while self.busy_until <= now {
            let op = if let Some(op) = self.urgent.pop_front() {
                op
            } else if let Some(op) = self.placement.pop_front() {
                op
            } else if let Some(op) = self.bulk.pop_front() {
                self.bulk_backlog = self.bulk_backlog.saturating_sub(self.service(&op.op));
                op
            } else {
                break;
            };
            let start = now.max(self.busy_until);
            let service = self.service(&op.op).max(1);
            self.busy_until = start.saturating_add(service);
            let done = self.busy_until.saturating_add(self.latency);
            match op.op {
                TableOp::Insert(_) => self.stats.inserts += 1,
                TableOp::Delete(_) => self.stats.deletes += 1,
                TableOp::ReadCounters { entries, .. } => self.stats.counters_read += u64::from(entries),
            }
            let d = Dispatched { op, start, done };
            self.inflight.push_back(d);
            out.push(d);
        }
    }

    /// Takes the oldest operation that has taken effect by `now`.
    pub fn pop_done(&mut self, now: Time) -> Option<Dispatched> {
        if self.inflight.front().is_some_and(|d| d.done <= now) {
            self.inflight.pop_front()
        } else {
            None
        }
    }

    /// The next time the channel needs attention: an operation taking effect, or the channel
    /// freeing up while operations wait.
    pub fn next_event(&self) -> Option<Time> {
        let done = self.inflight.front().map(|d| d.done);
        let free = (self.queued() > 0).then_some(self.busy_until);
        match (done, free) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Operations waiting in all lanes.
    pub fn queued(&self) -> usize {
        self.urgent.len() + self.placement.len() + self.bulk.len()
    }

    /// Counts of operations started so far.
    pub fn stats(&self) -> ChannelStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{FlowId, RuleAction, SEC};

    fn ins(f: u32) -> QueuedOp {
        QueuedOp {
            op: TableOp::Insert(Rule {
                priority: 1,
                matches: RuleMatch::Flow(FlowId(f)),
                action: RuleAction::ToCpu,
            }),
            frees_slot: false,
        }
    }

    #[test]
    fn cancel_inserts_drops_only_queued_inserts_of_that_match() {
        let mut ch = TableChannel::new(14_144, 9_524, 86_956, 0);
        ch.push(Lane::Bulk, ins(1));
        ch.push(Lane::Bulk, ins(2));
        ch.push(Lane::Urgent, ins(2));
        ch.push(
            Lane::Bulk,
            QueuedOp {
                op: TableOp::Delete(RuleMatch::Flow(FlowId(2))),
                frees_slot: false,
            },
        );
        let backlog = ch.bulk_backlog();
        let mut out = Vec::new();
        ch.dispatch(0, &mut out);
        assert_eq!(out.len(), 1, "the urgent insert of flow 2 is in service");
        assert_eq!(ch.cancel_inserts(RuleMatch::Flow(FlowId(2))), 1);
        assert_eq!(ch.queued(), 2, "flow 1's insert and flow 2's delete stay");
        assert_eq!(ch.bulk_backlog(), backlog - ch.insert_time());
        assert_eq!(ch.cancel_inserts(RuleMatch::Flow(FlowId(2))), 0);
    }

    #[test]
    fn serial_at_measured_rates_and_urgent_first() {
        let mut ch = TableChannel::new(14_144, 9_524, 86_956, 0);
        for f in 0..3 {
            ch.push(Lane::Bulk, ins(f));
        }
        let mut out = Vec::new();
        ch.dispatch(0, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].done, 70_701_358);
        // Busy: nothing more starts before the first op is done.
        ch.dispatch(out[0].done - 1, &mut out);
        assert_eq!(out.len(), 1);
        // An urgent op jumps the remaining bulk ones.
        ch.push(
            Lane::Urgent,
            QueuedOp {
                op: TableOp::Delete(RuleMatch::OutPort(3)),
                frees_slot: false,
            },
        );
        assert_eq!(ch.next_event(), Some(70_701_358));
        assert_eq!(ch.pop_done(70_701_358).map(|d| d.start), Some(0));
        ch.dispatch(70_701_358, &mut out);
        assert_eq!(out[1].op.op, TableOp::Delete(RuleMatch::OutPort(3)));
        assert_eq!(ch.queued(), 2);
        assert_eq!(ch.bulk_backlog(), 2 * 70_701_358);
    }

    #[test]
    fn inserts_per_second_bounded_by_rate() {
        let mut ch = TableChannel::new(14_144, 9_524, 86_956, 0);
        for f in 0..20_000 {
            ch.push(Lane::Bulk, ins(f));
        }
        let mut out = Vec::new();
        let mut now = 0;
        while now < SEC {
            while ch.pop_done(now).is_some() {}
            ch.dispatch(now, &mut out);
            match ch.next_event() {
                Some(t) => now = t,
                None => break,
            }
        }
        let started_in_first_second = out.iter().filter(|d| d.start < SEC).count();
        assert_eq!(started_in_first_second, 14_144);
    }
}
