//! Writes Axon frames of every type into a pcap (link type USER0, as Axon links carry no Ethernet
//! header) and has tshark, with the dissector `tools/wireshark/axon.lua`, read them back: every
//! field as written, nothing flagged malformed.
//!
//! Skips with a message when tshark is missing, unless `TANDEM_REQUIRE_SYSTEM=1` (CI sets it).
//!
//! Lua as root: Debian 12's Wireshark 4.0 sets `run_user_scripts_when_superuser = true` in
//! `/usr/share/wireshark/init.lua`, and Wireshark 4.2+ has no such switch, so `-X lua_script:`
//! loads as root (CI runs as root). Older builds refuse ("dofile has been disabled due to running
//! Wireshark as superuser"); then this test reruns tshark as `nobody` through `setpriv`.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tandem_testkit::{require, Scratch};
use tandem_wire::arp::{ArpOperation, ArpRepr};
use tandem_wire::axon::control::{AxonArp, ControlRepr, Hello};
use tandem_wire::axon::error::{ErrorCode, ErrorRepr};
use tandem_wire::axon::probe::{ProbeRecord, ProbeRepr, StampPoint, OPT_TIMESTAMPS};
use tandem_wire::axon::{AxonRepr, PacketType, CONTROL_PORT};
use tandem_wire::ethernet::EthernetRepr;
use tandem_wire::pcap::{LinkType, TraceWriter};
use tandem_wire::{EtherType, MacAddr};

const A_MAC: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0a]);
const B_MAC: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0b]);
const ROUTE_MAC: MacAddr = MacAddr([0x02, 0xa0, 0, 0, 0, 0x07]);
const A_IP: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 10);
const B_IP: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 11);
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tools/wireshark/axon.lua");

fn header(t: PacketType, forward: &[u8], reverse: &[u8]) -> AxonRepr {
    AxonRepr {
        packet_type: t,
        forward: forward.to_vec(),
        reverse: reverse.to_vec(),
    }
}

fn with_body(h: &AxonRepr, len: usize, body: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut b = vec![0u8; len];
    body(&mut b);
    h.to_frame(&b).unwrap()
}

fn arp_frame(op: ArpOperation, src: MacAddr, dst: MacAddr) -> Vec<u8> {
    let e = EthernetRepr {
        dst,
        src,
        vlan: None,
        ethertype: EtherType::ARP,
    };
    let a = ArpRepr {
        operation: op,
        sender_mac: src,
        sender_ip: A_IP,
        target_mac: MacAddr::ZERO,
        target_ip: B_IP,
    };
    let mut buf = vec![0u8; 60];
    e.emit(&mut buf).unwrap();
    a.emit(&mut buf[14..]).unwrap();
    buf
}

/// One row per frame: what tshark must print for each field of [`FIELDS`] ("" = absent).
struct Expect {
    frame: Vec<u8>,
    fields: [&'static str; 13],
}

const FIELDS: [&str; 13] = [
    "axon.type",
    "axon.hdr_len",
    "axon.fwd_count",
    "axon.rev_count",
    "axon.next_hop",
    "axon.fwd_path",
    "axon.rev_path",
    "axon.ctl.kind",
    "axon.arp.src_route_mac",
    "axon.arp.tgt_ip",
    "axon.hello.device",
    "axon.probe.time_ps",
    "axon.error.code",
];

fn frames() -> Vec<Expect> {
    let arp = AxonArp {
        xid: 0x1234_5678,
        src_port: 1,
        src_mac: A_MAC,
        src_route_mac: ROUTE_MAC,
        src_ip: A_IP,
        tgt_port: 3,
        tgt_mac: MacAddr::ZERO,
        tgt_route_mac: MacAddr::ZERO,
        tgt_ip: B_IP,
    };
    let reply = AxonArp {
        tgt_mac: B_MAC,
        tgt_route_mac: MacAddr([0x02, 0xa0, 0, 0, 0, 0x09]),
        ..arp
    };
    let probe = ProbeRepr {
        options: OPT_TIMESTAMPS,
        probe_id: 42,
        records: vec![
            ProbeRecord {
                device_id: 7,
                port: CONTROL_PORT,
                point: StampPoint::Input,
                time_ps: 1_000,
            },
            ProbeRecord {
                device_id: 7,
                port: 2,
                point: StampPoint::Output,
                time_ps: 521_000,
            },
        ],
    };
    let ctl = |h: &AxonRepr, m: ControlRepr| with_body(h, m.buffer_len(), |b| m.emit(b).unwrap());
    let long: Vec<u8> = (0..20).map(|i| (i % 15) as u8).collect();
    vec![
        // 1: a host's ARP request, encapsulated at the first Axon: three hops to go.
        Expect {
            frame: header(PacketType::Ethernet, &[1, 2, 3], &[])
                .to_frame(&arp_frame(ArpOperation::Request, A_MAC, MacAddr::BROADCAST))
                .unwrap(),
            fields: ["0x02", "7", "3", "0", "1", "1.2.3", "", "", "", "", "", "", ""],
        },
        // 2: the same kind of frame two hops later.
        Expect {
            frame: header(PacketType::Ethernet, &[3], &[5, 4])
                .to_frame(&arp_frame(ArpOperation::Reply, B_MAC, A_MAC))
                .unwrap(),
            fields: ["0x02", "7", "1", "2", "3", "3", "5.4", "", "", "", "", "", ""],
        },
        // 3, 4: Axon-ARP request and reply between control planes.
        Expect {
            frame: ctl(
                &header(PacketType::Control, &[2, 5, CONTROL_PORT], &[]),
                ControlRepr::ArpRequest(arp),
            ),
            fields: [
                "0x06",
                "7",
                "3",
                "0",
                "2",
                "2.5.f",
                "",
                "1",
                "02:a0:00:00:00:07",
                "10.1.0.11",
                "",
                "",
                "",
            ],
        },
        Expect {
            frame: ctl(
                &header(PacketType::Control, &[CONTROL_PORT], &[4, 1]),
                ControlRepr::ArpReply(reply),
            ),
            fields: [
                "0x06",
                "7",
                "1",
                "2",
                "15",
                "f",
                "4.1",
                "2",
                "02:a0:00:00:00:07",
                "10.1.0.11",
                "",
                "",
                "",
            ],
        },
        // 5: a bootstrap hello.
        Expect {
            frame: ctl(
                &header(PacketType::Control, &[CONTROL_PORT], &[CONTROL_PORT]),
                ControlRepr::Hello(Hello {
                    port: 6,
                    device_id: 0x0102_0304_0506_0708,
                }),
            ),
            fields: [
                "0x06",
                "7",
                "1",
                "1",
                "15",
                "f",
                "f",
                "3",
                "",
                "",
                "72623859790382856",
                "",
                "",
            ],
        },
        // 6: a probe back home with two records.
        Expect {
            frame: with_body(
                &header(PacketType::Probe, &[], &[CONTROL_PORT, 0, 2]),
                probe.buffer_len(),
                |b| probe.emit(b).unwrap(),
            ),
            fields: [
                "0x0a",
                "7",
                "0",
                "3",
                "",
                "",
                "f.0.2",
                "",
                "",
                "",
                "",
                "1000,521000",
                "",
            ],
        },
        // 7: an error report: a control message that met a host port.
        Expect {
            frame: with_body(&header(PacketType::Error, &[], &[3, 2, 1]), 6, |b| {
                ErrorRepr {
                    code: ErrorCode::WrongType,
                    original_type: PacketType::Control,
                }
                .emit(b)
                .unwrap()
            }),
            fields: ["0x0e", "7", "0", "3", "", "", "3.2.1", "", "", "", "", "", "2"],
        },
        // 8: a 20-hop route (even: one pad nibble).
        Expect {
            frame: header(PacketType::Ethernet, &long, &[])
                .to_frame(&arp_frame(ArpOperation::Request, A_MAC, B_MAC))
                .unwrap(),
            fields: [
                "0x02",
                "16",
                "20",
                "0",
                "0",
                "0.1.2.3.4.5.6.7.8.9.a.b.c.d.e.0.1.2.3.4",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
            ],
        },
    ]
}

fn write_pcap(scratch: &Scratch, frames: &[Expect]) -> PathBuf {
    let path = scratch.join("axon.pcap");
    let mut w = TraceWriter::new(std::fs::File::create(&path).unwrap(), LinkType::USER0, 65_535).unwrap();
    for (n, e) in frames.iter().enumerate() {
        w.write(
            1_700_000_000_000_000_000 + n as u64 * 1_000,
            &e.frame,
            e.frame.len() as u32,
        )
        .unwrap();
    }
    drop(w.into_inner());
    path
}

fn run(path: &Path, extra: &[&str], as_nobody: bool) -> Output {
    let mut cmd = if as_nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "tshark"])
            .env("HOME", std::env::temp_dir());
        c
    } else {
        Command::new("tshark")
    };
    cmd.args(["-n", "-X"])
        .arg(format!("lua_script:{SCRIPT}"))
        .arg("-r")
        .arg(path)
        .args(extra)
        .output()
        .expect("run tshark")
}

fn superuser_refusal(out: &Output) -> bool {
    String::from_utf8_lossy(&out.stderr).contains("superuser")
}

fn tshark(path: &Path, extra: &[&str], as_nobody: bool) -> String {
    let out = run(path, extra, as_nobody);
    assert!(
        out.status.success() && !superuser_refusal(&out),
        "tshark failed to run with {SCRIPT}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn tshark_reads_axon_frames_as_written() {
    if !require("tshark", "tshark") {
        return;
    }
    let scratch = Scratch::new("axon-tshark");
    let expect = frames();
    let path = write_pcap(&scratch, &expect);
    // Lua refused as root (old Wireshark): run as nobody, from a directory nobody can read.
    let as_nobody = superuser_refusal(&run(&path, &["-c", "1"], false));
    if as_nobody {
        eprintln!("tshark refuses Lua scripts as root here; rerunning it as nobody through setpriv");
        for p in [scratch.path(), path.as_path()] {
            let _ = Command::new("chmod").arg("a+rx").arg(p).status();
        }
    }

    let protocols = tshark(&path, &["-T", "fields", "-e", "frame.protocols"], as_nobody);
    assert_eq!(protocols.lines().count(), expect.len(), "tshark saw {protocols}");
    for (n, line) in protocols.lines().enumerate() {
        assert!(line.starts_with("axon"), "frame {}: {line}", n + 1);
    }
    // The encapsulated frames reach the Ethernet and ARP dissectors.
    assert!(
        protocols.lines().next().unwrap().ends_with("axon:eth:ethertype:arp"),
        "{protocols}"
    );

    let bad = tshark(
        &path,
        &["-Y", "_ws.malformed || _ws.expert.severity == error"],
        as_nobody,
    );
    assert!(bad.trim().is_empty(), "tshark flags these frames:\n{bad}");

    let mut args = vec!["-T", "fields", "-E", "separator=|", "-E", "occurrence=a"];
    for f in FIELDS {
        args.extend(["-e", f]);
    }
    let table = tshark(&path, &args, as_nobody);
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), expect.len());
    for (n, (row, e)) in rows.iter().zip(&expect).enumerate() {
        let got: Vec<&str> = row.split('|').collect();
        assert_eq!(got.len(), FIELDS.len(), "frame {}: {row}", n + 1);
        for ((name, want), have) in FIELDS.iter().zip(e.fields).zip(&got) {
            assert_eq!(*have, want, "frame {} field {name}: row {row}", n + 1);
        }
    }

    // Per-hop items, the encapsulated Ethernet header, and the hello and Axon-ARP details.
    let detail = tshark(
        &path,
        &[
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-E",
            "occurrence=a",
            "-e",
            "axon.fwd_hop",
            "-e",
            "axon.rev_hop",
            "-e",
            "eth.src",
            "-e",
            "arp.src.proto_ipv4",
            "-e",
            "axon.hello.port",
            "-e",
            "axon.hello.magic",
            "-e",
            "axon.arp.xid",
            "-e",
            "axon.arp.src_port",
            "-e",
            "axon.arp.tgt_port",
            "-e",
            "axon.arp.tgt_mac",
            "-e",
            "axon.probe.device",
            "-e",
            "axon.probe.point",
            "-e",
            "axon.error.orig_type",
        ],
        as_nobody,
    );
    let d: Vec<&str> = detail.lines().collect();
    let want: [[&str; 13]; 7] = [
        [
            "1,2,3",
            "",
            "02:00:00:00:00:0a",
            "10.1.0.10",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
        ],
        [
            "3",
            "5,4",
            "02:00:00:00:00:0b",
            "10.1.0.10",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
        ],
        [
            "2,5,15",
            "",
            "",
            "",
            "",
            "",
            "0x12345678",
            "1",
            "3",
            "00:00:00:00:00:00",
            "",
            "",
            "",
        ],
        [
            "15",
            "4,1",
            "",
            "",
            "",
            "",
            "0x12345678",
            "1",
            "3",
            "02:00:00:00:00:0b",
            "",
            "",
            "",
        ],
        ["15", "15", "", "", "6", "AXON", "", "", "", "", "", "", ""],
        ["", "15,0,2", "", "", "", "", "", "", "", "", "7,7", "0,1", ""],
        ["", "3,2,1", "", "", "", "", "", "", "", "", "", "", "0x06"],
    ];
    for (n, w) in want.iter().enumerate() {
        assert_eq!(d[n], w.join("|"), "frame {}", n + 1);
    }
}
