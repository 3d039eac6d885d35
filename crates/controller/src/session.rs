//! One OpenFlow connection as a sans-IO state machine, for either end: the controller's side
//! (the server's connections) or a switch's side (`ofbench`'s fake switches, tests).
//!
//! A [`Session`] is fed the bytes read from the peer with the current time
//! ([`Session::handle_input`]) and its timer ([`Session::handle_timeout`] when
//! [`Session::poll_timeout`] says so); it frames messages, runs the hello exchange with version
//! negotiation, the features exchange, echo keepalive in both directions, and answers bad
//! messages with `OFPT_ERROR`. What it sends waits in [`Session::poll_transmit`]; what the layer
//! above must see (the handshake's end, packet_ins, the peer's other messages) comes out as
//! [`SessionEvent`]s. It reads no clock and touches no socket: the driver does the I/O, as
//! quinn-proto's connection does for QUIC.

use crate::event::PacketInEvent;
use std::fmt;
use tandem_wire::openflow::{
    negotiate, Body, ErrorMsg, FeaturesReply, Hello, Message, Packet, SwitchConfig, Version, HEADER_LEN,
};
use tandem_wire::Error as WireError;

/// `OFPET_BAD_REQUEST` (the same number in 1.0 and 1.3).
pub const BAD_REQUEST: u16 = 1;
/// `OFPBRC_BAD_VERSION`.
pub const BAD_VERSION: u16 = 0;
/// `OFPBRC_BAD_TYPE`.
pub const BAD_TYPE: u16 = 1;
/// `OFPBRC_BAD_LEN`.
pub const BAD_LEN: u16 = 6;
/// The packet_in type code (10 in both versions).
const PACKET_IN: u8 = 10;
/// Bytes of the offending message an error carries (the specification asks for at least 64).
pub const ERROR_DATA: usize = 64;
/// Picoseconds in a second.
const PS_PER_S: u64 = 1_000_000_000_000;

/// Which end of the connection this session is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// The controller: speaks OpenFlow 1.0 and 1.3, asks for the switch's features.
    Controller,
    /// A switch: speaks `versions`, answers features and get-config requests with these.
    Switch {
        /// The versions this switch offers in its hello (the highest goes in the header).
        versions: Vec<Version>,
        /// The features reply it gives (its `datapath_id` names the switch).
        features: FeaturesReply,
    },
}

/// Timer settings of a session, in picoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionConfig {
    /// A peer that sends no whole message for this long gets an echo request.
    pub echo_interval_ps: u64,
    /// A peer that stays silent this long after the echo request is given up.
    pub echo_timeout_ps: u64,
    /// Longest the handshake (hello to features reply) may take.
    pub handshake_timeout_ps: u64,
}

impl Default for SessionConfig {
    /// 5 s echo interval, 10 s echo timeout, 10 s handshake (the controller's defaults).
    fn default() -> SessionConfig {
        SessionConfig {
            echo_interval_ps: 5 * PS_PER_S,
            echo_timeout_ps: 10 * PS_PER_S,
            handshake_timeout_ps: 10 * PS_PER_S,
        }
    }
}

/// What the layer above must see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionEvent<'a> {
    /// The handshake is done: the controller received the features reply, or the switch
    /// answered the features request. `dpid` is the switch's datapath id.
    Ready {
        /// The negotiated version.
        version: Version,
        /// The switch's datapath id.
        dpid: u64,
    },
    /// Controller side: a packet_in from the ready switch, in its compact form.
    PacketIn(PacketInEvent),
    /// Controller side: another message of the ready switch for the application (flow_removed,
    /// port_status, multipart and barrier replies, errors, get-config replies).
    Message(Message),
    /// Switch side: a whole controller message the session does not answer itself (flow_mod,
    /// packet_out, multipart requests, ...), as received, for the switch to act on.
    Raw(&'a [u8]),
}

/// Why a session ended. The driver closes the connection after sending what
/// [`Session::poll_transmit`] still holds (an error message may be waiting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// The handshake did not finish in time.
    HandshakeTimeout,
    /// The peer answered no echo request in time.
    EchoTimeout,
    /// Only part of a message arrived before the keepalive gave up.
    PartialMessage,
    /// The byte stream cannot be framed (a length under the header's).
    Unframeable,
    /// The peer sent an error during the hello exchange.
    HelloError,
    /// No version both ends speak.
    NoCommonVersion,
}

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Closed::HandshakeTimeout => "handshake timed out",
            Closed::EchoTimeout => "echo timed out",
            Closed::PartialMessage => "no whole message in time (a partial one pending)",
            Closed::Unframeable => "unframeable stream",
            Closed::HelloError => "error during the hello exchange",
            Closed::NoCommonVersion => "no common openflow version",
        })
    }
}

/// What a session counted (all monotonic).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionCounters {
    /// Whole messages received.
    pub messages_in: u64,
    /// Messages sent (queued for [`Session::poll_transmit`]).
    pub messages_out: u64,
    /// Handshakes completed.
    pub handshakes: u64,
    /// Handshakes failed (no common version, an error or a timeout during it).
    pub handshake_failures: u64,
    /// packet_ins passed up.
    pub packet_ins: u64,
    /// packet_ins ignored (before the handshake).
    pub packet_ins_ignored: u64,
    /// Messages that did not parse, had an unexpected type or a wrong version (answered with an error).
    pub bad_messages: u64,
    /// Streams that could not be framed.
    pub unframeable_streams: u64,
    /// `OFPT_ERROR` messages sent.
    pub errors_sent: u64,
    /// `OFPT_ERROR` messages received.
    pub errors_received: u64,
    /// Echo requests sent for keepalive.
    pub echo_requests_sent: u64,
    /// Echo requests of the peer answered.
    pub echo_replies_sent: u64,
    /// Sessions ended because the echo went unanswered.
    pub echo_timeouts: u64,
    /// Sessions ended with only part of a message received.
    pub message_timeouts: u64,
}

/// Where the handshake stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Our hello is sent; waiting for the peer's.
    Hello,
    /// Versions agreed; the controller sent its features request, the switch waits for it.
    Features(Version),
    /// The handshake is done.
    Ready(Version, u64),
}

/// One OpenFlow connection, either end (see the module documentation).
#[derive(Debug, Clone)]
pub struct Session {
    role: Role,
    cfg: SessionConfig,
    phase: Phase,
    xid: u32,
    out: Vec<u8>,
    out_messages: usize,
    last_rx: u64,
    handshake_deadline: u64,
    echo_pending: bool,
    partial: bool,
    counters: SessionCounters,
}

/// Bytes waiting to be written to the peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The encoded messages, back to back.
    pub bytes: Vec<u8>,
    /// How many messages they are.
    pub messages: usize,
}

impl Session {
    /// A session opened at `now`; our hello is already queued.
    pub fn new(now: u64, role: Role, cfg: SessionConfig) -> Session {
        let mut s = Session {
            role,
            cfg,
            phase: Phase::Hello,
            xid: 0,
            out: Vec::new(),
            out_messages: 0,
            last_rx: now,
            handshake_deadline: now.saturating_add(cfg.handshake_timeout_ps),
            echo_pending: false,
            partial: false,
            counters: SessionCounters::default(),
        };
        let ours = s.our_versions();
        let header = ours.iter().copied().max().unwrap_or(Version::V1_3);
        let xid = s.next_xid();
        s.queue(&Message {
            version: header,
            xid,
            body: Body::Hello(Hello::with_versions(&ours)),
        });
        s
    }

    /// The version in use: the negotiated one, or the highest we offer before that.
    pub fn version(&self) -> Version {
        match self.phase {
            Phase::Hello => self.our_versions().into_iter().max().unwrap_or(Version::V1_3),
            Phase::Features(v) | Phase::Ready(v, _) => v,
        }
    }

    /// The switch's datapath id once the handshake is done.
    pub fn dpid(&self) -> Option<u64> {
        match self.phase {
            Phase::Ready(_, d) => Some(d),
            _ => None,
        }
    }

    /// True once the handshake is done.
    pub fn is_ready(&self) -> bool {
        matches!(self.phase, Phase::Ready(..))
    }

    /// What this session counted so far.
    pub fn counters(&self) -> &SessionCounters {
        &self.counters
    }

    /// A fresh transaction id for a request of the layer above.
    pub fn next_xid(&mut self) -> u32 {
        self.xid = self.xid.wrapping_add(1);
        self.xid
    }

    /// Queues `body` with the session's version and a fresh xid; returns the xid.
    pub fn send(&mut self, body: Body) -> u32 {
        let xid = self.next_xid();
        let version = self.version();
        self.queue(&Message { version, xid, body });
        xid
    }

    /// Takes what waits to be written, if anything.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        if self.out.is_empty() {
            return None;
        }
        let messages = std::mem::take(&mut self.out_messages);
        Some(Transmit {
            bytes: std::mem::take(&mut self.out),
            messages,
        })
    }

    /// When the session next needs [`Session::handle_timeout`]: the handshake's deadline, the
    /// next keepalive echo or the echo's deadline.
    pub fn poll_timeout(&self) -> Option<u64> {
        Some(if !self.is_ready() {
            self.handshake_deadline
        } else if self.echo_pending {
            self.last_rx
                .saturating_add(self.cfg.echo_interval_ps)
                .saturating_add(self.cfg.echo_timeout_ps)
        } else {
            self.last_rx.saturating_add(self.cfg.echo_interval_ps)
        })
    }

    /// Runs the timer at `now` (early calls do nothing): sends the keepalive echo, or ends the
    /// session when the handshake or the echo ran out of time.
    pub fn handle_timeout(&mut self, now: u64) -> Result<(), Closed> {
        match self.poll_timeout() {
            Some(t) if now >= t => {}
            _ => return Ok(()),
        }
        if !self.is_ready() {
            self.counters.handshake_failures += 1;
            return Err(Closed::HandshakeTimeout);
        }
        if self.echo_pending {
            if self.partial {
                self.counters.message_timeouts += 1;
                return Err(Closed::PartialMessage);
            }
            self.counters.echo_timeouts += 1;
            return Err(Closed::EchoTimeout);
        }
        self.echo_pending = true;
        self.send(Body::EchoRequest(Vec::new()));
        self.counters.echo_requests_sent += 1;
        Ok(())
    }

    /// Frames and handles every whole message at the start of `buf` (bytes read from the peer
    /// at `now`, oldest first), passing what the layer above must see to `on`. Returns how
    /// many bytes it consumed: the driver keeps the rest (a partial message) and feeds it again
    /// with what it reads next. Only a whole message counts as a sign of life, so a peer that
    /// trickles bytes without completing one meets the keepalive's deadline.
    pub fn handle_input<F>(&mut self, now: u64, buf: &[u8], mut on: F) -> Result<usize, Closed>
    where
        F: FnMut(SessionEvent<'_>),
    {
        let mut start = 0;
        let result = loop {
            let rest = &buf[start..];
            let p = match Packet::new_checked(rest) {
                Ok(p) => p,
                Err(WireError::Truncated) => break Ok(start),
                Err(_) => {
                    self.counters.unframeable_streams += 1;
                    let v = self.version();
                    self.send_error(v, BAD_REQUEST, BAD_LEN, rest);
                    break Err(Closed::Unframeable);
                }
            };
            let len = usize::from(p.length());
            if let Err(why) = self.on_message(&buf[start..start + len], &mut on) {
                break Err(why);
            }
            start += len;
        };
        if start > 0 {
            self.last_rx = now;
            self.echo_pending = false;
        }
        self.partial = start < buf.len();
        result
    }

    fn our_versions(&self) -> Vec<Version> {
        match &self.role {
            Role::Controller => vec![Version::V1_0, Version::V1_3],
            Role::Switch { versions, .. } => versions.clone(),
        }
    }

    fn queue(&mut self, m: &Message) {
        let at = self.out.len();
        self.out.resize(at + m.buffer_len(), 0);
        match m.emit(&mut self.out[at..]) {
            Ok(()) => {
                self.out_messages += 1;
                self.counters.messages_out += 1;
            }
            // Only a body too long for the 16-bit length fails; what the session itself
            // builds never is, and a caller's is not sent.
            Err(_) => self.out.truncate(at),
        }
    }

    fn send_error(&mut self, version: Version, kind: u16, code: u16, offending: &[u8]) {
        let data = offending[..offending.len().min(ERROR_DATA)].to_vec();
        let xid = match offending.get(4..HEADER_LEN) {
            Some(x) => u32::from_be_bytes([x[0], x[1], x[2], x[3]]),
            None => 0,
        };
        self.queue(&Message {
            version,
            xid,
            body: Body::Error(ErrorMsg { kind, code, data }),
        });
        self.counters.errors_sent += 1;
    }

    fn reply(&mut self, xid: u32, body: Body) {
        let version = self.version();
        self.queue(&Message { version, xid, body });
    }

    /// Handles one framed message; `Err` ends the session.
    fn on_message<F>(&mut self, raw: &[u8], on: &mut F) -> Result<(), Closed>
    where
        F: FnMut(SessionEvent<'_>),
    {
        self.counters.messages_in += 1;
        let p = Packet::new_unchecked(raw);
        let (version, code, xid) = (p.version(), p.msg_type(), p.xid());
        let switch = matches!(self.role, Role::Switch { .. });
        if let Phase::Ready(v, _) = self.phase {
            if version != v {
                self.counters.bad_messages += 1;
                self.send_error(v, BAD_REQUEST, BAD_VERSION, raw);
                return Ok(());
            }
            if code == PACKET_IN && !switch {
                match Message::parse_packet(&p)
                    .map_err(|_| ())
                    .and_then(|m| PacketInEvent::from_owned(m).map_err(|_| ()))
                {
                    Ok(ev) => {
                        self.counters.packet_ins += 1;
                        on(SessionEvent::PacketIn(ev));
                    }
                    Err(()) => {
                        self.counters.bad_messages += 1;
                        self.send_error(v, BAD_REQUEST, BAD_LEN, raw);
                    }
                }
                return Ok(());
            }
        }
        // The switch's hot path: messages it acts on itself go up unparsed (echo, features,
        // get-config and barrier requests are the session's).
        if switch && self.phase != Phase::Hello && !matches!(code, 0..=3 | 5 | 7) && !is_barrier_request(version, code)
        {
            on(SessionEvent::Raw(raw));
            return Ok(());
        }
        let msg = match Message::parse_packet(&p) {
            Ok(m) => m,
            Err(_) => {
                self.counters.bad_messages += 1;
                let v = self.version();
                self.send_error(v, BAD_REQUEST, BAD_LEN, raw);
                return Ok(());
            }
        };
        match (self.phase, msg.body) {
            (_, Body::EchoRequest(data)) => {
                self.reply(xid, Body::EchoReply(data));
                self.counters.echo_replies_sent += 1;
            }
            (_, Body::EchoReply(_)) => {}
            (Phase::Hello, Body::Error(_)) => {
                self.counters.errors_received += 1;
                self.counters.handshake_failures += 1;
                return Err(Closed::HelloError);
            }
            (Phase::Hello, Body::Hello(h)) => {
                let ours = self.our_versions();
                let header = ours.iter().copied().max().unwrap_or(Version::V1_3);
                match negotiate((header, &Hello::with_versions(&ours)), (version, &h)).filter(|v| ours.contains(v)) {
                    Some(v) => match &self.role {
                        Role::Controller => {
                            self.phase = Phase::Features(v);
                            self.send(Body::FeaturesRequest);
                        }
                        // The switch waits for the features request.
                        Role::Switch { .. } => self.phase = Phase::Features(v),
                    },
                    None => {
                        self.counters.handshake_failures += 1;
                        let (kind, code) = ErrorMsg::HELLO_FAILED_INCOMPATIBLE;
                        let data = match &self.role {
                            Role::Controller => b"tandem controller speaks OpenFlow 1.0 and 1.3".to_vec(),
                            Role::Switch { .. } => b"no common OpenFlow version".to_vec(),
                        };
                        self.queue(&Message {
                            version,
                            xid,
                            body: Body::Error(ErrorMsg { kind, code, data }),
                        });
                        self.counters.errors_sent += 1;
                        return Err(Closed::NoCommonVersion);
                    }
                }
            }
            // Anything before the hello: the specification wants a hello first.
            (Phase::Hello, _) => self.counters.bad_messages += 1,
            (_, Body::Hello(_)) => {}
            (Phase::Features(v), Body::FeaturesReply(f)) if !switch => {
                self.phase = Phase::Ready(v, f.datapath_id);
                self.counters.handshakes += 1;
                on(SessionEvent::Ready {
                    version: v,
                    dpid: f.datapath_id,
                });
            }
            (_, Body::BarrierRequest) => self.reply(xid, Body::BarrierReply),
            (Phase::Features(v), Body::FeaturesRequest) if switch => {
                if let Role::Switch { features, .. } = &self.role {
                    let f = features.clone();
                    let dpid = f.datapath_id;
                    self.reply(xid, Body::FeaturesReply(f));
                    self.phase = Phase::Ready(v, dpid);
                    self.counters.handshakes += 1;
                    on(SessionEvent::Ready { version: v, dpid });
                }
            }
            (_, Body::FeaturesRequest) if switch => {
                if let Role::Switch { features, .. } = &self.role {
                    let f = features.clone();
                    self.reply(xid, Body::FeaturesReply(f));
                }
            }
            (_, Body::GetConfigRequest) if switch => self.reply(
                xid,
                Body::GetConfigReply(SwitchConfig {
                    flags: 0,
                    miss_send_len: 128,
                }),
            ),
            (_, Body::PacketIn(_)) if !switch => self.counters.packet_ins_ignored += 1,
            (Phase::Ready(..), body @ Body::Error(_)) => {
                self.counters.errors_received += 1;
                on(SessionEvent::Message(Message { version, xid, body }));
            }
            (_, Body::Error(_)) => self.counters.errors_received += 1,
            (
                Phase::Ready(..),
                body @ (Body::PortStatus(_)
                | Body::FlowRemoved(_)
                | Body::BarrierReply
                | Body::MultipartReply(_)
                | Body::GetConfigReply(_)),
            ) if !switch => on(SessionEvent::Message(Message { version, xid, body })),
            (
                _,
                Body::PortStatus(_)
                | Body::FlowRemoved(_)
                | Body::BarrierReply
                | Body::MultipartReply(_)
                | Body::GetConfigReply(_)
                | Body::FeaturesReply(_),
            ) if !switch => {}
            (_, _) => {
                // An unknown type, a message of the other end's role or one not for now.
                self.counters.bad_messages += 1;
                let v = self.version();
                self.send_error(v, BAD_REQUEST, BAD_TYPE, raw);
            }
        }
        Ok(())
    }
}

/// The barrier request's type code differs between versions (18 in 1.0, 20 in 1.3).
fn is_barrier_request(version: Version, code: u8) -> bool {
    (version == Version::V1_0 && code == 18) || (version == Version::V1_3 && code == 20)
}

/// One input of a [`Session`] through the shared core contract
/// ([`tandem_time::sansio::SansIo`]).
#[derive(Debug, Clone, PartialEq)]
pub enum SessionInput<'a> {
    /// Bytes read from the peer ([`Session::handle_input`]); the output says how many were
    /// consumed ([`SessionOutput::Consumed`]), the driver keeps the rest.
    Bytes(&'a [u8]),
    /// A request of the layer above ([`Session::send`]); its xid comes back as
    /// [`SessionOutput::Sent`].
    Send(Body),
    /// Time passed ([`Session::handle_timeout`]).
    Timeout,
}

/// What a [`Session`] tells its driver through the shared core contract: what the layer above
/// must see (owned [`SessionEvent`]s), how much input it consumed, and the bytes to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionOutput {
    /// [`SessionEvent::Ready`].
    Ready {
        /// The negotiated version.
        version: Version,
        /// The switch's datapath id.
        dpid: u64,
    },
    /// [`SessionEvent::PacketIn`].
    PacketIn(PacketInEvent),
    /// [`SessionEvent::Message`].
    Message(Message),
    /// [`SessionEvent::Raw`], copied.
    Raw(Vec<u8>),
    /// How many bytes of a [`SessionInput::Bytes`] were whole messages (the rest is kept).
    Consumed(usize),
    /// The xid a [`SessionInput::Send`] got.
    Sent(u32),
    /// Bytes to write to the peer ([`Session::poll_transmit`]); after every input.
    Transmit(Transmit),
}

impl SessionOutput {
    fn of(ev: SessionEvent<'_>) -> SessionOutput {
        match ev {
            SessionEvent::Ready { version, dpid } => SessionOutput::Ready { version, dpid },
            SessionEvent::PacketIn(p) => SessionOutput::PacketIn(p),
            SessionEvent::Message(m) => SessionOutput::Message(m),
            SessionEvent::Raw(r) => SessionOutput::Raw(r.to_vec()),
        }
    }
}

/// The shared core contract. An error ([`Closed`]) ends the session: the output still holds
/// what to write before the driver closes the connection (an error message may wait there).
impl tandem_time::sansio::SansIo for Session {
    type Input<'a> = SessionInput<'a>;
    type Output = Vec<SessionOutput>;
    type Error = Closed;

    fn handle(&mut self, now: u64, input: SessionInput<'_>, out: &mut Vec<SessionOutput>) -> Result<(), Closed> {
        let r = match input {
            SessionInput::Bytes(buf) => self
                .handle_input(now, buf, |ev| out.push(SessionOutput::of(ev)))
                .map(|n| out.push(SessionOutput::Consumed(n))),
            SessionInput::Send(body) => {
                let xid = self.send(body);
                out.push(SessionOutput::Sent(xid));
                Ok(())
            }
            SessionInput::Timeout => self.handle_timeout(now),
        };
        out.extend(self.poll_transmit().map(SessionOutput::Transmit));
        r
    }

    fn poll_timeout(&self) -> Option<u64> {
        Session::poll_timeout(self)
    }

    fn timeout() -> SessionInput<'static> {
        SessionInput::Timeout
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tandem_wire::openflow::{FlowMatch, FlowMod, FlowRemoved, Match10, OxmField, OxmMatch, PacketIn};

    const S: u64 = PS_PER_S;

    fn switch(versions: &[Version], dpid: u64) -> Role {
        Role::Switch {
            versions: versions.to_vec(),
            features: FeaturesReply {
                datapath_id: dpid,
                n_buffers: 256,
                n_tables: 254,
                ..FeaturesReply::default()
            },
        }
    }

    /// What one end passed up, owned.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Seen {
        Ready(Version, u64),
        PacketIn(PacketInEvent),
        Message(Message),
        Raw(Vec<u8>),
    }

    fn feed(s: &mut Session, now: u64, bytes: &[u8], seen: &mut Vec<Seen>) -> Result<usize, Closed> {
        s.handle_input(now, bytes, |e| {
            seen.push(match e {
                SessionEvent::Ready { version, dpid } => Seen::Ready(version, dpid),
                SessionEvent::PacketIn(p) => Seen::PacketIn(p),
                SessionEvent::Message(m) => Seen::Message(m),
                SessionEvent::Raw(r) => Seen::Raw(r.to_vec()),
            })
        })
    }

    /// Moves what each end sends to the other until both are quiet.
    fn pump(c: &mut Session, w: &mut Session, now: u64) -> (Vec<Seen>, Vec<Seen>) {
        let (mut at_c, mut at_w) = (Vec::new(), Vec::new());
        for _ in 0..16 {
            let (to_w, to_c) = (c.poll_transmit(), w.poll_transmit());
            if to_w.is_none() && to_c.is_none() {
                break;
            }
            if let Some(t) = to_w {
                assert_eq!(feed(w, now, &t.bytes, &mut at_w), Ok(t.bytes.len()));
            }
            if let Some(t) = to_c {
                assert_eq!(feed(c, now, &t.bytes, &mut at_c), Ok(t.bytes.len()));
            }
        }
        (at_c, at_w)
    }

    fn bytes(m: &Message) -> Vec<u8> {
        m.to_bytes().unwrap()
    }

    fn bytes_of_hello() -> Vec<u8> {
        bytes(&Message {
            version: Version::V1_3,
            xid: 1,
            body: Body::Hello(Hello::with_versions(&[Version::V1_0, Version::V1_3])),
        })
    }

    fn packet_in(version: Version, xid: u32) -> Message {
        let mut frame = vec![0u8; 60];
        frame[0..6].copy_from_slice(&[0, 0, 0, 0, 0, 2]);
        frame[6..12].copy_from_slice(&[0, 0, 0, 0, 0, 1]);
        let body = if version == Version::V1_0 {
            PacketIn {
                buffer_id: 9,
                total_len: 60,
                in_port: 3,
                data: frame,
                ..PacketIn::default()
            }
        } else {
            PacketIn {
                buffer_id: 9,
                total_len: 60,
                oxm: OxmMatch {
                    fields: vec![OxmField::InPort(3)],
                },
                data: frame,
                ..PacketIn::default()
            }
        };
        Message {
            version,
            xid,
            body: Body::PacketIn(body),
        }
    }

    fn connected(version: Version) -> (Session, Session) {
        let mut c = Session::new(0, Role::Controller, SessionConfig::default());
        let mut w = Session::new(0, switch(&[version], 42), SessionConfig::default());
        let (at_c, at_w) = pump(&mut c, &mut w, 0);
        assert_eq!(at_c, vec![Seen::Ready(version, 42)]);
        assert_eq!(at_w, vec![Seen::Ready(version, 42)]);
        (c, w)
    }

    #[test]
    fn the_two_ends_shake_hands_on_the_highest_common_version() {
        for v in [Version::V1_0, Version::V1_3] {
            let (c, w) = connected(v);
            assert_eq!((c.version(), c.dpid(), w.version()), (v, Some(42), v));
            assert_eq!(c.counters().handshakes, 1);
            assert_eq!(c.counters().bad_messages + w.counters().bad_messages, 0);
        }
        // A switch offering both gets 1.3.
        let mut c = Session::new(0, Role::Controller, SessionConfig::default());
        let mut w = Session::new(0, switch(&[Version::V1_0, Version::V1_3], 1), SessionConfig::default());
        pump(&mut c, &mut w, 0);
        assert_eq!(c.version(), Version::V1_3);
    }

    #[test]
    fn no_common_version_is_refused_with_hello_failed() {
        let mut c = Session::new(0, Role::Controller, SessionConfig::default());
        // A peer of OpenFlow 1.1 (wire version 2) with no bitmap: the lower header version is
        // one we do not speak.
        let mut hello = bytes(&Message {
            version: Version::V1_3,
            xid: 1,
            body: Body::Hello(Hello::default()),
        });
        hello[0] = 2;
        let mut seen = Vec::new();
        assert_eq!(feed(&mut c, 0, &hello, &mut seen), Err(Closed::NoCommonVersion));
        let t = c.poll_transmit().unwrap();
        // Our hello, then the error.
        let (first, n) = Message::parse(&t.bytes).unwrap();
        assert!(matches!(first.body, Body::Hello(_)));
        let (err, _) = Message::parse(&t.bytes[n..]).unwrap();
        assert!(matches!(err.body, Body::Error(ErrorMsg { kind: 0, code: 0, .. })));
        assert_eq!(c.counters().handshake_failures, 1);
    }

    #[test]
    fn packet_ins_come_up_compact_and_other_messages_whole() {
        for v in [Version::V1_0, Version::V1_3] {
            let (mut c, _) = connected(v);
            let removed = Message {
                version: v,
                xid: 77,
                body: Body::FlowRemoved(FlowRemoved {
                    cookie: 5,
                    matches: if v == Version::V1_0 {
                        FlowMatch::V10(Match10::default())
                    } else {
                        FlowMatch::Oxm(OxmMatch::default())
                    },
                    ..FlowRemoved::default()
                }),
            };
            let mut stream = bytes(&packet_in(v, 3));
            stream.extend(bytes(&removed));
            let mut seen = Vec::new();
            assert_eq!(feed(&mut c, 1, &stream, &mut seen), Ok(stream.len()));
            let Seen::PacketIn(p) = &seen[0] else {
                panic!("{seen:?}")
            };
            assert_eq!((p.xid, p.buffer_id, p.in_port), (3, 9, 3));
            assert_eq!(seen[1], Seen::Message(removed));
            assert_eq!(c.counters().packet_ins, 1);
        }
    }

    #[test]
    fn the_switch_gets_controller_requests_raw_and_answers_the_rest_itself() {
        let (mut c, mut w) = connected(Version::V1_3);
        let fm = Message {
            version: Version::V1_3,
            xid: 9,
            body: Body::FlowMod(FlowMod::default()),
        };
        let raw = bytes(&fm);
        c.send(Body::BarrierRequest);
        c.send(Body::EchoRequest(b"x".to_vec()));
        let mut to_switch = c.poll_transmit().unwrap().bytes;
        to_switch.extend_from_slice(&raw);
        let mut seen = Vec::new();
        feed(&mut w, 1, &to_switch, &mut seen).unwrap();
        assert_eq!(seen, vec![Seen::Raw(raw)]);
        let back = w.poll_transmit().unwrap();
        assert_eq!(back.messages, 2);
        let (mut seen_c, _) = (Vec::new(), ());
        feed(&mut c, 1, &back.bytes, &mut seen_c).unwrap();
        // The barrier reply goes to the app; the echo reply is the session's.
        assert_eq!(seen_c.len(), 1);
        assert!(matches!(&seen_c[0], Seen::Message(m) if m.body == Body::BarrierReply));
    }

    #[test]
    fn bad_messages_get_errors_and_the_session_goes_on() {
        let (mut c, _) = connected(Version::V1_3);
        // A flow_mod is a controller's message: bad type.
        let fm = bytes(&Message {
            version: Version::V1_3,
            xid: 5,
            body: Body::FlowMod(FlowMod::default()),
        });
        // A message of the other version: bad version.
        let mut other = bytes(&packet_in(Version::V1_0, 6));
        other[0] = 1;
        // A packet_in whose body is cut short: bad length.
        let mut short = bytes(&packet_in(Version::V1_3, 7));
        short.truncate(HEADER_LEN + 4);
        short[2..4].copy_from_slice(&((HEADER_LEN + 4) as u16).to_be_bytes());
        for (msg, code) in [(fm, BAD_TYPE), (other, BAD_VERSION), (short, BAD_LEN)] {
            let mut seen = Vec::new();
            assert_eq!(feed(&mut c, 1, &msg, &mut seen), Ok(msg.len()));
            assert!(seen.is_empty());
            let t = c.poll_transmit().unwrap();
            let (e, _) = Message::parse(&t.bytes).unwrap();
            assert_eq!(e.xid, u32::from_be_bytes([msg[4], msg[5], msg[6], msg[7]]));
            let Body::Error(e) = e.body else { panic!() };
            assert_eq!((e.kind, e.code), (BAD_REQUEST, code));
            assert_eq!(e.data, msg[..msg.len().min(ERROR_DATA)]);
        }
        assert_eq!(c.counters().bad_messages, 3);
        assert_eq!(c.counters().errors_sent, 3);
    }

    #[test]
    fn an_unframeable_stream_ends_the_session() {
        let (mut c, _) = connected(Version::V1_3);
        let junk = [4u8, 10, 0, 3, 0, 0, 0, 1];
        assert_eq!(feed(&mut c, 1, &junk, &mut Vec::new()), Err(Closed::Unframeable));
        assert_eq!(c.counters().unframeable_streams, 1);
        assert!(c.poll_transmit().is_some(), "an error is sent before closing");
    }

    #[test]
    fn keepalive_sends_an_echo_then_gives_up() {
        let (mut c, mut w) = connected(Version::V1_3);
        let cfg = SessionConfig::default();
        assert_eq!(c.poll_timeout(), Some(cfg.echo_interval_ps));
        c.handle_timeout(cfg.echo_interval_ps - 1).unwrap();
        assert!(c.poll_transmit().is_none(), "not yet");
        c.handle_timeout(cfg.echo_interval_ps).unwrap();
        assert_eq!(c.counters().echo_requests_sent, 1);
        // The switch answers: the session lives on, the next echo is an interval later.
        let now = cfg.echo_interval_ps + 1;
        let echo = c.poll_transmit().unwrap();
        feed(&mut w, now, &echo.bytes, &mut Vec::new()).unwrap();
        feed(&mut c, now, &w.poll_transmit().unwrap().bytes, &mut Vec::new()).unwrap();
        assert_eq!(c.poll_timeout(), Some(now + cfg.echo_interval_ps));
        // Now silence: an echo, then the end.
        let t1 = now + cfg.echo_interval_ps;
        c.handle_timeout(t1).unwrap();
        assert_eq!(c.poll_timeout(), Some(t1 + cfg.echo_timeout_ps));
        assert_eq!(c.handle_timeout(t1 + cfg.echo_timeout_ps), Err(Closed::EchoTimeout));
    }

    #[test]
    fn a_trickle_of_bytes_is_no_sign_of_life() {
        let (mut c, _) = connected(Version::V1_3);
        let cfg = SessionConfig::default();
        let m = bytes(&packet_in(Version::V1_3, 1));
        assert_eq!(feed(&mut c, 1, &m[..5], &mut Vec::new()), Ok(0));
        c.handle_timeout(cfg.echo_interval_ps).unwrap();
        let end = cfg.echo_interval_ps + cfg.echo_timeout_ps;
        assert_eq!(feed(&mut c, end - 1, &m[..9], &mut Vec::new()), Ok(0));
        assert_eq!(c.handle_timeout(end), Err(Closed::PartialMessage));
        assert_eq!(c.counters().message_timeouts, 1);
    }

    #[test]
    fn the_handshake_has_a_deadline_and_errors_in_it_end_it() {
        let mut c = Session::new(S, Role::Controller, SessionConfig::default());
        assert_eq!(c.poll_timeout(), Some(11 * S));
        assert_eq!(c.handle_timeout(11 * S), Err(Closed::HandshakeTimeout));
        let mut c = Session::new(0, Role::Controller, SessionConfig::default());
        let err = bytes(&Message {
            version: Version::V1_3,
            xid: 1,
            body: Body::Error(ErrorMsg {
                kind: 0,
                code: 0,
                data: Vec::new(),
            }),
        });
        assert_eq!(feed(&mut c, 0, &err, &mut Vec::new()), Err(Closed::HelloError));
        assert_eq!(c.counters().handshake_failures, 1);
        // A packet_in before the hello: counted as bad, never passed up.
        let mut c = Session::new(0, Role::Controller, SessionConfig::default());
        let mut seen = Vec::new();
        let p = bytes(&packet_in(Version::V1_3, 1));
        assert_eq!(feed(&mut c, 0, &p, &mut seen), Ok(p.len()));
        assert!(seen.is_empty());
    }

    proptest! {
        /// Arbitrary bytes in arbitrary reads, either role: no panic, only whole messages
        /// consumed, and what the session sends always parses (the fuzz target
        /// `openflow_session` runs the same property at length).
        #[test]
        fn arbitrary_bytes_never_break_a_session(
            bytes in proptest::collection::vec(any::<u8>(), 0..600),
            step in 1usize..64,
            hello_first in any::<bool>(),
        ) {
            for role in [Role::Controller, switch(&[Version::V1_0, Version::V1_3], 3)] {
                let mut s = Session::new(0, role, SessionConfig::default());
                let mut stream = Vec::new();
                if hello_first {
                    // Past the handshake's first step, so later states are reached too.
                    stream.extend(bytes_of_hello());
                }
                stream.extend_from_slice(&bytes);
                let mut held: Vec<u8> = Vec::new();
                for (i, chunk) in stream.chunks(step).enumerate() {
                    held.extend_from_slice(chunk);
                    match s.handle_input(i as u64, &held, |_| {}) {
                        Ok(n) => {
                            prop_assert!(n <= held.len());
                            held.drain(..n);
                        }
                        Err(_) => break,
                    }
                    let _ = s.handle_timeout(i as u64 * S);
                    if let Some(t) = s.poll_transmit() {
                        let mut at = 0;
                        while at < t.bytes.len() {
                            let (_, used) = Message::parse(&t.bytes[at..]).expect("what a session sends parses");
                            at += used;
                        }
                    }
                }
            }
        }

        /// However the byte stream is cut into reads, the same events come up.
        #[test]
        fn events_do_not_depend_on_how_reads_cut_the_stream(cuts in proptest::collection::vec(1usize..200, 1..40)) {
            let mut stream = Vec::new();
            for i in 0..6u32 {
                stream.extend(bytes(&packet_in(Version::V1_3, i)));
                stream.extend(bytes(&Message { version: Version::V1_3, xid: 100 + i, body: Body::EchoRequest(vec![i as u8; i as usize]) }));
            }
            let whole = {
                let (mut c, _) = connected(Version::V1_3);
                let mut seen = Vec::new();
                feed(&mut c, 1, &stream, &mut seen).unwrap();
                (seen, c.poll_transmit().map(|t| t.bytes))
            };
            let (mut c, _) = connected(Version::V1_3);
            let mut seen = Vec::new();
            let mut held: Vec<u8> = Vec::new();
            let mut rest = &stream[..];
            let mut cut = cuts.iter().cycle();
            while !rest.is_empty() {
                let n = (*cut.next().unwrap()).min(rest.len());
                held.extend_from_slice(&rest[..n]);
                rest = &rest[n..];
                let used = feed(&mut c, 1, &held, &mut seen).unwrap();
                held.drain(..used);
            }
            prop_assert!(held.is_empty());
            prop_assert_eq!(whole.0, seen);
            prop_assert_eq!(whole.1, c.poll_transmit().map(|t| t.bytes));
        }
    }

    /// Through the shared contract alone the two ends shake hands as through their own calls,
    /// a request goes across, and the keepalive runs by `advance`.
    #[test]
    fn the_shared_core_contract_drives_a_session() {
        use tandem_time::sansio::{advance, SansIo};
        let cfg = SessionConfig::default();
        let mut ends = [
            Session::new(0, Role::Controller, cfg),
            Session::new(0, switch(&[Version::V1_3], 42), cfg),
        ];
        let mut seen: [Vec<SessionOutput>; 2] = [Vec::new(), Vec::new()];
        // Each end's first output is its hello, taken by a timeout input (nothing is due).
        let mut wire: Vec<(usize, Vec<u8>)> = Vec::new();
        let take = |i: usize,
                    out: &mut Vec<SessionOutput>,
                    wire: &mut Vec<(usize, Vec<u8>)>,
                    seen: &mut [Vec<SessionOutput>; 2]| {
            for o in out.drain(..) {
                match o {
                    SessionOutput::Transmit(t) => wire.push((1 - i, t.bytes)),
                    other => seen[i].push(other),
                }
            }
        };
        let mut out = Vec::new();
        for (i, end) in ends.iter_mut().enumerate() {
            SansIo::handle(end, 0, SessionInput::Timeout, &mut out).unwrap();
            take(i, &mut out, &mut wire, &mut seen);
        }
        while let Some((to, bytes)) = (!wire.is_empty()).then(|| wire.remove(0)) {
            SansIo::handle(&mut ends[to], 0, SessionInput::Bytes(&bytes), &mut out).unwrap();
            assert!(out.contains(&SessionOutput::Consumed(bytes.len())));
            out.retain(|o| !matches!(o, SessionOutput::Consumed(_)));
            take(to, &mut out, &mut wire, &mut seen);
        }
        for s in &seen {
            assert_eq!(
                s,
                &[SessionOutput::Ready {
                    version: Version::V1_3,
                    dpid: 42
                }]
            );
        }
        // A request of the controller's layer above reaches the switch's as a raw message.
        SansIo::handle(
            &mut ends[0],
            0,
            SessionInput::Send(Body::FlowMod(FlowMod::default())),
            &mut out,
        )
        .unwrap();
        let Some(SessionOutput::Sent(xid)) = out.first().cloned() else {
            panic!("{out:?}")
        };
        take(0, &mut out, &mut wire, &mut seen);
        let (to, bytes) = wire.remove(0);
        SansIo::handle(&mut ends[to], 0, SessionInput::Bytes(&bytes), &mut out).unwrap();
        let raw = out.iter().find_map(|o| match o {
            SessionOutput::Raw(r) => Some(r.clone()),
            _ => None,
        });
        assert_eq!(Message::parse(&raw.unwrap()).unwrap().0.xid, xid);
        out.clear();
        // Silence: advance sends the keepalive echo at the interval, then ends the session.
        let echo_at = SansIo::poll_timeout(&ends[0]).unwrap();
        advance(&mut ends[0], echo_at, &mut out).unwrap();
        assert!(matches!(out.as_slice(), [SessionOutput::Transmit(_)]), "{out:?}");
        assert_eq!(ends[0].counters().echo_requests_sent, 1);
        out.clear();
        assert_eq!(advance(&mut ends[0], u64::MAX, &mut out), Err(Closed::EchoTimeout));
    }
}
