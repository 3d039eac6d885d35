//! A node's port: one end of a link with its egress queues. Its own module so that the
//! simulator (`sim`) and the switch models (`switch`) both use it without importing each other.

use crate::config::LinkConfig;
use crate::packet::NodeId;
use crate::queue::EgressQueues;
use crate::time::{tx_time, Time};

/// One end of a link, as seen from the node that owns it.
#[derive(Debug, Clone)]
pub struct Port {
    /// Egress queues.
    pub queues: EgressQueues,
    /// The node at the other end.
    pub peer: NodeId,
    /// Its port.
    pub peer_port: u16,
    /// The link.
    pub link: LinkConfig,
    pub(crate) busy: bool,
    /// The end of the transmission in progress when no `TxDone` event was scheduled for it
    /// (nothing was waiting when it started): its time and reserved sequence number; sequence
    /// 0 when there is none (see `Sim::start_tx`).
    pub(crate) done: (Time, u64),
    pub(crate) tap: Option<usize>,
    /// The far end may pause this port (802.3x): its pause and transmission ends are kept
    /// in the simulator's side table ([`PauseState`]), so that other ports pay nothing.
    pub(crate) pausable: bool,
    /// The switch's model hears when this port goes idle (`SwitchModel::watch_port_idle`):
    /// every transmission then ends by an event.
    pub(crate) notify_idle: bool,
    /// The link has failed ([`crate::sim::Sim::schedule_link`]): the port sends nothing and
    /// what is offered to it is dropped (`link-down`).
    pub(crate) down: bool,
    /// `(rate, ps)`: at `link.rate_bps == rate`, one byte takes exactly `ps` picoseconds
    /// (`ps == 0`: not a whole number; use [`tx_time`]).
    pub(crate) ps_per_byte: (u64, u64),
}

/// A pausable port's 802.3x state.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PauseState {
    /// The port starts nothing before this time.
    pub(crate) until: Time,
    /// When its last transmission ends (for a PAUSE heard during it).
    pub(crate) tx_end: Time,
}

impl Port {
    /// [`tx_time`] of `bytes` on this port's link, by one multiplication when the rate divides
    /// 8 Tb/s evenly (every common rate does) and the product fits: the same value either way.
    #[inline]
    pub(crate) fn ser_time(&self, bytes: u64) -> Time {
        let (rate, ps) = self.ps_per_byte;
        if ps != 0 && rate == self.link.rate_bps {
            if let Some(t) = bytes.checked_mul(ps) {
                return t;
            }
        }
        tx_time(bytes, self.link.rate_bps)
    }
}

/// `(rate, ps)` for [`Port::ps_per_byte`].
pub(crate) fn ps_per_byte(rate_bps: u64) -> (u64, u64) {
    let byte = 8 * crate::time::SEC;
    if rate_bps != 0 && byte.is_multiple_of(rate_bps) {
        (rate_bps, byte / rate_bps)
    } else {
        (rate_bps, 0)
    }
}
