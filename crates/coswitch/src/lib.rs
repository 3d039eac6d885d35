//! CoSwitch: mice in the server's virtual switch, elephants in the physical switch, a
//! closed-loop threshold between them (Zhang et al., "CoSwitch: A Cooperative Switching Design
//! for Software Defined Data Center Networking").
//!
//! The sans-IO core is two small state machines fed `(now, input)` that never read a clock, a
//! socket or a global:
//! * [`arbiter`]: the **Flow-Arbiter** on each server, which counts packets per flow and sends
//!   a flow to the physical switch, marked, once it reaches the threshold;
//! * [`prediction`]: **Flow-Prediction**, the controller module that moves the threshold from
//!   the utilization reports of both kinds of switch (the control law is documented there).
//!
//! Around them:
//! * [`marking`]: the elephant mark on a real frame (DSCP or VLAN), applied and read with the
//!   `tandem-wire` views;
//! * [`types`]: picosecond time;
//! * [`model`]: the simulation models (servers with a virtual switch, the physical OpenFlow
//!   ToR with its control CPU and TCAM, the reactive controller, the trace-like workload) and
//!   the experiments behind `tandem reproduce coswitch-*`. The only module that uses
//!   `tandem-sim` (cargo feature `sim`, on by default);
//! * [`openflow`] (cargo feature `openflow`): the cores as a `tandem-controller` app managing
//!   real vswitches and a small-table ToR (`tandem controller --app coswitch`).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod arbiter;
pub mod marking;
#[cfg(feature = "sim")]
pub mod model;
#[cfg(feature = "openflow")]
pub mod openflow;
pub mod prediction;
pub mod types;

pub use crate::arbiter::{ArbiterConfig, ArbiterInput, ArbiterStats, FlowArbiter, Verdict};
pub use crate::marking::Mark;
#[cfg(feature = "sim")]
pub use crate::model::experiments;
pub use crate::prediction::{FlowPrediction, LoadReport, PredictionConfig};
