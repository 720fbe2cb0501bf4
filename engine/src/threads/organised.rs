//! A thread's attachments, queue and section, on the threads' side: reading them, and changing
//! them with a record (the records and their replay are `agentwire_store::organised`). The
//! requests themselves are served by [`crate::organisation`].
//!
//! A change reads the thread's current state and appends its record under the loaded
//! thread's lock, so a queued input the server takes to start a turn and one a client adds at
//! the same moment never overwrite each other.

use agentwire_protocol::TurnStatus;
use agentwire_store::error::ThreadError;
use agentwire_store::organised::Organised;
use agentwire_store::record::RolloutRecord;
use agentwire_support::lock;

use super::Threads;

/// What the server knows of a thread when it files or lists it: whether it is archived and
/// when it last changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Standing {
    /// Whether the thread is in the archive.
    pub archived: bool,
    /// Unix seconds of its last change (its `recencyAt`).
    pub updated_at: i64,
}

impl Threads {
    /// The attachments, queue and section of thread `id` (loaded or not).
    pub(crate) fn organised(&self, id: &str) -> Result<Organised, ThreadError> {
        if let Some(thread) = self.loaded(id) {
            return Ok(lock(&thread).summary.organised.clone());
        }
        let row = self.lookup(id)?;
        Ok(self.read_rollout(&row)?.summary.organised)
    }

    /// Whether thread `id` is archived and when it last changed; `None` when there is no such
    /// thread. Reads the index only.
    pub(crate) fn standing(&self, id: &str) -> Result<Option<Standing>, ThreadError> {
        if let Some(thread) = self.loaded(id) {
            let thread = lock(&thread);
            return Ok(Some(Standing {
                archived: false,
                updated_at: thread.summary.updated_at,
            }));
        }
        Ok(self.store.get(id)?.map(|row| Standing {
            archived: row.archived,
            updated_at: row.summary.updated_at,
        }))
    }

    /// Whether thread `id` is loaded and its last turn (if any) completed normally: a thread
    /// whose last turn was interrupted or failed waits for the user before its queue moves on.
    pub(crate) fn ready_for_queue(&self, id: &str) -> bool {
        self.loaded(id).is_some_and(|thread| {
            let thread = lock(&thread);
            matches!(thread.status, agentwire_protocol::ThreadStatus::Idle)
                && thread
                    .turns
                    .last()
                    .is_none_or(|turn| turn.status == TurnStatus::Completed)
        })
    }

    /// Changes what is filed on thread `id`: `change` gets its current state and answers the
    /// result and, when something changed, the record that says so (which it has already
    /// applied to the state it got). The record is appended and durable before this returns.
    pub(crate) fn organise<R>(
        &self,
        id: &str,
        change: impl FnOnce(&mut Organised) -> Result<(R, Option<RolloutRecord>), ThreadError>,
    ) -> Result<R, ThreadError> {
        if let Some(thread) = self.loaded(id) {
            let (answer, pending) = {
                let mut thread = lock(&thread);
                let mut organised = thread.summary.organised.clone();
                let (answer, record) = change(&mut organised)?;
                let Some(record) = record else {
                    return Ok(answer);
                };
                thread.summary.organised = organised;
                let at = thread.summary.updated_at;
                (answer, thread.append(&[record], at)?)
            };
            pending.wait()?;
            return Ok(answer);
        }
        let mut row = self.lookup(id)?;
        let replayed = self.read_rollout(&row)?;
        let mut organised = replayed.summary.organised.clone();
        let (answer, record) = change(&mut organised)?;
        let Some(record) = record else {
            return Ok(answer);
        };
        let at = replayed.summary.updated_at;
        self.append_stored(&mut row, replayed, record, at, |summary| {
            summary.organised = organised;
        })?;
        Ok(answer)
    }
}
