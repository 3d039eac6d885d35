//! `tandem pcap flows` and `tandem pcap summary`.

use crate::error::CliError;
use crate::progress::{CountingReader, Progress};
use crate::units::{fmt_bps, fmt_bytes, fmt_duration_ns};
use rustc_hash::FxHashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::Ipv4Addr;
use std::path::Path;
use std::time::Instant;
use tandem_sim::table::TempPath;
use tandem_sim::table::{Column, ParquetStream, Table, TableError, ROW_GROUP_ROWS};
use tandem_wire::decode::{self, Network};
use tandem_wire::flow::{protocol_name, EndReason, FlowConfig, FlowKey, FlowRecord, FlowTable, CSV_HEADER};
use tandem_wire::pcap::{TraceError, TraceReader};
use tandem_wire::IpProtocol;

/// Packets between progress updates.
const TICK: u64 = 1 << 16;

type Reader = TraceReader<CountingReader<File>>;

fn open(path: &Path, quiet: bool) -> Result<(Reader, Progress), CliError> {
    let file = crate::paths::open_input(path)?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let (counting, read) = CountingReader::new(file);
    let reader = TraceReader::new(counting).map_err(|e| trace_error(path, e))?;
    Ok((reader, Progress::new(len, read, quiet)))
}

fn trace_error(path: &Path, e: TraceError) -> CliError {
    match e {
        TraceError::Io(io) => CliError::runtime(path, io),
        other => CliError::input(path, other),
    }
}

fn write_error(path: &Path, e: std::io::Error) -> CliError {
    CliError::runtime(path, e)
}

/// Where flow records go.
enum Sink {
    Csv(BufWriter<Box<dyn Write>>),
    Table {
        out: BufWriter<Box<dyn Write>>,
        origin_ns: Option<u64>,
    },
}

impl Sink {
    fn write(&mut self, r: &FlowRecord) -> std::io::Result<()> {
        match self {
            Sink::Csv(w) => r.write_csv(w),
            Sink::Table { out, origin_ns } => {
                let origin = *origin_ns.get_or_insert(r.first_ns);
                let k = &r.key;
                let start = r.first_ns.saturating_sub(origin) as f64 / 1e9;
                let dur = (r.last_ns - r.first_ns) as f64 / 1e9;
                let src = format!("{}:{}", k.src, k.src_port);
                let dst = format!("{}:{}", k.dst, k.dst_port);
                writeln!(
                    out,
                    "{:<5} {:>21} -> {:<21} {:>4} {:>12.6} {:>11.6} {:>9} {:>12} {} {}",
                    proto(k.protocol),
                    src,
                    dst,
                    k.vlan,
                    start,
                    dur,
                    r.packets,
                    r.bytes,
                    r.tcp_flags,
                    r.end.as_str()
                )
            }
        }
    }
}

fn proto(p: IpProtocol) -> String {
    p.to_string()
}

/// What [`scan_flows`] counted.
pub struct ScanCounts {
    /// Packets read.
    pub packets: u64,
    /// Packets that were not IPv4.
    pub non_ipv4: u64,
    /// Flows closed early because the table was full.
    pub evictions: u64,
}

/// Folds every packet of `reader` into flow records (ended by `timeout_ns` idle, at most
/// `max_flows` open), handing each record to `emit` as it ends; the loop of `tandem pcap flows`.
fn scan_flows(
    reader: &mut Reader,
    file: &Path,
    timeout_ns: u64,
    max_flows: usize,
    progress: &Progress,
    emit: &mut impl FnMut(FlowRecord),
) -> Result<ScanCounts, CliError> {
    let mut table = FlowTable::new(FlowConfig {
        idle_timeout_ns: timeout_ns,
        max_flows,
    });
    let (mut packets, mut non_ipv4) = (0u64, 0u64);
    while let Some(pkt) = reader.next_packet() {
        let pkt = pkt.map_err(|e| trace_error(file, e))?;
        packets += 1;
        let s = decode::summarize(pkt.linktype, pkt.data);
        match s.ipv4 {
            Some(ip) => table.observe(
                pkt.ts_ns,
                FlowKey::of(&ip, s.vlan),
                pkt.orig_len,
                ip.l4_payload_len,
                ip.tcp_flags,
                emit,
            ),
            None => non_ipv4 += 1,
        }
        if packets % TICK == 0 {
            progress.tick(packets);
        }
    }
    let evictions = table.evictions();
    table.finish(emit);
    Ok(ScanCounts {
        packets,
        non_ipv4,
        evictions,
    })
}

/// Calls `each` with the time (ns), flow key and frame length of every IPv4 packet of a
/// trace, in file order; an error from `each` stops the scan.
pub fn for_each_ipv4_packet(
    file: &Path,
    quiet: bool,
    each: &mut impl FnMut(u64, FlowKey, u64) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let (mut reader, progress) = open(file, quiet)?;
    let mut packets = 0u64;
    while let Some(pkt) = reader.next_packet() {
        let pkt = pkt.map_err(|e| trace_error(file, e))?;
        packets += 1;
        let s = decode::summarize(pkt.linktype, pkt.data);
        if let Some(ip) = s.ipv4 {
            each(pkt.ts_ns, FlowKey::of(&ip, s.vlan), u64::from(pkt.orig_len))?;
        }
        if packets.is_multiple_of(TICK) {
            progress.tick(packets);
        }
    }
    progress.finish();
    Ok(())
}

/// Flow records of a pcap/pcapng trace, extracted exactly as `tandem pcap flows` does.
pub fn trace_flows(file: &Path, timeout_ns: u64, max_flows: usize, quiet: bool) -> Result<Vec<FlowRecord>, CliError> {
    let (mut reader, progress) = open(file, quiet)?;
    let mut out = Vec::new();
    scan_flows(&mut reader, file, timeout_ns, max_flows, &progress, &mut |r| {
        out.push(r)
    })?;
    progress.finish();
    Ok(out)
}

/// Flow records as the typed table of `tandem pcap flows --parquet`: the columns of the CSV
/// ([`CSV_HEADER`]), in order, with capture times as UTC nanosecond timestamps, numbers as
/// unsigned 64-bit integers and names, addresses and flags as strings (docs/formats.md).
/// Fails on a capture time past 2262-04-11, the end of a signed 64-bit nanosecond timestamp.
pub fn flow_records_table(records: &[FlowRecord]) -> Result<Table, String> {
    let ts = |ns: u64| {
        i64::try_from(ns)
            .map(Some)
            .map_err(|_| format!("capture time {ns} ns since the epoch is past the end of a Parquet timestamp (2262)"))
    };
    let uints = |f: &dyn Fn(&FlowRecord) -> u64| Column::UInt64(records.iter().map(|r| Some(f(r))).collect());
    let strings = |f: &dyn Fn(&FlowRecord) -> String| Column::Utf8(records.iter().map(|r| Some(f(r))).collect());
    let columns = [
        ("proto", strings(&|r| protocol_name(r.key.protocol).into_owned())),
        ("src_ip", strings(&|r| r.key.src.to_string())),
        ("src_port", uints(&|r| u64::from(r.key.src_port))),
        ("dst_ip", strings(&|r| r.key.dst.to_string())),
        ("dst_port", uints(&|r| u64::from(r.key.dst_port))),
        ("vlan", uints(&|r| u64::from(r.key.vlan))),
        (
            "first_ts",
            Column::TimestampNs(records.iter().map(|r| ts(r.first_ns)).collect::<Result<_, _>>()?),
        ),
        (
            "last_ts",
            Column::TimestampNs(records.iter().map(|r| ts(r.last_ns)).collect::<Result<_, _>>()?),
        ),
        ("packets", uints(&|r| r.packets)),
        ("bytes", uints(&|r| r.bytes)),
        ("payload_bytes", uints(&|r| r.payload_bytes)),
        ("tcp_flags", strings(&|r| r.tcp_flags.to_string())),
        ("end", strings(&|r| r.end.as_str().to_string())),
    ];
    let mut t = Table::new();
    for (name, column) in columns {
        t.push(name, column).map_err(|e| e.to_string())?;
    }
    Ok(t)
}

/// Flow records on their way to a Parquet file, a row group at a time.
struct ParquetSink {
    stream: ParquetStream,
    pending: Vec<FlowRecord>,
}

impl ParquetSink {
    /// Opens `path` (a temporary file beside it until the end); a path that cannot be written
    /// is the user's mistake.
    fn create(path: &Path) -> Result<ParquetSink, CliError> {
        if path == Path::new("-") {
            return Err(CliError::Input(
                "--parquet -: Parquet is written to a file, not to standard output".into(),
            ));
        }
        let like = flow_records_table(&[]).map_err(CliError::Runtime)?;
        let stream = ParquetStream::create(path, &like).map_err(|e| match e {
            TableError::Io(..) => CliError::Input(e.to_string()),
            other => CliError::Runtime(other.to_string()),
        })?;
        Ok(ParquetSink {
            stream,
            pending: Vec::with_capacity(ROW_GROUP_ROWS),
        })
    }

    fn push(&mut self, r: FlowRecord, trace: &Path) -> Result<(), CliError> {
        self.pending.push(r);
        if self.pending.len() >= ROW_GROUP_ROWS {
            self.flush(trace)?;
        }
        Ok(())
    }

    fn flush(&mut self, trace: &Path) -> Result<(), CliError> {
        let rows = flow_records_table(&self.pending).map_err(|e| CliError::input(trace, e))?;
        self.pending.clear();
        self.stream.write(&rows).map_err(|e| CliError::Runtime(e.to_string()))
    }

    fn finish(mut self, trace: &Path) -> Result<(), CliError> {
        self.flush(trace)?;
        self.stream.finish().map_err(|e| CliError::Runtime(e.to_string()))
    }
}

/// `tandem pcap flows`: flow records as CSV (`csv`, `-` for standard output) and/or Parquet
/// (`parquet`); with neither, a table on standard output. Records are written as flows end,
/// so memory holds the open flows and one row group of records, whatever the trace's length.
pub fn flows(
    file: &Path,
    csv: Option<&Path>,
    parquet: Option<&Path>,
    timeout_ns: u64,
    max_flows: usize,
    quiet: bool,
) -> Result<(), CliError> {
    let (mut reader, progress) = open(file, quiet)?;
    // The Parquet file first: a path it cannot have stops the command before anything is written.
    let mut parquet_sink = parquet.map(ParquetSink::create).transpose()?;
    let out_path = csv.unwrap_or(Path::new("-"));
    let mut csv_tmp: Option<TempPath> = None;
    if csv.is_some_and(Path::is_dir) {
        return Err(CliError::input(out_path, "is a folder"));
    }
    let mut sink = if csv.is_none() && parquet.is_some() {
        None
    } else {
        let dest: Box<dyn Write> = if out_path == Path::new("-") {
            Box::new(std::io::stdout().lock())
        } else {
            // Written under a temporary name and renamed when complete: a failed or cut
            // trace leaves no partial CSV.
            let tmp = csv_tmp.insert(TempPath::new(out_path));
            Box::new(File::create(tmp.path()).map_err(|e| CliError::input(out_path, e))?)
        };
        let mut out = BufWriter::with_capacity(1 << 20, dest);
        Some(if csv.is_some() {
            writeln!(out, "{CSV_HEADER}").map_err(|e| write_error(out_path, e))?;
            Sink::Csv(out)
        } else {
            writeln!(
                out,
                "{:<5} {:>21}    {:<21} {:>4} {:>12} {:>11} {:>9} {:>12} {:<8} end",
                "proto", "source", "destination", "vlan", "start(s)", "dur(s)", "packets", "bytes", "flags"
            )
            .map_err(|e| write_error(out_path, e))?;
            Sink::Table { out, origin_ns: None }
        })
    };

    let started = Instant::now();
    let mut counts = [0u64; 3];
    let mut write_err: Option<std::io::Error> = None;
    let mut parquet_err: Option<CliError> = None;
    let scan = scan_flows(
        &mut reader,
        file,
        timeout_ns,
        max_flows,
        &progress,
        &mut |r: FlowRecord| {
            counts[r.end as usize] += 1;
            if let (Some(s), None) = (&mut sink, &write_err) {
                if let Err(e) = s.write(&r) {
                    write_err = Some(e);
                }
            }
            if let (Some(p), None) = (&mut parquet_sink, &parquet_err) {
                if let Err(e) = p.push(r, file) {
                    parquet_err = Some(e);
                }
            }
        },
    )?;
    let (packets, non_ipv4, evictions) = (scan.packets, scan.non_ipv4, scan.evictions);
    progress.finish();
    if let Some(e) = write_err {
        return Err(write_error(out_path, e));
    }
    if let Some(e) = parquet_err {
        return Err(e);
    }
    if let Some(p) = parquet_sink {
        p.finish(file)?;
    }
    match sink {
        Some(Sink::Csv(mut w) | Sink::Table { out: mut w, .. }) => w.flush().map_err(|e| write_error(out_path, e))?,
        None => {}
    }
    if let Some(t) = csv_tmp {
        t.commit().map_err(|e| write_error(out_path, e))?;
    }
    let secs = started.elapsed().as_secs_f64();
    if !quiet {
        let total: u64 = counts.iter().sum();
        eprintln!(
            "{}: {packets} packets ({non_ipv4} not IPv4), {total} flows ({} idle, {} eof, {} evicted{}); {:.2} s, {:.2} Mpkt/s",
            file.display(),
            counts[EndReason::Idle as usize],
            counts[EndReason::Eof as usize],
            counts[EndReason::Evicted as usize],
            if evictions > 0 { ": raise --max-flows to avoid early closes" } else { "" },
            secs,
            packets as f64 / secs.max(1e-9) / 1e6
        );
    }
    Ok(())
}

#[derive(Default, Clone, Copy)]
struct Tally {
    packets: u64,
    bytes: u64,
}

impl Tally {
    fn add(&mut self, bytes: u32) {
        self.packets += 1;
        self.bytes += u64::from(bytes);
    }
}

/// `tandem pcap summary`.
pub fn summary(file: &Path, top: usize, json: bool, quiet: bool) -> Result<(), CliError> {
    let (mut reader, progress) = open(file, quiet)?;
    let mut total = Tally::default();
    let (mut first, mut last) = (u64::MAX, 0u64);
    let mut network: Vec<(String, Tally)> = Vec::new();
    let mut transport: Vec<(String, Tally)> = Vec::new();
    let (mut tagged, mut fragments, mut snapped) = (0u64, 0u64, 0u64);
    let mut talkers: FxHashMap<Ipv4Addr, Tally> = FxHashMap::default();
    let bump =
        |list: &mut Vec<(String, Tally)>, name: String, bytes: u32| match list.iter_mut().find(|(n, _)| *n == name) {
            Some((_, t)) => t.add(bytes),
            None => {
                let mut t = Tally::default();
                t.add(bytes);
                list.push((name, t));
            }
        };
    while let Some(pkt) = reader.next_packet() {
        let pkt = pkt.map_err(|e| trace_error(file, e))?;
        total.add(pkt.orig_len);
        first = first.min(pkt.ts_ns);
        last = last.max(pkt.ts_ns);
        if (pkt.data.len() as u32) < pkt.orig_len {
            snapped += 1;
        }
        let s = decode::summarize(pkt.linktype, pkt.data);
        let net = match s.network {
            Network::Ipv4 => "IPv4".to_string(),
            Network::Ipv6 => "IPv6".to_string(),
            Network::Arp => "ARP".to_string(),
            Network::MacControl => "MAC control (PAUSE)".to_string(),
            Network::Other(t) => format!("EtherType {t}"),
            Network::UnknownLink(l) => format!("link type {l} (not decoded)"),
            Network::Malformed => "malformed".to_string(),
        };
        bump(&mut network, net, pkt.orig_len);
        if s.vlan != 0 {
            tagged += 1;
        }
        if let Some(ip) = s.ipv4 {
            bump(&mut transport, ip.protocol.to_string(), pkt.orig_len);
            if ip.fragment {
                fragments += 1;
            }
            talkers.entry(ip.src).or_default().add(pkt.orig_len);
        }
        if total.packets % TICK == 0 {
            progress.tick(total.packets);
        }
    }
    progress.finish();
    let duration_ns = last.saturating_sub(first);
    let sort = |v: &mut Vec<(String, Tally)>| v.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then(a.0.cmp(&b.0)));
    sort(&mut network);
    sort(&mut transport);
    let mut top_talkers: Vec<(Ipv4Addr, Tally)> = talkers.into_iter().collect();
    top_talkers.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then(a.0.cmp(&b.0)));
    let distinct_sources = top_talkers.len();
    top_talkers.truncate(top);
    let secs = duration_ns as f64 / 1e9;
    let pct = |b: u64| {
        if total.bytes == 0 {
            0.0
        } else {
            100.0 * b as f64 / total.bytes as f64
        }
    };

    let mut out = std::io::stdout().lock();
    let res = if json {
        let mix = |v: &[(String, Tally)]| {
            v.iter()
                .map(|(n, t)| serde_json::json!({"name": n, "packets": t.packets, "bytes": t.bytes}))
                .collect::<Vec<_>>()
        };
        let doc = serde_json::json!({
            "file": file.display().to_string(),
            "packets": total.packets,
            "bytes": total.bytes,
            "first_ts_ns": if total.packets > 0 { first } else { 0 },
            "last_ts_ns": last,
            "duration_ns": duration_ns,
            "vlan_tagged_packets": tagged,
            "ipv4_fragments": fragments,
            "snapped_packets": snapped,
            "network": mix(&network),
            "ipv4_protocols": mix(&transport),
            "distinct_ipv4_sources": distinct_sources,
            "top_talkers": top_talkers.iter().map(|(ip, t)| serde_json::json!({"src": ip.to_string(), "packets": t.packets, "bytes": t.bytes})).collect::<Vec<_>>(),
        });
        writeln!(out, "{doc:#}")
    } else {
        let mut text = String::new();
        use std::fmt::Write as _;
        let _ = writeln!(text, "file        {}", file.display());
        let _ = writeln!(text, "packets     {}", total.packets);
        let _ = writeln!(text, "bytes       {} ({})", total.bytes, fmt_bytes(total.bytes));
        let _ = writeln!(text, "duration    {}", fmt_duration_ns(duration_ns));
        if secs > 0.0 {
            let _ = writeln!(
                text,
                "mean rate   {:.0} pkt/s, {}",
                total.packets as f64 / secs,
                fmt_bps(total.bytes as f64 * 8.0 / secs)
            );
        }
        let _ = writeln!(text, "802.1Q      {tagged} tagged packets");
        let _ = writeln!(text, "fragments   {fragments} IPv4 fragments");
        if snapped > 0 {
            let _ = writeln!(
                text,
                "snapped     {snapped} packets captured short of their wire length"
            );
        }
        let _ = writeln!(
            text,
            "\nnetwork layer                    packets          bytes   bytes%"
        );
        for (n, t) in &network {
            let _ = writeln!(
                text,
                "  {n:<28} {:>11} {:>14} {:>7.2}",
                t.packets,
                t.bytes,
                pct(t.bytes)
            );
        }
        let _ = writeln!(
            text,
            "\nIPv4 protocol                    packets          bytes   bytes%"
        );
        for (n, t) in &transport {
            let _ = writeln!(
                text,
                "  {n:<28} {:>11} {:>14} {:>7.2}",
                t.packets,
                t.bytes,
                pct(t.bytes)
            );
        }
        let _ = writeln!(text, "\ntop talkers by bytes sent ({distinct_sources} IPv4 sources)");
        for (ip, t) in &top_talkers {
            let _ = writeln!(
                text,
                "  {:<28} {:>11} {:>14} {:>7.2}",
                ip.to_string(),
                t.packets,
                t.bytes,
                pct(t.bytes)
            );
        }
        out.write_all(text.as_bytes())
    };
    res.map_err(|e| CliError::Runtime(format!("standard output: {e}")))
}
