//! The TCP endpoint state machine. See the module documentation of [`crate::tcp`].

use super::cc::{new_congestion_control, AckInfo, CongestionControl};
use super::intervals::IntervalSet;
use super::items::ItemStarts;
use super::seq::{initial_seq, to_wire, unwrap_seq};
use super::{FailReason, FlowIds, SynOptions, TcpEvent, TcpInput, TcpOutput, TcpStats};
use crate::config::{CcAlgo, DelayedAck, TcpConfig, TcpFlavor};
use crate::packet::{Packet, Proto, L2_L3_HEADER, MAX_SACK, TCP_HEADER};
use crate::time::{Time, MS, NS, SEC, US};
use std::collections::VecDeque;
use tandem_wire::ipv4::Ecn;
use tandem_wire::tcp::Flags;

/// The clock granularity G of RFC 6298 §2 (RTO = SRTT + max(G, 4 RTTVAR)).
pub const CLOCK_GRANULARITY: Time = US;

/// [`TcpFlavor::Ns3`]'s G: ns-3 3.37's `TcpSocketBase` attribute `ClockGranularity`, 1 ms by
/// default (it is also the LAST_ACK wait's floor).
pub const NS3_CLOCK_GRANULARITY: Time = MS;

/// RFC 9293 §3.7.1 default MSS when the SYN carries no MSS option.
const DEFAULT_MSS: u32 = 536;
/// RFC 6298 §5.7: the RTO once data flows, if the SYN timed out and no RTT was measured.
const FALLBACK_RTO: Time = 3 * SEC;
/// Largest window a SYN or SYN-ACK can advertise (never scaled, RFC 7323 §2.2).
const SYN_WINDOW: u32 = 65_535;
/// Bytes of the timestamps option itself (kind, length, two 4-byte values).
const TS_OPTION: u32 = 10;
/// Most option bytes a TCP header holds.
const MAX_OPTIONS: u32 = 40;
/// SACK blocks the Linux-flavoured receiver remembers as recently reported (RFC 2018 §4): three,
/// the most a segment with timestamps carries. Linux keeps four (`TCP_NUM_SACKS`), so when its
/// first blocks merge a fourth it still remembers can come back into the list where ours falls
/// back to the lowest ranges held: a known difference (docs/sim/validation.md, "Open gaps").
const SACK_RECENT: usize = 3;
/// Bytes the validation's ns-3 program writes into a socket at a time (`SendSize` of its
/// `BulkSendApplication`, `bench/ns3/scenario.cc`), which the [`TcpFlavor::Ns3`] sender's
/// buffer follows.
const NS3_APP_WRITE: u64 = 65_536;

/// The initial congestion window in bytes: `init_cwnd` segments of the configured MSS (what a
/// connection starts with, and what ns-3 puts back on a segment with SYN).
fn initial_cwnd(cfg: &TcpConfig) -> u64 {
    u64::from(cfg.mss.max(1)) * u64::from(cfg.init_cwnd.max(1))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Active open: SYN sent.
    SynSent,
    /// Passive open: SYN received, SYN-ACK sent.
    SynRcvd,
    /// Synchronized (ESTABLISHED and the closing states).
    Open,
    /// Failed or reset: inert.
    Dead,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recovery {
    None,
    /// RFC 6582 NewReno fast recovery.
    NewReno,
    /// RFC 6675 SACK-based loss recovery.
    Sack,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SegKind {
    /// NextSeg rule 1 (a lost hole) or 3 (an unSACKed hole not yet retransmitted), or the
    /// head resent by ns-3's partial-ACK retransmission.
    Hole { skipped_to: u64 },
    /// Rule 2: new data.
    New,
    /// Rule 4: the rescue retransmission.
    Rescue,
}

/// One end of a TCP connection. See the [module documentation](crate::tcp).
#[derive(Debug)]
pub struct TcpEndpoint {
    cfg: TcpConfig,
    ids: FlowIds,
    phase: Phase,

    // ---- negotiated ----
    /// Effective MSS: min of ours and the peer's.
    mss: u64,
    sack_ok: bool,
    ts_ok: bool,
    ecn_ok: bool,
    /// We asked for ECN (cfg.ecn or DCTCP).
    ecn_wanted: bool,
    dctcp: bool,

    // ---- send side (offsets from iss) ----
    iss: u32,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// Bytes the application has written.
    app_total: u64,
    /// [`TcpFlavor::Ns3`]: SND.UNA when the application last wrote into the send buffer.
    /// ns-3's application writes when the socket tells it there is room (`NotifySend`), which
    /// `NewAck` does: not on an ACK that leaves the sender in CA_DISORDER, nor in
    /// `DoRetransmit` before `NewAck`.
    ns3_app_una: u64,
    /// [`TcpFlavor::Ns3`] with SACK: the start of the item ns-3's `m_highestSack` points at,
    /// where its loss marking (`UpdateLostCount`) starts counting SACKed items downwards; 0
    /// when it points at none (data offsets start at 1).
    ns3_high_sack: u64,
    fin_queued: bool,
    /// The FIN first went out on the segment that carried the last data byte: a SACK of that
    /// byte shows the FIN arrived too (a FIN itself is never SACKed).
    fin_with_data: bool,
    snd_wnd: u64,
    max_snd_wnd: u64,
    snd_wl1: u64,
    snd_wl2: u64,
    cc: Box<dyn CongestionControl>,

    // ---- loss recovery ----
    dupacks: u32,
    /// [`TcpFlavor::Ns3`] without SACK: segments after the head that ns-3 3.37 counts as
    /// arrived, one for each duplicate ACK (`TcpTxBuffer::AddRenoSack`), so that its SACK
    /// machinery also serves a connection without SACK.
    reno_sacked: u16,
    /// [`TcpFlavor::Ns3`] without SACK: the head segment is marked lost (`MarkHeadAsLost`).
    reno_head_lost: bool,
    /// ... and has gone again since.
    reno_head_resent: bool,
    /// [`TcpFlavor::Ns3`]: ns-3 takes an RTT sample (timestamps or not) only when the oldest
    /// unacknowledged send in its history (`m_history`) is not a retransmission, and empties
    /// that history at a timeout: the end of the highest retransmission, or SND.MAX at the
    /// last timeout, whichever is higher ([`TcpEndpoint::ns3_history_retx`]).
    karn_until: u64,
    /// [`TcpFlavor::Ns3`]: SND.MAX at the last timeout (0 before any). ns-3's history then
    /// holds only what is sent as new data after it (a retransmission finds no entry to mark),
    /// so its oldest entry is the first segment from here, and an ACK that covers that segment
    /// gives a sample however far below this SND.UNA was.
    ns3_rto_mark: u64,
    /// [`TcpFlavor::Ns3`]: ns-3's `m_nextTxSequence` as a distance below SND.MAX: the end of
    /// the last segment `SendPendingData` sent, retransmissions included (DCTCP's observation
    /// window ends there).
    ns3_next_back: u32,
    recovery: Recovery,
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint (exclusive end).
    recover: u64,
    first_partial_seen: bool,
    /// [`TcpFlavor::Ns3`]: this SACK recovery repairs losses found during an ECN reduction
    /// (ns-3's CA_CWR, which never enters fast recovery): no cut, rules 1 and 2 of NextSeg only,
    /// no partial-ACK retransmission, over when the reduction's window is acknowledged.
    cwr_repair: bool,
    /// [`TcpFlavor::Ns3`]: ns-3's CA_LOSS, from a timeout until SND.UNA reaches `recover` (or
    /// an ECN reduction starts).
    in_loss: bool,
    /// [`TcpFlavor::Ns3`]: acknowledged bytes short of a whole segment, not yet handed to the
    /// congestion control (`m_bytesAckedNotProcessed`).
    acked_rem: u32,
    scoreboard: IntervalSet,
    /// [`TcpFlavor::Ns3`]: where each item of ns-3's send buffer (`TcpTxBuffer`) starts, from
    /// SND.UNA to the highest data byte sent. A segment of new data is one item; a
    /// retransmission carves its range into one item, merging or splitting what was there; a
    /// SACK block marks only the items it covers whole, and a retransmission takes a second
    /// item along only if it is neither SACKed nor of another loss state. `None` in the
    /// other flavour (and boxed: the like-for-like flavour's alone, off the endpoint's size).
    items: Option<Box<ItemStarts>>,
    /// RFC 6675 HighRxt (exclusive end of the highest retransmission).
    high_rxt: u64,
    /// SACKed bytes in [snd_una, high_rxt).
    sacked_below_rxt: u64,
    /// [`TcpFlavor::Ns3`] only: retransmitted ranges SACKed since, above SND.UNA. ns-3 3.37
    /// keeps a retransmitted segment's `m_retrans` flag when it is SACKed, so its
    /// `BytesInFlight` goes on counting it until the cumulative ACK passes it.
    rxt_sacked: IntervalSet,
    rescue_rxt: Option<u64>,
    /// Every unSACKed byte below this is lost (RFC 6675 IsLost).
    lost_boundary: u64,
    /// SACKed bytes at or above `lost_boundary`.
    sacked_above_lb: u64,
    /// RFC 6675 pipe, valid during SACK recovery.
    pipe: u64,
    /// Retransmissions of this SACK recovery not yet known to have arrived, in the order they
    /// were sent: `(start, end, snd_max when sent)`. See [`TcpEndpoint::detect_lost_rxt`].
    rxt_sent: VecDeque<(u64, u64, u64)>,
    /// Retransmissions found lost, to be sent again before anything NextSeg offers.
    rxt_lost: VecDeque<(u64, u64)>,

    // ---- ECN, sender ----
    /// No ECE reaction until SND.UNA passes this (once per window).
    ecn_high: u64,
    /// An ECE reduction's window (RFC 3168 CWR) is still being acknowledged: cwnd does not
    /// grow until SND.UNA passes `ecn_high` (Linux's and ns-3's CWR state).
    in_cwr: bool,
    /// The next new data segment carries CWR.
    cwr_pending: bool,
    /// [`TcpFlavor::Ns3`]: offset of the last segment sent with CWR (`m_ecnCWRSeq`).
    cwr_seq: u64,
    /// [`TcpFlavor::Ns3`]: ns-3's `ECN_ECE_RCVD` (an ACK that advanced SND.UNA carried ECE, and
    /// neither an ACK without ECE nor a CWR segment has followed); DCTCP counts the bytes of
    /// every ACK that arrives in this state as marked.
    ece_rcvd: bool,

    // ---- RTT / RTO ----
    srtt: Option<Time>,
    rttvar: Time,
    rto_base: Time,
    backoff: u32,
    consecutive_timeouts: u32,
    /// Karn timing: (end offset of the timed segment, when it was sent).
    timed: Option<(u64, Time)>,
    /// [`TcpFlavor::Ns3`] without timestamps: ns-3's RTT history (`m_history`), the end and
    /// send time of each new data segment not yet acknowledged, emptied at a timeout. Every
    /// ACK that covers the oldest samples the time since its send (`EstimateRtt`), where
    /// RFC 6298 times one segment at a time (`timed`, kept for the SYN here).
    ns3_rtt_history: VecDeque<(u64, Time)>,
    syn_retx: u32,

    // ---- timers ----
    rto_at: Option<Time>,
    delack_at: Option<Time>,
    persist_at: Option<Time>,
    /// [`TcpFlavor::Ns3`]: the data waiting at the handshake's end goes out 1 ns after it
    /// ([`TcpEndpoint::deferred_send_at`]). ns-3's application writes it as the connection
    /// succeeds, and `TcpSocketBase::Send` schedules `SendPendingData` one time step later:
    /// the segments still leave behind the handshake's ACK, but the retransmission timer
    /// starts 1 ns later.
    send_deferred: bool,
    /// [`TcpFlavor::Ns3`] receiver that closed with its peer: when its FIN goes again on the
    /// timer ns-3's `SendEmptyPacket` arms for a FIN (`m_retxEvent`, after the current RTO
    /// without backoff, armed again each time it fires), beside the LAST_ACK timer; 0: none.
    fin_rxt_at: Time,
    persist_backoff: u32,

    // ---- receive side (offsets from irs) ----
    irs: u32,
    rcv_nxt: u64,
    ooo: IntervalSet,
    /// Points inside recently reported SACK blocks, most recent first (RFC 2018 §4).
    sack_recent: [u64; SACK_RECENT],
    /// [`TcpFlavor::Ns3`] receiver: ns-3 3.37's SACK list (`TcpRxBuffer::m_sackList`), most
    /// recent first, at most four blocks; see [`TcpEndpoint::ns3_sack_arrival`].
    ns3_sack: [(u64, u64); 4],
    ns3_sack_len: usize,
    sack_recent_len: usize,
    peer_fin_at: Option<u64>,
    peer_fin: bool,
    /// Highest right edge advertised.
    rcv_adv: u64,
    /// RCV.NXT carried by the last ACK sent (RFC 7323 Last.ACK.sent).
    last_ack_sent: u64,
    ts_recent: Time,
    /// In-order bytes received since the last ACK (delayed ACK); in the ns-3 flavour one MSS
    /// for each segment, as ns-3 counts segments.
    delack_bytes: u64,
    ack_now: bool,
    /// RFC 3168 receiver: set ECE until CWR arrives.
    ece_pending: bool,
    /// [`TcpFlavor::Ns3`] RFC 3168 receiver: a CE mark came that no ACK has echoed yet (ns-3's
    /// `ECN_CE_RCVD`); a CWR does not end the echo then.
    ce_unechoed: bool,
    /// [`TcpFlavor::Ns3`]: the next pure ACK acknowledges the peer's FIN, which ns-3 3.37 sends
    /// as a plain ACK (`DoPeerClose`, `ProcessWait`: `SendEmptyPacket(ACK)`), without the ECE
    /// its ECN state would put on an ACK of data.
    ns3_plain_ack: bool,
    /// RFC 8257 receiver: CE state of the last data packet.
    ce_state: bool,
    /// [`TcpFlavor::Ns3`] DCTCP receiver (`TcpDctcp`): RCV.NXT as it was before the last
    /// ECN-capable data segment (`m_priorRcvNxt`; [`u64::MAX`] until the first), which the
    /// ACK sent on a change of CE state acknowledges.
    prior_rcv_nxt: u64,
    /// [`TcpFlavor::Ns3`] DCTCP receiver: the last ACK decision was to delay
    /// (`m_delayedAckReserved`: set when a segment waits for the delayed ACK or the timer
    /// fires, cleared when an ACK goes out at once).
    delack_reserved: bool,
    /// [`TcpFlavor::Ns3`] receiver: sequence offset of the last segment whose CE mark counted
    /// (`m_ecnCESeq`; 0 until the first, below every data offset); a CE mark on a segment at or
    /// below it counts as no CE.
    ce_seq: u64,

    // ---- bookkeeping ----
    complete_reported: u64,
    closed_reported: bool,
    /// The application will send nothing and closes as soon as the peer does (see
    /// [`TcpEndpoint::close_on_peer_close`]).
    close_on_peer_close: bool,
    /// Opened passively ([`TcpEndpoint::accept`]): a listening socket stands behind it once
    /// it is gone ([`TcpEndpoint::on_packet_dead`]).
    passive: bool,
    stats: TcpStats,
}

impl TcpEndpoint {
    fn new(cfg: TcpConfig, ids: FlowIds, phase: Phase, iss: u32) -> TcpEndpoint {
        let mss = u64::from(cfg.mss.max(1));
        let dctcp = matches!(cfg.cc, CcAlgo::Dctcp { .. });
        let init = initial_cwnd(&cfg);
        let cc = new_congestion_control(&cfg, mss, init);
        let stats = TcpStats {
            dctcp_alpha: cc.alpha().unwrap_or(0.0),
            ..TcpStats::default()
        };
        TcpEndpoint {
            cfg,
            ids,
            phase,
            mss,
            sack_ok: false,
            ts_ok: false,
            ecn_ok: false,
            ecn_wanted: cfg.ecn || dctcp,
            dctcp,
            iss,
            snd_una: 0,
            snd_nxt: 1,
            snd_max: 1,
            app_total: 0,
            ns3_app_una: 0,
            ns3_high_sack: 0,
            fin_queued: false,
            fin_with_data: false,
            snd_wnd: 0,
            max_snd_wnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            cc,
            dupacks: 0,
            reno_sacked: 0,
            reno_head_lost: false,
            reno_head_resent: false,
            ns3_next_back: 0,
            karn_until: 0,
            ns3_rto_mark: 0,
            recovery: Recovery::None,
            recover: 0,
            first_partial_seen: false,
            cwr_repair: false,
            in_loss: false,
            acked_rem: 0,
            scoreboard: IntervalSet::new(),
            items: (cfg.flavor == TcpFlavor::Ns3).then(Box::default),
            high_rxt: 0,
            sacked_below_rxt: 0,
            rxt_sacked: IntervalSet::new(),
            rescue_rxt: None,
            lost_boundary: 0,
            sacked_above_lb: 0,
            pipe: 0,
            rxt_sent: VecDeque::new(),
            rxt_lost: VecDeque::new(),
            ecn_high: 0,
            in_cwr: false,
            cwr_pending: false,
            cwr_seq: 0,
            ece_rcvd: false,
            srtt: None,
            rttvar: 0,
            rto_base: cfg.init_rto.max(cfg.min_rto).min(cfg.max_rto),
            backoff: 0,
            consecutive_timeouts: 0,
            timed: None,
            ns3_rtt_history: VecDeque::new(),
            syn_retx: 0,
            rto_at: None,
            delack_at: None,
            persist_at: None,
            send_deferred: false,
            fin_rxt_at: 0,
            persist_backoff: 0,
            irs: 0,
            rcv_nxt: 0,
            ooo: IntervalSet::new(),
            sack_recent: [0; SACK_RECENT],
            ns3_sack: [(0, 0); 4],
            ns3_sack_len: 0,
            sack_recent_len: 0,
            peer_fin_at: None,
            peer_fin: false,
            rcv_adv: 0,
            last_ack_sent: 0,
            ts_recent: 0,
            delack_bytes: 0,
            ack_now: false,
            ece_pending: false,
            ce_unechoed: false,
            ns3_plain_ack: false,
            ce_state: false,
            prior_rcv_nxt: u64::MAX,
            delack_reserved: false,
            ce_seq: 0,
            complete_reported: 0,
            closed_reported: false,
            close_on_peer_close: false,
            passive: phase == Phase::SynRcvd,
            stats,
        }
    }

    /// Active open: sends a SYN and arms the SYN timer (`cfg.init_rto`).
    pub fn connect(cfg: TcpConfig, ids: FlowIds, now: Time, out: &mut TcpOutput) -> TcpEndpoint {
        let iss = initial_seq(ids.flow.0, ids.local.0, ids.remote.0, ids.local_port, ids.remote_port);
        TcpEndpoint::connect_with_iss(cfg, ids, iss, now, out)
    }

    /// [`TcpEndpoint::connect`] with a chosen initial sequence number.
    pub fn connect_with_iss(cfg: TcpConfig, ids: FlowIds, iss: u32, now: Time, out: &mut TcpOutput) -> TcpEndpoint {
        let mut ep = TcpEndpoint::new(cfg, ids, Phase::SynSent, iss);
        ep.stats.syn_sent_at = Some(now);
        ep.timed = Some((1, now));
        ep.send_syn(now, out);
        ep.rto_at = Some(now.saturating_add(ep.syn_rto()));
        ep
    }

    /// Passive open on a received SYN: sends the SYN-ACK and arms its timer. A packet that is
    /// not a SYN is still treated as one (the caller decides what to accept).
    pub fn accept(cfg: TcpConfig, ids: FlowIds, syn: &Packet, now: Time, out: &mut TcpOutput) -> TcpEndpoint {
        let iss = initial_seq(ids.flow.0, ids.local.0, ids.remote.0, ids.local_port, ids.remote_port);
        TcpEndpoint::accept_with_iss(cfg, ids, syn, iss, now, out)
    }

    /// [`TcpEndpoint::accept`] with a chosen initial sequence number.
    pub fn accept_with_iss(
        cfg: TcpConfig,
        ids: FlowIds,
        syn: &Packet,
        iss: u32,
        now: Time,
        out: &mut TcpOutput,
    ) -> TcpEndpoint {
        let mut ep = TcpEndpoint::new(cfg, ids, Phase::SynRcvd, iss);
        ep.stats.syn_sent_at = Some(now);
        ep.irs = syn.seq;
        ep.rcv_nxt = 1;
        ep.last_ack_sent = 1;
        let opts = SynOptions::from_packet(syn).unwrap_or(SynOptions {
            mss: DEFAULT_MSS,
            sack_permitted: false,
            timestamps: syn.ts_val() != 0,
            window_scale: None,
        });
        ep.negotiate(&opts);
        ep.ecn_ok = ep.ecn_wanted && syn.has(Flags::ECE) && syn.has(Flags::CWR);
        ep.ts_recent = syn.ts_val();
        ep.snd_wnd = u64::from(syn.window);
        ep.max_snd_wnd = ep.snd_wnd;
        ep.timed = Some((1, now));
        ep.send_synack(now, out);
        ep.rto_at = Some(now.saturating_add(ep.syn_rto()));
        ep
    }

    /// Whether the listening socket behind this connection takes `pkt` as a new connection
    /// request: this connection was opened passively and is gone (it gave up or was reset),
    /// and `pkt` is a bare SYN (PSH, URG, CWR and ECE aside). ns-3 3.37's listener forks a
    /// new socket for it (`ProcessListen`, once the old one dropped its endpoint), as a Linux
    /// listener makes a new request; a client still resending its SYN so gets a new SYN-ACK.
    pub fn listener_takes(&self, pkt: &Packet) -> bool {
        let ignored = Flags::PSH.0 | Flags::URG.0 | Flags::CWR.0 | Flags::ECE.0;
        self.passive && self.phase == Phase::Dead && Flags(pkt.flags.0 & !ignored) == Flags::SYN
    }

    /// The new connection a listener opens for `syn` where this gone one stood
    /// ([`TcpEndpoint::listener_takes`]): as [`TcpEndpoint::accept`] opens it (all timers,
    /// retry counts and estimates fresh, as ns-3's fork copies them from the listener), keeping
    /// this one's counters, which the flow's results sum.
    pub fn reaccept(&self, syn: &Packet, now: Time, out: &mut TcpOutput) -> TcpEndpoint {
        let mut ep = TcpEndpoint::accept(self.cfg, self.ids, syn, now, out);
        ep.close_on_peer_close = self.close_on_peer_close;
        ep.stats.add_counts(&self.stats);
        ep.stats.syn_sent_at = self.stats.syn_sent_at;
        ep
    }

    // ------------------------------------------------------------------ public API

    /// The application appends `bytes` to the send stream (allowed before the handshake
    /// completes; ignored after [`TcpEndpoint::close`] or a failure). The stream holds at most
    /// [`MAX_STREAM_BYTES`](super::MAX_STREAM_BYTES) bytes in all: bytes beyond are ignored.
    pub fn send(&mut self, now: Time, bytes: u64, out: &mut TcpOutput) {
        if self.phase == Phase::Dead || self.fin_queued || bytes == 0 {
            return;
        }
        self.app_total = self.app_total.saturating_add(bytes).min(super::MAX_STREAM_BYTES);
        if self.phase == Phase::Open {
            self.try_send(now, out);
        }
    }

    /// The application closes its sending direction: a FIN follows the queued data.
    pub fn close(&mut self, now: Time, out: &mut TcpOutput) {
        if self.phase == Phase::Dead || self.fin_queued {
            return;
        }
        self.fin_queued = true;
        if self.phase == Phase::Open {
            self.try_send(now, out);
            self.check_closed(now, out);
        }
    }

    /// The application will never send and closes its side the moment the peer's FIN arrives:
    /// the FIN then goes out on the ACK of the peer's FIN. This is ns-3's `PacketSink`, whose
    /// listening socket is shut down for sending, so that every accepted socket closes from
    /// `DoPeerClose`; the sender then acknowledges that FIN, one more segment on the data's
    /// path.
    pub fn close_on_peer_close(&mut self) {
        self.close_on_peer_close = true;
    }

    /// A packet for this connection arrived. Packets of another protocol or other ports are
    /// ignored; unexpected ones are dropped or answered as RFC 9293 says.
    pub fn on_packet(&mut self, now: Time, pkt: &Packet, out: &mut TcpOutput) {
        if pkt.proto != Proto::Tcp || pkt.src_port != self.ids.remote_port || pkt.dst_port != self.ids.local_port {
            return;
        }
        if self.closed_reported && self.cfg.flavor == TcpFlavor::Ns3 {
            // ns-3 3.37 ignores every segment in TIME_WAIT (a resent FIN gets no ACK there).
            return;
        }
        match self.phase {
            Phase::SynSent => self.on_packet_syn_sent(now, pkt, out),
            Phase::SynRcvd => self.on_packet_syn_rcvd(now, pkt, out),
            Phase::Open => self.on_packet_open(now, pkt, out),
            Phase::Dead => self.on_packet_dead(now, pkt, out),
        }
    }

    /// A segment for a connection that gave up or was reset. Such a connection is gone (Linux
    /// removes the socket; ns-3 3.37 drops its endpoint, `DeallocateEndPoint`), and the stack
    /// answers as for a CLOSED connection (RFC 9293 §3.10.7.1; ns-3's
    /// `TcpL4Protocol::NoEndPointsFound`): a reset, `<SEQ=SEG.ACK><CTL=RST>` for a segment
    /// with an ACK, else `<SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>`, with no options; a reset
    /// is never answered. So the late ACK of a receiver whose sender timed out comes back as a
    /// reset, which takes its place in the queues on the way, as does the answer to a SYN-ACK
    /// that reaches a client whose SYN retries ran out. The like-for-like flavour answers only
    /// on the active side: a passively opened connection's segments reach the application's
    /// listening socket, which ignores all but a SYN (`ProcessListen`; Linux's listener resets
    /// an ACK), and opens a new connection for a SYN ([`TcpEndpoint::listener_takes`]).
    fn on_packet_dead(&mut self, now: Time, pkt: &Packet, out: &mut TcpOutput) {
        if pkt.has(Flags::RST) {
            return;
        }
        if self.cfg.flavor == TcpFlavor::Ns3 && self.passive {
            return;
        }
        self.send_reset(now, pkt, out);
    }

    /// The reset RFC 9293 answers `pkt` with where no connection takes it (§3.10.7.1,
    /// §3.10.7.3): `<SEQ=SEG.ACK><CTL=RST>` for a segment with an ACK, else
    /// `<SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>`; no options, not ECN-capable.
    fn send_reset(&mut self, now: Time, pkt: &Packet, out: &mut TcpOutput) {
        let mut p = self.base_packet(now, 0, Flags::RST);
        p.ecn = Ecn::NotEct;
        if pkt.has(Flags::ACK) {
            p.seq = pkt.ack;
        } else {
            p.seq = 0;
            p.flags = Flags::RST | Flags::ACK;
            let len = pkt.payload + u32::from(pkt.has(Flags::SYN)) + u32::from(pkt.has(Flags::FIN));
            p.ack = pkt.seq.wrapping_add(len);
        }
        p.size = L2_L3_HEADER + TCP_HEADER;
        self.stats.segments_sent += 1;
        out.packets.push(p);
    }

    /// Takes one SYN (or SYN-ACK) retransmission from `syn_retries`; false, and the
    /// connection given up, when none is left.
    fn take_syn_retry(&mut self, out: &mut TcpOutput) -> bool {
        if self.syn_retx >= self.cfg.syn_retries {
            self.fail(FailReason::SynRetriesExhausted, out);
            return false;
        }
        self.syn_retx += 1;
        true
    }

    /// Runs every timer whose deadline is at or before `now`; does nothing if none is due.
    pub fn on_timer(&mut self, now: Time, out: &mut TcpOutput) {
        if self.phase == Phase::Dead {
            return;
        }
        // ns-3 arms a FIN's `m_retxEvent` (in `SendEmptyPacket`) before the LAST_ACK timer
        // (`DoPeerClose`, `LastAckTimeout`), so when both are due at the same instant the FIN's
        // timer runs first: the FIN goes once more before the LAST_ACK timer finds the retries
        // spent and drops the connection. (Its resend arms it again, later than `now`, so the
        // check below does not run it twice.)
        if self.fin_rxt_at > 0 && self.fin_rxt_at <= now && self.ns3_last_ack() {
            self.on_fin_rxt(now, out);
        }
        if self.rto_at.is_some_and(|t| t <= now) {
            self.rto_at = None;
            match self.phase {
                Phase::SynSent | Phase::SynRcvd => self.on_syn_timeout(now, out),
                Phase::Open => self.on_data_timeout(now, out),
                Phase::Dead => {}
            }
        }
        if self.phase == Phase::Dead {
            return;
        }
        if self.delack_at.is_some_and(|t| t <= now) {
            self.delack_at = None;
            // ns-3's `DelAckTimeout` raises CA_EVENT_DELAYED_ACK.
            self.delack_reserved = true;
            self.send_ack(now, out);
        }
        if self.fin_rxt_at > 0 && self.fin_rxt_at <= now {
            self.on_fin_rxt(now, out);
        }
        if self.deferred_send_at().is_some_and(|t| t <= now) {
            self.send_deferred = false;
            self.try_send(now, out);
            self.flush_ack(now, out);
        }
        if self.persist_at.is_some_and(|t| t <= now) {
            self.persist_at = None;
            self.on_persist_timeout(now, out);
        }
    }

    /// [`TcpEndpoint::fin_rxt_at`] is due: the FIN again if still in LAST_ACK.
    fn on_fin_rxt(&mut self, now: Time, out: &mut TcpOutput) {
        self.fin_rxt_at = 0;
        if self.ns3_last_ack() {
            let de = self.data_end();
            self.emit_range(now, de, de + 1, out);
        }
    }

    /// The earliest pending deadline (retransmission, SYN, delayed ACK, persist, deferred send).
    pub fn next_timer(&self) -> Option<Time> {
        if self.phase == Phase::Dead {
            return None;
        }
        let fin_rxt = (self.fin_rxt_at > 0).then_some(self.fin_rxt_at);
        [
            self.rto_at,
            self.delack_at,
            self.persist_at,
            self.deferred_send_at(),
            fin_rxt,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// When the deferred first send happens (`send_deferred`): 1 ns after the handshake.
    fn deferred_send_at(&self) -> Option<Time> {
        if self.send_deferred {
            self.stats.established_at.map(|t| t + NS)
        } else {
            None
        }
    }

    /// Counters.
    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }

    /// Congestion window in bytes.
    pub fn cwnd(&self) -> u64 {
        self.cc.cwnd()
    }

    /// Slow-start threshold in bytes (`u64::MAX` before the first congestion event).
    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }

    /// Smoothed RTT, once measured.
    pub fn srtt(&self) -> Option<Time> {
        self.srtt
    }

    /// The current retransmission timeout, backoff included.
    pub fn rto(&self) -> Time {
        let mut r = self.rto_base;
        for _ in 0..self.backoff {
            r = r.saturating_mul(2);
            if r >= self.cfg.max_rto {
                break;
            }
        }
        r.min(self.cfg.max_rto).max(1)
    }

    /// Effective maximum segment size (payload bytes).
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// Bytes sent and not yet cumulatively acknowledged (SND.NXT - SND.UNA).
    pub fn bytes_in_flight(&self) -> u64 {
        self.snd_nxt.saturating_sub(self.snd_una)
    }

    /// The connection's addresses and ports.
    pub fn flow_ids(&self) -> &FlowIds {
        &self.ids
    }

    /// True once the handshake completed (and until a failure).
    pub fn is_established(&self) -> bool {
        self.phase == Phase::Open
    }

    /// True after a failure or reset.
    pub fn is_failed(&self) -> bool {
        self.phase == Phase::Dead
    }

    /// True when both directions are closed.
    pub fn is_closed(&self) -> bool {
        self.closed_reported
    }

    /// The congestion controller (for plots and tests).
    pub fn congestion_control(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    // ------------------------------------------------------------------ handshake

    fn ws_shift(&self) -> u8 {
        let mut s = 0u8;
        while (self.cfg.rcv_buf >> s) > 65_535 && s < 14 {
            s += 1;
        }
        s
    }

    fn syn_rto(&self) -> Time {
        let mut r = self.cfg.init_rto.max(1);
        for _ in 0..self.syn_retx {
            r = r.saturating_mul(2);
            if r >= self.cfg.max_rto {
                break;
            }
        }
        r.min(self.cfg.max_rto.max(1))
    }

    fn negotiate(&mut self, peer: &SynOptions) {
        self.mss = u64::from(self.cfg.mss.min(peer.mss).max(1));
        self.sack_ok = self.cfg.sack && peer.sack_permitted;
        self.ts_ok = self.cfg.timestamps && peer.timestamps;
    }

    fn send_syn(&mut self, now: Time, out: &mut TcpOutput) {
        let mut flags = Flags::SYN;
        if self.ecn_wanted {
            flags |= Flags::ECE | Flags::CWR;
        }
        let opts = SynOptions {
            mss: self.cfg.mss,
            sack_permitted: self.cfg.sack,
            timestamps: self.cfg.timestamps,
            window_scale: Some(self.ws_shift()),
        };
        let mut p = self.base_packet(now, 0, flags);
        p.window = self.cfg.rcv_buf.min(SYN_WINDOW);
        if self.cfg.timestamps {
            p.ts = true;
        }
        opts.write(&mut p);
        p.size = L2_L3_HEADER + TCP_HEADER + opts.wire_len(self.cfg.flavor);
        self.stats.segments_sent += 1;
        out.packets.push(p);
    }

    fn send_synack(&mut self, now: Time, out: &mut TcpOutput) {
        let mut flags = Flags::SYN | Flags::ACK;
        if self.ecn_ok {
            flags |= Flags::ECE;
        }
        let opts = SynOptions {
            mss: self.cfg.mss,
            sack_permitted: self.sack_ok,
            timestamps: self.ts_ok,
            window_scale: Some(self.ws_shift()),
        };
        let mut p = self.base_packet(now, 0, flags);
        p.ack = to_wire(self.irs, self.rcv_nxt);
        p.window = self.cfg.rcv_buf.min(SYN_WINDOW);
        self.rcv_adv = self.rcv_nxt + u64::from(p.window);
        if self.ts_ok {
            p.ts = true;
            p.ts_ecr = self.ts_recent;
        }
        opts.write(&mut p);
        p.size = L2_L3_HEADER + TCP_HEADER + opts.wire_len(self.cfg.flavor);
        self.stats.segments_sent += 1;
        out.packets.push(p);
    }

    fn on_syn_timeout(&mut self, now: Time, out: &mut TcpOutput) {
        if !self.take_syn_retry(out) {
            return;
        }
        self.stats.syn_timeouts += 1;
        if self.cfg.flavor == TcpFlavor::Linux {
            self.timed = None; // Karn
        }
        // ns-3 3.37 keeps timing its first SYN (or SYN-ACK): `SendEmptyPacket` puts it in the
        // RTT history with no bytes, and a resend marks as resent only the entries whose
        // bytes it covers (`UpdateRttHistory`), so none; without timestamps the handshake's
        // sample then runs from the first send.
        if self.phase == Phase::SynSent {
            self.send_syn(now, out);
        } else {
            self.send_synack(now, out);
        }
        self.rto_at = Some(now.saturating_add(self.syn_rto()));
    }

    fn on_packet_syn_sent(&mut self, now: Time, pkt: &Packet, out: &mut TcpOutput) {
        let ack_ok = pkt.has(Flags::ACK) && pkt.ack == to_wire(self.iss, 1);
        if pkt.has(Flags::RST) {
            if ack_ok {
                self.fail(FailReason::Reset, out);
            }
            return;
        }
        if pkt.has(Flags::ACK) && !ack_ok {
            // RFC 9293 §3.10.7.3: <SEQ=SEG.ACK><CTL=RST>.
            self.send_reset(now, pkt, out);
            return;
        }
        if !pkt.has(Flags::SYN) || !ack_ok {
            // A SYN without ACK would be a simultaneous open, which is not supported.
            return;
        }
        self.irs = pkt.seq;
        self.rcv_nxt = 1;
        self.last_ack_sent = 1;
        let opts = SynOptions::from_packet(pkt).unwrap_or(SynOptions {
            mss: DEFAULT_MSS,
            sack_permitted: false,
            timestamps: pkt.ts_val() != 0,
            window_scale: None,
        });
        self.negotiate(&opts);
        self.ecn_ok = self.ecn_wanted && pkt.has(Flags::ECE) && !pkt.has(Flags::CWR);
        self.ts_recent = pkt.ts_val();
        self.snd_una = 1;
        self.snd_wnd = u64::from(pkt.window);
        self.max_snd_wnd = self.snd_wnd;
        self.snd_wl1 = 0;
        self.snd_wl2 = 1;
        self.rcv_adv = self.rcv_nxt + u64::from(self.rcv_window());
        let _ = self.rtt_on_ack(now, pkt, 1, 0);
        self.establish(now, out);
        // The handshake's ACK goes out on its own ahead of any data, as Linux
        // (`tcp_rcv_synsent_state_process` -> `tcp_send_ack`) and ns-3 (`ProcessSynSent`) do;
        // piggybacking it on the first data segment shifts every later departure.
        self.send_ack(now, out);
        if self.cfg.flavor == TcpFlavor::Ns3 && self.data_end() > 1 {
            self.send_deferred = true;
        } else {
            self.try_send(now, out);
        }
        self.flush_ack(now, out);
        self.check_closed(now, out);
    }

    fn on_packet_syn_rcvd(&mut self, now: Time, pkt: &Packet, out: &mut TcpOutput) {
        if pkt.has(Flags::RST) {
            if pkt.seq == to_wire(self.irs, 1) {
                self.fail(FailReason::Reset, out);
            }
            return;
        }
        if pkt.has(Flags::SYN) && !pkt.has(Flags::ACK) {
            if pkt.seq == self.irs {
                // The peer retransmitted its SYN: our SYN-ACK was lost (or is slow).
                // ns-3 3.37's `SendEmptyPacket` draws every SYN-ACK, this one too, on the same
                // count as the timer's (`ConnCount`): with none left it gives the connection up
                // instead (and its listening socket ignores what follows).
                if self.cfg.flavor == TcpFlavor::Ns3 && !self.take_syn_retry(out) {
                    return;
                }
                self.send_synack(now, out);
            }
            return;
        }
        if !pkt.has(Flags::ACK) || pkt.has(Flags::SYN) || pkt.ack != to_wire(self.iss, 1) {
            return;
        }
        if self.cfg.flavor == TcpFlavor::Ns3
            && pkt.has(Flags::FIN)
            && unwrap_seq(self.rcv_nxt, self.irs, pkt.seq) != self.rcv_nxt
        {
            // ns-3 3.37's `ProcessSynRcvd` takes a FIN only in sequence: one that arrives
            // while the handshake's ACK and the data before it are missing is dropped
            // silently (no ACK, the state stays), where other data would complete the
            // handshake and be acknowledged out of order.
            return;
        }
        self.snd_una = 1;
        self.snd_wnd = u64::from(pkt.window);
        self.max_snd_wnd = self.snd_wnd;
        self.snd_wl1 = unwrap_seq(self.rcv_nxt, self.irs, pkt.seq);
        self.snd_wl2 = 1;
        let _ = self.rtt_on_ack(now, pkt, 1, 0);
        self.establish(now, out);
        self.on_packet_open(now, pkt, out);
    }

    fn establish(&mut self, now: Time, out: &mut TcpOutput) {
        self.phase = Phase::Open;
        self.rto_at = None;
        self.timed = None;
        // RFC 5681 §3.1: one segment after a retransmitted SYN or SYN-ACK. Linux does so only
        // after two or more (`tcp_init_transfer`: "in light of RFC6298 more aggressive 1sec
        // initRTO"); ns-3 3.37 never does (see `TcpFlavor::Ns3`).
        let segs = if self.syn_retx > 1 && self.cfg.flavor == TcpFlavor::Linux {
            1
        } else {
            u64::from(self.cfg.init_cwnd.max(1))
        };
        self.cc = new_congestion_control(&self.cfg, self.mss, segs * self.mss);
        if self.srtt.is_none() && self.syn_retx > 0 {
            // RFC 6298 §5.7.
            self.rto_base = self.rto_base.max(FALLBACK_RTO).min(self.cfg.max_rto);
        }
        self.snd_nxt = self.snd_nxt.max(1);
        self.snd_max = self.snd_max.max(1);
        self.recover = 1;
        // The first data segment after the handshake is acknowledged at once (ns-3 sets its
        // delayed-ACK count to the maximum on establishing; Linux starts in quick-ACK mode).
        self.delack_bytes = 2 * self.mss;
        self.stats.established_at = Some(now);
        out.events.push(TcpEvent::Connected);
    }

    fn fail(&mut self, reason: FailReason, out: &mut TcpOutput) {
        self.phase = Phase::Dead;
        self.rto_at = None;
        self.delack_at = None;
        self.persist_at = None;
        out.events.push(TcpEvent::Failed(reason));
    }

    // ------------------------------------------------------------------ synchronized states

    fn on_packet_open(&mut self, now: Time, pkt: &Packet, out: &mut TcpOutput) {
        let seq = unwrap_seq(self.rcv_nxt, self.irs, pkt.seq);
        if pkt.has(Flags::RST) {
            // RFC 9293 §3.10.7.4 (without RFC 5961's challenge ACK): a RST in the window resets.
            let wnd = u64::from(self.rcv_window()).max(1);
            if seq >= self.rcv_nxt && seq < self.rcv_nxt + wnd {
                self.fail(FailReason::Reset, out);
            }
            return;
        }
        if pkt.has(Flags::SYN) {
            if self.cfg.flavor == TcpFlavor::Ns3 {
                // ns-3 3.37's `ProcessEstablished` ignores a SYN or SYN-ACK once established,
                // but `DoForwardUp` has handled it as every segment with SYN before: the send
                // window is its unscaled field, and the congestion window and ssthresh are
                // back at their initial values ("Initialize cWnd and ssThresh"). (Its RTT
                // estimate from the SYN-ACK's ACK of the ISN takes no sample.)
                self.snd_wnd = u64::from(pkt.window);
                self.cc.set_cwnd(initial_cwnd(&self.cfg));
                self.cc.set_ssthresh(u64::MAX);
                return;
            }
            // A retransmitted SYN or SYN-ACK: our ACK was lost. Answer with an ACK.
            self.ack_now = true;
            self.flush_ack(now, out);
            return;
        }
        if !pkt.has(Flags::ACK) {
            return;
        }
        self.ns3_ce_takes_the_ecn_state(pkt, seq);
        if self.process_ack(now, pkt, seq, out) {
            self.process_data(now, pkt, seq, out);
        }
        self.try_send(now, out);
        self.flush_ack(now, out);
        self.check_closed(now, out);
    }

    /// The ACK half of an incoming segment. Returns false when the segment must be dropped.
    fn process_ack(&mut self, now: Time, pkt: &Packet, seq: u64, out: &mut TcpOutput) -> bool {
        let ack = unwrap_seq(self.snd_una, self.iss, pkt.ack);
        if ack > self.snd_max {
            // RFC 9293 §3.10.7.4: ACK of unsent data: send an ACK, drop the segment.
            self.ack_now = true;
            return false;
        }
        if ack >= self.snd_una && (self.snd_wl1 < seq || (self.snd_wl1 == seq && self.snd_wl2 <= ack)) {
            self.snd_wnd = u64::from(pkt.window);
            self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
            self.snd_wl1 = seq;
            self.snd_wl2 = ack;
        }
        if ack < self.snd_una {
            // An old ACK: nothing to learn from it beyond the window.
            return true;
        }
        let prior_una = self.snd_una;
        let prior_dupacks = self.dupacks;
        let was_cwr = self.in_cwr;
        let was_recovery = self.recovery != Recovery::None;
        let was_loss = self.in_loss;
        let ece = self.ecn_ok && pkt.has(Flags::ECE);
        if ece {
            self.stats.ece_received += 1;
        }
        let mut newly_sacked = 0;
        if self.sack_ok {
            for &(l, r) in pkt.sack_blocks() {
                let l = unwrap_seq(self.snd_una, self.iss, l).max(ack);
                let mut r = unwrap_seq(self.snd_una, self.iss, r).min(self.snd_max);
                if self.fin_with_data && r == self.data_end() && self.snd_max == r + 1 {
                    r += 1;
                }
                let (l, r) = self.ns3_whole_items(l, r);
                if l < r {
                    self.ns3_note_high_sack(l, r);
                    newly_sacked += self.sack_insert(l, r);
                }
            }
        }
        let acked = ack - prior_una;
        let prior_nxt = self.snd_nxt;
        let mut restart_timer = acked > 0;
        let mut rtt_sample = None;
        if acked > 0 {
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            let whole_items = self.sack_trim(ack);
            rtt_sample = self.rtt_on_ack(now, pkt, ack, prior_una);
            self.backoff = 0;
            self.consecutive_timeouts = 0;
            if self.reno() {
                self.reno_discard(acked, whole_items);
            }
        }
        // RFC 5681 §2 (a)-(d); with SACK, RFC 6675 §2/§5: an ACK that SACKs new data is a
        // duplicate ACK "regardless of its status as a cumulative acknowledgment".
        let is_dup = pkt.payload == 0
            && !pkt.has(Flags::FIN)
            && if self.sack_ok {
                newly_sacked > 0
            } else {
                acked == 0 && ack < self.snd_max
            };
        if is_dup {
            self.stats.dupacks_received += 1;
        }
        if self.sack_ok {
            self.update_lost_boundary();
        }
        // ns-3 3.37 (`ReceivedAck`) ends CWR and reacts to ECE before it looks at losses.
        let ns3 = self.cfg.flavor == TcpFlavor::Ns3;
        let mut ns3_reduce = false;
        if ns3 {
            if ack > self.ecn_high {
                self.in_cwr = false;
                if self.cwr_repair {
                    // CA_CWR -> CA_OPEN keeps `m_dupAckCount` (only an advancing ACK that is no
                    // duplicate, or a timeout, or the end of CA_RECOVERY resets it).
                    let dupacks = self.dupacks;
                    self.end_cwr_repair();
                    self.dupacks = dupacks;
                }
            }
            ns3_reduce = self.ns3_ecn_echo(ece, acked, ack);
            if ns3_reduce {
                // Before the ACK reaches the congestion control (`EnterCwr` before
                // `PktsAcked`, which may update DCTCP's alpha); Linux after.
                self.ecn_reduce(now);
                if self.recovery == Recovery::Sack && !self.cwr_repair {
                    // ns-3 leaves fast recovery for CA_CWR (cwnd halved again, the recovery
                    // point now SND.MAX): no more partial-ACK retransmissions, the segments
                    // the scoreboard marks lost go as pipe allows, what was resent stays so.
                    self.cwr_repair = true;
                    self.recover = self.ecn_high + 1;
                } else if self.recovery == Recovery::NewReno {
                    // The same without SACK: CA_CWR, where duplicate ACKs only count and a
                    // lost head waits for a guessed SACK to reach it, or for the timeout.
                    self.recovery = Recovery::None;
                    self.recover = self.ecn_high + 1;
                }
            }
        }
        // `ReceivedAck` ends CA_CWR before `ProcessAck`, which then takes the ACK as in
        // CA_OPEN: one that SACKs new data is a duplicate there (CA_DISORDER: no window
        // growth, its segments less the duplicates already counted, no `NewAck`).
        let ended_cwr = ns3 && was_cwr && !self.in_cwr;
        let was_recovery = was_recovery && !ended_cwr;
        let was_cwr = was_cwr && !ended_cwr;
        let dt = self.cfg.dupack_threshold.max(1);
        match self.recovery {
            Recovery::None if self.reno() => {
                // ns-3 3.37 without SACK (`DupAck`): no counting in CA_LOSS; in CA_CWR only
                // counting; in CA_DISORDER fast retransmit at the threshold, else limited
                // transmit, which guesses one more segment arrived. (Its other way in,
                // `IsLost(HighACK + segment size)`, never holds here: the segment after the
                // head is guessed arrived or, with no guesses, neither lost nor SACKed.)
                if acked > 0 {
                    self.dupacks = 0;
                }
                if is_dup && !self.in_loss {
                    self.dupacks += 1;
                    if !self.in_cwr && self.snd_max > self.snd_una {
                        if self.dupacks == dt && self.snd_una >= self.recover {
                            self.enter_recovery(now, out);
                        } else {
                            self.reno_add_sack();
                        }
                    }
                }
            }
            Recovery::None => {
                // ns-3 3.37 (`ProcessAck`) keeps counting when an ACK that advances SND.UNA
                // also SACKs new data: it is a duplicate ACK too.
                if acked > 0 && !(ns3 && is_dup) {
                    self.dupacks = 0;
                }
                // ns-3 3.37's `DupAck` returns at once in CA_LOSS (after a timeout, until the
                // ACK that reaches the recovery point): it neither counts nor asks.
                let ns3_loss = ns3 && self.in_loss;
                if is_dup && !ns3_loss {
                    self.dupacks += 1;
                }
                let lost = if ns3 {
                    // ns-3 3.37's `DupAck` asks `IsLost(HighACK + segment size)`: whether the
                    // segment after the first unacknowledged one is lost, not the first (with
                    // SACK information left from a recovery that ended, the first may be a
                    // retransmission still on its way).
                    let x = self.snd_una + self.mss;
                    self.sack_ok
                        && x < self.snd_max
                        && x < self.lost_boundary
                        && self.scoreboard.containing(x).is_none()
                } else {
                    self.sack_ok && self.lost_boundary > self.snd_una
                };
                // ns-3 3.37 asks both questions only in `DupAck`, that is for a duplicate ACK
                // (with SACK: one that SACKs new data); an ACK that SACKs nothing new, after a
                // recovery ended with SACK information left over, enters none.
                let asked = (is_dup && !ns3_loss) || !ns3;
                // ns-3 asks for the threshold itself (`m_dupAckCount == m_retxThresh`): a count
                // carried past it out of CA_CWR starts no recovery.
                let at_threshold = if ns3 { self.dupacks == dt } else { self.dupacks >= dt };
                if asked && (at_threshold || lost) && self.snd_una >= self.recover && self.snd_max > self.snd_una {
                    if ns3 && self.in_cwr && self.sack_ok {
                        self.start_cwr_repair();
                    } else {
                        self.enter_recovery(now, out);
                    }
                }
            }
            Recovery::NewReno if ns3 => {
                // ns-3 3.37's fast recovery without SACK: cwnd stays at ssthresh and each
                // duplicate ACK guesses one more segment arrived (the pipe shrinks, new data
                // goes); a partial ACK marks the new head lost and resends it at once
                // (`MarkHeadAsLost`, `DoRetransmit`).
                if ack >= self.recover {
                    self.cc.set_cwnd(self.cc.ssthresh());
                    self.recovery = Recovery::None;
                    self.dupacks = 0;
                    self.first_partial_seen = false;
                } else if acked > 0 {
                    self.reno_mark_head_lost();
                    self.reno_resend_head(now, out);
                    restart_timer = self.take_first_partial_ack();
                } else if is_dup {
                    self.reno_add_sack();
                }
            }
            Recovery::NewReno => {
                if ack >= self.recover {
                    // Full ACK (RFC 6582 step 3): deflate.
                    self.cc.set_cwnd(self.cc.ssthresh());
                    self.recovery = Recovery::None;
                    self.dupacks = 0;
                } else if acked > 0 {
                    // Partial ACK (RFC 6582 step 4): retransmit the next hole, deflate by the
                    // amount acked, add back one SMSS, reset the timer on the first one only.
                    let e = self.seg_end(self.snd_una, self.snd_max);
                    self.emit_range(now, self.snd_una, e, out);
                    let mut cwnd = self.cc.cwnd().saturating_sub(acked);
                    if acked >= self.mss {
                        cwnd += self.mss;
                    }
                    self.cc.set_cwnd(cwnd);
                    restart_timer = self.take_first_partial_ack();
                } else if is_dup {
                    self.cc.set_cwnd(self.cc.cwnd() + self.mss);
                }
            }
            Recovery::Sack => {
                if ack >= self.recover {
                    self.cc.set_cwnd(self.cc.ssthresh());
                    if !self.cwr_repair {
                        // ns-3 3.37 sets `m_isFirstPartialAck` again only where a full ACK
                        // ends CA_RECOVERY (here; not CA_CWR) or CA_LOSS, not at a timeout.
                        self.first_partial_seen = false;
                    }
                    self.leave_sack_recovery();
                } else {
                    if ns3 && self.cwr_repair {
                        // ns-3's CA_CWR (`DupAck`) counts duplicate ACKs, and an advancing ACK
                        // that is none resets the count (`ProcessAck`).
                        if acked > 0 && !is_dup {
                            self.dupacks = 0;
                        }
                        if is_dup {
                            self.dupacks += 1;
                        }
                    }
                    if acked > 0 && !self.cwr_repair {
                        // RFC 6582's rule, which ns-3 applies to SACK recovery as well: only
                        // the first partial ACK restarts the retransmission timer.
                        restart_timer = self.take_first_partial_ack();
                    }
                    if self.cfg.flavor == TcpFlavor::Linux {
                        self.detect_lost_rxt();
                    }
                    self.compute_pipe();
                    if acked > 0 && ns3 && !self.cwr_repair && !self.ns3_head_resent() {
                        self.partial_ack_retransmit(now, out);
                    }
                }
            }
        }
        if ns3 && self.sack_ok && acked > 0 && !was_recovery && self.recovery == Recovery::Sack && !self.cwr_repair {
            // ns-3 3.37's `ProcessAck` goes on with the ACK that entered CA_RECOVERY (one that
            // advanced SND.UNA and SACKed new data) as with a partial ACK: it is the first one
            // (the timer restarts only if no partial ACK came since the last full ACK ended a
            // recovery), and the head goes again unless already resent.
            restart_timer = self.take_first_partial_ack();
            self.compute_pipe();
            if !self.ns3_head_resent() {
                self.partial_ack_retransmit(now, out);
            }
        }
        let ns3_disorder =
            ns3 && is_dup && !was_recovery && self.recovery == Recovery::None && !self.in_cwr && !was_loss;
        // ns-3's `ProcessAck` calls `NewAck` for every ACK that advances SND.UNA but one that
        // leaves the sender in CA_DISORDER.
        let new_ack = acked > 0 && !ns3_disorder;
        if new_ack {
            self.ns3_app_una = self.snd_una;
        }
        if ns3_disorder {
            // Such an ACK leaves ns-3 in CA_DISORDER, where `ProcessAck` calls no `NewAck`:
            // the retransmission timer runs on from the last restart. The state that counts is
            // the one after `ReceivedAck`'s ECN step (CWR ended by this ACK, or entered on its
            // ECE, where `ProcessAck`'s CA_CWR branch calls `NewAck`), not the one before.
            restart_timer = false;
        }
        if restart_timer {
            self.rto_at = if self.snd_una >= self.snd_max && !self.ns3_idle_rto() {
                None
            } else {
                Some(now.saturating_add(self.rto()))
            };
        }
        // ECN (RFC 3168 §6.1.2, RFC 8257 §3.3): react once per window, not during recovery.
        if ack > self.ecn_high {
            self.in_cwr = false;
        }
        let reduce = if ns3 {
            ns3_reduce
        } else {
            ece && self.recovery == Recovery::None && !was_recovery && ack > self.ecn_high
        };
        // ns-3 3.37 hands the ACK that ends fast recovery to the congestion control with every
        // segment it acknowledges, right after setting cwnd to ssthresh (`ProcessAck`:
        // `exitedFastRecovery`, the state is CA_OPEN again, then `IncreaseWindow(segsAcked)`).
        let ns3_exit = ns3 && was_recovery && self.recovery == Recovery::None;
        let mut cc_acked = acked;
        if ns3 && acked > 0 {
            // ns-3 counts whole segments (`ProcessAck`): the bytes of a short segment wait in
            // `m_bytesAckedNotProcessed` until they make up one.
            let part = acked % self.mss;
            let rem = u64::from(self.acked_rem) + part;
            let carry = if rem >= self.mss { self.mss } else { 0 };
            cc_acked = acked - part + carry;
            self.acked_rem = (rem - carry) as u32;
        }
        if ns3_exit && !was_cwr {
            // ns-3's ACK that ends CA_RECOVERY recounts its segments as `(ACK - SND.UNA) /
            // segment size` (`ProcessAck`), after the remainder went into
            // `m_bytesAckedNotProcessed`: a segment that remainder completed is not among them.
            cc_acked = acked / self.mss * self.mss;
        }
        if self.in_loss && ack >= self.recover {
            // ns-3's ACK that ends CA_LOSS hands the congestion control only the whole
            // segments above the recovery point (`ProcessAck`: `(ack - m_recover) / segSize`).
            self.in_loss = false;
            // ... and sets `m_isFirstPartialAck` again (as where a full ACK ends CA_RECOVERY).
            self.first_partial_seen = false;
            cc_acked = (ack - self.recover) / self.mss * self.mss;
        }
        if ns3 && acked > 0 && ack < self.recover && self.recovery != Recovery::None && !self.cwr_repair {
            // A partial ACK in ns-3's CA_RECOVERY (`ProcessAck`) tells the congestion control
            // of one segment, however many it acknowledges ("one segment has been previously
            // lost and now successfully received"): DCTCP's estimate counts that one.
            cc_acked = self.mss;
        }
        let mut info = AckInfo {
            acked: cc_acked,
            // ns-3's `TcpDctcp::PktsAcked` counts bytes as marked by the sender's ECN state,
            // and `ProcessAck` hands it one segment for every ACK that repeats SND.UNA while
            // data is outstanding, SACK or not.
            ece: if ns3 { self.ece_rcvd } else { ece },
            dupack: if ns3 { acked == 0 && ack < self.snd_max } else { is_dup },
            // An ACK with new SACK information means disorder: cwnd does not grow on it even
            // when it also advances SND.UNA (ns-3's DISORDER state; Linux grows only in Open),
            // except in ns-3's CA_LOSS, where `DupAck` does nothing and `ProcessAck` grows the
            // window on every ACK that advances SND.UNA.
            in_recovery: if ns3_exit {
                reduce || self.in_cwr
            } else {
                was_recovery
                    || self.recovery != Recovery::None
                    || reduce
                    || self.in_cwr
                    || (self.sack_ok && newly_sacked > 0 && !(ns3 && was_loss))
            },
            snd_una: self.snd_una,
            snd_max: self.snd_max,
            snd_nxt: if ns3 { self.ns3_next_tx() } else { prior_nxt },
            uncounted: 0,
            unreported: false,
            advanced: acked > 0,
            srtt: self.srtt.unwrap_or(0),
            rtt_sample,
        };
        // After CA_CWR ended, ns-3 is in CA_OPEN with the count carried over: in CA_DISORDER
        // only if this ACK is a duplicate itself.
        let disorder = prior_dupacks > 0 && (!ended_cwr || is_dup);
        if ns3 && acked > 0 && disorder && !was_recovery && !was_loss && !was_cwr && !self.in_cwr {
            // The ACK found ns-3 in CA_DISORDER (`ProcessAck`'s `oldDupAckCount`).
            let counted = u64::from(prior_dupacks) * self.mss;
            info.unreported = info.acked < counted;
            info.uncounted = counted.min(info.acked);
        }
        self.cc.on_ack(now, &info);
        if ns3 && new_ack {
            self.ns3_next_tx_at_least(ack);
        }
        if reduce && !ns3 {
            self.ecn_reduce(now);
            self.cwr_pending = true;
        }
        if let Some(a) = self.cc.alpha() {
            self.stats.dctcp_alpha = a;
        }
        if acked > 0 {
            let data_end = self.data_end();
            if self.app_total > self.complete_reported && self.snd_una >= data_end {
                self.complete_reported = self.app_total;
                self.stats.send_complete_at.get_or_insert(now);
                out.events.push(TcpEvent::SendComplete);
            }
            if self.snd_wnd > 0 || self.snd_una >= self.snd_max {
                self.persist_backoff = 0;
            }
        }
        true
    }

    /// The window's ECN reduction: cut cwnd, and hold it (CWR) until SND.MAX is acknowledged.
    fn ecn_reduce(&mut self, now: Time) {
        self.in_loss = false;
        let flight = self.snd_max - self.snd_una;
        self.cc.on_ecn_echo(now, flight);
        self.ecn_high = self.snd_max;
        self.in_cwr = true;
        self.stats.ecn_reductions += 1;
    }

    /// [`TcpFlavor::Ns3`]: losses found during an ECN reduction. ns-3 3.37 does not enter fast
    /// recovery from CA_CWR (`DupAck` acts only in CA_OPEN, CA_DISORDER and CA_RECOVERY), but
    /// `SendPendingData` resends the segments its scoreboard marks lost (NextSeg rule 1) as
    /// pipe allows, with cwnd left where the reduction put it.
    fn start_cwr_repair(&mut self) {
        self.cwr_repair = true;
        self.recover = self.ecn_high + 1;
        self.begin_sack_recovery();
    }

    /// The end of [`TcpEndpoint::start_cwr_repair`]'s recovery with its reduction (ns-3's
    /// CA_CWR -> CA_OPEN); cwnd stays at ssthresh, where the reduction set it.
    fn end_cwr_repair(&mut self) {
        self.cwr_repair = false;
        self.leave_sack_recovery();
    }

    /// Enters SACK recovery's state (RFC 6675 §5 step 4): nothing retransmitted yet, pipe
    /// counted afresh. The caller sets cwnd and the recovery point.
    fn begin_sack_recovery(&mut self) {
        self.recovery = Recovery::Sack;
        if self.cfg.flavor == TcpFlavor::Linux {
            self.first_partial_seen = false;
            self.high_rxt = self.snd_una;
            self.sacked_below_rxt = 0;
            self.rxt_sacked = IntervalSet::new();
        }
        // ns-3 3.37 keeps a segment's `m_retrans` flag until the segment is acknowledged or a
        // timeout clears every flag, so what an earlier recovery resent counts as resent in
        // this one: HighRxt and the resent-and-SACKed ranges stay.
        self.rescue_rxt = None;
        self.rxt_sent.clear();
        self.rxt_lost.clear();
        self.compute_pipe();
    }

    /// Leaves SACK recovery (its retransmission records go; the scoreboard stays). The caller
    /// sets cwnd.
    fn leave_sack_recovery(&mut self) {
        self.recovery = Recovery::None;
        self.dupacks = 0;
        self.rxt_sent.clear();
        self.rxt_lost.clear();
    }

    /// [`TcpFlavor::Ns3`]'s sender on an ACK (ns-3 3.37's `TcpSocketBase::ReceivedAck`): ECE
    /// counts only on an ACK that advances SND.UNA, and it starts a reduction in any state but
    /// CWR itself, also right after a timeout (`CA_LOSS` -> `CA_CWR`), where Linux waits for the
    /// window sent before it. Such an ACK also asks for CWR on the next new data segment, once
    /// it acknowledges the last one sent with CWR (`m_ecnEchoSeq > m_ecnCWRSeq` in
    /// `SendDataPacket`); an ACK without ECE withdraws that (`ECN_ECE_RCVD` -> `ECN_IDLE`).
    /// Returns whether to cut: in every state but CWR (`EnterCwr`), fast recovery included,
    /// which the caller then turns into CWR ([`TcpEndpoint::start_cwr_repair`]'s state with
    /// SACK; without SACK, CA_CWR with the guessed SACKs kept).
    fn ns3_ecn_echo(&mut self, ece: bool, acked: u64, ack: u64) -> bool {
        if !self.ecn_ok {
            return false;
        }
        if ece && acked > 0 {
            self.ece_rcvd = true;
            if ack > self.cwr_seq {
                self.cwr_pending = true;
            }
            !self.in_cwr
        } else {
            if !ece {
                self.cwr_pending = false;
                self.ece_rcvd = false;
            }
            false
        }
    }

    fn enter_recovery(&mut self, now: Time, out: &mut TcpOutput) {
        let flight = self.snd_max - self.snd_una;
        self.cc.on_congestion_event(now, flight);
        let ssthresh = self.cc.ssthresh();
        self.recover = self.snd_max;
        self.stats.fast_recoveries += 1;
        self.stats.fast_retransmits += 1;
        if self.ecn_ok && self.cfg.flavor == TcpFlavor::Linux {
            // A loss reduction also counts as the window's congestion response (RFC 3168 §6.1.2).
            self.cwr_pending = true;
            self.ecn_high = self.snd_max;
        }
        if self.sack_ok && self.cfg.flavor == TcpFlavor::Ns3 {
            // ns-3's `EnterRecovery` -> `DoRetransmit`: NextSeg rules 1 and 2 (a segment an
            // earlier recovery resent is not lost again), else the head.
            self.cc.set_cwnd(ssthresh);
            self.begin_sack_recovery();
            self.partial_ack_retransmit(now, out);
        } else if self.sack_ok {
            // RFC 6675 §5 steps 4.1-4.4.
            self.cc.set_cwnd(ssthresh);
            self.begin_sack_recovery();
            let cap = self.hole_end(self.snd_una);
            let s = self.snd_una;
            let e = self.seg_end(s, cap);
            if e > s {
                self.emit_range(now, s, e, out);
                self.high_rxt = e;
                self.pipe += self.pipe_bytes(s, e);
                self.rxt_sent.push_back((s, e, self.snd_max));
            }
        } else if self.cfg.flavor == TcpFlavor::Ns3 {
            // ns-3 3.37's `EnterRecovery` without SACK: one more segment guessed arrived, the
            // head marked lost and resent, cwnd at ssthresh (not inflated: the guessed SACKs
            // take segments out of the pipe instead).
            self.reno_add_sack();
            self.reno_mark_head_lost();
            self.recovery = Recovery::NewReno;
            self.cc.set_cwnd(ssthresh);
            self.reno_resend_head(now, out);
        } else {
            // RFC 6582 steps 2-3.
            self.recovery = Recovery::NewReno;
            self.first_partial_seen = false;
            self.cc
                .set_cwnd(ssthresh + u64::from(self.cfg.dupack_threshold.max(1)) * self.mss);
            let s = self.snd_una;
            let e = self.seg_end(s, self.snd_max);
            self.emit_range(now, s, e, out);
        }
    }

    /// [`TcpFlavor::Ns3`]: ns-3 3.37 keeps the retransmission timer running while the send
    /// buffer holds data, even with nothing outstanding (`NewAck` cancels it only when the
    /// buffer is empty). That matters when cwnd is below one segment (DCTCP without a floor):
    /// nothing may be sent, and the timeout is what restarts the flow with one segment.
    fn ns3_idle_rto(&self) -> bool {
        self.cfg.flavor == TcpFlavor::Ns3 && self.snd_nxt < self.data_end()
    }

    fn on_data_timeout(&mut self, now: Time, out: &mut TcpOutput) {
        if self.snd_una >= self.snd_max && !self.ns3_idle_rto() {
            return;
        }
        if self.consecutive_timeouts >= self.cfg.data_retries {
            self.fail(FailReason::DataRetriesExhausted, out);
            return;
        }
        if self.ns3_last_ack() {
            // ns-3's `LastAckTimeout`: the FIN again, nothing else changes.
            self.consecutive_timeouts += 1;
            self.snd_nxt = self.snd_una;
            self.try_send(now, out);
            return;
        }
        // Linux sets ssthresh on the first of a series of timeouts only. ns-3 3.37 sets it on
        // every one: `ReTxTimeout` asks `IsHeadRetransmitted()` after `SetSentListLost()` has
        // cleared every segment's retransmitted flag, so the test never holds.
        let first = self.consecutive_timeouts == 0 || self.cfg.flavor == TcpFlavor::Ns3;
        self.consecutive_timeouts += 1;
        self.stats.data_timeouts += 1;
        let flight = self.snd_max - self.snd_una;
        self.cc.on_rto(now, flight, first);
        self.cc.on_loss_state(now, self.snd_max);
        // RFC 6582 §3.2 step 1 / RFC 6675 §5.1: remember the recovery point, end any
        // recovery, go back N. SACK information is kept (RFC 6675 erratum 1610; ns-3 and
        // Linux keep it too, our receivers never renege), so going back N skips what the
        // receiver already holds: forgetting it resent whole windows of data that had
        // arrived, which kept the queue full and starved the flow (the collapse of issue 16).
        self.recovery = Recovery::None;
        self.cwr_repair = false;
        self.dupacks = 0;
        self.recover = self.snd_max;
        self.high_rxt = self.snd_una;
        self.sacked_below_rxt = 0;
        // ns-3 clears every `m_retrans` flag at a timeout (`SetSentListLost`).
        self.rxt_sacked = IntervalSet::new();
        if self.sack_ok {
            self.update_lost_boundary();
        } else {
            self.lost_boundary = self.snd_una;
            self.sacked_above_lb = 0;
        }
        self.rxt_sent.clear();
        self.rxt_lost.clear();
        // ns-3 forgets its guessed SACKs (`ResetRenoSack`) and marks everything lost, which
        // going back N stands for.
        self.reno_sacked = 0;
        self.reno_head_lost = false;
        self.reno_head_resent = false;
        if self.ecn_ok {
            if self.cfg.flavor == TcpFlavor::Linux {
                self.cwr_pending = true;
                self.ecn_high = self.snd_max;
            } else {
                // ns-3's timeout leaves any CWR state for CA_LOSS, where ECE may cut again.
                self.in_cwr = false;
            }
        }
        self.in_loss = self.cfg.flavor == TcpFlavor::Ns3;
        // ns-3 empties its RTT history (`ReTxTimeout`).
        self.karn_until = self.karn_until.max(self.snd_max);
        self.ns3_rto_mark = self.snd_max;
        self.snd_nxt = self.snd_una;
        self.timed = None;
        self.ns3_rtt_history.clear();
        self.backoff = self.backoff.saturating_add(1);
        self.rto_at = Some(now.saturating_add(self.rto()));
        // ns-3's timeout resends the head through `DoRetransmit`, not `SendPendingData`: the
        // application is not asked for more.
        let app_una = self.ns3_app_una;
        self.try_send(now, out);
        self.ns3_app_una = app_una;
    }

    fn on_persist_timeout(&mut self, now: Time, out: &mut TcpOutput) {
        if !self.needs_persist() {
            self.persist_backoff = 0;
            return;
        }
        // A window probe as Linux's tcp_xmit_probe_skb: an old sequence number that the peer
        // must answer with an ACK carrying its current window.
        let seq = self.snd_una.saturating_sub(1);
        let p = self.build(now, seq, Flags::ACK, 0);
        self.stats.window_probes += 1;
        out.packets.push(p);
        self.persist_backoff = self.persist_backoff.saturating_add(1);
        let mut r = self.rto();
        for _ in 0..self.persist_backoff {
            r = r.saturating_mul(2).min(self.cfg.max_rto);
        }
        self.persist_at = Some(now.saturating_add(r));
    }

    // ------------------------------------------------------------------ SACK scoreboard

    fn sack_insert(&mut self, l: u64, r: u64) -> u64 {
        let h = self.high_rxt;
        let mut below = 0;
        let ns3 = self.cfg.flavor == TcpFlavor::Ns3;
        let rxt_sacked = &mut self.rxt_sacked;
        let n = self.scoreboard.insert(l, r, |a, b| {
            if a < h {
                below += b.min(h) - a;
                // Everything unSACKed below HighRxt was retransmitted.
                if ns3 {
                    rxt_sacked.insert(a, b.min(h), |_, _| {});
                }
            }
        });
        self.sacked_below_rxt += below;
        n
    }

    /// Forgets what lies below SND.UNA; returns the send buffer's items it took whole
    /// ([`TcpFlavor::Ns3`]; 0 otherwise).
    fn sack_trim(&mut self, una: u64) -> u64 {
        let mut whole_items = 0;
        let keep = una < self.data_end() && una < self.snd_max;
        if let Some(items) = self.items.as_deref_mut() {
            // ns-3's `DiscardUpTo`: items below SND.UNA go, one it cuts starts at SND.UNA.
            let (cut, whole) = items.remove_below(una);
            if cut && keep {
                items.insert(una);
            }
            whole_items = whole as u64;
        }
        // `DiscardUpTo` forgets the highest SACK once SND.UNA reaches its item.
        if self.ns3_high_sack <= una {
            self.ns3_high_sack = 0;
        }
        let h = self.high_rxt;
        let mut below = 0;
        self.scoreboard.remove_below(una, |a, b| {
            if a < h {
                below += b.min(h) - a;
            }
        });
        self.sacked_below_rxt = self.sacked_below_rxt.saturating_sub(below);
        self.rxt_sacked.remove_below(una, |_, _| {});
        if self.high_rxt < una {
            self.high_rxt = una;
            self.sacked_below_rxt = 0;
        }
        whole_items
    }

    /// SACKed bytes below `x` (the scoreboard holds only blocks above SND.UNA).
    fn sacked_below(&self, x: u64) -> u64 {
        if self.scoreboard.is_empty() {
            return 0;
        }
        let mut n = 0;
        for (a, b) in self.scoreboard.iter() {
            if a >= x {
                break;
            }
            n += b.min(x) - a;
        }
        n
    }

    /// Where losses end: below `lost_boundary` every unSACKed byte is lost. The like-for-like
    /// flavour marks them as ns-3 does ([`TcpEndpoint::ns3_update_lost_boundary`]); otherwise
    /// RFC 6675 IsLost for every hole at once: an unSACKed byte is lost when more than
    /// (DupThresh - 1) * SMSS bytes above it are SACKed. Walks ranges from the top until that
    /// many bytes are found (a handful of ranges).
    fn update_lost_boundary(&mut self) {
        if self.ns3_items().is_some() {
            self.ns3_update_lost_boundary();
            return;
        }
        let thresh = u64::from(self.cfg.dupack_threshold.max(1) - 1) * self.mss;
        let mut acc = 0;
        let mut lb = self.snd_una;
        for (a, b) in self.scoreboard.iter_rev() {
            acc += b - a;
            if acc > thresh {
                lb = a;
                break;
            }
        }
        self.lost_boundary = lb.max(self.snd_una);
        self.sacked_above_lb = acc;
    }

    /// [`TcpFlavor::Ns3`]: before SACK block `[l, r)` (whole items) is entered, where ns-3's
    /// `TcpTxBuffer::Update` leaves `m_highestSack`: at each item it newly SACKs, in order, if
    /// none is held or the one held starts at or below the new item's end. So the last item
    /// the block newly SACKs takes it if its end reaches the held start, even from below
    /// (an item SACKed just under the highest one becomes the highest).
    fn ns3_note_high_sack(&mut self, l: u64, r: u64) {
        let sent = self.data_sent_end();
        let Some(items) = self.ns3_items() else {
            return;
        };
        let mut p = r;
        while p > l {
            match self.scoreboard.containing(p - 1) {
                Some((a, _)) => p = a,
                None => break,
            }
        }
        if p <= l {
            return;
        }
        let start = items.last_at_or_before(p - 1).unwrap_or(l).max(l);
        let end = items.next_after(start).unwrap_or(sent).min(r);
        if self.ns3_high_sack == 0 || self.ns3_high_sack <= end {
            self.ns3_high_sack = start;
        }
    }

    /// [`TcpFlavor::Ns3`] with SACK: ns-3's `UpdateLostCount`. From the item `m_highestSack`
    /// points at down to the head, every unSACKed item below the DupThresh-th SACKed one is
    /// marked lost, the head too once that many are counted; marks stay until the item is
    /// SACKed or acknowledged. Items only, never bytes (RFC 6675's IsLost also counts
    /// bytes).
    fn ns3_update_lost_boundary(&mut self) {
        let need = self.cfg.dupack_threshold.max(1) as usize;
        let mut found = None;
        let h = self.ns3_high_sack;
        if let Some(items) = self.ns3_items().filter(|_| h != 0) {
            let top_end = items.next_after(h).unwrap_or(self.data_sent_end());
            let mut count = 0;
            for (a, b) in self.scoreboard.iter_rev() {
                if a >= top_end {
                    continue;
                }
                let top = items.rank(b.min(top_end));
                let n = top - items.rank(a);
                if count + n >= need {
                    found = items.get(top - (need - count));
                    break;
                }
                count += n;
            }
        }
        let lb = self.lost_boundary.max(found.unwrap_or(0)).max(self.snd_una);
        self.lost_boundary = lb;
        self.sacked_above_lb = self
            .scoreboard
            .iter_rev()
            .take_while(|&(_, b)| b > lb)
            .map(|(a, b)| b - a.max(lb))
            .sum();
    }

    /// Lost-retransmission detection (as Linux's `tcp_mark_lost_retrans`, the SACK-era
    /// predecessor of RACK): RFC 6675 never retransmits a segment twice, so a dropped
    /// retransmission used to wait for the RTO. A retransmission is taken as lost by the same
    /// rule IsLost applies to original transmissions: more than (DupThresh - 1) * SMSS bytes
    /// first sent after it (above the SND.MAX it was sent at) have been SACKed. Retransmissions
    /// are checked oldest first; each costs O(log n) once.
    fn detect_lost_rxt(&mut self) {
        while let Some(&(s, e, mark)) = self.rxt_sent.front() {
            let s = s.max(self.snd_una);
            let covered = s >= e || self.scoreboard.containing(s).is_some_and(|(_, b)| b >= e);
            if covered {
                self.rxt_sent.pop_front();
            } else if self.sacked_above_exceeds_thresh(mark) {
                self.rxt_sent.pop_front();
                self.rxt_lost.push_back((s, e));
            } else {
                break;
            }
        }
    }

    /// True when more than (DupThresh - 1) * SMSS bytes at or above `x` are SACKed. Walks
    /// ranges from the top and stops as soon as the answer is known.
    fn sacked_above_exceeds_thresh(&self, x: u64) -> bool {
        let thresh = u64::from(self.cfg.dupack_threshold.max(1) - 1) * self.mss;
        let mut acc = 0;
        for (a, b) in self.scoreboard.iter_rev() {
            if b <= x {
                return false;
            }
            acc += b - a.max(x);
            if acc > thresh {
                return true;
            }
        }
        false
    }

    /// The next range of a lost retransmission still worth sending: not yet acknowledged and
    /// up to the first SACKed byte.
    fn next_lost_rxt(&mut self) -> Option<(u64, u64)> {
        while let Some((s, e)) = self.rxt_lost.pop_front() {
            let mut s = s.max(self.snd_una);
            if let Some((_, b)) = self.scoreboard.containing(s) {
                s = b;
            }
            let cap = self
                .scoreboard
                .next_from(s)
                .map_or(e, |(a, _)| a)
                .min(e)
                .min(self.snd_max);
            if s < cap {
                let end = self.seg_end(s, cap);
                if end > s {
                    if end < e {
                        self.rxt_lost.push_front((end, e));
                    }
                    return Some((s, end));
                }
            }
        }
        None
    }

    /// Where the unSACKed range at `s` ends: the next SACKed byte, or SND.MAX.
    fn hole_end(&self, s: u64) -> u64 {
        self.scoreboard
            .next_from(s)
            .map_or(self.snd_max, |(a, _)| a)
            .min(self.snd_max)
    }

    /// RFC 6675 SetPipe in O(1) from the counters: unSACKed bytes not lost, plus retransmitted
    /// bytes (retransmissions go in sequence order, so they are the unSACKed bytes below
    /// HighRxt). [`TcpFlavor::Ns3`] adds retransmitted bytes SACKed since, as ns-3 3.37's
    /// `TcpTxBuffer::BytesInFlight` does: after a lost retransmission, those hold the window
    /// shut until the timeout.
    fn compute_pipe(&mut self) {
        if self.cfg.flavor == TcpFlavor::Ns3 && !self.in_loss {
            // (Outside CA_LOSS this happens only where ECE ended it early, CA_LOSS ->
            // CA_CWR; within it the timeout's go-back-N counts its own flight.)
            let mark = self.ns3_rto_mark.min(self.snd_max);
            if mark > self.lost_boundary.max(self.snd_una) {
                self.pipe = self.ns3_pipe_below_timeout_mark(mark) + self.rxt_sacked.bytes();
                return;
            }
        }
        let h = self.high_rxt.max(self.snd_una);
        let sacked = self.scoreboard.bytes();
        let sa_h = sacked.saturating_sub(self.sacked_below_rxt);
        let lb = self.lost_boundary;
        let sa_lb = self.sacked_above_lb;
        let unsacked = (self.snd_max - self.snd_una).saturating_sub(sacked);
        self.pipe = if lb > h {
            let lost_not_rxt = (lb - h).saturating_sub(sa_h.saturating_sub(sa_lb));
            unsacked.saturating_sub(lost_not_rxt)
        } else {
            let rxt_not_lost = (h - lb).saturating_sub(sa_lb.saturating_sub(sa_h));
            unsacked + rxt_not_lost
        };
        if self.cfg.flavor == TcpFlavor::Ns3 {
            self.pipe += self.rxt_sacked.bytes();
            self.pipe = self.pipe.saturating_sub(self.ns3_fin_in_pipe());
        }
    }

    /// [`TcpFlavor::Ns3`]: 1 while the pipe counts the FIN's sequence number (sent, neither
    /// acknowledged nor SACKed, not taken as lost unless resent). ns-3 3.37's `BytesInFlight`
    /// sums its sent items' payloads, and the FIN is no item's byte: the segment that carries
    /// it counts its data only.
    fn ns3_fin_in_pipe(&self) -> u64 {
        let de = self.data_end();
        let counted = self.cfg.flavor == TcpFlavor::Ns3
            && self.snd_max > de
            && self.snd_una <= de
            && self.scoreboard.containing(de).is_none()
            && (de >= self.lost_boundary || self.high_rxt > de);
        u64::from(counted)
    }

    /// [`TcpFlavor::Ns3`]'s pipe while unSACKed segments sent before the last timeout are
    /// outstanding (`mark`, that timeout's SND.MAX, above the SACK rule's lost boundary): the
    /// timeout marked every unSACKed segment lost (`SetSentListLost`), and a mark stays until
    /// the segment is SACKed or acknowledged, also once an ECN reduction has ended the
    /// timeout's CA_LOSS. Such a segment counts as out only once resent (lost and
    /// retransmitted), one resent above the mark twice (retransmitted, not lost).
    fn ns3_pipe_below_timeout_mark(&self, mark: u64) -> u64 {
        let h = self.high_rxt.max(self.snd_una);
        let unsacked_in = |a: u64, b: u64| (b - a).saturating_sub(self.sacked_below(b) - self.sacked_below(a));
        let unsacked = (self.snd_max - self.snd_una).saturating_sub(self.scoreboard.bytes());
        if mark > h {
            unsacked.saturating_sub(unsacked_in(h, mark))
        } else {
            unsacked + unsacked_in(mark, h)
        }
    }

    /// RFC 6582's rule (ns-3 3.37's `m_isFirstPartialAck`, SACK recovery too): whether this
    /// partial ACK is the first since `first_partial_seen` was last cleared, the only one that
    /// restarts the retransmission timer; it marks the flag seen.
    fn take_first_partial_ack(&mut self) -> bool {
        !std::mem::replace(&mut self.first_partial_seen, true)
    }

    /// [`TcpFlavor::Ns3`]: whether the segment at SND.UNA was resent already, so a partial ACK
    /// resends nothing (`IsRetransmittedDataAcked(ack + segment size)`: a retransmitted,
    /// unSACKed item ending one segment above the ACK, which the items answer; without them, a
    /// whole segment already resent).
    fn ns3_head_resent(&self) -> bool {
        self.ns3_item_resent_ending_at(self.snd_una + self.mss)
            .unwrap_or(self.high_rxt > self.snd_una && self.data_end().saturating_sub(self.snd_una) >= self.mss)
    }

    /// ns-3 3.37's answer to a partial ACK during SACK recovery when the segment at the new
    /// SND.UNA has not been retransmitted (`TcpSocketBase::ProcessAck` -> `DoRetransmit`): one
    /// segment goes out whatever cwnd and pipe allow, the first lost hole (NextSeg rule 1),
    /// else new data (rule 2), else the head. New data only as far as the send buffer holds
    /// it: `DoRetransmit` runs before `NewAck`, where the application writes into the room the
    /// ACK freed.
    fn partial_ack_retransmit(&mut self, now: Time, out: &mut TcpOutput) {
        let held = self.buffered_end();
        let seg = self.next_seg(false).and_then(|(s, e, kind)| match kind {
            SegKind::New if s >= held => None,
            SegKind::New if held < self.data_end() => Some((s, e.min(held), kind)),
            _ => Some((s, e, kind)),
        });
        let seg = seg.or_else(|| {
            let s = self.snd_una;
            let cap = self.hole_end(s);
            let e = self.seg_end(s, cap);
            (e > s).then_some((s, e, SegKind::Hole { skipped_to: s }))
        });
        if let Some((s, e, kind)) = seg {
            self.emit_seg(now, s, e, kind, out);
            // `DoRetransmit` sets `m_nextTxSequence` to the segment's start and sends it
            // without moving it on (ns-3 3.37's libns3-internet: `SendDataPacket`'s size is
            // not added), so the `PktsAcked` that follows sees it there.
            self.set_ns3_next_tx(s);
        }
    }

    /// RFC 6675 NextSeg; `rules_3_4` false leaves out rules 3 and 4 (ns-3's `DoRetransmit`
    /// asks for rules 1 and 2 only). Rule 3 differs by [`TcpFlavor`]: RFC 6675 (Linux)
    /// resends only holes below the highest SACKed byte, ns-3 3.37 any unSACKed segment not
    /// yet retransmitted; rule 4 (the rescue retransmission) is Linux's only.
    fn next_seg(&self, rules_3_4: bool) -> Option<(u64, u64, SegKind)> {
        let h = self.high_rxt.max(self.snd_una);
        let mut p = h;
        if let Some((_, b)) = self.scoreboard.containing(p) {
            p = b;
        }
        let cap = self.hole_end(p);
        // Rule 1: the first lost hole above HighRxt.
        if p < self.lost_boundary && p < self.snd_max {
            let e = self.seg_end(p, cap);
            if e > p {
                return Some((p, e, SegKind::Hole { skipped_to: p }));
            }
        }
        // Rule 2: new data, if the receiver's window allows.
        let limit = self.send_limit();
        if self.snd_nxt < limit && self.snd_nxt >= self.snd_max {
            let s = self.snd_nxt;
            let e = self.seg_end(s, limit);
            let data = e.min(self.data_end()).saturating_sub(s);
            let room = (self.snd_una + self.snd_wnd).saturating_sub(s);
            if e > s && (data == 0 || data <= room) {
                return Some((s, e, SegKind::New));
            }
        }
        if !rules_3_4 {
            return None;
        }
        // Rule 3: an unSACKed hole not yet retransmitted, below the highest SACKed byte (RFC
        // 6675 condition 1.b) or, as ns-3 3.37, anywhere below SND.MAX.
        let top = match self.cfg.flavor {
            TcpFlavor::Linux => self.scoreboard.last().map_or(0, |(_, b)| b),
            TcpFlavor::Ns3 => self.snd_max,
        };
        if p < top && p < self.snd_max {
            let e = self.seg_end(p, cap);
            if e > p {
                return Some((p, e, SegKind::Hole { skipped_to: p }));
            }
        }
        // Rule 4: one rescue retransmission of the highest unSACKed data per recovery. Like
        // the detection of lost retransmissions, it repairs a tail loss before the RTO; ns-3
        // 3.37 has neither.
        if self.cfg.flavor == TcpFlavor::Linux && self.rescue_rxt.is_none_or(|r| self.snd_una > r) {
            let hi = match self.scoreboard.last() {
                Some((a, b)) if b >= self.snd_max => a,
                _ => self.snd_max,
            };
            if hi > self.snd_una {
                let floor = self.scoreboard.prev_before(hi).map_or(0, |(_, b)| b);
                let lo = hi.saturating_sub(self.mss).max(self.snd_una).max(floor);
                if lo < hi {
                    return Some((lo, hi, SegKind::Rescue));
                }
            }
        }
        None
    }

    // ------------------------------------------------------------------ sending

    /// Offset one past the last data byte the application wrote.
    fn data_end(&self) -> u64 {
        1 + self.app_total
    }

    /// [`TcpFlavor::Ns3`]'s LAST_ACK: the peer's FIN is in, every byte of ours is
    /// acknowledged and our FIN is out but not yet.
    fn ns3_last_ack(&self) -> bool {
        self.cfg.flavor == TcpFlavor::Ns3
            && self.peer_fin
            && self.fin_queued
            && self.snd_una == self.data_end()
            && self.snd_max > self.data_end()
    }

    /// ns-3 3.37 resends a FIN in LAST_ACK after the RTT estimate plus max(G, 4 x its
    /// variation) (`DoPeerClose`, `LastAckTimeout`), with no minimum RTO and no backoff; G is
    /// ns-3's clock granularity, 1 ms. A receiver's estimate is usually its handshake's one
    /// sample: 1 us, as its millisecond timestamps measure 0 (see [`TcpEndpoint::rtt_on_ack`]).
    fn ns3_last_ack_timeout(&self) -> Time {
        let (srtt, var) = match self.srtt {
            Some(s) => (s, self.rttvar),
            None => (SEC, SEC / 2),
        };
        srtt.saturating_add(NS3_CLOCK_GRANULARITY.max(var.saturating_mul(4)))
    }

    /// Offset one past everything there is to send (data, then the FIN).
    fn send_limit(&self) -> u64 {
        let end = self.buffered_end();
        end + u64::from(self.fin_queued && end == self.data_end())
    }

    /// Offset one past the data in the send buffer. Unlimited in the Linux flavour (the
    /// application's bytes are all there). In the [`TcpFlavor::Ns3`] flavour, the validation's
    /// ns-3 program (`bench/ns3/scenario.cc`): its `BulkSendApplication` writes
    /// [`NS3_APP_WRITE`] bytes at a time, each only when the socket's send buffer
    /// (`SndBufSize`, set to `rcv_buf` as the receive buffer) has room for all of them, and
    /// the buffer holds everything from SND.UNA on, SACKed or not. So while a hole waits for
    /// its retransmission the sender runs out of new data and turns to RFC 6675's NextSeg
    /// rule 3, as ns-3 does. The application writes only when told (`ns3_app_una`).
    fn buffered_end(&self) -> u64 {
        let end = self.data_end();
        if self.cfg.flavor != TcpFlavor::Ns3 {
            return end;
        }
        // Data byte k is at offset 1 + k; the buffer holds bytes from SND.UNA on.
        let room = self.ns3_app_una.max(1) - 1 + u64::from(self.cfg.rcv_buf);
        if self.app_total <= room {
            end
        } else {
            1 + room / NS3_APP_WRITE * NS3_APP_WRITE
        }
    }

    /// [`TcpFlavor::Ns3`]: `SendPendingData` asks the application for more (`NotifySend`)
    /// when less than the available `window` is buffered from the segment NextSeg chose at
    /// `s`. Returns what was buffered from `s` before: the segment and the silly-window check
    /// that follow in the same round use that.
    /// The other flavour has every byte buffered and asks nothing.
    fn ns3_ask_app(&mut self, s: u64, window: u64) -> u64 {
        if self.cfg.flavor != TcpFlavor::Ns3 {
            return self.data_end().saturating_sub(s);
        }
        let held = self.buffered_end().saturating_sub(s);
        if held < window {
            self.ns3_app_una = self.snd_una;
        }
        held
    }

    /// [`TcpFlavor::Ns3`]: ns-3 3.37's silly-window check (`SendPendingData`): with less than a
    /// segment of `window`, it waits unless everything buffered from the segment NextSeg chose
    /// (`held`, `SizeFromSequence`, not the segment alone) fits in it.
    fn ns3_silly_window(&self, window: u64, held: u64) -> bool {
        window < self.mss && held > window
    }

    /// End of a segment starting at `s` of at most one MSS of data, not beyond `cap`, taking
    /// the FIN along when it fits.
    fn seg_end(&self, s: u64, cap: u64) -> u64 {
        let de = self.data_end();
        let mut e = s.saturating_add(self.mss).min(cap).min(de).max(s);
        if s < self.data_sent_end() {
            e = e.min(self.ns3_rxt_end(s));
        }
        if e == de && self.fin_queued && cap > de {
            e = de + 1;
        }
        e
    }

    /// [`TcpFlavor::Ns3`]: ns-3's send-buffer items, while any data is outstanding.
    fn ns3_items(&self) -> Option<&ItemStarts> {
        self.items.as_deref().filter(|i| !i.is_empty())
    }

    /// Offset one past the highest data byte sent (the FIN not counted).
    fn data_sent_end(&self) -> u64 {
        self.snd_max.min(self.data_end())
    }

    /// [`TcpFlavor::Ns3`]: how far a retransmission starting at `s` may reach by ns-3's
    /// `TcpTxBuffer::GetTransmittedSegment`: from the start of an item, that item and the next
    /// if the next is neither SACKed nor of another loss state, else that item alone; from
    /// inside an item, anywhere; never past the data sent (`CopyFromSequence` returns the
    /// part already sent of a range that runs into new data).
    fn ns3_rxt_end(&self, s: u64) -> u64 {
        let sent = self.data_sent_end();
        let Some(items) = self.ns3_items() else {
            return u64::MAX;
        };
        if !items.contains(s) {
            return sent;
        }
        let next = |x: u64| items.next_after(x).unwrap_or(sent).min(sent);
        let b1 = next(s);
        if b1 >= sent {
            return sent;
        }
        // Without SACK the flags are ns-3's guesses: the head lost (`MarkHeadAsLost`), the
        // `reno_sacked` items after it arrived (`AddRenoSack`).
        let reno = self.reno();
        let lost = |x: u64| x < self.lost_boundary || (reno && self.reno_head_lost && x == self.snd_una);
        let next_sacked = self.scoreboard.containing(b1).is_some()
            || (reno && (1..=u64::from(self.reno_sacked)).contains(&(items.rank(b1) as u64)));
        if !next_sacked && lost(s) == lost(b1) {
            next(b1)
        } else {
            b1
        }
    }

    /// [`TcpFlavor::Ns3`]: whether an item of the send buffer ends at `x`, was retransmitted
    /// and is not SACKed (`TcpTxBuffer::IsRetransmittedDataAcked`); `None` without items.
    fn ns3_item_resent_ending_at(&self, x: u64) -> Option<bool> {
        let items = self.ns3_items()?;
        let sent = self.data_sent_end();
        if x != sent && !items.contains(x) {
            return Some(false);
        }
        let Some(b) = items.last_at_or_before(x.saturating_sub(1)) else {
            return Some(false);
        };
        Some(b < x && b < self.high_rxt && self.scoreboard.containing(b).is_none())
    }

    /// [`TcpFlavor::Ns3`]: the part of SACK block `[l, r)` made of whole items (ns-3's
    /// `TcpTxBuffer::Update` marks an item only if the block covers all of it); the block
    /// itself in the other flavour.
    fn ns3_whole_items(&self, l: u64, r: u64) -> (u64, u64) {
        let Some(items) = self.ns3_items() else {
            return (l, r);
        };
        let sent = self.data_sent_end();
        let l = items.first_at_or_after(l).unwrap_or(sent).max(l);
        let r = if r >= sent {
            r
        } else {
            items.last_at_or_before(r).unwrap_or(l)
        };
        (l, r)
    }

    /// [`TcpFlavor::Ns3`]: sending `[s, e)` makes it one item of the send buffer (new data
    /// appends one; a retransmission merges or splits what it covers).
    fn ns3_note_items(&mut self, s: u64, e: u64) {
        let de = self.data_end();
        let sent = self.data_sent_end();
        let Some(items) = self.items.as_deref_mut() else {
            return;
        };
        let e = e.min(de);
        if s >= e {
            return;
        }
        if s >= sent {
            items.insert(s);
            return;
        }
        items.remove_between(s, e);
        items.insert(s);
        if e < sent {
            items.insert(e);
        } else if e > sent {
            items.insert(sent);
        }
    }

    fn needs_persist(&self) -> bool {
        self.phase == Phase::Open
            && self.snd_una >= self.snd_max
            && self.snd_nxt < self.data_end()
            && (self.snd_una + self.snd_wnd) <= self.snd_nxt
    }

    fn try_send(&mut self, now: Time, out: &mut TcpOutput) {
        if self.phase != Phase::Open {
            return;
        }
        if self.ns3_fin_wait_open() {
            // ns-3 3.37's `SendPendingData` sends nothing in FIN_WAIT_1 while the congestion
            // state is CA_OPEN ("FIN_WAIT and OPEN state; no data to transmit"): a segment
            // that an ACK ending a recovery leaves lost waits for the retransmission timer.
        } else if self.recovery == Recovery::Sack {
            self.send_sack_recovery(now, out);
        } else {
            if self.cfg.flavor == TcpFlavor::Ns3 && self.sack_ok {
                self.send_lost_holes(now, out);
            }
            if self.reno() && self.snd_nxt >= self.snd_max {
                self.send_reno(now, out);
            } else {
                self.send_window(now, out);
            }
        }
        if self.needs_persist() {
            if self.persist_at.is_none() {
                let r = self.rto();
                self.persist_at = Some(now.saturating_add(r));
            }
        } else {
            self.persist_at = None;
        }
    }

    /// [`TcpFlavor::Ns3`] outside a timeout's loss state: the bytes a recovery resent that are
    /// neither acknowledged, SACKed nor lost since. ns-3's `BytesInFlight` (sent bytes less
    /// SACKed and lost ones, plus resent ones) counts such a segment twice, the original and
    /// the copy, as long as its `m_retrans` flag lasts, which is past the recovery's end;
    /// those are the segments between the lost boundary and HighRxt (what NextSeg rule 3
    /// resent above the highest SACK, say).
    /// A timeout's go-back-N resends are lost and resent, counted once; they all lie below
    /// the SND.MAX of the last timeout, which bounds the range (an ECN reduction can end the
    /// timeout's loss state before the ACK reaches that point).
    fn ns3_resent_unlost(&self) -> u64 {
        if !self.sack_ok || self.in_loss {
            return 0;
        }
        let a = self.lost_boundary.max(self.snd_una).max(self.ns3_rto_mark);
        let b = self.high_rxt.min(self.snd_max);
        if a >= b {
            return 0;
        }
        (b - a).saturating_sub(self.sacked_below(b) - self.sacked_below(a))
    }

    /// [`TcpFlavor::Ns3`]: ns-3's FIN_WAIT_1 (our FIN is out and not acknowledged, the peer's
    /// not in) in CA_OPEN (no recovery, no timeout's loss state, no ECN reduction, no
    /// duplicate ACK counted).
    fn ns3_fin_wait_open(&self) -> bool {
        self.cfg.flavor == TcpFlavor::Ns3
            && self.fin_queued
            && self.snd_max > self.data_end()
            && self.snd_una <= self.data_end()
            && !self.peer_fin
            && self.recovery == Recovery::None
            && !self.in_loss
            && !self.in_cwr
            && !self.cwr_repair
            && self.dupacks == 0
    }

    /// [`TcpFlavor::Ns3`] outside loss recovery: ns-3 3.37's `SendPendingData` asks NextSeg in
    /// every state, so a segment the scoreboard marks lost (rule 1) goes out again before new
    /// data as soon as an ACK's SACK blocks make it so, also before the duplicate ACK that
    /// starts recovery (in CA_DISORDER, say), as cwnd - pipe allows.
    /// Not while a timeout's go-back-N resend is under way (SND.NXT below SND.MAX), which
    /// resends in order and skips what was SACKed (see [`TcpEndpoint::send_window`]).
    fn send_lost_holes(&mut self, now: Time, out: &mut TcpOutput) {
        if self.lost_boundary <= self.snd_una || self.snd_nxt < self.snd_max {
            return;
        }
        loop {
            self.compute_pipe();
            if self.cc.cwnd().saturating_sub(self.pipe) < self.mss {
                break;
            }
            match self.next_seg(false) {
                Some((s, e, kind @ SegKind::Hole { .. })) => self.emit_seg(now, s, e, kind, out),
                _ => break,
            }
        }
    }

    /// ns-3's `m_nextTxSequence`.
    fn ns3_next_tx(&self) -> u64 {
        self.snd_max - u64::from(self.ns3_next_back)
    }

    /// Moves ns-3's `m_nextTxSequence` up to `x` if it is below (`NewAck`); `SendPendingData`'s
    /// sends set it to their end (in `emit_range`), `DoRetransmit` to its segment's start.
    fn ns3_next_tx_at_least(&mut self, x: u64) {
        if x > self.ns3_next_tx() {
            self.set_ns3_next_tx(x);
        }
    }

    /// Sets ns-3's `m_nextTxSequence` to `x` (at most SND.MAX).
    fn set_ns3_next_tx(&mut self, x: u64) {
        self.ns3_next_back = self.snd_max.saturating_sub(x).min(u64::from(u32::MAX)) as u32;
    }

    /// [`TcpFlavor::Ns3`] without SACK.
    fn reno(&self) -> bool {
        self.cfg.flavor == TcpFlavor::Ns3 && !self.sack_ok
    }

    /// Segments outstanding, as ns-3's items (full segments, the last maybe short).
    fn reno_items(&self) -> u64 {
        if let Some(items) = self.ns3_items() {
            return items.len() as u64;
        }
        self.snd_max
            .min(self.data_end())
            .saturating_sub(self.snd_una)
            .div_ceil(self.mss)
    }

    /// ns-3's items' bytes: the head (item 0) and the `k` items after it (`None` without
    /// items: whole segments are assumed).
    fn reno_item_bytes(&self, k: u64) -> Option<(u64, u64)> {
        let items = self.ns3_items()?;
        let sent = self.data_sent_end();
        let start = |i: u64| {
            usize::try_from(i)
                .ok()
                .and_then(|i| items.get(i))
                .unwrap_or(sent)
                .min(sent)
        };
        let (h0, h1) = (start(0).max(self.snd_una), start(1));
        Some((h1.saturating_sub(h0), start(k + 1).saturating_sub(h1)))
    }

    /// `AddRenoSack`: the first segment after the head not yet guessed arrived is.
    fn reno_add_sack(&mut self) {
        if u64::from(self.reno_sacked) + 1 < self.reno_items() {
            self.reno_sacked = self.reno_sacked.saturating_add(1);
        }
    }

    /// `MarkHeadAsLost`: lost, and not resent (a resent head loses that flag too).
    fn reno_mark_head_lost(&mut self) {
        self.reno_head_lost = true;
        self.reno_head_resent = false;
    }

    /// `DoRetransmit`: the head again, whatever the window. It leaves ns-3's
    /// `m_nextTxSequence` at the head, not where it was: a partial ACK's `PktsAcked`, which
    /// comes next, starts DCTCP's next observation window there, so that the next ACK, a
    /// duplicate one too, closes it again.
    fn reno_resend_head(&mut self, now: Time, out: &mut TcpOutput) {
        if self.snd_una < self.snd_max {
            let s = self.snd_una;
            let e = self.seg_end(s, self.snd_max);
            self.emit_range(now, s, e, out);
            self.set_ns3_next_tx(s);
            self.reno_head_resent = true;
        }
    }

    /// `TcpTxBuffer::DiscardUpTo` after `acked` bytes, `whole_items` of the send buffer's items
    /// whole (counted as full segments where no items are kept): the items acknowledged leave (the
    /// guessed ones among them); if the new head was guessed arrived, ns-3 takes the guess
    /// back, guesses the next segment instead (if one is left to guess), and marks the head
    /// lost, so `SendPendingData` resends it (NextSeg rule 1), lost or not, as soon as it
    /// sends at all (not in FIN_WAIT_1 while CA_OPEN: after the next duplicate ACK, then).
    fn reno_discard(&mut self, acked: u64, whole_items: u64) {
        let items = if self.items.is_some() {
            whole_items
        } else {
            acked / self.mss
        };
        if items == 0 {
            return;
        }
        self.reno_head_lost = false;
        self.reno_head_resent = false;
        let gone = (items - 1).min(u64::from(self.reno_sacked)) as u16;
        self.reno_sacked -= gone;
        // Guesses live on items: none outlasts the items it was made on (an ACK of everything
        // outstanding leaves none). A guess left on the new head counts, also when no item
        // follows it to take the guess over: the head is then marked lost all the same.
        let held = self.reno_items();
        self.reno_sacked = self.reno_sacked.min(u16::try_from(held).unwrap_or(u16::MAX));
        if self.reno_sacked > 0 && self.snd_una < self.snd_max {
            self.reno_sacked -= 1;
            self.reno_add_sack();
            self.reno_mark_head_lost();
        }
    }

    /// The bytes of [s, e) that a pipe counts: all of them, but in [`TcpFlavor::Ns3`] not the
    /// FIN (`ns3_fin_in_pipe`).
    fn pipe_bytes(&self, s: u64, e: u64) -> u64 {
        match self.cfg.flavor {
            TcpFlavor::Ns3 => e.min(self.data_end().max(s)) - s,
            TcpFlavor::Linux => e - s,
        }
    }

    /// ns-3's `BytesInFlight` without SACK: outstanding bytes (the FIN not counted) less the
    /// guessed-arrived segments and a lost head not yet resent.
    fn reno_pipe(&self) -> u64 {
        let out = self.pipe_bytes(self.snd_una, self.snd_max);
        let (head, sacked) = match self.reno_item_bytes(u64::from(self.reno_sacked)) {
            Some((head, sacked)) => (head.min(out), sacked.min(out - head.min(out))),
            None => {
                let head = out.min(self.mss);
                (head, (u64::from(self.reno_sacked) * self.mss).min(out - head))
            }
        };
        let lost = if self.reno_head_lost && !self.reno_head_resent {
            head
        } else {
            0
        };
        out - sacked - lost
    }

    /// [`TcpFlavor::Ns3`] without SACK, outside a timeout's go-back-N: ns-3 3.37's
    /// `SendPendingData`. While cwnd (or the peer's window) exceeds the pipe: a lost head
    /// first (NextSeg rule 1), then new data (rule 2); less than a segment of window is used
    /// only when the rest of the send buffer fits in it.
    fn send_reno(&mut self, now: Time, out: &mut TcpOutput) {
        loop {
            let win = self.cc.cwnd().min(self.snd_wnd);
            let pipe = self.reno_pipe();
            if pipe >= win {
                break;
            }
            let room = win - pipe;
            if self.reno_head_lost && !self.reno_head_resent && self.snd_una < self.snd_max {
                let held = self.ns3_ask_app(self.snd_una, room);
                if self.ns3_silly_window(room, held) {
                    break;
                }
                let e = self.seg_end(self.snd_una, self.snd_max);
                self.emit_range(now, self.snd_una, e, out);
                self.reno_head_resent = true;
                continue;
            }
            let s = self.snd_max;
            let limit = self.send_limit();
            if s >= limit || s - self.snd_una >= self.snd_wnd {
                break;
            }
            let data = self.ns3_ask_app(s, room);
            if self.ns3_silly_window(room, data) {
                break;
            }
            // The window limits data, not the FIN: it rides on the segment that empties the
            // send buffer (ns-3's `SendDataPacket`, `m_closeOnEmpty`), as in `send_window`.
            let mut cap = s + room.min(self.mss);
            if cap == self.data_end() {
                cap += 1;
            }
            let e = self.seg_end(s, limit.min(cap));
            if e <= s {
                break;
            }
            self.emit_range(now, s, e, out);
            self.snd_nxt = e;
        }
    }

    /// Window-based sending (RFC 5681): from SND.NXT while flight < min(cwnd, rwnd). After a
    /// timeout SND.NXT is below the highest sequence sent and this goes back N, skipping
    /// whatever SACK information arrived since (RFC 6675 §5.1).
    fn send_window(&mut self, now: Time, out: &mut TcpOutput) {
        loop {
            let limit = self.send_limit();
            if self.snd_nxt >= limit {
                break;
            }
            let mut s = self.snd_nxt;
            let mut cap = limit;
            if s < self.snd_max {
                if let Some((_, b)) = self.scoreboard.containing(s) {
                    self.snd_nxt = b.min(self.snd_max).max(s + 1);
                    continue;
                }
                cap = cap.min(self.snd_max);
                if let Some((a, _)) = self.scoreboard.next_from(s) {
                    cap = cap.min(a);
                }
            }
            let mut e = self.seg_end(s, cap);
            if e <= s {
                break;
            }
            let data = e.min(self.data_end()).saturating_sub(s);
            // A bare FIN going out again (after a timeout) waits for the window like data: it
            // must not slip out beside the one segment a timeout allows.
            let bare_fin_again = data == 0 && s < self.snd_max;
            if data > 0 || bare_fin_again {
                // Bytes in flight as RFC 6675's pipe counts them: SACKed bytes have left the
                // network. (After a timeout, go-back-N skips SACKed ranges; counting them as
                // in flight would hold back the retransmissions cwnd allows, as neither ns-3
                // nor Linux do.)
                let mut flight = s - self.snd_una - self.sacked_below(s);
                if self.cfg.flavor == TcpFlavor::Ns3 {
                    // ns-3 keeps a retransmitted segment in flight after it is SACKed, until
                    // the cumulative ACK passes it (`m_retrans` survives the SACK).
                    flight += self.rxt_sacked.bytes();
                    flight += self.ns3_resent_unlost();
                }
                let mut cwnd = self.cc.cwnd();
                // ns-3 3.37 sends limited transmit only in CA_DISORDER (`DupAck`), never while a
                // timeout's CA_LOSS lasts.
                let ns3_loss = self.cfg.flavor == TcpFlavor::Ns3 && self.in_loss;
                if self.recovery == Recovery::None && self.dupacks > 0 && s >= self.snd_max && !ns3_loss {
                    if self.sack_ok {
                        // RFC 6675 §5 step (3): limited transmit governed by pipe and cwnd
                        // (SACKed bytes have left the network).
                        self.compute_pipe();
                        flight = self.pipe;
                    } else {
                        // RFC 3042 limited transmit: up to two segments beyond cwnd.
                        cwnd += u64::from(self.dupacks.min(2)) * self.mss;
                    }
                }
                let room_c = cwnd.saturating_sub(flight);
                let room_r = (self.snd_una + self.snd_wnd).saturating_sub(s);
                let avail = cwnd.min(self.snd_wnd).saturating_sub(flight);
                let held = self.ns3_ask_app(s, avail);
                if self.cfg.flavor == TcpFlavor::Ns3 && self.ns3_silly_window(avail, held) {
                    // A short segment that fits (a timeout resending an application write's
                    // tail) waits while more data is held behind it.
                    break;
                }
                if bare_fin_again && room_c == 0 {
                    break;
                }
                if data > room_c.min(room_r) {
                    // Sender-side silly window avoidance (RFC 9293 §3.8.6.2.1): send less than
                    // a full segment only into at least half the peer's largest window, or
                    // when nothing is outstanding.
                    let flightless = self.snd_una == s;
                    if data <= room_c && room_r > 0 && (flightless || room_r >= self.max_snd_wnd / 2) {
                        e = s + room_r;
                    } else {
                        break;
                    }
                }
            }
            if self.cfg.flavor == TcpFlavor::Ns3 && self.sack_ok && s < self.snd_max {
                // ns-3 flags every retransmission (`m_retrans`), also a timeout's go-back-N
                // resend: HighRxt follows it, so that NextSeg rule 1 does not pick it again.
                let h = self.high_rxt.max(self.snd_una);
                let top = e.min(self.snd_max);
                if top > h {
                    self.sacked_below_rxt += self.sacked_below(s.max(h)) - self.sacked_below(h);
                    self.high_rxt = top;
                }
            }
            self.emit_range(now, s, e, out);
            s = e;
            self.snd_nxt = s;
        }
    }

    fn send_sack_recovery(&mut self, now: Time, out: &mut TcpOutput) {
        loop {
            // ns-3 3.37 sends while `AvailableWindow` (the smaller of cwnd and the peer's
            // window, less `BytesInFlight`) allows: the peer's window bounds the pipe here too.
            let win = if self.cfg.flavor == TcpFlavor::Ns3 {
                self.cc.cwnd().min(self.snd_wnd)
            } else {
                self.cc.cwnd()
            };
            let room = win.saturating_sub(self.pipe);
            if room < self.mss {
                // ns-3 3.37 (`SendPendingData`, its silly-window check) uses less than a segment
                // of window only for the segment NextSeg chose when everything from it to the
                // end of the send buffer fits: the stream's last, short segment.
                if self.cfg.flavor != TcpFlavor::Ns3 {
                    break;
                }
                let Some((s, e, kind)) = self.next_seg(!self.cwr_repair) else {
                    break;
                };
                let held = self.ns3_ask_app(s, room);
                if self.ns3_silly_window(room, held) {
                    break;
                }
                self.emit_seg(now, s, e, kind, out);
                continue;
            }
            if let Some((s, e)) = self.next_lost_rxt() {
                // A retransmission that was itself lost goes out again first.
                self.emit_range(now, s, e, out);
                self.rxt_sent.push_back((s, e, self.snd_max));
                self.pipe += e - s;
                continue;
            }
            let Some((s, e, kind)) = self.next_seg(!self.cwr_repair) else {
                break;
            };
            self.ns3_ask_app(s, room);
            self.emit_seg(now, s, e, kind, out);
        }
    }

    /// Sends one segment NextSeg chose during SACK recovery and keeps HighRxt, pipe and the
    /// retransmission records in step.
    fn emit_seg(&mut self, now: Time, s: u64, e: u64, kind: SegKind, out: &mut TcpOutput) {
        self.emit_range(now, s, e, out);
        let mut added = e - s;
        if self.cfg.flavor == TcpFlavor::Ns3 {
            // ns-3's `BytesInFlight` counts a resent item once more only the first time
            // (`m_retransOut` grows when `m_retrans` is set): bytes below HighRxt were resent
            // already (a partial ACK's `DoRetransmit` resending the head again); and it
            // counts no FIN (`pipe_bytes`).
            let e = s + self.pipe_bytes(s, e);
            added = e - s.max(self.high_rxt.max(self.snd_una)).min(e);
        }
        match kind {
            SegKind::Hole { skipped_to } => {
                let h = self.high_rxt.max(self.snd_una);
                self.sacked_below_rxt += skipped_to.saturating_sub(h);
                self.high_rxt = e.max(h);
                self.rxt_sent.push_back((s, e, self.snd_max));
            }
            SegKind::New => self.snd_nxt = e,
            SegKind::Rescue => self.rescue_rxt = Some(self.recover),
        }
        self.pipe += added;
    }

    /// Transmits sequence range [s, e) (data, and the FIN if `e` passes the data end).
    fn emit_range(&mut self, now: Time, s: u64, e: u64, out: &mut TcpOutput) {
        self.ns3_note_items(s, e);
        let de = self.data_end();
        let payload = e.min(de).saturating_sub(s);
        let fin = e > de && self.fin_queued;
        let retx = s < self.snd_max;
        if fin && payload > 0 && e > self.snd_max {
            self.fin_with_data = true;
        }
        let mut flags = Flags::ACK;
        if fin {
            flags |= Flags::FIN;
        }
        if payload > 0 && e >= de {
            flags |= Flags::PSH;
        }
        if self.cwr_pending && !retx && payload > 0 {
            flags |= Flags::CWR;
            self.cwr_pending = false;
            self.cwr_seq = s;
            self.ece_rcvd = false;
        }
        let payload32 = payload.min(u64::from(u32::MAX)) as u32;
        let mut p = self.build(now, s, flags, payload32);
        if self.ecn_ok && payload > 0 && (!retx || self.dctcp || self.cfg.flavor == TcpFlavor::Ns3) {
            // RFC 3168 §6.1.5: no ECT on retransmissions (DCTCP keeps it, as Linux; ns-3 3.37
            // marks every segment with payload).
            p.ecn = Ecn::Ect0;
        }
        if payload > 0 {
            self.stats.data_segments_sent += 1;
            self.stats.bytes_sent += payload;
        }
        if retx {
            self.karn_until = self.karn_until.max(e);
            self.stats.retransmits += 1;
            self.stats.bytes_retransmitted += payload;
            self.timed = None; // Karn
        } else if self.ns3_history() {
            if payload > 0 {
                self.ns3_rtt_history.push_back((e, now));
            }
        } else if self.timed.is_none() {
            self.timed = Some((e, now));
        }
        self.snd_max = self.snd_max.max(e);
        self.set_ns3_next_tx(e);
        if fin && payload == 0 && self.close_on_peer_close && self.fin_rxt_at == 0 && self.cfg.flavor == TcpFlavor::Ns3
        {
            // `SendEmptyPacket`'s m_rto: the LAST_ACK wait, at least the minimum RTO.
            self.fin_rxt_at = now.saturating_add(self.ns3_last_ack_timeout().max(self.cfg.min_rto));
        }
        if self.rto_at.is_none() {
            let wait = if self.ns3_last_ack() {
                self.ns3_last_ack_timeout()
            } else {
                self.rto()
            };
            self.rto_at = Some(now.saturating_add(wait));
        }
        out.packets.push(p);
    }

    fn send_ack(&mut self, now: Time, out: &mut TcpOutput) {
        self.send_ack_for(now, self.rcv_nxt, out);
    }

    /// A pure ACK for `ack` (an offset at or below RCV.NXT) instead of RCV.NXT; it cancels the
    /// delayed ACK as any ACK does.
    fn send_ack_for(&mut self, now: Time, ack: u64, out: &mut TcpOutput) {
        if self.phase != Phase::Open {
            return;
        }
        let last = self.last_ack_sent;
        let mut p = self.build(now, self.snd_max, Flags::ACK, 0);
        p.ack = to_wire(self.irs, ack);
        self.last_ack_sent = last.max(ack);
        self.stats.pure_acks_sent += 1;
        out.packets.push(p);
    }

    fn flush_ack(&mut self, now: Time, out: &mut TcpOutput) {
        if self.ack_now {
            self.send_ack(now, out);
        }
    }

    /// The window this end advertises. Linux takes the bytes held out of order from its
    /// buffer; ns-3 3.37 does not (`TcpRxBuffer::MaxRxSequence` is RCV.NXT plus the whole
    /// buffer while a hole is open), so its right edge keeps moving while a lost segment waits
    /// for its retransmission.
    fn rcv_window(&self) -> u32 {
        if self.cfg.flavor == TcpFlavor::Ns3 {
            return self.cfg.rcv_buf;
        }
        self.cfg
            .rcv_buf
            .saturating_sub(self.ooo.bytes().min(u64::from(u32::MAX)) as u32)
    }

    fn base_packet(&self, now: Time, seq_off: u64, flags: Flags) -> Packet {
        // ns-3 3.37's DCTCP (`DctcpEcn` mode) sends every segment ECT, SYNs, SYN-ACKs and pure
        // ACKs included, so switches mark them as they mark data; RFC 3168 and Linux's classic
        // ECN keep them not-ECT. (Data segments get their codepoint in `emit_range`.)
        let ect = self.dctcp
            && self.cfg.flavor == TcpFlavor::Ns3
            && (self.ecn_ok || (flags.contains(Flags::SYN) && !flags.contains(Flags::ACK) && self.ecn_wanted));
        Packet {
            created: now,
            flow: self.ids.flow,
            src: self.ids.local,
            dst: self.ids.remote,
            src_port: self.ids.local_port,
            dst_port: self.ids.remote_port,
            seq: to_wire(self.iss, seq_off),
            flags,
            proto: Proto::Tcp,
            ecn: if ect { Ecn::Ect0 } else { Ecn::NotEct },
            ..Packet::default()
        }
    }

    /// A non-SYN segment carrying the current ACK, window, SACK blocks and timestamps.
    fn build(&mut self, now: Time, seq_off: u64, mut flags: Flags, payload: u32) -> Packet {
        // Linux puts two NOPs before the timestamps and the SACK option; ns-3 3.37 none, and
        // pads only the end of the list (see `SynOptions::wire_len`): done below.
        let nops = if self.cfg.flavor == TcpFlavor::Ns3 { 0 } else { 2 };
        let mut options = 0;
        if self.ts_ok {
            options += nops + TS_OPTION;
        }
        let mut p = self.base_packet(now, seq_off, flags);
        p.payload = payload;
        if flags.contains(Flags::ACK) {
            p.ack = to_wire(self.irs, self.rcv_nxt);
            let ece = if self.dctcp { self.ce_state } else { self.ece_pending };
            // ns-3 3.37 sets ECE only on the pure ACKs its receive path sends (`ReceivedData`,
            // `DelAckTimeout`, DCTCP's CE-change ACK): never on a bare FIN (`SendEmptyPacket`),
            // the ACK of the peer's FIN ([`TcpEndpoint::ns3_plain_ack`]) nor on data
            // (`SendDataPacket`), even where its DCTCP's CE state is set by CE-marked ACKs that
            // crossed a congested port (ns-3's DCTCP sends its ACKs ECT).
            let plain = std::mem::take(&mut self.ns3_plain_ack);
            let no_ece = self.cfg.flavor == TcpFlavor::Ns3 && (payload > 0 || flags.contains(Flags::FIN) || plain);
            if self.ecn_ok && ece && !no_ece {
                flags |= Flags::ECE;
                self.ce_unechoed = false;
            }
            if self.sack_ok && !self.ooo.is_empty() {
                // Kind and length, then 8 bytes a block: 3 blocks fit with timestamps, 4
                // (`MAX_SACK`) without, in either layout, and Linux and ns-3 send as many.
                let lead = nops + 2;
                let n = self.fill_sack(&mut p, ((MAX_OPTIONS - options - lead) / 8) as usize);
                if n > 0 {
                    options += lead + 8 * n as u32;
                }
            }
            self.last_ack_sent = self.rcv_nxt;
            self.ack_now = false;
            self.delack_at = None;
            self.delack_bytes = 0;
        }
        p.flags = flags;
        let wnd = self.rcv_window();
        p.window = wnd;
        self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + u64::from(wnd));
        if self.ts_ok {
            p.ts = true;
            p.ts_ecr = self.ts_recent;
        }
        p.size = L2_L3_HEADER + TCP_HEADER + options.next_multiple_of(4) + payload;
        self.stats.segments_sent += 1;
        p
    }

    /// RFC 2018 §4: the block holding the most recent arrival first, then the most recently
    /// reported others, then any remaining ranges from the lowest up.
    fn fill_sack(&self, p: &mut Packet, room: usize) -> usize {
        let room = room.min(MAX_SACK);
        let mut blocks = [(0u64, 0u64); MAX_SACK];
        let mut n = 0;
        if self.cfg.flavor == TcpFlavor::Ns3 {
            // ns-3 reports the first blocks of its list that fit, and no others.
            n = self.ns3_sack_len.min(room);
            blocks[..n].copy_from_slice(&self.ns3_sack[..n]);
            return self.write_sack(p, &blocks[..n]);
        }
        let recent = self.sack_recent[..self.sack_recent_len]
            .iter()
            .filter_map(|&x| self.ooo.containing(x));
        for iv in recent.chain(self.ooo.iter()) {
            if n == room {
                break;
            }
            if !blocks[..n].contains(&iv) {
                blocks[n] = iv;
                n += 1;
            }
        }
        self.write_sack(p, &blocks[..n])
    }

    /// Puts `blocks` (offsets) into `p`'s SACK option; returns how many.
    fn write_sack(&self, p: &mut Packet, blocks: &[(u64, u64)]) -> usize {
        for (i, &(a, b)) in blocks.iter().enumerate() {
            p.sack[i] = (to_wire(self.irs, a), to_wire(self.irs, b));
        }
        p.sack_len = blocks.len() as u8;
        blocks.len()
    }

    /// [`TcpFlavor::Ns3`]: ns-3 3.37's `TcpRxBuffer::UpdateSackList` for the new bytes `[a, b)`
    /// of an out-of-order arrival. The block goes first; a listed block that ends where it
    /// starts or starts where it ends is merged into it (exact adjacency only), the search
    /// starting again after each merge; a fifth block falls off the end. A range that fell
    /// off is not reported again, and new bytes next to it are reported without it (RFC
    /// 2018's receiver reports every range it holds, as [`TcpEndpoint::fill_sack`] does for
    /// Linux).
    fn ns3_sack_arrival(&mut self, a: u64, b: u64) {
        let mut list = [(0u64, 0u64); 5];
        list[0] = (a, b);
        list[1..=self.ns3_sack_len].copy_from_slice(&self.ns3_sack[..self.ns3_sack_len]);
        let mut n = self.ns3_sack_len + 1;
        let mut i = 1;
        while i < n {
            let ((bf, bs), (cf, cs)) = (list[0], list[i]);
            let merged = if bf == cs {
                Some((cf, bs))
            } else if bs == cf {
                Some((bf, cs))
            } else {
                None
            };
            if let Some(m) = merged {
                list.copy_within(i + 1..n, i);
                n -= 1;
                list[0] = m;
                i = 1;
            } else {
                i += 1;
            }
        }
        self.ns3_sack_len = n.min(4);
        self.ns3_sack.copy_from_slice(&list[..4]);
    }

    /// [`TcpFlavor::Ns3`]: `TcpRxBuffer::ClearSackList`, blocks the cumulative ACK has passed go.
    fn ns3_sack_clear(&mut self) {
        let mut n = 0;
        for i in 0..self.ns3_sack_len {
            if self.ns3_sack[i].1 > self.rcv_nxt {
                self.ns3_sack[n] = self.ns3_sack[i];
                n += 1;
            }
        }
        self.ns3_sack_len = n;
    }

    fn note_sack_arrival(&mut self, x: u64) {
        let Some(cur) = self.ooo.containing(x) else { return };
        let mut list = [0u64; SACK_RECENT];
        let mut seen = [(0u64, 0u64); SACK_RECENT];
        list[0] = x;
        seen[0] = cur;
        let mut n = 1;
        for &y in &self.sack_recent[..self.sack_recent_len] {
            if n == SACK_RECENT {
                break;
            }
            if let Some(iv) = self.ooo.containing(y) {
                if !seen[..n].contains(&iv) {
                    list[n] = y;
                    seen[n] = iv;
                    n += 1;
                }
            }
        }
        self.sack_recent = list;
        self.sack_recent_len = n;
    }

    // ------------------------------------------------------------------ receiving

    fn process_data(&mut self, now: Time, pkt: &Packet, seq: u64, out: &mut TcpOutput) {
        let len = u64::from(pkt.payload);
        if self.cfg.flavor == TcpFlavor::Ns3 && self.ns3_wholly_below_rcv_nxt(pkt, seq) {
            // ns-3 3.37's `IsValidTcpSegment`: data wholly below RCV.NXT is answered at once
            // with a plain ACK (`SendEmptyPacket(ACK)`: no ECE, whatever the receiver's ECN
            // state) and dropped before its ECN codepoint (a DCTCP CE-state change, say) or
            // its flags are looked at.
            self.stats.duplicate_arrivals += 1;
            let (ce_state, ece_pending) = (self.ce_state, self.ece_pending);
            self.ce_state = false;
            self.ece_pending = false;
            self.send_ack(now, out);
            self.ce_state = ce_state;
            self.ece_pending = ece_pending;
            return;
        }
        let ce = pkt.ecn == Ecn::Ce;
        if ce {
            self.stats.ecn_marks_received += 1;
        }
        // RFC 7323 §4.3: TS.Recent from segments that start at or before Last.ACK.sent.
        if self.ts_ok && pkt.ts_val() != 0 && seq <= self.last_ack_sent && pkt.ts_val() >= self.ts_recent {
            self.ts_recent = pkt.ts_val();
        }
        if self.ecn_ok {
            if self.dctcp && self.cfg.flavor == TcpFlavor::Ns3 {
                // ns-3 takes the CE event in `ForwardUp`, before the segment's own processing,
                // for every ECN-capable segment: a pure ACK (the handshake's, say) counts too.
                if pkt.ecn != Ecn::NotEct {
                    self.ns3_dctcp_ce_event(now, pkt, seq, out);
                }
            } else if self.dctcp {
                if len > 0 && ce != self.ce_state {
                    // RFC 8257 §3.2: on a CE change, first ACK what was delayed with the old
                    // state, then ACK this segment at once with the new one.
                    if self.delack_at.is_some() {
                        self.send_ack(now, out);
                    }
                    self.ce_state = ce;
                    self.ack_now = true;
                }
            } else {
                // RFC 3168: echo until CWR. ns-3 3.37 (`ForwardUp`, `DoForwardUp`) counts a CE
                // mark only above the last that counted (`m_ecnCESeq`), and a CWR stops the
                // echo only when every CE mark has been echoed (not in `ECN_CE_RCVD`).
                let ns3 = self.cfg.flavor == TcpFlavor::Ns3;
                let ce = if ns3 { self.ns3_ce_counts(pkt, seq) } else { ce };
                if pkt.has(Flags::CWR) && !self.ce_unechoed {
                    self.ece_pending = false;
                }
                if ce {
                    self.ece_pending = true;
                    if ns3 {
                        self.ce_seq = seq;
                        self.ce_unechoed = true;
                    }
                }
            }
        }
        if len > 0 {
            let end = seq + len;
            let limit = self.rcv_adv.max(self.rcv_nxt + u64::from(self.rcv_window()));
            let s = seq.max(self.rcv_nxt);
            let e = end.min(limit);
            if end <= self.rcv_nxt {
                self.stats.duplicate_arrivals += 1;
                self.ack_now = true;
            } else if s >= e {
                self.ack_now = true;
            } else if s == self.rcv_nxt {
                let had_ooo = !self.ooo.is_empty();
                self.rcv_nxt = e;
                if had_ooo {
                    while let Some((a, b)) = self.ooo.first() {
                        if a > self.rcv_nxt {
                            break;
                        }
                        self.rcv_nxt = self.rcv_nxt.max(b);
                        self.ooo.remove_below(self.rcv_nxt, |_, _| {});
                    }
                    // RFC 5681 §4.2: ACK at once when data fills (part of) a gap.
                    self.ack_now = true;
                }
                if e < end {
                    self.ack_now = true;
                }
                if self.ns3_sack_len > 0 {
                    self.ns3_sack_clear();
                }
                self.deliver(out);
                match self.cfg.delayed_ack {
                    DelayedAck::Off => self.ack_now = true,
                    DelayedAck::On { timeout } => {
                        // Linux counts bytes (an ACK for every two full segments' worth);
                        // ns-3 3.37 counts segments (`m_delAckCount`), whatever their size,
                        // so a short segment after a full one is ACKed at once.
                        self.delack_bytes += if self.cfg.flavor == TcpFlavor::Ns3 {
                            self.mss
                        } else {
                            e - s
                        };
                        if self.delack_bytes >= 2 * self.mss {
                            self.ack_now = true;
                        } else if !self.ack_now && self.delack_at.is_none() {
                            self.delack_at = Some(now.saturating_add(timeout));
                        }
                    }
                }
                self.delack_reserved = !self.ack_now;
            } else {
                let mut new = (u64::MAX, 0);
                self.ooo.insert(s, e, |a, b| new = (new.0.min(a), new.1.max(b)));
                if self.cfg.flavor == TcpFlavor::Ns3 {
                    if new.0 < new.1 {
                        self.ns3_sack_arrival(new.0, new.1);
                    }
                } else {
                    self.note_sack_arrival(s);
                }
                self.stats.out_of_order_arrivals += 1;
                self.ack_now = true;
                self.delack_reserved = false;
            }
        } else if !pkt.has(Flags::FIN) && seq < self.rcv_nxt {
            // A window probe or keep-alive: answer with an ACK.
            self.ack_now = true;
        }
        if pkt.has(Flags::FIN) {
            let fin_at = seq + len;
            if fin_at >= self.rcv_nxt && self.peer_fin_at.is_none() {
                self.peer_fin_at = Some(fin_at);
            }
            self.ack_now = true;
        }
        if let Some(f) = self.peer_fin_at {
            if !self.peer_fin && self.rcv_nxt == f {
                self.rcv_nxt += 1;
                self.peer_fin = true;
                if len > 0 && pkt.has(Flags::FIN) && self.cfg.flavor == TcpFlavor::Ns3 {
                    // ns-3 3.37 ACKs the data that completes the stream (`ReceivedData`: RCV.NXT,
                    // past the FIN, is beyond the segment, as when a gap is filled) and then the
                    // FIN itself (`DoPeerClose`): two segments. That first ACK is "at once"
                    // to its DCTCP (CA_EVENT_NON_DELAYED_ACK): no delayed ACK stays reserved.
                    self.delack_reserved = false;
                    self.send_ack(now, out);
                }
                self.ack_now = true;
                self.ns3_plain_ack = self.cfg.flavor == TcpFlavor::Ns3;
                if self.close_on_peer_close {
                    // Our FIN carries the ACK of theirs (`try_send` after this segment).
                    self.fin_queued = true;
                }
                out.events.push(TcpEvent::PeerClosed);
            }
        }
    }

    /// [`TcpFlavor::Ns3`] with DCTCP: a CE mark that counts (above `m_ecnCESeq`) on any
    /// segment, a pure ACK included, puts ns-3 3.37's one ECN state per socket in
    /// `ECN_CE_RCVD` (`ForwardUp`, `TcpDctcp::CeState0to1`) before the ACK is looked at. A
    /// sender in `ECN_ECE_RCVD` thus leaves it: DCTCP's `PktsAcked` counts the bytes this and
    /// later ACKs acknowledge as unmarked, and the next new segment carries no CWR, until an
    /// ACK with ECE that advances SND.UNA sets `ECN_ECE_RCVD` again. (With DCTCP every segment
    /// is ECN-capable, so ACKs meet the switches' marking too.)
    fn ns3_ce_takes_the_ecn_state(&mut self, pkt: &Packet, seq: u64) {
        if self.cfg.flavor != TcpFlavor::Ns3 || !self.dctcp || !self.ecn_ok {
            return;
        }
        if self.ns3_ce_counts(pkt, seq) && !self.ns3_wholly_below_rcv_nxt(pkt, seq) {
            self.ece_rcvd = false;
            self.cwr_pending = false;
        }
    }

    /// ns-3 3.37's rule for a CE mark that counts (`ForwardUp`): one on a segment above the
    /// last that counted (`m_ecnCESeq`); a mark on a resent or reordered segment does not.
    fn ns3_ce_counts(&self, pkt: &Packet, seq: u64) -> bool {
        pkt.ecn == Ecn::Ce && self.ce_seq < seq
    }

    /// Data wholly below RCV.NXT, which ns-3 3.37 (`IsValidTcpSegment`) answers with a plain
    /// ACK and drops before its ECN codepoint or flags are looked at.
    fn ns3_wholly_below_rcv_nxt(&self, pkt: &Packet, seq: u64) -> bool {
        pkt.payload > 0 && seq + u64::from(pkt.payload) < self.rcv_nxt
    }

    /// [`TcpFlavor::Ns3`]'s DCTCP receiver on an ECN-capable segment (data or not), before it
    /// is taken in (ns-3 3.37's `TcpSocketBase::ForwardUp` and `TcpDctcp::CeState0to1` /
    /// `CeState1to0`): a CE mark counts only on a segment above the last one that counted
    /// (`m_ecnCESeq`); when the CE state changes while the last ACK decision was to delay, an
    /// ACK with the old state's ECE goes out at once for `m_priorRcvNxt`, RCV.NXT as it was
    /// before the previous ECN-capable segment, so it leaves that segment unacknowledged
    /// (RFC 8257 §3.2 and Linux acknowledge up to the current segment); this segment itself is
    /// then ACKed by the ordinary delayed-ACK rule.
    fn ns3_dctcp_ce_event(&mut self, now: Time, pkt: &Packet, seq: u64, out: &mut TcpOutput) {
        let ce = self.ns3_ce_counts(pkt, seq);
        if ce {
            self.ce_seq = seq;
        }
        if ce != self.ce_state && self.delack_reserved && self.prior_rcv_nxt != u64::MAX {
            self.send_ack_for(now, self.prior_rcv_nxt, out);
        }
        self.prior_rcv_nxt = self.rcv_nxt;
        self.ce_state = ce;
    }

    fn deliver(&mut self, out: &mut TcpOutput) {
        let total = self.rcv_nxt.saturating_sub(1 + u64::from(self.peer_fin));
        if total > self.stats.bytes_delivered {
            self.stats.bytes_delivered = total;
            out.events.push(TcpEvent::Delivered { total });
        }
    }

    fn check_closed(&mut self, now: Time, out: &mut TcpOutput) {
        if !self.closed_reported && self.fin_queued && self.peer_fin && self.snd_una > self.data_end() {
            self.closed_reported = true;
            self.stats.closed_at = Some(now);
            self.rto_at = None;
            self.persist_at = None;
            out.events.push(TcpEvent::Closed);
        }
    }

    // ------------------------------------------------------------------ RTT

    /// RTT measurement on an ACK that acknowledged new data up to `ack`: from the timestamp
    /// echo when timestamps are in use (RFC 7323 §4), otherwise (or when the echo is empty)
    /// from the one timed segment if it was never retransmitted (Karn).
    /// Returns the sample taken, if any.
    fn rtt_on_ack(&mut self, now: Time, pkt: &Packet, ack: u64, prior_una: u64) -> Option<Time> {
        let mut sample = None;
        let ns3_karn = self.cfg.flavor == TcpFlavor::Ns3 && self.ns3_history_retx(prior_una, ack);
        // Linux takes a TSecr of 0 for none (`tcp_ack_update_rtt`); ns-3 reads the echo of any
        // segment with the option (`EstimateRtt`), 0 too: the SYN-ACK's echo of a SYN sent at
        // time 0, which gives a connection opened then its first sample of 0 (1 us).
        let echo = match self.cfg.flavor {
            TcpFlavor::Ns3 => pkt.ts,
            TcpFlavor::Linux => pkt.ts_ecr != 0,
        };
        if self.ts_ok && echo && pkt.ts_ecr <= now && !ns3_karn {
            sample = Some(if self.cfg.flavor == TcpFlavor::Ns3 {
                // ns-3's timestamps count whole milliseconds (`TcpOptionTS::NowToTsValue`); a
                // sample of 0 is taken as 1 us (`EstimateRtt`).
                (now / MS - pkt.ts_ecr / MS)
                    .checked_mul(MS)
                    .filter(|&r| r > 0)
                    .unwrap_or(US)
            } else {
                now - pkt.ts_ecr
            });
        }
        if self.ns3_history() {
            if let Some(&(end, sent)) = self.ns3_rtt_history.front() {
                if sample.is_none() && ack >= end && sent <= now && !ns3_karn {
                    sample = Some(now - sent);
                }
            }
            while self.ns3_rtt_history.front().is_some_and(|&(end, _)| end <= ack) {
                self.ns3_rtt_history.pop_front();
            }
        }
        if let Some((end, sent)) = self.timed {
            if ack >= end {
                // ns-3 takes no sample at all while its oldest unacknowledged send was
                // resent (`EstimateRtt`: the history's head has `retx`), timestamps or not.
                if sample.is_none() && sent <= now && !ns3_karn {
                    sample = Some(now - sent);
                }
                self.timed = None;
            }
        }
        if let Some(r) = sample {
            self.rtt_sample(r);
        }
        sample
    }

    /// [`TcpFlavor::Ns3`] without timestamps: RTT samples come from ns-3's history
    /// ([`TcpEndpoint::ns3_rtt_history`]).
    fn ns3_history(&self) -> bool {
        self.cfg.flavor == TcpFlavor::Ns3 && !self.ts_ok
    }

    /// [`TcpFlavor::Ns3`]: whether an ACK from `prior_una` to `ack` takes no RTT sample because
    /// of ns-3's history (`EstimateRtt`): its oldest entry is a retransmission, or the ACK
    /// does not cover it. Below the last timeout's SND.MAX there are no entries (emptied at
    /// the timeout), so the oldest is the first segment sent after it, resent if a
    /// retransmission reached past it; above, the segment at SND.UNA, resent if below the
    /// highest retransmission's end.
    fn ns3_history_retx(&self, prior_una: u64, ack: u64) -> bool {
        let mark = self.ns3_rto_mark;
        if prior_una < mark {
            // Nothing sent after it: an empty history, no sample.
            let first_end = (mark + self.mss).min(self.snd_max);
            first_end == mark || ack < first_end || self.karn_until > mark
        } else {
            prior_una < self.karn_until
        }
    }

    /// RFC 6298 §2.2-2.3 (gains 1/8, 1/4) in picoseconds.
    fn rtt_sample_rfc(&mut self, r: Time) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                let d = s.abs_diff(r);
                self.rttvar = (self.rttvar.saturating_mul(3).saturating_add(d)) / 4;
                self.srtt = Some((s.saturating_mul(7).saturating_add(r)) / 8);
            }
        }
    }

    /// RFC 6298 §2: one RTT measurement updates the estimator and the RTO.
    fn rtt_sample(&mut self, r: Time) {
        self.stats.rtt_samples += 1;
        if self.cfg.flavor == TcpFlavor::Ns3 {
            // ns-3 3.37's `RttMeanDeviation` with gains 1/8 and 1/4 (`IntegerUpdate`): whole
            // nanoseconds, each step rounded down.
            let r = r / 1000;
            let (s, v) = match self.srtt {
                None => (r, r / 2),
                Some(s) => {
                    let s = s / 1000;
                    let v = self.rttvar / 1000;
                    ((7 * s + r) / 8, (3 * v + s.abs_diff(r)) / 4)
                }
            };
            self.srtt = Some(s * 1000);
            self.rttvar = v * 1000;
        } else {
            self.rtt_sample_rfc(r);
        }
        let srtt = self.srtt.unwrap_or(r);
        let g = if self.cfg.flavor == TcpFlavor::Ns3 {
            NS3_CLOCK_GRANULARITY
        } else {
            CLOCK_GRANULARITY
        };
        let rto = srtt.saturating_add(g.max(self.rttvar.saturating_mul(4)));
        self.rto_base = rto.max(self.cfg.min_rto).min(self.cfg.max_rto);
    }
}

/// The shared core contract: each input is one of the endpoint's own calls, the output its
/// [`TcpOutput`] (segments and application events), the timeout [`TcpEndpoint::next_timer`].
impl tandem_time::sansio::SansIo for TcpEndpoint {
    type Input<'a> = TcpInput<'a>;
    type Output = TcpOutput;
    type Error = std::convert::Infallible;

    fn handle(&mut self, now: Time, input: TcpInput<'_>, out: &mut TcpOutput) -> Result<(), Self::Error> {
        match input {
            TcpInput::Segment(pkt) => self.on_packet(now, pkt, out),
            TcpInput::Send(bytes) => self.send(now, bytes, out),
            TcpInput::Close => self.close(now, out),
            TcpInput::Timeout => self.on_timer(now, out),
        }
        Ok(())
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.next_timer()
    }

    fn timeout() -> TcpInput<'static> {
        TcpInput::Timeout
    }
}
