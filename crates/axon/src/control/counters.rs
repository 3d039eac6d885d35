//! What the control plane did and what it refused, by reason.

use std::collections::BTreeMap;

/// Why the control plane dropped an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ControlDrop {
    /// An upcall whose Axon header could not be read.
    MalformedAxon,
    /// An upcalled host frame that is not valid Ethernet.
    MalformedEthernet,
    /// An ARP frame that is not valid Ethernet/IPv4 ARP.
    MalformedArp,
    /// A UDP/67 frame that is not a valid DHCP client message (bad IPv4, UDP or DHCP).
    MalformedDhcp,
    /// A control message that could not be read.
    MalformedControl,
    /// A DHCP message type the server does not answer (INFORM, server messages, ...).
    DhcpIgnored,
    /// A REQUEST naming another server: our offer is withdrawn, nothing is sent.
    DhcpOtherServer,
    /// No free address left in the pool.
    PoolExhausted,
    /// A new client on a host port that already holds its share of leases and offers
    /// ([`super::dhcp_server::LEASES_PER_PORT`]): one host cannot bind the whole pool.
    PortLeaseCap,
    /// A RELEASE or DECLINE for a lease held on another host port: only the port that holds a
    /// lease can give it back (another host could otherwise free and take a victim's address).
    DhcpForeignPort,
    /// A host's data frame with no valid route (traffic before its route is valid, §3.2.3).
    Unrouted,
    /// Broadcast or multicast traffic other than ARP and DHCP (not flooded, §3.4).
    BroadcastNotHandled,
    /// An ARP request for an address no Axon's pool holds.
    UnknownTarget,
    /// No path to the Axon that owns the target.
    NoPath,
    /// The host port's route memory is full.
    RouteMemoryFull,
    /// An Axon-ARP request for a host this Axon does not know.
    TargetHostUnknown,
    /// An Axon-ARP reply or host ARP reply that matches no transaction.
    NoTransaction,
    /// An Axon-ARP transaction that timed out.
    TransactionTimeout,
    /// The data plane refused a route install or removal.
    RouteRejected,
    /// An error report from the data plane (a route led nowhere).
    DataPlaneError,
    /// An ARP request already being resolved (repeat while Axon-ARP runs).
    AlreadyPending,
    /// ARP traffic that needs no answer (replies not part of a transaction, probes for
    /// addresses not known, requests for the requester's own address).
    ArpIgnored,
    /// A probe or probe echo that could not be read or whose records do not fit a link.
    MalformedProbe,
    /// A topology advertisement that could not be read.
    MalformedAdvert,
    /// A probe or advertisement while discovery is off.
    DiscoveryOff,
}

/// Event and drop counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControlCounters {
    /// DHCP offers sent.
    pub dhcp_offers: u64,
    /// DHCP acks sent (new bindings and renewals).
    pub dhcp_acks: u64,
    /// DHCP naks sent.
    pub dhcp_naks: u64,
    /// Leases released by their clients.
    pub dhcp_releases: u64,
    /// Leases (or offers) that expired.
    pub dhcp_expired: u64,
    /// ARP requests answered without Axon-ARP (local hosts, the server, refreshes).
    pub arp_answered: u64,
    /// Gratuitous ARPs learned (never flooded).
    pub arp_gratuitous: u64,
    /// Axon-ARP transactions started (Phase I).
    pub axon_arp_started: u64,
    /// Axon-ARP transactions finished at this source (Phase IV).
    pub axon_arp_completed: u64,
    /// Routes installed.
    pub routes_installed: u64,
    /// Routes removed (idle, failure with no path left).
    pub routes_removed: u64,
    /// Routes recomputed and reinstalled after a link failure.
    pub routes_rerouted: u64,
    /// Probes sent out of Axon ports (discovery).
    pub probes_sent: u64,
    /// Probes from neighbors echoed back.
    pub probes_echoed: u64,
    /// Echoes of our own probes received (each gives a link latency).
    pub probe_echoes: u64,
    /// Links to neighbors learned (or learned again after a timeout).
    pub links_learned: u64,
    /// Links whose neighbor stopped answering probes.
    pub links_timed_out: u64,
    /// Topology advertisements sent (own and flooded).
    pub adverts_sent: u64,
    /// Topology advertisements received that were new.
    pub adverts_accepted: u64,
    drops: BTreeMap<ControlDrop, u64>,
}

impl ControlCounters {
    /// Counts a drop.
    pub fn count_drop(&mut self, why: ControlDrop) {
        *self.drops.entry(why).or_insert(0) += 1;
    }
    /// Drops for a reason.
    pub fn dropped(&self, why: ControlDrop) -> u64 {
        self.drops.get(&why).copied().unwrap_or(0)
    }
    /// All drops.
    pub fn total_dropped(&self) -> u64 {
        self.drops.values().sum()
    }
}
