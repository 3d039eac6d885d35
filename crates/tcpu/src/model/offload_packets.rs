//! `tcpu-offload-packets`: the large-flow-table experiment (paper §4) at the packet level.
//!
//! `tcpu-offload` ([`super::offload`]) drives the TCPU core with flow-level events: every flow
//! sends at line rate from its first packet, alone on its links. This experiment runs the same
//! synthesized workload ([`offload::workload`]: the scaled web-search sizes, Poisson arrivals,
//! uniform ordered pairs of the 8 servers, seed 1) as TCP connections through the simulator:
//! 8 hosts on one switch of 1 Gb/s ports (the TCPU testbed's, [`common::testbed`]), the switch
//! running [`TcpuModel`] with the same core configuration ([`offload::tcpu_config`]). So the
//! bytes a flow sends before its TCAM entry takes effect are what TCP sends then (a handshake,
//! an initial window, slow start, while sharing links with other flows), the CPU path has its
//! internal links and DRAM pacing, and ACKs are packets too (each direction of a connection is
//! a 5-tuple and so a flow of the core's own, as on a real switch).
//!
//! TFOR is measured two ways: over every byte the switch forwarded (frames with their
//! framing, both directions: what a switch's counters see), and over the data direction's
//! payload only (what the flow-level model counts), both as bytes the ASIC forwarded by a rule
//! over bytes the ASIC forwarded plus bytes it sent up to the CPU.
//!
//! A packet-level run of the paper's full 10 minutes (103,200 flows, 33.6 GB) is some 23
//! million data packets plus their ACKs; `--quick` runs a shorter span of arrivals.

use super::common::{self, write};
use super::offload::{self, SynthFlow};
use super::TcpuModel;
use crate::types::{Time, MS, SEC};
use tandem_sim::config::{Marking, TcpConfig};
use tandem_sim::experiment::{Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target};
use tandem_sim::packet::FlowId as SimFlow;
use tandem_sim::plot::{Axis, Figure};
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::workload::{FlowKind, FlowSpec};

/// TCAM flow entries (the testbed's k).
pub const K: u32 = 1_792;
/// Arrivals of the full run at the paper's rate: the paper's 10 minutes.
pub const FULL_SPAN: Time = 600 * SEC;
/// Arrivals of the full run with inter-arrival times / 10: 60 s, as many flows as the paper's
/// 10 minutes (its compressed run had ten times as many; see the system page).
pub const FULL_SPAN_COMPRESSED: Time = 60 * SEC;
/// Arrivals of the `--quick` run at the paper's rate.
pub const QUICK_SPAN: Time = 20 * SEC;
/// Arrivals of the `--quick` run with inter-arrival times / 10.
pub const QUICK_SPAN_COMPRESSED: Time = 6 * SEC;
/// How long after the last arrival the run may go on for its flows to finish.
pub const DRAIN: Time = 60 * SEC;
/// How often the run stops to look at the core's flow table (for the most active flows).
const STEP: Time = 100 * MS;

/// What one packet-level run measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Inter-arrival compression (1 or 10).
    pub compress: u32,
    /// Length of the arrival span, seconds.
    pub span_s: f64,
    /// Flows (TCP connections).
    pub flows: u64,
    /// Application bytes of all flows.
    pub bytes: u64,
    /// Flows that delivered every byte.
    pub completed: u64,
    /// Flows that gave up (retries exhausted).
    pub failed: u64,
    /// Wire bytes (frames + framing, both directions) the ASIC forwarded by a flow entry.
    pub asic_wire: u64,
    /// Wire bytes the ASIC sent up to the CPU.
    pub cpu_wire: u64,
    /// Transport payload bytes the ASIC forwarded by a flow entry.
    pub asic_payload: u64,
    /// Transport payload bytes the ASIC sent up to the CPU.
    pub cpu_payload: u64,
    /// Packets the ASIC forwarded by a flow entry.
    pub asic_packets: u64,
    /// Packets sent up to the CPU.
    pub cpu_packets: u64,
    /// Core flows seen (both directions of every connection).
    pub core_flows: u64,
    /// Most flows in the core's flow table (seen in the last 60 s), sampled every 100 ms.
    pub max_active: u64,
    /// Swaps (inactive swaps + ranking swaps).
    pub swaps: u64,
    /// New flows swapped in for an inactive entry as they arrived.
    pub inactive_swaps: u64,
    /// Swaps the periodic ranking planned.
    pub rank_swaps: u64,
    /// Flows placed into a free TCAM slot.
    pub free_inserts: u64,
    /// Swaps per second of the arrival span.
    pub swaps_per_sec: f64,
    /// Table operations the ASIC refused.
    pub refused: u64,
    /// Packets the ASIC forwarded ahead of packets of their flow still on the CPU side.
    pub overtakes: u64,
    /// Packets dropped at the switch's egress queues and by the CPU.
    pub drops: u64,
    /// Segments retransmitted (both ends).
    pub retransmits: u64,
    /// Retransmission timeouts (both ends, data and SYN).
    pub timeouts: u64,
    /// Mean flow completion time of completed flows, seconds.
    pub mean_fct_s: f64,
    /// Simulated time at the end, seconds.
    pub simulated_s: f64,
    /// Simulator events.
    pub events: u64,
    /// Wall-clock time of the run, seconds.
    pub wall_s: f64,
}

impl Outcome {
    /// Traffic offload ratio over every byte the switch forwarded (both directions, wire bytes).
    pub fn tfor(&self) -> f64 {
        self.asic_wire as f64 / (self.asic_wire + self.cpu_wire).max(1) as f64
    }
    /// Traffic offload ratio over transport payload (the data direction), as the flow-level
    /// model counts it.
    pub fn tfor_payload(&self) -> f64 {
        self.asic_payload as f64 / (self.asic_payload + self.cpu_payload).max(1) as f64
    }
}

/// The hosts' TCP: the simulator's defaults (Linux-like: NewReno, SACK, timestamps, IW 10,
/// 200 ms minimum RTO, delayed ACKs) with a 1,460-byte MSS, the servers' Ethernet MSS.
pub fn tcp_config() -> TcpConfig {
    TcpConfig {
        mss: 1460,
        ..TcpConfig::default()
    }
}

/// The synthesized flows as simulator flows (bulk TCP, host `src` to host `dst`).
fn flow_specs(flows: &[SynthFlow], hosts: &[tandem_sim::packet::NodeId]) -> Result<Vec<FlowSpec>, ExperimentError> {
    flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let id = u32::try_from(i).map_err(|_| ExperimentError("tcpu-offload-packets: too many flows".into()))?;
            let host = |h: u32| {
                hosts
                    .get(h as usize)
                    .copied()
                    .ok_or_else(|| ExperimentError(format!("tcpu-offload-packets: no host {h}")))
            };
            Ok(FlowSpec {
                id: SimFlow(id),
                src: host(f.src)?,
                dst: host(u32::from(f.dst))?,
                start: f.start,
                bytes: f.bytes,
                kind: FlowKind::Bulk,
            })
        })
        .collect()
}

/// Runs `flows` (sorted by start) as TCP connections through a TCPU switch with `k` TCAM
/// entries (`None`: a plain switch, the same queues without the model), until every flow has
/// finished or failed (at most [`DRAIN`] after `span`).
pub fn run_flows(flows: &[SynthFlow], k: Option<u32>, span: Time, compress: u32) -> Result<Outcome, ExperimentError> {
    let started = std::time::Instant::now();
    let (topo, hosts, sw) = common::testbed(offload::SERVERS, "tcpu-offload-packets")?;
    let mut sim = Sim::new(
        &topo,
        common::switch_config(true, Marking::None),
        common::host_queue(),
        tcp_config(),
        flow_specs(flows, &hosts)?,
        1,
        SimOptions::default(),
    );
    if let Some(k) = k {
        let model = TcpuModel::new(offload::tcpu_config(k))
            .map_err(|e| ExperimentError(format!("tcpu-offload-packets: {e:?}")))?;
        sim.attach_model(sw, Box::new(model));
    }
    let mut out = Outcome {
        compress,
        span_s: span as f64 / SEC as f64,
        flows: flows.len() as u64,
        bytes: flows.iter().map(|f| f.bytes).sum(),
        ..Outcome::default()
    };
    let horizon = span.saturating_add(DRAIN);
    let mut t = 0;
    loop {
        t += STEP;
        let more = sim.run_until(t);
        if let Some(m) = sim.model_as::<TcpuModel>(sw) {
            out.max_active = out.max_active.max(m.core().flows().len() as u64);
        }
        // Flows that have not started count as open (the queue holds their start events).
        let open = t < span
            || sim
                .flow_results()
                .any(|(_, r, _)| r.end.is_none() && r.failed.is_none());
        if !more || !open || t >= horizon {
            break;
        }
    }
    let mut fct_sum = 0.0;
    for (_, r, eps) in sim.flow_results() {
        if let Some(e) = r.end {
            out.completed += 1;
            fct_sum += e.saturating_sub(r.start) as f64 / SEC as f64;
        }
        if r.failed.is_some() {
            out.failed += 1;
        }
        for ep in eps.into_iter().flatten() {
            let s = ep.stats();
            out.retransmits += s.retransmits;
            out.timeouts += s.data_timeouts + s.syn_timeouts;
        }
    }
    out.mean_fct_s = fct_sum / out.completed.max(1) as f64;
    out.drops = common::switch_drops(&sim);
    out.simulated_s = sim.now() as f64 / SEC as f64;
    out.events = sim.events_processed();
    let Some(m) = sim.model_as::<TcpuModel>(sw) else {
        out.wall_s = started.elapsed().as_secs_f64();
        return Ok(out);
    };
    let s = m.stats();
    let c = m.core().stats();
    out.asic_wire = s.asic_rule_bytes;
    out.cpu_wire = s.to_cpu_bytes;
    out.asic_payload = s.asic_rule_payload;
    out.cpu_payload = s.to_cpu_payload;
    out.asic_packets = s.asic_rule_packets;
    out.cpu_packets = s.to_cpu_packets;
    out.refused = s.op_failures;
    out.overtakes = s.overtakes;
    out.drops += s.drops_dram_full + s.drops_non_tcp;
    out.core_flows = c.new_flows;
    out.swaps = c.inactive_swaps + c.rank_swaps;
    out.inactive_swaps = c.inactive_swaps;
    out.rank_swaps = c.rank_swaps;
    out.free_inserts = c.free_slot_inserts;
    out.swaps_per_sec = out.swaps as f64 / out.span_s.max(f64::MIN_POSITIVE);
    out.wall_s = started.elapsed().as_secs_f64();
    Ok(out)
}

/// One setting of the experiment: how the paper's flows are read, the rate, the span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// 1: each of the paper's 103,200 flows is a TCP connection (as `tcpu-offload` reads
    /// them); 2: each is one direction of a connection, so half as many connections, twice as
    /// large (the same bytes), as the paper's first experiment counts flows.
    pub split: u32,
    /// Inter-arrival compression (1 or 10).
    pub compress: u32,
    /// Arrivals span.
    pub span: Time,
}

impl Setting {
    /// How the paper's flows are read: `connections` or `one-way flows`.
    pub fn reading(&self) -> &'static str {
        if self.split == 2 {
            "one-way flows"
        } else {
            "connections"
        }
    }

    /// The setting's name in the report.
    pub fn label(&self) -> String {
        let reading = self.reading();
        let rate = if self.compress == 1 {
            "paper rate".to_string()
        } else {
            format!("inter-arrival / {}", self.compress)
        };
        format!("{reading}, {rate}, {} s", self.span / SEC)
    }
}

/// The settings of a run: both readings of the paper's flows, each at its rate and compressed
/// 10x (full: the paper's 10 minutes and 60 s compressed; `--quick`: 20 s and 6 s).
pub fn settings(quick: bool) -> Vec<Setting> {
    let (slow, fast) = if quick {
        (QUICK_SPAN, QUICK_SPAN_COMPRESSED)
    } else {
        (FULL_SPAN, FULL_SPAN_COMPRESSED)
    };
    [1, 2]
        .into_iter()
        .flat_map(|split| {
            [
                Setting {
                    split,
                    compress: 1,
                    span: slow,
                },
                Setting {
                    split,
                    compress: 10,
                    span: fast,
                },
            ]
        })
        .collect()
}

/// What one setting measured: through the TCPU switch, through a plain switch, and the
/// flow-level model on the same flows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SettingOutcome {
    /// The TCPU switch.
    pub tcpu: Outcome,
    /// The same switch without the model (every packet forwarded by the ASIC's routing).
    pub plain: Outcome,
    /// `tcpu-offload`'s flow-level model on the same flows.
    pub flow_level: offload::Outcome,
}

/// Synthesizes the setting's flows ([`offload::workload_split`], seed 1) and runs them through
/// a TCPU switch with `k` entries (and the flow-level model) when `tcpu`, else through a plain
/// switch.
fn run_job(s: Setting, k: u32, tcpu: bool) -> Result<(Outcome, Option<offload::Outcome>), ExperimentError> {
    let flows = offload::workload_split(s.span, s.compress, s.split, 1)?;
    if !tcpu {
        return Ok((run_flows(&flows, None, s.span, s.compress)?, None));
    }
    let packets = run_flows(&flows, Some(k), s.span, s.compress)?;
    let flow_level = offload::run_flows(&flows, k, s.span, s.compress)?;
    Ok((packets, Some(flow_level)))
}

/// Runs every setting, TCPU and plain, on `threads` threads.
pub fn run_settings(settings: &[Setting], k: u32, threads: usize) -> Result<Vec<SettingOutcome>, ExperimentError> {
    let jobs: Vec<(Setting, bool)> = settings.iter().flat_map(|&s| [(s, true), (s, false)]).collect();
    let done = common::par_map(&jobs, threads, |&(s, tcpu)| run_job(s, k, tcpu));
    let mut out = vec![SettingOutcome::default(); settings.len()];
    for (i, r) in done.into_iter().enumerate() {
        let (o, fl) = r?;
        let slot = &mut out[i / 2];
        match fl {
            Some(fl) => {
                slot.tcpu = o;
                slot.flow_level = fl;
            }
            None => slot.plain = o,
        }
    }
    Ok(out)
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let settings = settings(ctx.quick);
    (ctx.status)(&format!(
        "{} settings, each through a TCPU switch and a plain one",
        settings.len()
    ));
    let results = run_settings(&settings, K, common::threads())?;
    let mut rep = Report {
        title: "TCPU large flow table at the packet level: traffic offload ratio with TCP".into(),
        reference: "Lu et al., HotSDN 2012, §4, second experiment: 8 servers, 10 min, 103,200 flows, 33.6 GB, \
                    TFOR 96.1%; inter-arrival / 10: TFOR 90.5%, 1,743 swaps/s"
            .into(),
        ..Report::default()
    };
    let mut csv = String::from(
        "reading,switch,split,compress,span_s,flows,bytes,completed,failed,asic_wire_bytes,cpu_wire_bytes,tfor,\
         asic_payload_bytes,cpu_payload_bytes,tfor_payload,asic_packets,cpu_packets,core_flows,max_active_60s,swaps,\
         inactive_swaps,rank_swaps,free_slot_inserts,swaps_per_sec,refused,overtakes,drops,retransmits,timeouts,mean_fct_s,simulated_s,events,\
         wall_s\n",
    );
    let full = !ctx.quick;
    for (s, r) in settings.iter().zip(&results) {
        let label = s.label();
        for (switch, o) in [("tcpu", &r.tcpu), ("plain", &r.plain)] {
            csv.push_str(&format!(
                "{},{switch},{},{},{},{},{},{},{},{},{},{:.6},{},{},{:.6},{},{},{},{},{},{},{},{},{:.1},{},{},{},{},{},{:.6},{:.3},{},{:.2}\n",
                s.reading(),
                s.split,
                o.compress,
                o.span_s,
                o.flows,
                o.bytes,
                o.completed,
                o.failed,
                o.asic_wire,
                o.cpu_wire,
                o.tfor(),
                o.asic_payload,
                o.cpu_payload,
                o.tfor_payload(),
                o.asic_packets,
                o.cpu_packets,
                o.core_flows,
                o.max_active,
                o.swaps,
                o.inactive_swaps,
                o.rank_swaps,
                o.free_inserts,
                o.swaps_per_sec,
                o.refused,
                o.overtakes,
                o.drops,
                o.retransmits,
                o.timeouts,
                o.mean_fct_s,
                o.simulated_s,
                o.events,
                o.wall_s
            ));
        }
        let o = &r.tcpu;
        let base = s.compress == 1;
        // The paper's numbers are for its 10-minute runs; a shorter span has no reference.
        let paper = |at_paper_rate: f64, compressed: f64| {
            if full {
                Some(if base { at_paper_rate } else { compressed })
            } else {
                None
            }
        };
        rep.rows.push(Row::new(
            Kind::Input,
            &label,
            "TCP connections",
            None,
            o.flows as f64,
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Input,
            &label,
            "data (GB)",
            None,
            o.bytes as f64 / 1e9,
            Target::None,
        ));
        // Every connection must finish: a run whose flows did not is not a measurement of the
        // table. Declared with the experiment.
        rep.rows.push(Row::new(
            Kind::Prediction,
            &label,
            "connections not completed (TCPU switch)",
            Some(0.0),
            (o.flows - o.completed) as f64,
            Target::AtMost(0.0),
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &label,
            "TFOR, all bytes through the switch (%)",
            paper(96.1, 90.5),
            o.tfor() * 100.0,
            // The paper's claim (abstract, §1): "over 90% traffic offloading ratio", as for the
            // flow-level experiment.
            Target::AtLeast(90.0),
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &label,
            "TFOR, data payload (%)",
            paper(96.1, 90.5),
            o.tfor_payload() * 100.0,
            Target::AtLeast(90.0),
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &label,
            "TFOR of the flow-level model, same flows (%)",
            paper(96.1, 90.5),
            r.flow_level.tfor() * 100.0,
            Target::None,
        ));
        // Identity, as in tcpu-offload: the core's table holds the one-way flows of the last
        // 60 s, so its maximum follows from the arrival rate (plus entries the ASIC keeps).
        rep.rows.push(Row::new(
            Kind::Identity,
            &label,
            "max active one-way flows (60 s timeout)",
            paper(10_644.0, 106_544.0),
            o.max_active as f64,
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &label,
            "swaps per second (one-way flows)",
            if full && !base { Some(1_743.0) } else { None },
            o.swaps_per_sec,
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &label,
            "table operations refused",
            Some(0.0),
            o.refused as f64,
            Target::AtMost(0.0),
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &label,
            "mean FCT, TCPU switch (ms)",
            None,
            o.mean_fct_s * 1e3,
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &label,
            "mean FCT, plain switch (ms)",
            None,
            r.plain.mean_fct_s * 1e3,
            Target::None,
        ));
    }
    write(ctx, "offload-packets.csv", &csv)?;
    let series = |name: &str, split: u32, f: &dyn Fn(&SettingOutcome) -> f64| {
        (
            name.to_string(),
            settings
                .iter()
                .zip(&results)
                .filter(|(s, _)| s.split == split)
                .map(|(s, r)| (f64::from(s.compress), f(r) * 100.0))
                .collect::<Vec<_>>(),
        )
    };
    let mut lines = vec![
        series("TCP, each flow a connection", 1, &|r| r.tcpu.tfor()),
        series("TCP, each flow one direction", 2, &|r| r.tcpu.tfor()),
        series("flow-level model, connections", 1, &|r| r.flow_level.tfor()),
    ];
    if full {
        lines.push(("paper".to_string(), vec![(1.0, 96.1), (10.0, 90.5)]));
    }
    Figure::new(
        "TFOR at the packet level vs inter-arrival compression (k = 1,792)",
        Axis::new("inter-arrival compression (x)").integer(),
        "TFOR (%)",
    )
    .with(lines)
    .save(&ctx.path("offload-packets.png"))?;
    rep.files = vec![
        "offload-packets.png".into(),
        "offload-packets.svg".into(),
        "offload-packets.csv".into(),
    ];
    rep.notes = vec![
        "Workload: as tcpu-offload (the web-search CDF scaled to the paper's mean flow size, Poisson arrivals at \
         172 flows/s or x 10, uniform ordered pairs of 8 servers, seed 1). Connections: each of the paper's flows \
         is one TCP connection. One-way flows: each is one direction of a connection (as the paper's first \
         experiment counts flows), so 86 connections/s (x 10) of twice the size, the same bytes."
            .into(),
        format!(
            "Network: 8 hosts on one switch, 1 Gb/s ports, 25 us links, 100-packet egress queues; the switch runs \
             the TCPU model (k = {K}, T_inactive 1 s, ranking every 100 ms, flows forgotten after 60 s idle; deep \
             buffer, long-flow pinning and the attack detector off), or nothing (plain). Hosts: NewReno with SACK \
             and timestamps, IW 10, MSS 1,460, delayed ACKs, 200 ms minimum RTO."
        ),
        "TFOR, all bytes: frames and framing of every packet, both directions (ACKs included), forwarded by a flow \
         entry over those plus the ones sent up to the CPU. TFOR, data payload: transport payload only, as the \
         flow-level model counts. The flow-level row is tcpu-offload's model run on the same flows. Each direction \
         of a connection is a flow of its own to the core (a 5-tuple), so swaps count ACK directions too."
            .into(),
    ];
    Ok(rep)
}

/// The `tcpu-offload-packets` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "tcpu-offload-packets",
    about:
        "TCPU large flow table at the packet level: the tcpu-offload workload as TCP through a TCPU switch (paper §4)",
    run,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_flow_is_offloaded_after_its_first_packets_and_completes() {
        // One 2 MB flow at 1 s: a free slot is taken at once, so only what TCP sends before the
        // insert completes (the handshake and the first window, at most) goes through the CPU.
        let f = [SynthFlow {
            start: SEC,
            bytes: 2_000_000,
            src: 0,
            dst: 1,
        }];
        let o = run_flows(&f, Some(4), 2 * SEC, 1).unwrap();
        assert_eq!((o.completed, o.failed, o.refused), (1, 0, 0), "{o:?}");
        assert!(o.asic_payload + o.cpu_payload >= 2_000_000, "{o:?}");
        assert!(o.cpu_payload <= 10 * 1460, "{o:?}");
        assert!(o.tfor_payload() > 0.99, "{o:?}");
        // Both directions are flows of the core's own.
        assert_eq!(o.core_flows, 2, "{o:?}");
    }

    #[test]
    fn with_no_entries_everything_goes_through_the_cpu() {
        let w = offload::workload(SEC, 1, 3).unwrap();
        let o = run_flows(&w, Some(0), SEC, 1).unwrap();
        assert_eq!(o.asic_wire, 0, "{o:?}");
        assert!(o.cpu_payload >= o.bytes, "{o:?}");
        assert_eq!(o.completed, o.flows, "{o:?}");
    }
}
