//! agentwire-support: the leaf helpers every part of the agentwire engine shares. It uses
//! nothing of the engine, so the engine's other crates (`agentwire-tools`, the engine itself)
//! may all depend on it.
//!
//! - [`atomic_file`]: a file's new content put in place atomically;
//! - [`regular_file`]: opening and reading a file someone else named, refusing FIFOs, devices
//!   and sockets, with a deadline;
//! - [`timestamps`]: times as the wire's strings;
//! - [`tls`]: the process's TLS crypto provider, installed once for every HTTPS client;
//! - [`supervised`]: background tasks whose panic is logged and cleaned up after;
//! - [`lock`]: a mutex taken whether or not a holder panicked;
//! - `test_peer` (with the `test-peer` feature, for unit tests): a connection whose messages
//!   go nowhere.
//!
//! It is an internal crate of agentwire: its API follows the engine's needs, not semver.

pub mod atomic_file;
pub mod regular_file;
pub mod supervised;
#[cfg(feature = "test-peer")]
pub mod test_peer;
pub mod timestamps;
pub mod tls;

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, recovering the data if a holder panicked: for state that no holder leaves
/// half-changed, so a panic elsewhere does not turn into a panic here.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
