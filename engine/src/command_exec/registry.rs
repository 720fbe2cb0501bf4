//! The `command/exec` processes that clients named with a `processId`, per connection, so that
//! `command/exec/write`, `terminate` and `resize` can reach them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agentwire_runtime::ConnectionId;
use agentwire_support::lock;
use tokio::sync::mpsc;

use super::run::Control;

type Key = (ConnectionId, String);

/// Running processes by connection and `processId`.
#[derive(Debug, Default)]
pub(super) struct Registry {
    live: Arc<Mutex<HashMap<Key, mpsc::Sender<Control>>>>,
}

/// A process's entry; removed when dropped (the process has ended, or its request was dropped).
#[derive(Debug)]
pub(super) struct Entry {
    live: Arc<Mutex<HashMap<Key, mpsc::Sender<Control>>>>,
    key: Key,
}

impl Drop for Entry {
    fn drop(&mut self) {
        lock(&self.live).remove(&self.key);
    }
}

impl Registry {
    /// Records `process_id` on `connection`, reachable through `control`; `None` when that
    /// connection already runs a process by that id.
    pub(super) fn register(
        &self,
        connection: ConnectionId,
        process_id: &str,
        control: mpsc::Sender<Control>,
    ) -> Option<Entry> {
        let key = (connection, process_id.to_owned());
        let mut live = lock(&self.live);
        if live.contains_key(&key) {
            return None;
        }
        live.insert(key.clone(), control);
        Some(Entry {
            live: self.live.clone(),
            key,
        })
    }

    /// How many processes are registered.
    pub(super) fn len(&self) -> usize {
        lock(&self.live).len()
    }

    /// The control channel of `process_id` on `connection`, if it runs.
    pub(super) fn find(
        &self,
        connection: ConnectionId,
        process_id: &str,
    ) -> Option<mpsc::Sender<Control>> {
        lock(&self.live)
            .get(&(connection, process_id.to_owned()))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_per_connection_while_their_entry_lives() {
        let registry = Registry::default();
        let (tx, _rx) = mpsc::channel(1);
        let (one, two) = (ConnectionId(1), ConnectionId(2));
        let entry = registry.register(one, "p", tx.clone()).expect("first");
        assert!(registry.register(one, "p", tx.clone()).is_none());
        let other = registry
            .register(two, "p", tx.clone())
            .expect("other connection");
        assert!(registry.find(one, "p").is_some());
        assert!(registry.find(one, "q").is_none());
        drop(entry);
        assert!(registry.find(one, "p").is_none());
        assert!(registry.find(two, "p").is_some());
        assert!(registry.register(one, "p", tx).is_some());
        drop(other);
    }
}
