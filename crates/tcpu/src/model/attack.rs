//! `tcpu-attack`: the paper's low-rate burst attack experiment (§4, Figure 6).
//!
//! A 16 x 1 GbE switch; host `h1` sends one long TCP flow to `h0`; `n` attackers (`h2`..)
//! send synchronized UDP bursts to `h0`: 200 KB at 200 Mb/s every 320 ms (5.12 Mb/s on
//! average each). Two setups: a plain switch (no deep buffer), and the [`TcpuModel`] with the
//! deep buffer and the attack detector, which shapes detected attackers to BW_attack
//! (200 Mb/s). The measure is the TCP flow's average throughput over the run.
//!
//! The attackers' bursts start within one datagram gap (58.9 us) of each other, each attacker
//! offset by `gap * i / n`. Sending every attacker's datagrams at the very same instants (a
//! simulation artefact no testbed has) phase-locks with the drop-tail queue: each batch of
//! simultaneous datagrams finds the few slots freed since the previous batch already taken by
//! the ACK-clocked TCP flow, so the attack traffic, not TCP, takes every drop.

use super::common::{self, write, PORTS};
use super::flashcrowd::{self, Setup as FcSetup};
use super::TcpuModel;
use crate::config::TcpuConfig;
use tandem_sim::config::{Marking, TcpConfig};
use tandem_sim::experiment::{Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target};
use tandem_sim::packet::FlowId;
use tandem_sim::plot::{Axis, Figure};
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::time::{as_secs, tx_time, Time, MS, SEC};
use tandem_sim::workload::{udp_onoff, FlowKind, FlowSpec};

/// Bytes of one attack burst (paper §4: 200 KB; 139 datagrams of 1,472 B = 204,608 B).
pub const BURST_PACKETS: u64 = 139;
/// UDP payload per attack datagram (a full 1,500 B IP packet).
pub const ATTACK_PAYLOAD: u32 = 1472;
/// Peak rate of a burst (paper §4: 200 Mb/s).
pub const BURST_BPS: u64 = 200_000_000;
/// Time between burst starts (paper §4: 320 ms).
pub const BURST_PERIOD: Time = 320 * MS;
/// When the (synchronized) attackers start (**ours**: after the TCP flow's slow start).
pub const ATTACK_START: Time = 100 * MS;
/// Most attackers (paper §4: the other 14 servers).
pub const MAX_ATTACKERS: u32 = 14;
/// Attacker counts of the full run (0 = the no-attack baseline).
pub const FULL_ATTACKERS: [u32; 15] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];
/// Attacker counts of the `--quick` run.
pub const QUICK_ATTACKERS: [u32; 3] = [0, 7, 14];
/// Length of the full run (paper §4: 100 s).
pub const FULL_DURATION: Time = 100 * SEC;
/// Length of the `--quick` run.
pub const QUICK_DURATION: Time = 6 * SEC;

/// One of the two setups of Figure 6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setup {
    /// A plain switch: no deep buffer, no defense.
    NoDefense,
    /// TCPU: deep buffer and the attack detector, shaping attackers to BW_attack.
    Defense,
}

impl Setup {
    /// Both, in the paper's order.
    pub const ALL: [Setup; 2] = [Setup::NoDefense, Setup::Defense];

    /// The paper's name.
    pub fn name(self) -> &'static str {
        match self {
            Setup::NoDefense => "w/o DeepBuf",
            Setup::Defense => "with DeepBuf + defense",
        }
    }
}

/// The flash-crowd experiment's Windows-like TCP (minimum RTO 300 ms, initial RTO 3 s, delayed
/// ACK, SACK, NewReno, initial window 2); the paper does not say what its servers ran.
pub fn tcp_config() -> TcpConfig {
    flashcrowd::tcp_config(FcSetup::Tcp)
}

/// TCPU with every policy on, the paper's defaults (BW_attack = 200 Mb/s).
pub fn tcpu_config() -> TcpuConfig {
    TcpuConfig::default()
}

/// The workload: flow 0 is the TCP flow `h1 -> h0` from time 0; flows `1..=n` are the
/// attackers `h2.. -> h0`, synchronized bursts from [`ATTACK_START`] to `duration`.
pub fn workload(
    hosts: &[tandem_sim::packet::NodeId],
    attackers: u32,
    duration: Time,
) -> Result<Vec<FlowSpec>, ExperimentError> {
    let err = |m: String| ExperimentError(format!("tcpu-attack: {m}"));
    if hosts.len() < attackers as usize + 2 {
        return Err(err(format!("{attackers} attackers need {} hosts", attackers + 2)));
    }
    let mut flows = vec![FlowSpec {
        id: FlowId(0),
        src: hosts[1],
        dst: hosts[0],
        start: 0,
        bytes: 1 << 50,
        kind: FlowKind::Bulk,
    }];
    if attackers > 0 {
        let gap = tx_time(u64::from(ATTACK_PAYLOAD), BURST_BPS);
        let on = BURST_PACKETS * gap;
        let pairs: Vec<_> = (0..attackers as usize).map(|i| (hosts[i + 2], hosts[0])).collect();
        let udp = udp_onoff(
            &pairs,
            BURST_BPS,
            ATTACK_PAYLOAD,
            on,
            BURST_PERIOD.saturating_sub(on),
            ATTACK_START,
            duration.saturating_sub(ATTACK_START),
        )
        .map_err(|e| err(e.to_string()))?;
        // Bursts start together; within a burst the attackers' datagrams are spread over the
        // 58.9 us between two of one attacker's datagrams, not sent at the same instants
        // (identical instants phase-lock with the drop-tail queue, see the module docs).
        let n = u64::from(attackers);
        flows.extend(udp.into_iter().enumerate().map(|(i, f)| FlowSpec {
            id: FlowId(i as u32 + 1),
            start: f.start + i as u64 * gap / n,
            ..f
        }));
    }
    Ok(flows)
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The setup.
    pub setup: Setup,
    /// Attackers.
    pub attackers: u32,
    /// The TCP flow's average throughput over the run (goodput), bits per second.
    pub tcp_bps: f64,
    /// Attack traffic delivered to the receiver, bits per second (all attackers).
    pub attack_bps: f64,
    /// Packets dropped anywhere in the switch (egress queues and the CPU).
    pub drops: u64,
    /// TCP retransmission timeouts of the TCP sender.
    pub tcp_timeouts: u64,
    /// Sources the core classified as attackers (0 without the model).
    pub detected: u64,
    /// The model's report counters (empty without it).
    pub model_report: Vec<(String, f64)>,
}

/// Runs one setup with `attackers` attackers for `duration`.
pub fn run_setup(setup: Setup, attackers: u32, duration: Time) -> Result<Outcome, ExperimentError> {
    if duration == 0 {
        return Err(ExperimentError("tcpu-attack: the duration must be above 0".into()));
    }
    let (topo, hosts, sw) = common::testbed(PORTS, "tcpu-attack")?;
    let defense = setup == Setup::Defense;
    let mut sim = Sim::new(
        &topo,
        common::switch_config(defense, Marking::None),
        common::host_queue(),
        tcp_config(),
        workload(&hosts, attackers, duration)?,
        1,
        SimOptions::default(),
    );
    if defense {
        let model = TcpuModel::new(tcpu_config()).map_err(|e| ExperimentError(format!("tcpu-attack: {e:?}")))?;
        sim.attach_model(sw, Box::new(model));
    }
    sim.run_until(duration);
    let secs = as_secs(duration);
    let mut o = Outcome {
        setup,
        attackers,
        tcp_bps: 0.0,
        attack_bps: 0.0,
        drops: common::switch_drops(&sim),
        tcp_timeouts: 0,
        detected: 0,
        model_report: Vec::new(),
    };
    for (spec, r, eps) in sim.flow_results() {
        let bps = r.delivered as f64 * 8.0 / secs;
        if spec.kind == FlowKind::Bulk {
            o.tcp_bps += bps;
            o.tcp_timeouts += eps[0].map_or(0, |e| e.stats().data_timeouts);
        } else {
            o.attack_bps += bps;
        }
    }
    if let Some(m) = sim.model(sw) {
        o.model_report = m.report();
        let get = |k: &str| common::counter(&o.model_report, k) as u64;
        o.drops += get("tcpu_drops_dram_full") + get("tcpu_drops_non_tcp");
        o.detected = get("tcpu_attackers");
    }
    Ok(o)
}

/// Runs every (setup, attacker count) pair, in parallel where there are cores.
pub fn run_all(counts: &[u32], duration: Time) -> Result<Vec<Outcome>, ExperimentError> {
    let jobs: Vec<(Setup, u32)> = Setup::ALL
        .iter()
        .flat_map(|&s| counts.iter().map(move |&n| (s, n)))
        .collect();
    common::par_map(&jobs, common::threads(), |&(s, n)| run_setup(s, n, duration))
        .into_iter()
        .collect()
}

/// The TCP throughput of `setup` with `n` attackers, if it was run.
pub fn tcp_bps(results: &[Outcome], setup: Setup, n: u32) -> Option<f64> {
    results
        .iter()
        .find(|o| o.setup == setup && o.attackers == n)
        .map(|o| o.tcp_bps)
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let (counts, duration): (&[u32], Time) = if ctx.quick {
        (&QUICK_ATTACKERS, QUICK_DURATION)
    } else {
        (&FULL_ATTACKERS, FULL_DURATION)
    };
    (ctx.status)(&format!(
        "{} runs of {} s on {} threads",
        counts.len() * 2,
        duration / SEC,
        common::threads()
    ));
    let results = run_all(counts, duration)?;
    let mut rep = Report {
        title: "TCPU: defending a TCP flow against low-rate burst attacks".into(),
        reference: "Lu et al., HotSDN 2012, §4: Figure 6 (average TCP throughput in 100 s vs attackers)".into(),
        ..Report::default()
    };
    let mut csv = String::from(
        "setup,attackers,tcp_mbps,attack_mbps,drops,tcp_timeouts,detected_attackers,rport_installs,cpu_packets\n",
    );
    for o in &results {
        let get = |k: &str| common::counter(&o.model_report, k);
        csv.push_str(&format!(
            "{},{},{:.3},{:.3},{},{},{},{},{}\n",
            o.setup.name(),
            o.attackers,
            o.tcp_bps / 1e6,
            o.attack_bps / 1e6,
            o.drops,
            o.tcp_timeouts,
            o.detected,
            get("tcpu_rport_installs"),
            get("tcpu_to_cpu_packets")
        ));
    }
    write(ctx, "fig6.csv", &csv)?;
    let series: Vec<(String, Vec<(f64, f64)>)> = Setup::ALL
        .iter()
        .map(|&s| {
            (
                s.name().to_string(),
                results
                    .iter()
                    .filter(|o| o.setup == s)
                    .map(|o| (f64::from(o.attackers), o.tcp_bps / 1e6))
                    .collect(),
            )
        })
        .collect();
    Figure::new(
        "Low-rate burst attack: average TCP throughput",
        Axis::new("attackers").integer(),
        "TCP throughput (Mb/s)",
    )
    .with(series)
    .save(&ctx.path("fig6.png"))?;
    for o in &results {
        rep.rows.push(Row::new(
            Kind::Prediction,
            &format!("{} n={}", o.setup.name(), o.attackers),
            "TCP throughput (Mb/s)",
            None,
            o.tcp_bps / 1e6,
            Target::None,
        ));
    }
    let big = counts.iter().copied().max().unwrap_or(0);
    let paper = big == MAX_ATTACKERS;
    let r = |x: f64| if paper { Some(x) } else { None };
    let base = |s| tcp_bps(&results, s, 0);
    let at_big = |s| tcp_bps(&results, s, big);
    if let (Some(b), Some(t)) = (base(Setup::NoDefense), at_big(Setup::NoDefense)) {
        let setting = format!("{} n={big}", Setup::NoDefense.name());
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "TCP throughput (Mb/s)",
            r(40.0),
            t / 1e6,
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "TCP throughput / no attack",
            None,
            t / b.max(1.0),
            Target::None,
        ));
    }
    if let (Some(b), Some(t)) = (base(Setup::Defense), at_big(Setup::Defense)) {
        let setting = format!("{} n={big}", Setup::Defense.name());
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "TCP throughput loss vs no attack (Mb/s)",
            r(70.0),
            (b - t) / 1e6,
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "TCP throughput / no attack",
            None,
            t / b.max(1.0),
            Target::AtLeast(0.5),
        ));
        if let Some(nd) = at_big(Setup::NoDefense) {
            rep.rows.push(Row::new(
                Kind::Prediction,
                &format!("n={big}"),
                "TCP throughput, with defense - without (Mb/s)",
                None,
                (t - nd) / 1e6,
                Target::AtLeast(1.0),
            ));
        }
    }
    if let Some(o) = results.iter().find(|o| o.setup == Setup::Defense && o.attackers == big) {
        rep.rows.push(Row::new(
            Kind::Prediction,
            &format!("{} n={big}", Setup::Defense.name()),
            "attack traffic delivered (Mb/s)",
            r(f64::from(MAX_ATTACKERS) * 5.12),
            o.attack_bps / 1e6,
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &format!("{} n={big}", Setup::Defense.name()),
            "sources classified as attackers",
            Some(f64::from(big)),
            o.detected as f64,
            Target::None,
        ));
        write(ctx, "tcpu-counters.csv", &common::counters_csv(&o.model_report))?;
    }
    rep.files = vec![
        "fig6.png".into(),
        "fig6.svg".into(),
        "fig6.csv".into(),
        "tcpu-counters.csv".into(),
    ];
    rep.notes = vec![
        format!(
            "Network: {PORTS} hosts on one switch, 1 Gb/s links of 25 us (100 us base RTT); h1 sends one \
             long TCP flow to h0 for {} s; attackers h2.. send synchronized UDP bursts to h0 from {} ms: \
             {BURST_PACKETS} datagrams of {ATTACK_PAYLOAD} B (204,608 B, the paper's 200 KB) at {} Mb/s \
             every {} ms.",
            duration / SEC,
            ATTACK_START / MS,
            BURST_BPS / 1_000_000,
            BURST_PERIOD / MS
        ),
        "Switch: dedicated 100-packet egress queues, tail drop. The defense setup runs TCPU with the \
         paper's defaults (deep buffer, long-flow pinning, attack detector: 1 ms bins, 3 s windows, \
         BW_attack 200 Mb/s)."
            .into(),
        "TCP as the flash-crowd experiment (Windows-like, ours: the paper does not name its servers' \
         OS): minimum RTO 300 ms, delayed ACK, SACK, NewReno, initial window 2, 6 MB receive buffer."
            .into(),
        "Throughput is the TCP flow's goodput averaged over the whole run. Figure 6's values are only \
         given as a plot and two sentences (40 Mb/s at 14 attackers without the deep buffer; about 70 Mb/s \
         below no attack with it). Gaps are discussed in docs/systems/tcpu.md."
            .into(),
    ];
    Ok(rep)
}

/// The `tcpu-attack` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "tcpu-attack",
    about: "TCPU low-rate burst attack defense: one TCP flow vs 1..14 synchronized attackers (paper Fig. 6)",
    run,
};

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_sim::packet::NodeId;

    #[test]
    fn attackers_burst_200kb_every_320ms() {
        let hosts: Vec<NodeId> = (0..16).map(NodeId).collect();
        let w = workload(&hosts, 14, 10 * SEC).expect("workload");
        assert_eq!(w.len(), 15);
        assert_eq!((w[0].src, w[0].dst, w[0].kind), (NodeId(1), NodeId(0), FlowKind::Bulk));
        for (i, f) in w.iter().enumerate() {
            assert_eq!(f.id, FlowId(i as u32));
        }
        let FlowKind::UdpOnOff { on, off, rate_bps, .. } = w[14].kind else {
            panic!("attackers are on-off UDP sources");
        };
        assert_eq!(on + off, BURST_PERIOD);
        assert_eq!(rate_bps, BURST_BPS);
        assert_eq!(w[14].src, NodeId(15));
        // 31 whole bursts and part of one in 9.9 s.
        assert_eq!(w[14].bytes % u64::from(ATTACK_PAYLOAD), 0);
        assert!(w[14].bytes >= 31 * BURST_PACKETS * u64::from(ATTACK_PAYLOAD));
        assert!(workload(&hosts, 15, SEC).is_err());
        assert!(run_setup(Setup::NoDefense, 1, 0).is_err());
    }
}
