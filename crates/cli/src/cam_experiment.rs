//! `axon-cam`: the thesis's Figure 4.9 (CAM entries a port needs) on every trace Tandem ships or
//! can make: the shipped sample (rebuilt by `tandem pcap synth`, byte for byte), a longer
//! `pcap synth` trace, and the simulator's captures on a leaf's uplink of the web-search
//! leaf-spine and on an aggregation switch's uplink of the k = 16 fat tree (1,024 hosts).
//!
//! Each trace gets the thesis's count (packets between two packets to a destination, plus one)
//! and the exact need of an LRU CAM (distinct destinations between, plus one), from
//! `tandem_axon::cam_analysis`, as `tandem analyze cam` prints them. The thesis's NLANR router
//! traces (CESCA-I, NCAR-I, LBNL) are not available here.

use crate::synth::{write_trace, SynthConfig};
use std::io::BufReader;
use std::path::Path;
use tandem_axon::cam_analysis::CamAnalysis;
use tandem_sim::experiment::{write, Experiment, ExperimentCtx, ExperimentError, Kind, Report, Row, Target};
use tandem_sim::plot::{Axis, Figure, Series};
use tandem_sim::scenario::Scenario;

/// The experiment.
pub const EXPERIMENT: Experiment = Experiment {
    name: "axon-cam",
    about:
        "Axon Fig. 4.9: CAM entries per port on every trace Tandem ships or makes (synth traces, simulator captures)",
    run,
};

/// The thesis's conclusion, as a bound declared before the first run: "each port of an Axon
/// would need about 4000 entries" to serve its gigabit traces; read as the entries serving 99.9%
/// of repeat packets.
const THESIS_ENTRIES: f64 = 4000.0;

fn err(e: impl std::fmt::Display) -> ExperimentError {
    ExperimentError(e.to_string())
}

/// One trace to analyse.
struct Source {
    name: String,
    about: String,
    analysis: CamAnalysis,
}

fn analyse_file(path: &Path) -> Result<CamAnalysis, ExperimentError> {
    let f = std::fs::File::open(path).map_err(|e| err(format!("{}: {e}", path.display())))?;
    CamAnalysis::from_trace(BufReader::new(f)).map_err(|e| err(format!("{}: {e}", path.display())))
}

/// A `tandem pcap synth` trace with its defaults but `packets` and `snaplen` (0: whole packets).
fn synth(tmp: &Path, packets: u64, snaplen: u32) -> Result<CamAnalysis, ExperimentError> {
    let p = tmp.join(format!("synth-{packets}.pcap"));
    let cfg = SynthConfig {
        packets,
        seed: 1,
        flow_gap_ns: 200_000,
        snaplen,
    };
    write_trace(&p, &cfg).map_err(err)?;
    let a = analyse_file(&p)?;
    let _ = std::fs::remove_file(&p);
    Ok(a)
}

/// Runs a shipped scenario with a capture on `port` and analyses the capture.
fn capture(
    tmp: &Path,
    text: &str,
    name: &str,
    port: &str,
    sets: &[(&str, &str)],
) -> Result<CamAnalysis, ExperimentError> {
    // Both scenarios end with their [output] table, so the capture key goes at the end.
    let text = format!("{text}\npcap = [\"{port}\"]\n");
    let overrides: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let sc = Scenario::parse(&text, name, name, tmp, &overrides).map_err(err)?;
    let dir = tmp.join(name);
    tandem_sim::run::run(&sc, &dir, &mut |_| {}).map_err(err)?;
    let file = dir.join(format!("{}.pcap", port.replace(':', "-")));
    let a = analyse_file(&file)?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(a)
}

const LEAFSPINE: &str = include_str!("../../../scenarios/websearch-leafspine.toml");
const FATTREE: &str = include_str!("../../../scenarios/fat-tree-websearch.toml");

fn run(ctx: &mut ExperimentCtx<'_>) -> Result<Report, ExperimentError> {
    let tmp = ctx.path(".axon-cam-tmp");
    std::fs::create_dir_all(&tmp).map_err(|e| err(format!("{}: {e}", tmp.display())))?;
    let result = sources(ctx, &tmp);
    let _ = std::fs::remove_dir_all(&tmp);
    report(ctx, result?)
}

fn sources(ctx: &mut ExperimentCtx<'_>, tmp: &Path) -> Result<Vec<Source>, ExperimentError> {
    let long = if ctx.quick { 100_000 } else { 2_000_000 };
    let mut v = Vec::new();
    (ctx.status)("shipped sample");
    v.push(Source {
        name: "sample".into(),
        about: "traces/sample.pcap: tandem pcap synth, 5,000 packets, seed 1 (rebuilt byte for byte)".into(),
        analysis: synth(tmp, 5_000, 0)?,
    });
    (ctx.status)("long synthetic trace");
    v.push(Source {
        name: format!("synth-{}k", long / 1000),
        about: format!("tandem pcap synth, {long} packets, seed 1, 96-byte snaplen, 64 hosts in four racks"),
        analysis: synth(tmp, long, 96)?,
    });
    (ctx.status)("leaf-spine capture");
    let ls_sets: &[(&str, &str)] = if ctx.quick {
        &[
            ("output.plots", "false"),
            ("duration", "15ms"),
            ("flows[0].duration", "10ms"),
        ]
    } else {
        &[("output.plots", "false")]
    };
    v.push(Source {
        name: "leafspine-uplink".into(),
        about: format!(
            "simulator capture: scenarios/websearch-leafspine.toml (64 hosts, web-search at 50% load, DCTCP), \
             frames leaving leaf0 towards spine0 (leaf0:16){}",
            if ctx.quick { ", 10 ms of arrivals" } else { "" }
        ),
        analysis: capture(tmp, LEAFSPINE, "websearch-leafspine", "leaf0:16", ls_sets)?,
    });
    (ctx.status)("fat-tree capture");
    let (count, duration) = if ctx.quick { ("1500", "8ms") } else { ("6000", "30ms") };
    v.push(Source {
        name: "fattree-agg-uplink".into(),
        about: format!(
            "simulator capture: scenarios/fat-tree-websearch.toml (k = 16, 1,024 hosts, web-search at 50% load) cut to \
             {count} flows and {duration}, frames leaving agg0 towards core0 (agg0:8)"
        ),
        analysis: capture(
            tmp,
            FATTREE,
            "fat-tree-websearch",
            "agg0:8",
            &[
                ("output.plots", "false"),
                ("output.queue_sample_interval", "0s"),
                ("flows[0].count", count),
                ("duration", duration),
            ],
        )?,
    });
    Ok(v)
}

const SHARES: [f64; 5] = [0.5, 0.9, 0.99, 0.999, 1.0];

fn report(ctx: &mut ExperimentCtx<'_>, sources: Vec<Source>) -> Result<Report, ExperimentError> {
    let mut rep = Report {
        title: "Axon: CAM entries a port needs, on Tandem's own traces (Figure 4.9)".into(),
        reference: "Shafer (Rice MS thesis, 2010), §4.5, Figure 4.9: on NLANR gigabit router traces (CESCA-I, NCAR-I, \
                    LBNL), 'each port of an Axon would need about 4000 entries'"
            .into(),
        ..Report::default()
    };
    let mut csv = String::from("trace,measure,entries,packets,cumulative_fraction\n");
    let mut summary = String::from("trace,packets,ipv4_packets,destinations,repeats,measure,share,entries\n");
    for s in &sources {
        let a = &s.analysis;
        if a.repeats() == 0 {
            return Err(err(format!("{}: no destination repeats", s.name)));
        }
        for (measure, h) in [("thesis", &a.histogram), ("lru", &a.lru_histogram)] {
            let total = h.values().sum::<u64>() as f64;
            let mut seen = 0;
            for (k, n) in h {
                seen += n;
                csv += &format!("{},{measure},{k},{n},{:.6}\n", s.name, seen as f64 / total);
            }
        }
        for q in SHARES {
            for (measure, n) in [("thesis", a.entries_for(q)), ("lru", a.lru_entries_for(q))] {
                summary += &format!(
                    "{},{},{},{},{},{measure},{q},{n}\n",
                    s.name,
                    a.packets,
                    a.ipv4_packets,
                    a.destinations,
                    a.repeats()
                );
            }
        }
        let setting = format!("{} ({} destinations)", s.name, a.destinations);
        rep.rows.push(Row::new(
            Kind::Prediction,
            &setting,
            "entries serving 99.9% of repeat packets (thesis's count)",
            Some(THESIS_ENTRIES),
            a.entries_for(0.999) as f64,
            Target::AtMost(THESIS_ENTRIES),
        ));
        for (q, label) in [(0.9, "90%"), (0.99, "99%"), (1.0, "100%")] {
            rep.rows.push(Row::new(
                Kind::Prediction,
                &setting,
                &format!("entries serving {label} (thesis's count)"),
                None,
                a.entries_for(q) as f64,
                Target::None,
            ));
        }
        for (q, label) in [(0.99, "99%"), (1.0, "100%")] {
            rep.rows.push(Row::new(
                Kind::Prediction,
                &setting,
                &format!("LRU CAM entries serving {label} (exact)"),
                None,
                a.lru_entries_for(q) as f64,
                Target::None,
            ));
        }
        rep.notes.push(format!(
            "`{}`: {}; {} packets, {} IPv4, {} repeats.",
            s.name,
            s.about,
            a.packets,
            a.ipv4_packets,
            a.repeats()
        ));
    }
    write(ctx, "cam.csv", &csv)?;
    write(ctx, "summary.csv", &summary)?;
    let mut fig = Figure::new(
        "CAM entries needed per port (thesis's count)",
        Axis::new("CAM entries").log().integer(),
        "share of repeat packets served",
    );
    let mut lru = Figure::new(
        "LRU CAM entries needed per port (exact)",
        Axis::new("CAM entries").log().integer(),
        "share of repeat packets served",
    );
    for s in &sources {
        fig = fig.series(Series::new(s.name.clone(), s.analysis.cdf_points()).staircase(0.0));
        lru = lru.series(Series::new(s.name.clone(), s.analysis.lru_cdf_points()).staircase(0.0));
    }
    fig.save(&ctx.path("cam.png")).map_err(err)?;
    lru.save(&ctx.path("cam-lru.png")).map_err(err)?;
    rep.files = [
        "cam.csv",
        "summary.csv",
        "cam.png",
        "cam.svg",
        "cam-lru.png",
        "cam-lru.svg",
    ]
    .map(String::from)
    .to_vec();
    rep.notes.push(
        "The thesis's count is an upper bound on an LRU CAM's need (packets between may share destinations); \
         the LRU column is exact and never exceeds the destinations a port sees. Tandem's traces have at most \
         1,024 destinations, far fewer than an Internet router's, so they test the method, not the thesis's traces."
            .into(),
    );
    Ok(rep)
}
