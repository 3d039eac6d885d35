//! The application API: an [`App`] is fed switch connections, packet_in events, the switches'
//! other messages (flow_removed, port_status, multipart and barrier replies, errors) and its own
//! timers, each with the current time, and pushes the [`Reply`] messages to send: any message
//! to any connected switch.

use crate::event::PacketInEvent;
use crate::sink::EncodedReplies;
use std::net::Ipv4Addr;
use tandem_wire::ipv4::IpProtocol;
use tandem_wire::openflow::{Body, FlowMod, Message, OxmField, PacketOut, Version};

/// The OpenFlow 1.3 match fields of one IPv4 flow exactly: EtherType, protocol, addresses and,
/// for TCP and UDP, the ports (what an app matching per flow installs).
pub fn ipv4_flow_fields(proto: u8, src: Ipv4Addr, dst: Ipv4Addr, sport: u16, dport: u16) -> Vec<OxmField> {
    let mut f = vec![
        OxmField::EthType(0x0800),
        OxmField::IpProto(proto),
        OxmField::Ipv4Src(src, None),
        OxmField::Ipv4Dst(dst, None),
    ];
    match IpProtocol(proto) {
        IpProtocol::TCP => f.extend([OxmField::TcpSrc(sport), OxmField::TcpDst(dport)]),
        IpProtocol::UDP => f.extend([OxmField::UdpSrc(sport), OxmField::UdpDst(dport)]),
        _ => {}
    }
    f
}

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
        Reply::message(dpid, version, xid, Body::FlowMod(fm))
    }

    /// Any message for `dpid`.
    pub fn message(dpid: u64, version: Version, xid: u32, body: Body) -> Reply {
        Reply {
            dpid,
            message: Message { version, xid, body },
        }
    }

    /// A packet_out for `dpid`.
    pub fn packet_out(dpid: u64, version: Version, xid: u32, po: PacketOut) -> Reply {
        Reply::message(dpid, version, xid, Body::PacketOut(po))
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
    /// As [`App::on_packet_in`], the replies encoded in place into `out` (what the server's
    /// scalar backend calls). The default collects [`App::on_packet_in`]'s replies and encodes
    /// them; an app that builds replies into reused messages overrides it to skip the copy.
    fn on_packet_in_encoded(&mut self, now_ps: u64, dpid: u64, ev: &PacketInEvent, out: &mut EncodedReplies) {
        let mut replies = Vec::new();
        self.on_packet_in(now_ps, dpid, ev, &mut replies);
        for r in replies {
            out.encode(r.dpid, &r.message);
        }
    }
    /// Another message arrived from the connected switch `dpid`: flow_removed, port_status,
    /// multipart (stats) replies, barrier replies, errors, get-config replies. The default
    /// ignores it.
    fn on_message(&mut self, now_ps: u64, dpid: u64, msg: &Message, out: &mut Vec<Reply>) {
        let _ = (now_ps, dpid, msg, out);
    }
    /// When the app next wants [`App::on_timeout`] (picoseconds, the same clock as `now_ps`);
    /// `None`: no timer. The driver asks again after every call.
    fn poll_timeout(&self) -> Option<u64> {
        None
    }
    /// The time [`App::poll_timeout`] named has come (or passed).
    fn on_timeout(&mut self, now_ps: u64, out: &mut Vec<Reply>) {
        let _ = (now_ps, out);
    }
}

/// One input of an [`App`] through the shared core contract ([`AppCore`]); each is one of
/// the app's own calls.
#[derive(Debug, Clone, Copy)]
pub enum AppInput<'a> {
    /// [`App::on_switch_connected`].
    Connected {
        /// The switch.
        dpid: u64,
        /// The negotiated version.
        version: Version,
    },
    /// [`App::on_switch_disconnected`].
    Disconnected {
        /// The switch.
        dpid: u64,
    },
    /// [`App::on_packet_in`].
    PacketIn {
        /// The switch it came from.
        dpid: u64,
        /// The packet_in.
        ev: &'a PacketInEvent,
    },
    /// [`App::on_message`].
    Message {
        /// The switch it came from.
        dpid: u64,
        /// The message.
        msg: &'a Message,
    },
    /// Time passed: [`App::on_timeout`] runs when [`App::poll_timeout`] is due.
    Timeout,
}

/// Any [`App`] under the shared core contract ([`tandem_time::sansio::SansIo`]): inputs are
/// the app's calls, the output its replies, the timeout its own.
#[derive(Debug, Clone, Default)]
pub struct AppCore<A>(pub A);

impl<A: App> tandem_time::sansio::SansIo for AppCore<A> {
    type Input<'a> = AppInput<'a>;
    type Output = Vec<Reply>;
    type Error = std::convert::Infallible;

    fn handle(&mut self, now: u64, input: AppInput<'_>, out: &mut Vec<Reply>) -> Result<(), Self::Error> {
        let app = &mut self.0;
        match input {
            AppInput::Connected { dpid, version } => app.on_switch_connected(now, dpid, version, out),
            AppInput::Disconnected { dpid } => app.on_switch_disconnected(now, dpid, out),
            AppInput::PacketIn { dpid, ev } => app.on_packet_in(now, dpid, ev, out),
            AppInput::Message { dpid, msg } => app.on_message(now, dpid, msg, out),
            AppInput::Timeout => {
                if app.poll_timeout().is_some_and(|t| t <= now) {
                    app.on_timeout(now, out);
                }
            }
        }
        Ok(())
    }

    fn poll_timeout(&self) -> Option<u64> {
        self.0.poll_timeout()
    }

    fn timeout() -> AppInput<'static> {
        AppInput::Timeout
    }
}
