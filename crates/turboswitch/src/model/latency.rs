//! `turbo-latency`: NF latency with TurboSwitch vs no splitting vs PayloadPark (slides:
//! "What are the NF latency gains of TurboSwitch?": Tofino, FastClick forwarder of 20 us
//! average latency, 100 Gb/s wiring, "33% reduction").
//!
//! Poisson arrivals of the uniform 64-1500 B mix through one switch and the calibrated
//! forwarder ([`crate::nf::forwarder`]), for each mode: no split, PayloadPark (160 B kept),
//! TurboSwitch recirculation, TurboSwitch copies. The headline is at 90 Gb/s: at exactly
//! 100 Gb/s of Poisson arrivals the no-split baseline's NF link is loaded at 100% and its queue
//! never settles (the load sweep shows it). Then the load sweep (25-100 Gb/s) and fixed packet
//! sizes (128-1500 B) at 90 Gb/s.

use super::common::{base, thin, MIX};
use super::kernel::{run as simulate, Phase, SimConfig, SimResult, SizeDist};
use crate::config::Mode;
use crate::nf;
use crate::types::{Time, MS, US};
use tandem_sim::experiment::{
    par_map, threads, write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target,
};
use tandem_sim::plot::{Axis, Figure, Series};

/// Offered load of the headline comparison, Gb/s.
pub const HEADLINE_GBPS: f64 = 90.0;
/// Modes compared.
pub const MODES: [Mode; 4] = [Mode::NoSplit, Mode::PayloadPark, Mode::Recirculate, Mode::Copies];

/// One run's setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setup {
    /// Parking mode or baseline.
    pub mode: Mode,
    /// Offered load, Gb/s.
    pub gbps: f64,
    /// Packet sizes.
    pub sizes: SizeDist,
    /// Length of the arrivals.
    pub duration: Time,
}

/// The model configuration of `s` (seed 1).
pub fn config(s: &Setup) -> SimConfig {
    let sw = crate::config::SwitchConfig::default();
    let mut c = base(
        s.mode,
        nf::forwarder(sw.pipeline_latency),
        vec![Phase {
            duration: s.duration,
            gbps: s.gbps,
        }],
        1,
    );
    c.sizes = s.sizes;
    c.warmup = (s.duration / 10).max(100 * US);
    c
}

/// Runs one setting.
pub fn run_setup(s: &Setup) -> Result<SimResult, ExperimentError> {
    Ok(simulate(&config(s))?)
}

fn size_name(s: SizeDist) -> String {
    match s {
        SizeDist::Uniform { min, max } => format!("{min}-{max} B"),
        SizeDist::Fixed(b) => format!("{b} B"),
    }
}

fn reduction(base: &SimResult, other: &SimResult) -> f64 {
    (1.0 - other.nf_latency.mean / base.nf_latency.mean) * 100.0
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let q = ctx.quick;
    let head_len = if q { MS } else { 10 * MS };
    let sweep_len = if q { MS / 2 } else { 4 * MS };
    let size_len = if q { MS / 2 } else { 2 * MS };
    let loads: &[f64] = if q {
        &[50.0, 90.0]
    } else {
        &[25.0, 50.0, 75.0, 90.0, 100.0]
    };
    let sizes: &[u32] = if q { &[256, 1500] } else { &[128, 256, 512, 1024, 1500] };
    let mut setups = Vec::new();
    for &mode in &MODES {
        setups.push(Setup {
            mode,
            gbps: HEADLINE_GBPS,
            sizes: MIX,
            duration: head_len,
        });
    }
    for &g in loads.iter().filter(|&&g| g != HEADLINE_GBPS) {
        for &mode in &MODES {
            setups.push(Setup {
                mode,
                gbps: g,
                sizes: MIX,
                duration: sweep_len,
            });
        }
    }
    for &b in sizes {
        for &mode in &MODES {
            setups.push(Setup {
                mode,
                gbps: HEADLINE_GBPS,
                sizes: SizeDist::Fixed(b),
                duration: size_len,
            });
        }
    }
    (ctx.status)(&format!("turbo-latency: {} runs", setups.len()));
    let res = par_map(&setups, threads(), run_setup)
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let find = |mode: Mode, g: f64, sizes: SizeDist| {
        setups
            .iter()
            .position(|s| s.mode == mode && s.gbps == g && s.sizes == sizes)
            .and_then(|i| res.get(i))
            .ok_or_else(|| ExperimentError("turbo-latency: missing run".into()))
    };

    let mut csv = String::from(
        "mode,gbps,sizes,duration_us,arrived,lost,nf_mean_us,nf_p50_us,nf_p99_us,payload_mean_us,payload_p99_us,e2e_mean_us,passes_per_payload,copies_per_split\n",
    );
    for (s, r) in setups.iter().zip(&res) {
        csv.push_str(&format!(
            "{},{},{},{},{},{},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.4},{:.4}\n",
            s.mode.name(),
            s.gbps,
            size_name(s.sizes),
            s.duration / US,
            r.arrived,
            r.lost_total(),
            r.nf_latency.mean,
            r.nf_latency.p50,
            r.nf_latency.p99,
            r.payload_latency.mean,
            r.payload_latency.p99,
            r.e2e_mean_us,
            r.passes_per_payload,
            r.copies_per_split
        ));
    }
    write(ctx, "latency.csv", &csv)?;

    let ns = find(Mode::NoSplit, HEADLINE_GBPS, MIX)?;
    let pp = find(Mode::PayloadPark, HEADLINE_GBPS, MIX)?;
    let ts = find(Mode::Recirculate, HEADLINE_GBPS, MIX)?;
    let tc = find(Mode::Copies, HEADLINE_GBPS, MIX)?;
    let setting = format!("{HEADLINE_GBPS} Gb/s Poisson, 64-1500 B");
    let full = !q;
    let refv = |x: f64| if full { Some(x) } else { None };
    // Inputs: the forwarder's base and per-byte cost are fitted to the slides' 20 us for the
    // mix's mean packet and 33% less for a header (`nf::forwarder`), so these three agree by
    // construction (at 90 Gb/s queueing adds a little). Identities: PayloadPark's latency and
    // every fixed-size reduction follow from the same fitted per-byte cost times the bytes the
    // NF no longer moves. Predictions: how the reduction moves with load, parking, losses.
    let mut rows = vec![
        Row::new(
            Kind::Input,
            &setting,
            "NF latency, no split (us)",
            refv(20.0),
            ns.nf_latency.mean,
            if full { Target::Relative(0.1) } else { Target::None },
        ),
        Row::new(
            Kind::Input,
            &setting,
            "NF latency, TurboSwitch (us)",
            refv(20.0 * 0.67),
            ts.nf_latency.mean,
            if full { Target::Relative(0.1) } else { Target::None },
        ),
        Row::new(
            Kind::Input,
            &setting,
            "NF latency reduction, TurboSwitch vs no split (%) [calibrated]",
            refv(33.0),
            reduction(ns, ts),
            if full {
                Target::Absolute(5.0)
            } else {
                Target::AtLeast(20.0)
            },
        ),
        Row::new(
            Kind::Identity,
            &setting,
            "NF latency reduction, PayloadPark vs no split (%)",
            None,
            reduction(ns, pp),
            Target::None,
        ),
        Row::new(
            Kind::Identity,
            &setting,
            "NF latency, PayloadPark (us)",
            None,
            pp.nf_latency.mean,
            Target::None,
        ),
        Row::new(
            Kind::Identity,
            &setting,
            "TurboSwitch NF latency below PayloadPark's",
            Some(1.0),
            if ts.nf_latency.mean < pp.nf_latency.mean {
                1.0
            } else {
                0.0
            },
            Target::AtLeast(1.0),
        ),
        Row::new(
            Kind::Prediction,
            &setting,
            "payload parking time / NF latency, recirculation",
            None,
            ts.payload_latency.mean / ts.nf_latency.mean,
            Target::None,
        ),
        Row::new(
            Kind::Prediction,
            &setting,
            "payload parking time / NF latency, copies",
            None,
            tc.payload_latency.mean / tc.nf_latency.mean,
            Target::None,
        ),
        Row::new(
            Kind::Prediction,
            &setting,
            "packets lost (all modes)",
            Some(0.0),
            [ns, pp, ts, tc].iter().map(|r| r.lost_total() as f64).sum(),
            Target::AtMost(0.0),
        ),
    ];
    for &g in loads {
        let a = find(Mode::NoSplit, g, MIX)?;
        let b = find(Mode::Recirculate, g, MIX)?;
        let c = find(Mode::PayloadPark, g, MIX)?;
        rows.push(Row::new(
            Kind::Prediction,
            &format!("{g} Gb/s, 64-1500 B"),
            "NF latency, TurboSwitch (us)",
            None,
            b.nf_latency.mean,
            Target::None,
        ));
        rows.push(Row::new(
            Kind::Prediction,
            &format!("{g} Gb/s, 64-1500 B"),
            &format!(
                "reduction vs no split (%) [no split {:.2} us, PayloadPark {:.2} us]",
                a.nf_latency.mean, c.nf_latency.mean
            ),
            None,
            reduction(a, b),
            Target::None,
        ));
    }
    for &b in sizes {
        let a = find(Mode::NoSplit, HEADLINE_GBPS, SizeDist::Fixed(b))?;
        let t = find(Mode::Recirculate, HEADLINE_GBPS, SizeDist::Fixed(b))?;
        rows.push(Row::new(
            Kind::Identity,
            &format!("{HEADLINE_GBPS} Gb/s, {b} B"),
            "NF latency reduction, TurboSwitch vs no split (%)",
            None,
            reduction(a, t),
            Target::None,
        ));
    }

    let series = |f: &dyn Fn(&Setup) -> bool, x: &dyn Fn(&Setup) -> f64| {
        MODES
            .iter()
            .map(|&m| {
                (
                    m.name().to_string(),
                    setups
                        .iter()
                        .zip(&res)
                        .filter(|(s, _)| s.mode == m && f(s))
                        .map(|(s, r)| (x(s), r.nf_latency.mean))
                        .collect::<Vec<_>>(),
                )
            })
            .collect::<Vec<_>>()
    };
    let by_size = series(&|s| matches!(s.sizes, SizeDist::Fixed(_)), &|s| s.sizes.mean());
    // Sweeps of a few points: markers (automatic). A mode whose queue grows without bound puts
    // the latency decades above the rest, so y goes log when the values span two decades.
    Figure::new(
        format!("NF latency vs packet size, {HEADLINE_GBPS} Gb/s Poisson"),
        "packet size (B)",
        Axis::new("mean NF latency (us)").auto(),
    )
    .with(by_size)
    .save(&ctx.path("latency_vs_size.png"))?;
    let by_load = series(&|s| s.sizes == MIX, &|s| s.gbps);
    Figure::new(
        "NF latency vs offered load, 64-1500 B",
        "offered load (Gb/s)",
        Axis::new("mean NF latency (us)").auto(),
    )
    .with(by_load)
    .save(&ctx.path("latency_vs_load.png"))?;
    let mut cdf = Vec::new();
    for (name, r) in [
        ("no split: NF latency", ns),
        ("PayloadPark: NF latency", pp),
        ("TurboSwitch: NF latency", ts),
    ] {
        cdf.push(Series::cdf(name, &thin(&r.nf_samples, 2000)));
    }
    Figure::new(
        format!("NF latency, {HEADLINE_GBPS} Gb/s Poisson, 64-1500 B"),
        Axis::new("NF latency (us)").auto(),
        "CDF",
    )
    .with(cdf)
    .save(&ctx.path("latency_cdf.png"))?;
    let f = nf::forwarder(crate::config::SwitchConfig::default().pipeline_latency);
    Ok(Report {
        title: "TurboSwitch: NF latency vs no splitting and PayloadPark".into(),
        reference: "Scazzariello, Caiazzi, Chiesa, ICNP 2024 slides: \"FastClick Forwarder NF => 20 us Average \
                    Latency\", \"33% reduction\"; PayloadPark \"Remove only 160B\", \"Limited gains\""
            .into(),
        rows,
        notes: vec![
            format!(
                "NF model calibrated to the slides (nf.rs): mean base {:.2} us, {:.3} ns per byte, uniform +-10%, \
                 PCIe path 126 Gb/s; zero-load latency 20 us for the 782 B mean packet and 33% less for a 72 B \
                 header. The 33% reduction is therefore an input of the model: what is measured is how it holds \
                 under load (queueing on the 100 Gb/s NF link and PCIe path), with the real size mix, the \
                 64 B packets that are not split, and against PayloadPark, which is not calibrated.",
                f.base_mean as f64 / US as f64,
                f.per_byte_ps as f64 / 1000.0
            ),
            "NF latency = from the switch's NF-port enqueue to the part's return at the switch's ingress (queue, \
             both link directions, NF, pipeline). Payload parking time = from split to merge."
                .into(),
            "Headline at 90 Gb/s: with Poisson arrivals at exactly 100 Gb/s the no-split NF link is loaded at 100% \
             and its queue grows without bound (see the 100 Gb/s sweep row, and latency_vs_load.png)."
                .into(),
            format!(
                "Seed 1; {} ms of arrivals for the headline, {} ms per load point, {} ms per size; the first 10% \
                 (at least 100 us) not measured. {} runs.",
                head_len / MS,
                sweep_len as f64 / MS as f64,
                size_len as f64 / MS as f64,
                setups.len()
            ),
        ],
        files: vec![
            "latency.csv".into(),
            "latency_cdf.png".into(),
            "latency_cdf.svg".into(),
            "latency_vs_load.png".into(),
            "latency_vs_load.svg".into(),
            "latency_vs_size.png".into(),
            "latency_vs_size.svg".into(),
        ],
    })
}

/// The `turbo-latency` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "turbo-latency",
    about: "TurboSwitch NF latency vs no splitting vs PayloadPark, Poisson 64-1500 B (slides: 33% reduction)",
    run,
};
