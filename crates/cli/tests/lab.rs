//! Issue 8's checks on the shipped ring lab (`labs/ring.toml`, thesis Figure 4.3): real,
//! unmodified Linux hosts in network namespaces get DHCP leases from live Axon processes,
//! resolve each other with ordinary ARP, ping, run TCP, never see each other's broadcasts,
//! survive a link failure and a hostile neighbour; a capture between Axons shows Axon headers.
//!
//! Needs root, iproute2, Debian's isc-dhcp-client, iputils-ping, iperf3, ethtool and tshark;
//! skips with a message when any is missing or when not root, unless TANDEM_REQUIRE_SYSTEM=1.
//! Everything the lab makes is named with its prefix and removed when the test ends, also
//! when it fails (the `Lab` guard).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use tandem_testkit::{require, require_with, Scratch};

const LAB: &str = "tl";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tandem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tandem")).args(args).output().unwrap()
}

/// The ring lab under a private prefix; `down` runs on drop.
struct Lab {
    file: PathBuf,
    state: PathBuf,
    ips: Vec<String>,
    _scratch: Scratch,
}

impl Lab {
    fn up() -> Lab {
        let scratch = Scratch::new("lab");
        let text = std::fs::read_to_string(root().join("labs/ring.toml")).unwrap();
        let file = scratch.join("ring.toml");
        std::fs::write(&file, text.replace("prefix = \"tr\"", &format!("prefix = \"{LAB}\""))).unwrap();
        let state = scratch.join("state");
        let mut lab = Lab {
            file: file.clone(),
            state: state.clone(),
            ips: Vec::new(),
            _scratch: scratch,
        };
        let o = tandem(&["lab", "up", file.to_str().unwrap(), "--state", state.to_str().unwrap()]);
        assert!(o.status.success(), "lab up: {}", String::from_utf8_lossy(&o.stderr));
        lab.ips = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| l.split('\t').nth(1).unwrap().to_string())
            .collect();
        lab
    }

    fn ns(h: usize) -> String {
        format!("{LAB}-h{h}")
    }

    fn exec(ns: &str, args: &[&str]) -> Output {
        Command::new("ip")
            .args(["netns", "exec", ns])
            .args(args)
            .output()
            .unwrap()
    }

    fn ping(&self, from: usize, to: usize) -> bool {
        Lab::exec(&Lab::ns(from), &["ping", "-c", "1", "-W", "2", &self.ips[to - 1]])
            .status
            .success()
    }

    fn axons_alive(&self) -> bool {
        (1..=3).all(|a| {
            let pid = std::fs::read_to_string(self.state.join(format!("a{a}.pid"))).unwrap_or_default();
            Path::new(&format!("/proc/{}", pid.trim())).exists()
        })
    }

    fn mac(h: usize) -> String {
        let o = Lab::exec(&Lab::ns(h), &["cat", "/sys/class/net/eth0/address"]);
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = tandem(&[
            "lab",
            "down",
            self.file.to_str().unwrap(),
            "--state",
            self.state.to_str().unwrap(),
        ]);
    }
}

fn ready() -> bool {
    if !tandem_testkit::require_root("the lab test") {
        return false;
    }
    require_with("ip", &["-V"], "iproute2")
        && require("dhclient", "isc-dhcp-client")
        && require_with("ping", &["-V"], "iputils-ping")
        && require("iperf3", "iperf3")
        && require("ethtool", "ethtool")
        && require("tshark", "tshark")
}

/// Captures on `iface` in `ns` for `secs` seconds into `file` (classic pcap).
fn capture(ns: &str, iface: &str, filter: &str, secs: u32, file: &Path) -> std::process::Child {
    let c = Command::new("ip")
        .args(["netns", "exec", ns, "tshark", "-q", "-i", iface, "-F", "pcap", "-a"])
        .arg(format!("duration:{secs}"))
        .args(["-f", filter, "-w"])
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500)); // tshark takes a moment to start capturing
    c
}

fn frames(file: &Path) -> usize {
    let o = Command::new("tshark").arg("-r").arg(file).output().unwrap();
    String::from_utf8_lossy(&o.stdout).lines().count()
}

fn iperf_mbps(server: usize, client: usize, ips: &[String], port: &str, secs: &str) -> f64 {
    let s = Command::new("ip")
        .args(["netns", "exec", &Lab::ns(server), "iperf3", "-s", "-1", "-p", port])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let o = Lab::exec(
        &Lab::ns(client),
        &["iperf3", "-c", &ips[server - 1], "-p", port, "-t", secs, "-J"],
    );
    let _ = s.wait_with_output();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    v["end"]["sum_received"]["bits_per_second"].as_f64().unwrap_or(0.0) / 1e6
}

#[test]
fn unmodified_linux_hosts_use_a_ring_of_live_axons() {
    if !ready() {
        return;
    }
    let lab = Lab::up();
    // Every host has a lease from its own Axon's pool (hosts 1-2 on Axon 1, 3-4 on 2, 5-6 on 3).
    assert_eq!(lab.ips.len(), 6);
    for (i, ip) in lab.ips.iter().enumerate() {
        assert!(ip.starts_with(&format!("10.0.{}.", i / 2 + 1)), "host {}: {ip}", i + 1);
    }

    // No broadcast a host sends reaches another host: capture broadcasts on hosts 2-6 while
    // host 1 forgets its neighbours and ARPs for all of them.
    let scratch = Scratch::new("lab-cap");
    let caps: Vec<_> = (2..=6)
        .map(|h| {
            let f = scratch.join(&format!("bcast{h}.pcap"));
            (capture(&Lab::ns(h), "eth0", "ether broadcast", 4, &f), f)
        })
        .collect();
    let _ = Lab::exec(&Lab::ns(1), &["ip", "neigh", "flush", "dev", "eth0"]);
    for to in 2..=6 {
        assert!(lab.ping(1, to), "host 1 -> host {to}");
    }
    // (Each Axon may itself ask its own host by ARP, Phase II of Axon-ARP: a frame from the
    // Axon, not from a host.)
    // A capture also holds what its own host sent (its own ARP for a stale neighbour, say):
    // only another host's broadcast counts.
    for (h, (c, f)) in (2..=6).zip(caps) {
        let others: Vec<String> = (1..=6).filter(|&o| o != h).map(Lab::mac).collect();
        let _ = c.wait_with_output();
        let o = Command::new("tshark")
            .arg("-r")
            .arg(&f)
            .args(["-T", "fields", "-e", "eth.src"])
            .output()
            .unwrap();
        let srcs = String::from_utf8_lossy(&o.stdout).to_string();
        for src in srcs.lines() {
            assert!(
                !others.contains(&src.to_string()),
                "{}: a host's broadcast (from {src}) reached another host",
                f.display()
            );
        }
    }

    // All 30 ordered pairs ping.
    for from in 1..=6 {
        for to in 1..=6 {
            if from != to {
                assert!(lab.ping(from, to), "host {from} -> host {to}");
            }
        }
    }

    // A capture between Axons 1 and 2, read with our Lua dissector: Axon headers, one hop to go
    // after... the frames on that wire are in flight: their forward and reverse counts add up.
    let cap = scratch.join("axon.pcap");
    let c = capture(&format!("{LAB}-a1"), "p2", "", 3, &cap);
    assert!(lab.ping(1, 3) && lab.ping(3, 1));
    let _ = c.wait_with_output();
    let mut bytes = std::fs::read(&cap).unwrap();
    bytes[20..24].copy_from_slice(&147u32.to_le_bytes()); // LINKTYPE_USER0, which axon.lua claims
    std::fs::write(&cap, &bytes).unwrap();
    let lua = root().join("tools/wireshark/axon.lua");
    let o = Command::new("tshark")
        .arg("-X")
        .arg(format!("lua_script:{}", lua.display()))
        .arg("-r")
        .arg(&cap)
        .args([
            "-T",
            "fields",
            "-e",
            "axon.type",
            "-e",
            "axon.fwd_count",
            "-e",
            "axon.rev_count",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        !rows.is_empty(),
        "no Axon frame dissected: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Host 1 -> host 3 crosses Axon 1 then Axon 2: on the wire between them one hop has been
    // taken (reverse count 1) and one is left (forward count 1), for data in either direction.
    assert!(
        rows.iter()
            .any(|r| r.split('\t').skip(1).collect::<Vec<_>>() == ["1", "1"]),
        "expected frames with 1 hop left and 1 hop taken: {rows:?}"
    );

    // TCP across two Axons at a sensible rate, then both directions round the ring at once.
    let one = iperf_mbps(1, 5, &lab.ips, "5201", "2");
    assert!(one > 50.0, "iperf3 host 5 -> host 1: {one:.0} Mb/s");
    let other = std::thread::spawn({
        let ips = lab.ips.clone();
        move || iperf_mbps(5, 1, &ips, "5202", "2")
    });
    let fwd = iperf_mbps(3, 6, &lab.ips, "5203", "2");
    let back = other.join().unwrap();
    assert!(
        fwd > 10.0 && back > 10.0,
        "both directions at once: {fwd:.0} and {back:.0} Mb/s"
    );
    eprintln!("lab: iperf3 TCP {one:.0} Mb/s alone; {fwd:.0} + {back:.0} Mb/s at once");

    // A link on the path fails while a ping runs: it resumes the other way round the ring.
    let pinger = Command::new("ip")
        .args([
            "netns",
            "exec",
            &Lab::ns(1),
            "ping",
            "-i",
            "0.01",
            "-w",
            "4",
            "-D",
            &lab.ips[4],
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let cut = Instant::now();
    let o = Lab::exec(&format!("{LAB}-a1"), &["ip", "link", "set", "p3", "down"]);
    assert!(o.status.success());
    let out = pinger.wait_with_output().unwrap();
    let _ = cut;
    let text = String::from_utf8_lossy(&out.stdout);
    let stamps: Vec<f64> = text
        .lines()
        .filter(|l| l.contains("bytes from"))
        .filter_map(|l| l.strip_prefix('[')?.split(']').next()?.parse().ok())
        .collect();
    let gap = stamps.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    let last = stamps.last().copied().unwrap_or(0.0) - stamps.first().copied().unwrap_or(0.0);
    assert!(last > 3.0, "pings resumed after the cut: {text}");
    assert!(gap < 1.0, "outage {gap:.3} s");
    eprintln!("lab: failover outage {:.0} ms (10 ms ping interval)", gap * 1000.0);
    assert!(lab.ping(1, 5), "after the cut");

    // A hostile host (host 2): malformed frames, an ARP flood for addresses nobody has, forged
    // source MACs. The Axons live on, the others still resolve and reach each other, and host 2
    // receives nothing addressed to anyone else.
    let victim_mac = Lab::mac(4);
    let h2_mac = Lab::mac(2);
    let attack = format!(
        r#"
import os, socket, struct, random
random.seed(1)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
me = bytes.fromhex("{h2}".replace(":", ""))
victim = bytes.fromhex("{victim}".replace(":", ""))
for n in range(2000):
    s.send(bytes(random.getrandbits(8) for _ in range(random.randint(14, 200))))
for n in range(3000):
    ip = bytes([10, 0, 9, n % 250 + 1])
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, me, bytes([10,0,1,77]), bytes(6), ip)
    s.send(b"\xff" * 6 + me + b"\x08\x06" + arp + bytes(18))
for n in range(2000):
    src = bytes([2, 0x66, 0, 0, n >> 8, n & 255]) if n % 2 else victim
    s.send(b"\xff" * 6 + src + b"\x08\x06" + bytes(46))
"#,
        h2 = h2_mac,
        victim = victim_mac
    );
    let o = Lab::exec(&Lab::ns(2), &["python3", "-c", &attack]);
    assert!(
        o.status.success(),
        "attack script: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(lab.axons_alive(), "an Axon died");
    // From now on host 2 is quiet: whatever reaches it that is not for it, the Axons misrouted.
    let spy = scratch.join("spy.pcap");
    let spy_cap = capture(
        &Lab::ns(2),
        "eth0",
        &format!("not ether src {h2_mac} and not ether dst {h2_mac} and not ether broadcast and not ether multicast"),
        4,
        &spy,
    );
    let _ = Lab::exec(&Lab::ns(3), &["ip", "neigh", "flush", "dev", "eth0"]);
    for (from, to) in [(1, 4), (3, 6), (4, 1), (6, 3), (5, 4)] {
        assert!(lab.ping(from, to), "after the attack: host {from} -> host {to}");
    }
    let _ = spy_cap.wait_with_output();
    assert_eq!(frames(&spy), 0, "host 2 received frames addressed to others");
}

/// A ring of four Axons with discovery on: a link failure two hops from the sender's Axon is
/// learnt from the probes and advertisements, and the sender's Axon reroutes.
#[test]
fn discovery_reroutes_around_a_remote_failure() {
    if !ready() {
        return;
    }
    let scratch = Scratch::new("lab4");
    let file = scratch.join("ring4.toml");
    let mut text = String::from("prefix = \"t4\"\naxons = 4\ndiscovery = true\n");
    for a in [1, 3] {
        text += &format!("[[hosts]]\naxon = {a}\nport = 0\n");
    }
    for (a, b) in [("1.2", "2.3"), ("2.2", "3.3"), ("3.2", "4.3"), ("4.2", "1.3")] {
        text += &format!("[[links]]\na = \"{a}\"\nb = \"{b}\"\n");
    }
    std::fs::write(&file, text).unwrap();
    let state = scratch.join("state");
    let lab = Lab {
        file: file.clone(),
        state: state.clone(),
        ips: Vec::new(),
        _scratch: Scratch::new("lab4-unused"),
    };
    let o = tandem(&["lab", "up", file.to_str().unwrap(), "--state", state.to_str().unwrap()]);
    assert!(o.status.success(), "lab up: {}", String::from_utf8_lossy(&o.stderr));
    let target = String::from_utf8_lossy(&o.stdout)
        .lines()
        .nth(1)
        .unwrap()
        .split('\t')
        .nth(1)
        .unwrap()
        .to_string();
    let ping = |args: &[&str]| {
        Command::new("ip")
            .args(["netns", "exec", "t4-h1", "ping"])
            .args(args)
            .output()
            .unwrap()
    };
    assert!(ping(&["-c", "2", "-W", "2", &target]).status.success());
    let installs = || {
        std::fs::read_to_string(state.join("a1.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("route on port 0"))
            .count()
    };
    let before = installs();
    let pinger = Command::new("ip")
        .args(["netns", "exec", "t4-h1", "ping", "-i", "0.01", "-w", "4", "-D", &target])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    // The path 1 -> 2 -> 3 loses its second link; Axon 1 sees none of its own ports change.
    for (ns, port) in [("t4-a2", "p2"), ("t4-a3", "p3")] {
        assert!(Lab::exec(ns, &["ip", "link", "set", port, "down"]).status.success());
    }
    let out = pinger.wait_with_output().unwrap();
    let stamps: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("bytes from"))
        .filter_map(|l| l.strip_prefix('[')?.split(']').next()?.parse().ok())
        .collect();
    let gap = stamps.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    let span = stamps.last().copied().unwrap_or(0.0) - stamps.first().copied().unwrap_or(0.0);
    assert!(
        span > 3.0 && gap < 1.0,
        "pings resumed: span {span:.2} s, outage {gap:.3} s"
    );
    assert!(installs() > before, "Axon 1 rerouted (it learnt the remote failure)");
    eprintln!("lab: remote failure learnt by discovery, outage {:.0} ms", gap * 1000.0);
    drop(lab);
}
