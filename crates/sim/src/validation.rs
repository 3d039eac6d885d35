//! The three scenarios the simulator is checked on against ns-3 3.37 (`bench/ns3/`), with the
//! metrics the ns-3 programs print, and the `sim-validation` experiment that compares them
//! with stored ns-3 results.
//!
//! The scenarios are the shipped files `scenarios/validation/{bulk,incast,dctcp}.toml`,
//! compiled in. [`bulk`], [`incast`] and [`dctcp`] return one JSON object each with the
//! same metric names as the ns-3 programs' output, which `bench/sim-vs-ns3.sh` puts side by
//! side with a fresh ns-3 run.

use crate::experiment::{Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target};
use crate::plot;
use crate::report::quantile;
use crate::run;
use crate::scenario::Scenario;
use crate::sim::Sim;
use crate::time::{as_secs, Time};
use crate::topology::NodeKind;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Instant;

/// `scenarios/validation/bulk.toml`.
pub const BULK_TOML: &str = include_str!("../../../scenarios/validation/bulk.toml");
/// `scenarios/validation/incast.toml`.
pub const INCAST_TOML: &str = include_str!("../../../scenarios/validation/incast.toml");
/// `scenarios/validation/dctcp.toml`.
pub const DCTCP_TOML: &str = include_str!("../../../scenarios/validation/dctcp.toml");

/// ns-3 3.37 results of the same scenarios (TcpLinuxReno), as written by `bench/ns3/run.sh
/// --linux-reno=1` on the development machine; `name` is `bulk`, `incast`, `dctcp` or
/// `dctcp-newreno`, with `-quick` for the short runs.
pub fn ns3_reference(name: &str) -> Option<Value> {
    let text = match name {
        "bulk" => include_str!("../data/ns3/bulk.json"),
        "bulk-quick" => include_str!("../data/ns3/bulk-quick.json"),
        "incast" => include_str!("../data/ns3/incast.json"),
        "incast-quick" => include_str!("../data/ns3/incast-quick.json"),
        "dctcp" => include_str!("../data/ns3/dctcp.json"),
        "dctcp-quick" => include_str!("../data/ns3/dctcp-quick.json"),
        "dctcp-newreno" => include_str!("../data/ns3/dctcp-newreno.json"),
        "dctcp-newreno-quick" => include_str!("../data/ns3/dctcp-newreno-quick.json"),
        _ => return None,
    };
    serde_json::from_str(text).ok()
}

fn load(text: &str, name: &str, overrides: &[(&str, String)]) -> Result<Scenario, ExperimentError> {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    Ok(Scenario::parse(
        text,
        &format!("scenarios/validation/{name}.toml"),
        name,
        Path::new("."),
        &o,
    )?)
}

/// Retransmits and timeouts (data + SYN) summed over every endpoint.
fn tcp_totals(sim: &Sim) -> (u64, u64) {
    let (mut retx, mut to) = (0, 0);
    for (_, _, eps) in sim.flow_results() {
        for s in eps.iter().flatten().map(|e| e.stats()) {
            retx += s.retransmits;
            to += s.data_timeouts + s.syn_timeouts;
        }
    }
    (retx, to)
}

/// Drops and ECN marks summed over every switch port.
fn switch_totals(sim: &Sim) -> (u64, u64) {
    let (mut drops, mut marks) = (0, 0);
    for n in sim.nodes().iter().filter(|n| n.kind == NodeKind::Switch) {
        for p in &n.ports {
            drops += p.queues.stats.dropped();
            marks += p.queues.stats.marked;
        }
    }
    (drops, marks)
}

/// Jain's fairness index of `x`.
pub fn jain(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    if sq == 0.0 {
        return 0.0;
    }
    sum * sum / (x.len() as f64 * sq)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// Queue samples of the sampled port, in packets, in time order.
fn queue_series(sim: &Sim) -> Vec<(Time, f64)> {
    sim.samples.iter().map(|s| (s.time, f64::from(s.packets))).collect()
}

/// Scenario (1): one bulk flow for `duration` (a duration like `10s`).
pub fn bulk(duration: &str) -> Result<Value, ExperimentError> {
    let sc = load(BULK_TOML, "bulk", &[("duration", duration.into())])?;
    let start = Instant::now();
    let mut sim = run::build(&sc, None)?;
    sim.run_until(sc.duration);
    let wall = start.elapsed().as_secs_f64();
    let delivered = sim.flow_results().next().map_or(0, |f| f.1.delivered);
    let (retx, to) = tcp_totals(&sim);
    let (drops, _) = switch_totals(&sim);
    let q = sorted(queue_series(&sim).into_iter().map(|s| s.1).collect());
    Ok(
        json!({"program": "bulk", "simulator": "tandem", "duration_s": as_secs(sc.duration),
        "goodput_bps": delivered as f64 * 8.0 / as_secs(sc.duration), "rx_bytes": delivered,
        "drops": drops, "retransmits": retx, "timeouts": to,
        "queue_mean_pkts": mean(&q), "queue_p99_pkts": quantile(&q, 0.99),
        "wall_s": wall, "events": sim.events_processed()}),
    )
}

/// Scenario (2): `rounds` incast rounds, each on an idle network as ns-3's barrier model (a
/// round starts when the previous one has delivered every byte; new connections each round).
/// Round `r` runs with seed `1 + r`.
pub fn incast(rounds: u64) -> Result<Value, ExperimentError> {
    let (mut rct, mut fct) = (Vec::new(), Vec::new());
    let (mut drops, mut retx, mut to, mut events, mut bytes) = (0, 0, 0, 0, 0u64);
    let mut queue = Vec::new();
    let start = Instant::now();
    for round in 0..rounds {
        // Only the first round's queue is plotted: sampling every 10 us in the others would
        // cost more than simulating them.
        let mut o = vec![("seed", (1 + round).to_string())];
        if round > 0 {
            o.push(("output.queue_sample_interval", "0".to_string()));
        }
        let sc = load(INCAST_TOML, "incast", &o)?;
        let mut sim = run::build(&sc, None)?;
        sim.run_until(sc.duration);
        let mut last: Time = 0;
        for (_, r, _) in sim.flow_results() {
            let e = r.end.unwrap_or(sc.duration);
            last = last.max(e);
            fct.push(as_secs(e - r.start));
            bytes += r.delivered;
        }
        rct.push(as_secs(last));
        let (r, t) = tcp_totals(&sim);
        retx += r;
        to += t;
        drops += switch_totals(&sim).0;
        events += sim.events_processed();
        if round == 0 {
            queue = queue_series(&sim);
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let rct = sorted(rct);
    let fct = sorted(fct);
    let total: f64 = rct.iter().sum();
    let slow = rct.iter().filter(|&&r| r >= 0.2).count();
    Ok(json!({"program": "incast", "simulator": "tandem", "rounds": rounds,
        "round_completion": {"mean_s": mean(&rct), "p50_s": quantile(&rct, 0.5), "p99_s": quantile(&rct, 0.99), "max_s": rct.last().copied().unwrap_or(0.0)},
        "flow_completion": {"flows": fct.len(), "mean_s": mean(&fct), "p50_s": quantile(&fct, 0.5), "p99_s": quantile(&fct, 0.99)},
        "goodput_bps": bytes as f64 * 8.0 / total.max(1e-12), "drops": drops, "retransmits": retx, "timeouts": to,
        "rounds_with_rct_ge_min_rto": slow,
        "first_round_queue": queue.iter().map(|(t, q)| [as_secs(*t), *q]).collect::<Vec<_>>(),
        "wall_s": wall, "events": events}))
}

/// Scenario (3): 4 long flows into one port for `duration`, DCTCP with K = 20 packets
/// (`dctcp = true`) or NewReno with drop-tail.
pub fn dctcp(duration: &str, dctcp: bool) -> Result<Value, ExperimentError> {
    let mut o = vec![("duration", duration.to_string())];
    if !dctcp {
        o.push(("tcp.cc", "newreno".into()));
        o.push(("switch.queue.marking", "none".into()));
    }
    let sc = load(DCTCP_TOML, "dctcp", &o)?;
    let start = Instant::now();
    let mut sim = run::build(&sc, None)?;
    sim.run_until(sc.duration);
    let wall = start.elapsed().as_secs_f64();
    let secs = as_secs(sc.duration);
    let per_flow: Vec<f64> = sim.flow_results().map(|f| f.1.delivered as f64 * 8.0 / secs).collect();
    let series = queue_series(&sim);
    let q = sorted(series.iter().map(|s| s.1).collect());
    let (retx, to) = tcp_totals(&sim);
    let (drops, marks) = switch_totals(&sim);
    Ok(
        json!({"program": "dctcp", "simulator": "tandem", "cc": if dctcp { "dctcp" } else { "newreno" },
        "goodput_bps": per_flow.iter().sum::<f64>(), "flow_goodput_bps": per_flow, "jain_fairness": jain(&per_flow),
        "queue_mean_pkts": mean(&q), "queue_p99_pkts": quantile(&q, 0.99),
        "queue": series.iter().step_by(10).map(|(t, q)| [as_secs(*t), *q]).collect::<Vec<_>>(),
        "drops": drops, "marks": marks, "retransmits": retx, "timeouts": to, "wall_s": wall, "events": sim.events_processed()}),
    )
}

fn num(v: &Value, path: &[&str]) -> f64 {
    let mut cur = v;
    for p in path {
        cur = &cur[*p];
    }
    cur.as_f64().unwrap_or(f64::NAN)
}

fn series(v: &Value, key: &str) -> Vec<(f64, f64)> {
    v[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| Some((p[0].as_f64()? * 1e3, p[1].as_f64()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// One compared metric: where it is in our JSON and in ns-3's, a scale, a target.
#[derive(Clone, Copy)]
struct Metric {
    name: &'static str,
    ours: &'static [&'static str],
    theirs: &'static [&'static str],
    scale: f64,
    target: Target,
}

fn run_validation(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let q = ctx.quick;
    let (long, rounds) = if q { ("1s", 10) } else { ("10s", 100) };
    let sfx = if q { "-quick" } else { "" };
    let reference = |name: &str| {
        ns3_reference(&format!("{name}{sfx}"))
            .ok_or_else(|| ExperimentError(format!("no stored ns-3 result for {name}{sfx}")))
    };
    let mut rep = Report {
        title: "Simulator validation against ns-3 3.37".into(),
        reference: "ns-3 3.37 (Debian build, TcpLinuxReno/TcpDctcp), bench/ns3/ programs with the same \
                    parameters, results stored in crates/sim/data/ns3/"
            .into(),
        ..Report::default()
    };
    let rel = Target::Relative;
    let mut rows = Vec::new();
    // Quick runs last milliseconds (and CI runs them in a debug build): no speed verdict.
    let speed_target = if q { Target::None } else { Target::AtLeast(50.0) };
    // One comparison per metric; then the speed-up.
    let mut compare = |setting: &str, ours: &Value, theirs: &Value, metrics: &[Metric]| {
        for m in metrics {
            rows.push(Row::new(
                Kind::Prediction,
                setting,
                m.name,
                Some(num(theirs, m.theirs) * m.scale),
                num(ours, m.ours) * m.scale,
                m.target,
            ));
        }
        let (a, b) = (num(ours, &["wall_s"]), num(theirs, &["wall_s"]));
        rows.push(Row::new(
            Kind::Prediction,
            setting,
            "speed-up over ns-3 (x, wall time)",
            None,
            b / a,
            speed_target,
        ));
    };
    let m = |name, path: &'static [&'static str], scale, target| Metric {
        name,
        ours: path,
        theirs: path,
        scale,
        target,
    };
    let goodput = m("goodput (Mb/s)", &["goodput_bps"], 1e-6, rel(0.05));
    let drops = m("drops", &["drops"], 1.0, Target::None);
    let retx = m("retransmits", &["retransmits"], 1.0, Target::None);

    (ctx.status)("bulk");
    let (t, n) = (bulk(long)?, reference("bulk")?);
    let queue = Metric {
        theirs: &["bottleneck", "queue_mean_pkts"],
        ..m("queue mean (pkts)", &["queue_mean_pkts"], 1.0, Target::None)
    };
    let timeouts = m("timeouts", &["timeouts"], 1.0, Target::Absolute(0.0));
    compare("(1) bulk", &t, &n, &[goodput, drops, retx, timeouts, queue]);

    (ctx.status)("incast");
    let (t, n) = (incast(rounds)?, reference("incast")?);
    let fct = |name, key: &'static [&'static str]| m(name, key, 1e3, rel(0.15));
    compare(
        "(2) incast",
        &t,
        &n,
        &[
            goodput,
            fct("mean FCT (ms)", &["flow_completion", "mean_s"]),
            fct("p99 FCT (ms)", &["flow_completion", "p99_s"]),
            fct("mean round (ms)", &["round_completion", "mean_s"]),
            drops,
            retx,
            timeouts,
        ],
    );
    let incast_queue = series(&t, "first_round_queue");

    let mut queues = Vec::new();
    for (name, is_dctcp) in [("dctcp", true), ("dctcp-newreno", false)] {
        (ctx.status)(name);
        let (t, n) = (dctcp(long, is_dctcp)?, reference(name)?);
        let s = if is_dctcp {
            "(3) DCTCP K=20"
        } else {
            "(3) NewReno drop-tail"
        };
        let queue_target = if is_dctcp { rel(0.15) } else { Target::None };
        compare(
            s,
            &t,
            &n,
            &[
                goodput,
                m("Jain fairness", &["jain_fairness"], 1.0, Target::None),
                m("queue mean (pkts)", &["queue_mean_pkts"], 1.0, queue_target),
                m("queue p99 (pkts)", &["queue_p99_pkts"], 1.0, Target::None),
                drops,
                m("ECN marks", &["marks"], 1.0, Target::None),
                retx,
                m("timeouts", &["timeouts"], 1.0, Target::None),
            ],
        );
        queues.push((s.to_string(), series(&t, "queue")));
    }
    rep.rows = rows;

    plot::lines(
        &ctx.path("dctcp-queue.png"),
        "4 flows into one 1 Gb/s port: bottleneck queue",
        "time (ms)",
        "queue (packets)",
        &queues,
    )?;
    plot::lines(
        &ctx.path("incast-queue.png"),
        "incast 16 x 64 KiB: bottleneck queue, first round",
        "time (ms)",
        "queue (packets)",
        &[("round 1".to_string(), incast_queue)],
    )?;
    let p = ctx.path("dctcp-queue.csv");
    let mut csv = String::from("setting,time_ms,queue_pkts\n");
    for (name, pts) in &queues {
        for (t, v) in pts {
            csv.push_str(&format!("{name},{t},{v}\n"));
        }
    }
    std::fs::write(&p, csv).map_err(|e| ExperimentError(format!("{}: {e}", p.display())))?;
    rep.files = vec![
        "dctcp-queue.png".into(),
        "dctcp-queue.csv".into(),
        "incast-queue.png".into(),
    ];
    rep.notes = vec![
        format!(
            "Runs: bulk {}, incast {} rounds, DCTCP/NewReno {} each; both tools: 1 Gb/s links of 25 us \
             (100 us base RTT), MSS 1448 + timestamps, SACK, delayed ACK 2 segments / 40 ms, IW 10, \
             min RTO 200 ms, initial RTO 1 s, 100-packet switch queue, 10,000-packet host queues.",
            if q { "1 s" } else { "10 s" },
            if q { 10 } else { 100 },
            if q { "1 s" } else { "10 s" }
        ),
        "Framing: a full segment is 1514 bytes on our links (Ethernet header) and 1502 in ns-3 (PPP \
         header), so our goodput ceiling is 0.8% lower by construction."
            .into(),
        "Speed-ups compare our wall time now with ns-3's stored wall time from the development \
         machine; `bench/sim-vs-ns3.sh` measures both in the same run."
            .into(),
        "Every gap is discussed in docs/sim/validation.md.".into(),
    ];
    Ok(rep)
}

/// The `sim-validation` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "sim-validation",
    about: "the simulator against ns-3 3.37: bulk TCP, 16->1 incast, DCTCP vs NewReno (bench/ns3)",
    run: run_validation,
};

/// The simulator crate's experiments.
pub fn experiments() -> Vec<Experiment> {
    vec![EXPERIMENT]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SEC;

    #[test]
    fn shipped_scenarios_load() {
        for (t, n, d) in [
            (BULK_TOML, "bulk", 10),
            (INCAST_TOML, "incast", 2),
            (DCTCP_TOML, "dctcp", 10),
        ] {
            let sc = load(t, n, &[]).unwrap();
            assert_eq!(sc.duration, d * SEC);
        }
        for n in ["bulk", "incast", "dctcp", "dctcp-newreno"] {
            for s in ["", "-quick"] {
                let v = ns3_reference(&format!("{n}{s}")).unwrap();
                assert_eq!(v["simulator"], "ns-3");
            }
        }
        assert!((jain(&[1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
    }
}
