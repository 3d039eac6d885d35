//! The NF server (a FastClick-like forwarder): its latency model and calibration.
//!
//! A packet of `b` bytes that has fully arrived at the server at `t`:
//! 1. crosses the server's PCIe/memory path, a FIFO byte server of `bus_bps` (so the server
//!    has a byte throughput limit and queues when close to it);
//! 2. then spends `base + b x per_byte` in the NF, `base` drawn from [`NfDist`] around
//!    `base_mean` (batching, polling, processing), `b x per_byte` the part that grows with the
//!    bytes the server must move (DMA to and from memory, cache misses, bytes ahead of it in
//!    the rings);
//! 3. and leaves on the 100 Gb/s link back to the switch (modelled by the caller).
//!
//! [`forwarder`] is calibrated to the slides: a FastClick forwarder with "20 us Average
//! Latency" for whole packets, and TurboSwitch's "33% reduction" when it sees 72-byte headers
//! (64 B + 8 B ID) instead, both for the uniform 64-1500 B packet mix (mean 782 B) at zero load.
//! Two numbers fix the two unknowns (`base_mean`, `per_byte`); the 33% is therefore an input
//! of the model, not a prediction (docs/systems/turboswitch.md says so next to the result).

use crate::types::{tx_time, Time, US};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// Distribution of the NF's fixed latency around its mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NfDist {
    /// Always the mean.
    Constant,
    /// Uniform in mean x (1 +- spread).
    Uniform {
        /// Half-width relative to the mean (0.1 = +-10%).
        spread: f64,
    },
    /// mean x min + exponential with mean mean x (1 - min): a floor plus a tail.
    ShiftedExp {
        /// The floor relative to the mean (0..1).
        min: f64,
    },
}

impl NfDist {
    /// One draw with the given mean, in picoseconds.
    pub fn sample(self, mean: Time, rng: &mut Pcg64) -> Time {
        let m = mean as f64;
        let x = match self {
            NfDist::Constant => m,
            NfDist::Uniform { spread } => m * (1.0 + spread * (2.0 * rng.random::<f64>() - 1.0)),
            NfDist::ShiftedExp { min } => {
                let u: f64 = rng.random();
                m * min - (1.0 - u).ln() * m * (1.0 - min)
            }
        };
        x.max(0.0).round() as Time
    }
}

/// The NF's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NfConfig {
    /// Mean of the fixed part of the latency.
    pub base_mean: Time,
    /// Its distribution.
    pub dist: NfDist,
    /// Latency per byte of the packet, picoseconds per byte.
    pub per_byte_ps: u64,
    /// The PCIe/memory path's byte rate (0 = unlimited).
    pub bus_bps: u64,
}

/// Zero-load latency of the calibration reference (slides: "FastClick Forwarder NF => 20 us
/// Average Latency").
pub const REF_WHOLE_LATENCY: Time = 20 * US;
/// Reduction of the NF latency TurboSwitch brings with that forwarder (slides: "33% reduction").
pub const REF_REDUCTION: f64 = 0.33;
/// Mean size of the uniform 64-1500 B packet mix.
pub const REF_WHOLE_BYTES: f64 = 782.0;
/// Bytes TurboSwitch sends to the NF per split packet (64 B header + 8 B ID).
pub const REF_HEADER_BYTES: f64 = 72.0;
/// PCIe 3.0 x16 (ours: 126 Gb/s, its raw rate per direction).
pub const BUS_BPS: u64 = 126_000_000_000;
/// Link rate between switch and NF (slides: 100 Gb/s wiring).
pub const LINK_BPS: u64 = 100_000_000_000;

/// The FastClick forwarder calibrated to the slides' two numbers, given the switch's pipeline
/// latency (paid on the way back from the NF): at zero load, mean latency switch-to-switch of a
/// 782 B packet = 20 us and of a 72 B header = 20 us x (1 - 0.33). Serialisation on the two
/// 100 Gb/s link directions and the 126 Gb/s bus are part of both and are taken out of the
/// per-byte term. Latency around the mean: uniform +-10% (ours: the slides give means only).
pub fn forwarder(pipeline_latency: Time) -> NfConfig {
    let wire_per_byte = (2 * tx_time(1000, LINK_BPS) + tx_time(1000, BUS_BPS)) as f64 / 1000.0;
    let per_byte_total = REF_REDUCTION * REF_WHOLE_LATENCY as f64 / (REF_WHOLE_BYTES - REF_HEADER_BYTES);
    let per_byte = (per_byte_total - wire_per_byte).max(0.0);
    let base = REF_WHOLE_LATENCY as f64 - pipeline_latency as f64 - per_byte_total * REF_WHOLE_BYTES;
    NfConfig {
        base_mean: base.max(0.0).round() as Time,
        dist: NfDist::Uniform { spread: 0.1 },
        per_byte_ps: per_byte.round() as u64,
        bus_bps: BUS_BPS,
    }
}

/// `cfg` with its mean base latency moved so that a packet of `bytes` has a zero-load
/// switch-to-switch latency of `target` (for "an NF of 25 us average latency").
pub fn with_latency(cfg: NfConfig, bytes: u32, target: Time, pipeline_latency: Time) -> NfConfig {
    let rest = Nf::zero_load_latency(&cfg, bytes, pipeline_latency) - cfg.base_mean;
    NfConfig {
        base_mean: target.saturating_sub(rest),
        ..cfg
    }
}

/// A plain NF: `mean` of latency, uniform +-10%, nothing per byte, no bus limit (the slides'
/// "20 us NF processing latency" of the Python simulator).
pub fn fixed(mean: Time) -> NfConfig {
    NfConfig {
        base_mean: mean,
        dist: NfDist::Uniform { spread: 0.1 },
        per_byte_ps: 0,
        bus_bps: 0,
    }
}

/// The NF server's state: its random stream and when its bus is next free.
#[derive(Debug, Clone)]
pub struct Nf {
    cfg: NfConfig,
    rng: Pcg64,
    bus_free: Time,
}

impl Nf {
    /// An NF with its own seeded random stream.
    pub fn new(cfg: NfConfig, seed: u64) -> Nf {
        Nf {
            cfg,
            rng: Pcg64::seed_from_u64(seed),
            bus_free: 0,
        }
    }

    /// A packet of `bytes` fully received at `now`: when it is ready to leave.
    pub fn process(&mut self, now: Time, bytes: u32) -> Time {
        let start = now.max(self.bus_free);
        self.bus_free = start.saturating_add(bus_time(u64::from(bytes), self.cfg.bus_bps));
        let base = self.cfg.dist.sample(self.cfg.base_mean, &mut self.rng);
        self.bus_free
            .saturating_add(base)
            .saturating_add(u64::from(bytes).saturating_mul(self.cfg.per_byte_ps))
    }

    /// Zero-load latency of a packet of `bytes` from the switch's egress to its ingress: both
    /// link directions, the bus, the mean base and per-byte latency, and `pipeline` back in.
    pub fn zero_load_latency(cfg: &NfConfig, bytes: u32, pipeline: Time) -> Time {
        let b = u64::from(bytes);
        2 * tx_time(b, LINK_BPS) + bus_time(b, cfg.bus_bps) + cfg.base_mean + b * cfg.per_byte_ps + pipeline
    }
}

/// Time `bytes` take on the bus: none when the bus has no limit (`bus_bps` 0).
fn bus_time(bytes: u64, bus_bps: u64) -> Time {
    if bus_bps == 0 {
        0
    } else {
        tx_time(bytes, bus_bps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::NS;

    #[test]
    fn calibration_hits_the_slides_numbers_at_zero_load() {
        let p = 500 * NS;
        let f = forwarder(p);
        let whole = Nf::zero_load_latency(&f, 782, p) as f64;
        let header = Nf::zero_load_latency(&f, 72, p) as f64;
        assert!((whole - 20.0 * US as f64).abs() < 2.0 * NS as f64, "{whole}");
        let red = 1.0 - header / whole;
        assert!((red - 0.33).abs() < 0.001, "{red}");
        assert!(f.base_mean > 10 * US && f.per_byte_ps > 8_000, "{f:?}");
    }

    #[test]
    fn latency_can_be_set_for_a_packet_size() {
        let f = with_latency(forwarder(500 * NS), 72, 25 * US, 500 * NS);
        assert_eq!(Nf::zero_load_latency(&f, 72, 500 * NS), 25 * US);
    }

    #[test]
    fn draws_have_the_requested_mean_and_are_seeded() {
        let mut rng = Pcg64::seed_from_u64(3);
        for d in [
            NfDist::Constant,
            NfDist::Uniform { spread: 0.1 },
            NfDist::ShiftedExp { min: 0.8 },
        ] {
            let n = 20_000;
            let s: f64 = (0..n).map(|_| d.sample(20 * US, &mut rng) as f64).sum();
            let m = s / n as f64 / US as f64;
            assert!((m - 20.0).abs() < 0.1, "{d:?}: {m}");
        }
        let mut a = Nf::new(fixed(20 * US), 9);
        let mut b = Nf::new(fixed(20 * US), 9);
        for i in 0..100 {
            assert_eq!(a.process(i * US, 100), b.process(i * US, 100));
        }
    }

    #[test]
    fn the_bus_queues_back_to_back_packets() {
        let cfg = NfConfig {
            base_mean: 0,
            dist: NfDist::Constant,
            per_byte_ps: 0,
            bus_bps: 100_000_000_000,
        };
        let mut nf = Nf::new(cfg, 1);
        assert_eq!(nf.process(0, 1000), 80 * NS);
        assert_eq!(nf.process(0, 1000), 160 * NS);
    }
}
