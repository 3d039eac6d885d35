//! A first-in first-out queue whose first `N` entries live inline, in the structure that holds
//! it, and only the rest on the heap.
//!
//! An egress port's queue is short most of the time (at 50% load, empty or one packet when a
//! packet joins it), so with its entries inline a packet's enqueue and dequeue touch only the
//! port's own cache lines, which the event loop fetches ahead ([`crate::prefetch`]), instead
//! of a heap buffer of their own that it cannot fetch without reading the port first.

use std::collections::VecDeque;

/// A FIFO of `T`: the oldest up to `N` entries in a ring inline, newer ones (only while
/// those `N` are all taken) in `spill`, in order behind them.
#[derive(Debug, Clone)]
pub(crate) struct InlineDeque<T, const N: usize> {
    /// Slot of the oldest inline entry.
    head: u32,
    /// Entries inline (`N` whenever `spill` holds any).
    len: u32,
    /// The inline ring; slots outside `head..head + len` (mod `N`) hold stale values.
    slots: [T; N],
    /// Entries behind the inline ones.
    spill: VecDeque<T>,
}

impl<T: Copy + Default, const N: usize> Default for InlineDeque<T, N> {
    fn default() -> Self {
        InlineDeque {
            head: 0,
            len: 0,
            slots: [T::default(); N],
            spill: VecDeque::new(),
        }
    }
}

impl<T: Copy + Default, const N: usize> InlineDeque<T, N> {
    /// Entries held.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len as usize + self.spill.len()
    }

    /// True when it holds nothing.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Slot `i` places behind the head.
    #[inline]
    fn slot(&self, i: u32) -> usize {
        (self.head + i) as usize % N
    }

    /// Appends `x` as the newest entry.
    #[inline]
    pub(crate) fn push_back(&mut self, x: T) {
        if (self.len as usize) < N {
            let s = self.slot(self.len);
            self.slots[s] = x;
            self.len += 1;
        } else {
            self.spill.push_back(x);
        }
    }

    /// The oldest entry.
    #[inline]
    pub(crate) fn front(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        Some(&self.slots[self.head as usize])
    }

    /// The newest entry, to change.
    #[inline]
    pub(crate) fn back_mut(&mut self) -> Option<&mut T> {
        if self.len == 0 {
            return None;
        }
        if !self.spill.is_empty() {
            return self.spill.back_mut();
        }
        let s = self.slot(self.len - 1);
        Some(&mut self.slots[s])
    }

    /// Takes the oldest entry; the oldest spilled one, if any, moves inline.
    #[inline]
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = self.slots[self.head as usize];
        self.len -= 1;
        self.head = self.slot(1) as u32;
        if let Some(y) = self.spill.pop_front() {
            let s = self.slot(self.len);
            self.slots[s] = y;
            self.len += 1;
            if self.spill.is_empty() {
                // Start the heap ring again at its first slot, so that a queue that keeps
                // spilling and draining writes the same cache lines over and over.
                self.spill.clear();
            }
        }
        Some(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a `VecDeque`: any sequence of pushes, pops and changes to the newest entry
        /// leaves the same entries in the same order.
        #[test]
        fn behaves_as_a_vecdeque(ops in proptest::collection::vec((0u8..4, any::<u16>()), 0..400)) {
            let mut a: InlineDeque<u16, 3> = InlineDeque::default();
            let mut one: InlineDeque<u16, 1> = InlineDeque::default();
            let mut b: VecDeque<u16> = VecDeque::new();
            for (op, v) in ops {
                match op {
                    0 | 1 => {
                        a.push_back(v);
                        one.push_back(v);
                        b.push_back(v);
                    }
                    2 => {
                        prop_assert_eq!(one.pop_front(), b.front().copied());
                        prop_assert_eq!(a.pop_front(), b.pop_front());
                    }
                    _ => {
                        if let (Some(x), Some(z), Some(y)) = (a.back_mut(), one.back_mut(), b.back_mut()) {
                            *x = v;
                            *z = v;
                            *y = v;
                        }
                    }
                }
                prop_assert_eq!(a.len(), b.len());
                prop_assert_eq!(a.is_empty(), b.is_empty());
                prop_assert_eq!(a.front(), b.front());
                prop_assert_eq!(one.len(), b.len());
            }
            let mut rest = Vec::new();
            while let Some(x) = a.pop_front() {
                rest.push(x);
            }
            prop_assert_eq!(rest, b.into_iter().collect::<Vec<_>>());
        }
    }
}
