//! The Internet checksum (RFC 1071) and the IPv4 pseudo-header used by TCP and UDP.

use std::net::Ipv4Addr;

/// Adds `data` as big-endian 16-bit words to a running 32-bit sum (odd tail padded with zero).
/// Fold the result with [`finish`].
pub fn accumulate(mut sum: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        // Summing 32-bit halves into a u64 defers carries; folding later is equivalent (RFC 1071 §2).
        sum += u64::from(u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
        sum += u64::from(u32::from_be_bytes([c[4], c[5], c[6], c[7]]));
    }
    let rest = chunks.remainder();
    let mut pairs = rest.chunks_exact(2);
    for p in &mut pairs {
        sum += u64::from(u16::from_be_bytes([p[0], p[1]]));
    }
    if let [last] = pairs.remainder() {
        sum += u64::from(*last) << 8;
    }
    sum
}

/// Folds a running sum to 16 bits and complements it: the value to store in a checksum field.
pub fn finish(mut sum: u64) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The checksum of one buffer.
pub fn checksum(data: &[u8]) -> u16 {
    finish(accumulate(0, data))
}

/// The running sum of the IPv4 pseudo-header for an upper-layer segment of `length` bytes.
pub fn pseudo_header(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, length: u16) -> u64 {
    let mut sum = accumulate(0, &src.octets());
    sum = accumulate(sum, &dst.octets());
    sum + u64::from(protocol) + u64::from(length)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2 (before complement).
        assert_eq!(checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]), !0xddf2);
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(checksum(&[0x12, 0x34, 0x56]), checksum(&[0x12, 0x34, 0x56, 0x00]));
    }

    #[test]
    fn including_checksum_verifies_to_zero() {
        let mut data = vec![0x45, 0x00, 0x00, 0x1c, 0x12, 0x34, 0x00, 0x00, 0x40, 0x11, 0, 0];
        data.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        let c = checksum(&data);
        data[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(checksum(&data), 0);
    }
}
