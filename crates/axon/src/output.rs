//! Output ports (§3.2.1): one bounded buffer per input port (and one for the control plane),
//! served round robin, plus a small queue for MAC control frames (PAUSE, hellos) that goes first.

use std::collections::VecDeque;

/// A frame waiting in an output buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    /// The bytes to send, ready for the wire.
    pub frame: Vec<u8>,
    /// The earliest time its first byte may leave (from the timing model).
    pub ready_ps: u64,
    /// Offset of a probe body to stamp at the output, if it is a timestamping probe.
    pub probe_body_at: Option<usize>,
}

/// One output port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputPort {
    buffers: Vec<VecDeque<Queued>>,
    bytes: Vec<usize>,
    capacity: usize,
    next: usize,
    mac_control: VecDeque<Vec<u8>>,
    /// A frame handed to the driver has not been reported sent yet.
    pub busy: bool,
}

impl OutputPort {
    /// An idle port with `inputs` buffers of `capacity` bytes each.
    pub fn new(inputs: usize, capacity: usize) -> OutputPort {
        OutputPort {
            buffers: vec![VecDeque::new(); inputs],
            bytes: vec![0; inputs],
            capacity,
            next: 0,
            mac_control: VecDeque::new(),
            busy: false,
        }
    }

    /// Appends a frame to input `input`'s buffer; gives it back when the buffer has no room.
    pub fn enqueue(&mut self, input: usize, q: Queued) -> Result<(), Queued> {
        let Some(buf) = self.buffers.get_mut(input) else {
            return Err(q);
        };
        if self.bytes[input] + q.frame.len() > self.capacity {
            return Err(q);
        }
        self.bytes[input] += q.frame.len();
        buf.push_back(q);
        Ok(())
    }

    /// Queues a MAC control frame (sent before any buffered frame).
    pub fn push_mac_control(&mut self, frame: Vec<u8>) {
        self.mac_control.push_back(frame);
    }

    /// The next frame to send at `now`: a MAC control frame if any (ready at once), else, in
    /// round-robin order from the input after the last one served, the first buffer whose head is
    /// ready; if none is ready yet, the head that will be ready first.
    pub fn next(&mut self, now: u64) -> Option<Queued> {
        if let Some(frame) = self.mac_control.pop_front() {
            return Some(Queued {
                frame,
                ready_ps: now,
                probe_body_at: None,
            });
        }
        let n = self.buffers.len();
        let order = (0..n).map(|k| (self.next + k) % n);
        let mut pick: Option<(usize, u64)> = None;
        for i in order {
            let Some(head) = self.buffers[i].front() else {
                continue;
            };
            if head.ready_ps <= now {
                pick = Some((i, head.ready_ps));
                break;
            }
            if pick.is_none_or(|(_, r)| head.ready_ps < r) {
                pick = Some((i, head.ready_ps));
            }
        }
        let (i, _) = pick?;
        self.next = (i + 1) % n;
        let q = self.buffers[i].pop_front()?;
        self.bytes[i] -= q.frame.len();
        Some(q)
    }

    /// Empties every buffer (the link went down); returns the frames dropped.
    pub fn flush(&mut self) -> Vec<Queued> {
        self.mac_control.clear();
        self.bytes.iter_mut().for_each(|b| *b = 0);
        self.buffers.iter_mut().flat_map(|b| b.drain(..)).collect()
    }

    /// Bytes buffered from input `input`.
    pub fn buffered_bytes(&self, input: usize) -> usize {
        self.bytes.get(input).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(tag: u8, len: usize, ready_ps: u64) -> Queued {
        Queued {
            frame: vec![tag; len],
            ready_ps,
            probe_body_at: None,
        }
    }

    #[test]
    fn round_robin_across_inputs() {
        let mut o = OutputPort::new(3, 1000);
        for _ in 0..3 {
            o.enqueue(0, q(0, 100, 0)).unwrap();
        }
        o.enqueue(2, q(2, 100, 0)).unwrap();
        o.enqueue(2, q(2, 100, 0)).unwrap();
        let order: Vec<u8> = std::iter::from_fn(|| o.next(10)).map(|q| q.frame[0]).collect();
        assert_eq!(order, [0, 2, 0, 2, 0]);
    }

    #[test]
    fn bounded_buffers_and_mac_control_first() {
        let mut o = OutputPort::new(2, 250);
        o.enqueue(0, q(0, 100, 0)).unwrap();
        o.enqueue(0, q(0, 100, 0)).unwrap();
        assert!(o.enqueue(0, q(0, 100, 0)).is_err());
        assert!(o.enqueue(5, q(0, 1, 0)).is_err());
        assert_eq!(o.buffered_bytes(0), 200);
        o.enqueue(1, q(1, 100, 0)).unwrap();
        o.push_mac_control(vec![9; 60]);
        assert_eq!(o.next(0).unwrap().frame[0], 9);
        // Nothing ready at time 0 except what is: the not-yet-ready head waits its turn.
        o.enqueue(1, q(1, 100, 50)).unwrap();
        assert_eq!(o.flush().len(), 4);
        assert_eq!(o.buffered_bytes(0), 0);
        assert!(o.next(0).is_none());
    }

    #[test]
    fn earliest_ready_when_none_is_ready() {
        let mut o = OutputPort::new(2, 1000);
        o.enqueue(0, q(0, 10, 500)).unwrap();
        o.enqueue(1, q(1, 10, 300)).unwrap();
        assert_eq!(o.next(100).unwrap().frame[0], 1);
        assert_eq!(o.next(100).unwrap().frame[0], 0);
    }
}
