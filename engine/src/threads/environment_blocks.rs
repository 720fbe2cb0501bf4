//! The environment context blocks turns told the model (see `turns::environment`), kept as
//! `environmentContext` rollout records so that the conversation rebuilt for a later model
//! call — by this server or by one started after it — holds each block before the turn that
//! sent it, and the next turn sends a block only when something in it changed.

use std::collections::HashMap;

use agentwire_protocol::Turn;
use agentwire_store::error::ThreadError;
use agentwire_store::meta::{InjectedItems, ThreadSummary, now};
use agentwire_store::record::RolloutRecord;
use agentwire_store::replay::apply_environment_context;
use agentwire_support::lock;

use super::Threads;

impl Threads {
    /// Records that turn `turn_id` of loaded thread `thread_id` told the model `text`: in
    /// memory at once, in the rollout before the turn's next record.
    pub(crate) fn record_environment_block(
        &self,
        thread_id: &str,
        turn_id: &str,
        text: String,
    ) -> Result<(), ThreadError> {
        let thread = self.loaded(thread_id).ok_or_else(|| {
            ThreadError::Conflict(format!("thread {thread_id} is not loaded; resume it first"))
        })?;
        let mut thread = lock(&thread);
        let at = now();
        let record = RolloutRecord::EnvironmentContext {
            at,
            turn_id: turn_id.to_owned(),
            text,
        };
        apply_environment_context(&mut thread.summary, &record);
        // Not waited for: the turn's completion, recorded later, is durable only after it.
        thread.append(&[record], at)?.detach();
        Ok(())
    }

    /// Calls `read` with what a model call of thread `id` is built from: its turns, the
    /// injected items that still apply, and the environment context block each turn sent (by
    /// turn id; the last one when a turn sent several).
    pub(crate) fn with_model_history<T>(
        &self,
        id: &str,
        read: impl FnOnce(&[Turn], &[InjectedItems], &HashMap<String, String>) -> T,
    ) -> Result<T, ThreadError> {
        let by_turn = |summary: &ThreadSummary| -> HashMap<String, String> {
            summary.environment_blocks.iter().cloned().collect()
        };
        match self.loaded(id) {
            Some(thread) => {
                let thread = lock(&thread);
                let injected = InjectedItems::applying(&thread.summary.injected, &thread.turns);
                Ok(read(&thread.turns, &injected, &by_turn(&thread.summary)))
            }
            None => {
                let (summary, turns) = self.snapshot(id)?;
                let injected = InjectedItems::applying(&summary.injected, &turns);
                Ok(read(&turns, &injected, &by_turn(&summary)))
            }
        }
    }
}
