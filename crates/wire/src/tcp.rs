//! TCP segments (RFC 9293) with ECN flags (RFC 3168) and the options Tandem's TCP uses:
//! MSS, window scale (RFC 7323), SACK-permitted and SACK blocks (RFC 2018), timestamps (RFC 7323).

use crate::checksum;
use crate::field::{read_u16, read_u32, write_u16, write_u32};
use crate::{Error, Result};
use core::fmt;
use std::net::Ipv4Addr;

/// The TCP flag bits (the low 9 bits of bytes 12-13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(pub u16);

impl Flags {
    /// No more data from sender.
    pub const FIN: Flags = Flags(0x001);
    /// Synchronize sequence numbers.
    pub const SYN: Flags = Flags(0x002);
    /// Reset the connection.
    pub const RST: Flags = Flags(0x004);
    /// Push function.
    pub const PSH: Flags = Flags(0x008);
    /// Acknowledgment field is significant.
    pub const ACK: Flags = Flags(0x010);
    /// Urgent pointer is significant.
    pub const URG: Flags = Flags(0x020);
    /// ECN echo.
    pub const ECE: Flags = Flags(0x040);
    /// Congestion window reduced.
    pub const CWR: Flags = Flags(0x080);
    /// ECN nonce (historic, RFC 3540).
    pub const NS: Flags = Flags(0x100);

    /// True when every bit of `other` is set.
    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    /// The union of two flag sets.
    pub fn union(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
    /// True when no flag is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl core::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        self.union(rhs)
    }
}

impl core::ops::BitOrAssign for Flags {
    fn bitor_assign(&mut self, rhs: Flags) {
        self.0 |= rhs.0;
    }
}

/// Prints the flags nfdump-style: eight positions `CEUAPRSF`, a `.` where a flag is clear.
impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const ORDER: [(Flags, char); 8] = [
            (Flags::CWR, 'C'),
            (Flags::ECE, 'E'),
            (Flags::URG, 'U'),
            (Flags::ACK, 'A'),
            (Flags::PSH, 'P'),
            (Flags::RST, 'R'),
            (Flags::SYN, 'S'),
            (Flags::FIN, 'F'),
        ];
        let mut s = [b'.'; 8];
        for (i, (flag, c)) in ORDER.iter().enumerate() {
            if self.contains(*flag) {
                s[i] = *c as u8;
            }
        }
        f.write_str(core::str::from_utf8(&s).map_err(|_| fmt::Error)?)
    }
}

/// Length of a header without options.
pub const MIN_HEADER_LEN: usize = 20;
/// Length of the longest header (data offset 15).
pub const MAX_HEADER_LEN: usize = 60;
/// Most SACK blocks one option can carry (40 option bytes: 2 + 4 x 8 = 34).
pub const MAX_SACK_BLOCKS: usize = 4;

/// One TCP option, as found in a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpOption<'a> {
    /// Kind 0: end of the option list.
    EndOfList,
    /// Kind 1: padding.
    NoOp,
    /// Kind 2: maximum segment size.
    MaxSegmentSize(u16),
    /// Kind 3: window scale shift count.
    WindowScale(u8),
    /// Kind 4: SACK permitted.
    SackPermitted,
    /// Kind 5: SACK blocks (left edge, right edge), at most four.
    Sack([Option<(u32, u32)>; MAX_SACK_BLOCKS]),
    /// Kind 8: timestamps (TSval, TSecr).
    Timestamps(u32, u32),
    /// Any other kind, with its data.
    Unknown(u8, &'a [u8]),
}

/// Iterates over the options of a header; yields an error (and then stops) on a malformed one.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Options<'a> {
    type Item = Result<TcpOption<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let (&kind, after) = self.rest.split_first()?;
        match kind {
            0 => {
                self.rest = &[];
                Some(Ok(TcpOption::EndOfList))
            }
            1 => {
                self.rest = after;
                Some(Ok(TcpOption::NoOp))
            }
            _ => {
                let Some(&len) = after.first() else {
                    self.rest = &[];
                    return Some(Err(Error::Truncated));
                };
                let len = usize::from(len);
                if len < 2 || len > self.rest.len() {
                    self.rest = &[];
                    return Some(Err(if len < 2 {
                        Error::Malformed("tcp option length")
                    } else {
                        Error::Truncated
                    }));
                }
                let data = &self.rest[2..len];
                self.rest = &self.rest[len..];
                Some(decode_option(kind, data))
            }
        }
    }
}

fn decode_option(kind: u8, data: &[u8]) -> Result<TcpOption<'_>> {
    let bad = |what| Err(Error::Malformed(what));
    match kind {
        2 if data.len() == 2 => Ok(TcpOption::MaxSegmentSize(read_u16(data, 0))),
        2 => bad("tcp mss option length"),
        3 if data.len() == 1 => Ok(TcpOption::WindowScale(data[0])),
        3 => bad("tcp window scale option length"),
        4 if data.is_empty() => Ok(TcpOption::SackPermitted),
        4 => bad("tcp sack-permitted option length"),
        5 if !data.is_empty() && data.len().is_multiple_of(8) && data.len() / 8 <= MAX_SACK_BLOCKS => {
            let mut blocks = [None; MAX_SACK_BLOCKS];
            for (i, b) in data.chunks_exact(8).enumerate() {
                blocks[i] = Some((read_u32(b, 0), read_u32(b, 4)));
            }
            Ok(TcpOption::Sack(blocks))
        }
        5 => bad("tcp sack option length"),
        8 if data.len() == 8 => Ok(TcpOption::Timestamps(read_u32(data, 0), read_u32(data, 4))),
        8 => bad("tcp timestamp option length"),
        _ => Ok(TcpOption::Unknown(kind, data)),
    }
}

mod f {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const SEQ: usize = 4;
    pub const ACK: usize = 8;
    pub const OFF_FLAGS: usize = 12;
    pub const WINDOW: usize = 14;
    pub const CHECKSUM: usize = 16;
    pub const URGENT: usize = 18;
}

/// A zero-copy view of a TCP segment.
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
    /// Checks that the header, options included, is in the buffer and the data offset is sane.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < MIN_HEADER_LEN {
            return Err(Error::Truncated);
        }
        let hl = self.header_len();
        if hl < MIN_HEADER_LEN {
            return Err(Error::Malformed("tcp data offset"));
        }
        if len < hl {
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
    /// Sequence number.
    pub fn seq_number(&self) -> u32 {
        read_u32(self.buffer.as_ref(), f::SEQ)
    }
    /// Acknowledgment number.
    pub fn ack_number(&self) -> u32 {
        read_u32(self.buffer.as_ref(), f::ACK)
    }
    /// Header length in bytes (data offset x 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[f::OFF_FLAGS] >> 4) * 4
    }
    /// The nine flag bits.
    pub fn flags(&self) -> Flags {
        Flags(read_u16(self.buffer.as_ref(), f::OFF_FLAGS) & 0x01ff)
    }
    /// Window field (unscaled).
    pub fn window_len(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::WINDOW)
    }
    /// Checksum field.
    pub fn checksum(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::CHECKSUM)
    }
    /// Urgent pointer.
    pub fn urgent_at(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::URGENT)
    }
    /// The raw option bytes.
    pub fn options_raw(&self) -> &[u8] {
        &self.buffer.as_ref()[MIN_HEADER_LEN..self.header_len()]
    }
    /// Iterates over the options.
    pub fn options(&self) -> Options<'_> {
        Options {
            rest: self.options_raw(),
        }
    }
    /// The payload (everything after the header in the buffer).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
    /// True when the checksum verifies over the whole buffer with the IPv4 pseudo-header.
    pub fn verify_checksum(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        let b = self.buffer.as_ref();
        let Ok(len) = u16::try_from(b.len()) else { return false };
        checksum::finish(checksum::accumulate(checksum::pseudo_header(src, dst, 6, len), b)) == 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Recomputes and stores the checksum over the whole buffer.
    pub fn fill_checksum(&mut self, src: Ipv4Addr, dst: Ipv4Addr) -> Result<()> {
        let b = self.buffer.as_mut();
        let len = u16::try_from(b.len()).map_err(|_| Error::Malformed("tcp segment too long"))?;
        write_u16(b, f::CHECKSUM, 0);
        let c = checksum::finish(checksum::accumulate(checksum::pseudo_header(src, dst, 6, len), b));
        write_u16(b, f::CHECKSUM, c);
        Ok(())
    }
    /// Mutable payload.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len();
        &mut self.buffer.as_mut()[hl..]
    }
}

/// An owned TCP header with the options Tandem models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpRepr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number (meaningful when `flags` has ACK; kept as is otherwise).
    pub ack: u32,
    /// Flags.
    pub flags: Flags,
    /// Window field (unscaled).
    pub window: u16,
    /// Urgent pointer.
    pub urgent: u16,
    /// MSS option.
    pub mss: Option<u16>,
    /// Window scale option (shift count).
    pub window_scale: Option<u8>,
    /// SACK-permitted option.
    pub sack_permitted: bool,
    /// SACK blocks; emitted only if the first is `Some`.
    pub sack_blocks: [Option<(u32, u32)>; MAX_SACK_BLOCKS],
    /// Timestamps option (TSval, TSecr).
    pub timestamps: Option<(u32, u32)>,
    /// Payload length in bytes.
    pub payload_len: usize,
}

impl TcpRepr {
    /// Reads a checked segment, verifying its checksum with the given pseudo-header addresses.
    /// Unknown options are skipped; a malformed option is an error.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>, src: Ipv4Addr, dst: Ipv4Addr) -> Result<TcpRepr> {
        p.check_len()?;
        if !p.verify_checksum(src, dst) {
            return Err(Error::Checksum);
        }
        let mut r = TcpRepr {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            seq: p.seq_number(),
            ack: p.ack_number(),
            flags: p.flags(),
            window: p.window_len(),
            urgent: p.urgent_at(),
            payload_len: p.payload().len(),
            ..TcpRepr::default()
        };
        for opt in p.options() {
            match opt? {
                TcpOption::EndOfList | TcpOption::NoOp | TcpOption::Unknown(..) => {}
                TcpOption::MaxSegmentSize(m) => r.mss = Some(m),
                TcpOption::WindowScale(s) => r.window_scale = Some(s),
                TcpOption::SackPermitted => r.sack_permitted = true,
                TcpOption::Sack(b) => r.sack_blocks = b,
                TcpOption::Timestamps(v, e) => r.timestamps = Some((v, e)),
            }
        }
        Ok(r)
    }

    fn sack_count(&self) -> usize {
        self.sack_blocks.iter().take_while(|b| b.is_some()).count()
    }

    fn options_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.window_scale.is_some() {
            n += 4; // NOP + 3
        }
        if self.sack_permitted {
            n += 4; // NOP NOP + 2
        }
        if self.timestamps.is_some() {
            n += 12; // NOP NOP + 10
        }
        let sacks = self.sack_count();
        if sacks > 0 {
            n += 4 + 8 * sacks; // NOP NOP + 2 + blocks
        }
        n
    }

    /// Header length this repr emits (options padded to 32-bit words).
    pub fn header_len(&self) -> usize {
        MIN_HEADER_LEN + self.options_len().div_ceil(4) * 4
    }

    /// Header plus payload.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload_len
    }

    /// Writes the header into `buf` (exactly `buffer_len()` bytes, payload already in place after
    /// `header_len()`) and computes the checksum with the given pseudo-header addresses.
    pub fn emit(&self, buf: &mut [u8], src: Ipv4Addr, dst: Ipv4Addr) -> Result<()> {
        let hl = self.header_len();
        if hl > MAX_HEADER_LEN {
            return Err(Error::Malformed("tcp options exceed 40 bytes"));
        }
        if buf.len() != self.buffer_len() {
            return Err(Error::Truncated);
        }
        write_u16(buf, f::SRC_PORT, self.src_port);
        write_u16(buf, f::DST_PORT, self.dst_port);
        write_u32(buf, f::SEQ, self.seq);
        write_u32(buf, f::ACK, self.ack);
        write_u16(buf, f::OFF_FLAGS, ((hl as u16 / 4) << 12) | (self.flags.0 & 0x01ff));
        write_u16(buf, f::WINDOW, self.window);
        write_u16(buf, f::URGENT, self.urgent);
        let mut at = MIN_HEADER_LEN;
        let mut put = |bytes: &[u8]| {
            buf[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        if let Some(m) = self.mss {
            let m = m.to_be_bytes();
            put(&[2, 4, m[0], m[1]]);
        }
        if let Some(s) = self.window_scale {
            put(&[1, 3, 3, s]);
        }
        if self.sack_permitted {
            put(&[1, 1, 4, 2]);
        }
        if let Some((v, e)) = self.timestamps {
            put(&[1, 1, 8, 10]);
            put(&v.to_be_bytes());
            put(&e.to_be_bytes());
        }
        let sacks = self.sack_count();
        if sacks > 0 {
            put(&[1, 1, 5, (2 + 8 * sacks) as u8]);
            for (l, r) in self.sack_blocks.iter().flatten() {
                put(&l.to_be_bytes());
                put(&r.to_be_bytes());
            }
        }
        buf[at..hl].fill(0);
        Packet::new_unchecked(buf).fill_checksum(src, dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SRC: Ipv4Addr = Ipv4Addr::new(192, 168, 1, 2);
    const DST: Ipv4Addr = Ipv4Addr::new(192, 168, 1, 3);

    // A Linux SYN: port 40000 -> 80, seq 1, ECE|CWR|SYN (ECN setup), window 64240,
    // options MSS 1460, SACK-permitted, timestamps, NOP, window scale 7 (Linux's order).
    fn linux_syn() -> Vec<u8> {
        let mut b = vec![
            0x9c, 0x40, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0xa0, 0xc2, 0xfa, 0xf0, 0, 0, 0, 0, //
            2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 9, 0, 0, 0, 0, 1, 3, 3, 7,
        ];
        Packet::new_unchecked(&mut b[..]).fill_checksum(SRC, DST).unwrap();
        b
    }

    #[test]
    fn reads_linux_syn() {
        let b = linux_syn();
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.flags(), Flags::SYN | Flags::ECE | Flags::CWR);
        assert_eq!(p.flags().to_string(), "CE....S.");
        assert_eq!(p.header_len(), 40);
        let r = TcpRepr::parse(&p, SRC, DST).unwrap();
        assert_eq!(r.mss, Some(1460));
        assert_eq!(r.window_scale, Some(7));
        assert!(r.sack_permitted);
        assert_eq!(r.timestamps, Some((9, 0)));
        assert_eq!(r.window, 64240);
        assert_eq!(r.payload_len, 0);
    }

    #[test]
    fn bad_checksum_and_options_are_errors() {
        let mut b = linux_syn();
        b[4] ^= 0xff;
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(TcpRepr::parse(&p, SRC, DST).unwrap_err(), Error::Checksum);
        let mut b = linux_syn();
        b[21] = 9; // MSS option claims 9 bytes
        Packet::new_unchecked(&mut b[..]).fill_checksum(SRC, DST).unwrap();
        assert!(TcpRepr::parse(&Packet::new_checked(&b[..]).unwrap(), SRC, DST).is_err());
        let mut b = linux_syn();
        b[12] = 0x40; // data offset 4 words < 5
        assert!(Packet::new_checked(&b[..]).is_err());
    }

    #[test]
    fn sack_blocks_round_trip() {
        let r = TcpRepr {
            src_port: 1,
            dst_port: 2,
            flags: Flags::ACK,
            sack_blocks: [Some((100, 200)), Some((300, 400)), Some((500, 600)), None],
            timestamps: Some((1, 2)),
            payload_len: 3,
            ..TcpRepr::default()
        };
        let mut buf = vec![0u8; r.buffer_len()];
        let hl = r.header_len();
        buf[hl..].copy_from_slice(b"abc");
        r.emit(&mut buf, SRC, DST).unwrap();
        let p = Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(p.payload(), b"abc");
        assert_eq!(TcpRepr::parse(&p, SRC, DST).unwrap(), r);
    }

    #[test]
    fn too_many_options_is_an_error_not_a_panic() {
        let r = TcpRepr {
            mss: Some(1),
            window_scale: Some(1),
            sack_permitted: true,
            timestamps: Some((1, 1)),
            sack_blocks: [Some((1, 2)); 4],
            ..TcpRepr::default()
        };
        let mut buf = vec![0u8; r.buffer_len()];
        assert!(r.emit(&mut buf, SRC, DST).is_err());
    }

    pub(crate) fn any_repr() -> impl Strategy<Value = TcpRepr> {
        let sacks = prop::collection::vec(any::<(u32, u32)>(), 0..=3);
        (
            (
                any::<u16>(),
                any::<u16>(),
                any::<u32>(),
                any::<u32>(),
                0u16..0x200,
                any::<u16>(),
                any::<u16>(),
            ),
            (
                any::<Option<u16>>(),
                any::<Option<u8>>(),
                any::<bool>(),
                any::<Option<(u32, u32)>>(),
            ),
            sacks,
            0usize..64,
        )
            .prop_map(|((sp, dp, seq, ack, fl, win, urg), (mss, ws, sp_ok, ts), sacks, pl)| {
                let mut sack_blocks = [None; MAX_SACK_BLOCKS];
                // Keep within 40 option bytes: with every other option, at most one block fits.
                let room = if ts.is_some() { 1 } else { 3 };
                for (i, s) in sacks.into_iter().take(room).enumerate() {
                    sack_blocks[i] = Some(s);
                }
                let mut r = TcpRepr {
                    src_port: sp,
                    dst_port: dp,
                    seq,
                    ack,
                    flags: Flags(fl),
                    window: win,
                    urgent: urg,
                    mss,
                    window_scale: ws,
                    sack_permitted: sp_ok,
                    sack_blocks,
                    timestamps: ts,
                    payload_len: pl,
                };
                if r.header_len() > MAX_HEADER_LEN {
                    r.sack_blocks = [None; MAX_SACK_BLOCKS];
                }
                r
            })
    }

    proptest! {
        #[test]
        fn round_trip(r in any_repr()) {
            let mut buf = vec![0xa5u8; r.buffer_len()];
            r.emit(&mut buf, SRC, DST).unwrap();
            let p = Packet::new_checked(&buf[..]).unwrap();
            prop_assert_eq!(TcpRepr::parse(&p, SRC, DST).unwrap(), r);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(p) = Packet::new_checked(&data[..]) {
                let _ = (p.flags(), p.payload().len(), p.options().count(), p.verify_checksum(SRC, DST));
                let _ = TcpRepr::parse(&p, SRC, DST);
            }
        }
    }
}
