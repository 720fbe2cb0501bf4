//! A thread's token totals: added to after each model call, recorded in the rollout (a
//! `tokenUsage` record holding the new total), and so read back after a restart;
//! `thread/resume` sends them to the resuming connection after its answer.

use std::sync::Arc;

use agentwire_protocol::methods::ThreadTokenUsageUpdated;
use agentwire_protocol::{
    ThreadTokenUsage, ThreadTokenUsageUpdatedNotification, TokenUsageBreakdown,
};
use agentwire_runtime::RequestContext;
use agentwire_store::error::ThreadError;
use agentwire_store::meta::{ThreadSummary, TokenTotals, now};
use agentwire_store::record::RolloutRecord;
use agentwire_support::lock;

use super::Threads;
use super::subscribers::Subscribers;

/// No tokens.
pub(crate) fn zero() -> TokenUsageBreakdown {
    TokenUsageBreakdown::builder()
        .input_tokens(0)
        .cached_input_tokens(0)
        .cache_write_input_tokens(0)
        .output_tokens(0)
        .reasoning_output_tokens(0)
        .total_tokens(0)
        .build()
}

/// `total` plus `last`, each count saturating.
pub(crate) fn add(total: &TokenUsageBreakdown, last: &TokenUsageBreakdown) -> TokenUsageBreakdown {
    TokenUsageBreakdown::builder()
        .input_tokens(total.input_tokens.saturating_add(last.input_tokens))
        .cached_input_tokens(
            total
                .cached_input_tokens
                .saturating_add(last.cached_input_tokens),
        )
        .cache_write_input_tokens(
            total
                .cache_write_input_tokens
                .saturating_add(last.cache_write_input_tokens),
        )
        .output_tokens(total.output_tokens.saturating_add(last.output_tokens))
        .reasoning_output_tokens(
            total
                .reasoning_output_tokens
                .saturating_add(last.reasoning_output_tokens),
        )
        .total_tokens(total.total_tokens.saturating_add(last.total_tokens))
        .build()
}

impl Threads {
    /// Adds the model call `last` of turn `turn_id` to the totals of loaded thread
    /// `thread_id`, records the new totals, and returns them. The context window stays the
    /// last one known when the call reports none.
    pub(crate) fn record_token_usage(
        &self,
        thread_id: &str,
        turn_id: &str,
        last: TokenUsageBreakdown,
        model_context_window: Option<i64>,
    ) -> Result<ThreadTokenUsage, ThreadError> {
        let thread = self.loaded(thread_id).ok_or_else(|| {
            ThreadError::Conflict(format!("thread {thread_id} is not loaded; resume it first"))
        })?;
        let mut thread = lock(&thread);
        let previous = thread.summary.token_usage.as_ref().map(|t| &t.usage);
        let usage = ThreadTokenUsage::builder()
            .total(add(&previous.map_or_else(zero, |p| p.total.clone()), &last))
            .maybe_model_context_window(
                model_context_window.or_else(|| previous.and_then(|p| p.model_context_window)),
            )
            .last(last)
            .build();
        let at = now();
        let record = RolloutRecord::TokenUsage {
            at,
            turn_id: turn_id.to_owned(),
            usage: usage.clone(),
        };
        // In memory first: a failed write loses the record, not the count.
        thread.summary.token_usage = Some(TokenTotals {
            turn_id: turn_id.to_owned(),
            usage: usage.clone(),
        });
        // Not waited for: the turn's completion, recorded later, is durable only after it.
        thread.append(&[record], at)?.detach();
        Ok(usage)
    }

    /// After a compaction of loaded thread `thread_id` (in turn `turn_id`): the context the next
    /// model call starts from is about `estimate` tokens, so `last` becomes that estimate (as
    /// input tokens) while the totals stay; recorded like a model call's usage. Returns the
    /// usage to send (`None` when the thread counted no tokens yet: nothing to correct).
    /// Without it the size of the call that compacted would trigger automatic compaction again.
    pub(crate) fn record_compacted_context(
        &self,
        thread_id: &str,
        turn_id: &str,
        estimate: i64,
    ) -> Result<Option<ThreadTokenUsage>, ThreadError> {
        let thread = self.loaded(thread_id).ok_or_else(|| {
            ThreadError::Conflict(format!("thread {thread_id} is not loaded; resume it first"))
        })?;
        let mut thread = lock(&thread);
        let Some(previous) = thread.summary.token_usage.as_ref().map(|t| &t.usage) else {
            return Ok(None);
        };
        let mut last = zero();
        last.input_tokens = estimate;
        last.total_tokens = estimate;
        let usage = ThreadTokenUsage::builder()
            .total(previous.total.clone())
            .maybe_model_context_window(previous.model_context_window)
            .last(last)
            .build();
        let at = now();
        let record = RolloutRecord::TokenUsage {
            at,
            turn_id: turn_id.to_owned(),
            usage: usage.clone(),
        };
        thread.summary.token_usage = Some(TokenTotals {
            turn_id: turn_id.to_owned(),
            usage: usage.clone(),
        });
        // Not waited for: the turn's completion, recorded later, is durable only after it.
        thread.append(&[record], at)?.detach();
        Ok(Some(usage))
    }

    /// The defaults in force for a thread with `settings` (the configuration as seen from its
    /// `cwd`, with its own `config` overrides).
    pub(crate) fn defaults_for(
        &self,
        settings: &agentwire_store::meta::ThreadSettings,
    ) -> agentwire_config::defaults::ThreadDefaults {
        self.defaults
            .defaults(Some(&settings.cwd), Some(&settings.config))
    }

    /// The token totals of loaded thread `thread_id`, if any model call counted yet.
    pub(crate) fn token_usage(&self, thread_id: &str) -> Option<TokenTotals> {
        let thread = self.loaded(thread_id)?;
        let thread = lock(&thread);
        thread.summary.token_usage.clone()
    }
}

/// Once the answer to `context`'s request (a `thread/resume`) is sent: sends the resuming
/// connection alone the totals of thread `thread_id` (`summary`'s), if it has any, as the
/// reference does so a client shows them before the next turn; then tells `subscribers` it
/// joined (see [`Subscribers::joined`]), so that an approval request the thread's turn is
/// waiting on is sent to the new follower too.
pub(crate) fn after_resume(
    context: &RequestContext,
    thread_id: &str,
    summary: &ThreadSummary,
    subscribers: Arc<Subscribers>,
) {
    let totals = summary.token_usage.clone();
    let peer = context.peer.clone();
    let thread_id = thread_id.to_owned();
    context.after_response(move || {
        if let Some(totals) = totals {
            peer.notify::<ThreadTokenUsageUpdated>(
                &ThreadTokenUsageUpdatedNotification::builder()
                    .thread_id(thread_id.clone())
                    .turn_id(totals.turn_id)
                    .token_usage(totals.usage)
                    .build(),
            );
        }
        subscribers.joined(&thread_id, &peer);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adding_saturates_each_count() {
        let mut big = zero();
        big.input_tokens = i64::MAX;
        let mut one = zero();
        one.input_tokens = 1;
        one.output_tokens = 2;
        one.total_tokens = 3;
        let sum = add(&big, &one);
        assert_eq!(sum.input_tokens, i64::MAX);
        assert_eq!(sum.output_tokens, 2);
        assert_eq!(sum.total_tokens, 3);
    }
}
