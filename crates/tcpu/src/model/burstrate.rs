//! `tcpu-burst-rate`: the analysis behind the paper's Figure 4 (§3.2.1), measured.
//!
//! The paper sizes TCPU's internal links by the fastest a TCP burst can arrive for one output
//! port of speed C: the port sends data at C, so ACKs return at C / MSS; in slow start each ACK
//! lets the sender put one more segment out besides the one it replaces, so data arrives at up to
//! 2C ("delayed ACK disabled"). We measure the rate at which data arrives for the port to the
//! receiver, in slow start, on the simulator's TCP, and compare it with 2C.
//!
//! Set-up (ours, the paper draws the picture only): the TCPU testbed's switch without the TCPU
//! model (the question is what arrives, before any redirection), C = 1 Gb/s to the receiver `h0`,
//! 25 us links; the port's queue has no limit, so nothing is lost and slow start goes on until
//! the flows end. Two sender set-ups: one sender on a 10 Gb/s link (what it sends is clocked
//! only by the ACKs) and 15 senders on 1 Gb/s links (the paper's 16-port testbed) that start
//! together; each with delayed ACKs off and on (every second segment, 40 ms timeout).
//!
//! Measured: every `WINDOW` the port's arrivals, from its queue and its transmissions
//! (arrived = queued now - queued before + sent meanwhile; nothing is dropped), in wire bytes
//! (frame + 24 B of preamble, FCS and gap, the bytes C is counted in), as a multiple of C. The
//! slow-start rate is the median over the windows in which the queue grew (the port busy and
//! data coming faster than it leaves); the peak is the largest window.
//!
//! With delayed ACKs each ACK covers two segments; our TCP (as Linux and ns-3) counts bytes in
//! slow start with L = 2 segments per ACK (RFC 3465), so each ACK releases two segments and adds
//! two: 4 segments per ACK at C / (2 MSS) ACKs per second, again 2C. (Without byte counting,
//! one segment per ACK, it would be 1.5C.) That reference is our derivation, not the paper's.

use super::common::{self, write};
use tandem_sim::config::{BufferConfig, Ecmp, Forwarding, LinkConfig, QueueConfig, SwitchConfig, TcpConfig};
use tandem_sim::config::{DelayedAck, Marking};
use tandem_sim::experiment::{Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target};
use tandem_sim::packet::FlowId;
use tandem_sim::plot::{Axis, Dash, Figure, Series};
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::time::{as_secs, Time, MS};
use tandem_sim::topology::Topology;
use tandem_sim::workload::{FlowKind, FlowSpec};

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "tcpu-burst-rate",
    about: "TCPU §3.2.1 / Fig. 4: a TCP slow-start burst arrives for one port at up to 2C (delayed ACK off and on)",
    run,
};

/// Port speed C to the receiver.
pub const C_BPS: u64 = common::PORT_BPS;
/// Measurement window (1 ms: about 82 full-sized frames at C).
pub const WINDOW: Time = MS;
/// Framing bytes per frame on the wire (preamble, FCS, inter-frame gap).
const FRAMING: u64 = 24;
/// Declared before the runs: a window holds about 82 frames at 2C/2 per direction, so one
/// frame more or less is 1.2%; the windows at the start and end of the growth are partial. 5%.
pub const TOLERANCE: f64 = 0.05;

/// Who sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Senders {
    /// One sender on a 10 Gb/s link.
    OneFast,
    /// 15 senders on 1 Gb/s links, starting together.
    Many,
}

impl Senders {
    fn name(self) -> &'static str {
        match self {
            Senders::OneFast => "1 sender at 10 Gb/s",
            Senders::Many => "15 senders at 1 Gb/s",
        }
    }
    fn count(self) -> u32 {
        match self {
            Senders::OneFast => 1,
            Senders::Many => 15,
        }
    }
}

/// One run's measurement.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Who sent.
    pub senders: Senders,
    /// Delayed ACKs on.
    pub delayed_ack: bool,
    /// Per window: (end time, arrival rate / C, queue bytes at the end).
    pub windows: Vec<(Time, f64, u64)>,
    /// Median arrival rate / C over the windows in which the queue grew.
    pub slow_start: f64,
    /// Largest window's arrival rate / C.
    pub peak: f64,
    /// Windows in which the queue grew.
    pub growth_windows: usize,
    /// Packets dropped anywhere (must be 0).
    pub drops: u64,
}

/// Runs one set-up for `bytes` in all (split over the senders) until `until`.
pub fn measure(senders: Senders, delayed_ack: bool, bytes: u64, until: Time) -> Result<Outcome, ExperimentError> {
    let n = senders.count();
    let link = |rate_bps| LinkConfig {
        rate_bps,
        delay: common::LINK_DELAY,
        framing_overhead: FRAMING as u32,
        l2_header: 14,
    };
    let mut topo = Topology::star(n + 1, link(C_BPS)).map_err(|e| ExperimentError(format!("tcpu-burst-rate: {e}")))?;
    let hosts = topo.hosts().to_vec();
    let sw = *topo
        .switches()
        .first()
        .ok_or_else(|| ExperimentError("tcpu-burst-rate: no switch".into()))?;
    if senders == Senders::OneFast {
        if let Some(p) = topo.ports(hosts[1]).first().copied() {
            topo.set_link_config(p.link, link(10 * C_BPS));
        }
    }
    let per = bytes / u64::from(n);
    let flows: Vec<FlowSpec> = (0..n)
        .map(|i| FlowSpec {
            id: FlowId(i),
            src: hosts[i as usize + 1],
            dst: hosts[0],
            start: 0,
            bytes: per,
            kind: FlowKind::Bulk,
        })
        .collect();
    let switch = SwitchConfig {
        queue: QueueConfig {
            limit_packets: 0,
            marking: Marking::None,
            ..QueueConfig::default()
        },
        buffer: BufferConfig::Dedicated,
        forwarding: Forwarding::StoreAndForward,
        pipeline_latency: 0,
        ecmp: Ecmp::Flow,
    };
    let tcp = TcpConfig {
        delayed_ack: if delayed_ack {
            DelayedAck::On { timeout: 40 * MS }
        } else {
            DelayedAck::Off
        },
        ..TcpConfig::default()
    };
    let mut sim = Sim::new(
        &topo,
        switch,
        common::host_queue(),
        tcp,
        flows,
        1,
        SimOptions::default(),
    );
    // The switch's port to h0.
    let port = topo
        .ports(sw)
        .iter()
        .position(|p| p.peer == hosts[0])
        .ok_or_else(|| ExperimentError("tcpu-burst-rate: no port to h0".into()))?;
    let read = |sim: &Sim| {
        let q = &sim.nodes()[sw.0 as usize].ports[port].queues;
        (q.bytes(), q.stats.tx_bytes, q.stats.enqueued, q.stats.tx_packets)
    };
    let mut windows = Vec::new();
    let (mut q0, mut tx0, mut enq0, _) = read(&sim);
    let mut t = 0;
    while t < until {
        t += WINDOW;
        let more = sim.run_until(t);
        let (q1, tx1, enq1, _) = read(&sim);
        // Frames that arrived in the window: queued now - queued before + sent meanwhile.
        let frames = (q1 + tx1).saturating_sub(q0 + tx0);
        let packets = enq1.saturating_sub(enq0);
        let wire_bits = (frames + FRAMING * packets) * 8;
        let rate = wire_bits as f64 / as_secs(WINDOW) / C_BPS as f64;
        windows.push((t, rate, q1));
        (q0, tx0, enq0) = (q1, tx1, enq1);
        if !more {
            break;
        }
    }
    let mut growth: Vec<f64> = windows
        .iter()
        .zip(std::iter::once(0).chain(windows.iter().map(|w| w.2)))
        .filter(|((_, _, q), before)| q > before)
        .map(|((_, r, _), _)| *r)
        .collect();
    growth.sort_by(f64::total_cmp);
    let slow_start = growth.get(growth.len() / 2).copied().unwrap_or(0.0);
    let peak = windows.iter().map(|w| w.1).fold(0.0, f64::max);
    let drops: u64 = sim
        .nodes()
        .iter()
        .flat_map(|n| n.ports.iter())
        .map(|p| p.queues.stats.dropped())
        .sum();
    Ok(Outcome {
        senders,
        delayed_ack,
        windows,
        slow_start,
        peak,
        growth_windows: growth.len(),
        drops,
    })
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    // Enough bytes that slow start lasts many windows: the queue grows by about C per second
    // of slow start, and the run ends when the flows do.
    let (bytes, until) = if ctx.quick {
        (4_000_000, 60 * MS)
    } else {
        (16_000_000, 100 * MS)
    };
    (ctx.status)("4 set-ups");
    let jobs: Vec<(Senders, bool)> = [Senders::OneFast, Senders::Many]
        .iter()
        .flat_map(|&s| [false, true].map(move |d| (s, d)))
        .collect();
    let results: Vec<Outcome> = common::par_map(&jobs, common::threads(), |&(s, d)| measure(s, d, bytes, until))
        .into_iter()
        .collect::<Result<_, _>>()?;
    let mut rep = Report {
        title: "TCPU: the incoming rate of a TCP slow-start burst for one output port".into(),
        reference: "Lu et al., HotSDN 2012, §3.2.1 and Figure 4: up to 2C with delayed ACK disabled; \
                    with delayed ACKs, 2C is our derivation (RFC 3465 byte counting, L = 2)"
            .into(),
        ..Report::default()
    };
    let mut csv = String::from("senders,delayed_ack,t_ms,rate_over_c,queue_bytes\n");
    for o in &results {
        let setting = format!(
            "{}, delayed ACK {}",
            o.senders.name(),
            if o.delayed_ack { "on" } else { "off" }
        );
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "arrival rate in slow start, median of 1 ms windows (x C)",
            Some(2.0),
            o.slow_start,
            Target::Relative(TOLERANCE),
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "largest 1 ms window (x C), up to 2C",
            None,
            o.peak,
            Target::AtMost(2.0 * (1.0 + TOLERANCE)),
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "windows in which the queue grew",
            None,
            o.growth_windows as f64,
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Identity,
            &setting,
            "packets dropped (the queue has no limit)",
            Some(0.0),
            o.drops as f64,
            Target::None,
        ));
        for (t, r, q) in &o.windows {
            csv.push_str(&format!(
                "{},{},{:.3},{:.4},{}\n",
                o.senders.name(),
                o.delayed_ack,
                as_secs(*t) * 1e3,
                r,
                q
            ));
        }
    }
    write(ctx, "burst-rate.csv", &csv)?;
    let mut series: Vec<Series> = results
        .iter()
        .map(|o| {
            Series::new(
                format!(
                    "{}, delayed ACK {}",
                    o.senders.name(),
                    if o.delayed_ack { "on" } else { "off" }
                ),
                o.windows.iter().map(|(t, r, _)| (as_secs(*t) * 1e3, *r)).collect(),
            )
            .line()
        })
        .collect();
    let end = results
        .iter()
        .flat_map(|o| o.windows.last())
        .map(|w| as_secs(w.0) * 1e3)
        .fold(0.0, f64::max);
    series.push(
        Series::new("2C (paper)", vec![(0.0, 2.0), (end, 2.0)])
            .line()
            .dash(Dash::Dotted),
    );
    Figure::new(
        "Data arriving for one 1 Gb/s port during TCP slow start",
        "time (ms)",
        Axis::new("arrival rate / C"),
    )
    .with(series)
    .save(&ctx.path("burst-rate.png"))?;
    rep.files = vec![
        "burst-rate.csv".into(),
        "burst-rate.png".into(),
        "burst-rate.svg".into(),
    ];
    rep.notes.push(format!(
        "C = 1 Gb/s to h0, 25 us links, no queue limit, NewReno with SACK, {} MB in all, 1 ms windows; \
         rates in wire bytes (frame + 24 B). Tolerance {:.0}% declared before the runs.",
        bytes / 1_000_000,
        TOLERANCE * 100.0
    ));
    Ok(rep)
}
