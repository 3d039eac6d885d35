//! The deep buffer (paper §3.2.1): DRAM buffering of traffic the CPU forwards and pacing it
//! back to each output port at the port speed C.
//!
//! Every packet the CPU forwards (a mouse flow with no ASIC entry, or anything redirected by
//! R_port) goes through the same path, so its departure time is the latest of
//!
//! * the CPU: `cpu_cores` servers, each spending `cpu_per_packet` per packet;
//! * the port's pacer: packets leave for one port no faster than C, so the ASIC queue the CPU
//!   feeds does not build up (paper §3.2.1, "CPU caps the sending rate ... to the bandwidth of
//!   the output port");
//! * for traffic from a source classified as an attacker, instead of the port pacer, the
//!   port's attack shaper: all suspicious traffic to a port together is paced at BW_attack
//!   (paper §3.2.3: "limit the outgoing rate of the suspicious traffic to BW_attack"; §4's
//!   numbers - 14 attackers lose TCP only their 70 Mb/s average - imply one aggregate shaper).
//!   Shaped packets do not wait behind the port pacer and do not delay it, so while both are
//!   busy a port may receive up to C + BW_attack from the CPU;
//! * serialization on one downward internal link (`internal_link_bps`).
//!
//! The time returned is when the packet's last bit reaches the ASIC; the packet occupies DRAM
//! from its arrival until then. Contention *between* ports on the downward internal links is not
//! modelled (times are fixed when a packet arrives, and reserving a link for a packet paced far
//! in the future would wrongly block other ports); with the defaults (4 x 1 Gb/s links, C =
//! 1 Gb/s) up to four ports can be paced at C at once without contention. The upward link is
//! the adapter's ([`crate::model`]: serialisation on the earliest-free internal link). A
//! packet that would overflow DRAM is dropped (counted with a reason), as is non-TCP traffic
//! for a port beyond `non_tcp_cap_factor` x C (a token bucket; paper §3.2.1 gives non-TCP
//! bursts at most 2C of upward bandwidth).
//!
//! The R_port state per port lives here too: the core installs R_port when the ASIC reports a
//! queue at or above Q_redirect and removes it once this module's queue for the port is empty.

use crate::config::TcpuConfig;
use crate::types::{tx_time, Rule, RuleAction, RuleMatch, Time, SEC};
use rustc_hash::FxHashSet;
use std::collections::VecDeque;

/// Where a port's R_port stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RedirectState {
    /// No R_port: the ASIC forwards the port's traffic.
    #[default]
    Off,
    /// R_port's insert is queued or in the channel.
    Installing,
    /// R_port is in effect: all traffic for the port comes to the CPU.
    On,
    /// R_port's delete is queued or in the channel.
    Removing,
}

/// Why the deep buffer refused a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reject {
    /// DRAM is full.
    DramFull,
    /// Non-TCP traffic for the port is over its 2C cap.
    NonTcpCap,
}

#[derive(Debug, Clone, Default)]
struct PortBuf {
    queue: VecDeque<(Time, u32)>,
    bytes: u64,
    pacer_next: Time,
    attack_next: Time,
    last_departure: Time,
    redirect: RedirectState,
    last_qlen: u32,
    /// Non-TCP token bucket, in bit-picoseconds per second units (bits x SEC) so refills never
    /// lose fractions.
    tokens: u128,
    tokens_at: Time,
}

/// DRAM buffer, CPU and internal-link model, pacers and R_port states.
#[derive(Debug, Clone)]
pub struct DeepBuffer {
    port_bps: u64,
    link_bps: u64,
    cpu_per_packet: Time,
    non_tcp_bps: u64,
    non_tcp_cap: u128,
    dram_cap: u64,
    bw_attack: u64,
    ports: Vec<PortBuf>,
    cores_free: Vec<Time>,
    shaped: FxHashSet<u32>,
    dram_used: u64,
    peak_dram: u64,
}

fn earliest(v: &[Time]) -> usize {
    let mut best = 0;
    for (i, &t) in v.iter().enumerate() {
        if t < v[best] {
            best = i;
        }
    }
    best
}

impl DeepBuffer {
    /// A buffer for `cfg.ports` ports.
    pub fn new(cfg: &TcpuConfig) -> DeepBuffer {
        let non_tcp_cap = u128::from(cfg.non_tcp_burst_bytes) * 8 * u128::from(SEC);
        let port = PortBuf {
            tokens: non_tcp_cap,
            ..PortBuf::default()
        };
        DeepBuffer {
            port_bps: cfg.port_bps,
            link_bps: cfg.internal_link_bps,
            cpu_per_packet: cfg.cpu_per_packet,
            non_tcp_bps: cfg.port_bps.saturating_mul(cfg.non_tcp_cap_factor),
            non_tcp_cap,
            dram_cap: cfg.dram_bytes,
            bw_attack: cfg.bw_attack_bps,
            ports: vec![port; usize::from(cfg.ports)],
            cores_free: vec![0; cfg.cpu_cores.max(1) as usize],
            shaped: FxHashSet::default(),
            dram_used: 0,
            peak_dram: 0,
        }
    }

    /// Frees the DRAM of packets that have left by `now` (a port's queue is released in
    /// arrival order, so a shaped packet still waiting may hold back the accounting of later
    /// ones by at most its shaping delay).
    pub fn release(&mut self, now: Time) {
        for p in &mut self.ports {
            while let Some(&(t, b)) = p.queue.front() {
                if t > now {
                    break;
                }
                p.queue.pop_front();
                p.bytes -= u64::from(b);
                self.dram_used -= u64::from(b);
            }
        }
    }

    /// Takes a packet for `port` at `now` and returns when it reaches the ASIC, or why it was
    /// refused. `port` must be in range (the core checks).
    pub fn enqueue(&mut self, now: Time, port: u16, src: u32, bytes: u32, is_tcp: bool) -> Result<Time, Reject> {
        let b = u64::from(bytes);
        if self.dram_used.saturating_add(b) > self.dram_cap {
            return Err(Reject::DramFull);
        }
        let p = &mut self.ports[usize::from(port)];
        if !is_tcp {
            let dt = u128::from(now.saturating_sub(p.tokens_at));
            p.tokens = (p.tokens + dt * u128::from(self.non_tcp_bps)).min(self.non_tcp_cap);
            p.tokens_at = now;
            let need = u128::from(b) * 8 * u128::from(SEC);
            if p.tokens < need {
                return Err(Reject::NonTcpCap);
            }
            p.tokens -= need;
        }
        let c = earliest(&self.cores_free);
        let t = now.max(self.cores_free[c]).saturating_add(self.cpu_per_packet);
        self.cores_free[c] = t;
        let start = if self.shaped.contains(&src) {
            let start = t.max(p.attack_next);
            p.attack_next = start.saturating_add(tx_time(b, self.bw_attack));
            start
        } else {
            let start = t.max(p.pacer_next);
            p.pacer_next = start.saturating_add(tx_time(b, self.port_bps));
            start
        };
        let at = start.saturating_add(tx_time(b, self.link_bps));
        p.last_departure = p.last_departure.max(at);
        p.queue.push_back((at, bytes));
        p.bytes += b;
        self.dram_used += b;
        self.peak_dram = self.peak_dram.max(self.dram_used);
        Ok(at)
    }

    /// Starts shaping `src` to BW_attack; true if it was not shaped yet.
    pub fn shape(&mut self, src: u32) -> bool {
        self.shaped.insert(src)
    }

    /// Whether `src` is shaped.
    pub fn is_shaped(&self, src: u32) -> bool {
        self.shaped.contains(&src)
    }

    /// When the port's DRAM queue empties (its last packet's departure), if it holds any.
    pub fn drained_at(&self, port: u16) -> Option<Time> {
        self.ports
            .get(usize::from(port))
            .and_then(|p| (!p.queue.is_empty()).then_some(p.last_departure))
    }

    /// Bytes the port holds in DRAM.
    pub fn port_bytes(&self, port: u16) -> u64 {
        self.ports.get(usize::from(port)).map_or(0, |p| p.bytes)
    }

    /// DRAM in use.
    pub fn dram_used(&self) -> u64 {
        self.dram_used
    }

    /// Most DRAM ever in use.
    pub fn peak_dram(&self) -> u64 {
        self.peak_dram
    }

    /// The port's R_port state.
    pub fn redirect(&self, port: u16) -> RedirectState {
        self.ports
            .get(usize::from(port))
            .map_or(RedirectState::Off, |p| p.redirect)
    }

    /// Sets the port's R_port state.
    pub fn set_redirect(&mut self, port: u16, s: RedirectState) {
        if let Some(p) = self.ports.get_mut(usize::from(port)) {
            p.redirect = s;
        }
    }

    /// The last queue length the ASIC reported for the port, packets.
    pub fn last_qlen(&self, port: u16) -> u32 {
        self.ports.get(usize::from(port)).map_or(0, |p| p.last_qlen)
    }

    /// Records a queue length report.
    pub fn set_last_qlen(&mut self, port: u16, pkts: u32) {
        if let Some(p) = self.ports.get_mut(usize::from(port)) {
            p.last_qlen = pkts;
        }
    }

    /// Number of ports.
    pub fn ports(&self) -> u16 {
        self.ports.len() as u16
    }
}

/// R_port for `port`: everything the ASIC would send out of it goes to the CPU, above every
/// per-flow rule R_flow_i (paper §3.2.1).
pub fn port_redirect_rule(cfg: &TcpuConfig, port: u16) -> Rule {
    Rule {
        priority: cfg.prio_port,
        matches: RuleMatch::OutPort(port),
        action: RuleAction::ToCpu,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::US;

    fn cfg() -> TcpuConfig {
        TcpuConfig {
            ports: 2,
            ..TcpuConfig::default()
        }
    }

    #[test]
    fn pacing_spaces_packets_by_size_over_c() {
        let mut b = DeepBuffer::new(&cfg());
        let at: Vec<Time> = (0..4).map(|_| b.enqueue(0, 0, 1, 1500, true).unwrap()).collect();
        // 1 us of CPU, then 12 us on the internal link; then one packet per 12 us (1500 B at 1 Gb/s).
        assert_eq!(at, vec![13 * US, 25 * US, 37 * US, 49 * US]);
        // A smaller packet follows after its own size / C: 500 B at 1 Gb/s = 4 us.
        let a = b.enqueue(0, 0, 1, 500, true).unwrap();
        let b2 = b.enqueue(0, 0, 1, 1500, true).unwrap();
        assert_eq!(a, 49 * US + 4 * US); // 500 B on a 1 Gb/s internal link: 4 us
        assert_eq!(b2 - 12 * US, a - 4 * US + 4 * US); // next start = previous start + 4 us
                                                       // Another port has its own pacer (and another internal link).
        assert_eq!(b.enqueue(0, 1, 1, 1500, true).unwrap(), 7 * US + 12 * US);
        assert_eq!(b.drained_at(0), Some(b2));
        b.release(b2);
        assert_eq!(b.port_bytes(0), 0);
        assert_eq!(b.dram_used(), 0); // the port-1 packet left at 19 us
    }

    #[test]
    fn dram_full_and_non_tcp_cap() {
        let mut b = DeepBuffer::new(&TcpuConfig {
            dram_bytes: 3000,
            non_tcp_burst_bytes: 1500,
            ..cfg()
        });
        assert!(b.enqueue(0, 0, 1, 1500, true).is_ok());
        assert_eq!(b.enqueue(0, 1, 1, 1501, true), Err(Reject::DramFull));
        assert!(b.enqueue(0, 1, 2, 1500, false).is_ok());
        assert_eq!(b.peak_dram(), 3000);
        b.release(Time::MAX);
        // The non-TCP bucket is empty; at 2 Gb/s 1500 B refill in 6 us.
        assert_eq!(b.enqueue(5 * US, 1, 2, 1500, false), Err(Reject::NonTcpCap));
        assert!(b.enqueue(6 * US, 1, 2, 1500, false).is_ok());
    }

    #[test]
    fn shaped_source_paced_at_bw_attack() {
        let mut b = DeepBuffer::new(&cfg());
        assert!(b.shape(9));
        assert!(!b.shape(9));
        let t1 = b.enqueue(0, 0, 9, 1500, false).unwrap();
        let t2 = b.enqueue(0, 0, 9, 1500, false).unwrap();
        // 1500 B at 200 Mb/s = 60 us between starts.
        assert_eq!(t2 - t1, 60 * US);
        // Unshaped traffic to the same port is paced at C on its own, not behind the shaper.
        let t3 = b.enqueue(0, 0, 1, 1500, true).unwrap();
        assert_eq!(t3, 3 * US + 12 * US);
        assert_eq!(b.drained_at(0), Some(t2));
    }
}
