//! `ofbench` against our controller, in both modes, both versions and every size: responses
//! flow, the throughput mode batches, and the cbench RESULT line is printed.

mod common;

use common::controller;
use std::sync::atomic::Ordering;
use tandem_live::ofbench::{self, FrameSize, Mode, OfBenchConfig};
use tandem_wire::openflow::Version;

#[test]
fn ofbench_measures_our_controller_in_every_setting() {
    let ctl = controller(|_| {});
    for version in [Version::V1_0, Version::V1_3] {
        for (mode, size) in [
            (Mode::Throughput, FrameSize::B62),
            (Mode::Latency, FrameSize::B82),
            (Mode::Throughput, FrameSize::Mixed),
        ] {
            let cfg = OfBenchConfig {
                controller: ctl.addrs()[0],
                switches: 4,
                mode,
                size,
                version,
                loops: 3,
                loop_ms: 300,
                warmup: 1,
                macs: 1000,
                ..OfBenchConfig::default()
            };
            let mut out = Vec::new();
            let s = ofbench::run(cfg, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(s.min > 0.0, "{version:?} {mode:?} {size:?}: {text}");
            assert_eq!(s.per_loop.len(), 2);
            assert!(
                text.lines()
                    .last()
                    .unwrap()
                    .starts_with("RESULT: 4 switches 2 tests min/max/avg/stdev = "),
                "{text}"
            );
            assert_eq!(text.lines().filter(|l| l.contains("switches: flows/sec:")).count(), 3);
            assert_eq!(s.timeouts, 0, "{version:?} {mode:?}: every packet_in answered");
        }
    }
    let st = ctl.stats();
    assert!(
        st.batch_max.load(Ordering::Relaxed) > 1,
        "throughput mode builds batches"
    );
    assert_eq!(st.bad_messages.load(Ordering::Relaxed), 0);
}

#[test]
fn unreachable_controller_is_a_clear_error() {
    let cfg = OfBenchConfig {
        controller: "127.0.0.1:1".parse().unwrap(),
        connect_timeout: std::time::Duration::from_millis(200),
        ..OfBenchConfig::default()
    };
    let e = ofbench::run(cfg, &mut std::io::sink()).unwrap_err().to_string();
    assert!(e.contains("cannot connect to the controller at 127.0.0.1:1"), "{e}");
}
