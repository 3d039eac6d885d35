//! The network as the control plane sees it: Axons, the DHCP pool each serves and the links
//! between their ports, given in configuration as the prototype's control plane reads it from a
//! file (§3.2.3). Links can be marked down (link failure) and up again.
//!
//! The text form, one item a line, `#` starts a comment:
//!
//! ```text
//! axon 1 10.0.1.10 10.0.1.200     # device id, first and last pool address
//! link 1.0 2.1                    # device 1 port 0 <-> device 2 port 1
//! ```

use super::config::ControlConfigError;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// One end of a link: a device and its port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Endpoint {
    /// Device id.
    pub device: u64,
    /// Port number (0..15).
    pub port: u8,
}

/// The index of a link in [`Topology::links`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkId(pub usize);

/// A full-duplex link between two Axon ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Link {
    /// One end.
    pub a: Endpoint,
    /// The other end.
    pub b: Endpoint,
    /// Whether it carries traffic.
    pub up: bool,
}

/// An Axon and the addresses whose hosts it owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AxonNode {
    /// Device id.
    pub device: u64,
    /// First address of its pool.
    pub pool_first: Ipv4Addr,
    /// Last address of its pool (inclusive).
    pub pool_last: Ipv4Addr,
}

/// Axons and links.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    nodes: BTreeMap<u64, AxonNode>,
    links: Vec<Link>,
}

impl Topology {
    /// An empty topology.
    pub fn new() -> Topology {
        Topology::default()
    }

    /// Adds (or replaces) an Axon.
    pub fn add_axon(&mut self, node: AxonNode) {
        self.nodes.insert(node.device, node);
    }

    /// Adds a link (up) between two known Axons' ports.
    pub fn add_link(&mut self, a: Endpoint, b: Endpoint) -> Result<LinkId, ControlConfigError> {
        let id = self.links.len();
        let known = |e: Endpoint| self.nodes.contains_key(&e.device) && e.port < 0x0f;
        if !known(a) || !known(b) || a == b {
            return Err(ControlConfigError::BadLink(id));
        }
        self.links.push(Link { a, b, up: true });
        Ok(LinkId(id))
    }

    /// Reads the text form (see the module doc).
    pub fn parse(text: &str) -> Result<Topology, ControlConfigError> {
        let mut t = Topology::new();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            let words: Vec<&str> = line.split_whitespace().collect();
            let bad = |w| ControlConfigError::TopologyLine(n + 1, w);
            match words.as_slice() {
                [] => {}
                ["axon", id, first, last] => {
                    let device = id.parse().map_err(|_| bad("device id"))?;
                    let pool_first = first.parse().map_err(|_| bad("pool address"))?;
                    let pool_last = last.parse().map_err(|_| bad("pool address"))?;
                    t.add_axon(AxonNode {
                        device,
                        pool_first,
                        pool_last,
                    });
                }
                ["link", a, b] => {
                    let a = parse_endpoint(a).ok_or(bad("endpoint"))?;
                    let b = parse_endpoint(b).ok_or(bad("endpoint"))?;
                    t.add_link(a, b).map_err(|_| bad("link to an unknown axon or port"))?;
                }
                _ => return Err(bad("expected `axon ID FIRST LAST` or `link D.P D.P`")),
            }
        }
        Ok(t)
    }

    /// The Axons.
    pub fn axons(&self) -> impl Iterator<Item = &AxonNode> {
        self.nodes.values()
    }

    /// Whether a device is known.
    pub fn has_axon(&self, device: u64) -> bool {
        self.nodes.contains_key(&device)
    }

    /// The links, indexed by [`LinkId`].
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// The Axon whose pool holds `ip` (the lowest id if pools overlap).
    pub fn owner_of(&self, ip: Ipv4Addr) -> Option<u64> {
        self.nodes
            .values()
            .find(|n| n.pool_first <= ip && ip <= n.pool_last)
            .map(|n| n.device)
    }

    /// The link on a device's port, if any (an up one first: a port rewired after a failure has
    /// its old link down and its new one up).
    pub fn link_at(&self, at: Endpoint) -> Option<LinkId> {
        let on = |l: &Link| l.a == at || l.b == at;
        self.links
            .iter()
            .position(|l| l.up && on(l))
            .or_else(|| self.links.iter().position(on))
            .map(LinkId)
    }

    /// The link between exactly these two ends (either order), if any.
    pub fn find_link(&self, a: Endpoint, b: Endpoint) -> Option<LinkId> {
        self.links
            .iter()
            .position(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
            .map(LinkId)
    }

    /// Marks a link up or down; returns whether it changed.
    pub fn set_up(&mut self, id: LinkId, up: bool) -> bool {
        match self.links.get_mut(id.0) {
            Some(l) if l.up != up => {
                l.up = up;
                true
            }
            _ => false,
        }
    }

    /// The far end of a link seen from `from`.
    pub fn far_end(&self, id: LinkId, from: Endpoint) -> Option<Endpoint> {
        let l = self.links.get(id.0)?;
        if l.a == from {
            Some(l.b)
        } else if l.b == from {
            Some(l.a)
        } else {
            None
        }
    }

    /// Up links leaving `device`: (local port, link, far end), by port.
    pub fn neighbors(&self, device: u64) -> Vec<(u8, LinkId, Endpoint)> {
        let mut v: Vec<_> = self
            .links
            .iter()
            .enumerate()
            .filter(|(_, l)| l.up)
            .filter_map(|(i, l)| {
                if l.a.device == device {
                    Some((l.a.port, LinkId(i), l.b))
                } else if l.b.device == device {
                    Some((l.b.port, LinkId(i), l.a))
                } else {
                    None
                }
            })
            .collect();
        v.sort();
        v
    }

    /// Follows output ports from `device` across links (up or down): the links crossed and the
    /// device reached, or `None` if a port has no link.
    pub fn walk(&self, device: u64, out_ports: &[u8]) -> Option<(Vec<LinkId>, u64)> {
        let mut at = device;
        let mut links = Vec::with_capacity(out_ports.len());
        for &p in out_ports {
            let here = Endpoint { device: at, port: p };
            let id = self.link_at(here)?;
            at = self.far_end(id, here)?.device;
            links.push(id);
        }
        Some((links, at))
    }
}

fn parse_endpoint(s: &str) -> Option<Endpoint> {
    let (d, p) = s.split_once('.')?;
    Some(Endpoint {
        device: d.parse().ok()?,
        port: p.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_text_form_and_walks_paths() {
        let t = Topology::parse(
            "# a line of three\naxon 1 10.0.1.10 10.0.1.20\naxon 2 10.0.2.10 10.0.2.20\n\
             axon 3 10.0.3.10 10.0.3.20\nlink 1.0 2.0\nlink 2.1 3.0 # second\n",
        )
        .unwrap();
        assert_eq!(t.links().len(), 2);
        assert_eq!(t.owner_of(Ipv4Addr::new(10, 0, 3, 15)), Some(3));
        assert_eq!(t.owner_of(Ipv4Addr::new(10, 0, 4, 15)), None);
        assert_eq!(t.walk(1, &[0, 1]), Some((vec![LinkId(0), LinkId(1)], 3)));
        assert_eq!(t.walk(1, &[5]), None);
        assert_eq!(t.neighbors(2).len(), 2);
    }

    #[test]
    fn bad_lines_are_typed_errors() {
        assert_eq!(
            Topology::parse("axon x 1.1.1.1 1.1.1.2"),
            Err(ControlConfigError::TopologyLine(1, "device id"))
        );
        assert!(matches!(
            Topology::parse("axon 1 1.1.1.1 1.1.1.2\nlink 1.0 9.0"),
            Err(ControlConfigError::TopologyLine(2, _))
        ));
        assert!(matches!(
            Topology::parse("bridge 1"),
            Err(ControlConfigError::TopologyLine(1, _))
        ));
    }
}
