//! Tandem's wire formats.
//!
//! Every format follows the same two-level pattern (the one smoltcp made familiar):
//!
//! * a zero-copy **view**, e.g. [`ethernet::Frame<T>`] over any `T: AsRef<[u8]>`. Build it with
//!   `new_checked`, which runs `check_len`; once that passes no accessor panics, whatever the bytes
//!   say. With `T: AsMut<[u8]>` the view also has setters, so a packet can be edited in place.
//! * an owned **`Repr`**, e.g. [`ethernet::EthernetRepr`], with `parse(&view)` (which validates
//!   fields and verifies checksums) and `emit(&mut view)` (which fills every field and computes
//!   checksums). `parse(emit(r)) == r` holds for every `Repr` (property-tested).
//!
//! Malformed input always returns an [`Error`]; it never panics. The [`pcap`] module reads pcap and
//! pcapng traces and writes pcap with nanosecond timestamps; [`flow`] turns a packet stream into
//! flow records (the format other Tandem tools read, documented in `docs/formats.md`).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod arp;
pub mod axon;
pub mod checksum;
pub mod decode;
pub mod dhcp;
pub mod error;
pub mod ethernet;
mod field;
pub mod flow;
pub mod icmpv4;
pub mod ipv4;
pub mod openflow;
pub mod pause;
pub mod pcap;
pub mod tcp;
pub mod udp;

pub use error::{Error, Result};
pub use ethernet::{EtherType, MacAddr};
pub use ipv4::IpProtocol;
pub use std::net::Ipv4Addr;
