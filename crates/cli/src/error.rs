//! How the CLI reports failure: one line, and exit code 2 for bad input.

use std::fmt;
use std::path::Path;

/// A failure the CLI reports and exits on.
#[derive(Debug)]
pub enum CliError {
    /// The user's input is wrong (a file that is not a trace, a bad value): exit code 2.
    Input(String),
    /// Something failed while running (disk full, broken pipe): exit code 1.
    Runtime(String),
}

impl CliError {
    /// Bad input in `path`.
    pub fn input(path: &Path, msg: impl fmt::Display) -> CliError {
        CliError::Input(format!("{}: {msg}", path.display()))
    }
    /// A run-time failure on `path`.
    pub fn runtime(path: &Path, msg: impl fmt::Display) -> CliError {
        CliError::Runtime(format!("{}: {msg}", path.display()))
    }
    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Input(_) => 2,
            CliError::Runtime(_) => 1,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Input(m) | CliError::Runtime(m) => f.write_str(m),
        }
    }
}
