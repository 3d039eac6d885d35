//! Per-port route memory and CAM (§3.2.1).
//!
//! Each host port has a private route memory of slots; a valid slot holds the Axon header of a
//! source route (of type Ethernet) and the two MACs to write into the host's frame. A frame's
//! destination MAC finds its slot in one of two ways:
//!
//! * a **masqueraded** MAC (locally administered, with the configured two-byte prefix, then the
//!   slot index as four bytes) indexes route memory directly; the control plane hands such MACs to
//!   hosts in its ARP replies when the CAM is full;
//! * any other MAC is looked up in the port's **CAM**, which holds up to `cam_entries` mappings
//!   from real MACs to slots.
//!
//! A slot is first *reserved* (when the source Axon answers an ARP request, §3.2.3) and becomes
//! *valid* once the route is installed; frames to a reserved slot miss, so they reach the control
//! plane, as the thesis requires.

use core::fmt;
use std::collections::{BTreeMap, BTreeSet};
use tandem_wire::axon::{AxonRepr, PacketType};
use tandem_wire::MacAddr;

/// A slot of a port's route memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RouteSlot(pub u32);

/// What the control plane installs in a slot.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RouteEntry {
    /// The source route from this device: the first hop is this device's output port, the last
    /// the host port at the target Axon (or `0xf` for its control plane).
    pub forward: Vec<u8>,
    /// Destination MAC written into the host's frame (the target host's real MAC).
    pub dst_mac: MacAddr,
    /// Source MAC written into the host's frame (what the target host believes the source is).
    pub src_mac: MacAddr,
}

/// A valid route as the data plane uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRoute {
    /// The Axon header to prepend, emitted once at install time.
    pub header: Vec<u8>,
    /// Forward hops in the header (the fetch latency depends on it).
    pub hops: usize,
    /// Destination MAC to write.
    pub dst_mac: MacAddr,
    /// Source MAC to write.
    pub src_mac: MacAddr,
    /// The CAM key that maps to this slot, if any.
    pub cam_key: Option<MacAddr>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Slot {
    Free,
    Reserved,
    Valid(StoredRoute),
}

/// How a lookup found its route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LookupVia {
    /// Through the CAM (a real MAC).
    Cam,
    /// Directly, from a masqueraded MAC.
    Masquerade,
}

/// Why a route operation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RouteError {
    /// The device has no such port.
    NoSuchPort(u8),
    /// Every slot of the port's route memory is reserved or valid.
    MemoryFull,
    /// The slot index is past the route memory.
    NoSuchSlot(RouteSlot),
    /// The slot is free: reserve it first.
    NotReserved(RouteSlot),
    /// The route has no hop.
    EmptyPath,
    /// A hop above 15, or a path too long for the header.
    BadPath,
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteError::NoSuchPort(p) => write!(f, "no port {p}"),
            RouteError::MemoryFull => f.write_str("route memory full"),
            RouteError::NoSuchSlot(s) => write!(f, "no route slot {}", s.0),
            RouteError::NotReserved(s) => write!(f, "route slot {} is not reserved", s.0),
            RouteError::EmptyPath => f.write_str("empty route"),
            RouteError::BadPath => f.write_str("route hop above 15 or route too long"),
        }
    }
}

impl std::error::Error for RouteError {}

/// One port's route memory and CAM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteMemory {
    slots: Vec<Slot>,
    free: BTreeSet<u32>,
    cam: BTreeMap<MacAddr, u32>,
    cam_capacity: usize,
    prefix: [u8; 2],
}

impl RouteMemory {
    /// `slots` free slots, a CAM of `cam_capacity` entries, masqueraded MACs starting `prefix`.
    pub fn new(slots: usize, cam_capacity: usize, prefix: [u8; 2]) -> RouteMemory {
        let slots = slots.min(u32::MAX as usize);
        RouteMemory {
            slots: vec![Slot::Free; slots],
            free: (0..slots as u32).collect(),
            cam: BTreeMap::new(),
            cam_capacity,
            prefix,
        }
    }

    /// Reserves the lowest free slot.
    pub fn reserve(&mut self) -> Result<RouteSlot, RouteError> {
        let i = self.free.pop_first().ok_or(RouteError::MemoryFull)?;
        self.slots[i as usize] = Slot::Reserved;
        Ok(RouteSlot(i))
    }

    /// Makes a reserved (or valid: the route is replaced) slot valid with `entry`. With a
    /// `cam_key` (the destination's real MAC) the device maps it in the CAM if there is room and
    /// the key is a unicast MAC not mapped to another slot. Returns the MAC the host must send to:
    /// `cam_key` when the CAM took it, else the slot's masqueraded MAC.
    pub fn install(
        &mut self,
        slot: RouteSlot,
        entry: &RouteEntry,
        cam_key: Option<MacAddr>,
    ) -> Result<MacAddr, RouteError> {
        match self.slots.get(slot.0 as usize) {
            None => return Err(RouteError::NoSuchSlot(slot)),
            Some(Slot::Free) => return Err(RouteError::NotReserved(slot)),
            Some(_) => {}
        }
        if entry.forward.is_empty() {
            return Err(RouteError::EmptyPath);
        }
        let header = AxonRepr::from_path(PacketType::Ethernet, &entry.forward).map_err(|_| RouteError::BadPath)?;
        let mut bytes = vec![0u8; header.header_len()];
        header.emit(&mut bytes).map_err(|_| RouteError::BadPath)?;
        self.unmap(slot);
        let cam_key = cam_key.filter(|k| {
            !k.is_multicast()
                && self.masquerade_slot(*k).is_none()
                && !self.cam.contains_key(k)
                && self.cam.len() < self.cam_capacity
        });
        if let Some(k) = cam_key {
            self.cam.insert(k, slot.0);
        }
        self.slots[slot.0 as usize] = Slot::Valid(StoredRoute {
            header: bytes,
            hops: entry.forward.len(),
            dst_mac: entry.dst_mac,
            src_mac: entry.src_mac,
            cam_key,
        });
        Ok(cam_key.unwrap_or_else(|| self.masqueraded_mac(slot)))
    }

    fn unmap(&mut self, slot: RouteSlot) {
        if let Some(Slot::Valid(r)) = self.slots.get(slot.0 as usize) {
            if let Some(k) = r.cam_key {
                self.cam.remove(&k);
            }
        }
    }

    /// Frees a reserved or valid slot and its CAM entry.
    pub fn remove(&mut self, slot: RouteSlot) -> Result<(), RouteError> {
        match self.slots.get(slot.0 as usize) {
            None => Err(RouteError::NoSuchSlot(slot)),
            Some(Slot::Free) => Err(RouteError::NotReserved(slot)),
            Some(_) => {
                self.unmap(slot);
                self.slots[slot.0 as usize] = Slot::Free;
                self.free.insert(slot.0);
                Ok(())
            }
        }
    }

    /// The masqueraded MAC of a slot: the prefix, then the index.
    pub fn masqueraded_mac(&self, slot: RouteSlot) -> MacAddr {
        let i = slot.0.to_be_bytes();
        MacAddr([self.prefix[0], self.prefix[1], i[0], i[1], i[2], i[3]])
    }

    /// The slot a masqueraded MAC names (whether or not it exists or is valid), or `None` for a
    /// MAC that is not masqueraded.
    pub fn masquerade_slot(&self, mac: MacAddr) -> Option<RouteSlot> {
        (mac.is_local() && mac.0[..2] == self.prefix)
            .then(|| RouteSlot(u32::from_be_bytes([mac.0[2], mac.0[3], mac.0[4], mac.0[5]])))
    }

    /// The valid route for a destination MAC, and how it was found.
    pub fn lookup(&self, dst: MacAddr) -> Option<(&StoredRoute, LookupVia)> {
        let (slot, via) = match self.masquerade_slot(dst) {
            Some(s) => (s.0, LookupVia::Masquerade),
            None => (*self.cam.get(&dst)?, LookupVia::Cam),
        };
        match self.slots.get(slot as usize) {
            Some(Slot::Valid(r)) => Some((r, via)),
            _ => None,
        }
    }

    /// The route in a slot, if valid.
    pub fn route(&self, slot: RouteSlot) -> Option<&StoredRoute> {
        match self.slots.get(slot.0 as usize) {
            Some(Slot::Valid(r)) => Some(r),
            _ => None,
        }
    }

    /// CAM entries in use.
    pub fn cam_len(&self) -> usize {
        self.cam.len()
    }

    /// Free slots.
    pub fn free_slots(&self) -> usize {
        self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PREFIX: [u8; 2] = [0x02, 0xa0];
    const B: MacAddr = MacAddr([0x00, 0x1b, 0x21, 0, 0, 0x0b]);
    const C: MacAddr = MacAddr([0x00, 0x1b, 0x21, 0, 0, 0x0c]);

    fn entry(forward: &[u8]) -> RouteEntry {
        RouteEntry {
            forward: forward.to_vec(),
            dst_mac: B,
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
        }
    }

    #[test]
    fn masqueraded_allocation_and_exhaustion() {
        let mut m = RouteMemory::new(2, 0, PREFIX);
        let s0 = m.reserve().unwrap();
        let s1 = m.reserve().unwrap();
        assert_eq!((s0, s1), (RouteSlot(0), RouteSlot(1)));
        assert_eq!(m.reserve(), Err(RouteError::MemoryFull));
        // Reserved but not installed: no route yet.
        let mac1 = m.masqueraded_mac(s1);
        assert_eq!(mac1, MacAddr([0x02, 0xa0, 0, 0, 0, 1]));
        assert!(mac1.is_local() && !mac1.is_multicast());
        assert!(m.lookup(mac1).is_none());
        // No CAM: the host gets the masqueraded MAC even when it offers a real one.
        assert_eq!(m.install(s1, &entry(&[1, 2]), Some(B)), Ok(mac1));
        let (r, via) = m.lookup(mac1).unwrap();
        assert_eq!(via, LookupVia::Masquerade);
        assert_eq!(r.header, [0x02, 0x00, 0x70, 0x02, 0x00, 0x01, 0x20]);
        assert!(m.lookup(B).is_none());
        // Freed slots are reused, lowest first; their MACs stop working.
        m.remove(s1).unwrap();
        assert!(m.lookup(mac1).is_none());
        assert_eq!(m.remove(s1), Err(RouteError::NotReserved(s1)));
        assert_eq!(m.reserve(), Ok(s1));
        // A masqueraded MAC past the memory, or an unknown prefix, finds nothing.
        assert!(m.lookup(MacAddr([0x02, 0xa0, 0, 0, 1, 0])).is_none());
        assert_eq!(m.masquerade_slot(MacAddr([0x02, 0xa1, 0, 0, 0, 1])), None);
    }

    #[test]
    fn cam_full_falls_back_to_masquerading() {
        let mut m = RouteMemory::new(4, 1, PREFIX);
        let s0 = m.reserve().unwrap();
        let s1 = m.reserve().unwrap();
        assert_eq!(m.install(s0, &entry(&[1]), Some(B)), Ok(B));
        assert_eq!(m.cam_len(), 1);
        assert_eq!(m.install(s1, &entry(&[2]), Some(C)), Ok(m.masqueraded_mac(s1)));
        assert_eq!(m.lookup(B).unwrap().1, LookupVia::Cam);
        assert!(m.lookup(C).is_none());
        assert_eq!(m.lookup(m.masqueraded_mac(s1)).unwrap().0.hops, 1);
        // Removing the CAM route frees its entry for the next install.
        m.remove(s0).unwrap();
        assert_eq!(m.cam_len(), 0);
        assert_eq!(m.install(s1, &entry(&[2]), Some(C)), Ok(C));
        assert_eq!(m.lookup(C).unwrap().1, LookupVia::Cam);
    }

    #[test]
    fn install_errors() {
        let mut m = RouteMemory::new(1, 1, PREFIX);
        assert_eq!(
            m.install(RouteSlot(0), &entry(&[1]), None),
            Err(RouteError::NotReserved(RouteSlot(0)))
        );
        assert_eq!(
            m.install(RouteSlot(5), &entry(&[1]), None),
            Err(RouteError::NoSuchSlot(RouteSlot(5)))
        );
        let s = m.reserve().unwrap();
        assert_eq!(m.install(s, &entry(&[]), None), Err(RouteError::EmptyPath));
        assert_eq!(m.install(s, &entry(&[16]), None), Err(RouteError::BadPath));
        // A multicast key never enters the CAM.
        assert_eq!(
            m.install(s, &entry(&[1]), Some(MacAddr::BROADCAST)),
            Ok(m.masqueraded_mac(s))
        );
        assert_eq!(m.free_slots(), 0);
        assert!(m.route(s).is_some());
    }
}
