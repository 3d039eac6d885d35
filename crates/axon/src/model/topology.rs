//! The model's network: hosts, Axons and Ethernet switches joined by full-duplex links, the
//! shortest paths Axon routes follow, and the spanning tree switches forward on.

use std::collections::VecDeque;

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// A host with one NIC (port 0).
    Host,
    /// An Axon running the real [`crate::Device`].
    Axon,
    /// A store-and-forward Ethernet learning switch.
    Switch,
}

/// One end of a link: a node and its port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct End {
    /// The node.
    pub node: usize,
    /// Its port.
    pub port: u8,
}

/// Nodes and links; ports are numbered per node in the order links are added.
#[derive(Debug, Clone, Default)]
pub struct Topology {
    /// Each node's kind.
    pub kinds: Vec<NodeKind>,
    /// Each node's ports: the far end of the link on that port.
    pub ports: Vec<Vec<End>>,
}

impl Topology {
    /// An empty network.
    pub fn new() -> Topology {
        Topology::default()
    }

    /// Adds a node; returns its index.
    pub fn add(&mut self, kind: NodeKind) -> usize {
        self.kinds.push(kind);
        self.ports.push(Vec::new());
        self.kinds.len() - 1
    }

    /// Joins two nodes with a link on the next free port of each.
    pub fn link(&mut self, a: usize, b: usize) {
        let pa = self.ports[a].len() as u8;
        let pb = self.ports[b].len() as u8;
        self.ports[a].push(End { node: b, port: pb });
        self.ports[b].push(End { node: a, port: pa });
    }

    /// The hosts, in index order.
    pub fn hosts(&self) -> Vec<usize> {
        (0..self.kinds.len())
            .filter(|&n| self.kinds[n] == NodeKind::Host)
            .collect()
    }

    /// The device a host is attached to, and the device's port facing it.
    pub fn attachment(&self, host: usize) -> Option<End> {
        self.ports.get(host)?.first().copied()
    }

    /// Hop distances to `to` over nodes of `kind` (others are unreachable), by BFS.
    fn distances(&self, to: usize, kind: NodeKind) -> Vec<Option<usize>> {
        let mut d = vec![None; self.kinds.len()];
        d[to] = Some(0);
        let mut q = VecDeque::from([to]);
        while let Some(n) = q.pop_front() {
            for e in &self.ports[n] {
                if self.kinds[e.node] == kind && d[e.node].is_none() {
                    d[e.node] = d[n].map(|x| x + 1);
                    q.push_back(e.node);
                }
            }
        }
        d
    }

    /// A shortest path of Axons from `from` to `to`, as the output port taken at each Axon before
    /// `to`; among equally short next hops, the directed link carrying the fewest routes so far
    /// (`load`, indexed by node then port; updated here), then the lowest port.
    pub fn axon_path(&self, from: usize, to: usize, load: &mut [Vec<u32>]) -> Option<Vec<u8>> {
        let d = self.distances(to, NodeKind::Axon);
        let mut at = from;
        let mut hops = Vec::new();
        while at != to {
            let here = d[at]?;
            let (port, next) = self.ports[at]
                .iter()
                .enumerate()
                .filter(|(_, e)| d[e.node].is_some_and(|x| x + 1 == here) && self.kinds[e.node] == NodeKind::Axon)
                .min_by_key(|(p, _)| (load[at][*p], *p))
                .map(|(p, e)| (p as u8, e.node))?;
            load[at][usize::from(port)] += 1;
            hops.push(port);
            at = next;
        }
        Some(hops)
    }

    /// The ports a converged spanning tree blocks: the tree is a BFS from the lowest-numbered
    /// switch (the root bridge, as with equal priorities and bridge ids in node order), each
    /// switch keeping the link to its parent found first; every other switch-to-switch link is
    /// blocked at both ends. Indexed by node then port.
    pub fn spanning_tree_blocked(&self) -> Vec<Vec<bool>> {
        let mut blocked: Vec<Vec<bool>> = self
            .ports
            .iter()
            .enumerate()
            .map(|(n, ps)| {
                ps.iter()
                    .map(|e| self.kinds[n] == NodeKind::Switch && self.kinds[e.node] == NodeKind::Switch)
                    .collect()
            })
            .collect();
        let Some(root) = (0..self.kinds.len()).find(|&n| self.kinds[n] == NodeKind::Switch) else {
            return blocked;
        };
        let mut seen = vec![false; self.kinds.len()];
        seen[root] = true;
        let mut q = VecDeque::from([root]);
        while let Some(n) = q.pop_front() {
            for (p, e) in self.ports[n].iter().enumerate() {
                if self.kinds[e.node] == NodeKind::Switch && !seen[e.node] {
                    seen[e.node] = true;
                    blocked[n][p] = false;
                    blocked[e.node][usize::from(e.port)] = false;
                    q.push_back(e.node);
                }
            }
        }
        blocked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_paths_and_tree() {
        let mut t = Topology::new();
        let a: Vec<usize> = (0..3).map(|_| t.add(NodeKind::Axon)).collect();
        t.link(a[0], a[1]);
        t.link(a[1], a[2]);
        t.link(a[2], a[0]);
        let mut load = vec![vec![0; 2]; 3];
        assert_eq!(t.axon_path(a[0], a[2], &mut load), Some(vec![1]));
        assert_eq!(t.axon_path(a[0], a[0], &mut load), Some(vec![]));
        let mut s = Topology::new();
        let w: Vec<usize> = (0..3).map(|_| s.add(NodeKind::Switch)).collect();
        s.link(w[0], w[1]);
        s.link(w[1], w[2]);
        s.link(w[2], w[0]);
        let b = s.spanning_tree_blocked();
        // Root 0 keeps both its links; the link 1-2 is blocked.
        assert_eq!(b, vec![vec![false, false], vec![false, true], vec![true, false]]);
    }
}
