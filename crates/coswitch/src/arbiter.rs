//! The Flow-Arbiter: sits on each server between the VMs and the virtual switch, counts packets
//! per flow and splits the traffic. A flow whose packet count reaches the current threshold is
//! an **elephant**: that packet and every later one is marked and sent straight to the physical
//! switch, which handles it per flow in hardware. Every other packet belongs to a **mouse** and
//! goes through the local virtual switch.
//!
//! Rules, exactly:
//! * a flow's `n`-th packet (counting from 1) is an elephant's when `n >= threshold`; with
//!   threshold 1 every packet is, with `u32::MAX` (in practice) none is;
//! * once an elephant, a flow stays one until its state expires, even if the threshold later
//!   rises (so a flow does not flap between the two paths); when the threshold falls, a mouse
//!   whose count already reaches it turns elephant at its next packet;
//! * per-flow state is forgotten after `idle_timeout` without a packet ([`FlowArbiter::expire`]);
//!   a returning flow counts from zero again;
//! * state is bounded by `max_flows`: when full, a new flow is sent as a mouse without state
//!   (counted in [`ArbiterStats::untracked`]), which is always safe because the virtual switch
//!   can forward anything.
//!
//! Sans-IO: the arbiter is generic over the flow key and is fed `(now, key)`; it never reads a
//! clock.

use crate::marking::Mark;
use crate::types::{Time, SEC};
use rustc_hash::FxHashMap;
use std::hash::Hash;

/// Flow-Arbiter parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArbiterConfig {
    /// Packets after which a flow is an elephant (the first threshold, before Flow-Prediction
    /// sends one).
    pub threshold: u32,
    /// Per-flow state is forgotten after this long without a packet.
    pub idle_timeout: Time,
    /// Most flows with state at once.
    pub max_flows: usize,
    /// How elephants are marked.
    pub mark: Mark,
}

impl Default for ArbiterConfig {
    /// Threshold 18 packets (where the paper's Figure 1 says the flow-count curve stops rising
    /// faster than the packet-count curve), 10 s idle timeout and 1 M flows (**ours**), DSCP 8.
    fn default() -> Self {
        ArbiterConfig {
            threshold: 18,
            idle_timeout: 10 * SEC,
            max_flows: 1 << 20,
            mark: Mark::default(),
        }
    }
}

/// Where the arbiter sends a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A mouse's packet: through the local virtual switch, unmarked.
    Mouse,
    /// An elephant's packet: marked with `mark`, straight to the physical switch. `new` is
    /// true for the packet that made the flow an elephant (the moment to tell the controller).
    Elephant {
        /// The mark to apply.
        mark: Mark,
        /// This packet turned the flow into an elephant.
        new: bool,
    },
}

impl Verdict {
    /// Whether the packet is an elephant's.
    pub fn is_elephant(self) -> bool {
        matches!(self, Verdict::Elephant { .. })
    }
}

/// What the arbiter has done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArbiterStats {
    /// Packets seen.
    pub packets: u64,
    /// Packets sent as elephants.
    pub elephant_packets: u64,
    /// Flows that became elephants.
    pub elephants: u64,
    /// Flows whose state was created.
    pub flows: u64,
    /// Flows forgotten after their idle timeout.
    pub expired: u64,
    /// Packets of flows that found the table full (sent as mice without state).
    pub untracked: u64,
}

#[derive(Debug, Clone, Copy)]
struct FlowState {
    packets: u32,
    last_seen: Time,
    elephant: bool,
}

/// One server's Flow-Arbiter.
#[derive(Debug, Clone)]
pub struct FlowArbiter<K> {
    cfg: ArbiterConfig,
    flows: FxHashMap<K, FlowState>,
    stats: ArbiterStats,
}

impl<K: Hash + Eq + Copy> FlowArbiter<K> {
    /// An arbiter with no flows yet. A threshold of 0 is taken as 1.
    pub fn new(mut cfg: ArbiterConfig) -> Self {
        cfg.threshold = cfg.threshold.max(1);
        FlowArbiter {
            cfg,
            flows: FxHashMap::default(),
            stats: ArbiterStats::default(),
        }
    }

    /// Classifies one packet of flow `key` seen at `now`.
    pub fn on_packet(&mut self, now: Time, key: K) -> Verdict {
        self.stats.packets += 1;
        let n = self.flows.len();
        let st = match self.flows.get_mut(&key) {
            Some(st) if now.saturating_sub(st.last_seen) > self.cfg.idle_timeout => {
                // Idle past its timeout but not swept yet: a new flow.
                self.stats.expired += 1;
                self.stats.flows += 1;
                *st = FlowState {
                    packets: 0,
                    last_seen: now,
                    elephant: false,
                };
                st
            }
            Some(st) => st,
            None if n >= self.cfg.max_flows => {
                self.stats.untracked += 1;
                return Verdict::Mouse;
            }
            None => {
                self.stats.flows += 1;
                self.flows.entry(key).or_insert(FlowState {
                    packets: 0,
                    last_seen: now,
                    elephant: false,
                })
            }
        };
        st.packets = st.packets.saturating_add(1);
        st.last_seen = now;
        let new = !st.elephant && st.packets >= self.cfg.threshold;
        if new {
            st.elephant = true;
            self.stats.elephants += 1;
        }
        if st.elephant {
            self.stats.elephant_packets += 1;
            Verdict::Elephant {
                mark: self.cfg.mark,
                new,
            }
        } else {
            Verdict::Mouse
        }
    }

    /// Classifies `n` packets of flow `key` seen together at `now` (a live driver reads packet
    /// counters, not packets). The state and the counters end up exactly as after `n` calls of
    /// [`FlowArbiter::on_packet`]; the verdict is the flow's after them, with `new` when one of
    /// them made it an elephant. `n = 0` changes nothing and answers as the flow stands.
    pub fn on_packets(&mut self, now: Time, key: K, n: u64) -> Verdict {
        let mark = self.cfg.mark;
        if n == 0 {
            let elephant = self.flows.get(&key).is_some_and(|st| st.elephant);
            return if elephant {
                Verdict::Elephant { mark, new: false }
            } else {
                Verdict::Mouse
            };
        }
        let first = self.on_packet(now, key);
        let rest = n - 1;
        if rest == 0 {
            return first;
        }
        self.stats.packets += rest;
        let threshold = u64::from(self.cfg.threshold);
        let Some(st) = self.flows.get_mut(&key) else {
            // Untracked (the table is full): every one of them is a mouse without state.
            self.stats.untracked += rest;
            return first;
        };
        let before = u64::from(st.packets);
        st.packets = u32::try_from(before + rest).unwrap_or(u32::MAX);
        let mut new = matches!(first, Verdict::Elephant { new: true, .. });
        if !st.elephant {
            // The k-th of the rest brings the count to before + k; it crosses at k = T - before.
            let cross = threshold.saturating_sub(before).max(1);
            if rest >= cross {
                st.elephant = true;
                self.stats.elephants += 1;
                self.stats.elephant_packets += rest - cross + 1;
                new = true;
            }
        } else {
            self.stats.elephant_packets += rest;
        }
        if st.elephant {
            Verdict::Elephant { mark, new }
        } else {
            Verdict::Mouse
        }
    }

    /// Takes a new threshold from Flow-Prediction (0 is taken as 1).
    pub fn set_threshold(&mut self, threshold: u32) {
        self.cfg.threshold = threshold.max(1);
    }

    /// The threshold in force.
    pub fn threshold(&self) -> u32 {
        self.cfg.threshold
    }

    /// Forgets flows idle for longer than the idle timeout; returns how many. Call it
    /// periodically (the simulation model does every second).
    pub fn expire(&mut self, now: Time) -> usize {
        let before = self.flows.len();
        let timeout = self.cfg.idle_timeout;
        self.flows.retain(|_, st| now.saturating_sub(st.last_seen) <= timeout);
        let gone = before - self.flows.len();
        self.stats.expired += gone as u64;
        gone
    }

    /// Flows with state now.
    pub fn tracked_flows(&self) -> usize {
        self.flows.len()
    }

    /// Counters so far.
    pub fn stats(&self) -> ArbiterStats {
        self.stats
    }
}

/// One input of a [`FlowArbiter`] through the shared core contract
/// ([`tandem_time::sansio::SansIo`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArbiterInput<K> {
    /// `n` packets of flow `key` seen together ([`FlowArbiter::on_packets`]; 1 for a packet).
    Packets {
        /// The flow.
        key: K,
        /// How many packets.
        n: u64,
    },
    /// A new threshold from Flow-Prediction ([`FlowArbiter::set_threshold`]).
    Threshold(u32),
    /// Forget flows idle past the timeout ([`FlowArbiter::expire`]); the driver chooses when.
    Sweep,
}

/// The shared core contract. The arbiter is driven by packets, not by time: its output is the
/// verdict for each `Packets` input, with the flow's key, and it never asks for a timeout
/// (`poll_timeout` is `None`); the driver feeds `Sweep` ([`SansIo::timeout`]) as often as it
/// wants idle state forgotten (the simulation model every second).
///
/// [`SansIo::timeout`]: tandem_time::sansio::SansIo::timeout
impl<K: Hash + Eq + Copy> tandem_time::sansio::SansIo for FlowArbiter<K> {
    type Input<'a> = ArbiterInput<K>;
    type Output = Vec<(K, Verdict)>;
    type Error = std::convert::Infallible;

    fn handle(&mut self, now: Time, input: ArbiterInput<K>, out: &mut Vec<(K, Verdict)>) -> Result<(), Self::Error> {
        match input {
            ArbiterInput::Packets { key, n } => out.push((key, self.on_packets(now, key, n))),
            ArbiterInput::Threshold(t) => self.set_threshold(t),
            ArbiterInput::Sweep => {
                self.expire(now);
            }
        }
        Ok(())
    }

    fn poll_timeout(&self) -> Option<Time> {
        None
    }

    fn timeout() -> ArbiterInput<K> {
        ArbiterInput::Sweep
    }
}

#[cfg(test)]
mod bulk_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Counting packets in bulk leaves the arbiter exactly as counting them one by one.
        #[test]
        fn bulk_counts_equal_packet_by_packet(
            threshold in 1u32..40,
            max_flows in 1usize..4,
            batches in proptest::collection::vec((0u8..5, 0u64..60, 0u64..3), 1..40),
        ) {
            let cfg = ArbiterConfig { threshold, idle_timeout: 10, max_flows, ..ArbiterConfig::default() };
            let (mut bulk, mut one) = (FlowArbiter::new(cfg), FlowArbiter::new(cfg));
            let mut now = 0;
            for (key, n, dt) in batches {
                now += dt * 6;
                let got = bulk.on_packets(now, key, n);
                let mut last = None;
                let mut new = false;
                for _ in 0..n {
                    let v = one.on_packet(now, key);
                    new |= matches!(v, Verdict::Elephant { new: true, .. });
                    last = Some(v);
                }
                if let Some(v) = last {
                    prop_assert_eq!(got.is_elephant(), v.is_elephant());
                    prop_assert_eq!(matches!(got, Verdict::Elephant { new: true, .. }), new);
                }
                prop_assert_eq!(bulk.stats(), one.stats());
                prop_assert_eq!(bulk.tracked_flows(), one.tracked_flows());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::MS;
    use proptest::prelude::*;

    fn arb(threshold: u32) -> FlowArbiter<u32> {
        FlowArbiter::new(ArbiterConfig {
            threshold,
            idle_timeout: SEC,
            max_flows: 4,
            mark: Mark::Dscp(8),
        })
    }

    #[test]
    fn marks_exactly_from_the_threshold_th_packet() {
        let mut a = arb(3);
        let v: Vec<Verdict> = (0..5).map(|i| a.on_packet(i * MS, 7)).collect();
        assert_eq!(v[..2], [Verdict::Mouse, Verdict::Mouse]);
        assert_eq!(
            v[2],
            Verdict::Elephant {
                mark: Mark::Dscp(8),
                new: true
            }
        );
        assert!(v[3..].iter().all(|&x| x
            == Verdict::Elephant {
                mark: Mark::Dscp(8),
                new: false
            }));
        assert_eq!(a.stats().elephants, 1);
        assert_eq!(a.stats().elephant_packets, 3);
        // Threshold 1: every packet is an elephant's.
        let mut b = arb(1);
        assert!(b.on_packet(0, 1).is_elephant());
    }

    #[test]
    fn elephants_stay_elephants_when_the_threshold_rises() {
        let mut a = arb(2);
        a.on_packet(0, 1);
        assert!(a.on_packet(1, 1).is_elephant());
        a.set_threshold(100);
        assert!(a.on_packet(2, 1).is_elephant());
        // A mouse past a lowered threshold turns elephant at its next packet.
        for t in 0..5 {
            assert_eq!(a.on_packet(t, 2), Verdict::Mouse);
        }
        a.set_threshold(3);
        assert!(a.on_packet(6, 2).is_elephant());
    }

    #[test]
    fn state_expires_after_the_idle_timeout() {
        let mut a = arb(2);
        a.on_packet(0, 1);
        assert_eq!(a.expire(SEC), 0, "exactly at the timeout the flow is kept");
        assert_eq!(a.expire(SEC + 1), 1);
        assert_eq!(a.on_packet(SEC + 2, 1), Verdict::Mouse, "counts from zero again");
        // Lazily too: an unswept idle flow restarts its count.
        a.on_packet(SEC + 3, 1);
        assert_eq!(a.on_packet(3 * SEC, 1), Verdict::Mouse);
        assert_eq!(a.stats().expired, 2);
    }

    #[test]
    fn a_full_table_sends_new_flows_as_untracked_mice() {
        let mut a = arb(1);
        for k in 0..4 {
            assert!(a.on_packet(0, k).is_elephant());
        }
        assert_eq!(a.on_packet(0, 99), Verdict::Mouse);
        assert_eq!(a.stats().untracked, 1);
        assert_eq!(a.tracked_flows(), 4);
    }

    proptest! {
        /// Whatever the packet sequence, a flow's verdicts are some mice followed only by
        /// elephants (no flapping) while its state lives, and the counters add up.
        #[test]
        fn verdicts_never_flap(seq in proptest::collection::vec((0u32..6, 0u64..3), 1..200), th in 1u32..8) {
            let mut a = arb(th);
            let mut t = 0;
            let mut seen_elephant = [false; 6];
            for (k, dt) in seq {
                t += dt * MS;
                let v = a.on_packet(t, k);
                if seen_elephant[k as usize] {
                    prop_assert_eq!(v, Verdict::Elephant { mark: Mark::Dscp(8), new: false });
                }
                seen_elephant[k as usize] |= v.is_elephant();
            }
            let s = a.stats();
            prop_assert!(s.elephant_packets <= s.packets);
            prop_assert!(s.elephants <= s.flows);
        }
    }

    /// Through the shared contract the arbiter answers as its own calls do.
    #[test]
    fn the_shared_core_contract_gives_the_same_verdicts() {
        use tandem_time::sansio::SansIo;
        let (mut by_trait, mut direct) = (arb(3), arb(3));
        let mut out = Vec::new();
        for (i, key) in [1u32, 2, 1, 1, 2, 1].into_iter().enumerate() {
            let now = i as Time * MS;
            SansIo::handle(&mut by_trait, now, ArbiterInput::Packets { key, n: 1 }, &mut out).unwrap();
            assert_eq!(out.pop(), Some((key, direct.on_packet(now, key))));
        }
        SansIo::handle(&mut by_trait, 6 * MS, ArbiterInput::Threshold(2), &mut out).unwrap();
        direct.set_threshold(2);
        SansIo::handle(&mut by_trait, 6 * MS, ArbiterInput::Packets { key: 2, n: 1 }, &mut out).unwrap();
        assert_eq!(out.pop(), Some((2, direct.on_packet(6 * MS, 2))));
        assert!(out.is_empty());
        SansIo::handle(
            &mut by_trait,
            3 * SEC,
            <FlowArbiter<u32> as SansIo>::timeout(),
            &mut out,
        )
        .unwrap();
        assert_eq!(by_trait.tracked_flows(), 0);
        assert_eq!(SansIo::poll_timeout(&by_trait), None);
        assert_eq!(by_trait.stats().packets, direct.stats().packets);
    }
}
