//! Topologies and small helpers the experiments share.

use super::topology::{NodeKind, Topology};
use tandem_sim::time::NS;

/// Processing latency of the store-and-forward switch after the last bit is in: calibrated so
/// that one switch adds the thesis's 7 us to a minimum-sized (64-byte) frame (Figure 4.4): 7 us
/// less the frame's 672 ns of reception and the 5 ns cable. Reception is the kernel's (the
/// experiments that have switches run on it): a frame is in once its 60 bytes, FCS, preamble
/// and gap (84 bytes at 1 Gb/s) have passed. This is the one number taken from the thesis's
/// measurements; every larger-frame switch number is then a prediction.
pub const SWITCH_LATENCY_PS: u64 = 7_000 * NS - 672 * NS - 5 * NS;

/// A chain: host - `n` devices of `kind` - host. Returns the topology and the two hosts.
pub fn chain(kind: NodeKind, n: usize) -> (Topology, usize, usize) {
    let mut t = Topology::new();
    let a = t.add(NodeKind::Host);
    let devs: Vec<usize> = (0..n).map(|_| t.add(kind)).collect();
    let b = t.add(NodeKind::Host);
    t.link(a, devs[0]);
    for w in devs.windows(2) {
        t.link(w[0], w[1]);
    }
    t.link(devs[n - 1], b);
    (t, a, b)
}

/// Three devices and six hosts (Figures 4.2 and 4.3): hosts 1 and 4 on device A, 2 and 5 on B,
/// 3 and 6 on C; the line joins A-B and B-C, the ring adds C-A. Returns the topology and hosts
/// 1..6 (index 0 is host 1).
pub fn three_by_two(kind: NodeKind, ring: bool) -> (Topology, [usize; 6]) {
    let mut t = Topology::new();
    let d: Vec<usize> = (0..3).map(|_| t.add(kind)).collect();
    let mut h = [0usize; 6];
    for (i, slot) in h.iter_mut().enumerate() {
        *slot = t.add(NodeKind::Host);
        t.link(*slot, d[i % 3]);
    }
    t.link(d[0], d[1]);
    t.link(d[1], d[2]);
    if ring {
        t.link(d[2], d[0]);
    }
    (t, h)
}

/// The six flows of Table 4.1 as (source, destination) host numbers (1-based).
pub const TABLE_4_1_FLOWS: [(usize, usize); 6] = [(1, 2), (2, 3), (3, 1), (4, 6), (6, 5), (5, 4)];

/// Mean of a sample in microseconds (0 when empty).
pub fn mean_us(ps: &[u64]) -> f64 {
    if ps.is_empty() {
        return 0.0;
    }
    ps.iter().map(|&x| x as f64).sum::<f64>() / ps.len() as f64 / 1e6
}
