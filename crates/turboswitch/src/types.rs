//! Time units, packet and payload-slot identifiers shared by the core and the model.

/// Simulated time in integer picoseconds.
pub type Time = u64;
/// One nanosecond.
pub const NS: Time = 1_000;
/// One microsecond.
pub const US: Time = 1_000_000;
/// One millisecond.
pub const MS: Time = 1_000_000_000;
/// One second.
pub const SEC: Time = 1_000_000_000_000;

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

/// Time to serialise `bytes` at `bps`, rounded up to the next picosecond (0 when `bps` is 0,
/// i.e. an unlimited rate).
pub fn tx_time(bytes: u64, bps: u64) -> Time {
    if bps == 0 {
        return 0;
    }
    let num = u128::from(bytes) * 8 * u128::from(SEC);
    let t = num.div_ceil(u128::from(bps));
    Time::try_from(t).unwrap_or(Time::MAX)
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
        assert_eq!(tx_time(1, 0), 0);
        assert_eq!(bytes_in(20 * US, 100_000_000_000), 250_000);
    }
}
