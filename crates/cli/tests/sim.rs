//! End-to-end tests of `tandem sim` and `tandem reproduce`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tandem_testkit::{require, Scratch};

fn tandem_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run tandem")
}

fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name)
        .display()
        .to_string()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const SMALL: &[&str] = &["--set", "flows[0].repeats=2", "--set", "duration=12ms", "-q"];

fn run_small(dir: &Path, out: &str) -> Output {
    let sc = scenario("incast.toml");
    let mut args = vec!["sim", "run", sc.as_str(), "--out", out];
    args.extend_from_slice(SMALL);
    tandem_in(dir, &args)
}

#[test]
fn run_writes_every_output_and_is_deterministic() {
    let s = Scratch::new("sim-run");
    let o = run_small(s.path(), "a");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for want in [
        "scenario   incast (seed 1)",
        "flows      64 started, 64 completed",
        "drops",
        "outputs    a",
    ] {
        assert!(out.contains(want), "missing `{want}` in\n{out}");
    }
    for f in [
        "flows.csv",
        "drops.csv",
        "queues.csv",
        "flows.parquet",
        "drops.parquet",
        "queues.parquet",
        "summary.json",
        "fct-cdf.png",
        "fct-cdf.svg",
        "queue.png",
        "queue.svg",
        "switch0-0.pcap",
    ] {
        let p = s.join("a").join(f);
        assert!(
            p.metadata().map(|m| m.len() > 0).unwrap_or(false),
            "{} missing or empty",
            p.display()
        );
    }
    let flows = std::fs::read_to_string(s.join("a/flows.csv")).unwrap();
    assert_eq!(flows.lines().count(), 65, "header + 64 flows");
    // Same scenario and seed: byte-identical outputs.
    assert!(run_small(s.path(), "b").status.success());
    for f in [
        "flows.csv",
        "drops.csv",
        "queues.csv",
        "flows.parquet",
        "drops.parquet",
        "queues.parquet",
        "summary.json",
        "switch0-0.pcap",
    ] {
        let a = std::fs::read(s.join("a").join(f)).unwrap();
        let b = std::fs::read(s.join("b").join(f)).unwrap();
        assert!(a == b, "{f} differs between two runs");
    }
    if require("tshark", "tshark") {
        let o = Command::new("tshark")
            .args(["-n", "-r"])
            .arg(s.join("a/switch0-0.pcap"))
            .args(["-Y", "_ws.malformed || _ws.expert.severity == error"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(o.stdout.is_empty(), "tshark flags:\n{}", text(&o.stdout));
    }
}

#[test]
fn default_output_folder_is_results_name() {
    let s = Scratch::new("sim-default-out");
    let sc = scenario("incast.toml");
    let mut args = vec!["sim", "run", sc.as_str()];
    args.extend_from_slice(SMALL);
    let o = tandem_in(s.path(), &args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(s.join("results/incast/summary.json").exists());
}

#[test]
fn bad_scenarios_are_one_line_with_file_line_and_key() {
    let s = Scratch::new("sim-bad");
    let good = std::fs::read_to_string(scenario("incast.toml")).unwrap();
    let cases = [
        (
            "limit_packets = 100",
            "limit_packtes = 100",
            "switch.queue.limit_packtes: unknown field",
        ),
        (
            "rate = \"10Gbps\"",
            "rate = \"10 furlongs\"",
            "topology.link.rate: expected a rate",
        ),
        ("duration = \"100ms\"\n", "", "missing field `duration`"),
        (
            "receiver = \"h0\"",
            "receiver = \"h99\"",
            "flows[0].receiver: no host named `h99`",
        ),
    ];
    for (from, to, want) in cases {
        assert!(good.contains(from), "{from}");
        let p = s.join("bad.toml");
        std::fs::write(&p, good.replacen(from, to, 1)).unwrap();
        let o = tandem_in(s.path(), &["sim", "run", p.to_str().unwrap(), "-q"]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("bad.toml:") || want.starts_with("missing"), "{err}");
        assert!(err.contains(want), "want `{want}` in {err}");
        assert!(!s.join("results").exists(), "nothing is written for a bad scenario");
    }
    let o = tandem_in(
        s.path(),
        &["sim", "check", &scenario("incast.toml"), "--set", "tcp.min_rto=soon"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).starts_with("tandem: --set: tcp.min_rto: expected a duration"),
        "{}",
        text(&o.stderr)
    );
    let o = tandem_in(s.path(), &["sim", "run", "/nonexistent.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("/nonexistent.toml"));
}

#[test]
fn every_shipped_scenario_checks() {
    let dir = PathBuf::from(scenario(""));
    let mut n = 0;
    for sub in [
        dir.clone(),
        dir.join("validation"),
        dir.join("validation").join("variants"),
        dir.join("systems"),
        dir.join("bench"),
    ] {
        for e in std::fs::read_dir(&sub).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            // tolerances.toml and graph files sit beside the validation scenarios.
            if p.extension().is_some_and(|x| x == "toml") && name != "tolerances.toml" && !name.ends_with("-graph.toml")
            {
                let o = tandem_in(&sub, &["sim", "check", p.to_str().unwrap()]);
                assert!(o.status.success(), "{}: {}", p.display(), text(&o.stderr));
                n += 1;
            }
        }
    }
    assert!(n >= 5, "found {n} scenarios");
}

#[test]
fn a_failing_link_is_checked_said_and_run() {
    let s = Scratch::new("sim-failures");
    let sc = scenario("leafspine-failure.toml");
    let o = tandem_in(s.path(), &["sim", "check", &sc]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("failure[0] link leaf1 - spine0 down at 20.0 ms, back at 40.0 ms"),
        "{out}"
    );
    let o = tandem_in(
        s.path(),
        &["sim", "run", &sc, "--set", "duration=25ms", "--out", "out", "-q"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let drops = std::fs::read_to_string(s.path().join("out/drops.csv")).unwrap();
    assert!(drops.contains("spine0,0,no-route"), "{drops}");
    // A link that is not there is the file's error, at its key.
    let o = tandem_in(
        s.path(),
        &[
            "sim",
            "check",
            &sc,
            "--set",
            r#"failures=[{link = ["leaf0", "leaf1"], at = "1ms"}]"#,
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("failures[0].link") && err.contains("no link between `leaf0` and `leaf1`"),
        "{err}"
    );
}

#[test]
fn systems_placed_by_a_scenario_run_and_bad_entries_are_input_errors() {
    let s = Scratch::new("sim-systems");
    let sc = scenario("systems/tcpu-leafspine.toml");
    let o = tandem_in(s.path(), &["sim", "check", &sc]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("switches   leaf0..leaf3, spine0..spine1"), "{out}");
    assert!(out.contains("system[0]  tcpu on leaf0..leaf3"), "{out}");
    let o = tandem_in(
        s.path(),
        &[
            "sim",
            "run",
            &sc,
            "--out",
            "t",
            "-q",
            "--set",
            "duration=60ms",
            "--set",
            "flows[0].duration=50ms",
            "--set",
            "flows[1].repeats=1",
            "--set",
            "output.plots=false",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("tcpu       4 switches (counters summed, means averaged over the switches with one, maxima and peaks the largest): "),
        "{out}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.join("t/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["systems"][0]["kind"], "tcpu");
    let o = tandem_in(
        s.path(),
        &[
            "sim",
            "run",
            &sc,
            "--out",
            "bad",
            "-q",
            "--set",
            "system[0].switches=[\"h0\"]",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stderr).trim(),
        "tandem: --set: system[0].switches[0]: `h0` is a host, not a switch"
    );
    assert!(!s.join("bad").exists());
    let o = tandem_in(s.path(), &["sim", "export-ns3", &sc]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("ns-3 has no model of `tcpu`"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_scenario_mixing_two_kinds_runs_and_is_deterministic() {
    let s = Scratch::new("sim-mixed");
    let sc = scenario("systems/mixed-leafspine.toml");
    let run = |out: &str| {
        let args = [
            "sim",
            "run",
            &sc,
            "--out",
            out,
            "-q",
            "--set",
            "duration=120ms",
            "--set",
            "flows[0].duration=100ms",
            "--set",
            "flows[1].repeats=1",
            "--set",
            "output.plots=false",
        ];
        tandem_in(s.path(), &args)
    };
    let o = run("a");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("tcpu       2 switches"), "{out}");
    assert!(out.contains("coswitch   2 switches"), "{out}");
    assert!(run("b").status.success());
    for f in ["summary.json", "flows.csv", "drops.csv", "queues.csv"] {
        assert!(
            std::fs::read(s.join("a").join(f)).unwrap() == std::fs::read(s.join("b").join(f)).unwrap(),
            "{f} differs between two runs"
        );
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.join("a/summary.json")).unwrap()).unwrap();
    let kinds: Vec<&str> = summary["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["tcpu", "coswitch"]);
    assert!(summary["systems"][1]["switches"]["leaf2"]["servers"].as_f64() == Some(8.0));
}

#[test]
fn reproduce_lists_and_runs_from_anywhere() {
    let s = Scratch::new("reproduce");
    let o = tandem_in(s.path(), &["reproduce", "--list"]);
    assert!(o.status.success());
    assert!(text(&o.stdout).contains("sim-validation"), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("tcpu-flashcrowd"), "{}", text(&o.stdout));
    let o = tandem_in(s.path(), &["reproduce", "no-such-thing"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("sim-validation"));
    let o = tandem_in(s.path(), &["reproduce", "sim-validation", "--quick", "-q"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let md = std::fs::read_to_string(s.join("results/sim-validation/results.md")).unwrap();
    assert!(md.contains("| long-1 | goodput (Mb/s) | prediction |"), "{md}");
    for f in ["results.csv", "results.md"] {
        assert!(s.join("results/sim-validation").join(f).exists(), "{f}");
    }
}

#[test]
fn scenarios_beyond_the_memory_limit_are_refused_in_one_line() {
    let s = Scratch::new("sim-limits");
    let star = s.join("star.toml");
    std::fs::write(
        &star,
        "duration = \"100ms\"\n[topology]\nkind = \"star\"\nhosts = 1000000000\nlink = { rate = \"10Gbps\", delay = \"1us\" }\n",
    )
    .unwrap();
    let fat = s.join("fat.toml");
    std::fs::write(
        &fat,
        "duration = \"100ms\"\n[topology]\nkind = \"fat_tree\"\nk = 100\nhost_link = { rate = \"10Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"10Gbps\", delay = \"1us\" }\n",
    )
    .unwrap();
    let (star, fat) = (star.to_str().unwrap(), fat.to_str().unwrap());
    let incast = scenario("incast.toml");
    // Refused from the estimate, before anything is built (no timing: a loaded machine is no
    // failure; building these would not finish at all).
    let refused = |args: &[&str], want: &[&str]| {
        let o = tandem_in(s.path(), args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("tandem: "), "{err}");
        for w in want {
            assert!(err.contains(w), "want `{w}` in {err}");
        }
        assert!(!s.join("results").exists(), "nothing is written");
    };
    // The issue's cases, at a fixed limit: the estimate, the limit and how to raise it.
    for cmd in ["check", "run", "export-ns3"] {
        refused(
            &["sim", cmd, star, "--max-memory", "8GiB"],
            &[
                "star.toml:2: topology: the run would need about 88.9 TiB (program 48.0 MiB, network 1.48 TiB, routing 128 KiB,",
                "more than the memory limit of 8.00 GiB",
                "--max-memory",
            ],
        );
    }
    refused(
        &["sim", "check", fat, "--max-memory", "8GiB"],
        &[
            "fat.toml: output.queue_sample_interval: the run would need about 113 GiB",
            "1251250000 queue samples",
        ],
    );
    refused(
        &["sim", "check", &incast, "--set", "output.queue_sample_interval=1ps"],
        &["--set: output.queue_sample_interval: must be at least 1ns"],
    );
    refused(
        &[
            "sim",
            "check",
            &incast,
            "--set",
            "output.queue_sample_interval=1ns",
            "--max-memory",
            "8GiB",
        ],
        &["the run would need about 1", "100000001 queue samples"],
    );
    // --max-memory lowers the limit below the smallest run, and raises it above the default.
    refused(
        &["sim", "run", &incast, "--max-memory", "1MiB", "-q"],
        &[
            "the memory limit of 1.00 MiB is below the 48.0 MiB any run needs",
            "(--max-memory)",
        ],
    );
    let o = tandem_in(s.path(), &["sim", "check", fat, "--max-memory", "200GiB"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("topology   250000 hosts, 12500 switches, 750000 links"),
        "{out}"
    );
    assert!(out.contains("memory     about 113 GiB"), "{out}");
    assert!(out.contains("limit 200 GiB (--max-memory)"), "{out}");
    let o = tandem_in(s.path(), &["sim", "check", &incast]);
    assert!(text(&o.stdout).contains("memory     about "), "{}", text(&o.stdout));
    // A bad size is a usage error.
    let o = tandem_in(s.path(), &["sim", "check", &incast, "--max-memory", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    let o = tandem_in(s.path(), &["sim", "check", &incast, "--max-memory", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("must be above 0"), "{}", text(&o.stderr));
}

#[test]
fn flow_sizes_a_tcp_cannot_carry_are_refused() {
    let s = Scratch::new("sim-bytes");
    let incast = scenario("incast.toml");
    let o = tandem_in(
        s.path(),
        &["sim", "check", &incast, "--set", "flows[0].bytes=18446744073709551614"],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("tandem: --set: flows[0].bytes: at most 4611686018427387904 bytes (4EiB, 2^62"),
        "{err}"
    );
    let o = tandem_in(
        s.path(),
        &["sim", "check", &incast, "--set", "flows[0].bytes=4611686018427387904"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// `axon-cam` (thesis Figure 4.9) at its quick size: every trace Tandem ships or makes, both
/// measures, the thesis's bound judged per trace, the sample rebuilt, nothing temporary left.
#[test]
fn axon_cam_runs_on_every_kind_of_trace() {
    let s = Scratch::new("axon-cam");
    let o = tandem_in(s.path(), &["reproduce", "axon-cam", "--quick", "-q"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let dir = s.join("results/axon-cam");
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    for trace in [
        "sample,5000,5000,58,",
        "synth-100k,",
        "leafspine-uplink,",
        "fattree-agg-uplink,",
    ] {
        assert!(summary.lines().any(|l| l.starts_with(trace)), "{trace}: {summary}");
    }
    // The LRU need never exceeds the destinations; the thesis's count bounds it from above.
    let md = std::fs::read_to_string(dir.join("results.md")).unwrap();
    assert!(
        md.contains("| sample (58 destinations) | LRU CAM entries serving 100% (exact) | prediction | - | 55 |"),
        "{md}"
    );
    assert_eq!(md.matches("<= 4000 |").count(), 4, "{md}");
    for f in ["cam.csv", "cam.png", "cam-lru.svg"] {
        assert!(dir.join(f).exists(), "{f}");
    }
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(!left.iter().any(|n| n.to_string_lossy().starts_with('.')), "{left:?}");
}

/// Issue 23's simulated experiments run from the binary at their `--quick` size, each writing a
/// results table whose every row says its kind.
#[test]
fn the_papers_remaining_figures_run_at_quick_size() {
    let s = Scratch::new("issue-23");
    for name in [
        "tcpu-traces",
        "tcpu-burst-rate",
        "tcpu-flashcrowd",
        "coswitch-traffic",
        "coswitch-cost",
        "turbo-servers",
    ] {
        let out = s.join(name);
        let o = tandem_in(
            s.path(),
            &["reproduce", name, "--quick", "-q", "--out", out.to_str().unwrap()],
        );
        assert!(o.status.success(), "{name}: {}", text(&o.stderr));
        let md = std::fs::read_to_string(out.join("results.md")).unwrap();
        assert!(md.contains("| kind |"), "{name}: {md}");
        let rows = md
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| setting"));
        for row in rows {
            assert!(
                ["| input |", "| identity |", "| prediction |"]
                    .iter()
                    .any(|k| row.contains(k)),
                "{name}: a row without its kind: {row}"
            );
        }
    }
}

/// The speed benchmark's permutation: 1,024 flows, each host sending one and receiving one,
/// none to itself; a short run of it is deterministic.
#[test]
fn the_permutation_benchmark_pairs_every_host_once() {
    let s = Scratch::new("permutation");
    let sc = scenario("bench/fat-tree-permutation.toml");
    let run = |out: &str| {
        let o = tandem_in(
            s.path(),
            &["sim", "run", &sc, "--out", out, "-q", "--set", "duration=20us"],
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        std::fs::read_to_string(s.join(out).join("flows.csv")).unwrap()
    };
    let flows = run("a");
    let rows: Vec<Vec<&str>> = flows.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 1024);
    let header: Vec<&str> = flows.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (src, dst) = (col("src"), col("dst"));
    let mut senders: Vec<&str> = rows.iter().map(|r| r[src]).collect();
    let mut receivers: Vec<&str> = rows.iter().map(|r| r[dst]).collect();
    assert!(rows.iter().all(|r| r[src] != r[dst]));
    senders.sort_unstable();
    receivers.sort_unstable();
    senders.dedup();
    receivers.dedup();
    assert_eq!((senders.len(), receivers.len()), (1024, 1024));
    assert_eq!(flows, run("b"));
}

#[test]
fn threads_split_a_run_and_give_the_same_outputs() {
    let s = Scratch::new("sim-threads");
    let sc = scenario("leafspine-failure.toml");
    let o = tandem_in(s.path(), &["sim", "check", &sc, "--set", "threads=2"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("threads    2: 2 partitions, ") && out.contains("windows of 1.00 us"),
        "{out}"
    );
    // `check` takes `--threads` as `run` does.
    let o = tandem_in(s.path(), &["sim", "check", &sc, "--threads", "2"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), out);
    // A star splits no further: it says so.
    let o = tandem_in(s.path(), &["sim", "check", &scenario("incast.toml"), "--threads", "3"]);
    assert!(
        text(&o.stdout).contains("threads    3: 3 partitions (1 with nodes: the network splits no further; the others get no thread), 0 links between them"),
        "{}",
        text(&o.stdout)
    );
    for n in ["1", "3"] {
        let o = tandem_in(
            s.path(),
            &["sim", "run", &sc, "--set", "duration=25ms", "--threads", n, "--out", n],
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(
            text(&o.stdout).contains(&format!("threads    {n}, in ")),
            "{}",
            text(&o.stdout)
        );
    }
    for f in ["flows.csv", "drops.csv", "queues.csv", "summary.json"] {
        let a = std::fs::read(s.path().join("1").join(f)).unwrap();
        let b = std::fs::read(s.path().join("3").join(f)).unwrap();
        assert!(a == b, "{f} differs between 1 and 3 threads");
    }
    let o = tandem_in(s.path(), &["sim", "run", &sc, "--threads", "0", "-q", "--out", "zero"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("threads: must be from 1 to 1024, got 0"),
        "{}",
        text(&o.stderr)
    );
    assert!(!s.path().join("zero").exists());
}

#[test]
fn placed_systems_run_partitioned_with_the_same_outputs_on_any_number_of_threads() {
    let s = Scratch::new("sim-systems-threads");
    let cases: &[(&str, &[&str])] = &[
        (
            "systems/mixed-leafspine.toml",
            &["duration=60ms", "flows[0].duration=50ms", "flows[1].repeats=1"],
        ),
        ("systems/axon-ring.toml", &["duration=30ms"]),
        ("systems/tcpu-fat-tree-dctcp.toml", &["duration=8ms"]),
    ];
    // (The TurboSwitch and CoSwitch scenarios are racks on one switch: one partition, as a
    // host stays with its switch.)
    for (file, sets) in cases {
        let sc = scenario(file);
        let run = |threads: &str| {
            let out = format!("{}-{threads}", file.replace('/', "-"));
            let mut args = vec!["sim", "run", &sc, "--out", &out, "-q", "--threads", threads];
            args.extend(["--set", "output.plots=false"]);
            for set in *sets {
                args.extend(["--set", set]);
            }
            let o = tandem_in(s.path(), &args);
            assert!(o.status.success(), "{file}: {}", text(&o.stderr));
            s.join(&out)
        };
        let (one, three) = (run("1"), run("3"));
        for f in ["summary.json", "flows.csv", "drops.csv"] {
            let a = std::fs::read(one.join(f)).unwrap();
            assert!(
                a == std::fs::read(three.join(f)).unwrap(),
                "{file}: {f} differs between 1 and 3 threads"
            );
        }
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(one.join("summary.json")).unwrap()).unwrap();
        assert!(
            summary["systems"].as_array().is_some_and(|a| !a.is_empty()),
            "{file}: {summary}"
        );
    }
}
