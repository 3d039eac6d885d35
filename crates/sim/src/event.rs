//! The event queue: events come out ordered by (time, insertion sequence), so events at equal
//! times run in the order they were scheduled. The queue is generic over the event type: the
//! simulator's [`Event`] by default, and any small `Copy` event of a model's own.

use crate::packet::{FlowId, NodeId, PacketId};
use crate::time::Time;

/// Something that happens at a point in simulated time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The packet has arrived at `node` on `port` (its last bit, or for a cut-through switch its
    /// header; `rest` says when the whole packet is in).
    Arrive {
        /// Receiving node.
        node: NodeId,
        /// Ingress port.
        port: u16,
        /// The packet.
        pkt: PacketId,
        /// Picoseconds from the event's time to the packet's last bit (0 for store-and-forward);
        /// [`FAR`] when that does not fit (the simulator keeps the time aside).
        rest: u32,
    },
    /// An [`Event::Arrive`] of a whole packet (its last bit, `rest` 0) at a switch whose egress
    /// port for it was chosen as it was sent (`out`): where nothing can change that choice
    /// before it arrives (a store-and-forward switch without a model or tables, in a run
    /// without link changes), so that the loop can fetch the egress port's state ahead of
    /// time ([`crate::prefetch`]). Handled as the `Arrive` it stands for; the choice is used
    /// only if it still holds.
    ArriveRouted {
        /// Receiving switch.
        node: NodeId,
        /// Ingress port.
        port: u16,
        /// The packet.
        pkt: PacketId,
        /// The egress port its routing chose.
        out: u16,
    },
    /// An [`Event::Arrive`] of a whole packet (its last bit, `rest` 0) at a host, with the
    /// packet's flow, so that the loop can fetch the flow's state ahead of time
    /// ([`crate::prefetch`]). Handled as the `Arrive` it stands for.
    ArriveHost {
        /// Receiving host.
        node: NodeId,
        /// Ingress port.
        port: u16,
        /// The packet.
        pkt: PacketId,
        /// The packet's flow.
        flow: FlowId,
    },
    /// A packet has passed a switch's pipeline latency and joins an egress queue.
    Enqueue {
        /// Switch.
        node: NodeId,
        /// Egress port.
        port: u16,
        /// The packet.
        pkt: PacketId,
        /// Picoseconds from the event's time to the packet's last bit at the switch (as in
        /// `Arrive`).
        rest: u32,
    },
    /// The port has finished serialising its current packet and may start the next.
    TxDone {
        /// Node.
        node: NodeId,
        /// Port.
        port: u16,
    },
    /// A TCP endpoint's timer may be due (`side` 0 = client, 1 = server).
    FlowTimer {
        /// Flow.
        flow: FlowId,
        /// Which endpoint.
        side: u8,
    },
    /// A workload flow starts.
    FlowStart {
        /// Flow.
        flow: FlowId,
    },
    /// A UDP source sends its next datagram.
    UdpSend {
        /// Flow.
        flow: FlowId,
    },
    /// A switch model's timer.
    SwitchTimer {
        /// Switch.
        node: NodeId,
        /// The model's own token.
        token: u64,
    },
    /// An IEEE 802.3x PAUSE frame's last byte reaches `node` on `port`: once the frame on
    /// the wire (if any) has gone, the port starts nothing for `duration` (0: go on now).
    Pause {
        /// The paused node.
        node: NodeId,
        /// Its port.
        port: u16,
        /// The pause time.
        duration: Time,
    },
    /// The link at `port` of `node` fails (`up` false) or comes back (`up` true), both
    /// directions at once.
    Link {
        /// One end's node.
        node: NodeId,
        /// Its port.
        port: u16,
        /// Whether the link comes back.
        up: bool,
    },
    /// [`crate::config::TcpFlavor::Ns3`]: a host's listening socket takes the connection
    /// request `pkt` (a SYN that found no connection, or one its peer gave up) in an event of
    /// its own at the time it arrived, as ns-3 3.37's `TcpSocketBase::ProcessListen` forks
    /// the new socket with `Simulator::ScheduleNow(&CompleteFork)`: the SYN-ACK leaves after
    /// every event already scheduled for that time.
    Fork {
        /// The listening host.
        node: NodeId,
        /// The SYN.
        pkt: PacketId,
    },
    /// A switch model that asked for it ([`crate::switch::SwitchModel::wants_start`]) starts.
    ModelStart {
        /// Switch.
        node: NodeId,
    },
    /// Periodic queue sampling.
    Sample,
}

/// `rest` of an [`Event::Arrive`] or [`Event::Enqueue`] whose last bit is 2^32 - 1 ps (4.3 ms)
/// or more after the event (cut-through on a slow link): the time is kept by the simulator.
/// The offset keeps the event at 16 bytes, so that a queued event with its time and sequence
/// number takes 32.
pub const FAR: u32 = u32::MAX;

/// Pending events, earliest first, ties in scheduling order.
///
/// Two parts. The *run* is a sorted vector of the earliest pending events: every pending
/// event at or before `hi` is in it, in (time, sequence) order, and popping takes its front.
/// Later events wait in a monotone radix heap (Ahuja, Mehlhorn, Orlin & Tarjan 1990) with
/// 8-bit digits: an event at time `t > hi` waits in bucket (`level`, `digit`), where `level`
/// is the highest 8-bit digit in which `t` differs from `base` (a time no bucketed event
/// precedes) and `digit` is `t`'s value there. Pushing appends to a bucket (or inserts into
/// the run when `t <= hi`).
///
/// When the run is used up it is refilled from the lowest occupied bucket, which holds the
/// earliest events: a level-0 bucket (one time), a small bucket, or one of up to 256 events
/// within 65.5 ns is sorted and becomes the run; a larger one gives up its earliest events
/// and re-files the rest on lower levels around them as the new `base`. Each event moves at
/// most 8 times and every move is a vector append. While few events are pending (the common
/// case in small scenarios) they all live in the run (`hi` = `Time::MAX`): a push is a short
/// sorted insert and a pop takes the front; the run spills into the buckets when it grows
/// long.
///
/// Ties: every event carries its sequence number (the count of pushes and reservations when
/// it was scheduled) and the run is sorted by (time, sequence), so events leave in exactly the
/// order of a binary heap with a sequence-number tie-break. A plain push takes the next
/// number; [`EventQueue::reserve_seq`] and [`EventQueue::push_reserved`] let a caller decide
/// later whether an event is needed at all and, if it is, put it where it would have been
/// (the simulator's port uses this for the end of a transmission that nothing may wait for).
/// Pushes come in sequence order almost always, so the sorts (insertion sorts, after a
/// counting sort on one digit for a bucket of up to 256 events) mostly confirm an order that
/// is already there; every sort is stable.
#[derive(Debug, Clone)]
pub struct EventQueue<E = Event> {
    /// Sorted pending events at or before `hi`; those before `head` have been popped.
    run: Vec<Slot<E>>,
    head: usize,
    /// Every pending event at or before `hi` is in the run, every later one in a bucket.
    hi: Time,
    /// No bucketed event is earlier; buckets are relative to it.
    base: Time,
    /// `buckets[level * 256 + digit]`.
    buckets: Vec<Vec<Slot<E>>>,
    /// Per level, a bit per occupied digit.
    occupied: [[u64; 4]; LEVELS],
    /// A bit per level with an occupied bucket.
    levels: u32,
    /// Emptied large buckets' vectors, kept (at most [`SPARES`]) for the next bucket filed
    /// at level 2 or above, so that a bucket that fills up again to thousands of events
    /// does not grow from nothing by reallocating and copying (at data-center scale a level-2
    /// bucket, 16.8 us of events, holds tens of thousands).
    spare: Vec<Vec<Slot<E>>>,
    /// Room for [`sort_by_digit`].
    scratch: Vec<Slot<E>>,
    len: usize,
    seq: u64,
    /// The sequence number of the event popped last.
    popped: u64,
}

/// A pending event: its time, its sequence number (the tie-break) and the event.
type Slot<E> = (Time, u64, E);

/// 8-bit digits of a 64-bit time.
const LEVELS: usize = 8;
const DIGITS: usize = 256;
/// A bucket this small becomes the run by sorting it.
const SORT_BUCKET: usize = 16;
/// ... and so does one up to this large whose times lie close together (a level at most
/// [`SORT_WHOLE_LEVEL`]): one sort instead of re-filing each of its events on a lower level,
/// which writes each to a bucket of its own and costs a cache miss apiece when thousands of
/// events are pending (a data-center run). A run that spans little time takes few of the
/// events pushed while it lasts, so inserting into it stays rare.
const SORT_WHOLE: usize = 256;
/// Level 2: a bucket spans 2^16 ps (65.5 ns).
const SORT_WHOLE_LEVEL: usize = 2;
/// A refill keeps adding the next small buckets to the run until it holds this many events
/// (so that the caller can look ahead at coming events and prefetch for them).
const RUN_TARGET: usize = 48;
/// ... when at least this many events are pending.
const MERGE_PENDING: usize = 4096;
/// At most this many pending events: keep them all in the run.
const SMALL: usize = 8;
/// ... until the run holds more than this many.
const SPILL: usize = 16;

impl<E> Default for EventQueue<E> {
    fn default() -> EventQueue<E> {
        EventQueue {
            run: Vec::new(),
            head: 0,
            hi: Time::MAX,
            base: 0,
            buckets: (0..LEVELS * DIGITS).map(|_| Vec::new()).collect(),
            occupied: [[0; 4]; LEVELS],
            levels: 0,
            spare: Vec::new(),
            scratch: Vec::new(),
            len: 0,
            seq: 0,
            popped: 0,
        }
    }
}

/// An emptied bucket keeps its memory for reuse up to this many entries; a bigger one gives it
/// back, so 2,048 buckets that were each large once do not hold their peak sizes forever.
const KEEP: usize = 256;
/// At most this many emptied large buckets' vectors are kept for reuse.
const SPARES: usize = 4;

/// Orders `v` by the 8-bit digit of its times at bit `shift`, keeping the order of events
/// with equal digits (a counting sort through `scratch`, which it leaves holding the old
/// order).
fn sort_by_digit<E: Copy>(v: &mut [Slot<E>], scratch: &mut Vec<Slot<E>>, shift: usize) {
    let digit = |e: &Slot<E>| (e.0 >> shift) as usize & (DIGITS - 1);
    let mut at = [0u32; DIGITS];
    for e in v.iter() {
        at[digit(e)] += 1;
    }
    let mut sum = 0;
    for a in &mut at {
        let n = *a;
        *a = sum;
        sum += n;
    }
    scratch.clear();
    scratch.extend_from_slice(v);
    for e in scratch.iter() {
        let d = digit(e);
        v[at[d] as usize] = *e;
        at[d] += 1;
    }
}

/// Insertion sort by (time, sequence) (buckets here are small or nearly sorted, so this beats
/// a merge sort and never allocates; on sorted input it is one comparison per event).
fn sort_by_time<E: Copy>(v: &mut [Slot<E>]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && (v[j - 1].0, v[j - 1].1) > (x.0, x.1) {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> EventQueue<E> {
        EventQueue::default()
    }

    /// Schedules `event` at `time` (which may even precede the last event popped: it then
    /// comes out next).
    #[inline]
    pub fn push(&mut self, time: Time, event: E) {
        self.seq += 1;
        self.push_reserved(time, self.seq, event);
    }

    /// Takes the next sequence number without scheduling anything: a caller that may or may
    /// not need an event later (and then schedules it with [`EventQueue::push_reserved`])
    /// keeps every other event's sequence number, and so the order of ties, as if it had
    /// pushed one now.
    #[inline]
    pub fn reserve_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Schedules `event` at `time` with a sequence number from [`EventQueue::reserve_seq`]:
    /// it leaves after every event at the same time with a smaller sequence number and before
    /// every one with a larger, exactly where a push at the moment of the reservation would
    /// have put it. A `time` before the last event popped, or at its time with a smaller
    /// sequence number, is not allowed.
    #[inline]
    pub fn push_reserved(&mut self, time: Time, seq: u64, event: E) {
        debug_assert!(seq <= self.seq);
        self.len += 1;
        if time > self.hi {
            self.file(time, seq, event);
        } else {
            self.insert_run(time, seq, event);
        }
    }

    /// Schedules `event` at `time` with an order key of the caller's own instead of a
    /// sequence number (a partitioned run's keys: [`crate::parallel`]): among events at one
    /// time it leaves in key order, except that an event keyed below the one popped last, at
    /// that event's time, leaves next (before any event still pending).
    #[inline]
    pub fn push_keyed(&mut self, time: Time, key: u64, event: E) {
        self.len += 1;
        if time > self.hi {
            self.file(time, key, event);
        } else {
            self.insert_run(time, key, event);
        }
    }

    /// Puts an event later than `hi` into its bucket.
    #[inline]
    fn file(&mut self, time: Time, seq: u64, event: E) {
        debug_assert!(time > self.hi && time > self.base);
        let level = (63 - (time ^ self.base).leading_zeros() as usize) / 8;
        let digit = (time >> (8 * level)) as usize & (DIGITS - 1);
        let bucket = &mut self.buckets[level * DIGITS + digit];
        if level == 0 && bucket.last().is_some_and(|l| l.1 > seq) {
            // A level-0 bucket holds one time and stays in sequence order (it becomes a run
            // without a sort): an event with a reserved number goes in front of later ones.
            let at = bucket.partition_point(|e| e.1 < seq);
            bucket.insert(at, (time, seq, event));
        } else {
            if level >= 2 && bucket.capacity() == 0 {
                if let Some(v) = self.spare.pop() {
                    *bucket = v;
                }
            }
            bucket.push((time, seq, event));
        }
        self.occupied[level][digit / 64] |= 1 << (digit % 64);
        self.levels |= 1 << level;
    }

    /// Inserts an event at or before `hi` into the run, after every event at the same time
    /// with a smaller sequence number.
    #[inline]
    fn insert_run(&mut self, time: Time, seq: u64, event: E) {
        // Insertion from the back: new events tend to be among the latest.
        self.run.push((time, seq, event));
        let mut j = self.run.len() - 1;
        while j > self.head && (self.run[j - 1].0, self.run[j - 1].1) > (time, seq) {
            self.run[j] = self.run[j - 1];
            j -= 1;
        }
        self.run[j] = (time, seq, event);
        if self.hi == Time::MAX && self.run.len() - self.head > SPILL {
            self.spill();
        }
    }

    /// Ends the all-in-the-run mode: keeps the earliest time's events and files the rest
    /// around it (the buckets are empty in that mode).
    #[cold]
    fn spill(&mut self) {
        debug_assert_eq!(self.levels, 0);
        let first = self.run[self.head].0;
        self.base = first;
        self.hi = first;
        let keep = self.head + self.run[self.head..].partition_point(|e| e.0 == first);
        let rest: Vec<Slot<E>> = self.run.drain(keep..).collect();
        for (t, s, e) in rest {
            self.file(t, s, e);
        }
    }

    /// The lowest occupied bucket's level and index (`levels` must not be 0).
    #[inline]
    fn lowest(&self) -> (usize, usize) {
        let level = self.levels.trailing_zeros() as usize;
        let occ = &self.occupied[level];
        let w = occ.iter().position(|&w| w != 0).unwrap_or(0);
        let digit = w * 64 + occ[w].trailing_zeros() as usize;
        (level, level * DIGITS + digit)
    }

    /// Takes the lowest occupied bucket out of the bitmaps and returns its index.
    #[inline]
    fn take_lowest(&mut self) -> (usize, usize) {
        let (level, i) = self.lowest();
        let digit = i - level * DIGITS;
        let occ = &mut self.occupied[level];
        occ[digit / 64] &= !(1 << (digit % 64));
        if occ.iter().all(|&w| w == 0) {
            self.levels &= !(1 << level);
        }
        (level, i)
    }

    /// Refills the used-up run from the buckets; false when nothing is pending.
    #[inline(never)]
    fn refill(&mut self) -> bool {
        self.run.clear();
        self.head = 0;
        if self.levels == 0 {
            return false;
        }
        if self.len <= SMALL {
            // Few left: all of them into the run. Equal times share a bucket, in order, and
            // the sort is stable.
            while self.levels != 0 {
                let (_, i) = self.take_lowest();
                self.run.append(&mut self.buckets[i]);
            }
            sort_by_time(&mut self.run);
            self.hi = Time::MAX;
            return true;
        }
        let (level, i) = self.take_lowest();
        let n = self.buckets[i].len();
        if level == 0 || n <= SORT_BUCKET || (level <= SORT_WHOLE_LEVEL && n <= SORT_WHOLE) {
            let mut sort = level > 0;
            // Up to `SORT_WHOLE` events in scheduling order, not few enough for an insertion
            // sort alone.
            let whole = level > 0 && n > SORT_BUCKET;
            // One time, or few events: sorted, the bucket is the run. Later buckets hold
            // only later times than any of these, so `base` stays valid.
            std::mem::swap(&mut self.run, &mut self.buckets[i]);
            if self.buckets[i].capacity() > KEEP {
                self.buckets[i] = Vec::new();
            }
            if whole {
                // The bucket's times share every digit above its level's: ordered by the
                // digit below (a counting sort), only events within one such digit (256 ps
                // at level 1 and 2) can still be out of order, which the insertion sort below
                // puts right at little cost.
                sort_by_digit(&mut self.run, &mut self.scratch, 8 * (level - 1));
            }
            // Runs of one or two events leave the caller nothing to look ahead at
            // (`upcoming`): with many events pending (a working set beyond the caches,
            // where looking ahead pays) the next lowest buckets join while they are small.
            // With few pending, a longer run only makes insertions into it dearer. They hold
            // only later times, in bucket order, so one sort orders the whole run.
            while self.len >= MERGE_PENDING && self.run.len() < RUN_TARGET && self.levels != 0 {
                let (level, i) = self.lowest();
                let n = self.buckets[i].len();
                if (level > 0 && n > SORT_BUCKET) || self.run.len() + n > RUN_TARGET + SORT_BUCKET {
                    break;
                }
                self.take_lowest();
                self.run.append(&mut self.buckets[i]);
                sort |= level > 0;
            }
            if sort {
                sort_by_time(&mut self.run);
            }
            self.hi = self.run[self.run.len() - 1].0;
            return true;
        }
        // A large bucket: its earliest time becomes `base` (every other bucket stays valid
        // around it, as in any radix heap) and the rest moves to lower levels.
        let mut from = std::mem::take(&mut self.buckets[i]);
        let min = from.iter().map(|e| e.0).min().unwrap_or(self.base);
        self.base = min;
        self.hi = min;
        for &(t, s, e) in &from {
            if t == min {
                self.run.push((t, s, e));
            } else {
                self.file(t, s, e);
            }
        }
        sort_by_time(&mut self.run);
        from.clear();
        if from.capacity() <= KEEP {
            self.buckets[i] = from;
        } else if self.spare.len() < SPARES {
            self.spare.push(from);
        }
        true
    }

    /// Removes and returns the earliest event if it is at or before `until`.
    #[inline]
    pub fn pop_until(&mut self, until: Time) -> Option<(Time, E)> {
        if self.head == self.run.len() && !self.refill() {
            return None;
        }
        let (t, seq, e) = self.run[self.head];
        if t > until {
            return None;
        }
        self.popped = seq;
        self.head += 1;
        self.len -= 1;
        if self.head == self.run.len() {
            self.run.clear();
            self.head = 0;
        } else if self.head >= 256 && self.head * 2 >= self.run.len() {
            // The run never ran out for a while: drop the popped prefix.
            self.run.drain(..self.head);
            self.head = 0;
        }
        Some((t, e))
    }

    /// The sequence number of the event popped last (0 before the first): with its time,
    /// where "now" is in the order of ties.
    #[inline]
    pub fn popped_seq(&self) -> u64 {
        self.popped
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_until(Time::MAX)
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Time> {
        if let Some(e) = self.run.get(self.head) {
            return Some(e.0);
        }
        let level = self.levels.trailing_zeros() as usize;
        let occ = self.occupied.get(level)?;
        let w = occ.iter().position(|&w| w != 0)?;
        let digit = w * 64 + occ[w].trailing_zeros() as usize;
        self.buckets[level * DIGITS + digit].iter().map(|e| e.0).min()
    }
    /// The event `k` places after the next one, if it is already in the sorted run (events
    /// still in buckets are not looked at): what a caller may prefetch for while it handles the
    /// next. `upcoming(0)` is the next event, when the run holds it.
    #[inline]
    pub fn upcoming(&self, k: usize) -> Option<(Time, E)> {
        self.run.get(self.head + k).map(|&(t, _, e)| (t, e))
    }
    /// Events pending.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Events scheduled so far.
    pub fn scheduled(&self) -> u64 {
        self.seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    #[test]
    fn an_event_stays_small() {
        assert_eq!(std::mem::size_of::<Event>(), 16);
    }

    #[test]
    fn a_model_queues_its_own_events() {
        // Any small Copy event: ties in scheduling order, as for the simulator's.
        let mut q: EventQueue<(char, u8)> = EventQueue::new();
        for (t, e) in [
            (7, ('a', 0)),
            (2, ('b', 1)),
            (7, ('c', 2)),
            (2, ('d', 3)),
            (1_000_000, ('e', 4)),
        ] {
            q.push(t, e);
        }
        let order: Vec<char> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e.0).collect();
        assert_eq!(order, ['b', 'd', 'a', 'c', 'e']);
    }

    #[test]
    fn earliest_first_ties_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(5, Event::Sample);
        q.push(3, Event::FlowStart { flow: FlowId(1) });
        q.push(5, Event::FlowStart { flow: FlowId(2) });
        q.push(3, Event::FlowStart { flow: FlowId(3) });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::FlowStart { flow: FlowId(1) }),
                (3, Event::FlowStart { flow: FlowId(3) }),
                (5, Event::Sample),
                (5, Event::FlowStart { flow: FlowId(2) }),
            ]
        );
    }

    /// The queue against a binary heap on (time, sequence): random pushes at many time scales
    /// (ties, near and far future, now and then the past), pops and bounded pops.
    #[test]
    fn same_order_as_a_heap_with_sequence_numbers() {
        for seed in 0..80u64 {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let mut q = EventQueue::new();
            let mut reference = BinaryHeap::new();
            let mut seq = 0u32;
            let mut now: Time = 0;
            let mut reserved: Vec<(Time, u64, u32)> = Vec::new();
            // Some seeds keep the queue small (all in the run), others let it grow large
            // (12,000: beyond `MERGE_PENDING`, so refills join buckets into longer runs).
            let target = [4usize, 40, 3000, 12_000][seed as usize % 4];
            let scale = [4u32, 12, 24, 40][(seed / 4) as usize % 4];
            for _ in 0..20_000 {
                let push = reference.len() < target / 2 || rng.random_range(0..100) < 52;
                if push {
                    let t = match rng.random_range(0..20) {
                        0 => now,
                        1 => now.saturating_sub(rng.random_range(0..1000)),
                        2 => now + rng.random_range(0..4),
                        3 => now + (1 << rng.random_range(0..48)),
                        _ => now + rng.random_range(0..1u64 << scale),
                    };
                    q.push(t, Event::FlowStart { flow: FlowId(seq) });
                    reference.push(Reverse((t, seq)));
                    seq += 1;
                    if rng.random_range(0..8) == 0 {
                        // A reservation, pushed later (or never) where it belongs.
                        let when = now + rng.random_range(0..1u64 << scale);
                        reserved.push((when, q.reserve_seq(), seq));
                        seq += 1;
                    }
                    if !reserved.is_empty() && rng.random_range(0..6) == 0 {
                        let (when, s, id) = reserved.swap_remove(rng.random_range(0..reserved.len()));
                        // Only one not yet passed (as the simulator's port does).
                        if (when, s) > (now, q.popped_seq()) {
                            q.push_reserved(when, s, Event::FlowStart { flow: FlowId(id) });
                            reference.push(Reverse((when, id)));
                        }
                    }
                } else {
                    let until = if rng.random_range(0..10) == 0 {
                        now + rng.random_range(0..1u64 << scale)
                    } else {
                        Time::MAX
                    };
                    let want = match reference.peek() {
                        Some(&Reverse((t, _))) if t <= until => reference.pop().map(|Reverse(e)| e),
                        _ => None,
                    };
                    let got = q.pop_until(until).map(|(t, e)| match e {
                        Event::FlowStart { flow } => (t, flow.0),
                        _ => unreachable!(),
                    });
                    assert_eq!(got, want, "seed {seed}");
                    if let Some((t, _)) = got {
                        now = now.max(t);
                    }
                }
                assert_eq!(q.len(), reference.len());
                assert_eq!(q.peek_time(), reference.peek().map(|r| r.0 .0));
                if let Some((t, _)) = q.upcoming(0) {
                    assert_eq!(Some(t), q.peek_time(), "seed {seed}");
                }
            }
            while let Some(Reverse(want)) = reference.pop() {
                let (t, e) = q.pop().expect("pending");
                assert_eq!((t, e), (want.0, Event::FlowStart { flow: FlowId(want.1) }));
            }
            assert!(q.is_empty() && q.pop().is_none());
        }
    }
}
