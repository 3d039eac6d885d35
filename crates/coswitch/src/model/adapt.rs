//! `coswitch-adapt` (beyond the paper): the closed loop under a step change in the traffic.
//! One server sends the trace mix at a load where the virtual switch alone would be busy;
//! at the step the arrival rate of mice (flows under 18 packets) doubles. Flow-Prediction must
//! move the threshold to a new balance within a few control periods, without oscillating,
//! and leave neither side saturated. The same traffic with the threshold frozen at its start
//! value shows what the loop buys.

use super::network::{flows_of, run as run_net, Approach, NetConfig, Outcome, Sample};
use super::workload::{Stream, TraceMix};
use crate::types::{Time, SEC};
use tandem_sim::experiment::{
    par_map, threads, write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target,
};
use tandem_sim::plot::{Axis, Figure};

/// The step's shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepSetup {
    /// Load of the trace mix before the step, packets per second.
    pub pps: f64,
    /// When the mice double.
    pub step_at: Time,
    /// Run length.
    pub duration: Time,
}

impl StepSetup {
    /// 60 kpps, step at 40 s, 100 s (`--quick`: step at 20 s, 45 s).
    pub fn new(quick: bool) -> StepSetup {
        if quick {
            StepSetup {
                pps: 60_000.0,
                step_at: 20 * SEC,
                duration: 45 * SEC,
            }
        } else {
            StepSetup {
                pps: 60_000.0,
                step_at: 40 * SEC,
                duration: 100 * SEC,
            }
        }
    }
}

/// The two runs: (closed loop, frozen threshold).
pub fn step_runs(s: StepSetup) -> Result<(Outcome, Outcome), ExperimentError> {
    let mix = TraceMix::paper();
    let base = Stream::at_pps(mix, s.pps, 0, s.duration);
    let mice = Stream {
        mix: mix.mice_only(),
        flows_per_sec: base.flows_per_sec * mix.stats().mice_flow_share,
        from: s.step_at,
        to: s.duration,
    };
    let cfg = NetConfig {
        approach: Approach::CoSwitch,
        duration: s.duration,
        warmup: s.step_at,
        ..NetConfig::default()
    };
    let flows = flows_of(&[base, mice], cfg.servers, cfg.seed);
    let both = par_map(&[true, false], threads(), |&adaptive| {
        run_net(
            &NetConfig {
                adaptive,
                ..cfg.clone()
            },
            &flows,
        )
        .map_err(|e| ExperimentError(e.to_string()))
    });
    let mut it = both.into_iter();
    match (it.next(), it.next()) {
        (Some(a), Some(b)) => Ok((a?, b?)),
        _ => Err(ExperimentError("coswitch-adapt: missing run".into())),
    }
}

/// Control periods from `from` (seconds) until the threshold enters, for good before `to`,
/// the band of +-10% around where it ends the phase (the usual settling-time definition; a
/// one-packet trim late in the phase does not count as unsettled).
pub fn settling_periods(samples: &[Sample], from: f64, to: f64) -> usize {
    let w: Vec<u32> = samples
        .iter()
        .filter(|s| s.t > from && s.t <= to)
        .map(|s| s.threshold)
        .collect();
    let Some(&last) = w.last() else { return 0 };
    let inside = |t: u32| (f64::from(t) - f64::from(last)).abs() <= 0.1 * f64::from(last).max(1.0);
    w.iter().rposition(|&t| !inside(t)).map_or(0, |i| i + 1)
}

/// Threshold changes among samples in `(from, to]` seconds.
pub fn changes(samples: &[Sample], from: f64, to: f64) -> usize {
    let w: Vec<&Sample> = samples.iter().filter(|s| s.t > from && s.t <= to).collect();
    w.windows(2).filter(|p| p[0].threshold != p[1].threshold).count()
}

/// Mean of `f` over samples in `(from, to]` seconds.
pub fn mean(samples: &[Sample], from: f64, to: f64, f: impl Fn(&Sample) -> f64) -> f64 {
    let v: Vec<f64> = samples.iter().filter(|s| s.t > from && s.t <= to).map(f).collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let s = StepSetup::new(ctx.quick);
    (ctx.status)("closed loop and frozen threshold through a step in the mice");
    let (lp, frozen) = step_runs(s)?;
    let (step, end) = (s.step_at as f64 / SEC as f64, s.duration as f64 / SEC as f64);
    let mut csv = format!(
        "{},frozen_server_cpu,frozen_switch_cpu,frozen_tcam\n",
        Sample::CSV_HEADER
    );
    for (a, b) in lp.samples.iter().zip(&frozen.samples) {
        csv.push_str(&format!(
            "{},{:.4},{:.4},{}\n",
            a.csv_fields(),
            b.server_cpu,
            b.switch_cpu,
            b.tcam
        ));
    }
    write(ctx, "adapt.csv", &csv)?;
    let series = |o: &Outcome, f: &dyn Fn(&Sample) -> f64| -> Vec<(f64, f64)> {
        o.samples.iter().map(|x| (x.t, f(x))).collect()
    };
    Figure::new(
        format!("Threshold; mice double at {step} s"),
        "time (s)",
        Axis::new("threshold (packets)").integer(),
    )
    .with([("Flow-Prediction", series(&lp, &|x| f64::from(x.threshold)))])
    .save(&ctx.path("threshold.png"))?;
    Figure::new(
        format!("Utilization; mice double at {step} s"),
        "time (s)",
        "utilization / table fill (%)",
    )
    .with([
        ("server core, closed loop", series(&lp, &|x| x.server_cpu * 100.0)),
        ("switch CPU, closed loop", series(&lp, &|x| x.switch_cpu * 100.0)),
        (
            "TCAM fill, closed loop",
            series(&lp, &|x| x.tcam as f64 / 2048.0 * 100.0),
        ),
        (
            "server core, frozen threshold",
            series(&frozen, &|x| x.server_cpu * 100.0),
        ),
    ])
    .save(&ctx.path("utilization.png"))?;
    let tail = (end - 10.0).max(step);
    let settle_before = settling_periods(&lp.samples, 0.0, step);
    let settle_after = settling_periods(&lp.samples, step, end);
    let late_changes = changes(&lp.samples, step + 15.0, end);
    let server_tail = mean(&lp.samples, tail, end, |x| x.server_cpu);
    let switch_tail = mean(&lp.samples, tail, end, |x| x.switch_cpu.max(x.tcam as f64 / 2048.0));
    let frozen_tail = mean(&frozen.samples, tail, end, |x| x.server_cpu);
    let frozen_switch = mean(&frozen.samples, tail, end, |x| x.switch_cpu.max(x.tcam as f64 / 2048.0));
    let thr_before = lp.samples.iter().rev().find(|x| x.t <= step).map_or(0, |x| x.threshold);
    let mut rep = Report {
        title: "CoSwitch's closed loop through a step in the mice".into(),
        reference:
            "beyond the paper (issue: settle within a few control periods, no oscillation, neither side saturated)"
                .into(),
        files: vec![
            "adapt.csv".into(),
            "threshold.png".into(),
            "threshold.svg".into(),
            "utilization.png".into(),
            "utilization.svg".into(),
        ],
        ..Report::default()
    };
    let p = "control periods";
    rep.rows.push(Row::new(
        Kind::Prediction,
        "start (threshold 18)",
        &format!("settling ({p})"),
        None,
        settle_before as f64,
        Target::AtMost(15.0),
    ));
    rep.rows.push(Row::new(
        Kind::Prediction,
        "before the step",
        "threshold (packets)",
        None,
        f64::from(thr_before),
        Target::None,
    ));
    rep.rows.push(Row::new(
        Kind::Prediction,
        "after the step",
        &format!("settling ({p})"),
        None,
        settle_after as f64,
        Target::AtMost(10.0),
    ));
    rep.rows.push(Row::new(
        Kind::Prediction,
        "after the step",
        "threshold (packets)",
        None,
        f64::from(lp.threshold),
        Target::None,
    ));
    rep.rows.push(Row::new(
        Kind::Prediction,
        "15 s after the step to the end",
        "threshold changes (oscillation)",
        None,
        late_changes as f64,
        Target::AtMost(2.0),
    ));
    rep.rows.push(Row::new(
        Kind::Prediction,
        "last 10 s, closed loop",
        "server core (%)",
        None,
        server_tail * 100.0,
        Target::AtMost(95.0),
    ));
    rep.rows.push(Row::new(
        Kind::Prediction,
        "last 10 s, closed loop",
        "physical switch: CPU or TCAM fill, the larger (%)",
        None,
        switch_tail * 100.0,
        Target::AtMost(95.0),
    ));
    rep.rows.push(Row::new(
        Kind::Prediction,
        "last 10 s, threshold frozen at 18",
        "server core (%)",
        None,
        frozen_tail * 100.0,
        Target::None,
    ));
    rep.rows.push(Row::new(
        Kind::Prediction,
        "last 10 s, threshold frozen at 18",
        "physical switch: CPU or TCAM fill, the larger (%)",
        None,
        frozen_switch * 100.0,
        Target::None,
    ));
    rep.rows.push(Row::new(
        Kind::Prediction,
        "after the step, threshold frozen at 18",
        "rules refused for a full TCAM",
        None,
        frozen.table_full as f64,
        Target::None,
    ));
    rep.rows.push(Row::new(
        Kind::Prediction,
        "whole run",
        "threshold reversals",
        None,
        lp.threshold_reversals as f64,
        Target::None,
    ));
    rep.notes = vec![
        format!(
            "One server, trace mix at {} kpps; at {step} s a second stream of mice-only flows starts at the base stream's \
             mouse-flow rate (mice flows double, packets +14%). Flow-Prediction defaults: 1 s period, deadband 0.05, \
             4 octaves per unit error, at most 1 octave per step, halving on reversal, no toggling between neighbours.",
            s.pps / 1e3
        ),
        "Settling = periods from the start (or the step) until the threshold stays within 10% of where it ends \
         the phase."
            .into(),
    ];
    Ok(rep)
}

/// The `coswitch-adapt` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "coswitch-adapt",
    about:
        "CoSwitch's closed loop through a step in the mouse rate: threshold trajectory and balance (beyond the paper)",
    run,
};
