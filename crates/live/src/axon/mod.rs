//! The Axon device live: `tandem axon run --config FILE` runs one Axon (its sans-IO data plane
//! and control plane, `tandem-axon`) on real Linux interfaces through `AF_PACKET` sockets.
//!
//! One thread polls every interface's socket, feeds the device and control plane frames, link
//! changes (from the interfaces' `operstate`) and the clock, and sends what they transmit.
//! Nothing in the cores knows it is live.

pub mod config;
pub mod node;
mod packet_socket;

pub use config::{AxonConfigError, AxonProcessConfig};
pub use node::{AxonNode, NodeCounters, Ports};
pub use packet_socket::PacketSocket;

use crate::clock::Clock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tandem_axon::{ControlPlane, Device};

/// Longest the node sleeps without looking at the clock and the links.
const POLL: Duration = Duration::from_millis(10);
/// How often interface states are read.
const LINK_POLL: Duration = Duration::from_millis(50);

/// Frames to send, per port, flushed with `sendmmsg` once a round's frames are processed.
struct SocketPorts {
    tx: Vec<Option<PacketSocket>>,
    queued: Vec<Vec<Vec<u8>>>,
    dropped: u64,
}

impl Ports for SocketPorts {
    fn send(&mut self, port: u8, frame: Vec<u8>) {
        if let Some(q) = self.queued.get_mut(usize::from(port)) {
            q.push(frame);
        }
    }
}

impl SocketPorts {
    fn flush(&mut self) {
        for (sock, q) in self.tx.iter_mut().zip(self.queued.iter_mut()) {
            if let (Some(s), false) = (sock.as_mut(), q.is_empty()) {
                let (_, dropped) = s.send_batch(q);
                self.dropped += dropped as u64;
            }
            q.clear();
        }
    }
}

fn link_is_up(interface: &str) -> bool {
    std::fs::read_to_string(format!("/sys/class/net/{interface}/operstate")).is_ok_and(|s| s.trim() == "up")
}

/// Frames read from one socket with one `recvmmsg` before the others get their turn.
const READ_BURST: usize = 32;

/// Runs the Axon of `cfg` until `stop` is set. Errors name the interface or key at fault.
///
/// One thread does everything: it waits in `poll` on every port's socket (or until the next
/// timer), reads bursts of frames, runs them through the node and sends what it transmits. No
/// frame crosses a thread.
pub fn run(cfg: &AxonProcessConfig, stop: Arc<AtomicBool>) -> Result<(), String> {
    let (dev_cfg, cp_cfg, topo, ports) = cfg.build().map_err(|e| e.to_string())?;
    let dev = Device::new(dev_cfg).map_err(|e| format!("device: {e}"))?;
    let cp = ControlPlane::new(cp_cfg, topo).map_err(|e| format!("control plane: {e}"))?;
    let kinds: Vec<_> = ports.iter().map(|(_, p, k)| (*p, *k)).collect();
    let mut node = AxonNode::new(dev, cp, &kinds)?;
    let n = ports.iter().map(|(_, p, _)| usize::from(*p) + 1).max().unwrap_or(0);
    let mut out = SocketPorts {
        tx: (0..n).map(|_| None).collect(),
        queued: vec![Vec::new(); n],
        dropped: 0,
    };
    let mut rx = Vec::new();
    for (name, port, _) in &ports {
        let sock = PacketSocket::open(name).map_err(|e| format!("interface {name}: {e}"))?;
        out.tx[usize::from(*port)] = Some(sock.try_clone().map_err(|e| format!("interface {name}: {e}"))?);
        rx.push((*port, sock));
    }
    let clock = Clock::new();
    let mut up: Vec<bool> = ports.iter().map(|(name, _, _)| link_is_up(name)).collect();
    let mut last_link_poll = Instant::now();
    let mut next_timer = node.on_time(clock.now_ps(), &mut out);
    let mut ready = Vec::new();
    let mut poller = packet_socket::Poller::new(&rx.iter().map(|(_, s)| s).collect::<Vec<_>>());
    let mut bufs: Vec<Vec<u8>> = (0..READ_BURST).map(|_| vec![0u8; 16 * 1024]).collect();
    let mut lens = Vec::with_capacity(READ_BURST);
    tracing::info!("axon {} running on {} ports", cfg.device_id, ports.len());
    while !stop.load(Ordering::Relaxed) {
        let now = clock.now_ps();
        let wait = next_timer
            .map(|t| Duration::from_nanos(t.saturating_sub(now) / 1000))
            .unwrap_or(POLL)
            .min(POLL);
        poller.wait(wait, &mut ready).map_err(|e| format!("poll: {e}"))?;
        for (i, (port, sock)) in rx.iter_mut().enumerate() {
            if !ready.get(i).copied().unwrap_or(false) {
                continue;
            }
            match sock.recv_batch(&mut bufs, &mut lens) {
                Ok(_) => {
                    for (b, len) in bufs.iter().zip(&lens) {
                        node.on_frame(clock.now_ps(), *port, b[..*len].to_vec(), &mut out);
                    }
                }
                Err(e) => tracing::warn!("read on {}: {e}", sock.name()),
            }
        }
        out.flush();
        if last_link_poll.elapsed() >= LINK_POLL {
            last_link_poll = Instant::now();
            for (i, (name, port, _)) in ports.iter().enumerate() {
                let now_up = link_is_up(name);
                if now_up != up[i] {
                    up[i] = now_up;
                    tracing::info!(
                        "interface {name} (port {port}) is {}",
                        if now_up { "up" } else { "down" }
                    );
                    node.on_link(clock.now_ps(), *port, now_up, &mut out);
                }
            }
        }
        next_timer = node.on_time(clock.now_ps(), &mut out);
        out.flush();
    }
    if out.dropped > 0 {
        tracing::info!("{} frames refused by full interface queues", out.dropped);
    }
    Ok(())
}
