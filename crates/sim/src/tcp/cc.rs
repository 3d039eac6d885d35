//! Congestion control: the policy half of the sender (how cwnd grows, how far it is cut). The
//! mechanism half (loss detection, fast recovery, the RTO) lives in the endpoint, which calls
//! these hooks and sets cwnd directly where RFC 5681/6582/6675 prescribe it.
//!
//! Windows are in bytes. An algorithm implements [`CongestionControl`] and is chosen in
//! [`new_congestion_control`]; CUBIC is in its own module.

use super::cubic::Cubic;
use crate::config::{CcAlgo, TcpConfig, TcpFlavor};
use crate::time::Time;
use std::fmt;

/// What one ACK told the sender, as handed to [`CongestionControl::on_ack`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckInfo {
    /// Bytes newly acknowledged cumulatively by this ACK (0 for a duplicate ACK).
    pub acked: u64,
    /// The ACK carried ECE (and ECN is in use).
    pub ece: bool,
    /// The ACK was a duplicate ACK (RFC 5681 definition, or new SACK information).
    pub dupack: bool,
    /// The sender is in (or just left, on this ACK) loss recovery or is cutting cwnd for ECN on
    /// this ACK: cwnd must not grow.
    pub in_recovery: bool,
    /// SND.UNA after this ACK (offset from the ISS).
    pub snd_una: u64,
    /// The highest sequence number sent so far (offset from the ISS).
    pub snd_max: u64,
    /// The next sequence number to send, as it was before this ACK (below `snd_max` while a
    /// timeout's go-back-N resends).
    pub snd_nxt: u64,
    /// [`TcpFlavor::Ns3`]: bytes of `acked` that ns-3 3.37's `PktsAcked` does not see. In
    /// CA_DISORDER an ACK that advances SND.UNA reports its segments less the duplicate ACKs
    /// that already reported one segment each (`ProcessAck`: `segsAcked - oldDupAckCount`).
    pub uncounted: u64,
    /// [`TcpFlavor::Ns3`]: `PktsAcked` is not called for this ACK (in CA_DISORDER, fewer
    /// segments acknowledged than duplicate ACKs counted).
    pub unreported: bool,
    /// The ACK advanced SND.UNA (`acked` may still be 0: ns-3 counts whole segments, and the
    /// ACK that ends a timeout's loss state counts only those above the recovery point).
    pub advanced: bool,
    /// The smoothed RTT after this ACK's sample (0 before the first): what ns-3 3.37 hands
    /// its congestion control as the RTT (`m_lastRtt`).
    pub srtt: Time,
    /// The RTT sample this ACK gave, if any (Linux's `ack_sample.rtt_us`).
    pub rtt_sample: Option<Time>,
}

/// A congestion control algorithm. All windows are bytes.
pub trait CongestionControl: fmt::Debug + Send {
    /// Short name (`"newreno"`, `"dctcp"`).
    fn name(&self) -> &'static str;
    /// Congestion window.
    fn cwnd(&self) -> u64;
    /// Slow-start threshold (`u64::MAX` until the first congestion event).
    fn ssthresh(&self) -> u64;
    /// Overrides cwnd (fast recovery inflation/deflation, loss window).
    fn set_cwnd(&mut self, cwnd: u64);
    /// Overrides ssthresh.
    fn set_ssthresh(&mut self, ssthresh: u64);
    /// Called for every acceptable ACK; grows cwnd unless `ack.in_recovery`.
    fn on_ack(&mut self, now: Time, ack: &AckInfo);
    /// Loss detected by duplicate ACKs or SACK (fast retransmit): sets ssthresh. The endpoint
    /// then sets cwnd as its recovery algorithm prescribes.
    fn on_congestion_event(&mut self, now: Time, flight: u64);
    /// ECE received (at most once per window; the endpoint enforces that): cut cwnd and ssthresh.
    fn on_ecn_echo(&mut self, now: Time, flight: u64);
    /// Retransmission timeout: ssthresh from the flight size (only on the first of consecutive
    /// timeouts, `first`), cwnd to the loss window of one segment (RFC 5681 §3.1).
    fn on_rto(&mut self, now: Time, flight: u64, first: bool);
    /// The sender entered the loss state on a retransmission timeout (after
    /// [`CongestionControl::on_rto`]; every timeout, not only the first), with `snd_max` the
    /// highest sequence number sent: ns-3's `CongestionStateSet(CA_LOSS)`, Linux's
    /// `set_state(TCP_CA_Loss)`.
    fn on_loss_state(&mut self, _now: Time, _snd_max: u64) {}
    /// DCTCP's congestion estimate, for algorithms that keep one.
    fn alpha(&self) -> Option<f64> {
        None
    }
}

/// The congestion controller `cfg.cc` asks for, for segments of `mss` bytes and an initial
/// window of `init_cwnd` bytes.
pub fn new_congestion_control(cfg: &TcpConfig, mss: u64, init_cwnd: u64) -> Box<dyn CongestionControl> {
    match cfg.cc {
        CcAlgo::NewReno => {
            let mut r = NewReno::new(mss, init_cwnd);
            r.keep_ca_count = cfg.flavor == TcpFlavor::Ns3;
            r.ns3_slow_start = cfg.flavor == TcpFlavor::Ns3;
            Box::new(r)
        }
        CcAlgo::Dctcp { g } => {
            let mut d = Dctcp::new(mss, init_cwnd, g);
            if cfg.flavor == TcpFlavor::Ns3 {
                d.min_cut_segments = 0;
                d.reno.keep_ca_count = true;
                d.reno.ns3_slow_start = true;
                d.window_end = u64::MAX;
                d.ns3_window = true;
            }
            Box::new(d)
        }
        CcAlgo::Cubic(p) => match cfg.flavor {
            TcpFlavor::Ns3 => Box::new(Cubic::ns3(mss, init_cwnd, p)),
            TcpFlavor::Linux => Box::new(Cubic::linux(mss, init_cwnd, p)),
        },
    }
}

/// RFC 5681 slow start and congestion avoidance with RFC 3465 byte counting (L = 2 SMSS).
#[derive(Debug, Clone, PartialEq)]
pub struct NewReno {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Bytes acked since cwnd last grew in congestion avoidance.
    ca_acked: u64,
    /// Keep `ca_acked` across window reductions, as ns-3 3.37's TcpLinuxReno (its
    /// `m_cWndCnt` is never reset); Linux clears it (`tcp_init_cwnd_reduction`).
    keep_ca_count: bool,
    /// Slow start as ns-3 3.37's TcpLinuxReno (`IncreaseWindow`): every acknowledged segment
    /// grows cwnd (no RFC 3465 limit), up to ssthresh, and what is left over is dropped,
    /// not counted for congestion avoidance as Linux does.
    ns3_slow_start: bool,
}

impl NewReno {
    /// Starts with `init_cwnd` bytes and an infinite ssthresh.
    pub fn new(mss: u64, init_cwnd: u64) -> NewReno {
        let mss = mss.max(1);
        NewReno {
            mss,
            cwnd: init_cwnd.max(mss),
            ssthresh: u64::MAX,
            ca_acked: 0,
            keep_ca_count: false,
            ns3_slow_start: false,
        }
    }

    fn grow(&mut self, acked: u64) {
        let mut acked = acked;
        if self.ns3_slow_start && self.cwnd < self.ssthresh {
            // ns-3 3.37 keeps cwnd and ssthresh in 32 bits (`TcpSocketState::m_cWnd`): the sum
            // in `TcpLinuxReno::SlowStart` wraps past 4 GiB and the window starts again from
            // what is left over (a lossless flow that its peer's window holds back, whose cwnd
            // grows on every ACK, gets there after 4 GiB acknowledged).
            let sum = u64::from((self.cwnd as u32).wrapping_add(acked as u32));
            self.cwnd = sum.min(self.ssthresh.min(u64::from(u32::MAX)));
            return;
        }
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1 with RFC 3465 appropriate byte counting, L = 2*SMSS, up to ssthresh;
            // what is left over counts for congestion avoidance (Linux's `tcp_slow_start` and
            // `tcp_reno_cong_avoid`).
            let inc = acked.min(2 * self.mss);
            let grown = self.cwnd.saturating_add(inc).min(self.ssthresh);
            acked = inc - (grown - self.cwnd);
            self.cwnd = grown;
        }
        if (acked > 0 || self.keep_ca_count) && self.cwnd >= self.ssthresh {
            // Congestion avoidance by byte counting (RFC 5681 §3.1, RFC 3465 §2.1): one SMSS
            // per window of acknowledged bytes, the window counted in whole segments, in the
            // steps of Linux's `tcp_cong_avoid_ai` (integer cwnd) and ns-3's TcpLinuxReno
            // (w = cwnd / SMSS, rounded down): a count left over from a larger window grows
            // the smaller one at once.
            let w = (self.cwnd / self.mss).max(1) * self.mss;
            if self.ca_acked >= w {
                self.ca_acked = 0;
                self.cwnd = self.cwnd.saturating_add(self.mss);
            }
            self.ca_acked = self.ca_acked.saturating_add(acked);
            if self.ca_acked >= w {
                let d = self.ca_acked / w;
                self.ca_acked -= d * w;
                self.cwnd = self.cwnd.saturating_add(d * self.mss);
            }
        }
    }

    /// A window reduction: Linux restarts the congestion-avoidance count, ns-3 does not.
    fn reset_ca_count(&mut self) {
        if !self.keep_ca_count {
            self.ca_acked = 0;
        }
    }

    fn half(&self, flight: u64) -> u64 {
        (flight / 2).max(2 * self.mss)
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn set_cwnd(&mut self, cwnd: u64) {
        self.cwnd = cwnd.max(self.mss);
    }
    fn set_ssthresh(&mut self, ssthresh: u64) {
        self.ssthresh = ssthresh;
    }
    fn on_ack(&mut self, _now: Time, ack: &AckInfo) {
        // ns-3 3.37 calls `IncreaseWindow` on every ACK that advances SND.UNA outside
        // recovery, also for no whole segment, and its congestion avoidance first spends a
        // count left over from before (`TcpLinuxReno::CongestionAvoidance`).
        if !ack.in_recovery && (ack.acked > 0 || (self.keep_ca_count && ack.advanced)) {
            self.grow(ack.acked);
        }
    }
    fn on_congestion_event(&mut self, _now: Time, _flight: u64) {
        // Half the congestion window, as Linux (`tcp_reno_ssthresh`) and ns-3's TcpLinuxReno.
        // RFC 5681 eq. (4) halves FlightSize instead, which after a long SACK recovery counts
        // megabytes of SACKed data and lets a flow leave a timeout with a huge ssthresh.
        self.ssthresh = self.half(self.cwnd);
        self.reset_ca_count();
    }
    fn on_ecn_echo(&mut self, _now: Time, _flight: u64) {
        // RFC 3168 §6.1.2: halve cwnd, ssthresh to the new cwnd.
        self.ssthresh = self.half(self.cwnd);
        self.cwnd = self.ssthresh;
        self.reset_ca_count();
    }
    fn on_rto(&mut self, _now: Time, _flight: u64, first: bool) {
        if first {
            // As on_congestion_event: half the window, not half the flight.
            self.ssthresh = self.half(self.cwnd);
        }
        self.cwnd = self.mss;
        self.reset_ca_count();
    }
}

/// DCTCP (RFC 8257): NewReno growth and loss response; on ECE, cwnd is cut by alpha/2, where
/// alpha is an EWMA (gain g) of the fraction of acknowledged bytes that carried ECE, updated
/// once per window of data.
#[derive(Debug, Clone, PartialEq)]
pub struct Dctcp {
    reno: NewReno,
    g: f64,
    alpha: f64,
    /// End of the current observation window (SND.NXT when it started); [`u64::MAX`] until the
    /// first ACK when the first window is observed whole (ns-3).
    window_end: u64,
    acked_bytes: u64,
    ecn_bytes: u64,
    /// The least a cut leaves, in segments: 2 as Linux's `dctcp_ssthresh`; 0 as ns-3 3.37's
    /// `TcpDctcp::GetSsThresh`, which has no floor, so many flows can cut each other below
    /// one segment and then wait for a timeout.
    min_cut_segments: u64,
    /// ns-3 3.37's observation window (`TcpDctcp::PktsAcked`): it ends at the next sequence
    /// to send, not the highest sent, and is closed (alpha updated) by any ACK that reaches
    /// its end, even one that hands over no acknowledged bytes.
    ns3_window: bool,
}

impl Dctcp {
    /// Starts with alpha = 1 (RFC 8257 §3.3; Linux `dctcp_alpha_on_init` = 1024/1024).
    /// `g` outside (0, 1] (or NaN) falls back to 1/16.
    pub fn new(mss: u64, init_cwnd: u64, g: f64) -> Dctcp {
        let g = if g > 0.0 && g <= 1.0 { g } else { 1.0 / 16.0 };
        Dctcp {
            reno: NewReno::new(mss, init_cwnd),
            g,
            alpha: 1.0,
            window_end: 0,
            acked_bytes: 0,
            ecn_bytes: 0,
            min_cut_segments: 2,
            ns3_window: false,
        }
    }
}

impl Dctcp {
    /// cwnd x (1 - alpha/2), at least `min_cut_segments` (Linux: 2).
    fn cut(&self) -> u64 {
        let cut = (self.reno.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64;
        cut.max(self.min_cut_segments * self.reno.mss)
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }
    fn cwnd(&self) -> u64 {
        self.reno.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.reno.ssthresh
    }
    fn set_cwnd(&mut self, cwnd: u64) {
        self.reno.set_cwnd(cwnd);
    }
    fn set_ssthresh(&mut self, ssthresh: u64) {
        self.reno.ssthresh = ssthresh;
    }
    fn on_ack(&mut self, now: Time, ack: &AckInfo) {
        if ack.unreported {
            self.reno.on_ack(now, ack);
            return;
        }
        // RFC 8257 §3.3; as Linux, a duplicate ACK counts as one MSS acknowledged.
        let acked = if ack.acked == 0 && ack.dupack {
            self.reno.mss
        } else {
            ack.acked.saturating_sub(ack.uncounted)
        };
        self.acked_bytes = self.acked_bytes.saturating_add(acked);
        if ack.ece {
            self.ecn_bytes = self.ecn_bytes.saturating_add(acked);
        }
        let next = if self.ns3_window { ack.snd_nxt } else { ack.snd_max };
        if self.window_end == u64::MAX {
            // ns-3 3.37's TcpDctcp::PktsAcked: the first call only sets the end of the first
            // window (`m_nextSeq`), so alpha keeps its initial 1 until that window is acked;
            // Linux's `dctcp_init` sets it when the connection opens, before any data.
            self.window_end = next;
        }
        if ack.snd_una >= self.window_end && (self.acked_bytes > 0 || self.ns3_window) {
            let f = if self.acked_bytes > 0 {
                self.ecn_bytes as f64 / self.acked_bytes as f64
            } else {
                0.0
            };
            self.alpha = ((1.0 - self.g) * self.alpha + self.g * f).clamp(0.0, 1.0);
            self.acked_bytes = 0;
            self.ecn_bytes = 0;
            self.window_end = next;
        }
        self.reno.on_ack(now, ack);
    }
    fn on_congestion_event(&mut self, _now: Time, _flight: u64) {
        // Linux (`dctcp_ssthresh`) and ns-3 (TcpDctcp::GetSsThresh) cut by alpha/2 on loss
        // too, although RFC 8257 §3.5 would halve.
        self.reno.ssthresh = self.cut();
        self.reno.reset_ca_count();
    }
    fn on_ecn_echo(&mut self, _now: Time, _flight: u64) {
        // RFC 8257 §3.3 step 9.
        self.reno.ssthresh = self.cut();
        self.reno.cwnd = self.reno.ssthresh;
        self.reno.reset_ca_count();
    }
    fn on_rto(&mut self, _now: Time, _flight: u64, first: bool) {
        if first {
            self.reno.ssthresh = self.cut();
        }
        self.reno.cwnd = self.reno.mss;
        self.reno.reset_ca_count();
    }
    fn alpha(&self) -> Option<f64> {
        Some(self.alpha)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64) -> AckInfo {
        AckInfo {
            acked,
            ..AckInfo::default()
        }
    }

    #[test]
    fn ns3_dctcp_keeps_the_initial_alpha_through_the_first_window() {
        // ns-3 3.37's TcpDctcp::PktsAcked only notes the end of the first window on its first
        // call; Linux's window starts when the connection opens, so its first ACK updates alpha.
        let ack = |snd_una, snd_max| AckInfo {
            acked: 1000,
            snd_una,
            snd_max,
            snd_nxt: snd_max,
            ..AckInfo::default()
        };
        for (flavor, first, after) in [(TcpFlavor::Ns3, 1.0, 0.9375), (TcpFlavor::Linux, 0.9375, 0.87890625)] {
            let cfg = TcpConfig {
                cc: CcAlgo::Dctcp { g: 1.0 / 16.0 },
                flavor,
                ..TcpConfig::default()
            };
            let mut cc = new_congestion_control(&cfg, 1000, 10_000);
            cc.on_ack(0, &ack(1001, 10_001));
            assert_eq!(cc.alpha(), Some(first), "{flavor:?}");
            cc.on_ack(0, &ack(10_001, 20_001));
            assert_eq!(cc.alpha(), Some(after), "{flavor:?}");
        }
    }

    #[test]
    fn ns3_slow_start_counts_every_segment_and_drops_the_rest() {
        // ns-3 3.37's TcpLinuxReno: slow start adds every acknowledged segment (no RFC 3465
        // limit of two), capped at ssthresh, and what is left over does not count for
        // congestion avoidance (Linux counts it, `slow_start_counts_at_most_two_segments_per_ack`).
        let cfg = TcpConfig {
            flavor: TcpFlavor::Ns3,
            ..TcpConfig::default()
        };
        let mut cc = new_congestion_control(&cfg, 1000, 10_000);
        cc.on_ack(0, &ack(4000));
        assert_eq!(cc.cwnd(), 14_000);
        cc.set_ssthresh(15_000);
        // Two segments reach ssthresh with one to spare: it is dropped, so the 15-segment
        // window then needs 15 more, not 14.
        cc.on_ack(0, &ack(2000));
        assert_eq!(cc.cwnd(), 15_000);
        cc.on_ack(0, &ack(14_000));
        assert_eq!(cc.cwnd(), 15_000);
        cc.on_ack(0, &ack(1000));
        assert_eq!(cc.cwnd(), 16_000);
    }

    #[test]
    fn ns3_slow_start_wraps_the_window_past_4_gib() {
        // ns-3 3.37 keeps cwnd in 32 bits: slow start's sum wraps and the window starts again
        // from the remainder (a lossless flow held back by its peer's window gets there).
        // Linux counts its window in segments; ours in that flavour keeps growing.
        let top = u64::from(u32::MAX) - 999;
        for (flavor, after) in [(TcpFlavor::Ns3, 1_000), (TcpFlavor::Linux, top + 2_000)] {
            let cfg = TcpConfig {
                flavor,
                ..TcpConfig::default()
            };
            let mut cc = new_congestion_control(&cfg, 1000, 10_000);
            cc.set_cwnd(top);
            cc.on_ack(0, &ack(2_000));
            assert_eq!(cc.cwnd(), after, "{flavor:?}");
        }
    }

    #[test]
    fn slow_start_counts_at_most_two_segments_per_ack() {
        let mut cc = NewReno::new(1000, 10_000);
        cc.on_ack(0, &ack(1000));
        assert_eq!(cc.cwnd(), 11_000);
        cc.on_ack(0, &ack(5000));
        assert_eq!(cc.cwnd(), 13_000);
        cc.on_ack(
            0,
            &AckInfo {
                acked: 1000,
                in_recovery: true,
                ..AckInfo::default()
            },
        );
        assert_eq!(cc.cwnd(), 13_000);
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window() {
        let mut cc = NewReno::new(1000, 10_000);
        cc.set_ssthresh(10_000);
        for _ in 0..9 {
            cc.on_ack(0, &ack(1000));
        }
        assert_eq!(cc.cwnd(), 10_000);
        cc.on_ack(0, &ack(1000));
        assert_eq!(cc.cwnd(), 11_000);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_the_rest_counts_for_avoidance() {
        // As Linux's tcp_slow_start and ns-3's TcpLinuxReno::SlowStart.
        let mut cc = NewReno::new(1000, 9_500);
        cc.set_ssthresh(10_000);
        cc.on_ack(0, &ack(2000));
        assert_eq!(cc.cwnd(), 10_000, "capped at ssthresh");
        // 1,500 bytes left over counted towards the next segment: 8 more full segments (of a
        // 10-segment window) grow it.
        for _ in 0..8 {
            cc.on_ack(0, &ack(1000));
        }
        assert_eq!(cc.cwnd(), 10_000);
        cc.on_ack(0, &ack(1000));
        assert_eq!(cc.cwnd(), 11_000);
    }

    #[test]
    fn avoidance_counts_the_window_in_whole_segments() {
        // cwnd 10.5 segments: one segment of growth per 10 segments acked (Linux's integer
        // cwnd, ns-3's w = cwnd / SMSS).
        let mut cc = NewReno::new(1000, 10_500);
        cc.set_ssthresh(10_000);
        for _ in 0..10 {
            cc.on_ack(0, &ack(1000));
        }
        assert_eq!(cc.cwnd(), 11_500);
    }

    #[test]
    fn dctcp_cut_has_linux_floor_or_none_as_ns3() {
        let linux = TcpConfig {
            cc: CcAlgo::Dctcp { g: 1.0 / 16.0 },
            ..TcpConfig::default()
        };
        let ns3 = TcpConfig {
            flavor: TcpFlavor::Ns3,
            ..linux
        };
        // alpha starts at 1: each ECE halves the window.
        for (cfg, floor) in [(linux, 2_000), (ns3, 0)] {
            let mut cc = new_congestion_control(&cfg, 1000, 3_000);
            for _ in 0..3 {
                cc.on_ecn_echo(0, 0);
            }
            assert_eq!(cc.cwnd(), (3_000 / 8).max(floor), "{:?}", cfg.flavor);
        }
    }

    #[test]
    fn ns3_dctcp_window_ends_at_snd_nxt_and_closes_on_an_empty_ack() {
        // ns-3 3.37's TcpDctcp::PktsAcked: the window ends at m_nextTxSequence and is closed by
        // any call that reaches it, even one for no segment (the ACK that ends CA_LOSS).
        let cfg = TcpConfig {
            cc: CcAlgo::Dctcp { g: 1.0 / 16.0 },
            flavor: TcpFlavor::Ns3,
            ..TcpConfig::default()
        };
        let mut cc = new_congestion_control(&cfg, 1000, 10_000);
        let ack = |acked, snd_una, snd_nxt| AckInfo {
            acked,
            snd_una,
            snd_nxt,
            snd_max: 9_000,
            ..AckInfo::default()
        };
        cc.on_ack(0, &ack(1_000, 1_000, 5_000));
        assert_eq!(cc.alpha(), Some(1.0));
        cc.on_ack(0, &ack(4_000, 5_000, 9_000));
        assert_eq!(cc.alpha(), Some(15.0 / 16.0));
        cc.on_ack(0, &ack(0, 9_000, 9_000));
        assert_eq!(cc.alpha(), Some(15.0 / 16.0 * 15.0 / 16.0));
    }

    #[test]
    fn ns3_dctcp_counts_an_ack_in_disorder_less_its_duplicates() {
        // ns-3 3.37's `ProcessAck` in CA_DISORDER hands `PktsAcked` the segments acknowledged
        // less the duplicate ACKs that already counted one each, and does not call it at all
        // when fewer were acknowledged.
        let mut d = Dctcp::new(1000, 10_000, 1.0 / 16.0);
        d.ns3_window = true;
        d.window_end = u64::MAX;
        let ack = AckInfo {
            acked: 3_000,
            ece: true,
            snd_una: 4_000,
            snd_nxt: 9_000,
            snd_max: 9_000,
            uncounted: 1_000,
            ..AckInfo::default()
        };
        d.on_ack(0, &ack);
        assert_eq!((d.acked_bytes, d.ecn_bytes), (2_000, 2_000));
        d.on_ack(
            0,
            &AckInfo {
                unreported: true,
                ..ack
            },
        );
        assert_eq!((d.acked_bytes, d.ecn_bytes), (2_000, 2_000));
    }

    #[test]
    fn ns3_congestion_avoidance_spends_a_left_over_count_on_an_ack_for_no_segment() {
        // ns-3 3.37's `TcpLinuxReno::CongestionAvoidance` first adds a segment if the count
        // left from before covers the window, also when `IncreaseWindow` is called for no
        // whole segment (the ACK that ends a timeout's loss state at the recovery point).
        for (flavor, grows) in [(TcpFlavor::Ns3, true), (TcpFlavor::Linux, false)] {
            let cfg = TcpConfig {
                flavor,
                ..TcpConfig::default()
            };
            let mut cc = new_congestion_control(&cfg, 1000, 4_000);
            cc.set_ssthresh(1_000);
            // Three segments acknowledged in congestion avoidance at a 4-segment window.
            cc.on_ack(0, &ack(3_000));
            cc.set_cwnd(1_000);
            cc.on_ack(
                0,
                &AckInfo {
                    advanced: true,
                    ..ack(0)
                },
            );
            assert_eq!(cc.cwnd() == 2_000, grows, "{flavor:?}: {}", cc.cwnd());
        }
    }

    #[test]
    fn loss_and_rto_responses() {
        // ssthresh is half the window (as Linux and ns-3's TcpLinuxReno), whatever the flight.
        let mut cc = NewReno::new(1000, 30_000);
        cc.on_congestion_event(0, 90_000);
        assert_eq!(cc.ssthresh(), 15_000);
        cc.set_cwnd(1_000);
        cc.on_congestion_event(0, 1_000);
        assert_eq!(cc.ssthresh(), 2_000);
        cc.set_cwnd(40_000);
        cc.on_rto(0, 400_000, true);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (1_000, 20_000));
        cc.on_rto(0, 2_000, false);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (1_000, 20_000));
    }

    #[test]
    fn dctcp_alpha_tracks_marked_fraction() {
        let mut cc = Dctcp::new(1000, 10_000, 1.0 / 16.0);
        assert_eq!(cc.alpha(), Some(1.0));
        // Windows with no marks decay alpha by (1-g) each.
        let mut una = 0;
        for _ in 0..10 {
            una += 1000;
            cc.on_ack(
                0,
                &AckInfo {
                    acked: 1000,
                    snd_una: una,
                    snd_max: una,
                    ..AckInfo::default()
                },
            );
        }
        let expect = (15.0f64 / 16.0).powi(10);
        assert!((cc.alpha().unwrap() - expect).abs() < 1e-12);
        // All marked: alpha moves toward 1.
        una += 1000;
        cc.on_ack(
            0,
            &AckInfo {
                acked: 1000,
                ece: true,
                snd_una: una,
                snd_max: una,
                ..AckInfo::default()
            },
        );
        assert!((cc.alpha().unwrap() - (expect * 15.0 / 16.0 + 1.0 / 16.0)).abs() < 1e-12);
        let before = cc.cwnd();
        cc.on_ecn_echo(0, before);
        let a = cc.alpha().unwrap();
        assert_eq!(cc.cwnd(), ((before as f64) * (1.0 - a / 2.0)) as u64);
    }
}
