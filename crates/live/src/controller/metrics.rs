//! The metrics endpoint: a minimal HTTP/1.0 responder that answers any request with the counters
//! in the Prometheus text format, and the client `tandem controller stats` uses.

use super::stats::parse_exposition;
use super::Shared;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Serves the counters until shutdown.
pub(crate) async fn serve(shared: Arc<Shared>, listener: TcpListener) {
    let stop = shared.shutdown.clone();
    loop {
        let (mut s, _) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(_) => continue,
            },
            _ = super::stopped(stop.clone()) => return,
        };
        let mut body = shared.stats.render();
        // The apps' own counters, as their shards last published them.
        for shard in &shared.shards {
            for (name, v) in super::shard::lock_metrics(&shard.app_metrics).iter() {
                body.push_str(&format!("tandem_{name} {v}\n"));
            }
        }
        tokio::spawn(async move {
            // Read (and ignore) the request head; a client that sends nothing still gets an answer.
            let mut req = [0u8; 1024];
            let _ = tokio::time::timeout(Duration::from_millis(200), s.read(&mut req)).await;
            let head = format!(
                "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(head.as_bytes()).await;
            let _ = s.write_all(body.as_bytes()).await;
            let _ = s.shutdown().await;
        });
    }
}

/// Fetches the counters from a controller's metrics endpoint: `(name, value)` in its order.
pub fn fetch_stats(addr: SocketAddr, timeout: Duration) -> std::io::Result<Vec<(String, u64)>> {
    let mut s = TcpStream::connect_timeout(&addr, timeout)?;
    s.set_read_timeout(Some(timeout))?;
    s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n")?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "not an HTTP response"))?;
    Ok(parse_exposition(body))
}
