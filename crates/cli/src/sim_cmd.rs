//! `tandem sim run|check` and `tandem reproduce`: load a scenario, run it with a progress bar,
//! write outputs, print a summary; run built-in experiments.

use crate::error::CliError;
use crate::paths::OutDir;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tandem_sim::experiment::{self, Experiment, Kind};
use tandem_sim::limits::{self as sim_limits, Limits};
use tandem_sim::run::{self, Progress};
use tandem_sim::scenario::Scenario;
use tandem_sim::time::as_secs;
use tandem_sim::units::{fmt_rate, fmt_rate_f64};

/// Parses `key=value` for `--set`.
pub fn parse_set(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("expected key=value, got `{s}`")),
    }
}

/// Parses `--max-memory`: a size such as `8GiB`, `512MB` or `1TiB`, above 0.
pub fn parse_max_memory(s: &str) -> Result<u64, String> {
    match tandem_sim::units::parse_size(s) {
        Ok(0) => Err("must be above 0".into()),
        Ok(b) => Ok(b),
        Err(e) => Err(e.to_string()),
    }
}

/// The limits of `--max-memory` (default: [`Limits::default`], half of this machine's memory).
pub fn limits(max_memory: Option<u64>) -> Limits {
    max_memory.map_or_else(Limits::default, Limits::max_memory)
}

/// Loads a scenario file with `--seed` and `--set` applied, within the default limits.
pub fn load(scenario: &Path, seed: Option<u64>, sets: &[(String, String)]) -> Result<Scenario, CliError> {
    load_with(scenario, seed, sets, &Limits::default())
}

/// [`load`] within `limits` (a scenario estimated above its memory limit is bad input).
pub fn load_with(
    scenario: &Path,
    seed: Option<u64>,
    sets: &[(String, String)],
    limits: &Limits,
) -> Result<Scenario, CliError> {
    let mut overrides = sets.to_vec();
    if let Some(s) = seed {
        overrides.push(("seed".to_string(), s.to_string()));
    }
    Scenario::load_with_systems(scenario, &overrides, limits, crate::systems::KINDS)
        .map_err(|e| CliError::Input(e.to_string()))
}

/// A duration in picoseconds for people: three significant digits in the largest fitting unit.
fn fmt_time(ps: u64) -> String {
    human(
        ps as f64,
        &[(1e12, "s"), (1e9, "ms"), (1e6, "us"), (1e3, "ns"), (1.0, "ps")],
    )
}

/// A byte count for people.
fn fmt_size(bytes: u64) -> String {
    human(
        bytes as f64,
        &[(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "B")],
    )
}

fn human(x: f64, units: &[(f64, &str)]) -> String {
    if x == 0.0 {
        return format!("0 {}", units.last().map_or("", |u| u.1));
    }
    let (scale, unit) = units.iter().copied().find(|u| x >= u.0).unwrap_or((1.0, ""));
    let v = x / scale;
    let decimals = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.decimals$} {unit}")
}

pub(crate) fn bar(quiet: bool, len: u64, template: &str) -> ProgressBar {
    let bar = if quiet || !std::io::stderr().is_terminal() {
        ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden())
    } else {
        ProgressBar::new(len)
    };
    bar.set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    bar
}

/// `tandem sim check`: validates a scenario (its memory estimate within `max_memory`, default
/// [`Limits::default`]) and says what it would run.
pub fn check(
    scenario: &Path,
    seed: Option<u64>,
    sets: &[(String, String)],
    max_memory: Option<u64>,
) -> Result<(), CliError> {
    let limits = limits(max_memory);
    let sc = load_with(scenario, seed, sets, &limits)?;
    let t = &sc.topology;
    let bytes: u64 = sc.flows.iter().fold(0u64, |a, f| a.saturating_add(f.bytes));
    outln!("{}: ok", scenario.display());
    outln!("scenario   {} (seed {}): {}", sc.name, sc.seed, sc.description);
    outln!("duration   {}", fmt_time(sc.duration));
    outln!(
        "topology   {} hosts, {} switches, {} links",
        t.hosts().len(),
        t.switches().len(),
        t.links().len()
    );
    outln!(
        "flows      {} ({} offered), first at {}, last at {}",
        sc.flows.len(),
        fmt_size(bytes),
        fmt_time(sc.flows.first().map_or(0, |f| f.start)),
        fmt_time(sc.flows.last().map_or(0, |f| f.start))
    );
    outln!(
        "switches   {}",
        name_ranges(t.switches().iter().map(|&s| t.node(s).name.as_str()))
    );
    if let Some(l) = t.hosts().first().and_then(|&h| t.host_link(h)) {
        outln!("host link  {} / {}", fmt_rate(l.cfg.rate_bps), fmt_time(l.cfg.delay));
    }
    for (i, p) in sc.systems.iter().enumerate() {
        outln!(
            "system[{i}]  {} on {}",
            p.kind,
            name_ranges(p.switches.iter().map(|&s| t.node(s).name.as_str()))
        );
    }
    for (i, f) in sc.failures.iter().enumerate() {
        let (node, port) = f.at;
        let peer = t.ports(node)[usize::from(port)].peer;
        let back =
            f.up.map_or(String::from(", for good"), |u| format!(", back at {}", fmt_time(u)));
        outln!(
            "failure[{i}] link {} - {} down at {}{back}",
            t.node(node).name,
            t.node(peer).name,
            fmt_time(f.down)
        );
    }
    if let Some(n) = sc.threads {
        let split = tandem_sim::parallel::partition(t, usize::from(n));
        let window = if split.window == u64::MAX {
            String::from("the whole run (no link has a delay)")
        } else {
            fmt_time(split.window)
        };
        let with_nodes = split.with_nodes().iter().filter(|&&o| o).count();
        let empty = if with_nodes < split.parts {
            format!(" ({with_nodes} with nodes: the network splits no further; the others get no thread)")
        } else {
            String::new()
        };
        outln!(
            "threads    {n}: {} partitions{empty}, {} links between them, windows of {window}",
            split.parts,
            split.cut_links
        );
    }
    outln!(
        "memory     {}; limit {} (--max-memory)",
        sc.memory_estimate(),
        sim_limits::fmt_bytes(limits.max_memory_bytes)
    );
    Ok(())
}

/// Node names with runs of consecutive numbers written as ranges, the way scenario files name
/// them: `leaf0..leaf3, spine0..spine1, core7`.
fn name_ranges<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let split = |s: &'a str| {
        let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (p, n) = s.split_at(s.len() - digits);
        (p, n.parse::<u64>().ok())
    };
    let mut runs: Vec<(&str, u64, u64)> = Vec::new();
    let mut out: Vec<String> = Vec::new();
    let flush = |runs: &mut Vec<(&str, u64, u64)>, out: &mut Vec<String>| {
        for (p, a, b) in runs.drain(..) {
            out.push(if a == b {
                format!("{p}{a}")
            } else {
                format!("{p}{a}..{p}{b}")
            });
        }
    };
    for name in names {
        match split(name) {
            (p, Some(n)) => match runs.last_mut() {
                Some(last) if last.0 == p && last.2 + 1 == n => last.2 = n,
                _ => runs.push((p, n, n)),
            },
            (_, None) => {
                flush(&mut runs, &mut out);
                out.push(name.to_string());
            }
        }
    }
    flush(&mut runs, &mut out);
    out.join(", ")
}

/// `tandem sim export-ns3`: the scenario as a spec for `bench/ns3/scenario.cc`.
pub fn export_ns3(
    scenario: &Path,
    seed: Option<u64>,
    sets: &[(String, String)],
    out: Option<&Path>,
    max_memory: Option<u64>,
) -> Result<(), CliError> {
    let sc = load_with(scenario, seed, sets, &limits(max_memory))?;
    let spec = tandem_sim::ns3_spec::export(&sc).map_err(|e| CliError::input(scenario, e))?;
    match out {
        None => out!("{spec}"),
        Some(p) => {
            // Written beside the target and renamed: never a half-written spec.
            let tmp = p.with_extension("spec.tmp");
            std::fs::write(&tmp, &spec)
                .and_then(|()| std::fs::rename(&tmp, p))
                .map_err(|e| {
                    let _ = std::fs::remove_file(&tmp);
                    CliError::input(p, e)
                })?;
        }
    }
    Ok(())
}

/// `tandem sim run`: runs `scenario` into `out` (default `results/<scenario name>`), if its
/// memory estimate is within `max_memory` (default [`Limits::default`]).
pub fn run(
    scenario: &Path,
    out: Option<&Path>,
    seed: Option<u64>,
    sets: &[(String, String)],
    quiet: bool,
    max_memory: Option<u64>,
) -> Result<(), CliError> {
    let sc = load_with(scenario, seed, sets, &limits(max_memory))?;
    let out_dir = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new("results").join(&sc.name));
    let dir = OutDir::prepare(&out_dir)?;
    let bar = bar(quiet, 1000, "{spinner} {msg} [{bar:30}] {percent}% ({elapsed})");
    let start = Instant::now();
    let mut on_progress = |p: Progress| {
        let wall = start.elapsed().as_secs_f64().max(1e-9);
        bar.set_position((u128::from(p.now) * 1000 / u128::from(p.end.max(1))) as u64);
        bar.set_message(format!(
            "simulated {} of {}, {:.1} M events/s",
            fmt_time(p.now),
            fmt_time(p.end),
            p.events as f64 / wall / 1e6
        ));
    };
    let outcome = run::run(&sc, &out_dir, &mut on_progress).map_err(|e| CliError::Runtime(e.to_string()))?;
    dir.keep();
    bar.finish_and_clear();
    let wall = start.elapsed().as_secs_f64();
    print_summary(&sc, &outcome.summary, outcome.events, as_secs(outcome.simulated), wall);
    if let Some(n) = sc.threads {
        outln!("threads    {n}, in {} windows", outcome.windows);
    }
    outln!("outputs    {}", out_dir.display());
    Ok(())
}

fn print_summary(sc: &Scenario, s: &Value, events: u64, simulated: f64, wall: f64) {
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    let u = |v: &Value| v.as_u64().unwrap_or(0);
    outln!("scenario   {} (seed {})", sc.name, sc.seed);
    outln!(
        "simulated  {simulated:.6} s in {wall:.2} s wall: {events} events ({:.2} M/s), {} link transmissions ({:.2} M/s)",
        events as f64 / wall.max(1e-9) / 1e6,
        u(&s["link_transmissions"]),
        f(&s["link_transmissions"]) / wall.max(1e-9) / 1e6
    );
    let unfinished = u(&s["flows"]).saturating_sub(u(&s["completed"]) + u(&s["failed"]));
    outln!(
        "flows      {} started, {} completed, {} failed{}",
        u(&s["flows"]),
        u(&s["completed"]),
        u(&s["failed"]),
        if unfinished > 0 {
            format!(", {unfinished} not finished by the end of the run (flows.csv says which)")
        } else {
            String::new()
        }
    );
    outln!("goodput    {}", fmt_rate_f64(f(&s["goodput_bps"])));
    outln!(
        "FCT        mean {:.1} us, p50 {:.1} us, p99 {:.1} us, max {:.1} us",
        f(&s["fct_us"]["mean"]),
        f(&s["fct_us"]["p50"]),
        f(&s["fct_us"]["p99"]),
        f(&s["fct_us"]["max"])
    );
    outln!(
        "TCP        {} retransmits, {} fast recoveries, {} timeouts, {} SYN timeouts",
        u(&s["retransmits"]),
        u(&s["fast_recoveries"]),
        u(&s["timeouts"]),
        u(&s["syn_timeouts"])
    );
    let reasons = s["drops_by_reason"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k} {}", u(v)))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    outln!(
        "drops      {}{}",
        u(&s["drops"]),
        if reasons.is_empty() {
            String::new()
        } else {
            format!(" ({reasons})")
        }
    );
    outln!(
        "queues     {} ECN marks, peak {}",
        u(&s["ecn_marked"]),
        fmt_size(u(&s["peak_queue_bytes"]))
    );
    // Placed systems: their counters over their switches (summary.json has each): summed, but
    // a mean is averaged over the switches that have one (not 0) and a maximum or peak is the
    // largest.
    for entry in s["systems"].as_array().into_iter().flatten() {
        let switches = entry["switches"].as_object();
        // (name, value, switches with a mean)
        let mut totals: Vec<(String, f64, u32)> = Vec::new();
        for counters in switches.into_iter().flat_map(|m| m.values()) {
            for (k, v) in counters.as_object().into_iter().flatten() {
                let largest = k.contains("max") || k.contains("peak");
                let counted = u32::from(k.contains("mean") && f(v) != 0.0);
                match totals.iter_mut().find(|t| &t.0 == k) {
                    Some(t) if largest => t.1 = t.1.max(f(v)),
                    Some(t) => {
                        t.1 += f(v);
                        t.2 += counted;
                    }
                    None => totals.push((k.clone(), f(v), counted)),
                }
            }
        }
        for t in &mut totals {
            if t.0.contains("mean") && t.2 > 0 {
                t.1 /= f64::from(t.2);
            }
        }
        let shown: Vec<String> = totals
            .iter()
            .map(|(k, v, _)| {
                if v.fract() == 0.0 {
                    format!("{k} {v}")
                } else {
                    format!("{k} {v:.4}")
                }
            })
            .collect();
        outln!(
            "{:<10} {} switches (counters summed, means averaged over the switches with one, maxima and peaks the largest): {}",
            entry["kind"].as_str().unwrap_or(""),
            switches.map_or(0, |m| m.len()),
            shown.join(", ")
        );
    }
}

/// Every built-in experiment, from every crate that has some.
pub fn experiments() -> Vec<Experiment> {
    let mut all = tandem_sim::validation::experiments();
    all.extend(tandem_tcpu::experiments());
    all.extend(tandem_coswitch::experiments());
    all.extend(tandem_turboswitch::experiments());
    all.extend(tandem_axon::experiments());
    all.push(crate::cam_experiment::EXPERIMENT);
    all.push(crate::gpu_controller_experiment::EXPERIMENT);
    all.extend(crate::live_experiments::experiments());
    all
}

/// `tandem reproduce --list`.
pub fn list() -> Result<(), CliError> {
    let all = experiments();
    let w = all.iter().map(|e| e.name.len()).max().unwrap_or(0);
    for e in &all {
        outln!("{:w$}  {}", e.name, e.about);
    }
    Ok(())
}

/// Runs the built-in experiment `name` into `out_dir`, reporting progress through `status`;
/// the CLI and the Python bindings share it.
pub fn reproduce_report(
    name: &str,
    quick: bool,
    out_dir: &Path,
    status: &mut dyn FnMut(&str),
) -> Result<experiment::Report, CliError> {
    let all = experiments();
    let Some(exp) = all.iter().find(|e| e.name == name) else {
        let names: Vec<&str> = all.iter().map(|e| e.name).collect();
        return Err(CliError::Input(format!(
            "no experiment named `{name}` (there are: {})",
            names.join(", ")
        )));
    };
    let dir = OutDir::prepare(out_dir)?;
    let report = experiment::run(exp, quick, out_dir, status).map_err(|e| CliError::Runtime(e.to_string()))?;
    dir.keep();
    Ok(report)
}

/// `tandem reproduce NAME`.
pub fn reproduce(name: &str, quick: bool, out: Option<&Path>, quiet: bool) -> Result<(), CliError> {
    let out_dir: PathBuf = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new("results").join(name));
    let bar = bar(quiet, 1, "{spinner} {msg} ({elapsed})");
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let start = Instant::now();
    let mut status = |s: &str| bar.set_message(format!("{name}: {s}"));
    let report = reproduce_report(name, quick, &out_dir, &mut status)?;
    bar.finish_and_clear();
    out!("{}", report.markdown(name, quick));
    outln!(
        "\n{} rows ({} input, {} identity, {} prediction); predictions: {} PASS, {} FAIL; {:.1} s; results in {}",
        report.rows.len(),
        report.count(Kind::Input),
        report.count(Kind::Identity),
        report.count(Kind::Prediction),
        report.passes(),
        report.fails(),
        start.elapsed().as_secs_f64(),
        out_dir.join("results.md").display()
    );
    Ok(())
}
