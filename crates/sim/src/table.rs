//! Typed tables of results and their columnar files: Parquet (Apache Arrow types, Snappy
//! compressed) and CSV from one description, so a table reads the same in pandas, pyarrow,
//! DuckDB or a spreadsheet. Used for `flows.parquet` and friends, and for sweep campaigns.
//!
//! Files are written beside their target and renamed into place: a failure never leaves a
//! half-written table.

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, TimestampNanosecondArray, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One column's values; `None` is a missing value (null in Parquet, an empty CSV cell).
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// Unsigned counts, sizes and picosecond times.
    UInt64(Vec<Option<u64>>),
    /// Signed integers.
    Int64(Vec<Option<i64>>),
    /// Rates, ratios and statistics.
    Float64(Vec<Option<f64>>),
    /// Names, addresses and labels.
    Utf8(Vec<Option<String>>),
    /// Yes/no flags.
    Bool(Vec<Option<bool>>),
    /// Wall-clock instants in nanoseconds since the Unix epoch, UTC (e.g. capture times).
    TimestampNs(Vec<Option<i64>>),
}

impl Column {
    /// Values in the column.
    pub fn len(&self) -> usize {
        match self {
            Column::UInt64(v) => v.len(),
            Column::Int64(v) => v.len(),
            Column::Float64(v) => v.len(),
            Column::Utf8(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::TimestampNs(v) => v.len(),
        }
    }

    /// True when the column holds no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn data_type(&self) -> DataType {
        match self {
            Column::UInt64(_) => DataType::UInt64,
            Column::Int64(_) => DataType::Int64,
            Column::Float64(_) => DataType::Float64,
            Column::Utf8(_) => DataType::Utf8,
            Column::Bool(_) => DataType::Boolean,
            Column::TimestampNs(_) => DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        }
    }

    fn has_nulls(&self) -> bool {
        match self {
            Column::UInt64(v) => v.iter().any(Option::is_none),
            Column::Int64(v) | Column::TimestampNs(v) => v.iter().any(Option::is_none),
            Column::Float64(v) => v.iter().any(Option::is_none),
            Column::Utf8(v) => v.iter().any(Option::is_none),
            Column::Bool(v) => v.iter().any(Option::is_none),
        }
    }

    fn array(&self) -> ArrayRef {
        match self {
            Column::UInt64(v) => Arc::new(UInt64Array::from(v.clone())),
            Column::Int64(v) => Arc::new(Int64Array::from(v.clone())),
            Column::Float64(v) => Arc::new(Float64Array::from(v.clone())),
            Column::Utf8(v) => Arc::new(StringArray::from(v.clone())),
            Column::Bool(v) => Arc::new(BooleanArray::from(v.clone())),
            Column::TimestampNs(v) => Arc::new(TimestampNanosecondArray::from(v.clone()).with_timezone("UTC")),
        }
    }

    /// The CSV cell of row `i` (empty when missing). Floats use Rust's shortest round-trip
    /// form; timestamps are written as integer nanoseconds since the epoch.
    fn cell(&self, i: usize) -> String {
        fn opt<T: ToString>(v: &Option<T>) -> String {
            v.as_ref().map(T::to_string).unwrap_or_default()
        }
        match self {
            Column::UInt64(v) => opt(&v[i]),
            Column::Int64(v) | Column::TimestampNs(v) => opt(&v[i]),
            Column::Float64(v) => opt(&v[i]),
            Column::Utf8(v) => v[i].clone().unwrap_or_default(),
            Column::Bool(v) => opt(&v[i]),
        }
    }
}

/// A table could not be built or written.
#[derive(Debug)]
pub enum TableError {
    /// A column's length differs from the table's.
    Length {
        /// The column.
        column: String,
        /// Its length.
        len: usize,
        /// The table's length.
        rows: usize,
    },
    /// Two columns have the same name.
    Duplicate(String),
    /// Writing the file failed.
    Io(PathBuf, std::io::Error),
    /// The Arrow or Parquet encoder refused the data.
    Encode(PathBuf, String),
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableError::Length { column, len, rows } => {
                write!(f, "column `{column}` has {len} values, the table has {rows} rows")
            }
            TableError::Duplicate(c) => write!(f, "two columns named `{c}`"),
            TableError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            TableError::Encode(p, e) => write!(f, "{}: {e}", p.display()),
        }
    }
}

impl std::error::Error for TableError {}

/// Named, typed columns of equal length.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    columns: Vec<(String, Column)>,
}

impl Table {
    /// An empty table.
    pub fn new() -> Table {
        Table::default()
    }

    /// Adds a column at the right; every column must have as many values as the first.
    pub fn push(&mut self, name: impl Into<String>, column: Column) -> Result<&mut Table, TableError> {
        let name = name.into();
        if self.columns.iter().any(|(n, _)| *n == name) {
            return Err(TableError::Duplicate(name));
        }
        if let Some((_, first)) = self.columns.first() {
            if first.len() != column.len() {
                return Err(TableError::Length {
                    column: name,
                    len: column.len(),
                    rows: first.len(),
                });
            }
        }
        self.columns.push((name, column));
        Ok(self)
    }

    /// Rows in the table.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }

    /// The columns, left to right.
    pub fn columns(&self) -> &[(String, Column)] {
        &self.columns
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    fn batch(&self) -> Result<RecordBatch, String> {
        let fields: Vec<Field> = self
            .columns
            .iter()
            .map(|(n, c)| Field::new(n, c.data_type(), c.has_nulls()))
            .collect();
        let schema = Arc::new(Schema::new(fields));
        if self.columns.is_empty() {
            return Ok(RecordBatch::new_empty(schema));
        }
        let arrays = self.columns.iter().map(|(_, c)| c.array()).collect();
        RecordBatch::try_new(schema, arrays).map_err(|e| e.to_string())
    }

    /// Writes the table as a Parquet file (one row group per 64 Ki rows, Snappy).
    pub fn write_parquet(&self, path: &Path) -> Result<(), TableError> {
        let batch = self.batch().map_err(|e| TableError::Encode(path.to_path_buf(), e))?;
        atomic_write(path, |w| {
            let props = WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .set_max_row_group_row_count(Some(64 * 1024))
                .build();
            let mut writer = ArrowWriter::try_new(w, batch.schema(), Some(props)).map_err(|e| e.to_string())?;
            writer.write(&batch).map_err(|e| e.to_string())?;
            writer.close().map_err(|e| e.to_string())?;
            Ok(())
        })
    }

    /// Writes the table as CSV with a header row.
    pub fn write_csv(&self, path: &Path) -> Result<(), TableError> {
        atomic_write(path, |w| {
            let mut out = std::io::BufWriter::new(w);
            self.to_csv(&mut out).map_err(|e| e.to_string())?;
            out.flush().map_err(|e| e.to_string())
        })
    }

    /// The table as CSV with a header row (cells quoted where they hold commas or quotes).
    pub fn to_csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let header: Vec<String> = self.columns.iter().map(|(n, _)| quote(n)).collect();
        writeln!(out, "{}", header.join(","))?;
        for i in 0..self.rows() {
            let cells: Vec<String> = self.columns.iter().map(|(_, c)| quote(&c.cell(i))).collect();
            writeln!(out, "{}", cells.join(","))?;
        }
        Ok(())
    }
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes `path` through a temporary file beside it, renamed into place only when `write`
/// succeeded; the temporary file is removed on failure.
fn atomic_write(path: &Path, write: impl FnOnce(std::fs::File) -> Result<(), String>) -> Result<(), TableError> {
    // Named per process, so that two processes writing the same table (shards of one
    // campaign on a shared folder) never write into one temporary file.
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let io = |e: std::io::Error| TableError::Io(path.to_path_buf(), e);
    let file = std::fs::File::create(&tmp).map_err(io)?;
    let done = write(file)
        .map_err(|e| TableError::Encode(path.to_path_buf(), e))
        .and_then(|()| std::fs::rename(&tmp, path).map_err(io));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

    fn sample() -> Table {
        let mut t = Table::new();
        t.push("id", Column::UInt64(vec![Some(1), Some(2)])).unwrap();
        t.push("rate", Column::Float64(vec![Some(0.5), None])).unwrap();
        t.push("name", Column::Utf8(vec![Some("a,b".into()), Some("c".into())]))
            .unwrap();
        t.push("ok", Column::Bool(vec![Some(true), Some(false)])).unwrap();
        t.push("ts", Column::TimestampNs(vec![Some(1_000), Some(2_000)]))
            .unwrap();
        t
    }

    #[test]
    fn csv_has_header_quotes_and_empty_nulls() {
        let mut out = Vec::new();
        sample().to_csv(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "id,rate,name,ok,ts\n1,0.5,\"a,b\",true,1000\n2,,c,false,2000\n"
        );
    }

    #[test]
    fn refuses_ragged_and_duplicate_columns() {
        let mut t = sample();
        assert!(matches!(
            t.push("x", Column::Int64(vec![Some(1)])),
            Err(TableError::Length { .. })
        ));
        assert!(matches!(
            t.push("id", Column::Int64(vec![None, None])),
            Err(TableError::Duplicate(_))
        ));
    }

    #[test]
    fn parquet_round_trips_types_and_values() {
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        let dir = tandem_testkit::Scratch::new("table");
        let p = dir.join("t.parquet");
        sample().write_parquet(&p).unwrap();
        let again = std::fs::read(&p).unwrap();
        sample().write_parquet(&p).unwrap();
        assert_eq!(again, std::fs::read(&p).unwrap(), "same table, same bytes");
        let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&p).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
        let b = &batches[0];
        assert_eq!(b.num_rows(), 2);
        let schema = b.schema();
        assert_eq!(schema.field(0).data_type(), &DataType::UInt64);
        assert!(!schema.field(0).is_nullable());
        assert!(schema.field(1).is_nullable());
        assert_eq!(
            schema.field(4).data_type(),
            &DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
        );
        let rate = b.column(1).as_any().downcast_ref::<Float64Array>().unwrap();
        assert_eq!(rate.value(0), 0.5);
        assert!(rate.is_null(1));
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "only the table is left"
        );
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let dir = tandem_testkit::Scratch::new("table-fail");
        let p = dir.join("missing-dir").join("t.parquet");
        assert!(matches!(sample().write_parquet(&p), Err(TableError::Io(..))));
        assert!(!p.exists());
    }
}
