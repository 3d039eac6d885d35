//! IEEE 802.3x PAUSE and 802.1Qbb priority flow control (PFC) frames: the MAC control payload
//! that follows EtherType 0x8808. A lossless data-center fabric sends these when a buffer fills.
//!
//! Times are in quanta of 512 bit times; [`pause_time_ps`] converts for a given link rate.

use crate::ethernet::MacAddr;
use crate::field::{read_u16, write_u16};
use crate::{Error, Result};

/// The reserved multicast address PAUSE frames are sent to.
pub const PAUSE_DST: MacAddr = MacAddr([0x01, 0x80, 0xc2, 0x00, 0x00, 0x01]);
/// MAC control opcode of PAUSE.
pub const OPCODE_PAUSE: u16 = 0x0001;
/// MAC control opcode of PFC (class-based flow control).
pub const OPCODE_PFC: u16 = 0x0101;
/// MAC control payload length: the 46-byte minimum Ethernet payload (the rest is reserved, zero).
pub const PAYLOAD_LEN: usize = 46;
/// Bit times in one pause quantum.
pub const QUANTUM_BITS: u64 = 512;

/// How long `quanta` pause quanta last on a link of `link_bps` bits per second, in picoseconds.
/// A zero rate gives zero.
pub fn pause_time_ps(quanta: u16, link_bps: u64) -> u64 {
    if link_bps == 0 {
        return 0;
    }
    (u128::from(quanta) * u128::from(QUANTUM_BITS) * 1_000_000_000_000 / u128::from(link_bps)) as u64
}

/// A zero-copy view of a MAC control payload.
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
    /// Checks that the opcode and the fields that opcode uses are present.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < 2 {
            return Err(Error::Truncated);
        }
        let need = if self.opcode() == OPCODE_PFC { 20 } else { 4 };
        if b.len() < need {
            return Err(Error::Truncated);
        }
        Ok(())
    }
    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// MAC control opcode.
    pub fn opcode(&self) -> u16 {
        read_u16(self.buffer.as_ref(), 0)
    }
    /// PAUSE time in quanta (for a PAUSE frame).
    pub fn pause_quanta(&self) -> u16 {
        read_u16(self.buffer.as_ref(), 2)
    }
    /// PFC class-enable vector: bit i set means priority i's time is valid (for a PFC frame).
    pub fn class_enable(&self) -> u8 {
        self.buffer.as_ref()[3]
    }
    /// PFC time of priority `class` (0..8) in quanta (for a PFC frame; 0 for a class past 7 or
    /// a field the buffer does not hold).
    pub fn class_quanta(&self, class: usize) -> u16 {
        let at = 4 + 2 * class;
        match self.buffer.as_ref().get(at..at + 2) {
            Some(&[a, b]) if class < 8 => u16::from_be_bytes([a, b]),
            _ => 0,
        }
    }
}

/// An owned MAC control frame payload of the two kinds Tandem models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PauseRepr {
    /// 802.3x PAUSE: stop all traffic for this many quanta (0 resumes at once).
    Pause {
        /// Pause time in quanta.
        quanta: u16,
    },
    /// 802.1Qbb PFC: stop the enabled priorities, each for its own time.
    Pfc {
        /// Class-enable vector.
        class_enable: u8,
        /// Per-priority time in quanta (priority 0 first).
        quanta: [u16; 8],
    },
}

impl PauseRepr {
    /// Reads a PAUSE or PFC payload. PFC's reserved high byte of the enable vector must be zero.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<PauseRepr> {
        p.check_len()?;
        match p.opcode() {
            OPCODE_PAUSE => Ok(PauseRepr::Pause {
                quanta: p.pause_quanta(),
            }),
            OPCODE_PFC => {
                if p.buffer.as_ref()[2] != 0 {
                    return Err(Error::Malformed("pfc class-enable vector reserved byte"));
                }
                let mut quanta = [0u16; 8];
                for (i, q) in quanta.iter_mut().enumerate() {
                    *q = p.class_quanta(i);
                }
                Ok(PauseRepr::Pfc {
                    class_enable: p.class_enable(),
                    quanta,
                })
            }
            _ => Err(Error::Unsupported("mac control opcode")),
        }
    }

    /// Bytes this repr emits (46, the minimum Ethernet payload).
    pub fn buffer_len(&self) -> usize {
        PAYLOAD_LEN
    }

    /// Writes the payload into the start of `buf`, zeroing the reserved bytes.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        if buf.len() < PAYLOAD_LEN {
            return Err(Error::Truncated);
        }
        let buf = &mut buf[..PAYLOAD_LEN];
        buf.fill(0);
        match *self {
            PauseRepr::Pause { quanta } => {
                write_u16(buf, 0, OPCODE_PAUSE);
                write_u16(buf, 2, quanta);
            }
            PauseRepr::Pfc { class_enable, quanta } => {
                write_u16(buf, 0, OPCODE_PFC);
                buf[3] = class_enable;
                for (i, q) in quanta.iter().enumerate() {
                    write_u16(buf, 4 + 2 * i, *q);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_pause_and_pfc() {
        let mut b = [0u8; 46];
        b[..4].copy_from_slice(&[0x00, 0x01, 0xff, 0xff]);
        let r = PauseRepr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
        assert_eq!(r, PauseRepr::Pause { quanta: 0xffff });
        let mut out = [0xaau8; 46];
        r.emit(&mut out).unwrap();
        assert_eq!(out, b);

        let mut b = [0u8; 46];
        b[..8].copy_from_slice(&[0x01, 0x01, 0x00, 0x08, 0, 0, 0, 0]);
        b[10..12].copy_from_slice(&[0x12, 0x34]); // priority 3
        let r = PauseRepr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
        assert_eq!(
            r,
            PauseRepr::Pfc {
                class_enable: 0x08,
                quanta: [0, 0, 0, 0x1234, 0, 0, 0, 0]
            }
        );
    }

    #[test]
    fn errors() {
        assert_eq!(Packet::new_checked(&[0u8, 1, 0][..]).unwrap_err(), Error::Truncated);
        assert_eq!(
            Packet::new_checked(&[1u8, 1, 0, 0, 0][..]).unwrap_err(),
            Error::Truncated
        );
        let b = [0u8, 2, 0, 0];
        assert!(matches!(
            PauseRepr::parse(&Packet::new_checked(&b[..]).unwrap()),
            Err(Error::Unsupported(_))
        ));
    }

    #[test]
    fn quanta_to_time() {
        // One quantum is 512 bit times: 51.2 ns at 10 Gb/s, 5.12 ns at 100 Gb/s.
        assert_eq!(pause_time_ps(1, 10_000_000_000), 51_200);
        assert_eq!(pause_time_ps(0xffff, 100_000_000_000), 335_539_200);
        assert_eq!(pause_time_ps(5, 0), 0);
    }

    pub(crate) fn any_repr() -> impl Strategy<Value = PauseRepr> {
        prop_oneof![
            any::<u16>().prop_map(|quanta| PauseRepr::Pause { quanta }),
            (any::<u8>(), any::<[u16; 8]>()).prop_map(|(class_enable, quanta)| PauseRepr::Pfc { class_enable, quanta }),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(r in any_repr()) {
            let mut buf = vec![0x5au8; r.buffer_len()];
            r.emit(&mut buf).unwrap();
            prop_assert_eq!(PauseRepr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..48), class in 0usize..12) {
            if let Ok(p) = Packet::new_checked(&data[..]) {
                let _ = (p.pause_quanta(), p.class_enable(), p.class_quanta(class));
                let _ = PauseRepr::parse(&p);
            }
        }
    }
}
