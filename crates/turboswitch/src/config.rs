//! Every parameter of TurboSwitch and of its switch model, its default and where the default
//! comes from ("slides" = Scazzariello, Caiazzi, Chiesa, ICNP 2024 talk; "ours" = not given
//! there, chosen here and documented in docs/systems/turboswitch.md).

use crate::types::{Time, MS, NS, US};

/// Most payload slots a configuration may ask for (a 24-bit ID space).
pub const MAX_SLOTS: u32 = 1 << 24;

/// Where payloads go while their header is at the NF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Baseline: no splitting, whole packets go to the NF.
    NoSplit,
    /// Baseline PayloadPark: only `payloadpark_bytes` of each payload are kept in switch SRAM,
    /// the rest of the packet goes to the NF.
    PayloadPark,
    /// TurboSwitch (a): the payload recirculates until its processed header has come back.
    Recirculate,
    /// TurboSwitch (b): the payload waits in a parking queue filled with copies so that its
    /// queueing delay matches the NF latency.
    Copies,
}

impl Mode {
    /// Short name for tables and CSV.
    pub fn name(self) -> &'static str {
        match self {
            Mode::NoSplit => "no-split",
            Mode::PayloadPark => "payloadpark",
            Mode::Recirculate => "turboswitch-recirc",
            Mode::Copies => "turboswitch-copies",
        }
    }
}

/// The switch program's parameters (what the sans-IO core needs).
#[derive(Debug, Clone, PartialEq)]
pub struct CoreConfig {
    /// Parking mode (or baseline).
    pub mode: Mode,
    /// Packets larger than this are split; the first `split_bytes` go to the NF (issue: 64 B).
    pub split_bytes: u32,
    /// Bytes of the ID added to a header sent to the NF (ours: 4 B slot + 4 B generation).
    pub tag_bytes: u32,
    /// Payload slots, i.e. IDs that can be in flight (ours: 65,536, a 16-bit ID space).
    pub slots: u32,
    /// A slot whose header or payload has not come back after this long is reclaimed and its
    /// packet counted lost (ours: 1 ms, 50x the NF latency).
    pub reclaim_timeout: Time,
    /// Recirculation ports payloads are spread over (slot index modulo this).
    pub recirc_ports: u16,
    /// Rate of every port, recirculation ports included (slides: 100 Gb/s wiring).
    pub port_bps: u64,
    /// Bytes of payload PayloadPark keeps in SRAM (slides: "Remove only 160B").
    pub payloadpark_bytes: u32,
    /// Most copies made of one payload (ours: size of the largest multicast group set up).
    pub max_copies: u32,
    /// Parking delay the copies controller aims at; `None` learns it from header round trips
    /// (mean + `target_dev_mult` x mean deviation, TCP-style estimator), i.e. zero
    /// configuration.
    pub target_delay: Option<Time>,
    /// Multiplier of the round-trip mean deviation in the learned target (ours: 2).
    pub target_dev_mult: u32,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            mode: Mode::Recirculate,
            split_bytes: 64,
            tag_bytes: 8,
            slots: 65_536,
            reclaim_timeout: MS,
            recirc_ports: 1,
            port_bps: 100_000_000_000,
            payloadpark_bytes: 160,
            max_copies: 32,
            target_delay: None,
            target_dev_mult: 2,
        }
    }
}

/// The switch hardware around the program (what the model needs).
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchConfig {
    /// Shared packet buffer (ours: 22 MB, the size commonly quoted for a Tofino 1; the issue
    /// asks for "tens of MB").
    pub buffer_bytes: u64,
    /// Ingress-to-egress pipeline latency, paid again on every recirculation and on the way
    /// back from the NF (ours: 500 ns, sub-microsecond like a Tofino's port-to-port latency).
    pub pipeline_latency: Time,
    /// Queue statistics reach the controller this late (slides: 1 us).
    pub stats_delay: Time,
    /// Queue statistics are sampled this often (ours: 1 us).
    pub stats_period: Time,
    /// Output ports merged packets are spread over (packet id modulo this).
    pub output_ports: u16,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer_bytes: 22_000_000,
            pipeline_latency: 500 * NS,
            stats_delay: US,
            stats_period: US,
            output_ports: 1,
        }
    }
}

/// A parameter out of range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// A count that must be at least 1 is 0.
    Zero(&'static str),
    /// A value is outside what the model supports.
    Invalid(&'static str),
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::Zero(p) => write!(f, "{p} must be at least 1"),
            ConfigError::Invalid(p) => write!(f, "{p} is out of range"),
        }
    }
}

impl std::error::Error for ConfigError {}

impl CoreConfig {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.slots == 0 {
            return Err(ConfigError::Zero("slots"));
        }
        if self.slots > MAX_SLOTS {
            return Err(ConfigError::Invalid("slots"));
        }
        if self.recirc_ports == 0 {
            return Err(ConfigError::Zero("recirc_ports"));
        }
        if self.port_bps == 0 {
            return Err(ConfigError::Zero("port_bps"));
        }
        if self.split_bytes == 0 {
            return Err(ConfigError::Zero("split_bytes"));
        }
        if self.reclaim_timeout == 0 {
            return Err(ConfigError::Zero("reclaim_timeout"));
        }
        Ok(())
    }
}

impl SwitchConfig {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.output_ports == 0 {
            return Err(ConfigError::Zero("output_ports"));
        }
        if self.stats_period == 0 {
            return Err(ConfigError::Zero("stats_period"));
        }
        if self.buffer_bytes == 0 {
            return Err(ConfigError::Zero("buffer_bytes"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_zeros_are_refused() {
        assert!(CoreConfig::default().validate().is_ok());
        assert!(SwitchConfig::default().validate().is_ok());
        let c = CoreConfig {
            slots: 0,
            ..CoreConfig::default()
        };
        assert_eq!(c.validate(), Err(ConfigError::Zero("slots")));
        let c = CoreConfig {
            slots: u32::MAX,
            ..CoreConfig::default()
        };
        assert_eq!(c.validate(), Err(ConfigError::Invalid("slots")));
        let s = SwitchConfig {
            output_ports: 0,
            ..SwitchConfig::default()
        };
        assert!(s.validate().is_err());
    }
}
