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
