//! Helpers shared by the experiments: the base configuration, statistics and CSV formatting.

use super::kernel::{Phase, SimConfig, SizeDist};
use crate::config::{CoreConfig, Mode, SwitchConfig};
use crate::nf::NfConfig;
use crate::types::US;

/// The slides' packet mix: uniform 64 B - 1.5 KB.
pub const MIX: SizeDist = SizeDist::Uniform { min: 64, max: 1500 };

/// A run of `mode` with `nf`, the default switch, the packet mix, `phases` and `seed`.
pub fn base(mode: Mode, nf: NfConfig, phases: Vec<Phase>, seed: u64) -> SimConfig {
    SimConfig {
        core: CoreConfig {
            mode,
            ..CoreConfig::default()
        },
        switch: SwitchConfig::default(),
        nf,
        phases,
        sizes: MIX,
        warmup: 200 * US,
        bin: 10 * US,
        seed,
    }
}

/// Least-squares line through `pts`: (slope, intercept, R^2).
pub fn linear_fit(pts: &[(f64, f64)]) -> (f64, f64, f64) {
    let n = pts.len() as f64;
    if pts.len() < 2 {
        return (0.0, 0.0, 0.0);
    }
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = pts.iter().map(|p| (p.1 - my).powi(2)).sum();
    if sxx == 0.0 || syy == 0.0 {
        return (0.0, my, 0.0);
    }
    let slope = sxy / sxx;
    (slope, my - slope * mx, sxy * sxy / (sxx * syy))
}

/// Pearson correlation of `pts`.
pub fn correlation(pts: &[(f64, f64)]) -> f64 {
    let (slope, _, r2) = linear_fit(pts);
    r2.sqrt() * slope.signum()
}

/// Of the pairs of points with different x, the share in which y is strictly lower at the
/// larger x: 1 for a strictly falling relation, 0 for a rising one (NaN with no such pair).
pub fn falling_pairs(pts: &[(f64, f64)]) -> f64 {
    let (mut pairs, mut falling) = (0u32, 0u32);
    for (i, a) in pts.iter().enumerate() {
        for b in &pts[i + 1..] {
            if a.0 == b.0 {
                continue;
            }
            pairs += 1;
            let (lo, hi) = if a.0 < b.0 { (a, b) } else { (b, a) };
            if hi.1 < lo.1 {
                falling += 1;
            }
        }
    }
    f64::from(falling) / f64::from(pairs)
}

/// Up to `n` evenly spaced quantiles of `v` (sorted here), for light CDF plots.
pub fn thin(v: &[f64], n: usize) -> Vec<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.len() <= n || n < 2 {
        return s;
    }
    (0..n).map(|i| s[i * (s.len() - 1) / (n - 1)]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_of_a_line() {
        let (a, b, r2) = linear_fit(&[(1.0, 3.0), (2.0, 5.0), (3.0, 7.0)]);
        assert!((a - 2.0).abs() < 1e-9 && (b - 1.0).abs() < 1e-9 && (r2 - 1.0).abs() < 1e-9);
        assert!((correlation(&[(1.0, 3.0), (2.0, 1.0), (3.0, -1.0)]) + 1.0).abs() < 1e-9);
        assert_eq!(falling_pairs(&[(1.0, 5.0), (3.0, 1.0), (2.0, 2.0), (3.0, 1.5)]), 1.0);
        assert_eq!(falling_pairs(&[(1.0, 5.0), (2.0, 2.0), (3.0, 3.0)]), 2.0 / 3.0);
        assert!(falling_pairs(&[(1.0, 5.0), (1.0, 2.0)]).is_nan());
        assert_eq!(thin(&[3.0, 1.0, 2.0], 10), vec![1.0, 2.0, 3.0]);
        assert_eq!(thin(&[5.0, 1.0, 2.0, 4.0, 3.0], 3), vec![1.0, 3.0, 5.0]);
    }
}
