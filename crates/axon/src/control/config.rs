//! Control plane parameters: the DHCP pool, timeouts, route choice slack and the software delays
//! of Table 4.3.

use core::fmt;
use std::net::Ipv4Addr;

/// One microsecond in picoseconds.
pub const US: u64 = 1_000_000;
/// One second in picoseconds.
pub const SECOND: u64 = 1_000_000_000_000;

/// The per-Axon DHCP pool (§3.2.3: "each Axon can immediately assign any of its local hosts an IP
/// address from a locally reserved pool").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DhcpPool {
    /// The control plane's own address (DHCP server id, answered to ARP).
    pub server_ip: Ipv4Addr,
    /// The subnet mask handed out.
    pub subnet_mask: Ipv4Addr,
    /// First address of the pool.
    pub first: Ipv4Addr,
    /// Last address of the pool (inclusive).
    pub last: Ipv4Addr,
    /// Lease time handed out, in seconds.
    pub lease_secs: u32,
}

impl DhcpPool {
    /// Whether `ip` is in the pool.
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        self.first <= ip && ip <= self.last
    }
}

/// Software delays of the control plane (Table 4.3, averages over 1..5 hops), in picoseconds.
/// Each is added to the time the control plane's processor is busy; actions leave when the work
/// that made them is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SoftwareDelays {
    /// Phase I: route calculation (40 us).
    pub route_calculation_ps: u64,
    /// Phase I: route memory allocation (4 us).
    pub route_allocation_ps: u64,
    /// Phase I: building and sending the Axon-ARP request (117 us).
    pub axon_arp_request_ps: u64,
    /// Phase II: route determination and allocation at the target Axon (135 us).
    pub target_allocation_ps: u64,
    /// Phase II: building the ARP request to the target host (81 us).
    pub host_arp_request_ps: u64,
    /// Phase III: route storage at the target Axon (42 us).
    pub target_route_storage_ps: u64,
    /// Phase III: building and sending the Axon-ARP reply (126 us).
    pub axon_arp_reply_ps: u64,
    /// Phase IV: route storage at the source Axon (107 us).
    pub source_route_storage_ps: u64,
    /// Phase IV: building the ARP reply to the source host (91 us).
    pub host_arp_reply_ps: u64,
    /// A DHCP reply (not in the thesis; assumed like an ARP reply, 91 us).
    pub dhcp_reply_ps: u64,
}

impl Default for SoftwareDelays {
    fn default() -> SoftwareDelays {
        SoftwareDelays {
            route_calculation_ps: 40 * US,
            route_allocation_ps: 4 * US,
            axon_arp_request_ps: 117 * US,
            target_allocation_ps: 135 * US,
            host_arp_request_ps: 81 * US,
            target_route_storage_ps: 42 * US,
            axon_arp_reply_ps: 126 * US,
            source_route_storage_ps: 107 * US,
            host_arp_reply_ps: 91 * US,
            dhcp_reply_ps: 91 * US,
        }
    }
}

impl SoftwareDelays {
    /// No modelled delay: for a live control plane, whose own processing is the delay.
    pub fn none() -> SoftwareDelays {
        SoftwareDelays {
            route_calculation_ps: 0,
            route_allocation_ps: 0,
            axon_arp_request_ps: 0,
            target_allocation_ps: 0,
            host_arp_request_ps: 0,
            target_route_storage_ps: 0,
            axon_arp_reply_ps: 0,
            source_route_storage_ps: 0,
            host_arp_reply_ps: 0,
            dhcp_reply_ps: 0,
        }
    }
}

/// Everything a [`super::ControlPlane`] needs besides the topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlConfig {
    /// The device id of the Axon this control plane runs on (as in the topology).
    pub device_id: u64,
    /// Its DHCP pool.
    pub pool: DhcpPool,
    /// How long an offered address is held for the client's REQUEST.
    pub offer_hold_ps: u64,
    /// An Axon-ARP transaction not finished by then is abandoned and its slot freed.
    pub arp_timeout_ps: u64,
    /// A route not refreshed (by a host's ARP for it) for this long is removed; 0 never.
    pub route_idle_timeout_ps: u64,
    /// Paths up to this many hops longer than the shortest are candidates for the least loaded.
    pub path_slack_hops: usize,
    /// Software delays.
    pub delays: SoftwareDelays,
    /// Topology discovery by probes ([`super::discovery`]); `None` uses the configured topology
    /// only.
    pub discovery: Option<DiscoveryConfig>,
}

/// Topology discovery parameters ([`super::discovery`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DiscoveryConfig {
    /// A probe leaves every Axon port this often.
    pub probe_interval_ps: u64,
    /// A neighbor not heard (probe or echo) for this long is gone: its link is down.
    pub probe_timeout_ps: u64,
    /// Each Axon re-floods its own advertisement this often (frames lost to failures heal).
    pub advert_refresh_ps: u64,
}

impl Default for DiscoveryConfig {
    /// Probes every 100 us, a link down after 350 us of silence (three probes and a half),
    /// advertisements refreshed every 10 ms.
    fn default() -> DiscoveryConfig {
        DiscoveryConfig {
            probe_interval_ps: 100 * US,
            probe_timeout_ps: 350 * US,
            advert_refresh_ps: 10_000 * US,
        }
    }
}

impl ControlConfig {
    /// A control plane for `device_id` with `pool` and defaults: offers held 60 s, Axon-ARP given
    /// 1 s, routes idle out after 300 s, equal-length paths only, Table 4.3 delays.
    pub fn new(device_id: u64, pool: DhcpPool) -> ControlConfig {
        ControlConfig {
            device_id,
            pool,
            offer_hold_ps: 60 * SECOND,
            arp_timeout_ps: SECOND,
            route_idle_timeout_ps: 300 * SECOND,
            path_slack_hops: 0,
            delays: SoftwareDelays::default(),
            discovery: None,
        }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), ControlConfigError> {
        let p = &self.pool;
        if p.first > p.last {
            return Err(ControlConfigError::EmptyPool);
        }
        if p.contains(p.server_ip) {
            return Err(ControlConfigError::ServerInPool);
        }
        if p.lease_secs == 0 {
            return Err(ControlConfigError::ZeroLease);
        }
        if let Some(d) = self.discovery {
            if d.probe_interval_ps == 0 || d.probe_timeout_ps <= d.probe_interval_ps || d.advert_refresh_ps == 0 {
                return Err(ControlConfigError::BadDiscoveryTimers);
            }
        }
        Ok(())
    }
}

/// A control plane or topology configuration that cannot work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlConfigError {
    /// The pool's first address is above its last.
    EmptyPool,
    /// The server's own address lies in the pool.
    ServerInPool,
    /// A zero lease time.
    ZeroLease,
    /// The device is not in the topology.
    NotInTopology(u64),
    /// A topology line could not be read (line number, what).
    TopologyLine(usize, &'static str),
    /// A link names an Axon the topology lacks, or a port above 14.
    BadLink(usize),
    /// Discovery timers that cannot work: a zero interval or refresh, or a probe timeout not
    /// longer than the probe interval.
    BadDiscoveryTimers,
}

impl fmt::Display for ControlConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControlConfigError::EmptyPool => write!(f, "dhcp pool is empty"),
            ControlConfigError::ServerInPool => write!(f, "server address lies in the dhcp pool"),
            ControlConfigError::ZeroLease => write!(f, "zero lease time"),
            ControlConfigError::NotInTopology(d) => write!(f, "device {d} is not in the topology"),
            ControlConfigError::TopologyLine(n, w) => write!(f, "topology line {n}: {w}"),
            ControlConfigError::BadLink(i) => write!(f, "topology link {i} names an unknown axon or port"),
            ControlConfigError::BadDiscoveryTimers => {
                write!(
                    f,
                    "discovery needs a non-zero probe interval and refresh, and a timeout above the interval"
                )
            }
        }
    }
}

impl std::error::Error for ControlConfigError {}
