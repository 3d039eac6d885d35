//! The sans-IO switch program: [`TurboSwitch::handle`] is fed `(now, Event)` and pushes
//! [`Action`]s. It never reads a clock, socket, global or random number; the same events give
//! the same actions. What it decides:
//!
//! * at ingress, whether a packet is split (larger than `split_bytes`, a free slot), where its
//!   header goes (NF port, highest priority) and where its payload goes (a recirculation port's
//!   parking lane; in copies mode with `n` copies behind it);
//! * when a processed header comes back, that the payload may leave (PayloadPark: merge now);
//! * when a payload comes back from a recirculation pass, merge and emit it if its header is
//!   back, else send it round again (copies mode: on the fast lane, without copies);
//! * slots not released within the reclaim timeout are reclaimed and their packet reported
//!   lost ([`DropReason::ReclaimTimeout`]); parts of reclaimed slots are stale
//!   ([`DropReason::StaleTag`]).
//!
//! Buffer admission is the traffic manager's (the model's) job; its drops use
//! [`DropReason::BufferFull`].

use crate::config::{ConfigError, CoreConfig, Mode};
use crate::controller::{CopyController, RttEstimator};
use crate::split::{Parked, SlotError, SlotTable};
use crate::types::{PacketId, Tag, Time};

/// What the NF receives: a whole packet or the part of a split one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NfPacket {
    /// A whole packet (not split).
    Whole(PacketId),
    /// The header (or, with PayloadPark, the rest of the packet) of a split packet.
    Split(Tag),
}

/// Egress lanes of a port, by strict priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// Highest priority: headers to the NF, payloads going round again in copies mode.
    High,
    /// Normal: whole packets to the NF, parking lane of a recirculation port, output.
    Normal,
}

impl Lane {
    /// Index of the lane (0 = highest priority).
    pub fn index(self) -> usize {
        match self {
            Lane::High => 0,
            Lane::Normal => 1,
        }
    }
}

/// Which queues a buffer drop happened in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueueKind {
    /// The NF port.
    Nf,
    /// A recirculation port (payloads, copies).
    Recirc,
    /// An output port.
    Output,
}

/// Why something was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DropReason {
    /// The shared buffer had no room for it (traffic manager).
    BufferFull(QueueKind),
    /// Its slot timed out: header or payload never came back.
    ReclaimTimeout,
    /// A header or payload of a slot already released (late after a reclaim).
    StaleTag,
    /// A tag naming no slot.
    UnknownTag,
}

impl DropReason {
    /// Short name for CSV.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::BufferFull(QueueKind::Nf) => "buffer-full-nf",
            DropReason::BufferFull(QueueKind::Recirc) => "buffer-full-recirc",
            DropReason::BufferFull(QueueKind::Output) => "buffer-full-output",
            DropReason::ReclaimTimeout => "reclaim-timeout",
            DropReason::StaleTag => "stale-tag",
            DropReason::UnknownTag => "unknown-tag",
        }
    }
}

/// Something that happened at the switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A packet from the input port reached ingress.
    Arrival {
        /// The packet.
        pkt: PacketId,
        /// Its size.
        bytes: u32,
    },
    /// A packet came back from the NF.
    FromNf {
        /// What it is.
        part: NfPacket,
        /// Its size.
        bytes: u32,
    },
    /// A payload came back to ingress after a pass through a recirculation port.
    PayloadBack {
        /// Its tag.
        tag: Tag,
        /// Its size.
        bytes: u32,
    },
    /// A filler copy came back to ingress (it is retired).
    CopyBack,
    /// Queue statistics of a recirculation port's parking lane, sampled at `sampled_at`.
    QueueStats {
        /// Recirculation port index.
        port: u16,
        /// Bytes in the parking lane.
        bytes: u64,
        /// When they were sampled.
        sampled_at: Time,
    },
    /// Time passed (answer to [`Action::WakeAt`]).
    Tick,
}

/// What the switch does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Enqueue toward the NF.
    ToNf {
        /// What it is.
        part: NfPacket,
        /// Of which input packet.
        pkt: PacketId,
        /// Bytes sent to the NF.
        bytes: u32,
        /// Lane of the NF port.
        lane: Lane,
    },
    /// Enqueue a payload on a recirculation port.
    ToRecirc {
        /// Its tag.
        tag: Tag,
        /// Of which input packet.
        pkt: PacketId,
        /// Payload bytes.
        bytes: u32,
        /// Recirculation port index.
        port: u16,
        /// Parking lane (normal) or fast lane (high).
        lane: Lane,
    },
    /// Enqueue `count` filler copies of `bytes` each on a recirculation port's parking lane.
    Copies {
        /// Recirculation port index.
        port: u16,
        /// Size of each copy.
        bytes: u32,
        /// How many.
        count: u32,
    },
    /// Send a (merged or whole) packet to the output.
    Emit {
        /// The packet.
        pkt: PacketId,
        /// Its full size.
        bytes: u32,
        /// How long its payload was parked (`None`: not split).
        parked_for: Option<Time>,
        /// Recirculation passes of its payload.
        passes: u32,
    },
    /// Something was dropped by the program.
    Drop {
        /// Why.
        reason: DropReason,
        /// The input packet lost with it, when known (a stale part's packet was already
        /// reported).
        pkt: Option<PacketId>,
    },
    /// Call back with [`Event::Tick`] at this time.
    WakeAt(Time),
}

/// The core refused an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreError {
    /// `now` is before the previous event's time.
    TimeWentBackwards {
        /// The event's time.
        now: Time,
        /// The previous event's time.
        last: Time,
    },
    /// A recirculation port index out of range.
    BadPort(u16),
}

impl std::fmt::Display for CoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CoreError::TimeWentBackwards { now, last } => write!(f, "time went backwards: {now} < {last}"),
            CoreError::BadPort(p) => write!(f, "no recirculation port {p}"),
        }
    }
}

impl std::error::Error for CoreError {}

/// The program's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoreStats {
    /// Packets seen at ingress.
    pub arrivals: u64,
    /// Packets split (header to the NF, payload parked).
    pub split: u64,
    /// Packets sent whole to the NF because they are small or in the no-split mode.
    pub whole: u64,
    /// Packets sent whole because no slot was free.
    pub no_slot: u64,
    /// Headers (or PayloadPark remainders) back from the NF.
    pub headers_back: u64,
    /// Packets merged and emitted.
    pub merged: u64,
    /// Recirculation passes of payloads.
    pub passes: u64,
    /// Passes that found the header not back yet (sent round again).
    pub early_passes: u64,
    /// Filler copies made.
    pub copies_made: u64,
    /// Filler copies retired at ingress.
    pub copies_retired: u64,
    /// Slots reclaimed by the timeout.
    pub reclaimed: u64,
    /// Stale headers or payloads dropped.
    pub stale: u64,
}

/// The TurboSwitch program (and its two baselines).
#[derive(Debug, Clone)]
pub struct TurboSwitch {
    cfg: CoreConfig,
    slots: SlotTable,
    ctrl: Vec<CopyController>,
    rtt: RttEstimator,
    stats: CoreStats,
    last: Time,
    wake: Option<Time>,
    expired: Vec<(Tag, Parked)>,
}

impl TurboSwitch {
    /// A program with `cfg`.
    pub fn new(cfg: CoreConfig) -> Result<TurboSwitch, ConfigError> {
        cfg.validate()?;
        Ok(TurboSwitch {
            slots: SlotTable::new(cfg.slots, cfg.reclaim_timeout),
            ctrl: (0..cfg.recirc_ports)
                .map(|_| CopyController::new(cfg.port_bps, cfg.max_copies))
                .collect(),
            rtt: RttEstimator::default(),
            stats: CoreStats::default(),
            last: 0,
            wake: None,
            expired: Vec::new(),
            cfg,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &CoreConfig {
        &self.cfg
    }

    /// The counters.
    pub fn stats(&self) -> &CoreStats {
        &self.stats
    }

    /// Slots in use.
    pub fn slots_in_use(&self) -> usize {
        self.slots.in_use()
    }

    /// The parking delay the copies controller currently aims at.
    pub fn target_delay(&self) -> Time {
        self.cfg
            .target_delay
            .unwrap_or_else(|| self.rtt.target(self.cfg.target_dev_mult))
    }

    /// Handles one event at `now`, pushing the resulting actions into `out`.
    pub fn handle(&mut self, now: Time, ev: Event, out: &mut Vec<Action>) -> Result<(), CoreError> {
        if now < self.last {
            return Err(CoreError::TimeWentBackwards { now, last: self.last });
        }
        self.last = now;
        self.expire(now, out);
        match ev {
            Event::Arrival { pkt, bytes } => self.arrival(now, pkt, bytes, out),
            Event::FromNf { part, bytes } => self.header_back(now, part, bytes, out),
            Event::PayloadBack { tag, .. } => self.payload_back(now, tag, out),
            Event::CopyBack => self.stats.copies_retired += 1,
            Event::QueueStats {
                port,
                bytes,
                sampled_at,
            } => {
                let c = self.ctrl.get_mut(usize::from(port)).ok_or(CoreError::BadPort(port))?;
                c.on_stats(sampled_at, bytes);
            }
            Event::Tick => {}
        }
        if self.wake.is_some_and(|w| w <= now) {
            self.wake = None;
        }
        if self.wake.is_none() {
            if let Some(d) = self.slots.next_deadline() {
                self.wake = Some(d);
                out.push(Action::WakeAt(d));
            }
        }
        Ok(())
    }

    fn expire(&mut self, now: Time, out: &mut Vec<Action>) {
        self.expired.clear();
        self.slots.expire(now, &mut self.expired);
        for (_, p) in &self.expired {
            self.stats.reclaimed += 1;
            out.push(Action::Drop {
                reason: DropReason::ReclaimTimeout,
                pkt: Some(p.pkt),
            });
        }
    }

    fn port_of(&self, tag: Tag) -> u16 {
        (tag.slot % u32::from(self.cfg.recirc_ports)) as u16
    }

    fn send_whole(&mut self, pkt: PacketId, bytes: u32, out: &mut Vec<Action>) {
        out.push(Action::ToNf {
            part: NfPacket::Whole(pkt),
            pkt,
            bytes,
            lane: Lane::Normal,
        });
    }

    fn arrival(&mut self, now: Time, pkt: PacketId, bytes: u32, out: &mut Vec<Action>) {
        self.stats.arrivals += 1;
        let c = &self.cfg;
        let min = match c.mode {
            Mode::NoSplit => u32::MAX,
            Mode::PayloadPark => c.split_bytes.saturating_add(c.payloadpark_bytes),
            Mode::Recirculate | Mode::Copies => c.split_bytes.saturating_add(1),
        };
        if bytes < min {
            self.stats.whole += 1;
            self.send_whole(pkt, bytes, out);
            return;
        }
        let Some(tag) = self.slots.alloc(now, pkt, bytes) else {
            self.stats.no_slot += 1;
            self.send_whole(pkt, bytes, out);
            return;
        };
        self.stats.split += 1;
        if c.mode == Mode::PayloadPark {
            out.push(Action::ToNf {
                part: NfPacket::Split(tag),
                pkt,
                bytes: (bytes - c.payloadpark_bytes).saturating_add(c.tag_bytes),
                lane: Lane::Normal,
            });
            return;
        }
        out.push(Action::ToNf {
            part: NfPacket::Split(tag),
            pkt,
            bytes: c.split_bytes.saturating_add(c.tag_bytes),
            lane: Lane::High,
        });
        let payload = bytes - c.split_bytes;
        let port = self.port_of(tag);
        out.push(Action::ToRecirc {
            tag,
            pkt,
            bytes: payload,
            port,
            lane: Lane::Normal,
        });
        if self.cfg.mode == Mode::Copies {
            let target = self.target_delay();
            if let Some(ctrl) = self.ctrl.get_mut(usize::from(port)) {
                let n = ctrl.copies_for(now, payload, target);
                if n > 0 {
                    self.stats.copies_made += u64::from(n);
                    out.push(Action::Copies {
                        port,
                        bytes: payload,
                        count: n,
                    });
                }
            }
        }
    }

    fn stale(&mut self, e: SlotError, out: &mut Vec<Action>) {
        self.stats.stale += 1;
        let reason = match e {
            SlotError::Stale => DropReason::StaleTag,
            SlotError::Unknown => DropReason::UnknownTag,
        };
        out.push(Action::Drop { reason, pkt: None });
    }

    fn header_back(&mut self, now: Time, part: NfPacket, bytes: u32, out: &mut Vec<Action>) {
        let tag = match part {
            NfPacket::Whole(pkt) => {
                out.push(Action::Emit {
                    pkt,
                    bytes,
                    parked_for: None,
                    passes: 0,
                });
                return;
            }
            NfPacket::Split(tag) => tag,
        };
        let p = match self.slots.get_mut(tag) {
            Ok(p) => p,
            Err(e) => return self.stale(e, out),
        };
        self.stats.headers_back += 1;
        p.header_back = Some(now);
        let rtt = now - p.parked_at;
        self.rtt.sample(rtt);
        if self.cfg.mode == Mode::PayloadPark {
            if let Ok(p) = self.slots.release(tag) {
                self.stats.merged += 1;
                out.push(Action::Emit {
                    pkt: p.pkt,
                    bytes: p.bytes,
                    parked_for: Some(now - p.parked_at),
                    passes: 0,
                });
            }
        }
    }

    fn payload_back(&mut self, now: Time, tag: Tag, out: &mut Vec<Action>) {
        let p = match self.slots.get_mut(tag) {
            Ok(p) => p,
            Err(e) => return self.stale(e, out),
        };
        p.passes += 1;
        self.stats.passes += 1;
        if p.header_back.is_some() {
            if let Ok(p) = self.slots.release(tag) {
                self.stats.merged += 1;
                out.push(Action::Emit {
                    pkt: p.pkt,
                    bytes: p.bytes,
                    parked_for: Some(now - p.parked_at),
                    passes: p.passes,
                });
            }
            return;
        }
        self.stats.early_passes += 1;
        let (pkt, payload) = (p.pkt, p.bytes - self.cfg.split_bytes);
        let lane = if self.cfg.mode == Mode::Copies {
            Lane::High
        } else {
            Lane::Normal
        };
        let port = self.port_of(tag);
        if lane == Lane::High {
            if let Some(c) = self.ctrl.get_mut(usize::from(port)) {
                // The fast lane drains the same port: count it so the prediction stays right.
                c.record(now, u64::from(payload));
            }
        }
        out.push(Action::ToRecirc {
            tag,
            pkt,
            bytes: payload,
            port,
            lane,
        });
    }
}

impl tandem_time::sansio::SansIo for TurboSwitch {
    type Input<'a> = Event;
    type Output = Vec<Action>;
    type Error = CoreError;

    fn handle(&mut self, now: Time, input: Event, out: &mut Vec<Action>) -> Result<(), CoreError> {
        TurboSwitch::handle(self, now, input, out)
    }

    /// The time of the pending [`Action::WakeAt`] (the oldest parked slot's timeout).
    fn poll_timeout(&self) -> Option<Time> {
        self.wake
    }

    fn timeout() -> Event {
        Event::Tick
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{MS, US};

    fn core(mode: Mode) -> TurboSwitch {
        TurboSwitch::new(CoreConfig {
            mode,
            slots: 4,
            ..CoreConfig::default()
        })
        .unwrap()
    }

    fn run(c: &mut TurboSwitch, now: Time, ev: Event) -> Vec<Action> {
        let mut out = Vec::new();
        c.handle(now, ev, &mut out).unwrap();
        // The shared contract's poll_timeout is the wake the core asked for.
        if let Some(&Action::WakeAt(at)) = out.iter().rev().find(|a| matches!(a, Action::WakeAt(_))) {
            assert_eq!(tandem_time::sansio::SansIo::poll_timeout(c), Some(at));
        }
        out.retain(|a| !matches!(a, Action::WakeAt(_)));
        out
    }

    /// `advance` feeds the reclaim timeout the core asked for, as a driver's tick would.
    #[test]
    fn the_shared_core_contract_runs_the_reclaim_timeout() {
        use tandem_time::sansio::{advance, SansIo};
        let mut c = core(Mode::Recirculate);
        let mut out = Vec::new();
        SansIo::handle(
            &mut c,
            0,
            Event::Arrival {
                pkt: PacketId(3),
                bytes: 800,
            },
            &mut out,
        )
        .unwrap();
        assert_eq!(SansIo::poll_timeout(&c), Some(MS));
        out.clear();
        advance(&mut c, MS - 1, &mut out).unwrap();
        assert!(out.is_empty(), "{out:?}");
        advance(&mut c, MS, &mut out).unwrap();
        assert!(
            out.contains(&Action::Drop {
                reason: DropReason::ReclaimTimeout,
                pkt: Some(PacketId(3))
            }),
            "{out:?}"
        );
        assert_eq!(SansIo::poll_timeout(&c), None);
    }

    fn split_tag(acts: &[Action]) -> Tag {
        acts.iter()
            .find_map(|a| match a {
                Action::ToNf {
                    part: NfPacket::Split(t),
                    ..
                } => Some(*t),
                _ => None,
            })
            .unwrap()
    }

    #[test]
    fn recirculation_merges_once_the_header_is_back() {
        let mut c = core(Mode::Recirculate);
        let a = run(
            &mut c,
            0,
            Event::Arrival {
                pkt: PacketId(7),
                bytes: 1000,
            },
        );
        let tag = split_tag(&a);
        assert!(a.contains(&Action::ToNf {
            part: NfPacket::Split(tag),
            pkt: PacketId(7),
            bytes: 72,
            lane: Lane::High
        }));
        assert!(a.contains(&Action::ToRecirc {
            tag,
            pkt: PacketId(7),
            bytes: 936,
            port: 0,
            lane: Lane::Normal
        }));
        // Payload back before the header: round again.
        let a = run(&mut c, 5 * US, Event::PayloadBack { tag, bytes: 936 });
        assert!(matches!(a[..], [Action::ToRecirc { lane: Lane::Normal, .. }]));
        let a = run(
            &mut c,
            20 * US,
            Event::FromNf {
                part: NfPacket::Split(tag),
                bytes: 72,
            },
        );
        assert!(a.is_empty());
        let a = run(&mut c, 25 * US, Event::PayloadBack { tag, bytes: 936 });
        assert_eq!(
            a,
            vec![Action::Emit {
                pkt: PacketId(7),
                bytes: 1000,
                parked_for: Some(25 * US),
                passes: 2
            }]
        );
        // A duplicate is stale, never merged twice.
        let a = run(&mut c, 26 * US, Event::PayloadBack { tag, bytes: 936 });
        assert_eq!(
            a,
            vec![Action::Drop {
                reason: DropReason::StaleTag,
                pkt: None
            }]
        );
        assert_eq!(c.stats().merged, 1);
        assert_eq!(c.slots_in_use(), 0);
    }

    #[test]
    fn small_packets_and_no_split_go_whole() {
        let mut c = core(Mode::Recirculate);
        let a = run(
            &mut c,
            0,
            Event::Arrival {
                pkt: PacketId(1),
                bytes: 64,
            },
        );
        assert!(matches!(
            a[..],
            [Action::ToNf {
                part: NfPacket::Whole(_),
                bytes: 64,
                ..
            }]
        ));
        let mut c = core(Mode::NoSplit);
        let a = run(
            &mut c,
            0,
            Event::Arrival {
                pkt: PacketId(1),
                bytes: 1500,
            },
        );
        assert!(matches!(
            a[..],
            [Action::ToNf {
                part: NfPacket::Whole(_),
                bytes: 1500,
                ..
            }]
        ));
        let a = run(
            &mut c,
            9,
            Event::FromNf {
                part: NfPacket::Whole(PacketId(1)),
                bytes: 1500,
            },
        );
        assert!(matches!(a[..], [Action::Emit { parked_for: None, .. }]));
    }

    #[test]
    fn payloadpark_keeps_160_bytes_and_merges_on_return() {
        let mut c = core(Mode::PayloadPark);
        let a = run(
            &mut c,
            0,
            Event::Arrival {
                pkt: PacketId(1),
                bytes: 200,
            },
        );
        assert!(
            matches!(
                a[..],
                [Action::ToNf {
                    part: NfPacket::Whole(_),
                    ..
                }]
            ),
            "too small"
        );
        let a = run(
            &mut c,
            0,
            Event::Arrival {
                pkt: PacketId(2),
                bytes: 1000,
            },
        );
        let tag = split_tag(&a);
        assert!(matches!(a[..], [Action::ToNf { bytes: 848, .. }]));
        let a = run(
            &mut c,
            10 * US,
            Event::FromNf {
                part: NfPacket::Split(tag),
                bytes: 848,
            },
        );
        assert!(matches!(a[..], [Action::Emit { bytes: 1000, .. }]));
    }

    #[test]
    fn no_free_slot_falls_back_to_whole_packets() {
        let mut c = core(Mode::Recirculate);
        for i in 0..4 {
            run(
                &mut c,
                0,
                Event::Arrival {
                    pkt: PacketId(i),
                    bytes: 500,
                },
            );
        }
        let a = run(
            &mut c,
            0,
            Event::Arrival {
                pkt: PacketId(9),
                bytes: 500,
            },
        );
        assert!(matches!(
            a[..],
            [Action::ToNf {
                part: NfPacket::Whole(_),
                ..
            }]
        ));
        assert_eq!(c.stats().no_slot, 1);
    }

    #[test]
    fn a_lost_header_is_reclaimed_after_the_timeout_and_counted() {
        let mut c = core(Mode::Recirculate);
        let mut out = Vec::new();
        c.handle(
            0,
            Event::Arrival {
                pkt: PacketId(3),
                bytes: 800,
            },
            &mut out,
        )
        .unwrap();
        let tag = split_tag(&out);
        assert!(out.contains(&Action::WakeAt(MS)));
        let a = run(&mut c, MS - 1, Event::PayloadBack { tag, bytes: 736 });
        assert!(matches!(a[..], [Action::ToRecirc { .. }]));
        let a = run(&mut c, MS, Event::Tick);
        assert_eq!(
            a,
            vec![Action::Drop {
                reason: DropReason::ReclaimTimeout,
                pkt: Some(PacketId(3))
            }]
        );
        assert_eq!(c.stats().reclaimed, 1);
        let a = run(&mut c, MS + 5, Event::PayloadBack { tag, bytes: 736 });
        assert_eq!(
            a,
            vec![Action::Drop {
                reason: DropReason::StaleTag,
                pkt: None
            }]
        );
        let a = run(
            &mut c,
            MS + 9,
            Event::FromNf {
                part: NfPacket::Split(tag),
                bytes: 72,
            },
        );
        assert_eq!(
            a,
            vec![Action::Drop {
                reason: DropReason::StaleTag,
                pkt: None
            }]
        );
    }

    #[test]
    fn copies_mode_adds_copies_and_stragglers_take_the_fast_lane() {
        let mut c = TurboSwitch::new(CoreConfig {
            mode: Mode::Copies,
            target_delay: Some(20 * US),
            ..CoreConfig::default()
        })
        .unwrap();
        let a = run(
            &mut c,
            0,
            Event::Arrival {
                pkt: PacketId(1),
                bytes: 1064,
            },
        );
        let tag = split_tag(&a);
        assert!(
            a.contains(&Action::Copies {
                port: 0,
                bytes: 1000,
                count: 32
            }),
            "{a:?}"
        );
        let a = run(&mut c, 19 * US, Event::PayloadBack { tag, bytes: 1000 });
        assert!(matches!(a[..], [Action::ToRecirc { lane: Lane::High, .. }]));
        run(&mut c, 20 * US, Event::CopyBack);
        assert_eq!(c.stats().copies_retired, 1);
    }

    #[test]
    fn time_going_backwards_is_an_error_not_a_panic() {
        let mut c = core(Mode::Recirculate);
        let mut out = Vec::new();
        c.handle(10, Event::Tick, &mut out).unwrap();
        assert!(c.handle(5, Event::Tick, &mut out).is_err());
        assert!(c
            .handle(
                10,
                Event::QueueStats {
                    port: 3,
                    bytes: 0,
                    sampled_at: 0
                },
                &mut out
            )
            .is_err());
    }

    #[test]
    fn same_events_same_actions() {
        let evs = |c: &mut TurboSwitch| {
            let mut all = Vec::new();
            for i in 0..50u64 {
                let mut out = Vec::new();
                c.handle(
                    i * US,
                    Event::Arrival {
                        pkt: PacketId(i),
                        bytes: 100 + (i as u32 * 37) % 1400,
                    },
                    &mut out,
                )
                .unwrap();
                all.extend(out);
            }
            all
        };
        let cfg = CoreConfig {
            mode: Mode::Copies,
            ..CoreConfig::default()
        };
        let a = evs(&mut TurboSwitch::new(cfg.clone()).unwrap());
        let b = evs(&mut TurboSwitch::new(cfg).unwrap());
        assert_eq!(a, b);
    }
}
