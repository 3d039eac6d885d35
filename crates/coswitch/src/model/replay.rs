//! Replaying a user's own traffic (flow records from `tandem pcap flows`, or a trace) through
//! the three approaches: `tandem analyze coswitch`. The records become model flows with
//! [`FlowSpec::from_record`]; a speed-up compresses time as the paper "zooms in" its trace to
//! raise the load.

use super::network::{run, Approach, NetConfig, NetError, Outcome, Sample};
use super::workload::FlowSpec;
use crate::types::{Time, SEC};
use tandem_wire::flow::FlowRecord;

/// How to replay.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    /// Time compression (2 = twice the rate); must be positive.
    pub speedup: f64,
    /// Servers the sources are spread over (by source address).
    pub servers: u32,
    /// The testbed (approach, duration and warm-up are set per run).
    pub net: NetConfig,
}

impl Default for ReplayOptions {
    /// No speed-up, one server, the default testbed.
    fn default() -> Self {
        ReplayOptions {
            speedup: 1.0,
            servers: 1,
            net: NetConfig::default(),
        }
    }
}

/// Why a replay could not run.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplayError {
    /// No flow records.
    NoFlows,
    /// The speed-up is not a positive number.
    BadSpeedup,
    /// The model refused its configuration.
    Net(NetError),
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::NoFlows => f.write_str("no flow records to replay"),
            ReplayError::BadSpeedup => f.write_str("the speed-up must be a positive number"),
            ReplayError::Net(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReplayError {}

/// The records as model flows in start order, time-compressed by `speedup`, starting at 0.
pub fn flows_from_records(records: &[FlowRecord], speedup: f64, servers: u32) -> Result<Vec<FlowSpec>, ReplayError> {
    if !(speedup > 0.0 && speedup.is_finite()) {
        return Err(ReplayError::BadSpeedup);
    }
    let t0 = records
        .iter()
        .map(|r| r.first_ns)
        .min()
        .ok_or(ReplayError::NoFlows)?
        .saturating_mul(1_000);
    let mut flows: Vec<FlowSpec> = records
        .iter()
        .map(|r| {
            let mut f = FlowSpec::from_record(r, t0, servers);
            f.start = (f.start as f64 / speedup) as Time;
            f.gap = (f.gap as f64 / speedup) as Time;
            f
        })
        .collect();
    flows.sort_by_key(|f| f.start);
    Ok(flows)
}

/// Runs the records through vswitch only, physical only and CoSwitch. The run lasts until
/// the last flow has ended plus 5 s, and measures all of it.
pub fn replay(records: &[FlowRecord], opts: &ReplayOptions) -> Result<Vec<(Approach, Outcome)>, ReplayError> {
    let flows = flows_from_records(records, opts.speedup, opts.servers)?;
    let end = flows
        .iter()
        .map(|f| f.start + f.gap.saturating_mul(u64::from(f.packets.saturating_sub(1))))
        .max()
        .unwrap_or(0);
    // Whole control periods, so the last report covers the end.
    let period = opts.net.prediction.period.max(1);
    let duration = (end + 5 * SEC).div_ceil(period) * period;
    [Approach::VswitchOnly, Approach::PhysicalOnly, Approach::CoSwitch]
        .into_iter()
        .map(|a| {
            let cfg = NetConfig {
                approach: a,
                servers: opts.servers.max(1),
                duration,
                warmup: 0,
                ..opts.net.clone()
            };
            run(&cfg, &flows).map(|o| (a, o)).map_err(ReplayError::Net)
        })
        .collect()
}

/// The runs as CSV: one row per approach (`replay.csv`) and one per approach and control
/// period (`periods.csv`).
pub fn replay_csv(runs: &[(Approach, Outcome)]) -> (String, String) {
    let mut summary = format!(
        "approach,packets,offered_pps,{},threshold,dropped\n",
        Outcome::COST_CSV_HEADER
    );
    let mut periods = format!("approach,{}\n", Sample::CSV_HEADER);
    for (a, o) in runs {
        summary.push_str(&format!(
            "{},{},{:.1},{},{},{}\n",
            a.name(),
            o.packets,
            o.offered_pps,
            o.cost_csv_fields(),
            threshold_label(*a, o),
            o.drops.iter().map(|(_, n)| n).sum::<u64>()
        ));
        for x in &o.samples {
            periods.push_str(&format!("{},{}\n", a.name(), x.csv_fields()));
        }
    }
    (summary, periods)
}

/// The threshold a run ended with, or `-` for an approach that has none.
pub fn threshold_label(a: Approach, o: &Outcome) -> String {
    if a == Approach::CoSwitch {
        o.threshold.to_string()
    } else {
        "-".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use tandem_wire::flow::{EndReason, FlowKey};
    use tandem_wire::ipv4::IpProtocol;
    use tandem_wire::tcp::Flags;

    fn record(i: u32, first_ns: u64, packets: u64) -> FlowRecord {
        FlowRecord {
            key: FlowKey {
                protocol: IpProtocol::TCP,
                vlan: 0,
                src: Ipv4Addr::from(0x0a00_0000 + i),
                src_port: 1000,
                dst: Ipv4Addr::new(10, 1, 0, 1),
                dst_port: 80,
            },
            first_ns,
            last_ns: first_ns + packets * 1_000_000,
            packets,
            bytes: packets * 500,
            payload_bytes: 0,
            tcp_flags: Flags::default(),
            end: EndReason::Eof,
        }
    }

    #[test]
    fn records_become_flows_and_run() {
        let recs: Vec<FlowRecord> = (0..200)
            .map(|i| record(i, 1_000_000_000 + u64::from(i) * 10_000_000, 1 + u64::from(i % 40)))
            .collect();
        let f = flows_from_records(&recs, 2.0, 2).expect("flows");
        assert_eq!(f.len(), 200);
        assert_eq!(f[0].start, 0);
        assert_eq!(f[1].start, 5_000_000_000, "10 ms apart, twice as fast");
        assert!(f.iter().all(|x| x.server < 2 && x.packet_bytes == 500));
        let out = replay(&recs, &ReplayOptions::default()).expect("replay");
        assert_eq!(out.len(), 3);
        let total: u64 = recs.iter().map(|r| r.packets).sum();
        for (_, o) in &out {
            assert_eq!(o.packets, total, "every packet replayed");
        }
        assert_eq!(flows_from_records(&[], 1.0, 1), Err(ReplayError::NoFlows));
        assert_eq!(flows_from_records(&recs, 0.0, 1), Err(ReplayError::BadSpeedup));
    }
}
