//! `tcpu-traces`: the paper's Figures 1 and 2 (§3.1) on synthetic rack traffic.
//!
//! The paper measured its own data-center racks: the number of active flows (60-second timeout)
//! is above 2,048 99% of the time and above 4,096 95% of the time (Fig. 1); per one-second
//! interval, the k largest flows by bytes carry more than 89% of the bytes 90% of the time for
//! k = 2,048 and more than 92% 95% of the time for k = 4,096 (Fig. 2). Those traces are not
//! public, so this experiment generates rack traffic and runs the same analysis as
//! `tandem analyze offload` ([`crate::analysis`]).
//!
//! The traffic (what is measured and what is ours), two classes as DCTCP describes a cluster:
//! * background flows with sizes from the web-search CDF (Alizadeh et al., "Data Center TCP",
//!   SIGCOMM 2010, Fig. 4) or, as a second trace, the data-mining CDF (Greenberg et al., "VL2",
//!   SIGCOMM 2009, Fig. 2), both built into the simulator with their sources, arriving as a
//!   Poisson process at the rate that loads each server's 1 Gb/s link to 20% on average (**ours**:
//!   Benson, Akella, Maltz, "Network Traffic Characteristics of Data Centers in the Wild", IMC
//!   2010, report edge links far less utilised than core links), each at line rate;
//! * query flows of the Partition/Aggregate pattern, 1.6 to 2 KB each (DCTCP §2.2), Poisson at
//!   the rate that gives each server DCTCP's measured median of 36 concurrent flows in 50 ms
//!   windows (§2.3, Fig. 5): 720 a second per server. The rate is **fitted** to that median, so
//!   the concurrency row is an input, not evidence;
//! * 40 servers in the rack (**ours**); a flow is active from its first byte until 60 s after its
//!   last (the paper's timeout), which is what a switch's flow table holds; each interval's bytes
//!   per flow are its bytes sent in that interval.
//!
//! Every other row is a prediction on synthetic data: it says what such traffic gives, not what
//! the paper's racks gave. The verdicts (the paper's claims as lower bounds, declared before the
//! run) say whether the paper's conclusion also holds for traffic built from these published
//! statistics.

use super::common::write;
use crate::analysis::{analyze, ccdf, quantile, FlowSpan};
use rand::SeedableRng;
use rand_pcg::Pcg64;
use tandem_sim::experiment::{Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target};
use tandem_sim::plot::{Axis, Figure, Series};
use tandem_sim::workload::FlowSizeCdf;

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "tcpu-traces",
    about: "TCPU Figs. 1, 2: active flows (60 s timeout) and TFOR for k = 2,048 and 4,096 on synthetic rack traffic",
    run,
};

/// Servers of the rack (**ours**).
pub const SERVERS: u32 = 40;
/// Each server's link, bit/s.
pub const LINK_BPS: f64 = 1e9;
/// Mean background load of each server's link (**ours**).
pub const LOAD: f64 = 0.2;
/// The paper's flow timeout, seconds.
pub const TIMEOUT_S: u64 = 60;
/// The k values of Figures 1 and 2 (Trident+ and Trident2).
pub const KS: [usize; 2] = [2048, 4096];
const SEC_NS: u64 = 1_000_000_000;
/// DCTCP's window for concurrent flows per server (§2.3), nanoseconds.
pub const CONCURRENCY_WINDOW_NS: u64 = 50_000_000;
/// DCTCP's measured median of concurrent flows per server in such windows (§2.3, Fig. 5).
pub const DCTCP_MEDIAN_CONCURRENT: f64 = 36.0;
/// Query flow sizes, bytes (DCTCP §2.2: 1.6 to 2 KB).
pub const QUERY_BYTES: (u64, u64) = (1600, 2000);
/// Query flows a second per server: DCTCP's median concurrency over its window (fitted).
pub const QUERIES_PER_SERVER_S: f64 = DCTCP_MEDIAN_CONCURRENT * SEC_NS as f64 / CONCURRENCY_WINDOW_NS as f64;

/// Poisson arrival times (ns) at `rate` per second until `end_ns`.
fn arrivals(rng: &mut Pcg64, rate: f64, end_ns: u64, mut each: impl FnMut(&mut Pcg64, u64)) {
    use rand::Rng;
    let mut t = 0f64;
    loop {
        let u: f64 = rng.random();
        t += -(1.0 - u).ln() / rate * 1e9;
        if t >= end_ns as f64 {
            return;
        }
        each(rng, t as u64);
    }
}

fn at_line_rate(first_ns: u64, bytes: u64) -> FlowSpan {
    FlowSpan {
        first_ns,
        last_ns: first_ns + (bytes as f64 * 8.0 / LINK_BPS * 1e9) as u64,
        bytes,
    }
}

/// Flows of a synthetic rack trace of `span_s` seconds: background flows with sizes from `cdf`
/// and query flows (see the module documentation), sorted by start.
pub fn rack_trace(cdf: &FlowSizeCdf, span_s: u64, seed: u64) -> Vec<FlowSpan> {
    use rand::Rng;
    let end = span_s * SEC_NS;
    let mut flows = Vec::new();
    let mut rng = Pcg64::seed_from_u64(seed);
    let rate = f64::from(SERVERS) * LINK_BPS * LOAD / 8.0 / cdf.mean();
    arrivals(&mut rng, rate, end, |rng, t| {
        flows.push(at_line_rate(t, cdf.sample(rng).max(1)))
    });
    let mut rng = Pcg64::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let rate = f64::from(SERVERS) * QUERIES_PER_SERVER_S;
    arrivals(&mut rng, rate, end, |rng, t| {
        flows.push(at_line_rate(t, rng.random_range(QUERY_BYTES.0..=QUERY_BYTES.1)))
    });
    flows.sort_by_key(|f| (f.first_ns, f.last_ns, f.bytes));
    flows
}

/// Flows active in each interval of `interval_ns` from `origin_ns` (`n` intervals) when each is
/// held `hold_ns` past its last byte: a difference array, one pass over the flows.
pub fn active_per_interval(flows: &[FlowSpan], origin_ns: u64, interval_ns: u64, hold_ns: u64, n: usize) -> Vec<u64> {
    let mut diff = vec![0i64; n + 1];
    for f in flows {
        let a = (f.first_ns.saturating_sub(origin_ns) / interval_ns) as usize;
        if a >= n {
            continue;
        }
        let b = ((f.last_ns + hold_ns).saturating_sub(origin_ns) / interval_ns) as usize;
        diff[a] += 1;
        diff[b.min(n - 1) + 1] -= 1;
    }
    let mut run = 0i64;
    diff[..n]
        .iter()
        .map(|d| {
            run += d;
            run as u64
        })
        .collect()
}

/// What one trace gives.
#[derive(Debug, Clone)]
pub struct TraceResult {
    /// Flow-size source.
    pub name: &'static str,
    /// Flows generated.
    pub flows: usize,
    /// Active flows (60 s timeout) per interval after the first 60 s.
    pub active: Vec<f64>,
    /// TFOR per interval, one list per k of [`KS`].
    pub tfor: Vec<Vec<f64>>,
    /// Flows with bytes in flight per server, per 50 ms window.
    pub per_server: Vec<f64>,
}

impl TraceResult {
    /// Share of intervals with more than `k` active flows.
    pub fn share_above(&self, k: usize) -> f64 {
        let n = self.active.len().max(1) as f64;
        self.active.iter().filter(|&&a| a > k as f64).count() as f64 / n
    }
}

/// Generates and analyses one trace.
pub fn measure(name: &'static str, span_s: u64, seed: u64) -> Result<TraceResult, ExperimentError> {
    let cdf = FlowSizeCdf::builtin(name).ok_or_else(|| ExperimentError(format!("tcpu-traces: no {name} CDF")))?;
    let flows = rack_trace(&cdf, span_s, seed);
    let err = |e| ExperimentError(format!("tcpu-traces: {e}"));
    // TFOR from the flows' own spans, per second.
    let real = analyze(&flows, SEC_NS, &KS).map_err(err)?;
    let tfor = (0..KS.len())
        .map(|j| {
            real.intervals
                .iter()
                .filter(|i| i.start_ns < span_s * SEC_NS)
                .filter_map(|i| i.tfor[j])
                .collect()
        })
        .collect();
    // Active flows: spans held 60 s past the last byte, counted once the hold has filled.
    let origin = crate::analysis::origin(&flows).unwrap_or(0);
    let seconds = (span_s * SEC_NS).saturating_sub(origin) / SEC_NS;
    let active = active_per_interval(&flows, origin, SEC_NS, TIMEOUT_S * SEC_NS, seconds as usize)
        .into_iter()
        .skip(TIMEOUT_S as usize)
        .map(|a| a as f64)
        .collect();
    let windows = (span_s * SEC_NS).saturating_sub(origin) / CONCURRENCY_WINDOW_NS;
    let per_server = active_per_interval(&flows, origin, CONCURRENCY_WINDOW_NS, 0, windows as usize)
        .into_iter()
        .map(|a| a as f64 / f64::from(SERVERS))
        .collect();
    Ok(TraceResult {
        name,
        flows: flows.len(),
        active,
        tfor,
        per_server,
    })
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let span_s = if ctx.quick { 70 } else { 300 };
    (ctx.status)(&format!("two {span_s} s rack traces"));
    let results = ["websearch", "datamining"]
        .iter()
        .map(|n| measure(n, span_s, 1))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rep = Report {
        title: "TCPU: active flows and traffic offload ratio on synthetic rack traffic (Figures 1 and 2)".into(),
        reference: "Lu et al., HotSDN 2012, §3.1, Figures 1 and 2 (the authors' rack traces): active flows > 2,048 \
                    99% of the time and > 4,096 95% of the time; TFOR > 89% for 90% of the time (k = 2,048) and \
                    > 92% for 95% of the time (k = 4,096)"
            .into(),
        ..Report::default()
    };
    let mut csv = String::from("trace,metric,value,ccdf\n");
    for r in &results {
        let setting = format!("{} sizes, {} flows", r.name, r.flows);
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "share of 1 s intervals with more than 2,048 active flows",
            Some(0.99),
            r.share_above(2048),
            Target::AtLeast(0.99),
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "share of 1 s intervals with more than 4,096 active flows",
            Some(0.95),
            r.share_above(4096),
            Target::AtLeast(0.95),
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "TFOR, k = 2,048: exceeded 90% of the time (10th percentile)",
            Some(0.89),
            quantile(&r.tfor[0], 0.10).unwrap_or(0.0),
            Target::AtLeast(0.89),
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "TFOR, k = 4,096: exceeded 95% of the time (5th percentile)",
            Some(0.92),
            quantile(&r.tfor[1], 0.05).unwrap_or(0.0),
            Target::AtLeast(0.92),
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "median active flows (60 s timeout)",
            None,
            quantile(&r.active, 0.5).unwrap_or(0.0),
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Input,
            &setting,
            "median flows in flight per server, 50 ms windows (reference: DCTCP §2.3; query rate fitted to it)",
            Some(DCTCP_MEDIAN_CONCURRENT),
            quantile(&r.per_server, 0.5).unwrap_or(0.0),
            Target::None,
        ));
        for (x, y) in ccdf(&r.active) {
            csv.push_str(&format!("{},active_flows,{x},{y:.6}\n", r.name));
        }
        for (j, k) in KS.iter().enumerate() {
            for (x, y) in ccdf(&r.tfor[j]) {
                csv.push_str(&format!("{},tfor_k{k},{x:.6},{y:.6}\n", r.name));
            }
        }
    }
    write(ctx, "traces.csv", &csv)?;
    let mut fig1 = Figure::new(
        "Active flows per 1 s interval (60 s timeout), 40-server rack",
        Axis::new("active flows").log().integer(),
        "CCDF",
    );
    let mut fig2 = Figure::new("Traffic offload ratio per 1 s interval", "TFOR", "CCDF");
    for r in &results {
        fig1 = fig1.series(Series::new(r.name, ccdf(&r.active)).staircase(0.0));
        for (j, k) in KS.iter().enumerate() {
            fig2 = fig2.series(Series::new(format!("{}, k = {k}", r.name), ccdf(&r.tfor[j])).staircase(0.0));
        }
    }
    fig1.save(&ctx.path("fig1.png"))?;
    fig2.save(&ctx.path("fig2.png"))?;
    rep.files = vec![
        "traces.csv".into(),
        "fig1.png".into(),
        "fig1.svg".into(),
        "fig2.png".into(),
        "fig2.svg".into(),
    ];
    rep.notes.push(format!(
        "{SERVERS} servers at {:.0}% of 1 Gb/s on average, Poisson flow arrivals, each flow at line rate, {span_s} s \
         (active flows counted after the first {TIMEOUT_S} s); all synthetic (see the module documentation and \
         docs/systems/tcpu.md for the sources and what is ours).",
        LOAD * 100.0
    ));
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_flows_are_counted_in_every_interval_they_span() {
        let f = |a: u64, b: u64| FlowSpan {
            first_ns: a,
            last_ns: b,
            bytes: 1,
        };
        let flows = [f(0, 0), f(5, 25), f(40, 40)];
        assert_eq!(active_per_interval(&flows, 0, 10, 0, 5), vec![2, 1, 1, 0, 1]);
        assert_eq!(active_per_interval(&flows, 0, 10, 10, 5), vec![2, 2, 1, 1, 1]);
        assert_eq!(active_per_interval(&flows, 0, 10, 100, 3), vec![2, 2, 2]);
    }

    #[test]
    fn a_trace_is_deterministic_and_offers_the_declared_load() {
        let cdf = FlowSizeCdf::builtin("websearch").unwrap();
        let a = rack_trace(&cdf, 20, 7);
        assert_eq!(a, rack_trace(&cdf, 20, 7));
        assert_ne!(a, rack_trace(&cdf, 20, 8));
        let bytes: u64 = a.iter().map(|f| f.bytes).sum();
        let load = bytes as f64 * 8.0 / (20.0 * f64::from(SERVERS) * LINK_BPS);
        assert!((load - LOAD).abs() < 0.1 * LOAD, "offered load {load}");
        // Each flow sends at line rate: its span is its serialisation time.
        let f = a.iter().max_by_key(|f| f.bytes).unwrap();
        let want = (f.bytes as f64 * 8.0 / LINK_BPS * 1e9) as u64;
        assert_eq!(f.last_ns - f.first_ns, want);
    }

    #[test]
    fn active_flows_are_counted_only_once_the_timeout_has_filled() {
        let r = measure("datamining", 63, 1).unwrap();
        // Intervals from 60 s after the first flow to the end of the trace.
        assert_eq!(r.active.len(), 2);
        // With a 60 s hold an interval counts nearly every flow of the trace so far.
        let min = r.active.iter().cloned().fold(f64::INFINITY, f64::min);
        assert!(min as usize >= r.flows * 9 / 10, "min {min} of {} flows", r.flows);
        // The query rate was fitted to DCTCP's median concurrency: it comes back.
        let median = quantile(&r.per_server, 0.5).unwrap();
        assert!((median - DCTCP_MEDIAN_CONCURRENT).abs() < 3.0, "{median}");
        assert_eq!(r.tfor.len(), KS.len());
        assert!(r.tfor.iter().flatten().all(|&t| (0.0..=1.0).contains(&t)));
    }
}
