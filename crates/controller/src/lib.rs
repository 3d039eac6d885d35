//! Sans-IO core of a batched OpenFlow controller, after Renart, Zhang and Nath, "Towards a
//! GPU SDN Controller" (NetSys 2015): packet_in events are pooled, a pool is
//! handed out as a batch when it is full or its oldest event has waited long enough, the batch is
//! sorted by event size (the paper groups sorted events by 32 for its GPU kernel) and processed by
//! a backend running an application, here the paper's L2 learning switch.
//!
//! Nothing here reads a clock, opens a socket or keeps a global: every state machine is fed
//! `(now_ps, input)` and returns what to send as [`Reply`] values for the driver to encode.
//!
//! * [`event`]: [`PacketInEvent`], the compact owned summary of a packet_in, and [`Event`], one
//!   addressed to a datapath;
//! * [`app`]: the [`App`] trait applications implement and the [`Reply`] they produce;
//! * [`l2`]: the L2 learning switch ([`L2Switch`]) for OpenFlow 1.0 and 1.3;
//! * [`pool`]: the batching [`Pool`];
//! * [`sink`]: where a backend's replies go ([`ReplySink`]): collected, or encoded in place per
//!   datapath ([`EncodedReplies`]);
//! * [`session`]: one OpenFlow connection ([`Session`]), controller or switch side: framing,
//!   hello and version negotiation, features, echo keepalive, errors for bad messages;
//! * [`backend`]: [`Backend`]s that run a batch through an app: [`ScalarBackend`] (one event at a
//!   time) and [`CpuBackend`] (the learning switch in two batched phases, same replies);
//! * [`gpu_batch`]: the GPU backend's host side, the resolve phase packed into flat arrays, and
//!   [`PackedBackend`], its pipeline with the kernel's algorithm run on the host;
//! * `cuda` (cargo feature `cuda`): `CudaBackend`, that pipeline with the resolve phase on an
//!   NVIDIA GPU (cudarc, kernel compiled at run time by NVRTC; refuses to start without a driver).
//!
//! Unsafe code is denied everywhere but in the `cuda` module, which needs it to launch kernels.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod app;
pub mod backend;
#[cfg(feature = "cuda")]
#[allow(unsafe_code)]
pub mod cuda;
pub mod event;
pub mod gpu_batch;
pub mod l2;
pub mod pool;
pub mod session;
pub mod sink;

pub use app::{App, AppCore, AppInput, Reply};
pub use backend::{Backend, CpuBackend, CpuParallelBackend, ScalarBackend};
#[cfg(feature = "cuda")]
pub use cuda::{CudaBackend, CudaError};
pub use event::{Event, EventError, PacketInEvent};
pub use gpu_batch::PackedBackend;
pub use l2::{L2Config, L2Counters, L2Switch};
pub use pool::{Pool, PoolConfig, PoolConfigError, GROUP_SIZE};
pub use session::{
    Closed, Role, Session, SessionConfig, SessionCounters, SessionEvent, SessionInput, SessionOutput, Transmit,
};
pub use sink::{DatapathBytes, EncodedReplies, ReplySink};
