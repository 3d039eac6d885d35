//! Network topologies (hosts, switches and the full-duplex links between them) and their
//! shortest-path ECMP routing tables.
//!
//! * Nodes are numbered by [`NodeId`] in the order of [`Topology::nodes`]. The builders create
//!   the hosts first, so in a built topology host `hI` is `NodeId(I)`; [`Topology::hosts`] lists
//!   hosts in that order (for a custom graph: in file order).
//! * A node's ports are numbered 0, 1, 2, ... in the order its links appear in
//!   [`Topology::links`]; [`Topology::ports`] gives, per port, the link, the peer node and the
//!   peer's port number. Every host of a built topology has exactly one port (0). A host with
//!   several links in a custom graph sends and receives on its first port only.
//! * [`Routing`] gives, for every (switch, destination host), the set of egress ports on
//!   shortest paths; hosts are never transit nodes. For a topology the builders made
//!   ([`Shape`]) the sets follow from the node numbering and are computed per lookup; for any
//!   other, [`Routing::compute_tables`] runs one breadth-first search per destination host and
//!   stores them.
//!
//! Switch names: `star` has `switch0`; `dumbbell` has `switch0` (left) and `switch1` (right);
//! `leaf_spine` has `leaf0..` and `spine0..`; `fat_tree` has `edge0..`, `agg0..` and `core0..`
//! (edge and aggregation switches numbered pod by pod).

use crate::config::LinkConfig;
use crate::packet::NodeId;
use crate::units::{RateArg, TimeArg};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::fmt;

/// Index of a link in [`Topology::links`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct LinkIdx(pub u32);

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// An end host: runs TCP/UDP endpoints, never forwards.
    Host,
    /// A switch: forwards packets along [`Routing`].
    Switch,
}

/// One node of a topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSpec {
    /// Unique name (`h0`, `switch0`, `leaf3`, or as given in a graph file).
    pub name: String,
    /// Host or switch.
    pub kind: NodeKind,
}

/// One full-duplex link between nodes `a` and `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkSpec {
    /// One end.
    pub a: NodeId,
    /// The other end.
    pub b: NodeId,
    /// Rate, delay and framing of both directions.
    pub cfg: LinkConfig,
}

/// One port of a node: the link behind it and what is at the other end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Port {
    /// The link.
    pub link: LinkIdx,
    /// The node at the other end.
    pub peer: NodeId,
    /// The port number of this link at the peer.
    pub peer_port: u16,
}

/// A topology that could not be built or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopologyError {
    /// The graph file, when reading one.
    pub file: Option<String>,
    /// 1-based line in that file, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl TopologyError {
    fn plain(message: impl Into<String>) -> TopologyError {
        TopologyError {
            file: None,
            line: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}: {}", self.message),
            (Some(file), None) => write!(f, "{file}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for TopologyError {}

/// Hosts, switches and links, with every node's ports precomputed.
#[derive(Debug, Clone)]
pub struct Topology {
    nodes: Vec<NodeSpec>,
    links: Vec<LinkSpec>,
    /// `ports[port_start[n]..port_start[n + 1]]` are node `n`'s ports.
    port_start: Vec<u32>,
    ports: Vec<Port>,
    hosts: Vec<NodeId>,
    switches: Vec<NodeId>,
    by_name: FxHashMap<String, NodeId>,
    /// The builder that made it, when one did (its routes are then computed, not stored).
    shape: Option<Shape>,
}

/// Most ports a node may have (port numbers are `u16`).
pub const MAX_PORTS: usize = u16::MAX as usize;

/// The layout of a topology made by one of the builders ([`Topology::star`],
/// [`Topology::dumbbell`], [`Topology::leaf_spine`], [`Topology::fat_tree`]), with the builder's
/// arguments. Its size is known without building it ([`Shape::size`]), and its shortest paths
/// follow from the node numbering, so [`Routing`] computes them per packet instead of storing a
/// switches x hosts table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// [`Topology::star`].
    Star {
        /// Hosts on the switch.
        hosts: u32,
    },
    /// [`Topology::dumbbell`].
    Dumbbell {
        /// Hosts on `switch0`.
        left: u32,
        /// Hosts on `switch1`.
        right: u32,
    },
    /// [`Topology::leaf_spine`].
    LeafSpine {
        /// Leaf switches.
        leaves: u32,
        /// Spine switches.
        spines: u32,
        /// Hosts on each leaf.
        hosts_per_leaf: u32,
    },
    /// [`Topology::fat_tree`].
    FatTree {
        /// Ports per switch (even, 2 to 256).
        k: u32,
    },
}

/// How big a topology is: what memory estimates are made of ([`crate::limits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TopologySize {
    /// Hosts.
    pub hosts: u64,
    /// Switches.
    pub switches: u64,
    /// Links (each has two ports, one at each end).
    pub links: u64,
    /// Ports of all switches together (the ports queue sampling covers by default).
    pub switch_ports: u64,
    /// The most ports of one node.
    pub max_ports: u64,
    /// Bytes of all node names together.
    pub name_bytes: u64,
}

impl TopologySize {
    /// Hosts and switches.
    pub fn nodes(&self) -> u64 {
        self.hosts.saturating_add(self.switches)
    }
}

/// Decimal digits of `0..n` written one after the other (the digits of names `h0..h{n-1}`).
fn digits_below(n: u64) -> u64 {
    let (mut total, mut lo, mut width) = (0u64, 0u64, 1u64);
    while lo < n {
        let hi = lo.saturating_mul(10).max(10).min(n);
        total = total.saturating_add((hi - lo).saturating_mul(width));
        lo = hi;
        width += 1;
    }
    total
}

impl Shape {
    /// Counts of the topology this shape builds, computed from the arguments alone, without
    /// building anything (in `u64`, saturating: absurd arguments give huge counts, never an
    /// overflow).
    pub fn size(&self) -> TopologySize {
        let mul = u64::saturating_mul;
        let add = u64::saturating_add;
        let named = |prefix: u64, n: u64| add(mul(n, prefix), digits_below(n));
        match *self {
            Shape::Star { hosts } => {
                let h = u64::from(hosts);
                TopologySize {
                    hosts: h,
                    switches: 1,
                    links: h,
                    switch_ports: h,
                    max_ports: h,
                    name_bytes: named(1, h) + 7,
                }
            }
            Shape::Dumbbell { left, right } => {
                let (l, r) = (u64::from(left), u64::from(right));
                TopologySize {
                    hosts: l + r,
                    switches: 2,
                    links: l + r + 1,
                    switch_ports: l + r + 2,
                    max_ports: l.max(r) + 1,
                    name_bytes: named(1, l + r) + 14,
                }
            }
            Shape::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            } => {
                let (l, s, hpl) = (u64::from(leaves), u64::from(spines), u64::from(hosts_per_leaf));
                let hosts = mul(l, hpl);
                let fabric = mul(l, s);
                TopologySize {
                    hosts,
                    switches: l + s,
                    links: add(hosts, fabric),
                    switch_ports: add(hosts, mul(2, fabric)),
                    max_ports: (hpl + s).max(l),
                    name_bytes: add(named(1, hosts), named(4, l) + named(5, s)),
                }
            }
            Shape::FatTree { k } => {
                let k = u64::from(k);
                let h = k / 2;
                let hosts = mul(k, h * h);
                TopologySize {
                    hosts,
                    switches: add(2 * k * h, h * h),
                    links: mul(3, hosts),
                    switch_ports: mul(5, hosts),
                    max_ports: k,
                    name_bytes: add(
                        add(named(1, hosts), named(4, k * h)),
                        add(named(3, k * h), named(4, h * h)),
                    ),
                }
            }
        }
    }

    /// Checks the arguments without allocating anything: counts at least 1, a fat tree's `k`
    /// even and between 2 and 256, at most [`MAX_PORTS`] ports on any switch, and node and
    /// link counts that fit the 32-bit ids.
    pub fn check(&self) -> Result<(), TopologyError> {
        let positive = |what: &str, v: u32| {
            if v == 0 {
                Err(TopologyError::plain(format!("{what} must be at least 1")))
            } else {
                Ok(())
            }
        };
        match *self {
            Shape::Star { hosts } => positive("hosts", hosts)?,
            Shape::Dumbbell { left, right } => {
                positive("left", left)?;
                positive("right", right)?;
            }
            Shape::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            } => {
                positive("leaves", leaves)?;
                positive("spines", spines)?;
                positive("hosts_per_leaf", hosts_per_leaf)?;
            }
            Shape::FatTree { k } => {
                if k < 2 || !k.is_multiple_of(2) || k > 256 {
                    return Err(TopologyError::plain(format!(
                        "fat-tree k must be even and between 2 and 256, got {k}"
                    )));
                }
            }
        }
        let size = self.size();
        if size.max_ports > MAX_PORTS as u64 {
            return Err(TopologyError::plain(format!(
                "a switch would have {} ports (at most {MAX_PORTS})",
                size.max_ports
            )));
        }
        if size.nodes() > u64::from(u32::MAX) || size.links > u64::from(u32::MAX) {
            return Err(TopologyError::plain("too many nodes or links"));
        }
        Ok(())
    }

    /// The egress ports of switch `sw` on shortest paths to host `dst`, as a range of port
    /// numbers (every equal-cost set of a built topology is one port or a run of consecutive
    /// ports); `None` when `sw` is not a switch or `dst` not a host. The same sets, in the same
    /// order, as [`Routing::compute_tables`] finds by search.
    fn route(&self, sw: u32, dst: u32) -> Option<(u32, u32)> {
        let one = |p: u32| Some((p, p + 1));
        match *self {
            Shape::Star { hosts } => (sw == hosts && dst < hosts).then_some((dst, dst + 1)),
            Shape::Dumbbell { left, right } => {
                let hosts = left + right;
                match sw.checked_sub(hosts) {
                    _ if dst >= hosts => None,
                    Some(0) => one(if dst < left { dst } else { left }),
                    Some(1) => one(if dst >= left { dst - left } else { right }),
                    _ => None,
                }
            }
            Shape::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf: hpl,
            } => {
                let hosts = leaves * hpl;
                let i = sw.checked_sub(hosts)?;
                if dst >= hosts {
                    None
                } else if i < leaves {
                    if dst / hpl == i {
                        one(dst % hpl)
                    } else {
                        Some((hpl, hpl + spines))
                    }
                } else if i - leaves < spines {
                    one(dst / hpl)
                } else {
                    None
                }
            }
            Shape::FatTree { k } => FatTreeRoute::new(k).route(sw, dst),
        }
    }
}

impl Topology {
    /// Checks nodes and links (unique names, link ends exist, no self-loops, at most
    /// [`MAX_PORTS`] ports per node, every host linked) and numbers every node's ports.
    pub fn new(nodes: Vec<NodeSpec>, links: Vec<LinkSpec>) -> Result<Topology, TopologyError> {
        Topology::build(nodes, links, None)
    }

    /// [`Topology::new`] with every link's port number at each end given (`ports[i]` for link
    /// `i`: at `a`, at `b`) instead of taken in link order: for a network whose devices number
    /// their own ports (an Axon's port 0 need not be its first link). Each node's numbers must
    /// be `0..` its link count, each once.
    pub fn with_port_numbers(
        nodes: Vec<NodeSpec>,
        links: Vec<LinkSpec>,
        ports: &[(u16, u16)],
    ) -> Result<Topology, TopologyError> {
        if ports.len() != links.len() {
            return Err(TopologyError::plain(format!(
                "{} links but {} port number pairs",
                links.len(),
                ports.len()
            )));
        }
        Topology::build(nodes, links, Some(ports))
    }

    fn build(
        nodes: Vec<NodeSpec>,
        links: Vec<LinkSpec>,
        numbers: Option<&[(u16, u16)]>,
    ) -> Result<Topology, TopologyError> {
        let n = nodes.len();
        if n > u32::MAX as usize || links.len() > u32::MAX as usize {
            return Err(TopologyError::plain("too many nodes or links"));
        }
        let mut by_name = FxHashMap::default();
        by_name.reserve(n);
        for (i, node) in nodes.iter().enumerate() {
            if by_name.insert(node.name.clone(), NodeId(i as u32)).is_some() {
                return Err(TopologyError::plain(format!("node name `{}` used twice", node.name)));
            }
        }
        let mut degree = vec![0u32; n + 1];
        for (i, l) in links.iter().enumerate() {
            let (a, b) = (l.a.0 as usize, l.b.0 as usize);
            if a >= n || b >= n {
                return Err(TopologyError::plain(format!(
                    "link {i} names a node that does not exist"
                )));
            }
            if a == b {
                return Err(TopologyError::plain(format!(
                    "link {i} joins `{}` to itself",
                    nodes[a].name
                )));
            }
            degree[a] += 1;
            degree[b] += 1;
        }
        if let Some(i) = degree.iter().position(|&d| d as usize > MAX_PORTS) {
            return Err(TopologyError::plain(format!(
                "node `{}` has more than {MAX_PORTS} ports",
                nodes[i].name
            )));
        }
        // Prefix sums give each node's first port slot.
        let mut port_start = Vec::with_capacity(n + 1);
        let mut acc = 0u32;
        for d in &degree[..n] {
            port_start.push(acc);
            acc += d;
        }
        port_start.push(acc);
        let mut fill = vec![0u16; n];
        let placeholder = Port {
            link: LinkIdx(0),
            peer: NodeId(0),
            peer_port: 0,
        };
        let mut ports = vec![placeholder; acc as usize];
        let mut taken = vec![false; if numbers.is_some() { acc as usize } else { 0 }];
        for (i, l) in links.iter().enumerate() {
            let (a, b) = (l.a.0 as usize, l.b.0 as usize);
            let (pa, pb) = match numbers {
                None => (fill[a], fill[b]),
                Some(nums) => {
                    let (pa, pb) = nums[i];
                    for (node, p) in [(a, pa), (b, pb)] {
                        let slot = port_start[node] as usize + usize::from(p);
                        if u32::from(p) >= degree[node] || taken[slot] {
                            return Err(TopologyError::plain(format!(
                                "link {i}: port {p} of `{}` is used twice or beyond its {} links",
                                nodes[node].name, degree[node]
                            )));
                        }
                        taken[slot] = true;
                    }
                    (pa, pb)
                }
            };
            ports[port_start[a] as usize + pa as usize] = Port {
                link: LinkIdx(i as u32),
                peer: l.b,
                peer_port: pb,
            };
            ports[port_start[b] as usize + pb as usize] = Port {
                link: LinkIdx(i as u32),
                peer: l.a,
                peer_port: pa,
            };
            fill[a] += 1;
            fill[b] += 1;
        }
        let mut hosts = Vec::new();
        let mut switches = Vec::new();
        for (i, node) in nodes.iter().enumerate() {
            match node.kind {
                NodeKind::Host => {
                    if degree[i] == 0 {
                        return Err(TopologyError::plain(format!("host `{}` has no link", node.name)));
                    }
                    hosts.push(NodeId(i as u32));
                }
                NodeKind::Switch => switches.push(NodeId(i as u32)),
            }
        }
        Ok(Topology {
            nodes,
            links,
            port_start,
            ports,
            hosts,
            switches,
            by_name,
            shape: None,
        })
    }

    /// The builder's layout, for a topology one of the builders made.
    pub fn shape(&self) -> Option<Shape> {
        self.shape
    }

    /// Its counts (a built topology's are those of its [`Shape::size`]).
    pub fn size(&self) -> TopologySize {
        match self.shape {
            Some(s) => s.size(),
            None => self.measured_size(),
        }
    }

    /// Its counts, counted.
    fn measured_size(&self) -> TopologySize {
        let switch_ports: usize = self.switches.iter().map(|&s| self.ports(s).len()).sum();
        let max_ports = (0..self.nodes.len()).map(|i| self.ports(NodeId(i as u32)).len()).max();
        TopologySize {
            hosts: self.hosts.len() as u64,
            switches: self.switches.len() as u64,
            links: self.links.len() as u64,
            switch_ports: switch_ports as u64,
            max_ports: max_ports.unwrap_or(0) as u64,
            name_bytes: self.nodes.iter().map(|n| n.name.len() as u64).sum(),
        }
    }

    /// Changes the rate, delay and framing of a link (nothing else about the topology changes).
    /// Panics if `idx` is not in this topology.
    pub fn set_link_config(&mut self, idx: LinkIdx, cfg: LinkConfig) {
        self.links[idx.0 as usize].cfg = cfg;
    }

    /// All nodes, indexed by [`NodeId`].
    pub fn nodes(&self) -> &[NodeSpec] {
        &self.nodes
    }

    /// All links, indexed by [`LinkIdx`].
    pub fn links(&self) -> &[LinkSpec] {
        &self.links
    }

    /// One node. Panics if `id` is not in this topology.
    pub fn node(&self, id: NodeId) -> &NodeSpec {
        &self.nodes[id.0 as usize]
    }

    /// One link. Panics if `idx` is not in this topology.
    pub fn link(&self, idx: LinkIdx) -> &LinkSpec {
        &self.links[idx.0 as usize]
    }

    /// A node's ports, numbered from 0 (empty for an unknown node).
    pub fn ports(&self, node: NodeId) -> &[Port] {
        let i = node.0 as usize;
        if i + 1 >= self.port_start.len() {
            return &[];
        }
        &self.ports[self.port_start[i] as usize..self.port_start[i + 1] as usize]
    }

    /// The hosts, in order (`h0`, `h1`, ... for built topologies).
    pub fn hosts(&self) -> &[NodeId] {
        &self.hosts
    }

    /// The switches, in node order.
    pub fn switches(&self) -> &[NodeId] {
        &self.switches
    }

    /// The node with this name.
    pub fn find(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }

    /// Whether `id` is a host.
    pub fn is_host(&self, id: NodeId) -> bool {
        self.nodes.get(id.0 as usize).is_some_and(|n| n.kind == NodeKind::Host)
    }

    /// The link behind a host's port 0 (the one it uses), or `None` for a switch.
    pub fn host_link(&self, host: NodeId) -> Option<&LinkSpec> {
        if !self.is_host(host) {
            return None;
        }
        self.ports(host).first().map(|p| self.link(p.link))
    }

    /// The nodes of a built topology, allocated once at their final size: `hosts` hosts (`h0`,
    /// `h1`, ...), then each group of switches (`prefix0`, `prefix1`, ...) in order.
    fn built_nodes(hosts: u32, switches: &[(&str, u32)]) -> Vec<NodeSpec> {
        let total = hosts as usize + switches.iter().map(|&(_, n)| n as usize).sum::<usize>();
        let mut nodes = Vec::with_capacity(total);
        nodes.extend((0..hosts).map(|i| NodeSpec {
            name: format!("h{i}"),
            kind: NodeKind::Host,
        }));
        for &(prefix, count) in switches {
            nodes.extend((0..count).map(|i| NodeSpec {
                name: format!("{prefix}{i}"),
                kind: NodeKind::Switch,
            }));
        }
        nodes
    }

    /// The topology of a `shape` that passed [`Shape::check`]: its hosts, the `switches`
    /// groups and `links` (exactly [`TopologySize::links`] of them), each list allocated once
    /// at its size; the shape is recorded, so that routes are computed rather than stored.
    fn built(
        shape: Shape,
        switches: &[(&str, u32)],
        links: impl Iterator<Item = LinkSpec>,
    ) -> Result<Topology, TopologyError> {
        let size = shape.size();
        let nodes = Self::built_nodes(size.hosts as u32, switches);
        let mut all = Vec::with_capacity(size.links as usize);
        all.extend(links);
        debug_assert_eq!(all.len() as u64, size.links);
        let mut t = Topology::new(nodes, all)?;
        t.shape = Some(shape);
        Ok(t)
    }

    /// `hosts` hosts on one switch (`switch0`); the switch's port `i` leads to host `hi`.
    pub fn star(hosts: u32, link: LinkConfig) -> Result<Topology, TopologyError> {
        let shape = Shape::Star { hosts };
        shape.check()?;
        let links = (0..hosts).map(move |h| LinkSpec {
            a: NodeId(h),
            b: NodeId(hosts),
            cfg: link,
        });
        Self::built(shape, &[("switch", 1)], links)
    }

    /// Two switches joined by `bottleneck`: hosts `h0..h{left-1}` on `switch0` (its ports
    /// `0..left`) and the next `right` hosts on `switch1`; the bottleneck is the last port of
    /// each switch.
    pub fn dumbbell(
        left: u32,
        right: u32,
        access: LinkConfig,
        bottleneck: LinkConfig,
    ) -> Result<Topology, TopologyError> {
        let shape = Shape::Dumbbell { left, right };
        shape.check()?;
        let s0 = left + right;
        let hosts = (0..s0).map(move |h| LinkSpec {
            a: NodeId(h),
            b: NodeId(if h < left { s0 } else { s0 + 1 }),
            cfg: access,
        });
        let middle = LinkSpec {
            a: NodeId(s0),
            b: NodeId(s0 + 1),
            cfg: bottleneck,
        };
        Self::built(shape, &[("switch", 2)], hosts.chain(std::iter::once(middle)))
    }

    /// A two-tier Clos: `leaves` leaf switches with `hosts_per_leaf` hosts each, every leaf
    /// linked to every one of `spines` spine switches. Leaf `l` has hosts on ports
    /// `0..hosts_per_leaf` and spine `s` on port `hosts_per_leaf + s`; spine port `l` leads to
    /// leaf `l`.
    pub fn leaf_spine(
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        host_link: LinkConfig,
        fabric_link: LinkConfig,
    ) -> Result<Topology, TopologyError> {
        let shape = Shape::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
        };
        shape.check()?;
        let hosts = leaves * hosts_per_leaf;
        let (leaf0, spine0) = (hosts, hosts + leaves);
        let down = (0..hosts).map(move |h| LinkSpec {
            a: NodeId(h),
            b: NodeId(leaf0 + h / hosts_per_leaf),
            cfg: host_link,
        });
        let fabric = (0..leaves).flat_map(move |l| {
            (0..spines).map(move |s| LinkSpec {
                a: NodeId(leaf0 + l),
                b: NodeId(spine0 + s),
                cfg: fabric_link,
            })
        });
        Self::built(shape, &[("leaf", leaves), ("spine", spines)], down.chain(fabric))
    }

    /// The k-ary fat tree of Al-Fares et al. (SIGCOMM 2008): `k` pods of `k/2` edge and `k/2`
    /// aggregation switches, `(k/2)^2` core switches, `k^3/4` hosts (`k/2` per edge switch),
    /// `5k^2/4` switches. `k` must be even.
    ///
    /// Ports: edge switch ports `0..k/2` lead to its hosts and `k/2 + j` to its pod's
    /// aggregation switch `j`; aggregation switch ports `0..k/2` lead to its pod's edge switches
    /// and `k/2 + c` to core `j*k/2 + c` (for aggregation switch `j` of its pod); core port `p`
    /// leads to pod `p`.
    pub fn fat_tree(k: u32, host_link: LinkConfig, fabric_link: LinkConfig) -> Result<Topology, TopologyError> {
        let shape = Shape::FatTree { k };
        shape.check()?;
        let h = k / 2;
        let hosts = k * h * h;
        let (edge0, agg0) = (hosts, hosts + k * h);
        let core0 = agg0 + k * h;
        let down = (0..hosts).map(move |host| LinkSpec {
            a: NodeId(host),
            b: NodeId(edge0 + host / h),
            cfg: host_link,
        });
        let pods = move || (0..k).flat_map(move |pod| (0..h).flat_map(move |x| (0..h).map(move |y| (pod, x, y))));
        let edge_agg = pods().map(move |(pod, e, a)| LinkSpec {
            a: NodeId(edge0 + pod * h + e),
            b: NodeId(agg0 + pod * h + a),
            cfg: fabric_link,
        });
        let agg_core = pods().map(move |(pod, a, c)| LinkSpec {
            a: NodeId(agg0 + pod * h + a),
            b: NodeId(core0 + a * h + c),
            cfg: fabric_link,
        });
        Self::built(
            shape,
            &[("edge", k * h), ("agg", k * h), ("core", h * h)],
            down.chain(edge_agg).chain(agg_core),
        )
    }

    /// Reads a custom graph from TOML text (`file_name` is used in errors):
    ///
    /// ```toml
    /// [[node]]
    /// name = "h0"
    /// kind = "host"        # or "switch"
    ///
    /// [[link]]
    /// a = "h0"
    /// b = "s0"
    /// rate = "10Gbps"
    /// delay = "1us"
    /// framing = "ethernet"   # optional: "ethernet" (default) or "ppp" (ns-3 point-to-point)
    /// framing_overhead = 24  # optional, bytes (default 24 for Ethernet, 0 for PPP)
    /// ```
    ///
    /// Links are numbered, and ports assigned, in file order.
    pub fn from_graph_file(text: &str, file_name: &str) -> Result<Topology, TopologyError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "lowercase")]
        enum RawKind {
            Host,
            Switch,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct RawNode {
            name: toml::Spanned<String>,
            kind: RawKind,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct RawLink {
            a: toml::Spanned<String>,
            b: toml::Spanned<String>,
            rate: toml::Spanned<RateArg>,
            delay: TimeArg,
            framing: Option<String>,
            framing_overhead: Option<u32>,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct RawGraph {
            #[serde(default)]
            node: Vec<RawNode>,
            #[serde(default)]
            link: Vec<RawLink>,
        }
        let err = |span: Option<std::ops::Range<usize>>, message: String| TopologyError {
            file: Some(file_name.to_string()),
            line: span.map(|s| line_at(text, s.start)),
            message,
        };
        let raw: RawGraph = toml::from_str(text).map_err(|e| err(e.span(), e.message().to_string()))?;
        let mut by_name: FxHashMap<&str, NodeId> = FxHashMap::default();
        let mut nodes = Vec::with_capacity(raw.node.len());
        for n in &raw.node {
            let name = n.name.get_ref();
            if name.is_empty() {
                return Err(err(Some(n.name.span()), "empty node name".into()));
            }
            if by_name.insert(name, NodeId(nodes.len() as u32)).is_some() {
                return Err(err(Some(n.name.span()), format!("node name `{name}` used twice")));
            }
            nodes.push(NodeSpec {
                name: name.clone(),
                kind: match n.kind {
                    RawKind::Host => NodeKind::Host,
                    RawKind::Switch => NodeKind::Switch,
                },
            });
        }
        let mut links = Vec::with_capacity(raw.link.len());
        for l in &raw.link {
            let end = |s: &toml::Spanned<String>| {
                by_name
                    .get(s.get_ref().as_str())
                    .copied()
                    .ok_or_else(|| err(Some(s.span()), format!("link names unknown node `{}`", s.get_ref())))
            };
            let (a, b) = (end(&l.a)?, end(&l.b)?);
            if a == b {
                return Err(err(
                    Some(l.b.span()),
                    format!("link joins `{}` to itself", l.a.get_ref()),
                ));
            }
            if l.rate.get_ref().0 == 0 {
                return Err(err(Some(l.rate.span()), "link rate must be above 0".into()));
            }
            let base = LinkConfig {
                rate_bps: l.rate.get_ref().0,
                delay: l.delay.0,
                ..LinkConfig::default()
            };
            let base = match l.framing.as_deref() {
                None | Some("ethernet") => base,
                Some("ppp") => base.ppp(),
                Some(other) => {
                    return Err(err(
                        Some(l.a.span()),
                        format!("unknown framing `{other}`, expected `ethernet` or `ppp`"),
                    ))
                }
            };
            links.push(LinkSpec {
                a,
                b,
                cfg: LinkConfig {
                    framing_overhead: l.framing_overhead.unwrap_or(base.framing_overhead),
                    ..base
                },
            });
        }
        if !nodes.iter().any(|n| n.kind == NodeKind::Host) {
            return Err(err(None, "the graph has no host".into()));
        }
        Topology::new(nodes, links).map_err(|mut e| {
            // Point at the node's definition where the message names one.
            e.line = raw
                .node
                .iter()
                .find(|n| e.message.contains(&format!("`{}`", n.name.get_ref())))
                .map(|n| line_at(text, n.name.span().start));
            e.file = Some(file_name.to_string());
            e
        })
    }
}

/// 1-based line of byte `offset` in `text`.
pub(crate) fn line_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    1 + text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count()
}

const NO_INDEX: u32 = u32::MAX;

/// The hash that ECMP picks a port by: SplitMix64 of (`key`, switch), where the key is a
/// flow's number or a destination host's ([`crate::config::Ecmp`]). Deterministic and well
/// spread, so that paths neither polarise nor depend on anything but ids.
#[inline]
pub fn ecmp_hash(key: u32, node: NodeId) -> u64 {
    mix64((u64::from(key) << 32 | u64::from(node.0)).wrapping_add(0x9e37_79b9_7f4a_7c15))
}

/// The port that `hash` ([`ecmp_hash`]) picks from one switch's equal-cost set; `None` for
/// an empty set.
#[inline]
pub fn ecmp_pick(ports: &[u16], hash: u64) -> Option<u16> {
    match ports.len() {
        0 => None,
        1 => Some(ports[0]),
        // A power-of-two set (every fat tree's and most leaf-spines') by a mask: the same
        // index as `%`, without a division per packet and hop.
        n if n.is_power_of_two() => Some(ports[(hash & (n as u64 - 1)) as usize]),
        n => Some(ports[(hash % n as u64) as usize]),
    }
}

/// Shortest-path ECMP routing: for every switch and destination host, the egress ports that
/// lie on a shortest path (counted in hops).
///
/// For a topology one of the builders made ([`Topology::shape`]) the ports follow from the node
/// numbering and are computed per lookup, in constant time and memory. Any other topology gets
/// tables ([`Routing::compute_tables`]), stored compactly: one `u32` set id per (switch, host)
/// pair, and each distinct port set once in a shared list (a k = 16 fat tree has 320 x 1,024
/// pairs but only a few dozen distinct sets, about 1.3 MB in all).
#[derive(Debug, Clone)]
pub struct Routing {
    kind: RoutingKind,
}

#[derive(Debug, Clone)]
enum RoutingKind {
    /// Routes of a built topology, computed per lookup; `ports` is `0, 1, 2, ...` up to the
    /// most ports of a node, so that a run of ports is a slice of it.
    Computed {
        shape: Shape,
        ports: Vec<u16>,
        /// A fat tree's divisors, precomputed (`None` for other shapes).
        fat_tree: Option<FatTreeRoute>,
    },
    Tables(Tables),
}

/// Division of a `u32` by a fixed divisor with one multiplication (Lemire, Kaser & Kurz,
/// "Faster remainder by direct computation", 2019: exact for every 32-bit dividend with a
/// 64-bit magic number), for the per-packet route computation.
#[derive(Debug, Clone, Copy)]
struct FastDiv {
    d: u32,
    magic: u64,
}

impl FastDiv {
    fn new(d: u32) -> FastDiv {
        let d = d.max(1);
        FastDiv {
            d,
            magic: (u64::MAX / u64::from(d)).wrapping_add(1),
        }
    }
    #[inline]
    fn div(self, n: u32) -> u32 {
        if self.d == 1 {
            return n;
        }
        ((u128::from(self.magic) * u128::from(n)) >> 64) as u32
    }
    #[inline]
    fn rem(self, n: u32) -> u32 {
        n - self.div(n) * self.d
    }
}

/// The routes of a fat tree ([`Shape::route`]), with its divisions by `k / 2` and `(k / 2)^2`
/// precomputed: [`Routing`] builds one per run, so a lookup costs no hardware division.
#[derive(Debug, Clone, Copy)]
struct FatTreeRoute {
    h: u32,
    hosts: u32,
    edges: u32,
    by_h: FastDiv,
    by_hh: FastDiv,
}

impl FatTreeRoute {
    fn new(k: u32) -> FatTreeRoute {
        let h = k / 2;
        FatTreeRoute {
            h,
            hosts: k * h * h,
            edges: k * h,
            by_h: FastDiv::new(h),
            by_hh: FastDiv::new(h * h),
        }
    }

    #[inline]
    fn route(&self, sw: u32, dst: u32) -> Option<(u32, u32)> {
        let (h, edges) = (self.h, self.edges);
        let one = |p: u32| Some((p, p + 1));
        let i = sw.checked_sub(self.hosts)?;
        if dst >= self.hosts {
            None
        } else if i < edges {
            let edge = self.by_h.div(dst);
            if edge == i {
                one(dst - edge * h)
            } else {
                Some((h, 2 * h))
            }
        } else if i < 2 * edges {
            if self.by_hh.div(dst) == self.by_h.div(i - edges) {
                one(self.by_h.rem(self.by_h.div(dst)))
            } else {
                Some((h, 2 * h))
            }
        } else if i - 2 * edges < h * h {
            one(self.by_hh.div(dst))
        } else {
            None
        }
    }
}

#[derive(Debug, Clone)]
struct Tables {
    /// NodeId -> switch index (or `NO_INDEX`).
    switch_index: Vec<u32>,
    /// NodeId -> host index (or `NO_INDEX`).
    host_index: Vec<u32>,
    hosts: usize,
    /// `table[switch index * hosts + host index]` = set id.
    table: Vec<u32>,
    /// Set id -> (offset, len) in `port_list`. Set 0 is the empty set (no route).
    sets: Vec<(u32, u16)>,
    port_list: Vec<u16>,
}

impl Routing {
    /// The routes of `topo`: computed per lookup for a built topology (see [`Topology::shape`]),
    /// tables ([`Routing::compute_tables`]) for any other.
    pub fn compute(topo: &Topology) -> Routing {
        match topo.shape() {
            Some(shape) => {
                let n = shape.size().max_ports.min(MAX_PORTS as u64) as usize;
                Routing {
                    kind: RoutingKind::Computed {
                        shape,
                        ports: (0..n).map(|p| p as u16).collect(),
                        fat_tree: match shape {
                            // k * h * h must fit a u32 for the node numbers to, as in Shape::route.
                            Shape::FatTree { k } if u64::from(k).pow(3) / 4 < u64::from(u32::MAX) => {
                                Some(FatTreeRoute::new(k))
                            }
                            _ => None,
                        },
                    },
                }
            }
            None => Routing::compute_tables(topo),
        }
    }

    /// Computes the tables of any topology: one breadth-first search per destination host,
    /// O(V + E) each, and 4 bytes per (switch, host) pair. Hosts other than the destination are
    /// never expanded (they do not forward), and a destination host is entered only through its
    /// port 0.
    pub fn compute_tables(topo: &Topology) -> Routing {
        let n = topo.nodes().len();
        let hosts = topo.hosts();
        let switches = topo.switches();
        let mut switch_index = vec![NO_INDEX; n];
        for (i, s) in switches.iter().enumerate() {
            switch_index[s.0 as usize] = i as u32;
        }
        let mut host_index = vec![NO_INDEX; n];
        for (i, h) in hosts.iter().enumerate() {
            host_index[h.0 as usize] = i as u32;
        }
        let mut table = vec![0u32; switches.len() * hosts.len()];
        let mut sets: Vec<(u32, u16)> = vec![(0, 0)];
        let mut port_list: Vec<u16> = Vec::new();
        let mut interned: FxHashMap<Vec<u16>, u32> = FxHashMap::default();
        interned.insert(Vec::new(), 0);

        const UNSEEN: u32 = u32::MAX;
        let mut dist = vec![UNSEEN; n];
        let mut queue: Vec<u32> = Vec::with_capacity(n);
        let mut scratch: Vec<u16> = Vec::new();
        for (hi, &dst) in hosts.iter().enumerate() {
            dist.fill(UNSEEN);
            queue.clear();
            dist[dst.0 as usize] = 0;
            queue.push(dst.0);
            let mut head = 0;
            while head < queue.len() {
                let u = queue[head];
                head += 1;
                let ports = topo.ports(NodeId(u));
                let ports = if u == dst.0 {
                    &ports[..ports.len().min(1)]
                } else if host_index[u as usize] != NO_INDEX {
                    continue; // hosts do not forward
                } else {
                    ports
                };
                let du = dist[u as usize];
                for p in ports {
                    let v = p.peer.0 as usize;
                    if dist[v] == UNSEEN {
                        dist[v] = du + 1;
                        queue.push(p.peer.0);
                    }
                }
            }
            for (si, &s) in switches.iter().enumerate() {
                let ds = dist[s.0 as usize];
                let id = if ds == UNSEEN {
                    0
                } else {
                    scratch.clear();
                    for (pi, p) in topo.ports(s).iter().enumerate() {
                        let v = p.peer;
                        let via = if v == dst {
                            p.peer_port == 0
                        } else {
                            switch_index[v.0 as usize] != NO_INDEX
                        };
                        if via && dist[v.0 as usize].wrapping_add(1) == ds {
                            scratch.push(pi as u16);
                        }
                    }
                    match interned.get(scratch.as_slice()) {
                        Some(&id) => id,
                        None => {
                            let id = sets.len() as u32;
                            sets.push((port_list.len() as u32, scratch.len() as u16));
                            port_list.extend_from_slice(&scratch);
                            interned.insert(scratch.clone(), id);
                            id
                        }
                    }
                };
                table[si * hosts.len() + hi] = id;
            }
        }
        Routing {
            kind: RoutingKind::Tables(Tables {
                switch_index,
                host_index,
                hosts: hosts.len(),
                table,
                sets,
                port_list,
            }),
        }
    }

    /// The egress ports of `switch` on shortest paths to `dst_host`, in port order. Empty when
    /// there is no route, or when `switch` is not a switch or `dst_host` not a host. (Hosts
    /// always send on port 0.)
    pub fn next_ports(&self, switch: NodeId, dst_host: NodeId) -> &[u16] {
        match &self.kind {
            RoutingKind::Computed { shape, ports, fat_tree } => {
                let route = match fat_tree {
                    Some(f) => f.route(switch.0, dst_host.0),
                    None => shape.route(switch.0, dst_host.0),
                };
                match route {
                    Some((a, b)) => &ports[a as usize..b as usize],
                    None => &[],
                }
            }
            RoutingKind::Tables(t) => {
                let si = t.switch_index.get(switch.0 as usize).copied().unwrap_or(NO_INDEX);
                let hi = t.host_index.get(dst_host.0 as usize).copied().unwrap_or(NO_INDEX);
                if si == NO_INDEX || hi == NO_INDEX {
                    return &[];
                }
                let (off, len) = t.sets[t.table[si as usize * t.hosts + hi as usize] as usize];
                &t.port_list[off as usize..off as usize + len as usize]
            }
        }
    }

    /// The port of `switch` toward `dst_host` when switches hash the destination
    /// (`switch.ecmp = "destination"`): the one [`ecmp_pick`] takes from
    /// [`Routing::next_ports`] by [`ecmp_hash`] of the host; `None` without a route.
    pub fn destination_port(&self, switch: NodeId, dst_host: NodeId) -> Option<u16> {
        self.ecmp_port(switch, dst_host, dst_host.0)
    }

    /// The port the simulator's ECMP takes at `switch` toward `dst_host` for `key` (a flow's
    /// number, or with `switch.ecmp = "destination"` the destination host's): [`ecmp_pick`]
    /// from [`next_ports`](Self::next_ports) by [`ecmp_hash`], which mixes in the switch id so
    /// that consecutive switches do not all make the same choice (hash polarisation). `None`
    /// when there is no route.
    pub fn ecmp_port(&self, switch: NodeId, dst_host: NodeId, key: u32) -> Option<u16> {
        ecmp_pick(self.next_ports(switch, dst_host), ecmp_hash(key, switch))
    }

    /// Whether routes are computed per lookup (a built topology) rather than stored in tables.
    pub fn is_computed(&self) -> bool {
        matches!(self.kind, RoutingKind::Computed { .. })
    }

    /// Number of distinct port sets stored in the tables, the empty set included (0 when
    /// routes are computed per lookup).
    pub fn distinct_sets(&self) -> usize {
        match &self.kind {
            RoutingKind::Computed { .. } => 0,
            RoutingKind::Tables(t) => t.sets.len(),
        }
    }

    /// Approximate heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        match &self.kind {
            RoutingKind::Computed { ports, .. } => 2 * ports.len(),
            RoutingKind::Tables(t) => {
                4 * (t.switch_index.len() + t.host_index.len() + t.table.len())
                    + 8 * t.sets.len()
                    + 2 * t.port_list.len()
            }
        }
    }
}

/// SplitMix64's finaliser: a fast, well-mixed 64-bit hash.
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::US;

    /// Ports numbered by the caller: a ring whose every node has its port 0 toward the
    /// previous node, which link order alone cannot give; a number used twice or past a node's
    /// link count is refused.
    #[test]
    fn ports_take_the_numbers_given() {
        let nodes: Vec<NodeSpec> = (0..3)
            .map(|i| NodeSpec {
                name: format!("a{i}"),
                kind: NodeKind::Switch,
            })
            .collect();
        let ring = |numbers: &[(u16, u16)]| {
            let links = (0..3)
                .map(|i| LinkSpec {
                    a: NodeId(i),
                    b: NodeId((i + 1) % 3),
                    cfg: link(1),
                })
                .collect();
            Topology::with_port_numbers(nodes.clone(), links, numbers)
        };
        let t = ring(&[(1, 0), (1, 0), (1, 0)]).unwrap();
        check_ports(&t);
        for i in 0..3 {
            assert_eq!(t.ports(NodeId(i))[0].peer, NodeId((i + 2) % 3));
            assert_eq!(t.ports(NodeId(i))[1].peer, NodeId((i + 1) % 3));
        }
        assert!(ring(&[(1, 0), (1, 1), (1, 0)]).is_err());
        assert!(ring(&[(1, 0), (1, 0), (2, 0)]).is_err());
        assert!(ring(&[(1, 0), (1, 0)]).is_err());
    }

    #[test]
    fn fast_division_is_exact() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for d in (1..=300).chain([1 << 16, 65_535, 1_000_003, u32::MAX]) {
            let f = FastDiv::new(d);
            let edges = [0, 1, d - 1, d, d.wrapping_add(1), u32::MAX - 1, u32::MAX];
            for n in edges.into_iter().chain((0..2_000).map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u32
            })) {
                assert_eq!((f.div(n), f.rem(n)), (n / d, n % d), "{n} / {d}");
            }
        }
    }

    fn link(gbps: u64) -> LinkConfig {
        LinkConfig {
            rate_bps: gbps * 1_000_000_000,
            delay: US,
            framing_overhead: 24,
            l2_header: 14,
        }
    }

    /// Every port's peer port points back at it over the same link.
    fn check_ports(t: &Topology) {
        for (i, _) in t.nodes().iter().enumerate() {
            let me = NodeId(i as u32);
            for (pi, p) in t.ports(me).iter().enumerate() {
                let back = t.ports(p.peer)[p.peer_port as usize];
                assert_eq!(back.peer, me);
                assert_eq!(back.peer_port as usize, pi);
                assert_eq!(back.link, p.link);
                let l = t.link(p.link);
                assert!((l.a == me && l.b == p.peer) || (l.b == me && l.a == p.peer));
            }
        }
        for &h in t.hosts() {
            assert_eq!(t.ports(h).len(), 1);
        }
    }

    #[test]
    fn star_counts() {
        let t = Topology::star(8, link(10)).unwrap();
        assert_eq!(t.nodes().len(), 9);
        assert_eq!(t.links().len(), 8);
        assert_eq!(t.hosts().len(), 8);
        let sw = t.find("switch0").unwrap();
        assert_eq!(t.ports(sw).len(), 8);
        assert_eq!(t.ports(sw)[3].peer, t.find("h3").unwrap());
        assert_eq!(t.hosts()[5], NodeId(5));
        assert_eq!(t.node(NodeId(5)).name, "h5");
        check_ports(&t);
        let r = Routing::compute(&t);
        for h in 0..8 {
            assert_eq!(r.next_ports(sw, NodeId(h)), &[h as u16]);
        }
        assert!(Topology::star(0, link(10)).is_err());
    }

    #[test]
    fn dumbbell_routes() {
        let t = Topology::dumbbell(3, 2, link(10), link(1)).unwrap();
        assert_eq!(t.nodes().len(), 7);
        assert_eq!(t.links().len(), 6);
        let (s0, s1) = (t.find("switch0").unwrap(), t.find("switch1").unwrap());
        assert_eq!(t.ports(s0).len(), 4);
        assert_eq!(t.ports(s1).len(), 3);
        assert_eq!(t.link(t.ports(s0)[3].link).cfg.rate_bps, 1_000_000_000);
        check_ports(&t);
        let r = Routing::compute(&t);
        assert_eq!(r.next_ports(s0, NodeId(1)), &[1]);
        assert_eq!(r.next_ports(s0, NodeId(4)), &[3]);
        assert_eq!(r.next_ports(s1, NodeId(0)), &[2]);
        assert_eq!(r.next_ports(s1, NodeId(4)), &[1]);
        assert_eq!(r.ecmp_port(s0, NodeId(4), 12345), Some(3));
        // Not a switch / not a host: no route.
        assert_eq!(r.next_ports(NodeId(0), NodeId(4)), &[] as &[u16]);
        assert_eq!(r.next_ports(s0, s1), &[] as &[u16]);
        assert_eq!(r.ecmp_port(s0, s1, 1), None);
    }

    #[test]
    fn leaf_spine_counts_and_ecmp() {
        let t = Topology::leaf_spine(4, 2, 3, link(10), link(40)).unwrap();
        assert_eq!(t.hosts().len(), 12);
        assert_eq!(t.switches().len(), 6);
        assert_eq!(t.links().len(), 12 + 8);
        let leaf1 = t.find("leaf1").unwrap();
        let spine1 = t.find("spine1").unwrap();
        assert_eq!(t.ports(leaf1).len(), 5);
        assert_eq!(t.ports(spine1).len(), 4);
        assert_eq!(t.ports(leaf1)[4].peer, spine1);
        assert_eq!(t.ports(spine1)[1].peer, leaf1);
        check_ports(&t);
        let r = Routing::compute(&t);
        // Host 0 is on leaf0: from leaf1 both spines are equal-cost.
        assert_eq!(r.next_ports(leaf1, NodeId(0)), &[3, 4]);
        assert_eq!(r.next_ports(leaf1, NodeId(4)), &[1]);
        assert_eq!(r.next_ports(spine1, NodeId(0)), &[0]);
        // ECMP spreads flows over both spines.
        let mut seen = [0u32; 5];
        for f in 0..1000u32 {
            seen[r.ecmp_port(leaf1, NodeId(0), f).unwrap() as usize] += 1;
        }
        assert!(seen[3] > 400 && seen[4] > 400, "{seen:?}");
    }

    #[test]
    fn fat_tree_k4_paths() {
        let t = Topology::fat_tree(4, link(10), link(10)).unwrap();
        assert_eq!(t.hosts().len(), 16);
        assert_eq!(t.switches().len(), 20);
        assert_eq!(t.links().len(), 48);
        for &s in t.switches() {
            assert_eq!(t.ports(s).len(), 4, "{}", t.node(s).name);
        }
        check_ports(&t);
        let r = Routing::compute(&t);
        let edge0 = t.find("edge0").unwrap();
        let agg0 = t.find("agg0").unwrap();
        let core0 = t.find("core0").unwrap();
        // edge0 holds h0, h1; edge1 (same pod) h2, h3; pod 1 starts at h4.
        assert_eq!(r.next_ports(edge0, NodeId(1)), &[1]);
        assert_eq!(r.next_ports(edge0, NodeId(2)), &[2, 3]); // up to either agg
        assert_eq!(r.next_ports(edge0, NodeId(4)), &[2, 3]);
        assert_eq!(r.next_ports(agg0, NodeId(2)), &[1]); // down to edge1
        assert_eq!(r.next_ports(agg0, NodeId(4)), &[2, 3]); // up to either core
        assert_eq!(r.next_ports(core0, NodeId(4)), &[1]); // down to pod 1
        assert_eq!(r.next_ports(core0, NodeId(15)), &[3]);
        for &s in t.switches() {
            for &h in t.hosts() {
                assert!(!r.next_ports(s, h).is_empty());
            }
        }
    }

    #[test]
    fn fat_tree_k16_is_lean() {
        let t = Topology::fat_tree(16, link(100), link(100)).unwrap();
        assert_eq!(t.hosts().len(), 1024);
        assert_eq!(t.switches().len(), 320);
        assert_eq!(t.links().len(), 1024 * 3);
        let tables = Routing::compute_tables(&t);
        assert!(tables.distinct_sets() < 64, "{}", tables.distinct_sets());
        assert!(tables.memory_bytes() < 2 << 20, "{}", tables.memory_bytes());
        let r = Routing::compute(&t);
        assert!(r.is_computed() && !tables.is_computed());
        assert_eq!(r.memory_bytes(), 2 * 16);
        let core = t.find("core63").unwrap();
        assert_eq!(r.next_ports(core, NodeId(1023)), &[15]);
        assert_eq!(r.next_ports(t.find("edge0").unwrap(), NodeId(1023)).len(), 8);
        assert!(Topology::fat_tree(5, link(1), link(1)).is_err());
        assert!(Topology::fat_tree(0, link(1), link(1)).is_err());
    }

    /// Every built topology of a few small sizes.
    fn small_builds() -> Vec<Topology> {
        let l = link(10);
        let mut out = Vec::new();
        for h in 1..=5 {
            out.push(Topology::star(h, l).unwrap());
        }
        for a in 1..=3 {
            for b in 1..=3 {
                out.push(Topology::dumbbell(a, b, l, link(1)).unwrap());
            }
        }
        for leaves in 1..=4 {
            for spines in 1..=3 {
                for hpl in 1..=3 {
                    out.push(Topology::leaf_spine(leaves, spines, hpl, l, link(40)).unwrap());
                }
            }
        }
        for k in [2, 4, 6, 8] {
            out.push(Topology::fat_tree(k, l, l).unwrap());
        }
        out
    }

    #[test]
    fn computed_routes_are_the_tables() {
        for t in small_builds() {
            let computed = Routing::compute(&t);
            let tables = Routing::compute_tables(&t);
            assert!(computed.is_computed(), "{:?}", t.shape());
            // Every pair of ids, non-switches, non-hosts and ids past the end included.
            let n = t.nodes().len() as u32 + 2;
            for a in 0..n {
                for b in 0..n {
                    let (a, b) = (NodeId(a), NodeId(b));
                    assert_eq!(
                        computed.next_ports(a, b),
                        tables.next_ports(a, b),
                        "{:?}: {a:?} to {b:?}",
                        t.shape()
                    );
                    for hash in [0, 1, 0xdead_beef] {
                        assert_eq!(computed.ecmp_port(a, b, hash), tables.ecmp_port(a, b, hash));
                    }
                }
            }
        }
    }

    #[test]
    fn shape_sizes_are_counted_sizes() {
        for t in small_builds() {
            assert_eq!(t.shape().unwrap().size(), t.measured_size(), "{:?}", t.shape());
        }
        let t = Topology::fat_tree(16, link(10), link(10)).unwrap();
        assert_eq!(t.shape().unwrap().size(), t.measured_size());
        let t = Topology::leaf_spine(12, 3, 110, link(10), link(10)).unwrap();
        assert_eq!(t.shape().unwrap().size(), t.measured_size());
        // Names past one digit.
        let t = Topology::star(1234, link(10)).unwrap();
        assert_eq!(t.size().name_bytes, t.measured_size().name_bytes);
    }

    #[test]
    fn absurd_shapes_are_refused_before_anything_is_allocated() {
        let l = link(10);
        let e = Topology::star(u32::MAX, l).unwrap_err();
        assert_eq!(e.message, "a switch would have 4294967295 ports (at most 65535)");
        let e = Topology::leaf_spine(100_000, 100_000, 1, l, l).unwrap_err();
        assert_eq!(e.message, "a switch would have 100001 ports (at most 65535)");
        assert!(Topology::dumbbell(u32::MAX, u32::MAX, l, l).is_err());
        assert!(Topology::fat_tree(258, l, l).is_err());
        let big = Shape::LeafSpine {
            leaves: u32::MAX,
            spines: u32::MAX,
            hosts_per_leaf: u32::MAX,
        }
        .size();
        assert_eq!(big.hosts, u64::from(u32::MAX) * u64::from(u32::MAX));
        assert_eq!(big.links, u64::MAX);
        assert_eq!(Shape::FatTree { k: u32::MAX }.size().hosts, u64::MAX);
        assert_eq!(digits_below(0), 0);
        assert_eq!(digits_below(10), 10);
        assert_eq!(digits_below(101), 10 + 180 + 3);
    }

    const GRAPH: &str = r#"
[[node]]
name = "a"
kind = "host"
[[node]]
name = "b"
kind = "host"
[[node]]
name = "s"
kind = "switch"
[[node]]
name = "t"
kind = "switch"

[[link]]
a = "a"
b = "s"
rate = "10Gbps"
delay = "1us"
[[link]]
a = "s"
b = "t"
rate = "40Gbps"
delay = "2us"
framing_overhead = 2
[[link]]
a = "b"
b = "t"
rate = "10Gbps"
delay = "1us"
[[link]]
a = "b"
b = "s"
rate = "10Gbps"
delay = "1us"
"#;

    #[test]
    fn graph_file() {
        let t = Topology::from_graph_file(GRAPH, "g.toml").unwrap();
        assert_eq!(t.hosts(), &[NodeId(0), NodeId(1)]);
        assert_eq!(t.links()[1].cfg.framing_overhead, 2);
        assert_eq!(t.links()[1].cfg.delay, 2 * US);
        check_ports_graph(&t);
        let r = Routing::compute(&t);
        let (s, tt) = (t.find("s").unwrap(), t.find("t").unwrap());
        // b is multi-homed (t first, then s): it is reached through its port 0 (t) only.
        assert_eq!(r.next_ports(s, NodeId(1)), &[1]);
        assert_eq!(r.next_ports(tt, NodeId(1)), &[1]);
        assert_eq!(r.next_ports(tt, NodeId(0)), &[0]);
    }

    fn check_ports_graph(t: &Topology) {
        for (i, _) in t.nodes().iter().enumerate() {
            let me = NodeId(i as u32);
            for (pi, p) in t.ports(me).iter().enumerate() {
                let back = t.ports(p.peer)[p.peer_port as usize];
                assert_eq!((back.peer, back.peer_port as usize), (me, pi));
            }
        }
    }

    #[test]
    fn graph_file_errors() {
        let e = |text: &str| Topology::from_graph_file(text, "g.toml").unwrap_err().to_string();
        let bad = GRAPH.replace("a = \"s\"\nb = \"t\"", "a = \"s\"\nb = \"u\"");
        assert_eq!(e(&bad), "g.toml:22: link names unknown node `u`");
        let bad = GRAPH.replace("rate = \"40Gbps\"", "rate = \"40 parsecs\"");
        assert!(
            e(&bad).starts_with("g.toml:23: expected a rate like 10Gbps, got \"40 parsecs\""),
            "{}",
            e(&bad)
        );
        let bad = GRAPH.replace("delay = \"2us\"", "delay = \"2us\"\ncolour = \"red\"");
        assert!(e(&bad).starts_with("g.toml:25: unknown field `colour`"), "{}", e(&bad));
        let bad = GRAPH.replace("name = \"b\"", "name = \"a\"");
        assert_eq!(e(&bad), "g.toml:6: node name `a` used twice");
        let bad = GRAPH.replace("kind = \"switch\"", "kind = \"router\"");
        assert!(
            e(&bad).starts_with("g.toml:10: unknown variant `router`"),
            "{}",
            e(&bad)
        );
        let bad = GRAPH.replace("a = \"b\"\nb = \"t\"", "a = \"b\"\nb = \"b\"");
        assert_eq!(e(&bad), "g.toml:28: link joins `b` to itself");
        let bad = format!("{GRAPH}\n[[node]]\nname = \"c\"\nkind = \"host\"\n");
        assert_eq!(e(&bad), "g.toml:38: host `c` has no link");
        let bad = GRAPH.replace("delay = \"2us\"\n", "");
        assert!(e(&bad).contains("missing field `delay`"), "{}", e(&bad));
        assert_eq!(e(""), "g.toml: the graph has no host");
    }
}
