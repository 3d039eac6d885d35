//! CoSwitch on real switches: the Flow-Arbiter and Flow-Prediction cores as a
//! `tandem-controller` [`App`] managing OpenFlow 1.3 switches, each either a server's vswitch or
//! the physical ToR (by datapath id, [`CoSwitchAppConfig::tor_dpid`]).
//!
//! ```text
//!  vswitch: every IPv4 flow's first packet -> packet_in -> an exact 5-tuple entry (NORMAL
//!           forwarding: the vswitch carries the mouse), counted by flow stats every poll;
//!           past the threshold the entry is rewritten to mark the flow (set DSCP) -> elephant
//!  ToR:     NORMAL forwarding for everything (the default path), plus one exact entry per
//!           marked flow (5-tuple and DSCP), at most tor_capacity of them
//!  every period: vswitch packet rates, ToR rule setups and table fill -> Flow-Prediction ->
//!           a new threshold for every Flow-Arbiter
//! ```
//!
//! The mapping onto the cores: a vswitch's Flow-Arbiter is fed each flow's packet-counter
//! growth ([`FlowArbiter::on_packets`], exactly as packet by packet), so a flow turns elephant
//! at the first counter read after its threshold-th packet (at most one poll interval late). A
//! Flow-Prediction report's loads: each vswitch's mouse packet rate over
//! [`CoSwitchAppConfig::vswitch_pps_budget`] (the server CPU budget), the ToR's rule setups
//! over [`CoSwitchAppConfig::tor_setups_per_sec`] (its control CPU) and its entries over
//! [`CoSwitchAppConfig::tor_capacity`] (its table).
//!
//! Only a server's own hosts' flows are arbitrated, on the sending server: what arrives at a
//! vswitch from the ToR ([`CoSwitchAppConfig::uplink_port`]) is forwarded without it.
//!
//! Not carried over: VLAN marking ([`Mark::Vlan`]) is refused (the live mark is the DSCP);
//! entries are forwarded by the switches' NORMAL action rather than by per-destination
//! output ports the controller computes.

use crate::arbiter::{ArbiterConfig, FlowArbiter, Verdict};
use crate::marking::Mark;
use crate::prediction::{FlowPrediction, LoadReport, PredictionConfig};
use crate::types::{Time, MS, SEC};
use rustc_hash::FxHashMap;
use serde::Deserialize as _;
use std::collections::VecDeque;
use std::net::Ipv4Addr;
use std::path::Path;
use tandem_controller::app::{ipv4_flow_fields, App, Reply};
use tandem_controller::event::{PacketInEvent, NO_BUFFER};
use tandem_controller::l2::{table_miss_13, OFPCML_NO_BUFFER, OFPP13_ANY, OFPP13_CONTROLLER, OFPP13_NORMAL};
use tandem_time::units::TimeArg;
use tandem_wire::ethernet::EtherType;
use tandem_wire::openflow::multipart::{FlowStatsRequest, MultipartReplyBody, MultipartRequestBody, FLAG_MORE};
use tandem_wire::openflow::{
    Action as OfAction, Body, FlowMatch, FlowMod, FlowModCommand, Instruction, Message, MultipartRequest, OxmField,
    OxmMatch, PacketOut, Version,
};

/// Cookie tag of a vswitch's per-flow entries (the flow's id in the low 32 bits).
pub const COOKIE_VFLOW: u64 = 0x636f_7376_0000_0000;
/// Cookie tag of the ToR's elephant entries.
pub const COOKIE_TOR: u64 = 0x636f_7374_0000_0000;
/// The bits of a cookie that hold its tag.
pub const COOKIE_TAG: u64 = 0xffff_ffff_0000_0000;
/// `OFPFF_SEND_FLOW_REM`: the switch reports the entry's removal.
const SEND_FLOW_REM: u16 = 1;
/// Priority of the per-flow entries (above the defaults at 0 and 1).
const PRIO_FLOW: u16 = 10;
/// ToR flow_mods remembered for matching errors to them.
const PENDING_XIDS: usize = 4096;

/// The app's settings (the `[coswitch]` table of `--app-config`).
#[derive(Debug, Clone, PartialEq)]
pub struct CoSwitchAppConfig {
    /// The ToR's datapath id; every other switch is a server's vswitch. Default 100.
    pub tor_dpid: u64,
    /// The vswitches' port toward the ToR: what arrives there is another server's traffic,
    /// forwarded without the arbiter (only a server's own hosts' flows are arbitrated, on the
    /// server that sends them). Default 100.
    pub uplink_port: u32,
    /// The Flow-Arbiter (threshold = Flow-Prediction's initial one, idle timeout, flows kept,
    /// the DSCP mark).
    pub arbiter: ArbiterConfig,
    /// Flow-Prediction (period, bounds, deadband, gain, step, damping).
    pub prediction: PredictionConfig,
    /// How often each vswitch's flow counters are read. Default 100 ms.
    pub poll_interval: Time,
    /// Elephant entries the ToR holds at most. Default 200 (the CoSwitch paper's budget).
    pub tor_capacity: u32,
    /// Idle timeout of the ToR's elephant entries (whole seconds). Default 3 s, the paper's
    /// short switch timeout (its Fig. 5) and the simulated model's `rule_idle_timeout`; the
    /// vswitches' entries keep the arbiter's `idle_timeout`.
    pub tor_idle_timeout: Time,
    /// Rule setups per second that keep the ToR's control CPU at 100%. Default 1,000.
    pub tor_setups_per_sec: u64,
    /// Packets per second through a vswitch's mouse entries that make a server's CPU budget
    /// 100%. Default 50,000.
    pub vswitch_pps_budget: u64,
    /// Threshold changes kept for the trajectory (oldest dropped). Default 10,000.
    pub trajectory: usize,
    /// Core steps recorded for [`replay_lines`] and not yet taken by the driver
    /// ([`CoSwitchApp::take_log`]); a step beyond it is lost and counted (0: no log). Default 0.
    pub log: usize,
    /// Where the live driver appends the recorded steps (`tandem lab replay` reads them). Needs
    /// `log` of at least 1.
    pub log_file: Option<std::path::PathBuf>,
}

impl Default for CoSwitchAppConfig {
    fn default() -> CoSwitchAppConfig {
        let prediction = PredictionConfig::default();
        CoSwitchAppConfig {
            tor_dpid: 100,
            uplink_port: 100,
            arbiter: ArbiterConfig {
                threshold: prediction.initial_threshold,
                ..ArbiterConfig::default()
            },
            prediction,
            poll_interval: 100 * MS,
            tor_capacity: 200,
            tor_idle_timeout: 3 * SEC,
            tor_setups_per_sec: 1_000,
            vswitch_pps_budget: 50_000,
            trajectory: 10_000,
            log: 0,
            log_file: None,
        }
    }
}

impl CoSwitchAppConfig {
    /// Reads an app configuration file; errors name the file and the key.
    pub fn load(path: &Path) -> Result<CoSwitchAppConfig, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        CoSwitchAppConfig::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses and checks an app configuration text (a `[coswitch]` table).
    pub fn parse(text: &str) -> Result<CoSwitchAppConfig, String> {
        let mut top: toml::Table = toml::from_str(text).map_err(|e| e.message().to_string())?;
        let t = match top.remove("coswitch") {
            Some(toml::Value::Table(t)) => t,
            Some(_) => return Err("coswitch: expected a table".into()),
            None => toml::Table::new(),
        };
        if let Some(k) = top.keys().next() {
            return Err(format!("{k}: unknown section (expected [coswitch])"));
        }
        let mut c = CoSwitchAppConfig::default();
        for (k, v) in t {
            let bad = |what: &str| format!("coswitch.{k}: expected {what}, got {v}");
            let int = |lo: i64, hi: i64| {
                v.as_integer()
                    .filter(|n| (lo..=hi).contains(n))
                    .ok_or_else(|| bad(&format!("an integer from {lo} to {hi}")))
            };
            let float = || {
                v.as_float()
                    .or(v.as_integer().map(|n| n as f64))
                    .ok_or_else(|| bad("a number"))
            };
            let time = || {
                TimeArg::deserialize(v.clone())
                    .map(|a| a.0)
                    .map_err(|e| format!("coswitch.{k}: {}", e.message()))
            };
            let p = &mut c.prediction;
            match k.as_str() {
                "tor_dpid" => c.tor_dpid = int(0, i64::MAX)? as u64,
                "uplink_port" => c.uplink_port = int(1, 0xffff_ff00)? as u32,
                "threshold" => p.initial_threshold = int(1, i64::from(u32::MAX))? as u32,
                "min_threshold" => p.min_threshold = int(1, i64::from(u32::MAX))? as u32,
                "max_threshold" => p.max_threshold = int(1, i64::from(u32::MAX))? as u32,
                "period" => p.period = time()?,
                "deadband" => p.deadband = float()?,
                "gain" => p.gain = float()?,
                "max_step" => p.max_step = float()?,
                "min_damping" => p.min_damping = float()?,
                "idle_timeout" => c.arbiter.idle_timeout = time()?,
                "max_flows" => c.arbiter.max_flows = int(1, i64::from(u32::MAX))? as usize,
                "dscp" => c.arbiter.mark = Mark::Dscp(int(0, 63)? as u8),
                "poll_interval" => c.poll_interval = time()?,
                "tor_capacity" => c.tor_capacity = int(1, i64::from(u32::MAX))? as u32,
                "tor_idle_timeout" => c.tor_idle_timeout = time()?,
                "tor_setups_per_sec" => c.tor_setups_per_sec = int(1, i64::MAX)? as u64,
                "vswitch_pps_budget" => c.vswitch_pps_budget = int(1, i64::MAX)? as u64,
                "trajectory" => c.trajectory = int(1, 10_000_000)? as usize,
                "log" => c.log = int(0, 100_000_000)? as usize,
                "log_file" => {
                    c.log_file = Some(v.as_str().ok_or_else(|| bad("a path"))?.into());
                }
                _ => return Err(format!("coswitch.{k}: unknown key")),
            }
        }
        c.arbiter.threshold = c.prediction.initial_threshold;
        c.check()?;
        Ok(c)
    }

    /// Checks what [`CoSwitchAppConfig::parse`] cannot see in one key.
    pub fn check(&self) -> Result<(), String> {
        self.prediction.validate().map_err(|e| format!("coswitch: {e}"))?;
        for (k, v) in [
            ("poll_interval", self.poll_interval),
            ("tor_setups_per_sec", self.tor_setups_per_sec),
            ("vswitch_pps_budget", self.vswitch_pps_budget),
            ("max_flows", self.arbiter.max_flows as u64),
            ("idle_timeout", self.arbiter.idle_timeout),
        ] {
            if v == 0 {
                return Err(format!("coswitch.{k}: must be positive"));
            }
        }
        for (k, v) in [
            ("idle_timeout", self.arbiter.idle_timeout),
            ("tor_idle_timeout", self.tor_idle_timeout),
        ] {
            if !(SEC..=u64::from(u16::MAX) * SEC).contains(&v) {
                return Err(format!(
                    "coswitch.{k}: from 1s to 65535s (a switch's idle timeout is whole seconds)"
                ));
            }
        }
        if self.log_file.is_some() && self.log == 0 {
            return Err("coswitch.log: must be at least 1 with coswitch.log_file".into());
        }
        if !matches!(self.arbiter.mark, Mark::Dscp(_)) {
            return Err("coswitch: the live mark is the DSCP".into());
        }
        Ok(())
    }
}

/// What the app did (all monotonic but the gauges `tor_entries`, `threshold` and `flows`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoSwitchCounters {
    /// Elephant entries in the ToR now (as far as the app knows: added, not yet removed).
    pub tor_entries: u64,
    /// Elephant entries ever added to the ToR.
    pub offloaded_flows: u64,
    /// Flows marked as elephants at a vswitch.
    pub marked_flows: u64,
    /// Marked flows the ToR had no room for (they take the default path, marked).
    pub tor_full: u64,
    /// Packets the vswitches' mouse entries carried (counter growth of unmarked flows).
    pub software_packets: u64,
    /// Per-flow entries ever added to vswitches.
    pub vswitch_flows: u64,
    /// Per-flow entries at vswitches now.
    pub flows: u64,
    /// Flows beyond the arbiter's `max_flows`, given an uncounted entry.
    pub untracked_flows: u64,
    /// The elephant threshold in force (packets).
    pub threshold: u64,
    /// Flow-Prediction reports made.
    pub reports: u64,
    /// Reports that moved the threshold (a move and a move back count two).
    pub threshold_moves: u64,
    /// Counter reads sent.
    pub counter_reads: u64,
    /// Flow_mods a switch refused.
    pub refused: u64,
    /// Log steps lost because `log` steps were waiting to be taken.
    pub log_dropped: u64,
}

/// A flow's exact 5-tuple.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Tuple {
    proto: u8,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    sport: u16,
    dport: u16,
}

impl Tuple {
    fn fields(&self) -> Vec<OxmField> {
        ipv4_flow_fields(self.proto, self.src, self.dst, self.sport, self.dport)
    }
}

/// One flow a vswitch holds an entry for.
#[derive(Debug, Clone, Copy)]
struct VFlow {
    tuple: Tuple,
    packets: u64,
    elephant: bool,
}

/// A server's vswitch.
#[derive(Debug)]
struct VSwitch {
    arbiter: FlowArbiter<Tuple>,
    ids: FxHashMap<Tuple, u32>,
    flows: FxHashMap<u32, VFlow>,
    next_id: u32,
    reading: Option<u32>,
    parts: Vec<(u32, u64)>,
    /// Mouse packets since the last report.
    period_packets: u64,
    packets: u64,
}

/// CoSwitch as a controller app (see the module documentation).
#[derive(Debug)]
pub struct CoSwitchApp {
    cfg: CoSwitchAppConfig,
    prediction: FlowPrediction,
    vswitches: FxHashMap<u64, VSwitch>,
    tor: Option<Version>,
    tor_ids: FxHashMap<Tuple, u32>,
    tor_next: u32,
    pending: VecDeque<(u32, Tuple)>,
    period_setups: u64,
    next_poll: Option<Time>,
    next_report: Option<Time>,
    trajectory: VecDeque<(Time, u32)>,
    counters: CoSwitchCounters,
    xid: u32,
    log: Vec<String>,
}

impl CoSwitchApp {
    /// An app with this configuration (checked).
    pub fn new(cfg: CoSwitchAppConfig) -> Result<CoSwitchApp, String> {
        cfg.check()?;
        let prediction = FlowPrediction::new(cfg.prediction).map_err(|e| format!("coswitch: {e}"))?;
        let counters = CoSwitchCounters {
            threshold: u64::from(prediction.threshold()),
            ..CoSwitchCounters::default()
        };
        Ok(CoSwitchApp {
            prediction,
            vswitches: FxHashMap::default(),
            tor: None,
            tor_ids: FxHashMap::default(),
            tor_next: 0,
            pending: VecDeque::new(),
            period_setups: 0,
            next_poll: None,
            next_report: None,
            trajectory: VecDeque::new(),
            counters,
            xid: 0,
            log: Vec::new(),
            cfg,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &CoSwitchAppConfig {
        &self.cfg
    }

    /// What the app did.
    pub fn counters(&self) -> CoSwitchCounters {
        self.counters
    }

    /// The threshold's changes: (time, new threshold), oldest first.
    pub fn trajectory(&self) -> impl Iterator<Item = &(Time, u32)> {
        self.trajectory.iter()
    }

    /// The connected vswitches' datapath ids, in order, with the packets each one's mouse
    /// entries carried.
    pub fn vswitches(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self.vswitches.iter().map(|(d, s)| (*d, s.packets)).collect();
        v.sort_unstable();
        v
    }

    /// Whether the ToR is connected.
    pub fn tor_connected(&self) -> bool {
        self.tor.is_some()
    }

    fn next_xid(&mut self) -> u32 {
        self.xid = self.xid.wrapping_add(1);
        self.xid
    }

    /// Takes the recorded core steps (lines of the log format [`replay_lines`] reads).
    pub fn take_log(&mut self) -> Vec<String> {
        std::mem::take(&mut self.log)
    }

    fn record(&mut self, line: impl FnOnce() -> String) {
        if self.cfg.log == 0 {
            return;
        }
        if self.log.len() < self.cfg.log {
            self.log.push(line());
        } else {
            self.counters.log_dropped += 1;
        }
    }

    fn idle_s(&self) -> u16 {
        whole_seconds(self.cfg.arbiter.idle_timeout)
    }

    fn dscp(&self) -> u8 {
        match self.cfg.arbiter.mark {
            Mark::Dscp(d) => d,
            Mark::Vlan(_) => 0,
        }
    }

    fn arm_timers(&mut self, now: Time) {
        if self.next_poll.is_none() {
            self.next_poll = Some(now.saturating_add(self.cfg.poll_interval));
        }
        if self.next_report.is_none() {
            self.next_report = Some(now.saturating_add(self.cfg.prediction.period));
        }
    }

    /// Marks flow `id` of vswitch `dpid`: its entry rewrites the DSCP, and the ToR gets an entry.
    fn mark(&mut self, dpid: u64, id: u32, out: &mut Vec<Reply>) {
        let (xid, tor_xid) = (self.next_xid(), self.next_xid());
        let (dscp, idle) = (self.dscp(), self.idle_s());
        let Some(vs) = self.vswitches.get_mut(&dpid) else {
            return;
        };
        let Some(f) = vs.flows.get_mut(&id) else { return };
        f.elephant = true;
        let tuple = f.tuple;
        self.counters.marked_flows += 1;
        let rewrite = flow_entry(
            COOKIE_VFLOW | u64::from(id),
            FlowModCommand::ModifyStrict,
            idle,
            tuple.fields(),
            vec![OfAction::SetField(OxmField::IpDscp(dscp)), normal()],
        );
        out.push(Reply::flow_mod(dpid, Version::V1_3, xid, rewrite));
        let Some(version) = self.tor else { return };
        if self.tor_ids.contains_key(&tuple) {
            return;
        }
        if self.tor_ids.len() >= self.cfg.tor_capacity as usize {
            self.counters.tor_full += 1;
            return;
        }
        let tid = self.tor_next;
        self.tor_next = self.tor_next.wrapping_add(1);
        self.tor_ids.insert(tuple, tid);
        let mut fields = tuple.fields();
        fields.insert(1, OxmField::IpDscp(dscp));
        let add = flow_entry(
            COOKIE_TOR | u64::from(tid),
            FlowModCommand::Add,
            whole_seconds(self.cfg.tor_idle_timeout),
            fields,
            vec![normal()],
        );
        out.push(Reply::flow_mod(self.cfg.tor_dpid, version, tor_xid, add));
        if self.pending.len() >= PENDING_XIDS {
            self.pending.pop_front();
        }
        self.pending.push_back((tor_xid, tuple));
        self.counters.offloaded_flows += 1;
        self.counters.tor_entries = self.tor_ids.len() as u64;
        self.period_setups += 1;
    }

    /// A vswitch's counters: feeds their growth to its Flow-Arbiter, marks new elephants.
    fn on_counters(&mut self, now: Time, dpid: u64, out: &mut Vec<Reply>) {
        let Some(vs) = self.vswitches.get_mut(&dpid) else {
            return;
        };
        let parts = std::mem::take(&mut vs.parts);
        let mut newly = Vec::new();
        let mut records = Vec::new();
        for &(id, n) in &parts {
            let Some(f) = vs.flows.get_mut(&id) else { continue };
            let delta = n.saturating_sub(f.packets);
            f.packets = n;
            if delta == 0 {
                continue;
            }
            if !f.elephant {
                vs.period_packets += delta;
                vs.packets += delta;
                self.counters.software_packets += delta;
            }
            let v = vs.arbiter.on_packets(now, f.tuple, delta);
            if self.cfg.log > 0 {
                records.push(packets_line(dpid, now, &f.tuple, delta, v));
            }
            if matches!(v, Verdict::Elephant { .. }) && !f.elephant {
                newly.push(id);
            }
        }
        for line in records {
            self.record(|| line);
        }
        for id in newly {
            self.mark(dpid, id, out);
        }
    }

    /// One Flow-Prediction period: the loads of both sides, a new threshold for every arbiter.
    fn report(&mut self, now: Time) {
        let period_s = self.cfg.prediction.period as f64 / SEC as f64;
        let budget = self.cfg.vswitch_pps_budget as f64 * period_s;
        let mut vswitch_cpu: Vec<f64> = Vec::new();
        let mut expired = Vec::new();
        let mut dpids: Vec<u64> = self.vswitches.keys().copied().collect();
        dpids.sort_unstable();
        for dpid in dpids {
            let Some(vs) = self.vswitches.get_mut(&dpid) else {
                continue;
            };
            vswitch_cpu.push(vs.period_packets as f64 / budget);
            vs.period_packets = 0;
            expired.push((dpid, vs.arbiter.expire(now)));
        }
        for (dpid, n) in expired {
            self.record(|| format!("{dpid:016x} {now} X #{n}"));
        }
        let report = LoadReport {
            vswitch_cpu,
            switch_cpu: self.period_setups as f64 / (self.cfg.tor_setups_per_sec as f64 * period_s),
            switch_table: self.tor_ids.len() as f64 / f64::from(self.cfg.tor_capacity.max(1)),
        };
        self.period_setups = 0;
        self.counters.reports += 1;
        let moved = self.prediction.on_report(now, &report);
        self.record(|| report_line(now, &report, moved));
        if let Some(t) = moved {
            for vs in self.vswitches.values_mut() {
                vs.arbiter.set_threshold(t);
            }
            self.counters.threshold = u64::from(t);
            self.counters.threshold_moves += 1;
            if self.trajectory.len() >= self.cfg.trajectory.max(1) {
                self.trajectory.pop_front();
            }
            self.trajectory.push_back((now, t));
        }
    }

    fn poll(&mut self, out: &mut Vec<Reply>) {
        let dpids: Vec<u64> = self.vswitches.keys().copied().collect();
        for dpid in dpids {
            let xid = self.next_xid();
            let Some(vs) = self.vswitches.get_mut(&dpid) else {
                continue;
            };
            vs.reading = Some(xid);
            vs.parts.clear();
            self.counters.counter_reads += 1;
            let req = MultipartRequest {
                flags: 0,
                body: MultipartRequestBody::Flow(FlowStatsRequest {
                    table_id: 0,
                    out_port: OFPP13_ANY,
                    out_group: OFPP13_ANY,
                    cookie: COOKIE_VFLOW,
                    cookie_mask: COOKIE_TAG,
                    matches: FlowMatch::Oxm(OxmMatch::default()),
                }),
            };
            out.push(Reply::message(dpid, Version::V1_3, xid, Body::MultipartRequest(req)));
        }
    }
}

fn verdict_char(v: Verdict) -> char {
    match v {
        Verdict::Mouse => 'M',
        Verdict::Elephant { new: false, .. } => 'E',
        Verdict::Elephant { new: true, .. } => 'N',
    }
}

/// `DPID NOW P PROTO SRC DST SPORT DPORT N #VERDICT`: `n` packets of a flow fed to `dpid`'s
/// Flow-Arbiter and its verdict (M mouse, E elephant, N newly elephant).
fn packets_line(dpid: u64, now: Time, t: &Tuple, n: u64, v: Verdict) -> String {
    format!(
        "{dpid:016x} {now} P {} {} {} {} {} {n} #{}",
        t.proto,
        t.src,
        t.dst,
        t.sport,
        t.dport,
        verdict_char(v)
    )
}

/// `0 NOW R V1,V2,.. SWITCH_CPU SWITCH_TABLE #THRESHOLD|-`: a Flow-Prediction report and its answer
/// (the floats in Rust's round-tripping form).
fn report_line(now: Time, r: &LoadReport, moved: Option<u32>) -> String {
    let v: Vec<String> = r.vswitch_cpu.iter().map(|x| format!("{x:?}")).collect();
    let v = if v.is_empty() { "-".to_string() } else { v.join(",") };
    let out = moved.map_or("-".to_string(), |t| t.to_string());
    format!("{:016x} {now} R {v} {:?} {:?} #{out}", 0, r.switch_cpu, r.switch_table)
}

/// Replays a CoSwitch log's text (the lines [`CoSwitchApp::take_log`] gave, in order) through
/// fresh cores with `cfg`: one Flow-Arbiter per vswitch connection (`N` lines start one, `D`
/// lines end it) and one Flow-Prediction, whose new thresholds go to every arbiter as live.
/// Returns the steps replayed; `Err` names the first line whose answer differs from the live
/// run's or that does not parse. A last line without its newline is left out.
pub fn replay_lines(cfg: &CoSwitchAppConfig, text: &str) -> Result<usize, String> {
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    let mut prediction = FlowPrediction::new(cfg.prediction).map_err(|e| e.to_string())?;
    let mut arbiters: FxHashMap<u64, FlowArbiter<Tuple>> = FxHashMap::default();
    let mut n = 0;
    for (i, line) in complete.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = |e: String| format!("line {}: {e}", i + 1);
        let (body, want) = match line.rsplit_once(" #") {
            Some((b, w)) => (b, Some(w.trim())),
            None => (line, None),
        };
        let w: Vec<&str> = body.split_whitespace().collect();
        if w.len() < 3 {
            return Err(at("too short".into()));
        }
        let dpid = u64::from_str_radix(w[0], 16).map_err(|_| at("bad datapath id".into()))?;
        let now: Time = w[1].parse().map_err(|_| at("bad time".into()))?;
        let num = |s: &str| s.parse::<u64>().map_err(|_| at(format!("bad number {s:?}")));
        let got = match (w[2], &w[3..]) {
            ("N", [t]) => {
                let mut a = FlowArbiter::new(cfg.arbiter);
                a.set_threshold(u32::try_from(num(t)?).map_err(|_| at("bad threshold".into()))?);
                arbiters.insert(dpid, a);
                None
            }
            ("D", []) => {
                arbiters.remove(&dpid);
                None
            }
            ("P", [proto, src, dst, sport, dport, count]) => {
                let ip = |s: &str| s.parse::<Ipv4Addr>().map_err(|_| at(format!("bad address {s:?}")));
                let small = |s: &str| s.parse::<u16>().map_err(|_| at(format!("bad port {s:?}")));
                let t = Tuple {
                    proto: proto.parse().map_err(|_| at("bad protocol".into()))?,
                    src: ip(src)?,
                    dst: ip(dst)?,
                    sport: small(sport)?,
                    dport: small(dport)?,
                };
                let a = arbiters
                    .get_mut(&dpid)
                    .ok_or_else(|| at("a vswitch that is not connected".into()))?;
                Some(verdict_char(a.on_packets(now, t, num(count)?)).to_string())
            }
            ("X", []) => {
                let a = arbiters
                    .get_mut(&dpid)
                    .ok_or_else(|| at("a vswitch that is not connected".into()))?;
                Some(a.expire(now).to_string())
            }
            ("R", [v, cpu, table]) => {
                let f = |s: &str| s.parse::<f64>().map_err(|_| at(format!("bad load {s:?}")));
                let vswitch_cpu = if *v == "-" {
                    Vec::new()
                } else {
                    v.split(',').map(f).collect::<Result<_, _>>()?
                };
                let report = LoadReport {
                    vswitch_cpu,
                    switch_cpu: f(cpu)?,
                    switch_table: f(table)?,
                };
                let moved = prediction.on_report(now, &report);
                if let Some(t) = moved {
                    for a in arbiters.values_mut() {
                        a.set_threshold(t);
                    }
                }
                Some(moved.map_or("-".to_string(), |t| t.to_string()))
            }
            (k, _) => return Err(at(format!("bad step {k:?} or its fields"))),
        };
        if let (Some(got), Some(want)) = (&got, want) {
            if got != want {
                return Err(at(format!("the replayed cores answered {got}, the live ones {want}")));
            }
        }
        n += 1;
    }
    Ok(n)
}

/// A switch's idle timeout: whole seconds, at most `u16::MAX` (the configuration checks the range).
fn whole_seconds(t: Time) -> u16 {
    u16::try_from(t / SEC).unwrap_or(u16::MAX)
}

/// A per-flow entry of the app: `command` at priority [`PRIO_FLOW`] with the app's idle timeout,
/// its removal reported, applying `actions`.
fn flow_entry(
    cookie: u64,
    command: FlowModCommand,
    idle: u16,
    fields: Vec<OxmField>,
    actions: Vec<OfAction>,
) -> FlowMod {
    FlowMod {
        cookie,
        command,
        priority: PRIO_FLOW,
        idle_timeout: idle,
        flags: SEND_FLOW_REM,
        buffer_id: NO_BUFFER,
        out_port: OFPP13_ANY,
        out_group: OFPP13_ANY,
        matches: FlowMatch::Oxm(OxmMatch { fields }),
        instructions: vec![Instruction::ApplyActions(actions)],
        ..FlowMod::default()
    }
}

fn normal() -> OfAction {
    OfAction::Output {
        port: OFPP13_NORMAL,
        max_len: 0,
    }
}

fn wipe(table: u8) -> FlowMod {
    FlowMod {
        table_id: table,
        command: FlowModCommand::Delete,
        buffer_id: NO_BUFFER,
        out_port: OFPP13_ANY,
        out_group: OFPP13_ANY,
        matches: FlowMatch::Oxm(OxmMatch::default()),
        ..FlowMod::default()
    }
}

impl App for CoSwitchApp {
    fn on_switch_connected(&mut self, now_ps: u64, dpid: u64, version: Version, out: &mut Vec<Reply>) {
        if version != Version::V1_3 {
            return;
        }
        self.arm_timers(now_ps);
        let xid = self.next_xid();
        out.push(Reply::flow_mod(dpid, version, xid, wipe(0)));
        let xid = self.next_xid();
        // Everything takes the switch's own forwarding by default.
        let mut default = table_miss_13(0, 0);
        default.instructions = vec![Instruction::ApplyActions(vec![normal()])];
        out.push(Reply::flow_mod(dpid, version, xid, default));
        if dpid == self.cfg.tor_dpid {
            self.tor = Some(version);
            self.tor_ids.clear();
            self.counters.tor_entries = 0;
            return;
        }
        // A vswitch: every IPv4 flow's first packet comes to the arbiter.
        let xid = self.next_xid();
        let mut ipv4 = table_miss_13(0, 0);
        ipv4.priority = 1;
        ipv4.matches = FlowMatch::Oxm(OxmMatch {
            fields: vec![OxmField::EthType(EtherType::IPV4.0)],
        });
        ipv4.instructions = vec![Instruction::ApplyActions(vec![OfAction::Output {
            port: OFPP13_CONTROLLER,
            max_len: OFPCML_NO_BUFFER,
        }])];
        out.push(Reply::flow_mod(dpid, version, xid, ipv4));
        // Another server's traffic, from the ToR: forwarded, not arbitrated.
        let xid = self.next_xid();
        let mut uplink = table_miss_13(0, 0);
        uplink.priority = 2;
        uplink.matches = FlowMatch::Oxm(OxmMatch {
            fields: vec![OxmField::InPort(self.cfg.uplink_port)],
        });
        uplink.instructions = vec![Instruction::ApplyActions(vec![normal()])];
        out.push(Reply::flow_mod(dpid, version, xid, uplink));
        let mut arbiter = FlowArbiter::new(self.cfg.arbiter);
        let threshold = self.prediction.threshold();
        arbiter.set_threshold(threshold);
        self.record(|| format!("{dpid:016x} {now_ps} N {threshold}"));
        self.vswitches.insert(
            dpid,
            VSwitch {
                arbiter,
                ids: FxHashMap::default(),
                flows: FxHashMap::default(),
                next_id: 0,
                reading: None,
                parts: Vec::new(),
                period_packets: 0,
                packets: 0,
            },
        );
    }

    fn on_switch_disconnected(&mut self, now_ps: u64, dpid: u64, _out: &mut Vec<Reply>) {
        if dpid == self.cfg.tor_dpid {
            self.tor = None;
            self.tor_ids.clear();
            self.counters.tor_entries = 0;
        } else if let Some(vs) = self.vswitches.remove(&dpid) {
            self.counters.flows = self.counters.flows.saturating_sub(vs.flows.len() as u64);
            self.record(|| format!("{dpid:016x} {now_ps} D"));
        }
    }

    fn on_packet_in(&mut self, now_ps: u64, dpid: u64, ev: &PacketInEvent, out: &mut Vec<Reply>) {
        let (xid, po_xid) = (self.next_xid(), self.next_xid());
        let idle = self.idle_s();
        let max_flows = self.cfg.arbiter.max_flows;
        let Some(vs) = self.vswitches.get_mut(&dpid) else {
            return;
        };
        // The frame goes on by the switch's own forwarding in any case.
        let po = PacketOut {
            buffer_id: ev.buffer_id,
            in_port: ev.in_port,
            actions: vec![normal()],
            data: if ev.is_buffered() { Vec::new() } else { ev.data.clone() },
        };
        let Some(ip) = ev.ipv4() else {
            out.push(Reply::packet_out(dpid, Version::V1_3, po_xid, po));
            return;
        };
        let tuple = Tuple {
            proto: ip.protocol.0,
            src: ip.src,
            dst: ip.dst,
            sport: ip.src_port,
            dport: ip.dst_port,
        };
        if !vs.ids.contains_key(&tuple) {
            let tracked = vs.flows.len() < max_flows;
            let id = vs.next_id;
            let cookie = if tracked {
                vs.next_id = vs.next_id.wrapping_add(1);
                vs.ids.insert(tuple, id);
                vs.flows.insert(
                    id,
                    VFlow {
                        tuple,
                        packets: 0,
                        elephant: false,
                    },
                );
                self.counters.vswitch_flows += 1;
                self.counters.flows += 1;
                COOKIE_VFLOW | u64::from(id)
            } else {
                self.counters.untracked_flows += 1;
                0
            };
            let entry = flow_entry(cookie, FlowModCommand::Add, idle, tuple.fields(), vec![normal()]);
            out.push(Reply::flow_mod(dpid, Version::V1_3, xid, entry));
        }
        out.push(Reply::packet_out(dpid, Version::V1_3, po_xid, po));
        // The packet the controller forwarded counts for its flow (the entry counts the rest).
        if let Some(&id) = vs.ids.get(&tuple) {
            let v = vs.arbiter.on_packets(now_ps, tuple, 1);
            let elephant = vs.flows.get(&id).is_some_and(|f| f.elephant);
            if !elephant {
                vs.period_packets += 1;
                vs.packets += 1;
                self.counters.software_packets += 1;
            }
            self.record(|| packets_line(dpid, now_ps, &tuple, 1, v));
            if !elephant && v.is_elephant() {
                self.mark(dpid, id, out);
            }
        }
    }

    fn on_message(&mut self, now_ps: u64, dpid: u64, msg: &Message, out: &mut Vec<Reply>) {
        match &msg.body {
            Body::MultipartReply(r) => {
                let Some(vs) = self.vswitches.get_mut(&dpid) else {
                    return;
                };
                if vs.reading != Some(msg.xid) {
                    return;
                }
                if let MultipartReplyBody::Flow(stats) = &r.body {
                    vs.parts.extend(
                        stats
                            .iter()
                            .filter(|s| s.cookie & COOKIE_TAG == COOKIE_VFLOW)
                            .map(|s| (s.cookie as u32, s.packet_count)),
                    );
                }
                if r.flags & FLAG_MORE == 0 {
                    vs.reading = None;
                    self.on_counters(now_ps, dpid, out);
                }
            }
            Body::FlowRemoved(fr) => match fr.cookie & COOKIE_TAG {
                COOKIE_VFLOW => {
                    let Some(vs) = self.vswitches.get_mut(&dpid) else {
                        return;
                    };
                    if let Some(f) = vs.flows.remove(&(fr.cookie as u32)) {
                        vs.ids.remove(&f.tuple);
                        self.counters.flows = self.counters.flows.saturating_sub(1);
                    }
                }
                COOKIE_TOR if dpid == self.cfg.tor_dpid => {
                    let id = fr.cookie as u32;
                    self.tor_ids.retain(|_, v| *v != id);
                    self.counters.tor_entries = self.tor_ids.len() as u64;
                }
                _ => {}
            },
            Body::Error(_) => {
                self.counters.refused += 1;
                if let Some(i) = self.pending.iter().position(|(x, _)| *x == msg.xid) {
                    if let Some((_, tuple)) = self.pending.remove(i) {
                        self.tor_ids.remove(&tuple);
                        self.counters.tor_entries = self.tor_ids.len() as u64;
                        self.counters.tor_full += 1;
                    }
                }
            }
            _ => {}
        }
    }

    fn poll_timeout(&self) -> Option<u64> {
        [self.next_poll, self.next_report].into_iter().flatten().min()
    }

    fn on_timeout(&mut self, now_ps: u64, out: &mut Vec<Reply>) {
        if self.next_poll.is_some_and(|t| t <= now_ps) {
            self.next_poll = Some(now_ps.saturating_add(self.cfg.poll_interval));
            self.poll(out);
        }
        if self.next_report.is_some_and(|t| t <= now_ps) {
            self.next_report = Some(now_ps.saturating_add(self.cfg.prediction.period));
            self.report(now_ps);
        }
    }
}

#[cfg(test)]
mod tests;
