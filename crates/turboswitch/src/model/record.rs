//! What the experiments measure inside a placed TurboSwitch ([`super::placed::TurboTor`]): the
//! latencies, recirculation passes, copies, parking-queue depth and time series of the packets
//! that arrive in a measurement window, as [`super::kernel::SimResult`] reports them.
//!
//! The switch model calls one method per thing that happens (a packet arrives, a header is back
//! from the NF, a payload is merged, the parking queues are sampled...); the recorder keeps the
//! arrival time of every packet by the model's packet number, so that a later event can ask
//! whether its packet arrived in the window (after `warmup`, before `end`).

use super::kernel::{Bin, SimError, SimResult, Summary, MAX_BINS};
use crate::core::DropReason;
use crate::types::{PacketId, Time, SEC};

/// The measurement window and the width of the time-series bins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordConfig {
    /// Packets arriving before this are not measured (steady state only).
    pub warmup: Time,
    /// Packets arriving at or after this are not measured (the end of the offered load).
    pub end: Time,
    /// Width of the time-series bins, which cover `0..=end`.
    pub bin: Time,
}

#[derive(Debug, Clone, Copy, Default)]
struct BinAcc {
    in_bytes: u64,
    park_sum: f64,
    park_n: u64,
    pay_sum: f64,
    passes: u64,
    merged: u64,
    copies: u64,
    splits: u64,
    nf_sum: f64,
    nf_n: u64,
    target: Time,
}

/// The measurements of one placed TurboSwitch. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Recorder {
    cfg: RecordConfig,
    arrivals: Vec<Time>,
    bins: Vec<BinAcc>,
    r: SimResult,
    nf_lat: Vec<f64>,
    pay_lat: Vec<f64>,
    passes: u64,
    merged: u64,
    copies: u64,
    splits: u64,
    park_sum: f64,
    park_n: u64,
    wait_sum: f64,
    wait_n: u64,
}

/// Picoseconds as microseconds.
pub(crate) fn us(t: Time) -> f64 {
    t as f64 / 1e6
}

impl Recorder {
    /// A recorder for `cfg`; refused when the bins would be too many (see [`MAX_BINS`]) or 0 ps
    /// wide.
    pub fn new(cfg: RecordConfig) -> Result<Recorder, SimError> {
        if cfg.bin == 0 {
            return Err(SimError("bin must be at least 1 ps".into()));
        }
        let nbins = cfg.end / cfg.bin + 1;
        if nbins > MAX_BINS {
            return Err(SimError(format!(
                "{nbins} time-series bins: more than {MAX_BINS}; use a wider bin"
            )));
        }
        let nbins = usize::try_from(nbins).map_err(|_| SimError("too many bins".into()))?;
        Ok(Recorder {
            cfg,
            arrivals: Vec::new(),
            bins: vec![BinAcc::default(); nbins],
            r: SimResult::default(),
            nf_lat: Vec::new(),
            pay_lat: Vec::new(),
            passes: 0,
            merged: 0,
            copies: 0,
            splits: 0,
            park_sum: 0.0,
            park_n: 0,
            wait_sum: 0.0,
            wait_n: 0,
        })
    }

    /// The window and bins.
    pub fn config(&self) -> RecordConfig {
        self.cfg
    }

    fn bin(&mut self, t: Time) -> Option<&mut BinAcc> {
        let i = usize::try_from(t / self.cfg.bin).ok()?;
        self.bins.get_mut(i)
    }

    fn in_window(&self, pkt: PacketId) -> bool {
        usize::try_from(pkt.0)
            .ok()
            .and_then(|i| self.arrivals.get(i))
            .is_some_and(|&t| t >= self.cfg.warmup && t < self.cfg.end)
    }

    /// Packet `pkt` (numbered in arrival order from 0) of `bytes` reached ingress.
    pub fn arrival(&mut self, now: Time, pkt: PacketId, bytes: u32) {
        debug_assert_eq!(pkt.0, self.arrivals.len() as u64);
        self.arrivals.push(now);
        if let Some(b) = self.bin(now) {
            b.in_bytes += u64::from(bytes);
        }
    }

    /// Packets that reached ingress so far.
    pub fn arrived(&self) -> u64 {
        self.arrivals.len() as u64
    }

    /// `pkt` was split: its header went to the NF.
    pub fn split(&mut self, now: Time, pkt: PacketId) {
        let w = self.in_window(pkt);
        if let Some(b) = self.bin(now) {
            b.splits += 1;
        }
        if w {
            self.splits += 1;
        }
    }

    /// The copy engine made `count` filler copies.
    pub fn copies(&mut self, now: Time, count: u32) {
        if let Some(b) = self.bin(now) {
            b.copies += u64::from(count);
        }
        if now >= self.cfg.warmup && now < self.cfg.end {
            self.copies += u64::from(count);
        }
    }

    /// Filler copies the buffer had no room for.
    pub fn copies_refused(&mut self, count: u64) {
        self.r.copies_refused += count;
    }

    /// `pkt` left the program merged (or whole); a split one had been parked `parked_for` over
    /// `passes` recirculations.
    pub fn emitted(&mut self, now: Time, pkt: PacketId, parked_for: Option<Time>, passes: u32) {
        let Some(t) = parked_for else { return };
        if let Some(b) = self.bin(now) {
            b.pay_sum += us(t);
            b.passes += u64::from(passes);
            b.merged += 1;
        }
        if self.in_window(pkt) {
            self.pay_lat.push(us(t));
            self.passes += u64::from(passes);
            self.merged += 1;
        }
    }

    /// A part of `pkt` that left for the NF at `t0` is back at ingress at `back`.
    pub fn nf_back(&mut self, back: Time, pkt: PacketId, t0: Time) {
        let lat = us(back - t0);
        if self.in_window(pkt) {
            self.nf_lat.push(lat);
        }
        if let Some(b) = self.bin(back) {
            b.nf_sum += lat;
            b.nf_n += 1;
        }
    }

    /// A payload of `pkt` queued at `enq` starts its pass out of a parking lane at `now`.
    pub fn park_wait(&mut self, now: Time, pkt: PacketId, enq: Time) {
        if self.in_window(pkt) {
            self.wait_sum += us(now - enq);
            self.wait_n += 1;
        }
    }

    /// The parking queues held `bytes` (all lanes, all ports) at `now`; the copies-mode target
    /// delay was `target`.
    pub fn sample(&mut self, now: Time, bytes: u64, target: Time) {
        if let Some(b) = self.bin(now) {
            b.park_sum += bytes as f64;
            b.park_n += 1;
            b.target = target;
        }
        if now >= self.cfg.warmup && now < self.cfg.end {
            self.park_sum += bytes as f64;
            self.park_n += 1;
        }
    }

    /// `pkt` was lost for `reason` (the first reason only: the model forgets a lost packet).
    pub fn lost(&mut self, reason: DropReason) {
        *self.r.lost.entry(reason).or_insert(0) += 1;
    }

    /// The program dropped a part without a packet to blame.
    pub fn part_drop(&mut self, reason: DropReason) {
        *self.r.part_drops.entry(reason).or_insert(0) += 1;
    }

    /// Most bytes in the model's shared buffer.
    pub fn buffer_peak(&mut self, bytes: u64) {
        self.r.max_buffer = self.r.max_buffer.max(bytes);
    }

    /// The result so far: everything the switch model saw (the network's counts, the
    /// program's counters, end-to-end latency and events are the runner's to fill in).
    pub fn result(&self) -> SimResult {
        let mut r = self.r.clone();
        r.arrived = self.arrived();
        let win = self.cfg.end.saturating_sub(self.cfg.warmup);
        let bytes_window: u64 = self
            .bins
            .iter()
            .enumerate()
            .filter(|(i, _)| (*i as u64) * self.cfg.bin >= self.cfg.warmup)
            .map(|(_, b)| b.in_bytes)
            .sum();
        r.window_gbps = if win > 0 {
            bytes_window as f64 * 8.0 / (win as f64 / SEC as f64) / 1e9
        } else {
            0.0
        };
        let mut nf = self.nf_lat.clone();
        r.nf_latency = Summary::of(&mut nf);
        r.nf_samples = nf;
        r.payload_latency = Summary::of(&mut self.pay_lat.clone());
        let ratio = |a: f64, n: u64| if n > 0 { a / n as f64 } else { 0.0 };
        r.passes_per_payload = ratio(self.passes as f64, self.merged);
        r.copies_per_split = ratio(self.copies as f64, self.splits);
        r.park_bytes_mean = ratio(self.park_sum, self.park_n);
        r.park_wait_us = ratio(self.wait_sum, self.wait_n);
        let bin_s = self.cfg.bin as f64 / SEC as f64;
        r.bins = self
            .bins
            .iter()
            .enumerate()
            .map(|(i, b)| Bin {
                t_us: us(i as u64 * self.cfg.bin),
                input_gbps: b.in_bytes as f64 * 8.0 / bin_s / 1e9,
                park_bytes: ratio(b.park_sum, b.park_n),
                payload_us: ratio(b.pay_sum, b.merged),
                passes: ratio(b.passes as f64, b.merged),
                copies_per_split: ratio(b.copies as f64, b.splits),
                nf_us: ratio(b.nf_sum, b.nf_n),
                merged: b.merged,
                target_us: us(b.target),
            })
            .collect();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::US;

    #[test]
    fn only_packets_that_arrived_in_the_window_are_measured() {
        let mut r = Recorder::new(RecordConfig {
            warmup: 10 * US,
            end: 20 * US,
            bin: 10 * US,
        })
        .unwrap();
        r.arrival(5 * US, PacketId(0), 100);
        r.arrival(15 * US, PacketId(1), 100);
        r.arrival(20 * US, PacketId(2), 100);
        for p in 0..3 {
            r.nf_back(25 * US, PacketId(p), 21 * US);
            r.emitted(26 * US, PacketId(p), Some(5 * US), 2);
        }
        let res = r.result();
        assert_eq!(res.arrived, 3);
        assert_eq!(res.nf_latency.n, 1);
        assert!((res.nf_latency.mean - 4.0).abs() < 1e-9);
        assert_eq!(res.payload_latency.n, 1);
        assert_eq!(res.passes_per_payload, 2.0);
        // The bins see everything: three merges in the bin at 20 us.
        assert_eq!(res.bins.len(), 3);
        assert_eq!(res.bins[2].merged, 3);
        // The offered load counts the bins from the warm-up on (a source stops before the
        // end): 200 B over the 10 us window, 160 Mb/s.
        assert!((res.window_gbps - 0.16).abs() < 1e-12);
        assert!(Recorder::new(RecordConfig {
            warmup: 0,
            end: 1,
            bin: 0
        })
        .is_err());
    }
}
