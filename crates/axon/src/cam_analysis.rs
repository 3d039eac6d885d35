//! How many CAM entries a host port needs (thesis §4.5, Figure 4.9), from a packet trace.
//!
//! The thesis's measure: for each IPv4 packet whose destination address was seen before, the
//! number of packets between it and the previous packet to the same destination, plus one. A
//! CAM of that many entries, replaced least recently used, would still hold the route when the
//! packet comes (an upper bound: the packets between may share destinations). The first packet
//! to each destination needs a route set up whatever the CAM size and is counted apart.
//!
//! Beside it, the exact need of an LRU CAM ([`CamAnalysis::lru_histogram`]): the number of
//! *distinct* destinations seen since the previous packet to the same destination, plus one (the
//! LRU stack distance). A CAM of that many entries, replaced least recently used, holds the route
//! exactly when the packet comes; it never exceeds the number of destinations, while the thesis's
//! count grows with the traffic between two packets to a destination. Computed with a Fenwick tree
//! over access times that is compacted to the live destinations when full, so memory stays
//! proportional to the destinations, not to the trace.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::net::Ipv4Addr;
use tandem_wire::decode::summarize;
use tandem_wire::pcap::{TraceError, TraceReader};

/// What a trace needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CamAnalysis {
    /// Packets in the trace.
    pub packets: u64,
    /// IPv4 packets (the ones analysed).
    pub ipv4_packets: u64,
    /// Distinct destination addresses (first packets to a destination).
    pub destinations: u64,
    /// Entries needed (thesis's count) -> packets needing that many.
    pub histogram: BTreeMap<u64, u64>,
    /// Entries an LRU CAM needs (stack distance) -> packets needing that many.
    pub lru_histogram: BTreeMap<u64, u64>,
}

/// LRU stack distances of a stream of destinations: a Fenwick tree with a 1 at the time of each
/// destination's latest packet, so that the distinct destinations since time `j` are a range sum.
#[derive(Debug)]
struct StackDistance {
    tree: Vec<i64>,
    next: usize,
    latest: HashMap<Ipv4Addr, usize>,
}

impl StackDistance {
    const MIN_CAPACITY: usize = 1024;

    fn new() -> StackDistance {
        StackDistance {
            tree: vec![0; Self::MIN_CAPACITY + 1],
            next: 0,
            latest: HashMap::new(),
        }
    }

    fn add(&mut self, pos: usize, d: i64) {
        let mut i = pos + 1;
        while i < self.tree.len() {
            self.tree[i] += d;
            i += i & i.wrapping_neg();
        }
    }

    /// Sum over times `[0, pos)`.
    fn prefix(&self, pos: usize) -> i64 {
        let (mut i, mut s) = (pos, 0);
        while i > 0 {
            s += self.tree[i];
            i &= i - 1;
        }
        s
    }

    /// Renumbers the live times 0.. in order, in a tree twice their number (at least the minimum).
    fn compact(&mut self) {
        let mut live: Vec<(usize, Ipv4Addr)> = self.latest.iter().map(|(d, &p)| (p, *d)).collect();
        live.sort_unstable();
        self.tree = vec![0; (2 * live.len()).max(Self::MIN_CAPACITY) + 1];
        for (k, (_, d)) in live.iter().enumerate() {
            self.latest.insert(*d, k);
            self.add(k, 1);
        }
        self.next = live.len();
    }

    /// The stack distance of a packet to `dst` (`None` for its first).
    fn access(&mut self, dst: Ipv4Addr) -> Option<u64> {
        if self.next + 1 >= self.tree.len() {
            self.compact();
        }
        let pos = self.next;
        self.next += 1;
        let distance = self.latest.insert(dst, pos).map(|j| {
            let between = self.prefix(pos) - self.prefix(j + 1);
            self.add(j, -1);
            between as u64 + 1
        });
        self.add(pos, 1);
        distance
    }
}

/// What the analysis keeps while it reads.
#[derive(Debug)]
struct Tracker {
    last: HashMap<Ipv4Addr, u64>,
    lru: StackDistance,
}

impl Tracker {
    fn new() -> Tracker {
        Tracker {
            last: HashMap::new(),
            lru: StackDistance::new(),
        }
    }
}

impl CamAnalysis {
    /// Adds the next IPv4 packet's destination (`index` counts IPv4 packets from 0).
    fn add(&mut self, t: &mut Tracker, dst: Ipv4Addr) {
        let i = self.ipv4_packets;
        self.ipv4_packets += 1;
        match t.last.insert(dst, i) {
            Some(j) => *self.histogram.entry(i - j).or_insert(0) += 1,
            None => self.destinations += 1,
        }
        if let Some(d) = t.lru.access(dst) {
            *self.lru_histogram.entry(d).or_insert(0) += 1;
        }
    }

    /// Analyses a sequence of destination addresses (for tests and other sources).
    pub fn from_destinations(dsts: impl IntoIterator<Item = Ipv4Addr>) -> CamAnalysis {
        let mut a = CamAnalysis::default();
        let mut t = Tracker::new();
        for d in dsts {
            a.packets += 1;
            a.add(&mut t, d);
        }
        a
    }

    /// Reads a pcap or pcapng trace.
    pub fn from_trace<R: Read>(reader: R) -> Result<CamAnalysis, TraceError> {
        let mut r = TraceReader::new(reader)?;
        let mut a = CamAnalysis::default();
        let mut t = Tracker::new();
        while let Some(p) = r.next_packet() {
            let p = p?;
            a.packets += 1;
            if let Some(ip) = summarize(p.linktype, p.data).ipv4 {
                a.add(&mut t, ip.dst);
            }
        }
        Ok(a)
    }

    /// Packets with a previous packet to the same destination.
    pub fn repeats(&self) -> u64 {
        self.histogram.values().sum()
    }

    /// The CAM size that serves fraction `q` (0 to 1) of the repeat packets (thesis's count).
    pub fn entries_for(&self, q: f64) -> u64 {
        quantile_of(&self.histogram, q)
    }

    /// The LRU CAM size that serves fraction `q` (0 to 1) of the repeat packets, exactly.
    pub fn lru_entries_for(&self, q: f64) -> u64 {
        quantile_of(&self.lru_histogram, q)
    }

    /// `entries,packets,cumulative_fraction` CSV of the histogram.
    pub fn csv(&self) -> String {
        let total = self.repeats().max(1) as f64;
        let mut s = String::from("entries,packets,cumulative_fraction\n");
        let mut seen = 0;
        for (&k, &n) in &self.histogram {
            seen += n;
            s.push_str(&format!("{k},{n},{:.6}\n", seen as f64 / total));
        }
        s
    }

    /// (entries, cumulative fraction of repeat packets served) points for a plot (thesis's count).
    pub fn cdf_points(&self) -> Vec<(f64, f64)> {
        cdf_of(&self.histogram)
    }

    /// As [`CamAnalysis::cdf_points`], for an LRU CAM.
    pub fn lru_cdf_points(&self) -> Vec<(f64, f64)> {
        cdf_of(&self.lru_histogram)
    }
}

fn quantile_of(h: &BTreeMap<u64, u64>, q: f64) -> u64 {
    let total: u64 = h.values().sum();
    let need = (q.clamp(0.0, 1.0) * total as f64).ceil() as u64;
    let mut seen = 0;
    for (&k, &n) in h {
        seen += n;
        if seen >= need {
            return k;
        }
    }
    0
}

fn cdf_of(h: &BTreeMap<u64, u64>) -> Vec<(f64, f64)> {
    let total = h.values().sum::<u64>().max(1) as f64;
    let mut seen = 0;
    h.iter()
        .map(|(&k, &n)| {
            seen += n;
            (k as f64, seen as f64 / total)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thesis_definition() {
        let ip = |x| Ipv4Addr::new(10, 0, 0, x);
        // a b a a c b: a repeats after 2 and 1, b after 4.
        let a = CamAnalysis::from_destinations([ip(1), ip(2), ip(1), ip(1), ip(3), ip(2)]);
        assert_eq!(a.destinations, 3);
        assert_eq!(a.repeats(), 3);
        assert_eq!(a.histogram, BTreeMap::from([(1, 1), (2, 1), (4, 1)]));
        assert_eq!(a.entries_for(0.5), 2);
        assert_eq!(a.entries_for(1.0), 4);
        assert!(a.csv().ends_with("4,1,1.000000\n"));
        assert_eq!(a.cdf_points().len(), 3);
        // LRU: the second a has b between (2), the third nothing (1), the second b has a and c
        // between (3).
        assert_eq!(a.lru_histogram, BTreeMap::from([(1, 1), (2, 1), (3, 1)]));
        assert_eq!(a.lru_entries_for(1.0), 3);
    }

    /// The Fenwick tree against a direct count of distinct destinations, over enough packets
    /// to compact it many times.
    #[test]
    fn stack_distance_matches_a_direct_count() {
        let mut x = 12345u64;
        let dsts: Vec<Ipv4Addr> = (0..5_000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // A skewed mix of 300 destinations.
                let r = (x >> 33) % 300;
                Ipv4Addr::from(10u32 << 24 | (r * r / 300) as u32)
            })
            .collect();
        let mut sd = StackDistance::new();
        let mut want = BTreeMap::new();
        for (i, d) in dsts.iter().enumerate() {
            let got = sd.access(*d);
            let direct = dsts[..i].iter().rposition(|e| e == d).map(|j| {
                let between: std::collections::HashSet<_> = dsts[j + 1..i].iter().collect();
                between.len() as u64 + 1
            });
            assert_eq!(got, direct, "packet {i}");
            if let Some(v) = direct {
                *want.entry(v).or_insert(0u64) += 1;
            }
        }
        assert_eq!(CamAnalysis::from_destinations(dsts).lru_histogram, want);
        assert_eq!(
            sd.tree.len(),
            StackDistance::MIN_CAPACITY + 1,
            "compacted to the live destinations"
        );
    }

    #[test]
    fn reads_a_trace() {
        let mut w = tandem_wire::pcap::TraceWriter::ethernet(Vec::new()).unwrap();
        for (i, x) in [1u8, 2, 1].iter().enumerate() {
            let mut f = vec![0u8; 60];
            f[12..14].copy_from_slice(&[0x08, 0x00]);
            f[14] = 0x45;
            f[16..18].copy_from_slice(&46u16.to_be_bytes());
            f[22] = 64;
            f[23] = 17;
            f[30..34].copy_from_slice(&[10, 0, 0, *x]);
            w.write(i as u64, &f, 60).unwrap();
        }
        let bytes = w.into_inner();
        let a = CamAnalysis::from_trace(&bytes[..]).unwrap();
        assert_eq!((a.packets, a.ipv4_packets, a.repeats()), (3, 3, 1));
        assert!(CamAnalysis::from_trace(&b"nope"[..]).is_err());
    }
}
