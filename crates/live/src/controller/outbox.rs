//! A connection's write queue, bounded in bytes: per connection and over all connections
//! together, so switches that never read cannot make the controller hold their replies without
//! limit. A queued chunk gives its bytes back when it is written or dropped (also when the
//! connection closes with chunks still queued).

use bytes::Bytes;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Bytes queued: one connection's, and the server's total.
#[derive(Debug)]
pub(crate) struct Account {
    conn: AtomicUsize,
    total: Arc<AtomicUsize>,
}

/// Encoded bytes waiting for the writer; their size is counted until this is dropped.
#[derive(Debug)]
pub(crate) struct Queued {
    pub bytes: Bytes,
    account: Arc<Account>,
}

impl Drop for Queued {
    fn drop(&mut self) {
        let n = self.bytes.len();
        self.account.conn.fetch_sub(n, Ordering::Relaxed);
        self.account.total.fetch_sub(n, Ordering::Relaxed);
    }
}

/// The sending side of a connection's write queue (cloned into the registry for the shards).
#[derive(Debug, Clone)]
pub(crate) struct Outbox {
    tx: mpsc::Sender<Queued>,
    account: Arc<Account>,
    conn_limit: usize,
    total_limit: usize,
}

impl Outbox {
    /// A queue of at most `chunks` chunks and `conn_limit` bytes, sharing `total` (at most
    /// `total_limit` bytes) with every other connection.
    pub fn new(
        chunks: usize,
        conn_limit: usize,
        total: Arc<AtomicUsize>,
        total_limit: usize,
    ) -> (Outbox, mpsc::Receiver<Queued>) {
        let (tx, rx) = mpsc::channel(chunks.max(1));
        let account = Arc::new(Account {
            conn: AtomicUsize::new(0),
            total,
        });
        (
            Outbox {
                tx,
                account,
                conn_limit,
                total_limit,
            },
            rx,
        )
    }

    /// Queues `bytes`; false (and nothing queued) when the queue is full in chunks or bytes, or
    /// the connection is gone. A chunk larger than the limit itself is still taken into an
    /// empty queue, so one big reply always gets through a quiet connection.
    pub fn try_send(&self, bytes: Bytes) -> bool {
        let n = bytes.len();
        let a = &self.account;
        let conn = a.conn.fetch_add(n, Ordering::Relaxed);
        let total = a.total.fetch_add(n, Ordering::Relaxed);
        let queued = Queued {
            bytes,
            account: a.clone(),
        };
        if (conn > 0 && conn + n > self.conn_limit) || total + n > self.total_limit {
            return false; // `queued` is dropped: the bytes are given back.
        }
        self.tx.try_send(queued).is_ok()
    }

    /// Bytes this connection has queued now.
    #[cfg(test)]
    pub fn queued(&self) -> usize {
        self.account.conn.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_bounded_per_connection_and_in_total_and_given_back() {
        let total = Arc::new(AtomicUsize::new(0));
        let (a, mut ra) = Outbox::new(100, 1000, total.clone(), 1500);
        let (b, _rb) = Outbox::new(100, 1000, total.clone(), 1500);
        assert!(a.try_send(Bytes::from(vec![0; 600])));
        assert!(!a.try_send(Bytes::from(vec![0; 600])), "over the connection's limit");
        assert_eq!(a.queued(), 600);
        assert!(b.try_send(Bytes::from(vec![0; 800])));
        assert!(!b.try_send(Bytes::from(vec![0; 200])), "over the total");
        assert_eq!(total.load(Ordering::Relaxed), 1400);
        // Written (or dropped unwritten): the bytes come back.
        drop(ra.try_recv().unwrap());
        assert_eq!(a.queued(), 0);
        assert_eq!(total.load(Ordering::Relaxed), 800);
        // One reply bigger than the limit still goes through an empty queue.
        assert!(a.try_send(Bytes::from(vec![0; 700])));
        drop(ra);
        drop(b);
        assert!(!a.try_send(Bytes::from(vec![0; 1])), "the connection is gone");
    }
}
