//! Legacy methods kept for clients written against the first app-server API.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Params of `getConversationSummary`: the conversation, by rollout path or by id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[non_exhaustive]
pub enum GetConversationSummaryParams {
    /// Look the conversation up by the path of its rollout file.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    RolloutPath {
        /// Path of the rollout file.
        rollout_path: String,
    },
    /// Look the conversation up by id.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ConversationId {
        /// The conversation (thread) id.
        conversation_id: String,
    },
}

#[bon::bon]
impl GetConversationSummaryParams {
    /// Starts building [`GetConversationSummaryParams::RolloutPath`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn rollout_path(rollout_path: String) -> Self {
        Self::RolloutPath { rollout_path }
    }

    /// Starts building [`GetConversationSummaryParams::ConversationId`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn conversation_id(conversation_id: String) -> Self {
        Self::ConversationId { conversation_id }
    }
}

/// Result of `getConversationSummary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct GetConversationSummaryResponse {
    /// The summary.
    pub summary: ConversationSummary,
}

/// What a conversation list shows for one conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ConversationSummary {
    /// The conversation (thread) id.
    pub conversation_id: String,
    /// Path of its rollout file.
    pub path: String,
    /// Usually the first user message.
    pub preview: String,
    /// When it was created (RFC 3339), if known.
    pub timestamp: Option<String>,
    /// When it last changed (RFC 3339), if known.
    pub updated_at: Option<String>,
    /// The model provider it uses.
    pub model_provider: String,
    /// Its working directory.
    pub cwd: String,
    /// Version of the server that created it.
    pub cli_version: String,
    /// Where it was started from.
    pub source: SessionSource,
    /// Git state when it was created, if it was in a repository.
    pub git_info: Option<ConversationGitInfo>,
}

/// Git state recorded with a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ConversationGitInfo {
    /// Commit hash of `HEAD`.
    pub sha: Option<String>,
    /// Current branch.
    pub branch: Option<String>,
    /// URL of the `origin` remote.
    pub origin_url: Option<String>,
}

/// Params of `getAuthStatus`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct GetAuthStatusParams {
    /// Include the current access token in the answer.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub include_token: Option<bool>,
    /// Refresh the token before answering.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub refresh_token: Option<bool>,
}

/// Result of `getAuthStatus`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct GetAuthStatusResponse {
    /// How the server is authenticated; `null` when it is not.
    pub auth_method: Option<AuthMode>,
    /// The access token, when asked for and available.
    pub auth_token: Option<String>,
    /// Whether the configured provider needs an OpenAI sign-in.
    pub requires_openai_auth: Option<bool>,
}

/// Params of `gitDiffToRemote`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct GitDiffToRemoteParams {
    /// A directory inside the repository.
    pub cwd: String,
}

/// Result of `gitDiffToRemote`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct GitDiffToRemoteResponse {
    /// The remote commit the diff is taken against.
    pub sha: String,
    /// Unified diff from that commit to the working tree.
    pub diff: String,
}
