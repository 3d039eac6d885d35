//! The memory estimate of a scenario (`tandem_sim::limits`) against the heap a run really
//! uses, counted by a global allocator: apart from the packets in flight (which it leaves out:
//! queue limits and TCP windows bound them) it is an upper bound, and not a wild one.

use std::alloc::{GlobalAlloc, Layout, System};
use std::mem::size_of;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use tandem_sim::limits::{fmt_bytes, Limits, BASE_BYTES};
use tandem_sim::packet::Packet;
use tandem_sim::scenario::Scenario;
use tandem_sim::{report, run};
use tandem_testkit::Scratch;

/// The system allocator, counting the bytes held now and the most held since the last reset.
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = NOW.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call goes to `System` with the caller's arguments; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // The old block and the new one may both be held while the data moves.
            grew(new_size);
            NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Loads and runs a scenario and writes its tables; returns (estimate less the fixed base,
/// peak heap bytes less what the packets in flight may explain, the endpoints the estimate
/// counts for flows that never started).
fn measure(out: &Path, text: &str) -> (u64, u64, u64) {
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let sc = Scenario::parse_with(text, "m.toml", "m", Path::new("."), &[], &Limits::max_memory(64 << 30))
        .unwrap_or_else(|e| panic!("{e}"));
    let est = sc.memory_estimate().total() - BASE_BYTES;
    let mut sim = run::build(&sc, None).unwrap();
    let step = sc.duration / 10;
    let mut t = 0;
    while t < sc.duration {
        t = (t + step).min(sc.duration);
        sim.run_until(t);
    }
    std::fs::create_dir_all(out).unwrap();
    report::write_tables(&sim, out).unwrap();
    // The packet pool at its peak (its list at up to twice the packets, and the old list while
    // it grows: three times) with its free list and an event per packet.
    let packets = sim.packets_in_flight().1 as u64;
    let in_flight = packets * (3 * size_of::<Packet>() as u64 + 3 * 4 + 2 * 32);
    // A TCP flow's two endpoints are made when it starts: the estimate counts them for every
    // flow (it cannot know which start), so those of the flows that never started are the
    // estimate's slack, left out of the lower check.
    let unstarted = sim.flow_results().filter(|(_, _, eps)| eps[0].is_none()).count() as u64;
    let slack = unstarted * 2 * size_of::<tandem_sim::tcp::TcpEndpoint>() as u64;
    drop(sim);
    drop(sc);
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base) as u64;
    (est, peak.saturating_sub(in_flight), slack)
}

const FAT_TREE: &str = r#"
duration = "1ms"
[topology]
kind = "fat_tree"
k = 24
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "10Gbps", delay = "1us" }
[[flows]]
kind = "poisson"
cdf = "websearch"
load = "30%"
count = 20000
[output]
plots = false
queue_sample_interval = "100us"
"#;

const STAR: &str = r#"
duration = "1ms"
[topology]
kind = "star"
hosts = 20000
link = { rate = "10Gbps", delay = "1us" }
[[flows]]
kind = "bulk"
from = "h1..h19999"
to = "h0"
bytes = "100KB"
[output]
plots = false
sample_ports = ["switch0:0"]
"#;

const SAMPLES: &str = r#"
duration = "2ms"
[topology]
kind = "star"
hosts = 3
link = { rate = "10Gbps", delay = "1us" }
[[flows]]
kind = "bulk"
from = ["h1", "h2"]
to = "h0"
bytes = "10MB"
[output]
plots = false
sample_ports = ["switch0:0", "switch0:1", "switch0:2"]
queue_sample_interval = "10ns"
"#;

/// 6,400 flows that all start and complete: every endpoint is made and kept.
const INCAST: &str = r#"
duration = "200ms"
[topology]
kind = "star"
hosts = 65
link = { rate = "10Gbps", delay = "1us" }
[[flows]]
kind = "incast"
senders = "h1..h64"
receiver = "h0"
bytes = "20KB"
repeats = 100
gap = "1ms"
[output]
plots = false
sample_ports = ["switch0:0"]
"#;

#[test]
fn the_estimate_bounds_the_heap_a_run_uses() {
    let s = Scratch::new("memory");
    for (name, text) in [
        ("fat-tree", FAT_TREE),
        ("star", STAR),
        ("samples", SAMPLES),
        ("incast", INCAST),
    ] {
        let (est, peak, slack) = measure(&s.join(name), text);
        eprintln!(
            "{name}: estimate {} (without the base), peak heap {} (without the packets)",
            fmt_bytes(est),
            fmt_bytes(peak)
        );
        assert!(peak <= est, "{name}: peak heap {peak} above the estimate {est}");
        assert!(
            peak >= (est - slack) / 4,
            "{name}: peak heap {peak} far below the estimate {est} less {slack} for unstarted flows"
        );
    }
}
