//! Long TCP flows with staggered starts share one bottleneck fairly: the regression tests for
//! the collapse the reviewer of issue 16 found (one flow starved while others took its share).
//!
//! 2, 4, 8 and 16 NewReno flows (SACK, delayed ACKs, min RTO 200 ms, every other setting
//! default) from 10 Gb/s senders start 100 ms apart into one 1 Gb/s port with a 100-packet
//! drop-tail queue, or a gentle RED queue. Over the window that starts 500 ms after the last
//! flow started, every flow's goodput is compared with the mean.
//!
//! Bounds, declared before the first run: every flow gets at least half the mean (ns-3 3.37
//! keeps every flow between 0.7x and 1.7x of its fair share on the reviewer's set-up; a factor
//! of two leaves room for drop-tail's phase effects over a one-second window, and a starved
//! flow gets far less) and Jain's index is at least 0.9 (the reviewer measured 0.96 in ns-3
//! and 0.88 for the collapse).

use std::path::Path;
use tandem_sim::run;
use tandem_sim::scenario::Scenario;
use tandem_sim::time::{MS, SEC};

fn scenario(flows: u32, red: bool) -> Scenario {
    let mut text = format!(
        r#"
name = "fairness"
seed = 1
duration = "1s"
[topology]
kind = "star"
hosts = {}
link = {{ rate = "10Gbps", delay = "25us" }}
host_links = {{ h0 = {{ rate = "1Gbps", delay = "25us" }} }}
[switch.queue]
limit_packets = 100
{}
[tcp]
cc = "newreno"
min_rto = "200ms"
[output]
queue_sample_interval = "0"
plots = false
"#,
        flows + 1,
        if red {
            r#"marking = { kind = "red", min_packets = 15, max_packets = 45, max_p = 0.1, gentle = true, ecn = false }"#
        } else {
            ""
        }
    );
    for i in 1..=flows {
        text.push_str(&format!(
            "[[flows]]\nkind = \"bulk\"\npairs = [[\"h{i}\", \"h0\"]]\nbytes = \"1000TB\"\nstart = \"{}ms\"\n",
            (i - 1) * 100
        ));
    }
    Scenario::parse(&text, "fairness.toml", "fairness", Path::new("."), &[]).unwrap()
}

fn check(flows: u32, red: bool) {
    let sc = scenario(flows, red);
    let mut sim = run::build(&sc, None).unwrap();
    let from = u64::from(flows - 1) * 100 * MS + 500 * MS;
    let to = from + SEC;
    sim.run_until(from);
    let before: Vec<u64> = sim.flow_results().map(|f| f.1.delivered).collect();
    sim.run_until(to);
    let got: Vec<f64> = sim
        .flow_results()
        .zip(&before)
        .map(|(f, b)| (f.1.delivered - b) as f64 * 8.0 / 1e6)
        .collect();
    let mean = got.iter().sum::<f64>() / got.len() as f64;
    let jain = got.iter().sum::<f64>().powi(2) / (got.len() as f64 * got.iter().map(|x| x * x).sum::<f64>());
    let what = format!("{flows} flows, {}", if red { "RED" } else { "drop-tail" });
    eprintln!("{what}: Mb/s per flow {got:.1?}, Jain {jain:.3}");
    assert!(
        mean * got.len() as f64 > 900.0,
        "{what}: aggregate {:.1} Mb/s",
        mean * got.len() as f64
    );
    for (i, g) in got.iter().enumerate() {
        assert!(*g >= 0.5 * mean, "{what}: flow {i} got {g:.1} Mb/s, mean {mean:.1}");
    }
    assert!(jain >= 0.9, "{what}: Jain {jain:.3}");
}

#[test]
fn two_flows_drop_tail() {
    check(2, false);
}
#[test]
fn four_flows_drop_tail() {
    check(4, false);
}
#[test]
fn eight_flows_drop_tail() {
    check(8, false);
}
#[test]
fn sixteen_flows_drop_tail() {
    check(16, false);
}
#[test]
fn two_flows_red() {
    check(2, true);
}
#[test]
fn four_flows_red() {
    check(4, true);
}
/// Seed-sensitive (docs/sim/validation.md): over a one-second window RED's random drops
/// decide whether one of eight flows falls below half the mean. ns-3 3.37 on the same set-up
/// with PPP framing and its own TCP, window [1.2 s, 2.2 s), misses both bounds for seeds 1, 2
/// and 3 (worst flow 0.68x, 0.03x, 0.28x the mean; Jain 0.90, 0.76, 0.81).
#[test]
fn eight_flows_red() {
    check(8, true);
}
/// Open gap (docs/sim/validation.md): 16 flows through RED miss the declared bounds, in ns-3
/// too. Measured on the same set-up with PPP framing, window [2 s, 3 s): ns-3 3.37 gives the
/// worst flow 0.27x the mean and Jain 0.76; Tandem 0.28x and 0.87 (aggregate 922 Mb/s; 0.30x,
/// 0.87 and 918 Mb/s before each RED queue drew from a random stream of its own).
/// Kept, not loosened.
#[test]
#[ignore = "open gap: worst flow 0.28x the mean, Jain 0.87; ns-3 misses them too (0.27x, 0.76); see docs/sim/validation.md"]
fn sixteen_flows_red() {
    check(16, true);
}
