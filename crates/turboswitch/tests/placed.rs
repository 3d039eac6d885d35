//! TurboSwitch placed by a scenario file (`[[system]] kind = "turboswitch"`): the shipped
//! rack scenario runs on the simulator's kernel in every mode, every packet sent through the
//! NF path is emitted, lost with a reason or still in flight, splitting spares the NF the
//! payloads, and runs are deterministic.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tandem_sim::limits::Limits;
use tandem_sim::run;
use tandem_sim::scenario::system::SystemKind;
use tandem_sim::scenario::Scenario;
use tandem_testkit::Scratch;
use tandem_turboswitch::model::placed::TurboswitchKind;

fn rack() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/systems/turboswitch-rack.toml")
}

const KINDS: &[&dyn SystemKind] = &[&TurboswitchKind];

fn load(sets: &[(&str, &str)]) -> Result<Scenario, String> {
    let mut all = vec![("duration", "4ms"), ("flows[0].duration", "3ms")];
    all.extend_from_slice(sets);
    let sets: Vec<(String, String)> = all.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Scenario::load_with_systems(&rack(), &sets, &Limits::default(), KINDS).map_err(|e| e.to_string())
}

/// The switch's counters at the end of a run in `mode`.
fn counters(mode: &str) -> BTreeMap<&'static str, f64> {
    let sc = load(&[("system[0].mode", mode)]).unwrap();
    let mut sim = run::build(&sc, None).unwrap();
    sim.run_until(sc.duration);
    let sw = sc.systems[0].switches[0];
    sim.model(sw).unwrap().system_counters().into_iter().collect()
}

#[test]
fn every_mode_accounts_for_every_packet() {
    let mut nf_latency = BTreeMap::new();
    for mode in ["recirculate", "copies", "payloadpark", "no_split"] {
        let c = counters(mode);
        assert!(c["packets"] > 1000.0, "{mode}: {c:?}");
        assert_eq!(
            c["packets"],
            c["emitted"] + c["lost"] + c["in_flight"],
            "{mode}: every packet emitted, lost or in flight: {c:?}"
        );
        nf_latency.insert(mode, c["nf_latency_mean_us"]);
        match mode {
            "no_split" => {
                assert_eq!(c["parked_payloads"], 0.0);
                assert_eq!(c["whole_to_nf"], c["packets"]);
            }
            "recirculate" => assert!(c["recirculations"] >= c["parked_payloads"], "{c:?}"),
            "copies" => assert!(c["copies"] > 0.0, "{c:?}"),
            _ => assert!(c["parked_payloads"] > 0.0, "{c:?}"),
        }
    }
    // Only headers reach the NF when the switch splits: its latency is lower than with whole
    // packets (the calibrated forwarder costs per byte).
    assert!(nf_latency["recirculate"] < nf_latency["no_split"], "{nf_latency:?}");
    assert!(nf_latency["copies"] < nf_latency["no_split"], "{nf_latency:?}");
}

#[test]
fn runs_are_deterministic_and_summarised() {
    let sc = load(&[("system[0].mode", "copies"), ("output.plots", "false")]).unwrap();
    let s = Scratch::new("turboswitch-placed");
    let a = run::run(&sc, &s.join("a"), &mut |_| {}).unwrap();
    run::run(&sc, &s.join("b"), &mut |_| {}).unwrap();
    for f in ["summary.json", "flows.csv", "drops.csv", "queues.csv"] {
        assert_eq!(
            std::fs::read(s.join("a").join(f)).unwrap(),
            std::fs::read(s.join("b").join(f)).unwrap(),
            "{f} differs between two runs"
        );
    }
    let sys = &a.summary["systems"][0];
    assert_eq!(sys["kind"], "turboswitch");
    assert!(
        sys["switches"]["switch0"]["parked_payloads"].as_f64().unwrap() > 0.0,
        "{sys}"
    );
}

#[test]
fn only_the_chosen_traffic_passes_the_nf() {
    // In a star every port leads to a host: nothing enters "to the hosts" from the fabric.
    let sc = load(&[("system[0].through", "to_hosts")]).unwrap();
    let mut sim = run::build(&sc, None).unwrap();
    sim.run_until(sc.duration);
    let c: BTreeMap<_, _> = sim
        .model(sc.systems[0].switches[0])
        .unwrap()
        .system_counters()
        .into_iter()
        .collect();
    assert_eq!(c["packets"], 0.0);
}

#[test]
fn parameters_are_checked() {
    let e = load(&[("system[0].mode", "fast")]).unwrap_err();
    assert!(e.contains("system[0].mode: unknown variant `fast`"), "{e}");
    let e = load(&[("system[0].slots", "0")]).unwrap_err();
    assert!(e.contains("system[0].slots: slots must be at least 1"), "{e}");
    let e = load(&[("system[0].nf_latency", "0")]).unwrap_err();
    assert!(e.contains("system[0].nf_latency: must be above 0"), "{e}");
    let e = load(&[("system[0].nf_order", "random")]).unwrap_err();
    assert!(e.contains("system[0].nf_order: unknown variant `random`"), "{e}");
}
