//! Quantities with units, as people write them in scenario files and on the command line.
//!
//! | quantity | parse with | base unit | examples |
//! |---|---|---|---|
//! | rate | [`parse_rate`] | bit/s (`u64`) | `10Gbps`, `100Mbps`, `56kbps`, `1500bps`, `25G`, `2.5Gbit/s` |
//! | duration | [`parse_time`] | picoseconds ([`Time`]) | `10us`, `1.5ms`, `2s`, `100ns`, `250ps`, `1min`, `0` |
//! | size | [`parse_size`] | bytes (`u64`) | `1500B`, `1500`, `64KB` (x1000), `256KiB` (x1024), `2MiB`, `1GiB` |
//! | count | [`parse_count`] | `u64` | `100`, `1e6` |
//! | fraction | [`parse_fraction`] | `f64` | `50%`, `0.5` |
//!
//! Numbers are decimals (`1.5`, `.5`, `2e3`) converted with exact integer arithmetic: a value
//! that is not a whole number of the base unit (`1.5ps`, `0.5B`) is an error rather than
//! silently rounded, and so is one that does not fit a `u64`. Rate and size prefixes are
//! decimal (`k` = 1000) except the binary `KiB`/`MiB`/`GiB`/`TiB`. A space between number
//! and unit is allowed. Negative quantities are errors.
//!
//! The `fmt_*` helpers write values back in the same notation, exactly (so the output parses
//! back to the same value), choosing the largest unit that needs at most three decimals.
//!
//! [`RateArg`], [`TimeArg`], [`SizeArg`] and [`FractionArg`] are serde wrappers for TOML
//! values with units; their errors read like `expected a size like 256KiB, got "12 parsecs"`.

use crate::{Time, MS, NS, SEC, US};
use std::fmt;

/// The kind of quantity a text was meant to hold (used in errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// A bit rate.
    Rate,
    /// A duration.
    Duration,
    /// A size in bytes.
    Size,
    /// A plain count.
    Count,
    /// A fraction or percentage.
    Fraction,
}

impl Quantity {
    /// What a valid value looks like, for error messages: `a rate like 10Gbps`.
    pub fn example(self) -> &'static str {
        match self {
            Quantity::Rate => "a rate like 10Gbps",
            Quantity::Duration => "a duration like 10us",
            Quantity::Size => "a size like 256KiB",
            Quantity::Count => "a whole number like 100",
            Quantity::Fraction => "a fraction like 0.5 or 50%",
        }
    }

    fn units(self) -> &'static str {
        match self {
            Quantity::Rate => "bps, kbps, Mbps, Gbps, Tbps, or K/M/G/T with or without bit/s",
            Quantity::Duration => "ps, ns, us, ms, s, min, h",
            Quantity::Size => "B, KB, MB, GB, TB (x1000), KiB, MiB, GiB, TiB (x1024)",
            Quantity::Count => "none",
            Quantity::Fraction => "%",
        }
    }
}

/// Why a text is not a valid quantity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnitErrorReason {
    /// Nothing but whitespace.
    Empty,
    /// The number part is missing or malformed.
    NotANumber,
    /// A minus sign.
    Negative,
    /// A number without the unit this quantity needs.
    MissingUnit,
    /// A unit this quantity does not know (the unit as written).
    UnknownUnit(String),
    /// Too large for the base unit's integer type.
    Overflow,
    /// Not a whole number of the base unit (`1.5ps`, `0.5B`).
    NotWhole,
}

/// A text that could not be read as the quantity it was meant to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError {
    /// The quantity that was expected.
    pub quantity: Quantity,
    /// The text as given.
    pub input: String,
    /// What was wrong with it.
    pub reason: UnitErrorReason,
}

impl UnitError {
    fn new(quantity: Quantity, input: &str, reason: UnitErrorReason) -> UnitError {
        UnitError {
            quantity,
            input: input.to_string(),
            reason,
        }
    }
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected {}, got {:?}", self.quantity.example(), self.input)?;
        let base = match self.quantity {
            Quantity::Rate => "bit/s",
            Quantity::Duration => "picoseconds",
            Quantity::Size => "bytes",
            Quantity::Count => "units",
            Quantity::Fraction => "units",
        };
        match &self.reason {
            UnitErrorReason::Empty => write!(f, " (empty)"),
            UnitErrorReason::NotANumber => write!(f, " (not a number)"),
            UnitErrorReason::Negative => write!(f, " (negative)"),
            UnitErrorReason::MissingUnit => write!(f, " (needs a unit: {})", self.quantity.units()),
            UnitErrorReason::UnknownUnit(u) => {
                write!(f, " (unknown unit {u:?}; use {})", self.quantity.units())
            }
            UnitErrorReason::Overflow => write!(f, " (too large)"),
            UnitErrorReason::NotWhole => write!(f, " (not a whole number of {base})"),
        }
    }
}

impl std::error::Error for UnitError {}

/// A non-negative decimal `mantissa x 10^exp10`.
#[derive(Debug, Clone, Copy)]
struct Decimal {
    mantissa: u128,
    exp10: i64,
}

/// Most significant digits kept exactly (u128 holds 38).
const MAX_DIGITS: u32 = 36;

/// Splits `text` into a decimal number and the unit after it.
fn split_number(text: &str) -> Result<(Decimal, &str), UnitErrorReason> {
    let t = text.trim();
    if t.is_empty() {
        return Err(UnitErrorReason::Empty);
    }
    let b = t.as_bytes();
    let mut i = 0;
    match b[0] {
        b'-' => return Err(UnitErrorReason::Negative),
        b'+' => i = 1,
        _ => {}
    }
    let mut mantissa: u128 = 0;
    let mut digits = 0u32;
    let mut exp10: i64 = 0;
    let mut any_digit = false;
    let mut push = |d: u8, frac: bool, mantissa: &mut u128, exp10: &mut i64| -> Result<(), UnitErrorReason> {
        if *mantissa == 0 && d == 0 {
            // Leading zeros carry no precision.
            if frac {
                *exp10 -= 1;
            }
            return Ok(());
        }
        if digits >= MAX_DIGITS {
            return match (frac, d) {
                // 37 or more integer digits: far beyond any u64.
                (false, _) => Err(UnitErrorReason::Overflow),
                // A trailing fractional zero changes nothing.
                (true, 0) => Ok(()),
                // A digit below the precision we keep: no whole number of any base unit.
                (true, _) => Err(UnitErrorReason::NotWhole),
            };
        }
        *mantissa = *mantissa * 10 + u128::from(d);
        digits += 1;
        if frac {
            *exp10 -= 1;
        }
        Ok(())
    };
    while i < b.len() && b[i].is_ascii_digit() {
        push(b[i] - b'0', false, &mut mantissa, &mut exp10)?;
        any_digit = true;
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            push(b[i] - b'0', true, &mut mantissa, &mut exp10)?;
            any_digit = true;
            i += 1;
        }
    }
    if !any_digit {
        return Err(UnitErrorReason::NotANumber);
    }
    // An exponent: `e` or `E`, optional sign, digits. (`E` alone could start a unit, so only
    // take it when digits follow.)
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        let neg = j < b.len() && b[j] == b'-';
        if j < b.len() && (b[j] == b'-' || b[j] == b'+') {
            j += 1;
        }
        let start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > start {
            // Saturate huge exponents; they overflow or vanish below.
            let e: i64 = t[start..j].parse::<i64>().unwrap_or(i64::MAX / 4).min(1_000_000);
            exp10 += if neg { -e } else { e };
            i = j;
        }
    }
    Ok((Decimal { mantissa, exp10 }, t[i..].trim_start()))
}

/// `d x mult` as a whole `u64`.
fn to_whole(d: Decimal, mult: u128) -> Result<u64, UnitErrorReason> {
    let (mut m, mut e) = (d.mantissa, d.exp10);
    if m == 0 {
        return Ok(0);
    }
    while m % 10 == 0 {
        m /= 10;
        e += 1;
    }
    let n = m.checked_mul(mult).ok_or(UnitErrorReason::Overflow)?;
    let v = if e >= 0 {
        let p = u32::try_from(e)
            .ok()
            .and_then(|e| 10u128.checked_pow(e))
            .ok_or(UnitErrorReason::Overflow)?;
        n.checked_mul(p).ok_or(UnitErrorReason::Overflow)?
    } else {
        // n < 2^128 < 10^39, so dividing by 10^39 or more never leaves a whole number.
        let p = u32::try_from(-e)
            .ok()
            .and_then(|e| 10u128.checked_pow(e))
            .ok_or(UnitErrorReason::NotWhole)?;
        if n % p != 0 {
            return Err(UnitErrorReason::NotWhole);
        }
        n / p
    };
    u64::try_from(v).map_err(|_| UnitErrorReason::Overflow)
}

/// Parses a bit rate (`10Gbps`, `1Gbps`, `100Mbps`, `56kbps`, `1500bps`, `25G`, `2.5Gbit/s`)
/// into bits per second. Prefixes are decimal and case-insensitive (`k`/`K` = 1000); the
/// `bps` itself must be lowercase (`GBps` would mean bytes and is rejected).
pub fn parse_rate(text: &str) -> Result<u64, UnitError> {
    let err = |r| UnitError::new(Quantity::Rate, text, r);
    let (num, unit) = split_number(text).map_err(err)?;
    let (prefix, rest) = match unit.chars().next() {
        Some(c @ ('k' | 'K' | 'm' | 'M' | 'g' | 'G' | 't' | 'T')) => (Some(c), &unit[1..]),
        _ => (None, unit),
    };
    let mult: u128 = match prefix.map(|c| c.to_ascii_lowercase()) {
        None => 1,
        Some('k') => 1_000,
        Some('m') => 1_000_000,
        Some('g') => 1_000_000_000,
        Some(_) => 1_000_000_000_000,
    };
    match rest {
        "bps" | "bit/s" | "b/s" => {}
        "" if prefix.is_some() => {}
        "" => return Err(err(UnitErrorReason::MissingUnit)),
        _ => return Err(err(UnitErrorReason::UnknownUnit(unit.to_string()))),
    }
    to_whole(num, mult).map_err(err)
}

/// Parses a duration (`10us`, `1.5ms`, `2s`, `100ns`, `250ps`, `1min`, `1h`; `µs` too) into
/// picoseconds. A bare `0` is allowed; any other number needs a unit.
pub fn parse_time(text: &str) -> Result<Time, UnitError> {
    let err = |r| UnitError::new(Quantity::Duration, text, r);
    let (num, unit) = split_number(text).map_err(err)?;
    let mult: u128 = match unit {
        "ps" => 1,
        "ns" => u128::from(NS),
        "us" | "µs" | "μs" => u128::from(US),
        "ms" => u128::from(MS),
        "s" | "sec" => u128::from(SEC),
        "min" => 60 * u128::from(SEC),
        "h" => 3600 * u128::from(SEC),
        "" if num.mantissa == 0 => 1,
        "" => return Err(err(UnitErrorReason::MissingUnit)),
        u => return Err(err(UnitErrorReason::UnknownUnit(u.to_string()))),
    };
    to_whole(num, mult).map_err(err)
}

/// Parses a size (`1500B`, `1500`, `64KB` = 64,000, `256KiB` = 262,144, `1MB`, `2MiB`, `1GiB`)
/// into bytes. A bare number is bytes.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let err = |r| UnitError::new(Quantity::Size, text, r);
    let (num, unit) = split_number(text).map_err(err)?;
    let mult: u128 = match unit {
        "" | "B" | "byte" | "bytes" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        u => return Err(err(UnitErrorReason::UnknownUnit(u.to_string()))),
    };
    to_whole(num, mult).map_err(err)
}

/// Parses a plain count (`100`, `1e6`): a whole, non-negative number without a unit.
pub fn parse_count(text: &str) -> Result<u64, UnitError> {
    let err = |r| UnitError::new(Quantity::Count, text, r);
    let (num, unit) = split_number(text).map_err(err)?;
    if !unit.is_empty() {
        return Err(err(UnitErrorReason::UnknownUnit(unit.to_string())));
    }
    to_whole(num, 1).map_err(err)
}

/// Parses a fraction: a percentage (`50%` = 0.5) or a plain number (`0.5`). Any finite,
/// non-negative value is accepted; callers check their own range.
pub fn parse_fraction(text: &str) -> Result<f64, UnitError> {
    let err = |r| UnitError::new(Quantity::Fraction, text, r);
    let t = text.trim();
    if t.is_empty() {
        return Err(err(UnitErrorReason::Empty));
    }
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim_end(), 100.0),
        None => (t, 1.0),
    };
    if num.starts_with('-') {
        return Err(err(UnitErrorReason::Negative));
    }
    // Only plain decimals: Rust's parser also takes "inf" and "NaN", which are not fractions.
    if !num
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        let unit_at = num.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(0);
        return Err(err(if unit_at == 0 {
            UnitErrorReason::NotANumber
        } else {
            UnitErrorReason::UnknownUnit(num[unit_at..].trim().to_string())
        }));
    }
    let v: f64 = num.parse().map_err(|_| err(UnitErrorReason::NotANumber))?;
    if !v.is_finite() {
        return Err(err(UnitErrorReason::Overflow));
    }
    Ok(v / scale)
}

/// Writes `v / mult` exactly with at most `max_frac` decimals, or `None` if it needs more.
fn exact(v: u64, mult: u64, max_frac: u32) -> Option<(String, u32)> {
    let (int, rem) = (v / mult, u128::from(v % mult));
    if rem == 0 {
        return Some((int.to_string(), 0));
    }
    let mult = u128::from(mult);
    for d in 1..=max_frac {
        let scaled = rem * 10u128.pow(d);
        if scaled % mult == 0 {
            let frac = scaled / mult;
            let s = format!("{int}.{frac:0width$}", width = d as usize);
            return Some((s, d));
        }
    }
    None
}

/// Picks the largest unit (groups of equal rank compete on fewest decimals) that writes `v`
/// exactly with at most three decimals; the last group's first unit must divide everything.
fn fmt_units(v: u64, groups: &[&[(u64, &str)]]) -> String {
    for group in groups {
        let mut best: Option<(String, u32, &str)> = None;
        for &(mult, name) in group.iter() {
            if v < mult && mult > 1 {
                continue;
            }
            if let Some((s, d)) = exact(v, mult, 3) {
                if best.as_ref().is_none_or(|b| d < b.1) {
                    best = Some((s, d, name));
                }
            }
        }
        if let Some((s, _, name)) = best {
            return format!("{s}{name}");
        }
    }
    // Unreachable with a base unit of 1 in the last group; keep a correct answer anyway.
    v.to_string()
}

/// Formats a rate exactly: `10Gbps`, `2.5Gbps`, `56kbps`, `1500bps`. Parses back with
/// [`parse_rate`] to the same value.
pub fn fmt_rate(bps: u64) -> String {
    fmt_units(
        bps,
        &[
            &[(1_000_000_000_000, "Tbps")],
            &[(1_000_000_000, "Gbps")],
            &[(1_000_000, "Mbps")],
            &[(1_000, "kbps")],
            &[(1, "bps")],
        ],
    )
}

/// Formats a duration exactly: `1.5ms`, `10us`, `250ps`, `0s`. Parses back with
/// [`parse_time`] to the same value.
pub fn fmt_time(t: Time) -> String {
    if t == 0 {
        return "0s".to_string();
    }
    fmt_units(
        t,
        &[&[(SEC, "s")], &[(MS, "ms")], &[(US, "us")], &[(NS, "ns")], &[(1, "ps")]],
    )
}

/// Formats a size exactly: `1500B`, `1.5KB`, `64KiB`, `1MB`, `2MiB`. Binary and decimal
/// prefixes of the same rank compete on fewest decimals (binary wins ties). Parses back with
/// [`parse_size`] to the same value.
pub fn fmt_size(bytes: u64) -> String {
    fmt_units(
        bytes,
        &[
            &[(1 << 40, "TiB"), (1_000_000_000_000, "TB")],
            &[(1 << 30, "GiB"), (1_000_000_000, "GB")],
            &[(1 << 20, "MiB"), (1_000_000, "MB")],
            &[(1 << 10, "KiB"), (1_000, "KB")],
            &[(1, "B")],
        ],
    )
}

/// Bytes for people (reports, estimates), with binary prefixes and three significant digits: `812 B`, `1.50 KiB`,
/// `11.6 GiB`.
pub fn fmt_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    // Rounding can carry into the next unit (1023.9 KiB reads 1024 KiB): fine for an estimate.
    let decimals = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.decimals$} {}", UNITS[i])
}

/// Formats a measured rate approximately, for reports: `9.87Gbps`, `512kbps`.
pub fn fmt_rate_f64(bps: f64) -> String {
    let (v, u) = match bps {
        r if r >= 1e12 => (r / 1e12, "Tbps"),
        r if r >= 1e9 => (r / 1e9, "Gbps"),
        r if r >= 1e6 => (r / 1e6, "Mbps"),
        r if r >= 1e3 => (r / 1e3, "kbps"),
        r => (r, "bps"),
    };
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}{u}")
}

/// Formats a fraction as a percentage: `50%`, `12.5%`.
pub fn fmt_percent(f: f64) -> String {
    let s = format!("{:.3}", f * 100.0);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}

macro_rules! unit_arg {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $quantity:expr, $parse:path, $int:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct $name(pub $ty);

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($quantity.example())
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<$name, E> {
                        let int: fn(i64) -> Result<$ty, UnitErrorReason> = $int;
                        int(n).map($name).map_err(|r| E::custom(UnitError::new($quantity, &n.to_string(), r)))
                    }
                    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<$name, E> {
                        match i64::try_from(n) {
                            Ok(n) => self.visit_i64(n),
                            Err(_) => Err(E::custom(UnitError::new(
                                $quantity,
                                &n.to_string(),
                                UnitErrorReason::Overflow,
                            ))),
                        }
                    }
                    fn visit_f64<E: serde::de::Error>(self, x: f64) -> Result<$name, E> {
                        // Plain floats go through the same text rules (`1.5` = 1.5 base units).
                        self.visit_str(&x.to_string())
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

fn int_needs_unit<T: Default>(n: i64) -> Result<T, UnitErrorReason> {
    match n {
        0 => Ok(T::default()),
        n if n < 0 => Err(UnitErrorReason::Negative),
        _ => Err(UnitErrorReason::MissingUnit),
    }
}

fn int_bytes(n: i64) -> Result<u64, UnitErrorReason> {
    u64::try_from(n).map_err(|_| UnitErrorReason::Negative)
}

fn int_fraction(n: i64) -> Result<f64, UnitErrorReason> {
    if n < 0 {
        Err(UnitErrorReason::Negative)
    } else {
        Ok(n as f64)
    }
}

unit_arg!(
    /// A rate in bit/s read from a TOML string such as `"10Gbps"` (a bare number needs a unit).
    RateArg,
    u64,
    Quantity::Rate,
    parse_rate,
    int_needs_unit
);
unit_arg!(
    /// A duration in picoseconds read from a TOML string such as `"1.5ms"` (or the number 0).
    TimeArg,
    Time,
    Quantity::Duration,
    parse_time,
    int_needs_unit
);
unit_arg!(
    /// A size in bytes read from a TOML string such as `"256KiB"` or a bare integer (bytes).
    SizeArg,
    u64,
    Quantity::Size,
    parse_size,
    int_bytes
);
unit_arg!(
    /// A fraction read from a TOML number (`0.5`) or a percentage string (`"50%"`).
    FractionArg,
    f64,
    Quantity::Fraction,
    parse_fraction,
    int_fraction
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PS;

    fn reason<T: fmt::Debug>(r: Result<T, UnitError>) -> UnitErrorReason {
        r.unwrap_err().reason
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("10Gbps"), Ok(10_000_000_000));
        assert_eq!(parse_rate("1Gbps"), Ok(1_000_000_000));
        assert_eq!(parse_rate("100Mbps"), Ok(100_000_000));
        assert_eq!(parse_rate("56kbps"), Ok(56_000));
        assert_eq!(parse_rate("56Kbps"), Ok(56_000));
        assert_eq!(parse_rate("1500bps"), Ok(1500));
        assert_eq!(parse_rate("25G"), Ok(25_000_000_000));
        assert_eq!(parse_rate("10 M"), Ok(10_000_000));
        assert_eq!(parse_rate("2.5Gbit/s"), Ok(2_500_000_000));
        assert_eq!(parse_rate("100 Kbit/s"), Ok(100_000));
        assert_eq!(parse_rate("1Tbps"), Ok(1_000_000_000_000));
        assert_eq!(parse_rate("1e3Mbps"), Ok(1_000_000_000));
        assert_eq!(parse_rate(" 40Gbps "), Ok(40_000_000_000));
        assert_eq!(
            reason(parse_rate("10 parsecs")),
            UnitErrorReason::UnknownUnit("parsecs".into())
        );
        assert_eq!(
            reason(parse_rate("10GBps")),
            UnitErrorReason::UnknownUnit("GBps".into())
        );
        assert_eq!(reason(parse_rate("10")), UnitErrorReason::MissingUnit);
        assert_eq!(reason(parse_rate("-1Gbps")), UnitErrorReason::Negative);
        assert_eq!(reason(parse_rate("1e400Gbps")), UnitErrorReason::Overflow);
        assert_eq!(reason(parse_rate("99999999999Gbps")), UnitErrorReason::Overflow);
        assert_eq!(reason(parse_rate("1.0001bps")), UnitErrorReason::NotWhole);
        assert_eq!(reason(parse_rate("Gbps")), UnitErrorReason::NotANumber);
        assert_eq!(reason(parse_rate("")), UnitErrorReason::Empty);
        assert_eq!(
            reason(parse_rate("1.2.3Gbps")),
            UnitErrorReason::UnknownUnit(".3Gbps".into())
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_time("10us"), Ok(10 * US));
        assert_eq!(parse_time("1.5ms"), Ok(1_500 * US));
        assert_eq!(parse_time("2s"), Ok(2 * SEC));
        assert_eq!(parse_time("100ns"), Ok(100 * NS));
        assert_eq!(parse_time("250ps"), Ok(250 * PS));
        assert_eq!(parse_time("1min"), Ok(60 * SEC));
        assert_eq!(parse_time("1h"), Ok(3600 * SEC));
        assert_eq!(parse_time(".5s"), Ok(SEC / 2));
        assert_eq!(parse_time("1.000000000001s"), Ok(SEC + 1));
        assert_eq!(parse_time("2.5 µs"), Ok(2_500 * NS));
        assert_eq!(parse_time("0"), Ok(0));
        assert_eq!(parse_time("0.0"), Ok(0));
        assert_eq!(parse_time("1e-3s"), Ok(MS));
        assert_eq!(reason(parse_time("-1ms")), UnitErrorReason::Negative);
        assert_eq!(reason(parse_time("1.5ps")), UnitErrorReason::NotWhole);
        assert_eq!(reason(parse_time("10")), UnitErrorReason::MissingUnit);
        assert_eq!(
            reason(parse_time("10 parsecs")),
            UnitErrorReason::UnknownUnit("parsecs".into())
        );
        assert_eq!(reason(parse_time("1e400s")), UnitErrorReason::Overflow);
        // u64 picoseconds last 213 days.
        assert_eq!(reason(parse_time("6000h")), UnitErrorReason::Overflow);
        assert!(parse_time("5000h").is_ok());
        assert_eq!(reason(parse_time("1e-400s")), UnitErrorReason::NotWhole);
        assert_eq!(parse_time("0e-400s"), Ok(0));
        assert_eq!(
            reason(parse_time("1.0000000000000000000000000000000000000001s")),
            UnitErrorReason::NotWhole
        );
        assert_eq!(parse_time("1.0000000000000000000000000000000000000000s"), Ok(SEC));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1500B"), Ok(1500));
        assert_eq!(parse_size("1500"), Ok(1500));
        assert_eq!(parse_size("64KB"), Ok(64_000));
        assert_eq!(parse_size("64kB"), Ok(64_000));
        assert_eq!(parse_size("256KiB"), Ok(262_144));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("2MiB"), Ok(2 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_size("12 MB"), Ok(12_000_000));
        assert_eq!(
            reason(parse_size("12 parsecs")),
            UnitErrorReason::UnknownUnit("parsecs".into())
        );
        assert_eq!(reason(parse_size("0.5B")), UnitErrorReason::NotWhole);
        assert_eq!(reason(parse_size("-1B")), UnitErrorReason::Negative);
        assert_eq!(reason(parse_size("16EiB")), UnitErrorReason::UnknownUnit("EiB".into()));
        assert_eq!(reason(parse_size("20000000TiB")), UnitErrorReason::Overflow);
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(reason(parse_size("18446744073709551616")), UnitErrorReason::Overflow);
        assert_eq!(
            reason(parse_size("1000000000000000000000000000000000000000000000B")),
            UnitErrorReason::Overflow
        );
    }

    #[test]
    fn counts_and_fractions() {
        assert_eq!(parse_count("100"), Ok(100));
        assert_eq!(parse_count("1e6"), Ok(1_000_000));
        assert_eq!(reason(parse_count("1.5")), UnitErrorReason::NotWhole);
        assert_eq!(
            reason(parse_count("10 flows")),
            UnitErrorReason::UnknownUnit("flows".into())
        );
        assert_eq!(reason(parse_count("-3")), UnitErrorReason::Negative);
        assert_eq!(parse_fraction("50%"), Ok(0.5));
        assert_eq!(parse_fraction("12.5 %"), Ok(0.125));
        assert_eq!(parse_fraction("0.3"), Ok(0.3));
        assert_eq!(reason(parse_fraction("-5%")), UnitErrorReason::Negative);
        assert_eq!(reason(parse_fraction("1e400%")), UnitErrorReason::Overflow);
        assert_eq!(reason(parse_fraction("inf")), UnitErrorReason::NotANumber);
        assert_eq!(reason(parse_fraction("NaN")), UnitErrorReason::NotANumber);
        assert_eq!(
            reason(parse_fraction("5 parsecs")),
            UnitErrorReason::UnknownUnit("parsecs".into())
        );
        assert_eq!(reason(parse_fraction("")), UnitErrorReason::Empty);
    }

    #[test]
    fn error_messages() {
        let e = parse_size("12 parsecs").unwrap_err();
        assert_eq!(
            e.to_string(),
            "expected a size like 256KiB, got \"12 parsecs\" (unknown unit \"parsecs\"; use B, KB, MB, GB, TB \
             (x1000), KiB, MiB, GiB, TiB (x1024))"
        );
        assert!(parse_time("-1ms").unwrap_err().to_string().contains("(negative)"));
        assert!(parse_rate("1e400Gbps").unwrap_err().to_string().contains("too large"));
    }

    #[test]
    fn bytes_for_people() {
        assert_eq!(fmt_bytes(0), "0 B");
        assert_eq!(fmt_bytes(1023), "1023 B");
        assert_eq!(fmt_bytes(1536), "1.50 KiB");
        assert_eq!(fmt_bytes(12_400_000_000), "11.5 GiB");
        assert_eq!(fmt_bytes(u64::MAX), "16.0 EiB");
    }

    #[test]
    fn formatting_round_trips() {
        assert_eq!(fmt_rate(10_000_000_000), "10Gbps");
        assert_eq!(fmt_rate(2_500_000_000), "2.5Gbps");
        assert_eq!(fmt_rate(56_000), "56kbps");
        assert_eq!(fmt_rate(1500), "1.5kbps");
        assert_eq!(fmt_rate(7), "7bps");
        assert_eq!(fmt_rate(0), "0bps");
        assert_eq!(fmt_time(1_500 * US), "1.5ms");
        assert_eq!(fmt_time(10 * US), "10us");
        assert_eq!(fmt_time(250), "250ps");
        assert_eq!(fmt_time(1_234_567), "1234.567ns");
        assert_eq!(fmt_time(0), "0s");
        assert_eq!(fmt_size(1500), "1.5KB");
        assert_eq!(fmt_size(1536), "1.5KiB");
        assert_eq!(fmt_size(262_144), "256KiB");
        assert_eq!(fmt_size(64_000), "64KB");
        assert_eq!(fmt_size(1_000_000), "1MB");
        assert_eq!(fmt_size(1023), "1.023KB");
        assert_eq!(fmt_size(999), "999B");
        assert_eq!(fmt_size(1_234_567), "1234.567KB");
        assert_eq!(fmt_rate_f64(9.87e9), "9.87Gbps");
        assert_eq!(fmt_percent(0.125), "12.5%");
        for v in [
            0u64,
            1,
            7,
            999,
            1000,
            1001,
            1023,
            1024,
            1025,
            123_456_789,
            u64::MAX,
            1 << 40,
            3 << 33,
        ] {
            assert_eq!(parse_rate(&fmt_rate(v)), Ok(v), "{}", fmt_rate(v));
            assert_eq!(parse_time(&fmt_time(v)), Ok(v), "{}", fmt_time(v));
            assert_eq!(parse_size(&fmt_size(v)), Ok(v), "{}", fmt_size(v));
        }
    }

    #[test]
    fn serde_wrappers() {
        #[derive(serde::Deserialize, Debug)]
        struct T {
            rate: RateArg,
            delay: TimeArg,
            size: SizeArg,
            n: SizeArg,
            load: FractionArg,
            load2: FractionArg,
            zero: TimeArg,
        }
        let t: T = toml::from_str(
            "rate = \"10Gbps\"\ndelay = \"1.5us\"\nsize = \"64KiB\"\nn = 1500\nload = 0.5\nload2 = \"30%\"\nzero = 0\n",
        )
        .unwrap();
        assert_eq!(t.rate, RateArg(10_000_000_000));
        assert_eq!(t.delay, TimeArg(1_500 * NS));
        assert_eq!(t.size, SizeArg(65_536));
        assert_eq!(t.n, SizeArg(1500));
        assert_eq!(t.load, FractionArg(0.5));
        assert_eq!(t.load2, FractionArg(0.3));
        assert_eq!(t.zero, TimeArg(0));
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct D {
            delay: TimeArg,
        }
        let e = toml::from_str::<D>("delay = 5\n").unwrap_err();
        assert!(e.message().contains("needs a unit"), "{}", e.message());
        let e = toml::from_str::<D>("delay = \"5 parsecs\"\n").unwrap_err();
        assert!(e
            .message()
            .starts_with("expected a duration like 10us, got \"5 parsecs\""));
        assert_eq!(e.span(), Some(8..19));
    }
}
