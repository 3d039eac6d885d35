//! The application API: an [`App`] is fed switch connections and packet_in events with the
//! current time and pushes the [`Reply`] messages to send.

use crate::event::PacketInEvent;
use tandem_wire::openflow::{Body, FlowMod, Message, PacketOut, Version};

/// One message to send to a datapath.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reply {
    /// Datapath id of the switch to send it to.
    pub dpid: u64,
    /// The ready message (encode it with [`Message::to_bytes`]).
    pub message: Message,
}

impl Reply {
    /// A flow_mod for `dpid`.
    pub fn flow_mod(dpid: u64, version: Version, xid: u32, fm: FlowMod) -> Reply {
        Reply {
            dpid,
            message: Message {
                version,
                xid,
                body: Body::FlowMod(fm),
            },
        }
    }

    /// A packet_out for `dpid`.
    pub fn packet_out(dpid: u64, version: Version, xid: u32, po: PacketOut) -> Reply {
        Reply {
            dpid,
            message: Message {
                version,
                xid,
                body: Body::PacketOut(po),
            },
        }
    }
}

/// A controller application. Every call gets the current time in picoseconds and appends what
/// to send to `out`; an app never reads a clock or touches the network itself.
pub trait App {
    /// A switch finished its handshake (features reply received) with this version.
    fn on_switch_connected(&mut self, now_ps: u64, dpid: u64, version: Version, out: &mut Vec<Reply>);
    /// A switch's connection went away.
    fn on_switch_disconnected(&mut self, now_ps: u64, dpid: u64, out: &mut Vec<Reply>);
    /// A packet_in arrived from `dpid`.
    fn on_packet_in(&mut self, now_ps: u64, dpid: u64, ev: &PacketInEvent, out: &mut Vec<Reply>);
}
