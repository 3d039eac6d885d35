//! The `tcpu-longflows` experiment's qualitative claim, at the `--quick` size: the deep buffer
//! (with long-flow pinning and Q_lflows) costs long TCP flows almost no throughput: within 5%
//! of the same switch without it, and both near the 1 GbE line rate.

use tandem_tcpu::model::longflows::{run_all, total, Setup, QUICK_DURATION, QUICK_NS};

#[test]
fn deep_buffer_keeps_long_flow_throughput() {
    let results = run_all(&QUICK_NS, QUICK_DURATION).expect("long-flow runs");
    for o in &results {
        eprintln!(
            "{} n={}: {:.1} Mb/s, ooo {}, fast recoveries {}, overtakes {}, drops {}+{}, pins {}, R_port {}",
            o.setup.name(),
            o.n,
            o.goodput_bps / 1e6,
            o.out_of_order,
            o.fast_recoveries,
            o.overtakes,
            o.queue_drops,
            o.cpu_drops,
            o.pins,
            o.rport_installs
        );
    }
    for &n in &QUICK_NS {
        let get = |s| {
            results
                .iter()
                .find(|o| o.setup == s && o.n == n)
                .map(|o| o.goodput_bps)
                .expect("every pair was run")
        };
        let (with, without) = (get(Setup::DeepBuffer), get(Setup::NoDeepBuffer));
        assert!(without > 850e6, "n = {n}: the flows fill most of 1 Gb/s: {without}");
        assert!(
            with >= 0.95 * without,
            "n = {n}: deep buffer within 5%: {with} vs {without}"
        );
    }
    let pins = total(&results, Setup::DeepBuffer, |o| o.pins);
    assert!(
        pins >= QUICK_NS.iter().map(|&n| u64::from(n)).sum::<u64>(),
        "every flow pinned: {pins}"
    );
    assert_eq!(total(&results, Setup::NoDeepBuffer, |o| o.pins), 0);
    assert_eq!(total(&results, Setup::DeepBuffer, |o| o.cpu_drops), 0);
}
