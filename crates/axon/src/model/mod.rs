//! The simulation model of an Axon network and the experiments behind `tandem reproduce axon-*`
//! (thesis chapter 4). The only module that uses `tandem-sim` (TCP endpoints, the experiment
//! harness, plots): the device itself stays free of simulator types.
//!
//! * [`sim`]: the discrete-event model (links, Axons running the real [`crate::Device`],
//!   learning switches, hosts with UDP and TCP);
//! * [`topology`]: nodes and links, shortest Axon paths, the spanning tree;
//! * [`frames`]: hosts' frames as real bytes;
//! * [`ethswitch`]: the store-and-forward learning switch;
//! * [`placed`]: the `[[system]]` kind `"axon"`: Axons on the simulator's kernel in a user's own scenario;
//! * [`kernel`]: the experiments' networks run on the kernel, Axons placed as above;
//! * [`common`]: topologies and helpers the experiments share;
//! * one module per experiment.

pub mod bandwidth;
pub mod common;
pub mod congestion;
pub mod ethswitch;
pub mod frames;
pub mod kernel;
pub mod latency;
pub mod overhead;
pub mod placed;
pub mod sim;
pub mod topology;

use tandem_sim::experiment::Experiment;

/// The model's experiments (the crate's [`crate::experiments`] adds the testbed's).
pub fn experiments() -> Vec<Experiment> {
    vec![
        latency::EXPERIMENT,
        bandwidth::EXPERIMENT,
        overhead::EXPERIMENT,
        congestion::EXPERIMENT,
    ]
}
