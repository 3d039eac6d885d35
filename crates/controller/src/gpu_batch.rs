//! The host side of the GPU backend, compiled and tested with or without the `cuda` feature.
//!
//! A batch runs through the learning switch in the phases of [`crate::CpuBackend`]: the sources
//! are learnt in batch order on the host (logging every change), the destinations are resolved
//! independently, one thread per event, and the replies are built on the host in batch order. Only
//! the resolve phase runs on the GPU; here it is packed into flat arrays ([`PackedBatch`]), and
//! [`reference_resolve`] runs the kernel's algorithm ([`KERNEL_SRC`]) on them in plain Rust, step
//! for step, so the packing is tested without a GPU. [`PackedBackend`] is the whole pipeline with
//! that reference resolver; the `cuda` backend is the same pipeline with the kernel.
//!
//! The packed layout (structure of arrays, `u32` and `u64` only):
//! * per event `i` (the batch as the pool sorted it, so a warp takes 32 events of similar size):
//!   `ev_slot[i]`, the datapath's slot (datapaths numbered in order of first appearance in the
//!   batch) and `ev_dst[i]`, the destination address as a `u64` ([`mac_key`]);
//! * an open-addressing hash table with linear probing, a power-of-two number of buckets at most
//!   half full, keyed by `(slot, address)` at bucket [`bucket_hash`]` & mask`: `tab_mac` (the
//!   address, [`EMPTY_KEY`] for a free bucket), `tab_slot`, `tab_before` (the entry before the
//!   batch as a port word, see below) and `tab_wbeg..tab_wend`, the entry's range in the write
//!   history. The table holds every entry of every datapath in the batch, so the kernel does the
//!   lookups itself;
//! * the write history, grouped by entry and in event order within an entry: `w_event[k]` (the
//!   index of the event whose source changed the entry) and `w_port[k]` (the new port). The kernel
//!   binary-searches an entry's range for the last write at or before its own event index: that
//!   is "the table as event `i` saw it".
//!
//! The result is one port word per event: [`LEARNT`]` | port` for a learnt unicast destination,
//! `0` for one to flood (unknown or a group address); [`decode`] reads it.

use crate::backend::{respond_in_order, Backend, LearnLog};
use crate::event::Event;
use crate::l2::L2Switch;
use crate::sink::ReplySink;
use rustc_hash::FxHashMap;
use tandem_wire::MacAddr;

/// Name of the kernel function in [`KERNEL_SRC`].
pub const KERNEL_NAME: &str = "l2_resolve";

/// Threads per block of the kernel launch: 8 warps of 32 events.
pub const BLOCK_THREADS: u32 = 256;

/// Marks a free bucket in `tab_mac` (no address has bits above the 48th).
pub const EMPTY_KEY: u64 = u64::MAX;

/// Set in a port word when the destination resolved to a learnt port (in the low 32 bits).
pub const LEARNT: u64 = 1 << 32;

/// The group (I/G) bit of an address in its [`mac_key`] form.
pub const GROUP_BIT: u64 = 1 << 40;

/// Fewest buckets of the hash table.
const MIN_BUCKETS: usize = 64;

/// Events packed at a time: event and write indices are `u32` on the device.
const MAX_EVENTS: usize = 1 << 30;

/// Multipliers of [`bucket_hash`] (also spelt out in [`KERNEL_SRC`]; a test checks they agree).
const HASH_SLOT_MUL: u64 = 0x9e37_79b9_7f4a_7c15;
/// Second multiplier of [`bucket_hash`].
const HASH_MIX_MUL: u64 = 0xff51_afd7_ed55_8ccd;

/// CUDA C source of the resolve kernel, compiled at run time by NVRTC. One thread resolves one
/// event's destination exactly as [`reference_resolve`] does.
pub const KERNEL_SRC: &str = r#"
#define EMPTY_KEY 0xffffffffffffffffull
#define LEARNT (1ull << 32)
#define GROUP_BIT (1ull << 40)

__device__ __forceinline__ unsigned long long bucket_hash(unsigned int slot, unsigned long long mac) {
    unsigned long long x = mac ^ ((unsigned long long)slot * 0x9e3779b97f4a7c15ull);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

extern "C" __global__ void l2_resolve(
    unsigned int n,
    const unsigned int *__restrict__ ev_slot,
    const unsigned long long *__restrict__ ev_dst,
    unsigned long long mask,
    const unsigned long long *__restrict__ tab_mac,
    const unsigned int *__restrict__ tab_slot,
    const unsigned long long *__restrict__ tab_before,
    const unsigned int *__restrict__ tab_wbeg,
    const unsigned int *__restrict__ tab_wend,
    const unsigned int *__restrict__ w_event,
    const unsigned int *__restrict__ w_port,
    unsigned long long *__restrict__ out)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    unsigned long long dst = ev_dst[i];
    unsigned int slot = ev_slot[i];
    unsigned long long word = 0;
    if ((dst & GROUP_BIT) == 0) {
        unsigned long long b = bucket_hash(slot, dst) & mask;
        for (;;) {
            unsigned long long key = tab_mac[b];
            if (key == EMPTY_KEY) {
                break;
            }
            if (key == dst && tab_slot[b] == slot) {
                unsigned int beg = tab_wbeg[b];
                unsigned int lo = beg;
                unsigned int hi = tab_wend[b];
                while (lo < hi) {
                    unsigned int mid = lo + (hi - lo) / 2;
                    if (w_event[mid] <= i) {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                word = lo == beg ? tab_before[b] : (LEARNT | (unsigned long long)w_port[lo - 1]);
                break;
            }
            b = (b + 1) & mask;
        }
    }
    out[i] = word;
}
"#;

/// An address as the kernel sees it: its six bytes, most significant first, in a `u64`.
pub fn mac_key(mac: MacAddr) -> u64 {
    let m = mac.0;
    u64::from_be_bytes([0, 0, m[0], m[1], m[2], m[3], m[4], m[5]])
}

/// The hash of a `(slot, address)` key; its low bits pick the first bucket probed.
pub fn bucket_hash(slot: u32, mac: u64) -> u64 {
    let mut x = mac ^ u64::from(slot).wrapping_mul(HASH_SLOT_MUL);
    x ^= x >> 33;
    x = x.wrapping_mul(HASH_MIX_MUL);
    x ^ (x >> 33)
}

/// The port word of a resolution: `LEARNT | port`, or 0 for none.
pub fn encode(port: Option<u32>) -> u64 {
    port.map_or(0, |p| LEARNT | u64::from(p))
}

/// The resolution a port word stands for.
pub fn decode(word: u64) -> Option<u32> {
    if word & LEARNT == 0 {
        None
    } else {
        // The low 32 bits are the port.
        Some(word as u32)
    }
}

/// One batch's resolve phase as flat arrays (see the module documentation for the layout).
/// Scratch space is kept between batches.
#[derive(Debug, Clone, Default)]
pub struct PackedBatch {
    /// Per event: the datapath's slot.
    pub ev_slot: Vec<u32>,
    /// Per event: the destination address ([`mac_key`]).
    pub ev_dst: Vec<u64>,
    /// Per bucket: the address, or [`EMPTY_KEY`].
    pub tab_mac: Vec<u64>,
    /// Per bucket: the datapath slot.
    pub tab_slot: Vec<u32>,
    /// Per bucket: the entry before the batch, as a port word.
    pub tab_before: Vec<u64>,
    /// Per bucket: where the entry's writes start in `w_event` and `w_port`.
    pub tab_wbeg: Vec<u32>,
    /// Per bucket: where the entry's writes end (exclusive).
    pub tab_wend: Vec<u32>,
    /// Per write: the index of the event that made it (never empty: a sentinel when no write).
    pub w_event: Vec<u32>,
    /// Per write: the port written.
    pub w_port: Vec<u32>,
    slots: FxHashMap<u64, u32>,
}

impl PackedBatch {
    /// Events packed.
    pub fn len(&self) -> usize {
        self.ev_dst.len()
    }

    /// True when no event is packed.
    pub fn is_empty(&self) -> bool {
        self.ev_dst.is_empty()
    }

    /// Buckets minus one (the bucket count is a power of two).
    pub fn mask(&self) -> u64 {
        self.tab_mac.len().saturating_sub(1) as u64
    }

    /// Packs `batch` (of at most `MAX_EVENTS` events) after its learn phase: `app` holds the
    /// tables after the batch's sources were learnt, `log` the changes they made.
    pub(crate) fn pack(&mut self, batch: &[Event], app: &L2Switch, log: &LearnLog) {
        self.slots.clear();
        self.ev_slot.clear();
        self.ev_dst.clear();
        for ev in batch {
            let next = self.slots.len() as u32;
            let slot = *self.slots.entry(ev.dpid).or_insert(next);
            self.ev_slot.push(slot);
            self.ev_dst.push(mac_key(ev.packet_in.eth_dst));
        }
        let entries: usize = self.slots.keys().map(|&d| app.table_len(d)).sum::<usize>() + log.iter().count();
        let buckets = (2 * entries).max(MIN_BUCKETS).next_power_of_two();
        self.tab_mac.clear();
        self.tab_mac.resize(buckets, EMPTY_KEY);
        for v in [&mut self.tab_slot, &mut self.tab_wbeg, &mut self.tab_wend] {
            v.clear();
            v.resize(buckets, 0);
        }
        self.tab_before.clear();
        self.tab_before.resize(buckets, 0);
        self.w_event.clear();
        self.w_port.clear();
        // The entries the batch changed, with their histories.
        for (&(dpid, mac), h) in log.iter() {
            let Some(&slot) = self.slots.get(&dpid) else { continue };
            let (b, _) = self.find_or_insert(slot, mac_key(mac));
            self.tab_before[b] = encode(h.before);
            self.tab_wbeg[b] = self.w_event.len() as u32;
            for &(i, port) in &h.writes {
                self.w_event.push(i as u32);
                self.w_port.push(port);
            }
            self.tab_wend[b] = self.w_event.len() as u32;
        }
        // Every other entry is as it was before the batch.
        let slots: Vec<(u64, u32)> = self.slots.iter().map(|(&d, &s)| (d, s)).collect();
        for (dpid, slot) in slots {
            for (mac, port) in app.table_entries(dpid) {
                let (b, inserted) = self.find_or_insert(slot, mac_key(mac));
                if inserted {
                    self.tab_before[b] = encode(Some(port));
                    let at = self.w_event.len() as u32;
                    (self.tab_wbeg[b], self.tab_wend[b]) = (at, at);
                }
            }
        }
        if self.w_event.is_empty() {
            self.w_event.push(u32::MAX);
            self.w_port.push(0);
        }
    }

    /// The bucket of `(slot, mac)`, claiming a free one when absent (then `true`).
    fn find_or_insert(&mut self, slot: u32, mac: u64) -> (usize, bool) {
        let mask = self.mask();
        let mut b = bucket_hash(slot, mac) & mask;
        loop {
            let i = b as usize;
            if self.tab_mac[i] == EMPTY_KEY {
                self.tab_mac[i] = mac;
                self.tab_slot[i] = slot;
                return (i, true);
            }
            if self.tab_mac[i] == mac && self.tab_slot[i] == slot {
                return (i, false);
            }
            b = (b + 1) & mask;
        }
    }
}

/// Runs the kernel's algorithm on the host: one port word per packed event, into `out`.
pub fn reference_resolve(p: &PackedBatch, out: &mut Vec<u64>) {
    out.clear();
    out.extend((0..p.len()).map(|i| resolve_one(p, i)));
}

/// What the kernel's thread `i` computes.
fn resolve_one(p: &PackedBatch, i: usize) -> u64 {
    let (dst, slot) = (p.ev_dst[i], p.ev_slot[i]);
    if dst & GROUP_BIT != 0 {
        return 0;
    }
    let mask = p.mask();
    let mut b = bucket_hash(slot, dst) & mask;
    loop {
        let at = b as usize;
        let key = p.tab_mac[at];
        if key == EMPTY_KEY {
            return 0;
        }
        if key == dst && p.tab_slot[at] == slot {
            let beg = p.tab_wbeg[at] as usize;
            let (mut lo, mut hi) = (beg, p.tab_wend[at] as usize);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if p.w_event[mid] as usize <= i {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return if lo == beg {
                p.tab_before[at]
            } else {
                LEARNT | u64::from(p.w_port[lo - 1])
            };
        }
        b = (b + 1) & mask;
    }
}

/// The GPU backend's host pipeline with [`reference_resolve`] in place of the kernel: learn on
/// the host, pack, resolve, reply in batch order. Gives the scalar backend's replies and
/// counters (a property test checks it); the `cuda` backend differs only in running the resolve
/// step on the device.
#[derive(Debug, Clone, Default)]
pub struct PackedBackend {
    log: LearnLog,
    packed: PackedBatch,
    words: Vec<u64>,
    resolved: Vec<Option<u32>>,
}

impl PackedBackend {
    /// A backend with empty scratch space.
    pub fn new() -> PackedBackend {
        PackedBackend::default()
    }

    /// The last batch as packed for the device.
    pub fn packed(&self) -> &PackedBatch {
        &self.packed
    }

    /// Processes `batch` with `resolve` filling one port word per packed event (it must leave
    /// exactly [`PackedBatch::len`] words; a missing word floods).
    pub(crate) fn process_with(
        &mut self,
        batch: &[Event],
        app: &mut L2Switch,
        out: &mut impl ReplySink,
        mut resolve: impl FnMut(&PackedBatch, &mut Vec<u64>),
    ) {
        for chunk in batch.chunks(MAX_EVENTS) {
            self.log.learn(chunk, app);
            self.packed.pack(chunk, app, &self.log);
            self.words.clear();
            resolve(&self.packed, &mut self.words);
            self.resolved.clear();
            self.resolved
                .extend((0..chunk.len()).map(|i| self.words.get(i).copied().and_then(decode)));
            respond_in_order(chunk, &self.resolved, app, out);
        }
    }
}

impl<O: ReplySink> Backend<L2Switch, O> for PackedBackend {
    fn process(&mut self, _now_ps: u64, batch: &[Event], app: &mut L2Switch, out: &mut O) {
        self.process_with(batch, app, out, reference_resolve);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::ScalarBackend;
    use crate::event::PacketInEvent;
    use crate::l2::L2Config;
    use tandem_wire::openflow::Version;

    fn ev(dpid: u64, in_port: u32, src: u8, dst: u8) -> Event {
        let mut f = vec![0u8; 60];
        f[0] = 2;
        f[5] = dst;
        f[6] = 2;
        f[11] = src;
        Event {
            dpid,
            packet_in: PacketInEvent::from_frame(Version::V1_0, 0, 1, in_port, 60, f).unwrap(),
        }
    }

    #[test]
    fn kernel_source_spells_the_host_constants() {
        for c in [HASH_SLOT_MUL, HASH_MIX_MUL] {
            assert!(
                KERNEL_SRC.contains(&format!("{c:#x}ull")),
                "{c:#x} missing from the kernel"
            );
        }
        assert!(KERNEL_SRC.contains(&format!("extern \"C\" __global__ void {KERNEL_NAME}(")));
        assert!(KERNEL_SRC.contains("(1ull << 32)") && LEARNT == 1 << 32);
        assert!(KERNEL_SRC.contains("(1ull << 40)") && GROUP_BIT == 1 << 40);
        assert_eq!(BLOCK_THREADS % crate::pool::GROUP_SIZE as u32, 0);
    }

    #[test]
    fn words_round_trip() {
        for p in [None, Some(0), Some(7), Some(u32::MAX)] {
            assert_eq!(decode(encode(p)), p);
        }
        assert_eq!(mac_key(MacAddr([1, 2, 3, 4, 5, 6])), 0x0102_0304_0506);
        assert_ne!(mac_key(MacAddr::BROADCAST) & GROUP_BIT, 0);
        assert_eq!(mac_key(MacAddr([2, 0, 0, 0, 0, 1])) & GROUP_BIT, 0);
    }

    #[test]
    fn layout_of_a_small_batch() {
        let mut sw = L2Switch::new(L2Config::default());
        let mut out = Vec::new();
        // Before the batch: station 1 on port 1 at dpid 5.
        ScalarBackend.process(0, &[ev(5, 1, 1, 9)], &mut sw, &mut out);
        let batch = [ev(5, 2, 2, 1), ev(7, 3, 3, 2), ev(5, 4, 1, 2), ev(5, 2, 2, 1)];
        let mut pb = PackedBackend::new();
        out.clear();
        pb.process(0, &batch, &mut sw, &mut out);
        let p = pb.packed();
        assert_eq!(p.ev_slot, [0, 1, 0, 0]);
        assert_eq!(p.ev_dst[0], 0x0200_0000_0001);
        assert!(p.tab_mac.len().is_power_of_two() && p.tab_mac.len() >= MIN_BUCKETS);
        // Three entries: (5, 1) moved by event 2, (5, 2) learnt by event 0, (7, 3) by event 1.
        assert_eq!(p.tab_mac.iter().filter(|&&k| k != EMPTY_KEY).count(), 3);
        let mut w: Vec<(u32, u32)> = p.w_event.iter().copied().zip(p.w_port.iter().copied()).collect();
        w.sort_unstable();
        assert_eq!(w, [(0, 2), (1, 3), (2, 4)]);
        let mut words = Vec::new();
        reference_resolve(p, &mut words);
        let got: Vec<Option<u32>> = words.into_iter().map(decode).collect();
        // Event 0 sees 1 still on port 1; event 1's 2 is unknown at dpid 7; event 2 sees 2 on
        // port 2; event 3 sees 1 moved to port 4.
        assert_eq!(got, [Some(1), None, Some(2), Some(4)]);
    }

    #[test]
    fn empty_batch_sends_nothing_and_write_arrays_are_never_empty() {
        let mut sw = L2Switch::new(L2Config::default());
        let mut out = Vec::new();
        let mut pb = PackedBackend::new();
        pb.process(0, &[], &mut sw, &mut out);
        assert!(out.is_empty() && pb.packed().is_empty());
        // A batch that learns nothing new still has a (sentinel) write for the device.
        pb.process(0, &[ev(1, 1, 1, 2)], &mut sw, &mut out);
        pb.process(0, &[ev(1, 1, 1, 2)], &mut sw, &mut out);
        assert_eq!(pb.packed().w_event, [u32::MAX]);
        assert_eq!(pb.packed().tab_wbeg, pb.packed().tab_wend);
        assert_eq!(sw.counters().floods, 2);
    }
}
