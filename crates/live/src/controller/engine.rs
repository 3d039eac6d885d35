//! What a shard runs: an application and a backend behind one object-safe trait, so that the
//! server does not depend on which app or backend was chosen.

use std::fmt;
use std::str::FromStr;
use tandem_controller::{
    App, Backend, CpuBackend, CpuParallelBackend, Event, L2Config, L2Switch, Reply, ScalarBackend,
};
use tandem_wire::openflow::Version;

/// One shard's application with its backend.
pub trait Engine: Send {
    /// A switch finished its handshake.
    fn connected(&mut self, now_ps: u64, dpid: u64, version: Version, out: &mut Vec<Reply>);
    /// A switch went away.
    fn disconnected(&mut self, now_ps: u64, dpid: u64, out: &mut Vec<Reply>);
    /// Runs a batch (sorted by size) through the backend.
    fn process(&mut self, now_ps: u64, batch: &[Event], out: &mut Vec<Reply>);
}

/// Makes the engine of shard `i` (an error message when it cannot).
pub type EngineFactory = Box<dyn FnMut(usize) -> Result<Box<dyn Engine>, String> + Send>;

/// An app and a backend that can run it.
struct AppEngine<A, B> {
    app: A,
    backend: B,
}

impl<A: App + Send, B: Backend<A> + Send> Engine for AppEngine<A, B> {
    fn connected(&mut self, now_ps: u64, dpid: u64, version: Version, out: &mut Vec<Reply>) {
        self.app.on_switch_connected(now_ps, dpid, version, out);
    }
    fn disconnected(&mut self, now_ps: u64, dpid: u64, out: &mut Vec<Reply>) {
        self.app.on_switch_disconnected(now_ps, dpid, out);
    }
    fn process(&mut self, now_ps: u64, batch: &[Event], out: &mut Vec<Reply>) {
        self.backend.process(now_ps, batch, &mut self.app, out);
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

/// Engines running the paper's L2 learning switch on `backend`, one per shard.
pub fn l2_engine(backend: BackendChoice, cfg: L2Config) -> EngineFactory {
    Box::new(move |_shard| -> Result<Box<dyn Engine>, String> {
        let app = L2Switch::new(cfg);
        match backend {
            BackendChoice::Scalar => Ok(Box::new(AppEngine {
                app,
                backend: ScalarBackend,
            })),
            BackendChoice::Cpu => Ok(Box::new(AppEngine {
                app,
                backend: CpuBackend::new(),
            })),
            BackendChoice::CpuParallel => Ok(Box::new(AppEngine {
                app,
                backend: CpuParallelBackend::new(std::thread::available_parallelism().map_or(1, |n| n.get())),
            })),
            BackendChoice::Cuda => cuda_engine(app),
        }
    })
}

#[cfg(feature = "cuda")]
fn cuda_engine(app: L2Switch) -> Result<Box<dyn Engine>, String> {
    let backend = tandem_controller::CudaBackend::new(0).map_err(|e| e.to_string())?;
    Ok(Box::new(AppEngine { app, backend }))
}

#[cfg(not(feature = "cuda"))]
fn cuda_engine(_app: L2Switch) -> Result<Box<dyn Engine>, String> {
    Err("this build has no CUDA backend: rebuild with `cargo build --release --features cuda` (needs an NVIDIA driver at run time), or use --backend cpu".into())
}
