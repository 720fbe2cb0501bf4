//! Request work that touches the disk, run on tokio's blocking pool so that no async worker
//! (and, on the stdio server, not the one thread that reads requests) waits on it. A request
//! handler awaits the result; a failure is answered with the method's error codes.

use std::future::{Future, ready};
use std::sync::Arc;

use agentwire_protocol::method::Method;
use agentwire_runtime::HandlerError;
use agentwire_store::error::ThreadError;

use crate::threads::Threads;

/// The answer for `M`, with failures mapped to its error codes.
pub(crate) fn answer<M: Method, T>(
    result: Result<T, ThreadError>,
) -> impl Future<Output = Result<T, HandlerError>> + Send
where
    T: Send,
{
    ready(result.map_err(|e| e.into_handler(M::NAME)))
}

/// Runs `work`, a thread-store operation (it reads and writes rollouts and the SQLite index,
/// and may wait for the rollout committer), on tokio's blocking pool, so that no async worker
/// waits on the disk; its failure is mapped to `M`'s error codes.
pub(crate) async fn stored<M, T, W>(threads: Arc<Threads>, work: W) -> Result<T, HandlerError>
where
    M: Method,
    T: Send + 'static,
    W: FnOnce(&Threads) -> Result<T, ThreadError> + Send + 'static,
{
    blocking::<M, T, _>(move || work(&threads).map_err(|e| e.into_handler(M::NAME))).await
}

/// Runs `work`, which touches the disk and answers for `M` itself, on tokio's blocking pool. A
/// panic in `work` is resumed here, where the runtime answers it with -32603 as it does for any
/// handler.
pub(crate) async fn blocking<M, T, W>(work: W) -> Result<T, HandlerError>
where
    M: Method,
    T: Send + 'static,
    W: FnOnce() -> Result<T, HandlerError> + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(error) => match error.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(error) => Err(HandlerError::internal(format!("{}: {error}", M::NAME))),
        },
    }
}
