//! What the thesis experiments ask of a run and what they get back: the network's parameters,
//! the flows and their applications, and the measurements. [`super::kernel::run`] carries them
//! out on the simulator's kernel.

use crate::timing::ForwardingMode;
use tandem_sim::config::TcpConfig;
use tandem_sim::time::MS;

/// An Ethernet switch's parameters (store-and-forward, one FIFO an output port).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchParams {
    /// Bytes each output queue holds (128 KiB by default).
    pub queue_bytes: usize,
    /// Processing latency after the last bit is in, before the frame can be queued.
    pub latency_ps: u64,
}

/// Network-wide parameters.
#[derive(Debug, Clone)]
pub struct NetParams {
    /// Link rate (every link), bits per second.
    pub rate_bps: u64,
    /// Propagation delay of every link.
    pub prop_ps: u64,
    /// How Axons forward (cut-through, or store-and-forward through the same device).
    pub axon_mode: ForwardingMode,
    /// Bytes per input buffer of an Axon output port.
    pub axon_buffer_bytes: usize,
    /// Ethernet switch parameters.
    pub switch: SwitchParams,
    /// TCP parameters of every host.
    pub tcp: TcpConfig,
    /// The run's seed (UDP sources' gaps).
    pub seed: u64,
}

impl NetParams {
    /// 1 GbE with 5 ns links (1 m of cable), cut-through Axons with 32 KiB buffers, switches with
    /// 128 KiB queues and the given latency, Linux-like TCP with a 10 ms minimum RTO.
    pub fn gbe(switch_latency_ps: u64) -> NetParams {
        NetParams {
            rate_bps: 1_000_000_000,
            prop_ps: 5_000,
            axon_mode: ForwardingMode::CutThrough,
            axon_buffer_bytes: 32 * 1024,
            switch: SwitchParams {
                queue_bytes: 128 * 1024,
                latency_ps: switch_latency_ps,
            },
            tcp: TcpConfig {
                min_rto: 10 * MS,
                ..TcpConfig::default()
            },
            seed: 1,
        }
    }
}

/// What a flow does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum App {
    /// UDP frames of `frame_len` bytes, as fast as the NIC sends (`rate_bps: None`) or at a
    /// mean rate counted in line occupancy (frame, FCS, preamble and gap), the gaps between
    /// frames drawn uniformly from 0.5 to 1.5 times the mean (from the seed), so that periodic
    /// sources do not lock in phase.
    Udp {
        /// Frame length without FCS.
        frame_len: usize,
        /// Rate, or `None` for saturating.
        rate_bps: Option<u64>,
    },
    /// A TCP connection sending without end.
    TcpBulk,
    /// netperf TCP_RR: a request of `request` bytes, the reply of `response` bytes, repeat.
    TcpRr {
        /// Request bytes.
        request: u64,
        /// Response bytes.
        response: u64,
    },
}

/// A flow between two hosts (node indices of the model's [`super::topology::Topology`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flow {
    /// Sending (client) host node.
    pub src: usize,
    /// Receiving (server) host node.
    pub dst: usize,
    /// What it does.
    pub app: App,
}

/// One flow's measurements, after the warm-up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowResult {
    /// Application bytes delivered.
    pub bytes: u64,
    /// Application goodput, Mb/s.
    pub mbps: f64,
    /// UDP: mean one-way latency, first byte out of the sender's NIC to first byte in at the
    /// receiver, ps (0 when nothing arrived).
    pub latency_mean_ps: f64,
    /// TCP_RR: mean transaction time (request sent to whole response in), ps (0 when none).
    pub rtt_mean_ps: f64,
}

/// What a run measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Per flow, in the order given.
    pub flows: Vec<FlowResult>,
    /// Frames the Axons dropped.
    pub axon_drops: u64,
    /// PAUSE frames the Axons sent.
    pub pauses: u64,
    /// Frames switches dropped on full queues.
    pub switch_drops: u64,
    /// TCP retransmissions, all flows.
    pub retransmits: u64,
    /// Events processed.
    pub events: u64,
}
