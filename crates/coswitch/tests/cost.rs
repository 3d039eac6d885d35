//! The `coswitch-cost` experiment (paper Figure 7) at its `--quick` size: the model's account of
//! each server core's time adds up, and with every flow in the vswitch most of it goes to the
//! elephants' packets, much more than to the mice's, with network I/O a further part.

use tandem_coswitch::model::cost::measure;
use tandem_coswitch::model::network::{Approach, NetConfig};
use tandem_coswitch::types::SEC;

#[test]
fn elephants_cost_the_vswitch_most() {
    let cfg = NetConfig {
        duration: 8 * SEC,
        warmup: 4 * SEC,
        ..NetConfig::default()
    };
    let splits = measure(4, &cfg).expect("runs");
    let v = splits
        .iter()
        .find(|s| s.approach == Approach::VswitchOnly)
        .expect("vswitch only");
    let c = v.cost;
    eprintln!("{c:?}");
    assert_eq!(c.arbiter, 0, "no arbiter without CoSwitch");
    assert!(c.elephants > 2 * c.mice, "{c:?}");
    assert!(c.io > 0 && c.mice > 0);
    let shares = v.share(c.io) + v.share(c.mice) + v.share(c.elephants) + v.share(c.arbiter);
    assert!((shares - 1.0).abs() < 1e-9);
    let co = splits
        .iter()
        .find(|s| s.approach == Approach::CoSwitch)
        .expect("CoSwitch");
    assert!(co.cost.arbiter > 0);
    assert!(
        co.cost.total() <= c.total(),
        "CoSwitch never costs the servers more here"
    );
}
