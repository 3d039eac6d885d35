//! TCPU placed by a scenario file (`[[system]] kind = "tcpu"`): the shipped leaf-spine
//! scenario runs with a TCPU core on each leaf, the table stays within its capacity, the CPU
//! path and the deep buffer carry traffic, and parameters are checked like every other key.

use std::path::{Path, PathBuf};
use tandem_sim::limits::Limits;
use tandem_sim::run;
use tandem_sim::scenario::system::SystemKind;
use tandem_sim::scenario::Scenario;
use tandem_tcpu::model::placed::TcpuKind;
use tandem_testkit::Scratch;

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/systems")
        .join(name)
}

const KINDS: &[&dyn SystemKind] = &[&TcpuKind];

fn load(path: &Path, sets: &[(&str, &str)]) -> Result<Scenario, String> {
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Scenario::load_with_systems(path, &sets, &Limits::default(), KINDS).map_err(|e| e.to_string())
}

/// The leaf-spine scenario, cut to two incast rounds and 250 ms.
const SHORT: &[(&str, &str)] = &[
    ("duration", "250ms"),
    ("flows[0].duration", "200ms"),
    ("flows[1].repeats", "2"),
    ("output.plots", "false"),
];

#[test]
fn tcpu_leaves_of_a_leaf_spine() {
    let sc = load(&shipped("tcpu-leafspine.toml"), SHORT).unwrap();
    let s = Scratch::new("tcpu-placed");
    let out = run::run(&sc, &s.join("a"), &mut |_| {}).unwrap();
    let sys = &out.summary["systems"][0];
    assert_eq!(sys["kind"], "tcpu");
    let switches = sys["switches"].as_object().unwrap();
    assert_eq!(switches.len(), 4, "{sys}");
    let get = |sw: &str, k: &str| switches[sw][k].as_f64().unwrap_or_else(|| panic!("{sw}.{k}"));
    for sw in ["leaf0", "leaf1", "leaf2", "leaf3"] {
        assert_eq!(get(sw, "table_capacity"), 64.0);
        assert!(get(sw, "peak_table_entries") <= 64.0, "{sys}");
        assert!(get(sw, "offloaded_flows") > 0.0, "{sw}: flows reach the table\n{sys}");
        assert!(
            get(sw, "software_packets") > 0.0,
            "{sw}: the CPU path carries packets\n{sys}"
        );
    }
    // The incast into h0 (on leaf0) is redirected into DRAM.
    assert!(get("leaf0", "rport_installs") >= 1.0, "{sys}");
    assert!(get("leaf0", "deep_buffer_peak_bytes") > 100_000.0, "{sys}");
    assert_eq!(get("leaf0", "cpu_drops"), 0.0);

    // Deterministic: the same scenario and seed give the same files.
    run::run(&sc, &s.join("b"), &mut |_| {}).unwrap();
    for f in ["summary.json", "flows.csv", "drops.csv", "queues.csv"] {
        assert_eq!(
            std::fs::read(s.join("a").join(f)).unwrap(),
            std::fs::read(s.join("b").join(f)).unwrap(),
            "{f} differs between two runs"
        );
    }

    // The deep buffer is what keeps the incast's packets: without TCPU the same network drops
    // more at leaf0's port to h0.
    let mut plain_sets = SHORT.to_vec();
    plain_sets.push(("system", "[]"));
    let plain = load(&shipped("tcpu-leafspine.toml"), &plain_sets).unwrap();
    let p = run::run(&plain, &s.join("plain"), &mut |_| {}).unwrap();
    let drops_at_h0 = |dir: &str| -> u64 {
        let csv = std::fs::read_to_string(s.join(dir).join("drops.csv")).unwrap();
        csv.lines()
            .filter(|l| l.starts_with("leaf0,0,"))
            .map(|l| l.split(',').nth(3).unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert!(p.summary.get("systems").is_none());
    assert!(
        drops_at_h0("a") < drops_at_h0("plain"),
        "with TCPU {} drops at leaf0:0, without {}",
        drops_at_h0("a"),
        drops_at_h0("plain")
    );
}

#[test]
fn the_fat_tree_mix_checks() {
    let sc = load(&shipped("tcpu-fat-tree-dctcp.toml"), &[]).unwrap();
    assert_eq!(sc.systems[0].switches.len(), 32);
}

#[test]
fn parameters_are_checked_with_file_line_and_key() {
    let file = shipped("tcpu-leafspine.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let line = 1 + text.lines().position(|l| l.starts_with("asic_flow_entries")).unwrap();
    let s = Scratch::new("tcpu-placed-bad");
    let cases = [
        (
            "asic_flow_entries = 64",
            "rank_interval = \"soon\"",
            "system[0].rank_interval: expected a duration",
        ),
        (
            "asic_flow_entries = 64",
            "q_redirect_pkts = 100",
            "system[0].q_redirect_pkts: tcpu config: q_redirect_pkts must be below q_limit_pkts",
        ),
        (
            "asic_flow_entries = 64",
            "q_limit_pkts = 50",
            "system[0].q_limit_pkts: set by the scenario (switch.queue.limit_packets)",
        ),
        (
            "asic_flow_entries = 64",
            "inserts_per_sec = 0",
            "system[0].inserts_per_sec: tcpu config: inserts_per_sec must be positive",
        ),
        (
            "asic_flow_entries = 64",
            "tcam = 64",
            "system[0].tcam: unknown field `tcam`",
        ),
    ];
    for (from, to, want) in cases {
        let p = s.join("bad.toml");
        std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
        let e = load(&p, &[]).unwrap_err();
        let want = format!("{}:{line}: {want}", p.display());
        assert!(e.starts_with(&want), "want `{want}`\n got `{e}`");
    }
    // A spine has no hosts: TCPU manages a switch's own hosts' traffic.
    let e = load(&file, &[("system[0].switches", "[\"spine0\"]")]).unwrap_err();
    assert!(e.contains("`spine0` has no hosts attached"), "{e}");
    let e = load(&file, &[("switch.queue.limit_packets", "0")]).unwrap_err();
    assert!(e.contains("set switch.queue.limit_packets"), "{e}");
    // Units are read as everywhere else.
    let sc = load(
        &file,
        &[("system[0].dram_bytes", "16MiB"), ("system[0].rank_interval", "50ms")],
    )
    .unwrap();
    assert_eq!(sc.systems.len(), 1);
}
