//! The Axon (Michael Foss, "The Axon Ethernet Device", MS thesis, Rice University, 2010): a device
//! that replaces an Ethernet switch; hosts talk plain Ethernet to it, Axons talk source-routed
//! Ethernet among themselves, and only the first Axon on a path looks a route up.
//!
//! This crate holds the device's **data plane** and **control plane** as sans-IO cores: [`Device::handle`] is fed
//! `(now_ps, Event)`, with time in integer picoseconds, and pushes [`Action`]s (send this frame
//! on this port from this time, hand this frame to the control plane, this port is an Axon port,
//! this frame was dropped and why). It reads no clock, socket or global, so a simulator and a live
//! driver on real interfaces run the same code. The control plane (DHCP, ARP interception,
//! Axon-ARP, route calculation) drives it through [`Device::reserve_route`],
//! [`Device::install_route`], [`Device::remove_route`], [`Event::FromControlPlane`] and
//! [`Action::ToControlPlane`]. The wire format is [`tandem_wire::axon`].
//!
//! Beside the device: [`model`], a discrete-event simulation of Axon networks (the real
//! [`Device`] as the Axons, learning switches for contrast, hosts with UDP and TCP) and the
//! thesis's chapter 4 experiments for `tandem reproduce axon-*` (the only module that uses
//! `tandem-sim`); [`cam_analysis`], the CAM entries a port needs for a trace (§4.5).
//!
//! Mapping to the thesis:
//!
//! | thesis | here |
//! |---|---|
//! | §3.1.1 packet format, §3.1.2 cut-through after the sixth byte | [`tandem_wire::axon`] |
//! | §3.1.3 bootstrap: Axon port or host port | [`bootstrap`], [`port`] |
//! | §3.2.1 route lookup, route memory, CAM, masqueraded MACs | [`route_memory`] |
//! | §3.2.1 header processing, strip toward hosts, errors, control plane port `0xf` | [`dataplane`] |
//! | §3.2.1 output port: one buffer per input port, fair service, fall-through | [`output`] |
//! | §3.2.2 probe timestamps at input and output | [`dataplane`] (via [`tandem_wire::axon::probe`]) |
//! | §3.3.3 self-congestion and PAUSE frames | [`self_congestion`] |
//! | Table 4.2 latencies; §4.4.3 cut-through vs store-and-forward register | [`timing`] |
//! | drop and event counters | [`counters`] |
//!
//! # Control plane
//!
//! [`ControlPlane`] sits beside a [`Device`]: [`ControlPlane::handle`] is fed `(now_ps,
//! ControlInput)` (the data plane's upcalls, link failures, ticks) with the device it runs on,
//! writes routes into that device's route memory, and pushes [`ControlAction`]s (frames to
//! inject at a time, routes installed and removed, drops, wake-ups). Its processor is one busy
//! resource whose work lasts the Table 4.3 software delays.
//!
//! | thesis | here |
//! |---|---|
//! | §3.2.3 DHCP: each Axon serves its local hosts from its own pool; server MAC that names no route | [`control::dhcp_server`], [`control::ControlPlane::server_mac`] |
//! | §3.2.3 ARP handled by the control plane, gratuitous ARP learned, no flooding (§3.4) | [`control::host_arp`] |
//! | §4.1.1 unicast ARP with masqueraded MACs: intercept every ARP and answer it | [`Upcall::Arp`], [`control::host_arp`] |
//! | §3.2.3 Axon-ARP, Phases I-IV (Table 4.3 names them) | [`control::axon_arp`] |
//! | Table 4.3 software delays | [`control::SoftwareDelays`] |
//! | §3.2.3 topology and routes from a configuration file | [`control::topology`] |
//! | route calculation: shortest, then least loaded within a slack (beyond the thesis) | [`control::route_calc`] |
//! | route removal on timeout; link failure reroutes at the source Axons (future work in the thesis) | [`control::routes`] |
//! | frames the control plane builds and reads | [`control::frames`] |
//! | topology discovery by probes, link latency from probe timestamps, link timeouts, flooded advertisements (future work in the thesis) | [`control::discovery`] |
//!
//! Not modelled yet: DHCP relay to a central server, and spreading explicit failure notices
//! (without discovery the driver tells every control plane; with it, probe timeouts and
//! advertisements spread the failure).
//!
//! # Testbed and experiments
//!
//! [`testbed`] wires Axons (a [`Device`] and its [`ControlPlane`] each) and simple hosts with
//! links of a rate and a delay and runs them on the simulator's kernel (deterministic), for the
//! control plane's tests. The experiments, `axon-route-setup` (Table 4.3 route setup rate,
//! ARP-to-first-packet latency) and `axon-failover` (a link on a stream's path fails) among
//! them, run on the simulator's kernel ([`model`]).
//!
//! Model choices the thesis leaves open: hops are a nibble, so a device has at most 15 ports
//! (`0xf` is the control plane); a masqueraded MAC is the configured two-byte prefix (U/L bit set)
//! then the 32-bit slot index, so hosts whose own MACs are locally administered still use the
//! CAM; a port that hears no hello within the bootstrap timeout is a host port; errors go to the
//! local control plane with the reverse path intact, their bodies carrying a code and the
//! original type; the switch fabric never NACKs: a full output buffer drops the frame
//! ([`DropReason::OutputBufferFull`]).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bootstrap;
pub mod cam_analysis;
pub mod config;
pub mod control;
pub mod counters;
pub mod dataplane;
#[cfg(feature = "sim")]
pub mod model;
pub mod node;
pub mod output;
pub mod port;
pub mod route_memory;
pub mod self_congestion;
#[cfg(feature = "sim")]
pub mod testbed;
pub mod timing;

pub use crate::config::{ConfigError, DeviceConfig, PauseConfig, PortConfig, MAX_PORTS};
pub use crate::control::{ControlAction, ControlConfig, ControlInput, ControlPlane, Topology};
pub use crate::counters::{Counters, DropReason};
pub use crate::dataplane::{Action, Device, Event, Upcall};
/// Every Axon experiment for `tandem reproduce` (`axon-latency`, `axon-bandwidth`,
/// `axon-overhead`, `axon-congestion`, `axon-route-setup`, `axon-failover`), all on the
/// simulator's kernel.
#[cfg(feature = "sim")]
pub fn experiments() -> Vec<tandem_sim::experiment::Experiment> {
    model::experiments()
}
pub use crate::port::{Neighbor, PortKind, PortState};
pub use crate::route_memory::{LookupVia, RouteEntry, RouteError, RouteMemory, RouteSlot};
pub use crate::timing::{ForwardingMode, Timing};
