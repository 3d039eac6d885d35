//! Bodies of the controller-handshake messages: hello (with the OpenFlow 1.3 version bitmap),
//! error, features reply and switch configuration. Echo and barrier bodies need no type.
//!
//! Every body type reads from and writes to the bytes after the 8-byte header; [`super::Message`]
//! adds the header.

use super::{need, read_u64, write_u64, Version};
use crate::ethernet::MacAddr;
use crate::field::{read_u16, read_u32, write_u16, write_u32};
use crate::{Error, Result};

/// Hello element type of the version bitmap (`OFPHET_VERSIONBITMAP`).
pub const HELLO_ELEM_VERSION_BITMAP: u16 = 1;

/// One OpenFlow 1.3 hello element.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HelloElement {
    /// The versions the sender supports: bit `v % 32` of word `v / 32` is set for version `v`.
    VersionBitmap(Vec<u32>),
    /// An element type this crate does not model, kept with its data (padding excluded).
    Unknown {
        /// Element type.
        kind: u16,
        /// Element data after the 4-byte element header.
        data: Vec<u8>,
    },
}

impl HelloElement {
    fn data_len(&self) -> usize {
        match self {
            HelloElement::VersionBitmap(w) => 4 * w.len(),
            HelloElement::Unknown { data, .. } => data.len(),
        }
    }
    fn padded_len(&self) -> usize {
        (4 + self.data_len()).div_ceil(8) * 8
    }
}

/// A hello body: a list of elements (empty in OpenFlow 1.0 and in minimal 1.3 hellos).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Hello {
    /// The elements, in wire order.
    pub elements: Vec<HelloElement>,
}

impl Hello {
    /// A hello advertising exactly `versions` in a version bitmap.
    pub fn with_versions(versions: &[Version]) -> Hello {
        let words = versions.iter().map(|v| usize::from(v.0) / 32 + 1).max().unwrap_or(0);
        let mut bitmap = vec![0u32; words];
        for v in versions {
            bitmap[usize::from(v.0) / 32] |= 1 << (v.0 % 32);
        }
        Hello {
            elements: vec![HelloElement::VersionBitmap(bitmap)],
        }
    }

    /// The first version bitmap, if the hello carries one.
    pub fn bitmap(&self) -> Option<&[u32]> {
        self.elements.iter().find_map(|e| match e {
            HelloElement::VersionBitmap(w) => Some(&w[..]),
            HelloElement::Unknown { .. } => None,
        })
    }

    /// Reads a hello body. Each element must be followed by its padding to 8 bytes.
    pub fn parse(body: &[u8]) -> Result<Hello> {
        let mut elements = Vec::new();
        let mut at = 0;
        while at < body.len() {
            need(body, at + 4)?;
            let kind = read_u16(body, at);
            let len = usize::from(read_u16(body, at + 2));
            if len < 4 {
                return Err(Error::Malformed("hello element length below 4"));
            }
            need(body, at + len)?;
            let data = &body[at + 4..at + len];
            elements.push(if kind == HELLO_ELEM_VERSION_BITMAP {
                if !data.len().is_multiple_of(4) {
                    return Err(Error::Malformed("version bitmap not a multiple of 4 bytes"));
                }
                HelloElement::VersionBitmap(data.chunks_exact(4).map(|c| read_u32(c, 0)).collect())
            } else {
                HelloElement::Unknown {
                    kind,
                    data: data.to_vec(),
                }
            });
            at += len.div_ceil(8) * 8;
            need(body, at)?;
        }
        Ok(Hello { elements })
    }

    /// Body bytes this hello emits (each element padded to 8 bytes).
    pub fn buffer_len(&self) -> usize {
        self.elements.iter().map(HelloElement::padded_len).sum()
    }

    /// Writes the body into the start of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        need(buf, self.buffer_len())?;
        let mut at = 0;
        for e in &self.elements {
            let len = u16::try_from(4 + e.data_len()).map_err(|_| Error::Malformed("hello element too long"))?;
            let padded = e.padded_len();
            buf[at..at + padded].fill(0);
            match e {
                HelloElement::VersionBitmap(words) => {
                    write_u16(buf, at, HELLO_ELEM_VERSION_BITMAP);
                    for (i, w) in words.iter().enumerate() {
                        write_u32(buf, at + 4 + 4 * i, *w);
                    }
                }
                HelloElement::Unknown { kind, data } => {
                    write_u16(buf, at, *kind);
                    buf[at + 4..at + 4 + data.len()].copy_from_slice(data);
                }
            }
            write_u16(buf, at + 2, len);
            at += padded;
        }
        Ok(())
    }
}

fn bitmap_has(bitmap: &[u32], v: Version) -> bool {
    bitmap
        .get(usize::from(v.0) / 32)
        .is_some_and(|w| w & (1 << (v.0 % 32)) != 0)
}

/// Version negotiation (OpenFlow 1.3.1, section 6.3.1) from our hello and the peer's, each with the
/// version in its header. When both carry a version bitmap the result is the highest version set
/// in both; otherwise it is the smaller header version. `None` when that is not a version this
/// crate models (1.0 or 1.3), i.e. the connection must be refused with a hello-failed error.
pub fn negotiate(ours: (Version, &Hello), theirs: (Version, &Hello)) -> Option<Version> {
    match (ours.1.bitmap(), theirs.1.bitmap()) {
        (Some(a), Some(b)) => [Version::V1_3, Version::V1_0]
            .into_iter()
            .find(|v| bitmap_has(a, *v) && bitmap_has(b, *v)),
        _ => Some(ours.0.min(theirs.0)).filter(|v| v.is_supported()),
    }
}

/// An error message body: type, code and (usually) the start of the offending request.
///
/// OpenFlow 1.3 experimenter errors (type 0xffff) keep their `exp_type` in `code` and the
/// experimenter id as the first four bytes of `data`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ErrorMsg {
    /// Error type (`OFPET_*`).
    pub kind: u16,
    /// Error code within the type.
    pub code: u16,
    /// Data, typically at least 64 bytes of the failed request.
    pub data: Vec<u8>,
}

impl ErrorMsg {
    /// Hello failed (type 0), incompatible (code 0).
    pub const HELLO_FAILED_INCOMPATIBLE: (u16, u16) = (0, 0);

    /// Reads an error body.
    pub fn parse(body: &[u8]) -> Result<ErrorMsg> {
        need(body, 4)?;
        Ok(ErrorMsg {
            kind: read_u16(body, 0),
            code: read_u16(body, 2),
            data: body[4..].to_vec(),
        })
    }
    /// Body bytes this error emits.
    pub fn buffer_len(&self) -> usize {
        4 + self.data.len()
    }
    /// Writes the body into the start of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        need(buf, self.buffer_len())?;
        write_u16(buf, 0, self.kind);
        write_u16(buf, 2, self.code);
        buf[4..4 + self.data.len()].copy_from_slice(&self.data);
        Ok(())
    }
}

/// Length of an OpenFlow 1.0 `ofp_phy_port`.
pub const PHY_PORT10_LEN: usize = 48;

/// An OpenFlow 1.0 physical port description (`ofp_phy_port`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PhyPort10 {
    /// Port number.
    pub port_no: u16,
    /// Hardware address.
    pub hw_addr: MacAddr,
    /// Name, NUL-padded.
    pub name: [u8; 16],
    /// `OFPPC_*` configuration bits.
    pub config: u32,
    /// `OFPPS_*` state bits.
    pub state: u32,
    /// Current features (`OFPPF_*`).
    pub curr: u32,
    /// Advertised features.
    pub advertised: u32,
    /// Supported features.
    pub supported: u32,
    /// Features advertised by the peer.
    pub peer: u32,
}

impl PhyPort10 {
    /// The name up to its first NUL (lossy UTF-8).
    pub fn name_str(&self) -> String {
        let end = self.name.iter().position(|&c| c == 0).unwrap_or(16);
        String::from_utf8_lossy(&self.name[..end]).into_owned()
    }
    /// Reads a port from the first 48 bytes of `b`.
    pub fn parse(b: &[u8]) -> Result<PhyPort10> {
        need(b, PHY_PORT10_LEN)?;
        let mut name = [0u8; 16];
        name.copy_from_slice(&b[8..24]);
        Ok(PhyPort10 {
            port_no: read_u16(b, 0),
            hw_addr: MacAddr::from_bytes(&b[2..8]),
            name,
            config: read_u32(b, 24),
            state: read_u32(b, 28),
            curr: read_u32(b, 32),
            advertised: read_u32(b, 36),
            supported: read_u32(b, 40),
            peer: read_u32(b, 44),
        })
    }
    /// Writes the 48-byte port into the start of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        need(buf, PHY_PORT10_LEN)?;
        write_u16(buf, 0, self.port_no);
        buf[2..8].copy_from_slice(&self.hw_addr.0);
        buf[8..24].copy_from_slice(&self.name);
        for (i, v) in [
            self.config,
            self.state,
            self.curr,
            self.advertised,
            self.supported,
            self.peer,
        ]
        .into_iter()
        .enumerate()
        {
            write_u32(buf, 24 + 4 * i, v);
        }
        Ok(())
    }
}

/// Length of the fixed part of a features reply body (both versions).
pub const FEATURES_FIXED_LEN: usize = 24;

/// A features reply body (`ofp_switch_features`).
///
/// OpenFlow 1.0: datapath_id, n_buffers, n_tables, pad (3), capabilities, actions, then ports.
/// OpenFlow 1.3: datapath_id, n_buffers, n_tables, auxiliary_id, pad (2), capabilities, reserved;
/// no ports (they moved to the port-desc multipart).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FeaturesReply {
    /// Datapath id (low 48 bits: a MAC address).
    pub datapath_id: u64,
    /// Packets the switch can buffer for packet-in.
    pub n_buffers: u32,
    /// Number of tables.
    pub n_tables: u8,
    /// Auxiliary connection id (1.3 only; 0 in 1.0).
    pub auxiliary_id: u8,
    /// `OFPC_*` capability bits.
    pub capabilities: u32,
    /// 1.0: supported action bits; 1.3: the reserved word.
    pub actions: u32,
    /// Ports (1.0 only; empty in 1.3).
    pub ports: Vec<PhyPort10>,
}

impl FeaturesReply {
    /// Reads a features reply body for `version` (1.0 or 1.3).
    pub fn parse(version: Version, body: &[u8]) -> Result<FeaturesReply> {
        need(body, FEATURES_FIXED_LEN)?;
        let mut r = FeaturesReply {
            datapath_id: read_u64(body, 0),
            n_buffers: read_u32(body, 8),
            n_tables: body[12],
            auxiliary_id: 0,
            capabilities: read_u32(body, 16),
            actions: read_u32(body, 20),
            ports: Vec::new(),
        };
        let rest = &body[FEATURES_FIXED_LEN..];
        if version == Version::V1_0 {
            if !rest.len().is_multiple_of(PHY_PORT10_LEN) {
                return Err(Error::Malformed("features reply port list"));
            }
            r.ports = rest
                .chunks_exact(PHY_PORT10_LEN)
                .map(PhyPort10::parse)
                .collect::<Result<_>>()?;
        } else {
            r.auxiliary_id = body[13];
            if !rest.is_empty() {
                return Err(Error::Malformed("features reply longer than 32 bytes"));
            }
        }
        Ok(r)
    }
    /// Body bytes this reply emits.
    pub fn buffer_len(&self) -> usize {
        FEATURES_FIXED_LEN + PHY_PORT10_LEN * self.ports.len()
    }
    /// Writes the body for `version` into the start of `buf`.
    pub fn emit(&self, version: Version, buf: &mut [u8]) -> Result<()> {
        need(buf, self.buffer_len())?;
        if version == Version::V1_0 && self.auxiliary_id != 0 {
            return Err(Error::Malformed("auxiliary_id in an OpenFlow 1.0 features reply"));
        }
        if version != Version::V1_0 && !self.ports.is_empty() {
            return Err(Error::Malformed("ports in an OpenFlow 1.3 features reply"));
        }
        write_u64(buf, 0, self.datapath_id);
        write_u32(buf, 8, self.n_buffers);
        buf[12] = self.n_tables;
        buf[13] = self.auxiliary_id;
        buf[14..16].fill(0);
        write_u32(buf, 16, self.capabilities);
        write_u32(buf, 20, self.actions);
        for (i, p) in self.ports.iter().enumerate() {
            p.emit(&mut buf[FEATURES_FIXED_LEN + PHY_PORT10_LEN * i..])?;
        }
        Ok(())
    }
}

/// Length of a switch configuration body.
pub const SWITCH_CONFIG_LEN: usize = 4;

/// The body of get_config_reply and set_config (`ofp_switch_config`, both versions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SwitchConfig {
    /// `OFPC_FRAG_*` flags.
    pub flags: u16,
    /// Bytes of a table-miss packet sent to the controller.
    pub miss_send_len: u16,
}

impl SwitchConfig {
    /// Reads the 4-byte body.
    pub fn parse(body: &[u8]) -> Result<SwitchConfig> {
        need(body, SWITCH_CONFIG_LEN)?;
        if body.len() != SWITCH_CONFIG_LEN {
            return Err(Error::Malformed("switch config length"));
        }
        Ok(SwitchConfig {
            flags: read_u16(body, 0),
            miss_send_len: read_u16(body, 2),
        })
    }
    /// Body bytes this config emits (4).
    pub fn buffer_len(&self) -> usize {
        SWITCH_CONFIG_LEN
    }
    /// Writes the body into the start of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        need(buf, SWITCH_CONFIG_LEN)?;
        write_u16(buf, 0, self.flags);
        write_u16(buf, 2, self.miss_send_len);
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hello_bitmap_bytes() {
        // Element type 1, length 8, bitmap with bits 1 and 4 (OpenFlow 1.0 and 1.3).
        let body = [0x00, 0x01, 0x00, 0x08, 0x00, 0x00, 0x00, 0x12];
        let h = Hello::parse(&body).unwrap();
        assert_eq!(h, Hello::with_versions(&[Version::V1_0, Version::V1_3]));
        let mut out = [0u8; 8];
        h.emit(&mut out).unwrap();
        assert_eq!(out, body);
        // An element of 4 + 4 bytes is padded; one of 4 + 6 bytes takes 16.
        let odd = Hello {
            elements: vec![HelloElement::Unknown {
                kind: 9,
                data: vec![1, 2, 3, 4, 5, 6],
            }],
        };
        assert_eq!(odd.buffer_len(), 16);
        let mut out = [0xffu8; 16];
        odd.emit(&mut out).unwrap();
        assert_eq!(out, [0, 9, 0, 10, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0]);
        assert_eq!(Hello::parse(&out).unwrap(), odd);
        assert_eq!(Hello::parse(&out[..9]).unwrap_err(), Error::Truncated);
        assert!(Hello::parse(&[0, 1, 0, 2]).is_err());
    }

    #[test]
    fn negotiation() {
        let both = Hello::with_versions(&[Version::V1_0, Version::V1_3]);
        let only10 = Hello::with_versions(&[Version::V1_0]);
        let of14 = Hello::with_versions(&[Version(5)]);
        let none = Hello::default();
        assert_eq!(
            negotiate((Version::V1_3, &both), (Version(5), &both)),
            Some(Version::V1_3)
        );
        assert_eq!(
            negotiate((Version::V1_3, &both), (Version::V1_3, &only10)),
            Some(Version::V1_0)
        );
        assert_eq!(negotiate((Version::V1_3, &both), (Version(5), &of14)), None);
        assert_eq!(
            negotiate((Version::V1_3, &both), (Version::V1_0, &none)),
            Some(Version::V1_0)
        );
        assert_eq!(
            negotiate((Version::V1_3, &none), (Version(5), &none)),
            Some(Version::V1_3)
        );
        assert_eq!(negotiate((Version::V1_3, &none), (Version(2), &none)), None);
    }

    #[test]
    fn features_reply_of10_with_port() {
        let mut body = vec![
            0, 0, 0, 0, 0, 0, 0, 0x2a, // datapath_id 42
            0, 0, 1, 0, // n_buffers 256
            4, 0, 0, 0, // n_tables 4, pad
            0, 0, 0, 0xc7, // capabilities
            0, 0, 0x0f, 0xff, // actions
        ];
        let port: [u8; 48] = [
            0, 1, 2, 0, 0, 0, 0, 1, b'e', b't', b'h', b'1', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        body.extend_from_slice(&port);
        let r = FeaturesReply::parse(Version::V1_0, &body).unwrap();
        assert_eq!(r.datapath_id, 42);
        assert_eq!(r.n_buffers, 256);
        assert_eq!(r.n_tables, 4);
        assert_eq!(r.capabilities, 0xc7);
        assert_eq!(r.actions, 0xfff);
        assert_eq!(r.ports.len(), 1);
        assert_eq!(r.ports[0].port_no, 1);
        assert_eq!(r.ports[0].hw_addr, MacAddr([2, 0, 0, 0, 0, 1]));
        assert_eq!(r.ports[0].name_str(), "eth1");
        assert_eq!(r.ports[0].curr, 0x40);
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(Version::V1_0, &mut out).unwrap();
        assert_eq!(out, body);
        assert!(FeaturesReply::parse(Version::V1_0, &body[..50]).is_err());
        assert!(FeaturesReply::parse(Version::V1_3, &body).is_err());
    }

    #[test]
    fn features_reply_of13() {
        let body = [
            0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 254, 3, 0, 0, 0, 0, 0, 0x4f, 0, 0, 0, 0,
        ];
        let r = FeaturesReply::parse(Version::V1_3, &body).unwrap();
        assert_eq!(
            (r.datapath_id, r.n_tables, r.auxiliary_id, r.capabilities),
            (1, 254, 3, 0x4f)
        );
        let mut out = [0u8; 24];
        r.emit(Version::V1_3, &mut out).unwrap();
        assert_eq!(out, body);
    }

    pub(crate) fn any_hello() -> impl Strategy<Value = Hello> {
        proptest::collection::vec(
            prop_oneof![
                proptest::collection::vec(any::<u32>(), 0..3).prop_map(HelloElement::VersionBitmap),
                (2u16.., proptest::collection::vec(any::<u8>(), 0..12))
                    .prop_map(|(kind, data)| HelloElement::Unknown { kind, data }),
            ],
            0..3,
        )
        .prop_map(|elements| Hello { elements })
    }

    pub(crate) fn any_phy_port() -> impl Strategy<Value = PhyPort10> {
        (any::<u16>(), any::<[u8; 6]>(), any::<[u8; 16]>(), any::<[u32; 6]>()).prop_map(|(p, m, n, w)| PhyPort10 {
            port_no: p,
            hw_addr: MacAddr(m),
            name: n,
            config: w[0],
            state: w[1],
            curr: w[2],
            advertised: w[3],
            supported: w[4],
            peer: w[5],
        })
    }

    pub(crate) fn any_features(version: Version) -> impl Strategy<Value = FeaturesReply> {
        (
            any::<u64>(),
            any::<u32>(),
            any::<u8>(),
            any::<u8>(),
            any::<[u32; 2]>(),
            proptest::collection::vec(any_phy_port(), 0..3),
        )
            .prop_map(move |(d, nb, nt, aux, w, ports)| {
                let v10 = version == Version::V1_0;
                FeaturesReply {
                    datapath_id: d,
                    n_buffers: nb,
                    n_tables: nt,
                    auxiliary_id: if v10 { 0 } else { aux },
                    capabilities: w[0],
                    actions: w[1],
                    ports: if v10 { ports } else { Vec::new() },
                }
            })
    }

    proptest! {
        #[test]
        fn hello_round_trip(h in any_hello()) {
            let mut buf = vec![0u8; h.buffer_len()];
            h.emit(&mut buf).unwrap();
            prop_assert_eq!(Hello::parse(&buf).unwrap(), h);
        }

        #[test]
        fn features_round_trip(v in prop_oneof![Just(Version::V1_0), Just(Version::V1_3)]
                               .prop_flat_map(|v| (Just(v), any_features(v)))) {
            let (version, r) = v;
            let mut buf = vec![0u8; r.buffer_len()];
            r.emit(version, &mut buf).unwrap();
            prop_assert_eq!(FeaturesReply::parse(version, &buf).unwrap(), r);
        }

        #[test]
        fn error_and_config_round_trip(kind in any::<u16>(), code in any::<u16>(),
                                       data in proptest::collection::vec(any::<u8>(), 0..16)) {
            let e = ErrorMsg { kind, code, data };
            let mut buf = vec![0u8; e.buffer_len()];
            e.emit(&mut buf).unwrap();
            prop_assert_eq!(ErrorMsg::parse(&buf).unwrap(), e);
            let c = SwitchConfig { flags: kind, miss_send_len: code };
            let mut buf = [0u8; 4];
            c.emit(&mut buf).unwrap();
            prop_assert_eq!(SwitchConfig::parse(&buf).unwrap(), c);
        }

        #[test]
        fn bodies_never_panic(data in proptest::collection::vec(any::<u8>(), 0..128)) {
            let _ = Hello::parse(&data);
            let _ = ErrorMsg::parse(&data);
            let _ = FeaturesReply::parse(Version::V1_0, &data);
            let _ = FeaturesReply::parse(Version::V1_3, &data);
            let _ = SwitchConfig::parse(&data);
        }
    }
}
