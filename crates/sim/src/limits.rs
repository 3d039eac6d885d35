//! Memory limits: what a run of a scenario will need, estimated from its counts before anything
//! of that size is allocated, and the limit a scenario must fit to be accepted.
//!
//! [`Scenario::load_with`](crate::scenario::Scenario::load_with) refuses a scenario whose
//! [`MemoryEstimate`] is above [`Limits::max_memory_bytes`], as a
//! [`ScenarioError`](crate::scenario::ScenarioError) naming the key that asks for most of it
//! (the topology, a `[[flows]]` entry, or `output.queue_sample_interval`). The estimate is
//! checked part by part as the scenario is read: the topology's before it is built, each
//! `[[flows]]` entry's before its flows are generated. The default limit is half of this
//! machine's memory ([`default_max_memory`]).
//!
//! What the estimate counts, from the sizes of the simulator's own records (`size_of`), so that
//! it follows them as they change:
//!
//! * **network**: per node, the topology's record and the simulator's, their names (three
//!   copies: the topology, its name index, the simulator) and the name index itself; per port
//!   (two per link), the topology's port record and the simulator's port with its egress
//!   queues; per link, its record;
//! * **routing**: nothing for a topology a builder made (star, dumbbell, leaf-spine, fat tree:
//!   routes are computed per packet, see [`crate::topology::Routing`]); for a graph file,
//!   4 bytes per (switch, host) pair and 16 per node for the tables and their search;
//! * **flows**: per flow, its spec (three copies at most: the generator's list, the scenario's,
//!   the sort's scratch), the simulator's per-flow state with its two TCP endpoints, the
//!   start event, and the flow's row in `flows.csv`/`flows.parquet` as it is written
//!   ([`FLOW_EXTRA_BYTES`] for the endpoints' and the row's heap memory);
//! * **queue samples**: `(duration / queue_sample_interval + 1)` ticks x the sampled ports
//!   (`output.sample_ports`, or every switch port, since any of them may be non-empty at a
//!   tick), at three times the size of a sample (the list grows by doubling: twice its length
//!   once grown, the old and the new list while it grows), plus the queue plot's points;
//! * a fixed [`BASE_BYTES`] for the program, its output writers and plots.
//!
//! Packets in flight are not counted: queue limits and TCP windows bound them.

use crate::event::Event;
use crate::packet::NodeId;
use crate::sim::QueueSample;
use crate::time::Time;
use crate::topology::{LinkSpec, NodeSpec, TopologySize};
use crate::workload::FlowSpec;
use std::fmt;
use std::mem::size_of;
use std::sync::OnceLock;

/// The limit when this machine's memory is unknown: 4 GiB.
pub const FALLBACK_MAX_MEMORY: u64 = 4 << 30;

/// Memory every run needs whatever its size: the program, its output writers and plots.
pub const BASE_BYTES: u64 = 48 << 20;

/// Heap memory per flow beyond the records counted by `size_of`: its two TCP endpoints'
/// congestion control, scoreboards and timer events (about 900 bytes, measured), and its row
/// in the flows table as it is written (about 800).
pub const FLOW_EXTRA_BYTES: u64 = 2048;

/// The limits a scenario is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most memory, in bytes, a run may need ([`MemoryEstimate::total`]).
    pub max_memory_bytes: u64,
}

impl Default for Limits {
    /// [`default_max_memory`].
    fn default() -> Limits {
        Limits {
            max_memory_bytes: default_max_memory(),
        }
    }
}

impl Limits {
    /// A limit of `bytes`.
    pub fn max_memory(bytes: u64) -> Limits {
        Limits {
            max_memory_bytes: bytes,
        }
    }
}

/// `MemTotal` of a `/proc/meminfo` text, in bytes.
pub fn meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => n.checked_mul(1024),
        None => Some(n),
        Some(_) => None,
    }
}

/// A cgroup memory limit file's value: bytes, or `None` for `max` (no limit) and anything else.
fn cgroup_value(text: &str) -> Option<u64> {
    text.trim().parse().ok().filter(|&b| b > 0)
}

/// This machine's physical memory: `MemTotal` from `/proc/meminfo`, or the memory limit of the
/// cgroup this process runs in (a container's) when that is lower. `None` where neither is known.
pub fn physical_memory() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| meminfo_total(&t))
        .filter(|&m| m > 0);
    let cgroup = [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|p| std::fs::read_to_string(p).ok().and_then(|t| cgroup_value(&t)));
    match (total, cgroup) {
        (Some(t), Some(c)) => Some(t.min(c)),
        (t, c) => t.or(c),
    }
}

/// The default limit: half of this machine's physical memory ([`physical_memory`]), or
/// [`FALLBACK_MAX_MEMORY`] when that is unknown. Read once per process.
pub fn default_max_memory() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| physical_memory().map_or(FALLBACK_MAX_MEMORY, |m| m / 2))
}

pub use crate::units::fmt_bytes;

/// Heap bytes of one allocation of `len` bytes (a malloc chunk: 16-byte granules with an
/// 8-byte header, 32 bytes at least).
fn alloc_bytes(len: u64) -> u64 {
    (len.saturating_add(8 + 15) / 16 * 16).max(32)
}

/// What a run of a scenario needs, by part, in bytes (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// Nodes, links and ports: the topology's records and the simulator's.
    pub network: u64,
    /// Routing tables (0 where routes are computed).
    pub routing: u64,
    /// Flows, from their specs to their rows in the output.
    pub flows: u64,
    /// How many flows.
    pub flow_count: u64,
    /// Queue samples.
    pub queue_samples: u64,
    /// How many queue samples, at most.
    pub sample_count: u64,
    /// A partitioned run's partitions beyond the first: each holds its own copy of the
    /// network, the routing and every flow's record (not of its TCP state).
    pub extra_partitions: u64,
}

/// Bytes per node: its records, its names and its entry in the name index.
fn node_bytes() -> u64 {
    let index_entry = size_of::<(String, NodeId)>() as u64 + 1;
    size_of::<NodeSpec>() as u64
        + size_of::<crate::sim::Node>() as u64
        // The name index at its worst load (buckets are a power of two at most 7/8 full: up to
        // 2.3 per entry).
        + 5 * index_entry / 2
        // port_start, the host or switch list, and the port counts while numbering ports.
        + 4 + 4 + 6
}

/// Bytes per port (two per link), with egress queues of `classes` classes.
fn port_bytes(classes: u8) -> u64 {
    size_of::<crate::topology::Port>() as u64
        + size_of::<crate::sim::Port>() as u64
        // Class 0 lives inside the port; the others on the heap.
        + u64::from(classes.clamp(1, 8) - 1) * crate::queue::class_queue_bytes() as u64
        // The switch model's level per port.
        + size_of::<usize>() as u64
}

/// Bytes per flow (see the [module documentation](self)).
pub fn flow_bytes() -> u64 {
    3 * size_of::<FlowSpec>() as u64
        + crate::sim::flow_state_bytes() as u64
        + 2 * size_of::<(Time, Event)>() as u64
        + FLOW_EXTRA_BYTES
}

/// How much of a list that grows by doubling can be held at once, per element: up to twice
/// its length once grown, and while it grows the old list and the new one (where the
/// allocator copies rather than remaps): three times.
const GROWTH: u64 = 3;

/// Bytes per queue sample: three times its size, as the list of samples grows by doubling.
pub fn sample_bytes() -> u64 {
    GROWTH * size_of::<QueueSample>() as u64
}

/// Bytes of the queue plot per tick: one point of 16 bytes per sample of the plotted port, and
/// two more closing each gap (only non-empty queues are sampled by default), so 1.5 points a
/// tick at most, in a list that grows by doubling.
const PLOT_BYTES_PER_TICK: u64 = GROWTH * 24;

/// Queue sampling ticks of a run of `duration` sampled every `interval` (0: none).
pub fn sample_ticks(duration: Time, interval: Time) -> u64 {
    duration.checked_div(interval).map_or(0, |t| t + 1)
}

impl MemoryEstimate {
    /// The network's and the routing's parts for a topology of `size` whose queues have at most
    /// `classes` classes; `computed`: routes are computed per packet (a built topology).
    pub fn with_topology(size: &TopologySize, classes: u8, computed: bool) -> MemoryEstimate {
        let nodes = size.nodes();
        let ports = size.links.saturating_mul(2);
        // Three copies of every name: the topology's, the index's key, the simulator's.
        let names = alloc_bytes(size.name_bytes / nodes.max(1))
            .saturating_mul(nodes)
            .saturating_mul(3);
        let network = nodes
            .saturating_mul(node_bytes())
            .saturating_add(names)
            .saturating_add(ports.saturating_mul(port_bytes(classes)))
            .saturating_add(size.links.saturating_mul(size_of::<LinkSpec>() as u64));
        let routing = if computed {
            // The port numbers 0, 1, 2, ... that runs of ports are slices of.
            2 * size.max_ports.min(crate::topology::MAX_PORTS as u64)
        } else {
            size.switches
                .saturating_mul(size.hosts)
                .saturating_mul(4)
                .saturating_add(nodes.saturating_mul(16))
        };
        MemoryEstimate {
            network,
            routing,
            ..MemoryEstimate::default()
        }
    }

    /// Sets the queue samples part: a run of `duration` sampling `ports` ports every
    /// `interval` (0: no sampling).
    pub fn set_queue_samples(&mut self, duration: Time, interval: Time, ports: u64) {
        let ticks = sample_ticks(duration, interval);
        self.sample_count = ticks.saturating_mul(ports);
        self.queue_samples = self
            .sample_count
            .saturating_mul(sample_bytes())
            .saturating_add(ticks.saturating_mul(PLOT_BYTES_PER_TICK));
    }

    /// Adds `count` flows.
    pub fn add_flows(&mut self, count: u64) {
        self.flow_count = self.flow_count.saturating_add(count);
        self.flows = self.flow_count.saturating_mul(flow_bytes());
    }

    /// The copies a partitioned run's partitions beyond the first hold.
    pub fn partitions_bytes(&self) -> u64 {
        let record = crate::sim::flow_record_bytes() as u64 + size_of::<FlowSpec>() as u64;
        self.network
            .saturating_add(self.routing)
            .saturating_add(self.flow_count.saturating_mul(record))
            .saturating_mul(self.extra_partitions)
    }

    /// Everything, [`BASE_BYTES`] included.
    pub fn total(&self) -> u64 {
        BASE_BYTES
            .saturating_add(self.network)
            .saturating_add(self.routing)
            .saturating_add(self.flows)
            .saturating_add(self.queue_samples)
            .saturating_add(self.partitions_bytes())
    }
}

impl fmt::Display for MemoryEstimate {
    /// `about 1.20 GiB (program 48.0 MiB, network 10.0 MiB, routing 0 B, 100000 flows 95.4 MiB,
    /// 2560000 queue samples 78.1 MiB)`: the parts add up to the total.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "about {} (program {}, network {}, routing {}, {} flows {}, {} queue samples {})",
            fmt_bytes(self.total()),
            fmt_bytes(BASE_BYTES),
            fmt_bytes(self.network),
            fmt_bytes(self.routing),
            self.flow_count,
            fmt_bytes(self.flows),
            self.sample_count,
            fmt_bytes(self.queue_samples)
        )?;
        if self.extra_partitions > 0 {
            write!(
                f,
                ", {} more partitions {}",
                self.extra_partitions,
                fmt_bytes(self.partitions_bytes())
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo() {
        let text = "MemTotal:       24568320 kB\nMemFree:         5000000 kB\n";
        assert_eq!(meminfo_total(text), Some(24568320 * 1024));
        assert_eq!(meminfo_total("MemFree: 1 kB\n"), None);
        assert_eq!(meminfo_total("MemTotal: lots kB\n"), None);
        assert_eq!(cgroup_value("max\n"), None);
        assert_eq!(cgroup_value("8589934592\n"), Some(8 << 30));
        assert!(default_max_memory() >= 1 << 20);
    }

    #[test]
    fn the_parts_printed_add_up_to_the_total() {
        let mut est = MemoryEstimate {
            network: 3 << 20,
            routing: 1 << 20,
            ..MemoryEstimate::default()
        };
        est.add_flows(1000);
        let text = est.to_string();
        assert!(
            text.starts_with(&format!(
                "about {} (program 48.0 MiB, network 3.00 MiB, routing 1.00 MiB, 1000 flows",
                fmt_bytes(est.total())
            )),
            "{text}"
        );
        assert_eq!(est.total(), BASE_BYTES + (4 << 20) + est.flows);
    }
}
