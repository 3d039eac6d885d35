//! Helpers the CoSwitch experiments share: running one approach at one load, and reading a
//! crossing point or a value off a swept curve.

use super::network::{flows_of, run, Approach, NetConfig, Outcome};
use super::workload::{Stream, TraceMix};
use tandem_sim::experiment::ExperimentError;

/// One point of a sweep.
#[derive(Debug, Clone)]
pub struct Point {
    /// The approach run.
    pub approach: Approach,
    /// Offered load asked for, packets per second.
    pub pps: f64,
    /// What it measured.
    pub outcome: Outcome,
}

/// Runs `approach` at `pps` of the trace mix with `cfg` (its approach is replaced). The
/// traffic depends only on the load, the length and the seed, so every approach at one load
/// sees the same packets.
pub fn point(cfg: &NetConfig, approach: Approach, pps: f64) -> Result<Point, ExperimentError> {
    let cfg = NetConfig {
        approach,
        ..cfg.clone()
    };
    let flows = flows_of(
        &[Stream::at_pps(TraceMix::paper(), pps, 0, cfg.duration)],
        cfg.servers,
        cfg.seed,
    );
    let outcome = run(&cfg, &flows).map_err(|e| ExperimentError(e.to_string()))?;
    Ok(Point { approach, pps, outcome })
}

/// The first x at which `y(x)` reaches `level`, linearly interpolated between the points
/// (sorted by x); `None` when it never does.
pub fn crossing(points: &[(f64, f64)], level: f64) -> Option<f64> {
    let mut prev: Option<(f64, f64)> = None;
    for &(x, y) in points {
        if y >= level {
            return Some(match prev {
                Some((x0, y0)) if y > y0 => x0 + (level - y0) / (y - y0) * (x - x0),
                _ => x,
            });
        }
        prev = Some((x, y));
    }
    None
}

/// `y` at `x` on a curve sorted by x, linearly interpolated (clamped at the ends).
pub fn interpolate(curve: &[(f64, f64)], x: f64) -> f64 {
    let mut prev: Option<(f64, f64)> = None;
    for &(x1, y1) in curve {
        if x1 >= x {
            return match prev {
                Some((x0, y0)) if x1 > x0 => y0 + (y1 - y0) * (x - x0) / (x1 - x0),
                _ => y1,
            };
        }
        prev = Some((x1, y1));
    }
    prev.map_or(0.0, |(_, y)| y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossing_interpolates() {
        let pts = [(1.0, 0.2), (2.0, 0.6), (3.0, 1.0)];
        assert_eq!(crossing(&pts, 0.4), Some(1.5));
        assert_eq!(crossing(&pts, 0.1), Some(1.0));
        assert_eq!(crossing(&pts, 1.5), None);
        assert_eq!(interpolate(&pts, 2.5), 0.8);
        assert_eq!(interpolate(&pts, 0.0), 0.2);
        assert_eq!(interpolate(&pts, 9.0), 1.0);
    }
}
