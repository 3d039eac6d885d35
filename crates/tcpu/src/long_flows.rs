//! Long flows (paper §3.2.2).
//!
//! TCP tries to fill the link, so a long flow would keep an output queue above Q_redirect and
//! be forwarded by the CPU for its whole life. The CPU therefore counts every flow's bytes
//! (CPU-forwarded plus ASIC counter growth) and, once a flow has carried
//! [`TcpuConfig::long_flow_bytes`] (50 KB), pins it with a high-priority rule R_flow_j that
//! beats R_port and puts it in its own traffic class, whose queue limit Q_lflows (50 packets) is
//! below Q_redirect (80), so long flows no longer trigger the redirect.
//!
//! The threshold is inclusive: the packet that brings the count to exactly 50,000 bytes makes
//! the flow long. Only TCP flows are pinned by default, so an attacker's UDP bursts (which pass
//! 50 KB within a single 200 KB burst) keep going through the redirect and the detector.
//! A pin needs a TCAM slot: a free one, else an evicted inactive or slowest non-pinned entry
//! (chosen by [`crate::flow_table::FlowTable::pick_victim`]); pins use the urgent channel lane.

use crate::config::TcpuConfig;
use crate::types::{FlowId, Rule, RuleAction, RuleMatch};

/// True when a flow that had carried `before` bytes and now has carried `after` has just become
/// long.
pub fn crosses(cfg: &TcpuConfig, before: u64, after: u64) -> bool {
    cfg.long_flows && before < cfg.long_flow_bytes && after >= cfg.long_flow_bytes
}

/// Whether a flow of this protocol may be pinned.
pub fn eligible(cfg: &TcpuConfig, is_tcp: bool) -> bool {
    cfg.long_flows && (is_tcp || !cfg.long_flows_tcp_only)
}

/// R_flow_j: the long-flow rule, above R_port, in the long-flow class.
pub fn long_flow_rule(cfg: &TcpuConfig, flow: FlowId, port: u16) -> Rule {
    Rule {
        priority: cfg.prio_long,
        matches: RuleMatch::Flow(flow),
        action: RuleAction::Output {
            port,
            class: Some(cfg.long_flow_class),
        },
    }
}

/// R_flow_i: the ordinary per-flow rule of the large flow table, below R_port.
pub fn flow_rule(cfg: &TcpuConfig, flow: FlowId, port: u16) -> Rule {
    Rule {
        priority: cfg.prio_flow,
        matches: RuleMatch::Flow(flow),
        action: RuleAction::Output { port, class: None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_inclusive_and_tcp_only() {
        let c = TcpuConfig::default();
        assert!(!crosses(&c, 0, 49_999));
        assert!(crosses(&c, 49_999, 50_000));
        assert!(!crosses(&c, 50_000, 51_000));
        assert!(eligible(&c, true));
        assert!(!eligible(&c, false));
        let r = long_flow_rule(&c, FlowId(3), 2);
        assert!(r.priority > c.prio_port && flow_rule(&c, FlowId(3), 2).priority < c.prio_port);
    }
}
