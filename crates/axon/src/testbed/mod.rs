//! A deterministic network harness for Axons on the simulator's kernel: the control plane's
//! tests (DHCP, discovery, Axon-ARP, failures) run on it, as every `axon-*` experiment
//! ([`crate::model`]) does. Until 2026-12-05 it had an event loop of its own.
//!
//! [`Testbed`] wires Axon nodes (a [`crate::Device`] and its [`crate::ControlPlane`] each, run
//! by the kernel's [`crate::model::placed::AxonSwitch`]) with links of a line rate and a
//! propagation delay, and plugs simple [`Host`]s into their ports (a static address announced
//! by gratuitous ARP, or one from the Axon's DHCP server; ARP; timestamped data frames), each a
//! one-port node of the kernel ([`net::FrameHost`]). The kernel runs it in integer picoseconds
//! with stable ties and no randomness, so a run gives the same result every time. [`LineSpec`]
//! builds lines and rings with shared addressing conventions.

pub mod dhcp_client;
pub mod host;
pub mod layout;
pub mod net;

pub use self::host::{Delivery, Host, HostId};
pub use self::layout::LineSpec;
pub use self::net::{FailureNotice, Node, Testbed, TestbedCounters, TestbedError};
