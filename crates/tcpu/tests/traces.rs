//! The `tcpu-traces` experiment at its `--quick` size: the paper's Figures 1 and 2 on synthetic
//! rack traffic, with every row labelled, the outputs written and the run deterministic.

use tandem_sim::experiment::Kind;
use tandem_tcpu::model::traces::EXPERIMENT;
use tandem_testkit::Scratch;

#[test]
fn traces_quick_experiment_writes_its_outputs_and_repeats() {
    let s = Scratch::new("tcpu-traces");
    let report = tandem_sim::experiment::run(&EXPERIMENT, true, &s.join("a"), &mut |_| {}).expect("run");
    // Four verdict rows per trace, the concurrency fitted to DCTCP's median (an input).
    assert_eq!(report.rows.iter().filter(|r| r.verdict().is_some()).count(), 8);
    assert_eq!(report.count(Kind::Input), 2);
    for f in [
        "traces.csv",
        "fig1.png",
        "fig1.svg",
        "fig2.png",
        "fig2.svg",
        "results.md",
    ] {
        assert!(s.join("a").join(f).exists(), "{f}");
    }
    let again = tandem_sim::experiment::run(&EXPERIMENT, true, &s.join("b"), &mut |_| {}).expect("run");
    assert_eq!(report.rows, again.rows);
    let csv = |d: &str| std::fs::read_to_string(s.join(d).join("traces.csv")).unwrap();
    assert_eq!(csv("a"), csv("b"));
}
