//! Standard output for every command, with one rule for a closed pipe.
//!
//! `tandem sim check x.toml | head -2` closes the pipe while `tandem` still writes, and
//! `println!` would panic there. Everything the commands print goes through [`out!`] and
//! [`outln!`] instead: once the reader has gone, the rest of the output is dropped quietly and
//! the command finishes its work and exits as it would have (its files are written whole
//! either way), as `of decode` and `pcap flows` already did. Any other write error (a full
//! disk behind a redirection) is reported once on standard error and makes the command exit 1
//! ([`failed`]).
//!
//! [`out!`]: crate::out
//! [`outln!`]: crate::outln

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicU8, Ordering};

const OPEN: u8 = 0;
const CLOSED: u8 = 1;
const FAILED: u8 = 2;

/// Whether standard output still takes writes (one process, one standard output).
static STATE: AtomicU8 = AtomicU8::new(OPEN);

/// Writes formatted text to standard output under the rule above (use [`out!`] and
/// [`outln!`]).
///
/// [`out!`]: crate::out
/// [`outln!`]: crate::outln
pub fn write(args: fmt::Arguments<'_>) {
    if STATE.load(Ordering::Relaxed) != OPEN {
        return;
    }
    if let Err(e) = io::stdout().lock().write_fmt(args) {
        record(&e);
    }
}

fn record(e: &io::Error) {
    if e.kind() == io::ErrorKind::BrokenPipe {
        STATE.store(CLOSED, Ordering::Relaxed);
    } else if STATE.swap(FAILED, Ordering::Relaxed) != FAILED {
        eprintln!("tandem: cannot write to standard output: {e}");
    }
}

/// Flushes standard output at the end of a command (a write error there counts as above).
pub fn finish() {
    if STATE.load(Ordering::Relaxed) == OPEN {
        if let Err(e) = io::stdout().lock().flush() {
            record(&e);
        }
    }
}

/// True when writing standard output failed for a reason other than a closed pipe: the
/// command must then exit 1.
pub fn failed() -> bool {
    STATE.load(Ordering::Relaxed) == FAILED
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_quiet_other_errors_fail() {
        record(&io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(!failed());
        assert_eq!(STATE.load(Ordering::Relaxed), CLOSED);
        // Nothing more is written once the reader has gone.
        write(format_args!("dropped"));
        STATE.store(OPEN, Ordering::Relaxed);
        record(&io::Error::other("disk full"));
        assert!(failed());
        STATE.store(OPEN, Ordering::Relaxed);
    }
}
