//! `coswitch-compare --quick`: CoSwitch keeps the physical switch's table well below its TCAM
//! size and its CPU unsaturated at loads where physical only saturates, and loads the server
//! less than vswitch only.

use tandem_coswitch::model::compare::compare;
use tandem_coswitch::model::network::Approach;

#[test]
fn coswitch_relieves_both_switches() {
    let c = compare(true).expect("compare");
    let (vsw, phy, cos) = (
        c.of(Approach::VswitchOnly),
        c.of(Approach::PhysicalOnly),
        c.of(Approach::CoSwitch),
    );
    for p in &c.sweep {
        let o = &p.outcome;
        eprintln!(
            "{:>13} {:>5.0} kpps: server {:.3} switch {:.3} tcam max {} threshold {}",
            p.approach.name(),
            p.pps / 1e3,
            o.server_cpu,
            o.switch_cpu,
            o.tcam_max,
            o.threshold
        );
    }
    // 10 kpps: physical only saturates its CPU, CoSwitch does not come close.
    let at = |v: &[tandem_coswitch::model::sweep::Point], k: f64| {
        v.iter().find(|p| p.pps == k * 1e3).expect("load").outcome.clone()
    };
    assert!(at(&phy, 10.0).switch_cpu > 0.95);
    assert!(at(&cos, 10.0).switch_cpu < 0.5);
    // Entries: well below the TCAM.
    for (t, phys, co) in &c.timeouts {
        eprintln!(
            "timeout {t} s: physical only needs {}, CoSwitch {}",
            phys.outcome.tcam_max, co.outcome.tcam_max
        );
        assert!(
            co.outcome.tcam_max < 512,
            "CoSwitch needs {} entries",
            co.outcome.tcam_max
        );
        assert!(phys.outcome.tcam_max > 2 * co.outcome.tcam_max);
    }
    // 90 kpps: the server core does less work with CoSwitch.
    assert!(at(&cos, 90.0).server_cpu < at(&vsw, 90.0).server_cpu);
    assert!(
        at(&cos, 90.0).dropped(tandem_coswitch::model::network::DropReason::VswitchCpu)
            < at(&vsw, 90.0).dropped(tandem_coswitch::model::network::DropReason::VswitchCpu)
    );
}
