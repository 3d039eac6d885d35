//! End-to-end tests of `tandem sweep`: the campaign folder, run ids, resuming, shards, errors.

use std::path::Path;
use std::process::{Command, Output};
use tandem_testkit::Scratch;

fn tandem_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tandem")
}

fn scenario() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/incast.toml")
        .display()
        .to_string()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A 2 x 2 grid x 2 seeds of short incast runs into `out`, plus `extra` arguments.
fn sweep(dir: &Path, out: &str, extra: &[&str]) -> Output {
    let sc = scenario();
    let mut args = vec![
        "sweep",
        sc.as_str(),
        "--grid",
        "tcp.min_rto=1ms,10ms",
        "--grid",
        "switch.queue.limit_packets=50,100",
        "--seeds",
        "1..2",
        "--set",
        "duration=12ms",
        "--set",
        "flows[0].repeats=2",
        "--out",
        out,
        "-q",
    ];
    args.extend_from_slice(extra);
    tandem_in(dir, &args)
}

fn runs(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_campaign_has_one_folder_and_one_row_per_run_and_is_deterministic() {
    let s = Scratch::new("sweep");
    let o = sweep(s.path(), "a", &["--jobs", "2"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("campaign   8 runs (4 grid points x 2 seeds)"), "{out}");
    assert!(out.contains("ran 8, skipped 0, failed 0"), "{out}");
    let ids = runs(&s.join("a"));
    assert_eq!(ids.len(), 8);
    for id in &ids {
        assert_eq!(id.len(), 16, "{id}");
        for f in ["run.json", "summary.json", "flows.csv"] {
            assert!(s.join("a").join("runs").join(id).join(f).is_file(), "{id}/{f}");
        }
    }
    let csv = std::fs::read_to_string(s.join("a/campaign.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 9, "{csv}");
    assert!(
        lines[0].starts_with("run_id,seed,tcp.min_rto,switch.queue.limit_packets,"),
        "{}",
        lines[0]
    );
    // Plan order: grid points in the order given, seeds innermost.
    assert!(
        lines[1].contains(",1,1ms,50,") && lines[2].contains(",2,1ms,50,"),
        "{csv}"
    );
    assert!(lines[8].contains(",2,10ms,100,"), "{csv}");
    assert!(s.join("a/campaign.parquet").is_file());
    // Same campaign in another folder, one job: the same ids and the same table, byte for byte.
    let o = sweep(s.path(), "b", &["--jobs", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(runs(&s.join("b")), ids);
    assert_eq!(std::fs::read(s.join("b/campaign.csv")).unwrap(), csv.as_bytes());
    assert_eq!(
        std::fs::read(s.join("a/campaign.parquet")).unwrap(),
        std::fs::read(s.join("b/campaign.parquet")).unwrap()
    );
}

#[test]
fn a_second_command_resumes_and_shards_add_up() {
    let s = Scratch::new("sweep-resume");
    for (shard, ran) in [("0/3", 3), ("1/3", 3)] {
        let o = sweep(s.path(), "c", &["--shard", shard]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(text(&o.stdout).contains(&format!("ran {ran},")), "{}", text(&o.stdout));
    }
    let o = sweep(s.path(), "c", &[]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(out.contains("skipped 6 finished runs; running 2"), "{out}");
    assert!(out.contains("(8 of 8 runs finished"), "{out}");
    let o = sweep(s.path(), "c", &[]);
    assert!(text(&o.stdout).contains("ran 0, skipped 8"), "{}", text(&o.stdout));
    // A run folder under a changed scenario is a different run: a new value, a new id.
    let before = runs(&s.join("c"));
    let o = sweep(s.path(), "c", &["--set", "tcp.init_cwnd=4"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("ran 8, skipped 0"), "{}", text(&o.stdout));
    assert_eq!(runs(&s.join("c")).len(), 16);
    assert!(before.iter().all(|id| runs(&s.join("c")).contains(id)));
}

#[test]
fn the_id_follows_the_content_not_the_comments() {
    let s = Scratch::new("sweep-ids");
    let text0 = std::fs::read_to_string(scenario()).unwrap();
    std::fs::write(s.join("a.toml"), &text0).unwrap();
    std::fs::write(s.join("b.toml"), format!("# a comment\n{text0}")).unwrap();
    std::fs::write(s.join("c.toml"), text0.replace("repeats = 20", "repeats = 19")).unwrap();
    let ids = |file: &str| {
        let o = tandem_in(
            s.path(),
            &[
                "sweep",
                file,
                "--seeds",
                "1",
                "--set",
                "duration=5ms",
                "--out",
                &format!("out-{file}"),
                "-q",
            ],
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        runs(&s.join(&format!("out-{file}")))
    };
    assert_eq!(ids("a.toml"), ids("b.toml"));
    assert_ne!(ids("a.toml"), ids("c.toml"));
}

#[test]
fn bad_grids_fail_before_anything_runs() {
    let s = Scratch::new("sweep-bad");
    std::fs::write(s.join("file"), "x").unwrap();
    let sc = scenario();
    for (args, want) in [
        (
            vec!["--grid", "tcp.min_rto=1ms,abc", "--seeds", "1", "--out", "o"],
            "tandem: --grid tcp.min_rto=abc: expected a duration",
        ),
        (
            vec!["--grid", "tcp.nope=1", "--seeds", "1", "--out", "o"],
            "tandem: --grid tcp.nope=1: unknown field `nope`",
        ),
        (
            vec!["--grid", "seed=1,2", "--seeds", "1", "--out", "o"],
            "tandem: --grid seed=...: give seeds with --seeds",
        ),
        (
            vec![
                "--grid",
                "tcp.min_rto=1ms",
                "--grid",
                "tcp.min_rto=2ms",
                "--seeds",
                "1",
                "--out",
                "o",
            ],
            "key given twice",
        ),
        (
            vec!["--seeds", "1", "--out", "file"],
            "file: exists and is not a folder",
        ),
        (vec!["--seeds", "2..1", "--out", "o"], "the range is empty"),
        (vec!["--seeds", "1", "--shard", "2/2", "--out", "o"], "expected I/N"),
        (
            vec!["--seeds", "1", "--jobs", "0", "--out", "o"],
            "--jobs: must be at least 1",
        ),
        (
            vec!["--seeds", "1", "--max-memory", "1MiB", "--out", "o"],
            "the memory limit of 1.00 MiB is below the 48.0 MiB any run needs",
        ),
        (
            vec!["--seeds", "1", "--max-memory", "50MiB", "--out", "o"],
            "the run would need about ",
        ),
        (
            vec![
                "--grid",
                "output.queue_sample_interval=1ms,1ns",
                "--seeds",
                "1",
                "--max-memory",
                "1GiB",
                "--out",
                "o",
            ],
            "tandem: --grid output.queue_sample_interval=1ns: the run would need about ",
        ),
    ] {
        let mut all = vec!["sweep", sc.as_str()];
        all.extend_from_slice(&args);
        let o = tandem_in(s.path(), &all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains(want), "{args:?}: {}", text(&o.stderr));
        assert!(!s.join("o").exists(), "{args:?} created the output folder");
    }
    let o = tandem_in(s.path(), &["sweep", "missing.toml", "--seeds", "1", "--out", "o"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o.stderr).lines().count(), 1, "{}", text(&o.stderr));
}

#[test]
fn a_sweep_over_a_placed_system_has_its_counters_per_switch() {
    let s = Scratch::new("sweep-systems");
    let sc = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/systems/tcpu-leafspine.toml")
        .display()
        .to_string();
    let o = tandem_in(
        s.path(),
        &[
            "sweep",
            &sc,
            "--grid",
            "system[0].asic_flow_entries=16,256",
            "--seeds",
            "1",
            "--set",
            "duration=60ms",
            "--set",
            "flows[0].duration=50ms",
            "--set",
            "flows[1].repeats=1",
            "--set",
            "output.plots=false",
            "--out",
            "c",
            "-q",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let csv = std::fs::read_to_string(s.join("c/campaign.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("{name}: {header:?}"))
    };
    let (k, cap) = (col("system[0].asic_flow_entries"), col("system0_leaf0_table_capacity"));
    col("system0_leaf3_software_packets");
    for row in lines {
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!(f[k].parse::<f64>().unwrap(), f[cap].parse::<f64>().unwrap(), "{row}");
    }
}
