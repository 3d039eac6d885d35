//! The app against a fake OpenFlow switch: a table with a capacity (refusing what does not
//! fit, as OVS does with `overflow_policy=refuse`), byte counters that grow for the flows the
//! table holds, and flow stats replies.

use super::*;
use crate::types::MS;
use tandem_wire::openflow::multipart::{FlowStats, MultipartReply};
use tandem_wire::openflow::ErrorMsg;

const DPID: u64 = 7;

fn mac(h: u8) -> MacAddr {
    MacAddr([2, 0, 0, 0, 0, h])
}

fn ip(h: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, h)
}

/// An Ethernet + IPv4 + TCP/UDP frame from host `s` to host `d` (hosts sit on port = host).
fn frame(s: u8, d: u8, proto: u8, sport: u16, dport: u16, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len.max(54)];
    f[0..6].copy_from_slice(&mac(d).0);
    f[6..12].copy_from_slice(&mac(s).0);
    f[12..14].copy_from_slice(&EtherType::IPV4.0.to_be_bytes());
    let ipl = (f.len() - tandem_wire::ethernet::HEADER_LEN) as u16;
    let h = &mut f[tandem_wire::ethernet::HEADER_LEN..];
    h[0] = 0x45;
    h[2..4].copy_from_slice(&ipl.to_be_bytes());
    h[8] = 64;
    h[9] = proto;
    h[12..16].copy_from_slice(&ip(s).octets());
    h[16..20].copy_from_slice(&ip(d).octets());
    h[20..22].copy_from_slice(&sport.to_be_bytes());
    h[22..24].copy_from_slice(&dport.to_be_bytes());
    if proto == 6 {
        h[32] = 0x50;
    } else {
        h[24..26].copy_from_slice(&(ipl - 20).to_be_bytes());
    }
    f
}

fn packet_in(in_port: u32, data: Vec<u8>) -> PacketInEvent {
    let len = data.len() as u16;
    PacketInEvent::from_frame(Version::V1_3, 0, NO_BUFFER, in_port, len, data).unwrap()
}

fn arp_from(h: u8) -> PacketInEvent {
    let mut f = vec![0u8; 60];
    f[0..6].copy_from_slice(&[0xff; 6]);
    f[6..12].copy_from_slice(&mac(h).0);
    f[12..14].copy_from_slice(&[0x08, 0x06]);
    packet_in(u32::from(h), f)
}

/// One table entry of the fake switch.
#[derive(Debug, Clone)]
struct Entry {
    cookie: u64,
    bytes: u64,
}

/// The fake switch: one table of `capacity` entries keyed by (priority, match).
struct FakeSwitch {
    capacity: usize,
    table: BTreeMap<(u16, String), Entry>,
    packet_outs: Vec<(u32, usize)>,
    peak: usize,
    refused: u64,
}

impl FakeSwitch {
    fn new(capacity: usize) -> FakeSwitch {
        FakeSwitch {
            capacity,
            table: BTreeMap::new(),
            packet_outs: Vec::new(),
            peak: 0,
            refused: 0,
        }
    }

    /// TCPU's flow entries now.
    fn flow_entries(&self) -> usize {
        self.table
            .values()
            .filter(|e| e.cookie & COOKIE_TAG == COOKIE_FLOW)
            .count()
    }

    /// The entry a frame of this 5-tuple hits, if any (the highest priority).
    fn hit(&mut self, key: &str) -> Option<&mut Entry> {
        self.table.iter_mut().rev().find(|((_, m), _)| m == key).map(|(_, e)| e)
    }

    /// Carries out the app's messages; returns the switch's answers.
    fn take(&mut self, replies: &mut Vec<Reply>) -> Vec<Message> {
        let mut answers = Vec::new();
        for r in replies.drain(..) {
            // Every message must encode.
            r.message.to_bytes().unwrap();
            assert_eq!(r.dpid, DPID);
            let xid = r.message.xid;
            match r.message.body {
                Body::FlowMod(fm) => {
                    let key = format!("{:?}", fm.matches);
                    match fm.command {
                        FlowModCommand::Add => {
                            let k = (fm.priority, key);
                            if !self.table.contains_key(&k) && self.table.len() >= self.capacity {
                                self.refused += 1;
                                answers.push(Message {
                                    version: Version::V1_3,
                                    xid,
                                    body: Body::Error(ErrorMsg {
                                        kind: 5,
                                        code: 0,
                                        data: Vec::new(),
                                    }),
                                });
                                continue;
                            }
                            self.table.insert(
                                k,
                                Entry {
                                    cookie: fm.cookie,
                                    bytes: 0,
                                },
                            );
                        }
                        FlowModCommand::DeleteStrict => {
                            self.table.remove(&(fm.priority, key));
                        }
                        FlowModCommand::Delete => self.table.clear(),
                        c => panic!("unexpected command {c:?}"),
                    }
                    self.peak = self.peak.max(self.flow_entries());
                }
                Body::PacketOut(po) => {
                    let OfAction::Output { port, .. } = po.actions[0] else {
                        panic!()
                    };
                    self.packet_outs.push((port, po.data.len()));
                }
                Body::MultipartRequest(req) => {
                    let MultipartRequestBody::Flow(f) = req.body else {
                        panic!()
                    };
                    let stats: Vec<FlowStats> = self
                        .table
                        .values()
                        .filter(|e| e.cookie & f.cookie_mask == f.cookie)
                        .map(|e| FlowStats {
                            cookie: e.cookie,
                            byte_count: e.bytes,
                            matches: FlowMatch::Oxm(OxmMatch::default()),
                            ..FlowStats::default()
                        })
                        .collect();
                    // In two parts, as a switch with many entries answers.
                    let half = stats.len() / 2;
                    for (part, flags) in [(&stats[..half], FLAG_MORE), (&stats[half..], 0)] {
                        answers.push(Message {
                            version: Version::V1_3,
                            xid,
                            body: Body::MultipartReply(MultipartReply {
                                flags,
                                body: MultipartReplyBody::Flow(part.to_vec()),
                            }),
                        });
                    }
                }
                b => panic!("unexpected message {b:?}"),
            }
        }
        answers
    }
}

fn config(k: u32) -> TcpuAppConfig {
    let mut cfg = TcpuAppConfig::default();
    cfg.tcpu.ports = 4;
    cfg.tcpu.asic_flow_entries = k;
    cfg.tcpu.attack_defense = false;
    cfg.app.log = 1_000_000;
    cfg
}

/// A run: `mice` flows of one packet per 10 ms and `elephants` flows of 20 packets per ms,
/// from hosts 1-3 to host 4, for `ms` milliseconds. Packets of flows the table holds only
/// move its counters; the others become packet_ins.
struct Run {
    app: TcpuApp,
    sw: FakeSwitch,
    out: Vec<Reply>,
}

impl Run {
    fn new(cfg: TcpuAppConfig, capacity: usize) -> Run {
        let mut run = Run {
            app: TcpuApp::new(cfg).unwrap(),
            sw: FakeSwitch::new(capacity),
            out: Vec::new(),
        };
        run.app.on_switch_connected(0, DPID, Version::V1_3, &mut run.out);
        run.pump(0);
        // The hosts announce themselves (ARP), so every destination is learnt.
        for h in 1..=4 {
            run.app.on_packet_in(0, DPID, &arp_from(h), &mut run.out);
        }
        run.pump(0);
        run
    }

    fn pump(&mut self, now: Time) {
        for _ in 0..100 {
            if self.out.is_empty() {
                return;
            }
            for m in self.sw.take(&mut self.out) {
                self.app.on_message(now, DPID, &m, &mut self.out);
            }
        }
    }

    fn send(&mut self, now: Time, s: u8, sport: u16, len: usize) {
        let data = frame(s, 4, 6, sport, 80, len);
        let sw = &self.app.switches[&DPID];
        let tuple = Tuple {
            proto: 6,
            src: ip(s),
            dst: ip(4),
            sport,
            dport: 80,
        };
        let key = sw
            .flows
            .get(&tuple)
            .and_then(|f| sw.oxm(RuleMatch::Flow(*f)))
            .map(|m| format!("{:?}", FlowMatch::Oxm(m)));
        if let Some(e) = key.and_then(|k| self.sw.hit(&k)) {
            e.bytes += len as u64;
            return;
        }
        self.app
            .on_packet_in(now, DPID, &packet_in(u32::from(s), data), &mut self.out);
        self.pump(now);
    }

    fn until(&mut self, now: Time) {
        while let Some(t) = self.app.poll_timeout().filter(|&t| t <= now) {
            self.app.on_timeout(t, &mut self.out);
            self.pump(t);
        }
    }

    fn traffic(&mut self, mice: u16, elephants: u16, ms: u64) {
        for step in 0..ms {
            let now = step * MS;
            self.until(now);
            for e in 0..elephants {
                for _ in 0..20 {
                    self.send(now, 1 + (e % 3) as u8, 1000 + e, 1514);
                }
            }
            if step % 10 == 0 {
                for m in 0..mice {
                    self.send(now, 1 + (m % 3) as u8, 20_000 + m, 200);
                }
            }
        }
        self.until(ms * MS);
    }
}

#[test]
fn a_connecting_switch_gets_a_clean_table_and_a_miss_entry() {
    let mut app = TcpuApp::new(config(8)).unwrap();
    let mut out = Vec::new();
    app.on_switch_connected(0, DPID, Version::V1_3, &mut out);
    let kinds: Vec<_> = out
        .iter()
        .map(|r| match &r.message.body {
            Body::FlowMod(fm) => (fm.command, fm.priority, fm.cookie),
            b => panic!("{b:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        vec![(FlowModCommand::Delete, 0, 0), (FlowModCommand::Add, 0, COOKIE_MISS)]
    );
    // OpenFlow 1.0 switches are refused: the app needs cookie masks.
    out.clear();
    app.on_switch_connected(0, 8, Version::V1_0, &mut out);
    assert!(out.is_empty());
    assert_eq!((app.switches(), app.refused_switches()), (vec![DPID], 1));
}

#[test]
fn the_cpu_path_forwards_what_the_table_does_not_hold() {
    let mut run = Run::new(config(8), 100);
    // ARP was flooded.
    assert_eq!(run.sw.packet_outs.len(), 4);
    assert!(run.sw.packet_outs.iter().all(|&(p, _)| p == OFPP13_FLOOD));
    run.sw.packet_outs.clear();
    // One mouse packet: held, then sent to port 4 by the core.
    run.send(0, 1, 5555, 300);
    run.until(10 * MS);
    assert_eq!(run.sw.packet_outs, vec![(4, 300)]);
    let c = run.app.counters(DPID).unwrap();
    assert_eq!((c.software_packets, c.other_packets), (1, 4));
    assert_eq!(run.app.core_stats(DPID).unwrap().cpu_packets, 1);
}

#[test]
fn elephants_end_up_in_the_table_which_never_exceeds_k() {
    let k = 8;
    // The switch table holds k flow entries and the miss entry.
    let mut run = Run::new(config(k), k as usize + 1);
    run.traffic(40, 4, 600);
    let elephants_in: usize = (0..4u16)
        .filter(|e| {
            let t = Tuple {
                proto: 6,
                src: ip(1 + (e % 3) as u8),
                dst: ip(4),
                sport: 1000 + e,
                dport: 80,
            };
            let f = run.app.switches[&DPID].flows[&t];
            run.app.switches[&DPID].installed.contains_key(&RuleMatch::Flow(f))
        })
        .count();
    assert_eq!(elephants_in, 4, "every elephant is in the table");
    assert!(run.sw.peak <= k as usize, "peak {} > k", run.sw.peak);
    assert_eq!(run.sw.refused, 0, "the app never asks for more than k");
    let c = run.app.counters(DPID).unwrap();
    assert!(c.offloaded_flows >= 4 && c.counter_reads >= 5, "{c:?}");
    assert!(c.software_packets > 0);
    assert!(c.table_entries as usize <= k as usize);
    // The elephants' later packets took the fast path: most bytes moved in the table.
    let stats = run.app.core_stats(DPID).unwrap();
    assert!(stats.asic_bytes > stats.cpu_bytes, "{stats:?}");
}

#[test]
fn a_refused_entry_is_reported_back_to_the_core() {
    // The switch's table is smaller than the app believes: its refusals reach the core.
    let mut run = Run::new(config(8), 3);
    run.traffic(0, 6, 400);
    let c = run.app.counters(DPID).unwrap();
    assert!(c.op_failures > 0, "{c:?}");
    assert_eq!(run.app.core_stats(DPID).unwrap().op_failures, c.op_failures);
    assert!(run.sw.table.len() <= 3);
}

#[test]
fn the_live_log_replays_through_a_fresh_core_decision_by_decision() {
    let cfg = config(8);
    let mut run = Run::new(cfg.clone(), 9);
    run.traffic(30, 3, 400);
    let log = run.app.log(DPID);
    assert!(log.len() > 100, "{}", log.len());
    assert!(log.iter().any(|s| matches!(s.input, LoggedInput::Counters(_))));
    assert_eq!(replay(&cfg.tcpu, log), Ok(log.len()));
    // A changed input is caught: a packet ten times as long is paced out later.
    let mut bent = log.to_vec();
    let i = bent
        .iter()
        .rposition(|s| matches!(s.input, LoggedInput::Packet { .. }))
        .unwrap();
    if let LoggedInput::Packet { bytes, .. } = &mut bent[i].input {
        *bytes *= 10;
    }
    assert!(replay(&cfg.tcpu, &bent).is_err());
}

#[test]
fn configuration_files_read_units_and_name_bad_keys() {
    let cfg = TcpuAppConfig::parse(
        "[tcpu]\nports = 4\nport_bps = \"100Mbps\"\nasic_flow_entries = 16\nrank_interval = \"50ms\"\n[app]\nmax_attack_rules = 2\n",
    )
    .unwrap();
    assert_eq!(
        (
            cfg.tcpu.port_bps,
            cfg.tcpu.asic_flow_entries,
            cfg.tcpu.rank_interval,
            cfg.app.max_attack_rules
        ),
        (100_000_000, 16, 50 * MS, 2)
    );
    for (text, key) in [
        ("[tcpu]\nrank_interval = 5\n", "tcpu.rank_interval"),
        ("[tcpu]\nbogus = 1\n", "bogus"),
        ("[app]\nmax_flows = 0\n", "app.max_flows"),
        ("[other]\n", "other"),
        ("[tcpu]\nbulk_channel_share_pct = 200\n", "bulk_channel_share_pct"),
    ] {
        let e = TcpuAppConfig::parse(text).unwrap_err();
        assert!(e.contains(key), "{text:?}: {e}");
    }
}

#[test]
fn log_lines_round_trip_and_replay_from_text() {
    let cfg = config(8);
    let mut run = Run::new(cfg.clone(), 9);
    run.traffic(30, 3, 300);
    // A refusal too, so that every kind of input is written.
    run.app
        .switches
        .get_mut(&DPID)
        .unwrap()
        .failed
        .push(RuleMatch::Flow(FlowId(0)));
    run.until(400 * MS);
    let log = run.app.take_log(DPID);
    assert!(run.app.log(DPID).is_empty(), "taken");
    let mut text = connect_line(DPID, 0) + "\n";
    for step in &log {
        let line = step.to_line(DPID);
        let (dpid, now, input, digest) = LoggedStep::parse_line(&line).unwrap();
        assert_eq!(
            (dpid, now, &input, digest),
            (DPID, step.now, &step.input, actions_digest(&step.actions))
        );
        text.push_str(&line);
        text.push('\n');
    }
    for kind in ["P ", "C ", "T ", "F flow"] {
        assert!(text.contains(&format!(" {kind}")), "no {kind:?} line");
    }
    assert_eq!(replay_lines(&cfg.tcpu, &text), Ok(log.len()));
    // A line being written (no newline yet) is left out; a reconnect starts a fresh core.
    let partial = format!("{text}{}", &log[0].to_line(DPID)[..10]);
    assert_eq!(replay_lines(&cfg.tcpu, &partial), Ok(log.len()));
    // A step that did not happen live is caught, naming its line.
    let bent = text.replacen(" T #", " P 999999 0 1 3 1500 1 #", 1);
    let e = replay_lines(&cfg.tcpu, &bent).unwrap_err();
    assert!(e.starts_with("line "), "{e}");
    for bad in ["x", "0000000000000007 5 Q #0", "0000000000000007 5 P 1 2 #00"] {
        assert!(LoggedStep::parse_line(bad).is_err(), "{bad}");
    }
}
