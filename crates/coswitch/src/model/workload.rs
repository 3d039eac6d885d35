//! The traffic: open-loop flows, each a number of packets of one size spaced by exponential
//! gaps, arriving as a Poisson process, as when the paper replays its data-center trace.
//!
//! ## The trace-like mix ([`TraceMix::paper`])
//! The paper's trace (NetFlow, an IBM production data center, 2008) is private; it gives
//! these statistics, which the default mix meets (measured by [`TraceMix::stats`], see the
//! unit tests):
//! * mice (flows under 18 packets, where its Figure 1's flow curve stops outrunning the packet
//!   curve) are over 80% of flows and under 15% of packets: ours 88.0% and 13.9%;
//! * the largest 10% of flows carry over 75% of packets: ours 82.0%;
//! * the real trace runs at about 10 kpps and 40 Mbps, so 500 B per packet: ours 505 B.
//!
//! Sizes: 1 packet 62%, 2 packets 15%, 3-17 log-uniform 11%, 18-36 uniform 2%, and 10%
//! bounded-Pareto (shape 1.5) on 37-20,000 packets: mean 12.9 packets per flow.
//! Packet sizes: flows under 18 packets send 64-400 B (uniform); larger flows are bulk, a
//! third of them data (1,514 B frames), two thirds their ACK streams (66 B).
//! Gaps: bulk flows send every 2 ms on average (**ours**); mice every 2 s on average, a value
//! **calibrated** so that, under reactive control with a 3 s idle timeout, the physical
//! switch's 2K-entry TCAM fills at 6 kpps as in the paper's Figure 5 (a NetFlow 5-tuple flow
//! of a few packets spread over seconds, such as a keep-alive or a monitoring poll).
//!
//! Flow records from `tandem pcap flows` can be replayed instead ([`FlowSpec::from_record`]).

use crate::types::{Time, SEC};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// One flow to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowSpec {
    /// First packet.
    pub start: Time,
    /// Sending server (VM traffic enters its Flow-Arbiter).
    pub server: u32,
    /// Packets.
    pub packets: u32,
    /// Bytes per packet (Ethernet frame).
    pub packet_bytes: u32,
    /// Mean gap between packets (exponential gaps).
    pub gap: Time,
}

impl FlowSpec {
    /// A flow record (from `tandem pcap flows`) as a flow to replay: its packets spread over
    /// its span, its mean packet size, its server chosen by source address. `t0` (picoseconds) is subtracted from its start.
    pub fn from_record(r: &tandem_wire::flow::FlowRecord, t0: Time, servers: u32) -> FlowSpec {
        let packets = r.packets.clamp(1, u64::from(u32::MAX)) as u32;
        let first = r.first_ns.saturating_mul(1_000);
        let span = r.last_ns.saturating_sub(r.first_ns).saturating_mul(1_000);
        FlowSpec {
            start: first.saturating_sub(t0),
            server: u32::from(r.key.src) % servers.max(1),
            packets,
            packet_bytes: (r.bytes / u64::from(packets)).clamp(60, 9_000) as u32,
            gap: if packets > 1 { span / u64::from(packets - 1) } else { 0 },
        }
    }
}

/// A flow-size and packet-size mix (see the module docs for the default's sources).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceMix {
    /// Share of 1-packet flows.
    pub one: f64,
    /// Share of 2-packet flows.
    pub two: f64,
    /// Share of 3..=17-packet flows (log-uniform).
    pub small: f64,
    /// Share of 18..=36-packet flows (uniform).
    pub medium: f64,
    /// Share of bounded-Pareto flows on `[large_min, large_max]`.
    pub large: f64,
    /// Smallest large flow, packets.
    pub large_min: u32,
    /// Largest large flow, packets.
    pub large_max: u32,
    /// Pareto shape of large flows.
    pub large_shape: f64,
    /// Packet sizes of flows under 18 packets: uniform on this range, bytes.
    pub mouse_bytes: (u32, u32),
    /// Share of bulk flows (18 packets or more) that send full frames; the rest send ACKs.
    pub bulk_data: f64,
    /// Mean gap between a mouse's packets.
    pub mouse_gap: Time,
    /// Mean gap between a bulk flow's packets.
    pub bulk_gap: Time,
}

/// Flows of fewer packets than this are mice in the paper's statistics.
pub const MOUSE_PACKETS: u32 = 18;
/// A full data frame (1,500 B MTU + 14 B Ethernet header).
pub const DATA_FRAME: u32 = 1514;
/// A bare TCP ACK frame.
pub const ACK_FRAME: u32 = 66;

impl TraceMix {
    /// The default, trace-like mix.
    pub fn paper() -> TraceMix {
        TraceMix {
            one: 0.62,
            two: 0.15,
            small: 0.11,
            medium: 0.02,
            large: 0.10,
            large_min: 37,
            large_max: 20_000,
            large_shape: 1.5,
            mouse_bytes: (64, 400),
            bulk_data: 1.0 / 3.0,
            mouse_gap: 2_000_000_000_000,
            bulk_gap: 2_000_000_000,
        }
    }

    /// The same mix with only its mice (flows under 18 packets), for a step in the mouse rate.
    pub fn mice_only(&self) -> TraceMix {
        TraceMix {
            medium: 0.0,
            large: 0.0,
            ..*self
        }
    }

    fn weights(&self) -> [f64; 5] {
        let w = [self.one, self.two, self.small, self.medium, self.large].map(|x| x.max(0.0));
        let s: f64 = w.iter().sum();
        if s > 0.0 {
            w.map(|x| x / s)
        } else {
            [1.0, 0.0, 0.0, 0.0, 0.0]
        }
    }

    /// Distribution of packets per flow as (packets, probability), exact to the sampler.
    pub fn size_pmf(&self) -> Vec<(u32, f64)> {
        let [w1, w2, ws, wm, wl] = self.weights();
        let mut m: Vec<f64> = vec![0.0; self.large_max.max(37) as usize + 1];
        m[1] += w1;
        m[2] += w2;
        // Log-uniform on [3, 18): floor of exp(U(ln 3, ln 18)).
        let (a, b) = (3f64.ln(), 18f64.ln());
        for n in 3..18u32 {
            let p = ((f64::from(n + 1)).ln().min(b) - f64::from(n).ln()) / (b - a);
            m[n as usize] += ws * p;
        }
        for slot in &mut m[18..=36] {
            *slot += wm / 19.0;
        }
        let (lo, hi, k) = (
            f64::from(self.large_min.max(1)),
            f64::from(self.large_max.max(self.large_min.max(1) + 1)),
            self.large_shape,
        );
        let cdf = |x: f64| (1.0 - (lo / x).powf(k)) / (1.0 - (lo / hi).powf(k));
        for n in self.large_min.max(1)..self.large_max.max(self.large_min.max(1) + 1) {
            let p = cdf(f64::from(n + 1).min(hi)) - cdf(f64::from(n));
            if let Some(slot) = m.get_mut(n as usize) {
                *slot += wl * p;
            }
        }
        m.iter()
            .enumerate()
            .filter(|(_, &p)| p > 0.0)
            .map(|(n, &p)| (n as u32, p))
            .collect()
    }

    /// Draws one flow's packet count.
    pub fn draw_packets(&self, rng: &mut impl Rng) -> u32 {
        let [w1, w2, ws, wm, _] = self.weights();
        let u: f64 = rng.random();
        if u < w1 {
            1
        } else if u < w1 + w2 {
            2
        } else if u < w1 + w2 + ws {
            let (a, b) = (3f64.ln(), 18f64.ln());
            (rng.random_range(a..b).exp().floor() as u32).clamp(3, 17)
        } else if u < w1 + w2 + ws + wm {
            rng.random_range(18..=36)
        } else {
            let lo = f64::from(self.large_min.max(1));
            let hi = f64::from(self.large_max.max(self.large_min.max(1) + 1));
            let k = self.large_shape;
            let v: f64 = rng.random();
            // Inverse CDF of the bounded Pareto.
            let x = lo / (1.0 - v * (1.0 - (lo / hi).powf(k))).powf(1.0 / k);
            (x.floor() as u32).clamp(self.large_min.max(1), self.large_max.max(1))
        }
    }

    /// Draws a flow: its packets, packet size and mean gap.
    pub fn draw(&self, start: Time, server: u32, rng: &mut impl Rng) -> FlowSpec {
        let packets = self.draw_packets(rng);
        let (packet_bytes, gap) = if packets < MOUSE_PACKETS {
            let (a, b) = self.mouse_bytes;
            (rng.random_range(a.min(b)..=b.max(a)), self.mouse_gap)
        } else if rng.random_bool(self.bulk_data.clamp(0.0, 1.0)) {
            (DATA_FRAME, self.bulk_gap)
        } else {
            (ACK_FRAME, self.bulk_gap)
        };
        FlowSpec {
            start,
            server,
            packets,
            packet_bytes,
            gap,
        }
    }

    /// The mix's statistics, computed exactly from [`TraceMix::size_pmf`].
    pub fn stats(&self) -> MixStats {
        let pmf = self.size_pmf();
        let mean: f64 = pmf.iter().map(|&(n, p)| f64::from(n) * p).sum();
        let mice_flows: f64 = pmf.iter().filter(|(n, _)| *n < MOUSE_PACKETS).map(|(_, p)| p).sum();
        let mice_packets: f64 = pmf
            .iter()
            .filter(|(n, _)| *n < MOUSE_PACKETS)
            .map(|&(n, p)| f64::from(n) * p)
            .sum();
        // The largest 10% of flows: walk the pmf from the top.
        let (mut flows, mut pk) = (0.0, 0.0);
        for &(n, p) in pmf.iter().rev() {
            let take = p.min(0.10 - flows);
            if take <= 0.0 {
                break;
            }
            flows += take;
            pk += take * f64::from(n);
        }
        let (a, b) = self.mouse_bytes;
        let mouse_b = (f64::from(a) + f64::from(b)) / 2.0;
        let bulk_b = self.bulk_data * f64::from(DATA_FRAME) + (1.0 - self.bulk_data) * f64::from(ACK_FRAME);
        let bytes_per_packet = (mice_packets * mouse_b + (mean - mice_packets) * bulk_b) / mean;
        MixStats {
            mean_packets: mean,
            mice_flow_share: mice_flows,
            mice_packet_share: mice_packets / mean,
            top10_packet_share: pk / mean,
            bytes_per_packet,
        }
    }
}

/// Statistics of a mix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixStats {
    /// Mean packets per flow.
    pub mean_packets: f64,
    /// Share of flows under 18 packets.
    pub mice_flow_share: f64,
    /// Share of packets in flows under 18 packets.
    pub mice_packet_share: f64,
    /// Share of packets in the largest 10% of flows.
    pub top10_packet_share: f64,
    /// Mean bytes per packet.
    pub bytes_per_packet: f64,
}

/// A Poisson stream of flows from one mix, between two times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stream {
    /// The mix.
    pub mix: TraceMix,
    /// New flows per second.
    pub flows_per_sec: f64,
    /// First arrival no earlier than this.
    pub from: Time,
    /// No arrival at or after this.
    pub to: Time,
}

impl Stream {
    /// A stream whose flows offer `pps` packets per second on average.
    pub fn at_pps(mix: TraceMix, pps: f64, from: Time, to: Time) -> Stream {
        Stream {
            flows_per_sec: pps / mix.stats().mean_packets,
            mix,
            from,
            to,
        }
    }
}

/// Draws a stream's flows in start order over `servers` servers (uniformly), from `seed`.
pub fn generate(stream: &Stream, servers: u32, seed: u64) -> Vec<FlowSpec> {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut out = Vec::new();
    if !(stream.flows_per_sec > 0.0 && stream.flows_per_sec.is_finite()) {
        return out;
    }
    let mean_gap = SEC as f64 / stream.flows_per_sec;
    let mut t = stream.from as f64;
    loop {
        let u: f64 = rng.random();
        t += -(1.0 - u).ln() * mean_gap;
        if t >= stream.to as f64 {
            break;
        }
        let server = rng.random_range(0..servers.max(1));
        out.push(stream.mix.draw(t as Time, server, &mut rng));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_mix_meets_the_papers_statistics() {
        let s = TraceMix::paper().stats();
        eprintln!("{s:?}");
        assert!(s.mice_flow_share > 0.80, "mice over 80% of flows");
        assert!(s.mice_packet_share < 0.15, "mice under 15% of packets");
        assert!(s.top10_packet_share > 0.75, "top 10% carry over 75%");
        assert!((s.bytes_per_packet - 500.0).abs() < 25.0, "about 40 Mbps at 10 kpps");
        let total: f64 = TraceMix::paper().size_pmf().iter().map(|(_, p)| p).sum();
        assert!((total - 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_sampler_agrees_with_the_pmf() {
        let mix = TraceMix::paper();
        let mut rng = Pcg64::seed_from_u64(1);
        let n = 400_000;
        let (mut sum, mut mice) = (0u64, 0u64);
        for _ in 0..n {
            let k = mix.draw_packets(&mut rng);
            sum += u64::from(k);
            mice += u64::from(k < MOUSE_PACKETS);
        }
        let s = mix.stats();
        let mean = sum as f64 / n as f64;
        assert!(
            (mean / s.mean_packets - 1.0).abs() < 0.05,
            "mean {mean} vs {}",
            s.mean_packets
        );
        assert!((mice as f64 / n as f64 - s.mice_flow_share).abs() < 0.005);
    }

    #[test]
    fn streams_are_deterministic_and_at_rate() {
        let st = Stream::at_pps(TraceMix::paper(), 10_000.0, 0, 10 * SEC);
        let a = generate(&st, 4, 7);
        assert_eq!(a, generate(&st, 4, 7));
        assert_ne!(a, generate(&st, 4, 8));
        let rate = a.len() as f64 / 10.0;
        assert!((rate / st.flows_per_sec - 1.0).abs() < 0.05, "{rate} flows/s");
        assert!(a.windows(2).all(|w| w[0].start <= w[1].start));
        assert!(a.iter().all(|f| f.server < 4));
        let mice = Stream::at_pps(TraceMix::paper().mice_only(), 1000.0, 0, SEC);
        assert!(generate(&mice, 1, 1).iter().all(|f| f.packets < MOUSE_PACKETS));
    }
}
