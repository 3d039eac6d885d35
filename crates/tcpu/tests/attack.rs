//! The `tcpu-attack` experiment's qualitative claim, at the `--quick` size: with the defense
//! the TCP flow keeps more than half of its no-attack throughput against the largest quick
//! number of attackers; without it, TCP gets less.

use tandem_tcpu::model::attack::{run_all, tcp_bps, Setup, QUICK_DURATION};

#[test]
fn defense_keeps_tcp_above_half_its_no_attack_throughput() {
    let n = 14;
    let results = run_all(&[0, n], QUICK_DURATION).expect("attack runs");
    let get = |s, k| tcp_bps(&results, s, k).expect("every pair was run");
    let (base_d, with) = (get(Setup::Defense, 0), get(Setup::Defense, n));
    let (base_p, without) = (get(Setup::NoDefense, 0), get(Setup::NoDefense, n));
    for o in &results {
        eprintln!(
            "{} n={}: TCP {:.1} Mb/s, attack {:.1} Mb/s, drops {}, TCP timeouts {}, detected {}",
            o.setup.name(),
            o.attackers,
            o.tcp_bps / 1e6,
            o.attack_bps / 1e6,
            o.drops,
            o.tcp_timeouts,
            o.detected
        );
    }
    assert!(
        base_d > 900e6 && base_p > 900e6,
        "one TCP flow alone fills most of 1 Gb/s"
    );
    assert!(
        with > 0.5 * base_d,
        "defense keeps > 50% of no-attack throughput: {with} vs {base_d}"
    );
    assert!(without < with, "without the defense TCP gets less: {without} vs {with}");
    assert!(
        without < 0.5 * base_p,
        "the attack hurts TCP without the defense: {without}"
    );
    let detected = results
        .iter()
        .find(|o| o.setup == Setup::Defense && o.attackers == n)
        .map_or(0, |o| o.detected);
    assert_eq!(detected, u64::from(n), "every attacker is classified");
}
