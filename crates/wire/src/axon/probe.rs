//! Probe packets (thesis §3.2.2): the body of a [`PacketType::Probe`] frame.
//!
//! A probe follows an arbitrary source route, usually a circuit back to the Axon that sent it.
//! When its timestamp option is set, the probe unit of every input and output port on the way
//! appends a record to its tail: which device, which port, input or output, and when (in that
//! device's own clock, so only records of one device compare). Layout:
//!
//! ```text
//! 0 options | 1 record count | 2..6 probe id | then count records of 18 bytes:
//!   0..8 device id | 8 port | 9 point (0 input, 1 output) | 10..18 time in picoseconds
//! ```
//!
//! Bytes after the last record (Ethernet padding) are ignored; [`append_record`] drops them.
//!
//! [`PacketType::Probe`]: super::PacketType::Probe

use crate::field::{read_u32, write_u32};
use crate::{Error, Result};

/// Length of the fixed part (options, count, id).
pub const FIXED_LEN: usize = 6;
/// Length of one record.
pub const RECORD_LEN: usize = 18;
/// The most records a probe can carry.
pub const MAX_RECORDS: usize = 255;
/// Option bit: Axons on the way append timestamps.
pub const OPT_TIMESTAMPS: u8 = 0x01;

/// Where on a device a record was taken; unknown codes are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StampPoint {
    /// 0: the input port's probe unit.
    Input,
    /// 1: the output port's probe unit.
    Output,
    /// Any other code.
    Unknown(u8),
}

impl StampPoint {
    /// Decodes a point code.
    pub fn from_code(c: u8) -> StampPoint {
        match c {
            0 => StampPoint::Input,
            1 => StampPoint::Output,
            c => StampPoint::Unknown(c),
        }
    }
    /// The point code.
    pub fn code(self) -> u8 {
        match self {
            StampPoint::Input => 0,
            StampPoint::Output => 1,
            StampPoint::Unknown(c) => c,
        }
    }
}

/// One timestamp record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProbeRecord {
    /// The device that took it.
    pub device_id: u64,
    /// Its port (0..15; 15 is the control plane).
    pub port: u8,
    /// Input or output.
    pub point: StampPoint,
    /// That device's time in picoseconds.
    pub time_ps: u64,
}

impl ProbeRecord {
    fn read(b: &[u8]) -> ProbeRecord {
        let mut dev = [0u8; 8];
        dev.copy_from_slice(&b[0..8]);
        let mut t = [0u8; 8];
        t.copy_from_slice(&b[10..18]);
        ProbeRecord {
            device_id: u64::from_be_bytes(dev),
            port: b[8],
            point: StampPoint::from_code(b[9]),
            time_ps: u64::from_be_bytes(t),
        }
    }
    fn write(&self, b: &mut [u8]) {
        b[0..8].copy_from_slice(&self.device_id.to_be_bytes());
        b[8] = self.port;
        b[9] = self.point.code();
        b[10..18].copy_from_slice(&self.time_ps.to_be_bytes());
    }
}

/// A zero-copy view of a probe body.
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
    /// Checks that the fixed part and every record the count declares are present.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < FIXED_LEN || b.len() < FIXED_LEN + RECORD_LEN * self.record_count() {
            return Err(Error::Truncated);
        }
        Ok(())
    }
    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// Option bits ([`OPT_TIMESTAMPS`]).
    pub fn options(&self) -> u8 {
        self.buffer.as_ref()[0]
    }
    /// Records carried.
    pub fn record_count(&self) -> usize {
        usize::from(self.buffer.as_ref()[1])
    }
    /// The sender's probe id.
    pub fn probe_id(&self) -> u32 {
        read_u32(self.buffer.as_ref(), 2)
    }
    /// Record `i`, or `None` past the count.
    pub fn record(&self, i: usize) -> Option<ProbeRecord> {
        if i >= self.record_count() {
            return None;
        }
        let at = FIXED_LEN + i * RECORD_LEN;
        self.buffer.as_ref().get(at..at + RECORD_LEN).map(ProbeRecord::read)
    }
}

/// An owned probe body.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProbeRepr {
    /// Option bits.
    pub options: u8,
    /// The sender's probe id.
    pub probe_id: u32,
    /// Records so far, oldest first.
    pub records: Vec<ProbeRecord>,
}

impl ProbeRepr {
    /// Reads a probe body.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<ProbeRepr> {
        p.check_len()?;
        Ok(ProbeRepr {
            options: p.options(),
            probe_id: p.probe_id(),
            records: (0..p.record_count()).filter_map(|i| p.record(i)).collect(),
        })
    }
    /// Bytes this repr emits.
    pub fn buffer_len(&self) -> usize {
        FIXED_LEN + RECORD_LEN * self.records.len()
    }
    /// Writes the body into the start of `buf`. More than [`MAX_RECORDS`] records are refused.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        if self.records.len() > MAX_RECORDS {
            return Err(Error::Malformed("axon probe: too many records"));
        }
        if buf.len() < self.buffer_len() {
            return Err(Error::Truncated);
        }
        buf[0] = self.options;
        buf[1] = self.records.len() as u8;
        write_u32(buf, 2, self.probe_id);
        for (i, r) in self.records.iter().enumerate() {
            let at = FIXED_LEN + i * RECORD_LEN;
            r.write(&mut buf[at..at + RECORD_LEN]);
        }
        Ok(())
    }
}

/// Appends `record` to the probe body that starts at `body_at` in `frame` (what a probe unit
/// does): drops any bytes after the last record, appends, and bumps the count. Fails, changing
/// nothing, when the body is unreadable or already holds [`MAX_RECORDS`] records.
pub fn append_record(frame: &mut Vec<u8>, body_at: usize, record: &ProbeRecord) -> Result<()> {
    let count = {
        let body = frame.get(body_at..).ok_or(Error::Truncated)?;
        Packet::new_checked(body)?.record_count()
    };
    if count >= MAX_RECORDS {
        return Err(Error::Malformed("axon probe: too many records"));
    }
    let end = body_at + FIXED_LEN + count * RECORD_LEN;
    frame.truncate(end);
    frame.resize(end + RECORD_LEN, 0);
    record.write(&mut frame[end..]);
    frame[body_at + 1] = (count + 1) as u8;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_probe_and_append() {
        let r = ProbeRepr {
            options: OPT_TIMESTAMPS,
            probe_id: 7,
            records: vec![],
        };
        let mut frame = vec![0xeeu8; 2]; // a stand-in header
        let at = frame.len();
        frame.resize(at + r.buffer_len(), 0);
        r.emit(&mut frame[at..]).unwrap();
        assert_eq!(&frame[at..], &[1, 0, 0, 0, 0, 7]);
        frame.extend_from_slice(&[0; 10]); // Ethernet padding, dropped by the append
        let rec = ProbeRecord {
            device_id: 0x0a,
            port: 3,
            point: StampPoint::Output,
            time_ps: 520_000,
        };
        append_record(&mut frame, at, &rec).unwrap();
        assert_eq!(frame.len(), at + FIXED_LEN + RECORD_LEN);
        assert_eq!(&frame[at + 6..at + 16], &[0, 0, 0, 0, 0, 0, 0, 0x0a, 3, 1]);
        let p = Packet::new_checked(&frame[at..]).unwrap();
        assert_eq!(p.record(0), Some(rec));
        assert_eq!(p.record(1), None);
        assert_eq!(ProbeRepr::parse(&p).unwrap().records, vec![rec]);
        assert_eq!(append_record(&mut frame, 100, &rec), Err(Error::Truncated));
    }

    #[test]
    fn full_probe_refuses_more() {
        let rec = ProbeRecord {
            device_id: 1,
            port: 0,
            point: StampPoint::Input,
            time_ps: 0,
        };
        let r = ProbeRepr {
            options: OPT_TIMESTAMPS,
            probe_id: 1,
            records: vec![rec; MAX_RECORDS],
        };
        let mut b = vec![0u8; r.buffer_len()];
        r.emit(&mut b).unwrap();
        let before = b.clone();
        assert!(append_record(&mut b, 0, &rec).is_err());
        assert_eq!(b, before);
        assert_eq!(
            Packet::new_checked(&[0u8, 1, 0, 0, 0, 0][..]).unwrap_err(),
            Error::Truncated
        );
    }

    pub(crate) fn any_repr() -> impl Strategy<Value = ProbeRepr> {
        let rec = (any::<u64>(), any::<u8>(), any::<u8>(), any::<u64>()).prop_map(|(d, p, k, t)| ProbeRecord {
            device_id: d,
            port: p,
            point: StampPoint::from_code(k),
            time_ps: t,
        });
        (any::<u8>(), any::<u32>(), proptest::collection::vec(rec, 0..6)).prop_map(|(options, probe_id, records)| {
            ProbeRepr {
                options,
                probe_id,
                records,
            }
        })
    }

    proptest! {
        #[test]
        fn round_trip(r in any_repr()) {
            let mut buf = vec![0u8; r.buffer_len()];
            r.emit(&mut buf).unwrap();
            prop_assert_eq!(ProbeRepr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..64), i in 0usize..8) {
            if let Ok(p) = Packet::new_checked(&data[..]) {
                let _ = (p.options(), p.probe_id(), p.record(i));
                let _ = ProbeRepr::parse(&p);
            }
            let mut frame = data.clone();
            let _ = append_record(&mut frame, i, &ProbeRecord { device_id: 1, port: 1, point: StampPoint::Input, time_ps: 1 });
        }
    }
}
