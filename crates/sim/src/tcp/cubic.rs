//! CUBIC (RFC 9438) in two flavours: ns-3 3.37's `TcpCubic`, step for step (the like-for-like
//! mode), and Linux's `tcp_cubic.c` (the default flavour).
//!
//! Both keep the window in segments for the cubic function and grow it by counting ACKed
//! segments against `cnt`, the number of segments per one-segment increase, recomputed from
//! the cubic target `W(t) = C (t - K)^3 + W_max`; both leave slow start early by HyStart.
//! Where they differ:
//!
//! | | ns-3 3.37 `TcpCubic` | Linux `tcp_cubic.c` |
//! |---|---|---|
//! | delay samples | the smoothed RTT after each ACK (`m_lastRtt`) | the ACK's own RTT sample |
//! | samples ignored after a window cut | 10 ms (`CubicDelta`) | 1 s (HZ) |
//! | HyStart ACK train | ACKs within 2 ms; a round longer than the minimum delay | within 2 ms; a round longer than half of (minimum delay + ACK delay from the pacing rate) |
//! | HyStart delay threshold | min delay + clamp(min delay, 4 ms, 1 s) | min delay + clamp(min delay / 8, 4 ms, 16 ms) |
//! | slow start | every ACKed segment, past ssthresh too | every ACKed segment up to ssthresh, the rest counts for CA |
//! | `cnt` | recomputed on every ACK, in floating point | at most every 1/32 s with cwnd unchanged, in the kernel's fixed point, with jiffies (HZ = 1000) |
//! | TCP-friendly region | none | Reno's window estimate caps `cnt` |
//! | multiplicative decrease | cwnd x 0.7 (at least 2 segments) | cwnd x 717/1024 (at least 2) |
//!
//! ns-3's times are signed 64-bit nanoseconds whose "unset" value is the most negative one
//! (`Time::Min()`), and its differences wrap; ours do the same, so a difference from an unset
//! time behaves as in ns-3. Linux's not-modelled parts: the restart after idle
//! (`CA_EVENT_TX_START`), the undo of spurious reductions, and the cwnd-limited test (a flow
//! that its application holds back still grows).

use super::cc::{AckInfo, CongestionControl};
use crate::config::CubicParams;
use crate::time::{Time, SEC, US};

/// ns-3's `Time::Min()`: the "not set" value of its `Time` fields.
const NS3_UNSET: i64 = i64::MIN;
/// `TcpCubic::HyStartLowWindow` (segments).
const HYSTART_LOW_WINDOW: u64 = 16;
/// `TcpCubic::HyStartMinSamples`, Linux's `HYSTART_MIN_SAMPLES`.
const HYSTART_MIN_SAMPLES: u32 = 8;
/// `TcpCubic::CntClamp`; Linux's clamp of `cnt` before the first loss is the same 20.
const CNT_CLAMP: u32 = 20;

/// Linux's `HZ` for the jiffies CUBIC counts its epoch in.
const LINUX_HZ: u64 = 1000;
/// One jiffy.
const JIFFY: Time = SEC / LINUX_HZ;

/// The conversion of a `double` to a 32-bit unsigned integer as ns-3's build does it
/// (`cvttsd2si` into a 64-bit register, low 32 bits kept): values out of the 64-bit range
/// give 0.
fn ns3_to_u32(x: f64) -> u32 {
    if x.is_nan() || !(-9.223_372_036_854_775e18..9.223_372_036_854_775e18).contains(&x) {
        0
    } else {
        (x as i64) as u32
    }
}

/// ns-3 3.37's `TcpCubic` state.
#[derive(Debug, Clone, PartialEq)]
struct Ns3State {
    cwnd_cnt: u32,
    last_max_cwnd: u32,
    origin: u32,
    k: f64,
    delay_min: i64,
    epoch_start: i64,
    found: bool,
    round_start: i64,
    end_seq: u64,
    last_ack: i64,
    curr_rtt: i64,
    sample_cnt: u32,
}

/// Linux's `struct bictcp` (times in microseconds, the epoch in jiffies).
#[derive(Debug, Clone, PartialEq, Default)]
struct LinuxState {
    cnt: u32,
    last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: u64,
    origin: u64,
    k: u64,
    delay_min: u64,
    epoch_start: Option<u64>,
    ack_cnt: u64,
    tcp_cwnd: u64,
    found: bool,
    round_start: u64,
    end_seq: u64,
    last_ack: u64,
    curr_rtt: u64,
    sample_cnt: u32,
    /// `snd_cwnd_cnt`: segments ACKed toward the next increase.
    cwnd_cnt: u64,
    /// Bytes ACKed that do not make a whole segment yet.
    acked_rem: u64,
}

#[derive(Debug, Clone, PartialEq)]
enum Flavor {
    Ns3(Ns3State),
    Linux(LinuxState),
}

/// CUBIC congestion control; see the module documentation for the two flavours.
#[derive(Debug, Clone, PartialEq)]
pub struct Cubic {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    params: CubicParams,
    /// Linux's `beta` in 1024ths (717 for 0.7).
    beta_1024: u64,
    /// Linux's `bic_scale * 10`: C in 1024ths (410 for 0.4).
    cube_rtt_scale: u128,
    flavor: Flavor,
}

impl Cubic {
    /// ns-3 3.37's `TcpCubic` with `params` (its `FastConvergence`, `Beta`, `C` and
    /// `HyStart` attributes) and its other defaults (HyStart with both detections, low window
    /// 16, 8 samples, ACK delta 2 ms, delay 4 ms to 1 s, CUBIC delta 10 ms, `cnt` clamp 20).
    pub fn ns3(mss: u64, init_cwnd: u64, params: CubicParams) -> Cubic {
        Cubic::with(
            mss,
            init_cwnd,
            params,
            Flavor::Ns3(Ns3State {
                cwnd_cnt: 0,
                last_max_cwnd: 0,
                origin: 0,
                k: 0.0,
                delay_min: NS3_UNSET,
                epoch_start: NS3_UNSET,
                found: false,
                round_start: NS3_UNSET,
                end_seq: 0,
                last_ack: NS3_UNSET,
                curr_rtt: NS3_UNSET,
                sample_cnt: 0,
            }),
        )
    }

    /// Linux's `tcp_cubic` with `params` (its `fast_convergence`, `beta` and `bic_scale`,
    /// in 1024ths, and `hystart` module parameters) and its other defaults (TCP
    /// friendliness, HyStart with both detections, low window 16, ACK delta 2 ms).
    pub fn linux(mss: u64, init_cwnd: u64, params: CubicParams) -> Cubic {
        Cubic::with(mss, init_cwnd, params, Flavor::Linux(LinuxState::default()))
    }

    fn with(mss: u64, init_cwnd: u64, params: CubicParams, flavor: Flavor) -> Cubic {
        let mss = mss.max(1);
        Cubic {
            mss,
            cwnd: init_cwnd.max(mss),
            ssthresh: u64::MAX,
            params,
            beta_1024: ((params.beta * 1024.0).round() as u64).clamp(1, 1023),
            cube_rtt_scale: ((params.c * 1024.0).round() as u128).max(1),
            flavor,
        }
    }

    /// Linux's `beta_scale`: 8 (1024 + beta) / 3 / (1024 - beta), in integers.
    fn linux_beta_scale(&self) -> u64 {
        8 * (1024 + self.beta_1024) / 3 / (1024 - self.beta_1024)
    }

    fn segments(&self) -> u64 {
        self.cwnd / self.mss
    }

    /// ns-3's `GetSsThresh`: W_max (with fast convergence) and the cut window.
    fn ns3_ssthresh(&mut self) -> u64 {
        let seg = self.segments() as u32;
        let CubicParams {
            beta, fast_convergence, ..
        } = self.params;
        let Flavor::Ns3(s) = &mut self.flavor else {
            unreachable!()
        };
        s.last_max_cwnd = if seg < s.last_max_cwnd && fast_convergence {
            ns3_to_u32((1.0 + beta) * f64::from(seg) * 0.5)
        } else {
            seg
        };
        s.epoch_start = NS3_UNSET;
        u64::from(ns3_to_u32(f64::from(seg) * beta).max(2)) * self.mss
    }

    /// Linux's `bictcp_recalc_ssthresh`.
    fn linux_ssthresh(&mut self) -> u64 {
        let seg = self.segments();
        let (beta, fast_convergence) = (self.beta_1024, self.params.fast_convergence);
        let Flavor::Linux(s) = &mut self.flavor else {
            unreachable!()
        };
        s.epoch_start = None;
        s.last_max_cwnd = if seg < s.last_max_cwnd && fast_convergence {
            seg * (1024 + beta) / 2048
        } else {
            seg
        };
        ((seg * beta) >> 10).max(2) * self.mss
    }

    fn cut(&mut self) -> u64 {
        match self.flavor {
            Flavor::Ns3(_) => self.ns3_ssthresh(),
            Flavor::Linux(_) => self.linux_ssthresh(),
        }
    }

    // ---------------------------------------------------------------- ns-3 3.37

    fn ns3_on_ack(&mut self, now: Time, ack: &AckInfo) {
        let now_ns = (now / 1000) as i64;
        let pkts_acked = !ack.unreported && (ack.advanced || ack.dupack);
        if pkts_acked {
            self.ns3_pkts_acked(now_ns, (ack.srtt / 1000) as i64);
        }
        if !ack.in_recovery && ack.acked > 0 {
            self.ns3_increase_window(now_ns, ack);
        }
    }

    /// `TcpCubic::PktsAcked`: the minimum delay and HyStart, from the smoothed RTT.
    fn ns3_pkts_acked(&mut self, now: i64, rtt: i64) {
        let (cwnd, ssthresh, mss, hystart) = (self.cwnd, self.ssthresh, self.mss, self.params.hystart);
        let Flavor::Ns3(s) = &mut self.flavor else {
            unreachable!()
        };
        if s.epoch_start != NS3_UNSET && now.wrapping_sub(s.epoch_start) < 10 * 1_000_000 {
            return;
        }
        if s.delay_min == NS3_UNSET || s.delay_min > rtt {
            s.delay_min = rtt;
        }
        if hystart && cwnd <= ssthresh && cwnd >= HYSTART_LOW_WINDOW * mss && !s.found {
            // `HystartUpdate`.
            if now.wrapping_sub(s.last_ack) <= 2 * 1_000_000 {
                s.last_ack = now;
                if now.wrapping_sub(s.round_start) > s.delay_min {
                    s.found = true;
                }
            }
            if s.sample_cnt < HYSTART_MIN_SAMPLES {
                if s.curr_rtt == NS3_UNSET || s.curr_rtt > rtt {
                    s.curr_rtt = rtt;
                }
                s.sample_cnt += 1;
            } else {
                let thresh = s.delay_min.clamp(4_000_000, 1_000_000_000);
                if s.curr_rtt > s.delay_min.wrapping_add(thresh) {
                    s.found = true;
                }
            }
            if s.found {
                self.ssthresh = cwnd;
            }
        }
    }

    /// `TcpCubic::IncreaseWindow`.
    fn ns3_increase_window(&mut self, now: i64, ack: &AckInfo) {
        let mut segs = (ack.acked / self.mss) as u32;
        if self.cwnd < self.ssthresh {
            let Flavor::Ns3(s) = &mut self.flavor else {
                unreachable!()
            };
            if self.params.hystart && ack.snd_una > s.end_seq {
                // `HystartReset`.
                s.round_start = now;
                s.last_ack = now;
                s.end_seq = ack.snd_max;
                s.curr_rtt = NS3_UNSET;
                s.sample_cnt = 0;
            }
            // Every ACKed segment, past ssthresh too; cwnd is 32 bits wide in ns-3.
            let sum = (self.cwnd as u32).wrapping_add(segs.wrapping_mul(self.mss as u32));
            self.cwnd = u64::from(sum);
            segs = 0;
        }
        if self.cwnd >= self.ssthresh && segs > 0 {
            let seg_cwnd = self.segments() as u32;
            let Flavor::Ns3(s) = &mut self.flavor else {
                unreachable!()
            };
            s.cwnd_cnt = s.cwnd_cnt.wrapping_add(segs);
            let cnt = ns3_update(s, now, seg_cwnd, self.params.c);
            if s.cwnd_cnt >= cnt {
                s.cwnd_cnt -= cnt;
                self.cwnd += self.mss;
            }
        }
    }

    /// `CongestionStateSet(CA_LOSS)`: `CubicReset` and `HystartReset`.
    fn ns3_loss_state(&mut self, now: Time, snd_max: u64) {
        let Flavor::Ns3(s) = &mut self.flavor else {
            unreachable!()
        };
        s.last_max_cwnd = 0;
        s.origin = 0;
        s.k = 0.0;
        s.delay_min = NS3_UNSET;
        s.found = false;
        let now = (now / 1000) as i64;
        s.round_start = now;
        s.last_ack = now;
        s.end_seq = snd_max;
        s.curr_rtt = NS3_UNSET;
        s.sample_cnt = 0;
    }

    // ---------------------------------------------------------------- Linux

    fn linux_on_ack(&mut self, now: Time, ack: &AckInfo) {
        if let Some(rtt) = ack.rtt_sample {
            self.linux_pkts_acked(now, ack, rtt);
        }
        if ack.in_recovery || ack.acked == 0 {
            return;
        }
        let (mss, ssthresh) = (self.mss, self.ssthresh);
        let (cube_rtt_scale, beta_scale) = (self.cube_rtt_scale, self.linux_beta_scale());
        let Flavor::Linux(s) = &mut self.flavor else {
            unreachable!()
        };
        let bytes = s.acked_rem + ack.acked;
        let mut acked = bytes / mss;
        s.acked_rem = bytes % mss;
        if acked == 0 {
            return;
        }
        let mut w = self.cwnd / mss;
        let thresh = ssthresh / mss;
        if w < thresh {
            // `tcp_slow_start`: up to ssthresh, the rest counts for congestion avoidance.
            let grown = (w + acked).min(thresh);
            acked -= grown - w;
            w = grown;
            self.cwnd = w * mss;
            if acked == 0 {
                return;
            }
        }
        let now_jiffies = now / JIFFY;
        let cnt = linux_update(s, now_jiffies, w, acked, (cube_rtt_scale, beta_scale));
        // `tcp_cong_avoid_ai`.
        let cnt = u64::from(cnt);
        if s.cwnd_cnt >= cnt {
            s.cwnd_cnt = 0;
            w += 1;
        }
        s.cwnd_cnt += acked;
        if s.cwnd_cnt >= cnt {
            let d = s.cwnd_cnt / cnt;
            s.cwnd_cnt -= d * cnt;
            w += d;
        }
        self.cwnd = w * mss;
    }

    /// `bictcp_acked` and `hystart_update`.
    fn linux_pkts_acked(&mut self, now: Time, ack: &AckInfo, rtt: Time) {
        let (cwnd, ssthresh, mss, hystart) = (self.cwnd, self.ssthresh, self.mss, self.params.hystart);
        let now_us = now / US;
        let now_jiffies = now / JIFFY;
        let Flavor::Linux(s) = &mut self.flavor else {
            unreachable!()
        };
        if let Some(e) = s.epoch_start {
            if now_jiffies.saturating_sub(e) < LINUX_HZ {
                return;
            }
        }
        let delay = (rtt / US).max(1);
        if s.delay_min == 0 || s.delay_min > delay {
            s.delay_min = delay;
        }
        if !hystart || s.found || cwnd >= ssthresh || cwnd < HYSTART_LOW_WINDOW * mss {
            return;
        }
        if ack.snd_una > s.end_seq {
            linux_hystart_reset(s, now_us, ack.snd_max);
        }
        if now_us.saturating_sub(s.last_ack) <= 2000 {
            s.last_ack = now_us;
            // `hystart_ack_delay` from the pacing rate Linux sets (`tcp_update_pacing_rate`:
            // 200% of cwnd per smoothed RTT in slow start), halved without a pacing qdisc.
            let srtt_us = (ack.srtt / US).max(1);
            let ratio = if cwnd < ssthresh / 2 { 200 } else { 120 };
            let rate = u128::from(cwnd) * ratio * 1_000_000 / 100 / u128::from(srtt_us);
            let ack_delay = (65_536u128 * 4 * 1_000_000)
                .checked_div(rate)
                .map_or(0, |d| d.min(1000) as u64);
            let threshold = (s.delay_min + ack_delay) >> 1;
            if now_us.saturating_sub(s.round_start) > threshold {
                s.found = true;
            }
        }
        if s.curr_rtt > delay {
            s.curr_rtt = delay;
        }
        if s.sample_cnt < HYSTART_MIN_SAMPLES {
            s.sample_cnt += 1;
        } else if s.curr_rtt > s.delay_min + (s.delay_min >> 3).clamp(4000, 16_000) {
            s.found = true;
        }
        if s.found {
            self.ssthresh = cwnd;
        }
    }

    /// `bictcp_state(TCP_CA_Loss)`: `bictcp_reset` and `bictcp_hystart_reset`.
    fn linux_loss_state(&mut self, now: Time, snd_max: u64) {
        let Flavor::Linux(s) = &mut self.flavor else {
            unreachable!()
        };
        let (cwnd_cnt, acked_rem) = (s.cwnd_cnt, s.acked_rem);
        *s = LinuxState {
            cwnd_cnt,
            acked_rem,
            ..LinuxState::default()
        };
        linux_hystart_reset(s, now / US, snd_max);
    }
}

/// ns-3's `TcpCubic::Update`: the segments ACKed per one-segment increase.
fn ns3_update(s: &mut Ns3State, now: i64, seg_cwnd: u32, c: f64) -> u32 {
    if s.epoch_start == NS3_UNSET {
        s.epoch_start = now;
        if s.last_max_cwnd <= seg_cwnd {
            s.k = 0.0;
            s.origin = seg_cwnd;
        } else {
            s.k = (f64::from(s.last_max_cwnd - seg_cwnd) / c).powf(1.0 / 3.0);
            s.origin = s.last_max_cwnd;
        }
    }
    let t = now.wrapping_add(s.delay_min).wrapping_sub(s.epoch_start) as f64 / 1e9;
    let offs = if t < s.k { s.k - t } else { t - s.k };
    let delta = ns3_to_u32(c * offs.powf(3.0));
    let target = if t < s.k {
        s.origin.wrapping_sub(delta)
    } else {
        s.origin.wrapping_add(delta)
    };
    let mut cnt = if target > seg_cwnd {
        seg_cwnd / (target - seg_cwnd)
    } else {
        seg_cwnd.wrapping_mul(100)
    };
    if s.last_max_cwnd == 0 && cnt > CNT_CLAMP {
        cnt = CNT_CLAMP;
    }
    cnt.max(2)
}

/// Linux's `bictcp_update` (with `tcp_friendliness`): the segments ACKed per one-segment
/// increase, for a window of `cwnd` segments at `now` jiffies after `acked` more segments;
/// `scales` are `cube_rtt_scale` (C in 1024ths) and `beta_scale`.
fn linux_update(s: &mut LinuxState, now: u64, cwnd: u64, acked: u64, scales: (u128, u64)) -> u32 {
    let (cube_rtt_scale, beta_scale) = scales;
    s.ack_cnt += acked;
    if s.last_cwnd == cwnd && now.saturating_sub(s.last_time) <= LINUX_HZ / 32 {
        return s.cnt.max(2);
    }
    if !(s.epoch_start.is_some() && now == s.last_time) {
        s.last_cwnd = cwnd;
        s.last_time = now;
        if s.epoch_start.is_none() {
            s.epoch_start = Some(now);
            s.ack_cnt = acked;
            s.tcp_cwnd = cwnd;
            if s.last_max_cwnd <= cwnd {
                s.k = 0;
                s.origin = cwnd;
            } else {
                // K in 2^-10 s: cbrt(2^40 / 410 x (W_max - cwnd)), as the kernel's `cubic_root`
                // (here in floating point, rounded down).
                let x = (1u128 << 40) / cube_rtt_scale * u128::from(s.last_max_cwnd - cwnd);
                s.k = (x as f64).cbrt() as u64;
                s.origin = s.last_max_cwnd;
            }
        }
        let epoch = s.epoch_start.unwrap_or(now);
        let delay_jiffies = s.delay_min.div_ceil(JIFFY / US);
        let t = ((now - epoch + delay_jiffies) << 10) / LINUX_HZ;
        let offs = u128::from(t.abs_diff(s.k));
        let delta = ((cube_rtt_scale * offs * offs * offs) >> 40) as u64;
        let target = if t < s.k {
            s.origin.saturating_sub(delta)
        } else {
            s.origin + delta
        };
        let cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100 * cwnd
        };
        s.cnt = cnt.min(u64::from(u32::MAX)) as u32;
        if s.last_max_cwnd == 0 && s.cnt > CNT_CLAMP {
            s.cnt = CNT_CLAMP;
        }
    }
    // TCP friendliness: Reno's window over the same ACKs caps `cnt`.
    let delta = ((cwnd * beta_scale) >> 3).max(1);
    while s.ack_cnt > delta {
        s.ack_cnt -= delta;
        s.tcp_cwnd += 1;
    }
    if s.tcp_cwnd > cwnd {
        let max_cnt = cwnd / (s.tcp_cwnd - cwnd);
        if u64::from(s.cnt) > max_cnt {
            s.cnt = max_cnt as u32;
        }
    }
    s.cnt = s.cnt.max(2);
    s.cnt
}

fn linux_hystart_reset(s: &mut LinuxState, now_us: u64, snd_nxt: u64) {
    s.round_start = now_us;
    s.last_ack = now_us;
    s.end_seq = snd_nxt;
    s.curr_rtt = u64::MAX;
    s.sample_cnt = 0;
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
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
    fn on_ack(&mut self, now: Time, ack: &AckInfo) {
        match self.flavor {
            Flavor::Ns3(_) => self.ns3_on_ack(now, ack),
            Flavor::Linux(_) => self.linux_on_ack(now, ack),
        }
    }
    fn on_congestion_event(&mut self, _now: Time, _flight: u64) {
        self.ssthresh = self.cut();
    }
    fn on_ecn_echo(&mut self, _now: Time, _flight: u64) {
        self.ssthresh = self.cut();
        self.cwnd = self.ssthresh;
    }
    fn on_rto(&mut self, _now: Time, _flight: u64, first: bool) {
        if first {
            self.ssthresh = self.cut();
        }
        self.cwnd = self.mss;
    }
    fn on_loss_state(&mut self, now: Time, snd_max: u64) {
        match self.flavor {
            Flavor::Ns3(_) => self.ns3_loss_state(now, snd_max),
            Flavor::Linux(_) => self.linux_loss_state(now, snd_max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    const MSS: u64 = 1000;

    fn ack(acked: u64, snd_una: u64, snd_max: u64, srtt: Time) -> AckInfo {
        AckInfo {
            acked,
            snd_una,
            snd_max,
            snd_nxt: snd_max,
            advanced: acked > 0,
            srtt,
            rtt_sample: Some(srtt),
            ..AckInfo::default()
        }
    }

    /// One window of ACKs at `t`, each for two segments, from `una` on; the window after.
    fn one_window(c: &mut Cubic, t: Time, una: &mut u64, rtt: Time) -> u64 {
        for _ in 0..c.cwnd() / MSS / 2 {
            *una += 2 * MSS;
            c.on_ack(t, &ack(2 * MSS, *una, *una + c.cwnd(), rtt));
        }
        c.cwnd() / MSS
    }

    #[test]
    fn ns3_cut_is_seven_tenths_with_fast_convergence() {
        let mut c = Cubic::ns3(MSS, 100 * MSS, CubicParams::default());
        c.on_congestion_event(0, 0);
        assert_eq!(c.ssthresh(), 70 * MSS);
        let Flavor::Ns3(s) = &c.flavor else { unreachable!() };
        assert_eq!(s.last_max_cwnd, 100);
        // A loss below the last maximum: W_max = cwnd (1 + beta) / 2 (RFC 9438 §4.7).
        c.set_cwnd(80 * MSS);
        c.on_congestion_event(0, 0);
        assert_eq!(c.ssthresh(), 56 * MSS);
        let Flavor::Ns3(s) = &c.flavor else { unreachable!() };
        assert_eq!(s.last_max_cwnd, 68);
        // At least two segments.
        c.set_cwnd(2 * MSS);
        c.on_congestion_event(0, 0);
        assert_eq!(c.ssthresh(), 2 * MSS);
    }

    #[test]
    fn ns3_slow_start_counts_every_segment_past_ssthresh() {
        // `TcpCubic::IncreaseWindow` adds every ACKed segment in slow start and does not stop
        // at ssthresh (ns-3's TcpLinuxReno does); the ACK's rest does not count for CA.
        let mut c = Cubic::ns3(MSS, 10 * MSS, CubicParams::default());
        c.set_ssthresh(11 * MSS);
        c.on_ack(MS, &ack(4 * MSS, 4 * MSS + 1, 10 * MSS, MS));
        assert_eq!(c.cwnd(), 14 * MSS);
    }

    #[test]
    fn ns3_window_follows_the_cubic_after_a_loss() {
        // W_max 100 segments, cut to 70: K = (30 / 0.4)^(1/3) = 4.22 s; the window grows
        // back toward 100, fast at first, flat near K, and passes it only after K.
        let mut c = Cubic::ns3(MSS, 100 * MSS, CubicParams::default());
        c.on_congestion_event(0, 0);
        c.set_cwnd(c.ssthresh());
        let srtt = 10 * MS;
        let mut una = 1;
        let mut last = 70;
        let mut by_second = Vec::new();
        for step in 1..=800 {
            let w = one_window(&mut c, step * srtt, &mut una, srtt);
            assert!(w >= last, "the window only grows in congestion avoidance");
            last = w;
            if step % 100 == 0 {
                by_second.push(w);
            }
        }
        // Concave up to K: more growth in the first second than in the fourth.
        assert!(by_second[0] - 70 > by_second[3] - by_second[2], "{by_second:?}");
        // Near K the target stays at W_max (its offset truncated to whole segments), where
        // `cnt` is 100 windows: one segment at most in the last second before K.
        assert!(by_second[3] <= 101, "at W_max before K: {by_second:?}");
        assert!(by_second[7] > 105, "past W_max after K: {by_second:?}");
    }

    #[test]
    fn ns3_hystart_leaves_slow_start_on_an_ack_train() {
        // ACKs closer than 2 ms apart over a round longer than the minimum delay: ssthresh
        // becomes cwnd (`HystartUpdate`), once cwnd has 16 segments.
        let mut c = Cubic::ns3(MSS, 16 * MSS, CubicParams::default());
        let srtt = 100 * crate::time::US;
        let mut una = 1;
        let mut t = MS;
        while c.ssthresh() == u64::MAX {
            una += MSS;
            t += 10 * crate::time::US;
            c.on_ack(t, &ack(MSS, una, una + c.cwnd(), srtt));
            assert!(c.cwnd() < 40 * MSS, "HyStart never left slow start");
        }
        // `PktsAcked` (HyStart) comes before `IncreaseWindow`, which then counts the ACK for
        // congestion avoidance: with no W_max yet, one segment per 20 at most.
        assert_eq!(c.ssthresh(), c.cwnd());
    }

    #[test]
    fn ns3_timeout_forgets_w_max_and_clamps_the_growth() {
        // `CongestionStateSet(CA_LOSS)` resets W_max to 0, so the next epoch grows with the
        // clamp: one segment per 20 ACKed at most.
        let mut c = Cubic::ns3(MSS, 50 * MSS, CubicParams::default());
        c.on_rto(0, 0, true);
        c.on_loss_state(0, 50 * MSS);
        assert_eq!(c.cwnd(), MSS);
        assert_eq!(c.ssthresh(), 35 * MSS);
        c.set_cwnd(40 * MSS);
        let Flavor::Ns3(s) = &mut c.flavor else { unreachable!() };
        assert_eq!(s.last_max_cwnd, 0);
        assert_eq!(ns3_update(s, 1_000_000, 40, 0.4), CNT_CLAMP);
    }

    #[test]
    fn ns3_conversion_to_u32_is_the_x86_one() {
        assert_eq!(ns3_to_u32(70.9), 70);
        assert_eq!(ns3_to_u32(4_294_967_296.0 + 5.0), 5);
        assert_eq!(ns3_to_u32(1e30), 0);
        assert_eq!(ns3_to_u32(f64::NAN), 0);
    }

    #[test]
    fn linux_cut_is_717_of_1024() {
        let mut c = Cubic::linux(MSS, 100 * MSS, CubicParams::default());
        c.on_congestion_event(0, 0);
        assert_eq!(c.ssthresh(), 70 * MSS);
        c.set_cwnd(80 * MSS);
        c.on_congestion_event(0, 0);
        assert_eq!(c.ssthresh(), 56 * MSS);
        let Flavor::Linux(s) = &c.flavor else { unreachable!() };
        assert_eq!(s.last_max_cwnd, 80 * 1741 / 2048);
    }

    #[test]
    fn linux_small_windows_grow_at_renos_pace() {
        // After a cut from 100 to 70 segments at a 10 ms RTT the cubic would take K = 4.2 s
        // to return; Reno's estimate (TCP friendliness: 3 (1 - beta) / (1 + beta) = 0.53
        // segment per RTT) is ahead of it, and the window follows that.
        let mut c = Cubic::linux(MSS, 100 * MSS, CubicParams::default());
        c.on_congestion_event(0, 0);
        c.set_cwnd(c.ssthresh());
        let rtt = 10 * MS;
        let mut una = 1;
        let mut w = 0;
        for step in 1..=100u64 {
            w = one_window(&mut c, step * rtt, &mut una, rtt);
        }
        assert!((118..=128).contains(&w), "after 100 RTTs: {w} segments");
    }

    #[test]
    fn linux_k_and_target_follow_the_cubic() {
        // W_max 1000 segments, cwnd 700: K = (300 / C)^(1/3) with C = 410 / 1024, in 2^-10 s.
        let mut s = LinuxState {
            last_max_cwnd: 1000,
            ..LinuxState::default()
        };
        let cnt = linux_update(&mut s, 5, 700, 1, (410, 15));
        let k = (300.0f64 / (410.0 / 1024.0)).cbrt() * 1024.0;
        assert!((s.k as f64 - k).abs() < 2.0, "K {} against {k}", s.k);
        assert_eq!(s.origin, 1000);
        // At the epoch's start the target is cwnd, one segment above it after the kernel's
        // rounding down of C (t - K)^3: a window's worth of ACKs per segment.
        assert_eq!(cnt, 700);
        // Half-way to K (3.7 s on), the target is 1000 - C (K/2)^3 = 962: 700 / 262 = 2.
        let half = 5 + (k / 2.0 / 1024.0 * 1000.0) as u64;
        assert_eq!(linux_update(&mut s, half, 700, 1, (410, 15)), 2);
    }
}
