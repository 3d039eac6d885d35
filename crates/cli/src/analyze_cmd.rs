//! `tandem analyze offload`: active flows and the traffic offload ratio per interval (TCPU
//! paper, Figures 1 and 2). The analysis is `tandem_tcpu::analysis`; this reads the input and
//! writes the files. `tandem analyze coswitch`: a user's flows through CoSwitch's testbed
//! model (`tandem_coswitch::model::replay`). `tandem analyze cam`: CAM entries per Axon port
//! (`tandem_axon::cam_analysis`).

use crate::error::CliError;
use crate::paths::OutDir;
use crate::pcap_cmd;
use crate::units::fmt_bytes;
use std::fmt::Write as _;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use tandem_sim::plot::{Axis, Figure, Series};
use tandem_tcpu::analysis::{self, AnalysisError, FlowSpan, IntervalBytes, OffloadAnalysis};
use tandem_wire::flow::{read_csv, FlowRecord};
use tandem_wire::pcap::{TraceError, TraceReader};

/// Idle timeout used to split a trace into flows (the `tandem pcap flows` default; the paper
/// counts active flows "with 60-second timeout").
const TRACE_TIMEOUT_NS: u64 = 60_000_000_000;
/// Most open flows while reading a trace (the `tandem pcap flows` default).
const TRACE_MAX_FLOWS: usize = 4_000_000;

/// Whether the file is a pcap or pcapng trace (the trace reader's own magic-number check); a
/// file that starts like one but has a broken header is an error.
fn is_trace(path: &Path) -> Result<bool, CliError> {
    let f = crate::paths::open_input(path)?;
    match TraceReader::new(f) {
        Ok(_) => Ok(true),
        Err(TraceError::NotATrace(_)) => Ok(false),
        Err(e) => Err(CliError::input(path, e)),
    }
}

/// Flow records from a flow CSV.
fn load_csv(path: &Path) -> Result<Vec<FlowRecord>, CliError> {
    let f = crate::paths::open_input(path)?;
    read_csv(BufReader::new(f)).map_err(|e| CliError::input(path, format!("not a flow CSV or a trace: {e}")))
}

/// Flow records of a trace and its analysis with exact per-packet bytes per interval (a
/// second pass over the trace).
fn analyze_trace(
    file: &Path,
    ks: &[usize],
    interval_ns: u64,
    quiet: bool,
) -> Result<(Vec<FlowRecord>, OffloadAnalysis), CliError> {
    let records = pcap_cmd::trace_flows(file, TRACE_TIMEOUT_NS, TRACE_MAX_FLOWS, quiet)?;
    let spans = spans(&records);
    let origin = analysis::origin(&spans).ok_or_else(|| CliError::input(file, AnalysisError::NoFlows))?;
    let mut bytes = IntervalBytes::new(origin, interval_ns).map_err(|e| CliError::input(file, e))?;
    pcap_cmd::for_each_ipv4_packet(file, quiet, &mut |ts, key, len| {
        bytes.add(ts, key, len).map_err(|e| CliError::input(file, e))
    })?;
    let a = analysis::analyze_exact(&spans, ks, bytes).map_err(|e| CliError::input(file, e))?;
    Ok((records, a))
}

fn spans(records: &[FlowRecord]) -> Vec<FlowSpan> {
    records
        .iter()
        .map(|r| FlowSpan {
            first_ns: r.first_ns,
            last_ns: r.last_ns,
            bytes: r.bytes,
        })
        .collect()
}

fn write(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text).map_err(|e| CliError::runtime(path, e))
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{:.1}%", v * 100.0))
}

/// `tandem analyze offload`.
pub fn offload(file: &Path, ks: &[usize], interval_ns: u64, out: Option<&Path>, quiet: bool) -> Result<(), CliError> {
    let is_trace = is_trace(file)?;
    let out_dir = OutDir::prepare(&out_or_default(out, file, "flows", "offload"))?;
    let (records, a) = if is_trace {
        analyze_trace(file, ks, interval_ns, quiet)?
    } else {
        let records = load_csv(file)?;
        let a = analysis::analyze(&spans(&records), interval_ns, ks).map_err(|e| CliError::input(file, e))?;
        (records, a)
    };
    write_outputs(&a, out_dir.path())?;
    print_summary(file, &records, &a, out_dir.path());
    out_dir.keep();
    Ok(())
}

/// `out`, or `results/PREFIX-STEM` after the input file's stem (`fallback` without one).
fn out_or_default(out: Option<&Path>, file: &Path, fallback: &str, prefix: &str) -> PathBuf {
    out.map(Path::to_path_buf).unwrap_or_else(|| {
        let stem = file
            .file_stem()
            .map_or(fallback.into(), |s| s.to_string_lossy().into_owned());
        Path::new("results").join(format!("{prefix}-{stem}"))
    })
}

fn tfor_values(a: &OffloadAnalysis, j: usize) -> Vec<f64> {
    a.intervals
        .iter()
        .filter_map(|i| i.tfor.get(j).copied().flatten())
        .collect()
}

fn write_outputs(a: &OffloadAnalysis, dir: &Path) -> Result<(), CliError> {
    let mut csv = String::from("start_s,active_flows,bytes");
    for k in &a.ks {
        let _ = write!(csv, ",tfor_k{k}");
    }
    csv.push('\n');
    let origin = a.intervals.first().map_or(0, |i| i.start_ns);
    for i in &a.intervals {
        let _ = write!(
            csv,
            "{:.9},{},{:.0}",
            (i.start_ns - origin) as f64 / 1e9,
            i.active_flows,
            i.bytes
        );
        for t in &i.tfor {
            match t {
                Some(v) => {
                    let _ = write!(csv, ",{v:.6}");
                }
                None => csv.push(','),
            }
        }
        csv.push('\n');
    }
    write(&dir.join("intervals.csv"), &csv)?;

    let active: Vec<f64> = a.intervals.iter().map(|i| i.active_flows as f64).collect();
    let active_ccdf = analysis::ccdf(&active);
    let mut c = String::from("active_flows,ccdf\n");
    for (x, p) in &active_ccdf {
        let _ = writeln!(c, "{x},{p:.6}");
    }
    write(&dir.join("active-flows-ccdf.csv"), &c)?;
    let mut c = String::from("k,tfor,ccdf\n");
    let mut series = Vec::new();
    for (j, k) in a.ks.iter().enumerate() {
        let cc = analysis::ccdf(&tfor_values(a, j));
        for (x, p) in &cc {
            let _ = writeln!(c, "{k},{x:.6},{p:.6}");
        }
        series.push(Series::new(format!("k = {k}"), cc).staircase(1.0));
    }
    write(&dir.join("tfor-ccdf.csv"), &c)?;
    // CCDFs are staircases from P = 1. Active flows are a count, log when they span decades.
    let png = dir.join("active-flows-ccdf.png");
    Figure::new(
        "CCDF of active flows per interval (paper Fig. 1)",
        Axis::new("active flows").integer().auto(),
        "P(active flows > x)",
    )
    .series(Series::new("intervals", active_ccdf).staircase(1.0))
    .save(&png)
    .map_err(|e| CliError::runtime(&png, e.0))?;
    let png = dir.join("tfor-ccdf.png");
    Figure::new(
        "CCDF of the traffic offload ratio (paper Fig. 2)",
        "TFOR (share of bytes in the top k flows)",
        "P(TFOR > x)",
    )
    .with(series)
    .save(&png)
    .map_err(|e| CliError::runtime(&png, e.0))?;
    Ok(())
}

fn print_summary(file: &Path, records: &[FlowRecord], a: &OffloadAnalysis, dir: &Path) {
    let bytes: u64 = records.iter().map(|r| r.bytes).sum();
    let active: Vec<f64> = a.intervals.iter().map(|i| i.active_flows as f64).collect();
    let q = |v: &[f64], p: f64| analysis::quantile(v, p).unwrap_or(0.0);
    outln!(
        "{}: {} flows, {}, {} intervals of {} s",
        file.display(),
        records.len(),
        fmt_bytes(bytes),
        a.intervals.len(),
        a.interval_ns as f64 / 1e9
    );
    outln!(
        "active flows per interval: median {:.0}, p95 {:.0}, max {:.0}",
        q(&active, 0.5),
        q(&active, 0.95),
        q(&active, 1.0)
    );
    for (j, k) in a.ks.iter().enumerate() {
        let t = tfor_values(a, j);
        let over = active.iter().filter(|&&n| n > *k as f64).count();
        outln!(
            "k = {k}: active flows > k in {:.1}% of intervals; TFOR median {}, exceeded in 90% of intervals {}, min {}",
            100.0 * over as f64 / active.len().max(1) as f64,
            pct(analysis::quantile(&t, 0.5)),
            pct(analysis::quantile(&t, 0.1)),
            pct(analysis::quantile(&t, 0.0)),
        );
    }
    outln!(
        "wrote intervals.csv, active-flows-ccdf.{{csv,png,svg}}, tfor-ccdf.{{csv,png,svg}} in {}",
        dir.display()
    );
}

/// Flow records of a trace or a flow CSV.
fn load_records(file: &Path, quiet: bool) -> Result<Vec<FlowRecord>, CliError> {
    if is_trace(file)? {
        pcap_cmd::trace_flows(file, TRACE_TIMEOUT_NS, TRACE_MAX_FLOWS, quiet)
    } else {
        load_csv(file)
    }
}

/// `tandem analyze coswitch`.
pub fn coswitch(file: &Path, speedup: f64, servers: u32, out: Option<&Path>, quiet: bool) -> Result<(), CliError> {
    use tandem_coswitch::model::replay::{replay, replay_csv, threshold_label, ReplayOptions};
    if !(speedup > 0.0 && speedup.is_finite()) {
        return Err(CliError::Input("--speedup must be a positive number".into()));
    }
    if servers == 0 {
        return Err(CliError::Input("--servers must be at least 1".into()));
    }
    let out_dir = OutDir::prepare(&out_or_default(out, file, "flows", "coswitch"))?;
    let records = load_records(file, quiet)?;
    let opts = ReplayOptions {
        speedup,
        servers,
        ..ReplayOptions::default()
    };
    let runs = replay(&records, &opts).map_err(|e| CliError::input(file, e))?;
    outln!(
        "{} flows from {}, speed-up {speedup}, {servers} server(s)",
        records.len(),
        file.display()
    );
    outln!(
        "{:<14} {:>11} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "approach",
        "offered pps",
        "server cpu",
        "switch cpu",
        "tcam max",
        "threshold",
        "dropped"
    );
    for (a, o) in &runs {
        outln!(
            "{:<14} {:>11.0} {:>9.1}% {:>9.1}% {:>9} {:>9} {:>9}",
            a.name(),
            o.offered_pps,
            o.server_cpu * 100.0,
            o.switch_cpu * 100.0,
            o.tcam_max,
            threshold_label(*a, o),
            o.drops.iter().map(|(_, n)| n).sum::<u64>()
        );
    }
    let (csv, periods) = replay_csv(&runs);
    write(&out_dir.path().join("replay.csv"), &csv)?;
    write(&out_dir.path().join("periods.csv"), &periods)?;
    // The paper's Figures 1 and 2 for this trace.
    let traffic = tandem_coswitch::model::traffic::profile(records.iter().map(|r| r.packets));
    outln!("{}", traffic.summary());
    write(&out_dir.path().join("traffic.csv"), &traffic.csv())?;
    let png = out_dir.path().join("traffic.png");
    traffic
        .figure(&format!(
            "{}: CDF of flows and packets against flow size",
            file.display()
        ))
        .save(&png)
        .map_err(|e| CliError::runtime(&png, e))?;
    outln!("results in {}", out_dir.path().display());
    out_dir.keep();
    Ok(())
}

/// `tandem analyze cam`.
pub fn cam(file: &Path, out: Option<&Path>) -> Result<(), CliError> {
    use tandem_axon::cam_analysis::CamAnalysis;
    let f = crate::paths::open_input(file)?;
    let out_dir = OutDir::prepare(&out_or_default(out, file, "trace", "cam"))?;
    let a = CamAnalysis::from_trace(BufReader::new(f)).map_err(|e| CliError::input(file, e))?;
    if a.repeats() == 0 {
        return Err(CliError::input(
            file,
            "no IPv4 destination repeats in the trace: nothing to size a CAM for",
        ));
    }
    outln!(
        "{} packets, {} IPv4, {} destinations, {} repeats",
        a.packets,
        a.ipv4_packets,
        a.destinations,
        a.repeats()
    );
    let mut summary = String::from("share_of_repeats,cam_entries,lru_cam_entries\n");
    for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
        let (n, lru) = (a.entries_for(q), a.lru_entries_for(q));
        outln!(
            "{:>6.1}% of repeat packets: {n} CAM entries (thesis's count), {lru} in an LRU CAM (exact)",
            q * 100.0
        );
        let _ = writeln!(summary, "{q},{n},{lru}");
    }
    write(&out_dir.path().join("cam.csv"), &a.csv())?;
    write(&out_dir.path().join("summary.csv"), &summary)?;
    // A CDF over entry counts that span decades: log x, whole-number ticks, drawn as the
    // staircase it is.
    let png = out_dir.path().join("cam.png");
    Figure::new(
        "CAM entries needed per port",
        Axis::new("CAM entries").log().integer(),
        "share of repeat packets served",
    )
    .series(Series::new("thesis's count", a.cdf_points()).staircase(0.0))
    .series(
        Series::new("LRU CAM (exact)", a.lru_cdf_points())
            .staircase(0.0)
            .dashed(),
    )
    .save(&png)
    .map_err(|e| CliError::runtime(&png, e))?;
    outln!("results in {}", out_dir.path().display());
    out_dir.keep();
    Ok(())
}
