//! Partitioned runs on several threads (`threads` in a scenario, `tandem sim run --threads N`):
//! the nodes are split into partitions, each a [`Sim`] of its own on a thread of its own, that
//! advance together in windows no longer than the shortest link delay, as in conservative
//! parallel discrete-event simulation (YAWNS; Unison for ns-3). A packet sent in a window
//! arrives at the earliest one delay later, so no partition needs another's packets before the
//! window ends; between windows the partitions hand each other the packets that crossed.
//!
//! The output does not depend on the number of partitions. Every event carries an order key
//! that the partitioning does not change (the node whose handling scheduled it, and that node's
//! own count; [`crate::sim`]'s partition module), so every node handles the same events in the
//! same order for any number of threads, and the merged results are the same, byte for byte.
//! The windows are the same too (the shortest delay of any link in the network, skipping
//! stretches where nothing is pending), so even the counts taken between windows (packets in
//! flight at most) agree. A run with `threads` orders ties at equal picosecond times by these
//! keys rather than by the global scheduling order of a run without it, so its results may
//! differ from that run's in the way two seeds' do, never more.

use crate::barrier::{Busy, SpinBarrier};
use crate::sim::Sim;
use crate::time::Time;
use crate::topology::{Shape, Topology};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How a run's nodes are split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partitioning {
    /// Each node's partition.
    pub owner: Arc<Vec<u16>>,
    /// Partitions (some may own no node when there are more threads than pieces).
    pub parts: usize,
    /// The window: the shortest positive delay of any link (`Time::MAX` when none has one).
    pub window: Time,
    /// Links between partitions.
    pub cut_links: usize,
}

impl Partitioning {
    /// For each partition, whether it owns a node (only those get a thread of their own, and
    /// partition 0, which counts the events every partition handles).
    pub fn with_nodes(&self) -> Vec<bool> {
        with_nodes(&self.owner, self.parts)
    }
}

/// For each of `parts` partitions, whether `owner` (each node's partition) gives it a node.
fn with_nodes(owner: &[u16], parts: usize) -> Vec<bool> {
    let mut has = vec![false; parts];
    for &o in owner {
        has[usize::from(o)] = true;
    }
    has
}

/// Splits `topo`'s nodes into `parts` partitions: a fat tree by pods (core switches spread
/// evenly), any other network in pieces of contiguous node numbers of about equal port counts.
/// A host always goes with its switch, and a link without delay never joins two partitions
/// (nothing would bound how soon one's packets reach the other).
pub fn partition(topo: &Topology, parts: usize) -> Partitioning {
    let parts = parts.clamp(1, usize::from(u16::MAX));
    let n = topo.nodes().len();
    let mut uf = UnionFind::new(n);
    let mut window = Time::MAX;
    for l in topo.links() {
        if l.cfg.delay == 0 || topo.is_host(l.a) || topo.is_host(l.b) {
            uf.union(l.a.0 as usize, l.b.0 as usize);
        }
        if l.cfg.delay > 0 {
            window = window.min(l.cfg.delay);
        }
    }
    let initial: Vec<usize> = match topo.shape() {
        Some(Shape::FatTree { k }) if parts > 1 => {
            let (k, h) = (k as usize, k as usize / 2);
            let hosts = k * h * h;
            let (edge0, agg0) = (hosts, hosts + k * h);
            let core0 = agg0 + k * h;
            (0..n)
                .map(|i| {
                    let pod = if i < edge0 {
                        i / (h * h)
                    } else if i < agg0 {
                        (i - edge0) / h
                    } else if i < core0 {
                        (i - agg0) / h
                    } else {
                        return (i - core0) * parts / (h * h).max(1);
                    };
                    pod * parts / k
                })
                .collect()
        }
        _ => {
            // Pieces in the order of their first node, cut at equal shares of the ports.
            let weight = |i: usize| topo.ports(crate::packet::NodeId(i as u32)).len().max(1);
            let mut piece_weight = vec![0usize; n];
            for i in 0..n {
                piece_weight[uf.find(i)] += weight(i);
            }
            let total: usize = piece_weight.iter().sum();
            let mut at = vec![usize::MAX; n];
            let mut done = 0usize;
            (0..n)
                .map(|i| {
                    let r = uf.find(i);
                    if at[r] == usize::MAX {
                        at[r] = (done * parts / total.max(1)).min(parts - 1);
                        done += piece_weight[r];
                    }
                    at[r]
                })
                .collect()
        }
    };
    // Each piece goes where its first node was put.
    let mut first_of = vec![usize::MAX; n];
    for i in 0..n {
        let r = uf.find(i);
        if first_of[r] == usize::MAX {
            first_of[r] = i;
        }
    }
    let owner: Vec<u16> = (0..n).map(|i| initial[first_of[uf.find(i)]] as u16).collect();
    let cut_links = topo
        .links()
        .iter()
        .filter(|l| owner[l.a.0 as usize] != owner[l.b.0 as usize])
        .count();
    Partitioning {
        owner: Arc::new(owner),
        parts,
        window,
        cut_links,
    }
}

/// Disjoint sets of node numbers.
struct UnionFind(Vec<usize>);

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind((0..n).collect())
    }
    fn find(&mut self, mut i: usize) -> usize {
        while self.0[i] != i {
            self.0[i] = self.0[self.0[i]];
            i = self.0[i];
        }
        i
    }
    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            // The smaller number leads, so a piece's leader is its first node.
            self.0[a.max(b)] = a.min(b);
        }
    }
}

/// A partitioned run: its partitions, advanced together by [`Parallel::run_until`].
pub struct Parallel {
    parts: Vec<Sim>,
    owner: Arc<Vec<u16>>,
    window: Time,
    /// The first time no window has covered yet.
    next: Time,
    now: Time,
    peak: usize,
    windows: u64,
}

/// What the threads share during [`Parallel::run_until`].
struct Shared {
    barrier: SpinBarrier,
    /// Per window parity, `[from * n + to]`: the packets crossing.
    mail: [Vec<Mutex<Vec<crate::sim::Transfer>>>; 2],
    /// Per window parity and partition: its earliest pending event, and packets it holds.
    next: [Vec<AtomicU64>; 2],
    held: [Vec<AtomicU64>; 2],
    /// Per window parity and partition: the flows that went quiet there (candidates for
    /// retirement, [`Sim::retire_quiet_flows`]), and those of the window before's candidates
    /// it still holds something of. Each partition replaces its own lists; every partition
    /// reads all of them after the barrier.
    quiet: [Vec<Mutex<Vec<u32>>>; 2],
    veto: [Vec<Mutex<Vec<u32>>>; 2],
    /// Set when a partition's events panicked.
    broken: AtomicBool,
}

impl Parallel {
    /// A run of `parts`, partition `i` built as partition `i` of `split` (as
    /// [`crate::run::build_engine`] builds them).
    pub fn new(parts: Vec<Sim>, split: &Partitioning) -> Parallel {
        Parallel {
            parts,
            owner: split.owner.clone(),
            window: split.window,
            next: 0,
            now: 0,
            peak: 0,
            windows: 0,
        }
    }

    /// Runs every event up to and including `until`, the partitions on threads of their own;
    /// false when no event is left anywhere (as [`Sim::run_until`]).
    pub fn run_until(&mut self, until: Time) -> bool {
        let n = self.parts.len();
        if self.next <= until {
            // Only partitions that own a node run, and partition 0, which counts the events
            // every partition handles (a star, or more threads than pieces, leaves some empty):
            // an empty one has no event, packet or endpoint of its own, so it never sends,
            // vetoes or holds anything, and its slots keep their "nothing pending" values.
            let mut active = with_nodes(&self.owner, n);
            active[0] = true;
            let threads = active.iter().filter(|&&a| a).count();
            let _busy = Busy::new(&RUNNING, threads);
            let shared = Shared {
                barrier: SpinBarrier::new(threads, SPIN).spinning_while(&RUNNING, cores()),
                mail: [0, 1].map(|_| (0..n * n).map(|_| Mutex::new(Vec::new())).collect()),
                next: [0, 1].map(|_| (0..n).map(|_| AtomicU64::new(Time::MAX)).collect()),
                held: [0, 1].map(|_| (0..n).map(|_| AtomicU64::new(0)).collect()),
                quiet: [0, 1].map(|_| (0..n).map(|_| Mutex::new(Vec::new())).collect()),
                veto: [0, 1].map(|_| (0..n).map(|_| Mutex::new(Vec::new())).collect()),
                broken: AtomicBool::new(false),
            };
            let (start, window, owner) = (self.next, self.window, &*self.owner);
            let results: Vec<(usize, u64)> = std::thread::scope(|s| {
                let mut rest = self.parts.iter_mut().enumerate().filter(|(me, _)| active[*me]);
                let (first_me, first) = rest.next().expect("a run has a partition");
                let handles: Vec<_> = rest
                    .map(|(me, sim)| {
                        let shared = &shared;
                        s.spawn(move || windows(me, sim, shared, owner, start, until, window))
                    })
                    .collect();
                let mut out = vec![windows(first_me, first, &shared, owner, start, until, window)];
                out.extend(
                    handles
                        .into_iter()
                        .map(|h| h.join().expect("a partition's thread panicked")),
                );
                out
            });
            assert!(
                !shared.broken.load(Ordering::Relaxed),
                "a partition of the run panicked (its message is above)"
            );
            self.peak = self.peak.max(results.iter().map(|r| r.0).max().unwrap_or(0));
            self.windows += results[0].1;
            self.next = until.saturating_add(1);
        }
        let mut more = false;
        let mut last = self.now;
        for p in &mut self.parts {
            more |= p.settle(until);
            last = last.max(p.now());
        }
        self.now = if more { until } else { last };
        more
    }

    /// Where the run stands.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events handled so far, over all partitions.
    pub fn events_processed(&self) -> u64 {
        self.parts.iter().map(Sim::events_processed).sum()
    }

    /// Windows run so far (the barriers every thread waited at).
    pub fn windows(&self) -> u64 {
        self.windows
    }

    /// Makes every partition retire the flows that have gone quiet ([`Sim::retire_quiet_flows`]):
    /// a flow's endpoints are given back, in every partition at once, at the end of a window
    /// where no partition holds a packet of it and none of its endpoints waits for a timer.
    /// Call it before the run starts.
    pub fn retire_quiet_flows(&mut self) -> bool {
        for p in &mut self.parts {
            p.retire_quiet_flows();
        }
        true
    }

    /// The run as one simulation, for its reports ([`crate::report`]).
    pub fn finish(self) -> Sim {
        Sim::merge(self.parts, self.now, self.peak)
    }
}

/// The threads of this process's partitioned runs that are running now ([`Busy`]).
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// The cores this process may use.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The longest a thread that ends its window early spins at the barrier before it sleeps: long
/// enough to cover the usual gap between the partitions of a data-center run (tens of
/// microseconds). While most recent spins ran out (a machine busy with other work), early
/// threads sleep at once instead ([`SpinBarrier`]). It does not spin at all while this
/// process's running partitioned runs have more threads than cores ([`Busy`]: one run with
/// more threads than cores, or several runs at once, as `tandem sweep` runs them): a spinning
/// thread would hold a core that a late one needs.
const SPIN: Duration = Duration::from_micros(200);

/// A shared list, also after a partition panicked holding it (the run panics at its end).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One partition's windows from `start` up to `until`; returns the most packets in flight at a
/// window's end and the windows run.
fn windows(
    me: usize,
    sim: &mut Sim,
    sh: &Shared,
    owner: &[u16],
    start: Time,
    until: Time,
    window: Time,
) -> (usize, u64) {
    let n = sh.next[0].len();
    let (mut a, mut parity, mut peak, mut count) = (start, 0, 0, 0);
    loop {
        let b = a.saturating_add(window.saturating_sub(1)).min(until);
        if !sh.broken.load(Ordering::Relaxed) {
            // A partition that panics stops handling events but still meets the others at
            // every barrier (else they would wait for it for ever); the run panics after.
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.run_events(b)));
            if ran.is_err() {
                sh.broken.store(true, Ordering::Relaxed);
            }
        }
        count += 1;
        let out = sim.take_outbox();
        let mut next = sim.next_event_time();
        // Retirement: judged on the state every partition has at this window's end.
        *lock(&sh.veto[parity][me]) = sim.vetoes(&out);
        *lock(&sh.quiet[parity][me]) = sim.take_quiet();
        let held = sim.packets_held()
            + out
                .iter()
                .filter(|t| matches!(t.what, crate::sim::Carried::Packet { .. }))
                .count();
        if !out.is_empty() {
            let mut by: Vec<Vec<crate::sim::Transfer>> = (0..n).map(|_| Vec::new()).collect();
            for t in out {
                next = next.min(t.at);
                by[usize::from(owner[t.node.0 as usize])].push(t);
            }
            for (to, v) in by.into_iter().enumerate().filter(|(_, v)| !v.is_empty()) {
                lock(&sh.mail[parity][me * n + to]).extend(v);
            }
        }
        sh.next[parity][me].store(next, Ordering::Relaxed);
        sh.held[parity][me].store(held as u64, Ordering::Relaxed);
        sh.barrier.wait();
        if !sh.broken.load(Ordering::Relaxed) {
            let gather = |lists: &[Mutex<Vec<u32>>]| {
                let mut all = Vec::new();
                for l in lists {
                    all.extend_from_slice(&lock(l));
                }
                all.sort_unstable();
                all.dedup();
                all
            };
            sim.retire_unvetoed(&gather(&sh.veto[parity]), gather(&sh.quiet[parity]));
        }
        for from in 0..n {
            let v = std::mem::take(&mut *lock(&sh.mail[parity][from * n + me]));
            if !sh.broken.load(Ordering::Relaxed) {
                for t in v {
                    sim.accept(t);
                }
            }
        }
        let next = sh.next[parity]
            .iter()
            .map(|x| x.load(Ordering::Relaxed))
            .min()
            .unwrap_or(Time::MAX);
        let held: u64 = sh.held[parity].iter().map(|x| x.load(Ordering::Relaxed)).sum();
        peak = peak.max(held as usize);
        parity ^= 1;
        if b >= until || next > until {
            return (peak, count);
        }
        a = (b + 1).max(next);
    }
}
