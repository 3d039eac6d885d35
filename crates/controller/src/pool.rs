//! The packet_in batching pool (sans-IO).
//!
//! Events are pushed with the time they arrived; [`Pool::poll`] hands out a batch once the pool
//! holds [`PoolConfig::batch`] events or its oldest event has waited [`PoolConfig::deadline_ps`].
//! A batch is the oldest events, sorted by [`Event::size`] (stably: equal sizes keep their arrival
//! order), as the paper sorts its pool by packet_in size before processing groups of
//! [`GROUP_SIZE`]. The pool holds at most [`PoolConfig::capacity`] events: pushing into a full
//! pool sheds the oldest, counted by [`Pool::shed`].

use crate::event::Event;
use core::fmt;
use std::collections::VecDeque;

/// Events per group in the paper's GPU kernel (a warp); [`groups`] splits a batch by it.
pub const GROUP_SIZE: usize = 32;

/// Splits a sorted batch into the paper's groups of [`GROUP_SIZE`] events (the last may be short).
pub fn groups(batch: &[Event]) -> core::slice::Chunks<'_, Event> {
    batch.chunks(GROUP_SIZE)
}

/// Settings of a [`Pool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolConfig {
    /// Events per batch (default 1024, 32 groups).
    pub batch: usize,
    /// Longest an event waits before a partial batch is handed out, in picoseconds (default
    /// 100 µs).
    pub deadline_ps: u64,
    /// Most events held (default 65536); must be at least `batch`.
    pub capacity: usize,
}

impl Default for PoolConfig {
    fn default() -> PoolConfig {
        PoolConfig {
            batch: 1024,
            deadline_ps: 100_000_000,
            capacity: 65_536,
        }
    }
}

/// Why a [`PoolConfig`] was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolConfigError {
    /// `batch` is zero.
    ZeroBatch,
    /// `capacity` is below `batch`.
    CapacityBelowBatch,
}

impl fmt::Display for PoolConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolConfigError::ZeroBatch => f.write_str("pool batch size is zero"),
            PoolConfigError::CapacityBelowBatch => f.write_str("pool capacity is below the batch size"),
        }
    }
}

impl std::error::Error for PoolConfigError {}

/// The batching pool.
#[derive(Debug, Clone)]
pub struct Pool {
    cfg: PoolConfig,
    queue: VecDeque<(u64, Event)>,
    shed: u64,
}

impl Pool {
    /// An empty pool; rejects a zero batch or a capacity below it.
    pub fn new(cfg: PoolConfig) -> Result<Pool, PoolConfigError> {
        if cfg.batch == 0 {
            return Err(PoolConfigError::ZeroBatch);
        }
        if cfg.capacity < cfg.batch {
            return Err(PoolConfigError::CapacityBelowBatch);
        }
        Ok(Pool {
            cfg,
            queue: VecDeque::new(),
            shed: 0,
        })
    }

    /// Adds an event that arrived at `now_ps`; sheds the oldest when full.
    pub fn push(&mut self, now_ps: u64, ev: Event) {
        if self.queue.len() >= self.cfg.capacity {
            self.queue.pop_front();
            self.shed += 1;
        }
        self.queue.push_back((now_ps, ev));
    }

    /// Events held.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// True when no event is held.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Events shed because the pool was full.
    pub fn shed(&self) -> u64 {
        self.shed
    }

    /// When the oldest event's deadline falls (call [`Pool::poll`] then); `None` when empty.
    pub fn next_deadline(&self) -> Option<u64> {
        self.queue.front().map(|(t, _)| t.saturating_add(self.cfg.deadline_ps))
    }

    /// If a batch is due at `now_ps`, replaces `out`'s contents with it (sorted by size) and
    /// returns true; otherwise leaves `out` alone and returns false.
    pub fn poll(&mut self, now_ps: u64, out: &mut Vec<Event>) -> bool {
        let due = self.queue.len() >= self.cfg.batch || self.next_deadline().is_some_and(|d| now_ps >= d);
        if !due {
            return false;
        }
        let n = self.queue.len().min(self.cfg.batch);
        out.clear();
        out.extend(self.queue.drain(..n).map(|(_, e)| e));
        out.sort_by_key(Event::size);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::PacketInEvent;
    use proptest::prelude::*;
    use tandem_wire::openflow::Version;

    fn ev(xid: u32, len: usize) -> Event {
        Event {
            dpid: 1,
            packet_in: PacketInEvent::from_frame(Version::V1_0, xid, 0, 1, 0, vec![0; len]).unwrap(),
        }
    }

    fn cfg(batch: usize, deadline_ps: u64, capacity: usize) -> Pool {
        Pool::new(PoolConfig {
            batch,
            deadline_ps,
            capacity,
        })
        .unwrap()
    }

    #[test]
    fn rejects_bad_configs() {
        let c = PoolConfig::default();
        assert_eq!(
            Pool::new(PoolConfig { batch: 0, ..c }).unwrap_err(),
            PoolConfigError::ZeroBatch
        );
        assert_eq!(
            Pool::new(PoolConfig { capacity: 1, ..c }).unwrap_err(),
            PoolConfigError::CapacityBelowBatch
        );
    }

    #[test]
    fn full_batch_is_sorted_and_stable() {
        let mut p = cfg(4, 1000, 16);
        let mut out = Vec::new();
        for (xid, len) in [(1, 82), (2, 62), (3, 82), (4, 62), (5, 62)] {
            p.push(0, ev(xid, len));
        }
        assert!(p.poll(0, &mut out));
        let xids: Vec<u32> = out.iter().map(|e| e.packet_in.xid).collect();
        assert_eq!(xids, [2, 4, 1, 3]);
        assert_eq!(p.len(), 1);
        assert!(!p.poll(999, &mut out));
        assert_eq!(p.next_deadline(), Some(1000));
        assert!(p.poll(1000, &mut out));
        assert_eq!(out.len(), 1);
        assert!(p.is_empty() && p.next_deadline().is_none());
        assert!(!p.poll(u64::MAX, &mut out));
    }

    #[test]
    fn sheds_oldest_when_full() {
        let mut p = cfg(2, 10, 2);
        for xid in 0..5 {
            p.push(u64::from(xid), ev(xid, 60));
        }
        assert_eq!(p.shed(), 3);
        let mut out = Vec::new();
        assert!(p.poll(0, &mut out));
        assert_eq!(out.iter().map(|e| e.packet_in.xid).collect::<Vec<_>>(), [3, 4]);
        assert_eq!(groups(&out).count(), 1);
    }

    proptest! {
        /// Every pushed event comes out once, unless shed; batches are sorted and bounded.
        #[test]
        fn conserves_events(lens in proptest::collection::vec(14usize..120, 0..200), batch in 1usize..40,
                            step in 0u64..50) {
            let mut p = cfg(batch, 100, batch * 2);
            let mut out = Vec::new();
            let mut seen = 0usize;
            for (i, len) in lens.iter().enumerate() {
                let now = i as u64 * step;
                p.push(now, ev(i as u32, *len));
                while p.poll(now, &mut out) {
                    prop_assert!(out.len() <= batch && !out.is_empty());
                    prop_assert!(out.windows(2).all(|w| w[0].size() <= w[1].size()));
                    seen += out.len();
                }
            }
            while p.poll(u64::MAX, &mut out) {
                seen += out.len();
            }
            prop_assert_eq!(seen as u64 + p.shed(), lens.len() as u64);
        }
    }
}
