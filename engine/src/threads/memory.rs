//! A thread's memory mode (`thread/memoryMode/set`): a `memoryMode` rollout record, so it
//! persists in whichever store holds the thread and comes back when the thread is read again
//! (an ephemeral thread keeps it in memory while it lives). Like a name, setting it counts as
//! a change of the thread (its update time moves).
//!
//! What the mode governs is in [`crate::memory`]: a thread whose mode is `disabled` reads no
//! memory summary.

use agentwire_protocol::{
    ThreadMemoryMode, ThreadMemoryModeSetParams, ThreadMemoryModeSetResponse,
};
use agentwire_store::error::ThreadError;
use agentwire_store::meta::{ThreadSummary, now};
use agentwire_store::record::RolloutRecord;
use agentwire_support::lock;

use super::Threads;

impl Threads {
    /// `thread/memoryMode/set`: records the mode, loaded thread or not, and answers once it is
    /// durable.
    pub(crate) fn memory_mode_set(
        &self,
        params: ThreadMemoryModeSetParams,
    ) -> Result<ThreadMemoryModeSetResponse, ThreadError> {
        let id = params.thread_id;
        let mode = params.mode;
        let at = now();
        let record = RolloutRecord::MemoryMode { at, mode };
        let apply = |summary: &mut ThreadSummary| summary.memory_mode = Some(mode);
        if let Some(thread) = self.loaded(&id) {
            let pending = {
                let mut thread = lock(&thread);
                apply(&mut thread.summary);
                thread.append(&[record], at)?
            };
            pending.wait()?;
        } else {
            let mut row = self.lookup(&id)?;
            let replayed = self.read_rollout(&row)?;
            self.append_stored(&mut row, replayed, record, at, apply)?;
        }
        Ok(ThreadMemoryModeSetResponse::builder().build())
    }

    /// The memory mode of thread `id` (loaded or not): `enabled` unless it was set otherwise.
    pub(crate) fn memory_mode(&self, id: &str) -> Result<ThreadMemoryMode, ThreadError> {
        let (summary, _) = self.snapshot(id)?;
        Ok(summary.memory_mode.unwrap_or(ThreadMemoryMode::Enabled))
    }
}
