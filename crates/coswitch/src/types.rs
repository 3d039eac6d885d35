//! Time in integer picoseconds, as everywhere in Tandem. The core keeps its own constants so
//! that it does not depend on the simulator.

/// A point in time or a duration, in picoseconds.
pub type Time = u64;
/// One microsecond.
pub const US: Time = 1_000_000;
/// One millisecond.
pub const MS: Time = 1_000 * US;
/// One second.
pub const SEC: Time = 1_000 * MS;

/// `t` in seconds, for reports.
pub fn secs(t: Time) -> f64 {
    t as f64 / SEC as f64
}
