//! The thesis experiments' networks on the simulator's kernel (`tandem-sim`'s links, queues,
//! hosts and TCP, the ones the ns-3 validation checks), the Axons being the `axon` kind of
//! [`super::placed`]: the real node, its control plane included, as a user's scenario places it.
//! Every `axon-*` experiment of the model runs here; until 2026-11-28 they ran on a loop of the
//! model's own (`model::sim`, removed), whose numbers the Axon page keeps beside these.
//!
//! [`run`] writes a model [`Topology`] and its flows as a scenario (an inline graph; one
//! `[[flows]]` entry per flow, in order), runs it, and measures each flow after the warm-up:
//! goodput, a UDP flow's mean one-way latency, a TCP_RR flow's mean transaction time. How the
//! experiments' setting maps onto the kernel: routes come from the Axons' own ARP and
//! Axon-ARP (Table 4.3's delays, inside every experiment's warm-up), and a UDP flow whose
//! reverse an earlier flow takes starts 1 ms later, once that route is up both ways; flows
//! start at 1 us; Ethernet switches are the kernel's store-and-forward switches on the
//! spanning tree's links (the blocked links are left out of the graph), with the switch
//! latency as pipeline latency and the queue as a byte limit; a UDP source "as fast as the
//! NIC sends" is a constant-rate source at the link's frame rate whose frames wait in an
//! unbounded host queue, and one at a set rate draws its gaps from 0.5 to 1.5 times the mean;
//! netperf TCP_RR is the kernel's `transactions` flow. The kernel's link counts a frame's
//! preamble and gap into its time on the wire (24 bytes besides the frame, FCS included), so a
//! frame is in that much later than its FCS. Networks that mix Axons and switches are refused.

use super::net::{App, Flow, FlowResult, NetParams, Outcome};
use super::placed::AxonKind;
use super::topology::{NodeKind, Topology};
use crate::timing::ForwardingMode;
use std::fmt::Write as _;
use std::path::Path;
use tandem_sim::config::TcpConfig;
use tandem_sim::limits::Limits;
use tandem_sim::packet::NodeId;
use tandem_sim::run as kernel;
use tandem_sim::scenario::system::SystemKind;
use tandem_sim::scenario::Scenario;
use tandem_sim::time::{as_secs, tx_time};

/// Bytes on the wire around a frame: FCS, preamble and inter-frame gap.
const FRAMING: u64 = 24;

/// A node's name in the scenario: `h`, `a` or `s` and its index in the model's topology.
fn name(topo: &Topology, n: usize) -> String {
    let k = match topo.kinds[n] {
        NodeKind::Host => 'h',
        NodeKind::Axon => 'a',
        NodeKind::Switch => 's',
    };
    format!("{k}{n}")
}

/// The scenario text for `topo`, `p` and `flows`, run for `duration_ps`.
pub fn scenario_text(topo: &Topology, p: &NetParams, flows: &[Flow], duration_ps: u64) -> Result<String, String> {
    let axons = topo.kinds.contains(&NodeKind::Axon);
    if axons && topo.kinds.contains(&NodeKind::Switch) {
        return Err("the kernel runs Axon networks or switch networks, not both in one".into());
    }
    let default_tcp = TcpConfig {
        min_rto: p.tcp.min_rto,
        ..TcpConfig::default()
    };
    if p.tcp != default_tcp {
        return Err("the kernel runs take the default TCP but for its minimum RTO".into());
    }
    let mut s = format!(
        "name = \"axon-model\"\nseed = {}\nduration = \"{duration_ps}ps\"\n",
        p.seed
    );
    s += "[topology]\nkind = \"graph\"\n";
    // Devices first, then each device's hosts together (an Axon's hosts have neighbouring node
    // numbers: its DHCP pool is their range).
    let devices: Vec<usize> = (0..topo.kinds.len())
        .filter(|&n| topo.kinds[n] != NodeKind::Host)
        .collect();
    let mut order = devices.clone();
    for &d in &devices {
        for e in &topo.ports[d] {
            if topo.kinds[e.node] == NodeKind::Host && !order.contains(&e.node) {
                order.push(e.node);
            }
        }
    }
    if order.len() != topo.kinds.len() {
        return Err("every host must sit on a device".into());
    }
    for &n in &order {
        let kind = if topo.kinds[n] == NodeKind::Host {
            "host"
        } else {
            "switch"
        };
        let _ = write!(
            s,
            "[[topology.node]]\nname = \"{}\"\nkind = \"{kind}\"\n",
            name(topo, n)
        );
    }
    let blocked = topo.spanning_tree_blocked();
    for (a, ports) in topo.ports.iter().enumerate() {
        for (port, e) in ports.iter().enumerate() {
            if e.node < a || blocked[a][port] {
                continue;
            }
            let _ = write!(
                s,
                "[[topology.link]]\na = \"{}\"\nb = \"{}\"\nrate = \"{}bps\"\ndelay = \"{}ps\"\n",
                name(topo, a),
                name(topo, e.node),
                p.rate_bps,
                p.prop_ps
            );
        }
    }
    if axons {
        let forwarding = match p.axon_mode {
            ForwardingMode::CutThrough => "cut_through",
            ForwardingMode::StoreAndForward => "store_and_forward",
        };
        let _ = write!(
            s,
            "[switch]\nforwarding = \"{forwarding}\"\n[[system]]\nkind = \"axon\"\nswitches = \"all\"\noutput_buffer_bytes = {}\n",
            p.axon_buffer_bytes
        );
    } else {
        let _ = write!(
            s,
            "[switch]\npipeline_latency = \"{}ps\"\n[switch.queue]\nlimit_packets = 0\nlimit_bytes = \"{}B\"\n",
            p.switch.latency_ps, p.switch.queue_bytes
        );
    }
    let _ = write!(
        s,
        "[host_queue]\nlimit_packets = 0\n[tcp]\nmin_rto = \"{}ps\"\n",
        p.tcp.min_rto
    );
    for (i, f) in flows.iter().enumerate() {
        let pair = format!("[[\"{}\", \"{}\"]]", name(topo, f.src), name(topo, f.dst));
        // A UDP flow whose reverse an earlier flow already takes starts once that flow's route
        // is up (both directions: one Axon-ARP installs both), as an experimenter lets
        // connectivity settle first: two hosts that ARP for each other at once each learn the
        // other's address before either route is in place, and a source at hundreds of Mb/s of
        // small frames then floods the control plane with frames it cannot route.
        let reverse = flows[..i].iter().any(|e| e.src == f.dst && e.dst == f.src);
        let udp_start = if reverse { "1001us" } else { "1us" };
        match f.app {
            App::TcpBulk => {
                let _ = write!(
                    s,
                    "[[flows]]\nkind = \"bulk\"\npairs = {pair}\nbytes = \"10GB\"\nstart = \"1us\"\n"
                );
            }
            App::Udp {
                frame_len,
                rate_bps: None,
            } => {
                // One frame every frame time of the link: the kernel's rate counts the frame
                // without its FCS, preamble and gap.
                let len = frame_len as u64;
                let rate = u128::from(p.rate_bps) * u128::from(len) / u128::from(len + FRAMING);
                let _ = write!(
                    s,
                    "[[flows]]\nkind = \"udp_cbr\"\npairs = {pair}\nrate = \"{rate}bps\"\npacket_size = {len}\nstart = \"{udp_start}\"\n"
                );
            }
            App::Udp {
                frame_len,
                rate_bps: Some(r),
            } => {
                // The mean rate in line occupancy, the gaps drawn from 0.5 to 1.5 times the
                // mean, as the model's sources do.
                let len = frame_len as u64;
                let rate = u128::from(r) * u128::from(len) / u128::from(len + FRAMING);
                let _ = write!(
                    s,
                    "[[flows]]\nkind = \"udp_cbr\"\npairs = {pair}\nrate = \"{rate}bps\"\npacket_size = {len}\njitter = 0.5\nstart = \"{udp_start}\"\n"
                );
            }
            App::TcpRr { request, response } => {
                let _ = write!(
                    s,
                    "[[flows]]\nkind = \"transactions\"\npairs = {pair}\nrequest = {request}\nresponse = {response}\nstart = \"1us\"\n"
                );
            }
        }
    }
    Ok(s)
}

/// Runs `flows` over `topo` on the kernel for `duration_ps`, measuring after `warmup_ps`.
pub fn run(
    topo: &Topology,
    p: &NetParams,
    flows: &[Flow],
    duration_ps: u64,
    warmup_ps: u64,
) -> Result<Outcome, String> {
    let sc = load(&scenario_text(topo, p, flows, duration_ps)?)?;
    let mut sim = kernel::build(&sc, None).map_err(|e| e.to_string())?;
    sim.run_until(warmup_ps);
    let warm: Vec<(u64, u64, u64, u64)> = sim
        .flow_results()
        .map(|(spec, r, _)| (r.delivered, r.rx_packets, r.delay_sum, r.transactions(spec)))
        .collect();
    sim.run_until(duration_ps);
    let secs = as_secs(duration_ps.saturating_sub(warmup_ps)).max(f64::MIN_POSITIVE);
    let mut out = Outcome {
        events: sim.events_processed(),
        ..Outcome::default()
    };
    for (((spec, r, eps), w), f) in sim.flow_results().zip(&warm).zip(flows) {
        let bytes = r.delivered - w.0;
        // One-way latency as the model counts it, first byte out of the sender's NIC to first
        // byte in at the receiver: the kernel's delay runs from the send (the NIC idle: the
        // first byte out) to the last bit in, which trails the first byte by the frame's time
        // on the last link (frame, FCS, preamble and gap).
        let packets = r.rx_packets - w.1;
        let latency_mean_ps = match f.app {
            App::Udp { frame_len, .. } if packets > 0 => {
                let last = tx_time(frame_len as u64 + FRAMING, p.rate_bps);
                (r.delay_sum - w.2) as f64 / packets as f64 - last as f64
            }
            _ => 0.0,
        };
        // A transaction's time, as netperf's TCP_RR counts it: the request's send to the whole
        // response in.
        let done = r.transactions(spec) - w.3;
        let rtt_mean_ps = if done > 0 {
            (r.delay_sum - w.2) as f64 / done as f64
        } else {
            0.0
        };
        out.flows.push(FlowResult {
            bytes,
            mbps: bytes as f64 * 8.0 / secs / 1e6,
            latency_mean_ps,
            rtt_mean_ps,
        });
        out.retransmits += eps.iter().flatten().map(|e| e.stats().retransmits).sum::<u64>();
    }
    for (i, n) in sim.nodes().iter().enumerate() {
        if n.kind == tandem_sim::topology::NodeKind::Switch && sim.model(NodeId(i as u32)).is_none() {
            out.switch_drops += n.ports.iter().map(|p| p.queues.stats.dropped()).sum::<u64>();
        }
    }
    for &sw in sc.systems.iter().flat_map(|s| &s.switches) {
        if let Some(m) = sim.model(sw) {
            for (k, v) in m.system_counters() {
                match k {
                    "device_drops" => out.axon_drops += v as u64,
                    "pause_frames" => out.pauses += v as u64,
                    _ => {}
                }
            }
        }
    }
    Ok(out)
}

/// The scenario text of Axons `a1`..`aN` in a line (or a ring, `ring`), their links first
/// (1 Gb/s, 500 ns: the testbed's), then `hosts[i]` hosts on Axon `i + 1` (`h{axon}_{n}`, each
/// Axon's together), cut-through, the Axons placed with `axon_params` (TOML keys of the `axon`
/// kind, one a line), run for `duration_ps`; flows follow in `flows` (TOML `[[flows]]` entries).
pub fn axon_network(ring: bool, hosts: &[usize], axon_params: &str, duration_ps: u64, flows: &str) -> String {
    let n = hosts.len();
    let mut s =
        format!("name = \"axon-model\"\nseed = 1\nduration = \"{duration_ps}ps\"\n[topology]\nkind = \"graph\"\n");
    for d in 1..=n {
        let _ = write!(s, "[[topology.node]]\nname = \"a{d}\"\nkind = \"switch\"\n");
    }
    for (i, &k) in hosts.iter().enumerate() {
        for h in 0..k {
            let _ = write!(s, "[[topology.node]]\nname = \"h{}_{h}\"\nkind = \"host\"\n", i + 1);
        }
    }
    let link = |s: &mut String, a: &str, b: &str| {
        let _ = write!(
            s,
            "[[topology.link]]\na = \"{a}\"\nb = \"{b}\"\nrate = \"1Gbps\"\ndelay = \"500ns\"\n"
        );
    };
    for d in 1..n {
        link(&mut s, &format!("a{d}"), &format!("a{}", d + 1));
    }
    if ring && n > 2 {
        link(&mut s, &format!("a{n}"), "a1");
    }
    for (i, &k) in hosts.iter().enumerate() {
        for h in 0..k {
            link(&mut s, &format!("h{}_{h}", i + 1), &format!("a{}", i + 1));
        }
    }
    let _ = write!(
        s,
        "[switch]\nforwarding = \"cut_through\"\n[host_queue]\nlimit_packets = 0\n[output]\nplots = false\n[[system]]\nkind = \"axon\"\nswitches = \"all\"\n{axon_params}\n{flows}"
    );
    s
}

/// Reads a scenario whose systems are Axons (the text of [`axon_network`], say).
pub fn load(text: &str) -> Result<Scenario, String> {
    let kinds: [&dyn SystemKind; 1] = [&AxonKind];
    Scenario::parse_with_systems(
        text,
        "axon-model",
        "axon-model",
        Path::new("."),
        &[],
        &Limits::default(),
        &kinds,
    )
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::common::{chain, three_by_two};

    #[test]
    fn scenarios_are_written_and_refused_where_the_kernel_falls_short() {
        let (topo, h) = three_by_two(NodeKind::Switch, true);
        let p = NetParams::gbe(1000);
        let flows = [Flow {
            src: h[0],
            dst: h[1],
            app: App::TcpBulk,
        }];
        let s = scenario_text(&topo, &p, &flows, 1_000_000).unwrap();
        // The spanning tree blocks one of the ring's three switch links.
        assert_eq!(s.matches("[[topology.link]]").count(), 6 + 2, "{s}");
        assert!(s.contains("pipeline_latency = \"1000ps\""), "{s}");
        let (topo, a, b) = chain(NodeKind::Axon, 2);
        let rr = [Flow {
            src: a,
            dst: b,
            app: App::TcpRr {
                request: 1,
                response: 1,
            },
        }];
        assert!(scenario_text(&topo, &p, &rr, 1_000_000)
            .unwrap()
            .contains("kind = \"transactions\""));
        let (mixed, _) = three_by_two(NodeKind::Axon, false);
        let mut mixed = mixed;
        let s = mixed.add(NodeKind::Switch);
        mixed.link(0, s);
        assert!(scenario_text(&mixed, &p, &rr, 1_000_000)
            .unwrap_err()
            .contains("not both"));
    }
}
