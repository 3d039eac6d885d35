//! `axon-failover` at its quick size: after a link on the path fails, traffic resumes within a
//! bounded time, with a failure notice and with probe-timeout detection, nothing is lost once it
//! flows again, and a run is the same twice.

#![cfg(feature = "sim")]

use tandem_axon::model::failover::{run_setup, setups, Detection, EXPERIMENT};

const US: u64 = 1_000_000;

#[test]
fn traffic_resumes_after_a_link_failure() {
    for s in setups(true) {
        let o = run_setup(&s).expect("run");
        let rec = o.recovery_ps.expect("traffic resumes");
        eprintln!(
            "{}: recovery {:.1} us, {} of {} lost, path {:?} -> {:?}",
            s.detection.name(),
            rec as f64 / 1e6,
            o.lost(),
            o.sent(),
            o.path_before,
            o.path_after
        );
        assert_ne!(o.path_before, o.path_after, "rerouted");
        assert_eq!(
            o.path_after.len(),
            3,
            "the other side of the ring: 2 links and the host port"
        );
        assert_ne!(o.path_after[0], o.path_before[0], "out of the other ring port");
        assert_eq!(o.lost_after_recovery, 0);
        match s.detection {
            Detection::Notice => {
                assert!(rec <= 30 * US, "{rec}");
                assert!(o.lost() <= 2, "{}", o.lost());
            }
            Detection::ProbeTimeout(d) => {
                assert!(
                    rec >= d.probe_timeout_ps - d.probe_interval_ps,
                    "not before the timeout"
                );
                assert!(rec <= d.probe_timeout_ps + 30 * US, "{rec}");
                assert!(o.lost() <= (d.probe_timeout_ps + 30 * US) / s.period_ps + 1);
            }
        }
    }
}

#[test]
fn failover_runs_are_deterministic() {
    for s in setups(true) {
        assert_eq!(run_setup(&s).unwrap(), run_setup(&s).unwrap());
    }
}

#[test]
fn failover_quick_experiment_writes_its_outputs() {
    let dir = std::env::temp_dir().join(format!("axon-failover-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let report = tandem_sim::experiment::run(&EXPERIMENT, true, &dir, &mut |_| {}).expect("run");
    assert_eq!(report.fails(), 0, "{report:#?}");
    for f in [
        "failover_arrivals.csv",
        "failover_arrivals.png",
        "failover_arrivals.svg",
        "results.md",
    ] {
        assert!(dir.join(f).exists(), "{f}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
