//! The packet_in summary applications see: [`PacketInEvent`] (built from a decoded
//! [`Message`]) and [`Event`], one addressed to the datapath it came from.

use core::fmt;
use tandem_wire::decode::{summarize_ipv4, Ipv4Summary};
use tandem_wire::ethernet::{self, EtherType};
use tandem_wire::openflow::{Body, Message, OxmField, PacketIn, Version};
use tandem_wire::MacAddr;

/// `OFP_NO_BUFFER`: the packet_in carries the whole frame and the switch kept no copy.
pub const NO_BUFFER: u32 = 0xffff_ffff;

/// Bytes of an Ethernet header (destination, source, EtherType).
const ETH_HEADER_LEN: usize = 14;

/// Why a message could not become a [`PacketInEvent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventError {
    /// The message is not a packet_in.
    NotPacketIn,
    /// The version is neither OpenFlow 1.0 nor 1.3 (the wire version byte).
    UnsupportedVersion(u8),
    /// An OpenFlow 1.3 packet_in whose match has no `in_port` field.
    MissingInPort,
    /// The frame is shorter than an Ethernet header (its length).
    FrameTooShort(usize),
}

impl fmt::Display for EventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventError::NotPacketIn => f.write_str("not a packet_in"),
            EventError::UnsupportedVersion(v) => write!(f, "unsupported openflow version 0x{v:02x}"),
            EventError::MissingInPort => f.write_str("openflow 1.3 packet_in without in_port"),
            EventError::FrameTooShort(n) => write!(f, "frame of {n} bytes has no ethernet header"),
        }
    }
}

impl std::error::Error for EventError {}

/// A compact, owned summary of one packet_in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PacketInEvent {
    /// OpenFlow version of the connection ([`Version::V1_0`] or [`Version::V1_3`]).
    pub version: Version,
    /// Transaction id of the packet_in (replies reuse it).
    pub xid: u32,
    /// Switch buffer id ([`NO_BUFFER`]: not buffered, `data` is the whole frame).
    pub buffer_id: u32,
    /// Input port (16 bits in 1.0, widened).
    pub in_port: u32,
    /// Full length of the frame on the wire.
    pub total_len: u16,
    /// Destination MAC address of the frame.
    pub eth_dst: MacAddr,
    /// Source MAC address of the frame.
    pub eth_src: MacAddr,
    /// The EtherType (or TPID when tagged) at bytes 12..14.
    pub ethertype: u16,
    /// The frame bytes the packet_in carried.
    pub data: Vec<u8>,
}

impl PacketInEvent {
    /// Summarises a packet_in message; typed errors for anything else.
    pub fn from_message(msg: &Message) -> Result<PacketInEvent, EventError> {
        let Body::PacketIn(p) = &msg.body else {
            return Err(EventError::NotPacketIn);
        };
        let in_port = packet_in_port(msg.version, p)?;
        PacketInEvent::from_frame(msg.version, msg.xid, p.buffer_id, in_port, p.total_len, p.data.clone())
    }

    /// Like [`PacketInEvent::from_message`], moving the frame out of the message instead of
    /// copying it (the server's path).
    pub fn from_owned(msg: Message) -> Result<PacketInEvent, EventError> {
        let Body::PacketIn(p) = msg.body else {
            return Err(EventError::NotPacketIn);
        };
        let in_port = packet_in_port(msg.version, &p)?;
        PacketInEvent::from_frame(msg.version, msg.xid, p.buffer_id, in_port, p.total_len, p.data)
    }

    /// Builds an event from its parts, reading the addresses from the frame.
    pub fn from_frame(
        version: Version,
        xid: u32,
        buffer_id: u32,
        in_port: u32,
        total_len: u16,
        data: Vec<u8>,
    ) -> Result<PacketInEvent, EventError> {
        if !version.is_supported() {
            return Err(EventError::UnsupportedVersion(version.0));
        }
        let Some(h) = data.get(..ETH_HEADER_LEN) else {
            return Err(EventError::FrameTooShort(data.len()));
        };
        Ok(PacketInEvent {
            version,
            xid,
            buffer_id,
            in_port,
            total_len,
            eth_dst: MacAddr::from_bytes(&h[0..6]),
            eth_src: MacAddr::from_bytes(&h[6..12]),
            ethertype: u16::from_be_bytes([h[12], h[13]]),
            data,
        })
    }

    /// True when the switch buffered the frame (the reply may refer to it by `buffer_id`).
    pub fn is_buffered(&self) -> bool {
        self.buffer_id != NO_BUFFER
    }

    /// The IPv4 header summary of the frame (addresses, protocol, ports), when the frame came
    /// whole (not buffered) and is IPv4.
    pub fn ipv4(&self) -> Option<Ipv4Summary> {
        if self.ethertype != EtherType::IPV4.0 || self.is_buffered() {
            return None;
        }
        summarize_ipv4(self.data.get(ethernet::HEADER_LEN..)?)
    }

    /// The event size the pool sorts by: the frame bytes carried.
    pub fn size(&self) -> usize {
        self.data.len()
    }
}

/// The input port of a packet_in: a field in 1.0, the `in_port` OXM field in 1.3.
fn packet_in_port(version: Version, p: &PacketIn) -> Result<u32, EventError> {
    match version {
        Version::V1_0 => Ok(u32::from(p.in_port)),
        Version::V1_3 => p
            .oxm
            .fields
            .iter()
            .find_map(|f| match f {
                OxmField::InPort(port) => Some(*port),
                _ => None,
            })
            .ok_or(EventError::MissingInPort),
        v => Err(EventError::UnsupportedVersion(v.0)),
    }
}

/// A packet_in event addressed to the datapath it came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Event {
    /// Datapath id of the switch.
    pub dpid: u64,
    /// The packet_in.
    pub packet_in: PacketInEvent,
}

impl Event {
    /// The size the pool sorts by ([`PacketInEvent::size`]).
    pub fn size(&self) -> usize {
        self.packet_in.size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_wire::openflow::{OxmMatch, PacketIn};

    fn frame() -> Vec<u8> {
        let mut f = vec![0u8; 60];
        f[0..6].copy_from_slice(&[0, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[0, 0, 0, 0, 0, 1]);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f
    }

    #[test]
    fn summarises_both_versions() {
        let m10 = Message {
            version: Version::V1_0,
            xid: 7,
            body: Body::PacketIn(PacketIn {
                buffer_id: 9,
                total_len: 60,
                in_port: 3,
                data: frame(),
                ..PacketIn::default()
            }),
        };
        let e = PacketInEvent::from_message(&m10).unwrap();
        assert_eq!((e.xid, e.buffer_id, e.in_port, e.total_len), (7, 9, 3, 60));
        assert_eq!(e.eth_dst, MacAddr([0, 0, 0, 0, 0, 2]));
        assert_eq!(e.eth_src, MacAddr([0, 0, 0, 0, 0, 1]));
        assert_eq!(e.ethertype, 0x0800);
        assert_eq!(e.size(), 60);
        assert!(e.is_buffered());

        let m13 = Message {
            version: Version::V1_3,
            xid: 8,
            body: Body::PacketIn(PacketIn {
                buffer_id: NO_BUFFER,
                total_len: 60,
                oxm: OxmMatch {
                    fields: vec![OxmField::InPort(0x1_0000)],
                },
                data: frame(),
                ..PacketIn::default()
            }),
        };
        let e = PacketInEvent::from_message(&m13).unwrap();
        assert_eq!(e.in_port, 0x1_0000);
        assert!(!e.is_buffered());
    }

    #[test]
    fn the_ipv4_summary_needs_the_whole_frame() {
        // A UDP datagram 10.0.0.1:5000 -> 10.0.0.2:53.
        let mut f = frame();
        f[14..34].copy_from_slice(&[0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f[34..38].copy_from_slice(&[0x13, 0x88, 0, 53]);
        let ev = |buffer| PacketInEvent::from_frame(Version::V1_3, 1, buffer, 1, 60, f.clone()).unwrap();
        let ip = ev(NO_BUFFER).ipv4().expect("an IPv4 frame");
        assert_eq!((ip.protocol.0, ip.src_port, ip.dst_port), (17, 5000, 53));
        assert_eq!(ev(7).ipv4(), None, "buffered: the frame may be cut");
        let mut arp = f.clone();
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        let arp = PacketInEvent::from_frame(Version::V1_3, 1, NO_BUFFER, 1, 60, arp).unwrap();
        assert_eq!(arp.ipv4(), None);
    }

    #[test]
    fn typed_errors() {
        let mut m = Message {
            version: Version::V1_3,
            xid: 1,
            body: Body::PacketIn(PacketIn {
                data: frame(),
                ..PacketIn::default()
            }),
        };
        assert_eq!(PacketInEvent::from_message(&m), Err(EventError::MissingInPort));
        m.version = Version(2);
        assert_eq!(PacketInEvent::from_message(&m), Err(EventError::UnsupportedVersion(2)));
        m.version = Version::V1_0;
        m.body = Body::PacketIn(PacketIn {
            data: vec![0; 13],
            ..PacketIn::default()
        });
        assert_eq!(PacketInEvent::from_message(&m), Err(EventError::FrameTooShort(13)));
        m.body = Body::BarrierReply;
        assert_eq!(PacketInEvent::from_message(&m), Err(EventError::NotPacketIn));
        assert!(!EventError::MissingInPort.to_string().is_empty());
    }
}
