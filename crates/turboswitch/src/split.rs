//! Split/merge bookkeeping: one slot per payload parked in the switch, addressed by a [`Tag`]
//! (slot index + generation). Releasing a slot bumps its generation, so a header or payload
//! that comes back after its slot was reclaimed and reused is recognised as stale instead of
//! being merged with another packet. Slots not released within the reclaim timeout are
//! reclaimed by [`SlotTable::expire`].

use crate::types::{PacketId, Tag, Time};
use std::collections::VecDeque;

/// What a busy slot remembers about its packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parked {
    /// The packet that was split.
    pub pkt: PacketId,
    /// Its original size in bytes.
    pub bytes: u32,
    /// When it was split (its header left for the NF at this time).
    pub parked_at: Time,
    /// When the processed header came back, if it has.
    pub header_back: Option<Time>,
    /// Passes of the payload through a recirculation port so far.
    pub passes: u32,
}

/// Why a tag was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotError {
    /// The slot index does not exist.
    Unknown,
    /// The slot was released (or reclaimed, and maybe reused) since the tag was issued.
    Stale,
}

#[derive(Debug, Clone)]
struct Slot {
    gen: u32,
    parked: Option<Parked>,
}

/// The payload slots.
#[derive(Debug, Clone)]
pub struct SlotTable {
    slots: Vec<Slot>,
    /// Free slot indices, oldest released first (so a released ID rests as long as possible).
    free: VecDeque<u32>,
    /// (deadline, tag) in allocation order; deadlines are non-decreasing because the timeout is
    /// constant and allocations come in time order.
    deadlines: VecDeque<(Time, Tag)>,
    timeout: Time,
    in_use: usize,
}

impl SlotTable {
    /// `n` slots, reclaimed `timeout` after allocation.
    pub fn new(n: u32, timeout: Time) -> SlotTable {
        SlotTable {
            slots: (0..n).map(|_| Slot { gen: 0, parked: None }).collect(),
            free: (0..n).collect(),
            deadlines: VecDeque::new(),
            timeout,
            in_use: 0,
        }
    }

    /// Slots in use.
    pub fn in_use(&self) -> usize {
        self.in_use
    }

    /// Takes a free slot for `pkt` (`None` when all are in use).
    pub fn alloc(&mut self, now: Time, pkt: PacketId, bytes: u32) -> Option<Tag> {
        let i = self.free.pop_front()?;
        let slot = self.slots.get_mut(i as usize)?;
        slot.parked = Some(Parked {
            pkt,
            bytes,
            parked_at: now,
            header_back: None,
            passes: 0,
        });
        self.in_use += 1;
        let tag = Tag { slot: i, gen: slot.gen };
        self.deadlines.push_back((now.saturating_add(self.timeout), tag));
        Some(tag)
    }

    /// The busy slot `tag` names.
    pub fn get_mut(&mut self, tag: Tag) -> Result<&mut Parked, SlotError> {
        let slot = self.slots.get_mut(tag.slot as usize).ok_or(SlotError::Unknown)?;
        if slot.gen != tag.gen {
            return Err(SlotError::Stale);
        }
        slot.parked.as_mut().ok_or(SlotError::Stale)
    }

    /// Frees the slot `tag` names (merge done) and returns what it held.
    pub fn release(&mut self, tag: Tag) -> Result<Parked, SlotError> {
        let slot = self.slots.get_mut(tag.slot as usize).ok_or(SlotError::Unknown)?;
        if slot.gen != tag.gen {
            return Err(SlotError::Stale);
        }
        let p = slot.parked.take().ok_or(SlotError::Stale)?;
        slot.gen = slot.gen.wrapping_add(1);
        self.free.push_back(tag.slot);
        self.in_use -= 1;
        Ok(p)
    }

    fn is_live(&self, tag: Tag) -> bool {
        self.slots
            .get(tag.slot as usize)
            .is_some_and(|s| s.gen == tag.gen && s.parked.is_some())
    }

    /// Reclaims every slot allocated at least the timeout before `now`, pushing
    /// `(tag, what it held)` into `out`.
    pub fn expire(&mut self, now: Time, out: &mut Vec<(Tag, Parked)>) {
        while let Some(&(deadline, tag)) = self.deadlines.front() {
            if deadline > now {
                break;
            }
            self.deadlines.pop_front();
            if self.is_live(tag) {
                if let Ok(p) = self.release(tag) {
                    out.push((tag, p));
                }
            }
        }
    }

    /// When the oldest slot still in use times out.
    pub fn next_deadline(&mut self) -> Option<Time> {
        while let Some(&(deadline, tag)) = self.deadlines.front() {
            if self.is_live(tag) {
                return Some(deadline);
            }
            self.deadlines.pop_front();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_reused_id_is_not_confused_with_the_old_one() {
        let mut t = SlotTable::new(1, 100);
        let a = t.alloc(0, PacketId(1), 1000).unwrap();
        assert!(t.alloc(0, PacketId(2), 1000).is_none(), "one slot only");
        assert_eq!(t.release(a).unwrap().pkt, PacketId(1));
        let b = t.alloc(5, PacketId(3), 1000).unwrap();
        assert_eq!(a.slot, b.slot);
        assert_ne!(a.gen, b.gen);
        assert_eq!(t.get_mut(a), Err(SlotError::Stale));
        assert_eq!(t.release(a), Err(SlotError::Stale));
        assert_eq!(t.get_mut(b).unwrap().pkt, PacketId(3));
        assert_eq!(t.get_mut(Tag { slot: 9, gen: 0 }), Err(SlotError::Unknown));
    }

    #[test]
    fn reclaim_after_the_timeout_only() {
        let mut t = SlotTable::new(4, 100);
        let a = t.alloc(0, PacketId(1), 100).unwrap();
        let b = t.alloc(10, PacketId(2), 100).unwrap();
        let mut out = Vec::new();
        t.expire(99, &mut out);
        assert!(out.is_empty());
        assert_eq!(t.next_deadline(), Some(100));
        t.release(a).unwrap();
        assert_eq!(t.next_deadline(), Some(110), "a released slot does not wake anyone");
        t.expire(110, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, b);
        assert_eq!(out[0].1.pkt, PacketId(2));
        assert_eq!(t.get_mut(b), Err(SlotError::Stale), "a late payload is stale");
        assert_eq!(t.in_use(), 0);
        assert_eq!(t.next_deadline(), None);
    }

    proptest! {
        /// Random alloc / release / stale-release / expire sequences: every allocated packet
        /// ends released exactly once (merge or reclaim), in-use count matches, and no stale
        /// tag is ever accepted.
        #[test]
        fn every_payload_is_matched_once(ops in proptest::collection::vec((0u8..4, 0usize..64), 1..400)) {
            let mut t = SlotTable::new(8, 50);
            let mut now = 0;
            let mut live: Vec<Tag> = Vec::new();
            let mut dead: Vec<Tag> = Vec::new();
            let mut next_pkt = 0u64;
            let mut released = std::collections::BTreeSet::new();
            let mut out = Vec::new();
            for (op, k) in ops {
                now += 3;
                match op {
                    0 | 1 => {
                        if let Some(tag) = t.alloc(now, PacketId(next_pkt), 100) {
                            live.push(tag);
                            next_pkt += 1;
                        } else {
                            prop_assert_eq!(t.in_use(), 8);
                            next_pkt += 1;
                        }
                    }
                    2 if !live.is_empty() => {
                        let tag = live.swap_remove(k % live.len());
                        let p = t.release(tag).unwrap();
                        prop_assert!(released.insert(p.pkt));
                        dead.push(tag);
                    }
                    3 if !dead.is_empty() => {
                        let tag = dead[k % dead.len()];
                        prop_assert!(t.release(tag).is_err());
                        prop_assert!(t.get_mut(tag).is_err());
                    }
                    _ => {}
                }
                out.clear();
                t.expire(now, &mut out);
                for (tag, p) in &out {
                    prop_assert!(released.insert(p.pkt));
                    prop_assert!(now >= p.parked_at + 50);
                    live.retain(|x| x != tag);
                    dead.push(*tag);
                }
                prop_assert_eq!(t.in_use(), live.len());
            }
        }
    }
}
