//! Engine speed: events per second on two small scenarios (criterion reports elements/s =
//! events/s). The scale run (k = 16 fat-tree) is `bench/sim-scale.sh`, not a criterion bench.
//!
//! * `bulk`: one NewReno flow over a 10 Gb/s dumbbell for 20 ms of simulated time;
//! * `incast`: 16 senders x 64 KB into one 10 Gb/s port, 100-packet queue.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tandem_sim::config::{LinkConfig, QueueConfig, SwitchConfig, TcpConfig};
use tandem_sim::packet::FlowId;
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::time::{MS, US};
use tandem_sim::topology::Topology;
use tandem_sim::workload::{FlowKind, FlowSpec};

fn link() -> LinkConfig {
    LinkConfig {
        rate_bps: 10_000_000_000,
        delay: 5 * US,
        framing_overhead: 24,
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

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine");
    g.sample_size(10);
    for (name, make, until) in [
        ("bulk", bulk as fn() -> Sim, 20 * MS),
        ("incast", incast as fn() -> Sim, 50 * MS),
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

criterion_group!(benches, bench);
criterion_main!(benches);
