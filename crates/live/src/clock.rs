//! The clock a real-time driver feeds its core with: picoseconds since the driver started, from
//! the monotonic clock.

use std::time::{Duration, Instant};

/// Monotonic picoseconds since [`Clock::new`].
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
}

impl Default for Clock {
    fn default() -> Clock {
        Clock::new()
    }
}

impl Clock {
    /// A clock starting now.
    pub fn new() -> Clock {
        Clock { start: Instant::now() }
    }

    /// Picoseconds since the start (saturates after about 213 days).
    pub fn now_ps(&self) -> u64 {
        duration_ps(self.start.elapsed())
    }

    /// The instant `ps` picoseconds after the start.
    pub fn instant_at(&self, ps: u64) -> Instant {
        self.start + Duration::from_nanos(ps / 1000)
    }
}

/// A duration in picoseconds, saturating.
pub fn duration_ps(d: Duration) -> u64 {
    u64::try_from(d.as_nanos())
        .unwrap_or(u64::MAX / 1000)
        .saturating_mul(1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_round_trip_to_the_nanosecond() {
        let c = Clock::new();
        let at = c.instant_at(1_500_000);
        assert_eq!(duration_ps(at - c.start), 1_500_000);
        assert_eq!(duration_ps(Duration::from_micros(3)), 3_000_000);
    }
}
