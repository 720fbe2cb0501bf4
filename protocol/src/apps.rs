//! Apps (connectors): third-party services the agent can use once the user has connected them.
//!
//! Used by `app/list`, which returns directory and connection information for each app. Also
//! holds [`LegacyAppPathString`], the plain path string of older item and thread fields.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Publisher details of an app, for its directory page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AppBranding {
    /// Who makes the app; `null` when not given.
    #[serde(default)]
    pub developer: Option<String>,
    /// Directory category (e.g. `Productivity`); `null` when not given.
    #[serde(default)]
    pub category: Option<String>,
    /// Whether the app is listed in the app directory for users to find.
    pub is_discoverable_app: bool,
    /// URL of the developer's website; `null` when not given.
    #[serde(default)]
    pub website: Option<String>,
    /// URL of the app's privacy policy; `null` when not given.
    #[serde(default)]
    pub privacy_policy: Option<String>,
    /// URL of the app's terms of service; `null` when not given.
    #[serde(default)]
    pub terms_of_service: Option<String>,
}

/// One app as listed by `app/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AppInfo {
    /// The connector id; mention the app in input as `app://<id>`.
    pub id: String,
    /// Display name (e.g. `Demo App`).
    pub name: String,
    /// Short description of what the app does; `null` when not given.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether the user has connected the app so the agent can use it now; absent means
    /// `false`.
    #[serde(default)]
    #[builder(default)]
    pub is_accessible: bool,
    /// Whether the app is switched on in the configuration (`[apps.<id>] enabled`); absent
    /// means `true`.
    #[serde(default = "crate::serde_util::default_true")]
    #[builder(default = crate::serde_util::default_true())]
    pub is_enabled: bool,
    /// Page where the user installs or connects the app; `null` when there is none.
    #[serde(default)]
    pub install_url: Option<String>,
    /// URL of the logo for light backgrounds; `null` when not given.
    #[serde(default)]
    pub logo_url: Option<String>,
    /// URL of the logo for dark backgrounds; `null` when not given.
    #[serde(default)]
    pub logo_url_dark: Option<String>,
    /// Icon image URLs for light backgrounds, keyed by variant; `null` when not given.
    #[serde(default)]
    pub icon_assets: Option<BTreeMap<String, String>>,
    /// Icon image URLs for dark backgrounds, keyed by variant; `null` when not given.
    #[serde(default)]
    pub icon_dark_assets: Option<BTreeMap<String, String>>,
    /// How the app is distributed (an opaque channel name); `null` when not given.
    #[serde(default)]
    pub distribution_channel: Option<String>,
    /// Publisher details; `null` when not given.
    #[serde(default)]
    pub branding: Option<AppBranding>,
    /// Directory listing details; `null` when not given.
    #[serde(default)]
    pub app_metadata: Option<AppMetadata>,
    /// Free-form key/value labels attached to the app; `null` when there are none.
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
    /// Display names of the installed plugins that bundle this app; empty (or absent) when none
    /// do.
    #[serde(default)]
    #[builder(default)]
    pub plugin_display_names: Vec<String>,
}

/// An app's directory listing; every field is `null` when the directory does not give it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct AppMetadata {
    /// Who makes the app.
    #[serde(default)]
    pub developer: Option<String>,
    /// Directory categories the app is listed under.
    #[serde(default)]
    pub categories: Option<Vec<String>>,
    /// Finer directory categories.
    #[serde(default)]
    pub sub_categories: Option<Vec<String>>,
    /// Longer description written for the directory page and search engines.
    #[serde(default)]
    pub seo_description: Option<String>,
    /// Screenshots for the directory page.
    #[serde(default)]
    pub screenshots: Option<Vec<AppScreenshot>>,
    /// Outcome of the directory's review of the app.
    #[serde(default)]
    pub review: Option<AppReview>,
    /// Human-readable version of the app.
    #[serde(default)]
    pub version: Option<String>,
    /// Opaque id of that version.
    #[serde(default)]
    pub version_id: Option<String>,
    /// Release notes of that version.
    #[serde(default)]
    pub version_notes: Option<String>,
    /// For first-party apps: whether the user must install the app before it can be used.
    #[serde(default)]
    pub first_party_requires_install: Option<bool>,
    /// Whether to offer the app in the message composer even before the user connects it.
    #[serde(default)]
    pub show_in_composer_when_unlinked: Option<bool>,
}

/// The directory's review of an app.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AppReview {
    /// Review state as the directory reports it (an opaque string).
    pub status: String,
}

/// A screenshot on an app's directory page, showing the result of an example prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AppScreenshot {
    /// The example prompt the screenshot illustrates.
    pub user_prompt: String,
    /// URL of the image; `null` when only `fileId` is given.
    #[serde(default)]
    pub url: Option<String>,
    /// Id of the uploaded file holding the image; `null` when only `url` is given.
    #[serde(default)]
    pub file_id: Option<String>,
}

/// Params of `app/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct AppsListParams {
    /// Thread whose configuration decides whether apps are enabled at all; absent uses the
    /// current global configuration.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub thread_id: Option<String>,
    /// `true` ignores cached app data and fetches it again; absent means `false`.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub force_refetch: Option<bool>,
    /// The `nextCursor` of the previous page; absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Maximum number of apps in the page; absent lets the server choose.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
}

/// Result of `app/list`: one page of apps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct AppsListResponse {
    /// The apps on this page.
    #[builder(default)]
    pub data: Vec<AppInfo>,
    /// Pass as `cursor` to get the next page; `null` on the last page.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// A file-system path sent as a plain string, not necessarily absolute or normalised (older
/// fields that predate [`AbsolutePathBuf`](crate::AbsolutePathBuf)).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(transparent)]
pub struct LegacyAppPathString(pub String);
