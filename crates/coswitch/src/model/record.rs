//! What the CoSwitch experiments measure inside a placed rack ([`super::placed::CoswitchTor`]),
//! as [`super::network::Outcome`] reports it: counts over the measurement window (after
//! `warmup`, before `duration`), the samples of every control period, the table's time-averaged
//! occupancy and the server core time by what it was for (paper Figure 7), which needs each
//! flow's true size (`sizes`, by the kernel's flow number).

use super::network::{CostSplit, DropReason, Outcome, Sample, ELEPHANT_PACKETS};
use crate::types::{secs, Time};

/// The recorder of one rack. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct RackRecorder {
    warmup: Time,
    duration: Time,
    sizes: Vec<u32>,
    o: Outcome,
    period_packets: u64,
    occ_area: u128,
    occ_last: Time,
    rule_samples: Vec<f64>,
    vswitch_drops: u64,
    switch_drops: u64,
}

/// What the server core spent on one packet, by purpose.
#[derive(Debug, Clone, Copy)]
pub struct PacketCost {
    /// Network I/O.
    pub io: Time,
    /// Vswitch processing (and upcall).
    pub processing: Time,
    /// The arbiter's hook.
    pub arbiter: Time,
}

impl RackRecorder {
    /// A recorder for the window `[warmup, duration)`; `sizes[i]` is the packets of the
    /// kernel's flow `i`.
    pub fn new(warmup: Time, duration: Time, sizes: Vec<u32>) -> RackRecorder {
        RackRecorder {
            warmup,
            duration,
            sizes,
            o: Outcome::default(),
            period_packets: 0,
            occ_area: 0,
            occ_last: warmup,
            rule_samples: Vec::new(),
            vswitch_drops: 0,
            switch_drops: 0,
        }
    }

    fn window(&self, t: Time) -> u64 {
        u64::from(t >= self.warmup && t < self.duration)
    }

    /// A server sent a packet of `bytes`.
    pub fn packet(&mut self, now: Time, bytes: u32) {
        self.period_packets += 1;
        if self.window(now) == 1 {
            self.o.packets += 1;
            self.o.offered_bytes_per_sec += f64::from(bytes);
        }
    }

    /// A vswitch missed and upcalled.
    pub fn upcall(&mut self, now: Time) {
        self.o.upcalls += self.window(now);
    }

    /// The arbiter marked a packet as an elephant's.
    pub fn elephant(&mut self, now: Time) {
        self.o.elephant_packets += self.window(now);
    }

    /// A server core took a packet of kernel flow `flow`'s work.
    pub fn server_work(&mut self, now: Time, flow: u32, c: PacketCost) {
        if self.window(now) == 0 {
            return;
        }
        let big = self.sizes.get(flow as usize).is_some_and(|&n| n >= ELEPHANT_PACKETS);
        let split: &mut CostSplit = &mut self.o.server_cost;
        split.io += c.io;
        split.arbiter += c.arbiter;
        if big {
            split.elephants += c.processing;
        } else {
            split.mice += c.processing;
        }
    }

    /// A server core refused a packet (its queue was too long).
    pub fn vswitch_drop(&mut self, now: Time) {
        self.vswitch_drops += self.window(now);
    }

    /// The control CPU refused a packet_in.
    pub fn switch_drop(&mut self, now: Time) {
        self.switch_drops += self.window(now);
    }

    /// A marked packet missed and took the wildcard rule.
    pub fn wildcard(&mut self, now: Time) {
        self.o.wildcard_marked += self.window(now);
    }

    /// A packet took the ToR's slow path.
    pub fn slow_path(&mut self, now: Time) {
        self.o.slow_path_packets += self.window(now);
    }

    /// A flow_mod was lost to the control CPU's queue.
    pub fn flow_mod_lost(&mut self, now: Time) {
        self.o.flow_mods_lost += self.window(now);
    }

    /// A flow_mod was refused: the table was full.
    pub fn table_full(&mut self, now: Time) {
        self.o.table_full += self.window(now);
    }

    /// The table is about to change from `len` entries (occupancy is integrated up to now).
    pub fn table_changes(&mut self, now: Time, len: usize) {
        let now = now.clamp(self.warmup, self.duration);
        if now > self.occ_last {
            self.occ_area += (now - self.occ_last) as u128 * len as u128;
            self.occ_last = now;
        }
    }

    /// A rule was installed; the table holds `len` now.
    pub fn installed(&mut self, now: Time, len: usize) {
        let w = self.window(now);
        self.o.switch_installs += w;
        if w == 1 {
            self.o.tcam_max = self.o.tcam_max.max(len);
        }
    }

    /// A control period ended at `now` (of length `period`).
    #[allow(clippy::too_many_arguments)]
    pub fn period(
        &mut self,
        now: Time,
        period: Time,
        threshold: u32,
        busiest: f64,
        switch_cpu: f64,
        tcam: usize,
        vswitch_rules: usize,
    ) {
        if self.window(now) == 1 {
            self.rule_samples.push(vswitch_rules as f64);
        }
        self.o.samples.push(Sample {
            t: secs(now),
            threshold,
            server_cpu: busiest,
            switch_cpu,
            tcam,
            pps: self.period_packets as f64 / secs(period),
        });
        self.period_packets = 0;
    }

    /// The outcome at the end of the window, with the rack's state then: the table's entries,
    /// the busiest server core's and the control CPU's utilization over the window, the
    /// threshold, its steps and reversals.
    pub fn finish(&self, tcam: usize, server_cpu: f64, switch_cpu: f64, threshold: (u32, u64, u64)) -> Outcome {
        let mut me = self.clone();
        me.table_changes(self.duration, tcam);
        let mut o = me.o;
        let window = secs(self.duration - self.warmup);
        o.offered_pps = o.packets as f64 / window;
        o.offered_bytes_per_sec /= window;
        o.server_cpu = server_cpu;
        o.switch_cpu = switch_cpu;
        o.tcam_mean = me.occ_area as f64 / (self.duration - self.warmup) as f64;
        o.vswitch_rules = me.rule_samples.iter().sum::<f64>() / me.rule_samples.len().max(1) as f64;
        o.drops = [
            (DropReason::VswitchCpu, me.vswitch_drops),
            (DropReason::SwitchCpu, me.switch_drops),
        ]
        .into_iter()
        .filter(|d| d.1 > 0)
        .collect();
        (o.threshold, o.threshold_steps, o.threshold_reversals) = threshold;
        o
    }
}
