//! The simulation adapter: runs the [`Tcpu`] core inside a `tandem-sim` switch.
//!
//! This is the only module of the crate that depends on `tandem-sim`. [`TcpuModel`] implements
//! [`SwitchModel`]: it feeds packets, queue levels and timers into [`Tcpu::handle`] and carries
//! out the [`Action`]s on the simulated switch.
//!
//! * **The ASIC's tables.** The adapter keeps its own TCAM model: per-direction flow entries
//!   (at most k, each with a byte counter), one R_port per output port and one attack rule per
//!   source, and picks the highest priority among the ones that match a packet. (The
//!   simulator's `MatchTable` matches a simulated flow in both directions, while a 5-tuple
//!   TCAM entry is one direction, so it is not used.) A simulated flow `f` is two core flows:
//!   `2f` for packets from the lower-numbered host to the higher one and `2f + 1` back.
//! * **Forwarding.** A packet to a host on one of the switch's ports is looked up; an `Output`
//!   rule sends it straight to that port's egress (in the rule's class), a `ToCpu` rule or a
//!   miss sends it to the CPU. Packets to hosts not directly attached are left to the
//!   simulator's routing (the model manages a single-switch network).
//! * **Upward internal links.** A packet for the CPU is serialised on the earliest-free of the
//!   `internal_links` links at `internal_link_bps` (its wire size plus the port's framing
//!   overhead) and reaches the core as [`Event::PacketToCpu`] when its last bit is in; the
//!   simulator keeps the packet (the model holds its id) meanwhile. The upward queue is not
//!   bounded (a CPU NIC ring of unbounded size).
//! * **DRAM and pacing** are the core's: [`Action::SendFromCpu`] becomes a timer at `at` that
//!   puts the held packet on the port's egress in [`CPU_CLASS`]; [`Action::Drop`] frees it and
//!   counts the reason.
//! * **Table operations** ([`Action::InstallRule`], [`Action::RemoveRule`],
//!   [`Action::ReadCounters`]) take effect by timer at their completion time `at`; a counter
//!   read answers with [`Event::AsicCounters`] (entries' counters since install).
//! * **Queue reports.** The model watches the packet-count level Q_redirect on every port
//!   ([`SwitchModel::watch_packet_levels`]) and reports the queue length in packets at every
//!   crossing, up and down, as [`Event::QueueLength`].
//! * **Classes.** The switch should have [`SIM_CLASSES`] strict-priority classes: traffic the
//!   CPU sends back goes into [`CPU_CLASS`] (0, served first, paper §3.2.2), everything else
//!   into [`NORMAL_CLASS`] (1), pinned long flows into [`LONG_CLASS`] (2, served last). The
//!   paper gives pinned flows a high-priority *rule* (it beats R_port) and their own queue; it
//!   does not say how that queue is scheduled against the others. We serve it last (**ours**):
//!   served first, backlogged long flows would starve the normal queue for good (packets
//!   stuck there keep it above Q_redirect, so R_port flaps, and the flow's own packets queued
//!   before its pin are overtaken by its later ones), while served last the packets a flow
//!   queued before its pin leave first and short flows keep their latency. The long-flow class has its own
//!   packet limit Q_lflows when the switch's queues come from [`queue_config`] (the simulator's
//!   per-class limit `QueueConfig::class_limit_packets`); a switch configured otherwise applies
//!   its common limit to pinned flows too.
//! * **Overtakes.** A packet the ASIC forwards by a rule while packets of the same core flow are
//!   still held by the CPU side (upward links or DRAM) overtakes them: the reordering that moving
//!   a flow from the CPU to the ASIC causes, counted in [`ModelStats::overtakes`].
//! * **Byte sizes.** The core is given each packet's size plus the link framing overhead
//!   (preamble, FCS, inter-frame gap), so its pacer sends at exactly the port's line rate;
//!   DRAM is therefore counted in wire bytes (24 bytes per packet more than the frames).

pub mod attack;
pub mod burstrate;
pub mod common;
pub mod flashcrowd;
pub mod forwarding;
pub mod longflows;
pub mod offload;
pub mod offload_packets;
pub mod placed;
pub mod traces;

use crate::config::{ConfigError, TcpuConfig};
use crate::core::{Action, DropReason, Event, Tcpu};
use crate::types::{tx_time, FlowId, PacketRef, Rule, RuleAction, RuleMatch, Time};
use rustc_hash::FxHashMap;
use tandem_sim::packet::{PacketId, Proto};
use tandem_sim::switch::{SwitchCtx, SwitchModel, Verdict};

/// Simulator traffic class of the packets the CPU sends back (the highest strict priority).
pub const CPU_CLASS: u8 = 0;
/// Simulator traffic class of everything that is neither sent back by the CPU nor pinned
/// (served second).
pub const NORMAL_CLASS: u8 = 1;
/// Simulator traffic class of pinned long flows (served last; see the module documentation).
pub const LONG_CLASS: u8 = 2;
/// Classes a switch running [`TcpuModel`] should be configured with.
pub const SIM_CLASSES: u8 = 3;

/// The timer token of the core's [`Action::WakeAt`].
const WAKE: u64 = u64::MAX;

/// Something the adapter does later, by timer.
#[derive(Debug, Clone, Copy)]
enum Deferred {
    /// A packet's last bit reaches the CPU over an upward internal link.
    ToCpu {
        pkt: PacketId,
        flow: FlowId,
        src: u32,
        port: u16,
        bytes: u32,
        is_tcp: bool,
    },
    /// An ASIC rule takes effect.
    Install(Rule),
    /// An ASIC rule is gone.
    Remove(RuleMatch),
    /// A counter read completes.
    ReadCounters,
    /// A held packet reaches the ASIC egress.
    Send { port: u16, pkt: PacketId, class: u8 },
}

/// One TCAM flow entry.
#[derive(Debug, Clone, Copy)]
struct FlowEntry {
    rule: Rule,
    bytes: u64,
}

/// What the adapter counted (also in [`SwitchModel::report`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ModelStats {
    /// Packets sent up to the CPU.
    pub to_cpu_packets: u64,
    /// Wire bytes (frame + framing) that reached the CPU over the internal links (counted when
    /// a packet's last bit is in).
    pub to_cpu_bytes: u64,
    /// Packets the ASIC forwarded by a rule (flow entry, long-flow pin).
    pub asic_rule_packets: u64,
    /// Wire bytes (frame + framing, as [`ModelStats::to_cpu_bytes`]) of the packets the ASIC
    /// forwarded by a rule: with `to_cpu_bytes`, the traffic offload ratio.
    pub asic_rule_bytes: u64,
    /// Transport payload bytes of the packets the ASIC forwarded by a rule.
    pub asic_rule_payload: u64,
    /// Transport payload bytes of the packets sent up to the CPU (counted as they leave the
    /// ASIC for it).
    pub to_cpu_payload: u64,
    /// Packets the CPU sent back to the ASIC.
    pub from_cpu_packets: u64,
    /// Packets the CPU dropped because DRAM was full.
    pub drops_dram_full: u64,
    /// Non-TCP packets the CPU dropped over the 2C cap.
    pub drops_non_tcp: u64,
    /// Longest wait of a packet for a free upward internal link, picoseconds.
    pub max_upward_wait: Time,
    /// Most packets held by the CPU side at once (on the upward links or in DRAM).
    pub peak_held: u64,
    /// Most flow entries installed at once.
    pub peak_flow_entries: u64,
    /// Flow entries installed in a free slot (flows ever offloaded to the ASIC; an entry
    /// rewritten in place, such as a pin, is not counted again).
    pub flow_installs: u64,
    /// Operations the ASIC refused (a full table, an unknown port).
    pub op_failures: u64,
    /// Events the core refused (should stay 0).
    pub core_errors: u64,
    /// Time R_port rules were in effect, summed over ports, picoseconds (closed periods only).
    pub rport_time: Time,
    /// Packets forwarded by an ASIC rule while packets of their core flow were held by the CPU
    /// side (they overtake those, arriving early at the receiver).
    pub overtakes: u64,
}

/// The egress queues a TCPU switch should have, from a `base` configuration: [`SIM_CLASSES`]
/// classes, and Q_lflows (`cfg.q_lflows_pkts`) as the packet limit of [`LONG_CLASS`] when
/// long-flow pinning is on (the other classes keep `base.limit_packets`).
pub fn queue_config(cfg: &TcpuConfig, base: tandem_sim::config::QueueConfig) -> tandem_sim::config::QueueConfig {
    let mut q = tandem_sim::config::QueueConfig {
        classes: SIM_CLASSES,
        ..base
    };
    if cfg.long_flows {
        q.class_limit_packets[usize::from(LONG_CLASS)] = Some(cfg.q_lflows_pkts);
    }
    q
}

/// [`Tcpu`] as a simulated switch's model. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct TcpuModel {
    core: Tcpu,
    actions: Vec<Action>,
    port_of_host: Option<FxHashMap<u32, u16>>,
    flow_rules: FxHashMap<FlowId, FlowEntry>,
    port_rules: Vec<Option<Rule>>,
    rport_since: Vec<Option<Time>>,
    src_rules: FxHashMap<u32, Rule>,
    up_links: Vec<Time>,
    deferred: FxHashMap<u64, Deferred>,
    next_token: u64,
    held: u64,
    held_flow: FxHashMap<PacketId, FlowId>,
    held_by_flow: FxHashMap<FlowId, u32>,
    counters_scratch: Vec<(FlowId, u64)>,
    stats: ModelStats,
}

impl TcpuModel {
    /// A model running a core with this configuration.
    pub fn new(cfg: TcpuConfig) -> Result<TcpuModel, ConfigError> {
        let ports = usize::from(cfg.ports);
        let links = cfg.internal_links.max(1) as usize;
        Ok(TcpuModel {
            core: Tcpu::new(cfg)?,
            actions: Vec::new(),
            port_of_host: None,
            flow_rules: FxHashMap::default(),
            port_rules: vec![None; ports],
            rport_since: vec![None; ports],
            src_rules: FxHashMap::default(),
            up_links: vec![0; links],
            deferred: FxHashMap::default(),
            next_token: 0,
            held: 0,
            held_flow: FxHashMap::default(),
            held_by_flow: FxHashMap::default(),
            counters_scratch: Vec::new(),
            stats: ModelStats::default(),
        })
    }

    /// The policy core.
    pub fn core(&self) -> &Tcpu {
        &self.core
    }

    /// The adapter's counters.
    pub fn stats(&self) -> ModelStats {
        self.stats
    }

    /// Flow entries installed in the modelled TCAM now.
    pub fn flow_entries(&self) -> usize {
        self.flow_rules.len()
    }

    /// The R_port rule of `port`, if one is installed.
    pub fn port_rule(&self, port: u16) -> Option<Rule> {
        self.port_rules.get(usize::from(port)).copied().flatten()
    }

    /// Packets on the upward links or in DRAM now.
    pub fn held_packets(&self) -> u64 {
        self.held
    }

    /// The core flow of a packet: `2f` from the lower-numbered host to the higher, `2f + 1`
    /// back; `None` when `f` is too large to double.
    pub fn core_flow(flow: tandem_sim::packet::FlowId, src: u32, dst: u32) -> Option<FlowId> {
        let base = flow.0.checked_mul(2)?;
        base.checked_add(u32::from(src > dst)).map(FlowId)
    }

    /// The simulator class for a core class.
    fn sim_class(&self, class: Option<u8>) -> u8 {
        let cfg = self.core.config();
        match class {
            Some(c) if c == cfg.cpu_return_class => CPU_CLASS,
            Some(c) if c == cfg.long_flow_class => LONG_CLASS,
            _ => NORMAL_CLASS,
        }
    }

    /// A packet the CPU side held has left it (sent back or dropped).
    fn release(&mut self, pkt: PacketId) {
        self.held = self.held.saturating_sub(1);
        if let Some(f) = self.held_flow.remove(&pkt) {
            if let Some(n) = self.held_by_flow.get_mut(&f) {
                *n -= 1;
                if *n == 0 {
                    self.held_by_flow.remove(&f);
                }
            }
        }
    }

    fn defer(&mut self, cx: &mut SwitchCtx<'_>, at: Time, d: Deferred) {
        let token = self.next_token;
        self.next_token += 1;
        self.deferred.insert(token, d);
        cx.set_timer(at.max(cx.now), token);
    }

    /// Feeds one event to the core and carries out what it asks for.
    fn feed(&mut self, cx: &mut SwitchCtx<'_>, ev: Event<'_>) {
        let mut actions = std::mem::take(&mut self.actions);
        actions.clear();
        if self.core.handle(cx.now, ev, &mut actions).is_err() {
            self.stats.core_errors += 1;
        }
        for a in actions.drain(..) {
            match a {
                Action::InstallRule { rule, at } => self.defer(cx, at, Deferred::Install(rule)),
                Action::RemoveRule { matches, at } => self.defer(cx, at, Deferred::Remove(matches)),
                Action::ReadCounters { at } => self.defer(cx, at, Deferred::ReadCounters),
                Action::SendFromCpu { port, pkt, class, at } => {
                    let class = self.sim_class(Some(class));
                    self.defer(
                        cx,
                        at,
                        Deferred::Send {
                            port,
                            pkt: PacketId(pkt.0 as u32),
                            class,
                        },
                    );
                }
                Action::Drop { pkt, reason } => {
                    match reason {
                        DropReason::DramFull => self.stats.drops_dram_full += 1,
                        DropReason::NonTcpCap => self.stats.drops_non_tcp += 1,
                    }
                    self.release(PacketId(pkt.0 as u32));
                    cx.free(PacketId(pkt.0 as u32));
                }
                Action::Shape { .. } => {}
                Action::WakeAt { at } => cx.set_timer(at.max(cx.now), WAKE),
            }
        }
        self.actions = actions;
    }

    fn port_of(&mut self, cx: &SwitchCtx<'_>, host: u32) -> Option<u16> {
        let map = self.port_of_host.get_or_insert_with(|| {
            cx.ports
                .iter()
                .enumerate()
                .filter_map(|(i, p)| u16::try_from(i).ok().map(|i| (p.peer.0, i)))
                .collect()
        });
        map.get(&host).copied()
    }

    /// The rule that wins for a packet of core flow `flow` from `src` to `port`.
    fn lookup(&self, flow: FlowId, src: u32, port: u16) -> Option<Rule> {
        let mut best: Option<Rule> = self.flow_rules.get(&flow).map(|e| e.rule);
        let others = [
            self.port_rules.get(usize::from(port)).copied().flatten(),
            self.src_rules.get(&src).copied(),
        ];
        for r in others.into_iter().flatten() {
            if best.is_none_or(|b| r.priority > b.priority) {
                best = Some(r);
            }
        }
        best
    }

    fn apply_install(&mut self, cx: &mut SwitchCtx<'_>, rule: Rule) {
        let ok = match rule.matches {
            RuleMatch::Flow(f) => {
                let k = self.core.config().asic_flow_entries as usize;
                if let Some(e) = self.flow_rules.get_mut(&f) {
                    *e = FlowEntry { rule, bytes: 0 };
                    true
                } else if self.flow_rules.len() < k {
                    self.flow_rules.insert(f, FlowEntry { rule, bytes: 0 });
                    self.stats.flow_installs += 1;
                    self.stats.peak_flow_entries = self.stats.peak_flow_entries.max(self.flow_rules.len() as u64);
                    true
                } else {
                    false
                }
            }
            RuleMatch::OutPort(p) => match self.port_rules.get_mut(usize::from(p)) {
                Some(slot) => {
                    *slot = Some(rule);
                    if let Some(since) = self.rport_since.get_mut(usize::from(p)) {
                        since.get_or_insert(cx.now);
                    }
                    true
                }
                None => false,
            },
            RuleMatch::Src(s) => {
                self.src_rules.insert(s, rule);
                true
            }
        };
        if !ok {
            self.stats.op_failures += 1;
            self.feed(cx, Event::OpFailed { matches: rule.matches });
        }
    }

    fn apply_remove(&mut self, now: Time, m: RuleMatch) {
        match m {
            RuleMatch::Flow(f) => {
                self.flow_rules.remove(&f);
            }
            RuleMatch::OutPort(p) => {
                if let Some(slot) = self.port_rules.get_mut(usize::from(p)) {
                    *slot = None;
                }
                if let Some(since) = self.rport_since.get_mut(usize::from(p)).and_then(Option::take) {
                    self.stats.rport_time = self.stats.rport_time.saturating_add(now.saturating_sub(since));
                }
            }
            RuleMatch::Src(s) => {
                self.src_rules.remove(&s);
            }
        }
    }
}

impl SwitchModel for TcpuModel {
    fn on_ingress(&mut self, cx: &mut SwitchCtx<'_>, _in_port: u16, pkt: PacketId) -> Verdict {
        let p = *cx.pool.get(pkt);
        let Some(port) = self.port_of(cx, p.dst.0) else {
            return Verdict::Continue;
        };
        if port >= self.core.config().ports {
            return Verdict::Continue;
        }
        let Some(flow) = Self::core_flow(p.flow, p.src.0, p.dst.0) else {
            return Verdict::Continue;
        };
        match self.lookup(flow, p.src.0, port) {
            Some(Rule {
                matches,
                action: RuleAction::Output { port: out, class },
                ..
            }) => {
                if let RuleMatch::Flow(f) = matches {
                    if let Some(e) = self.flow_rules.get_mut(&f) {
                        e.bytes = e.bytes.saturating_add(u64::from(p.size));
                    }
                }
                let framing = cx.ports.get(usize::from(out)).map_or(0, |q| q.link.framing_overhead);
                self.stats.asic_rule_packets += 1;
                self.stats.asic_rule_bytes += u64::from(p.size.saturating_add(framing));
                self.stats.asic_rule_payload += u64::from(p.payload);
                if self.held_by_flow.contains_key(&flow) {
                    self.stats.overtakes += 1;
                }
                Verdict::Output {
                    port: out,
                    class: self.sim_class(class),
                }
            }
            Some(Rule {
                action: RuleAction::ToCpu,
                ..
            })
            | None => {
                let framing = cx.ports.get(usize::from(port)).map_or(0, |q| q.link.framing_overhead);
                let bytes = p.size.saturating_add(framing);
                let cfg = self.core.config();
                let link_bps = cfg.internal_link_bps;
                let link = {
                    let mut best = 0;
                    for (i, &t) in self.up_links.iter().enumerate() {
                        if t < self.up_links[best] {
                            best = i;
                        }
                    }
                    best
                };
                let start = self.up_links[link].max(cx.now);
                let done = start.saturating_add(tx_time(u64::from(bytes), link_bps));
                self.up_links[link] = done;
                self.stats.max_upward_wait = self.stats.max_upward_wait.max(start - cx.now);
                self.stats.to_cpu_packets += 1;
                self.stats.to_cpu_payload += u64::from(p.payload);
                self.held += 1;
                self.held_flow.insert(pkt, flow);
                *self.held_by_flow.entry(flow).or_insert(0) += 1;
                self.stats.peak_held = self.stats.peak_held.max(self.held);
                self.defer(
                    cx,
                    done,
                    Deferred::ToCpu {
                        pkt,
                        flow,
                        src: p.src.0,
                        port,
                        bytes,
                        is_tcp: p.proto == Proto::Tcp,
                    },
                );
                Verdict::Consumed
            }
        }
    }

    fn on_queue_level(&mut self, cx: &mut SwitchCtx<'_>, port: u16, _level: usize, _bytes: u64) {
        if port >= self.core.config().ports {
            return;
        }
        let packets = cx.queue(port).map_or(0, |q| q.packets());
        self.feed(cx, Event::QueueLength { port, packets });
    }

    fn on_timer(&mut self, cx: &mut SwitchCtx<'_>, token: u64) {
        if token == WAKE {
            self.feed(cx, Event::Tick);
            return;
        }
        let Some(d) = self.deferred.remove(&token) else { return };
        match d {
            Deferred::ToCpu {
                pkt,
                flow,
                src,
                port,
                bytes,
                is_tcp,
            } => {
                self.stats.to_cpu_bytes += u64::from(bytes);
                self.feed(
                    cx,
                    Event::PacketToCpu {
                        pkt: PacketRef(u64::from(pkt.0)),
                        flow,
                        src,
                        port,
                        bytes,
                        is_tcp,
                    },
                )
            }
            Deferred::Install(rule) => self.apply_install(cx, rule),
            Deferred::Remove(m) => self.apply_remove(cx.now, m),
            Deferred::ReadCounters => {
                let mut c = std::mem::take(&mut self.counters_scratch);
                c.clear();
                c.extend(self.flow_rules.iter().map(|(&f, e)| (f, e.bytes)));
                c.sort_unstable();
                self.feed(cx, Event::AsicCounters { counters: &c });
                self.counters_scratch = c;
            }
            Deferred::Send { port, pkt, class } => {
                self.release(pkt);
                self.stats.from_cpu_packets += 1;
                cx.pool.get_mut(pkt).class = class;
                cx.send(port, pkt);
            }
        }
    }

    fn watch_packet_levels(&self) -> Vec<u32> {
        let cfg = self.core.config();
        if cfg.deep_buffer {
            vec![cfg.q_redirect_pkts]
        } else {
            Vec::new()
        }
    }

    fn report(&self) -> Vec<(String, f64)> {
        let c = self.core.stats();
        let s = self.stats;
        [
            ("tcpu_to_cpu_packets", s.to_cpu_packets as f64),
            ("tcpu_to_cpu_bytes", s.to_cpu_bytes as f64),
            ("tcpu_from_cpu_packets", s.from_cpu_packets as f64),
            ("tcpu_asic_rule_packets", s.asic_rule_packets as f64),
            ("tcpu_asic_rule_bytes", s.asic_rule_bytes as f64),
            ("tcpu_asic_rule_payload_bytes", s.asic_rule_payload as f64),
            ("tcpu_to_cpu_payload_bytes", s.to_cpu_payload as f64),
            ("tcpu_drops_dram_full", s.drops_dram_full as f64),
            ("tcpu_drops_non_tcp", s.drops_non_tcp as f64),
            ("tcpu_peak_dram_bytes", self.core.peak_dram() as f64),
            ("tcpu_peak_held_packets", s.peak_held as f64),
            ("tcpu_max_upward_wait_us", s.max_upward_wait as f64 / 1e6),
            ("tcpu_peak_flow_entries", s.peak_flow_entries as f64),
            ("tcpu_rport_installs", c.rport_installs as f64),
            ("tcpu_rport_removals", c.rport_removals as f64),
            ("tcpu_rport_seconds", s.rport_time as f64 / 1e12),
            ("tcpu_new_flows", c.new_flows as f64),
            ("tcpu_rank_swaps", c.rank_swaps as f64),
            ("tcpu_inactive_swaps", c.inactive_swaps as f64),
            ("tcpu_long_pins", c.long_pins as f64),
            ("tcpu_attackers", c.attackers as f64),
            ("tcpu_asic_bytes", c.asic_bytes as f64),
            ("tcpu_rankings", c.rankings as f64),
            ("tcpu_missed_counter_reads", c.missed_counter_reads as f64),
            ("tcpu_unknown_counters", c.unknown_counters as f64),
            ("tcpu_op_failures", s.op_failures as f64),
            ("tcpu_overtakes", s.overtakes as f64),
            ("tcpu_core_errors", s.core_errors as f64),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn system_counters(&self) -> Vec<(&'static str, f64)> {
        let c = self.core.stats();
        let s = self.stats;
        vec![
            ("table_entries", self.flow_rules.len() as f64),
            ("table_capacity", f64::from(self.core.config().asic_flow_entries)),
            ("peak_table_entries", s.peak_flow_entries as f64),
            ("offloaded_flows", s.flow_installs as f64),
            ("swaps", (c.rank_swaps + c.inactive_swaps) as f64),
            ("software_packets", s.to_cpu_packets as f64),
            ("asic_rule_packets", s.asic_rule_packets as f64),
            ("deep_buffer_peak_bytes", self.core.peak_dram() as f64),
            ("rport_installs", c.rport_installs as f64),
            ("long_pins", c.long_pins as f64),
            ("attackers", c.attackers as f64),
            ("cpu_drops", (s.drops_dram_full + s.drops_non_tcp) as f64),
        ]
    }
}

/// The crate's experiments for `tandem reproduce`.
pub fn experiments() -> Vec<tandem_sim::experiment::Experiment> {
    vec![
        flashcrowd::EXPERIMENT,
        burstrate::EXPERIMENT,
        attack::EXPERIMENT,
        forwarding::EXPERIMENT,
        longflows::EXPERIMENT,
        offload::EXPERIMENT,
        offload_packets::EXPERIMENT,
        traces::EXPERIMENT,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{MS, SEC, US};
    use tandem_sim::config::{LinkConfig, QueueConfig, SwitchConfig, TcpConfig};
    use tandem_sim::packet::FlowId as SimFlow;
    use tandem_sim::sim::{Sim, SimOptions};
    use tandem_sim::topology::Topology;
    use tandem_sim::workload::{FlowKind, FlowSpec};

    const GBPS: u64 = 1_000_000_000;

    fn rule(priority: u16, matches: RuleMatch, action: RuleAction) -> Rule {
        Rule {
            priority,
            matches,
            action,
        }
    }

    #[test]
    fn core_flows_split_directions() {
        assert_eq!(TcpuModel::core_flow(SimFlow(3), 1, 5), Some(FlowId(6)));
        assert_eq!(TcpuModel::core_flow(SimFlow(3), 5, 1), Some(FlowId(7)));
        assert_eq!(TcpuModel::core_flow(SimFlow(u32::MAX), 1, 5), None);
    }

    #[test]
    fn lookup_follows_the_paper_priorities() {
        let cfg = TcpuConfig::default();
        let mut m = TcpuModel::new(cfg.clone()).unwrap();
        let out = RuleAction::Output { port: 2, class: None };
        let f = FlowId(4);
        assert_eq!(m.lookup(f, 9, 2), None, "a miss goes to the CPU");
        m.flow_rules.insert(
            f,
            FlowEntry {
                rule: rule(cfg.prio_flow, RuleMatch::Flow(f), out),
                bytes: 0,
            },
        );
        assert_eq!(m.lookup(f, 9, 2).map(|r| r.action), Some(out));
        m.port_rules[2] = Some(rule(cfg.prio_port, RuleMatch::OutPort(2), RuleAction::ToCpu));
        assert_eq!(
            m.lookup(f, 9, 2).map(|r| r.action),
            Some(RuleAction::ToCpu),
            "R_port beats R_flow_i"
        );
        assert_eq!(m.lookup(FlowId(5), 9, 3), None, "R_port of another port does not match");
        let long = RuleAction::Output {
            port: 2,
            class: Some(cfg.long_flow_class),
        };
        m.flow_rules.insert(
            f,
            FlowEntry {
                rule: rule(cfg.prio_long, RuleMatch::Flow(f), long),
                bytes: 0,
            },
        );
        assert_eq!(m.lookup(f, 9, 2).map(|r| r.action), Some(long), "R_flow_j beats R_port");
        m.src_rules
            .insert(9, rule(cfg.prio_attack, RuleMatch::Src(9), RuleAction::ToCpu));
        assert_eq!(
            m.lookup(f, 9, 2).map(|r| r.action),
            Some(RuleAction::ToCpu),
            "attack rule beats all"
        );
        assert_eq!(m.sim_class(Some(cfg.cpu_return_class)), CPU_CLASS);
        assert_eq!(m.sim_class(Some(cfg.long_flow_class)), LONG_CLASS);
        assert_eq!(m.sim_class(None), NORMAL_CLASS);
    }

    /// `senders` bulk flows of `bytes` into `h0` of a 1 Gb/s star, with or without the model.
    fn incast(senders: u32, bytes: u64, cfg: Option<TcpuConfig>, until: Time) -> Sim {
        let link = LinkConfig {
            rate_bps: GBPS,
            delay: 10 * US,
            framing_overhead: 24,
            l2_header: 14,
        };
        let topo = Topology::star(senders + 1, link).unwrap();
        let h = topo.hosts().to_vec();
        let flows = (0..senders)
            .map(|i| FlowSpec {
                id: SimFlow(i),
                src: h[i as usize + 1],
                dst: h[0],
                start: 0,
                bytes,
                kind: FlowKind::Bulk,
            })
            .collect();
        let sw = SwitchConfig {
            queue: QueueConfig {
                classes: SIM_CLASSES,
                limit_packets: 100,
                ..QueueConfig::default()
            },
            ..SwitchConfig::default()
        };
        let host_q = QueueConfig {
            limit_packets: 10_000,
            ..QueueConfig::default()
        };
        let mut sim = Sim::new(&topo, sw, host_q, TcpConfig::default(), flows, 1, SimOptions::default());
        if let Some(cfg) = cfg {
            sim.attach_model(topo.switches()[0], Box::new(TcpuModel::new(cfg).unwrap()));
        }
        sim.run_until(until);
        sim
    }

    fn report(sim: &Sim) -> FxHashMap<String, f64> {
        let sw = sim
            .nodes()
            .iter()
            .position(|n| n.kind == tandem_sim::topology::NodeKind::Switch)
            .unwrap();
        sim.model(tandem_sim::packet::NodeId(sw as u32))
            .map(|m| m.report().into_iter().collect())
            .unwrap_or_default()
    }

    fn switch_drops(sim: &Sim) -> u64 {
        sim.nodes()
            .iter()
            .filter(|n| n.kind == tandem_sim::topology::NodeKind::Switch)
            .flat_map(|n| n.ports.iter())
            .map(|p| p.queues.stats.dropped())
            .sum()
    }

    fn buffer_only() -> TcpuConfig {
        TcpuConfig {
            long_flows: false,
            attack_defense: false,
            ..TcpuConfig::default()
        }
    }

    #[test]
    fn deep_buffer_absorbs_an_incast_that_drops_on_a_plain_switch() {
        let plain = incast(8, 1_000_000, None, 2 * SEC);
        assert!(switch_drops(&plain) > 0, "8 x 1 MB into a 100-packet queue must drop");

        let sim = incast(8, 1_000_000, Some(buffer_only()), 2 * SEC);
        let r = report(&sim);
        assert_eq!(switch_drops(&sim), 0);
        assert_eq!(r["tcpu_drops_dram_full"] + r["tcpu_drops_non_tcp"], 0.0);
        assert!(r["tcpu_rport_installs"] >= 1.0, "{r:?}");
        assert_eq!(
            r["tcpu_rport_installs"], r["tcpu_rport_removals"],
            "R_port removed once DRAM drained"
        );
        assert_eq!(
            r["tcpu_to_cpu_packets"], r["tcpu_from_cpu_packets"],
            "every held packet sent back"
        );
        assert!(r["tcpu_peak_dram_bytes"] > 0.0);
        // Wire bytes up: between a bare ACK (64 + 24) and a full frame (1514 + 24) per packet.
        let (up_bytes, up_pkts) = (r["tcpu_to_cpu_bytes"], r["tcpu_to_cpu_packets"]);
        assert!(up_bytes >= 88.0 * up_pkts && up_bytes <= 1538.0 * up_pkts, "{r:?}");
        assert!(r["tcpu_rport_seconds"] > 0.0);
        assert_eq!(r["tcpu_op_failures"] + r["tcpu_core_errors"], 0.0);
        for (_, res, _) in sim.flow_results() {
            assert!(res.end.is_some(), "every flow completes");
        }
        // The ASIC queue never reached Q_limit: R_port took effect within the headroom.
        let peak = sim
            .nodes()
            .iter()
            .flat_map(|n| n.ports.iter())
            .map(|p| p.queues.stats.peak_bytes)
            .max();
        assert!(peak.unwrap_or(0) < 100 * 1514, "{peak:?}");
    }

    #[test]
    fn runs_are_deterministic() {
        let a = report(&incast(4, 500_000, Some(buffer_only()), SEC));
        let b = report(&incast(4, 500_000, Some(buffer_only()), SEC));
        assert_eq!(a, b);
    }

    #[test]
    fn flow_entries_take_over_and_counters_are_answered() {
        // One long flow: it starts on the CPU, gets a TCAM entry 70.7 us later and the ASIC
        // carries the rest; the rankings every 100 ms read its counter.
        let sim = incast(1, 20_000_000, Some(buffer_only()), 500 * MS);
        let r = report(&sim);
        assert!(r["tcpu_to_cpu_packets"] >= 1.0);
        assert!(r["tcpu_asic_rule_packets"] > 10.0 * r["tcpu_to_cpu_packets"], "{r:?}");
        assert_eq!(r["tcpu_peak_flow_entries"], 2.0, "one entry per direction");
        assert!(r["tcpu_rankings"] >= 4.0, "{r:?}");
        assert_eq!(r["tcpu_missed_counter_reads"], 0.0);
        assert_eq!(r["tcpu_unknown_counters"], 0.0);
        assert!(r["tcpu_asic_bytes"] > 1e6, "counter growth reached the core: {r:?}");
    }

    #[test]
    fn upward_internal_links_serialise() {
        // One TCAM entry, so most traffic stays on the CPU, and one slow internal link: the
        // senders' windows reach the switch faster than the link carries them up.
        let slow = TcpuConfig {
            asic_flow_entries: 1,
            internal_links: 1,
            internal_link_bps: 100_000_000,
            ..buffer_only()
        };
        let sim = incast(3, 100_000, Some(slow), SEC);
        let r = report(&sim);
        // 1538 wire bytes take 123 us at 100 Mb/s.
        assert!(r["tcpu_max_upward_wait_us"] > 100.0, "{r:?}");
        assert!(sim.flow_results().all(|(_, res, _)| res.end.is_some()));
        let fast = TcpuConfig {
            asic_flow_entries: 1,
            ..buffer_only()
        };
        let f = report(&incast(3, 100_000, Some(fast), SEC));
        assert!(
            f["tcpu_max_upward_wait_us"] < r["tcpu_max_upward_wait_us"] / 10.0,
            "{f:?}"
        );
    }
}
