//! What the engine knows about a thread besides its turns: the metadata fixed at creation
//! ([`ThreadMeta`]), the settings it runs with ([`ThreadSettings`]), and the changing summary
//! the index and `thread/list` show ([`ThreadSummary`]).

use std::collections::BTreeMap;

use agentwire_config::defaults::{ThreadDefaults, sandbox_policy, sandbox_policy_with};
use agentwire_protocol::{
    AbsolutePathBuf, ApprovalsReviewer, AskForApproval, DynamicToolSpec, GitInfo, ModeKind,
    ReasoningEffort, ReasoningSummary, SandboxMode, SandboxPolicy, SessionSource, Thread,
    ThreadHistoryMode, ThreadItemKind, ThreadSource, ThreadStatus, Turn, UserInput,
};
use serde::{Deserialize, Serialize};

/// The version of the server software, recorded as a thread's `cliVersion`.
pub const CLI_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The settings a thread runs with. Stored in the rollout's first record and replaced by a
/// `settings` record whenever `thread/resume` or `thread/fork` overrides them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSettings {
    /// The model's name, as its provider knows it.
    pub model: String,
    /// The provider the model is called through (a key of `model_providers`).
    pub model_provider: String,
    #[serde(default)]
    /// The service tier requested from the provider (`None`: its default).
    pub service_tier: Option<String>,
    #[serde(default)]
    /// How hard the model reasons (`None`: the model's default).
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Absolute working directory.
    pub cwd: String,
    /// When the user is asked before a tool runs.
    pub approval_policy: AskForApproval,
    /// Who answers those approvals: the user, or a reviewing agent.
    pub approvals_reviewer: ApprovalsReviewer,
    /// What commands may touch.
    pub sandbox: SandboxPolicy,
    #[serde(default)]
    /// Instructions that replace the built-in base instructions.
    pub base_instructions: Option<String>,
    #[serde(default)]
    /// Instructions added as a developer message.
    pub developer_instructions: Option<String>,
    /// How detailed reasoning summaries are (`turn/start`'s `summary`, kept for later turns);
    /// `None`: the configured `model_reasoning_summary`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_summary: Option<ReasoningSummary>,
    /// Configuration overrides (dotted key paths → values) the client sent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub config: BTreeMap<String, serde_json::Value>,
    /// The tools the client runs itself (`thread/start`'s `dynamicTools`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dynamic_tools: Vec<DynamicToolSpec>,
    /// The collaboration mode the last turn selected (`None`: never selected, as `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collaboration_mode: Option<ModeKind>,
}

/// What a client may override when it starts, resumes or forks a thread, or starts a turn;
/// `None` keeps the current (or default) value.
#[derive(Debug, Clone, Default)]
pub struct SettingsOverrides {
    /// The model.
    pub model: Option<String>,
    /// The model provider.
    pub model_provider: Option<String>,
    /// The service tier.
    pub service_tier: Option<String>,
    /// The working directory (made absolute).
    pub cwd: Option<String>,
    /// When the user is asked before a tool runs.
    pub approval_policy: Option<AskForApproval>,
    /// Who answers approvals.
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// The sandbox mode, turned into a policy for the working directory.
    pub sandbox: Option<SandboxMode>,
    /// A full sandbox policy (`turn/start`); applied after `sandbox`.
    pub sandbox_policy: Option<SandboxPolicy>,
    /// How hard the model reasons.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// How detailed reasoning summaries are.
    pub reasoning_summary: Option<ReasoningSummary>,
    /// Configuration overrides (dotted key paths → values).
    pub config: Option<BTreeMap<String, serde_json::Value>>,
    /// Instructions that replace the built-in base instructions.
    pub base_instructions: Option<String>,
    /// Instructions added as a developer message.
    pub developer_instructions: Option<String>,
    /// Clears the reasoning effort (a collaboration mode's `reasoning_effort: null`); a
    /// `reasoning_effort` override still wins.
    pub clear_reasoning_effort: bool,
    /// Clears the developer instructions (a collaboration mode's `developer_instructions`
    /// chose none); a `developer_instructions` override still wins.
    pub clear_developer_instructions: bool,
    /// The client's own tools (only `thread/start` sets them).
    pub dynamic_tools: Option<Vec<DynamicToolSpec>>,
    /// The collaboration mode a turn selected.
    pub collaboration_mode: Option<ModeKind>,
    /// Clears the service tier (`thread/settings/update`'s `serviceTier: null`); a
    /// `service_tier` override still wins.
    pub clear_service_tier: bool,
}

impl From<agentwire_protocol::ThreadSettingsOverrides> for SettingsOverrides {
    /// The overrides `thread/start`, `thread/resume` and `thread/fork` carry.
    fn from(settings: agentwire_protocol::ThreadSettingsOverrides) -> Self {
        Self {
            model: settings.model,
            model_provider: settings.model_provider,
            service_tier: settings.service_tier,
            cwd: settings.cwd,
            approval_policy: settings.approval_policy,
            approvals_reviewer: settings.approvals_reviewer,
            sandbox: settings.sandbox,
            config: settings.config,
            base_instructions: settings.base_instructions,
            developer_instructions: settings.developer_instructions,
            ..Self::default()
        }
    }
}

impl ThreadSettings {
    /// The settings of a new thread: `overrides` over `defaults`.
    pub fn new(defaults: &ThreadDefaults, mut overrides: SettingsOverrides) -> Self {
        // A sandbox mode picked by the client still gets the configured workspace details.
        let mode = overrides.sandbox.take().unwrap_or(defaults.sandbox);
        let mut settings = Self {
            model: defaults.model.clone(),
            model_provider: defaults.model_provider.clone(),
            service_tier: None,
            reasoning_effort: defaults.reasoning_effort.clone(),
            cwd: absolute_cwd(None),
            approval_policy: defaults.approval_policy.clone(),
            approvals_reviewer: defaults.approvals_reviewer,
            sandbox: sandbox_policy_with(mode, &defaults.sandbox_workspace_write),
            base_instructions: defaults.base_instructions.clone(),
            developer_instructions: defaults.developer_instructions.clone(),
            reasoning_summary: None,
            config: BTreeMap::new(),
            dynamic_tools: Vec::new(),
            collaboration_mode: None,
        };
        settings.apply(overrides);
        settings
    }

    /// Applies `overrides`; returns whether anything changed.
    pub fn apply(&mut self, overrides: SettingsOverrides) -> bool {
        let before = self.clone();
        if let Some(model) = overrides.model {
            self.model = model;
        }
        if let Some(provider) = overrides.model_provider {
            self.model_provider = provider;
        }
        if overrides.clear_service_tier {
            self.service_tier = None;
        }
        if let Some(tier) = overrides.service_tier {
            self.service_tier = Some(tier);
        }
        if overrides.cwd.is_some() {
            self.cwd = absolute_cwd(overrides.cwd.as_deref());
        }
        if let Some(policy) = overrides.approval_policy {
            self.approval_policy = policy;
        }
        if let Some(reviewer) = overrides.approvals_reviewer {
            self.approvals_reviewer = reviewer;
        }
        if let Some(mode) = overrides.sandbox {
            self.sandbox = sandbox_policy(mode);
        }
        if let Some(policy) = overrides.sandbox_policy {
            self.sandbox = policy;
        }
        if overrides.clear_reasoning_effort {
            self.reasoning_effort = None;
        }
        if let Some(effort) = overrides.reasoning_effort {
            self.reasoning_effort = Some(effort);
        }
        if let Some(summary) = overrides.reasoning_summary {
            self.reasoning_summary = Some(summary);
        }
        if let Some(config) = overrides.config {
            self.config = config;
        }
        if let Some(text) = overrides.base_instructions {
            self.base_instructions = Some(text);
        }
        if overrides.clear_developer_instructions {
            self.developer_instructions = None;
        }
        if let Some(text) = overrides.developer_instructions {
            self.developer_instructions = Some(text);
        }
        if let Some(tools) = overrides.dynamic_tools {
            self.dynamic_tools = tools;
        }
        if let Some(mode) = overrides.collaboration_mode {
            self.collaboration_mode = Some(mode);
        }
        // The fixture's model means nothing to an HTTP provider (a thread moved to one, or a
        // setting recorded before): its documented default, else none (the call asks the
        // server; see `provider::builtin`).
        if self.model_provider != agentwire_config::FIXTURE
            && !agentwire_providers::builtin::is_named(&self.model)
        {
            self.model = agentwire_providers::builtin::default_model(&self.model_provider, None)
                .unwrap_or_default();
        }
        *self != before
    }
}

/// `cwd` made absolute against the server's working directory; the server's working directory
/// when `cwd` is absent. Not resolved through symlinks: the directory need not exist.
fn absolute_cwd(cwd: Option<&str>) -> String {
    let base = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("/"));
    let path = match cwd {
        Some(cwd) => base.join(cwd),
        None => base,
    };
    std::path::absolute(&path)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Checks a working directory a client gave in `field` (`cwd` of `thread/start`, of
/// `turn/start`): it must be an absolute path without a NUL byte and, with `must_exist`, an
/// existing directory. The error names the field, the value and what is wrong with it (a
/// thread whose commands would run, and whose project docs would be looked for, somewhere
/// else than the client meant: issue #32).
pub fn check_cwd(field: &str, cwd: &str, must_exist: bool) -> Result<(), String> {
    if cwd.contains('\0') {
        return Err(format!(
            "{field}: must not contain a NUL byte: {}",
            cwd.escape_debug()
        ));
    }
    if !std::path::Path::new(cwd).is_absolute() {
        return Err(format!(
            "{field}: must be an absolute path, got `{}`",
            cwd.escape_debug()
        ));
    }
    if !must_exist {
        return Ok(());
    }
    match std::fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(format!("{field}: {cwd} is not a directory")),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{field}: {cwd} does not exist"))
        }
        Err(error) => Err(format!("{field}: {cwd} cannot be used: {error}")),
    }
}

/// What is fixed when a thread is created: the first record of its rollout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadMeta {
    /// The thread's id.
    pub id: String,
    /// The session it belongs to (its own id for a thread created here).
    pub session_id: String,
    /// Unix seconds.
    pub created_at: i64,
    /// The version of the server that created it.
    pub cli_version: String,
    /// Where it was started from (the client, `exec`, a sub-agent …).
    pub source: SessionSource,
    #[serde(default)]
    /// The kind of thread the client says this is (`thread/start`'s `threadSource`).
    pub thread_source: Option<ThreadSource>,
    #[serde(default)]
    /// The program that created it, when known (an imported Codex session's `originator`).
    pub originator: Option<String>,
    #[serde(default)]
    /// The calling service's name (`thread/start`'s `serviceName`), for attribution.
    pub service_name: Option<String>,
    #[serde(default)]
    /// The thread it was forked from.
    pub forked_from_id: Option<String>,
    #[serde(default)]
    /// The thread that spawned it, for a sub-agent's thread.
    pub parent_thread_id: Option<String>,
    #[serde(default)]
    /// A sub-agent's nickname.
    pub agent_nickname: Option<String>,
    #[serde(default)]
    /// A sub-agent's role.
    pub agent_role: Option<String>,
    #[serde(default)]
    /// The Git state of the working directory (replaced by `gitInfo` records).
    pub git_info: Option<GitInfo>,
    #[serde(default)]
    /// How its history is stored: read back whole (`legacy`) or in pages (`paginated`); fixed
    /// at creation.
    pub history_mode: ThreadHistoryMode,
    /// The settings at creation; later `settings` records replace them.
    pub settings: ThreadSettings,
}

/// A thread's current state apart from its turns and runtime status: what the index holds and
/// `thread/list` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadSummary {
    /// Creation metadata, with the current settings.
    pub meta: ThreadMeta,
    /// The name a client gave it (`thread/name/set`).
    pub name: Option<String>,
    /// The first user message's text; `""` before any.
    pub preview: String,
    /// Unix seconds of the last change.
    pub updated_at: i64,
    /// Whether it lives only in memory (never written).
    pub ephemeral: bool,
    /// The token totals, from the rollout's last `tokenUsage` record (`None` before the first
    /// model call; the index does not hold them).
    pub token_usage: Option<TokenTotals>,
    /// The thread's goal, from the rollout's last `goal` record (the index does not hold it).
    pub goal: Option<GoalRecord>,
    /// What the user has read, from the rollout's last `readMark` record: `None` when nothing
    /// was ever marked, `Some(None)` when nothing is read, `Some(Some(turn))` when everything
    /// through `turn` is (the index does not hold it).
    pub read_mark: Option<Option<String>>,
    /// The thread's attachments, queued input and section, from its rollout's records of
    /// them (see [`crate::organised`]; the index does not hold them).
    pub organised: crate::organised::Organised,
    /// The thread's memory mode, from the rollout's last `memoryMode` record (`None`: never
    /// set, which means enabled; the index does not hold it).
    pub memory_mode: Option<agentwire_protocol::ThreadMemoryMode>,
    /// The item batches clients injected (`thread/inject_items`), from the rollout's
    /// `injected` records, oldest first (the index does not hold them).
    pub injected: std::sync::Arc<Vec<InjectedItems>>,
    /// The environment context blocks turns told the model, `(turn id, block)` oldest first,
    /// from the rollout's `environmentContext` records (the index does not hold them).
    pub environment_blocks: std::sync::Arc<Vec<(String, String)>>,
}

/// Items a client injected into what the model sees of a thread (`thread/inject_items`).
#[derive(Debug, Clone, PartialEq)]
pub struct InjectedItems {
    /// The turn they follow; `None` when the thread had no turn yet.
    pub after_turn_id: Option<String>,
    /// The items, in the shape of the OpenAI Responses API, as the client sent them.
    pub items: Vec<serde_json::Value>,
}

impl InjectedItems {
    /// The batches of `injected` whose turn is still among `turns` (or that precede every
    /// turn): a revert drops the items that followed the turns it dropped.
    pub fn applying(injected: &[InjectedItems], turns: &[Turn]) -> Vec<InjectedItems> {
        injected
            .iter()
            .filter(|batch| match &batch.after_turn_id {
                None => true,
                Some(turn) => turns.iter().any(|t| &t.id == turn),
            })
            .cloned()
            .collect()
    }
}

/// A thread's goal as its rollout records it (`thread/goal/*`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalRecord {
    /// What the agent is to achieve.
    pub objective: String,
    /// Where the goal stands.
    pub status: agentwire_protocol::ThreadGoalStatus,
    /// Most tokens the goal may use.
    #[serde(default)]
    pub token_budget: Option<i64>,
    /// When it was set (Unix seconds).
    pub created_at: i64,
    /// When it last changed (Unix seconds).
    pub updated_at: i64,
    /// The thread's running token total when it was set: what it used is the total since.
    pub tokens_at_start: i64,
}

/// A thread's token totals and the turn whose model call last changed them.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenTotals {
    /// The turn of the model call that last added to the totals.
    pub turn_id: String,
    /// Running total, last call, context window.
    pub usage: agentwire_protocol::ThreadTokenUsage,
}

impl ThreadSummary {
    /// The summary of a thread just created from `meta`.
    pub fn new(meta: ThreadMeta, ephemeral: bool) -> Self {
        Self {
            updated_at: meta.created_at,
            meta,
            name: None,
            preview: String::new(),
            ephemeral,
            token_usage: None,
            goal: None,
            read_mark: None,
            organised: Default::default(),
            memory_mode: None,
            injected: Default::default(),
            environment_blocks: Default::default(),
        }
    }

    /// Takes the preview from `item` if there is none yet and the item is a user message.
    pub fn note_item(&mut self, kind: &ThreadItemKind) {
        if self.preview.is_empty()
            && let Some(text) = user_message_text(kind)
        {
            self.preview = text;
        }
    }

    /// Takes the preview from the first user message of `turns` if there is none yet.
    pub fn note_turns(&mut self, turns: &[Turn]) {
        for item in turns.iter().flat_map(|t| &t.items) {
            if !self.preview.is_empty() {
                return;
            }
            self.note_item(&item.kind);
        }
    }

    /// The wire form, with `status`, the rollout's absolute `path` and `turns`.
    pub fn to_thread(
        &self,
        status: ThreadStatus,
        path: Option<String>,
        turns: Vec<Turn>,
    ) -> Thread {
        let meta = &self.meta;
        Thread::builder()
            .id(meta.id.clone())
            .session_id(meta.session_id.clone())
            .maybe_name(self.name.clone())
            .preview(self.preview.clone())
            .status(status)
            .source(meta.source.clone())
            .maybe_thread_source(meta.thread_source.clone())
            .maybe_originator(meta.originator.clone())
            .cwd(AbsolutePathBuf(meta.settings.cwd.clone()))
            .cli_version(meta.cli_version.clone())
            .model_provider(meta.settings.model_provider.clone())
            .model(meta.settings.model.clone())
            .maybe_reasoning_effort(meta.settings.reasoning_effort.clone())
            .ephemeral(self.ephemeral)
            .history_mode(meta.history_mode)
            .created_at(meta.created_at)
            .updated_at(self.updated_at)
            .recency_at(self.updated_at)
            .maybe_forked_from_id(meta.forked_from_id.clone())
            .maybe_parent_thread_id(meta.parent_thread_id.clone())
            .maybe_agent_nickname(meta.agent_nickname.clone())
            .maybe_agent_role(meta.agent_role.clone())
            .maybe_git_info(meta.git_info.clone())
            .maybe_path(path)
            .turns(turns)
            .build()
    }
}

/// The text of a user message item (its text parts, joined by newlines); `None` for other
/// items and for messages without text.
fn user_message_text(kind: &ThreadItemKind) -> Option<String> {
    let ThreadItemKind::UserMessage { content, .. } = kind else {
        return None;
    };
    let text: Vec<&str> = content
        .iter()
        .filter_map(|part| match part {
            UserInput::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let text = text.join("\n");
    (!text.trim().is_empty()).then_some(text)
}

/// Now, in Unix seconds.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A fresh thread, turn or item id: a UUIDv7 string.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_goes_with_the_turn_it_follows() {
        let turn = |id: &str| {
            Turn::builder()
                .id(id)
                .status(agentwire_protocol::TurnStatus::Completed)
                .items(Vec::new())
                .items_view(agentwire_protocol::TurnItemsView::Full)
                .build()
        };
        let batch = |after: Option<&str>| InjectedItems {
            after_turn_id: after.map(str::to_owned),
            items: vec![serde_json::json!({"type": "reasoning"})],
        };
        let kept = InjectedItems::applying(
            &[batch(None), batch(Some("a")), batch(Some("gone"))],
            &[turn("a")],
        );
        let afters: Vec<_> = kept.iter().map(|b| b.after_turn_id.as_deref()).collect();
        assert_eq!(afters, [None, Some("a")]);
    }
}
