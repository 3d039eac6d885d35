//! UDP (RFC 768) over IPv4, with the optional checksum computed on emit and verified on parse.

use crate::checksum;
use crate::field::{read_u16, write_u16};
use crate::{Error, Result};
use std::net::Ipv4Addr;

/// Length of the UDP header.
pub const HEADER_LEN: usize = 8;

mod f {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const LENGTH: usize = 4;
    pub const CHECKSUM: usize = 6;
}

/// A zero-copy view of a UDP datagram.
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
    /// Checks that the header is present and the length field is at least 8 and fits the buffer.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let len = usize::from(self.len());
        if len < HEADER_LEN {
            return Err(Error::Malformed("udp length"));
        }
        if b.len() < len {
            return Err(Error::Truncated);
        }
        Ok(())
    }
    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// Source port.
    pub fn src_port(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::SRC_PORT)
    }
    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::DST_PORT)
    }
    /// Length field (header plus payload).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::LENGTH)
    }
    /// Checksum field (0 means the sender did not compute one).
    pub fn checksum(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::CHECKSUM)
    }
    /// The payload, up to the length field (trailing bytes such as Ethernet padding excluded).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..usize::from(self.len())]
    }
    /// True when the checksum is absent (zero) or verifies with the IPv4 pseudo-header.
    pub fn verify_checksum(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        if self.checksum() == 0 {
            return true;
        }
        let b = self.buffer.as_ref();
        let len = self.len();
        let Some(dgram) = b.get(..usize::from(len)) else {
            return false;
        };
        checksum::finish(checksum::accumulate(checksum::pseudo_header(src, dst, 17, len), dgram)) == 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Recomputes and stores the checksum over the datagram (length field bytes).
    pub fn fill_checksum(&mut self, src: Ipv4Addr, dst: Ipv4Addr) {
        let len = self.len();
        let b = self.buffer.as_mut();
        write_u16(b, f::CHECKSUM, 0);
        let end = usize::from(len).min(b.len());
        let c = checksum::finish(checksum::accumulate(
            checksum::pseudo_header(src, dst, 17, len),
            &b[..end],
        ));
        // A computed zero is sent as all ones (RFC 768): zero means "no checksum".
        write_u16(b, f::CHECKSUM, if c == 0 { 0xffff } else { c });
    }
    /// Mutable payload, up to the length field.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let len = usize::from(self.len());
        &mut self.buffer.as_mut()[HEADER_LEN..len]
    }
}

/// An owned UDP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct UdpRepr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Payload length in bytes.
    pub payload_len: u16,
}

impl UdpRepr {
    /// Reads a checked datagram and verifies its checksum (when present).
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>, src: Ipv4Addr, dst: Ipv4Addr) -> Result<UdpRepr> {
        p.check_len()?;
        if !p.verify_checksum(src, dst) {
            return Err(Error::Checksum);
        }
        Ok(UdpRepr {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            payload_len: p.len() - HEADER_LEN as u16,
        })
    }

    /// Header plus payload.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + usize::from(self.payload_len)
    }

    /// Writes the header into `buf` (at least `buffer_len()` bytes, payload already in place at
    /// offset 8) and computes the checksum with the given pseudo-header addresses.
    pub fn emit(&self, buf: &mut [u8], src: Ipv4Addr, dst: Ipv4Addr) -> Result<()> {
        let len = u16::try_from(self.buffer_len()).map_err(|_| Error::Malformed("udp payload too long"))?;
        if buf.len() < usize::from(len) {
            return Err(Error::Truncated);
        }
        write_u16(buf, f::SRC_PORT, self.src_port);
        write_u16(buf, f::DST_PORT, self.dst_port);
        write_u16(buf, f::LENGTH, len);
        Packet::new_unchecked(&mut buf[..usize::from(len)]).fill_checksum(src, dst);
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    const SRC: Ipv4Addr = Ipv4Addr::new(192, 168, 0, 1);
    const DST: Ipv4Addr = Ipv4Addr::new(192, 168, 0, 199);

    // A DNS-ish datagram 1024 -> 53 carrying "hi"; checksum worked by hand:
    // pseudo c0a8+0001+c0a8+00c7+0011+000a = 0x18233; header 0400+0035+000a; data 6869
    // sum = 0x18233 + 0x043f + 0x6869 = 0x1eedb -> fold 0xeedc -> !0xeedc = 0x1123
    const DGRAM: [u8; 10] = [0x04, 0x00, 0x00, 0x35, 0x00, 0x0a, 0x11, 0x23, b'h', b'i'];

    #[test]
    fn reads_and_writes_known_datagram() {
        let p = Packet::new_checked(&DGRAM[..]).unwrap();
        assert!(p.verify_checksum(SRC, DST));
        let r = UdpRepr::parse(&p, SRC, DST).unwrap();
        assert_eq!(
            r,
            UdpRepr {
                src_port: 1024,
                dst_port: 53,
                payload_len: 2
            }
        );
        assert_eq!(p.payload(), b"hi");
        let mut out = [0u8; 10];
        out[8..].copy_from_slice(b"hi");
        r.emit(&mut out, SRC, DST).unwrap();
        assert_eq!(out, DGRAM);
    }

    #[test]
    fn zero_checksum_means_none_and_bad_checksum_is_rejected() {
        let mut b = DGRAM;
        b[6] = 0;
        b[7] = 0;
        assert!(UdpRepr::parse(&Packet::new_checked(&b[..]).unwrap(), SRC, DST).is_ok());
        b[7] = 1;
        assert_eq!(
            UdpRepr::parse(&Packet::new_checked(&b[..]).unwrap(), SRC, DST).unwrap_err(),
            Error::Checksum
        );
    }

    #[test]
    fn bad_lengths() {
        let mut b = DGRAM;
        b[5] = 7;
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::Malformed("udp length"));
        b[5] = 11;
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&b[..7]).unwrap_err(), Error::Truncated);
    }

    pub(crate) fn any_repr() -> impl Strategy<Value = UdpRepr> {
        (any::<u16>(), any::<u16>(), 0u16..1472).prop_map(|(s, d, l)| UdpRepr {
            src_port: s,
            dst_port: d,
            payload_len: l,
        })
    }

    proptest! {
        #[test]
        fn round_trip(r in any_repr(), fill in any::<u8>()) {
            let mut buf = vec![fill; r.buffer_len()];
            r.emit(&mut buf, SRC, DST).unwrap();
            let p = Packet::new_checked(&buf[..]).unwrap();
            prop_assert!(p.checksum() != 0);
            prop_assert_eq!(UdpRepr::parse(&p, SRC, DST).unwrap(), r);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..40)) {
            let p = Packet::new_unchecked(&data[..]);
            if p.check_len().is_ok() {
                let _ = (p.payload().len(), p.verify_checksum(SRC, DST));
                let _ = UdpRepr::parse(&p, SRC, DST);
            }
        }
    }
}
