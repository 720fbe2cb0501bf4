//! The model call of `thread/sample`: the thread's conversation as its next turn would send it
//! (instructions, developer instructions, project docs, turns and injected items), followed by
//! the sample's prompt as a user message. Nothing is recorded; the running (or finished) turn
//! is left as it is. The call itself is made by [`crate::thread_sample`].

use std::sync::Arc;

use agentwire_protocol::{ThreadSampleParams, TurnStatus};
use agentwire_providers::{HistoryEntry, ModelRequest, OutputOptions};
use agentwire_store::error::ThreadError;
use agentwire_store::meta::SettingsOverrides;

use super::instructions::{DEFAULT_PROJECT_DOC_MAX_BYTES, base_instructions, context_entries};
use super::{Turns, history};

/// A sample's model call, with the turn the conversation ends with.
pub(crate) struct SampleCall {
    /// The call to make.
    pub request: ModelRequest,
    /// The thread's newest turn (`sourceTurnId`).
    pub source_turn_id: String,
}

impl Turns {
    /// The model call of `thread/sample` on loaded thread `params.threadId`. Refused when the
    /// thread is not loaded, has no turn, its newest turn is not `expectedTurnId`, or that turn
    /// still runs and `allowInProgressTurn` is false. Reads configuration and project docs:
    /// call it off the async workers.
    pub(crate) fn sample_call(
        self: &Arc<Self>,
        params: &ThreadSampleParams,
    ) -> Result<SampleCall, ThreadError> {
        let thread_id = &params.thread_id;
        // Fails unless the thread is loaded; no override, so nothing is recorded.
        let settings = self
            .threads
            .update_settings(thread_id, SettingsOverrides::default())?;
        let (mut conversation, newest) =
            self.threads
                .with_model_history(thread_id, |turns, injected, blocks| {
                    (
                        history::with_injected(turns, blocks, injected),
                        turns.last().map(|t| (t.id.clone(), t.status)),
                    )
                })?;
        let Some((newest_id, newest_status)) = newest else {
            return Err(ThreadError::Conflict(format!(
                "thread {thread_id} has no turn yet: there is nothing to sample after"
            )));
        };
        if newest_id != params.expected_turn_id {
            return Err(ThreadError::Conflict(format!(
                "expectedTurnId: `{}` is not the newest turn of thread {thread_id} (it is `{newest_id}`)",
                params.expected_turn_id
            )));
        }
        let running = self.is_running(thread_id) || newest_status == TurnStatus::InProgress;
        if running && !params.allow_in_progress_turn {
            return Err(ThreadError::Conflict(format!(
                "turn {newest_id} of thread {thread_id} is still running; wait for it to end or \
                 set allowInProgressTurn"
            )));
        }
        let effective = self
            .config
            .effective(Some(std::path::Path::new(&settings.cwd)));
        let max_bytes = effective
            .file
            .project_doc_max_bytes
            .unwrap_or(DEFAULT_PROJECT_DOC_MAX_BYTES);
        let mut history: Vec<HistoryEntry> = context_entries(
            &settings.cwd,
            settings.developer_instructions.as_deref(),
            max_bytes,
        );
        history.append(&mut conversation);
        history.push(HistoryEntry::user_text(params.prompt.clone()));
        Ok(SampleCall {
            request: ModelRequest {
                provider: settings.model_provider.clone(),
                model: settings.model.clone(),
                effort: params
                    .effort
                    .clone()
                    .or_else(|| settings.reasoning_effort.clone()),
                instructions: base_instructions(settings.base_instructions.as_deref()),
                history,
                steered: false,
                output: OutputOptions {
                    summary: settings.reasoning_summary.clone(),
                    schema: None,
                },
                mcp_tools: Vec::new(),
                client_tools: Vec::new(),
                builtins: agentwire_tools::specs::BuiltinTools::default(),
            },
            source_turn_id: newest_id,
        })
    }

    /// Starts a sample's model call: its events, until `Done` or `Error`; dropping the
    /// receiver stops the call.
    pub(crate) fn sample_stream(
        &self,
        request: ModelRequest,
    ) -> tokio::sync::mpsc::Receiver<agentwire_providers::ProviderEvent> {
        self.provider.stream(request)
    }
}
