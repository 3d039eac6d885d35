//! A standard store-and-forward Ethernet learning switch, for contrast: a frame is received
//! whole, then after a fixed processing latency it is learned (source MAC -> input port) and
//! forwarded to the learned port of its destination, or flooded to every forwarding port but its
//! input when the destination is unknown or broadcast. Each output port has one FIFO queue of a
//! bounded size; a frame that does not fit is dropped and counted. Ports blocked by the spanning
//! tree neither receive nor send.

use std::collections::{HashMap, VecDeque};
use tandem_wire::pause::PAUSE_DST;
use tandem_wire::MacAddr;

/// Switch parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchParams {
    /// Bytes each output queue holds (128 KiB by default).
    pub queue_bytes: usize,
    /// Processing latency after the last byte is received, before the frame can be queued.
    pub latency_ps: u64,
}

/// One output port.
#[derive(Debug, Clone, Default)]
pub struct SwitchPort {
    /// Frames waiting.
    pub queue: VecDeque<Vec<u8>>,
    /// Bytes waiting.
    pub bytes: usize,
    /// A frame is being sent.
    pub busy: bool,
    /// Blocked by the spanning tree.
    pub blocked: bool,
}

/// A learning switch.
#[derive(Debug, Clone)]
pub struct EthSwitch {
    /// Parameters.
    pub params: SwitchParams,
    /// Ports.
    pub ports: Vec<SwitchPort>,
    table: HashMap<MacAddr, u8>,
    /// Frames dropped because an output queue was full.
    pub drops: u64,
}

impl EthSwitch {
    /// A switch with `blocked.len()` ports, blocked as given.
    pub fn new(params: SwitchParams, blocked: &[bool]) -> EthSwitch {
        EthSwitch {
            params,
            ports: blocked
                .iter()
                .map(|&b| SwitchPort {
                    blocked: b,
                    ..SwitchPort::default()
                })
                .collect(),
            table: HashMap::new(),
            drops: 0,
        }
    }

    /// A frame finished processing after arriving on `port`: learns and queues it; returns the
    /// output ports it was queued on (ascending).
    pub fn forward(&mut self, port: u8, frame: &[u8]) -> Vec<u8> {
        if frame.len() < 14 || self.ports.get(usize::from(port)).is_none_or(|p| p.blocked) {
            return Vec::new();
        }
        let mut dst = [0u8; 6];
        dst.copy_from_slice(&frame[0..6]);
        let mut src = [0u8; 6];
        src.copy_from_slice(&frame[6..12]);
        let (dst, src) = (MacAddr(dst), MacAddr(src));
        if dst == PAUSE_DST {
            return Vec::new();
        }
        if !src.is_multicast() {
            self.table.insert(src, port);
        }
        let outs: Vec<u8> = match self.table.get(&dst) {
            Some(&p) if !dst.is_multicast() => {
                if p == port {
                    Vec::new()
                } else {
                    vec![p]
                }
            }
            _ => (0..self.ports.len() as u8)
                .filter(|&p| p != port && !self.ports[usize::from(p)].blocked)
                .collect(),
        };
        let mut queued = Vec::new();
        for o in outs {
            let q = &mut self.ports[usize::from(o)];
            if q.bytes + frame.len() > self.params.queue_bytes {
                self.drops += 1;
                continue;
            }
            q.bytes += frame.len();
            q.queue.push_back(frame.to_vec());
            queued.push(o);
        }
        queued
    }

    /// The next frame to send on an idle port (marks it busy).
    pub fn next(&mut self, port: u8) -> Option<Vec<u8>> {
        let p = self.ports.get_mut(usize::from(port))?;
        if p.busy {
            return None;
        }
        let f = p.queue.pop_front()?;
        p.bytes -= f.len();
        p.busy = true;
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_floods_and_drops() {
        let params = SwitchParams {
            queue_bytes: 200,
            latency_ps: 0,
        };
        let mut s = EthSwitch::new(params, &[false, false, true]);
        let mut f = vec![0u8; 100];
        f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        assert_eq!(s.forward(0, &f), vec![1]); // flooded, port 2 blocked
        let mut back = vec![0u8; 100];
        back[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        back[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        assert_eq!(s.forward(1, &back), vec![0]); // learned
        assert_eq!(s.forward(0, &f), vec![1]);
        assert_eq!(s.forward(0, &f), Vec::<u8>::new()); // queue full
        assert_eq!(s.drops, 1);
        assert!(s.next(1).is_some());
        assert!(s.next(1).is_none()); // busy
    }
}
