//! Tandem's packet-level simulator.
//!
//! * Time is integer picoseconds ([`time`]); events with equal times run in insertion order;
//!   every random draw comes from the scenario seed, so a scenario and seed give byte-identical
//!   output.
//! * Packets are fixed-size records ([`packet::Packet`]) kept in a pool and moved by id: the
//!   hot path allocates nothing.
//! * Hosts run a TCP ([`tcp`]) that follows RFC 793/5681/6298/6582/2018/3168/8257 closely
//!   enough to be checked against ns-3 (`bench/ns3/`, `docs/sim/validation.md`).
//! * Switches are pipelines of match tables and egress queues with priorities, a shared
//!   buffer, ECN/RED and drop reasons; system crates extend them through [`switch::SwitchModel`].

// No unsafe code except the cache prefetch hint (`prefetch`, one intrinsic call that cannot
// fault); everything else is checked by the compiler.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub(crate) mod barrier;
pub mod config;
pub mod event;
pub mod experiment;
pub mod limits;
pub mod ns3_rng;
pub mod ns3_spec;
pub mod packet;
pub mod parallel;
pub mod plot;
pub mod port;
#[allow(unsafe_code)]
pub(crate) mod prefetch;
pub mod queue;
pub mod report;
pub(crate) mod ring;
pub mod run;
pub mod scenario;
pub mod sim;
pub mod switch;
pub mod table;
pub mod tap;
pub mod tcp;
pub mod time;
pub mod topology;
pub mod units;
pub mod validation;
pub mod workload;
