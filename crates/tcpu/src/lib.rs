//! TCPU: the switch CPU as a traffic co-processing unit.
//!
//! This crate holds the **sans-IO policy core** of TCPU (Lu et al., "Using CPU as a Traffic
//! Co-processing Unit in Commodity Switches", HotSDN 2012): the brain that runs on the switch
//! CPU and decides which flows the ASIC's small TCAM holds, when a congested output port is
//! redirected into the CPU's DRAM, which long flows are pinned back onto the ASIC, and which
//! sources are low-rate burst (shrew) attackers to shape.
//!
//! The core is a deterministic state machine: [`Tcpu::handle`] is fed `(now, Event)` with `now`
//! in integer picoseconds and pushes [`Action`]s into a caller-supplied vector. It never reads a
//! clock, a socket, a global or an unseeded random number, so the same event sequence always
//! gives the same actions. The simulator (and later a live driver) are thin adapters that turn
//! actions into table writes, packet sends and timers.
//!
//! Modules, one policy each:
//! * [`analysis`]: offline active-flow and traffic-offload-ratio analysis of flow records
//!   (`tandem analyze offload`);
//! * [`config`]: every threshold, its default and where the default comes from;
//! * [`types`]: time helpers, flow and packet handles, ASIC rules;
//! * [`channel`]: the rate-limited ASIC table-operation channel (insert, delete, counter read);
//! * [`flow_table`]: the CPU's full flow table and the periodic top-k ranking and swap plan;
//! * [`deep_buffer`]: DRAM buffering, CPU/internal-link costs and per-port pacing at C;
//! * [`long_flows`]: when a flow counts as long and is pinned onto the ASIC;
//! * [`attack`]: the low-rate burst attack detector;
//! * [`core`]: [`Tcpu`], which ties them together behind [`Event`] and [`Action`];
//! * [`model`]: the simulation adapter ([`model::TcpuModel`], a `tandem-sim` switch model) and
//!   the experiments behind `tandem reproduce tcpu-*`. The only module that uses `tandem-sim`
//!   (cargo feature `sim`, on by default);
//! * [`openflow`] (cargo feature `openflow`): the same core as a `tandem-controller` app that
//!   manages a real OpenFlow switch (Open vSwitch standing for the ASIC): `tandem controller
//!   --app tcpu`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod analysis;
pub mod attack;
pub mod channel;
pub mod config;
pub mod core;
pub mod deep_buffer;
pub mod flow_table;
pub mod long_flows;
#[cfg(feature = "sim")]
pub mod model;
#[cfg(feature = "openflow")]
pub mod openflow;
pub mod types;

pub use crate::config::{ConfigError, TcpuConfig};
pub use crate::core::{Action, CoreError, DropReason, Event, Tcpu, TcpuStats};
#[cfg(feature = "sim")]
pub use crate::model::experiments;
pub use crate::types::{FlowId, PacketRef, Rule, RuleAction, RuleMatch, Time};
