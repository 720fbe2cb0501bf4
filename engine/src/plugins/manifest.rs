//! Reading the two manifests: a marketplace's (`.agents/plugins/marketplace.json`, or
//! `.claude-plugin/marketplace.json`) and a plugin's (`.codex-plugin/plugin.json`, or
//! `.claude-plugin/plugin.json`). Paths inside them are relative to the folder they describe,
//! start with `./` and never leave it.

use std::path::{Component, Path, PathBuf};

use agentwire_protocol::{
    AbsolutePathBuf, MarketplaceInterface, PluginAuthPolicy, PluginInstallPolicy, PluginInterface,
};
use serde::Deserialize;

use super::folders::{absolute, check_segment, file_name};

/// Where a marketplace's manifest is, relative to the marketplace's folder, in the order looked
/// for.
pub(crate) const MARKETPLACE_MANIFESTS: [&str; 2] = [
    ".agents/plugins/marketplace.json",
    ".claude-plugin/marketplace.json",
];
/// Where a plugin's manifest is, relative to the plugin's folder, in the order looked for.
pub(crate) const PLUGIN_MANIFESTS: [&str; 2] =
    [".codex-plugin/plugin.json", ".claude-plugin/plugin.json"];
/// The skills folder of a plugin that names none.
const DEFAULT_SKILLS: &str = "skills";
/// The MCP servers file of a plugin that names none.
const DEFAULT_MCP_FILE: &str = ".mcp.json";
/// The apps file of a plugin that names none.
const DEFAULT_APPS_FILE: &str = ".app.json";
/// The hooks file of a plugin that names none.
const DEFAULT_HOOKS_FILE: &str = "hooks/hooks.json";
/// Largest manifest read.
const MAX_MANIFEST_BYTES: u64 = 256 * 1024;
/// Most default prompts kept, and their longest length (characters).
const MAX_DEFAULT_PROMPTS: usize = 3;
const MAX_DEFAULT_PROMPT_CHARS: usize = 512;

/// A marketplace as its manifest describes it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Marketplace {
    /// The manifest's `name`.
    pub name: String,
    /// The manifest file.
    pub path: PathBuf,
    /// The marketplace's folder (the plugin paths are relative to it).
    pub root: PathBuf,
    /// How a client may present it.
    pub interface: Option<MarketplaceInterface>,
    /// Its plugins, in manifest order (entries that cannot be used are left out).
    pub plugins: Vec<Entry>,
}

/// One plugin of a marketplace.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    /// The plugin's name (its id is `name@marketplace`).
    pub name: String,
    /// Where its files are.
    pub source: EntrySource,
    /// Whether it may be installed.
    pub installation: PluginInstallPolicy,
    /// When its connections are signed in to.
    pub authentication: PluginAuthPolicy,
    /// The marketplace's shelf for it.
    pub category: Option<String>,
}

/// Where a marketplace's plugin is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum EntrySource {
    /// A folder inside the marketplace.
    Local(PathBuf),
    /// A git repository (a folder of it when `path` is set), at a branch, tag or commit.
    Git {
        /// The repository.
        url: String,
        /// The folder inside it.
        path: Option<String>,
        /// The branch or tag.
        ref_name: Option<String>,
        /// The commit.
        sha: Option<String>,
    },
}

/// A plugin as its manifest describes it, its paths made absolute.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct PluginManifest {
    /// The plugin's name (its folder's name when the manifest gives none).
    pub name: String,
    /// Its version.
    pub version: Option<String>,
    /// What it does.
    pub description: Option<String>,
    /// Search words.
    pub keywords: Vec<String>,
    /// The folders holding its skills.
    pub skill_roots: Vec<PathBuf>,
    /// The files declaring its MCP servers.
    pub mcp_files: Vec<PathBuf>,
    /// Whether it declares apps (a file of OpenAI's apps directory connectors).
    pub has_apps: bool,
    /// Whether it declares lifecycle hooks.
    pub has_hooks: bool,
    /// How a client may present it.
    pub interface: Option<PluginInterface>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMarketplace {
    name: String,
    #[serde(default)]
    interface: Option<RawMarketplaceInterface>,
    plugins: Vec<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMarketplaceInterface {
    #[serde(default)]
    display_name: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RawEntry {
    name: String,
    source: RawSource,
    #[serde(default)]
    policy: RawPolicy,
    #[serde(default)]
    category: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawSource {
    Path(String),
    Object(RawSourceObject),
}

#[derive(Debug, Deserialize)]
#[serde(tag = "source", rename_all = "lowercase")]
enum RawSourceObject {
    Local {
        path: String,
    },
    Url {
        url: String,
        #[serde(default)]
        path: Option<String>,
        #[serde(default, rename = "ref")]
        ref_name: Option<String>,
        #[serde(default)]
        sha: Option<String>,
    },
    #[serde(rename = "git-subdir")]
    GitSubdir {
        url: String,
        path: String,
        #[serde(default, rename = "ref")]
        ref_name: Option<String>,
        #[serde(default)]
        sha: Option<String>,
    },
}

#[derive(Debug, Default, Deserialize)]
struct RawPolicy {
    #[serde(default)]
    installation: Option<PluginInstallPolicy>,
    #[serde(default)]
    authentication: Option<PluginAuthPolicy>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPlugin {
    #[serde(default)]
    name: String,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    skills: Option<String>,
    #[serde(default)]
    mcp_servers: Option<serde_json::Value>,
    #[serde(default)]
    apps: Option<String>,
    #[serde(default)]
    hooks: Option<serde_json::Value>,
    #[serde(default)]
    interface: Option<RawPluginInterface>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPluginInterface {
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    short_description: Option<String>,
    #[serde(default)]
    long_description: Option<String>,
    #[serde(default)]
    developer_name: Option<String>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    capabilities: Vec<String>,
    #[serde(default, alias = "websiteURL")]
    website_url: Option<String>,
    #[serde(default, alias = "privacyPolicyURL")]
    privacy_policy_url: Option<String>,
    #[serde(default, alias = "termsOfServiceURL")]
    terms_of_service_url: Option<String>,
    #[serde(default)]
    default_prompt: Option<serde_json::Value>,
    #[serde(default)]
    brand_color: Option<String>,
    #[serde(default)]
    composer_icon: Option<String>,
    #[serde(default)]
    logo: Option<String>,
    #[serde(default)]
    logo_dark: Option<String>,
    #[serde(default)]
    screenshots: Vec<String>,
}

/// The manifest of the marketplace in folder `root`, if it has one.
pub(crate) fn find_marketplace_manifest(root: &Path) -> Option<PathBuf> {
    MARKETPLACE_MANIFESTS
        .iter()
        .map(|relative| root.join(relative))
        .find(|path| path.is_file())
}

/// The marketplace folder a manifest file belongs to (the manifest must be at one of
/// [`MARKETPLACE_MANIFESTS`] inside it).
pub(crate) fn marketplace_root(manifest: &Path) -> Option<PathBuf> {
    MARKETPLACE_MANIFESTS.iter().find_map(|relative| {
        let mut current = manifest;
        for component in Path::new(relative).components().rev() {
            if current.file_name() != Some(component.as_os_str()) {
                return None;
            }
            current = current.parent()?;
        }
        Some(current.to_path_buf())
    })
}

/// Reads a manifest file as JSON of type `T`; the error says what is wrong.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let (bytes, longer) = agentwire_support::regular_file::read_regular(path, MAX_MANIFEST_BYTES)
        .map_err(|e| format!("{}: cannot read it: {e}", path.display()))?;
    if longer {
        return Err(format!(
            "{}: larger than {MAX_MANIFEST_BYTES} bytes",
            path.display()
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads the marketplace manifest `path`. Plugins whose entry cannot be used (an unknown source
/// kind, a path leaving the marketplace, a bad name) are left out with a log line; a manifest
/// that does not read, or whose name is not a plain word, is an error.
pub(crate) fn load_marketplace(path: &Path) -> Result<Marketplace, String> {
    let root = marketplace_root(path).ok_or_else(|| {
        format!(
            "{}: a marketplace manifest must be at {} inside the marketplace's folder",
            path.display(),
            MARKETPLACE_MANIFESTS.join(" or ")
        )
    })?;
    let raw: RawMarketplace = read_json(path)?;
    check_segment(&raw.name, "marketplace name").map_err(|e| format!("{}: {e}", path.display()))?;
    let mut plugins = Vec::new();
    for value in raw.plugins {
        match entry(&root, value) {
            Ok(entry) => {
                if !plugins.iter().any(|p: &Entry| p.name == entry.name) {
                    plugins.push(entry);
                }
            }
            Err(message) => tracing::warn!(
                marketplace = %path.display(),
                message,
                "skipping a plugin entry of a marketplace"
            ),
        }
    }
    Ok(Marketplace {
        name: raw.name,
        path: path.to_path_buf(),
        root,
        interface: raw
            .interface
            .and_then(|i| i.display_name)
            .map(|name| MarketplaceInterface::builder().display_name(name).build()),
        plugins,
    })
}

fn entry(root: &Path, value: serde_json::Value) -> Result<Entry, String> {
    let raw: RawEntry = serde_json::from_value(value).map_err(|e| e.to_string())?;
    check_segment(&raw.name, "plugin name")?;
    let source = match raw.source {
        RawSource::Path(path) | RawSource::Object(RawSourceObject::Local { path }) => {
            EntrySource::Local(root.join(inside(&path, "source.path")?))
        }
        RawSource::Object(RawSourceObject::Url {
            url,
            path,
            ref_name,
            sha,
        }) => EntrySource::Git {
            url: git_url(root, &url)?,
            path: path.map(|p| subdir(&p)).transpose()?,
            ref_name: non_empty(ref_name),
            sha: non_empty(sha),
        },
        RawSource::Object(RawSourceObject::GitSubdir {
            url,
            path,
            ref_name,
            sha,
        }) => EntrySource::Git {
            url: git_url(root, &url)?,
            path: Some(subdir(&path)?),
            ref_name: non_empty(ref_name),
            sha: non_empty(sha),
        },
    };
    Ok(Entry {
        name: raw.name,
        source,
        installation: raw
            .policy
            .installation
            .unwrap_or(PluginInstallPolicy::Available),
        authentication: raw
            .policy
            .authentication
            .unwrap_or(PluginAuthPolicy::OnInstall),
        category: non_empty(raw.category),
    })
}

fn non_empty(value: Option<String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

/// A `./relative` path of a manifest, checked to stay inside its folder.
pub(crate) fn inside(path: &str, field: &str) -> Result<PathBuf, String> {
    let relative = path
        .strip_prefix("./")
        .ok_or_else(|| format!("{field}: {path:?} must start with `./`"))?;
    relative_path(relative, field, path)
}

fn relative_path(relative: &str, field: &str, original: &str) -> Result<PathBuf, String> {
    let relative = Path::new(relative);
    if relative.as_os_str().is_empty()
        || relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(format!(
            "{field}: {original:?} must name something inside the folder (no `..`, not empty)"
        ));
    }
    Ok(relative.to_path_buf())
}

/// A folder inside a git repository (`./` optional).
fn subdir(path: &str) -> Result<String, String> {
    let trimmed = path.trim();
    let relative = trimmed.strip_prefix("./").unwrap_or(trimmed);
    relative_path(relative, "source.path", path)?;
    Ok(relative.trim_end_matches('/').to_owned())
}

/// A git plugin source's address: a URL, `owner/repo` on GitHub, or a path (relative paths
/// are taken from the marketplace's folder).
fn git_url(root: &Path, url: &str) -> Result<String, String> {
    let url = url.trim();
    if url.is_empty() {
        return Err("source.url: empty".to_owned());
    }
    if url.starts_with("./") || url.starts_with("../") {
        return Ok(root.join(url).display().to_string());
    }
    super::source::git_address(url)
        .ok_or_else(|| format!("source.url: {url:?} is not a git repository address"))
}

/// The manifest file of the plugin in folder `root`, if it has one.
pub(crate) fn find_plugin_manifest(root: &Path) -> Option<PathBuf> {
    PLUGIN_MANIFESTS
        .iter()
        .map(|relative| root.join(relative))
        .find(|path| path.is_file())
}

/// Reads the manifest of the plugin in folder `root`; `Ok(None)` when it has none.
pub(crate) fn load_plugin(root: &Path) -> Result<Option<PluginManifest>, String> {
    let Some(path) = find_plugin_manifest(root) else {
        return Ok(None);
    };
    let raw: RawPlugin = read_json(&path)?;
    let name = if raw.name.trim().is_empty() {
        file_name(root)
    } else {
        raw.name.trim().to_owned()
    };
    let declared = |field: &str, value: Option<&str>| -> Option<PathBuf> {
        let value = value?;
        match inside(value, field) {
            Ok(relative) => Some(root.join(relative)),
            Err(message) => {
                tracing::warn!(plugin = %root.display(), message, "ignoring a plugin manifest path");
                None
            }
        }
    };
    let mut skill_roots = Vec::new();
    let default_skills = root.join(DEFAULT_SKILLS);
    if default_skills.is_dir() {
        skill_roots.push(default_skills);
    }
    if let Some(path) = declared("skills", raw.skills.as_deref())
        && !skill_roots.contains(&path)
    {
        skill_roots.push(path);
    }
    let mcp_files = match &raw.mcp_servers {
        Some(serde_json::Value::String(path)) => {
            declared("mcpServers", Some(path)).into_iter().collect()
        }
        _ => {
            let default = root.join(DEFAULT_MCP_FILE);
            if default.is_file() {
                vec![default]
            } else {
                Vec::new()
            }
        }
    };
    let has_apps = declared("apps", raw.apps.as_deref())
        .unwrap_or_else(|| root.join(DEFAULT_APPS_FILE))
        .is_file();
    let has_hooks = raw.hooks.is_some() || root.join(DEFAULT_HOOKS_FILE).is_file();
    let interface = raw.interface.and_then(|raw| interface(root, raw));
    Ok(Some(PluginManifest {
        name,
        version: non_empty(raw.version),
        description: non_empty(raw.description),
        keywords: raw.keywords,
        skill_roots,
        mcp_files,
        has_apps,
        has_hooks,
        interface,
    }))
}

fn interface(root: &Path, raw: RawPluginInterface) -> Option<PluginInterface> {
    let asset = |field: &str, value: Option<&str>| -> Option<AbsolutePathBuf> {
        let relative = inside(value?, field).ok()?;
        Some(absolute(&root.join(relative)))
    };
    let default_prompt = default_prompts(raw.default_prompt);
    let screenshots: Vec<AbsolutePathBuf> = raw
        .screenshots
        .iter()
        .filter_map(|s| asset("interface.screenshots", Some(s)))
        .collect();
    let interface = PluginInterface::builder()
        .maybe_display_name(non_empty(raw.display_name))
        .maybe_short_description(non_empty(raw.short_description))
        .maybe_long_description(non_empty(raw.long_description))
        .maybe_developer_name(non_empty(raw.developer_name))
        .maybe_category(non_empty(raw.category))
        .capabilities(raw.capabilities)
        .maybe_website_url(non_empty(raw.website_url))
        .maybe_privacy_policy_url(non_empty(raw.privacy_policy_url))
        .maybe_terms_of_service_url(non_empty(raw.terms_of_service_url))
        .maybe_default_prompt(default_prompt)
        .maybe_brand_color(non_empty(raw.brand_color))
        .maybe_composer_icon(asset(
            "interface.composerIcon",
            raw.composer_icon.as_deref(),
        ))
        .maybe_logo(asset("interface.logo", raw.logo.as_deref()))
        .maybe_logo_dark(asset("interface.logoDark", raw.logo_dark.as_deref()))
        .screenshots(screenshots)
        .build();
    (interface != PluginInterface::default()).then_some(interface)
}

/// The manifest's `defaultPrompt` (a string or a list of strings), whitespace collapsed, at
/// most three, each at most 512 characters; others are dropped.
fn default_prompts(value: Option<serde_json::Value>) -> Option<Vec<String>> {
    let items = match value? {
        serde_json::Value::String(s) => vec![s],
        serde_json::Value::Array(items) => items
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => return None,
    };
    let prompts: Vec<String> = items
        .iter()
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty() && p.chars().count() <= MAX_DEFAULT_PROMPT_CHARS)
        .take(MAX_DEFAULT_PROMPTS)
        .collect();
    (!prompts.is_empty()).then_some(prompts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn a_marketplace_resolves_its_plugin_sources_and_drops_bad_entries() {
        let dir = tempfile::tempdir().expect("dir");
        let manifest = dir.path().join(".agents/plugins/marketplace.json");
        write(
            &manifest,
            r#"{"name":"team","interface":{"displayName":"Team"},"plugins":[
                {"name":"lint","source":{"source":"local","path":"./plugins/lint"},
                 "policy":{"installation":"NOT_AVAILABLE","authentication":"ON_USE"},"category":"Coding"},
                {"name":"short","source":"./plugins/short"},
                {"name":"remote","source":{"source":"url","url":"https://github.com/o/r","ref":"v1"}},
                {"name":"sub","source":{"source":"git-subdir","url":"../repo.git","path":"./p/sub"}},
                {"name":"escape","source":"./../outside"},
                {"name":"bad name","source":"./x"},
                {"name":"npm","source":{"source":"npm","package":"x"}}
            ]}"#,
        );
        let market = load_marketplace(&manifest).expect("reads");
        assert_eq!(market.name, "team");
        assert_eq!(market.root, dir.path());
        let names: Vec<&str> = market.plugins.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["lint", "short", "remote", "sub"]);
        assert_eq!(
            market.plugins[0].source,
            EntrySource::Local(dir.path().join("plugins/lint"))
        );
        assert_eq!(
            market.plugins[0].installation,
            PluginInstallPolicy::NotAvailable
        );
        assert_eq!(
            market.plugins[1].authentication,
            PluginAuthPolicy::OnInstall
        );
        assert_eq!(
            market.plugins[2].source,
            EntrySource::Git {
                url: "https://github.com/o/r.git".into(),
                path: None,
                ref_name: Some("v1".into()),
                sha: None
            }
        );
        let EntrySource::Git { url, path, .. } = &market.plugins[3].source else {
            panic!("git source");
        };
        assert!(url.ends_with("/../repo.git"));
        assert_eq!(path.as_deref(), Some("p/sub"));
        assert!(
            load_marketplace(&dir.path().join("marketplace.json"))
                .expect_err("wrong place")
                .contains("must be at")
        );
    }

    #[test]
    fn a_plugin_manifest_gives_its_skills_mcp_file_and_interface() {
        let dir = tempfile::tempdir().expect("dir");
        let root = dir.path().join("lint");
        write(
            &root.join(".codex-plugin/plugin.json"),
            r#"{"name":"lint","version":" 1.0 ","skills":"./more-skills","mcpServers":"./servers.json",
                "interface":{"displayName":"Lint","logo":"./logo.png","defaultPrompt":["  a   b ", 3, "c"],
                "screenshots":["../x.png"]}}"#,
        );
        std::fs::create_dir_all(root.join("skills")).expect("skills");
        let manifest = load_plugin(&root).expect("reads").expect("has one");
        assert_eq!(manifest.name, "lint");
        assert_eq!(manifest.version.as_deref(), Some("1.0"));
        assert_eq!(
            manifest.skill_roots,
            vec![root.join("skills"), root.join("more-skills")]
        );
        assert_eq!(manifest.mcp_files, vec![root.join("servers.json")]);
        let interface = manifest.interface.expect("interface");
        assert_eq!(interface.display_name.as_deref(), Some("Lint"));
        assert_eq!(
            interface.default_prompt,
            Some(vec!["a b".to_owned(), "c".to_owned()])
        );
        assert_eq!(interface.logo, Some(absolute(&root.join("logo.png"))));
        assert!(interface.screenshots.is_empty());
        assert_eq!(load_plugin(&dir.path().join("none")), Ok(None));
        write(&dir.path().join("bad/.codex-plugin/plugin.json"), "{");
        assert!(load_plugin(&dir.path().join("bad")).is_err());
    }
}
