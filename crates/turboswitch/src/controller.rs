//! The copies-mode controller: how many copies of a payload to add to a parking queue so that
//! the queue's delay matches the NF latency, computed from queue statistics that arrive late.
//!
//! The controller keeps the parking queue's depth at `target_delay x port rate`. It only sees
//! the depth as sampled `stats_delay` ago; it predicts the depth now from that sample, the bytes
//! it has itself enqueued since the sample (it knows them: it made them) and the bytes the port
//! has drained since (port rate x elapsed time, the queue being busy whenever it is above
//! zero). Each new payload then gets `round((target - predicted - payload) / payload)` copies
//! (0 to `max_copies`) behind it. At high load payloads arrive often and each adds few copies;
//! at low load each must add more to keep the queue full: fewer copies at higher load.
//!
//! The target is either configured or learned from header round trips with a TCP-style
//! estimator ([`RttEstimator`]: mean + k x mean deviation).

use crate::types::{bytes_in, Time};
use std::collections::VecDeque;

/// Copies needed so that a queue predicted at `predicted` bytes reaches `target` bytes after a
/// payload of `payload` bytes and its copies (each `payload` bytes) are added behind it.
pub fn copies_needed(target: u64, predicted: u64, payload: u64, max: u32) -> u32 {
    if payload == 0 {
        return 0;
    }
    let after = predicted.saturating_add(payload);
    if after >= target {
        return 0;
    }
    let need = (target - after + payload / 2) / payload;
    u32::try_from(need).unwrap_or(u32::MAX).min(max)
}

/// Per-parking-queue controller state.
#[derive(Debug, Clone)]
pub struct CopyController {
    port_bps: u64,
    max_copies: u32,
    /// Latest statistics sample: (sampled at, depth in bytes).
    obs: (Time, u64),
    /// Bytes this controller has enqueued, cumulative.
    cum: u64,
    /// Cumulative count as of the latest sample.
    cum_at_obs: u64,
    /// (time, cumulative after) of enqueues newer than the latest sample.
    log: VecDeque<(Time, u64)>,
    copies: u64,
}

impl CopyController {
    /// A controller for a parking queue drained at `port_bps`.
    pub fn new(port_bps: u64, max_copies: u32) -> CopyController {
        CopyController {
            port_bps,
            max_copies,
            obs: (0, 0),
            cum: 0,
            cum_at_obs: 0,
            log: VecDeque::new(),
            copies: 0,
        }
    }

    /// A queue-statistics sample: the queue held `bytes` at `sampled_at`. Older samples than the
    /// latest one are ignored.
    pub fn on_stats(&mut self, sampled_at: Time, bytes: u64) {
        if sampled_at < self.obs.0 {
            return;
        }
        self.obs = (sampled_at, bytes);
        while let Some(&(t, cum)) = self.log.front() {
            if t > sampled_at {
                break;
            }
            self.cum_at_obs = cum;
            self.log.pop_front();
        }
    }

    /// The depth the queue is predicted to have at `now`.
    pub fn predicted_depth(&self, now: Time) -> u64 {
        let (ts, q) = self.obs;
        let since = self.cum - self.cum_at_obs;
        let drained = bytes_in(now.saturating_sub(ts), self.port_bps);
        (q + since).saturating_sub(drained)
    }

    /// Copies to add behind a payload of `payload` bytes enqueued at `now` so that the queue
    /// delays packets by `target`; records the enqueue of the payload and its copies.
    pub fn copies_for(&mut self, now: Time, payload: u32, target: Time) -> u32 {
        let target_bytes = bytes_in(target, self.port_bps);
        let n = copies_needed(
            target_bytes,
            self.predicted_depth(now),
            u64::from(payload),
            self.max_copies,
        );
        self.record(now, u64::from(payload) * (1 + u64::from(n)));
        self.copies += u64::from(n);
        n
    }

    /// Records `bytes` enqueued at `now` by someone else than [`Self::copies_for`].
    pub fn record(&mut self, now: Time, bytes: u64) {
        self.cum += bytes;
        self.log.push_back((now, self.cum));
    }

    /// Copies made so far.
    pub fn copies(&self) -> u64 {
        self.copies
    }
}

/// TCP-style round-trip estimator in integer picoseconds: mean gain 1/8, deviation gain 1/4.
#[derive(Debug, Clone, Copy, Default)]
pub struct RttEstimator {
    srtt: Option<i64>,
    rttvar: i64,
}

impl RttEstimator {
    /// Adds one round-trip sample.
    pub fn sample(&mut self, rtt: Time) {
        let r = i64::try_from(rtt).unwrap_or(i64::MAX / 2);
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                self.rttvar += ((r - s).abs() - self.rttvar) / 4;
                self.srtt = Some(s + (r - s) / 8);
            }
        }
    }

    /// Mean round trip (0 before any sample).
    pub fn mean(&self) -> Time {
        self.srtt.map_or(0, |s| s.max(0) as Time)
    }

    /// Mean + `k` x mean deviation (0 before any sample).
    pub fn target(&self, k: u32) -> Time {
        match self.srtt {
            None => 0,
            Some(s) => (s + i64::from(k) * self.rttvar).max(0) as Time,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{NS, US};

    const C: u64 = 100_000_000_000;

    #[test]
    fn copy_count_fills_the_gap() {
        // 20 us at 100 Gb/s = 250,000 bytes.
        assert_eq!(copies_needed(250_000, 0, 1000, 1000), 249);
        assert_eq!(copies_needed(250_000, 0, 1000, 32), 32, "capped");
        assert_eq!(copies_needed(250_000, 249_500, 1000, 32), 0, "full");
        assert_eq!(copies_needed(250_000, 300_000, 1000, 32), 0, "over target");
        assert_eq!(copies_needed(250_000, 245_000, 1000, 32), 4);
        assert_eq!(copies_needed(250_000, 0, 0, 32), 0);
    }

    #[test]
    fn fewer_copies_at_higher_load() {
        // Payloads of 1000 B arriving every `gap` at a queue aiming at 20 us, with fresh stats.
        let per_payload = |gap: Time| {
            let mut c = CopyController::new(C, 64);
            let mut t = 0;
            let mut copies = 0;
            let mut q: u64 = 0;
            for i in 0..2000 {
                t += gap;
                // The queue drains at C between arrivals; stats are exact and 1 us old.
                q = q.saturating_sub(bytes_in(gap, C));
                c.on_stats(t.saturating_sub(US), q);
                let n = c.copies_for(t, 1000, 20 * US);
                q += 1000 * (1 + u64::from(n));
                if i >= 1000 {
                    copies += u64::from(n);
                }
            }
            copies as f64 / 1000.0
        };
        let low = per_payload(400 * NS); // 20 Gb/s of payload
        let high = per_payload(100 * NS); // 80 Gb/s
        assert!(low > high, "low load {low} copies, high load {high}");
        // At 20 Gb/s of payload, 80 Gb/s of copies keep the 100 Gb/s queue full: ~4 per payload.
        assert!((low - 4.0).abs() < 0.6, "{low}");
        assert!((high - 0.25).abs() < 0.3, "{high}");
    }

    #[test]
    fn prediction_uses_own_enqueues_and_drain() {
        let mut c = CopyController::new(C, 64);
        c.on_stats(0, 10_000);
        c.record(100 * NS, 5_000);
        // 1 us later: 10,000 + 5,000 - 12,500 drained.
        assert_eq!(c.predicted_depth(US), 2_500);
        // A sample taken after the enqueue includes it.
        c.on_stats(200 * NS, 12_000);
        assert_eq!(c.predicted_depth(200 * NS), 12_000);
        // Stale samples are ignored.
        c.on_stats(100 * NS, 0);
        assert_eq!(c.predicted_depth(200 * NS), 12_000);
    }

    #[test]
    fn estimator_converges_to_mean_plus_deviation() {
        let mut e = RttEstimator::default();
        assert_eq!(e.target(2), 0);
        for i in 0..400u64 {
            e.sample(if i % 2 == 0 { 19 * US } else { 21 * US });
        }
        let m = e.mean() as f64 / US as f64;
        assert!((m - 20.0).abs() < 0.2, "{m}");
        let t = e.target(2) as f64 / US as f64;
        assert!((t - 22.0).abs() < 0.3, "{t}");
    }
}
