//! Ethernet II frames with optional 802.1Q VLAN tags.
//!
//! Layout: destination (6), source (6), then either the EtherType (2) or one or two VLAN tags
//! (TPID 0x8100 / 0x88a8 / 0x9100, then the 16-bit TCI) before the EtherType. The view walks up to
//! two stacked tags so that flow tools see through Q-in-Q; [`EthernetRepr`] models one 802.1Q tag.

use crate::field::{read_u16, write_u16};
use crate::{Error, Result};
use core::fmt;
use core::str::FromStr;

/// A 48-bit MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// ff:ff:ff:ff:ff:ff.
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);
    /// The all-zero address.
    pub const ZERO: MacAddr = MacAddr([0; 6]);

    /// Reads an address from the first six bytes of `b` (which must have them).
    pub fn from_bytes(b: &[u8]) -> MacAddr {
        let mut a = [0u8; 6];
        a.copy_from_slice(&b[..6]);
        MacAddr(a)
    }
    /// True for group (multicast and broadcast) addresses: the I/G bit is set.
    pub fn is_multicast(&self) -> bool {
        self.0[0] & 0x01 != 0
    }
    /// True for ff:ff:ff:ff:ff:ff.
    pub fn is_broadcast(&self) -> bool {
        *self == Self::BROADCAST
    }
    /// True when the U/L bit says the address is locally administered.
    pub fn is_local(&self) -> bool {
        self.0[0] & 0x02 != 0
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

impl FromStr for MacAddr {
    type Err = Error;
    fn from_str(s: &str) -> Result<MacAddr> {
        let mut out = [0u8; 6];
        let mut parts = s.split([':', '-']);
        for byte in out.iter_mut() {
            let p = parts.next().ok_or(Error::Malformed("mac address"))?;
            if p.len() != 2 {
                return Err(Error::Malformed("mac address"));
            }
            *byte = u8::from_str_radix(p, 16).map_err(|_| Error::Malformed("mac address"))?;
        }
        if parts.next().is_some() {
            return Err(Error::Malformed("mac address"));
        }
        Ok(MacAddr(out))
    }
}

/// An EtherType value; unknown values are kept as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EtherType(pub u16);

impl EtherType {
    /// IPv4.
    pub const IPV4: EtherType = EtherType(0x0800);
    /// ARP.
    pub const ARP: EtherType = EtherType(0x0806);
    /// IEEE 802.1Q customer VLAN tag.
    pub const VLAN: EtherType = EtherType(0x8100);
    /// IEEE 802.1ad service VLAN tag (Q-in-Q).
    pub const QINQ: EtherType = EtherType(0x88a8);
    /// Pre-standard Q-in-Q tag still seen in traces.
    pub const QINQ_OLD: EtherType = EtherType(0x9100);
    /// IPv6.
    pub const IPV6: EtherType = EtherType(0x86dd);
    /// IEEE 802.3 MAC Control (PAUSE frames).
    pub const MAC_CONTROL: EtherType = EtherType(0x8808);

    /// True for the TPIDs that introduce a VLAN tag.
    pub fn is_vlan_tpid(self) -> bool {
        matches!(self, Self::VLAN | Self::QINQ | Self::QINQ_OLD)
    }
}

impl fmt::Display for EtherType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::IPV4 => f.write_str("IPv4"),
            Self::ARP => f.write_str("ARP"),
            Self::VLAN => f.write_str("802.1Q"),
            Self::QINQ | Self::QINQ_OLD => f.write_str("802.1ad"),
            Self::IPV6 => f.write_str("IPv6"),
            Self::MAC_CONTROL => f.write_str("MAC-control"),
            EtherType(v) => write!(f, "0x{v:04x}"),
        }
    }
}

/// The fields of an 802.1Q tag control information word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct VlanTag {
    /// Priority code point (3 bits).
    pub pcp: u8,
    /// Drop-eligible indicator.
    pub dei: bool,
    /// VLAN identifier (12 bits).
    pub vid: u16,
}

impl VlanTag {
    /// Decodes a 16-bit TCI.
    pub fn from_tci(tci: u16) -> VlanTag {
        VlanTag {
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            vid: tci & 0x0fff,
        }
    }
    /// Encodes the 16-bit TCI.
    pub fn tci(&self) -> u16 {
        (u16::from(self.pcp & 7) << 13) | (u16::from(self.dei) << 12) | (self.vid & 0x0fff)
    }
}

/// Length of an untagged Ethernet II header.
pub const HEADER_LEN: usize = 14;
/// Length of one VLAN tag.
pub const VLAN_TAG_LEN: usize = 4;
/// Most VLAN tags the view walks through.
pub const MAX_VLAN_TAGS: usize = 2;

/// A zero-copy view of an Ethernet II frame.
#[derive(Debug, Clone)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// Wraps a buffer without checking it; call [`Frame::check_len`] before reading past the
    /// untagged header.
    pub fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    /// Wraps a buffer and checks that every accessor is safe to call.
    pub fn new_checked(buffer: T) -> Result<Frame<T>> {
        let f = Frame::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    /// Checks that the buffer holds the whole header, VLAN tags included.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let mut at = 12;
        for _ in 0..MAX_VLAN_TAGS {
            if !EtherType(read_u16(b, at)).is_vlan_tpid() {
                return Ok(());
            }
            at += VLAN_TAG_LEN;
            if b.len() < at + 2 {
                return Err(Error::Truncated);
            }
        }
        Ok(())
    }

    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Destination address.
    pub fn dst_addr(&self) -> MacAddr {
        MacAddr::from_bytes(&self.buffer.as_ref()[0..6])
    }

    /// Source address.
    pub fn src_addr(&self) -> MacAddr {
        MacAddr::from_bytes(&self.buffer.as_ref()[6..12])
    }

    /// Number of VLAN tags before the EtherType (0 to [`MAX_VLAN_TAGS`]).
    pub fn vlan_count(&self) -> usize {
        let b = self.buffer.as_ref();
        let mut n = 0;
        while n < MAX_VLAN_TAGS && EtherType(read_u16(b, 12 + n * VLAN_TAG_LEN)).is_vlan_tpid() {
            n += 1;
        }
        n
    }

    /// The outermost VLAN tag, if the frame has one.
    pub fn vlan(&self) -> Option<VlanTag> {
        (self.vlan_count() > 0).then(|| VlanTag::from_tci(read_u16(self.buffer.as_ref(), 14)))
    }

    /// The TPID of the outermost tag, or the EtherType when untagged (the bytes at offset 12).
    pub fn outer_ethertype(&self) -> EtherType {
        EtherType(read_u16(self.buffer.as_ref(), 12))
    }

    /// The EtherType of the payload, after any VLAN tags.
    pub fn ethertype(&self) -> EtherType {
        EtherType(read_u16(self.buffer.as_ref(), 12 + self.vlan_count() * VLAN_TAG_LEN))
    }

    /// Header length including VLAN tags.
    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.vlan_count() * VLAN_TAG_LEN
    }

    /// The payload after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    /// Sets the destination address.
    pub fn set_dst_addr(&mut self, a: MacAddr) {
        self.buffer.as_mut()[0..6].copy_from_slice(&a.0);
    }
    /// Sets the source address.
    pub fn set_src_addr(&mut self, a: MacAddr) {
        self.buffer.as_mut()[6..12].copy_from_slice(&a.0);
    }
    /// Writes the EtherType at offset 12 (no tag) .
    pub fn set_outer_ethertype(&mut self, t: EtherType) {
        write_u16(self.buffer.as_mut(), 12, t.0);
    }
    /// Mutable payload after the header.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let at = self.header_len();
        &mut self.buffer.as_mut()[at..]
    }
}

/// An owned Ethernet II header with at most one 802.1Q tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EthernetRepr {
    /// Destination address.
    pub dst: MacAddr,
    /// Source address.
    pub src: MacAddr,
    /// The 802.1Q tag (TPID 0x8100), if any.
    pub vlan: Option<VlanTag>,
    /// EtherType of the payload.
    pub ethertype: EtherType,
}

impl EthernetRepr {
    /// Reads the header from a checked view. Q-in-Q frames are [`Error::Unsupported`] here (the
    /// view still reads them).
    pub fn parse<T: AsRef<[u8]>>(frame: &Frame<T>) -> Result<EthernetRepr> {
        frame.check_len()?;
        let vlan = match frame.vlan_count() {
            0 => None,
            1 if frame.outer_ethertype() == EtherType::VLAN => frame.vlan(),
            _ => return Err(Error::Unsupported("stacked or 802.1ad VLAN tags")),
        };
        Ok(EthernetRepr {
            dst: frame.dst_addr(),
            src: frame.src_addr(),
            vlan,
            ethertype: frame.ethertype(),
        })
    }

    /// Header length this repr emits.
    pub fn header_len(&self) -> usize {
        HEADER_LEN + if self.vlan.is_some() { VLAN_TAG_LEN } else { 0 }
    }

    /// Writes the header into the start of `buf` (which must be at least `header_len()` long)
    /// and returns the header length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let len = self.header_len();
        if buf.len() < len {
            return Err(Error::Truncated);
        }
        buf[0..6].copy_from_slice(&self.dst.0);
        buf[6..12].copy_from_slice(&self.src.0);
        match self.vlan {
            Some(tag) => {
                write_u16(buf, 12, EtherType::VLAN.0);
                write_u16(buf, 14, tag.tci());
                write_u16(buf, 16, self.ethertype.0);
            }
            None => write_u16(buf, 12, self.ethertype.0),
        }
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // A tagged frame: dst, src, 8100, PCP 5 / DEI 0 / VID 100, then IPv4.
    const TAGGED: [u8; 20] = [
        0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x81, 0x00, 0xa0, 0x64, 0x08, 0x00, 0xde, 0xad,
    ];

    #[test]
    fn reads_known_tagged_frame() {
        let f = Frame::new_checked(&TAGGED[..]).unwrap();
        assert_eq!(f.dst_addr().to_string(), "02:00:00:00:00:02");
        assert_eq!(f.src_addr().to_string(), "02:00:00:00:00:01");
        assert_eq!(
            f.vlan(),
            Some(VlanTag {
                pcp: 5,
                dei: false,
                vid: 100
            })
        );
        assert_eq!(f.ethertype(), EtherType::IPV4);
        assert_eq!(f.payload(), &[0xde, 0xad]);
        let r = EthernetRepr::parse(&f).unwrap();
        let mut out = [0u8; 18];
        assert_eq!(r.emit(&mut out).unwrap(), 18);
        assert_eq!(&out[..], &TAGGED[..18]);
    }

    #[test]
    fn truncated_tag_is_an_error() {
        assert_eq!(Frame::new_checked(&TAGGED[..15]).unwrap_err(), Error::Truncated);
        assert_eq!(Frame::new_checked(&TAGGED[..10]).unwrap_err(), Error::Truncated);
    }

    #[test]
    fn qinq_view_reads_through_two_tags() {
        let mut b = vec![0u8; 12];
        b.extend_from_slice(&[0x88, 0xa8, 0x00, 0x0a, 0x81, 0x00, 0x00, 0x14, 0x08, 0x06]);
        let f = Frame::new_checked(&b[..]).unwrap();
        assert_eq!(f.vlan_count(), 2);
        assert_eq!(f.ethertype(), EtherType::ARP);
        assert_eq!(f.header_len(), 22);
        assert!(EthernetRepr::parse(&f).is_err());
    }

    #[test]
    fn mac_parse_and_print() {
        let m: MacAddr = "0a:1b:2c:3d:4e:5f".parse().unwrap();
        assert_eq!(m.to_string(), "0a:1b:2c:3d:4e:5f");
        assert!("0a:1b:2c".parse::<MacAddr>().is_err());
        assert!("0a:1b:2c:3d:4e:5f:00".parse::<MacAddr>().is_err());
    }

    pub(crate) fn any_repr() -> impl Strategy<Value = EthernetRepr> {
        (
            any::<[u8; 6]>(),
            any::<[u8; 6]>(),
            any::<Option<(u8, bool, u16)>>(),
            any::<u16>(),
        )
            .prop_filter_map("payload ethertype must not be a VLAN TPID", |(d, s, v, t)| {
                let ethertype = EtherType(t);
                (!ethertype.is_vlan_tpid()).then(|| EthernetRepr {
                    dst: MacAddr(d),
                    src: MacAddr(s),
                    vlan: v.map(|(pcp, dei, vid)| VlanTag {
                        pcp: pcp & 7,
                        dei,
                        vid: vid & 0xfff,
                    }),
                    ethertype,
                })
            })
    }

    proptest! {
        #[test]
        fn round_trip(r in any_repr()) {
            let mut buf = vec![0u8; r.header_len()];
            r.emit(&mut buf).unwrap();
            let f = Frame::new_checked(&buf[..]).unwrap();
            prop_assert_eq!(EthernetRepr::parse(&f).unwrap(), r);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(f) = Frame::new_checked(&data[..]) {
                let _ = (f.dst_addr(), f.src_addr(), f.vlan(), f.ethertype(), f.payload().len());
                let _ = EthernetRepr::parse(&f);
            }
        }
    }
}
