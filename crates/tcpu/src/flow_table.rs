//! The CPU's full flow table and the periodic top-k ranking (paper §3.1).
//!
//! Every flow the switch has seen recently has an entry here, wherever it is forwarded. Its
//! rate over the last ranking interval is the bytes the CPU forwarded for it plus the growth of
//! its ASIC byte counter. Every [`crate::TcpuConfig::rank_interval`] the core calls
//! [`FlowTable::rank`], which
//!
//! 1. in one pass closes the interval (moves `interval_bytes` to `last_interval_bytes`),
//!    forgets CPU flows idle for longer than the idle timeout and collects candidates;
//! 2. finds the top `k'` candidates with `select_nth_unstable_by` (O(n), no full sort), where
//!    `k'` is the TCAM slots not held by pinned long flows or by entries in transition;
//! 3. sorts only the flows that must move (CPU flows in the top set, ASIC flows outside it:
//!    at most `k'` each) and pairs the fastest incoming with the slowest outgoing, as long as
//!    the incoming one is strictly faster and the channel budget allows.
//!
//! Entries live in a slab with stable indices; the candidate and move vectors are kept between
//! calls, so a ranking allocates nothing once warm.

use crate::types::{FlowId, Time};
use rustc_hash::FxHashMap;

/// Where a flow is forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// By the CPU (no ASIC entry).
    Cpu,
    /// An insert for its ASIC entry is queued or in the channel.
    Inserting,
    /// By the ASIC, through its exact-match entry.
    Asic,
    /// A delete for its ASIC entry is queued or in the channel.
    Removing,
}

/// One flow in the CPU's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowEntry {
    /// The flow.
    pub id: FlowId,
    /// Its source host (for attack attribution).
    pub src: u32,
    /// Its output port.
    pub port: u16,
    /// Whether it is TCP.
    pub is_tcp: bool,
    /// Where it is forwarded.
    pub placement: Placement,
    /// Bytes seen in the current ranking interval (CPU-forwarded plus ASIC counter growth).
    pub interval_bytes: u64,
    /// Bytes seen in the last completed interval (its rate at the last ranking).
    pub last_interval_bytes: u64,
    /// Bytes seen in total.
    pub total_bytes: u64,
    /// Last time it was seen active (a packet at the CPU, or its ASIC counter growing).
    pub last_active: Time,
    /// The ASIC counter value at the last read (cumulative since the entry was installed).
    pub asic_counter: u64,
    /// It has passed the long-flow threshold.
    pub long: bool,
    /// Its installed ASIC rule is the high-priority long-flow rule.
    pub pinned: bool,
    /// A long-flow pin for it is queued.
    pub pin_queued: bool,
    live: bool,
    asic_pos: u32,
}

const NOT_IN_ASIC: u32 = u32::MAX;

/// What the ranking wants done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwapPlan {
    /// Insert this CPU flow into a free TCAM slot.
    Insert {
        /// Slab index of the flow.
        flow: u32,
    },
    /// Delete `out`'s entry and give its slot to `inn`.
    Swap {
        /// Slab index of the ASIC flow leaving.
        out: u32,
        /// Slab index of the CPU flow entering.
        inn: u32,
    },
}

/// Inputs of one ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankParams {
    /// The current time.
    pub now: Time,
    /// Free TCAM flow slots (not held or promised to anyone).
    pub free_slots: u32,
    /// Channel time the plan may book.
    pub budget: Time,
    /// Channel time of an insert.
    pub insert_time: Time,
    /// Channel time of a delete.
    pub delete_time: Time,
    /// T_inactive: pinned long flows idle this long become ordinary candidates again.
    pub t_inactive: Time,
    /// CPU flows idle this long are forgotten.
    pub idle_timeout: Time,
}

/// What one ranking found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RankSummary {
    /// Flows ranked.
    pub candidates: usize,
    /// Top-k CPU flows that should have been moved in but did not fit the channel budget.
    pub deferred: usize,
    /// CPU flows forgotten for being idle.
    pub expired: usize,
}

#[derive(Debug, Clone, Copy)]
struct Cand {
    score: u64,
    idx: u32,
    asic: bool,
}

/// Rank order: faster first; on a tie the flow already in the ASIC first (no churn); then the
/// lower slab index (a total, deterministic order).
fn better(a: &Cand, b: &Cand) -> std::cmp::Ordering {
    b.score.cmp(&a.score).then(b.asic.cmp(&a.asic)).then(a.idx.cmp(&b.idx))
}

/// The CPU's flow table.
#[derive(Debug, Clone, Default)]
pub struct FlowTable {
    entries: Vec<FlowEntry>,
    free: Vec<u32>,
    index: FxHashMap<FlowId, u32>,
    asic: Vec<u32>,
    cands: Vec<Cand>,
    ins: Vec<Cand>,
    outs: Vec<Cand>,
}

impl FlowTable {
    /// An empty table.
    pub fn new() -> FlowTable {
        FlowTable::default()
    }

    /// Flows in the table.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when the table is empty.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The slab index of a flow.
    pub fn find(&self, id: FlowId) -> Option<u32> {
        self.index.get(&id).copied()
    }

    /// A flow by slab index (`None` for a vacant or out-of-range index).
    pub fn get(&self, idx: u32) -> Option<&FlowEntry> {
        self.entries.get(idx as usize).filter(|e| e.live)
    }

    /// A flow by slab index, mutably. Change its placement only with [`FlowTable::set_placement`].
    pub fn get_mut(&mut self, idx: u32) -> Option<&mut FlowEntry> {
        self.entries.get_mut(idx as usize).filter(|e| e.live)
    }

    /// Calls `f` on every flow (benchmarks and tests use it to set rates).
    pub fn for_each_mut(&mut self, mut f: impl FnMut(&mut FlowEntry)) {
        for e in self.entries.iter_mut().filter(|e| e.live) {
            f(e);
        }
    }

    /// Adds a new flow, forwarded by the CPU, and returns its slab index. An existing flow's
    /// index is returned unchanged.
    pub fn insert(&mut self, id: FlowId, src: u32, port: u16, is_tcp: bool, now: Time) -> u32 {
        if let Some(i) = self.find(id) {
            return i;
        }
        let e = FlowEntry {
            id,
            src,
            port,
            is_tcp,
            placement: Placement::Cpu,
            interval_bytes: 0,
            last_interval_bytes: 0,
            total_bytes: 0,
            last_active: now,
            asic_counter: 0,
            long: false,
            pinned: false,
            pin_queued: false,
            live: true,
            asic_pos: NOT_IN_ASIC,
        };
        let idx = match self.free.pop() {
            Some(i) => {
                self.entries[i as usize] = e;
                i
            }
            None => {
                self.entries.push(e);
                (self.entries.len() - 1) as u32
            }
        };
        self.index.insert(id, idx);
        idx
    }

    /// Moves a flow to `p`, keeping the list of flows holding TCAM slots in step.
    pub fn set_placement(&mut self, idx: u32, p: Placement) {
        let Some(e) = self.entries.get_mut(idx as usize).filter(|e| e.live) else {
            return;
        };
        e.placement = p;
        let holds = p != Placement::Cpu;
        let listed = e.asic_pos != NOT_IN_ASIC;
        if holds && !listed {
            e.asic_pos = self.asic.len() as u32;
            self.asic.push(idx);
        } else if !holds && listed {
            let pos = e.asic_pos as usize;
            e.asic_pos = NOT_IN_ASIC;
            self.asic.swap_remove(pos);
            if let Some(&moved) = self.asic.get(pos) {
                self.entries[moved as usize].asic_pos = pos as u32;
            }
        }
    }

    /// Slab indices of the flows holding (or about to hold, or about to free) a TCAM slot.
    pub fn asic_members(&self) -> &[u32] {
        &self.asic
    }

    /// Flows whose placement is `p` (O(n); for tests and reports).
    pub fn count(&self, p: Placement) -> usize {
        self.entries.iter().filter(|e| e.live && e.placement == p).count()
    }

    /// ASIC flows (not in transition) with no activity for `t_inactive`, appended to `out`.
    pub fn collect_inactive(&self, now: Time, t_inactive: Time, out: &mut Vec<u32>) {
        for &i in &self.asic {
            let e = &self.entries[i as usize];
            if e.placement == Placement::Asic && e.last_active.saturating_add(t_inactive) <= now {
                out.push(i);
            }
        }
    }

    /// The ASIC flow to evict for a long-flow pin: an inactive one if any, else the slowest
    /// over the last interval; never an active pinned long flow.
    pub fn pick_victim(&self, now: Time, t_inactive: Time) -> Option<u32> {
        let mut best: Option<(bool, u64, u32)> = None;
        for &i in &self.asic {
            let e = &self.entries[i as usize];
            if e.placement != Placement::Asic {
                continue;
            }
            let inactive = e.last_active.saturating_add(t_inactive) <= now;
            if e.pin_queued || (e.pinned && !inactive) {
                continue;
            }
            let key = (!inactive, e.last_interval_bytes.max(e.interval_bytes), i);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        best.map(|b| b.2)
    }

    /// Closes the ranking interval and plans the moves that bring the top-k flows into the
    /// ASIC within the channel budget (see the module docs). Plans go to `out` (cleared first).
    pub fn rank(&mut self, p: RankParams, out: &mut Vec<SwapPlan>) -> RankSummary {
        out.clear();
        self.cands.clear();
        let mut summary = RankSummary::default();
        let mut asic_cands: u32 = 0;
        for idx in 0..self.entries.len() {
            let e = &mut self.entries[idx];
            if !e.live {
                continue;
            }
            let score = e.interval_bytes;
            e.last_interval_bytes = score;
            e.interval_bytes = 0;
            let inactive = e.last_active.saturating_add(p.t_inactive) <= p.now;
            match e.placement {
                Placement::Cpu => {
                    if e.last_active.saturating_add(p.idle_timeout) <= p.now {
                        e.live = false;
                        let id = e.id;
                        self.index.remove(&id);
                        self.free.push(idx as u32);
                        summary.expired += 1;
                    } else if score > 0 && !(e.long && e.pin_queued) {
                        self.cands.push(Cand {
                            score,
                            idx: idx as u32,
                            asic: false,
                        });
                    }
                }
                Placement::Asic => {
                    if (e.pinned || e.pin_queued) && !inactive {
                        continue;
                    }
                    asic_cands += 1;
                    self.cands.push(Cand {
                        score,
                        idx: idx as u32,
                        asic: true,
                    });
                }
                Placement::Inserting | Placement::Removing => {}
            }
        }
        summary.candidates = self.cands.len();
        let k_eff = (asic_cands as usize).saturating_add(p.free_slots as usize);
        self.ins.clear();
        self.outs.clear();
        if self.cands.len() > k_eff {
            if k_eff > 0 {
                self.cands.select_nth_unstable_by(k_eff - 1, better);
            }
            let (top, rest) = self.cands.split_at(k_eff);
            self.ins.extend(top.iter().filter(|c| !c.asic));
            self.outs.extend(rest.iter().filter(|c| c.asic));
        } else {
            self.ins.extend(self.cands.iter().filter(|c| !c.asic));
        }
        self.ins.sort_unstable_by(better);
        self.outs.sort_unstable_by(|a, b| better(b, a));
        let mut budget = p.budget;
        let mut free = p.free_slots;
        let mut i = 0;
        while i < self.ins.len() && free > 0 && budget >= p.insert_time {
            out.push(SwapPlan::Insert { flow: self.ins[i].idx });
            free -= 1;
            budget -= p.insert_time;
            i += 1;
        }
        let swap_cost = p.insert_time.saturating_add(p.delete_time);
        let mut j = 0;
        while i < self.ins.len() && j < self.outs.len() && budget >= swap_cost {
            if self.ins[i].score <= self.outs[j].score {
                break;
            }
            out.push(SwapPlan::Swap {
                out: self.outs[j].idx,
                inn: self.ins[i].idx,
            });
            budget -= swap_cost;
            i += 1;
            j += 1;
        }
        summary.deferred = self.ins.len() - i;
        summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(now: Time, free: u32) -> RankParams {
        RankParams {
            now,
            free_slots: free,
            budget: Time::MAX,
            insert_time: 10,
            delete_time: 10,
            t_inactive: 1_000,
            idle_timeout: 10_000,
        }
    }

    #[test]
    fn top_k_by_partial_selection() {
        let mut t = FlowTable::new();
        for f in 0..10u32 {
            let i = t.insert(FlowId(f), 0, 0, true, 0);
            t.get_mut(i).unwrap().interval_bytes = u64::from(f) * 100;
        }
        // Flows 0 and 1 in the ASIC; k = 2 and no free slot.
        t.set_placement(0, Placement::Asic);
        t.set_placement(1, Placement::Asic);
        let mut plan = Vec::new();
        let s = t.rank(params(1, 0), &mut plan);
        assert_eq!(s.candidates, 10); // eight CPU flows with bytes, two ASIC flows (even idle ones)
        assert_eq!(
            plan,
            vec![SwapPlan::Swap { out: 0, inn: 9 }, SwapPlan::Swap { out: 1, inn: 8 }]
        );
        assert_eq!(t.get(9).unwrap().last_interval_bytes, 900);
        assert_eq!(t.get(9).unwrap().interval_bytes, 0);
    }

    #[test]
    fn budget_limits_and_free_slots_first() {
        let mut t = FlowTable::new();
        for f in 0..5u32 {
            let i = t.insert(FlowId(f), 0, 0, true, 0);
            t.get_mut(i).unwrap().interval_bytes = 1 + u64::from(f);
        }
        let mut plan = Vec::new();
        let s = t.rank(
            RankParams {
                budget: 25,
                ..params(1, 3)
            },
            &mut plan,
        );
        assert_eq!(plan, vec![SwapPlan::Insert { flow: 4 }, SwapPlan::Insert { flow: 3 }]);
        assert_eq!(s.deferred, 1);
    }

    #[test]
    fn idle_cpu_flows_expire_and_slots_reused() {
        let mut t = FlowTable::new();
        t.insert(FlowId(1), 0, 0, true, 0);
        t.insert(FlowId(2), 0, 0, true, 0);
        t.set_placement(1, Placement::Asic);
        let mut plan = Vec::new();
        let s = t.rank(params(10_000, 0), &mut plan);
        assert_eq!(s.expired, 1);
        assert_eq!(t.len(), 1);
        assert_eq!(t.find(FlowId(1)), None);
        assert_eq!(t.insert(FlowId(3), 0, 0, true, 0), 0);
        assert_eq!(t.asic_members(), &[1]);
        t.set_placement(1, Placement::Cpu);
        assert!(t.asic_members().is_empty());
    }

    #[test]
    fn victim_prefers_inactive_then_slowest_never_active_pinned() {
        let mut t = FlowTable::new();
        for f in 0..3u32 {
            let i = t.insert(FlowId(f), 0, 0, true, 500);
            t.set_placement(i, Placement::Asic);
            t.get_mut(i).unwrap().last_interval_bytes = 100 - u64::from(f);
        }
        t.get_mut(2).unwrap().pinned = true;
        assert_eq!(t.pick_victim(600, 1_000), Some(1));
        t.get_mut(0).unwrap().last_active = 0;
        assert_eq!(t.pick_victim(1_200, 1_000), Some(0));
        let mut v = Vec::new();
        t.collect_inactive(1_200, 1_000, &mut v);
        assert_eq!(v, vec![0]);
    }
}
