//! `tcpu-offload`: the large-flow-table experiment (paper §4, second experiment).
//!
//! A synthesized data-center workload among 8 servers for 10 minutes runs through TCPU's flow
//! table (k = 1,792 TCAM entries, the testbed's): the measures are the traffic offload ratio
//! (TFOR: bytes the ASIC forwarded / all bytes), the most active flows and the swaps per
//! second; then the same with flow inter-arrival times compressed 10x.
//!
//! **Flow sizes.** The paper's distribution (from the authors' own data-center measurements)
//! is private. It stands in the built-in **web-search** CDF (DCTCP, SIGCOMM 2010; also a
//! Microsoft production cluster), scaled so its mean is the paper's 33.6 GB / 103,200 flows
//! (325,581 bytes; the CDF's own mean is 1,711,250 bytes, so every size is x 0.190).
//! Arrivals are Poisson at 103,200 / 600 s (172 flows/s; x 10 compressed), each flow between
//! a uniformly drawn ordered pair of the 8 servers.
//!
//! **A flow-level model.** 33.6 GB (and 336 GB compressed) at the packet level is about 25
//! (250) million full-size packets plus ACKs through the event simulator: too slow for "minutes"
//! (see docs/systems/tcpu.md for the measured packet rate). Instead this drives the same
//! sans-IO core ([`Tcpu`]) with flow-level events, the timers of a node of the simulator's
//! kernel (one node, no links): each flow sends its first packet at its
//! start and then its remaining bytes at a constant rate ([`FLOW_RATE_BPS`], ours: line rate,
//! no contention modelled), so the bytes it has sent by any time are known exactly. While the
//! flow has no TCAM entry its bytes are handed to the core as [`Event::PacketToCpu`] chunks every
//! [`CPU_CHUNK`] (and whenever its placement changes); while it has one, its entry's byte counter
//! grows, and counter reads answer with it. Table operations take effect at the times the core's
//! rate-limited channel gives. Byte accounting is exact at every placement change, so TFOR is
//! exact for this rate model; what the model leaves out is everything below the flow level
//! (TCP dynamics, queueing, CPU-path delay).
//!
//! **Active flows** follow the paper's §2 definition ("active flows ... with 60-second
//! timeout"): the core's flow table forgets a flow 60 s after its last byte
//! (`flow_idle_timeout` = 60 s here), and the most flows it ever held is reported.

use super::common::write;
use crate::config::TcpuConfig;
use crate::core::{Action, Event, Tcpu};
use crate::types::{FlowId, PacketRef, RuleMatch, Time, MS, SEC};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use tandem_sim::config::{QueueConfig, SwitchConfig, TcpConfig};
use tandem_sim::experiment::{Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target};
use tandem_sim::packet::NodeId;
use tandem_sim::plot::{Axis, Figure};
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::switch::{SwitchCtx, SwitchModel};
use tandem_sim::topology::{NodeKind, NodeSpec, Topology};
use tandem_sim::workload::FlowSizeCdf;

/// Servers (paper §4).
pub const SERVERS: u32 = 8;
/// Flows of the paper's 10-minute run.
pub const PAPER_FLOWS: u64 = 103_200;
/// Bytes of the paper's 10-minute run (33.6 GB).
pub const PAPER_BYTES: u64 = 33_600_000_000;
/// Length of the full run (10 minutes).
pub const FULL_SPAN: Time = 600 * SEC;
/// Length of the `--quick` run.
pub const QUICK_SPAN: Time = 20 * SEC;
/// Each flow's sending rate (**ours**: the servers' 1 Gb/s line rate; no contention).
pub const FLOW_RATE_BPS: u64 = 1_000_000_000;
/// How often bytes of a flow on the CPU path are handed to the core (**ours**).
pub const CPU_CHUNK: Time = MS;
/// First packet of each flow (a full frame, or the whole flow if smaller).
pub const FIRST_PACKET: u64 = 1514;

/// One synthesized flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynthFlow {
    /// Start, picoseconds.
    pub start: Time,
    /// Bytes.
    pub bytes: u64,
    /// Source server.
    pub src: u32,
    /// Destination server (its switch port).
    pub dst: u16,
}

/// SplitMix64: a small seeded generator (deterministic workloads without a dependency).
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in (0, 1).
    fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

/// The web-search flow-size CDF scaled to the paper's mean flow size.
pub fn size_cdf() -> Result<(FlowSizeCdf, f64), ExperimentError> {
    let base =
        FlowSizeCdf::builtin("websearch").ok_or_else(|| ExperimentError("tcpu-offload: no web-search CDF".into()))?;
    let scale = PAPER_BYTES as f64 / PAPER_FLOWS as f64 / base.mean();
    Ok((base, scale))
}

/// Poisson arrivals over `span` at the paper's rate times `compress`, sizes from [`size_cdf`].
pub fn workload(span: Time, compress: u32, seed: u64) -> Result<Vec<SynthFlow>, ExperimentError> {
    workload_split(span, compress, 1, seed)
}

/// As [`workload`], with the paper's flows taken as `split` flows each: arrivals at the rate
/// divided by `split` and every size multiplied by it (the same bytes in all). `split = 2`
/// reads the paper's 103,200 flows as one-way flows, two to a TCP connection (as its first
/// experiment counts them).
pub fn workload_split(span: Time, compress: u32, split: u32, seed: u64) -> Result<Vec<SynthFlow>, ExperimentError> {
    let (cdf, scale) = size_cdf()?;
    let scale = scale * f64::from(split.max(1));
    let rate =
        PAPER_FLOWS as f64 / (FULL_SPAN as f64 / SEC as f64) * f64::from(compress.max(1)) / f64::from(split.max(1));
    let mut rng = Rng(seed);
    let mut t = 0.0f64;
    let mut out = Vec::new();
    loop {
        t += -rng.unit().ln() / rate;
        let start = (t * SEC as f64) as Time;
        if start >= span {
            return Ok(out);
        }
        let bytes = ((cdf.quantile(rng.unit()) * scale).round() as u64).max(1);
        let src = (rng.next_u64() % u64::from(SERVERS)) as u32;
        let dst = ((u64::from(src) + 1 + rng.next_u64() % u64::from(SERVERS - 1)) % u64::from(SERVERS)) as u16;
        out.push(SynthFlow { start, bytes, src, dst });
    }
}

/// The TCPU configuration: the paper's large-flow-table defaults (k = 1,792, T_inactive 1 s,
/// ranking every 100 ms, the measured channel rates), flows forgotten after 60 s idle (the
/// paper's active-flow timeout); deep buffer, long-flow pinning and the detector off (this
/// experiment is about the flow table).
pub fn tcpu_config(k: u32) -> TcpuConfig {
    TcpuConfig {
        asic_flow_entries: k,
        flow_idle_timeout: 60 * SEC,
        deep_buffer: false,
        long_flows: false,
        attack_defense: false,
        ..TcpuConfig::default()
    }
}

/// What one run measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Inter-arrival compression (1 or 10).
    pub compress: u32,
    /// TCAM flow entries.
    pub k: u32,
    /// Flows.
    pub flows: u64,
    /// Bytes of all flows.
    pub bytes: u64,
    /// Bytes forwarded by ASIC flow entries.
    pub asic_bytes: u64,
    /// Bytes forwarded by the CPU.
    pub cpu_bytes: u64,
    /// Most flows in the CPU's flow table (flows seen in the last 60 s).
    pub max_active: u64,
    /// Most flows sending at once.
    pub max_sending: u64,
    /// Swaps (an ASIC entry replaced by another flow: inactive swaps + ranking swaps).
    pub swaps: u64,
    /// Flows placed into a free TCAM slot.
    pub free_inserts: u64,
    /// Swaps per second of the run (`span`).
    pub swaps_per_sec: f64,
    /// Length of the arrival span, seconds.
    pub span_s: f64,
    /// Wall-clock time of the run, seconds.
    pub wall_s: f64,
    /// Table operations the ASIC refused (must be 0).
    pub refused: u64,
}

impl Outcome {
    /// Traffic offload ratio: ASIC bytes / all bytes.
    pub fn tfor(&self) -> f64 {
        self.asic_bytes as f64 / (self.asic_bytes + self.cpu_bytes).max(1) as f64
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A flow's accounting point: start (first packet), CPU chunk or end.
    Flow(u32),
    Install(u32),
    Remove(u32),
    ReadCounters,
    Wake,
    /// The next flow of the sorted list starts.
    Start,
}

impl Ev {
    /// The event as a kernel timer token: the kind in the high 32 bits, the flow below.
    fn token(self) -> u64 {
        let (kind, i) = match self {
            Ev::Flow(i) => (0, i),
            Ev::Install(i) => (1, i),
            Ev::Remove(i) => (2, i),
            Ev::ReadCounters => (3, 0),
            Ev::Wake => (4, 0),
            Ev::Start => (5, 0),
        };
        (kind << 32) | u64::from(i)
    }

    fn from_token(token: u64) -> Option<Ev> {
        let i = token as u32;
        Some(match token >> 32 {
            0 => Ev::Flow(i),
            1 => Ev::Install(i),
            2 => Ev::Remove(i),
            3 => Ev::ReadCounters,
            4 => Ev::Wake,
            5 => Ev::Start,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct FlowState {
    /// Bytes accounted so far.
    acct: u64,
    on_asic: bool,
    /// Counter of its TCAM entry since install.
    counter: u64,
    /// A CPU-chunk event is scheduled.
    chunk_queued: bool,
}

/// Bytes `f` has sent by `now`: its first packet at its start, the rest at `rate_bps`.
fn sent(f: &SynthFlow, now: Time, rate_bps: u64) -> u64 {
    if now < f.start {
        return 0;
    }
    let first = f.bytes.min(FIRST_PACKET);
    let rest =
        (u128::from(now - f.start) * u128::from(rate_bps) / (8 * u128::from(SEC))).min(u128::from(f.bytes - first));
    first + rest as u64
}

fn end_of(f: &SynthFlow, rate_bps: u64) -> Time {
    let rest = f.bytes - f.bytes.min(FIRST_PACKET);
    f.start + crate::types::tx_time(rest, rate_bps)
}

/// The flow-level model as a node of the simulator's kernel: its events (flow starts, CPU
/// chunks, the table operations and counter reads the core asks for, the core's wake-ups) are
/// the node's timers on the kernel's event queue. The node has no links: the model is below
/// none of the kernel's packets.
struct Driver {
    flows: Vec<SynthFlow>,
    st: Vec<FlowState>,
    core: Tcpu,
    /// Events a step asked for, set as timers once it is done.
    pending: Vec<(Time, Ev)>,
    installed: BTreeSet<u32>,
    actions: Vec<Action>,
    out: Outcome,
    k: u32,
    span: Time,
    /// The next flow to start.
    next: u32,
    /// End times of the flows that started and are still sending.
    ends: BinaryHeap<Reverse<Time>>,
    /// Every flow has ended and only the core's periodic work is left: the rest is ignored.
    finished: bool,
    error: Option<ExperimentError>,
}

impl Driver {
    fn push(&mut self, at: Time, ev: Ev) {
        self.pending.push((at, ev));
    }

    /// Handles one event at `now`: a flow start also asks for the next one (first, so that a
    /// start goes before anything else queued for the same time).
    fn event(&mut self, now: Time, ev: Ev) -> Result<(), ExperimentError> {
        while self.ends.peek().is_some_and(|Reverse(e)| *e <= now) {
            self.ends.pop();
        }
        if ev == Ev::Start {
            let i = self.next;
            self.next += 1;
            if let Some(f) = self.flows.get(self.next as usize) {
                self.push(f.start, Ev::Start);
            }
            self.ends.push(Reverse(end_of(&self.flows[i as usize], FLOW_RATE_BPS)));
            self.out.max_sending = self.out.max_sending.max(self.ends.len() as u64);
            return self.step(now, Ev::Flow(i));
        }
        // Stop once every flow has ended and only the core's periodic work is left.
        if self.next as usize == self.flows.len()
            && self.ends.is_empty()
            && matches!(ev, Ev::Wake | Ev::ReadCounters)
            && now > self.span
            && self.st.iter().zip(&self.flows).all(|(s, f)| s.acct == f.bytes)
        {
            self.finished = true;
            return Ok(());
        }
        self.step(now, ev)
    }

    fn feed(&mut self, now: Time, ev: Event<'_>) -> Result<(), ExperimentError> {
        let mut acts = std::mem::take(&mut self.actions);
        acts.clear();
        self.core
            .handle(now, ev, &mut acts)
            .map_err(|e| ExperimentError(format!("tcpu-offload: core refused an event: {e:?}")))?;
        for a in &acts {
            match *a {
                Action::InstallRule { rule, at } => {
                    if let RuleMatch::Flow(f) = rule.matches {
                        self.push(at, Ev::Install(f.0));
                    }
                }
                Action::RemoveRule {
                    matches: RuleMatch::Flow(f),
                    at,
                } => self.push(at, Ev::Remove(f.0)),
                Action::ReadCounters { at } => self.push(at, Ev::ReadCounters),
                Action::WakeAt { at } => self.push(at, Ev::Wake),
                _ => {}
            }
        }
        self.actions = acts;
        Ok(())
    }

    /// Accounts flow `i`'s bytes up to `now` to the ASIC or (through the core) the CPU.
    fn settle(&mut self, i: u32, now: Time) -> Result<(), ExperimentError> {
        let f = self.flows[i as usize];
        let s = &mut self.st[i as usize];
        let total = sent(&f, now, FLOW_RATE_BPS);
        let delta = total.saturating_sub(s.acct);
        s.acct = s.acct.max(total);
        if delta == 0 {
            return Ok(());
        }
        if s.on_asic {
            s.counter += delta;
            self.out.asic_bytes += delta;
            return Ok(());
        }
        self.out.cpu_bytes += delta;
        let mut left = delta;
        while left > 0 {
            let b = left.min(u64::from(u32::MAX)) as u32;
            left -= u64::from(b);
            self.feed(
                now,
                Event::PacketToCpu {
                    pkt: PacketRef(u64::from(i)),
                    flow: FlowId(i),
                    src: f.src,
                    port: f.dst,
                    bytes: b,
                    is_tcp: true,
                },
            )?;
        }
        Ok(())
    }

    /// Schedules the next CPU chunk of a flow that is sending without an entry.
    fn chunk(&mut self, i: u32, now: Time) {
        let f = self.flows[i as usize];
        let s = self.st[i as usize];
        let end = end_of(&f, FLOW_RATE_BPS);
        if !s.on_asic && !s.chunk_queued && now < end {
            self.st[i as usize].chunk_queued = true;
            self.push((now + CPU_CHUNK).min(end), Ev::Flow(i));
        }
    }

    fn step(&mut self, now: Time, ev: Ev) -> Result<(), ExperimentError> {
        match ev {
            Ev::Flow(i) => {
                self.st[i as usize].chunk_queued = false;
                self.settle(i, now)?;
                self.chunk(i, now);
            }
            Ev::Install(i) => {
                self.settle(i, now)?;
                if self.installed.len() >= self.k as usize && !self.installed.contains(&i) {
                    self.out.refused += 1;
                    return self.feed(
                        now,
                        Event::OpFailed {
                            matches: RuleMatch::Flow(FlowId(i)),
                        },
                    );
                }
                self.installed.insert(i);
                let s = &mut self.st[i as usize];
                s.on_asic = true;
                s.counter = 0;
            }
            Ev::Remove(i) => {
                self.settle(i, now)?;
                self.installed.remove(&i);
                self.st[i as usize].on_asic = false;
                self.chunk(i, now);
            }
            Ev::ReadCounters => {
                let ids: Vec<u32> = self.installed.iter().copied().collect();
                let mut counters = Vec::with_capacity(ids.len());
                for i in ids {
                    self.settle(i, now)?;
                    counters.push((FlowId(i), self.st[i as usize].counter));
                }
                self.feed(now, Event::AsicCounters { counters: &counters })?;
            }
            Ev::Wake => self.feed(now, Event::Tick)?,
            // Handled by `event`.
            Ev::Start => {}
        }
        self.out.max_active = self.out.max_active.max(self.core.flows().len() as u64);
        Ok(())
    }
}

impl SwitchModel for Driver {
    fn wants_start(&self) -> bool {
        true
    }

    fn on_start(&mut self, cx: &mut SwitchCtx<'_>) {
        if let Some(f) = self.flows.first() {
            cx.set_timer(f.start, Ev::Start.token());
        }
    }

    fn on_timer(&mut self, cx: &mut SwitchCtx<'_>, token: u64) {
        if self.finished {
            return;
        }
        let Some(ev) = Ev::from_token(token) else { return };
        if let Err(e) = self.event(cx.now, ev) {
            self.error = Some(e);
            self.finished = true;
        }
        for (at, ev) in self.pending.drain(..) {
            cx.set_timer(at, ev.token());
        }
    }
}

/// Runs `flows` (sorted by start) through a TCPU core with `k` TCAM flow entries, on the
/// simulator's kernel (one node, no links, the model's events as its timers).
pub fn run_flows(flows: &[SynthFlow], k: u32, span: Time, compress: u32) -> Result<Outcome, ExperimentError> {
    let started = std::time::Instant::now();
    u32::try_from(flows.len()).map_err(|_| ExperimentError("tcpu-offload: too many flows".into()))?;
    let core = Tcpu::new(tcpu_config(k)).map_err(|e| ExperimentError(format!("tcpu-offload: {e:?}")))?;
    let d = Driver {
        flows: flows.to_vec(),
        st: vec![FlowState::default(); flows.len()],
        core,
        pending: Vec::new(),
        installed: BTreeSet::new(),
        actions: Vec::new(),
        out: Outcome {
            compress,
            k,
            flows: flows.len() as u64,
            bytes: flows.iter().map(|f| f.bytes).sum(),
            ..Outcome::default()
        },
        k,
        span,
        next: 0,
        ends: BinaryHeap::new(),
        finished: false,
        error: None,
    };
    let node = NodeSpec {
        name: "tcpu".into(),
        kind: NodeKind::Switch,
    };
    let topo = Topology::new(vec![node], Vec::new()).map_err(|e| ExperimentError(format!("tcpu-offload: {e}")))?;
    let mut sim = Sim::new(
        &topo,
        SwitchConfig::default(),
        QueueConfig::default(),
        TcpConfig::default(),
        Vec::new(),
        0,
        SimOptions::default(),
    );
    sim.attach_model(NodeId(0), Box::new(d));
    sim.run_until(Time::MAX);
    let d = sim
        .model_as_mut::<Driver>(NodeId(0))
        .ok_or_else(|| ExperimentError("tcpu-offload: the model is gone".into()))?;
    if let Some(e) = d.error.take() {
        return Err(e);
    }
    let st = d.core.stats();
    d.out.swaps = st.inactive_swaps + st.rank_swaps;
    d.out.free_inserts = st.free_slot_inserts;
    d.out.span_s = span as f64 / SEC as f64;
    d.out.swaps_per_sec = d.out.swaps as f64 / d.out.span_s;
    d.out.wall_s = started.elapsed().as_secs_f64();
    Ok(std::mem::take(&mut d.out))
}

/// Synthesizes and runs one setup.
pub fn run_setup(span: Time, compress: u32, k: u32) -> Result<Outcome, ExperimentError> {
    let flows = workload(span, compress, 1)?;
    run_flows(&flows, k, span, compress)
}

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let span = if ctx.quick { QUICK_SPAN } else { FULL_SPAN };
    let k = tcpu_config(1_792).asic_flow_entries;
    let setups = [1u32, 10];
    (ctx.status)(&format!("{} s of arrivals, compression 1x and 10x", span / SEC));
    let results: Vec<Outcome> = super::common::par_map(&setups, super::common::threads(), |&c| run_setup(span, c, k))
        .into_iter()
        .collect::<Result<_, _>>()?;
    let (_, scale) = size_cdf()?;
    let mut rep = Report {
        title: "TCPU large flow table: traffic offload ratio".into(),
        reference: "Lu et al., HotSDN 2012, §4, second experiment: 8 servers, 10 min, 103,200 flows, 33.6 GB, \
                    max 10,644 active, TFOR 96.1%; inter-arrival / 10: max 106,544 active, TFOR 90.5%, \
                    1,743 swaps/s"
            .into(),
        ..Report::default()
    };
    let mut csv = String::from(
        "compress,k,flows,bytes,asic_bytes,cpu_bytes,tfor,max_active_60s,max_sending,swaps,free_slot_inserts,swaps_per_sec,span_s,wall_s,refused\n",
    );
    let full = !ctx.quick;
    for o in &results {
        csv.push_str(&format!(
            "{},{},{},{},{},{},{:.6},{},{},{},{},{:.1},{},{:.2},{}\n",
            o.compress,
            o.k,
            o.flows,
            o.bytes,
            o.asic_bytes,
            o.cpu_bytes,
            o.tfor(),
            o.max_active,
            o.max_sending,
            o.swaps,
            o.free_inserts,
            o.swaps_per_sec,
            o.span_s,
            o.wall_s,
            o.refused
        ));
        let setting = if o.compress == 1 {
            "paper workload".to_string()
        } else {
            format!("inter-arrival / {}", o.compress)
        };
        let base = o.compress == 1;
        let r = |paper: f64, alt: f64| {
            if full {
                Some(if base { paper } else { alt })
            } else {
                None
            }
        };
        let c = f64::from(o.compress);
        // Input: the arrival rate is set from the paper's 103,200 flows in 10 minutes and the
        // flow-size CDF is scaled to its 33.6 GB, so these two agree by construction.
        rep.rows.push(Row::new(
            Kind::Input,
            &setting,
            "flows",
            r(PAPER_FLOWS as f64, PAPER_FLOWS as f64 * c),
            o.flows as f64,
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Input,
            &setting,
            "data (GB)",
            r(33.6, 336.0),
            o.bytes as f64 / 1e9,
            Target::None,
        ));
        // Identity: the table holds the flows of the last 60 s, i.e. the input arrival rate
        // times 60 s (10,320 and 103,200 on average), plus ASIC entries the core forgets only
        // when they are replaced (up to k = 1,792). A workload statistic, not the design's
        // doing; the 15% target it had was set just past the measured +14.9%, so it is gone.
        rep.rows.push(Row::new(
            Kind::Identity,
            &setting,
            "max active flows (60 s timeout)",
            if full && base {
                Some(10_644.0)
            } else if full {
                Some(106_544.0)
            } else {
                None
            },
            o.max_active as f64,
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "max flows sending at once",
            None,
            o.max_sending as f64,
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "TFOR (%)",
            if full {
                Some(if base { 96.1 } else { 90.5 })
            } else {
                None
            },
            o.tfor() * 100.0,
            // The paper's claim (abstract and §1): "over 90% traffic offloading ratio", which
            // its testbed met at both rates (96.1% and 90.5%). Was >= 85%, set below our 86.2%.
            Target::AtLeast(90.0),
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "swaps per second",
            if full && !base { Some(1_743.0) } else { None },
            o.swaps_per_sec,
            Target::None,
        ));
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "table operations refused",
            Some(0.0),
            o.refused as f64,
            Target::AtMost(0.0),
        ));
    }
    write(ctx, "offload.csv", &csv)?;
    let series = vec![(
        "TFOR (%)".to_string(),
        results
            .iter()
            .map(|o| (f64::from(o.compress), o.tfor() * 100.0))
            .collect(),
    )];
    Figure::new(
        "Traffic offload ratio vs inter-arrival compression (k = 1,792)",
        Axis::new("inter-arrival compression (x)").integer(),
        "TFOR (%)",
    )
    .with(series)
    .save(&ctx.path("offload.png"))?;
    rep.files = vec!["offload.png".into(), "offload.svg".into(), "offload.csv".into()];
    rep.notes = vec![
        format!(
            "Flow sizes: the built-in web-search CDF (DCTCP, SIGCOMM 2010) scaled by {scale:.4} to the paper's mean \
             (33.6 GB / 103,200 flows); Poisson arrivals, 172 flows/s (x 10 compressed) over {} s; uniform \
             ordered pairs of 8 servers; seed 1.",
            span / SEC
        ),
        format!(
            "Flow-level model driving the TCPU core: each flow sends its first packet, then the rest at {} Gb/s \
             (no contention); bytes without a TCAM entry reach the core every {} ms; counters and table \
             operations as the core's channel times them. k = {k}, T_inactive 1 s, ranking every 100 ms, \
             flows forgotten after 60 s idle (active flows = the paper's 60 s timeout).",
            FLOW_RATE_BPS / 1_000_000_000,
            CPU_CHUNK / MS
        ),
        "Swaps = inactive swaps + ranking swaps (free-slot inserts not counted); wall times in offload.csv.".into(),
    ];
    Ok(rep)
}

/// The `tcpu-offload` experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "tcpu-offload",
    about: "TCPU large flow table: TFOR, active flows and swaps for a synthesized 8-server workload (paper §4)",
    run,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_matches_the_paper_rate_and_mean() {
        let w = workload(60 * SEC, 1, 7).unwrap();
        let n = w.len() as f64;
        assert!((n - 10_320.0).abs() < 400.0, "{n}");
        let mean = w.iter().map(|f| f.bytes as f64).sum::<f64>() / n;
        assert!((mean / 325_581.0 - 1.0).abs() < 0.15, "{mean}");
        assert!(w.iter().all(|f| u32::from(f.dst) != f.src && f.dst < 8 && f.src < 8));
        assert!(w.windows(2).all(|p| p[0].start <= p[1].start));
    }

    #[test]
    fn one_big_flow_is_offloaded_after_its_first_packet() {
        // One 10 MB flow: it takes a free slot at once; only the bytes sent before the insert
        // completes (first packet + ~71 us at 1 Gb/s) go through the CPU.
        let f = [SynthFlow {
            start: SEC,
            bytes: 10_000_000,
            src: 0,
            dst: 1,
        }];
        let o = run_flows(&f, 4, 2 * SEC, 1).unwrap();
        assert_eq!(o.asic_bytes + o.cpu_bytes, 10_000_000);
        assert!(o.cpu_bytes >= FIRST_PACKET && o.cpu_bytes < 20_000, "{o:?}");
        assert_eq!(o.free_inserts, 1);
        assert_eq!((o.max_active, o.max_sending, o.refused), (1, 1, 0));
    }

    #[test]
    fn with_no_entries_everything_goes_through_the_cpu() {
        let w = workload(2 * SEC, 1, 3).unwrap();
        let o = run_flows(&w, 0, 2 * SEC, 1).unwrap();
        assert_eq!(o.asic_bytes, 0);
        assert_eq!(o.cpu_bytes, o.bytes);
    }
}
