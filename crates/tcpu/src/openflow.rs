//! TCPU on a real switch: the policy core ([`Tcpu`]) as a `tandem-controller` [`App`] that
//! manages an OpenFlow 1.3 switch (Open vSwitch in the lab) standing for the ASIC.
//!
//! ```text
//!  host ──> switch table (k exact 5-tuple entries) ──hit──> output port            (fast path)
//!                        └──miss──> packet_in ──> TcpuApp ──> Tcpu core ──> packet_out (CPU path,
//!                                                   deep buffer, pacing at C, attack shaping)
//!  every rank_interval: flow stats request ──> byte counters ──> top-k swap ──> flow_mods
//! ```
//!
//! The mapping, one core action at a time (each carried out at the time the core names, so the
//! core's rate-limited table channel holds on the real switch too):
//!
//! * [`Action::InstallRule`] for a flow: a flow_mod ADD in [`TcpuAppConfig::table`] matching the
//!   flow's exact 5-tuple (IPv4, protocol, addresses, TCP/UDP ports), output to the port; its
//!   cookie carries the flow id ([`cookie_of`]). A flow re-installed at another priority (a
//!   long flow pinned) has the old entry deleted (strict) before the new one is added.
//! * [`Action::InstallRule`] for a source (an attacker): an entry above every flow entry sending
//!   the source's IPv4 traffic to the controller, where the core shapes it to BW_attack. At most
//!   [`TcpuAppConfig::max_attack_rules`] of them; more are reported back as failed.
//! * [`Action::RemoveRule`]: a strict delete of the entry.
//! * [`Action::ReadCounters`]: a flow stats request for the TCPU entries (cookie-masked); the
//!   reply's byte counters (cumulative since the entry was added, as the core expects) are fed
//!   back as [`Event::AsicCounters`] once the last part arrives.
//! * [`Action::SendFromCpu`]: a packet_out of the held frame to the port. [`Action::Drop`]: the
//!   held frame is freed. [`Action::WakeAt`]: the app's timer.
//! * An `OFPT_ERROR` naming one of our flow_mods (a full table, say) is fed back as
//!   [`Event::OpFailed`] for its match.
//!
//! What the switch sends to the controller: IPv4 frames to a learnt destination port become
//! [`Event::PacketToCpu`] (the source host is the IPv4 source address, the size the frame's
//! length); everything else (ARP, unknown or group destinations) is forwarded at once by
//! packet_out, as a learning switch does, without the core.
//!
//! Not carried over: the deep-buffer redirect R_port needs the ASIC's output queue lengths
//! ([`Event::QueueLength`]), which OpenFlow does not report; an R_port install is refused back to
//! the core, so live the deep buffer holds what reaches the CPU path but no port is redirected.
//! Traffic classes (the CPU's return class, the long-flow class) are not mapped to switch
//! queues.
//!
//! Every input the core gets can be recorded with the actions it gave ([`TcpuAppConfig::log`]):
//! [`replay`] feeds such a log through a fresh core and returns the first difference, so a live
//! run is checked against the code the simulator runs, decision by decision.

use crate::config::{read_units, TcpuConfig};
use crate::core::{Action, Event, Tcpu, TcpuStats};
use crate::types::{FlowId, PacketRef, Rule, RuleAction, RuleMatch, Time};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::collections::{BTreeMap, VecDeque};
use std::net::Ipv4Addr;
use std::path::Path;
use tandem_controller::app::{ipv4_flow_fields, App, Reply};
use tandem_controller::event::{PacketInEvent, NO_BUFFER};
use tandem_controller::l2::{table_miss_13, OFPCML_NO_BUFFER, OFPP13_ANY, OFPP13_CONTROLLER, OFPP13_FLOOD};
use tandem_wire::ethernet::EtherType;
use tandem_wire::ipv4::IpProtocol;
use tandem_wire::openflow::multipart::{FlowStatsRequest, MultipartReplyBody, MultipartRequestBody, FLAG_MORE};
use tandem_wire::openflow::{
    Action as OfAction, Body, FlowMatch, FlowMod, FlowModCommand, Instruction, Message, MultipartRequest, OxmField,
    OxmMatch, PacketOut, Version,
};
use tandem_wire::MacAddr;

/// Cookie tag of TCPU's per-flow entries (the flow id is in the low 32 bits).
pub const COOKIE_FLOW: u64 = 0x7463_7075_0000_0000;
/// Cookie tag of TCPU's attack-source entries (the IPv4 source in the low 32 bits).
pub const COOKIE_SRC: u64 = 0x7463_7073_0000_0000;
/// Cookie of the table-miss entry.
pub const COOKIE_MISS: u64 = 0x7463_706d_0000_0000;
/// The bits of a cookie that hold its tag.
pub const COOKIE_TAG: u64 = 0xffff_ffff_0000_0000;
/// Addresses learnt per switch, at most.
const MAX_MACS: usize = 4096;
/// Flow_mods remembered for matching errors to them.
const PENDING_XIDS: usize = 4096;
/// Timer rounds one call runs at most (the core's own operations are finite; this bounds a
/// misbehaving sequence).
const MAX_ROUNDS: usize = 10_000;

/// The cookie of the entry for `m`.
pub fn cookie_of(m: RuleMatch) -> u64 {
    match m {
        RuleMatch::Flow(f) => COOKIE_FLOW | u64::from(f.0),
        RuleMatch::Src(s) => COOKIE_SRC | u64::from(s),
        RuleMatch::OutPort(p) => COOKIE_MISS | u64::from(p),
    }
}

/// Limits of the app itself (the core's parameters are in [`TcpuConfig`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AppLimits {
    /// The switch table standing for the TCAM (default 0).
    pub table: u8,
    /// Flows the app tells apart per switch; packets of further new flows are forwarded by the
    /// CPU without the core (counted as `untracked_packets`). Default 262,144.
    pub max_flows: usize,
    /// Frames held for the core at most per switch (the DRAM's real bound); a frame beyond it
    /// is dropped before the core sees it (`held_full_drops`). Default 65,536.
    pub held_packets: usize,
    /// Attack-source entries at most (beyond them a source stays unshaped and the core is told
    /// the install failed). Default 16.
    pub max_attack_rules: usize,
    /// Switches managed at once, at most (more are refused). Default 16.
    pub max_switches: usize,
    /// Core inputs recorded per switch for [`replay`] (0: none) and not yet taken by the driver
    /// ([`TcpuApp::take_log`]); a step beyond it is lost and counted. Default 0.
    pub log: usize,
    /// Where the live driver appends the recorded steps, one line each ([`LoggedStep::to_line`];
    /// `tandem lab replay` reads them). Needs `log` of at least 1. Default none.
    pub log_file: Option<std::path::PathBuf>,
}

impl Default for AppLimits {
    fn default() -> AppLimits {
        AppLimits {
            table: 0,
            max_flows: 262_144,
            held_packets: 65_536,
            max_attack_rules: 16,
            max_switches: 16,
            log: 0,
            log_file: None,
        }
    }
}

/// The app's settings: `[tcpu]` (the core, every [`TcpuConfig`] field with units, as in a
/// scenario's `[[system]]`) and `[app]` ([`AppLimits`]).
///
/// ```toml
/// [tcpu]
/// ports = 4
/// port_bps = "1Gbps"
/// asic_flow_entries = 16
/// rank_interval = "100ms"
/// [app]
/// max_attack_rules = 4
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TcpuAppConfig {
    /// The core's parameters.
    pub tcpu: TcpuConfig,
    /// The app's limits.
    pub app: AppLimits,
}

impl TcpuAppConfig {
    /// Reads an app configuration file; errors name the file and the key.
    pub fn load(path: &Path) -> Result<TcpuAppConfig, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        TcpuAppConfig::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses an app configuration text and checks the core's parameters.
    pub fn parse(text: &str) -> Result<TcpuAppConfig, String> {
        let mut top: toml::Table = toml::from_str(text).map_err(|e| e.message().to_string())?;
        let mut cfg = TcpuAppConfig::default();
        if let Some(t) = top.remove("tcpu") {
            let toml::Value::Table(mut t) = t else {
                return Err("tcpu: expected a table".into());
            };
            read_units(&mut t).map_err(|(k, e)| format!("tcpu.{k}: {e}"))?;
            cfg.tcpu = TcpuConfig::deserialize(toml::Value::Table(t)).map_err(|e| format!("tcpu: {}", e.message()))?;
        }
        if let Some(a) = top.remove("app") {
            cfg.app = AppLimits::deserialize(a).map_err(|e| format!("app: {}", e.message()))?;
        }
        if let Some(k) = top.keys().next() {
            return Err(format!("{k}: unknown section (expected [tcpu] and [app])"));
        }
        cfg.tcpu.validate().map_err(|e| format!("tcpu: {e}"))?;
        for (k, v) in [
            ("app.max_flows", cfg.app.max_flows),
            ("app.held_packets", cfg.app.held_packets),
            ("app.max_switches", cfg.app.max_switches),
        ] {
            if v == 0 {
                return Err(format!("{k}: must be at least 1"));
            }
        }
        if cfg.app.log_file.is_some() && cfg.app.log == 0 {
            return Err("app.log: must be at least 1 with app.log_file (the steps held between writes)".into());
        }
        if cfg.app.max_flows > u32::MAX as usize {
            return Err("app.max_flows: at most 4294967295".into());
        }
        Ok(cfg)
    }
}

/// What the app did on one switch (all monotonic but `table_entries`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpuAppCounters {
    /// Flow entries in the switch table at the last counter read.
    pub table_entries: u64,
    /// Flow entries ever added (offloaded flows, re-installs included).
    pub offloaded_flows: u64,
    /// Frames the CPU path forwarded for the core (packet_outs of held frames).
    pub software_packets: u64,
    /// Frames forwarded at once without the core (ARP, unknown and group destinations).
    pub other_packets: u64,
    /// Frames of flows beyond [`AppLimits::max_flows`], forwarded without the core.
    pub untracked_packets: u64,
    /// Frames dropped because [`AppLimits::held_packets`] frames were held.
    pub held_full_drops: u64,
    /// Frames the core dropped (DRAM full, non-TCP cap).
    pub core_drops: u64,
    /// Frames dropped because their destination is the port they came from.
    pub hairpin_drops: u64,
    /// Flow stats requests sent.
    pub counter_reads: u64,
    /// Flow_mods the switch refused (fed back to the core).
    pub op_failures: u64,
    /// Sources the core classified as attackers (shaped).
    pub attackers: u64,
    /// Entries removed.
    pub removals: u64,
    /// Log steps lost because [`AppLimits::log`] steps were waiting to be taken.
    pub log_dropped: u64,
}

/// One input the core got, for [`replay`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoggedInput {
    /// [`Event::PacketToCpu`].
    Packet {
        /// The packet handle.
        pkt: PacketRef,
        /// Its flow.
        flow: FlowId,
        /// Its source.
        src: u32,
        /// Its port.
        port: u16,
        /// Its size.
        bytes: u32,
        /// TCP or not.
        is_tcp: bool,
    },
    /// [`Event::AsicCounters`].
    Counters(Vec<(FlowId, u64)>),
    /// [`Event::Tick`].
    Tick,
    /// [`Event::OpFailed`].
    OpFailed(RuleMatch),
}

impl LoggedInput {
    /// The core event this input is.
    pub fn event(&self) -> Event<'_> {
        match self {
            LoggedInput::Packet {
                pkt,
                flow,
                src,
                port,
                bytes,
                is_tcp,
            } => Event::PacketToCpu {
                pkt: *pkt,
                flow: *flow,
                src: *src,
                port: *port,
                bytes: *bytes,
                is_tcp: *is_tcp,
            },
            LoggedInput::Counters(c) => Event::AsicCounters { counters: c },
            LoggedInput::Tick => Event::Tick,
            LoggedInput::OpFailed(m) => Event::OpFailed { matches: *m },
        }
    }
}

/// A digest of a step's actions (FNV-1a over their debug form): a log line carries it instead
/// of the actions, which follow from the inputs.
pub fn actions_digest(actions: &[Action]) -> u64 {
    let text = format!("{actions:?}");
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One recorded step: the time, the input and the actions the core gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedStep {
    /// When (picoseconds of the driver's clock).
    pub now: Time,
    /// The input.
    pub input: LoggedInput,
    /// The actions, in order.
    pub actions: Vec<Action>,
}

impl LoggedStep {
    /// The step as one line of text for switch `dpid`: `DPID NOW KIND FIELDS... #DIGEST` with
    /// KIND `P` (packet: pkt flow src port bytes tcp), `C` (counters: flow=bytes ...), `T`
    /// (tick) or `F` (failed: flow/src/port and its id), and the digest of the actions
    /// ([`actions_digest`]).
    pub fn to_line(&self, dpid: u64) -> String {
        let body = match &self.input {
            LoggedInput::Packet {
                pkt,
                flow,
                src,
                port,
                bytes,
                is_tcp,
            } => format!("P {} {} {src} {port} {bytes} {}", pkt.0, flow.0, u8::from(*is_tcp)),
            LoggedInput::Counters(c) => {
                let mut t = String::from("C");
                for (f, b) in c {
                    t.push_str(&format!(" {}={b}", f.0));
                }
                t
            }
            LoggedInput::Tick => "T".into(),
            LoggedInput::OpFailed(RuleMatch::Flow(f)) => format!("F flow {}", f.0),
            LoggedInput::OpFailed(RuleMatch::Src(s)) => format!("F src {s}"),
            LoggedInput::OpFailed(RuleMatch::OutPort(p)) => format!("F port {p}"),
        };
        format!(
            "{dpid:016x} {} {body} #{:016x}",
            self.now,
            actions_digest(&self.actions)
        )
    }

    /// Reads a line of [`LoggedStep::to_line`]: (dpid, time, input, digest of the actions).
    pub fn parse_line(line: &str) -> Result<(u64, Time, LoggedInput, u64), String> {
        let (body, digest) = line.rsplit_once(" #").ok_or("no action digest")?;
        let digest = u64::from_str_radix(digest.trim(), 16).map_err(|_| "bad action digest")?;
        let mut w = body.split_whitespace();
        let mut next = |what: &str| w.next().ok_or_else(|| format!("missing {what}"));
        let dpid = u64::from_str_radix(next("datapath id")?, 16).map_err(|_| "bad datapath id")?;
        let now: Time = next("time")?.parse().map_err(|_| "bad time")?;
        let num = |s: &str, what: &str| s.parse::<u64>().map_err(|_| format!("bad {what}: {s:?}"));
        let input = match next("kind")? {
            "P" => {
                let mut f = [0u64; 6];
                for (i, what) in ["packet", "flow", "source", "port", "bytes", "tcp"].iter().enumerate() {
                    f[i] = num(next(what)?, what)?;
                }
                let small = |v: u64, what: &str| u32::try_from(v).map_err(|_| format!("bad {what}"));
                LoggedInput::Packet {
                    pkt: PacketRef(f[0]),
                    flow: FlowId(small(f[1], "flow")?),
                    src: small(f[2], "source")?,
                    port: u16::try_from(f[3]).map_err(|_| "bad port")?,
                    bytes: small(f[4], "bytes")?,
                    is_tcp: f[5] == 1,
                }
            }
            "C" => {
                let mut c = Vec::new();
                for pair in w.by_ref() {
                    let (f, b) = pair.split_once('=').ok_or("bad counter")?;
                    c.push((FlowId(f.parse().map_err(|_| "bad counter flow")?), num(b, "counter")?));
                }
                LoggedInput::Counters(c)
            }
            "T" => LoggedInput::Tick,
            "F" => {
                let kind = next("failed kind")?;
                let id = num(next("failed id")?, "failed id")?;
                LoggedInput::OpFailed(match kind {
                    "flow" => RuleMatch::Flow(FlowId(u32::try_from(id).map_err(|_| "bad flow")?)),
                    "src" => RuleMatch::Src(u32::try_from(id).map_err(|_| "bad source")?),
                    "port" => RuleMatch::OutPort(u16::try_from(id).map_err(|_| "bad port")?),
                    k => return Err(format!("bad failed kind {k:?}")),
                })
            }
            k => return Err(format!("bad kind {k:?}")),
        };
        Ok((dpid, now, input, digest))
    }
}

/// The log line that marks switch `dpid` connecting at `now` (a fresh core from here on).
pub fn connect_line(dpid: u64, now: Time) -> String {
    format!("{dpid:016x} {now} N")
}

/// Replays a log file's text (lines of [`LoggedStep::to_line`] and [`connect_line`], every
/// switch's) through a fresh core per switch connection with `cfg`. Returns the steps replayed; `Err` names the first line whose
/// actions differ from the live run's or that does not parse. A last line without its newline
/// (a file still being written) is left out.
pub fn replay_lines(cfg: &TcpuConfig, text: &str) -> Result<usize, String> {
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    let mut cores: FxHashMap<u64, Tcpu> = FxHashMap::default();
    let mut out = Vec::new();
    let mut n = 0;
    for (i, line) in complete.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        // `DPID NOW N`: the switch (re)connected, its core starts afresh.
        let mut w = line.split_whitespace();
        if let (Some(d), Some(_), Some("N"), None) = (w.next(), w.next(), w.next(), w.next()) {
            let dpid = u64::from_str_radix(d, 16).map_err(|_| format!("line {}: bad datapath id", i + 1))?;
            cores.remove(&dpid);
            continue;
        }
        let (dpid, now, input, digest) = LoggedStep::parse_line(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        let core = match cores.entry(dpid) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(Tcpu::new(cfg.clone()).map_err(|e| e.to_string())?)
            }
        };
        out.clear();
        core.handle(now, input.event(), &mut out)
            .map_err(|e| format!("line {}: {e}", i + 1))?;
        if actions_digest(&out) != digest {
            return Err(format!(
                "line {}: the replayed core did {out:?}, not what the live core did",
                i + 1
            ));
        }
        n += 1;
    }
    Ok(n)
}

/// Feeds a recorded log through a fresh core with `cfg`; `Err` names the first step whose
/// actions differ (or that the core refused).
pub fn replay(cfg: &TcpuConfig, log: &[LoggedStep]) -> Result<usize, String> {
    let mut core = Tcpu::new(cfg.clone()).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for (i, step) in log.iter().enumerate() {
        out.clear();
        core.handle(step.now, step.input.event(), &mut out)
            .map_err(|e| format!("step {i}: {e}"))?;
        if out != step.actions {
            return Err(format!(
                "step {i} at {} ps: the live core did {:?}, the replay {:?}",
                step.now, step.actions, out
            ));
        }
    }
    Ok(log.len())
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

/// A frame the CPU holds for the core.
#[derive(Debug, Clone)]
struct Held {
    in_port: u32,
    data: Vec<u8>,
}

/// A switch operation due at a time.
#[derive(Debug, Clone, Copy)]
enum Due {
    Install(Rule),
    Remove(RuleMatch),
    Read,
    Send { port: u16, pkt: PacketRef },
}

/// One managed switch.
#[derive(Debug)]
struct Switch {
    core: Tcpu,
    macs: FxHashMap<MacAddr, u32>,
    flows: FxHashMap<Tuple, FlowId>,
    tuples: Vec<Tuple>,
    held: FxHashMap<PacketRef, Held>,
    next_pkt: u64,
    due: BTreeMap<(Time, u64), Due>,
    seq: u64,
    wake: Option<Time>,
    /// Priority of each entry the switch holds (as far as we know).
    installed: FxHashMap<RuleMatch, u16>,
    attack_rules: usize,
    /// The flow stats request in flight and the parts received so far.
    reading: Option<u32>,
    parts: Vec<(FlowId, u64)>,
    pending: VecDeque<(u32, RuleMatch)>,
    failed: Vec<RuleMatch>,
    counters: TcpuAppCounters,
    log: Vec<LoggedStep>,
    actions: Vec<Action>,
}

/// TCPU as a controller app (see the module documentation).
#[derive(Debug)]
pub struct TcpuApp {
    cfg: TcpuAppConfig,
    switches: FxHashMap<u64, Switch>,
    xid: u32,
    refused: u64,
}

impl TcpuApp {
    /// An app managing every OpenFlow 1.3 switch that connects with this configuration.
    pub fn new(cfg: TcpuAppConfig) -> Result<TcpuApp, String> {
        Tcpu::new(cfg.tcpu.clone()).map_err(|e| format!("tcpu: {e}"))?;
        Ok(TcpuApp {
            cfg,
            switches: FxHashMap::default(),
            xid: 0,
            refused: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &TcpuAppConfig {
        &self.cfg
    }

    /// The managed switches' datapath ids, in order.
    pub fn switches(&self) -> Vec<u64> {
        let mut d: Vec<u64> = self.switches.keys().copied().collect();
        d.sort_unstable();
        d
    }

    /// Switches refused (OpenFlow 1.0, or over [`AppLimits::max_switches`]).
    pub fn refused_switches(&self) -> u64 {
        self.refused
    }

    /// What the app did on `dpid`.
    pub fn counters(&self, dpid: u64) -> Option<TcpuAppCounters> {
        self.switches.get(&dpid).map(|s| s.counters)
    }

    /// The core's counters on `dpid`.
    pub fn core_stats(&self, dpid: u64) -> Option<TcpuStats> {
        self.switches.get(&dpid).map(|s| s.core.stats())
    }

    /// The core of `dpid` (its flow table, DRAM peak, installed entries).
    pub fn core(&self, dpid: u64) -> Option<&Tcpu> {
        self.switches.get(&dpid).map(|s| &s.core)
    }

    /// The recorded core inputs of `dpid` (empty unless [`AppLimits::log`] is set).
    pub fn log(&self, dpid: u64) -> &[LoggedStep] {
        self.switches.get(&dpid).map_or(&[], |s| &s.log)
    }

    /// Takes the recorded steps of `dpid` (the driver writes them out; recording goes on).
    pub fn take_log(&mut self, dpid: u64) -> Vec<LoggedStep> {
        self.switches
            .get_mut(&dpid)
            .map(|s| std::mem::take(&mut s.log))
            .unwrap_or_default()
    }

    fn next_xid(&mut self) -> u32 {
        self.xid = self.xid.wrapping_add(1);
        self.xid
    }

    /// Feeds one input to `dpid`'s core, records it, and carries out the actions.
    fn feed(&mut self, now: Time, dpid: u64, input: LoggedInput) {
        let limit = self.cfg.app.log;
        let Some(sw) = self.switches.get_mut(&dpid) else { return };
        let mut actions = std::mem::take(&mut sw.actions);
        actions.clear();
        // The driver's clock never goes back; a refused event changes nothing.
        if sw.core.handle(now, input.event(), &mut actions).is_err() {
            sw.actions = actions;
            return;
        }
        if sw.log.len() < limit {
            sw.log.push(LoggedStep {
                now,
                input,
                actions: actions.clone(),
            });
        } else if limit > 0 {
            sw.counters.log_dropped += 1;
        }
        for a in &actions {
            self.apply(now, dpid, *a);
        }
        if let Some(sw) = self.switches.get_mut(&dpid) {
            sw.actions = actions;
        }
    }

    /// Takes one core action: schedules switch operations at their time, frees dropped frames.
    fn apply(&mut self, now: Time, dpid: u64, a: Action) {
        let Some(sw) = self.switches.get_mut(&dpid) else { return };
        let mut at_time = |at: Time, d: Due| {
            sw.seq += 1;
            sw.due.insert((at.max(now), sw.seq), d);
        };
        match a {
            Action::InstallRule { rule, at } => at_time(at, Due::Install(rule)),
            Action::RemoveRule { matches, at } => at_time(at, Due::Remove(matches)),
            Action::ReadCounters { at } => at_time(at, Due::Read),
            Action::SendFromCpu { port, pkt, at, .. } => at_time(at, Due::Send { port, pkt }),
            Action::Drop { pkt, .. } => {
                sw.held.remove(&pkt);
                sw.counters.core_drops += 1;
            }
            Action::Shape { .. } => sw.counters.attackers += 1,
            Action::WakeAt { at } => {
                if sw.wake.is_none_or(|w| w <= now || at < w) {
                    sw.wake = Some(at);
                }
            }
        }
    }

    /// Runs what is due on `dpid` at `now`: switch operations, the core's timer, failures.
    fn run_due(&mut self, now: Time, dpid: u64, out: &mut Vec<Reply>) {
        for _ in 0..MAX_ROUNDS {
            let Some(sw) = self.switches.get_mut(&dpid) else { return };
            if let Some(m) = sw.failed.pop() {
                sw.counters.op_failures += 1;
                self.feed(now, dpid, LoggedInput::OpFailed(m));
                continue;
            }
            if let Some(entry) = sw.due.first_entry() {
                if entry.key().0 <= now {
                    let d = entry.remove();
                    self.carry_out(dpid, d, out);
                    continue;
                }
            }
            if sw.wake.is_some_and(|w| w <= now) {
                sw.wake = None;
                self.feed(now, dpid, LoggedInput::Tick);
                continue;
            }
            return;
        }
    }

    /// Sends the switch operation `d`.
    fn carry_out(&mut self, dpid: u64, d: Due, out: &mut Vec<Reply>) {
        let xid = self.next_xid();
        // A replaced entry's delete needs an xid of its own.
        let delete_xid = if matches!(d, Due::Install(_)) {
            self.next_xid()
        } else {
            0
        };
        let table = self.cfg.app.table;
        let max_attack = self.cfg.app.max_attack_rules;
        let Some(sw) = self.switches.get_mut(&dpid) else { return };
        let v = Version::V1_3;
        match d {
            Due::Install(rule) => {
                let Some(matches) = sw.oxm(rule.matches) else {
                    sw.failed.push(rule.matches);
                    return;
                };
                let old = sw.installed.get(&rule.matches).copied();
                if matches!(rule.matches, RuleMatch::Src(_)) && old.is_none() {
                    if sw.attack_rules >= max_attack {
                        sw.failed.push(rule.matches);
                        return;
                    }
                    sw.attack_rules += 1;
                }
                let action = match rule.action {
                    RuleAction::Output { port, .. } => OfAction::Output {
                        port: u32::from(port) + 1,
                        max_len: 0,
                    },
                    RuleAction::ToCpu => OfAction::Output {
                        port: OFPP13_CONTROLLER,
                        max_len: OFPCML_NO_BUFFER,
                    },
                };
                let fm = FlowMod {
                    cookie: cookie_of(rule.matches),
                    table_id: table,
                    command: FlowModCommand::Add,
                    priority: rule.priority,
                    buffer_id: NO_BUFFER,
                    out_port: OFPP13_ANY,
                    out_group: OFPP13_ANY,
                    matches: FlowMatch::Oxm(matches.clone()),
                    instructions: vec![Instruction::ApplyActions(vec![action])],
                    ..FlowMod::default()
                };
                // Replaced at another priority (a long flow pinned): the old entry goes first,
                // so the table never holds more entries than the core counts (the flow's
                // packets take the CPU path in between).
                if let Some(p) = old.filter(|&p| p != rule.priority) {
                    out.push(Reply::flow_mod(dpid, v, delete_xid, delete_strict(table, matches, p)));
                }
                out.push(Reply::flow_mod(dpid, v, xid, fm));
                sw.remember(xid, rule.matches);
                sw.installed.insert(rule.matches, rule.priority);
                if matches!(rule.matches, RuleMatch::Flow(_)) {
                    sw.counters.offloaded_flows += 1;
                }
            }
            Due::Remove(m) => {
                let Some(p) = sw.installed.remove(&m) else { return };
                let Some(matches) = sw.oxm(m) else { return };
                if matches!(m, RuleMatch::Src(_)) {
                    sw.attack_rules -= 1;
                }
                sw.counters.removals += 1;
                out.push(Reply::flow_mod(dpid, v, xid, delete_strict(table, matches, p)));
            }
            Due::Read => {
                sw.reading = Some(xid);
                sw.parts.clear();
                sw.counters.counter_reads += 1;
                let req = MultipartRequest {
                    flags: 0,
                    body: MultipartRequestBody::Flow(FlowStatsRequest {
                        table_id: table,
                        out_port: OFPP13_ANY,
                        out_group: OFPP13_ANY,
                        cookie: COOKIE_FLOW,
                        cookie_mask: COOKIE_TAG,
                        matches: FlowMatch::Oxm(OxmMatch::default()),
                    }),
                };
                out.push(Reply::message(dpid, v, xid, Body::MultipartRequest(req)));
            }
            Due::Send { port, pkt } => {
                let Some(h) = sw.held.remove(&pkt) else { return };
                sw.counters.software_packets += 1;
                let po = PacketOut {
                    buffer_id: NO_BUFFER,
                    in_port: h.in_port,
                    actions: vec![OfAction::Output {
                        port: u32::from(port) + 1,
                        max_len: 0,
                    }],
                    data: h.data,
                };
                out.push(Reply::packet_out(dpid, v, xid, po));
            }
        }
    }

    /// A packet_out of the frame to `port` (or flooded), outside the core.
    fn forward_now(&mut self, dpid: u64, ev: &PacketInEvent, port: u32, out: &mut Vec<Reply>) {
        let xid = self.next_xid();
        let po = PacketOut {
            buffer_id: ev.buffer_id,
            in_port: ev.in_port,
            actions: vec![OfAction::Output { port, max_len: 0 }],
            data: if ev.is_buffered() { Vec::new() } else { ev.data.clone() },
        };
        out.push(Reply::packet_out(dpid, Version::V1_3, xid, po));
    }
}

impl Switch {
    fn new(cfg: &TcpuAppConfig) -> Switch {
        Switch {
            // Checked in `TcpuApp::new`.
            core: Tcpu::new(cfg.tcpu.clone()).unwrap_or_else(|e| unreachable!("checked config: {e}")),
            macs: FxHashMap::default(),
            flows: FxHashMap::default(),
            tuples: Vec::new(),
            held: FxHashMap::default(),
            next_pkt: 0,
            due: BTreeMap::new(),
            seq: 0,
            wake: None,
            installed: FxHashMap::default(),
            attack_rules: 0,
            reading: None,
            parts: Vec::new(),
            pending: VecDeque::new(),
            failed: Vec::new(),
            counters: TcpuAppCounters::default(),
            log: Vec::new(),
            actions: Vec::new(),
        }
    }

    /// The OXM match of a rule's match; `None` for what OpenFlow cannot express (R_port).
    fn oxm(&self, m: RuleMatch) -> Option<OxmMatch> {
        match m {
            RuleMatch::Flow(f) => {
                let t = self.tuples.get(f.0 as usize)?;
                Some(OxmMatch {
                    fields: ipv4_flow_fields(t.proto, t.src, t.dst, t.sport, t.dport),
                })
            }
            RuleMatch::Src(s) => Some(OxmMatch {
                fields: vec![
                    OxmField::EthType(EtherType::IPV4.0),
                    OxmField::Ipv4Src(Ipv4Addr::from(s), None),
                ],
            }),
            RuleMatch::OutPort(_) => None,
        }
    }

    fn remember(&mut self, xid: u32, m: RuleMatch) {
        if self.pending.len() >= PENDING_XIDS {
            self.pending.pop_front();
        }
        self.pending.push_back((xid, m));
    }
}

fn delete_strict(table: u8, matches: OxmMatch, priority: u16) -> FlowMod {
    FlowMod {
        table_id: table,
        command: FlowModCommand::DeleteStrict,
        priority,
        buffer_id: NO_BUFFER,
        out_port: OFPP13_ANY,
        out_group: OFPP13_ANY,
        matches: FlowMatch::Oxm(matches),
        ..FlowMod::default()
    }
}

impl App for TcpuApp {
    fn on_switch_connected(&mut self, now_ps: u64, dpid: u64, version: Version, out: &mut Vec<Reply>) {
        if version != Version::V1_3
            || (self.switches.len() >= self.cfg.app.max_switches && !self.switches.contains_key(&dpid))
        {
            self.refused += 1;
            return;
        }
        let _ = now_ps;
        self.switches.insert(dpid, Switch::new(&self.cfg));
        let table = self.cfg.app.table;
        // A clean table (entries of an earlier run would hold TCAM slots the core does not
        // know of), then the table-miss entry sending every other packet to the CPU.
        let xid = self.next_xid();
        let wipe = FlowMod {
            table_id: table,
            command: FlowModCommand::Delete,
            buffer_id: NO_BUFFER,
            out_port: OFPP13_ANY,
            out_group: OFPP13_ANY,
            matches: FlowMatch::Oxm(OxmMatch::default()),
            ..FlowMod::default()
        };
        out.push(Reply::flow_mod(dpid, version, xid, wipe));
        let xid = self.next_xid();
        out.push(Reply::flow_mod(dpid, version, xid, table_miss_13(table, COOKIE_MISS)));
    }

    fn on_switch_disconnected(&mut self, _now_ps: u64, dpid: u64, _out: &mut Vec<Reply>) {
        self.switches.remove(&dpid);
    }

    fn on_packet_in(&mut self, now_ps: u64, dpid: u64, ev: &PacketInEvent, out: &mut Vec<Reply>) {
        let ports = u32::from(self.cfg.tcpu.ports);
        let (max_flows, held_max) = (self.cfg.app.max_flows, self.cfg.app.held_packets);
        let Some(sw) = self.switches.get_mut(&dpid) else { return };
        if !ev.eth_src.is_multicast() && (sw.macs.len() < MAX_MACS || sw.macs.contains_key(&ev.eth_src)) {
            sw.macs.insert(ev.eth_src, ev.in_port);
        }
        let dst_port = if ev.eth_dst.is_multicast() {
            None
        } else {
            sw.macs.get(&ev.eth_dst).copied()
        };
        let Some(port) = dst_port else {
            sw.counters.other_packets += 1;
            self.forward_now(dpid, ev, OFPP13_FLOOD, out);
            self.run_due(now_ps, dpid, out);
            return;
        };
        if port == ev.in_port {
            sw.counters.hairpin_drops += 1;
            return;
        }
        let Some(ip) = ev.ipv4().filter(|_| port >= 1 && port <= ports) else {
            sw.counters.other_packets += 1;
            self.forward_now(dpid, ev, port, out);
            self.run_due(now_ps, dpid, out);
            return;
        };
        let tuple = Tuple {
            proto: ip.protocol.0,
            src: ip.src,
            dst: ip.dst,
            sport: ip.src_port,
            dport: ip.dst_port,
        };
        let flow = match sw.flows.get(&tuple) {
            Some(f) => *f,
            None if sw.tuples.len() < max_flows => {
                let f = FlowId(sw.tuples.len() as u32);
                sw.tuples.push(tuple);
                sw.flows.insert(tuple, f);
                f
            }
            None => {
                sw.counters.untracked_packets += 1;
                self.forward_now(dpid, ev, port, out);
                self.run_due(now_ps, dpid, out);
                return;
            }
        };
        if sw.held.len() >= held_max {
            sw.counters.held_full_drops += 1;
            self.run_due(now_ps, dpid, out);
            return;
        }
        let pkt = PacketRef(sw.next_pkt);
        sw.next_pkt += 1;
        sw.held.insert(
            pkt,
            Held {
                in_port: ev.in_port,
                data: ev.data.clone(),
            },
        );
        let input = LoggedInput::Packet {
            pkt,
            flow,
            src: u32::from(ip.src),
            port: (port - 1) as u16,
            bytes: u32::from(ev.total_len),
            is_tcp: ip.protocol == IpProtocol::TCP,
        };
        self.feed(now_ps, dpid, input);
        self.run_due(now_ps, dpid, out);
    }

    fn on_message(&mut self, now_ps: u64, dpid: u64, msg: &Message, out: &mut Vec<Reply>) {
        let Some(sw) = self.switches.get_mut(&dpid) else { return };
        match &msg.body {
            Body::MultipartReply(r) if sw.reading == Some(msg.xid) => {
                if let MultipartReplyBody::Flow(stats) = &r.body {
                    sw.parts.extend(
                        stats
                            .iter()
                            .filter(|s| s.cookie & COOKIE_TAG == COOKIE_FLOW)
                            .map(|s| (FlowId(s.cookie as u32), s.byte_count)),
                    );
                }
                if r.flags & FLAG_MORE == 0 {
                    sw.reading = None;
                    sw.counters.table_entries = sw.parts.len() as u64;
                    let parts = std::mem::take(&mut sw.parts);
                    self.feed(now_ps, dpid, LoggedInput::Counters(parts));
                }
            }
            Body::Error(_) => {
                if let Some(i) = sw.pending.iter().position(|(x, _)| *x == msg.xid) {
                    let (_, m) = sw.pending.remove(i).unwrap_or((0, RuleMatch::OutPort(0)));
                    sw.installed.remove(&m);
                    if matches!(m, RuleMatch::Src(_)) {
                        sw.attack_rules = sw.attack_rules.saturating_sub(1);
                    }
                    sw.failed.push(m);
                }
            }
            _ => {}
        }
        self.run_due(now_ps, dpid, out);
    }

    fn poll_timeout(&self) -> Option<u64> {
        self.switches
            .values()
            .flat_map(|s| [s.due.first_key_value().map(|(k, _)| k.0), s.wake])
            .flatten()
            .min()
    }

    fn on_timeout(&mut self, now_ps: u64, out: &mut Vec<Reply>) {
        for dpid in self.switches() {
            self.run_due(now_ps, dpid, out);
        }
    }
}

#[cfg(test)]
mod tests;
