//! Run outputs: `flows.csv`, `drops.csv`, `queues.csv` and `summary.json`, all written in a
//! fixed order from simulation state only, so the same scenario and seed give identical bytes.

use crate::sim::Sim;
use crate::time::{as_secs, Time};
use crate::workload::FlowKind;
use serde_json::{json, Value};
use std::io::{self, Write};

/// Header of flows.csv.
pub const FLOWS_HEADER: &str = "flow,kind,src,dst,bytes,start_s,end_s,fct_us,completed,failed,delivered,\
goodput_bps,segments_sent,retransmits,fast_recoveries,timeouts,syn_timeouts,out_of_order";

fn kind_name(k: &FlowKind) -> &'static str {
    match k {
        FlowKind::Bulk => "bulk",
        FlowKind::RequestResponse { .. } => "request-response",
        FlowKind::UdpCbr { .. } => "udp-cbr",
        FlowKind::UdpOnOff { .. } => "udp-onoff",
        FlowKind::UdpBurst { .. } => "udp-burst",
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

/// Writes flows.csv and returns the totals.
pub fn write_flows(sim: &Sim, w: &mut impl Write) -> io::Result<FlowStats> {
    writeln!(w, "{FLOWS_HEADER}")?;
    let mut st = FlowStats::default();
    for (spec, r, eps) in sim.flow_results() {
        st.flows += 1;
        let (mut segs, mut retx, mut fr, mut to, mut syn, mut ooo) = (0, 0, 0, 0, 0, 0);
        for s in eps.iter().flatten().map(|e| e.stats()) {
            segs += s.segments_sent;
            retx += s.retransmits;
            fr += s.fast_recoveries;
            to += s.data_timeouts;
            syn += s.syn_timeouts;
            ooo += s.out_of_order_arrivals;
        }
        st.retransmits += retx;
        st.fast_recoveries += fr;
        st.timeouts += to;
        st.syn_timeouts += syn;
        st.delivered += r.delivered;
        let fct = r.end.map(|e| e.saturating_sub(r.start));
        if let Some(f) = fct {
            st.completed += 1;
            st.fct_us.push(f as f64 / 1e6);
        }
        if r.failed.is_some() {
            st.failed += 1;
        }
        let goodput = fct
            .filter(|&f| f > 0)
            .map_or(0.0, |f| r.delivered as f64 * 8.0 / as_secs(f));
        writeln!(
            w,
            "{},{},{},{},{},{:.9},{},{},{},{},{},{:.0},{},{},{},{},{},{}",
            spec.id.0,
            kind_name(&spec.kind),
            sim.nodes()[spec.src.0 as usize].name,
            sim.nodes()[spec.dst.0 as usize].name,
            spec.bytes,
            as_secs(r.start),
            r.end.map_or(String::new(), |e| format!("{:.9}", as_secs(e))),
            fct.map_or(String::new(), |f| format!("{:.3}", f as f64 / 1e6)),
            u8::from(r.end.is_some()),
            r.failed.unwrap_or(""),
            r.delivered,
            goodput,
            segs,
            retx,
            fr,
            to,
            syn,
            ooo
        )?;
    }
    st.fct_us.sort_by(f64::total_cmp);
    Ok(st)
}

/// Writes drops.csv: one line per (node, port, reason) with packets and bytes. Returns the
/// total packets dropped.
pub fn write_drops(sim: &Sim, w: &mut impl Write) -> io::Result<u64> {
    writeln!(w, "node,port,reason,packets,bytes")?;
    let mut total = 0;
    for n in sim.nodes() {
        for (i, p) in n.ports.iter().enumerate() {
            let mut drops = p.queues.stats.drops.clone();
            drops.sort_by_key(|d| d.0);
            for (reason, packets, bytes) in drops {
                total += packets;
                writeln!(w, "{},{},{},{},{}", n.name, i, reason.as_str(), packets, bytes)?;
            }
        }
    }
    Ok(total)
}

/// Writes queues.csv from the samples (only non-empty queues are sampled).
pub fn write_queues(sim: &Sim, w: &mut impl Write) -> io::Result<()> {
    writeln!(w, "time_s,node,port,bytes,packets")?;
    for s in &sim.samples {
        writeln!(
            w,
            "{:.9},{},{},{},{}",
            as_secs(s.time),
            sim.nodes()[s.node.0 as usize].name,
            s.port,
            s.bytes,
            s.packets
        )?;
    }
    Ok(())
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
