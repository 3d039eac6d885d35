//! Scenario files: one TOML file describes a whole run (topology, switches, TCP, workloads,
//! outputs) with units written as people write them (`10Gbps`, `25us`, `256KiB`, `50%`).
//!
//! A file is validated completely before anything runs. Every problem is one
//! [`ScenarioError`] that names the file, the line and the key, e.g.
//! `incast.toml:14: switch.queue.limit_bytes: expected a size like 256KiB, got "12 parsecs"`.
//! Unknown keys are errors (a typo never silently falls back to a default).
//!
//! Values can be overridden without editing the file ([`Scenario::load`]'s `overrides`, the
//! CLI's `--set key=value`): `tcp.min_rto=1ms`, `flows[0].load=0.3` (or `flows.0.load`).
//! A value is read as TOML when it parses as TOML (`true`, `0.5`, `[1, 2]`) and as a string
//! otherwise (`1ms`, `dctcp`).
//!
//! The format, with every key and its default, is documented in `docs/sim/scenarios.md`;
//! `scenarios/` has examples.
//!
//! Workload generators are seeded from the scenario seed and the position of their `[[flows]]`
//! entry ([`workload_seed`]), so adding an entry does not change the flows of the others.

use crate::config::{
    BufferConfig, CcAlgo, CubicParams, DelayedAck, Ecmp, Forwarding, LinkConfig, Marking, QueueConfig, SwitchConfig,
    TcpConfig, TcpFlavor,
};
use crate::limits::{fmt_bytes, Limits, MemoryEstimate};
use crate::packet::NodeId;
use crate::tcp::MAX_STREAM_BYTES;
use crate::time::{Time, NS, US};
use crate::topology::{line_at, NodeKind, Shape, Topology, TopologySize};
use crate::units::{fmt_time, FractionArg, RateArg, SizeArg, TimeArg};
use crate::workload::{self, FlowSizeCdf, FlowSpec, PoissonLimit};
use rustc_hash::FxHashMap;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::fmt;
use std::mem::size_of;
use std::path::{Path, PathBuf};

/// A scenario file (or an override) that cannot be run, with where the problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file (or `--set` for an override).
    pub file: String,
    /// 1-based line, when the problem has one.
    pub line: Option<usize>,
    /// The key, as a path like `flows[0].load`, when the problem has one.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(k) = &self.key {
            write!(f, ": {k}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// Where a run writes what, beyond the always-written CSV and JSON files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputConfig {
    /// Ports to capture into `<node>-<port>.pcap` (frames as they leave the port).
    pub pcap: Vec<(NodeId, u16)>,
    /// Queue sampling period (0: no `queues.csv` rows).
    pub queue_sample_interval: Time,
    /// Ports sampled at every tick even when empty (default: every switch port, non-empty
    /// samples only).
    pub sample_ports: Vec<(NodeId, u16)>,
    /// Draw plots, each as PNG and SVG (`fct-cdf.png`/`.svg`, `queue.png`/`.svg`).
    pub plots: bool,
}

/// A validated scenario, ready to run ([`crate::run`]).
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Name (the file's `name`, or its stem); used for the default output folder.
    pub name: String,
    /// One line saying what the scenario is for (may be empty).
    pub description: String,
    /// The seed of every random draw.
    pub seed: u64,
    /// Simulated time to run.
    pub duration: Time,
    /// The network.
    pub topology: Topology,
    /// Every switch's configuration.
    pub switch: SwitchConfig,
    /// Every host's NIC egress queue.
    pub host_queue: QueueConfig,
    /// Every TCP endpoint's configuration.
    pub tcp: TcpConfig,
    /// The flows, generated at load time, numbered in start order.
    pub flows: Vec<FlowSpec>,
    /// Outputs.
    pub output: OutputConfig,
    /// Systems placed on switches (`[[system]]`), in file order.
    pub systems: Vec<system::PlacedSystem>,
    /// Links that fail during the run (`[[failures]]`), in file order.
    pub failures: Vec<LinkFailure>,
    /// Threads of a partitioned run (`threads`; [`crate::parallel`]); `None`: one simulation
    /// on one thread, ordering ties by when events were scheduled.
    pub threads: Option<u16>,
}

/// A link that fails during the run, and may come back (`[[failures]]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkFailure {
    /// One end of the link: node and port.
    pub at: (NodeId, u16),
    /// When it fails.
    pub down: Time,
    /// When it comes back, if it does.
    pub up: Option<Time>,
}

/// The seed given to the workload generator of `[[flows]]` entry `index`: a SplitMix64 mix of
/// the scenario seed and the index, so entries draw independent streams.
pub fn workload_seed(seed: u64, index: usize) -> u64 {
    let mut z = seed ^ (index as u64).wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

// ---------------------------------------------------------------------------------------------
// Key paths and the line each key is on.

#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

fn fmt_path(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

fn key(path: &[Seg], k: &str) -> Vec<Seg> {
    let mut p = path.to_vec();
    p.push(Seg::Key(k.to_string()));
    p
}

fn index(path: &[Seg], i: usize) -> Vec<Seg> {
    let mut p = path.to_vec();
    p.push(Seg::Index(i));
    p
}

/// Parses `a.b[2].c` or `a.b.2.c` into segments.
fn parse_path(text: &str) -> Option<Vec<Seg>> {
    let mut out = Vec::new();
    for part in text.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            match name.parse::<usize>() {
                Ok(i) => out.push(Seg::Index(i)),
                Err(_) => out.push(Seg::Key(name.to_string())),
            }
        } else if rest.is_empty() {
            return None;
        }
        while !rest.is_empty() {
            let close = rest.find(']')?;
            out.push(Seg::Index(rest.get(1..close)?.parse().ok()?));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return None;
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The line of every key path in the file, from a spanned parse.
fn key_lines(text: &str) -> FxHashMap<String, usize> {
    use toml::de::{DeTable, DeValue};
    // Byte offsets of the newlines, so that a key's line is a binary search (a file with many
    // keys is not read once per key).
    let newlines: Vec<usize> = text
        .bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'\n')
        .map(|(i, _)| i)
        .collect();
    let line = |offset: usize| 1 + newlines.partition_point(|&n| n < offset);
    fn walk(line: &dyn Fn(usize) -> usize, v: &DeValue<'_>, path: &mut Vec<Seg>, out: &mut FxHashMap<String, usize>) {
        match v {
            DeValue::Table(t) => {
                for (k, child) in t.iter() {
                    path.push(Seg::Key(k.get_ref().to_string()));
                    out.insert(fmt_path(path), line(k.span().start));
                    walk(line, child.get_ref(), path, out);
                    path.pop();
                }
            }
            DeValue::Array(a) => {
                for (i, child) in a.iter().enumerate() {
                    path.push(Seg::Index(i));
                    out.insert(fmt_path(path), line(child.span().start));
                    walk(line, child.get_ref(), path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = FxHashMap::default();
    if let Ok(root) = DeTable::parse(text) {
        walk(&line, &DeValue::Table(root.into_inner()), &mut Vec::new(), &mut out);
    }
    out
}

/// Turns problems at key paths into [`ScenarioError`]s.
struct Ctx {
    file: String,
    lines: FxHashMap<String, usize>,
    overridden: Vec<Vec<Seg>>,
    base_dir: PathBuf,
    limits: Limits,
}

impl Ctx {
    fn err(&self, path: &[Seg], message: impl Into<String>) -> ScenarioError {
        let key = (!path.is_empty()).then(|| fmt_path(path));
        if self.overridden.iter().any(|o| path.starts_with(o)) {
            return ScenarioError {
                file: "--set".into(),
                line: None,
                key,
                message: message.into(),
            };
        }
        let line = (0..=path.len())
            .rev()
            .find_map(|n| self.lines.get(&fmt_path(&path[..n])).copied());
        ScenarioError {
            file: self.file.clone(),
            line,
            key,
            message: message.into(),
        }
    }

    /// Deserializes `value` (found at `at`) into `T`, reporting the exact key of a problem.
    fn de<T: DeserializeOwned>(&self, value: toml::Value, at: &[Seg]) -> Result<T, ScenarioError> {
        serde_path_to_error::deserialize(value).map_err(|e| {
            let mut path = at.to_vec();
            for seg in e.path().iter() {
                match seg {
                    serde_path_to_error::Segment::Seq { index } => path.push(Seg::Index(*index)),
                    serde_path_to_error::Segment::Map { key } => path.push(Seg::Key(key.clone())),
                    serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => {}
                }
            }
            let message = e.into_inner().message().to_string();
            self.err(&path, message)
        })
    }

    /// A kind-tagged table: returns the kind and the table without it.
    fn kind_of(&self, value: toml::Value, at: &[Seg], kinds: &[&str]) -> Result<(String, toml::Value), ScenarioError> {
        let toml::Value::Table(mut t) = value else {
            return Err(self.err(
                at,
                format!("expected a table with `kind` = one of {}", kinds.join(", ")),
            ));
        };
        let kind = match t.remove("kind") {
            Some(toml::Value::String(s)) => s,
            Some(_) => return Err(self.err(&key(at, "kind"), "expected a string")),
            None => {
                return Err(self.err(at, format!("missing field `kind` (one of {})", kinds.join(", "))));
            }
        };
        if !kinds.contains(&kind.as_str()) {
            return Err(self.err(
                &key(at, "kind"),
                format!("unknown kind `{kind}`, expected one of {}", kinds.join(", ")),
            ));
        }
        Ok((kind, toml::Value::Table(t)))
    }

    fn resolve(&self, file: &str) -> PathBuf {
        let p = Path::new(file);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The raw file, as serde reads it.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Option<String>,
    description: Option<String>,
    seed: Option<u64>,
    duration: TimeArg,
    topology: toml::Value,
    #[serde(default)]
    switch: RawSwitch,
    host_queue: Option<RawQueue>,
    #[serde(default)]
    tcp: RawTcp,
    #[serde(default)]
    flows: Vec<toml::Value>,
    #[serde(default)]
    output: RawOutput,
    #[serde(default)]
    system: Vec<toml::Value>,
    #[serde(default)]
    failures: Vec<toml::Value>,
    threads: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFailure {
    link: (String, String),
    at: TimeArg,
    until: Option<TimeArg>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSwitch {
    queue: Option<RawQueue>,
    buffer: Option<toml::Value>,
    forwarding: Option<RawForwarding>,
    cut_through_header: Option<SizeArg>,
    pipeline_latency: Option<TimeArg>,
    ecmp: Option<RawEcmp>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawForwarding {
    StoreAndForward,
    CutThrough,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawEcmp {
    Flow,
    Destination,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawQueue {
    classes: Option<u8>,
    limit_packets: Option<u32>,
    class_limits_packets: Option<Vec<u32>>,
    limit_bytes: Option<SizeArg>,
    marking: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawThreshold {
    k: Option<SizeArg>,
    k_packets: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRed {
    min: Option<SizeArg>,
    max: Option<SizeArg>,
    min_packets: Option<u64>,
    max_packets: Option<u64>,
    max_p: FractionArg,
    weight: Option<f64>,
    ecn: Option<bool>,
    gentle: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStaticBuffer {
    size: SizeArg,
    per_queue: SizeArg,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDynamicBuffer {
    size: SizeArg,
    alpha: f64,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawCc {
    Newreno,
    Dctcp,
    Cubic,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawFlavor {
    Linux,
    Ns3,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTcp {
    cc: Option<RawCc>,
    dctcp_g: Option<f64>,
    cubic_beta: Option<f64>,
    cubic_c: Option<f64>,
    cubic_hystart: Option<bool>,
    cubic_fast_convergence: Option<bool>,
    mss: Option<SizeArg>,
    init_cwnd: Option<u32>,
    init_rto: Option<TimeArg>,
    min_rto: Option<TimeArg>,
    max_rto: Option<TimeArg>,
    syn_retries: Option<u32>,
    data_retries: Option<u32>,
    dupack_threshold: Option<u32>,
    delayed_ack: Option<toml::Value>,
    rcv_buf: Option<SizeArg>,
    sack: Option<bool>,
    timestamps: Option<bool>,
    ecn: Option<bool>,
    flavor: Option<RawFlavor>,
    lost_retransmit_detection: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawOutput {
    #[serde(default)]
    pcap: Vec<String>,
    queue_sample_interval: Option<TimeArg>,
    #[serde(default)]
    sample_ports: Vec<String>,
    plots: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    rate: RateArg,
    delay: TimeArg,
    framing: Option<FramingArg>,
    framing_overhead: Option<SizeArg>,
}

/// A link's layer-2 framing: `ethernet` (14-byte header, 24 bytes of preamble, FCS and gap) or
/// `ppp` (ns-3's point-to-point links: a 2-byte header and nothing else).
#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum FramingArg {
    Ethernet,
    Ppp,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStar {
    hosts: u32,
    link: RawLink,
    /// Per-host links that differ from `link` (e.g. a sender with a faster NIC).
    #[serde(default)]
    host_links: std::collections::BTreeMap<String, RawLink>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDumbbell {
    left: u32,
    right: u32,
    access: RawLink,
    bottleneck: RawLink,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLeafSpine {
    leaves: u32,
    spines: u32,
    hosts_per_leaf: u32,
    host_link: RawLink,
    fabric_link: RawLink,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFatTree {
    k: u32,
    host_link: RawLink,
    fabric_link: RawLink,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGraph {
    /// A graph file, relative to the scenario.
    file: Option<String>,
    /// Or the graph's nodes and links in the entry itself (a graph file's `[[node]]` and
    /// `[[link]]` tables as `[[topology.node]]` and `[[topology.link]]`).
    node: Option<toml::Value>,
    link: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPoisson {
    cdf: String,
    load: FractionArg,
    hosts: Option<toml::Value>,
    start: Option<TimeArg>,
    duration: Option<TimeArg>,
    count: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIncast {
    senders: toml::Value,
    receiver: String,
    bytes: SizeArg,
    repeats: Option<u32>,
    gap: Option<TimeArg>,
    start: Option<TimeArg>,
    jitter: Option<TimeArg>,
}

/// Who talks to whom: explicit `pairs`, or every host of `from` to the one host `to`.
struct RawPairs {
    pairs: Option<Vec<(String, String)>>,
    from: Option<toml::Value>,
    to: Option<String>,
}

macro_rules! pairs_of {
    ($r:expr) => {
        RawPairs {
            pairs: $r.pairs,
            from: $r.from,
            to: $r.to,
        }
    };
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBulk {
    pairs: Option<Vec<(String, String)>>,
    from: Option<toml::Value>,
    to: Option<String>,
    bytes: SizeArg,
    start: Option<TimeArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPermutation {
    hosts: Option<toml::Value>,
    bytes: SizeArg,
    start: Option<TimeArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequestResponse {
    pairs: Option<Vec<(String, String)>>,
    from: Option<toml::Value>,
    to: Option<String>,
    request: SizeArg,
    response: SizeArg,
    repeats: Option<u32>,
    gap: Option<TimeArg>,
    start: Option<TimeArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUdpCbr {
    pairs: Option<Vec<(String, String)>>,
    from: Option<toml::Value>,
    to: Option<String>,
    rate: RateArg,
    packet_size: SizeArg,
    start: Option<TimeArg>,
    duration: Option<TimeArg>,
    jitter: Option<FractionArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTransactions {
    pairs: Option<Vec<(String, String)>>,
    from: Option<toml::Value>,
    to: Option<String>,
    request: SizeArg,
    response: SizeArg,
    start: Option<TimeArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUdpOnOff {
    pairs: Option<Vec<(String, String)>>,
    from: Option<toml::Value>,
    to: Option<String>,
    rate: RateArg,
    packet_size: SizeArg,
    on: TimeArg,
    off: TimeArg,
    start: Option<TimeArg>,
    duration: Option<TimeArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUdpBurst {
    pairs: Option<Vec<(String, String)>>,
    from: Option<toml::Value>,
    to: Option<String>,
    packets: u64,
    packet_size: SizeArg,
    rate: RateArg,
    start: Option<TimeArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUdpPoisson {
    pairs: Option<Vec<(String, String)>>,
    from: Option<toml::Value>,
    to: Option<String>,
    rate: RateArg,
    /// One size, or `[smallest, largest]` (read by [`poisson_sizes`]).
    packet_size: toml::Value,
    start: Option<TimeArg>,
    duration: Option<TimeArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReplay {
    file: String,
    hosts: Option<toml::Value>,
    start: Option<TimeArg>,
    burst_rate: Option<RateArg>,
}

const TOPOLOGY_KINDS: &[&str] = &["star", "dumbbell", "leaf_spine", "fat_tree", "graph"];
const FLOW_KINDS: &[&str] = &[
    "poisson",
    "incast",
    "bulk",
    "permutation",
    "request_response",
    "transactions",
    "udp_cbr",
    "udp_onoff",
    "udp_burst",
    "udp_poisson",
    "replay",
];

// ---------------------------------------------------------------------------------------------
// Loading.

impl Scenario {
    /// Reads and validates the scenario file at `path`, applying `overrides` (`key`, `value`)
    /// first. Relative file names inside it (graph, CDF, replay trace) are taken relative to
    /// the scenario's folder. The run's memory estimate must fit the default limit
    /// ([`Limits::default`]: half of this machine's memory).
    pub fn load(path: &Path, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        Scenario::load_with(path, overrides, &Limits::default())
    }

    /// [`Scenario::load`] with explicit limits: a scenario whose run would need more memory
    /// than `limits.max_memory_bytes` ([`MemoryEstimate`], checked before anything of that
    /// size is allocated) is an error naming the key that asks for most of it.
    pub fn load_with(path: &Path, overrides: &[(String, String)], limits: &Limits) -> Result<Scenario, ScenarioError> {
        Scenario::load_with_systems(path, overrides, limits, &[])
    }

    /// [`Scenario::load_with`] for a program that places systems: `[[system]]` entries may name
    /// any of `systems` ([`system`]).
    pub fn load_with_systems(
        path: &Path,
        overrides: &[(String, String)],
        limits: &Limits,
        systems: &[&dyn system::SystemKind],
    ) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: path.display().to_string(),
            line: None,
            key: None,
            message: e.to_string(),
        })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Scenario::parse_with_systems(
            &text,
            &path.display().to_string(),
            &stem,
            &base,
            overrides,
            limits,
            systems,
        )
    }

    /// Validates scenario `text` (named `file_name` in errors; `default_name` is used when it
    /// has no `name`), applying `overrides` first; relative file names are resolved against
    /// `base_dir`. The default limits apply, as for [`Scenario::load`].
    pub fn parse(
        text: &str,
        file_name: &str,
        default_name: &str,
        base_dir: &Path,
        overrides: &[(String, String)],
    ) -> Result<Scenario, ScenarioError> {
        Scenario::parse_with(text, file_name, default_name, base_dir, overrides, &Limits::default())
    }

    /// [`Scenario::parse`] with explicit limits (see [`Scenario::load_with`]).
    pub fn parse_with(
        text: &str,
        file_name: &str,
        default_name: &str,
        base_dir: &Path,
        overrides: &[(String, String)],
        limits: &Limits,
    ) -> Result<Scenario, ScenarioError> {
        Scenario::parse_with_systems(text, file_name, default_name, base_dir, overrides, limits, &[])
    }

    /// [`Scenario::parse_with`] for a program that places systems (see
    /// [`Scenario::load_with_systems`]).
    pub fn parse_with_systems(
        text: &str,
        file_name: &str,
        default_name: &str,
        base_dir: &Path,
        overrides: &[(String, String)],
        limits: &Limits,
        systems: &[&dyn system::SystemKind],
    ) -> Result<Scenario, ScenarioError> {
        let mut ctx = Ctx {
            file: file_name.to_string(),
            lines: FxHashMap::default(),
            overridden: Vec::new(),
            base_dir: base_dir.to_path_buf(),
            limits: *limits,
        };
        let table: toml::Table = toml::from_str(text).map_err(|e| ScenarioError {
            file: file_name.to_string(),
            line: e.span().map(|s| line_at(text, s.start)),
            key: None,
            message: e.message().trim().to_string(),
        })?;
        ctx.lines = key_lines(text);
        let mut root = toml::Value::Table(table);
        for (k, v) in overrides {
            let path = parse_path(k).ok_or_else(|| ScenarioError {
                file: "--set".into(),
                line: None,
                key: Some(k.clone()),
                message: "not a key path like tcp.min_rto or flows[0].load".into(),
            })?;
            apply_override(&mut root, &path, v).map_err(|m| ScenarioError {
                file: "--set".into(),
                line: None,
                key: Some(k.clone()),
                message: m,
            })?;
            ctx.overridden.push(path);
        }
        if let Some(key) = graph_file_key(&root) {
            let base = Path::new(file_name)
                .file_name()
                .map_or(file_name.into(), |f| f.to_string_lossy());
            return Err(ctx.err(
                &[Seg::Key(key.into())],
                format!(
                    "a graph file ([[node]] and [[link]] tables), not a scenario: a scenario uses \
                     it as topology = {{ kind = \"graph\", file = \"{base}\" }}"
                ),
            ));
        }
        let raw: RawScenario = ctx.de(root, &[])?;
        build(&ctx, raw, default_name, systems)
    }

    /// What a run of this scenario needs ([`crate::limits`]), from its topology, flows and
    /// queue sampling.
    pub fn memory_estimate(&self) -> MemoryEstimate {
        let size = self.topology.size();
        let classes = self.switch.queue.classes.max(self.host_queue.classes);
        let mut est = MemoryEstimate::with_topology(&size, classes, self.topology.shape().is_some());
        est.extra_partitions = self.threads.map_or(0, |t| u64::from(t) - 1);
        let ports = match self.output.sample_ports.len() {
            0 => size.switch_ports,
            n => n as u64,
        };
        est.set_queue_samples(self.duration, self.output.queue_sample_interval, ports);
        est.add_flows(self.flows.len() as u64);
        est
    }
}

/// The first of a graph file's tables (`node`, `link`) at the top of a file that has no
/// `topology`: a graph file given where a scenario was expected.
fn graph_file_key(root: &toml::Value) -> Option<&'static str> {
    let t = root.as_table()?;
    if t.contains_key("topology") {
        return None;
    }
    ["node", "link"].into_iter().find(|k| t.contains_key(*k))
}

/// Which part of a scenario a memory estimate is blamed on.
enum Part<'a> {
    Topology,
    Samples,
    Flows(&'a [Seg]),
}

/// Refuses an estimate above the limit, naming the key to change: none when the limit is below
/// what any run needs, the topology when it does not fit by itself, else the larger of the
/// queue sampling and the `[[flows]]` entry `flows` being added.
fn check_memory(ctx: &Ctx, est: &MemoryEstimate, flows: Option<&[Seg]>) -> Result<(), ScenarioError> {
    let limit = ctx.limits.max_memory_bytes;
    if est.total() <= limit {
        return Ok(());
    }
    let network_alone = MemoryEstimate {
        network: est.network,
        routing: est.routing,
        ..MemoryEstimate::default()
    };
    if crate::limits::BASE_BYTES > limit {
        // Not the scenario's doing: any run needs this much.
        return Err(ctx.err(
            &[],
            format!(
                "the memory limit of {} is below the {} any run needs (the program, its output \
                 writers and plots): raise the limit (--max-memory)",
                fmt_bytes(limit),
                fmt_bytes(crate::limits::BASE_BYTES)
            ),
        ));
    }
    let part = match flows {
        _ if network_alone.total() > limit => Part::Topology,
        Some(at) if est.flows >= est.queue_samples => Part::Flows(at),
        _ => Part::Samples,
    };
    let (at, hint) = match part {
        Part::Topology => (vec![Seg::Key("topology".into())], "use a smaller topology"),
        Part::Samples => (
            vec![Seg::Key("output".into()), Seg::Key("queue_sample_interval".into())],
            "sample queues less often (output.queue_sample_interval) or fewer ports (output.sample_ports)",
        ),
        Part::Flows(at) => (at.to_vec(), "generate fewer flows"),
    };
    Err(ctx.err(
        &at,
        format!(
            "the run would need {est}, more than the memory limit of {}: {hint}, or raise the limit (--max-memory)",
            fmt_bytes(limit)
        ),
    ))
}

/// Refuses a TCP byte count above [`MAX_STREAM_BYTES`].
fn check_stream_bytes(ctx: &Ctx, at: &[Seg], bytes: u64) -> Result<(), ScenarioError> {
    if bytes > MAX_STREAM_BYTES {
        return Err(ctx.err(
            at,
            format!(
                "at most {MAX_STREAM_BYTES} bytes (4EiB, 2^62: the most one direction of a simulated TCP connection carries), got {bytes}"
            ),
        ));
    }
    Ok(())
}

fn apply_override(root: &mut toml::Value, path: &[Seg], value: &str) -> Result<(), String> {
    let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    let Some((last, parents)) = path.split_last() else {
        return Err("empty key".into());
    };
    let mut cur: &mut toml::Value = root;
    for (i, seg) in parents.iter().enumerate() {
        cur = match seg {
            Seg::Key(k) => {
                let toml::Value::Table(t) = cur else {
                    return Err(format!("`{}` is not a table", fmt_path(&path[..i])));
                };
                t.entry(k.clone())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            Seg::Index(n) => {
                let toml::Value::Array(a) = cur else {
                    return Err(format!("`{}` is not a list", fmt_path(&path[..i])));
                };
                let len = a.len();
                a.get_mut(*n)
                    .ok_or_else(|| format!("`{}` has {len} entries", fmt_path(&path[..i])))?
            }
        };
    }
    match (last, cur) {
        (Seg::Key(k), toml::Value::Table(t)) => {
            t.insert(k.clone(), parsed);
            Ok(())
        }
        (Seg::Index(n), toml::Value::Array(a)) if *n < a.len() => {
            a[*n] = parsed;
            Ok(())
        }
        _ => Err(format!("`{}` cannot be set", fmt_path(path))),
    }
}

/// The most threads a partitioned run may ask for.
pub const MAX_THREADS: i64 = 1024;

fn build(
    ctx: &Ctx,
    raw: RawScenario,
    default_name: &str,
    kinds: &[&dyn system::SystemKind],
) -> Result<Scenario, ScenarioError> {
    let duration = raw.duration.0;
    if duration == 0 {
        return Err(ctx.err(&[Seg::Key("duration".into())], "must be above 0"));
    }
    let seed = raw.seed.unwrap_or(1);
    let threads = match raw.threads {
        None => None,
        Some(t) if !(1..=MAX_THREADS).contains(&t) => {
            return Err(ctx.err(
                &[Seg::Key("threads".into())],
                format!("must be from 1 to {MAX_THREADS}, got {t}"),
            ));
        }
        Some(t) => Some(t as u16),
    };
    let out_at = [Seg::Key("output".into())];
    let queue_sample_interval = match raw.output.queue_sample_interval {
        None => (duration / 1000).max(US),
        Some(TimeArg(t)) if t > 0 && t < NS => {
            return Err(ctx.err(
                &key(&out_at, "queue_sample_interval"),
                format!("must be at least 1ns (or 0: no queue samples), got {}", fmt_time(t)),
            ));
        }
        Some(TimeArg(t)) => t,
    };
    // The memory estimate of the network and the queue samples, checked before the topology
    // is built. (Queue classes as written: a bad value is reported by build_queue below.)
    let classes = [&raw.switch.queue, &raw.host_queue]
        .iter()
        .filter_map(|q| q.as_ref().and_then(|q| q.classes))
        .max()
        .unwrap_or(1)
        .clamp(1, 8);
    let sample_ports = raw.output.sample_ports.len() as u64;
    let estimate = |size: &TopologySize, computed: bool| -> Result<MemoryEstimate, ScenarioError> {
        let mut est = MemoryEstimate::with_topology(size, classes, computed);
        est.extra_partitions = threads.map_or(0, |t| u64::from(t) - 1);
        let ports = if sample_ports > 0 {
            sample_ports
        } else {
            size.switch_ports
        };
        est.set_queue_samples(duration, queue_sample_interval, ports);
        check_memory(ctx, &est, None)?;
        Ok(est)
    };
    let (topology, mut est) = build_topology(ctx, raw.topology, &estimate)?;
    let switch = build_switch(ctx, raw.switch)?;
    let host_queue = match raw.host_queue {
        Some(q) => build_queue(
            ctx,
            q,
            &[Seg::Key("host_queue".into())],
            QueueConfig {
                limit_packets: 10_000,
                ..QueueConfig::default()
            },
        )?,
        None => QueueConfig {
            limit_packets: 10_000,
            ..QueueConfig::default()
        },
    };
    let tcp = build_tcp(ctx, raw.tcp)?;
    let systems = system::build_systems(ctx, raw.system, &topology, &switch, seed, kinds)?;
    let mut flows = Vec::new();
    for (i, v) in raw.flows.into_iter().enumerate() {
        let at = index(&[Seg::Key("flows".into())], i);
        let more = build_flows(ctx, v, &at, &topology, duration, workload_seed(seed, i), &mut est)?;
        if flows.is_empty() {
            flows = more;
        } else {
            flows.extend(more);
        }
    }
    if flows.len() > u32::MAX as usize {
        return Err(ctx.err(&[Seg::Key("flows".into())], "more than 2^32 flows"));
    }
    let flows = workload::finalize(flows);
    let failures = raw
        .failures
        .into_iter()
        .enumerate()
        .map(|(i, v)| build_failure(ctx, v, &index(&[Seg::Key("failures".into())], i), &topology, duration))
        .collect::<Result<Vec<_>, _>>()?;
    let ports = |list: &[String], k: &str| -> Result<Vec<(NodeId, u16)>, ScenarioError> {
        list.iter()
            .enumerate()
            .map(|(i, s)| port_spec(&topology, s).map_err(|m| ctx.err(&index(&key(&out_at, k), i), m)))
            .collect()
    };
    let output = OutputConfig {
        pcap: ports(&raw.output.pcap, "pcap")?,
        sample_ports: ports(&raw.output.sample_ports, "sample_ports")?,
        queue_sample_interval,
        plots: raw.output.plots.unwrap_or(true),
    };
    Ok(Scenario {
        name: raw.name.unwrap_or_else(|| default_name.to_string()),
        description: raw.description.unwrap_or_default(),
        seed,
        duration,
        topology,
        switch,
        host_queue,
        tcp,
        flows,
        output,
        systems,
        failures,
        threads,
    })
}

/// One `[[failures]]` entry: a link between two named nodes, when it fails, when it comes back.
fn build_failure(
    ctx: &Ctx,
    v: toml::Value,
    at: &[Seg],
    topo: &Topology,
    duration: Time,
) -> Result<LinkFailure, ScenarioError> {
    let r: RawFailure = ctx.de(v, at)?;
    let node = |i: usize, name: &str| {
        topo.find(name)
            .ok_or_else(|| ctx.err(&index(&key(at, "link"), i), format!("no node named `{name}`")))
    };
    let (a, b) = (node(0, &r.link.0)?, node(1, &r.link.1)?);
    let port = topo.ports(a).iter().position(|p| p.peer == b).ok_or_else(|| {
        ctx.err(
            &key(at, "link"),
            format!("no link between `{}` and `{}`", r.link.0, r.link.1),
        )
    })?;
    let down = r.at.0;
    if down >= duration {
        return Err(ctx.err(
            &key(at, "at"),
            format!(
                "{} is not before the end of the run ({})",
                fmt_time(down),
                fmt_time(duration)
            ),
        ));
    }
    let up = match r.until {
        Some(TimeArg(t)) if t <= down => {
            return Err(ctx.err(&key(at, "until"), format!("must be after `at` ({})", fmt_time(down))))
        }
        u => u.map(|t| t.0),
    };
    Ok(LinkFailure {
        at: (a, port as u16),
        down,
        up,
    })
}

/// `node:port` (or just `node`, port 0).
fn port_spec(topo: &Topology, spec: &str) -> Result<(NodeId, u16), String> {
    let (name, port) = match spec.split_once(':') {
        Some((n, p)) => (n, p.parse::<u16>().map_err(|_| format!("`{spec}`: bad port number"))?),
        None => (spec, 0),
    };
    let node = topo.find(name).ok_or_else(|| format!("no node named `{name}`"))?;
    if usize::from(port) >= topo.ports(node).len() {
        return Err(format!("`{name}` has {} ports, no port {port}", topo.ports(node).len()));
    }
    Ok((node, port))
}

fn link(l: RawLink) -> LinkConfig {
    let base = LinkConfig {
        rate_bps: l.rate.0,
        delay: l.delay.0,
        ..LinkConfig::default()
    };
    let base = match l.framing {
        Some(FramingArg::Ppp) => base.ppp(),
        Some(FramingArg::Ethernet) | None => base,
    };
    LinkConfig {
        framing_overhead: l
            .framing_overhead
            .map(|s| s.0.min(u64::from(u32::MAX)) as u32)
            .unwrap_or(base.framing_overhead),
        ..base
    }
}

/// Builds the topology, calling `estimate` with its size (and whether its routes are
/// computed) first: before building it for the built kinds, before its routes for a graph.
fn build_topology(
    ctx: &Ctx,
    value: toml::Value,
    estimate: &dyn Fn(&TopologySize, bool) -> Result<MemoryEstimate, ScenarioError>,
) -> Result<(Topology, MemoryEstimate), ScenarioError> {
    let at = [Seg::Key("topology".into())];
    let (kind, v) = ctx.kind_of(value, &at, TOPOLOGY_KINDS)?;
    let shaped = |shape: Shape| estimate(&shape.size(), true);
    let (topo, est) = match kind.as_str() {
        "star" => {
            let r: RawStar = ctx.de(v, &at)?;
            let est = shaped(Shape::Star { hosts: r.hosts })?;
            let mut topo = Topology::star(r.hosts, link(r.link)).map_err(|e| ctx.err(&at, e.message))?;
            for (name, l) in r.host_links {
                let h = host(ctx, &topo, &name, &key(&key(&at, "host_links"), &name))?;
                if let Some(p) = topo.ports(h).first().copied() {
                    topo.set_link_config(p.link, link(l));
                }
            }
            (Ok(topo), est)
        }
        "dumbbell" => {
            let r: RawDumbbell = ctx.de(v, &at)?;
            let est = shaped(Shape::Dumbbell {
                left: r.left,
                right: r.right,
            })?;
            (
                Topology::dumbbell(r.left, r.right, link(r.access), link(r.bottleneck)),
                est,
            )
        }
        "leaf_spine" => {
            let r: RawLeafSpine = ctx.de(v, &at)?;
            let est = shaped(Shape::LeafSpine {
                leaves: r.leaves,
                spines: r.spines,
                hosts_per_leaf: r.hosts_per_leaf,
            })?;
            let topo = Topology::leaf_spine(
                r.leaves,
                r.spines,
                r.hosts_per_leaf,
                link(r.host_link),
                link(r.fabric_link),
            );
            (topo, est)
        }
        "fat_tree" => {
            let r: RawFatTree = ctx.de(v, &at)?;
            let est = shaped(Shape::FatTree { k: r.k })?;
            (Topology::fat_tree(r.k, link(r.host_link), link(r.fabric_link)), est)
        }
        _ => {
            let r: RawGraph = ctx.de(v, &at)?;
            let topo = match (r.file, r.node, r.link) {
                (Some(file), None, None) => {
                    let path = ctx.resolve(&file);
                    let text = std::fs::read_to_string(&path)
                        .map_err(|e| ctx.err(&key(&at, "file"), format!("{}: {e}", path.display())))?;
                    Topology::from_graph_file(&text, &path.display().to_string())
                        .map_err(|e| ctx.err(&key(&at, "file"), e.to_string()))?
                }
                (Some(_), _, _) => {
                    return Err(ctx.err(&at, "give the graph as `file` or as `node` and `link` tables, not both"))
                }
                (None, node, link) => {
                    // The same reader as a file's, on the entry's own tables; its messages
                    // name the node or link, the line is the entry's.
                    let mut g = toml::Table::new();
                    g.extend(node.map(|n| ("node".to_string(), n)));
                    g.extend(link.map(|l| ("link".to_string(), l)));
                    let text = toml::to_string(&g).map_err(|e| ctx.err(&at, e.to_string()))?;
                    Topology::from_graph_file(&text, "").map_err(|e| ctx.err(&at, e.message))?
                }
            };
            let est = estimate(&topo.size(), false)?;
            return Ok((topo, est));
        }
    };
    let topo = topo.map_err(|e| ctx.err(&at, e.message))?;
    if topo.links().iter().any(|l| l.cfg.rate_bps == 0) {
        return Err(ctx.err(&at, "a link rate must be above 0"));
    }
    Ok((topo, est))
}

fn build_queue(ctx: &Ctx, q: RawQueue, at: &[Seg], base: QueueConfig) -> Result<QueueConfig, ScenarioError> {
    let classes = q.classes.unwrap_or(base.classes);
    if !(1..=8).contains(&classes) {
        return Err(ctx.err(&key(at, "classes"), format!("must be 1 to 8, got {classes}")));
    }
    let marking = match q.marking {
        None => base.marking,
        Some(toml::Value::String(s)) if s == "none" => Marking::None,
        Some(v) => {
            let mat = key(at, "marking");
            let (kind, v) = ctx.kind_of(v, &mat, &["none", "threshold", "red"])?;
            match kind.as_str() {
                "threshold" => {
                    let r: RawThreshold = ctx.de(v, &mat)?;
                    match (r.k, r.k_packets) {
                        (Some(k), None) => Marking::Threshold { k_bytes: k.0 },
                        (None, Some(k)) => Marking::ThresholdPackets { k_packets: k },
                        _ => return Err(ctx.err(&mat, "give exactly one of `k` (a size) and `k_packets`")),
                    }
                }
                "red" => {
                    let r: RawRed = ctx.de(v, &mat)?;
                    let (min, max, packets) = match (r.min, r.max, r.min_packets, r.max_packets) {
                        (Some(a), Some(b), None, None) => (a.0, b.0, false),
                        (None, None, Some(a), Some(b)) => (a, b, true),
                        _ => {
                            return Err(ctx.err(&mat, "give `min` and `max` (sizes) or `min_packets` and `max_packets`"))
                        }
                    };
                    if min >= max {
                        return Err(ctx.err(&key(&mat, "max"), "must be above min"));
                    }
                    let weight = r.weight.unwrap_or(0.002);
                    if !(weight > 0.0 && weight <= 1.0) {
                        return Err(ctx.err(&key(&mat, "weight"), "must be in (0, 1]"));
                    }
                    if r.max_p.0 > 1.0 {
                        return Err(ctx.err(&key(&mat, "max_p"), "must be at most 1"));
                    }
                    Marking::Red {
                        min_bytes: min,
                        max_bytes: max,
                        max_p: r.max_p.0,
                        weight,
                        ecn: r.ecn.unwrap_or(true),
                        gentle: r.gentle.unwrap_or(false),
                        packets,
                    }
                }
                _ => {
                    let _: toml::Table = ctx.de(v, &mat)?;
                    Marking::None
                }
            }
        }
    };
    let mut class_limit_packets = base.class_limit_packets;
    if let Some(list) = q.class_limits_packets {
        if list.len() > usize::from(classes) {
            return Err(ctx.err(
                &key(at, "class_limits_packets"),
                format!("{} limits for {classes} classes", list.len()),
            ));
        }
        class_limit_packets = [None; 8];
        for (slot, v) in class_limit_packets.iter_mut().zip(list) {
            *slot = Some(v);
        }
    }
    Ok(QueueConfig {
        classes,
        limit_packets: q.limit_packets.unwrap_or(base.limit_packets),
        class_limit_packets,
        limit_bytes: q.limit_bytes.map(|s| s.0).unwrap_or(base.limit_bytes),
        marking,
    })
}

fn build_switch(ctx: &Ctx, s: RawSwitch) -> Result<SwitchConfig, ScenarioError> {
    let at = [Seg::Key("switch".into())];
    let d = SwitchConfig::default();
    let queue = match s.queue {
        Some(q) => build_queue(ctx, q, &key(&at, "queue"), d.queue)?,
        None => d.queue,
    };
    let buffer = match s.buffer {
        None => d.buffer,
        Some(toml::Value::String(s)) if s == "dedicated" => BufferConfig::Dedicated,
        Some(v) => {
            let bat = key(&at, "buffer");
            let (kind, v) = ctx.kind_of(v, &bat, &["dedicated", "static", "dynamic"])?;
            match kind.as_str() {
                "static" => {
                    let r: RawStaticBuffer = ctx.de(v, &bat)?;
                    BufferConfig::Static {
                        bytes: r.size.0,
                        static_bytes: r.per_queue.0,
                    }
                }
                "dynamic" => {
                    let r: RawDynamicBuffer = ctx.de(v, &bat)?;
                    if !(r.alpha.is_finite() && r.alpha > 0.0) {
                        return Err(ctx.err(&key(&bat, "alpha"), "must be above 0"));
                    }
                    BufferConfig::Dynamic {
                        bytes: r.size.0,
                        alpha: r.alpha,
                    }
                }
                _ => {
                    let _: toml::Table = ctx.de(v, &bat)?;
                    BufferConfig::Dedicated
                }
            }
        }
    };
    let forwarding = match s.forwarding.unwrap_or(RawForwarding::StoreAndForward) {
        RawForwarding::StoreAndForward => {
            if s.cut_through_header.is_some() {
                return Err(ctx.err(&key(&at, "cut_through_header"), "needs forwarding = \"cut_through\""));
            }
            Forwarding::StoreAndForward
        }
        RawForwarding::CutThrough => Forwarding::CutThrough {
            header_bytes: s.cut_through_header.map(|h| h.0.clamp(1, 9216) as u32).unwrap_or(64),
        },
    };
    Ok(SwitchConfig {
        queue,
        buffer,
        forwarding,
        pipeline_latency: s.pipeline_latency.map(|t| t.0).unwrap_or(d.pipeline_latency),
        ecmp: match s.ecmp {
            None => d.ecmp,
            Some(RawEcmp::Flow) => Ecmp::Flow,
            Some(RawEcmp::Destination) => Ecmp::Destination,
        },
    })
}

fn build_tcp(ctx: &Ctx, t: RawTcp) -> Result<TcpConfig, ScenarioError> {
    let at = [Seg::Key("tcp".into())];
    let d = TcpConfig::default();
    let cc = t.cc.unwrap_or(RawCc::Newreno);
    if t.dctcp_g.is_some() && !matches!(cc, RawCc::Dctcp) {
        return Err(ctx.err(&key(&at, "dctcp_g"), "needs cc = \"dctcp\""));
    }
    let cubic_keys = [
        ("cubic_beta", t.cubic_beta.is_some()),
        ("cubic_c", t.cubic_c.is_some()),
        ("cubic_hystart", t.cubic_hystart.is_some()),
        ("cubic_fast_convergence", t.cubic_fast_convergence.is_some()),
    ];
    if let Some((k, _)) = cubic_keys.iter().find(|(_, set)| *set && !matches!(cc, RawCc::Cubic)) {
        return Err(ctx.err(&key(&at, k), "needs cc = \"cubic\""));
    }
    let cc = match cc {
        RawCc::Newreno => CcAlgo::NewReno,
        RawCc::Dctcp => {
            let g = t.dctcp_g.unwrap_or(1.0 / 16.0);
            if !(g > 0.0 && g <= 1.0) {
                return Err(ctx.err(&key(&at, "dctcp_g"), "must be in (0, 1]"));
            }
            CcAlgo::Dctcp { g }
        }
        RawCc::Cubic => {
            let d = CubicParams::default();
            let beta = t.cubic_beta.unwrap_or(d.beta);
            if !(beta > 0.0 && beta < 1.0) {
                return Err(ctx.err(&key(&at, "cubic_beta"), "must be in (0, 1)"));
            }
            let c = t.cubic_c.unwrap_or(d.c);
            if !(c > 0.0 && c <= 100.0) {
                return Err(ctx.err(&key(&at, "cubic_c"), "must be in (0, 100]"));
            }
            CcAlgo::Cubic(CubicParams {
                beta,
                c,
                hystart: t.cubic_hystart.unwrap_or(d.hystart),
                fast_convergence: t.cubic_fast_convergence.unwrap_or(d.fast_convergence),
            })
        }
    };
    let mss = t.mss.map(|m| m.0).unwrap_or(u64::from(d.mss));
    if !(64..=9000).contains(&mss) {
        return Err(ctx.err(&key(&at, "mss"), format!("must be 64 to 9000 bytes, got {mss}")));
    }
    let delayed_ack = match t.delayed_ack {
        None => d.delayed_ack,
        Some(toml::Value::Boolean(false)) => DelayedAck::Off,
        Some(toml::Value::String(s)) if s == "off" => DelayedAck::Off,
        Some(v) => {
            let timeout: TimeArg = ctx.de(v, &key(&at, "delayed_ack")).map_err(|mut e| {
                e.message = format!("expected \"off\" or a timeout like 40ms ({})", e.message);
                e
            })?;
            if timeout.0 == 0 {
                return Err(ctx.err(&key(&at, "delayed_ack"), "a timeout must be above 0 (or \"off\")"));
            }
            DelayedAck::On { timeout: timeout.0 }
        }
    };
    let min_rto = t.min_rto.map(|x| x.0).unwrap_or(d.min_rto);
    let max_rto = t.max_rto.map(|x| x.0).unwrap_or(d.max_rto);
    if min_rto == 0 {
        return Err(ctx.err(&key(&at, "min_rto"), "must be above 0"));
    }
    if max_rto < min_rto {
        return Err(ctx.err(&key(&at, "max_rto"), "must be at least min_rto"));
    }
    let init_rto = t.init_rto.map(|x| x.0).unwrap_or(d.init_rto);
    if init_rto == 0 {
        return Err(ctx.err(&key(&at, "init_rto"), "must be above 0"));
    }
    let init_cwnd = t.init_cwnd.unwrap_or(d.init_cwnd);
    if init_cwnd == 0 {
        return Err(ctx.err(&key(&at, "init_cwnd"), "must be at least 1"));
    }
    let dupack_threshold = t.dupack_threshold.unwrap_or(d.dupack_threshold);
    if dupack_threshold == 0 {
        return Err(ctx.err(&key(&at, "dupack_threshold"), "must be at least 1"));
    }
    let rcv_buf = t.rcv_buf.map(|s| s.0).unwrap_or(u64::from(d.rcv_buf));
    if rcv_buf < mss || rcv_buf > (1 << 30) {
        return Err(ctx.err(&key(&at, "rcv_buf"), "must be between one MSS and 1GiB"));
    }
    let is_dctcp = matches!(cc, CcAlgo::Dctcp { .. });
    if is_dctcp && t.ecn == Some(false) {
        return Err(ctx.err(&key(&at, "ecn"), "DCTCP needs ECN"));
    }
    // `lost_retransmit_detection = false` is the older spelling of `flavor = "ns3"`.
    let flavor = match (t.flavor, t.lost_retransmit_detection) {
        (Some(RawFlavor::Linux), Some(false)) | (Some(RawFlavor::Ns3), Some(true)) => {
            return Err(ctx.err(
                &key(&at, "lost_retransmit_detection"),
                "contradicts `flavor`; give only `flavor` (\"linux\" detects lost retransmissions, \"ns3\" does not)",
            ));
        }
        (Some(RawFlavor::Linux), _) | (None, Some(true)) => TcpFlavor::Linux,
        (Some(RawFlavor::Ns3), _) | (None, Some(false)) => TcpFlavor::Ns3,
        (None, None) => d.flavor,
    };
    if flavor == TcpFlavor::Ns3 && rcv_buf < 65_536 {
        // The like-for-like sender fills its buffer 64 KiB at a time, as the validation's
        // ns-3 program does (a write larger than the buffer never fits): below that it, and
        // ns-3, would send nothing at all.
        return Err(ctx.err(
            &key(&at, "rcv_buf"),
            "with flavor = \"ns3\" must be at least 64KiB (the sender writes 64 KiB at a time, as the ns-3 program does)",
        ));
    }
    Ok(TcpConfig {
        mss: mss as u32,
        init_cwnd,
        init_rto,
        min_rto,
        max_rto,
        syn_retries: t.syn_retries.unwrap_or(d.syn_retries),
        data_retries: t.data_retries.unwrap_or(d.data_retries),
        dupack_threshold,
        delayed_ack,
        rcv_buf: rcv_buf as u32,
        sack: t.sack.unwrap_or(d.sack),
        timestamps: t.timestamps.unwrap_or(d.timestamps),
        cc,
        ecn: t.ecn.unwrap_or(d.ecn) || is_dctcp,
        flavor,
    })
}

/// A host list: `"all"`, or a list of names and inclusive ranges like `"h1..h16"`.
fn host_set(ctx: &Ctx, topo: &Topology, v: Option<toml::Value>, at: &[Seg]) -> Result<Vec<NodeId>, ScenarioError> {
    node_set(ctx, topo, v, at, NodeKind::Host)
}

/// A list of node names and ranges like `h1..h16` (or `"all"`, or nothing: all) of one kind.
fn node_set(
    ctx: &Ctx,
    topo: &Topology,
    v: Option<toml::Value>,
    at: &[Seg],
    kind: NodeKind,
) -> Result<Vec<NodeId>, ScenarioError> {
    let (all, noun, nouns, example) = match kind {
        NodeKind::Host => (topo.hosts(), "host", "hosts", "h1..h16"),
        NodeKind::Switch => (topo.switches(), "switch", "switches", "edge0..edge7"),
    };
    let one = |name: &str, at: &[Seg]| match kind {
        NodeKind::Host => host(ctx, topo, name, at),
        NodeKind::Switch => switch(ctx, topo, name, at),
    };
    let v = match v {
        None => return Ok(all.to_vec()),
        Some(v) => v,
    };
    let items: Vec<String> = match v {
        toml::Value::String(s) if s == "all" => return Ok(all.to_vec()),
        toml::Value::String(s) => vec![s],
        other => ctx.de::<Vec<String>>(other, at).map_err(|mut e| {
            e.message = format!(
                "expected \"all\" or a list of {noun} names and ranges like \"{example}\" ({})",
                e.message
            );
            e
        })?,
    };
    // A list of ranges can name nodes again and again: its length (a range yields at most
    // every node once before it names one that does not exist) is bounded by the memory limit
    // before the list is made.
    let count = all.len() as u64;
    let len = items
        .iter()
        .map(
            |item| match item.split_once("..").map(|(a, b)| (split_name(a).1, split_name(b).1)) {
                Some((Some(na), Some(nb))) if na <= nb => (u64::from(nb - na) + 1).min(count),
                _ => 1,
            },
        )
        .fold(0u64, u64::saturating_add);
    if len.saturating_mul(size_of::<NodeId>() as u64) > ctx.limits.max_memory_bytes {
        return Err(ctx.err(
            at,
            format!(
                "the {noun} list would have {len} entries, more than the memory limit of {} allows",
                fmt_bytes(ctx.limits.max_memory_bytes)
            ),
        ));
    }
    let mut out = Vec::with_capacity(len as usize);
    for (i, item) in items.iter().enumerate() {
        let iat = index(at, i);
        if let Some((a, b)) = item.split_once("..") {
            let (pa, na) = split_name(a);
            let (pb, nb) = split_name(b);
            match (na, nb) {
                (Some(na), Some(nb)) if pa == pb && na <= nb => {
                    for n in na..=nb {
                        out.push(one(&format!("{pa}{n}"), &iat)?);
                    }
                }
                _ => {
                    return Err(ctx.err(&iat, format!("`{item}` is not a range like {example}")));
                }
            }
        } else {
            out.push(one(item, &iat)?);
        }
    }
    if out.is_empty() {
        return Err(ctx.err(at, format!("no {nouns}")));
    }
    Ok(out)
}

/// `h12` -> (`h`, Some(12)).
fn split_name(s: &str) -> (&str, Option<u32>) {
    let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (p, n) = s.split_at(s.len() - digits);
    (p, n.parse().ok())
}

fn host(ctx: &Ctx, topo: &Topology, name: &str, at: &[Seg]) -> Result<NodeId, ScenarioError> {
    match topo.find(name) {
        Some(id) if topo.is_host(id) => Ok(id),
        Some(_) => Err(ctx.err(at, format!("`{name}` is a switch, not a host"))),
        None => Err(ctx.err(
            at,
            format!(
                "no host named `{name}` (hosts are h0..h{})",
                topo.hosts().len().saturating_sub(1)
            ),
        )),
    }
}

fn switch(ctx: &Ctx, topo: &Topology, name: &str, at: &[Seg]) -> Result<NodeId, ScenarioError> {
    match topo.find(name) {
        Some(id) if !topo.is_host(id) => Ok(id),
        Some(_) => Err(ctx.err(at, format!("`{name}` is a host, not a switch"))),
        None => Err(ctx.err(
            at,
            format!("no switch named `{name}` (`tandem sim check` lists the switches)"),
        )),
    }
}

fn pairs(ctx: &Ctx, topo: &Topology, who: RawPairs, at: &[Seg]) -> Result<Vec<(NodeId, NodeId)>, ScenarioError> {
    match (who.pairs, who.from, who.to) {
        (Some(p), None, None) => p
            .iter()
            .enumerate()
            .map(|(i, (a, b))| {
                let pat = index(&key(at, "pairs"), i);
                let pair = (host(ctx, topo, a, &pat)?, host(ctx, topo, b, &pat)?);
                if pair.0 == pair.1 {
                    return Err(ctx.err(&pat, format!("a flow from `{a}` to itself")));
                }
                Ok(pair)
            })
            .collect(),
        (None, Some(from), Some(to)) => {
            let dst = host(ctx, topo, &to, &key(at, "to"))?;
            let src = host_set(ctx, topo, Some(from), &key(at, "from"))?;
            if src.contains(&dst) {
                return Err(ctx.err(&key(at, "from"), format!("includes the destination `{to}`")));
            }
            Ok(src.into_iter().map(|s| (s, dst)).collect())
        }
        _ => Err(ctx.err(at, "give either `pairs` or both `from` and `to`")),
    }
}

/// The `packet_size` of a `udp_poisson` entry at `at`: one size (every datagram that size) or
/// `[smallest, largest]`, each at least [`workload::UDP_MIN_PACKET_BYTES`].
fn poisson_sizes(ctx: &Ctx, v: toml::Value, at: &[Seg]) -> Result<(u32, u32), ScenarioError> {
    let min = workload::UDP_MIN_PACKET_BYTES;
    let one = |v: toml::Value, at: &[Seg]| -> Result<u32, ScenarioError> {
        let s: SizeArg = ctx.de(v, at)?;
        u32::try_from(s.0).ok().filter(|&b| b >= min).ok_or_else(|| {
            ctx.err(
                at,
                format!(
                    "must be {min} bytes (Ethernet, IPv4 and UDP headers) to 4GiB, got {}",
                    s.0
                ),
            )
        })
    };
    match v {
        toml::Value::Array(a) => {
            let [lo, hi]: [toml::Value; 2] = a.try_into().map_err(|a: Vec<toml::Value>| {
                ctx.err(
                    at,
                    format!(
                        "expected one size or two, `[smallest, largest]`, got {} values",
                        a.len()
                    ),
                )
            })?;
            let (lo, hi) = (one(lo, &index(at, 0))?, one(hi, &index(at, 1))?);
            if lo > hi {
                return Err(ctx.err(
                    at,
                    format!("the smallest size ({lo} bytes) is above the largest ({hi})"),
                ));
            }
            Ok((lo, hi))
        }
        v => one(v, at).map(|s| (s, s)),
    }
}

fn host_rate(topo: &Topology, h: NodeId) -> u64 {
    topo.host_link(h).map(|l| l.cfg.rate_bps).unwrap_or(0)
}

fn build_flows(
    ctx: &Ctx,
    v: toml::Value,
    at: &[Seg],
    topo: &Topology,
    duration: Time,
    seed: u64,
    est: &mut MemoryEstimate,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let (kind, v) = ctx.kind_of(v, at, FLOW_KINDS)?;
    // Counts this entry's flows into the estimate before they are generated.
    let mut reserve = |count: u64| {
        est.add_flows(count);
        check_memory(ctx, est, Some(at))
    };
    let start = |s: Option<TimeArg>| s.map(|t| t.0).unwrap_or(0);
    let rest = |s: Time, d: Option<TimeArg>| d.map(|t| t.0).unwrap_or(duration.saturating_sub(s));
    let werr = |e: workload::WorkloadError| ctx.err(at, e.to_string());
    let size32 = |s: SizeArg, k: &str| -> Result<u32, ScenarioError> {
        u32::try_from(s.0)
            .ok()
            .filter(|&b| b > 0)
            .ok_or_else(|| ctx.err(&key(at, k), "must be 1 byte to 4GiB"))
    };
    match kind.as_str() {
        "poisson" => {
            let r: RawPoisson = ctx.de(v, at)?;
            let cdf = match FlowSizeCdf::builtin(&r.cdf) {
                Some(c) => c,
                None => {
                    let path = ctx.resolve(&r.cdf);
                    FlowSizeCdf::load(&path).map_err(|e| {
                        ctx.err(
                            &key(at, "cdf"),
                            format!("not a built-in CDF (websearch, datamining, hadoop) nor a readable file: {e}"),
                        )
                    })?
                }
            };
            let largest = cdf.points().last().map_or(0, |p| p.0);
            if largest > MAX_STREAM_BYTES {
                return Err(ctx.err(
                    &key(at, "cdf"),
                    format!("flow sizes must be at most {MAX_STREAM_BYTES} bytes (4EiB, 2^62: the most one direction of a simulated TCP connection carries), the CDF goes up to {largest}"),
                ));
            }
            let hosts = host_set(ctx, topo, r.hosts, &key(at, "hosts"))?;
            let s = start(r.start);
            let limit = match (r.count, r.duration) {
                (Some(_), Some(_)) => return Err(ctx.err(at, "give `count` or `duration`, not both")),
                (Some(n), None) => PoissonLimit::Flows(n),
                (None, d) => PoissonLimit::Duration(rest(s, d)),
            };
            let rate = host_rate(topo, hosts[0]);
            if let Some(n) = workload::poisson_capacity(&cdf, hosts.len(), r.load.0, rate, limit) {
                reserve(n)?;
            }
            workload::poisson(&cdf, &hosts, r.load.0, rate, s, limit, seed).map_err(werr)
        }
        "incast" => {
            let r: RawIncast = ctx.de(v, at)?;
            check_stream_bytes(ctx, &key(at, "bytes"), r.bytes.0)?;
            let senders = host_set(ctx, topo, Some(r.senders), &key(at, "senders"))?;
            let receiver = host(ctx, topo, &r.receiver, &key(at, "receiver"))?;
            reserve((senders.len() as u64).saturating_mul(u64::from(r.repeats.unwrap_or(1))))?;
            let mut flows = workload::incast(
                &senders,
                receiver,
                r.bytes.0,
                start(r.start),
                r.repeats.unwrap_or(1),
                r.gap.map(|g| g.0).unwrap_or(0),
            )
            .map_err(werr)?;
            workload::jitter_starts(&mut flows, r.jitter.map_or(0, |j| j.0), seed);
            Ok(flows)
        }
        "bulk" => {
            let r: RawBulk = ctx.de(v, at)?;
            check_stream_bytes(ctx, &key(at, "bytes"), r.bytes.0)?;
            let p = pairs(ctx, topo, pairs_of!(r), at)?;
            reserve(p.len() as u64)?;
            workload::bulk(&p, r.bytes.0, start(r.start)).map_err(werr)
        }
        "permutation" => {
            let r: RawPermutation = ctx.de(v, at)?;
            check_stream_bytes(ctx, &key(at, "bytes"), r.bytes.0)?;
            let hosts = host_set(ctx, topo, r.hosts, &key(at, "hosts"))?;
            reserve(hosts.len() as u64)?;
            workload::permutation(&hosts, r.bytes.0, start(r.start), seed).map_err(werr)
        }
        "request_response" => {
            let r: RawRequestResponse = ctx.de(v, at)?;
            check_stream_bytes(ctx, &key(at, "request"), r.request.0)?;
            check_stream_bytes(ctx, &key(at, "response"), r.response.0)?;
            let p = pairs(ctx, topo, pairs_of!(r), at)?;
            reserve((p.len() as u64).saturating_mul(u64::from(r.repeats.unwrap_or(1))))?;
            workload::request_response(
                &p,
                r.request.0,
                r.response.0,
                start(r.start),
                r.repeats.unwrap_or(1),
                r.gap.map(|g| g.0).unwrap_or(0),
            )
            .map_err(werr)
        }
        "transactions" => {
            let r: RawTransactions = ctx.de(v, at)?;
            check_stream_bytes(ctx, &key(at, "request"), r.request.0)?;
            check_stream_bytes(ctx, &key(at, "response"), r.response.0)?;
            let p = pairs(ctx, topo, pairs_of!(r), at)?;
            reserve(p.len() as u64)?;
            workload::transactions(&p, r.request.0, r.response.0, start(r.start)).map_err(werr)
        }
        "udp_cbr" => {
            let r: RawUdpCbr = ctx.de(v, at)?;
            let jitter = match r.jitter {
                None => 0,
                Some(j) if j.0 < 1.0 => (j.0 * 1000.0).round() as u16,
                Some(_) => return Err(ctx.err(&key(at, "jitter"), "must be below 1 (a fraction of the interval)")),
            };
            let p = pairs(ctx, topo, pairs_of!(r), at)?;
            reserve(p.len() as u64)?;
            let s = start(r.start);
            workload::udp_cbr(
                &p,
                r.rate.0,
                size32(r.packet_size, "packet_size")?,
                s,
                rest(s, r.duration),
            )
            .and_then(|f| workload::with_jitter(f, jitter))
            .map_err(werr)
        }
        "udp_onoff" => {
            let r: RawUdpOnOff = ctx.de(v, at)?;
            let p = pairs(ctx, topo, pairs_of!(r), at)?;
            reserve(p.len() as u64)?;
            let s = start(r.start);
            workload::udp_onoff(
                &p,
                r.rate.0,
                size32(r.packet_size, "packet_size")?,
                r.on.0,
                r.off.0,
                s,
                rest(s, r.duration),
            )
            .map_err(werr)
        }
        "udp_burst" => {
            let r: RawUdpBurst = ctx.de(v, at)?;
            let p = pairs(ctx, topo, pairs_of!(r), at)?;
            reserve(p.len() as u64)?;
            workload::udp_burst(
                &p,
                r.packets,
                size32(r.packet_size, "packet_size")?,
                r.rate.0,
                start(r.start),
            )
            .map_err(werr)
        }
        "udp_poisson" => {
            let r: RawUdpPoisson = ctx.de(v, at)?;
            if r.rate.0 == 0 {
                return Err(ctx.err(&key(at, "rate"), "must be above 0"));
            }
            let (min, max) = poisson_sizes(ctx, r.packet_size, &key(at, "packet_size"))?;
            let s = start(r.start);
            let d = rest(s, r.duration);
            if d == 0 {
                let k = if r.duration.is_some() { "duration" } else { "start" };
                return Err(ctx.err(
                    &key(at, k),
                    "the source would run for no time (duration 0, or a start at the end of the run)",
                ));
            }
            let p = pairs(ctx, topo, pairs_of!(r), at)?;
            reserve(p.len() as u64)?;
            workload::udp_poisson(&p, r.rate.0, min, max, s, d).map_err(werr)
        }
        _ => {
            let r: RawReplay = ctx.de(v, at)?;
            let hosts = host_set(ctx, topo, r.hosts, &key(at, "hosts"))?;
            let path = ctx.resolve(&r.file);
            let f = std::fs::File::open(&path)
                .map_err(|e| ctx.err(&key(at, "file"), format!("{}: {e}", path.display())))?;
            let records = tandem_wire::flow::read_csv(std::io::BufReader::new(f))
                .map_err(|e| ctx.err(&key(at, "file"), format!("{}: {e}", path.display())))?;
            let rate = r.burst_rate.map(|b| b.0).unwrap_or_else(|| host_rate(topo, hosts[0]));
            reserve(records.len() as u64)?;
            Ok(workload::replay(&records, &hosts, start(r.start), rate)
                .map_err(|e| ctx.err(&key(at, "file"), format!("{}: {e}", path.display())))?
                .flows)
        }
    }
}

pub mod system;

#[cfg(test)]
pub(crate) mod tests;
