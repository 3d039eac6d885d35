//! `turbo-selfclock` at a small size: with no parameter set, payloads make C / R_payload
//! recirculation passes (about one at 100 Gb/s), the queueing time per pass is the queue over
//! the port rate, the queue grows with the input, and the parking time follows the NF latency
//! (at most 60% above it in this mode; see docs/systems/turboswitch.md for why not 20%).

use tandem_turboswitch::model::selfclock::run_setup;
use tandem_turboswitch::types::MS;

#[test]
fn recirculation_self_clocks() {
    let lo = run_setup(30.0, MS).expect("run");
    let hi = run_setup(100.0, MS).expect("run");
    for r in [&lo, &hi] {
        let payload_gbps = r.window_gbps * (1.0 - 64.0 / 782.0);
        let expected = 100.0 / payload_gbps;
        eprintln!(
            "{:.1} Gb/s: {:.3} passes (C/R {:.3}), queue {:.0} B, wait {:.2} us, parking {:.2} us, NF {:.2} us",
            r.window_gbps,
            r.passes_per_payload,
            expected,
            r.park_bytes_mean,
            r.park_wait_us,
            r.payload_latency.mean,
            r.nf_latency.mean
        );
        assert!((r.passes_per_payload / expected - 1.0).abs() < 0.1);
        assert!((r.park_wait_us / (r.park_bytes_mean / 12_500.0) - 1.0).abs() < 0.1);
        let ratio = r.payload_latency.mean / r.nf_latency.mean;
        assert!((1.0..1.6).contains(&ratio), "{ratio}");
        assert!(r.accounted() && r.lost_total() == 0);
    }
    assert!(
        hi.passes_per_payload < 1.2,
        "about one recirculation per packet at 100 Gb/s"
    );
    assert!(
        hi.park_bytes_mean > 2.0 * lo.park_bytes_mean,
        "queue grows with the input"
    );
}
