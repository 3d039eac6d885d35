//! `axon-bandwidth` (thesis Table 4.1): three devices and six hosts in a line and in a ring, the
//! six flows of Figures 4.2/4.3 (1->2, 2->3, 3->1, 4->6, 6->5, 5->4), every flow trying to
//! send 1 Gb/s of UDP (1,514-byte frames) or one bulk TCP connection; application goodput per
//! flow and in aggregate. With Axons, each route is a shortest path (in the ring every flow
//! gets a link direction of its own); with spanning-tree Ethernet switches the ring is a line
//! again (the tree from switch A blocks B-C).

use super::common::{three_by_two, SWITCH_LATENCY_PS, TABLE_4_1_FLOWS};
use super::kernel::run as simulate;
use super::net::{App, Flow, NetParams, Outcome};
use super::topology::NodeKind;
use tandem_sim::experiment::{
    par_map, threads, write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target,
};
use tandem_sim::plot::{Axis, Figure, Series};
use tandem_sim::time::MS;

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "axon-bandwidth",
    about: "Axon thesis Table 4.1: six flows on three Axons, line vs ring, UDP and TCP (and STP switches)",
    run,
};

/// Thesis Table 4.1, Mb/s per flow: UDP line, UDP ring, TCP line, TCP ring.
pub const THESIS: [[f64; 4]; 6] = [
    [481.0, 952.0, 566.0, 752.0],
    [483.0, 952.0, 598.0, 792.0],
    [476.0, 930.0, 243.0, 815.0],
    [481.0, 952.0, 244.0, 524.0],
    [476.0, 952.0, 397.0, 493.0],
    [509.0, 952.0, 377.0, 575.0],
];

/// One setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// Axons or switches.
    pub kind: NodeKind,
    /// Ring (else line).
    pub ring: bool,
    /// TCP (else UDP).
    pub tcp: bool,
}

impl Case {
    /// Name in CSVs.
    pub fn name(&self) -> String {
        format!(
            "{} {} {}",
            if self.kind == NodeKind::Axon { "axon" } else { "switch" },
            if self.ring { "ring" } else { "line" },
            if self.tcp { "tcp" } else { "udp" }
        )
    }
}

/// Runs one setting for `duration_ps` (goodput measured after the first fifth) on the
/// simulator's kernel ([`super::kernel`]): the Axons are the `axon` kind, real node and control
/// plane; the switches the kernel's store-and-forward switches on the spanning tree.
pub fn run_case(c: Case, duration_ps: u64) -> Result<Outcome, ExperimentError> {
    let (topo, h) = three_by_two(c.kind, c.ring);
    let app = if c.tcp {
        App::TcpBulk
    } else {
        App::Udp {
            frame_len: 1514,
            rate_bps: None,
        }
    };
    let flows: Vec<Flow> = TABLE_4_1_FLOWS
        .iter()
        .map(|&(s, d)| Flow {
            src: h[s - 1],
            dst: h[d - 1],
            app,
        })
        .collect();
    let p = NetParams::gbe(SWITCH_LATENCY_PS);
    simulate(&topo, &p, &flows, duration_ps, duration_ps / 5).map_err(ExperimentError)
}

/// Aggregate goodput of an outcome, Mb/s.
pub fn aggregate(o: &Outcome) -> f64 {
    o.flows.iter().map(|f| f.mbps).sum()
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let dur = if ctx.quick { 30 * MS } else { 2000 * MS };
    let mut cases = Vec::new();
    for kind in [NodeKind::Axon, NodeKind::Switch] {
        for tcp in [false, true] {
            for ring in [false, true] {
                cases.push(Case { kind, ring, tcp });
            }
        }
    }
    (ctx.status)(&format!("axon-bandwidth: {} runs", cases.len()));
    let res = par_map(&cases, threads(), |&c| run_case(c, dur))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let mut csv = String::from("case,flow,mbps\n");
    for (c, o) in cases.iter().zip(&res) {
        for (i, f) in o.flows.iter().enumerate() {
            let (s, d) = TABLE_4_1_FLOWS[i];
            csv.push_str(&format!("{},{s}->{d},{:.1}\n", c.name(), f.mbps));
        }
        csv.push_str(&format!("{},aggregate,{:.1}\n", c.name(), aggregate(o)));
    }
    write(ctx, "bandwidth.csv", &csv)?;
    let mut counters = String::from("case,axon_drops,pauses,switch_drops,tcp_retransmits,events\n");
    for (c, o) in cases.iter().zip(&res) {
        counters.push_str(&format!(
            "{},{},{},{},{},{}\n",
            c.name(),
            o.axon_drops,
            o.pauses,
            o.switch_drops,
            o.retransmits,
            o.events
        ));
    }
    write(ctx, "counters.csv", &counters)?;
    let series: Vec<(String, Vec<(f64, f64)>)> = cases
        .iter()
        .zip(&res)
        .map(|(c, o)| {
            (
                c.name(),
                o.flows
                    .iter()
                    .enumerate()
                    .map(|(i, f)| ((i + 1) as f64, f.mbps))
                    .collect(),
            )
        })
        .collect();
    Figure::new(
        "Per-flow goodput, Table 4.1 flows (1 GbE)",
        Axis::new("flow (1->2, 2->3, 3->1, 4->6, 6->5, 5->4)").integer(),
        "goodput (Mb/s)",
    )
    // Flows are categories, not a continuum: markers only, no line between them.
    .with(series.into_iter().map(|(n, p)| Series::new(n, p).points()))
    .save(&ctx.path("bandwidth.png"))?;
    let agg = |kind, tcp, ring| {
        cases
            .iter()
            .position(|c| *c == Case { kind, ring, tcp })
            .map_or(0.0, |i| aggregate(&res[i]))
    };
    let mut rows = Vec::new();
    for (tcp, col, name) in [(false, 0, "UDP"), (true, 2, "TCP")] {
        let thesis_line: f64 = THESIS.iter().map(|r| r[col]).sum();
        let thesis_ring: f64 = THESIS.iter().map(|r| r[col + 1]).sum();
        let (l, r) = (agg(NodeKind::Axon, tcp, false), agg(NodeKind::Axon, tcp, true));
        // UDP is an identity: every flow sends as fast as its NIC, the round robin over input
        // buffers halves a link direction between the two flows that share it in the line, and
        // a flow has one to itself in the ring, so each gets line-rate goodput (952.8 Mb/s for
        // 1,472 B of 1,538 on the wire) / 2 or / 1. TCP is a prediction.
        let kind = if tcp { Kind::Prediction } else { Kind::Identity };
        // The thesis gives single values (Table 4.1; "a 63% improvement in TCP's bandwidth")
        // without a spread; we judge them within 10%, the tolerance the other experiments use for
        // such values. (Was 15%, a bound just past the TCP ratio's measured +14.5%.)
        rows.push(Row::new(
            kind,
            &format!("Axon line, {name}"),
            "aggregate (Mb/s)",
            Some(thesis_line),
            l,
            Target::Relative(0.1),
        ));
        rows.push(Row::new(
            kind,
            &format!("Axon ring, {name}"),
            "aggregate (Mb/s)",
            Some(thesis_ring),
            r,
            Target::Relative(0.1),
        ));
        rows.push(Row::new(
            kind,
            &format!("Axon ring / line, {name}"),
            "ratio",
            Some(thesis_ring / thesis_line),
            if l > 0.0 { r / l } else { 0.0 },
            Target::Relative(0.1),
        ));
        let (sl, sr) = (agg(NodeKind::Switch, tcp, false), agg(NodeKind::Switch, tcp, true));
        rows.push(Row::new(
            Kind::Prediction,
            &format!("STP switches line, {name}"),
            "aggregate (Mb/s)",
            Some(thesis_line),
            sl,
            Target::None,
        ));
        rows.push(Row::new(
            Kind::Prediction,
            &format!("STP switches ring, {name}"),
            "aggregate (Mb/s)",
            Some(thesis_line),
            sr,
            Target::None,
        ));
    }
    for (i, (s, d)) in TABLE_4_1_FLOWS.iter().enumerate() {
        for (col, (tcp, ring)) in [(false, false), (false, true), (true, false), (true, true)]
            .iter()
            .enumerate()
        {
            let k = cases
                .iter()
                .position(|c| {
                    *c == Case {
                        kind: NodeKind::Axon,
                        ring: *ring,
                        tcp: *tcp,
                    }
                })
                .unwrap_or(0);
            rows.push(Row::new(
                if *tcp { Kind::Prediction } else { Kind::Identity },
                &format!(
                    "Axon {} {}, host {s} -> {d}",
                    if *ring { "ring" } else { "line" },
                    if *tcp { "TCP" } else { "UDP" }
                ),
                "goodput (Mb/s)",
                Some(THESIS[i][col]),
                res[k].flows[i].mbps,
                Target::None,
            ));
        }
    }
    Ok(Report {
        title: "Axon bandwidth: line vs ring (Table 4.1)".into(),
        reference: "M. Foss, The Axon Ethernet Device (MS thesis, Rice, 2010), Table 4.1".into(),
        rows,
        notes: vec![
            format!(
                "{} s per run, goodput measured over the last 80%; 1 GbE, 5 ns links; Axon buffers 32 KiB per input \
                 port; switch queues 128 KiB per port; UDP 1,514-byte frames (1,472 B of payload) as fast as the NIC \
                 sends; TCP NewReno with SACK, 1,448-byte MSS, 10 ms minimum RTO.",
                dur as f64 / 1e12
            ),
            "Hosts 1 and 4 sit on device A, 2 and 5 on B, 3 and 6 on C (the placement that matches the thesis's \
             numbers: in the line every link direction carries two flows, in the ring one)."
                .into(),
            "Spanning-tree switches: the ring after STP is the line B-A-C (root A), again two flows per link \
             direction, so the extra link buys nothing."
                .into(),
            "Run on the simulator's kernel: the Axons are the scenario kind `axon` (the real node; routes set up by \
             the hosts' ARP and Axon-ARP, with Table 4.3's delays, inside the warm-up; PAUSE against \
             self-congestion); the switches are the kernel's store-and-forward switches on the spanning tree's \
             links, the switch latency as pipeline latency, 128 KiB byte-limited queues."
                .into(),
            "TCP: the thesis's TCP numbers are uneven across flows and below line rate even in the ring (ACKs \
             sharing links with data, netperf and host limits); the model's hosts are ideal, so its TCP is closer \
             to its UDP."
                .into(),
        ],
        files: vec![
            "bandwidth.csv".into(),
            "counters.csv".into(),
            "bandwidth.png".into(),
            "bandwidth.svg".into(),
        ],
    })
}
