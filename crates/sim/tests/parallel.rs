//! A partitioned run gives the same outputs, byte for byte, for every number of threads
//! (issue 24's determinism check): `flows.csv`, `drops.csv`, `queues.csv` and `summary.json`
//! (and a capture) of threads = 1, 2, 3 and 4 are compared on a fat tree (split by pods) and a
//! leaf-spine (split by node numbers), each with long and web-search TCP flows, UDP, RED or
//! DCTCP marking, queue sampling and a link that fails and comes back.

use std::path::{Path, PathBuf};
use tandem_sim::parallel;
use tandem_sim::run;
use tandem_sim::scenario::Scenario;

const FAT_TREE: &str = r#"
name = "par-fat-tree"
seed = 3
duration = "12ms"
[topology]
kind = "fat_tree"
k = 4
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "10Gbps", delay = "2us" }
[switch.queue]
limit_packets = 60
marking = { kind = "red", min_packets = 10, max_packets = 40, max_p = 0.1, gentle = true, ecn = false }
[tcp]
min_rto = "1ms"
[[flows]]
kind = "permutation"
hosts = "all"
bytes = "3MB"
[[flows]]
kind = "poisson"
cdf = "websearch"
load = "30%"
hosts = "all"
count = 150
[[flows]]
kind = "udp_cbr"
pairs = [["h0", "h15"], ["h5", "h9"]]
rate = "2Gbps"
packet_size = 1000
[[failures]]
link = ["agg0", "core0"]
at = "3ms"
until = "7ms"
[output]
queue_sample_interval = "50us"
pcap = ["edge0:0", "core1:2"]
plots = false
"#;

const LEAF_SPINE: &str = r#"
name = "par-leaf-spine"
seed = 5
duration = "10ms"
[topology]
kind = "leaf_spine"
leaves = 4
spines = 3
hosts_per_leaf = 4
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "40Gbps", delay = "1500ns" }
[switch.queue]
limit_packets = 100
marking = { kind = "threshold", k = "30KB" }
[tcp]
cc = "dctcp"
min_rto = "1ms"
[[flows]]
kind = "incast"
senders = ["h1..h12"]
receiver = "h0"
bytes = "64KB"
repeats = 3
gap = "2ms"
[[flows]]
kind = "poisson"
cdf = "websearch"
load = "40%"
hosts = "all"
count = 120
[output]
queue_sample_interval = "20us"
sample_ports = ["leaf0:0", "spine2:1", "leaf3:5"]
plots = false
"#;

fn scenario(text: &str, threads: u16) -> Scenario {
    let sets = [("threads".to_string(), threads.to_string())];
    Scenario::parse(text, "par.toml", "par", Path::new("."), &sets).expect("scenario")
}

fn outputs(text: &str, threads: u16) -> (PathBuf, Vec<(String, Vec<u8>)>) {
    let sc = scenario(text, threads);
    let dir = std::env::temp_dir().join(format!("tandem-par-{}-{}-{threads}", std::process::id(), sc.name));
    let _ = std::fs::remove_dir_all(&dir);
    run::run(&sc, &dir, &mut |_| {}).expect("run");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.ends_with(".csv") || n.ends_with(".json") || n.ends_with(".pcap")
        })
        .map(|e| {
            (
                e.file_name().to_string_lossy().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    (dir, files)
}

/// A star: one switch with its hosts cannot be split, so every partition but the first is
/// empty (and runs no thread).
const STAR: &str = r#"
name = "par-star"
seed = 7
duration = "10ms"
[topology]
kind = "star"
hosts = 9
link = { rate = "10Gbps", delay = "1us" }
[switch.queue]
limit_packets = 30
[tcp]
min_rto = "1ms"
[[flows]]
kind = "incast"
senders = ["h1..h8"]
receiver = "h0"
bytes = "60KB"
repeats = 5
gap = "1ms"
[[flows]]
kind = "udp_cbr"
pairs = [["h3", "h5"]]
rate = "1Gbps"
packet_size = 1000
[output]
queue_sample_interval = "20us"
plots = false
"#;

fn same_for_every_thread_count(text: &str) {
    same_outputs(text, true);
}

/// Runs `text` on 1 to 4 threads and compares every output with the one-thread run's;
/// `cut`: the partitions of 2 to 4 threads cut links (else they cut none).
fn same_outputs(text: &str, cut: bool) {
    let (dir1, one) = outputs(text, 1);
    let names: Vec<&str> = one.iter().map(|f| f.0.as_str()).collect();
    for want in ["flows.csv", "drops.csv", "queues.csv", "summary.json"] {
        assert!(names.contains(&want), "{want} missing: {names:?}");
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&one.iter().find(|f| f.0 == "summary.json").unwrap().1).unwrap();
    assert!(summary["completed"].as_u64().unwrap() > 30, "{summary}");
    assert!(summary["drops"].as_u64().unwrap() > 0, "{summary}");
    for threads in [2, 3, 4] {
        let split = parallel::partition(&scenario(text, threads).topology, usize::from(threads));
        assert_eq!(
            split.cut_links > 0,
            cut,
            "{threads} partitions cut {} links",
            split.cut_links
        );
        let (dir, other) = outputs(text, threads);
        assert_eq!(
            one.iter().map(|f| &f.0).collect::<Vec<_>>(),
            other.iter().map(|f| &f.0).collect::<Vec<_>>()
        );
        for (a, b) in one.iter().zip(&other) {
            assert!(
                a.1 == b.1,
                "{}: {} differs between 1 and {threads} threads",
                summary["scenario"],
                a.0
            );
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
    std::fs::remove_dir_all(dir1).unwrap();
}

#[test]
fn a_fat_tree_split_by_pods_gives_the_same_outputs_on_any_number_of_threads() {
    same_for_every_thread_count(FAT_TREE);
}

#[test]
fn a_leaf_spine_split_by_node_numbers_gives_the_same_outputs_on_any_number_of_threads() {
    same_for_every_thread_count(LEAF_SPINE);
}

#[test]
fn a_network_that_cannot_be_split_gives_the_same_outputs_on_any_number_of_threads() {
    same_outputs(STAR, false);
}

#[test]
fn a_fat_tree_splits_by_pods() {
    let sc = scenario(FAT_TREE, 2);
    let split = parallel::partition(&sc.topology, 2);
    let name = |n: usize| sc.topology.nodes()[n].name.clone();
    for (i, &o) in split.owner.iter().enumerate() {
        let n = name(i);
        // k = 4: hosts h0..h7, edge0..3, agg0..3 are pods 0 and 1; core0..1 the first half.
        let first = match n
            .trim_start_matches(|c: char| c.is_alphabetic())
            .parse::<usize>()
            .unwrap()
        {
            x if n.starts_with('h') => x < 8,
            x if n.starts_with("core") => x < 2,
            x => x < 4,
        };
        assert_eq!(o == 0, first, "{n}");
    }
    // Only agg - core links cross: 2 pods x 2 aggs x 2 cores to the other half's cores.
    assert_eq!(split.cut_links, 8);
    assert_eq!(split.window, tandem_sim::time::US);
}
