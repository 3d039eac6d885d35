//! Every TCPU threshold, with the paper's value as its default.
//!
//! "Paper" below is Lu, Miao, Xiong, Guo, "Using CPU as a Traffic Co-processing Unit in
//! Commodity Switches", HotSDN 2012. Values the paper does not give are marked **ours** with
//! the reason for the choice. Times are picoseconds, rates bits per second, sizes bytes unless
//! a name says packets.

use crate::types::{Time, MS, SEC};
use serde::{Deserialize, Serialize};
use tandem_time::units::{RateArg, SizeArg, TimeArg};

/// TCPU's parameters. `TcpuConfig::default()` is the paper's testbed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TcpuConfig {
    // ---- switch ----
    /// Number of front-panel output ports the core manages. Paper §4: 16 x GbE ports.
    pub ports: u16,
    /// Port speed C in bit/s. Paper §4: 1 GbE ports.
    pub port_bps: u64,

    // ---- large flow table (paper §3.1) ----
    /// k, the exact 5-tuple TCAM entries available for flows. Paper §4: 1,792 on the testbed
    /// (part of the TCAM reserved); §3.1 cites 2,048 (Trident+) and 4,096 (Trident2).
    pub asic_flow_entries: u32,
    /// T_inactive: an ASIC entry with no packet for this long may be replaced by a new flow.
    /// Paper §3.1: 1 s.
    pub t_inactive: Time,
    /// How often all flows are ranked by rate and the top k swapped into the ASIC.
    /// Paper §3.1: 100 ms.
    pub rank_interval: Time,
    /// A flow that has been on the CPU and silent this long is forgotten. **Ours**: 10 s, ten
    /// times T_inactive, bounds the table; the paper's 60 s timeout (§3.1) is a measurement
    /// artefact of their instrumentation, not a switch parameter.
    pub flow_idle_timeout: Time,

    // ---- ASIC table-operation channel (paper §4) ----
    /// TCAM entry insertions per second. Paper §4: 14,144/s measured.
    pub inserts_per_sec: u64,
    /// TCAM entry deletions per second. Paper §4: 9,524/s measured.
    pub deletes_per_sec: u64,
    /// Counter reads per second (one entry's counter per read). Paper §4: 86,956/s measured.
    pub counter_reads_per_sec: u64,
    /// Extra latency between an operation leaving the channel and taking effect. **Ours**: 0,
    /// because the measured service times (70.7 us per insert, 105 us per delete) already are
    /// the "tens of microseconds" rule setup time of paper §3.2.1.
    pub rule_setup_latency: Time,
    /// Counter-read batch: a ranking reads the TCAM's counters in batches of this many entries
    /// (at least 1), so that urgent and new-flow operations can go between batches. **Ours**:
    /// 8 (92 us at the measured read rate, under one delete), as an SDK reads counters in DMA
    /// chunks; the paper gives only the read rate.
    pub counter_read_batch: u32,
    /// Share of the channel's time, in percent, that the periodic swap plan may book per ranking
    /// interval; the rest stays free for urgent operations (R_port, long-flow pins, attack
    /// rules). **Ours**: 80%.
    pub bulk_channel_share_pct: u32,

    // ---- deep buffer (paper §3.2.1) ----
    /// Turn the deep buffer (R_port redirection) on.
    pub deep_buffer: bool,
    /// Q_limit, the ASIC output queue limit in packets. Paper §4: 100 full-sized packets. The
    /// core does not enforce it (the ASIC does); it is here to check the headroom.
    pub q_limit_pkts: u32,
    /// Q_redirect: an output queue at or above this many packets gets R_port. Paper §4: 80.
    pub q_redirect_pkts: u32,
    /// R_port stays at least this long after it takes effect before an empty DRAM queue removes
    /// it. **Ours**: 1 ms, about the time the ASIC takes to drain Q_redirect full-sized packets
    /// at 1 Gb/s (0.96 ms); without it R_port would be removed the instant it took effect,
    /// before the first redirected packet reached the CPU.
    pub rport_min_hold: Time,
    /// DRAM packet buffer size. **Ours**: 1 GiB (paper §1: the Arista 7050S has 4 GB of DRAM;
    /// §4: the flash crowd used at most 16 MB).
    pub dram_bytes: u64,
    /// Non-TCP traffic to the CPU for one port is capped at this multiple of C. Paper §3.2.1:
    /// 2 (TCP slow start can at most double the rate, nothing should be burstier).
    pub non_tcp_cap_factor: u64,
    /// Depth of the non-TCP token bucket. **Ours**: 64 KiB, a few dozen packets.
    pub non_tcp_burst_bytes: u64,
    /// CPU cores forwarding packets. Paper §4: about one core forwarded 3.9 Gb/s.
    pub cpu_cores: u32,
    /// CPU cost per forwarded packet. **Ours**: 1 us (a kernel forwarding path on one core does
    /// about 1 Mpps; the paper's 3.9 Gb/s of full-sized packets is 0.33 Mpps, link-bound).
    pub cpu_per_packet: Time,
    /// Internal ASIC<->CPU links. Paper §4: four GbE links.
    pub internal_links: u32,
    /// Speed of each internal link in bit/s. Paper §4: 1 Gb/s.
    pub internal_link_bps: u64,
    /// Traffic class the CPU sends back in (the ASIC's high-priority queue, paper §3.2.2).
    /// **Ours**: 7.
    pub cpu_return_class: u8,

    // ---- long flows (paper §3.2.2) ----
    /// Turn long-flow pinning on.
    pub long_flows: bool,
    /// A flow that has carried at least this many bytes is long. Paper §3.2.2: 50 KB (decimal).
    pub long_flow_bytes: u64,
    /// Only TCP flows are pinned (an attacker's UDP bursts must stay on the redirect path).
    /// **Ours**: true; the paper's long flows are TCP.
    pub long_flows_tcp_only: bool,
    /// Q_lflows, the queue limit of the long-flow class, packets. Paper §4: 50. Must be below
    /// Q_redirect. The adapter applies it to `long_flow_class`.
    pub q_lflows_pkts: u32,
    /// Traffic class of pinned long flows. **Ours**: 1.
    pub long_flow_class: u8,

    // ---- rule priorities (paper §3.2.1 and §3.2.2) ----
    /// Priority of per-flow rules R_flow_i (lowest).
    pub prio_flow: u16,
    /// Priority of the port redirect R_port: beats R_flow_i (paper §3.2.1).
    pub prio_port: u16,
    /// Priority of long-flow rules R_flow_j: beats R_port (paper §3.2.2).
    pub prio_long: u16,
    /// Priority of the attack-source redirect: beats everything (**ours**: attackers must reach
    /// the shaper even if one of their flows was pinned).
    pub prio_attack: u16,

    // ---- low-rate burst attack detector (paper §3.2.3, §4) ----
    /// Turn the detector and shaper on.
    pub attack_defense: bool,
    /// Rate bin width. Paper §3.2.3: 1 ms.
    pub attack_bin: Time,
    /// Observation window. Paper §3.2.3: 3 s.
    pub attack_window: Time,
    /// Busy bins must carry more than this percentage of the window's volume. Paper: 90%.
    pub attack_busy_volume_pct: u32,
    /// Busy bins must span less than this percentage of the window. Paper: 10%.
    pub attack_busy_time_pct: u32,
    /// The minimum TCP RTO the bursts' period is compared with. Paper §3.2.3: 300 ms (Windows).
    pub attack_min_rto: Time,
    /// How far the median burst period may be from `attack_min_rto`. **Ours**: 50 ms, so the
    /// paper's 320 ms attack (§4) matches a 300 ms RTO.
    pub attack_period_tolerance: Time,
    /// Fewest bursts in a window to estimate a period. **Ours**: 3 (two periods).
    pub attack_min_bursts: u32,
    /// Busy bins separated by at most this many idle bins are one burst. **Ours**: 2.
    pub attack_merge_gap_bins: u32,
    /// A source is an attacker when at least this percentage of its volume in the window fell
    /// in busy bins. **Ours**: 90%, mirroring the port-level volume test.
    pub attack_src_busy_pct: u32,
    /// BW_attack, the rate attackers are shaped to. Paper §4: 200 Mb/s.
    pub bw_attack_bps: u64,
}

impl Default for TcpuConfig {
    fn default() -> Self {
        TcpuConfig {
            ports: 16,
            port_bps: 1_000_000_000,
            asic_flow_entries: 1_792,
            t_inactive: SEC,
            rank_interval: 100 * MS,
            flow_idle_timeout: 10 * SEC,
            inserts_per_sec: 14_144,
            deletes_per_sec: 9_524,
            counter_reads_per_sec: 86_956,
            rule_setup_latency: 0,
            counter_read_batch: 8,
            bulk_channel_share_pct: 80,
            deep_buffer: true,
            q_limit_pkts: 100,
            q_redirect_pkts: 80,
            rport_min_hold: MS,
            dram_bytes: 1 << 30,
            non_tcp_cap_factor: 2,
            non_tcp_burst_bytes: 64 * 1024,
            cpu_cores: 1,
            cpu_per_packet: 1_000_000,
            internal_links: 4,
            internal_link_bps: 1_000_000_000,
            cpu_return_class: 7,
            long_flows: true,
            long_flow_bytes: 50_000,
            long_flows_tcp_only: true,
            q_lflows_pkts: 50,
            long_flow_class: 1,
            prio_flow: 10,
            prio_port: 20,
            prio_long: 30,
            prio_attack: 40,
            attack_defense: true,
            attack_bin: MS,
            attack_window: 3 * SEC,
            attack_busy_volume_pct: 90,
            attack_busy_time_pct: 10,
            attack_min_rto: 300 * MS,
            attack_period_tolerance: 50 * MS,
            attack_min_bursts: 3,
            attack_merge_gap_bins: 2,
            attack_src_busy_pct: 90,
            bw_attack_bps: 200_000_000,
        }
    }
}

/// Most rate bins one attack window may hold (bounds the detector's memory per port).
pub const MAX_ATTACK_BINS: u64 = 1 << 20;

/// Why a configuration was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigError {
    /// This parameter must be positive.
    Zero(&'static str),
    /// This percentage must be within 1..=100.
    Percent(&'static str),
    /// Q_redirect must be below Q_limit, or the redirect would never fire before drops.
    RedirectNotBelowLimit,
    /// Q_lflows must be below Q_redirect, or long flows would trigger the redirect.
    LflowsNotBelowRedirect,
    /// Priorities must be ordered flow < port < long < attack.
    PriorityOrder,
    /// The attack window must be a whole number of bins, at most [`MAX_ATTACK_BINS`].
    AttackBins,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::Zero(p) => write!(f, "tcpu config: {p} must be positive"),
            ConfigError::Percent(p) => write!(f, "tcpu config: {p} must be a percentage in 1..=100"),
            ConfigError::RedirectNotBelowLimit => write!(f, "tcpu config: q_redirect_pkts must be below q_limit_pkts"),
            ConfigError::LflowsNotBelowRedirect => {
                write!(f, "tcpu config: q_lflows_pkts must be below q_redirect_pkts")
            }
            ConfigError::PriorityOrder => {
                write!(
                    f,
                    "tcpu config: priorities must satisfy prio_flow < prio_port < prio_long < prio_attack"
                )
            }
            ConfigError::AttackBins => write!(
                f,
                "tcpu config: attack_window must be a whole number (at most {MAX_ATTACK_BINS}) of attack_bin"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

impl TcpuConfig {
    /// Checks the parameters; [`crate::Tcpu::new`] calls this.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let positive: [(&'static str, u64); 15] = [
            ("ports", u64::from(self.ports)),
            ("port_bps", self.port_bps),
            ("t_inactive", self.t_inactive),
            ("rank_interval", self.rank_interval),
            ("flow_idle_timeout", self.flow_idle_timeout),
            ("inserts_per_sec", self.inserts_per_sec),
            ("deletes_per_sec", self.deletes_per_sec),
            ("counter_reads_per_sec", self.counter_reads_per_sec),
            ("counter_read_batch", u64::from(self.counter_read_batch)),
            ("non_tcp_cap_factor", self.non_tcp_cap_factor),
            ("cpu_cores", u64::from(self.cpu_cores)),
            ("internal_links", u64::from(self.internal_links)),
            ("internal_link_bps", self.internal_link_bps),
            ("attack_bin", self.attack_bin),
            ("bw_attack_bps", self.bw_attack_bps),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(ConfigError::Zero(name));
            }
        }
        let pcts = [
            ("bulk_channel_share_pct", self.bulk_channel_share_pct),
            ("attack_busy_volume_pct", self.attack_busy_volume_pct),
            ("attack_busy_time_pct", self.attack_busy_time_pct),
            ("attack_src_busy_pct", self.attack_src_busy_pct),
        ];
        for (name, v) in pcts {
            if v == 0 || v > 100 {
                return Err(ConfigError::Percent(name));
            }
        }
        if self.q_redirect_pkts >= self.q_limit_pkts {
            return Err(ConfigError::RedirectNotBelowLimit);
        }
        if self.q_lflows_pkts >= self.q_redirect_pkts {
            return Err(ConfigError::LflowsNotBelowRedirect);
        }
        if !(self.prio_flow < self.prio_port && self.prio_port < self.prio_long && self.prio_long < self.prio_attack) {
            return Err(ConfigError::PriorityOrder);
        }
        if !self.attack_window.is_multiple_of(self.attack_bin) || self.attack_window / self.attack_bin > MAX_ATTACK_BINS
        {
            return Err(ConfigError::AttackBins);
        }
        if self.attack_window == 0 {
            return Err(ConfigError::Zero("attack_window"));
        }
        Ok(())
    }

    /// The ASIC redirect headroom Q_limit - Q_redirect in packets (paper §3.2.1: "tens of
    /// packets" so nothing drops while R_port is being set up).
    pub fn headroom_pkts(&self) -> u32 {
        self.q_limit_pkts.saturating_sub(self.q_redirect_pkts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_paper_values() {
        let c = TcpuConfig::default();
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(c.asic_flow_entries, 1_792);
        assert_eq!(c.headroom_pkts(), 20);
    }

    #[test]
    fn refuses_bad_orders() {
        let mut c = TcpuConfig {
            q_redirect_pkts: 100,
            ..TcpuConfig::default()
        };
        assert_eq!(c.validate(), Err(ConfigError::RedirectNotBelowLimit));
        c.q_redirect_pkts = 40;
        assert_eq!(c.validate(), Err(ConfigError::LflowsNotBelowRedirect));
        c = TcpuConfig {
            prio_long: 15,
            ..TcpuConfig::default()
        };
        assert_eq!(c.validate(), Err(ConfigError::PriorityOrder));
        c = TcpuConfig {
            port_bps: 0,
            ..TcpuConfig::default()
        };
        assert_eq!(c.validate(), Err(ConfigError::Zero("port_bps")));
        c = TcpuConfig {
            attack_window: 3 * SEC + 1,
            ..TcpuConfig::default()
        };
        assert_eq!(c.validate(), Err(ConfigError::AttackBins));
    }
}

/// How a parameter with a unit is written.
#[derive(Clone, Copy)]
enum Unit {
    Time,
    Rate,
    Size,
}

/// The parameters written with a unit (`rank_interval = "100ms"`, `dram_bytes = "1GiB"`,
/// `bw_attack_bps = "200Mbps"`); every other one is a plain TOML value.
const UNIT_PARAMS: &[(&str, Unit)] = &[
    ("port_bps", Unit::Rate),
    ("t_inactive", Unit::Time),
    ("rank_interval", Unit::Time),
    ("flow_idle_timeout", Unit::Time),
    ("rule_setup_latency", Unit::Time),
    ("rport_min_hold", Unit::Time),
    ("dram_bytes", Unit::Size),
    ("non_tcp_burst_bytes", Unit::Size),
    ("cpu_per_packet", Unit::Time),
    ("internal_link_bps", Unit::Rate),
    ("long_flow_bytes", Unit::Size),
    ("attack_bin", Unit::Time),
    ("attack_window", Unit::Time),
    ("attack_min_rto", Unit::Time),
    ("attack_period_tolerance", Unit::Time),
    ("bw_attack_bps", Unit::Rate),
];

/// Replaces every parameter of `t` that is written with a unit by its value in the base unit
/// (picoseconds, bit/s, bytes), so that the table deserialises into a [`TcpuConfig`]. The
/// error names the parameter. Sizes may also be bare integers (bytes); times and rates need a
/// unit (or are 0), as in scenario files ([`tandem_time::units`]).
pub fn read_units(t: &mut toml::Table) -> Result<(), (&'static str, String)> {
    for &(name, unit) in UNIT_PARAMS {
        let Some(v) = t.remove(name) else { continue };
        let n = match unit {
            Unit::Time => TimeArg::deserialize(v).map(|a| a.0),
            Unit::Rate => RateArg::deserialize(v).map(|a| a.0),
            Unit::Size => SizeArg::deserialize(v).map(|a| a.0),
        }
        .map_err(|e| e.message().to_string())
        .map_err(|e| (name, e))?;
        let n = i64::try_from(n).map_err(|_| (name, "too large".to_string()))?;
        t.insert(name.to_string(), toml::Value::Integer(n));
    }
    Ok(())
}
