//! ICMP for IPv4 (RFC 792): echo request and reply are modelled; other messages are kept as
//! type, code and the four rest-of-header bytes, so nothing is lost on a round trip.

use crate::checksum;
use crate::field::{read_u16, read_u32, write_u16, write_u32};
use crate::{Error, Result};

/// Length of the ICMP header (type, code, checksum, rest of header).
pub const HEADER_LEN: usize = 8;
/// Type of an echo reply.
pub const TYPE_ECHO_REPLY: u8 = 0;
/// Type of an echo request.
pub const TYPE_ECHO_REQUEST: u8 = 8;

mod f {
    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const CHECKSUM: usize = 2;
    pub const REST: usize = 4;
    pub const IDENT: usize = 4;
    pub const SEQ: usize = 6;
}

/// A zero-copy view of an ICMP message.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it.
    pub fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }
    /// Wraps a buffer and runs [`Packet::check_len`].
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    /// Checks that the 8-byte header is present.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(())
    }
    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// Message type.
    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref()[f::TYPE]
    }
    /// Message code.
    pub fn code(&self) -> u8 {
        self.buffer.as_ref()[f::CODE]
    }
    /// Checksum field.
    pub fn checksum(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::CHECKSUM)
    }
    /// The four bytes after the checksum, as one word.
    pub fn rest_of_header(&self) -> u32 {
        read_u32(self.buffer.as_ref(), f::REST)
    }
    /// Echo identifier (meaningful for echo messages).
    pub fn echo_ident(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::IDENT)
    }
    /// Echo sequence number (meaningful for echo messages).
    pub fn echo_seq_no(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::SEQ)
    }
    /// The data after the header.
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }
    /// True when the checksum over the whole message verifies.
    pub fn verify_checksum(&self) -> bool {
        checksum::checksum(self.buffer.as_ref()) == 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Recomputes and stores the checksum over the whole buffer.
    pub fn fill_checksum(&mut self) {
        let b = self.buffer.as_mut();
        write_u16(b, f::CHECKSUM, 0);
        let c = checksum::checksum(b);
        write_u16(b, f::CHECKSUM, c);
    }
    /// Mutable data after the header.
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_LEN..]
    }
}

/// An owned ICMP message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Icmpv4Repr {
    /// Echo request (ping).
    EchoRequest {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq_no: u16,
        /// Bytes of data after the header.
        data_len: usize,
    },
    /// Echo reply.
    EchoReply {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq_no: u16,
        /// Bytes of data after the header.
        data_len: usize,
    },
    /// Any other message, kept raw.
    Other {
        /// Message type.
        msg_type: u8,
        /// Message code.
        code: u8,
        /// The four bytes after the checksum.
        rest_of_header: u32,
        /// Bytes of data after the header.
        data_len: usize,
    },
}

impl Icmpv4Repr {
    /// Reads a checked message and verifies its checksum. Echo messages with a non-zero code are
    /// kept as [`Icmpv4Repr::Other`], so emit reproduces them exactly.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Icmpv4Repr> {
        p.check_len()?;
        if !p.verify_checksum() {
            return Err(Error::Checksum);
        }
        let data_len = p.data().len();
        Ok(match (p.msg_type(), p.code()) {
            (TYPE_ECHO_REQUEST, 0) => Icmpv4Repr::EchoRequest {
                ident: p.echo_ident(),
                seq_no: p.echo_seq_no(),
                data_len,
            },
            (TYPE_ECHO_REPLY, 0) => Icmpv4Repr::EchoReply {
                ident: p.echo_ident(),
                seq_no: p.echo_seq_no(),
                data_len,
            },
            (msg_type, code) => Icmpv4Repr::Other {
                msg_type,
                code,
                rest_of_header: p.rest_of_header(),
                data_len,
            },
        })
    }

    /// Bytes of data after the header.
    pub fn data_len(&self) -> usize {
        match *self {
            Icmpv4Repr::EchoRequest { data_len, .. }
            | Icmpv4Repr::EchoReply { data_len, .. }
            | Icmpv4Repr::Other { data_len, .. } => data_len,
        }
    }

    /// Header plus data.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.data_len()
    }

    /// Writes the header into `buf` (at least `buffer_len()` bytes, data already in place at
    /// offset 8) and computes the checksum over `buffer_len()` bytes.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len();
        if buf.len() < len {
            return Err(Error::Truncated);
        }
        let buf = &mut buf[..len];
        match *self {
            Icmpv4Repr::EchoRequest { ident, seq_no, .. } | Icmpv4Repr::EchoReply { ident, seq_no, .. } => {
                let is_request = matches!(self, Icmpv4Repr::EchoRequest { .. });
                buf[f::TYPE] = if is_request { TYPE_ECHO_REQUEST } else { TYPE_ECHO_REPLY };
                buf[f::CODE] = 0;
                write_u16(buf, f::IDENT, ident);
                write_u16(buf, f::SEQ, seq_no);
            }
            Icmpv4Repr::Other {
                msg_type,
                code,
                rest_of_header,
                ..
            } => {
                buf[f::TYPE] = msg_type;
                buf[f::CODE] = code;
                write_u32(buf, f::REST, rest_of_header);
            }
        }
        Packet::new_unchecked(buf).fill_checksum();
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    // Echo request id 0x1234 seq 1 with data "abcd": sum 0800+1234+0001+6162+6364 = 0xdefb
    // -> checksum !0xdefb = 0x2104.
    const ECHO: [u8; 12] = [8, 0, 0x21, 0x04, 0x12, 0x34, 0x00, 0x01, b'a', b'b', b'c', b'd'];

    #[test]
    fn reads_and_writes_known_echo() {
        let p = Packet::new_checked(&ECHO[..]).unwrap();
        assert!(p.verify_checksum());
        let r = Icmpv4Repr::parse(&p).unwrap();
        assert_eq!(
            r,
            Icmpv4Repr::EchoRequest {
                ident: 0x1234,
                seq_no: 1,
                data_len: 4
            }
        );
        let mut out = [0u8; 12];
        out[8..].copy_from_slice(b"abcd");
        r.emit(&mut out).unwrap();
        assert_eq!(out, ECHO);
    }

    #[test]
    fn other_messages_and_errors() {
        // Destination unreachable, port unreachable, no data.
        let mut b = [3u8, 3, 0, 0, 0, 0, 0, 0];
        Packet::new_unchecked(&mut b[..]).fill_checksum();
        let r = Icmpv4Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
        assert_eq!(
            r,
            Icmpv4Repr::Other {
                msg_type: 3,
                code: 3,
                rest_of_header: 0,
                data_len: 0
            }
        );
        b[1] = 1;
        assert_eq!(
            Icmpv4Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap_err(),
            Error::Checksum
        );
        assert_eq!(Packet::new_checked(&b[..7]).unwrap_err(), Error::Truncated);
    }

    pub(crate) fn any_repr() -> impl Strategy<Value = Icmpv4Repr> {
        prop_oneof![
            (any::<u16>(), any::<u16>(), 0usize..100).prop_map(|(ident, seq_no, data_len)| Icmpv4Repr::EchoRequest {
                ident,
                seq_no,
                data_len
            }),
            (any::<u16>(), any::<u16>(), 0usize..100).prop_map(|(ident, seq_no, data_len)| Icmpv4Repr::EchoReply {
                ident,
                seq_no,
                data_len
            }),
            (any::<u8>(), 1u8..=255, any::<u32>(), 0usize..100).prop_map(
                |(msg_type, code, rest_of_header, data_len)| {
                    Icmpv4Repr::Other {
                        msg_type,
                        code,
                        rest_of_header,
                        data_len,
                    }
                }
            ),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(r in any_repr(), fill in any::<u8>()) {
            let mut buf = vec![fill; r.buffer_len()];
            r.emit(&mut buf).unwrap();
            prop_assert_eq!(Icmpv4Repr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(p) = Packet::new_checked(&data[..]) {
                let _ = (p.data().len(), p.rest_of_header(), p.verify_checksum());
                let _ = Icmpv4Repr::parse(&p);
            }
        }
    }
}
