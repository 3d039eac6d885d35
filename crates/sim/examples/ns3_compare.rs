//! The Tandem side of `bench/sim-vs-ns3.sh`: the three validation scenarios of
//! `bench/ns3/` (bulk, incast, dctcp) built with the same parameters, printing one JSON
//! object with the same metric names as the ns-3 programs.
//!
//! ```sh
//! cargo run --release -p tandem-sim --example ns3_compare -- bulk [--quick]
//! cargo run --release -p tandem-sim --example ns3_compare -- incast [--quick]
//! cargo run --release -p tandem-sim --example ns3_compare -- dctcp|dctcp-newreno [--quick]
//! ```
//!
//! Parameters (identical to bench/ns3 defaults): 1 Gb/s links of 25 us each (100 us base RTT
//! host to host), MSS 1448 with timestamps, SACK on, delayed ACK 2 segments / 40 ms, initial
//! window 10, min RTO 200 ms, initial RTO 1 s, 100-packet switch queues, 10,000-packet host
//! queues. Framing overhead 0 bytes: our frames carry a 14-byte Ethernet header where ns-3's
//! point-to-point links carry a 2-byte PPP header (1514 vs 1502 bytes per full segment, 0.8%).

use serde_json::json;
use std::time::Instant;
use tandem_sim::config::{CcAlgo, LinkConfig, Marking, QueueConfig, SwitchConfig, TcpConfig};
use tandem_sim::packet::{FlowId, NodeId};
use tandem_sim::report::quantile;
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::time::{as_secs, Time, SEC, US};
use tandem_sim::topology::{LinkSpec, NodeKind, NodeSpec, Topology};
use tandem_sim::workload::{FlowKind, FlowSpec};

const GBPS: u64 = 1_000_000_000;
const FULL: u64 = 1514;

fn link(rate: u64) -> LinkConfig {
    LinkConfig {
        rate_bps: rate,
        delay: 25 * US,
        framing_overhead: 0,
    }
}

fn host_q() -> QueueConfig {
    QueueConfig {
        limit_packets: 10_000,
        ..QueueConfig::default()
    }
}

fn switch(marking: Marking) -> SwitchConfig {
    SwitchConfig {
        queue: QueueConfig {
            limit_packets: 100,
            marking,
            ..QueueConfig::default()
        },
        ..SwitchConfig::default()
    }
}

fn tcp_stats(sim: &Sim) -> (u64, u64, u64) {
    let (mut retx, mut to, mut segs) = (0, 0, 0);
    for (_, _, eps) in sim.flow_results() {
        for s in eps.iter().flatten().map(|e| e.stats()) {
            retx += s.retransmits;
            to += s.data_timeouts + s.syn_timeouts;
            segs += s.segments_sent;
        }
    }
    (retx, to, segs)
}

fn switch_counts(sim: &Sim) -> (u64, u64) {
    let mut drops = 0;
    let mut marks = 0;
    for n in sim.nodes().iter().filter(|n| n.kind == NodeKind::Switch) {
        for p in &n.ports {
            drops += p.queues.stats.dropped();
            marks += p.queues.stats.marked;
        }
    }
    (drops, marks)
}

fn bulk(quick: bool) -> serde_json::Value {
    let duration = if quick { SEC } else { 10 * SEC };
    let nodes = vec![
        NodeSpec {
            name: "h0".into(),
            kind: NodeKind::Host,
        },
        NodeSpec {
            name: "h1".into(),
            kind: NodeKind::Host,
        },
        NodeSpec {
            name: "switch0".into(),
            kind: NodeKind::Switch,
        },
    ];
    let links = vec![
        LinkSpec {
            a: NodeId(0),
            b: NodeId(2),
            cfg: link(10 * GBPS),
        },
        LinkSpec {
            a: NodeId(2),
            b: NodeId(1),
            cfg: link(GBPS),
        },
    ];
    let topo = Topology::new(nodes, links).expect("topology");
    let flows = vec![FlowSpec {
        id: FlowId(0),
        src: NodeId(0),
        dst: NodeId(1),
        start: 0,
        bytes: 1 << 50,
        kind: FlowKind::Bulk,
    }];
    let start = Instant::now();
    let mut sim = Sim::new(
        &topo,
        switch(Marking::None),
        host_q(),
        TcpConfig::default(),
        flows,
        1,
        SimOptions::default(),
    );
    sim.run_until(duration);
    let wall = start.elapsed().as_secs_f64();
    let delivered = sim.flow_results().next().map_or(0, |f| f.1.delivered);
    let (retx, to, _) = tcp_stats(&sim);
    let (drops, _) = switch_counts(&sim);
    json!({"program": "bulk", "simulator": "tandem", "duration_s": as_secs(duration),
        "goodput_bps": delivered as f64 * 8.0 / as_secs(duration), "rx_bytes": delivered,
        "drops": drops, "retransmits": retx, "timeouts": to, "wall_s": wall, "events": sim.events_processed()})
}

fn incast(quick: bool) -> serde_json::Value {
    let rounds = if quick { 10 } else { 100 };
    let topo = Topology::star(17, link(GBPS)).expect("star");
    let h = topo.hosts().to_vec();
    let (mut rct, mut fct) = (Vec::new(), Vec::new());
    let (mut drops, mut retx, mut to, mut events, mut bytes) = (0, 0, 0, 0, 0u64);
    let start = Instant::now();
    // Barrier model as bench/ns3/incast.cc: a round starts when the previous one has delivered
    // every byte; each round uses new connections on an idle network, so each round is its own
    // simulation (the state a round leaves behind is only FIN/ACK packets in flight).
    for round in 0..rounds {
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
        let mut sim = Sim::new(
            &topo,
            switch(Marking::None),
            host_q(),
            TcpConfig::default(),
            flows,
            1 + round,
            SimOptions::default(),
        );
        sim.run_until(100 * SEC);
        let mut last: Time = 0;
        for (_, r, _) in sim.flow_results() {
            let e = r.end.unwrap_or(Time::MAX);
            last = last.max(e);
            fct.push(as_secs(e - r.start));
            bytes += r.delivered;
        }
        rct.push(as_secs(last));
        let (r, t, _) = tcp_stats(&sim);
        retx += r;
        to += t;
        drops += switch_counts(&sim).0;
        events += sim.events_processed();
    }
    let wall = start.elapsed().as_secs_f64();
    rct.sort_by(f64::total_cmp);
    fct.sort_by(f64::total_cmp);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let total: f64 = rct.iter().sum();
    json!({"program": "incast", "simulator": "tandem", "rounds": rounds,
        "round_completion": {"mean_s": mean(&rct), "p99_s": quantile(&rct, 0.99)},
        "flow_completion": {"flows": fct.len(), "mean_s": mean(&fct), "p99_s": quantile(&fct, 0.99)},
        "goodput_bps": bytes as f64 * 8.0 / total, "drops": drops, "retransmits": retx, "timeouts": to,
        "wall_s": wall, "events": events})
}

fn dctcp(quick: bool, dctcp: bool) -> serde_json::Value {
    let duration = if quick { SEC } else { 10 * SEC };
    let topo = Topology::star(5, link(GBPS)).expect("star");
    let h = topo.hosts().to_vec();
    let flows = (0..4)
        .map(|i| FlowSpec {
            id: FlowId(i),
            src: h[i as usize + 1],
            dst: h[0],
            start: 0,
            bytes: 1 << 50,
            kind: FlowKind::Bulk,
        })
        .collect();
    // ns-3: RED with MinTh = MaxTh = 20 packets and QW = 1 marks when the queue already holds
    // 20 packets; in bytes of full frames that is "more than 20 x 1514 - 1".
    let (marking, tcp) = if dctcp {
        (
            Marking::Threshold { k_bytes: 20 * FULL - 1 },
            TcpConfig {
                cc: CcAlgo::Dctcp { g: 1.0 / 16.0 },
                ecn: true,
                ..TcpConfig::default()
            },
        )
    } else {
        (Marking::None, TcpConfig::default())
    };
    let sw = topo.switches()[0];
    // Port 0 of switch0 leads to h0, the receiver.
    let opts = SimOptions {
        queue_sample_interval: 100 * US,
        sample_ports: vec![(sw, 0)],
    };
    let start = Instant::now();
    let mut sim = Sim::new(&topo, switch(marking), host_q(), tcp, flows, 1, opts);
    sim.run_until(duration);
    let wall = start.elapsed().as_secs_f64();
    let per_flow: Vec<f64> = sim
        .flow_results()
        .map(|f| f.1.delivered as f64 * 8.0 / as_secs(duration))
        .collect();
    let total: f64 = per_flow.iter().sum();
    let jain = total * total / (per_flow.len() as f64 * per_flow.iter().map(|x| x * x).sum::<f64>());
    let mut q: Vec<f64> = sim.samples.iter().map(|s| f64::from(s.packets)).collect();
    q.sort_by(f64::total_cmp);
    let (retx, to, _) = tcp_stats(&sim);
    let (drops, marks) = switch_counts(&sim);
    json!({"program": "dctcp", "simulator": "tandem", "cc": if dctcp { "dctcp" } else { "newreno" },
        "goodput_bps": total, "flow_goodput_bps": per_flow, "jain_fairness": jain,
        "queue_mean_pkts": q.iter().sum::<f64>() / q.len().max(1) as f64, "queue_p99_pkts": quantile(&q, 0.99),
        "drops": drops, "marks": marks, "retransmits": retx, "timeouts": to, "wall_s": wall, "events": sim.events_processed()})
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let v = match args.first().map(String::as_str) {
        Some("bulk") => bulk(quick),
        Some("incast") => incast(quick),
        Some("dctcp") => dctcp(quick, true),
        Some("dctcp-newreno") => dctcp(quick, false),
        _ => {
            eprintln!("usage: ns3_compare bulk|incast|dctcp|dctcp-newreno [--quick]");
            std::process::exit(2);
        }
    };
    println!("{v}");
}
