//! `tandem pcap synth`: a deterministic synthetic data-center trace.
//!
//! Hosts sit in four racks (10.0.R.H); rack 3 is on 802.1Q VLAN 103. New conversations start
//! as a Poisson process. Each is one of:
//! * TCP (80%): a Linux-like handshake (MSS, SACK-permitted, timestamps, window scale), data
//!   segments of 1448 bytes paced at a per-flow rate, a delayed ACK for every second segment,
//!   and a FIN exchange. Sizes: 70% 1-20 KB, 25% 20 KB-1 MB, 5% 1-10 MB (log-uniform in each band);
//! * UDP request/response (15%, DNS-like, port 53);
//! * ICMP echo (4%, four request/reply pairs);
//! * ARP who-has and reply (1%).
//!
//! Every checksum is valid. The same seed gives a byte-identical file.

use crate::error::CliError;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::BufWriter;
use std::net::Ipv4Addr;
use std::path::Path;
use tandem_wire::arp::{ArpOperation, ArpRepr};
use tandem_wire::ethernet::{EthernetRepr, VlanTag};
use tandem_wire::icmpv4::Icmpv4Repr;
use tandem_wire::ipv4::{Ecn, Ipv4Repr};
use tandem_wire::pcap::{LinkType, TraceWriter};
use tandem_wire::tcp::{Flags, TcpRepr};
use tandem_wire::udp::UdpRepr;
use tandem_wire::{EtherType, IpProtocol, MacAddr};

/// What to generate.
#[derive(Debug, Clone)]
pub struct SynthConfig {
    /// Packets to write.
    pub packets: u64,
    /// Seed of all randomness.
    pub seed: u64,
    /// Mean gap between conversation starts (ns).
    pub flow_gap_ns: u64,
    /// Bytes kept per packet; 0 keeps all.
    pub snaplen: u32,
}

const START_NS: u64 = 1_700_000_000_000_000_000;
const MSS: usize = 1448;
const RACKS: u8 = 4;
const HOSTS_PER_RACK: u8 = 16;
const TAGGED_RACK: u8 = 3;

#[derive(Debug, Clone, Copy)]
struct Host {
    ip: Ipv4Addr,
    mac: MacAddr,
    vlan: Option<VlanTag>,
}

fn host(rack: u8, idx: u8) -> Host {
    Host {
        ip: Ipv4Addr::new(10, 0, rack, idx + 1),
        mac: MacAddr([0x02, 0, 0, 0, rack, idx + 1]),
        vlan: (rack == TAGGED_RACK).then_some(VlanTag {
            pcp: 0,
            dei: false,
            vid: 100 + u16::from(rack),
        }),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tcp,
    Udp,
    Icmp,
    Arp,
}

/// One conversation and where it is.
#[derive(Debug, Clone)]
struct Conversation {
    kind: Kind,
    client: Host,
    server: Host,
    client_port: u16,
    server_port: u16,
    /// Steps taken so far.
    step: u64,
    /// TCP: bytes the client still has to send, sequence numbers, pacing gap.
    remaining: u64,
    client_seq: u32,
    server_seq: u32,
    gap_ns: u64,
    rtt_ns: u64,
    segments_sent: u64,
    /// The server owes a delayed ACK (every second data segment).
    ack_due: bool,
    /// Where the closing FIN exchange is (0: not started).
    fin_phase: u8,
    ts_base: u32,
}

/// Builds one frame into `buf`.
struct FrameBuilder {
    buf: Vec<u8>,
}

impl FrameBuilder {
    fn ipv4(&mut self, from: &Host, to: &Host, protocol: IpProtocol, l4_len: usize, ident: u16) -> usize {
        let eth = EthernetRepr {
            dst: to.mac,
            src: from.mac,
            vlan: from.vlan.or(to.vlan),
            ethertype: EtherType::IPV4,
        };
        let ip = Ipv4Repr {
            src: from.ip,
            dst: to.ip,
            protocol,
            payload_len: l4_len as u16,
            dscp: 0,
            ecn: if protocol == IpProtocol::TCP {
                Ecn::Ect0
            } else {
                Ecn::NotEct
            },
            ident,
            dont_frag: true,
            ttl: 64,
        };
        let l2 = eth.header_len();
        self.buf.clear();
        self.buf.resize(l2 + ip.total_len(), 0);
        // Both emits write into a buffer sized above: they cannot fail.
        let _ = eth.emit(&mut self.buf);
        let _ = ip.emit(&mut self.buf[l2..]);
        l2 + ip.header_len()
    }

    fn tcp(&mut self, from: &Host, to: &Host, tcp: &TcpRepr, ident: u16) {
        let at = self.ipv4(from, to, IpProtocol::TCP, tcp.buffer_len(), ident);
        let _ = tcp.emit(&mut self.buf[at..], from.ip, to.ip);
    }

    fn udp(&mut self, from: &Host, to: &Host, udp: &UdpRepr, ident: u16) {
        let at = self.ipv4(from, to, IpProtocol::UDP, 8 + usize::from(udp.payload_len), ident);
        let _ = udp.emit(&mut self.buf[at..], from.ip, to.ip);
    }

    fn icmp(&mut self, from: &Host, to: &Host, icmp: &Icmpv4Repr, ident: u16) {
        let at = self.ipv4(from, to, IpProtocol::ICMP, icmp.buffer_len(), ident);
        let _ = icmp.emit(&mut self.buf[at..]);
    }

    fn arp(&mut self, from: &Host, dst: MacAddr, arp: &ArpRepr) {
        let eth = EthernetRepr {
            dst,
            src: from.mac,
            vlan: from.vlan,
            ethertype: EtherType::ARP,
        };
        let l2 = eth.header_len();
        self.buf.clear();
        self.buf.resize((l2 + arp.buffer_len()).max(60), 0);
        let _ = eth.emit(&mut self.buf);
        let _ = arp.emit(&mut self.buf[l2..]);
    }
}

fn log_uniform(rng: &mut Pcg64, lo: f64, hi: f64) -> u64 {
    (lo.ln() + rng.random::<f64>() * (hi.ln() - lo.ln())).exp() as u64
}

fn exp_ns(rng: &mut Pcg64, mean_ns: u64) -> u64 {
    let u: f64 = rng.random::<f64>();
    (-(1.0 - u).ln() * mean_ns as f64) as u64
}

fn new_conversation(rng: &mut Pcg64) -> Conversation {
    let pick = |rng: &mut Pcg64| host(rng.random_range(0..RACKS), rng.random_range(0..HOSTS_PER_RACK));
    let client = pick(rng);
    let mut server = pick(rng);
    while server.ip == client.ip {
        server = pick(rng);
    }
    let roll: f64 = rng.random::<f64>();
    let kind = match roll {
        r if r < 0.80 => Kind::Tcp,
        r if r < 0.95 => Kind::Udp,
        r if r < 0.99 => Kind::Icmp,
        _ => Kind::Arp,
    };
    let band: f64 = rng.random::<f64>();
    let size = match band {
        b if b < 0.70 => log_uniform(rng, 1e3, 2e4),
        b if b < 0.95 => log_uniform(rng, 2e4, 1e6),
        _ => log_uniform(rng, 1e6, 1e7),
    };
    // Per-flow pacing between 100 Mbit/s and 10 Gbit/s (log-uniform), RTT 20-200 us.
    let rate_bps = log_uniform(rng, 1e8, 1e10).max(1);
    Conversation {
        kind,
        client,
        server,
        client_port: rng.random_range(32768..61000),
        server_port: match kind {
            Kind::Tcp => [80, 443, 5001, 9000][rng.random_range(0..4)],
            Kind::Udp => 53,
            _ => 0,
        },
        step: 0,
        remaining: size.max(1),
        client_seq: rng.random::<u32>(),
        server_seq: rng.random::<u32>(),
        gap_ns: ((1538 * 8) as u64 * 1_000_000_000 / rate_bps).max(100),
        rtt_ns: rng.random_range(20_000..200_000),
        segments_sent: 0,
        ack_due: false,
        fin_phase: 0,
        ts_base: rng.random::<u32>(),
    }
}

/// What a conversation does at one step: the packet it writes into `fb` (if any) and the
/// delay to its next step (`None` when done).
fn step(c: &mut Conversation, now_ns: u64, fb: &mut FrameBuilder, rng: &mut Pcg64) -> (bool, Option<u64>) {
    let s = c.step;
    c.step += 1;
    let ident = (s as u16).wrapping_add(c.client_port);
    let (client, server) = (c.client, c.server);
    match c.kind {
        Kind::Tcp => tcp_step(c, now_ns, fb),
        Kind::Udp => {
            let (from, to, sp, dp, len) = if s == 0 {
                (client, server, c.client_port, c.server_port, rng.random_range(30..80))
            } else {
                (server, client, c.server_port, c.client_port, rng.random_range(60..480))
            };
            fb.udp(
                &from,
                &to,
                &UdpRepr {
                    src_port: sp,
                    dst_port: dp,
                    payload_len: len,
                },
                ident,
            );
            (true, (s == 0).then_some(c.rtt_ns))
        }
        Kind::Icmp => {
            let seq_no = (s / 2) as u16;
            let ident_icmp = c.client_port;
            let (from, to, msg) = if s.is_multiple_of(2) {
                (
                    client,
                    server,
                    Icmpv4Repr::EchoRequest {
                        ident: ident_icmp,
                        seq_no,
                        data_len: 56,
                    },
                )
            } else {
                (
                    server,
                    client,
                    Icmpv4Repr::EchoReply {
                        ident: ident_icmp,
                        seq_no,
                        data_len: 56,
                    },
                )
            };
            fb.icmp(&from, &to, &msg, ident);
            let next = match s {
                7 => None,
                s if s % 2 == 0 => Some(c.rtt_ns),
                _ => Some(10_000_000),
            };
            (true, next)
        }
        Kind::Arp => {
            let server = Host {
                vlan: client.vlan,
                ..server
            };
            if s == 0 {
                let req = ArpRepr {
                    operation: ArpOperation::Request,
                    sender_mac: client.mac,
                    sender_ip: client.ip,
                    target_mac: MacAddr::ZERO,
                    target_ip: server.ip,
                };
                fb.arp(&client, MacAddr::BROADCAST, &req);
                (true, Some(c.rtt_ns / 2))
            } else {
                let rep = ArpRepr {
                    operation: ArpOperation::Reply,
                    sender_mac: server.mac,
                    sender_ip: server.ip,
                    target_mac: client.mac,
                    target_ip: client.ip,
                };
                fb.arp(&server, client.mac, &rep);
                (true, None)
            }
        }
    }
}

fn tcp_step(c: &mut Conversation, now_ns: u64, fb: &mut FrameBuilder) -> (bool, Option<u64>) {
    let (client, server) = (c.client, c.server);
    let ts = c.ts_base.wrapping_add((now_ns / 1_000_000) as u32);
    let base = TcpRepr {
        window: 502,
        timestamps: Some((ts, ts.wrapping_sub(1))),
        ..TcpRepr::default()
    };
    let half_rtt = c.rtt_ns / 2;
    let ident = c.step as u16;
    match c.step - 1 {
        0 => {
            let syn = TcpRepr {
                src_port: c.client_port,
                dst_port: c.server_port,
                seq: c.client_seq,
                flags: Flags::SYN | Flags::ECE | Flags::CWR,
                window: 64240,
                mss: Some(1460),
                sack_permitted: true,
                window_scale: Some(7),
                ..base
            };
            fb.tcp(&client, &server, &syn, ident);
            c.client_seq = c.client_seq.wrapping_add(1);
            (true, Some(half_rtt))
        }
        1 => {
            let syn_ack = TcpRepr {
                src_port: c.server_port,
                dst_port: c.client_port,
                seq: c.server_seq,
                ack: c.client_seq,
                flags: Flags::SYN | Flags::ACK | Flags::ECE,
                window: 65160,
                mss: Some(1460),
                sack_permitted: true,
                window_scale: Some(7),
                ..base
            };
            fb.tcp(&server, &client, &syn_ack, ident);
            c.server_seq = c.server_seq.wrapping_add(1);
            (true, Some(half_rtt))
        }
        _ if c.remaining > 0 || c.ack_due => {
            // After every second data segment the server's delayed ACK goes out first.
            if c.ack_due {
                c.ack_due = false;
                let ack = TcpRepr {
                    src_port: c.server_port,
                    dst_port: c.client_port,
                    seq: c.server_seq,
                    ack: c.client_seq,
                    flags: Flags::ACK,
                    ..base
                };
                fb.tcp(&server, &client, &ack, ident);
                return (true, Some(c.gap_ns / 4 + 1));
            }
            let len = c.remaining.min(MSS as u64) as usize;
            let data = TcpRepr {
                src_port: c.client_port,
                dst_port: c.server_port,
                seq: c.client_seq,
                ack: c.server_seq,
                flags: if len as u64 == c.remaining {
                    Flags::ACK | Flags::PSH
                } else {
                    Flags::ACK
                },
                payload_len: len,
                ..base
            };
            fb.tcp(&client, &server, &data, ident);
            c.client_seq = c.client_seq.wrapping_add(len as u32);
            c.remaining -= len as u64;
            c.segments_sent += 1;
            c.ack_due = c.segments_sent.is_multiple_of(2);
            (true, Some(c.gap_ns))
        }
        _ => {
            // FIN from the client, FIN+ACK from the server, last ACK from the client.
            let phase = c.fin_phase;
            c.fin_phase += 1;
            let (from, to, seg, next) = match phase {
                0 => (
                    client,
                    server,
                    TcpRepr {
                        src_port: c.client_port,
                        dst_port: c.server_port,
                        seq: c.client_seq,
                        ack: c.server_seq,
                        flags: Flags::FIN | Flags::ACK,
                        ..base
                    },
                    Some(half_rtt),
                ),
                1 => (
                    server,
                    client,
                    TcpRepr {
                        src_port: c.server_port,
                        dst_port: c.client_port,
                        seq: c.server_seq,
                        ack: c.client_seq.wrapping_add(1),
                        flags: Flags::FIN | Flags::ACK,
                        ..base
                    },
                    Some(half_rtt),
                ),
                _ => (
                    client,
                    server,
                    TcpRepr {
                        src_port: c.client_port,
                        dst_port: c.server_port,
                        seq: c.client_seq.wrapping_add(1),
                        ack: c.server_seq.wrapping_add(1),
                        flags: Flags::ACK,
                        ..base
                    },
                    None,
                ),
            };
            fb.tcp(&from, &to, &seg, ident);
            (true, next)
        }
    }
}

/// Generates the trace described by `cfg` into any writer.
pub fn generate<W: std::io::Write>(cfg: &SynthConfig, out: W) -> Result<W, tandem_wire::pcap::TraceError> {
    let snaplen = if cfg.snaplen == 0 { 262_144 } else { cfg.snaplen };
    let mut w = TraceWriter::new(out, LinkType::ETHERNET, snaplen)?;
    let mut rng = Pcg64::seed_from_u64(cfg.seed);
    let mut fb = FrameBuilder {
        buf: Vec::with_capacity(1600),
    };
    let mut convs: Vec<Option<Conversation>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    // (time, insertion sequence, slot): the sequence makes equal times break ties stably.
    let mut heap: BinaryHeap<Reverse<(u64, u64, usize)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut next_arrival = START_NS;
    let mut written = 0u64;
    while written < cfg.packets {
        let next_event = heap.peek().map(|Reverse((t, _, _))| *t);
        if next_event.is_none_or(|t| next_arrival <= t) {
            let slot = free.pop().unwrap_or_else(|| {
                convs.push(None);
                convs.len() - 1
            });
            convs[slot] = Some(new_conversation(&mut rng));
            heap.push(Reverse((next_arrival, seq, slot)));
            seq += 1;
            next_arrival += exp_ns(&mut rng, cfg.flow_gap_ns).max(1);
            continue;
        }
        let Some(Reverse((now, _, slot))) = heap.pop() else {
            break;
        };
        let Some(conv) = convs[slot].as_mut() else { continue };
        let (wrote, next) = step(conv, now, &mut fb, &mut rng);
        if wrote {
            w.write(now, &fb.buf, fb.buf.len() as u32)?;
            written += 1;
        }
        match next {
            Some(d) => {
                heap.push(Reverse((now + d, seq, slot)));
                seq += 1;
            }
            None => {
                convs[slot] = None;
                free.push(slot);
            }
        }
    }
    Ok(w.into_inner())
}

/// `tandem pcap synth`. The trace is written under a temporary name beside `path` and renamed
/// when whole: a full disk or an interrupted run leaves no partial capture.
pub fn write_trace(path: &Path, cfg: &SynthConfig) -> Result<(), CliError> {
    let tmp = tandem_sim::table::TempPath::new(path);
    let file = File::create(tmp.path()).map_err(|e| CliError::input(path, e))?;
    let w = generate(cfg, BufWriter::with_capacity(1 << 20, file)).map_err(|e| CliError::runtime(path, e))?;
    w.into_inner()
        .map_err(|e| CliError::runtime(path, e.error()))?
        .sync_all()
        .map_err(|e| CliError::runtime(path, e))?;
    tmp.commit().map_err(|e| CliError::runtime(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_wire::pcap::TraceReader;

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        let cfg = SynthConfig {
            packets: 2000,
            seed: 7,
            flow_gap_ns: 200_000,
            snaplen: 0,
        };
        let a = generate(&cfg, Vec::new()).unwrap();
        let b = generate(&cfg, Vec::new()).unwrap();
        assert_eq!(a, b);
        let c = generate(&SynthConfig { seed: 8, ..cfg.clone() }, Vec::new()).unwrap();
        assert_ne!(a, c);
    }

    #[test]
    fn every_frame_parses_with_valid_checksums() {
        use tandem_wire::{ethernet, ipv4, tcp};
        let cfg = SynthConfig {
            packets: 3000,
            seed: 3,
            flow_gap_ns: 100_000,
            snaplen: 0,
        };
        let bytes = generate(&cfg, Vec::new()).unwrap();
        let mut r = TraceReader::new(&bytes[..]).unwrap();
        let (mut n, mut tcp_n, mut last) = (0, 0, 0);
        while let Some(p) = r.next_packet() {
            let p = p.unwrap();
            assert!(p.ts_ns >= last, "timestamps go forward");
            last = p.ts_ns;
            n += 1;
            let f = ethernet::Frame::new_checked(p.data).unwrap();
            ethernet::EthernetRepr::parse(&f).unwrap();
            if f.ethertype() == EtherType::IPV4 {
                let ip = ipv4::Packet::new_checked(f.payload()).unwrap();
                let ipr = ipv4::Ipv4Repr::parse(&ip).unwrap();
                if ipr.protocol == IpProtocol::TCP {
                    tcp::TcpRepr::parse(&tcp::Packet::new_checked(ip.payload()).unwrap(), ipr.src, ipr.dst).unwrap();
                    tcp_n += 1;
                }
            }
        }
        assert_eq!(n, 3000);
        assert!(tcp_n > 2000);
    }
}
