//! A set of disjoint, non-adjacent half-open `u64` ranges: the receiver's out-of-order data and
//! the sender's SACK scoreboard. The ranges live in order in one vector: a lookup is a binary
//! search, and what TCP does most (a SACK block that extends the highest range) touches only
//! its end. A range inserted or removed elsewhere moves those after it; there are at most as
//! many ranges as holes in one window (a few, almost always). The vector is allocated when
//! the set gains its first range and given back when it is emptied.

/// Disjoint ranges `[start, end)`, kept merged (touching ranges become one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct IntervalSet {
    ranges: Vec<(u64, u64)>,
    bytes: u64,
}

impl IntervalSet {
    /// An empty set.
    pub(crate) fn new() -> IntervalSet {
        IntervalSet::default()
    }

    /// True when no range is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Number of ranges.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Total length of all ranges.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The lowest range.
    pub(crate) fn first(&self) -> Option<(u64, u64)> {
        self.ranges.first().copied()
    }

    /// The highest range.
    pub(crate) fn last(&self) -> Option<(u64, u64)> {
        self.ranges.last().copied()
    }

    /// The range containing `x`.
    pub(crate) fn containing(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|r| r.0 <= x);
        let r = *self.ranges.get(i.checked_sub(1)?)?;
        (x < r.1).then_some(r)
    }

    /// The first range starting at or after `x`.
    pub(crate) fn next_from(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|r| r.0 < x);
        self.ranges.get(i).copied()
    }

    /// The last range starting before `x`.
    pub(crate) fn prev_before(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|r| r.0 < x);
        self.ranges.get(i.checked_sub(1)?).copied()
    }

    /// Ranges from the highest down.
    pub(crate) fn iter_rev(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().rev().copied()
    }

    /// Ranges from the lowest up.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().copied()
    }

    /// Adds `[a, b)`, calling `newly(x, y)` for each piece that was not covered before (lowest
    /// first), and returns the number of newly covered units.
    pub(crate) fn insert(&mut self, a: u64, b: u64, mut newly: impl FnMut(u64, u64)) -> u64 {
        if a >= b {
            return 0;
        }
        // The ranges that overlap or touch [a, b]: those ending at or after `a` and starting
        // at or before `b`, indices i..j.
        let n = self.ranges.len();
        let (i, j) = if self.ranges.last().is_none_or(|r| r.1 < a) {
            // Above everything (the common case: a SACK block past the highest range).
            (n, n)
        } else {
            (
                self.ranges.partition_point(|r| r.1 < a),
                self.ranges.partition_point(|r| r.0 <= b),
            )
        };
        if i == j {
            newly(a, b);
            self.ranges.insert(i, (a, b));
            self.bytes += b - a;
            return b - a;
        }
        let (first, last) = (self.ranges[i], self.ranges[j - 1]);
        if j == i + 1 && first.0 <= a && first.1 >= b {
            return 0;
        }
        let mut cursor = a;
        let mut added = 0;
        for k in i..j {
            let (sa, sb) = self.ranges[k];
            if sa > cursor {
                newly(cursor, sa);
                added += sa - cursor;
            }
            cursor = cursor.max(sb);
        }
        if cursor < b {
            newly(cursor, b);
            added += b - cursor;
        }
        self.ranges[i] = (first.0.min(a), last.1.max(b));
        self.ranges.drain(i + 1..j);
        self.bytes += added;
        added
    }

    /// Removes everything below `x`, calling `removed(p, q)` for each removed piece; returns
    /// the number of units removed.
    pub(crate) fn remove_below(&mut self, x: u64, mut removed: impl FnMut(u64, u64)) -> u64 {
        let mut total = 0;
        let mut gone = 0;
        for r in self.ranges.iter_mut() {
            let (a, b) = *r;
            if a >= x {
                break;
            }
            if b > x {
                *r = (x, b);
                removed(a, x);
                self.bytes -= x - a;
                total += x - a;
                break;
            }
            removed(a, b);
            self.bytes -= b - a;
            total += b - a;
            gone += 1;
        }
        self.ranges.drain(..gone);
        if self.ranges.is_empty() {
            // Emptied: the buffer goes back, so that a finished flow's endpoints (kept for
            // their results) hold none.
            self.ranges = Vec::new();
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
                let mut got = Vec::new();
                let n = s.insert(a, b, |x, y| got.extend(x..y));
                let want: Vec<u64> = (a..b).filter(|&i| !bits[i as usize]).collect();
                assert_eq!(got, want);
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
            // The ranges are the bitmap's maximal runs, in order, and the lookups agree.
            let mut runs = Vec::new();
            for (i, &bit) in bits.iter().enumerate() {
                match runs.last_mut() {
                    Some((_, e)) if bit && *e == i as u64 => *e += 1,
                    _ if bit => runs.push((i as u64, i as u64 + 1)),
                    _ => {}
                }
            }
            assert_eq!(s.iter().collect::<Vec<_>>(), runs);
            let x = next() % 310;
            assert_eq!(s.next_from(x), runs.iter().copied().find(|r| r.0 >= x));
            assert_eq!(s.prev_before(x), runs.iter().copied().rev().find(|r| r.0 < x));
        }
    }
}
