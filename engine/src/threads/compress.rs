//! `rollout/compress` on the threads: the pass itself belongs to the store (see
//! `agentwire_store::compress`).

use std::time::Duration;

use agentwire_store::error::ThreadError;

use super::Threads;

impl Threads {
    /// Starts a compression pass over the rollouts not modified for `after` (see
    /// `agentwire_store::compress`); returns at once. `Ok(false)` when one runs already, or when the store keeps no
    /// local rollout files (PostgreSQL): there is nothing to do there.
    pub(crate) fn compress_cold(&self, after: Duration) -> Result<bool, ThreadError> {
        match self.store.files() {
            Some(files) => Ok(files.compress_cold(after)?),
            None => Ok(false),
        }
    }
}
