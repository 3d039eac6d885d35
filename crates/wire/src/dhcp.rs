//! DHCP (RFC 2131) messages: the BOOTP fixed part (RFC 951) plus the options Tandem models
//! (RFC 2132): 1 subnet mask, 3 routers, 6 DNS servers, 12 host name, 50 requested address,
//! 51 lease time, 53 message type, 54 server identifier, 55 parameter request list, 61 client
//! identifier and 255 end. Any other option is kept raw, in order, so a message round-trips.
//!
//! An option that appears more than once is concatenated, as RFC 3396 asks. The `sname` and
//! `file` fields are readable from the view but not carried by [`DhcpRepr`] (option overload,
//! option 52, is kept raw and not interpreted).

use crate::ethernet::MacAddr;
use crate::field::{ipv4_at, read_u16, read_u32, write_u16, write_u32};
use crate::{Error, Result};
use std::net::Ipv4Addr;

/// UDP port of DHCP servers.
pub const SERVER_PORT: u16 = 67;
/// UDP port of DHCP clients.
pub const CLIENT_PORT: u16 = 68;
/// The magic cookie 99.130.83.99 that starts the options.
pub const MAGIC_COOKIE: u32 = 0x6382_5363;
/// Length of the BOOTP fixed part plus the magic cookie: where options start.
pub const OPTIONS_OFFSET: usize = 240;
/// Smallest BOOTP message relays must accept (RFC 1542 §2.1); emit pads to it.
pub const MIN_MESSAGE_LEN: usize = 300;
/// The broadcast bit of the flags field.
pub const FLAG_BROADCAST: u16 = 0x8000;

mod f {
    use crate::field::Field;
    pub const OP: usize = 0;
    pub const HTYPE: usize = 1;
    pub const HLEN: usize = 2;
    pub const HOPS: usize = 3;
    pub const XID: usize = 4;
    pub const SECS: usize = 8;
    pub const FLAGS: usize = 10;
    pub const CIADDR: Field = 12..16;
    pub const YIADDR: Field = 16..20;
    pub const SIADDR: Field = 20..24;
    pub const GIADDR: Field = 24..28;
    pub const CHADDR: Field = 28..44;
    pub const SNAME: Field = 44..108;
    pub const FILE: Field = 108..236;
    pub const COOKIE: usize = 236;
}

/// Option codes this module interprets.
pub mod code {
    /// Padding (one byte, no length).
    pub const PAD: u8 = 0;
    /// Subnet mask.
    pub const SUBNET_MASK: u8 = 1;
    /// Routers.
    pub const ROUTER: u8 = 3;
    /// DNS servers.
    pub const DNS_SERVER: u8 = 6;
    /// Host name.
    pub const HOST_NAME: u8 = 12;
    /// Requested IP address.
    pub const REQUESTED_IP: u8 = 50;
    /// Lease time in seconds.
    pub const LEASE_TIME: u8 = 51;
    /// DHCP message type.
    pub const MESSAGE_TYPE: u8 = 53;
    /// Server identifier.
    pub const SERVER_ID: u8 = 54;
    /// Parameter request list.
    pub const PARAMETER_REQUEST_LIST: u8 = 55;
    /// Client identifier.
    pub const CLIENT_ID: u8 = 61;
    /// End of options.
    pub const END: u8 = 255;
}

/// BOOTP operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BootpOp {
    /// 1: client to server.
    Request,
    /// 2: server to client.
    Reply,
}

/// The DHCP message type (option 53); codes beyond RFC 2132's eight are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DhcpMessageType {
    /// 1
    Discover,
    /// 2
    Offer,
    /// 3
    Request,
    /// 4
    Decline,
    /// 5
    Ack,
    /// 6
    Nak,
    /// 7
    Release,
    /// 8
    Inform,
    /// Any other code.
    Unknown(u8),
}

impl DhcpMessageType {
    /// Decodes a message-type code.
    pub fn from_code(c: u8) -> DhcpMessageType {
        use DhcpMessageType::*;
        match c {
            1 => Discover,
            2 => Offer,
            3 => Request,
            4 => Decline,
            5 => Ack,
            6 => Nak,
            7 => Release,
            8 => Inform,
            c => Unknown(c),
        }
    }
    /// The message-type code.
    pub fn code(self) -> u8 {
        use DhcpMessageType::*;
        match self {
            Discover => 1,
            Offer => 2,
            Request => 3,
            Decline => 4,
            Ack => 5,
            Nak => 6,
            Release => 7,
            Inform => 8,
            Unknown(c) => c,
        }
    }
}

/// A zero-copy view of a DHCP message (the UDP payload).
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it.
    pub fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }
    /// Wraps a buffer and runs [`Packet::check_len`].
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    /// Checks that the fixed part and the magic cookie are present (options are checked as
    /// they are read).
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < OPTIONS_OFFSET {
            return Err(Error::Truncated);
        }
        Ok(())
    }
    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// Operation code (1 request, 2 reply).
    pub fn op(&self) -> u8 {
        self.buffer.as_ref()[f::OP]
    }
    /// Hardware type (1 for Ethernet).
    pub fn hardware_type(&self) -> u8 {
        self.buffer.as_ref()[f::HTYPE]
    }
    /// Hardware address length.
    pub fn hardware_len(&self) -> u8 {
        self.buffer.as_ref()[f::HLEN]
    }
    /// Relay hops.
    pub fn hops(&self) -> u8 {
        self.buffer.as_ref()[f::HOPS]
    }
    /// Transaction id.
    pub fn xid(&self) -> u32 {
        read_u32(self.buffer.as_ref(), f::XID)
    }
    /// Seconds since the client began.
    pub fn secs(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::SECS)
    }
    /// Flags (bit 15 is broadcast).
    pub fn flags(&self) -> u16 {
        read_u16(self.buffer.as_ref(), f::FLAGS)
    }
    /// Client address (ciaddr).
    pub fn client_addr(&self) -> Ipv4Addr {
        ipv4_at(self.buffer.as_ref(), f::CIADDR)
    }
    /// "Your" address (yiaddr).
    pub fn your_addr(&self) -> Ipv4Addr {
        ipv4_at(self.buffer.as_ref(), f::YIADDR)
    }
    /// Next server address (siaddr).
    pub fn server_addr(&self) -> Ipv4Addr {
        ipv4_at(self.buffer.as_ref(), f::SIADDR)
    }
    /// Relay agent address (giaddr).
    pub fn relay_addr(&self) -> Ipv4Addr {
        ipv4_at(self.buffer.as_ref(), f::GIADDR)
    }
    /// The 16-byte client hardware address field.
    pub fn client_hardware_addr(&self) -> &[u8] {
        &self.buffer.as_ref()[f::CHADDR]
    }
    /// The 64-byte server host name field.
    pub fn sname(&self) -> &[u8] {
        &self.buffer.as_ref()[f::SNAME]
    }
    /// The 128-byte boot file name field.
    pub fn file(&self) -> &[u8] {
        &self.buffer.as_ref()[f::FILE]
    }
    /// The magic cookie word (0x63825363 for DHCP).
    pub fn magic_cookie(&self) -> u32 {
        read_u32(self.buffer.as_ref(), f::COOKIE)
    }
    /// Iterates over the options (pads skipped, stopping at end).
    pub fn options(&self) -> Options<'_> {
        Options {
            rest: &self.buffer.as_ref()[OPTIONS_OFFSET..],
            ended: false,
        }
    }
}

/// One option as it appears in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DhcpOption<'a> {
    /// Option code.
    pub code: u8,
    /// Option data (without code and length).
    pub data: &'a [u8],
}

/// Iterator over the options of a [`Packet`]. Yields `Err` once (and then stops) for an option
/// that runs past the buffer or for options not closed by the end option.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    rest: &'a [u8],
    ended: bool,
}

impl<'a> Iterator for Options<'a> {
    type Item = Result<DhcpOption<'a>>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.ended {
            return None;
        }
        loop {
            match self.rest {
                [] => {
                    self.ended = true;
                    return Some(Err(Error::Malformed("dhcp options not terminated")));
                }
                [code::PAD, rest @ ..] => self.rest = rest,
                [code::END, ..] => {
                    self.ended = true;
                    return None;
                }
                [c, len, rest @ ..] if rest.len() >= usize::from(*len) => {
                    let (data, rest) = rest.split_at(usize::from(*len));
                    self.rest = rest;
                    return Some(Ok(DhcpOption { code: *c, data }));
                }
                _ => {
                    self.ended = true;
                    return Some(Err(Error::Truncated));
                }
            }
        }
    }
}

/// An owned DHCP message with the options Tandem models.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DhcpRepr {
    /// Request (client to server) or reply.
    pub op: BootpOp,
    /// Relay hops.
    pub hops: u8,
    /// Transaction id.
    pub xid: u32,
    /// Seconds since the client began.
    pub secs: u16,
    /// Flags (see [`FLAG_BROADCAST`]).
    pub flags: u16,
    /// ciaddr.
    pub client_ip: Ipv4Addr,
    /// yiaddr.
    pub your_ip: Ipv4Addr,
    /// siaddr.
    pub server_ip: Ipv4Addr,
    /// giaddr.
    pub relay_ip: Ipv4Addr,
    /// Client MAC address (chaddr with htype 1, hlen 6).
    pub client_mac: MacAddr,
    /// Option 53.
    pub message_type: DhcpMessageType,
    /// Option 1.
    pub subnet_mask: Option<Ipv4Addr>,
    /// Option 3 (empty when absent).
    pub routers: Vec<Ipv4Addr>,
    /// Option 6 (empty when absent).
    pub dns_servers: Vec<Ipv4Addr>,
    /// Option 12.
    pub host_name: Option<Vec<u8>>,
    /// Option 50.
    pub requested_ip: Option<Ipv4Addr>,
    /// Option 51, seconds.
    pub lease_time: Option<u32>,
    /// Option 54.
    pub server_id: Option<Ipv4Addr>,
    /// Option 55 (empty when absent).
    pub parameter_request_list: Vec<u8>,
    /// Option 61: type byte then identifier.
    pub client_id: Option<Vec<u8>>,
    /// Every other option, in order of first appearance.
    pub other_options: Vec<(u8, Vec<u8>)>,
}

fn one_addr(data: &[u8], what: &'static str) -> Result<Ipv4Addr> {
    match data {
        [a, b, c, d] => Ok(Ipv4Addr::new(*a, *b, *c, *d)),
        _ => Err(Error::Malformed(what)),
    }
}

fn addr_list(data: &[u8], what: &'static str) -> Result<Vec<Ipv4Addr>> {
    if data.is_empty() || !data.len().is_multiple_of(4) {
        return Err(Error::Malformed(what));
    }
    Ok(data
        .chunks_exact(4)
        .map(|c| Ipv4Addr::new(c[0], c[1], c[2], c[3]))
        .collect())
}

impl DhcpRepr {
    /// Reads a DHCP message: Ethernet hardware addresses, the magic cookie and a message type
    /// are required; modelled options must have valid lengths.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<DhcpRepr> {
        p.check_len()?;
        let op = match p.op() {
            1 => BootpOp::Request,
            2 => BootpOp::Reply,
            _ => return Err(Error::Malformed("bootp op")),
        };
        if p.hardware_type() != 1 || p.hardware_len() != 6 {
            return Err(Error::Unsupported("dhcp hardware other than ethernet"));
        }
        if p.magic_cookie() != MAGIC_COOKIE {
            return Err(Error::Unsupported("bootp without the dhcp magic cookie"));
        }
        // Concatenate repeated options (RFC 3396), keeping order of first appearance.
        let mut merged: Vec<(u8, Vec<u8>)> = Vec::new();
        for opt in p.options() {
            let opt = opt?;
            match merged.iter_mut().find(|(c, _)| *c == opt.code) {
                Some((_, data)) => data.extend_from_slice(opt.data),
                None => merged.push((opt.code, opt.data.to_vec())),
            }
        }
        let mut r = DhcpRepr {
            op,
            hops: p.hops(),
            xid: p.xid(),
            secs: p.secs(),
            flags: p.flags(),
            client_ip: p.client_addr(),
            your_ip: p.your_addr(),
            server_ip: p.server_addr(),
            relay_ip: p.relay_addr(),
            client_mac: MacAddr::from_bytes(p.client_hardware_addr()),
            message_type: DhcpMessageType::Unknown(0),
            subnet_mask: None,
            routers: Vec::new(),
            dns_servers: Vec::new(),
            host_name: None,
            requested_ip: None,
            lease_time: None,
            server_id: None,
            parameter_request_list: Vec::new(),
            client_id: None,
            other_options: Vec::new(),
        };
        let mut message_type = None;
        for (c, data) in merged {
            match c {
                code::MESSAGE_TYPE => match data[..] {
                    [t] => message_type = Some(DhcpMessageType::from_code(t)),
                    _ => return Err(Error::Malformed("dhcp message type length")),
                },
                code::SUBNET_MASK => r.subnet_mask = Some(one_addr(&data, "dhcp subnet mask length")?),
                code::ROUTER => r.routers = addr_list(&data, "dhcp router length")?,
                code::DNS_SERVER => r.dns_servers = addr_list(&data, "dhcp dns server length")?,
                code::HOST_NAME if data.is_empty() => return Err(Error::Malformed("dhcp host name length")),
                code::HOST_NAME => r.host_name = Some(data),
                code::REQUESTED_IP => r.requested_ip = Some(one_addr(&data, "dhcp requested address length")?),
                code::LEASE_TIME => match data[..] {
                    [a, b, c, d] => r.lease_time = Some(u32::from_be_bytes([a, b, c, d])),
                    _ => return Err(Error::Malformed("dhcp lease time length")),
                },
                code::SERVER_ID => r.server_id = Some(one_addr(&data, "dhcp server identifier length")?),
                code::PARAMETER_REQUEST_LIST if data.is_empty() => {
                    return Err(Error::Malformed("dhcp parameter request list length"))
                }
                code::PARAMETER_REQUEST_LIST => r.parameter_request_list = data,
                code::CLIENT_ID if data.len() < 2 => return Err(Error::Malformed("dhcp client identifier length")),
                code::CLIENT_ID => r.client_id = Some(data),
                _ => r.other_options.push((c, data)),
            }
        }
        r.message_type = message_type.ok_or(Error::Malformed("dhcp message type missing"))?;
        Ok(r)
    }

    /// The options in the order emit writes them (message type first, as RFC 2131 §4.1 suggests).
    fn option_list(&self) -> Vec<(u8, Vec<u8>)> {
        let mut v = vec![(code::MESSAGE_TYPE, vec![self.message_type.code()])];
        let addrs = |a: &[Ipv4Addr]| a.iter().flat_map(|x| x.octets()).collect::<Vec<u8>>();
        if let Some(id) = &self.client_id {
            v.push((code::CLIENT_ID, id.clone()));
        }
        if let Some(a) = self.requested_ip {
            v.push((code::REQUESTED_IP, a.octets().to_vec()));
        }
        if let Some(a) = self.server_id {
            v.push((code::SERVER_ID, a.octets().to_vec()));
        }
        if let Some(t) = self.lease_time {
            v.push((code::LEASE_TIME, t.to_be_bytes().to_vec()));
        }
        if let Some(a) = self.subnet_mask {
            v.push((code::SUBNET_MASK, a.octets().to_vec()));
        }
        if !self.routers.is_empty() {
            v.push((code::ROUTER, addrs(&self.routers)));
        }
        if !self.dns_servers.is_empty() {
            v.push((code::DNS_SERVER, addrs(&self.dns_servers)));
        }
        if let Some(h) = &self.host_name {
            v.push((code::HOST_NAME, h.clone()));
        }
        if !self.parameter_request_list.is_empty() {
            v.push((code::PARAMETER_REQUEST_LIST, self.parameter_request_list.clone()));
        }
        v.extend(self.other_options.iter().cloned());
        v
    }

    fn options_len(&self) -> usize {
        // Data longer than 255 bytes is split into several instances (RFC 3396); empty data
        // still takes one instance.
        self.option_list()
            .iter()
            .map(|(_, d)| 2 * d.len().div_ceil(255).max(1) + d.len())
            .sum::<usize>()
            + 1
    }

    /// Bytes this repr emits: the fixed part, options and end, padded to 300 bytes.
    pub fn buffer_len(&self) -> usize {
        (OPTIONS_OFFSET + self.options_len()).max(MIN_MESSAGE_LEN)
    }

    /// Writes the message into the start of `buf` (at least `buffer_len()` bytes); `sname`,
    /// `file` and the padding after the end option are zeroed.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len();
        if buf.len() < len {
            return Err(Error::Truncated);
        }
        for (c, _) in &self.other_options {
            if matches!(*c, code::PAD | code::END) {
                return Err(Error::Malformed("dhcp pad or end given as an option"));
            }
        }
        let buf = &mut buf[..len];
        buf.fill(0);
        buf[f::OP] = match self.op {
            BootpOp::Request => 1,
            BootpOp::Reply => 2,
        };
        buf[f::HTYPE] = 1;
        buf[f::HLEN] = 6;
        buf[f::HOPS] = self.hops;
        write_u32(buf, f::XID, self.xid);
        write_u16(buf, f::SECS, self.secs);
        write_u16(buf, f::FLAGS, self.flags);
        buf[f::CIADDR].copy_from_slice(&self.client_ip.octets());
        buf[f::YIADDR].copy_from_slice(&self.your_ip.octets());
        buf[f::SIADDR].copy_from_slice(&self.server_ip.octets());
        buf[f::GIADDR].copy_from_slice(&self.relay_ip.octets());
        buf[f::CHADDR.start..f::CHADDR.start + 6].copy_from_slice(&self.client_mac.0);
        write_u32(buf, f::COOKIE, MAGIC_COOKIE);
        let mut at = OPTIONS_OFFSET;
        for (c, data) in self.option_list() {
            let mut chunks: Vec<&[u8]> = data.chunks(255).collect();
            if chunks.is_empty() {
                chunks.push(&[]);
            }
            for chunk in chunks {
                buf[at] = c;
                buf[at + 1] = chunk.len() as u8;
                buf[at + 2..at + 2 + chunk.len()].copy_from_slice(chunk);
                at += 2 + chunk.len();
            }
        }
        buf[at] = code::END;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    fn discover() -> DhcpRepr {
        DhcpRepr {
            op: BootpOp::Request,
            hops: 0,
            xid: 0x3903_f326,
            secs: 0,
            flags: FLAG_BROADCAST,
            client_ip: Ipv4Addr::UNSPECIFIED,
            your_ip: Ipv4Addr::UNSPECIFIED,
            server_ip: Ipv4Addr::UNSPECIFIED,
            relay_ip: Ipv4Addr::UNSPECIFIED,
            client_mac: MacAddr([0x00, 0x0b, 0x82, 0x01, 0xfc, 0x42]),
            message_type: DhcpMessageType::Discover,
            subnet_mask: None,
            routers: vec![],
            dns_servers: vec![],
            host_name: None,
            requested_ip: Some(Ipv4Addr::UNSPECIFIED),
            lease_time: None,
            server_id: None,
            parameter_request_list: vec![1, 3, 6, 42],
            client_id: Some(vec![1, 0x00, 0x0b, 0x82, 0x01, 0xfc, 0x42]),
            other_options: vec![],
        }
    }

    #[test]
    fn known_discover_bytes() {
        let r = discover();
        assert_eq!(r.buffer_len(), 300);
        let mut buf = vec![0xeeu8; 300];
        r.emit(&mut buf).unwrap();
        assert_eq!(&buf[..12], &[1, 1, 6, 0, 0x39, 0x03, 0xf3, 0x26, 0, 0, 0x80, 0]);
        assert_eq!(&buf[28..34], &[0x00, 0x0b, 0x82, 0x01, 0xfc, 0x42]);
        assert_eq!(&buf[236..240], &[0x63, 0x82, 0x53, 0x63]);
        let opts: &[u8] = &[
            53, 1, 1, // discover
            61, 7, 1, 0x00, 0x0b, 0x82, 0x01, 0xfc, 0x42, // client id
            50, 4, 0, 0, 0, 0, // requested address
            55, 4, 1, 3, 6, 42, // parameter request list
            255,
        ];
        assert_eq!(&buf[240..240 + opts.len()], opts);
        assert!(buf[240 + opts.len()..].iter().all(|&b| b == 0));
        assert_eq!(DhcpRepr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
    }

    #[test]
    fn repeated_options_concatenate_and_long_ones_split() {
        let mut r = discover();
        r.host_name = Some(vec![b'h'; 300]);
        r.other_options = vec![(224, vec![])];
        let mut buf = vec![0u8; r.buffer_len()];
        r.emit(&mut buf).unwrap();
        let p = Packet::new_checked(&buf[..]).unwrap();
        let names: Vec<usize> = p
            .options()
            .map(|o| o.unwrap())
            .filter(|o| o.code == code::HOST_NAME)
            .map(|o| o.data.len())
            .collect();
        assert_eq!(names, [255, 45]);
        assert_eq!(DhcpRepr::parse(&p).unwrap(), r);
    }

    #[test]
    fn malformed_options_are_errors() {
        let mut buf = vec![0u8; 300];
        discover().emit(&mut buf).unwrap();
        let parse = |b: &[u8]| DhcpRepr::parse(&Packet::new_checked(b).unwrap());
        // Message type with length 2.
        let mut b = buf.clone();
        b[241] = 2;
        assert!(parse(&b).is_err());
        // Options without an end.
        let mut b = buf[..270].to_vec();
        b[269] = 0;
        let end = b.iter().rposition(|&x| x == 255).unwrap();
        b[end] = 0;
        assert_eq!(parse(&b).unwrap_err(), Error::Malformed("dhcp options not terminated"));
        // An option running past the buffer.
        let b = &buf[..245];
        assert_eq!(parse(b).unwrap_err(), Error::Truncated);
        // Wrong cookie, short fixed part.
        let mut b = buf.clone();
        b[236] = 0;
        assert!(matches!(parse(&b), Err(Error::Unsupported(_))));
        assert_eq!(Packet::new_checked(&buf[..239]).unwrap_err(), Error::Truncated);
    }

    pub(crate) fn any_repr() -> impl Strategy<Value = DhcpRepr> {
        let addr = || any::<[u8; 4]>().prop_map(Ipv4Addr::from);
        let addrs = || prop::collection::vec(any::<[u8; 4]>().prop_map(Ipv4Addr::from), 0..4);
        let bytes = |lo: usize| prop::collection::vec(any::<u8>(), lo..40);
        let other = prop::collection::btree_map(
            (1u8..255).prop_filter("modelled", |c| ![1u8, 3, 6, 12, 50, 51, 53, 54, 55, 61].contains(c)),
            bytes(0),
            0..4,
        );
        (
            (
                any::<bool>(),
                any::<u8>(),
                any::<u32>(),
                any::<u16>(),
                any::<u16>(),
                addr(),
                addr(),
                addr(),
                addr(),
            ),
            (
                any::<[u8; 6]>(),
                any::<u8>(),
                prop::option::of(addr()),
                addrs(),
                addrs(),
                prop::option::of(bytes(1)),
            ),
            (
                prop::option::of(addr()),
                any::<Option<u32>>(),
                prop::option::of(addr()),
                bytes(0),
                prop::option::of(bytes(2)),
            ),
            other,
        )
            .prop_map(
                |(
                    (req, hops, xid, secs, flags, ci, yi, si, gi),
                    (mac, mt, mask, rt, dns, hn),
                    (rq, lt, sid, prl, cid),
                    other,
                )| {
                    DhcpRepr {
                        op: if req { BootpOp::Request } else { BootpOp::Reply },
                        hops,
                        xid,
                        secs,
                        flags,
                        client_ip: ci,
                        your_ip: yi,
                        server_ip: si,
                        relay_ip: gi,
                        client_mac: MacAddr(mac),
                        message_type: DhcpMessageType::from_code(mt),
                        subnet_mask: mask,
                        routers: rt,
                        dns_servers: dns,
                        host_name: hn,
                        requested_ip: rq,
                        lease_time: lt,
                        server_id: sid,
                        parameter_request_list: prl,
                        client_id: cid,
                        other_options: other.into_iter().collect(),
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn round_trip(r in any_repr()) {
            let mut buf = vec![0u8; r.buffer_len()];
            r.emit(&mut buf).unwrap();
            prop_assert_eq!(DhcpRepr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }

        #[test]
        fn never_panics(tail in proptest::collection::vec(any::<u8>(), 0..80), cookie in any::<bool>()) {
            let mut data = vec![0u8; OPTIONS_OFFSET];
            data[0] = 1;
            data[1] = 1;
            data[2] = 6;
            if cookie {
                data[236..240].copy_from_slice(&MAGIC_COOKIE.to_be_bytes());
            }
            data.extend_from_slice(&tail);
            let p = Packet::new_checked(&data[..]).unwrap();
            let _ = p.options().count();
            let _ = DhcpRepr::parse(&p);
        }
    }
}
