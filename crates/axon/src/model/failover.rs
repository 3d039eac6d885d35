//! `axon-failover` (beyond the thesis, which leaves fault tolerance to future work): a ring of
//! four Axons, host S on Axon 1 streams a frame every 10 us to host T on Axon 3, and halfway
//! through, the link of the stream's path that is not next to S's Axon fails. Two ways of finding
//! out: every control plane is told at once (the `axon` kind's `link_notice = "everyone"`,
//! topology as configuration), or nobody is and the Axons at the ends notice the missing probes
//! (`discovery = true`, [`crate::control::discovery`], no topology file) and flood it. Measured:
//! the time from the failure until the first frame sent after it arrives, frames lost, and that
//! nothing is lost once traffic flows again.
//!
//! It runs on the simulator's kernel (the `axon` kind of [`super::placed`], the failure a
//! scheduled link failure, `Sim::schedule_link`); until 2026-11-28 it ran on the testbed's own
//! loop, whose numbers the Axon page keeps beside these.

use super::kernel::{axon_network, load};
use super::placed::AxonSwitch;
use crate::control::{DiscoveryConfig, Endpoint};
use tandem_sim::experiment::{write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target};
use tandem_sim::packet::FlowId;
use tandem_sim::plot::{Axis, Figure, Series};

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "axon-failover",
    about: "Axon ring of four: a link on a stream's path fails; recovery time and frames lost, with failure notices and with probe-timeout detection",
    run,
};

/// One picosecond-based microsecond.
const US: u64 = 1_000_000;
/// When the source first ARPs (discovery has converged well before).
const ARP_PS: u64 = 1_000 * US;
/// When the stream starts.
const STREAM_PS: u64 = 3_000 * US;

/// How the failure is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Detection {
    /// Both devices and every control plane are told at once; topology as configuration.
    Notice,
    /// Nobody is told; discovery's probe timeout finds it (no topology file).
    ProbeTimeout(DiscoveryConfig),
}

impl Detection {
    /// A short name for tables.
    pub fn name(&self) -> &'static str {
        match self {
            Detection::Notice => "notice",
            Detection::ProbeTimeout(_) => "probe timeout",
        }
    }
}

/// One run's setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Setup {
    /// How the failure is found.
    pub detection: Detection,
    /// How long the stream runs (the failure is in the middle).
    pub stream_ps: u64,
    /// A frame this often.
    pub period_ps: u64,
}

/// One frame of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Arrival {
    /// Its sequence number.
    pub seq: u64,
    /// When S sent it.
    pub sent_ps: u64,
    /// When T got it, if it did.
    pub arrived_ps: Option<u64>,
}

/// What a run gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The setting.
    pub setup: Setup,
    /// The failed link's ends.
    pub failed: (Endpoint, Endpoint),
    /// When it failed.
    pub fail_ps: u64,
    /// S's route (output ports) before and after.
    pub path_before: Vec<u8>,
    /// S's route after the failure (empty if none).
    pub path_after: Vec<u8>,
    /// Every frame of the stream.
    pub arrivals: Vec<Arrival>,
    /// From the failure to the arrival of the first frame sent after it.
    pub recovery_ps: Option<u64>,
    /// Frames sent after the first one that made it through after the failure and lost.
    pub lost_after_recovery: u64,
}

impl Outcome {
    /// Frames sent.
    pub fn sent(&self) -> u64 {
        self.arrivals.len() as u64
    }
    /// Frames lost.
    pub fn lost(&self) -> u64 {
        self.arrivals.iter().filter(|a| a.arrived_ps.is_none()).count() as u64
    }
}

fn err(e: impl std::fmt::Display) -> ExperimentError {
    ExperimentError(format!("axon-failover: {e}"))
}

/// Runs one setting on the kernel: the ring as a scenario (S = `h1_0` on Axon 1, T = `h3_0` on
/// Axon 3), one datagram at 1 ms to set the route up, the stream from 3 ms; the failure is
/// scheduled on the link of S's route next to T's Axon once that route is known.
pub fn run_setup(s: &Setup) -> Result<Outcome, ExperimentError> {
    let params = match s.detection {
        Detection::Notice => String::from("link_notice = \"everyone\""),
        Detection::ProbeTimeout(d) => format!(
            "link_notice = \"none\"\ndiscovery = true\nprobe_interval = \"{}ps\"\nprobe_timeout = \"{}ps\"",
            d.probe_interval_ps, d.probe_timeout_ps
        ),
    };
    let n = s.stream_ps / s.period_ps.max(1);
    let end = STREAM_PS + s.stream_ps + 1_000 * US;
    // One 60-byte frame every `period`: the kernel's rate counts the frame's bytes.
    let rate = 60 * 8 * 1_000_000_000_000u64 / s.period_ps.max(1);
    let flows = format!(
        "[[flows]]\nkind = \"udp_burst\"\npairs = [[\"h1_0\", \"h3_0\"]]\npackets = 1\npacket_size = 60\nrate = \"1Gbps\"\nstart = \"{ARP_PS}ps\"\n\
         [[flows]]\nkind = \"udp_cbr\"\npairs = [[\"h1_0\", \"h3_0\"]]\nrate = \"{rate}bps\"\npacket_size = 60\nstart = \"{STREAM_PS}ps\"\nduration = \"{}ps\"\n",
        n * s.period_ps
    );
    let sc = load(&axon_network(true, &[1, 0, 1, 0], &params, end, &flows)).map_err(err)?;
    let mut sim = tandem_sim::run::build(&sc, None).map_err(err)?;
    let stream = FlowId(1);
    sim.log_deliveries(stream);
    let node = |name: &str| sc.topology.find(name).ok_or_else(|| err(format!("no node {name}")));
    let (a1, t) = (node("a1")?, node("h3_0")?);
    let s_port = sc.topology.ports(a1).iter().position(|p| sc.topology.is_host(p.peer));
    let s_port = s_port.ok_or_else(|| err("S is not on Axon 1"))? as u8;
    let to = tandem_sim::tap::node_ip(t);
    sim.run_until(STREAM_PS);
    let route = |sim: &tandem_sim::sim::Sim| {
        sim.model_as::<AxonSwitch>(a1).and_then(|m| {
            m.node()
                .control()
                .route_to(s_port, to)
                .map(|r| (r.entry.forward.clone(), r.links.clone()))
        })
    };
    let (path_before, links) = route(&sim).ok_or_else(|| err("no route after ARP"))?;
    let cp1 = sim
        .model_as::<AxonSwitch>(a1)
        .ok_or_else(|| err("no axon 1"))?
        .node()
        .control();
    let id = *links.last().ok_or_else(|| err("an empty route"))?;
    let link = cp1
        .topology()
        .links()
        .get(id.0)
        .copied()
        .ok_or_else(|| err("unknown link"))?;
    // Device d is the d-th Axon of the entry: node a{d}.
    let fail_node = node(&format!("a{}", link.a.device))?;
    let fail_ps = STREAM_PS + s.stream_ps / 2 + 3 * US;
    sim.schedule_link(fail_ps, fail_node, u16::from(link.a.port), false);
    sim.run_until(end);
    let path_after = route(&sim).map(|r| r.0).unwrap_or_default();
    let got: std::collections::BTreeMap<u32, u64> = sim.deliveries(stream).iter().map(|d| (d.seq, d.arrived)).collect();
    let arrivals: Vec<Arrival> = (0..n)
        .map(|k| Arrival {
            seq: k + 1,
            sent_ps: STREAM_PS + k * s.period_ps,
            arrived_ps: u32::try_from(k).ok().and_then(|k| got.get(&k).copied()),
        })
        .collect();
    let first_after = arrivals
        .iter()
        .filter(|a| a.sent_ps >= fail_ps)
        .find(|a| a.arrived_ps.is_some())
        .copied();
    let recovery_ps = first_after.and_then(|a| a.arrived_ps).map(|t| t - fail_ps);
    let lost_after_recovery = first_after.map_or(0, |f| {
        arrivals
            .iter()
            .filter(|a| a.seq > f.seq && a.arrived_ps.is_none())
            .count() as u64
    });
    Ok(Outcome {
        setup: *s,
        failed: (link.a, link.b),
        fail_ps,
        path_before,
        path_after,
        arrivals,
        recovery_ps,
        lost_after_recovery,
    })
}

/// The settings of a full or quick run.
pub fn setups(quick: bool) -> Vec<Setup> {
    let stream_ps = if quick { 4_000 * US } else { 20_000 * US };
    [Detection::Notice, Detection::ProbeTimeout(DiscoveryConfig::default())]
        .into_iter()
        .map(|detection| Setup {
            detection,
            stream_ps,
            period_ps: 10 * US,
        })
        .collect()
}

fn ports(p: &[u8]) -> String {
    p.iter().map(u8::to_string).collect::<Vec<_>>().join("-")
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let mut outs = vec![];
    for s in setups(ctx.quick) {
        (ctx.status)(&format!("axon-failover: {}", s.detection.name()));
        outs.push(run_setup(&s)?);
    }
    let mut csv = String::from("detection,seq,sent_us,arrived_us,one_way_us\n");
    for o in &outs {
        for a in &o.arrivals {
            let (arr, ow) = match a.arrived_ps {
                Some(t) => (
                    format!("{:.3}", t as f64 / 1e6),
                    format!("{:.3}", (t - a.sent_ps) as f64 / 1e6),
                ),
                None => (String::new(), String::new()),
            };
            csv.push_str(&format!(
                "{},{},{:.3},{},{}\n",
                o.setup.detection.name(),
                a.seq,
                a.sent_ps as f64 / 1e6,
                arr,
                ow
            ));
        }
    }
    write(ctx, "failover_arrivals.csv", &csv)?;
    // Frames delivered per 100 us, around the failure.
    let bin = 100 * US;
    let series: Vec<(String, Vec<(f64, f64)>)> = outs
        .iter()
        .map(|o| {
            let from = o.fail_ps.saturating_sub(2_000 * US);
            let to = o.fail_ps + 2_000 * US;
            let mut counts = vec![0u32; ((to - from) / bin) as usize];
            for t in o.arrivals.iter().filter_map(|a| a.arrived_ps) {
                if (from..to).contains(&t) {
                    if let Some(c) = counts.get_mut(((t - from) / bin) as usize) {
                        *c += 1;
                    }
                }
            }
            let pts = counts
                .iter()
                .enumerate()
                .map(|(i, c)| ((i as f64 * bin as f64 - 2_000.0 * US as f64) / 1e9, f64::from(*c)))
                .collect();
            (o.setup.detection.name().to_string(), pts)
        })
        .collect();
    Figure::new(
        "Frames arriving at T per 100 us; a link on the path fails at 0",
        "ms since the failure",
        Axis::new("frames per 100 us").integer(),
    )
    // Counts per bin: drawn as the histogram they are (steps), a dash pattern per series.
    .with(series.into_iter().map(|(n, p)| Series::new(n, p).staircase(0.0)))
    .save(&ctx.path("failover_arrivals.png"))?;
    let mut rows = vec![];
    for o in &outs {
        let setting = format!(
            "{}: ring of 4, 1 frame / {} us, link {}.{}-{}.{} fails",
            o.setup.detection.name(),
            o.setup.period_ps / US,
            o.failed.0.device,
            o.failed.0.port,
            o.failed.1.device,
            o.failed.1.port
        );
        let rec_us = o.recovery_ps.map_or(f64::INFINITY, |r| r as f64 / 1e6);
        let bound_us = match o.setup.detection {
            Detection::Notice => 3.0 * (o.setup.period_ps / US) as f64,
            Detection::ProbeTimeout(d) => (d.probe_timeout_ps + 3 * o.setup.period_ps) as f64 / 1e6,
        };
        rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "time until frames flow again (us)",
            None,
            rec_us,
            Target::AtMost(bound_us),
        ));
        rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "frames lost",
            None,
            o.lost() as f64,
            Target::AtMost((bound_us / (o.setup.period_ps / US) as f64).ceil() + 1.0),
        ));
        rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "frames lost once traffic flows again",
            Some(0.0),
            o.lost_after_recovery as f64,
            Target::Absolute(0.0),
        ));
        rows.push(Row::new(
            Kind::Identity,
            &setting,
            &format!(
                "frames sent [path before {}, after {}]",
                ports(&o.path_before),
                ports(&o.path_after)
            ),
            None,
            o.sent() as f64,
            Target::None,
        ));
    }
    let d = DiscoveryConfig::default();
    Ok(Report {
        title: "Axon failover: a link on the path fails mid-stream".into(),
        reference: "beyond the thesis (fault tolerance is future work in M. Foss, The Axon Ethernet Device, 2010)".into(),
        rows,
        notes: vec![
            "On the simulator's kernel: ring of four Axons (1 Gb/s, 500 ns links, cut-through), S on Axon 1, T on Axon 3, one 60-byte frame every 10 us after one at 1 ms that sets the route up; the link of S's route next to T's Axon fails in the middle of the stream, 3 us after a send; a frame on it then is lost.".into(),
            "notice: both devices see the link go down and every control plane gets LinkDown at once; Axon 1 recomputes S's route over the other side of the ring (route calculation takes no software delay in this model).".into(),
            format!(
                "probe timeout: no topology file and no notice; probes every {} us, a neighbor silent for {} us is gone, the Axons at both ends withdraw the link from their flooded advertisements, and Axon 1 reroutes when it hears.",
                d.probe_interval_ps / US,
                d.probe_timeout_ps / US
            ),
            "Time until frames flow again: from the failure to the arrival of the first frame sent after it.".into(),
        ],
        files: vec!["failover_arrivals.csv".into(), "failover_arrivals.png".into(), "failover_arrivals.svg".into()],
    })
}
