//! IPv4 (RFC 791) headers, with DSCP and ECN exposed (RFC 2474, RFC 3168).
//!
//! Options are not modelled, but the view honours the IHL, so options are skipped correctly and
//! can be read raw with [`Packet::options`].

use crate::checksum;
use crate::field::{ipv4_at, read_u16, write_u16};
use crate::{Error, Result};
use core::fmt;
use std::net::Ipv4Addr;

/// An IP protocol number; unknown values are kept as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IpProtocol(pub u8);

impl IpProtocol {
    /// ICMP.
    pub const ICMP: IpProtocol = IpProtocol(1);
    /// TCP.
    pub const TCP: IpProtocol = IpProtocol(6);
    /// UDP.
    pub const UDP: IpProtocol = IpProtocol(17);
}

impl fmt::Display for IpProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::ICMP => f.write_str("icmp"),
            Self::TCP => f.write_str("tcp"),
            Self::UDP => f.write_str("udp"),
            IpProtocol(p) => write!(f, "ip-{p}"),
        }
    }
}

/// The two ECN bits (RFC 3168).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Ecn {
    /// 00: not ECN-capable transport.
    #[default]
    NotEct,
    /// 10: ECN-capable transport (0).
    Ect0,
    /// 01: ECN-capable transport (1).
    Ect1,
    /// 11: congestion experienced.
    Ce,
}

impl Ecn {
    /// Decodes the low two bits of the TOS byte.
    pub fn from_bits(b: u8) -> Ecn {
        match b & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    /// Encodes as the low two bits of the TOS byte.
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0,
            Ecn::Ect1 => 1,
            Ecn::Ect0 => 2,
            Ecn::Ce => 3,
        }
    }
}

/// Length of a header without options.
pub const MIN_HEADER_LEN: usize = 20;

mod f {
    use crate::field::Field;
    pub const VER_IHL: usize = 0;
    pub const TOS: usize = 1;
    pub const LENGTH: usize = 2;
    pub const IDENT: usize = 4;
    pub const FLG_OFF: usize = 6;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: usize = 10;
    pub const SRC: Field = 12..16;
    pub const DST: Field = 16..20;
}

/// A zero-copy view of an IPv4 packet.
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

    /// Checks that the buffer holds the header (options included) and that the total length
    /// field covers the header. A buffer longer than the total length (Ethernet padding) is fine;
    /// one shorter is [`Error::Truncated`] — use [`Packet::check_header_len`] for snapped captures.
    pub fn check_len(&self) -> Result<()> {
        self.check_header_len()?;
        if self.buffer.as_ref().len() < usize::from(self.total_len()) {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    /// Checks only that the header (with options) is present and consistent: enough for every
    /// accessor except [`Packet::payload`]'s full length, which is clamped to the buffer.
    pub fn check_header_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < MIN_HEADER_LEN {
            return Err(Error::Truncated);
        }
        if self.version() != 4 {
            return Err(Error::Malformed("ipv4 version"));
        }
        let hl = self.header_len();
        if hl < MIN_HEADER_LEN {
            return Err(Error::Malformed("ipv4 header length"));
        }
        if b.len() < hl {
            return Err(Error::Truncated);
        }
        if usize::from(self.total_len()) < hl {
            return Err(Error::Malformed("ipv4 total length"));
        }
        Ok(())
    }

    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// IP version (4 for a valid packet).
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[f::VER_IHL] >> 4
    }
    /// Header length in bytes (IHL x 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[f::VER_IHL] & 0x0f) * 4
    }
    /// Differentiated services code point (6 bits).
    pub fn dscp(&self) -> u8 {
        self.buffer.as_ref()[f::TOS] >> 2
    }
    /// ECN bits.
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits(self.buffer.as_ref()[f::TOS])
    }
    /// Total length field (header plus payload).
    pub fn total_len(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::LENGTH)
    }
    /// Identification field.
    pub fn ident(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::IDENT)
    }
    /// Don't-fragment flag.
    pub fn dont_frag(&self) -> bool {
        self.buffer.as_ref()[f::FLG_OFF] & 0x40 != 0
    }
    /// More-fragments flag.
    pub fn more_frags(&self) -> bool {
        self.buffer.as_ref()[f::FLG_OFF] & 0x20 != 0
    }
    /// Fragment offset in bytes.
    pub fn frag_offset(&self) -> u16 {
        (read_u16(self.buffer.as_ref(), f::FLG_OFF) & 0x1fff) * 8
    }
    /// True for any fragment (first, middle or last) of a fragmented datagram.
    pub fn is_fragment(&self) -> bool {
        self.more_frags() || self.frag_offset() != 0
    }
    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[f::TTL]
    }
    /// Protocol of the payload.
    pub fn protocol(&self) -> IpProtocol {
        IpProtocol(self.buffer.as_ref()[f::PROTOCOL])
    }
    /// Header checksum field.
    pub fn checksum(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::CHECKSUM)
    }
    /// Source address.
    pub fn src_addr(&self) -> Ipv4Addr {
        ipv4_at(self.buffer.as_ref(), f::SRC)
    }
    /// Destination address.
    pub fn dst_addr(&self) -> Ipv4Addr {
        ipv4_at(self.buffer.as_ref(), f::DST)
    }
    /// The raw option bytes between the fixed header and the payload.
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[MIN_HEADER_LEN..self.header_len()]
    }
    /// True when the header checksum verifies.
    pub fn verify_checksum(&self) -> bool {
        checksum::checksum(&self.buffer.as_ref()[..self.header_len()]) == 0
    }
    /// The payload: from the end of the header to the total length, clamped to the buffer
    /// (a snapped capture yields what was captured).
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = usize::from(self.total_len()).min(b.len());
        &b[self.header_len()..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the ECN bits, keeping DSCP, and fixes the header checksum (as a router marking CE does).
    pub fn set_ecn_and_fix_checksum(&mut self, ecn: Ecn) {
        let b = self.buffer.as_mut();
        b[f::TOS] = (b[f::TOS] & !3) | ecn.bits();
        self.fill_checksum();
    }
    /// Sets the DSCP (the upper six bits of the TOS byte), keeping ECN, and fixes the header
    /// checksum. Values above 63 keep their low six bits.
    pub fn set_dscp_and_fix_checksum(&mut self, dscp: u8) {
        let b = self.buffer.as_mut();
        b[f::TOS] = ((dscp & 0x3f) << 2) | (b[f::TOS] & 3);
        self.fill_checksum();
    }
    /// Sets the TTL (the checksum must be refreshed with [`Packet::fill_checksum`]).
    pub fn set_ttl(&mut self, ttl: u8) {
        self.buffer.as_mut()[f::TTL] = ttl;
    }
    /// Recomputes and stores the header checksum.
    pub fn fill_checksum(&mut self) {
        let hl = self.header_len();
        let b = self.buffer.as_mut();
        write_u16(b, f::CHECKSUM, 0);
        let c = checksum::checksum(&b[..hl]);
        write_u16(b, f::CHECKSUM, c);
    }
    /// Mutable payload (up to the total length, clamped to the buffer).
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len();
        let end = usize::from(self.total_len()).min(self.buffer.as_ref().len());
        &mut self.buffer.as_mut()[hl..end]
    }
}

/// An owned IPv4 header (options are not carried; a parsed packet's options are skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Repr {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Payload protocol.
    pub protocol: IpProtocol,
    /// Payload length in bytes (total length minus header).
    pub payload_len: u16,
    /// Differentiated services code point (6 bits).
    pub dscp: u8,
    /// ECN bits.
    pub ecn: Ecn,
    /// Identification.
    pub ident: u16,
    /// Don't-fragment flag.
    pub dont_frag: bool,
    /// Time to live.
    pub ttl: u8,
}

impl Ipv4Repr {
    /// Reads a checked, unfragmented packet and verifies its header checksum.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Ipv4Repr> {
        p.check_len()?;
        if !p.verify_checksum() {
            return Err(Error::Checksum);
        }
        if p.is_fragment() {
            return Err(Error::Unsupported("ipv4 fragments"));
        }
        Ok(Ipv4Repr {
            src: p.src_addr(),
            dst: p.dst_addr(),
            protocol: p.protocol(),
            payload_len: p.total_len() - p.header_len() as u16,
            dscp: p.dscp(),
            ecn: p.ecn(),
            ident: p.ident(),
            dont_frag: p.dont_frag(),
            ttl: p.ttl(),
        })
    }

    /// Length of the header this repr emits.
    pub fn header_len(&self) -> usize {
        MIN_HEADER_LEN
    }

    /// Total packet length (header plus payload).
    pub fn total_len(&self) -> usize {
        MIN_HEADER_LEN + usize::from(self.payload_len)
    }

    /// Writes the 20-byte header (with checksum) into the start of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        if buf.len() < MIN_HEADER_LEN {
            return Err(Error::Truncated);
        }
        let total = u16::try_from(self.total_len()).map_err(|_| Error::Malformed("ipv4 payload too long"))?;
        buf[f::VER_IHL] = 0x45;
        buf[f::TOS] = (self.dscp << 2) | self.ecn.bits();
        write_u16(buf, f::LENGTH, total);
        write_u16(buf, f::IDENT, self.ident);
        write_u16(buf, f::FLG_OFF, if self.dont_frag { 0x4000 } else { 0 });
        buf[f::TTL] = self.ttl;
        buf[f::PROTOCOL] = self.protocol.0;
        buf[f::SRC].copy_from_slice(&self.src.octets());
        buf[f::DST].copy_from_slice(&self.dst.octets());
        write_u16(buf, f::CHECKSUM, 0);
        let c = checksum::checksum(&buf[..MIN_HEADER_LEN]);
        write_u16(buf, f::CHECKSUM, c);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // A UDP datagram header from a real capture: 10.0.0.1 -> 10.0.0.2, TTL 64, id 0x1c46, DF,
    // total length 60, checksum 0x0a8e... recomputed below; DSCP 46 (EF) with ECT(0).
    fn known() -> Vec<u8> {
        let mut b = vec![
            0x45, 0xba, 0x00, 0x20, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        let c = checksum::checksum(&b);
        b[10..12].copy_from_slice(&c.to_be_bytes());
        b.extend_from_slice(&[0u8; 12]);
        b
    }

    #[test]
    fn reads_known_header() {
        let b = known();
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.dscp(), 46);
        assert_eq!(p.ecn(), Ecn::Ect0);
        assert!(p.dont_frag());
        assert_eq!(p.protocol(), IpProtocol::UDP);
        assert!(p.verify_checksum());
        let r = Ipv4Repr::parse(&p).unwrap();
        assert_eq!(r.payload_len, 12);
        assert_eq!(r.src, Ipv4Addr::new(10, 0, 0, 1));
        let mut out = vec![0u8; 32];
        r.emit(&mut out).unwrap();
        assert_eq!(&out[..20], &b[..20]);
    }

    #[test]
    fn options_are_skipped() {
        // IHL 6: one 4-byte option (NOP NOP NOP EOL) before an 8-byte payload.
        let mut b = vec![
            0x46, 0, 0, 32, 0, 0, 0, 0, 64, 17, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 1, 1, 0,
        ];
        b.extend_from_slice(&[9; 8]);
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        p.fill_checksum();
        assert_eq!(p.options(), &[1, 1, 1, 0]);
        assert_eq!(p.payload(), &[9; 8]);
        let r = Ipv4Repr::parse(&p).unwrap();
        assert_eq!(r.payload_len, 8);
    }

    #[test]
    fn rejects_bad_lengths_and_checksum() {
        let mut b = known();
        assert_eq!(Packet::new_checked(&b[..19]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&b[..25]).unwrap_err(), Error::Truncated);
        b[0] = 0x44;
        assert!(Packet::new_checked(&b[..]).is_err());
        b[0] = 0x45;
        b[8] ^= 1;
        assert_eq!(
            Ipv4Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap_err(),
            Error::Checksum
        );
    }

    #[test]
    fn ce_marking_keeps_checksum_valid() {
        let mut b = known();
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        p.set_ecn_and_fix_checksum(Ecn::Ce);
        assert_eq!(p.ecn(), Ecn::Ce);
        assert_eq!(p.dscp(), 46);
        assert!(p.verify_checksum());
    }

    pub(crate) fn any_repr() -> impl Strategy<Value = Ipv4Repr> {
        (
            any::<[u8; 4]>(),
            any::<[u8; 4]>(),
            any::<u8>(),
            0u16..1480,
            0u8..64,
            0u8..4,
            any::<u16>(),
            any::<bool>(),
            any::<u8>(),
        )
            .prop_map(|(s, d, proto, len, dscp, ecn, ident, df, ttl)| Ipv4Repr {
                src: s.into(),
                dst: d.into(),
                protocol: IpProtocol(proto),
                payload_len: len,
                dscp,
                ecn: Ecn::from_bits(ecn),
                ident,
                dont_frag: df,
                ttl,
            })
    }

    proptest! {
        #[test]
        fn round_trip(r in any_repr()) {
            let mut buf = vec![0u8; r.total_len()];
            r.emit(&mut buf).unwrap();
            let p = Packet::new_checked(&buf[..]).unwrap();
            prop_assert_eq!(Ipv4Repr::parse(&p).unwrap(), r);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(p) = Packet::new_checked(&data[..]) {
                let _ = (p.options().len(), p.payload().len(), p.verify_checksum(), p.frag_offset());
                let _ = Ipv4Repr::parse(&p);
            }
        }
    }
}
