//! Connections for unit tests: a peer whose messages go nowhere.

use std::sync::Arc;

use agentwire_runtime::{Closed, Outbound};
use agentwire_runtime::{Hub, Peer};

/// An outbound that keeps nothing.
struct Discard;

impl Outbound for Discard {
    fn send(&self, _message: Vec<u8>) -> Result<(), Closed> {
        Ok(())
    }
    fn close(&self) {}
}

/// A new open connection of `hub` that discards what it is sent.
pub fn discarding(hub: &Arc<Hub>) -> Peer {
    Peer::new(Arc::clone(hub), hub.open(Box::new(Discard)))
}
