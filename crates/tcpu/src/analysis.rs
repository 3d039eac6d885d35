//! Offline analysis of flow records: active flows and the traffic offload ratio (TFOR) per
//! interval, as in the paper's motivation (§3.1, Figures 1 and 2).
//!
//! Sans-IO: the caller turns its flow records (for example `tandem pcap flows --csv`) into
//! [`FlowSpan`]s, and for a trace may also feed every packet into [`IntervalBytes`] for exact
//! per-interval bytes ([`analyze_exact`]); nothing here reads a file.
//!
//! Time is cut into intervals of `interval_ns` aligned to the earliest record's first packet.
//! A flow is **active** in an interval when its span `[first_ns, last_ns]` overlaps it (it
//! sent at least its first or last packet in it, or is sending across it). A flow record gives
//! only its first and last packet times and its total bytes, so **its bytes are spread
//! uniformly over `[first_ns, last_ns]`** (a one-packet flow, `first_ns == last_ns`, puts all
//! its bytes in its one interval). This is an approximation: a flow that sends in bursts has
//! its bytes moved between the intervals of its lifetime, which smooths per-interval rates and
//! so changes which flows rank in the top k; per-packet attribution would need the trace.
//!
//! The **TFOR** of an interval for a given k is the share of the interval's bytes carried by
//! the k flows with the most bytes in that interval (the paper ranks "based on their bytes
//! transferred in that second and count largest k flows as offloaded traffic"). It is
//! undefined (`None`) for an interval that carries no bytes.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;

/// One flow's span and volume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowSpan {
    /// Time of its first packet, nanoseconds.
    pub first_ns: u64,
    /// Time of its last packet, nanoseconds (at least `first_ns`).
    pub last_ns: u64,
    /// Bytes it carried.
    pub bytes: u64,
}

/// One interval's result.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalStats {
    /// Start of the interval, nanoseconds (same clock as the records).
    pub start_ns: u64,
    /// Flows active in the interval.
    pub active_flows: u64,
    /// Bytes attributed to the interval.
    pub bytes: f64,
    /// TFOR for each k of [`OffloadAnalysis::ks`], in order; `None` when the interval carries
    /// no bytes.
    pub tfor: Vec<Option<f64>>,
}

/// The result of [`analyze`].
#[derive(Debug, Clone, PartialEq)]
pub struct OffloadAnalysis {
    /// Interval length, nanoseconds.
    pub interval_ns: u64,
    /// The k values (flows offloaded per interval), in the order asked.
    pub ks: Vec<usize>,
    /// Every interval from the first record's start to the last record's end, in order.
    pub intervals: Vec<IntervalStats>,
}

/// Why the analysis could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnalysisError {
    /// No flow records.
    NoFlows,
    /// The interval is zero.
    ZeroInterval,
    /// No k, or a k of zero.
    BadK,
    /// A record ends before it starts (its index).
    BadSpan(usize),
    /// The records span more intervals than the limit (the count).
    TooManyIntervals(u64),
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalysisError::NoFlows => f.write_str("no flow records"),
            AnalysisError::ZeroInterval => f.write_str("the interval must be above zero"),
            AnalysisError::BadK => f.write_str("need at least one k, each above zero"),
            AnalysisError::BadSpan(i) => write!(f, "flow record {i} ends before it starts"),
            AnalysisError::TooManyIntervals(n) => write!(
                f,
                "the records span {n} intervals (at most {MAX_INTERVALS}); use a longer interval"
            ),
        }
    }
}

impl std::error::Error for AnalysisError {}

/// Most intervals one analysis covers.
pub const MAX_INTERVALS: u64 = 10_000_000;

/// Active flows and TFOR per interval (see the module documentation for the definitions and
/// the uniform-spread approximation).
pub fn analyze(flows: &[FlowSpan], interval_ns: u64, ks: &[usize]) -> Result<OffloadAnalysis, AnalysisError> {
    if flows.is_empty() {
        return Err(AnalysisError::NoFlows);
    }
    if interval_ns == 0 {
        return Err(AnalysisError::ZeroInterval);
    }
    if ks.is_empty() || ks.contains(&0) {
        return Err(AnalysisError::BadK);
    }
    if let Some(i) = flows.iter().position(|f| f.last_ns < f.first_ns) {
        return Err(AnalysisError::BadSpan(i));
    }
    let origin = flows.iter().map(|f| f.first_ns).min().unwrap_or(0);
    let end = flows.iter().map(|f| f.last_ns).max().unwrap_or(0);
    let n = ((end - origin) / interval_ns).saturating_add(1);
    if n > MAX_INTERVALS {
        return Err(AnalysisError::TooManyIntervals(n));
    }
    let mut per: Vec<Vec<f64>> = vec![Vec::new(); n as usize];
    for f in flows {
        let (a, b) = (f.first_ns - origin, f.last_ns - origin);
        let (ia, ib) = (a / interval_ns, b / interval_ns);
        if a == b {
            per[ia as usize].push(f.bytes as f64);
            continue;
        }
        let span = (b - a) as f64;
        for i in ia..=ib {
            let lo = a.max(i.saturating_mul(interval_ns));
            let hi = b.min((i + 1).saturating_mul(interval_ns));
            per[i as usize].push(f.bytes as f64 * (hi.saturating_sub(lo)) as f64 / span);
        }
    }
    let intervals = per
        .into_iter()
        .enumerate()
        .map(|(i, mut v)| {
            let active_flows = v.len() as u64;
            let (bytes, tfor) = top_k_shares(&mut v, ks);
            IntervalStats {
                start_ns: origin + i as u64 * interval_ns,
                active_flows,
                bytes,
                tfor,
            }
        })
        .collect();
    Ok(OffloadAnalysis {
        interval_ns,
        ks: ks.to_vec(),
        intervals,
    })
}

/// The total of `v` and, for each k, the share of it in the k largest values (`None` when
/// the total is zero). Sorts `v` in place, largest first.
fn top_k_shares(v: &mut [f64], ks: &[usize]) -> (f64, Vec<Option<f64>>) {
    v.sort_unstable_by(|x, y| y.total_cmp(x));
    let total: f64 = v.iter().sum();
    let tfor = ks
        .iter()
        .map(|&k| (total > 0.0).then(|| (v.iter().take(k).sum::<f64>() / total).min(1.0)))
        .collect();
    (total, tfor)
}

/// The first packet time of `flows` (the origin [`analyze`] aligns intervals to); `None` when
/// there are none.
pub fn origin(flows: &[FlowSpan]) -> Option<u64> {
    flows.iter().map(|f| f.first_ns).min()
}

/// Exact bytes per flow per interval, fed packet by packet: for a trace, where each packet's
/// bytes are known, instead of spreading a flow record's bytes over its span. `K` is the flow
/// key (a 5-tuple). Feed it with the same origin [`analyze`] uses ([`origin`]).
#[derive(Debug, Clone)]
pub struct IntervalBytes<K> {
    origin_ns: u64,
    interval_ns: u64,
    bins: Vec<HashMap<K, u64>>,
}

impl<K: Hash + Eq> IntervalBytes<K> {
    /// Intervals of `interval_ns` (above zero) from `origin_ns`.
    pub fn new(origin_ns: u64, interval_ns: u64) -> Result<Self, AnalysisError> {
        if interval_ns == 0 {
            return Err(AnalysisError::ZeroInterval);
        }
        Ok(IntervalBytes {
            origin_ns,
            interval_ns,
            bins: Vec::new(),
        })
    }

    /// Counts a packet of `bytes` of flow `key` at `ts_ns` (a time before the origin counts in
    /// the first interval).
    pub fn add(&mut self, ts_ns: u64, key: K, bytes: u64) -> Result<(), AnalysisError> {
        let bin = ts_ns.saturating_sub(self.origin_ns) / self.interval_ns;
        if bin >= MAX_INTERVALS {
            return Err(AnalysisError::TooManyIntervals(bin.saturating_add(1)));
        }
        let bin = bin as usize;
        if bin >= self.bins.len() {
            self.bins.resize_with(bin + 1, HashMap::new);
        }
        *self.bins[bin].entry(key).or_insert(0) += bytes;
        Ok(())
    }
}

/// [`analyze`] with each interval's bytes and TFOR taken from exact per-packet counts
/// (`bytes`, built on the same origin and interval) instead of the uniform spread; active flows
/// still come from the spans. Intervals past the spans' end that only `bytes` has are added.
pub fn analyze_exact<K: Hash + Eq>(
    flows: &[FlowSpan],
    ks: &[usize],
    bytes: IntervalBytes<K>,
) -> Result<OffloadAnalysis, AnalysisError> {
    let mut a = analyze(flows, bytes.interval_ns, ks)?;
    let origin = a.intervals.first().map_or(0, |i| i.start_ns);
    let n = a.intervals.len().max(bytes.bins.len());
    let mut bins = bytes.bins.into_iter();
    for i in 0..n {
        let mut v: Vec<f64> = bins
            .next()
            .map(|b| b.into_values().map(|x| x as f64).collect())
            .unwrap_or_default();
        let senders = v.len() as u64;
        let (total, tfor) = top_k_shares(&mut v, ks);
        if i >= a.intervals.len() {
            a.intervals.push(IntervalStats {
                start_ns: origin + i as u64 * a.interval_ns,
                active_flows: senders,
                bytes: 0.0,
                tfor: Vec::new(),
            });
        }
        let s = &mut a.intervals[i];
        s.bytes = total;
        s.tfor = tfor;
    }
    Ok(a)
}

/// The complementary CDF of `values`: `(x, P(X > x))` at each distinct value, ascending. The
/// paper's Figures 1 and 2 plot this (for active flows and TFOR).
pub fn ccdf(values: &[f64]) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let x = v[i];
        while i < v.len() && v[i] == x {
            i += 1;
        }
        out.push((x, (v.len() - i) as f64 / n));
    }
    out
}

/// The value at quantile `q` (0..=1) of `values`, nearest rank; `None` when empty.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let idx = ((q.clamp(0.0, 1.0) * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    Some(v[idx])
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn span(first_ns: u64, last_ns: u64, bytes: u64) -> FlowSpan {
        FlowSpan {
            first_ns,
            last_ns,
            bytes,
        }
    }

    #[test]
    fn bytes_spread_uniformly_and_top_k() {
        // Flow a: 0..2 s, 2,000 bytes (1,000 per second); b: 0.5 s, one packet of 300;
        // c: 1.5..2.5 s, 400 bytes (200 in second 1, 200 in second 2).
        let f = [
            span(0, 2 * S, 2000),
            span(S / 2, S / 2, 300),
            span(3 * S / 2, 5 * S / 2, 400),
        ];
        let a = analyze(&f, S, &[1, 2]).unwrap();
        assert_eq!(a.intervals.len(), 3);
        let i0 = &a.intervals[0];
        assert_eq!(i0.active_flows, 2);
        assert!((i0.bytes - 1300.0).abs() < 1e-9);
        assert!((i0.tfor[0].unwrap() - 1000.0 / 1300.0).abs() < 1e-12);
        assert_eq!(i0.tfor[1], Some(1.0));
        let i1 = &a.intervals[1];
        assert_eq!(i1.active_flows, 2);
        assert!((i1.tfor[0].unwrap() - 1000.0 / 1200.0).abs() < 1e-12);
        // Second 2: a ends exactly at 2 s (zero bytes there but active), c carries 200.
        let i2 = &a.intervals[2];
        assert_eq!(i2.active_flows, 2);
        assert!((i2.bytes - 200.0).abs() < 1e-9);
        assert_eq!(i2.tfor[0], Some(1.0));
        let total: f64 = a.intervals.iter().map(|i| i.bytes).sum();
        assert!((total - 2700.0).abs() < 1e-9);
    }

    #[test]
    fn gaps_have_no_tfor_and_origin_is_first_packet() {
        let f = [span(10 * S, 10 * S, 5), span(13 * S, 13 * S, 7)];
        let a = analyze(&f, S, &[4]).unwrap();
        assert_eq!(a.intervals.len(), 4);
        assert_eq!(a.intervals[0].start_ns, 10 * S);
        assert_eq!(a.intervals[1].active_flows, 0);
        assert_eq!(a.intervals[1].tfor, vec![None]);
        assert_eq!(a.intervals[3].tfor, vec![Some(1.0)]);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert_eq!(analyze(&[], S, &[1]), Err(AnalysisError::NoFlows));
        let f = [span(0, 1, 1)];
        assert_eq!(analyze(&f, 0, &[1]), Err(AnalysisError::ZeroInterval));
        assert_eq!(analyze(&f, S, &[]), Err(AnalysisError::BadK));
        assert_eq!(analyze(&f, S, &[0]), Err(AnalysisError::BadK));
        assert_eq!(analyze(&[span(5, 4, 1)], S, &[1]), Err(AnalysisError::BadSpan(0)));
        assert!(matches!(
            analyze(&[span(0, u64::MAX, 1)], 1, &[1]),
            Err(AnalysisError::TooManyIntervals(_))
        ));
    }

    #[test]
    fn exact_bytes_replace_the_uniform_spread() {
        // Flow 1 spans 0..2 s but sends all its 1,000 bytes in second 0; flow 2 sends 300
        // bytes in second 1. The spread would give flow 1 500 bytes in second 1 (TFOR k=1
        // there 500/800); the packets say second 1 carries only flow 2's 300 (TFOR 1).
        let spans = [span(0, 2 * S, 1000), span(S + 1, S + 1, 300)];
        let spread = analyze(&spans, S, &[1]).unwrap();
        assert!((spread.intervals[1].tfor[0].unwrap() - 500.0 / 800.0).abs() < 1e-12);
        let mut b = IntervalBytes::new(origin(&spans).unwrap(), S).unwrap();
        b.add(0, 1u8, 600).unwrap();
        b.add(S / 2, 1u8, 400).unwrap();
        b.add(S + 1, 2u8, 300).unwrap();
        let a = analyze_exact(&spans, &[1], b).unwrap();
        assert_eq!(a.intervals.len(), 3);
        assert_eq!((a.intervals[0].bytes, a.intervals[0].tfor[0]), (1000.0, Some(1.0)));
        assert_eq!((a.intervals[1].bytes, a.intervals[1].tfor[0]), (300.0, Some(1.0)));
        // Second 2: flow 1 is still active (its span ends at 2 s) but sent nothing there.
        assert_eq!(a.intervals[2].active_flows, 1);
        assert_eq!((a.intervals[2].bytes, a.intervals[2].tfor[0]), (0.0, None));
        assert_eq!(a.intervals[1].active_flows, 2);
        assert!(IntervalBytes::<u8>::new(0, 0).is_err());
        let mut far = IntervalBytes::new(0, 1).unwrap();
        assert!(matches!(
            far.add(u64::MAX, 1u8, 1),
            Err(AnalysisError::TooManyIntervals(_))
        ));
    }

    #[test]
    fn ccdf_and_quantile() {
        let c = ccdf(&[1.0, 2.0, 2.0, 3.0]);
        assert_eq!(c, vec![(1.0, 0.75), (2.0, 0.25), (3.0, 0.0)]);
        assert_eq!(quantile(&[3.0, 1.0, 2.0, 4.0], 0.5), Some(2.0));
        assert_eq!(quantile(&[3.0, 1.0], 0.0), Some(1.0));
        assert_eq!(quantile(&[], 0.5), None);
    }
}
