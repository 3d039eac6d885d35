//! TCPU in a user's own scenario: the `[[system]]` kind `"tcpu"`.
//!
//! ```toml
//! [[system]]
//! kind = "tcpu"
//! switches = ["leaf0..leaf3"]
//! asic_flow_entries = 512
//! internal_link_bps = "10Gbps"
//! ```
//!
//! Every [`TcpuConfig`] field is a parameter under its own name, with units where it has one
//! (`rank_interval = "100ms"`, `dram_bytes = "1GiB"`, `bw_attack_bps = "200Mbps"`), and the
//! paper's value as its default. Four come from the scenario instead:
//!
//! * `ports`: the switch's port count;
//! * `port_bps` (C): the rate of the switch's links to its own hosts (give `port_bps` when they
//!   differ);
//! * `q_limit_pkts` (Q_limit): `switch.queue.limit_packets`, which must be set;
//! * the traffic classes: the switch gets [`super::SIM_CLASSES`] strict-priority classes
//!   ([`super::queue_config`]), so `cpu_return_class` and `long_flow_class` are fixed.
//!
//! As in the paper's testbed, TCPU manages the traffic to the switch's own hosts (the adapter,
//! [`super::TcpuModel`], leaves packets for hosts behind other switches to routing), so a
//! switch without hosts is refused.

use super::{queue_config, TcpuModel};
use crate::config::{read_units, ConfigError, TcpuConfig};
use std::sync::Arc;
use tandem_sim::config::QueueConfig;
use tandem_sim::packet::NodeId;
use tandem_sim::scenario::system::{Placement, Site, SystemKind};
use tandem_sim::scenario::ScenarioError;
use tandem_sim::switch::SwitchModel;

/// The `"tcpu"` kind of `[[system]]` entries.
#[derive(Debug, Clone, Copy, Default)]
pub struct TcpuKind;

/// Parameters the scenario decides, and where.
const FROM_SCENARIO: &[(&str, &str)] = &[
    ("ports", "the switch's port count"),
    ("q_limit_pkts", "switch.queue.limit_packets"),
    (
        "cpu_return_class",
        "the simulator's class mapping (class 0 for the CPU's packets)",
    ),
    (
        "long_flow_class",
        "the simulator's class mapping (class 2 for pinned long flows)",
    ),
];

/// The parameter a [`ConfigError`] is about.
fn config_key(e: ConfigError) -> &'static str {
    match e {
        ConfigError::Zero(k) | ConfigError::Percent(k) => k,
        ConfigError::RedirectNotBelowLimit => "q_redirect_pkts",
        ConfigError::LflowsNotBelowRedirect => "q_lflows_pkts",
        ConfigError::PriorityOrder => "prio_port",
        ConfigError::AttackBins => "attack_window",
    }
}

/// Reads the parameters into a configuration (ports, C and Q_limit still to fill in).
fn read_params(site: &Site<'_>, params: toml::Value) -> Result<(TcpuConfig, bool), ScenarioError> {
    let toml::Value::Table(mut t) = params else {
        return Err(site.error("", "expected a table"));
    };
    for (name, from) in FROM_SCENARIO {
        if t.contains_key(*name) {
            return Err(site.error(name, format!("set by the scenario ({from}), not a parameter")));
        }
    }
    let port_bps_given = t.contains_key("port_bps");
    read_units(&mut t).map_err(|(name, e)| site.error(name, e))?;
    let cfg: TcpuConfig = site.de(toml::Value::Table(t))?;
    Ok((cfg, port_bps_given))
}

/// C for switch `node`: the rate of its links to its own hosts (`None` when they differ); an
/// error for a switch without hosts.
fn host_port_rate(site: &Site<'_>, node: NodeId) -> Result<Option<u64>, String> {
    let topo = site.topology;
    let mut rates = topo
        .ports(node)
        .iter()
        .filter(|p| topo.is_host(p.peer))
        .map(|p| topo.link(p.link).cfg.rate_bps);
    let Some(first) = rates.next() else {
        return Err(format!(
            "`{}` has no hosts attached: TCPU manages the traffic to a switch's own hosts",
            topo.node(node).name
        ));
    };
    Ok(rates.all(|r| r == first).then_some(first))
}

impl SystemKind for TcpuKind {
    fn name(&self) -> &'static str {
        "tcpu"
    }

    fn place(&self, site: &Site<'_>, params: toml::Value) -> Result<Arc<dyn Placement>, ScenarioError> {
        let (base, port_bps_given) = read_params(site, params)?;
        let q_limit = site.switch.queue.limit_packets;
        if q_limit == 0 {
            return Err(site.error(
                "",
                "TCPU needs a packet limit on switch queues (Q_limit): set switch.queue.limit_packets",
            ));
        }
        let mut switches = Vec::with_capacity(site.switches.len());
        for &node in site.switches {
            let ports = u16::try_from(site.topology.ports(node).len())
                .map_err(|_| site.error("switches", "a switch with more than 65535 ports"))?;
            let measured = host_port_rate(site, node).map_err(|m| site.error("switches", m))?;
            let port_bps = match (port_bps_given, measured) {
                (true, _) => base.port_bps,
                (false, Some(rate)) => rate,
                (false, None) => {
                    return Err(site.error(
                        "switches",
                        format!(
                            "`{}`'s host links differ in rate: give `port_bps` (C, the rate TCPU paces to)",
                            site.topology.node(node).name
                        ),
                    ))
                }
            };
            let cfg = TcpuConfig {
                ports,
                port_bps,
                q_limit_pkts: q_limit,
                cpu_return_class: 7,
                long_flow_class: 1,
                ..base.clone()
            };
            let model = TcpuModel::new(cfg.clone()).map_err(|e| {
                let k = config_key(e);
                let k = if k == "ports" { "switches" } else { k };
                site.error(k, e.to_string())
            })?;
            switches.push((node, cfg, model));
        }
        Ok(Arc::new(TcpuPlacement { switches }))
    }
}

/// Checked TCPU configurations and a model built from each, one per switch.
#[derive(Debug)]
struct TcpuPlacement {
    switches: Vec<(NodeId, TcpuConfig, TcpuModel)>,
}

impl Placement for TcpuPlacement {
    fn queues(&self, node: NodeId, base: QueueConfig) -> QueueConfig {
        match self.switches.iter().find(|s| s.0 == node) {
            Some((_, cfg, _)) => queue_config(cfg, base),
            None => base,
        }
    }

    fn model(&self, node: NodeId) -> Option<Box<dyn SwitchModel>> {
        let (_, _, model) = self.switches.iter().find(|s| s.0 == node)?;
        Some(Box::new(model.clone()))
    }
}
