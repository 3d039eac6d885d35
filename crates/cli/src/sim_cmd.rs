//! `tandem sim run`: load a scenario, run it with a progress bar, write outputs, print a summary.

use crate::error::CliError;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;
use tandem_sim::run::{self, Progress};
use tandem_sim::scenario::Scenario;
use tandem_sim::time::as_secs;

/// Parses `key=value` for `--set`.
pub fn parse_set(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("expected key=value, got `{s}`")),
    }
}

/// Runs `scenario` into `out` (default `results/<scenario name>`).
pub fn run(scenario: &Path, out: Option<&Path>, seed: Option<u64>, sets: &[(String, String)], quiet: bool) -> Result<(), CliError> {
    let mut overrides = sets.to_vec();
    if let Some(s) = seed {
        overrides.push(("sim.seed".to_string(), s.to_string()));
    }
    let sc = Scenario::load(scenario, &overrides).map_err(|e| CliError::Input(e.to_string()))?;
    let out_dir = out.map(Path::to_path_buf).unwrap_or_else(|| Path::new("results").join(&sc.name));
    let bar = if quiet || !std::io::stderr().is_terminal() {
        ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::hidden())
    } else {
        ProgressBar::new(1000)
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} simulated {msg} [{bar:30}] {percent}% ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let start = Instant::now();
    let mut on_progress = |p: Progress| {
        let wall = start.elapsed().as_secs_f64().max(1e-9);
        bar.set_position((p.now as u128 * 1000 / p.end.max(1) as u128) as u64);
        bar.set_message(format!(
            "{:.3} s of {:.3} s, {:.1} M events/s",
            as_secs(p.now),
            as_secs(p.end),
            p.events as f64 / wall / 1e6
        ));
    };
    let outcome = run::run(&sc, &out_dir, &mut on_progress).map_err(|e| CliError::Runtime(e.to_string()))?;
    bar.finish_and_clear();
    let wall = start.elapsed().as_secs_f64();
    let s = &outcome.summary;
    println!("scenario      {} (seed {})", sc.name, sc.seed);
    println!("simulated     {:.6} s in {:.2} s wall ({:.1} M events/s, {} events)", as_secs(outcome.simulated), wall, outcome.events as f64 / wall.max(1e-9) / 1e6, outcome.events);
    println!("flows         {} ({} completed, {} failed)", s["flows"], s["completed"], s["failed"]);
    println!("goodput       {:.3} Gb/s", s["goodput_bps"].as_f64().unwrap_or(0.0) / 1e9);
    println!(
        "fct (us)      mean {:.1}  p50 {:.1}  p99 {:.1}",
        s["fct_us"]["mean"].as_f64().unwrap_or(0.0),
        s["fct_us"]["p50"].as_f64().unwrap_or(0.0),
        s["fct_us"]["p99"].as_f64().unwrap_or(0.0)
    );
    println!("tcp           {} retransmits, {} fast recoveries, {} timeouts, {} SYN timeouts", s["retransmits"], s["fast_recoveries"], s["timeouts"], s["syn_timeouts"]);
    println!("drops         {} {}", s["drops"], s["drops_by_reason"]);
    println!("ecn marks     {}", s["ecn_marked"]);
    println!("outputs       {}", out_dir.display());
    Ok(())
}
