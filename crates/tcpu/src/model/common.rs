//! Helpers shared by the TCPU experiments: the paper's testbed network, model counters and
//! output files.

use super::SIM_CLASSES;
use tandem_sim::config::{BufferConfig, Ecmp, Forwarding, LinkConfig, Marking, QueueConfig, SwitchConfig};
use tandem_sim::experiment::ExperimentError;
pub use tandem_sim::experiment::{counters_csv, par_map, threads, write};
use tandem_sim::packet::NodeId;
use tandem_sim::sim::Sim;
use tandem_sim::time::{Time, US};
use tandem_sim::topology::{NodeKind, Topology};

/// Ports of the testbed switch (paper §4: 16 x GbE).
pub const PORTS: u32 = 16;
/// Port speed (1 Gb/s).
pub const PORT_BPS: u64 = 1_000_000_000;
/// Q_limit in packets (paper §4).
pub const Q_LIMIT: u32 = 100;
/// One-way delay of every link (**ours**: 25 us, a 100 us base RTT).
pub const LINK_DELAY: Time = 25 * US;
/// A full-sized frame on the wire (MSS + 40 bytes of TCP/IP + 14 of Ethernet).
pub const FULL_FRAME: u64 = 1460 + 40 + 14;

/// The testbed: `hosts` hosts on one switch over 1 Gb/s links of [`LINK_DELAY`] with 24 B
/// Ethernet framing. Returns the topology, its hosts (host `i` on port `i`) and the switch.
pub fn testbed(hosts: u32, name: &str) -> Result<(Topology, Vec<NodeId>, NodeId), ExperimentError> {
    let link = LinkConfig {
        rate_bps: PORT_BPS,
        delay: LINK_DELAY,
        framing_overhead: 24,
        l2_header: 14,
    };
    let topo = Topology::star(hosts, link).map_err(|e| ExperimentError(format!("{name}: {e}")))?;
    let h = topo.hosts().to_vec();
    let sw = *topo
        .switches()
        .first()
        .ok_or_else(|| ExperimentError(format!("{name}: no switch")))?;
    Ok((topo, h, sw))
}

/// The switch: dedicated egress queues of [`Q_LIMIT`] packets, store-and-forward; with
/// [`SIM_CLASSES`] strict-priority classes when the TCPU model runs on it, else one.
pub fn switch_config(tcpu: bool, marking: Marking) -> SwitchConfig {
    SwitchConfig {
        queue: QueueConfig {
            classes: if tcpu { SIM_CLASSES } else { 1 },
            limit_packets: Q_LIMIT,
            class_limit_packets: [None; 8],
            limit_bytes: 0,
            marking,
        },
        buffer: BufferConfig::Dedicated,
        forwarding: Forwarding::StoreAndForward,
        pipeline_latency: 0,
        ecmp: Ecmp::Flow,
    }
}

/// Host NIC queues: deep enough that hosts do not drop their own packets.
pub fn host_queue() -> QueueConfig {
    QueueConfig {
        limit_packets: 10_000,
        ..QueueConfig::default()
    }
}

/// A counter from a model's report, 0 when absent.
pub fn counter(report: &[(String, f64)], key: &str) -> f64 {
    report.iter().find(|(n, _)| n == key).map_or(0.0, |(_, v)| *v)
}

/// Packets dropped by the egress queues of every switch.
pub fn switch_drops(sim: &Sim) -> u64 {
    sim.nodes()
        .iter()
        .filter(|n| n.kind == NodeKind::Switch)
        .flat_map(|n| n.ports.iter())
        .map(|p| p.queues.stats.dropped())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_map_keeps_order() {
        let v: Vec<u32> = (0..20).collect();
        assert_eq!(par_map(&v, 3, |x| x * 2), v.iter().map(|x| x * 2).collect::<Vec<_>>());
        assert!(par_map(&[] as &[u32], 2, |x| *x).is_empty());
        assert_eq!(counter(&[("a".into(), 2.0)], "a"), 2.0);
        assert_eq!(counter(&[], "a"), 0.0);
    }
}
