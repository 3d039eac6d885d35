//! The contract every sans-IO core keeps (issue 17): it is fed the time and one input,
//! appends what it asks its driver to do to a list the driver owns, and says when it next
//! needs time. No clock, socket, thread or global inside; the simulator's adapter and the live
//! driver are thin loops around the same value (as quinn-proto's `Connection` is for QUIC).
//!
//! Implemented by every core: TCPU's `Tcpu`, TurboSwitch's `TurboSwitch`, Axon's `AxonNode`,
//! the simulator's `TcpEndpoint`, CoSwitch's `FlowArbiter` and `FlowPrediction`, and the
//! controller's `Session` and `AppCore` (any `App`); [`advance`] is the loop every driver
//! writes around [`SansIo::poll_timeout`].

use crate::Time;

/// A deterministic state machine driven by `(now, input)`.
pub trait SansIo {
    /// What it is fed: a frame, a message, a report, or "time passed" ([`SansIo::timeout`]).
    type Input<'a>;
    /// Where it appends what it asks its driver to do: a caller-owned collection, usually a
    /// `Vec` of the core's actions (a TCP endpoint's has two lists: segments and events).
    type Output;
    /// Why an input was refused or ended the core (each core's documentation says which; a
    /// refused input leaves the state unchanged).
    type Error;

    /// Feeds `input` at `now` (non-decreasing from call to call) and appends the outputs.
    fn handle(&mut self, now: Time, input: Self::Input<'_>, out: &mut Self::Output) -> Result<(), Self::Error>;

    /// The earliest time at which the core wants to be fed [`SansIo::timeout`], if any. Feeding
    /// it earlier or more often is harmless; later delays what the core does then.
    fn poll_timeout(&self) -> Option<Time>;

    /// The input that says only that time has passed.
    fn timeout() -> Self::Input<'static>;
}

/// Feeds `core` its timeouts, in time order, up to and including `until` (those that handling
/// one asks for included); stops early at an error. A driver calls it before it feeds an input
/// at `until`.
pub fn advance<C: SansIo>(core: &mut C, until: Time, out: &mut C::Output) -> Result<(), C::Error> {
    let mut last = None;
    while let Some(t) = core.poll_timeout().filter(|&t| t <= until) {
        if last.is_some_and(|l| t <= l) {
            // Already fed at this time and the core still asks for it (or for an earlier
            // one): time must move on first.
            break;
        }
        core.handle(t, C::timeout(), out)?;
        last = Some(t);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts down: fires at every multiple of `every` until `left` runs out.
    struct Ticker {
        every: Time,
        next: Option<Time>,
        left: u32,
    }

    impl SansIo for Ticker {
        type Input<'a> = Option<u32>;
        type Output = Vec<Time>;
        type Error = ();
        fn handle(&mut self, now: Time, input: Option<u32>, out: &mut Vec<Time>) -> Result<(), ()> {
            match input {
                Some(n) => {
                    self.left = n;
                    self.next = Some(now + self.every);
                }
                None if self.next.is_some_and(|t| t <= now) => {
                    out.push(now);
                    self.left -= 1;
                    self.next = (self.left > 0).then_some(now + self.every);
                }
                None => {}
            }
            Ok(())
        }
        fn poll_timeout(&self) -> Option<Time> {
            self.next
        }
        fn timeout() -> Option<u32> {
            None
        }
    }

    #[test]
    fn advance_feeds_every_timeout_up_to_the_time_in_order() {
        let mut t = Ticker {
            every: 10,
            next: None,
            left: 0,
        };
        let mut out = Vec::new();
        t.handle(5, Some(4), &mut out).unwrap();
        advance(&mut t, 34, &mut out).unwrap();
        assert_eq!(out, [15, 25]);
        advance(&mut t, 100, &mut out).unwrap();
        assert_eq!(out, [15, 25, 35, 45]);
        assert_eq!(t.poll_timeout(), None);
    }

    /// A core that asks for the same time again does not loop for ever.
    #[test]
    fn a_timeout_that_does_not_move_on_is_fed_once() {
        struct Stuck;
        impl SansIo for Stuck {
            type Input<'a> = ();
            type Output = Vec<()>;
            type Error = ();
            fn handle(&mut self, _: Time, _: (), out: &mut Vec<()>) -> Result<(), ()> {
                out.push(());
                Ok(())
            }
            fn poll_timeout(&self) -> Option<Time> {
                Some(7)
            }
            fn timeout() {}
        }
        let mut out = Vec::new();
        advance(&mut Stuck, 10, &mut out).unwrap();
        assert_eq!(out.len(), 1);
    }
}
