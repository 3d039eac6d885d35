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
    assert!(
        h.contains("--timeout") && h.contains("--csv") && h.contains("--parquet"),
        "{h}"
    );
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

/// A Parquet row printed as `tandem pcap flows --csv` prints it.
fn csv_line(t: &tandem_sim::table::Table, i: usize) -> String {
    use tandem_sim::table::Column;
    let cells: Vec<String> = t
        .columns()
        .iter()
        .map(|(name, c)| match c {
            Column::UInt64(v) => v[i].unwrap().to_string(),
            Column::Utf8(v) => v[i].clone().unwrap(),
            Column::TimestampNs(v) => {
                let ns = v[i].unwrap();
                format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
            }
            other => panic!("column {name}: unexpected {other:?}"),
        })
        .collect();
    cells.join(",")
}

#[test]
fn flows_parquet_matches_the_csv_row_for_row() {
    use tandem_sim::table::{Column, Table};
    let s = Scratch::new("cli-parquet");
    // A short idle timeout gives idle records as well as end-of-file ones.
    for (i, timeout) in ["60s", "1ms"].into_iter().enumerate() {
        let csv = s.join(&format!("flows{i}.csv"));
        let pq = s.join(&format!("flows{i}.parquet"));
        let o = tandem(&[
            "pcap",
            "flows",
            &sample(),
            "--timeout",
            timeout,
            "--csv",
            csv.to_str().unwrap(),
            "--parquet",
            pq.to_str().unwrap(),
            "-q",
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let t = Table::read_parquet(&pq).unwrap();
        let csv = std::fs::read_to_string(&csv).unwrap();
        let mut lines = csv.lines();
        let names: Vec<&str> = t.columns().iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.join(","), lines.next().unwrap(), "same columns, same order");
        let lines: Vec<&str> = lines.collect();
        assert!(lines.len() > 100, "{} flows", lines.len());
        assert_eq!(t.rows(), lines.len());
        for (row, line) in lines.iter().enumerate() {
            assert_eq!(csv_line(&t, row), *line, "row {row}");
        }
        for c in ["first_ts", "last_ts"] {
            assert!(matches!(t.column(c), Some(Column::TimestampNs(_))), "{c}");
        }
        for c in ["src_port", "dst_port", "vlan", "packets", "bytes", "payload_bytes"] {
            assert!(matches!(t.column(c), Some(Column::UInt64(_))), "{c}");
        }
        assert!(
            names.iter().all(|n| t.is_nullable(n) == Some(false)),
            "no column is nullable"
        );
        if i == 1 {
            let Some(Column::Utf8(end)) = t.column("end") else {
                panic!()
            };
            assert!(end.iter().any(|e| e.as_deref() == Some("idle")));
        }
    }
    // --parquet alone: the same file, and no table on standard output.
    let alone = s.join("alone.parquet");
    let o = tandem(&["pcap", "flows", &sample(), "--parquet", alone.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    assert_eq!(
        std::fs::read(&alone).unwrap(),
        std::fs::read(s.join("flows0.parquet")).unwrap()
    );
}

#[test]
fn flows_parquet_bad_output_is_one_line_and_exit_2() {
    let s = Scratch::new("cli-parquet-bad");
    let missing = s.join("no-such-folder").join("flows.parquet");
    for (out, want) in [
        (missing.display().to_string(), missing.display().to_string()),
        (s.path().display().to_string(), s.path().display().to_string()),
        ("-".to_string(), "--parquet -".to_string()),
    ] {
        let o = tandem(&["pcap", "flows", &sample(), "--parquet", &out, "-q"]);
        assert_eq!(o.status.code(), Some(2), "{out}");
        let err = text(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&want), "{err}");
        assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    }
    // A trace cut short: exit 2, and no Parquet or CSV file, whole or partial.
    let cut = s.join("cut.pcap");
    let bytes = std::fs::read(sample()).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2 + 3]).unwrap();
    let pq = s.join("cut.parquet");
    let csv = s.join("cut.csv");
    let o = tandem(&[
        "pcap",
        "flows",
        cut.to_str().unwrap(),
        "--parquet",
        pq.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("cut short"), "{}", text(&o.stderr));
    assert!(!pq.exists() && !csv.exists());
    let left: Vec<String> = std::fs::read_dir(s.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
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
            "active-flows-ccdf.svg",
            "tfor-ccdf.csv",
            "tfor-ccdf.png",
            "tfor-ccdf.svg",
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
    // The paper's Figures 1 and 2 for the trace: every flow and packet counted.
    assert!(so.contains("158 flows, 5000 packets; mice (< 18 packets): "), "{so}");
    let traffic = std::fs::read_to_string(out.join("traffic.csv")).unwrap();
    let last = traffic.lines().last().unwrap();
    assert!(last.ends_with(",1.000000,1.000000"), "{last}");
    assert!(out.join("traffic.png").is_file() && out.join("traffic.svg").is_file());
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

// ---------------------------------------------------------------------------------------------
// tandem of decode / encode

mod of {
    use super::{tandem, text};
    use std::io::Write;
    use std::net::Ipv4Addr;
    use std::process::{Command, Stdio};
    use tandem_testkit::Scratch;
    use tandem_wire::openflow::*;
    use tandem_wire::pcap::TraceWriter;
    use tandem_wire::MacAddr;

    fn msg(version: Version, xid: u32, body: Body) -> Vec<u8> {
        Message { version, xid, body }.to_bytes().expect("emit")
    }

    fn flow_mod10() -> Body {
        Body::FlowMod(FlowMod {
            cookie: 0x1234,
            cookie_mask: 0,
            table_id: 0,
            command: FlowModCommand::Add,
            idle_timeout: 10,
            hard_timeout: 30,
            priority: 100,
            buffer_id: 0xffff_ffff,
            out_port: 0xffff,
            out_group: 0,
            flags: 1,
            matches: FlowMatch::V10(Match10 {
                wildcards: 0x3820ef,
                in_port: 3,
                dl_src: MacAddr([2, 0, 0, 0, 0, 1]),
                dl_type: 0x0800,
                nw_dst: Ipv4Addr::new(10, 0, 0, 2),
                ..Match10::default()
            }),
            actions: vec![
                Action::SetVlanVid(7),
                Action::Output { port: 2, max_len: 0 },
                Action::Enqueue { port: 1, queue_id: 4 },
            ],
            instructions: vec![],
        })
    }

    fn oxm() -> OxmMatch {
        OxmMatch {
            fields: vec![
                OxmField::InPort(5),
                OxmField::EthType(0x0800),
                OxmField::Ipv4Dst(Ipv4Addr::new(10, 1, 0, 0), Some(Ipv4Addr::new(255, 255, 0, 0))),
                OxmField::IpProto(6),
                OxmField::TcpDst(80),
                OxmField::EthSrc(MacAddr([2, 0, 0, 0, 0, 9]), None),
            ],
        }
    }

    fn flow_mod13() -> Body {
        Body::FlowMod(FlowMod {
            cookie: 7,
            cookie_mask: 0xff,
            table_id: 1,
            command: FlowModCommand::ModifyStrict,
            idle_timeout: 0,
            hard_timeout: 60,
            priority: 200,
            buffer_id: 0xffff_ffff,
            out_port: 0xffff_ffff,
            out_group: 0xffff_ffff,
            flags: 0,
            matches: FlowMatch::Oxm(oxm()),
            actions: vec![],
            instructions: vec![
                Instruction::ApplyActions(vec![
                    Action::PushVlan(0x8100),
                    Action::SetField(OxmField::VlanVid(0x1000 | 5, None)),
                    Action::SetField(OxmField::EthDst(MacAddr([0xaa, 0xbb, 0xcc, 0, 0, 1]), None)),
                    Action::Output {
                        port: 0xffff_fffd,
                        max_len: 0xffff,
                    },
                ]),
                Instruction::WriteActions(vec![Action::Group(3), Action::SetQueue(2), Action::PopVlan]),
                Instruction::WriteMetadata { metadata: 1, mask: 3 },
                Instruction::Meter(9),
                Instruction::GotoTable(2),
            ],
        })
    }

    fn desc_request13() -> Body {
        Body::MultipartRequest(MultipartRequest {
            flags: 0,
            body: MultipartRequestBody::Desc,
        })
    }

    fn phy_port() -> PhyPort10 {
        let mut name = [0u8; 16];
        name[..4].copy_from_slice(b"eth1");
        PhyPort10 {
            port_no: 1,
            hw_addr: MacAddr([2, 0, 0, 0, 0, 1]),
            name,
            config: 0,
            state: 0,
            curr: 0x40,
            advertised: 0,
            supported: 0,
            peer: 0,
        }
    }

    fn port13() -> Port13 {
        let mut name = [0u8; 16];
        name[..3].copy_from_slice(b"p13");
        Port13 {
            port_no: 13,
            hw_addr: MacAddr([2, 0, 0, 0, 0, 13]),
            name,
            config: 1,
            state: 4,
            curr: 0x800,
            advertised: 0,
            supported: 0,
            peer: 0,
            curr_speed: 10_000_000,
            max_speed: 10_000_000,
        }
    }

    /// One message of every modelled body of both versions, plus opaque ones.
    fn every_message() -> Vec<u8> {
        let (v10, v13) = (Version::V1_0, Version::V1_3);
        let fsr10 = FlowStatsRequest {
            table_id: 0xff,
            out_port: 0xffff,
            out_group: 0,
            cookie: 0,
            cookie_mask: 0,
            matches: FlowMatch::V10(Match10::default()),
        };
        let fsr13 = FlowStatsRequest {
            table_id: 0xff,
            out_port: 0xffff_ffff,
            out_group: 0xffff_ffff,
            cookie: 5,
            cookie_mask: 7,
            matches: FlowMatch::Oxm(oxm()),
        };
        let fs = |v: Version| FlowStats {
            table_id: 0,
            duration_sec: 5,
            duration_nsec: 6,
            priority: 100,
            idle_timeout: 1,
            hard_timeout: 2,
            flags: if v == Version::V1_0 { 0 } else { 1 },
            cookie: 9,
            packet_count: 10,
            byte_count: 1000,
            matches: if v == Version::V1_0 {
                FlowMatch::V10(Match10::default())
            } else {
                FlowMatch::Oxm(oxm())
            },
            actions: if v == Version::V1_0 {
                vec![Action::Output { port: 1, max_len: 0 }]
            } else {
                vec![]
            },
            instructions: if v == Version::V1_0 {
                vec![]
            } else {
                vec![Instruction::ClearActions]
            },
        };
        let ps = |v: Version| PortStats {
            port_no: 1,
            counters: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
            duration_sec: if v == Version::V1_0 { 0 } else { 3 },
            duration_nsec: if v == Version::V1_0 { 0 } else { 4 },
        };
        let ts = |v: Version| {
            let mut name = [0u8; 32];
            if v == Version::V1_0 {
                name[..7].copy_from_slice(b"classif");
            }
            TableStats {
                table_id: 0,
                name,
                wildcards: if v == Version::V1_0 { 0x3fffff } else { 0 },
                max_entries: if v == Version::V1_0 { 1024 } else { 0 },
                active_count: 3,
                lookup_count: 100,
                matched_count: 90,
            }
        };
        let mut out = Vec::new();
        for v in [v10, v13] {
            let v10 = v == Version::V1_0;
            let mut bodies = vec![
                Body::Hello(Hello::with_versions(&[Version::V1_0, Version::V1_3])),
                Body::Hello(Hello::default()),
                Body::Error(ErrorMsg {
                    kind: 1,
                    code: 2,
                    data: vec![1, 2, 3],
                }),
                Body::EchoRequest(vec![0xbe, 0xef]),
                Body::EchoReply(vec![]),
                Body::FeaturesRequest,
                Body::FeaturesReply(FeaturesReply {
                    datapath_id: 0x0000_0200_0000_0001,
                    n_buffers: 256,
                    n_tables: 4,
                    auxiliary_id: if v10 { 0 } else { 1 },
                    capabilities: 0xc7,
                    actions: if v10 { 0xfff } else { 0 },
                    ports: if v10 { vec![phy_port()] } else { vec![] },
                }),
                Body::GetConfigRequest,
                Body::GetConfigReply(SwitchConfig {
                    flags: 0,
                    miss_send_len: 128,
                }),
                Body::SetConfig(SwitchConfig {
                    flags: 1,
                    miss_send_len: 0xffff,
                }),
                Body::PacketIn(PacketIn {
                    buffer_id: 0xffff_ffff,
                    total_len: 4,
                    reason: 1,
                    in_port: if v10 { 3 } else { 0 },
                    table_id: if v10 { 0 } else { 2 },
                    cookie: if v10 { 0 } else { 0xabc },
                    oxm: if v10 {
                        OxmMatch::default()
                    } else {
                        OxmMatch {
                            fields: vec![OxmField::InPort(3)],
                        }
                    },
                    data: vec![1, 2, 3, 4],
                }),
                Body::FlowRemoved(FlowRemoved {
                    cookie: 1,
                    priority: 2,
                    reason: 0,
                    table_id: if v10 { 0 } else { 3 },
                    duration_sec: 4,
                    duration_nsec: 5,
                    idle_timeout: 6,
                    hard_timeout: if v10 { 0 } else { 7 },
                    packet_count: 8,
                    byte_count: 9,
                    matches: if v10 {
                        FlowMatch::V10(Match10::default())
                    } else {
                        FlowMatch::Oxm(oxm())
                    },
                }),
                Body::PortStatus(PortStatus {
                    reason: 2,
                    port: if v10 {
                        Port::V10(phy_port())
                    } else {
                        Port::V13(port13())
                    },
                }),
                Body::PacketOut(PacketOut {
                    buffer_id: 0xffff_ffff,
                    in_port: if v10 { 0xfffd } else { 0xffff_fffd },
                    actions: vec![Action::Output { port: 1, max_len: 0 }],
                    data: vec![0xde, 0xad],
                }),
                if v10 { flow_mod10() } else { flow_mod13() },
                Body::BarrierRequest,
                Body::BarrierReply,
            ];
            let fsr = if v10 { fsr10.clone() } else { fsr13.clone() };
            for body in [
                MultipartRequestBody::Desc,
                MultipartRequestBody::Flow(fsr.clone()),
                MultipartRequestBody::Aggregate(fsr),
                MultipartRequestBody::PortStats(if v10 { 0xffff } else { 0xffff_fffc }),
                MultipartRequestBody::Table,
                MultipartRequestBody::Other {
                    kind: 9,
                    body: vec![0, 0, 0, 1, 0, 0, 0, 0],
                },
            ] {
                bodies.push(Body::MultipartRequest(MultipartRequest { flags: 0, body }));
            }
            let mut replies = vec![
                MultipartReplyBody::Desc(DescStats {
                    mfr_desc: b"Tandem".to_vec(),
                    hw_desc: b"sim".to_vec(),
                    sw_desc: b"0.1".to_vec(),
                    serial_num: b"42".to_vec(),
                    dp_desc: b"tor-1".to_vec(),
                }),
                MultipartReplyBody::Flow(vec![fs(v), fs(v)]),
                MultipartReplyBody::Aggregate(AggregateStats {
                    packet_count: 1,
                    byte_count: 2,
                    flow_count: 3,
                }),
                MultipartReplyBody::PortStats(vec![ps(v)]),
                MultipartReplyBody::Table(vec![ts(v)]),
                MultipartReplyBody::Other {
                    kind: 0xffff,
                    body: vec![0, 0, 0x23, 0x20, 1, 2, 3, 4],
                },
            ];
            if !v10 {
                bodies.push(Body::MultipartRequest(MultipartRequest {
                    flags: 0,
                    body: MultipartRequestBody::PortDesc,
                }));
                replies.push(MultipartReplyBody::PortDesc(vec![port13()]));
            }
            for body in replies {
                bodies.push(Body::MultipartReply(MultipartReply { flags: 1, body }));
            }
            // Opaque: 1.0 port_mod and vendor, 1.3 meter_mod, group_mod and role_request.
            let opaque: &[u8] = if v10 { &[15, 4] } else { &[29, 15, 24] };
            for &code in opaque {
                bodies.push(Body::Opaque {
                    type_code: code,
                    body: vec![0, 1, 2, 3, 4, 5, 6, 7],
                });
            }
            for (i, body) in bodies.into_iter().enumerate() {
                out.extend(msg(v, i as u32, body));
            }
        }
        // A version this codec does not model.
        out.extend([5, 0, 0, 8, 0, 0, 0, 99]);
        out
    }

    fn lines(stdout: &[u8]) -> Vec<serde_json::Value> {
        text(stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("each line is JSON"))
            .collect()
    }

    #[test]
    fn decode_prints_spec_names() {
        let s = Scratch::new("cli-of");
        let f = s.join("msgs.bin");
        let mut bytes = msg(Version::V1_0, 11, flow_mod10());
        bytes.extend(msg(Version::V1_3, 12, flow_mod13()));
        bytes.extend(msg(Version::V1_3, 13, desc_request13()));
        std::fs::write(&f, &bytes).unwrap();
        let o = tandem(&["of", "decode", f.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v = lines(&o.stdout);
        assert_eq!(v.len(), 3, "{}", text(&o.stdout));

        let a = &v[0];
        assert_eq!(
            (a["version"].as_u64(), a["type"].as_str(), a["xid"].as_u64()),
            (Some(1), Some("flow_mod"), Some(11))
        );
        assert_eq!(a["command"], "add");
        assert_eq!(
            (
                a["priority"].as_u64(),
                a["idle_timeout"].as_u64(),
                a["hard_timeout"].as_u64()
            ),
            (Some(100), Some(10), Some(30))
        );
        assert_eq!(
            (a["cookie"].as_u64(), a["buffer_id"].as_u64(), a["out_port"].as_u64()),
            (Some(0x1234), Some(0xffff_ffff), Some(0xffff))
        );
        assert_eq!(a["match"]["in_port"], 3);
        assert_eq!(a["match"]["dl_src"], "02:00:00:00:00:01");
        assert_eq!(a["match"]["dl_type"], 0x0800);
        assert_eq!(a["match"]["nw_dst"], "10.0.0.2");
        assert_eq!(a["match"]["wildcards"], 0x3820ef);
        assert_eq!(a["actions"][0]["type"], "set_vlan_vid");
        assert_eq!(a["actions"][1]["type"], "output");
        assert_eq!(a["actions"][1]["port"], 2);
        assert_eq!(a["actions"][2]["type"], "enqueue");
        assert!(a.get("raw").is_none() && a.get("body_hex").is_none());

        let b = &v[1];
        assert_eq!(
            (b["version"].as_u64(), b["type"].as_str(), b["xid"].as_u64()),
            (Some(4), Some("flow_mod"), Some(12))
        );
        assert_eq!(b["command"], "modify_strict");
        assert_eq!(
            (
                b["table_id"].as_u64(),
                b["cookie_mask"].as_u64(),
                b["out_group"].as_u64()
            ),
            (Some(1), Some(0xff), Some(0xffff_ffff))
        );
        assert_eq!(b["match"]["in_port"], 5);
        assert_eq!(b["match"]["eth_type"], 0x0800);
        assert_eq!(b["match"]["ipv4_dst"], "10.1.0.0");
        assert_eq!(b["match"]["ipv4_dst_mask"], "255.255.0.0");
        assert_eq!(b["match"]["tcp_dst"], 80);
        assert_eq!(b["match"]["eth_src"], "02:00:00:00:00:09");
        let apply = &b["instructions"][0];
        assert_eq!(apply["type"], "apply_actions");
        assert_eq!(apply["actions"][0]["type"], "push_vlan");
        assert_eq!(apply["actions"][1]["type"], "set_field");
        assert_eq!(apply["actions"][1]["field"]["vlan_vid"], 0x1005);
        assert_eq!(apply["actions"][2]["field"]["eth_dst"], "aa:bb:cc:00:00:01");
        assert_eq!(b["instructions"][1]["actions"][0]["type"], "group");
        assert_eq!(b["instructions"][4]["type"], "goto_table");

        let c = &v[2];
        assert_eq!(
            (c["version"].as_u64(), c["type"].as_str(), c["xid"].as_u64()),
            (Some(4), Some("multipart_request"), Some(13))
        );
        assert_eq!(c["multipart_type"], "desc");
        assert_eq!(c["flags"], 0);

        // The match keeps the wire order of its fields (a JSON object, written in order).
        let line = text(&o.stdout).lines().nth(1).unwrap().to_string();
        let at = |k: &str| line.find(&format!("\"{k}\"")).unwrap();
        assert!(at("in_port") < at("eth_type") && at("tcp_dst") < at("eth_src"));
    }

    fn encode_stdin(json: &[u8]) -> std::process::Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(["of", "encode", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(json).unwrap();
        child.wait_with_output().unwrap()
    }

    #[test]
    fn decode_then_encode_gives_the_same_bytes() {
        let s = Scratch::new("cli-of");
        let f = s.join("every.bin");
        let bytes = every_message();
        std::fs::write(&f, &bytes).unwrap();
        let o = tandem(&["of", "decode", f.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v = lines(&o.stdout);
        // Every modelled body is printed with its fields, never as raw bytes.
        for j in &v {
            assert!(j.get("raw").is_none(), "fell back to raw: {j}");
        }
        let types: Vec<&str> = v.iter().map(|j| j["type"].as_str().unwrap()).collect();
        for t in [
            "stats_request",
            "stats_reply",
            "port_mod",
            "vendor",
            "multipart_reply",
            "meter_mod",
            "group_mod",
            "role_request",
        ] {
            assert!(types.contains(&t), "no {t} in {types:?}");
        }
        let mps: Vec<&str> = v.iter().filter_map(|j| j["multipart_type"].as_str()).collect();
        for t in [
            "desc",
            "flow",
            "aggregate",
            "port_stats",
            "table",
            "meter",
            "port_desc",
            "experimenter",
        ] {
            assert!(mps.contains(&t), "no multipart {t} in {mps:?}");
        }
        let meter = v.iter().find(|j| j["type"] == "meter_mod").unwrap();
        assert_eq!(meter["body_hex"], "0001020304050607");
        let pin = v
            .iter()
            .find(|j| j["type"] == "packet_in" && j["version"] == 4)
            .unwrap();
        assert_eq!((pin["reason"].as_u64(), pin["cookie"].as_u64()), (Some(1), Some(0xabc)));
        assert_eq!(pin["match"]["in_port"], 3);
        assert_eq!(pin["data_hex"], "01020304");

        // Through a file ...
        let json = s.join("every.json");
        std::fs::write(&json, &o.stdout).unwrap();
        let back = s.join("back.bin");
        let e = tandem(&["of", "encode", json.to_str().unwrap(), "--out", back.to_str().unwrap()]);
        assert!(e.status.success(), "{}", text(&e.stderr));
        assert_eq!(std::fs::read(&back).unwrap(), bytes);
        // ... and through standard input and output.
        let e = encode_stdin(&o.stdout);
        assert!(e.status.success(), "{}", text(&e.stderr));
        assert_eq!(e.stdout, bytes);
    }

    /// An Ethernet + IPv4 + TCP frame (checksums left zero: decoders do not check them).
    fn frame(src: ([u8; 4], u16), dst: ([u8; 4], u16), seq: u32, flags: u8, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
        let total = (20 + 20 + payload.len()) as u16;
        f.extend([0x45, 0, (total >> 8) as u8, total as u8, 0, 0, 0x40, 0, 64, 6, 0, 0]);
        f.extend(src.0);
        f.extend(dst.0);
        f.extend(src.1.to_be_bytes());
        f.extend(dst.1.to_be_bytes());
        f.extend(seq.to_be_bytes());
        f.extend([0, 0, 0, 0, 0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
        f.extend(payload);
        f
    }

    #[test]
    fn decode_reads_an_openflow_session_capture() {
        let s = Scratch::new("cli-of");
        let f = s.join("session.pcap");
        let sw = ([10, 0, 0, 1], 40000u16);
        let ctl = ([10, 0, 0, 2], 6653u16);
        let hello = msg(Version::V1_3, 1, Body::Hello(Hello::with_versions(&[Version::V1_3])));
        let feat = msg(Version::V1_3, 2, Body::FeaturesRequest);
        let fm = msg(Version::V1_3, 3, flow_mod13());
        let mut w = TraceWriter::ethernet(Vec::new()).unwrap();
        let mut put = |ts: u64, fr: Vec<u8>| w.write(ts, &fr, fr.len() as u32).unwrap();
        let t0 = 1_700_000_000_000_000_000u64;
        put(t0, frame(sw, ctl, 100, 0x02, &[])); // SYN
        put(t0 + 1_000, frame(ctl, sw, 500, 0x12, &[])); // SYN-ACK
        put(t0 + 2_000, frame(sw, ctl, 101, 0x18, &hello));
        // The controller's hello and features request in one segment, its flow_mod split in two.
        let mut both = hello.clone();
        both.extend(&feat);
        put(t0 + 3_000, frame(ctl, sw, 501, 0x18, &both));
        let at = 501 + both.len() as u32;
        put(t0 + 4_000, frame(ctl, sw, at, 0x18, &fm[..20]));
        put(t0 + 5_000_000, frame(ctl, sw, at + 20, 0x18, &fm[20..]));
        // A retransmission of the last segment is not printed twice.
        put(t0 + 6_000_000, frame(ctl, sw, at + 20, 0x18, &fm[20..]));
        // Another TCP connection is ignored.
        put(
            t0 + 7_000_000,
            frame(([10, 0, 0, 3], 1234), ([10, 0, 0, 4], 80), 1, 0x18, &hello),
        );
        // A broken message (length 4) in the switch's direction: an error line, then nothing more.
        put(
            t0 + 8_000_000,
            frame(sw, ctl, 101 + hello.len() as u32, 0x18, &[4, 0, 0, 4, 0, 0, 0, 0]),
        );
        std::fs::write(&f, w.into_inner()).unwrap();

        let o = tandem(&["of", "decode", f.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v = lines(&o.stdout);
        assert_eq!(v.len(), 5, "{}", text(&o.stdout));
        assert_eq!(v[0]["type"], "hello");
        assert_eq!(v[0]["direction"], "10.0.0.1:40000->10.0.0.2:6653");
        assert!((v[0]["ts"].as_f64().unwrap() - 1.7e9).abs() < 1.0);
        assert_eq!(v[1]["type"], "hello");
        assert_eq!(v[1]["direction"], "10.0.0.2:6653->10.0.0.1:40000");
        assert_eq!(v[2]["type"], "features_request");
        assert_eq!(v[3]["type"], "flow_mod");
        assert_eq!(v[3]["xid"], 3);
        let dt = v[3]["ts"].as_f64().unwrap() - v[0]["ts"].as_f64().unwrap();
        assert!((dt - 0.004998).abs() < 1e-4, "{dt}");
        assert!(v[4]["error"].as_str().is_some(), "{}", v[4]);
        assert_eq!(v[4]["direction"], "10.0.0.1:40000->10.0.0.2:6653");

        // The messages re-encode (ts and direction are ignored by encode).
        let good: Vec<u8> = text(&o.stdout)
            .lines()
            .take(4)
            .flat_map(|l| format!("{l}\n").into_bytes())
            .collect();
        let e = encode_stdin(&good);
        assert!(e.status.success(), "{}", text(&e.stderr));
        let mut want = hello.clone();
        want.extend(&hello);
        want.extend(&feat);
        want.extend(&fm);
        assert_eq!(e.stdout, want);
    }

    #[test]
    fn what_the_fields_cannot_say_stays_raw() {
        let s = Scratch::new("cli-of");
        let f = s.join("odd.bin");
        // An OpenFlow 1.0 packet_in whose pad byte is 0x77; a message of an unnamed type.
        let mut b = vec![
            1, 10, 0, 20, 0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 0, 2, 0, 3, 1, 0x77, 0xab, 0xcd,
        ];
        b.extend([4, 99, 0, 10, 0, 0, 0, 6, 1, 2]);
        std::fs::write(&f, &b).unwrap();
        let o = tandem(&["of", "decode", f.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v = lines(&o.stdout);
        assert_eq!(
            (v[0]["type"].as_str(), v[0]["in_port"].as_u64()),
            (Some("packet_in"), Some(3))
        );
        assert_eq!(
            (v[0]["raw"].as_bool(), v[0]["body_hex"].as_str()),
            (Some(true), Some("ffffffff000200030177abcd"))
        );
        assert_eq!(
            (v[1]["type"].as_str(), v[1]["type_code"].as_u64()),
            (Some("unknown"), Some(99))
        );
        let e = encode_stdin(&o.stdout);
        assert!(e.status.success(), "{}", text(&e.stderr));
        assert_eq!(e.stdout, b);
    }

    #[test]
    fn bad_openflow_input_is_one_line_and_exit_2() {
        let s = Scratch::new("cli-of");
        let one_line = |o: &std::process::Output, want: &str| {
            assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
            let e = text(&o.stderr);
            assert_eq!(e.lines().count(), 1, "{e}");
            assert!(e.contains(want), "{e} lacks {want}");
        };
        // A raw file cut inside its second message.
        let f = s.join("cut.bin");
        let mut b = msg(Version::V1_0, 1, Body::BarrierRequest);
        b.extend(&msg(Version::V1_0, 2, flow_mod10())[..30]);
        std::fs::write(&f, &b).unwrap();
        let o = tandem(&["of", "decode", f.to_str().unwrap()]);
        one_line(&o, "cut.bin: byte 8: truncated");
        // A message whose body does not parse.
        let f = s.join("bad.bin");
        std::fs::write(&f, [1, 5, 0, 10, 0, 0, 0, 1, 0, 0]).unwrap();
        one_line(&tandem(&["of", "decode", f.to_str().unwrap()]), "bad.bin: byte 0:");
        // A length below the header.
        std::fs::write(&f, [4, 0, 0, 2, 0, 0, 0, 1]).unwrap();
        one_line(
            &tandem(&["of", "decode", f.to_str().unwrap()]),
            "byte 0: not an OpenFlow message",
        );
        // A missing file.
        one_line(
            &tandem(&["of", "decode", s.join("nope.bin").to_str().unwrap()]),
            "nope.bin",
        );
        // JSON: not JSON, an unknown type, a missing field, a bad value: each names its line.
        let j = s.join("bad.json");
        let out = s.join("out.bin");
        let good = r#"{"version":4,"type":"barrier_request","xid":1}"#;
        for (bad, want) in [
            ("{nope", "bad.json: line 2: not JSON"),
            (
                r#"{"version":4,"type":"frobnicate","xid":1}"#,
                "line 2: no message type `frobnicate`",
            ),
            (r#"{"version":4,"type":"flow_mod","xid":1}"#, "line 2: missing field"),
            (
                r#"{"version":1,"type":"echo_request","xid":1,"data_hex":"zz"}"#,
                "line 2: field `data_hex`",
            ),
            (
                r#"{"version":4,"type":"meter_mod","xid":1}"#,
                "line 2: message type `meter_mod` needs `body_hex`",
            ),
            (
                r#"{"version":4,"type":"set_config","xid":1,"flags":70000,"miss_send_len":1}"#,
                "line 2: field `flags`",
            ),
        ] {
            std::fs::write(&j, format!("{good}\n{bad}\n")).unwrap();
            let o = tandem(&["of", "encode", j.to_str().unwrap(), "--out", out.to_str().unwrap()]);
            one_line(&o, want);
        }
    }
}

// tandem controller / ofbench

#[test]
fn controller_and_ofbench_refuse_bad_input_in_one_line() {
    let one_line_exit_2 = |args: &[&str], needle: &str| {
        let o = tandem(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = text(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    };
    one_line_exit_2(&["controller", "--backend", "gpu"], "unknown backend");
    one_line_exit_2(
        &["ofbench", "--loops", "3", "--warmup", "3"],
        "warm-up loops (3) must be fewer than loops (3)",
    );
    one_line_exit_2(&["ofbench", "--of", "1.1"], "expected 1.0 or 1.3");
    one_line_exit_2(&["controller", "--app", "nat"], "unknown app");
    // An app's configuration file: missing, or a bad key, named in one line.
    let dir = Scratch::new("app-config");
    let bad_tcpu = dir.join("tcpu.toml");
    std::fs::write(&bad_tcpu, "[tcpu]\nrank_interval = 5\n").unwrap();
    let bad_cos = dir.join("coswitch.toml");
    std::fs::write(&bad_cos, "[coswitch]\ndscp = 99\n").unwrap();
    for (app, file, needle) in [
        ("tcpu", bad_tcpu.to_str().unwrap(), "tcpu.rank_interval"),
        ("coswitch", bad_cos.to_str().unwrap(), "coswitch.dscp"),
        ("tcpu", "/nonexistent/app.toml", "/nonexistent/app.toml"),
    ] {
        let args = [
            "controller",
            "--listen",
            "127.0.0.1:0",
            "--app",
            app,
            "--app-config",
            file,
        ];
        one_line_exit_2(&args, needle);
        assert_eq!(text(&tandem(&args).stderr).lines().count(), 1);
    }
    one_line_exit_2(
        &[
            "controller",
            "--listen",
            "127.0.0.1:0",
            "--app",
            "l2",
            "--app-config",
            bad_tcpu.to_str().unwrap(),
        ],
        "takes no configuration file",
    );
    one_line_exit_2(
        &[
            "controller",
            "--listen",
            "127.0.0.1:0",
            "--app",
            "coswitch",
            "--shards",
            "2",
        ],
        "one shard",
    );
    one_line_exit_2(
        &["controller", "--listen", "127.0.0.1:0", "--batch", "0"],
        "pool batch size is zero",
    );
    if !cfg!(feature = "cuda") {
        let o = tandem(&["controller", "--listen", "127.0.0.1:0", "--backend", "cuda"]);
        assert_eq!(o.status.code(), Some(2));
        let err = text(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("--features cuda"), "{err}");
    }
}

#[test]
fn controller_serves_ofbench_and_reports_its_counters() {
    let free_port = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let (port, metrics) = (free_port(), free_port());
    let listen = format!("127.0.0.1:{port}");
    let metrics = format!("127.0.0.1:{metrics}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args([
            "controller",
            "--listen",
            &listen,
            "--metrics",
            &metrics,
            "--log",
            "warn",
        ])
        .spawn()
        .unwrap();
    let o = tandem(&[
        "ofbench",
        "--controller",
        &listen,
        "--switches",
        "2",
        "--loops",
        "3",
        "--loop-ms",
        "200",
        "--macs",
        "50",
    ]);
    let out = text(&o.stdout);
    let stats = tandem(&["controller", "stats", "--metrics", &metrics]);
    let _ = child.kill();
    let _ = child.wait();
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    let result = out.lines().last().unwrap();
    assert!(
        result.starts_with("RESULT: 2 switches 2 tests min/max/avg/stdev = "),
        "{out}"
    );
    let stats = text(&stats.stdout);
    let handshakes = stats.lines().find(|l| l.starts_with("handshakes ")).unwrap_or_default();
    assert!(handshakes.ends_with(" 2"), "{stats}");
}

#[test]
fn analyze_cam_sizes_the_cam_from_a_trace() {
    let s = Scratch::new("cam");
    let out = s.join("cam");
    let o = tandem(&["analyze", "cam", &sample(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("CAM entries"), "{}", text(&o.stdout));
    let csv = std::fs::read_to_string(out.join("cam.csv")).unwrap();
    assert!(csv.starts_with("entries,packets,cumulative_fraction\n"), "{csv}");
    assert!(csv.trim_end().ends_with(",1.000000"), "{csv}");
    assert_eq!(&std::fs::read(out.join("cam.png")).unwrap()[1..4], b"PNG");
    let svg = std::fs::read_to_string(out.join("cam.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("CAM entries"), "{svg}");
    for args in [
        vec!["analyze", "cam", "Cargo.toml"],
        vec!["analyze", "cam", "missing.pcap"],
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
fn axon_experiments_are_listed() {
    let o = tandem(&["reproduce", "--list"]);
    assert!(o.status.success());
    let l = text(&o.stdout);
    for name in ["axon-latency", "axon-bandwidth", "axon-overhead", "axon-congestion"] {
        assert!(l.contains(name), "{l}");
    }
}

/// One exit-code rule: a folder where a file is expected, an empty input, a zero count or an
/// output folder that cannot be made is bad input (exit 2, one line), and a failed command
/// leaves no results folder behind.
#[test]
fn bad_paths_and_counts_are_exit_2_and_leave_nothing() {
    let s = Scratch::new("cli-bad-paths");
    let dir = s.path().display().to_string();
    std::fs::write(s.join("empty"), b"").unwrap();
    std::fs::write(s.join("file"), b"x").unwrap();
    let empty = s.join("empty").display().to_string();
    let under_file = s.join("file/out").display().to_string();
    let fresh = s.join("fresh/a/b").display().to_string();
    let scenario = repo().join("scenarios/incast.toml").display().to_string();
    let readme = repo().join("traces/README.md").display().to_string();
    let sample = sample();
    for args in [
        vec!["pcap", "flows", dir.as_str()],
        vec!["pcap", "summary", dir.as_str()],
        vec!["analyze", "cam", dir.as_str()],
        vec!["of", "decode", empty.as_str()],
        vec!["pcap", "flows", sample.as_str(), "--max-flows", "0"],
        vec!["pcap", "synth", under_file.as_str(), "--packets", "0"],
        vec!["sim", "run", scenario.as_str(), "--out", under_file.as_str(), "-q"],
        vec![
            "reproduce",
            "tcpu-forwarding",
            "--quick",
            "--out",
            under_file.as_str(),
            "-q",
        ],
        vec!["analyze", "cam", sample.as_str(), "--out", under_file.as_str()],
        // The input is bad only after the output folder was made: the folder goes again.
        vec!["analyze", "cam", readme.as_str(), "--out", fresh.as_str()],
    ] {
        let o = tandem(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(
            err.trim().lines().count() == 1 || err.starts_with("error: invalid value"),
            "{args:?}: {err}"
        );
    }
    assert!(!s.join("fresh").exists(), "a failed command left its results folder");
}

/// A benchmark whose controller goes away mid-test measured nothing: exit 1, saying so.
#[test]
fn ofbench_fails_when_the_controller_goes_away() {
    /// Kills the controller when the test ends, also when it fails.
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let addr = free_loopback_addr();
    let ctl = Kill(
        Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(["controller", "--listen", &addr, "--metrics", "127.0.0.1:0"])
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the controller"),
    );
    assert!(listening(&addr), "the controller did not start listening on {addr}");
    let bench = std::thread::spawn({
        let addr = addr.clone();
        move || {
            tandem(&[
                "ofbench",
                "--controller",
                &addr,
                "--switches",
                "2",
                "--loops",
                "6",
                "--loop-ms",
                "300",
                "--warmup",
                "0",
                "--macs",
                "100",
            ])
        }
    });
    // Once the switches are connected and sending, the controller goes.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    drop(ctl);
    let o = bench.join().expect("ofbench thread");
    assert_eq!(o.status.code(), Some(1), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stderr).contains("lost their connection"), "{}", text(&o.stderr));
}

/// SIGTERM (systemd, `kill`, a container stop) is a clean shutdown: exit 0, and a log written to
/// a file is plain text (no colour codes).
#[test]
fn controller_stops_cleanly_on_sigterm_and_logs_plain_text() {
    let addr = free_loopback_addr();
    let ctl = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["controller", "--listen", &addr])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the controller");
    let up = listening(&addr);
    let _ = Command::new("kill").args(["-TERM", &ctl.id().to_string()]).status();
    let out = ctl.wait_with_output().expect("wait for the controller");
    assert!(up, "the controller did not start listening on {addr}");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let log = text(&out.stderr);
    assert!(log.contains("shutting down"), "{log}");
    assert!(
        !log.contains('\u{1b}'),
        "colour codes in a log that is not a terminal: {log:?}"
    );
}

/// A loopback address with a port nobody listens on now.
fn free_loopback_addr() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    format!("127.0.0.1:{port}")
}

/// Waits (up to 5 s: a debug build on a busy machine starts slowly) until `addr` accepts.
fn listening(addr: &str) -> bool {
    (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(25));
        std::net::TcpStream::connect(addr).is_ok()
    })
}

#[test]
fn a_reader_that_goes_away_early_is_not_an_error() {
    // `tandem ... | head -2`: the pipe is closed before the command prints. It must neither
    // panic nor fail; its results folder is written whole.
    let dir = Scratch::new("cli-epipe");
    let out = dir.path().join("run");
    let scenario = repo().join("scenarios/incast.toml");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args([
            "sim",
            "run",
            &scenario.display().to_string(),
            "-q",
            "--set",
            "duration=20ms",
        ])
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run tandem");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("wait for tandem");
    let err = text(&o.stderr);
    assert!(o.status.success(), "{:?}: {err}", o.status);
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.join("summary.json").is_file());
}

#[test]
fn controller_tls_options_come_together_and_bad_files_are_named() {
    let o = tandem(&["controller", "--tls-cert", "c.pem"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--tls-key"), "{}", text(&o.stderr));
    let o = tandem(&[
        "controller",
        "--listen",
        "127.0.0.1:0",
        "--tls-cert",
        "/nonexistent/c.pem",
        "--tls-key",
        "/nonexistent/k.pem",
        "--tls-ca",
        "/nonexistent/ca.pem",
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("/nonexistent/c.pem"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_synthetic_trace_that_fails_midway_leaves_no_file() {
    // A full disk, made with a file-size limit (and SIGXFSZ ignored, so the write fails with
    // EFBIG instead of killing the process): exit 1, and neither the capture nor its
    // temporary file is left behind.
    let dir = Scratch::new("synth-full");
    let out = dir.path().join("t.pcap");
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f 8; exec '{}' pcap synth '{}' --packets 100000",
            env!("CARGO_BIN_EXE_tandem"),
            out.display()
        ))
        .output()
        .expect("run sh");
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("t.pcap"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn an_interrupted_run_leaves_no_results_folder() {
    // Ctrl-C (SIGINT) during `sim run`: exit 130 and no empty or partial results folder.
    let dir = Scratch::new("cli-interrupt");
    let out = dir.path().join("results/run");
    let scenario = repo().join("scenarios/fat-tree-websearch.toml");
    let child = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["sim", "run", &scenario.display().to_string(), "-q"])
        .arg("--out")
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run tandem");
    // Wait until the run has made its folder (it is working then), then interrupt it.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !out.is_dir() {
        assert!(std::time::Instant::now() < until, "the run never made its folder");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(st.success());
    let o = child.wait_with_output().expect("wait for tandem");
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(!dir.path().join("results").exists(), "the folder the run made is gone");
}

/// Issue 22's `gpu-controller` experiment at its quick size: every backend measured at every
/// size, the GPU row marked as not measured without a GPU, and the controller measured end to end
/// under ofbench on 1 and 2 shards.
#[test]
fn gpu_controller_experiment_runs_at_quick_size() {
    let s = Scratch::new("gpu-controller");
    let out = s.join("out");
    let o = tandem(&[
        "reproduce",
        "gpu-controller",
        "--quick",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let rates = std::fs::read_to_string(out.join("rates.csv")).unwrap();
    for backend in ["scalar,", "cpu,", "packed,", "cpu-parallel,"] {
        for size in ["62B", "82B", "mixed"] {
            let n = rates
                .lines()
                .filter(|l| l.starts_with(backend) && l.contains(size))
                .filter(|l| {
                    l.rsplit(',')
                        .next()
                        .and_then(|r| r.parse::<f64>().ok())
                        .is_some_and(|r| r > 0.0)
                })
                .count();
            assert_eq!(n, 3, "{backend}{size}: {rates}");
        }
    }
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    if !cfg!(feature = "cuda") {
        assert!(md.contains("| not measured |"), "{md}");
    }
    let e2e = std::fs::read_to_string(out.join("end_to_end.csv")).unwrap();
    assert_eq!(e2e.lines().count(), 3, "{e2e}");
    for f in [
        "latency.csv",
        "sorting.csv",
        "threads.csv",
        "datapaths.csv",
        "rates.png",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
}
