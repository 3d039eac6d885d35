//! Parse and emit rates for a 64-byte and a 1500-byte TCP/IPv4 Ethernet frame.
//!
//! * `summarize`: the zero-copy header walk flow tools use (no checksums);
//! * `parse`: full `Repr`s for Ethernet, IPv4 and TCP, both checksums verified;
//! * `emit`: Ethernet, IPv4 and TCP `Repr`s written into a buffer, both checksums computed.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::net::Ipv4Addr;
use tandem_wire::ethernet::{EthernetRepr, Frame};
use tandem_wire::ipv4::{self, Ecn, Ipv4Repr};
use tandem_wire::pcap::LinkType;
use tandem_wire::tcp::{self, Flags, TcpRepr};
use tandem_wire::{decode, EtherType, IpProtocol, MacAddr};

struct Reprs {
    eth: EthernetRepr,
    ip: Ipv4Repr,
    tcp: TcpRepr,
}

fn reprs(frame_len: usize) -> Reprs {
    // 14 Ethernet + 20 IPv4 + 32 TCP (timestamps) = 66; a 64-byte frame carries no option.
    let with_ts = frame_len > 100;
    let tcp_hl = if with_ts { 32 } else { 20 };
    let payload_len = frame_len.saturating_sub(14 + 20 + tcp_hl);
    let tcp = TcpRepr {
        src_port: 40000,
        dst_port: 5001,
        seq: 1,
        ack: 1,
        flags: Flags::ACK | Flags::PSH,
        window: 502,
        timestamps: with_ts.then_some((1, 2)),
        payload_len,
        ..TcpRepr::default()
    };
    let ip = Ipv4Repr {
        src: Ipv4Addr::new(10, 0, 0, 1),
        dst: Ipv4Addr::new(10, 0, 0, 2),
        protocol: IpProtocol::TCP,
        payload_len: tcp.buffer_len() as u16,
        dscp: 0,
        ecn: Ecn::Ect0,
        ident: 7,
        dont_frag: true,
        ttl: 64,
    };
    let eth = EthernetRepr {
        dst: MacAddr([2, 0, 0, 0, 0, 2]),
        src: MacAddr([2, 0, 0, 0, 0, 1]),
        vlan: None,
        ethertype: EtherType::IPV4,
    };
    Reprs { eth, ip, tcp }
}

fn emit(r: &Reprs, buf: &mut [u8]) {
    let l2 = r.eth.emit(buf).unwrap();
    r.ip.emit(&mut buf[l2..]).unwrap();
    let l3 = l2 + r.ip.header_len();
    r.tcp
        .emit(&mut buf[l3..l3 + r.tcp.buffer_len()], r.ip.src, r.ip.dst)
        .unwrap();
}

fn parse(buf: &[u8]) -> (EthernetRepr, Ipv4Repr, TcpRepr) {
    let f = Frame::new_checked(buf).unwrap();
    let e = EthernetRepr::parse(&f).unwrap();
    let p = ipv4::Packet::new_checked(f.payload()).unwrap();
    let i = Ipv4Repr::parse(&p).unwrap();
    let t = TcpRepr::parse(&tcp::Packet::new_checked(p.payload()).unwrap(), i.src, i.dst).unwrap();
    (e, i, t)
}

fn bench(c: &mut Criterion) {
    for len in [64usize, 1500] {
        let r = reprs(len);
        let total = r.eth.header_len() + r.ip.total_len();
        let mut buf = vec![0u8; total.max(len)];
        emit(&r, &mut buf);
        let mut g = c.benchmark_group("tcp_ipv4_frame");
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::new("summarize", len), &buf, |b, buf| {
            b.iter(|| decode::summarize(LinkType::ETHERNET, black_box(buf)))
        });
        g.bench_with_input(BenchmarkId::new("parse", len), &buf, |b, buf| {
            b.iter(|| parse(black_box(buf)))
        });
        let mut out = buf.clone();
        g.bench_with_input(BenchmarkId::new("emit", len), &r, |b, r| {
            b.iter(|| emit(black_box(r), &mut out))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
