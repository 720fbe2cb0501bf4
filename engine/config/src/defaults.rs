//! The settings new threads get when neither the client nor the configuration says: the
//! built-in [`ThreadDefaults`], where the configured ones come from ([`DefaultsSource`]), and
//! the full sandbox policy of a coarse sandbox mode.

use std::collections::BTreeMap;

use agentwire_protocol::{
    AbsolutePathBuf, ApprovalsReviewer, AskForApproval, ReasoningEffort, SandboxMode,
    SandboxPolicy, SandboxWorkspaceWrite,
};

/// Most bytes of project docs read when `project_doc_max_bytes` is not set (as Codex).
pub const DEFAULT_PROJECT_DOC_MAX_BYTES: u64 = 32 * 1024;

/// The settings a new thread gets when the client leaves them out. The configuration layer
/// fills these from `config.toml`; [`Default`] gives the built-in values.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadDefaults {
    /// Model slug.
    pub model: String,
    /// Model provider id.
    pub model_provider: String,
    /// Approval policy.
    pub approval_policy: AskForApproval,
    /// Who answers approval requests.
    pub approvals_reviewer: ApprovalsReviewer,
    /// Sandbox mode.
    pub sandbox: SandboxMode,
    /// What the `workspace-write` sandbox allows besides the working directory.
    pub sandbox_workspace_write: SandboxWorkspaceWrite,
    /// Reasoning effort; `None` leaves it to the model.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Base instructions replacing the built-in ones.
    pub base_instructions: Option<String>,
    /// Developer instructions.
    pub developer_instructions: Option<String>,
    /// Most bytes of `AGENTS.md` project docs read (`project_doc_max_bytes`).
    pub project_doc_max_bytes: u64,
    /// Context size in tokens at which the thread is compacted automatically
    /// (`model_auto_compact_token_limit`); `None`: 90% of the model's context window, when
    /// known.
    pub auto_compact_token_limit: Option<i64>,
    /// Tokens of context the model takes (`model_context_window`), over what the provider and
    /// the built-in model families say; `None`: theirs.
    pub model_context_window: Option<i64>,
    /// About how many tokens of a tool's output the model is shown
    /// (`tool_output_token_limit`); `None`: the model family's truncation policy.
    pub tool_output_token_limit: Option<u64>,
}

/// Where a new thread's defaults come from: fixed values, or the configuration as seen from
/// the thread's working directory with the thread's own `config` overrides (dotted key paths).
pub trait DefaultsSource: Send + Sync + std::fmt::Debug {
    /// The defaults for a thread in `cwd` (the server's working directory when `None`).
    fn defaults(
        &self,
        cwd: Option<&str>,
        overrides: Option<&BTreeMap<String, serde_json::Value>>,
    ) -> ThreadDefaults;
}

impl DefaultsSource for ThreadDefaults {
    fn defaults(
        &self,
        _cwd: Option<&str>,
        _overrides: Option<&BTreeMap<String, serde_json::Value>>,
    ) -> ThreadDefaults {
        self.clone()
    }
}

impl Default for ThreadDefaults {
    /// The built-in defaults: the fixture provider (the only one this build has) and its model.
    fn default() -> Self {
        Self {
            model: "fixture".to_owned(),
            model_provider: "fixture".to_owned(),
            approval_policy: AskForApproval::OnRequest,
            approvals_reviewer: ApprovalsReviewer::User,
            sandbox: SandboxMode::ReadOnly,
            sandbox_workspace_write: SandboxWorkspaceWrite::builder().build(),
            reasoning_effort: None,
            base_instructions: None,
            developer_instructions: None,
            project_doc_max_bytes: DEFAULT_PROJECT_DOC_MAX_BYTES,
            auto_compact_token_limit: None,
            model_context_window: None,
            tool_output_token_limit: None,
        }
    }
}

/// The full policy for a coarse sandbox mode, with no extra writable roots.
pub fn sandbox_policy(mode: SandboxMode) -> SandboxPolicy {
    sandbox_policy_with(mode, &ThreadDefaults::default().sandbox_workspace_write)
}

/// The full policy for a coarse sandbox mode; `workspace` details `workspace-write`.
pub fn sandbox_policy_with(mode: SandboxMode, workspace: &SandboxWorkspaceWrite) -> SandboxPolicy {
    match mode {
        SandboxMode::ReadOnly => SandboxPolicy::read_only().build(),
        SandboxMode::WorkspaceWrite => SandboxPolicy::workspace_write()
            .writable_roots(
                workspace
                    .writable_roots
                    .iter()
                    .map(|root| AbsolutePathBuf(root.clone()))
                    .collect(),
            )
            .network_access(workspace.network_access)
            .exclude_tmpdir_env_var(workspace.exclude_tmpdir_env_var)
            .exclude_slash_tmp(workspace.exclude_slash_tmp)
            .build(),
        SandboxMode::DangerFullAccess => SandboxPolicy::DangerFullAccess,
        _ => SandboxPolicy::read_only().build(),
    }
}
