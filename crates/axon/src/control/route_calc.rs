//! Route calculation (§3.2.3, Phase I "route calculation"): the shortest path by hops over the
//! up links of the [`Topology`], and among paths no more than a configured slack longer, the
//! least loaded, where a link's load is the number of routes this control plane has installed
//! across it. Ties go to the lower bottleneck load, then the lower total load, then fewer hops,
//! then the lower port sequence, so the choice is deterministic.

use super::topology::{LinkId, Topology};
use std::collections::{BTreeMap, VecDeque};

/// Cap on candidate paths examined per calculation (bounds the work on dense topologies).
pub const MAX_CANDIDATES: usize = 4096;

/// Routes installed per link.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkLoads {
    routes: BTreeMap<LinkId, u32>,
}

impl LinkLoads {
    /// The routes across a link.
    pub fn load(&self, id: LinkId) -> u32 {
        self.routes.get(&id).copied().unwrap_or(0)
    }
    /// Counts a route across `links`.
    pub fn add(&mut self, links: &[LinkId]) {
        for l in links {
            *self.routes.entry(*l).or_insert(0) += 1;
        }
    }
    /// Uncounts a route across `links`.
    pub fn remove(&mut self, links: &[LinkId]) {
        for l in links {
            if let Some(n) = self.routes.get_mut(l) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.routes.remove(l);
                }
            }
        }
    }
}

/// A chosen path between two Axons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    /// Output port at each Axon from the source to the one before the target.
    pub ports: Vec<u8>,
    /// The links crossed, in order.
    pub links: Vec<LinkId>,
}

/// How a candidate path compares: bottleneck load, total load, hops, port sequence.
type Rank = (u32, u64, usize, Vec<u8>);

/// Hop distance from every reachable device to `to` over up links.
fn distances_to(topo: &Topology, to: u64) -> BTreeMap<u64, usize> {
    let mut dist = BTreeMap::from([(to, 0usize)]);
    let mut queue = VecDeque::from([to]);
    while let Some(d) = queue.pop_front() {
        let here = dist[&d];
        for (_, _, far) in topo.neighbors(d) {
            dist.entry(far.device).or_insert_with(|| {
                queue.push_back(far.device);
                here + 1
            });
        }
    }
    dist
}

/// The best path from `from` to `to` (an empty path when they are the same Axon), or `None`
/// if `to` cannot be reached.
pub fn best_path(topo: &Topology, loads: &LinkLoads, from: u64, to: u64, slack: usize) -> Option<Path> {
    let dist = distances_to(topo, to);
    let shortest = *dist.get(&from)?;
    let limit = shortest + slack;
    let mut best: Option<(Rank, Path)> = None;
    let mut stack = vec![(
        from,
        Path {
            ports: vec![],
            links: vec![],
        },
    )];
    let mut seen = 0usize;
    while let Some((at, path)) = stack.pop() {
        if at == to {
            seen += 1;
            let bottleneck = path.links.iter().map(|l| loads.load(*l)).max().unwrap_or(0);
            let total = path.links.iter().map(|l| u64::from(loads.load(*l))).sum();
            let key = (bottleneck, total, path.links.len(), path.ports.clone());
            if best.as_ref().is_none_or(|(k, _)| key < *k) {
                best = Some((key, path));
            }
            if seen >= MAX_CANDIDATES {
                break;
            }
            continue;
        }
        for (port, link, far) in topo.neighbors(at).into_iter().rev() {
            let Some(d) = dist.get(&far.device) else { continue };
            if path.links.len() + 1 + d > limit || path.links.contains(&link) {
                continue;
            }
            let mut next = path.clone();
            next.ports.push(port);
            next.links.push(link);
            stack.push((far.device, next));
        }
    }
    best.map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::topology::Endpoint;
    use std::net::Ipv4Addr;

    fn ring(n: u64) -> Topology {
        let mut t = Topology::new();
        for d in 1..=n {
            t.add_axon(crate::control::topology::AxonNode {
                device: d,
                pool_first: Ipv4Addr::new(10, 0, d as u8, 10),
                pool_last: Ipv4Addr::new(10, 0, d as u8, 20),
            });
        }
        for d in 1..=n {
            let e = d % n + 1;
            t.add_link(Endpoint { device: d, port: 1 }, Endpoint { device: e, port: 0 })
                .unwrap();
        }
        t
    }

    #[test]
    fn shortest_by_hops() {
        let t = ring(5);
        let p = best_path(&t, &LinkLoads::default(), 1, 3, 0).unwrap();
        assert_eq!(p.ports, vec![1, 1]);
        let p = best_path(&t, &LinkLoads::default(), 1, 4, 0).unwrap();
        assert_eq!(p.ports, vec![0, 0], "the other way round is shorter");
        assert_eq!(
            best_path(&t, &LinkLoads::default(), 2, 2, 0).unwrap().ports,
            Vec::<u8>::new()
        );
    }

    #[test]
    fn least_loaded_among_equal_and_within_slack() {
        // A ring of four: 1 -> 3 is two hops either way.
        let t = ring(4);
        let mut loads = LinkLoads::default();
        let first = best_path(&t, &loads, 1, 3, 0).unwrap();
        loads.add(&first.links);
        let second = best_path(&t, &loads, 1, 3, 0).unwrap();
        assert_ne!(first.links, second.links, "the second route takes the idle side");
        // 1 -> 2 is one hop, three the other way; slack 2 lets a loaded direct link be avoided.
        let mut loads = LinkLoads::default();
        let direct = best_path(&t, &loads, 1, 2, 0).unwrap();
        assert_eq!(direct.links.len(), 1);
        loads.add(&direct.links);
        assert_eq!(
            best_path(&t, &loads, 1, 2, 0).unwrap(),
            direct,
            "no slack: shortest wins"
        );
        assert_eq!(best_path(&t, &loads, 1, 2, 2).unwrap().links.len(), 3);
        loads.remove(&direct.links);
        assert_eq!(loads.load(direct.links[0]), 0);
    }

    #[test]
    fn down_links_are_avoided_and_partitions_have_no_path() {
        let mut t = ring(4);
        let p = best_path(&t, &LinkLoads::default(), 1, 2, 0).unwrap();
        t.set_up(p.links[0], false);
        assert_eq!(best_path(&t, &LinkLoads::default(), 1, 2, 0).unwrap().links.len(), 3);
        t.set_up(LinkId(2), false);
        assert_eq!(best_path(&t, &LinkLoads::default(), 1, 2, 0), None);
    }
}
