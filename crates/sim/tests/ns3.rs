//! Tandem against a fresh ns-3 3.37 run of the same scenarios (`bench/ns3/`), short versions
//! that fit in CI. Needs g++ and Debian's libns3-dev; skips without them unless
//! `TANDEM_REQUIRE_SYSTEM=1`. The full comparison is `bench/sim-vs-ns3.sh` and
//! `tandem reproduce sim-validation`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use tandem_sim::validation;
use tandem_testkit::{require, require_file};

fn ns3_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/ns3")
}

fn ns3(program: &str, args: &[&str]) -> Value {
    let bin = ns3_dir().join("build").join(program);
    let o = Command::new(&bin)
        .args(args)
        .arg("--linux-reno=1")
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    assert!(o.status.success(), "{program}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("ns-3 program prints one JSON object")
}

fn f(v: &Value, path: &[&str]) -> f64 {
    path.iter().fold(v, |v, k| &v[*k]).as_f64().unwrap_or(f64::NAN)
}

fn within(what: &str, ours: f64, theirs: f64, tolerance: f64) {
    let d = (ours - theirs).abs() / theirs.abs().max(1e-12);
    let signed = (ours - theirs) / theirs.abs().max(1e-12) * 100.0;
    assert!(
        d <= tolerance,
        "{what}: tandem {ours} vs ns-3 {theirs} ({signed:+.1}%, allowed {:.0}%)",
        tolerance * 100.0
    );
    eprintln!(
        "{what}: tandem {ours:.4} ns-3 {theirs:.4} ({:+.1}%)",
        (ours - theirs) / theirs * 100.0
    );
}

#[test]
fn short_runs_agree_with_ns3() {
    if !require("g++", "g++") || !require_file("/usr/include/ns3/core-module.h", "ns-3 3.37 headers", "libns3-dev") {
        return;
    }
    let st = Command::new(ns3_dir().join("build.sh"))
        .status()
        .expect("run bench/ns3/build.sh");
    assert!(st.success(), "bench/ns3/build.sh failed");

    // (1) bulk, 0.5 s.
    let (t, n) = (validation::bulk("500ms").unwrap(), ns3("bulk", &["--duration=0.5s"]));
    within("bulk goodput", f(&t, &["goodput_bps"]), f(&n, &["goodput_bps"]), 0.05);
    assert_eq!(f(&t, &["timeouts"]), f(&n, &["timeouts"]), "bulk timeouts");

    // (2) incast, 3 rounds.
    let (t, n) = (validation::incast(3).unwrap(), ns3("incast", &["--rounds=3"]));
    within("incast goodput", f(&t, &["goodput_bps"]), f(&n, &["goodput_bps"]), 0.05);
    within(
        "incast mean FCT",
        f(&t, &["flow_completion", "mean_s"]),
        f(&n, &["flow_completion", "mean_s"]),
        0.15,
    );
    within(
        "incast p99 FCT",
        f(&t, &["flow_completion", "p99_s"]),
        f(&n, &["flow_completion", "p99_s"]),
        0.15,
    );
    // Drops depend on exact packet timing at a full queue: close, not necessarily equal.
    within("incast drops", f(&t, &["drops"]), f(&n, &["drops"]), 0.05);
    assert_eq!(f(&t, &["timeouts"]), 0.0, "incast timeouts");

    // (3) DCTCP, 0.5 s.
    let (t, n) = (
        validation::dctcp("500ms", true).unwrap(),
        ns3("dctcp", &["--cc=dctcp", "--duration=0.5s"]),
    );
    within("dctcp goodput", f(&t, &["goodput_bps"]), f(&n, &["goodput_bps"]), 0.05);
    within(
        "dctcp queue mean",
        f(&t, &["queue_mean_pkts"]),
        f(&n, &["queue_mean_pkts"]),
        0.15,
    );
    assert_eq!(f(&t, &["drops"]), 0.0, "DCTCP at K = 20 drops nothing");
}
