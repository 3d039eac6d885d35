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

/// Namespaces and processes whose names say a live experiment made them.
fn leftovers() -> Vec<String> {
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let mut v: Vec<String> = String::from_utf8_lossy(&ns.stdout)
        .lines()
        .filter(|l| l.starts_with("tq-"))
        .map(str::to_string)
        .collect();
    let ps = Command::new("ps").args(["-eo", "args"]).output().unwrap();
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
}
