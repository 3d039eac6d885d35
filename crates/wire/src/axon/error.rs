//! Error reports: the body of a [`PacketType::Error`] frame.
//!
//! A data plane that cannot forward a frame (no forward hop left, a non-Ethernet frame bound for
//! a host port, a hop naming a port the device lacks) turns it into an error report for its
//! control plane (thesis §3.2.1). The header keeps the reverse path (so the control plane can
//! answer the source) and the body is two bytes, `code` and the frame's original type, followed
//! by the original payload unchanged.
//!
//! [`PacketType::Error`]: super::PacketType::Error

use super::PacketType;
use crate::{Error, Result};

/// Length of the error body's fixed part (code, original type).
pub const FIXED_LEN: usize = 2;

/// Why a data plane reported an error; unknown codes are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 1: the frame had no forward hop left.
    NoForwardHop,
    /// 2: the next hop was a host port but the frame does not carry Ethernet.
    WrongType,
    /// 3: the next hop names a port the device does not have.
    NoSuchPort,
    /// 4: the reverse path could not take another hop.
    ReversePathFull,
    /// Any other code.
    Unknown(u8),
}

impl ErrorCode {
    /// Decodes an error code.
    pub fn from_code(c: u8) -> ErrorCode {
        match c {
            1 => ErrorCode::NoForwardHop,
            2 => ErrorCode::WrongType,
            3 => ErrorCode::NoSuchPort,
            4 => ErrorCode::ReversePathFull,
            c => ErrorCode::Unknown(c),
        }
    }
    /// The error code.
    pub fn code(self) -> u8 {
        match self {
            ErrorCode::NoForwardHop => 1,
            ErrorCode::WrongType => 2,
            ErrorCode::NoSuchPort => 3,
            ErrorCode::ReversePathFull => 4,
            ErrorCode::Unknown(c) => c,
        }
    }
}

/// A zero-copy view of an error body.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it.
    pub fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }
    /// Wraps a buffer and runs [`Packet::check_len`].
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    /// Checks that the code and the original type are present.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < FIXED_LEN {
            return Err(Error::Truncated);
        }
        Ok(())
    }
    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// Why the frame was reported.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::from_code(self.buffer.as_ref()[0])
    }
    /// The frame's type before it became an error report.
    pub fn original_type(&self) -> PacketType {
        PacketType::from_code(self.buffer.as_ref()[1])
    }
    /// The original payload.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[FIXED_LEN..]
    }
}

/// An owned error body (its fixed part; the original payload follows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorRepr {
    /// Why the frame was reported.
    pub code: ErrorCode,
    /// The frame's type before it became an error report.
    pub original_type: PacketType,
}

impl ErrorRepr {
    /// Reads the fixed part of an error body.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<ErrorRepr> {
        p.check_len()?;
        Ok(ErrorRepr {
            code: p.code(),
            original_type: p.original_type(),
        })
    }
    /// Bytes this repr emits (2).
    pub fn buffer_len(&self) -> usize {
        FIXED_LEN
    }
    /// Writes the fixed part into the start of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        if buf.len() < FIXED_LEN {
            return Err(Error::Truncated);
        }
        buf[0] = self.code.code();
        buf[1] = self.original_type.code();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_error() {
        let b = [2u8, 0x06, 0xaa];
        let p = Packet::new_checked(&b[..]).unwrap();
        let r = ErrorRepr::parse(&p).unwrap();
        assert_eq!(
            r,
            ErrorRepr {
                code: ErrorCode::WrongType,
                original_type: PacketType::Control
            }
        );
        assert_eq!(p.payload(), &[0xaa]);
        let mut out = [0u8; 2];
        r.emit(&mut out).unwrap();
        assert_eq!(out, [2, 6]);
        assert_eq!(Packet::new_checked(&[1u8][..]).unwrap_err(), Error::Truncated);
    }

    proptest! {
        #[test]
        fn round_trip(code in any::<u8>(), t in any::<u8>()) {
            let r = ErrorRepr { code: ErrorCode::from_code(code), original_type: PacketType::from_code(t) };
            let mut buf = [0u8; 2];
            r.emit(&mut buf).unwrap();
            prop_assert_eq!(ErrorRepr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
    }
}
