//! OpenFlow 1.0 (wire version 1) and 1.3 (wire version 4) messages.
//!
//! [`Packet`] is the zero-copy view of one message (the 8-byte header and its body). [`Message`]
//! is the owned form: version, xid and a [`Body`]; [`Message::parse`] reads one message from the
//! front of a byte stream and says how many bytes it used, [`MessageReader`] splits a stream.
//! Message types whose bodies are not modelled yet (and unknown types) are kept as
//! [`Body::Opaque`], never an error, so that a stream can always be walked and re-emitted.
//!
//! Modelled bodies: hello (with the 1.3 version bitmap, see [`negotiate`]), error, echo request and
//! reply, features request and reply, get_config request and reply, set_config, packet_in,
//! flow_removed, port_status, packet_out, flow_mod, stats/multipart request and reply (see
//! [`multipart`]), barrier request and reply. Matches are in [`mod@matches`], actions and
//! instructions in [`action`].

pub mod action;
pub mod flow;
pub mod header;
pub mod matches;
pub mod msg;
pub mod multipart;

pub use action::{Action, Instruction};
pub use flow::{FlowMatch, FlowMod, FlowModCommand, FlowRemoved, PacketIn, PacketOut, Port, Port13, PortStatus};
pub use header::{type_name, MultipartType, Packet, Type10, Type13, Version, HEADER_LEN};
pub use matches::{Match10, OxmField, OxmMatch};
pub use msg::{negotiate, ErrorMsg, FeaturesReply, Hello, HelloElement, PhyPort10, SwitchConfig};
pub use multipart::{AggregateStats, DescStats, FlowStats, FlowStatsRequest, PortStats, TableStats};
pub use multipart::{MultipartReply, MultipartReplyBody, MultipartRequest, MultipartRequestBody};

use crate::{Error, Result};

#[inline]
pub(crate) fn need(b: &[u8], len: usize) -> Result<()> {
    if b.len() < len {
        Err(Error::Truncated)
    } else {
        Ok(())
    }
}

#[inline]
pub(crate) fn read_u64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(w)
}

#[inline]
pub(crate) fn write_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

/// The body of a message, by type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Body {
    /// Hello (any version).
    Hello(Hello),
    /// Error (any version).
    Error(ErrorMsg),
    /// Echo request with its opaque data.
    EchoRequest(Vec<u8>),
    /// Echo reply with its opaque data.
    EchoReply(Vec<u8>),
    /// Features request (empty body).
    FeaturesRequest,
    /// Features reply.
    FeaturesReply(FeaturesReply),
    /// Get-config request (empty body).
    GetConfigRequest,
    /// Get-config reply.
    GetConfigReply(SwitchConfig),
    /// Set-config.
    SetConfig(SwitchConfig),
    /// Packet-in.
    PacketIn(PacketIn),
    /// Flow-removed.
    FlowRemoved(FlowRemoved),
    /// Port-status.
    PortStatus(PortStatus),
    /// Packet-out.
    PacketOut(PacketOut),
    /// Flow-mod.
    FlowMod(FlowMod),
    /// Stats request (1.0) / multipart request (1.3).
    MultipartRequest(MultipartRequest),
    /// Stats reply (1.0) / multipart reply (1.3).
    MultipartReply(MultipartReply),
    /// Barrier request (empty body).
    BarrierRequest,
    /// Barrier reply (empty body).
    BarrierReply,
    /// Any other type, a version this crate does not model, or a hello whose elements do not
    /// parse: the type code and raw body.
    Opaque {
        /// The message type code.
        type_code: u8,
        /// The body bytes after the header.
        body: Vec<u8>,
    },
}

/// The type codes of the modelled bodies that differ between versions: (1.0, 1.3).
fn versioned_code(b: &Body) -> Option<(Type10, Type13)> {
    Some(match b {
        Body::FeaturesRequest => (Type10::FeaturesRequest, Type13::FeaturesRequest),
        Body::FeaturesReply(_) => (Type10::FeaturesReply, Type13::FeaturesReply),
        Body::GetConfigRequest => (Type10::GetConfigRequest, Type13::GetConfigRequest),
        Body::GetConfigReply(_) => (Type10::GetConfigReply, Type13::GetConfigReply),
        Body::SetConfig(_) => (Type10::SetConfig, Type13::SetConfig),
        Body::PacketIn(_) => (Type10::PacketIn, Type13::PacketIn),
        Body::FlowRemoved(_) => (Type10::FlowRemoved, Type13::FlowRemoved),
        Body::PortStatus(_) => (Type10::PortStatus, Type13::PortStatus),
        Body::PacketOut(_) => (Type10::PacketOut, Type13::PacketOut),
        Body::FlowMod(_) => (Type10::FlowMod, Type13::FlowMod),
        Body::MultipartRequest(_) => (Type10::StatsRequest, Type13::MultipartRequest),
        Body::MultipartReply(_) => (Type10::StatsReply, Type13::MultipartReply),
        Body::BarrierRequest => (Type10::BarrierRequest, Type13::BarrierRequest),
        Body::BarrierReply => (Type10::BarrierReply, Type13::BarrierReply),
        _ => return None,
    })
}

/// One OpenFlow message, owned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Message {
    /// The header's version byte.
    pub version: Version,
    /// Transaction id.
    pub xid: u32,
    /// The body.
    pub body: Body,
}

fn empty(body: &[u8], b: Body) -> Result<Body> {
    if body.is_empty() {
        Ok(b)
    } else {
        Err(Error::Malformed("body on a message that has none"))
    }
}

impl Message {
    /// Reads one message from the front of `bytes`; returns it and the bytes it used (its length
    /// field). [`Error::Truncated`] when `bytes` does not yet hold the whole message.
    pub fn parse(bytes: &[u8]) -> Result<(Message, usize)> {
        let p = Packet::new_checked(bytes)?;
        Ok((Message::parse_packet(&p)?, usize::from(p.length())))
    }

    /// Reads the message a checked view holds.
    pub fn parse_packet<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Message> {
        p.check_len()?;
        let (version, code, b) = (p.version(), p.msg_type(), p.body());
        let common = match code {
            // A hello whose elements do not parse is kept opaque: its header version still counts.
            0 => Some(Hello::parse(b).map_or_else(
                |_| Body::Opaque {
                    type_code: 0,
                    body: b.to_vec(),
                },
                Body::Hello,
            )),
            1 => Some(Body::Error(ErrorMsg::parse(b)?)),
            2 => Some(Body::EchoRequest(b.to_vec())),
            3 => Some(Body::EchoReply(b.to_vec())),
            _ => None,
        };
        let body = match common {
            Some(body) => body,
            None => {
                let t10 = (version == Version::V1_0).then(|| Type10::from_code(code)).flatten();
                let t13 = (version == Version::V1_3).then(|| Type13::from_code(code)).flatten();
                match (t10, t13) {
                    (Some(Type10::FeaturesRequest), _) | (_, Some(Type13::FeaturesRequest)) => {
                        empty(b, Body::FeaturesRequest)?
                    }
                    (Some(Type10::FeaturesReply), _) | (_, Some(Type13::FeaturesReply)) => {
                        Body::FeaturesReply(FeaturesReply::parse(version, b)?)
                    }
                    (Some(Type10::GetConfigRequest), _) | (_, Some(Type13::GetConfigRequest)) => {
                        empty(b, Body::GetConfigRequest)?
                    }
                    (Some(Type10::GetConfigReply), _) | (_, Some(Type13::GetConfigReply)) => {
                        Body::GetConfigReply(SwitchConfig::parse(b)?)
                    }
                    (Some(Type10::SetConfig), _) | (_, Some(Type13::SetConfig)) => {
                        Body::SetConfig(SwitchConfig::parse(b)?)
                    }
                    (Some(Type10::PacketIn), _) | (_, Some(Type13::PacketIn)) => {
                        Body::PacketIn(PacketIn::parse(version, b)?)
                    }
                    (Some(Type10::FlowRemoved), _) | (_, Some(Type13::FlowRemoved)) => {
                        Body::FlowRemoved(FlowRemoved::parse(version, b)?)
                    }
                    (Some(Type10::PortStatus), _) | (_, Some(Type13::PortStatus)) => {
                        Body::PortStatus(PortStatus::parse(version, b)?)
                    }
                    (Some(Type10::PacketOut), _) | (_, Some(Type13::PacketOut)) => {
                        Body::PacketOut(PacketOut::parse(version, b)?)
                    }
                    (Some(Type10::FlowMod), _) | (_, Some(Type13::FlowMod)) => {
                        Body::FlowMod(FlowMod::parse(version, b)?)
                    }
                    (Some(Type10::StatsRequest), _) | (_, Some(Type13::MultipartRequest)) => {
                        Body::MultipartRequest(MultipartRequest::parse(version, b)?)
                    }
                    (Some(Type10::StatsReply), _) | (_, Some(Type13::MultipartReply)) => {
                        Body::MultipartReply(MultipartReply::parse(version, b)?)
                    }
                    (Some(Type10::BarrierRequest), _) | (_, Some(Type13::BarrierRequest)) => {
                        empty(b, Body::BarrierRequest)?
                    }
                    (Some(Type10::BarrierReply), _) | (_, Some(Type13::BarrierReply)) => empty(b, Body::BarrierReply)?,
                    _ => Body::Opaque {
                        type_code: code,
                        body: b.to_vec(),
                    },
                }
            }
        };
        Ok(Message {
            version,
            xid: p.xid(),
            body,
        })
    }

    /// The message type code for this body and version; [`Error::Unsupported`] for a
    /// version-specific body in a version this crate does not model.
    #[inline]
    pub fn type_code(&self) -> Result<u8> {
        Ok(match &self.body {
            Body::Hello(_) => 0,
            Body::Error(_) => 1,
            Body::EchoRequest(_) => 2,
            Body::EchoReply(_) => 3,
            Body::Opaque { type_code, .. } => *type_code,
            b => match (versioned_code(b), self.version) {
                (Some((t, _)), Version::V1_0) => t.code(),
                (Some((_, t)), Version::V1_3) => t.code(),
                _ => return Err(Error::Unsupported("openflow version")),
            },
        })
    }

    /// The type name ("hello", "flow_mod", ...) if the type is defined for the version.
    pub fn type_name(&self) -> Option<&'static str> {
        type_name(self.version, self.type_code().ok()?)
    }

    #[inline]
    fn body_len(&self) -> usize {
        match &self.body {
            Body::Hello(h) => h.buffer_len(),
            Body::Error(e) => e.buffer_len(),
            Body::EchoRequest(d) | Body::EchoReply(d) => d.len(),
            Body::FeaturesReply(f) => f.buffer_len(),
            Body::GetConfigReply(c) | Body::SetConfig(c) => c.buffer_len(),
            Body::PacketIn(p) => p.buffer_len(self.version),
            Body::FlowRemoved(f) => f.buffer_len(self.version),
            Body::PortStatus(p) => p.buffer_len(),
            Body::PacketOut(p) => p.buffer_len(self.version),
            Body::FlowMod(f) => f.buffer_len(self.version),
            Body::MultipartRequest(m) => m.buffer_len(self.version),
            Body::MultipartReply(m) => m.buffer_len(self.version),
            Body::FeaturesRequest | Body::GetConfigRequest | Body::BarrierRequest | Body::BarrierReply => 0,
            Body::Opaque { body, .. } => body.len(),
        }
    }

    /// Bytes this message emits, header included.
    #[inline]
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.body_len()
    }

    /// Writes the message into the start of `buf`. [`Error::Malformed`] when it would be longer
    /// than the 16-bit length field allows.
    #[inline]
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len();
        let len16 = u16::try_from(len).map_err(|_| Error::Malformed("openflow message longer than 65535"))?;
        need(buf, len)?;
        let code = self.type_code()?;
        let mut p = Packet::new_unchecked(&mut buf[..len]);
        p.set_version(self.version);
        p.set_msg_type(code);
        p.set_length(len16);
        p.set_xid(self.xid);
        let b = p.body_mut();
        match &self.body {
            Body::Hello(h) => h.emit(b),
            Body::Error(e) => e.emit(b),
            Body::EchoRequest(d) | Body::EchoReply(d) | Body::Opaque { body: d, .. } => {
                b.copy_from_slice(d);
                Ok(())
            }
            Body::FeaturesReply(f) => f.emit(self.version, b),
            Body::GetConfigReply(c) | Body::SetConfig(c) => c.emit(b),
            Body::PacketIn(p) => p.emit(self.version, b),
            Body::FlowRemoved(f) => f.emit(self.version, b),
            Body::PortStatus(p) => p.emit(self.version, b),
            Body::PacketOut(p) => p.emit(self.version, b),
            Body::FlowMod(f) => f.emit(self.version, b),
            Body::MultipartRequest(m) => m.emit(self.version, b),
            Body::MultipartReply(m) => m.emit(self.version, b),
            Body::FeaturesRequest | Body::GetConfigRequest | Body::BarrierRequest | Body::BarrierReply => Ok(()),
        }
    }

    /// The emitted bytes in a new vector.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut v = vec![0u8; self.buffer_len()];
        self.emit(&mut v)?;
        Ok(v)
    }
}

/// Splits a byte stream (a TCP connection, a capture) into messages.
///
/// Feed bytes with [`MessageReader::push`], then call [`MessageReader::next_message`] until it
/// returns `Ok(None)` (no whole message buffered). A message whose body does not parse is consumed
/// and reported as an error, so the stream goes on; a header whose length is below 8 makes the
/// stream unreadable: [`MessageReader::next_message`] then returns that error on every call and the
/// iterator ends after yielding it once.
#[derive(Debug, Clone, Default)]
pub struct MessageReader {
    buf: Vec<u8>,
    start: usize,
    broken: bool,
}

impl MessageReader {
    /// An empty reader.
    pub fn new() -> MessageReader {
        MessageReader::default()
    }
    /// Appends bytes from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 4096 && self.start * 2 > self.buf.len() {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }
    /// Bytes buffered and not yet returned as messages.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.start
    }
    /// The next whole message, `Ok(None)` when more bytes are needed.
    pub fn next_message(&mut self) -> Result<Option<Message>> {
        let rest = &self.buf[self.start..];
        let p = match Packet::new_checked(rest) {
            Ok(p) => p,
            Err(Error::Truncated) => return Ok(None),
            Err(e) => {
                self.broken = true;
                return Err(e);
            }
        };
        self.start += usize::from(p.length());
        Message::parse_packet(&p).map(Some)
    }
}

impl Iterator for MessageReader {
    type Item = Result<Message>;
    fn next(&mut self) -> Option<Result<Message>> {
        if self.broken {
            return None;
        }
        self.next_message().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn msg(version: Version, xid: u32, body: Body) -> Message {
        Message { version, xid, body }
    }

    #[test]
    fn known_messages_byte_exact() {
        let cases: Vec<(Vec<u8>, Message)> = vec![
            (
                vec![4, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8, 0, 0, 0, 0x12],
                msg(
                    Version::V1_3,
                    1,
                    Body::Hello(Hello::with_versions(&[Version::V1_0, Version::V1_3])),
                ),
            ),
            (
                vec![1, 0, 0, 8, 0, 0, 0, 7],
                msg(Version::V1_0, 7, Body::Hello(Hello::default())),
            ),
            (
                vec![1, 2, 0, 10, 0, 0, 0, 2, 0xbe, 0xef],
                msg(Version::V1_0, 2, Body::EchoRequest(vec![0xbe, 0xef])),
            ),
            (
                vec![4, 3, 0, 8, 0, 0, 0, 2],
                msg(Version::V1_3, 2, Body::EchoReply(vec![])),
            ),
            (
                vec![4, 1, 0, 14, 0, 0, 0, 9, 0, 5, 0, 2, 0xaa, 0xbb],
                msg(
                    Version::V1_3,
                    9,
                    Body::Error(ErrorMsg {
                        kind: 5,
                        code: 2,
                        data: vec![0xaa, 0xbb],
                    }),
                ),
            ),
            (
                vec![1, 5, 0, 8, 0, 0, 0, 3],
                msg(Version::V1_0, 3, Body::FeaturesRequest),
            ),
            (
                vec![1, 7, 0, 8, 0, 0, 0, 3],
                msg(Version::V1_0, 3, Body::GetConfigRequest),
            ),
            (
                vec![1, 18, 0, 8, 0, 0, 0, 4],
                msg(Version::V1_0, 4, Body::BarrierRequest),
            ),
            (vec![1, 19, 0, 8, 0, 0, 0, 4], msg(Version::V1_0, 4, Body::BarrierReply)),
            (
                vec![4, 20, 0, 8, 0, 0, 0, 4],
                msg(Version::V1_3, 4, Body::BarrierRequest),
            ),
            (vec![4, 21, 0, 8, 0, 0, 0, 4], msg(Version::V1_3, 4, Body::BarrierReply)),
            (
                vec![1, 9, 0, 12, 0, 0, 0, 5, 0, 0, 0, 0x80],
                msg(
                    Version::V1_0,
                    5,
                    Body::SetConfig(SwitchConfig {
                        flags: 0,
                        miss_send_len: 128,
                    }),
                ),
            ),
            (
                vec![4, 8, 0, 12, 0, 0, 0, 5, 0, 1, 0xff, 0xff],
                msg(
                    Version::V1_3,
                    5,
                    Body::GetConfigReply(SwitchConfig {
                        flags: 1,
                        miss_send_len: 0xffff,
                    }),
                ),
            ),
            // OF1.0 stats_request (16) for desc.
            (
                vec![1, 16, 0, 12, 0, 0, 0, 6, 0, 0, 0, 0],
                msg(
                    Version::V1_0,
                    6,
                    Body::MultipartRequest(MultipartRequest {
                        flags: 0,
                        body: MultipartRequestBody::Desc,
                    }),
                ),
            ),
            // OF1.3 role_request (24) is not modelled yet: kept opaque.
            (
                vec![4, 24, 0, 12, 0, 0, 0, 6, 0, 0, 0, 2],
                msg(
                    Version::V1_3,
                    6,
                    Body::Opaque {
                        type_code: 24,
                        body: vec![0, 0, 0, 2],
                    },
                ),
            ),
            // An unknown version: only hello, error and echo are modelled.
            (
                vec![2, 5, 0, 8, 0, 0, 0, 1],
                msg(
                    Version(2),
                    1,
                    Body::Opaque {
                        type_code: 5,
                        body: vec![],
                    },
                ),
            ),
        ];
        for (bytes, m) in cases {
            let (parsed, used) = Message::parse(&bytes).unwrap();
            assert_eq!(parsed, m, "{bytes:?}");
            assert_eq!(used, bytes.len());
            assert_eq!(m.to_bytes().unwrap(), bytes);
        }
        assert_eq!(
            Message::parse(&[1, 18, 0, 8, 0, 0, 0, 4]).unwrap().0.type_name(),
            Some("barrier_request")
        );
    }

    #[test]
    fn malformed_and_unsupported() {
        assert_eq!(
            Message::parse(&[1, 18, 0, 9, 0, 0, 0, 4]).unwrap_err(),
            Error::Truncated
        );
        assert!(matches!(
            Message::parse(&[1, 18, 0, 9, 0, 0, 0, 4, 0]),
            Err(Error::Malformed(_))
        ));
        assert!(matches!(
            Message::parse(&[1, 9, 0, 10, 0, 0, 0, 4, 0, 0]),
            Err(Error::Truncated)
        ));
        let m = msg(Version(2), 0, Body::BarrierRequest);
        assert!(matches!(m.to_bytes(), Err(Error::Unsupported(_))));
        // A 1.0 hello with a body that is not a list of elements.
        let (h, _) = Message::parse(&[1, 0, 0, 11, 0, 0, 0, 1, 9, 9, 9]).unwrap();
        assert_eq!(
            h.body,
            Body::Opaque {
                type_code: 0,
                body: vec![9, 9, 9]
            }
        );
        assert_eq!(h.to_bytes().unwrap(), [1, 0, 0, 11, 0, 0, 0, 1, 9, 9, 9]);
    }

    #[test]
    fn reader_splits_a_stream() {
        let mut stream = Vec::new();
        stream.extend_from_slice(&[4, 0, 0, 8, 0, 0, 0, 1]);
        stream.extend_from_slice(&[4, 2, 0, 10, 0, 0, 0, 2, 1, 2]);
        stream.extend_from_slice(&[4, 9, 0, 9, 0, 0, 0, 3, 0]); // bad set_config: skipped with an error
        stream.extend_from_slice(&[4, 20, 0, 8, 0, 0, 0, 4]);
        let mut r = MessageReader::new();
        let mut got = Vec::new();
        for chunk in stream.chunks(3) {
            r.push(chunk);
            got.extend(r.by_ref().map(|m| m.map(|m| m.xid)));
        }
        assert_eq!(got.len(), 4);
        assert_eq!(got[0], Ok(1));
        assert_eq!(got[1], Ok(2));
        assert!(got[2].is_err());
        assert_eq!(got[3], Ok(4));
        assert_eq!(r.pending(), 0);
        r.push(&[1, 0, 0, 4, 0, 0, 0, 0]);
        assert!(r.next().unwrap().is_err());
        assert!(r.next().is_none());
        assert!(r.next_message().is_err());
    }

    fn any_version() -> impl Strategy<Value = Version> {
        prop_oneof![Just(Version::V1_0), Just(Version::V1_3)]
    }

    pub(crate) fn any_message() -> impl Strategy<Value = Message> {
        let data = || proptest::collection::vec(any::<u8>(), 0..24);
        let cfg = || any::<(u16, u16)>().prop_map(|(flags, miss_send_len)| SwitchConfig { flags, miss_send_len });
        (any_version(), any::<u32>()).prop_flat_map(move |(version, xid)| {
            let body = prop_oneof![
                msg::tests::any_hello().prop_map(Body::Hello),
                (any::<u16>(), any::<u16>(), data()).prop_map(|(kind, code, data)| Body::Error(ErrorMsg {
                    kind,
                    code,
                    data
                })),
                data().prop_map(Body::EchoRequest),
                data().prop_map(Body::EchoReply),
                Just(Body::FeaturesRequest),
                msg::tests::any_features(version).prop_map(Body::FeaturesReply),
                Just(Body::GetConfigRequest),
                cfg().prop_map(Body::GetConfigReply),
                cfg().prop_map(Body::SetConfig),
                flow::tests::any_packet_in(version).prop_map(Body::PacketIn),
                flow::tests::any_flow_removed(version).prop_map(Body::FlowRemoved),
                flow::tests::any_port_status(version).prop_map(Body::PortStatus),
                flow::tests::any_packet_out(version).prop_map(Body::PacketOut),
                flow::tests::any_flow_mod(version).prop_map(Body::FlowMod),
                multipart::tests::any_request(version).prop_map(Body::MultipartRequest),
                multipart::tests::any_reply(version).prop_map(Body::MultipartReply),
                Just(Body::BarrierRequest),
                Just(Body::BarrierReply),
                // Type codes this crate keeps opaque in both versions.
                (prop_oneof![Just(30u8), Just(200u8), Just(255u8)], data())
                    .prop_map(|(type_code, body)| Body::Opaque { type_code, body }),
            ];
            body.prop_map(move |body| Message { version, xid, body })
        })
    }

    proptest! {
        #[test]
        fn round_trip(m in any_message()) {
            let bytes = m.to_bytes().unwrap();
            let (parsed, used) = Message::parse(&bytes).unwrap();
            prop_assert_eq!(used, bytes.len());
            prop_assert_eq!(parsed, m);
        }

        #[test]
        fn mutated_messages_never_panic_and_reemit(m in any_message(), at in any::<usize>(), byte in any::<u8>(),
                                                   cut in any::<usize>()) {
            let mut bytes = m.to_bytes().unwrap();
            let i = at % bytes.len();
            bytes[i] = byte;
            bytes.truncate(bytes.len() - cut % 4);
            if let Ok((m, _)) = Message::parse(&bytes) {
                let again = m.to_bytes().unwrap();
                prop_assert_eq!(Message::parse(&again).unwrap().0, m);
            }
        }

        #[test]
        fn never_panics_and_reemits(data in proptest::collection::vec(any::<u8>(), 0..160)) {
            if let Ok((m, used)) = Message::parse(&data) {
                prop_assert!(used <= data.len());
                let bytes = m.to_bytes().unwrap();
                prop_assert_eq!(Message::parse(&bytes).unwrap().0, m);
            }
            let mut r = MessageReader::new();
            r.push(&data);
            for _ in 0..4 {
                let _ = r.next_message();
            }
        }
    }
}
