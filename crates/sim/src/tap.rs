//! Pcap taps: turn simulated packets into real Ethernet/IPv4/TCP/UDP frames (zero payload,
//! valid checksums) so Wireshark and tshark open what the simulator sent.
//!
//! Addresses are derived from node ids: host `n` is `10.a.b.c` with `a.b.c` the bytes of
//! `n + 1`, and MAC `02:00:00:a:b:c`.

use crate::packet::{NodeId, Packet, Proto, L2_L3_HEADER, TCP_HEADER};
use crate::time::Time;
use std::io::Write;
use std::net::Ipv4Addr;
use tandem_wire::ethernet::EthernetRepr;
use tandem_wire::ipv4::Ipv4Repr;
use tandem_wire::pcap::{LinkType, TraceError, TraceWriter};
use tandem_wire::tcp::TcpRepr;
use tandem_wire::udp::UdpRepr;
use tandem_wire::{EtherType, IpProtocol, MacAddr};

/// The IPv4 address the tap writes for a node.
pub fn node_ip(n: NodeId) -> Ipv4Addr {
    let b = (n.0 + 1).to_be_bytes();
    Ipv4Addr::new(10, b[1], b[2], b[3])
}

/// The MAC address the tap writes for a node.
pub fn node_mac(n: NodeId) -> MacAddr {
    let b = (n.0 + 1).to_be_bytes();
    MacAddr([0x02, 0, b[0], b[1], b[2], b[3]])
}

/// Turns a simulated packet into frame bytes (payload zeros, checksums valid) in `buf`.
/// Simulated times are written as TCP timestamps in microseconds.
pub fn frame_bytes(p: &Packet, buf: &mut Vec<u8>) {
    let eth = EthernetRepr {
        dst: node_mac(p.dst),
        src: node_mac(p.src),
        vlan: None,
        ethertype: EtherType::IPV4,
    };
    let (src, dst) = (node_ip(p.src), node_ip(p.dst));
    let l4_len = p.size.saturating_sub(L2_L3_HEADER) as usize;
    buf.clear();
    buf.resize(14 + 20 + l4_len, 0);
    let (proto, l4_len) = match p.proto {
        Proto::Tcp => {
            let ts_val = p.ts_val();
            let mut t = TcpRepr {
                src_port: p.src_port,
                dst_port: p.dst_port,
                seq: p.seq,
                ack: p.ack,
                flags: p.flags,
                window: (p.window >> 7).min(u32::from(u16::MAX)) as u16,
                timestamps: (ts_val != 0).then_some(((ts_val / 1_000_000) as u32, (p.ts_ecr / 1_000_000) as u32)),
                payload_len: p.payload as usize,
                ..TcpRepr::default()
            };
            for (i, b) in p.sack_blocks().iter().enumerate() {
                t.sack_blocks[i] = Some(*b);
            }
            if p.flags.contains(tandem_wire::tcp::Flags::SYN) {
                t.mss = Some(1460);
                t.window_scale = Some(7);
                t.sack_permitted = true;
                t.window = p.window.min(u32::from(u16::MAX)) as u16;
            }
            // The frame's length follows the repr; the simulated size only accounts for it.
            let len = t.buffer_len().max(TCP_HEADER as usize);
            buf.resize(14 + 20 + len, 0);
            let _ = t.emit(&mut buf[34..34 + t.buffer_len()], src, dst);
            (IpProtocol::TCP, t.buffer_len())
        }
        Proto::Udp => {
            let u = UdpRepr {
                src_port: p.src_port,
                dst_port: p.dst_port,
                payload_len: p.payload as u16,
            };
            buf.resize(14 + 20 + u.buffer_len(), 0);
            let _ = u.emit(&mut buf[34..], src, dst);
            (IpProtocol::UDP, u.buffer_len())
        }
    };
    let _ = l4_len;
    let ip = Ipv4Repr {
        src,
        dst,
        protocol: proto,
        payload_len: (buf.len() - 34) as u16,
        dscp: 0,
        ecn: p.ecn,
        ident: 0,
        dont_frag: true,
        ttl: 64,
    };
    let _ = eth.emit(buf);
    let _ = ip.emit(&mut buf[14..]);
}

/// A pcap file fed by one port's egress.
pub struct Tap {
    writer: TraceWriter<Box<dyn Write + Send>>,
    buf: Vec<u8>,
    /// Frames written.
    pub frames: u64,
    /// First write error, if any (the tap stops writing after it).
    pub error: Option<TraceError>,
}

impl Tap {
    /// A tap writing to `w` (nanosecond pcap, Ethernet).
    pub fn new(w: Box<dyn Write + Send>) -> Result<Tap, TraceError> {
        Tap::with_link_type(w, LinkType::ETHERNET)
    }
    /// A tap writing frames of another link type (a port whose model sends Axon frames).
    pub fn with_link_type(w: Box<dyn Write + Send>, link_type: LinkType) -> Result<Tap, TraceError> {
        Ok(Tap {
            writer: TraceWriter::new(w, link_type, 262_144)?,
            buf: Vec::with_capacity(2048),
            frames: 0,
            error: None,
        })
    }
    /// Writes one packet sent at `now`: its own frame bytes when a system gave it some
    /// ([`crate::packet::PacketPool::set_frame`]), else the frame its record describes.
    pub fn write(&mut self, now: Time, p: &Packet, frame: Option<&[u8]>) {
        if self.error.is_some() {
            return;
        }
        let data = match frame {
            Some(f) => f,
            None => {
                frame_bytes(p, &mut self.buf);
                &self.buf
            }
        };
        if let Err(e) = self.writer.write(now / 1_000, data, data.len() as u32) {
            self.error = Some(e);
        }
        self.frames += 1;
    }
    /// Flushes and closes the file.
    pub fn finish(self) -> Result<u64, TraceError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut w = self.writer.into_inner();
        w.flush().map_err(TraceError::Io)?;
        Ok(self.frames)
    }
}
