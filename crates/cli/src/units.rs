//! Quantities with units on the command line (`60s`, `10ms`, `1.5us`).

/// Parses `ADDR:PORT` where ADDR is an IP address or a host name (`localhost:6653`); a name
/// is resolved once, here, to its first address (IPv4 first when it has both).
pub fn parse_socket_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(a) = text.trim().parse() {
        return Ok(a);
    }
    let addrs: Vec<std::net::SocketAddr> = text
        .trim()
        .to_socket_addrs()
        .map_err(|e| format!("`{text}`: expected ADDR:PORT (e.g. 127.0.0.1:6653 or localhost:6653): {e}"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| format!("`{text}`: the name has no address"))
}

/// Parses a count that must be at least 1 (`--max-flows`).
pub fn parse_positive(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{text}` is not a whole number")),
    }
}

/// Parses a duration such as `60s`, `1.5ms`, `250us`, `10ns`, `2m` or `1h` into nanoseconds.
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale: u64 = match unit.trim() {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "" => return Err(format!("`{text}` needs a unit (ns, us, ms, s, m, h)")),
        u => return Err(format!("`{u}` is not a time unit (ns, us, ms, s, m, h)")),
    };
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    if whole.is_empty() && frac.is_empty() {
        return Err(format!("`{text}` has no number"));
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| format!("`{text}` is not a number"))?
    };
    let mut ns = whole
        .checked_mul(scale)
        .ok_or_else(|| format!("`{text}` is too large"))?;
    if !frac.is_empty() {
        if !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 18 {
            return Err(format!("`{text}` is not a number"));
        }
        let digits: u128 = frac.parse().map_err(|_| format!("`{text}` is not a number"))?;
        let part = digits * u128::from(scale) / 10u128.pow(frac.len() as u32);
        ns = ns
            .checked_add(part as u64)
            .ok_or_else(|| format!("`{text}` is too large"))?;
    }
    Ok(ns)
}

/// Formats nanoseconds for people: `1.500 s`, `20.000 ms`.
pub fn fmt_duration_ns(ns: u64) -> String {
    match ns {
        n if n >= 1_000_000_000 => format!("{:.3} s", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.3} ms", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.3} us", n as f64 / 1e3),
        n => format!("{n} ns"),
    }
}

/// Formats a count of bytes with binary prefixes.
pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.2} {}", UNITS[i])
    }
}

/// Formats a rate in bits per second with SI prefixes.
pub fn fmt_bps(bps: f64) -> String {
    match bps {
        r if r >= 1e9 => format!("{:.2} Gbit/s", r / 1e9),
        r if r >= 1e6 => format!("{:.2} Mbit/s", r / 1e6),
        r if r >= 1e3 => format!("{:.2} kbit/s", r / 1e3),
        r => format!("{r:.0} bit/s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("60s"), Ok(60_000_000_000));
        assert_eq!(parse_duration_ns("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_duration_ns("250us"), Ok(250_000));
        assert_eq!(parse_duration_ns(".5s"), Ok(500_000_000));
        assert_eq!(parse_duration_ns("2m"), Ok(120_000_000_000));
        assert!(parse_duration_ns("60").unwrap_err().contains("needs a unit"));
        assert!(parse_duration_ns("60 parsecs").is_err());
        assert!(parse_duration_ns("s").is_err());
        assert!(parse_duration_ns("1.2.3s").is_err());
        assert!(parse_duration_ns("99999999999999999999h").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt_duration_ns(1_500_000_000), "1.500 s");
        assert_eq!(fmt_bytes(1536), "1.50 KiB");
        assert_eq!(fmt_bps(2.5e9), "2.50 Gbit/s");
    }
}

#[cfg(test)]
mod addr_tests {
    use super::*;

    #[test]
    fn addresses_take_names_and_numbers() {
        assert_eq!(parse_socket_addr("127.0.0.1:6653").unwrap().port(), 6653);
        assert_eq!(parse_socket_addr("[::1]:6653").unwrap().port(), 6653);
        let a = parse_socket_addr("localhost:6653").unwrap();
        assert!(a.ip().is_loopback() && a.port() == 6653, "{a}");
        assert!(parse_socket_addr("localhost").is_err());
        assert!(parse_socket_addr("127.0.0.1:99999").is_err());
    }
}
