//! `turbo-controller` at a small size: the copies controller keeps payload parking time within
//! 20% of the NF latency in steady state while the load changes, makes more copies at lower
//! load, and with a fixed target holds the parking queue at it.

use tandem_turboswitch::config::{CoreConfig, Mode, SwitchConfig};
use tandem_turboswitch::model::common::MIX;
use tandem_turboswitch::model::controller::run_setup;
use tandem_turboswitch::model::kernel::{run, Phase, SimConfig};
use tandem_turboswitch::nf;
use tandem_turboswitch::types::{MS, US};

#[test]
fn payload_latency_tracks_nf_latency_and_copies_follow_the_load() {
    let (r, phases) = run_setup(MS, 3).expect("run");
    for p in &phases {
        eprintln!(
            "{} Gb/s: parking {:.2} us, NF {:.2} us, {:.2} copies per payload",
            p.gbps, p.payload_us, p.nf_us, p.copies
        );
        assert!((p.payload_us / p.nf_us - 1.0).abs() < 0.2, "{p:?}");
    }
    // Phases: 100, 60, 20 Gb/s: copies go up as the load goes down.
    assert!(phases[0].copies < phases[1].copies && phases[1].copies < phases[2].copies);
    assert!(r.accounted() && r.lost_total() == 0 && r.copies_refused == 0);
}

#[test]
fn a_fixed_target_is_held() {
    let cfg = SimConfig {
        core: CoreConfig {
            mode: Mode::Copies,
            target_delay: Some(20 * US),
            ..CoreConfig::default()
        },
        switch: SwitchConfig::default(),
        nf: nf::fixed(10 * US),
        phases: vec![Phase {
            duration: MS,
            gbps: 50.0,
        }],
        sizes: MIX,
        warmup: 200 * US,
        bin: 10 * US,
        seed: 4,
    };
    let r = run(&cfg).expect("run");
    // 20 us at 100 Gb/s = 250,000 bytes.
    let err = r.park_bytes_mean / 250_000.0 - 1.0;
    eprintln!("queue {:.0} B ({:+.2}%)", r.park_bytes_mean, err * 100.0);
    assert!(err.abs() < 0.02);
    assert!((r.park_wait_us - 20.0).abs() < 0.5);
}
