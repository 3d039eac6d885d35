//! Backends run a batch of events through an application.
//!
//! * [`ScalarBackend`]: any [`App`], one event at a time, in batch order.
//! * [`CpuBackend`]: the [`L2Switch`] in two phases over the whole batch, the shape of the
//!   paper's GPU kernel: first every source is learnt in batch order (a sequential pass of table
//!   writes, each change logged with the index of the event that made it), then every destination
//!   is resolved independently of the others against "the table as event `i` saw it" (the last
//!   logged write at or before `i`, or the table before the batch), and the replies are built in
//!   batch order. The replies and counters are exactly the scalar backend's for the same batch
//!   (checked by a property test); the resolve phase has no write and no ordering between events.
//! * [`CpuParallelBackend`]: the same phases with resolve and reply building spread over threads
//!   in contiguous parts of the batch (each part counts into its own counters; parts are joined
//!   in batch order), so the replies and counters are again exactly the scalar backend's.
//!
//! Every backend writes into a [`ReplySink`] `O`: `Vec<Reply>` collects messages (what the
//! tests compare), [`crate::sink::EncodedReplies`] encodes them in place per datapath (what the
//! live server sends). The learning switch's batched backends fill reused messages, so with an
//! encoding sink they build and encode every reply without an allocation per event.

use crate::app::{App, Reply};
use crate::event::Event;
use crate::l2::{L2Counters, L2Switch, Templates};
use crate::sink::ReplySink;
use rustc_hash::FxHashMap;
use tandem_wire::MacAddr;

/// Runs batches of events through an application `A`, writing replies into a sink `O`.
pub trait Backend<A: ?Sized, O: ReplySink = Vec<Reply>> {
    /// Processes `batch` (in its order) at `now_ps`, appending replies to `out`.
    fn process(&mut self, now_ps: u64, batch: &[Event], app: &mut A, out: &mut O);
}

/// One event at a time through [`App::on_packet_in`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ScalarBackend;

impl<A: App + ?Sized, O: ReplySink> Backend<A, O> for ScalarBackend {
    fn process(&mut self, now_ps: u64, batch: &[Event], app: &mut A, out: &mut O) {
        for ev in batch {
            out.answer(app, now_ps, ev.dpid, &ev.packet_in);
        }
    }
}

/// What one table entry was during the batch.
#[derive(Debug, Clone, Default)]
pub(crate) struct History {
    /// The entry before the batch.
    pub(crate) before: Option<u32>,
    /// (event index, port) of each change, in index order.
    pub(crate) writes: Vec<(usize, u32)>,
}

impl History {
    /// The entry as event `i` sees it (after its own source was learnt).
    fn at(&self, i: usize) -> Option<u32> {
        let n = self.writes.partition_point(|&(w, _)| w <= i);
        match n {
            0 => self.before,
            n => Some(self.writes[n - 1].1),
        }
    }
}

/// The learn phase shared by the batched backends: every source of the batch is learnt in batch
/// order and each table change is logged, keyed by `(dpid, address)`.
#[derive(Debug, Clone, Default)]
pub(crate) struct LearnLog {
    changes: FxHashMap<(u64, MacAddr), History>,
}

impl LearnLog {
    /// Learns every source of `batch` into `app` in order, replacing the log with its changes.
    pub(crate) fn learn(&mut self, batch: &[Event], app: &mut L2Switch) {
        self.changes.clear();
        for (i, ev) in batch.iter().enumerate() {
            let p = &ev.packet_in;
            if let Some(before) = app.learn(ev.dpid, p.eth_src, p.in_port) {
                let h = self.changes.entry((ev.dpid, p.eth_src)).or_insert_with(|| History {
                    before,
                    writes: Vec::new(),
                });
                h.writes.push((i, p.in_port));
            }
        }
    }

    /// The history of `(dpid, mac)` in the batch, if it changed.
    pub(crate) fn get(&self, dpid: u64, mac: MacAddr) -> Option<&History> {
        // In the steady state no batch changes a table: skip the hashing.
        if self.changes.is_empty() {
            return None;
        }
        self.changes.get(&(dpid, mac))
    }

    /// Every changed entry with its history.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&(u64, MacAddr), &History)> {
        self.changes.iter()
    }
}

/// The reply phase shared by the batched backends: the replies for `batch` in batch order, given
/// each event's resolved destination port (`resolved[i]` for `batch[i]`).
pub(crate) fn respond_in_order<O: ReplySink>(
    batch: &[Event],
    resolved: &[Option<u32>],
    app: &mut L2Switch,
    out: &mut O,
) {
    for (ev, dst) in batch.iter().zip(resolved) {
        app.respond(ev.dpid, &ev.packet_in, *dst, out);
    }
}

/// The learning switch in a learn phase and a resolve phase over the batch (see the module
/// documentation). Keeps its scratch space between batches.
#[derive(Debug, Clone, Default)]
pub struct CpuBackend {
    log: LearnLog,
    resolved: Vec<Option<u32>>,
}

impl CpuBackend {
    /// A backend with empty scratch space.
    pub fn new() -> CpuBackend {
        CpuBackend::default()
    }
}

impl<O: ReplySink> Backend<L2Switch, O> for CpuBackend {
    fn process(&mut self, _now_ps: u64, batch: &[Event], app: &mut L2Switch, out: &mut O) {
        // Phase 1: learn every source in order, logging each change.
        self.log.learn(batch, app);
        // Phase 2: resolve every destination independently.
        self.resolved.clear();
        self.resolved.extend(batch.iter().enumerate().map(|(i, ev)| {
            let dst = ev.packet_in.eth_dst;
            let learnt = match self.log.get(ev.dpid, dst) {
                Some(h) => h.at(i),
                None => app.lookup(ev.dpid, dst),
            };
            L2Switch::resolve(dst, learnt)
        }));
        // Phase 3: the replies, in batch order.
        respond_in_order(batch, &self.resolved, app, out);
    }
}

/// Resolves and answers `part` (events `offset..` of the batch whose sources `log` learnt),
/// reading the tables of `app` and counting into `counters`.
fn resolve_and_respond<O: ReplySink>(
    part: &[Event],
    offset: usize,
    log: &LearnLog,
    app: &L2Switch,
    (counters, templates): (&mut L2Counters, &mut Templates),
    out: &mut O,
) {
    let mut r = app.responder(counters, templates);
    for (k, ev) in part.iter().enumerate() {
        let dst = ev.packet_in.eth_dst;
        let learnt = match log.get(ev.dpid, dst) {
            Some(h) => h.at(offset + k),
            None => app.lookup(ev.dpid, dst),
        };
        r.respond(ev.dpid, &ev.packet_in, L2Switch::resolve(dst, learnt), out);
    }
}

/// The learning switch's batched phases on several threads: the learn phase in batch order on
/// the calling thread, then resolve and reply building in `threads` contiguous parts (the first
/// on the calling thread, the rest on scoped threads started for the batch). A batch is split
/// only into parts of at least [`CpuParallelBackend::min_per_thread`] events, since starting a
/// thread costs tens of microseconds.
#[derive(Debug, Clone)]
pub struct CpuParallelBackend<O = Vec<Reply>> {
    threads: usize,
    min_per_thread: usize,
    log: LearnLog,
    /// The first part's reused messages.
    templates: Templates,
    /// Every later part's replies, counters and reused messages, kept between batches.
    parts: Vec<Part<O>>,
}

/// One later part's output and scratch space.
#[derive(Debug, Clone, Default)]
struct Part<O> {
    replies: O,
    counters: L2Counters,
    templates: Templates,
}

impl<O> CpuParallelBackend<O> {
    /// Parts of fewer events than this stay on one thread by default.
    pub const DEFAULT_MIN_PER_THREAD: usize = 8192;

    /// A backend using up to `threads` threads (at least 1).
    pub fn new(threads: usize) -> CpuParallelBackend<O> {
        CpuParallelBackend {
            threads: threads.max(1),
            min_per_thread: Self::DEFAULT_MIN_PER_THREAD,
            log: LearnLog::default(),
            templates: Templates::default(),
            parts: Vec::new(),
        }
    }

    /// Splits batches into parts of at least `n` events (1: always use every thread).
    pub fn with_min_per_thread(mut self, n: usize) -> CpuParallelBackend<O> {
        self.min_per_thread = n.max(1);
        self
    }

    /// The most threads a batch uses.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The smallest part a batch is split into.
    pub fn min_per_thread(&self) -> usize {
        self.min_per_thread
    }
}

impl<O: ReplySink> Backend<L2Switch, O> for CpuParallelBackend<O> {
    fn process(&mut self, _now_ps: u64, batch: &[Event], app: &mut L2Switch, out: &mut O) {
        self.log.learn(batch, app);
        let n = self.threads.min(batch.len() / self.min_per_thread).max(1);
        let size = batch.len().div_ceil(n).max(1);
        // Parts after the first; the first is answered on this thread straight into `out`.
        let parts = batch.len().div_ceil(size).max(1);
        self.parts.resize_with(parts - 1, Default::default);
        let (log, shared) = (&self.log, &*app);
        let mut first = L2Counters::default();
        let first_templates = &mut self.templates;
        std::thread::scope(|scope| {
            let mut chunks = batch.chunks(size);
            let head = chunks.next().unwrap_or(&[]);
            for (k, (part, p)) in chunks.zip(self.parts.iter_mut()).enumerate() {
                p.counters = L2Counters::default();
                scope.spawn(move || {
                    let scratch = (&mut p.counters, &mut p.templates);
                    resolve_and_respond(part, (k + 1) * size, log, shared, scratch, &mut p.replies)
                });
            }
            resolve_and_respond(head, 0, log, shared, (&mut first, first_templates), out);
        });
        app.add_counters(&first);
        for p in &mut self.parts {
            out.append(&mut p.replies);
            app.add_counters(&p.counters);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::PacketInEvent;
    use crate::l2::L2Config;
    use tandem_wire::openflow::Version;

    fn ev(dpid: u64, in_port: u32, src: u8, dst: u8) -> Event {
        let mut f = vec![0u8; 60];
        f[5] = dst;
        f[11] = src;
        Event {
            dpid,
            packet_in: PacketInEvent::from_frame(Version::V1_0, 0, 1, in_port, 60, f).unwrap(),
        }
    }

    #[test]
    fn later_sources_do_not_leak_backwards() {
        // Event 0 asks for 2 before event 1 teaches it: scalar floods event 0, so must cpu.
        let batch = [ev(1, 1, 1, 2), ev(1, 2, 2, 1), ev(1, 3, 2, 1)];
        let (mut a, mut b) = (L2Switch::new(L2Config::default()), L2Switch::new(L2Config::default()));
        let (mut ra, mut rb) = (Vec::new(), Vec::new());
        ScalarBackend.process(0, &batch, &mut a, &mut ra);
        CpuBackend::new().process(0, &batch, &mut b, &mut rb);
        assert_eq!(ra, rb);
        assert_eq!(a.counters(), b.counters());
        assert_eq!(a.counters().floods, 1);
        assert_eq!(a.counters().moved, 1);
        assert_eq!(b.lookup(1, tandem_wire::MacAddr([0, 0, 0, 0, 0, 2])), Some(3));
    }

    #[test]
    fn parallel_parts_give_the_scalar_replies_in_order() {
        // Sources and destinations that move between parts: a station learnt late in the batch
        // must not be seen by events before it, whichever thread resolves them.
        let batch: Vec<Event> = (0..997u32)
            .map(|i| ev(1 + u64::from(i % 3), 1 + i % 5, (i % 11) as u8, ((i * 7) % 13) as u8))
            .collect();
        for threads in [1, 2, 3, 8] {
            let (mut a, mut b) = (L2Switch::new(L2Config::default()), L2Switch::new(L2Config::default()));
            let (mut ra, mut rb) = (Vec::new(), Vec::new());
            let mut par = CpuParallelBackend::<Vec<Reply>>::new(threads).with_min_per_thread(1);
            for round in 0..2 {
                ScalarBackend.process(0, &batch[round * 400..], &mut a, &mut ra);
                par.process(0, &batch[round * 400..], &mut b, &mut rb);
            }
            assert_eq!(ra, rb, "{threads} threads");
            assert_eq!(a.counters(), b.counters(), "{threads} threads");
        }
        // A small batch stays on one thread by default.
        let mut par = CpuParallelBackend::<Vec<Reply>>::new(4);
        let mut sw = L2Switch::new(L2Config::default());
        par.process(0, &batch, &mut sw, &mut Vec::new());
        assert!(par.parts.is_empty());
    }
}
