//! Every parameter of the device, its default and where it comes from.

use crate::timing::{ForwardingMode, Timing};
use core::fmt;
use tandem_wire::axon::CONTROL_PORT;
use tandem_wire::MacAddr;

/// The most Ethernet ports a device can have: hops are 4 bits and `0xf` is the control plane.
pub const MAX_PORTS: usize = CONTROL_PORT as usize;

/// One Ethernet port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortConfig {
    /// Line rate in bits per second (1 Gb/s on the prototype's NetFPGA).
    pub line_rate_bps: u64,
}

/// Self-congestion control with PAUSE frames (thesis §3.3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PauseConfig {
    /// Send PAUSE frames to hosts at all.
    pub enabled: bool,
    /// Axon header bytes a host's frames may add before the device pauses it: "a maximum-sized
    /// packet's worth" (1,518 bytes).
    pub header_bytes_per_pause: u64,
    /// How long each PAUSE asks the host to wait, as the bytes of a frame it would take to send:
    /// "as long as it would take to transmit a maximum-sized packet" (1,518 bytes).
    pub pause_for_bytes: u64,
}

impl Default for PauseConfig {
    fn default() -> Self {
        PauseConfig {
            enabled: true,
            header_bytes_per_pause: 1518,
            pause_for_bytes: 1518,
        }
    }
}

/// The device's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceConfig {
    /// Identifies the device in hellos and probe records.
    pub device_id: u64,
    /// The device's MAC; port `p` uses it with `p` added to the last byte (PAUSE source).
    pub mac: MacAddr,
    /// The Ethernet ports, numbered from 0 (at most [`MAX_PORTS`]).
    pub ports: Vec<PortConfig>,
    /// Route memory slots per port (§3.2.1; §4.5 finds about 4,000 entries per port enough).
    pub route_slots: usize,
    /// CAM entries per port mapping a real destination MAC to a slot; beyond them the device
    /// hands hosts masqueraded MACs (§3.2.1).
    pub cam_entries: usize,
    /// The first two bytes of every masqueraded MAC (the U/L bit must be set, the I/G bit clear);
    /// the other four are the slot index. Only locally administered MACs with this prefix index
    /// route memory directly, so hosts (VMs) whose real MACs are locally administered still go
    /// through the CAM.
    pub masquerade_prefix: [u8; 2],
    /// Bytes each per-input buffer of an output port holds (§3.2.1: one buffer per input port).
    pub output_buffer_bytes: usize,
    /// The longest frame accepted on any port (jumbo frames carry a full Ethernet frame plus the
    /// Axon header, §3.1.1).
    pub max_frame_bytes: usize,
    /// Cut-through or store-and-forward (the prototype's mode register, §4.4.3).
    pub mode: ForwardingMode,
    /// Pipeline latencies (Table 4.2).
    pub timing: Timing,
    /// How long after its link comes up a port that has heard no hello counts as a host port.
    pub bootstrap_timeout_ps: u64,
    /// Self-congestion control.
    pub pause: PauseConfig,
    /// Frames per second one host port may send to the control plane (ARP, DHCP, broadcasts,
    /// lookup misses), so that one host cannot starve the others' ARP and DHCP; 0: no limit.
    pub upcall_rate_per_s: u64,
    /// How many such frames a host port may send at once above that rate.
    pub upcall_burst: u64,
}

impl DeviceConfig {
    /// A device with `ports` ports at `line_rate_bps` and every other parameter at its default:
    /// 4,096 route slots and 64 CAM entries per port, 32 KiB per output buffer, 9,216-byte frames,
    /// cut-through with the Table 4.2 latencies, a 1 ms bootstrap timeout, PAUSE on.
    pub fn new(device_id: u64, ports: usize, line_rate_bps: u64) -> DeviceConfig {
        let id = device_id.to_be_bytes();
        DeviceConfig {
            device_id,
            mac: MacAddr([0x02, 0xaa, id[4], id[5], id[6], id[7] & 0xf0]),
            ports: vec![PortConfig { line_rate_bps }; ports],
            route_slots: 4096,
            cam_entries: 64,
            masquerade_prefix: [0x02, 0xa0],
            output_buffer_bytes: 32 * 1024,
            max_frame_bytes: 9216,
            mode: ForwardingMode::CutThrough,
            timing: Timing::default(),
            bootstrap_timeout_ps: 1_000_000_000,
            pause: PauseConfig::default(),
            upcall_rate_per_s: 1_000,
            upcall_burst: 200,
        }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.ports.is_empty() || self.ports.len() > MAX_PORTS {
            return Err(ConfigError::PortCount(self.ports.len()));
        }
        if self.ports.iter().any(|p| p.line_rate_bps == 0) {
            return Err(ConfigError::ZeroLineRate);
        }
        if self.route_slots > u32::MAX as usize {
            return Err(ConfigError::TooManySlots(self.route_slots));
        }
        let p = self.masquerade_prefix[0];
        if p & 0x02 == 0 || p & 0x01 != 0 {
            return Err(ConfigError::MasqueradePrefix(self.masquerade_prefix));
        }
        if self.max_frame_bytes < 64 || self.output_buffer_bytes < self.max_frame_bytes {
            return Err(ConfigError::Buffers {
                max_frame_bytes: self.max_frame_bytes,
                output_buffer_bytes: self.output_buffer_bytes,
            });
        }
        if self.timing.cycle_ps == 0 || self.timing.hops_per_fetch_cycle == 0 {
            return Err(ConfigError::Timing);
        }
        if self.pause.enabled && (self.pause.header_bytes_per_pause == 0 || self.pause.pause_for_bytes == 0) {
            return Err(ConfigError::Pause);
        }
        Ok(())
    }
}

/// Why a [`DeviceConfig`] was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigError {
    /// No ports, or more than [`MAX_PORTS`].
    PortCount(usize),
    /// A port with a zero line rate.
    ZeroLineRate,
    /// More route slots than a masqueraded MAC can index.
    TooManySlots(usize),
    /// A masquerade prefix without the U/L bit or with the I/G bit.
    MasqueradePrefix([u8; 2]),
    /// Frames too short to hold Ethernet, or output buffers smaller than one frame.
    Buffers {
        /// The configured longest frame.
        max_frame_bytes: usize,
        /// The configured buffer size.
        output_buffer_bytes: usize,
    },
    /// A zero cycle time or zero hops per fetch cycle.
    Timing,
    /// PAUSE enabled with a zero threshold or duration.
    Pause,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::PortCount(n) => write!(f, "{n} ports: a device has 1 to {MAX_PORTS}"),
            ConfigError::ZeroLineRate => f.write_str("a port has a zero line rate"),
            ConfigError::TooManySlots(n) => write!(f, "{n} route slots: at most {}", u32::MAX),
            ConfigError::MasqueradePrefix(p) => write!(
                f,
                "masquerade prefix {:02x}:{:02x} must be unicast and locally administered",
                p[0], p[1]
            ),
            ConfigError::Buffers {
                max_frame_bytes,
                output_buffer_bytes,
            } => write!(
                f,
                "max frame {max_frame_bytes} B and output buffer {output_buffer_bytes} B: frames need 64 B \
                 and a buffer must hold one"
            ),
            ConfigError::Timing => f.write_str("timing: cycle and hops per fetch cycle must be positive"),
            ConfigError::Pause => f.write_str("pause: threshold and duration must be positive"),
        }
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_bad_values_do_not() {
        let c = DeviceConfig::new(7, 4, 1_000_000_000);
        assert_eq!(c.validate(), Ok(()));
        let mut bad = c.clone();
        bad.ports = vec![PortConfig { line_rate_bps: 1 }; 16];
        assert_eq!(bad.validate(), Err(ConfigError::PortCount(16)));
        let mut bad = c.clone();
        bad.masquerade_prefix = [0x03, 0];
        assert!(matches!(bad.validate(), Err(ConfigError::MasqueradePrefix(_))));
        let mut bad = c.clone();
        bad.output_buffer_bytes = 100;
        assert!(matches!(bad.validate(), Err(ConfigError::Buffers { .. })));
        let mut bad = c;
        bad.ports[2].line_rate_bps = 0;
        assert_eq!(bad.validate(), Err(ConfigError::ZeroLineRate));
        assert!(!bad.validate().unwrap_err().to_string().is_empty());
    }
}
