//! Connected datapaths: where to send a datapath's replies.

use super::outbox::Outbox;
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;

/// How to reach one connection.
#[derive(Debug, Clone)]
pub(crate) struct ConnHandle {
    /// The connection's id (unique for the server's lifetime).
    pub id: u64,
    /// Its write queue, bounded in chunks and bytes.
    pub tx: Outbox,
    /// Closes the connection when notified.
    pub close: Arc<Notify>,
}

/// Datapath id -> connection; a newer connection of the same datapath replaces the older.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    map: Mutex<FxHashMap<u64, ConnHandle>>,
}

impl Registry {
    /// The locked map (a poisoned lock is taken over: the map itself is always consistent).
    pub fn lock(&self) -> MutexGuard<'_, FxHashMap<u64, ConnHandle>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `h` for `dpid`; returns the connection it replaced.
    pub fn insert(&self, dpid: u64, h: ConnHandle) -> Option<ConnHandle> {
        self.lock().insert(dpid, h)
    }

    /// Removes `dpid` if connection `id` still holds it; true when it did.
    pub fn remove_if(&self, dpid: u64, id: u64) -> bool {
        let mut m = self.lock();
        if m.get(&dpid).is_some_and(|h| h.id == id) {
            m.remove(&dpid);
            true
        } else {
            false
        }
    }
}
