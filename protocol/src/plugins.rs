//! Plugins and the marketplaces they come from. A plugin is a folder that brings skills and MCP
//! servers; a marketplace is a folder (or a git repository) listing plugins. `plugin/installed`
//! lists the marketplaces with their plugins and which are installed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::AbsolutePathBuf;

/// Params of `plugin/installed`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct PluginInstalledParams {
    /// Working directories whose repositories' marketplaces to include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub cwds: Option<Vec<AbsolutePathBuf>>,
    /// Plugins to list even though they are not installed, when a marketplace has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub install_suggestion_plugin_names: Option<Vec<String>>,
}

/// Result of `plugin/installed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct PluginInstalledResponse {
    /// Marketplaces that could not be read.
    #[serde(default)]
    #[ts(as = "Option<Vec<MarketplaceLoadErrorInfo>>", optional)]
    #[builder(default)]
    pub marketplace_load_errors: Vec<MarketplaceLoadErrorInfo>,
    /// Each marketplace with the plugins of it that are installed (or were asked for).
    pub marketplaces: Vec<PluginMarketplaceEntry>,
}

/// A marketplace that could not be read, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct MarketplaceLoadErrorInfo {
    /// The marketplace's folder.
    pub marketplace_path: AbsolutePathBuf,
    /// What is wrong with it.
    pub message: String,
}

/// A marketplace and some of its plugins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginMarketplaceEntry {
    /// How a client may present it.
    #[serde(default)]
    pub interface: Option<MarketplaceInterface>,
    /// The marketplace's name.
    pub name: String,
    /// Its folder, when it is on this machine.
    #[serde(default)]
    pub path: Option<AbsolutePathBuf>,
    /// The plugins.
    pub plugins: Vec<PluginSummary>,
}

/// How a client may present a marketplace.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct MarketplaceInterface {
    /// The name to show.
    #[serde(default)]
    pub display_name: Option<String>,
}

/// A plugin of a marketplace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginSummary {
    /// When the plugin's connections are signed in to.
    pub auth_policy: PluginAuthPolicy,
    /// Whether the plugin is enabled (an installed plugin can be disabled).
    pub enabled: bool,
    /// `name@marketplace`: the plugin's id.
    pub id: String,
    /// Whether it may be installed.
    pub install_policy: PluginInstallPolicy,
    /// Whether it is installed.
    pub installed: bool,
    /// When it was installed (Unix seconds); `null` when it is not.
    #[serde(default)]
    pub installed_at: Option<i64>,
    /// Search words the plugin gives itself.
    #[serde(default)]
    #[ts(as = "Option<Vec<String>>", optional)]
    #[builder(default)]
    pub keywords: Vec<String>,
    /// The version installed here; `null` when it is not installed.
    #[serde(default)]
    pub local_version: Option<String>,
    /// The plugin's name.
    pub name: String,
    /// Where the plugin is fetched from.
    pub source: PluginSource,
    /// The version the marketplace offers.
    #[serde(default)]
    pub version: Option<String>,
}

/// When a plugin's connections are signed in to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum PluginAuthPolicy {
    /// When it is installed.
    OnInstall,
    /// When it is first used.
    OnUse,
}

/// Whether a plugin may be installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum PluginInstallPolicy {
    /// It may not.
    NotAvailable,
    /// It may, on request.
    Available,
    /// It is installed without being asked for.
    InstalledByDefault,
}

/// Where a plugin is fetched from (`type` on the wire).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum PluginSource {
    /// A folder on this machine.
    #[non_exhaustive]
    Local {
        /// The folder.
        path: AbsolutePathBuf,
    },
    /// A git repository.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Git {
        /// The folder inside the repository, when not its root.
        #[serde(default)]
        path: Option<String>,
        /// The branch or tag.
        #[serde(default)]
        ref_name: Option<String>,
        /// The commit.
        #[serde(default)]
        sha: Option<String>,
        /// The repository's address.
        url: String,
    },
}

impl PluginSource {
    /// A plugin in the folder `path`.
    pub fn local(path: AbsolutePathBuf) -> Self {
        Self::Local { path }
    }
}
