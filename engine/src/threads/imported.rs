//! Threads brought over from another agent's saved sessions (see [`crate::codex_import`]):
//! written to the store as they were, under the session's own id, without being loaded. A
//! session whose id the store already holds is left alone, so importing twice makes no copy.

use agentwire_protocol::{
    GitInfo, SessionSource, ThreadHistoryMode, ThreadTokenUsage, Turn, TurnStatus,
};
use agentwire_store::error::ThreadError;
use agentwire_store::meta::{
    SettingsOverrides, ThreadMeta, ThreadSettings, ThreadSummary, TokenTotals,
};
use agentwire_store::record::RolloutRecord;

use super::Threads;

/// Longest thread id accepted from another agent's session, in bytes.
const MAX_ID_BYTES: usize = 128;

/// A saved session of another agent, read and converted, ready to become a thread.
#[derive(Debug, Clone)]
pub(crate) struct ImportedThread {
    /// The session's id: the thread's id here too.
    pub id: String,
    /// The id of the session it belongs to (the same as `id` unless it was a sub-agent's).
    pub session_id: String,
    /// When it began (Unix seconds).
    pub created_at: i64,
    /// The version of the software that recorded it.
    pub cli_version: String,
    /// What kind of client started it.
    pub source: SessionSource,
    /// Which client started it.
    pub originator: Option<String>,
    /// Its Git metadata.
    pub git_info: Option<GitInfo>,
    /// Its working directory (absolute).
    pub cwd: String,
    /// The model its last turn used, when known.
    pub model: Option<String>,
    /// The model provider it used, when known.
    pub model_provider: Option<String>,
    /// Its name, when it had one.
    pub name: Option<String>,
    /// Its turns, finished (or interrupted).
    pub turns: Vec<Turn>,
    /// Its token totals after the last model call, and that call's turn.
    pub token_usage: Option<(String, ThreadTokenUsage)>,
}

/// What importing a session did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Imported {
    /// The thread was created.
    Created,
    /// The store already holds a thread of that id: nothing was written.
    AlreadyThere,
}

/// Why `id` cannot name a thread here (it becomes part of a file name), if it cannot.
pub(crate) fn check_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.len() > MAX_ID_BYTES {
        return Err(format!(
            "session id {id:?} is empty or longer than {MAX_ID_BYTES} bytes"
        ));
    }
    if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(format!(
            "session id {id:?} holds characters other than letters, digits, `-` and `_`"
        ));
    }
    Ok(())
}

impl Threads {
    /// Whether a thread of id `id` exists (stored, or loaded and ephemeral).
    pub(crate) fn has_thread(&self, id: &str) -> Result<bool, ThreadError> {
        Ok(self.loaded(id).is_some() || self.store.get(id)?.is_some())
    }

    /// Writes `thread` to the store as a new thread (not loaded), unless one of its id is there.
    pub(crate) fn import(&self, thread: ImportedThread) -> Result<Imported, ThreadError> {
        check_id(&thread.id).map_err(ThreadError::InvalidParams)?;
        if self.has_thread(&thread.id)? {
            return Ok(Imported::AlreadyThere);
        }
        let defaults = self.defaults.defaults(Some(&thread.cwd), None);
        let overrides = SettingsOverrides {
            cwd: Some(thread.cwd.clone()),
            model: thread.model.clone(),
            model_provider: thread.model_provider.clone(),
            ..SettingsOverrides::default()
        };
        let settings = ThreadSettings::new(&defaults, overrides);
        let meta = ThreadMeta {
            id: thread.id.clone(),
            session_id: thread.session_id.clone(),
            created_at: thread.created_at,
            cli_version: thread.cli_version.clone(),
            source: thread.source,
            thread_source: None,
            originator: thread.originator.clone(),
            service_name: None,
            forked_from_id: None,
            parent_thread_id: None,
            agent_nickname: None,
            agent_role: None,
            git_info: thread.git_info.clone(),
            history_mode: ThreadHistoryMode::Legacy,
            settings,
        };
        let mut summary = ThreadSummary::new(meta, false);
        summary.note_turns(&thread.turns);
        let mut records = Vec::new();
        if let Some(name) = &thread.name {
            summary.name = Some(name.clone());
            records.push(RolloutRecord::Name {
                at: thread.created_at,
                name: Some(name.clone()),
            });
        }
        let mut last = thread.created_at;
        for turn in &thread.turns {
            let at = turn
                .completed_at
                .or(turn.started_at)
                .unwrap_or(last)
                .max(last);
            last = at;
            records.extend(RolloutRecord::for_turn(turn, at));
            if turn.status == TurnStatus::InProgress {
                // A turn the session never finished: it ends here, as a crash's would.
                records.push(RolloutRecord::TurnCompleted {
                    at,
                    turn_id: turn.id.clone(),
                    status: TurnStatus::Interrupted,
                    error: None,
                    completed_at: None,
                    duration_ms: None,
                });
            }
        }
        if let Some((turn_id, usage)) = &thread.token_usage {
            records.push(RolloutRecord::TokenUsage {
                at: last,
                turn_id: turn_id.clone(),
                usage: usage.clone(),
            });
            summary.token_usage = Some(TokenTotals {
                turn_id: turn_id.clone(),
                usage: usage.clone(),
            });
        }
        summary.updated_at = last;
        self.store.create(&summary, &records)?;
        Ok(Imported::Created)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ids_that_can_name_a_file_are_taken() {
        assert!(check_id("01a24945-0a7d-7332-a0c6-5899fe5fd39a").is_ok());
        assert!(check_id("").is_err());
        assert!(check_id("../../etc").is_err());
        assert!(check_id(&"a".repeat(MAX_ID_BYTES + 1)).is_err());
    }
}
