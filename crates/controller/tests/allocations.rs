//! The batched backends answer a batch into `EncodedReplies` without an allocation per event:
//! a counting allocator counts what one steady-state batch allocates (the output's per-datapath
//! buffers growing, the parts' threads), which must not grow with the batch's events.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use tandem_controller::event::NO_BUFFER;
use tandem_controller::{
    Backend, CpuBackend, CpuParallelBackend, EncodedReplies, Event, L2Config, L2Switch, PacketInEvent,
};
use tandem_wire::openflow::Version;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// `n` events from 4 datapaths with 16 stations each, both versions, half of them unbuffered
/// (answered with a flow_mod and a packet_out carrying the frame), some to a group address.
fn events(n: usize) -> Vec<Event> {
    (0..n)
        .map(|i| {
            let h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let (dpid, src, dst) = (h % 4, (h >> 8) % 16, (h >> 20) % 17);
            let mut f = vec![0u8; 60 + i % 40];
            f[0..6].copy_from_slice(&if dst == 16 {
                [0xff; 6]
            } else {
                [2, 0, 0, 0, 0, dst as u8]
            });
            f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, src as u8]);
            let version = if i % 3 == 0 { Version::V1_3 } else { Version::V1_0 };
            let buffer = if i % 2 == 0 { i as u32 } else { NO_BUFFER };
            let len = f.len() as u16;
            let packet_in = PacketInEvent::from_frame(version, i as u32, buffer, src as u32 + 1, len, f).unwrap();
            Event { dpid, packet_in }
        })
        .collect()
}

/// Allocations of the third batch of `n` events through `backend` (the first two learn every
/// station and grow the scratch space), with the output's bytes taken as the server takes them.
fn allocations_per_batch<B: Backend<L2Switch, EncodedReplies>>(mut backend: B, n: usize) -> u64 {
    let batch = events(n);
    let mut sw = L2Switch::new(L2Config::default());
    let mut out = EncodedReplies::new();
    for _ in 0..2 {
        backend.process(0, &batch, &mut sw, &mut out);
        out.drain().for_each(drop);
    }
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    backend.process(0, &batch, &mut sw, &mut out);
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert!(out.messages() >= n / 2, "{} replies for {n} events", out.messages());
    out.drain().for_each(drop);
    after - before
}

#[test]
fn a_batch_allocates_a_bounded_number_of_times_whatever_its_events() {
    // The output's four per-datapath buffers start empty each batch and grow by doubling: a
    // few dozen allocations, a few more for 16 times the events, none per event.
    for n in [1024, 16_384] {
        let cpu = allocations_per_batch(CpuBackend::new(), n);
        assert!(cpu <= 100, "cpu: {cpu} allocations for {n} events");
        let par = allocations_per_batch(CpuParallelBackend::new(2).with_min_per_thread(1), n);
        assert!(par <= 200, "cpu-parallel: {par} allocations for {n} events");
    }
}
