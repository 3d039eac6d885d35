//! What a shard runs: an application and a backend behind one object-safe trait, so that the
//! server does not depend on which app or backend was chosen.

use std::fmt;
use std::str::FromStr;
use tandem_controller::{
    App, Backend, CpuBackend, CpuParallelBackend, EncodedReplies, Event, L2Config, L2Switch, Reply, ScalarBackend,
};
use tandem_coswitch::openflow::{CoSwitchApp, CoSwitchAppConfig};
use tandem_tcpu::openflow::{TcpuApp, TcpuAppConfig};
use tandem_wire::openflow::{Message, Version};

/// One shard's application with its backend.
pub trait Engine: Send {
    /// A switch finished its handshake.
    fn connected(&mut self, now_ps: u64, dpid: u64, version: Version, out: &mut Vec<Reply>);
    /// A switch went away.
    fn disconnected(&mut self, now_ps: u64, dpid: u64, out: &mut Vec<Reply>);
    /// Runs a batch (sorted by size) through the backend, its replies encoded in place.
    fn process(&mut self, now_ps: u64, batch: &[Event], out: &mut EncodedReplies);
    /// Another message of a connected switch (flow_removed, stats replies, errors, ...).
    fn message(&mut self, now_ps: u64, dpid: u64, msg: &Message, out: &mut Vec<Reply>);
    /// When the app's next timer is due.
    fn poll_timeout(&self) -> Option<u64>;
    /// Runs the app's timer.
    fn timeout(&mut self, now_ps: u64, out: &mut Vec<Reply>);
    /// Periodic work of the live driver beside the app (writing the app's log out); called
    /// when the shard publishes the app's counters.
    fn housekeeping(&mut self) {}
    /// Appends the app's own counters as `(name, value)` rows for the metrics endpoint (names
    /// in the Prometheus form, labels included); false when the app has no counters of its own
    /// (the default), so that the shard is not woken to publish them.
    fn metrics(&self, rows: &mut Vec<(String, u64)>) -> bool {
        let _ = rows;
        false
    }
}

/// Makes the engine of shard `i` (an error message when it cannot).
pub type EngineFactory = Box<dyn FnMut(usize) -> Result<Box<dyn Engine>, String> + Send>;

/// What a live driver adds around an app: its own counters on the metrics endpoint, and work
/// beside the app (writing its log out). The defaults add nothing.
trait Hooks<A>: Send {
    /// A switch connected (after the app saw it).
    fn connected(&mut self, _app: &A, _now_ps: u64, _dpid: u64) {}
    /// Periodic work, and before a switch's state is dropped (a disconnect) or the engine is.
    fn housekeeping(&mut self, _app: &mut A) {}
    /// The app's counters as metric rows; false when there are none.
    fn metrics(&self, _app: &A, _rows: &mut Vec<(String, u64)>) -> bool {
        false
    }
}

/// No hooks (the L2 switch).
struct NoHooks;

impl<A> Hooks<A> for NoHooks {}

/// An app, a backend that can run it, and the driver's hooks.
struct AppEngine<A, B, H: Hooks<A> = NoHooks> {
    app: A,
    backend: B,
    hooks: H,
}

impl<A: App + Send, B: Backend<A, EncodedReplies> + Send, H: Hooks<A>> Engine for AppEngine<A, B, H> {
    fn connected(&mut self, now_ps: u64, dpid: u64, version: Version, out: &mut Vec<Reply>) {
        self.app.on_switch_connected(now_ps, dpid, version, out);
        self.hooks.connected(&self.app, now_ps, dpid);
    }
    fn disconnected(&mut self, now_ps: u64, dpid: u64, out: &mut Vec<Reply>) {
        // What the hooks take from the switch's state goes before the state does.
        self.hooks.housekeeping(&mut self.app);
        self.app.on_switch_disconnected(now_ps, dpid, out);
    }
    fn process(&mut self, now_ps: u64, batch: &[Event], out: &mut EncodedReplies) {
        self.backend.process(now_ps, batch, &mut self.app, out);
    }
    fn message(&mut self, now_ps: u64, dpid: u64, msg: &Message, out: &mut Vec<Reply>) {
        self.app.on_message(now_ps, dpid, msg, out);
    }
    fn poll_timeout(&self) -> Option<u64> {
        self.app.poll_timeout()
    }
    fn timeout(&mut self, now_ps: u64, out: &mut Vec<Reply>) {
        self.app.on_timeout(now_ps, out);
    }
    fn housekeeping(&mut self) {
        self.hooks.housekeeping(&mut self.app);
    }
    fn metrics(&self, rows: &mut Vec<(String, u64)>) -> bool {
        self.hooks.metrics(&self.app, rows)
    }
}

impl<A, B, H: Hooks<A>> Drop for AppEngine<A, B, H> {
    /// The server is stopping: what the hooks still hold goes out.
    fn drop(&mut self) {
        self.hooks.housekeeping(&mut self.app);
    }
}

/// The backends of `tandem controller --backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    /// One event at a time (the baseline).
    Scalar,
    /// Batched phases on the CPU.
    Cpu,
    /// Batched phases with resolve and replies spread over every core (batches of at least
    /// 8,192 events per thread; smaller ones stay on one).
    CpuParallel,
    /// The CUDA kernel (needs the `cuda` feature and an NVIDIA driver).
    Cuda,
}

impl FromStr for BackendChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<BackendChoice, String> {
        match s {
            "scalar" => Ok(BackendChoice::Scalar),
            "cpu" => Ok(BackendChoice::Cpu),
            "cpu-parallel" => Ok(BackendChoice::CpuParallel),
            "cuda" => Ok(BackendChoice::Cuda),
            _ => Err(format!(
                "unknown backend {s:?} (expected scalar, cpu, cpu-parallel or cuda)"
            )),
        }
    }
}

impl fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendChoice::Scalar => "scalar",
            BackendChoice::Cpu => "cpu",
            BackendChoice::CpuParallel => "cpu-parallel",
            BackendChoice::Cuda => "cuda",
        })
    }
}

/// The applications of `tandem controller --app`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppChoice {
    /// The GPU-controller paper's L2 learning switch.
    L2,
    /// TCPU managing an OpenFlow 1.3 switch as its ASIC (`tandem_tcpu::openflow`).
    Tcpu,
    /// CoSwitch: servers' vswitches and a small-table ToR (`tandem_coswitch::openflow`).
    CoSwitch,
}

impl FromStr for AppChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<AppChoice, String> {
        match s {
            "l2" => Ok(AppChoice::L2),
            "tcpu" => Ok(AppChoice::Tcpu),
            "coswitch" => Ok(AppChoice::CoSwitch),
            _ => Err(format!("unknown app {s:?} (expected l2, tcpu or coswitch)")),
        }
    }
}

impl fmt::Display for AppChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AppChoice::L2 => "l2",
            AppChoice::Tcpu => "tcpu",
            AppChoice::CoSwitch => "coswitch",
        })
    }
}

/// The TCPU app's hooks: its counters, and the file its core's log goes to.
struct TcpuHooks {
    log: Option<LogFile>,
}

/// An app's log file, opened for appending at the first write.
struct LogFile {
    path: std::path::PathBuf,
    file: Option<std::fs::File>,
    pending: String,
    failed: bool,
}

impl LogFile {
    fn new(path: std::path::PathBuf) -> LogFile {
        LogFile {
            path,
            file: None,
            pending: String::new(),
            failed: false,
        }
    }

    /// Queues one line for the next write.
    fn line(&mut self, line: &str) {
        self.pending.push_str(line);
        self.pending.push('\n');
    }

    fn write(&mut self) {
        if self.pending.is_empty() || self.failed {
            self.pending.clear();
            return;
        }
        use std::io::Write as _;
        if self.file.is_none() {
            match std::fs::OpenOptions::new().create(true).append(true).open(&self.path) {
                Ok(f) => self.file = Some(f),
                Err(e) => {
                    tracing::warn!("{}: {e}; the app's log is not written", self.path.display());
                    self.failed = true;
                }
            }
        }
        if let Some(f) = &mut self.file {
            if let Err(e) = f.write_all(self.pending.as_bytes()) {
                tracing::warn!("{}: {e}; the app's log is not written", self.path.display());
                self.failed = true;
            }
        }
        self.pending.clear();
    }
}

impl Hooks<TcpuApp> for TcpuHooks {
    fn connected(&mut self, app: &TcpuApp, now_ps: u64, dpid: u64) {
        if let Some(log) = &mut self.log {
            if app.switches().contains(&dpid) {
                log.line(&tandem_tcpu::openflow::connect_line(dpid, now_ps));
            }
        }
    }
    fn housekeeping(&mut self, app: &mut TcpuApp) {
        let Some(log) = &mut self.log else { return };
        for dpid in app.switches() {
            for step in app.take_log(dpid) {
                log.line(&step.to_line(dpid));
            }
        }
        log.write();
    }
    fn metrics(&self, app: &TcpuApp, rows: &mut Vec<(String, u64)>) -> bool {
        let capacity = u64::from(app.config().tcpu.asic_flow_entries);
        for dpid in app.switches() {
            let (Some(c), Some(core)) = (app.counters(dpid), app.core(dpid)) else {
                continue;
            };
            let s = core.stats();
            let label = format!("{{dpid=\"{dpid:016x}\"}}");
            for (name, v) in [
                ("table_entries", c.table_entries),
                ("table_capacity", capacity),
                ("offloaded_flows", c.offloaded_flows),
                ("software_packets", c.software_packets),
                ("other_packets", c.other_packets),
                ("untracked_packets", c.untracked_packets),
                ("held_full_drops", c.held_full_drops),
                ("core_drops", c.core_drops),
                ("swaps", s.rank_swaps + s.inactive_swaps),
                ("rank_swaps", s.rank_swaps),
                ("inactive_swaps", s.inactive_swaps),
                ("missed_counter_reads", s.missed_counter_reads),
                ("rankings", s.rankings),
                ("deep_buffer_peak_bytes", core.peak_dram()),
                ("counter_reads", c.counter_reads),
                ("op_failures", c.op_failures),
                ("attackers", c.attackers),
                ("long_pins", s.long_pins),
                ("cpu_bytes", s.cpu_bytes),
                ("asic_bytes", s.asic_bytes),
            ] {
                rows.push((format!("tcpu_{name}{label}"), v));
            }
        }
        true
    }
}

/// Engines running the TCPU app with `cfg`, one per shard (its configuration is checked here).
pub fn tcpu_engine(cfg: TcpuAppConfig) -> Result<EngineFactory, String> {
    TcpuApp::new(cfg.clone())?;
    Ok(Box::new(move |_shard| -> Result<Box<dyn Engine>, String> {
        Ok(Box::new(AppEngine {
            app: TcpuApp::new(cfg.clone())?,
            backend: ScalarBackend,
            hooks: TcpuHooks {
                log: cfg.app.log_file.clone().map(LogFile::new),
            },
        }))
    }))
}

/// The CoSwitch app's hooks: its counters, and the file its cores' log goes to.
struct CoSwitchHooks {
    log: Option<LogFile>,
}

impl Hooks<CoSwitchApp> for CoSwitchHooks {
    fn housekeeping(&mut self, app: &mut CoSwitchApp) {
        let Some(log) = &mut self.log else { return };
        for line in app.take_log() {
            log.line(&line);
        }
        log.write();
    }
    fn metrics(&self, app: &CoSwitchApp, rows: &mut Vec<(String, u64)>) -> bool {
        let c = app.counters();
        let cfg = app.config();
        let tor = format!("{{dpid=\"{:016x}\"}}", cfg.tor_dpid);
        for (name, v) in [
            ("table_entries", c.tor_entries),
            ("table_capacity", u64::from(cfg.tor_capacity)),
            ("offloaded_flows", c.offloaded_flows),
            ("software_packets", c.software_packets),
            ("threshold_packets", c.threshold),
            ("marked_flows", c.marked_flows),
            ("tor_full", c.tor_full),
            ("vswitch_flows", c.flows),
            ("reports", c.reports),
            ("threshold_moves", c.threshold_moves),
            ("counter_reads", c.counter_reads),
            ("refused", c.refused),
        ] {
            rows.push((format!("coswitch_{name}{tor}"), v));
        }
        for (dpid, packets) in app.vswitches() {
            rows.push((format!("coswitch_vswitch_packets{{dpid=\"{dpid:016x}\"}}"), packets));
        }
        true
    }
}

/// Engines running the CoSwitch app with `cfg`: one shard only, since the app must see every
/// vswitch and the ToR to close its loop.
pub fn coswitch_engine(cfg: CoSwitchAppConfig) -> Result<EngineFactory, String> {
    CoSwitchApp::new(cfg.clone())?;
    Ok(Box::new(move |shard| -> Result<Box<dyn Engine>, String> {
        if shard > 0 {
            return Err("the coswitch app runs on one shard (--shards 1): it must see every switch".into());
        }
        Ok(Box::new(AppEngine {
            app: CoSwitchApp::new(cfg.clone())?,
            backend: ScalarBackend,
            hooks: CoSwitchHooks {
                log: cfg.log_file.clone().map(LogFile::new),
            },
        }))
    }))
}

/// Engines running the paper's L2 learning switch on `backend`, one per shard.
pub fn l2_engine(backend: BackendChoice, cfg: L2Config) -> EngineFactory {
    Box::new(move |_shard| -> Result<Box<dyn Engine>, String> {
        let app = L2Switch::new(cfg);
        match backend {
            BackendChoice::Scalar => Ok(Box::new(AppEngine {
                app,
                backend: ScalarBackend,
                hooks: NoHooks,
            })),
            BackendChoice::Cpu => Ok(Box::new(AppEngine {
                app,
                backend: CpuBackend::new(),
                hooks: NoHooks,
            })),
            BackendChoice::CpuParallel => Ok(Box::new(AppEngine {
                app,
                backend: CpuParallelBackend::new(std::thread::available_parallelism().map_or(1, |n| n.get())),
                hooks: NoHooks,
            })),
            BackendChoice::Cuda => cuda_engine(app),
        }
    })
}

#[cfg(feature = "cuda")]
fn cuda_engine(app: L2Switch) -> Result<Box<dyn Engine>, String> {
    let backend = tandem_controller::CudaBackend::new(0).map_err(|e| e.to_string())?;
    Ok(Box::new(AppEngine {
        app,
        backend,
        hooks: NoHooks,
    }))
}

#[cfg(not(feature = "cuda"))]
fn cuda_engine(_app: L2Switch) -> Result<Box<dyn Engine>, String> {
    Err("this build has no CUDA backend: rebuild with `cargo build --release --features cuda` (needs an NVIDIA driver at run time), or use --backend cpu".into())
}
