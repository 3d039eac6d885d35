use super::*;
use crate::time::{MS, SEC};
use crate::workload::FlowKind;

const FULL: &str = r#"
name = "demo"
seed = 7
duration = "50ms"

[topology]
kind = "star"
hosts = 5
link = { rate = "1Gbps", delay = "25us" }

[switch]
forwarding = "cut_through"
[switch.queue]
limit_packets = 100
marking = { kind = "threshold", k = "30KB" }

[tcp]
cc = "dctcp"
min_rto = "1ms"
delayed_ack = "off"

[[flows]]
kind = "incast"
senders = ["h1..h4"]
receiver = "h0"
bytes = "64KB"
repeats = 2
gap = "10ms"

[[flows]]
kind = "poisson"
cdf = "websearch"
load = "20%"
hosts = "all"
count = 5

[output]
pcap = ["switch0:0"]
"#;

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(text, "t.toml", "t", Path::new("."), &[])
}

fn parse_with(text: &str, sets: &[(&str, &str)]) -> Result<Scenario, ScenarioError> {
    let o: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Scenario::parse(text, "t.toml", "t", Path::new("."), &o)
}

#[test]
fn full_scenario_loads() {
    let sc = parse(FULL).unwrap();
    assert_eq!(sc.name, "demo");
    assert_eq!(sc.seed, 7);
    assert_eq!(sc.duration, 50 * MS);
    assert_eq!(sc.topology.hosts().len(), 5);
    assert_eq!(sc.switch.queue.marking, Marking::Threshold { k_bytes: 30_000 });
    assert_eq!(sc.switch.forwarding, Forwarding::CutThrough { header_bytes: 64 });
    assert!(matches!(sc.tcp.cc, CcAlgo::Dctcp { g } if g == 1.0 / 16.0));
    assert!(sc.tcp.ecn, "DCTCP turns ECN on");
    assert_eq!(sc.tcp.min_rto, MS);
    assert_eq!(sc.tcp.delayed_ack, DelayedAck::Off);
    assert_eq!(sc.host_queue.limit_packets, 10_000);
    assert_eq!(sc.flows.len(), 8 + 5);
    let incast: Vec<_> = sc
        .flows
        .iter()
        .filter(|f| f.bytes == 64_000 && f.dst == NodeId(0))
        .collect();
    assert!(incast.len() >= 8);
    assert!(sc.flows.windows(2).all(|w| w[0].start <= w[1].start));
    assert!(sc.flows.iter().enumerate().all(|(i, f)| f.id.0 as usize == i));
    assert!(sc.flows.iter().all(|f| f.kind == FlowKind::Bulk));
    assert_eq!(sc.output.pcap, vec![(sc.topology.find("switch0").unwrap(), 0)]);
    assert_eq!(sc.output.queue_sample_interval, 50 * US);
    // Same text, same flows; another seed, other Poisson flows.
    let again = parse(FULL).unwrap();
    assert_eq!(format!("{:?}", again.flows), format!("{:?}", sc.flows));
    let other = parse_with(FULL, &[("seed", "8")]).unwrap();
    assert_ne!(format!("{:?}", other.flows), format!("{:?}", sc.flows));
}

#[test]
fn per_class_packet_limits() {
    let sc = parse(FULL).unwrap();
    assert_eq!(sc.switch.queue.class_limit_packets, [None; 8], "default: no overrides");
    let text = FULL.replacen(
        "limit_packets = 100\n",
        "limit_packets = 100\nclasses = 3\nclass_limits_packets = [100, 50]\n",
        1,
    );
    let q = parse(&text).unwrap().switch.queue;
    assert_eq!(
        (q.packet_limit(0), q.packet_limit(1), q.packet_limit(2)),
        (100, 50, 100)
    );
    assert_eq!(&q.class_limit_packets[..3], &[Some(100), Some(50), None]);
    let bad = FULL.replacen("limit_packets = 100\n", "class_limits_packets = [100, 50]\n", 1);
    let e = parse(&bad).expect_err("two limits for one class").to_string();
    assert!(
        e.starts_with("t.toml:14: switch.queue.class_limits_packets: 2 limits for 1 classes"),
        "{e}"
    );
}

#[test]
fn errors_name_file_line_and_key() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "[switch.queue]\nlimit_packets = 100\n",
            "[switch.queue]\nlimit_packts = 100\n",
            "t.toml:14: switch.queue.limit_packts: unknown field `limit_packts`",
        ),
        (
            "min_rto = \"1ms\"",
            "min_rto = \"1 parsec\"",
            "t.toml:19: tcp.min_rto: expected a duration",
        ),
        (
            "bytes = \"64KB\"",
            "bytes = \"64KQ\"",
            "t.toml:26: flows[0].bytes: expected a size",
        ),
        (
            "receiver = \"h0\"",
            "receiver = \"h9\"",
            "t.toml:25: flows[0].receiver: no host named `h9` (hosts are h0..h4)",
        ),
        (
            "senders = [\"h1..h4\"]",
            "senders = [\"h1..hx\"]",
            "t.toml:24: flows[0].senders[0]: `h1..hx` is not a range",
        ),
        (
            "kind = \"poisson\"",
            "kind = \"poison\"",
            "t.toml:31: flows[1].kind: unknown kind `poison`",
        ),
        (
            "hosts = 5\n",
            "hosts = \"five\"\n",
            "t.toml:8: topology.hosts: invalid type: string \"five\"",
        ),
        (
            "cc = \"dctcp\"",
            "cc = \"cubic\"",
            "t.toml:18: tcp.cc: unknown variant `cubic`",
        ),
        (
            "pcap = [\"switch0:0\"]",
            "pcap = [\"switch0:9\"]",
            "t.toml:38: output.pcap[0]: `switch0` has 5 ports, no port 9",
        ),
        ("duration = \"50ms\"\n", "", "t.toml: missing field `duration`"),
        (
            "duration = \"50ms\"\n",
            "duration = \"50ms\"\nduration = \"1s\"\n",
            "t.toml:5: duplicate key",
        ),
    ];
    for (from, to, want) in cases {
        assert!(FULL.contains(from), "{from}");
        let text = FULL.replacen(from, to, 1);
        let e = parse(&text).expect_err(want).to_string();
        assert!(e.starts_with(want), "got  {e}\nwant {want}");
    }
}

#[test]
fn overrides_apply_and_report_as_set() {
    let sc = parse_with(
        FULL,
        &[
            ("tcp.min_rto", "5ms"),
            ("flows[1].count", "3"),
            ("switch.queue.marking", "none"),
        ],
    )
    .unwrap();
    assert_eq!(sc.tcp.min_rto, 5 * MS);
    assert_eq!(sc.flows.len(), 8 + 3);
    assert_eq!(sc.switch.queue.marking, Marking::None);
    let sc = parse_with(FULL, &[("flows.1.load", "0.5"), ("duration", "1s")]).unwrap();
    assert_eq!(sc.duration, SEC);
    assert!(sc.tcp.lost_retransmit_detection);
    let sc = parse_with(FULL, &[("tcp.lost_retransmit_detection", "false")]).unwrap();
    assert!(!sc.tcp.lost_retransmit_detection);
    let e = parse_with(FULL, &[("tcp.min_rto", "fast")]).unwrap_err().to_string();
    assert!(e.starts_with("--set: tcp.min_rto: expected a duration"), "{e}");
    let e = parse_with(FULL, &[("flows[5].load", "1")]).unwrap_err().to_string();
    assert_eq!(e, "--set: flows[5].load: `flows` has 2 entries");
    let e = parse_with(FULL, &[("tcp.bogus", "1")]).unwrap_err().to_string();
    assert!(e.starts_with("--set: tcp.bogus: unknown field `bogus`"), "{e}");
    let e = parse_with(FULL, &[("tcp..x", "1")]).unwrap_err().to_string();
    assert!(e.contains("not a key path"), "{e}");
}

#[test]
fn path_parsing() {
    assert_eq!(fmt_path(&parse_path("a.b[2].c").unwrap()), "a.b[2].c");
    assert_eq!(fmt_path(&parse_path("flows.0.load").unwrap()), "flows[0].load");
    assert_eq!(fmt_path(&parse_path("m[1][2]").unwrap()), "m[1][2]");
    assert!(parse_path("").is_none());
    assert!(parse_path("a[x]").is_none());
    assert!(parse_path("a[1]b").is_none());
}

#[test]
fn topologies_and_workloads() {
    let base = "duration = \"10ms\"\n";
    let ok = [
        "[topology]\nkind = \"dumbbell\"\nleft = 2\nright = 2\naccess = { rate = \"10Gbps\", delay = \"1us\" }\nbottleneck = { rate = \"1Gbps\", delay = \"10us\" }\n[[flows]]\nkind = \"bulk\"\npairs = [[\"h0\", \"h2\"], [\"h1\", \"h3\"]]\nbytes = \"1MB\"\n",
        "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\nhost_link = { rate = \"10Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"40Gbps\", delay = \"1us\" }\n[[flows]]\nkind = \"request_response\"\nfrom = [\"h1\", \"h2\"]\nto = \"h0\"\nrequest = \"100B\"\nresponse = \"20KB\"\nrepeats = 3\ngap = \"1ms\"\n",
        "[topology]\nkind = \"fat_tree\"\nk = 4\nhost_link = { rate = \"10Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"10Gbps\", delay = \"1us\" }\n[[flows]]\nkind = \"udp_cbr\"\nfrom = \"h1\"\nto = \"h0\"\nrate = \"100Mbps\"\npacket_size = \"1000B\"\n[[flows]]\nkind = \"udp_onoff\"\npairs = [[\"h2\", \"h3\"]]\nrate = \"1Gbps\"\npacket_size = 1400\non = \"1ms\"\noff = \"1ms\"\n[[flows]]\nkind = \"udp_burst\"\npairs = [[\"h4\", \"h5\"]]\npackets = 10\npacket_size = 1000\nrate = \"10Gbps\"\n",
    ];
    for t in ok {
        let sc = parse(&format!("{base}{t}")).unwrap_or_else(|e| panic!("{e}\n{t}"));
        assert!(!sc.flows.is_empty());
    }
    let e = parse(&format!(
        "{base}{}",
        ok[0].replace(
            "pairs = [[\"h0\", \"h2\"], [\"h1\", \"h3\"]]",
            "pairs = [[\"h0\", \"h0\"]]"
        )
    ))
    .unwrap_err();
    assert!(
        e.to_string().contains("flows[0].pairs[0]: a flow from `h0` to itself"),
        "{e}"
    );
    let e = parse(&format!("{base}{}", ok[1].replace("to = \"h0\"\n", ""))).unwrap_err();
    assert!(
        e.to_string()
            .contains("flows[0]: give either `pairs` or both `from` and `to`"),
        "{e}"
    );
    let e = parse(&format!("{base}[topology]\nkind = \"fat_tree\"\nk = 3\nhost_link = {{ rate = \"1Gbps\", delay = \"1us\" }}\nfabric_link = {{ rate = \"1Gbps\", delay = \"1us\" }}\n")).unwrap_err();
    assert!(
        e.to_string().starts_with("t.toml:2: topology: fat-tree k must be even"),
        "{e}"
    );
}

#[test]
fn workload_seeds_differ_per_entry() {
    assert_ne!(workload_seed(1, 0), workload_seed(1, 1));
    assert_ne!(workload_seed(1, 0), workload_seed(2, 0));
    assert_eq!(workload_seed(5, 3), workload_seed(5, 3));
}
