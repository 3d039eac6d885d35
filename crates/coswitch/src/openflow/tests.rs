//! The app against fake switches: two vswitches whose per-flow entries count the packets the
//! test sends through them, and a ToR whose table holds what the app installs.

use super::*;
use tandem_wire::openflow::multipart::{FlowStats, MultipartReply};
use tandem_wire::openflow::{ErrorMsg, FlowRemoved};

const TOR: u64 = 100;

fn ip(h: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, h)
}

/// A TCP frame from host `s` to host `d`.
fn frame(s: u8, d: u8, sport: u16) -> Vec<u8> {
    let mut f = vec![0u8; 74];
    f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, d]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, s]);
    f[12..14].copy_from_slice(&EtherType::IPV4.0.to_be_bytes());
    let h = &mut f[tandem_wire::ethernet::HEADER_LEN..];
    h[0] = 0x45;
    h[2..4].copy_from_slice(&60u16.to_be_bytes());
    h[8] = 64;
    h[9] = 6;
    h[12..16].copy_from_slice(&ip(s).octets());
    h[16..20].copy_from_slice(&ip(d).octets());
    h[20..22].copy_from_slice(&sport.to_be_bytes());
    h[22..24].copy_from_slice(&80u16.to_be_bytes());
    h[32] = 0x50;
    f
}

fn packet_in(data: Vec<u8>) -> PacketInEvent {
    let len = data.len() as u16;
    PacketInEvent::from_frame(Version::V1_3, 0, NO_BUFFER, 2, len, data).unwrap()
}

/// One entry of a fake switch: cookie, match (as text, with the priority), instructions,
/// packets counted.
type Entry = (u64, String, Vec<Instruction>, u64);

/// The fake network: per switch, its entries.
#[derive(Default)]
struct World {
    entries: FxHashMap<u64, Vec<Entry>>,
    packet_outs: usize,
    tor_capacity: usize,
    /// Every entry added: (datapath, cookie, idle timeout in seconds).
    idle_timeouts: Vec<(u64, u64, u16)>,
}

impl World {
    fn take(&mut self, app: &mut CoSwitchApp, now: Time, out: &mut Vec<Reply>) {
        for _ in 0..20 {
            if out.is_empty() {
                return;
            }
            let mut answers = Vec::new();
            for r in out.drain(..) {
                r.message.to_bytes().expect("encodes");
                let table = self.entries.entry(r.dpid).or_default();
                match r.message.body {
                    Body::FlowMod(fm) => {
                        let key = format!("{:?}/{}", fm.matches, fm.priority);
                        match fm.command {
                            FlowModCommand::Add => {
                                if r.dpid == TOR && fm.priority > 0 && table.len() > self.tor_capacity {
                                    answers.push((
                                        r.dpid,
                                        Message {
                                            version: Version::V1_3,
                                            xid: r.message.xid,
                                            body: Body::Error(ErrorMsg {
                                                kind: 5,
                                                code: 0,
                                                data: Vec::new(),
                                            }),
                                        },
                                    ));
                                    continue;
                                }
                                table.retain(|e| e.1 != key);
                                self.idle_timeouts.push((r.dpid, fm.cookie, fm.idle_timeout));
                                table.push((fm.cookie, key, fm.instructions, 0));
                            }
                            FlowModCommand::ModifyStrict => {
                                for e in table.iter_mut().filter(|e| e.1 == key) {
                                    e.2 = fm.instructions.clone();
                                }
                            }
                            FlowModCommand::Delete => table.clear(),
                            c => panic!("{c:?}"),
                        }
                    }
                    Body::PacketOut(_) => self.packet_outs += 1,
                    Body::MultipartRequest(_) => {
                        let stats = table
                            .iter()
                            .filter(|e| e.0 & COOKIE_TAG == COOKIE_VFLOW)
                            .map(|e| FlowStats {
                                cookie: e.0,
                                packet_count: e.3,
                                matches: FlowMatch::Oxm(OxmMatch::default()),
                                ..FlowStats::default()
                            })
                            .collect();
                        answers.push((
                            r.dpid,
                            Message {
                                version: Version::V1_3,
                                xid: r.message.xid,
                                body: Body::MultipartReply(MultipartReply {
                                    flags: 0,
                                    body: MultipartReplyBody::Flow(stats),
                                }),
                            },
                        ));
                    }
                    b => panic!("{b:?}"),
                }
            }
            for (dpid, m) in answers {
                app.on_message(now, dpid, &m, out);
            }
        }
    }

    /// TCPU-style traffic: `n` packets of flow (s -> d, sport) through vswitch `vs`: the first
    /// one without an entry is a packet_in, the rest count in the entry.
    fn send(&mut self, app: &mut CoSwitchApp, now: Time, vs: u64, (s, sport): (u8, u16), n: u64, out: &mut Vec<Reply>) {
        let t = Tuple {
            proto: 6,
            src: ip(s),
            dst: ip(9),
            sport,
            dport: 80,
        };
        let key = format!("{:?}/{PRIO_FLOW}", FlowMatch::Oxm(OxmMatch { fields: t.fields() }));
        let mut left = n;
        if !self.entries.get(&vs).is_some_and(|t| t.iter().any(|e| e.1 == key)) {
            app.on_packet_in(now, vs, &packet_in(frame(s, 9, sport)), out);
            self.take(app, now, out);
            left -= 1;
        }
        if let Some(e) = self
            .entries
            .get_mut(&vs)
            .and_then(|t| t.iter_mut().find(|e| e.1 == key))
        {
            e.3 += left;
        }
    }

    fn tor_flows(&self) -> usize {
        self.entries
            .get(&TOR)
            .map_or(0, |t| t.iter().filter(|e| e.0 & COOKIE_TAG == COOKIE_TOR).count())
    }
}

fn run_until(app: &mut CoSwitchApp, w: &mut World, now: Time, out: &mut Vec<Reply>) {
    while let Some(t) = app.poll_timeout().filter(|&t| t <= now) {
        app.on_timeout(t, out);
        w.take(app, t, out);
    }
}

fn setup(cfg: CoSwitchAppConfig, tor_capacity: usize) -> (CoSwitchApp, World, Vec<Reply>) {
    let mut app = CoSwitchApp::new(cfg).unwrap();
    let mut w = World {
        tor_capacity,
        ..World::default()
    };
    let mut out = Vec::new();
    for d in [1, 2, TOR] {
        app.on_switch_connected(0, d, Version::V1_3, &mut out);
    }
    w.take(&mut app, 0, &mut out);
    (app, w, out)
}

#[test]
fn switches_get_their_defaults() {
    let (app, w, _) = setup(CoSwitchAppConfig::default(), 200);
    // vswitch: NORMAL for everything, IPv4 from its hosts to the controller, from the uplink
    // NORMAL; ToR: NORMAL only.
    assert_eq!(w.entries[&1].len(), 3);
    assert_eq!(w.entries[&TOR].len(), 1);
    assert!(app.tor_connected());
    assert_eq!(app.vswitches(), vec![(1, 0), (2, 0)]);
}

#[test]
fn elephants_are_marked_and_get_a_tor_entry_mice_do_not() {
    let mut cfg = CoSwitchAppConfig::default();
    cfg.prediction.initial_threshold = 18;
    let (mut app, mut w, mut out) = setup(cfg, 200);
    // One elephant (1,000 packets) and ten mice (5 packets) within one poll.
    w.send(&mut app, MS, 1, (1, 5000), 1000, &mut out);
    for m in 0..10 {
        w.send(&mut app, MS, 2, (2, 6000 + m), 5, &mut out);
    }
    run_until(&mut app, &mut w, 150 * MS, &mut out);
    let c = app.counters();
    assert_eq!((c.marked_flows, c.offloaded_flows, c.tor_entries), (1, 1, 1), "{c:?}");
    assert_eq!(w.tor_flows(), 1);
    // The elephant's vswitch entry sets the DSCP mark; the ToR entry matches it.
    let marked = w.entries[&1].iter().find(|e| e.0 & COOKIE_TAG == COOKIE_VFLOW).unwrap();
    assert!(format!("{:?}", marked.2).contains("IpDscp(8)"), "{marked:?}");
    let tor = w.entries[&TOR].iter().find(|e| e.0 & COOKIE_TAG == COOKIE_TOR).unwrap();
    assert!(tor.1.contains("IpDscp(8)") && tor.1.contains("TcpSrc(5000)"), "{tor:?}");
    // The ToR's entry idles out after tor_idle_timeout (3 s), the vswitch's after idle_timeout.
    let idle = |cookie: u64| w.idle_timeouts.iter().find(|e| e.1 == cookie).map(|e| (e.0, e.2));
    assert_eq!((idle(tor.0), idle(marked.0)), (Some((TOR, 3)), Some((1, 10))));
    // Unmarked packets went through the vswitches' entries: the mice's 50 and the elephant's
    // 1,000, all counted before the read that marked it.
    assert_eq!(c.software_packets, 1000 + 50, "{c:?}");
    assert_eq!(c.vswitch_flows, 11);
    assert_eq!(w.packet_outs, 11);
}

#[test]
fn the_tor_never_holds_more_than_its_capacity() {
    let cfg = CoSwitchAppConfig {
        tor_capacity: 3,
        ..CoSwitchAppConfig::default()
    };
    // The fake ToR has room for 2: one refusal comes back as an error.
    let (mut app, mut w, mut out) = setup(cfg, 2);
    for e in 0..6 {
        w.send(&mut app, MS, 1, (1, 7000 + e), 500, &mut out);
    }
    run_until(&mut app, &mut w, 150 * MS, &mut out);
    let c = app.counters();
    assert_eq!(c.marked_flows, 6);
    assert_eq!(w.tor_flows(), 2);
    assert_eq!(c.tor_entries, 2, "{c:?}");
    assert_eq!(c.tor_full, 4, "3 beyond the app's capacity, 1 refused: {c:?}");
    // A removed ToR entry frees its place.
    let cookie = w.entries[&TOR]
        .iter()
        .find(|e| e.0 & COOKIE_TAG == COOKIE_TOR)
        .unwrap()
        .0;
    let removed = Message {
        version: Version::V1_3,
        xid: 0,
        body: Body::FlowRemoved(FlowRemoved {
            cookie,
            matches: FlowMatch::Oxm(OxmMatch::default()),
            ..FlowRemoved::default()
        }),
    };
    app.on_message(200 * MS, TOR, &removed, &mut out);
    assert_eq!(app.counters().tor_entries, 1);
}

#[test]
fn the_threshold_falls_when_servers_are_busy_and_rises_when_the_tor_fills() {
    let cfg = CoSwitchAppConfig {
        vswitch_pps_budget: 1_000,
        tor_capacity: 4,
        ..CoSwitchAppConfig::default()
    };
    let start = cfg.prediction.initial_threshold;
    let (mut app, mut w, mut out) = setup(cfg, 100);
    // Many mice, each below the threshold: the servers carry it all.
    let mut port = 10_000;
    for s in 1..=4u64 {
        for _ in 0..200 {
            w.send(&mut app, s * SEC, 1 + (port % 2) as u64, (1, port), 10, &mut out);
            port += 1;
        }
        run_until(&mut app, &mut w, s * SEC + 10 * MS, &mut out);
    }
    let low = app.counters().threshold;
    assert!(low < u64::from(start), "threshold {low} did not fall from {start}");
    assert!(app.trajectory().count() >= 1);
    // Now the ToR table is full and the servers idle: it rises again.
    for e in 0..4 {
        w.send(&mut app, 5 * SEC, 1, (3, 30_000 + e), 1000, &mut out);
    }
    run_until(&mut app, &mut w, 9 * SEC, &mut out);
    assert!(app.counters().threshold > low, "{:?}", app.counters());
}

#[test]
fn configuration_files_read_units_and_name_bad_keys() {
    let c = CoSwitchAppConfig::parse(
        "[coswitch]\ntor_dpid = 7\nthreshold = 30\nperiod = \"500ms\"\npoll_interval = \"50ms\"\ntor_capacity = 10\ndscp = 12\ntor_idle_timeout = \"2s\"\n",
    )
    .unwrap();
    assert_eq!(
        (
            c.tor_dpid,
            c.prediction.initial_threshold,
            c.prediction.period,
            c.poll_interval,
            c.tor_capacity,
            c.tor_idle_timeout,
            c.arbiter.idle_timeout
        ),
        (7, 30, 500 * MS, 50 * MS, 10, 2 * SEC, 10 * SEC)
    );
    assert_eq!(c.arbiter.mark, Mark::Dscp(12));
    for (text, key) in [
        ("[coswitch]\nbogus = 1\n", "bogus"),
        ("[coswitch]\nperiod = 5\n", "period"),
        ("[coswitch]\ndscp = 64\n", "dscp"),
        ("[coswitch]\nthreshold = 0\n", "threshold"),
        ("[coswitch]\nmin_threshold = 50\n", "initial_threshold"),
        ("[other]\n", "other"),
        ("[coswitch]\nidle_timeout = \"10ms\"\n", "idle_timeout"),
        ("[coswitch]\ntor_idle_timeout = \"100000s\"\n", "tor_idle_timeout"),
    ] {
        let e = CoSwitchAppConfig::parse(text).unwrap_err();
        assert!(e.contains(key), "{text:?}: {e}");
    }
}

#[test]
fn the_cores_log_replays_through_fresh_cores_step_by_step() {
    let cfg = CoSwitchAppConfig {
        vswitch_pps_budget: 1_000,
        tor_capacity: 4,
        log: 1_000_000,
        ..CoSwitchAppConfig::default()
    };
    let (mut app, mut w, mut out) = setup(cfg.clone(), 100);
    let mut port = 10_000;
    for s in 1..=4u64 {
        for _ in 0..100 {
            w.send(&mut app, s * SEC, 1 + (port % 2) as u64, (1, port), 10, &mut out);
            port += 1;
        }
        run_until(&mut app, &mut w, s * SEC + 10 * MS, &mut out);
    }
    for e in 0..4 {
        w.send(&mut app, 5 * SEC, 1, (3, 30_000 + e), 1000, &mut out);
    }
    run_until(&mut app, &mut w, 9 * SEC, &mut out);
    let lines = app.take_log();
    assert!(app.take_log().is_empty(), "taken");
    let text = lines.join("\n") + "\n";
    for kind in [" N ", " P ", " X ", " R "] {
        assert!(text.contains(kind), "no {kind:?} step");
    }
    assert!(
        text.lines().any(|l| l.contains(" R ") && !l.ends_with("#-")),
        "the threshold never moved"
    );
    assert_eq!(replay_lines(&cfg, &text), Ok(lines.len()));
    // A changed count is caught, naming its line.
    let i = lines
        .iter()
        .position(|l| l.contains(" P ") && l.ends_with("#N"))
        .unwrap();
    let mut bent = lines.clone();
    bent[i] = bent[i].replace(" #N", " #M");
    let e = replay_lines(&cfg, &(bent.join("\n") + "\n")).unwrap_err();
    assert!(e.starts_with(&format!("line {}:", i + 1)), "{e}");
    assert!(replay_lines(&cfg, "0000000000000001 5 Q\n").is_err());
}
