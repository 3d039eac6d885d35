//! Egress ports: strict-priority class queues with packet and byte limits, a shared switch
//! buffer with static or dynamic (alpha) thresholds, DCTCP-style threshold marking and RED,
//! drop reasons, and level watching for switch models.

use crate::config::{BufferConfig, Marking, QueueConfig};
use crate::ns3_rng::Mrg32k3a;
use crate::packet::{Packet, PacketId};
use crate::ring::InlineDeque;
use crate::time::Time;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use tandem_wire::ipv4::Ecn;

/// Why a packet was dropped. Every drop in the simulator carries one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The class queue held its packet limit.
    QueuePackets,
    /// The class queue held its byte limit.
    QueueBytes,
    /// The shared buffer was full.
    BufferFull,
    /// The queue was over its share of the shared buffer (static cap or dynamic alpha threshold).
    BufferThreshold,
    /// RED dropped it early (not ECN-capable, or ECN off).
    RedEarly,
    /// The switch had no route to the destination.
    NoRoute,
    /// The port's link was down: the packet was waiting to go out on it, was offered to it,
    /// or was on the wire when it failed.
    LinkDown,
    /// A switch model (TCPU, TurboSwitch, ...) dropped it; the text says why.
    Model(&'static str),
}

impl DropReason {
    /// Short stable name, used in drops.csv and summary.json.
    pub fn as_str(&self) -> &'static str {
        match self {
            DropReason::QueuePackets => "queue-packets",
            DropReason::QueueBytes => "queue-bytes",
            DropReason::BufferFull => "buffer-full",
            DropReason::BufferThreshold => "buffer-threshold",
            DropReason::RedEarly => "red-early",
            DropReason::NoRoute => "no-route",
            DropReason::LinkDown => "link-down",
            DropReason::Model(s) => s,
        }
    }
}

/// A switch's shared buffer occupancy.
#[derive(Debug, Clone, Copy)]
pub struct SharedBuffer {
    /// Configuration.
    pub cfg: BufferConfig,
    /// Bytes held by all queues that draw on it.
    pub used: u64,
    /// Most bytes ever held.
    pub peak: u64,
}

impl SharedBuffer {
    /// A buffer with nothing in it.
    pub fn new(cfg: BufferConfig) -> SharedBuffer {
        SharedBuffer { cfg, used: 0, peak: 0 }
    }

    /// Whether a queue now holding `queue_bytes` may take `size` more bytes.
    fn admit(&self, queue_bytes: u64, size: u64) -> Result<(), DropReason> {
        match self.cfg {
            BufferConfig::Dedicated => Ok(()),
            BufferConfig::Static { bytes, static_bytes } => {
                if self.used + size > bytes {
                    Err(DropReason::BufferFull)
                } else if queue_bytes + size > static_bytes {
                    Err(DropReason::BufferThreshold)
                } else {
                    Ok(())
                }
            }
            BufferConfig::Dynamic { bytes, alpha } => {
                if self.used + size > bytes {
                    return Err(DropReason::BufferFull);
                }
                let free = (bytes - self.used) as f64;
                if (queue_bytes + size) as f64 > alpha * free {
                    Err(DropReason::BufferThreshold)
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// A packet waiting in a queue.
#[derive(Debug, Clone, Copy)]
pub struct Queued {
    /// The packet.
    pub pkt: PacketId,
    /// Its size on the wire (without framing overhead).
    pub size: u32,
    /// When its last bit reached this node (cut-through can start before that).
    pub last_bit: Time,
    /// When it joined the queue.
    pub enqueued: Time,
}

impl Default for Queued {
    /// A filler for a ring's unused slots ([`InlineDeque`]).
    fn default() -> Self {
        Queued {
            pkt: PacketId(0),
            size: 0,
            last_bit: 0,
            enqueued: 0,
        }
    }
}

/// Packets a class keeps inline in its port ([`Lane`]): at 50% load a packet mostly finds
/// the queue empty or holding one; two in the port's lines cover that without a third.
const INLINE_QUEUED: usize = 2;

/// One class's packets and their bytes: what every packet of the class touches.
#[derive(Debug, Default, Clone)]
struct Lane {
    bytes: u64,
    q: InlineDeque<Queued, INLINE_QUEUED>,
}

/// One class's RED state (untouched without RED marking).
#[derive(Debug, Default, Clone)]
struct RedState {
    avg: f64,
    count: i64,
    /// The last arrival found the average above min_th.
    old: bool,
    /// When the queue last ran (nearly) empty, until the next arrival.
    idle_since: Option<Time>,
    /// The like-for-like RED: when a transmission's end last left the device's one-slot
    /// queue empty with packets still in the queue disc ([`EgressQueues::ns3_transmission_ended`]),
    /// until the next arrival.
    slot_free_at: Option<Time>,
}

/// One class beyond the first: its lane and RED state together (class 0's live apart, the
/// lane among the port's hot fields; see [`EgressQueues`]).
#[derive(Debug, Default, Clone)]
struct ClassQueue {
    lane: Lane,
    red: RedState,
}

/// Class `i`'s packets and RED state from a port's class 0 and its other classes (`i` must
/// exist); a function of the fields so that callers keep the rest of the port to use.
fn class_parts<'a>(
    first: &'a mut Lane,
    first_red: &'a mut RedState,
    rest: &'a mut [ClassQueue],
    i: usize,
) -> (&'a mut Lane, &'a mut RedState) {
    match i {
        0 => (first, first_red),
        _ => {
            let c = &mut rest[i - 1];
            (&mut c.lane, &mut c.red)
        }
    }
}

/// Bytes of one class of an egress queue, for [`crate::limits`].
pub(crate) fn class_queue_bytes() -> usize {
    std::mem::size_of::<ClassQueue>()
}

/// What RED decided for one arrival.
#[derive(Debug, Clone, Copy)]
enum RedVerdict {
    Pass,
    Early,
    Forced,
}

/// RED's decision for one arrival at `cq` (Floyd & Jacobson's RED with the "wait" and gentle
/// variants, as ns-3's `RedQueueDisc` has them), on Tandem's own terms: the average over
/// everything waiting, thresholds as configured. `red` is (min_th, max_th, max_p, weight,
/// gentle); `packets` when the thresholds count packets rather than bytes.
fn red_decide(
    lane: &Lane,
    st: &mut RedState,
    rng: &mut Pcg64,
    packets: bool,
    red: (f64, f64, f64, f64, bool),
    ptc: f64,
    now: Time,
) -> RedVerdict {
    let (min, max, max_p, weight, gentle) = red;
    let cur = if packets {
        lane.q.len() as f64
    } else {
        lane.bytes as f64
    };
    // After an idle period the average decays as if `m` small packets had arrived to an
    // empty queue meanwhile (Floyd & Jacobson §4; ns-3's `m_idle`).
    let m = st
        .idle_since
        .take()
        .map_or(0.0, |t| (crate::time::as_secs(now.saturating_sub(t)) * ptc).floor());
    st.avg = st.avg * (1.0 - weight).powf(m + 1.0) + weight * cur;
    let avg = st.avg;
    st.count += 1;
    // ns-3 tests "more than one packet in the queue disc", which sits behind a one-packet
    // device queue: more than two waiting here.
    if avg < min || lane.q.len() <= 2 {
        st.old = false;
        return RedVerdict::Pass;
    }
    if avg >= if gentle { 2.0 * max } else { max } {
        return RedVerdict::Forced;
    }
    if !st.old {
        // The first arrival above min_th starts the count (ns-3's `m_old`).
        st.count = 1;
        st.old = true;
        return RedVerdict::Pass;
    }
    let pb = if avg >= max {
        max_p + (1.0 - max_p) * (avg - max) / max.max(1.0)
    } else {
        max_p * (avg - min) / (max - min).max(1.0)
    }
    .min(1.0);
    // The "wait" variant: no early drop within 1/pb packets of the last.
    let cp = st.count as f64 * pb;
    let pa = if cp < 1.0 {
        0.0
    } else if cp < 2.0 {
        pb / (2.0 - cp)
    } else {
        1.0
    };
    if rng.random::<f64>() <= pa && pa > 0.0 {
        st.count = 0;
        return RedVerdict::Early;
    }
    RedVerdict::Pass
}

/// ns-3 3.37's `Time::GetSeconds` of a duration `d` (whole nanoseconds, ns-3's resolution),
/// bit for bit: `Time::To` multiplies the 64.64 fixed-point count of nanoseconds by
/// `int64x64_t::Invert(10^9)` (2^128 / 10^9, rounded up), keeping 64 fraction bits and
/// truncating the rest (`MulByInvert`), and `GetDouble` adds the integer and fraction parts in
/// `long double` (64-bit mantissa) before it returns a `double`. Below the exact quotient for
/// most durations: RED's idle ageing (`m_ptc * (now - m_idleTime).GetSeconds()`, truncated)
/// counts 3 packets for an idle 48 us at 1 Gb/s in ns-3 (3.999...), not 4.
fn ns3_seconds(d: Time) -> f64 {
    const INV: u128 = u128::MAX / 1_000_000_000 + 1;
    let ns = u128::from(d / crate::time::NS);
    // (ns << 64) x INV >> 128, as `UmulByInvert` computes it (the low word of `ns << 64` is 0).
    let fixed = ns * (INV >> 64) + ((ns * (INV & u128::from(u64::MAX))) >> 64);
    // Rounded to nearest (ties to even) to `bits` significant bits.
    let round = |x: u128, bits: u32| -> u128 {
        let len = 128 - x.leading_zeros();
        if len <= bits {
            return x;
        }
        let drop = len - bits;
        let (q, r, half) = (x >> drop, x & ((1 << drop) - 1), 1u128 << (drop - 1));
        let up = r > half || (r == half && q & 1 == 1);
        (q + u128::from(up)) << drop
    };
    round(round(fixed, 64), 53) as f64 / 18_446_744_073_709_551_616.0
}

/// RED as ns-3 3.37's `RedQueueDisc` computes it (the like-for-like mode, with ns-3's random
/// numbers): the average over the queue disc alone (everything waiting but the packet in the
/// device's one-slot queue), thresholds one lower to match, ns-3's coefficients and formulas
/// in its order (`InitializeParams`, `DoEnqueue`, `CalculatePNew`, `ModifyP`, `DropEarly`),
/// and its idle rule ([`EgressQueues::dequeue`]), so that every decision is ns-3's.
/// Packet thresholds only (what the ns-3 export takes).
#[derive(Debug, Clone, Copy)]
struct Ns3Red {
    min_th: f64,
    max_th: f64,
    weight: f64,
    gentle: bool,
    cur_max_p: f64,
    v_a: f64,
    v_b: f64,
    v_c: f64,
    v_d: f64,
}

impl Ns3Red {
    /// From Tandem's packet thresholds `min`, `max` (the ns-3 program gives ns-3 `min - 1`,
    /// `max - 1`, and `LInterm = 1 / max_p`).
    fn new(min: f64, max: f64, max_p: f64, weight: f64, gentle: bool) -> Ns3Red {
        let (min_th, max_th) = (min - 1.0, max - 1.0);
        let cur_max_p = 1.0 / (1.0 / max_p);
        Ns3Red {
            min_th,
            max_th,
            weight,
            gentle,
            cur_max_p,
            v_a: 1.0 / (max_th - min_th),
            v_b: -min_th / (max_th - min_th),
            v_c: (1.0 - cur_max_p) / max_th,
            v_d: 2.0 * cur_max_p - 1.0,
        }
    }

    /// `slot_free`: the device's slot is empty (a transmission ended in this instant and its
    /// refill has not run), so the queue disc holds every waiting packet.
    fn decide(
        &self,
        lane: &Lane,
        st: &mut RedState,
        rng: &mut Mrg32k3a,
        ptc: f64,
        now: Time,
        slot_free: bool,
    ) -> RedVerdict {
        let n_queued = if slot_free {
            lane.q.len()
        } else {
            lane.q.len().saturating_sub(1)
        };
        let m = st
            .idle_since
            .take()
            .map_or(0, |t| (ptc * ns3_seconds(now.saturating_sub(t))) as u32);
        st.avg = st.avg * (1.0 - self.weight).powf(f64::from(m) + 1.0) + self.weight * n_queued as f64;
        let avg = st.avg;
        st.count += 1;
        if !(avg >= self.min_th && n_queued > 1) {
            st.old = false;
            return RedVerdict::Pass;
        }
        if (!self.gentle && avg >= self.max_th) || (self.gentle && avg >= 2.0 * self.max_th) {
            return RedVerdict::Forced;
        }
        if !st.old {
            st.count = 1;
            st.old = true;
            return RedVerdict::Pass;
        }
        // CalculatePNew.
        let mut p = if self.gentle && avg >= self.max_th {
            self.v_c * avg + self.v_d
        } else if avg >= self.max_th {
            1.0
        } else {
            (self.v_a * avg + self.v_b) * self.cur_max_p
        };
        if p > 1.0 {
            p = 1.0;
        }
        // ModifyP, the "wait" variant, packets.
        let count = st.count as f64;
        p = if count * p < 1.0 {
            0.0
        } else if count * p < 2.0 {
            p / (2.0 - count * p)
        } else {
            1.0
        };
        if p > 1.0 {
            p = 1.0;
        }
        if rng.next_u01() <= p {
            st.count = 0;
            return RedVerdict::Early;
        }
        RedVerdict::Pass
    }
}

/// Counters of one egress port. `repr(C)`: the counters every packet updates first.
#[derive(Debug, Default, Clone)]
#[repr(C)]
pub struct PortStats {
    /// Packets that joined a queue.
    pub enqueued: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Bytes sent (without framing).
    pub tx_bytes: u64,
    /// Largest total queue in bytes.
    pub peak_bytes: u64,
    /// Sum over dequeued packets of their queueing delay (for the mean).
    pub queue_delay_sum: Time,
    /// Packets marked CE here.
    pub marked: u64,
    /// Packets dropped here, by reason.
    pub drops: Vec<(DropReason, u64, u64)>,
}

impl PortStats {
    fn count_drop(&mut self, r: DropReason, size: u32) {
        match self.drops.iter_mut().find(|(k, _, _)| *k == r) {
            Some(e) => {
                e.1 += 1;
                e.2 += u64::from(size);
            }
            None => self.drops.push((r, 1, u64::from(size))),
        }
    }
    /// Packets dropped here for any reason.
    pub fn dropped(&self) -> u64 {
        self.drops.iter().map(|d| d.1).sum()
    }
}

/// What happened to a packet offered to a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Queued; `marked` when it was marked CE on the way in.
    Queued {
        /// CE applied.
        marked: bool,
    },
    /// Dropped, with the reason.
    Dropped(DropReason),
}

/// The queues of one egress port.
///
/// `repr(C)`, the fields every packet touches first (totals, the configuration's limits and
/// marking kind as copies, class 0's packets with its first two entries inline, the
/// counters), so that with the port's own (see [`crate::port::Port`]) they fill five cache
/// lines, which the event loop fetches ahead ([`EgressQueues::HOT_BYTES`]): at data-center
/// scale the ports do not fit the CPU's caches, and a packet's enqueue and dequeue pay for
/// every line they touch that was not fetched.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct EgressQueues {
    total_bytes: u64,
    total_packets: u32,
    /// Class 0's packet limit (`cfg.packet_limit(0)`), 0 for none.
    limit0: u32,
    /// `cfg.limit_bytes`.
    limit_bytes: u64,
    /// What `cfg.marking` and the RED generator say, for the hot path.
    mode: Mode,
    /// Class 0's packets (the only class of most ports).
    first: Lane,
    /// Counters.
    pub stats: PortStats,
    /// Classes 1.. (none for a single-class port).
    rest: Vec<ClassQueue>,
    /// Class 0's RED state.
    first_red: RedState,
    cfg: QueueConfig,
    /// Byte levels a switch model watches, ascending; see [`EgressQueues::level`].
    watch: Vec<u64>,
    /// Packet-count levels a switch model watches, ascending; see [`EgressQueues::level`].
    watch_packets: Vec<u32>,
    /// RED: packets the link sends per second at [`RED_MEAN_PACKET`] bytes (ns-3's `m_ptc`),
    /// to age the average over an idle period; 0 when unknown.
    red_ptc: f64,
    /// RED's random numbers: this port's own stream ([`EgressQueues::with_seed`]), so that what
    /// one port draws never depends on what others drew before (a run split among threads
    /// draws the same numbers). Only RED queues have one.
    rng: Option<Box<RedRng>>,
}

/// A port's marking, as its hot path needs it (set from the configuration and the generator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// No marking: limits only.
    Plain,
    /// Threshold marking.
    Threshold,
    /// RED with Tandem's own arithmetic.
    Red,
    /// RED as ns-3's `RedQueueDisc` ([`EgressQueues::with_ns3_stream`]).
    Ns3Red,
}

/// Where a RED queue's random numbers come from.
#[derive(Debug, Clone)]
enum RedRng {
    /// Tandem's own generator.
    Pcg(Pcg64),
    /// ns-3's generator and stream, and its RED coefficients, computed once
    /// ([`EgressQueues::with_ns3_stream`]).
    Ns3(Mrg32k3a, Ns3Red),
}

/// Mean packet size RED assumes to age its average over an idle period (ns-3's `MeanPktSize`
/// as the validation sets it).
pub const RED_MEAN_PACKET: f64 = 1500.0;

impl EgressQueues {
    /// Bytes at the start of the structure that a packet's enqueue and dequeue read on a
    /// single-class port without RED: up to its RED state (see [`crate::port::Port::HOT_BYTES`]).
    pub(crate) const HOT_BYTES: usize = std::mem::offset_of!(EgressQueues, first_red);

    /// The same queues, told the rate of the link they feed (RED ages its average over idle
    /// periods as if this link had sent packets of [`RED_MEAN_PACKET`] bytes).
    pub fn with_link_rate(mut self, rate_bps: u64) -> EgressQueues {
        self.red_ptc = rate_bps as f64 / (8.0 * RED_MEAN_PACKET);
        self
    }

    /// The same queues, with RED's random numbers drawn from a stream of their own seeded by
    /// `seed` (no effect without RED marking).
    pub fn with_seed(mut self, seed: u64) -> EgressQueues {
        if matches!(self.cfg.marking, Marking::Red { .. }) {
            self.rng = Some(Box::new(RedRng::Pcg(Pcg64::seed_from_u64(seed))));
        }
        self
    }

    /// The same queues, with RED as ns-3's `RedQueueDisc` (the like-for-like mode): its
    /// arithmetic and idle rule, and its random numbers from `rng`, a stream as
    /// `RedQueueDisc::AssignStreams` gives it ([`Mrg32k3a::ns3_assigned`]), drawn where ns-3's
    /// `DropEarly` draws (no effect without RED marking; packet thresholds).
    pub fn with_ns3_stream(mut self, rng: Mrg32k3a) -> EgressQueues {
        if let Marking::Red {
            min_bytes,
            max_bytes,
            max_p,
            weight,
            gentle,
            ..
        } = self.cfg.marking
        {
            let red = Ns3Red::new(min_bytes as f64, max_bytes as f64, max_p, weight, gentle);
            self.rng = Some(Box::new(RedRng::Ns3(rng, red)));
            self.mode = Mode::Ns3Red;
        }
        self
    }

    /// Empty queues with this configuration (`classes` is clamped to 1..=8).
    pub fn new(cfg: QueueConfig) -> EgressQueues {
        let n = usize::from(cfg.classes.clamp(1, 8));
        EgressQueues {
            limit0: cfg.packet_limit(0),
            limit_bytes: cfg.limit_bytes,
            mode: match cfg.marking {
                Marking::None => Mode::Plain,
                Marking::Red { .. } => Mode::Red,
                Marking::Threshold { .. } | Marking::ThresholdPackets { .. } => Mode::Threshold,
            },
            cfg,
            first: Lane::default(),
            rest: vec![ClassQueue::default(); n - 1],
            first_red: RedState::default(),
            total_bytes: 0,
            total_packets: 0,
            watch: Vec::new(),
            watch_packets: Vec::new(),
            stats: PortStats::default(),
            red_ptc: 0.0,
            rng: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &QueueConfig {
        &self.cfg
    }
    /// Bytes queued in all classes.
    pub fn bytes(&self) -> u64 {
        self.total_bytes
    }
    /// Packets queued in all classes.
    pub fn packets(&self) -> u32 {
        self.total_packets
    }
    /// Bytes queued in one class (0 for a class that does not exist).
    pub fn class_bytes(&self, class: u8) -> u64 {
        self.lane(usize::from(class)).map_or(0, |c| c.bytes)
    }
    /// Packets queued in one class.
    pub fn class_packets(&self, class: u8) -> usize {
        self.lane(usize::from(class)).map_or(0, |c| c.q.len())
    }
    /// Number of classes.
    pub fn num_classes(&self) -> u8 {
        (1 + self.rest.len()) as u8
    }

    /// Class `i`'s packets, if it exists.
    fn lane(&self, i: usize) -> Option<&Lane> {
        match i {
            0 => Some(&self.first),
            _ => self.rest.get(i - 1).map(|c| &c.lane),
        }
    }

    /// Sets the byte levels to watch (sorted and deduplicated here).
    pub fn set_watch(&mut self, mut levels: Vec<u64>) {
        levels.sort_unstable();
        levels.dedup();
        self.watch = levels;
    }
    /// Sets the packet-count levels to watch (sorted and deduplicated here), for models whose
    /// thresholds are in packets (TCPU's Q_redirect, for example).
    pub fn set_watch_packets(&mut self, mut levels: Vec<u32>) {
        levels.sort_unstable();
        levels.dedup();
        self.watch_packets = levels;
    }
    /// How many watched levels the total queue is at or above (0 when below all): watched byte
    /// levels the queued bytes reach plus watched packet levels the queued packets reach. It
    /// changes exactly when the queue crosses one of them.
    pub fn level(&self) -> usize {
        self.watch.partition_point(|&l| l <= self.total_bytes)
            + self.watch_packets.partition_point(|&l| l <= self.total_packets)
    }

    /// Offers a packet to class `class` (clamped to the last class). Applies the class's
    /// limits ([`QueueConfig::packet_limit`], `limit_bytes`), the shared buffer's admission and
    /// the marking policy; on admission the packet may be marked CE in place.
    pub fn enqueue(
        &mut self,
        pkt_id: PacketId,
        pkt: &mut Packet,
        last_bit: Time,
        now: Time,
        buf: &mut SharedBuffer,
    ) -> Admission {
        let ci = if pkt.class == 0 {
            0
        } else {
            usize::from(pkt.class).min(self.rest.len())
        };
        let size = u64::from(pkt.size);
        // ns-3's RedQueueDisc decides before its queue's limit applies (a packet the full queue
        // refuses still counts in RED's average and count); every other policy after.
        let ns3_red = self.mode == Mode::Ns3Red;
        // ns-3's device refills its one-slot queue from the queue disc in an event of its own
        // after a transmission ends (`NetDeviceQueue::Wake`), behind the arrivals already due
        // in that instant: the first of them finds the slot empty, and its own enqueue moves a
        // packet down (`TrafficControlLayer::Send` runs the queue disc whatever it decided).
        let slot_free = ns3_red && self.first_red.slot_free_at.take() == Some(now);
        if !ns3_red {
            if let Err(r) = self.admit(ci, size, buf, false) {
                self.stats.count_drop(r, pkt.size);
                return Admission::Dropped(r);
            }
        }
        let marked = match self.mode {
            Mode::Plain => false,
            _ => match self.mark(ci, pkt, now, slot_free) {
                Ok(m) => m,
                Err(dropped) => return dropped,
            },
        };
        if ns3_red {
            // The queue disc holds at most `limit - 1` packets, the device's slot one more:
            // with the slot empty, the disc is full one packet earlier.
            if let Err(r) = self.admit(ci, size, buf, slot_free) {
                self.stats.count_drop(r, pkt.size);
                return Admission::Dropped(r);
            }
        }
        let cq = class_parts(&mut self.first, &mut self.first_red, &mut self.rest, ci).0;
        cq.q.push_back(Queued {
            pkt: pkt_id,
            size: pkt.size,
            last_bit,
            enqueued: now,
        });
        cq.bytes += size;
        self.total_bytes += size;
        self.total_packets += 1;
        buf.used += size;
        buf.peak = buf.peak.max(buf.used);
        self.stats.enqueued += 1;
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.total_bytes);
        Admission::Queued { marked }
    }

    /// The marking policy's verdict on a packet offered to class `ci`: `Ok(true)` to mark it
    /// CE (done here), `Ok(false)` to pass it, `Err` when it is dropped early (counted).
    fn mark(&mut self, ci: usize, pkt: &mut Packet, now: Time, slot_free: bool) -> Result<bool, Admission> {
        let ect = matches!(pkt.ecn, Ecn::Ect0 | Ecn::Ect1 | Ecn::Ce);
        let (cq, st) = class_parts(&mut self.first, &mut self.first_red, &mut self.rest, ci);
        let verdict = match self.cfg.marking {
            Marking::None => RedVerdict::Pass,
            Marking::Threshold { k_bytes } => {
                if cq.bytes > k_bytes {
                    RedVerdict::Early
                } else {
                    RedVerdict::Pass
                }
            }
            Marking::ThresholdPackets { k_packets } => {
                if cq.q.len() as u64 >= u64::from(k_packets) {
                    RedVerdict::Early
                } else {
                    RedVerdict::Pass
                }
            }
            Marking::Red {
                min_bytes,
                max_bytes,
                max_p,
                weight,
                gentle,
                packets,
                ..
            } => {
                let rng = self
                    .rng
                    .get_or_insert_with(|| Box::new(RedRng::Pcg(Pcg64::seed_from_u64(0))));
                let (min, max) = (min_bytes as f64, max_bytes as f64);
                match rng.as_mut() {
                    RedRng::Ns3(g, red) => red.decide(cq, st, g, self.red_ptc, now, slot_free),
                    RedRng::Pcg(g) => {
                        red_decide(cq, st, g, packets, (min, max, max_p, weight, gentle), self.red_ptc, now)
                    }
                }
            }
        };
        let marked = match (verdict, self.cfg.marking) {
            (RedVerdict::Pass, _) => false,
            // Threshold marking never drops: it marks what can carry a mark.
            (_, Marking::Threshold { .. } | Marking::ThresholdPackets { .. }) => ect,
            (RedVerdict::Early, Marking::Red { ecn: true, .. }) if ect => true,
            _ => {
                self.stats.count_drop(DropReason::RedEarly, pkt.size);
                return Err(Admission::Dropped(DropReason::RedEarly));
            }
        };
        if marked {
            pkt.ecn = Ecn::Ce;
            self.stats.marked += 1;
        }
        Ok(marked)
    }

    /// Whether class `ci` and the shared buffer take `size` more bytes, or why not. `slot_free`:
    /// the like-for-like RED's device slot is empty, so its queue disc (one packet shorter
    /// than the port) holds every waiting packet and is full one packet earlier.
    fn admit(&self, ci: usize, size: u64, buf: &SharedBuffer, slot_free: bool) -> Result<(), DropReason> {
        let cq = if ci == 0 { &self.first } else { &self.rest[ci - 1].lane };
        let limit_packets = if ci == 0 {
            self.limit0
        } else {
            self.cfg.packet_limit(ci as u8)
        };
        if limit_packets > 0 && cq.q.len() as u64 + u64::from(slot_free) >= u64::from(limit_packets) {
            Err(DropReason::QueuePackets)
        } else if self.limit_bytes > 0 && cq.bytes + size > self.limit_bytes {
            Err(DropReason::QueueBytes)
        } else {
            buf.admit(cq.bytes, size)
        }
    }

    /// The like-for-like RED ([`EgressQueues::with_ns3_stream`]): the port's transmission
    /// ended now and the next one started. In ns-3 the device took that packet from its
    /// one-slot queue and refills the slot from the queue disc in an event of its own, after
    /// the arrivals already due now: the first of them finds every waiting packet in the
    /// queue disc (RED's count, the disc's limit). Elsewhere nothing.
    #[inline]
    pub fn ns3_transmission_ended(&mut self, now: Time) {
        if self.mode == Mode::Ns3Red && !self.first.q.is_empty() {
            self.first_red.slot_free_at = Some(now);
        }
    }

    /// Takes the next packet: the head of the highest-priority non-empty class, for a
    /// transmission that starts now.
    pub fn dequeue(&mut self, now: Time, buf: &mut SharedBuffer) -> Option<Queued> {
        let ns3_red = self.mode == Mode::Ns3Red;
        let ci = if self.first.q.is_empty() {
            1 + self.rest.iter().position(|c| !c.lane.q.is_empty())?
        } else {
            0
        };
        let (cq, st) = class_parts(&mut self.first, &mut self.first_red, &mut self.rest, ci);
        let e = cq.q.pop_front()?;
        if ns3_red {
            // ns-3 notes an idle period whenever it asks its queue disc for a packet and finds
            // it empty (`DoDequeue`: `m_idle`, `m_idleTime`). It asks as the device takes a
            // packet from its one-slot queue (a transmission ended) and again right after a
            // packet that found the device idle went out (`QueueDisc::Run` loops until the
            // device queue stops or the queue disc is empty); a packet that waits in the
            // device's slot while the wire is busy does not make it ask. Here: whenever a
            // transmission starts and nothing is left waiting.
            if cq.q.is_empty() {
                st.idle_since = Some(now);
            }
        } else if cq.q.len() <= 1 && self.mode == Mode::Red {
            // ns-3's queue disc empties when its last packet moves to the one-packet device
            // queue: here, when at most one packet is left waiting.
            st.idle_since.get_or_insert(now);
        }
        let size = u64::from(e.size);
        cq.bytes -= size;
        self.total_bytes -= size;
        self.total_packets -= 1;
        buf.used -= size;
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += size;
        self.stats.queue_delay_sum += now.saturating_sub(e.enqueued);
        Some(e)
    }

    /// A direct port's packet just queued (the last of class 0) starts its transmission at
    /// `start`: kept in its entry in place of its last bit, which the port no longer needs
    /// ([`EgressQueues::release_started`]).
    #[inline]
    pub(crate) fn set_tail_start(&mut self, start: Time) {
        if let Some(e) = self.first.q.back_mut() {
            e.last_bit = start;
        }
    }

    /// A direct port's packets whose transmissions started by `now` leave the queue, each at
    /// its start (so counters, delays and RED's idle time read as if the port had taken them
    /// then).
    #[inline]
    pub(crate) fn release_started(&mut self, now: Time, buf: &mut SharedBuffer) {
        while let Some(&Queued { last_bit: start, .. }) = self.first.q.front() {
            if start > now {
                break;
            }
            self.dequeue(start, buf);
        }
    }

    /// True for a port with one class (first-in first-out).
    pub(crate) fn single_class(&self) -> bool {
        self.rest.is_empty()
    }

    /// Drops every packet waiting (the port's link failed), counting each for `r`; their ids
    /// go to `dropped` for the caller to free.
    pub fn drop_all(&mut self, buf: &mut SharedBuffer, r: DropReason, dropped: &mut Vec<PacketId>) {
        for cq in std::iter::once(&mut self.first).chain(self.rest.iter_mut().map(|c| &mut c.lane)) {
            while let Some(e) = cq.q.pop_front() {
                let size = u64::from(e.size);
                cq.bytes -= size;
                self.total_bytes -= size;
                self.total_packets -= 1;
                buf.used -= size;
                self.stats.count_drop(r, e.size);
                dropped.push(e.pkt);
            }
        }
    }

    /// Counts a drop decided outside the queue (no route, a model's drop) against this port.
    pub fn count_external_drop(&mut self, r: DropReason, size: u32) {
        self.stats.count_drop(r, size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(size: u32, class: u8, ecn: Ecn) -> Packet {
        Packet {
            size,
            class,
            ecn,
            ..Packet::default()
        }
    }

    #[test]
    fn limits_priorities_and_reasons() {
        let mut q = EgressQueues::new(QueueConfig {
            classes: 2,
            limit_packets: 2,
            ..QueueConfig::default()
        });
        let mut buf = SharedBuffer::new(BufferConfig::Dedicated);
        q = q.with_seed(1);
        for i in 0..3 {
            let mut p = pkt(100, 1, Ecn::NotEct);
            let a = q.enqueue(PacketId(i), &mut p, 0, 0, &mut buf);
            assert_eq!(
                a,
                if i < 2 {
                    Admission::Queued { marked: false }
                } else {
                    Admission::Dropped(DropReason::QueuePackets)
                }
            );
        }
        let mut hi = pkt(60, 0, Ecn::NotEct);
        q.enqueue(PacketId(9), &mut hi, 0, 0, &mut buf);
        assert_eq!(q.dequeue(1, &mut buf).unwrap().pkt, PacketId(9), "class 0 first");
        assert_eq!(q.dequeue(1, &mut buf).unwrap().pkt, PacketId(0));
        assert_eq!(q.stats.drops, vec![(DropReason::QueuePackets, 1, 100)]);
        assert_eq!(q.bytes(), 100);
    }

    #[test]
    fn per_class_packet_limits_override_the_common_one() {
        let mut cfg = QueueConfig {
            classes: 3,
            limit_packets: 4,
            ..QueueConfig::default()
        };
        cfg.class_limit_packets[1] = Some(2);
        cfg.class_limit_packets[2] = Some(0);
        assert_eq!(
            (cfg.packet_limit(0), cfg.packet_limit(1), cfg.packet_limit(2)),
            (4, 2, 0)
        );
        assert_eq!(
            cfg.packet_limit(200),
            4,
            "a class beyond the array keeps the common limit"
        );
        let mut q = EgressQueues::new(cfg);
        let mut buf = SharedBuffer::new(BufferConfig::Dedicated);
        q = q.with_seed(1);
        let mut admitted = [0u32; 3];
        for class in 0..3u8 {
            for i in 0..10 {
                let mut p = pkt(100, class, Ecn::NotEct);
                let id = PacketId(u32::from(class) * 100 + i);
                if let Admission::Queued { .. } = q.enqueue(id, &mut p, 0, 0, &mut buf) {
                    admitted[usize::from(class)] += 1;
                }
            }
        }
        // Class 0: the common 4; class 1: its own 2; class 2: 0 = no packet limit.
        assert_eq!(admitted, [4, 2, 10]);
        assert_eq!(q.stats.drops, vec![(DropReason::QueuePackets, 14, 1400)]);
        assert_eq!(QueueConfig::default().packet_limit(5), 100, "default: no overrides");
    }

    #[test]
    fn dynamic_threshold_limits_one_queue_to_alpha_of_free() {
        // 10 kB pool, alpha 1: a lone queue converges to half the pool.
        let mut buf = SharedBuffer::new(BufferConfig::Dynamic {
            bytes: 10_000,
            alpha: 1.0,
        });
        let mut q = EgressQueues::new(QueueConfig {
            limit_packets: 0,
            ..QueueConfig::default()
        });
        q = q.with_seed(1);
        let mut admitted = 0;
        for i in 0..100 {
            let mut p = pkt(100, 0, Ecn::NotEct);
            if let Admission::Queued { .. } = q.enqueue(PacketId(i), &mut p, 0, 0, &mut buf) {
                admitted += 1;
            }
        }
        assert_eq!(admitted, 50);
        assert_eq!(q.stats.drops[0].0, DropReason::BufferThreshold);
    }

    #[test]
    fn threshold_marking_marks_ect_above_k() {
        let mut q = EgressQueues::new(QueueConfig {
            limit_packets: 0,
            marking: Marking::Threshold { k_bytes: 250 },
            ..QueueConfig::default()
        });
        let mut buf = SharedBuffer::new(BufferConfig::Dedicated);
        q = q.with_seed(1);
        let marks: Vec<bool> = (0..5)
            .map(|i| {
                let mut p = pkt(100, 0, Ecn::Ect0);
                matches!(
                    q.enqueue(PacketId(i), &mut p, 0, 0, &mut buf),
                    Admission::Queued { marked: true }
                )
            })
            .collect();
        // Queue before each arrival: 0, 100, 200, 300, 400 bytes; K = 250.
        assert_eq!(marks, [false, false, false, true, true]);
    }

    /// A packet-threshold RED queue of `limit` packets (thresholds 10 and 20, weight 1: the
    /// average is the last queue length), ns-3's (`ns3`) or Tandem's own.
    fn red_queue(limit: u32, ns3: bool) -> EgressQueues {
        let q = EgressQueues::new(QueueConfig {
            limit_packets: limit,
            marking: Marking::Red {
                min_bytes: 10,
                max_bytes: 20,
                max_p: 0.1,
                weight: 1.0,
                ecn: false,
                gentle: true,
                packets: true,
            },
            ..QueueConfig::default()
        })
        .with_link_rate(12_000_000);
        if ns3 {
            q.with_ns3_stream(Mrg32k3a::ns3_assigned(1, 0, 1).unwrap())
        } else {
            q.with_seed(1)
        }
    }

    #[test]
    fn ns3_red_notes_an_idle_period_whenever_its_queue_disc_is_found_empty() {
        // ns-3's RED notes an idle period when it is asked for a packet and has none: right
        // after a packet that found the wire idle went out, and when the device, done
        // sending, takes the packet from its slot and the queue disc behind it is empty. A
        // packet that waits in the slot while the wire is busy does not make it ask.
        let mut buf = SharedBuffer::new(BufferConfig::Dedicated);
        let mut q = red_queue(100, true);
        q.enqueue(PacketId(0), &mut pkt(1500, 0, Ecn::NotEct), 0, 0, &mut buf);
        q.dequeue(0, &mut buf);
        assert_eq!(q.first_red.idle_since, Some(0));
        q.enqueue(PacketId(1), &mut pkt(1500, 0, Ecn::NotEct), 5, 5, &mut buf);
        assert_eq!(q.first_red.idle_since, None, "an arrival ends the idle period");
        q.enqueue(PacketId(2), &mut pkt(1500, 0, Ecn::NotEct), 6, 6, &mut buf);
        q.dequeue(12, &mut buf);
        assert_eq!(q.first_red.idle_since, None, "one still waits");
        q.dequeue(24, &mut buf);
        assert_eq!(q.first_red.idle_since, Some(24));
        // Tandem's own RED notes it as soon as at most one packet waits.
        let mut q = red_queue(100, false);
        q.enqueue(PacketId(0), &mut pkt(1500, 0, Ecn::NotEct), 0, 0, &mut buf);
        q.dequeue(0, &mut buf);
        assert_eq!(q.first_red.idle_since, Some(0));
    }

    #[test]
    fn ns3_red_counts_the_queue_disc_and_decides_before_the_limit() {
        // ns-3's average counts the queue disc only (one packet fewer than wait here, the
        // other sits in the device's slot), and a packet the full queue refuses still counts.
        let mut buf = SharedBuffer::new(BufferConfig::Dedicated);
        for (ns3, avg, count) in [(true, 2.0, 4), (false, 2.0, 3)] {
            let mut q = red_queue(3, ns3);
            let mut last = None;
            for i in 0..4 {
                last = Some(q.enqueue(PacketId(i), &mut pkt(1500, 0, Ecn::NotEct), 0, 0, &mut buf));
            }
            assert_eq!(last, Some(Admission::Dropped(DropReason::QueuePackets)));
            let c = &q.first_red;
            assert_eq!((c.avg, c.count), (avg, count), "ns3 {ns3}");
        }
    }

    #[test]
    fn ns3_red_counts_the_device_slot_in_the_queue_disc_right_after_a_transmission_ends() {
        // ns-3 refills the device's one-slot queue in an event of its own after a transmission
        // ends: the first arrival in that instant finds every waiting packet in the queue disc
        // (RED's average and the disc's limit of `limit - 1`); the next, whose own enqueue
        // refilled the slot, counts one fewer again, as does any later arrival.
        let mut buf = SharedBuffer::new(BufferConfig::Dedicated);
        let np = || pkt(1500, 0, Ecn::NotEct);
        for ended in [true, false] {
            let mut q = red_queue(100, true);
            for i in 0..4 {
                q.enqueue(PacketId(i), &mut np(), 0, 0, &mut buf);
            }
            q.dequeue(0, &mut buf);
            q.dequeue(12, &mut buf);
            if ended {
                q.ns3_transmission_ended(12);
            }
            // Two waiting: both in the disc just after the end, else one in the slot.
            q.enqueue(PacketId(4), &mut np(), 12, 12, &mut buf);
            assert_eq!(
                q.first_red.avg,
                if ended { 2.0 } else { 1.0 },
                "weight 1: the last count"
            );
            q.enqueue(PacketId(5), &mut np(), 12, 12, &mut buf);
            assert_eq!(q.first_red.avg, 2.0);
            q.enqueue(PacketId(6), &mut np(), 13, 13, &mut buf);
            assert_eq!(q.first_red.avg, 3.0);
        }
        // A limit of 4: the disc holds 3, the slot 1. Four wait behind a transmission; when it
        // ends, three wait, all in the disc, which is full.
        for (ended, admitted) in [(true, false), (false, true)] {
            let mut q = red_queue(4, true);
            q.enqueue(PacketId(0), &mut np(), 0, 0, &mut buf);
            q.dequeue(0, &mut buf);
            for i in 1..5 {
                let a = q.enqueue(PacketId(i), &mut np(), 1, 1, &mut buf);
                assert_eq!(a, Admission::Queued { marked: false });
            }
            q.dequeue(12, &mut buf);
            if ended {
                q.ns3_transmission_ended(12);
            }
            let a = q.enqueue(PacketId(5), &mut np(), 12, 12, &mut buf);
            assert_eq!(a == Admission::Queued { marked: false }, admitted, "ended {ended}");
        }
        // Tandem's own RED does not model the slot.
        let mut q = red_queue(100, false);
        q.enqueue(PacketId(0), &mut np(), 0, 0, &mut buf);
        q.dequeue(0, &mut buf);
        q.enqueue(PacketId(1), &mut np(), 0, 0, &mut buf);
        q.ns3_transmission_ended(12);
        assert_eq!(q.first_red.slot_free_at, None);
    }

    #[test]
    fn ns3_seconds_truncates_as_ns3s_fixed_point_time_does() {
        use crate::time::{NS, SEC, US};
        // ns-3's `GetSeconds` sits just below the exact quotient (truncated 64.64 product with
        // 2^128 / 10^9 rounded up), so RED's idle ageing at 1 Gb/s (83,333.3 packets/s)
        // counts one packet fewer than the exact seconds give for these idle periods.
        let ptc = 1e9 / (8.0 * 1500.0);
        for (us, exact, ns3) in [(12, 1, 0), (24, 2, 1), (36, 3, 2), (48, 4, 3), (60, 5, 4)] {
            let d = us * US;
            assert_eq!((ptc * crate::time::as_secs(d)) as u32, exact, "{us} us, exact");
            assert_eq!((ptc * ns3_seconds(d)) as u32, ns3, "{us} us, ns-3");
        }
        assert_eq!(ns3_seconds(48 * US), 4.7999999999999974e-05);
        assert_eq!(ns3_seconds(0), 0.0);
        assert_eq!(ns3_seconds(SEC), 1.0);
        // Within the 64 fraction bits' truncation (and a rounding to double) of the exact
        // value, from 1 ns to hours.
        for d in [NS, 12_016 * NS, 999_999_999 * NS, 3 * SEC + 7 * NS, 7_200 * SEC] {
            let exact = crate::time::as_secs(d);
            let bound = 2f64.powi(-62) + 4.0 * f64::EPSILON * exact;
            assert!((ns3_seconds(d) - exact).abs() <= bound, "{d}");
        }
    }

    #[test]
    fn watched_levels() {
        let mut q = EgressQueues::new(QueueConfig {
            limit_packets: 0,
            ..QueueConfig::default()
        });
        q.set_watch(vec![300, 100]);
        let mut buf = SharedBuffer::new(BufferConfig::Dedicated);
        q = q.with_seed(1);
        let mut levels = vec![];
        for i in 0..4 {
            let mut p = pkt(100, 0, Ecn::NotEct);
            q.enqueue(PacketId(i), &mut p, 0, 0, &mut buf);
            levels.push(q.level());
        }
        assert_eq!(levels, [1, 1, 2, 2]);
    }

    #[test]
    fn watched_packet_levels_add_to_byte_levels() {
        let mut q = EgressQueues::new(QueueConfig {
            limit_packets: 0,
            ..QueueConfig::default()
        });
        q.set_watch(vec![250]);
        q.set_watch_packets(vec![3, 2, 3]);
        let mut buf = SharedBuffer::new(BufferConfig::Dedicated);
        q = q.with_seed(1);
        let mut levels = vec![];
        for i in 0..4 {
            let mut p = pkt(100, 0, Ecn::NotEct);
            q.enqueue(PacketId(i), &mut p, 0, 0, &mut buf);
            levels.push(q.level());
        }
        // 1..4 packets of 100 bytes: packet levels 2 and 3, byte level 250 (3 packets).
        assert_eq!(levels, [0, 1, 3, 3]);
        q.dequeue(1, &mut buf);
        q.dequeue(1, &mut buf);
        assert_eq!(q.level(), 1, "2 packets, 200 bytes");
    }
}
