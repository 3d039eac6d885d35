//! Reading pcap and pcapng traces, and writing pcap with nanosecond timestamps.
//!
//! [`TraceReader`] sniffs the magic number and streams packets from either format through one
//! buffered reader (memory stays bounded whatever the file size). It is lenient where real
//! captures need it: a snapped capture (`orig_len` above the snap length) is fine, and pcapng
//! timestamps honour each interface's `if_tsresol` and `if_tsoffset`.
//! [`TraceWriter`] writes classic pcap, nanosecond resolution, as Wireshark reads it.

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};
use std::io::{Read, Write};
use std::time::Duration;

/// A link-layer header type (the tcpdump.org LINKTYPE_ registry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkType(pub u32);

impl LinkType {
    /// IEEE 802.3 Ethernet.
    pub const ETHERNET: LinkType = LinkType(1);
    /// Raw IP, no link header (the first nibble says the version).
    pub const RAW: LinkType = LinkType(101);
    /// Linux "cooked" capture v1 (`tcpdump -i any`).
    pub const LINUX_SLL: LinkType = LinkType(113);
    /// Raw IPv4.
    pub const IPV4: LinkType = LinkType(228);
    /// The first private type, LINKTYPE_USER0: Axon links, whose frames start with the Axon
    /// header (`tools/wireshark/axon.lua` claims it).
    pub const USER0: LinkType = LinkType(147);
}

/// Why a trace could not be read.
#[derive(Debug)]
pub enum TraceError {
    /// The underlying reader or writer failed.
    Io(std::io::Error),
    /// The first bytes are neither a pcap nor a pcapng magic number.
    NotATrace([u8; 4]),
    /// The file ended in the middle of a record (`packets` records were read before it).
    Truncated {
        /// Records read before the cut.
        packets: u64,
    },
    /// A record is malformed; `packets` records were read before it.
    Malformed {
        /// Records read before the bad one.
        packets: u64,
        /// What was wrong.
        what: String,
    },
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceError::Io(e) => write!(f, "{e}"),
            TraceError::NotATrace(m) => write!(
                f,
                "not a pcap or pcapng file (starts with {:02x} {:02x} {:02x} {:02x})",
                m[0], m[1], m[2], m[3]
            ),
            TraceError::Truncated { packets } => write!(f, "file is cut short after packet {packets}"),
            TraceError::Malformed { packets, what } => write!(f, "bad record after packet {packets}: {what}"),
        }
    }
}

impl std::error::Error for TraceError {}

impl From<std::io::Error> for TraceError {
    fn from(e: std::io::Error) -> Self {
        TraceError::Io(e)
    }
}

fn convert(e: PcapError, packets: u64) -> TraceError {
    match e {
        PcapError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => TraceError::Truncated { packets },
        PcapError::IoError(io) => TraceError::Io(io),
        PcapError::IncompleteBuffer => TraceError::Truncated { packets },
        other => TraceError::Malformed {
            packets,
            what: other.to_string(),
        },
    }
}

/// One captured packet, borrowed from the reader's buffer until the next call.
#[derive(Debug, Clone, Copy)]
pub struct TracePacket<'a> {
    /// Capture time, nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// Length of the packet on the wire (may exceed `data.len()` in a snapped capture).
    pub orig_len: u32,
    /// The captured bytes, starting with the link-layer header.
    pub data: &'a [u8],
    /// How to read `data`'s first bytes.
    pub linktype: LinkType,
}

/// Per-interface facts a pcapng reader needs to turn raw timestamps into nanoseconds.
#[derive(Debug, Clone, Copy)]
struct NgInterface {
    linktype: LinkType,
    /// Timestamp unit: (numerator, denominator) of a nanosecond multiplier.
    unit: TsUnit,
    offset_s: u64,
}

/// A pcapng `if_tsresol` value as an exact conversion to nanoseconds.
#[derive(Debug, Clone, Copy)]
enum TsUnit {
    /// 10^-exp seconds.
    Decimal(u32),
    /// 2^-exp seconds.
    Binary(u32),
}

impl TsUnit {
    fn from_option(v: u8) -> TsUnit {
        if v & 0x80 == 0 {
            TsUnit::Decimal(u32::from(v))
        } else {
            TsUnit::Binary(u32::from(v & 0x7f))
        }
    }

    fn to_ns(self, raw: u64) -> u64 {
        match self {
            TsUnit::Decimal(e) if e <= 9 => raw.saturating_mul(10u64.pow(9 - e)),
            TsUnit::Decimal(e) => raw / 10u64.saturating_pow(e - 9),
            TsUnit::Binary(e) => {
                let ns = (u128::from(raw) * 1_000_000_000) >> e.min(127);
                u64::try_from(ns).unwrap_or(u64::MAX)
            }
        }
    }
}

enum Inner<R: Read> {
    Pcap {
        reader: PcapReader<R>,
        nanos: bool,
        linktype: LinkType,
    },
    PcapNg {
        reader: Box<PcapNgReader<R>>,
        interfaces: Vec<NgInterface>,
        scratch: Vec<u8>,
    },
}

/// Streams packets from a pcap or pcapng trace.
pub struct TraceReader<R: Read> {
    inner: Inner<std::io::Chain<std::io::Cursor<[u8; 4]>, R>>,
    packets: u64,
}

const PCAP_MAGICS: [[u8; 4]; 4] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
];
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

/// Whether `head` (a file's first bytes) starts with a pcap (either byte order, micro- or
/// nanosecond) or pcapng magic number: what [`TraceReader::new`] accepts, for a caller that
/// peeks before choosing a reader.
pub fn looks_like_trace(head: &[u8]) -> bool {
    head.get(..4)
        .and_then(|m| <[u8; 4]>::try_from(m).ok())
        .is_some_and(|m| PCAP_MAGICS.contains(&m) || m == PCAPNG_MAGIC)
}

impl<R: Read> TraceReader<R> {
    /// Reads the file header and picks the format from its magic number.
    pub fn new(mut reader: R) -> Result<Self, TraceError> {
        let mut magic = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            match reader.read(&mut magic[got..])? {
                0 => break,
                n => got += n,
            }
        }
        if got < 4 {
            return Err(TraceError::NotATrace(magic));
        }
        let chained = std::io::Read::chain(std::io::Cursor::new(magic), reader);
        let inner = if PCAP_MAGICS.contains(&magic) {
            let reader = PcapReader::new(chained).map_err(|e| convert(e, 0))?;
            let h = reader.header();
            Inner::Pcap {
                nanos: h.ts_resolution == TsResolution::NanoSecond,
                linktype: LinkType(u32::from(h.datalink)),
                reader,
            }
        } else if magic == PCAPNG_MAGIC {
            let reader = PcapNgReader::new(chained).map_err(|e| convert(e, 0))?;
            Inner::PcapNg {
                reader: Box::new(reader),
                interfaces: Vec::new(),
                scratch: Vec::new(),
            }
        } else {
            return Err(TraceError::NotATrace(magic));
        };
        Ok(TraceReader { inner, packets: 0 })
    }

    /// Packets returned so far.
    pub fn packets_read(&self) -> u64 {
        self.packets
    }

    /// The next packet, `None` at the end of the file.
    #[allow(clippy::should_implement_trait)]
    pub fn next_packet(&mut self) -> Option<Result<TracePacket<'_>, TraceError>> {
        let packets = self.packets;
        match &mut self.inner {
            Inner::Pcap {
                reader,
                nanos,
                linktype,
            } => {
                let raw = match reader.next_raw_packet()? {
                    Ok(raw) => raw,
                    Err(e) => return Some(Err(convert(e, packets))),
                };
                let frac = if *nanos {
                    u64::from(raw.ts_frac)
                } else {
                    u64::from(raw.ts_frac) * 1000
                };
                if frac >= 1_000_000_000 {
                    return Some(Err(TraceError::Malformed {
                        packets,
                        what: "timestamp fraction >= 1 s".into(),
                    }));
                }
                let data: &[u8] = match raw.data {
                    std::borrow::Cow::Borrowed(d) => d,
                    std::borrow::Cow::Owned(_) => {
                        return Some(Err(TraceError::Malformed {
                            packets,
                            what: "unexpected owned record".into(),
                        }))
                    }
                };
                self.packets += 1;
                Some(Ok(TracePacket {
                    ts_ns: u64::from(raw.ts_sec) * 1_000_000_000 + frac,
                    orig_len: raw.orig_len.max(raw.incl_len),
                    data,
                    linktype: *linktype,
                }))
            }
            Inner::PcapNg {
                reader,
                interfaces,
                scratch,
            } => {
                // The packet is copied into `scratch` so that the loop's borrow of the reader ends
                // before the slice is handed out.
                let (ts_ns, orig_len, linktype) = loop {
                    let block = match reader.next_block()? {
                        Ok(b) => b,
                        Err(e) => return Some(Err(convert(e, packets))),
                    };
                    match block {
                        Block::SectionHeader(_) => interfaces.clear(),
                        Block::InterfaceDescription(idb) => {
                            let mut unit = TsUnit::Decimal(6);
                            let mut offset_s = 0;
                            for opt in &idb.options {
                                match opt {
                                    InterfaceDescriptionOption::IfTsResol(v) => unit = TsUnit::from_option(*v),
                                    InterfaceDescriptionOption::IfTsOffset(o) => offset_s = *o,
                                    _ => {}
                                }
                            }
                            let linktype = LinkType(u32::from(idb.linktype));
                            interfaces.push(NgInterface {
                                linktype,
                                unit,
                                offset_s,
                            });
                        }
                        Block::EnhancedPacket(epb) => {
                            let Some(ifc) = interfaces.get(epb.interface_id as usize).copied() else {
                                let what =
                                    format!("packet names interface {} that was never described", epb.interface_id);
                                return Some(Err(TraceError::Malformed { packets, what }));
                            };
                            // pcap-file hands back the raw 64-bit count as if it were nanoseconds.
                            let raw = epb.timestamp.as_nanos() as u64;
                            let ts = ifc
                                .unit
                                .to_ns(raw)
                                .saturating_add(ifc.offset_s.saturating_mul(1_000_000_000));
                            scratch.clear();
                            scratch.extend_from_slice(&epb.data);
                            break (ts, epb.original_len.max(scratch.len() as u32), ifc.linktype);
                        }
                        Block::SimplePacket(spb) => {
                            let Some(ifc) = interfaces.first().copied() else {
                                continue;
                            };
                            scratch.clear();
                            scratch.extend_from_slice(&spb.data);
                            // Simple packet blocks carry no timestamp.
                            break (0, spb.original_len.max(scratch.len() as u32), ifc.linktype);
                        }
                        _ => {}
                    }
                };
                self.packets += 1;
                Some(Ok(TracePacket {
                    ts_ns,
                    orig_len,
                    data: scratch,
                    linktype,
                }))
            }
        }
    }
}

/// Writes a classic pcap file with nanosecond timestamps.
pub struct TraceWriter<W: Write> {
    writer: PcapWriter<W>,
    snaplen: u32,
}

impl<W: Write> TraceWriter<W> {
    /// Starts a file of the given link type; `snaplen` is the most bytes kept of each packet.
    pub fn new(writer: W, linktype: LinkType, snaplen: u32) -> Result<Self, TraceError> {
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen,
            datalink: DataLink::from(linktype.0),
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::native(),
        };
        let writer = PcapWriter::with_header(writer, header).map_err(|e| convert(e, 0))?;
        Ok(TraceWriter { writer, snaplen })
    }

    /// Starts an Ethernet file that keeps whole packets (snap length 262,144 as tcpdump's).
    pub fn ethernet(writer: W) -> Result<Self, TraceError> {
        Self::new(writer, LinkType::ETHERNET, 262_144)
    }

    /// Writes one packet captured at `ts_ns`; bytes past the snap length are cut, and
    /// `orig_len` (if larger than `data`) records the length on the wire.
    pub fn write(&mut self, ts_ns: u64, data: &[u8], orig_len: u32) -> Result<(), TraceError> {
        let keep = data.len().min(self.snaplen as usize);
        let orig = orig_len.max(data.len() as u32);
        let pkt = PcapPacket::new(Duration::from_nanos(ts_ns), orig, &data[..keep]);
        self.writer.write_packet(&pkt).map_err(|e| convert(e, 0))?;
        Ok(())
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(self) -> W {
        self.writer.into_writer()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers_are_recognised_without_reading() {
        for m in PCAP_MAGICS.iter().chain([&PCAPNG_MAGIC]) {
            assert!(looks_like_trace(&[m.as_slice(), &[0; 20]].concat()));
        }
        assert!(!looks_like_trace(b"\x01\x00\x00\x08"));
        assert!(!looks_like_trace(&PCAPNG_MAGIC[..3]));
    }

    #[test]
    fn pcap_round_trip_keeps_nanoseconds() {
        let mut w = TraceWriter::ethernet(Vec::new()).unwrap();
        w.write(1_700_000_000_123_456_789, &[1, 2, 3], 60).unwrap();
        w.write(1_700_000_001_000_000_001, &[4; 14], 14).unwrap();
        let bytes = w.into_inner();
        let mut r = TraceReader::new(&bytes[..]).unwrap();
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!(
            (p.ts_ns, p.orig_len, p.data, p.linktype),
            (1_700_000_000_123_456_789, 60, &[1u8, 2, 3][..], LinkType::ETHERNET)
        );
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!(p.ts_ns, 1_700_000_001_000_000_001);
        assert!(r.next_packet().is_none());
        assert_eq!(r.packets_read(), 2);
    }

    #[test]
    fn snapped_capture_is_accepted() {
        // Microsecond pcap, snaplen 16, one record of 16 captured bytes out of 1514.
        let mut b = vec![
            0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0,
        ];
        b.extend_from_slice(&[10, 0, 0, 0, 7, 0, 0, 0, 16, 0, 0, 0, 0xea, 5, 0, 0]);
        b.extend_from_slice(&[0xaa; 16]);
        let mut r = TraceReader::new(&b[..]).unwrap();
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!((p.ts_ns, p.orig_len, p.data.len()), (10_000_007_000, 1514, 16));
    }

    #[test]
    fn truncated_and_foreign_files_are_errors() {
        let mut w = TraceWriter::ethernet(Vec::new()).unwrap();
        w.write(5, &[9; 40], 40).unwrap();
        let bytes = w.into_inner();
        let mut r = TraceReader::new(&bytes[..bytes.len() - 5]).unwrap();
        assert!(matches!(
            r.next_packet(),
            Some(Err(TraceError::Truncated { packets: 0 }))
        ));
        assert!(matches!(
            TraceReader::new(&b"hello world"[..]),
            Err(TraceError::NotATrace(_))
        ));
        assert!(matches!(TraceReader::new(&b"ab"[..]), Err(TraceError::NotATrace(_))));
    }

    /// A minimal pcapng: SHB, IDB (Ethernet, if_tsresol = 9 i.e. ns), one EPB.
    fn pcapng(tsresol: Option<u8>, ts: u64) -> Vec<u8> {
        let mut b = Vec::new();
        let le32 = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_le_bytes());
        // SHB: type, len 28, BOM, v1.0, section length -1, len.
        le32(&mut b, 0x0a0d0d0a);
        le32(&mut b, 28);
        le32(&mut b, 0x1a2b3c4d);
        b.extend_from_slice(&[1, 0, 0, 0]);
        b.extend_from_slice(&[0xff; 8]);
        le32(&mut b, 28);
        // IDB: type 1, linktype 1, reserved, snaplen, [if_tsresol option, end], len.
        let idb_len = if tsresol.is_some() { 32 } else { 20 };
        le32(&mut b, 1);
        le32(&mut b, idb_len);
        b.extend_from_slice(&[1, 0, 0, 0]);
        le32(&mut b, 65535);
        if let Some(r) = tsresol {
            b.extend_from_slice(&[9, 0, 1, 0, r, 0, 0, 0]);
            b.extend_from_slice(&[0, 0, 0, 0]);
        }
        le32(&mut b, idb_len);
        // EPB: type 6, len 32 + 4 data, iface 0, ts hi, ts lo, caplen 4, origlen 64, data, len.
        le32(&mut b, 6);
        le32(&mut b, 36);
        le32(&mut b, 0);
        le32(&mut b, (ts >> 32) as u32);
        le32(&mut b, ts as u32);
        le32(&mut b, 4);
        le32(&mut b, 64);
        b.extend_from_slice(&[1, 2, 3, 4]);
        le32(&mut b, 36);
        b
    }

    #[test]
    fn pcapng_honours_if_tsresol() {
        let b = pcapng(Some(9), 1_234_567_890_123);
        let mut r = TraceReader::new(&b[..]).unwrap();
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!(
            (p.ts_ns, p.orig_len, p.data),
            (1_234_567_890_123, 64, &[1u8, 2, 3, 4][..])
        );
        // Default resolution is microseconds.
        let b = pcapng(None, 1_500_000);
        let mut r = TraceReader::new(&b[..]).unwrap();
        assert_eq!(r.next_packet().unwrap().unwrap().ts_ns, 1_500_000_000);
        assert!(r.next_packet().is_none());
    }

    #[test]
    fn binary_resolution_converts_exactly() {
        assert_eq!(TsUnit::from_option(0x80 | 10).to_ns(1024), 1_000_000_000);
        assert_eq!(TsUnit::from_option(3).to_ns(5), 5_000_000);
        assert_eq!(TsUnit::from_option(12).to_ns(5_000), 5);
    }
}
