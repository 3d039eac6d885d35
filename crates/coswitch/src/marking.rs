//! How an elephant is marked on the wire so that the physical switch can tell it from mice:
//! the IPv4 DSCP (the paper's "TOS tag", our default) or an 802.1Q VLAN tag. [`apply`] marks a
//! real Ethernet frame the way the Flow-Arbiter does on a server, and [`read`] is the physical
//! switch's classifier. Both use the checked views of `tandem-wire`: a malformed frame is an
//! error, never a panic.

use tandem_wire::ethernet::{EtherType, Frame, VlanTag, HEADER_LEN, VLAN_TAG_LEN};
use tandem_wire::ipv4;

/// The mark carried by elephant packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mark {
    /// Set the IPv4 DSCP to this value (6 bits; the paper's TOS marking).
    Dscp(u8),
    /// Push an 802.1Q tag with this VLAN ID (12 bits).
    Vlan(u16),
}

impl Default for Mark {
    /// DSCP 8 (CS1): **ours**; the paper only says "a special TOS tag".
    fn default() -> Self {
        Mark::Dscp(8)
    }
}

/// Why a frame could not be marked or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkError {
    /// The frame is too short or its headers are malformed.
    Malformed,
    /// DSCP marking needs an IPv4 packet.
    NotIpv4,
    /// The frame already carries a VLAN tag (VLAN marking pushes only onto untagged frames).
    AlreadyTagged,
    /// The mark's value does not fit its field (DSCP > 63 or VLAN ID > 4094 or 0).
    BadValue,
}

impl std::fmt::Display for MarkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MarkError::Malformed => "malformed frame",
            MarkError::NotIpv4 => "not an IPv4 frame",
            MarkError::AlreadyTagged => "frame already VLAN-tagged",
            MarkError::BadValue => "mark value out of range",
        })
    }
}

impl std::error::Error for MarkError {}

impl Mark {
    /// Checks that the value fits its field.
    pub fn validate(self) -> Result<(), MarkError> {
        match self {
            Mark::Dscp(d) if d > 63 => Err(MarkError::BadValue),
            Mark::Vlan(v) if v == 0 || v > 4094 => Err(MarkError::BadValue),
            _ => Ok(()),
        }
    }
}

/// Marks an Ethernet frame in place: rewrites the DSCP (and the IPv4 header checksum) or
/// inserts a VLAN tag after the source address.
pub fn apply(frame: &mut Vec<u8>, mark: Mark) -> Result<(), MarkError> {
    mark.validate()?;
    let view = Frame::new_checked(frame.as_slice()).map_err(|_| MarkError::Malformed)?;
    match mark {
        Mark::Dscp(d) => {
            if view.ethertype() != EtherType::IPV4 {
                return Err(MarkError::NotIpv4);
            }
            let hl = view.header_len();
            let mut ip = ipv4::Packet::new_checked(&mut frame[hl..]).map_err(|_| MarkError::Malformed)?;
            ip.set_dscp_and_fix_checksum(d);
            Ok(())
        }
        Mark::Vlan(vid) => {
            if view.vlan_count() > 0 {
                return Err(MarkError::AlreadyTagged);
            }
            let tci = VlanTag {
                pcp: 0,
                dei: false,
                vid,
            }
            .tci();
            let mut tag = [0u8; VLAN_TAG_LEN];
            tag[..2].copy_from_slice(&EtherType::VLAN.0.to_be_bytes());
            tag[2..].copy_from_slice(&tci.to_be_bytes());
            frame.splice(HEADER_LEN - 2..HEADER_LEN - 2, tag);
            Ok(())
        }
    }
}

/// Whether a frame carries `mark` (the physical switch's match on marked traffic).
/// Malformed frames are an error; a well-formed frame without the mark is `Ok(false)`.
pub fn read(frame: &[u8], mark: Mark) -> Result<bool, MarkError> {
    let view = Frame::new_checked(frame).map_err(|_| MarkError::Malformed)?;
    match mark {
        Mark::Vlan(vid) => Ok(view.vlan().is_some_and(|t| t.vid == vid)),
        Mark::Dscp(d) => {
            if view.ethertype() != EtherType::IPV4 {
                return Ok(false);
            }
            let ip = ipv4::Packet::new_checked(view.payload()).map_err(|_| MarkError::Malformed)?;
            Ok(ip.dscp() == d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::net::Ipv4Addr;
    use tandem_wire::ipv4::{IpProtocol, Ipv4Repr};

    fn ipv4_frame(payload: u16, tos: u8) -> Vec<u8> {
        let repr = Ipv4Repr {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            protocol: IpProtocol::UDP,
            payload_len: payload,
            dscp: tos >> 2,
            ecn: tandem_wire::ipv4::Ecn::from_bits(tos & 3),
            ident: 1,
            dont_frag: true,
            ttl: 64,
        };
        let mut f = vec![0u8; HEADER_LEN + repr.total_len()];
        f[12..14].copy_from_slice(&EtherType::IPV4.0.to_be_bytes());
        repr.emit(&mut f[HEADER_LEN..]).expect("emit");
        f
    }

    #[test]
    fn dscp_mark_round_trips_and_keeps_the_checksum_valid() {
        let mut f = ipv4_frame(20, 0b0000_0010);
        assert_eq!(read(&f, Mark::Dscp(8)), Ok(false));
        apply(&mut f, Mark::Dscp(8)).expect("mark");
        assert_eq!(read(&f, Mark::Dscp(8)), Ok(true));
        let ip = ipv4::Packet::new_checked(&f[HEADER_LEN..]).expect("ip");
        assert!(ip.verify_checksum());
        assert_eq!(f[HEADER_LEN + 1] & 3, 0b10, "ECN bits kept");
    }

    #[test]
    fn vlan_mark_pushes_one_tag() {
        let mut f = ipv4_frame(20, 0);
        let before = f.len();
        apply(&mut f, Mark::Vlan(100)).expect("mark");
        assert_eq!(f.len(), before + VLAN_TAG_LEN);
        assert_eq!(read(&f, Mark::Vlan(100)), Ok(true));
        assert_eq!(read(&f, Mark::Vlan(101)), Ok(false));
        assert_eq!(apply(&mut f, Mark::Vlan(100)), Err(MarkError::AlreadyTagged));
        let v = Frame::new_checked(f.as_slice()).expect("frame");
        assert_eq!(v.ethertype(), EtherType::IPV4);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert_eq!(apply(&mut vec![0u8; 5], Mark::Dscp(8)), Err(MarkError::Malformed));
        assert_eq!(apply(&mut ipv4_frame(0, 0), Mark::Dscp(64)), Err(MarkError::BadValue));
        assert_eq!(apply(&mut ipv4_frame(0, 0), Mark::Vlan(0)), Err(MarkError::BadValue));
        let mut arp = vec![0u8; 60];
        arp[12..14].copy_from_slice(&EtherType::ARP.0.to_be_bytes());
        assert_eq!(apply(&mut arp, Mark::Dscp(8)), Err(MarkError::NotIpv4));
        assert_eq!(read(&arp, Mark::Dscp(8)), Ok(false));
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80), d in 0u8..64, v in 1u16..4095) {
            let mut a = bytes.clone();
            let _ = apply(&mut a, Mark::Dscp(d));
            let _ = read(&a, Mark::Dscp(d));
            let mut b = bytes;
            let _ = apply(&mut b, Mark::Vlan(v));
            let _ = read(&b, Mark::Vlan(v));
        }

        #[test]
        fn marking_is_read_back(d in 0u8..64, payload in 0u16..100) {
            let mut f = ipv4_frame(payload, 0);
            apply(&mut f, Mark::Dscp(d)).expect("mark");
            prop_assert_eq!(read(&f, Mark::Dscp(d)), Ok(true));
        }
    }
}
