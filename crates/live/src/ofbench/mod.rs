//! `tandem ofbench`: a cbench-compatible OpenFlow controller benchmark.
//!
//! Like cbench, it fakes `switches` OpenFlow switches that connect to the controller, complete
//! the handshake, teach it one destination address each, then send packet_in messages for
//! `loops` periods of `loop_ms`, counting the controller's responses (a flow_mod ADD or
//! MODIFY_STRICT, or a packet_out that is not LLDP). Test packets of switch `s` come from `macs`
//! different source addresses on port 2 and go to the learnt destination on port 1, so a
//! learning switch answers each with a flow_mod.
//!
//! * throughput mode: each switch writes packet_ins as fast as TCP accepts them;
//! * latency mode: each switch has one packet_in outstanding and sends the next when the
//!   response naming its buffer id arrives.
//!
//! The output mimics cbench's: one line per loop with each switch's count, then
//! `RESULT: N switches L tests min/max/avg/stdev = a/b/c/d responses/s` over the loops after
//! the warm-up ones.

mod classify;
mod fakeswitch;

pub use classify::{classify, Response};

use fakeswitch::{Phase, SwitchCounters};
use std::fmt;
use std::io::Write;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tandem_wire::openflow::Version;
use tokio::sync::watch;

/// How the fake switches send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// As fast as TCP takes it.
    Throughput,
    /// One packet_in outstanding per switch.
    Latency,
}

/// packet_in sizes of the paper's Figures 4 and 6, as OpenFlow 1.0 messages (18 bytes of
/// headers plus a 44- or 64-byte frame; the same frames in OpenFlow 1.3 make larger messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameSize {
    /// 62-byte packet_in.
    B62,
    /// 82-byte packet_in.
    B82,
    /// Alternating 62 and 82.
    Mixed,
}

impl FromStr for FrameSize {
    type Err = String;
    fn from_str(s: &str) -> Result<FrameSize, String> {
        match s {
            "62" => Ok(FrameSize::B62),
            "82" => Ok(FrameSize::B82),
            "mixed" => Ok(FrameSize::Mixed),
            _ => Err(format!("unknown size {s:?} (expected 62, 82 or mixed)")),
        }
    }
}

impl fmt::Display for FrameSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FrameSize::B62 => "62",
            FrameSize::B82 => "82",
            FrameSize::Mixed => "mixed",
        })
    }
}

/// Settings of a run (the defaults are cbench's where it has one).
#[derive(Debug, Clone)]
pub struct OfBenchConfig {
    /// The controller to test.
    pub controller: SocketAddr,
    /// Fake switches (cbench default 16).
    pub switches: usize,
    /// Source addresses per switch (cbench default 100,000).
    pub macs: u32,
    /// Throughput or latency.
    pub mode: Mode,
    /// Test loops (cbench default 16).
    pub loops: usize,
    /// Milliseconds per loop (cbench default 1,000).
    pub loop_ms: u64,
    /// Loops at the start left out of the result (cbench default 1).
    pub warmup: usize,
    /// packet_in size.
    pub size: FrameSize,
    /// OpenFlow version the switches speak.
    pub version: Version,
    /// packet_ins a switch writes at once in throughput mode.
    pub burst: usize,
    /// How long to keep trying to connect, and to wait for every handshake.
    pub connect_timeout: Duration,
    /// Runtime threads of the generator (1 leaves the other cores to the controller).
    pub threads: usize,
}

impl Default for OfBenchConfig {
    fn default() -> OfBenchConfig {
        OfBenchConfig {
            controller: SocketAddr::from(([127, 0, 0, 1], 6653)),
            switches: 16,
            macs: 100_000,
            mode: Mode::Throughput,
            loops: 16,
            loop_ms: 1000,
            warmup: 1,
            size: FrameSize::B62,
            version: Version::V1_0,
            burst: 64,
            connect_timeout: Duration::from_secs(10),
            threads: 1,
        }
    }
}

/// The result over the loops after the warm-up.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Responses per second of each counted loop.
    pub per_loop: Vec<f64>,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Mean.
    pub avg: f64,
    /// Population standard deviation (as cbench computes it).
    pub stdev: f64,
    /// packet_ins sent over the whole run.
    pub sent: u64,
    /// Latency-mode waits that timed out over the whole run.
    pub timeouts: u64,
    /// Fake switches whose connection ended before the test did (the controller closed it or
    /// went away): with any, the numbers do not measure the controller.
    pub lost: usize,
}

impl Summary {
    fn new(per_loop: Vec<f64>, sent: u64, timeouts: u64) -> Summary {
        let n = per_loop.len().max(1) as f64;
        let avg = per_loop.iter().sum::<f64>() / n;
        let var = per_loop.iter().map(|x| (x - avg) * (x - avg)).sum::<f64>() / n;
        Summary {
            min: if per_loop.is_empty() {
                0.0
            } else {
                per_loop.iter().copied().fold(f64::INFINITY, f64::min)
            },
            max: per_loop.iter().copied().fold(0.0, f64::max),
            avg,
            stdev: var.sqrt(),
            per_loop,
            sent,
            timeouts,
            lost: 0,
        }
    }

    /// cbench's final line.
    pub fn result_line(&self, switches: usize) -> String {
        format!(
            "RESULT: {switches} switches {} tests min/max/avg/stdev = {:.2}/{:.2}/{:.2}/{:.2} responses/s",
            self.per_loop.len(),
            self.min,
            self.max,
            self.avg,
            self.stdev
        )
    }
}

/// Why a run failed.
#[derive(Debug)]
pub enum OfBenchError {
    /// Bad settings.
    Config(String),
    /// The runtime could not start.
    Runtime(std::io::Error),
    /// Switches could not connect or finish the handshake.
    Connect(String),
    /// Writing the report failed.
    Output(std::io::Error),
}

impl fmt::Display for OfBenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OfBenchError::Config(e) | OfBenchError::Connect(e) => f.write_str(e),
            OfBenchError::Runtime(e) => write!(f, "cannot start the runtime: {e}"),
            OfBenchError::Output(e) => write!(f, "cannot write the report: {e}"),
        }
    }
}

impl std::error::Error for OfBenchError {}

/// Runs the benchmark, writing cbench's report to `out`.
pub fn run(cfg: OfBenchConfig, out: &mut dyn Write) -> Result<Summary, OfBenchError> {
    if cfg.switches == 0 || cfg.loops == 0 || cfg.loop_ms == 0 || cfg.macs == 0 || cfg.burst == 0 {
        return Err(OfBenchError::Config(
            "switches, loops, loop-ms, macs and burst must be at least 1".into(),
        ));
    }
    if cfg.warmup >= cfg.loops {
        return Err(OfBenchError::Config(format!(
            "warm-up loops ({}) must be fewer than loops ({})",
            cfg.warmup, cfg.loops
        )));
    }
    if cfg.macs > 0x00ff_ffff {
        return Err(OfBenchError::Config("at most 16,777,215 MACs per switch".into()));
    }
    if cfg.switches > usize::from(u16::MAX) {
        return Err(OfBenchError::Config("at most 65,535 switches".into()));
    }
    let rt = crate::controller::runtime(cfg.threads).map_err(|e| OfBenchError::Config(e.to_string()))?;
    rt.block_on(run_async(Arc::new(cfg), out))
}

async fn run_async(cfg: Arc<OfBenchConfig>, out: &mut dyn Write) -> Result<Summary, OfBenchError> {
    let w = |out: &mut dyn Write, s: String| writeln!(out, "{s}").map_err(OfBenchError::Output);
    let mode = match cfg.mode {
        Mode::Throughput => "throughput",
        Mode::Latency => "latency",
    };
    let of = if cfg.version == Version::V1_0 { "1.0" } else { "1.3" };
    w(out, "ofbench: controller benchmarking tool (cbench-compatible)".into())?;
    w(out, format!("   running in mode '{mode}'"))?;
    w(out, format!("   connecting to controller at {}", cfg.controller))?;
    w(
        out,
        format!(
            "   faking {} switches :: {} tests each; {} ms per test",
            cfg.switches, cfg.loops, cfg.loop_ms
        ),
    )?;
    w(
        out,
        format!(
            "   with {} unique source MACs per switch, OpenFlow {of}, packet_in size {}",
            cfg.macs, cfg.size
        ),
    )?;
    w(out, "   learning destination mac addresses before the test".into())?;
    w(
        out,
        format!(
            "   ignoring first {} \"warmup\" and last 0 \"cooldown\" loops",
            cfg.warmup
        ),
    )?;

    let (phase_tx, phase_rx) = watch::channel(Phase::Connect);
    let counters: Vec<Arc<SwitchCounters>> = (0..cfg.switches).map(|_| Arc::default()).collect();
    let mut tasks = tokio::task::JoinSet::new();
    for (i, c) in counters.iter().enumerate() {
        tasks.spawn(fakeswitch::run(cfg.clone(), i, c.clone(), phase_rx.clone()));
    }
    // Every handshake, or a clear failure.
    // A little longer than a switch keeps trying to connect, so its error is the one reported.
    let deadline = tokio::time::Instant::now() + cfg.connect_timeout + Duration::from_millis(500);
    loop {
        let ready = counters.iter().filter(|c| c.ready.load(Ordering::Relaxed) == 1).count();
        if ready == cfg.switches {
            break;
        }
        while let Some(r) = tasks.try_join_next() {
            if let Ok(Err(e)) = r {
                return Err(OfBenchError::Connect(e));
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(OfBenchError::Connect(format!(
                "only {ready} of {} switches completed the handshake with {} within {:?}",
                cfg.switches, cfg.controller, cfg.connect_timeout
            )));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let _ = phase_tx.send(Phase::Learn);
    tokio::time::sleep(Duration::from_millis(100)).await;
    for c in &counters {
        c.responses.store(0, Ordering::Relaxed);
    }
    let _ = phase_tx.send(Phase::Go);
    let start = tokio::time::Instant::now();
    let mut per_loop = Vec::new();
    for i in 0..cfg.loops {
        tokio::time::sleep_until(start + Duration::from_millis(cfg.loop_ms * (i as u64 + 1))).await;
        let counts: Vec<u64> = counters
            .iter()
            .map(|c| c.responses.swap(0, Ordering::Relaxed))
            .collect();
        let total: u64 = counts.iter().sum();
        let list: String = counts.iter().map(|c| format!("{c}  ")).collect();
        w(
            out,
            format!(
                "{} {}  switches: flows/sec:  {list}total = {:.6} per ms",
                clock_time(),
                cfg.switches,
                total as f64 / cfg.loop_ms as f64
            ),
        )?;
        if i >= cfg.warmup {
            per_loop.push(total as f64 * 1000.0 / cfg.loop_ms as f64);
        }
    }
    // A switch task that has ended before the Stop lost its connection.
    let mut lost = 0;
    while tasks.try_join_next().is_some() {
        lost += 1;
    }
    let _ = phase_tx.send(Phase::Stop);
    let sent = counters.iter().map(|c| c.sent.load(Ordering::Relaxed)).sum();
    let timeouts = counters.iter().map(|c| c.timeouts.load(Ordering::Relaxed)).sum();
    tasks.abort_all();
    let mut s = Summary::new(per_loop, sent, timeouts);
    s.lost = lost;
    w(out, s.result_line(cfg.switches))?;
    Ok(s)
}

/// Wall-clock time of day (UTC) as cbench prints it: `HH:MM:SS.mmm`.
fn clock_time() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let s = d.as_secs() % 86_400;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        s / 3600,
        s / 60 % 60,
        s % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_is_cbench_arithmetic() {
        let s = Summary::new(vec![10.0, 20.0, 30.0], 0, 0);
        assert_eq!((s.min, s.max, s.avg), (10.0, 30.0, 20.0));
        assert!((s.stdev - (200.0f64 / 3.0).sqrt()).abs() < 1e-9);
        assert_eq!(
            s.result_line(16),
            "RESULT: 16 switches 3 tests min/max/avg/stdev = 10.00/30.00/20.00/8.16 responses/s"
        );
    }

    #[test]
    fn bad_settings_are_refused() {
        let cfg = OfBenchConfig {
            warmup: 16,
            ..OfBenchConfig::default()
        };
        assert!(matches!(run(cfg, &mut Vec::new()), Err(OfBenchError::Config(_))));
    }
}
