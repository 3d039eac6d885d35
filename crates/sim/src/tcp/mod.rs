//! A sans-IO TCP endpoint for the simulator.
//!
//! [`TcpEndpoint`] is a deterministic state machine: every call takes the current simulated
//! time and an input (an application request, a packet, a timer expiry) and appends its outputs
//! (packets to transmit, [`TcpEvent`]s for the application) to a caller-owned [`TcpOutput`].
//! It reads no clock and draws no random number; [`TcpEndpoint::next_timer`] tells the caller
//! when to call [`TcpEndpoint::on_timer`] next. Payload bytes are not carried, only sequence
//! space.
//!
//! What it implements (the RFCs are the specification):
//!
//! * connection setup and teardown (RFC 9293/793): SYN, SYN-ACK, ACK with MSS, SACK-permitted,
//!   timestamp and ECN negotiation; SYN and SYN-ACK retransmission with exponential backoff from
//!   `init_rto`; FIN after all queued data; RST;
//! * slow start and congestion avoidance (RFC 5681) with byte counting (RFC 3465, L = 2 SMSS),
//!   limited transmit (RFC 3042; with SACK governed by pipe and cwnd, RFC 6675 §5 step 3),
//!   NewReno fast retransmit / fast recovery (RFC 6582; in the ns-3 flavour, ns-3 3.37's
//!   recovery without SACK instead: a guessed SACK per duplicate ACK, cwnd at ssthresh, the
//!   pipe shrinking by the guesses);
//! * SACK (RFC 2018) and SACK-based loss recovery (RFC 6675: IsLost, NextSeg rules 1-4, pipe)
//!   with an interval-set scoreboard whose per-ACK cost is O(SACK blocks x log n), plus
//!   detection of lost retransmissions (below);
//! * RTO (RFC 6298) with timestamps (RFC 7323) or Karn's algorithm, exponential backoff,
//!   go-back-N after a timeout that skips SACKed data (the scoreboard is kept across the
//!   timeout, RFC 6675 erratum 1610, as ns-3 and Linux do) and counts only unSACKed bytes
//!   as in flight;
//! * cumulative and delayed ACKs (RFC 5681 §4.2), immediate ACKs for out-of-order and
//!   gap-filling data, a receive window of `rcv_buf` less the out-of-order bytes held (the
//!   whole `rcv_buf` in the ns-3 flavour, as ns-3 3.37), and zero-window probing;
//! * ECN (RFC 3168) and DCTCP (RFC 8257), congestion control behind [`CongestionControl`]:
//!   NewReno, DCTCP and CUBIC (RFC 9438; [`Cubic`]: ns-3 3.37's `TcpCubic` in the ns-3
//!   flavour, Linux's `tcp_cubic` otherwise).
//!
//! The SYN options travel in the [`Packet`]'s otherwise unused first SACK slot, see
//! [`SynOptions`].
//!
//! Conventions and simplifications a reader comparing with Linux or ns-3 should know:
//!
//! * the initial sequence number is a hash of the flow's ids (deterministic, spread over the
//!   32-bit space), or chosen with [`TcpEndpoint::connect_with_iss`];
//! * `syn_retries` and `data_retries` count retransmissions, as Linux's `tcp_syn_retries` and
//!   `tcp_retries2`: with 2, SYNs go out at 0, 1 s and 3 s and the connection fails at 7 s;
//! * duplicate ACKs are recognised by acknowledgment number alone (the window is not compared,
//!   as in ns-3, since the advertised window shrinks as out-of-order data is held); with SACK
//!   an ACK counts when it carries new SACK information, even if it also advances SND.UNA
//!   (RFC 6675 §5, as ns-3);
//! * a retransmission is itself taken as lost, and sent again within the same recovery, once
//!   more than (DupThresh - 1) * SMSS bytes first sent after it are SACKed (Linux's
//!   `tcp_mark_lost_retrans`; RFC 6675 and ns-3 leave that to the RTO). A lost retransmission
//!   with nothing SACKed after it, or without SACK, is still repaired by the RTO. With
//!   [`TcpFlavor::Ns3`](crate::config::TcpFlavor) (ns-3 3.37's behaviour, used by every
//!   ns-3 comparison) neither this nor RFC 6675's rescue retransmission (NextSeg rule 4) is
//!   done; instead, as ns-3, NextSeg rule 3 may resend unSACKed data above the highest SACK,
//!   a partial ACK sends one segment beyond cwnd when the next one was not retransmitted,
//!   SACKed retransmissions stay in the pipe until cumulatively acknowledged, with ECN
//!   retransmissions are ECN-capable too, and DCTCP may cut below one segment (see
//!   [`TcpFlavor`](crate::config::TcpFlavor) for the list);
//! * the ACK that completes the handshake is a segment of its own, sent before any data (as
//!   Linux and ns-3);
//! * slow start stops at ssthresh, the rest of the acknowledged bytes counting for congestion
//!   avoidance, which adds one segment per window counted in whole segments, and cwnd does
//!   not grow while an ECN reduction's window is acknowledged (Linux's and ns-3's CWR state);
//! * ssthresh is half the congestion window on a loss or timeout (as Linux and ns-3's
//!   TcpLinuxReno; DCTCP: cwnd x (1 - alpha/2), as Linux and ns-3), not half the flight;
//!   an ACK that carries new SACK information does not grow cwnd; the first data segment
//!   after the handshake is acknowledged at once; during SACK recovery only the first
//!   partial ACK restarts the retransmission timer (as ns-3);
//! * windows are exact byte counts (the window-scale shift is advertised but not applied);
//! * `Closed` is reported on entering TIME-WAIT (or when LAST-ACK is acknowledged); there is no
//!   2 MSL timer, and an endpoint kept around keeps acknowledging retransmitted FINs;
//! * no Nagle algorithm (as TCP_NODELAY), no quick-ACK mode, no D-SACK, RACK/TLP, F-RTO, PRR,
//!   PAWS, keep-alive, urgent data, simultaneous open or RFC 5961 challenge ACKs.

mod cc;
mod cubic;
mod endpoint;
mod intervals;
mod items;
mod seq;
#[cfg(test)]
mod tests;

pub use cc::{new_congestion_control, AckInfo, CongestionControl, Dctcp, NewReno};
pub use cubic::Cubic;
pub use endpoint::{TcpEndpoint, CLOCK_GRANULARITY};

use crate::config::TcpFlavor;
use crate::packet::{FlowId, NodeId, Packet};
use crate::time::Time;

/// The most bytes one direction of a connection carries: 2^62 (4 EiB).
///
/// Inside the endpoint a sequence number is a `u64` offset from the initial sequence number
/// (data byte `i` at offset `i`, the FIN one past the last byte), and sums of an offset and a
/// window or a segment length must not overflow. Capping the stream at 2^62 keeps every offset
/// below 2^62 + 2 and every such sum far below 2^64. Workloads refuse larger flows;
/// [`TcpEndpoint::send`] ignores bytes beyond the cap.
pub const MAX_STREAM_BYTES: u64 = 1 << 62;

/// Who a connection is between, as seen from one end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FlowIds {
    /// The flow this connection belongs to (copied into every packet).
    pub flow: FlowId,
    /// This host.
    pub local: NodeId,
    /// The peer host.
    pub remote: NodeId,
    /// This end's port.
    pub local_port: u16,
    /// The peer's port.
    pub remote_port: u16,
}

impl FlowIds {
    /// The same connection seen from the other end.
    pub fn reversed(&self) -> FlowIds {
        FlowIds {
            flow: self.flow,
            local: self.remote,
            remote: self.local,
            local_port: self.remote_port,
            remote_port: self.local_port,
        }
    }
}

/// Why a connection failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailReason {
    /// The SYN (or SYN-ACK) was retransmitted `syn_retries` times without an answer.
    SynRetriesExhausted,
    /// `data_retries` consecutive retransmission timeouts passed without progress.
    DataRetriesExhausted,
    /// The peer reset the connection.
    Reset,
}

/// Something the application should know about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpEvent {
    /// The three-way handshake completed.
    Connected,
    /// More in-order bytes were delivered; `total` counts all delivered so far.
    Delivered {
        /// In-order bytes delivered to the application since the connection opened.
        total: u64,
    },
    /// Every byte the application wrote so far has been acknowledged.
    SendComplete,
    /// The peer's FIN arrived (after all its data): it will send nothing more.
    PeerClosed,
    /// Both directions are closed: our FIN was acknowledged and the peer's FIN received.
    Closed,
    /// The connection failed; the endpoint is inert from now on.
    Failed(FailReason),
}

/// One input of a [`TcpEndpoint`] through the shared core contract
/// ([`tandem_time::sansio::SansIo`]); each is one of the endpoint's own calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TcpInput<'a> {
    /// A packet for this connection arrived ([`TcpEndpoint::on_packet`]).
    Segment(&'a Packet),
    /// The application appends bytes to the send stream ([`TcpEndpoint::send`]).
    Send(u64),
    /// The application closes its sending direction ([`TcpEndpoint::close`]).
    Close,
    /// Time passed: every timer due runs ([`TcpEndpoint::on_timer`]).
    Timeout,
}

/// What one call produced. The caller drains or clears it between calls; endpoints only append.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TcpOutput {
    /// Packets to transmit, in order.
    pub packets: Vec<Packet>,
    /// Events for the application, in order.
    pub events: Vec<TcpEvent>,
}

impl TcpOutput {
    /// An empty output.
    pub fn new() -> TcpOutput {
        TcpOutput::default()
    }
    /// Empties both lists, keeping their memory.
    pub fn clear(&mut self) {
        self.packets.clear();
        self.events.clear();
    }
}

/// Counters of one endpoint (both its sending and its receiving half).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TcpStats {
    /// Payload bytes transmitted, retransmissions included.
    pub bytes_sent: u64,
    /// Payload bytes retransmitted (any cause).
    pub bytes_retransmitted: u64,
    /// Segments transmitted of any kind (SYN, data, pure ACK, FIN, RST, probes).
    pub segments_sent: u64,
    /// Segments carrying payload.
    pub data_segments_sent: u64,
    /// Pure ACKs: no payload and no SYN, FIN or RST.
    pub pure_acks_sent: u64,
    /// Data (or FIN) segments retransmitted, any cause.
    pub retransmits: u64,
    /// Retransmissions that started a fast recovery (one per recovery episode).
    pub fast_retransmits: u64,
    /// Fast recovery episodes (NewReno or SACK).
    pub fast_recoveries: u64,
    /// Retransmission timeouts while data was outstanding.
    pub data_timeouts: u64,
    /// SYN or SYN-ACK retransmission timeouts.
    pub syn_timeouts: u64,
    /// Duplicate ACKs received.
    pub dupacks_received: u64,
    /// Data segments that arrived above a hole.
    pub out_of_order_arrivals: u64,
    /// Data segments whose bytes had all arrived before.
    pub duplicate_arrivals: u64,
    /// In-order payload bytes delivered to the application.
    pub bytes_delivered: u64,
    /// Packets received with the CE codepoint.
    pub ecn_marks_received: u64,
    /// ACKs received with ECE (when ECN is in use).
    pub ece_received: u64,
    /// cwnd reductions in response to ECE.
    pub ecn_reductions: u64,
    /// DCTCP's alpha (1.0 at start; stays 0 for other algorithms).
    pub dctcp_alpha: f64,
    /// RTT samples taken.
    pub rtt_samples: u64,
    /// Zero-window probes sent.
    pub window_probes: u64,
    /// When the first SYN was sent (active open) or received (passive open).
    pub syn_sent_at: Option<Time>,
    /// When the handshake completed.
    pub established_at: Option<Time>,
    /// When every byte the application wrote was first acknowledged in full.
    pub send_complete_at: Option<Time>,
    /// When the connection closed in both directions.
    pub closed_at: Option<Time>,
}

impl TcpStats {
    /// Adds `other`'s counts to these (times, DCTCP's alpha and `bytes_delivered`, which is
    /// the new connection's own stream position, stay as they are): a connection that takes
    /// another's place keeps what the first one counted.
    pub fn add_counts(&mut self, other: &TcpStats) {
        self.bytes_sent += other.bytes_sent;
        self.bytes_retransmitted += other.bytes_retransmitted;
        self.segments_sent += other.segments_sent;
        self.data_segments_sent += other.data_segments_sent;
        self.pure_acks_sent += other.pure_acks_sent;
        self.retransmits += other.retransmits;
        self.fast_retransmits += other.fast_retransmits;
        self.fast_recoveries += other.fast_recoveries;
        self.data_timeouts += other.data_timeouts;
        self.syn_timeouts += other.syn_timeouts;
        self.dupacks_received += other.dupacks_received;
        self.out_of_order_arrivals += other.out_of_order_arrivals;
        self.duplicate_arrivals += other.duplicate_arrivals;
        self.ecn_marks_received += other.ecn_marks_received;
        self.ece_received += other.ece_received;
        self.ecn_reductions += other.ecn_reductions;
        self.rtt_samples += other.rtt_samples;
        self.window_probes += other.window_probes;
    }
}

/// The options of a SYN or SYN-ACK.
///
/// A [`Packet`] has no option fields, so a SYN carries these in its first SACK slot, which a
/// SYN never uses otherwise (`sack_len` stays 0, so [`Packet::sack_blocks`] is empty):
/// `sack[0].0` is the MSS, `sack[0].1` holds bit 0 = SACK-permitted, bit 1 = timestamps,
/// bit 2 = window scale present and bits 8..16 = the window-scale shift. A pcap writer can
/// rebuild the real options from it with [`SynOptions::from_packet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynOptions {
    /// Maximum segment size offered.
    pub mss: u32,
    /// SACK-permitted option present.
    pub sack_permitted: bool,
    /// Timestamps option present.
    pub timestamps: bool,
    /// Window-scale shift offered, if any.
    pub window_scale: Option<u8>,
}

impl SynOptions {
    /// Decodes the options of a SYN or SYN-ACK; `None` when the packet carries none (an MSS of
    /// 0), in which case RFC 9293's default MSS of 536 applies.
    pub fn from_packet(p: &Packet) -> Option<SynOptions> {
        let (mss, bits) = p.sack[0];
        if mss == 0 {
            return None;
        }
        Some(SynOptions {
            mss,
            sack_permitted: bits & 1 != 0,
            timestamps: bits & 2 != 0,
            window_scale: (bits & 4 != 0).then_some(((bits >> 8) & 0xff) as u8),
        })
    }

    /// Stores the options in a SYN or SYN-ACK.
    pub fn write(&self, p: &mut Packet) {
        let mut bits = u32::from(self.sack_permitted) | (u32::from(self.timestamps) << 1);
        if let Some(ws) = self.window_scale {
            bits |= 4 | (u32::from(ws) << 8);
        }
        p.sack[0] = (self.mss, bits);
        p.sack_len = 0;
    }

    /// Bytes of TCP options these take on the wire in a stack of this flavor.
    ///
    /// Linux's layout (ours): MSS 4, window scale 3 + NOP, SACK-permitted 2 + 2 NOPs,
    /// timestamps 10 + 2 NOPs (at most 24, a multiple of 4). ns-3 3.37 sends no MSS option
    /// (both ends use their `SegmentSize`) and packs the others without NOPs, padding only the
    /// end to a 32-bit word (`TcpHeader::CalculateHeaderLength`): window scale 3,
    /// SACK-permitted 2 and timestamps 10 make 15, so 16; measured in a pcap of ns-3 3.37
    /// (a SYN and a SYN-ACK of 56 IP bytes).
    pub fn wire_len(&self, flavor: TcpFlavor) -> u32 {
        match flavor {
            TcpFlavor::Linux => {
                4 + if self.window_scale.is_some() { 4 } else { 0 }
                    + if self.sack_permitted { 4 } else { 0 }
                    + if self.timestamps { 12 } else { 0 }
            }
            TcpFlavor::Ns3 => {
                let raw: u32 = if self.window_scale.is_some() { 3 } else { 0 }
                    + if self.sack_permitted { 2 } else { 0 }
                    + if self.timestamps { 10 } else { 0 };
                raw.next_multiple_of(4)
            }
        }
    }
}
