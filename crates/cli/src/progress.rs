//! Progress on long files: a byte-counting reader and a bar on standard error (hidden when
//! standard error is not a terminal, or with `--quiet`).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;

/// A reader that counts the bytes it has handed out.
pub struct CountingReader<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R: Read> CountingReader<R> {
    /// Wraps `inner`; the returned cell follows the byte count.
    pub fn new(inner: R) -> (Self, Rc<Cell<u64>>) {
        let count = Rc::new(Cell::new(0));
        (
            CountingReader {
                inner,
                count: count.clone(),
            },
            count,
        )
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

/// A progress bar over a file of known size.
pub struct Progress {
    bar: ProgressBar,
    read: Rc<Cell<u64>>,
}

impl Progress {
    /// A bar for `total` bytes following `read`; hidden when `quiet`.
    pub fn new(total: u64, read: Rc<Cell<u64>>, quiet: bool) -> Progress {
        let bar = ProgressBar::with_draw_target(
            Some(total),
            if quiet {
                ProgressDrawTarget::hidden()
            } else {
                ProgressDrawTarget::stderr()
            },
        );
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}, {eta}) {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Progress { bar, read }
    }

    /// Updates the bar; call every few thousand packets.
    pub fn tick(&self, packets: u64) {
        self.bar.set_position(self.read.get());
        self.bar.set_message(format!("{packets} packets"));
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
