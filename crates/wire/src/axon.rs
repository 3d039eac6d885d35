//! Axon source-routed Ethernet (Axon thesis §3.1.1): the header every frame carries between two
//! Axons, and the bodies of the messages Axons exchange.
//!
//! An Axon frame has **no Ethernet header**: the Axon header starts at the first byte on the wire,
//! in the place of the destination MAC, and the Axon MAC runs promiscuous (§3.1.1). What follows
//! the header depends on its type: a whole Ethernet frame from a host ([`PacketType::Ethernet`]), a
//! control message ([`control`]), a probe ([`probe`]) or an error report ([`error`]). The MAC
//! appends the FCS as usual. Layout of the header (bit offsets count from the first bit on the
//! wire, big-endian within each field):
//!
//! ```text
//! byte   0        1        2        3        4        5        6 ...
//!      +--------+--------+----+----+--------+--------+----+----+----+----+--
//!      |  type  |   header length  | forward count   | reverse count   |hop0| hop1 hop2 ...
//!      +--------+-----------+------+-----------------+-----------+-----+----+--
//!         8 bits      12 bits          12 bits            12 bits       4-bit hops
//! ```
//!
//! The fixed part is 44 bits (11 nibbles), so the first forward hop is the low nibble of the
//! **sixth byte** (§3.1.2: an Axon knows the output port once six bytes have arrived). The hops
//! follow as one nibble array: the forward path (next hop first), then the reverse path (most
//! recent hop first, so the reverse path read in order is the route back to the source). With an
//! even number of hops in all, one zero nibble pads the header to a byte (§3.1.1). The header
//! length (in bytes) is therefore `(11 + forward + reverse + 1) / 2`: 6 bytes for one hop. A hop
//! of `0xf` ([`CONTROL_PORT`]) means the control plane of the Axon that reads it.
//!
//! The type codes are even with the U/L bit set (0x02, 0x06, ...): were an Axon frame ever to
//! reach a host or a standard switch, its first byte reads as a unicast, locally administered
//! destination address, so a NIC filters it and a switch never floods it as multicast.
//!
//! Forwarding an Axon frame ([`Packet::advance`], [`AxonRepr::advance`]) pops the first forward
//! hop and pushes the input port as the first reverse hop: the hop total, and so the header
//! length, never changes along a path.

pub mod control;
pub mod error;
pub mod probe;

use crate::{Error, Result};

/// The hop value that names the control plane (§3.1.1).
pub const CONTROL_PORT: u8 = 0xf;
/// Nibbles in the fixed part of the header (type, header length, the two counts).
pub const FIXED_NIBBLES: usize = 11;
/// The shortest header: no hops (the pad nibble completes the sixth byte).
pub const MIN_HEADER_LEN: usize = 6;
/// The most hops a count field can hold, in each direction.
pub const MAX_HOPS: usize = 0xfff;
/// The longest header the 12-bit length field can hold.
pub const MAX_HEADER_LEN: usize = 0xfff;
/// The most hops (forward plus reverse) a header can hold.
pub const MAX_TOTAL_HOPS: usize = 2 * MAX_HEADER_LEN - FIXED_NIBBLES - 1;
/// Byte offset of the next forward hop (its low nibble): the sixth byte.
pub const NEXT_HOP_BYTE: usize = 5;
/// What [`Packet::advance`] reports (in [`Error::Malformed`]) when no forward hop is left.
pub const NO_FORWARD_HOP: &str = "axon: no forward hop left";
/// What [`Packet::advance`] reports (in [`Error::Malformed`]) when the reverse count is full.
pub const REVERSE_FULL: &str = "axon: reverse path full";

/// Header length in bytes for a path of `hops` hops in all (forward plus reverse).
pub fn header_len_for(hops: usize) -> usize {
    (FIXED_NIBBLES + hops).div_ceil(2)
}

/// What follows the Axon header; unknown codes are kept (and forwarded between Axons).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketType {
    /// 0x02: an encapsulated Ethernet frame from a host.
    Ethernet,
    /// 0x06: a control message between control planes ([`control`]).
    Control,
    /// 0x0a: a probe that Axons stamp on its way ([`probe`]).
    Probe,
    /// 0x0e: an error report built by a data plane ([`error`]).
    Error,
    /// Any other code.
    Unknown(u8),
}

impl PacketType {
    /// Decodes a type code.
    pub fn from_code(c: u8) -> PacketType {
        match c {
            0x02 => PacketType::Ethernet,
            0x06 => PacketType::Control,
            0x0a => PacketType::Probe,
            0x0e => PacketType::Error,
            c => PacketType::Unknown(c),
        }
    }
    /// The type code.
    pub fn code(self) -> u8 {
        match self {
            PacketType::Ethernet => 0x02,
            PacketType::Control => 0x06,
            PacketType::Probe => 0x0a,
            PacketType::Error => 0x0e,
            PacketType::Unknown(c) => c,
        }
    }
}

#[inline]
fn nibble(b: &[u8], i: usize) -> u8 {
    if i.is_multiple_of(2) {
        b[i / 2] >> 4
    } else {
        b[i / 2] & 0x0f
    }
}

#[inline]
fn set_nibble(b: &mut [u8], i: usize, v: u8) {
    let v = v & 0x0f;
    if i.is_multiple_of(2) {
        b[i / 2] = (b[i / 2] & 0x0f) | (v << 4);
    } else {
        b[i / 2] = (b[i / 2] & 0xf0) | v;
    }
}

/// A zero-copy view of an Axon frame: header, then payload.
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
    /// Checks that the fixed part is present, that the header length agrees with the two hop
    /// counts, and that the whole header is present.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < MIN_HEADER_LEN {
            return Err(Error::Truncated);
        }
        let hl = self.header_len();
        if hl != header_len_for(self.forward_count() + self.reverse_count()) {
            return Err(Error::Malformed("axon header length"));
        }
        if b.len() < hl {
            return Err(Error::Truncated);
        }
        Ok(())
    }
    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// The packet type.
    pub fn packet_type(&self) -> PacketType {
        PacketType::from_code(self.buffer.as_ref()[0])
    }
    /// Header length in bytes (the 12-bit field).
    pub fn header_len(&self) -> usize {
        let b = self.buffer.as_ref();
        (usize::from(b[1]) << 4) | usize::from(b[2] >> 4)
    }
    /// Forward hops left.
    pub fn forward_count(&self) -> usize {
        let b = self.buffer.as_ref();
        (usize::from(b[2] & 0x0f) << 8) | usize::from(b[3])
    }
    /// Hops already taken (the length of the reverse path).
    pub fn reverse_count(&self) -> usize {
        let b = self.buffer.as_ref();
        (usize::from(b[4]) << 4) | usize::from(b[5] >> 4)
    }
    /// The next forward hop (the low nibble of the sixth byte), if any hop is left.
    pub fn next_hop(&self) -> Option<u8> {
        self.forward_hop(0)
    }
    /// Forward hop `i` (0 = next), or `None` past the forward path.
    pub fn forward_hop(&self, i: usize) -> Option<u8> {
        (i < self.forward_count()).then(|| nibble(self.buffer.as_ref(), FIXED_NIBBLES + i))
    }
    /// Reverse hop `i` (0 = the most recent input port), or `None` past the reverse path.
    pub fn reverse_hop(&self, i: usize) -> Option<u8> {
        (i < self.reverse_count()).then(|| nibble(self.buffer.as_ref(), FIXED_NIBBLES + self.forward_count() + i))
    }
    /// The forward path, next hop first.
    pub fn forward_path(&self) -> Vec<u8> {
        (0..self.forward_count()).filter_map(|i| self.forward_hop(i)).collect()
    }
    /// The reverse path, most recent hop first: the route back to the source.
    pub fn reverse_path(&self) -> Vec<u8> {
        (0..self.reverse_count()).filter_map(|i| self.reverse_hop(i)).collect()
    }
    /// Whatever follows the header.
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        &b[self.header_len().min(b.len())..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the packet type.
    pub fn set_packet_type(&mut self, t: PacketType) {
        self.buffer.as_mut()[0] = t.code();
    }
    /// Forwards the frame one hop, in place: pops the next forward hop and pushes `in_port` (the
    /// port the frame came in on) as the first reverse hop, updating both counts. The header
    /// keeps its length. Returns the popped hop; fails, changing nothing, when no forward hop is
    /// left ([`NO_FORWARD_HOP`]) or the reverse count is at its maximum ([`REVERSE_FULL`]).
    pub fn advance(&mut self, in_port: u8) -> Result<u8> {
        let fwd = self.forward_count();
        let hop = self.next_hop().ok_or(Error::Malformed(NO_FORWARD_HOP))?;
        if self.reverse_count() >= MAX_HOPS {
            return Err(Error::Malformed(REVERSE_FULL));
        }
        let rev = self.reverse_count() + 1;
        let b = self.buffer.as_mut();
        for i in 0..fwd - 1 {
            let n = nibble(b, FIXED_NIBBLES + i + 1);
            set_nibble(b, FIXED_NIBBLES + i, n);
        }
        set_nibble(b, FIXED_NIBBLES + fwd - 1, in_port);
        let fwd = fwd - 1;
        b[2] = (b[2] & 0xf0) | ((fwd >> 8) as u8 & 0x0f);
        b[3] = fwd as u8;
        b[4] = (rev >> 4) as u8;
        b[5] = (b[5] & 0x0f) | (((rev & 0x0f) as u8) << 4);
        Ok(hop)
    }
    /// Whatever follows the header, mutable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len();
        let b = self.buffer.as_mut();
        let at = hl.min(b.len());
        &mut b[at..]
    }
}

/// An owned Axon header.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AxonRepr {
    /// What follows the header.
    pub packet_type: PacketType,
    /// Forward path, next hop first (each hop 0..=15).
    pub forward: Vec<u8>,
    /// Reverse path, most recent hop first (each hop 0..=15).
    pub reverse: Vec<u8>,
}

impl AxonRepr {
    /// A fresh header that follows `path` (next hop first) with an empty reverse path. Fails
    /// when a hop is above 15 or the path is too long for the header.
    pub fn from_path(packet_type: PacketType, path: &[u8]) -> Result<AxonRepr> {
        let r = AxonRepr {
            packet_type,
            forward: path.to_vec(),
            reverse: Vec::new(),
        };
        r.check()?;
        Ok(r)
    }

    /// Reads the header of an Axon frame. The pad nibble, if any, is ignored.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<AxonRepr> {
        p.check_len()?;
        Ok(AxonRepr {
            packet_type: p.packet_type(),
            forward: p.forward_path(),
            reverse: p.reverse_path(),
        })
    }

    fn check(&self) -> Result<()> {
        if self.forward.len() > MAX_HOPS || self.reverse.len() > MAX_HOPS || self.hops() > MAX_TOTAL_HOPS {
            return Err(Error::Malformed("axon path too long"));
        }
        if self.forward.iter().chain(&self.reverse).any(|&h| h > 0x0f) {
            return Err(Error::Malformed("axon hop above 15"));
        }
        Ok(())
    }

    /// Hops in all (forward plus reverse).
    pub fn hops(&self) -> usize {
        self.forward.len() + self.reverse.len()
    }

    /// Header length in bytes (also what [`AxonRepr::emit`] writes).
    pub fn header_len(&self) -> usize {
        header_len_for(self.hops())
    }

    /// Bytes this repr emits (the header only).
    pub fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// The next forward hop, if any.
    pub fn next_hop(&self) -> Option<u8> {
        self.forward.first().copied()
    }

    /// Pops the next forward hop.
    pub fn pop_forward(&mut self) -> Option<u8> {
        (!self.forward.is_empty()).then(|| self.forward.remove(0))
    }

    /// Pushes `port` as the first (most recent) reverse hop.
    pub fn push_reverse(&mut self, port: u8) {
        self.reverse.insert(0, port & 0x0f);
    }

    /// One hop of forwarding: pops the next forward hop and pushes `in_port` on the reverse path.
    /// Fails, changing nothing, as [`Packet::advance`] does.
    pub fn advance(&mut self, in_port: u8) -> Result<u8> {
        if self.forward.is_empty() {
            return Err(Error::Malformed(NO_FORWARD_HOP));
        }
        if self.reverse.len() >= MAX_HOPS {
            return Err(Error::Malformed(REVERSE_FULL));
        }
        let hop = self.forward.remove(0);
        self.push_reverse(in_port);
        Ok(hop)
    }

    /// The route back to the source, as a forward path for a reply from here: the reverse path
    /// read in order.
    pub fn reply_route(&self) -> Vec<u8> {
        self.reverse.clone()
    }

    /// A header of type `packet_type` that follows [`AxonRepr::reply_route`].
    pub fn reply(&self, packet_type: PacketType) -> AxonRepr {
        AxonRepr {
            packet_type,
            forward: self.reply_route(),
            reverse: Vec::new(),
        }
    }

    /// Writes the header into the start of `buf` (the pad nibble is zero).
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        self.check()?;
        let hl = self.header_len();
        if buf.len() < hl {
            return Err(Error::Truncated);
        }
        let b = &mut buf[..hl];
        b.fill(0);
        let (fwd, rev) = (self.forward.len(), self.reverse.len());
        b[0] = self.packet_type.code();
        b[1] = (hl >> 4) as u8;
        b[2] = (((hl & 0x0f) as u8) << 4) | ((fwd >> 8) as u8 & 0x0f);
        b[3] = fwd as u8;
        b[4] = (rev >> 4) as u8;
        b[5] = ((rev & 0x0f) as u8) << 4;
        for (i, &h) in self.forward.iter().chain(&self.reverse).enumerate() {
            set_nibble(b, FIXED_NIBBLES + i, h);
        }
        Ok(())
    }

    /// A whole frame: this header followed by `payload`.
    pub fn to_frame(&self, payload: &[u8]) -> Result<Vec<u8>> {
        let mut out = vec![0u8; self.header_len() + payload.len()];
        self.emit(&mut out)?;
        out[self.header_len()..].copy_from_slice(payload);
        Ok(out)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_hop_header_is_six_bytes_with_the_hop_in_the_sixth() {
        let r = AxonRepr::from_path(PacketType::Ethernet, &[3]).unwrap();
        let mut b = [0xaau8; 6];
        r.emit(&mut b).unwrap();
        assert_eq!(b, [0x02, 0x00, 0x60, 0x01, 0x00, 0x03]);
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.next_hop(), Some(3));
        assert_eq!(b[NEXT_HOP_BYTE] & 0x0f, 3);
        assert_eq!((p.header_len(), p.forward_count(), p.reverse_count()), (6, 1, 0));
        // Forwarded in from port 1: no forward hop left, reverse path [1].
        let mut b2 = b;
        assert_eq!(Packet::new_unchecked(&mut b2[..]).advance(1), Ok(3));
        assert_eq!(b2, [0x02, 0x00, 0x60, 0x00, 0x00, 0x11]);
        assert_eq!(
            Packet::new_unchecked(&mut b2[..]).advance(2),
            Err(Error::Malformed(NO_FORWARD_HOP))
        );
        assert_eq!(b2, [0x02, 0x00, 0x60, 0x00, 0x00, 0x11]);
    }

    #[test]
    fn three_hops_and_even_padding() {
        let r = AxonRepr::from_path(PacketType::Control, &[2, 5, CONTROL_PORT]).unwrap();
        let mut b = vec![0u8; r.buffer_len()];
        r.emit(&mut b).unwrap();
        assert_eq!(b, [0x06, 0x00, 0x70, 0x03, 0x00, 0x02, 0x5f]);
        // Two hops: even, one pad nibble.
        let r = AxonRepr {
            packet_type: PacketType::Probe,
            forward: vec![0xa],
            reverse: vec![0x4],
        };
        let mut b = vec![0u8; r.buffer_len()];
        r.emit(&mut b).unwrap();
        assert_eq!(b, [0x0a, 0x00, 0x70, 0x01, 0x00, 0x1a, 0x40]);
        assert_eq!(AxonRepr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap(), r);
    }

    #[test]
    fn hop_by_hop_and_reply_route() {
        let mut r = AxonRepr::from_path(PacketType::Ethernet, &[1, 2, 3, CONTROL_PORT]).unwrap();
        let mut wire = r.to_frame(b"payload").unwrap();
        for in_port in [7u8, 8, 9, 10] {
            let hop = Packet::new_checked(&mut wire[..]).unwrap().advance(in_port);
            assert_eq!(hop, r.advance(in_port));
            assert_eq!(AxonRepr::parse(&Packet::new_checked(&wire[..]).unwrap()).unwrap(), r);
            assert_eq!(Packet::new_checked(&wire[..]).unwrap().payload(), b"payload");
        }
        assert_eq!(r.forward, Vec::<u8>::new());
        assert_eq!(r.reply_route(), vec![10, 9, 8, 7]);
        assert_eq!(r.reply(PacketType::Control).forward, vec![10, 9, 8, 7]);
    }

    #[test]
    fn errors() {
        assert_eq!(
            Packet::new_checked(&[0x02u8, 0, 0x60, 1, 0][..]).unwrap_err(),
            Error::Truncated
        );
        // Length field 7 but one hop needs 6.
        assert!(matches!(
            Packet::new_checked(&[0x02u8, 0, 0x70, 1, 0, 3, 0][..]),
            Err(Error::Malformed(_))
        ));
        // Three hops claimed, seven bytes needed, six present.
        assert_eq!(
            Packet::new_checked(&[0x06u8, 0, 0x70, 3, 0, 2][..]).unwrap_err(),
            Error::Truncated
        );
        assert!(AxonRepr::from_path(PacketType::Ethernet, &[16]).is_err());
        assert!(AxonRepr::from_path(PacketType::Ethernet, &vec![1; MAX_HOPS + 1]).is_err());
        let mut short = [0u8; 5];
        assert_eq!(
            AxonRepr::from_path(PacketType::Ethernet, &[1])
                .unwrap()
                .emit(&mut short),
            Err(Error::Truncated)
        );
    }

    #[test]
    fn longest_header_fits_the_length_field() {
        let r = AxonRepr {
            packet_type: PacketType::Ethernet,
            forward: vec![1; MAX_HOPS],
            reverse: vec![2; MAX_TOTAL_HOPS - MAX_HOPS],
        };
        assert_eq!(r.header_len(), MAX_HEADER_LEN);
        let mut b = vec![0u8; r.buffer_len()];
        r.emit(&mut b).unwrap();
        assert_eq!(AxonRepr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap(), r);
        let mut longer = r.clone();
        longer.reverse.push(3);
        assert!(longer.emit(&mut vec![0u8; 5000]).is_err());
        // A full reverse count refuses another hop, in the view and in the repr.
        let mut full = AxonRepr {
            packet_type: PacketType::Ethernet,
            forward: vec![1],
            reverse: vec![2; MAX_HOPS],
        };
        let mut b = full.to_frame(&[]).unwrap();
        assert_eq!(
            Packet::new_checked(&mut b[..]).unwrap().advance(0),
            Err(Error::Malformed(REVERSE_FULL))
        );
        assert_eq!(full.advance(0), Err(Error::Malformed(REVERSE_FULL)));
    }

    pub(crate) fn any_repr() -> impl Strategy<Value = AxonRepr> {
        (
            any::<u8>(),
            proptest::collection::vec(0u8..16, 0..40),
            proptest::collection::vec(0u8..16, 0..40),
        )
            .prop_map(|(t, forward, reverse)| AxonRepr {
                packet_type: PacketType::from_code(t),
                forward,
                reverse,
            })
    }

    proptest! {
        #[test]
        fn round_trip(r in any_repr(), payload in proptest::collection::vec(any::<u8>(), 0..32)) {
            let frame = r.to_frame(&payload).unwrap();
            let p = Packet::new_checked(&frame[..]).unwrap();
            prop_assert_eq!(AxonRepr::parse(&p).unwrap(), r.clone());
            prop_assert_eq!(p.payload(), &payload[..]);
            prop_assert_eq!(p.next_hop(), r.next_hop());
            if let Some(h) = r.next_hop() {
                prop_assert_eq!(frame[NEXT_HOP_BYTE] & 0x0f, h);
            }
        }

        #[test]
        fn advance_in_place_matches_repr(r in any_repr(), in_port in 0u8..16) {
            let mut frame = r.to_frame(&[0xee; 3]).unwrap();
            let mut r2 = r.clone();
            let hop = Packet::new_checked(&mut frame[..]).unwrap().advance(in_port);
            prop_assert_eq!(hop, r2.advance(in_port));
            prop_assert_eq!(frame.len(), r.header_len() + 3);
            prop_assert_eq!(AxonRepr::parse(&Packet::new_checked(&frame[..]).unwrap()).unwrap(), r2);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..64), i in 0usize..80, port in any::<u8>()) {
            let mut data = data;
            if let Ok(mut p) = Packet::new_checked(&mut data[..]) {
                let _ = (p.packet_type(), p.forward_hop(i), p.reverse_hop(i), p.payload().len());
                let _ = AxonRepr::parse(&p);
                let _ = p.advance(port);
                let _ = p.payload_mut();
                prop_assert!(Packet::new_checked(&data[..]).is_ok());
            }
        }
    }
}
