//! `turbo-latency` at a small size: TurboSwitch's NF latency is below the no-split baseline's
//! (and PayloadPark's), by about the calibrated third, with nothing lost.

use tandem_turboswitch::model::common::MIX;
use tandem_turboswitch::model::latency::{run_setup, Setup};
use tandem_turboswitch::types::MS;
use tandem_turboswitch::Mode;

#[test]
fn turboswitch_nf_latency_is_below_the_baselines() {
    let run = |mode| {
        run_setup(&Setup {
            mode,
            gbps: 90.0,
            sizes: MIX,
            duration: MS / 2,
        })
        .expect("run")
    };
    let (ns, pp, ts) = (run(Mode::NoSplit), run(Mode::PayloadPark), run(Mode::Recirculate));
    eprintln!(
        "NF latency: no split {:.2} us, PayloadPark {:.2} us, TurboSwitch {:.2} us",
        ns.nf_latency.mean, pp.nf_latency.mean, ts.nf_latency.mean
    );
    assert!(ts.nf_latency.mean < pp.nf_latency.mean);
    assert!(pp.nf_latency.mean < ns.nf_latency.mean);
    let reduction = 1.0 - ts.nf_latency.mean / ns.nf_latency.mean;
    assert!((0.28..0.40).contains(&reduction), "{reduction}");
    for r in [&ns, &pp, &ts] {
        assert!(r.accounted());
        assert_eq!(r.lost_total(), 0);
        assert_eq!(r.in_flight, 0);
    }
}
