//! Time in Tandem: integer picoseconds since the start of a run (or of a live driver's clock).
//! [`units`] reads and writes quantities with units (`10Gbps`, `1.5ms`, `64KiB`) for scenario
//! files, the command line and live drivers' configuration files alike. [`sansio`] is the
//! contract every core keeps: `handle(now, input, out)` and `poll_timeout()`.
//!
//! A `u64` of picoseconds lasts 213 days, and one picosecond resolves a bit time at 400 Gb/s
//! (2.5 ps) well enough that serialisation delays never round to zero. Every core (TCPU,
//! CoSwitch, TurboSwitch, ...) and the simulator use this one definition, so a duration means
//! the same in a core, in its simulation adapter and in its live driver.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod sansio;
pub mod units;

/// A point in time, or a duration, in picoseconds.
pub type Time = u64;

/// One picosecond.
pub const PS: Time = 1;
/// One nanosecond.
pub const NS: Time = 1_000;
/// One microsecond.
pub const US: Time = 1_000_000;
/// One millisecond.
pub const MS: Time = 1_000_000_000;
/// One second.
pub const SEC: Time = 1_000_000_000_000;

/// Time to serialise `bytes` onto a link of `rate_bps` bits per second, rounded up to the next
/// picosecond (so back-to-back packets never overlap). A zero rate is a link that never
/// finishes: `Time::MAX` (a caller that means "no limit" says so before calling), as is a
/// time beyond `Time::MAX`.
#[inline]
pub fn tx_time(bytes: u64, rate_bps: u64) -> Time {
    if rate_bps == 0 {
        return Time::MAX;
    }
    let bits = u128::from(bytes) * 8 * u128::from(SEC);
    Time::try_from(bits.div_ceil(u128::from(rate_bps))).unwrap_or(Time::MAX)
}

/// Seconds as a float, for reports.
pub fn as_secs(t: Time) -> f64 {
    t as f64 / SEC as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_delays() {
        // 1500 bytes at 1 Gb/s = 12 us; at 10 Gb/s = 1.2 us; 64 bytes at 100 Gb/s = 5.12 ns.
        assert_eq!(tx_time(1500, 1_000_000_000), 12 * US);
        assert_eq!(tx_time(1500, 10_000_000_000), 1_200 * NS);
        assert_eq!(tx_time(64, 100_000_000_000), 5_120);
        // Rounds up: 1 byte at 3 b/s = 2.666.. s.
        assert_eq!(tx_time(1, 3), 2_666_666_666_667);
        // A zero rate never finishes; a time past u64 saturates instead of wrapping.
        assert_eq!(tx_time(1, 0), Time::MAX);
        assert_eq!(tx_time(u64::MAX, 1), Time::MAX);
        assert_eq!(as_secs(1_500 * MS), 1.5);
    }
}
