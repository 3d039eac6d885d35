//! CoSwitch in a user's own scenario: the `[[system]]` kind `"coswitch"`, a rack whose ToR is
//! the physical switch and whose hosts are the servers.
//!
//! ```toml
//! [[system]]
//! kind = "coswitch"
//! switches = ["leaf0"]
//! table_entries = 200
//! ```
//!
//! Each host attached to a named switch is a server with one core for its virtual switch
//! ([`CpuQueue`]) and its own [`FlowArbiter`]; the switch is the ToR with a table of
//! `table_entries` per-flow rules, a control CPU and a controller running [`FlowPrediction`]
//! for the rack. What a packet does, on the simulator's kernel (links, queues, routing, TCP):
//!
//! * **A packet a server sends** (it enters the ToR on a host port) first passes that server's
//!   arbiter. A mouse's packet costs the server core the arbiter, network I/O and the vswitch
//!   (plus an upcall when the vswitch holds no rule for the flow, rules idling out after
//!   `vswitch_idle_timeout`); an elephant's packet costs the arbiter and I/O only, and is
//!   marked. The packet goes on (tables, routing) when the core has done that work: it waits
//!   for the core, first come first served, and is dropped with reason `vswitch-cpu` when it
//!   would wait longer than `server_max_wait`. (The work happens in the server before its NIC;
//!   the model does it at the ToR's ingress, after the host link, which moves the wait past
//!   the link but keeps its length.)
//! * **Elephant rules** are set up proactively, as in the CoSwitch experiments: the arbiter's
//!   notice makes the controller send a flow_mod one `controller_rtt` later, which costs the
//!   control CPU `flow_add` and installs a rule if the table has room; a rule idle for
//!   `rule_idle_timeout` is removed (`flow_del`). Until its rule is in, a marked packet follows
//!   the wildcard rule for marked traffic. Both are line rate: the ToR's table decides what the
//!   control CPU and the table pay, not how fast packets go.
//! * **Packets from the fabric** (other racks, whose own arbiters ran) and unmarked packets
//!   take the ToR's default forwarding.
//! * **Flow-Prediction** gets each `period` a [`LoadReport`] (each server core's busy share,
//!   the control CPU's, the table fill) and its new threshold reaches every arbiter of the rack
//!   half a `controller_rtt` later (with `adaptive = false` the threshold stays fixed).
//!
//! * **`approach`** puts the paper's baselines in the same place: `"vswitch_only"` (I/O and
//!   vswitch per packet, an upcall per new flow, no ToR rules), `"physical_only"` (I/O and a
//!   static-rule vswitch per packet; a ToR rule per flow set up reactively: a packet that
//!   misses costs the control CPU a `packet_in`, goes on by packet_out when the CPU has done
//!   it, and is dropped, `switch-cpu`, when it would wait longer than `switch_max_wait`; the
//!   first miss makes the controller send a flow_mod one `controller_rtt` after the CPU is
//!   free) and `"static_rules"` (I/O and vswitch per packet, nothing per flow);
//!   `elephant_rules = "reactive"` sends CoSwitch's marked packets that miss the slow path
//!   instead of the wildcard rule.
//!
//! The simulated packet carries no DSCP field: marking is counted, not written (the real
//! rewrite is [`crate::marking`], tested on frames). Costs and timeouts default to the
//! CoSwitch experiments' ([`ServerCosts`], [`SwitchCosts`], [`NetConfig`]).

use super::cpu::CpuQueue;
use super::network::{Approach, ElephantRules, NetConfig, ServerCosts, SwitchCosts};
use super::record::{PacketCost, RackRecorder};
use crate::arbiter::{ArbiterConfig, FlowArbiter, Verdict as ArbiterVerdict};
use crate::prediction::{FlowPrediction, LoadReport, PredictionConfig};
use crate::types::{Time, MS};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::sync::Arc;
use tandem_sim::packet::{NodeId, PacketId};
use tandem_sim::scenario::system::{Placement, Site, SystemKind};
use tandem_sim::scenario::ScenarioError;
use tandem_sim::switch::{SwitchCtx, SwitchModel, Verdict};
use tandem_sim::units::{SizeArg, TimeArg};

/// The `"coswitch"` kind of `[[system]]` entries.
#[derive(Debug, Clone, Copy, Default)]
pub struct CoswitchKind;

/// Utilization is kept in buckets of this length (as in the experiments' model).
const BUCKET: Time = 10 * MS;

/// A placed rack's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct RackConfig {
    /// Per-flow rules the ToR holds (paper: 2K on the Pronto 3290).
    pub table_entries: usize,
    /// Server costs.
    pub server: ServerCosts,
    /// Control-CPU costs.
    pub switch: SwitchCosts,
    /// Idle timeout of the ToR's per-flow rules.
    pub rule_idle_timeout: Time,
    /// Idle timeout of the vswitch's per-flow rules and of the arbiter's flow state.
    pub vswitch_idle_timeout: Time,
    /// Controller round trip.
    pub controller_rtt: Time,
    /// Longest wait in a server core's queue before a packet is dropped.
    pub server_max_wait: Time,
    /// Longest wait in the control CPU's queue before a flow_mod is lost.
    pub switch_max_wait: Time,
    /// Whether Flow-Prediction moves the threshold.
    pub adaptive: bool,
    /// The threshold (the first one when adaptive) and the arbiter's state limit.
    pub arbiter: ArbiterConfig,
    /// Flow-Prediction.
    pub prediction: PredictionConfig,
    /// Which switches do the per-flow work (CoSwitch, or one of the paper's baselines).
    pub approach: Approach,
    /// How CoSwitch's elephants get their ToR rules.
    pub elephant_rules: ElephantRules,
}

impl Default for RackConfig {
    /// The CoSwitch experiments' values ([`NetConfig::default`]).
    fn default() -> Self {
        let n = NetConfig::default();
        RackConfig {
            table_entries: n.tcam_entries,
            server: n.server,
            switch: n.switch,
            rule_idle_timeout: n.switch_idle_timeout,
            vswitch_idle_timeout: n.vswitch_idle_timeout,
            controller_rtt: n.controller_rtt,
            server_max_wait: n.server_max_wait,
            switch_max_wait: n.switch_max_wait,
            adaptive: n.adaptive,
            arbiter: n.arbiter,
            prediction: n.prediction,
            approach: Approach::CoSwitch,
            elephant_rules: ElephantRules::Proactive,
        }
    }
}

/// `approach` as a scenario file writes it.
#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawApproach {
    Coswitch,
    VswitchOnly,
    PhysicalOnly,
    StaticRules,
}

/// `elephant_rules` as a scenario file writes it.
#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawElephantRules {
    Proactive,
    Reactive,
}

/// The parameters as a scenario file writes them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRack {
    table_entries: Option<u32>,
    threshold: Option<u32>,
    adaptive: Option<bool>,
    period: Option<TimeArg>,
    min_threshold: Option<u32>,
    max_threshold: Option<u32>,
    rule_idle_timeout: Option<TimeArg>,
    vswitch_idle_timeout: Option<TimeArg>,
    controller_rtt: Option<TimeArg>,
    server_max_wait: Option<TimeArg>,
    switch_max_wait: Option<TimeArg>,
    io_per_packet: Option<TimeArg>,
    io_per_kb: Option<TimeArg>,
    vswitch_per_packet: Option<TimeArg>,
    vswitch_per_kb: Option<TimeArg>,
    upcall: Option<TimeArg>,
    arbiter_per_packet: Option<TimeArg>,
    flow_add: Option<TimeArg>,
    flow_del: Option<TimeArg>,
    max_flows: Option<SizeArg>,
    approach: Option<RawApproach>,
    elephant_rules: Option<RawElephantRules>,
    packet_in: Option<TimeArg>,
}

fn read(site: &Site<'_>, params: toml::Value) -> Result<RackConfig, ScenarioError> {
    let r: RawRack = site.de(params)?;
    let mut c = RackConfig::default();
    let t = |v: Option<TimeArg>, d: Time| v.map_or(d, |a| a.0);
    if let Some(n) = r.table_entries {
        c.table_entries = n as usize;
    }
    c.rule_idle_timeout = t(r.rule_idle_timeout, c.rule_idle_timeout);
    c.vswitch_idle_timeout = t(r.vswitch_idle_timeout, c.vswitch_idle_timeout);
    c.controller_rtt = t(r.controller_rtt, c.controller_rtt);
    c.server_max_wait = t(r.server_max_wait, c.server_max_wait);
    c.switch_max_wait = t(r.switch_max_wait, c.switch_max_wait);
    c.server.io_packet = t(r.io_per_packet, c.server.io_packet);
    c.server.io_byte = r.io_per_kb.map_or(c.server.io_byte, |a| a.0 / 1000);
    c.server.ovs_packet = t(r.vswitch_per_packet, c.server.ovs_packet);
    c.server.ovs_byte = r.vswitch_per_kb.map_or(c.server.ovs_byte, |a| a.0 / 1000);
    c.server.upcall = t(r.upcall, c.server.upcall);
    c.server.arbiter = t(r.arbiter_per_packet, c.server.arbiter);
    c.switch.flow_add = t(r.flow_add, c.switch.flow_add);
    c.switch.flow_del = t(r.flow_del, c.switch.flow_del);
    c.switch.packet_in = t(r.packet_in, c.switch.packet_in);
    c.approach = match r.approach {
        None | Some(RawApproach::Coswitch) => Approach::CoSwitch,
        Some(RawApproach::VswitchOnly) => Approach::VswitchOnly,
        Some(RawApproach::PhysicalOnly) => Approach::PhysicalOnly,
        Some(RawApproach::StaticRules) => Approach::StaticRules,
    };
    c.elephant_rules = match r.elephant_rules {
        None | Some(RawElephantRules::Proactive) => ElephantRules::Proactive,
        Some(RawElephantRules::Reactive) if c.approach == Approach::CoSwitch => ElephantRules::Reactive,
        Some(RawElephantRules::Reactive) => {
            return Err(site.error("elephant_rules", "applies to `approach = \"coswitch\"` only"))
        }
    };
    // Only CoSwitch moves a threshold.
    c.adaptive &= c.approach == Approach::CoSwitch;
    c.adaptive = r.adaptive.unwrap_or(c.adaptive);
    c.arbiter.idle_timeout = c.vswitch_idle_timeout;
    if let Some(m) = r.max_flows {
        c.arbiter.max_flows = usize::try_from(m.0).map_err(|_| site.error("max_flows", "too large"))?;
    }
    if let Some(th) = r.threshold {
        if th == 0 {
            return Err(site.error("threshold", "must be at least 1 (packets)"));
        }
        c.arbiter.threshold = th;
        c.prediction.initial_threshold = th;
    }
    c.prediction.period = t(r.period, c.prediction.period);
    c.prediction.min_threshold = r.min_threshold.unwrap_or(c.prediction.min_threshold);
    c.prediction.max_threshold = r.max_threshold.unwrap_or(c.prediction.max_threshold);
    if c.prediction.period < BUCKET {
        return Err(site.error("period", "must be at least 10ms (utilization is kept in 10 ms buckets)"));
    }
    if c.controller_rtt == 0 {
        return Err(site.error("controller_rtt", "must be above 0"));
    }
    if c.rule_idle_timeout == 0 {
        return Err(site.error("rule_idle_timeout", "must be above 0"));
    }
    if let Err(e) = c.prediction.validate() {
        let key = if e.0.contains("initial_threshold") {
            "threshold"
        } else {
            "min_threshold"
        };
        return Err(site.error(key, e.0));
    }
    Ok(c)
}

impl SystemKind for CoswitchKind {
    fn name(&self) -> &'static str {
        "coswitch"
    }

    fn place(&self, site: &Site<'_>, params: toml::Value) -> Result<Arc<dyn Placement>, ScenarioError> {
        let cfg = read(site, params)?;
        let topo = site.topology;
        let mut switches = Vec::with_capacity(site.switches.len());
        for &node in site.switches {
            let host_ports: Vec<bool> = topo.ports(node).iter().map(|p| topo.is_host(p.peer)).collect();
            if !host_ports.contains(&true) {
                return Err(site.error(
                    "switches",
                    format!(
                        "`{}` has no hosts attached: a CoSwitch ToR's servers are its hosts",
                        topo.node(node).name
                    ),
                ));
            }
            switches.push((node, host_ports));
        }
        Ok(Arc::new(RackPlacement { cfg, switches }))
    }
}

/// A checked entry: the configuration and, per switch, which ports lead to hosts.
#[derive(Debug)]
struct RackPlacement {
    cfg: RackConfig,
    switches: Vec<(NodeId, Vec<bool>)>,
}

impl Placement for RackPlacement {
    fn model(&self, node: NodeId) -> Option<Box<dyn SwitchModel>> {
        let (_, host_ports) = self.switches.iter().find(|s| s.0 == node)?;
        Some(Box::new(CoswitchTor::new(self.cfg.clone(), host_ports)))
    }
}

/// One server of the rack: its vswitch core, arbiter and vswitch rules.
#[derive(Debug, Clone)]
struct Server {
    cpu: CpuQueue,
    arbiter: FlowArbiter<u64>,
    rules: FxHashMap<u64, Time>,
}

/// Something the ToR model does later, by timer.
#[derive(Debug, Clone, Copy)]
enum Deferred {
    /// A server core has done a packet's work: it goes on through the ToR.
    Forward {
        in_port: u16,
        pkt: PacketId,
        flow: u64,
        elephant: bool,
    },
    /// The controller's flow_mod for an elephant reaches the ToR.
    FlowMod(u64),
    /// The control CPU has handled a packet_in: the packet_out sends the packet on.
    PacketOut { in_port: u16, pkt: PacketId },
    /// A ToR rule may have idled out.
    Expire(u64),
    /// Flow-Prediction's period ends.
    Report,
    /// A new threshold reaches the arbiters.
    Threshold(u32),
}

/// What the rack model counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RackStats {
    /// Packets the servers sent (entering the ToR on host ports).
    pub packets: u64,
    /// Of those, forwarded by the vswitch's rules (mice).
    pub vswitch_packets: u64,
    /// Of those, marked as elephants.
    pub elephant_packets: u64,
    /// Vswitch upcalls (a mouse packet with no vswitch rule).
    pub upcalls: u64,
    /// Packets dropped because a server core's queue was too long.
    pub vswitch_cpu_drops: u64,
    /// Rules installed in the ToR.
    pub installs: u64,
    /// flow_mods refused because the table was full.
    pub table_full: u64,
    /// flow_mods lost to a full control-CPU queue.
    pub flow_mods_lost: u64,
    /// Marked packets forwarded by the wildcard rule while their flow had no rule.
    pub wildcard_marked: u64,
    /// Packets forwarded by their flow's ToR rule.
    pub rule_hits: u64,
    /// Packets that missed the ToR's table and took its slow path (packet_in, packet_out).
    pub slow_path_packets: u64,
    /// Packets dropped because the control CPU's queue was too long for their packet_in.
    pub switch_cpu_drops: u64,
    /// Most ToR rules at once.
    pub peak_entries: u64,
    /// Control periods reported.
    pub periods: u64,
}

/// The CoSwitch rack as a simulated ToR's model. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct CoswitchTor {
    cfg: RackConfig,
    /// Server index of each port leading to a host (`None` for fabric ports).
    server_of_port: Vec<Option<usize>>,
    servers: Vec<Server>,
    switch_cpu: CpuQueue,
    table: FxHashMap<u64, Time>,
    pending: FxHashMap<u64, ()>,
    prediction: FlowPrediction,
    /// What each pending timer does, by token (a slab: a fired timer's slot is reused).
    deferred: Vec<Option<Deferred>>,
    free_tokens: Vec<u64>,
    started: bool,
    busiest_sum: f64,
    switch_cpu_sum: f64,
    stats: RackStats,
    recorder: Option<Box<RackRecorder>>,
}

impl CoswitchTor {
    /// A rack model with this configuration (checked by the kind's `place`; an unusable
    /// prediction configuration is replaced by the default one) on a switch whose port `i`
    /// leads to a host (a server) when `host_ports[i]`.
    pub fn new(cfg: RackConfig, host_ports: &[bool]) -> CoswitchTor {
        let prediction = FlowPrediction::new(cfg.prediction)
            .or_else(|_| FlowPrediction::new(PredictionConfig::default()))
            .expect("the default prediction configuration is valid");
        let mut arbiter = cfg.arbiter;
        if cfg.adaptive {
            arbiter.threshold = cfg.prediction.initial_threshold;
        }
        let mut servers = Vec::new();
        let server_of_port = host_ports
            .iter()
            .map(|&host| {
                host.then(|| {
                    servers.push(Server {
                        cpu: CpuQueue::new(cfg.server_max_wait, BUCKET),
                        arbiter: FlowArbiter::new(arbiter),
                        rules: FxHashMap::default(),
                    });
                    servers.len() - 1
                })
            })
            .collect();
        CoswitchTor {
            switch_cpu: CpuQueue::new(cfg.switch_max_wait, BUCKET),
            cfg,
            server_of_port,
            servers,
            table: FxHashMap::default(),
            pending: FxHashMap::default(),
            prediction,
            deferred: Vec::new(),
            free_tokens: Vec::new(),
            started: false,
            busiest_sum: 0.0,
            switch_cpu_sum: 0.0,
            stats: RackStats::default(),
            recorder: None,
        }
    }

    /// The same rack measuring what the experiments measure into `recorder` (its control
    /// periods then start with the run, not at the first packet).
    pub fn with_recorder(mut self, recorder: RackRecorder) -> CoswitchTor {
        self.recorder = Some(Box::new(recorder));
        self
    }

    /// What the recorder measured over `[warmup, duration)`, if the rack has one.
    pub fn outcome(&self, warmup: Time, duration: Time) -> Option<super::network::Outcome> {
        let r = self.recorder.as_ref()?;
        let server_cpu = self
            .servers
            .iter()
            .map(|s| s.cpu.utilization(warmup, duration))
            .fold(0.0, f64::max);
        let switch_cpu = self.switch_cpu.utilization(warmup, duration);
        let threshold = (self.threshold(), self.prediction.steps(), self.prediction.reversals());
        Some(r.finish(self.table.len(), server_cpu, switch_cpu, threshold))
    }

    /// What the model counted.
    pub fn stats(&self) -> RackStats {
        self.stats
    }

    /// The threshold the rack's arbiters use now.
    pub fn threshold(&self) -> u32 {
        self.servers
            .first()
            .map_or(self.cfg.arbiter.threshold, |s| s.arbiter.threshold())
    }

    /// Rules in the ToR's table now.
    pub fn table_entries(&self) -> usize {
        self.table.len()
    }

    fn defer(&mut self, cx: &mut SwitchCtx<'_>, at: Time, d: Deferred) {
        let token = match self.free_tokens.pop() {
            Some(t) => {
                self.deferred[t as usize] = Some(d);
                t
            }
            None => {
                self.deferred.push(Some(d));
                self.deferred.len() as u64 - 1
            }
        };
        cx.set_timer(at.max(cx.now), token);
    }

    /// Starts the control loop: at the first packet, or when the run starts for a rack that
    /// records (its periods then match the experiments' grid from 0).
    fn start(&mut self, cx: &mut SwitchCtx<'_>) {
        self.started = true;
        let period = self.cfg.prediction.period;
        let first = cx.now - cx.now % period + period;
        self.defer(cx, first, Deferred::Report);
    }

    /// A server core has done a packet's work: the ToR forwards it by its flow's rule, by a
    /// wildcard rule, or (a per-flow packet whose rule is missing, reactive control) by its slow
    /// path: a packet_in on the control CPU, the controller's flow_mod one round trip after
    /// the CPU is free, the packet sent on by packet_out when the CPU has handled it.
    fn forward(&mut self, cx: &mut SwitchCtx<'_>, in_port: u16, pkt: PacketId, flow: u64, elephant: bool) {
        let per_flow = match self.cfg.approach {
            Approach::PhysicalOnly => true,
            Approach::CoSwitch => elephant,
            Approach::StaticRules | Approach::VswitchOnly => false,
        };
        if per_flow {
            match self.table.get_mut(&flow) {
                Some(last) if *last <= cx.now => {
                    *last = cx.now;
                    self.stats.rule_hits += 1;
                }
                _ if self.cfg.approach == Approach::CoSwitch && self.cfg.elephant_rules == ElephantRules::Proactive => {
                    self.stats.wildcard_marked += 1;
                    if let Some(r) = &mut self.recorder {
                        r.wildcard(cx.now);
                    }
                }
                _ => return self.slow_path(cx, in_port, pkt, flow),
            }
        }
        cx.forward(in_port, pkt);
    }

    fn slow_path(&mut self, cx: &mut SwitchCtx<'_>, in_port: u16, pkt: PacketId, flow: u64) {
        let Some(done) = self.switch_cpu.submit(cx.now, self.cfg.switch.packet_in) else {
            self.stats.switch_cpu_drops += 1;
            if let Some(r) = &mut self.recorder {
                r.switch_drop(cx.now);
            }
            cx.drop(in_port, pkt, "switch-cpu");
            return;
        };
        self.stats.slow_path_packets += 1;
        if let Some(r) = &mut self.recorder {
            r.slow_path(cx.now);
        }
        if !self.table.contains_key(&flow) && self.pending.insert(flow, ()).is_none() {
            let at = self.switch_cpu.busy_until() + self.cfg.controller_rtt;
            self.defer(cx, at, Deferred::FlowMod(flow));
        }
        self.defer(cx, done, Deferred::PacketOut { in_port, pkt });
    }

    fn flow_mod(&mut self, cx: &mut SwitchCtx<'_>, flow: u64) {
        self.pending.remove(&flow);
        let now = cx.now;
        let Some(done) = self.switch_cpu.submit(now, self.cfg.switch.flow_add) else {
            self.stats.flow_mods_lost += 1;
            if let Some(r) = &mut self.recorder {
                r.flow_mod_lost(now);
            }
            return;
        };
        if self.table.len() >= self.cfg.table_entries {
            self.stats.table_full += 1;
            if let Some(r) = &mut self.recorder {
                r.table_full(now);
            }
            return;
        }
        if let Some(r) = &mut self.recorder {
            r.table_changes(now, self.table.len());
        }
        // The rule takes effect when the CPU has written it.
        self.table.insert(flow, done);
        if let Some(r) = &mut self.recorder {
            r.installed(now, self.table.len());
        }
        self.stats.installs += 1;
        self.stats.peak_entries = self.stats.peak_entries.max(self.table.len() as u64);
        self.defer(cx, done + self.cfg.rule_idle_timeout, Deferred::Expire(flow));
    }

    fn expire(&mut self, cx: &mut SwitchCtx<'_>, flow: u64) {
        let Some(&last) = self.table.get(&flow) else { return };
        let due = last + self.cfg.rule_idle_timeout;
        if due > cx.now {
            self.defer(cx, due, Deferred::Expire(flow));
            return;
        }
        if let Some(r) = &mut self.recorder {
            r.table_changes(cx.now, self.table.len());
        }
        self.table.remove(&flow);
        // flow_removed costs the CPU; a lost message still frees the entry (hardware timeout).
        let _ = self.switch_cpu.submit(cx.now, self.cfg.switch.flow_del);
    }

    fn report(&mut self, cx: &mut SwitchCtx<'_>) {
        let now = cx.now;
        let period = self.cfg.prediction.period;
        let from = now.saturating_sub(period);
        let idle = self.cfg.vswitch_idle_timeout;
        let mut cpu = Vec::with_capacity(self.servers.len());
        for s in &mut self.servers {
            cpu.push(s.cpu.utilization(from, now));
            s.arbiter.expire(now);
            s.rules.retain(|_, last| now.saturating_sub(*last) <= idle);
        }
        let report = LoadReport {
            vswitch_cpu: cpu,
            switch_cpu: self.switch_cpu.utilization(from, now),
            switch_table: self.table.len() as f64 / self.cfg.table_entries.max(1) as f64,
        };
        let (busiest, _) = report.sides();
        if let Some(r) = &mut self.recorder {
            let rules = self.servers.iter().map(|s| s.rules.len()).max().unwrap_or(0);
            let threshold = self.servers.first().map_or(0, |s| s.arbiter.threshold());
            r.period(
                now,
                period,
                threshold,
                busiest,
                report.switch_cpu,
                self.table.len(),
                rules,
            );
        }
        self.busiest_sum += busiest;
        self.switch_cpu_sum += report.switch_cpu;
        self.stats.periods += 1;
        if self.cfg.adaptive {
            if let Some(t) = self.prediction.on_report(now, &report) {
                self.defer(cx, now + self.cfg.controller_rtt / 2, Deferred::Threshold(t));
            }
        }
        self.defer(cx, now + period, Deferred::Report);
    }
}

impl SwitchModel for CoswitchTor {
    fn on_ingress(&mut self, cx: &mut SwitchCtx<'_>, in_port: u16, pkt: PacketId) -> Verdict {
        if !self.started {
            self.start(cx);
        }
        let Some(server) = self.server_of_port.get(usize::from(in_port)).copied().flatten() else {
            return Verdict::Continue;
        };
        let p = *cx.pool.get(pkt);
        let flow = u64::from(p.flow.0) * 2 + u64::from(p.src.0 > p.dst.0);
        let now = cx.now;
        let c = self.cfg.server;
        let bytes = Time::from(p.size);
        let io = c.io_packet + c.io_byte * bytes;
        let ovs = c.ovs_packet + c.ovs_byte * bytes;
        self.stats.packets += 1;
        let approach = self.cfg.approach;
        let s = &mut self.servers[server];
        let verdict = match approach {
            Approach::CoSwitch => s.arbiter.on_packet(now, flow),
            _ => ArbiterVerdict::Mouse,
        };
        // (vswitch processing, arbiter, marked, newly marked); I/O is paid by every packet.
        let (processing, arbiter, elephant, new) = match verdict {
            // The baselines' vswitch: static rules (no upcall) or reactive per-flow rules.
            ArbiterVerdict::Mouse if matches!(approach, Approach::StaticRules | Approach::PhysicalOnly) => {
                self.stats.vswitch_packets += 1;
                (ovs, 0, false, false)
            }
            ArbiterVerdict::Mouse => {
                let hit = s
                    .rules
                    .get(&flow)
                    .is_some_and(|&last| now.saturating_sub(last) <= self.cfg.vswitch_idle_timeout);
                s.rules.insert(flow, now);
                let upcall = if hit {
                    0
                } else {
                    self.stats.upcalls += 1;
                    if let Some(r) = &mut self.recorder {
                        r.upcall(now);
                    }
                    c.upcall
                };
                self.stats.vswitch_packets += 1;
                let arbiter = if approach == Approach::CoSwitch { c.arbiter } else { 0 };
                (ovs + upcall, arbiter, false, false)
            }
            ArbiterVerdict::Elephant { new, .. } => {
                self.stats.elephant_packets += 1;
                if let Some(r) = &mut self.recorder {
                    r.elephant(now);
                }
                (0, c.arbiter, true, new)
            }
        };
        if let Some(r) = &mut self.recorder {
            r.packet(now, p.size);
        }
        let Some(done) = s.cpu.submit(now, processing + arbiter + io) else {
            self.stats.vswitch_cpu_drops += 1;
            if let Some(r) = &mut self.recorder {
                r.vswitch_drop(now);
            }
            return Verdict::Drop("vswitch-cpu");
        };
        if let Some(r) = &mut self.recorder {
            r.server_work(
                now,
                p.flow.0,
                PacketCost {
                    io,
                    processing,
                    arbiter,
                },
            );
        }
        let proactive = self.cfg.elephant_rules == ElephantRules::Proactive;
        if new && proactive && self.pending.insert(flow, ()).is_none() && !self.table.contains_key(&flow) {
            self.defer(cx, now + self.cfg.controller_rtt, Deferred::FlowMod(flow));
        }
        self.defer(
            cx,
            done,
            Deferred::Forward {
                in_port,
                pkt,
                flow,
                elephant,
            },
        );
        Verdict::Consumed
    }

    fn wants_start(&self) -> bool {
        self.recorder.is_some()
    }

    /// A recording rack's control periods run from the start, as the experiments' did.
    fn on_start(&mut self, cx: &mut SwitchCtx<'_>) {
        if !self.started {
            self.start(cx);
        }
    }

    fn on_timer(&mut self, cx: &mut SwitchCtx<'_>, token: u64) {
        let Some(d) = usize::try_from(token)
            .ok()
            .and_then(|t| self.deferred.get_mut(t))
            .and_then(Option::take)
        else {
            return;
        };
        self.free_tokens.push(token);
        match d {
            Deferred::Forward {
                in_port,
                pkt,
                flow,
                elephant,
            } => self.forward(cx, in_port, pkt, flow, elephant),
            Deferred::FlowMod(flow) => self.flow_mod(cx, flow),
            Deferred::PacketOut { in_port, pkt } => cx.forward(in_port, pkt),
            Deferred::Expire(flow) => self.expire(cx, flow),
            Deferred::Report => self.report(cx),
            Deferred::Threshold(t) => {
                for s in &mut self.servers {
                    s.arbiter.set_threshold(t);
                }
            }
        }
    }

    fn report(&self) -> Vec<(String, f64)> {
        self.system_counters()
            .into_iter()
            .map(|(k, v)| (format!("coswitch_{k}"), v))
            .collect()
    }

    fn system_counters(&self) -> Vec<(&'static str, f64)> {
        let s = self.stats;
        let marked: u64 = self.servers.iter().map(|x| x.arbiter.stats().elephants).sum();
        let periods = s.periods.max(1) as f64;
        vec![
            ("servers", self.servers.len() as f64),
            ("threshold", f64::from(self.threshold())),
            ("threshold_steps", self.prediction.steps() as f64),
            ("marked_flows", marked as f64),
            ("table_entries", self.table.len() as f64),
            ("table_capacity", self.cfg.table_entries as f64),
            ("peak_table_entries", s.peak_entries as f64),
            ("offloaded_flows", s.installs as f64),
            ("table_full", s.table_full as f64),
            ("software_packets", s.vswitch_packets as f64),
            ("elephant_packets", s.elephant_packets as f64),
            ("upcalls", s.upcalls as f64),
            ("vswitch_cpu_drops", s.vswitch_cpu_drops as f64),
            ("slow_path_packets", s.slow_path_packets as f64),
            ("switch_cpu_drops", s.switch_cpu_drops as f64),
            ("server_cpu_mean", self.busiest_sum / periods),
            ("switch_cpu_mean", self.switch_cpu_sum / periods),
        ]
    }
}
