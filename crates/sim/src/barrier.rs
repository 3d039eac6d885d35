//! The barrier at the end of each window of a partitioned run ([`crate::parallel`]).
//!
//! A window of a data-center run lasts tens to hundreds of microseconds, and every thread
//! meets the others at its end. `std::sync::Barrier` puts a thread that arrives early to sleep
//! on a condition variable and the last one wakes it through the kernel, which costs several
//! microseconds a window on both sides and more when the woken thread's core has gone idle.
//! Here a thread that arrives early first spins on the barrier's generation for a bounded
//! time (the others are usually close behind) and only then sleeps; the last thread to arrive
//! wakes sleepers only if there are any. What the threads compute does not depend on how
//! they wait: only the time does.
//!
//! Whether to spin adapts. A spin pays off when the others arrive during it; when they do
//! not, the spinner held a core for nothing, and on a machine busy with other work that core
//! was what a late partition thread was waiting for, so the next window starts later still.
//! The barrier keeps a moving average of how often spins ran out ([`SHARE_GAIN`]); while
//! more than half did ([`SHARE_LIMIT`]), early threads sleep at once, and one wait in
//! [`PROBE`] spins anyway, so that the average comes back down once the machine is quiet
//! again. On cores of its own a run's spins rarely run out (the others are close behind), and
//! a few that do change nothing.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A reusable barrier for `n` threads that spins before it sleeps.
pub(crate) struct SpinBarrier {
    n: usize,
    /// Threads arrived in the current generation.
    arrived: AtomicUsize,
    /// Bumped by the last thread to arrive: the waiters' signal to go on.
    generation: AtomicU64,
    /// Threads asleep (or about to be) on `wake`.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    /// The longest an early thread spins before it sleeps.
    spin: Duration,
    /// The moving average of the spins that ran out, in 65,536ths, on a cache line of its own
    /// (written whenever a spin moves it, which the threads' polling of `generation` should not
    /// pay for).
    ran_out: Padded,
    /// When set, `(threads, cores)`: an early thread spins only while `threads` (the
    /// threads of every barrier of this process that are running, [`Busy`]) is at most
    /// `cores`, and else sleeps at once.
    busy: Option<(&'static AtomicUsize, usize)>,
}

/// Counts the threads of a process's partitioned runs while they run, so that their barriers
/// stop spinning once there are more of them than cores (several runs at once, as a sweep
/// runs them): a spinning thread would hold a core that a late one needs. Dropping it takes
/// its threads off the count, also when a run panics.
pub(crate) struct Busy {
    count: &'static AtomicUsize,
    n: usize,
}

impl Busy {
    /// Adds `n` threads to `count` until dropped.
    pub(crate) fn new(count: &'static AtomicUsize, n: usize) -> Busy {
        count.fetch_add(n, Ordering::Relaxed);
        Busy { count, n }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.count.fetch_sub(self.n, Ordering::Relaxed);
    }
}

impl SpinBarrier {
    /// A barrier for `n` threads (at least 1) whose early arrivals spin for up to `spin`.
    pub(crate) fn new(n: usize, spin: Duration) -> SpinBarrier {
        SpinBarrier {
            n: n.max(1),
            arrived: AtomicUsize::new(0),
            generation: AtomicU64::new(0),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            spin,
            ran_out: Padded(AtomicU32::new(0)),
            busy: None,
        }
    }

    /// The same barrier, whose early arrivals spin only while `threads` is at most `cores`.
    pub(crate) fn spinning_while(mut self, threads: &'static AtomicUsize, cores: usize) -> SpinBarrier {
        self.busy = Some((threads, cores));
        self
    }

    /// Waits until all `n` threads have called `wait` in this generation. Everything a thread
    /// wrote before its call is visible to every thread after theirs.
    pub(crate) fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            // The last: the count starts again before anyone can arrive for the next round
            // (nobody leaves this one before the generation moves).
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::SeqCst);
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                self.wake.notify_all();
            }
            return;
        }
        let probe = generation.is_multiple_of(PROBE);
        let spin = match self.busy {
            Some((threads, cores)) if threads.load(Ordering::Relaxed) > cores => Duration::ZERO,
            _ if probe || self.spins() => self.spin,
            _ => Duration::ZERO,
        };
        let paid_off = self.spin_while(generation, spin);
        if !spin.is_zero() {
            // The average moves a SHARE_GAIN-th of the way to this spin's outcome.
            let share = self.ran_out.0.load(Ordering::Relaxed);
            let next = match paid_off {
                true => share - share / SHARE_GAIN,
                false => share + (SHARE_ONE - share) / SHARE_GAIN,
            };
            if next != share {
                self.ran_out.0.store(next, Ordering::Relaxed);
            }
        }
        if paid_off {
            return;
        }
        // Sleep. The count of sleepers goes up before the generation is looked at again
        // under the lock, and the last thread bumps the generation before it looks at the
        // count: either it sees this sleeper and wakes it under the lock, or this sleeper
        // sees the new generation and does not sleep.
        let mut held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        while self.generation.load(Ordering::SeqCst) == generation {
            held = self.wake.wait(held).unwrap_or_else(|e| e.into_inner());
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    /// Spins for up to `spin` while the generation is still `generation`; true when it moved
    /// on meanwhile.
    fn spin_while(&self, generation: u64, spin: Duration) -> bool {
        let start = Instant::now();
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(64) {
                std::hint::spin_loop();
            } else if start.elapsed() >= spin {
                return false;
            }
        }
        true
    }

    /// Whether an early thread spins (no more than half the spins of late ran out); a probe
    /// spins either way.
    fn spins(&self) -> bool {
        self.ran_out.0.load(Ordering::Relaxed) <= SHARE_LIMIT
    }
}

/// An atomic on a cache line of its own.
#[repr(align(64))]
struct Padded(AtomicU32);

/// The share of spins that ran out above which early threads sleep at once, in 65,536ths
/// (half).
const SHARE_LIMIT: u32 = SHARE_ONE / 2;

/// All spins, in the units of the moving average.
const SHARE_ONE: u32 = 1 << 16;

/// The moving average of run-out spins moves this fraction of the way to each spin's outcome:
/// from spins that pay off, about ten that run out in a row stop the spinning.
const SHARE_GAIN: u32 = 16;

/// One wait in this many generations spins even while early threads sleep at once, so that
/// the average of run-out spins comes back down once the machine is quiet again. At windows of
/// tens of microseconds, a probe every few milliseconds.
const PROBE: u64 = 256;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// Threads counted by a test's barriers (none of the process's runs).
    static TEST_BUSY: AtomicUsize = AtomicUsize::new(0);

    /// Every thread sees every other thread's writes of a round after the barrier, round after
    /// round, whether the threads spin or sleep (no spin at all, a long spin, and a long spin
    /// that more busy threads than cores turn off).
    #[test]
    fn every_thread_sees_every_round_complete() {
        for (spin, busy) in [
            (Duration::ZERO, false),
            (Duration::from_micros(200), false),
            // Spinning allowed, but more threads counted busy than cores: they sleep at once.
            (Duration::from_micros(200), true),
        ] {
            for n in [1usize, 2, 3, 5] {
                let _counted = busy.then(|| Busy::new(&TEST_BUSY, n + 1));
                let mut barrier = SpinBarrier::new(n, spin);
                if busy {
                    barrier = barrier.spinning_while(&TEST_BUSY, n);
                }
                let slots: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
                std::thread::scope(|s| {
                    for me in 0..n {
                        let (barrier, slots) = (&barrier, &slots);
                        s.spawn(move || {
                            for round in 1..=200u64 {
                                slots[me].store(round, Ordering::Relaxed);
                                barrier.wait();
                                for (other, slot) in slots.iter().enumerate() {
                                    assert_eq!(slot.load(Ordering::Relaxed), round, "thread {other} in round {round}");
                                }
                                barrier.wait();
                            }
                        });
                    }
                });
            }
        }
    }

    /// Spins that keep running out (a partner that is always late, as on a machine busy with
    /// other work) stop the spinning, and probes that pay off bring it back.
    #[test]
    fn spinning_stops_while_spins_run_out_and_comes_back_when_they_pay_off() {
        // A bound long enough that a probe pays off even on a loaded machine (the partner has
        // only to wake and come round).
        let bound = Duration::from_millis(5);
        let barrier = SpinBarrier::new(2, bound);
        assert!(barrier.spins());
        let late = 14;
        let recovery = 4 * PROBE;
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..late {
                    std::thread::sleep(2 * bound);
                    barrier.wait();
                }
                for _ in 0..recovery {
                    barrier.wait();
                }
            });
            for _ in 0..late {
                barrier.wait();
            }
            // The partner slept twice the bound before each of those waits, so this thread's
            // spins ran out; after eleven in a row the average is above one half.
            assert!(!barrier.spins());
            let back = (1..=recovery).find(|_| {
                barrier.wait();
                barrier.spins()
            });
            // The other thread's waits are matched whether or not the spinning came back.
            for _ in back.unwrap_or(recovery)..recovery {
                barrier.wait();
            }
            assert!(back.is_some(), "still not spinning after {recovery} rounds");
        });
    }

    #[test]
    fn busy_counts_threads_until_dropped() {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let a = Busy::new(&COUNT, 2);
        {
            let _b = Busy::new(&COUNT, 3);
            assert_eq!(COUNT.load(Ordering::Relaxed), 5);
        }
        assert_eq!(COUNT.load(Ordering::Relaxed), 2);
        drop(a);
        assert_eq!(COUNT.load(Ordering::Relaxed), 0);
    }
}
