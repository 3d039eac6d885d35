//! Sweep campaigns: the cross product of a parameter grid and a seed range over one scenario,
//! each run in its own folder named by a content hash, resumable, shardable, and gathered into
//! one table (`campaign.parquet`, `campaign.csv`).
//!
//! Layout of a campaign folder `DIR`:
//! - `DIR/runs/<id>/`: one finished run — the usual `sim run` outputs plus `run.json` (its id,
//!   parameters, seed and Tandem version). A run is written into `runs/.<id>.partial-<pid>/`
//!   and renamed when complete, so a folder under `runs/` named by an id is always whole.
//! - `DIR/campaign.parquet`, `DIR/campaign.csv`: one row per finished run of the plan, in plan
//!   order: `run_id`, `seed`, one column per grid key, then every number of `summary.json`
//!   (nested keys joined with `_`, e.g. `fct_us_p99`).
//!
//! The id is a 64-bit FNV-1a hash (16 hex digits) of the Tandem version, the resolved scenario
//! (its file after overrides, with every referenced file read and every flow generated), the
//! parameters and the seed. Editing a comment does not change it; editing a CDF file it names
//! does. Runs with the same id are the same run, so a second command skips them.
//!
//! Nothing here prints: the CLI (`sweep_cmd`) and the Python bindings drive it.

use crate::error::CliError;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use tandem_sim::limits::Limits;
use tandem_sim::scenario::Scenario;
use tandem_sim::table::{Column, Table};

/// The Tandem version that goes into every run id and `run.json`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// One axis of the grid: a `--set` key and the values it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    /// The key, as `--set` takes it (`tcp.min_rto`, `flows[0].load`).
    pub key: String,
    /// Its values, in the order given.
    pub values: Vec<String>,
}

impl Axis {
    /// An axis, checked: a key, at least one value, no empty value, no value twice.
    pub fn new(key: &str, values: Vec<String>) -> Result<Axis, String> {
        let key = key.trim();
        if key.is_empty() {
            return Err("empty key".into());
        }
        if values.is_empty() {
            return Err(format!("`{key}` has no values"));
        }
        if values.iter().any(String::is_empty) {
            return Err(format!("`{key}`: empty value"));
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(dup) = values.iter().find(|v| !seen.insert(v.as_str())) {
            return Err(format!("`{key}`: value `{dup}` given twice"));
        }
        Ok(Axis {
            key: key.to_string(),
            values,
        })
    }
}

/// Parses `KEY=V1,V2,...` (commas inside brackets, braces or quotes do not split).
pub fn parse_axis(s: &str) -> Result<Axis, String> {
    let (key, values) = s
        .split_once('=')
        .filter(|(k, _)| !k.trim().is_empty())
        .ok_or_else(|| format!("expected KEY=V1,V2,..., got `{s}`"))?;
    Axis::new(key, split_top_level(values))
}

fn split_top_level(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth, mut quote) = (Vec::new(), String::new(), 0i32, None::<char>);
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur.trim().to_string());
    out
}

/// Parses a seed list: `A..B` (A to B, both included), `A,B,C`, or one seed.
pub fn parse_seeds(s: &str) -> Result<Vec<u64>, String> {
    let num = |t: &str| {
        t.trim()
            .parse::<u64>()
            .map_err(|_| format!("`{s}`: `{}` is not a seed (a whole number)", t.trim()))
    };
    let seeds: Vec<u64> = if let Some((a, b)) = s.split_once("..") {
        let (a, b) = (num(a)?, num(b.trim_start_matches('='))?);
        if a > b {
            return Err(format!("`{s}`: the range is empty ({a} > {b})"));
        }
        if b - a >= 10_000_000 {
            return Err(format!("`{s}`: more than 10,000,000 seeds"));
        }
        (a..=b).collect()
    } else {
        s.split(',').map(num).collect::<Result<_, _>>()?
    };
    let mut seen = std::collections::BTreeSet::new();
    if let Some(dup) = seeds.iter().find(|v| !seen.insert(**v)) {
        return Err(format!("`{s}`: seed {dup} given twice"));
    }
    Ok(seeds)
}

/// Which share of a campaign one command runs: run `i` of the plan belongs to shard
/// `i % count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, from 0 to `count - 1` (as `SLURM_ARRAY_TASK_ID` with `--array=0-(N-1)`).
    pub index: usize,
    /// Shards in all.
    pub count: usize,
}

impl Shard {
    /// Parses `I/N`.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("expected I/N with 0 <= I < N (e.g. 0/4), got `{s}`");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse::<usize>().map_err(|_| bad())?,
            n.trim().parse::<usize>().map_err(|_| bad())?,
        );
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether run `i` of the plan is this shard's.
    pub fn owns(&self, i: usize) -> bool {
        i % self.count == self.index
    }
}

/// One run of a campaign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSpec {
    /// Position in the plan (grid order, seeds innermost).
    pub index: usize,
    /// Content hash naming its folder.
    pub id: String,
    /// The grid values of this run, in axis order.
    pub params: Vec<(String, String)>,
    /// Its seed.
    pub seed: u64,
}

/// A campaign's runs, each validated (its scenario loads) before anything runs.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The scenario file.
    pub scenario: PathBuf,
    /// Overrides every run shares (`--set`).
    pub fixed: Vec<(String, String)>,
    /// The grid axes.
    pub axes: Vec<Axis>,
    /// Every run, in plan order.
    pub runs: Vec<RunSpec>,
    /// The limits every run is loaded with: each run's memory estimate is at most
    /// `limits.max_memory_bytes`.
    pub limits: Limits,
    /// The largest memory estimate of a run of the plan, in bytes.
    pub max_run_memory: u64,
}

/// FNV-1a, 64 bits: a hash that never changes between Rust releases or machines.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = (self.0 ^ u64::from(x)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    /// A field, length-prefixed so that ("ab","c") and ("a","bc") differ.
    fn field(&mut self, s: &str) {
        self.bytes(&(s.len() as u64).to_le_bytes());
        self.bytes(s.as_bytes());
    }
}

impl std::fmt::Write for Fnv {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.bytes(s.as_bytes());
        Ok(())
    }
}

fn run_id(sc: &Scenario, params: &[(String, String)], seed: u64) -> String {
    let mut h = Fnv::new();
    h.field(VERSION);
    // The resolved scenario, streamed through the hash rather than built as one string.
    let _ = write!(h, "{sc:?}");
    for (k, v) in params {
        h.field(k);
        h.field(v);
    }
    h.field(&seed.to_string());
    format!("{:016x}", h.0)
}

/// Turns a scenario error from an override into one naming the grid value that caused it.
fn grid_error(e: tandem_sim::scenario::ScenarioError, params: &[(String, String)]) -> CliError {
    if e.file == "--set" {
        if let Some((k, v)) = e.key.as_ref().and_then(|k| params.iter().find(|(p, _)| p == k)) {
            return CliError::Input(format!("--grid {k}={v}: {}", e.message));
        }
    }
    CliError::Input(e.to_string())
}

impl Plan {
    /// Loads the scenario once per run (grid cross product x seeds) to validate it and compute
    /// the run ids; any bad key or value fails here, before anything runs. Every run must fit
    /// the default memory limit ([`Limits::default`]).
    pub fn new(scenario: &Path, fixed: &[(String, String)], axes: &[Axis], seeds: &[u64]) -> Result<Plan, CliError> {
        Plan::with_limits(scenario, fixed, axes, seeds, Limits::default())
    }

    /// [`Plan::new`] with explicit limits: a run whose memory estimate is above
    /// `limits.max_memory_bytes` fails the plan.
    pub fn with_limits(
        scenario: &Path,
        fixed: &[(String, String)],
        axes: &[Axis],
        seeds: &[u64],
        limits: Limits,
    ) -> Result<Plan, CliError> {
        if scenario.is_dir() {
            return Err(CliError::input(scenario, "is a folder, not a scenario file"));
        }
        for (i, a) in axes.iter().enumerate() {
            if a.key == "seed" {
                return Err(CliError::Input("--grid seed=...: give seeds with --seeds".into()));
            }
            if axes[..i].iter().any(|b| b.key == a.key) {
                return Err(CliError::Input(format!("--grid {}: key given twice", a.key)));
            }
            if fixed.iter().any(|(k, _)| *k == a.key) {
                return Err(CliError::Input(format!("--grid {}: also given with --set", a.key)));
            }
        }
        if seeds.is_empty() {
            return Err(CliError::Input("--seeds: no seeds".into()));
        }
        let points: usize = axes.iter().map(|a| a.values.len()).product();
        let total = points.saturating_mul(seeds.len());
        if total > 10_000_000 {
            return Err(CliError::Input(format!(
                "the campaign has {total} runs; the most is 10,000,000"
            )));
        }
        let mut runs = Vec::with_capacity(total);
        let mut max_run_memory = 0;
        for p in 0..points {
            // Mixed-radix digits of p, last axis fastest.
            let mut rest = p;
            let mut params = vec![(String::new(), String::new()); axes.len()];
            for (slot, a) in params.iter_mut().zip(axes).rev() {
                *slot = (a.key.clone(), a.values[rest % a.values.len()].clone());
                rest /= a.values.len();
            }
            for &seed in seeds {
                let sc = load(scenario, fixed, &params, seed, &limits)?;
                max_run_memory = sc.memory_estimate().total().max(max_run_memory);
                let id = run_id(&sc, &params, seed);
                runs.push(RunSpec {
                    index: runs.len(),
                    id,
                    params: params.clone(),
                    seed,
                });
            }
        }
        Ok(Plan {
            scenario: scenario.to_path_buf(),
            fixed: fixed.to_vec(),
            axes: axes.to_vec(),
            runs,
            limits,
            max_run_memory,
        })
    }

    /// How many runs may be in memory at once: as many as the memory limit holds runs of the
    /// largest estimate (at least 1).
    pub fn parallel_runs(&self) -> usize {
        let each = self.max_run_memory.max(1);
        usize::try_from(self.limits.max_memory_bytes / each)
            .unwrap_or(usize::MAX)
            .max(1)
    }

    /// The run with this id.
    pub fn run(&self, id: &str) -> Option<&RunSpec> {
        self.runs.iter().find(|r| r.id == id)
    }
}

fn load(
    scenario: &Path,
    fixed: &[(String, String)],
    params: &[(String, String)],
    seed: u64,
    limits: &Limits,
) -> Result<Scenario, CliError> {
    let mut overrides = fixed.to_vec();
    overrides.extend_from_slice(params);
    overrides.push(("seed".into(), seed.to_string()));
    Scenario::load_with_systems(scenario, &overrides, limits, crate::systems::KINDS).map_err(|e| grid_error(e, params))
}

/// The folder of a finished run.
pub fn run_dir(out: &Path, id: &str) -> PathBuf {
    out.join("runs").join(id)
}

/// Whether the run with this id has finished (its folder holds `run.json`).
pub fn is_done(out: &Path, id: &str) -> bool {
    run_dir(out, id).join("run.json").is_file()
}

/// Checks that `out` can hold a campaign (creating it), before anything runs.
pub fn prepare_out(out: &Path) -> Result<(), CliError> {
    if out.exists() && !out.is_dir() {
        return Err(CliError::input(out, "exists and is not a folder"));
    }
    std::fs::create_dir_all(out.join("runs")).map_err(|e| CliError::input(out, e))?;
    // Probe that it is writable now rather than after the first run.
    let probe = out.join(format!(".probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| CliError::input(out, e))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// Runs one run of the plan into `out/runs/<id>/` and returns its summary. The run is written
/// into a hidden partial folder and renamed when complete; `cancel` stops it between steps of
/// simulated time (an interrupted run leaves nothing).
pub fn run_one(plan: &Plan, run: &RunSpec, out: &Path, cancel: &AtomicBool) -> Result<Value, CliError> {
    let sc = load(&plan.scenario, &plan.fixed, &run.params, run.seed, &plan.limits)?;
    let runs = out.join("runs");
    let partial = runs.join(format!(".{}.partial-{}", run.id, std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    let result = (|| {
        let mut no_progress = |_p: tandem_sim::run::Progress| {};
        // A run that completes after the cancel is whole, and kept.
        let outcome = tandem_sim::run::run_cancellable(&sc, &partial, &mut no_progress, cancel)
            .map_err(|e| CliError::Runtime(e.to_string()))?;
        let meta = serde_json::json!({
            "id": run.id,
            "scenario": plan.scenario.display().to_string(),
            "set": plan.fixed.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
            "params": run.params.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
            "seed": run.seed,
            "tandem_version": VERSION,
        });
        let text = serde_json::to_string_pretty(&meta).unwrap_or_default() + "\n";
        std::fs::write(partial.join("run.json"), text).map_err(|e| CliError::runtime(&partial, e))?;
        let dest = run_dir(out, &run.id);
        if dest.exists() {
            // A half-copied or foreign folder under our id: replace it.
            std::fs::remove_dir_all(&dest).map_err(|e| CliError::runtime(&dest, e))?;
        }
        std::fs::rename(&partial, &dest).map_err(|e| CliError::runtime(&dest, e))?;
        Ok(outcome.summary)
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    result
}

/// What a campaign command did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Runs this command ran.
    pub ran: usize,
    /// Runs found finished and skipped.
    pub skipped: usize,
    /// Runs of other shards, left alone.
    pub other_shards: usize,
    /// Runs that failed: (id, message).
    pub failed: Vec<(String, String)>,
    /// Whether the command was interrupted before it ran everything.
    pub interrupted: bool,
}

/// A run finished (or failed): for progress displays.
#[derive(Debug, Clone)]
pub struct Tick {
    /// Runs done (ran or failed) so far by this command.
    pub done: usize,
    /// Runs this command has to do.
    pub todo: usize,
    /// The run's id.
    pub id: String,
    /// Its error, when it failed.
    pub error: Option<String>,
}

/// The runs of `shard` that have not finished yet.
pub fn pending<'a>(plan: &'a Plan, out: &Path, shard: Option<Shard>) -> (Vec<&'a RunSpec>, Outcome) {
    let mut o = Outcome::default();
    let mut todo = Vec::new();
    for r in &plan.runs {
        if shard.is_some_and(|s| !s.owns(r.index)) {
            o.other_shards += 1;
        } else if is_done(out, &r.id) {
            o.skipped += 1;
        } else {
            todo.push(r);
        }
    }
    (todo, o)
}

/// Runs every unfinished run of `shard` (all when `None`) on `jobs` threads, calling `tick`
/// after each; a failed run does not stop the others. Setting `cancel` stops after the runs
/// in progress. At most [`Plan::parallel_runs`] runs go at once, whatever `jobs` says, so that
/// the runs in memory together fit the plan's memory limit.
pub fn execute(
    plan: &Plan,
    out: &Path,
    jobs: usize,
    shard: Option<Shard>,
    cancel: &AtomicBool,
    tick: &(dyn Fn(&Tick) + Sync),
) -> Result<Outcome, CliError> {
    prepare_out(out)?;
    let (todo, outcome) = pending(plan, out, shard);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let outcome = Mutex::new(outcome);
    std::thread::scope(|s| {
        for _ in 0..jobs.min(plan.parallel_runs()).clamp(1, todo.len().max(1)) {
            s.spawn(|| loop {
                if cancel.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(run) = todo.get(i) else { break };
                let result = run_one(plan, run, out, cancel);
                let mut o = outcome.lock().unwrap_or_else(|e| e.into_inner());
                let error = match result {
                    Ok(_) => {
                        o.ran += 1;
                        None
                    }
                    Err(_) if cancel.load(Ordering::Relaxed) => break,
                    Err(e) => {
                        o.failed.push((run.id.clone(), e.to_string()));
                        Some(e.to_string())
                    }
                };
                drop(o);
                tick(&Tick {
                    done: done.fetch_add(1, Ordering::Relaxed) + 1,
                    todo: todo.len(),
                    id: run.id.clone(),
                    error,
                });
            });
        }
    });
    let mut o = outcome.into_inner().unwrap_or_else(|e| e.into_inner());
    o.interrupted = cancel.load(Ordering::Relaxed);
    o.failed.sort();
    Ok(o)
}

/// A grid value as typed a column: integers, then floats, then booleans, else text.
fn typed_column(values: &[&str]) -> Column {
    if let Some(v) = values
        .iter()
        .map(|v| v.parse::<i64>().ok().map(Some))
        .collect::<Option<Vec<_>>>()
    {
        return Column::Int64(v);
    }
    if let Some(v) = values
        .iter()
        .map(|v| v.parse::<f64>().ok().map(Some))
        .collect::<Option<Vec<_>>>()
    {
        return Column::Float64(v);
    }
    if let Some(v) = values
        .iter()
        .map(|v| v.parse::<bool>().ok().map(Some))
        .collect::<Option<Vec<_>>>()
    {
        return Column::Bool(v);
    }
    Column::Utf8(values.iter().map(|v| Some((*v).to_string())).collect())
}

/// A summary's numbers, flattened: `{"fct_us": {"p99": 3}}` gives `fct_us_p99 = 3`.
#[derive(Default)]
struct Flat {
    /// Leaf name -> value.
    leaves: BTreeMap<String, Value>,
    /// Leaf name -> the nested object it is a member of (absent for top-level leaves).
    parent: BTreeMap<String, String>,
    /// The nested objects this summary has.
    objects: std::collections::BTreeSet<String>,
}

fn flatten(prefix: &str, v: &Value, out: &mut Flat) {
    match v {
        Value::Object(m) => {
            if !prefix.is_empty() {
                out.objects.insert(prefix.to_string());
            }
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    out.parent.insert(format!("{prefix}_{k}"), prefix.to_string());
                    format!("{prefix}_{k}")
                };
                flatten(&key, x, out);
            }
        }
        Value::Number(_) | Value::Bool(_) => {
            out.leaves.insert(prefix.to_string(), v.clone());
        }
        // Placed systems (`[[system]]`): entry i's counters per switch, as
        // `system{i}_{switch}_{counter}` (the kind is the entry's, known from the scenario).
        Value::Array(entries) if prefix == "systems" => {
            for (i, e) in entries.iter().enumerate() {
                for (sw, counters) in e["switches"].as_object().into_iter().flatten() {
                    flatten(&format!("system{i}_{sw}"), counters, out);
                }
            }
        }
        _ => {}
    }
}

/// Reads the finished runs of the plan and builds the campaign table (plan order). A member
/// of a nested object that one run lacks while it has the object (a drop reason it never saw)
/// is zero there; any other missing value is null.
pub fn table(plan: &Plan, out: &Path) -> Result<Table, CliError> {
    let mut rows: Vec<(&RunSpec, Flat)> = Vec::new();
    for r in plan.runs.iter().filter(|r| is_done(out, &r.id)) {
        let p = run_dir(out, &r.id).join("summary.json");
        let text = std::fs::read_to_string(&p).map_err(|e| CliError::runtime(&p, e))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| CliError::runtime(&p, e))?;
        let mut flat = Flat::default();
        flatten("", &v, &mut flat);
        flat.leaves.remove("seed");
        rows.push((r, flat));
    }
    let zero_value = Value::from(0u64);
    let parents: BTreeMap<String, String> = rows.iter().flat_map(|(_, f)| f.parent.clone()).collect();
    let mut t = Table::new();
    let push = |t: &mut Table, name: &str, c: Column| {
        t.push(name, c)
            .map(|_| ())
            .map_err(|e| CliError::Runtime(format!("campaign table: {e}")))
    };
    push(
        &mut t,
        "run_id",
        Column::Utf8(rows.iter().map(|(r, _)| Some(r.id.clone())).collect()),
    )?;
    push(
        &mut t,
        "seed",
        Column::UInt64(rows.iter().map(|(r, _)| Some(r.seed)).collect()),
    )?;
    for (i, a) in plan.axes.iter().enumerate() {
        let vals: Vec<&str> = rows.iter().map(|(r, _)| r.params[i].1.as_str()).collect();
        push(&mut t, &a.key, typed_column(&vals))?;
    }
    let keys: std::collections::BTreeSet<&String> = rows.iter().flat_map(|(_, f)| f.leaves.keys()).collect();
    for key in keys {
        if t.column(key).is_some() {
            continue;
        }
        let cells: Vec<Option<&Value>> = rows
            .iter()
            .map(|(_, f)| {
                f.leaves.get(key).or_else(|| {
                    let zero = parents.get(key).is_some_and(|p| f.objects.contains(p));
                    zero.then_some(&zero_value)
                })
            })
            .collect();
        let col = if cells.iter().flatten().all(|v| v.is_boolean()) {
            Column::Bool(cells.iter().map(|c| c.and_then(Value::as_bool)).collect())
        } else if cells.iter().flatten().all(|v| v.is_u64()) {
            Column::UInt64(cells.iter().map(|c| c.and_then(Value::as_u64)).collect())
        } else {
            Column::Float64(cells.iter().map(|c| c.and_then(Value::as_f64)).collect())
        };
        push(&mut t, key, col)?;
    }
    Ok(t)
}

/// Writes `campaign.parquet` and `campaign.csv` from the finished runs; returns the table.
pub fn write_campaign(plan: &Plan, out: &Path) -> Result<Table, CliError> {
    let t = table(plan, out)?;
    for (name, res) in [
        ("campaign.parquet", t.write_parquet(&out.join("campaign.parquet"))),
        ("campaign.csv", t.write_csv(&out.join("campaign.csv"))),
    ] {
        res.map_err(|e| CliError::runtime(&out.join(name), e))?;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_split_at_top_level_commas_only() {
        let a = parse_axis("flows[0].sizes=[1, 2],[3],\"a,b\"").unwrap();
        assert_eq!(a.key, "flows[0].sizes");
        assert_eq!(a.values, vec!["[1, 2]", "[3]", "\"a,b\""]);
        assert!(parse_axis("=1").is_err());
        assert!(parse_axis("k=1,,2").is_err());
        assert!(parse_axis("k=1,1").is_err());
    }

    #[test]
    fn seeds_are_inclusive_ranges_or_lists() {
        assert_eq!(parse_seeds("1..3").unwrap(), vec![1, 2, 3]);
        assert_eq!(parse_seeds("1..=3").unwrap(), vec![1, 2, 3]);
        assert_eq!(parse_seeds("7").unwrap(), vec![7]);
        assert_eq!(parse_seeds("5,2").unwrap(), vec![5, 2]);
        assert!(parse_seeds("3..1").is_err());
        assert!(parse_seeds("a..2").is_err());
        assert!(parse_seeds("1,1").is_err());
    }

    #[test]
    fn runs_in_memory_together_fit_the_limit() {
        let sc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/incast.toml");
        let axis = parse_axis("tcp.min_rto=1ms,10ms").unwrap();
        let plan = Plan::new(&sc, &[], std::slice::from_ref(&axis), &[1]).unwrap();
        let each = plan.max_run_memory;
        assert!(each > 40 << 20 && each < 100 << 20, "{each}");
        let limited = Plan::with_limits(&sc, &[], &[axis], &[1, 2], Limits::max_memory(3 * each + 1)).unwrap();
        assert_eq!(limited.parallel_runs(), 3);
        assert_eq!(limited.runs.len(), 4);
        let e = Plan::with_limits(&sc, &[], &[], &[1], Limits::max_memory(each - 1))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("the run would need about"), "{e}");
    }

    #[test]
    fn shards_split_every_nth_run() {
        let s = Shard::parse("1/3").unwrap();
        assert_eq!((0..7).filter(|&i| s.owns(i)).collect::<Vec<_>>(), vec![1, 4]);
        assert!(Shard::parse("3/3").is_err());
        assert!(Shard::parse("0/0").is_err());
        assert!(Shard::parse("x").is_err());
    }

    #[test]
    fn grid_values_get_typed_columns() {
        assert_eq!(typed_column(&["1", "20"]), Column::Int64(vec![Some(1), Some(20)]));
        assert_eq!(typed_column(&["1", "0.5"]), Column::Float64(vec![Some(1.0), Some(0.5)]));
        assert_eq!(typed_column(&["true"]), Column::Bool(vec![Some(true)]));
        assert_eq!(typed_column(&["1ms"]), Column::Utf8(vec![Some("1ms".into())]));
    }

    #[test]
    fn fnv_is_the_published_function() {
        // FNV-1a 64 test vectors (Fowler, Noll, Vo): "" and "a".
        let mut h = Fnv::new();
        h.bytes(b"");
        assert_eq!(h.0, 0xcbf2_9ce4_8422_2325);
        h.bytes(b"a");
        assert_eq!(h.0, 0xaf63_dc4c_8601_ec8c);
    }
}
