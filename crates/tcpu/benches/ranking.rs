//! The periodic ranking and swap decision of TCPU's large flow table (paper §3.1) for 10^4,
//! 10^5 and 10^6 flows, k = 4,096 TCAM slots, all full. The issue requires the decision for
//! 10^6 flows every 100 ms to cost well under 100 ms of one core.
//!
//! Each iteration refills every flow's interval byte count (untimed: in the core this happens
//! as packets and counters arrive) and then times one `FlowTable::rank` call: the pass that
//! closes the interval and collects candidates, the partial selection of the top k, and the
//! sort and pairing of the flows that must move.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use std::time::{Duration, Instant};
use tandem_tcpu::flow_table::{FlowTable, Placement, RankParams};
use tandem_tcpu::types::{FlowId, MS, SEC};

const K: u32 = 4_096;

/// A heavy-tailed rate for flow `i` in round `r` (deterministic, no RNG crate): a few
/// elephants, many mice, with ranks that shuffle between rounds so swaps happen.
fn rate(i: u32, r: u32) -> u64 {
    let h = (u64::from(i) ^ (u64::from(r) << 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let h = h ^ (h >> 29);
    let u = (h % 1_000_000) + 1;
    // Pareto-ish: 1e12 / u^2 capped.
    (1_000_000_000_000u64 / (u * u)).max(1)
}

fn table(n: u32) -> FlowTable {
    let mut t = FlowTable::new();
    for i in 0..n {
        let idx = t.insert(FlowId(i), i % 64, (i % 16) as u16, true, 0);
        if i < K {
            t.set_placement(idx, Placement::Asic);
        }
    }
    t
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("tcpu_rank");
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(8));
    for &n in &[10_000u32, 100_000, 1_000_000] {
        let mut t = table(n);
        let mut plan = Vec::new();
        let mut round = 0u32;
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    round = round.wrapping_add(1);
                    let mut i = 0u32;
                    t.for_each_mut(|e| {
                        e.interval_bytes = rate(i, round);
                        e.last_active = SEC;
                        i += 1;
                    });
                    let start = Instant::now();
                    let s = t.rank(
                        RankParams {
                            now: SEC,
                            free_slots: 0,
                            budget: 80 * MS,
                            insert_time: 70_701_358,
                            delete_time: 104_997_901,
                            t_inactive: SEC,
                            idle_timeout: 10 * SEC,
                        },
                        &mut plan,
                    );
                    total += start.elapsed();
                    black_box((&plan, s));
                }
                total
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
