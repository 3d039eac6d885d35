//! Shared vocabulary: time in picoseconds, flow and packet handles, and the ASIC rules the core
//! asks for.
//!
//! Rules are deliberately close to the simulator's `switch::Rule` (a priority, a match on a
//! flow / an output port / a source, and an output-or-CPU action) so that an adapter maps them
//! one to one.

use serde::{Deserialize, Serialize};

pub use tandem_time::{tx_time, Time, MS, SEC, US};

/// Time one operation takes on a channel doing `ops_per_sec` operations per second, rounded up.
/// A zero rate returns `Time::MAX`.
#[inline]
pub fn op_time(ops_per_sec: u64) -> Time {
    if ops_per_sec == 0 {
        return Time::MAX;
    }
    SEC.div_ceil(ops_per_sec)
}

/// A flow (one exact TCP/IP 5-tuple). Simulated flows are numbered, so the core keys on a
/// compact id; a live driver maps real 5-tuples to ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct FlowId(pub u32);

/// The caller's handle for a packet the CPU holds in DRAM (the simulator's packet id, a live
/// driver's buffer index). The core never looks inside; it hands it back in
/// [`crate::Action::SendFromCpu`] or [`crate::Action::Drop`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct PacketRef(pub u64);

/// What an ASIC rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleMatch {
    /// One flow exactly: an exact 5-tuple TCAM entry (R_flow), with a byte counter.
    Flow(FlowId),
    /// Every packet the ASIC would send out of this port (R_port, the deep-buffer redirect).
    OutPort(u16),
    /// Every packet from this source host (the attack-defense redirect to the CPU shaper).
    Src(u32),
}

/// What an ASIC rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleAction {
    /// Forward out of `port` in traffic class `class` (`None`: the port's default class).
    Output {
        /// Egress port.
        port: u16,
        /// Traffic class (the long-flow class, whose queue limit is Q_lflows), if any.
        class: Option<u8>,
    },
    /// Send to the CPU over the internal link.
    ToCpu,
}

/// One ASIC rule: within the ASIC the highest priority among matching rules wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Higher wins (see [`crate::config::TcpuConfig::prio_flow`] and friends).
    pub priority: u16,
    /// What it matches.
    pub matches: RuleMatch,
    /// What it does.
    pub action: RuleAction,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_and_op_times() {
        assert_eq!(tx_time(1500, 1_000_000_000), 12 * US);
        assert_eq!(tx_time(1, 0), Time::MAX);
        assert_eq!(op_time(14_144), 70_701_358);
        assert_eq!(op_time(0), Time::MAX);
        assert_eq!(tx_time(u64::MAX, 1), Time::MAX);
    }
}
