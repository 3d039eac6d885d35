//! Tandem against a fresh ns-3 3.37 run of every validation scenario (`scenarios/validation/`),
//! in the short versions declared in `tolerances.toml`. Each scenario is exported with
//! `tandem_sim::ns3_spec::export` and run by `bench/ns3/scenario.cc`, and every row is judged
//! with the declared tolerance.
//!
//! The test fails on any FAIL row that is not an open gap listed in
//! `scenarios/validation/open-gaps-quick.txt` (each explained in docs/sim/validation.md), and
//! on any listed gap that now passes (so the list, and the docs, follow the code). Every FAIL
//! row is printed either way. Needs g++ and Debian's libns3-dev; skips without them unless
//! `TANDEM_REQUIRE_SYSTEM=1`. The full comparison is `bench/sim-vs-ns3.sh`.

use std::path::{Path, PathBuf};
use std::process::Command;
use tandem_sim::validation;
use tandem_testkit::{require, require_file};

fn ns3_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/ns3")
}

#[test]
fn every_validation_scenario_agrees_with_ns3() {
    if !require("g++", "g++") || !require_file("/usr/include/ns3/core-module.h", "ns-3 3.37 headers", "libns3-dev") {
        return;
    }
    let st = Command::new(ns3_dir().join("build.sh"))
        .status()
        .expect("run bench/ns3/build.sh");
    assert!(st.success(), "bench/ns3/build.sh failed");
    let dir = std::env::temp_dir().join(format!("tandem-ns3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tol = validation::tolerances().unwrap();
    let open: std::collections::BTreeSet<String> = include_str!("../../../scenarios/validation/open-gaps-quick.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    let mut fails = std::collections::BTreeSet::new();
    for (name, _) in validation::SCENARIOS {
        let sc = validation::load(name, true).unwrap();
        let spec = dir.join(format!("{name}.spec"));
        std::fs::write(&spec, tandem_sim::ns3_spec::export(&sc).unwrap()).unwrap();
        let o = Command::new(ns3_dir().join("build/scenario"))
            .arg(&spec)
            .output()
            .expect("run bench/ns3/build/scenario");
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let theirs = validation::parse_ns3(&String::from_utf8_lossy(&o.stdout)).unwrap();
        let ours = validation::run_tandem(&sc).unwrap();
        for row in validation::compare(name, &sc, &ours, &theirs, &tol).unwrap() {
            let line = format!(
                "{} | {} | tandem {:.4} | ns-3 {:.4} | {:?}",
                row.setting,
                row.metric,
                row.measured,
                row.reference.unwrap_or(f64::NAN),
                row.target
            );
            match row.verdict() {
                Some(false) => {
                    eprintln!("FAIL {line}");
                    fails.insert(format!("{} | {}", row.setting, row.metric));
                }
                Some(true) => eprintln!("PASS {line}"),
                None => {}
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "{} FAIL rows, {} of them open gaps listed in open-gaps-quick.txt",
        fails.len(),
        fails.intersection(&open).count()
    );
    let new: Vec<&String> = fails.difference(&open).collect();
    let fixed: Vec<&String> = open.difference(&fails).collect();
    assert!(
        new.is_empty() && fixed.is_empty(),
        "FAIL rows not listed as open gaps: {new:#?}\nlisted gaps that now pass (update the list and docs/sim/validation.md): {fixed:#?}"
    );
}
