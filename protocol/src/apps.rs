use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppBranding {
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub developer: Option<String>,
    pub is_discoverable_app: bool,
    #[serde(default)]
    pub privacy_policy: Option<String>,
    #[serde(default)]
    pub terms_of_service: Option<String>,
    #[serde(default)]
    pub website: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    #[serde(default)]
    pub app_metadata: Option<AppMetadata>,
    #[serde(default)]
    pub branding: Option<AppBranding>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub distribution_channel: Option<String>,
    #[serde(default)]
    pub icon_assets: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub icon_dark_assets: Option<BTreeMap<String, String>>,
    pub id: String,
    #[serde(default)]
    pub install_url: Option<String>,
    #[serde(default)]
    pub is_accessible: bool,
    #[serde(default = "crate::serde_util::default_true")]
    pub is_enabled: bool,
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub logo_url: Option<String>,
    #[serde(default)]
    pub logo_url_dark: Option<String>,
    pub name: String,
    #[serde(default)]
    pub plugin_display_names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppMetadata {
    #[serde(default)]
    pub categories: Option<Vec<String>>,
    #[serde(default)]
    pub developer: Option<String>,
    #[serde(default)]
    pub first_party_requires_install: Option<bool>,
    #[serde(default)]
    pub review: Option<AppReview>,
    #[serde(default)]
    pub screenshots: Option<Vec<AppScreenshot>>,
    #[serde(default)]
    pub seo_description: Option<String>,
    #[serde(default)]
    pub show_in_composer_when_unlinked: Option<bool>,
    #[serde(default)]
    pub sub_categories: Option<Vec<String>>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub version_id: Option<String>,
    #[serde(default)]
    pub version_notes: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppReview {
    pub status: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppScreenshot {
    #[serde(default)]
    pub file_id: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    pub user_prompt: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppsListParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub force_refetch: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub thread_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppsListResponse {
    pub data: Vec<AppInfo>,
    #[serde(default)]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, TS)]
#[serde(transparent)]
pub struct LegacyAppPathString(pub String);

