//! `axon-route-setup` at its quick size: the route setup rate follows the Table 4.3 bottleneck
//! model within 20%, every route completes, one idle route takes the four phases, and a run is
//! the same twice.

#![cfg(feature = "sim")]

use tandem_axon::control::SoftwareDelays;
use tandem_axon::model::route_setup::{bursts, phases_total_ps, run_burst, EXPERIMENT};

#[test]
fn route_setup_rate_follows_the_table_4_3_model() {
    for b in bursts(true) {
        let r = run_burst(&b).expect("run");
        assert_eq!(r.completed(), b.routes(), "{}: every route set up", b.name);
        assert!(r.routes.iter().all(|t| t.first_packet_ps.is_some()), "{}", b.name);
        eprintln!(
            "{}: {} routes in {:.3} ms: {:.0} routes/s (model {:.0})",
            b.name,
            b.routes(),
            r.span_ps as f64 / 1e9,
            r.routes_per_s,
            r.model_routes_per_s
        );
        if b.routes() > 1 {
            let rel = (r.routes_per_s - r.model_routes_per_s).abs() / r.model_routes_per_s;
            assert!(
                rel <= 0.2,
                "{}: {:.0} vs {:.0}",
                b.name,
                r.routes_per_s,
                r.model_routes_per_s
            );
            assert!(r.routes_per_s <= r.model_routes_per_s, "never faster than the software");
        } else {
            let lat = r.routes[0].first_packet_us().unwrap();
            let phases = phases_total_ps(&SoftwareDelays::default()) as f64 / 1e6;
            assert!(lat >= phases && lat <= phases * 1.05, "{lat} us vs {phases} us");
        }
    }
}

#[test]
fn route_setup_runs_are_deterministic() {
    let b = bursts(true)[0];
    assert_eq!(run_burst(&b).unwrap(), run_burst(&b).unwrap());
}

#[test]
fn route_setup_quick_experiment_writes_its_outputs() {
    let dir = std::env::temp_dir().join(format!("axon-route-setup-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let report = tandem_sim::experiment::run(&EXPERIMENT, true, &dir, &mut |_| {}).expect("run");
    assert_eq!(report.fails(), 0, "{report:#?}");
    for f in [
        "route_setup.csv",
        "arp_to_first_packet_cdf.png",
        "arp_to_first_packet_cdf.svg",
        "results.md",
    ] {
        assert!(dir.join(f).exists(), "{f}");
    }
    let csv = std::fs::read_to_string(dir.join("route_setup.csv")).unwrap();
    let again = dir.join("again");
    tandem_sim::experiment::run(&EXPERIMENT, true, &again, &mut |_| {}).expect("run");
    assert_eq!(csv, std::fs::read_to_string(again.join("route_setup.csv")).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}
