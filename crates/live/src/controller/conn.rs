//! One switch connection: the handshake, echo keepalive, framing with errors for bad messages,
//! packet_in events into the shard's pool, and the writer task that batches writes.

use super::outbox::{Outbox, Queued};
use super::registry::ConnHandle;
use super::shard::Control;
use super::stats::Stats;
use super::Shared;
use bytes::Bytes;
use std::net::SocketAddr;
use std::sync::Arc;
use tandem_controller::{Event, PacketInEvent};
use tandem_wire::openflow::{negotiate, Body, ErrorMsg, Hello, Message, Packet, Version, HEADER_LEN};
use tandem_wire::Error as WireError;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, Notify};
use tokio::time::{sleep_until, Instant};

/// `OFPET_BAD_REQUEST` and its codes (the same numbers in 1.0 and 1.3).
const BAD_REQUEST: u16 = 1;
const BAD_VERSION: u16 = 0;
const BAD_TYPE: u16 = 1;
const BAD_LEN: u16 = 6;
/// The packet_in type code (10 in both versions).
const PACKET_IN: u8 = 10;
/// Bytes read per system call at most.
const READ_CHUNK: usize = 64 * 1024;
/// Longest a reader waits for its shard's pool to drain before reading again.
const BACKPRESSURE_WAIT: std::time::Duration = std::time::Duration::from_millis(5);
/// Bytes of the offending message an error carries (the specification asks for at least 64).
const ERROR_DATA: usize = 64;

/// Where the handshake stands.
enum Phase {
    /// Our hello is sent; waiting for the switch's.
    Hello,
    /// Versions agreed, features request sent.
    Features(Version),
    /// Features reply received: a datapath.
    Ready(Version, u64),
}

struct Conn {
    shared: Arc<Shared>,
    id: u64,
    peer: SocketAddr,
    tx: Outbox,
    close: Arc<Notify>,
    phase: Phase,
    events: Vec<Event>,
    xid: u32,
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
    let mut c = Conn {
        shared: shared.clone(),
        id,
        peer,
        tx,
        close: close.clone(),
        phase: Phase::Hello,
        events: Vec::new(),
        xid: 0,
    };
    let why = c.run(&mut rd).await;
    tracing::debug!("connection {peer} closed: {why}");
    c.finish();
    drop(c);
    let _ = writer.await;
}

impl Conn {
    async fn run<R: AsyncRead + Unpin>(&mut self, rd: &mut R) -> &'static str {
        let cfg = self.shared.cfg.clone();
        let hello = Message {
            version: Version::V1_3,
            xid: self.next_xid(),
            body: Body::Hello(Hello::with_versions(&[Version::V1_0, Version::V1_3])),
        };
        self.send(&hello);
        let mut buf: Vec<u8> = Vec::with_capacity(2 * READ_CHUNK);
        let mut start = 0usize;
        let mut last_rx = Instant::now();
        let handshake_deadline = last_rx + cfg.handshake_timeout;
        let mut echo_pending = false;
        let stop = self.shared.shutdown.clone();
        loop {
            let ready = matches!(self.phase, Phase::Ready(..));
            let timer = if !ready {
                handshake_deadline
            } else if echo_pending {
                last_rx + cfg.echo_interval + cfg.echo_timeout
            } else {
                last_rx + cfg.echo_interval
            };
            if buf.len() - start < READ_CHUNK && start > 0 {
                buf.drain(..start);
                start = 0;
            }
            let at = buf.len();
            buf.resize(at + READ_CHUNK, 0);
            let n = tokio::select! {
                r = rd.read(&mut buf[at..]) => match r {
                    Ok(0) => return "closed by the switch",
                    Ok(n) => n,
                    Err(_) => return "read error",
                },
                _ = sleep_until(timer) => {
                    buf.truncate(at);
                    if !ready {
                        Stats::inc(&self.shared.stats.handshake_failures);
                        return "handshake timed out";
                    }
                    if echo_pending {
                        if buf.len() > start {
                            Stats::inc(&self.shared.stats.message_timeouts);
                            return "no whole message in time (a partial one pending)";
                        }
                        Stats::inc(&self.shared.stats.echo_timeouts);
                        return "echo timed out";
                    }
                    echo_pending = true;
                    let m = Message { version: self.version(), xid: self.next_xid(), body: Body::EchoRequest(Vec::new()) };
                    self.send(&m);
                    Stats::inc(&self.shared.stats.echo_requests_sent);
                    continue;
                }
                _ = self.close.notified() => return "closed by the controller",
                _ = super::stopped(stop.clone()) => return "controller shutting down",
            };
            buf.truncate(at + n);
            Stats::add(&self.shared.stats.bytes_in, n as u64);
            // Frame every whole message. Only a whole message counts as a sign of life: a
            // client that trickles bytes without completing one meets the keepalive's deadline.
            let before = start;
            loop {
                let rest = &buf[start..];
                let p = match Packet::new_checked(rest) {
                    Ok(p) => p,
                    Err(WireError::Truncated) => break,
                    Err(_) => {
                        Stats::inc(&self.shared.stats.unframeable_streams);
                        self.send_error(self.version(), 0, BAD_LEN, &rest[..rest.len().min(ERROR_DATA)]);
                        return "unframeable stream";
                    }
                };
                let len = usize::from(p.length());
                let raw = &buf[start..start + len];
                if let Err(why) = self.on_message(raw) {
                    return why;
                }
                start += len;
            }
            if start > before {
                last_rx = Instant::now();
                echo_pending = false;
            }
            if !self.events.is_empty() {
                if let Phase::Ready(_, dpid) = self.phase {
                    let now = self.shared.clock.now_ps();
                    let shard = self.shared.shard_of(dpid).clone();
                    if shard.push_events(now, &mut self.events, &self.shared.stats) {
                        // Above the high-water mark: stop reading until a batch is taken.
                        let _ = tokio::time::timeout(BACKPRESSURE_WAIT, shard.drained.notified()).await;
                    } else {
                        tokio::task::yield_now().await;
                    }
                }
            }
        }
    }

    fn version(&self) -> Version {
        match self.phase {
            Phase::Hello => Version::V1_3,
            Phase::Features(v) | Phase::Ready(v, _) => v,
        }
    }

    fn next_xid(&mut self) -> u32 {
        self.xid = self.xid.wrapping_add(1);
        self.xid
    }

    /// Handles one framed message; `Err` closes the connection.
    fn on_message(&mut self, raw: &[u8]) -> Result<(), &'static str> {
        let s = &self.shared.stats;
        Stats::inc(&s.messages_in);
        let p = Packet::new_unchecked(raw);
        let (version, code, xid) = (p.version(), p.msg_type(), p.xid());
        if let Phase::Ready(v, dpid) = self.phase {
            if version != v {
                Stats::inc(&s.bad_messages);
                self.send_error(v, BAD_REQUEST, BAD_VERSION, raw);
                return Ok(());
            }
            if code == PACKET_IN {
                match Message::parse_packet(&p)
                    .map_err(|_| ())
                    .and_then(|m| PacketInEvent::from_owned(m).map_err(|_| ()))
                {
                    Ok(packet_in) => {
                        Stats::inc(&s.packet_ins);
                        self.events.push(Event { dpid, packet_in });
                    }
                    Err(()) => {
                        Stats::inc(&s.bad_messages);
                        self.send_error(v, BAD_REQUEST, BAD_LEN, raw);
                    }
                }
                return Ok(());
            }
        }
        let msg = match Message::parse_packet(&p) {
            Ok(m) => m,
            Err(_) => {
                Stats::inc(&s.bad_messages);
                self.send_error(self.version(), BAD_REQUEST, BAD_LEN, raw);
                return Ok(());
            }
        };
        match (&self.phase, msg.body) {
            (_, Body::EchoRequest(data)) => {
                let v = self.version();
                self.send(&Message {
                    version: v,
                    xid,
                    body: Body::EchoReply(data),
                });
                Stats::inc(&s.echo_replies_sent);
            }
            (_, Body::EchoReply(_)) => {}
            (_, Body::Error(e)) => {
                Stats::inc(&s.errors_received);
                tracing::debug!("{}: error type {} code {}", self.peer, e.kind, e.code);
                if matches!(self.phase, Phase::Hello) {
                    Stats::inc(&s.handshake_failures);
                    return Err("error during the hello exchange");
                }
            }
            (Phase::Hello, Body::Hello(h)) => {
                let ours = Hello::with_versions(&[Version::V1_0, Version::V1_3]);
                match negotiate((Version::V1_3, &ours), (version, &h)) {
                    Some(v) => {
                        self.phase = Phase::Features(v);
                        let m = Message {
                            version: v,
                            xid: self.next_xid(),
                            body: Body::FeaturesRequest,
                        };
                        self.send(&m);
                    }
                    None => {
                        Stats::inc(&s.handshake_failures);
                        let (kind, code) = ErrorMsg::HELLO_FAILED_INCOMPATIBLE;
                        let data = b"tandem controller speaks OpenFlow 1.0 and 1.3".to_vec();
                        self.send(&Message {
                            version,
                            xid,
                            body: Body::Error(ErrorMsg { kind, code, data }),
                        });
                        Stats::inc(&s.errors_sent);
                        return Err("no common openflow version");
                    }
                }
            }
            (Phase::Hello, _) => {
                // Anything before the hello: the specification wants a hello first.
                Stats::inc(&s.bad_messages);
            }
            (Phase::Features(v), Body::FeaturesReply(f)) => {
                let v = *v;
                let dpid = f.datapath_id;
                self.phase = Phase::Ready(v, dpid);
                Stats::inc(&s.handshakes);
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
            (_, Body::PacketIn(_)) => Stats::inc(&s.packet_ins_ignored),
            (
                _,
                Body::PortStatus(_)
                | Body::FlowRemoved(_)
                | Body::BarrierReply
                | Body::MultipartReply(_)
                | Body::GetConfigReply(_)
                | Body::FeaturesReply(_)
                | Body::Hello(_),
            ) => {}
            (_, Body::BarrierRequest) => {
                let v = self.version();
                self.send(&Message {
                    version: v,
                    xid,
                    body: Body::BarrierReply,
                });
            }
            (_, _) => {
                // An unknown type, a controller-to-switch message or one we do not act on.
                Stats::inc(&s.bad_messages);
                self.send_error(self.version(), BAD_REQUEST, BAD_TYPE, raw);
            }
        }
        Ok(())
    }

    fn send(&self, m: &Message) {
        match m.to_bytes() {
            Ok(b) => {
                if !self.tx.try_send(Bytes::from(b)) {
                    Stats::inc(&self.shared.stats.replies_dropped);
                }
            }
            Err(e) => tracing::error!("message does not encode: {e}"),
        }
    }

    fn send_error(&self, version: Version, kind: u16, code: u16, offending: &[u8]) {
        let data = offending[..offending.len().min(ERROR_DATA)].to_vec();
        let xid = if offending.len() >= HEADER_LEN {
            u32::from_be_bytes([offending[4], offending[5], offending[6], offending[7]])
        } else {
            0
        };
        self.send(&Message {
            version,
            xid,
            body: Body::Error(ErrorMsg { kind, code, data }),
        });
        Stats::inc(&self.shared.stats.errors_sent);
    }

    fn finish(&mut self) {
        let s = &self.shared.stats;
        Stats::inc(&s.disconnects);
        if let Phase::Ready(_, dpid) = self.phase {
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
