//! CoSwitch placed by a scenario file (`[[system]] kind = "coswitch"`): the shipped rack
//! scenario runs on the simulator's kernel, the ToR's table never holds more than its capacity,
//! the closed loop moves the threshold when the mouse rate steps up and keeps the table from
//! refusing rules where a fixed threshold does not, and runs are deterministic.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tandem_coswitch::model::placed::CoswitchKind;
use tandem_sim::limits::Limits;
use tandem_sim::run;
use tandem_sim::scenario::system::SystemKind;
use tandem_sim::scenario::Scenario;
use tandem_sim::time::MS;
use tandem_testkit::Scratch;

fn rack() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/systems/coswitch-rack.toml")
}

const KINDS: &[&dyn SystemKind] = &[&CoswitchKind];

fn load(sets: &[(&str, &str)]) -> Result<Scenario, String> {
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Scenario::load_with_systems(&rack(), &sets, &Limits::default(), KINDS).map_err(|e| e.to_string())
}

/// The ToR's counters every 100 ms of a run of the rack scenario.
fn trajectory(sc: &Scenario) -> Vec<BTreeMap<&'static str, f64>> {
    let mut sim = run::build(sc, None).unwrap();
    let tor = sc.systems[0].switches[0];
    let mut out = Vec::new();
    let mut t = 0;
    while t < sc.duration {
        t += 100 * MS;
        sim.run_until(t);
        out.push(sim.model(tor).unwrap().system_counters().into_iter().collect());
    }
    out
}

#[test]
fn the_closed_loop_follows_the_mouse_step_and_keeps_the_table_in_bounds() {
    let sc = load(&[]).unwrap();
    let adaptive = trajectory(&sc);
    let last = adaptive.last().unwrap();
    assert_eq!(last["servers"], 16.0);
    assert_eq!(last["table_capacity"], 200.0);
    assert!(last["peak_table_entries"] <= 200.0, "{last:?}");
    assert_eq!(
        last["table_full"], 0.0,
        "the loop keeps the table from refusing: {last:?}"
    );
    assert!(last["marked_flows"] > 0.0 && last["software_packets"] > 0.0, "{last:?}");
    // The mouse rate steps up at 1 s (t index 9 is 1.0 s): the threshold moves after it.
    let before = adaptive[9]["threshold"];
    let moved_after = adaptive[10..].iter().any(|c| c["threshold"] != before);
    assert!(moved_after, "threshold {before} at 1 s never moved after the step");
    assert!(last["threshold_steps"] >= 2.0, "{last:?}");

    // With the threshold fixed at 18 packets the same traffic overfills the 200-rule table.
    let fixed = load(&[("system[0].adaptive", "false")]).unwrap();
    let fixed = trajectory(&fixed);
    let flast = fixed.last().unwrap();
    assert!(fixed.iter().all(|c| c["threshold"] == 18.0));
    assert!(flast["table_full"] > 0.0, "{flast:?}");
    assert!(flast["peak_table_entries"] <= 200.0);
}

#[test]
fn runs_are_deterministic_and_summarised() {
    let sc = load(&[("duration", "600ms"), ("output.plots", "false")]).unwrap();
    let s = Scratch::new("coswitch-placed");
    let a = run::run(&sc, &s.join("a"), &mut |_| {}).unwrap();
    run::run(&sc, &s.join("b"), &mut |_| {}).unwrap();
    for f in ["summary.json", "flows.csv", "drops.csv", "queues.csv"] {
        assert_eq!(
            std::fs::read(s.join("a").join(f)).unwrap(),
            std::fs::read(s.join("b").join(f)).unwrap(),
            "{f} differs between two runs"
        );
    }
    let tor = &a.summary["systems"][0];
    assert_eq!(tor["kind"], "coswitch");
    assert!(
        tor["switches"]["switch0"]["marked_flows"].as_f64().unwrap() > 0.0,
        "{tor}"
    );
}

#[test]
fn parameters_are_checked() {
    let e = load(&[("system[0].period", "1ms")]).unwrap_err();
    assert!(e.contains("system[0].period: must be at least 10ms"), "{e}");
    let e = load(&[("system[0].threshold", "0")]).unwrap_err();
    assert!(e.contains("system[0].threshold: must be at least 1"), "{e}");
    let e = load(&[("system[0].upcall", "fast")]).unwrap_err();
    assert!(e.contains("system[0].upcall: expected a duration"), "{e}");
    let e = load(&[("system[0].table", "200")]).unwrap_err();
    assert!(e.contains("system[0].table: unknown field `table`"), "{e}");
    let e = load(&[("system[0].approach", "\"physical\"")]).unwrap_err();
    assert!(
        e.contains("system[0]") && e.contains("unknown variant `physical`"),
        "{e}"
    );
    let e = load(&[
        ("system[0].approach", "\"vswitch_only\""),
        ("system[0].elephant_rules", "\"reactive\""),
    ])
    .unwrap_err();
    assert!(
        e.contains("system[0].elephant_rules: applies to `approach = \"coswitch\"` only"),
        "{e}"
    );
}

/// The ToR's counters at the end of 600 ms of the rack with `sets`.
fn counters_after(sets: &[(&str, &str)]) -> BTreeMap<&'static str, f64> {
    let mut all = vec![("duration", "600ms")];
    all.extend_from_slice(sets);
    let sc = load(&all).unwrap();
    let mut sim = run::build(&sc, None).unwrap();
    sim.run_until(sc.duration);
    sim.model(sc.systems[0].switches[0])
        .unwrap()
        .system_counters()
        .into_iter()
        .collect()
}

#[test]
fn the_baselines_put_the_work_where_the_paper_says() {
    // Vswitch only and static rules: every packet through the vswitch, the ToR's control
    // plane idle. Physical only: a rule per flow on the ToR, packets that miss take its slow
    // path, the servers pay no upcalls. CoSwitch with reactive elephant rules: the marked
    // packets that miss take the slow path too; proactive (the default): none do.
    let v = counters_after(&[("system[0].approach", "\"vswitch_only\"")]);
    assert_eq!(
        (v["elephant_packets"], v["offloaded_flows"], v["switch_cpu_mean"]),
        (0.0, 0.0, 0.0)
    );
    assert!(v["upcalls"] > 0.0 && v["software_packets"] > 0.0);
    let st = counters_after(&[("system[0].approach", "\"static_rules\"")]);
    assert_eq!(
        (st["upcalls"], st["offloaded_flows"], st["switch_cpu_mean"]),
        (0.0, 0.0, 0.0)
    );
    let p = counters_after(&[("system[0].approach", "\"physical_only\"")]);
    assert!(p["offloaded_flows"] > 0.0 && p["slow_path_packets"] > 0.0, "{p:?}");
    assert_eq!((p["upcalls"], p["elephant_packets"]), (0.0, 0.0));
    assert!(p["peak_table_entries"] <= 200.0);
    let r = counters_after(&[("system[0].elephant_rules", "\"reactive\"")]);
    assert!(r["slow_path_packets"] > 0.0 && r["elephant_packets"] > 0.0, "{r:?}");
    let c = counters_after(&[]);
    assert_eq!(c["slow_path_packets"], 0.0);
    assert!(c["switch_cpu_mean"] < p["switch_cpu_mean"] && c["server_cpu_mean"] < v["server_cpu_mean"]);
}
