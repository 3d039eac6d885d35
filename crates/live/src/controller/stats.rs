//! The controller's counters: lock-free, shared by every task, rendered in the Prometheus text
//! format for the metrics endpoint and parsed back by `tandem controller stats`.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! counters {
    ($( $(#[doc = $doc:literal])* $name:ident : $kind:literal, )*) => {
        /// Every counter of a running controller (all monotonic unless marked as a gauge).
        #[derive(Debug, Default)]
        pub struct Stats {
            $( $(#[doc = $doc])* pub $name: AtomicU64, )*
        }

        impl Stats {
            /// (name, kind, help, value) of every counter, in declaration order.
            pub fn rows(&self) -> Vec<(&'static str, &'static str, &'static str, u64)> {
                vec![$( (stringify!($name), $kind, concat!($($doc),*), self.$name.load(Ordering::Relaxed)), )*]
            }
        }
    };
}

counters! {
    /// TCP connections accepted.
    connections_accepted: "counter",
    /// TCP connections closed at accept: over the total or per-address cap.
    connections_refused: "counter",
    /// Connections closed for sending no whole message for the keepalive's time (a trickle).
    message_timeouts: "counter",
    /// Switches connected now (handshake done).
    switches_connected: "gauge",
    /// Handshakes completed (features reply received).
    handshakes: "counter",
    /// Connections closed for failing the handshake (no common version, timeout).
    handshake_failures: "counter",
    /// Connections closed in the TLS handshake (no or an untrusted client certificate, not
    /// TLS, timeout); only with TLS on.
    tls_failures: "counter",
    /// Connections closed, for any reason.
    disconnects: "counter",
    /// Connections replaced by a newer one of the same datapath.
    replaced: "counter",
    /// Messages received.
    messages_in: "counter",
    /// packet_in messages received from connected switches.
    packet_ins: "counter",
    /// packet_in messages ignored (before the handshake, or not usable).
    packet_ins_ignored: "counter",
    /// Messages that did not parse, had an unknown type or a wrong version (answered with an error).
    bad_messages: "counter",
    /// Connections closed because their byte stream could not be framed.
    unframeable_streams: "counter",
    /// OFPT_ERROR messages sent.
    errors_sent: "counter",
    /// OFPT_ERROR messages received from switches.
    errors_received: "counter",
    /// Echo requests sent for keepalive.
    echo_requests_sent: "counter",
    /// Echo requests from switches answered.
    echo_replies_sent: "counter",
    /// Connections closed after the keepalive went unanswered.
    echo_timeouts: "counter",
    /// Connections closed because a write did not finish in time (a switch that does not read).
    write_timeouts: "counter",
    /// Events shed from a full pool (the oldest go first).
    events_shed: "counter",
    /// Batches handed to a backend.
    batches: "counter",
    /// Events in those batches.
    batch_events: "counter",
    /// Largest batch so far.
    batch_max: "gauge",
    /// Replies (flow_mod, packet_out, ...) queued for sending.
    replies: "counter",
    /// Replies dropped because their switch's write queue was full or gone.
    replies_dropped: "counter",
    /// Bytes written to switches.
    bytes_out: "counter",
    /// Bytes read from switches.
    bytes_in: "counter",
}

impl Stats {
    /// Adds `n` to a counter.
    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    /// Adds one to a counter.
    pub fn inc(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Takes one from a gauge.
    pub fn dec(c: &AtomicU64) {
        c.fetch_sub(1, Ordering::Relaxed);
    }

    /// The Prometheus text exposition of every counter, names prefixed `tandem_controller_`.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for (name, kind, help, v) in self.rows() {
            let _ = writeln!(s, "# HELP tandem_controller_{name} {help}");
            let _ = writeln!(s, "# TYPE tandem_controller_{name} {kind}");
            let _ = writeln!(s, "tandem_controller_{name} {v}");
        }
        s
    }
}

/// Reads `name value` pairs back from a Prometheus text exposition (comments skipped, the
/// `tandem_controller_` prefix removed); lines that do not parse are skipped.
pub fn parse_exposition(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (name, v) = l.split_once(' ')?;
            let name = name.strip_prefix("tandem_controller_").unwrap_or(name);
            Some((name.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_round_trips() {
        let s = Stats::default();
        Stats::add(&s.packet_ins, 42);
        Stats::inc(&s.batches);
        let rows = parse_exposition(&s.render());
        assert_eq!(rows.len(), s.rows().len());
        assert!(rows.contains(&("packet_ins".to_string(), 42)));
        assert!(rows.contains(&("batches".to_string(), 1)));
        assert!(s.render().contains("# TYPE tandem_controller_switches_connected gauge"));
    }
}
