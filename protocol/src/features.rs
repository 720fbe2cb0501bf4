//! Experimental features of this server: `experimentalFeature/list` shows each with whether it
//! is on, and `experimentalFeature/enablement/set` turns them on or off (kept in the user's
//! `config.toml` under `[features]`, where Codex users switch features too).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Params of `experimentalFeature/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExperimentalFeatureListParams {
    /// Where the previous page ended (its `nextCursor`); absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Most features on the page; absent for all of them.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    /// A loaded or stored thread: whether each feature is on is read from the configuration
    /// as seen from its working directory (with that project's own layers).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub thread_id: Option<String>,
}

/// Result of `experimentalFeature/list`: one page of features.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExperimentalFeatureListResponse {
    /// The features of this page, by name.
    pub data: Vec<ExperimentalFeature>,
    /// Pass as `cursor` to get the next page; `null` on the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// One experimental feature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExperimentalFeature {
    /// A line to show when the feature is new; `null` unless it is in beta.
    #[serde(default)]
    pub announcement: Option<String>,
    /// Whether it is on when nobody switched it.
    pub default_enabled: bool,
    /// What it does; `null` unless it is in beta.
    #[serde(default)]
    pub description: Option<String>,
    /// Its name for people; `null` unless it is in beta.
    #[serde(default)]
    pub display_name: Option<String>,
    /// Whether it is on now.
    pub enabled: bool,
    /// Its key under `[features]` in `config.toml` (and for `--enable` / `--disable`).
    pub name: String,
    /// How far along it is.
    pub stage: ExperimentalFeatureStage,
}

/// How far along a feature is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ExperimentalFeatureStage {
    /// Ready for users to try and comment on.
    Beta,
    /// Still being built.
    UnderDevelopment,
    /// Finished.
    Stable,
    /// On its way out.
    Deprecated,
    /// Gone; the key is only still accepted.
    Removed,
}

/// Params of `experimentalFeature/enablement/set`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ExperimentalFeatureEnablementSetParams {
    /// Features to switch, by name: `true` on, `false` off. Features not named keep their
    /// state; an empty map changes nothing.
    pub enablement: BTreeMap<String, bool>,
}

/// Result of `experimentalFeature/enablement/set`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ExperimentalFeatureEnablementSetResponse {
    /// The features this request switched, with their new state; names this server does not
    /// have are left out.
    pub enablement: BTreeMap<String, bool>,
}
