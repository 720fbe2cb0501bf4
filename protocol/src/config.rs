//! Configuration: reading the effective, layered configuration and editing the user's
//! `config.toml`.
//!
//! Used by `config/read`, `config/value/write` and `config/batchWrite`, and by the
//! `configWarning` notification. Keys of [`Config`] keep their `config.toml` spelling
//! (snake_case) on the wire; the request and response envelopes are camelCase.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// A yes/no permission entry in the browser-use and computer-use settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum AllowDenyRequirement {
    /// The action or target is permitted.
    Allow,
    /// The action or target is refused.
    Deny,
}

/// The `[analytics]` table of the configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct AnalyticsConfig {
    /// Whether usage analytics are sent; `null` when the key is not set (the server default
    /// applies).
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Any other keys of the table, passed through unchanged.
    #[serde(flatten)]
    #[builder(default)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Which tokens count towards `model_auto_compact_token_limit` when deciding to compact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AutoCompactTokenLimitScope {
    /// Everything in the model's context window is counted.
    Total,
    /// Only what was added after the prefix carried over from the previous window is counted.
    BodyAfterPrefix,
}

/// The `[browser_use]` table: what the agent's browser tool may do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct BrowserUseConfig {
    /// Whether the browser tool may read the browser's history; `null` when unset.
    #[serde(rename = "allow_history_access", default)]
    pub allow_history_access: Option<bool>,
    /// Policy for origins that have no entry in `origins`; `null` when unset.
    #[serde(rename = "default_origin_policy", default)]
    pub default_origin_policy: Option<BrowserUseOriginPolicyConfig>,
    /// Per-origin policies, keyed by origin (e.g. `https://example.com`); `null` when unset.
    #[serde(default)]
    pub origins: Option<BTreeMap<String, BrowserUseOriginPolicyConfig>>,
}

/// What the browser tool may do on one origin; each `null` entry falls back to the default
/// policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct BrowserUseOriginPolicyConfig {
    /// Whether pages of the origin may be opened at all.
    #[serde(default)]
    pub access: Option<AllowDenyRequirement>,
    /// Whether files may be downloaded from the origin.
    #[serde(default)]
    pub downloads: Option<AllowDenyRequirement>,
    /// Whether the tool gets unrestricted Chrome DevTools Protocol access on the origin.
    #[serde(rename = "full_cdp_access", default)]
    pub full_cdp_access: Option<AllowDenyRequirement>,
    /// Whether files may be uploaded to the origin.
    #[serde(default)]
    pub uploads: Option<AllowDenyRequirement>,
}

/// The `[computer_use]` table: which desktop applications the agent may operate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ComputerUseConfig {
    /// Decision for applications not listed per platform; `null` when unset.
    #[serde(rename = "default_app_access", default)]
    pub default_app_access: Option<AllowDenyRequirement>,
    /// Per-application rules on macOS; `null` when unset.
    #[serde(default)]
    pub macos: Option<ComputerUseMacosConfig>,
    /// Per-application rules on Windows; `null` when unset.
    #[serde(default)]
    pub windows: Option<ComputerUseWindowsConfig>,
}

/// Computer-use rules for macOS applications.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ComputerUseMacosConfig {
    /// Decision per application bundle id (e.g. `com.apple.Safari`); `null` when unset.
    #[serde(rename = "bundle_ids", default)]
    pub bundle_ids: Option<BTreeMap<String, AllowDenyRequirement>>,
}

/// Computer-use rules for Windows applications.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ComputerUseWindowsConfig {
    /// Decision per Application User Model ID (packaged apps); `null` when unset.
    #[serde(default)]
    pub aumids: Option<BTreeMap<String, AllowDenyRequirement>>,
    /// Rules matching classic executables by their version-resource names; `null` when unset.
    #[serde(default)]
    pub exes: Option<Vec<ComputerUseWindowsExeConfig>>,
}

/// One computer-use rule for a Windows executable, matched by its version-resource metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ComputerUseWindowsExeConfig {
    /// Product name the executable must report.
    #[serde(rename = "product_name")]
    pub product_name: String,
    /// Publisher (company) name the executable must report.
    #[serde(rename = "publisher_name")]
    pub publisher_name: String,
    /// File name of the executable (e.g. `notepad.exe`); `null` matches any file name.
    #[serde(rename = "binary_name", default)]
    pub binary_name: Option<String>,
    /// Whether a matching executable may be operated.
    pub access: AllowDenyRequirement,
}

/// The effective configuration, after every layer has been merged.
///
/// Keys are spelled as in `config.toml`. Each known key is present and `null` when no layer sets
/// it; keys this crate does not model are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct Config {
    /// Default model slug for new threads (e.g. `gpt-6.2-sol`).
    #[serde(default)]
    pub model: Option<String>,
    /// Id of the model provider, a key of `model_providers` (e.g. `openai`).
    #[serde(rename = "model_provider", default)]
    pub model_provider: Option<String>,
    /// Model slug used for code reviews instead of `model`.
    #[serde(rename = "review_model", default)]
    pub review_model: Option<String>,
    /// Size of the model's context window in tokens, overriding what the model catalog says.
    #[serde(rename = "model_context_window", default)]
    pub model_context_window: Option<i64>,
    /// Token count at which the conversation history is compacted automatically.
    #[serde(rename = "model_auto_compact_token_limit", default)]
    pub model_auto_compact_token_limit: Option<i64>,
    /// Which tokens are compared with `model_auto_compact_token_limit`.
    #[serde(rename = "model_auto_compact_token_limit_scope", default)]
    pub model_auto_compact_token_limit_scope: Option<AutoCompactTokenLimitScope>,
    /// Default reasoning effort (one of the model's `supportedReasoningEfforts`).
    #[serde(rename = "model_reasoning_effort", default)]
    pub model_reasoning_effort: Option<ReasoningEffort>,
    /// How detailed the reasoning summaries streamed to the client are.
    #[serde(rename = "model_reasoning_summary", default)]
    pub model_reasoning_summary: Option<ReasoningSummary>,
    /// How long and detailed the model's answers are.
    #[serde(rename = "model_verbosity", default)]
    pub model_verbosity: Option<Verbosity>,
    /// Default service tier id (a `ModelServiceTier::id`, e.g. `priority`).
    #[serde(rename = "service_tier", default)]
    pub service_tier: Option<String>,
    /// Default policy for when the agent must ask before acting.
    #[serde(rename = "approval_policy", default)]
    pub approval_policy: Option<AskForApproval>,
    /// Default reviewer of approval requests (the user or an automatic reviewer).
    #[serde(rename = "approvals_reviewer", default)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// Default sandbox for commands the agent runs.
    #[serde(rename = "sandbox_mode", default)]
    pub sandbox_mode: Option<SandboxMode>,
    /// Settings that apply when `sandbox_mode` is `workspace-write`.
    #[serde(rename = "sandbox_workspace_write", default)]
    pub sandbox_workspace_write: Option<SandboxWorkspaceWrite>,
    /// Base instructions that replace the built-in ones.
    #[serde(default)]
    pub instructions: Option<String>,
    /// Extra developer-role instructions added to every thread.
    #[serde(rename = "developer_instructions", default)]
    pub developer_instructions: Option<String>,
    /// Prompt used to summarise the history when it is compacted.
    #[serde(rename = "compact_prompt", default)]
    pub compact_prompt: Option<String>,
    /// Whether, and from where, the web search tool fetches results.
    #[serde(rename = "web_search", default)]
    pub web_search: Option<WebSearchMode>,
    /// Search backend to prefer; a provider chosen by the model catalog wins over this.
    #[serde(rename = "client_search_provider", default)]
    pub client_search_provider: Option<WebSearchProvider>,
    /// The `[tools]` table: per-tool settings.
    #[serde(default)]
    pub tools: Option<ToolsV2>,
    /// The `[browser_use]` table: browser tool permissions.
    #[serde(rename = "browser_use", default)]
    pub browser_use: Option<BrowserUseConfig>,
    /// The `[computer_use]` table: desktop application permissions.
    #[serde(rename = "computer_use", default)]
    pub computer_use: Option<ComputerUseConfig>,
    /// Sign-in method the user is restricted to.
    #[serde(rename = "forced_login_method", default)]
    pub forced_login_method: Option<ForcedLoginMethod>,
    /// ChatGPT workspace(s) the user may sign in to.
    #[serde(rename = "forced_chatgpt_workspace_id", default)]
    pub forced_chatgpt_workspace_id: Option<ForcedChatgptWorkspaceIds>,
    /// The `[analytics]` table.
    #[serde(default)]
    pub analytics: Option<AnalyticsConfig>,
    /// The `[desktop]` table, owned by the desktop app and passed through unchanged.
    #[serde(default)]
    pub desktop: Option<BTreeMap<String, serde_json::Value>>,
    /// Every other key of the effective configuration (`features`, `mcp_servers`, `profiles` …),
    /// passed through unchanged.
    #[serde(flatten)]
    #[builder(default)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Params of `config/batchWrite`: several edits applied to the user's `config.toml` in one
/// atomic write.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ConfigBatchWriteParams {
    /// The edits, applied in order; if one fails, nothing is written.
    #[builder(default)]
    pub edits: Vec<ConfigEdit>,
    /// Absolute path of the file to edit; only the user's `config.toml` is accepted, which is
    /// also what absent means.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub file_path: Option<String>,
    /// The `version` the client last read for the file; the write is refused if the file has
    /// changed since. Absent skips the check.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub expected_version: Option<String>,
    /// `true` pushes the new settings into threads that are already loaded (the model, reasoning
    /// effort and service tier they started with stay); absent means `false`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub reload_user_config: Option<bool>,
}

/// One edit of a configuration file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ConfigEdit {
    /// Dotted path of the key to change, e.g. `model` or `tools.web_search.context_size`.
    pub key_path: String,
    /// The new value as JSON (converted to TOML); `null` removes the key.
    pub value: serde_json::Value,
    /// How `value` is combined with what is already at `key_path`.
    pub merge_strategy: MergeStrategy,
}

/// One configuration layer as read from its source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ConfigLayer {
    /// Where the layer comes from.
    pub name: ConfigLayerSource,
    /// Opaque token identifying the layer's current contents; pass it back as
    /// `expectedVersion` when writing.
    pub version: String,
    /// The layer's own settings as a JSON object, before merging.
    pub config: serde_json::Value,
    /// Why the layer is ignored (e.g. its project is not trusted); `null` when it is in effect.
    #[serde(default)]
    pub disabled_reason: Option<String>,
}

/// Identifies a configuration layer without its contents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ConfigLayerMetadata {
    /// Where the layer comes from.
    pub name: ConfigLayerSource,
    /// Opaque token identifying the layer's contents at the time of the answer.
    pub version: String,
}

/// Where a configuration layer comes from; `type` tells the kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ConfigLayerSource {
    /// Defaults shipped inside the installed package; lowest precedence.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    PackagedDefaults {
        /// Absolute path of the shipped defaults file.
        file: AbsolutePathBuf,
    },
    /// Settings pushed by device management (MDM managed preferences, macOS).
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Mdm {
        /// Preferences domain the settings were read from.
        domain: String,
        /// Key within the domain that holds the settings.
        key: String,
    },
    /// The machine-wide configuration file maintained by administrators.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    System {
        /// Absolute path of that file; it may not exist.
        file: AbsolutePathBuf,
    },
    /// A layer delivered to the organisation from the cloud.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    EnterpriseManaged {
        /// Stable id of the delivered layer.
        id: String,
        /// Name an administrator gave the layer; shown so users know whom to ask.
        name: String,
    },
    /// The user's own `config.toml` under the Codex home directory: the only writable layer.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    User {
        /// Absolute path of the user's `config.toml`; it may not exist yet.
        file: AbsolutePathBuf,
        /// Name of the profile laid over the base user file, when this layer is one; `null` for
        /// the base file itself.
        #[serde(default)]
        profile: Option<String>,
    },
    /// A `.codex/` folder of a project, between the working directory and the repository root.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Project {
        /// Absolute path of the `.codex/` folder.
        dot_codex_folder: AbsolutePathBuf,
    },
    /// Overrides given on the server's command line (`-c key=value`).
    SessionFlags,
    /// The deprecated `managed_config.toml`, read from a file.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    LegacyManagedConfigTomlFromFile {
        /// Absolute path of that file.
        file: AbsolutePathBuf,
    },
    /// The deprecated `managed_config.toml` contents, delivered through device management.
    LegacyManagedConfigTomlFromMdm,
}

#[bon::bon]
impl ConfigLayerSource {
    /// Starts building [`ConfigLayerSource::PackagedDefaults`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn packaged_defaults(file: AbsolutePathBuf) -> Self {
        Self::PackagedDefaults { file }
    }

    /// Starts building [`ConfigLayerSource::Mdm`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn mdm(domain: String, key: String) -> Self {
        Self::Mdm { domain, key }
    }

    /// Starts building [`ConfigLayerSource::System`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn system(file: AbsolutePathBuf) -> Self {
        Self::System { file }
    }

    /// Starts building [`ConfigLayerSource::EnterpriseManaged`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn enterprise_managed(id: String, name: String) -> Self {
        Self::EnterpriseManaged { id, name }
    }

    /// Starts building [`ConfigLayerSource::User`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn user(file: AbsolutePathBuf, profile: Option<String>) -> Self {
        Self::User { file, profile }
    }

    /// Starts building [`ConfigLayerSource::Project`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn project(dot_codex_folder: AbsolutePathBuf) -> Self {
        Self::Project { dot_codex_folder }
    }

    /// Starts building [`ConfigLayerSource::LegacyManagedConfigTomlFromFile`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn legacy_managed_config_toml_from_file(file: AbsolutePathBuf) -> Self {
        Self::LegacyManagedConfigTomlFromFile { file }
    }
}

/// Params of `config/read`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ConfigReadParams {
    /// Directory to resolve project layers (`.codex/` folders) from; absent reads the
    /// configuration without any project layer.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    /// `true` also returns every layer in `layers`; absent means `false`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub include_layers: Option<bool>,
}

/// Result of `config/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ConfigReadResponse {
    /// The merged configuration.
    pub config: Config,
    /// For each dotted key path that is set, the layer its effective value comes from.
    #[builder(default)]
    pub origins: BTreeMap<String, ConfigLayerMetadata>,
    /// All layers, highest precedence first, including disabled ones; `null` unless
    /// `includeLayers` was `true`.
    #[serde(default)]
    pub layers: Option<Vec<ConfigLayer>>,
}

/// Params of `config/value/write`: one edit of the user's `config.toml`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ConfigValueWriteParams {
    /// Dotted path of the key to change, e.g. `model` or `sandbox_workspace_write.network_access`.
    pub key_path: String,
    /// The new value as JSON (converted to TOML); `null` removes the key.
    pub value: serde_json::Value,
    /// How `value` is combined with what is already at `keyPath`.
    pub merge_strategy: MergeStrategy,
    /// Absolute path of the file to edit; only the user's `config.toml` is accepted, which is
    /// also what absent means.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub file_path: Option<String>,
    /// The `version` the client last read for the file; the write is refused if the file has
    /// changed since. Absent skips the check.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub expected_version: Option<String>,
}

/// Params of `configWarning`: a problem found while loading the configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ConfigWarningNotification {
    /// One-line description of the problem, suitable as a headline.
    pub summary: String,
    /// Longer explanation or the underlying error text; `null` when there is none.
    #[serde(default)]
    pub details: Option<String>,
    /// The configuration file at fault; `null` when the problem is not tied to a file.
    #[serde(default)]
    pub path: Option<String>,
    /// Where in `path` the problem is; `null` when no position is known.
    #[serde(default)]
    pub range: Option<TextRange>,
}

/// Result of `config/value/write` and `config/batchWrite`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ConfigWriteResponse {
    /// Whether the written values are the effective ones.
    pub status: WriteStatus,
    /// Absolute path of the file that was written.
    pub file_path: AbsolutePathBuf,
    /// The file's version after the write; use it as the next `expectedVersion`.
    pub version: String,
    /// Which layer shadows the first written key that does not take effect; `null` when every
    /// write took effect (`status` is `ok`).
    #[serde(default)]
    pub overridden_metadata: Option<OverriddenMetadata>,
}

/// Desktop onboarding flow a sign-in was started from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DesktopOnboardingEntrypoint {
    /// The life-sciences onboarding flow.
    LifeSciences,
}

/// How an edit's value is combined with the existing value at its key path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum MergeStrategy {
    /// The new value takes the place of the old one entirely.
    Replace,
    /// When both old and new values are tables, the new keys are merged into the old table;
    /// otherwise the value is replaced.
    Upsert,
}

/// Explains why a written value is not the effective one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct OverriddenMetadata {
    /// Human-readable explanation naming the overriding layer.
    pub message: String,
    /// The higher-precedence layer that supplies the effective value.
    pub overriding_layer: ConfigLayerMetadata,
    /// The value actually in effect at that key path; `null` when none is.
    pub effective_value: serde_json::Value,
}

/// The `[sandbox_workspace_write]` table: settings for the `workspace-write` sandbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct SandboxWorkspaceWrite {
    /// Extra directories, besides the workspace, that commands may write to.
    #[serde(rename = "writable_roots", default)]
    #[builder(default)]
    pub writable_roots: Vec<String>,
    /// Whether sandboxed commands may use the network; absent means `false`.
    #[serde(rename = "network_access", default)]
    #[builder(default)]
    pub network_access: bool,
    /// `true` removes `/tmp` from the writable directories; absent means `false`.
    #[serde(rename = "exclude_slash_tmp", default)]
    #[builder(default)]
    pub exclude_slash_tmp: bool,
    /// `true` removes the directory named by `$TMPDIR` from the writable directories; absent
    /// means `false`.
    #[serde(rename = "exclude_tmpdir_env_var", default)]
    #[builder(default)]
    pub exclude_tmpdir_env_var: bool,
}

/// What a collaboration mode sets for the turns that use it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct Settings {
    /// Model slug the mode runs on.
    pub model: String,
    /// Reasoning effort the mode uses; `null` keeps the model's default. In `turn/start`
    /// params a value sets it, `null` clears it and leaving it out keeps the current one.
    #[serde(
        rename = "reasoning_effort",
        default,
        deserialize_with = "serde_util::present_or_null"
    )]
    #[schemars(with = "Option<ReasoningEffort>")]
    #[ts(as = "Option<ReasoningEffort>")]
    pub reasoning_effort: Option<Option<ReasoningEffort>>,
    /// Developer instructions for the mode; `null` selects the mode's built-in instructions.
    /// In `turn/start` params leaving it out keeps the current instructions.
    #[serde(
        rename = "developer_instructions",
        default,
        deserialize_with = "serde_util::present_or_null"
    )]
    #[schemars(with = "Option<String>")]
    #[ts(as = "Option<String>")]
    pub developer_instructions: Option<Option<String>>,
}

/// A tool offered by an MCP server, as in the MCP `tools/list` answer.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct Tool {
    /// The tool's name, unique within its server; used to call it.
    pub name: String,
    /// Human-friendly display name; `null` when the server gives none.
    #[serde(default)]
    #[serialize_always]
    pub title: Option<String>,
    /// What the tool does, for the model and the user; `null` when the server gives none.
    #[serde(default)]
    #[serialize_always]
    pub description: Option<String>,
    /// JSON Schema of the tool's arguments.
    pub input_schema: serde_json::Value,
    /// JSON Schema of the tool's structured result; absent when the server declares none.
    #[serde(default)]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub output_schema: Option<serde_json::Value>,
    /// MCP behaviour hints (read-only, destructive, idempotent …); absent when none are given.
    #[serde(default)]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub annotations: Option<serde_json::Value>,
    /// Icons for the tool, as MCP icon objects; `null` when none are given.
    #[serde(default)]
    #[serialize_always]
    pub icons: Option<Vec<serde_json::Value>>,
    /// The tool's MCP `_meta` object, passed through unchanged; absent when the server sends
    /// none.
    #[serde(rename = "_meta", default)]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub _meta: Option<serde_json::Value>,
}

/// The `[tools]` table of the configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ToolsV2 {
    /// Settings of the web search tool; `null` when unset.
    #[serde(rename = "web_search", default)]
    pub web_search: Option<WebSearchToolConfig>,
}

/// How much retrieved page content web search puts into the model's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum WebSearchContextSize {
    /// Little content: cheaper and faster.
    Low,
    /// A balance of cost and detail.
    Medium,
    /// As much content as the tool allows.
    High,
}

/// Approximate user location given to web search so it can localise results; every part is
/// optional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct WebSearchLocation {
    /// Country, as an ISO 3166-1 alpha-2 code (e.g. `US`).
    #[serde(default)]
    pub country: Option<String>,
    /// Region or state, free text.
    #[serde(default)]
    pub region: Option<String>,
    /// City, free text.
    #[serde(default)]
    pub city: Option<String>,
    /// IANA time zone (e.g. `America/Chicago`).
    #[serde(default)]
    pub timezone: Option<String>,
}

/// Whether the web search tool is available and how fresh its results are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum WebSearchMode {
    /// The model gets no web search tool.
    Disabled,
    /// Results come from a cache of previously fetched pages, not the live web.
    Cached,
    /// Results come from a search index, without fetching pages live.
    Indexed,
    /// Pages are fetched from the live web.
    Live,
}

/// The backend that performs web searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WebSearchProvider {
    /// The model API's own built-in web search tool.
    Standalone,
    /// Search served through an MCP server.
    SearchMcp,
}

/// The `[tools.web_search]` table: settings of the web search tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct WebSearchToolConfig {
    /// Domains searches are restricted to (e.g. `docs.rs`); `null` allows any domain.
    #[serde(rename = "allowed_domains", default)]
    pub allowed_domains: Option<Vec<String>>,
    /// How much page content goes into the context; `null` uses the tool's default.
    #[serde(rename = "context_size", default)]
    pub context_size: Option<WebSearchContextSize>,
    /// Location used to localise results; `null` gives none.
    #[serde(default)]
    pub location: Option<WebSearchLocation>,
}

/// Outcome of a successful configuration write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum WriteStatus {
    /// Written, and the written values are now in effect.
    Ok,
    /// Written, but a higher-precedence layer still decides at least one of the keys; see
    /// `overriddenMetadata`.
    OkOverridden,
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// Deserializes `value` into `T`, serializes it back and asserts nothing changed.
    fn round_trip<T: Serialize + serde::de::DeserializeOwned>(value: &Value) -> T {
        let parsed: T = serde_json::from_value(value.clone()).expect("deserialize");
        let back = serde_json::to_value(&parsed).expect("serialize");
        assert_eq!(&back, value);
        parsed
    }

    #[test]
    fn config_read_response_round_trips_with_unmodelled_keys() {
        // The `config/read` answer of codex 0.171.0 (shortened), plus one origin and one layer.
        let value = json!({
            "config": {
                "model": null,
                "review_model": null,
                "model_context_window": null,
                "model_auto_compact_token_limit": null,
                "model_auto_compact_token_limit_scope": null,
                "model_provider": null,
                "approval_policy": null,
                "approvals_reviewer": null,
                "sandbox_mode": "workspace-write",
                "sandbox_workspace_write": {
                    "writable_roots": ["/home/me/shared"],
                    "network_access": true,
                    "exclude_slash_tmp": false,
                    "exclude_tmpdir_env_var": false
                },
                "forced_chatgpt_workspace_id": null,
                "forced_login_method": null,
                "web_search": "cached",
                "client_search_provider": null,
                "tools": {"web_search": {
                    "allowed_domains": ["docs.rs"],
                    "context_size": "low",
                    "location": null
                }},
                "instructions": null,
                "developer_instructions": null,
                "compact_prompt": null,
                "model_reasoning_effort": "high",
                "model_reasoning_summary": null,
                "model_verbosity": null,
                "service_tier": null,
                "analytics": null,
                "browser_use": null,
                "computer_use": null,
                "desktop": null,
                "background_terminal_max_timeout": 300000,
                "mcp_oauth_credentials_store": "auto",
                "project_doc_max_bytes": 32768,
                "profiles": {},
                "history": {"persistence": "save-all", "max_bytes": null},
                "project_root_markers": [".git"],
                "features": {"memories": false, "tool_suggest": true}
            },
            "origins": {
                "sandbox_mode": {
                    "name": {"type": "user", "file": "/home/me/.codex/config.toml", "profile": null},
                    "version": "sha256:1f2e"
                }
            },
            "layers": [
                {
                    "name": {"type": "sessionFlags"},
                    "version": "sha256:0000",
                    "config": {},
                    "disabledReason": null
                },
                {
                    "name": {"type": "project", "dotCodexFolder": "/home/me/repo/.codex"},
                    "version": "sha256:9a9a",
                    "config": {"model": "gpt-6.2-sol"},
                    "disabledReason": "project is not trusted"
                }
            ]
        });
        let response: ConfigReadResponse = round_trip(&value);
        let config = &response.config;
        assert_eq!(config.model, None);
        assert_eq!(config.sandbox_mode, Some(SandboxMode::WorkspaceWrite));
        assert_eq!(config.web_search, Some(WebSearchMode::Cached));
        assert_eq!(
            config.model_reasoning_effort,
            Some(ReasoningEffort("high".into()))
        );
        let workspace = config
            .sandbox_workspace_write
            .as_ref()
            .expect("sandbox_workspace_write");
        assert!(workspace.network_access);
        assert_eq!(workspace.writable_roots, vec!["/home/me/shared".to_owned()]);
        // Keys without a field of their own land in `extra`, unchanged.
        assert_eq!(config.extra["project_doc_max_bytes"], json!(32768));
        assert_eq!(config.extra["features"]["tool_suggest"], json!(true));
        assert!(!config.extra.contains_key("model"));
        let layers = response.layers.expect("layers");
        assert_eq!(layers[0].name, ConfigLayerSource::SessionFlags);
        assert_eq!(
            layers[1].disabled_reason.as_deref(),
            Some("project is not trusted")
        );
        assert!(matches!(
            &response.origins["sandbox_mode"].name,
            ConfigLayerSource::User { profile: None, .. }
        ));
    }

    #[test]
    fn config_read_params_leave_out_unset_members() {
        let empty: ConfigReadParams = round_trip(&json!({}));
        assert_eq!(empty.cwd, None);
        assert_eq!(empty.include_layers, None);

        let full = json!({"cwd": "/home/me/repo", "includeLayers": true});
        let params: ConfigReadParams = round_trip(&full);
        assert_eq!(params.include_layers, Some(true));
    }

    #[test]
    fn config_value_write_params_leave_out_unset_members() {
        let value = json!({"keyPath": "model", "value": "gpt-6.2-sol", "mergeStrategy": "replace"});
        let params: ConfigValueWriteParams = round_trip(&value);
        assert_eq!(params.merge_strategy, MergeStrategy::Replace);
        let back = serde_json::to_value(&params).expect("serialize");
        let object = back.as_object().expect("an object");
        assert!(!object.contains_key("filePath"));
        assert!(!object.contains_key("expectedVersion"));

        // `null` as the value (remove the key) is kept, not dropped.
        let removal = json!({
            "keyPath": "tools.web_search",
            "value": null,
            "mergeStrategy": "upsert",
            "filePath": "/home/me/.codex/config.toml",
            "expectedVersion": "sha256:1f2e"
        });
        let params: ConfigValueWriteParams = round_trip(&removal);
        assert_eq!(params.value, Value::Null);
    }

    #[test]
    fn config_batch_write_params_round_trip() {
        let value = json!({
            "edits": [
                {"keyPath": "model", "value": "gpt-6.2-sol", "mergeStrategy": "replace"},
                {"keyPath": "features", "value": {"memories": true}, "mergeStrategy": "upsert"}
            ],
            "expectedVersion": "sha256:1f2e",
            "reloadUserConfig": true
        });
        let params: ConfigBatchWriteParams = round_trip(&value);
        assert_eq!(params.edits.len(), 2);
        assert_eq!(params.reload_user_config, Some(true));
        assert_eq!(params.file_path, None);

        let minimal = json!({"edits": []});
        let params: ConfigBatchWriteParams = round_trip(&minimal);
        assert_eq!(params.reload_user_config, None);
        assert_eq!(params.expected_version, None);
    }

    #[test]
    fn config_write_response_round_trips_when_overridden() {
        let value = json!({
            "status": "okOverridden",
            "filePath": "/home/me/.codex/config.toml",
            "version": "sha256:7c7c",
            "overriddenMetadata": {
                "message": "Overridden by session flags",
                "overridingLayer": {"name": {"type": "sessionFlags"}, "version": "sha256:0000"},
                "effectiveValue": "read-only"
            }
        });
        let response: ConfigWriteResponse = round_trip(&value);
        assert_eq!(response.status, WriteStatus::OkOverridden);
        let overridden = response.overridden_metadata.expect("overriddenMetadata");
        assert_eq!(overridden.effective_value, json!("read-only"));
    }

    #[test]
    fn config_warning_from_the_transcript_parses_and_writes_nulls_back() {
        // As codex 0.171.0 sends it: `path` and `range` left out.
        let sent = json!({
            "summary": "Codex could not find bubblewrap on PATH.",
            "details": null
        });
        let warning: ConfigWarningNotification = serde_json::from_value(sent).expect("deserialize");
        assert_eq!(warning.path, None);
        assert_eq!(warning.range, None);
        let back = serde_json::to_value(&warning).expect("serialize");
        assert_eq!(
            back,
            json!({
                "summary": "Codex could not find bubblewrap on PATH.",
                "details": null,
                "path": null,
                "range": null
            })
        );
    }

    #[test]
    fn web_search_location_rejects_unknown_keys() {
        let location = json!({"country": "US", "city": null, "region": null, "timezone": null});
        let _: WebSearchLocation = round_trip(&location);
        let unknown = json!({"country": "US", "planet": "Earth"});
        assert!(serde_json::from_value::<WebSearchLocation>(unknown).is_err());
    }

    #[test]
    fn a_tool_without_title_description_or_icons_sends_them_as_null() {
        // `#[serialize_always]` members: present and `null`; the others left out when `None`.
        let tool = Tool::builder()
            .name("t")
            .input_schema(json!({"type": "object"}))
            .build();
        let sent = json!({
            "name": "t",
            "title": null,
            "description": null,
            "inputSchema": {"type": "object"},
            "icons": null
        });
        assert_eq!(serde_json::to_value(&tool).expect("serialize"), sent);
        let _: Tool = round_trip(&sent);
    }
}
