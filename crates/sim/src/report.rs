//! Run outputs: the `flows`, `drops` and `queues` tables, each written as CSV and as Parquet
//! from the same typed rows, and `summary.json`. All are written in a fixed order from
//! simulation state only, so the same scenario and seed give identical bytes.
//!
//! A float is rounded to the decimal places its CSV column prints ([`FLOW_DECIMALS`],
//! [`QUEUE_DECIMALS`]) before either file is written: the CSV and the Parquet file carry the
//! same values. Columns and types are documented in `docs/formats.md`.

use crate::sim::{QueueSample, Sim};
use crate::table::{AtomicFile, Column, ParquetStream, Table, TableError, ROW_GROUP_ROWS};
use crate::time::{as_secs, Time};
use crate::workload::FlowKind;
use serde_json::{json, Value};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Header of flows.csv (and the columns of flows.parquet, in order).
pub const FLOWS_HEADER: &str = "flow,kind,src,dst,bytes,start_s,end_s,fct_us,completed,failed,delivered,\
goodput_bps,segments_sent,retransmits,fast_recoveries,timeouts,syn_timeouts,out_of_order";

/// Decimal places of the float columns of flows.csv: nanoseconds for times in seconds and in
/// microseconds, whole bits per second for goodput.
pub const FLOW_DECIMALS: &[(&str, usize)] = &[("start_s", 9), ("end_s", 9), ("fct_us", 3), ("goodput_bps", 0)];

/// Decimal places of the float columns of queues.csv (nanoseconds).
pub const QUEUE_DECIMALS: &[(&str, usize)] = &[("time_s", 9)];

fn kind_name(k: &FlowKind) -> &'static str {
    match k {
        FlowKind::Bulk => "bulk",
        FlowKind::RequestResponse { .. } => "request-response",
        FlowKind::Transactions { .. } => "transactions",
        FlowKind::UdpCbr { .. } => "udp-cbr",
        FlowKind::UdpOnOff { .. } => "udp-onoff",
        FlowKind::UdpBurst { .. } => "udp-burst",
        FlowKind::UdpPoisson { .. } => "udp-poisson",
    }
}

/// Summary numbers of one run's flows.
#[derive(Debug, Clone, Default)]
pub struct FlowStats {
    /// Flows in the workload.
    pub flows: u64,
    /// Flows that completed before the end of the run.
    pub completed: u64,
    /// Flows whose connection failed.
    pub failed: u64,
    /// Application bytes delivered.
    pub delivered: u64,
    /// Completion times of completed flows, microseconds, sorted.
    pub fct_us: Vec<f64>,
    /// Sum of TCP retransmitted segments.
    pub retransmits: u64,
    /// Sum of fast recoveries.
    pub fast_recoveries: u64,
    /// Sum of data RTO timeouts.
    pub timeouts: u64,
    /// Sum of SYN timeouts.
    pub syn_timeouts: u64,
}

/// The `q`-quantile (0..1) of sorted values, nearest-rank; 0 when empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Decimal places of float column `name` in `decimals` (none listed: shortest round-trip form).
fn places(decimals: &[(&str, usize)], name: &str) -> Option<usize> {
    decimals.iter().find(|(n, _)| *n == name).map(|&(_, d)| d)
}

/// `x` as a CSV with `decimals` places prints it: the value both files carry.
fn fixed(x: f64, decimals: usize) -> f64 {
    format!("{x:.decimals$}").parse().unwrap_or(x)
}

/// Float column `name`, each value rounded to its CSV decimal places.
fn floats(decimals: &[(&str, usize)], name: &str, values: Vec<Option<f64>>) -> Column {
    let d = places(decimals, name).expect("every float column of a run table has its CSV decimal places");
    Column::Float64(values.into_iter().map(|v| v.map(|x| fixed(x, d))).collect())
}

fn uints(values: Vec<u64>) -> Column {
    Column::UInt64(values.into_iter().map(Some).collect())
}

fn strings(values: Vec<String>) -> Column {
    Column::Utf8(values.into_iter().map(Some).collect())
}

/// Adds a column whose name the table does not have yet (names are fixed below).
fn put(t: &mut Table, name: &str, column: Column, nullable: bool) {
    let added = if nullable {
        t.push_nullable(name, column)
    } else {
        t.push(name, column)
    };
    added.expect("run table columns are distinct and of one length");
}

/// The flows table (one row per flow of the workload, in flow order; the columns of
/// [`FLOWS_HEADER`]) and the run's flow totals.
pub fn flows_table(sim: &Sim) -> (Table, FlowStats) {
    let mut st = FlowStats::default();
    let (mut id, mut kind, mut src, mut dst, mut bytes) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut start, mut end, mut fct_us, mut completed, mut failed) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut delivered, mut goodput, mut segs, mut retx, mut fr) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut to, mut syn, mut ooo) = (vec![], vec![], vec![]);
    for (spec, r, stats) in sim.flow_records() {
        st.flows += 1;
        let (mut s_segs, mut s_retx, mut s_fr, mut s_to, mut s_syn, mut s_ooo) = (0, 0, 0, 0, 0, 0);
        for s in stats.into_iter().flatten() {
            s_segs += s.segments_sent;
            s_retx += s.retransmits;
            s_fr += s.fast_recoveries;
            s_to += s.data_timeouts;
            s_syn += s.syn_timeouts;
            s_ooo += s.out_of_order_arrivals;
        }
        st.retransmits += s_retx;
        st.fast_recoveries += s_fr;
        st.timeouts += s_to;
        st.syn_timeouts += s_syn;
        st.delivered += r.delivered;
        let fct: Option<Time> = r.end.map(|e| e.saturating_sub(r.start));
        if let Some(f) = fct {
            st.completed += 1;
            st.fct_us.push(f as f64 / 1e6);
        }
        if r.failed.is_some() {
            st.failed += 1;
        }
        id.push(u64::from(spec.id.0));
        kind.push(kind_name(&spec.kind).to_string());
        src.push(sim.nodes()[spec.src.0 as usize].name.clone());
        dst.push(sim.nodes()[spec.dst.0 as usize].name.clone());
        bytes.push(spec.bytes);
        start.push(Some(as_secs(r.start)));
        end.push(r.end.map(as_secs));
        fct_us.push(fct.map(|f| f as f64 / 1e6));
        completed.push(Some(r.end.is_some()));
        failed.push(r.failed.map(str::to_string));
        delivered.push(r.delivered);
        goodput.push(Some(
            fct.filter(|&f| f > 0)
                .map_or(0.0, |f| r.delivered as f64 * 8.0 / as_secs(f)),
        ));
        segs.push(s_segs);
        retx.push(s_retx);
        fr.push(s_fr);
        to.push(s_to);
        syn.push(s_syn);
        ooo.push(s_ooo);
    }
    st.fct_us.sort_by(f64::total_cmp);
    let d = FLOW_DECIMALS;
    let mut t = Table::new();
    put(&mut t, "flow", uints(id), false);
    put(&mut t, "kind", strings(kind), false);
    put(&mut t, "src", strings(src), false);
    put(&mut t, "dst", strings(dst), false);
    put(&mut t, "bytes", uints(bytes), false);
    put(&mut t, "start_s", floats(d, "start_s", start), false);
    put(&mut t, "end_s", floats(d, "end_s", end), true);
    put(&mut t, "fct_us", floats(d, "fct_us", fct_us), true);
    put(&mut t, "completed", Column::Bool(completed), false);
    put(&mut t, "failed", Column::Utf8(failed), true);
    put(&mut t, "delivered", uints(delivered), false);
    put(&mut t, "goodput_bps", floats(d, "goodput_bps", goodput), false);
    put(&mut t, "segments_sent", uints(segs), false);
    put(&mut t, "retransmits", uints(retx), false);
    put(&mut t, "fast_recoveries", uints(fr), false);
    put(&mut t, "timeouts", uints(to), false);
    put(&mut t, "syn_timeouts", uints(syn), false);
    put(&mut t, "out_of_order", uints(ooo), false);
    (t, st)
}

/// The drops table: one row per (node, port, reason) with packets and bytes, nodes in order,
/// ports in order, reasons in their fixed order; and the total packets dropped.
pub fn drops_table(sim: &Sim) -> (Table, u64) {
    let mut total = 0;
    let (mut node, mut port, mut reason, mut packets, mut bytes) = (vec![], vec![], vec![], vec![], vec![]);
    for n in sim.nodes() {
        for (i, p) in n.ports.iter().enumerate() {
            let mut drops = p.queues.stats.drops.clone();
            drops.sort_by_key(|d| d.0);
            for (r, pk, b) in drops {
                total += pk;
                node.push(n.name.clone());
                port.push(i as u64);
                reason.push(r.as_str().to_string());
                packets.push(pk);
                bytes.push(b);
            }
        }
    }
    let mut t = Table::new();
    put(&mut t, "node", strings(node), false);
    put(&mut t, "port", uints(port), false);
    put(&mut t, "reason", strings(reason), false);
    put(&mut t, "packets", uints(packets), false);
    put(&mut t, "bytes", uints(bytes), false);
    (t, total)
}

/// The queues table of some queue samples (of `sim.samples`, in order; only non-empty queues
/// are sampled).
pub fn queues_table(sim: &Sim, samples: &[QueueSample]) -> Table {
    let name = |s: &QueueSample| sim.nodes()[s.node.0 as usize].name.clone();
    let mut t = Table::new();
    put(
        &mut t,
        "time_s",
        floats(
            QUEUE_DECIMALS,
            "time_s",
            samples.iter().map(|s| Some(as_secs(s.time))).collect(),
        ),
        false,
    );
    put(&mut t, "node", strings(samples.iter().map(name).collect()), false);
    put(
        &mut t,
        "port",
        uints(samples.iter().map(|s| u64::from(s.port)).collect()),
        false,
    );
    put(&mut t, "bytes", uints(samples.iter().map(|s| s.bytes).collect()), false);
    put(
        &mut t,
        "packets",
        uints(samples.iter().map(|s| u64::from(s.packets)).collect()),
        false,
    );
    t
}

/// The CSV header line of a run table.
fn csv_header(t: &Table, w: &mut impl Write) -> io::Result<()> {
    let names: Vec<&str> = t.columns().iter().map(|(n, _)| n.as_str()).collect();
    writeln!(w, "{}", names.join(","))
}

/// The CSV lines of a run table: floats with their fixed decimal places, flags as 1 or 0, a
/// missing value as an empty cell, no quoting (no name holds a comma).
fn csv_rows(t: &Table, decimals: &[(&str, usize)], w: &mut impl Write) -> io::Result<()> {
    let places: Vec<Option<usize>> = t.columns().iter().map(|(n, _)| places(decimals, n)).collect();
    for i in 0..t.rows() {
        for (j, (_, column)) in t.columns().iter().enumerate() {
            if j > 0 {
                w.write_all(b",")?;
            }
            match column {
                Column::UInt64(v) => v[i].map_or(Ok(()), |x| write!(w, "{x}"))?,
                Column::Int64(v) | Column::TimestampNs(v) => v[i].map_or(Ok(()), |x| write!(w, "{x}"))?,
                Column::Float64(v) => match (v[i], places[j]) {
                    (Some(x), Some(d)) => write!(w, "{x:.d$}")?,
                    (Some(x), None) => write!(w, "{x}")?,
                    (None, _) => {}
                },
                Column::Utf8(v) => w.write_all(v[i].as_deref().unwrap_or("").as_bytes())?,
                Column::Bool(v) => v[i].map_or(Ok(()), |b| write!(w, "{}", u8::from(b)))?,
            }
        }
        writeln!(w)?;
    }
    Ok(())
}

/// Writes flows.csv and returns the totals.
pub fn write_flows(sim: &Sim, w: &mut impl Write) -> io::Result<FlowStats> {
    let (t, st) = flows_table(sim);
    csv_header(&t, w)?;
    csv_rows(&t, FLOW_DECIMALS, w)?;
    Ok(st)
}

/// Writes drops.csv: one line per (node, port, reason) with packets and bytes. Returns the
/// total packets dropped.
pub fn write_drops(sim: &Sim, w: &mut impl Write) -> io::Result<u64> {
    let (t, total) = drops_table(sim);
    csv_header(&t, w)?;
    csv_rows(&t, &[], w)?;
    Ok(total)
}

/// Writes queues.csv from the samples (only non-empty queues are sampled).
pub fn write_queues(sim: &Sim, w: &mut impl Write) -> io::Result<()> {
    csv_header(&queues_table(sim, &[]), w)?;
    for chunk in sim.samples.chunks(ROW_GROUP_ROWS) {
        csv_rows(&queues_table(sim, chunk), QUEUE_DECIMALS, w)?;
    }
    Ok(())
}

/// One run table being written as `NAME.csv` and `NAME.parquet`, rows to both at once.
struct TableFiles {
    csv: AtomicFile,
    csv_path: PathBuf,
    parquet: ParquetStream,
    decimals: &'static [(&'static str, usize)],
}

impl TableFiles {
    fn create(
        dir: &Path,
        name: &str,
        like: &Table,
        decimals: &'static [(&'static str, usize)],
    ) -> Result<TableFiles, TableError> {
        let csv_path = dir.join(format!("{name}.csv"));
        let mut csv = AtomicFile::create(&csv_path)?;
        csv_header(like, &mut csv).map_err(|e| TableError::Io(csv_path.clone(), e))?;
        let parquet = ParquetStream::create(&dir.join(format!("{name}.parquet")), like)?;
        Ok(TableFiles {
            csv,
            csv_path,
            parquet,
            decimals,
        })
    }

    fn write(&mut self, rows: &Table) -> Result<(), TableError> {
        csv_rows(rows, self.decimals, &mut self.csv).map_err(|e| TableError::Io(self.csv_path.clone(), e))?;
        self.parquet.write(rows)
    }

    fn finish(self) -> Result<(), TableError> {
        self.parquet.finish()?;
        self.csv.finish()
    }
}

/// Writes `flows.csv`/`flows.parquet`, `drops.csv`/`drops.parquet` and
/// `queues.csv`/`queues.parquet` into `dir`, each pair from the same rows and each file
/// renamed into place only once whole. Returns the flow totals and the packets dropped.
pub fn write_tables(sim: &Sim, dir: &Path) -> Result<(FlowStats, u64), TableError> {
    let (flows, stats) = flows_table(sim);
    let mut out = TableFiles::create(dir, "flows", &flows, FLOW_DECIMALS)?;
    out.write(&flows)?;
    out.finish()?;
    drop(flows);
    let (drops, dropped) = drops_table(sim);
    let mut out = TableFiles::create(dir, "drops", &drops, &[])?;
    out.write(&drops)?;
    out.finish()?;
    // Queue samples can run to millions: a row group at a time.
    let mut out = TableFiles::create(dir, "queues", &queues_table(sim, &[]), QUEUE_DECIMALS)?;
    for chunk in sim.samples.chunks(ROW_GROUP_ROWS) {
        out.write(&queues_table(sim, chunk))?;
    }
    out.finish()?;
    Ok((stats, dropped))
}

/// The `systems` section of `summary.json`: per `[[system]]` entry its kind and, per switch
/// (by name), the model's [`SwitchModel::system_counters`](crate::switch::SwitchModel::system_counters).
pub fn systems(sim: &Sim, placed: &[crate::scenario::system::PlacedSystem]) -> Value {
    let entries = placed
        .iter()
        .map(|p| {
            let mut switches = serde_json::Map::new();
            for &node in &p.switches {
                let mut counters = serde_json::Map::new();
                for (k, v) in sim.model(node).map(|m| m.system_counters()).unwrap_or_default() {
                    counters.insert(k.to_string(), json!(v));
                }
                switches.insert(sim.nodes()[node.0 as usize].name.clone(), Value::Object(counters));
            }
            json!({ "kind": p.kind, "switches": switches })
        })
        .collect();
    Value::Array(entries)
}

/// The summary object (also printed as the end-of-run table).
pub fn summary(sim: &Sim, name: &str, seed: u64, duration: Time, st: &FlowStats, drops: u64) -> Value {
    let mut marked = 0;
    let mut by_reason: std::collections::BTreeMap<&'static str, u64> = Default::default();
    let mut peak_queue = 0;
    let mut transmissions = 0;
    // Every port of every node, host NICs included: their drops count under their reason.
    for n in sim.nodes() {
        for p in &n.ports {
            marked += p.queues.stats.marked;
            peak_queue = peak_queue.max(p.queues.stats.peak_bytes);
            transmissions += p.queues.stats.tx_packets;
            for (r, pk, _) in &p.queues.stats.drops {
                *by_reason.entry(r.as_str()).or_default() += pk;
            }
        }
    }
    let secs = as_secs(duration).max(1e-12);
    let (_, peak_pkts) = sim.packets_in_flight();
    json!({
        "scenario": name,
        "seed": seed,
        "duration_s": as_secs(duration),
        "flows": st.flows,
        "completed": st.completed,
        "failed": st.failed,
        "delivered_bytes": st.delivered,
        "goodput_bps": (st.delivered as f64 * 8.0 / secs).round(),
        "fct_us": {
            "mean": if st.fct_us.is_empty() { 0.0 } else { st.fct_us.iter().sum::<f64>() / st.fct_us.len() as f64 },
            "p50": quantile(&st.fct_us, 0.5),
            "p99": quantile(&st.fct_us, 0.99),
            "max": st.fct_us.last().copied().unwrap_or(0.0),
        },
        "retransmits": st.retransmits,
        "fast_recoveries": st.fast_recoveries,
        "timeouts": st.timeouts,
        "syn_timeouts": st.syn_timeouts,
        "drops": drops,
        "drops_by_reason": by_reason,
        "ecn_marked": marked,
        "peak_queue_bytes": peak_queue,
        "events": sim.events_processed(),
        "link_transmissions": transmissions,
        "peak_packets_in_flight": peak_pkts,
    })
}
