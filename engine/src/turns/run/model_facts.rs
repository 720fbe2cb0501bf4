//! What a turn takes from the model's metadata (see `catalog::families`): the context window
//! reported with token usage (and so used by automatic compaction), and the one
//! `configWarning` about a model no family knows.

use agentwire_protocol::ConfigWarningNotification;
use agentwire_protocol::methods::ConfigWarning;

use super::TurnRun;
use crate::catalog::families;

impl TurnRun {
    /// The context window of the turn's model: `model_context_window` configured for the
    /// thread, else `reported` by the provider (its table's), else the model family's.
    pub(super) fn context_window(&self, reported: Option<i64>) -> Option<i64> {
        let configured = self
            .turns
            .threads
            .defaults_for(&self.settings)
            .model_context_window;
        families::context_window(&self.settings.model, configured, reported)
    }

    /// How many bytes of a tool's output the model is shown: `tool_output_token_limit`
    /// configured for the thread, else the truncation policy of the model's family.
    pub(super) fn tool_output_bytes(&self) -> usize {
        let configured = self
            .turns
            .threads
            .defaults_for(&self.settings)
            .tool_output_token_limit;
        families::tool_output_bytes(&self.settings.model, configured)
    }

    /// Sends the thread's followers a `configWarning` when the turn's model is one no family
    /// knows and no context window is configured for it, the first time this server meets
    /// that model of that provider.
    pub(super) fn warn_if_unknown_model(&self) {
        let provider = &self.settings.model_provider;
        let configured = self
            .turns
            .threads
            .defaults_for(&self.settings)
            .model_context_window
            .is_some()
            || self
                .turns
                .config
                .effective(Some(std::path::Path::new(&self.settings.cwd)))
                .file
                .model_providers
                .get(provider)
                .is_some_and(|table| table.model_context_window.is_some());
        if let Some(summary) =
            families::unknown_model_warning(provider, &self.settings.model, configured)
        {
            tracing::warn!(provider = %provider, model = %self.settings.model, "unknown model");
            self.notify::<ConfigWarning>(
                &ConfigWarningNotification::builder()
                    .summary(summary)
                    .build(),
            );
        }
    }
}
