//! The TurboSwitch experiments' network on the simulator's kernel: one switch running the
//! placed TurboSwitch ([`super::placed::TurboTor`]: the program, its NF server, NF port and
//! recirculation ports) between a traffic source and `output_ports` output hosts, on
//! `tandem-sim`'s links, queues and event queue (the ones the ns-3 validation checks). Every
//! `turbo-*` experiment runs here; until 2026-11-28 they ran on a loop of the model's own
//! (`model::sim`, removed), whose numbers the TurboSwitch page keeps beside these.
//!
//! How the experiments' setting maps onto the kernel:
//! - The offered load is one [`FlowKind::UdpPoisson`](tandem_sim::workload::FlowKind) source
//!   per phase and output host, each at the phase's load divided by the output ports (Poisson
//!   arrivals split at random stay Poisson; the loop sent packet `i` to output `i mod n`), from
//!   one source host on a link of [`SOURCE_BPS`] with no delay, so a packet reaches the switch
//!   a serialisation after its draw (2.4 ns for 1,500 B) plus whatever waits ahead of it in the
//!   source's queue, rather than at the draw itself.
//! - Links carry packet bytes only (no preamble, FCS or gap, `framing_overhead = 0`), as the
//!   loop counted rates; they have no propagation delay. The output links run at `port_bps`.
//! - The switch is store-and-forward with no pipeline latency of its own (the program's
//!   `pipeline_latency` applies to what comes back from the NF and the recirculation ports);
//!   its output queues are the kernel's, limited to `buffer_bytes` each: in the loop they drew on
//!   the buffer the NF and recirculation queues share, here they do not.
//! - The switch model samples the parking queues every `stats_period` on a grid from its first
//!   packet (the loop: from 0) until the end of the load, and while anything is parked after it.
//! - Latencies are the model's (see [`super::record`]) but the end-to-end one, which is the
//!   kernel's: source send to last bit in, of packets received in the window.

use super::placed::{NfOrder, Through, TorConfig, TurboTor};
use super::record::{RecordConfig, Recorder};
use crate::config::{CoreConfig, SwitchConfig};
use crate::core::{CoreStats, DropReason, QueueKind};
use crate::nf::NfConfig;
use crate::types::{Time, MS};
use std::collections::BTreeMap;
use tandem_sim::config::{LinkConfig, QueueConfig, SwitchConfig as KernelSwitch, TcpConfig, ETHERNET_HEADER};
use tandem_sim::packet::NodeId;
use tandem_sim::queue::DropReason as KernelDrop;
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::topology::Topology;
use tandem_sim::workload;

/// The rate of the source host's link to the switch, b/s: 12.5 times the largest load an
/// experiment offers (400 Gb/s), so that the source's own queue is small.
pub const SOURCE_BPS: u64 = 5_000_000_000_000;

/// A stretch of constant offered load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Phase {
    /// How long.
    pub duration: Time,
    /// Offered load, Gb/s of packet bytes (Poisson arrivals).
    pub gbps: f64,
}

/// Packet sizes of the input.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeDist {
    /// Uniform integer sizes in `min..=max` bytes.
    Uniform {
        /// Smallest.
        min: u32,
        /// Largest.
        max: u32,
    },
    /// Always this many bytes.
    Fixed(u32),
}

impl SizeDist {
    /// Mean size in bytes.
    pub fn mean(self) -> f64 {
        match self {
            SizeDist::Uniform { min, max } => (f64::from(min) + f64::from(max)) / 2.0,
            SizeDist::Fixed(b) => f64::from(b),
        }
    }
}

/// Everything one run needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The switch program.
    pub core: CoreConfig,
    /// The switch hardware.
    pub switch: SwitchConfig,
    /// The NF server.
    pub nf: NfConfig,
    /// Offered load over time; arrivals stop after the last phase.
    pub phases: Vec<Phase>,
    /// Packet sizes.
    pub sizes: SizeDist,
    /// Packets arriving before this are not measured (steady state only).
    pub warmup: Time,
    /// Width of the time-series bins.
    pub bin: Time,
    /// Seed of every random draw.
    pub seed: u64,
}

/// The model could not run.
#[derive(Debug, Clone, PartialEq)]
pub struct SimError(pub String);

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SimError {}

impl From<SimError> for tandem_sim::experiment::ExperimentError {
    fn from(e: SimError) -> Self {
        tandem_sim::experiment::ExperimentError(e.0)
    }
}

/// Mean and percentiles of samples, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Summary {
    /// Samples.
    pub n: u64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
}

impl Summary {
    /// Sorts `v` and summarises it.
    pub fn of(v: &mut [f64]) -> Summary {
        if v.is_empty() {
            return Summary::default();
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
        Summary {
            n: v.len() as u64,
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: q(0.5),
            p99: q(0.99),
        }
    }
}

/// One time-series bin.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bin {
    /// Bin start, microseconds.
    pub t_us: f64,
    /// Offered load that arrived in the bin, Gb/s.
    pub input_gbps: f64,
    /// Mean bytes in all recirculation queues (parking + fast lanes).
    pub park_bytes: f64,
    /// Mean parking time of payloads merged in the bin, microseconds.
    pub payload_us: f64,
    /// Mean recirculation passes of payloads merged in the bin.
    pub passes: f64,
    /// Copies made per split packet in the bin.
    pub copies_per_split: f64,
    /// Mean NF latency of parts back in the bin, microseconds.
    pub nf_us: f64,
    /// Packets merged in the bin.
    pub merged: u64,
    /// Copies-mode target delay at the end of the bin, microseconds.
    pub target_us: f64,
}

/// What one run measured (latencies of packets that arrived in the measurement window:
/// after `warmup`, before the end of arrivals).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimResult {
    /// Packets that reached the switch.
    pub arrived: u64,
    /// Packets delivered at an output port's host.
    pub delivered: u64,
    /// Packets lost, by the first reason.
    pub lost: BTreeMap<DropReason, u64>,
    /// Packets still in the network (held by the switch, queued or on a link) when the run
    /// stopped.
    pub in_flight: u64,
    /// Headers or payloads dropped by the program without a packet to blame (stale or unknown
    /// tags: their packet, if any, is already counted in `lost`), by reason.
    pub part_drops: BTreeMap<DropReason, u64>,
    /// Filler copies the buffer had no room for.
    pub copies_refused: u64,
    /// Offered load in the window, Gb/s.
    pub window_gbps: f64,
    /// Switch egress to switch ingress latency of what went to the NF.
    pub nf_latency: Summary,
    /// NF latency samples (us), for CDFs.
    pub nf_samples: Vec<f64>,
    /// How long payloads were parked (split to merge).
    pub payload_latency: Summary,
    /// Mean time from the source's send to the last bit in at the output port's host, of
    /// packets received in the window, microseconds (the kernel keeps a flow's delay sum).
    pub e2e_mean_us: f64,
    /// Mean recirculation passes per merged payload.
    pub passes_per_payload: f64,
    /// Copies made per split packet.
    pub copies_per_split: f64,
    /// Time-averaged bytes in the recirculation queues (all lanes, all ports).
    pub park_bytes_mean: f64,
    /// Mean wait of a payload in a parking lane per pass, microseconds.
    pub park_wait_us: f64,
    /// Most bytes in the switch buffer that the NF and recirculation queues share (the output
    /// queues are the kernel's, with a limit of their own).
    pub max_buffer: u64,
    /// Time series.
    pub bins: Vec<Bin>,
    /// The program's counters.
    pub core: CoreStats,
    /// Events processed.
    pub events: u64,
}

impl SimResult {
    /// Packets lost, all reasons.
    pub fn lost_total(&self) -> u64 {
        self.lost.values().sum()
    }

    /// Every packet delivered, lost once, or in flight.
    pub fn accounted(&self) -> bool {
        self.arrived == self.delivered + self.lost_total() + self.in_flight
    }
}

/// Most time-series bins a run may ask for.
pub const MAX_BINS: u64 = 10_000_000;

/// Runs the experiments' network for `cfg` on the kernel (see the [module documentation](self)).
pub fn run(cfg: &SimConfig) -> Result<SimResult, SimError> {
    cfg.switch.validate().map_err(|e| SimError(e.to_string()))?;
    if cfg.phases.iter().any(|p| !p.gbps.is_finite() || p.gbps < 0.0) {
        return Err(SimError("offered load must be finite and not negative".into()));
    }
    let (min, max) = match cfg.sizes {
        SizeDist::Uniform { min, max } => (min, max),
        SizeDist::Fixed(b) => (b, b),
    };
    if min > max {
        return Err(SimError("the smallest packet size is above the largest".into()));
    }
    let end: Time = cfg.phases.iter().map(|p| p.duration).sum();
    let recorder = Recorder::new(RecordConfig {
        warmup: cfg.warmup,
        end,
        bin: cfg.bin,
    })?;
    let outputs = u32::from(cfg.switch.output_ports);
    let wire = |rate_bps| LinkConfig {
        rate_bps,
        delay: 0,
        framing_overhead: 0,
        l2_header: ETHERNET_HEADER,
    };
    // Host 0 is the source, hosts 1..=outputs the output ports' hosts.
    let mut topo = Topology::star(outputs + 1, wire(cfg.core.port_bps)).map_err(|e| SimError(e.to_string()))?;
    let source_link = topo.ports(NodeId(0))[0].link;
    topo.set_link_config(source_link, wire(SOURCE_BPS));
    let switch = NodeId(outputs + 1);
    let mut flows = Vec::new();
    let mut start = 0;
    for p in &cfg.phases {
        let rate = (p.gbps * 1e9 / f64::from(outputs)).round() as u64;
        if rate > 0 && p.duration > 0 {
            let pairs: Vec<(NodeId, NodeId)> = (1..=outputs).map(|h| (NodeId(0), NodeId(h))).collect();
            flows.extend(
                workload::udp_poisson(&pairs, rate, min, max, start, p.duration)
                    .map_err(|e| SimError(e.to_string()))?,
            );
        }
        start += p.duration;
    }
    let queue = QueueConfig {
        limit_packets: 0,
        limit_bytes: cfg.switch.buffer_bytes,
        ..QueueConfig::default()
    };
    let host_queue = QueueConfig {
        limit_packets: 0,
        limit_bytes: u64::MAX,
        ..QueueConfig::default()
    };
    let kernel_switch = KernelSwitch {
        queue,
        ..KernelSwitch::default()
    };
    let mut sim = Sim::new(
        &topo,
        kernel_switch,
        host_queue,
        TcpConfig::default(),
        workload::finalize(flows),
        cfg.seed,
        SimOptions::default(),
    );
    let tor = TorConfig {
        core: cfg.core.clone(),
        switch: cfg.switch.clone(),
        nf: cfg.nf,
        through: Through::All,
        nf_order: NfOrder::Independent,
    };
    let model = TurboTor::new(tor, vec![true; outputs as usize + 1], cfg.seed ^ 0x9e37_79b9_7f4a_7c15)
        .map_err(|e| SimError(e.to_string()))?
        .with_recorder(recorder);
    sim.attach_model(switch, Box::new(model));
    let received = |sim: &Sim| -> (u64, u64) {
        sim.flow_results()
            .fold((0, 0), |(n, d), (_, r, _)| (n + r.rx_packets, d + r.delay_sum))
    };
    sim.run_until(cfg.warmup.min(end));
    let warm = received(&sim);
    sim.run_until(end);
    let window = received(&sim);
    sim.run_until(end + cfg.core.reclaim_timeout + 10 * MS);
    let done = received(&sim);
    let tor = sim
        .model_as::<TurboTor>(switch)
        .ok_or_else(|| SimError("the switch lost its model".into()))?;
    let mut r = tor
        .recorder()
        .ok_or_else(|| SimError("the switch model records nothing".into()))?
        .result();
    r.delivered = done.0;
    let n = window.0 - warm.0;
    if n > 0 {
        r.e2e_mean_us = (window.1 - warm.1) as f64 / n as f64 / 1e6;
    }
    // The output queues' own drops (the model's drops, counted at their ports too, are in the
    // recorder already).
    let egress: u64 = sim.nodes()[switch.0 as usize]
        .ports
        .iter()
        .flat_map(|p| &p.queues.stats.drops)
        .filter(|d| !matches!(d.0, KernelDrop::Model(_)))
        .map(|d| d.1)
        .sum();
    if egress > 0 {
        *r.lost.entry(DropReason::BufferFull(QueueKind::Output)).or_insert(0) += egress;
    }
    r.in_flight = sim.packets_live() as u64;
    r.core = tor.core_stats();
    r.events = sim.events_processed();
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Mode;
    use crate::model::common::base;
    use crate::nf;
    use crate::types::US;

    fn light(mode: Mode, sizes: SizeDist) -> SimConfig {
        let mut c = base(
            mode,
            nf::fixed(20 * US),
            vec![Phase {
                duration: 400 * US,
                gbps: 5.0,
            }],
            3,
        );
        c.sizes = sizes;
        c.warmup = 50 * US;
        c
    }

    #[test]
    fn a_light_load_passes_the_nf_once_and_reaches_every_output() {
        // Whole packets of 1,000 B at 5 Gb/s: the NF's 20 us (uniform +-10%) plus its two links
        // and the pipeline, and end to end the same plus the output link; nothing parked.
        let mut c = light(Mode::NoSplit, SizeDist::Fixed(1000));
        c.switch.output_ports = 3;
        let r = run(&c).unwrap();
        assert!(r.accounted() && r.in_flight == 0 && r.lost_total() == 0, "{r:?}");
        assert_eq!(r.delivered, r.arrived);
        // 5 Gb/s of 1,000 B packets for 400 us: 250 expected (Poisson, sd 16).
        assert!((200..300).contains(&r.arrived), "{}", r.arrived);
        let wire_us = 2.0 * 1000.0 * 8.0 / 100e3;
        assert!(
            (r.nf_latency.mean - 20.0 - wire_us - 0.5).abs() < 1.0,
            "{:?}",
            r.nf_latency
        );
        assert!(
            r.e2e_mean_us > r.nf_latency.mean && r.e2e_mean_us < r.nf_latency.mean + 1.0,
            "{r:?}"
        );
        assert_eq!(r.payload_latency.n, 0);
        assert!((r.window_gbps - 5.0).abs() < 1.5, "{}", r.window_gbps);
    }

    #[test]
    fn parking_is_sampled_in_every_mode_and_bad_input_is_refused() {
        let r = run(&light(Mode::Recirculate, SizeDist::Uniform { min: 64, max: 1500 })).unwrap();
        assert!(r.park_bytes_mean > 0.0 && r.passes_per_payload >= 1.0, "{r:?}");
        assert!(r.bins.iter().any(|b| b.park_bytes > 0.0));
        let bad = light(Mode::Recirculate, SizeDist::Uniform { min: 1500, max: 64 });
        assert!(run(&bad).is_err());
        let mut neg = light(Mode::Recirculate, SizeDist::Fixed(100));
        neg.phases[0].gbps = -1.0;
        assert!(run(&neg).is_err());
        let mut zero_bin = light(Mode::Recirculate, SizeDist::Fixed(100));
        zero_bin.bin = 0;
        assert!(run(&zero_bin).is_err());
    }
}
