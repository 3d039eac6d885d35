//! Flow records: unidirectional 5-tuple flows split by an idle timeout, in bounded memory.
//!
//! [`FlowTable`] is fed packets in capture order and hands out a [`FlowRecord`] whenever a flow
//! ends: when a packet arrives more than the idle timeout after the flow's last one, when a
//! periodic sweep finds it idle, when the table is full and it is among the least recently seen
//! (`evicted`), or at the end of the trace (`eof`). Memory is bounded by `max_flows`.
//!
//! The CSV form ([`CSV_HEADER`], [`FlowRecord::write_csv`], [`read_csv`]) is documented in
//! `docs/formats.md`; the simulator replays it.

use crate::decode::Ipv4Summary;
use crate::ipv4::IpProtocol;
use crate::tcp::Flags;
use rustc_hash::FxHashMap;
use std::io::{BufRead, Write};
use std::net::Ipv4Addr;

/// What identifies a flow: protocol, VLAN, addresses and ports, in one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowKey {
    /// IP protocol number.
    pub protocol: IpProtocol,
    /// Outermost VLAN ID (0 = untagged).
    pub vlan: u16,
    /// Source address.
    pub src: Ipv4Addr,
    /// Source port (0 where the protocol has none).
    pub src_port: u16,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Destination port (ICMP: type << 8 | code).
    pub dst_port: u16,
}

impl FlowKey {
    /// The key of a summarised IPv4 packet.
    pub fn of(ip: &Ipv4Summary, vlan: u16) -> FlowKey {
        FlowKey {
            protocol: ip.protocol,
            vlan,
            src: ip.src,
            src_port: ip.src_port,
            dst: ip.dst,
            dst_port: ip.dst_port,
        }
    }
}

/// Why a flow record was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// No packet for longer than the idle timeout.
    Idle,
    /// The trace ended.
    Eof,
    /// Pushed out because the table reached `max_flows`.
    Evicted,
}

impl EndReason {
    /// The CSV spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Idle => "idle",
            EndReason::Eof => "eof",
            EndReason::Evicted => "evicted",
        }
    }
}

/// One finished flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowRecord {
    /// The flow's identity.
    pub key: FlowKey,
    /// Capture time of the first packet, ns since the Unix epoch.
    pub first_ns: u64,
    /// Capture time of the last packet, ns since the Unix epoch.
    pub last_ns: u64,
    /// Packets.
    pub packets: u64,
    /// Bytes on the wire (frame lengths as captured, link header included).
    pub bytes: u64,
    /// Transport payload bytes as the headers state them (what the application sent,
    /// retransmissions included).
    pub payload_bytes: u64,
    /// OR of the TCP flags seen.
    pub tcp_flags: Flags,
    /// Why the record was closed.
    pub end: EndReason,
}

#[derive(Debug, Clone, Copy)]
struct FlowState {
    first_ns: u64,
    last_ns: u64,
    packets: u64,
    bytes: u64,
    payload_bytes: u64,
    tcp_flags: Flags,
}

impl FlowState {
    fn record(&self, key: FlowKey, end: EndReason) -> FlowRecord {
        FlowRecord {
            key,
            first_ns: self.first_ns,
            last_ns: self.last_ns,
            packets: self.packets,
            bytes: self.bytes,
            payload_bytes: self.payload_bytes,
            tcp_flags: self.tcp_flags,
            end,
        }
    }
}

/// Settings of a [`FlowTable`].
#[derive(Debug, Clone, Copy)]
pub struct FlowConfig {
    /// A gap longer than this ends a flow (nanoseconds).
    pub idle_timeout_ns: u64,
    /// Most flows held at once; past it the least recently seen quarter is evicted.
    pub max_flows: usize,
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig {
            idle_timeout_ns: 60_000_000_000,
            max_flows: 4_000_000,
        }
    }
}

/// Builds flow records from a stream of packets.
pub struct FlowTable {
    cfg: FlowConfig,
    flows: FxHashMap<FlowKey, FlowState>,
    next_sweep_ns: Option<u64>,
    evictions: u64,
}

impl FlowTable {
    /// An empty table.
    pub fn new(cfg: FlowConfig) -> FlowTable {
        FlowTable {
            cfg,
            flows: FxHashMap::default(),
            next_sweep_ns: None,
            evictions: 0,
        }
    }

    /// Flows currently open.
    pub fn open_flows(&self) -> usize {
        self.flows.len()
    }

    /// Flows closed early because the table was full.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    /// Accounts one packet; `emit` receives every record this closes.
    pub fn observe(
        &mut self,
        ts_ns: u64,
        key: FlowKey,
        frame_len: u32,
        payload_len: u16,
        tcp_flags: Flags,
        emit: &mut impl FnMut(FlowRecord),
    ) {
        let timeout = self.cfg.idle_timeout_ns;
        match self.next_sweep_ns {
            None => self.next_sweep_ns = Some(ts_ns.saturating_add(timeout.max(1))),
            Some(t) if ts_ns >= t => {
                self.sweep(ts_ns, emit);
                self.next_sweep_ns = Some(ts_ns.saturating_add(timeout.max(1)));
            }
            Some(_) => {}
        }
        if let Some(st) = self.flows.get_mut(&key) {
            if ts_ns.saturating_sub(st.last_ns) > timeout {
                emit(st.record(key, EndReason::Idle));
                *st = FlowState::start(ts_ns);
            }
            st.add(ts_ns, frame_len, payload_len, tcp_flags);
            return;
        }
        if self.flows.len() >= self.cfg.max_flows.max(1) {
            self.evict(emit);
        }
        let mut st = FlowState::start(ts_ns);
        st.add(ts_ns, frame_len, payload_len, tcp_flags);
        self.flows.insert(key, st);
    }

    /// Closes every flow idle at `now_ns`, in (first packet, key) order.
    fn sweep(&mut self, now_ns: u64, emit: &mut impl FnMut(FlowRecord)) {
        let timeout = self.cfg.idle_timeout_ns;
        let mut done: Vec<FlowRecord> = Vec::new();
        self.flows.retain(|k, st| {
            let idle = now_ns.saturating_sub(st.last_ns) > timeout;
            if idle {
                done.push(st.record(*k, EndReason::Idle));
            }
            !idle
        });
        emit_sorted(done, emit);
    }

    /// Closes the least recently seen quarter of the table.
    fn evict(&mut self, emit: &mut impl FnMut(FlowRecord)) {
        let mut by_age: Vec<(u64, FlowKey)> = self.flows.iter().map(|(k, st)| (st.last_ns, *k)).collect();
        let n = (by_age.len() / 4).max(1);
        by_age.select_nth_unstable(n - 1);
        let mut done = Vec::with_capacity(n);
        for (_, k) in &by_age[..n] {
            if let Some(st) = self.flows.remove(k) {
                done.push(st.record(*k, EndReason::Evicted));
            }
        }
        self.evictions += done.len() as u64;
        emit_sorted(done, emit);
    }

    /// Ends the trace: every open flow is closed (`eof`), in (first packet, key) order.
    pub fn finish(self, emit: &mut impl FnMut(FlowRecord)) {
        let done = self
            .flows
            .into_iter()
            .map(|(k, st)| st.record(k, EndReason::Eof))
            .collect();
        emit_sorted(done, emit);
    }
}

fn emit_sorted(mut done: Vec<FlowRecord>, emit: &mut impl FnMut(FlowRecord)) {
    done.sort_unstable_by_key(|r| (r.first_ns, r.key));
    done.into_iter().for_each(emit);
}

impl FlowState {
    fn start(ts_ns: u64) -> FlowState {
        FlowState {
            first_ns: ts_ns,
            last_ns: ts_ns,
            packets: 0,
            bytes: 0,
            payload_bytes: 0,
            tcp_flags: Flags(0),
        }
    }

    #[inline]
    fn add(&mut self, ts_ns: u64, frame_len: u32, payload_len: u16, flags: Flags) {
        self.last_ns = self.last_ns.max(ts_ns);
        self.first_ns = self.first_ns.min(ts_ns);
        self.packets += 1;
        self.bytes += u64::from(frame_len);
        self.payload_bytes += u64::from(payload_len);
        self.tcp_flags |= flags;
    }
}

/// The header line of the flow CSV.
pub const CSV_HEADER: &str =
    "proto,src_ip,src_port,dst_ip,dst_port,vlan,first_ts,last_ts,packets,bytes,payload_bytes,tcp_flags,end";

/// The `proto` spelling of flow records: `tcp`, `udp`, `icmp`, or the protocol number.
pub fn protocol_name(p: IpProtocol) -> std::borrow::Cow<'static, str> {
    match p {
        IpProtocol::TCP => "tcp".into(),
        IpProtocol::UDP => "udp".into(),
        IpProtocol::ICMP => "icmp".into(),
        IpProtocol(n) => n.to_string().into(),
    }
}

fn fmt_ts(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

impl FlowRecord {
    /// Writes the record as one CSV line (see [`CSV_HEADER`]).
    pub fn write_csv(&self, w: &mut impl Write) -> std::io::Result<()> {
        let k = &self.key;
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            protocol_name(k.protocol),
            k.src,
            k.src_port,
            k.dst,
            k.dst_port,
            k.vlan,
            fmt_ts(self.first_ns),
            fmt_ts(self.last_ns),
            self.packets,
            self.bytes,
            self.payload_bytes,
            self.tcp_flags,
            self.end.as_str()
        )
    }
}

/// A flow CSV line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvError {
    /// 1-based line number.
    pub line: usize,
    /// The column at fault.
    pub column: &'static str,
    /// What was wrong.
    pub message: String,
}

impl std::fmt::Display for CsvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for CsvError {}

fn parse_ts(s: &str) -> Option<u64> {
    let (sec, frac) = s.split_once('.').unwrap_or((s, "0"));
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scale = 10u64.pow(9 - frac.len() as u32);
    sec.parse::<u64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(frac.parse::<u64>().ok()? * scale)
}

fn parse_flags(s: &str) -> Option<Flags> {
    const ORDER: [(char, Flags); 8] = [
        ('C', Flags::CWR),
        ('E', Flags::ECE),
        ('U', Flags::URG),
        ('A', Flags::ACK),
        ('P', Flags::PSH),
        ('R', Flags::RST),
        ('S', Flags::SYN),
        ('F', Flags::FIN),
    ];
    if s.chars().count() != 8 {
        return None;
    }
    let mut f = Flags(0);
    for (c, (want, flag)) in s.chars().zip(ORDER) {
        match c {
            '.' => {}
            c if c == want => f |= flag,
            _ => return None,
        }
    }
    Some(f)
}

impl FlowRecord {
    /// Parses one CSV line (not the header); `line` is used in errors.
    pub fn parse_csv(text: &str, line: usize) -> Result<FlowRecord, CsvError> {
        let cols: Vec<&str> = text.trim_end_matches(['\r', '\n']).split(',').collect();
        let names: Vec<&'static str> = CSV_HEADER.split(',').collect();
        if cols.len() != names.len() {
            return Err(CsvError {
                line,
                column: "*",
                message: format!("expected {} columns, found {}", names.len(), cols.len()),
            });
        }
        let err = |i: usize, m: &str| CsvError {
            line,
            column: names[i],
            message: format!("{m}: {:?}", cols[i]),
        };
        let num = |i: usize| cols[i].parse::<u64>().map_err(|_| err(i, "not a whole number"));
        let port = |i: usize| cols[i].parse::<u16>().map_err(|_| err(i, "not a port number"));
        let ip = |i: usize| cols[i].parse::<Ipv4Addr>().map_err(|_| err(i, "not an IPv4 address"));
        let protocol = match cols[0] {
            "tcp" => IpProtocol::TCP,
            "udp" => IpProtocol::UDP,
            "icmp" => IpProtocol::ICMP,
            n => IpProtocol(n.parse().map_err(|_| err(0, "not a protocol name or number"))?),
        };
        let vlan = port(5)?;
        if vlan > 4095 {
            return Err(err(5, "VLAN ID above 4095"));
        }
        let first_ns = parse_ts(cols[6]).ok_or_else(|| err(6, "not a timestamp (seconds.nanoseconds)"))?;
        let last_ns = parse_ts(cols[7]).ok_or_else(|| err(7, "not a timestamp (seconds.nanoseconds)"))?;
        if last_ns < first_ns {
            return Err(err(7, "before first_ts"));
        }
        let end = match cols[12] {
            "idle" => EndReason::Idle,
            "eof" => EndReason::Eof,
            "evicted" => EndReason::Evicted,
            _ => return Err(err(12, "not one of idle, eof, evicted")),
        };
        Ok(FlowRecord {
            key: FlowKey {
                protocol,
                vlan,
                src: ip(1)?,
                src_port: port(2)?,
                dst: ip(3)?,
                dst_port: port(4)?,
            },
            first_ns,
            last_ns,
            packets: num(8)?,
            bytes: num(9)?,
            payload_bytes: num(10)?,
            tcp_flags: parse_flags(cols[11]).ok_or_else(|| err(11, "not 8 flag letters CEUAPRSF or '.'"))?,
            end,
        })
    }
}

/// Reads a flow CSV written by `tandem pcap flows --csv` (header line required).
pub fn read_csv(reader: impl BufRead) -> Result<Vec<FlowRecord>, CsvError> {
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| CsvError {
            line: i + 1,
            column: "*",
            message: e.to_string(),
        })?;
        if i == 0 {
            if line.trim_end() != CSV_HEADER {
                return Err(CsvError {
                    line: 1,
                    column: "*",
                    message: format!("header must be `{CSV_HEADER}`"),
                });
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        out.push(FlowRecord::parse_csv(&line, i + 1)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(p: u16) -> FlowKey {
        FlowKey {
            protocol: IpProtocol::TCP,
            vlan: 0,
            src: Ipv4Addr::new(10, 0, 0, 1),
            src_port: p,
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dst_port: 80,
        }
    }

    const S: u64 = 1_000_000_000;

    fn run(cfg: FlowConfig, pkts: &[(u64, u16)]) -> Vec<FlowRecord> {
        let mut t = FlowTable::new(cfg);
        let mut out = Vec::new();
        for &(ts, p) in pkts {
            t.observe(ts, key(p), 100, 40, Flags::ACK, &mut |r| out.push(r));
        }
        t.finish(&mut |r| out.push(r));
        out
    }

    #[test]
    fn idle_gap_splits_a_flow() {
        let cfg = FlowConfig {
            idle_timeout_ns: 60 * S,
            max_flows: 10,
        };
        let out = run(cfg, &[(0, 1), (10 * S, 1), (71 * S, 1), (72 * S, 1)]);
        assert_eq!(out.len(), 2);
        assert_eq!(
            (out[0].packets, out[0].first_ns, out[0].last_ns, out[0].end),
            (2, 0, 10 * S, EndReason::Idle)
        );
        assert_eq!(
            (out[1].packets, out[1].first_ns, out[1].end),
            (2, 71 * S, EndReason::Eof)
        );
        assert_eq!(out[1].bytes, 200);
        assert_eq!(out[1].payload_bytes, 80);
    }

    #[test]
    fn sweep_closes_idle_flows_and_bounds_memory() {
        let cfg = FlowConfig {
            idle_timeout_ns: S,
            max_flows: 1000,
        };
        let mut t = FlowTable::new(cfg);
        let mut out = Vec::new();
        for i in 0..100u64 {
            t.observe(i * S / 10, key(i as u16), 60, 0, Flags(0), &mut |r| out.push(r));
        }
        // Packets are 0.1 s apart and time out after 1 s: never more than ~20 open at once.
        assert!(t.open_flows() <= 21, "{}", t.open_flows());
        assert!(out.iter().all(|r| r.end == EndReason::Idle));
        assert!(out.windows(2).all(|w| w[0].first_ns <= w[1].first_ns));
    }

    #[test]
    fn full_table_evicts_least_recent() {
        let cfg = FlowConfig {
            idle_timeout_ns: 1000 * S,
            max_flows: 8,
        };
        let pkts: Vec<(u64, u16)> = (0..20).map(|i| (i, i as u16)).collect();
        let out = run(cfg, &pkts);
        assert_eq!(out.len(), 20);
        let evicted: Vec<u16> = out
            .iter()
            .filter(|r| r.end == EndReason::Evicted)
            .map(|r| r.key.src_port)
            .collect();
        assert!(!evicted.is_empty());
        assert!(evicted.iter().all(|&p| p < 16));
    }

    #[test]
    fn csv_round_trip_and_errors() {
        let r = FlowRecord {
            key: key(5),
            first_ns: 1_700_000_000_000_000_001,
            last_ns: 1_700_000_000_500_000_000,
            packets: 3,
            bytes: 300,
            payload_bytes: 120,
            tcp_flags: Flags::SYN | Flags::ACK | Flags::FIN,
            end: EndReason::Idle,
        };
        let mut buf = format!("{CSV_HEADER}\n").into_bytes();
        r.write_csv(&mut buf).unwrap();
        let text = String::from_utf8(buf.clone()).unwrap();
        assert!(text.ends_with(
            "tcp,10.0.0.1,5,10.0.0.2,80,0,1700000000.000000001,1700000000.500000000,3,300,120,...A..SF,idle\n"
        ));
        assert_eq!(read_csv(&buf[..]).unwrap(), vec![r]);
        let bad = format!("{CSV_HEADER}\ntcp,10.0.0.1,5,10.0.0.x,80,0,1.0,2.0,1,1,1,........,eof\n");
        let e = read_csv(bad.as_bytes()).unwrap_err();
        assert_eq!((e.line, e.column), (2, "dst_ip"));
        assert!(read_csv("nope\n".as_bytes()).is_err());
    }

    proptest! {
        #[test]
        fn csv_round_trip_any(p in any::<u8>(), v in 0u16..4096, s in any::<[u8;4]>(), sp in any::<u16>(), d in any::<[u8;4]>(), dp in any::<u16>(),
                              first in any::<u32>(), dur in any::<u32>(), n in any::<u64>(), b in any::<u64>(), pb in any::<u64>(), fl in 0u16..256) {
            let r = FlowRecord {
                key: FlowKey { protocol: IpProtocol(p), vlan: v, src: s.into(), src_port: sp, dst: d.into(), dst_port: dp },
                first_ns: u64::from(first) * 977, last_ns: u64::from(first) * 977 + u64::from(dur),
                packets: n, bytes: b, payload_bytes: pb, tcp_flags: Flags(fl), end: EndReason::Evicted,
            };
            let mut buf = Vec::new();
            r.write_csv(&mut buf).unwrap();
            let line = String::from_utf8(buf).unwrap();
            prop_assert_eq!(FlowRecord::parse_csv(&line, 2).unwrap(), r);
        }

        #[test]
        fn parse_never_panics(line in ".{0,120}") {
            let _ = FlowRecord::parse_csv(&line, 1);
        }
    }
}
