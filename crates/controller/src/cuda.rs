//! The `cuda` backend (cargo feature `cuda`): the host pipeline of [`crate::gpu_batch`] with the
//! resolve phase run on an NVIDIA GPU by the kernel in [`KERNEL_SRC`], compiled at run time by
//! NVRTC. One thread resolves one event and a warp takes 32 consecutive events of the batch, which
//! the pool sorted by size (the paper's groups of 32).
//!
//! The CUDA driver (`libcuda.so`) and NVRTC (`libnvrtc.so`) are loaded at run time, so the
//! binary builds and starts without either; [`CudaBackend::new`] refuses with a typed
//! [`CudaError`] when they are missing, and never panics (the loader is probed first, and any
//! panic inside cudarc is caught).
//!
//! Unsafe code is confined to this module: probing for the libraries (loading a shared library
//! runs its initialisers) and launching the kernel (its argument list must match the kernel's).

use crate::backend::Backend;
use crate::event::Event;
use crate::gpu_batch::{reference_resolve, PackedBackend, PackedBatch, BLOCK_THREADS, KERNEL_NAME, KERNEL_SRC};
use crate::l2::L2Switch;
use crate::sink::ReplySink;
use core::fmt;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, DriverError, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Why the cuda backend could not start or run a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CudaError {
    /// The CUDA driver library could not be loaded (no NVIDIA GPU or driver).
    NoDriver,
    /// The NVRTC library could not be loaded (the kernel is compiled at run time).
    NoNvrtc,
    /// A driver call failed: what was being done and the driver's error.
    Driver {
        /// The step that failed.
        step: &'static str,
        /// The driver's error.
        message: String,
    },
    /// NVRTC rejected the kernel (its log).
    Compile(String),
    /// cudarc panicked (for instance a symbol missing from an old driver); the panic was caught.
    Panicked {
        /// The step that panicked.
        step: &'static str,
        /// The panic message.
        message: String,
    },
    /// The batch is too large for one launch (its event count).
    BatchTooLarge(usize),
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CudaError::NoDriver => f.write_str(
                "no CUDA driver found (libcuda.so could not be loaded): the cuda backend needs an NVIDIA GPU \
                 and driver; use --backend cpu",
            ),
            CudaError::NoNvrtc => f.write_str(
                "no NVRTC found (libnvrtc.so could not be loaded): the cuda backend compiles its kernel at run \
                 time and needs the CUDA runtime compiler library; use --backend cpu",
            ),
            CudaError::Driver { step, message } => write!(f, "CUDA driver error while trying to {step}: {message}"),
            CudaError::Compile(log) => write!(f, "NVRTC could not compile the resolve kernel: {log}"),
            CudaError::Panicked { step, message } => {
                write!(f, "CUDA library failure while trying to {step}: {message}")
            }
            CudaError::BatchTooLarge(n) => write!(f, "batch of {n} events is too large for one kernel launch"),
        }
    }
}

impl std::error::Error for CudaError {}

/// True when the CUDA driver library can be loaded.
pub fn driver_present() -> bool {
    // SAFETY: this only tries to dlopen the driver library under its usual names (and closes it
    // again); loading it runs the library's initialisers, which the NVIDIA driver supports in any
    // process, and no symbol is called.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// True when the NVRTC library can be loaded.
pub fn nvrtc_present() -> bool {
    // SAFETY: as in `driver_present`, for the NVRTC library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Runs a cudarc call, turning its error and any panic into a [`CudaError`] for `step`.
fn guarded<T, E: fmt::Debug>(step: &'static str, f: impl FnOnce() -> Result<T, E>) -> Result<T, CudaError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(CudaError::Driver {
            step,
            message: format!("{e:?}"),
        }),
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(CudaError::Panicked { step, message })
        }
    }
}

/// Compiles [`KERNEL_SRC`] to PTX with NVRTC; [`CudaError::NoNvrtc`] when NVRTC is missing.
pub fn compile_kernel() -> Result<Ptx, CudaError> {
    if !nvrtc_present() {
        return Err(CudaError::NoNvrtc);
    }
    let opts = CompileOptions {
        name: Some("l2_resolve.cu".to_string()),
        ..CompileOptions::default()
    };
    match catch_unwind(AssertUnwindSafe(|| {
        cudarc::nvrtc::compile_ptx_with_opts(KERNEL_SRC, opts)
    })) {
        Ok(Ok(ptx)) => Ok(ptx),
        Ok(Err(CompileError::CompileError { log, .. })) => Err(CudaError::Compile(log.to_string_lossy().into_owned())),
        Ok(Err(e)) => Err(CudaError::Compile(format!("{e:?}"))),
        Err(_) => Err(CudaError::Panicked {
            step: "compile the kernel",
            message: "NVRTC panicked".to_string(),
        }),
    }
}

/// The device side: a stream and the loaded kernel.
struct Device {
    stream: Arc<CudaStream>,
    func: CudaFunction,
}

impl Device {
    /// Resolves the packed batch on the device: one port word per event into `out`.
    fn resolve(&self, p: &PackedBatch, out: &mut Vec<u64>) -> Result<(), CudaError> {
        out.clear();
        if p.is_empty() {
            return Ok(());
        }
        let n = u32::try_from(p.len()).map_err(|_| CudaError::BatchTooLarge(p.len()))?;
        let words = guarded("resolve a batch", || -> Result<Vec<u64>, DriverError> {
            let s = &self.stream;
            let ev_slot = s.clone_htod(&p.ev_slot)?;
            let ev_dst = s.clone_htod(&p.ev_dst)?;
            let tab_mac = s.clone_htod(&p.tab_mac)?;
            let tab_slot = s.clone_htod(&p.tab_slot)?;
            let tab_before = s.clone_htod(&p.tab_before)?;
            let tab_wbeg = s.clone_htod(&p.tab_wbeg)?;
            let tab_wend = s.clone_htod(&p.tab_wend)?;
            let w_event = s.clone_htod(&p.w_event)?;
            let w_port = s.clone_htod(&p.w_port)?;
            let mut words = s.alloc_zeros::<u64>(p.len())?;
            let mask = p.mask();
            let cfg = LaunchConfig {
                grid_dim: (n.div_ceil(BLOCK_THREADS), 1, 1),
                block_dim: (BLOCK_THREADS, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut launch = s.launch_builder(&self.func);
            launch
                .arg(&n)
                .arg(&ev_slot)
                .arg(&ev_dst)
                .arg(&mask)
                .arg(&tab_mac)
                .arg(&tab_slot)
                .arg(&tab_before)
                .arg(&tab_wbeg)
                .arg(&tab_wend)
                .arg(&w_event)
                .arg(&w_port)
                .arg(&mut words);
            // SAFETY: the arguments are, in order and type, those of `l2_resolve` in KERNEL_SRC
            // (u32, u32*, u64*, u64, u64*, u32*, u64*, u32*, u32*, u32*, u32*, u64*). Every read
            // is in bounds: event arrays hold `n` elements and threads at or past `n` return;
            // table arrays hold `mask + 1` elements and bucket indices are masked; write indices
            // come from `tab_wbeg..tab_wend`, ranges the host built inside `w_event`/`w_port`
            // (never empty). Probing ends because the table is at most half full. `words` holds
            // `n` elements, each written by its own thread only.
            unsafe { launch.launch(cfg) }?;
            let host = s.clone_dtoh(&words)?;
            s.synchronize()?;
            Ok(host)
        })?;
        *out = words;
        Ok(())
    }
}

/// The learning switch with its resolve phase on an NVIDIA GPU (see the module documentation).
///
/// Replies and counters are those of [`crate::ScalarBackend`]. Should the device fail on a batch,
/// that batch is resolved on the host by the same algorithm ([`reference_resolve`]), so no reply
/// is lost; [`CudaBackend::fallbacks`] counts such batches and [`CudaBackend::last_error`] says
/// why.
pub struct CudaBackend {
    host: PackedBackend,
    device: Device,
    ordinal: usize,
    fallbacks: u64,
    last_error: Option<CudaError>,
}

impl fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaBackend")
            .field("ordinal", &self.ordinal)
            .field("fallbacks", &self.fallbacks)
            .field("last_error", &self.last_error)
            .finish_non_exhaustive()
    }
}

impl CudaBackend {
    /// Opens GPU `device_ordinal`, compiles and loads the kernel. Refuses with
    /// [`CudaError::NoDriver`] / [`CudaError::NoNvrtc`] when the libraries are missing.
    pub fn new(device_ordinal: usize) -> Result<CudaBackend, CudaError> {
        if !driver_present() {
            return Err(CudaError::NoDriver);
        }
        if !nvrtc_present() {
            return Err(CudaError::NoNvrtc);
        }
        let ctx = guarded("open the GPU", || CudaContext::new(device_ordinal))?;
        let ptx = compile_kernel()?;
        let module = guarded("load the kernel", || ctx.load_module(ptx))?;
        let func = guarded("find the kernel", || module.load_function(KERNEL_NAME))?;
        let stream = guarded("create a stream", || ctx.new_stream())?;
        Ok(CudaBackend {
            host: PackedBackend::new(),
            device: Device { stream, func },
            ordinal: device_ordinal,
            fallbacks: 0,
            last_error: None,
        })
    }

    /// Batches resolved on the host because the device failed.
    pub fn fallbacks(&self) -> u64 {
        self.fallbacks
    }

    /// The last device failure, if any.
    pub fn last_error(&self) -> Option<&CudaError> {
        self.last_error.as_ref()
    }
}

impl<O: ReplySink> Backend<L2Switch, O> for CudaBackend {
    fn process(&mut self, _now_ps: u64, batch: &[Event], app: &mut L2Switch, out: &mut O) {
        let (device, fallbacks, last_error) = (&self.device, &mut self.fallbacks, &mut self.last_error);
        self.host.process_with(batch, app, out, |packed, words| {
            if let Err(e) = device.resolve(packed, words) {
                *fallbacks += 1;
                *last_error = Some(e);
                reference_resolve(packed, words);
            }
        });
    }
}
