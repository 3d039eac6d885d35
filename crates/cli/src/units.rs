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

/// Parses a duration into nanoseconds with the scenario files' grammar
/// ([`tandem_sim::units::parse_time`]): `60s`, `1.5ms`, `250us`, `10ns`, `2min`, `1h` (`sec`,
/// `µs` too; a bare `0`). One syntax on the command line and in scenarios; a value finer than a
/// nanosecond is refused here, as the tools count nanoseconds.
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    let ps = tandem_sim::units::parse_time(text.trim()).map_err(|e| e.to_string())?;
    if ps % 1_000 != 0 {
        return Err(format!("`{text}`: finer than a nanosecond"));
    }
    Ok(ps / 1_000)
}

/// Parses a duration in whole seconds (`60s`, `2min`, `0`), as a flow timeout takes it.
pub fn parse_duration_secs(text: &str) -> Result<u16, String> {
    let ns = parse_duration_ns(text)?;
    if ns % 1_000_000_000 != 0 {
        return Err(format!("`{text}`: a whole number of seconds"));
    }
    u16::try_from(ns / 1_000_000_000).map_err(|_| format!("`{text}`: at most 65535s"))
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

/// Formats a count of bytes with binary prefixes (one formatter for the whole project).
pub use tandem_sim::units::fmt_bytes;

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
        assert_eq!(parse_duration_ns("2min"), Ok(120_000_000_000));
        assert!(parse_duration_ns("250ps").is_err());
        assert_eq!(parse_duration_secs("5s"), Ok(5));
        assert_eq!(parse_duration_secs("0"), Ok(0));
        assert!(parse_duration_secs("1.5s").is_err());
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
