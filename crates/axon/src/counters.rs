//! Counters, with one per reason a frame can be dropped.

use tandem_wire::axon::error::ErrorCode;

/// Why the device dropped a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The event named a port the device does not have.
    NoSuchPort,
    /// It arrived on a port whose link is down.
    InputLinkDown,
    /// It arrived on a port whose bootstrap has not finished.
    PortUnclassified,
    /// Longer than the configured maximum frame.
    Oversize,
    /// A host port's frame too short for an Ethernet header.
    MalformedEthernet,
    /// An Axon port's frame whose Axon header does not parse, or whose encapsulated frame is too
    /// short for the host port it was bound for.
    MalformedAxon,
    /// A frame from the control plane whose Axon header does not parse.
    MalformedFromControlPlane,
    /// Its next hop is a port whose link is down.
    OutputLinkDown,
    /// Its next hop is a port whose bootstrap has not finished.
    OutputUnclassified,
    /// Its buffer at the output port was full.
    OutputBufferFull,
    /// It was waiting at an output port when that port's link went down.
    FlushedOnLinkDown,
    /// A host port sent more frames for the control plane (ARP, DHCP, broadcasts, misses) than
    /// its share ([`crate::DeviceConfig::upcall_rate_per_s`]).
    UpcallRateLimited,
}

impl DropReason {
    /// Every reason, in counter order.
    pub const ALL: [DropReason; 12] = [
        DropReason::NoSuchPort,
        DropReason::InputLinkDown,
        DropReason::PortUnclassified,
        DropReason::Oversize,
        DropReason::MalformedEthernet,
        DropReason::MalformedAxon,
        DropReason::MalformedFromControlPlane,
        DropReason::OutputLinkDown,
        DropReason::OutputUnclassified,
        DropReason::OutputBufferFull,
        DropReason::FlushedOnLinkDown,
        DropReason::UpcallRateLimited,
    ];

    /// Position in [`DropReason::ALL`].
    pub fn index(self) -> usize {
        DropReason::ALL.iter().position(|r| *r == self).unwrap_or(0)
    }

    /// Short name for CSV.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::NoSuchPort => "no-such-port",
            DropReason::InputLinkDown => "input-link-down",
            DropReason::PortUnclassified => "port-unclassified",
            DropReason::Oversize => "oversize",
            DropReason::MalformedEthernet => "malformed-ethernet",
            DropReason::MalformedAxon => "malformed-axon",
            DropReason::MalformedFromControlPlane => "malformed-from-control-plane",
            DropReason::OutputLinkDown => "output-link-down",
            DropReason::OutputUnclassified => "output-unclassified",
            DropReason::OutputBufferFull => "output-buffer-full",
            DropReason::FlushedOnLinkDown => "flushed-on-link-down",
            DropReason::UpcallRateLimited => "upcall-rate-limited",
        }
    }
}

/// What the device has done since it was created.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// Frames received on Ethernet ports.
    pub received: u64,
    /// Frames injected by the control plane.
    pub from_control_plane: u64,
    /// Frames handed to the driver to send (PAUSE and hellos included).
    pub transmitted: u64,
    /// Frames stripped of their Axon header for a host port.
    pub stripped: u64,
    /// Frames handed to the control plane.
    pub to_control_plane: u64,
    /// Host frames whose route was found through the CAM.
    pub cam_hits: u64,
    /// Host frames whose route was found from a masqueraded MAC.
    pub masquerade_hits: u64,
    /// Host frames with no valid route (sent to the control plane).
    pub lookup_misses: u64,
    /// Host broadcast and multicast frames (sent to the control plane).
    pub broadcasts: u64,
    /// Error reports: no forward hop left.
    pub errors_no_forward_hop: u64,
    /// Error reports: a non-Ethernet frame bound for a host port.
    pub errors_wrong_type: u64,
    /// Error reports: a hop naming a port the device lacks.
    pub errors_no_such_port: u64,
    /// Error reports: the reverse path was full.
    pub errors_reverse_path_full: u64,
    /// PAUSE frames sent to hosts (self-congestion).
    pub pauses_sent: u64,
    /// Hellos and hello replies sent.
    pub hellos_sent: u64,
    /// Hellos and hello replies received.
    pub hellos_received: u64,
    /// Probe records appended.
    pub probe_stamps: u64,
    drops: [u64; DropReason::ALL.len()],
}

impl Counters {
    /// Frames dropped for `reason`.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.drops[reason.index()]
    }

    /// Frames dropped for any reason.
    pub fn dropped_total(&self) -> u64 {
        self.drops.iter().sum()
    }

    pub(crate) fn count_drop(&mut self, reason: DropReason) {
        self.drops[reason.index()] += 1;
    }

    pub(crate) fn count_error(&mut self, code: ErrorCode) {
        match code {
            ErrorCode::NoForwardHop => self.errors_no_forward_hop += 1,
            ErrorCode::WrongType => self.errors_wrong_type += 1,
            ErrorCode::NoSuchPort => self.errors_no_such_port += 1,
            ErrorCode::ReversePathFull | ErrorCode::Unknown(_) => self.errors_reverse_path_full += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_counter_per_reason() {
        let mut c = Counters::default();
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(r.index(), i);
            for _ in 0..=i {
                c.count_drop(*r);
            }
        }
        assert_eq!(c.dropped(DropReason::FlushedOnLinkDown), 11);
        assert_eq!(c.dropped(DropReason::UpcallRateLimited), 12);
        assert_eq!(c.dropped_total(), 78);
        let names: std::collections::BTreeSet<_> = DropReason::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(names.len(), DropReason::ALL.len());
    }
}
