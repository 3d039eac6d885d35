//! ARP (RFC 826) for Ethernet and IPv4, the only combination a data-center fabric carries.
//!
//! The view reads any hardware/protocol sizes the header declares; the [`ArpRepr`] models only
//! Ethernet/IPv4 and returns [`Error::Unsupported`] for anything else.

use crate::ethernet::{EtherType, MacAddr};
use crate::field::{read_u16, write_u16};
use crate::{Error, Result};
use std::net::Ipv4Addr;

/// Length of the fixed part (hardware type to operation).
pub const FIXED_LEN: usize = 8;
/// Length of an Ethernet/IPv4 ARP packet.
pub const ETHERNET_IPV4_LEN: usize = 28;
/// Hardware type for Ethernet.
pub const HTYPE_ETHERNET: u16 = 1;

mod f {
    pub const HTYPE: usize = 0;
    pub const PTYPE: usize = 2;
    pub const HLEN: usize = 4;
    pub const PLEN: usize = 5;
    pub const OPER: usize = 6;
}

/// The ARP operation; unknown codes are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArpOperation {
    /// 1: who has this address?
    Request,
    /// 2: this address is at.
    Reply,
    /// Any other code.
    Unknown(u16),
}

impl ArpOperation {
    /// Decodes an operation code.
    pub fn from_code(c: u16) -> ArpOperation {
        match c {
            1 => ArpOperation::Request,
            2 => ArpOperation::Reply,
            c => ArpOperation::Unknown(c),
        }
    }
    /// The operation code.
    pub fn code(self) -> u16 {
        match self {
            ArpOperation::Request => 1,
            ArpOperation::Reply => 2,
            ArpOperation::Unknown(c) => c,
        }
    }
}

/// A zero-copy view of an ARP packet.
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
    /// Checks that the fixed part and the four addresses (of the declared sizes) are present.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < FIXED_LEN {
            return Err(Error::Truncated);
        }
        if b.len() < FIXED_LEN + 2 * (self.hardware_len() + self.protocol_len()) {
            return Err(Error::Truncated);
        }
        Ok(())
    }
    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// Hardware type (1 for Ethernet).
    pub fn hardware_type(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::HTYPE)
    }
    /// Protocol type (an EtherType; 0x0800 for IPv4).
    pub fn protocol_type(&self) -> EtherType {
        EtherType(read_u16(self.buffer.as_ref(), f::PTYPE))
    }
    /// Hardware address length in bytes.
    pub fn hardware_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[f::HLEN])
    }
    /// Protocol address length in bytes.
    pub fn protocol_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[f::PLEN])
    }
    /// The operation.
    pub fn operation(&self) -> ArpOperation {
        ArpOperation::from_code(read_u16(self.buffer.as_ref(), f::OPER))
    }
    fn addr(&self, index: usize) -> &[u8] {
        let (h, p) = (self.hardware_len(), self.protocol_len());
        let start = FIXED_LEN + (index / 2) * (h + p) + if index % 2 == 1 { h } else { 0 };
        let len = if index % 2 == 1 { p } else { h };
        &self.buffer.as_ref()[start..start + len]
    }
    /// Sender hardware address bytes.
    pub fn sender_hardware_addr(&self) -> &[u8] {
        self.addr(0)
    }
    /// Sender protocol address bytes.
    pub fn sender_protocol_addr(&self) -> &[u8] {
        self.addr(1)
    }
    /// Target hardware address bytes.
    pub fn target_hardware_addr(&self) -> &[u8] {
        self.addr(2)
    }
    /// Target protocol address bytes.
    pub fn target_protocol_addr(&self) -> &[u8] {
        self.addr(3)
    }
}

/// An owned Ethernet/IPv4 ARP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArpRepr {
    /// Request, reply or other.
    pub operation: ArpOperation,
    /// Sender MAC address.
    pub sender_mac: MacAddr,
    /// Sender IPv4 address.
    pub sender_ip: Ipv4Addr,
    /// Target MAC address (zero in a request).
    pub target_mac: MacAddr,
    /// Target IPv4 address.
    pub target_ip: Ipv4Addr,
}

impl ArpRepr {
    /// Reads an Ethernet/IPv4 ARP packet.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<ArpRepr> {
        p.check_len()?;
        if p.hardware_type() != HTYPE_ETHERNET
            || p.protocol_type() != EtherType::IPV4
            || p.hardware_len() != 6
            || p.protocol_len() != 4
        {
            return Err(Error::Unsupported("arp other than ethernet/ipv4"));
        }
        let ip = |s: &[u8]| Ipv4Addr::new(s[0], s[1], s[2], s[3]);
        Ok(ArpRepr {
            operation: p.operation(),
            sender_mac: MacAddr::from_bytes(p.sender_hardware_addr()),
            sender_ip: ip(p.sender_protocol_addr()),
            target_mac: MacAddr::from_bytes(p.target_hardware_addr()),
            target_ip: ip(p.target_protocol_addr()),
        })
    }

    /// Bytes this repr emits (28).
    pub fn buffer_len(&self) -> usize {
        ETHERNET_IPV4_LEN
    }

    /// Writes the packet into the start of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        if buf.len() < ETHERNET_IPV4_LEN {
            return Err(Error::Truncated);
        }
        write_u16(buf, f::HTYPE, HTYPE_ETHERNET);
        write_u16(buf, f::PTYPE, EtherType::IPV4.0);
        buf[f::HLEN] = 6;
        buf[f::PLEN] = 4;
        write_u16(buf, f::OPER, self.operation.code());
        buf[8..14].copy_from_slice(&self.sender_mac.0);
        buf[14..18].copy_from_slice(&self.sender_ip.octets());
        buf[18..24].copy_from_slice(&self.target_mac.0);
        buf[24..28].copy_from_slice(&self.target_ip.octets());
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    // A request "who has 10.0.0.2? tell 10.0.0.1" from 02:00:00:00:00:01.
    const REQUEST: [u8; 28] = [
        0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 10, 0, 0, 1, 0, 0, 0, 0, 0,
        0, 10, 0, 0, 2,
    ];

    #[test]
    fn reads_and_writes_known_request() {
        let p = Packet::new_checked(&REQUEST[..]).unwrap();
        let r = ArpRepr::parse(&p).unwrap();
        assert_eq!(r.operation, ArpOperation::Request);
        assert_eq!(r.sender_mac, MacAddr([2, 0, 0, 0, 0, 1]));
        assert_eq!(r.sender_ip, Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(r.target_mac, MacAddr::ZERO);
        assert_eq!(r.target_ip, Ipv4Addr::new(10, 0, 0, 2));
        let mut out = [0u8; 28];
        r.emit(&mut out).unwrap();
        assert_eq!(out, REQUEST);
    }

    #[test]
    fn other_sizes_are_read_but_not_modelled() {
        let mut b = REQUEST.to_vec();
        b[0..2].copy_from_slice(&6u16.to_be_bytes());
        assert!(matches!(
            ArpRepr::parse(&Packet::new_checked(&b[..]).unwrap()),
            Err(Error::Unsupported(_))
        ));
        // hlen 255 claims far more bytes than are there.
        b[4] = 255;
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&REQUEST[..27]).unwrap_err(), Error::Truncated);
    }

    pub(crate) fn any_repr() -> impl Strategy<Value = ArpRepr> {
        (
            any::<u16>(),
            any::<[u8; 6]>(),
            any::<[u8; 4]>(),
            any::<[u8; 6]>(),
            any::<[u8; 4]>(),
        )
            .prop_map(|(op, sm, si, tm, ti)| ArpRepr {
                operation: ArpOperation::from_code(op),
                sender_mac: MacAddr(sm),
                sender_ip: si.into(),
                target_mac: MacAddr(tm),
                target_ip: ti.into(),
            })
    }

    proptest! {
        #[test]
        fn round_trip(r in any_repr()) {
            let mut buf = vec![0u8; r.buffer_len()];
            r.emit(&mut buf).unwrap();
            prop_assert_eq!(ArpRepr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(p) = Packet::new_checked(&data[..]) {
                let _ = (p.sender_hardware_addr(), p.target_protocol_addr(), p.operation());
                let _ = ArpRepr::parse(&p);
            }
        }
    }
}
