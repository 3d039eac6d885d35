//! A port's egress with two strict-priority lanes, the internal ports of the kernel-hosted
//! switch (`model::placed`): entries wait in their lane,
//! the high lane is served first, one entry is on the wire at a time.

use crate::core::Lane;
use std::collections::VecDeque;

/// Two strict-priority lanes of entries of type `E`, each with its byte size, and the entry
/// being sent.
#[derive(Debug, Clone)]
pub struct LanedQueue<E> {
    lanes: [VecDeque<(E, u32)>; 2],
    bytes: [u64; 2],
    busy: Option<E>,
}

impl<E: Copy> Default for LanedQueue<E> {
    fn default() -> Self {
        LanedQueue {
            lanes: [VecDeque::new(), VecDeque::new()],
            bytes: [0, 0],
            busy: None,
        }
    }
}

impl<E: Copy> LanedQueue<E> {
    /// Queues `e` of `bytes` in `lane`.
    pub fn push(&mut self, lane: Lane, e: E, bytes: u32) {
        self.lanes[lane.index()].push_back((e, bytes));
        self.bytes[lane.index()] += u64::from(bytes);
    }

    /// Whether an entry is on the wire.
    pub fn is_busy(&self) -> bool {
        self.busy.is_some()
    }

    /// Takes the next entry (high lane first) onto the wire: its lane index, the entry and its
    /// bytes; `None` when both lanes are empty.
    pub fn start(&mut self) -> Option<(usize, E, u32)> {
        let lane = if self.lanes[0].is_empty() { 1 } else { 0 };
        let (e, b) = self.lanes[lane].pop_front()?;
        self.bytes[lane] -= u64::from(b);
        self.busy = Some(e);
        Some((lane, e, b))
    }

    /// The entry on the wire has been sent: takes it off.
    pub fn finish(&mut self) -> Option<E> {
        self.busy.take()
    }

    /// Whether anything waits in either lane.
    pub fn has_waiting(&self) -> bool {
        !self.lanes[0].is_empty() || !self.lanes[1].is_empty()
    }

    /// Bytes waiting in both lanes (not the entry on the wire).
    pub fn waiting_bytes(&self) -> u64 {
        self.bytes[0] + self.bytes[1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn high_lane_first_then_fifo() {
        let mut q = LanedQueue::default();
        q.push(Lane::Normal, 'a', 100);
        q.push(Lane::Normal, 'b', 200);
        q.push(Lane::High, 'h', 50);
        assert_eq!(q.waiting_bytes(), 350);
        assert_eq!(q.start(), Some((0, 'h', 50)));
        assert!(q.is_busy());
        assert_eq!(q.finish(), Some('h'));
        assert_eq!(q.start(), Some((1, 'a', 100)));
        assert_eq!(q.waiting_bytes(), 200);
        assert_eq!(q.finish(), Some('a'));
        assert_eq!(q.start(), Some((1, 'b', 200)));
        assert!(!q.has_waiting());
        assert_eq!(q.finish(), Some('b'));
        assert_eq!(q.start(), None);
    }
}
