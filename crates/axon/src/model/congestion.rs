//! `axon-congestion` (thesis Figures 4.6-4.8): netperf TCP_RR between host S on Axon A and host
//! T on Axon B, three Axons in a line (A - M - B), while host X (on A) and host Y (on B) send
//! UDP to each other at a rising rate, so that the request competes with X's traffic at A's
//! output and the response with Y's at B's. The same devices run cut-through or
//! store-and-forward (the prototype's mode register). Requests, responses and cross traffic use
//! the same frame size: small (a 1-byte request, a 67-byte frame: the smallest TCP segment with
//! the timestamps option) or large (1,514-byte frames).

use super::common::SWITCH_LATENCY_PS;
use super::kernel::run as simulate;
use super::net::{App, Flow, NetParams};
use super::topology::{NodeKind, Topology};
use crate::timing::ForwardingMode;
use tandem_sim::experiment::{
    par_map, threads, write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target,
};
use tandem_sim::plot::{self, Axis, Figure};
use tandem_sim::time::{tx_time, MS};

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "axon-congestion",
    about: "Axon thesis Fig. 4.7/4.8: TCP_RR round trip under UDP cross traffic, cut-through vs store-and-forward",
    run,
};

/// (name, TCP payload per request/response, UDP frame length).
pub const SIZES: [(&str, u64, usize); 2] = [("64 B", 1, 67), ("1,514 B", 1448, 1514)];

/// One point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Forwarding mode.
    pub mode: ForwardingMode,
    /// Index into [`SIZES`].
    pub size: usize,
    /// Cross traffic per direction, Mb/s of line occupancy.
    pub load_mbps: u64,
}

/// Mean TCP_RR round trip in microseconds at one point.
pub fn measure(pt: Point, duration_ps: u64) -> Result<f64, ExperimentError> {
    let mut t = Topology::new();
    let a = t.add(NodeKind::Axon);
    let m = t.add(NodeKind::Axon);
    let b = t.add(NodeKind::Axon);
    let s = t.add(NodeKind::Host);
    let x = t.add(NodeKind::Host);
    let tt = t.add(NodeKind::Host);
    let y = t.add(NodeKind::Host);
    t.link(s, a);
    t.link(x, a);
    t.link(tt, b);
    t.link(y, b);
    t.link(a, m);
    t.link(m, b);
    let (_, payload, frame_len) = SIZES[pt.size];
    let rate = (pt.load_mbps > 0).then_some(pt.load_mbps * 1_000_000);
    let udp = App::Udp {
        frame_len,
        rate_bps: rate,
    };
    let mut flows = vec![Flow {
        src: s,
        dst: tt,
        app: App::TcpRr {
            request: payload,
            response: payload,
        },
    }];
    if rate.is_some() {
        flows.push(Flow {
            src: x,
            dst: y,
            app: udp,
        });
        flows.push(Flow {
            src: y,
            dst: x,
            app: udp,
        });
    }
    let mut p = NetParams::gbe(SWITCH_LATENCY_PS);
    p.axon_mode = pt.mode;
    let o = simulate(&t, &p, &flows, duration_ps, duration_ps / 5).map_err(ExperimentError)?;
    if o.flows[0].rtt_mean_ps <= 0.0 {
        return Err(ExperimentError(format!("{pt:?}: no round trip completed")));
    }
    Ok(o.flows[0].rtt_mean_ps / 1e6)
}

fn mode_name(m: ForwardingMode) -> &'static str {
    match m {
        ForwardingMode::CutThrough => "cut-through",
        ForwardingMode::StoreAndForward => "store-and-forward",
    }
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let loads: &[u64] = if ctx.quick {
        &[0, 500, 900]
    } else {
        &[0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 950]
    };
    let dur = if ctx.quick { 10 * MS } else { 200 * MS };
    let modes = [ForwardingMode::CutThrough, ForwardingMode::StoreAndForward];
    let mut pts = Vec::new();
    for size in 0..SIZES.len() {
        for mode in modes {
            for &load_mbps in loads {
                pts.push(Point { mode, size, load_mbps });
            }
        }
    }
    (ctx.status)(&format!("axon-congestion: {} runs", pts.len()));
    let res = par_map(&pts, threads(), |&p| measure(p, dur))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let get = |mode, size, load| {
        pts.iter()
            .position(|p| {
                *p == Point {
                    mode,
                    size,
                    load_mbps: load,
                }
            })
            .map_or(0.0, |i| res[i])
    };
    let mut csv = String::from("size,mode,load_mbps,rtt_us\n");
    for (p, r) in pts.iter().zip(&res) {
        csv.push_str(&format!(
            "{},{},{},{r:.3}\n",
            SIZES[p.size].0,
            mode_name(p.mode),
            p.load_mbps
        ));
    }
    write(ctx, "congestion.csv", &csv)?;
    let mut rows = Vec::new();
    let mut files = vec!["congestion.csv".to_string()];
    let top = loads.last().copied().unwrap_or(0);
    for (i, (name, _, _)) in SIZES.iter().enumerate() {
        let series: Vec<(String, Vec<(f64, f64)>)> = modes
            .iter()
            .map(|&m| {
                (
                    mode_name(m).to_string(),
                    loads.iter().map(|&l| (l as f64, get(m, i, l))).collect(),
                )
            })
            .collect();
        let stem = format!("congestion_{}", if i == 0 { "small" } else { "large" });
        Figure::new(
            format!("TCP_RR round trip, {name} packets"),
            "UDP cross traffic per direction (Mb/s)",
            Axis::new("mean RTT (us)").auto(),
        )
        .with(series)
        .save(&ctx.path(&stem))?;
        files.extend(plot::files(&stem));
        for load in [0, top] {
            let ct = get(ForwardingMode::CutThrough, i, load);
            let sf = get(ForwardingMode::StoreAndForward, i, load);
            // Without cross traffic the RTTs and the saving are Table 4.2's pipeline and wire
            // times added up (identities); with it, queueing decides (predictions).
            let kind = if load == 0 { Kind::Identity } else { Kind::Prediction };
            rows.push(Row::new(
                kind,
                &format!("{name}, {load} Mb/s cross traffic, cut-through"),
                "mean RTT (us)",
                None,
                ct,
                Target::None,
            ));
            rows.push(Row::new(
                kind,
                &format!("{name}, {load} Mb/s cross traffic, store-and-forward"),
                "mean RTT (us)",
                None,
                sf,
                Target::None,
            ));
            // Thesis: for 64 B the benefit of cut-through is inconsequential, for 1,514 B
            // significant. What store-and-forward should add: one reception of the request and
            // one of the response at each of the three Axons, a reception on the kernel's link
            // being the frame, FCS, preamble and gap (24 bytes besides the frame).
            let expected = 6.0 * tx_time(SIZES[i].2 as u64 + 24, 1_000_000_000) as f64 / 1e6;
            rows.push(Row::new(
                kind,
                &format!("{name}, {load} Mb/s cross traffic"),
                "RTT saved by cut-through (us; reference: 6 receptions)",
                Some(expected),
                sf - ct,
                Target::Relative(0.25),
            ));
        }
    }
    Ok(Report {
        title: "Axon cut-through vs store-and-forward under congestion (Figures 4.7/4.8)".into(),
        reference: "M. Foss, The Axon Ethernet Device (MS thesis, Rice, 2010), Figures 4.6-4.8, §4.4.3 (qualitative: \
                    the figures' values are not in the text)"
            .into(),
        rows,
        notes: vec![
            format!(
                "{} s per point, RTTs after the first fifth; cross traffic at a mean rate in each direction (gaps jittered uniformly by +-50%), \
                 counted as line occupancy (frame, FCS, preamble, gap); 1 GbE, 5 ns links; Axon buffers 32 KiB per \
                 input, served round robin.",
                dur as f64 / 1e12
            ),
            "The thesis gives no numbers for these figures, only that cut-through's benefit is inconsequential \
             for 64 B packets and significant for 1,514 B: the reference is what store-and-forward must add, one \
             reception of request and response per Axon (6 x 0.57 us for 67-byte frames, 6 x 12.1 us for 1,514)."
                .into(),
            "With 1,514 B frames the request/response stream is itself heavy (one full frame each way per round \
             trip of 28-37 us, 330-440 Mb/s per direction), so from about 700 Mb/s of cross traffic A's link to \
             M is full: the Axon's round robin keeps serving the request every other frame, the UDP source's \
             buffer overflows (dropped, counted), and the RTT stops growing."
                .into(),
            "Hosts answer instantly: the model has no host stack delay, which dominated the thesis's netperf \
             round trips (Figure 4.5), so absolute RTTs are far lower; the comparison between modes is the point."
                .into(),
        ],
        files,
    })
}
