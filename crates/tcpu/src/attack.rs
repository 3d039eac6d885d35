//! The low-rate burst ("shrew") attack detector (paper §3.2.3).
//!
//! Per output port, the traffic the CPU sees heading for the port is counted in rate bins of
//! [`TcpuConfig::attack_bin`] (1 ms). A bin is **busy** when its rate exceeds the port speed C.
//! Windows of [`TcpuConfig::attack_window`] (3 s, aligned to multiples of the window from time
//! zero) are judged when they end: the port is under a low-rate burst attack when
//!
//! * busy bins carry more than 90% of the window's volume,
//! * busy bins span less than 10% of the window, and
//! * the bursts (runs of busy bins, merged across gaps of at most
//!   [`TcpuConfig::attack_merge_gap_bins`] idle bins; at least
//!   [`TcpuConfig::attack_min_bursts`] of them) recur with a median start-to-start period
//!   within [`TcpuConfig::attack_period_tolerance`] of the minimum RTO (300 ms).
//!
//! The attackers are then the sources that sent at least
//! [`TcpuConfig::attack_src_busy_pct`] (90%) of their window volume inside busy bins: a
//! pulsing source does, a steady TCP source sharing the port does not.
//!
//! # What this detector misses
//!
//! It is the paper's deliberately "very simple" algorithm, and easy to evade:
//!
//! * **Varying the period.** Pulses at jittered or slowly drifting intervals, or a period
//!   outside 300 ms +- tolerance (pulses aligned to another stack's RTO: Linux's 200 ms
//!   minimum, a 1 s initial RTO, or a multiple such as 600 ms) fail the period test even though
//!   they still hit TCP flows whose timers happen to line up.
//! * **Distributed low-rate sources below C per port.** The busy test is per port and per 1 ms
//!   bin: attackers that spread bursts over several output ports, or stretch pulses so the
//!   aggregate stays just below C (still enough to fill a shallow buffer on top of legitimate
//!   traffic), never produce a busy bin.
//! * **Dilution.** The 90% volume test is over everything the CPU sees for the port; a port
//!   carrying much steady traffic through the CPU hides the pulses. (In TCPU the CPU mostly
//!   sees redirected bursts, which helps; traffic the ASIC forwards is invisible to it.)
//! * **Window edges and warm-up.** Judging fixed 3 s windows means detection takes 3-6 s, and
//!   bursts split across a window edge count in neither.
//! * **Attribution.** A legitimate source that only sends during the attack's bursts (a
//!   synchronised incast response) is classified together with the attackers.
//!
//! A stronger detector would track each source (not each port) separately, use overlapping or
//! exponentially-decaying windows, find periodicity with an autocorrelation or spectral test of
//! the rate signal over a range of candidate periods (as in Sun, Lui and Yau, ICNP 2004, the
//! paper's reference \[15\]) rather than comparing with one RTO, and use the ASIC's per-entry
//! counters to watch traffic that never reaches the CPU.

use crate::config::TcpuConfig;
use crate::types::Time;
use rustc_hash::FxHashMap;

/// One attacker found: the port it attacked and its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Detection {
    /// The attacked output port.
    pub port: u16,
    /// The attacking source host.
    pub src: u32,
}

/// The evidence of the last judged window of one port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Verdict {
    /// Bytes in the window.
    pub volume: u64,
    /// Bytes in busy bins.
    pub busy_volume: u64,
    /// Busy bins.
    pub busy_bins: u32,
    /// Bursts found.
    pub bursts: u32,
    /// Median start-to-start period of the bursts (0 with fewer than two).
    pub period: Time,
    /// Whether the window was classified as an attack.
    pub attack: bool,
}

#[derive(Debug, Clone, Default)]
struct PortWindow {
    window: u64,
    bins: Vec<u64>,
    cur_bin: usize,
    cur_src: FxHashMap<u32, u64>,
    /// Per source: (bytes in the window, bytes in busy bins).
    src: FxHashMap<u32, (u64, u64)>,
    has_data: bool,
    last: Verdict,
}

/// The detector: one window per port.
#[derive(Debug, Clone)]
pub struct AttackDetector {
    bin: Time,
    window: Time,
    nbins: usize,
    port_bps: u64,
    cfg: TcpuConfig,
    ports: Vec<PortWindow>,
    starts: Vec<usize>,
    gaps: Vec<Time>,
    found: Vec<u32>,
}

impl AttackDetector {
    /// A detector for `cfg.ports` ports (the config must be valid).
    pub fn new(cfg: &TcpuConfig) -> AttackDetector {
        let bin = cfg.attack_bin.max(1);
        AttackDetector {
            bin,
            window: cfg.attack_window.max(bin),
            nbins: (cfg.attack_window / bin).max(1) as usize,
            port_bps: cfg.port_bps,
            cfg: cfg.clone(),
            ports: vec![PortWindow::default(); usize::from(cfg.ports)],
            starts: Vec::new(),
            gaps: Vec::new(),
            found: Vec::new(),
        }
    }

    fn bin_busy(&self, bytes: u64) -> bool {
        u128::from(bytes) * 8 * u128::from(crate::types::SEC) > u128::from(self.port_bps) * u128::from(self.bin)
    }

    /// Counts `bytes` from `src` heading for `port` at `now`; a window that ended before `now`
    /// is judged first and its attackers appended to `out`.
    pub fn observe(&mut self, now: Time, port: u16, src: u32, bytes: u32, out: &mut Vec<Detection>) {
        let Some(pw) = self.ports.get(usize::from(port)) else {
            return;
        };
        let w = now / self.window;
        if pw.has_data && w != pw.window {
            self.judge(port, out);
        }
        let bin = ((now - w * self.window) / self.bin) as usize;
        let nbins = self.nbins;
        if self.ports[usize::from(port)].cur_bin != bin || !self.ports[usize::from(port)].has_data {
            self.close_bin(port);
        }
        let pw = &mut self.ports[usize::from(port)];
        if pw.bins.len() != nbins {
            pw.bins.resize(nbins, 0);
        }
        pw.window = w;
        pw.has_data = true;
        pw.cur_bin = bin.min(nbins - 1);
        pw.bins[pw.cur_bin] += u64::from(bytes);
        *pw.cur_src.entry(src).or_insert(0) += u64::from(bytes);
        pw.src.entry(src).or_insert((0, 0)).0 += u64::from(bytes);
    }

    /// Judges every window that has ended by `now`.
    pub fn poll(&mut self, now: Time, out: &mut Vec<Detection>) {
        for port in 0..self.ports.len() {
            let pw = &self.ports[port];
            if pw.has_data && (pw.window + 1).saturating_mul(self.window) <= now {
                self.judge(port as u16, out);
            }
        }
    }

    /// When the next window with data ends.
    pub fn next_deadline(&self) -> Option<Time> {
        self.ports
            .iter()
            .filter(|p| p.has_data)
            .map(|p| (p.window + 1).saturating_mul(self.window))
            .min()
    }

    /// The evidence of the port's last judged window.
    pub fn last_verdict(&self, port: u16) -> Option<Verdict> {
        self.ports.get(usize::from(port)).map(|p| p.last)
    }

    /// Moves the current bin's per-source bytes into the busy tally if the bin was busy.
    fn close_bin(&mut self, port: u16) {
        let pw = &self.ports[usize::from(port)];
        let busy = pw.has_data && self.bin_busy(pw.bins.get(pw.cur_bin).copied().unwrap_or(0));
        let pw = &mut self.ports[usize::from(port)];
        if busy {
            for (s, b) in pw.cur_src.iter() {
                pw.src.entry(*s).or_insert((0, 0)).1 += *b;
            }
        }
        pw.cur_src.clear();
    }

    fn judge(&mut self, port: u16, out: &mut Vec<Detection>) {
        self.close_bin(port);
        let cfg = &self.cfg;
        let pw = &self.ports[usize::from(port)];
        let mut v = Verdict::default();
        self.starts.clear();
        let mut last_busy: Option<usize> = None;
        for (i, &b) in pw.bins.iter().enumerate() {
            v.volume += b;
            if self.bin_busy(b) {
                v.busy_volume += b;
                v.busy_bins += 1;
                let new_burst = last_busy.is_none_or(|l| i - l > cfg.attack_merge_gap_bins as usize + 1);
                if new_burst {
                    self.starts.push(i);
                }
                last_busy = Some(i);
            }
        }
        v.bursts = self.starts.len() as u32;
        self.gaps.clear();
        self.gaps
            .extend(self.starts.windows(2).map(|w| (w[1] - w[0]) as Time * self.bin));
        self.gaps.sort_unstable();
        v.period = self.gaps.get(self.gaps.len() / 2).copied().unwrap_or(0);
        let vol_ok = v.busy_volume > 0
            && u128::from(v.busy_volume) * 100 > u128::from(v.volume) * u128::from(cfg.attack_busy_volume_pct);
        let time_ok = u64::from(v.busy_bins) * 100 < self.nbins as u64 * u64::from(cfg.attack_busy_time_pct);
        let period_ok = v.bursts >= cfg.attack_min_bursts.max(2)
            && v.period.abs_diff(cfg.attack_min_rto) <= cfg.attack_period_tolerance;
        v.attack = vol_ok && time_ok && period_ok;
        self.found.clear();
        if v.attack {
            for (&s, &(tot, busy)) in pw.src.iter() {
                if busy > 0 && u128::from(busy) * 100 >= u128::from(tot) * u128::from(cfg.attack_src_busy_pct) {
                    self.found.push(s);
                }
            }
            self.found.sort_unstable();
            out.extend(self.found.iter().map(|&src| Detection { port, src }));
        }
        let pw = &mut self.ports[usize::from(port)];
        pw.last = v;
        pw.bins.iter_mut().for_each(|b| *b = 0);
        pw.src.clear();
        pw.cur_src.clear();
        pw.has_data = false;
        pw.cur_bin = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{MS, SEC, US};

    /// A small deterministic generator (xorshift64*) so the test needs no RNG crate.
    struct Rng(u64);
    impl Rng {
        fn next_f64(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// 14 synchronised attackers, each a 200 KB burst at 200 Mb/s every 320 ms (paper §4), as
    /// 1,000-byte packets; returns (time, src, bytes) in time order, for `dur`.
    fn square_wave(dur: Time) -> Vec<(Time, u32, u32)> {
        let mut ev = Vec::new();
        let per_pkt = 1000u32;
        let gap = crate::types::tx_time(u64::from(per_pkt), 200_000_000); // 40 us
        let mut burst = 0;
        while burst < dur {
            for k in 0..200 {
                for a in 0..14u32 {
                    ev.push((burst + k * gap, 100 + a, per_pkt));
                }
            }
            burst += 320 * MS;
        }
        ev
    }

    fn run(ev: &[(Time, u32, u32)], end: Time) -> (Vec<Detection>, AttackDetector) {
        let mut d = AttackDetector::new(&TcpuConfig::default());
        let mut out = Vec::new();
        for &(t, s, b) in ev {
            d.poll(t, &mut out);
            d.observe(t, 0, s, b, &mut out);
        }
        d.poll(end, &mut out);
        (out, d)
    }

    #[test]
    fn flags_the_square_wave_attackers_not_steady_tcp() {
        let mut ev = square_wave(3 * SEC);
        // A steady TCP source at 2 Mb/s: 1,500 B every 6 ms.
        let mut t = 0;
        while t < 3 * SEC {
            ev.push((t, 7, 1500));
            t += 6 * MS;
        }
        ev.sort_by_key(|e| e.0);
        let (out, d) = run(&ev, 3 * SEC);
        let v = d.last_verdict(0).unwrap();
        assert!(v.attack, "{v:?}");
        assert_eq!(v.period, 320 * MS);
        assert_eq!(v.bursts, 10);
        let srcs: Vec<u32> = out.iter().map(|d| d.src).collect();
        assert_eq!(srcs, (100..114).collect::<Vec<_>>());
        assert!(out.iter().all(|d| d.port == 0));
    }

    #[test]
    fn poisson_stream_of_the_same_mean_rate_is_not_flagged() {
        // Same mean rate as the attack: 14 x 200 KB per 320 ms = 70 Mb/s, 1,000-byte packets.
        let mean_gap_ps = 1000.0 * 8.0 / 70e6 * 1e12;
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut ev = Vec::new();
        let mut t = 0.0f64;
        loop {
            t += -(1.0 - rng.next_f64()).ln() * mean_gap_ps;
            if t >= (3 * SEC) as f64 {
                break;
            }
            ev.push((t as Time, 100 + (ev.len() % 14) as u32, 1000));
        }
        let (out, d) = run(&ev, 3 * SEC);
        assert!(out.is_empty());
        let v = d.last_verdict(0).unwrap();
        assert!(!v.attack);
        assert_eq!(v.busy_bins, 0);
    }

    #[test]
    fn wrong_period_is_missed() {
        // The same bursts every 1 s are not near the 300 ms RTO: a documented miss.
        let ev: Vec<_> = square_wave(3 * SEC)
            .into_iter()
            .filter(|e| (e.0 / (320 * MS)).is_multiple_of(3))
            .collect();
        let (out, d) = run(&ev, 3 * SEC);
        assert!(out.is_empty());
        assert_eq!(d.last_verdict(0).unwrap().period, 960 * MS);
        let _ = US;
    }
}
