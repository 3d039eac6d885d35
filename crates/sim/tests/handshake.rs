//! Handshakes that give up: a passive side whose SYN-ACK retries ran out is gone, and the
//! listening socket behind it opens a new connection for the client's next SYN (ns-3 3.37's
//! `ProcessListen`; probe `ws-initrto1ms-syn2` of `bench/ns3/sweep-probes.txt`).

use std::path::Path;
use tandem_sim::packet::PacketId;
use tandem_sim::run;
use tandem_sim::scenario::Scenario;
use tandem_sim::switch::{SwitchCtx, SwitchModel, Verdict};
use tandem_sim::time::{Time, MS};
use tandem_wire::tcp::Flags;

/// One 100 KB flow h0 -> h1 through one switch, 1 ms initial and minimum RTO, three SYN
/// retries (SYNs at 0, 1, 3 and 7 ms), in the given TCP flavour.
fn scenario(flavor: &str) -> Scenario {
    let text = format!(
        r#"
name = "handshake"
duration = "40ms"
[topology]
kind = "star"
hosts = 2
link = {{ rate = "10Gbps", delay = "10us" }}
[tcp]
init_rto = "1ms"
min_rto = "1ms"
syn_retries = 3
flavor = "{flavor}"
[[flows]]
kind = "bulk"
from = ["h0"]
to = "h1"
bytes = "100KB"
[output]
plots = false
"#
    );
    Scenario::parse(&text, "h.toml", "h", Path::new("."), &[]).unwrap()
}

/// Drops every SYN-ACK that reaches the switch before `until`.
struct LoseSynAcks {
    until: Time,
    dropped: u32,
}

impl SwitchModel for LoseSynAcks {
    fn on_ingress(&mut self, cx: &mut SwitchCtx<'_>, _in_port: u16, pkt: PacketId) -> Verdict {
        let flags = cx.pool.get(pkt).flags;
        if cx.now < self.until && flags.contains(Flags::SYN | Flags::ACK) {
            self.dropped += 1;
            return Verdict::Drop("test-synack");
        }
        Verdict::Continue
    }
}

#[test]
fn a_listener_answers_the_syn_that_comes_after_the_passive_side_gave_up() {
    // Every SYN-ACK before 5 ms is lost. In the like-for-like mode the passive side spends its
    // four SYN-ACKs (its timer and the client's repeated SYNs draw on one count) and gives up
    // before 7 ms; the client's fourth SYN, at 7 ms, reaches the listener, which opens a new
    // connection: its SYN-ACK gets through and the flow completes, not failed.
    let sc = scenario("ns3");
    let mut sim = run::build(&sc, None).unwrap();
    let sw = sc.topology.switches()[0];
    sim.attach_model(
        sw,
        Box::new(LoseSynAcks {
            until: 5 * MS,
            dropped: 0,
        }),
    );
    sim.run_until(40 * MS);
    let dropped = sim.model_as::<LoseSynAcks>(sw).unwrap().dropped;
    assert!(dropped >= 4, "{dropped} SYN-ACKs lost");
    let (_, r, eps) = sim.flow_results().next().unwrap();
    assert_eq!(r.failed, None);
    let end = r.end.expect("the flow completes");
    assert!(end > 7 * MS, "completes after the fourth SYN: {end}");
    let server = eps[1].unwrap();
    assert!(server.is_established() || server.is_closed());
    // The passive side's SYN-ACK retries of the connection that gave up are still counted.
    assert!(server.stats().syn_timeouts >= 1);
}

/// Logs every packet a switch takes in: when, from which host, its flags.
#[derive(Default)]
struct Ingress(Vec<(Time, u32, Flags)>);

impl SwitchModel for Ingress {
    fn on_ingress(&mut self, cx: &mut SwitchCtx<'_>, _in_port: u16, pkt: PacketId) -> Verdict {
        let p = cx.pool.get(pkt);
        self.0.push((cx.now, p.src.0, p.flags));
        Verdict::Continue
    }
}

/// h0 and h1 on s0, h2 on s1 behind it: 1 Gb/s links of 10 us, h2's of 1 us, PPP framing.
/// Flow 0 h0 -> h1 starts at 0; flow 1 h2 -> h0 at `b_start`, if given.
fn two_switches(flavor: &str, b_start: Option<Time>) -> Vec<(Time, u32, Flags)> {
    let b = b_start.map_or(String::new(), |t| {
        format!("[[flows]]\nkind = \"bulk\"\npairs = [[\"h2\", \"h0\"]]\nbytes = \"10KB\"\nstart = \"{t}ps\"\n")
    });
    let text = format!(
        r#"
name = "fork"
duration = "1ms"
[topology]
kind = "graph"
node = [{{ name = "s0", kind = "switch" }}, {{ name = "s1", kind = "switch" }},
        {{ name = "h0", kind = "host" }}, {{ name = "h1", kind = "host" }}, {{ name = "h2", kind = "host" }}]
link = [{{ a = "h0", b = "s0", rate = "1Gbps", delay = "10us", framing = "ppp" }},
        {{ a = "h1", b = "s0", rate = "1Gbps", delay = "10us", framing = "ppp" }},
        {{ a = "s1", b = "s0", rate = "1Gbps", delay = "10us", framing = "ppp" }},
        {{ a = "h2", b = "s1", rate = "1Gbps", delay = "1us", framing = "ppp" }}]
[tcp]
flavor = "{flavor}"
[[flows]]
kind = "bulk"
pairs = [["h0", "h1"]]
bytes = "10KB"
{b}
[output]
plots = false
"#
    );
    let sc = Scenario::parse(&text, "f.toml", "f", Path::new("."), &[]).unwrap();
    let mut sim = run::build(&sc, None).unwrap();
    let s0 = sc.topology.find("s0").unwrap();
    sim.attach_model(s0, Box::new(Ingress::default()));
    sim.run_until(MS);
    std::mem::take(&mut sim.model_as_mut::<Ingress>(s0).unwrap().0)
}

#[test]
fn ns3_forks_the_listening_socket_after_the_events_already_due() {
    // Flow 0's SYN reaches s0 at t1 = sigma + 10 us and h1 at T = 2 sigma + 20 us; its
    // SYN-ACK reaches s0 at t2 = T + sigma + 10 us. Flow 1's SYN, sent at t2 - 2 sigma - 11 us,
    // reaches s1 at T too (an event scheduled after h1's arrival, at its send) and s0 at t2.
    // ns-3's listener answers in an event of its own at T (`CompleteFork`, `ScheduleNow`):
    // after s1 forwards flow 1's SYN, which so reaches s0 first. Answering at once, as the
    // Linux flavour does, the SYN-ACK is first.
    for (flavor, syn_first) in [("ns3", true), ("linux", false)] {
        let alone = two_switches(flavor, None);
        let (t1, t2) = (alone[0].0, alone[1].0);
        assert!(
            alone[0].2 == Flags::SYN && alone[1].2 == Flags::SYN | Flags::ACK,
            "{alone:?}"
        );
        let sigma = t1 - 10 * tandem_sim::time::US;
        assert_eq!(
            t2,
            3 * sigma + 30 * tandem_sim::time::US,
            "{flavor}: a SYN-ACK as long as the SYN"
        );
        let log = two_switches(flavor, Some(t2 - 2 * sigma - 11 * tandem_sim::time::US));
        let at_t2: Vec<(u32, Flags)> = log.iter().filter(|e| e.0 == t2).map(|e| (e.1, e.2)).collect();
        // Hosts are nodes 2, 3, 4: h2's SYN and h1's SYN-ACK.
        let (syn, synack) = ((4, Flags::SYN), (3, Flags::SYN | Flags::ACK));
        let want = if syn_first {
            vec![syn, synack]
        } else {
            vec![synack, syn]
        };
        assert_eq!(at_t2, want, "{flavor}");
    }
}
