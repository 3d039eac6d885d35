//! Link failures (`[[failures]]`, `Sim::schedule_link`): what was on a failed link or waiting
//! for it is lost with reason `link-down`, a switch stops choosing a dead port among equal-cost
//! next hops, one that does not see the failure keeps sending into it (`no-route` at the far
//! switch), traffic resumes when the link comes back, every model hears each change, entries
//! are checked at their key, and runs stay deterministic.

use std::path::Path;
use tandem_sim::packet::{NodeId, PacketId};
use tandem_sim::run;
use tandem_sim::scenario::Scenario;
use tandem_sim::switch::{LinkChange, SwitchCtx, SwitchModel, Verdict};
use tandem_sim::time::{MS, US};
use tandem_testkit::Scratch;

/// Two hosts per leaf, two spines, 10 Gb/s, 1 us links; flows and failures appended.
const LEAF_SPINE: &str = r#"
name = "failures"
duration = "3ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "10Gbps", delay = "1us" }
[output]
plots = false
"#;

fn parse(extra: &str) -> Result<Scenario, String> {
    Scenario::parse(&format!("{LEAF_SPINE}{extra}"), "f.toml", "f", Path::new("."), &[]).map_err(|e| e.to_string())
}

/// Eight UDP sources from leaf0's hosts to leaf1's at 1 Gb/s of 1,000 B datagrams (8 us apart),
/// spread over both spines by their flows' hashes.
const UDP: &str = r#"
[[flows]]
kind = "udp_cbr"
pairs = [["h0", "h2"], ["h0", "h3"], ["h1", "h2"], ["h1", "h3"], ["h0", "h2"], ["h0", "h3"], ["h1", "h2"], ["h1", "h3"]]
rate = "1Gbps"
packet_size = 1000
"#;

/// (datagrams sent, received) over all flows.
fn sent_received(sim: &tandem_sim::sim::Sim) -> (u64, u64) {
    // A CBR source sends one datagram every 8 us from its start (t = 0) until the run ends.
    let sent: u64 = sim.flow_results().map(|_| sim.now() / (8 * US) + 1).sum();
    let received: u64 = sim.flow_results().map(|(_, r, _)| r.rx_packets).sum();
    (sent, received)
}

/// Drops at every node's ports for `reason`.
fn drops(sim: &tandem_sim::sim::Sim, reason: &str) -> u64 {
    sim.nodes()
        .iter()
        .flat_map(|n| &n.ports)
        .flat_map(|p| &p.queues.stats.drops)
        .filter(|d| d.0.as_str() == reason)
        .map(|d| d.1)
        .sum()
}

#[test]
fn a_leaf_moves_its_flows_off_a_link_it_sees_fail() {
    // leaf0 - spine0 fails 2.5 us after a round of datagrams left the hosts at 1 ms, while
    // those of the flows hashed onto spine0 are on that link: they are lost, and leaf0 sends
    // every flow by spine1 from then on.
    let sc = parse(&format!(
        "{UDP}[[failures]]\nlink = [\"leaf0\", \"spine0\"]\nat = \"1002500ns\"\nuntil = \"2ms\"\n"
    ))
    .unwrap();
    assert_eq!(sc.failures.len(), 1);
    let mut sim = run::build(&sc, None).unwrap();
    let (leaf0, spine0) = (sc.topology.find("leaf0").unwrap(), sc.topology.find("spine0").unwrap());
    let port = sc.failures[0].at.1;
    sim.run_until(MS - 1);
    assert!(!sim.link_down(leaf0, port));
    let (_, before) = sent_received(&sim);
    sim.run_until(MS + 100 * US);
    assert!(sim.link_down(leaf0, port));
    let spine_port = sc.topology.ports(leaf0)[usize::from(port)].peer_port;
    assert!(sim.link_down(spine0, spine_port), "both directions fail");
    sim.run_until(3 * MS);
    assert!(!sim.link_down(leaf0, port), "back at 2 ms");
    let (sent, received) = sent_received(&sim);
    let lost = drops(&sim, "link-down");
    // At most a datagram per flow was on the wire or queued on the failed link.
    assert!((1..=8).contains(&lost), "{lost}");
    assert_eq!(drops(&sim, "no-route"), 0);
    // Everything else arrives (but the datagrams still on their way at the end).
    assert!(
        received + lost + 8 * 2 >= sent && received + lost <= sent,
        "{sent} {received} {lost}"
    );
    assert!(received > before);
}

#[test]
fn a_switch_that_does_not_see_the_failure_sends_into_it_until_it_comes_back() {
    // spine0 - leaf1 fails: leaf0 does not see it and keeps hashing flows onto spine0, which
    // has no live port to leaf1 and drops them (no-route) until the link is back at 2 ms.
    let sc = parse(&format!(
        "{UDP}[[failures]]\nlink = [\"spine0\", \"leaf1\"]\nat = \"1ms\"\nuntil = \"2ms\"\n"
    ))
    .unwrap();
    let mut sim = run::build(&sc, None).unwrap();
    sim.run_until(2 * MS);
    let blackholed = drops(&sim, "no-route");
    // The flows on spine0 (at least one of eight by the hash) lose 1 ms of datagrams: 125 each.
    assert!(blackholed >= 120, "{blackholed}");
    sim.run_until(3 * MS);
    assert_eq!(
        drops(&sim, "no-route"),
        blackholed,
        "nothing lost once the link is back"
    );
    let (sent, received) = sent_received(&sim);
    let lost = blackholed + drops(&sim, "link-down");
    assert!(
        received + lost <= sent && received + lost + 16 >= sent,
        "{sent} {received} {lost}"
    );
}

#[test]
fn a_single_path_loses_what_crosses_it_while_it_is_down() {
    // h0's own link fails from 1 ms to 2 ms: its datagrams are dropped at its NIC (link-down),
    // 125 per source.
    let one = r#"
[[flows]]
kind = "udp_cbr"
pairs = [["h0", "h2"]]
rate = "1Gbps"
packet_size = 1000
[[failures]]
link = ["h0", "leaf0"]
at = "1ms"
until = "2ms"
"#;
    let sc = parse(one).unwrap();
    let mut sim = run::build(&sc, None).unwrap();
    sim.run_until(3 * MS);
    let lost = drops(&sim, "link-down");
    assert!((125..=127).contains(&lost), "{lost}");
    let (sent, received) = sent_received(&sim);
    assert!(
        received + lost <= sent && received + lost + 2 >= sent,
        "{sent} {received} {lost}"
    );
}

/// Records the link changes it hears.
struct Listener {
    heard: Vec<(LinkChange, Option<u16>)>,
}

impl SwitchModel for Listener {
    fn on_ingress(&mut self, _cx: &mut SwitchCtx<'_>, _in_port: u16, _pkt: PacketId) -> Verdict {
        Verdict::Continue
    }
    fn on_link_change(&mut self, cx: &mut SwitchCtx<'_>, change: LinkChange) {
        self.heard.push((change, change.port_of(cx.node)));
    }
}

#[test]
fn every_model_hears_every_change_and_knows_its_own_ports() {
    let sc = parse(&format!(
        "{UDP}[[failures]]\nlink = [\"leaf0\", \"spine1\"]\nat = \"1ms\"\nuntil = \"2ms\"\n"
    ))
    .unwrap();
    let mut sim = run::build(&sc, None).unwrap();
    let switches: Vec<NodeId> = sc.topology.switches().to_vec();
    for &s in &switches {
        sim.attach_model(s, Box::new(Listener { heard: Vec::new() }));
    }
    sim.run_until(3 * MS);
    let (leaf0, spine1) = (sc.topology.find("leaf0").unwrap(), sc.topology.find("spine1").unwrap());
    for &s in &switches {
        let l = sim.model_as::<Listener>(s).unwrap();
        assert_eq!(l.heard.len(), 2, "down and up");
        assert!(!l.heard[0].0.up && l.heard[1].0.up);
        let mine = l.heard[0].1.is_some();
        assert_eq!(mine, s == leaf0 || s == spine1, "{s:?}");
    }
}

#[test]
fn entries_are_checked_at_their_key() {
    let err = |e: &str| parse(e).unwrap_err();
    assert!(err("[[failures]]\nlink = [\"leaf0\", \"nowhere\"]\nat = \"1ms\"\n").contains("failures[0].link[1]"));
    let e = err("[[failures]]\nlink = [\"leaf0\", \"leaf1\"]\nat = \"1ms\"\n");
    assert!(e.contains("failures[0].link") && e.contains("no link between"), "{e}");
    let e = err("[[failures]]\nlink = [\"leaf0\", \"spine0\"]\nat = \"2ms\"\nuntil = \"1ms\"\n");
    assert!(e.contains("failures[0].until"), "{e}");
    let e = err("[[failures]]\nlink = [\"leaf0\", \"spine0\"]\nat = \"3ms\"\n");
    assert!(e.contains("failures[0].at") && e.contains("end of the run"), "{e}");
    let e = err("[[failures]]\nlink = [\"leaf0\", \"spine0\"]\nat = \"1ms\"\nwhen = 1\n");
    assert!(e.contains("when"), "{e}");
    assert!(parse("").unwrap().failures.is_empty());
}

#[test]
fn runs_with_failures_are_deterministic_and_drops_say_why() {
    let sc = parse(&format!(
        "{UDP}[[failures]]\nlink = [\"spine0\", \"leaf1\"]\nat = \"1ms\"\nuntil = \"2ms\"\n[[failures]]\nlink = [\"h0\", \"leaf0\"]\nat = \"500us\"\n"
    ))
    .unwrap();
    let s = Scratch::new("failures");
    run::run(&sc, &s.join("a"), &mut |_| {}).unwrap();
    run::run(&sc, &s.join("b"), &mut |_| {}).unwrap();
    for f in ["summary.json", "flows.csv", "drops.csv"] {
        assert_eq!(
            std::fs::read(s.join("a").join(f)).unwrap(),
            std::fs::read(s.join("b").join(f)).unwrap(),
            "{f} differs between two runs"
        );
    }
    let drops = std::fs::read_to_string(s.join("a").join("drops.csv")).unwrap();
    assert!(drops.contains("link-down") && drops.contains("no-route"), "{drops}");
}
