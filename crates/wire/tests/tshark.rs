//! Emits one frame of every format into a pcap and has tshark (Debian package `tshark`) dissect
//! it: no malformed packet, no bad checksum, and the fields we wrote read back as written.
//!
//! Skips with a message when tshark is missing, unless `TANDEM_REQUIRE_SYSTEM=1` (CI sets it).

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;
use tandem_testkit::{require, Scratch};
use tandem_wire::arp::{ArpOperation, ArpRepr};
use tandem_wire::dhcp::{self, BootpOp, DhcpMessageType, DhcpRepr};
use tandem_wire::ethernet::{EthernetRepr, VlanTag};
use tandem_wire::icmpv4::Icmpv4Repr;
use tandem_wire::ipv4::{self, Ecn, Ipv4Repr};
use tandem_wire::pause::{PauseRepr, PAUSE_DST};
use tandem_wire::pcap::TraceWriter;
use tandem_wire::tcp::{Flags, TcpRepr};
use tandem_wire::udp::UdpRepr;
use tandem_wire::{EtherType, IpProtocol, MacAddr};

const A_MAC: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0a]);
const B_MAC: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0b]);
const A_IP: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 10);
const B_IP: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 11);

fn eth(dst: MacAddr, src: MacAddr, vlan: Option<VlanTag>, ethertype: EtherType) -> EthernetRepr {
    EthernetRepr {
        dst,
        src,
        vlan,
        ethertype,
    }
}

fn ip(src: Ipv4Addr, dst: Ipv4Addr, protocol: IpProtocol, payload_len: usize) -> Ipv4Repr {
    Ipv4Repr {
        src,
        dst,
        protocol,
        payload_len: payload_len as u16,
        dscp: 0,
        ecn: Ecn::NotEct,
        ident: 0x4242,
        dont_frag: true,
        ttl: 64,
    }
}

/// Builds Ethernet + IPv4 (+ raw IPv4 options) + an L4 body written by `l4`; pads to 60 bytes.
fn ipv4_frame(
    e: EthernetRepr,
    mut i: Ipv4Repr,
    options: &[u8],
    l4_len: usize,
    l4: impl FnOnce(&mut [u8], Ipv4Addr, Ipv4Addr),
) -> Vec<u8> {
    assert!(options.len().is_multiple_of(4));
    i.payload_len = (options.len() + l4_len) as u16;
    let l2 = e.header_len();
    let mut buf = vec![0u8; (l2 + 20 + options.len() + l4_len).max(60)];
    e.emit(&mut buf).unwrap();
    i.emit(&mut buf[l2..]).unwrap();
    if !options.is_empty() {
        buf[l2] = 0x45 + (options.len() / 4) as u8;
        buf[l2 + 20..l2 + 20 + options.len()].copy_from_slice(options);
        ipv4::Packet::new_unchecked(&mut buf[l2..]).fill_checksum();
    }
    let at = l2 + 20 + options.len();
    l4(&mut buf[at..at + l4_len], i.src, i.dst);
    buf
}

fn udp_frame(e: EthernetRepr, i: Ipv4Repr, u: UdpRepr, payload: &[u8]) -> Vec<u8> {
    ipv4_frame(e, i, &[], u.buffer_len(), |b, s, d| {
        b[8..].copy_from_slice(payload);
        u.emit(b, s, d).unwrap();
    })
}

fn l2_frame(e: EthernetRepr, body_len: usize, body: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let l2 = e.header_len();
    let mut buf = vec![0u8; (l2 + body_len).max(60)];
    e.emit(&mut buf).unwrap();
    body(&mut buf[l2..l2 + body_len]);
    buf
}

fn frames() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    // 1: VLAN 100 / PCP 5, IPv4 with a Router Alert option, DSCP 46 + ECT(0), an ECN-setup SYN
    // carrying MSS, window scale, SACK-permitted and timestamps.
    let syn = TcpRepr {
        src_port: 40000,
        dst_port: 80,
        seq: 1_000_000,
        ack: 0,
        flags: Flags::SYN | Flags::ECE | Flags::CWR,
        window: 64240,
        mss: Some(1460),
        window_scale: Some(7),
        sack_permitted: true,
        timestamps: Some((123_456, 0)),
        ..TcpRepr::default()
    };
    let vlan = Some(VlanTag {
        pcp: 5,
        dei: false,
        vid: 100,
    });
    let mut i = ip(A_IP, B_IP, IpProtocol::TCP, 0);
    i.dscp = 46;
    i.ecn = Ecn::Ect0;
    out.push(ipv4_frame(
        eth(B_MAC, A_MAC, vlan, EtherType::IPV4),
        i,
        &[148, 4, 0, 0],
        syn.buffer_len(),
        |b, s, d| syn.emit(b, s, d).unwrap(),
    ));
    // 2: a CE-marked data segment with ECE, two SACK blocks and timestamps.
    let data = TcpRepr {
        src_port: 80,
        dst_port: 40000,
        seq: 5_000_000,
        ack: 1_000_001,
        flags: Flags::ACK | Flags::PSH | Flags::ECE,
        window: 501,
        sack_blocks: [Some((1_000_101, 1_000_201)), Some((1_000_301, 1_000_401)), None, None],
        timestamps: Some((777, 123_456)),
        payload_len: 100,
        ..TcpRepr::default()
    };
    let mut i = ip(B_IP, A_IP, IpProtocol::TCP, 0);
    i.ecn = Ecn::Ce;
    out.push(ipv4_frame(
        eth(A_MAC, B_MAC, None, EtherType::IPV4),
        i,
        &[],
        data.buffer_len(),
        |b, s, d| {
            let hl = data.header_len();
            b[hl..].fill(b'x');
            data.emit(b, s, d).unwrap()
        },
    ));
    // 3: UDP.
    let u = UdpRepr {
        src_port: 5000,
        dst_port: 6000,
        payload_len: 32,
    };
    out.push(udp_frame(
        eth(B_MAC, A_MAC, None, EtherType::IPV4),
        ip(A_IP, B_IP, IpProtocol::UDP, 0),
        u,
        &[7; 32],
    ));
    // 4, 5: ICMP echo request and reply.
    for (k, (s, d)) in [(A_IP, B_IP), (B_IP, A_IP)].into_iter().enumerate() {
        let m = if k == 0 {
            Icmpv4Repr::EchoRequest {
                ident: 0x77,
                seq_no: 3,
                data_len: 56,
            }
        } else {
            Icmpv4Repr::EchoReply {
                ident: 0x77,
                seq_no: 3,
                data_len: 56,
            }
        };
        out.push(ipv4_frame(
            eth(B_MAC, A_MAC, None, EtherType::IPV4),
            ip(s, d, IpProtocol::ICMP, 0),
            &[],
            m.buffer_len(),
            |b, _, _| {
                for (n, x) in b[8..].iter_mut().enumerate() {
                    *x = n as u8;
                }
                m.emit(b).unwrap()
            },
        ));
    }
    // 6, 7: ARP request and reply.
    let req = ArpRepr {
        operation: ArpOperation::Request,
        sender_mac: A_MAC,
        sender_ip: A_IP,
        target_mac: MacAddr::ZERO,
        target_ip: B_IP,
    };
    out.push(l2_frame(
        eth(MacAddr::BROADCAST, A_MAC, None, EtherType::ARP),
        28,
        |b| req.emit(b).unwrap(),
    ));
    let rep = ArpRepr {
        operation: ArpOperation::Reply,
        sender_mac: B_MAC,
        sender_ip: B_IP,
        target_mac: A_MAC,
        target_ip: A_IP,
    };
    out.push(l2_frame(eth(A_MAC, B_MAC, None, EtherType::ARP), 28, |b| {
        rep.emit(b).unwrap()
    }));
    // 8: DHCP discover, 9: DHCP offer with every modelled option.
    let discover = DhcpRepr {
        op: BootpOp::Request,
        hops: 0,
        xid: 0xdead_beef,
        secs: 0,
        flags: dhcp::FLAG_BROADCAST,
        client_ip: Ipv4Addr::UNSPECIFIED,
        your_ip: Ipv4Addr::UNSPECIFIED,
        server_ip: Ipv4Addr::UNSPECIFIED,
        relay_ip: Ipv4Addr::UNSPECIFIED,
        client_mac: A_MAC,
        message_type: DhcpMessageType::Discover,
        subnet_mask: None,
        routers: vec![],
        dns_servers: vec![],
        host_name: Some(b"rack1-h10".to_vec()),
        requested_ip: Some(A_IP),
        lease_time: None,
        server_id: None,
        parameter_request_list: vec![1, 3, 6, 12, 51, 54],
        client_id: Some([&[1u8][..], &A_MAC.0].concat()),
        other_options: vec![],
    };
    let offer = DhcpRepr {
        op: BootpOp::Reply,
        message_type: DhcpMessageType::Offer,
        your_ip: A_IP,
        server_ip: B_IP,
        subnet_mask: Some(Ipv4Addr::new(255, 255, 255, 0)),
        routers: vec![Ipv4Addr::new(10, 1, 0, 1)],
        dns_servers: vec![Ipv4Addr::new(10, 1, 0, 2), Ipv4Addr::new(10, 1, 0, 3)],
        lease_time: Some(86_400),
        server_id: Some(B_IP),
        requested_ip: None,
        parameter_request_list: vec![],
        ..discover.clone()
    };
    for (m, s, d, sp, dp, dst_mac) in [
        (
            &discover,
            Ipv4Addr::UNSPECIFIED,
            Ipv4Addr::BROADCAST,
            dhcp::CLIENT_PORT,
            dhcp::SERVER_PORT,
            MacAddr::BROADCAST,
        ),
        (
            &offer,
            B_IP,
            Ipv4Addr::BROADCAST,
            dhcp::SERVER_PORT,
            dhcp::CLIENT_PORT,
            MacAddr::BROADCAST,
        ),
    ] {
        let mut body = vec![0u8; m.buffer_len()];
        m.emit(&mut body).unwrap();
        let u = UdpRepr {
            src_port: sp,
            dst_port: dp,
            payload_len: body.len() as u16,
        };
        out.push(udp_frame(
            eth(dst_mac, A_MAC, None, EtherType::IPV4),
            ip(s, d, IpProtocol::UDP, 0),
            u,
            &body,
        ));
    }
    // 10: 802.3x PAUSE, 11: 802.1Qbb PFC pausing priority 3.
    for p in [
        PauseRepr::Pause { quanta: 0xffff },
        PauseRepr::Pfc {
            class_enable: 0x08,
            quanta: [0, 0, 0, 1000, 0, 0, 0, 0],
        },
    ] {
        out.push(l2_frame(
            eth(PAUSE_DST, A_MAC, None, EtherType::MAC_CONTROL),
            p.buffer_len(),
            |b| p.emit(b).unwrap(),
        ));
    }
    out
}

fn write_pcap(scratch: &Scratch) -> PathBuf {
    let path = scratch.join("every-format.pcap");
    let mut w = TraceWriter::ethernet(std::fs::File::create(&path).unwrap()).unwrap();
    for (n, f) in frames().iter().enumerate() {
        w.write(1_700_000_000_000_000_000 + n as u64 * 1_000_123, f, f.len() as u32)
            .unwrap();
    }
    drop(w.into_inner());
    path
}

fn tshark(path: &Path, extra: &[&str]) -> String {
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(path)
        .args([
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "udp.check_checksum:TRUE",
            "-o",
            "tcp.relative_sequence_numbers:FALSE",
        ])
        .args(extra)
        .output()
        .expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn tshark_reads_every_format_as_written() {
    if !require("tshark", "tshark") {
        return;
    }
    let scratch = Scratch::new("tshark");
    let path = write_pcap(&scratch);

    let all = tshark(&path, &["-T", "fields", "-e", "frame.number"]);
    assert_eq!(all.lines().count(), 11, "tshark saw {all}");
    let bad = tshark(
        &path,
        &[
            "-Y",
            "_ws.malformed || _ws.expert.severity == error || ip.checksum.status == 0 || \
             tcp.checksum.status == 0 || udp.checksum.status == 0 || icmp.checksum.status == 0",
        ],
    );
    assert!(bad.trim().is_empty(), "tshark flags these frames:\n{bad}");

    let fields = [
        "frame.protocols",
        "eth.src",
        "eth.dst",
        "vlan.id",
        "vlan.priority",
        "ip.src",
        "ip.dst",
        "ip.hdr_len",
        "ip.opt.type",
        "ip.dsfield.dscp",
        "ip.dsfield.ecn",
        "ip.checksum.status",
        "tcp.srcport",
        "tcp.dstport",
        "tcp.seq",
        "tcp.ack",
        "tcp.flags",
        "tcp.options.mss_val",
        "tcp.options.wscale.shift",
        "tcp.options.sack_perm",
        "tcp.options.timestamp.tsval",
        "tcp.options.timestamp.tsecr",
        "tcp.options.sack_le",
        "tcp.options.sack_re",
        "tcp.checksum.status",
        "udp.srcport",
        "udp.dstport",
        "udp.checksum.status",
        "icmp.type",
        "icmp.ident",
        "icmp.seq",
        "icmp.checksum.status",
        "arp.opcode",
        "arp.src.hw_mac",
        "arp.src.proto_ipv4",
        "arp.dst.proto_ipv4",
        "dhcp.option.dhcp",
        "dhcp.id",
        "dhcp.hw.mac_addr",
        "dhcp.flags.bc",
        "dhcp.option.subnet_mask",
        "dhcp.option.router",
        "dhcp.option.domain_name_server",
        "dhcp.option.hostname",
        "dhcp.option.requested_ip_address",
        "dhcp.option.ip_address_lease_time",
        "dhcp.option.dhcp_server_id",
        "dhcp.option.request_list_item",
        "dhcp.option.type",
        "dhcp.option.end",
        "macc.opcode",
        "macc.pause_time",
        "macc.cbfc.enbv",
        "macc.cbfc.pause_time.c3",
    ];
    let mut args = vec![
        "-T",
        "fields",
        "-E",
        "separator=|",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
    ];
    for f in &fields {
        args.extend(["-e", f]);
    }
    let text = tshark(&path, &args);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(rows.len(), 11);
    let get = |frame: usize, field: &str| -> String {
        let col = fields.iter().position(|f| *f == field).unwrap();
        rows[frame - 1][col].to_string()
    };
    let check = |frame: usize, expect: &[(&str, &str)]| {
        for (field, want) in expect {
            assert_eq!(
                get(frame, field),
                *want,
                "frame {frame} field {field}; row: {:?}",
                rows[frame - 1]
            );
        }
    };
    check(
        1,
        &[
            ("eth.src", "02:00:00:00:00:0a"),
            ("eth.dst", "02:00:00:00:00:0b"),
            ("vlan.id", "100"),
            ("vlan.priority", "5"),
            ("ip.src", "10.1.0.10"),
            ("ip.dst", "10.1.0.11"),
            ("ip.hdr_len", "24"),
            ("ip.opt.type", "148"),
            ("ip.dsfield.dscp", "46"),
            ("ip.dsfield.ecn", "2"),
            ("ip.checksum.status", "1"),
            ("tcp.srcport", "40000"),
            ("tcp.dstport", "80"),
            ("tcp.seq", "1000000"),
            ("tcp.flags", "0x00c2"),
            ("tcp.options.mss_val", "1460"),
            ("tcp.options.wscale.shift", "7"),
            ("tcp.options.timestamp.tsval", "123456"),
            ("tcp.options.timestamp.tsecr", "0"),
            ("tcp.checksum.status", "1"),
        ],
    );
    assert!(!get(1, "tcp.options.sack_perm").is_empty(), "SACK-permitted missing");
    check(
        2,
        &[
            ("ip.dsfield.ecn", "3"),
            ("tcp.flags", "0x0058"),
            ("tcp.seq", "5000000"),
            ("tcp.ack", "1000001"),
            ("tcp.options.sack_le", "1000101,1000301"),
            ("tcp.options.sack_re", "1000201,1000401"),
            ("tcp.options.timestamp.tsval", "777"),
            ("tcp.options.timestamp.tsecr", "123456"),
            ("tcp.checksum.status", "1"),
        ],
    );
    check(
        3,
        &[
            ("udp.srcport", "5000"),
            ("udp.dstport", "6000"),
            ("udp.checksum.status", "1"),
        ],
    );
    check(
        4,
        &[
            ("icmp.type", "8"),
            ("icmp.ident", "119"),
            ("icmp.seq", "3"),
            ("icmp.checksum.status", "1"),
        ],
    );
    check(
        5,
        &[
            ("icmp.type", "0"),
            ("icmp.ident", "119"),
            ("icmp.seq", "3"),
            ("icmp.checksum.status", "1"),
        ],
    );
    check(
        6,
        &[
            ("arp.opcode", "1"),
            ("arp.src.hw_mac", "02:00:00:00:00:0a"),
            ("arp.src.proto_ipv4", "10.1.0.10"),
            ("arp.dst.proto_ipv4", "10.1.0.11"),
        ],
    );
    check(7, &[("arp.opcode", "2"), ("arp.src.proto_ipv4", "10.1.0.11")]);
    check(
        8,
        &[
            ("udp.srcport", "68"),
            ("udp.dstport", "67"),
            ("udp.checksum.status", "1"),
            ("dhcp.option.dhcp", "1"),
            ("dhcp.id", "0xdeadbeef"),
            // chaddr, then the MAC inside the client identifier.
            ("dhcp.hw.mac_addr", "02:00:00:00:00:0a,02:00:00:00:00:0a"),
            ("dhcp.flags.bc", "1"),
            ("dhcp.option.hostname", "rack1-h10"),
            ("dhcp.option.requested_ip_address", "10.1.0.10"),
            ("dhcp.option.request_list_item", "1,3,6,12,51,54"),
            // Every option we wrote, in order; tshark lists the zero padding to 300 bytes as
            // option 0 and the end option as its own field.
            ("dhcp.option.type", "53,61,50,12,55,0"),
            ("dhcp.option.end", "255"),
        ],
    );
    check(
        9,
        &[
            ("dhcp.option.dhcp", "2"),
            ("dhcp.option.subnet_mask", "255.255.255.0"),
            ("dhcp.option.router", "10.1.0.1"),
            ("dhcp.option.domain_name_server", "10.1.0.2,10.1.0.3"),
            ("dhcp.option.ip_address_lease_time", "86400"),
            ("dhcp.option.dhcp_server_id", "10.1.0.11"),
            ("dhcp.option.type", "53,61,54,51,1,3,6,12,0"),
            ("dhcp.option.end", "255"),
        ],
    );
    check(
        10,
        &[
            ("eth.dst", "01:80:c2:00:00:01"),
            ("macc.opcode", "0x0001"),
            ("macc.pause_time", "65535"),
        ],
    );
    check(
        11,
        &[
            ("macc.opcode", "0x0101"),
            ("macc.cbfc.enbv", "0x0008"),
            ("macc.cbfc.pause_time.c3", "1000"),
        ],
    );
}
