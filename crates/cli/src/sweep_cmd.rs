//! `tandem sweep`: a parameter grid x seeds over one scenario, on local cores, resumable and
//! shardable; see [`crate::campaign`] for the folder layout and the run ids.

use crate::campaign::{self, Axis, Plan, Shard};
use crate::error::CliError;
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Arguments of `tandem sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The scenario file (TOML).
    pub scenario: PathBuf,
    /// A swept key and its values, e.g. `--grid tcp.min_rto=1ms,10ms,200ms`; repeat it for a
    /// cross product. Any key `--set` takes; commas inside [..] or quotes do not split.
    #[arg(long = "grid", value_name = "KEY=V1,V2,...", value_parser = campaign::parse_axis)]
    pub grid: Vec<Axis>,
    /// Seeds of every grid point: `1..10` (1 to 10, both included), `1,5,9`, or one seed.
    #[arg(long, value_name = "A..B", value_parser = parse_seeds)]
    pub seeds: Seeds,
    /// A value every run shares, as for `sim run`.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = crate::sim_cmd::parse_set)]
    pub sets: Vec<(String, String)>,
    /// The campaign folder: runs/<id>/ per run, campaign.parquet and campaign.csv.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Runs at once [default: the cores available].
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Run only every N-th run, starting at run I (0 <= I < N), e.g. `--shard
    /// $SLURM_ARRAY_TASK_ID/16`; a last command without --shard gathers the table.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// The most memory one run may need, e.g. `8GiB`: a run whose estimate is above it fails
    /// the whole sweep before anything runs, and no more runs go at once than fit in it
    /// together [default: half of this machine's memory].
    #[arg(long, value_name = "SIZE", value_parser = crate::sim_cmd::parse_max_memory)]
    pub max_memory: Option<u64>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The seeds of a sweep (a newtype so that clap takes one `--seeds` value for the whole list).
#[derive(Debug, Clone)]
pub struct Seeds(pub Vec<u64>);

fn parse_seeds(s: &str) -> Result<Seeds, String> {
    campaign::parse_seeds(s).map(Seeds)
}

/// The cores this process may use.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `tandem sweep`.
pub fn sweep(args: &SweepArgs) -> Result<(), CliError> {
    if args.jobs == Some(0) {
        return Err(CliError::Input("--jobs: must be at least 1".into()));
    }
    let start = Instant::now();
    let limits = crate::sim_cmd::limits(args.max_memory);
    let plan = Plan::with_limits(&args.scenario, &args.sets, &args.grid, &args.seeds.0, limits)?;
    campaign::prepare_out(&args.out)?;
    let (todo, before) = campaign::pending(&plan, &args.out, args.shard);
    let points: usize = args.grid.iter().map(|a| a.values.len()).product();
    let jobs = args.jobs.unwrap_or_else(default_jobs);
    // Runs that would not fit in memory together do not go at once (campaign::execute).
    let jobs = jobs.min(plan.parallel_runs());
    outln!(
        "campaign   {} runs ({points} grid points x {} seeds){}",
        plan.runs.len(),
        args.seeds.0.len(),
        args.shard
            .map(|s| format!(
                ", shard {}/{}: {} runs",
                s.index,
                s.count,
                plan.runs.len() - before.other_shards
            ))
            .unwrap_or_default()
    );
    outln!(
        "resume     skipped {} finished runs; running {} on {} jobs",
        before.skipped,
        todo.len(),
        jobs.min(todo.len().max(1))
    );
    let bar = crate::sim_cmd::bar(
        args.quiet,
        todo.len() as u64,
        "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} runs ({eta}) {msg}",
    );
    let failed = std::sync::atomic::AtomicUsize::new(0);
    let tick = |t: &campaign::Tick| {
        if t.error.is_some() {
            failed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        bar.set_position(t.done as u64);
        let f = failed.load(std::sync::atomic::Ordering::Relaxed);
        if f > 0 {
            bar.set_message(format!("{f} failed"));
        }
    };
    let never = AtomicBool::new(false);
    let outcome = campaign::execute(&plan, &args.out, jobs, args.shard, &never, &tick)?;
    bar.finish_and_clear();
    let table = campaign::write_campaign(&plan, &args.out)?;
    outln!(
        "runs       ran {}, skipped {}, failed {} in {:.1} s",
        outcome.ran,
        outcome.skipped,
        outcome.failed.len(),
        start.elapsed().as_secs_f64()
    );
    outln!(
        "table      {} ({} of {} runs finished; also campaign.csv)",
        args.out.join("campaign.parquet").display(),
        table.rows(),
        plan.runs.len()
    );
    if let Some((id, msg)) = outcome.failed.first() {
        for (id, msg) in outcome.failed.iter().skip(1).take(9) {
            eprintln!("tandem: run {id} failed: {msg}");
        }
        return Err(CliError::Runtime(format!(
            "{} of {} runs failed (run {id}: {msg}); run the same command again to retry them",
            outcome.failed.len(),
            outcome.ran + outcome.failed.len()
        )));
    }
    Ok(())
}
