//! `coswitch-cost`: the paper's Figure 7, where a server core's time goes: vswitch processing of
//! elephants' packets, of mice's packets, and network I/O (§IV.B: "most of the CPU time is cost
//! by the packet processing of elephant flows, which is significantly larger than the
//! processing of mice flows ... another part of overhead is the unavoidable network I/O").
//!
//! The paper's 16-server testbed, every server sending the trace mix at the real trace's rate
//! (10 kpps each), vswitch only and CoSwitch, from the model's exact accounting of each job it
//! puts on a server core ([`super::network::CostSplit`]; flows of at least 18 packets are
//! elephants). What the split can and cannot show: the per-packet costs are calibrated (80 kpps
//! per core at 500 B, Fig. 4) and the I/O part of them (30%) is ours, so the I/O share is an
//! input; the mice/elephant split of vswitch processing follows from the mix's packet shares
//! (built to the paper's trace statistics) and those costs, plus the upcalls, so it is an
//! identity of the inputs, not evidence. CoSwitch's split is a prediction (the closed loop sets
//! which packets take the vswitch).

use super::compare::compare_config;
use super::network::{self, flows_of, Approach, CostSplit, NetConfig};
use super::workload::{Stream, TraceMix};
use crate::types::SEC;
use tandem_sim::experiment::{write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target};
use tandem_sim::plot::{Axis, Figure, Series};

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "coswitch-cost",
    about:
        "CoSwitch Fig. 7: server CPU time split into elephant processing, mice processing and network I/O (16 servers)",
    run: run_experiment,
};

/// Servers of the paper's testbed.
pub const SERVERS: u32 = 16;
/// Per-server rate: the real trace's (paper footnote 3: about 10 kpps).
pub const PPS_PER_SERVER: f64 = 10_000.0;

/// Picks one part of a [`CostSplit`].
type Part = fn(&CostSplit) -> u64;

/// One approach's split.
#[derive(Debug, Clone, Copy)]
pub struct Split {
    /// The approach.
    pub approach: Approach,
    /// Core time by purpose, summed over the servers.
    pub cost: CostSplit,
    /// Mean utilization of the busiest core.
    pub busiest_core: f64,
    /// The threshold at the end (CoSwitch).
    pub threshold: u32,
    /// Most physical-switch entries at once.
    pub tcam_max: usize,
    /// Mean utilization of the switch's control CPU.
    pub switch_cpu: f64,
}

impl Split {
    /// Share of the core time that went to `part`.
    pub fn share(&self, part: u64) -> f64 {
        let t = self.cost.total();
        if t == 0 {
            0.0
        } else {
            part as f64 / t as f64
        }
    }
}

/// Runs both approaches on `servers` servers for the configuration's duration.
pub fn measure(servers: u32, cfg: &NetConfig) -> Result<Vec<Split>, ExperimentError> {
    let pps = PPS_PER_SERVER * f64::from(servers);
    let flows = flows_of(
        &[Stream::at_pps(TraceMix::paper(), pps, 0, cfg.duration)],
        servers,
        cfg.seed,
    );
    [Approach::VswitchOnly, Approach::CoSwitch]
        .iter()
        .map(|&approach| {
            let c = NetConfig {
                approach,
                servers,
                ..cfg.clone()
            };
            let o = network::run(&c, &flows).map_err(|e| ExperimentError(e.to_string()))?;
            Ok(Split {
                approach,
                cost: o.server_cost,
                busiest_core: o.server_cpu,
                threshold: o.threshold,
                tcam_max: o.tcam_max,
                switch_cpu: o.switch_cpu,
            })
        })
        .collect()
}

fn run_experiment(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let (servers, cfg) = if ctx.quick {
        (
            4,
            NetConfig {
                duration: 8 * SEC,
                warmup: 4 * SEC,
                ..NetConfig::default()
            },
        )
    } else {
        (SERVERS, compare_config(false))
    };
    (ctx.status)(&format!("{servers} servers at 10 kpps each, vswitch only and CoSwitch"));
    let splits = measure(servers, &cfg)?;
    let mut rep = Report {
        title: "CoSwitch: where the server CPU goes (Figure 7)".into(),
        reference: "Zhang et al., CoSwitch, §IV.B and Figure 7 (no numbers given: elephant processing \
                    significantly larger than mice processing, plus network I/O)"
            .into(),
        ..Report::default()
    };
    let mut csv = String::from(
        "approach,io_s,mice_s,elephants_s,arbiter_s,io_share,mice_share,elephants_share,arbiter_share,busiest_core\n",
    );
    for s in &splits {
        let c = s.cost;
        let name = s.approach.name();
        let secs = |t: u64| t as f64 / SEC as f64;
        csv.push_str(&format!(
            "{name},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4}\n",
            secs(c.io),
            secs(c.mice),
            secs(c.elephants),
            secs(c.arbiter),
            s.share(c.io),
            s.share(c.mice),
            s.share(c.elephants),
            s.share(c.arbiter),
            s.busiest_core
        ));
        let (kind_split, kind_io) = match s.approach {
            Approach::CoSwitch => (Kind::Prediction, Kind::Prediction),
            _ => (Kind::Identity, Kind::Input),
        };
        let setting = format!("{name}, {servers} servers");
        for (metric, kind, v) in [
            (
                "share of server core time: elephants' vswitch processing",
                kind_split,
                s.share(c.elephants),
            ),
            (
                "share of server core time: mice's vswitch processing",
                kind_split,
                s.share(c.mice),
            ),
            ("share of server core time: network I/O", kind_io, s.share(c.io)),
            (
                "share of server core time: Flow-Arbiter",
                kind_split,
                s.share(c.arbiter),
            ),
            ("busiest core, mean utilization", kind_split, s.busiest_core),
            ("physical switch: most entries at once", kind_split, s.tcam_max as f64),
            (
                "physical switch: control CPU, mean utilization",
                kind_split,
                s.switch_cpu,
            ),
            ("threshold at the end (packets)", kind_split, f64::from(s.threshold)),
        ] {
            rep.rows.push(Row::new(kind, &setting, metric, None, v, Target::None));
        }
        if s.approach == Approach::VswitchOnly {
            let ratio = if c.mice > 0 {
                c.elephants as f64 / c.mice as f64
            } else {
                0.0
            };
            rep.rows.push(Row::new(
                Kind::Identity,
                &setting,
                "elephants' / mice's vswitch processing (paper: significantly larger)",
                None,
                ratio,
                Target::None,
            ));
        }
    }
    if let [v, c] = splits.as_slice() {
        rep.rows.push(Row::new(
            Kind::Prediction,
            &format!("{servers} servers"),
            "CoSwitch's server core time / vswitch only's",
            None,
            if v.cost.total() > 0 {
                c.cost.total() as f64 / v.cost.total() as f64
            } else {
                0.0
            },
            Target::None,
        ));
    }
    write(ctx, "cost.csv", &csv)?;
    // Stacked shares as grouped points: one series per part, x = approach.
    let parts: [(&str, Part); 4] = [
        ("elephants' vswitch processing", |c| c.elephants),
        ("mice's vswitch processing", |c| c.mice),
        ("network I/O", |c| c.io),
        ("Flow-Arbiter", |c| c.arbiter),
    ];
    let series: Vec<Series> = parts
        .iter()
        .map(|(label, f)| {
            Series::new(
                *label,
                splits
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (i as f64, 100.0 * s.share(f(&s.cost))))
                    .collect(),
            )
        })
        .collect();
    Figure::new(
        "Server CPU time by purpose (0 = vswitch only, 1 = CoSwitch)",
        Axis::new("approach").integer(),
        "% of server core time",
    )
    .with(series)
    .save(&ctx.path("cost.png"))?;
    rep.files = vec!["cost.csv".into(), "cost.png".into(), "cost.svg".into()];
    rep.notes.push(format!(
        "{servers} servers, each sending the trace mix at 10 kpps; {} s measured after {} s of warm-up; \
         per-packet costs as in coswitch-profile (I/O 3.5 us + 0.5 ns/B, OVS 8.5 us + 0.5 ns/B, \
         upcall 20 us, arbiter 0.2 us); elephants are flows of at least 18 packets.",
        (cfg.duration - cfg.warmup) / SEC,
        cfg.warmup / SEC
    ));
    Ok(rep)
}
