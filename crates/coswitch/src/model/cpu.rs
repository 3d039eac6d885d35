//! A processor that serves jobs first come, first served (one CPU core: a virtual switch's,
//! or a physical switch's control CPU), with its busy time accounted exactly into fixed
//! buckets so that the utilization of any bucket-aligned interval can be read back.
//!
//! Jobs are submitted in time order (the event loop guarantees it), so the queue needs no
//! events of its own: a job submitted at `now` starts when the core is next free and its end
//! time is known at once. A job that would wait longer than `max_wait` is refused (its
//! caller counts a drop with a reason): this bounds the backlog as a real input queue does.

use crate::types::Time;

/// One FIFO core with exact busy-time accounting.
#[derive(Debug, Clone)]
pub struct CpuQueue {
    busy_until: Time,
    max_wait: Time,
    bucket: Time,
    busy: Vec<Time>,
    jobs: u64,
    refused: u64,
}

impl CpuQueue {
    /// A core whose jobs may wait at most `max_wait`; utilization is kept per `bucket`
    /// (which must be positive).
    pub fn new(max_wait: Time, bucket: Time) -> Self {
        CpuQueue {
            busy_until: 0,
            max_wait,
            bucket: bucket.max(1),
            busy: Vec::new(),
            jobs: 0,
            refused: 0,
        }
    }

    /// Submits a job of `cost` at `now`; returns when it finishes, or `None` when the
    /// backlog is too long and the job is refused.
    pub fn submit(&mut self, now: Time, cost: Time) -> Option<Time> {
        let start = now.max(self.busy_until);
        if start - now > self.max_wait {
            self.refused += 1;
            return None;
        }
        let end = start + cost;
        self.account(start, end);
        self.busy_until = end;
        self.jobs += 1;
        Some(end)
    }

    fn account(&mut self, mut a: Time, b: Time) {
        while a < b {
            let i = (a / self.bucket) as usize;
            let e = b.min((i as Time + 1) * self.bucket);
            if self.busy.len() <= i {
                self.busy.resize(i + 1, 0);
            }
            self.busy[i] += e - a;
            a = e;
        }
    }

    /// Busy share of `[from, to)`, both rounded down to whole buckets; 0 for an empty span.
    pub fn utilization(&self, from: Time, to: Time) -> f64 {
        let (i, j) = ((from / self.bucket) as usize, (to / self.bucket) as usize);
        if j <= i {
            return 0.0;
        }
        let busy: Time = self.busy.iter().take(j).skip(i).sum();
        busy as f64 / ((j - i) as Time * self.bucket) as f64
    }

    /// Jobs accepted.
    pub fn jobs(&self) -> u64 {
        self.jobs
    }

    /// Jobs refused because the backlog was too long.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// When the core is next idle.
    pub fn busy_until(&self) -> Time {
        self.busy_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_with_exact_busy_time() {
        let mut c = CpuQueue::new(100, 10);
        assert_eq!(c.submit(0, 15), Some(15));
        assert_eq!(c.submit(5, 10), Some(25), "waits for the first job");
        assert_eq!(c.submit(40, 5), Some(45));
        assert_eq!(c.utilization(0, 10), 1.0);
        assert_eq!(c.utilization(20, 30), 0.5);
        assert_eq!(c.utilization(0, 50), 30.0 / 50.0);
        assert_eq!(c.utilization(30, 30), 0.0);
        assert_eq!(c.utilization(100, 200), 0.0, "beyond the last job");
    }

    #[test]
    fn refuses_past_the_longest_wait() {
        let mut c = CpuQueue::new(10, 10);
        assert!(c.submit(0, 20).is_some());
        assert!(c.submit(0, 1).is_none(), "would wait 20 > 10");
        assert!(c.submit(10, 1).is_some(), "waits exactly 10");
        assert_eq!((c.jobs(), c.refused()), (2, 1));
    }
}
