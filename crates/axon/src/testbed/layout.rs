//! Ready-made testbeds: a line or a ring of Axons with the addressing conventions the tests and
//! experiments share. Axon `d` (from 1) uses port 0 toward Axon `d - 1` and port 1 toward Axon
//! `d + 1` (a ring closes `n.1 - 1.0`); ports from 2 up are host ports. Its DHCP pool is
//! `10.0.d.10 - 10.0.d.200` (server `10.0.d.1`), and its `n`-th host is `10.0.d.(100 + n)` with
//! MAC `00:16:3e:00:d:port`.

use super::host::{Host, HostId};
use super::net::{Testbed, TestbedError};
use crate::config::DeviceConfig;
use crate::control::{ControlConfig, DhcpPool, DiscoveryConfig, Endpoint, Topology};
use tandem_wire::{Ipv4Addr, MacAddr};

/// One gigabit per second (the prototype's links).
pub const GBPS: u64 = 1_000_000_000;

/// A line or ring of Axons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LineSpec {
    /// How many Axons (ids 1..=axons).
    pub axons: u64,
    /// Close the line into a ring (needs three Axons or more).
    pub ring: bool,
    /// Ports per Axon (2 Axon ports, the rest for hosts; at most 15).
    pub ports: usize,
    /// Line rate of every link.
    pub rate_bps: u64,
    /// Propagation delay of every link (Axon and host links).
    pub delay_ps: u64,
    /// CAM entries per host port.
    pub cam_entries: usize,
    /// Discover the topology by probes; `None` gives every control plane the topology as
    /// configuration.
    pub discovery: Option<DiscoveryConfig>,
}

impl LineSpec {
    /// `axons` Axons in a line, 15 ports, 1 Gb/s links of 500 ns (100 m), 64 CAM entries, the
    /// topology as configuration.
    pub fn line(axons: u64) -> LineSpec {
        LineSpec {
            axons,
            ring: false,
            ports: 15,
            rate_bps: GBPS,
            delay_ps: 500_000,
            cam_entries: 64,
            discovery: None,
        }
    }

    /// The same as a ring.
    pub fn ring(axons: u64) -> LineSpec {
        LineSpec {
            ring: true,
            ..LineSpec::line(axons)
        }
    }

    /// The Axon links: (lower id end, higher id end), the closing link last.
    pub fn links(&self) -> Vec<(Endpoint, Endpoint)> {
        let e = |device, port| Endpoint { device, port };
        let mut v: Vec<_> = (1..self.axons).map(|d| (e(d, 1), e(d + 1, 0))).collect();
        if self.ring && self.axons >= 3 {
            v.push((e(self.axons, 1), e(1, 0)));
        }
        v
    }

    /// The topology as configuration.
    pub fn topology(&self) -> Result<Topology, TestbedError> {
        let mut t = Topology::new();
        for d in 1..=self.axons {
            let p = pool(d);
            t.add_axon(crate::control::AxonNode {
                device: d,
                pool_first: p.first,
                pool_last: p.last,
            });
        }
        for (a, b) in self.links() {
            t.add_link(a, b).map_err(TestbedError::Control)?;
        }
        Ok(t)
    }

    /// Builds the testbed (no hosts yet) and starts it ([`Testbed::start`]).
    pub fn build(&self) -> Result<Testbed, TestbedError> {
        let topo = match self.discovery {
            Some(_) => Topology::new(),
            None => self.topology()?,
        };
        let mut tb = Testbed::new();
        for d in 1..=self.axons {
            let mut dc = DeviceConfig::new(d, self.ports, self.rate_bps);
            dc.cam_entries = self.cam_entries;
            let mut cc = ControlConfig::new(d, pool(d));
            cc.discovery = self.discovery;
            tb.add_axon(dc, cc, topo.clone())?;
        }
        for (a, b) in self.links() {
            tb.connect(a, b, self.delay_ps)?;
        }
        tb.start();
        Ok(tb)
    }

    /// Adds host `n` (from 0) of Axon `d` on port `2 + n`.
    pub fn add_host(&self, tb: &mut Testbed, d: u64, n: u8) -> Result<HostId, TestbedError> {
        let port = 2 + n;
        let h = Host::new(
            host_mac(d, port),
            host_ip(d, n),
            Endpoint { device: d, port },
            self.rate_bps,
            self.delay_ps,
        );
        tb.add_host(h)
    }
}

/// Axon `d`'s DHCP pool.
pub fn pool(d: u64) -> DhcpPool {
    let b = (d & 0xff) as u8;
    DhcpPool {
        server_ip: Ipv4Addr::new(10, 0, b, 1),
        subnet_mask: Ipv4Addr::new(255, 255, 0, 0),
        first: Ipv4Addr::new(10, 0, b, 10),
        last: Ipv4Addr::new(10, 0, b, 200),
        lease_secs: 3600,
    }
}

/// Host `n` of Axon `d`.
pub fn host_ip(d: u64, n: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, (d & 0xff) as u8, 100u8.saturating_add(n))
}

/// The MAC of the host on port `port` of Axon `d`.
pub fn host_mac(d: u64, port: u8) -> MacAddr {
    MacAddr([0x00, 0x16, 0x3e, 0, (d & 0xff) as u8, port])
}
