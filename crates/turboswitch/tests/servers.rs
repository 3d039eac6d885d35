//! `turbo-servers` at its `--quick` size: the copies mode's controller makes payloads wait
//! about as long as a 40 us NF takes (the slides' example), losing nothing, and splitting cuts
//! what each NF server's link carries to the 72 B headers.

use tandem_turboswitch::config::Mode;
use tandem_turboswitch::model::common::base;
use tandem_turboswitch::model::kernel::{run, Phase};
use tandem_turboswitch::model::servers::{per_server_gbps, Approach, EXAMPLE_LATENCY};
use tandem_turboswitch::nf;
use tandem_turboswitch::types::US;

#[test]
fn copies_park_payloads_for_a_40us_nf() {
    let mut cfg = base(
        Mode::Copies,
        nf::fixed(EXAMPLE_LATENCY),
        vec![Phase {
            duration: 4_000 * US,
            gbps: 100.0,
        }],
        1,
    );
    cfg.warmup = 1_000 * US;
    let r = run(&cfg).expect("run");
    eprintln!(
        "parking {:.1} us, NF {:.1} us, {:.3} copies per split",
        r.payload_latency.mean, r.nf_latency.mean, r.copies_per_split
    );
    assert_eq!(r.lost_total(), 0);
    assert!((r.payload_latency.mean / r.nf_latency.mean - 1.0).abs() <= 0.20);
    assert!(r.copies_per_split > 0.0);
    assert!(per_server_gbps(Approach::TurboSwitch) > 10.0 * per_server_gbps(Approach::NoSplit));
}
