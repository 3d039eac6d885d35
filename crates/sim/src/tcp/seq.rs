//! Sequence-number arithmetic.
//!
//! Inside the endpoint every sequence number is a `u64` offset from the initial sequence number
//! (the SYN is offset 0, the first data byte offset 1), so comparisons are plain integer ones.
//! On the wire they are 32-bit and wrap; [`unwrap_seq`] turns a wire value back into the offset
//! nearest a known reference, which is correct while the two are less than 2^31 apart (RFC 9293
//! §3.4 / RFC 1982 serial-number arithmetic).

/// The wire sequence number of offset `off` from the initial sequence number `origin`.
#[inline]
pub(crate) fn to_wire(origin: u32, off: u64) -> u32 {
    origin.wrapping_add(off as u32)
}

/// The offset (from `origin`) of the wire value `raw`, choosing the candidate closest to the
/// offset `base`. Values that would fall below offset 0 clamp to 0.
#[inline]
pub(crate) fn unwrap_seq(base: u64, origin: u32, raw: u32) -> u64 {
    let rel = raw.wrapping_sub(origin);
    let diff = i64::from(rel.wrapping_sub(base as u32) as i32);
    if diff >= 0 {
        base.saturating_add(diff as u64)
    } else {
        base.saturating_sub(diff.unsigned_abs())
    }
}

/// A deterministic initial sequence number for a connection (no randomness: the same flow gets
/// the same ISS in every run). Spread over the whole 32-bit space so that wrap-around is
/// exercised by ordinary runs.
pub(crate) fn initial_seq(flow: u32, local: u32, remote: u32, local_port: u16, remote_port: u16) -> u32 {
    let mut x = (u64::from(flow) << 32) ^ (u64::from(local) << 16) ^ u64::from(remote).rotate_left(40);
    x ^= (u64::from(local_port) << 48) ^ u64::from(remote_port);
    // splitmix64 finaliser
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwrap_round_trips_across_the_wrap() {
        let origin = u32::MAX - 10;
        for off in [0u64, 1, 5, 10, 11, 12, 1000, 1 << 31, (1 << 32) + 7, (5 << 32) + 123] {
            let w = to_wire(origin, off);
            for base in [off.saturating_sub(1 << 30), off, off + (1 << 30)] {
                assert_eq!(unwrap_seq(base, origin, w), off, "off {off} base {base}");
            }
        }
        // Far below zero clamps.
        assert_eq!(unwrap_seq(3, 100, 90), 0);
    }

    #[test]
    fn iss_is_deterministic_and_varies() {
        let a = initial_seq(1, 2, 3, 4, 5);
        assert_eq!(a, initial_seq(1, 2, 3, 4, 5));
        assert_ne!(a, initial_seq(2, 2, 3, 4, 5));
        assert_ne!(initial_seq(1, 2, 3, 4, 5), initial_seq(1, 3, 2, 5, 4));
    }
}
