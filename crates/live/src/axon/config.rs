//! The configuration file of one Axon process (`tandem axon run --config FILE`), TOML:
//!
//! ```toml
//! device_id = 1
//! cam_entries = 64            # optional (default 64)
//! software_delays = "none"    # or "thesis": add Table 4.3's delays to the control plane
//! discovery = false           # true: probe the links (every 20 ms, down after 75 ms of silence)
//! topology = """
//! axon 1 10.0.1.10 10.0.1.200
//! axon 2 10.0.2.10 10.0.2.200
//! link 1.1 2.0
//! """
//!
//! [dhcp]
//! server_ip = "10.0.1.1"
//! subnet_mask = "255.255.0.0"
//! first = "10.0.1.10"
//! last = "10.0.1.200"
//! lease_secs = 3600
//!
//! [[ports]]
//! interface = "p0"
//! port = 0
//! kind = "host"               # or "axon"
//! ```

use serde::Deserialize;
use std::fmt;
use std::net::Ipv4Addr;
use std::path::Path;
use tandem_axon::control::{DhcpPool, DiscoveryConfig, SoftwareDelays};
use tandem_axon::{ControlConfig, DeviceConfig, PortKind, Topology};

/// One Axon process's settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AxonProcessConfig {
    /// The device id (as in the topology).
    pub device_id: u64,
    /// CAM entries per host port.
    #[serde(default = "default_cam")]
    pub cam_entries: usize,
    /// `none` (live: the software's own time is the delay) or `thesis` (add Table 4.3's).
    #[serde(default = "default_delays")]
    pub software_delays: String,
    /// Probe the links: learn the topology and failures from probes and advertisements.
    #[serde(default)]
    pub discovery: bool,
    /// The network's topology in the control plane's text format (with discovery, the
    /// starting point).
    pub topology: String,
    /// This Axon's DHCP pool.
    pub dhcp: DhcpSection,
    /// Interfaces and the Axon ports they are.
    pub ports: Vec<PortSection>,
}

/// The `[dhcp]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DhcpSection {
    /// The control plane's own address.
    pub server_ip: Ipv4Addr,
    /// Mask handed out.
    pub subnet_mask: Ipv4Addr,
    /// First address of the pool.
    pub first: Ipv4Addr,
    /// Last address of the pool.
    pub last: Ipv4Addr,
    /// Lease time in seconds.
    #[serde(default = "default_lease")]
    pub lease_secs: u32,
}

/// One `[[ports]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortSection {
    /// Linux interface name.
    pub interface: String,
    /// Axon port number (0-14).
    pub port: u8,
    /// `host` or `axon`.
    pub kind: String,
}

/// Discovery timers for real links and a software driver: a probe every 20 ms, a neighbour
/// silent for 75 ms is gone, advertisements refreshed every second.
pub fn live_discovery() -> DiscoveryConfig {
    const MS: u64 = 1_000_000_000;
    DiscoveryConfig {
        probe_interval_ps: 20 * MS,
        probe_timeout_ps: 75 * MS,
        advert_refresh_ps: 1_000 * MS,
    }
}

fn default_cam() -> usize {
    64
}
fn default_delays() -> String {
    "none".into()
}
fn default_lease() -> u32 {
    3600
}

/// A configuration that cannot be used, with where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxonConfigError(pub String);

impl fmt::Display for AxonConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AxonConfigError {}

impl AxonProcessConfig {
    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> Result<AxonProcessConfig, AxonConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| AxonConfigError(format!("{}: {e}", path.display())))?;
        AxonProcessConfig::parse(&text).map_err(|e| AxonConfigError(format!("{}: {}", path.display(), e.0)))
    }

    /// Parses and checks a configuration text.
    pub fn parse(text: &str) -> Result<AxonProcessConfig, AxonConfigError> {
        let cfg: AxonProcessConfig =
            toml::from_str(text).map_err(|e| AxonConfigError(crate::toml_error::describe(text, &e)))?;
        cfg.build().map(|_| cfg)
    }

    /// The device, control plane and topology settings, and each port's interface and kind.
    #[allow(clippy::type_complexity)]
    pub fn build(
        &self,
    ) -> Result<(DeviceConfig, ControlConfig, Topology, Vec<(String, u8, PortKind)>), AxonConfigError> {
        let err = |m: String| AxonConfigError(m);
        let topo = Topology::parse(&self.topology).map_err(|e| err(format!("key `topology`: {e}")))?;
        if !topo.has_axon(self.device_id) {
            return Err(err(format!(
                "key `device_id`: {} is not an axon of the topology",
                self.device_id
            )));
        }
        let mut ports = Vec::new();
        for p in &self.ports {
            let kind = match p.kind.as_str() {
                "host" => PortKind::Host,
                "axon" => PortKind::Axon,
                k => return Err(err(format!("key `ports.kind`: {k:?} (expected host or axon)"))),
            };
            if usize::from(p.port) >= tandem_axon::MAX_PORTS {
                return Err(err(format!(
                    "key `ports.port`: {} (at most {})",
                    p.port,
                    tandem_axon::MAX_PORTS - 1
                )));
            }
            if ports.iter().any(|(_, q, _)| *q == p.port) {
                return Err(err(format!("key `ports.port`: {} appears twice", p.port)));
            }
            ports.push((p.interface.clone(), p.port, kind));
        }
        let n = ports.iter().map(|(_, p, _)| usize::from(*p) + 1).max().unwrap_or(0);
        if n == 0 {
            return Err(err("key `ports`: no ports".into()));
        }
        // Line rate: the driver sends at once, the kernel serialises; 10 Gb/s only sets the
        // device's view of when a frame ends.
        let mut dev = DeviceConfig::new(self.device_id, n, 10_000_000_000);
        dev.cam_entries = self.cam_entries;
        let pool = DhcpPool {
            server_ip: self.dhcp.server_ip,
            subnet_mask: self.dhcp.subnet_mask,
            first: self.dhcp.first,
            last: self.dhcp.last,
            lease_secs: self.dhcp.lease_secs,
        };
        let mut cp = ControlConfig::new(self.device_id, pool);
        cp.delays = match self.software_delays.as_str() {
            "none" => SoftwareDelays::none(),
            "thesis" => SoftwareDelays::default(),
            d => return Err(err(format!("key `software_delays`: {d:?} (expected none or thesis)"))),
        };
        if self.discovery {
            cp.discovery = Some(live_discovery());
        }
        cp.validate().map_err(|e| err(format!("key `dhcp`: {e}")))?;
        Ok((dev, cp, topo, ports))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_example_builds() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../labs/axon/two-hosts.toml");
        let c = AxonProcessConfig::load(&p).unwrap_or_else(|e| panic!("{e}"));
        let (_, _, _, ports) = c.build().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ports.len(), 2);
    }

    const GOOD: &str = r#"
device_id = 1
topology = """
axon 1 10.0.1.10 10.0.1.200
axon 2 10.0.2.10 10.0.2.200
link 1.1 2.0
"""
[dhcp]
server_ip = "10.0.1.1"
subnet_mask = "255.255.0.0"
first = "10.0.1.10"
last = "10.0.1.200"
[[ports]]
interface = "p0"
port = 0
kind = "host"
[[ports]]
interface = "p1"
port = 1
kind = "axon"
"#;

    #[test]
    fn a_good_file_builds() {
        let c = AxonProcessConfig::parse(GOOD).unwrap();
        let (dev, _, topo, ports) = c.build().unwrap();
        assert_eq!(dev.ports.len(), 2);
        assert_eq!(topo.links().len(), 1);
        assert_eq!(ports[1], ("p1".to_string(), 1, PortKind::Axon));
    }

    #[test]
    fn bad_files_name_the_key() {
        let e = AxonProcessConfig::parse(&GOOD.replace("kind = \"axon\"", "kind = \"switch\"")).unwrap_err();
        assert!(e.0.contains("ports.kind"), "{e}");
        let e = AxonProcessConfig::parse(&GOOD.replace("device_id = 1", "device_id = 7")).unwrap_err();
        assert!(e.0.contains("device_id"), "{e}");
        let e = AxonProcessConfig::parse(&GOOD.replace("server_ip = \"10.0.1.1\"", "server_ip = 5")).unwrap_err();
        assert!(e.0.starts_with("line "), "{e}");
    }
}
