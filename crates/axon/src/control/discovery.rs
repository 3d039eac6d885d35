//! Topology discovery by probes (the thesis names probe packets, §3.2.2, and leaves discovery to
//! future work), so the control planes need no topology file and notice failed links themselves.
//!
//! * **Probes.** Every [`DiscoveryConfig::probe_interval_ps`] the control plane sends a
//!   timestamped probe ([`tandem_wire::axon::probe`]) out of each Axon port, source-routed to the
//!   neighbor's control plane (`[port, 0xf]`). The probe units stamp it: our output record names
//!   our device and port, the neighbor's input record its device and port, so the neighbor learns
//!   the link from the records alone. It echoes the probe back along the reverse path with
//!   [`OPT_ECHO`] set; the echo gathers the neighbor's output and our input records, and the
//!   one-way latency is half the round trip less the time the neighbor held it,
//!   `((t3 - t0) - (t2 - t1)) / 2`, comparing only records of one device's clock.
//! * **Timeouts.** A neighbor heard from (probe or echo) for the last time more than
//!   [`DiscoveryConfig::probe_timeout_ps`] ago is gone: its link is down, as if
//!   [`super::ControlInput::LinkDown`] had been given, so failover works without a notice.
//! * **Advertisements.** Each Axon floods its own list of links (port, neighbor device and
//!   port, latency) and its DHCP pool as a control message of kind [`ADVERT_KIND`] with a
//!   sequence number; a newer one replaces the stored one and is passed to every other neighbor;
//!   a new neighbor is sent every stored advertisement. A link is up when both ends advertise it
//!   (the two-way check), so every Axon builds the same topology. Advertisements are refreshed
//!   every [`DiscoveryConfig::advert_refresh_ps`].
//!
//! Model choices: probes, echoes and advertisements take no processor time (a probe unit and a
//! small table, unlike the Table 4.3 work); with discovery on, the configured topology is only a
//! starting point: links that the advertisements do not confirm are marked down. Links keep
//! their [`LinkId`] for good (a link that comes back is marked up again), so routes and loads
//! that name them stay valid.
//!
//! Advertisement body (all integers big-endian):
//!
//! ```text
//! 0 kind (0x10) | 1 link count | 2..10 origin device | 10..14 sequence
//! 14..18 pool first | 18..22 pool last | then count links of 18 bytes:
//!   0 port | 1..9 neighbor device | 9 neighbor port | 10..18 latency in ps (all ones: unknown)
//! ```

use super::config::DiscoveryConfig;
use super::topology::{AxonNode, Endpoint, LinkId};
use super::{ControlAction, ControlDrop, ControlPlane};
use crate::dataplane::Device;
use crate::port::PortKind;
use std::collections::{BTreeMap, BTreeSet};
use tandem_wire::axon::probe::{self, ProbeRecord, ProbeRepr, StampPoint, OPT_TIMESTAMPS};
use tandem_wire::axon::{AxonRepr, PacketType, CONTROL_PORT};
use tandem_wire::Ipv4Addr;

/// Probe option bit: this is the echo of a probe, on its way back to the Axon that sent it.
pub const OPT_ECHO: u8 = 0x02;
/// Control message kind of a topology advertisement.
pub const ADVERT_KIND: u8 = 0x10;
/// Length of an advertisement's fixed part.
pub const ADVERT_FIXED_LEN: usize = 22;
/// Length of one advertised link.
pub const ADVERT_LINK_LEN: usize = 18;
/// The latency field of a link whose latency is not measured yet.
pub const NO_LATENCY: u64 = u64::MAX;

/// A neighbor Axon heard on one of our ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Adjacency {
    /// The neighbor's device and port at the far end of the link.
    pub far: Endpoint,
    /// When a probe or echo last came from it.
    pub last_heard_ps: u64,
    /// One-way link latency from the last echo, once one came back.
    pub latency_ps: Option<u64>,
}

/// One link in an advertisement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AdvertLink {
    /// The origin's port.
    pub port: u8,
    /// The neighbor's device and port.
    pub far: Endpoint,
    /// Measured one-way latency.
    pub latency_ps: Option<u64>,
}

/// A topology advertisement: one Axon's links and pool.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Advert {
    /// The Axon it describes.
    pub origin: u64,
    /// Higher is newer.
    pub seq: u32,
    /// First address of its DHCP pool.
    pub pool_first: Ipv4Addr,
    /// Last address of its DHCP pool.
    pub pool_last: Ipv4Addr,
    /// Its links, by port.
    pub links: Vec<AdvertLink>,
}

impl Advert {
    /// The control message body (see the module doc); at most 255 links are written.
    pub fn emit(&self) -> Vec<u8> {
        let links = &self.links[..self.links.len().min(255)];
        let mut b = Vec::with_capacity(ADVERT_FIXED_LEN + ADVERT_LINK_LEN * links.len());
        b.push(ADVERT_KIND);
        b.push(links.len() as u8);
        b.extend_from_slice(&self.origin.to_be_bytes());
        b.extend_from_slice(&self.seq.to_be_bytes());
        b.extend_from_slice(&self.pool_first.octets());
        b.extend_from_slice(&self.pool_last.octets());
        for l in links {
            b.push(l.port);
            b.extend_from_slice(&l.far.device.to_be_bytes());
            b.push(l.far.port);
            b.extend_from_slice(&l.latency_ps.unwrap_or(NO_LATENCY).to_be_bytes());
        }
        b
    }

    /// Reads a body; `None` if it is not a whole advertisement (bytes past the last link, such
    /// as padding, are ignored).
    pub fn parse(b: &[u8]) -> Option<Advert> {
        if *b.first()? != ADVERT_KIND {
            return None;
        }
        let count = usize::from(*b.get(1)?);
        let body = b.get(..ADVERT_FIXED_LEN + ADVERT_LINK_LEN * count)?;
        let u64_at = |i: usize| -> Option<u64> { Some(u64::from_be_bytes(body.get(i..i + 8)?.try_into().ok()?)) };
        let ip_at = |i: usize| -> Option<Ipv4Addr> {
            let o: [u8; 4] = body.get(i..i + 4)?.try_into().ok()?;
            Some(Ipv4Addr::from(o))
        };
        let seq: [u8; 4] = body.get(10..14)?.try_into().ok()?;
        let mut links = Vec::with_capacity(count);
        for i in 0..count {
            let at = ADVERT_FIXED_LEN + i * ADVERT_LINK_LEN;
            let latency = u64_at(at + 10)?;
            links.push(AdvertLink {
                port: *body.get(at)?,
                far: Endpoint {
                    device: u64_at(at + 1)?,
                    port: *body.get(at + 9)?,
                },
                latency_ps: (latency != NO_LATENCY).then_some(latency),
            });
        }
        Some(Advert {
            origin: u64_at(2)?,
            seq: u32::from_be_bytes(seq),
            pool_first: ip_at(14)?,
            pool_last: ip_at(18)?,
            links,
        })
    }
}

/// What the records of a probe that reached our control plane say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProbeReading {
    /// A neighbor's probe: our `port` faces `far`.
    Probe {
        /// Our port it came in on.
        port: u8,
        /// The neighbor's device and port it left from.
        far: Endpoint,
    },
    /// The echo of our own probe: our `port` faces `far`, `latency_ps` one way.
    Echo {
        /// Our port.
        port: u8,
        /// The neighbor's device and port.
        far: Endpoint,
        /// One-way latency: half the round trip less the neighbor's holding time.
        latency_ps: u64,
    },
}

/// Reads the records of a probe body that reached the control plane of device `me`; `None` if
/// they do not describe one link to a neighbor (a probe that crossed more than one link, records
/// missing or out of order).
pub fn read_probe(me: u64, body: &[u8]) -> Option<ProbeReading> {
    let p = ProbeRepr::parse(&probe::Packet::new_checked(body).ok()?).ok()?;
    let r = &p.records;
    let (last, before) = r.split_last()?;
    let sent = before.last()?;
    let is = |x: &ProbeRecord, device: u64, point: StampPoint| x.device_id == device && x.point == point;
    if !is(last, me, StampPoint::Input) || sent.device_id == me || sent.point != StampPoint::Output {
        return None;
    }
    let far = Endpoint {
        device: sent.device_id,
        port: sent.port,
    };
    if p.options & OPT_ECHO == 0 {
        return Some(ProbeReading::Probe { port: last.port, far });
    }
    let t0 = r
        .iter()
        .find(|x| is(x, me, StampPoint::Output) && x.port == last.port)?
        .time_ps;
    let t1 = r
        .iter()
        .find(|x| is(x, far.device, StampPoint::Input) && x.port == far.port)?
        .time_ps;
    let round = last.time_ps.checked_sub(t0)?;
    let held = sent.time_ps.checked_sub(t1)?;
    Some(ProbeReading::Echo {
        port: last.port,
        far,
        latency_ps: round.checked_sub(held)? / 2,
    })
}

/// A timestamped probe out of `port` to the neighbor's control plane.
pub fn probe_frame(port: u8, probe_id: u32) -> Option<Vec<u8>> {
    let body = ProbeRepr {
        options: OPT_TIMESTAMPS,
        probe_id,
        records: vec![],
    };
    let mut b = vec![0u8; body.buffer_len()];
    body.emit(&mut b).ok()?;
    AxonRepr::from_path(PacketType::Probe, &[port, CONTROL_PORT])
        .and_then(|h| h.to_frame(&b))
        .ok()
}

/// Discovery state of one control plane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    cfg: DiscoveryConfig,
    next_probe_ps: u64,
    next_advert_ps: u64,
    probe_id: u32,
    own_seq: u32,
    adjacencies: BTreeMap<u8, Adjacency>,
    adverts: BTreeMap<u64, Advert>,
}

impl Discovery {
    /// Fresh state: the first probes leave on the first input.
    pub fn new(cfg: DiscoveryConfig) -> Discovery {
        Discovery {
            cfg,
            next_probe_ps: 0,
            next_advert_ps: cfg.advert_refresh_ps,
            probe_id: 0,
            own_seq: 0,
            adjacencies: BTreeMap::new(),
            adverts: BTreeMap::new(),
        }
    }

    /// The parameters.
    pub fn config(&self) -> &DiscoveryConfig {
        &self.cfg
    }

    /// Neighbors heard, by our port.
    pub fn adjacencies(&self) -> &BTreeMap<u8, Adjacency> {
        &self.adjacencies
    }

    /// The newest advertisement of every Axon heard of (ours included), by device.
    pub fn adverts(&self) -> &BTreeMap<u64, Advert> {
        &self.adverts
    }

    /// The latency advertised for the link at `at` (by that end), if measured.
    pub fn latency_at(&self, at: Endpoint) -> Option<u64> {
        self.adverts
            .get(&at.device)?
            .links
            .iter()
            .find(|l| l.port == at.port)?
            .latency_ps
    }

    /// When discovery next needs a tick: a probe round, a refresh or a neighbor's timeout.
    pub fn next_wake(&self) -> u64 {
        let timeout = self.cfg.probe_timeout_ps;
        self.adjacencies
            .values()
            .map(|a| a.last_heard_ps.saturating_add(timeout))
            .chain([self.next_probe_ps, self.next_advert_ps])
            .min()
            .unwrap_or(self.next_probe_ps)
    }
}

fn ordered(a: Endpoint, b: Endpoint) -> (Endpoint, Endpoint) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

impl ControlPlane {
    /// Discovery state, when it is on.
    pub fn discovery(&self) -> Option<&Discovery> {
        self.disc.as_ref()
    }

    /// Probe rounds, neighbor timeouts and advertisement refreshes due at `now`.
    pub(super) fn discovery_tick(&mut self, now: u64, dev: &mut Device, out: &mut Vec<ControlAction>) {
        let Some(d) = self.disc.as_mut() else {
            return;
        };
        if now >= d.next_probe_ps {
            d.next_probe_ps = now.saturating_add(d.cfg.probe_interval_ps);
            let ports: Vec<u8> = (0..dev.port_count() as u8)
                .filter(|&p| dev.port(p).is_some_and(|s| s.kind == PortKind::Axon && s.link_up))
                .collect();
            for port in ports {
                d.probe_id = d.probe_id.wrapping_add(1);
                if let Some(frame) = probe_frame(port, d.probe_id) {
                    self.counters.probes_sent += 1;
                    out.push(ControlAction::Inject { at_ps: now, frame });
                }
            }
        }
        let Some(d) = self.disc.as_mut() else {
            return;
        };
        let timeout = d.cfg.probe_timeout_ps;
        let gone: Vec<u8> = d
            .adjacencies
            .iter()
            .filter(|(_, a)| a.last_heard_ps.saturating_add(timeout) <= now)
            .map(|(p, _)| *p)
            .collect();
        for p in &gone {
            d.adjacencies.remove(p);
        }
        self.counters.links_timed_out += gone.len() as u64;
        let refresh = self.disc.as_ref().is_some_and(|d| now >= d.next_advert_ps);
        if !gone.is_empty() || refresh {
            self.originate(now, dev, out);
        }
    }

    /// A probe or echo reached this control plane.
    pub(super) fn probe_received(
        &mut self,
        now: u64,
        dev: &mut Device,
        header: &AxonRepr,
        body: &[u8],
        out: &mut Vec<ControlAction>,
    ) {
        if self.disc.is_none() {
            return self.drop_input(ControlDrop::DiscoveryOff, out);
        }
        let Some(reading) = read_probe(self.cfg.device_id, body) else {
            return self.drop_input(ControlDrop::MalformedProbe, out);
        };
        let (port, far, latency) = match reading {
            ProbeReading::Probe { port, far } => {
                let back = header.reply_route();
                if back.as_slice() != [port, CONTROL_PORT] {
                    return self.drop_input(ControlDrop::MalformedProbe, out);
                }
                let mut echo = body.to_vec();
                if let Some(options) = echo.first_mut() {
                    *options |= OPT_ECHO;
                }
                if let Ok(frame) = AxonRepr::from_path(PacketType::Probe, &back).and_then(|h| h.to_frame(&echo)) {
                    self.counters.probes_echoed += 1;
                    out.push(ControlAction::Inject { at_ps: now, frame });
                }
                (port, far, None)
            }
            ProbeReading::Echo { port, far, latency_ps } => {
                self.counters.probe_echoes += 1;
                (port, far, Some(latency_ps))
            }
        };
        self.heard(now, dev, port, far, latency, out);
    }

    /// A neighbor `far` was heard on `port`.
    fn heard(
        &mut self,
        now: u64,
        dev: &mut Device,
        port: u8,
        far: Endpoint,
        latency: Option<u64>,
        out: &mut Vec<ControlAction>,
    ) {
        let Some(d) = self.disc.as_mut() else {
            return;
        };
        let old = d.adjacencies.get(&port).copied();
        let new_neighbor = old.map(|a| a.far) != Some(far);
        let first_latency = latency.is_some() && old.and_then(|a| a.latency_ps).is_none();
        d.adjacencies.insert(
            port,
            Adjacency {
                far,
                last_heard_ps: now,
                latency_ps: latency.or(old.filter(|_| !new_neighbor).and_then(|a| a.latency_ps)),
            },
        );
        if new_neighbor {
            self.counters.links_learned += 1;
            // Database sync: the new neighbor gets everything we know.
            let all: Vec<Vec<u8>> = d.adverts.values().map(Advert::emit).collect();
            for body in all {
                self.send_advert(now, port, &body, out);
            }
        }
        if new_neighbor || first_latency {
            self.originate(now, dev, out);
        }
    }

    /// Our port's link went down (a notice): the neighbor is forgotten at once.
    pub(super) fn discovery_port_down(&mut self, now: u64, dev: &mut Device, port: u8, out: &mut Vec<ControlAction>) {
        if self
            .disc
            .as_mut()
            .is_some_and(|d| d.adjacencies.remove(&port).is_some())
        {
            self.originate(now, dev, out);
        }
    }

    /// A topology advertisement reached this control plane on `header`'s first reverse hop.
    pub(super) fn advert_received(
        &mut self,
        now: u64,
        dev: &mut Device,
        header: &AxonRepr,
        body: &[u8],
        out: &mut Vec<ControlAction>,
    ) {
        let Some(d) = self.disc.as_mut() else {
            return self.drop_input(ControlDrop::DiscoveryOff, out);
        };
        let (Some(a), Some(&in_port)) = (Advert::parse(body), header.reverse.first()) else {
            return self.drop_input(ControlDrop::MalformedAdvert, out);
        };
        if a.origin == self.cfg.device_id {
            // Ours coming back around a cycle (or from before a restart: go above it).
            if a.seq > d.own_seq {
                d.own_seq = a.seq;
                self.originate(now, dev, out);
            }
            return;
        }
        if d.adverts.get(&a.origin).is_some_and(|old| old.seq >= a.seq) {
            return;
        }
        self.counters.adverts_accepted += 1;
        let emitted = a.emit();
        d.adverts.insert(a.origin, a);
        let ports: Vec<u8> = d.adjacencies.keys().copied().filter(|p| *p != in_port).collect();
        for p in ports {
            self.send_advert(now, p, &emitted, out);
        }
        self.rebuild_topology(dev, out);
    }

    /// A new advertisement of our own, stored and flooded; the topology follows.
    fn originate(&mut self, now: u64, dev: &mut Device, out: &mut Vec<ControlAction>) {
        let me = self.cfg.device_id;
        let pool = self.cfg.pool;
        let Some(d) = self.disc.as_mut() else {
            return;
        };
        d.own_seq = d.own_seq.wrapping_add(1);
        d.next_advert_ps = now.saturating_add(d.cfg.advert_refresh_ps);
        let a = Advert {
            origin: me,
            seq: d.own_seq,
            pool_first: pool.first,
            pool_last: pool.last,
            links: d
                .adjacencies
                .iter()
                .map(|(&port, adj)| AdvertLink {
                    port,
                    far: adj.far,
                    latency_ps: adj.latency_ps,
                })
                .collect(),
        };
        let body = a.emit();
        d.adverts.insert(me, a);
        let ports: Vec<u8> = d.adjacencies.keys().copied().collect();
        for p in ports {
            self.send_advert(now, p, &body, out);
        }
        self.rebuild_topology(dev, out);
    }

    fn send_advert(&mut self, now: u64, port: u8, body: &[u8], out: &mut Vec<ControlAction>) {
        if let Ok(frame) =
            AxonRepr::from_path(PacketType::Control, &[port, CONTROL_PORT]).and_then(|h| h.to_frame(body))
        {
            self.counters.adverts_sent += 1;
            out.push(ControlAction::Inject { at_ps: now, frame });
        }
    }

    /// Brings the topology in line with the advertisements: Axons and pools from each, a link up
    /// when both ends advertise it, every other link down (rerouting the routes across it).
    fn rebuild_topology(&mut self, dev: &mut Device, out: &mut Vec<ControlAction>) {
        let Some(d) = self.disc.as_ref() else {
            return;
        };
        let mut up = BTreeSet::new();
        for a in d.adverts.values() {
            self.topo.add_axon(AxonNode {
                device: a.origin,
                pool_first: a.pool_first,
                pool_last: a.pool_last,
            });
            let here = |port| Endpoint { device: a.origin, port };
            for l in &a.links {
                let confirmed = d
                    .adverts
                    .get(&l.far.device)
                    .is_some_and(|b| b.links.iter().any(|m| m.port == l.far.port && m.far == here(l.port)));
                if confirmed {
                    up.insert(ordered(here(l.port), l.far));
                }
            }
        }
        for &(a, b) in &up {
            match self.topo.find_link(a, b) {
                Some(id) => {
                    self.topo.set_up(id, true);
                }
                None => {
                    let _ = self.topo.add_link(a, b);
                }
            }
        }
        let down: Vec<LinkId> = self
            .topo
            .links()
            .iter()
            .enumerate()
            .filter(|(_, l)| l.up && !up.contains(&ordered(l.a, l.b)))
            .map(|(i, _)| LinkId(i))
            .collect();
        for id in down {
            self.set_link(dev, id, false, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adverts_read_back_and_truncation_is_refused() {
        let a = Advert {
            origin: 7,
            seq: 3,
            pool_first: Ipv4Addr::new(10, 0, 7, 10),
            pool_last: Ipv4Addr::new(10, 0, 7, 200),
            links: vec![
                AdvertLink {
                    port: 0,
                    far: Endpoint { device: 8, port: 1 },
                    latency_ps: Some(1_000),
                },
                AdvertLink {
                    port: 2,
                    far: Endpoint { device: 9, port: 0 },
                    latency_ps: None,
                },
            ],
        };
        let mut b = a.emit();
        assert_eq!(b.len(), ADVERT_FIXED_LEN + 2 * ADVERT_LINK_LEN);
        assert_eq!(Advert::parse(&b), Some(a.clone()));
        b.extend_from_slice(&[0; 10]);
        assert_eq!(Advert::parse(&b), Some(a), "padding is ignored");
        for n in 0..ADVERT_FIXED_LEN + 2 * ADVERT_LINK_LEN {
            assert_eq!(Advert::parse(&b[..n]), None);
        }
    }

    #[test]
    fn probe_records_give_the_link_and_its_latency() {
        let rec = |device_id, port, point, time_ps| ProbeRecord {
            device_id,
            port,
            point,
            time_ps,
        };
        let body = |options, records: Vec<ProbeRecord>| {
            let p = ProbeRepr {
                options,
                probe_id: 1,
                records,
            };
            let mut b = vec![0; p.buffer_len()];
            p.emit(&mut b).unwrap();
            b
        };
        let out = vec![
            rec(1, 15, StampPoint::Input, 0),
            rec(1, 2, StampPoint::Output, 100),
            rec(2, 0, StampPoint::Input, 600),
        ];
        assert_eq!(
            read_probe(2, &body(OPT_TIMESTAMPS, out.clone())),
            Some(ProbeReading::Probe {
                port: 0,
                far: Endpoint { device: 1, port: 2 }
            })
        );
        assert_eq!(read_probe(3, &body(OPT_TIMESTAMPS, out.clone())), None, "not for us");
        // Device 2's clock is 10,000 ps ahead: only differences within a device count.
        let back = vec![
            rec(1, 15, StampPoint::Input, 0),
            rec(1, 2, StampPoint::Output, 100),
            rec(2, 0, StampPoint::Input, 10_600),
            rec(2, 15, StampPoint::Input, 10_700),
            rec(2, 0, StampPoint::Output, 10_900),
            rec(1, 2, StampPoint::Input, 1_100),
        ];
        assert_eq!(
            read_probe(1, &body(OPT_TIMESTAMPS | OPT_ECHO, back.clone())),
            Some(ProbeReading::Echo {
                port: 2,
                far: Endpoint { device: 2, port: 0 },
                latency_ps: (1_000 - 300) / 2,
            })
        );
        assert_eq!(read_probe(1, &body(OPT_ECHO, back[..2].to_vec())), None);
        assert_eq!(read_probe(1, &[]), None);
    }
}
