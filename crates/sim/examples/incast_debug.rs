//! Prints per-flow TCP counters of one incast round (16 x 64 KB into a 100-packet queue).
use tandem_sim::config::{LinkConfig, QueueConfig, SwitchConfig, TcpConfig};
use tandem_sim::packet::FlowId;
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::time::{as_secs, SEC, US};
use tandem_sim::topology::Topology;
use tandem_sim::workload::{FlowKind, FlowSpec};

fn main() {
    let link = LinkConfig {
        rate_bps: 1_000_000_000,
        delay: 25 * US,
        framing_overhead: 0,
        l2_header: 14,
    };
    let topo = Topology::star(17, link).expect("star");
    let h = topo.hosts().to_vec();
    let flows = (0..16)
        .map(|i| FlowSpec {
            id: FlowId(i),
            src: h[i as usize + 1],
            dst: h[0],
            start: 0,
            bytes: 65_536,
            kind: FlowKind::Bulk,
        })
        .collect();
    let sw = SwitchConfig {
        queue: QueueConfig {
            limit_packets: 100,
            ..QueueConfig::default()
        },
        ..SwitchConfig::default()
    };
    let mut sim = Sim::new(
        &topo,
        sw,
        QueueConfig {
            limit_packets: 10_000,
            ..QueueConfig::default()
        },
        TcpConfig::default(),
        flows,
        1,
        SimOptions::default(),
    );
    sim.run_until(10 * SEC);
    for (spec, r, eps) in sim.flow_results() {
        let s = eps[0].map(|e| e.stats().clone());
        println!(
            "flow {} end {:?} delivered {} {:?}",
            spec.id.0,
            r.end.map(as_secs),
            r.delivered,
            s
        );
    }
}
