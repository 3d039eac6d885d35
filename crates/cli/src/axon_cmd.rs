//! `tandem axon run` (one live Axon device) and `tandem lab up|down` (a network of them with
//! real Linux hosts in namespaces): thin wrappers over `tandem-live`.

use crate::error::CliError;
use clap::Subcommand;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tandem_live::axon::{self, AxonProcessConfig};
use tandem_live::lab::coswitch::{self, is_coswitch_lab, CoSwitchLabSpec};
use tandem_live::lab::tcpu::{self, is_tcpu_lab, TcpuLabSpec};
use tandem_live::lab::{self, LabSpec};

/// Subcommands of `tandem axon`.
#[derive(Subcommand, Debug)]
pub enum AxonCommand {
    /// Run one Axon device on real interfaces (AF_PACKET; needs root or CAP_NET_RAW) until
    /// Ctrl-C or SIGTERM.
    Run {
        /// The device's configuration (TOML; see docs/systems/axon.md).
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// Log level (error, warn, info, debug), or a tracing filter.
        #[arg(long, default_value = "info", value_name = "FILTER")]
        log: String,
    },
}

/// Subcommands of `tandem lab`.
#[derive(Subcommand, Debug)]
pub enum LabCommand {
    /// Build the lab and return once every host is reachable: an Axon lab (namespaces, veths,
    /// Axon processes; every host leased an address) or a TCPU lab (`kind = "tcpu"`: hosts on
    /// an Open vSwitch bridge managed by `tandem controller --app tcpu`).
    Up {
        /// The lab file (see labs/).
        lab: PathBuf,
        /// Where configs, logs and PID files go [default: $TMPDIR/tandem-lab-PREFIX].
        #[arg(long, value_name = "DIR")]
        state: Option<PathBuf>,
    },
    /// Remove everything `up` made.
    Down {
        /// The lab file.
        lab: PathBuf,
        /// The state directory given to `up`.
        #[arg(long, value_name = "DIR")]
        state: Option<PathBuf>,
    },
    /// Replay a TCPU or CoSwitch lab's controller log (every input its cores got) through
    /// fresh cores with the lab's parameters: the same decisions, step for step, or the first
    /// that differs (exit 1).
    Replay {
        /// The lab file.
        lab: PathBuf,
        /// The state directory given to `up`.
        #[arg(long, value_name = "DIR")]
        state: Option<PathBuf>,
    },
    /// Print a running TCPU or CoSwitch lab's elements (the switches with their tables and
    /// counters, the controller, the hosts).
    Status {
        /// The lab file.
        lab: PathBuf,
        /// The state directory given to `up`.
        #[arg(long, value_name = "DIR")]
        state: Option<PathBuf>,
        /// One JSON object per element and line (otherwise the same, as plain text).
        #[arg(long)]
        json: bool,
    },
}

fn init_log(filter: &str) -> Result<(), CliError> {
    let f = tracing_subscriber::EnvFilter::try_new(filter)
        .map_err(|e| CliError::Input(format!("--log {filter:?}: {e}")))?;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(f)
        .with_writer(std::io::stderr)
        // Colours only for a terminal: a log file gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    Ok(())
}

/// Sets the returned flag on Ctrl-C or SIGTERM.
fn stop_on_signal() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
            return;
        };
        rt.block_on(async {
            let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) else {
                return;
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        });
        flag.store(true, Ordering::Relaxed);
    });
    stop
}

/// Runs `tandem axon ...`.
pub fn axon(cmd: AxonCommand) -> Result<(), CliError> {
    match cmd {
        AxonCommand::Run { config, log } => {
            init_log(&log)?;
            let cfg = AxonProcessConfig::load(&config).map_err(|e| CliError::Input(e.to_string()))?;
            axon::run(&cfg, stop_on_signal()).map_err(|e| CliError::input(&config, e))
        }
    }
}

fn load(lab: &Path, state: Option<PathBuf>) -> Result<(LabSpec, PathBuf), CliError> {
    let spec = LabSpec::load(lab).map_err(CliError::Input)?;
    let state = state.unwrap_or_else(|| lab::default_state(&spec));
    Ok((spec, state))
}

/// Runs `tandem lab ...` for a CoSwitch lab.
fn coswitch_lab_cmd(file: &Path, cmd: LabCommand) -> Result<(), CliError> {
    let spec = CoSwitchLabSpec::load(file).map_err(CliError::Input)?;
    match cmd {
        LabCommand::Up { state, .. } => {
            let state = state.unwrap_or_else(|| spec.default_state());
            let exe = std::env::current_exe().map_err(|e| CliError::Runtime(e.to_string()))?;
            let lab = coswitch::up(&spec, &state, &exe).map_err(|e| CliError::runtime(file, e))?;
            for h in 1..=spec.hosts() {
                outln!("{}\t{}", spec.host_ns(h), spec.host_ip(h));
            }
            eprintln!(
                "lab {} is up (CoSwitch: {} servers of {} hosts, ToR {} with {} elephant entries; state in {}); `tandem lab status {} --json` to watch it",
                spec.prefix,
                spec.servers,
                spec.hosts_per_server,
                spec.tor(),
                spec.app.tor_capacity,
                lab.state.display(),
                file.display()
            );
            Ok(())
        }
        LabCommand::Down { state, .. } => {
            let state = state.unwrap_or_else(|| spec.default_state());
            coswitch::down(&spec, &state);
            left_note(&state);
            Ok(())
        }
        LabCommand::Status { state, json, .. } => {
            let state = state.unwrap_or_else(|| spec.default_state());
            let lab = coswitch::attach(&spec, &state).map_err(|e| CliError::runtime(file, e))?;
            let exe = std::env::current_exe().map_err(|e| CliError::Runtime(e.to_string()))?;
            print_status(
                coswitch::status(&lab, &exe).map_err(|e| CliError::runtime(file, e))?,
                json,
            );
            Ok(())
        }
        LabCommand::Replay { state, .. } => {
            let state = state.unwrap_or_else(|| spec.default_state());
            let lab = coswitch::attach(&spec, &state).map_err(|e| CliError::runtime(file, e))?;
            let n = lab.replay().map_err(CliError::Runtime)?;
            outln!("replayed {n} steps of the live run through fresh cores: every answer the same");
            Ok(())
        }
    }
}

/// After `down`: says so when the state folder was left because a lab did not make it.
fn left_note(state: &Path) {
    if state.exists() {
        eprintln!(
            "left {}: not made by `tandem lab up` (no {}), so not deleted",
            state.display(),
            lab::STATE_MARK
        );
    }
}

/// Prints a lab's status lines: JSON as they are, or `key=value` pairs (the objects are flat,
/// their strings free of commas).
fn print_status(lines: Vec<String>, json: bool) {
    for line in lines {
        if json {
            outln!("{line}");
        } else {
            let pairs: Vec<String> = line
                .trim_matches(|c| c == '{' || c == '}')
                .split(',')
                .map(|kv| kv.replacen(':', "=", 1).replace('"', ""))
                .collect();
            outln!("{}", pairs.join("  "));
        }
    }
}

/// Runs `tandem lab ...` for a TCPU lab.
fn tcpu_lab_cmd(file: &Path, cmd: LabCommand) -> Result<(), CliError> {
    let spec = TcpuLabSpec::load(file).map_err(CliError::Input)?;
    match cmd {
        LabCommand::Up { state, .. } => {
            let state = state.unwrap_or_else(|| spec.default_state());
            let exe = std::env::current_exe().map_err(|e| CliError::Runtime(e.to_string()))?;
            let lab = tcpu::up(&spec, &state, &exe).map_err(|e| CliError::runtime(file, e))?;
            for h in 1..=spec.hosts {
                outln!("{}\t{}", spec.host_ns(h), spec.host_ip(h));
            }
            eprintln!(
                "lab {} is up (TCPU on bridge {}, {} hosts, table of {} flow entries; state in {}); `tandem lab status {} --json` to watch it",
                spec.prefix,
                spec.bridge(),
                spec.hosts,
                spec.app.tcpu.asic_flow_entries,
                lab.state.display(),
                file.display()
            );
            Ok(())
        }
        LabCommand::Down { state, .. } => {
            let state = state.unwrap_or_else(|| spec.default_state());
            tcpu::down(&spec, &state);
            left_note(&state);
            Ok(())
        }
        LabCommand::Replay { state, .. } => {
            let state = state.unwrap_or_else(|| spec.default_state());
            let lab = tcpu::attach(&spec, &state).map_err(|e| CliError::runtime(file, e))?;
            let n = lab.replay().map_err(CliError::Runtime)?;
            outln!("replayed {n} steps of the live run through a fresh core: every action the same");
            Ok(())
        }
        LabCommand::Status { state, json, .. } => {
            let state = state.unwrap_or_else(|| spec.default_state());
            let lab = tcpu::attach(&spec, &state).map_err(|e| CliError::runtime(file, e))?;
            let exe = std::env::current_exe().map_err(|e| CliError::Runtime(e.to_string()))?;
            print_status(tcpu::status(&lab, &exe).map_err(|e| CliError::runtime(file, e))?, json);
            Ok(())
        }
    }
}

/// Runs `tandem lab ...`.
pub fn lab(cmd: LabCommand) -> Result<(), CliError> {
    let file = match &cmd {
        LabCommand::Up { lab, .. }
        | LabCommand::Down { lab, .. }
        | LabCommand::Status { lab, .. }
        | LabCommand::Replay { lab, .. } => lab.clone(),
    };
    // A file that cannot be read is left to the Axon loader, which names the problem.
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    if is_tcpu_lab(&text) {
        return tcpu_lab_cmd(&file, cmd);
    }
    if is_coswitch_lab(&text) {
        return coswitch_lab_cmd(&file, cmd);
    }
    match cmd {
        LabCommand::Replay { .. } => Err(CliError::Input(format!(
            "{}: `lab replay` replays TCPU and CoSwitch labs (kind = \"tcpu\" or \"coswitch\")",
            file.display()
        ))),
        LabCommand::Status { .. } => Err(CliError::Input(format!(
            "{}: `lab status` reports TCPU and CoSwitch labs (kind = \"tcpu\" or \"coswitch\"); an Axon lab's hosts are listed by `lab up`",
            file.display()
        ))),
        LabCommand::Up { lab: file, state } => {
            let (spec, state) = load(&file, state)?;
            let exe = std::env::current_exe().map_err(|e| CliError::Runtime(e.to_string()))?;
            let lab = lab::up(&spec, &state, &exe, Duration::from_secs(30)).map_err(|e| CliError::runtime(&file, e))?;
            for (i, ip) in lab.host_ips.iter().enumerate() {
                outln!("{}\t{ip}", spec.host_ns(i + 1));
            }
            eprintln!(
                "lab {} is up ({} Axons, {} hosts; state in {}); `ip netns exec {} ping {}` to try it",
                spec.prefix,
                spec.axons,
                spec.hosts.len(),
                state.display(),
                spec.host_ns(1),
                lab.host_ips.last().map(|a| a.to_string()).unwrap_or_default()
            );
            Ok(())
        }
        LabCommand::Down { lab: file, state } => {
            let (spec, state) = load(&file, state)?;
            lab::down(&spec, &state);
            left_note(&state);
            Ok(())
        }
    }
}
