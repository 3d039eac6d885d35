//! Where the items of ns-3 3.37's send buffer (`TcpTxBuffer`'s sent list) start: a sorted set of
//! sequence offsets, for the like-for-like flavour ([`crate::config::TcpFlavor::Ns3`]), whose
//! retransmissions and SACK marking follow those items. New items are appended at the top and
//! acknowledged ones leave at the bottom, so a deque in order costs O(1) for both; the
//! retransmissions that merge or split items in between touch a few entries.

use std::collections::VecDeque;

/// Sorted, distinct item starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ItemStarts {
    starts: VecDeque<u64>,
}

impl ItemStarts {
    /// True when no item is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Whether an item starts at `x`.
    pub(crate) fn contains(&self, x: u64) -> bool {
        self.starts.binary_search(&x).is_ok()
    }

    /// Adds an item start (nothing if one is there).
    pub(crate) fn insert(&mut self, x: u64) {
        if self.starts.back().is_none_or(|&b| b < x) {
            self.starts.push_back(x);
            return;
        }
        if let Err(i) = self.starts.binary_search(&x) {
            self.starts.insert(i, x);
        }
    }

    /// Removes every start strictly between `lo` and `hi`.
    pub(crate) fn remove_between(&mut self, lo: u64, hi: u64) {
        let a = self.starts.partition_point(|&b| b <= lo);
        let z = self.starts.partition_point(|&b| b < hi);
        if a < z {
            self.starts.drain(a..z);
        }
    }

    /// The first start above `x`.
    pub(crate) fn next_after(&self, x: u64) -> Option<u64> {
        let i = self.starts.partition_point(|&b| b <= x);
        self.starts.get(i).copied()
    }

    /// The first start at or above `x`.
    pub(crate) fn first_at_or_after(&self, x: u64) -> Option<u64> {
        let i = self.starts.partition_point(|&b| b < x);
        self.starts.get(i).copied()
    }

    /// The last start at or below `x`.
    pub(crate) fn last_at_or_before(&self, x: u64) -> Option<u64> {
        let i = self.starts.partition_point(|&b| b <= x);
        i.checked_sub(1).and_then(|i| self.starts.get(i).copied())
    }

    /// How many item starts lie below `x` (the index of the item starting at `x`).
    pub(crate) fn rank(&self, x: u64) -> usize {
        self.starts.partition_point(|&b| b < x)
    }

    /// Items held.
    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// The start of the `i`-th item (from 0, the lowest).
    pub(crate) fn get(&self, i: usize) -> Option<u64> {
        self.starts.get(i).copied()
    }

    /// Drops the starts below `x`; returns whether one of them began an item that runs past
    /// `x` (that is, `x` cuts an item), in which case the caller makes `x` a start, and how
    /// many items end at or below `x` (gone whole).
    pub(crate) fn remove_below(&mut self, x: u64) -> (bool, usize) {
        let i = self.starts.partition_point(|&b| b < x);
        let cut = i > 0 && self.starts.get(i) != Some(&x);
        self.starts.drain(..i);
        (cut, i - usize::from(cut))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_stay_sorted_and_distinct() {
        let mut s = ItemStarts::default();
        for x in [1, 1449, 2897, 4345] {
            s.insert(x);
        }
        s.insert(2000);
        s.insert(2000);
        assert!(s.contains(2000) && s.contains(1449) && !s.contains(1500));
        assert_eq!(s.next_after(1449), Some(2000));
        assert_eq!(s.first_at_or_after(1450), Some(2000));
        assert_eq!(s.last_at_or_before(2896), Some(2000));
        assert_eq!(s.last_at_or_before(0), None);
        s.remove_between(1449, 4345);
        assert_eq!(s.next_after(1449), Some(4345));
        // Cutting an item: its start goes and the caller's offset replaces it.
        assert_eq!(s.remove_below(1500), (true, 1));
        assert_eq!(s.first_at_or_after(0), Some(4345));
        assert_eq!((s.len(), s.get(0)), (1, Some(4345)));
        assert_eq!(s.remove_below(4345), (false, 0));
        assert!(s.contains(4345));
        s.insert(5000);
        s.insert(6000);
        assert_eq!(s.remove_below(6000), (false, 2));
        s.remove_below(u64::MAX);
        assert!(s.is_empty());
    }
}
