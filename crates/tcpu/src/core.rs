//! [`Tcpu`]: the policy core that ties the modules together.
//!
//! The caller feeds `(now, Event)` through [`Tcpu::handle`] and carries out the [`Action`]s it
//! gets back:
//!
//! * [`Action::InstallRule`] / [`Action::RemoveRule`]: change the ASIC tables at `at` (the
//!   operation's completion time in the rate-limited channel, see [`crate::channel`]);
//! * [`Action::ReadCounters`]: at `at`, answer with [`Event::AsicCounters`] holding the byte
//!   counter of every installed flow entry (cumulative since that entry was last installed);
//! * [`Action::SendFromCpu`]: put the held packet on the port's egress at `at`, in the CPU's
//!   high-priority class;
//! * [`Action::Drop`]: free the held packet (the reason is for counters);
//! * [`Action::Shape`]: informational: a source was classified as an attacker and is shaped;
//! * [`Action::WakeAt`]: call [`Tcpu::handle`] with [`Event::Tick`] at `at` (earlier calls
//!   are harmless).
//!
//! Flow entries occupy the k TCAM slots; R_port and attack rules are wildcard rules that the
//! adapter keeps outside those k slots. The core's own bookkeeping of slots guarantees the
//! installed flow entries never exceed k, even during swaps (a swap's delete takes effect before
//! its insert).

use crate::attack::{AttackDetector, Detection, Verdict};
use crate::channel::{ChannelStats, Dispatched, Lane, QueuedOp, TableChannel, TableOp};
use crate::config::{ConfigError, TcpuConfig};
use crate::deep_buffer::{port_redirect_rule, DeepBuffer, RedirectState, Reject};
use crate::flow_table::{FlowTable, Placement, RankParams, SwapPlan};
use crate::long_flows;
use crate::types::{FlowId, PacketRef, Rule, RuleAction, RuleMatch, Time};

/// What happened, as seen by the switch CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// A packet reached the CPU (no ASIC flow entry, or redirected by R_port or an attack
    /// rule); the CPU now holds it.
    PacketToCpu {
        /// The caller's handle for the packet.
        pkt: PacketRef,
        /// Its flow.
        flow: FlowId,
        /// Its source host.
        src: u32,
        /// The output port it is routed to.
        port: u16,
        /// Its size on the wire.
        bytes: u32,
        /// Whether it is TCP.
        is_tcp: bool,
    },
    /// The answer to [`Action::ReadCounters`]: per installed flow entry, its byte counter
    /// (cumulative since the entry was installed).
    AsicCounters {
        /// (flow, counter) pairs.
        counters: &'a [(FlowId, u64)],
    },
    /// The ASIC reports an output queue's length (at least whenever it crosses Q_redirect).
    QueueLength {
        /// The port.
        port: u16,
        /// Packets queued.
        packets: u32,
    },
    /// Time passed (answering [`Action::WakeAt`], or any time).
    Tick,
    /// The ASIC refused an operation the core asked for (for example a full table); for a flow
    /// match this means the flow has no entry.
    OpFailed {
        /// The rule's match.
        matches: RuleMatch,
    },
}

/// Why the CPU dropped a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The DRAM buffer was full.
    DramFull,
    /// Non-TCP traffic for the port was over its 2C cap.
    NonTcpCap,
}

impl DropReason {
    /// A short name for counters and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::DramFull => "tcpu-dram-full",
            DropReason::NonTcpCap => "tcpu-non-tcp-cap",
        }
    }
}

/// What the core wants done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Install (or replace, for the same match) an ASIC rule, taking effect at `at`.
    InstallRule {
        /// The rule.
        rule: Rule,
        /// When it takes effect.
        at: Time,
    },
    /// Remove the ASIC rule with this match at `at`.
    RemoveRule {
        /// The match.
        matches: RuleMatch,
        /// When it is gone.
        at: Time,
    },
    /// Read the installed flow entries' counters; answer with [`Event::AsicCounters`] at `at`.
    ReadCounters {
        /// When the read completes.
        at: Time,
    },
    /// Send a held packet to `port`'s egress in class `class`, arriving at the ASIC at `at`.
    SendFromCpu {
        /// Egress port.
        port: u16,
        /// The packet.
        pkt: PacketRef,
        /// Traffic class (the CPU's high-priority class).
        class: u8,
        /// When it reaches the ASIC.
        at: Time,
    },
    /// `src` was classified as a low-rate burst attacker; its traffic is redirected to the CPU
    /// and shaped to `rate_bps` (together with the other attackers on the same port).
    Shape {
        /// The source host.
        src: u32,
        /// The shaping rate.
        rate_bps: u64,
    },
    /// Free a held packet.
    Drop {
        /// The packet.
        pkt: PacketRef,
        /// Why.
        reason: DropReason,
    },
    /// Call [`Tcpu::handle`] with [`Event::Tick`] at this time.
    WakeAt {
        /// When.
        at: Time,
    },
}

/// Input the core refused (its state is unchanged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreError {
    /// Events must come in non-decreasing time order.
    TimeWentBack {
        /// The event's time.
        now: Time,
        /// The last event's time.
        last: Time,
    },
    /// The port is not below [`TcpuConfig::ports`].
    UnknownPort(u16),
}

impl std::fmt::Display for CoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CoreError::TimeWentBack { now, last } => write!(f, "tcpu: event at {now} ps after one at {last} ps"),
            CoreError::UnknownPort(p) => write!(f, "tcpu: unknown port {p}"),
        }
    }
}

impl std::error::Error for CoreError {}

/// Counters of what the core did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpuStats {
    /// Packets the CPU took.
    pub cpu_packets: u64,
    /// Bytes the CPU took.
    pub cpu_bytes: u64,
    /// Bytes the ASIC forwarded through flow entries (counter growth).
    pub asic_bytes: u64,
    /// Flows seen for the first time.
    pub new_flows: u64,
    /// Flows inserted into a free TCAM slot.
    pub free_slot_inserts: u64,
    /// Swaps planned by the periodic ranking.
    pub rank_swaps: u64,
    /// New flows swapped in for an inactive ASIC entry.
    pub inactive_swaps: u64,
    /// Top-k flows left on the CPU for lack of channel budget (summed over rankings).
    pub deferred_moves: u64,
    /// Rankings done.
    pub rankings: u64,
    /// Rankings done without the counters they asked for (the adapter did not answer).
    pub missed_counter_reads: u64,
    /// Counter values for flows the core does not know or that hold no entry.
    pub unknown_counters: u64,
    /// Packets dropped for a full DRAM.
    pub drops_dram_full: u64,
    /// Non-TCP packets dropped over the 2C cap.
    pub drops_non_tcp: u64,
    /// R_port installs asked for.
    pub rport_installs: u64,
    /// R_port removals asked for.
    pub rport_removals: u64,
    /// Long-flow pins asked for.
    pub long_pins: u64,
    /// Long flows left unpinned because every TCAM slot held an active pinned flow.
    pub long_unpinned: u64,
    /// Sources classified as attackers.
    pub attackers: u64,
    /// Operations the ASIC refused.
    pub op_failures: u64,
}

/// The TCPU policy core. See the crate and module docs.
#[derive(Debug, Clone)]
pub struct Tcpu {
    cfg: TcpuConfig,
    flows: FlowTable,
    channel: TableChannel,
    buf: DeepBuffer,
    attack: AttackDetector,
    free_slots: u32,
    next_rank: Time,
    awaiting_counters: bool,
    redirect_since: Vec<Time>,
    last_now: Time,
    last_wake: Option<Time>,
    plan: Vec<SwapPlan>,
    dispatched: Vec<Dispatched>,
    detections: Vec<Detection>,
    inactive: Vec<u32>,
    pending_shapes: Vec<u32>,
    stats: TcpuStats,
}

impl Tcpu {
    /// A core with this configuration, at time zero, with an empty ASIC.
    pub fn new(cfg: TcpuConfig) -> Result<Tcpu, ConfigError> {
        cfg.validate()?;
        Ok(Tcpu {
            flows: FlowTable::new(),
            channel: TableChannel::new(
                cfg.inserts_per_sec,
                cfg.deletes_per_sec,
                cfg.counter_reads_per_sec,
                cfg.rule_setup_latency,
            ),
            buf: DeepBuffer::new(&cfg),
            attack: AttackDetector::new(&cfg),
            free_slots: cfg.asic_flow_entries,
            next_rank: cfg.rank_interval,
            awaiting_counters: false,
            redirect_since: vec![0; usize::from(cfg.ports)],
            last_now: 0,
            last_wake: None,
            plan: Vec::new(),
            dispatched: Vec::new(),
            detections: Vec::new(),
            inactive: Vec::new(),
            pending_shapes: Vec::new(),
            stats: TcpuStats::default(),
            cfg,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &TcpuConfig {
        &self.cfg
    }

    /// Counters.
    pub fn stats(&self) -> TcpuStats {
        self.stats
    }

    /// Table-channel counters.
    pub fn channel_stats(&self) -> ChannelStats {
        self.channel.stats()
    }

    /// The CPU's flow table.
    pub fn flows(&self) -> &FlowTable {
        &self.flows
    }

    /// Flow entries in effect in the ASIC now (placed, or being deleted). Never above k.
    pub fn installed_flow_entries(&self) -> usize {
        self.flows
            .asic_members()
            .iter()
            .filter(|&&i| {
                self.flows
                    .get(i)
                    .is_some_and(|e| matches!(e.placement, Placement::Asic | Placement::Removing))
            })
            .count()
    }

    /// TCAM flow slots neither held nor promised.
    pub fn free_slots(&self) -> u32 {
        self.free_slots
    }

    /// DRAM in use.
    pub fn dram_used(&self) -> u64 {
        self.buf.dram_used()
    }

    /// Most DRAM ever in use.
    pub fn peak_dram(&self) -> u64 {
        self.buf.peak_dram()
    }

    /// A port's R_port state.
    pub fn redirect(&self, port: u16) -> RedirectState {
        self.buf.redirect(port)
    }

    /// The attack detector's evidence for the port's last judged window.
    pub fn attack_verdict(&self, port: u16) -> Option<Verdict> {
        self.attack.last_verdict(port)
    }

    /// Feeds one event at `now` (picoseconds, non-decreasing) and appends the resulting
    /// actions to `out`.
    pub fn handle(&mut self, now: Time, ev: Event<'_>, out: &mut Vec<Action>) -> Result<(), CoreError> {
        if now < self.last_now {
            return Err(CoreError::TimeWentBack {
                now,
                last: self.last_now,
            });
        }
        if let Event::PacketToCpu { port, .. } | Event::QueueLength { port, .. } = ev {
            if port >= self.cfg.ports {
                return Err(CoreError::UnknownPort(port));
            }
        }
        self.last_now = now;
        self.advance(now, out);
        match ev {
            Event::PacketToCpu {
                pkt,
                flow,
                src,
                port,
                bytes,
                is_tcp,
            } => self.on_packet(now, pkt, flow, src, port, bytes, is_tcp, out),
            Event::AsicCounters { counters } => self.on_counters(now, counters),
            Event::QueueLength { port, packets } => {
                self.buf.set_last_qlen(port, packets);
                self.maybe_redirect(port);
            }
            Event::Tick => {}
            Event::OpFailed { matches } => self.on_failed(matches),
        }
        self.advance(now, out);
        self.request_wake(now, out);
        Ok(())
    }

    /// Completes operations, releases DRAM, removes drained R_ports, starts rankings, judges
    /// attack windows and starts channel operations, all as of `now`.
    fn advance(&mut self, now: Time, out: &mut Vec<Action>) {
        while let Some(d) = self.channel.pop_done(now) {
            self.complete(d, now);
        }
        self.buf.release(now);
        for port in 0..self.cfg.ports {
            if self.buf.redirect(port) == RedirectState::On
                && self.buf.port_bytes(port) == 0
                && self.redirect_since[usize::from(port)].saturating_add(self.cfg.rport_min_hold) <= now
            {
                self.buf.set_redirect(port, RedirectState::Removing);
                self.stats.rport_removals += 1;
                self.channel.push(
                    Lane::Urgent,
                    QueuedOp {
                        op: TableOp::Delete(RuleMatch::OutPort(port)),
                        frees_slot: false,
                    },
                );
            }
        }
        if now >= self.next_rank {
            while self.next_rank <= now {
                self.next_rank = self.next_rank.saturating_add(self.cfg.rank_interval);
            }
            self.start_ranking(now);
        }
        if self.cfg.attack_defense {
            self.attack.poll(now, &mut self.detections);
            self.on_detections();
        }
        self.dispatched.clear();
        self.channel.dispatch(now, &mut self.dispatched);
        for d in &self.dispatched {
            out.push(match d.op.op {
                TableOp::Insert(rule) => Action::InstallRule { rule, at: d.done },
                TableOp::Delete(matches) => Action::RemoveRule { matches, at: d.done },
                TableOp::ReadCounters { last: true, .. } => Action::ReadCounters { at: d.done },
                // An earlier batch of a table read: it only occupies the channel.
                TableOp::ReadCounters { last: false, .. } => continue,
            });
        }
        for src in self.pending_shapes.drain(..) {
            out.push(Action::Shape {
                src,
                rate_bps: self.cfg.bw_attack_bps,
            });
        }
    }

    fn request_wake(&mut self, now: Time, out: &mut Vec<Action>) {
        let mut next = self.next_rank;
        if let Some(t) = self.channel.next_event() {
            next = next.min(t);
        }
        if self.cfg.attack_defense {
            if let Some(t) = self.attack.next_deadline() {
                next = next.min(t);
            }
        }
        for port in 0..self.cfg.ports {
            if self.buf.redirect(port) == RedirectState::On {
                let hold = self.redirect_since[usize::from(port)].saturating_add(self.cfg.rport_min_hold);
                let t = self.buf.drained_at(port).map_or(hold, |d| d.max(hold));
                next = next.min(t);
            }
        }
        let next = next.max(now.saturating_add(1));
        let stale = self.last_wake.is_none_or(|w| w <= now || next < w);
        if stale {
            self.last_wake = Some(next);
            out.push(Action::WakeAt { at: next });
        }
    }

    fn complete(&mut self, d: Dispatched, _now: Time) {
        match d.op.op {
            TableOp::Insert(rule) => match rule.matches {
                RuleMatch::Flow(f) => {
                    let Some(idx) = self.flows.find(f) else { return };
                    let long_rule = rule.priority == self.cfg.prio_long;
                    if let Some(e) = self.flows.get_mut(idx) {
                        if !matches!(e.placement, Placement::Inserting | Placement::Asic) {
                            e.pin_queued = false;
                            return;
                        }
                        e.asic_counter = 0;
                        e.last_active = e.last_active.max(d.done);
                        e.pinned = long_rule;
                        if long_rule {
                            e.pin_queued = false;
                        }
                    }
                    self.flows.set_placement(idx, Placement::Asic);
                    self.maybe_pin(idx, d.done);
                }
                RuleMatch::OutPort(p) => {
                    if self.buf.redirect(p) == RedirectState::Installing {
                        self.buf.set_redirect(p, RedirectState::On);
                        if let Some(s) = self.redirect_since.get_mut(usize::from(p)) {
                            *s = d.done;
                        }
                    }
                }
                RuleMatch::Src(_) => {}
            },
            TableOp::Delete(m) => match m {
                RuleMatch::Flow(f) => {
                    if d.op.frees_slot {
                        self.free_slots += 1;
                    }
                    if let Some(idx) = self.flows.find(f) {
                        if let Some(e) = self.flows.get_mut(idx) {
                            e.pinned = false;
                            e.pin_queued = false;
                        }
                        self.flows.set_placement(idx, Placement::Cpu);
                    }
                }
                RuleMatch::OutPort(p) => {
                    if self.buf.redirect(p) == RedirectState::Removing {
                        self.buf.set_redirect(p, RedirectState::Off);
                        self.maybe_redirect(p);
                    }
                }
                RuleMatch::Src(_) => {}
            },
            TableOp::ReadCounters { .. } => {}
        }
    }

    /// Installs R_port if the port's last reported queue is at or above Q_redirect.
    fn maybe_redirect(&mut self, port: u16) {
        if self.cfg.deep_buffer
            && self.buf.last_qlen(port) >= self.cfg.q_redirect_pkts
            && self.buf.redirect(port) == RedirectState::Off
        {
            self.buf.set_redirect(port, RedirectState::Installing);
            self.stats.rport_installs += 1;
            self.channel.push(
                Lane::Urgent,
                QueuedOp {
                    op: TableOp::Insert(port_redirect_rule(&self.cfg, port)),
                    frees_slot: false,
                },
            );
        }
    }

    fn start_ranking(&mut self, now: Time) {
        let members = self.flows.asic_members().len() as u32;
        if self.awaiting_counters {
            self.stats.missed_counter_reads += 1;
            self.awaiting_counters = false;
            self.rank(now);
        } else if members > 0 {
            self.awaiting_counters = true;
            // In batches, so that urgent and placement operations can go between them; pushed
            // to the front of the bulk lane last batch first, so they start in order.
            let batch = self.cfg.counter_read_batch.max(1);
            let batches = members.div_ceil(batch);
            for i in (0..batches).rev() {
                let entries = if i + 1 == batches { members - i * batch } else { batch };
                self.channel.push_bulk_front(QueuedOp {
                    op: TableOp::ReadCounters {
                        entries,
                        last: i + 1 == batches,
                    },
                    frees_slot: false,
                });
            }
        } else {
            self.rank(now);
        }
    }

    fn on_counters(&mut self, now: Time, counters: &[(FlowId, u64)]) {
        for &(f, c) in counters {
            let Some(idx) = self.flows.find(f) else {
                self.stats.unknown_counters += 1;
                continue;
            };
            let Some(e) = self.flows.get_mut(idx) else { continue };
            if !matches!(e.placement, Placement::Asic | Placement::Removing) {
                self.stats.unknown_counters += 1;
                continue;
            }
            let delta = if c >= e.asic_counter { c - e.asic_counter } else { c };
            e.asic_counter = c;
            if delta == 0 {
                continue;
            }
            let before = e.total_bytes;
            e.total_bytes = e.total_bytes.saturating_add(delta);
            e.interval_bytes = e.interval_bytes.saturating_add(delta);
            e.last_active = now;
            self.stats.asic_bytes = self.stats.asic_bytes.saturating_add(delta);
            if long_flows::crosses(&self.cfg, before, e.total_bytes) && long_flows::eligible(&self.cfg, e.is_tcp) {
                e.long = true;
                self.maybe_pin(idx, now);
            }
        }
        if self.awaiting_counters {
            self.awaiting_counters = false;
            self.rank(now);
        }
    }

    fn rule_for(&self, idx: u32) -> Option<(Rule, bool)> {
        let e = self.flows.get(idx)?;
        Some(if e.long && long_flows::eligible(&self.cfg, e.is_tcp) {
            (long_flows::long_flow_rule(&self.cfg, e.id, e.port), true)
        } else {
            (long_flows::flow_rule(&self.cfg, e.id, e.port), false)
        })
    }

    /// Moves `inn` (on the CPU) into the ASIC, in a free slot (`out` = None) or in `out`'s.
    fn move_in(&mut self, lane: Lane, inn: u32, out: Option<u32>) {
        let Some((rule, long)) = self.rule_for(inn) else { return };
        if let Some(o) = out {
            let Some(oid) = self.flows.get(o).map(|e| e.id) else {
                return;
            };
            self.flows.set_placement(o, Placement::Removing);
            self.channel.push(
                lane,
                QueuedOp {
                    op: TableOp::Delete(RuleMatch::Flow(oid)),
                    frees_slot: false,
                },
            );
        } else {
            self.free_slots -= 1;
        }
        if let Some(e) = self.flows.get_mut(inn) {
            e.pin_queued = long;
        }
        self.flows.set_placement(inn, Placement::Inserting);
        self.channel.push(
            lane,
            QueuedOp {
                op: TableOp::Insert(rule),
                frees_slot: false,
            },
        );
    }

    fn rank(&mut self, now: Time) {
        let share = self.cfg.rank_interval / 100 * Time::from(self.cfg.bulk_channel_share_pct);
        let budget = share
            .saturating_sub(self.channel.bulk_backlog())
            .saturating_sub(self.channel.busy_for(now));
        let mut plan = std::mem::take(&mut self.plan);
        let summary = self.flows.rank(
            RankParams {
                now,
                free_slots: self.free_slots,
                budget,
                insert_time: self.channel.insert_time(),
                delete_time: self.channel.delete_time(),
                t_inactive: self.cfg.t_inactive,
                idle_timeout: self.cfg.flow_idle_timeout,
            },
            &mut plan,
        );
        for p in &plan {
            match *p {
                SwapPlan::Insert { flow } => {
                    self.stats.free_slot_inserts += 1;
                    self.move_in(Lane::Bulk, flow, None);
                }
                SwapPlan::Swap { out, inn } => {
                    self.stats.rank_swaps += 1;
                    self.move_in(Lane::Bulk, inn, Some(out));
                }
            }
        }
        self.plan = plan;
        self.stats.rankings += 1;
        self.stats.deferred_moves += summary.deferred as u64;
        self.inactive.clear();
        self.flows
            .collect_inactive(now, self.cfg.t_inactive, &mut self.inactive);
        // Pop from the back: the list is in slot order, so take the oldest-listed last.
        self.inactive.reverse();
    }

    #[allow(clippy::too_many_arguments)]
    fn on_packet(
        &mut self,
        now: Time,
        pkt: PacketRef,
        flow: FlowId,
        src: u32,
        port: u16,
        bytes: u32,
        is_tcp: bool,
        out: &mut Vec<Action>,
    ) {
        self.stats.cpu_packets += 1;
        self.stats.cpu_bytes += u64::from(bytes);
        let (idx, new) = match self.flows.find(flow) {
            Some(i) => (i, false),
            None => {
                self.stats.new_flows += 1;
                (self.flows.insert(flow, src, port, is_tcp, now), true)
            }
        };
        let mut became_long = false;
        if let Some(e) = self.flows.get_mut(idx) {
            let before = e.total_bytes;
            e.port = port;
            e.total_bytes = e.total_bytes.saturating_add(u64::from(bytes));
            e.interval_bytes = e.interval_bytes.saturating_add(u64::from(bytes));
            e.last_active = now;
            if long_flows::crosses(&self.cfg, before, e.total_bytes) && long_flows::eligible(&self.cfg, e.is_tcp) {
                e.long = true;
                became_long = true;
            }
        }
        if new && !became_long {
            self.place_new_flow(now, idx);
        }
        self.maybe_pin(idx, now);
        if self.cfg.attack_defense {
            self.attack.observe(now, port, src, bytes, &mut self.detections);
            self.on_detections();
        }
        match self.buf.enqueue(now, port, src, bytes, is_tcp) {
            Ok(at) => out.push(Action::SendFromCpu {
                port,
                pkt,
                class: self.cfg.cpu_return_class,
                at,
            }),
            Err(r) => {
                let reason = match r {
                    Reject::DramFull => {
                        self.stats.drops_dram_full += 1;
                        DropReason::DramFull
                    }
                    Reject::NonTcpCap => {
                        self.stats.drops_non_tcp += 1;
                        DropReason::NonTcpCap
                    }
                };
                out.push(Action::Drop { pkt, reason });
            }
        }
    }

    /// A new flow goes into a free slot, or swaps out an inactive ASIC entry, or stays on the
    /// CPU (paper §3.1).
    fn place_new_flow(&mut self, now: Time, idx: u32) {
        if self.free_slots > 0 {
            self.stats.free_slot_inserts += 1;
            self.move_in(Lane::Placement, idx, None);
            return;
        }
        while let Some(v) = self.inactive.pop() {
            let ok = self.flows.get(v).is_some_and(|e| {
                e.placement == Placement::Asic
                    && !e.pin_queued
                    && e.last_active.saturating_add(self.cfg.t_inactive) <= now
            });
            if ok {
                self.stats.inactive_swaps += 1;
                self.move_in(Lane::Placement, idx, Some(v));
                return;
            }
        }
    }

    /// Pins a long flow onto the ASIC with R_flow_j, if it is long, eligible and not pinned.
    fn maybe_pin(&mut self, idx: u32, now: Time) {
        let Some(e) = self.flows.get(idx) else { return };
        if !e.long || e.pinned || e.pin_queued || !long_flows::eligible(&self.cfg, e.is_tcp) {
            return;
        }
        match e.placement {
            Placement::Asic => {
                let rule = long_flows::long_flow_rule(&self.cfg, e.id, e.port);
                if let Some(e) = self.flows.get_mut(idx) {
                    e.pin_queued = true;
                }
                self.stats.long_pins += 1;
                self.channel.push(
                    Lane::Urgent,
                    QueuedOp {
                        op: TableOp::Insert(rule),
                        frees_slot: false,
                    },
                );
            }
            Placement::Cpu => {
                if self.free_slots > 0 {
                    self.stats.long_pins += 1;
                    self.move_in(Lane::Urgent, idx, None);
                } else if let Some(v) = self.flows.pick_victim(now, self.cfg.t_inactive) {
                    self.stats.long_pins += 1;
                    self.move_in(Lane::Urgent, idx, Some(v));
                } else {
                    self.stats.long_unpinned += 1;
                }
            }
            Placement::Inserting | Placement::Removing => {}
        }
    }

    fn on_failed(&mut self, m: RuleMatch) {
        self.stats.op_failures += 1;
        match m {
            RuleMatch::Flow(f) => {
                // A refusal cannot be about an insert that has not started: with one of this
                // flow's inserts still queued, the report is stale (about an earlier
                // placement) and the queued insert, whose slot is only free once the delete
                // paired with it has run, stands.
                if self.channel.has_queued_insert(m) {
                    return;
                }
                let Some(idx) = self.flows.find(f) else { return };
                let Some(e) = self.flows.get_mut(idx) else { return };
                if matches!(e.placement, Placement::Inserting | Placement::Asic) {
                    e.pinned = false;
                    e.pin_queued = false;
                    self.free_slots += 1;
                    self.flows.set_placement(idx, Placement::Cpu);
                    // An insert of this flow still waiting in the channel would otherwise take
                    // effect after the flow is placed again, beside that placement's own
                    // insert, and the ASIC would hold more than k entries.
                    self.channel.cancel_inserts(RuleMatch::Flow(f));
                }
            }
            RuleMatch::OutPort(p) => self.buf.set_redirect(p, RedirectState::Off),
            RuleMatch::Src(_) => {}
        }
    }

    fn on_detections(&mut self) {
        if self.detections.is_empty() {
            return;
        }
        let mut dets = std::mem::take(&mut self.detections);
        for d in dets.drain(..) {
            if self.buf.shape(d.src) {
                self.stats.attackers += 1;
                self.channel.push(
                    Lane::Urgent,
                    QueuedOp {
                        op: TableOp::Insert(Rule {
                            priority: self.cfg.prio_attack,
                            matches: RuleMatch::Src(d.src),
                            action: RuleAction::ToCpu,
                        }),
                        frees_slot: false,
                    },
                );
                self.pending_shapes.push(d.src);
            }
        }
        self.detections = dets;
    }
}

impl tandem_time::sansio::SansIo for Tcpu {
    type Input<'a> = Event<'a>;
    type Output = Vec<Action>;
    type Error = CoreError;

    fn handle(&mut self, now: Time, input: Event<'_>, out: &mut Vec<Action>) -> Result<(), CoreError> {
        Tcpu::handle(self, now, input, out)
    }

    /// The time of the last [`Action::WakeAt`] (the earliest time the core needs a tick).
    fn poll_timeout(&self) -> Option<Time> {
        self.last_wake
    }

    fn timeout() -> Event<'static> {
        Event::Tick
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{MS, SEC, US};
    use std::collections::{BTreeMap, BTreeSet};

    type RateFn = Box<dyn Fn(Time, FlowId) -> u64>;

    /// A tiny adapter: answers wakes and counter reads in time order and logs every action.
    struct H {
        core: Tcpu,
        log: Vec<(Time, Action)>,
        pending: BTreeSet<(Time, u8)>,
        installed: BTreeMap<FlowId, Time>,
        /// Cumulative bytes a flow has sent by a time (what an ASIC counter would see).
        sent: RateFn,
        counters: Vec<(FlowId, u64)>,
    }

    impl H {
        fn new(cfg: TcpuConfig, sent: RateFn) -> H {
            H {
                core: Tcpu::new(cfg).unwrap(),
                log: Vec::new(),
                pending: BTreeSet::new(),
                installed: BTreeMap::new(),
                sent,
                counters: Vec::new(),
            }
        }

        fn feed(&mut self, t: Time, ev: Event<'_>) {
            let mut out = Vec::new();
            self.core.handle(t, ev, &mut out).unwrap();
            // The shared contract's poll_timeout is the last wake the core asked for, always
            // in the future.
            let wake = tandem_time::sansio::SansIo::poll_timeout(&self.core);
            if let Some(&Action::WakeAt { at }) = out.iter().rev().find(|a| matches!(a, Action::WakeAt { .. })) {
                assert_eq!(wake, Some(at));
            }
            assert!(wake.is_some_and(|w| w > t), "{wake:?} at {t}");
            for a in out {
                match a {
                    Action::WakeAt { at } => {
                        self.pending.insert((at, 0));
                    }
                    Action::ReadCounters { at } => {
                        self.pending.insert((at, 1));
                    }
                    Action::InstallRule { rule, at } => {
                        if let RuleMatch::Flow(f) = rule.matches {
                            self.installed.insert(f, at);
                        }
                    }
                    Action::RemoveRule {
                        matches: RuleMatch::Flow(f),
                        ..
                    } => {
                        self.installed.remove(&f);
                    }
                    _ => {}
                }
                self.log.push((t, a));
            }
        }

        /// Runs wakes and counter reads up to and including `t`.
        fn run_until(&mut self, t: Time) {
            while let Some(&(at, kind)) = self.pending.first() {
                if at > t {
                    break;
                }
                self.pending.remove(&(at, kind));
                if kind == 1 {
                    let mut c = std::mem::take(&mut self.counters);
                    c.clear();
                    for (&f, &since) in &self.installed {
                        if since <= at {
                            c.push((f, (self.sent)(at, f) - (self.sent)(since, f)));
                        }
                    }
                    self.feed(at, Event::AsicCounters { counters: &c });
                    self.counters = c;
                } else {
                    self.feed(at, Event::Tick);
                }
            }
        }

        fn at(&mut self, t: Time, ev: Event<'_>) {
            self.run_until(t);
            self.feed(t, ev);
        }

        fn pkt(&mut self, t: Time, flow: u32, port: u16, bytes: u32) {
            self.at(
                t,
                Event::PacketToCpu {
                    pkt: PacketRef((u64::from(flow) << 32) | (t / US)),
                    flow: FlowId(flow),
                    src: flow,
                    port,
                    bytes,
                    is_tcp: true,
                },
            );
        }

        fn removes(&self) -> Vec<(Time, RuleMatch)> {
            self.log
                .iter()
                .filter_map(|(t, a)| match a {
                    Action::RemoveRule { matches, .. } => Some((*t, *matches)),
                    _ => None,
                })
                .collect()
        }

        fn installs(&self) -> Vec<(Time, Rule)> {
            self.log
                .iter()
                .filter_map(|(t, a)| match a {
                    Action::InstallRule { rule, .. } => Some((*t, *rule)),
                    _ => None,
                })
                .collect()
        }
    }

    fn flow_table_only(k: u32) -> TcpuConfig {
        TcpuConfig {
            asic_flow_entries: k,
            deep_buffer: false,
            long_flows: false,
            attack_defense: false,
            ..TcpuConfig::default()
        }
    }

    #[test]
    fn k2_three_flows_swap_exactly_when_rates_cross() {
        // A (flow 1) and B (flow 2) fill the two slots; their counters grow 100 KB and 50 KB
        // per 100 ms. C (flow 3) stays on the CPU sending 10 KB per interval, then 60 KB from
        // 300 ms on: the ranking at 400 ms is the first to see C faster than B.
        let sent: RateFn = Box::new(|t, f| match f.0 {
            1 => t / (100 * MS) * 100_000 + (t % (100 * MS)) / MS * 1_000,
            2 => t / (100 * MS) * 50_000 + (t % (100 * MS)) / MS * 500,
            _ => 0,
        });
        let mut h = H::new(flow_table_only(2), sent);
        h.pkt(MS, 1, 0, 1000);
        h.pkt(MS, 2, 0, 1000);
        h.pkt(MS, 3, 0, 1000);
        let mut t = 100 * MS;
        while t < 600 * MS {
            let per = if t < 300 * MS { 10 } else { 60 };
            for i in 0..per {
                h.pkt(t + 1 + i * MS, 3, 0, 1000);
            }
            t += 100 * MS;
        }
        h.run_until(600 * MS);
        let removes = h.removes();
        assert_eq!(removes.len(), 1, "{removes:?}");
        let (when, what) = removes[0];
        assert_eq!(what, RuleMatch::Flow(FlowId(2)));
        assert!((400 * MS..401 * MS).contains(&when), "swap at {when}");
        let c_in: Vec<_> = h
            .installs()
            .into_iter()
            .filter(|(_, r)| r.matches == RuleMatch::Flow(FlowId(3)))
            .collect();
        assert_eq!(c_in.len(), 1);
        assert!(c_in[0].0 >= when);
        assert_eq!(h.core.stats().rank_swaps, 1);
        assert!(h.core.installed_flow_entries() <= 2);
    }

    fn inactive_case(new_flow_at: Time) -> H {
        // A (flow 1) sends until 250 ms: the counter read at 300 ms is its last growth.
        let sent: RateFn = Box::new(|t, f| if f.0 == 1 { t.min(250 * MS) / MS * 1_000 } else { 0 });
        let mut h = H::new(flow_table_only(1), sent);
        h.pkt(MS, 1, 0, 1000);
        h.pkt(new_flow_at, 2, 0, 1000);
        h.run_until(new_flow_at + MS);
        h
    }

    #[test]
    fn new_flow_replaces_an_entry_only_after_t_inactive() {
        // At 1.25 s, A was last active at 0.3 s: not inactive yet; B stays on the CPU.
        let h = inactive_case(1_250 * MS);
        assert!(h.removes().is_empty());
        assert_eq!(h.core.stats().inactive_swaps, 0);
        // At 1.35 s it is (0.3 s + 1 s): B takes A's slot at once, not at the next ranking.
        let h = inactive_case(1_350 * MS);
        let removes = h.removes();
        assert_eq!(removes, vec![(1_350 * MS, RuleMatch::Flow(FlowId(1)))]);
        assert_eq!(h.core.stats().inactive_swaps, 1);
        assert!(h
            .installs()
            .iter()
            .any(|(t, r)| (1_350 * MS..1_351 * MS).contains(t) && r.matches == RuleMatch::Flow(FlowId(2))));
    }

    fn deep_buffer_only() -> TcpuConfig {
        TcpuConfig {
            asic_flow_entries: 1,
            long_flows: false,
            attack_defense: false,
            ..TcpuConfig::default()
        }
    }

    #[test]
    fn r_port_at_exactly_q_redirect_and_removed_when_dram_empties() {
        let mut h = H::new(deep_buffer_only(), Box::new(|_, _| 0));
        h.at(10 * US, Event::QueueLength { port: 3, packets: 79 });
        assert!(h.installs().iter().all(|(_, r)| r.matches != RuleMatch::OutPort(3)));
        h.at(20 * US, Event::QueueLength { port: 3, packets: 80 });
        let rport: Vec<_> = h
            .installs()
            .into_iter()
            .filter(|(_, r)| r.matches == RuleMatch::OutPort(3))
            .collect();
        assert_eq!(rport.len(), 1);
        assert_eq!(rport[0].0, 20 * US);
        assert_eq!(rport[0].1.priority, h.core.config().prio_port);
        assert_eq!(rport[0].1.action, RuleAction::ToCpu);
        // A redirected burst: 200 packets of 1500 B at 2C, from 100 us.
        let mut last_at = 0;
        for i in 0..200u64 {
            h.pkt(100 * US + i * 6 * US, 1000 + i as u32 % 5, 3, 1500);
            if let Some((_, Action::SendFromCpu { at, .. })) = h.log.last() {
                last_at = *at;
            }
        }
        assert_eq!(h.core.redirect(3), RedirectState::On);
        assert!(h.core.dram_used() > 0);
        // The ASIC queue has drained below Q_redirect meanwhile (otherwise R_port would be
        // installed again as soon as it is removed).
        h.at(1_400 * US, Event::QueueLength { port: 3, packets: 0 });
        h.run_until(last_at - 1);
        assert!(h.removes().is_empty(), "removed before the DRAM queue emptied");
        h.run_until(last_at + SEC / 10);
        let removes = h.removes();
        assert_eq!(removes, vec![(last_at, RuleMatch::OutPort(3))]);
        h.run_until(last_at + SEC / 5);
        assert_eq!(h.core.redirect(3), RedirectState::Off);
        assert_eq!(h.core.dram_used(), 0);
        assert_eq!(h.core.stats().drops_dram_full, 0);
    }

    #[test]
    fn dram_full_is_a_counted_drop() {
        let cfg = TcpuConfig {
            dram_bytes: 3_000,
            ..deep_buffer_only()
        };
        let mut h = H::new(cfg, Box::new(|_, _| 0));
        for _ in 0..3 {
            h.pkt(MS, 7, 0, 1500);
        }
        let drops: Vec<_> = h
            .log
            .iter()
            .filter_map(|(_, a)| match a {
                Action::Drop { reason, .. } => Some(*reason),
                _ => None,
            })
            .collect();
        assert_eq!(drops, vec![DropReason::DramFull]);
        assert_eq!(h.core.stats().drops_dram_full, 1);
        assert!(h.core.dram_used() <= 3_000);
    }

    #[test]
    fn long_flow_pinned_at_exactly_50kb() {
        let cfg = TcpuConfig {
            asic_flow_entries: 1,
            attack_defense: false,
            ..TcpuConfig::default()
        };
        let mut h = H::new(cfg, Box::new(|_, _| 0));
        h.pkt(MS, 1, 0, 100); // flow 1 takes the only slot
        for i in 0..49 {
            h.pkt(2 * MS + i * US, 2, 0, 1000);
        }
        h.pkt(3 * MS, 2, 0, 999); // 49,999 bytes
        let long = |h: &H| {
            h.installs()
                .into_iter()
                .filter(|(_, r)| r.matches == RuleMatch::Flow(FlowId(2)))
                .collect::<Vec<_>>()
        };
        assert!(long(&h).is_empty());
        h.pkt(4 * MS, 2, 0, 1); // 50,000 bytes
        h.run_until(5 * MS);
        let l = long(&h);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].1.priority, h.core.config().prio_long);
        assert_eq!(
            l[0].1.action,
            RuleAction::Output {
                port: 0,
                class: Some(h.core.config().long_flow_class)
            }
        );
        // The slot came from evicting flow 1, through the urgent lane, before the insert.
        assert_eq!(h.removes(), vec![(4 * MS, RuleMatch::Flow(FlowId(1)))]);
        assert_eq!(h.core.stats().long_pins, 1);
        assert!(
            h.core
                .flows()
                .get(h.core.flows().find(FlowId(2)).unwrap())
                .unwrap()
                .pinned
        );
    }

    #[test]
    fn channel_budget_limits_swaps_per_ranking() {
        // 200 inserts/s and deletes/s: a swap costs 10 ms of channel, so at most 8 fit the
        // 80 ms (80%) of each 100 ms ranking interval.
        let cfg = TcpuConfig {
            inserts_per_sec: 200,
            deletes_per_sec: 200,
            ..flow_table_only(20)
        };
        let mut h = H::new(cfg, Box::new(|_, _| 0));
        // 20 idle flows fill the table (20 inserts: 100 ms of channel).
        for f in 0..20 {
            h.pkt(MS, f, 0, 100);
        }
        // 20 busy CPU flows, 10 packets every 10 ms each.
        let mut swaps_after = Vec::new();
        let mut t = 2 * MS;
        while t < 1_000 * MS {
            for f in 100..120 {
                h.pkt(t, f, 0, 1000);
            }
            t += 10 * MS;
            if t % (100 * MS) == 2 * MS {
                swaps_after.push(h.core.stats().rank_swaps);
            }
        }
        let per_ranking: Vec<u64> = swaps_after.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(per_ranking.iter().all(|&s| s <= 8), "{per_ranking:?}");
        assert!(per_ranking.iter().any(|&s| s > 0));
        assert_eq!(h.core.stats().rank_swaps, 20, "all swapped in, over several rankings");
        // Deletes started within any one second never exceed the channel rate.
        assert!(h.core.channel_stats().deletes <= 200);
        assert!(h.core.installed_flow_entries() <= 20);
    }

    #[test]
    fn attack_through_the_core_shapes_the_pulsing_sources() {
        let cfg = TcpuConfig {
            long_flows: false,
            ..TcpuConfig::default()
        };
        let mut core = Tcpu::new(cfg).unwrap();
        let mut out = Vec::new();
        let gap = crate::types::tx_time(1000, 200_000_000);
        let mut burst = 0;
        while burst < 3 * SEC {
            for k in 0..200 {
                for a in 0..14u32 {
                    let ev = Event::PacketToCpu {
                        pkt: PacketRef(0),
                        flow: FlowId(a),
                        src: 100 + a,
                        port: 0,
                        bytes: 1000,
                        is_tcp: false,
                    };
                    core.handle(burst + k * gap, ev, &mut out).unwrap();
                }
            }
            burst += 320 * MS;
        }
        core.handle(3 * SEC, Event::Tick, &mut out).unwrap();
        let shaped: Vec<u32> = out
            .iter()
            .filter_map(|a| match a {
                Action::Shape { src, rate_bps } => {
                    assert_eq!(*rate_bps, 200_000_000);
                    Some(*src)
                }
                _ => None,
            })
            .collect();
        assert_eq!(shaped, (100..114).collect::<Vec<_>>());
        assert_eq!(core.stats().attackers, 14);
    }

    /// A fixed pseudo-random event mix (xorshift), for the determinism test.
    fn scripted_run(seed: u64) -> Vec<Action> {
        let cfg = TcpuConfig {
            asic_flow_entries: 8,
            ports: 4,
            dram_bytes: 200_000,
            ..TcpuConfig::default()
        };
        let mut core = Tcpu::new(cfg).unwrap();
        let mut out = Vec::new();
        let mut x = seed;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut now = 0;
        for _ in 0..20_000 {
            now += rnd() % (200 * US);
            let r = rnd();
            let ev = match r % 10 {
                0 => Event::QueueLength {
                    port: (r >> 8) as u16 % 4,
                    packets: (r >> 16) as u32 % 120,
                },
                1 => Event::Tick,
                _ => Event::PacketToCpu {
                    pkt: PacketRef(r),
                    flow: FlowId((r >> 8) as u32 % 40),
                    src: (r >> 20) as u32 % 10,
                    port: (r >> 30) as u16 % 4,
                    bytes: 64 + (r >> 40) as u32 % 1437,
                    is_tcp: r >> 60 != 0,
                },
            };
            core.handle(now, ev, &mut out).unwrap();
        }
        out
    }

    #[test]
    fn same_events_same_actions() {
        let a = scripted_run(42);
        let b = scripted_run(42);
        assert!(a.len() > 1_000);
        assert_eq!(a, b);
        assert_ne!(a, scripted_run(43));
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let mut core = Tcpu::new(TcpuConfig::default()).unwrap();
        let mut out = Vec::new();
        core.handle(10, Event::Tick, &mut out).unwrap();
        assert_eq!(
            core.handle(5, Event::Tick, &mut out),
            Err(CoreError::TimeWentBack { now: 5, last: 10 })
        );
        assert_eq!(
            core.handle(10, Event::QueueLength { port: 99, packets: 1 }, &mut out),
            Err(CoreError::UnknownPort(99))
        );
        assert!(Tcpu::new(TcpuConfig {
            ports: 0,
            ..TcpuConfig::default()
        })
        .is_err());
    }

    mod prop {
        use super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Op {
            Pkt {
                dt: u64,
                flow: u32,
                src: u32,
                port: u16,
                bytes: u32,
                tcp: bool,
            },
            Queue {
                dt: u64,
                port: u16,
                packets: u32,
            },
            Counters {
                dt: u64,
                grow: u64,
            },
            Tick {
                dt: u64,
            },
            Fail {
                dt: u64,
                flow: u32,
            },
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                6 => (0..2_000_000u64, 0..30u32, 0..6u32, 0..5u16, 0..2_000u32, any::<bool>())
                    .prop_map(|(dt, flow, src, port, bytes, tcp)| Op::Pkt { dt, flow, src, port, bytes, tcp }),
                1 => (0..2_000_000u64, 0..5u16, 0..200u32).prop_map(|(dt, port, packets)| Op::Queue { dt, port, packets }),
                1 => (0..2_000_000u64, 0..100_000u64).prop_map(|(dt, grow)| Op::Counters { dt, grow }),
                1 => (0..300_000_000_000u64).prop_map(|dt| Op::Tick { dt }),
                1 => (0..2_000_000u64, 0..30u32).prop_map(|(dt, flow)| Op::Fail { dt, flow }),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            #[test]
            fn never_panics_and_keeps_invariants(ops in proptest::collection::vec(op(), 1..400)) {
                let cfg = TcpuConfig {
                    asic_flow_entries: 4,
                    ports: 4,
                    dram_bytes: 20_000,
                    attack_window: 30 * MS,
                    ..TcpuConfig::default()
                };
                let mut core = Tcpu::new(cfg).unwrap();
                let mut out = Vec::new();
                let mut now = 0u64;
                let mut counter = 0u64;
                for o in ops {
                    let r = match o {
                        Op::Pkt { dt, flow, src, port, bytes, tcp } => {
                            now += dt;
                            core.handle(now, Event::PacketToCpu {
                                pkt: PacketRef(now), flow: FlowId(flow), src, port, bytes, is_tcp: tcp,
                            }, &mut out)
                        }
                        Op::Queue { dt, port, packets } => {
                            now += dt;
                            core.handle(now, Event::QueueLength { port, packets }, &mut out)
                        }
                        Op::Counters { dt, grow } => {
                            now += dt;
                            counter += grow;
                            let c: Vec<(FlowId, u64)> = core.flows().asic_members().iter()
                                .filter_map(|&i| core.flows().get(i).map(|e| (e.id, counter)))
                                .chain([(FlowId(999), 5)])
                                .collect();
                            core.handle(now, Event::AsicCounters { counters: &c }, &mut out)
                        }
                        Op::Tick { dt } => { now += dt; core.handle(now, Event::Tick, &mut out) }
                        Op::Fail { dt, flow } => {
                            now += dt;
                            core.handle(now, Event::OpFailed { matches: RuleMatch::Flow(FlowId(flow)) }, &mut out)
                        }
                    };
                    prop_assert!(matches!(r, Ok(()) | Err(CoreError::UnknownPort(4))), "{r:?}");
                    prop_assert!(core.installed_flow_entries() <= 4);
                    prop_assert!(core.free_slots() <= 4);
                    prop_assert!(core.dram_used() <= 20_000);
                    out.clear();
                }
            }
        }
    }
}
