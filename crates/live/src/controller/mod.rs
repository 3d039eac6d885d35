//! The OpenFlow controller server: the sans-IO `tandem-controller` core on real TCP connections.
//!
//! ```text
//!  switch ──TCP──> connection task ──events──> shard pool ──batch──> engine (app + backend)
//!  switch <──TCP── writer task <──bytes── per-connection queue <──replies──┘
//! ```
//!
//! * Each connection has a reader (the connection task: handshake, echo keepalive, framing,
//!   errors for bad messages) and a writer task that drains a bounded queue of encoded bytes,
//!   concatenating whatever is queued into one write (write batching).
//! * Datapaths are spread over shards by datapath id; a shard owns a [`Pool`], an application
//!   and a backend (the paper's producer → pool → kernel → consumer pipeline, one per shard so
//!   that the `cpu` backend uses several cores without sharing MAC tables).
//! * Every queue is bounded: a full pool sheds its oldest events, a full write queue drops the
//!   replies of that switch only, a write that does not finish in time closes that switch only.
//!   All of it is counted in [`Stats`].
//!
//! [`Pool`]: tandem_controller::Pool

mod conn;
mod engine;
mod metrics;
mod outbox;
mod registry;
mod shard;
pub mod stats;
pub mod tls;

pub use engine::{coswitch_engine, l2_engine, tcpu_engine, AppChoice, BackendChoice, Engine, EngineFactory};
pub use metrics::fetch_stats;
pub use stats::Stats;
pub use tls::{TlsError, TlsFiles};

use crate::clock::Clock;
use registry::Registry;
use shard::Shard;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tandem_controller::{PoolConfig, PoolConfigError};
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Settings of a controller server.
#[derive(Debug, Clone)]
pub struct ControllerConfig {
    /// Addresses to accept switches on (default `0.0.0.0:6653`, the IANA port; add `:6633` for
    /// switches configured with the old port).
    pub listen: Vec<SocketAddr>,
    /// Where to serve the metrics endpoint (HTTP, Prometheus text), if anywhere.
    pub metrics: Option<SocketAddr>,
    /// The batching pool of each shard (batch size, deadline, capacity).
    pub pool: PoolConfig,
    /// Shards (each a pool, an app and a backend); datapaths are spread over them by id.
    pub shards: usize,
    /// Worker threads of the runtime.
    pub threads: usize,
    /// Encoded reply chunks a connection may have queued before its replies are dropped.
    pub write_queue: usize,
    /// Bytes a connection may have queued before its replies are dropped (a reply larger than
    /// this still goes through an empty queue).
    pub write_queue_bytes: usize,
    /// Bytes all connections together may have queued; past it, replies are dropped.
    pub write_queue_total_bytes: usize,
    /// Connections open at once, at most; more are closed at accept.
    pub max_connections: usize,
    /// Connections open at once from one IP address, at most.
    pub max_connections_per_ip: usize,
    /// A switch that sends nothing for this long gets an echo request.
    pub echo_interval: Duration,
    /// A switch that stays silent this long after the echo request is disconnected.
    pub echo_timeout: Duration,
    /// Longest a handshake (hello to features reply) may take.
    pub handshake_timeout: Duration,
    /// Longest one write to a switch may take before the switch is disconnected.
    pub write_timeout: Duration,
    /// Serve switches over TLS, requiring a client certificate signed by the CA (`None`:
    /// plain TCP, where any client may claim any datapath id; see docs/security.md).
    pub tls: Option<TlsFiles>,
}

impl Default for ControllerConfig {
    fn default() -> ControllerConfig {
        ControllerConfig {
            listen: vec![SocketAddr::from(([0, 0, 0, 0], 6653))],
            metrics: None,
            pool: PoolConfig {
                batch: 1024,
                deadline_ps: 0,
                capacity: 65_536,
            },
            shards: 1,
            threads: 1,
            write_queue: 1024,
            write_queue_bytes: 2 << 20,
            write_queue_total_bytes: 128 << 20,
            max_connections: 4096,
            max_connections_per_ip: 2048,
            echo_interval: Duration::from_secs(5),
            echo_timeout: Duration::from_secs(10),
            handshake_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
            tls: None,
        }
    }
}

/// Why a controller could not start.
#[derive(Debug)]
pub enum ControllerError {
    /// The pool settings were rejected.
    Pool(PoolConfigError),
    /// Zero shards or threads.
    Zero(&'static str),
    /// A listening socket could not be bound.
    Bind(SocketAddr, std::io::Error),
    /// The runtime could not be built.
    Runtime(std::io::Error),
    /// The engine (application or backend) could not be created.
    Engine(String),
    /// The TLS files could not be used.
    Tls(TlsError),
}

impl fmt::Display for ControllerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControllerError::Pool(e) => write!(f, "{e}"),
            ControllerError::Zero(what) => write!(f, "{what} must be at least 1"),
            ControllerError::Bind(a, e) => write!(f, "cannot listen on {a}: {e}"),
            ControllerError::Runtime(e) => write!(f, "cannot start the runtime: {e}"),
            ControllerError::Engine(e) => f.write_str(e),
            ControllerError::Tls(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ControllerError {}

/// What every task of one server shares.
pub(crate) struct Shared {
    pub cfg: ControllerConfig,
    /// Bytes queued for writing over all connections.
    pub queued_bytes: Arc<std::sync::atomic::AtomicUsize>,
    /// Open connections per peer address (the total is their sum).
    pub open: std::sync::Mutex<rustc_hash::FxHashMap<std::net::IpAddr, usize>>,
    pub stats: Arc<Stats>,
    pub clock: Clock,
    pub registry: Registry,
    pub shards: Vec<Arc<Shard>>,
    pub shutdown: watch::Receiver<bool>,
    /// The TLS side of every accepted connection, when TLS is on.
    pub tls: Option<tokio_rustls::TlsAcceptor>,
}

impl Shared {
    /// The shard that serves datapath `dpid`.
    pub fn shard_of(&self, dpid: u64) -> &Arc<Shard> {
        let h = dpid.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        &self.shards[(h % self.shards.len() as u64) as usize]
    }
}

/// A controller running on its own threads; dropping it (or [`ControllerHandle::stop`]) stops it.
pub struct ControllerHandle {
    addrs: Vec<SocketAddr>,
    metrics: Option<SocketAddr>,
    stats: Arc<Stats>,
    stop: Option<watch::Sender<bool>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ControllerHandle {
    /// Binds every address, then serves on a runtime of `cfg.threads` threads in the background.
    pub fn spawn(cfg: ControllerConfig, engines: EngineFactory) -> Result<ControllerHandle, ControllerError> {
        let rt = runtime(cfg.threads)?;
        let (stop_tx, stop_rx) = watch::channel(false);
        let stats = Arc::new(Stats::default());
        let server = rt.block_on(Server::bind(cfg, engines, stats.clone(), stop_rx))?;
        let (addrs, metrics) = (server.addrs.clone(), server.metrics_addr);
        let thread = std::thread::Builder::new()
            .name("tandem-controller".into())
            .spawn(move || rt.block_on(server.serve()))
            .map_err(ControllerError::Runtime)?;
        Ok(ControllerHandle {
            addrs,
            metrics,
            stats,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// The addresses switches connect to (with the actual ports when 0 was asked).
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// The metrics endpoint's address, if one was asked for.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics
    }

    /// The live counters.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// Stops the server and waits for its threads.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(true);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ControllerHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Builds a runtime with `threads` workers (a current-thread runtime for 1).
pub fn runtime(threads: usize) -> Result<tokio::runtime::Runtime, ControllerError> {
    if threads == 0 {
        return Err(ControllerError::Zero("threads"));
    }
    let mut b = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    };
    b.enable_all().build().map_err(ControllerError::Runtime)
}

/// A bound, not yet serving controller.
pub struct Server {
    shared: Arc<Shared>,
    listeners: Vec<TcpListener>,
    metrics: Option<TcpListener>,
    addrs: Vec<SocketAddr>,
    metrics_addr: Option<SocketAddr>,
    engines: Vec<Box<dyn Engine>>,
}

impl Server {
    /// Checks the settings, creates one engine per shard and binds every socket.
    pub async fn bind(
        cfg: ControllerConfig,
        mut engines: EngineFactory,
        stats: Arc<Stats>,
        shutdown: watch::Receiver<bool>,
    ) -> Result<Server, ControllerError> {
        if cfg.shards == 0 {
            return Err(ControllerError::Zero("shards"));
        }
        if cfg.write_queue == 0 {
            return Err(ControllerError::Zero("write queue"));
        }
        let tls = match &cfg.tls {
            Some(files) => Some(tokio_rustls::TlsAcceptor::from(
                tls::server_config(files).map_err(ControllerError::Tls)?,
            )),
            None => None,
        };
        let mut shards = Vec::new();
        let mut built = Vec::new();
        for i in 0..cfg.shards {
            shards.push(Arc::new(Shard::new(cfg.pool).map_err(ControllerError::Pool)?));
            built.push(engines(i).map_err(ControllerError::Engine)?);
        }
        let mut listeners = Vec::new();
        let mut addrs = Vec::new();
        for a in &cfg.listen {
            let l = TcpListener::bind(a).await.map_err(|e| ControllerError::Bind(*a, e))?;
            addrs.push(l.local_addr().map_err(|e| ControllerError::Bind(*a, e))?);
            listeners.push(l);
        }
        let (metrics, metrics_addr) = match cfg.metrics {
            Some(a) => {
                let l = TcpListener::bind(a).await.map_err(|e| ControllerError::Bind(a, e))?;
                let local = l.local_addr().map_err(|e| ControllerError::Bind(a, e))?;
                (Some(l), Some(local))
            }
            None => (None, None),
        };
        let shared = Arc::new(Shared {
            cfg,
            queued_bytes: Arc::default(),
            open: Default::default(),
            stats,
            clock: Clock::new(),
            registry: Registry::default(),
            shards,
            shutdown,
            tls,
        });
        Ok(Server {
            shared,
            listeners,
            metrics,
            addrs,
            metrics_addr,
            engines: built,
        })
    }

    /// The bound switch addresses.
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Serves until the shutdown signal.
    pub async fn serve(self) {
        let Server {
            shared,
            listeners,
            metrics,
            engines,
            ..
        } = self;
        let mut tasks = tokio::task::JoinSet::new();
        for (i, engine) in engines.into_iter().enumerate() {
            tasks.spawn(shard::run(shared.clone(), i, engine));
        }
        for l in listeners {
            tasks.spawn(accept_loop(shared.clone(), l));
        }
        if let Some(m) = metrics {
            tasks.spawn(metrics::serve(shared.clone(), m));
        }
        let stop = shared.shutdown.clone();
        stopped(stop.clone()).await;
        for s in &shared.shards {
            s.notify.notify_one();
        }
        tasks.shutdown().await;
    }
}

/// Resolves once the shutdown flag is set (or its sender is gone).
pub(crate) async fn stopped(mut rx: watch::Receiver<bool>) {
    loop {
        let set = *rx.borrow_and_update();
        if set || rx.changed().await.is_err() {
            return;
        }
    }
}

/// One open connection's place under the caps; given back when dropped.
struct ConnSlot {
    shared: Arc<Shared>,
    ip: std::net::IpAddr,
}

impl ConnSlot {
    /// A place for a connection from `ip`, if neither the total nor the per-address cap is
    /// reached.
    fn take(shared: &Arc<Shared>, ip: std::net::IpAddr) -> Option<ConnSlot> {
        let mut open = shared.open.lock().unwrap_or_else(|p| p.into_inner());
        let total: usize = open.values().sum();
        let mine = open.get(&ip).copied().unwrap_or(0);
        if total >= shared.cfg.max_connections || mine >= shared.cfg.max_connections_per_ip {
            return None;
        }
        *open.entry(ip).or_insert(0) += 1;
        Some(ConnSlot {
            shared: shared.clone(),
            ip,
        })
    }
}

impl Drop for ConnSlot {
    fn drop(&mut self) {
        let mut open = self.shared.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

async fn accept_loop(shared: Arc<Shared>, listener: TcpListener) {
    let mut next_id = 0u64;
    let stop = shared.shutdown.clone();
    loop {
        tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, peer)) => {
                    // Over a cap, the connection is closed at once (dropped), before any work.
                    let Some(slot) = ConnSlot::take(&shared, peer.ip()) else {
                        Stats::inc(&shared.stats.connections_refused);
                        drop(stream);
                        continue;
                    };
                    next_id += 1;
                    Stats::inc(&shared.stats.connections_accepted);
                    let id = (u64::from(listener.local_addr().map_or(0, |a| a.port())) << 48) | next_id;
                    let shared = shared.clone();
                    tokio::spawn(async move {
                        let _ = stream.set_nodelay(true);
                        match shared.tls.clone() {
                            None => {
                                let (rd, wr) = stream.into_split();
                                conn::serve(shared, rd, wr, peer, id).await;
                            }
                            Some(acceptor) => {
                                // The TLS handshake counts against the OpenFlow handshake's time.
                                let t = shared.cfg.handshake_timeout;
                                match tokio::time::timeout(t, acceptor.accept(stream)).await {
                                    Ok(Ok(s)) => {
                                        let (rd, wr) = tokio::io::split(s);
                                        conn::serve(shared, rd, wr, peer, id).await;
                                    }
                                    Ok(Err(e)) => {
                                        Stats::inc(&shared.stats.tls_failures);
                                        tracing::info!("TLS handshake with {peer} failed: {e}");
                                    }
                                    Err(_) => {
                                        Stats::inc(&shared.stats.tls_failures);
                                        tracing::info!("TLS handshake with {peer} timed out");
                                    }
                                }
                            }
                        }
                        drop(slot);
                    });
                }
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            _ = stopped(stop.clone()) => return,
        }
    }
}
