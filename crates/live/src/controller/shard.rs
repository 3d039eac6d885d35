//! A shard: the batching pool its datapaths' connections push into, and the task that hands
//! batches to its engine and sends the replies to the right connections.

use super::engine::Engine;
use super::stats::Stats;
use super::Shared;
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use tandem_controller::{EncodedReplies, Event, Pool, PoolConfig, PoolConfigError, Reply, ReplySink};
use tandem_wire::openflow::{Message, Version};
use tokio::sync::Notify;

/// Batches a shard takes in a row before it lets other tasks run.
const BATCHES_PER_TURN: usize = 16;
/// How often, at most, a shard publishes its app's counters (picoseconds: 50 ms).
const METRICS_EVERY_PS: u64 = 50_000_000_000;

/// Locks `m` (a poisoned lock is taken over: the data is always consistent).
pub(crate) fn lock_metrics(m: &Mutex<Vec<(String, u64)>>) -> MutexGuard<'_, Vec<(String, u64)>> {
    lock(m)
}

/// A connection event the engine must see, in order with the packet_ins.
#[derive(Debug, Clone)]
pub(crate) enum Control {
    /// Handshake done.
    Connected(u64, Version),
    /// Connection gone.
    Disconnected(u64),
    /// Another message of a connected switch for the app (flow_removed, stats replies, ...).
    Message(u64, Box<Message>),
}

/// What producers and the shard task share.
#[derive(Debug)]
pub(crate) struct Shard {
    pool: Mutex<Pool>,
    control: Mutex<Vec<Control>>,
    /// Wakes the shard task.
    pub notify: Notify,
    /// Wakes the readers waiting for the pool to drain.
    pub drained: Notify,
    /// Pool length above which readers stop reading until a batch is taken (TCP pushes back
    /// on the switches before the pool has to shed).
    high_water: usize,
    /// The app's own counters as last published by the shard task (for the metrics endpoint).
    pub app_metrics: Mutex<Vec<(String, u64)>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shard {
    /// An empty shard.
    pub fn new(cfg: PoolConfig) -> Result<Shard, PoolConfigError> {
        Ok(Shard {
            pool: Mutex::new(Pool::new(cfg)?),
            control: Mutex::new(Vec::new()),
            notify: Notify::new(),
            drained: Notify::new(),
            high_water: (cfg.capacity / 2).max(cfg.batch),
            app_metrics: Mutex::new(Vec::new()),
        })
    }

    /// Pushes a connection's events (one lock for all of them) and wakes the shard task.
    /// Returns true when the pool is above its high-water mark (the reader should wait for
    /// [`Shard::drained`] before reading more).
    pub fn push_events(&self, now_ps: u64, events: &mut Vec<Event>, stats: &Stats) -> bool {
        if events.is_empty() {
            return false;
        }
        let high = {
            let mut pool = lock(&self.pool);
            let before = pool.shed();
            for ev in events.drain(..) {
                pool.push(now_ps, ev);
            }
            Stats::add(&stats.events_shed, pool.shed() - before);
            pool.len() > self.high_water
        };
        self.notify.notify_one();
        high
    }

    /// Queues a connection event and wakes the shard task.
    pub fn push_control(&self, c: Control) {
        lock(&self.control).push(c);
        self.notify.notify_one();
    }
}

/// The shard task: waits for events or the deadline, runs batches, sends replies.
pub(crate) async fn run(shared: Arc<Shared>, index: usize, mut engine: Box<dyn Engine>) {
    let shard = shared.shards[index].clone();
    let mut batch: Vec<Event> = Vec::new();
    let mut replies: Vec<Reply> = Vec::new();
    let mut controls: Vec<Control> = Vec::new();
    let mut out = Outbox::default();
    let stop = shared.shutdown.clone();
    let mut since_yield = 0;
    let mut published: Option<u64> = None;
    let mut rows: Vec<(String, u64)> = Vec::new();
    // An app without counters of its own (the L2 switch) is not woken for them.
    let mut has_metrics = false;
    loop {
        if *stop.borrow() {
            return;
        }
        let now = shared.clock.now_ps();
        if published.is_none_or(|t| now >= t.saturating_add(METRICS_EVERY_PS)) {
            published = Some(now);
            rows.clear();
            engine.housekeeping();
            has_metrics = engine.metrics(&mut rows);
            if has_metrics {
                std::mem::swap(&mut *lock(&shard.app_metrics), &mut rows);
            }
        }
        std::mem::swap(&mut controls, &mut *lock(&shard.control));
        for c in controls.drain(..) {
            match c {
                Control::Connected(dpid, v) => engine.connected(now, dpid, v, &mut replies),
                Control::Disconnected(dpid) => engine.disconnected(now, dpid, &mut replies),
                Control::Message(dpid, m) => engine.message(now, dpid, &m, &mut replies),
            }
        }
        if engine.poll_timeout().is_some_and(|t| t <= now) {
            engine.timeout(now, &mut replies);
        }
        let (got, next) = {
            let mut pool = lock(&shard.pool);
            let got = pool.poll(now, &mut batch);
            (got, pool.next_deadline())
        };
        if got {
            let s = &shared.stats;
            Stats::inc(&s.batches);
            Stats::add(&s.batch_events, batch.len() as u64);
            s.batch_max.fetch_max(batch.len() as u64, Ordering::Relaxed);
            engine.process(now, &batch, &mut out.encoded);
            batch.clear();
        }
        if !replies.is_empty() || !out.encoded.is_empty() {
            out.send(&shared, &mut replies);
        }
        if got {
            shard.drained.notify_waiters();
            // Take every batch that is ready before sleeping, letting the connections run
            // every few batches.
            since_yield += 1;
            if since_yield >= BATCHES_PER_TURN {
                since_yield = 0;
                tokio::task::yield_now().await;
            }
            continue;
        }
        since_yield = 0;
        let next = [
            next,
            engine.poll_timeout(),
            published
                .filter(|_| has_metrics)
                .map(|t| t.saturating_add(METRICS_EVERY_PS)),
        ]
        .into_iter()
        .flatten()
        .min();
        match next {
            Some(deadline) => {
                let at = tokio::time::Instant::from_std(shared.clock.instant_at(deadline));
                tokio::select! {
                    _ = shard.notify.notified() => {}
                    _ = tokio::time::sleep_until(at) => {}
                }
            }
            None => shard.notify.notified().await,
        }
    }
}

/// The shard's replies, encoded in place per datapath (the backend writes a batch's replies
/// straight into `encoded`); each datapath's bytes are queued as one chunk.
#[derive(Default)]
struct Outbox {
    encoded: EncodedReplies,
}

impl Outbox {
    /// Encodes `replies` (the app's other messages) after the batch's, and queues everything.
    fn send(&mut self, shared: &Shared, replies: &mut Vec<Reply>) {
        let s = &shared.stats;
        for r in replies.drain(..) {
            self.encoded.push(r);
        }
        let failed = self.encoded.take_failed();
        if failed > 0 {
            tracing::error!("{failed} replies do not encode (longer than OpenFlow's 65,535 bytes)");
            Stats::add(&s.replies_dropped, failed);
        }
        let registry = shared.registry.lock();
        for part in self.encoded.drain() {
            let sent = match registry.get(&part.dpid) {
                // The encoded bytes are handed over, not copied.
                Some(h) => h.tx.try_send(Bytes::from(part.bytes)),
                None => false,
            };
            Stats::add(if sent { &s.replies } else { &s.replies_dropped }, part.messages as u64);
        }
    }
}
