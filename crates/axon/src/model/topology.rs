//! The experiments' networks: hosts, Axons and Ethernet switches joined by full-duplex links,
//! and the spanning tree switches forward on.

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
    fn ring_tree() {
        let mut t = Topology::new();
        let a: Vec<usize> = (0..3).map(|_| t.add(NodeKind::Axon)).collect();
        t.link(a[0], a[1]);
        t.link(a[1], a[2]);
        t.link(a[2], a[0]);
        // Axons are not bridges: nothing blocked.
        assert!(t.spanning_tree_blocked().iter().flatten().all(|b| !b));
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
