//! Supervised background tasks: every task the engine spawns and does not await itself goes
//! through [`spawn`], [`spawn_on`] or [`background`] (the turn-like jobs have their own
//! supervisor: `turns::job`).
//!
//! A supervised task that panics does not vanish silently: the panic is logged with the
//! task's name and its message, and the task's cleanup runs (each caller says, where it
//! spawns, what its cleanup undoes: an entry it registered, an answer someone waits for, a
//! service that must keep running). The cleanup runs on the same task, after the panic was
//! caught; it must not panic itself.
//!
//! Not through here: the model providers' stream tasks (`provider/`), whose cleanup is their
//! channel: a panic drops the sender, the turn sees the stream end without completing and
//! fails the call; and tasks whose owner keeps the handle and aborts it (`tools/exec.rs`).

// On the async path: no blocking call here (see clippy.toml); code that runs on the blocking
// pool or a thread of its own says so where it allows one.
#![deny(clippy::disallowed_methods)]

use std::future::Future;
use std::panic::AssertUnwindSafe;

use agentwire_runtime::Hub;
use futures_util::FutureExt;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

/// Spawns `work` (`what`: its name in the log) on `runtime`; if it panics, the panic is logged
/// and `cleanup` runs. Aborting the returned handle stops `work` without running `cleanup`
/// (whoever aborts cleans up).
pub fn spawn_on<F, C>(runtime: &Handle, what: &'static str, work: F, cleanup: C) -> JoinHandle<()>
where
    F: Future<Output = ()> + Send + 'static,
    C: FnOnce() + Send + 'static,
{
    runtime.spawn(supervise(what, work, cleanup))
}

/// Spawns `work` (`what`: its name in the log) as background work of the server `hub` (its
/// shutdown waits for it: see [`Hub::spawn_background`]); if it panics, the panic is logged
/// and `cleanup` runs.
pub fn background<F, C>(hub: &Hub, what: &'static str, work: F, cleanup: C)
where
    F: Future<Output = ()> + Send + 'static,
    C: FnOnce() + Send + 'static,
{
    hub.spawn_background(supervise(what, work, cleanup));
}

/// `work`, with its panic caught, logged and followed by `cleanup`.
async fn supervise<F, C>(what: &'static str, work: F, cleanup: C)
where
    F: Future<Output = ()> + Send + 'static,
    C: FnOnce() + Send + 'static,
{
    if let Err(panic) = AssertUnwindSafe(work).catch_unwind().await {
        tracing::error!(
            task = what,
            panic = %panic_text(panic.as_ref()),
            "background task panicked; cleaning up after it"
        );
        cleanup();
    }
}

/// [`spawn_on`] the current runtime. Outside a runtime nothing is spawned and `None` comes
/// back (logged): callers run on the runtime, so that is a bug, not a panic.
pub fn spawn<F, C>(what: &'static str, work: F, cleanup: C) -> Option<JoinHandle<()>>
where
    F: Future<Output = ()> + Send + 'static,
    C: FnOnce() + Send + 'static,
{
    match Handle::try_current() {
        Ok(runtime) => Some(spawn_on(&runtime, what, work, cleanup)),
        Err(_) => {
            tracing::error!(task = what, "background task not started: no async runtime");
            None
        }
    }
}

/// The text of a panic's payload.
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_panicking_task_runs_its_cleanup_and_a_finished_one_does_not() {
        let cleaned = Arc::new(AtomicBool::new(false));
        let flag = cleaned.clone();
        let handle = spawn("test panic", async { panic!("boom") }, move || {
            flag.store(true, Ordering::SeqCst);
        })
        .expect("runtime");
        handle.await.expect("the panic is caught, not propagated");
        assert!(cleaned.load(Ordering::SeqCst));

        let cleaned = Arc::new(AtomicBool::new(false));
        let flag = cleaned.clone();
        let handle = spawn("test ok", async {}, move || {
            flag.store(true, Ordering::SeqCst)
        })
        .expect("runtime");
        handle.await.expect("finished");
        assert!(!cleaned.load(Ordering::SeqCst));
    }
}
