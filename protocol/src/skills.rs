//! Skills: folders holding a `SKILL.md` (a name, a description and instructions) that the agent
//! may use. `skills/list` finds them in the user's home, the repository and extra roots;
//! `skills/extraRoots/set` adds roots; `skills/config/write` enables or disables one;
//! `skills/changed` tells clients to list them again.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{AbsolutePathBuf, LegacyAppPathString};

/// Params of `skills/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct SkillsListParams {
    /// The working directories to list skills for, one entry each in the answer; absent or
    /// empty means the server's working directory.
    #[serde(default)]
    #[ts(as = "Option<Vec<String>>", optional)]
    #[builder(default)]
    pub cwds: Vec<String>,
    /// `true` reads the skill folders again instead of answering from what was found before.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub force_reload: bool,
}

/// Result of `skills/list`: one entry per working directory asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct SkillsListResponse {
    /// The skills of each working directory, in the order asked.
    pub data: Vec<SkillsListEntry>,
}

/// The skills that apply in one working directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct SkillsListEntry {
    /// The working directory, as asked.
    pub cwd: String,
    /// `SKILL.md` files that were found but could not be used.
    pub errors: Vec<SkillErrorInfo>,
    /// The skills found, user skills first, then the repository's, then extra roots'.
    pub skills: Vec<SkillMetadata>,
}

/// A `SKILL.md` that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct SkillErrorInfo {
    /// What is wrong with it (unreadable, no front matter, no name …).
    pub message: String,
    /// The `SKILL.md` file.
    pub path: String,
}

/// One skill, as its `SKILL.md` front matter describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct SkillMetadata {
    /// Tools the skill needs; `null` when it names none.
    #[serde(default)]
    pub dependencies: Option<SkillDependencies>,
    /// When to use the skill (the front matter's `description`): what the model is shown.
    pub description: String,
    /// Whether the skill is offered to the model (`skills/config/write` changes it).
    pub enabled: bool,
    /// How a client may present the skill; `null` when the skill says nothing about it.
    #[serde(default)]
    pub interface: Option<SkillInterface>,
    /// The skill's name (the front matter's `name`).
    pub name: String,
    /// The skill's `SKILL.md` file.
    pub path: LegacyAppPathString,
    /// The plugin the skill came with; `null` for a skill of its own.
    #[serde(default)]
    pub plugin_id: Option<String>,
    /// Where the skill was found.
    pub scope: SkillScope,
    /// A one-line description for lists; `null` when the skill has none.
    #[serde(default)]
    pub short_description: Option<String>,
}

/// Tools a skill depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct SkillDependencies {
    /// One entry per tool.
    pub tools: Vec<SkillToolDependency>,
}

/// One tool a skill depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct SkillToolDependency {
    /// The command that provides the tool, when it is a program.
    #[serde(default)]
    pub command: Option<String>,
    /// What the tool is for.
    #[serde(default)]
    pub description: Option<String>,
    /// How an MCP tool is reached (`stdio`, `http`), when it is one.
    #[serde(default)]
    pub transport: Option<String>,
    /// The kind of dependency (`mcp`, `cli`, …), as the skill writes it.
    #[serde(rename = "type")]
    pub kind: String,
    /// Where an MCP tool is served, when it is one.
    #[serde(default)]
    pub url: Option<String>,
    /// The tool's name.
    pub value: String,
}

/// How a client may present a skill.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct SkillInterface {
    /// A colour for the skill's badge (`#rrggbb`).
    #[serde(default)]
    pub brand_color: Option<String>,
    /// A prompt to prefill when the user picks the skill.
    #[serde(default)]
    pub default_prompt: Option<String>,
    /// The name to show instead of `name`.
    #[serde(default)]
    pub display_name: Option<String>,
    /// A large icon file.
    #[serde(default)]
    pub icon_large: Option<AbsolutePathBuf>,
    /// A large icon's address.
    #[serde(default)]
    pub icon_large_url: Option<String>,
    /// A small icon file.
    #[serde(default)]
    pub icon_small: Option<AbsolutePathBuf>,
    /// A small icon's address.
    #[serde(default)]
    pub icon_small_url: Option<String>,
    /// A one-line description for lists.
    #[serde(default)]
    pub short_description: Option<String>,
}

/// Where a skill was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SkillScope {
    /// The user's own skills (`$AGENTWIRE_HOME/skills`) and extra roots.
    User,
    /// The repository's (`.agents/skills` or `.codex/skills` between the repository root and
    /// the working directory).
    Repo,
    /// Skills that come with the server.
    System,
    /// Skills an administrator installed for every user.
    Admin,
}

/// Params of `skills/extraRoots/set`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct SkillsExtraRootsSetParams {
    /// Folders searched for skills beside the usual ones, replacing the previous list (empty
    /// clears it); each holds skill folders, as `$AGENTWIRE_HOME/skills` does.
    pub extra_roots: Vec<AbsolutePathBuf>,
}

/// Result of `skills/extraRoots/set`: an empty object once the roots are in use.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct SkillsExtraRootsSetResponse {}

/// Params of `skills/config/write`: enable or disable one skill, named by its `SKILL.md` path
/// or by its name.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct SkillsConfigWriteParams {
    /// Whether the skill is offered to the model.
    pub enabled: bool,
    /// The skill's name, when `path` is not given.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub name: Option<String>,
    /// The skill's `SKILL.md` file.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub path: Option<AbsolutePathBuf>,
}

/// Result of `skills/config/write`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct SkillsConfigWriteResponse {
    /// Whether the skill is now offered to the model.
    pub effective_enabled: bool,
}

/// Params of `skills/changed`: skills were added, removed or changed; list them again.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct SkillsChangedNotification {}
