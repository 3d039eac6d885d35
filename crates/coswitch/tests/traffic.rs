//! The `coswitch-traffic` analysis on the experiments' trace mix: the paper's Figure 2 shares
//! (mice over 80% of flows and under 15% of packets, the largest 10% of flows over 75% of the
//! packets) hold for the flows the CoSwitch experiments draw.

use tandem_coswitch::model::traffic::profile;
use tandem_coswitch::model::workload::{generate, Stream, TraceMix};
use tandem_coswitch::types::SEC;

#[test]
fn the_mix_has_the_papers_mice_and_elephants() {
    let stream = Stream {
        mix: TraceMix::paper(),
        flows_per_sec: 1_000.0,
        from: 0,
        to: 10 * SEC,
    };
    let p = profile(generate(&stream, 1, 7).iter().map(|f| u64::from(f.packets)));
    eprintln!("{}", p.summary());
    assert!(p.flows > 9_000);
    assert!(
        p.mice_flows > 0.80 && p.mice_packets < 0.15 && p.top10_packets > 0.75,
        "{p:?}"
    );
}
