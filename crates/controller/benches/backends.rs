//! Events per second of the scalar and the batched CPU backend running the L2 learning switch,
//! for the paper's packet_in sizes (its Figures 4 and 6): 62 B, 82 B and a 50/50 mix; also the
//! GPU backend's host pipeline with its kernel run on the host (`packed`) and, built with
//! `--features cuda` on a machine with an NVIDIA GPU, the `cuda` backend itself.
//!
//! The sizes are those of the whole OpenFlow 1.0 packet_in message (8-byte header, 10-byte
//! packet_in header, then the frame), so the frames are 44 and 64 bytes. A batch holds 1024
//! events from 4 datapaths with 64 stations each, sorted by size as the pool hands it out; the
//! switch is warmed first, so the timed batches are the steady state (all stations known).
//!
//! Groups without a suffix build the replies as messages (`Vec<Reply>`, not encoded); groups
//! ending in `-encoded` write them into [`EncodedReplies`], encoded in place per datapath, and
//! take each batch's bytes as the live server does: the whole cost of answering a batch.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use tandem_controller::{
    Backend, CpuBackend, CpuParallelBackend, EncodedReplies, Event, L2Config, L2Switch, PackedBackend, PacketInEvent,
    Reply, ReplySink, ScalarBackend,
};
use tandem_wire::openflow::Version;

const BATCH: usize = 1024;
/// The batch of the threads comparison: large enough that a thread's part outweighs starting it.
const LARGE: usize = 65_536;
const STATIONS: u64 = 64;

/// Deterministic events: station `s` of datapath `d` sits on port `s + 1`.
fn batch(frame_len: impl Fn(usize) -> usize) -> Vec<Event> {
    batch_of(BATCH, frame_len)
}

fn batch_of(n: usize, frame_len: impl Fn(usize) -> usize) -> Vec<Event> {
    let mut v: Vec<Event> = (0..n)
        .map(|i| {
            let h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let (dpid, src, dst) = (h % 4, (h >> 8) % STATIONS, (h >> 20) % STATIONS);
            let mut f = vec![0u8; frame_len(i)];
            f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, dst as u8]);
            f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, src as u8]);
            let len = f.len() as u16;
            let packet_in = PacketInEvent::from_frame(Version::V1_0, i as u32, i as u32, src as u32 + 1, len, f)
                .expect("frame has an ethernet header");
            Event { dpid, packet_in }
        })
        .collect();
    v.sort_by_key(Event::size);
    v
}

/// A sink emptied between batches, saying how many replies it held.
trait Taken: ReplySink {
    fn take_all(&mut self) -> usize;
}

impl Taken for Vec<Reply> {
    fn take_all(&mut self) -> usize {
        let n = self.len();
        self.clear();
        n
    }
}

impl Taken for EncodedReplies {
    /// The bytes go, as the server hands them to the connections.
    fn take_all(&mut self) -> usize {
        self.drain().map(|p| black_box(p.bytes).len()).sum()
    }
}

fn run<O: Taken, B: Backend<L2Switch, O>>(c: &mut Criterion, group: &str, mut make: impl FnMut() -> B) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(BATCH as u64));
    let sizes: [(&str, Vec<Event>); 3] = [
        ("62B", batch(|_| 44)),
        ("82B", batch(|_| 64)),
        ("mixed", batch(|i| if i % 2 == 0 { 44 } else { 64 })),
    ];
    for (name, events) in &sizes {
        let mut sw = L2Switch::new(L2Config::default());
        let mut backend = make();
        let mut out = O::default();
        backend.process(0, events, &mut sw, &mut out);
        out.take_all();
        g.bench_with_input(BenchmarkId::from_parameter(name), events, |b, events| {
            b.iter(|| {
                backend.process(0, black_box(events), &mut sw, &mut out);
                black_box(out.take_all())
            })
        });
    }
    g.finish();
}

/// `cpu` against `cpu-parallel` on every core, 62 B events in batches of [`LARGE`].
fn threads(c: &mut Criterion) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let events = batch_of(LARGE, |_| 44);
    let mut g = c.benchmark_group(format!("large-batch-62B-{cores}-cores"));
    g.throughput(Throughput::Elements(LARGE as u64));
    fn one<O: Taken>(
        g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        events: &[Event],
        name: &str,
        mut backend: Box<dyn Backend<L2Switch, O>>,
    ) {
        let mut sw = L2Switch::new(L2Config::default());
        let mut out = O::default();
        backend.process(0, events, &mut sw, &mut out);
        out.take_all();
        g.bench_function(name, |b| {
            b.iter(|| {
                backend.process(0, black_box(events), &mut sw, &mut out);
                black_box(out.take_all())
            })
        });
    }
    one::<Vec<Reply>>(&mut g, &events, "cpu", Box::new(CpuBackend::new()));
    one::<Vec<Reply>>(
        &mut g,
        &events,
        "cpu-parallel",
        Box::new(CpuParallelBackend::new(cores).with_min_per_thread(1)),
    );
    one::<EncodedReplies>(&mut g, &events, "cpu-encoded", Box::new(CpuBackend::new()));
    one::<EncodedReplies>(
        &mut g,
        &events,
        "cpu-parallel-encoded",
        Box::new(CpuParallelBackend::new(cores).with_min_per_thread(1)),
    );
    g.finish();
}

fn backends(c: &mut Criterion) {
    run::<Vec<Reply>, _>(c, "scalar", || ScalarBackend);
    run::<Vec<Reply>, _>(c, "cpu", CpuBackend::new);
    run::<Vec<Reply>, _>(c, "packed", PackedBackend::new);
    run::<EncodedReplies, _>(c, "scalar-encoded", || ScalarBackend);
    run::<EncodedReplies, _>(c, "cpu-encoded", CpuBackend::new);
    threads(c);
    #[cfg(feature = "cuda")]
    cuda(c);
}

/// The cuda backend on GPU 0, or a line saying why it is skipped.
#[cfg(feature = "cuda")]
fn cuda(c: &mut Criterion) {
    use tandem_controller::CudaBackend;
    match CudaBackend::new(0) {
        Ok(first) => {
            let mut first = Some(first);
            run::<Vec<Reply>, _>(c, "cuda", || match first.take() {
                Some(b) => b,
                None => CudaBackend::new(0).unwrap_or_else(|e| panic!("GPU 0 opened once, then: {e}")),
            });
        }
        Err(e) => eprintln!("cuda: skipped: {e}"),
    }
}

criterion_group!(benches, backends);
criterion_main!(benches);
