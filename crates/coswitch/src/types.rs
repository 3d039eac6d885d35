//! Time in integer picoseconds, Tandem's one definition (`tandem-time`, which the core shares
//! with the simulator without depending on it).

pub use tandem_time::{Time, MS, SEC, US};

/// `t` in seconds, for reports.
pub fn secs(t: Time) -> f64 {
    t as f64 / SEC as f64
}
