//! Equal-cost multipath (`switch.ecmp`): hashed by flow, flows toward one host spread over a
//! leaf's uplinks; hashed by destination, every packet toward a host leaves a switch by one
//! port, the port the export to ns-3 writes as that host's static route. The export refuses
//! equal-cost paths hashed by flow, which ns-3's routing cannot follow.

use std::path::Path;
use tandem_sim::packet::NodeId;
use tandem_sim::run;
use tandem_sim::scenario::Scenario;
use tandem_sim::sim::Sim;
use tandem_sim::time::MS;
use tandem_sim::topology::Routing;

/// Two leaves of four hosts, four spines; 1 Gb/s, 10 us links with ns-3's framing.
const FABRIC: &str = r#"
name = "ecmp"
duration = "2ms"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 4
hosts_per_leaf = 4
host_link = { rate = "1Gbps", delay = "10us", framing = "ppp" }
fabric_link = { rate = "1Gbps", delay = "10us", framing = "ppp" }
[output]
plots = false
"#;

/// Sixteen UDP sources, from each of leaf0's hosts to h4 and to h5 twice over.
const UDP: &str = r#"
[[flows]]
kind = "udp_cbr"
pairs = [["h0", "h4"], ["h1", "h4"], ["h2", "h4"], ["h3", "h4"], ["h0", "h5"], ["h1", "h5"], ["h2", "h5"], ["h3", "h5"],
         ["h0", "h4"], ["h1", "h4"], ["h2", "h4"], ["h3", "h4"], ["h0", "h5"], ["h1", "h5"], ["h2", "h5"], ["h3", "h5"]]
rate = "10Mbps"
packet_size = 1000
"#;

/// Bulk TCP in the like-for-like mode, exportable to ns-3.
const BULK: &str = r#"
[tcp]
flavor = "ns3"
[[flows]]
kind = "bulk"
pairs = [["h0", "h4"], ["h1", "h5"]]
bytes = "1MB"
"#;

fn scenario(extra: &str, ecmp: &str) -> Scenario {
    let o = [("switch.ecmp".to_string(), ecmp.to_string())];
    Scenario::parse(&format!("{FABRIC}{extra}"), "e.toml", "e", Path::new("."), &o).unwrap()
}

/// leaf0's uplinks (ports toward a spine) that sent anything, in port order.
fn used_uplinks(sc: &Scenario, sim: &Sim) -> Vec<u16> {
    let leaf0 = sc.topology.find("leaf0").unwrap();
    let spines: Vec<NodeId> = (0..4)
        .map(|i| sc.topology.find(&format!("spine{i}")).unwrap())
        .collect();
    sc.topology
        .ports(leaf0)
        .iter()
        .enumerate()
        .filter(|(i, p)| {
            spines.contains(&p.peer) && sim.nodes()[leaf0.0 as usize].ports[*i].queues.stats.tx_packets > 0
        })
        .map(|(i, _)| i as u16)
        .collect()
}

/// The port the hash by destination picks at `switch` toward `host`.
fn route(sc: &Scenario, switch: &str, host: &str) -> u16 {
    let (s, h) = (sc.topology.find(switch).unwrap(), sc.topology.find(host).unwrap());
    Routing::compute(&sc.topology).destination_port(s, h).unwrap()
}

fn run(sc: &Scenario) -> Sim {
    let mut sim = run::build(sc, None).unwrap();
    sim.run_until(2 * MS);
    sim
}

#[test]
fn by_flow_the_flows_toward_one_host_spread_over_the_uplinks() {
    let sc = scenario(UDP, "flow");
    let used = used_uplinks(&sc, &run(&sc));
    assert!(used.len() >= 3, "16 flows hashed over 4 uplinks used only {used:?}");
}

#[test]
fn by_flow_each_flow_leaves_by_the_port_routing_names() {
    // The simulator's ECMP and `Routing::ecmp_port` are one rule: for each of three flows on
    // its own (so that the uplink it used is its own), leaf0 sends by the port the routing
    // names for that flow's number.
    let routing = Routing::compute(&scenario("", "flow").topology);
    for pair in [["h0", "h4"], ["h1", "h5"], ["h3", "h6"]] {
        let flows = format!(
            "[[flows]]\nkind = \"udp_cbr\"\npairs = [[\"{}\", \"{}\"]]\nrate = \"10Mbps\"\npacket_size = 1000\n",
            pair[0], pair[1]
        );
        let sc = scenario(&flows, "flow");
        let (leaf0, dst) = (sc.topology.find("leaf0").unwrap(), sc.topology.find(pair[1]).unwrap());
        let want = routing.ecmp_port(leaf0, dst, 0).unwrap();
        assert_eq!(used_uplinks(&sc, &run(&sc)), [want], "{pair:?}");
    }
}

#[test]
fn by_destination_each_host_is_reached_by_one_port() {
    let sc = scenario(UDP, "destination");
    let sim = run(&sc);
    let mut want = vec![route(&sc, "leaf0", "h4"), route(&sc, "leaf0", "h5")];
    want.sort_unstable();
    want.dedup();
    assert_eq!(used_uplinks(&sc, &sim), want);
    // Nothing lost, nothing misrouted: every datagram sent by 1.9 ms arrived.
    let drops: u64 = sim
        .nodes()
        .iter()
        .flat_map(|n| &n.ports)
        .map(|p| p.queues.stats.dropped())
        .sum();
    assert_eq!(drops, 0);
}

#[test]
fn the_export_to_ns3_writes_the_routes_by_destination_and_refuses_routes_by_flow() {
    let e = tandem_sim::ns3_spec::export(&scenario(BULK, "flow"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("equal-cost ports") && e.contains("switch.ecmp = \"destination\""),
        "{e}"
    );
    let sc = scenario(BULK, "destination");
    let spec = tandem_sim::ns3_spec::export(&sc).unwrap();
    let routes: Vec<&str> = spec.lines().filter(|l| l.starts_with("route ")).collect();
    // Each leaf has four equal-cost uplinks toward each of the other leaf's four hosts; the
    // spines have one port toward each host, and write no route.
    assert_eq!(routes.len(), 2 * 4, "{routes:#?}");
    for leaf in ["leaf0", "leaf1"] {
        let hosts = if leaf == "leaf0" { 4..8 } else { 0..4 };
        for h in hosts {
            let line = format!("route {leaf} h{h} {}", route(&sc, leaf, &format!("h{h}")));
            assert!(routes.contains(&line.as_str()), "{line} not in {routes:#?}");
        }
    }
}
