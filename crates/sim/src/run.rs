//! Runs a loaded scenario end to end and writes its outputs into a directory:
//! `flows`, `drops` and `queues` as CSV and Parquet, `summary.json`, optional pcaps and plots
//! (PNG and SVG).

use crate::parallel::{Parallel, Partitioning};
use crate::plot;
use crate::report::{self, FlowStats};
use crate::scenario::Scenario;
use crate::sim::{Sim, SimOptions};
use crate::table::TableError;
use crate::tap::Tap;
use crate::time::{Time, MS, NS};
use serde_json::Value;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use tandem_wire::pcap::LinkType;

/// A run could not write its outputs.
#[derive(Debug)]
pub enum RunError {
    /// Creating or writing a file failed.
    Io(PathBuf, std::io::Error),
    /// A plot could not be drawn.
    Plot(plot::PlotError),
    /// A result table (CSV or Parquet) could not be written.
    Table(TableError),
    /// The caller's cancel flag stopped the run (see [`run_cancellable`]).
    Interrupted,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            RunError::Plot(e) => write!(f, "{e}"),
            RunError::Table(e) => write!(f, "{e}"),
            RunError::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for RunError {}

/// What a finished run reports.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The summary object (also in summary.json).
    pub summary: Value,
    /// Flow totals.
    pub flows: FlowStats,
    /// Events processed.
    pub events: u64,
    /// Simulated time reached.
    pub simulated: Time,
    /// A partitioned run's windows (the barriers its threads met at); 0 for one simulation.
    pub windows: u64,
}

/// Progress of a run, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Simulated time now.
    pub now: Time,
    /// End of the run.
    pub end: Time,
    /// Events so far.
    pub events: u64,
}

/// Each capture's final path in `dir` and the temporary name it is written under until the run
/// completes (so a failed or interrupted run leaves no partial pcap).
fn pcap_paths(sc: &Scenario, dir: &Path) -> Vec<((crate::packet::NodeId, u16), PathBuf, PathBuf)> {
    sc.output
        .pcap
        .iter()
        .map(|&(node, port)| {
            let path = dir.join(format!("{}-{}.pcap", sc.topology.node(node).name, port));
            let tmp = crate::table::temp_name(&path);
            ((node, port), path, tmp)
        })
        .collect()
}

/// Removes the captures' temporary files (after a failure).
fn discard_pcaps(sc: &Scenario, dir: &Path) {
    for (_, _, tmp) in pcap_paths(sc, dir) {
        let _ = std::fs::remove_file(tmp);
    }
}

/// Builds the simulation for a scenario (without running it); with `out_dir`, opens its pcap
/// taps there, under temporary names that [`run`] renames when the run is complete.
pub fn build(sc: &Scenario, out_dir: Option<&Path>) -> Result<Sim, RunError> {
    build_part(sc, out_dir, None)
}

/// The engine a scenario runs on: one simulation, or a partitioned run when the scenario asks
/// for `threads` ([`crate::parallel`]).
pub enum Engine {
    /// One simulation on the calling thread.
    One(Box<Sim>),
    /// Partitions on threads of their own.
    Partitioned(Parallel),
}

impl Engine {
    /// Runs every event up to and including `until`; false when no event is left.
    pub fn run_until(&mut self, until: Time) -> bool {
        match self {
            Engine::One(s) => s.run_until(until),
            Engine::Partitioned(p) => p.run_until(until),
        }
    }
    /// Where the run stands.
    pub fn now(&self) -> Time {
        match self {
            Engine::One(s) => s.now(),
            Engine::Partitioned(p) => p.now(),
        }
    }
    /// Events handled so far.
    pub fn events_processed(&self) -> u64 {
        match self {
            Engine::One(s) => s.events_processed(),
            Engine::Partitioned(p) => p.events_processed(),
        }
    }
    /// Gives back the endpoints of flows that have gone quiet ([`Sim::retire_quiet_flows`],
    /// [`Parallel::retire_quiet_flows`]). Call it before the run starts.
    pub fn retire_quiet_flows(&mut self) -> bool {
        match self {
            Engine::One(s) => s.retire_quiet_flows(),
            Engine::Partitioned(p) => p.retire_quiet_flows(),
        }
    }
    /// The run as one simulation, for its reports.
    pub fn finish(self) -> Sim {
        match self {
            Engine::One(s) => *s,
            Engine::Partitioned(p) => p.finish(),
        }
    }
}

/// Builds the engine for a scenario: [`build`], or with `threads` the partitions of a
/// partitioned run (each opening the captures of its own ports).
pub fn build_engine(sc: &Scenario, out_dir: Option<&Path>) -> Result<Engine, RunError> {
    let Some(threads) = sc.threads else {
        return Ok(Engine::One(Box::new(build(sc, out_dir)?)));
    };
    let split = crate::parallel::partition(&sc.topology, usize::from(threads));
    let mut parts = Vec::with_capacity(split.parts);
    for i in 0..split.parts {
        parts.push(build_part(sc, out_dir, Some((i as u16, &split)))?);
    }
    Ok(Engine::Partitioned(Parallel::new(parts, &split)))
}

/// The scenario's flows; in the like-for-like mode (`flavor = "ns3"`) with start times rounded
/// to the nearest nanosecond, as the ns-3 program holds them (its clock counts whole
/// nanoseconds). Without this a start a fraction of a nanosecond off puts a packet before or
/// after a transmission's end at the same nanosecond, and the two tools part.
fn like_for_like_starts(sc: &Scenario) -> Vec<crate::workload::FlowSpec> {
    let mut flows = sc.flows.clone();
    if sc.tcp.flavor == crate::config::TcpFlavor::Ns3 {
        for f in &mut flows {
            f.start = (f.start + NS / 2) / NS * NS;
        }
    }
    flows
}

/// [`build`], or with `part` that partition of a partitioned run.
fn build_part(sc: &Scenario, out_dir: Option<&Path>, part: Option<(u16, &Partitioning)>) -> Result<Sim, RunError> {
    let mut sim = Sim::new(
        &sc.topology,
        sc.switch,
        sc.host_queue,
        sc.tcp,
        like_for_like_starts(sc),
        sc.seed,
        SimOptions {
            queue_sample_interval: sc.output.queue_sample_interval,
            sample_ports: sc.output.sample_ports.clone(),
        },
    );
    if let Some((index, split)) = part {
        sim.make_partition(index, split.owner.clone(), sc.duration);
    }
    let owned = |node: crate::packet::NodeId| part.is_none_or(|(i, s)| s.owner[node.0 as usize] == i);
    for f in &sc.failures {
        sim.schedule_link(f.down, f.at.0, f.at.1, false);
        if let Some(t) = f.up {
            sim.schedule_link(t, f.at.0, f.at.1, true);
        }
    }
    for placed in &sc.systems {
        for &node in &placed.switches {
            sim.set_switch_queues(node, placed.placement.queues(node, sc.switch.queue));
            if let Some(model) = placed.placement.model(node) {
                sim.attach_model(node, model);
            }
        }
    }
    if let Some(dir) = out_dir {
        for ((node, port), path, tmp) in pcap_paths(sc, dir) {
            if !owned(node) {
                continue;
            }
            let link_type = sim
                .model(node)
                .and_then(|m| m.capture_link_type(port))
                .unwrap_or(LinkType::ETHERNET);
            let opened = File::create(&tmp)
                .map_err(|e| RunError::Io(path.clone(), e))
                .and_then(|f| {
                    Tap::with_link_type(Box::new(BufWriter::new(f)), link_type)
                        .map_err(|e| RunError::Io(path.clone(), std::io::Error::other(e.to_string())))
                });
            match opened {
                Ok(tap) => sim.add_tap(node, port, tap),
                Err(e) => {
                    discard_pcaps(sc, dir);
                    return Err(e);
                }
            }
        }
    }
    Ok(sim)
}

/// Writes the tables, `summary.json` (under a temporary name, renamed when whole) and the
/// captures (renamed into place once flushed).
fn write_results(sc: &Scenario, sim: &mut Sim, out_dir: &Path, end: Time) -> Result<(FlowStats, Value), RunError> {
    let (flows, drops) = report::write_tables(sim, out_dir).map_err(RunError::Table)?;
    let mut summary = report::summary(sim, &sc.name, sc.seed, end, &flows, drops);
    if !sc.systems.is_empty() {
        summary["systems"] = report::systems(sim, &sc.systems);
    }
    let path = out_dir.join("summary.json");
    let mut w = crate::table::AtomicFile::create(&path).map_err(RunError::Table)?;
    serde_json::to_writer_pretty(&mut w, &summary).map_err(|e| RunError::Io(path.clone(), e.into()))?;
    writeln!(w).map_err(|e| RunError::Io(path.clone(), e))?;
    w.finish().map_err(RunError::Table)?;
    for tap in sim.taps_vec() {
        tap.finish()
            .map_err(|e| RunError::Io(out_dir.to_path_buf(), std::io::Error::other(e.to_string())))?;
    }
    for (_, path, tmp) in pcap_paths(sc, out_dir) {
        std::fs::rename(&tmp, &path).map_err(|e| RunError::Io(path, e))?;
    }
    Ok((flows, summary))
}

/// Runs the scenario and writes every output into `out_dir` (created if needed).
pub fn run(sc: &Scenario, out_dir: &Path, progress: &mut dyn FnMut(Progress)) -> Result<RunOutcome, RunError> {
    run_cancellable(sc, out_dir, progress, &AtomicBool::new(false))
}

/// As [`run`], checking `cancel` after every step of simulated time (1/200 of the run, at
/// least 1 ms): once it is set the run stops with [`RunError::Interrupted`], and `out_dir` is
/// removed again if this call created it (pcaps opened in a folder that was already there are
/// closed and left).
pub fn run_cancellable(
    sc: &Scenario,
    out_dir: &Path,
    progress: &mut dyn FnMut(Progress),
    cancel: &AtomicBool,
) -> Result<RunOutcome, RunError> {
    let created = !out_dir.exists();
    std::fs::create_dir_all(out_dir).map_err(|e| RunError::Io(out_dir.to_path_buf(), e))?;
    let mut sim = build_engine(sc, Some(out_dir))?;
    // The outputs need only the counters of a flow that has gone quiet (`report`).
    sim.retire_quiet_flows();
    let end = sc.duration;
    let step = (end / 200).max(MS);
    let mut t = 0;
    loop {
        if cancel.load(Ordering::Relaxed) {
            drop(sim);
            discard_pcaps(sc, out_dir);
            if created {
                let _ = std::fs::remove_dir_all(out_dir);
            }
            return Err(RunError::Interrupted);
        }
        t = (t + step).min(end);
        let more = sim.run_until(t);
        progress(Progress {
            now: sim.now(),
            end,
            events: sim.events_processed(),
        });
        if t >= end || !more {
            break;
        }
    }
    let (simulated, events) = (sim.now(), sim.events_processed());
    let windows = match &sim {
        Engine::Partitioned(p) => p.windows(),
        Engine::One(_) => 0,
    };
    let mut sim = sim.finish();
    let written = write_results(sc, &mut sim, out_dir, end);
    if written.is_err() {
        discard_pcaps(sc, out_dir);
    }
    let (flows, summary) = written?;
    if sc.output.plots {
        if !flows.fct_us.is_empty() {
            // FCTs of a mixed workload span decades: log x when they do.
            plot::Figure::new(
                format!("{}: flow completion times", sc.name),
                plot::Axis::new("FCT (us)").auto(),
                "CDF",
            )
            .series(plot::Series::cdf("all flows", &flows.fct_us))
            .save(&out_dir.join("fct-cdf.png"))
            .map_err(RunError::Plot)?;
        }
        // Queue of the busiest sampled port over time.
        let mut busiest: Option<(crate::packet::NodeId, u16, u64)> = None;
        for s in &sim.samples {
            if busiest.is_none_or(|b| s.bytes > b.2) {
                busiest = Some((s.node, s.port, s.bytes));
            }
        }
        if let Some((node, port, _)) = busiest {
            // Without `sample_ports` only non-empty queues are sampled: a gap of more than one
            // interval between two samples is an empty queue, drawn as zeros rather than as a
            // straight line across the gap.
            let every = sc.output.queue_sample_interval;
            let ms = |t: crate::time::Time| crate::time::as_secs(t) * 1e3;
            let mut pts: Vec<(f64, f64)> = Vec::new();
            let mut last: Option<crate::time::Time> = None;
            for s in sim.samples.iter().filter(|s| s.node == node && s.port == port) {
                if let Some(prev) = last.filter(|&p| every > 0 && s.time > p + every) {
                    pts.push((ms(prev + every), 0.0));
                    pts.push((ms(s.time - every), 0.0));
                }
                pts.push((ms(s.time), s.bytes as f64 / 1024.0));
                last = Some(s.time);
            }
            let name = &sim.nodes()[node.0 as usize].name;
            plot::Figure::new(
                format!("{}: queue at {name} port {port}", sc.name),
                "time (ms)",
                "queue (KiB)",
            )
            .series(plot::Series::new("", pts))
            .save(&out_dir.join("queue.png"))
            .map_err(RunError::Plot)?;
        }
    }
    Ok(RunOutcome {
        summary,
        flows,
        events,
        simulated,
        windows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, NodeId};
    use crate::topology::NodeKind;

    /// The scenario tests' full scenario (cut-through switches, DCTCP, incast and Poisson
    /// flows) with a pipeline latency, on links of `rate`: at 1 Mb/s a last bit comes more
    /// than 4.3 ms after the header (`event::FAR`).
    fn cut_through(rate: &str) -> Scenario {
        let text = crate::scenario::tests::FULL.replace("rate = \"1Gbps\"", &format!("rate = \"{rate}\""));
        let overrides =
            [("duration", "400ms"), ("switch.pipeline_latency", "3us")].map(|(k, v)| (k.to_string(), v.to_string()));
        let mut sc = Scenario::parse(&text, "t.toml", "t", Path::new("."), &overrides).expect("scenario");
        sc.name = format!("cut-through-{rate}");
        // The comparison builds without an output folder: no captures.
        sc.output.pcap.clear();
        sc
    }

    /// A star of six hosts on uneven links (no two alike, so that no two independent events
    /// fall on the same picosecond), four flows meeting at the switch's port to `h0` and one
    /// from `h0`: `cc` with the switch queue's `marking`.
    fn uneven_star(cc: &str, marking: &str) -> Scenario {
        let text = format!(
            r#"
name = "uneven-{cc}"
seed = 7
duration = "300ms"
[topology]
kind = "star"
hosts = 6
link = {{ rate = "9973Mbps", delay = "24987ns" }}
host_links = {{ h0 = {{ rate = "1000Mbps", delay = "25011ns" }}, h1 = {{ rate = "7919Mbps", delay = "11003ns" }}, h2 = {{ rate = "4999Mbps", delay = "3301ns" }}, h3 = {{ rate = "997Mbps", delay = "41017ns" }}, h5 = {{ rate = "2003Mbps", delay = "17389ns" }} }}
[switch.queue]
limit_packets = 40
{marking}
[tcp]
cc = "{cc}"
sack = true
[[flows]]
kind = "bulk"
pairs = [["h1", "h0"], ["h2", "h0"]]
bytes = "3MB"
[[flows]]
kind = "bulk"
pairs = [["h3", "h0"]]
bytes = "2MB"
start = "3137us"
[[flows]]
kind = "bulk"
pairs = [["h4", "h0"], ["h0", "h5"]]
bytes = "5MB"
start = "11071us"
[output]
queue_sample_interval = "97us"
plots = false
"#
        );
        Scenario::parse(&text, "t.toml", "t", Path::new("."), &[]).expect("scenario")
    }

    /// Ports that transmit directly (`Sim::send_direct`: each packet's transmission fixed
    /// as it is queued, no `TxDone`) give the same run as ports that take their packets at
    /// each transmission's end, where no two independent events share a time (then only the
    /// order of ties may differ): drop-tail NewReno and threshold-marked DCTCP through one
    /// congested port, with drops, recoveries and queue samples, run in uneven steps, give the
    /// same output files byte for byte with a fraction of the events.
    #[test]
    fn direct_transmission_changes_nothing_but_the_order_of_ties() {
        for sc in [
            uneven_star("newreno", ""),
            uneven_star("dctcp", "marking = { kind = \"threshold\", k_packets = 12 }"),
        ] {
            let name = sc.name.as_str();
            let mut sims = [build(&sc, None).expect(name), build(&sc, None).expect(name)];
            sims[1].without_direct_ports();
            step_both(&mut sims, sc.duration, 7_777, |_, _| {});
            let events = [sims[0].events_processed(), sims[1].events_processed()];
            assert!(events[0] * 10 < events[1] * 8, "{name}: {events:?} events");
            let files = outputs_of_both(&sc, &mut sims, "direct");
            let summary = &files.iter().find(|f| f.0 == "summary.json").expect("summary").1;
            let busy = if name.contains("dctcp") {
                "\"ecn_marked\": 0,"
            } else {
                "\"drops\": 0,"
            };
            assert!(
                !String::from_utf8_lossy(summary).contains(busy),
                "{name}: the port must overflow or mark"
            );
            for (f, a, b) in &files {
                if f == "summary.json" {
                    // The summary counts events: the same apart from that line.
                    let strip = |v: &[u8]| {
                        String::from_utf8_lossy(v)
                            .lines()
                            .filter(|l| !l.contains("\"events\""))
                            .collect::<Vec<_>>()
                            .join("\n")
                    };
                    assert_eq!(strip(a), strip(b), "{name}: summary differs");
                } else {
                    assert!(a == b, "{name}: {f} differs");
                }
            }
        }
    }

    /// What arrivals carry ahead for the loop to prefetch (the egress port chosen as a packet
    /// is sent to a switch, the flow of one sent to a host) changes nothing: a k = 4 fat tree
    /// of NewReno flows in a permutation, with drops, and the uneven star, run in uneven
    /// steps with and without, give the same events and output files byte for byte. In the
    /// fat tree a rule installed on every switch between two steps, dropping one flow, also
    /// stops that flow's packets already on their way, whose egress was chosen before it.
    #[test]
    fn arrival_hints_change_nothing() {
        let tree = Scenario::parse(
            r#"
name = "hints"
seed = 3
duration = "3ms"
[topology]
kind = "fat_tree"
k = 4
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "10Gbps", delay = "1us" }
[switch.queue]
limit_packets = 12
[tcp]
cc = "newreno"
sack = true
[[flows]]
kind = "permutation"
hosts = "all"
bytes = "1GB"
"#,
            "t.toml",
            "t",
            Path::new("."),
            &[],
        )
        .expect("hints scenario");
        for (sc, rule_at) in [
            (tree, Some(1_000 * crate::time::US)),
            (uneven_star("newreno", ""), None),
        ] {
            let name = sc.name.as_str();
            let mut sims = [build(&sc, None).expect(name), build(&sc, None).expect(name)];
            sims[1].without_arrival_hints();
            let mut ruled = false;
            step_both(&mut sims, sc.duration, 3_331, |sims, t| {
                assert_eq!(sims[0].events_processed(), sims[1].events_processed(), "{name} at {t}");
                if rule_at.is_some_and(|at| t >= at) && !ruled {
                    ruled = true;
                    for sim in sims.iter_mut() {
                        let switches: Vec<NodeId> = (0..sim.nodes().len() as u32)
                            .map(NodeId)
                            .filter(|&n| sim.nodes()[n.0 as usize].kind == NodeKind::Switch)
                            .collect();
                        for n in switches {
                            let mut table = crate::switch::MatchTable::new(1);
                            let rule = crate::switch::Rule {
                                priority: 1,
                                matches: crate::switch::Match::Flow(FlowId(0)),
                                action: crate::switch::Action {
                                    drop: true,
                                    ..Default::default()
                                },
                            };
                            table.insert(rule).expect("rule");
                            sim.node_mut(n).tables.push(table);
                        }
                    }
                }
            });
            let files = outputs_of_both(&sc, &mut sims, "hints");
            for (f, a, b) in &files {
                assert!(a == b, "{name}: {f} differs");
            }
            if rule_at.is_some() {
                let summary = &files.iter().find(|f| f.0 == "summary.json").expect("summary").1;
                assert!(
                    String::from_utf8_lossy(summary).contains("table-drop"),
                    "{name}: the rule must drop"
                );
            }
        }
    }

    /// A transmission's end without a scheduled `TxDone` when nothing waits (`Sim::start_tx`)
    /// changes nothing: the validation scenarios (drop-tail, RED, ECN, DCTCP, incast, a
    /// multi-hop path, web search on a leaf-spine) and cut-through switches, run in uneven
    /// steps (so that runs end between and at transmission ends), give the same events, times
    /// and output files, byte for byte, as with every `TxDone` scheduled.
    #[test]
    fn unscheduled_transmission_ends_change_nothing() {
        let mut scenarios: Vec<Scenario> = [
            "long-8",
            "staggered",
            "red",
            "red-ecn",
            "dctcp-8",
            "incast-16",
            "multihop",
            "websearch",
        ]
        .iter()
        .map(|name| crate::validation::load_seeded(name, true, None).expect(name))
        .collect();
        scenarios.push(cut_through("1Mbps"));
        scenarios.push(cut_through("1Gbps"));
        for sc in &scenarios {
            let name = sc.name.as_str();
            let mut sims = [build(sc, None).expect(name), build(sc, None).expect(name)];
            // (Ports that transmit directly have no transmission ends at all: the test below.)
            sims[0].without_direct_ports();
            sims[1].schedule_every_tx_done();
            step_both(&mut sims, sc.duration, 12_345, |sims, t| {
                assert_eq!(sims[0].events_processed(), sims[1].events_processed(), "{name} at {t}");
                assert_eq!(sims[0].events_pending(), sims[1].events_pending(), "{name} at {t}");
            });
            for (f, a, b) in outputs_of_both(sc, &mut sims, "txdone") {
                assert!(a == b, "{name}: {f} differs");
            }
        }
    }

    /// Whether each port of `sim` transmits directly, per node, switches first.
    fn direct_ports(sim: &Sim) -> Vec<(bool, Vec<bool>)> {
        let mut v: Vec<(bool, Vec<bool>)> = sim
            .nodes()
            .iter()
            .map(|n| (n.kind == NodeKind::Switch, n.ports.iter().map(|p| p.direct).collect()))
            .collect();
        v.sort_by_key(|n| !n.0);
        v
    }

    /// A model that does nothing (only its presence matters).
    struct Idle;
    impl crate::switch::SwitchModel for Idle {}

    /// Which ports transmit directly: in a plain run every switch port and no host port; none
    /// in the like-for-like mode or with a model attached anywhere; a tapped port not (the
    /// others still). A tap added once the run has begun, on a port with packets queued,
    /// waits until that port has drained: the port keeps sending what it had fixed and then
    /// takes its transmissions' ends by events, and every flow completes with no packet left
    /// over.
    #[test]
    fn which_ports_transmit_directly() {
        let sc = uneven_star("newreno", "");
        let mut sim = build(&sc, None).unwrap();
        sim.run_until(1);
        let ports = direct_ports(&sim);
        assert!(ports[0].0 && ports[0].1.iter().all(|&d| d), "{ports:?}");
        assert!(ports[1..].iter().all(|n| !n.0 && n.1.iter().all(|&d| !d)), "{ports:?}");
        let mut ns3 = uneven_star("newreno", "");
        ns3.tcp.flavor = crate::config::TcpFlavor::Ns3;
        let mut sim = build(&ns3, None).unwrap();
        sim.run_until(1);
        assert!(direct_ports(&sim).iter().all(|n| n.1.iter().all(|&d| !d)));
        let mut sim = build(&sc, None).unwrap();
        let sw = crate::packet::NodeId(sim.nodes().iter().position(|n| n.kind == NodeKind::Switch).unwrap() as u32);
        sim.attach_model(sw, Box::new(Idle));
        sim.run_until(1);
        assert!(direct_ports(&sim).iter().all(|n| n.1.iter().all(|&d| !d)));
        let tap = || Tap::new(Box::new(std::io::sink())).unwrap();
        let mut sim = build(&sc, None).unwrap();
        sim.add_tap(sw, 1, tap());
        sim.run_until(1);
        let ports = direct_ports(&sim);
        assert_eq!(ports[0].1.iter().filter(|&&d| !d).count(), 1, "{ports:?}");
        assert!(!ports[0].1[1]);
        // Late: a tap on the port to h0 (the bottleneck) at the first step from 5 ms on at which
        // it has packets queued.
        let mut sim = build(&sc, None).unwrap();
        let to_h0 = sim.nodes()[sw.0 as usize]
            .ports
            .iter()
            .position(|p| sim.nodes()[p.peer.0 as usize].name == "h0")
            .unwrap() as u16;
        let step = 10 * crate::time::US;
        let mut t = 5 * MS;
        while sim.run_until(t) && sim.nodes()[sw.0 as usize].ports[usize::from(to_h0)].queues.packets() == 0 {
            t += step;
        }
        assert!(t < sc.duration, "the port to h0 never queued");
        sim.add_tap(sw, to_h0, tap());
        let mut was_direct_with_queue = false;
        loop {
            t += step;
            assert!(sim.run_until(t));
            let p = &sim.nodes()[sw.0 as usize].ports[usize::from(to_h0)];
            was_direct_with_queue |= p.direct && p.queues.packets() > 0;
            if !p.direct {
                break;
            }
        }
        assert!(was_direct_with_queue, "the port must drain before it changes");
        assert!(!sim.nodes()[sw.0 as usize].ports[usize::from(to_h0)].direct);
        sim.run_until(10 * crate::time::SEC);
        assert!(sim.flow_results().all(|(_, r, _)| r.end.is_some()));
        assert_eq!(sim.packets_live(), 0);
    }

    /// Runs both simulations to `end` in the same uneven steps (the first `end / 97 + offset`,
    /// so that steps end between and at transmission ends), checking after each that both
    /// stand at the same time with the same answer, and `check`.
    fn step_both(sims: &mut [Sim; 2], end: Time, offset: Time, mut check: impl FnMut(&mut [Sim; 2], Time)) {
        let (mut t, mut step) = (0, end / 97 + offset);
        loop {
            t = (t + step).min(end);
            step = step * 7 / 5 % (end / 9 + 1) + 1;
            let more: Vec<bool> = sims.iter_mut().map(|s| s.run_until(t)).collect();
            assert_eq!(more[0], more[1], "at {t}");
            assert_eq!(sims[0].now(), sims[1].now(), "at {t}");
            check(sims, t);
            if t >= end || !more[0] {
                break;
            }
        }
    }

    /// Writes both simulations' results as a run of `sc` would and returns each output file's
    /// name with its two contents, in name order (at least three files; the folders are
    /// removed).
    fn outputs_of_both(sc: &Scenario, sims: &mut [Sim; 2], tag: &str) -> Vec<(String, Vec<u8>, Vec<u8>)> {
        let dirs: Vec<std::path::PathBuf> = (0..2)
            .map(|i| std::env::temp_dir().join(format!("tandem-{tag}-{}-{}-{i}", std::process::id(), sc.name)))
            .collect();
        for (sim, dir) in sims.iter_mut().zip(&dirs) {
            std::fs::create_dir_all(dir).unwrap();
            write_results(sc, sim, dir, sc.duration).expect(&sc.name);
        }
        let mut names: Vec<String> = std::fs::read_dir(&dirs[0])
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert!(names.len() >= 3, "{names:?}");
        let files = names
            .into_iter()
            .map(|f| {
                let a = std::fs::read(dirs[0].join(&f)).unwrap();
                let b = std::fs::read(dirs[1].join(&f)).unwrap();
                (f, a, b)
            })
            .collect();
        for d in &dirs {
            std::fs::remove_dir_all(d).unwrap();
        }
        files
    }
}
