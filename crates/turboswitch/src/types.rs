//! Time units, packet and payload-slot identifiers shared by the core and the model.

pub use tandem_time::{tx_time, Time, MS, NS, SEC, US};

/// A packet of the input stream (its index in arrival order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PacketId(pub u64);

/// The ID a split packet carries: a payload slot and the slot's generation, so that a header or
/// payload of a slot that was since reclaimed and reused is recognised as stale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tag {
    /// Slot index.
    pub slot: u32,
    /// Generation of the slot when the packet was split.
    pub gen: u32,
}

/// Bytes a link of `bps` carries in `dt` (rounded down).
pub fn bytes_in(dt: Time, bps: u64) -> u64 {
    let b = u128::from(dt) * u128::from(bps) / (8 * u128::from(SEC));
    u64::try_from(b).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_times() {
        assert_eq!(tx_time(1500, 100_000_000_000), 120 * NS);
        assert_eq!(tx_time(1, 100_000_000_000), 80);
        assert_eq!(tx_time(1, 0), Time::MAX);
        assert_eq!(bytes_in(20 * US, 100_000_000_000), 250_000);
    }
}
