//! Scale run: a k-ary fat-tree with Poisson web-search flows at a given load.
//!
//! ```sh
//! cargo run --release -p tandem-sim --example fat_tree_scale -- [K] [FLOWS] [LOAD]
//! ```
//! Defaults: k = 16 (1,024 hosts, 320 switches), 100,000 flows, load 0.5; 10 Gb/s links with
//! 1 us delay, 100-packet queues, NewReno with Linux defaults except a 1 ms minimum RTO (a
//! common data-center setting). Runs until every flow has finished or eight simulated seconds
//! after the last arrival; prints one JSON object (wall time, events, packets per second,
//! peak memory from /proc/self/status).
//!
//! Why eight seconds: the SYN and SYN-ACK keep Linux's (and RFC 6298's) 1 s initial RTO, so a
//! flow whose SYN or SYN-ACK is dropped at a full switch queue (a few percent of flows at load
//! 0.5) only retries after 1 s, and again after 2 s and 4 s. A one-second horizon cut exactly
//! those flows off (250 of 10,000 left "incomplete", all still in the handshake);
//! `incomplete_in_handshake` counts any flow that is still waiting for its handshake.

use serde_json::json;
use std::time::Instant;
use tandem_sim::config::{LinkConfig, QueueConfig, SwitchConfig, TcpConfig};
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::time::{as_secs, MS, SEC, US};
use tandem_sim::topology::Topology;
use tandem_sim::workload::{finalize, poisson, FlowSizeCdf, PoissonLimit};

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<f64>().ok()))
        .map_or(0.0, |kib| kib / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let k: u32 = args.first().and_then(|a| a.parse().ok()).unwrap_or(16);
    let n: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let load: f64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(0.5);
    let link = LinkConfig {
        rate_bps: 10_000_000_000,
        delay: US,
        framing_overhead: 24,
        l2_header: 14,
    };
    let t0 = Instant::now();
    let topo = Topology::fat_tree(k, link, link).expect("fat-tree");
    let cdf = FlowSizeCdf::builtin("websearch").expect("built-in CDF");
    let flows =
        finalize(poisson(&cdf, topo.hosts(), load, link.rate_bps, 0, PoissonLimit::Flows(n), 1).expect("workload"));
    let last_arrival = flows.last().map_or(0, |f| f.start);
    let tcp = TcpConfig {
        min_rto: MS,
        ..TcpConfig::default()
    };
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
        tcp,
        flows,
        1,
        SimOptions::default(),
    );
    let build_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let end = last_arrival + 8 * SEC;
    let mut t = 0;
    while t < end {
        t = (t + 10 * MS).min(end);
        sim.run_until(t);
        let done = sim.flow_results().all(|f| f.1.end.is_some());
        if done {
            break;
        }
    }
    let run_s = t1.elapsed().as_secs_f64();
    let mut completed = 0;
    let mut fct: Vec<f64> = Vec::new();
    let mut bytes = 0u64;
    let mut packets = 0u64;
    let mut in_handshake = 0;
    for (_, r, eps) in sim.flow_results() {
        if let Some(e) = r.end {
            completed += 1;
            fct.push(as_secs(e - r.start) * 1e6);
        } else if eps[0].is_some_and(|e| !e.is_established() && !e.is_failed()) {
            in_handshake += 1;
        }
        bytes += r.delivered;
        packets += eps.iter().flatten().map(|e| e.stats().segments_sent).sum::<u64>();
    }
    fct.sort_by(f64::total_cmp);
    let (_, peak_pkts) = sim.packets_in_flight();
    println!(
        "{}",
        json!({
            "k": k, "hosts": topo.hosts().len(), "switches": topo.switches().len(), "flows": n, "load": load,
            "completed": completed, "incomplete_in_handshake": in_handshake, "simulated_s": as_secs(sim.now()), "last_arrival_s": as_secs(last_arrival),
            "delivered_bytes": bytes, "tcp_segments_sent": packets,
            "events": sim.events_processed(), "build_s": build_s, "run_s": run_s,
            "events_per_s": sim.events_processed() as f64 / run_s,
            "segments_per_wall_s": packets as f64 / run_s,
            "peak_packets_in_flight": peak_pkts, "packet_bytes": std::mem::size_of::<tandem_sim::packet::Packet>(),
            "fct_us_p50": tandem_sim::report::quantile(&fct, 0.5), "fct_us_p99": tandem_sim::report::quantile(&fct, 0.99),
            "peak_rss_mib": peak_rss_mib(),
        })
    );
}
