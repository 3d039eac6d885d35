//! A node's port: one end of a link with its egress queues. Its own module so that the
//! simulator (`sim`) and the switch models (`switch`) both use it without importing each other.

use crate::config::LinkConfig;
use crate::packet::NodeId;
use crate::queue::EgressQueues;
use crate::time::{tx_time, Time};

/// One end of a link, as seen from the node that owns it.
///
/// `repr(C)`: what a packet's transmission reads (the flags, the peer, the link, the pending
/// end) comes first and the queues' hot fields right after (see [`EgressQueues`]), so that a
/// hop touches the first five cache lines of its port ([`Port::HOT_BYTES`]) and none of the
/// four cold ones.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct Port {
    pub(crate) busy: bool,
    /// The link has failed ([`crate::sim::Sim::schedule_link`]): the port sends nothing and
    /// what is offered to it is dropped (`link-down`).
    pub(crate) down: bool,
    /// The far end may pause this port (802.3x): its pause and transmission ends are kept
    /// in the simulator's side table ([`PauseState`]), so that other ports pay nothing.
    pub(crate) pausable: bool,
    /// The switch's model hears when this port goes idle (`SwitchModel::watch_port_idle`):
    /// every transmission then ends by an event.
    pub(crate) notify_idle: bool,
    /// Transmission times rounded to the nearest nanosecond, as ns-3's clock holds them
    /// (`DataRate::CalculateBytesTxTime`): the like-for-like mode's links (`flavor = "ns3"`).
    pub(crate) ns_grid: bool,
    /// Transmits directly: each packet's transmission is fixed as it joins the queue and its
    /// arrival at the far end scheduled at once, with no event for the transmission's end
    /// (`Sim::send_direct`; which ports qualify: `Sim::decide_direct`). `busy` and `done`
    /// are unused then.
    pub(crate) direct: bool,
    /// Its port.
    pub peer_port: u16,
    /// The node at the other end.
    pub peer: NodeId,
    pub(crate) tap: Option<u32>,
    /// The end of the transmission in progress when no `TxDone` event was scheduled for it
    /// (nothing was waiting when it started): its time and reserved sequence number; sequence
    /// 0 when there is none (see `Sim::start_tx`).
    pub(crate) done: (Time, u64),
    /// A direct port: when its last transmission fixed so far ends (the next starts then at
    /// the earliest).
    pub(crate) free_at: Time,
    /// `(rate, ps)`: at `link.rate_bps == rate`, one byte takes exactly `ps` picoseconds
    /// (`ps == 0`: not a whole number; use [`tx_time`]).
    pub(crate) ps_per_byte: (u64, u64),
    /// The link.
    pub link: LinkConfig,
    /// Egress queues.
    pub queues: EgressQueues,
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
    /// Bytes at the start of a port that a packet's hop reads (its own fields and its queues'
    /// [`EgressQueues::HOT_BYTES`]): what the event loop fetches ahead, not the cold rest.
    pub(crate) const HOT_BYTES: usize = std::mem::offset_of!(Port, queues) + EgressQueues::HOT_BYTES;

    /// An idle port on `link` towards `peer`'s port `peer_port`, with `queues`; `ns_grid` for
    /// the like-for-like mode ([`Port::ns_grid`]).
    pub(crate) fn new(link: LinkConfig, queues: EgressQueues, peer: NodeId, peer_port: u16, ns_grid: bool) -> Port {
        Port {
            queues,
            peer,
            peer_port,
            link,
            busy: false,
            done: (0, 0),
            free_at: 0,
            direct: false,
            tap: None,
            pausable: false,
            notify_idle: false,
            down: false,
            ps_per_byte: ps_per_byte(link.rate_bps),
            ns_grid,
        }
    }

    /// [`tx_time`] of `bytes` on this port's link, by one multiplication when the rate divides
    /// 8 Tb/s evenly (every common rate does) and the product fits: the same value either way.
    #[inline]
    pub(crate) fn ser_time(&self, bytes: u64) -> Time {
        let (rate, ps) = self.ps_per_byte;
        let t = match bytes.checked_mul(ps) {
            Some(t) if ps != 0 && rate == self.link.rate_bps => t,
            _ => tx_time(bytes, self.link.rate_bps),
        };
        if self.ns_grid {
            return ns_grid(t);
        }
        t
    }
}

/// `t` rounded to the nearest nanosecond ([`Port::ns_grid`]; a time too close to
/// [`Time::MAX`] to round stays as it is).
#[inline]
pub(crate) fn ns_grid(t: Time) -> Time {
    let ns = crate::time::NS;
    t.checked_add(ns / 2).map_or(t, |u| u / ns * ns)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LinkConfig, QueueConfig};
    use crate::packet::NodeId;
    use crate::queue::EgressQueues;

    fn port(rate_bps: u64, ns_grid: bool) -> Port {
        let link = LinkConfig {
            rate_bps,
            delay: 0,
            framing_overhead: 0,
            l2_header: 2,
        };
        Port::new(link, EgressQueues::new(QueueConfig::default()), NodeId(0), 0, ns_grid)
    }

    #[test]
    fn like_for_like_links_serialise_on_the_nanosecond_grid() {
        // A full PPP segment (1502 bytes) at 10 Gb/s: 1201.6 ns, which ns-3 holds as 1202 ns.
        assert_eq!(port(10_000_000_000, false).ser_time(1502), 1_201_600);
        assert_eq!(port(10_000_000_000, true).ser_time(1502), 1_202_000);
        // A rate the fast path cannot take (3 Gb/s), rounded the same way; whole nanoseconds
        // (1 Gb/s) stay as they are.
        assert_eq!(port(3_000_000_000, false).ser_time(1502), tx_time(1502, 3_000_000_000));
        assert_eq!(port(3_000_000_000, true).ser_time(1502), 4_005_000);
        assert_eq!(port(1_000_000_000, true).ser_time(1502), 12_016_000);
    }
}
