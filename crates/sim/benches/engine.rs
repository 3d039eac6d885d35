//! Engine speed: events per second on two small scenarios (criterion reports elements/s =
//! events/s). The scale run (k = 16 fat-tree) is `bench/sim-scale.sh`, not a criterion bench.
//!
//! * `bulk`: one NewReno flow over a 10 Gb/s dumbbell for 20 ms of simulated time;
//! * `incast`: 16 senders x 64 KB into one 10 Gb/s port, 100-packet queue;
//! * `fat_tree_k8`: 400 web-search flows at load 0.5 on a k = 8 fat-tree (128 hosts) for 5 ms:
//!   thousands of pending events, so the event queue's large-size behaviour shows.
//!
//! Plots are off (criterion's plotter needs system fonts), so `cargo bench -p tandem-sim`
//! runs anywhere.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tandem_sim::config::{LinkConfig, QueueConfig, SwitchConfig, TcpConfig};
use tandem_sim::packet::FlowId;
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::time::{MS, US};
use tandem_sim::topology::Topology;
use tandem_sim::workload::{finalize, poisson, FlowKind, FlowSizeCdf, FlowSpec, PoissonLimit};

fn link() -> LinkConfig {
    LinkConfig {
        rate_bps: 10_000_000_000,
        delay: 5 * US,
        framing_overhead: 24,
        l2_header: 14,
    }
}

fn bulk() -> Sim {
    let topo = Topology::dumbbell(1, 1, link(), link()).expect("dumbbell");
    let h = topo.hosts().to_vec();
    let flows = vec![FlowSpec {
        id: FlowId(0),
        src: h[0],
        dst: h[1],
        start: 0,
        bytes: 1 << 40,
        kind: FlowKind::Bulk,
    }];
    Sim::new(
        &topo,
        SwitchConfig::default(),
        QueueConfig {
            limit_packets: 1000,
            ..QueueConfig::default()
        },
        TcpConfig::default(),
        flows,
        1,
        SimOptions::default(),
    )
}

fn incast() -> Sim {
    let topo = Topology::star(17, link()).expect("star");
    let h = topo.hosts().to_vec();
    let flows = (0..16)
        .map(|i| FlowSpec {
            id: FlowId(i),
            src: h[i as usize + 1],
            dst: h[0],
            start: 0,
            bytes: 64 << 10,
            kind: FlowKind::Bulk,
        })
        .collect();
    Sim::new(
        &topo,
        SwitchConfig::default(),
        QueueConfig {
            limit_packets: 1000,
            ..QueueConfig::default()
        },
        TcpConfig::default(),
        flows,
        1,
        SimOptions::default(),
    )
}

fn fat_tree_k8() -> Sim {
    let l = LinkConfig {
        rate_bps: 10_000_000_000,
        delay: US,
        framing_overhead: 24,
        l2_header: 14,
    };
    let topo = Topology::fat_tree(8, l, l).expect("fat-tree");
    let cdf = FlowSizeCdf::builtin("websearch").expect("built-in CDF");
    let flows =
        finalize(poisson(&cdf, topo.hosts(), 0.5, l.rate_bps, 0, PoissonLimit::Flows(400), 1).expect("workload"));
    Sim::new(
        &topo,
        SwitchConfig::default(),
        QueueConfig {
            limit_packets: 10_000,
            ..QueueConfig::default()
        },
        TcpConfig {
            min_rto: MS,
            ..TcpConfig::default()
        },
        flows,
        1,
        SimOptions::default(),
    )
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine");
    g.sample_size(10);
    for (name, make, until) in [
        ("bulk", bulk as fn() -> Sim, 20 * MS),
        ("incast", incast as fn() -> Sim, 50 * MS),
        ("fat_tree_k8", fat_tree_k8 as fn() -> Sim, 5 * MS),
    ] {
        let mut probe = make();
        probe.run_until(until);
        g.throughput(Throughput::Elements(probe.events_processed()));
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut s = make();
                s.run_until(until);
                s.events_processed()
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = bench
}
criterion_main!(benches);
