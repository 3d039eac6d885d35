//! End-to-end tests of the `tandem` binary: what a user types, what they see, exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tandem_testkit::{require, Scratch};

fn tandem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(args)
        .output()
        .expect("run tandem")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sample() -> String {
    repo().join("traces/sample.pcap").display().to_string()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn version_and_help_read_well() {
    let v = tandem(&["--version"]);
    assert!(v.status.success());
    assert_eq!(text(&v.stdout).trim(), format!("tandem {}", env!("CARGO_PKG_VERSION")));
    let h = tandem(&["--help"]);
    assert!(h.status.success());
    let h = text(&h.stdout);
    assert!(h.contains("pcap") && h.contains("Usage: tandem"), "{h}");
    let h = text(&tandem(&["pcap", "flows", "--help"]).stdout);
    assert!(h.contains("--timeout") && h.contains("--csv"), "{h}");
}

#[test]
fn shipped_sample_is_what_synth_makes() {
    // traces/README.md says how the sample was made; the same command must give the same bytes.
    let s = Scratch::new("cli");
    let out = s.join("regenerated.pcap");
    let o = tandem(&[
        "pcap",
        "synth",
        out.to_str().unwrap(),
        "--packets",
        "5000",
        "--seed",
        "1",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(sample()).unwrap(),
        "traces/sample.pcap is stale"
    );
}

#[test]
fn flows_csv_on_the_sample() {
    let s = Scratch::new("cli");
    let csv = s.join("flows.csv");
    let o = tandem(&["pcap", "flows", &sample(), "--csv", csv.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let records = tandem_wire::flow::read_csv(std::io::BufReader::new(std::fs::File::open(&csv).unwrap())).unwrap();
    assert!(records.len() > 100, "{} flows", records.len());
    let packets: u64 = records.iter().map(|r| r.packets).sum();
    // Everything but ARP frames belongs to an IPv4 flow.
    assert!(packets > 4900 && packets <= 5000, "{packets}");
    assert!(records.iter().any(|r| r.key.vlan == 103));
    assert!(records
        .iter()
        .any(|r| r.tcp_flags.contains(tandem_wire::tcp::Flags::SYN)));
}

#[test]
fn flows_table_and_timeout() {
    let o = tandem(&["pcap", "flows", &sample(), "--timeout", "1ms", "-q"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.lines().next().unwrap().starts_with("proto"));
    let short = out.lines().count();
    let o = tandem(&["pcap", "flows", &sample(), "--timeout", "60s", "-q"]);
    let long = text(&o.stdout).lines().count();
    assert!(short > long, "a 1 ms idle timeout splits flows: {short} vs {long}");
}

#[test]
fn summary_text_and_json() {
    let o = tandem(&["pcap", "summary", &sample(), "-q"]);
    assert!(o.status.success());
    let s = text(&o.stdout);
    assert!(s.contains("packets     5000"), "{s}");
    assert!(s.contains("top talkers"), "{s}");
    let o = tandem(&["pcap", "summary", &sample(), "--json", "-q"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["packets"], 5000);
    assert!(v["ipv4_protocols"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "tcp"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let missing = tandem(&["pcap", "flows", "/nonexistent/trace.pcap"]);
    assert_eq!(missing.status.code(), Some(2));
    let err = text(&missing.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/trace.pcap"), "{err}");

    let s = Scratch::new("cli");
    let junk = s.join("junk.pcap");
    std::fs::write(&junk, b"this is not a capture file").unwrap();
    let o = tandem(&["pcap", "summary", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("not a pcap or pcapng file"),
        "{}",
        text(&o.stderr)
    );

    let cut = s.join("cut.pcap");
    let bytes = std::fs::read(sample()).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2 + 3]).unwrap();
    let o = tandem(&["pcap", "flows", cut.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("cut short"), "{}", text(&o.stderr));

    let o = tandem(&["pcap", "flows", &sample(), "--timeout", "60 parsecs"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--timeout"), "{}", text(&o.stderr));
}

#[test]
fn tshark_finds_nothing_wrong_in_the_sample() {
    if !require("tshark", "tshark") {
        return;
    }
    let o = Command::new("tshark")
        .args(["-n", "-r", &sample()])
        .args([
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "udp.check_checksum:TRUE",
        ])
        .args([
            "-Y",
            "_ws.malformed || _ws.expert.severity == error || ip.checksum.status == 0 || \
             tcp.checksum.status == 0 || udp.checksum.status == 0 || icmp.checksum.status == 0",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty(), "tshark flags:\n{}", text(&o.stdout));
}

#[test]
fn analyze_offload_reads_traces_and_flow_csvs_alike() {
    let s = Scratch::new("cli-offload");
    let csv = s.join("flows.csv");
    let o = tandem(&["pcap", "flows", &sample(), "--csv", csv.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (from_pcap, from_csv) = (s.join("pcap"), s.join("csv"));
    for (input, out) in [(sample(), &from_pcap), (csv.display().to_string(), &from_csv)] {
        let o = tandem(&[
            "analyze",
            "offload",
            &input,
            "--k",
            "4,16",
            "--interval",
            "5ms",
            "--out",
            out.to_str().unwrap(),
            "-q",
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let so = text(&o.stdout);
        assert!(so.contains("158 flows") && so.contains("k = 16"), "{so}");
        for f in [
            "intervals.csv",
            "active-flows-ccdf.csv",
            "active-flows-ccdf.png",
            "tfor-ccdf.csv",
            "tfor-ccdf.png",
        ] {
            assert!(out.join(f).is_file(), "{f} missing");
        }
    }
    // The trace gives exact bytes per interval, the CSV a uniform spread over each flow's
    // span: the same intervals and active flows, the same bytes in all.
    let a = std::fs::read_to_string(from_pcap.join("intervals.csv")).unwrap();
    let b = std::fs::read_to_string(from_csv.join("intervals.csv")).unwrap();
    assert!(a.starts_with("start_s,active_flows,bytes,tfor_k4,tfor_k16\n"), "{a}");
    let cols = |t: &str, c: usize| -> Vec<String> {
        t.lines()
            .skip(1)
            .map(|l| l.split(',').nth(c).unwrap().to_string())
            .collect()
    };
    assert_eq!(cols(&a, 0), cols(&b, 0), "same intervals");
    assert_eq!(cols(&a, 1), cols(&b, 1), "same active flows");
    let total = |t: &str| cols(t, 2).iter().map(|v| v.parse::<f64>().unwrap()).sum::<f64>();
    assert!(
        (total(&a) - total(&b)).abs() <= 1.0 + 1e-9 * total(&a),
        "{} vs {}",
        total(&a),
        total(&b)
    );
    // Every TFOR is a share; a larger k never offloads less.
    for line in a.lines().chain(b.lines()).filter(|l| !l.starts_with("start_s")) {
        let c: Vec<f64> = line
            .split(',')
            .skip(3)
            .filter(|v| !v.is_empty())
            .map(|v| v.parse().unwrap())
            .collect();
        assert!(
            c.iter().all(|t| (0.0..=1.0).contains(t)) && (c.is_empty() || c[0] <= c[1]),
            "{line}"
        );
    }
    // Bad input: one line, exit 2.
    for args in [
        vec!["analyze", "offload", "Cargo.toml"],
        vec!["analyze", "offload", csv.to_str().unwrap(), "--k", "0"],
        vec!["analyze", "offload", s.join("missing.csv").to_str().unwrap()],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(&args)
            .current_dir(repo())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&o.stderr).trim().lines().count(), 1, "{args:?}");
    }
}

#[test]
fn analyze_coswitch_replays_a_trace_through_three_approaches() {
    let s = Scratch::new("cli-coswitch");
    let out = s.join("out");
    let o = tandem(&[
        "analyze",
        "coswitch",
        &sample(),
        "--speedup",
        "0.01",
        "--servers",
        "2",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let so = text(&o.stdout);
    assert!(so.contains("158 flows") && so.contains("CoSwitch"), "{so}");
    let csv = std::fs::read_to_string(out.join("replay.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{csv}");
    for r in &rows {
        assert_eq!(r.split(',').nth(1), Some("5000"), "every packet replayed: {r}");
    }
    assert!(out.join("periods.csv").is_file());
    for args in [
        vec!["analyze", "coswitch", "Cargo.toml"],
        vec!["analyze", "coswitch", "traces/sample.pcap", "--speedup", "0"],
        vec!["analyze", "coswitch", "traces/sample.pcap", "--servers", "0"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(&args)
            .current_dir(repo())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&o.stderr).trim().lines().count(), 1, "{args:?}");
    }
}
