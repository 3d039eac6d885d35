//! The system kinds that scenario files may place on switches (`[[system]]`, see
//! [`tandem_sim::scenario::system`]): every scenario the command loads may name these.

use tandem_sim::scenario::system::SystemKind;

/// Every kind `tandem` places, by its `kind` name.
pub const KINDS: &[&dyn SystemKind] = &[
    &tandem_tcpu::model::placed::TcpuKind,
    &tandem_coswitch::model::placed::CoswitchKind,
    &tandem_turboswitch::model::placed::TurboswitchKind,
    &tandem_axon::model::placed::AxonKind,
];
