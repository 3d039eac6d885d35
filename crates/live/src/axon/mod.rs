//! The Axon device live: `tandem axon run --config FILE` runs one Axon (its sans-IO data plane
//! and control plane, `tandem-axon`) on real Linux interfaces through `AF_PACKET` sockets.
//!
//! One thread per interface reads frames into a channel; the node thread owns the device and
//! control plane, feeds them frames, link changes (from the interfaces' `operstate`) and the
//! clock, and sends what they transmit. Nothing in the cores knows it is live.

pub mod config;
pub mod node;
mod packet_socket;

pub use config::{AxonConfigError, AxonProcessConfig};
pub use node::{AxonNode, NodeCounters, Ports};
pub use packet_socket::PacketSocket;

use crate::clock::Clock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tandem_axon::{ControlPlane, Device};

/// Longest the node sleeps without looking at the clock and the links.
const POLL: Duration = Duration::from_millis(10);
/// How often interface states are read.
const LINK_POLL: Duration = Duration::from_millis(50);

struct SocketPorts {
    tx: Vec<Option<PacketSocket>>,
}

impl Ports for SocketPorts {
    fn send(&mut self, port: u8, frame: &[u8]) {
        if let Some(Some(s)) = self.tx.get_mut(usize::from(port)) {
            if let Err(e) = s.send(frame) {
                tracing::debug!("send on {}: {e}", s.name());
            }
        }
    }
}

fn link_is_up(interface: &str) -> bool {
    std::fs::read_to_string(format!("/sys/class/net/{interface}/operstate")).is_ok_and(|s| s.trim() == "up")
}

/// Runs the Axon of `cfg` until `stop` is set. Errors name the interface or key at fault.
pub fn run(cfg: &AxonProcessConfig, stop: Arc<AtomicBool>) -> Result<(), String> {
    let (dev_cfg, cp_cfg, topo, ports) = cfg.build().map_err(|e| e.to_string())?;
    let dev = Device::new(dev_cfg).map_err(|e| format!("device: {e}"))?;
    let cp = ControlPlane::new(cp_cfg, topo).map_err(|e| format!("control plane: {e}"))?;
    let kinds: Vec<_> = ports.iter().map(|(_, p, k)| (*p, *k)).collect();
    let mut node = AxonNode::new(dev, cp, &kinds)?;
    let (tx, rx) = mpsc::sync_channel::<(u8, Vec<u8>)>(4096);
    let n = ports.iter().map(|(_, p, _)| usize::from(*p) + 1).max().unwrap_or(0);
    let mut out = SocketPorts {
        tx: (0..n).map(|_| None).collect(),
    };
    let mut readers = Vec::new();
    for (name, port, _) in &ports {
        let sock =
            PacketSocket::open(name, Duration::from_millis(100)).map_err(|e| format!("interface {name}: {e}"))?;
        out.tx[usize::from(*port)] = Some(sock.try_clone().map_err(|e| format!("interface {name}: {e}"))?);
        let (tx, stop, port) = (tx.clone(), stop.clone(), *port);
        let mut sock = sock;
        readers.push(std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while !stop.load(Ordering::Relaxed) {
                match sock.recv(&mut buf) {
                    Ok(Some(len)) => {
                        if tx.send((port, buf[..len].to_vec())).is_err() {
                            return;
                        }
                    }
                    Ok(None) => {}
                    Err(e) => {
                        tracing::warn!("read on {}: {e}", sock.name());
                        std::thread::sleep(Duration::from_millis(100));
                    }
                }
            }
        }));
    }
    drop(tx);
    let clock = Clock::new();
    let mut up: Vec<bool> = ports.iter().map(|(name, _, _)| link_is_up(name)).collect();
    let mut last_link_poll = Instant::now();
    let mut next_timer = node.on_time(clock.now_ps(), &mut out);
    tracing::info!("axon {} running on {} ports", cfg.device_id, ports.len());
    while !stop.load(Ordering::Relaxed) {
        let now = clock.now_ps();
        let wait = next_timer
            .map(|t| Duration::from_nanos(t.saturating_sub(now) / 1000))
            .unwrap_or(POLL)
            .min(POLL);
        match rx.recv_timeout(wait) {
            Ok((port, frame)) => {
                node.on_frame(clock.now_ps(), port, frame, &mut out);
                // Drain what else is there before looking at timers.
                while let Ok((port, frame)) = rx.try_recv() {
                    node.on_frame(clock.now_ps(), port, frame, &mut out);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
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
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        let _ = r.join();
    }
    Ok(())
}
