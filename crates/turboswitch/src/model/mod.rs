//! The simulation model (the switch program with its NF server and recirculation ports as a
//! switch of `tandem-sim`'s kernel, [`placed`]) and the experiments behind
//! `tandem reproduce turbo-*`, which run it on the kernel ([`kernel`]). The only module that
//! uses `tandem-sim`.

pub mod capacity;
pub mod common;
pub mod controller;
pub mod kernel;
pub mod lanes;
pub mod latency;
pub mod placed;
pub mod record;
pub mod selfclock;
pub mod servers;

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
