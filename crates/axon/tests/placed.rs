//! Axon placed by a scenario file (`[[system]] kind = "axon"`): the shipped ring runs the real
//! Axon node on the simulator's kernel; frames between Axons are real Axon frames; one route's
//! setup takes what the testbed measures for the same node; two hosts that ARP for each other
//! at once lose their first packets (and TCP recovers); runs are deterministic; bad entries are
//! refused at their key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tandem_axon::model::common::TABLE_4_1_FLOWS;
use tandem_axon::model::placed::AxonKind;
use tandem_sim::limits::Limits;
use tandem_sim::run;
use tandem_sim::scenario::system::SystemKind;
use tandem_sim::scenario::Scenario;
use tandem_testkit::Scratch;
use tandem_wire::axon::{AxonRepr, Packet as AxonPacket, PacketType};
use tandem_wire::pcap::{LinkType, TraceReader};

fn ring() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/systems/axon-ring.toml")
}

const KINDS: &[&dyn SystemKind] = &[&AxonKind];

fn load(sets: &[(&str, &str)]) -> Result<Scenario, String> {
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Scenario::load_with_systems(&ring(), &sets, &Limits::default(), KINDS).map_err(|e| e.to_string())
}

/// Every Axon's counters, summed, after running `sc` to its end.
fn summed(sc: &Scenario) -> BTreeMap<&'static str, f64> {
    let mut sim = run::build(sc, None).unwrap();
    sim.run_until(sc.duration);
    let mut sum = BTreeMap::new();
    for &sw in &sc.systems[0].switches {
        for (k, v) in sim.model(sw).unwrap().system_counters() {
            *sum.entry(k).or_insert(0.0) += v;
        }
    }
    sum
}

#[test]
fn the_ring_runs_on_the_real_node() {
    let sc = load(&[("duration", "60ms"), ("flows[1].duration", "40ms")]).unwrap();
    let c = summed(&sc);
    assert!(c["axon_arp_started"] >= 8.0, "{c:?}");
    assert_eq!(c["axon_arp_started"], c["axon_arp_completed"], "{c:?}");
    // Each Axon-ARP is a request and a reply, each a packet of its own on the kernel's links.
    assert_eq!(c["control_frames"], 2.0 * c["axon_arp_started"], "{c:?}");
    // Both ends of every pair have a route (Phase III at the target, Phase IV at the source;
    // two hosts on one Axon get both at once, without Axon-ARP).
    assert!(c["routes_installed"] >= 2.0 * c["axon_arp_completed"], "{c:?}");
    assert_eq!(c["routes"], c["routes_installed"] - c["routes_removed"], "{c:?}");
    assert!(c["cam_hits"] > 1000.0 && c["stripped"] > 1000.0, "{c:?}");
    for k in [
        "upcalled_packets",
        "arp_failures",
        "arp_queue_drops",
        "arp_replies_ignored",
    ] {
        assert_eq!(c[k], 0.0, "{k}: {c:?}");
    }
}

/// The only flow: `h0` -> `h4`, two Axons apart.
fn one_flow(extra: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    let mut v = vec![
        ("duration", "3ms".to_string()),
        (
            "flows",
            r#"[{kind = "bulk", pairs = [["h0", "h4"]], bytes = "100KB"}]"#.to_string(),
        ),
        ("output.pcap", r#"["a0:0", "a0:1", "a2:2"]"#.to_string()),
        ("output.plots", "false".to_string()),
    ];
    v.extend(extra.iter().map(|(k, s)| (*k, s.to_string())));
    v
}

fn load_owned(sets: &[(&'static str, String)]) -> Scenario {
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    Scenario::load_with_systems(&ring(), &sets, &Limits::default(), KINDS).unwrap()
}

/// (time in ns, frame) of every frame in a capture, and its link type (Ethernet when empty).
fn frames(path: &Path) -> (LinkType, Vec<(u64, Vec<u8>)>) {
    let mut r = TraceReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut lt = LinkType::ETHERNET;
    let mut out = Vec::new();
    while let Some(rec) = r.next_packet() {
        let rec = rec.unwrap();
        lt = rec.linktype;
        out.push((rec.ts_ns, rec.data.to_vec()));
    }
    (lt, out)
}

#[test]
fn frames_between_axons_are_axon_frames_and_one_route_takes_the_testbeds_time() {
    let sc = load_owned(&one_flow(&[]));
    let s = Scratch::new("axon-placed-one");
    let out = run::run(&sc, s.path(), &mut |_| {}).unwrap();
    // a0's ring ports carry Axon frames: the flow's data (type Ethernet, a TCP segment inside)
    // and the Axon-ARP control frames, on whichever side the control plane chose.
    let mut data = 0;
    let mut control = 0;
    for port in ["a0-0.pcap", "a0-1.pcap"] {
        let (lt, fs) = frames(&s.join(port));
        assert!(fs.is_empty() || lt == LinkType::USER0, "{lt:?}");
        for (_, f) in fs {
            let h = AxonRepr::parse(&AxonPacket::new_checked(&f[..]).unwrap()).unwrap();
            match h.packet_type {
                PacketType::Ethernet => {
                    let inner = &f[h.header_len()..];
                    assert_eq!(&inner[12..14], &[0x08, 0x00], "IPv4 inside");
                    data += 1;
                }
                PacketType::Control => control += 1,
                other => panic!("unexpected {other:?}"),
            }
        }
    }
    assert!(data > 60, "{data} data frames");
    assert_eq!(control, 1, "the Axon-ARP request leaves a0; the reply comes back in");
    // The first data frame reaches h4 at the time the testbed measures from the ARP request
    // to the first data frame at the target over the same node (757 us, docs/systems/axon.md).
    // Declared before the first run: within 2%, as the two drivers differ only in how hosts
    // are modelled (there, hosts send their ARP before the packet; here the Axon sends the
    // host's ARP when the packet arrives, a SYN's serialisation later).
    let (lt, fs) = frames(&s.join("a2-2.pcap"));
    assert_eq!(lt, LinkType::ETHERNET);
    let first_us = fs[0].0 as f64 / 1_000.0;
    assert!(
        (first_us - 757.0).abs() <= 757.0 * 0.02,
        "first data frame at h4 after {first_us} us"
    );
    let a0 = &out.summary["systems"][0]["switches"]["a0"];
    assert_eq!(a0["axon_arp_completed"], 1.0, "{}", out.summary);
    let setup = a0["route_setup_mean_us"].as_f64().unwrap();
    assert!(setup > 700.0 && setup < first_us, "{setup}");

    // No software delays: the setup is what the frames take on the wires.
    let fast = load_owned(&one_flow(&[("system[0].software_delays", "false")]));
    let c = summed(&fast);
    assert!(c["route_setup_max_us"] < 20.0, "{c:?}");
}

#[test]
fn hosts_that_arp_for_each_other_at_once_lose_their_first_packets() {
    // h0 and h4 open connections to each other at the same instant. Each Axon's Phase II
    // ARP request teaches the other host the address it waits for, and Linux sends what waits
    // at once, before the Axon has stored the route (Phase III): the packet finds no route.
    // TCP's SYN retransmission (1 s) recovers. Until the control plane freed the older route's
    // CAM key before installing the newer (control::routes), each host's own Phase IV reply
    // named a masqueraded MAC less than a second after the request had named the real one;
    // Linux ignores such a reply (locktime), so the hosts kept a MAC without a route and the
    // retransmitted SYNs were lost too (seen live as well: docs/systems/axon.md).
    let sc = load_owned(&[
        ("duration", "1500ms".to_string()),
        (
            "flows",
            r#"[{kind = "bulk", pairs = [["h0", "h4"], ["h4", "h0"]], bytes = "100KB"}]"#.to_string(),
        ),
        ("output.plots", "false".to_string()),
    ]);
    let s = Scratch::new("axon-placed-race");
    let out = run::run(&sc, s.path(), &mut |_| {}).unwrap();
    assert_eq!(out.summary["drops_by_reason"]["axon-unrouted"], 2, "{}", out.summary);
    assert_eq!(out.summary["completed"], 2, "{}", out.summary);
    for a in ["a0", "a2"] {
        let c = &out.summary["systems"][0]["switches"][a];
        assert_eq!(c["arp_replies_ignored"], 0.0, "{a}: {c}");
    }
    let flows = std::fs::read_to_string(s.join("flows.csv")).unwrap();
    for l in flows.lines().skip(1) {
        let end: f64 = l.split(',').nth(6).unwrap().parse().unwrap();
        assert!(end > 1.0, "finished only after the SYN's retransmission: {l}");
    }
}

#[test]
fn runs_are_deterministic() {
    let sc = load_owned(&one_flow(&[("duration", "20ms")]));
    let s = Scratch::new("axon-placed-det");
    run::run(&sc, &s.join("a"), &mut |_| {}).unwrap();
    run::run(&sc, &s.join("b"), &mut |_| {}).unwrap();
    for f in [
        "summary.json",
        "flows.csv",
        "drops.csv",
        "queues.csv",
        "a0-0.pcap",
        "a2-2.pcap",
    ] {
        let a = std::fs::read(s.join("a").join(f)).unwrap();
        let b = std::fs::read(s.join("b").join(f)).unwrap();
        assert_eq!(a, b, "{f} differs between two runs");
    }
}

#[test]
fn entries_are_checked() {
    let e = load(&[("system[0].switches", r#"["a0", "a1"]"#)]).unwrap_err();
    assert!(
        e.contains("system[0].switches") && e.contains("which this entry does not make an Axon"),
        "{e}"
    );
    let e = load(&[("system[0].cam", "1")]).unwrap_err();
    assert!(e.contains("system[0]") && e.contains("unknown field `cam`"), "{e}");
    let e = load(&[("system[0].route_slots", "0")]).unwrap_err();
    assert!(e.contains("system[0].route_slots: must be at least 1"), "{e}");
    // A star of 16 hosts: one switch with 16 ports, one more than an Axon has.
    let star = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/systems/coswitch-rack.toml");
    let sets = vec![(
        "system".to_string(),
        r#"[{kind = "axon", switches = "all"}]"#.to_string(),
    )];
    let e = Scenario::load_with_systems(&star, &sets, &Limits::default(), KINDS)
        .unwrap_err()
        .to_string();
    assert!(e.contains("has 16 ports; an Axon has at most 15"), "{e}");
    let e = load(&[("system[0].probe_interval", "\"50us\"")]).unwrap_err();
    assert!(e.contains("system[0].probe_interval: needs `discovery = true`"), "{e}");
    let e = load(&[("system[0].discovery", "true"), ("system[0].probe_timeout", "\"50us\"")]).unwrap_err();
    assert!(
        e.contains("system[0].probe_timeout: must be longer than the probe interval"),
        "{e}"
    );
    let e = load(&[("system[0].link_notice", "\"some\"")]).unwrap_err();
    assert!(e.contains("system[0]") && e.contains("unknown variant `some`"), "{e}");
}

/// The ring with h0 -> h4 (Axon a0 to a2) sending TCP from 1 ms (discovery has converged by
/// then) and the link that carries it next to a2 failing at 3 ms, the failure told as `notice`
/// says; the bytes delivered from 3 to 8 ms.
fn failing_ring(notice: &str, discovery: bool) -> (Scenario, u64) {
    let mut sets = one_flow(&[("system[0].link_notice", notice)]);
    sets.retain(|(k, _)| *k != "duration" && *k != "output.pcap");
    sets.push(("duration", "8ms".to_string()));
    sets.push((
        "flows",
        r#"[{kind = "bulk", pairs = [["h0", "h4"]], bytes = "100MB", start = "1ms"}]"#.to_string(),
    ));
    if discovery {
        sets.push(("system[0].discovery", "true".to_string()));
    }
    let sc = load_owned(&sets);
    // Where h0's route goes: run to 3 ms and read Axon a0's control plane.
    let mut sim = tandem_sim::run::build(&sc, None).unwrap();
    sim.run_until(3_000_000_000);
    let a0 = sc.topology.find("a0").unwrap();
    let h4 = sc.topology.find("h4").unwrap();
    let port = sc
        .topology
        .ports(a0)
        .iter()
        .position(|p| p.peer == sc.topology.find("h0").unwrap());
    let m = sim.model_as::<tandem_axon::model::placed::AxonSwitch>(a0).unwrap();
    let r = m
        .node()
        .control()
        .route_to(port.unwrap() as u8, tandem_sim::tap::node_ip(h4))
        .expect("h0's route is up by 3 ms");
    let link = m.node().control().topology().links()[r.links.last().unwrap().0];
    let mut sc = sc;
    let at = format!("a{}", link.a.device - 1);
    let peer = sc.topology.ports(sc.topology.find(&at).unwrap())[usize::from(link.a.port)].peer;
    let far = sc.topology.node(peer).name.clone();
    sc = load_owned(
        &sets
            .iter()
            .cloned()
            .chain([("failures", format!(r#"[{{link = ["{at}", "{far}"], at = "3ms"}}]"#))])
            .collect::<Vec<_>>(),
    );
    let mut sim = tandem_sim::run::build(&sc, None).unwrap();
    sim.run_until(3_000_000_000);
    let before = sim.flow_results().next().unwrap().1.delivered;
    sim.run_until(8_000_000_000);
    let after = sim.flow_results().next().unwrap().1.delivered;
    (sc, after - before)
}

#[test]
fn a_failed_link_is_routed_around_when_the_axons_learn_of_it() {
    // Told to every control plane (or found by probes), a0 reroutes h0's route the other way
    // round the ring and the flow goes on; told to nobody, it stops.
    let (_, everyone) = failing_ring("everyone", false);
    let (_, probes) = failing_ring("none", true);
    let (_, nobody) = failing_ring("none", false);
    // Told to the ends only (the default), the Axons next to the failure reroute what they
    // hold; h0's route is a0's, which is not an end, so the flow stops as with no notice.
    let (_, ends) = failing_ring("ends", false);

    // 5 ms at up to 1 Gb/s: 625 KB at most.
    // Measured: 585 KB, 547 KB (the probe timeout, 350 us, costs a little), 1.4 KB, 1.4 KB.
    assert!(everyone > 500_000, "{everyone}");
    assert!(probes > 450_000 && probes < everyone, "{probes}");
    assert!(nobody < 20_000, "{nobody}");
    assert!(ends < 20_000, "{ends}");
}

/// `axon-bandwidth`'s line or ring (three Axons, six hosts, 1 GbE, 5 ns) as a scenario file.
fn table_4_1(dir: &Path, ring: bool) -> PathBuf {
    let mut g = String::new();
    for a in ["A", "B", "C"] {
        g += &format!("[[node]]\nname = \"{a}\"\nkind = \"switch\"\n");
    }
    // Each Axon's hosts together (its DHCP pool is their range): h1, h4 on A; h2, h5 on B; ...
    for h in [1, 4, 2, 5, 3, 6] {
        g += &format!("[[node]]\nname = \"h{h}\"\nkind = \"host\"\n");
    }
    let mut links = vec![("A".to_string(), "B".to_string()), ("B".into(), "C".into())];
    if ring {
        links.push(("C".into(), "A".into()));
    }
    for h in 1..=6 {
        links.push((["A", "B", "C"][(h - 1) % 3].into(), format!("h{h}")));
    }
    for (a, b) in links {
        g += &format!("[[link]]\na = \"{a}\"\nb = \"{b}\"\nrate = \"1Gbps\"\ndelay = \"5ns\"\n");
    }
    std::fs::write(dir.join("graph.toml"), g).unwrap();
    let pairs: Vec<String> = TABLE_4_1_FLOWS
        .iter()
        .map(|(s, d)| format!("[\"h{s}\", \"h{d}\"]"))
        .collect();
    let sc = format!(
        "name = \"table-4-1\"\nseed = 1\nduration = \"600ms\"\n[topology]\nkind = \"graph\"\nfile = \"graph.toml\"\n\
         [switch]\nforwarding = \"cut_through\"\n[tcp]\nmin_rto = \"10ms\"\n\
         [[flows]]\nkind = \"bulk\"\npairs = [{}]\nbytes = \"10GB\"\n\
         [[system]]\nkind = \"axon\"\nswitches = \"all\"\n",
        pairs.join(", ")
    );
    let file = dir.join("table-4-1.toml");
    std::fs::write(&file, sc).unwrap();
    file
}

/// Table 4.1's TCP goodput per flow (1->2, 2->3, 3->1, 4->6, 6->5, 5->4) over [0.4 s, 2 s),
/// Mb/s, as the model's own event loop (`model::sim`, the same device and TCP code, with the
/// device's PAUSE; removed once every experiment ran on the kernel) measured it at commit
/// 36960e7: line, then ring.
const LOOP_TABLE_4_1: [[f64; 6]; 2] = [
    [559.7, 550.6, 344.7, 344.7, 559.6, 548.6],
    [908.7, 908.6, 908.6, 907.2, 907.9, 908.6],
];

#[test]
fn kernel_hosted_axons_give_the_models_table_4_1_tcp_goodput() {
    // The kernel-hosted Axons against what the model's own loop measured for the same device
    // and TCP code. Measured first (with PAUSE in both; the kernel then freed a port at the
    // frame's start): line 2,911.0 against 2,908.0 Mb/s, ring 5,451.7 against 5,449.5, every
    // flow within 1.0%; held within 2% a flow, a regression guard. Before the kernel had PAUSE
    // the guard ran over [0.4 s, 1.2 s); with it, line flow 4->6 was 2.3% off over that
    // shorter window (340.6 against 348.7), so the guard covers the window the docs quote.
    let s = Scratch::new("axon-table-4-1");
    let (from, to) = (400 * tandem_sim::time::MS, 2000 * tandem_sim::time::MS);
    for (ring, model) in [(false, LOOP_TABLE_4_1[0]), (true, LOOP_TABLE_4_1[1])] {
        let sc = Scenario::load_with_systems(&table_4_1(s.path(), ring), &[], &Limits::default(), KINDS).unwrap();
        let mut sim = run::build(&sc, None).unwrap();
        sim.run_until(from);
        let a: Vec<u64> = sim.flow_results().map(|(_, r, _)| r.delivered).collect();
        sim.run_until(to);
        let b: Vec<u64> = sim.flow_results().map(|(_, r, _)| r.delivered).collect();
        let kernel: Vec<f64> = a
            .iter()
            .zip(&b)
            .map(|(a, b)| (b - a) as f64 * 8.0 / tandem_sim::time::as_secs(to - from) / 1e6)
            .collect();
        for (i, (k, m)) in kernel.iter().zip(&model).enumerate() {
            assert!(
                (k - m).abs() <= 0.02 * m,
                "ring {ring}, flow {i}: kernel {k:.1} against the loop's {m:.1} Mb/s ({kernel:.1?} / {model:.1?})"
            );
        }
    }
}
