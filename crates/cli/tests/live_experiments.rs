//! Issue 23's live Axon experiments at their `--quick` size, as root: `axon-ping-live` (thesis
//! Figure 4.5) and `axon-app-live` (Figure 4.10's point with redis) build chains of live Axons,
//! Linux bridges and Open vSwitch bridges between two stock Linux hosts, measure, and remove
//! every namespace and process they made, whatever the verdicts.
//!
//! Needs root, iproute2, ethtool, iputils-ping, isc-dhcp-client, openvswitch-switch, redis-server
//! and redis-tools; skips with a message otherwise, unless TANDEM_REQUIRE_SYSTEM=1.

use std::process::Command;
use tandem_testkit::{require, require_with, Scratch};

fn ready() -> bool {
    if !tandem_testkit::require_root("the live Axon experiments") {
        return false;
    }
    require_with("ip", &["-V"], "iproute2")
        && require("dhclient", "isc-dhcp-client")
        && require_with("ping", &["-V"], "iputils-ping")
        && require("ethtool", "ethtool")
        && require("ovs-vswitchd", "openvswitch-switch")
        && require("redis-server", "redis-server")
        && require("redis-benchmark", "redis-tools")
}

/// Namespaces, processes and temporary folders whose names say a live experiment made them.
fn leftovers() -> Vec<String> {
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let mut v: Vec<String> = String::from_utf8_lossy(&ns.stdout)
        .lines()
        .filter(|l| l.starts_with("tq-"))
        .map(str::to_string)
        .collect();
    let ps = Command::new("ps").args(["-eo", "args"]).output().unwrap();
    v.extend(
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("tandem-live-exp-")),
    );
    v.extend(
        String::from_utf8_lossy(&ps.stdout)
            .lines()
            .filter(|l| l.contains("tandem-live-exp-") || l.contains("redis-server 10.0."))
            .map(str::to_string),
    );
    v
}

fn run(name: &str, csv: &str, header: &str) {
    let s = Scratch::new(name);
    let out = s.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["reproduce", name, "--quick", "-q", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{name}: {}\n{stdout}",
        String::from_utf8_lossy(&o.stderr)
    );
    eprintln!("{stdout}");
    assert!(leftovers().is_empty(), "{name} left {:?}", leftovers());
    let table = std::fs::read_to_string(out.join(csv)).unwrap();
    assert!(table.starts_with(header), "{table}");
    // Three kinds of element, 1 and 5 devices each, and every measurement came back.
    for element in ["axon,", "linux-bridge,", "ovs,"] {
        for n in [",1,", ",5,"] {
            assert!(
                table.lines().any(|l| l.starts_with(element) && l.contains(n)),
                "{element}{n}: {table}"
            );
        }
    }
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(md.contains("| kind |"), "{md}");
}

#[test]
fn live_axon_experiments_measure_every_chain_and_leave_nothing() {
    if !ready() {
        return;
    }
    assert!(leftovers().is_empty(), "left from an earlier run: {:?}", leftovers());
    run(
        "axon-ping-live",
        "ping.csv",
        "element,devices,frame_bytes,pings,received,mean_us,p50_us,p99_us\n",
    );
    run(
        "axon-app-live",
        "app.csv",
        "element,devices,test,requests,rps,avg_ms,p50_ms,p95_ms,p99_ms\n",
    );
    interrupted_mid_chain();
}

/// Ctrl-C while a chain is up: exit 130, and the chain (namespaces, Axon processes) and the
/// results folder are gone.
fn interrupted_mid_chain() {
    let s = Scratch::new("live-interrupt");
    let out = s.join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["reproduce", "axon-ping-live", "--quick", "-q", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !leftovers().iter().any(|l| l.starts_with("tq-h2")) {
        assert!(std::time::Instant::now() < until, "no chain came up");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(leftovers().is_empty(), "an interrupt left {:?}", leftovers());
    assert!(!out.exists(), "an interrupt left the results folder");
}
