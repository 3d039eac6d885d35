//! Byte-range helpers shared by the views. Callers have checked lengths already.

pub(crate) type Field = core::ops::Range<usize>;

#[inline]
pub(crate) fn read_u16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

#[inline]
pub(crate) fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[inline]
pub(crate) fn write_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

#[inline]
pub(crate) fn write_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

#[inline]
pub(crate) fn ipv4_at(b: &[u8], f: Field) -> std::net::Ipv4Addr {
    let s = &b[f];
    std::net::Ipv4Addr::new(s[0], s[1], s[2], s[3])
}
