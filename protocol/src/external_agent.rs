//! Moving another agent's set-up into this server: `externalAgentConfig/detect` lists what
//! could be brought over (settings, MCP servers, skills, saved sessions, memories),
//! `externalAgentConfig/import` brings the chosen items over and reports each kind of item as
//! it finishes (`externalAgentConfig/import/progress`, then
//! `externalAgentConfig/import/completed`), and `externalAgentConfig/import/recordHistory` /
//! `readHistories` keep the list of imports done.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A kind of thing an import brings over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ExternalAgentConfigMigrationItemType {
    /// Instruction files for the agent (`AGENTS.md` and the like).
    AgentsMd,
    /// Settings of the configuration file (and, here, the stored API key).
    Config,
    /// Skill folders.
    Skills,
    /// Installed plugins.
    Plugins,
    /// Configured MCP servers.
    McpServerConfig,
    /// Sub-agent definitions.
    Subagents,
    /// Hooks run on agent events.
    Hooks,
    /// Custom slash commands.
    Commands,
    /// What the agent remembers across sessions.
    Memory,
    /// Saved conversations.
    Sessions,
}

/// Params of `externalAgentConfig/detect`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ExternalAgentConfigDetectParams {
    /// Repositories to look in for set-up of their own; absent or `null` looks in none.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwds: Option<Vec<String>>,
    /// `true` looks at the other agent's set-up in the user's home.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub include_home: bool,
    /// Leave out sessions last changed more than this many days ago; absent for the server's
    /// default.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub max_session_age_days: Option<u32>,
    /// List at most this many sessions, newest first; absent for the server's default.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub max_sessions: Option<u32>,
    /// Which agent to bring set-up over from; absent (or one the server does not know) for
    /// its default one.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub migration_source: Option<String>,
    /// Kept for older clients and ignored: use `migrationSource`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub source: Option<String>,
}

/// Result of `externalAgentConfig/detect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ExternalAgentConfigDetectResponse {
    /// Hosted app connectors the other agent used that could be connected here; empty when
    /// there are none.
    #[serde(default)]
    #[ts(as = "Option<Vec<ExternalAgentDetectedConnectorCandidate>>", optional)]
    #[builder(default)]
    pub connectors: Vec<ExternalAgentDetectedConnectorCandidate>,
    /// What could be imported, one entry per kind of item (and repository); empty when there
    /// is nothing left to import.
    pub items: Vec<ExternalAgentConfigMigrationItem>,
}

/// A hosted app connector found in the other agent's set-up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExternalAgentDetectedConnectorCandidate {
    /// The connector's name.
    pub name: String,
    /// In how many sessions it was used.
    pub session_count: u32,
    /// Where it was found.
    pub source: ExternalAgentDetectedConnectorSource,
}

/// Where a connector candidate was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ExternalAgentDetectedConnectorSource {
    /// Among the remote MCP servers of its configuration.
    RemoteMcpServersConfig,
    /// In the tool calls of its sessions.
    SessionToolUse,
}

/// One thing an import can bring over, as detection describes it; send it back unchanged in
/// `externalAgentConfig/import`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExternalAgentConfigMigrationItem {
    /// The repository the item belongs to; absent, `null` or empty for the user's own set-up.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    /// What the item is, in words a user can read.
    pub description: String,
    /// The individual entries of the item (which servers, skills, sessions …); absent or
    /// `null` for all of them.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub details: Option<MigrationDetails>,
    /// The kind of item.
    pub item_type: ExternalAgentConfigMigrationItemType,
}

/// The individual entries of a migration item; only the list of the item's kind is filled.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct MigrationDetails {
    /// Slash commands.
    #[serde(default)]
    #[ts(as = "Option<Vec<CommandMigration>>", optional)]
    #[builder(default)]
    pub commands: Vec<CommandMigration>,
    /// Hooks.
    #[serde(default)]
    #[ts(as = "Option<Vec<HookMigration>>", optional)]
    #[builder(default)]
    pub hooks: Vec<HookMigration>,
    /// MCP servers, by name.
    #[serde(default)]
    #[ts(as = "Option<Vec<McpServerMigration>>", optional)]
    #[builder(default)]
    pub mcp_servers: Vec<McpServerMigration>,
    /// Memory files, by name.
    #[serde(default)]
    #[ts(as = "Option<Vec<String>>", optional)]
    #[builder(default)]
    pub memory: Vec<String>,
    /// Plugins, by marketplace.
    #[serde(default)]
    #[ts(as = "Option<Vec<PluginsMigration>>", optional)]
    #[builder(default)]
    pub plugins: Vec<PluginsMigration>,
    /// Saved sessions.
    #[serde(default)]
    #[ts(as = "Option<Vec<SessionMigration>>", optional)]
    #[builder(default)]
    pub sessions: Vec<SessionMigration>,
    /// Skills, by name.
    #[serde(default)]
    #[ts(as = "Option<Vec<SkillMigration>>", optional)]
    #[builder(default)]
    pub skills: Vec<SkillMigration>,
    /// Sub-agents, by name.
    #[serde(default)]
    #[ts(as = "Option<Vec<SubagentMigration>>", optional)]
    #[builder(default)]
    pub subagents: Vec<SubagentMigration>,
}

/// A slash command to bring over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandMigration {
    /// The command's name.
    pub name: String,
}

/// A hook to bring over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct HookMigration {
    /// The hook's name.
    pub name: String,
}

/// An MCP server to bring over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct McpServerMigration {
    /// The server's name in the configuration.
    pub name: String,
}

/// Plugins of one marketplace to bring over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginsMigration {
    /// The marketplace's name.
    pub marketplace_name: String,
    /// The plugins of that marketplace.
    pub plugin_names: Vec<String>,
}

/// A saved session to bring over as a thread.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct SessionMigration {
    /// The working directory the session ran in.
    pub cwd: String,
    /// The session's file.
    pub path: String,
    /// The session's name, when it has one.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub title: Option<String>,
}

/// A skill to bring over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct SkillMigration {
    /// The skill's name (its folder).
    pub name: String,
}

/// A sub-agent to bring over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct SubagentMigration {
    /// The sub-agent's name.
    pub name: String,
}

/// Params of `externalAgentConfig/import`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExternalAgentConfigImportParams {
    /// The items to import, as `externalAgentConfig/detect` listed them.
    pub migration_items: Vec<ExternalAgentConfigMigrationItem>,
    /// The agent the items came from (send what detection was asked with); absent for the
    /// server's default one.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub migration_source: Option<String>,
    /// A name of the caller's choosing, kept in the import's history entry.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub provider_id: Option<String>,
    /// The product that asked for the import, for the caller's own records.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub source: Option<String>,
}

/// Result of `externalAgentConfig/import`: the import runs on after the answer, and its
/// results arrive as `externalAgentConfig/import/progress` and `…/completed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExternalAgentConfigImportResponse {
    /// The import's id, repeated in its notifications and its history entry.
    pub import_id: String,
}

/// One entry brought over by an import.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExternalAgentConfigImportItemTypeSuccess {
    /// The repository it belongs to; absent or `null` for the user's own set-up.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    /// The kind of item.
    pub item_type: ExternalAgentConfigMigrationItemType,
    /// What was read (a file, a setting, a name).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub source: Option<String>,
    /// What it became here (a file, a setting, a thread id).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub target: Option<String>,
    /// For a session, its name; absent or `null` otherwise.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub title: Option<String>,
}

/// One entry an import could not bring over, and why.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExternalAgentConfigImportItemTypeFailure {
    /// The repository it belongs to; absent or `null` for the user's own set-up.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    /// A short machine-readable name of the error; absent or `null` when `failureStage` says
    /// enough.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub error_type: Option<String>,
    /// The step that failed (reading, converting, writing …).
    pub failure_stage: String,
    /// The kind of item.
    pub item_type: ExternalAgentConfigMigrationItemType,
    /// What went wrong, in words a user can act on.
    pub message: String,
    /// What was being brought over (a file, a setting, a name).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub source: Option<String>,
    /// A finer machine-readable name of the error, when there is one.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sub_error_type: Option<String>,
}

/// What an import did with one kind of item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ExternalAgentConfigImportTypeResult {
    /// The entries that could not be brought over.
    pub failures: Vec<ExternalAgentConfigImportItemTypeFailure>,
    /// The kind of item.
    pub item_type: ExternalAgentConfigMigrationItemType,
    /// The entries brought over (or found already there).
    pub successes: Vec<ExternalAgentConfigImportItemTypeSuccess>,
}

/// Params of `externalAgentConfig/import/progress`: one kind of item of an import is done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExternalAgentConfigImportProgressNotification {
    /// The import (its `importId`).
    pub import_id: String,
    /// What was done with the kind of item just finished.
    pub item_type_results: Vec<ExternalAgentConfigImportTypeResult>,
}

/// Params of `externalAgentConfig/import/completed`: an import is over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExternalAgentConfigImportCompletedNotification {
    /// The import (its `importId`).
    pub import_id: String,
    /// What was done with every kind of item, in the order they were done.
    pub item_type_results: Vec<ExternalAgentConfigImportTypeResult>,
}

/// Params of `externalAgentConfig/import/recordHistory`: adds an import done elsewhere (by
/// the client, say) to the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExternalAgentConfigImportHistoryRecordParams {
    /// What the import did, per kind of item.
    pub item_type_results: Vec<ExternalAgentConfigImportHistoryRecordTypeResultParams>,
    /// A name of the caller's choosing for who did the import.
    pub provider_id: String,
}

/// What an import done elsewhere did with one kind of item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ExternalAgentConfigImportHistoryRecordTypeResultParams {
    /// The entries that could not be brought over.
    pub failures: Vec<ExternalAgentConfigImportItemTypeFailure>,
    /// The kind of item.
    pub item_type: ExternalAgentConfigMigrationItemType,
    /// The entries brought over.
    pub successes: Vec<ExternalAgentConfigImportHistoryRecordSuccessParams>,
}

/// One entry an import done elsewhere brought over.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExternalAgentConfigImportHistoryRecordSuccessParams {
    /// The repository it belongs to; absent or `null` for the user's own set-up.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    /// The kind of item.
    pub item_type: ExternalAgentConfigMigrationItemType,
    /// What was read.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub source: Option<String>,
    /// What it became.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub target: Option<String>,
    /// For a session, its name.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub title: Option<String>,
}

/// Result of `externalAgentConfig/import/recordHistory`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExternalAgentConfigImportHistoryRecordResponse {
    /// The id the recorded import was given.
    pub import_id: String,
}

/// Result of `externalAgentConfig/import/readHistories`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ExternalAgentConfigImportHistoriesReadResponse {
    /// Hosted app connectors brought over by imports; empty when there are none.
    pub connectors: Vec<ExternalAgentImportedConnectorCandidate>,
    /// The imports done, newest first.
    pub data: Vec<ExternalAgentConfigImportHistory>,
}

/// A hosted app connector an import brought over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExternalAgentImportedConnectorCandidate {
    /// The connector's name.
    pub name: String,
    /// In how many sessions it was used.
    pub session_count: u32,
    /// Where it was found.
    pub source: ExternalAgentImportedConnectorSource,
}

/// Where an imported connector was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ExternalAgentImportedConnectorSource {
    /// Among the remote MCP servers of the other agent's configuration.
    RemoteMcpServersConfig,
}

/// One import of the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExternalAgentConfigImportHistory {
    /// When it finished (Unix milliseconds).
    pub completed_at_ms: i64,
    /// The entries it could not bring over.
    pub failures: Vec<ExternalAgentConfigImportItemTypeFailure>,
    /// Its id.
    pub import_id: String,
    /// The `providerId` it was given; `null` when none was.
    #[serde(default)]
    pub provider_id: Option<String>,
    /// The entries it brought over.
    pub successes: Vec<ExternalAgentConfigImportItemTypeSuccess>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn item_types_are_screaming_snake_case_on_the_wire() {
        assert_eq!(
            serde_json::to_value(ExternalAgentConfigMigrationItemType::McpServerConfig)
                .expect("serialize"),
            json!("MCP_SERVER_CONFIG")
        );
        assert_eq!(
            serde_json::from_value::<ExternalAgentConfigMigrationItemType>(json!("AGENTS_MD"))
                .expect("parse"),
            ExternalAgentConfigMigrationItemType::AgentsMd
        );
    }

    #[test]
    fn a_detected_item_round_trips_without_absent_members() {
        let item = ExternalAgentConfigMigrationItem::builder()
            .description("two sessions")
            .item_type(ExternalAgentConfigMigrationItemType::Sessions)
            .details(
                MigrationDetails::builder()
                    .sessions(vec![
                        SessionMigration::builder()
                            .cwd("/w")
                            .path("/h/s.jsonl")
                            .build(),
                    ])
                    .build(),
            )
            .build();
        let wire = serde_json::to_value(&item).expect("serialize");
        assert!(wire.get("cwd").is_none());
        assert!(wire["details"]["sessions"][0].get("title").is_none());
        let back: ExternalAgentConfigMigrationItem = serde_json::from_value(wire).expect("parse");
        assert_eq!(back, item);
        let sparse: MigrationDetails = serde_json::from_value(json!({})).expect("empty details");
        assert!(sparse.sessions.is_empty());
    }
}
