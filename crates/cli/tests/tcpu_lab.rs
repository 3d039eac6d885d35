//! Issue 19's check: TCPU live on a real Open vSwitch (userspace datapath) with real Linux
//! hosts in namespaces. A four-host TCPU lab (`labs/tcpu.toml` with a private prefix, ports and
//! a fourth host) carries two iperf3 elephants, 200 concurrent short TCP connections and a
//! low-rate burst (shrew) attacker at once, while the switch's table is watched with
//! `ovs-ofctl dump-flows`: the table never holds more than its k flow entries, both elephants
//! are in it, the CPU path carries the short connections (all of which complete), and the
//! attacker is detected and its traffic taken to the CPU shaper by an entry for its address.
//! `tandem lab status --json` names the elements; `tandem lab replay` runs the controller's log
//! of every input its TCPU core got through a fresh core and gets the same actions, step for
//! step; `tandem lab down` leaves nothing behind.
//!
//! Needs root, Open vSwitch, iperf3, python3, iproute2, iputils-ping and ethtool; skips with a
//! message when any is missing or when not root, unless TANDEM_REQUIRE_SYSTEM=1. Everything it
//! starts is stopped by PID and the lab is removed when the test ends, also when it fails.

mod common;

use common::{field, root, tandem, text, AppLab};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PREFIX: &str = "tk";
/// k, the lab's table size (labs/tcpu.toml).
const K: usize = 16;

/// The shipped TCPU lab under a private prefix, with four hosts.
fn lab_text() -> String {
    let shipped = std::fs::read_to_string(root().join("labs/tcpu.toml")).unwrap();
    let lab = shipped
        .replace("prefix = \"tt\"", &format!("prefix = \"{PREFIX}\""))
        .replace("hosts = 3", "hosts = 4")
        .replace("ports = 3", "ports = 4")
        .replace("controller_port = 6653", "controller_port = 36653");
    assert!(lab.contains("hosts = 4") && lab.contains("36653") && lab.contains(&format!("asic_flow_entries = {K}")));
    lab
}

fn dump_flows(state: &Path) -> String {
    AppLab::dump(state, &format!("{PREFIX}br"))
}

/// What the watcher saw in the switch's table.
#[derive(Debug, Default)]
struct Seen {
    dumps: usize,
    max_flow_entries: usize,
    max_entries: usize,
    /// Lines of entries with their byte counters, the last dump where each match was present.
    lines: Vec<String>,
}

fn flow_entries(dump: &str) -> (usize, usize) {
    let lines: Vec<&str> = dump.lines().filter(|l| l.contains("cookie=")).collect();
    let flows = lines.iter().filter(|l| l.contains("cookie=0x74637075")).count();
    (flows, lines.len())
}

fn bytes_of(line: &str) -> u64 {
    line.split("n_bytes=")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Opens N connections, waits until all are open at once, then each sends 2,000 bytes and
/// reads them back.
const MICE_CLIENT: &str = r#"
import asyncio, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
open_now = peak = 0
async def one(i, gate):
    global open_now, peak
    r, w = await asyncio.open_connection(host, port)
    open_now += 1
    peak = max(peak, open_now)
    await gate.wait()
    w.write(bytes([i % 256]) * 2000)
    await w.drain()
    ok = len(await r.readexactly(2000)) == 2000
    w.close()
    return ok
async def main():
    gate = asyncio.Event()
    tasks = [asyncio.create_task(one(i, gate)) for i in range(n)]
    t0 = time.time()
    while peak < n and time.time() - t0 < 30:
        await asyncio.sleep(0.01)
    gate.set()
    res = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 60)
    print(f"ok {sum(1 for x in res if x is True)} peak {peak}")
asyncio.run(main())
"#;

/// Every PERIOD s a burst of N datagrams of SIZE bytes, each burst from a fresh source port.
const SHREW: &str = r#"
import socket, sys, time
host, port, period, n, size, duration = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
t0, k = time.time(), 0
while time.time() - t0 < duration:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(n):
        s.sendto(b"x" * size, (host, port))
    s.close()
    k += 1
    time.sleep(max(0, t0 + k * period - time.time()))
print(f"bursts {k}")
"#;

#[test]
fn tcpu_live_offloads_elephants_carries_mice_on_the_cpu_and_shapes_an_attack() {
    if !common::app_lab_tools("the TCPU lab test") {
        return;
    }
    let mut lab = AppLab::up("tcpu-lab", PREFIX, &lab_text());
    let hosts: Vec<&str> = lab.hosts.lines().collect();
    assert_eq!(hosts.len(), 4, "{hosts:?}");
    assert!(hosts[0].starts_with(&format!("{PREFIX}-h1\t10.77.0.1")));
    let state = std::path::absolute(&lab.state).unwrap();

    // The watcher: the switch's table every 100 ms until the traffic is over.
    let seen = Arc::new(Mutex::new(Seen::default()));
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (seen, done, state) = (seen.clone(), done.clone(), state.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                let dump = dump_flows(&state);
                let (flows, all) = flow_entries(&dump);
                let mut s = seen.lock().unwrap();
                s.dumps += 1;
                s.max_flow_entries = s.max_flow_entries.max(flows);
                s.max_entries = s.max_entries.max(all);
                for l in dump.lines().filter(|l| l.contains("cookie=0x7463707")) {
                    let m = l.split("priority=").nth(1).unwrap_or("").to_string();
                    s.lines.retain(|old| old.split("priority=").nth(1).unwrap_or("") != m);
                    s.lines.push(l.to_string());
                }
                drop(s);
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };

    // Servers on host 3: two iperf3 servers (one client each) and the short connections'.
    for port in ["5201", "5202"] {
        lab.spawn(3, &["iperf3", "-s", "-1", "-p", port]);
    }
    lab.spawn(3, &["python3", "-c", common::ECHO_SERVER, "10.77.0.3", "9000", "2000"]);
    std::thread::sleep(Duration::from_millis(500));
    // Elephants from hosts 1 and 2, the attacker on host 4 pulsing at host 2 every 320 ms
    // (the paper's attack, near a 300 ms minimum RTO) through three detection windows.
    let e1 = lab.spawn(1, &["iperf3", "-c", "10.77.0.3", "-p", "5201", "-t", "9", "-J"]);
    let e2 = lab.spawn(2, &["iperf3", "-c", "10.77.0.3", "-p", "5202", "-t", "9", "-J"]);
    let shrew = lab.spawn(
        4,
        &[
            "python3",
            "-c",
            SHREW,
            "10.77.0.2",
            "7000",
            "0.32",
            "100",
            "1000",
            "8.5",
        ],
    );
    std::thread::sleep(Duration::from_secs(1));
    let mice = lab.spawn(1, &["python3", "-c", MICE_CLIENT, "10.77.0.3", "9000", "200"]);
    let mice_out = lab.wait(mice, Duration::from_secs(90));
    let shrew_out = lab.wait(shrew, Duration::from_secs(30));
    let e1_out = lab.wait(e1, Duration::from_secs(30));
    let e2_out = lab.wait(e2, Duration::from_secs(30));
    let status = tandem(&["lab", "status", lab.file(), "--state", lab.state(), "--json"]);
    done.store(true, Ordering::Relaxed);
    watcher.join().unwrap();
    let seen = seen.lock().unwrap();

    // Status: one JSON object per element, the switch with its table and CPU-path counters.
    assert!(status.status.success(), "lab status: {}", text(&status.stderr));
    let status = text(&status.stdout);
    let sw = status
        .lines()
        .find(|l| l.contains("\"kind\":\"tcpu\""))
        .unwrap_or_else(|| panic!("{status}"));
    for key in [
        "table_entries",
        "table_capacity",
        "offloaded_flows",
        "software_packets",
        "swaps",
        "deep_buffer_peak_bytes",
    ] {
        assert!(field(sw, key).is_some(), "{key} missing: {sw}");
    }
    assert!(sw.contains(&format!("\"element\":\"{PREFIX}br\"")), "{sw}");
    assert_eq!(
        status.lines().filter(|l| l.contains("\"kind\":\"host\"")).count(),
        4,
        "{status}"
    );
    eprintln!("status: {sw}");
    eprintln!("mice: {mice_out}; attacker: {shrew_out}");

    // The table never held more than k flow entries (the app's count; OVS's flow_limit is the
    // backstop), and the watcher really watched.
    assert!(seen.dumps >= 20, "{} dumps", seen.dumps);
    assert!(
        seen.max_flow_entries <= K,
        "{} flow entries > k = {K}",
        seen.max_flow_entries
    );
    assert_eq!(field(sw, "table_capacity"), Some(K as u64));
    assert!(field(sw, "op_failures") == Some(0), "the switch refused entries: {sw}");

    // Both elephants ended up in the table and carried their bytes there.
    for (src, port, out) in [("10.77.0.1", "5201", &e1_out), ("10.77.0.2", "5202", &e2_out)] {
        assert!(out.contains("\"sum_received\""), "iperf3 from {src}: {out}");
        // iperf3's control connection uses the same ports: the data connection is the one
        // that carried the bytes.
        let line = seen
            .lines
            .iter()
            .filter(|l| l.contains(&format!("nw_src={src},nw_dst=10.77.0.3")) && l.contains(&format!("tp_dst={port}")))
            .max_by_key(|l| bytes_of(l))
            .unwrap_or_else(|| panic!("elephant {src} -> :{port} never in the table: {:#?}", seen.lines));
        assert!(bytes_of(line) > 10_000_000, "elephant {src}: {line}");
    }
    assert!(field(sw, "offloaded_flows").unwrap() >= 2);

    // The CPU path carried the short connections, every one of which completed.
    assert!(mice_out.contains("ok 200 peak 200"), "{mice_out}");
    assert!(field(sw, "software_packets").unwrap() >= 1000, "{sw}");

    // The attacker was detected and shaped: an entry takes its traffic to the CPU.
    assert!(field(sw, "attackers").unwrap() >= 1, "{sw}");
    assert!(
        seen.lines
            .iter()
            .any(|l| l.contains("nw_src=10.77.0.4") && l.contains("CONTROLLER")),
        "no attack entry: {:#?}",
        seen.lines
    );

    // Sim and live agree: the controller's log of every input its core got, replayed through a
    // fresh core (the code the simulator runs), gives the same actions, step for step.
    let steps = lab.replayed_steps();
    assert!(steps >= 1000, "{steps} steps");

    // Down removes everything.
    drop(seen);
    let st = lab.state.clone();
    drop(lab);
    let left = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(
        !text(&left.stdout).contains(&format!("{PREFIX}-h")),
        "{}",
        text(&left.stdout)
    );
    assert!(
        !text(&left.stdout).contains(&format!("{PREFIX}-sw")),
        "{}",
        text(&left.stdout)
    );
    assert!(
        !Path::new(&format!("/sys/class/net/{PREFIX}h1x")).exists(),
        "a veth left"
    );
    assert!(!st.exists(), "state folder left");
}
