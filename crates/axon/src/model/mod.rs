//! The simulation model of an Axon network and the experiments behind `tandem reproduce axon-*`
//! (thesis chapter 4). The only module that uses `tandem-sim` (TCP endpoints, the experiment
//! harness, plots): the device itself stays free of simulator types.
//!
//! * [`net`]: what an experiment asks of a run (network parameters, flows) and gets back;
//! * [`topology`]: the experiments' networks (hosts, Axons, switches) and the spanning tree;
//! * [`placed`]: the `[[system]]` kind `"axon"`: Axons on the simulator's kernel in a user's own scenario;
//! * [`kernel`]: runs an experiment's network on the simulator's kernel, Axons placed as above
//!   (every experiment runs there: the model has no event loop of its own);
//! * [`common`]: topologies and helpers the experiments share;
//! * one module per experiment.

pub mod bandwidth;
pub mod common;
pub mod congestion;
pub mod failover;
pub mod kernel;
pub mod latency;
pub mod net;
pub mod overhead;
pub mod placed;
pub mod route_setup;
pub mod topology;

use tandem_sim::experiment::Experiment;

/// The model's experiments (the crate's [`crate::experiments`] adds the testbed's).
pub fn experiments() -> Vec<Experiment> {
    vec![
        latency::EXPERIMENT,
        bandwidth::EXPERIMENT,
        overhead::EXPERIMENT,
        congestion::EXPERIMENT,
        route_setup::EXPERIMENT,
        failover::EXPERIMENT,
    ]
}
