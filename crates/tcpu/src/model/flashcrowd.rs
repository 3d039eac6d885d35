//! `tcpu-flashcrowd`: the paper's deep-buffer experiment (§4, Figure 5 and Table 1).
//!
//! A 16 x 1 GbE switch; host `h0` (port 0) is the client, `h1`..`h15` are web servers. The
//! client opens `NR` request/response connections evenly spread over one second, round-robin
//! over the servers; every response is 256 KB, so all responses cross the client's 1 Gb/s
//! port. Q_limit is 100 packets, Q_redirect 80, the ECN marking threshold 20 packets. Three
//! setups: TCP with the deep buffer (the [`TcpuModel`] on the switch), TCP without it and DCTCP
//! without it (a plain switch).

use super::common::{self, write};
use super::{TcpuModel, SIM_CLASSES};
use crate::config::TcpuConfig;
use tandem_sim::config::{CcAlgo, DelayedAck, Marking, SwitchConfig, TcpConfig};
use tandem_sim::experiment::{Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target};
use tandem_sim::packet::{FlowId, NodeId};
use tandem_sim::plot::{Axis, Figure};
use tandem_sim::report::quantile;
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::time::{as_secs, Time, MS, SEC, US};
use tandem_sim::workload::{FlowKind, FlowSpec};

pub use super::common::{FULL_FRAME, LINK_DELAY, PORTS, PORT_BPS, Q_LIMIT};
/// Response size (paper §4: 256 KB).
pub const RESPONSE_BYTES: u64 = 256 * 1024;
/// Request size (**ours**: an HTTP GET of a few hundred bytes).
pub const REQUEST_BYTES: u64 = 200;
/// ECN marking threshold K in packets (paper §4).
pub const ECN_K_PKTS: u64 = 20;
/// Longest simulated time a run may take before it is cut off.
pub const HORIZON: Time = 120 * SEC;
/// The NR values of Figure 5.
pub const FULL_NR: [u32; 9] = [32, 64, 128, 256, 384, 512, 640, 768, 1024];
/// The NR values of the `--quick` run.
pub const QUICK_NR: [u32; 2] = [256, 1024];

/// One of the paper's three setups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setup {
    /// TCP with the deep buffer (TCPU on the switch).
    TcpDeepBuffer,
    /// TCP on a plain switch.
    Tcp,
    /// DCTCP on a plain switch.
    Dctcp,
}

impl Setup {
    /// All three, in the paper's order.
    pub const ALL: [Setup; 3] = [Setup::TcpDeepBuffer, Setup::Tcp, Setup::Dctcp];

    /// The paper's name.
    pub fn name(self) -> &'static str {
        match self {
            Setup::TcpDeepBuffer => "TCP with DeepBuf",
            Setup::Tcp => "TCP w/o DeepBuf",
            Setup::Dctcp => "DCTCP w/o DeepBuf",
        }
    }

    /// Paper Table 1 (NR = 1,024): SYN-ACK timeouts, data timeouts, packet drops, mean RFT (s).
    pub fn paper_table1(self) -> (f64, f64, f64, f64) {
        match self {
            Setup::TcpDeepBuffer => (0.0, 0.0, 0.0, 0.65),
            Setup::Tcp => (109.0, 180.0, 15_962.0, 0.82),
            Setup::Dctcp => (23.0, 395.0, 3_302.0, 0.78),
        }
    }
}

/// A Windows-like TCP (ours: the paper cites Windows's 300 ms minimum RTO in §3.2.3 and 3 s
/// SYN-ACK timeouts in Table 1, but never names its servers' OS; see the report's notes).
pub fn tcp_config(setup: Setup) -> TcpConfig {
    TcpConfig {
        mss: 1460,
        init_cwnd: 2,
        init_rto: 3 * SEC,
        min_rto: 300 * MS,
        delayed_ack: DelayedAck::On { timeout: 200 * MS },
        timestamps: false,
        sack: true,
        cc: if setup == Setup::Dctcp {
            CcAlgo::Dctcp { g: 1.0 / 16.0 }
        } else {
            CcAlgo::NewReno
        },
        ecn: setup == Setup::Dctcp,
        ..TcpConfig::default()
    }
}

/// The TCPU configuration of the deep-buffer setup: the paper's defaults with long-flow
/// pinning and the attack detector off (see the report's notes).
pub fn tcpu_config() -> TcpuConfig {
    TcpuConfig {
        long_flows: false,
        attack_defense: false,
        ..TcpuConfig::default()
    }
}

fn switch_config(setup: Setup) -> SwitchConfig {
    common::switch_config(
        setup == Setup::TcpDeepBuffer,
        Marking::Threshold {
            k_bytes: ECN_K_PKTS * FULL_FRAME,
        },
    )
}

/// The flash crowd: `nr` requests from the first host, one every `1 s / nr`, round-robin over
/// the others (`h1..h15`). Empty when there are fewer than two hosts.
pub fn workload(hosts: &[NodeId], nr: u32) -> Vec<FlowSpec> {
    let Some((&client, servers)) = hosts.split_first() else {
        return Vec::new();
    };
    if servers.is_empty() {
        return Vec::new();
    }
    let gap = SEC / u64::from(nr.max(1));
    (0..nr)
        .map(|i| FlowSpec {
            id: FlowId(i),
            src: client,
            dst: servers[i as usize % servers.len()],
            start: u64::from(i) * gap,
            bytes: REQUEST_BYTES + RESPONSE_BYTES,
            kind: FlowKind::RequestResponse {
                request_bytes: REQUEST_BYTES,
                response_bytes: RESPONSE_BYTES,
            },
        })
        .collect()
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Requests.
    pub nr: u32,
    /// Response finish times (request start to last response byte), seconds, sorted; only
    /// completed responses.
    pub rft: Vec<f64>,
    /// Connections that failed (SYN or data retries exhausted).
    pub failed: u64,
    /// Responses not finished by the horizon (failures included).
    pub unfinished: u64,
    /// SYN-ACK retransmission timeouts (servers).
    pub synack_timeouts: u64,
    /// SYN retransmission timeouts (client).
    pub syn_timeouts: u64,
    /// Data retransmission timeouts (both ends).
    pub data_timeouts: u64,
    /// Retransmitted segments (both ends).
    pub retransmits: u64,
    /// Packets dropped anywhere in the switch (egress queues and the CPU).
    pub drops: u64,
    /// Packets the CPU dropped (included in `drops`).
    pub cpu_drops: u64,
    /// Most DRAM the deep buffer used, bytes (0 without it).
    pub peak_dram: u64,
    /// R_port installs.
    pub rport_installs: u64,
    /// Packets the switch CPU forwarded.
    pub cpu_packets: u64,
    /// The model's report counters (empty without it).
    pub model_report: Vec<(String, f64)>,
    /// Simulated time at the end.
    pub simulated: Time,
}

impl Outcome {
    /// The mean response finish time, seconds.
    pub fn mean_rft(&self) -> f64 {
        self.rft.iter().sum::<f64>() / self.rft.len().max(1) as f64
    }
    /// The 99th percentile response finish time, seconds.
    pub fn p99_rft(&self) -> f64 {
        quantile(&self.rft, 0.99)
    }
}

/// Runs one setup with `nr` requests until every response has finished (or failed).
pub fn run_setup(setup: Setup, nr: u32) -> Result<Outcome, ExperimentError> {
    if nr == 0 {
        return Err(ExperimentError("tcpu-flashcrowd: NR must be at least 1".into()));
    }
    let (topo, hosts, sw) = common::testbed(PORTS, "tcpu-flashcrowd")?;
    let mut sim = Sim::new(
        &topo,
        switch_config(setup),
        common::host_queue(),
        tcp_config(setup),
        workload(&hosts, nr),
        1,
        SimOptions::default(),
    );
    if setup == Setup::TcpDeepBuffer {
        let model = TcpuModel::new(tcpu_config()).map_err(|e| ExperimentError(format!("tcpu-flashcrowd: {e:?}")))?;
        sim.attach_model(sw, Box::new(model));
    }
    let mut t = 0;
    loop {
        t += SEC;
        let more = sim.run_until(t);
        let open = sim
            .flow_results()
            .any(|(_, r, _)| r.end.is_none() && r.failed.is_none());
        if !more || !open || t >= HORIZON {
            break;
        }
    }
    let mut o = Outcome {
        nr,
        simulated: sim.now(),
        ..Outcome::default()
    };
    for (_, r, eps) in sim.flow_results() {
        match r.end {
            Some(e) => o.rft.push(as_secs(e.saturating_sub(r.start))),
            None => o.unfinished += 1,
        }
        if r.failed.is_some() {
            o.failed += 1;
        }
        for (side, ep) in eps.iter().enumerate() {
            let Some(s) = ep.map(|e| e.stats()) else { continue };
            if side == 0 {
                o.syn_timeouts += s.syn_timeouts;
            } else {
                o.synack_timeouts += s.syn_timeouts;
            }
            o.data_timeouts += s.data_timeouts;
            o.retransmits += s.retransmits;
        }
    }
    o.rft.sort_by(f64::total_cmp);
    o.drops += common::switch_drops(&sim);
    if let Some(m) = sim.model(sw) {
        o.model_report = m.report();
        let get = |k: &str| common::counter(&o.model_report, k) as u64;
        o.cpu_drops = get("tcpu_drops_dram_full") + get("tcpu_drops_non_tcp");
        o.peak_dram = get("tcpu_peak_dram_bytes");
        o.rport_installs = get("tcpu_rport_installs");
        o.cpu_packets = get("tcpu_to_cpu_packets");
    }
    o.drops += o.cpu_drops;
    Ok(o)
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let nrs: &[u32] = if ctx.quick { &QUICK_NR } else { &FULL_NR };
    let mut results: Vec<(Setup, Outcome)> = Vec::new();
    for &nr in nrs {
        for setup in Setup::ALL {
            (ctx.status)(&format!("{} NR={nr}", setup.name()));
            results.push((setup, run_setup(setup, nr)?));
        }
    }
    let mut rep = Report {
        title: "TCPU deep buffer: a flash crowd of TCP short flows".into(),
        reference: "Lu et al., HotSDN 2012, §4: Figure 5 (p99 response finish time vs NR) and Table 1 \
                    (NR = 1,024)"
            .into(),
        ..Report::default()
    };

    // Figure 5: p99 RFT vs NR.
    let mut csv = String::from(
        "setup,nr,p99_rft_s,mean_rft_s,max_rft_s,completed,unfinished,failed,synack_timeouts,syn_timeouts,\
         data_timeouts,retransmits,drops,cpu_drops,peak_dram_bytes,rport_installs,cpu_packets\n",
    );
    for (s, o) in &results {
        csv.push_str(&format!(
            "{},{},{:.6},{:.6},{:.6},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            s.name(),
            o.nr,
            o.p99_rft(),
            o.mean_rft(),
            o.rft.last().copied().unwrap_or(0.0),
            o.rft.len(),
            o.unfinished,
            o.failed,
            o.synack_timeouts,
            o.syn_timeouts,
            o.data_timeouts,
            o.retransmits,
            o.drops,
            o.cpu_drops,
            o.peak_dram,
            o.rport_installs,
            o.cpu_packets
        ));
    }
    write(ctx, "fig5.csv", &csv)?;
    let series: Vec<(String, Vec<(f64, f64)>)> = Setup::ALL
        .iter()
        .map(|&s| {
            (
                s.name().to_string(),
                results
                    .iter()
                    .filter(|(x, _)| *x == s)
                    .map(|(_, o)| (f64::from(o.nr), o.p99_rft()))
                    .collect(),
            )
        })
        .collect();
    Figure::new(
        "Flash crowd: 99th percentile response finish time",
        Axis::new("requests in 1 s (NR)").integer(),
        Axis::new("p99 RFT (s)").auto(),
    )
    .with(series)
    .save(&ctx.path("fig5.png"))?;
    for (s, o) in &results {
        rep.rows.push(Row::new(
            Kind::Prediction,
            &format!("{} NR={}", s.name(), o.nr),
            "p99 RFT (s)",
            None,
            o.p99_rft(),
            Target::None,
        ));
    }

    // Table 1 at the largest NR.
    let big = nrs.iter().copied().max().unwrap_or(1024);
    let at = |s: Setup| results.iter().find(|(x, o)| *x == s && o.nr == big).map(|(_, o)| o);
    let paper_nr = big == 1024;
    let mut t1 = String::from("setup,nr,synack_timeouts,data_timeouts,drops,mean_rft_s,peak_dram_bytes\n");
    for s in Setup::ALL {
        let Some(o) = at(s) else { continue };
        t1.push_str(&format!(
            "{},{},{},{},{},{:.6},{}\n",
            s.name(),
            big,
            o.synack_timeouts,
            o.data_timeouts,
            o.drops,
            o.mean_rft(),
            o.peak_dram
        ));
        let (syn, data, drops, rft) = s.paper_table1();
        let r = |x: f64| if paper_nr { Some(x) } else { None };
        let setting = format!("{} NR={big}", s.name());
        let db = s == Setup::TcpDeepBuffer;
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "SYN-ACK timeouts",
            r(syn),
            o.synack_timeouts as f64,
            if db { Target::AtMost(0.0) } else { Target::None },
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "data timeouts",
            r(data),
            o.data_timeouts as f64,
            if db { Target::AtMost(0.0) } else { Target::None },
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "packet drops",
            r(drops),
            o.drops as f64,
            if db { Target::AtMost(0.0) } else { Target::AtLeast(1.0) },
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "mean RFT (s)",
            r(rft),
            o.mean_rft(),
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "responses not finished",
            Some(0.0),
            o.unfinished as f64,
            Target::AtMost(0.0),
        ));
        if db {
            rep.rows.push(Row::new(
                Kind::Prediction,
                &setting,
                "peak DRAM used (MB)",
                r(16.0),
                o.peak_dram as f64 / 1e6,
                Target::None,
            ));
        }
    }
    if let (Some(db), Some(tcp)) = (at(Setup::TcpDeepBuffer), at(Setup::Tcp)) {
        rep.rows.push(Row::new(
            Kind::Prediction,
            &format!("NR={big}"),
            "mean RFT, deep buffer / TCP w/o",
            if paper_nr { Some(0.65 / 0.82) } else { None },
            db.mean_rft() / tcp.mean_rft().max(1e-12),
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &format!("NR={big}"),
            "p99 RFT, deep buffer / TCP w/o",
            None,
            db.p99_rft() / tcp.p99_rft().max(1e-12),
            Target::AtMost(1.0),
        ));
    }
    write(ctx, "table1.csv", &t1)?;
    if let Some(db) = at(Setup::TcpDeepBuffer) {
        write(ctx, "tcpu-counters.csv", &common::counters_csv(&db.model_report))?;
    }
    rep.files = vec![
        "fig5.png".into(),
        "fig5.svg".into(),
        "fig5.csv".into(),
        "table1.csv".into(),
        "tcpu-counters.csv".into(),
    ];
    rep.notes = vec![
        format!(
            "Network: {PORTS} hosts on one switch, 1 Gb/s links of {} us (100 us base RTT), 24 B Ethernet \
             framing; h0 is the client, h1..h15 the servers; NR requests of {REQUEST_BYTES} B one every \
             1 s / NR, round-robin over the servers; responses of 256 KiB; run until every response \
             finished (at most {} s).",
            LINK_DELAY / US,
            HORIZON / SEC
        ),
        format!(
            "Switch: dedicated {Q_LIMIT}-packet egress queues (Q_limit), ECN step marking above {ECN_K_PKTS} \
             full frames (K) for all setups (only DCTCP sends ECT); the deep-buffer switch has {SIM_CLASSES} \
             strict-priority classes: CPU return traffic first."
        ),
        "TCP, Windows-like (ours: the paper never names its servers' OS): initial RTO (SYN/SYN-ACK timeout) \
         3 s (paper: SYN-ACK timeouts of 3 s), minimum RTO 300 ms (paper §3.2.3 names 300 ms as Windows's), \
         delayed ACK every 2nd segment / 200 ms (Windows default), MSS 1460 without timestamps, SACK, \
         initial window 2 segments (assumed, pre-RFC 6928 stacks), NewReno; DCTCP with g = 1/16 and ECN. 6 SYN retries."
            .into(),
        "TCPU: the paper's defaults (k = 1,792, table channel 14,144/9,524/86,956 ops/s, Q_redirect 80, \
         4 x 1 Gb/s internal links, 1 us per packet on one core, 1 GiB DRAM); long-flow pinning off \
         (every 256 KB response passes 50 KB, and pinning would take it out of the deep buffer) and the \
         attack detector off. The large flow table is on: new flows start on the CPU."
            .into(),
        "DRAM is counted in wire bytes (frame + 24 B framing), as the core paces those at line rate.".into(),
        "Figure 5's values are only given as a plot; the paper's text says RFT grows almost linearly \
         with NR with the deep buffer and reaches about 3 s for some flows without it (SYN-ACK timeouts)."
            .into(),
        "Every gap is discussed in docs/systems/tcpu.md.".into(),
    ];
    Ok(rep)
}

/// The `tcpu-flashcrowd` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "tcpu-flashcrowd",
    about: "TCPU deep buffer vs TCP/DCTCP under a flash crowd of 256 KB responses (paper Fig. 5, Table 1)",
    run,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_spreads_requests_over_one_second_round_robin() {
        let hosts: Vec<NodeId> = (0..16).map(NodeId).collect();
        let w = workload(&hosts, 1024);
        assert_eq!(w.len(), 1024);
        assert!(w.iter().all(|f| f.src == NodeId(0)));
        assert_eq!((w[0].dst, w[14].dst, w[15].dst), (NodeId(1), NodeId(15), NodeId(1)));
        assert_eq!(w[1].start, SEC / 1024);
        assert!(w
            .iter()
            .all(|f| f.start < SEC && f.bytes == REQUEST_BYTES + RESPONSE_BYTES));
        assert!(workload(&hosts[..1], 8).is_empty());
        assert!(run_setup(Setup::Tcp, 0).is_err());
    }
}
