//! Topology discovery by probes on the testbed: a ring finds its exact topology without a
//! configuration file, probe timestamps give the link latency, and a cut link goes away after
//! the probe timeout.

#![cfg(feature = "sim")]

use std::collections::BTreeSet;
use tandem_axon::control::{DiscoveryConfig, Endpoint};
use tandem_axon::testbed::{FailureNotice, LineSpec, Testbed};

const US: u64 = 1_000_000;

fn ring(n: u64) -> (LineSpec, Testbed) {
    let mut spec = LineSpec::ring(n);
    spec.ports = 4;
    spec.delay_ps = 1_500_000;
    spec.discovery = Some(DiscoveryConfig::default());
    let tb = spec.build().unwrap();
    (spec, tb)
}

/// The up links every control plane knows, as sorted endpoint pairs.
fn known_links(tb: &Testbed, device: u64) -> BTreeSet<(Endpoint, Endpoint)> {
    let topo = tb.node(device).unwrap().control().topology();
    topo.links()
        .iter()
        .filter(|l| l.up)
        .map(|l| if l.a <= l.b { (l.a, l.b) } else { (l.b, l.a) })
        .collect()
}

#[test]
fn a_ring_of_four_discovers_its_exact_topology() {
    let (spec, mut tb) = ring(4);
    tb.run_until(1_000 * US);
    let truth: BTreeSet<_> = spec
        .links()
        .into_iter()
        .map(|(a, b)| if a <= b { (a, b) } else { (b, a) })
        .collect();
    assert_eq!(truth.len(), 4);
    for d in 1..=4 {
        assert_eq!(known_links(&tb, d), truth, "axon {d}");
        let cp = tb.node(d).unwrap().control();
        assert_eq!(cp.topology().axons().count(), 4);
        assert_eq!(cp.discovery().unwrap().adjacencies().len(), 2);
        assert!(cp.counters().probes_sent >= 2 * 9, "a probe round every 100 us");
    }
}

#[test]
fn a_ring_of_three_discovers_its_exact_topology_and_latency() {
    let (spec, mut tb) = ring(3);
    tb.run_until(500 * US);
    let truth: BTreeSet<_> = spec
        .links()
        .into_iter()
        .map(|(a, b)| if a <= b { (a, b) } else { (b, a) })
        .collect();
    for d in 1..=3 {
        assert_eq!(known_links(&tb, d), truth);
        let disc = tb.node(d).unwrap().control().discovery().unwrap();
        for a in disc.adjacencies().values() {
            assert_eq!(a.latency_ps, Some(1_500_000), "the configured propagation delay");
        }
        // Latencies measured elsewhere arrive in the advertisements.
        for (a, b) in &truth {
            assert_eq!(disc.latency_at(*a), Some(1_500_000));
            assert_eq!(disc.latency_at(*b), Some(1_500_000));
        }
    }
}

#[test]
fn a_cut_link_disappears_after_the_probe_timeout() {
    let (_, mut tb) = ring(4);
    tb.run_until(1_000 * US);
    let cut = Endpoint { device: 2, port: 1 };
    tb.fail_link_at(1_000 * US, cut, FailureNotice::Nobody);
    tb.run_until(1_000 * US + 200 * US);
    assert_eq!(known_links(&tb, 4).len(), 4, "not yet: within the timeout");
    tb.run_until(1_000 * US + 400 * US);
    for d in 1..=4 {
        let links = known_links(&tb, d);
        assert_eq!(links.len(), 3, "axon {d}");
        assert!(links.iter().all(|(a, b)| *a != cut && *b != cut));
    }
    let timed_out: u64 = (1..=4)
        .map(|d| tb.node(d).unwrap().control().counters().links_timed_out)
        .sum();
    assert_eq!(timed_out, 2, "both ends noticed");
}

#[test]
fn discovery_runs_are_deterministic() {
    let run = || {
        let (_, mut tb) = ring(4);
        tb.run_until(2_000 * US);
        (1..=4)
            .map(|d| {
                let cp = tb.node(d).unwrap().control();
                (cp.counters().clone(), cp.topology().clone())
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}
