//! TurboSwitch in a user's own scenario: the `[[system]]` kind `"turboswitch"`, a switch in
//! front of an NF server.
//!
//! ```toml
//! [[system]]
//! kind = "turboswitch"
//! switches = ["switch0"]
//! mode = "copies"          # "recirculate" (default), "copies", "payloadpark", "no_split"
//! nf_latency = "20us"      # a plain NF; default: the calibrated FastClick forwarder
//! ```
//!
//! Every packet that enters a named switch (or only those to or from its own hosts:
//! `through = "to_hosts" | "from_hosts"`) is processed by the NF server before it goes on, and
//! the [`TurboSwitch`] program decides how: whole to the NF, or split with the payload parked
//! in the switch. The NF server, the NF port and its link back, and the recirculation ports are
//! inside the switch model (the experiments run on this model too, [`super::kernel`]): each is a queue
//! serialised byte-exactly at `port_bps` with its lanes (headers before whole packets;
//! fast lane before parking lane), the NF and recirculation queues share `buffer_bytes`, a part
//! coming back reaches ingress `pipeline_latency` later, and copies mode samples the parking
//! queues every `stats_period` (on a grid of that period, while anything is in the system) and
//! tells the program `stats_delay` later. A merged (or whole)
//! packet then takes the switch's tables, routing and egress queue, on the simulator's kernel.
//! A packet lost in the system (buffer full, slot reclaimed) is dropped with its reason in
//! drops.csv at the port it came in on. The NF's random latency draws come from the scenario
//! seed mixed with the switch's id; by default the NF keeps its packets in order
//! (`nf_order = "fifo"`: a packet leaves no earlier than the one before it), since a TCP flow
//! through it would otherwise see every ±10% latency draw as reordering (`"independent"` is
//! the experiments' NF, fed open-loop traffic).

use super::lanes::LanedQueue;
use super::record::Recorder;
use crate::config::{CoreConfig, Mode, SwitchConfig};
use crate::core::{Action, DropReason, Event, Lane, NfPacket, TurboSwitch};
use crate::nf::{self, Nf, NfConfig, LINK_BPS};
use crate::types::{tx_time, PacketId, Tag, Time};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::sync::Arc;
use tandem_sim::packet::{NodeId, PacketId as SimPacket};
use tandem_sim::scenario::system::{Placement, Site, SystemKind};
use tandem_sim::scenario::ScenarioError;
use tandem_sim::switch::{SwitchCtx, SwitchModel, Verdict};
use tandem_sim::units::{RateArg, SizeArg, TimeArg};

/// The `"turboswitch"` kind of `[[system]]` entries.
#[derive(Debug, Clone, Copy, Default)]
pub struct TurboswitchKind;

/// Which packets entering the switch pass the NF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Through {
    /// Every packet.
    All,
    /// Packets entering from a port that does not lead to a host (traffic to the rack).
    ToHosts,
    /// Packets entering from a host's port (traffic from the rack).
    FromHosts,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawMode {
    Recirculate,
    Copies,
    Payloadpark,
    NoSplit,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParams {
    mode: Option<RawMode>,
    through: Option<Through>,
    nf_order: Option<NfOrder>,
    nf_latency: Option<TimeArg>,
    split_bytes: Option<SizeArg>,
    slots: Option<u32>,
    reclaim_timeout: Option<TimeArg>,
    recirc_ports: Option<u16>,
    port_bps: Option<RateArg>,
    max_copies: Option<u32>,
    target_delay: Option<TimeArg>,
    buffer_bytes: Option<SizeArg>,
    pipeline_latency: Option<TimeArg>,
    stats_delay: Option<TimeArg>,
    stats_period: Option<TimeArg>,
}

/// A placed TurboSwitch's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct TorConfig {
    /// The switch program.
    pub core: CoreConfig,
    /// The switch hardware around it (`output_ports` is unused: the kernel's ports are).
    pub switch: SwitchConfig,
    /// The NF server.
    pub nf: NfConfig,
    /// Which packets pass the NF.
    pub through: Through,
    /// Whether the NF keeps its packets in order.
    pub nf_order: NfOrder,
}

/// Whether the NF server may reorder packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NfOrder {
    /// A packet leaves the NF no earlier than the one before it (a run-to-completion core
    /// keeps its packets in order): the default here.
    Fifo,
    /// Each packet's latency is drawn on its own, so a packet may overtake the one before it
    /// (the experiments' model, fed open-loop UDP, where order does not matter).
    Independent,
}

fn read(site: &Site<'_>, params: toml::Value) -> Result<TorConfig, ScenarioError> {
    let r: RawParams = site.de(params)?;
    let mut core = CoreConfig::default();
    let mut sw = SwitchConfig::default();
    if let Some(m) = r.mode {
        core.mode = match m {
            RawMode::Recirculate => Mode::Recirculate,
            RawMode::Copies => Mode::Copies,
            RawMode::Payloadpark => Mode::PayloadPark,
            RawMode::NoSplit => Mode::NoSplit,
        };
    }
    let small = |k: &str, v: u64| u32::try_from(v).map_err(|_| site.error(k, "too large"));
    if let Some(b) = r.split_bytes {
        core.split_bytes = small("split_bytes", b.0)?;
    }
    core.slots = r.slots.unwrap_or(core.slots);
    core.reclaim_timeout = r.reclaim_timeout.map_or(core.reclaim_timeout, |t| t.0);
    core.recirc_ports = r.recirc_ports.unwrap_or(core.recirc_ports);
    core.port_bps = r.port_bps.map_or(core.port_bps, |b| b.0);
    core.max_copies = r.max_copies.unwrap_or(core.max_copies);
    core.target_delay = r.target_delay.map(|t| t.0).or(core.target_delay);
    sw.buffer_bytes = r.buffer_bytes.map_or(sw.buffer_bytes, |b| b.0);
    sw.pipeline_latency = r.pipeline_latency.map_or(sw.pipeline_latency, |t| t.0);
    sw.stats_delay = r.stats_delay.map_or(sw.stats_delay, |t| t.0);
    sw.stats_period = r.stats_period.map_or(sw.stats_period, |t| t.0);
    let key_of = |e: &crate::config::ConfigError| match e {
        crate::config::ConfigError::Zero(k) | crate::config::ConfigError::Invalid(k) => *k,
    };
    core.validate().map_err(|e| site.error(key_of(&e), e.to_string()))?;
    sw.validate().map_err(|e| site.error(key_of(&e), e.to_string()))?;
    let nf = match r.nf_latency {
        Some(t) if t.0 == 0 => return Err(site.error("nf_latency", "must be above 0")),
        Some(t) => nf::fixed(t.0),
        None => nf::forwarder(sw.pipeline_latency),
    };
    Ok(TorConfig {
        core,
        switch: sw,
        nf,
        through: r.through.unwrap_or(Through::All),
        nf_order: r.nf_order.unwrap_or(NfOrder::Fifo),
    })
}

impl SystemKind for TurboswitchKind {
    fn name(&self) -> &'static str {
        "turboswitch"
    }

    fn place(&self, site: &Site<'_>, params: toml::Value) -> Result<Arc<dyn Placement>, ScenarioError> {
        let cfg = read(site, params)?;
        let topo = site.topology;
        let switches = site
            .switches
            .iter()
            .map(|&n| (n, topo.ports(n).iter().map(|p| topo.is_host(p.peer)).collect()))
            .collect();
        Ok(Arc::new(TorPlacement {
            cfg,
            seed: site.seed,
            switches,
        }))
    }
}

/// A checked entry: the configuration, the seed and, per switch, which ports lead to hosts.
#[derive(Debug)]
struct TorPlacement {
    cfg: TorConfig,
    seed: u64,
    switches: Vec<(NodeId, Vec<bool>)>,
}

impl Placement for TorPlacement {
    fn model(&self, node: NodeId) -> Option<Box<dyn SwitchModel>> {
        let (_, host_ports) = self.switches.iter().find(|s| s.0 == node)?;
        let seed = self.seed ^ u64::from(node.0).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        TurboTor::new(self.cfg.clone(), host_ports.clone(), seed)
            .ok()
            .map(|m| Box::new(m) as Box<dyn SwitchModel>)
    }
}

/// What is queued on an internal port.
#[derive(Debug, Clone, Copy)]
enum What {
    /// Toward the NF or back from it, of a packet.
    Nf(NfPacket, PacketId),
    /// A parked payload of a packet.
    Payload(Tag, PacketId),
    /// A filler copy.
    Copy,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    what: What,
    bytes: u32,
    /// When it first left for the NF (NF latency start).
    t0: Time,
    /// When it joined its current queue.
    enq: Time,
}

/// An internal port: the NF port, the NF's link back, or a recirculation port.
#[derive(Debug, Clone)]
struct IPort {
    bps: u64,
    /// Shares the switch buffer (the NF's link back does not).
    buffered: bool,
    q: LanedQueue<Entry>,
}

impl IPort {
    fn new(bps: u64, buffered: bool) -> IPort {
        IPort {
            bps,
            buffered,
            q: LanedQueue::default(),
        }
    }
}

const NF_DOWN: usize = 0;
const NF_UP: usize = 1;
const RECIRC0: usize = 2;

/// Something the model does later, by timer.
#[derive(Debug, Clone, Copy)]
enum Deferred {
    /// Internal port `i` has finished sending its current entry.
    TxDone(usize),
    /// The NF has processed an entry; it joins the NF's link back.
    NfDone(Entry),
    /// Something reaches the program at ingress.
    Ingress(Event),
    /// Sample the parking queues (copies mode).
    Sample,
    /// The program asked to be woken.
    Wake,
}

/// A packet the model holds: the simulator's id, the port it came in on, when.
#[derive(Debug, Clone, Copy)]
struct Held {
    pkt: SimPacket,
    in_port: u16,
}

/// What the placed TurboSwitch counted.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TorStats {
    /// Packets sent through the NF path.
    pub packets: u64,
    /// Packets emitted after the NF.
    pub emitted: u64,
    /// Packets lost in the NF path (buffer full, reclaimed).
    pub lost: u64,
    /// Filler copies the buffer had no room for.
    pub copies_refused: u64,
    /// Most bytes in the NF and recirculation queues at once.
    pub peak_buffer: u64,
    /// Sum and count of NF latencies (NF-port enqueue to return at ingress), ps.
    nf_sum: u128,
    nf_n: u64,
    nf_max: Time,
    /// Sum and count of payload parking times, ps.
    park_sum: u128,
    park_n: u64,
}

/// The TurboSwitch program with its NF server and recirculation ports as a simulated switch's
/// model. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct TurboTor {
    cfg: TorConfig,
    core: TurboSwitch,
    nf: Nf,
    nf_last: Time,
    host_ports: Vec<bool>,
    ports: Vec<IPort>,
    buffer: u64,
    held: FxHashMap<u64, Held>,
    next_pkt: u64,
    /// What each pending timer does, by token (a slab: a fired timer's slot is reused).
    deferred: Vec<Option<Deferred>>,
    free_tokens: Vec<u64>,
    sampling: bool,
    actions: Vec<Action>,
    stats: TorStats,
    recorder: Option<Box<Recorder>>,
}

impl TurboTor {
    /// A model with `cfg` on a switch whose port `i` leads to a host when `host_ports[i]`;
    /// the NF draws from `seed`.
    pub fn new(cfg: TorConfig, host_ports: Vec<bool>, seed: u64) -> Result<TurboTor, crate::config::ConfigError> {
        let core = TurboSwitch::new(cfg.core.clone())?;
        let bps = cfg.core.port_bps;
        let mut ports = vec![IPort::new(bps, true), IPort::new(LINK_BPS, false)];
        ports.extend((0..cfg.core.recirc_ports).map(|_| IPort::new(bps, true)));
        Ok(TurboTor {
            nf: Nf::new(cfg.nf, seed),
            nf_last: 0,
            cfg,
            core,
            host_ports,
            ports,
            buffer: 0,
            held: FxHashMap::default(),
            next_pkt: 0,
            deferred: Vec::new(),
            free_tokens: Vec::new(),
            sampling: false,
            actions: Vec::new(),
            stats: TorStats::default(),
            recorder: None,
        })
    }

    /// The same model measuring what the experiments measure into `recorder` (which also
    /// keeps the parking queues sampled until the end of its window).
    pub fn with_recorder(mut self, recorder: Recorder) -> TurboTor {
        self.recorder = Some(Box::new(recorder));
        self
    }

    /// What the recorder measured, if the model has one.
    pub fn recorder(&self) -> Option<&Recorder> {
        self.recorder.as_deref()
    }

    /// The program's counters.
    pub fn core_stats(&self) -> crate::core::CoreStats {
        *self.core.stats()
    }

    /// The model's counters.
    pub fn stats(&self) -> TorStats {
        self.stats
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

    fn passes_nf(&self, in_port: u16) -> bool {
        let from_host = self.host_ports.get(usize::from(in_port)).copied().unwrap_or(false);
        match self.cfg.through {
            Through::All => true,
            Through::ToHosts => !from_host,
            Through::FromHosts => from_host,
        }
    }

    fn feed(&mut self, cx: &mut SwitchCtx<'_>, ev: Event) {
        let mut acts = std::mem::take(&mut self.actions);
        acts.clear();
        // The kernel's time never goes backwards, so the program accepts every event.
        let _ = self.core.handle(cx.now, ev, &mut acts);
        for a in acts.drain(..) {
            self.apply(cx, a);
        }
        self.actions = acts;
    }

    fn lose(&mut self, cx: &mut SwitchCtx<'_>, pkt: PacketId, reason: DropReason) {
        if let Some(h) = self.held.remove(&pkt.0) {
            self.stats.lost += 1;
            if let Some(r) = &mut self.recorder {
                r.lost(reason);
            }
            cx.drop(h.in_port, h.pkt, reason.name());
        }
    }

    fn apply(&mut self, cx: &mut SwitchCtx<'_>, a: Action) {
        let now = cx.now;
        match a {
            Action::ToNf { part, pkt, bytes, lane } => {
                if let (NfPacket::Split(_), Some(r)) = (part, &mut self.recorder) {
                    r.split(now, pkt);
                }
                let e = Entry {
                    what: What::Nf(part, pkt),
                    bytes,
                    t0: now,
                    enq: now,
                };
                if !self.enqueue(cx, NF_DOWN, lane, e) {
                    self.lose(cx, pkt, DropReason::BufferFull(crate::core::QueueKind::Nf));
                }
            }
            Action::ToRecirc {
                tag,
                pkt,
                bytes,
                port,
                lane,
            } => {
                let e = Entry {
                    what: What::Payload(tag, pkt),
                    bytes,
                    t0: now,
                    enq: now,
                };
                if !self.enqueue(cx, RECIRC0 + usize::from(port), lane, e) {
                    self.lose(cx, pkt, DropReason::BufferFull(crate::core::QueueKind::Recirc));
                }
            }
            Action::Copies { port, bytes, count } => {
                if let Some(r) = &mut self.recorder {
                    r.copies(now, count);
                }
                let e = Entry {
                    what: What::Copy,
                    bytes,
                    t0: now,
                    enq: now,
                };
                for k in 0..count {
                    if !self.enqueue(cx, RECIRC0 + usize::from(port), Lane::Normal, e) {
                        let refused = u64::from(count - k);
                        self.stats.copies_refused += refused;
                        if let Some(r) = &mut self.recorder {
                            r.copies_refused(refused);
                        }
                        break;
                    }
                }
            }
            Action::Emit {
                pkt,
                parked_for,
                passes,
                ..
            } => {
                if let Some(r) = &mut self.recorder {
                    r.emitted(now, pkt, parked_for, passes);
                }
                if let Some(t) = parked_for {
                    self.stats.park_sum += u128::from(t);
                    self.stats.park_n += 1;
                }
                if let Some(h) = self.held.remove(&pkt.0) {
                    self.stats.emitted += 1;
                    cx.forward(h.in_port, h.pkt);
                }
            }
            Action::Drop { reason, pkt } => match pkt {
                Some(p) => self.lose(cx, p, reason),
                None => {
                    if let Some(r) = &mut self.recorder {
                        r.part_drop(reason);
                    }
                }
            },
            Action::WakeAt(t) => self.defer(cx, t, Deferred::Wake),
        }
    }

    /// Enqueues `e` on internal port `i`; false when the shared buffer has no room.
    fn enqueue(&mut self, cx: &mut SwitchCtx<'_>, i: usize, lane: Lane, e: Entry) -> bool {
        let cap = self.cfg.switch.buffer_bytes;
        let Some(p) = self.ports.get_mut(i) else {
            return false;
        };
        let b = u64::from(e.bytes);
        if p.buffered {
            if self.buffer + b > cap {
                return false;
            }
            self.buffer += b;
            self.stats.peak_buffer = self.stats.peak_buffer.max(self.buffer);
            if let Some(r) = &mut self.recorder {
                r.buffer_peak(self.buffer);
            }
        }
        p.q.push(lane, Entry { enq: cx.now, ..e }, e.bytes);
        if !p.q.is_busy() {
            self.start_tx(cx, i);
        }
        true
    }

    fn start_tx(&mut self, cx: &mut SwitchCtx<'_>, i: usize) {
        let Some(p) = self.ports.get_mut(i) else {
            return;
        };
        let Some((lane, e, b)) = p.q.start() else {
            return;
        };
        let b = u64::from(b);
        let (buffered, bps) = (p.buffered, p.bps);
        if buffered {
            self.buffer -= b;
        }
        if let (What::Payload(_, pkt), true, Some(r)) = (e.what, i >= RECIRC0 && lane == 1, &mut self.recorder) {
            r.park_wait(cx.now, pkt, e.enq);
        }
        let done = cx.now + tx_time(b, bps).max(1);
        self.defer(cx, done, Deferred::TxDone(i));
    }

    fn tx_done(&mut self, cx: &mut SwitchCtx<'_>, i: usize) {
        let Some(p) = self.ports.get_mut(i) else {
            return;
        };
        let Some(e) = p.q.finish() else {
            return;
        };
        let more = p.q.has_waiting();
        let back = cx.now + self.cfg.switch.pipeline_latency;
        match (i, e.what) {
            (NF_DOWN, _) => {
                let mut done = self.nf.process(cx.now, e.bytes);
                if self.cfg.nf_order == NfOrder::Fifo {
                    done = done.max(self.nf_last);
                    self.nf_last = done;
                }
                self.defer(cx, done, Deferred::NfDone(e));
            }
            (NF_UP, What::Nf(part, pkt)) => {
                if let Some(r) = &mut self.recorder {
                    r.nf_back(back, pkt, e.t0);
                }
                let lat = back - e.t0;
                self.stats.nf_sum += u128::from(lat);
                self.stats.nf_n += 1;
                self.stats.nf_max = self.stats.nf_max.max(lat);
                self.defer(cx, back, Deferred::Ingress(Event::FromNf { part, bytes: e.bytes }));
            }
            (_, What::Payload(tag, _)) => {
                self.defer(cx, back, Deferred::Ingress(Event::PayloadBack { tag, bytes: e.bytes }));
            }
            (_, What::Copy) => self.defer(cx, back, Deferred::Ingress(Event::CopyBack)),
            _ => {}
        }
        if more {
            self.start_tx(cx, i);
        }
    }

    fn sample(&mut self, cx: &mut SwitchCtx<'_>) {
        let now = cx.now;
        let copies = self.cfg.core.mode == Mode::Copies;
        let mut busy = !self.held.is_empty();
        let mut total = 0;
        for r in 0..usize::from(self.cfg.core.recirc_ports) {
            let p = &self.ports[RECIRC0 + r];
            // The controller sees the whole port queue: parking lane and fast lane.
            let parking = p.q.waiting_bytes();
            total += parking;
            busy |= parking > 0 || p.q.is_busy();
            if copies {
                self.defer(
                    cx,
                    now + self.cfg.switch.stats_delay,
                    Deferred::Ingress(Event::QueueStats {
                        port: r as u16,
                        bytes: parking,
                        sampled_at: now,
                    }),
                );
            }
        }
        let next = now + self.cfg.switch.stats_period;
        if let Some(r) = &mut self.recorder {
            r.sample(now, total, self.core.target_delay());
            busy |= next < r.config().end;
        }
        // Sample while anything is in the system; the next packet restarts it.
        if busy {
            self.defer(cx, next, Deferred::Sample);
        } else {
            self.sampling = false;
        }
    }

    /// Starts sampling at the next multiple of `stats_period` unless it runs.
    fn start_sampling(&mut self, cx: &mut SwitchCtx<'_>) {
        if self.sampling || (self.cfg.core.mode != Mode::Copies && self.recorder.is_none()) {
            return;
        }
        self.sampling = true;
        let at = cx.now.div_ceil(self.cfg.switch.stats_period) * self.cfg.switch.stats_period;
        self.defer(cx, at, Deferred::Sample);
    }
}

impl SwitchModel for TurboTor {
    fn on_ingress(&mut self, cx: &mut SwitchCtx<'_>, in_port: u16, pkt: SimPacket) -> Verdict {
        if !self.passes_nf(in_port) {
            return Verdict::Continue;
        }
        let bytes = cx.pool.get(pkt).size;
        let id = PacketId(self.next_pkt);
        self.next_pkt += 1;
        self.held.insert(id.0, Held { pkt, in_port });
        self.stats.packets += 1;
        if let Some(r) = &mut self.recorder {
            r.arrival(cx.now, id, bytes);
        }
        self.start_sampling(cx);
        self.feed(cx, Event::Arrival { pkt: id, bytes });
        Verdict::Consumed
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
            Deferred::TxDone(i) => self.tx_done(cx, i),
            Deferred::NfDone(e) => {
                self.enqueue(cx, NF_UP, Lane::Normal, e);
            }
            Deferred::Ingress(ev) => self.feed(cx, ev),
            Deferred::Sample => self.sample(cx),
            Deferred::Wake => self.feed(cx, Event::Tick),
        }
    }

    fn report(&self) -> Vec<(String, f64)> {
        self.system_counters()
            .into_iter()
            .map(|(k, v)| (format!("turboswitch_{k}"), v))
            .collect()
    }

    fn system_counters(&self) -> Vec<(&'static str, f64)> {
        let c = self.core.stats();
        let s = self.stats;
        let mean_us = |sum: u128, n: u64| if n == 0 { 0.0 } else { sum as f64 / n as f64 / 1e6 };
        vec![
            ("packets", s.packets as f64),
            ("emitted", s.emitted as f64),
            ("lost", s.lost as f64),
            ("parked_payloads", c.split as f64),
            ("whole_to_nf", (c.whole + c.no_slot) as f64),
            ("recirculations", c.passes as f64),
            ("copies", c.copies_made as f64),
            ("reclaimed", c.reclaimed as f64),
            ("nf_latency_mean_us", mean_us(s.nf_sum, s.nf_n)),
            ("nf_latency_max_us", s.nf_max as f64 / 1e6),
            ("parking_mean_us", mean_us(s.park_sum, s.park_n)),
            ("peak_buffer_bytes", s.peak_buffer as f64),
            ("in_flight", self.held.len() as f64),
        ]
    }
}
