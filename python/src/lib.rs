//! `tandem._native`: the Rust half of the `tandem` Python package. Each function calls the same
//! library code as the `tandem` command (crate `tandem-cli`), so results and one-line error
//! messages are the CLI's. Bad input raises `ValueError`, a failure while running raises
//! `RuntimeError`. Long calls run on a worker thread with the GIL released while the calling
//! thread watches for Ctrl-C; `tandem/__init__.py` turns the files these functions write into
//! pyarrow tables.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tandem_cli::campaign::{self, Axis, Plan, Shard};
use tandem_cli::error::CliError;
use tandem_sim::limits::Limits;

fn py_err(e: CliError) -> PyErr {
    match e {
        CliError::Input(m) => PyValueError::new_err(m),
        CliError::Runtime(m) => PyRuntimeError::new_err(m),
    }
}

/// How long an interrupted call waits for its worker to stop before leaving it behind.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Runs `work` on a worker thread with the GIL released; every 50 ms the calling thread takes
/// the GIL back just long enough to see whether Ctrl-C (or another signal handler) raised. On
/// an interrupt it sets the cancel flag, waits up to [`STOP_GRACE`] for the worker to stop,
/// and raises `KeyboardInterrupt` (a worker that cannot stop finishes in the background and
/// its result is dropped).
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    work: impl FnOnce(&AtomicBool) -> Result<T, CliError> + Send + 'static,
) -> PyResult<T> {
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("tandem-worker".into())
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&flag)));
            let _ = tx.send(r);
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start a worker thread: {e}")))?;
    let outcome = py.detach(move || loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(r) => return Ok(r),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err("the worker thread vanished"));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = Python::attach(|py| py.check_signals()) {
                    cancel.store(true, Ordering::Relaxed);
                    let _ = rx.recv_timeout(STOP_GRACE);
                    return Err(e);
                }
            }
        }
    })?;
    match outcome {
        Ok(r) => r.map_err(py_err),
        Err(_) => Err(PyRuntimeError::new_err("internal error: the worker panicked")),
    }
}

fn axes(grid: Vec<(String, Vec<String>)>) -> Result<Vec<Axis>, CliError> {
    // The CLI's checks; values are taken as given (a Python list needs no comma splitting).
    grid.into_iter()
        .map(|(key, values)| Axis::new(&key, values).map_err(|e| CliError::Input(format!("grid: {e}"))))
        .collect()
}

/// Runs a scenario file into `out` (the `sim run` outputs) and returns summary.json's text.
#[pyfunction]
#[pyo3(signature = (path, sets, seed, out, max_memory=None))]
fn run_scenario(
    py: Python<'_>,
    path: PathBuf,
    sets: Vec<(String, String)>,
    seed: Option<u64>,
    out: PathBuf,
    max_memory: Option<u64>,
) -> PyResult<String> {
    interruptible(py, move |cancel| {
        let sc = tandem_cli::sim_cmd::load_with(&path, seed, &sets, &limits(max_memory))?;
        let dir = tandem_cli::paths::OutDir::prepare(&out)?;
        let mut progress = |_p: tandem_sim::run::Progress| {};
        let outcome = tandem_sim::run::run_cancellable(&sc, &out, &mut progress, cancel)
            .map_err(|e| CliError::Runtime(e.to_string()))?;
        dir.keep();
        Ok(outcome.summary.to_string())
    })
}

/// Writes the flow records of a pcap/pcapng trace to the Parquet file `out`, as
/// `tandem pcap flows PATH --timeout T --parquet OUT` (at most 4,000,000 open flows, as the
/// CLI's default).
#[pyfunction]
fn pcap_flows(py: Python<'_>, path: PathBuf, timeout_ns: u64, out: PathBuf) -> PyResult<()> {
    if timeout_ns == 0 {
        return Err(PyValueError::new_err("timeout: must be above zero"));
    }
    interruptible(py, move |_| {
        tandem_cli::pcap_cmd::flows(&path, None, Some(&out), timeout_ns, 4_000_000, true)
    })
}

/// Runs the built-in experiment `name` into `out` and returns its report as JSON text.
#[pyfunction]
fn reproduce(py: Python<'_>, name: String, quick: bool, out: PathBuf) -> PyResult<String> {
    interruptible(py, move |_cancel| {
        let mut status = |_: &str| {};
        let report = tandem_cli::sim_cmd::reproduce_report(&name, quick, &out, &mut status)?;
        Ok(report.json(&name, quick).to_string())
    })
}

/// The built-in experiments as (name, one-line description) pairs.
#[pyfunction]
fn experiments() -> Vec<(String, String)> {
    tandem_cli::sim_cmd::experiments()
        .iter()
        .map(|e| (e.name.to_string(), e.about.to_string()))
        .collect()
}

fn limits(max_memory: Option<u64>) -> Limits {
    max_memory.map_or_else(Limits::default, Limits::max_memory)
}

fn plan_of(
    scenario: &Path,
    sets: &[(String, String)],
    grid: Vec<(String, Vec<String>)>,
    seeds: &[u64],
    max_memory: Option<u64>,
) -> Result<Plan, CliError> {
    Plan::with_limits(scenario, sets, &axes(grid)?, seeds, limits(max_memory))
}

/// Plans a sweep (validating every run) and returns its runs as (index, id, params, seed,
/// finished) tuples.
#[pyfunction]
#[pyo3(signature = (scenario, sets, grid, seeds, out, max_memory=None))]
#[allow(clippy::type_complexity)]
fn plan(
    py: Python<'_>,
    scenario: PathBuf,
    sets: Vec<(String, String)>,
    grid: Vec<(String, Vec<String>)>,
    seeds: Vec<u64>,
    out: PathBuf,
    max_memory: Option<u64>,
) -> PyResult<Vec<(usize, String, Vec<(String, String)>, u64, bool)>> {
    interruptible(py, move |_| {
        let plan = plan_of(&scenario, &sets, grid, &seeds, max_memory)?;
        Ok(plan
            .runs
            .into_iter()
            .map(|r| {
                let done = campaign::is_done(&out, &r.id);
                (r.index, r.id, r.params, r.seed, done)
            })
            .collect())
    })
}

/// Runs one planned run (on a Ray worker, say) into `out/runs/<id>/`; checks that the
/// scenario here gives the same id as where it was planned. Returns (summary.json text,
/// run.json text).
#[pyfunction]
#[pyo3(signature = (scenario, sets, params, seed, id, out, max_memory=None))]
#[allow(clippy::too_many_arguments)]
fn run_planned(
    py: Python<'_>,
    scenario: PathBuf,
    sets: Vec<(String, String)>,
    params: Vec<(String, String)>,
    seed: u64,
    id: String,
    out: PathBuf,
    max_memory: Option<u64>,
) -> PyResult<(String, String)> {
    interruptible(py, move |cancel| {
        let grid = params.iter().map(|(k, v)| (k.clone(), vec![v.clone()])).collect();
        let plan = plan_of(&scenario, &sets, grid, &[seed], max_memory)?;
        let run = &plan.runs[0];
        if run.id != id {
            return Err(CliError::Runtime(format!(
                "run {id}: this machine's scenario gives id {} (a different scenario file or Tandem version?)",
                run.id
            )));
        }
        campaign::prepare_out(&out)?;
        if !campaign::is_done(&out, &id) {
            campaign::run_one(&plan, run, &out, cancel)?;
        }
        let dir = campaign::run_dir(&out, &id);
        let read = |name: &str| {
            let p = dir.join(name);
            std::fs::read_to_string(&p).map_err(|e| CliError::runtime(&p, e))
        };
        Ok((read("summary.json")?, read("run.json")?))
    })
}

/// Runs a sweep on local threads and writes the campaign table; returns (ran, skipped,
/// other shards, failed runs as (id, message), table rows).
#[pyfunction]
#[pyo3(signature = (scenario, sets, grid, seeds, out, jobs, shard, max_memory=None))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn sweep_local(
    py: Python<'_>,
    scenario: PathBuf,
    sets: Vec<(String, String)>,
    grid: Vec<(String, Vec<String>)>,
    seeds: Vec<u64>,
    out: PathBuf,
    jobs: Option<usize>,
    shard: Option<(usize, usize)>,
    max_memory: Option<u64>,
) -> PyResult<(usize, usize, usize, Vec<(String, String)>, usize)> {
    let shard = shard
        .map(|(i, n)| Shard::parse(&format!("{i}/{n}")))
        .transpose()
        .map_err(|e| PyValueError::new_err(format!("shard: {e}")))?;
    if jobs == Some(0) {
        return Err(PyValueError::new_err("jobs: must be at least 1"));
    }
    interruptible(py, move |cancel| {
        let plan = plan_of(&scenario, &sets, grid, &seeds, max_memory)?;
        let jobs = jobs.unwrap_or_else(tandem_cli::sweep_cmd::default_jobs);
        let o = campaign::execute(&plan, &out, jobs, shard, cancel, &|_| {})?;
        if o.interrupted {
            return Err(CliError::Runtime("interrupted".into()));
        }
        let t = campaign::write_campaign(&plan, &out)?;
        Ok((o.ran, o.skipped, o.other_shards, o.failed, t.rows()))
    })
}

/// Writes campaign.parquet and campaign.csv from the finished runs of a plan; returns rows.
#[pyfunction]
#[pyo3(signature = (scenario, sets, grid, seeds, out, max_memory=None))]
fn write_campaign(
    py: Python<'_>,
    scenario: PathBuf,
    sets: Vec<(String, String)>,
    grid: Vec<(String, Vec<String>)>,
    seeds: Vec<u64>,
    out: PathBuf,
    max_memory: Option<u64>,
) -> PyResult<usize> {
    interruptible(py, move |_| {
        let plan = plan_of(&scenario, &sets, grid, &seeds, max_memory)?;
        campaign::prepare_out(&out)?;
        Ok(campaign::write_campaign(&plan, &out)?.rows())
    })
}

/// Parses a duration such as `60s` or `1.5ms` into nanoseconds, as the CLI does.
#[pyfunction]
fn parse_duration_ns(text: &str) -> PyResult<u64> {
    tandem_cli::units::parse_duration_ns(text).map_err(PyValueError::new_err)
}

/// Parses a seed list as `--seeds` does: `A..B` (both included), `A,B,C` or one seed.
#[pyfunction]
fn parse_seeds(text: &str) -> PyResult<Vec<u64>> {
    campaign::parse_seeds(text).map_err(|e| PyValueError::new_err(format!("seeds: {e}")))
}

/// Parses a size as scenario files and `--max-memory` do (`8GiB`, `1500`, `64KB`) into bytes.
#[pyfunction]
fn parse_size(text: &str) -> PyResult<u64> {
    tandem_sim::units::parse_size(text).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The version of the Rust library inside (the CLI's `tandem --version`).
#[pyfunction]
fn version() -> &'static str {
    campaign::VERSION
}

/// Tandem's engine, compiled from Rust; use the `tandem` package rather than this module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_flows, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(experiments, m)?)?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(run_planned, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_local, m)?)?;
    m.add_function(wrap_pyfunction!(write_campaign, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration_ns, m)?)?;
    m.add_function(wrap_pyfunction!(parse_seeds, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
