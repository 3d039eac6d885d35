//! The error type shared by every parser in this crate.

use core::fmt;

/// Why a buffer could not be read as the format asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    /// The buffer is shorter than the format (or a length field inside it) requires.
    Truncated,
    /// A field holds a value the format forbids; the text names the field.
    Malformed(&'static str),
    /// A checksum did not verify.
    Checksum,
    /// Well-formed, but a variant this crate does not model; the text says which.
    Unsupported(&'static str),
}

/// Result with this crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated => f.write_str("truncated packet"),
            Error::Malformed(what) => write!(f, "malformed packet: {what}"),
            Error::Checksum => f.write_str("checksum mismatch"),
            Error::Unsupported(what) => write!(f, "unsupported: {what}"),
        }
    }
}

impl std::error::Error for Error {}
