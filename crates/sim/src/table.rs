//! Typed tables of results and their columnar files: Parquet (Apache Arrow types, Snappy
//! compressed) and CSV from one description, so a table reads the same in pandas, pyarrow,
//! DuckDB or a spreadsheet. Used for `flows.parquet` and friends, and for sweep campaigns.
//!
//! Files are written beside their target and renamed into place: a failure never leaves a
//! half-written table.

use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, TimestampNanosecondArray,
    UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per Parquet row group: what a [`ParquetStream`] holds in memory before writing.
pub const ROW_GROUP_ROWS: usize = 64 * 1024;

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

    /// An empty column of an Arrow type, when a `Column` can hold it.
    fn empty(data_type: &DataType) -> Option<Column> {
        Some(match data_type {
            DataType::UInt64 => Column::UInt64(Vec::new()),
            DataType::Int64 => Column::Int64(Vec::new()),
            DataType::Float64 => Column::Float64(Vec::new()),
            DataType::Utf8 => Column::Utf8(Vec::new()),
            DataType::Boolean => Column::Bool(Vec::new()),
            DataType::Timestamp(TimeUnit::Nanosecond, Some(tz)) if tz.as_ref() == "UTC" => {
                Column::TimestampNs(Vec::new())
            }
            _ => return None,
        })
    }

    /// Appends the values of an Arrow array of the column's type.
    fn extend_from(&mut self, array: &dyn Array) -> Result<(), String> {
        fn take<A: Array + 'static, T>(
            array: &dyn Array,
            out: &mut Vec<Option<T>>,
            value: impl Fn(&A, usize) -> T,
        ) -> Result<(), String> {
            let a = array
                .as_any()
                .downcast_ref::<A>()
                .ok_or_else(|| format!("unexpected array type {}", array.data_type()))?;
            out.extend((0..a.len()).map(|i| (!a.is_null(i)).then(|| value(a, i))));
            Ok(())
        }
        match self {
            Column::UInt64(v) => take(array, v, |a: &UInt64Array, i| a.value(i)),
            Column::Int64(v) => take(array, v, |a: &Int64Array, i| a.value(i)),
            Column::Float64(v) => take(array, v, |a: &Float64Array, i| a.value(i)),
            Column::Utf8(v) => take(array, v, |a: &StringArray, i| a.value(i).to_string()),
            Column::Bool(v) => take(array, v, |a: &BooleanArray, i| a.value(i)),
            Column::TimestampNs(v) => take(array, v, |a: &TimestampNanosecondArray, i| a.value(i)),
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

/// A table could not be built, written or read.
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
    /// Rows written to a [`ParquetStream`] do not have the file's columns.
    Schema(PathBuf, String),
    /// Writing the file failed.
    Io(PathBuf, std::io::Error),
    /// The Arrow or Parquet encoder refused the data.
    Encode(PathBuf, String),
    /// A Parquet file could not be read back (not Parquet, or a column type a [`Column`]
    /// cannot hold).
    Decode(PathBuf, String),
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableError::Length { column, len, rows } => {
                write!(f, "column `{column}` has {len} values, the table has {rows} rows")
            }
            TableError::Duplicate(c) => write!(f, "two columns named `{c}`"),
            TableError::Schema(p, e) => write!(f, "{}: {e}", p.display()),
            TableError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            TableError::Encode(p, e) => write!(f, "{}: {e}", p.display()),
            TableError::Decode(p, e) => write!(f, "{}: {e}", p.display()),
        }
    }
}

impl std::error::Error for TableError {}

/// Named, typed columns of equal length.
///
/// Each column is nullable or not in the Parquet schema: [`Table::push`] makes it nullable
/// when it holds a missing value, [`Table::push_nullable`] always (for a column that may be
/// missing in other runs, so that every file of the kind has the same schema).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    columns: Vec<(String, Column)>,
    nullable: Vec<bool>,
}

impl Table {
    /// An empty table.
    pub fn new() -> Table {
        Table::default()
    }

    /// Adds a column at the right; every column must have as many values as the first. The
    /// column is nullable when it holds a missing value.
    pub fn push(&mut self, name: impl Into<String>, column: Column) -> Result<&mut Table, TableError> {
        let nullable = column.has_nulls();
        self.add(name.into(), column, nullable)
    }

    /// Adds a column at the right, declared nullable whatever its values.
    pub fn push_nullable(&mut self, name: impl Into<String>, column: Column) -> Result<&mut Table, TableError> {
        self.add(name.into(), column, true)
    }

    fn add(&mut self, name: String, column: Column, nullable: bool) -> Result<&mut Table, TableError> {
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
        self.nullable.push(nullable);
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

    /// Whether the column named `name` is nullable in the Parquet schema.
    pub fn is_nullable(&self, name: &str) -> Option<bool> {
        self.columns
            .iter()
            .position(|(n, _)| n == name)
            .map(|i| self.nullable[i])
    }

    /// The Arrow schema of the table's Parquet file.
    pub fn schema(&self) -> SchemaRef {
        let fields: Vec<Field> = self
            .columns
            .iter()
            .zip(&self.nullable)
            .map(|((n, c), &nullable)| Field::new(n, c.data_type(), nullable))
            .collect();
        Arc::new(Schema::new(fields))
    }

    /// The table as one Arrow record batch of `schema` (which must have its columns and types).
    fn batch(&self, schema: SchemaRef) -> Result<RecordBatch, String> {
        if self.columns.is_empty() {
            return Ok(RecordBatch::new_empty(schema));
        }
        let arrays = self.columns.iter().map(|(_, c)| c.array()).collect();
        RecordBatch::try_new(schema, arrays).map_err(|e| e.to_string())
    }

    /// Writes the table as a Parquet file (one row group per [`ROW_GROUP_ROWS`] rows, Snappy).
    pub fn write_parquet(&self, path: &Path) -> Result<(), TableError> {
        let mut out = ParquetStream::create(path, self)?;
        out.write(self)?;
        out.finish()
    }

    /// Reads a Parquet file back as a table: every row group, columns in file order, each
    /// nullable as the file's schema says. Reads files of the types [`Column`] holds (what
    /// [`Table::write_parquet`] and [`ParquetStream`] write); any other column type is an error.
    pub fn read_parquet(path: &Path) -> Result<Table, TableError> {
        let decode = |e: &dyn std::fmt::Display| TableError::Decode(path.to_path_buf(), e.to_string());
        let file = File::open(path).map_err(|e| TableError::Io(path.to_path_buf(), e))?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| decode(&e))?;
        let schema = builder.schema().clone();
        let mut columns: Vec<Column> = schema
            .fields()
            .iter()
            .map(|f| {
                Column::empty(f.data_type())
                    .ok_or_else(|| decode(&format!("column `{}`: {} is not supported", f.name(), f.data_type())))
            })
            .collect::<Result<_, _>>()?;
        for batch in builder.build().map_err(|e| decode(&e))? {
            let batch = batch.map_err(|e| decode(&e))?;
            for (column, array) in columns.iter_mut().zip(batch.columns()) {
                column.extend_from(array.as_ref()).map_err(|e| decode(&e))?;
            }
        }
        let mut table = Table::new();
        for (field, column) in schema.fields().iter().zip(columns) {
            table.add(field.name().clone(), column, field.is_nullable())?;
        }
        Ok(table)
    }

    /// Writes the table as CSV with a header row.
    pub fn write_csv(&self, path: &Path) -> Result<(), TableError> {
        let mut out = AtomicFile::create(path)?;
        self.to_csv(&mut out)
            .map_err(|e| TableError::Io(path.to_path_buf(), e))?;
        out.finish()
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

/// The temporary name an output is written under until it is whole: `NAME.tmp-PID` beside
/// it. Named per process, so that two processes writing the same file (shards of one campaign
/// on a shared folder) never write into one temporary file.
pub fn temp_name(target: &Path) -> PathBuf {
    let mut tmp = target.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    PathBuf::from(tmp)
}

/// A target's [`temp_name`], for a writer that opens the file itself: renamed into place by
/// [`TempPath::commit`], removed when dropped uncommitted (after a failure).
#[derive(Debug)]
pub struct TempPath {
    tmp: PathBuf,
    target: PathBuf,
    done: bool,
}

impl TempPath {
    /// The temporary name for `target` (nothing is created yet).
    pub fn new(target: &Path) -> TempPath {
        TempPath {
            tmp: temp_name(target),
            target: target.to_path_buf(),
            done: false,
        }
    }

    /// Where to write.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Renames the finished file into place.
    pub fn commit(mut self) -> std::io::Result<()> {
        std::fs::rename(&self.tmp, &self.target)?;
        self.done = true;
        Ok(())
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// A file written under a temporary name beside its target (`NAME.tmp-PID`) and renamed into place
/// by [`AtomicFile::finish`]; dropped unfinished (after a failure), the temporary file is
/// removed. Readers never see a half-written file. Writes are buffered.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `path`. Fails at once, naming `path`, when it cannot be created (a
    /// missing folder, no permission, a folder of that name).
    pub fn create(path: &Path) -> Result<AtomicFile, TableError> {
        let io = |e: std::io::Error| TableError::Io(path.to_path_buf(), e);
        if path.is_dir() {
            return Err(io(std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a folder")));
        }
        let tmp = temp_name(path);
        let file = File::create(&tmp).map_err(io)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            file: Some(BufWriter::new(file)),
        })
    }

    /// The file's final name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes the file and renames it into place.
    pub fn finish(mut self) -> Result<(), TableError> {
        let io = |e: std::io::Error| TableError::Io(self.path.clone(), e);
        if let Some(mut file) = self.file.take() {
            file.flush().map_err(io)?;
            drop(file);
            std::fs::rename(&self.tmp, &self.path).map_err(io)?;
        }
        Ok(())
    }

    fn file(&mut self) -> std::io::Result<&mut BufWriter<File>> {
        self.file
            .as_mut()
            .ok_or_else(|| std::io::Error::other("file already finished"))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file()?.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.file()?.write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file()?.flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// A Parquet file written a table of rows at a time, for outputs too long to hold whole:
/// rows are encoded as they come and written out a row group ([`ROW_GROUP_ROWS`] rows) at a
/// time, so memory stays bounded whatever the length of the file. Written through an
/// [`AtomicFile`]: the file appears, whole, only at [`ParquetStream::finish`].
pub struct ParquetStream {
    writer: ArrowWriter<AtomicFile>,
    schema: SchemaRef,
    path: PathBuf,
}

impl std::fmt::Debug for ParquetStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetStream")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl ParquetStream {
    /// Starts writing `path` with the columns of `like` (names, types and nullability; its
    /// rows are not written). Fails at once, naming `path`, when the file cannot be created.
    pub fn create(path: &Path, like: &Table) -> Result<ParquetStream, TableError> {
        let file = AtomicFile::create(path)?;
        let schema = like.schema();
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .build();
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
            .map_err(|e| TableError::Encode(path.to_path_buf(), e.to_string()))?;
        Ok(ParquetStream {
            writer,
            schema,
            path: path.to_path_buf(),
        })
    }

    /// Appends the rows of `rows`, whose columns must be the file's (same names, order and
    /// types; no missing value in a column the file declares not nullable).
    pub fn write(&mut self, rows: &Table) -> Result<(), TableError> {
        let names: Vec<&str> = rows.columns.iter().map(|(n, _)| n.as_str()).collect();
        let want: Vec<&str> = self.schema.fields().iter().map(|f| f.name().as_str()).collect();
        if names != want {
            return Err(TableError::Schema(
                self.path.clone(),
                format!("rows with columns {names:?}, the file has {want:?}"),
            ));
        }
        let encode = |e: String| TableError::Encode(self.path.clone(), e);
        let batch = rows.batch(self.schema.clone()).map_err(encode)?;
        self.writer.write(&batch).map_err(|e| encode(e.to_string()))
    }

    /// Writes the last row group and the footer and renames the file into place.
    pub fn finish(self) -> Result<(), TableError> {
        let file = self
            .writer
            .into_inner()
            .map_err(|e| TableError::Encode(self.path.clone(), e.to_string()))?;
        file.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(!dir.join(&format!("t.parquet.tmp-{}", std::process::id())).exists());
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let dir = tandem_testkit::Scratch::new("table-fail");
        let p = dir.join("missing-dir").join("t.parquet");
        assert!(matches!(sample().write_parquet(&p), Err(TableError::Io(..))));
        assert!(!p.exists());
    }

    #[test]
    fn parquet_reads_back_as_the_same_table() {
        let dir = tandem_testkit::Scratch::new("table-read");
        let p = dir.join("t.parquet");
        let mut t = sample();
        t.push_nullable("maybe", Column::Int64(vec![Some(-3), Some(4)]))
            .unwrap();
        t.write_parquet(&p).unwrap();
        let back = Table::read_parquet(&p).unwrap();
        assert_eq!(back, t);
        assert_eq!(
            back.is_nullable("maybe"),
            Some(true),
            "declared nullable without a null"
        );
        assert_eq!(back.is_nullable("id"), Some(false));
        assert_eq!(back.is_nullable("rate"), Some(true));
    }

    fn counts(from: u64, n: u64) -> Table {
        let mut t = Table::new();
        t.push("i", Column::UInt64((from..from + n).map(Some).collect()))
            .unwrap();
        t.push_nullable(
            "half",
            Column::Float64(
                (from..from + n)
                    .map(|i| (i % 2 == 0).then_some(i as f64 / 2.0))
                    .collect(),
            ),
        )
        .unwrap();
        t
    }

    #[test]
    fn a_stream_writes_row_groups_as_rows_come() {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let dir = tandem_testkit::Scratch::new("table-stream");
        let p = dir.join("s.parquet");
        let mut out = ParquetStream::create(&p, &counts(0, 0)).unwrap();
        let (chunk, chunks) = (10_000u64, 15u64);
        for c in 0..chunks {
            out.write(&counts(c * chunk, chunk)).unwrap();
        }
        assert!(!p.exists(), "nothing in place before finish");
        out.finish().unwrap();
        let groups = SerializedFileReader::new(File::open(&p).unwrap())
            .unwrap()
            .metadata()
            .num_row_groups();
        assert_eq!(groups, (chunk * chunks).div_ceil(ROW_GROUP_ROWS as u64) as usize);
        let back = Table::read_parquet(&p).unwrap();
        assert_eq!(back, counts(0, chunk * chunks));
        assert!(!dir.join(&format!("s.parquet.tmp-{}", std::process::id())).exists());
    }

    #[test]
    fn a_stream_refuses_other_columns_and_vanishes_unfinished() {
        let dir = tandem_testkit::Scratch::new("table-stream-bad");
        let p = dir.join("s.parquet");
        let mut out = ParquetStream::create(&p, &counts(0, 0)).unwrap();
        assert!(matches!(out.write(&sample()), Err(TableError::Schema(..))));
        let mut wrong_type = Table::new();
        wrong_type.push("i", Column::Int64(vec![Some(1)])).unwrap();
        wrong_type.push("half", Column::Float64(vec![None])).unwrap();
        assert!(matches!(out.write(&wrong_type), Err(TableError::Encode(..))));
        let mut null_in_required = Table::new();
        null_in_required.push("i", Column::UInt64(vec![None])).unwrap();
        null_in_required.push("half", Column::Float64(vec![None])).unwrap();
        assert!(matches!(out.write(&null_in_required), Err(TableError::Encode(..))));
        out.write(&counts(0, 10)).unwrap();
        drop(out);
        assert!(!p.exists() && !dir.join(&format!("s.parquet.tmp-{}", std::process::id())).exists());
        let err = ParquetStream::create(dir.path(), &counts(0, 0)).unwrap_err();
        assert!(matches!(err, TableError::Io(..)), "{err}");
        assert!(err.to_string().starts_with(&dir.path().display().to_string()), "{err}");
    }
}
