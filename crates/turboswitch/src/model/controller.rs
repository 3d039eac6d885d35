//! `turbo-controller`: the copies mode's controller while the input rate varies (slides:
//! "Can TurboSwitch's controller enforce the correct delay to payloads?": Python simulator,
//! 20 us NF processing latency, 100 Gb/s with Poisson arrivals of 64 B-1.5 KB packets,
//! controller with 1 us queue-statistics update delay; "Stable payload latency at ~22 us";
//! "Less incoming packets, controller creates more copies"; "More incoming packets, controller
//! creates less copies").
//!
//! A 20 us NF (uniform +-10%, no per-byte cost: the slides' simulator NF), copies mode, the
//! target learned from header round trips, queue statistics sampled every 1 us and 1 us old.
//! The offered load steps through phases; per phase (its first 100 us left out) the payload
//! parking time, the copies per payload and the queue are measured.

use super::common::{base, correlation, falling_pairs};
use super::kernel::{run as simulate, Phase, SimConfig, SimResult};
use crate::config::Mode;
use crate::nf;
use crate::types::{Time, MS, US};
use tandem_sim::experiment::{write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target};
use tandem_sim::plot::Figure;

/// The NF's processing latency (slides: 20 us).
pub const NF_LATENCY: Time = 20 * US;
/// Offered load of each phase, Gb/s.
pub const LOADS: [f64; 6] = [100.0, 60.0, 20.0, 80.0, 40.0, 100.0];
/// Settling time left out at the start of each phase.
pub const SETTLE: Time = 100 * US;
/// Start-up left out of the first phase: the switch starts empty with no round-trip estimate
/// (target 0), parks by recirculating on the fast lane until headers come back, and at
/// 100 Gb/s the queue this builds drains only at C - R_payload (~8 Gb/s).
pub const STARTUP: Time = 500 * US;

/// The model configuration: phases of `phase_len` at [`LOADS`] (the first `n_phases`).
pub fn config(phase_len: Time, n_phases: usize) -> SimConfig {
    let phases = LOADS
        .iter()
        .take(n_phases)
        .map(|&gbps| Phase {
            duration: phase_len,
            gbps,
        })
        .collect();
    let mut c = base(Mode::Copies, nf::fixed(NF_LATENCY), phases, 1);
    c.warmup = STARTUP;
    c.bin = 10 * US;
    c
}

/// Per-phase measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseResult {
    /// Offered load, Gb/s.
    pub gbps: f64,
    /// Mean payload parking time of merges in the phase, us.
    pub payload_us: f64,
    /// Mean NF latency, us.
    pub nf_us: f64,
    /// Copies per split packet.
    pub copies: f64,
    /// Mean queue, KB.
    pub queue_kb: f64,
    /// Mean controller target, us.
    pub target_us: f64,
}

/// Runs the phases; returns the whole run and per-phase measures (settled part).
pub fn run_setup(phase_len: Time, n_phases: usize) -> Result<(SimResult, Vec<PhaseResult>), ExperimentError> {
    let cfg = config(phase_len, n_phases);
    let r = simulate(&cfg)?;
    let mut out = Vec::new();
    for (i, p) in cfg.phases.iter().enumerate() {
        let start = if i == 0 { STARTUP } else { i as u64 * phase_len + SETTLE };
        let end = (i as u64 + 1) * phase_len;
        let bins: Vec<_> = r
            .bins
            .iter()
            .filter(|b| {
                let t = (b.t_us * US as f64) as u64;
                t >= start && t < end
            })
            .collect();
        let n = bins.len().max(1) as f64;
        let merged: u64 = bins.iter().map(|b| b.merged).sum();
        let payload = bins.iter().map(|b| b.payload_us * b.merged as f64).sum::<f64>() / merged.max(1) as f64;
        out.push(PhaseResult {
            gbps: p.gbps,
            payload_us: payload,
            nf_us: bins.iter().map(|b| b.nf_us).sum::<f64>() / n,
            copies: bins.iter().map(|b| b.copies_per_split).sum::<f64>() / n,
            queue_kb: bins.iter().map(|b| b.park_bytes).sum::<f64>() / n / 1000.0,
            target_us: bins.iter().map(|b| b.target_us).sum::<f64>() / n,
        });
    }
    Ok((r, out))
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let q = ctx.quick;
    let (phase_len, n) = if q { (MS, 3) } else { (2 * MS, LOADS.len()) };
    (ctx.status)("turbo-controller: copies mode, varying load");
    let (r, phases) = run_setup(phase_len, n)?;
    let mut tcsv = String::from("t_us,input_gbps,queue_kb,payload_us,copies_per_split,passes,nf_us,target_us\n");
    for b in &r.bins {
        tcsv.push_str(&format!(
            "{},{:.2},{:.2},{:.3},{:.4},{:.4},{:.3},{:.3}\n",
            b.t_us,
            b.input_gbps,
            b.park_bytes / 1000.0,
            b.payload_us,
            b.copies_per_split,
            b.passes,
            b.nf_us,
            b.target_us
        ));
    }
    write(ctx, "controller_timeseries.csv", &tcsv)?;
    let mut pcsv = String::from("phase,gbps,payload_us,nf_us,copies_per_split,queue_kb,target_us\n");
    for (i, p) in phases.iter().enumerate() {
        pcsv.push_str(&format!(
            "{},{},{:.3},{:.3},{:.4},{:.2},{:.3}\n",
            i, p.gbps, p.payload_us, p.nf_us, p.copies, p.queue_kb, p.target_us
        ));
    }
    write(ctx, "controller_phases.csv", &pcsv)?;

    let mut rows = Vec::new();
    for (i, p) in phases.iter().enumerate() {
        let s = format!("phase {} ({} Gb/s)", i + 1, p.gbps);
        rows.push(Row::new(
            Kind::Prediction,
            &s,
            "payload parking time (us)",
            Some(22.0),
            p.payload_us,
            Target::Relative(0.1),
        ));
        rows.push(Row::new(
            Kind::Prediction,
            &s,
            &format!(
                "copies per payload [queue {:.0} KB, target {:.2} us]",
                p.queue_kb, p.target_us
            ),
            None,
            p.copies,
            Target::None,
        ));
    }
    let by_load: Vec<(f64, f64)> = phases.iter().map(|p| (p.gbps, p.copies)).collect();
    rows.push(Row::new(
        Kind::Prediction,
        "all phases",
        "phase pairs at different loads where the lower load got more copies (share)",
        Some(1.0),
        falling_pairs(&by_load),
        // The slides: "Less incoming packets, controller creates more copies; more incoming
        // packets, controller creates less copies", a monotone claim with no exception, so every
        // pair of phases must agree. This replaces a linear correlation judged at <= -0.9, a
        // bound set just past the measured -0.92; the slides say nothing about linearity.
        Target::AtLeast(1.0),
    ));
    rows.push(Row::new(
        Kind::Prediction,
        "all phases",
        "linear correlation of copies per payload with load",
        None,
        correlation(&by_load),
        Target::None,
    ));
    let pay = phases
        .iter()
        .map(|p| p.payload_us)
        .fold((f64::MAX, f64::MIN), |a, x| (a.0.min(x), a.1.max(x)));
    rows.push(Row::new(
        Kind::Prediction,
        "all phases",
        "spread of per-phase payload parking time, max - min (us)",
        None,
        pay.1 - pay.0,
        Target::AtMost(2.0),
    ));
    rows.push(Row::new(
        Kind::Prediction,
        "settled",
        "payload parking time / NF latency",
        Some(22.0 / 20.0),
        r.payload_latency.mean / r.nf_latency.mean,
        Target::Relative(0.1),
    ));
    rows.push(Row::new(
        Kind::Prediction,
        "settled",
        "payloads that went round again (early passes per merge)",
        None,
        r.passes_per_payload - 1.0,
        Target::None,
    ));
    rows.push(Row::new(
        Kind::Prediction,
        "all",
        "packets lost",
        Some(0.0),
        r.lost_total() as f64,
        Target::AtMost(0.0),
    ));
    rows.push(Row::new(
        Kind::Prediction,
        "all",
        "copies refused by the buffer",
        Some(0.0),
        r.copies_refused as f64,
        Target::AtMost(0.0),
    ));

    let bins: Vec<_> = r.bins.iter().filter(|b| b.merged > 0).collect();
    // Time series: lines, each later one with its own dash pattern.
    Figure::new(
        "Copies mode: payload parking time while the load varies (20 us NF)",
        "time (us)",
        "us / Gb/s / 10",
    )
    .with([
        (
            "payload parking time (us)".to_string(),
            bins.iter().map(|b| (b.t_us, b.payload_us)).collect(),
        ),
        (
            "NF latency (us)".to_string(),
            bins.iter().map(|b| (b.t_us, b.nf_us)).collect(),
        ),
        (
            "controller target (us)".to_string(),
            bins.iter().map(|b| (b.t_us, b.target_us)).collect(),
        ),
        (
            "input (Gb/s) / 10".to_string(),
            bins.iter().map(|b| (b.t_us, b.input_gbps / 10.0)).collect(),
        ),
    ])
    .save(&ctx.path("controller_latency.png"))?;
    Figure::new(
        "Copies per payload while the load varies",
        "time (us)",
        "copies per payload / Gb/s / 100",
    )
    .with([
        (
            "copies per payload".to_string(),
            bins.iter().map(|b| (b.t_us, b.copies_per_split)).collect(),
        ),
        (
            "input (Gb/s) / 100".to_string(),
            bins.iter().map(|b| (b.t_us, b.input_gbps / 100.0)).collect(),
        ),
    ])
    .save(&ctx.path("controller_copies.png"))?;
    Ok(Report {
        title: "TurboSwitch: copies-mode controller under a varying load".into(),
        reference: "Scazzariello, Caiazzi, Chiesa, ICNP 2024 slides: Python simulator, \"20 us NF Processing \
                    Latency\", \"100Gbps w/ Poisson arrival (64B-1.5KB pkt size)\", \"1 us Queue Stats Update \
                    Delay\", \"Stable payload latency at ~22 us\", more copies at lower load"
            .into(),
        rows,
        notes: vec![
            format!(
                "Phases of {} us at {:?} Gb/s (Poisson, 64-1500 B); per-phase numbers leave out the first {} us of \
                 each phase and the first {} us of the run (start-up from an empty switch with no round-trip \
                 estimate: payloads recirculate on the fast lane until headers return, and the queue this builds \
                 at 100 Gb/s drains at only C - R_payload). Seed 1.",
                phase_len / US,
                &LOADS[..n],
                SETTLE / US,
                STARTUP / US
            ),
            "NF: 20 us uniform +-10% (ours: the slides give no distribution) plus the 100 Gb/s links and the \
             500 ns pipeline, so a header's round trip is ~20.6 us. Target learned from round trips (mean + 2 x \
             mean deviation, TCP-style gains), i.e. ~22.5 us: nothing configured."
                .into(),
            "The parking queue runs above the target, more at high load (~0.5 us at 20 Gb/s, ~2 us at 100 Gb/s): \
             copies can raise the queue at once but nothing can lower it faster than the port drains it minus the \
             payloads arriving (C - R_payload), so Poisson bursts of payloads alone push it over the target and a \
             fluctuating learned target leaves it on the high side. With a fixed target and 50 Gb/s the controller \
             holds the queue within 2% of it (tests/controller.rs)."
                .into(),
        ],
        files: vec![
            "controller_timeseries.csv".into(),
            "controller_phases.csv".into(),
            "controller_latency.png".into(),
            "controller_latency.svg".into(),
            "controller_copies.png".into(),
            "controller_copies.svg".into(),
        ],
    })
}

/// The `turbo-controller` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "turbo-controller",
    about: "TurboSwitch copies mode: controller keeps payload latency near 22 us while the load varies (20 us NF)",
    run,
};
