//! Workloads: the flows a run starts, as [`FlowSpec`]s, and the generators that make them.
//!
//! Every generator is deterministic: the random ones take a `u64` seed and draw from
//! [`rand_pcg::Pcg64`] seeded with it, in a fixed order, so a seed gives the same flows on every
//! machine.
//!
//! Flow sizes come from a [`FlowSizeCdf`]; three published distributions are built in
//! (`data/cdf/*.txt`, each citing its source): web search (DCTCP), data mining (VL2) and
//! Facebook Hadoop (Roy et al. 2015, as shipped with HPCC).
//!
//! # What the flow kinds mean
//!
//! * [`FlowKind::Bulk`]: a TCP connection from `src` to `dst` opened at `start`; `src` sends
//!   `bytes` and closes.
//! * [`FlowKind::RequestResponse`]: a TCP connection opened by the client `src` at `start`; it
//!   sends `request_bytes`, the server `dst` answers with `response_bytes`, then the client
//!   closes. `bytes` is `request_bytes + response_bytes`.
//! * [`FlowKind::Transactions`]: netperf's TCP_RR: as a request/response, but the client sends
//!   the next request as soon as a whole response is in, on the same connection, until the run
//!   ends; the flow records the transactions completed and their summed times.
//! * UDP sources send datagrams of `packet_bytes` of payload, one every
//!   `T = tx_time(packet_bytes, rate_bps)` (so `rate_bps` counts payload bits), and stop after
//!   `bytes` bytes of payload; the last datagram carries what is left (shorter only in
//!   replayed flows). The generators set `bytes` to what the timing below produces:
//!   * [`FlowKind::UdpCbr`]: at `start + i*T` for every `i >= 0` with `i*T < duration`
//!     (with jitter, each gap is `T` times a seeded draw from `1 - j` to `1 + j`, so `bytes`
//!     is what the source sends on average);
//!   * [`FlowKind::UdpOnOff`]: on/off cycles starting with an on period: at
//!     `start + c*(on + off) + i*T` for `c, i >= 0` with `i*T < on`, while before
//!     `start + duration`;
//!   * [`FlowKind::UdpBurst`]: `packets` datagrams at `start + i*T`, `i < packets`.
//! * [`FlowKind::UdpPoisson`]: an open-loop UDP source whose datagrams arrive as a Poisson
//!   process of mean rate `rate_bps`, for `duration`. Rate and size mean what they mean for
//!   [`FlowKind::UdpCbr`] (a datagram's size is its packet's `size`, as `packet_bytes`), but
//!   each datagram's size is drawn uniformly from `min_bytes..=max_bytes`, and the gaps are
//!   exponential with mean `T = tx_time(m, rate_bps)`, `m = (min_bytes + max_bytes) / 2` the
//!   mean size (a half byte counted exactly). Datagram `n` goes at `start + g_0 + ... + g_n`
//!   while that is before `start + duration`: the first one gap after `start`, not at it. The
//!   draws are made by the simulator as the source runs, from the run's seed, the flow's id
//!   and the datagram's number only (no generator state), so a flow sends the same datagrams
//!   whatever other flows do, as long as its id stays ([`finalize`] numbers flows by start:
//!   a flow added that starts earlier renumbers it); `bytes` is the expected total,
//!   `duration / T` datagrams of `m` bytes ([`udp_poisson`]), not a count the source stops at.

use crate::packet::{FlowId, NodeId, L2_L3_HEADER, UDP_HEADER};
use crate::tcp::MAX_STREAM_BYTES;
use crate::time::{tx_time, Time, SEC};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use rustc_hash::FxHashMap;
use std::fmt;
use std::path::Path;
use tandem_wire::flow::FlowRecord;
use tandem_wire::ipv4::IpProtocol;

/// What a flow does (see the [module documentation](self) for exact semantics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowKind {
    /// TCP: `src` sends `bytes`, then closes.
    Bulk,
    /// TCP: the client (`src`) sends a request, the server (`dst`) answers.
    RequestResponse {
        /// Bytes of the request.
        request_bytes: u64,
        /// Bytes of the response.
        response_bytes: u64,
    },
    /// TCP as netperf's TCP_RR: one connection; the client (`src`) sends a request, the server
    /// (`dst`) answers, and the client sends the next request as soon as the whole response
    /// is in, until the run ends (`bytes` is one transaction's).
    Transactions {
        /// Bytes of each request.
        request_bytes: u64,
        /// Bytes of each response.
        response_bytes: u64,
    },
    /// UDP at a constant rate for `duration`.
    UdpCbr {
        /// Payload bits per second.
        rate_bps: u64,
        /// Payload bytes per datagram.
        packet_bytes: u32,
        /// How long the source sends.
        duration: Time,
        /// Per mille: each gap is drawn uniformly from (1 - j) to (1 + j) times the interval
        /// (j = `jitter_permille` / 1000; 0: periodic), from the run's seed, the flow and the
        /// datagram's number, so that sources of the same rate do not lock in phase.
        jitter_permille: u16,
    },
    /// UDP alternating `on` periods at `rate_bps` with silent `off` periods, for `duration`.
    UdpOnOff {
        /// Payload bits per second while on.
        rate_bps: u64,
        /// Payload bytes per datagram.
        packet_bytes: u32,
        /// Length of each on period.
        on: Time,
        /// Length of each off period.
        off: Time,
        /// How long the source runs (on and off periods together).
        duration: Time,
    },
    /// UDP: `packets` datagrams paced at `rate_bps`.
    UdpBurst {
        /// Datagrams in the burst.
        packets: u64,
        /// Payload bytes per datagram.
        packet_bytes: u32,
        /// Payload bits per second.
        rate_bps: u64,
    },
    /// UDP, open loop: datagrams whose send times form a Poisson process of mean rate
    /// `rate_bps` for `duration` (the first one gap after the start), each of a size drawn
    /// uniformly from `min_bytes..=max_bytes`; the gaps are exponential with mean
    /// [`udp_interval`](FlowKind::udp_interval). Rate and sizes count as
    /// [`FlowKind::UdpCbr`]'s do. Every draw is a function of the run's seed, the flow and the
    /// datagram's number.
    UdpPoisson {
        /// Mean bits per second (of packet bytes, as `UdpCbr`'s `rate_bps`).
        rate_bps: u64,
        /// Smallest datagram, bytes of the packet as `UdpCbr`'s `packet_bytes` (at least
        /// [`UDP_MIN_PACKET_BYTES`]).
        min_bytes: u32,
        /// Largest datagram (equal to `min_bytes`: every datagram has that size).
        max_bytes: u32,
        /// How long the source sends.
        duration: Time,
        /// At most this many datagrams (0: as many as `duration` holds).
        packets: u32,
    },
}

impl FlowKind {
    /// Whether the flow is a UDP source (otherwise a TCP connection).
    pub fn is_udp(&self) -> bool {
        !matches!(
            self,
            FlowKind::Bulk | FlowKind::RequestResponse { .. } | FlowKind::Transactions { .. }
        )
    }

    /// For UDP kinds, the time between datagrams: `tx_time(packet_bytes, rate_bps)`; for
    /// [`FlowKind::UdpPoisson`] the mean gap, `tx_time` of the mean size
    /// `(min_bytes + max_bytes) / 2` (half bytes counted) at `rate_bps`.
    pub fn udp_interval(&self) -> Option<Time> {
        match *self {
            FlowKind::UdpPoisson {
                rate_bps,
                min_bytes,
                max_bytes,
                ..
            } => Some(poisson_interval(rate_bps, min_bytes, max_bytes)),
            FlowKind::UdpCbr {
                rate_bps, packet_bytes, ..
            }
            | FlowKind::UdpOnOff {
                rate_bps, packet_bytes, ..
            }
            | FlowKind::UdpBurst {
                rate_bps, packet_bytes, ..
            } => Some(tx_time(u64::from(packet_bytes), rate_bps)),
            _ => None,
        }
    }
}

/// One flow of a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowSpec {
    /// Identity; unique within a run ([`finalize`] numbers flows by start time).
    pub id: FlowId,
    /// The sender (TCP: the side that connects).
    pub src: NodeId,
    /// The receiver (TCP: the side that accepts).
    pub dst: NodeId,
    /// When the flow starts (the SYN, or the first datagram).
    pub start: Time,
    /// Application bytes the flow carries in all (see [`FlowKind`]).
    pub bytes: u64,
    /// What the flow does.
    pub kind: FlowKind,
}

/// A workload that cannot be generated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadError {
    /// What is wrong.
    pub message: String,
}

impl WorkloadError {
    fn new(message: impl Into<String>) -> WorkloadError {
        WorkloadError {
            message: message.into(),
        }
    }
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for WorkloadError {}

/// A flow-size distribution file that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CdfError {
    /// The file (or built-in name).
    pub file: String,
    /// 1-based line, when the problem is on one line.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CdfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for CdfError {}

/// Names of the built-in flow-size distributions.
pub const BUILTIN_CDFS: [&str; 3] = ["websearch", "datamining", "hadoop"];

const WEBSEARCH_TXT: &str = include_str!("../data/cdf/websearch.txt");
const DATAMINING_TXT: &str = include_str!("../data/cdf/datamining.txt");
const HADOOP_TXT: &str = include_str!("../data/cdf/hadoop.txt");

/// An empirical flow-size distribution: points `(bytes, cumulative fraction)`, sampled by
/// inverse transform with linear interpolation between points.
///
/// A draw `u` in `[0, 1)` below the first point's fraction yields the first point's size (a
/// point mass there; a distribution that starts at `(0, 0)` has none). Samples are rounded to
/// whole bytes and are at least 1.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSizeCdf {
    points: Vec<(u64, f64)>,
    mean: f64,
}

impl FlowSizeCdf {
    /// Validates points: at least one, sizes and fractions non-decreasing, fractions within
    /// `[0, 1]`, the last fraction 1 (within 1e-9), the largest size above 0.
    pub fn new(mut points: Vec<(u64, f64)>) -> Result<FlowSizeCdf, String> {
        let Some(&(last_bytes, last)) = points.last() else {
            return Err("no points".into());
        };
        for (i, &(b, c)) in points.iter().enumerate() {
            if !(0.0..=1.0 + 1e-9).contains(&c) {
                return Err(format!("point {}: cumulative fraction {c} is outside 0..1", i + 1));
            }
            if i > 0 {
                let (pb, pc) = points[i - 1];
                if b < pb {
                    return Err(format!("point {}: size {b} is smaller than the previous {pb}", i + 1));
                }
                if c < pc {
                    return Err(format!(
                        "point {}: fraction {c} is smaller than the previous {pc}",
                        i + 1
                    ));
                }
            }
        }
        if (last - 1.0).abs() > 1e-9 {
            return Err(format!("the last cumulative fraction must be 1, got {last}"));
        }
        if last_bytes == 0 {
            return Err("every size is 0".into());
        }
        let n = points.len();
        points[n - 1].1 = 1.0;
        let mut mean = points[0].0 as f64 * points[0].1;
        for w in points.windows(2) {
            mean += (w[1].1 - w[0].1) * (w[0].0 as f64 + w[1].0 as f64) / 2.0;
        }
        Ok(FlowSizeCdf { points, mean })
    }

    /// Reads `bytes cdf` pairs, one per line (blank lines and `#` comments ignored). The
    /// fractions may be written as fractions (ending at 1) or as percentages (ending at 100);
    /// the last value decides. Sizes may be decimals (`1e6`); they are rounded to whole bytes.
    pub fn parse(text: &str, file_name: &str) -> Result<FlowSizeCdf, CdfError> {
        let err = |line: Option<usize>, message: String| CdfError {
            file: file_name.to_string(),
            line,
            message,
        };
        let mut raw: Vec<(u64, f64, usize)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let content = line.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let cols: Vec<&str> = content.split_whitespace().collect();
            if cols.len() != 2 {
                return Err(err(
                    Some(i + 1),
                    format!("expected two columns `bytes cdf`, found {}", cols.len()),
                ));
            }
            let bytes: f64 = cols[0]
                .parse()
                .ok()
                .filter(|b: &f64| b.is_finite() && *b >= 0.0 && *b < 1.8e19)
                .ok_or_else(|| err(Some(i + 1), format!("size {:?} is not a non-negative number", cols[0])))?;
            let cdf: f64 = cols[1]
                .parse()
                .ok()
                .filter(|c: &f64| c.is_finite() && *c >= 0.0)
                .ok_or_else(|| err(Some(i + 1), format!("cdf {:?} is not a non-negative number", cols[1])))?;
            raw.push((bytes.round() as u64, cdf, i + 1));
        }
        let Some(&(_, last, last_line)) = raw.last() else {
            return Err(err(None, "no `bytes cdf` lines".into()));
        };
        let scale = if (last - 100.0).abs() < 1e-9 {
            100.0
        } else if (last - 1.0).abs() < 1e-9 {
            1.0
        } else {
            return Err(err(
                Some(last_line),
                format!("the last cdf value must be 1 (fractions) or 100 (percent), got {last}"),
            ));
        };
        // Check order line by line so the error names the line.
        for w in raw.windows(2) {
            if w[1].0 < w[0].0 {
                return Err(err(
                    Some(w[1].2),
                    format!("size {} is smaller than the line before", w[1].0),
                ));
            }
            if w[1].1 < w[0].1 {
                return Err(err(
                    Some(w[1].2),
                    format!("cdf {} is smaller than the line before", w[1].1),
                ));
            }
        }
        FlowSizeCdf::new(raw.iter().map(|&(b, c, _)| (b, c / scale)).collect()).map_err(|m| err(None, m))
    }

    /// Reads a distribution file (see [`parse`](Self::parse)).
    pub fn load(path: &Path) -> Result<FlowSizeCdf, CdfError> {
        let text = std::fs::read_to_string(path).map_err(|e| CdfError {
            file: path.display().to_string(),
            line: None,
            message: e.to_string(),
        })?;
        FlowSizeCdf::parse(&text, &path.display().to_string())
    }

    /// A built-in distribution by name: `websearch`, `datamining` or `hadoop`.
    pub fn builtin(name: &str) -> Option<FlowSizeCdf> {
        let text = match name {
            "websearch" => WEBSEARCH_TXT,
            "datamining" => DATAMINING_TXT,
            "hadoop" => HADOOP_TXT,
            _ => return None,
        };
        // The built-in files are checked by the tests.
        FlowSizeCdf::parse(text, name).ok()
    }

    /// The points, fractions in `0..=1`.
    pub fn points(&self) -> &[(u64, f64)] {
        &self.points
    }

    /// Mean flow size in bytes of the interpolated distribution.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The size at cumulative fraction `u` (in `[0, 1]`), before rounding.
    pub fn quantile(&self, u: f64) -> f64 {
        let p = &self.points;
        let i = p.partition_point(|&(_, c)| c <= u);
        if i == 0 {
            return p[0].0 as f64;
        }
        if i == p.len() {
            return p[p.len() - 1].0 as f64;
        }
        let (x0, c0) = (p[i - 1].0 as f64, p[i - 1].1);
        let (x1, c1) = (p[i].0 as f64, p[i].1);
        x0 + (x1 - x0) * (u - c0) / (c1 - c0)
    }

    /// One flow size in bytes (at least 1).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let u: f64 = rng.random();
        (self.quantile(u).round() as u64).max(1)
    }
}

/// When a Poisson workload stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoissonLimit {
    /// Arrivals in `[start, start + duration)`.
    Duration(Time),
    /// Exactly this many flows.
    Flows(u64),
}

/// Most flows one generator call may produce (about 7 GB of `FlowSpec`s).
pub const MAX_FLOWS: u64 = 100_000_000;

/// Open-loop Poisson arrivals of [`FlowKind::Bulk`] flows between random distinct hosts.
///
/// Arrival rate (flows per second):
/// `lambda = load x hosts.len() x host_link_bps / (8 x cdf.mean())`,
/// so the offered load, averaged over the hosts' links, is `load`: each flow picks its source
/// uniformly among `hosts` and its destination uniformly among the others, so every host
/// sends (and receives) `load x host_link_bps` on average. Inter-arrival times are exponential
/// with mean `1 / lambda`, the first flow arriving one gap after `start`.
///
/// Draws per flow, in order: the gap, the source, the destination, the size.
pub fn poisson(
    cdf: &FlowSizeCdf,
    hosts: &[NodeId],
    load: f64,
    host_link_bps: u64,
    start: Time,
    limit: PoissonLimit,
    seed: u64,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    if hosts.len() < 2 {
        return Err(WorkloadError::new("a Poisson workload needs at least 2 hosts"));
    }
    if !(load.is_finite() && load > 0.0) {
        return Err(WorkloadError::new(format!("load must be above 0, got {load}")));
    }
    if host_link_bps == 0 {
        return Err(WorkloadError::new("host link rate must be above 0"));
    }
    let largest = cdf.points().last().map_or(0, |p| p.0);
    if largest > MAX_STREAM_BYTES {
        return Err(WorkloadError::new(format!(
            "flow sizes go up to {largest} bytes (at most {MAX_STREAM_BYTES})"
        )));
    }
    let lambda = poisson_rate(cdf, hosts.len(), load, host_link_bps);
    let expected = poisson_expected(lambda, limit);
    if expected > MAX_FLOWS as f64 {
        return Err(WorkloadError::new(format!(
            "this would generate about {expected:.0} flows (at most {MAX_FLOWS})"
        )));
    }
    let mean_gap_ps = SEC as f64 / lambda;
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut flows = Vec::with_capacity(room_for(expected, limit) as usize);
    let mut t = start;
    let n = hosts.len();
    loop {
        if let PoissonLimit::Flows(max) = limit {
            if flows.len() as u64 >= max {
                break;
            }
        }
        let u: f64 = rng.random();
        let gap = (-(1.0 - u).ln() * mean_gap_ps).round();
        t = t.saturating_add(gap as Time);
        if let PoissonLimit::Duration(d) = limit {
            if t >= start.saturating_add(d) {
                break;
            }
        }
        let s = rng.random_range(0..n);
        let mut d = rng.random_range(0..n - 1);
        if d >= s {
            d += 1;
        }
        let bytes = cdf.sample(&mut rng);
        flows.push(FlowSpec {
            id: FlowId(flows.len() as u32),
            src: hosts[s],
            dst: hosts[d],
            start: t,
            bytes,
            kind: FlowKind::Bulk,
        });
    }
    Ok(flows)
}

/// Flows per second of [`poisson`].
fn poisson_rate(cdf: &FlowSizeCdf, hosts: usize, load: f64, host_link_bps: u64) -> f64 {
    load * hosts as f64 * host_link_bps as f64 / (8.0 * cdf.mean())
}

/// The expected number of flows of [`poisson`] at `lambda` flows per second.
fn poisson_expected(lambda: f64, limit: PoissonLimit) -> f64 {
    match limit {
        PoissonLimit::Duration(d) => lambda * d as f64 / SEC as f64,
        PoissonLimit::Flows(n) => n as f64,
    }
}

/// The room [`poisson`] allocates for its flows: the count asked for, or for a duration the
/// expected count plus six standard deviations (and 16), so that the list is allocated once.
fn room_for(expected: f64, limit: PoissonLimit) -> u64 {
    match limit {
        PoissonLimit::Flows(n) => n,
        PoissonLimit::Duration(_) => (expected + 6.0 * expected.sqrt() + 16.0).ceil() as u64,
    }
}

/// How many flows [`poisson`] with these arguments makes room for (see its arguments): the
/// count asked for, or for a duration the expected count plus six standard deviations. `None`
/// when the arguments are such that `poisson` refuses them.
pub fn poisson_capacity(
    cdf: &FlowSizeCdf,
    hosts: usize,
    load: f64,
    host_link_bps: u64,
    limit: PoissonLimit,
) -> Option<u64> {
    if hosts < 2 || !(load.is_finite() && load > 0.0) || host_link_bps == 0 {
        return None;
    }
    let expected = poisson_expected(poisson_rate(cdf, hosts, load, host_link_bps), limit);
    (expected.is_finite() && expected >= 0.0).then(|| room_for(expected, limit))
}

fn check_bytes(bytes: u64, what: &str) -> Result<(), WorkloadError> {
    if bytes == 0 {
        Err(WorkloadError::new(format!("{what} must be at least 1 byte")))
    } else if bytes > MAX_STREAM_BYTES {
        Err(WorkloadError::new(format!(
            "{what} must be at most {MAX_STREAM_BYTES} bytes (a TCP connection's limit), got {bytes}"
        )))
    } else {
        Ok(())
    }
}

/// Refuses more than [`MAX_FLOWS`] flows, before they are allocated.
fn check_count(flows: u64) -> Result<usize, WorkloadError> {
    if flows > MAX_FLOWS {
        return Err(WorkloadError::new(format!(
            "this would generate {flows} flows (at most {MAX_FLOWS})"
        )));
    }
    Ok(flows as usize)
}

fn check_pairs(pairs: &[(NodeId, NodeId)]) -> Result<(), WorkloadError> {
    if pairs.is_empty() {
        return Err(WorkloadError::new("no (source, destination) pairs"));
    }
    if let Some(p) = pairs.iter().find(|p| p.0 == p.1) {
        return Err(WorkloadError::new(format!("a flow from node {} to itself", p.0 .0)));
    }
    Ok(())
}

fn round_start(start: Time, round: u32, gap: Time) -> Result<Time, WorkloadError> {
    u64::from(round)
        .checked_mul(gap)
        .and_then(|o| start.checked_add(o))
        .ok_or_else(|| WorkloadError::new("start time overflows"))
}

/// Incast: every sender opens a [`FlowKind::Bulk`] flow of `bytes_each` to `receiver` at the
/// same instant, `repeats` times, rounds `gap` apart (round `r` starts at `start + r*gap`,
/// whether or not the previous round has finished). Flows are ordered by round, then sender.
pub fn incast(
    senders: &[NodeId],
    receiver: NodeId,
    bytes_each: u64,
    start: Time,
    repeats: u32,
    gap: Time,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    if senders.is_empty() {
        return Err(WorkloadError::new("an incast needs at least one sender"));
    }
    if senders.contains(&receiver) {
        return Err(WorkloadError::new("the receiver is also a sender"));
    }
    check_bytes(bytes_each, "bytes")?;
    if repeats == 0 {
        return Err(WorkloadError::new("repeats must be at least 1"));
    }
    let mut flows = Vec::with_capacity(check_count((senders.len() as u64).saturating_mul(u64::from(repeats)))?);
    for r in 0..repeats {
        let t = round_start(start, r, gap)?;
        for &s in senders {
            flows.push(FlowSpec {
                id: FlowId(flows.len() as u32),
                src: s,
                dst: receiver,
                start: t,
                bytes: bytes_each,
                kind: FlowKind::Bulk,
            });
        }
    }
    Ok(flows)
}

/// Delays every flow's start by its own uniform draw from [0, `jitter`) (picoseconds, drawn in
/// flow order from `seed`), so that incast senders of a round do not start in lock-step and
/// rounds differ. `jitter` 0 changes nothing.
pub fn jitter_starts(flows: &mut [FlowSpec], jitter: Time, seed: u64) {
    if jitter == 0 {
        return;
    }
    let mut rng = Pcg64::seed_from_u64(seed);
    for f in flows {
        f.start = f.start.saturating_add(rng.random_range(0..jitter));
    }
}

/// One [`FlowKind::Bulk`] flow of `bytes` per `(src, dst)` pair, all starting at `start`.
pub fn bulk(pairs: &[(NodeId, NodeId)], bytes: u64, start: Time) -> Result<Vec<FlowSpec>, WorkloadError> {
    check_pairs(pairs)?;
    check_bytes(bytes, "bytes")?;
    Ok(per_pair(pairs, start, bytes, FlowKind::Bulk))
}

/// One flow of `kind` and `bytes` per `(src, dst)` pair, all starting at `start`, numbered in
/// pair order.
fn per_pair(pairs: &[(NodeId, NodeId)], start: Time, bytes: u64, kind: FlowKind) -> Vec<FlowSpec> {
    pairs
        .iter()
        .enumerate()
        .map(|(i, &(src, dst))| FlowSpec {
            id: FlowId(i as u32),
            src,
            dst,
            start,
            bytes,
            kind,
        })
        .collect()
}

/// A seeded random permutation (the all-to-all stress test of data-center simulators such as
/// htsim): every host of `hosts` opens one [`FlowKind::Bulk`] flow of `bytes` to another host of
/// the set, every host receives exactly one, and none sends to itself (a derangement, drawn
/// uniformly by shuffling until no host maps to itself), all starting at `start`. Flow `i` is
/// sent by `hosts[i]`.
pub fn permutation(hosts: &[NodeId], bytes: u64, start: Time, seed: u64) -> Result<Vec<FlowSpec>, WorkloadError> {
    if hosts.len() < 2 {
        return Err(WorkloadError::new("a permutation needs at least two hosts"));
    }
    check_bytes(bytes, "bytes")?;
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut to: Vec<usize> = (0..hosts.len()).collect();
    loop {
        // Fisher-Yates; about e (2.7) shuffles on average until no fixed point is left.
        for i in (1..to.len()).rev() {
            to.swap(i, rng.random_range(0..=i));
        }
        if to.iter().enumerate().all(|(i, &j)| i != j) {
            break;
        }
    }
    let pairs: Vec<(NodeId, NodeId)> = to.iter().enumerate().map(|(i, &j)| (hosts[i], hosts[j])).collect();
    bulk(&pairs, bytes, start)
}

/// One [`FlowKind::RequestResponse`] connection per `(client, server)` pair, repeated
/// `repeats` times `gap` apart (a new connection each time).
pub fn request_response(
    pairs: &[(NodeId, NodeId)],
    request_bytes: u64,
    response_bytes: u64,
    start: Time,
    repeats: u32,
    gap: Time,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    check_pairs(pairs)?;
    check_bytes(request_bytes, "request")?;
    check_bytes(response_bytes, "response")?;
    if repeats == 0 {
        return Err(WorkloadError::new("repeats must be at least 1"));
    }
    let bytes = request_bytes
        .checked_add(response_bytes)
        .ok_or_else(|| WorkloadError::new("request + response overflows"))?;
    let mut flows = Vec::with_capacity(check_count((pairs.len() as u64).saturating_mul(u64::from(repeats)))?);
    for r in 0..repeats {
        let t = round_start(start, r, gap)?;
        for &(src, dst) in pairs {
            flows.push(FlowSpec {
                id: FlowId(flows.len() as u32),
                src,
                dst,
                start: t,
                bytes,
                kind: FlowKind::RequestResponse {
                    request_bytes,
                    response_bytes,
                },
            });
        }
    }
    Ok(flows)
}

/// One [`FlowKind::Transactions`] connection per `(client, server)` pair, from `start`.
pub fn transactions(
    pairs: &[(NodeId, NodeId)],
    request_bytes: u64,
    response_bytes: u64,
    start: Time,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    check_pairs(pairs)?;
    check_bytes(request_bytes, "request")?;
    check_bytes(response_bytes, "response")?;
    let bytes = request_bytes
        .checked_add(response_bytes)
        .ok_or_else(|| WorkloadError::new("request + response overflows"))?;
    let kind = FlowKind::Transactions {
        request_bytes,
        response_bytes,
    };
    Ok(per_pair(pairs, start, bytes, kind))
}

/// Sets the jitter of every [`FlowKind::UdpCbr`] flow of `flows` to `permille` (below 1000).
pub fn with_jitter(mut flows: Vec<FlowSpec>, permille: u16) -> Result<Vec<FlowSpec>, WorkloadError> {
    if permille >= 1000 {
        return Err(WorkloadError::new("jitter must be below 1"));
    }
    for f in &mut flows {
        if let FlowKind::UdpCbr { jitter_permille, .. } = &mut f.kind {
            *jitter_permille = permille;
        }
    }
    Ok(flows)
}

fn check_udp(rate_bps: u64, packet_bytes: u32) -> Result<Time, WorkloadError> {
    if rate_bps == 0 {
        return Err(WorkloadError::new("rate must be above 0"));
    }
    if packet_bytes == 0 {
        return Err(WorkloadError::new("packet size must be at least 1 byte"));
    }
    Ok(tx_time(u64::from(packet_bytes), rate_bps))
}

/// Datagrams sent at `i*interval` for `i*interval < span`.
fn paced_count(span: Time, interval: Time) -> u64 {
    span.div_ceil(interval.max(1))
}

fn udp_flows(
    pairs: &[(NodeId, NodeId)],
    start: Time,
    packets: u64,
    packet_bytes: u32,
    kind: FlowKind,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    check_pairs(pairs)?;
    let bytes = packets
        .checked_mul(u64::from(packet_bytes))
        .ok_or_else(|| WorkloadError::new("total bytes overflow"))?;
    udp_flows_of(pairs, start, bytes, kind)
}

/// One UDP source of `kind` carrying `bytes` per pair (pairs already checked).
fn udp_flows_of(
    pairs: &[(NodeId, NodeId)],
    start: Time,
    bytes: u64,
    kind: FlowKind,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    if bytes == 0 {
        return Err(WorkloadError::new("the source would send nothing (duration too short)"));
    }
    Ok(pairs
        .iter()
        .enumerate()
        .map(|(i, &(src, dst))| FlowSpec {
            id: FlowId(i as u32),
            src,
            dst,
            start,
            bytes,
            kind,
        })
        .collect())
}

/// A [`FlowKind::UdpCbr`] source per pair: `packet_bytes` datagrams at `rate_bps` for
/// `duration` from `start`.
pub fn udp_cbr(
    pairs: &[(NodeId, NodeId)],
    rate_bps: u64,
    packet_bytes: u32,
    start: Time,
    duration: Time,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    let interval = check_udp(rate_bps, packet_bytes)?;
    let kind = FlowKind::UdpCbr {
        rate_bps,
        packet_bytes,
        duration,
        jitter_permille: 0,
    };
    udp_flows(pairs, start, paced_count(duration, interval), packet_bytes, kind)
}

/// A [`FlowKind::UdpOnOff`] source per pair.
pub fn udp_onoff(
    pairs: &[(NodeId, NodeId)],
    rate_bps: u64,
    packet_bytes: u32,
    on: Time,
    off: Time,
    start: Time,
    duration: Time,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    let interval = check_udp(rate_bps, packet_bytes)?;
    if on == 0 {
        return Err(WorkloadError::new("the on period must be above 0"));
    }
    let cycle = on.saturating_add(off);
    let per_on = paced_count(on, interval);
    let packets = (duration / cycle)
        .saturating_mul(per_on)
        .saturating_add(paced_count((duration % cycle).min(on), interval));
    let kind = FlowKind::UdpOnOff {
        rate_bps,
        packet_bytes,
        on,
        off,
        duration,
    };
    udp_flows(pairs, start, packets, packet_bytes, kind)
}

/// A [`FlowKind::UdpBurst`] per pair: `packets` datagrams paced at `rate_bps` from `start`.
pub fn udp_burst(
    pairs: &[(NodeId, NodeId)],
    packets: u64,
    packet_bytes: u32,
    rate_bps: u64,
    start: Time,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    check_udp(rate_bps, packet_bytes)?;
    let kind = FlowKind::UdpBurst {
        packets,
        packet_bytes,
        rate_bps,
    };
    udp_flows(pairs, start, packets, packet_bytes, kind)
}

/// The smallest UDP datagram a host sends, in packet bytes: the Ethernet, IPv4 and UDP
/// headers (42). A smaller size is sent at this size, so [`udp_poisson`] refuses one.
pub const UDP_MIN_PACKET_BYTES: u32 = L2_L3_HEADER + UDP_HEADER;

/// The mean gap of a [`FlowKind::UdpPoisson`] source: the time `rate_bps` takes for the mean
/// size `(min_bytes + max_bytes) / 2`, rounded up to the picosecond as [`tx_time`] rounds
/// (`tx_time(min_bytes, rate_bps)` when the sizes are equal); `Time::MAX` at rate 0.
pub(crate) fn poisson_interval(rate_bps: u64, min_bytes: u32, max_bytes: u32) -> Time {
    if rate_bps == 0 {
        return Time::MAX;
    }
    // (min + max) / 2 bytes of 8 bits each: (min + max) * 4 bits.
    let bits = (u128::from(min_bytes) + u128::from(max_bytes)) * 4 * u128::from(SEC);
    Time::try_from(bits.div_ceil(u128::from(rate_bps))).unwrap_or(Time::MAX)
}

/// A [`FlowKind::UdpPoisson`] source per pair: datagrams of sizes uniform in
/// `min_bytes..=max_bytes` (packet bytes, at least [`UDP_MIN_PACKET_BYTES`]) at the arrival
/// times of a Poisson process of mean rate `rate_bps` in `[start, start + duration)`.
///
/// The datagrams are drawn by the simulator as the source runs (from the run's seed and the
/// flow's id, which [`finalize`] gives), so how many there will be is not known here: each
/// flow's `bytes` is the expected total, `duration / T` datagrams (`T` the mean gap,
/// [`FlowKind::udp_interval`]) of the mean size, rounded. It is what flows.csv lists; the
/// source stops at `start + duration`, not at `bytes`, and its completion time is its last
/// datagram's, as for the other UDP kinds.
pub fn udp_poisson(
    pairs: &[(NodeId, NodeId)],
    rate_bps: u64,
    min_bytes: u32,
    max_bytes: u32,
    start: Time,
    duration: Time,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    if rate_bps == 0 {
        return Err(WorkloadError::new("rate must be above 0"));
    }
    if min_bytes > max_bytes {
        return Err(WorkloadError::new(format!(
            "the smallest packet size ({min_bytes} bytes) is above the largest ({max_bytes})"
        )));
    }
    if min_bytes < UDP_MIN_PACKET_BYTES {
        return Err(WorkloadError::new(format!(
            "packet sizes must be at least {UDP_MIN_PACKET_BYTES} bytes (Ethernet, IPv4 and UDP headers), got {min_bytes}"
        )));
    }
    if duration == 0 {
        return Err(WorkloadError::new("duration must be above 0"));
    }
    check_pairs(pairs)?;
    let interval = poisson_interval(rate_bps, min_bytes, max_bytes);
    let mean_bytes = (f64::from(min_bytes) + f64::from(max_bytes)) / 2.0;
    let expected = (duration as f64 / interval as f64 * mean_bytes).round();
    if expected >= u64::MAX as f64 {
        return Err(WorkloadError::new("total bytes overflow"));
    }
    let kind = FlowKind::UdpPoisson {
        rate_bps,
        min_bytes,
        max_bytes,
        duration,
        packets: 0,
    };
    udp_flows_of(pairs, start, expected as u64, kind)
}

/// A [`FlowKind::UdpPoisson`] source from `src` to `dst` of exactly `packets` datagrams of
/// `bytes` each (a flow of a known size, as a trace gives it), Poisson at `rate_bps` from
/// `start` on (`duration` unbounded).
pub fn udp_poisson_packets(
    src: NodeId,
    dst: NodeId,
    rate_bps: u64,
    bytes: u32,
    start: Time,
    packets: u32,
) -> Result<FlowSpec, WorkloadError> {
    if packets == 0 {
        return Err(WorkloadError::new("a flow needs at least 1 packet"));
    }
    if rate_bps == 0 {
        return Err(WorkloadError::new("rate must be above 0"));
    }
    if bytes < UDP_MIN_PACKET_BYTES {
        return Err(WorkloadError::new(format!(
            "packets must be at least {UDP_MIN_PACKET_BYTES} bytes (Ethernet, IPv4 and UDP headers), got {bytes}"
        )));
    }
    check_pairs(&[(src, dst)])?;
    let kind = FlowKind::UdpPoisson {
        rate_bps,
        min_bytes: bytes,
        max_bytes: bytes,
        duration: Time::MAX,
        packets,
    };
    let mut f = udp_flows_of(&[(src, dst)], start, u64::from(packets) * u64::from(bytes), kind)?;
    f.pop().ok_or_else(|| WorkloadError::new("no flow"))
}

/// Flows made from a flow-record trace, and what was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replay {
    /// The flows, in the order of the records' first packets.
    pub flows: Vec<FlowSpec>,
    /// Records with no payload (e.g. the ACK-only direction of a TCP connection).
    pub skipped_empty: usize,
    /// Records whose two addresses map to the same host.
    pub skipped_same_host: usize,
    /// Records neither TCP nor UDP.
    pub skipped_protocol: usize,
}

/// Replays flow records (as read by `tandem_wire::flow::read_csv`) onto `hosts`.
///
/// * Records are taken in order of their first packet (`first_ns`, ties in file order). Each
///   distinct IPv4 address is given the next host index when first seen (source before
///   destination), modulo `hosts.len()`; every record counts, skipped or not.
/// * A flow starts at `start + (first_ns - earliest first_ns)`.
/// * TCP records become [`FlowKind::Bulk`] flows of `payload_bytes`.
/// * UDP records become [`FlowKind::UdpCbr`] sources with the record's packet count and
///   average rate: `packet_bytes = ceil(payload_bytes / packets)`, datagrams spaced
///   `(last_ns - first_ns) / (packets - 1)` apart. A UDP record of one packet, or with all
///   packets at the same instant, becomes a [`FlowKind::UdpBurst`] at the first host link rate
///   given (`burst_rate_bps`).
/// * Records with no payload, non-TCP/UDP records and records whose ends map to the same host
///   are skipped and counted in [`Replay`].
pub fn replay(
    records: &[FlowRecord],
    hosts: &[NodeId],
    start: Time,
    burst_rate_bps: u64,
) -> Result<Replay, WorkloadError> {
    if hosts.len() < 2 {
        return Err(WorkloadError::new("a replay needs at least 2 hosts"));
    }
    if burst_rate_bps == 0 {
        return Err(WorkloadError::new("burst rate must be above 0"));
    }
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by_key(|&i| (records[i].first_ns, i));
    let t0 = order.first().map(|&i| records[i].first_ns).unwrap_or(0);
    let mut ids: FxHashMap<std::net::Ipv4Addr, usize> = FxHashMap::default();
    let mut host_of = |ip| {
        let next = ids.len();
        hosts[*ids.entry(ip).or_insert(next) % hosts.len()]
    };
    let mut out = Replay::default();
    for &i in &order {
        let r = &records[i];
        let (src, dst) = (host_of(r.key.src), host_of(r.key.dst));
        let tcp = r.key.protocol == IpProtocol::TCP;
        if !tcp && r.key.protocol != IpProtocol::UDP {
            out.skipped_protocol += 1;
            continue;
        }
        if r.payload_bytes == 0 || r.packets == 0 {
            out.skipped_empty += 1;
            continue;
        }
        if src == dst {
            out.skipped_same_host += 1;
            continue;
        }
        if tcp && r.payload_bytes > MAX_STREAM_BYTES {
            return Err(WorkloadError::new(format!(
                "record {}: {} bytes of TCP payload, more than a simulated TCP connection carries (at most {MAX_STREAM_BYTES})",
                i + 1,
                r.payload_bytes
            )));
        }
        let flow_start = (r.first_ns - t0)
            .checked_mul(1_000)
            .and_then(|o| o.checked_add(start))
            .ok_or_else(|| WorkloadError::new("trace too long for simulated time"))?;
        let kind = if tcp {
            FlowKind::Bulk
        } else {
            let packet_bytes = u32::try_from(r.payload_bytes.div_ceil(r.packets)).unwrap_or(u32::MAX);
            let span = (r.last_ns - r.first_ns).saturating_mul(1_000);
            if r.packets < 2 || span == 0 {
                FlowKind::UdpBurst {
                    packets: r.packets,
                    packet_bytes,
                    rate_bps: burst_rate_bps,
                }
            } else {
                let spacing = (span / (r.packets - 1)).max(1);
                let rate_bps = ((u128::from(packet_bytes) * 8 * u128::from(SEC)) / u128::from(spacing))
                    .clamp(1, u64::MAX.into()) as u64;
                let interval = tx_time(u64::from(packet_bytes), rate_bps);
                FlowKind::UdpCbr {
                    rate_bps,
                    packet_bytes,
                    duration: interval.saturating_mul(r.packets - 1).saturating_add(1),
                    jitter_permille: 0,
                }
            }
        };
        out.flows.push(FlowSpec {
            id: FlowId(out.flows.len() as u32),
            src,
            dst,
            start: flow_start,
            bytes: r.payload_bytes,
            kind,
        });
    }
    Ok(out)
}

/// Joins the flows of several generators into one run: sorts them by start time (stable, so
/// equal starts keep their order) and numbers them `FlowId(0)`, `FlowId(1)`, ... in that
/// order.
pub fn finalize(mut flows: Vec<FlowSpec>) -> Vec<FlowSpec> {
    flows.sort_by_key(|f| f.start);
    for (i, f) in flows.iter_mut().enumerate() {
        f.id = FlowId(i as u32);
    }
    flows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, US};

    fn hosts(n: u32) -> Vec<NodeId> {
        (0..n).map(NodeId).collect()
    }

    #[test]
    fn builtins_parse() {
        for name in BUILTIN_CDFS {
            let cdf = FlowSizeCdf::builtin(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(cdf.points().last().unwrap().1, 1.0);
        }
        assert!((FlowSizeCdf::builtin("websearch").unwrap().mean() - 1_711_250.0).abs() < 1e-6);
        assert!((FlowSizeCdf::builtin("hadoop").unwrap().mean() - 120_420.75).abs() < 1e-6);
        let dm = FlowSizeCdf::builtin("datamining").unwrap();
        assert_eq!(dm.points()[0], (180, 0.1));
        assert!((dm.mean() - 12_658_207.6).abs() < 1.0);
        assert!(FlowSizeCdf::builtin("nope").is_none());
    }

    #[test]
    fn sampling_mean_matches() {
        for (name, samples) in [("websearch", 200_000), ("hadoop", 200_000), ("datamining", 2_000_000)] {
            let cdf = FlowSizeCdf::builtin(name).unwrap();
            let mut rng = Pcg64::seed_from_u64(7);
            let sum: f64 = (0..samples).map(|_| cdf.sample(&mut rng) as f64).sum();
            let mean = sum / samples as f64;
            let err = (mean - cdf.mean()).abs() / cdf.mean();
            assert!(err < 0.02, "{name}: sample mean {mean}, mean {} ({err})", cdf.mean());
        }
    }

    #[test]
    fn quantiles_interpolate() {
        let cdf = FlowSizeCdf::new(vec![(100, 0.5), (200, 1.0)]).unwrap();
        assert_eq!(cdf.quantile(0.2), 100.0); // point mass below the first point
        assert_eq!(cdf.quantile(0.75), 150.0);
        assert_eq!(cdf.mean(), 100.0 * 0.5 + 0.5 * 150.0);
        let ws = FlowSizeCdf::builtin("websearch").unwrap();
        assert_eq!(ws.quantile(0.15), 10_000.0);
        assert!((ws.quantile(0.175) - 15_000.0).abs() < 1e-6);
    }

    #[test]
    fn cdf_file_errors() {
        let e = |t: &str| FlowSizeCdf::parse(t, "x.txt").unwrap_err().to_string();
        assert_eq!(
            FlowSizeCdf::parse("# c\n0 0\n10 0.5 # half\n\n20 1\n", "x")
                .unwrap()
                .points(),
            &[(0, 0.0), (10, 0.5), (20, 1.0)]
        );
        assert_eq!(
            e("0 0\n10 50\n5 100\n"),
            "x.txt:3: size 5 is smaller than the line before"
        );
        assert_eq!(
            e("0 0\n10 60\n20 50\n30 100\n"),
            "x.txt:3: cdf 50 is smaller than the line before"
        );
        assert_eq!(
            e("0 0\n10 0.5\n20 0.9\n"),
            "x.txt:3: the last cdf value must be 1 (fractions) or 100 (percent), got 0.9"
        );
        assert_eq!(
            e("0 0\n10 abc\n20 1\n"),
            "x.txt:2: cdf \"abc\" is not a non-negative number"
        );
        assert_eq!(e("0 0\n10\n"), "x.txt:2: expected two columns `bytes cdf`, found 1");
        assert_eq!(e("# nothing\n"), "x.txt: no `bytes cdf` lines");
        assert_eq!(e("0 0\n0 1\n"), "x.txt: every size is 0");
        assert_eq!(e("0 0\n10 2\n20 1\n"), "x.txt:3: cdf 1 is smaller than the line before");
    }

    #[test]
    fn poisson_is_deterministic() {
        let cdf = FlowSizeCdf::builtin("websearch").unwrap();
        let h = hosts(8);
        let a = poisson(&cdf, &h, 0.5, 10_000_000_000, 0, PoissonLimit::Flows(1000), 42).unwrap();
        let b = poisson(&cdf, &h, 0.5, 10_000_000_000, 0, PoissonLimit::Flows(1000), 42).unwrap();
        let c = poisson(&cdf, &h, 0.5, 10_000_000_000, 0, PoissonLimit::Flows(1000), 43).unwrap();
        assert_eq!(a.len(), 1000);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().all(|f| f.src != f.dst && f.bytes >= 1));
        assert!(a.windows(2).all(|w| w[0].start <= w[1].start));
        let d = poisson(
            &cdf,
            &h,
            0.5,
            10_000_000_000,
            5 * MS,
            PoissonLimit::Duration(10 * MS),
            1,
        )
        .unwrap();
        assert!(d.iter().all(|f| f.start >= 5 * MS && f.start < 15 * MS));
        assert!(poisson(&cdf, &h[..1], 0.5, 1, 0, PoissonLimit::Flows(1), 1).is_err());
        assert!(poisson(&cdf, &h, 0.0, 1, 0, PoissonLimit::Flows(1), 1).is_err());
        assert!(poisson(
            &cdf,
            &h,
            0.5,
            100_000_000_000,
            0,
            PoissonLimit::Duration(10_000 * SEC),
            1
        )
        .is_err());
    }

    #[test]
    fn poisson_offers_the_requested_load() {
        for (name, load) in [("websearch", 0.3), ("hadoop", 0.7)] {
            let cdf = FlowSizeCdf::builtin(name).unwrap();
            // Enough flows that the heavy tails average out (about 140k and 460k flows).
            let h = hosts(64);
            let rate = 10_000_000_000u64;
            let dur = match name {
                "websearch" => 10 * SEC,
                _ => SEC,
            };
            let flows = poisson(&cdf, &h, load, rate, 0, PoissonLimit::Duration(dur), 9).unwrap();
            let bytes: u64 = flows.iter().map(|f| f.bytes).sum();
            let offered = bytes as f64 * 8.0 / (dur as f64 / SEC as f64) / (64.0 * rate as f64);
            assert!(
                (offered - load).abs() / load < 0.03,
                "{name}: {offered} vs {load} ({} flows)",
                flows.len()
            );
            // Sources are spread evenly.
            let mut per_src = [0u64; 64];
            for f in &flows {
                per_src[f.src.0 as usize] += 1;
            }
            let mean = flows.len() as f64 / 64.0;
            assert!(
                per_src.iter().all(|&c| (c as f64 - mean).abs() < 5.0 * mean.sqrt()),
                "{per_src:?}"
            );
        }
    }

    #[test]
    fn fixed_generators() {
        let h = hosts(5);
        let f = incast(&h[1..], h[0], 64_000, MS, 3, 10 * MS).unwrap();
        assert_eq!(f.len(), 12);
        assert_eq!(f[4].start, 11 * MS);
        assert_eq!((f[4].src, f[4].dst, f[4].bytes), (h[1], h[0], 64_000));
        assert!(incast(&h, h[0], 1, 0, 1, 0).is_err());
        assert!(incast(&h[1..], h[0], 0, 0, 1, 0).is_err());

        let p = permutation(&h, 1 << 20, 5, 3).unwrap();
        assert_eq!(p.len(), h.len());
        assert!(p.iter().all(|f| f.src != f.dst && f.start == 5 && f.bytes == 1 << 20));
        let mut dsts: Vec<NodeId> = p.iter().map(|f| f.dst).collect();
        dsts.sort_by_key(|n| n.0);
        let mut all = h.clone();
        all.sort_by_key(|n| n.0);
        assert_eq!(dsts, all, "every host receives exactly one flow");
        assert_eq!(p, permutation(&h, 1 << 20, 5, 3).unwrap());
        assert_ne!(p, permutation(&h, 1 << 20, 5, 4).unwrap());
        assert!(permutation(&h[..1], 1, 0, 1).is_err());
        let b = bulk(&[(h[0], h[1]), (h[2], h[3])], 1 << 20, 0).unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[1].id, FlowId(1));
        assert!(bulk(&[(h[0], h[0])], 1, 0).is_err());

        let rr = request_response(&[(h[0], h[1])], 100, 10_000, 0, 2, MS).unwrap();
        assert_eq!(rr[1].start, MS);
        assert_eq!(rr[0].bytes, 10_100);

        // 1000-byte datagrams at 8 Mb/s: one per ms.
        let c = udp_cbr(&[(h[0], h[1])], 8_000_000, 1000, 0, 10 * MS).unwrap();
        assert_eq!(c[0].kind.udp_interval(), Some(MS));
        assert_eq!(c[0].bytes, 10 * 1000);
        let c = udp_cbr(&[(h[0], h[1])], 8_000_000, 1000, 0, 10 * MS + 1).unwrap();
        assert_eq!(c[0].bytes, 11 * 1000);
        // On 3.5 ms (4 datagrams), off 1.5 ms; 12 ms = 2 cycles + 2 ms on (2 datagrams).
        let o = udp_onoff(&[(h[0], h[1])], 8_000_000, 1000, 3_500 * US, 1_500 * US, 0, 12 * MS).unwrap();
        assert_eq!(o[0].bytes, 10 * 1000);
        let u = udp_burst(&[(h[0], h[1])], 50, 1472, 10_000_000_000, 0).unwrap();
        assert_eq!(u[0].bytes, 50 * 1472);
        assert!(udp_cbr(&[(h[0], h[1])], 0, 1000, 0, MS).is_err());
        assert!(udp_cbr(&[(h[0], h[1])], 1, 1000, 0, 0).is_err());

        let all = finalize([c, b, f].concat());
        assert!(all.windows(2).all(|w| w[0].start <= w[1].start));
        assert!(all.iter().enumerate().all(|(i, f)| f.id == FlowId(i as u32)));
    }

    #[test]
    fn udp_poisson_flows() {
        let h = hosts(3);
        // 1000-byte datagrams at 8 Mb/s: one per ms on average, 10 expected in 10 ms.
        let f = udp_poisson(&[(h[0], h[1])], 8_000_000, 1000, 1000, 5, 10 * MS).unwrap();
        assert_eq!((f[0].start, f[0].bytes), (5, 10 * 1000));
        assert_eq!(f[0].kind.udp_interval(), Some(MS));
        assert!(f[0].kind.is_udp());
        // Sizes 64..=1500: 782 bytes on average, one every 782 us at 8 Mb/s; the expected
        // bytes are the rate times the duration.
        let f = udp_poisson(&[(h[0], h[1]), (h[2], h[1])], 8_000_000, 64, 1500, 0, 782 * MS).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f[1].id, FlowId(1));
        assert_eq!(f[0].kind.udp_interval(), Some(782 * US));
        assert_eq!(f[0].bytes, 782_000);
        assert_eq!(
            f[0].kind,
            FlowKind::UdpPoisson {
                rate_bps: 8_000_000,
                min_bytes: 64,
                max_bytes: 1500,
                duration: 782 * MS,
                packets: 0,
            }
        );
        // A half byte of mean size counts: 782.5 bytes at 8 Mb/s.
        let f = udp_poisson(&[(h[0], h[1])], 8_000_000, 64, 1501, 0, SEC).unwrap();
        assert_eq!(f[0].kind.udp_interval(), Some(782_500_000));
        assert_eq!(f[0].bytes, 1_000_000);
        // The smallest datagram the hosts send: the headers.
        assert!(udp_poisson(&[(h[0], h[1])], 1_000_000, 42, 42, 0, SEC).is_ok());
        let e = |r: Result<Vec<FlowSpec>, WorkloadError>| r.unwrap_err().message;
        let p = [(h[0], h[1])];
        assert_eq!(e(udp_poisson(&p, 0, 64, 1500, 0, MS)), "rate must be above 0");
        assert_eq!(
            e(udp_poisson(&p, 1_000_000, 1500, 64, 0, MS)),
            "the smallest packet size (1500 bytes) is above the largest (64)"
        );
        assert_eq!(
            e(udp_poisson(&p, 1_000_000, 41, 1500, 0, MS)),
            "packet sizes must be at least 42 bytes (Ethernet, IPv4 and UDP headers), got 41"
        );
        assert_eq!(
            e(udp_poisson(&p, 1_000_000, 64, 1500, 0, 0)),
            "duration must be above 0"
        );
        assert!(udp_poisson(&[(h[0], h[0])], 1_000_000, 64, 1500, 0, MS).is_err());
        assert!(udp_poisson(&[], 1_000_000, 64, 1500, 0, MS).is_err());
        // Expected to send under half a byte.
        assert!(udp_poisson(&p, 1, 64, 64, 0, 1).is_err());
        assert!(udp_poisson(&p, u64::MAX, 64, 64, 0, Time::MAX).is_err());
    }

    #[test]
    fn flow_kind_is_no_larger_than_before_udp_poisson() {
        // The largest variant was and stays `UdpOnOff` (four u64 and a u32, and the tag): 40
        // bytes. `UdpPoisson` takes 24 and the tag; every `FlowSpec` and flow state holds one.
        assert_eq!(std::mem::size_of::<FlowKind>(), 40);
    }

    #[test]
    fn replay_small_csv() {
        let csv = format!(
            "{}\n\
             tcp,10.0.0.1,40000,10.0.0.2,80,0,100.000001000,100.002000000,10,14540,14000,...AP.S.,idle\n\
             tcp,10.0.0.2,80,10.0.0.1,40000,0,100.000002000,100.002000000,8,520,0,...A..S.,idle\n\
             udp,10.0.0.3,5000,10.0.0.1,5001,0,100.000000000,100.001000000,11,16500,11000,........,eof\n\
             udp,10.0.0.4,5000,10.0.0.2,5001,0,100.500000000,100.500000000,1,100,58,........,eof\n\
             icmp,10.0.0.1,0,10.0.0.2,2048,0,101.000000000,101.000000000,1,98,56,........,eof\n\
             tcp,10.0.0.5,1,10.0.0.2,2,0,102.000000000,102.100000000,3,3000,2000,...AP...,eof\n",
            tandem_wire::flow::CSV_HEADER
        );
        let records = tandem_wire::flow::read_csv(csv.as_bytes()).unwrap();
        let h = hosts(4);
        let r = replay(&records, &h, MS, 10_000_000_000).unwrap();
        // Order of first appearance: .3 -> h0, .1 -> h1, .2 -> h2, .4 -> h3, .5 -> h0.
        assert_eq!(r.flows.len(), 4);
        assert_eq!((r.skipped_empty, r.skipped_protocol, r.skipped_same_host), (1, 1, 0));
        let u = r.flows[0];
        assert_eq!((u.src, u.dst, u.start, u.bytes), (h[0], h[1], MS, 11_000));
        // 11 datagrams of 1000 bytes, 100 us apart.
        assert_eq!(u.kind.udp_interval(), Some(100 * US));
        let FlowKind::UdpCbr {
            packet_bytes,
            duration,
            rate_bps,
            ..
        } = u.kind
        else {
            panic!("{u:?}")
        };
        assert_eq!((packet_bytes, rate_bps), (1000, 80_000_000));
        assert_eq!(paced_count(duration, 100 * US), 11);
        let t = r.flows[1];
        assert_eq!(
            (t.src, t.dst, t.start, t.bytes, t.kind),
            (h[1], h[2], MS + 1_000_000, 14_000, FlowKind::Bulk)
        );
        let b = r.flows[2];
        assert_eq!((b.src, b.dst, b.start), (h[3], h[2], MS + 500 * MS));
        assert!(matches!(
            b.kind,
            FlowKind::UdpBurst {
                packets: 1,
                packet_bytes: 58,
                ..
            }
        ));
        assert_eq!((r.flows[3].src, r.flows[3].dst), (h[0], h[2]));
        // On 2 hosts: .3 -> h0, .1 -> h1, .2 -> h0, .4 -> h1, .5 -> h0, so .5 -> .2 is h0 -> h0.
        let r2 = replay(&records, &h[..2], 0, 1).unwrap();
        assert_eq!(r2.skipped_same_host, 1);
    }

    #[test]
    fn sizes_and_counts_are_bounded_before_anything_is_allocated() {
        let h = hosts(3);
        let max = MAX_STREAM_BYTES;
        assert_eq!(bulk(&[(h[1], h[0])], max, 0).unwrap()[0].bytes, max);
        let e = bulk(&[(h[1], h[0])], max + 1, 0).unwrap_err();
        assert!(
            e.message.starts_with("bytes must be at most 4611686018427387904"),
            "{e}"
        );
        assert!(incast(&h[1..], h[0], u64::MAX - 1, 0, 1, 0).is_err());
        assert!(request_response(&[(h[1], h[0])], 1, max + 1, 0, 1, 0).is_err());
        // 2 x 4e9 flows: refused, not allocated.
        let e = incast(&h[1..], h[0], 1000, 0, 4_000_000_000, 0).unwrap_err();
        assert_eq!(e.message, "this would generate 8000000000 flows (at most 100000000)");
        let e = request_response(&[(h[1], h[0])], 1, 1, 0, u32::MAX, 0).unwrap_err();
        assert!(e.message.starts_with("this would generate 4294967295 flows"), "{e}");
        // A CDF whose sizes a TCP cannot carry.
        let cdf = FlowSizeCdf::new(vec![(1000, 0.5), (max + 1, 1.0)]).unwrap();
        let e = poisson(&cdf, &h, 0.5, 1_000_000_000, 0, PoissonLimit::Flows(10), 1).unwrap_err();
        assert!(
            e.message.starts_with("flow sizes go up to 4611686018427387905 bytes"),
            "{e}"
        );
        // The room poisson makes: the count, or the expectation and six sigma.
        let ws = FlowSizeCdf::builtin("websearch").unwrap();
        assert_eq!(poisson_capacity(&ws, 3, 0.5, 1, PoissonLimit::Flows(77)), Some(77));
        assert_eq!(poisson_capacity(&ws, 1, 0.5, 1, PoissonLimit::Flows(77)), None);
        let lambda = poisson_rate(&ws, 16, 0.5, 10_000_000_000);
        let expected = lambda * 0.1;
        let room = poisson_capacity(&ws, 16, 0.5, 10_000_000_000, PoissonLimit::Duration(100 * MS)).unwrap();
        assert_eq!(room, (expected + 6.0 * expected.sqrt() + 16.0).ceil() as u64);
        let flows = poisson(
            &ws,
            &hosts(16),
            0.5,
            10_000_000_000,
            0,
            PoissonLimit::Duration(100 * MS),
            3,
        )
        .unwrap();
        assert!((flows.len() as u64) < room && flows.capacity() as u64 == room);
    }

    #[test]
    fn replay_refuses_tcp_records_too_large() {
        let csv = format!(
            "{}\ntcp,10.0.0.1,40000,10.0.0.2,80,0,100.000001000,100.002000000,10,14540,4611686018427387905,...AP.S.,idle\n",
            tandem_wire::flow::CSV_HEADER
        );
        let records = tandem_wire::flow::read_csv(csv.as_bytes()).unwrap();
        let e = replay(&records, &hosts(2), 0, 1).unwrap_err();
        assert!(
            e.message
                .starts_with("record 1: 4611686018427387905 bytes of TCP payload"),
            "{e}"
        );
    }
}
