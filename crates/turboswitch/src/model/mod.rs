//! The simulation model (an event-driven switch + NF around the sans-IO core) and the
//! experiments behind `tandem reproduce turbo-*`. The only module that uses `tandem-sim`
//! (for the experiment harness and plots).

pub mod capacity;
pub mod common;
pub mod controller;
pub mod lanes;
pub mod latency;
pub mod placed;
pub mod selfclock;
pub mod servers;
pub mod sim;

use tandem_sim::experiment::Experiment;

/// The crate's experiments for `tandem reproduce`.
pub fn experiments() -> Vec<Experiment> {
    vec![
        latency::EXPERIMENT,
        selfclock::EXPERIMENT,
        controller::EXPERIMENT,
        capacity::EXPERIMENT,
        servers::EXPERIMENT,
    ]
}
