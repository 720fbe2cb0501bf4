//! What a model call tells the turn besides its output ([`ProviderNotice`]):
//!
//! - The provider's rate-limit headers become `account/rateLimits/updated`, sent to every
//!   connection (the limits belong to the provider account, not to the thread), before the
//!   call's output.
//! - The model the server says answered is compared with the one the call asked for; when they
//!   differ, the thread's followers get `model/rerouted` (reason `providerSubstitutedModel`),
//!   once per turn. Names that only add a dated snapshot or a tag to the asked-for one
//!   (`gpt-4o` answered as `gpt-4o-2024-08-06`, `llama3` as `llama3:latest`), differ in case,
//!   or agree after an organisation prefix (`org/model`) count as the same model. A call that named no model (the
//!   provider picked one) is never reported.

use agentwire_protocol::methods::{AccountRateLimitsUpdated, ModelRerouted};
use agentwire_protocol::{
    AccountRateLimitsUpdatedNotification, ModelRerouteReason, ModelReroutedNotification,
};
use agentwire_providers::ProviderNotice;
use agentwire_providers::builtin::is_named;

use super::TurnRun;

impl TurnRun {
    /// Reports `notice` of a call that asked for model `asked`.
    pub(super) fn provider_notice(&mut self, notice: ProviderNotice, asked: &str) {
        match notice {
            ProviderNotice::RateLimits(rate_limits) => {
                self.peer.hub().broadcast::<AccountRateLimitsUpdated>(
                    &AccountRateLimitsUpdatedNotification::builder()
                        .rate_limits(*rate_limits)
                        .build(),
                );
            }
            ProviderNotice::ServedModel(served) => {
                if self.rerouted || !is_named(asked) || same_model(asked, &served) {
                    return;
                }
                self.rerouted = true;
                tracing::info!(
                    thread = %self.thread_id,
                    asked,
                    served = %served,
                    "the model server answered with another model"
                );
                self.notify::<ModelRerouted>(
                    &ModelReroutedNotification::builder()
                        .thread_id(self.thread_id.clone())
                        .turn_id(self.turn.id.clone())
                        .from_model(asked)
                        .to_model(served)
                        .reason(ModelRerouteReason::ProviderSubstitutedModel)
                        .build(),
                );
            }
        }
    }
}

/// Whether the server's name `served` stands for the model `asked` (see the module docs).
fn same_model(asked: &str, served: &str) -> bool {
    let (asked, served) = (asked.trim(), served.trim());
    if asked.eq_ignore_ascii_case(served) {
        return true;
    }
    // `long` is `short` with a tag (`:latest`, `@v2`) or a dated snapshot (`-2024-08-06`,
    // `-0613`) added.
    let extends = |long: &str, short: &str| {
        if long.len() <= short.len()
            || !long.is_char_boundary(short.len())
            || !long[..short.len()].eq_ignore_ascii_case(short)
        {
            return false;
        }
        let rest = &long[short.len()..];
        rest.starts_with([':', '@'])
            || rest
                .strip_prefix('-')
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    };
    if extends(served, asked) {
        return true;
    }
    match (asked.rsplit_once('/'), served.rsplit_once('/')) {
        (None, None) => false,
        (a, s) => {
            let asked = a.map_or(asked, |(_, tail)| tail);
            let served = s.map_or(served, |(_, tail)| tail);
            !asked.is_empty()
                && !served.is_empty()
                && (asked.eq_ignore_ascii_case(served) || extends(served, asked))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::same_model;

    #[test]
    fn versions_tags_case_and_prefixes_are_the_same_model() {
        assert!(same_model("gpt-4o", "gpt-4o"));
        assert!(same_model("gpt-4o", "gpt-4o-2024-08-06"));
        assert!(same_model("gpt-4", "gpt-4-0613"));
        assert!(same_model("llama3", "llama3:latest"));
        assert!(same_model("Qwen2.5", "qwen2.5"));
        assert!(same_model("meta-llama/Llama-3.1-8B", "Llama-3.1-8B"));
        assert!(same_model("Llama-3.1-8B", "meta-llama/Llama-3.1-8B"));
        assert!(!same_model("Llama-3.1-8B", "Llama-3.1-8B-Instruct"));
    }

    #[test]
    fn other_models_are_not() {
        assert!(!same_model("gpt-4o", "gpt-4o-mini"));
        assert!(!same_model("m", "mock-model"));
        assert!(!same_model("gpt-5", "gpt-4o"));
        assert!(!same_model("a/x", "b/y"));
        assert!(!same_model("é", "éa"));
        assert!(!same_model("llama3", "llama3x"));
    }
}
