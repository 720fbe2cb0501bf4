//! A turn's records on their way to the rollout: what a turn does when one is durable, or
//! could not be written.

use agentwire_store::committer::Pending;
use agentwire_store::error::ThreadError;

/// Logs a failed recording of a turn's progress (`what`): the turn goes on, the rollout misses
/// that record.
pub(super) fn logged(what: &str, result: Result<(), ThreadError>) {
    if let Err(error) = result {
        tracing::warn!(what, %error, "turn progress not recorded");
    }
}

/// Waits until a record of the turn (`what`) is durable, before the client is told about it. A
/// failure is logged and the turn goes on: the rollout misses that record.
pub(super) async fn durable(what: &str, recorded: Result<Pending, ThreadError>) {
    let durable = match recorded {
        Ok(pending) => pending.durable().await,
        Err(error) => Err(error),
    };
    logged(what, durable);
}
