//! `coswitch-adapt` at its full size: after the mice double, Flow-Prediction settles within a
//! few control periods, does not oscillate, and leaves neither side saturated. (The quick size,
//! 25 s after the step, is too short for "settled": on the kernel's draws the threshold was
//! still stepping down, 36 -> 34 -> 32, in its last two periods.)

use tandem_coswitch::model::adapt::{changes, mean, settling_periods, step_runs, StepSetup};

#[test]
fn the_loop_settles_after_a_step() {
    let s = StepSetup::new(false);
    let (lp, _frozen) = step_runs(s).expect("runs");
    let (step, end) = (s.step_at as f64 / 1e12, s.duration as f64 / 1e12);
    let thr: Vec<u32> = lp.samples.iter().map(|x| x.threshold).collect();
    eprintln!("thresholds {thr:?}");
    assert!(settling_periods(&lp.samples, step, end) <= 10);
    assert!(changes(&lp.samples, step + 15.0, end) <= 2, "no oscillation");
    let server = mean(&lp.samples, end - 5.0, end, |x| x.server_cpu);
    let switch = mean(&lp.samples, end - 5.0, end, |x| {
        x.switch_cpu.max(x.tcam as f64 / 2048.0)
    });
    assert!(server < 0.95 && switch < 0.95, "server {server:.2} switch {switch:.2}");
}
