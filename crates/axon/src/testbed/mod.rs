//! A deterministic network harness for Axons and the experiments that run on it.
//!
//! [`Testbed`] wires Axon nodes (a [`crate::Device`] and its [`crate::ControlPlane`] each) with
//! links of a line rate and a propagation delay, adds simple [`Host`]s (a static address announced
//! by gratuitous ARP, or one from the Axon's DHCP server; ARP; timestamped data frames) and drives everything from one event loop in
//! integer picoseconds with stable ties and no randomness, so a run gives the same result every
//! time. [`LineSpec`] builds lines and rings with shared addressing conventions.
//!
//! Experiments (for `tandem reproduce`, each with a `--quick` form):
//!
//! * [`route_setup`] (`axon-route-setup`): routes per second one Axon sets up with the Table 4.3
//!   software delays, and ARP-to-first-packet latency.
//! * [`failover`] (`axon-failover`, beyond the thesis): a link on a stream's path fails in a ring
//!   of four; time until frames flow again and frames lost, with failure notices and with
//!   detection by probe timeout ([`crate::control::discovery`]).

pub mod dhcp_client;
pub mod failover;
pub mod host;
pub mod layout;
pub mod net;
pub mod route_setup;

pub use self::host::{Delivery, Host, HostId};
pub use self::layout::LineSpec;
pub use self::net::{FailureNotice, Node, Testbed, TestbedCounters, TestbedError};

use tandem_sim::experiment::Experiment;

/// The testbed's experiments for `tandem reproduce`.
pub fn experiments() -> Vec<Experiment> {
    vec![route_setup::EXPERIMENT, failover::EXPERIMENT]
}
