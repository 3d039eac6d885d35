//! Whole-model bookkeeping: the same seed gives the same run; under buffer pressure every
//! packet is delivered, lost once with a reason, or in flight; lost headers are reclaimed.

use proptest::prelude::*;
use tandem_turboswitch::config::{CoreConfig, Mode, SwitchConfig};
use tandem_turboswitch::model::common::MIX;
use tandem_turboswitch::model::kernel::{run, Phase, SimConfig};
use tandem_turboswitch::nf;
use tandem_turboswitch::types::US;
use tandem_turboswitch::DropReason;

fn cfg(mode: Mode, buffer: u64, gbps: f64, seed: u64) -> SimConfig {
    SimConfig {
        core: CoreConfig {
            mode,
            reclaim_timeout: 100 * US,
            ..CoreConfig::default()
        },
        switch: SwitchConfig {
            buffer_bytes: buffer,
            ..SwitchConfig::default()
        },
        nf: nf::fixed(20 * US),
        phases: vec![Phase {
            duration: 100 * US,
            gbps,
        }],
        sizes: MIX,
        warmup: 20 * US,
        bin: 10 * US,
        seed,
    }
}

#[test]
fn same_seed_same_run() {
    let a = run(&cfg(Mode::Copies, 22_000_000, 80.0, 7)).unwrap();
    let b = run(&cfg(Mode::Copies, 22_000_000, 80.0, 7)).unwrap();
    assert_eq!(a, b);
    let c = run(&cfg(Mode::Copies, 22_000_000, 80.0, 8)).unwrap();
    assert_ne!(a.nf_samples, c.nf_samples);
}

#[test]
fn headers_lost_in_a_full_buffer_are_reclaimed() {
    // 60 KB of buffer cannot hold 20 us of 100 Gb/s payload: payloads and headers are dropped,
    // slots whose part was dropped time out.
    let r = run(&cfg(Mode::Recirculate, 60_000, 100.0, 1)).unwrap();
    assert!(r.lost_total() > 0);
    assert!(r.core.reclaimed > 0, "{:?}", r.core);
    assert!(r
        .lost
        .contains_key(&DropReason::BufferFull(tandem_turboswitch::core::QueueKind::Recirc)));
    assert!(r.accounted());
    assert_eq!(r.in_flight, 0, "everything resolved after the reclaim timeout");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn every_packet_is_accounted_for(
        mode in prop::sample::select(vec![Mode::NoSplit, Mode::PayloadPark, Mode::Recirculate, Mode::Copies]),
        buffer in 5_000u64..400_000,
        gbps in 5.0f64..120.0,
        seed in 0u64..1000,
    ) {
        let r = run(&cfg(mode, buffer, gbps, seed)).unwrap();
        prop_assert!(r.accounted(), "{:?} {:?}", mode, r.lost);
        prop_assert_eq!(r.in_flight, 0);
        prop_assert!(r.max_buffer <= buffer);
    }
}
