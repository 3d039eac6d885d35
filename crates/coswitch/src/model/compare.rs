//! `coswitch-compare`: the paper's evaluation (§IV, Figures 8, 9 and 10): three approaches on
//! the same traffic. *vswitch only* handles every flow per flow in the server's OVS;
//! *physical only* in the ToR; *CoSwitch* splits them with the Flow-Arbiter and moves the
//! threshold with Flow-Prediction.
//!
//! * Figure 8: the server core's utilization against the load (MB/s): vswitch only saturates,
//!   CoSwitch needs far less (paper: 37% where vswitch only saturates beyond 100 MB/s).
//! * Figure 9: per-flow entries the physical switch needs against the idle timeout, at the
//!   real trace's 10 kpps: physical only outgrows the 2K TCAM, CoSwitch needs at most about
//!   200 (paper).
//! * Figure 10: the switch CPU against the load: physical only saturates over 7.7 kpps;
//!   CoSwitch's grows much more slowly.

use super::network::{Approach, DropReason, NetConfig, Outcome};
use super::profile::{saturation_kpps, PAPER_SWITCH_CPU_KPPS, SATURATED};
use super::sweep::{crossing, interpolate, point, Point};
use crate::types::SEC;
use tandem_sim::experiment::{
    par_map, threads, write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target,
};
use tandem_sim::plot::{Axis, Figure, Series};

/// Paper: CoSwitch's server core at the load where vswitch only saturates (Fig. 8).
pub const PAPER_COSWITCH_SERVER_CPU: f64 = 0.37;
/// Paper: vswitch only saturates beyond 100 MB/s (Fig. 8).
pub const PAPER_VSWITCH_MBYTES: f64 = 100.0;
/// Paper: CoSwitch needs at most about 200 entries on the physical switch (Fig. 9).
pub const PAPER_COSWITCH_ENTRIES: f64 = 200.0;
/// The real trace's rate (paper footnote 3: about 10 kpps and 40 Mbps).
pub const TRACE_PPS: f64 = 10_000.0;

/// Loads of the sweep (kpps): every 0.5 kpps from 2 to 12 kpps (the grid of
/// `coswitch-profile`'s control-plane sweep, so that Fig. 10's saturation point is read off the
/// same grid as Fig. 5's; a 2 kpps grid put it at 7.72 kpps by interpolating across the knee,
/// where the model saturates near 6.9), then coarser up to 120 kpps for Fig. 8.
pub fn loads(quick: bool) -> Vec<f64> {
    if quick {
        vec![5.0, 10.0, 90.0]
    } else {
        (4..=24)
            .map(|k| f64::from(k) * 0.5)
            .chain([20.0, 40.0, 60.0, 70.0, 80.0, 90.0, 100.0, 120.0])
            .collect()
    }
}

/// Idle timeouts of Figure 9 (seconds).
pub fn timeouts(quick: bool) -> Vec<u64> {
    if quick {
        vec![3]
    } else {
        vec![1, 2, 3, 5, 10]
    }
}

/// The run length: 60 s with 30 s of warm-up, so that Flow-Prediction has settled
/// (`--quick`: 20 s and 10 s).
pub fn compare_config(quick: bool) -> NetConfig {
    let (duration, warmup) = if quick {
        (20 * SEC, 10 * SEC)
    } else {
        (60 * SEC, 30 * SEC)
    };
    NetConfig {
        duration,
        warmup,
        ..NetConfig::default()
    }
}

/// All the runs.
#[derive(Debug, Clone, Default)]
pub struct Comparison {
    /// The load sweep, every approach.
    pub sweep: Vec<Point>,
    /// Figure 9: (idle timeout s, physical only with a TCAM that never refuses, CoSwitch).
    pub timeouts: Vec<(u64, Point, Point)>,
}

impl Comparison {
    /// The sweep's points of one approach, by load.
    pub fn of(&self, a: Approach) -> Vec<Point> {
        self.sweep.iter().filter(|p| p.approach == a).cloned().collect()
    }
}

/// Runs the comparison.
pub fn compare(quick: bool) -> Result<Comparison, ExperimentError> {
    let cfg = compare_config(quick);
    #[derive(Clone, Copy)]
    enum Job {
        Load(Approach, f64),
        Timeout(Approach, u64),
    }
    let mut jobs = Vec::new();
    for k in loads(quick) {
        for a in [Approach::VswitchOnly, Approach::PhysicalOnly, Approach::CoSwitch] {
            jobs.push(Job::Load(a, k * 1e3));
        }
    }
    for t in timeouts(quick) {
        jobs.push(Job::Timeout(Approach::PhysicalOnly, t));
        jobs.push(Job::Timeout(Approach::CoSwitch, t));
    }
    let results = par_map(&jobs, threads(), |&j| match j {
        Job::Load(a, pps) => point(&cfg, a, pps),
        Job::Timeout(a, t) => {
            let c = NetConfig {
                switch_idle_timeout: t * SEC,
                tcam_entries: if a == Approach::PhysicalOnly {
                    usize::MAX
                } else {
                    cfg.tcam_entries
                },
                ..cfg.clone()
            };
            point(&c, a, TRACE_PPS)
        }
    });
    let mut c = Comparison::default();
    let mut pending: Option<Point> = None;
    for (j, r) in jobs.iter().zip(results) {
        let p = r?;
        match j {
            Job::Load(..) => c.sweep.push(p),
            Job::Timeout(_, t) => match pending.take() {
                None => pending = Some(p),
                Some(phys) => c.timeouts.push((*t, phys, p)),
            },
        }
    }
    Ok(c)
}

fn mbytes(p: &Point) -> f64 {
    p.outcome.offered_bytes_per_sec / 1e6
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    (ctx.status)("three approaches over the load sweep and the timeout sweep");
    let c = compare(ctx.quick)?;
    let (vsw, phy, cos) = (
        c.of(Approach::VswitchOnly),
        c.of(Approach::PhysicalOnly),
        c.of(Approach::CoSwitch),
    );
    let mut csv = format!(
        "approach,load_kpps,offered_kpps,offered_mbytes_per_s,{},threshold,vswitch_cpu_drops,switch_cpu_drops\n",
        Outcome::COST_CSV_HEADER
    );
    for p in &c.sweep {
        let o = &p.outcome;
        csv.push_str(&format!(
            "{},{},{:.3},{:.3},{},{},{},{}\n",
            p.approach.name(),
            p.pps / 1e3,
            o.offered_pps / 1e3,
            mbytes(p),
            o.cost_csv_fields(),
            if p.approach == Approach::CoSwitch {
                o.threshold
            } else {
                0
            },
            o.dropped(DropReason::VswitchCpu),
            o.dropped(DropReason::SwitchCpu),
        ));
    }
    write(ctx, "compare.csv", &csv)?;
    let mut tcsv = String::from(
        "idle_timeout_s,physical_only_mean,physical_only_max,coswitch_mean,coswitch_max,coswitch_threshold\n",
    );
    for (t, ph, co) in &c.timeouts {
        tcsv.push_str(&format!(
            "{t},{:.1},{},{:.1},{},{}\n",
            ph.outcome.tcam_mean, ph.outcome.tcam_max, co.outcome.tcam_mean, co.outcome.tcam_max, co.outcome.threshold
        ));
    }
    write(ctx, "entries-vs-timeout.csv", &tcsv)?;
    let by_mb = |pts: &[Point], f: &dyn Fn(&Point) -> f64| -> Vec<(f64, f64)> {
        pts.iter().map(|p| (p.pps * 500.0 / 1e6, f(p))).collect()
    };
    Figure::new(
        "Fig. 8: server core utilization",
        "input load (MB/s, at 500 B per packet)",
        "CPU (%)",
    )
    .with([
        ("vswitch only", by_mb(&vsw, &|p| p.outcome.server_cpu * 100.0)),
        ("CoSwitch", by_mb(&cos, &|p| p.outcome.server_cpu * 100.0)),
        ("physical only", by_mb(&phy, &|p| p.outcome.server_cpu * 100.0)),
    ])
    .save(&ctx.path("fig8-server-cpu.png"))?;
    Figure::new(
        format!("Fig. 9: physical-switch entries at {} kpps", TRACE_PPS / 1e3),
        "idle timeout (s)",
        Axis::new("flow entries (peak)").integer(),
    )
    .with([
        (
            "physical only (needed)",
            c.timeouts
                .iter()
                .map(|(t, p, _)| (*t as f64, p.outcome.tcam_max as f64))
                .collect(),
        ),
        (
            "CoSwitch",
            c.timeouts
                .iter()
                .map(|(t, _, p)| (*t as f64, p.outcome.tcam_max as f64))
                .collect(),
        ),
    ])
    // The TCAM size is a reference: a dashed line without markers.
    .series(
        Series::new(
            "TCAM size",
            c.timeouts.iter().map(|(t, _, _)| (*t as f64, 2048.0)).collect(),
        )
        .line()
        .dashed(),
    )
    .save(&ctx.path("fig9-entries.png"))?;
    let by_k = |pts: &[Point], f: &dyn Fn(&Point) -> f64| -> Vec<(f64, f64)> {
        pts.iter()
            .filter(|p| p.pps <= 20_000.0)
            .map(|p| (p.pps / 1e3, f(p)))
            .collect()
    };
    Figure::new("Fig. 10: physical switch CPU", "input load (kpps)", "CPU (%)")
        .with([
            ("physical only", by_k(&phy, &|p| p.outcome.switch_cpu * 100.0)),
            ("CoSwitch", by_k(&cos, &|p| p.outcome.switch_cpu * 100.0)),
        ])
        .save(&ctx.path("fig10-switch-cpu.png"))?;
    let mut rep = Report {
        title: "CoSwitch vs vswitch only vs physical only (Figs. 8, 9, 10)".into(),
        reference: "Zhang et al., CoSwitch, §IV: vswitch only saturates the server core beyond 100 MB/s where \
                    CoSwitch needs 37%; physical only outgrows the 2K TCAM as the timeout grows while CoSwitch \
                    needs at most about 200 entries; physical only saturates the switch CPU over 7.7 kpps"
            .into(),
        files: vec![
            "compare.csv".into(),
            "entries-vs-timeout.csv".into(),
            "fig8-server-cpu.png".into(),
            "fig8-server-cpu.svg".into(),
            "fig9-entries.png".into(),
            "fig9-entries.svg".into(),
            "fig10-switch-cpu.png".into(),
            "fig10-switch-cpu.svg".into(),
        ],
        ..Report::default()
    };
    let curve = |pts: &[Point], f: &dyn Fn(&Point) -> f64| -> Vec<(f64, f64)> {
        pts.iter().map(|p| (p.pps / 1e3, f(p))).collect()
    };
    let sat_kpps = crossing(&curve(&vsw, &|p| p.outcome.server_cpu), SATURATED);
    // Identity: the server's per-packet cost is calibrated to saturate at 80 kpps (Fig. 4); vswitch
    // only adds our 20 us upcall per new flow (12.9 packets per flow), so it saturates where
    // 0.95 / (12.5 + 20 / 12.9) us puts it, about 67 kpps = 34 MB/s at 500 B. The paper's
    // 100 MB/s cannot be met by a model calibrated to its own 80 kpps (see the notes).
    rep.rows.push(Row::new(
        Kind::Identity,
        "vswitch only (Fig. 8)",
        "load where the server core saturates (MB/s)",
        Some(PAPER_VSWITCH_MBYTES),
        sat_kpps.map_or(f64::NAN, |k| k * 1e3 * 500.0 / 1e6),
        Target::Relative(0.1),
    ));
    if let Some(k) = sat_kpps {
        // CoSwitch at that load, interpolated.
        let cs = curve(&cos, &|p| p.outcome.server_cpu);
        let at = interpolate(&cs, k);
        rep.rows.push(Row::new(
            Kind::Prediction,
            &format!("CoSwitch at {:.0} kpps (Fig. 8)", k),
            "server core utilization where vswitch only saturates (%)",
            Some(PAPER_COSWITCH_SERVER_CPU * 100.0),
            at * 100.0,
            Target::Relative(0.25),
        ));
        // What the gap to the paper's 37% is made of: CoSwitch at the same load with one
        // cost or limit of ours taken away at a time.
        (ctx.status)("what CoSwitch's server load is made of");
        for (label, row) in sensitivity(&compare_config(ctx.quick), k.round() * 1e3)? {
            rep.rows.push(Row::new(
                Kind::Prediction,
                &format!("CoSwitch at {:.0} kpps, {label}", k.round()),
                "server core (%)",
                None,
                row.server_cpu * 100.0,
                Target::None,
            ));
        }
    }
    let cos_sat = crossing(&curve(&cos, &|p| p.outcome.server_cpu), SATURATED);
    rep.rows.push(Row::new(
        Kind::Prediction,
        "Fig. 8",
        "load the server carries before saturating: CoSwitch / vswitch only",
        None,
        match (cos_sat, sat_kpps) {
            (Some(a), Some(b)) => a / b,
            (None, Some(_)) => f64::INFINITY,
            _ => f64::NAN,
        },
        Target::AtLeast(1.2),
    ));
    if let (Some(v), Some(co)) = (vsw.last(), cos.last()) {
        rep.rows.push(Row::new(
            Kind::Prediction,
            &format!("{:.0} kpps", v.pps / 1e3),
            "packets dropped at the server: vswitch only",
            None,
            v.outcome.dropped(DropReason::VswitchCpu) as f64,
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &format!("{:.0} kpps", v.pps / 1e3),
            "packets dropped at the server: CoSwitch",
            None,
            co.outcome.dropped(DropReason::VswitchCpu) as f64,
            Target::None,
        ));
    }
    for (t, ph, co) in &c.timeouts {
        rep.rows.push(Row::new(
            Kind::Prediction,
            &format!("{} kpps, {t} s idle timeout (Fig. 9)", TRACE_PPS / 1e3),
            "CoSwitch: peak physical-switch entries",
            Some(PAPER_COSWITCH_ENTRIES),
            co.outcome.tcam_max as f64,
            // The paper (§IV.C): "only not more than 200 elephant flow rules need to be cached".
            // Was 1.5 x 200 = 300, a bound past our measured peaks.
            Target::AtMost(PAPER_COSWITCH_ENTRIES),
        ));
        // Identity: with a rule per flow and a TCAM that never refuses, the entries needed are
        // the flows seen in the last idle timeout, a property of the input workload (whose mice
        // spacing is calibrated to need 2,048 entries at 6 kpps and 3 s).
        rep.rows.push(Row::new(
            Kind::Identity,
            &format!("{} kpps, {t} s idle timeout (Fig. 9)", TRACE_PPS / 1e3),
            "physical only: peak entries needed",
            None,
            ph.outcome.tcam_max as f64,
            Target::None,
        ));
    }
    rep.rows.push(Row::new(
        Kind::Prediction,
        "physical only (Fig. 10)",
        "load where the switch CPU saturates (kpps)",
        Some(PAPER_SWITCH_CPU_KPPS),
        saturation_kpps(&phy, |p| p.outcome.switch_cpu).unwrap_or(f64::NAN),
        // The paper: "overloaded when the input exceeds 7.7Kpps". The same quantity as
        // coswitch-profile's 2K-TCAM row (the same switch, TCAM and load grid), judged the same
        // way: within 10%. Was 15%.
        Target::Relative(0.1),
    ));
    let worst = cos.iter().map(|p| p.outcome.switch_cpu).fold(0.0, f64::max);
    rep.rows.push(Row::new(
        Kind::Prediction,
        "CoSwitch, every load (Fig. 10)",
        "highest switch CPU utilization (%)",
        None,
        worst * 100.0,
        Target::AtMost(SATURATED * 100.0),
    ));
    if let Some(p) = cos.iter().find(|p| p.pps >= PAPER_SWITCH_CPU_KPPS * 1e3) {
        rep.rows.push(Row::new(
            Kind::Prediction,
            &format!("CoSwitch, {} kpps (Fig. 10)", p.pps / 1e3),
            "switch CPU utilization (%)",
            None,
            p.outcome.switch_cpu * 100.0,
            Target::AtMost(50.0),
        ));
    }
    let cfg = compare_config(ctx.quick);
    rep.notes = vec![
        format!(
            "One server sends the trace-like mix for {} s, measured over the last {} s; CoSwitch starts at threshold \
             {} and Flow-Prediction reports every {} s (control law in crates/coswitch/src/prediction.rs).",
            cfg.duration / SEC,
            (cfg.duration - cfg.warmup) / SEC,
            cfg.prediction.initial_threshold,
            cfg.prediction.period / SEC
        ),
        "MB/s = input kpps x 500 B (the trace's 40 Mbps / 10 kpps). The paper's vswitch saturates beyond 100 MB/s \
         in Fig. 8 but at about 80 kpps in Fig. 4; with the trace's 500 B per packet these cannot both hold \
         (80 kpps x 500 B = 40 MB/s). We keep Fig. 4's 80 kpps (the per-packet cost calibration), so Fig. 8's \
         saturation point lands near 40 MB/s; the comparison that matters, CoSwitch's server load where vswitch \
         only saturates, is taken at our saturation point."
            .into(),
        "Fig. 9 runs physical only with a TCAM that never refuses a rule, to show how many entries it would need; \
         CoSwitch runs with the 2K TCAM."
            .into(),
    ];
    Ok(rep)
}

/// CoSwitch at `pps` with one of our costs or limits removed at a time: (label, outcome).
pub fn sensitivity(cfg: &NetConfig, pps: f64) -> Result<Vec<(String, super::network::Outcome)>, ExperimentError> {
    let mut io_20 = cfg.server;
    // The same 12.5 us per 500 B packet, with I/O 20% of it instead of 30%.
    io_20.io_packet = 2_250 * 1_000;
    io_20.ovs_packet = 9_750 * 1_000;
    let variants: Vec<(String, NetConfig)> = vec![
        ("as configured".into(), cfg.clone()),
        (
            "no upcall cost".into(),
            NetConfig {
                server: super::network::ServerCosts {
                    upcall: 0,
                    ..cfg.server
                },
                ..cfg.clone()
            },
        ),
        (
            "TCAM never full".into(),
            NetConfig {
                tcam_entries: usize::MAX,
                ..cfg.clone()
            },
        ),
        (
            "I/O 20% of the per-packet cost".into(),
            NetConfig {
                server: io_20,
                ..cfg.clone()
            },
        ),
        (
            "all three".into(),
            NetConfig {
                server: super::network::ServerCosts { upcall: 0, ..io_20 },
                tcam_entries: usize::MAX,
                ..cfg.clone()
            },
        ),
    ];
    let out = par_map(&variants, threads(), |(l, c)| {
        point(c, Approach::CoSwitch, pps).map(|p| (l.clone(), p.outcome))
    });
    out.into_iter().collect()
}

/// The `coswitch-compare` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "coswitch-compare",
    about: "CoSwitch vs vswitch only vs physical only: server CPU, switch entries, switch CPU (paper Figs. 8-10)",
    run,
};
