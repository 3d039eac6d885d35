//! TurboSwitch: payloads parked in deliberately congested switch queues while the NF sees only
//! headers.
//!
//! Reproduces Scazzariello, Caiazzi, Chiesa, "Deliberately Congesting a Switch for Better
//! Network Functions Performance" (ICNP 2024). A programmable switch splits every packet
//! larger than 64 B: the header (plus an ID) goes to the NF server at the highest priority,
//! the payload stays in the switch's packet buffer, parked in an egress queue, either
//! recirculating until its processed header is back (self-clocking) or waiting behind copies
//! of itself that a controller sizes from delayed queue statistics. The header and payload are
//! then merged and the packet leaves. The NF moves fewer bytes, so its latency drops.
//!
//! The switch program is a **sans-IO core**: [`TurboSwitch::handle`] is fed `(now, Event)`
//! with `now` in integer picoseconds and pushes [`Action`]s; it never reads a clock, socket,
//! global or random number. The model in [`model`] is a thin event-driven adapter (queues,
//! links, shared buffer, NF server) around it.
//!
//! Modules:
//! * [`types`]: time units, packet IDs, slot tags;
//! * [`config`]: every parameter, its default and where it comes from;
//! * [`split`]: split/merge bookkeeping (slots with generations, reclaim timeout);
//! * [`controller`]: copies computation from delayed queue statistics, round-trip estimator;
//! * [`nf`]: the NF server's latency model and its calibration to the slides;
//! * [`core`]: the switch program ([`TurboSwitch`], [`Event`], [`Action`], [`DropReason`]);
//! * [`model`]: the event-driven model and the four `turbo-*` experiments.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod config;
pub mod controller;
pub mod core;
pub mod model;
pub mod nf;
pub mod split;
pub mod types;

pub use crate::config::{ConfigError, CoreConfig, Mode, SwitchConfig};
pub use crate::core::{Action, CoreError, CoreStats, DropReason, Event, TurboSwitch};
pub use crate::model::experiments;
pub use crate::types::{PacketId, Tag, Time};
