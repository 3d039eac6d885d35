//! Axon in a user's own scenario: the `[[system]]` kind `"axon"`.
//!
//! ```toml
//! [[system]]
//! kind = "axon"
//! switches = "all"        # every switch of an Axon network: Axons connect to Axons and hosts
//! cam_entries = 64
//! ```
//!
//! Each named switch runs the real [`AxonNode`]: the data plane ([`crate::Device`]) and the
//! control plane ([`crate::ControlPlane`]) wired as `tandem axon run` runs them live, driven by
//! the simulator's kernel instead of sockets. Packets between Axons carry their real frame bytes
//! ([`tandem_sim::packet::PacketPool::set_frame`]): the Axon header a host port prepends, the
//! next hop each Axon reads and the reverse path it writes, and the Axon-ARP control frames,
//! which travel the kernel's links and queues like any packet. A packet's `size` is its frame's,
//! so the header's bytes cost link time.
//!
//! The simulated hosts send no ARP themselves; each Axon keeps its hosts' neighbour tables, as
//! Linux does with its defaults: a host's first packet to an address it has not resolved waits
//! (at most [`ARP_QUEUE_BYTES`], the oldest dropped first, reason `arp-queue`) while the host's
//! ARP request goes to the Axon, which answers it by the four Axon-ARP phases (Table 4.3
//! delays, the route chosen by the control plane); the request is repeated every second and the
//! waiting packets dropped (reason `arp-failed`) after three unanswered. An ARP request the
//! control plane sends a host (Phase II) is answered by the host after the host link's round
//! trip, and the host learns the sender from it and sends what it had waiting for that address
//! at once; an ARP reply that would change an address learnt less than [`ARP_LOCKTIME`] before
//! is ignored (counted in `arp_replies_ignored`). The hosts do not re-validate what they learnt
//! (Linux probes a stale entry after 5 s; runs are short). Each host announces itself by a gratuitous ARP
//! before the run, so the control planes know their hosts (no DHCP: a host's address is the one
//! the pcap taps write, [`tandem_sim::tap::node_ip`]); each Axon's DHCP pool is the range of its
//! hosts' addresses, so an Axon's hosts must have neighbouring node numbers.
//!
//! The device keeps its own output buffers (one per input port, served round robin,
//! `output_buffer_bytes` each) and drops with its own reasons (`output-buffer-full`); the
//! device hands the kernel's port one frame at a time and hears that the port is free when
//! that frame has gone (`SwitchModel::on_port_idle`), as on its own wire. So the scenario's switch queue limits and marking do not apply to Axons (Axons mark
//! nothing). Self-congestion (§3.3.3) works as on the wire: once a host's frames have grown by
//! a maximum-sized frame's worth of Axon header, the device sends the host an 802.3x PAUSE,
//! which takes its time on the host link, and the host's NIC (the kernel's port) starts
//! nothing for the pause time once the PAUSE is in (`pause = false` turns it off). The Table
//! 4.2 pipeline latency is added to the switch's `pipeline_latency`; set
//! `switch.forwarding = "cut_through"` for the Axon's cut-through (the kernel hands the device
//! each frame at its first byte, where Table 4.2's pipeline starts), or frames are stored and
//! forwarded.
//!
//! Parameters (all optional): `route_slots` (4,096 per host port), `cam_entries` (64 per host
//! port), `output_buffer_bytes` (32,768 per input port of each output port), `path_slack_hops` (0: shortest paths only; more lets the control plane take the least
//! loaded path up to that many hops longer), `software_delays` (true: Table 4.3's; false: a
//! control plane that takes no time), `pause` (true: PAUSE the hosts against self-congestion),
//! `link_notice` (who learns of a link that fails or comes back, `[[failures]]`: `"ends"`, the
//! default, the Axons at its ends, device and control plane; `"everyone"`, every Axon's control
//! plane too; `"none"`, nobody).

use crate::config::DeviceConfig;
use crate::control::frames::{arp_frame, parse_arp};
use crate::control::{
    AxonNode as TopologyAxon, ControlAction, ControlConfig, ControlInput, ControlPlane, DhcpPool, DiscoveryConfig,
    Endpoint, SoftwareDelays, Topology,
};
use crate::dataplane::{Action, Device, Event};
use crate::node::{AxonNode, NodeOutput, TxDone};
use crate::port::PortKind;
use crate::timing::ForwardingMode;
use crate::{DropReason, MAX_PORTS};
use rustc_hash::{FxHashMap, FxHasher};
use serde::Deserialize;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use tandem_sim::config::{LinkConfig, Marking, QueueConfig, ETHERNET_HEADER};
use tandem_sim::packet::{FlowId, NodeId, Packet, PacketId, Proto};
use tandem_sim::scenario::system::{Placement, Site, SystemKind};
use tandem_sim::scenario::ScenarioError;
use tandem_sim::sim::Sim;
use tandem_sim::switch::{LinkChange, SwitchCtx, SwitchModel, Verdict};
use tandem_sim::tap::{frame_bytes, node_ip, node_mac};
use tandem_sim::time::{tx_time, Time, SEC, US};
use tandem_sim::units::TimeArg;
use tandem_wire::arp::{ArpOperation, ArpRepr};
use tandem_wire::axon::{Packet as AxonPacket, PacketType};
use tandem_wire::ethernet::Frame;
use tandem_wire::pause::{pause_time_ps, Packet as PausePacket, PauseRepr};
use tandem_wire::pcap::LinkType;
use tandem_wire::{EtherType, Ipv4Addr, MacAddr};

/// How long a host waits for an ARP reply before asking again (Linux's `retrans_time_ms`).
pub const ARP_RETRANS: Time = SEC;
/// ARP requests a host sends before it gives up on an address (Linux's `mcast_solicit`).
pub const ARP_TRIES: u32 = 3;
/// How long an address a host learnt stands against an ARP reply naming another (Linux's
/// `locktime`).
pub const ARP_LOCKTIME: Time = SEC;
/// Bytes a host keeps waiting for one unresolved address (Linux's `unres_qlen_bytes`).
pub const ARP_QUEUE_BYTES: u64 = 212_992;
/// The flow id of the packets that carry frames no flow of the scenario owns: the Axons' control
/// frames, and the testbed's hosts' frames.
pub const CONTROL_FLOW: FlowId = FlowId(u32::MAX);
/// Timer tokens of the model's own steps have this bit; the node's own tokens never do.
const OWN: u64 = 1 << 63;

/// The `"axon"` kind of `[[system]]` entries.
#[derive(Debug, Clone, Copy, Default)]
pub struct AxonKind;

/// An entry's parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Params {
    route_slots: usize,
    cam_entries: usize,
    output_buffer_bytes: usize,
    path_slack_hops: usize,
    software_delays: bool,
    pause: bool,
    link_notice: LinkNotice,
    discovery: bool,
    probe_interval: Option<TimeArg>,
    probe_timeout: Option<TimeArg>,
}

/// Who learns of a failed (or restored) link (`[[failures]]` in the scenario), and at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkNotice {
    /// The Axons at its ends: their devices (which drop what they hold for the port) and their
    /// control planes (which reroute the routes across it). Others learn nothing.
    Ends,
    /// Those, and every other Axon's control plane, as when the network reports the failure
    /// to all (the testbed's `FailureNotice::Everyone`).
    Everyone,
    /// Nobody: frames sent onto the dead link are lost.
    None,
}

impl Params {
    /// Probe-based discovery's settings: the defaults, with this entry's probe times.
    fn discovery_config(&self) -> DiscoveryConfig {
        let mut d = DiscoveryConfig::default();
        if let Some(t) = self.probe_interval {
            d.probe_interval_ps = t.0;
        }
        if let Some(t) = self.probe_timeout {
            d.probe_timeout_ps = t.0;
        }
        d
    }
}

impl Default for Params {
    fn default() -> Params {
        let d = DeviceConfig::new(1, 1, 1);
        Params {
            route_slots: d.route_slots,
            cam_entries: d.cam_entries,
            output_buffer_bytes: d.output_buffer_bytes,
            path_slack_hops: 0,
            software_delays: true,
            pause: d.pause.enabled,
            link_notice: LinkNotice::Ends,
            discovery: false,
            probe_interval: None,
            probe_timeout: None,
        }
    }
}

/// A host on one of an Axon's ports, and the link to it.
#[derive(Debug, Clone, Copy)]
struct HostPort {
    mac: MacAddr,
    ip: Ipv4Addr,
    link: LinkConfig,
}

impl HostPort {
    /// An ARP frame from this host to `dst`: `op`, about `target_ip` (at `target_mac`).
    fn arp(&self, op: ArpOperation, dst: MacAddr, target_mac: MacAddr, target_ip: Ipv4Addr) -> Vec<u8> {
        let a = ArpRepr {
            operation: op,
            sender_mac: self.mac,
            sender_ip: self.ip,
            target_mac,
            target_ip,
        };
        arp_frame(dst, self.mac, &a)
    }

    /// Time from a frame of `len` bytes starting on the host link to its last byte at the far end.
    fn one_way(&self, len: u64) -> Time {
        tx_time(self.link.wire_bytes(len as u32), self.link.rate_bps) + self.link.delay
    }
}

/// What a host knows of one address.
#[derive(Debug, Clone)]
enum Neighbour {
    /// Asked for; these packets wait.
    Incomplete {
        waiting: VecDeque<PacketId>,
        bytes: u64,
        tries: u32,
        since: Time,
    },
    /// Resolved to `mac`, set at `updated`; `asked` when the host first asked for it, if it
    /// did (not when it learnt the address from a request to it).
    Known {
        mac: MacAddr,
        updated: Time,
        asked: Option<Time>,
    },
}

/// One of the model's own timed steps.
#[derive(Debug, Clone)]
enum Step {
    /// A host's ARP reply reaches the Axon's port.
    HostFrame { port: u8, frame: Vec<u8> },
    /// A host heard `mac` for `ip` at `at` (from the control plane's ARP request, or its
    /// `reply` to the host's own) and sends what waited.
    Learn {
        port: u8,
        ip: Ipv4Addr,
        mac: MacAddr,
        at: Time,
        reply: bool,
    },
    /// A host's ARP for `ip` is still unanswered: ask again or give up.
    ArpRetry { port: u8, ip: Ipv4Addr },
    /// A frame the Axon made leaves on `port` (its start time was later than when it was made).
    Send { port: u16, pkt: PacketId },
    /// A frame the model put on a host link itself (a PAUSE) has gone: `port` is free.
    PortFree { port: u8 },
    /// A driver's input to the device ([`AxonSwitch::input_at`]).
    Device(Event),
    /// A driver's input to the control plane ([`AxonSwitch::input_at`]).
    Control(ControlInput),
}

/// What a driver outside the run hands an Axon at a time of its choosing
/// ([`AxonSwitch::input_at`]): a test's link notice, a control plane's tick.
#[derive(Debug, Clone)]
pub enum NodeInput {
    /// An event for the data plane.
    Device(Event),
    /// An input for the control plane.
    Control(ControlInput),
}

/// What the model counts besides the node's own counters.
#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    control_frames: u64,
    host_arp_requests: u64,
    held_packets: u64,
    arp_queue_drops: u64,
    arp_failures: u64,
    upcalled_packets: u64,
    replies_ignored: u64,
    pause_frames: u64,
    resolved: u64,
    setup_sum: Time,
    setup_max: Time,
}

/// An address a host asked for and learnt: the host's port, the address, when the host asked
/// (its ARP request) and when the answer was in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolution {
    /// The host's port on the Axon.
    pub port: u8,
    /// The address asked for.
    pub ip: Ipv4Addr,
    /// When the host sent its first ARP request for it.
    pub asked: Time,
    /// When the reply's last byte reached the host (the last time it learnt the address).
    pub resolved: Time,
}

/// One Axon on the kernel: the real node and its hosts' neighbour tables (an experiment reads
/// it back with `Sim::model_as`).
#[derive(Debug, Clone)]
pub struct AxonSwitch {
    node: AxonNode,
    me: NodeId,
    /// Per port: the host on it, if a host port of a simulated (kernel) host.
    hosts: Vec<Option<HostPort>>,
    /// Per port: whether the node at the far end speaks frames itself (a frame host of the
    /// testbed, [`crate::testbed`]): its frames go to the device as they are, and what the
    /// device sends there leaves as a packet carrying the frame.
    frame_peers: Vec<bool>,
    /// What the control plane did, with the time, when the driver asked to keep it.
    log: Option<Vec<(Time, ControlAction)>>,
    neighbours: BTreeMap<(u8, Ipv4Addr), Neighbour>,
    steps: BTreeMap<u64, Step>,
    next_step: u64,
    /// Timers the node asked for before the run, armed at the first callback.
    early: Vec<(u64, u64)>,
    out: Vec<NodeOutput>,
    /// Kernel packets inside the device (being fed, or waiting in its output buffers), by the
    /// fingerprint of their frame's lasting bytes ([`fingerprint`]).
    held: FxHashMap<u64, VecDeque<PacketId>>,
    /// The packet being fed, and what became of it.
    carried: Option<PacketId>,
    carried_verdict: Option<Verdict>,
    carried_drop: Option<&'static str>,
    /// Ports whose frame a simulated host took at once: free again now.
    free_now: Vec<u8>,
    /// Who learns of link changes.
    notice: LinkNotice,
    /// Whether the control plane discovers the network by probes (started by the run).
    discovery: bool,
    /// The device id of every node that is an Axon of this entry, by node number.
    devices: Arc<Vec<Option<u64>>>,
    c: Counters,
}

impl AxonKind {
    fn read(site: &Site<'_>, params: toml::Value) -> Result<Params, ScenarioError> {
        let p: Params = site.de(params)?;
        if p.route_slots == 0 {
            return Err(site.error("route_slots", "must be at least 1"));
        }
        for (k, v) in [("probe_interval", p.probe_interval), ("probe_timeout", p.probe_timeout)] {
            match v {
                Some(_) if !p.discovery => return Err(site.error(k, "needs `discovery = true`")),
                Some(t) if t.0 == 0 => return Err(site.error(k, "must be above 0")),
                _ => {}
            }
        }
        let d = p.discovery_config();
        if p.discovery && d.probe_timeout_ps <= d.probe_interval_ps {
            return Err(site.error("probe_timeout", "must be longer than the probe interval"));
        }
        Ok(p)
    }
}

impl SystemKind for AxonKind {
    fn name(&self) -> &'static str {
        "axon"
    }

    fn place(&self, site: &Site<'_>, params: toml::Value) -> Result<Arc<dyn Placement>, ScenarioError> {
        let p = Self::read(site, params)?;
        let topo = site.topology;
        // Device ids (1, 2, ...) of the entry's switches, by node.
        let mut device: Vec<Option<u64>> = vec![None; topo.nodes().len()];
        for (i, s) in site.switches.iter().enumerate() {
            device[s.0 as usize] = Some(i as u64 + 1);
        }
        // Ports, hosts and links, checked.
        let mut pools = Vec::with_capacity(site.switches.len());
        let mut links = Vec::new();
        for (i, &sw) in site.switches.iter().enumerate() {
            let name = &topo.node(sw).name;
            let ports = topo.ports(sw);
            if ports.len() > MAX_PORTS {
                return Err(site.error(
                    "switches",
                    format!("`{name}` has {} ports; an Axon has at most {MAX_PORTS}", ports.len()),
                ));
            }
            let mut ips = Vec::new();
            for (port, pt) in ports.iter().enumerate() {
                let cfg = &topo.link(pt.link).cfg;
                if cfg.l2_header != ETHERNET_HEADER {
                    return Err(site.error(
                        "switches",
                        format!("`{name}` port {port}: an Axon needs Ethernet links (framing = \"ethernet\")"),
                    ));
                }
                if topo.is_host(pt.peer) {
                    ips.push(node_ip(pt.peer));
                } else if let Some(peer) = device[pt.peer.0 as usize] {
                    if (i as u64 + 1) < peer {
                        links.push((
                            Endpoint {
                                device: i as u64 + 1,
                                port: port as u8,
                            },
                            Endpoint {
                                device: peer,
                                port: pt.peer_port as u8,
                            },
                        ));
                    }
                } else {
                    return Err(site.error(
                        "switches",
                        format!(
                            "`{name}` port {port} leads to `{}`, which this entry does not make an Axon: an Axon network is Axons and hosts, named in one entry",
                            topo.node(pt.peer).name
                        ),
                    ));
                }
            }
            pools.push(match (ips.iter().min(), ips.iter().max()) {
                (Some(a), Some(b)) => (*a, *b),
                _ => {
                    let x = spare_ip(254, i);
                    (x, x)
                }
            });
        }
        let mut order: Vec<usize> = (0..pools.len()).collect();
        order.sort_by_key(|&i| pools[i].0);
        for w in order.windows(2) {
            if pools[w[1]].0 <= pools[w[0]].1 {
                return Err(site.error(
                    "switches",
                    format!(
                        "the hosts of `{}` and `{}` interleave in node order: each Axon's pool is the range of its hosts' addresses, so list each Axon's hosts together",
                        topo.node(site.switches[w[0]]).name,
                        topo.node(site.switches[w[1]]).name
                    ),
                ));
            }
        }
        let mut ctl_topo = Topology::new();
        for (i, (first, last)) in pools.iter().enumerate() {
            ctl_topo.add_axon(TopologyAxon {
                device: i as u64 + 1,
                pool_first: *first,
                pool_last: *last,
            });
        }
        for (a, b) in links {
            ctl_topo
                .add_link(a, b)
                .map_err(|e| site.error("switches", e.to_string()))?;
        }
        let devices = Arc::new(device);
        let mut switches = Vec::with_capacity(site.switches.len());
        for (i, &sw) in site.switches.iter().enumerate() {
            let mut model = build_switch(site, &p, &ctl_topo, i, sw, pools[i])?;
            model.devices = Arc::clone(&devices);
            switches.push((sw, model));
        }
        Ok(Arc::new(AxonPlacement { switches }))
    }
}

/// The pause time of an 802.3x PAUSE frame, in quanta; `None` for any other frame.
fn pause_quanta(frame: &[u8]) -> Option<u16> {
    let eth = Frame::new_checked(frame).ok()?;
    if eth.ethertype() != EtherType::MAC_CONTROL {
        return None;
    }
    let p = PausePacket::new_checked(eth.payload()).ok()?;
    match PauseRepr::parse(&p).ok()? {
        PauseRepr::Pause { quanta } => Some(quanta),
        _ => None,
    }
}

/// An address no host has: 10.`tag`.x.y for Axon `i` (pools of Axons without hosts, servers).
fn spare_ip(tag: u8, i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, tag, (i >> 8) as u8, i as u8)
}

/// The Axon of switch `sw` (the `i`th of the entry), its hosts announced.
fn build_switch(
    site: &Site<'_>,
    p: &Params,
    ctl_topo: &Topology,
    i: usize,
    sw: NodeId,
    pool: (Ipv4Addr, Ipv4Addr),
) -> Result<AxonSwitch, ScenarioError> {
    let topo = site.topology;
    let name = &topo.node(sw).name;
    let ports = topo.ports(sw);
    let id = i as u64 + 1;
    let mut cfg = DeviceConfig::new(id, ports.len(), 1);
    for (port, pt) in ports.iter().enumerate() {
        cfg.ports[port].line_rate_bps = topo.link(pt.link).cfg.rate_bps;
    }
    cfg.route_slots = p.route_slots;
    cfg.cam_entries = p.cam_entries;
    cfg.output_buffer_bytes = p.output_buffer_bytes;
    cfg.mode = ForwardingMode::CutThrough;
    cfg.pause.enabled = p.pause;
    let dev = Device::new(cfg).map_err(|e| site.error("switches", format!("`{name}`: {e}")))?;
    let dhcp = DhcpPool {
        server_ip: spare_ip(255, i),
        subnet_mask: Ipv4Addr::new(255, 0, 0, 0),
        first: pool.0,
        last: pool.1,
        lease_secs: 3600,
    };
    let mut ccfg = ControlConfig::new(id, dhcp);
    ccfg.path_slack_hops = p.path_slack_hops;
    if !p.software_delays {
        ccfg.delays = SoftwareDelays::none();
    }
    // With discovery the control planes start from nothing and learn the network by probes.
    let known = if p.discovery {
        ccfg.discovery = Some(p.discovery_config());
        Topology::new()
    } else {
        ctl_topo.clone()
    };
    let cp = ControlPlane::new(ccfg, known).map_err(|e| site.error("switches", format!("`{name}`: {e}")))?;
    let mut node = AxonNode::new(dev, cp, TxDone::Driver);
    let mut hosts = vec![None; ports.len()];
    for (port, pt) in ports.iter().enumerate() {
        let kind = if topo.is_host(pt.peer) {
            hosts[port] = Some(HostPort {
                mac: node_mac(pt.peer),
                ip: node_ip(pt.peer),
                link: topo.link(pt.link).cfg,
            });
            PortKind::Host
        } else {
            PortKind::Axon
        };
        node.set_port_kind(port as u8, kind)
            .map_err(|e| site.error("switches", format!("`{name}` port {port}: {e}")))?;
    }
    // Each host announces itself (a gratuitous ARP) before the run.
    let mut out = Vec::new();
    for (port, h) in hosts.iter().enumerate() {
        let Some(h) = h else { continue };
        let frame = h.arp(ArpOperation::Request, MacAddr::BROADCAST, MacAddr::ZERO, h.ip);
        node.handle_device(
            0,
            Event::Frame {
                port: port as u8,
                frame,
            },
            &mut out,
        );
    }
    // The announcements reach the control plane at their last byte: run the node to then.
    // Whatever it asks for later waits for the run (armed at the model's first callback).
    let due = timers(&out).map(|(at, _)| at).max().unwrap_or(0);
    let mut later = Vec::new();
    node.on_time(due, &mut later);
    let early = timers(&later).filter(|(at, _)| *at > due).collect();
    if node.control().local_hosts().len() != hosts.iter().flatten().count() {
        return Err(site.error(
            "switches",
            format!("`{name}`: its control plane did not learn its hosts"),
        ));
    }
    let mut s = AxonSwitch::on_frames(node, sw, vec![false; hosts.len()]);
    s.hosts = hosts;
    s.early = early;
    s.notice = p.link_notice;
    s.discovery = p.discovery;
    Ok(s)
}

/// What identifies a frame while an Axon holds it: a hash of the bytes no Axon changes (after
/// the Axon header, if `axon` says the frame is one, and after an Ethernet frame's MACs, which
/// the last Axon rewrites), up to [`FINGERPRINT_BYTES`] of them and the length: the headers.
/// A simulated packet's payload is zeros, so frames with the same headers are the same frame
/// to every reader of the record.
fn fingerprint(frame: &[u8], axon: bool) -> u64 {
    let mut body = frame;
    let mut ethernet = !axon;
    if axon {
        if let Ok(p) = AxonPacket::new_checked(frame) {
            body = frame.get(p.header_len()..).unwrap_or(&[]);
            ethernet = p.packet_type() == PacketType::Ethernet;
        }
    }
    if ethernet {
        body = body.get(12..).unwrap_or(&[]);
    }
    let mut h = FxHasher::default();
    body.len().hash(&mut h);
    body[..body.len().min(FINGERPRINT_BYTES)].hash(&mut h);
    h.finish()
}

/// The bytes of a frame [`fingerprint`] reads: at least the EtherType, an IPv4 header and the
/// longest TCP header (2 + 20 + 60), and every byte of an Axon control message
/// ([`tandem_wire::axon::control::ARP_LEN`] at most).
const FINGERPRINT_BYTES: usize = 96;

/// A kernel packet of node `me` that carries `frame` and belongs to no flow of the scenario's
/// ([`CONTROL_FLOW`]): a control plane's frame, or a testbed host's.
pub fn frame_packet(cx: &mut SwitchCtx<'_>, me: NodeId, frame: Vec<u8>) -> PacketId {
    let pkt = cx.pool.insert(Packet {
        created: cx.now,
        flow: CONTROL_FLOW,
        src: me,
        dst: me,
        size: frame.len() as u32,
        proto: Proto::Udp,
        ..Packet::default()
    });
    cx.pool.set_frame(pkt, frame);
    pkt
}

/// The timers among a node's outputs.
fn timers(out: &[NodeOutput]) -> impl Iterator<Item = (u64, u64)> + '_ {
    out.iter().filter_map(|o| match o {
        NodeOutput::Timer { at_ps, token } => Some((*at_ps, *token)),
        _ => None,
    })
}

/// Checked Axons, one per switch, each ready to be cloned for a run.
#[derive(Debug)]
struct AxonPlacement {
    switches: Vec<(NodeId, AxonSwitch)>,
}

impl Placement for AxonPlacement {
    /// One plain queue a port: the device hands it one frame at a time (its own output
    /// buffers are the Axon's queues); the model's control frames may wait there too.
    fn queues(&self, _node: NodeId, _base: QueueConfig) -> QueueConfig {
        QueueConfig {
            classes: 1,
            limit_packets: 0,
            class_limit_packets: [None; 8],
            limit_bytes: 0,
            marking: Marking::None,
        }
    }

    fn model(&self, node: NodeId) -> Option<Box<dyn SwitchModel>> {
        let (_, s) = self.switches.iter().find(|s| s.0 == node)?;
        Some(Box::new(s.clone()))
    }
}

impl AxonSwitch {
    /// The Axon: its device and control plane.
    pub fn node(&self) -> &AxonNode {
        &self.node
    }

    /// Every address a host of this Axon asked for and learnt, by port and address.
    pub fn resolutions(&self) -> Vec<Resolution> {
        self.neighbours
            .iter()
            .filter_map(|(&(port, ip), n)| match n {
                Neighbour::Known {
                    updated,
                    asked: Some(asked),
                    ..
                } => Some(Resolution {
                    port,
                    ip,
                    asked: *asked,
                    resolved: *updated,
                }),
                _ => None,
            })
            .collect()
    }

    /// An Axon of `node` on switch `me` of a network the driver built itself, with no
    /// simulated hosts: ports marked in `frame_peers` face nodes that speak frames (the
    /// testbed's hosts), the others Axons. Nobody is told of link changes until
    /// [`AxonSwitch::set_link_notice`] says otherwise, and the control plane's first tick is
    /// the driver's to give ([`AxonSwitch::input_at`]).
    pub fn on_frames(node: AxonNode, me: NodeId, frame_peers: Vec<bool>) -> AxonSwitch {
        AxonSwitch {
            node,
            me,
            hosts: vec![None; frame_peers.len()],
            frame_peers,
            log: None,
            neighbours: BTreeMap::new(),
            steps: BTreeMap::new(),
            next_step: 0,
            early: Vec::new(),
            out: Vec::new(),
            held: FxHashMap::default(),
            carried: None,
            carried_verdict: None,
            carried_drop: None,
            free_now: Vec::new(),
            notice: LinkNotice::None,
            discovery: false,
            devices: Arc::new(Vec::new()),
            c: Counters::default(),
        }
    }

    /// The Axon, to change between runs (a port's kind, whether its control plane's wake-ups
    /// are its own timers).
    pub fn node_mut(&mut self) -> &mut AxonNode {
        &mut self.node
    }

    /// Who learns of link changes from now on.
    pub fn set_link_notice(&mut self, notice: LinkNotice) {
        self.notice = notice;
    }

    /// Keeps every action of the control plane from now on ([`AxonSwitch::control_log`]).
    pub fn keep_control_log(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }

    /// The control plane's actions since [`AxonSwitch::keep_control_log`], with their times.
    pub fn control_log(&self) -> &[(Time, ControlAction)] {
        self.log.as_deref().unwrap_or(&[])
    }

    /// Forgets the control log (and keeps logging).
    pub fn clear_control_log(&mut self) {
        if let Some(l) = &mut self.log {
            l.clear();
        }
    }

    /// Hands the Axon on switch `node` of `sim` an input at `at` (now, if that has passed),
    /// through the kernel's event queue; false if that switch runs no Axon.
    pub fn input_at(sim: &mut Sim, node: NodeId, at: Time, input: NodeInput) -> bool {
        let Some(m) = sim.model_as_mut::<AxonSwitch>(node) else {
            return false;
        };
        let token = OWN | m.next_step;
        m.next_step += 1;
        let step = match input {
            NodeInput::Device(ev) => Step::Device(ev),
            NodeInput::Control(i) => Step::Control(i),
        };
        m.steps.insert(token, step);
        sim.wake_model_at(at, node, token);
        true
    }

    fn host(&self, port: u16) -> Option<HostPort> {
        self.hosts.get(usize::from(port)).copied().flatten()
    }

    /// Whether `port` faces another Axon (its frames carry the Axon header).
    fn axon_port(&self, port: u16) -> bool {
        self.host(port).is_none() && !self.frame_peers.get(usize::from(port)).copied().unwrap_or(false)
    }

    fn step(&mut self, cx: &mut SwitchCtx<'_>, at: Time, step: Step) {
        let token = OWN | self.next_step;
        self.next_step += 1;
        self.steps.insert(token, step);
        cx.set_timer(at, token);
    }

    fn arm_early(&mut self, cx: &mut SwitchCtx<'_>) {
        for (at, token) in self.early.drain(..) {
            cx.set_timer(at, token);
        }
    }

    /// Feeds the frame of kernel packet `pkt`, entering on `port`, to the Axon. The packet
    /// leaves when the device transmits its frame (now: the verdict; later, from the device's
    /// output buffers: sent then), is dropped with the device's reason, or, handed to the
    /// control plane, ends here (a control frame at its target is freed; a host's packet that
    /// found no route is dropped, `axon-unrouted`, as the control plane drops its copy).
    fn feed(&mut self, cx: &mut SwitchCtx<'_>, port: u8, pkt: PacketId, frame: Vec<u8>) -> Verdict {
        let key = fingerprint(&frame, self.axon_port(u16::from(port)));
        self.held.entry(key).or_default().push_back(pkt);
        let before = self.node.device().counters().to_control_plane;
        self.carried = Some(pkt);
        self.node
            .handle_device(cx.now, Event::Frame { port, frame }, &mut self.out);
        self.apply(cx);
        self.carried = None;
        if let Some(v) = self.carried_verdict.take() {
            self.carried_drop = None;
            return v;
        }
        let dropped = self.carried_drop.take();
        let upcalled = self.node.device().counters().to_control_plane > before;
        if dropped.is_none() && !upcalled {
            // Waiting in the device's buffer for its output port.
            return Verdict::Consumed;
        }
        self.unhold(key, pkt);
        match dropped {
            Some(why) => Verdict::Drop(why),
            None if cx.pool.get(pkt).flow == CONTROL_FLOW => {
                cx.free(pkt);
                Verdict::Consumed
            }
            None => {
                self.c.upcalled_packets += 1;
                Verdict::Drop("axon-unrouted")
            }
        }
    }

    /// The first kernel packet held under `key`, taken out.
    fn take_held(&mut self, key: u64) -> Option<PacketId> {
        let Entry::Occupied(mut e) = self.held.entry(key) else {
            return None;
        };
        let pkt = e.get_mut().pop_front();
        if e.get().is_empty() {
            e.remove();
        }
        pkt
    }

    fn unhold(&mut self, key: u64, pkt: PacketId) {
        if let Some(q) = self.held.get_mut(&key) {
            q.retain(|p| *p != pkt);
            if q.is_empty() {
                self.held.remove(&key);
            }
        }
    }

    /// Carries out what the node asked for (in `self.out`): a transmitted frame is matched to
    /// the kernel packet it came in as (sent on, or the verdict of the packet being fed) or is
    /// the control plane's own; frames a simulated host takes at once free their port at once.
    fn apply(&mut self, cx: &mut SwitchCtx<'_>) {
        loop {
            let mut out = std::mem::take(&mut self.out);
            for o in out.drain(..) {
                match o {
                    NodeOutput::Transmit { port, start_ps, frame } => {
                        let key = fingerprint(&frame, self.axon_port(u16::from(port)));
                        match self.take_held(key) {
                            Some(pkt) => self.send_held(cx, port, start_ps, pkt, frame),
                            None => self.made_frame(cx, port, start_ps, frame),
                        }
                    }
                    NodeOutput::Timer { at_ps, token } => cx.set_timer(at_ps, token),
                    NodeOutput::Device(Action::Dropped { reason, .. }) => {
                        if self.carried.is_some() && self.carried_verdict.is_none() {
                            self.carried_drop = Some(reason.name());
                        }
                    }
                    NodeOutput::Control(a) => {
                        if let Some(l) = &mut self.log {
                            l.push((cx.now, a));
                        }
                    }
                    NodeOutput::Device(_) => {}
                }
            }
            self.out = out;
            let Some(port) = self.free_now.pop() else { break };
            self.node.handle_device(cx.now, Event::TxDone { port }, &mut self.out);
        }
    }

    /// Sends kernel packet `pkt` on `port` with its new frame, its first byte at `start`.
    fn send_held(&mut self, cx: &mut SwitchCtx<'_>, port: u8, start: Time, pkt: PacketId, frame: Vec<u8>) {
        let p = cx.pool.get_mut(pkt);
        p.size = frame.len() as u32;
        let class = p.class;
        cx.pool.set_frame(pkt, frame);
        let delay = start.saturating_sub(cx.now);
        if self.carried == Some(pkt) && self.carried_verdict.is_none() {
            self.carried_verdict = Some(Verdict::OutputAfter {
                port: u16::from(port),
                class,
                delay,
            });
        } else {
            self.send_at(cx, u16::from(port), start, pkt);
        }
    }

    /// Queues `pkt` on `port` at `start` (now, if that has come).
    fn send_at(&mut self, cx: &mut SwitchCtx<'_>, port: u16, start: Time, pkt: PacketId) {
        if start > cx.now {
            self.step(cx, start, Step::Send { port, pkt });
        } else {
            cx.send(port, pkt);
        }
    }

    /// A frame the Axon made (the control plane's): to a host, the host answers it; to an
    /// Axon, it becomes a packet of its own.
    fn made_frame(&mut self, cx: &mut SwitchCtx<'_>, port: u8, start: Time, frame: Vec<u8>) {
        if let Some(h) = self.host(u16::from(port)) {
            if let Some(quanta) = pause_quanta(&frame) {
                // Self-congestion's PAUSE (§3.3.3): it takes its time on the link, and the
                // host's NIC, once the frame is in, sends nothing for the pause time.
                self.c.pause_frames += 1;
                let len = frame.len() as u64;
                let on_wire = tx_time(h.link.wire_bytes(len as u32), h.link.rate_bps);
                self.step(cx, start + on_wire, Step::PortFree { port });
                cx.pause_peer(
                    u16::from(port),
                    start + h.one_way(len),
                    pause_time_ps(quanta, h.link.rate_bps),
                );
                return;
            }
            // The host takes it off the wire; the port is free again for the next frame.
            self.free_now.push(port);
            return self.host_receives(cx, port, h, start, &frame);
        }
        self.c.control_frames += 1;
        let pkt = frame_packet(cx, self.me, frame);
        self.send_at(cx, u16::from(port), start, pkt);
    }

    /// A host gets a frame from the control plane (starting at `start`): an ARP request for it
    /// is answered and teaches it the sender; an ARP reply resolves what it asked for.
    fn host_receives(&mut self, cx: &mut SwitchCtx<'_>, port: u8, h: HostPort, start: Time, frame: &[u8]) {
        let Ok(eth) = Frame::new_checked(frame) else { return };
        if eth.ethertype() != EtherType::ARP {
            return;
        }
        let Some(a) = parse_arp(eth.payload()) else { return };
        if a.target_ip != h.ip {
            return;
        }
        let at_host = start + h.one_way(frame.len() as u64);
        if let Some(Neighbour::Incomplete { since, .. }) = self.neighbours.get(&(port, a.sender_ip)) {
            let setup = at_host.saturating_sub(*since);
            self.c.resolved += 1;
            self.c.setup_sum += setup;
            self.c.setup_max = self.c.setup_max.max(setup);
        }
        // What waited leaves the host once it knows the address; its first byte is back
        // at the Axon one link delay later.
        self.step(
            cx,
            at_host + h.link.delay,
            Step::Learn {
                port,
                ip: a.sender_ip,
                mac: a.sender_mac,
                at: at_host,
                reply: a.operation == ArpOperation::Reply,
            },
        );
        if a.operation == ArpOperation::Request {
            let frame = h.arp(ArpOperation::Reply, a.sender_mac, a.sender_mac, a.sender_ip);
            let back = at_host + h.one_way(frame.len() as u64);
            self.step(cx, back, Step::HostFrame { port, frame });
        }
    }

    /// The host on `port` asks who has `ip`.
    fn ask(&mut self, cx: &mut SwitchCtx<'_>, port: u8, h: HostPort, ip: Ipv4Addr) {
        self.c.host_arp_requests += 1;
        let frame = h.arp(ArpOperation::Request, MacAddr::BROADCAST, MacAddr::ZERO, ip);
        self.node
            .handle_device(cx.now, Event::Frame { port, frame }, &mut self.out);
        self.apply(cx);
        self.step(cx, cx.now + ARP_RETRANS, Step::ArpRetry { port, ip });
    }

    /// A host's packet, entering on `port`: addressed and fed to the Axon, or held while the
    /// host resolves its destination.
    fn host_packet(&mut self, cx: &mut SwitchCtx<'_>, port: u16, h: HostPort, pkt: PacketId) -> Verdict {
        let p = *cx.pool.get(pkt);
        let ip = node_ip(p.dst);
        let key = (port as u8, ip);
        match self.neighbours.get_mut(&key) {
            Some(Neighbour::Known { mac, .. }) => {
                let mac = *mac;
                self.feed_host_packet(cx, port as u8, pkt, &p, mac)
            }
            Some(Neighbour::Incomplete { waiting, bytes, .. }) => {
                self.c.held_packets += 1;
                waiting.push_back(pkt);
                *bytes += u64::from(p.size);
                while *bytes > ARP_QUEUE_BYTES {
                    let Some(old) = waiting.pop_front() else { break };
                    *bytes -= u64::from(cx.pool.get(old).size);
                    self.c.arp_queue_drops += 1;
                    cx.drop(port, old, "arp-queue");
                }
                Verdict::Consumed
            }
            None => {
                self.c.held_packets += 1;
                self.neighbours.insert(
                    key,
                    Neighbour::Incomplete {
                        waiting: VecDeque::from([pkt]),
                        bytes: u64::from(p.size),
                        tries: 1,
                        since: cx.now,
                    },
                );
                self.ask(cx, port as u8, h, ip);
                Verdict::Consumed
            }
        }
    }

    /// Builds the frame of a host's packet addressed to `mac` and feeds it to the Axon.
    fn feed_host_packet(
        &mut self,
        cx: &mut SwitchCtx<'_>,
        port: u8,
        pkt: PacketId,
        p: &Packet,
        mac: MacAddr,
    ) -> Verdict {
        let mut frame = Vec::new();
        frame_bytes(p, &mut frame);
        frame[..6].copy_from_slice(&mac.0);
        self.feed(cx, port, pkt, frame)
    }

    /// Runs a verdict on a packet the model holds (the kernel only acts on ingress verdicts).
    fn settle(&mut self, cx: &mut SwitchCtx<'_>, in_port: u16, pkt: PacketId, v: Verdict) {
        match v {
            Verdict::Output { port, .. } => cx.send(port, pkt),
            Verdict::OutputAfter { port, delay, .. } => self.send_at(cx, port, cx.now + delay, pkt),
            Verdict::Drop(why) => cx.drop(in_port, pkt, why),
            Verdict::Continue => cx.forward(in_port, pkt),
            Verdict::Consumed => {}
        }
    }

    fn run_step(&mut self, cx: &mut SwitchCtx<'_>, step: Step) {
        match step {
            Step::Send { port, pkt } => cx.send(port, pkt),
            Step::PortFree { port } => {
                self.node.handle_device(cx.now, Event::TxDone { port }, &mut self.out);
                self.apply(cx);
            }
            Step::HostFrame { port, frame } => {
                self.node
                    .handle_device(cx.now, Event::Frame { port, frame }, &mut self.out);
                self.apply(cx);
            }
            Step::Device(ev) => {
                self.node.handle_device(cx.now, ev, &mut self.out);
                self.apply(cx);
            }
            Step::Control(input) => {
                self.node.handle_control(cx.now, input, &mut self.out);
                self.apply(cx);
            }
            Step::Learn {
                port,
                ip,
                mac,
                at,
                reply,
            } => {
                // Linux takes a request's address always, a reply's only if the address it
                // changes is at least `locktime` old.
                if let Some(Neighbour::Known { mac: had, updated, .. }) = self.neighbours.get(&(port, ip)) {
                    if reply && *had != mac && at < updated + ARP_LOCKTIME {
                        self.c.replies_ignored += 1;
                        return;
                    }
                }
                let asked = match self.neighbours.get(&(port, ip)) {
                    Some(Neighbour::Incomplete { since, .. }) => Some(*since),
                    Some(Neighbour::Known { asked, .. }) => *asked,
                    None => None,
                };
                let old = self.neighbours.insert(
                    (port, ip),
                    Neighbour::Known {
                        mac,
                        updated: at,
                        asked,
                    },
                );
                if let Some(Neighbour::Incomplete { waiting, .. }) = old {
                    for pkt in waiting {
                        let p = *cx.pool.get(pkt);
                        let v = self.feed_host_packet(cx, port, pkt, &p, mac);
                        self.settle(cx, u16::from(port), pkt, v);
                    }
                }
            }
            Step::ArpRetry { port, ip } => {
                let Some(Neighbour::Incomplete { tries, .. }) = self.neighbours.get_mut(&(port, ip)) else {
                    return;
                };
                if *tries < ARP_TRIES {
                    *tries += 1;
                    if let Some(h) = self.host(u16::from(port)) {
                        self.ask(cx, port, h, ip);
                    }
                    return;
                }
                self.c.arp_failures += 1;
                if let Some(Neighbour::Incomplete { waiting, .. }) = self.neighbours.remove(&(port, ip)) {
                    for pkt in waiting {
                        cx.drop(u16::from(port), pkt, "arp-failed");
                    }
                }
            }
        }
    }
}

impl SwitchModel for AxonSwitch {
    fn on_ingress(&mut self, cx: &mut SwitchCtx<'_>, in_port: u16, pkt: PacketId) -> Verdict {
        self.arm_early(cx);
        if let Some(h) = self.host(in_port) {
            return self.host_packet(cx, in_port, h, pkt);
        }
        let Some(frame) = cx.pool.take_frame(pkt) else {
            return Verdict::Drop("axon-no-frame");
        };
        self.feed(cx, in_port as u8, pkt, frame)
    }

    /// A port has sent the frame the device handed it: the device may hand it the next (its
    /// own output buffers, one per input port served round robin, are the Axon's queues).
    fn on_port_idle(&mut self, cx: &mut SwitchCtx<'_>, port: u16) {
        self.node
            .handle_device(cx.now, Event::TxDone { port: port as u8 }, &mut self.out);
        self.apply(cx);
    }

    fn watch_port_idle(&self) -> bool {
        true
    }

    fn wants_start(&self) -> bool {
        self.discovery
    }

    /// Discovery starts: the control plane's first tick sends the first probes.
    fn on_start(&mut self, cx: &mut SwitchCtx<'_>) {
        self.arm_early(cx);
        self.node.handle_control(cx.now, ControlInput::Tick, &mut self.out);
        self.apply(cx);
    }

    /// A link failed or came back: the Axons at its ends hear it on their port (device and
    /// control plane), and with `link_notice = "everyone"` every other Axon's control plane
    /// is told too; with `"none"` nobody is.
    fn on_link_change(&mut self, cx: &mut SwitchCtx<'_>, change: LinkChange) {
        self.arm_early(cx);
        match (self.notice, change.port_of(self.me)) {
            (LinkNotice::None, _) => return,
            (_, Some(port)) => self.node.on_link(cx.now, port as u8, change.up, &mut self.out),
            (LinkNotice::Ends, None) => return,
            (LinkNotice::Everyone, None) => {
                let device = |(n, _): (NodeId, u16)| self.devices.get(n.0 as usize).copied().flatten();
                let at = match (device(change.a), device(change.b)) {
                    (Some(d), _) => Endpoint {
                        device: d,
                        port: change.a.1 as u8,
                    },
                    (None, Some(d)) => Endpoint {
                        device: d,
                        port: change.b.1 as u8,
                    },
                    (None, None) => return,
                };
                let input = if change.up {
                    ControlInput::LinkUp { at }
                } else {
                    ControlInput::LinkDown { at }
                };
                self.node.handle_control(cx.now, input, &mut self.out);
            }
        }
        self.apply(cx);
    }

    fn on_timer(&mut self, cx: &mut SwitchCtx<'_>, token: u64) {
        self.arm_early(cx);
        if token & OWN != 0 {
            if let Some(step) = self.steps.remove(&token) {
                self.run_step(cx, step);
            }
            return;
        }
        self.node.on_timer(cx.now, token, &mut self.out);
        self.apply(cx);
    }

    fn pauses_peers(&self) -> bool {
        true
    }

    /// The device takes a frame at its first byte: Table 4.2's pipeline counts from there.
    fn cut_through_header(&self) -> Option<u32> {
        Some(0)
    }

    fn capture_link_type(&self, port: u16) -> Option<LinkType> {
        self.axon_port(port).then_some(LinkType::USER0)
    }

    fn report(&self) -> Vec<(String, f64)> {
        self.system_counters()
            .into_iter()
            .map(|(k, v)| (format!("axon_{k}"), v))
            .collect()
    }

    fn system_counters(&self) -> Vec<(&'static str, f64)> {
        let dev = self.node.device();
        let d = dev.counters();
        let cp = self.node.control().counters();
        let cam: usize = (0..dev.port_count() as u8)
            .filter_map(|p| dev.route_memory(p))
            .map(|m| m.cam_len())
            .sum();
        let device_drops: u64 = DropReason::ALL.iter().map(|r| d.dropped(*r)).sum();
        let c = &self.c;
        let setup_mean = if c.resolved == 0 {
            0.0
        } else {
            c.setup_sum as f64 / c.resolved as f64 / US as f64
        };
        vec![
            ("routes", self.node.control().routes().count() as f64),
            ("routes_installed", cp.routes_installed as f64),
            ("routes_removed", cp.routes_removed as f64),
            ("axon_arp_started", cp.axon_arp_started as f64),
            ("axon_arp_completed", cp.axon_arp_completed as f64),
            ("arp_answered", cp.arp_answered as f64),
            ("host_arp_requests", c.host_arp_requests as f64),
            ("route_setup_mean_us", setup_mean),
            ("route_setup_max_us", c.setup_max as f64 / US as f64),
            ("cam_entries", cam as f64),
            ("cam_hits", d.cam_hits as f64),
            ("masquerade_hits", d.masquerade_hits as f64),
            ("frames_out", d.transmitted as f64),
            ("stripped", d.stripped as f64),
            ("control_frames", c.control_frames as f64),
            ("held_packets", c.held_packets as f64),
            ("arp_queue_drops", c.arp_queue_drops as f64),
            ("arp_failures", c.arp_failures as f64),
            ("upcalled_packets", c.upcalled_packets as f64),
            ("arp_replies_ignored", c.replies_ignored as f64),
            ("pause_frames", c.pause_frames as f64),
            ("device_drops", device_drops as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_addresses_stay_out_of_node_addresses() {
        assert_eq!(spare_ip(255, 3), Ipv4Addr::new(10, 255, 0, 3));
        assert_ne!(spare_ip(254, 0), node_ip(NodeId(0)));
    }
}
