//! End-to-end checks of the engine: TCP over links and switches, determinism, drops with
//! reasons, ECN marking, and pcap taps that tshark reads cleanly.

use tandem_sim::config::{CcAlgo, DelayedAck, LinkConfig, Marking, QueueConfig, SwitchConfig, TcpConfig, TcpFlavor};
use tandem_sim::packet::FlowId;
use tandem_sim::report;
use tandem_sim::sim::{Sim, SimOptions};
use tandem_sim::tap::Tap;
use tandem_sim::time::{as_secs, Time, MS, NS, SEC, US};
use tandem_sim::topology::Topology;
use tandem_sim::workload::{FlowKind, FlowSpec};
use tandem_testkit::{require, Scratch};

const GBPS: u64 = 1_000_000_000;

fn link(rate: u64, delay: Time) -> LinkConfig {
    LinkConfig {
        rate_bps: rate,
        delay,
        framing_overhead: 24,
        l2_header: 14,
    }
}

/// A run of `flows` over `topo` with the default switch, host queues, TCP and options.
fn plain_sim(topo: &Topology, flows: Vec<FlowSpec>, seed: u64) -> Sim {
    Sim::new(
        topo,
        SwitchConfig::default(),
        host_q(),
        TcpConfig::default(),
        flows,
        seed,
        SimOptions::default(),
    )
}

fn bulk(
    id: u32,
    src: tandem_sim::packet::NodeId,
    dst: tandem_sim::packet::NodeId,
    bytes: u64,
    start: Time,
) -> FlowSpec {
    FlowSpec {
        id: FlowId(id),
        src,
        dst,
        start,
        bytes,
        kind: FlowKind::Bulk,
    }
}

fn host_q() -> QueueConfig {
    QueueConfig {
        limit_packets: 10_000,
        ..QueueConfig::default()
    }
}

#[test]
fn one_bulk_flow_fills_the_bottleneck() {
    let topo = Topology::dumbbell(1, 1, link(GBPS, 25 * US), link(GBPS, 25 * US)).unwrap();
    let h = topo.hosts().to_vec();
    let bytes = 50_000_000;
    let flows = vec![bulk(0, h[0], h[1], bytes, 0)];
    let mut sim = plain_sim(&topo, flows, 1);
    sim.run_until(2 * SEC);
    let (_, r, eps) = sim.flow_results().next().unwrap();
    let end = r.end.expect("flow completes");
    let secs = as_secs(end - r.start);
    let goodput = bytes as f64 * 8.0 / secs;
    // Payload share of a full frame on the wire: 1448 / (1448 + 66 + 24).
    let ceiling = GBPS as f64 * 1448.0 / 1538.0;
    eprintln!(
        "goodput {:.1} Mb/s, ceiling {:.1}, took {secs:.4} s, stats {:?}",
        goodput / 1e6,
        ceiling / 1e6,
        eps[0].unwrap().stats()
    );
    assert!(goodput > 0.90 * ceiling && goodput <= ceiling * 1.001, "{goodput}");
}

fn incast_run(seed: u64) -> (String, String, u64) {
    let topo = Topology::star(17, link(GBPS, 10 * US)).unwrap();
    let h = topo.hosts().to_vec();
    let flows = (0..16).map(|i| bulk(i, h[i as usize + 1], h[0], 64 << 10, 0)).collect();
    let sw = SwitchConfig {
        queue: QueueConfig {
            limit_packets: 100,
            ..QueueConfig::default()
        },
        ..SwitchConfig::default()
    };
    let mut sim = Sim::new(
        &topo,
        sw,
        host_q(),
        TcpConfig::default(),
        flows,
        seed,
        SimOptions {
            queue_sample_interval: 100 * US,
            ..SimOptions::default()
        },
    );
    sim.run_until(5 * SEC);
    let mut flows_csv = Vec::new();
    report::write_flows(&sim, &mut flows_csv).unwrap();
    let mut drops_csv = Vec::new();
    let drops = report::write_drops(&sim, &mut drops_csv).unwrap();
    (
        String::from_utf8(flows_csv).unwrap(),
        String::from_utf8(drops_csv).unwrap(),
        drops,
    )
}

#[test]
fn incast_overflows_with_reasons_and_is_deterministic() {
    let a = incast_run(7);
    let b = incast_run(7);
    assert_eq!(a, b, "same scenario and seed must give identical outputs");
    let (flows, drops, n) = a;
    assert!(n > 0, "16 x 64 KB into a 100-packet queue must drop");
    assert!(drops.contains("queue-packets"), "{drops}");
    let completed = flows
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(8) == Some("1"))
        .count();
    assert_eq!(completed, 16, "{flows}");
}

/// The ns-3 incast comparison (bench/ns3/incast.cc): 16 x 64 KB into one receiver on a 1 Gb/s
/// star of 25 us links, 100-packet switch queue, SACK, delayed ACKs, IW 10, 200 ms min RTO.
/// ns-3 3.37 repairs every loss by SACK recovery (round 8.88 ms, no timeout). Dropped fast
/// retransmissions used to cost three flows a 200 ms RTO here.
#[test]
fn incast_round_recovers_every_loss_without_a_timeout() {
    let l = LinkConfig {
        rate_bps: GBPS,
        delay: 25 * US,
        framing_overhead: 0,
        l2_header: 14,
    };
    let topo = Topology::star(17, l).unwrap();
    let h = topo.hosts().to_vec();
    let flows = (0..16).map(|i| bulk(i, h[i as usize + 1], h[0], 65_536, 0)).collect();
    let sw = SwitchConfig {
        queue: QueueConfig {
            limit_packets: 100,
            ..QueueConfig::default()
        },
        ..SwitchConfig::default()
    };
    let mut sim = Sim::new(
        &topo,
        sw,
        host_q(),
        TcpConfig::default(),
        flows,
        1,
        SimOptions::default(),
    );
    sim.run_until(SEC);
    let mut round: Time = 0;
    let (mut timeouts, mut retransmits) = (0, 0);
    for (spec, r, eps) in sim.flow_results() {
        let end = r.end.unwrap_or_else(|| panic!("flow {} incomplete", spec.id.0));
        round = round.max(end - r.start);
        let s = eps[0].unwrap().stats();
        timeouts += s.data_timeouts + s.syn_timeouts;
        retransmits += s.retransmits;
    }
    let drops = sim
        .nodes()
        .iter()
        .flat_map(|n| &n.ports)
        .map(|p| p.queues.stats.dropped())
        .sum::<u64>();
    assert!(drops > 100, "the queue must overflow: {drops}");
    assert_eq!(timeouts, 0, "every loss repaired by SACK recovery");
    assert!(
        retransmits >= drops && retransmits <= drops + 16,
        "{retransmits} vs {drops}"
    );
    assert!(round < 20 * MS, "round completion {} s", as_secs(round));
}

#[test]
fn dctcp_keeps_the_queue_near_k() {
    let topo = Topology::star(5, link(GBPS, 10 * US)).unwrap();
    let h = topo.hosts().to_vec();
    let flows = (0..4).map(|i| bulk(i, h[i as usize + 1], h[0], 1 << 40, 0)).collect();
    let k = 20 * 1514;
    let sw = SwitchConfig {
        queue: QueueConfig {
            limit_packets: 1000,
            marking: Marking::Threshold { k_bytes: k },
            ..QueueConfig::default()
        },
        ..SwitchConfig::default()
    };
    let tcp = TcpConfig {
        cc: CcAlgo::Dctcp { g: 1.0 / 16.0 },
        ecn: true,
        delayed_ack: DelayedAck::Off,
        ..TcpConfig::default()
    };
    let mut sim = Sim::new(
        &topo,
        sw,
        host_q(),
        tcp,
        flows,
        1,
        SimOptions {
            queue_sample_interval: 100 * US,
            ..SimOptions::default()
        },
    );
    sim.run_until(200 * MS);
    let port = &sim
        .nodes()
        .iter()
        .find(|n| n.name.starts_with("s") || n.name.starts_with("switch"))
        .unwrap()
        .ports;
    let (drops, marks): (u64, u64) = port
        .iter()
        .map(|p| (p.queues.stats.dropped(), p.queues.stats.marked))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let late: Vec<u64> = sim
        .samples
        .iter()
        .filter(|s| s.time > 50 * MS)
        .map(|s| s.bytes)
        .collect();
    let mean = late.iter().sum::<u64>() as f64 / late.len().max(1) as f64;
    eprintln!(
        "dctcp: drops {drops}, marks {marks}, mean queue {:.0} B (K = {k})",
        mean
    );
    assert_eq!(drops, 0);
    assert!(marks > 0);
    assert!(mean < 3.0 * k as f64, "{mean}");
}

#[test]
fn pcap_tap_is_clean_for_tshark() {
    let dir = Scratch::new("sim-tap");
    let topo = Topology::dumbbell(1, 1, link(GBPS, 10 * US), link(GBPS, 10 * US)).unwrap();
    let h = topo.hosts().to_vec();
    let mut sim = Sim::new(
        &topo,
        SwitchConfig::default(),
        host_q(),
        TcpConfig::default(),
        vec![bulk(0, h[0], h[1], 200_000, 0)],
        1,
        SimOptions::default(),
    );
    let path = dir.join("h0.pcap");
    sim.add_tap(
        h[0],
        0,
        Tap::new(Box::new(std::fs::File::create(&path).unwrap())).unwrap(),
    );
    let path2 = dir.join("h1.pcap");
    sim.add_tap(
        h[1],
        0,
        Tap::new(Box::new(std::fs::File::create(&path2).unwrap())).unwrap(),
    );
    sim.run_until(SEC);
    for t in sim.taps_vec() {
        assert!(t.finish().unwrap() > 10);
    }
    if !require("tshark", "tshark") {
        return;
    }
    for p in [&path, &path2] {
        let o = std::process::Command::new("tshark")
            .args(["-n", "-r"])
            .arg(p)
            .args(["-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE"])
            .args([
                "-Y",
                "_ws.malformed || _ws.expert.severity == error || tcp.checksum.status == 0 || ip.checksum.status == 0",
            ])
            .output()
            .unwrap();
        assert!(o.status.success());
        assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
    }
}

/// A model that records the queue levels it is told about.
struct LevelRecorder {
    seen: std::sync::Arc<std::sync::Mutex<Vec<(u16, usize, u32)>>>,
}

impl tandem_sim::switch::SwitchModel for LevelRecorder {
    fn on_queue_level(&mut self, cx: &mut tandem_sim::switch::SwitchCtx<'_>, port: u16, level: usize, _bytes: u64) {
        let packets = cx.queue(port).map_or(0, |q| q.packets());
        self.seen.lock().unwrap().push((port, level, packets));
    }
    fn watch_packet_levels(&self) -> Vec<u32> {
        vec![20]
    }
}

/// Packet-count watch levels reach the model exactly at the crossing, up and down, and only on
/// the port that crossed.
#[test]
fn packet_watch_levels_report_crossings() {
    let topo = Topology::star(5, link(GBPS, 10 * US)).unwrap();
    let h = topo.hosts().to_vec();
    let flows = (0..4).map(|i| bulk(i, h[i as usize + 1], h[0], 200_000, 0)).collect();
    let mut sim = plain_sim(&topo, flows, 1);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sw = topo.switches()[0];
    sim.attach_model(sw, Box::new(LevelRecorder { seen: seen.clone() }));
    sim.run_until(SEC);
    let seen = seen.lock().unwrap();
    assert!(seen.len() >= 2, "{seen:?}");
    for &(port, level, packets) in seen.iter() {
        assert_eq!(port, 0, "only the receiver's port congests");
        assert_eq!(packets, if level == 1 { 20 } else { 19 }, "{seen:?}");
    }
    assert_eq!(seen[0].1, 1);
}

/// A model that pauses the host on port 1 once, when its first packet comes in, and records
/// when that host's packets arrive.
struct Pauser {
    pause: Time,
    seen: std::sync::Arc<std::sync::Mutex<Vec<Time>>>,
}

impl tandem_sim::switch::SwitchModel for Pauser {
    fn on_ingress(
        &mut self,
        cx: &mut tandem_sim::switch::SwitchCtx<'_>,
        port: u16,
        _pkt: tandem_sim::packet::PacketId,
    ) -> tandem_sim::switch::Verdict {
        if port == 1 {
            let mut seen = self.seen.lock().unwrap();
            if seen.is_empty() {
                // The PAUSE frame reaches the host 10 us (the link) after it leaves now.
                cx.pause_peer(1, cx.now + 10 * US, self.pause);
            }
            seen.push(cx.now);
        }
        tandem_sim::switch::Verdict::Continue
    }
}

/// A paused port finishes the frame on the wire, starts nothing until the pause ends, and then
/// sends what waited back to back; nothing is lost.
#[test]
fn a_paused_port_waits_out_the_pause() {
    let topo = Topology::star(2, link(GBPS, 10 * US)).unwrap();
    let h = topo.hosts().to_vec();
    // 1,000-byte datagrams at 100 Mb/s: one every 80 us, 8.32 us on the wire each.
    let flows = tandem_sim::workload::udp_cbr(&[(h[1], h[0])], 100_000_000, 1000, 0, 2 * MS).unwrap();
    let sent = flows[0].bytes / 1000;
    let mut sim = plain_sim(&topo, flows, 1);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    sim.attach_model(
        topo.switches()[0],
        Box::new(Pauser {
            pause: 500 * US,
            seen: seen.clone(),
        }),
    );
    sim.run_until(SEC);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len() as u64, sent, "every datagram arrives");
    let first = seen[0];
    // The pause reaches the host at first + 10 us; the datagrams due from 80 us on wait until
    // it ends at first + 510 us, then leave back to back (the frame size counts the Ethernet
    // header; 24 bytes of framing on the wire).
    let end = first + 510 * US;
    let wire: Time = 8 * (1000 + 24) * 1000;
    assert_eq!(seen[1], end + wire + 10 * US, "{:?}", &seen[..8]);
    for w in seen[1..8].windows(2) {
        assert_eq!(w[1] - w[0], wire, "{:?}", &seen[..8]);
    }
    // Then the source's own pace again.
    assert_eq!(seen[9] - seen[8], 80 * US, "{:?}", &seen[..10]);
}

/// netperf's TCP_RR as a flow kind: one connection, transactions back to back, each one round
/// trip of the path plus the two frames' serialisation.
#[test]
fn transactions_run_back_to_back_on_one_connection() {
    let topo = Topology::star(2, link(GBPS, 10 * US)).unwrap();
    let h = topo.hosts().to_vec();
    let flows = tandem_sim::workload::transactions(&[(h[0], h[1])], 1, 1, 0).unwrap();
    let mut sim = plain_sim(&topo, flows, 1);
    sim.run_until(20 * MS);
    let (spec, r, eps) = sim.flow_results().next().unwrap();
    let done = r.transactions(spec);
    // Four links of 10 us there and back, store-and-forward, each taking a 1-byte segment of
    // 67 bytes and 24 of framing (0.73 us): about 42.9 us a transaction.
    let mean = r.delay_sum as f64 / done as f64;
    assert!(done > 400, "{done}");
    assert!((42.5e6..43.5e6).contains(&mean), "{mean}");
    assert_eq!(r.delivered, 2 * done);
    // One connection: one SYN, no retransmission.
    assert_eq!(eps[0].unwrap().stats().retransmits, 0);
}

/// A model that records when datagrams come in.
struct Arrivals(std::sync::Arc<std::sync::Mutex<Vec<Time>>>);

impl tandem_sim::switch::SwitchModel for Arrivals {
    fn on_ingress(
        &mut self,
        cx: &mut tandem_sim::switch::SwitchCtx<'_>,
        _port: u16,
        _pkt: tandem_sim::packet::PacketId,
    ) -> tandem_sim::switch::Verdict {
        self.0.lock().unwrap().push(cx.now);
        tandem_sim::switch::Verdict::Continue
    }
}

/// A model that records the tokens it is woken with, and when.
struct Woken(std::sync::Arc<std::sync::Mutex<Vec<(Time, u64)>>>);

impl tandem_sim::switch::SwitchModel for Woken {
    fn on_timer(&mut self, cx: &mut tandem_sim::switch::SwitchCtx<'_>, token: u64) {
        self.0.lock().unwrap().push((cx.now, token));
    }
}

/// A driver outside the run wakes a model at times of its choosing, through the event queue
/// (ties in the order asked; a time already past is now), and sees when the next event is due.
#[test]
fn a_driver_wakes_a_model_at_its_times() {
    let topo = Topology::star(2, link(GBPS, US)).unwrap();
    let mut sim = plain_sim(&topo, Vec::new(), 1);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sw = topo.switches()[0];
    sim.attach_model(sw, Box::new(Woken(seen.clone())));
    assert_eq!(sim.next_event_at(), None);
    sim.wake_model_at(30 * US, sw, 3);
    sim.wake_model_at(10 * US, sw, 1);
    sim.wake_model_at(10 * US, sw, 2);
    assert_eq!(sim.next_event_at(), Some(10 * US));
    sim.run_until(20 * US);
    assert_eq!(sim.next_event_at(), Some(30 * US));
    sim.wake_model_at(0, sw, 4);
    assert!(!sim.run_until(MS));
    assert_eq!(sim.next_event_at(), None);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(10 * US, 1), (10 * US, 2), (20 * US, 4), (30 * US, 3)]
    );
}

/// Jittered UDP gaps spread over (1 - j, 1 + j) of the interval, keep the mean rate, and are
/// the same for the same seed.
#[test]
fn jittered_udp_keeps_its_mean_rate() {
    let run = |seed: u64| {
        let topo = Topology::star(2, link(GBPS, US)).unwrap();
        let h = topo.hosts().to_vec();
        let flows = tandem_sim::workload::udp_cbr(&[(h[0], h[1])], 100_000_000, 1000, 0, 100 * MS).unwrap();
        let flows = tandem_sim::workload::with_jitter(flows, 500).unwrap();
        let mut sim = plain_sim(&topo, flows, seed);
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        sim.attach_model(topo.switches()[0], Box::new(Arrivals(seen.clone())));
        sim.run_until(SEC);
        let v = seen.lock().unwrap().clone();
        v
    };
    let a = run(1);
    assert_eq!(a, run(1));
    assert_ne!(a, run(2));
    // 80 us a datagram on average: about 1,250 in 100 ms.
    assert!((1200..1300).contains(&a.len()), "{}", a.len());
    let gaps: Vec<Time> = a.windows(2).map(|w| w[1] - w[0]).collect();
    let (lo, hi) = (*gaps.iter().min().unwrap(), *gaps.iter().max().unwrap());
    assert!((40 * US..45 * US).contains(&lo), "{lo}");
    assert!(hi <= 120 * US && hi > 115 * US, "{hi}");
}

/// A writer into a buffer the test keeps (a tap's pcap in memory).
#[derive(Clone, Default)]
struct SharedBuf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for SharedBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The (time in ns, frame length) of every frame of a pcap.
fn frames(pcap: &[u8]) -> Vec<(u64, u32)> {
    let mut r = tandem_wire::pcap::TraceReader::new(pcap).unwrap();
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        out.push((p.ts_ns, p.orig_len));
    }
    out
}

/// Runs `flows` on a star of `hosts` 10 Gb/s hosts until `until`, with a tap on every host's
/// egress; returns each host's pcap, the flows table (CSV) and the sim.
fn tapped_run(hosts: u32, flows: Vec<FlowSpec>, seed: u64, until: Time) -> (Vec<Vec<u8>>, Vec<u8>, Sim) {
    let topo = Topology::star(hosts, link(10 * GBPS, US)).unwrap();
    let mut sim = plain_sim(&topo, flows, seed);
    let bufs: Vec<SharedBuf> = topo.hosts().iter().map(|_| SharedBuf::default()).collect();
    for (&h, b) in topo.hosts().iter().zip(&bufs) {
        sim.add_tap(h, 0, Tap::new(Box::new(b.clone())).unwrap());
    }
    sim.run_until(until);
    for t in sim.taps_vec() {
        t.finish().unwrap();
    }
    let mut csv = Vec::new();
    report::write_flows(&sim, &mut csv).unwrap();
    let pcaps = bufs.iter().map(|b| b.0.lock().unwrap().clone()).collect();
    (pcaps, csv, sim)
}

/// A Poisson UDP source offers its rate: 1 Gb/s of 64..1500-byte datagrams (782 bytes on
/// average, one every 6.256 us) for 500 ms is about 79,900 datagrams. The bytes sent are a
/// compound Poisson sum: their relative sd is sqrt(E[s^2]) / (E[s] sqrt(79,900)) = 1.13 /
/// 283 = 0.40%, so the 2% allowed is 5 sd. Sizes stay in range and both ends occur (56
/// expected of each); the mean gap is the mean interval (its sd 0.35%, 2% allowed).
#[test]
fn poisson_udp_offers_its_rate() {
    let topo = Topology::star(2, link(10 * GBPS, US)).unwrap();
    let h = topo.hosts().to_vec();
    let flows = tandem_sim::workload::udp_poisson(&[(h[0], h[1])], GBPS, 64, 1500, 0, 500 * MS).unwrap();
    let mean = flows[0].kind.udp_interval().unwrap();
    assert_eq!(mean, 6_256_000);
    let (pcaps, _, sim) = tapped_run(2, flows, 1, SEC);
    let f = frames(&pcaps[0]);
    let n = f.len() as u64;
    let bytes: u64 = f.iter().map(|&(_, l)| u64::from(l)).sum();
    let rate = bytes as f64 * 8.0 / 0.5;
    assert!((rate / GBPS as f64 - 1.0).abs() < 0.02, "{rate} b/s in {n} datagrams");
    assert!(f.iter().all(|&(_, l)| (64..=1500).contains(&l)));
    assert!(f.iter().any(|&(_, l)| l == 64) && f.iter().any(|&(_, l)| l == 1500));
    // The first one gap after the start, not at it.
    assert!(f[0].0 > 0);
    let gap = (f[f.len() - 1].0 - f[0].0) as f64 * 1000.0 / (n - 1) as f64;
    assert!((gap / mean as f64 - 1.0).abs() < 0.02, "{gap} vs {mean}");
    // Every datagram arrives; the receiver counts payload (the frame less 42 bytes of headers).
    let (spec, r, _) = sim.flow_results().next().unwrap();
    assert_eq!(r.rx_packets, n);
    assert_eq!(r.delivered + 42 * n, bytes);
    // The source's last datagram went before its end; `bytes` is the expected total.
    let end = r.end.unwrap();
    assert!(end < 500 * MS && end > 499 * MS, "{end}");
    assert_eq!(spec.bytes, 62_500_000);
}

/// A Poisson source of a set number of datagrams sends exactly that many, of its size, and
/// stops; zero datagrams and a size below the headers are refused.
#[test]
fn a_poisson_flow_of_n_packets_sends_n() {
    let topo = Topology::star(2, link(10 * GBPS, US)).unwrap();
    let h = topo.hosts().to_vec();
    let f = tandem_sim::workload::udp_poisson_packets(h[0], h[1], GBPS, 500, MS, 37).unwrap();
    assert_eq!(f.bytes, 37 * 500);
    let mut sim = plain_sim(&topo, vec![f], 1);
    sim.run_until(SEC);
    let (_, r, _) = sim.flow_results().next().unwrap();
    assert_eq!(r.rx_packets, 37);
    assert_eq!(r.delivered, 37 * (500 - 42));
    assert!(r.end.is_some_and(|e| e > MS && e < 2 * MS), "{:?}", r.end);
    assert!(tandem_sim::workload::udp_poisson_packets(h[0], h[1], GBPS, 500, 0, 0).is_err());
    assert!(tandem_sim::workload::udp_poisson_packets(h[0], h[1], GBPS, 20, 0, 5).is_err());
}

/// Runs with the same seed give the same bytes, another seed other datagrams, and a flow's
/// datagrams stay the same when another flow is added (its draws depend on the seed, its id
/// and the datagram's number only); a fixed size gives datagrams of that size.
#[test]
fn poisson_udp_is_reproducible_and_flows_are_independent() {
    let topo = Topology::star(3, link(10 * GBPS, US)).unwrap();
    let h = topo.hosts().to_vec();
    let one = tandem_sim::workload::udp_poisson(&[(h[0], h[1])], 100_000_000, 64, 1500, MS, 50 * MS).unwrap();
    let two = tandem_sim::workload::finalize(
        [
            one.clone(),
            tandem_sim::workload::udp_poisson(&[(h[2], h[1])], 100_000_000, 1000, 1000, 2 * MS, 50 * MS).unwrap(),
        ]
        .concat(),
    );
    let a = tapped_run(3, one.clone(), 1, 100 * MS);
    let b = tapped_run(3, one.clone(), 1, 100 * MS);
    assert_eq!((&a.0, &a.1), (&b.0, &b.1), "same seed, same bytes");
    let n = frames(&a.0[0]).len();
    assert!((700..900).contains(&n), "{n}");
    let c = tapped_run(3, one, 2, 100 * MS);
    assert_ne!(a.0[0], c.0[0], "another seed, other datagrams");
    assert!(c.1 != a.1);
    let d = tapped_run(3, two, 1, 100 * MS);
    assert_eq!(a.0[0], d.0[0], "flow 0 sends the same datagrams beside flow 1");
    let fixed = frames(&d.0[2]);
    assert!(fixed.len() > 500 && fixed.iter().all(|&(_, l)| l == 1000));
    assert!(fixed[0].0 > 2_000_000);
    let csv = String::from_utf8(d.1).unwrap();
    assert_eq!(csv.matches(",udp-poisson,").count(), 2, "{csv}");
}

#[test]
fn ns3_flows_starting_in_one_nanosecond_start_in_source_node_order() {
    // `bench/ns3/scenario.cc` rounds each start to the nanosecond, and ns-3 runs application
    // starts that tie in the order of their nodes. Like for like, flow 1 (from host 1) goes
    // first although its start is 0.4 ns after flow 0's (from host 2): its SYN leads at the
    // receiver's port, and it finishes first. The Linux flavour keeps picosecond starts.
    let topo = Topology::star(3, link(GBPS, 10 * US)).unwrap();
    let h = topo.hosts().to_vec();
    for (flavor, first, start) in [(TcpFlavor::Ns3, 1, 10_001 * NS), (TcpFlavor::Linux, 0, 10 * US + 904)] {
        let flows = vec![
            bulk(0, h[2], h[0], 1_000, 10 * US + 904),
            bulk(1, h[1], h[0], 1_000, 10 * US + 1_306),
        ];
        let tcp = TcpConfig {
            flavor,
            ..TcpConfig::default()
        };
        let mut sim = Sim::new(
            &topo,
            SwitchConfig::default(),
            host_q(),
            tcp,
            flows,
            1,
            SimOptions::default(),
        );
        sim.run_until(SEC);
        let r: Vec<_> = sim
            .flow_results()
            .map(|(_, r, _)| (r.start, r.end.expect("done")))
            .collect();
        assert_eq!(r[0].0, start, "{flavor:?}");
        assert!(r[first].1 < r[1 - first].1, "{flavor:?}: flow {first} first, {r:?}");
    }
}
