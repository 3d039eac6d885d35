//! A deterministic network harness for Axons: the control plane's tests (DHCP, discovery,
//! Axon-ARP, failures) run on it. Every `axon-*` experiment runs on the simulator's kernel
//! ([`crate::model`]); `axon-route-setup` and `axon-failover` ran here until 2026-11-28.
//!
//! [`Testbed`] wires Axon nodes (a [`crate::Device`] and its [`crate::ControlPlane`] each) with
//! links of a line rate and a propagation delay, adds simple [`Host`]s (a static address announced
//! by gratuitous ARP, or one from the Axon's DHCP server; ARP; timestamped data frames) and drives everything from one event loop in
//! integer picoseconds with stable ties and no randomness, so a run gives the same result every
//! time. [`LineSpec`] builds lines and rings with shared addressing conventions.

pub mod dhcp_client;
pub mod host;
pub mod layout;
pub mod net;

pub use self::host::{Delivery, Host, HostId};
pub use self::layout::LineSpec;
pub use self::net::{FailureNotice, Node, Testbed, TestbedCounters, TestbedError};
