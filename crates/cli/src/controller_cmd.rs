//! `tandem controller` (the OpenFlow controller server), `tandem controller stats` and
//! `tandem ofbench` (the cbench-compatible load generator): thin wrappers over `tandem-live`.

use crate::error::CliError;
use crate::units;
use clap::{Args, Subcommand};
use std::net::SocketAddr;
use std::time::Duration;
use tandem_controller::L2Config;
use tandem_live::controller::{
    self, l2_engine, tcpu_engine, AppChoice, BackendChoice, ControllerConfig, Server, Stats,
};
use tandem_live::ofbench::{self, FrameSize, Mode, OfBenchConfig};
use tandem_wire::openflow::Version;

/// Arguments of `tandem controller`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ControllerArgs {
    // A doc comment here would become clap help text; the subcommands document themselves.
    #[allow(missing_docs)]
    #[command(subcommand)]
    pub command: Option<ControllerCommand>,
    /// Address to accept switches on; repeat it to listen on several (e.g. add
    /// 0.0.0.0:6633 for switches configured with the pre-IANA port).
    #[arg(long, default_value = "0.0.0.0:6653", value_name = "ADDR:PORT", value_parser = units::parse_socket_addr)]
    pub listen: Vec<SocketAddr>,
    /// Application: l2 (the GPU-controller paper's learning switch), tcpu (TCPU managing each
    /// OpenFlow 1.3 switch as its ASIC; docs/systems/tcpu.md) or coswitch (CoSwitch's
    /// Flow-Arbiter and Flow-Prediction on servers' vswitches and a ToR; docs/systems/coswitch.md).
    #[arg(long, default_value = "l2", value_name = "APP")]
    pub app: AppChoice,
    /// The app's settings (TOML; for tcpu a `[tcpu]` table with the core's parameters and an
    /// `[app]` table with the app's limits; for coswitch a `[coswitch]` table). Without it the
    /// app's defaults.
    #[arg(long, value_name = "FILE")]
    pub app_config: Option<std::path::PathBuf>,
    /// Backend that runs the batches: scalar (one event at a time), cpu (batched phases),
    /// cpu-parallel (the batched phases on every core for batches of 8,192+ events a thread),
    /// cuda (needs a build with `--features cuda` and an NVIDIA driver). The tcpu app always
    /// runs one event at a time.
    #[arg(long, default_value = "cpu")]
    pub backend: BackendChoice,
    /// Events handed to the backend at most at once.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub batch: usize,
    /// Longest an event waits for its batch to fill. 0 (the default) hands out whatever has
    /// arrived as soon as the backend is free: batches grow with the load by themselves. A
    /// longer deadline builds bigger batches at low load at the cost of that much latency.
    #[arg(long, default_value = "0s", value_parser = units::parse_duration_ns, value_name = "DURATION")]
    pub deadline: u64,
    /// Events a shard's pool holds before it sheds the oldest.
    #[arg(long, default_value_t = 65_536, value_name = "N")]
    pub capacity: usize,
    /// Shards (each a pool, a learning switch and a backend; datapaths are spread over them).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub shards: usize,
    /// Runtime worker threads.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub threads: usize,
    /// Serve the counters (Prometheus text) over HTTP on this address.
    #[arg(long, value_name = "ADDR:PORT", value_parser = units::parse_socket_addr)]
    pub metrics: Option<SocketAddr>,
    /// Idle timeout of the flows the learning switch installs (whole seconds: `60s`, `2min`;
    /// `0` for none).
    #[arg(long, default_value = "60s", value_name = "DURATION", value_parser = units::parse_duration_secs)]
    pub idle_timeout: u16,
    /// Log level (error, warn, info, debug, trace), or a tracing filter.
    #[arg(long, default_value = "info", value_name = "FILTER")]
    pub log: String,
    /// Serve switches over TLS with this certificate (PEM; with --tls-key and --tls-ca). Open
    /// vSwitch connects with `set-controller BR ssl:HOST:PORT` after `set-ssl KEY CERT CACERT`.
    #[arg(long, value_name = "FILE", requires_all = ["tls_key", "tls_ca"])]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE", requires_all = ["tls_cert", "tls_ca"])]
    pub tls_key: Option<std::path::PathBuf>,
    /// Accept only switches whose client certificate this CA (PEM) signed.
    #[arg(long, value_name = "FILE", requires_all = ["tls_cert", "tls_key"])]
    pub tls_ca: Option<std::path::PathBuf>,
}

/// Subcommands of `tandem controller`.
#[derive(Subcommand, Debug)]
pub enum ControllerCommand {
    /// Print a running controller's counters (from its --metrics endpoint).
    Stats {
        /// The controller's metrics address.
        #[arg(long, default_value = "127.0.0.1:9653", value_name = "ADDR:PORT", value_parser = units::parse_socket_addr)]
        metrics: SocketAddr,
    },
}

/// Runs `tandem controller` (until Ctrl-C) or its `stats` subcommand.
pub fn controller(a: ControllerArgs) -> Result<(), CliError> {
    if let Some(ControllerCommand::Stats { metrics }) = a.command {
        let rows = controller::fetch_stats(metrics, Duration::from_secs(3))
            .map_err(|e| CliError::Runtime(format!("cannot read the controller's counters at {metrics}: {e}")))?;
        let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (name, v) in rows {
            outln!("{name:<width$}  {v}");
        }
        return Ok(());
    }
    let filter = tracing_subscriber::EnvFilter::try_new(&a.log)
        .map_err(|e| CliError::Input(format!("--log {:?}: {e}", a.log)))?;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colours only for a terminal: a log file gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let cfg = ControllerConfig {
        listen: a.listen,
        metrics: a.metrics,
        pool: tandem_controller::PoolConfig {
            batch: a.batch,
            deadline_ps: a.deadline.saturating_mul(1000),
            capacity: a.capacity,
        },
        shards: a.shards,
        threads: a.threads,
        tls: match (a.tls_cert, a.tls_key, a.tls_ca) {
            (Some(cert), Some(key), Some(ca)) => Some(controller::TlsFiles { cert, key, ca }),
            _ => None,
        },
        ..ControllerConfig::default()
    };
    let l2 = L2Config {
        idle_timeout_s: a.idle_timeout,
        ..L2Config::default()
    };
    let engines = match a.app {
        AppChoice::L2 => {
            if let Some(f) = &a.app_config {
                return Err(CliError::Input(format!(
                    "{}: the l2 app takes no configuration file (its settings are flags)",
                    f.display()
                )));
            }
            l2_engine(a.backend, l2)
        }
        AppChoice::CoSwitch => {
            let cfg = match &a.app_config {
                Some(f) => tandem_coswitch::openflow::CoSwitchAppConfig::load(f).map_err(CliError::Input)?,
                None => tandem_coswitch::openflow::CoSwitchAppConfig::default(),
            };
            if a.shards != 1 {
                return Err(CliError::Input(
                    "--shards: the coswitch app runs on one shard (it must see every switch)".into(),
                ));
            }
            controller::coswitch_engine(cfg).map_err(CliError::Input)?
        }
        AppChoice::Tcpu => {
            let cfg = match &a.app_config {
                Some(f) => tandem_tcpu::openflow::TcpuAppConfig::load(f).map_err(CliError::Input)?,
                None => tandem_tcpu::openflow::TcpuAppConfig::default(),
            };
            tcpu_engine(cfg).map_err(CliError::Input)?
        }
    };
    let app = a.app;
    // The tcpu app feeds its core one event at a time whatever --backend says.
    let backend = if app == AppChoice::Tcpu {
        BackendChoice::Scalar
    } else {
        a.backend
    };
    let rt = controller::runtime(cfg.threads).map_err(|e| CliError::Input(e.to_string()))?;
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stats = std::sync::Arc::new(Stats::default());
    rt.block_on(async move {
        let server = Server::bind(cfg, engines, stats, stop_rx)
            .await
            .map_err(|e| CliError::Input(e.to_string()))?;
        let addrs: Vec<String> = server.addrs().iter().map(|a| a.to_string()).collect();
        tracing::info!(
            "listening on {} with the {app} app on the {backend} backend",
            addrs.join(", ")
        );
        // Ctrl-C or SIGTERM (systemd, `kill`, a container stop): a clean shutdown, exit 0.
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(|e| CliError::Runtime(format!("cannot watch SIGTERM: {e}")))?;
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            tracing::info!("shutting down");
            let _ = stop_tx.send(true);
        });
        server.serve().await;
        Ok(())
    })
}

/// Arguments of `tandem ofbench`.
#[derive(Args, Debug)]
pub struct OfBenchArgs {
    /// The controller to test.
    #[arg(long, default_value = "127.0.0.1:6653", value_name = "ADDR:PORT", value_parser = units::parse_socket_addr)]
    pub controller: SocketAddr,
    /// Fake switches.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub switches: usize,
    /// Source MAC addresses per switch.
    #[arg(long, default_value_t = 100_000, value_name = "M")]
    pub macs: u32,
    /// Each switch sends as fast as TCP takes it (the default).
    #[arg(long, conflicts_with = "latency")]
    pub throughput: bool,
    /// Each switch keeps one packet_in outstanding.
    #[arg(long)]
    pub latency: bool,
    /// Test loops.
    #[arg(long, default_value_t = 16, value_name = "L")]
    pub loops: usize,
    /// Milliseconds per loop.
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub loop_ms: u64,
    /// Loops at the start left out of the RESULT line.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub warmup: usize,
    /// packet_in size as an OpenFlow 1.0 message: 62, 82 or mixed (the paper's sizes).
    #[arg(long, default_value = "62")]
    pub size: FrameSize,
    /// OpenFlow version the fake switches speak: 1.0 or 1.3.
    #[arg(long = "of", id = "of", default_value = "1.0", value_parser = parse_version, value_name = "1.0|1.3")]
    pub of_version: Version,
    /// Generator threads.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub threads: usize,
}

fn parse_version(s: &str) -> Result<Version, String> {
    match s {
        "1.0" => Ok(Version::V1_0),
        "1.3" => Ok(Version::V1_3),
        _ => Err(format!("unknown OpenFlow version {s:?} (expected 1.0 or 1.3)")),
    }
}

/// Runs `tandem ofbench`.
pub fn ofbench(a: OfBenchArgs) -> Result<(), CliError> {
    let cfg = OfBenchConfig {
        controller: a.controller,
        switches: a.switches,
        macs: a.macs,
        mode: if a.latency { Mode::Latency } else { Mode::Throughput },
        loops: a.loops,
        loop_ms: a.loop_ms,
        warmup: a.warmup,
        size: a.size,
        version: a.of_version,
        threads: a.threads,
        ..OfBenchConfig::default()
    };
    let mut out = std::io::stdout().lock();
    match ofbench::run(cfg, &mut out) {
        // A benchmark that saw no response at all measured nothing (the controller is gone,
        // or closed every connection): a failure, not a result of zero.
        Ok(sum) if sum.lost > 0 => Err(CliError::Runtime(format!(
            "{} of {} switches lost their connection to {} during the test: the numbers above do not measure the controller",
            sum.lost, a.switches, a.controller
        ))),
        Ok(sum) if sum.max <= 0.0 => Err(CliError::Runtime(format!(
            "no responses from {} in any loop ({} packet_in sent): the controller closed the connections or never answered",
            a.controller, sum.sent
        ))),
        Ok(_) => Ok(()),
        Err(e @ ofbench::OfBenchError::Config(_)) => Err(CliError::Input(e.to_string())),
        Err(e) => Err(CliError::Runtime(e.to_string())),
    }
}
