use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum AllowDenyRequirement {
    Allow,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AnalyticsConfig {
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum AutoCompactTokenLimitScope {
    Total,
    BodyAfterPrefix,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct BrowserUseConfig {
    #[serde(rename = "allow_history_access", default)]
    pub allow_history_access: Option<bool>,
    #[serde(rename = "default_origin_policy", default)]
    pub default_origin_policy: Option<BrowserUseOriginPolicyConfig>,
    #[serde(default)]
    pub origins: Option<BTreeMap<String, BrowserUseOriginPolicyConfig>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct BrowserUseOriginPolicyConfig {
    #[serde(default)]
    pub access: Option<AllowDenyRequirement>,
    #[serde(default)]
    pub downloads: Option<AllowDenyRequirement>,
    #[serde(rename = "full_cdp_access", default)]
    pub full_cdp_access: Option<AllowDenyRequirement>,
    #[serde(default)]
    pub uploads: Option<AllowDenyRequirement>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ComputerUseConfig {
    #[serde(rename = "default_app_access", default)]
    pub default_app_access: Option<AllowDenyRequirement>,
    #[serde(default)]
    pub macos: Option<ComputerUseMacosConfig>,
    #[serde(default)]
    pub windows: Option<ComputerUseWindowsConfig>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ComputerUseMacosConfig {
    #[serde(rename = "bundle_ids", default)]
    pub bundle_ids: Option<BTreeMap<String, AllowDenyRequirement>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ComputerUseWindowsConfig {
    #[serde(default)]
    pub aumids: Option<BTreeMap<String, AllowDenyRequirement>>,
    #[serde(default)]
    pub exes: Option<Vec<ComputerUseWindowsExeConfig>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ComputerUseWindowsExeConfig {
    pub access: AllowDenyRequirement,
    #[serde(rename = "binary_name", default)]
    pub binary_name: Option<String>,
    #[serde(rename = "product_name")]
    pub product_name: String,
    #[serde(rename = "publisher_name")]
    pub publisher_name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    #[serde(default)]
    pub analytics: Option<AnalyticsConfig>,
    #[serde(rename = "approval_policy", default)]
    pub approval_policy: Option<AskForApproval>,
    #[serde(rename = "approvals_reviewer", default)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    #[serde(rename = "browser_use", default)]
    pub browser_use: Option<BrowserUseConfig>,
    #[serde(rename = "client_search_provider", default)]
    pub client_search_provider: Option<WebSearchProvider>,
    #[serde(rename = "compact_prompt", default)]
    pub compact_prompt: Option<String>,
    #[serde(rename = "computer_use", default)]
    pub computer_use: Option<ComputerUseConfig>,
    #[serde(default)]
    pub desktop: Option<BTreeMap<String, serde_json::Value>>,
    #[serde(rename = "developer_instructions", default)]
    pub developer_instructions: Option<String>,
    #[serde(rename = "forced_chatgpt_workspace_id", default)]
    pub forced_chatgpt_workspace_id: Option<ForcedChatgptWorkspaceIds>,
    #[serde(rename = "forced_login_method", default)]
    pub forced_login_method: Option<ForcedLoginMethod>,
    #[serde(default)]
    pub instructions: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(rename = "model_auto_compact_token_limit", default)]
    pub model_auto_compact_token_limit: Option<i64>,
    #[serde(rename = "model_auto_compact_token_limit_scope", default)]
    pub model_auto_compact_token_limit_scope: Option<AutoCompactTokenLimitScope>,
    #[serde(rename = "model_context_window", default)]
    pub model_context_window: Option<i64>,
    #[serde(rename = "model_provider", default)]
    pub model_provider: Option<String>,
    #[serde(rename = "model_reasoning_effort", default)]
    pub model_reasoning_effort: Option<ReasoningEffort>,
    #[serde(rename = "model_reasoning_summary", default)]
    pub model_reasoning_summary: Option<ReasoningSummary>,
    #[serde(rename = "model_verbosity", default)]
    pub model_verbosity: Option<Verbosity>,
    #[serde(rename = "review_model", default)]
    pub review_model: Option<String>,
    #[serde(rename = "sandbox_mode", default)]
    pub sandbox_mode: Option<SandboxMode>,
    #[serde(rename = "sandbox_workspace_write", default)]
    pub sandbox_workspace_write: Option<SandboxWorkspaceWrite>,
    #[serde(rename = "service_tier", default)]
    pub service_tier: Option<String>,
    #[serde(default)]
    pub tools: Option<ToolsV2>,
    #[serde(rename = "web_search", default)]
    pub web_search: Option<WebSearchMode>,
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfigBatchWriteParams {
    pub edits: Vec<ConfigEdit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub expected_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub file_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub reload_user_config: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfigEdit {
    pub key_path: String,
    pub merge_strategy: MergeStrategy,
    pub value: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfigLayer {
    pub config: serde_json::Value,
    #[serde(default)]
    pub disabled_reason: Option<String>,
    pub name: ConfigLayerSource,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfigLayerMetadata {
    pub name: ConfigLayerSource,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ConfigLayerSource {
    #[serde(rename_all = "camelCase")]
    PackagedDefaults {
        file: AbsolutePathBuf,
    },
    #[serde(rename_all = "camelCase")]
    Mdm {
        domain: String,
        key: String,
    },
    #[serde(rename_all = "camelCase")]
    System {
        file: AbsolutePathBuf,
    },
    #[serde(rename_all = "camelCase")]
    EnterpriseManaged {
        id: String,
        name: String,
    },
    #[serde(rename_all = "camelCase")]
    User {
        file: AbsolutePathBuf,
        #[serde(default)]
        profile: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Project {
        dot_codex_folder: AbsolutePathBuf,
    },
    SessionFlags,
    #[serde(rename_all = "camelCase")]
    LegacyManagedConfigTomlFromFile {
        file: AbsolutePathBuf,
    },
    LegacyManagedConfigTomlFromMdm,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReadParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub include_layers: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReadResponse {
    pub config: Config,
    #[serde(default)]
    pub layers: Option<Vec<ConfigLayer>>,
    pub origins: BTreeMap<String, ConfigLayerMetadata>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfigValueWriteParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub expected_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub file_path: Option<String>,
    pub key_path: String,
    pub merge_strategy: MergeStrategy,
    pub value: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfigWarningNotification {
    #[serde(default)]
    pub details: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub range: Option<TextRange>,
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConfigWriteResponse {
    pub file_path: AbsolutePathBuf,
    #[serde(default)]
    pub overridden_metadata: Option<OverriddenMetadata>,
    pub status: WriteStatus,
    pub version: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum DesktopOnboardingEntrypoint {
    LifeSciences,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum MergeStrategy {
    Replace,
    Upsert,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct OverriddenMetadata {
    pub effective_value: serde_json::Value,
    pub message: String,
    pub overriding_layer: ConfigLayerMetadata,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SandboxWorkspaceWrite {
    #[serde(rename = "exclude_slash_tmp", default)]
    pub exclude_slash_tmp: bool,
    #[serde(rename = "exclude_tmpdir_env_var", default)]
    pub exclude_tmpdir_env_var: bool,
    #[serde(rename = "network_access", default)]
    pub network_access: bool,
    #[serde(rename = "writable_roots", default)]
    pub writable_roots: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    #[serde(rename = "developer_instructions", default)]
    pub developer_instructions: Option<String>,
    pub model: String,
    #[serde(rename = "reasoning_effort", default)]
    pub reasoning_effort: Option<ReasoningEffort>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub _meta: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub annotations: Option<serde_json::Value>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub icons: Option<Vec<serde_json::Value>>,
    pub input_schema: serde_json::Value,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "serde_json::Value")]
    #[ts(optional)]
    pub output_schema: Option<serde_json::Value>,
    #[serde(default)]
    pub title: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolsV2 {
    #[serde(rename = "web_search", default)]
    pub web_search: Option<WebSearchToolConfig>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum WebSearchContextSize {
    Low,
    Medium,
    High,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebSearchLocation {
    #[serde(default)]
    pub city: Option<String>,
    #[serde(default)]
    pub country: Option<String>,
    #[serde(default)]
    pub region: Option<String>,
    #[serde(default)]
    pub timezone: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum WebSearchMode {
    Disabled,
    Cached,
    Indexed,
    Live,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum WebSearchProvider {
    Standalone,
    SearchMcp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebSearchToolConfig {
    #[serde(rename = "allowed_domains", default)]
    pub allowed_domains: Option<Vec<String>>,
    #[serde(rename = "context_size", default)]
    pub context_size: Option<WebSearchContextSize>,
    #[serde(default)]
    pub location: Option<WebSearchLocation>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum WriteStatus {
    Ok,
    OkOverridden,
}

