//! The simulated testbed: servers whose VM traffic passes a Flow-Arbiter and an OVS-like
//! virtual switch, one physical OpenFlow ToR with a line-rate data plane, a 2K-entry TCAM and
//! a weak control CPU, and a controller that sets up rules reactively and runs Flow-Prediction.
//!
//! It runs on the simulator's kernel (since 2026-11-28; before, on an event loop of its own,
//! whose numbers the CoSwitch page keeps beside these): the servers are hosts, the ToR is the
//! placed CoSwitch rack ([`super::placed::CoswitchTor`]) with this configuration's approach,
//! and every flow of the workload is an open-loop Poisson UDP source of its packets
//! ([`tandem_sim::workload::udp_poisson_packets`]: the first packet one gap after the flow's
//! start, where the loop sent it at the start) to one sink host, on 100 Gb/s links of no delay
//! that count packet bytes only, so that only the cores and the control CPU limit the rack. CPU
//! work is served first come first served by [`CpuQueue`]s; a server's work happens at the
//! ToR's ingress, a few nanoseconds after the packet left the server; a packet is at least the
//! 42 bytes of its Ethernet, IPv4 and UDP headers (a replayed record's smaller mean is raised to
//! that). What each packet costs
//! depends on the [`Approach`]:
//!
//! | approach | server (per packet) | physical switch |
//! |---|---|---|
//! | `StaticRules` (Fig. 4) | I/O + OVS | static wildcard rules, no CPU |
//! | `VswitchOnly` | I/O + OVS, + an upcall per new flow | static wildcard rules |
//! | `PhysicalOnly` | I/O + OVS (static rules) | a reactive rule per flow |
//! | `CoSwitch` | mice: arbiter + I/O + OVS (+ upcall); elephants: arbiter + I/O only | static rules for unmarked packets; a reactive rule per marked flow |
//!
//! In CoSwitch the physical switch's per-flow rules for elephants are, by default, set up
//! **proactively** ([`ElephantRules::Proactive`], **ours**): the Flow-Arbiter tells the
//! controller when a flow turns elephant (both are CoSwitch's own software, already talking
//! to each other), the controller installs the rule one round trip later, and until it is in
//! place the marked packets follow a low-priority wildcard rule for marked traffic. The
//! switch CPU then pays one insert and one removal per elephant, nothing per packet, and a
//! full TCAM only means an elephant forwarded by the wildcard. [`ElephantRules::Reactive`]
//! instead sends marked packets that miss to the controller, as physical only does.
//!
//! Reactive rules on the physical switch follow OpenFlow 1.0 as the paper's switch ran it: a
//! packet that matches no installed rule costs the control CPU a packet_in (and is forwarded
//! by packet_out); the first such packet of a flow makes the controller send a flow_mod one
//! controller round trip later, which costs the CPU a table insert; a rule idle for the idle
//! timeout is removed, which costs a flow_removed. When the TCAM is full a flow_mod is
//! processed and refused (OFPFMFC_ALL_TABLES_FULL), and that flow's packets keep taking the
//! slow path; the controller retries at its next packet_in. Work that would wait in a CPU
//! queue longer than its limit is dropped with a reason.

use super::placed::{CoswitchTor, RackConfig};
use super::record::RackRecorder;
use super::workload::{generate, FlowSpec, Stream};
use crate::arbiter::ArbiterConfig;
use crate::prediction::{FlowPrediction, PredictionConfig, PredictionConfigError};
use crate::types::{Time, MS, SEC, US};
use tandem_sim::config::{LinkConfig, QueueConfig, SwitchConfig as KernelSwitch, TcpConfig, ETHERNET_HEADER};
use tandem_sim::packet::NodeId;
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::topology::Topology;
use tandem_sim::workload::{self, UDP_MIN_PACKET_BYTES};

/// Which switches do the OpenFlow work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approach {
    /// Pre-installed wildcard rules everywhere: no control work at all (paper Fig. 4).
    StaticRules,
    /// All flows handled per flow in the servers' virtual switches.
    VswitchOnly,
    /// All flows handled per flow in the physical switch.
    PhysicalOnly,
    /// Mice in the virtual switches, elephants in the physical switch.
    CoSwitch,
}

impl Approach {
    /// Its name in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Approach::StaticRules => "static rules",
            Approach::VswitchOnly => "vswitch only",
            Approach::PhysicalOnly => "physical only",
            Approach::CoSwitch => "CoSwitch",
        }
    }
}

/// How CoSwitch's elephants get their per-flow rules on the physical switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElephantRules {
    /// The arbiter's notice makes the controller install the rule; marked packets follow a
    /// wildcard rule meanwhile (default).
    Proactive,
    /// A marked packet that misses goes to the controller (packet_in), as in physical only.
    Reactive,
}

/// CPU cost of the server path (one core per server).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerCosts {
    /// Network I/O (virtio, tap, NIC driver) per packet: paid by every packet.
    pub io_packet: Time,
    /// Network I/O per byte.
    pub io_byte: Time,
    /// Virtual-switch processing per packet (lookup, actions).
    pub ovs_packet: Time,
    /// Virtual-switch processing per byte.
    pub ovs_byte: Time,
    /// A virtual-switch miss: upcall to the daemon, rule from the controller, install.
    pub upcall: Time,
    /// The Flow-Arbiter's hook and per-flow count, per packet.
    pub arbiter: Time,
}

impl Default for ServerCosts {
    /// I/O 3.5 us + 0.5 ns/B, OVS 8.5 us + 0.5 ns/B: 12.5 us for a 500 B packet, so one core
    /// saturates at 80 kpps of the trace mix (paper Fig. 4; **calibrated**). The I/O share (30%)
    /// is **ours**: the paper says only that network I/O is "another part" of the cost
    /// (Fig. 7). Upcall 20 us and arbiter 0.2 us: **ours**.
    fn default() -> Self {
        ServerCosts {
            io_packet: 3_500 * 1_000,
            io_byte: 500,
            ovs_packet: 8_500 * 1_000,
            ovs_byte: 500,
            upcall: 20 * US,
            arbiter: 200 * 1_000,
        }
    }
}

/// CPU cost of the physical switch's control plane.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwitchCosts {
    /// One packet_in (and the packet_out that forwards the packet).
    pub packet_in: Time,
    /// Processing one flow_mod (insert, or refuse when the table is full).
    pub flow_add: Time,
    /// Removing an idle rule and sending flow_removed.
    pub flow_del: Time,
}

impl Default for SwitchCosts {
    /// 0.23 + 0.65 + 0.23 ms per flow (about 900 flow set-ups a second): **calibrated** so
    /// that, with a TCAM large enough never to refuse a rule, the control CPU saturates near
    /// 7.7 kpps of the trace mix under reactive control (paper Fig. 5); of the order of the few hundred set-ups per second measured on switches of
    /// that generation (DevoFlow, SIGCOMM 2011: 275 per second on an HP ProCurve 5406zl).
    fn default() -> Self {
        SwitchCosts {
            packet_in: 230 * US,
            flow_add: 650 * US,
            flow_del: 230 * US,
        }
    }
}

/// Everything a run needs.
#[derive(Debug, Clone, PartialEq)]
pub struct NetConfig {
    /// Which switches do the work.
    pub approach: Approach,
    /// Servers sending traffic (each with its own arbiter and virtual switch).
    pub servers: u32,
    /// Server CPU costs.
    pub server: ServerCosts,
    /// Physical switch CPU costs.
    pub switch: SwitchCosts,
    /// TCAM entries for per-flow rules (paper: 2K on the Pronto 3290).
    pub tcam_entries: usize,
    /// Idle timeout of the physical switch's per-flow rules (paper: 3 s).
    pub switch_idle_timeout: Time,
    /// Idle timeout of the virtual switch's per-flow rules (**ours**: 10 s).
    pub vswitch_idle_timeout: Time,
    /// Controller round trip for a rule set-up (**ours**: 1 ms).
    pub controller_rtt: Time,
    /// Longest wait in a server core's queue before a packet is dropped (**ours**: 10 ms).
    pub server_max_wait: Time,
    /// Longest wait in the switch control CPU's queue (**ours**: 100 ms).
    pub switch_max_wait: Time,
    /// The Flow-Arbiter (its threshold is the fixed one when `adaptive` is off).
    pub arbiter: ArbiterConfig,
    /// Flow-Prediction.
    pub prediction: PredictionConfig,
    /// Whether Flow-Prediction moves the threshold (CoSwitch only).
    pub adaptive: bool,
    /// How CoSwitch's elephant rules are set up.
    pub elephant_rules: ElephantRules,
    /// Simulated time.
    pub duration: Time,
    /// Measurements start here.
    pub warmup: Time,
    /// Seed of all randomness.
    pub seed: u64,
}

impl Default for NetConfig {
    /// One sending server (the paper's VM1 on Server1), CoSwitch, the defaults above, 40 s
    /// with 20 s of warm-up.
    fn default() -> Self {
        NetConfig {
            approach: Approach::CoSwitch,
            servers: 1,
            server: ServerCosts::default(),
            switch: SwitchCosts::default(),
            tcam_entries: 2048,
            switch_idle_timeout: 3 * SEC,
            vswitch_idle_timeout: 10 * SEC,
            controller_rtt: MS,
            server_max_wait: 10 * MS,
            switch_max_wait: 100 * MS,
            arbiter: ArbiterConfig::default(),
            prediction: PredictionConfig::default(),
            adaptive: true,
            elephant_rules: ElephantRules::Proactive,
            duration: 40 * SEC,
            warmup: 20 * SEC,
            seed: 1,
        }
    }
}

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The server core's queue was too long (virtual switch overloaded).
    VswitchCpu,
    /// The switch control CPU's queue was too long (packet_in not taken).
    SwitchCpu,
}

/// One control period's measurements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// End of the period, seconds.
    pub t: f64,
    /// Threshold in force at the end of the period.
    pub threshold: u32,
    /// The busiest server core's utilization.
    pub server_cpu: f64,
    /// The switch control CPU's utilization.
    pub switch_cpu: f64,
    /// TCAM entries in use.
    pub tcam: usize,
    /// Packets offered in the period, per second.
    pub pps: f64,
}

/// Flows of at least this many packets are elephants in [`CostSplit`] (the paper's Figure 1
/// threshold, the Flow-Arbiter's default first threshold): the trace's own sizes, known to the
/// model, not the arbiter's running count.
pub const ELEPHANT_PACKETS: u32 = 18;

/// Server core time spent in the measurement window, summed over the servers, by what it was
/// for (paper Figure 7), picoseconds. Work refused by a full core queue is not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CostSplit {
    /// Network I/O (virtio, tap, NIC driver), paid by every packet.
    pub io: Time,
    /// Vswitch processing (lookups, actions, upcalls) of mice's packets (flows under
    /// [`ELEPHANT_PACKETS`] packets).
    pub mice: Time,
    /// Vswitch processing of elephants' packets.
    pub elephants: Time,
    /// The Flow-Arbiter's hook (CoSwitch only).
    pub arbiter: Time,
}

impl CostSplit {
    /// All of it.
    pub fn total(&self) -> Time {
        self.io + self.mice + self.elephants + self.arbiter
    }
}

/// What a run measured (over the window after warm-up unless said otherwise).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Per control period, over the whole run.
    pub samples: Vec<Sample>,
    /// Packets offered per second.
    pub offered_pps: f64,
    /// Bytes offered per second.
    pub offered_bytes_per_sec: f64,
    /// Mean utilization of the busiest server core.
    pub server_cpu: f64,
    /// Mean utilization of the switch control CPU.
    pub switch_cpu: f64,
    /// Time-mean TCAM entries.
    pub tcam_mean: f64,
    /// Most TCAM entries at once.
    pub tcam_max: usize,
    /// Mean per-flow rules in the busiest virtual switch (sampled per period).
    pub vswitch_rules: f64,
    /// Rules installed in the physical switch.
    pub switch_installs: u64,
    /// flow_mods refused because the TCAM was full.
    pub table_full: u64,
    /// Packets that took the switch's slow path (packet_in).
    pub slow_path_packets: u64,
    /// flow_mods lost to a full control-CPU queue.
    pub flow_mods_lost: u64,
    /// Virtual-switch upcalls.
    pub upcalls: u64,
    /// Marked packets forwarded by the wildcard rule while their flow had no rule.
    pub wildcard_marked: u64,
    /// Packets marked as elephants.
    pub elephant_packets: u64,
    /// Packets offered.
    pub packets: u64,
    /// Packets dropped, by reason.
    pub drops: Vec<(DropReason, u64)>,
    /// Threshold at the end of the run.
    pub threshold: u32,
    /// Threshold changes over the run.
    pub threshold_steps: u64,
    /// Reversals of the threshold's direction over the run.
    pub threshold_reversals: u64,
    /// Server core time by purpose (paper Figure 7).
    pub server_cost: CostSplit,
}

impl Sample {
    /// The column names of [`Sample::csv_fields`].
    pub const CSV_HEADER: &'static str = "t_s,threshold,server_cpu,switch_cpu,tcam,pps";

    /// The sample as CSV fields (no line end), in the order of [`Sample::CSV_HEADER`].
    pub fn csv_fields(&self) -> String {
        format!(
            "{},{},{:.4},{:.4},{},{:.0}",
            self.t, self.threshold, self.server_cpu, self.switch_cpu, self.tcam, self.pps
        )
    }
}

impl Outcome {
    /// The column names of [`Outcome::cost_csv_fields`].
    pub const COST_CSV_HEADER: &'static str =
        "server_cpu,switch_cpu,tcam_mean,tcam_max,switch_installs,table_full,slow_path_packets,upcalls,elephant_packets";

    /// What the run cost each side, as CSV fields (no line end), in the order of
    /// [`Outcome::COST_CSV_HEADER`].
    pub fn cost_csv_fields(&self) -> String {
        format!(
            "{:.4},{:.4},{:.1},{},{},{},{},{},{}",
            self.server_cpu,
            self.switch_cpu,
            self.tcam_mean,
            self.tcam_max,
            self.switch_installs,
            self.table_full,
            self.slow_path_packets,
            self.upcalls,
            self.elephant_packets
        )
    }

    /// Packets dropped for `reason`.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.drops.iter().find(|(r, _)| *r == reason).map_or(0, |(_, n)| *n)
    }

    /// Samples with `t` in `[from, to)` seconds.
    pub fn samples_between(&self, from: f64, to: f64) -> impl Iterator<Item = &Sample> {
        self.samples.iter().filter(move |s| s.t > from && s.t <= to)
    }
}

/// Why a run could not start.
#[derive(Debug, Clone, PartialEq)]
pub enum NetError {
    /// The Flow-Prediction parameters are unusable.
    Prediction(PredictionConfigError),
    /// Another parameter is unusable.
    Config(String),
}

impl std::fmt::Display for NetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NetError::Prediction(e) => write!(f, "flow prediction: {e}"),
            NetError::Config(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for NetError {}

/// Utilization is kept in buckets of this length.
const BUCKET: Time = 10 * MS;

/// The rate of every link of the experiments' rack, b/s: fast enough that no link, only the
/// cores and the control CPU, limits what the rack carries.
pub const LINK_BPS: u64 = 100_000_000_000;

/// Runs `flows` through the testbed on the simulator's kernel: `servers` hosts and one sink on
/// a ToR that is the placed CoSwitch rack ([`super::placed::CoswitchTor`], with this
/// configuration's approach, costs and timeouts), each flow a Poisson UDP source of its
/// packets from its server to the sink, measured over `[warmup, duration)` by the rack's
/// recorder ([`super::record`]).
pub fn run(cfg: &NetConfig, flows: &[FlowSpec]) -> Result<Outcome, NetError> {
    FlowPrediction::new(cfg.prediction).map_err(NetError::Prediction)?;
    if cfg.servers == 0 || cfg.duration <= cfg.warmup || cfg.prediction.period < BUCKET {
        return Err(NetError::Config(
            "need servers > 0, duration > warmup and a control period of at least 10 ms".into(),
        ));
    }
    let err = |e: String| NetError::Config(e);
    let link = LinkConfig {
        rate_bps: LINK_BPS,
        delay: 0,
        framing_overhead: 0,
        l2_header: ETHERNET_HEADER,
    };
    let topo = Topology::star(cfg.servers + 1, link).map_err(|e| err(e.to_string()))?;
    let sink = NodeId(cfg.servers);
    let tor = NodeId(cfg.servers + 1);
    let mut ordered: Vec<&FlowSpec> = flows.iter().collect();
    ordered.sort_by_key(|f| f.start);
    let mut specs = Vec::with_capacity(ordered.len());
    let mut sizes = Vec::with_capacity(ordered.len());
    for f in ordered.iter().filter(|f| f.packets > 0 && f.start < cfg.duration) {
        let bytes = f.packet_bytes.max(UDP_MIN_PACKET_BYTES);
        let rate = (u128::from(bytes) * 8 * u128::from(SEC) / u128::from(f.gap.max(1))).max(1);
        let rate = u64::try_from(rate).unwrap_or(u64::MAX);
        let src = NodeId(f.server % cfg.servers);
        specs.push(
            workload::udp_poisson_packets(src, sink, rate, bytes, f.start, f.packets)
                .map_err(|e| err(e.to_string()))?,
        );
        sizes.push(f.packets);
    }
    let unlimited = QueueConfig {
        limit_packets: 0,
        limit_bytes: 0,
        ..QueueConfig::default()
    };
    let mut sim = Sim::new(
        &topo,
        KernelSwitch {
            queue: unlimited,
            ..KernelSwitch::default()
        },
        unlimited,
        TcpConfig::default(),
        workload::finalize(specs),
        cfg.seed,
        SimOptions::default(),
    );
    let rack = RackConfig {
        table_entries: cfg.tcam_entries,
        server: cfg.server,
        switch: cfg.switch,
        rule_idle_timeout: cfg.switch_idle_timeout,
        vswitch_idle_timeout: cfg.vswitch_idle_timeout,
        controller_rtt: cfg.controller_rtt,
        server_max_wait: cfg.server_max_wait,
        switch_max_wait: cfg.switch_max_wait,
        adaptive: cfg.adaptive && cfg.approach == Approach::CoSwitch,
        arbiter: cfg.arbiter,
        prediction: cfg.prediction,
        approach: cfg.approach,
        elephant_rules: cfg.elephant_rules,
    };
    let mut host_ports = vec![true; cfg.servers as usize];
    host_ports.push(false); // the sink's port: traffic from elsewhere
    let model = CoswitchTor::new(rack, &host_ports).with_recorder(RackRecorder::new(cfg.warmup, cfg.duration, sizes));
    sim.attach_model(tor, Box::new(model));
    // Events at the end itself are not run (the experiments' loop stopped before them).
    sim.run_until(cfg.duration - 1);
    sim.model_as::<CoswitchTor>(tor)
        .and_then(|m| m.outcome(cfg.warmup, cfg.duration))
        .ok_or_else(|| err("the ToR lost its model".into()))
}

/// Generates the streams' flows (each from its own seed derived from `seed`) and merges them
/// in start order.
pub fn flows_of(streams: &[Stream], servers: u32, seed: u64) -> Vec<FlowSpec> {
    let mut all: Vec<FlowSpec> = streams
        .iter()
        .enumerate()
        .flat_map(|(i, s)| generate(s, servers, seed.wrapping_add((i as u64 + 1) * 0x51_7cc1_b727_220a)))
        .collect();
    all.sort_by_key(|f| f.start);
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::workload::TraceMix;

    fn short(approach: Approach) -> NetConfig {
        NetConfig {
            approach,
            duration: 8 * SEC,
            warmup: 4 * SEC,
            ..NetConfig::default()
        }
    }

    fn flows(pps: f64, until: Time) -> Vec<FlowSpec> {
        flows_of(&[Stream::at_pps(TraceMix::paper(), pps, 0, until)], 1, 3)
    }

    #[test]
    fn deterministic() {
        let f = flows(5_000.0, 8 * SEC);
        let a = run(&short(Approach::CoSwitch), &f).expect("run");
        let b = run(&short(Approach::CoSwitch), &f).expect("run");
        assert_eq!(a, b);
    }

    #[test]
    fn static_rules_cost_the_switch_nothing_and_the_server_per_packet() {
        let f = flows(20_000.0, 8 * SEC);
        let o = run(&short(Approach::StaticRules), &f).expect("run");
        assert_eq!(o.switch_cpu, 0.0);
        assert_eq!(o.switch_installs, 0);
        // 12.5 us per 500 B packet: about 25% of a core at 20 kpps.
        assert!(o.server_cpu > 0.18 && o.server_cpu < 0.32, "{}", o.server_cpu);
    }

    #[test]
    fn every_reactive_flow_gets_a_rule_or_a_refusal() {
        let f = flows(2_000.0, 8 * SEC);
        let o = run(&short(Approach::PhysicalOnly), &f).expect("run");
        assert!(o.switch_installs > 0);
        assert!(o.tcam_max <= 2048);
        assert_eq!(o.table_full, 0, "2 kpps fits the table");
        assert_eq!(o.dropped(DropReason::SwitchCpu), 0);
        assert!(o.slow_path_packets >= o.switch_installs);
    }

    #[test]
    fn bad_configs_are_errors() {
        let f = flows(1_000.0, SEC);
        let mut c = short(Approach::CoSwitch);
        c.servers = 0;
        assert!(run(&c, &f).is_err());
        let mut c = short(Approach::CoSwitch);
        c.prediction.period = 0;
        assert!(matches!(run(&c, &f), Err(NetError::Prediction(_))));
    }
}
