//! Flow-Prediction: the controller module that closes the loop. Every control period it takes
//! the CPU utilization of every virtual switch and of the physical switch (plus the physical
//! switch's flow-table fill) and moves the elephant threshold to shift work from the heavier
//! side to the lighter one.
//!
//! ## Control law
//! The paper says only that the threshold moves when one side is heavy and the other light.
//! Ours, chosen to settle without oscillating on a plant that is monotone but whose gain we do
//! not know (it depends on the traffic mix):
//!
//! * **Load on each side.** `v` = the busiest virtual switch's CPU utilization (the
//!   bottleneck server); `p` = the larger of the physical switch's CPU utilization and its
//!   table fill (a full TCAM hurts as much as a busy CPU). Both are fractions in [0, 1].
//! * **Error** `e = v - p`. A lower threshold makes more flows elephants, moving work from
//!   the servers to the switch, so the threshold falls when `e > 0` and rises when `e < 0`.
//! * **Hysteresis:** nothing moves while `|e| <= deadband`.
//! * **Proportional step in octaves:** the threshold lives on a log2 scale (it spans 1 to tens
//!   of thousands of packets, and a step of one octave means "twice as many packets before a
//!   flow counts as an elephant" at any size). The step is `min(gain * |e|, max_step)` octaves,
//!   times a damping factor.
//! * **Damping:** each reversal of direction halves the damping factor (down to
//!   `min_damping`); each step in the same direction as the last multiplies it by 1.25 (up to
//!   1). A limit cycle therefore shrinks geometrically, while a sustained error (a change in
//!   the traffic mix) recovers full speed within a few periods.
//! * **No toggling between neighbours:** the threshold is an integer, so the balance point may
//!   lie between two thresholds where the error never falls inside the deadband (at small
//!   thresholds one step is half an octave). When a step would go straight back to the
//!   threshold just left, the controller compares the errors measured at the two and stays
//!   at (or returns to) the better one, "pinned" there. The pin holds while the error stays
//!   under twice the error seen when it was set; a larger error is a real change in the load
//!   and releases it.
//! * **Bounds:** the threshold stays in `[min_threshold, max_threshold]`.
//!
//! Sans-IO: [`FlowPrediction::on_report`] is fed `(now, report)` and answers with the new
//! threshold to send to every Flow-Arbiter, if it changed.

use crate::types::{Time, SEC};

/// Flow-Prediction parameters (all **ours**: the paper gives none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PredictionConfig {
    /// How often switches report utilization.
    pub period: Time,
    /// Threshold before the first report.
    pub initial_threshold: u32,
    /// Lowest threshold (1: every packet is an elephant's).
    pub min_threshold: u32,
    /// Highest threshold (in practice: no elephants).
    pub max_threshold: u32,
    /// No change while `|v - p|` is at most this.
    pub deadband: f64,
    /// Octaves of threshold per unit of error.
    pub gain: f64,
    /// Largest step in octaves.
    pub max_step: f64,
    /// Smallest damping factor.
    pub min_damping: f64,
}

impl Default for PredictionConfig {
    /// Period 1 s, first threshold 18 packets, bounds 1..65,536, deadband 0.05, gain 4
    /// octaves per unit error (a 25-point imbalance moves one octave), step at most 1 octave,
    /// damping down to 1/16.
    fn default() -> Self {
        PredictionConfig {
            period: SEC,
            initial_threshold: 18,
            min_threshold: 1,
            max_threshold: 1 << 16,
            deadband: 0.05,
            gain: 4.0,
            max_step: 1.0,
            min_damping: 1.0 / 16.0,
        }
    }
}

/// Why a configuration was refused.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictionConfigError(pub String);

impl std::fmt::Display for PredictionConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PredictionConfigError {}

impl PredictionConfig {
    /// Checks that the parameters make a working controller.
    pub fn validate(&self) -> Result<(), PredictionConfigError> {
        let bad = |m: &str| Err(PredictionConfigError(m.to_string()));
        if self.period == 0 {
            return bad("period must be positive");
        }
        if self.min_threshold == 0 || self.min_threshold > self.max_threshold {
            return bad("need 1 <= min_threshold <= max_threshold");
        }
        if !(self.min_threshold..=self.max_threshold).contains(&self.initial_threshold) {
            return bad("initial_threshold must lie within the bounds");
        }
        if !(self.deadband >= 0.0 && self.deadband < 1.0) {
            return bad("deadband must be in [0, 1)");
        }
        if !(self.gain > 0.0 && self.gain.is_finite() && self.max_step > 0.0 && self.max_step.is_finite()) {
            return bad("gain and max_step must be positive");
        }
        if !(self.min_damping > 0.0 && self.min_damping <= 1.0) {
            return bad("min_damping must be in (0, 1]");
        }
        Ok(())
    }
}

/// One period's utilization report, as fractions in [0, 1] (values outside are clamped;
/// NaN counts as 0).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadReport {
    /// CPU utilization of each virtual switch (its server core).
    pub vswitch_cpu: Vec<f64>,
    /// CPU utilization of the physical switch's control CPU.
    pub switch_cpu: f64,
    /// Occupied share of the physical switch's flow table.
    pub switch_table: f64,
}

impl LoadReport {
    /// The two loads the law compares: (busiest virtual switch, physical switch).
    pub fn sides(&self) -> (f64, f64) {
        let c = |x: f64| if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
        let v = self.vswitch_cpu.iter().map(|&x| c(x)).fold(0.0, f64::max);
        (v, c(self.switch_cpu).max(c(self.switch_table)))
    }
}

/// The controller's state.
#[derive(Debug, Clone)]
pub struct FlowPrediction {
    cfg: PredictionConfig,
    /// log2 of the threshold.
    level: f64,
    threshold: u32,
    last_dir: i8,
    damping: f64,
    /// The threshold before the current one, and the error measured there.
    prev: Option<(u32, f64)>,
    /// The neighbour not to go back to, and the error at the current threshold when pinned.
    pinned: Option<(u32, f64)>,
    steps: u64,
    reversals: u64,
}

impl FlowPrediction {
    /// A controller at its initial threshold.
    pub fn new(cfg: PredictionConfig) -> Result<Self, PredictionConfigError> {
        cfg.validate()?;
        Ok(FlowPrediction {
            level: f64::from(cfg.initial_threshold).log2(),
            threshold: cfg.initial_threshold,
            cfg,
            last_dir: 0,
            damping: 1.0,
            prev: None,
            pinned: None,
            steps: 0,
            reversals: 0,
        })
    }

    /// The threshold in force.
    pub fn threshold(&self) -> u32 {
        self.threshold
    }

    /// Reports received that moved the threshold.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Times the direction of movement reversed.
    pub fn reversals(&self) -> u64 {
        self.reversals
    }

    /// The parameters.
    pub fn config(&self) -> &PredictionConfig {
        &self.cfg
    }

    /// Takes one period's report; returns the new threshold when it changed.
    pub fn on_report(&mut self, _now: Time, report: &LoadReport) -> Option<u32> {
        let (v, p) = report.sides();
        let e = v - p;
        let ae = e.abs();
        if let Some((_, at_pin)) = self.pinned {
            if ae > 2.0 * at_pin.max(self.cfg.deadband) {
                self.pinned = None;
            }
        }
        if ae <= self.cfg.deadband {
            return None;
        }
        let dir: i8 = if e > 0.0 { -1 } else { 1 };
        if self.last_dir != 0 && dir != self.last_dir {
            self.damping = (self.damping * 0.5).max(self.cfg.min_damping);
            self.reversals += 1;
        } else if self.last_dir == dir {
            self.damping = (self.damping * 1.25).min(1.0);
        }
        self.last_dir = dir;
        let step = (self.cfg.gain * ae).min(self.cfg.max_step) * self.damping;
        let lo = f64::from(self.cfg.min_threshold).log2();
        let hi = f64::from(self.cfg.max_threshold).log2();
        self.level = (self.level + f64::from(dir) * step).clamp(lo, hi);
        let t = (self.level.exp2().round() as u32).clamp(self.cfg.min_threshold, self.cfg.max_threshold);
        if t == self.threshold {
            return None;
        }
        let hold = |me: &mut Self| {
            me.level = f64::from(me.threshold).log2();
            None
        };
        if self.pinned.is_some_and(|(other, _)| other == t) {
            return hold(self);
        }
        if let Some((back, e_back)) = self.prev.filter(|&(b, _)| b == t) {
            if e_back > ae {
                // Here is better than where we came from: stay.
                self.pinned = Some((back, ae));
                return hold(self);
            }
            self.pinned = Some((self.threshold, e_back));
        }
        self.prev = Some((self.threshold, ae));
        self.threshold = t;
        self.steps += 1;
        Some(t)
    }
}

/// The shared core contract: the input is a period's report (`None`: time passed, which
/// changes nothing; the controller is driven by reports), the output each new threshold.
impl tandem_time::sansio::SansIo for FlowPrediction {
    type Input<'a> = Option<&'a LoadReport>;
    type Output = Vec<u32>;
    type Error = std::convert::Infallible;

    fn handle(&mut self, now: Time, input: Option<&LoadReport>, out: &mut Vec<u32>) -> Result<(), Self::Error> {
        if let Some(t) = input.and_then(|r| self.on_report(now, r)) {
            out.push(t);
        }
        Ok(())
    }

    fn poll_timeout(&self) -> Option<Time> {
        None
    }

    fn timeout() -> Option<&'static LoadReport> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(v: f64, p: f64) -> LoadReport {
        LoadReport {
            vswitch_cpu: vec![v * 0.5, v],
            switch_cpu: p,
            switch_table: 0.0,
        }
    }

    fn ctl() -> FlowPrediction {
        FlowPrediction::new(PredictionConfig::default()).expect("valid")
    }

    #[test]
    fn moves_the_right_way_and_holds_inside_the_deadband() {
        let mut c = ctl();
        let t0 = c.threshold();
        let t1 = c.on_report(0, &report(0.9, 0.2)).expect("moves");
        assert!(t1 < t0, "busy servers: lower threshold, more elephants");
        let mut c = ctl();
        let t2 = c.on_report(0, &report(0.2, 0.9)).expect("moves");
        assert!(t2 > t0, "busy switch: higher threshold");
        let mut c = ctl();
        assert_eq!(c.on_report(0, &report(0.52, 0.5)), None);
        // A full table counts as a busy switch.
        let mut c = ctl();
        let r = LoadReport {
            vswitch_cpu: vec![0.3],
            switch_cpu: 0.1,
            switch_table: 1.0,
        };
        assert!(c.on_report(0, &r).expect("moves") > t0);
    }

    #[test]
    fn bounded_steps_and_bounds() {
        let mut c = ctl();
        let t1 = c.on_report(0, &report(1.0, 0.0)).expect("moves");
        assert!(f64::from(t1) >= 18.0 / 2.0 - 0.5, "at most one octave per period");
        for _ in 0..100 {
            c.on_report(0, &report(1.0, 0.0));
        }
        assert_eq!(c.threshold(), 1);
        for _ in 0..100 {
            c.on_report(0, &report(0.0, 1.0));
        }
        assert_eq!(c.threshold(), 1 << 16);
        // NaN and out-of-range inputs are clamped, never poison the state.
        c.on_report(0, &report(f64::NAN, 7.0));
        assert!(c.threshold() <= 1 << 16);
    }

    /// A plant like the real one: server load rises and switch load falls with the threshold,
    /// with unknown steepness. The law must settle inside the deadband, monotonically or with
    /// shrinking swings, from either side, and re-settle after a step in the load.
    #[test]
    fn settles_on_a_step_input_without_sustained_oscillation() {
        for steep in [0.2, 0.5, 1.0, 3.0] {
            for start in [2u32, 18, 4096] {
                let mut c = FlowPrediction::new(PredictionConfig {
                    initial_threshold: start,
                    ..PredictionConfig::default()
                })
                .expect("valid");
                let plant = |t: u32, mice: f64| {
                    let x = f64::from(t).log2();
                    let v = (mice * (0.2 + steep * 0.1 * x)).clamp(0.0, 1.0);
                    let p = (0.9 - steep * 0.1 * x).clamp(0.0, 1.0);
                    report(v, p)
                };
                let mut mice = 1.0;
                let mut history = Vec::new();
                for k in 0..80 {
                    if k == 40 {
                        mice = 2.0; // the mice double
                    }
                    c.on_report(0, &plant(c.threshold(), mice));
                    history.push(c.threshold());
                }
                for (from, to, m) in [(20usize, 40usize, 1.0), (60, 80, 2.0)] {
                    let err = |t: u32| {
                        let (v, p) = plant(t, m).sides();
                        (v - p).abs()
                    };
                    // The best any integer threshold can do.
                    let best = (0..=16)
                        .map(|k| err(1 << k))
                        .chain((1..200).map(err))
                        .fold(f64::MAX, f64::min);
                    let got = err(history[to - 1]);
                    assert!(
                        got <= (best + 0.05).max(0.15) || got <= 0.05,
                        "steep {steep} start {start}: not balanced after period {to}: error {got:.2}, best {best:.2}"
                    );
                    let moves = history[from..to].windows(2).filter(|w| w[0] != w[1]).count();
                    assert!(
                        moves <= 2,
                        "steep {steep} start {start}: still moving {moves} times in {from}..{to}"
                    );
                }
            }
        }
    }

    #[test]
    fn bad_configs_are_refused() {
        for cfg in [
            PredictionConfig {
                period: 0,
                ..Default::default()
            },
            PredictionConfig {
                min_threshold: 0,
                ..Default::default()
            },
            PredictionConfig {
                initial_threshold: 1 << 20,
                ..Default::default()
            },
            PredictionConfig {
                gain: f64::NAN,
                ..Default::default()
            },
        ] {
            assert!(FlowPrediction::new(cfg).is_err());
        }
    }

    /// Through the shared contract: a report that moves the threshold outputs it.
    #[test]
    fn the_shared_core_contract_outputs_each_new_threshold() {
        use tandem_time::sansio::SansIo;
        let (mut by_trait, mut direct) = (ctl(), ctl());
        let mut out = Vec::new();
        for r in [report(0.9, 0.2), report(0.52, 0.5), report(0.2, 0.9)] {
            SansIo::handle(&mut by_trait, 0, Some(&r), &mut out).unwrap();
            if let Some(t) = direct.on_report(0, &r) {
                assert_eq!(out.pop(), Some(t));
            }
            assert!(out.is_empty());
        }
        SansIo::handle(&mut by_trait, 0, None, &mut out).unwrap();
        assert!(out.is_empty());
        assert_eq!(by_trait.threshold(), direct.threshold());
    }
}
