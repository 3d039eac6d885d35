//! The memory estimate of a scenario (`tandem_sim::limits`) against the heap a run really
//! uses, counted by a global allocator: apart from the packets in flight (which it leaves out:
//! queue limits and TCP windows bound them) it is an upper bound, and not a wild one.

use std::alloc::{GlobalAlloc, Layout, System};
use std::mem::size_of;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use tandem_sim::limits::{fmt_bytes, Limits, BASE_BYTES};
use tandem_sim::packet::Packet;
use tandem_sim::scenario::Scenario;
use tandem_sim::{report, run};
use tandem_testkit::Scratch;

/// The system allocator, counting the bytes held now and the most held since the last reset.
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The counters are the process's: a test holds this while it runs, so that no other test's
/// heap counts towards its peak.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

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
    measure_with(out, text, false).0
}

/// [`measure`], with `retire` the run retiring quiet flows (`Sim::retire_quiet_flows`);
/// also returns the flows retired.
fn measure_with(out: &Path, text: &str, retire: bool) -> ((u64, u64, u64), u64) {
    measure_on(out, text, retire, None)
}

/// [`measure_with`] on `threads` threads (a partitioned run) or, with `None`, one simulation.
fn measure_on(out: &Path, text: &str, retire: bool, threads: Option<u16>) -> ((u64, u64, u64), u64) {
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let sets: Vec<(String, String)> = threads
        .map(|n| ("threads".to_string(), n.to_string()))
        .into_iter()
        .collect();
    let sc = Scenario::parse_with(
        text,
        "m.toml",
        "m",
        Path::new("."),
        &sets,
        &Limits::max_memory(64 << 30),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let est = sc.memory_estimate().total() - BASE_BYTES;
    let mut engine = run::build_engine(&sc, None).unwrap();
    if retire {
        assert!(engine.retire_quiet_flows());
    }
    let step = sc.duration / 10;
    let mut t = 0;
    while t < sc.duration {
        t = (t + step).min(sc.duration);
        engine.run_until(t);
    }
    let sim = engine.finish();
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
    let retired = sim.retired_flows();
    drop(sim);
    drop(sc);
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base) as u64;
    ((est, peak.saturating_sub(in_flight), slack), retired)
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
    let _serial = serial();
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

/// A run that retires its quiet flows (as `tandem sim run` does) holds the endpoints of the
/// flows that are active, not of every flow that ever started, and writes the same tables.
#[test]
fn retiring_quiet_flows_frees_their_endpoints_and_changes_no_output() {
    let _serial = serial();
    let s = Scratch::new("memory-retire");
    // A 1 ms minimum RTO, so that all but a few of the flows complete and go quiet.
    let quiet = INCAST.replacen("[topology]", "[tcp]\nmin_rto = \"1ms\"\n[topology]", 1);
    let ((_, kept, _), none) = measure_with(&s.join("kept"), &quiet, false);
    let ((_, freed, _), retired) = measure_with(&s.join("retired"), &quiet, true);
    eprintln!(
        "incast, 6,400 flows in 100 rounds: peak heap {} keeping every endpoint, {} retiring {retired} quiet flows",
        fmt_bytes(kept),
        fmt_bytes(freed)
    );
    assert_eq!(none, 0);
    // A flow that completes goes quiet and is retired (a few may still wait for a timer at
    // the end).
    assert!(retired >= 6_300, "{retired} flows retired");
    // The endpoints of 6,300 finished flows (2.2 KB and more each): at least half of that
    // is no longer held at the peak.
    let endpoints = 6_300 * 2 * size_of::<tandem_sim::tcp::TcpEndpoint>() as u64;
    assert!(
        freed + endpoints / 2 <= kept,
        "retiring: peak heap {freed}, keeping: {kept}"
    );
    same_tables(&s.join("kept"), &s.join("retired"), "incast");
}

/// The tables of a run that kept every endpoint (`kept`) and of one that retired quiet flows
/// (`retired`) are the same, byte for byte.
fn same_tables(kept: &Path, retired: &Path, what: &str) {
    for table in ["flows.csv", "drops.csv", "queues.csv"] {
        let a = std::fs::read(kept.join(table)).unwrap();
        let b = std::fs::read(retired.join(table)).unwrap();
        assert!(a == b, "{what}: {table} differs when quiet flows are retired");
    }
}

/// Request-response exchanges (whose server writes its response and closes while its
/// endpoint's report is being handled), netperf-style transactions, bulk flows and a Poisson
/// mix over a small fat tree with drops and timeouts, in both flavours: the same tables with
/// and without retiring quiet flows.
#[test]
fn retiring_quiet_flows_changes_no_output_of_any_flow_kind() {
    let _serial = serial();
    let s = Scratch::new("memory-retire-kinds");
    let mixed = r#"
duration = "30ms"
[tcp]
min_rto = "1ms"
[switch.queue]
limit_packets = 20
[topology]
kind = "fat_tree"
k = 4
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "10Gbps", delay = "1us" }
[[flows]]
kind = "request_response"
pairs = [["h1", "h0"], ["h2", "h0"], ["h3", "h5"]]
request = "2KB"
response = "300KB"
repeats = 20
gap = "1ms"
[[flows]]
kind = "transactions"
pairs = [["h4", "h6"], ["h7", "h6"]]
request = "100B"
response = "20KB"
[[flows]]
kind = "bulk"
pairs = [["h8", "h0"], ["h9", "h0"]]
bytes = "2MB"
[[flows]]
kind = "poisson"
cdf = "websearch"
load = "40%"
count = 300
[output]
plots = false
sample_ports = ["edge0:0"]
"#;
    for flavor in ["linux", "ns3"] {
        let text = mixed.replace("[tcp]", &format!("[tcp]\nflavor = \"{flavor}\""));
        let (_, none) = measure_with(&s.join(&format!("{flavor}-kept")), &text, false);
        let (_, retired) = measure_with(&s.join(&format!("{flavor}-retired")), &text, true);
        eprintln!("{flavor}: {retired} quiet flows retired");
        assert_eq!(none, 0);
        assert!(retired >= 100, "{flavor}: {retired} flows retired");
        same_tables(
            &s.join(&format!("{flavor}-kept")),
            &s.join(&format!("{flavor}-retired")),
            flavor,
        );
    }
}

/// A partitioned run retires quiet flows too, every partition at once at the end of a window
/// where no partition holds anything of the flow: the same tables as keeping every endpoint,
/// the same flows retired for any number of threads (about as many as one simulation
/// retires), and the endpoints' memory given back.
#[test]
fn a_partitioned_run_retires_quiet_flows_and_changes_no_output() {
    let _serial = serial();
    let s = Scratch::new("memory-retire-threads");
    // 1,500 incast flows into h0 from every pod of a k = 4 fat tree (two pods a partition on
    // two threads), web-search flows and request-response exchanges beside them, with a 1 ms
    // minimum RTO so that nearly every flow completes and goes quiet.
    let text = r#"
duration = "40ms"
[tcp]
min_rto = "1ms"
[switch.queue]
limit_packets = 30
[topology]
kind = "fat_tree"
k = 4
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "10Gbps", delay = "1us" }
[[flows]]
kind = "incast"
senders = "h1..h15"
receiver = "h0"
bytes = "20KB"
repeats = 100
gap = "300us"
[[flows]]
kind = "poisson"
cdf = "websearch"
load = "30%"
count = 3000
[[flows]]
kind = "request_response"
pairs = [["h1", "h14"], ["h6", "h9"]]
request = "2KB"
response = "100KB"
repeats = 10
gap = "1ms"
[output]
plots = false
sample_ports = ["edge0:0"]
"#;
    let (_, single) = measure_on(&s.join("one"), text, true, None);
    let mut counts = Vec::new();
    for threads in [2u16, 3] {
        let kept_dir = s.join(&format!("{threads}-kept"));
        let retired_dir = s.join(&format!("{threads}-retired"));
        let ((_, kept, _), none) = measure_on(&kept_dir, text, false, Some(threads));
        let ((_, freed, _), retired) = measure_on(&retired_dir, text, true, Some(threads));
        eprintln!(
            "{threads} threads: peak heap {} keeping every endpoint, {} retiring {retired} quiet flows \
             (one simulation: {single})",
            fmt_bytes(kept),
            fmt_bytes(freed)
        );
        assert_eq!(none, 0);
        assert!(
            retired >= 1_400 && retired * 20 >= single * 19,
            "{threads} threads: {retired} flows retired"
        );
        // The endpoints of 1,400 finished flows: at least half of that no longer held.
        let endpoints = 1_400 * 2 * size_of::<tandem_sim::tcp::TcpEndpoint>() as u64;
        assert!(
            freed + endpoints / 2 <= kept,
            "{threads} threads: retiring {freed}, keeping {kept}"
        );
        same_tables(&kept_dir, &retired_dir, &format!("{threads} threads"));
        counts.push(retired);
    }
    assert_eq!(counts[0], counts[1], "flows retired on 2 and 3 threads");
}
