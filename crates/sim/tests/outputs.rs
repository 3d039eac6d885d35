//! The files of a run: each Parquet table has its CSV's columns, in order, typed as
//! docs/formats.md says, and the same rows and values; failures leave no half-written file.

use arrow_array::{Array, BooleanArray, Float64Array, RecordBatch, StringArray, UInt64Array};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::Path;
use tandem_sim::run;
use tandem_sim::scenario::Scenario;
use tandem_testkit::Scratch;

/// A short incast: two rounds, cut while the second is in flight (so some flows have no end),
/// with drops and queue samples.
fn incast(out: &Path) -> Result<run::RunOutcome, run::RunError> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/incast.toml");
    let sets = [
        ("flows[0].repeats", "2"),
        ("duration", "6ms"),
        ("output.plots", "false"),
        ("output.pcap", "[]"),
    ];
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let sc = Scenario::load(&file, &sets).unwrap();
    run::run(&sc, out, &mut |_| {})
}

use DataType::{Boolean as B, Float64 as F, UInt64 as U, Utf8 as S};

/// (column, Arrow type, nullable) of each table, as docs/formats.md lists them.
const FLOWS: &[(&str, DataType, bool)] = &[
    ("flow", U, false),
    ("kind", S, false),
    ("src", S, false),
    ("dst", S, false),
    ("bytes", U, false),
    ("start_s", F, false),
    ("end_s", F, true),
    ("fct_us", F, true),
    ("completed", B, false),
    ("failed", S, true),
    ("delivered", U, false),
    ("goodput_bps", F, false),
    ("segments_sent", U, false),
    ("retransmits", U, false),
    ("fast_recoveries", U, false),
    ("timeouts", U, false),
    ("syn_timeouts", U, false),
    ("out_of_order", U, false),
];
const DROPS: &[(&str, DataType, bool)] = &[
    ("node", S, false),
    ("port", U, false),
    ("reason", S, false),
    ("packets", U, false),
    ("bytes", U, false),
];
const QUEUES: &[(&str, DataType, bool)] = &[
    ("time_s", F, false),
    ("node", S, false),
    ("port", U, false),
    ("bytes", U, false),
    ("packets", U, false),
];

/// The CSV cell a Parquet value must have come from, or None when it matches.
fn mismatch(array: &dyn Array, i: usize, cell: &str) -> Option<String> {
    let differs = |v: String| Some(format!("parquet {v:?}, csv {cell:?}"));
    if array.is_null(i) {
        return (!cell.is_empty()).then(|| format!("parquet null, csv {cell:?}"));
    }
    let a = array.as_any();
    if let Some(a) = a.downcast_ref::<UInt64Array>() {
        (cell.parse::<u64>().ok() != Some(a.value(i))).then(|| differs(a.value(i).to_string()))?
    } else if let Some(a) = a.downcast_ref::<Float64Array>() {
        // Exactly equal: the Parquet float is the CSV's decimal text, not a nearby value.
        (cell.parse::<f64>().ok() != Some(a.value(i))).then(|| differs(a.value(i).to_string()))?
    } else if let Some(a) = a.downcast_ref::<StringArray>() {
        (cell != a.value(i)).then(|| differs(a.value(i).to_string()))?
    } else if let Some(a) = a.downcast_ref::<BooleanArray>() {
        (cell != if a.value(i) { "1" } else { "0" }).then(|| differs(a.value(i).to_string()))?
    } else {
        Some(format!("unexpected type {}", array.data_type()))
    }
}

/// Checks `NAME.parquet` against `NAME.csv` and the expected schema; returns the row count.
fn same_table(dir: &Path, name: &str, schema: &[(&str, DataType, bool)]) -> usize {
    let csv = std::fs::read_to_string(dir.join(format!("{name}.csv"))).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let file = std::fs::File::open(dir.join(format!("{name}.parquet"))).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    let names: Vec<String> = schema.iter().map(|(n, ..)| n.to_string()).collect();
    assert_eq!(header, names, "{name}.csv header");
    let mut row = 0;
    for b in &batches {
        let fields: Vec<_> = b
            .schema()
            .fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().clone(), f.is_nullable()))
            .collect();
        let want: Vec<_> = schema.iter().map(|(n, t, z)| (n.to_string(), t.clone(), *z)).collect();
        assert_eq!(fields, want, "{name}.parquet schema");
        for i in 0..b.num_rows() {
            let cells = &rows[row];
            assert_eq!(cells.len(), header.len(), "{name}.csv line {}", row + 2);
            for (c, cell) in cells.iter().enumerate() {
                if let Some(m) = mismatch(b.column(c).as_ref(), i, cell) {
                    panic!("{name} row {row}, column {}: {m}", header[c]);
                }
            }
            row += 1;
        }
    }
    assert_eq!(row, rows.len(), "{name}: parquet rows vs csv rows");
    row
}

#[test]
fn parquet_tables_carry_the_csv_rows_and_values() {
    let s = Scratch::new("sim-parquet");
    let out = incast(&s.join("a")).unwrap();
    let dir = s.join("a");
    let names: Vec<&str> = FLOWS.iter().map(|(n, ..)| *n).collect();
    assert_eq!(names.join(","), tandem_sim::report::FLOWS_HEADER);
    assert_eq!(same_table(&dir, "flows", FLOWS), 64);
    assert!(
        out.flows.completed > 0 && out.flows.completed < 64,
        "some flows cut short"
    );
    let flows = std::fs::read_to_string(dir.join("flows.csv")).unwrap();
    assert!(
        flows.lines().any(|l| l.contains(",,")),
        "an unfinished flow has empty cells"
    );
    assert!(same_table(&dir, "drops", DROPS) > 0, "the incast drops");
    assert!(same_table(&dir, "queues", QUEUES) > 100, "queue samples");
    for f in ["flows", "drops", "queues"] {
        assert!(!dir.join(format!("{f}.csv.tmp-{}", std::process::id())).exists());
        assert!(!dir.join(format!("{f}.parquet.tmp-{}", std::process::id())).exists());
    }
    // Same scenario and seed: byte-identical Parquet.
    incast(&s.join("b")).unwrap();
    for f in ["flows.parquet", "drops.parquet", "queues.parquet", "flows.csv"] {
        let a = std::fs::read(s.join("a").join(f)).unwrap();
        assert!(
            a == std::fs::read(s.join("b").join(f)).unwrap(),
            "{f} differs between runs"
        );
    }
}

#[test]
fn a_table_that_cannot_be_written_leaves_no_part_of_it() {
    let s = Scratch::new("sim-parquet-fail");
    let dir = s.join("out");
    std::fs::create_dir_all(dir.join("flows.parquet")).unwrap();
    let err = incast(&dir).unwrap_err().to_string();
    assert!(err.contains("flows.parquet"), "{err}");
    assert!(
        !dir.join("flows.csv").exists(),
        "no flows.csv without its flows.parquet"
    );
    assert!(
        !dir.join(format!("flows.csv.tmp-{}", std::process::id())).exists()
            && !dir.join(format!("flows.parquet.tmp-{}", std::process::id())).exists()
    );
}

/// An interrupted run leaves no capture, summary or table in a folder that was already there,
/// and a complete one renames its capture into place.
#[test]
fn captures_appear_only_when_the_run_is_complete() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/incast.toml");
    let sets: Vec<(String, String)> = [("duration", "3ms"), ("output.plots", "false")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let sc = Scenario::load(&file, &sets).unwrap();
    let dir = Scratch::new("outputs-interrupted");
    let stop = std::sync::atomic::AtomicBool::new(true);
    let r = run::run_cancellable(&sc, dir.path(), &mut |_| {}, &stop);
    assert!(matches!(r, Err(run::RunError::Interrupted)));
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "an interrupted run left {left:?}");
    run::run(&sc, dir.path(), &mut |_| {}).unwrap();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n == "switch0-0.pcap"), "{names:?}");
    assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
}
