//! One switch connection: the sans-IO [`Session`] (handshake, echo keepalive, framing, errors
//! for bad messages) on a real socket, packet_in events into the shard's pool, the switch's
//! other messages to the shard's app, and the writer task that batches writes.

use super::outbox::{Outbox, Queued};
use super::registry::ConnHandle;
use super::shard::Control;
use super::stats::Stats;
use super::Shared;
use crate::clock::duration_ps;
use bytes::Bytes;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use tandem_controller::{Event, Role, Session, SessionConfig, SessionCounters, SessionEvent};
use tandem_wire::openflow::{Message, Version};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, Notify};
use tokio::time::{sleep_until, Instant};

/// Bytes read per system call at most.
const READ_CHUNK: usize = 64 * 1024;
/// Longest a reader waits for its shard's pool to drain before reading again.
const BACKPRESSURE_WAIT: std::time::Duration = std::time::Duration::from_millis(5);

/// What the session passed up, other than packet_ins, for the driver to act on in order.
enum Up {
    /// The handshake is done.
    Ready(Version, u64),
    /// A message for the app.
    Message(Message),
}

struct Conn {
    shared: Arc<Shared>,
    id: u64,
    peer: SocketAddr,
    tx: Outbox,
    close: Arc<Notify>,
    session: Session,
    /// The session's counters already added to the shared [`Stats`].
    published: SessionCounters,
}

/// Serves one accepted connection (its read and write halves: TCP or TLS) until it closes.
pub(crate) async fn serve<R, W>(shared: Arc<Shared>, mut rd: R, wr: W, peer: SocketAddr, id: u64)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = Outbox::new(
        shared.cfg.write_queue,
        shared.cfg.write_queue_bytes,
        shared.queued_bytes.clone(),
        shared.cfg.write_queue_total_bytes,
    );
    let close = Arc::new(Notify::new());
    let writer = tokio::spawn(write_loop(shared.clone(), wr, rx, close.clone()));
    let cfg = SessionConfig {
        echo_interval_ps: duration_ps(shared.cfg.echo_interval),
        echo_timeout_ps: duration_ps(shared.cfg.echo_timeout),
        handshake_timeout_ps: duration_ps(shared.cfg.handshake_timeout),
    };
    let session = Session::new(shared.clock.now_ps(), Role::Controller, cfg);
    let mut c = Conn {
        shared: shared.clone(),
        id,
        peer,
        tx,
        close: close.clone(),
        session,
        published: SessionCounters::default(),
    };
    let why = c.run(&mut rd).await;
    tracing::debug!("connection {peer} closed: {why}");
    c.finish();
    drop(c);
    let _ = writer.await;
}

impl Conn {
    async fn run<R: AsyncRead + Unpin>(&mut self, rd: &mut R) -> String {
        self.flush();
        let mut buf: Vec<u8> = Vec::with_capacity(2 * READ_CHUNK);
        let mut start = 0usize;
        let mut events: Vec<Event> = Vec::new();
        let mut ups: Vec<Up> = Vec::new();
        let stop = self.shared.shutdown.clone();
        loop {
            let timer = self.session.poll_timeout().unwrap_or(u64::MAX);
            let timer = Instant::from_std(self.shared.clock.instant_at(timer));
            if buf.len() - start < READ_CHUNK && start > 0 {
                buf.drain(..start);
                start = 0;
            }
            let at = buf.len();
            buf.resize(at + READ_CHUNK, 0);
            let n = tokio::select! {
                r = rd.read(&mut buf[at..]) => match r {
                    Ok(0) => return "closed by the switch".into(),
                    Ok(n) => n,
                    Err(_) => return "read error".into(),
                },
                _ = sleep_until(timer) => {
                    buf.truncate(at);
                    let r = self.session.handle_timeout(self.shared.clock.now_ps());
                    self.flush();
                    match r {
                        Ok(()) => continue,
                        Err(why) => return why.to_string(),
                    }
                }
                _ = self.close.notified() => return "closed by the controller".into(),
                _ = super::stopped(stop.clone()) => return "controller shutting down".into(),
            };
            buf.truncate(at + n);
            Stats::add(&self.shared.stats.bytes_in, n as u64);
            let now = self.shared.clock.now_ps();
            let dpid = self.session.dpid();
            let r = self.session.handle_input(now, &buf[start..], |ev| match ev {
                SessionEvent::PacketIn(packet_in) => {
                    // The session passes packet_ins up only once it is ready.
                    if let Some(dpid) = dpid {
                        events.push(Event { dpid, packet_in });
                    }
                }
                SessionEvent::Ready { version, dpid } => ups.push(Up::Ready(version, dpid)),
                SessionEvent::Message(m) => ups.push(Up::Message(m)),
                SessionEvent::Raw(_) => {}
            });
            self.flush();
            let consumed = match r {
                Ok(n) => n,
                Err(why) => return why.to_string(),
            };
            start += consumed;
            for up in ups.drain(..) {
                match up {
                    Up::Ready(v, dpid) => self.ready(v, dpid),
                    Up::Message(m) => {
                        if let Some(dpid) = self.session.dpid() {
                            self.shared
                                .shard_of(dpid)
                                .push_control(Control::Message(dpid, Box::new(m)));
                        }
                    }
                }
            }
            if !events.is_empty() {
                if let Some(dpid) = self.session.dpid() {
                    let shard = self.shared.shard_of(dpid).clone();
                    if shard.push_events(now, &mut events, &self.shared.stats) {
                        // Above the high-water mark: stop reading until a batch is taken.
                        let _ = tokio::time::timeout(BACKPRESSURE_WAIT, shard.drained.notified()).await;
                    } else {
                        tokio::task::yield_now().await;
                    }
                }
            }
        }
    }

    /// The handshake finished: register the datapath and tell its shard.
    fn ready(&mut self, v: Version, dpid: u64) {
        let s = &self.shared.stats;
        Stats::inc(&s.switches_connected);
        let handle = ConnHandle {
            id: self.id,
            tx: self.tx.clone(),
            close: self.close.clone(),
        };
        if let Some(old) = self.shared.registry.insert(dpid, handle) {
            Stats::inc(&s.replaced);
            old.close.notify_one();
        }
        tracing::info!(
            "switch {dpid:016x} connected from {} (OpenFlow {})",
            self.peer,
            if v == Version::V1_0 { "1.0" } else { "1.3" }
        );
        self.shared.shard_of(dpid).push_control(Control::Connected(dpid, v));
    }

    /// Queues what the session has to send and adds what it counted to the shared counters.
    fn flush(&mut self) {
        if let Some(t) = self.session.poll_transmit() {
            if !self.tx.try_send(Bytes::from(t.bytes)) {
                Stats::add(&self.shared.stats.replies_dropped, t.messages as u64);
            }
        }
        let now = *self.session.counters();
        let was = std::mem::replace(&mut self.published, now);
        let s = &self.shared.stats;
        let add = |c: &AtomicU64, new: u64, old: u64| {
            if new > old {
                Stats::add(c, new - old);
            }
        };
        add(&s.messages_in, now.messages_in, was.messages_in);
        add(&s.handshakes, now.handshakes, was.handshakes);
        add(&s.handshake_failures, now.handshake_failures, was.handshake_failures);
        add(&s.packet_ins, now.packet_ins, was.packet_ins);
        add(&s.packet_ins_ignored, now.packet_ins_ignored, was.packet_ins_ignored);
        add(&s.bad_messages, now.bad_messages, was.bad_messages);
        add(&s.unframeable_streams, now.unframeable_streams, was.unframeable_streams);
        add(&s.errors_sent, now.errors_sent, was.errors_sent);
        add(&s.errors_received, now.errors_received, was.errors_received);
        add(&s.echo_requests_sent, now.echo_requests_sent, was.echo_requests_sent);
        add(&s.echo_replies_sent, now.echo_replies_sent, was.echo_replies_sent);
        add(&s.echo_timeouts, now.echo_timeouts, was.echo_timeouts);
        add(&s.message_timeouts, now.message_timeouts, was.message_timeouts);
    }

    fn finish(&mut self) {
        self.flush();
        let s = &self.shared.stats;
        Stats::inc(&s.disconnects);
        if let Some(dpid) = self.session.dpid() {
            Stats::dec(&s.switches_connected);
            if self.shared.registry.remove_if(dpid, self.id) {
                self.shared.shard_of(dpid).push_control(Control::Disconnected(dpid));
            }
        }
    }
}

/// Drains the write queue, concatenating what is queued into one write (a lone chunk is written
/// as it is, without a copy).
async fn write_loop<W: AsyncWrite + Unpin>(
    shared: Arc<Shared>,
    mut wr: W,
    mut rx: mpsc::Receiver<Queued>,
    close: Arc<Notify>,
) {
    let mut buf: Vec<u8> = Vec::new();
    let timeout = shared.cfg.write_timeout;
    while let Some(first) = rx.recv().await {
        // The chunks stay counted as queued until they are written (dropped after the write).
        let mut taken = vec![first];
        let chunk: &[u8] = match rx.try_recv() {
            Err(_) => &taken[0].bytes,
            Ok(second) => {
                buf.clear();
                buf.extend_from_slice(&taken[0].bytes);
                buf.extend_from_slice(&second.bytes);
                taken.push(second);
                while buf.len() < 256 * 1024 {
                    match rx.try_recv() {
                        Ok(more) => {
                            buf.extend_from_slice(&more.bytes);
                            taken.push(more);
                        }
                        Err(_) => break,
                    }
                }
                &buf
            }
        };
        // TLS buffers what it encrypts: the flush sends it (a no-op on plain TCP).
        let write = async {
            wr.write_all(chunk).await?;
            wr.flush().await
        };
        match tokio::time::timeout(timeout, write).await {
            Ok(Ok(())) => Stats::add(&shared.stats.bytes_out, chunk.len() as u64),
            Ok(Err(_)) => break,
            Err(_) => {
                Stats::inc(&shared.stats.write_timeouts);
                break;
            }
        }
        drop(taken);
        // A burst's coalescing buffer is not kept at its peak size for the connection's life.
        if buf.capacity() > 256 * 1024 {
            buf = Vec::new();
        }
    }
    // Wake the reader so the connection closes (a no-op when it already has).
    close.notify_one();
}
