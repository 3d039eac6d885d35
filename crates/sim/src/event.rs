//! The event queue: a binary heap ordered by (time, insertion sequence), so events at equal
//! times run in the order they were scheduled, whatever the heap's internal layout.

use crate::packet::{FlowId, NodeId, PacketId};
use crate::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Something that happens at a point in simulated time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The packet has arrived at `node` on `port` (its last bit, or for a cut-through switch its
    /// header; `last_bit` says when the whole packet is in).
    Arrive {
        /// Receiving node.
        node: NodeId,
        /// Ingress port.
        port: u16,
        /// The packet.
        pkt: PacketId,
        /// When the last bit arrives (equal to the event time for store-and-forward).
        last_bit: Time,
    },
    /// A packet has passed a switch's pipeline latency and joins an egress queue.
    Enqueue {
        /// Switch.
        node: NodeId,
        /// Egress port.
        port: u16,
        /// The packet.
        pkt: PacketId,
        /// When the last bit has arrived at the switch.
        last_bit: Time,
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
    /// Periodic queue sampling.
    Sample,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the earliest (time, seq) comes out first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// Pending events, earliest first, ties in scheduling order.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> EventQueue {
        EventQueue::default()
    }
    /// Schedules `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: Time, event: Event) {
        self.heap.push(Entry {
            time,
            seq: self.seq,
            event,
        });
        self.seq += 1;
    }
    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }
    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }
    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    /// Events scheduled so far.
    pub fn scheduled(&self) -> u64 {
        self.seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
