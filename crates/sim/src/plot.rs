//! Figures for run and experiment outputs, drawn the way a paper wants them: every figure is
//! written twice, as `NAME.png` and `NAME.svg` side by side, from one drawing routine that is
//! generic over the plotters backend.
//!
//! A [`Figure`] has a title, an x and a y [`Axis`] and any number of [`Series`]. What the
//! builder decides for you, and how to override it:
//!
//! * **Style.** A series with at most [`SPARSE_MAX`] points (a sweep) is drawn as a line with a
//!   marker at every point, so a straight segment between two measurements is never mistaken
//!   for a measured curve; a denser series (a time series, a CDF) is a plain line.
//!   [`Series::markers`], [`Series::points`] and [`Series::line`] force a style.
//! * **Nothing hidden.** Every series has its own colour and, where it carries markers, its own
//!   marker shape (circle, square, triangle, diamond, ...; hollow, so two markers on the same
//!   spot both show; filled once the seven shapes have been used). Lines take solid, dashed,
//!   dotted and long-dashed in turn, so a line drawn over an identical one leaves the one below
//!   showing through its gaps. All lines are drawn before any marker, so no marker is covered
//!   by a later line. [`Series::solid`], [`Series::dashed`] and [`Series::dash`] set the
//!   pattern (reference curves: a bound, a paper's value, a capacity).
//! * **Legend outside the data.** The legend sits below the plotting area (as many columns as
//!   fit), never over a curve; a figure whose series are all unnamed has none.
//! * **Axes.** [`Axis::log`] gives a logarithmic axis (points at or below zero are left out);
//!   [`Scale::Auto`] picks one when every value is positive and they span at least two decades
//!   ([`Axis::auto`]). [`Axis::integer`] gives whole-number ticks for axes that count things
//!   (flows, devices, entries), never "2.5 flows". Ticks are chosen here (1, 2, 5 steps; decades
//!   on log axes), with a light major grid only and no minor grid.
//! * **Ranges.** The x axis spans the data; a linear y axis includes zero. [`Axis::range`] sets
//!   either explicitly.
//!
//! DejaVu Sans is bundled (licence in `assets/DejaVuSans-LICENSE.txt`) and used for layout and
//! the PNG, so the same figure gives byte-identical PNG and SVG files from run to run, whatever
//! fonts the machine has. The SVG keeps its text as text (family `sans-serif`).
//!
//! ```no_run
//! use tandem_sim::plot::{Axis, Figure, Series};
//! Figure::new("Goodput vs flows", Axis::new("flows").integer(), "goodput (Mb/s)")
//!     .series(Series::new("measured", vec![(1.0, 940.0), (2.0, 938.0), (4.0, 931.0)]))
//!     .series(Series::new("paper", vec![(1.0, 941.0), (4.0, 941.0)]).dashed())
//!     .save(std::path::Path::new("results/goodput.png")) // writes goodput.png and goodput.svg
//!     .unwrap();
//! ```

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;
use std::path::{Path, PathBuf};
use std::sync::Once;

static FONT: Once = Once::new();
const FONT_BYTES: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";

fn ensure_font() {
    FONT.call_once(|| {
        // The bytes are a valid TTF shipped with the crate; registration cannot fail on them.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT_BYTES);
    });
}

/// A series with at most this many points is sparse: drawn with markers unless told otherwise.
pub const SPARSE_MAX: usize = 20;

/// CDFs built by [`Series::cdf`] keep at most this many points (evenly spaced in rank), which
/// is invisible at figure resolution and keeps the SVG small.
pub const CDF_POINTS: usize = 1000;

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

/// The two file names a figure saved as `STEM.png` produces, for a report's file list.
pub fn files(stem: &str) -> [String; 2] {
    [format!("{stem}.png"), format!("{stem}.svg")]
}

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    /// Linear.
    #[default]
    Linear,
    /// Base-10 logarithmic; values at or below zero are left out.
    Log,
    /// Logarithmic when every value on the axis is positive and the largest is at least 100
    /// times the smallest, linear otherwise.
    Auto,
}

/// One axis of a [`Figure`]. A `&str` or `String` converts into a linear axis with that label.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    label: String,
    scale: Scale,
    integer: bool,
    range: Option<(f64, f64)>,
}

impl Axis {
    /// A linear axis with this label (include the unit).
    pub fn new(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            integer: false,
            range: None,
        }
    }

    /// Logarithmic (base 10).
    pub fn log(self) -> Axis {
        self.scale(Scale::Log)
    }

    /// Logarithmic if the data span two decades or more (see [`Scale::Auto`]).
    pub fn auto(self) -> Axis {
        self.scale(Scale::Auto)
    }

    /// This scale.
    pub fn scale(mut self, scale: Scale) -> Axis {
        self.scale = scale;
        self
    }

    /// The axis counts things: ticks only at whole numbers.
    pub fn integer(mut self) -> Axis {
        self.integer = true;
        self
    }

    /// Show exactly `lo..=hi` (data units; both positive on a log axis) instead of the range
    /// the data need.
    pub fn range(mut self, lo: f64, hi: f64) -> Axis {
        self.range = Some((lo, hi));
        self
    }
}

impl From<&str> for Axis {
    fn from(label: &str) -> Axis {
        Axis::new(label)
    }
}

impl From<String> for Axis {
    fn from(label: String) -> Axis {
        Axis::new(label)
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Style {
    /// [`Style::LineMarkers`] for at most [`SPARSE_MAX`] points, [`Style::Line`] above.
    #[default]
    Auto,
    /// A line through the points, no markers.
    Line,
    /// A marker at each point, no line.
    Markers,
    /// A line through the points and a marker at each.
    LineMarkers,
}

/// The stroke pattern of a series' line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dash {
    /// The series with a line take solid, dashed, dotted and long-dashed in turn (a series
    /// with a set pattern, or markers only, does not take a turn), so that a line drawn over an
    /// identical one leaves the one below showing through its gaps.
    #[default]
    Auto,
    /// Solid.
    Solid,
    /// Dashed.
    Dashed,
    /// Dotted.
    Dotted,
}

/// One named series of (x, y) points. Points with a non-finite coordinate are left out. A
/// `(name, points)` pair converts into one ([`Series::new`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    name: String,
    points: Vec<(f64, f64)>,
    style: Style,
    dash: Dash,
    stairs_from: Option<f64>,
}

impl Series {
    /// A series; an empty name keeps it out of the legend.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            style: Style::Auto,
            dash: Dash::Auto,
            stairs_from: None,
        }
    }

    /// The empirical CDF of `samples` (any order; non-finite ones are left out): a staircase
    /// with a marker at each sample when there are few, otherwise a line through at most
    /// [`CDF_POINTS`] points of the distribution.
    pub fn cdf(name: impl Into<String>, samples: &[f64]) -> Series {
        let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let at = |i: usize| (v[i], (i + 1) as f64 / n as f64);
        if n <= SPARSE_MAX {
            return Series::new(name, (0..n).map(at).collect()).staircase(0.0);
        }
        let keep = n.min(CDF_POINTS);
        let mut pts: Vec<(f64, f64)> = (0..keep).map(|k| at(k * (n - 1) / (keep - 1))).collect();
        pts.dedup();
        Series::new(name, pts).line()
    }

    /// Draw as a staircase: from each point horizontally to the next point's x, then
    /// vertically to it, starting with a vertical step at the first point from height `from`
    /// (0 for a CDF, 1 for a CCDF). Markers, if any, sit on the given points.
    pub fn staircase(mut self, from: f64) -> Series {
        self.stairs_from = Some(from);
        self
    }

    /// A line with a marker at every point, however many there are.
    pub fn markers(mut self) -> Series {
        self.style = Style::LineMarkers;
        self
    }

    /// Markers only, no line (a scatter plot).
    pub fn points(mut self) -> Series {
        self.style = Style::Markers;
        self
    }

    /// A plain line, however few points there are.
    pub fn line(mut self) -> Series {
        self.style = Style::Line;
        self
    }

    /// This style.
    pub fn style(mut self, style: Style) -> Series {
        self.style = style;
        self
    }

    /// A dashed line (for reference curves: a bound, a paper's value, a configured capacity).
    pub fn dashed(self) -> Series {
        self.dash(Dash::Dashed)
    }

    /// A solid line.
    pub fn solid(self) -> Series {
        self.dash(Dash::Solid)
    }

    /// This stroke pattern.
    pub fn dash(mut self, dash: Dash) -> Series {
        self.dash = dash;
        self
    }

    fn resolved_style(&self) -> Style {
        match self.style {
            Style::Auto if self.points.len() <= SPARSE_MAX => Style::LineMarkers,
            Style::Auto => Style::Line,
            s => s,
        }
    }
}

impl From<(String, Vec<(f64, f64)>)> for Series {
    fn from((name, points): (String, Vec<(f64, f64)>)) -> Series {
        Series::new(name, points)
    }
}

impl From<(&str, Vec<(f64, f64)>)> for Series {
    fn from((name, points): (&str, Vec<(f64, f64)>)) -> Series {
        Series::new(name, points)
    }
}

/// A figure: title, axes and series; [`Figure::save`] writes it as PNG and SVG.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    title: String,
    x: Axis,
    y: Axis,
    series: Vec<Series>,
}

// Layout, in pixels. The plot (title, axes, plotting area) is WIDTH x HEIGHT; the legend adds
// rows below it.
const WIDTH: u32 = 900;
const HEIGHT: u32 = 540;
const MARGIN: u32 = 14;
const TITLE_PT: u32 = 20;
const TICK_PT: u32 = 15;
const DESC_PT: u32 = 16;
const LEGEND_PT: u32 = 15;
const LEGEND_ROW: u32 = 24;
const LEGEND_SAMPLE: u32 = 40;
const MARKER_R: i32 = 6;
const STROKE: u32 = 2;

const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Marker {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Cross,
    Plus,
}

const MARKERS: [Marker; 7] = [
    Marker::Circle,
    Marker::Square,
    Marker::TriangleUp,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Cross,
    Marker::Plus,
];

/// (dash length, gap) in pixels; `None` is solid.
fn pattern(d: Dash) -> Option<(u32, u32)> {
    match d {
        Dash::Solid | Dash::Auto => None,
        Dash::Dashed => Some((10, 6)),
        Dash::Dotted => Some((2, 4)),
    }
}

/// The patterns [`Dash::Auto`] lines take in turn: solid, dashed, dotted, long-dashed.
const AUTO_DASHES: [Option<(u32, u32)>; 4] = [None, Some((10, 6)), Some((2, 4)), Some((20, 6))];

/// How one series ends up drawn.
struct Look {
    color: RGBColor,
    line: Option<Option<(u32, u32)>>,
    /// The shape, and whether it is filled.
    marker: Option<(Marker, bool)>,
}

/// One axis, resolved against the data: the scale, the shown range and the ticks, all in
/// drawing units (log10 of the value on a log axis).
struct Resolved {
    log: bool,
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
}

impl Resolved {
    fn to_pos(&self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            None
        } else if self.log {
            (v > 0.0).then(|| v.log10())
        } else {
            Some(v)
        }
    }

    fn label(&self, pos: f64) -> String {
        let tol = (self.hi - self.lo).abs() * 1e-9;
        self.ticks
            .iter()
            .find(|(p, _)| (p - pos).abs() <= tol)
            .map(|(_, l)| l.clone())
            .unwrap_or_default()
    }
}

impl Figure {
    /// An empty figure. The axes take a label (`"time (ms)"`) or an [`Axis`].
    pub fn new(title: impl Into<String>, x: impl Into<Axis>, y: impl Into<Axis>) -> Figure {
        Figure {
            title: title.into(),
            x: x.into(),
            y: y.into(),
            series: Vec::new(),
        }
    }

    /// Adds a series (drawn after, and so above, the ones already added).
    pub fn series(mut self, s: Series) -> Figure {
        self.series.push(s);
        self
    }

    /// Adds every series of `all`, in order (a `(name, points)` pair is a [`Series::new`]).
    pub fn with<S: Into<Series>>(mut self, all: impl IntoIterator<Item = S>) -> Figure {
        self.series.extend(all.into_iter().map(Into::into));
        self
    }

    /// Writes the figure as PNG and SVG: `path` with its extension (if any) replaced by `png`
    /// and by `svg`. Returns the two paths written.
    pub fn save(&self, path: &Path) -> Result<[PathBuf; 2], PlotError> {
        let png = path.with_extension("png");
        let svg = path.with_extension("svg");
        let plan = self.plan();
        let size = (WIDTH, plan.height);
        {
            let root = BitMapBackend::new(&png, size).into_drawing_area();
            self.draw(&root, &plan)?;
            root.present()
                .map_err(|e| PlotError(format!("{}: {e:?}", png.display())))?;
        }
        {
            let root = SVGBackend::new(&svg, size).into_drawing_area();
            self.draw(&root, &plan)?;
            root.present()
                .map_err(|e| PlotError(format!("{}: {e:?}", svg.display())))?;
        }
        Ok([png, svg])
    }

    /// The figure as an SVG document (what [`Figure::save`] writes to the `.svg` file).
    pub fn svg(&self) -> Result<String, PlotError> {
        let plan = self.plan();
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (WIDTH, plan.height)).into_drawing_area();
            self.draw(&root, &plan)?;
            root.present().map_err(err)?;
        }
        Ok(out)
    }

    fn looks(&self) -> Vec<Look> {
        let mut lined = 0;
        let mut marked = 0;
        self.series
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let style = s.resolved_style();
                let marker = matches!(style, Style::Markers | Style::LineMarkers).then(|| {
                    marked += 1;
                    let k = marked - 1;
                    // Hollow shapes first, then the same shapes filled.
                    (MARKERS[k % MARKERS.len()], (k / MARKERS.len()) % 2 == 1)
                });
                let line = (style != Style::Markers).then(|| match s.dash {
                    Dash::Auto => {
                        lined += 1;
                        AUTO_DASHES[(lined - 1) % AUTO_DASHES.len()]
                    }
                    d => pattern(d),
                });
                Look {
                    color: COLORS[i % COLORS.len()],
                    line,
                    marker,
                }
            })
            .collect()
    }

    fn resolve(&self, axis: &Axis, pick: fn(&(f64, f64)) -> f64, is_y: bool) -> Resolved {
        let values: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| {
                let stair = s.stairs_from.filter(|_| is_y).into_iter();
                s.points.iter().map(pick).chain(stair)
            })
            .filter(|v| v.is_finite())
            .collect();
        let positive = values.iter().all(|&v| v > 0.0);
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let log = match axis.scale {
            Scale::Linear => false,
            Scale::Log => true,
            Scale::Auto => !values.is_empty() && positive && max / min >= 100.0,
        };
        let any_markers = self.series.iter().any(|s| s.resolved_style() != Style::Line);
        let (lo, hi) = if log {
            let pos: Vec<f64> = values.iter().copied().filter(|&v| v > 0.0).map(f64::log10).collect();
            let (lo, hi) = match axis.range {
                Some((a, b)) if a > 0.0 && b > a => (a.log10(), b.log10()),
                _ if pos.is_empty() => (0.0, 1.0),
                _ => {
                    let lo = pos.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = pos.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let pad = ((hi - lo) * 0.03).max(0.05);
                    (lo - pad, hi + pad)
                }
            };
            (lo, hi)
        } else {
            match axis.range {
                Some((a, b)) if b > a => (a, b),
                _ if values.is_empty() => (0.0, 1.0),
                _ => {
                    let (mut lo, mut hi) = (min, max);
                    if is_y {
                        lo = lo.min(0.0);
                        hi = hi.max(0.0);
                    }
                    if hi <= lo {
                        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
                        lo -= if is_y && lo == 0.0 { 0.0 } else { d };
                        hi += d;
                    }
                    let span = hi - lo;
                    if is_y {
                        hi += span * 0.05;
                        if lo < 0.0 {
                            lo -= span * 0.05;
                        }
                    } else if any_markers {
                        lo -= span * 0.03;
                        hi += span * 0.03;
                    }
                    (lo, hi)
                }
            }
        };
        let ticks = if log {
            log_ticks(lo, hi, axis.integer)
        } else {
            linear_ticks(lo, hi, if is_y { 6 } else { 8 }, axis.integer)
        };
        Resolved { log, lo, hi, ticks }
    }

    fn plan(&self) -> Plan {
        ensure_font();
        let x = self.resolve(&self.x, |p| p.0, false);
        let y = self.resolve(&self.y, |p| p.1, true);
        let tick_font = (FAMILY, TICK_PT).into_font();
        let y_label_w = y
            .ticks
            .iter()
            .map(|(_, l)| tick_font.box_size(l).map_or(0, |b| b.0))
            .max()
            .unwrap_or(0);
        let legend_font = (FAMILY, LEGEND_PT).into_font();
        let entries: Vec<(usize, u32)> = self
            .series
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.name.is_empty())
            .map(|(i, s)| (i, legend_font.box_size(&s.name).map_or(0, |b| b.0)))
            .collect();
        let y_area = y_label_w + 46;
        let plot_w = WIDTH - MARGIN * 2 - y_area;
        let col_w = entries.iter().map(|e| e.1).max().unwrap_or(0) + LEGEND_SAMPLE + 8 + 28;
        let cols = ((plot_w / col_w.max(1)) as usize).clamp(1, entries.len().max(1));
        let rows = entries.len().div_ceil(cols) as u32;
        let legend_h = if rows == 0 { 0 } else { rows * LEGEND_ROW + 10 };
        Plan {
            x,
            y,
            y_area,
            entries,
            cols,
            col_w,
            height: HEIGHT + legend_h,
        }
    }

    /// Draws the figure on any plotters backend (the one routine behind PNG and SVG).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, plan: &Plan) -> Result<(), PlotError> {
        let (x, y) = (&plan.x, &plan.y);
        root.fill(&WHITE).map_err(err)?;
        let (top, _) = root.split_vertically(HEIGHT);
        let mut chart = ChartBuilder::on(&top)
            .caption(&self.title, (FAMILY, TITLE_PT))
            .margin(MARGIN)
            .margin_right(MARGIN * 2)
            .x_label_area_size(52)
            .y_label_area_size(plan.y_area)
            .build_cartesian_2d(Ticked::new(x), Ticked::new(y))
            .map_err(err)?;
        let fx = |v: &f64| x.label(*v);
        let fy = |v: &f64| y.label(*v);
        chart
            .configure_mesh()
            .x_desc(self.x.label.as_str())
            .y_desc(self.y.label.as_str())
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .label_style((FAMILY, TICK_PT))
            .axis_desc_style((FAMILY, DESC_PT))
            .bold_line_style(BLACK.mix(0.12))
            .light_line_style(TRANSPARENT)
            .max_light_lines(0)
            .axis_style(BLACK.mix(0.8))
            .draw()
            .map_err(err)?;

        let looks = self.looks();
        let data: Vec<Vec<(f64, f64)>> = self
            .series
            .iter()
            .map(|s| {
                s.points
                    .iter()
                    .filter_map(|&(a, b)| Some((x.to_pos(a)?, y.to_pos(b)?)))
                    .collect()
            })
            .collect();
        // Every line first, then every marker, so no marker is covered by a line.
        for ((s, look), pts) in self.series.iter().zip(&looks).zip(&data) {
            let Some(dash) = look.line else { continue };
            let mut path = pts.clone();
            if let Some(from) = s.stairs_from {
                path = stairs(pts, y.to_pos(from));
            }
            let style = look.color.stroke_width(STROKE);
            // Only the parts inside the axes' ranges (which an explicit range can cut short).
            for run in clip(&path, (x.lo, x.hi), (y.lo, y.hi)) {
                match dash {
                    None => chart.draw_series(std::iter::once(PathElement::new(run, style))),
                    Some((on, off)) => chart.draw_series(std::iter::once(DashedPathElement::new(run, on, off, style))),
                }
                .map_err(err)?;
            }
        }
        let inside = |&(a, b): &(f64, f64)| (x.lo..=x.hi).contains(&a) && (y.lo..=y.hi).contains(&b);
        for (look, pts) in looks.iter().zip(&data) {
            let Some((m, filled)) = look.marker else { continue };
            for p in pts.iter().filter(|p| inside(p)) {
                marker(root, chart.backend_coord(p), m, filled, look.color)?;
            }
        }

        // The legend, in rows below the plot, centred under the plotting area.
        if !plan.entries.is_empty() {
            let (px, _) = chart.plotting_area().get_pixel_range();
            let cols = plan.cols as i32;
            let used = plan.col_w as i32 * cols.min(plan.entries.len() as i32);
            let left = px.start + ((px.end - px.start) - used).max(0) / 2;
            let font = (FAMILY, LEGEND_PT)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center));
            for (k, &(i, _)) in plan.entries.iter().enumerate() {
                let (r, c) = (k as i32 / cols, k as i32 % cols);
                let x0 = left + c * plan.col_w as i32;
                let yc = (HEIGHT + 4) as i32 + r * LEGEND_ROW as i32 + LEGEND_ROW as i32 / 2;
                let look = &looks[i];
                let sample = vec![(x0, yc), (x0 + LEGEND_SAMPLE as i32, yc)];
                let style = look.color.stroke_width(STROKE);
                match look.line {
                    Some(None) => root.draw(&PathElement::new(sample, style)),
                    Some(Some((on, off))) => root.draw(&DashedPathElement::new(sample, on, off, style)),
                    None => Ok(()),
                }
                .map_err(err)?;
                if let Some((m, filled)) = look.marker {
                    marker(root, (x0 + LEGEND_SAMPLE as i32 / 2, yc), m, filled, look.color)?;
                }
                root.draw(&Text::new(
                    self.series[i].name.as_str(),
                    (x0 + LEGEND_SAMPLE as i32 + 8, yc),
                    font.clone(),
                ))
                .map_err(err)?;
            }
        }
        Ok(())
    }
}

/// A linear coordinate over drawing units whose grid lines and labels sit exactly at the ticks
/// chosen here (plotters' own choice would add minor lines and fractional counts).
struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(axis: &Resolved) -> Ticked {
        Ticked {
            inner: (axis.lo..axis.hi).into(),
            ticks: axis.ticks.iter().map(|t| t.0).collect(),
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Bold (major) points only: no minor grid.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// What [`Figure::plan`] works out once for both backends.
struct Plan {
    x: Resolved,
    y: Resolved,
    y_area: u32,
    /// (series index, label width) of each legend entry.
    entries: Vec<(usize, u32)>,
    cols: usize,
    col_w: u32,
    height: u32,
}

/// The staircase through `pts` (already in drawing units), starting at height `from`.
fn stairs(pts: &[(f64, f64)], from: Option<f64>) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(pts.len() * 2 + 1);
    if let (Some(&(x0, _)), Some(f)) = (pts.first(), from) {
        out.push((x0, f));
    }
    for (k, &p) in pts.iter().enumerate() {
        if k > 0 {
            out.push((p.0, pts[k - 1].1));
        }
        out.push(p);
    }
    out
}

/// The pieces of the polyline `path` inside the box `xr` x `yr` (each segment clipped by
/// Liang-Barsky), as runs of at least two points.
fn clip(path: &[(f64, f64)], xr: (f64, f64), yr: (f64, f64)) -> Vec<Vec<(f64, f64)>> {
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for w in path.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        let (dx, dy) = (x1 - x0, y1 - y0);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        let mut visible = true;
        for (p, q) in [(-dx, x0 - xr.0), (dx, xr.1 - x0), (-dy, y0 - yr.0), (dy, yr.1 - y0)] {
            if p == 0.0 {
                visible &= q >= 0.0;
            } else if p < 0.0 {
                t0 = t0.max(q / p);
            } else {
                t1 = t1.min(q / p);
            }
        }
        if !visible || t0 > t1 {
            if cur.len() > 1 {
                runs.push(std::mem::take(&mut cur));
            }
            cur.clear();
            continue;
        }
        // Unclipped ends stay exact, so consecutive segments join into one run.
        let a = if t0 > 0.0 {
            (x0 + t0 * dx, y0 + t0 * dy)
        } else {
            (x0, y0)
        };
        let b = if t1 < 1.0 {
            (x0 + t1 * dx, y0 + t1 * dy)
        } else {
            (x1, y1)
        };
        if cur.last() != Some(&a) {
            if cur.len() > 1 {
                runs.push(std::mem::take(&mut cur));
            }
            cur = vec![a];
        }
        cur.push(b);
        if t1 < 1.0 {
            runs.push(std::mem::take(&mut cur));
        }
    }
    if cur.len() > 1 {
        runs.push(cur);
    }
    runs
}

/// A marker centred on pixel `c`, hollow or filled.
fn marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    c: (i32, i32),
    m: Marker,
    filled: bool,
    color: RGBColor,
) -> Result<(), PlotError> {
    let (x, y) = c;
    let r = MARKER_R;
    let style = color.stroke_width(if filled && matches!(m, Marker::Cross | Marker::Plus) {
        STROKE + 2
    } else {
        STROKE
    });
    let closed = |pts: Vec<(i32, i32)>| {
        if filled {
            area.draw(&Polygon::new(pts.clone(), color.filled()))?;
        }
        let mut p = pts.clone();
        p.push(pts[0]);
        area.draw(&PathElement::new(p, style))
    };
    match m {
        Marker::Circle => area.draw(&Circle::new(c, r, if filled { color.filled() } else { style })),
        Marker::Square => {
            let h = r - 1;
            closed(vec![(x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h)])
        }
        Marker::TriangleUp => closed(vec![(x, y - r - 1), (x + r + 1, y + r - 1), (x - r - 1, y + r - 1)]),
        Marker::TriangleDown => closed(vec![(x, y + r + 1), (x + r + 1, y - r + 1), (x - r - 1, y - r + 1)]),
        Marker::Diamond => closed(vec![(x, y - r - 1), (x + r + 1, y), (x, y + r + 1), (x - r - 1, y)]),
        Marker::Cross => area
            .draw(&PathElement::new(vec![(x - r, y - r), (x + r, y + r)], style))
            .and_then(|_| area.draw(&PathElement::new(vec![(x - r, y + r), (x + r, y - r)], style))),
        Marker::Plus => area
            .draw(&PathElement::new(vec![(x - r - 1, y), (x + r + 1, y)], style))
            .and_then(|_| area.draw(&PathElement::new(vec![(x, y - r - 1), (x, y + r + 1)], style))),
    }
    .map_err(err)
}

/// Ticks at 1, 2 or 5 times a power of ten, about `target` of them over `lo..=hi`, labelled
/// with as many decimals as the step needs (none on an integer axis, whose step is at least 1).
fn linear_ticks(lo: f64, hi: f64, target: usize, integer: bool) -> Vec<(f64, String)> {
    let raw = (hi - lo) / target.max(1) as f64;
    let mut exp = raw.log10().floor() as i32;
    if integer {
        exp = exp.max(0);
    }
    let mag = 10f64.powi(exp);
    let mult = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|m| m * mag >= raw * 0.999)
        .unwrap_or(10.0);
    let step = mult * mag;
    let decimals = (-(step.log10() + 1e-9).floor()).max(0.0) as usize;
    let big = lo.abs().max(hi.abs()) >= 1e6;
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last)
        .map(|k| {
            let v = k as f64 * step;
            let label = if k == 0 && !big {
                format!("{:.decimals$}", 0.0)
            } else if big {
                format!("{v:e}")
            } else {
                format!("{v:.decimals$}")
            };
            (v, label)
        })
        .collect()
}

const SUPERSCRIPT: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];

fn power_of_ten(e: i32) -> String {
    let digits: String = e
        .unsigned_abs()
        .to_string()
        .chars()
        .map(|d| SUPERSCRIPT[(d as u8 - b'0') as usize])
        .collect();
    format!("10{}{digits}", if e < 0 { "⁻" } else { "" })
}

/// Ticks on a log axis over `lo..=hi` (log10 units): the decades, thinned to at most about 8;
/// where fewer than 3 decades show, also 2 and 5 times each (and then every digit if still
/// too few). Labels are plain numbers from 0.001 to 100000, powers of ten beyond.
fn log_ticks(lo: f64, hi: f64, integer: bool) -> Vec<(f64, String)> {
    let (e0, e1) = ((lo - 1e-9).floor() as i32, (hi + 1e-9).ceil() as i32);
    let inside = |m: f64, e: i32| {
        let p = m.log10() + f64::from(e);
        (p >= lo - 1e-9 && p <= hi + 1e-9 && !(integer && e < 0)).then_some((m, e, p))
    };
    let pick = |mults: &[f64]| -> Vec<(f64, i32, f64)> {
        (e0..=e1)
            .flat_map(|e| mults.iter().filter_map(move |&m| inside(m, e)))
            .collect()
    };
    let mut ticks = pick(&[1.0]);
    if ticks.len() > 8 {
        let every = ticks.len().div_ceil(8);
        ticks.retain(|t| t.1.rem_euclid(every as i32) == 0);
    }
    if ticks.len() < 3 {
        ticks = pick(&[1.0, 2.0, 5.0]);
    }
    if ticks.len() < 3 {
        ticks = pick(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    }
    let plain = ticks.iter().all(|t| (-3..=5).contains(&t.1));
    ticks
        .into_iter()
        .map(|(m, e, p)| {
            let label = if plain {
                if e >= 0 {
                    format!("{}", (m * 10f64.powi(e)).round() as i64)
                } else {
                    format!("{:.*}", (-e) as usize, m * 10f64.powi(e))
                }
            } else if m == 1.0 {
                power_of_ten(e)
            } else {
                format!("{m}×{}", power_of_ten(e))
            };
            (p, label)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Figure {
        Figure::new("t", Axis::new("flows").integer(), "goodput (Mb/s)")
            .series(Series::new(
                "measured & modelled",
                vec![(1.0, 1.0), (2.0, 2.5), (4.0, 3.0)],
            ))
            .series(Series::new("paper", vec![(1.0, 1.0), (4.0, 3.0)]).dashed())
            .series(Series::cdf("", &(0..500).map(f64::from).collect::<Vec<_>>()))
    }

    #[test]
    fn writes_png_and_svg_side_by_side() {
        let dir = tandem_testkit::Scratch::new("plot");
        let [png, svg] = sample().save(&dir.join("x.png")).unwrap();
        assert_eq!(png, dir.join("x.png"));
        assert_eq!(svg, dir.join("x.svg"));
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.starts_with("<svg"), "{}", &text[..40]);
        assert!(text.trim_end().ends_with("</svg>"));
        // Well formed as far as a cheap check goes: every opened element is closed.
        for tag in ["svg", "text"] {
            let open = text.matches(&format!("<{tag} ")).count();
            assert_eq!(open, text.matches(&format!("</{tag}>")).count(), "<{tag}>");
            assert!(open > 0);
        }
        assert_eq!(text.matches('<').count(), text.matches('>').count());
        // The legend names are there, escaped; the unnamed series has no entry.
        assert!(text.contains("\nmeasured &amp; modelled\n"));
        assert!(text.contains("\npaper\n"));
        assert_eq!(text, sample().svg().unwrap());
        // A stem without extension works too.
        let [p, s] = sample().save(&dir.join("y")).unwrap();
        assert!(p.exists() && s.exists());
    }

    #[test]
    fn same_figure_same_bytes() {
        let dir = tandem_testkit::Scratch::new("plot-det");
        let fig = Figure::new("latency", Axis::new("latency (us)").log(), "CDF").with(
            [1.0, 3.0, 10.0, 50.0, 400.0, 2500.0].iter().enumerate().map(|(i, s)| {
                Series::cdf(
                    format!("s{i}"),
                    &(1..200).map(|k| s * (1.0 + f64::from(k) / 20.0)).collect::<Vec<_>>(),
                )
            }),
        );
        let a = fig.save(&dir.join("a.png")).unwrap();
        let b = fig.save(&dir.join("b.png")).unwrap();
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(std::fs::read(x).unwrap(), std::fs::read(y).unwrap(), "{}", x.display());
        }
    }

    #[test]
    fn log_axis_takes_decades_and_drops_non_positive_points() {
        let fig = Figure::new("cam", Axis::new("CAM entries").log().integer(), "share")
            .series(Series::new("trace", vec![(0.0, 0.1), (1.0, 0.2), (30.0, 0.5), (20000.0, 1.0)]).staircase(0.0));
        let x = fig.resolve(&fig.x, |p| p.0, false);
        assert!(x.log);
        let labels: Vec<&str> = x.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["1", "10", "100", "1000", "10000"]);
        let svg = fig.svg().unwrap();
        assert!(svg.contains("\n10000\n"));
        let dir = tandem_testkit::Scratch::new("plot-log");
        fig.save(&dir.join("cam.png")).unwrap();
        // Auto picks log only for positive data spanning two decades.
        let auto = |pts: Vec<(f64, f64)>| {
            let f = Figure::new("t", Axis::new("x").auto(), "y").series(Series::new("a", pts));
            f.resolve(&f.x, |p| p.0, false).log
        };
        assert!(auto(vec![(1.0, 1.0), (150.0, 1.0)]));
        assert!(!auto(vec![(1.0, 1.0), (50.0, 1.0)]));
        assert!(!auto(vec![(0.0, 1.0), (1e6, 1.0)]));
        // Wide spans are labelled as powers of ten.
        let t = log_ticks(-9.0, 0.0, false);
        assert_eq!(t.first().unwrap().1, "10⁻⁸");
        assert_eq!(t.last().unwrap().1, "10⁰");
        assert!(t.len() <= 10);
    }

    #[test]
    fn degenerate_data_still_draws() {
        let empty = Figure::new("empty", "x", "y");
        assert!(empty.svg().unwrap().contains("</svg>"));
        let odd = Figure::new("odd", Axis::new("x").log(), Axis::new("y").auto())
            .series(Series::new("one point", vec![(4.0, 4.0)]))
            .series(Series::new("not finite", vec![(f64::NAN, 1.0), (1.0, f64::INFINITY)]))
            .series(Series::new("at or below zero", vec![(0.0, 1.0), (-1.0, 2.0)]))
            .series(Series::cdf("no samples", &[]));
        let svg = odd.svg().unwrap();
        assert!(svg.contains("one point") && svg.contains("no samples"));
        let flat = Figure::new("flat", "x", "y").series(Series::new("", vec![(1.0, 0.0), (1.0, 0.0)]));
        flat.svg().unwrap();
    }

    #[test]
    fn lines_are_clipped_to_the_axes() {
        let r = clip(
            &[(-1.0, 0.5), (0.5, 0.5), (2.0, 0.5), (2.0, 2.0), (0.5, 0.2)],
            (0.0, 1.0),
            (0.0, 1.0),
        );
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0], [(0.0, 0.5), (0.5, 0.5), (1.0, 0.5)]);
        assert_eq!(r[1].last(), Some(&(0.5, 0.2)));
        assert_eq!(clip(&[(0.2, 0.2), (0.8, 0.8)], (0.0, 1.0), (0.0, 1.0)).len(), 1);
        assert!(clip(&[(2.0, 2.0), (3.0, 3.0)], (0.0, 1.0), (0.0, 1.0)).is_empty());
        let fig = Figure::new("cut", Axis::new("x").range(0.0, 1.0), Axis::new("y").range(0.0, 1.0))
            .series(Series::new("a", vec![(-1.0, 0.5), (0.5, 0.5), (5.0, 9.0)]));
        fig.svg().unwrap();
    }

    #[test]
    fn ticks() {
        let lab = |t: Vec<(f64, String)>| t.into_iter().map(|t| t.1).collect::<Vec<_>>();
        // Integer axes never get fractional ticks, however short the range.
        assert_eq!(lab(linear_ticks(0.9, 4.1, 8, true)), ["1", "2", "3", "4"]);
        assert_eq!(
            lab(linear_ticks(0.0, 1.05, 6, false)),
            ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
        );
        assert_eq!(lab(linear_ticks(-10.0, 10.0, 4, false)), ["-10", "-5", "0", "5", "10"]);
        assert_eq!(lab(log_ticks(0.0, 1.0, false)), ["1", "2", "5", "10"]);
        assert_eq!(lab(log_ticks(-2.0, 0.5, false)), ["0.01", "0.1", "1"]);
    }

    #[test]
    fn styles() {
        let sparse = Series::new("a", (0..5).map(|i| (f64::from(i), 1.0)).collect());
        let dense = Series::new("b", (0..50).map(|i| (f64::from(i), 1.0)).collect());
        assert_eq!(sparse.resolved_style(), Style::LineMarkers);
        assert_eq!(dense.resolved_style(), Style::Line);
        let fig = Figure::new("t", "x", "y").with([sparse.clone(), sparse, dense.clone(), dense.clone(), dense]);
        let looks = fig.looks();
        // Distinct markers on the sparse ones, none on the dense ones; the first line solid,
        // the later ones each with another pattern.
        assert_eq!(looks[0].marker, Some((Marker::Circle, false)));
        assert_eq!(looks[1].marker, Some((Marker::Square, false)));
        assert_eq!(looks[2].marker, None);
        assert_eq!(looks[0].line, Some(None));
        for i in 1..4 {
            assert!(matches!(looks[i].line, Some(Some(_))));
            assert_ne!(looks[i].line, looks[i - 1].line);
        }
        assert_eq!(looks[4].line, Some(None));
        // A small CDF is a staircase with markers; a big one a thinned line.
        let small = Series::cdf("s", &[3.0, 1.0, 2.0]);
        assert_eq!(small.points, [(1.0, 1.0 / 3.0), (2.0, 2.0 / 3.0), (3.0, 1.0)]);
        assert_eq!(small.stairs_from, Some(0.0));
        let big = Series::cdf("b", &(0..100_000).map(f64::from).collect::<Vec<_>>());
        assert!(big.points.len() <= CDF_POINTS);
        assert_eq!(*big.points.last().unwrap(), (99_999.0, 1.0));
    }
}
