//! How many CAM entries a host port needs (thesis §4.5, Figure 4.9), from a packet trace.
//!
//! The thesis's measure: for each IPv4 packet whose destination address was seen before, the
//! number of packets between it and the previous packet to the same destination, plus one. A
//! CAM of that many entries, replaced least recently used, would still hold the route when the
//! packet comes (an upper bound: the packets between may share destinations). The first packet
//! to each destination needs a route set up whatever the CAM size and is counted apart.

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
    /// Entries needed -> packets needing that many.
    pub histogram: BTreeMap<u64, u64>,
}

impl CamAnalysis {
    /// Adds the next IPv4 packet's destination (`index` counts IPv4 packets from 0).
    fn add(&mut self, last: &mut HashMap<Ipv4Addr, u64>, dst: Ipv4Addr) {
        let i = self.ipv4_packets;
        self.ipv4_packets += 1;
        match last.insert(dst, i) {
            Some(j) => *self.histogram.entry(i - j).or_insert(0) += 1,
            None => self.destinations += 1,
        }
    }

    /// Analyses a sequence of destination addresses (for tests and other sources).
    pub fn from_destinations(dsts: impl IntoIterator<Item = Ipv4Addr>) -> CamAnalysis {
        let mut a = CamAnalysis::default();
        let mut last = HashMap::new();
        for d in dsts {
            a.packets += 1;
            a.add(&mut last, d);
        }
        a
    }

    /// Reads a pcap or pcapng trace.
    pub fn from_trace<R: Read>(reader: R) -> Result<CamAnalysis, TraceError> {
        let mut r = TraceReader::new(reader)?;
        let mut a = CamAnalysis::default();
        let mut last = HashMap::new();
        while let Some(p) = r.next_packet() {
            let p = p?;
            a.packets += 1;
            if let Some(ip) = summarize(p.linktype, p.data).ipv4 {
                a.add(&mut last, ip.dst);
            }
        }
        Ok(a)
    }

    /// Packets with a previous packet to the same destination.
    pub fn repeats(&self) -> u64 {
        self.histogram.values().sum()
    }

    /// The CAM size that serves fraction `q` (0 to 1) of the repeat packets.
    pub fn entries_for(&self, q: f64) -> u64 {
        let total = self.repeats();
        let need = (q.clamp(0.0, 1.0) * total as f64).ceil() as u64;
        let mut seen = 0;
        for (&k, &n) in &self.histogram {
            seen += n;
            if seen >= need {
                return k;
            }
        }
        0
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

    /// (entries, cumulative fraction of repeat packets served) points for a plot.
    pub fn cdf_points(&self) -> Vec<(f64, f64)> {
        let total = self.repeats().max(1) as f64;
        let mut seen = 0;
        self.histogram
            .iter()
            .map(|(&k, &n)| {
                seen += n;
                (k as f64, seen as f64 / total)
            })
            .collect()
    }
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
