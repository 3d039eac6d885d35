//! Device-level tests: frames through chains of devices, route memory from the data plane's side,
//! errors, fairness, PAUSE, bootstrap, timing, and arbitrary input.

use super::*;
use crate::timing::{wire_time_ps, ForwardingMode};
use proptest::prelude::*;
use tandem_wire::axon::control::Hello;
use tandem_wire::axon::probe::ProbeRepr;
use tandem_wire::axon::{self, error};
use tandem_wire::ethernet::EthernetRepr;
use tandem_wire::pause::{self, PauseRepr, PAUSE_DST};
use tandem_wire::EtherType;

const GBPS: u64 = 1_000_000_000;
const A: MacAddr = MacAddr([0x00, 0x1b, 0x21, 0, 0, 0x0a]);
const B: MacAddr = MacAddr([0x00, 0x1b, 0x21, 0, 0, 0x0b]);
const C: MacAddr = MacAddr([0x00, 0x1b, 0x21, 0, 0, 0x0c]);
const S: MacAddr = MacAddr([0x02, 0xa0, 0, 0, 0, 0x05]);

fn device_cfg(cfg: DeviceConfig, kinds: &[PortKind]) -> Device {
    let mut d = Device::new(cfg).unwrap();
    for (p, k) in kinds.iter().enumerate() {
        d.set_port_kind(p as u8, *k).unwrap();
    }
    d
}

fn device(id: u64, kinds: &[PortKind]) -> Device {
    device_cfg(DeviceConfig::new(id, kinds.len(), GBPS), kinds)
}

fn eth_frame(dst: MacAddr, src: MacAddr, len: usize) -> Vec<u8> {
    let mut f: Vec<u8> = (0..len).map(|i| i as u8).collect();
    EthernetRepr {
        dst,
        src,
        vlan: None,
        ethertype: EtherType::IPV4,
    }
    .emit(&mut f)
    .unwrap();
    f
}

fn step(d: &mut Device, now: u64, ev: Event) -> Vec<Action> {
    let mut out = Vec::new();
    d.handle(now, ev, &mut out);
    out
}

fn transmits(actions: &[Action]) -> Vec<(u8, u64, Vec<u8>)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Transmit { port, start_ps, frame } => Some((*port, *start_ps, frame.clone())),
            _ => None,
        })
        .collect()
}

fn upcalls(actions: &[Action]) -> Vec<(u64, Upcall, Vec<u8>)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::ToControlPlane { at_ps, reason, frame } => Some((*at_ps, *reason, frame.clone())),
            _ => None,
        })
        .collect()
}

fn header_of(frame: &[u8]) -> AxonRepr {
    AxonRepr::parse(&Packet::new_checked(frame).unwrap()).unwrap()
}

fn axon_frame(t: PacketType, forward: &[u8], reverse: &[u8], payload: &[u8]) -> Vec<u8> {
    AxonRepr {
        packet_type: t,
        forward: forward.to_vec(),
        reverse: reverse.to_vec(),
    }
    .to_frame(payload)
    .unwrap()
}

fn install(d: &mut Device, port: u8, forward: &[u8], cam_key: Option<MacAddr>) -> (RouteSlot, MacAddr) {
    let slot = d.reserve_route(port).unwrap();
    let entry = RouteEntry {
        forward: forward.to_vec(),
        dst_mac: B,
        src_mac: S,
    };
    (slot, d.install_route(port, slot, &entry, cam_key).unwrap())
}

use PortKind::{Axon as X, Host as H};

#[test]
fn header_processing_hop_by_hop_across_three_devices() {
    // Host A - [0] dev1 [1] - [0] dev2 [1] - [0] dev3 [2] - host B.
    let mut d1 = device(1, &[H, X]);
    let mut d2 = device(2, &[X, X]);
    let mut d3 = device(3, &[X, H, H]);
    let (_, mac) = install(&mut d1, 0, &[1, 1, 2], Some(B));
    assert_eq!(mac, B, "the CAM has room: the host keeps the real MAC");

    let sent = eth_frame(B, A, 100);
    let out = step(
        &mut d1,
        0,
        Event::Frame {
            port: 0,
            frame: sent.clone(),
        },
    );
    let t = transmits(&out);
    assert_eq!(t.len(), 1);
    let (port, start, f1) = &t[0];
    assert_eq!((*port, *start), (1, 768_000), "768 ns from a host port (Table 4.2)");
    assert_eq!(&f1[..7], &[0x02, 0x00, 0x70, 0x02, 0x00, 0x11, 0x20]);
    assert_eq!(header_of(f1).forward, [1, 2]);
    assert_eq!(header_of(f1).reverse, [0]);
    // MACs rewritten as stored, the rest untouched.
    assert_eq!(&f1[7..13], &B.0);
    assert_eq!(&f1[13..19], &S.0);
    assert_eq!(&f1[19..], &sent[12..]);
    assert_eq!(d1.counters().cam_hits, 1);

    let t2 = 768_000 + 1_000;
    let out = step(
        &mut d2,
        t2,
        Event::Frame {
            port: 0,
            frame: f1.clone(),
        },
    );
    let (port, start, f2) = transmits(&out).remove(0);
    assert_eq!((port, start), (1, t2 + 520_000), "520 ns between Axon ports");
    assert_eq!(&f2[..7], &[0x02, 0x00, 0x70, 0x01, 0x00, 0x22, 0x00]);
    assert_eq!(header_of(&f2).reverse, [0, 0]);
    assert_eq!(f2.len(), f1.len(), "the header keeps its length along the path");

    let t3 = start + 1_000;
    let out = step(
        &mut d3,
        t3,
        Event::Frame {
            port: 0,
            frame: f2.clone(),
        },
    );
    let (port, start, f3) = transmits(&out).remove(0);
    assert_eq!((port, start), (2, t3 + 520_000));
    let mut expect = sent.clone();
    expect[6..12].copy_from_slice(&S.0);
    assert_eq!(f3, expect, "header stripped toward the host port");
    assert_eq!(d3.counters().stripped, 1);
    // No route memory was consulted after the first Axon.
    assert_eq!(d2.counters().cam_hits + d3.counters().cam_hits, 0);
}

#[test]
fn masqueraded_macs_and_route_memory_exhaustion() {
    let mut cfg = DeviceConfig::new(1, 2, GBPS);
    cfg.route_slots = 2;
    cfg.cam_entries = 0;
    let mut d = device_cfg(cfg, &[H, X]);
    let (s0, m0) = install(&mut d, 0, &[1, 3], Some(B));
    let (s1, m1) = install(&mut d, 0, &[1, 4], Some(C));
    assert_eq!(m0, MacAddr([0x02, 0xa0, 0, 0, 0, 0]));
    assert_eq!(m1, MacAddr([0x02, 0xa0, 0, 0, 0, 1]));
    assert!(m0.is_local() && !m0.is_multicast());
    assert_eq!(d.reserve_route(0), Err(RouteError::MemoryFull));
    assert_eq!(d.reserve_route(9), Err(RouteError::NoSuchPort(9)));

    // The masqueraded MAC indexes route memory directly.
    let out = step(
        &mut d,
        0,
        Event::Frame {
            port: 0,
            frame: eth_frame(m1, A, 80),
        },
    );
    let (_, _, f) = transmits(&out).remove(0);
    assert_eq!(header_of(&f).forward, [4]);
    assert_eq!(&f[7..13], &B.0, "the real MAC goes back into the frame");
    assert_eq!(d.counters().masquerade_hits, 1);
    // The real MAC is in no CAM: a miss, for the control plane.
    let out = step(
        &mut d,
        1,
        Event::Frame {
            port: 0,
            frame: eth_frame(B, A, 80),
        },
    );
    assert_eq!(upcalls(&out)[0].1, Upcall::LookupMiss);

    // Removing a route frees its slot; its MAC then misses.
    d.remove_route(0, s0).unwrap();
    let out = step(
        &mut d,
        2,
        Event::Frame {
            port: 0,
            frame: eth_frame(m0, A, 80),
        },
    );
    let (_, why, f) = upcalls(&out).remove(0);
    assert_eq!(why, Upcall::LookupMiss);
    let h = header_of(&f);
    assert_eq!(
        (h.packet_type, h.forward.len(), h.reverse.clone()),
        (PacketType::Ethernet, 0, vec![0])
    );
    assert_eq!(d.reserve_route(0), Ok(s0));
    // A reserved but not yet valid slot misses too (§3.2.3).
    let out = step(
        &mut d,
        3,
        Event::Frame {
            port: 0,
            frame: eth_frame(m0, A, 80),
        },
    );
    assert_eq!(upcalls(&out)[0].1, Upcall::LookupMiss);
    assert_eq!(d.masqueraded_mac(0, s1), Some(m1));
}

#[test]
fn cam_full_hands_out_masqueraded_macs() {
    let mut cfg = DeviceConfig::new(1, 2, GBPS);
    cfg.cam_entries = 1;
    let mut d = device_cfg(cfg, &[H, X]);
    let (_, mb) = install(&mut d, 0, &[1, 3], Some(B));
    let (sc, mc) = install(&mut d, 0, &[1, 4], Some(C));
    assert_eq!(mb, B);
    assert_eq!(mc, d.masqueraded_mac(0, sc).unwrap());
    let out = step(
        &mut d,
        0,
        Event::Frame {
            port: 0,
            frame: eth_frame(C, A, 80),
        },
    );
    assert_eq!(upcalls(&out)[0].1, Upcall::LookupMiss);
    let out = step(
        &mut d,
        1,
        Event::Frame {
            port: 0,
            frame: eth_frame(mc, A, 80),
        },
    );
    assert_eq!(header_of(&transmits(&out)[0].2).forward, [4]);
    // Broadcasts always go to the control plane.
    let out = step(
        &mut d,
        2,
        Event::Frame {
            port: 0,
            frame: eth_frame(MacAddr::BROADCAST, A, 60),
        },
    );
    assert_eq!(upcalls(&out)[0].1, Upcall::Broadcast);
    assert_eq!(
        (
            d.counters().cam_hits,
            d.counters().masquerade_hits,
            d.counters().broadcasts
        ),
        (0, 1, 1)
    );
}

#[test]
fn errors_when_hops_run_out_or_the_type_is_wrong() {
    let mut d = device(1, &[X, H, X]);
    // No forward hop left: the input port still joins the reverse path.
    let f = axon_frame(PacketType::Ethernet, &[], &[4, 5], &eth_frame(B, A, 60));
    let (_, why, e) = upcalls(&step(&mut d, 0, Event::Frame { port: 0, frame: f })).remove(0);
    assert_eq!(why, Upcall::Error(ErrorCode::NoForwardHop));
    let h = header_of(&e);
    assert_eq!((h.packet_type, h.reverse.clone()), (PacketType::Error, vec![0, 4, 5]));
    let body = error::Packet::new_checked(&e[h.header_len()..]).unwrap();
    assert_eq!(body.code(), ErrorCode::NoForwardHop);
    assert_eq!(body.original_type(), PacketType::Ethernet);
    assert_eq!(body.payload(), &eth_frame(B, A, 60)[..]);

    // A control message bound for a host port.
    let f = axon_frame(PacketType::Control, &[1], &[], &[3; 20]);
    let (_, why, e) = upcalls(&step(&mut d, 1, Event::Frame { port: 2, frame: f })).remove(0);
    assert_eq!(why, Upcall::Error(ErrorCode::WrongType));
    assert_eq!(header_of(&e).reverse, [2]);
    assert_eq!(&e[6..8], &[2, 0x06]);

    // A hop naming a port the device lacks.
    let f = axon_frame(PacketType::Ethernet, &[9, 1], &[], &eth_frame(B, A, 60));
    let (_, why, _) = upcalls(&step(&mut d, 2, Event::Frame { port: 0, frame: f })).remove(0);
    assert_eq!(why, Upcall::Error(ErrorCode::NoSuchPort));

    // An unreadable header is dropped and counted.
    let out = step(
        &mut d,
        3,
        Event::Frame {
            port: 0,
            frame: vec![0x02, 0, 0x90, 1, 0, 3, 0, 0],
        },
    );
    assert!(matches!(
        out[..],
        [Action::Dropped {
            reason: DropReason::MalformedAxon,
            ..
        }]
    ));
    let c = d.counters();
    assert_eq!(
        (c.errors_no_forward_hop, c.errors_wrong_type, c.errors_no_such_port),
        (1, 1, 1)
    );
    assert_eq!(c.dropped(DropReason::MalformedAxon), 1);
    // Control messages pass between Axon ports whatever their type.
    let f = axon_frame(PacketType::Unknown(0x42), &[2, 7], &[], &[0; 50]);
    assert_eq!(transmits(&step(&mut d, 4, Event::Frame { port: 0, frame: f })).len(), 1);
}

#[test]
fn output_buffers_are_served_round_robin() {
    let mut d = device(1, &[X, X, X]);
    let mut out = Vec::new();
    for _ in 0..3 {
        for input in [0u8, 1] {
            let f = axon_frame(PacketType::Ethernet, &[2, 5], &[], &eth_frame(B, A, 200));
            d.handle(0, Event::Frame { port: input, frame: f }, &mut out);
        }
    }
    let mut order = Vec::new();
    let mut t = transmits(&out);
    let mut now = 0;
    while let Some((port, start, frame)) = t.pop() {
        assert_eq!(port, 2);
        order.push(header_of(&frame).reverse[0]);
        now = start + wire_time_ps(frame.len(), GBPS);
        t = transmits(&step(&mut d, now, Event::TxDone { port: 2 }));
    }
    assert_eq!(order, [0, 1, 0, 1, 0, 1]);
    assert!(now > 0);
}

#[test]
fn full_output_buffer_drops_with_reason() {
    let mut cfg = DeviceConfig::new(1, 3, GBPS);
    cfg.max_frame_bytes = 1600;
    cfg.output_buffer_bytes = 3000;
    let mut d = device_cfg(cfg, &[X, X, X]);
    let mut out = Vec::new();
    for _ in 0..5 {
        let f = axon_frame(PacketType::Ethernet, &[2], &[], &eth_frame(B, A, 994));
        d.handle(0, Event::Frame { port: 0, frame: f }, &mut out);
    }
    // One on the wire, three buffered (3,000 bytes), the fifth dropped.
    assert_eq!(transmits(&out).len(), 1);
    assert_eq!(d.counters().dropped(DropReason::OutputBufferFull), 1);
    // Another input's buffer is separate.
    let f = axon_frame(PacketType::Ethernet, &[2], &[], &eth_frame(B, A, 994));
    step(&mut d, 0, Event::Frame { port: 1, frame: f });
    assert_eq!(d.counters().dropped(DropReason::OutputBufferFull), 1);
    // The link goes down: what waits is flushed, and later frames for it are dropped.
    let out = step(&mut d, 10, Event::LinkDown { port: 2 });
    assert_eq!(out.len(), 4);
    assert_eq!(d.counters().dropped(DropReason::FlushedOnLinkDown), 4);
    let f = axon_frame(PacketType::Ethernet, &[2], &[], &eth_frame(B, A, 100));
    step(&mut d, 11, Event::Frame { port: 0, frame: f });
    assert_eq!(d.counters().dropped(DropReason::OutputLinkDown), 1);
    let out = step(
        &mut d,
        12,
        Event::Frame {
            port: 2,
            frame: eth_frame(B, A, 60),
        },
    );
    assert!(matches!(
        out[..],
        [Action::Dropped {
            reason: DropReason::InputLinkDown,
            ..
        }]
    ));
}

#[test]
fn pause_frames_against_self_congestion() {
    let mut d = device(1, &[H, X]);
    let (_, mac) = install(&mut d, 0, &[1, 2, 3], Some(B));
    let mut pauses = Vec::new();
    for n in 1..=300u64 {
        let out = step(
            &mut d,
            n * 1_000_000,
            Event::Frame {
                port: 0,
                frame: eth_frame(mac, A, 100),
            },
        );
        for (port, start, f) in transmits(&out) {
            if port == 0 {
                pauses.push((n, start, f));
            } else {
                step(&mut d, start + 1, Event::TxDone { port: 1 });
            }
        }
    }
    // 7-byte headers: a maximum-sized frame's worth (1,518 bytes) after 217 frames.
    assert_eq!(pauses.len(), 1);
    let (n, start, f) = &pauses[0];
    assert_eq!((*n, *start), (217, 217 * 1_000_000));
    let e = ethernet::Frame::new_checked(&f[..]).unwrap();
    assert_eq!(e.dst_addr(), PAUSE_DST);
    assert_eq!(e.src_addr(), d.port_mac(0));
    assert_eq!(e.ethertype(), EtherType::MAC_CONTROL);
    let p = PauseRepr::parse(&pause::Packet::new_checked(e.payload()).unwrap()).unwrap();
    // As long as a 1,518-byte frame takes: 24 quanta of 512 bit times.
    assert_eq!(p, PauseRepr::Pause { quanta: 24 });
    assert_eq!(d.counters().pauses_sent, 1);
}

#[test]
fn bootstrap_tells_axon_ports_from_host_ports() {
    let mut d1 = device(11, &[PortKind::Unknown, PortKind::Unknown]);
    let mut d2 = device(22, &[PortKind::Unknown, PortKind::Unknown]);
    let out = step(&mut d1, 0, Event::LinkUp { port: 1 });
    let (port, _, hello) = transmits(&out).remove(0);
    assert_eq!(port, 1);
    let out = step(&mut d2, 100, Event::Frame { port: 0, frame: hello });
    assert!(out.contains(&Action::PortClassified {
        port: 0,
        kind: PortKind::Axon,
        neighbor: Some(Neighbor { device_id: 11, port: 1 })
    }));
    let (_, _, reply) = transmits(&out).remove(0);
    assert_eq!(parse_hello(&reply), Some((true, Hello { port: 0, device_id: 22 })));
    let out = step(&mut d1, 200, Event::Frame { port: 1, frame: reply });
    assert_eq!(
        out,
        [Action::PortClassified {
            port: 1,
            kind: PortKind::Axon,
            neighbor: Some(Neighbor { device_id: 22, port: 0 })
        }]
    );
    assert_eq!(d1.port(1).unwrap().kind, PortKind::Axon);

    // A host on d2's port 1: dropped until the bootstrap timeout, a host port after it.
    let out = step(
        &mut d2,
        1_000,
        Event::Frame {
            port: 1,
            frame: eth_frame(MacAddr::BROADCAST, A, 60),
        },
    );
    assert!(matches!(
        out[..],
        [Action::Dropped {
            reason: DropReason::PortUnclassified,
            ..
        }]
    ));
    let timeout = d2.config().bootstrap_timeout_ps;
    let out = step(&mut d2, timeout, Event::Tick);
    assert_eq!(
        out,
        [Action::PortClassified {
            port: 1,
            kind: PortKind::Host,
            neighbor: None
        }]
    );
    let out = step(
        &mut d2,
        timeout + 1,
        Event::Frame {
            port: 1,
            frame: eth_frame(MacAddr::BROADCAST, A, 60),
        },
    );
    assert_eq!(upcalls(&out)[0].1, Upcall::Broadcast);
}

#[test]
fn unicast_arp_from_a_host_goes_to_the_control_plane_despite_a_route() {
    let mut d = device(1, &[X, H]);
    let (_, mac) = install(&mut d, 1, &[0, 1], Some(B));
    assert_eq!(mac, B);
    let mut arp = eth_frame(B, A, 60);
    arp[12..14].copy_from_slice(&EtherType::ARP.0.to_be_bytes());
    let out = step(
        &mut d,
        0,
        Event::Frame {
            port: 1,
            frame: arp.clone(),
        },
    );
    assert!(transmits(&out).is_empty(), "not forwarded along the route");
    let (_, why, got) = upcalls(&out).remove(0);
    assert_eq!(why, Upcall::Arp);
    assert_eq!(header_of(&got).reverse, [1]);
    // Other unicast frames to the same MAC take the route.
    let out = step(
        &mut d,
        10_000_000,
        Event::Frame {
            port: 1,
            frame: eth_frame(B, A, 60),
        },
    );
    assert_eq!(transmits(&out).len(), 1);
}

#[test]
fn a_flooding_host_is_held_to_its_upcall_share_and_the_others_are_not() {
    let mut cfg = DeviceConfig::new(1, 2, GBPS);
    cfg.upcall_rate_per_s = 1_000;
    cfg.upcall_burst = 10;
    let mut d = device_cfg(cfg, &[PortKind::Host, PortKind::Host]);
    let bcast = eth_frame(MacAddr::BROADCAST, A, 60);
    // Port 0 floods 100 broadcasts within 10 us: its burst of 10 goes up, the rest is dropped.
    let mut up = 0;
    for i in 0..100u64 {
        up += upcalls(&step(
            &mut d,
            i * 100_000,
            Event::Frame {
                port: 0,
                frame: bcast.clone(),
            },
        ))
        .len();
    }
    assert_eq!(up, 10);
    assert_eq!(d.counters().dropped(DropReason::UpcallRateLimited), 90);
    // Port 1 still has its own share.
    let from_b = eth_frame(MacAddr::BROADCAST, B, 60);
    assert_eq!(
        upcalls(&step(&mut d, 10_000_000, Event::Frame { port: 1, frame: from_b })).len(),
        1
    );
    // 1 ms later port 0 has earned one more token (1,000 per second).
    let later = 10_000_000 + 1_000_000_000;
    assert_eq!(
        upcalls(&step(
            &mut d,
            later,
            Event::Frame {
                port: 0,
                frame: bcast.clone()
            }
        ))
        .len(),
        1
    );
    assert_eq!(
        upcalls(&step(&mut d, later, Event::Frame { port: 0, frame: bcast })).len(),
        0
    );
}

#[test]
fn control_plane_injects_and_receives() {
    let mut d = device(1, &[X, H]);
    // An ARP reply for the host on port 1: header stripped on the way out.
    let arp = eth_frame(A, d.port_mac(1), 60);
    let f = axon_frame(PacketType::Ethernet, &[1], &[], &arp);
    let (port, start, sent) = transmits(&step(&mut d, 1_000, Event::FromControlPlane { frame: f })).remove(0);
    assert_eq!((port, start, sent), (1, 1_000 + 520_000, arp));
    // An Axon-ARP request out of the Axon port: the control plane's port joins the reverse path.
    let f = axon_frame(PacketType::Control, &[0, 3, CONTROL_PORT], &[], &[1; 38]);
    let (_, _, sent) = transmits(&step(&mut d, 2_000, Event::FromControlPlane { frame: f })).remove(0);
    assert_eq!(header_of(&sent).forward, [3, CONTROL_PORT]);
    assert_eq!(header_of(&sent).reverse, [CONTROL_PORT]);
    // A control message arriving for this control plane.
    let f = axon_frame(PacketType::Control, &[CONTROL_PORT], &[2, CONTROL_PORT], &[1; 38]);
    let len = f.len();
    let (at, why, got) = upcalls(&step(&mut d, 3_000, Event::Frame { port: 0, frame: f })).remove(0);
    assert_eq!(why, Upcall::Addressed);
    assert_eq!(at, 3_000 + wire_time_ps(len, GBPS) + 520_000);
    assert_eq!(header_of(&got).reply_route(), [0, 2, CONTROL_PORT]);
    // Garbage from the control plane is counted, not forwarded.
    step(&mut d, 4_000, Event::FromControlPlane { frame: vec![1, 2, 3] });
    assert_eq!(d.counters().dropped(DropReason::MalformedFromControlPlane), 1);
}

#[test]
fn cut_through_and_store_and_forward_timing() {
    for (mode, len) in [
        (ForwardingMode::CutThrough, 64),
        (ForwardingMode::CutThrough, 1514),
        (ForwardingMode::StoreAndForward, 64),
        (ForwardingMode::StoreAndForward, 1514),
    ] {
        let mut d = device(1, &[X, X, H]);
        d.set_mode(mode);
        let f = axon_frame(PacketType::Ethernet, &[1], &[], &eth_frame(B, A, len));
        let rx = wire_time_ps(f.len(), GBPS);
        let (_, start, _) = transmits(&step(&mut d, 5_000, Event::Frame { port: 0, frame: f })).remove(0);
        let expect = match mode {
            ForwardingMode::CutThrough => 5_000 + 520_000,
            ForwardingMode::StoreAndForward => 5_000 + rx + 520_000,
        };
        assert_eq!(start, expect, "{mode:?} {len}");
        // Toward a host port the frame shrinks by the header; cut-through still starts at 520 ns
        // because the output cannot run out of bytes at equal line rates.
        let f = axon_frame(PacketType::Ethernet, &[2], &[], &eth_frame(B, A, len));
        let (_, start, _) = transmits(&step(
            &mut d,
            5_000,
            Event::Frame {
                port: 0,
                frame: f.clone(),
            },
        ))
        .remove(0);
        let rx = wire_time_ps(f.len(), GBPS);
        let expect = match mode {
            ForwardingMode::CutThrough => 5_000 + 520_000,
            ForwardingMode::StoreAndForward => 5_000 + rx + 520_000,
        };
        assert_eq!(start, expect, "{mode:?} {len} to host");
    }
    // A long route costs one more cycle per 8 hops fetched.
    let mut d = device(1, &[H, X]);
    let mut path = vec![1u8];
    path.extend([3u8; 16]);
    let (_, mac) = install(&mut d, 0, &path, Some(B));
    let (_, start, _) = transmits(&step(
        &mut d,
        0,
        Event::Frame {
            port: 0,
            frame: eth_frame(mac, A, 100),
        },
    ))
    .remove(0);
    assert_eq!(start, 768_000 + 2 * 8_000);
}

#[test]
fn probes_are_stamped_at_input_and_output() {
    let mut d = device(77, &[X, X]);
    let body = ProbeRepr {
        options: axon::probe::OPT_TIMESTAMPS,
        probe_id: 5,
        records: vec![],
    };
    let mut b = vec![0u8; body.buffer_len()];
    body.emit(&mut b).unwrap();
    let f = axon_frame(PacketType::Probe, &[1, CONTROL_PORT], &[], &b);
    let (_, start, sent) = transmits(&step(&mut d, 1_000, Event::FromControlPlane { frame: f })).remove(0);
    let hl = header_of(&sent).header_len();
    let p = ProbeRepr::parse(&axon::probe::Packet::new_checked(&sent[hl..]).unwrap()).unwrap();
    assert_eq!(p.records.len(), 2);
    assert_eq!(
        (p.records[0].port, p.records[0].point, p.records[0].time_ps),
        (CONTROL_PORT, StampPoint::Input, 1_000)
    );
    assert_eq!(
        (p.records[1].port, p.records[1].point, p.records[1].time_ps),
        (1, StampPoint::Output, start)
    );
    assert_eq!(p.records[1].device_id, 77);
    assert_eq!(d.counters().probe_stamps, 2);
}

proptest! {
    #[test]
    fn arbitrary_frames_never_panic(
        frames in proptest::collection::vec((0u8..6, proptest::collection::vec(any::<u8>(), 0..120)), 1..40),
        header_first in any::<bool>(),
    ) {
        let mut d = device(1, &[H, X, X, H]);
        install(&mut d, 0, &[1, 2], Some(B));
        let mut out = Vec::new();
        let mut valid = 0;
        for (n, (port, mut bytes)) in frames.into_iter().enumerate() {
            if header_first && bytes.len() > 8 {
                // Make the start a plausible Axon header so header processing is exercised too.
                let h = AxonRepr { packet_type: PacketType::from_code(bytes[0]), forward: vec![bytes[1] & 0xf, bytes[2] & 0xf], reverse: vec![] };
                h.emit(&mut bytes).unwrap();
            }
            valid += usize::from(port < 4);
            d.handle(n as u64 * 1_000, Event::Frame { port, frame: bytes.clone() }, &mut out);
            d.handle(n as u64 * 1_000 + 1, Event::FromControlPlane { frame: bytes }, &mut out);
            d.handle(n as u64 * 1_000 + 2, Event::TxDone { port: port % 4 }, &mut out);
        }
        prop_assert_eq!(d.counters().received, valid as u64);
        for a in &out {
            if let Action::Transmit { port, .. } = a {
                prop_assert!(usize::from(*port) < d.port_count());
            }
        }
    }
}
