//! Real Open vSwitch (Debian `openvswitch-switch`, userspace datapath, no kernel module) against
//! our controller, over OpenFlow 1.0 and 1.3: two bridges with two dummy ports each connect to
//! the controller; frames injected with `ovs-appctl netdev-dummy/receive` must make the learning
//! switch install the expected flows (checked with `ovs-ofctl dump-flows`) and reach the right
//! port (checked in the ports' tx pcaps).
//!
//! A third bridge connects over TLS (`ssl:`, OVS's `set-ssl` with certificates our test CA
//! signed) to a controller started with `--tls-*` settings, and learns the same way; a bridge
//! pointed at the TLS port with a plain `tcp:` target never connects.
//!
//! The OVS processes run from private run/db/log directories under a scratch directory and are
//! stopped by PID when the test ends, also when it fails. Skips with a message when OVS is
//! missing, unless `TANDEM_REQUIRE_SYSTEM=1`.

mod common;

use common::pki::Pki;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tandem_controller::L2Config;
use tandem_coswitch::openflow::CoSwitchAppConfig;
use tandem_live::controller::{coswitch_engine, l2_engine, BackendChoice, ControllerConfig, ControllerHandle};
use tandem_testkit::{require, Scratch};
use tandem_wire::pcap::TraceReader;

const SCHEMA: &str = "/usr/share/openvswitch/vswitch.ovsschema";
const A: &str = "50:54:00:00:00:01";
const B: &str = "50:54:00:00:00:02";

/// A private OVS instance; stops its daemons by PID when dropped.
struct Ovs {
    dir: PathBuf,
}

impl Ovs {
    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        for var in ["OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR", "OVS_SYSCONFDIR"] {
            c.env(var, &self.dir);
        }
        c
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        let out = self
            .cmd(program)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}"));
        assert!(
            out.status.success(),
            "{program} {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn start(dir: &Path) -> Ovs {
        let ovs = Ovs { dir: dir.to_path_buf() };
        let d = |name: &str| dir.join(name).display().to_string();
        ovs.run("ovsdb-tool", &["create", &d("conf.db"), SCHEMA]);
        let remote = format!("--remote=punix:{}", d("db.sock"));
        let pid = format!("--pidfile={}", d("ovsdb-server.pid"));
        let log = format!("--log-file={}", d("ovsdb-server.log"));
        ovs.run("ovsdb-server", &[&d("conf.db"), &remote, &pid, "--detach", &log]);
        let db = format!("--db=unix:{}", d("db.sock"));
        ovs.run("ovs-vsctl", &[&db, "--no-wait", "init"]);
        let pid = format!("--pidfile={}", d("ovs-vswitchd.pid"));
        let log = format!("--log-file={}", d("ovs-vswitchd.log"));
        let db_arg = format!("unix:{}", d("db.sock"));
        ovs.run(
            "ovs-vswitchd",
            &[
                &db_arg,
                &pid,
                "--detach",
                &log,
                "--enable-dummy=override",
                "--disable-system",
                "--disable-system-route",
            ],
        );
        ovs
    }

    fn vsctl(&self, args: &[&str]) -> Output {
        let db = format!("--db=unix:{}", self.dir.join("db.sock").display());
        let mut all = vec![db.as_str()];
        all.extend_from_slice(args);
        self.run("ovs-vsctl", &all)
    }

    /// A netdev bridge with two dummy ports that write what they send to pcaps.
    fn add_bridge(&self, br: &str, protocol: &str, dpid: &str, ports: [&str; 2], controller: &str) {
        let dpid = format!("other-config:datapath-id={dpid}");
        let proto = format!("protocols={protocol}");
        let pcap = |p: &str| format!("options:tx_pcap={}", self.dir.join(format!("{p}.pcap")).display());
        let (p0, p1) = (pcap(ports[0]), pcap(ports[1]));
        self.vsctl(&[
            "--",
            "add-br",
            br,
            "--",
            "set",
            "bridge",
            br,
            "datapath_type=netdev",
            &proto,
            &dpid,
            "fail-mode=secure",
            "--",
            "add-port",
            br,
            ports[0],
            "--",
            "set",
            "interface",
            ports[0],
            "type=dummy",
            "ofport_request=1",
            &p0,
            "--",
            "add-port",
            br,
            ports[1],
            "--",
            "set",
            "interface",
            ports[1],
            "type=dummy",
            "ofport_request=2",
            &p1,
            "--",
            "set-controller",
            br,
            controller,
        ]);
    }

    fn receive(&self, port: &str, in_port: u32, src: &str, dst: &str) {
        self.receive_udp(port, in_port, src, dst, 1000);
    }

    /// A UDP frame 10.0.0.1:`sport` -> 10.0.0.2:2000 arriving on a dummy port.
    fn receive_udp(&self, port: &str, in_port: u32, src: &str, dst: &str, sport: u16) {
        let flow = format!(
            "in_port({in_port}),eth(src={src},dst={dst}),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src={sport},dst=2000)"
        );
        self.run("ovs-appctl", &["netdev-dummy/receive", port, &flow]);
    }

    fn dump_flows(&self, br: &str, protocol: &str) -> String {
        String::from_utf8_lossy(&self.run("ovs-ofctl", &["-O", protocol, "dump-flows", br]).stdout).into_owned()
    }

    /// Frames a dummy port has sent so far.
    fn sent(&self, port: &str) -> usize {
        let Ok(f) = File::open(self.dir.join(format!("{port}.pcap"))) else {
            return 0;
        };
        let Ok(mut r) = TraceReader::new(f) else { return 0 };
        let mut n = 0;
        while let Some(Ok(_)) = r.next_packet() {
            n += 1;
        }
        n
    }
}

impl Drop for Ovs {
    fn drop(&mut self) {
        for name in ["ovs-vswitchd.pid", "ovsdb-server.pid"] {
            if let Ok(pid) = std::fs::read_to_string(self.dir.join(name)) {
                let pid = pid.trim().to_string();
                let _ = Command::new("kill").arg(&pid).status();
                // Wait (briefly) until it is gone, so the scratch directory can go too.
                let until = Instant::now() + Duration::from_secs(3);
                while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }
}

fn wait_for(what: &str, timeout: Duration, mut ok: impl FnMut() -> bool) {
    let until = Instant::now() + timeout;
    while !ok() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn open_vswitch_learns_through_our_controller_over_openflow_10_and_13() {
    if !require("ovs-vswitchd", "openvswitch-switch") || !require("ovs-ofctl", "openvswitch-common") {
        return;
    }
    let scratch = Scratch::new("ovs");
    let cfg = ControllerConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        ..ControllerConfig::default()
    };
    let ctl = ControllerHandle::spawn(cfg, l2_engine(BackendChoice::Cpu, L2Config::default())).unwrap();
    let target = format!("tcp:{}", ctl.addrs()[0]);
    let ovs = Ovs::start(scratch.path());
    ovs.add_bridge("br10", "OpenFlow10", "00000000000000a1", ["p1", "p2"], &target);
    ovs.add_bridge("br13", "OpenFlow13", "00000000000000b1", ["q1", "q2"], &target);
    let stats = ctl.stats().clone();
    wait_for("both bridges to connect", Duration::from_secs(15), || {
        stats.switches_connected.load(Ordering::Relaxed) == 2
    });

    for (br, proto, ports) in [
        ("br10", "OpenFlow10", ["p1", "p2"]),
        ("br13", "OpenFlow13", ["q1", "q2"]),
    ] {
        // A -> B (B unknown: flooded), B -> A (A learnt on 1: flow + forward), A -> B again
        // (B learnt on 2: flow + forward).
        ovs.receive(ports[0], 1, A, B);
        wait_for("the flood to reach port 2", Duration::from_secs(5), || {
            ovs.sent(ports[1]) >= 1
        });
        ovs.receive(ports[1], 2, B, A);
        wait_for("B -> A to reach port 1", Duration::from_secs(5), || {
            ovs.sent(ports[0]) >= 1
        });
        ovs.receive(ports[0], 1, A, B);
        wait_for("A -> B to reach port 2 again", Duration::from_secs(5), || {
            ovs.sent(ports[1]) >= 2
        });
        let want = [
            format!("dl_dst={A} actions=output:1"),
            format!("dl_dst={B} actions=output:2"),
        ];
        let mut flows = String::new();
        wait_for("the learnt flows", Duration::from_secs(5), || {
            flows = ovs.dump_flows(br, proto);
            want.iter().all(|w| flows.contains(w.as_str()))
        });
        assert!(flows.contains("idle_timeout=60"), "{br}: {flows}");
        if proto == "OpenFlow13" {
            assert!(
                flows.contains("priority=0 actions=CONTROLLER:65535"),
                "table-miss flow: {flows}"
            );
        }
        // Once learnt, the switch forwards by itself: no new packet_in.
        let before = stats.packet_ins.load(Ordering::Relaxed);
        ovs.receive(ports[0], 1, A, B);
        wait_for("A -> B in the datapath", Duration::from_secs(5), || {
            ovs.sent(ports[1]) >= 3
        });
        assert_eq!(
            stats.packet_ins.load(Ordering::Relaxed),
            before,
            "{br}: forwarded by the flow"
        );
    }
    assert_eq!(stats.bad_messages.load(Ordering::Relaxed), 0);
    assert_eq!(stats.errors_received.load(Ordering::Relaxed), 0);
    drop(ovs);
    ctl.stop();
}

#[test]
fn the_coswitch_app_marks_elephants_at_a_real_vswitch_and_offloads_only_them_to_the_tor() {
    if !require("ovs-vswitchd", "openvswitch-switch") || !require("ovs-ofctl", "openvswitch-common") {
        return;
    }
    let scratch = Scratch::new("ovs-coswitch");
    let cfg = ControllerConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        ..ControllerConfig::default()
    };
    // Threshold 4 packets, counters read every 50 ms; the ToR is datapath 100.
    let app = CoSwitchAppConfig::parse("[coswitch]\nthreshold = 4\npoll_interval = \"50ms\"\n").unwrap();
    let ctl = ControllerHandle::spawn(cfg, coswitch_engine(app).unwrap()).unwrap();
    let target = format!("tcp:{}", ctl.addrs()[0]);
    let ovs = Ovs::start(scratch.path());
    ovs.add_bridge("cv1", "OpenFlow13", "0000000000000001", ["v1", "v2"], &target);
    ovs.add_bridge("ctor", "OpenFlow13", "0000000000000064", ["r1", "r2"], &target);
    let stats = ctl.stats().clone();
    wait_for("both bridges to connect", Duration::from_secs(15), || {
        stats.switches_connected.load(Ordering::Relaxed) == 2
    });
    wait_for("the vswitch's defaults", Duration::from_secs(5), || {
        ovs.dump_flows("cv1", "OpenFlow13")
            .contains("priority=1,ip actions=CONTROLLER")
    });
    // An elephant (10 frames: the first a packet_in, the rest counted by its entry) and a
    // mouse (1 frame).
    for _ in 0..10 {
        ovs.receive_udp("v1", 1, A, B, 1111);
        std::thread::sleep(Duration::from_millis(20));
    }
    ovs.receive_udp("v1", 1, A, B, 2222);
    let mut tor = String::new();
    wait_for("the elephant's ToR entry", Duration::from_secs(10), || {
        tor = ovs.dump_flows("ctor", "OpenFlow13");
        tor.contains("tp_src=1111")
    });
    let vs = ovs.dump_flows("cv1", "OpenFlow13");
    // At the vswitch: both flows have entries, the elephant's rewrites the DSCP (8, the TOS
    // byte 32); at the ToR: only the elephant, matched with its mark.
    assert!(vs.contains("tp_src=1111") && vs.contains("tp_src=2222"), "{vs}");
    let elephant = vs.lines().find(|l| l.contains("tp_src=1111")).unwrap();
    assert!(
        elephant.contains("mod_nw_tos:32") || elephant.contains("set_field:8->ip_dscp"),
        "{elephant}"
    );
    let mouse = vs.lines().find(|l| l.contains("tp_src=2222")).unwrap();
    assert!(!mouse.contains("nw_tos") && !mouse.contains("ip_dscp"), "{mouse}");
    assert!(!tor.contains("tp_src=2222"), "a mouse in the ToR: {tor}");
    let entry = tor.lines().find(|l| l.contains("tp_src=1111")).unwrap();
    assert!(entry.contains("nw_tos=32") || entry.contains("ip_dscp=8"), "{entry}");
    assert_eq!(
        stats.errors_received.load(Ordering::Relaxed),
        0,
        "a flow_mod was refused"
    );
    assert_eq!(stats.bad_messages.load(Ordering::Relaxed), 0);
    drop(ovs);
    ctl.stop();
}

#[test]
fn open_vswitch_connects_over_tls_with_its_client_certificate() {
    if !require("ovs-vswitchd", "openvswitch-switch") || !require("ovs-ofctl", "openvswitch-common") {
        return;
    }
    let scratch = Scratch::new("ovs-tls");
    let pki = Pki::new("ovs-tls-pki");
    let cfg = ControllerConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        tls: Some(pki.controller_files()),
        ..ControllerConfig::default()
    };
    let ctl = ControllerHandle::spawn(cfg, l2_engine(BackendChoice::Cpu, L2Config::default())).unwrap();
    let addr = ctl.addrs()[0];
    let ovs = Ovs::start(scratch.path());
    let f = |n: &str| pki.file(n).display().to_string();
    ovs.vsctl(&[
        "set-ssl",
        &f("switch-key.pem"),
        &f("switch-cert.pem"),
        &f("ca-cert.pem"),
    ]);
    ovs.add_bridge(
        "brtls",
        "OpenFlow13",
        "00000000000000c1",
        ["t1", "t2"],
        &format!("ssl:{addr}"),
    );
    let stats = ctl.stats().clone();
    wait_for("the TLS bridge to connect", Duration::from_secs(15), || {
        stats.switches_connected.load(Ordering::Relaxed) == 1
    });
    // It learns as over TCP: a flood, then a flow for the learnt address.
    ovs.receive("t1", 1, A, B);
    wait_for("the flood to reach port 2", Duration::from_secs(5), || {
        ovs.sent("t2") >= 1
    });
    ovs.receive("t2", 2, B, A);
    wait_for("B -> A to reach port 1", Duration::from_secs(5), || ovs.sent("t1") >= 1);
    let want = format!("dl_dst={A} actions=output:1");
    wait_for("the learnt flow", Duration::from_secs(5), || {
        ovs.dump_flows("brtls", "OpenFlow13").contains(want.as_str())
    });
    // A plain TCP target at the TLS port never gets a datapath in.
    ovs.add_bridge(
        "brplain",
        "OpenFlow13",
        "00000000000000c2",
        ["u1", "u2"],
        &format!("tcp:{addr}"),
    );
    wait_for("the plain connection to be refused", Duration::from_secs(15), || {
        stats.tls_failures.load(Ordering::Relaxed) >= 1
    });
    assert_eq!(stats.switches_connected.load(Ordering::Relaxed), 1);
    assert_eq!(stats.bad_messages.load(Ordering::Relaxed), 0);
    drop(ovs);
    ctl.stop();
}
