//! Permission profiles: the named sandbox presets a thread may select (`permissionProfile/list`,
//! and `permissions` in `thread/settings/update`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Params of `permissionProfile/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PermissionProfileListParams {
    /// Where the previous page ended (its `nextCursor`); absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// A working directory: the administrator's requirements and the configuration are read
    /// as seen from it.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    /// Most profiles on the page; absent for all of them.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
}

/// Result of `permissionProfile/list`: one page of profiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PermissionProfileListResponse {
    /// The profiles of this page, from the most confined to the least.
    pub data: Vec<PermissionProfileSummary>,
    /// Pass as `cursor` to get the next page; `null` on the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// One permission profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PermissionProfileSummary {
    /// Whether the administrator's requirements let a thread select it.
    pub allowed: bool,
    /// What the profile lets commands do, for people.
    #[serde(default)]
    pub description: Option<String>,
    /// Its id (`:read-only`, `:workspace`, `:danger-full-access`), as `permissions` takes it.
    pub id: String,
}
