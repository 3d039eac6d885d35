//! The event-driven model of one switch and one NF server around the sans-IO core.
//!
//! Packet-level: every packet, header, payload pass and filler copy is a queue entry that is
//! serialised on its port (byte-exact at the port's rate) and an event when it arrives
//! somewhere. Events sit in `tandem-sim`'s event queue, ordered by time in ps with ties in
//! scheduling order, so a seed fixes the whole run.
//!
//! Ports: the NF port (two strict-priority lanes: headers high, whole packets normal), the NF's
//! link back (FIFO, outside the switch buffer), `recirc_ports` recirculation ports (fast lane
//! high, parking lane normal) and `output_ports` output ports, all at the core's `port_bps`.
//! Every switch queue shares one buffer of `buffer_bytes`; a packet that does not fit is
//! dropped at enqueue with [`DropReason::BufferFull`]. Bytes are freed when their
//! transmission starts. A payload or copy leaving a recirculation port is back at ingress
//! `pipeline_latency` later; so is a packet from the NF. Framing overhead (preamble, IFG) is
//! not modelled: rates are rates of packet bytes.
//!
//! Every packet ends delivered, lost (first reason counted once) or in flight at the end, and
//! [`SimResult::accounted`] checks that they add up.

use super::lanes::LanedQueue;
use crate::config::{CoreConfig, Mode, SwitchConfig};
use crate::core::{Action, CoreStats, DropReason, Event, Lane, NfPacket, QueueKind, TurboSwitch};
use crate::nf::{Nf, NfConfig, LINK_BPS};
use crate::types::{tx_time, PacketId, Tag, Time, MS, SEC};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::collections::BTreeMap;
use tandem_sim::event::EventQueue;

/// A stretch of constant offered load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Phase {
    /// How long.
    pub duration: Time,
    /// Offered load, Gb/s of packet bytes (Poisson arrivals).
    pub gbps: f64,
}

/// Packet sizes of the input.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeDist {
    /// Uniform integer sizes in `min..=max` bytes.
    Uniform {
        /// Smallest.
        min: u32,
        /// Largest.
        max: u32,
    },
    /// Always this many bytes.
    Fixed(u32),
}

impl SizeDist {
    /// Mean size in bytes.
    pub fn mean(self) -> f64 {
        match self {
            SizeDist::Uniform { min, max } => (f64::from(min) + f64::from(max)) / 2.0,
            SizeDist::Fixed(b) => f64::from(b),
        }
    }

    fn sample(self, rng: &mut Pcg64) -> u32 {
        match self {
            SizeDist::Uniform { min, max } if max > min => rng.random_range(min..=max),
            SizeDist::Uniform { min, .. } => min,
            SizeDist::Fixed(b) => b,
        }
    }
}

/// Everything one run needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The switch program.
    pub core: CoreConfig,
    /// The switch hardware.
    pub switch: SwitchConfig,
    /// The NF server.
    pub nf: NfConfig,
    /// Offered load over time; arrivals stop after the last phase.
    pub phases: Vec<Phase>,
    /// Packet sizes.
    pub sizes: SizeDist,
    /// Packets arriving before this are not measured (steady state only).
    pub warmup: Time,
    /// Width of the time-series bins.
    pub bin: Time,
    /// Seed of every random draw.
    pub seed: u64,
}

/// The model could not run.
#[derive(Debug, Clone, PartialEq)]
pub struct SimError(pub String);

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SimError {}

impl From<SimError> for tandem_sim::experiment::ExperimentError {
    fn from(e: SimError) -> Self {
        tandem_sim::experiment::ExperimentError(e.0)
    }
}

/// Mean and percentiles of samples, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Summary {
    /// Samples.
    pub n: u64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
}

impl Summary {
    /// Sorts `v` and summarises it.
    pub fn of(v: &mut [f64]) -> Summary {
        if v.is_empty() {
            return Summary::default();
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
        Summary {
            n: v.len() as u64,
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: q(0.5),
            p99: q(0.99),
        }
    }
}

/// One time-series bin.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bin {
    /// Bin start, microseconds.
    pub t_us: f64,
    /// Offered load that arrived in the bin, Gb/s.
    pub input_gbps: f64,
    /// Mean bytes in all recirculation queues (parking + fast lanes).
    pub park_bytes: f64,
    /// Mean parking time of payloads merged in the bin, microseconds.
    pub payload_us: f64,
    /// Mean recirculation passes of payloads merged in the bin.
    pub passes: f64,
    /// Copies made per split packet in the bin.
    pub copies_per_split: f64,
    /// Mean NF latency of parts back in the bin, microseconds.
    pub nf_us: f64,
    /// Packets merged in the bin.
    pub merged: u64,
    /// Copies-mode target delay at the end of the bin, microseconds.
    pub target_us: f64,
}

#[derive(Debug, Clone, Copy, Default)]
struct BinAcc {
    in_bytes: u64,
    park_sum: f64,
    park_n: u64,
    pay_sum: f64,
    passes: u64,
    merged: u64,
    copies: u64,
    splits: u64,
    nf_sum: f64,
    nf_n: u64,
    target: Time,
}

/// What one run measured (latencies of packets that arrived in the measurement window:
/// after `warmup`, before the end of arrivals).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimResult {
    /// Packets offered.
    pub arrived: u64,
    /// Packets delivered on an output port.
    pub delivered: u64,
    /// Packets lost, by the first reason.
    pub lost: BTreeMap<DropReason, u64>,
    /// Packets still in the system when the run stopped.
    pub in_flight: u64,
    /// Headers or payloads dropped by the program without a packet to blame (stale or unknown
    /// tags: their packet, if any, is already counted in `lost`), by reason.
    pub part_drops: BTreeMap<DropReason, u64>,
    /// Filler copies the buffer had no room for.
    pub copies_refused: u64,
    /// Deliveries of packets already reported lost (must be 0).
    pub delivered_after_loss: u64,
    /// Offered load in the window, Gb/s.
    pub window_gbps: f64,
    /// Switch egress to switch ingress latency of what went to the NF.
    pub nf_latency: Summary,
    /// NF latency samples (us), for CDFs.
    pub nf_samples: Vec<f64>,
    /// How long payloads were parked (split to merge).
    pub payload_latency: Summary,
    /// Arrival to the end of transmission on the output port.
    pub e2e: Summary,
    /// Mean recirculation passes per merged payload.
    pub passes_per_payload: f64,
    /// Copies made per split packet.
    pub copies_per_split: f64,
    /// Time-averaged bytes in the recirculation queues (all lanes, all ports).
    pub park_bytes_mean: f64,
    /// Mean wait of a payload in a parking lane per pass, microseconds.
    pub park_wait_us: f64,
    /// Most bytes in the shared buffer.
    pub max_buffer: u64,
    /// Time series.
    pub bins: Vec<Bin>,
    /// The program's counters.
    pub core: CoreStats,
    /// Events processed.
    pub events: u64,
}

impl SimResult {
    /// Packets lost, all reasons.
    pub fn lost_total(&self) -> u64 {
        self.lost.values().sum()
    }

    /// Every packet delivered, lost once, or in flight.
    pub fn accounted(&self) -> bool {
        self.arrived == self.delivered + self.lost_total() + self.in_flight && self.delivered_after_loss == 0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    Nf(NfPacket, PacketId),
    Payload(Tag, PacketId),
    Copy,
    Out(PacketId),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    what: What,
    bytes: u32,
    enq: Time,
    /// When it first left for the NF (NF latency start).
    t0: Time,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ev {
    Arrival,
    TxDone(usize),
    NfDone(Entry),
    Ingress(Event, Time),
    Sample,
    Wake,
    Stats { port: u16, bytes: u64, at: Time },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    NfDown,
    NfUp,
    Recirc,
    Output,
}

#[derive(Debug, Clone)]
struct Port {
    kind: Kind,
    bps: u64,
    q: LanedQueue<Entry>,
}

/// Most time-series bins a run may ask for.
pub const MAX_BINS: u64 = 10_000_000;

const NF_DOWN: usize = 0;
const NF_UP: usize = 1;
const RECIRC0: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    InFlight,
    Delivered,
    Lost,
}

struct Sim<'a> {
    cfg: &'a SimConfig,
    core: TurboSwitch,
    nf: Nf,
    rng: Pcg64,
    heap: EventQueue<Ev>,
    ports: Vec<Port>,
    out0: usize,
    arrivals: Vec<(Time, State)>,
    buffer: u64,
    acts: Vec<Action>,
    end: Time,
    bins: Vec<BinAcc>,
    r: SimResult,
    nf_lat: Vec<f64>,
    pay_lat: Vec<f64>,
    e2e: Vec<f64>,
    passes: u64,
    merged: u64,
    copies: u64,
    splits: u64,
    park_sum: f64,
    park_n: u64,
    wait_sum: f64,
    wait_n: u64,
}

fn us(t: Time) -> f64 {
    t as f64 / 1e6
}

/// Runs the model.
pub fn run(cfg: &SimConfig) -> Result<SimResult, SimError> {
    cfg.switch.validate().map_err(|e| SimError(e.to_string()))?;
    if cfg.bin == 0 {
        return Err(SimError("bin must be at least 1 ps".into()));
    }
    if cfg.phases.iter().any(|p| !p.gbps.is_finite() || p.gbps < 0.0) {
        return Err(SimError("offered load must be finite and not negative".into()));
    }
    if cfg.sizes.mean() < 1.0 {
        return Err(SimError("packets must have at least 1 byte".into()));
    }
    let core = TurboSwitch::new(cfg.core.clone()).map_err(|e| SimError(e.to_string()))?;
    let end: Time = cfg.phases.iter().map(|p| p.duration).sum();
    let bps = cfg.core.port_bps;
    let port = |kind, bps| Port {
        kind,
        bps,
        q: LanedQueue::default(),
    };
    let mut ports = vec![port(Kind::NfDown, bps), port(Kind::NfUp, LINK_BPS)];
    ports.extend((0..cfg.core.recirc_ports).map(|_| port(Kind::Recirc, bps)));
    let out0 = ports.len();
    ports.extend((0..cfg.switch.output_ports).map(|_| port(Kind::Output, bps)));
    let nbins = end / cfg.bin + 1;
    if nbins > MAX_BINS {
        return Err(SimError(format!(
            "{nbins} time-series bins: more than {MAX_BINS}; use a wider bin"
        )));
    }
    let nbins = usize::try_from(nbins).map_err(|_| SimError("too many bins".into()))?;
    let mut s = Sim {
        cfg,
        core,
        nf: Nf::new(cfg.nf, cfg.seed ^ 0x9e37_79b9_7f4a_7c15),
        rng: Pcg64::seed_from_u64(cfg.seed),
        heap: EventQueue::new(),
        ports,
        out0,
        arrivals: Vec::new(),
        buffer: 0,
        acts: Vec::new(),
        end,
        bins: vec![BinAcc::default(); nbins],
        r: SimResult::default(),
        nf_lat: Vec::new(),
        pay_lat: Vec::new(),
        e2e: Vec::new(),
        passes: 0,
        merged: 0,
        copies: 0,
        splits: 0,
        park_sum: 0.0,
        park_n: 0,
        wait_sum: 0.0,
        wait_n: 0,
    };
    if let Some(t) = s.next_arrival(0) {
        s.push(t, Ev::Arrival);
    }
    s.push(0, Ev::Sample);
    let horizon = end + cfg.core.reclaim_timeout + 10 * MS;
    while let Some((at, ev)) = s.heap.pop() {
        if at > horizon {
            break;
        }
        s.r.events += 1;
        s.step(at, ev)?;
    }
    Ok(s.finish())
}

impl Sim<'_> {
    fn push(&mut self, at: Time, ev: Ev) {
        self.heap.push(at, ev);
    }

    fn bin(&mut self, t: Time) -> Option<&mut BinAcc> {
        let i = usize::try_from(t / self.cfg.bin).ok()?;
        self.bins.get_mut(i)
    }

    fn in_window(&self, pkt: PacketId) -> bool {
        usize::try_from(pkt.0)
            .ok()
            .and_then(|i| self.arrivals.get(i))
            .is_some_and(|&(t, _)| t >= self.cfg.warmup && t < self.end)
    }

    fn next_arrival(&mut self, now: Time) -> Option<Time> {
        let mut t = now;
        loop {
            let mut start = 0;
            let mut cur = None;
            for p in &self.cfg.phases {
                if t < start + p.duration {
                    cur = Some((*p, start + p.duration));
                    break;
                }
                start += p.duration;
            }
            let (p, phase_end) = cur?;
            if p.gbps <= 0.0 {
                t = phase_end;
                continue;
            }
            let gap_s = self.cfg.sizes.mean() * 8.0 / (p.gbps * 1e9);
            let u: f64 = self.rng.random();
            let gap = (-(1.0 - u).ln() * gap_s * SEC as f64).round() as Time;
            let cand = t + gap.max(1);
            if cand < phase_end {
                return Some(cand);
            }
            t = phase_end;
        }
    }

    fn step(&mut self, now: Time, ev: Ev) -> Result<(), SimError> {
        match ev {
            Ev::Arrival => {
                let bytes = self.cfg.sizes.sample(&mut self.rng);
                let pkt = PacketId(self.arrivals.len() as u64);
                self.arrivals.push((now, State::InFlight));
                self.r.arrived += 1;
                if let Some(b) = self.bin(now) {
                    b.in_bytes += u64::from(bytes);
                }
                self.feed(now, Event::Arrival { pkt, bytes })?;
                if let Some(t) = self.next_arrival(now) {
                    self.push(t, Ev::Arrival);
                }
            }
            Ev::TxDone(i) => self.tx_done(now, i),
            Ev::NfDone(e) => {
                self.enqueue(now, NF_UP, Lane::Normal, e);
            }
            Ev::Ingress(ev, t0) => {
                if let Event::FromNf { .. } = ev {
                    let lat = us(now - t0);
                    if let Some(b) = self.bin(now) {
                        b.nf_sum += lat;
                        b.nf_n += 1;
                    }
                }
                self.feed(now, ev)?;
            }
            Ev::Sample => self.sample(now),
            Ev::Wake => self.feed(now, Event::Tick)?,
            Ev::Stats { port, bytes, at } => self.feed(
                now,
                Event::QueueStats {
                    port,
                    bytes,
                    sampled_at: at,
                },
            )?,
        }
        Ok(())
    }

    fn sample(&mut self, now: Time) {
        let mut total = 0u64;
        for r in 0..usize::from(self.cfg.core.recirc_ports) {
            let p = &self.ports[RECIRC0 + r];
            // The controller sees the whole port queue: parking lane + fast lane.
            let parking = p.q.waiting_bytes();
            total += parking;
            if self.cfg.core.mode == Mode::Copies {
                self.push(
                    now + self.cfg.switch.stats_delay,
                    Ev::Stats {
                        port: r as u16,
                        bytes: parking,
                        at: now,
                    },
                );
            }
        }
        let target = self.core.target_delay();
        if let Some(b) = self.bin(now) {
            b.park_sum += total as f64;
            b.park_n += 1;
            b.target = target;
        }
        if now >= self.cfg.warmup {
            self.park_sum += total as f64;
            self.park_n += 1;
        }
        let next = now + self.cfg.switch.stats_period;
        if next < self.end {
            self.push(next, Ev::Sample);
        }
    }

    fn feed(&mut self, now: Time, ev: Event) -> Result<(), SimError> {
        let mut acts = std::mem::take(&mut self.acts);
        acts.clear();
        self.core
            .handle(now, ev, &mut acts)
            .map_err(|e| SimError(format!("core: {e}")))?;
        for a in &acts {
            self.apply(now, *a);
        }
        self.acts = acts;
        Ok(())
    }

    fn lose(&mut self, pkt: PacketId, reason: DropReason) {
        if let Some(s) = usize::try_from(pkt.0).ok().and_then(|i| self.arrivals.get_mut(i)) {
            if s.1 == State::InFlight {
                s.1 = State::Lost;
                *self.r.lost.entry(reason).or_insert(0) += 1;
            }
        }
    }

    fn apply(&mut self, now: Time, a: Action) {
        match a {
            Action::ToNf { part, pkt, bytes, lane } => {
                if matches!(part, NfPacket::Split(_)) {
                    let w = self.in_window(pkt);
                    if let Some(b) = self.bin(now) {
                        b.splits += 1;
                    }
                    if w {
                        self.splits += 1;
                    }
                }
                let e = Entry {
                    what: What::Nf(part, pkt),
                    bytes,
                    enq: now,
                    t0: now,
                };
                if !self.enqueue(now, NF_DOWN, lane, e) {
                    self.lose(pkt, DropReason::BufferFull(QueueKind::Nf));
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
                    enq: now,
                    t0: now,
                };
                if !self.enqueue(now, RECIRC0 + usize::from(port), lane, e) {
                    self.lose(pkt, DropReason::BufferFull(QueueKind::Recirc));
                }
            }
            Action::Copies { port, bytes, count } => {
                if let Some(b) = self.bin(now) {
                    b.copies += u64::from(count);
                }
                if now >= self.cfg.warmup && now < self.end {
                    self.copies += u64::from(count);
                }
                let e = Entry {
                    what: What::Copy,
                    bytes,
                    enq: now,
                    t0: now,
                };
                for k in 0..count {
                    if !self.enqueue(now, RECIRC0 + usize::from(port), Lane::Normal, e) {
                        self.r.copies_refused += u64::from(count - k);
                        break;
                    }
                }
            }
            Action::Emit {
                pkt,
                bytes,
                parked_for,
                passes,
            } => {
                if let Some(t) = parked_for {
                    if let Some(b) = self.bin(now) {
                        b.pay_sum += us(t);
                        b.passes += u64::from(passes);
                        b.merged += 1;
                    }
                    if self.in_window(pkt) {
                        self.pay_lat.push(us(t));
                        self.passes += u64::from(passes);
                        self.merged += 1;
                    }
                }
                let port = self.out0 + (pkt.0 % u64::from(self.cfg.switch.output_ports)) as usize;
                let e = Entry {
                    what: What::Out(pkt),
                    bytes,
                    enq: now,
                    t0: now,
                };
                if !self.enqueue(now, port, Lane::Normal, e) {
                    self.lose(pkt, DropReason::BufferFull(QueueKind::Output));
                }
            }
            Action::Drop { reason, pkt } => match pkt {
                Some(p) => self.lose(p, reason),
                None => *self.r.part_drops.entry(reason).or_insert(0) += 1,
            },
            Action::WakeAt(t) => self.push(t.max(now), Ev::Wake),
        }
    }

    /// Enqueues `e`; false when the shared buffer has no room (not for the NF's own link).
    fn enqueue(&mut self, now: Time, i: usize, lane: Lane, e: Entry) -> bool {
        let cap = self.cfg.switch.buffer_bytes;
        let Some(p) = self.ports.get_mut(i) else {
            return false;
        };
        let b = u64::from(e.bytes);
        if p.kind != Kind::NfUp {
            if self.buffer + b > cap {
                return false;
            }
            self.buffer += b;
            self.r.max_buffer = self.r.max_buffer.max(self.buffer);
        }
        p.q.push(lane, e, e.bytes);
        if !p.q.is_busy() {
            self.start_tx(now, i);
        }
        true
    }

    fn start_tx(&mut self, now: Time, i: usize) {
        let Some(p) = self.ports.get_mut(i) else {
            return;
        };
        let Some((lane, e, b)) = p.q.start() else {
            return;
        };
        let b = u64::from(b);
        let (kind, bps) = (p.kind, p.bps);
        if kind != Kind::NfUp {
            self.buffer -= b;
        }
        if kind == Kind::Recirc && lane == 1 {
            if let What::Payload(_, pkt) = e.what {
                if self.in_window(pkt) {
                    self.wait_sum += us(now - e.enq);
                    self.wait_n += 1;
                }
            }
        }
        self.push(now + tx_time(b, bps).max(1), Ev::TxDone(i));
    }

    fn tx_done(&mut self, now: Time, i: usize) {
        let Some(p) = self.ports.get_mut(i) else {
            return;
        };
        let Some(e) = p.q.finish() else {
            return;
        };
        let kind = p.kind;
        let more = p.q.has_waiting();
        let back = now + self.cfg.switch.pipeline_latency;
        match (kind, e.what) {
            (Kind::NfDown, _) => {
                let done = self.nf.process(now, e.bytes);
                self.push(done, Ev::NfDone(e));
            }
            (Kind::NfUp, What::Nf(part, pkt)) => {
                if self.in_window(pkt) {
                    self.nf_lat.push(us(back - e.t0));
                }
                self.push(back, Ev::Ingress(Event::FromNf { part, bytes: e.bytes }, e.t0));
            }
            (Kind::Recirc, What::Payload(tag, _)) => {
                self.push(back, Ev::Ingress(Event::PayloadBack { tag, bytes: e.bytes }, e.t0));
            }
            (Kind::Recirc, What::Copy) => self.push(back, Ev::Ingress(Event::CopyBack, e.t0)),
            (Kind::Output, What::Out(pkt)) => self.delivered(now, pkt),
            _ => {}
        }
        if more {
            self.start_tx(now, i);
        }
    }

    fn delivered(&mut self, now: Time, pkt: PacketId) {
        let w = self.in_window(pkt);
        if let Some(s) = usize::try_from(pkt.0).ok().and_then(|i| self.arrivals.get_mut(i)) {
            match s.1 {
                State::InFlight => {
                    s.1 = State::Delivered;
                    self.r.delivered += 1;
                    if w {
                        self.e2e.push(us(now - s.0));
                    }
                }
                _ => self.r.delivered_after_loss += 1,
            }
        }
    }

    fn finish(mut self) -> SimResult {
        let mut r = std::mem::take(&mut self.r);
        r.in_flight = self.arrivals.iter().filter(|a| a.1 == State::InFlight).count() as u64;
        let win = self.end.saturating_sub(self.cfg.warmup);
        let bytes_window: u64 = self
            .bins
            .iter()
            .enumerate()
            .filter(|(i, _)| (*i as u64) * self.cfg.bin >= self.cfg.warmup)
            .map(|(_, b)| b.in_bytes)
            .sum();
        r.window_gbps = if win > 0 {
            bytes_window as f64 * 8.0 / (win as f64 / SEC as f64) / 1e9
        } else {
            0.0
        };
        r.nf_latency = Summary::of(&mut self.nf_lat);
        r.nf_samples = self.nf_lat;
        r.payload_latency = Summary::of(&mut self.pay_lat);
        r.e2e = Summary::of(&mut self.e2e);
        r.passes_per_payload = if self.merged > 0 {
            self.passes as f64 / self.merged as f64
        } else {
            0.0
        };
        r.copies_per_split = if self.splits > 0 {
            self.copies as f64 / self.splits as f64
        } else {
            0.0
        };
        r.park_bytes_mean = if self.park_n > 0 {
            self.park_sum / self.park_n as f64
        } else {
            0.0
        };
        r.park_wait_us = if self.wait_n > 0 {
            self.wait_sum / self.wait_n as f64
        } else {
            0.0
        };
        let bin_s = self.cfg.bin as f64 / SEC as f64;
        r.bins = self
            .bins
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let div = |x: f64, n: u64| if n > 0 { x / n as f64 } else { 0.0 };
                Bin {
                    t_us: us(i as u64 * self.cfg.bin),
                    input_gbps: b.in_bytes as f64 * 8.0 / bin_s / 1e9,
                    park_bytes: div(b.park_sum, b.park_n),
                    payload_us: div(b.pay_sum, b.merged),
                    passes: div(b.passes as f64, b.merged),
                    copies_per_split: div(b.copies as f64, b.splits),
                    nf_us: div(b.nf_sum, b.nf_n),
                    merged: b.merged,
                    target_us: us(b.target),
                }
            })
            .collect();
        r.core = *self.core.stats();
        r
    }
}
