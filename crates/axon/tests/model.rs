//! Quick versions of the `axon-*` experiments (CI): the ring's aggregate UDP goodput is at least
//! 1.8x the line's, per-hop Axon latency stays under 1.5 us for both frame sizes, cut-through
//! beats store-and-forward for large frames, the same seed gives the same CSV, and every
//! experiment's quick form runs and writes its files.

#![cfg(feature = "sim")]

use tandem_axon::model::bandwidth::{aggregate, run_case, Case};
use tandem_axon::model::congestion::{self, Point};
use tandem_axon::model::latency::{measure, Forwarder, SIZES, WARMUP};
use tandem_axon::model::topology::NodeKind;
use tandem_axon::ForwardingMode;
use tandem_sim::experiment::run;
use tandem_sim::time::MS;

#[test]
fn ring_doubles_udp_bandwidth() {
    let line = run_case(
        Case {
            kind: NodeKind::Axon,
            ring: false,
            tcp: false,
        },
        20 * MS,
    )
    .expect("line");
    let ring = run_case(
        Case {
            kind: NodeKind::Axon,
            ring: true,
            tcp: false,
        },
        20 * MS,
    )
    .expect("ring");
    let (l, r) = (aggregate(&line), aggregate(&ring));
    eprintln!("UDP aggregate: line {l:.0} Mb/s, ring {r:.0} Mb/s");
    assert!(r >= 1.8 * l, "line {l} ring {r}");
    assert!(r > 5_000.0 && r < 6_000.0, "{r}");
    let stp = run_case(
        Case {
            kind: NodeKind::Switch,
            ring: true,
            tcp: false,
        },
        20 * MS,
    )
    .expect("stp ring");
    let s = aggregate(&stp);
    eprintln!("UDP aggregate over STP switches, ring: {s:.0} Mb/s");
    assert!(s < 0.6 * r, "{s}");
}

#[test]
fn per_hop_latency_under_one_and_a_half_us() {
    for size in SIZES {
        for hops in [1, 5] {
            let us = measure(Forwarder::AxonCutThrough, hops, size, WARMUP + MS).expect("latency");
            eprintln!("{size} B, {hops} Axons: {us:.3} us");
            assert!(us / hops as f64 <= 1.5, "{size} B {hops} hops: {us}");
        }
        let sw = measure(Forwarder::Switch, 5, size, WARMUP + MS).expect("switch");
        let ax = measure(Forwarder::AxonCutThrough, 5, size, WARMUP + MS).expect("axon");
        assert!(sw > 5.0 * ax);
    }
}

#[test]
fn cut_through_helps_large_frames_under_load() {
    let rtt = |mode, size| {
        congestion::measure(
            Point {
                mode,
                size,
                load_mbps: 500,
            },
            5 * MS,
        )
        .expect("rr")
    };
    let (ct, sf) = (
        rtt(ForwardingMode::CutThrough, 1),
        rtt(ForwardingMode::StoreAndForward, 1),
    );
    eprintln!("1,514 B RTT: cut-through {ct:.1} us, store-and-forward {sf:.1} us");
    assert!(sf > ct + 50.0);
}

#[test]
fn pause_frames_keep_a_bulk_tcp_flow_lossless_at_the_header_limit() {
    use tandem_axon::model::common::{chain, SWITCH_LATENCY_PS};
    use tandem_axon::model::kernel::run as simulate;
    use tandem_axon::model::net::{App, Flow, NetParams};
    use tandem_axon::model::overhead::max_goodput_mbps;
    let (topo, a, b) = chain(NodeKind::Axon, 10);
    let flows = [Flow {
        src: a,
        dst: b,
        app: App::TcpBulk,
    }];
    let o = simulate(&topo, &NetParams::gbe(SWITCH_LATENCY_PS), &flows, 30 * MS, 10 * MS).expect("run");
    let expected = max_goodput_mbps(1500, Some(10));
    eprintln!(
        "10 Axons: {:.1} Mb/s (analytic {expected:.1}), {} PAUSEs",
        o.flows[0].mbps, o.pauses
    );
    assert_eq!((o.axon_drops, o.retransmits), (0, 0));
    assert!(o.pauses > 0);
    assert!(
        (o.flows[0].mbps - expected).abs() < 0.01 * expected,
        "{}",
        o.flows[0].mbps
    );
}

#[test]
fn quick_experiments_run_and_are_deterministic() {
    for exp in tandem_axon::experiments() {
        let dirs: Vec<tandem_testkit::Scratch> = (0..2).map(|_| tandem_testkit::Scratch::new(exp.name)).collect();
        let mut csvs = Vec::new();
        for d in &dirs {
            let t = std::time::Instant::now();
            let rep = run(&exp, true, d.path(), &mut |_| {}).expect(exp.name);
            eprintln!("{}: {:?}, {} rows", exp.name, t.elapsed(), rep.rows.len());
            assert!(d.join("results.md").exists());
            for f in &rep.files {
                assert!(d.join(f).exists(), "{} {f}", exp.name);
            }
            let mut all = String::new();
            for f in rep.files.iter().filter(|f| f.ends_with(".csv")) {
                all.push_str(&std::fs::read_to_string(d.join(f)).expect("csv"));
            }
            all.push_str(&std::fs::read_to_string(d.join("results.csv")).expect("results"));
            csvs.push(all);
        }
        assert_eq!(csvs[0], csvs[1], "{} is not deterministic", exp.name);
    }
}
