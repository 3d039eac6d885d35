//! `[[system]]` entries, with a test kind that counts the packets entering its switches: the
//! entries are checked like every other key, each named switch gets the queues and a model of
//! its own, `summary.json` lists their counters, and runs stay deterministic.

use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;
use tandem_sim::config::QueueConfig;
use tandem_sim::packet::{NodeId, PacketId};
use tandem_sim::run;
use tandem_sim::scenario::system::{Placement, Site, SystemKind};
use tandem_sim::scenario::{Scenario, ScenarioError};
use tandem_sim::switch::{SwitchCtx, SwitchModel, Verdict};
use tandem_sim::units::TimeArg;
use tandem_testkit::Scratch;

/// Kind `"counter"`: counts packets; `classes` sets its switches' queue classes; `hold`
/// must be a duration.
struct CounterKind;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CounterParams {
    classes: Option<u8>,
    #[allow(dead_code)]
    hold: Option<TimeArg>,
}

#[derive(Debug)]
struct CounterPlacement {
    classes: Option<u8>,
    switches: Vec<NodeId>,
}

struct Counter {
    packets: u64,
    node: NodeId,
}

impl SwitchModel for Counter {
    fn on_ingress(&mut self, _cx: &mut SwitchCtx<'_>, _in_port: u16, _pkt: PacketId) -> Verdict {
        self.packets += 1;
        Verdict::Continue
    }
    fn system_counters(&self) -> Vec<(&'static str, f64)> {
        vec![("packets", self.packets as f64), ("node", f64::from(self.node.0))]
    }
}

impl SystemKind for CounterKind {
    fn name(&self) -> &'static str {
        "counter"
    }
    fn place(&self, site: &Site<'_>, params: toml::Value) -> Result<Arc<dyn Placement>, ScenarioError> {
        let p: CounterParams = site.de(params)?;
        if p.classes == Some(0) {
            return Err(site.error("classes", "must be at least 1"));
        }
        Ok(Arc::new(CounterPlacement {
            classes: p.classes,
            switches: site.switches.to_vec(),
        }))
    }
}

impl Placement for CounterPlacement {
    fn queues(&self, _node: NodeId, base: QueueConfig) -> QueueConfig {
        QueueConfig {
            classes: self.classes.unwrap_or(base.classes),
            ..base
        }
    }
    fn model(&self, node: NodeId) -> Option<Box<dyn SwitchModel>> {
        self.switches
            .contains(&node)
            .then(|| Box::new(Counter { packets: 0, node }) as Box<dyn SwitchModel>)
    }
}

const BASE: &str = r#"
name = "systems"
duration = "2ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "10Gbps", delay = "1us" }
[[flows]]
kind = "bulk"
pairs = [["h0", "h3"], ["h1", "h2"]]
bytes = "200KB"
[output]
plots = false
"#;

fn parse(extra: &str) -> Result<Scenario, ScenarioError> {
    let text = format!("{BASE}{extra}");
    let kinds: &[&dyn SystemKind] = &[&CounterKind];
    Scenario::parse_with_systems(
        &text,
        "s.toml",
        "s",
        Path::new("."),
        &[],
        &tandem_sim::limits::Limits::default(),
        kinds,
    )
}

fn err(extra: &str) -> String {
    parse(extra).unwrap_err().to_string()
}

const PLACED: &str = r#"
[[system]]
kind = "counter"
switches = ["leaf0..leaf1"]
classes = 3
"#;

#[test]
fn placed_switches_get_queues_models_and_a_summary_section() {
    let sc = parse(PLACED).unwrap();
    assert_eq!(sc.systems.len(), 1);
    assert_eq!(sc.systems[0].kind, "counter");
    let sim = run::build(&sc, None).unwrap();
    let leaf0 = sc.topology.find("leaf0").unwrap();
    let spine0 = sc.topology.find("spine0").unwrap();
    assert_eq!(sim.nodes()[leaf0.0 as usize].ports[0].queues.config().classes, 3);
    assert_eq!(sim.nodes()[spine0.0 as usize].ports[0].queues.config().classes, 1);
    assert!(sim.model(leaf0).is_some() && sim.model(spine0).is_none());
    // Whoever attached a model reads it back as its own type, and only as that.
    assert_eq!(sim.model_as::<Counter>(leaf0).map(|c| c.node), Some(leaf0));
    assert!(sim.model_as::<Counter>(spine0).is_none());
    struct Other;
    impl SwitchModel for Other {}
    assert!(sim.model_as::<Other>(leaf0).is_none());

    let s = Scratch::new("systems");
    let a = run::run(&sc, &s.join("a"), &mut |_| {}).unwrap();
    let systems = &a.summary["systems"];
    assert_eq!(systems[0]["kind"], "counter");
    let leaf0_packets = systems[0]["switches"]["leaf0"]["packets"].as_f64().unwrap();
    assert!(leaf0_packets > 100.0, "{systems}");
    assert_eq!(
        systems[0]["switches"]["leaf1"]["node"].as_f64(),
        Some(f64::from(sc.topology.find("leaf1").unwrap().0)),
        "each switch has a model of its own"
    );
    assert!(systems[0]["switches"].get("spine0").is_none());
    run::run(&sc, &s.join("b"), &mut |_| {}).unwrap();
    for f in ["summary.json", "flows.csv", "drops.csv"] {
        assert_eq!(
            std::fs::read(s.join("a").join(f)).unwrap(),
            std::fs::read(s.join("b").join(f)).unwrap(),
            "{f} differs between two runs"
        );
    }
    // Without entries the summary has no `systems` key (older outputs are unchanged).
    let plain = parse("").unwrap();
    let o = run::run(&plain, &s.join("c"), &mut |_| {}).unwrap();
    assert!(o.summary.get("systems").is_none());
}

#[test]
fn entries_are_checked_with_file_line_and_key() {
    let at = |line: usize, rest: &str| format!("s.toml:{line}: {rest}");
    let base_lines = BASE.lines().count();
    let cases = [
        (
            "[[system]]\nkind = \"nope\"\nswitches = \"all\"\n",
            at(
                base_lines + 2,
                "system[0].kind: unknown kind `nope`, expected one of counter",
            ),
        ),
        (
            "[[system]]\nkind = \"counter\"\n",
            at(base_lines + 1, "system[0]: missing field `switches`"),
        ),
        (
            "[[system]]\nkind = \"counter\"\nswitches = [\"h0\"]\n",
            at(base_lines + 3, "system[0].switches[0]: `h0` is a host, not a switch"),
        ),
        (
            "[[system]]\nkind = \"counter\"\nswitches = [\"leaf9\"]\n",
            at(base_lines + 3, "system[0].switches[0]: no switch named `leaf9`"),
        ),
        (
            "[[system]]\nkind = \"counter\"\nswitches = [\"leaf0\"]\nclasses = 0\n",
            at(base_lines + 4, "system[0].classes: must be at least 1"),
        ),
        (
            "[[system]]\nkind = \"counter\"\nswitches = [\"leaf0\"]\nhold = \"soon\"\n",
            at(base_lines + 4, "system[0].hold: expected a duration"),
        ),
        (
            "[[system]]\nkind = \"counter\"\nswitches = [\"leaf0\"]\ncolour = 1\n",
            at(base_lines + 4, "system[0].colour: unknown field `colour`"),
        ),
    ];
    for (extra, want) in cases {
        let e = err(extra);
        assert!(e.starts_with(&want), "want `{want}`, got `{e}`");
    }
    let twice =
        "[[system]]\nkind = \"counter\"\nswitches = \"all\"\n[[system]]\nkind = \"counter\"\nswitches = [\"spine1\"]\n";
    let e = err(twice);
    assert!(
        e.contains("system[1].switches[0]: `spine1` already carries the system of system[0]"),
        "{e}"
    );
    // A program that places no systems says so.
    let text = format!("{BASE}{PLACED}");
    let e = Scenario::parse(&text, "s.toml", "s", Path::new("."), &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown kind `counter`, and this program knows no system kinds"),
        "{e}"
    );
}

#[test]
fn entries_can_be_overridden_and_removed() {
    let text = format!("{BASE}{PLACED}");
    let kinds: &[&dyn SystemKind] = &[&CounterKind];
    let load = |sets: &[(&str, &str)]| {
        let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Scenario::parse_with_systems(
            &text,
            "s.toml",
            "s",
            Path::new("."),
            &sets,
            &tandem_sim::limits::Limits::default(),
            kinds,
        )
    };
    assert!(load(&[("system", "[]")]).unwrap().systems.is_empty());
    let e = load(&[("system[0].classes", "0")]).unwrap_err().to_string();
    assert_eq!(e, "--set: system[0].classes: must be at least 1");
}
