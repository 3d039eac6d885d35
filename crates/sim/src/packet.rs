//! The simulated packet: a fixed-size header record, copied by value, never a byte buffer.
//!
//! The engine keeps packets in a [`PacketPool`] and moves 32-bit [`PacketId`]s through its
//! queues and events, so the hot path allocates nothing. A [`Packet`] carries exactly what the
//! real headers would (addresses, ports, sequence numbers, flags, ECN, SACK blocks, timestamps)
//! plus its size on the wire; the pcap tap turns it into real Ethernet/IPv4/TCP/UDP bytes.

use crate::time::Time;
use rustc_hash::FxHashMap;
use tandem_wire::ipv4::Ecn;
use tandem_wire::tcp::Flags;

/// Index of a node (host or switch) in the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct NodeId(pub u32);

/// Index of a flow (a TCP connection or a UDP stream) in the simulation's flow table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FlowId(pub u32);

/// Transport protocol of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Proto {
    /// TCP segment.
    #[default]
    Tcp,
    /// UDP datagram.
    Udp,
}

/// Most SACK blocks a simulated segment carries: four, as Linux and ns-3 send without the
/// timestamp option (three with it).
pub const MAX_SACK: usize = 4;

/// Bytes of header below the transport: Ethernet II (14) + IPv4 without options (20).
pub const L2_L3_HEADER: u32 = 14 + 20;
/// TCP header without options.
pub const TCP_HEADER: u32 = 20;
/// UDP header.
pub const UDP_HEADER: u32 = 8;

/// One packet in flight. 96 bytes; `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Packet {
    /// When the sending host created it (for one-way delay statistics).
    pub created: Time,
    /// TCP timestamp echo reply.
    pub ts_ecr: Time,
    /// Flow this packet belongs to.
    pub flow: FlowId,
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// TCP sequence number (bytes, wrapping).
    pub seq: u32,
    /// TCP acknowledgment number (meaningful with the ACK flag).
    pub ack: u32,
    /// Advertised receive window in bytes (already scaled).
    pub window: u32,
    /// Bytes on the wire: link header, IP, transport header and options, payload. Framing
    /// (preamble, FCS, inter-frame gap) is added by the link, not counted here.
    pub size: u32,
    /// Transport payload bytes.
    pub payload: u32,
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// TCP flags (SYN, ACK, FIN, RST, PSH, ECE, CWR ...).
    pub flags: Flags,
    /// TCP or UDP.
    pub proto: Proto,
    /// ECN codepoint of the IP header.
    pub ecn: Ecn,
    /// Traffic class (0 is the highest strict priority); selects the egress queue.
    pub class: u8,
    /// Carries the TCP timestamp option. Its value (TSval) is the sender's clock when it built
    /// the segment, which is `created`: see [`Packet::ts_val`].
    pub ts: bool,
    /// Number of valid entries in `sack`.
    pub sack_len: u8,
    /// SACK blocks (left edge, right edge), most recent first. Four fit in the 40 bytes of TCP
    /// options without timestamps, three beside them (RFC 2018 §3).
    pub sack: [(u32, u32); MAX_SACK],
    /// Free for switch models (a redirect marker, a parked-payload id); hosts leave it alone.
    pub tag: u32,
}

impl Packet {
    /// The TCP timestamp value: `created` with the option, 0 without (a segment built at
    /// time 0 reads as one without; stacks treat a TSval of 0 as no option).
    pub fn ts_val(&self) -> Time {
        if self.ts {
            self.created
        } else {
            0
        }
    }
    /// The SACK blocks in use.
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..usize::from(self.sack_len).min(MAX_SACK)]
    }
    /// True for a TCP segment that carries the given flags.
    pub fn has(&self, f: Flags) -> bool {
        self.flags.contains(f)
    }
}

/// Handle of a packet stored in a [`PacketPool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PacketId(pub u32);

/// A slab of packets with a free list: ids are reused, so memory tracks the packets in flight.
///
/// A packet is a compact header record; a system that reads or rewrites real headers (Axon's
/// source routes) keeps the packet's frame bytes beside it ([`PacketPool::set_frame`]). The
/// bytes go with the packet: freeing it frees them, and pcap taps write them instead of the
/// frame they would build from the record. Runs that carry no bytes pay one length check per
/// freed packet.
#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
    frames: FxHashMap<u32, Vec<u8>>,
    /// Stored packets per flow, once [`PacketPool::count_flows`] asked for it (empty: not
    /// counted).
    per_flow: Vec<u32>,
}

impl PacketPool {
    /// An empty pool.
    pub fn new() -> PacketPool {
        PacketPool::default()
    }
    /// Stores a packet and returns its handle.
    #[inline]
    pub fn insert(&mut self, p: Packet) -> PacketId {
        if let Some(n) = self.per_flow.get_mut(p.flow.0 as usize) {
            *n += 1;
        }
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                PacketId(i)
            }
            None => {
                self.slots.push(p);
                PacketId((self.slots.len() - 1) as u32)
            }
        }
    }
    /// The packet behind a handle.
    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id.0 as usize]
    }
    /// The packet behind a handle, mutably (a switch marking CE, say).
    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.0 as usize]
    }
    /// Takes the packet out and frees its slot (and its frame bytes, if any).
    #[inline]
    pub fn remove(&mut self, id: PacketId) -> Packet {
        if !self.frames.is_empty() {
            self.frames.remove(&id.0);
        }
        self.free.push(id.0);
        let p = self.slots[id.0 as usize];
        if let Some(n) = self.per_flow.get_mut(p.flow.0 as usize) {
            *n -= 1;
        }
        p
    }
    /// Counts the stored packets of each of flows `0..flows` from now on (the pool must be
    /// empty): what [`PacketPool::flow_live`] reports.
    pub fn count_flows(&mut self, flows: usize) {
        assert_eq!(self.live(), 0, "flows are counted from an empty pool");
        self.per_flow = vec![0; flows];
    }
    /// Packets of `flow` stored now (0 where flows are not counted).
    #[inline]
    pub fn flow_live(&self, flow: FlowId) -> u32 {
        self.per_flow.get(flow.0 as usize).copied().unwrap_or(0)
    }
    /// Gives a stored packet its real frame bytes (without FCS), replacing any it had. The
    /// record is not changed: a system that changes the frame's length sets `size` itself.
    pub fn set_frame(&mut self, id: PacketId, frame: Vec<u8>) {
        self.frames.insert(id.0, frame);
    }
    /// The packet's frame bytes, if a system gave it some.
    pub fn frame(&self, id: PacketId) -> Option<&[u8]> {
        if self.frames.is_empty() {
            return None;
        }
        self.frames.get(&id.0).map(Vec::as_slice)
    }
    /// Takes the packet's frame bytes out (the packet keeps its record).
    pub fn take_frame(&mut self, id: PacketId) -> Option<Vec<u8>> {
        if self.frames.is_empty() {
            return None;
        }
        self.frames.remove(&id.0)
    }
    /// Packets that carry frame bytes now.
    pub fn frames_live(&self) -> usize {
        self.frames.len()
    }
    /// Asks the CPU to bring the packet behind a handle into the cache ahead of its use (a
    /// hint: no effect on results; nothing happens for a handle out of range).
    #[inline]
    pub fn prefetch(&self, id: PacketId) {
        if let Some(p) = self.slots.get(id.0 as usize) {
            crate::prefetch::prefetch(p);
        }
    }
    /// Packets currently stored.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
    /// Most packets ever stored at once.
    pub fn high_water(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_stays_small() {
        assert!(std::mem::size_of::<Packet>() <= 96, "{}", std::mem::size_of::<Packet>());
    }

    #[test]
    fn pool_reuses_slots() {
        let mut pool = PacketPool::new();
        let a = pool.insert(Packet {
            seq: 1,
            ..Packet::default()
        });
        let b = pool.insert(Packet {
            seq: 2,
            ..Packet::default()
        });
        assert_eq!(pool.remove(a).seq, 1);
        let c = pool.insert(Packet {
            seq: 3,
            ..Packet::default()
        });
        assert_eq!(c, a);
        assert_eq!(pool.get(b).seq, 2);
        assert_eq!((pool.live(), pool.high_water()), (2, 2));
    }

    #[test]
    fn frame_bytes_go_with_their_packet() {
        let mut pool = PacketPool::new();
        let a = pool.insert(Packet::default());
        let b = pool.insert(Packet::default());
        assert_eq!(pool.frame(a), None);
        pool.set_frame(a, vec![1, 2, 3]);
        assert_eq!(pool.frame(a), Some(&[1u8, 2, 3][..]));
        assert_eq!(pool.frame(b), None);
        pool.remove(a);
        assert_eq!(pool.frames_live(), 0);
        // The slot is reused without the old bytes.
        let c = pool.insert(Packet::default());
        assert_eq!(c, a);
        assert_eq!(pool.frame(c), None);
        pool.set_frame(b, vec![9]);
        assert_eq!(pool.take_frame(b), Some(vec![9]));
        assert_eq!(pool.frame(b), None);
    }
}
