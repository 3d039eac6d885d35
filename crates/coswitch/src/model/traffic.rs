//! The paper's traffic analysis (§II, Figures 1 and 2) for any set of flows: the CDF of the
//! number of flows and of the number of packets against flow size (packets per flow), the mice's
//! share of the flows and of the packets, and the share of the packets carried by the largest
//! 10% of flows. `tandem analyze coswitch` runs it on a user's trace; `coswitch-traffic` on the
//! mix the CoSwitch experiments draw from ([`super::workload::TraceMix::paper`]).

use super::workload::{generate, Stream, TraceMix};
use crate::types::SEC;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use tandem_sim::experiment::{write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target};
use tandem_sim::plot::{Axis, Figure, Series};

/// Flows under this many packets are mice (the paper's Figure 1 threshold).
pub const MOUSE_PACKETS: u64 = 18;

/// Figures 1 and 2 of a set of flows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SizeProfile {
    /// Flows.
    pub flows: u64,
    /// Packets in all.
    pub packets: u64,
    /// Per distinct flow size (packets): the share of flows and the share of packets in flows of
    /// at most that size.
    pub cdf: Vec<(u64, f64, f64)>,
    /// Share of flows under [`MOUSE_PACKETS`].
    pub mice_flows: f64,
    /// Share of packets in those flows.
    pub mice_packets: f64,
    /// Share of packets in the largest 10% of flows.
    pub top10_packets: f64,
}

/// Profiles flows of the given sizes (packets each; empty flows are left out).
pub fn profile(sizes: impl IntoIterator<Item = u64>) -> SizeProfile {
    let mut by_size: BTreeMap<u64, u64> = BTreeMap::new();
    for s in sizes.into_iter().filter(|&s| s > 0) {
        *by_size.entry(s).or_default() += 1;
    }
    let flows: u64 = by_size.values().sum();
    let packets: u64 = by_size
        .iter()
        .map(|(s, n)| s.saturating_mul(*n))
        .fold(0, u64::saturating_add);
    if flows == 0 {
        return SizeProfile::default();
    }
    let (mut f, mut p) = (0u64, 0u64);
    let mut cdf = Vec::with_capacity(by_size.len());
    for (&s, &n) in &by_size {
        f += n;
        p = p.saturating_add(s.saturating_mul(n));
        cdf.push((s, f as f64 / flows as f64, p as f64 / packets as f64));
    }
    let mice: (u64, u64) = by_size
        .range(..MOUSE_PACKETS)
        .fold((0, 0), |(f, p), (s, n)| (f + n, p + s * n));
    // The largest 10% of flows (rounded up), from the top.
    let mut left = flows.div_ceil(10);
    let mut top = 0u64;
    for (&s, &n) in by_size.iter().rev() {
        if left == 0 {
            break;
        }
        let take = n.min(left);
        top = top.saturating_add(s.saturating_mul(take));
        left -= take;
    }
    SizeProfile {
        flows,
        packets,
        cdf,
        mice_flows: mice.0 as f64 / flows as f64,
        mice_packets: mice.1 as f64 / packets as f64,
        top10_packets: top as f64 / packets as f64,
    }
}

impl SizeProfile {
    /// The CDFs as CSV: `packets_per_flow,flow_share,packet_share`.
    pub fn csv(&self) -> String {
        let mut s = String::from("packets_per_flow,flow_share,packet_share\n");
        for (size, f, p) in &self.cdf {
            let _ = writeln!(s, "{size},{f:.6},{p:.6}");
        }
        s
    }

    /// Figure 1: both CDFs against flow size (log x).
    pub fn figure(&self, title: &str) -> Figure {
        let flows: Vec<(f64, f64)> = self.cdf.iter().map(|&(s, f, _)| (s as f64, f)).collect();
        let packets: Vec<(f64, f64)> = self.cdf.iter().map(|&(s, _, p)| (s as f64, p)).collect();
        Figure::new(title, Axis::new("flow size (packets)").log().integer(), "CDF")
            .series(Series::new("number of flows", flows).staircase(0.0))
            .series(Series::new("number of packets", packets).staircase(0.0))
    }

    /// One line for people: the Figure 2 shares.
    pub fn summary(&self) -> String {
        format!(
            "{} flows, {} packets; mice (< {MOUSE_PACKETS} packets): {:.1}% of flows, {:.1}% of packets; largest 10% of flows: {:.1}% of packets",
            self.flows,
            self.packets,
            self.mice_flows * 100.0,
            self.mice_packets * 100.0,
            self.top10_packets * 100.0
        )
    }
}

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "coswitch-traffic",
    about: "CoSwitch Figs. 1, 2: flow and packet CDFs against flow size, mice and elephants' shares (the experiments' trace mix)",
    run,
};

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    // Flows drawn from the mix, as the other CoSwitch experiments draw them (100,000 flows;
    // --quick: 10,000).
    let flows_wanted: f64 = if ctx.quick { 10_000.0 } else { 100_000.0 };
    let mix = TraceMix::paper();
    let per_sec = 1_000.0;
    let secs = (flows_wanted / per_sec).ceil() as u64;
    let stream = Stream {
        mix,
        flows_per_sec: per_sec,
        from: 0,
        to: secs * SEC,
    };
    (ctx.status)(&format!("{flows_wanted} flows of the trace mix"));
    let flows = generate(&stream, 1, 7);
    let p = profile(flows.iter().map(|f| u64::from(f.packets)));
    let mut rep = Report {
        title: "CoSwitch: mice and elephants in the trace mix (Figures 1 and 2)".into(),
        reference: "Zhang et al., CoSwitch, §II, Figures 1 and 2 (IBM production data-center NetFlow trace, \
                    private): mice (< 18 packets) over 80% of flows and under 15% of packets; the largest 10% \
                    of flows over 75% of packets"
            .into(),
        ..Report::default()
    };
    let setting = format!("trace mix, {} flows", p.flows);
    for (metric, reference, v, target) in [
        ("mice share of flows", 0.80, p.mice_flows, Target::AtLeast(0.80)),
        ("mice share of packets", 0.15, p.mice_packets, Target::AtMost(0.15)),
        (
            "largest 10% of flows, share of packets",
            0.75,
            p.top10_packets,
            Target::AtLeast(0.75),
        ),
    ] {
        rep.rows
            .push(Row::new(Kind::Input, &setting, metric, Some(reference), v, target));
    }
    rep.rows.push(Row::new(
        Kind::Identity,
        &setting,
        "mean packets per flow (the mix's exact mean: 12.90)",
        Some(mix.stats().mean_packets),
        p.packets as f64 / p.flows.max(1) as f64,
        Target::None,
    ));
    write(ctx, "traffic.csv", &p.csv())?;
    p.figure("CoSwitch trace mix: CDF of flows and packets against flow size")
        .save(&ctx.path("traffic.png"))?;
    rep.files = vec!["traffic.csv".into(), "traffic.png".into(), "traffic.svg".into()];
    rep.notes.push(
        "The paper's trace cannot be had; the mix is built to the statistics above (docs/systems/coswitch.md, \
         'The workload'), so every row is an input and none is evidence. Run `tandem analyze coswitch TRACE` \
         for the same figures on your own trace."
            .into(),
    );
    rep.notes.push(p.summary());
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_cdfs_by_hand() {
        // Nine 1-packet flows and one 91-packet flow: 100 packets.
        let p = profile(std::iter::repeat_n(1, 9).chain([91, 0]));
        assert_eq!((p.flows, p.packets), (10, 100));
        assert_eq!(p.mice_flows, 0.9);
        assert_eq!(p.mice_packets, 0.09);
        assert_eq!(p.top10_packets, 0.91, "the largest 10% is the one big flow");
        assert_eq!(p.cdf, vec![(1, 0.9, 0.09), (91, 1.0, 1.0)]);
        assert!(p
            .csv()
            .starts_with("packets_per_flow,flow_share,packet_share\n1,0.900000,0.090000\n"));
        assert_eq!(profile(std::iter::empty()), SizeProfile::default());
    }
}
