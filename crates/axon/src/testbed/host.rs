//! The simple hosts of the testbed: a MAC and an IPv4 address (static, or from the Axon's DHCP
//! server through [`super::dhcp_client`]) on one Axon host port, an ARP cache, ARP answered for its own address, and timestamped data frames ("UDP-like": an
//! Ethernet frame of type [`DATA_ETHERTYPE`] whose payload names the source and destination
//! addresses, a sequence number and the send time).
//!
//! Data payload, big-endian: `0..4 source IPv4 | 4..8 destination IPv4 | 8..16 sequence |
//! 16..24 send time in ps`, padded to the frame size.

use super::dhcp_client;
use crate::control::frames;
use crate::control::Endpoint;
use std::collections::BTreeMap;
use tandem_wire::arp::{ArpOperation, ArpRepr};
use tandem_wire::dhcp::{DhcpMessageType, DhcpRepr};
use tandem_wire::ethernet::{EthernetRepr, Frame, HEADER_LEN};
use tandem_wire::{EtherType, Ipv4Addr, MacAddr};

/// The EtherType of the hosts' data frames (IEEE local experimental).
pub const DATA_ETHERTYPE: EtherType = EtherType(0x88b5);
/// Bytes of the data payload that carry something.
pub const DATA_PAYLOAD_LEN: usize = 24;

/// Index of a host in its [`super::Testbed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostId(pub usize);

/// A data frame a host received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Delivery {
    /// When its last byte arrived.
    pub at_ps: u64,
    /// The sender's address.
    pub from_ip: Ipv4Addr,
    /// The sender's sequence number.
    pub seq: u64,
    /// When the sender handed it to its link.
    pub sent_ps: u64,
}

/// What a data payload says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataPayload {
    /// Source address.
    pub src_ip: Ipv4Addr,
    /// Destination address.
    pub dst_ip: Ipv4Addr,
    /// Sequence number.
    pub seq: u64,
    /// Send time.
    pub sent_ps: u64,
}

impl DataPayload {
    /// The payload bytes.
    pub fn emit(&self) -> [u8; DATA_PAYLOAD_LEN] {
        let mut b = [0u8; DATA_PAYLOAD_LEN];
        b[0..4].copy_from_slice(&self.src_ip.octets());
        b[4..8].copy_from_slice(&self.dst_ip.octets());
        b[8..16].copy_from_slice(&self.seq.to_be_bytes());
        b[16..24].copy_from_slice(&self.sent_ps.to_be_bytes());
        b
    }

    /// Reads a payload; `None` if it is too short.
    pub fn parse(b: &[u8]) -> Option<DataPayload> {
        let ip = |i: usize| -> Option<Ipv4Addr> {
            let o: [u8; 4] = b.get(i..i + 4)?.try_into().ok()?;
            Some(Ipv4Addr::from(o))
        };
        let num = |i: usize| -> Option<u64> { Some(u64::from_be_bytes(b.get(i..i + 8)?.try_into().ok()?)) };
        Some(DataPayload {
            src_ip: ip(0)?,
            dst_ip: ip(4)?,
            seq: num(8)?,
            sent_ps: num(16)?,
        })
    }
}

/// An Ethernet frame of `len` bytes (at least the header and the payload) carrying `p`.
pub fn data_frame(dst: MacAddr, src: MacAddr, p: &DataPayload, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len.max(HEADER_LEN + DATA_PAYLOAD_LEN).max(frames::MIN_FRAME_LEN)];
    let e = EthernetRepr {
        dst,
        src,
        vlan: None,
        ethertype: DATA_ETHERTYPE,
    };
    // The buffer always holds the header.
    let _ = e.emit(&mut f);
    f[HEADER_LEN..HEADER_LEN + DATA_PAYLOAD_LEN].copy_from_slice(&p.emit());
    f
}

/// A host on an Axon host port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// Its MAC.
    pub mac: MacAddr,
    /// Its address (static; announced by a gratuitous ARP when it is added).
    pub ip: Ipv4Addr,
    /// The Axon port it hangs off.
    pub at: Endpoint,
    /// Its link's line rate.
    pub rate_bps: u64,
    /// Its link's propagation delay.
    pub delay_ps: u64,
    /// Bytes of each data frame it sends (without FCS).
    pub frame_bytes: usize,
    /// Whether it sends a gratuitous ARP when added (a host still waiting for DHCP does not).
    pub announce: bool,
    /// Whether it gets its address by DHCP when added (then its address starts unspecified).
    pub dhcp: bool,
    /// When its DHCP lease was bound.
    pub dhcp_bound_ps: Option<u64>,
    /// Whether it keeps every frame it receives in [`Host::frames`].
    pub keep_frames: bool,
    /// Every frame received, with its time, when [`Host::keep_frames`] is set.
    pub frames: Vec<(u64, Vec<u8>)>,
    /// Addresses resolved, with the MAC to send to.
    pub arp_cache: BTreeMap<Ipv4Addr, MacAddr>,
    /// Data waiting for an address to resolve: sequence numbers by destination.
    pub(super) waiting: BTreeMap<Ipv4Addr, Vec<u64>>,
    /// ARP requests it sent: target and time.
    pub arp_sent: Vec<(Ipv4Addr, u64)>,
    /// ARP replies it got: the address resolved and time.
    pub arp_resolved: Vec<(Ipv4Addr, u64)>,
    /// Data frames it sent: destination, sequence and time.
    pub sent: Vec<(Ipv4Addr, u64, u64)>,
    /// Data frames it received.
    pub received: Vec<Delivery>,
}

impl Host {
    /// A host with nothing resolved, sent or received.
    pub fn new(mac: MacAddr, ip: Ipv4Addr, at: Endpoint, rate_bps: u64, delay_ps: u64) -> Host {
        Host {
            mac,
            ip,
            at,
            rate_bps,
            delay_ps,
            frame_bytes: frames::MIN_FRAME_LEN,
            announce: true,
            dhcp: false,
            dhcp_bound_ps: None,
            keep_frames: false,
            frames: vec![],
            arp_cache: BTreeMap::new(),
            waiting: BTreeMap::new(),
            arp_sent: vec![],
            arp_resolved: vec![],
            sent: vec![],
            received: vec![],
        }
    }

    /// A host that asks its Axon's DHCP server for an address when it is added.
    pub fn dhcp_client(mac: MacAddr, at: Endpoint, rate_bps: u64, delay_ps: u64) -> Host {
        Host {
            announce: false,
            dhcp: true,
            ..Host::new(mac, Ipv4Addr::UNSPECIFIED, at, rate_bps, delay_ps)
        }
    }

    /// Its DHCPDISCOVER.
    pub fn dhcp_discover(&self) -> Option<Vec<u8>> {
        dhcp_client::frame(&dhcp_client::message(
            DhcpMessageType::Discover,
            self.mac,
            self.xid(),
            None,
        ))
    }

    fn xid(&self) -> u32 {
        let m = self.mac.0;
        u32::from_be_bytes([m[2], m[3], m[4], m[5]])
    }

    /// Its gratuitous ARP (a request for its own address).
    pub fn gratuitous_arp(&self) -> Vec<u8> {
        let g = ArpRepr {
            operation: ArpOperation::Request,
            sender_mac: self.mac,
            sender_ip: self.ip,
            target_mac: MacAddr::ZERO,
            target_ip: self.ip,
        };
        frames::arp_frame(MacAddr::BROADCAST, self.mac, &g)
    }

    /// A broadcast ARP request for `ip`.
    pub fn arp_request(&self, ip: Ipv4Addr) -> Vec<u8> {
        let q = ArpRepr {
            operation: ArpOperation::Request,
            sender_mac: self.mac,
            sender_ip: self.ip,
            target_mac: MacAddr::ZERO,
            target_ip: ip,
        };
        frames::arp_frame(MacAddr::BROADCAST, self.mac, &q)
    }

    /// Takes a frame in at `now`; returns the frames it answers with (ARP replies, data that
    /// was waiting for the address just resolved).
    pub(super) fn receive(&mut self, now: u64, frame: &[u8]) -> Vec<Vec<u8>> {
        if self.keep_frames {
            self.frames.push((now, frame.to_vec()));
        }
        let Ok(e) = Frame::new_checked(frame) else {
            return vec![];
        };
        if e.dst_addr() != self.mac && !e.dst_addr().is_broadcast() {
            return vec![];
        }
        match e.ethertype() {
            EtherType::ARP => match frames::parse_arp(e.payload()) {
                Some(a) => self.arp(now, &a),
                None => vec![],
            },
            EtherType::IPV4 if self.dhcp => match dhcp_client::parse_reply(frame) {
                Some(d) if d.client_mac == self.mac && d.xid == self.xid() => self.dhcp_reply(now, &d),
                _ => vec![],
            },
            DATA_ETHERTYPE => {
                if let Some(p) = DataPayload::parse(e.payload()).filter(|p| p.dst_ip == self.ip) {
                    self.received.push(Delivery {
                        at_ps: now,
                        from_ip: p.src_ip,
                        seq: p.seq,
                        sent_ps: p.sent_ps,
                    });
                }
                vec![]
            }
            _ => vec![],
        }
    }

    fn dhcp_reply(&mut self, now: u64, d: &DhcpRepr) -> Vec<Vec<u8>> {
        match d.message_type {
            DhcpMessageType::Offer if self.dhcp_bound_ps.is_none() => {
                let server = d.server_id.unwrap_or(d.server_ip);
                let m = dhcp_client::message(
                    DhcpMessageType::Request,
                    self.mac,
                    self.xid(),
                    Some((d.your_ip, server)),
                );
                dhcp_client::frame(&m).into_iter().collect()
            }
            DhcpMessageType::Ack if self.dhcp_bound_ps.is_none() => {
                self.ip = d.your_ip;
                self.dhcp_bound_ps = Some(now);
                vec![]
            }
            _ => vec![],
        }
    }

    fn arp(&mut self, now: u64, a: &ArpRepr) -> Vec<Vec<u8>> {
        match a.operation {
            ArpOperation::Request if a.target_ip == self.ip && a.sender_ip != self.ip => {
                // Like Linux: learn the asker, answer it.
                self.arp_cache.insert(a.sender_ip, a.sender_mac);
                let r = ArpRepr {
                    operation: ArpOperation::Reply,
                    sender_mac: self.mac,
                    sender_ip: self.ip,
                    target_mac: a.sender_mac,
                    target_ip: a.sender_ip,
                };
                vec![frames::arp_frame(a.sender_mac, self.mac, &r)]
            }
            ArpOperation::Reply if a.target_ip == self.ip => {
                self.arp_cache.insert(a.sender_ip, a.sender_mac);
                self.arp_resolved.push((a.sender_ip, now));
                let seqs = self.waiting.remove(&a.sender_ip).unwrap_or_default();
                seqs.into_iter()
                    .map(|seq| self.data_to(now, a.sender_ip, a.sender_mac, seq))
                    .collect()
            }
            _ => vec![],
        }
    }

    /// A data frame to `ip` (resolved to `mac`), noted as sent at `now`.
    pub(super) fn data_to(&mut self, now: u64, ip: Ipv4Addr, mac: MacAddr, seq: u64) -> Vec<u8> {
        self.sent.push((ip, seq, now));
        let p = DataPayload {
            src_ip: self.ip,
            dst_ip: ip,
            seq,
            sent_ps: now,
        };
        data_frame(mac, self.mac, &p, self.frame_bytes)
    }

    /// Data for `ip` at `now`: the frame if the address is resolved, else it waits and the ARP
    /// request to send (unless one is outstanding).
    pub(super) fn send(&mut self, now: u64, ip: Ipv4Addr, seq: u64) -> Option<Vec<u8>> {
        if let Some(&mac) = self.arp_cache.get(&ip) {
            return Some(self.data_to(now, ip, mac, seq));
        }
        let w = self.waiting.entry(ip).or_default();
        w.push(seq);
        (w.len() == 1).then(|| {
            self.arp_sent.push((ip, now));
            self.arp_request(ip)
        })
    }
}
