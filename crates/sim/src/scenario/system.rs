//! Systems placed on switches by a scenario file: `[[system]]` entries.
//!
//! ```toml
//! [[system]]
//! kind = "tcpu"                  # one of the kinds the program knows
//! switches = ["leaf0..leaf3"]    # switch names and ranges, or "all" (every switch)
//! tcam_entries = 512             # the kind's own parameters, units as everywhere else
//! ```
//!
//! The simulator does not know any system: a system crate implements [`SystemKind`] (it reads
//! and checks an entry's parameters against the switches named, reporting problems at their
//! file, line and key through [`Site`]) and the program that loads scenarios passes the kinds
//! it links to [`Scenario::load_with_systems`](super::Scenario::load_with_systems). The result
//! is a [`PlacedSystem`] per entry; [`crate::run::build`] gives each of its switches the queues
//! the system asks for and a fresh model from [`Placement::model`], and `summary.json` lists
//! every placed switch's [`SwitchModel::system_counters`] under `systems`.
//!
//! A switch carries at most one system; entries are built in file order.

use super::{fmt_path, index, key, node_set, Ctx, ScenarioError, Seg};
use crate::config::{QueueConfig, SwitchConfig};
use crate::packet::NodeId;
use crate::switch::SwitchModel;
use crate::topology::{NodeKind, Topology};
use serde::de::DeserializeOwned;
use std::fmt;
use std::sync::Arc;

/// A kind of system that `[[system]]` entries may place (`kind = "..."`).
pub trait SystemKind: Send + Sync {
    /// The `kind` value that selects it.
    fn name(&self) -> &'static str;
    /// Reads and checks an entry's parameters (`params`: the entry without `kind` and
    /// `switches`) for the switches of `site`, and returns what builds the models.
    fn place(&self, site: &Site<'_>, params: toml::Value) -> Result<Arc<dyn Placement>, ScenarioError>;
}

/// A checked `[[system]]` entry's parameters: what each of its switches gets at run time.
pub trait Placement: Send + Sync + fmt::Debug {
    /// The egress queues of switch `node`, given the scenario's switch queues `base`
    /// (default: unchanged).
    fn queues(&self, _node: NodeId, base: QueueConfig) -> QueueConfig {
        base
    }
    /// A fresh model for switch `node` (called once per switch per run; `None` for a switch
    /// the entry does not name).
    fn model(&self, node: NodeId) -> Option<Box<dyn SwitchModel>>;
}

/// One `[[system]]` entry, checked.
#[derive(Debug, Clone)]
pub struct PlacedSystem {
    /// Its kind's name.
    pub kind: &'static str,
    /// The switches it runs on, in the order the entry names them.
    pub switches: Vec<NodeId>,
    /// What builds their models.
    pub placement: Arc<dyn Placement>,
}

/// What a [`SystemKind`] sees of the scenario while it checks an entry.
pub struct Site<'a> {
    ctx: &'a Ctx,
    at: Vec<Seg>,
    /// The network.
    pub topology: &'a Topology,
    /// The switches the entry names.
    pub switches: &'a [NodeId],
    /// The scenario's switch configuration (queues, buffer, forwarding).
    pub switch: &'a SwitchConfig,
    /// The scenario's seed: a model that draws random numbers seeds them from it (mixed with
    /// its switch's id), so that the run stays a function of the scenario and seed.
    pub seed: u64,
}

impl Site<'_> {
    /// Deserializes the entry's parameters into `T` (use `#[serde(deny_unknown_fields)]`), a
    /// problem reported at its file, line and key.
    pub fn de<T: DeserializeOwned>(&self, params: toml::Value) -> Result<T, ScenarioError> {
        self.ctx.de(params, &self.at)
    }

    /// An error at parameter `name` of the entry (`""`: the entry itself).
    pub fn error(&self, name: &str, message: impl Into<String>) -> ScenarioError {
        if name.is_empty() {
            self.ctx.err(&self.at, message)
        } else {
            self.ctx.err(&key(&self.at, name), message)
        }
    }

    /// The key path of the entry, like `system[0]`, for messages.
    pub fn path(&self) -> String {
        fmt_path(&self.at)
    }
}

/// Reads the `[[system]]` entries against `kinds`.
pub(super) fn build_systems(
    ctx: &Ctx,
    entries: Vec<toml::Value>,
    topology: &Topology,
    switch: &SwitchConfig,
    seed: u64,
    kinds: &[&dyn SystemKind],
) -> Result<Vec<PlacedSystem>, ScenarioError> {
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    let mut taken: Vec<Option<usize>> = vec![None; topology.nodes().len()];
    let mut out = Vec::with_capacity(entries.len());
    for (i, v) in entries.into_iter().enumerate() {
        let at = index(&[Seg::Key("system".into())], i);
        let toml::Value::Table(mut t) = v else {
            return Err(ctx.err(&at, "expected a table with `kind` and `switches`"));
        };
        let kind_name = match t.remove("kind") {
            Some(toml::Value::String(s)) => s,
            Some(_) => return Err(ctx.err(&key(&at, "kind"), "expected a string")),
            None => return Err(ctx.err(&at, format!("missing field `kind` ({})", one_of(&names)))),
        };
        let Some(kind) = kinds.iter().find(|k| k.name() == kind_name) else {
            return Err(ctx.err(
                &key(&at, "kind"),
                format!("unknown kind `{kind_name}`, {}", one_of(&names)),
            ));
        };
        let Some(list) = t.remove("switches") else {
            return Err(ctx.err(
                &at,
                "missing field `switches` (switch names and ranges like \"edge0..edge7\", or \"all\")",
            ));
        };
        let switches = node_set(ctx, topology, Some(list), &key(&at, "switches"), NodeKind::Switch)?;
        for (j, &s) in switches.iter().enumerate() {
            let slot = &mut taken[s.0 as usize];
            if let Some(other) = *slot {
                return Err(ctx.err(
                    &index(&key(&at, "switches"), j),
                    format!(
                        "`{}` already carries the system of system[{other}] (a switch runs at most one)",
                        topology.node(s).name
                    ),
                ));
            }
            *slot = Some(i);
        }
        let site = Site {
            ctx,
            at: at.clone(),
            topology,
            switches: &switches,
            switch,
            seed,
        };
        let placement = kind.place(&site, toml::Value::Table(t))?;
        out.push(PlacedSystem {
            kind: kind.name(),
            switches,
            placement,
        });
    }
    Ok(out)
}

fn one_of(names: &[&str]) -> String {
    if names.is_empty() {
        "and this program knows no system kinds (the `tandem` command does)".to_string()
    } else {
        format!("expected one of {}", names.join(", "))
    }
}
