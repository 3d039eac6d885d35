//! Writes a scenario as the text spec that `bench/ns3/scenario.cc` reads, so that ns-3 runs
//! exactly our topology, queues, TCP settings and flow list (start times and sizes included,
//! since our workload generators draw them from the scenario seed).
//!
//! The format (version 1, one directive per line) is documented in `bench/ns3/README.md`.
//! Only what both simulators model the same way can be exported: point-to-point links with
//! PPP framing, one FIFO per port (tail drop, step marking in packets or RED), one path per
//! destination (equal-cost paths only with `switch.ecmp = "destination"`), bulk TCP flows.
//! Anything else is refused with a [`SpecError`] naming
//! it, never approximated silently.

use crate::config::{BufferConfig, CcAlgo, DelayedAck, Ecmp, Forwarding, Marking, QueueConfig, TcpFlavor, PPP_HEADER};
use crate::scenario::Scenario;
use crate::time::{as_secs, Time};
use crate::topology::{NodeKind, Routing};
use crate::workload::FlowKind;
use std::fmt::Write as _;

/// Why a scenario cannot be written as an ns-3 spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError(pub String);

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot export to ns-3: {}", self.0)
    }
}

impl std::error::Error for SpecError {}

fn secs(t: Time) -> String {
    // Picosecond-exact decimal seconds: ns-3 parses doubles, 12 decimals keep every value.
    format!("{:.12}", as_secs(t))
}

fn queue_line(q: &QueueConfig, what: &str) -> Result<String, SpecError> {
    if q.classes != 1 || q.limit_bytes != 0 {
        return Err(SpecError(format!(
            "{what}: only one class and a packet limit are modelled in ns-3"
        )));
    }
    let marking = match q.marking {
        Marking::None => "none".to_string(),
        Marking::ThresholdPackets { k_packets } => format!("threshold {k_packets}"),
        Marking::Red {
            min_bytes,
            max_bytes,
            max_p,
            weight,
            ecn,
            gentle,
            packets: true,
        } => format!(
            "red {min_bytes} {max_bytes} {max_p} {weight} {} {}",
            u8::from(gentle),
            u8::from(ecn)
        ),
        Marking::Threshold { .. } | Marking::Red { .. } => {
            return Err(SpecError(format!(
                "{what}: marking thresholds must be in packets (`k_packets`, `min_packets`/`max_packets`)"
            )))
        }
    };
    Ok(format!("{} {marking}", q.limit_packets))
}

/// A flow's size as the spec gives it: sizes beyond 4 TB never finish in a validation run and
/// are written as 0, which ns-3 sends unlimited.
pub fn exported_bytes(bytes: u64) -> u64 {
    if bytes >= u64::from(u32::MAX) * 1000 {
        0
    } else {
        bytes
    }
}

/// The spec text for `sc`, or what stands in the way.
pub fn export(sc: &Scenario) -> Result<String, SpecError> {
    if let Some(p) = sc.systems.first() {
        return Err(SpecError(format!(
            "system: ns-3 has no model of `{}` ([[system]] entries cannot be exported; remove them to compare the network alone)",
            p.kind
        )));
    }
    let topo = &sc.topology;
    let mut s = String::from("tandem-ns3-spec 1\n");
    let _ = writeln!(s, "# scenario {} (seed {}), written by tandem", sc.name, sc.seed);
    let _ = writeln!(s, "duration {}", secs(sc.duration));
    let _ = writeln!(s, "sample_interval {}", secs(sc.output.queue_sample_interval));
    let _ = writeln!(s, "seed {}", sc.seed);

    let t = &sc.tcp;
    let (cc, g) = match t.cc {
        CcAlgo::NewReno => ("newreno", 0.0625),
        CcAlgo::Dctcp { g } => ("dctcp", g),
        CcAlgo::Cubic(_) => ("cubic", 0.0625),
    };
    if t.flavor != TcpFlavor::Ns3 {
        return Err(SpecError(
            "tcp.flavor: ns-3 3.37's TCP is `flavor = \"ns3\"` (no detection of lost retransmissions, ns-3's recovery and ECT rules); set it to compare".into(),
        ));
    }
    let delack = match t.delayed_ack {
        DelayedAck::Off => "0".to_string(),
        DelayedAck::On { timeout } => secs(timeout),
    };
    for (k, v) in [
        ("cc", cc.to_string()),
        ("mss", t.mss.to_string()),
        ("init_cwnd", t.init_cwnd.to_string()),
        ("min_rto", secs(t.min_rto)),
        ("init_rto", secs(t.init_rto)),
        ("max_rto", secs(t.max_rto)),
        ("delack_timeout", delack),
        ("delack_count", "2".into()),
        ("sack", u8::from(t.sack).to_string()),
        ("timestamps", u8::from(t.timestamps).to_string()),
        ("rcv_buf", t.rcv_buf.to_string()),
        ("dupack_threshold", t.dupack_threshold.to_string()),
        ("data_retries", t.data_retries.to_string()),
        ("syn_retries", t.syn_retries.to_string()),
        ("dctcp_g", g.to_string()),
        ("ecn", u8::from(t.ecn).to_string()),
    ] {
        let _ = writeln!(s, "tcp {k} {v}");
    }
    if let CcAlgo::Cubic(p) = t.cc {
        // ns-3's `TcpCubic` attributes `Beta`, `C`, `HyStart` and `FastConvergence`.
        let _ = writeln!(s, "tcp cubic_beta {}", p.beta);
        let _ = writeln!(s, "tcp cubic_c {}", p.c);
        let _ = writeln!(s, "tcp cubic_hystart {}", u8::from(p.hystart));
        let _ = writeln!(s, "tcp cubic_fast_convergence {}", u8::from(p.fast_convergence));
    }

    if sc.switch.buffer != BufferConfig::Dedicated
        || sc.switch.forwarding != Forwarding::StoreAndForward
        || sc.switch.pipeline_latency != 0
    {
        return Err(SpecError(
            "switches must be store-and-forward with dedicated buffers and no pipeline latency".into(),
        ));
    }
    for n in topo.nodes() {
        let kind = if n.kind == NodeKind::Host { "host" } else { "switch" };
        let _ = writeln!(s, "node {} {kind}", n.name);
    }
    for l in topo.links() {
        if l.cfg.l2_header != PPP_HEADER || l.cfg.framing_overhead != 0 {
            return Err(SpecError(format!(
                "link {} - {}: ns-3's point-to-point links need `framing = \"ppp\"`",
                topo.node(l.a).name,
                topo.node(l.b).name
            )));
        }
        let _ = writeln!(
            s,
            "link {} {} {} {}",
            topo.node(l.a).name,
            topo.node(l.b).name,
            l.cfg.rate_bps,
            secs(l.cfg.delay)
        );
    }
    let switch_queue = queue_line(&sc.switch.queue, "switch.queue")?;
    for &sw in topo.switches() {
        for p in 0..topo.ports(sw).len() {
            let _ = writeln!(s, "queue {} {p} {switch_queue}", topo.node(sw).name);
        }
    }
    if sc.host_queue.marking != Marking::None {
        return Err(SpecError("host_queue: no marking at hosts".into()));
    }
    let _ = writeln!(s, "host_queue {}", sc.host_queue.limit_packets);

    // ns-3's routes go by destination only: where a switch has equal-cost ports toward a
    // host, both simulators take the one `switch.ecmp = "destination"` hashes to, which
    // `scenario.cc` installs as a static host route (ahead of global routing).
    let routing = Routing::compute(topo);
    for &sw in topo.switches() {
        for &h in topo.hosts() {
            let ports = routing.next_ports(sw, h);
            if ports.len() < 2 {
                continue;
            }
            if sc.switch.ecmp != Ecmp::Destination {
                return Err(SpecError(format!(
                    "{} has {} equal-cost ports toward {}: ns-3 routes by destination, set `switch.ecmp = \"destination\"` to compare",
                    topo.node(sw).name,
                    ports.len(),
                    topo.node(h).name
                )));
            }
            let port = routing.destination_port(sw, h).unwrap_or(ports[0]);
            let _ = writeln!(s, "route {} {} {port}", topo.node(sw).name, topo.node(h).name);
        }
    }
    for f in &sc.flows {
        if !matches!(f.kind, FlowKind::Bulk) {
            return Err(SpecError(format!("flow {}: only bulk TCP flows are exported", f.id.0)));
        }
        let bytes = exported_bytes(f.bytes);
        let _ = writeln!(
            s,
            "flow {} {} {} {bytes} {}",
            f.id.0,
            topo.node(f.src).name,
            topo.node(f.dst).name,
            secs(f.start)
        );
    }
    for &(node, port) in &sc.output.sample_ports {
        let _ = writeln!(s, "sample {} {port}", topo.node(node).name);
    }
    Ok(s)
}
