//! `axon-latency` (thesis Figures 4.4 and 4.5): one-way latency through 1 to 5 devices for
//! minimum-sized (64 B with FCS) and maximum-sized (1,514 B without FCS) frames, 1 GbE: Axons
//! cut-through, the same Axons in store-and-forward mode, and store-and-forward Ethernet
//! switches. A host sends UDP frames at 100 Mb/s (no queueing); latency is the first byte out
//! of the sender's NIC to the first byte in at the receiver.

use super::common::{chain, SWITCH_LATENCY_PS};
use super::kernel::run as simulate;
use super::net::{App, Flow, NetParams};
use super::topology::NodeKind;
use crate::timing::ForwardingMode;
use tandem_sim::experiment::{
    par_map, threads, write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target,
};
use tandem_sim::plot::{Axis, Figure};
use tandem_sim::time::MS;

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "axon-latency",
    about: "Axon thesis Fig. 4.4/4.5: latency through 1-5 Axons (cut-through) vs store-and-forward switches",
    run,
};

/// Frame lengths without FCS: 64 B and 1,514 B on the wire as the thesis counts them.
pub const SIZES: [usize; 2] = [60, 1514];

/// What forwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forwarder {
    /// Axons, cut-through (the Axon).
    AxonCutThrough,
    /// The same Axons in store-and-forward mode (the prototype's mode register).
    AxonStoreForward,
    /// Store-and-forward Ethernet learning switches.
    Switch,
}

impl Forwarder {
    /// Name in CSVs and plots.
    pub fn name(self) -> &'static str {
        match self {
            Forwarder::AxonCutThrough => "axon-cut-through",
            Forwarder::AxonStoreForward => "axon-store-and-forward",
            Forwarder::Switch => "ethernet-switch",
        }
    }
}

/// The thesis's name for a frame length: 64 B counts the FCS, 1,514 B does not.
pub fn size_label(frame_len: usize) -> usize {
    if frame_len < 64 {
        frame_len + 4
    } else {
        frame_len
    }
}

/// What a run leaves out of the mean: the routes' setup (the hosts' ARP, Axon-ARP with Table
/// 4.3's delays, about 0.8 ms) and the frames that waited for it.
pub const WARMUP: u64 = 5 * MS;

/// One point: mean one-way latency in microseconds through `hops` devices, on the simulator's
/// kernel ([`super::kernel`]), frames sent over `duration_ps` (the first [`WARMUP`] not counted).
pub fn measure(fwd: Forwarder, hops: usize, frame_len: usize, duration_ps: u64) -> Result<f64, ExperimentError> {
    let kind = if fwd == Forwarder::Switch {
        NodeKind::Switch
    } else {
        NodeKind::Axon
    };
    let (topo, a, b) = chain(kind, hops);
    let mut p = NetParams::gbe(SWITCH_LATENCY_PS);
    if fwd == Forwarder::AxonStoreForward {
        p.axon_mode = ForwardingMode::StoreAndForward;
    }
    let flows = [Flow {
        src: a,
        dst: b,
        app: App::Udp {
            frame_len,
            rate_bps: Some(100_000_000),
        },
    }];
    let out = simulate(&topo, &p, &flows, duration_ps, WARMUP).map_err(ExperimentError)?;
    let f = &out.flows[0];
    if f.bytes == 0 {
        return Err(ExperimentError(format!(
            "{} {hops} hops {frame_len} B: nothing arrived",
            fwd.name()
        )));
    }
    Ok(f.latency_mean_ps / 1e6)
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let dur = WARMUP + if ctx.quick { MS } else { 20 * MS };
    let fwds = [
        Forwarder::AxonCutThrough,
        Forwarder::AxonStoreForward,
        Forwarder::Switch,
    ];
    let mut pts = Vec::new();
    for f in fwds {
        for s in SIZES {
            for h in 1..=5 {
                pts.push((f, s, h));
            }
        }
    }
    (ctx.status)(&format!("axon-latency: {} runs", pts.len()));
    let res = par_map(&pts, threads(), |&(f, s, h)| measure(f, h, s, dur))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let get = |f: Forwarder, s: usize, h: usize| pts.iter().position(|&p| p == (f, s, h)).map_or(0.0, |i| res[i]);
    let mut csv = String::from("forwarder,frame_bytes,devices,latency_us,per_device_us\n");
    for (i, &(f, s, h)) in pts.iter().enumerate() {
        csv.push_str(&format!(
            "{},{},{h},{:.4},{:.4}\n",
            f.name(),
            size_label(s),
            res[i],
            res[i] / h as f64
        ));
    }
    write(ctx, "latency.csv", &csv)?;
    let mut series = Vec::new();
    for f in fwds {
        for s in SIZES {
            series.push((
                format!("{} {} B", f.name(), size_label(s)),
                (1..=5).map(|h| (h as f64, get(f, s, h))).collect(),
            ));
        }
    }
    Figure::new(
        "One-way latency through N devices (1 GbE)",
        Axis::new("devices").integer(),
        "latency (us)",
    )
    .with(series)
    .save(&ctx.path("latency.png"))?;
    let mut rows = Vec::new();
    for (s, name) in [(60usize, "64 B"), (1514, "1,514 B")] {
        let one = get(Forwarder::AxonCutThrough, s, 1);
        let five = get(Forwarder::AxonCutThrough, s, 5);
        // Predictions: the model's Axon is Table 4.2's pipeline (768 ns at the first Axon, 520
        // ns at each further one), and these rows ask whether that pipeline accounts for what the
        // thesis measured with probe packets (Figure 4.4: "approximately 1 us" for one Axon,
        // "4.5 us for 5 Axon hops"). The thesis gives single values read off its figure without
        // a spread; we judge them within 10%, the tolerance the other experiments use for such
        // values. (Was <= 1.5 us and within 50%, bounds past our 0.78 us and -36%.)
        rows.push(Row::new(
            Kind::Prediction,
            &format!("Axon, 1 device, {name}"),
            "latency (us)",
            Some(1.0),
            one,
            Target::Relative(0.1),
        ));
        rows.push(Row::new(
            Kind::Prediction,
            &format!("Axon, 5 devices, {name}"),
            "latency (us)",
            Some(4.5),
            five,
            Target::Relative(0.1),
        ));
        // The 5-device number over 5: its verdict is the row above's, not given twice.
        rows.push(Row::new(
            Kind::Prediction,
            &format!("Axon, {name}"),
            "per-device latency over 5 (us)",
            Some(0.9),
            five / 5.0,
            Target::None,
        ));
    }
    // Input: the switch's fixed delay (6.483 us) is calibrated so that this row is 7 us.
    rows.push(Row::new(
        Kind::Input,
        "switch, 1 device, 64 B (calibrated)",
        "latency (us)",
        Some(7.0),
        get(Forwarder::Switch, 60, 1),
        Target::Relative(0.05),
    ));
    rows.push(Row::new(
        Kind::Prediction,
        "switch, 1 device, 1,514 B",
        "latency (us)",
        Some(28.0),
        get(Forwarder::Switch, 1514, 1),
        Target::Relative(0.25),
    ));
    rows.push(Row::new(
        Kind::Prediction,
        "switch, 5 devices, 1,514 B",
        "latency (us)",
        Some(137.0),
        get(Forwarder::Switch, 1514, 5),
        Target::Relative(0.25),
    ));
    // Identity: Table 4.2's pipeline plus one reception of the frame at each device.
    rows.push(Row::new(
        Kind::Identity,
        "Axon store-and-forward, 5 devices, 1,514 B",
        "latency (us)",
        None,
        get(Forwarder::AxonStoreForward, 1514, 5),
        Target::None,
    ));
    Ok(Report {
        title: "Axon latency: cut-through Axons vs store-and-forward switches".into(),
        reference: "M. Foss, The Axon Ethernet Device (MS thesis, Rice, 2010), Figures 4.4/4.5, §4.4.3".into(),
        rows,
        notes: vec![
            "1 GbE, 5 ns links; Axon latencies from Table 4.2 (768 ns from a host port, 520 ns between Axons); \
             UDP at 100 Mb/s, no queueing; latency = first byte out of the sender's NIC to first byte in at the receiver."
                .into(),
            "Run on the simulator's kernel: the Axons are the scenario kind `axon` (the real node; routes set up by \
             ARP and Axon-ARP in the first 5 ms, which the mean leaves out), the switches the kernel's \
             store-and-forward switches; the mean is over every frame received after the first 5 ms."
                .into(),
            format!(
                "The switch's processing latency ({:.3} us after the last byte) is calibrated to the thesis's 7 us \
                 for a 64 B frame; the 1,514 B numbers are predictions (reception 12.1 us + the same processing).",
                SWITCH_LATENCY_PS as f64 / 1e6
            ),
            "The thesis's ~0.9-1 us per Axon includes PHY and measurement delays that Table 4.2 leaves out; the \
             model has only Table 4.2's pipeline, so it is lower. Its switch numbers for 1,514 B (28 us, 137 us over \
             5) exceed one reception plus a fixed delay: that switch spent size-dependent time beyond storing the \
             frame once."
                .into(),
        ],
        files: vec!["latency.csv".into(), "latency.png".into(), "latency.svg".into()],
    })
}
