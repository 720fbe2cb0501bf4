//! Plugins and the marketplaces they come from. A plugin is a folder that brings skills and MCP
//! servers; a marketplace is a folder (or a git repository) listing plugins.
//! `marketplace/add|remove|upgrade` manage the marketplaces; `plugin/list`, `plugin/search`,
//! `plugin/read` and `plugin/skill/read` read them; `plugin/install|uninstall` copy a plugin in
//! or take it out; `plugin/installed` lists what is installed; `plugin/reconcile` brings the
//! installed copies in line with their marketplaces.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{AbsolutePathBuf, HookEventName, LegacyAppPathString, SkillInterface};

/// Params of `plugin/installed`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct PluginInstalledParams {
    /// Working directories whose repositories' marketplaces to include.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwds: Option<Vec<AbsolutePathBuf>>,
    /// Plugins to list even though they are not installed, when a marketplace has them.
    #[serde(default)]
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
    /// How a client may present it, from its manifest; `null` when the manifest says nothing
    /// about it.
    #[serde(default)]
    pub interface: Option<PluginInterface>,
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

    /// The folder `path` (the root when `None`) of the git repository `url`, at the branch
    /// or tag `ref_name` or the commit `sha`.
    pub fn git(
        url: String,
        path: Option<String>,
        ref_name: Option<String>,
        sha: Option<String>,
    ) -> Self {
        Self::Git {
            path,
            ref_name,
            sha,
            url,
        }
    }
}

/// How a client may present a plugin, as its manifest's `interface` describes it. Paths are
/// files inside the plugin's folder.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginInterface {
    /// A colour for the plugin's badge (`#rrggbb`).
    #[serde(default)]
    pub brand_color: Option<String>,
    /// What the plugin can do, as short labels (`Read`, `Write`, …).
    #[builder(default)]
    pub capabilities: Vec<String>,
    /// The shelf it belongs on (the marketplace's `category` wins over the manifest's).
    #[serde(default)]
    pub category: Option<String>,
    /// An icon for the message composer, inside the plugin's folder.
    #[serde(default)]
    pub composer_icon: Option<AbsolutePathBuf>,
    /// An address of the composer icon; never set here (the plugin's files are local).
    #[serde(default)]
    pub composer_icon_url: Option<String>,
    /// Up to three prompts to offer when the plugin is picked.
    #[serde(default)]
    pub default_prompt: Option<Vec<String>>,
    /// Who makes the plugin.
    #[serde(default)]
    pub developer_name: Option<String>,
    /// The name to show instead of `name`.
    #[serde(default)]
    pub display_name: Option<String>,
    /// The plugin's logo, inside its folder.
    #[serde(default)]
    pub logo: Option<AbsolutePathBuf>,
    /// The logo for dark backgrounds, inside its folder.
    #[serde(default)]
    pub logo_dark: Option<AbsolutePathBuf>,
    /// An address of the logo; never set here.
    #[serde(default)]
    pub logo_url: Option<String>,
    /// An address of the dark logo; never set here.
    #[serde(default)]
    pub logo_url_dark: Option<String>,
    /// A longer description for the plugin's page.
    #[serde(default)]
    pub long_description: Option<String>,
    /// The plugin's privacy policy.
    #[serde(default)]
    pub privacy_policy_url: Option<String>,
    /// Addresses of screenshots; always empty here.
    #[builder(default)]
    pub screenshot_urls: Vec<String>,
    /// Screenshots inside the plugin's folder.
    #[builder(default)]
    pub screenshots: Vec<AbsolutePathBuf>,
    /// A one-line description for lists.
    #[serde(default)]
    pub short_description: Option<String>,
    /// The plugin's terms of service.
    #[serde(default)]
    pub terms_of_service_url: Option<String>,
    /// The plugin's web site.
    #[serde(default)]
    pub website_url: Option<String>,
}

/// Params of `marketplace/add`: register a marketplace from a folder or a git repository.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct MarketplaceAddParams {
    /// The branch, tag or commit of a git marketplace to check out (a `#ref` suffix of
    /// `source` says the same); its default branch when absent.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub ref_name: Option<String>,
    /// Where the marketplace is: a folder on the server's machine (an absolute path, or one
    /// starting with `./`, `../` or `~/`), or a git repository (`https://…`, `ssh://…`,
    /// `git@host:path`, `file://…`, a path ending in `.git`, or `owner/repo` on GitHub).
    pub source: String,
    /// Only these folders of a git marketplace are checked out (its manifest's folder is
    /// always added).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sparse_paths: Option<Vec<String>>,
}

/// Result of `marketplace/add`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct MarketplaceAddResponse {
    /// `true` when the same source was already registered (nothing was fetched again).
    pub already_added: bool,
    /// The marketplace's folder: the folder itself for a local source, the clone under the
    /// server's home for a git one.
    pub installed_root: AbsolutePathBuf,
    /// The name its manifest gives it.
    pub marketplace_name: String,
}

/// Params of `marketplace/remove`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct MarketplaceRemoveParams {
    /// The registered marketplace to forget.
    pub marketplace_name: String,
}

/// Result of `marketplace/remove`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct MarketplaceRemoveResponse {
    /// The clone that was deleted; `null` for a local marketplace (its folder is left alone).
    #[serde(default)]
    pub installed_root: Option<AbsolutePathBuf>,
    /// The marketplace forgotten.
    pub marketplace_name: String,
}

/// Params of `marketplace/upgrade`: bring git marketplaces up to date with their repositories.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct MarketplaceUpgradeParams {
    /// The one marketplace to upgrade; every git marketplace when absent.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub marketplace_name: Option<String>,
}

/// Result of `marketplace/upgrade`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct MarketplaceUpgradeResponse {
    /// The marketplaces that could not be upgraded, and why.
    pub errors: Vec<MarketplaceUpgradeErrorInfo>,
    /// The git marketplaces looked at.
    pub selected_marketplaces: Vec<String>,
    /// The folders of those that changed (a new commit was checked out).
    pub upgraded_roots: Vec<AbsolutePathBuf>,
}

/// A marketplace that could not be upgraded, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct MarketplaceUpgradeErrorInfo {
    /// The marketplace.
    pub marketplace_name: String,
    /// What went wrong (git's own words included).
    pub message: String,
}

/// Params of `plugin/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct PluginListParams {
    /// Working directories whose repositories' own marketplaces are listed too.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwds: Option<Vec<AbsolutePathBuf>>,
    /// Asks for a fresh copy of a remote catalog; every marketplace here is read from disk on
    /// each request, so it changes nothing.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    #[builder(default)]
    pub force_refetch: bool,
    /// Which kinds of marketplace to list; only `local` ones exist here (absent means those).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub marketplace_kinds: Option<Vec<PluginListMarketplaceKind>>,
}

/// A kind of marketplace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum PluginListMarketplaceKind {
    /// A marketplace folder on this machine (registered, or a repository's own).
    Local,
    /// OpenAI's curated catalog for a line of work.
    Vertical,
    /// The catalog of the user's ChatGPT workspace.
    WorkspaceDirectory,
    /// Plugins other ChatGPT users shared with this one.
    SharedWithMe,
    /// Plugins this ChatGPT user published.
    CreatedByMeRemote,
}

/// Result of `plugin/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct PluginListResponse {
    /// Plugin ids a catalog recommends; always empty here (no catalog service).
    #[serde(default)]
    #[ts(as = "Option<Vec<String>>", optional)]
    #[builder(default)]
    pub featured_plugin_ids: Vec<String>,
    /// Marketplaces whose manifest could not be read.
    #[serde(default)]
    #[ts(as = "Option<Vec<MarketplaceLoadErrorInfo>>", optional)]
    #[builder(default)]
    pub marketplace_load_errors: Vec<MarketplaceLoadErrorInfo>,
    /// Each marketplace with all its plugins, installed or not.
    pub marketplaces: Vec<PluginMarketplaceEntry>,
}

/// Params of `plugin/search`: find plugins whose name, description or keywords contain a term.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginSearchParams {
    /// Where to go on from: the `nextCursor` of the previous page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Working directories whose repositories' own marketplaces are searched too.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cwds: Option<Vec<AbsolutePathBuf>>,
    /// Most results in one page (default 50).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    /// Which catalog to search; every marketplace here is the user's own (`personal`), and
    /// `global` or absent means all of them.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub scope: Option<PluginSearchScope>,
    /// The text to look for, without regard to case.
    pub search_term: String,
}

/// Which catalog `plugin/search` looks in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum PluginSearchScope {
    /// Every marketplace.
    Global,
    /// The ChatGPT workspace's catalog (none here).
    Workspace,
    /// The user's own marketplaces.
    Personal,
}

/// Result of `plugin/search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginSearchResponse {
    /// The plugins found, best matches first.
    pub data: Vec<PluginSearchResult>,
    /// Pass as `cursor` for the next page; `null` on the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// A plugin `plugin/search` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginSearchResult {
    /// The marketplace it is in.
    pub marketplace_name: String,
    /// That marketplace's manifest file.
    #[serde(default)]
    pub marketplace_path: Option<AbsolutePathBuf>,
    /// The plugin.
    pub plugin: PluginSummary,
}

/// Params of `plugin/reconcile`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginReconcileParams {
    /// Why the client asks (written to the server's log).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub reason: Option<String>,
}

/// Result of `plugin/reconcile`: what this pass changed in the installed plugins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct PluginReconcileResponse {
    /// The plugins whose installed copy was refreshed from their marketplace or removed;
    /// plugins left as they were are not listed.
    pub changed_plugins: Vec<PluginReconcileChangedPlugin>,
    /// Plugins of a remote catalog that could not be fetched; always empty here.
    pub failed_materialization_remote_plugin_ids: Vec<String>,
    /// Plugins of a remote catalog that could not be updated; always empty here.
    pub failed_remote_plugin_ids: Vec<String>,
}

/// A plugin `plugin/reconcile` changed, with what it brings (so a client knows what to reload).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginReconcileChangedPlugin {
    /// Whether it declares apps (connectors of OpenAI's apps directory).
    pub has_apps: bool,
    /// Whether it declares lifecycle hooks.
    pub has_hooks: bool,
    /// Whether it declares MCP servers.
    pub has_mcps: bool,
    /// Whether it has a skills folder.
    pub has_skills: bool,
    /// `name@marketplace`.
    pub id: String,
}

/// Params of `plugin/read`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginReadParams {
    /// The marketplace's manifest file (or its folder); when absent, the one known
    /// marketplace that has a plugin of that name.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub marketplace_path: Option<AbsolutePathBuf>,
    /// The plugin's name in that marketplace.
    pub plugin_name: String,
    /// A marketplace of OpenAI's remote catalog; refused here (no catalog service).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub remote_marketplace_name: Option<String>,
}

/// Result of `plugin/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct PluginReadResponse {
    /// The plugin.
    pub plugin: PluginDetail,
}

/// Everything about one plugin: its summary and what it brings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginDetail {
    /// App templates of OpenAI's apps directory it offers; always empty here.
    #[builder(default)]
    pub app_templates: Vec<AppTemplateSummary>,
    /// Apps of OpenAI's apps directory it connects; always empty here.
    #[builder(default)]
    pub apps: Vec<AppSummary>,
    /// The manifest's `description`.
    #[serde(default)]
    pub description: Option<String>,
    /// Lifecycle hooks it declares; none are read from plugins here.
    #[builder(default)]
    pub hooks: Vec<PluginHookSummary>,
    /// The marketplace it is in.
    pub marketplace_name: String,
    /// That marketplace's manifest file.
    #[serde(default)]
    pub marketplace_path: Option<AbsolutePathBuf>,
    /// The names of the MCP servers it declares.
    #[builder(default)]
    pub mcp_servers: Vec<String>,
    /// A skill to run when the plugin is first used; `null` when it names none.
    #[serde(default)]
    pub onboarding_skill: Option<SkillSummary>,
    /// Its skills.
    #[builder(default)]
    pub skills: Vec<SkillSummary>,
    /// The plugin as `plugin/list` shows it.
    pub summary: PluginSummary,
}

/// A skill a plugin brings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct SkillSummary {
    /// When to use it.
    pub description: String,
    /// Whether it is offered to the model.
    pub enabled: bool,
    /// How a client may present it; `null` when it says nothing about it.
    #[serde(default)]
    pub interface: Option<SkillInterface>,
    /// `plugin:skill`.
    pub name: String,
    /// Its `SKILL.md` file.
    #[serde(default)]
    pub path: Option<LegacyAppPathString>,
    /// A one-line description for lists.
    #[serde(default)]
    pub short_description: Option<String>,
}

/// An app of OpenAI's apps directory a plugin connects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AppSummary {
    /// The app's category.
    #[serde(default)]
    pub category: Option<String>,
    /// What the app does.
    #[serde(default)]
    pub description: Option<String>,
    /// The app's id in the directory.
    pub id: String,
    /// Where the user connects it.
    #[serde(default)]
    pub install_url: Option<String>,
    /// The app's name.
    pub name: String,
}

/// An app template of OpenAI's apps directory a plugin offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct AppTemplateSummary {
    /// The connector it stands for.
    #[serde(default)]
    pub canonical_connector_id: Option<String>,
    /// Its category.
    #[serde(default)]
    pub category: Option<String>,
    /// What it does.
    #[serde(default)]
    pub description: Option<String>,
    /// Its logo's address.
    #[serde(default)]
    pub logo_url: Option<String>,
    /// Its dark logo's address.
    #[serde(default)]
    pub logo_url_dark: Option<String>,
    /// The apps made from it.
    #[builder(default)]
    pub materialized_app_ids: Vec<String>,
    /// Its name.
    pub name: String,
    /// Why it cannot be used, when it cannot.
    #[serde(default)]
    pub reason: Option<AppTemplateUnavailableReason>,
    /// Its id.
    pub template_id: String,
}

/// Why an app template cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum AppTemplateUnavailableReason {
    /// The ChatGPT workspace has not set it up.
    NotConfiguredForWorkspace,
    /// No ChatGPT workspace is selected.
    NoActiveWorkspace,
}

/// A lifecycle hook a plugin declares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginHookSummary {
    /// When it runs.
    pub event_name: HookEventName,
    /// Its key in the plugin's hook file.
    pub key: String,
}

/// Params of `plugin/skill/read`: the text of one skill of a plugin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginSkillReadParams {
    /// The marketplace's name.
    pub remote_marketplace_name: String,
    /// The plugin: its name, or `name@marketplace`.
    pub remote_plugin_id: String,
    /// The skill: its folder's name, its front matter's `name`, or `plugin:skill`.
    pub skill_name: String,
}

/// Result of `plugin/skill/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginSkillReadResponse {
    /// The whole `SKILL.md` (front matter and instructions); `null` when the plugin has no
    /// such skill.
    #[serde(default)]
    pub contents: Option<String>,
}

/// Params of `plugin/install`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginInstallParams {
    /// The client's id for this attempt (written to the server's log).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub install_attempt_id: Option<String>,
    /// The marketplace's manifest file (or its folder); when absent, the one known
    /// marketplace that has a plugin of that name.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub marketplace_path: Option<AbsolutePathBuf>,
    /// The plugin's name in that marketplace.
    pub plugin_name: String,
    /// A marketplace of OpenAI's remote catalog; refused here (no catalog service).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub remote_marketplace_name: Option<String>,
}

/// Result of `plugin/install`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct PluginInstallResponse {
    /// Apps of OpenAI's apps directory the user must now connect; always empty here.
    #[builder(default)]
    pub apps_needing_auth: Vec<AppSummary>,
    /// When the plugin's connections are signed in to, as its marketplace says.
    pub auth_policy: PluginAuthPolicy,
}

/// Params of `plugin/uninstall`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct PluginUninstallParams {
    /// `name@marketplace`.
    pub plugin_id: String,
}

/// Result of `plugin/uninstall`: an empty object once the plugin is gone.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct PluginUninstallResponse {}
