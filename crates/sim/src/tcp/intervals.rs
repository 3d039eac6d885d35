//! A set of disjoint, non-adjacent half-open `u64` ranges: the receiver's out-of-order data and
//! the sender's SACK scoreboard. Operations cost O(log n) per range touched, so an ACK carrying
//! k SACK blocks costs O(k log n), never a scan of everything in flight.

use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Included};

/// Disjoint ranges `[start, end)`, kept merged (touching ranges become one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct IntervalSet {
    map: BTreeMap<u64, u64>,
    bytes: u64,
}

impl IntervalSet {
    /// An empty set.
    pub(crate) fn new() -> IntervalSet {
        IntervalSet::default()
    }

    /// True when no range is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of ranges.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// Total length of all ranges.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The lowest range.
    pub(crate) fn first(&self) -> Option<(u64, u64)> {
        self.map.first_key_value().map(|(&a, &b)| (a, b))
    }

    /// The highest range.
    pub(crate) fn last(&self) -> Option<(u64, u64)> {
        self.map.last_key_value().map(|(&a, &b)| (a, b))
    }

    /// The range containing `x`.
    pub(crate) fn containing(&self, x: u64) -> Option<(u64, u64)> {
        let (&a, &b) = self.map.range(..=x).next_back()?;
        (x < b).then_some((a, b))
    }

    /// The first range starting at or after `x`.
    pub(crate) fn next_from(&self, x: u64) -> Option<(u64, u64)> {
        self.map.range(x..).next().map(|(&a, &b)| (a, b))
    }

    /// The last range starting before `x`.
    pub(crate) fn prev_before(&self, x: u64) -> Option<(u64, u64)> {
        self.map.range(..x).next_back().map(|(&a, &b)| (a, b))
    }

    /// Ranges from the highest down.
    pub(crate) fn iter_rev(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.map.iter().rev().map(|(&a, &b)| (a, b))
    }

    /// Ranges from the lowest up.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.map.iter().map(|(&a, &b)| (a, b))
    }

    /// Adds `[a, b)`, calling `newly(x, y)` for each piece that was not covered before, and
    /// returns the number of newly covered units.
    pub(crate) fn insert(&mut self, a: u64, b: u64, mut newly: impl FnMut(u64, u64)) -> u64 {
        if a >= b {
            return 0;
        }
        let mut start = a;
        let mut end = b;
        let mut cursor = a;
        let mut added = 0;
        if let Some((&pa, &pb)) = self.map.range(..=a).next_back() {
            if pb >= a {
                if pb >= b {
                    return 0;
                }
                self.map.remove(&pa);
                self.bytes -= pb - pa;
                start = pa;
                cursor = pb;
            }
        }
        while let Some((&sa, &sb)) = self.map.range((Excluded(a), Included(b))).next() {
            if sa > cursor {
                newly(cursor, sa);
                added += sa - cursor;
            }
            cursor = cursor.max(sb);
            end = end.max(sb);
            self.map.remove(&sa);
            self.bytes -= sb - sa;
        }
        if cursor < b {
            newly(cursor, b);
            added += b - cursor;
        }
        self.map.insert(start, end);
        self.bytes += end - start;
        added
    }

    /// Removes everything below `x`, calling `removed(p, q)` for each removed piece; returns
    /// the number of units removed. Amortised O(log n) per range removed.
    pub(crate) fn remove_below(&mut self, x: u64, mut removed: impl FnMut(u64, u64)) -> u64 {
        let mut total = 0;
        while let Some((&a, &b)) = self.map.first_key_value() {
            if a >= x {
                break;
            }
            self.map.remove(&a);
            if b > x {
                self.map.insert(x, b);
                removed(a, x);
                self.bytes -= x - a;
                total += x - a;
                break;
            }
            removed(a, b);
            self.bytes -= b - a;
            total += b - a;
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(set: &mut IntervalSet, a: u64, b: u64) -> (u64, Vec<(u64, u64)>) {
        let mut v = Vec::new();
        let n = set.insert(a, b, |x, y| v.push((x, y)));
        (n, v)
    }

    #[test]
    fn insert_merges_and_reports_new_pieces() {
        let mut s = IntervalSet::new();
        assert_eq!(pieces(&mut s, 10, 20), (10, vec![(10, 20)]));
        assert_eq!(pieces(&mut s, 30, 40), (10, vec![(30, 40)]));
        assert_eq!(pieces(&mut s, 12, 18), (0, vec![]));
        assert_eq!(pieces(&mut s, 5, 45), (20, vec![(5, 10), (20, 30), (40, 45)]));
        assert_eq!(s.len(), 1);
        assert_eq!(s.bytes(), 40);
        assert_eq!(pieces(&mut s, 45, 50), (5, vec![(45, 50)]));
        assert_eq!((s.len(), s.first(), s.bytes()), (1, Some((5, 50)), 45));
        assert_eq!(pieces(&mut s, 60, 70).0, 10);
        assert_eq!(pieces(&mut s, 55, 60).0, 5);
        assert_eq!((s.len(), s.last()), (2, Some((55, 70))));
        assert_eq!(s.containing(55), Some((55, 70)));
        assert_eq!(s.containing(50), None);
        assert_eq!(s.next_from(6), Some((55, 70)));
        assert_eq!(s.prev_before(55), Some((5, 50)));
        assert_eq!(pieces(&mut s, 7, 7).0, 0);
    }

    #[test]
    fn remove_below_trims() {
        let mut s = IntervalSet::new();
        s.insert(10, 20, |_, _| {});
        s.insert(30, 40, |_, _| {});
        let mut v = Vec::new();
        assert_eq!(s.remove_below(35, |a, b| v.push((a, b))), 15);
        assert_eq!(v, vec![(10, 20), (30, 35)]);
        assert_eq!((s.first(), s.bytes()), (Some((35, 40)), 5));
        assert_eq!(s.remove_below(100, |_, _| {}), 5);
        assert!(s.is_empty());
        assert_eq!(s.bytes(), 0);
    }

    #[test]
    fn matches_a_bitmap_model() {
        // A small deterministic pseudo-random check against a plain bitmap.
        let mut x: u64 = 0x1234_5678;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut s = IntervalSet::new();
        let mut bits = vec![false; 300];
        let mut floor = 0u64;
        for _ in 0..2000 {
            let r = next();
            if r.is_multiple_of(7) {
                let cut = (floor + next() % 20).min(300);
                s.remove_below(cut, |_, _| {});
                for b in bits.iter_mut().take(cut as usize) {
                    *b = false;
                }
                floor = cut;
            } else {
                let a = next() % 290;
                let b = a + next() % 10;
                let before = bits.iter().filter(|&&b| b).count() as u64;
                let n = s.insert(a, b, |_, _| {});
                for bit in bits.iter_mut().take(b as usize).skip(a as usize) {
                    *bit = true;
                }
                let after = bits.iter().filter(|&&b| b).count() as u64;
                assert_eq!(n, after - before);
            }
            assert_eq!(s.bytes(), bits.iter().filter(|&&b| b).count() as u64);
            for (i, &bit) in bits.iter().enumerate() {
                assert_eq!(s.containing(i as u64).is_some(), bit);
            }
        }
    }
}
