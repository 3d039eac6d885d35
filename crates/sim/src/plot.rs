//! PNG plots of run outputs (plotters, with DejaVu Sans bundled so plots render the same on
//! every machine; its licence is in `assets/DejaVuSans-LICENSE.txt`).

use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::Once;

static FONT: Once = Once::new();
const FONT_BYTES: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

fn ensure_font() {
    FONT.call_once(|| {
        // The bytes are a valid TTF shipped with the crate; registration cannot fail on them.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT_BYTES);
    });
}

/// A plot could not be drawn or written.
#[derive(Debug)]
pub struct PlotError(pub String);

impl std::fmt::Display for PlotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "plot: {}", self.0)
    }
}

impl std::error::Error for PlotError {}

fn err<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError(format!("{e:?}"))
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Line plot of named (x, y) series.
pub fn lines(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), PlotError> {
    ensure_font();
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
    for (_, pts) in series {
        for &(x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
    }
    if x0 >= x1 {
        x0 = 0.0;
        x1 = x1.max(1.0);
    }
    let y1 = if y1 <= 0.0 { 1.0 } else { y1 * 1.05 };
    let root = BitMapBackend::new(path, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..y1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
            .map_err(err)?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
    }
    if series.len() > 1 || series.first().is_some_and(|s| !s.0.is_empty()) {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

/// Empirical CDF plot of named samples (each sorted here).
pub fn cdf(path: &Path, title: &str, x_label: &str, series: &[(String, Vec<f64>)]) -> Result<(), PlotError> {
    let curves: Vec<(String, Vec<(f64, f64)>)> = series
        .iter()
        .map(|(name, v)| {
            let mut v = v.clone();
            v.sort_by(f64::total_cmp);
            let n = v.len().max(1) as f64;
            (
                name.clone(),
                v.iter().enumerate().map(|(i, &x)| (x, (i + 1) as f64 / n)).collect(),
            )
        })
        .collect();
    lines(path, title, x_label, "CDF", &curves)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_png() {
        let dir = tandem_testkit::Scratch::new("plot");
        let p = dir.join("x.png");
        lines(&p, "t", "x", "y", &[("a".into(), vec![(0.0, 1.0), (1.0, 2.0)])]).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        cdf(&dir.join("c.png"), "c", "us", &[("fct".into(), vec![3.0, 1.0, 2.0])]).unwrap();
    }
}
