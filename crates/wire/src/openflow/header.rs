//! The 8-byte OpenFlow header, protocol versions and the message and multipart type codes.
//!
//! Layout (both versions): version (1), type (1), length (2, the whole message, header included),
//! xid (4). Type codes differ between OpenFlow 1.0 ([`Type10`]) and 1.3 ([`Type13`]) from 15 on.

use crate::field::{read_u16, read_u32, write_u16, write_u32};
use crate::{Error, Result};
use core::fmt;

/// Length of the OpenFlow header.
pub const HEADER_LEN: usize = 8;

/// The wire version byte; any value is kept, only [`Version::V1_0`] and [`Version::V1_3`] are
/// modelled beyond hello, error and echo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version(pub u8);

impl Version {
    /// OpenFlow 1.0 (wire version 1).
    pub const V1_0: Version = Version(1);
    /// OpenFlow 1.3 (wire version 4).
    pub const V1_3: Version = Version(4);

    /// True for the versions this crate models (1.0 and 1.3).
    pub fn is_supported(self) -> bool {
        self == Self::V1_0 || self == Self::V1_3
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::V1_0 => f.write_str("1.0"),
            Self::V1_3 => f.write_str("1.3"),
            Version(2) => f.write_str("1.1"),
            Version(3) => f.write_str("1.2"),
            Version(5) => f.write_str("1.4"),
            Version(6) => f.write_str("1.5"),
            Version(v) => write!(f, "0x{v:02x}"),
        }
    }
}

macro_rules! codes {
    ($(#[$m:meta])* $name:ident : $repr:ty { $($var:ident = $code:expr, $s:expr;)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $(#[doc = concat!("`", $s, "` (", stringify!($code), ").")] $var,)*
        }
        impl $name {
            /// Every value, in code order.
            pub const ALL: &'static [$name] = &[$($name::$var,)*];
            /// Decodes a type code; `None` for codes the specification does not define.
            pub fn from_code(c: $repr) -> Option<$name> {
                match c {
                    $($code => Some($name::$var),)*
                    _ => None,
                }
            }
            /// The type code.
            pub fn code(self) -> $repr {
                match self {
                    $($name::$var => $code,)*
                }
            }
            /// The specification's name without its prefix, lower-cased.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$var => $s,)*
                }
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

codes! {
    /// OpenFlow 1.0 message types (`OFPT_*`).
    Type10: u8 {
        Hello = 0, "hello";
        Error = 1, "error";
        EchoRequest = 2, "echo_request";
        EchoReply = 3, "echo_reply";
        Vendor = 4, "vendor";
        FeaturesRequest = 5, "features_request";
        FeaturesReply = 6, "features_reply";
        GetConfigRequest = 7, "get_config_request";
        GetConfigReply = 8, "get_config_reply";
        SetConfig = 9, "set_config";
        PacketIn = 10, "packet_in";
        FlowRemoved = 11, "flow_removed";
        PortStatus = 12, "port_status";
        PacketOut = 13, "packet_out";
        FlowMod = 14, "flow_mod";
        PortMod = 15, "port_mod";
        StatsRequest = 16, "stats_request";
        StatsReply = 17, "stats_reply";
        BarrierRequest = 18, "barrier_request";
        BarrierReply = 19, "barrier_reply";
        QueueGetConfigRequest = 20, "queue_get_config_request";
        QueueGetConfigReply = 21, "queue_get_config_reply";
    }
}

codes! {
    /// OpenFlow 1.3 message types (`OFPT_*`).
    Type13: u8 {
        Hello = 0, "hello";
        Error = 1, "error";
        EchoRequest = 2, "echo_request";
        EchoReply = 3, "echo_reply";
        Experimenter = 4, "experimenter";
        FeaturesRequest = 5, "features_request";
        FeaturesReply = 6, "features_reply";
        GetConfigRequest = 7, "get_config_request";
        GetConfigReply = 8, "get_config_reply";
        SetConfig = 9, "set_config";
        PacketIn = 10, "packet_in";
        FlowRemoved = 11, "flow_removed";
        PortStatus = 12, "port_status";
        PacketOut = 13, "packet_out";
        FlowMod = 14, "flow_mod";
        GroupMod = 15, "group_mod";
        PortMod = 16, "port_mod";
        TableMod = 17, "table_mod";
        MultipartRequest = 18, "multipart_request";
        MultipartReply = 19, "multipart_reply";
        BarrierRequest = 20, "barrier_request";
        BarrierReply = 21, "barrier_reply";
        QueueGetConfigRequest = 22, "queue_get_config_request";
        QueueGetConfigReply = 23, "queue_get_config_reply";
        RoleRequest = 24, "role_request";
        RoleReply = 25, "role_reply";
        GetAsyncRequest = 26, "get_async_request";
        GetAsyncReply = 27, "get_async_reply";
        SetAsync = 28, "set_async";
        MeterMod = 29, "meter_mod";
    }
}

codes! {
    /// Statistics (OpenFlow 1.0 `OFPST_*`) and multipart (OpenFlow 1.3 `OFPMP_*`) body types.
    ///
    /// OpenFlow 1.0 defines desc to queue (its `OFPST_PORT` is [`MultipartType::PortStats`]) and
    /// vendor (0xffff, [`MultipartType::Experimenter`]); the others are 1.3 only.
    MultipartType: u16 {
        Desc = 0, "desc";
        Flow = 1, "flow";
        Aggregate = 2, "aggregate";
        Table = 3, "table";
        PortStats = 4, "port_stats";
        Queue = 5, "queue";
        Group = 6, "group";
        GroupDesc = 7, "group_desc";
        GroupFeatures = 8, "group_features";
        Meter = 9, "meter";
        MeterConfig = 10, "meter_config";
        MeterFeatures = 11, "meter_features";
        TableFeatures = 12, "table_features";
        PortDesc = 13, "port_desc";
        Experimenter = 0xffff, "experimenter";
    }
}

/// The message type name for a version and code ("hello", "flow_mod", ...), if the version is
/// modelled and the code defined (hello, error and the echoes are named for every version).
pub fn type_name(version: Version, code: u8) -> Option<&'static str> {
    match version {
        Version::V1_0 => Type10::from_code(code).map(Type10::name),
        Version::V1_3 => Type13::from_code(code).map(Type13::name),
        _ if code <= 3 => Type13::from_code(code).map(Type13::name),
        _ => None,
    }
}

mod f {
    pub const VERSION: usize = 0;
    pub const TYPE: usize = 1;
    pub const LENGTH: usize = 2;
    pub const XID: usize = 4;
}

/// A zero-copy view of one OpenFlow message: the header and the body its length field covers.
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
    /// Checks that the header is present, that its length field covers at least the header and
    /// that the buffer holds that many bytes (it may hold more: the next message).
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let len = usize::from(read_u16(b, f::LENGTH));
        if len < HEADER_LEN {
            return Err(Error::Malformed("openflow length below header length"));
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
    /// The version byte.
    pub fn version(&self) -> Version {
        Version(self.buffer.as_ref()[f::VERSION])
    }
    /// The raw message type code (see [`Type10`] / [`Type13`]).
    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref()[f::TYPE]
    }
    /// The length field: bytes in the whole message, header included.
    pub fn length(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::LENGTH)
    }
    /// The transaction id.
    pub fn xid(&self) -> u32 {
        read_u32(self.buffer.as_ref(), f::XID)
    }
    /// The body: the bytes after the header, up to the length field.
    pub fn body(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..usize::from(self.length())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the version byte.
    pub fn set_version(&mut self, v: Version) {
        self.buffer.as_mut()[f::VERSION] = v.0;
    }
    /// Sets the message type code.
    pub fn set_msg_type(&mut self, t: u8) {
        self.buffer.as_mut()[f::TYPE] = t;
    }
    /// Sets the length field.
    pub fn set_length(&mut self, len: u16) {
        write_u16(self.buffer.as_mut(), f::LENGTH, len);
    }
    /// Sets the transaction id.
    pub fn set_xid(&mut self, xid: u32) {
        write_u32(self.buffer.as_mut(), f::XID, xid);
    }
    /// Mutable body (up to the length field).
    pub fn body_mut(&mut self) -> &mut [u8] {
        let end = usize::from(self.length());
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn type_codes_match_the_specs() {
        assert_eq!(Type10::ALL.len(), 22);
        assert_eq!(Type13::ALL.len(), 30);
        for (i, t) in Type10::ALL.iter().enumerate() {
            assert_eq!(usize::from(t.code()), i);
            assert_eq!(Type10::from_code(t.code()), Some(*t));
        }
        for (i, t) in Type13::ALL.iter().enumerate() {
            assert_eq!(usize::from(t.code()), i);
            assert_eq!(Type13::from_code(t.code()), Some(*t));
        }
        assert_eq!(Type10::StatsRequest.code(), 16);
        assert_eq!(Type10::BarrierRequest.name(), "barrier_request");
        assert_eq!(Type13::MultipartReply.code(), 19);
        assert_eq!(Type13::MeterMod.code(), 29);
        assert_eq!(Type13::QueueGetConfigReply.name(), "queue_get_config_reply");
        assert_eq!(Type10::from_code(22), None);
        assert_eq!(Type13::from_code(30), None);
        assert_eq!(MultipartType::from_code(0xffff), Some(MultipartType::Experimenter));
        assert_eq!(MultipartType::PortDesc.code(), 13);
        assert_eq!(MultipartType::PortStats.name(), "port_stats");
        assert_eq!(MultipartType::ALL.len(), 15);
        assert_eq!(type_name(Version::V1_0, 14), Some("flow_mod"));
        assert_eq!(type_name(Version::V1_3, 15), Some("group_mod"));
        assert_eq!(type_name(Version(5), 0), Some("hello"));
        assert_eq!(type_name(Version(5), 14), None);
    }

    #[test]
    fn header_view_reads_and_writes() {
        // An OF1.3 echo request, xid 0x01020304, body "hi", then the start of another message.
        let b = [4u8, 2, 0, 10, 1, 2, 3, 4, b'h', b'i', 4, 0];
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.version(), Version::V1_3);
        assert_eq!(p.msg_type(), 2);
        assert_eq!(p.length(), 10);
        assert_eq!(p.xid(), 0x0102_0304);
        assert_eq!(p.body(), b"hi");
        let mut out = [0u8; 10];
        let mut q = Packet::new_unchecked(&mut out[..]);
        q.set_version(Version::V1_3);
        q.set_msg_type(2);
        q.set_length(10);
        q.set_xid(0x0102_0304);
        q.body_mut().copy_from_slice(b"hi");
        assert_eq!(out[..], b[..10]);
        assert_eq!(Packet::new_checked(&b[..9]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&b[..7]).unwrap_err(), Error::Truncated);
        assert!(matches!(
            Packet::new_checked(&[1u8, 0, 0, 7, 0, 0, 0, 0][..]),
            Err(Error::Malformed(_))
        ));
        assert_eq!(Version::V1_3.to_string(), "1.3");
    }

    proptest! {
        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..32)) {
            if let Ok(p) = Packet::new_checked(&data[..]) {
                let _ = (p.version(), p.msg_type(), p.xid(), p.body());
            }
        }
    }
}
