//! The experiment harness behind `tandem reproduce`: a named experiment runs one or more
//! scenarios and writes, into its output folder, CSV data, plots (each a PNG with an SVG beside
//! it, see [`crate::plot`]) and `results.md`, a table of reference (paper or ns-3) against
//! measured numbers with a verdict per row.
//!
//! Every row says what [`Kind`] of number it is: an input (taken from the paper, or the model
//! calibrated to it), an identity (follows from the inputs by arithmetic) or a prediction (emerges
//! from the model). Only predictions are evidence, so only they get a verdict (`PASS`/`FAIL`);
//! an input or identity row shows its target for reference and no verdict.
//!
//! Every system crate exposes its experiments as a list of [`Experiment`]s; the CLI joins the
//! lists. Experiments are compiled into the binary (scenarios included with `include_str!`),
//! so `tandem reproduce NAME` works from any working directory. Each has a `--quick` form
//! small enough for CI and a full form that reproduces the reference.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// One named, built-in experiment.
#[derive(Clone, Copy)]
pub struct Experiment {
    /// Name used on the command line (`tandem reproduce NAME`).
    pub name: &'static str,
    /// One line saying what it reproduces.
    pub about: &'static str,
    /// Runs it.
    pub run: fn(&mut ExperimentCtx<'_>) -> Result<Report, ExperimentError>,
}

impl std::fmt::Debug for Experiment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Experiment").field("name", &self.name).finish()
    }
}

/// What an experiment is given.
pub struct ExperimentCtx<'a> {
    /// Run the small CI version.
    pub quick: bool,
    /// Where to write outputs (exists when `run` is called).
    pub out_dir: PathBuf,
    /// Called with a short status line as the experiment goes (for a progress display).
    pub status: &'a mut dyn FnMut(&str),
}

impl ExperimentCtx<'_> {
    /// A path inside the output folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.out_dir.join(name)
    }
}

/// An experiment that could not run or write its outputs.
#[derive(Debug)]
pub struct ExperimentError(pub String);

impl std::fmt::Display for ExperimentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ExperimentError {}

impl From<crate::run::RunError> for ExperimentError {
    fn from(e: crate::run::RunError) -> Self {
        ExperimentError(e.to_string())
    }
}

impl From<crate::scenario::ScenarioError> for ExperimentError {
    fn from(e: crate::scenario::ScenarioError) -> Self {
        ExperimentError(e.to_string())
    }
}

impl From<crate::plot::PlotError> for ExperimentError {
    fn from(e: crate::plot::PlotError) -> Self {
        ExperimentError(e.to_string())
    }
}

/// How a measured number is judged against its reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// Informational: no verdict.
    None,
    /// Within this relative difference (0.05 = 5%).
    Relative(f64),
    /// Within this absolute difference.
    Absolute(f64),
    /// At most this value (no reference needed).
    AtMost(f64),
    /// At least this value (no reference needed).
    AtLeast(f64),
}

/// What kind of number a row reports, and so whether it can be evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// We took the value from the paper, or calibrated the model to it: agreement is by
    /// construction and proves nothing.
    Input,
    /// Follows from the inputs by arithmetic (a line rate, a configured rate): agreement checks
    /// the plumbing, not the design.
    Identity,
    /// Emerges from the model: the only kind of row that is evidence, and the only kind that gets
    /// a verdict.
    Prediction,
}

impl Kind {
    /// The word written in the `kind` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Input => "input",
            Kind::Identity => "identity",
            Kind::Prediction => "prediction",
        }
    }
}

/// One row of the reference-vs-measured table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The setting or scenario the row is about.
    pub setting: String,
    /// The metric, with its unit.
    pub metric: String,
    /// Input, identity or prediction: only predictions get a verdict.
    pub kind: Kind,
    /// The reference value (paper or ns-3), when there is one.
    pub reference: Option<f64>,
    /// Our value.
    pub measured: f64,
    /// How the two are compared.
    pub target: Target,
}

impl Row {
    /// A row of the given kind, with a reference and a target.
    pub fn new(kind: Kind, setting: &str, metric: &str, reference: Option<f64>, measured: f64, target: Target) -> Row {
        Row {
            setting: setting.to_string(),
            metric: metric.to_string(),
            kind,
            reference,
            measured,
            target,
        }
    }

    /// `Some(true)` when the target is met, `Some(false)` when not, `None` when there is no
    /// verdict to give: no target, no reference for a relative or absolute target, or a row that
    /// is not a [`Kind::Prediction`] (inputs and identities agree by construction).
    pub fn verdict(&self) -> Option<bool> {
        if self.kind != Kind::Prediction {
            return None;
        }
        let m = self.measured;
        match (self.target, self.reference) {
            (Target::None, _) => None,
            (Target::AtMost(x), _) => Some(m <= x),
            (Target::AtLeast(x), _) => Some(m >= x),
            (Target::Relative(t), Some(r)) => Some(if r == 0.0 { m == 0.0 } else { ((m - r) / r).abs() <= t }),
            (Target::Absolute(t), Some(r)) => Some((m - r).abs() <= t),
            (_, None) => None,
        }
    }
}

/// What an experiment found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Title of the results page.
    pub title: String,
    /// Where the reference numbers come from (paper, figure, or tool and version).
    pub reference: String,
    /// The comparison rows.
    pub rows: Vec<Row>,
    /// Notes: parameters, explanations of gaps.
    pub notes: Vec<String>,
    /// Other files written (CSV, PNG, SVG), relative to the output folder.
    pub files: Vec<String>,
}

/// Writes `text` to `name` in the experiment's output folder.
pub fn write(ctx: &ExperimentCtx<'_>, name: &str, text: &str) -> Result<(), ExperimentError> {
    let p = ctx.path(name);
    std::fs::write(&p, text).map_err(|e| ExperimentError(format!("{}: {e}", p.display())))
}

/// The model's report as `counter,value` CSV.
pub fn counters_csv(report: &[(String, f64)]) -> String {
    let mut m = String::from("counter,value\n");
    for (k, v) in report {
        m.push_str(&format!("{k},{v}\n"));
    }
    m
}

/// Runs `f` on every item, on up to `threads` threads, keeping the order.
pub fn par_map<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (f, next_ref) = (&f, &next);
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let i = next_ref.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        done.push((i, f(item)));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect::<Vec<_>>()
    });
    for (i, r) in results {
        out[i] = Some(r);
    }
    out.into_iter().flatten().collect()
}

/// Threads to run independent simulations on.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Formats a number for a table: up to 4 significant digits, integers without decimals.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{}", x as i64);
    }
    let mag = x.abs().log10().floor() as i32;
    let decimals = (3 - mag).clamp(0, 6) as usize;
    format!("{x:.decimals$}")
}

impl Report {
    /// The markdown page: title, reference, table, notes, files.
    pub fn markdown(&self, experiment: &str, quick: bool) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# {}\n", self.title);
        let _ = writeln!(
            s,
            "Experiment `{experiment}`{}. Reference: {}.\n",
            if quick { " (--quick)" } else { "" },
            self.reference
        );
        let _ = writeln!(
            s,
            "| setting | metric | kind | reference | measured | difference | target | verdict |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
        for r in &self.rows {
            let reference = r.reference.map(fmt_num).unwrap_or_else(|| "-".into());
            let diff = match r.reference {
                // A row that could not be measured here (no GPU, say) says so.
                _ if r.measured.is_nan() => "-".into(),
                Some(x) if x != 0.0 => format!("{:+.1}%", (r.measured - x) / x * 100.0),
                Some(_) => format!("{:+}", fmt_num(r.measured)),
                None => "-".into(),
            };
            let target = match r.target {
                Target::None => "-".to_string(),
                Target::Relative(t) => format!("within {}%", fmt_num(t * 100.0)),
                Target::Absolute(t) => format!("within {}", fmt_num(t)),
                Target::AtMost(x) => format!("<= {}", fmt_num(x)),
                Target::AtLeast(x) => format!(">= {}", fmt_num(x)),
            };
            let verdict = match r.verdict() {
                Some(true) => "PASS",
                Some(false) => "**FAIL**",
                None => "-",
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                r.setting,
                r.metric,
                r.kind.as_str(),
                reference,
                if r.measured.is_nan() {
                    "not measured".to_string()
                } else {
                    fmt_num(r.measured)
                },
                diff,
                target,
                verdict
            );
        }
        if !self.notes.is_empty() {
            let _ = writeln!(s, "\n## Notes\n");
            for n in &self.notes {
                let _ = writeln!(s, "* {n}");
            }
        }
        if !self.files.is_empty() {
            let _ = writeln!(s, "\n## Files\n");
            for f in &self.files {
                let _ = writeln!(s, "* `{f}`");
            }
        }
        s
    }

    /// The rows as CSV.
    pub fn csv(&self) -> String {
        let mut s = String::from("setting,metric,kind,reference,measured,verdict\n");
        for r in &self.rows {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{}",
                csv_field(&r.setting),
                csv_field(&r.metric),
                r.kind.as_str(),
                r.reference.map(|x| x.to_string()).unwrap_or_default(),
                r.measured,
                match r.verdict() {
                    Some(true) => "PASS",
                    Some(false) => "FAIL",
                    None => "",
                }
            );
        }
        s
    }

    /// The report as one JSON object: its title, reference, notes, files, verdict counts and
    /// rows (each with `setting`, `metric`, `kind`, `reference`, `measured`, `target` and
    /// `verdict`, as `results.csv` has them).
    pub fn json(&self, experiment: &str, quick: bool) -> serde_json::Value {
        let rows: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(|r| {
                let target = match r.target {
                    Target::None => serde_json::Value::Null,
                    Target::Relative(x) => serde_json::json!({ "relative": x }),
                    Target::Absolute(x) => serde_json::json!({ "absolute": x }),
                    Target::AtMost(x) => serde_json::json!({ "at_most": x }),
                    Target::AtLeast(x) => serde_json::json!({ "at_least": x }),
                };
                serde_json::json!({
                    "setting": r.setting,
                    "metric": r.metric,
                    "kind": r.kind.as_str(),
                    "reference": r.reference,
                    "measured": r.measured,
                    "target": target,
                    "verdict": r.verdict().map(|ok| if ok { "PASS" } else { "FAIL" }),
                })
            })
            .collect();
        serde_json::json!({
            "experiment": experiment,
            "quick": quick,
            "title": self.title,
            "reference": self.reference,
            "notes": self.notes,
            "files": self.files,
            "passes": self.passes(),
            "fails": self.fails(),
            "rows": rows,
        })
    }

    /// Writes `results.md` and `results.csv` into `dir`.
    pub fn write(&self, dir: &Path, experiment: &str, quick: bool) -> Result<(), ExperimentError> {
        for (name, text) in [
            ("results.md", self.markdown(experiment, quick)),
            ("results.csv", self.csv()),
        ] {
            let p = dir.join(name);
            std::fs::File::create(&p)
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .map_err(|e| ExperimentError(format!("{}: {e}", p.display())))?;
        }
        Ok(())
    }

    /// Predictions whose target is not met (FAIL rows).
    pub fn fails(&self) -> usize {
        self.rows.iter().filter(|r| r.verdict() == Some(false)).count()
    }

    /// Predictions whose target is met (PASS rows).
    pub fn passes(&self) -> usize {
        self.rows.iter().filter(|r| r.verdict() == Some(true)).count()
    }

    /// How many rows are of `kind`.
    pub fn count(&self, kind: Kind) -> usize {
        self.rows.iter().filter(|r| r.kind == kind).count()
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Runs `exp` into `out_dir` (created if needed) and writes its results page.
pub fn run(
    exp: &Experiment,
    quick: bool,
    out_dir: &Path,
    status: &mut dyn FnMut(&str),
) -> Result<Report, ExperimentError> {
    std::fs::create_dir_all(out_dir).map_err(|e| ExperimentError(format!("{}: {e}", out_dir.display())))?;
    let mut ctx = ExperimentCtx {
        quick,
        out_dir: out_dir.to_path_buf(),
        status,
    };
    let report = (exp.run)(&mut ctx)?;
    report.write(out_dir, exp.name, quick)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        let r =
            |reference, measured, target| Row::new(Kind::Prediction, "s", "m", reference, measured, target).verdict();
        assert_eq!(r(Some(100.0), 104.0, Target::Relative(0.05)), Some(true));
        assert_eq!(r(Some(100.0), 94.0, Target::Relative(0.05)), Some(false));
        assert_eq!(r(Some(0.0), 0.0, Target::Relative(0.05)), Some(true));
        assert_eq!(r(Some(10.0), 12.0, Target::Absolute(1.0)), Some(false));
        assert_eq!(r(None, 3.0, Target::AtMost(3.0)), Some(true));
        assert_eq!(r(None, 3.0, Target::AtLeast(4.0)), Some(false));
        assert_eq!(r(None, 3.0, Target::Relative(0.1)), None);
        assert_eq!(r(Some(1.0), 3.0, Target::None), None);
    }

    #[test]
    fn only_predictions_get_a_verdict() {
        for (kind, met, missed) in [
            (Kind::Input, None, None),
            (Kind::Identity, None, None),
            (Kind::Prediction, Some(true), Some(false)),
        ] {
            let row = |measured| Row::new(kind, "s", "m", Some(100.0), measured, Target::Relative(0.05));
            assert_eq!(row(101.0).verdict(), met, "{kind:?}");
            assert_eq!(row(200.0).verdict(), missed, "{kind:?}");
        }
    }

    #[test]
    fn a_row_that_was_not_measured_says_so() {
        let rep = Report {
            rows: vec![Row::new(
                Kind::Prediction,
                "gpu",
                "events/s",
                Some(17e6),
                f64::NAN,
                Target::None,
            )],
            ..Report::default()
        };
        let md = rep.markdown("x", false);
        assert!(
            md.contains("| gpu | events/s | prediction | 17000000 | not measured | - | - | - |"),
            "{md}"
        );
    }

    #[test]
    fn markdown_and_csv() {
        let rep = Report {
            title: "T".into(),
            reference: "ns-3".into(),
            rows: vec![
                Row::new(
                    Kind::Prediction,
                    "bulk",
                    "goodput (Mb/s)",
                    Some(964.0),
                    956.4,
                    Target::Relative(0.05),
                ),
                Row::new(Kind::Prediction, "a,b", "drops", None, 3.0, Target::None),
                Row::new(
                    Kind::Prediction,
                    "rtt",
                    "p99 (us)",
                    Some(10.0),
                    20.0,
                    Target::Relative(0.1),
                ),
                Row::new(
                    Kind::Input,
                    "cal",
                    "rate (pps)",
                    Some(10.0),
                    20.0,
                    Target::Relative(0.1),
                ),
                Row::new(
                    Kind::Identity,
                    "line",
                    "rate (Mb/s)",
                    Some(949.0),
                    949.0,
                    Target::Relative(0.01),
                ),
            ],
            notes: vec!["n".into()],
            files: vec!["x.csv".into()],
        };
        let md = rep.markdown("e", true);
        assert!(
            md.contains("| setting | metric | kind | reference | measured | difference | target | verdict |"),
            "{md}"
        );
        assert!(
            md.contains("| bulk | goodput (Mb/s) | prediction | 964 | 956.4 | -0.8% | within 5% | PASS |"),
            "{md}"
        );
        assert!(
            md.contains("| rtt | p99 (us) | prediction | 10 | 20 | +100.0% | within 10% | **FAIL** |"),
            "{md}"
        );
        // A missed input is no FAIL: it has no verdict at all.
        assert!(
            md.contains("| cal | rate (pps) | input | 10 | 20 | +100.0% | within 10% | - |"),
            "{md}"
        );
        assert!(
            md.contains("| line | rate (Mb/s) | identity | 949 | 949 | +0.0% | within 1% | - |"),
            "{md}"
        );
        assert!(md.contains("(--quick)"));
        assert!(!md.contains("ok |") && !md.contains("gap"), "{md}");
        let csv = rep.csv();
        assert!(
            csv.starts_with("setting,metric,kind,reference,measured,verdict\n"),
            "{csv}"
        );
        assert!(csv.contains("\"a,b\",drops,prediction,,3,\n"), "{csv}");
        assert!(csv.contains("rtt,p99 (us),prediction,10,20,FAIL\n"), "{csv}");
        assert!(csv.contains("cal,rate (pps),input,10,20,\n"), "{csv}");
        assert_eq!((rep.passes(), rep.fails()), (1, 1));
        assert_eq!(
            (
                rep.count(Kind::Input),
                rep.count(Kind::Identity),
                rep.count(Kind::Prediction)
            ),
            (1, 1, 3)
        );
        assert_eq!(fmt_num(0.99812), "0.9981");
        assert_eq!(fmt_num(12345.678), "12346");
        assert_eq!(fmt_num(19.25), "19.25");
    }
}
