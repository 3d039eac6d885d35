//! Control messages between Axon control planes: the body of a [`PacketType::Control`] frame.
//!
//! The first byte is the message kind. Two families:
//!
//! * **Axon-ARP** request (1) and reply (2), the pseudo-ARP of thesis §3.2.3 that the source and
//!   target Axons exchange to set up routes in both directions (38 bytes):
//!
//!   ```text
//!   0 kind | 1 src port << 4 | tgt port | 2..6 transaction id
//!   6..12 source host real MAC   | 12..18 source route MAC (the MAC of the route memory slot)
//!   18..22 source host IPv4      | 22..28 target host real MAC | 28..34 target route MAC
//!   34..38 target host IPv4
//!   ```
//!
//!   The ports are the Axon ports the hosts hang off; a request carries zero target MACs.
//! * **Hello** (3) and hello reply (4), the bootstrap exchange of §3.1.3 that tells a port facing
//!   another Axon from a host port (14 bytes): `0 kind | 1 sender's port (0..15) | 2..6 "AXON" |
//!   6..14 sender's device id`.
//!
//! [`PacketType::Control`]: super::PacketType::Control

use crate::ethernet::MacAddr;
use crate::field::write_u32;
use crate::{Error, Result};
use std::net::Ipv4Addr;

/// Length of an Axon-ARP message.
pub const ARP_LEN: usize = 38;
/// Length of a hello message.
pub const HELLO_LEN: usize = 14;
/// The four bytes every hello carries after the port.
pub const HELLO_MAGIC: [u8; 4] = *b"AXON";

/// The kind of a control message; unknown codes are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlKind {
    /// 1: Axon-ARP request (source Axon to target Axon).
    ArpRequest,
    /// 2: Axon-ARP reply (target Axon to source Axon).
    ArpReply,
    /// 3: bootstrap hello, sent on every port when its link comes up.
    Hello,
    /// 4: answer to a hello.
    HelloReply,
    /// Any other code.
    Unknown(u8),
}

impl ControlKind {
    /// Decodes a kind code.
    pub fn from_code(c: u8) -> ControlKind {
        match c {
            1 => ControlKind::ArpRequest,
            2 => ControlKind::ArpReply,
            3 => ControlKind::Hello,
            4 => ControlKind::HelloReply,
            c => ControlKind::Unknown(c),
        }
    }
    /// The kind code.
    pub fn code(self) -> u8 {
        match self {
            ControlKind::ArpRequest => 1,
            ControlKind::ArpReply => 2,
            ControlKind::Hello => 3,
            ControlKind::HelloReply => 4,
            ControlKind::Unknown(c) => c,
        }
    }
    /// Bytes a message of this kind needs (1 for an unknown kind).
    pub fn body_len(self) -> usize {
        match self {
            ControlKind::ArpRequest | ControlKind::ArpReply => ARP_LEN,
            ControlKind::Hello | ControlKind::HelloReply => HELLO_LEN,
            ControlKind::Unknown(_) => 1,
        }
    }
}

/// A zero-copy view of a control message (the bytes after the Axon header).
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
    /// Checks that the kind and every field of that kind are present (trailing bytes, such as
    /// Ethernet padding, are allowed).
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.is_empty() || b.len() < self.kind().body_len() {
            return Err(Error::Truncated);
        }
        Ok(())
    }
    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// The message kind.
    pub fn kind(&self) -> ControlKind {
        ControlKind::from_code(self.buffer.as_ref().first().copied().unwrap_or(0))
    }
    fn bytes<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut out = [0u8; N];
        if let Some(s) = self.buffer.as_ref().get(at..at + N) {
            out.copy_from_slice(s);
        }
        out
    }
    fn mac(&self, at: usize) -> MacAddr {
        MacAddr(self.bytes(at))
    }
    fn ip(&self, at: usize) -> Ipv4Addr {
        Ipv4Addr::from(self.bytes::<4>(at))
    }
    /// Axon-ARP: the source host's Axon port (zero when the message is too short for it; so
    /// are the other Axon-ARP fields).
    pub fn arp_src_port(&self) -> u8 {
        self.bytes::<1>(1)[0] >> 4
    }
    /// Axon-ARP: the target host's Axon port.
    pub fn arp_tgt_port(&self) -> u8 {
        self.bytes::<1>(1)[0] & 0x0f
    }
    /// Axon-ARP: transaction id.
    pub fn arp_xid(&self) -> u32 {
        u32::from_be_bytes(self.bytes(2))
    }
    /// Axon-ARP: the source host's real MAC.
    pub fn arp_src_mac(&self) -> MacAddr {
        self.mac(6)
    }
    /// Axon-ARP: the MAC of the source host's route memory slot.
    pub fn arp_src_route_mac(&self) -> MacAddr {
        self.mac(12)
    }
    /// Axon-ARP: the source host's IPv4 address.
    pub fn arp_src_ip(&self) -> Ipv4Addr {
        self.ip(18)
    }
    /// Axon-ARP: the target host's real MAC (zero in a request).
    pub fn arp_tgt_mac(&self) -> MacAddr {
        self.mac(22)
    }
    /// Axon-ARP: the MAC of the target host's route memory slot (zero in a request).
    pub fn arp_tgt_route_mac(&self) -> MacAddr {
        self.mac(28)
    }
    /// Axon-ARP: the target host's IPv4 address.
    pub fn arp_tgt_ip(&self) -> Ipv4Addr {
        self.ip(34)
    }
    /// Hello: the sender's port byte (zero when the message is too short; so are the others).
    pub fn hello_port(&self) -> u8 {
        self.bytes::<1>(1)[0]
    }
    /// Hello: the magic bytes (should be [`HELLO_MAGIC`]).
    pub fn hello_magic(&self) -> [u8; 4] {
        self.bytes(2)
    }
    /// Hello: the sender's device id.
    pub fn hello_device_id(&self) -> u64 {
        u64::from_be_bytes(self.bytes(6))
    }
}

/// The fields of an Axon-ARP request or reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AxonArp {
    /// Transaction id, chosen by the source Axon, echoed in the reply.
    pub xid: u32,
    /// The Axon port of the source host (at the source Axon).
    pub src_port: u8,
    /// The source host's real MAC (from its ARP request).
    pub src_mac: MacAddr,
    /// The MAC that indexes the source host's allocated route memory slot.
    pub src_route_mac: MacAddr,
    /// The source host's IPv4 address.
    pub src_ip: Ipv4Addr,
    /// The Axon port of the target host (at the target Axon).
    pub tgt_port: u8,
    /// The target host's real MAC (from its ARP reply; zero in a request).
    pub tgt_mac: MacAddr,
    /// The MAC that indexes the target host's allocated route memory slot (zero in a request).
    pub tgt_route_mac: MacAddr,
    /// The target host's IPv4 address.
    pub tgt_ip: Ipv4Addr,
}

/// The fields of a hello or hello reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hello {
    /// The sender's port the hello left on (0..15).
    pub port: u8,
    /// The sender's device id.
    pub device_id: u64,
}

/// An owned control message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRepr {
    /// Axon-ARP request.
    ArpRequest(AxonArp),
    /// Axon-ARP reply.
    ArpReply(AxonArp),
    /// Bootstrap hello.
    Hello(Hello),
    /// Answer to a hello.
    HelloReply(Hello),
}

impl ControlRepr {
    /// Reads a control message. Unknown kinds are [`Error::Unsupported`]; a hello with the wrong
    /// magic or a port above 15 is [`Error::Malformed`].
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<ControlRepr> {
        p.check_len()?;
        let arp = || AxonArp {
            xid: p.arp_xid(),
            src_port: p.arp_src_port(),
            src_mac: p.arp_src_mac(),
            src_route_mac: p.arp_src_route_mac(),
            src_ip: p.arp_src_ip(),
            tgt_port: p.arp_tgt_port(),
            tgt_mac: p.arp_tgt_mac(),
            tgt_route_mac: p.arp_tgt_route_mac(),
            tgt_ip: p.arp_tgt_ip(),
        };
        let hello = || -> Result<Hello> {
            if p.hello_magic() != HELLO_MAGIC {
                return Err(Error::Malformed("axon hello magic"));
            }
            if p.hello_port() > 0x0f {
                return Err(Error::Malformed("axon hello port"));
            }
            Ok(Hello {
                port: p.hello_port(),
                device_id: p.hello_device_id(),
            })
        };
        match p.kind() {
            ControlKind::ArpRequest => Ok(ControlRepr::ArpRequest(arp())),
            ControlKind::ArpReply => Ok(ControlRepr::ArpReply(arp())),
            ControlKind::Hello => Ok(ControlRepr::Hello(hello()?)),
            ControlKind::HelloReply => Ok(ControlRepr::HelloReply(hello()?)),
            ControlKind::Unknown(_) => Err(Error::Unsupported("axon control message kind")),
        }
    }

    /// The message kind.
    pub fn kind(&self) -> ControlKind {
        match self {
            ControlRepr::ArpRequest(_) => ControlKind::ArpRequest,
            ControlRepr::ArpReply(_) => ControlKind::ArpReply,
            ControlRepr::Hello(_) => ControlKind::Hello,
            ControlRepr::HelloReply(_) => ControlKind::HelloReply,
        }
    }

    /// Bytes this repr emits (38 or 14).
    pub fn buffer_len(&self) -> usize {
        self.kind().body_len()
    }

    /// Writes the message into the start of `buf`. Ports above 15 are refused.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len();
        if buf.len() < len {
            return Err(Error::Truncated);
        }
        let b = &mut buf[..len];
        b[0] = self.kind().code();
        match self {
            ControlRepr::ArpRequest(a) | ControlRepr::ArpReply(a) => {
                if a.src_port > 0x0f || a.tgt_port > 0x0f {
                    return Err(Error::Malformed("axon-arp port above 15"));
                }
                b[1] = (a.src_port << 4) | a.tgt_port;
                write_u32(b, 2, a.xid);
                b[6..12].copy_from_slice(&a.src_mac.0);
                b[12..18].copy_from_slice(&a.src_route_mac.0);
                b[18..22].copy_from_slice(&a.src_ip.octets());
                b[22..28].copy_from_slice(&a.tgt_mac.0);
                b[28..34].copy_from_slice(&a.tgt_route_mac.0);
                b[34..38].copy_from_slice(&a.tgt_ip.octets());
            }
            ControlRepr::Hello(h) | ControlRepr::HelloReply(h) => {
                if h.port > 0x0f {
                    return Err(Error::Malformed("axon hello port"));
                }
                b[1] = h.port;
                b[2..6].copy_from_slice(&HELLO_MAGIC);
                b[6..14].copy_from_slice(&h.device_id.to_be_bytes());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_hello_and_arp() {
        let h = ControlRepr::Hello(Hello {
            port: 3,
            device_id: 0x0102_0304_0506_0708,
        });
        let mut b = [0u8; HELLO_LEN];
        h.emit(&mut b).unwrap();
        assert_eq!(b, [3, 3, b'A', b'X', b'O', b'N', 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(ControlRepr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap(), h);

        let a = AxonArp {
            xid: 0xdead_beef,
            src_port: 1,
            src_mac: MacAddr([2, 0, 0, 0, 0, 0x0a]),
            src_route_mac: MacAddr([2, 0xa0, 0, 0, 0, 7]),
            src_ip: Ipv4Addr::new(10, 0, 0, 1),
            tgt_port: 2,
            tgt_mac: MacAddr::ZERO,
            tgt_route_mac: MacAddr::ZERO,
            tgt_ip: Ipv4Addr::new(10, 0, 0, 2),
        };
        let mut b = [0xffu8; 40];
        ControlRepr::ArpRequest(a).emit(&mut b).unwrap();
        assert_eq!(&b[..6], &[1, 0x12, 0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(&b[12..18], &[2, 0xa0, 0, 0, 0, 7]);
        assert_eq!(&b[34..40], &[10, 0, 0, 2, 0xff, 0xff]);
        // Trailing bytes (padding) are fine.
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(ControlRepr::parse(&p).unwrap(), ControlRepr::ArpRequest(a));
    }

    #[test]
    fn errors() {
        assert_eq!(Packet::new_checked(&[][..]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&[1u8; 37][..]).unwrap_err(), Error::Truncated);
        let p = Packet::new_checked(&[9u8][..]).unwrap();
        assert!(matches!(ControlRepr::parse(&p), Err(Error::Unsupported(_))));
        let mut b = [0u8; HELLO_LEN];
        ControlRepr::HelloReply(Hello { port: 1, device_id: 9 })
            .emit(&mut b)
            .unwrap();
        b[3] = b'Y';
        assert!(matches!(
            ControlRepr::parse(&Packet::new_checked(&b[..]).unwrap()),
            Err(Error::Malformed(_))
        ));
        assert!(ControlRepr::Hello(Hello { port: 16, device_id: 0 })
            .emit(&mut b)
            .is_err());
        // Accessors of the other family never panic on a short message.
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.arp_tgt_ip(), Ipv4Addr::UNSPECIFIED);
    }

    fn any_arp() -> impl Strategy<Value = AxonArp> {
        (
            any::<u32>(),
            0u8..16,
            0u8..16,
            any::<[[u8; 6]; 4]>(),
            any::<[u8; 4]>(),
            any::<[u8; 4]>(),
        )
            .prop_map(|(xid, sp, tp, m, si, ti)| AxonArp {
                xid,
                src_port: sp,
                src_mac: MacAddr(m[0]),
                src_route_mac: MacAddr(m[1]),
                src_ip: si.into(),
                tgt_port: tp,
                tgt_mac: MacAddr(m[2]),
                tgt_route_mac: MacAddr(m[3]),
                tgt_ip: ti.into(),
            })
    }

    pub(crate) fn any_repr() -> impl Strategy<Value = ControlRepr> {
        let hello = (0u8..16, any::<u64>()).prop_map(|(port, device_id)| Hello { port, device_id });
        prop_oneof![
            any_arp().prop_map(ControlRepr::ArpRequest),
            any_arp().prop_map(ControlRepr::ArpReply),
            hello.clone().prop_map(ControlRepr::Hello),
            hello.prop_map(ControlRepr::HelloReply),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(r in any_repr()) {
            let mut buf = vec![0u8; r.buffer_len()];
            r.emit(&mut buf).unwrap();
            prop_assert_eq!(ControlRepr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..48)) {
            if let Ok(p) = Packet::new_checked(&data[..]) {
                let _ = (p.arp_src_mac(), p.arp_tgt_ip(), p.hello_device_id(), p.hello_magic());
                let _ = ControlRepr::parse(&p);
            }
        }
    }
}
