//! Automatic compaction: a turn whose thread's context has grown to the limit summarises the
//! conversation before its next model call, as `thread/compact/start` would, but inside the
//! running turn.
//!
//! The limit is `model_auto_compact_token_limit` (as configured for the thread's `cwd`, or in
//! its `config` overrides); when that is not set, 90% of the model's context window when the
//! provider reports one; `0` or less turns automatic compaction off. The context size is the
//! token count of the thread's last model call (`tokenUsage.last.totalTokens`), checked before
//! the turn's first model call (and before steered input) and after each round of tool calls.
//!
//! Compacting streams, in the running turn: the summary as an `agentMessage` (the model asked
//! with the conversation so far and the compaction prompt), a `contextCompaction` item,
//! `thread/compacted`, then `thread/tokenUsage/updated` whose `last` is the estimated size of
//! the compacted context (about 4 bytes a token), so the next check does not fire again. The
//! next model call sees the summary in place of the history (rebuilt the same way after a
//! restart by `history::from_turns`). A failed or interrupted summary ends the turn that way.

use agentwire_protocol::ContextCompactedNotification;
use agentwire_protocol::ThreadItemKind;
use agentwire_protocol::methods::ThreadCompacted;
use agentwire_providers::{HistoryEntry, ModelRequest, OutputOptions};
use agentwire_store::meta::new_id;
use agentwire_tools::BYTES_PER_TOKEN;

use super::{CallEnd, TurnRun, now_ms};
use crate::turns::compact::COMPACTION_PROMPT;
use crate::turns::history::SUMMARY_PREFIX;

/// The share of the context window at which a thread without a configured limit is compacted,
/// in percent.
const WINDOW_PERCENT: i64 = 90;

/// The context size at which to compact: the configured limit, else [`WINDOW_PERCENT`] of
/// `window`; `None` when off or unknown.
pub(super) fn limit(configured: Option<i64>, window: Option<i64>) -> Option<i64> {
    match configured {
        Some(limit) if limit > 0 => Some(limit),
        Some(_) => None,
        None => window
            .filter(|w| *w > 0)
            .map(|w| w.saturating_mul(WINDOW_PERCENT) / 100),
    }
}

impl TurnRun {
    /// Whether the thread's context reached its compaction limit.
    fn compaction_due(&self) -> bool {
        let Some(usage) = self.turns.threads.token_usage(&self.thread_id) else {
            return false;
        };
        let configured = self
            .turns
            .threads
            .defaults_for(&self.settings)
            .auto_compact_token_limit;
        limit(configured, usage.usage.model_context_window)
            .is_some_and(|limit| usage.usage.last.total_tokens >= limit)
    }

    /// Compacts the conversation if its context reached the limit. `None` when the turn goes
    /// on (nothing to do, or compacted); the turn's end when the summary failed or was
    /// interrupted.
    pub(super) async fn compact_if_due(&mut self) -> Option<CallEnd> {
        if self.history.is_empty() || !self.compaction_due() {
            return None;
        }
        tracing::info!(thread = %self.thread_id, "context limit reached: compacting");
        let mut conversation = std::mem::take(&mut self.history);
        conversation.push(HistoryEntry::user_text(COMPACTION_PROMPT.to_owned()));
        let request = ModelRequest {
            provider: self.settings.model_provider.clone(),
            model: self.settings.model.clone(),
            effort: self.settings.reasoning_effort.clone(),
            instructions: None,
            history: conversation.clone(),
            steered: false,
            output: OutputOptions::default(),
            mcp_tools: Vec::new(),
            client_tools: Vec::new(),
            builtins: self.builtins,
        };
        self.history = conversation;
        let end = self.call(request).await;
        // `call` added the summary (its text) to the conversation.
        let summary = match self.history.pop() {
            Some(HistoryEntry::Assistant { text, .. }) => text,
            _ => String::new(),
        };
        // Drop the compaction prompt again.
        self.history.pop();
        match end {
            CallEnd::Done(_) if !summary.trim().is_empty() => {}
            CallEnd::Done(_) => {
                return Some(CallEnd::Failed(super::turn_error(
                    "Automatic compaction failed: the model wrote no summary.",
                    None,
                    None,
                )));
            }
            other => return Some(other),
        }
        let marker = ThreadItemKind::context_compaction().id(new_id()).build();
        let at = now_ms();
        self.started(marker.clone(), at);
        self.complete(marker, at).await;
        self.notify::<ThreadCompacted>(
            &ContextCompactedNotification::builder()
                .thread_id(self.thread_id.clone())
                .turn_id(self.turn.id.clone())
                .build(),
        );
        let text = format!("{SUMMARY_PREFIX}{summary}");
        let estimate = i64::try_from(text.len() / BYTES_PER_TOKEN).unwrap_or(i64::MAX);
        self.history = vec![HistoryEntry::user_text(text)];
        match self
            .turns
            .threads
            .record_compacted_context(&self.thread_id, &self.turn.id, estimate)
        {
            Ok(Some(usage)) => self.send_usage(usage),
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "compacted context size not recorded"),
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::limit;

    #[test]
    fn the_configured_limit_wins_else_ninety_percent_of_the_window() {
        assert_eq!(limit(Some(1000), Some(100_000)), Some(1000));
        assert_eq!(limit(None, Some(100_000)), Some(90_000));
        assert_eq!(limit(None, None), None);
        assert_eq!(limit(Some(0), Some(100_000)), None);
        assert_eq!(limit(Some(-5), None), None);
        assert_eq!(limit(None, Some(0)), None);
    }
}
