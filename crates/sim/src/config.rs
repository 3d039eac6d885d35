//! Plain configuration records for the engine's parts. The scenario loader
//! ([`crate::scenario`]) fills them from TOML with units; code can build them directly.
//! Every default is stated next to its field, with where it comes from.

use crate::time::{Time, MS, SEC, US};

/// Congestion control algorithm of a TCP sender.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CcAlgo {
    /// RFC 5681 slow start and congestion avoidance with RFC 6582 NewReno recovery.
    NewReno,
    /// DCTCP (RFC 8257): ECN-capable, cwnd cut in proportion to the marked fraction `alpha`,
    /// updated once per window with gain `g`.
    Dctcp {
        /// EWMA gain for alpha (RFC 8257 suggests 1/16).
        g: f64,
    },
    /// CUBIC (RFC 9438): ns-3 3.37's `TcpCubic` in the ns-3 flavour, Linux's `tcp_cubic` in
    /// the Linux flavour ([`crate::tcp::Cubic`]).
    Cubic(CubicParams),
}

/// CUBIC's settings; the defaults are ns-3 3.37's and Linux's (Linux keeps beta in 1024ths
/// and C in 1024ths too: 717/1024 and 410/1024, which these round to).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CubicParams {
    /// Multiplicative decrease factor (the window after a loss, relative), in (0, 1).
    pub beta: f64,
    /// The cubic's scaling constant C, in segments per second cubed.
    pub c: f64,
    /// HyStart (leave slow start on an ACK train or a delay increase).
    pub hystart: bool,
    /// Fast convergence (W_max lowered when a loss comes below the last one).
    pub fast_convergence: bool,
}

impl Default for CubicParams {
    fn default() -> CubicParams {
        CubicParams {
            beta: 0.7,
            c: 0.4,
            hystart: true,
            fast_convergence: true,
        }
    }
}

/// How the receiver acknowledges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayedAck {
    /// An ACK for every segment.
    Off,
    /// RFC 5681 §4.2 / RFC 1122: ACK at least every second full segment, and within `timeout`.
    On {
        /// Delayed-ACK timer (Linux: 40 ms minimum; ns-3 default 200 ms).
        timeout: Time,
    },
}

/// Which stack's behaviour a TCP endpoint follows where Linux and ns-3 3.37 differ.
///
/// The two stacks our users compare against differ in loss recovery and ECN details, and the
/// differences move flow completion times in incast and web-search workloads and RED's drop
/// and mark counts by tens of percent, so it is a choice rather than a detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TcpFlavor {
    /// As Linux (and the RFCs): a retransmission that is itself lost is detected and sent
    /// again within the same recovery (`tcp_mark_lost_retrans`), RFC 6675's rescue
    /// retransmission (NextSeg rule 4) repairs a tail loss, NextSeg rule 3 resends only holes
    /// below the highest SACK, a retransmission is never ECN-capable (RFC 3168 §6.1.5;
    /// DCTCP's are, as Linux), SACKed retransmissions leave the pipe (RFC 6675), DCTCP keeps
    /// at least two segments (`dctcp_ssthresh`) and a window reduction restarts the
    /// congestion-avoidance count (`tcp_init_cwnd_reduction`).
    #[default]
    Linux,
    /// As ns-3 3.37's `TcpSocketBase` with classic recovery: no detection of lost
    /// retransmissions and no rescue retransmission; NextSeg rule 3 resends the first unSACKed
    /// segment not yet retransmitted even above the highest SACK (`TcpTxBuffer::NextSeg`
    /// drops RFC 6675's condition 1.b); every partial ACK whose next segment has not been
    /// retransmitted yet sends one segment whatever cwnd and pipe allow (`ProcessAck` ->
    /// `DoRetransmit`: the first lost hole, else new data, else the head); a retransmitted
    /// segment counts as in flight until the cumulative ACK passes it, even once SACKed
    /// (`TcpTxBuffer::Update` keeps `m_retrans`); with ECN every data segment, retransmissions
    /// included, is ECT(0) (`AddSocketTags` marks any packet with payload); DCTCP's cut has no
    /// floor (`TcpDctcp::GetSsThresh`) and the retransmission timer runs while data waits to
    /// be sent, so a window cut below one segment is restarted by a timeout; the
    /// congestion-avoidance count is kept across window reductions (TcpLinuxReno's
    /// `m_cWndCnt`) and the ACK that ends fast recovery counts towards it (`ProcessAck` calls
    /// `IncreaseWindow` once the state is open again); DCTCP's alpha stays at 1 until the first
    /// window is acknowledged (`TcpDctcp::PktsAcked`) and its receiver does not ACK a segment
    /// at once because its CE mark changed (`CeState0to1` sends only an ACK for RCV.NXT as it
    /// was before the previous segment, and only if the last ACK was delayed); ECE counts only
    /// on an ACK that advances SND.UNA and cuts in any state but CWR, also on the first ACK
    /// after a timeout (`ReceivedAck` -> `EnterCwr`), before DCTCP's alpha sees that ACK;
    /// losses found during that reduction (CA_CWR) are resent as the SACK scoreboard marks
    /// them, without fast recovery or a second cut; the ACK that ends the timeout's loss state
    /// counts only the whole segments above its recovery point; DCTCP counts marked bytes by
    /// the sender's ECN state, one segment for any ACK that repeats SND.UNA, and ends its
    /// observation window at the next sequence to send, also on an ACK for nothing; after
    /// a retransmitted SYN or SYN-ACK the connection opens with the full
    /// initial window, not one segment (RFC 5681 §3.1, Linux); delayed ACKs count segments,
    /// not bytes (`m_delAckCount`); without SACK, recovery runs on guessed SACKs, one per
    /// duplicate ACK (`AddRenoSack`), with cwnd at ssthresh, not RFC 6582's inflation, and a
    /// head found guessed-arrived by an ACK is resent; data wholly below RCV.NXT is ACKed
    /// plainly and dropped before its ECN mark counts; DCTCP's window ends where the last
    /// segment sent ended (`m_nextTxSequence`, retransmissions included), and an ACK in
    /// CA_DISORDER reports its segments less the duplicate ACKs already reported; an RTT
    /// sample, timestamps or not, only when the oldest unacknowledged send was not resent and
    /// came after the last timeout; congestion avoidance also runs on an advancing ACK that
    /// counts no whole segment (a count left over may grow cwnd); the RTO's clock granularity
    /// is 1 ms and the RTT estimator runs in whole nanoseconds; its options are laid out as
    /// ns-3 lays them (no MSS option, no NOPs, the list padded once: see
    /// [`crate::tcp::SynOptions::wire_len`]), so SYNs are 8 bytes and SACK-carrying ACKs 4
    /// bytes shorter than Linux's. Every ns-3 comparison uses it.
    Ns3,
}

/// Parameters of one TCP endpoint. Defaults follow Linux where a real stack is meant; each
/// field says which.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TcpConfig {
    /// Maximum segment size: payload bytes per full segment. Default 1448 (1500-byte MTU less
    /// 20 IP, 20 TCP and 12 timestamp-option bytes).
    pub mss: u32,
    /// Initial congestion window in segments (RFC 6928: 10).
    pub init_cwnd: u32,
    /// Initial retransmission timeout, also the SYN/SYN-ACK timeout (RFC 6298: 1 s as Linux;
    /// 3 s as RFC 1122 and the older stacks the TCPU paper measured).
    pub init_rto: Time,
    /// Lower bound of the RTO (Linux: 200 ms; data centers often use 1-10 ms).
    pub min_rto: Time,
    /// Upper bound of the RTO (RFC 6298 allows 60 s or more; Linux 120 s).
    pub max_rto: Time,
    /// SYN (and SYN-ACK) transmissions before the connection fails (Linux tcp_syn_retries: 6).
    pub syn_retries: u32,
    /// Consecutive data timeouts before the connection fails (Linux tcp_retries2: 15).
    pub data_retries: u32,
    /// Duplicate ACKs that trigger fast retransmit (3).
    pub dupack_threshold: u32,
    /// Delayed ACK policy (default on, 40 ms as Linux's minimum).
    pub delayed_ack: DelayedAck,
    /// Receive buffer in bytes: the most the receiver advertises (default 6 MiB as Linux's
    /// tcp_rmem max).
    pub rcv_buf: u32,
    /// Use SACK (RFC 2018) and SACK-based loss recovery (RFC 6675). Default on.
    pub sack: bool,
    /// Use the timestamp option (RFC 7323) for RTT samples. Default on. It adds 12 bytes per
    /// segment, which `mss` already accounts for.
    pub timestamps: bool,
    /// Congestion control.
    pub cc: CcAlgo,
    /// Mark data packets ECN-capable (ECT(0)) and react to ECE (RFC 3168). Forced on by DCTCP.
    pub ecn: bool,
    /// Linux's behaviour (default) or ns-3 3.37's where they differ (every ns-3 comparison).
    pub flavor: TcpFlavor,
}

impl Default for TcpConfig {
    fn default() -> TcpConfig {
        TcpConfig {
            mss: 1448,
            init_cwnd: 10,
            init_rto: SEC,
            min_rto: 200 * MS,
            max_rto: 120 * SEC,
            syn_retries: 6,
            data_retries: 15,
            dupack_threshold: 3,
            delayed_ack: DelayedAck::On { timeout: 40 * MS },
            rcv_buf: 6 << 20,
            sack: true,
            timestamps: true,
            cc: CcAlgo::NewReno,
            ecn: false,
            flavor: TcpFlavor::Linux,
        }
    }
}

/// A full-duplex point-to-point link: the same rate and delay each way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkConfig {
    /// Bits per second.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Time,
    /// Bytes the link adds to every packet for serialisation beyond its layer-2 header
    /// (Ethernet: 8 preamble + 4 FCS + 12 inter-frame gap = 24; 0 on a PPP link).
    pub framing_overhead: u32,
    /// Bytes of the layer-2 header on this link: 14 for Ethernet ([`ETHERNET_HEADER`]), 2 for
    /// ns-3's point-to-point PPP header ([`PPP_HEADER`]). Packets carry an Ethernet header in
    /// their size; a link serialises `size - 14 + l2_header + framing_overhead` bytes.
    pub l2_header: u32,
}

/// Bytes of an Ethernet header (the layer-2 header packets are built with).
pub const ETHERNET_HEADER: u32 = 14;
/// Bytes of the PPP header ns-3's point-to-point links put on every IP packet.
pub const PPP_HEADER: u32 = 2;

impl LinkConfig {
    /// Bytes one packet of `size` bytes (Ethernet header included) occupies on this link.
    pub fn wire_bytes(&self, size: u32) -> u64 {
        u64::from(size.saturating_sub(ETHERNET_HEADER)) + u64::from(self.l2_header) + u64::from(self.framing_overhead)
    }

    /// The same link with ns-3's point-to-point framing: a 2-byte PPP header and nothing else.
    pub fn ppp(self) -> LinkConfig {
        LinkConfig {
            framing_overhead: 0,
            l2_header: PPP_HEADER,
            ..self
        }
    }
}

impl Default for LinkConfig {
    fn default() -> LinkConfig {
        LinkConfig {
            rate_bps: 10_000_000_000,
            delay: US,
            framing_overhead: 24,
            l2_header: ETHERNET_HEADER,
        }
    }
}

/// How a queue marks ECN-capable packets (non-ECT packets are dropped instead, as RFC 3168).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Marking {
    /// No AQM: tail drop only.
    None,
    /// DCTCP-style step marking: CE when the instantaneous queue exceeds `k_bytes` on arrival.
    Threshold {
        /// Marking threshold K in bytes.
        k_bytes: u64,
    },
    /// DCTCP-style step marking counted in packets: CE when at least `k_packets` packets are
    /// waiting on arrival (the packet being transmitted excluded), as ns-3's RED queue disc
    /// with MinTh = MaxTh and weight 1 counts.
    ThresholdPackets {
        /// Marking threshold K in packets.
        k_packets: u32,
    },
    /// RED (Floyd & Jacobson 1993) as ns-3's `RedQueueDisc` runs it: an EWMA of the queue
    /// length (bytes, or packets when `packets`) on every arrival; between the thresholds an
    /// early drop (or mark) with probability max_p scaled linearly, spread by the count of
    /// packets since the last one ("wait" variant); above `max` (above `2 max` when `gentle`,
    /// the probability rising from max_p to 1 in between) a forced drop. Early decisions mark
    /// ECN-capable packets when `ecn`; forced ones always drop (ns-3's `UseHardDrop`).
    Red {
        /// Minimum threshold (bytes, or packets when `packets`).
        min_bytes: u64,
        /// Maximum threshold (bytes, or packets when `packets`).
        max_bytes: u64,
        /// Marking probability at the maximum threshold.
        max_p: f64,
        /// EWMA weight (ns-3 default 0.002).
        weight: f64,
        /// Mark instead of dropping ECN-capable packets.
        ecn: bool,
        /// Gentle RED: the probability rises from max_p at `max` to 1 at `2 max`.
        gentle: bool,
        /// Thresholds and average are in packets, not bytes.
        packets: bool,
    },
}

/// One egress port's queues.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueConfig {
    /// Strict-priority classes (1 to 8); class 0 is served first.
    pub classes: u8,
    /// Most packets a class queue may hold (0 = no packet limit), unless
    /// `class_limit_packets` overrides it for that class.
    pub limit_packets: u32,
    /// Per-class override of `limit_packets`: `Some(n)` gives class `i` a limit of `n` packets
    /// (0 = no packet limit), `None` (the default, for every class) keeps `limit_packets`.
    /// Used, for example, by TCPU's long-flow class (Q_lflows = 50 below Q_limit = 100).
    pub class_limit_packets: [Option<u32>; 8],
    /// Most bytes a class queue may hold (0 = no byte limit).
    pub limit_bytes: u64,
    /// ECN marking / AQM, applied per class queue.
    pub marking: Marking,
}

impl Default for QueueConfig {
    fn default() -> QueueConfig {
        QueueConfig {
            classes: 1,
            limit_packets: 100,
            class_limit_packets: [None; 8],
            limit_bytes: 0,
            marking: Marking::None,
        }
    }
}

impl QueueConfig {
    /// The packet limit of class `class` (0 = none): its `class_limit_packets` override, else
    /// `limit_packets`.
    pub fn packet_limit(&self, class: u8) -> u32 {
        self.class_limit_packets
            .get(usize::from(class))
            .copied()
            .flatten()
            .unwrap_or(self.limit_packets)
    }
}

/// A switch's shared packet buffer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BufferConfig {
    /// No shared buffer: each queue is limited only by its own [`QueueConfig`] limits.
    Dedicated,
    /// A shared pool of `bytes`; each queue may take at most `static_bytes` of it.
    Static {
        /// Pool size.
        bytes: u64,
        /// Per-queue cap.
        static_bytes: u64,
    },
    /// A shared pool with Dynamic Thresholds (Choudhury & Hahne 1998): a queue may grow to
    /// `alpha x (free pool bytes)`.
    Dynamic {
        /// Pool size.
        bytes: u64,
        /// The alpha factor (Broadcom Trident/Tomahawk use 1/128 ... 8; 1 is common).
        alpha: f64,
    },
}

/// When a switch starts forwarding a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forwarding {
    /// After the whole packet has arrived (most data-center switches).
    StoreAndForward,
    /// As soon as `header_bytes` have arrived (if the egress port is free and no faster than
    /// the ingress); otherwise store-and-forward.
    CutThrough {
        /// Bytes needed to make the forwarding decision (64 covers Ethernet+IPv4+TCP).
        header_bytes: u32,
    },
}

/// What a switch hashes to choose among equal-cost next hops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ecmp {
    /// The flow: each flow keeps one path, flows between the same hosts may take different
    /// ones (what data-center switches do with their 5-tuple hash).
    #[default]
    Flow,
    /// The destination host: every packet toward a host leaves a switch by the same port, as
    /// with one route per destination (ns-3's global or static routing, D-mod-k fat-tree
    /// routing). The like-for-like comparison with ns-3 needs it on topologies with
    /// equal-cost paths ([`crate::ns3_spec`]).
    Destination,
}

/// A switch's configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwitchConfig {
    /// Egress queues of every port.
    pub queue: QueueConfig,
    /// Shared buffer.
    pub buffer: BufferConfig,
    /// Store-and-forward or cut-through.
    pub forwarding: Forwarding,
    /// Fixed pipeline latency added to every packet (ingress to egress queue).
    pub pipeline_latency: Time,
    /// What picks the port among equal-cost next hops.
    pub ecmp: Ecmp,
}

impl Default for SwitchConfig {
    fn default() -> SwitchConfig {
        SwitchConfig {
            queue: QueueConfig::default(),
            buffer: BufferConfig::Dedicated,
            forwarding: Forwarding::StoreAndForward,
            pipeline_latency: 0,
            ecmp: Ecmp::Flow,
        }
    }
}
