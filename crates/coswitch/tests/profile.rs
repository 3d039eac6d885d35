//! `coswitch-profile --quick`: the two kinds of switch behave as the paper profiled them.
//! Static rules load only the server core, which saturates at high packet rates; reactive
//! control saturates the physical switch's CPU at a few kpps while the virtual switch
//! shrugs the same load off.

use tandem_coswitch::model::profile::sweeps;

#[test]
fn static_rules_load_the_server_and_reactive_rules_the_switch() {
    let s = sweeps(true).expect("sweeps");
    for p in &s.static_rules {
        eprintln!("static {:.0} kpps: server {:.3}", p.pps / 1e3, p.outcome.server_cpu);
        assert_eq!(p.outcome.switch_cpu, 0.0, "static rules cost the switch CPU nothing");
    }
    let server = |i: usize| s.static_rules[i].outcome.server_cpu;
    assert!(server(0) < server(1) && server(1) < server(2), "linear growth");
    assert!(server(2) > 0.95, "saturated at 90 kpps");
    assert!(server(0) < 0.7, "not at 40 kpps");
    let (low, high) = (&s.physical[0], s.physical.last().expect("points"));
    eprintln!(
        "physical: {:.1} kpps cpu {:.3}, {:.1} kpps cpu {:.3}",
        low.pps / 1e3,
        low.outcome.switch_cpu,
        high.pps / 1e3,
        high.outcome.switch_cpu
    );
    assert!(low.outcome.switch_cpu < 0.5, "2 kpps is well within the switch CPU");
    assert!(high.outcome.switch_cpu > 0.95, "9 kpps saturates it");
    let v = s.vswitch.last().expect("points");
    assert!(
        v.outcome.server_cpu < 0.3,
        "the vswitch handles 9 kpps of new flows easily"
    );
}
