//! Cache prefetch hints for the event loop: the simulator's working set at data-center scale
//! (hundreds of thousands of packets in flight, thousands of ports) is far larger than the
//! caches, so the loop asks for the next events' data while it handles the current one.
//! A hint never changes a result.

/// Asks the CPU to bring the cache lines holding `*value` into the cache (every line of a
/// value that spans several). A no-op on targets without a prefetch instruction.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    prefetch_prefix(value, std::mem::size_of::<T>());
}

/// [`prefetch`] of the lines holding the first `bytes` bytes of `*value` only (its hot
/// fields, for a value laid out hot first), at most all of it.
#[inline(always)]
pub(crate) fn prefetch_prefix<T>(value: &T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = value as *const T as *const i8;
        let mut off = 0;
        while off < bytes.min(std::mem::size_of::<T>()).max(1) {
            // SAFETY: a prefetch is a hint that never faults, and the address lies inside
            // `*value`, a live reference.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.add(off)) };
            off += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (value, bytes);
}
