//! One fake switch of the generator: the switch side of the handshake, echo and barrier
//! answers, the packet_in stream (as fast as TCP takes it, or one at a time), and the response
//! counter.

use super::classify::classify;
use super::{FrameSize, Mode, OfBenchConfig};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tandem_controller::{Role, Session, SessionConfig, SessionEvent};
use tandem_wire::openflow::{Body, FeaturesReply, Message, OxmField, OxmMatch, PacketIn, Version};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch, Notify};

/// `OFP_NO_BUFFER`.
const NO_BUFFER: u32 = 0xffff_ffff;
/// The port the learnt destination sits on, and the port every test packet arrives on.
const DST_PORT: u32 = 1;
const SRC_PORT: u32 = 2;

/// Where the run stands, as the fake switches see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Handshaking.
    Connect,
    /// Send the one packet that teaches the controller the destination address.
    Learn,
    /// Send test packets.
    Go,
    /// Stop sending.
    Stop,
}

/// Counters of one switch.
#[derive(Debug, Default)]
pub(crate) struct SwitchCounters {
    /// Counted responses.
    pub responses: AtomicU64,
    /// packet_ins sent.
    pub sent: AtomicU64,
    /// Latency-mode waits that timed out (a packet_in never answered).
    pub timeouts: AtomicU64,
    /// True once the features reply went out.
    pub ready: AtomicU64,
}

/// The 6 address bytes of the destination every packet of switch `s` goes to.
fn dst_mac(s: u16) -> [u8; 6] {
    let b = s.to_be_bytes();
    [0x02, b[0], b[1], 0, 0, 0]
}

/// Source address number `k` (1-based) of switch `s`.
fn src_mac(s: u16, k: u32) -> [u8; 6] {
    let b = s.to_be_bytes();
    let k = k.to_be_bytes();
    [0x02, b[0], b[1], k[1], k[2], k[3]]
}

/// An encoded packet_in with the offsets to patch per packet.
#[derive(Debug, Clone)]
struct Template {
    bytes: Vec<u8>,
    /// Where the frame starts.
    frame_at: usize,
}

impl Template {
    fn new(version: Version, in_port: u32, frame_len: usize, dst: [u8; 6], src: [u8; 6]) -> Template {
        let mut frame = vec![0u8; frame_len];
        frame[0..6].copy_from_slice(&dst);
        frame[6..12].copy_from_slice(&src);
        frame[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        let oxm = if version == Version::V1_3 {
            OxmMatch {
                fields: vec![OxmField::InPort(in_port)],
            }
        } else {
            OxmMatch::default()
        };
        let p = PacketIn {
            buffer_id: NO_BUFFER,
            total_len: frame_len as u16,
            reason: 0,
            in_port: in_port as u16,
            table_id: 0,
            cookie: 0,
            oxm,
            data: frame,
        };
        let bytes = Message {
            version,
            xid: 0,
            body: Body::PacketIn(p),
        }
        .to_bytes()
        .unwrap_or_default();
        let frame_at = bytes.len().saturating_sub(frame_len);
        Template { bytes, frame_at }
    }

    /// Appends this packet with its xid, buffer id and source address set.
    fn append(&self, out: &mut Vec<u8>, xid: u32, buffer_id: u32, src: [u8; 6]) {
        let at = out.len();
        out.extend_from_slice(&self.bytes);
        let m = &mut out[at..];
        m[4..8].copy_from_slice(&xid.to_be_bytes());
        m[8..12].copy_from_slice(&buffer_id.to_be_bytes());
        m[self.frame_at + 6..self.frame_at + 12].copy_from_slice(&src);
    }
}

/// The frame length of packet `k` for the size setting (the sizes name the OpenFlow 1.0
/// packet_in message: 18 bytes of headers plus the frame).
fn frame_len(size: FrameSize, k: u64) -> usize {
    match size {
        FrameSize::B62 => 44,
        FrameSize::B82 => 64,
        FrameSize::Mixed if k.is_multiple_of(2) => 44,
        FrameSize::Mixed => 64,
    }
}

/// Runs switch number `index` (datapath id `index + 1`) until the phase is `Stop` or the
/// connection fails (the error says why).
pub(crate) async fn run(
    cfg: Arc<OfBenchConfig>,
    index: usize,
    counters: Arc<SwitchCounters>,
    mut phase: watch::Receiver<Phase>,
) -> Result<(), String> {
    let stream = connect(&cfg).await?;
    let _ = stream.set_nodelay(true);
    let (mut rd, mut wr) = stream.into_split();
    let s = (index + 1) as u16;
    let dpid = index as u64 + 1;
    let version = cfg.version;
    let (ctrl_tx, mut ctrl_rx) = mpsc::channel::<Vec<u8>>(1024);
    let answered = Arc::new(Notify::new());
    let outstanding = Arc::new(AtomicU64::new(u64::MAX));

    // The switch's side of the OpenFlow session: hello, features, echo, barrier and
    // get-config are its; flow_mods and packet_outs come up raw to be counted.
    let role = Role::Switch {
        versions: vec![version],
        features: features(version, dpid),
    };
    let mut session = Session::new(0, role, SessionConfig::default());
    if let Some(hello) = session.poll_transmit() {
        wr.write_all(&hello.bytes)
            .await
            .map_err(|e| format!("switch {dpid}: {e}"))?;
    }

    // The reader: answers the controller through the session, counts responses.
    let reader = {
        let counters = counters.clone();
        let answered = answered.clone();
        let outstanding = outstanding.clone();
        tokio::spawn(async move {
            let mut buf: Vec<u8> = Vec::with_capacity(128 * 1024);
            let mut chunk = vec![0u8; 64 * 1024];
            loop {
                let n = match rd.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                buf.extend_from_slice(&chunk[..n]);
                let used = session.handle_input(0, &buf, |ev| match ev {
                    SessionEvent::Raw(msg) => {
                        if let Some(r) = classify(msg) {
                            counters.responses.fetch_add(1, Ordering::Relaxed);
                            if u64::from(r.buffer_id) == outstanding.load(Ordering::Relaxed) || r.buffer_id == NO_BUFFER
                            {
                                answered.notify_one();
                            }
                        }
                    }
                    SessionEvent::Ready { .. } => counters.ready.store(1, Ordering::Relaxed),
                    SessionEvent::PacketIn(_) | SessionEvent::Message(_) => {}
                });
                let Ok(used) = used else { return };
                buf.drain(..used);
                if let Some(t) = session.poll_transmit() {
                    if ctrl_tx.send(t.bytes).await.is_err() {
                        return;
                    }
                }
            }
        })
    };

    let dst = dst_mac(s);
    let test: Vec<Template> = [44, 64]
        .iter()
        .map(|&l| Template::new(version, SRC_PORT, l, dst, src_mac(s, 1)))
        .collect();
    let learn = Template::new(version, DST_PORT, 64, [0xff; 6], dst);
    let mut out: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut k: u64 = 0;
    let mut xid: u32 = 1;
    let mut learnt = false;
    loop {
        // Answer the controller first.
        while let Ok(m) = ctrl_rx.try_recv() {
            out.extend_from_slice(&m);
        }
        let now = *phase.borrow_and_update();
        match now {
            Phase::Stop => break,
            Phase::Learn | Phase::Go if !learnt => {
                xid = xid.wrapping_add(1);
                learn.append(&mut out, xid, NO_BUFFER, dst);
                learnt = true;
            }
            Phase::Go => {
                let burst = if cfg.mode == Mode::Latency { 1 } else { cfg.burst };
                for _ in 0..burst {
                    let src = src_mac(s, (k % u64::from(cfg.macs)) as u32 + 1);
                    let t = &test[usize::from(frame_len(cfg.size, k) == 64)];
                    let buffer_id = (k % 0x7fff_ffff) as u32;
                    xid = xid.wrapping_add(1);
                    t.append(&mut out, xid, buffer_id, src);
                    outstanding.store(u64::from(buffer_id), Ordering::Relaxed);
                    k += 1;
                }
                counters.sent.fetch_add(burst as u64, Ordering::Relaxed);
            }
            _ => {}
        }
        if !out.is_empty() {
            wr.write_all(&out).await.map_err(|e| format!("switch {dpid}: {e}"))?;
            out.clear();
        }
        match (now, cfg.mode) {
            (Phase::Go, Mode::Throughput) => tokio::task::yield_now().await,
            (Phase::Go, Mode::Latency) => {
                tokio::select! {
                    _ = answered.notified() => {}
                    m = ctrl_rx.recv() => if let Some(m) = m { out.extend_from_slice(&m) } else { break },
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {
                        counters.timeouts.fetch_add(1, Ordering::Relaxed);
                    }
                    _ = phase.changed() => {}
                }
            }
            _ => {
                tokio::select! {
                    m = ctrl_rx.recv() => if let Some(m) = m { out.extend_from_slice(&m) } else { break },
                    _ = phase.changed() => {}
                }
            }
        }
    }
    reader.abort();
    Ok(())
}

async fn connect(cfg: &OfBenchConfig) -> Result<TcpStream, String> {
    let deadline = tokio::time::Instant::now() + cfg.connect_timeout;
    loop {
        match TcpStream::connect(cfg.controller).await {
            Ok(s) => return Ok(s),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(format!("cannot connect to the controller at {}: {e}", cfg.controller))
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// The features reply of fake switch `dpid`.
fn features(version: Version, dpid: u64) -> FeaturesReply {
    let v10 = version == Version::V1_0;
    FeaturesReply {
        datapath_id: dpid,
        n_buffers: 256,
        n_tables: if v10 { 1 } else { 254 },
        auxiliary_id: 0,
        capabilities: 0,
        actions: if v10 { 0xfff } else { 0 },
        ports: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_patch_the_right_bytes() {
        for v in [Version::V1_0, Version::V1_3] {
            let t = Template::new(v, SRC_PORT, 44, dst_mac(3), src_mac(3, 1));
            let mut out = Vec::new();
            t.append(&mut out, 77, 1234, src_mac(3, 99));
            let (m, n) = Message::parse(&out).unwrap();
            assert_eq!(n, out.len());
            assert_eq!(m.xid, 77);
            let Body::PacketIn(p) = m.body else {
                panic!("not a packet_in")
            };
            assert_eq!(p.buffer_id, 1234);
            assert_eq!(&p.data[6..12], &src_mac(3, 99));
            assert_eq!(&p.data[0..6], &dst_mac(3));
            if v == Version::V1_0 {
                assert_eq!(out.len(), 62);
                assert_eq!(p.in_port, 2);
            }
        }
    }

    #[test]
    fn answers_the_handshake() {
        // The fake switch's session against the controller's: both ends ready, on the
        // switch's one version, with its datapath id.
        for v in [Version::V1_0, Version::V1_3] {
            let role = Role::Switch {
                versions: vec![v],
                features: features(v, 5),
            };
            let mut sw = Session::new(0, role, SessionConfig::default());
            let mut ctl = Session::new(0, Role::Controller, SessionConfig::default());
            for _ in 0..4 {
                if let Some(t) = sw.poll_transmit() {
                    ctl.handle_input(0, &t.bytes, |_| {}).unwrap();
                }
                if let Some(t) = ctl.poll_transmit() {
                    sw.handle_input(0, &t.bytes, |_| {}).unwrap();
                }
            }
            assert_eq!((sw.is_ready(), ctl.dpid(), ctl.version()), (true, Some(5), v));
        }
    }
}
