//! The simulation side of CoSwitch: the testbed model and the experiments.
//!
//! * [`cpu`]: a FIFO core with exact busy-time accounting;
//! * [`workload`]: the trace-like flow mix and Poisson flow streams;
//! * [`network`]: servers, virtual switches, the physical ToR and the controller, driving the
//!   sans-IO [`crate::arbiter`] and [`crate::prediction`] cores.

pub mod adapt;
pub mod compare;
pub mod cost;
pub mod cpu;
pub mod network;
pub mod placed;
pub mod profile;
pub mod record;
pub mod replay;
pub mod sweep;
pub mod traffic;
pub mod workload;

/// The crate's experiments for `tandem reproduce`.
pub fn experiments() -> Vec<tandem_sim::experiment::Experiment> {
    vec![
        profile::EXPERIMENT,
        compare::EXPERIMENT,
        adapt::EXPERIMENT,
        cost::EXPERIMENT,
        traffic::EXPERIMENT,
    ]
}
