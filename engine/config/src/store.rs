//! The effective configuration, merged from its layers (see the module docs of [`super`]) and
//! cached until one of its files changes or is written.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use agentwire_protocol::{
    AbsolutePathBuf, Config, ConfigLayerMetadata, ConfigLayerSource, SandboxWorkspaceWrite,
};
use agentwire_providers::builtin::{default_model, is_named};
use agentwire_providers::settings::FIXTURE;
use agentwire_support::lock;

use super::defaults::{DefaultsSource, ThreadDefaults};
use super::file::ConfigFile;
use super::keys::{self, Problem, check_table, typed};
use super::layers::{self, FileLayer, PROJECT_FOLDERS, Stamp, project_dirs, read_file, stamp};
use super::overrides::{merge, parse_override, table_of, table_to_json, with_overrides};

/// One layer of the configuration.
#[derive(Debug, Clone)]
pub struct Layer {
    /// Where it comes from.
    pub source: ConfigLayerSource,
    /// The version of its contents.
    pub version: String,
    /// Its own settings.
    pub table: toml::Table,
    /// Why it is not in effect; `None` when it is.
    pub disabled_reason: Option<String>,
}

impl Layer {
    /// Its name and version.
    pub(crate) fn metadata(&self) -> ConfigLayerMetadata {
        ConfigLayerMetadata::builder()
            .name(self.source.clone())
            .version(self.version.clone())
            .build()
    }
}

/// The configuration as seen from one working directory (or from none).
#[derive(Debug)]
pub struct Effective {
    /// The typed settings.
    pub file: Arc<ConfigFile>,
    /// The merged settings, without unknown keys and values that do not read.
    pub merged: toml::Table,
    /// Every layer, lowest precedence first, disabled ones included.
    pub layers: Vec<Layer>,
    /// For each dotted key path set, the layer its value comes from.
    pub origins: BTreeMap<String, ConfigLayerMetadata>,
    /// What is wrong in the layers.
    pub problems: Vec<Problem>,
    /// The wire form of `merged`, made once.
    wire: OnceLock<Config>,
}

impl Effective {
    /// The merged settings in their wire form.
    pub fn wire_config(&self) -> Config {
        self.wire.get_or_init(|| wire_config(&self.merged)).clone()
    }
}

/// What a cached [`Effective`] was computed from.
type CacheKey = (u64, Vec<(PathBuf, Stamp)>);

/// The cached configurations, by working directory (`None`: no project layers).
type Cache = HashMap<Option<PathBuf>, (CacheKey, Arc<Effective>)>;

/// The configuration service: the layers, the cache, and the lock writers take.
#[derive(Debug)]
pub struct Store {
    user_path: PathBuf,
    builtin: ThreadDefaults,
    /// The `-c` flags (and `--profile`) as one table.
    session: toml::Table,
    session_version: String,
    session_problems: Vec<Problem>,
    /// Bumped by every write, so a cached value never outlives one.
    writes: AtomicU64,
    cache: Mutex<Cache>,
    /// Held by writers of the user file.
    write_lock: Mutex<()>,
}

impl Store {
    /// The configuration of `home`, with the built-in thread defaults `builtin`, the `-c`
    /// flags `flags` (flags that do not parse are reported as problems) and the `--profile`.
    pub fn new(
        home: &Path,
        builtin: ThreadDefaults,
        flags: &[String],
        profile: Option<&str>,
    ) -> Self {
        let mut parsed = Vec::new();
        let mut session_problems = Vec::new();
        for flag in flags {
            match parse_override(flag) {
                Ok(pair) => parsed.push(pair),
                Err(reason) => session_problems.push(Problem {
                    key_path: None,
                    summary: "invalid -c flag".to_owned(),
                    details: Some(reason),
                    path: None,
                    range: None,
                    unknown_key: false,
                }),
            }
        }
        if let Some(profile) = profile {
            parsed.push((
                vec!["profile".to_owned()],
                toml::Value::String(profile.to_owned()),
            ));
        }
        let session = table_of(&parsed);
        session_problems.extend(check_table(&session, &[]).into_iter().map(|mut p| {
            p.summary = format!("-c flag: {}", p.summary);
            p
        }));
        let session_version = layers::version_of(format!("{session:?}").as_bytes());
        Self {
            user_path: home.join("config.toml"),
            builtin,
            session,
            session_version,
            session_problems,
            writes: AtomicU64::new(0),
            cache: Mutex::new(HashMap::new()),
            write_lock: Mutex::new(()),
        }
    }

    /// `$AGENTWIRE_HOME/config.toml`.
    pub fn user_path(&self) -> &Path {
        &self.user_path
    }

    /// Serialises writers of the user file.
    pub fn write_guard(&self) -> MutexGuard<'_, ()> {
        lock(&self.write_lock)
    }

    /// Marks every cached value stale (after a write).
    pub fn invalidate(&self) {
        self.writes.fetch_add(1, Ordering::SeqCst);
    }

    /// The configuration as seen from `cwd` (absolute), or without project layers.
    pub fn effective(&self, cwd: Option<&Path>) -> Arc<Effective> {
        let dirs = cwd.map(project_dirs).unwrap_or_default();
        let mut files = vec![self.user_path.clone()];
        for dir in &dirs {
            for folder in PROJECT_FOLDERS {
                files.push(dir.join(folder).join("config.toml"));
            }
        }
        let key: CacheKey = (
            self.writes.load(Ordering::SeqCst),
            files.iter().map(|f| (f.clone(), stamp(f))).collect(),
        );
        let cwd_key = cwd.map(Path::to_owned);
        let reload = match lock(&self.cache).get(&cwd_key) {
            Some((cached_key, effective)) if *cached_key == key => return effective.clone(),
            Some(_) => true,
            None => false,
        };
        let effective = Arc::new(self.compute(&dirs, &key.1));
        if reload {
            // Read before for this cwd, and a file or a write changed since.
            agentwire_runtime::telemetry::config_reloaded(files.len(), effective.problems.len());
        }
        let mut cache = lock(&self.cache);
        if cache.len() > 64 {
            cache.clear();
        }
        cache.insert(cwd_key, (key, effective.clone()));
        effective
    }

    fn compute(&self, dirs: &[PathBuf], stamps: &[(PathBuf, Stamp)]) -> Effective {
        let user = read_file(&self.user_path);
        let mut problems = user.problems.clone();
        let mut layers = vec![Layer {
            source: ConfigLayerSource::user()
                .file(AbsolutePathBuf(
                    self.user_path.to_string_lossy().into_owned(),
                ))
                .build(),
            version: user.version.clone(),
            table: user.table.clone(),
            disabled_reason: None,
        }];
        // Trust comes from the user's own settings and flags, never from a project.
        let mut trusted_base = user.table.clone();
        merge(&mut trusted_base, &self.session);
        let trust = project_trust(&typed(&trusted_base).0, dirs);
        for (path, file_stamp) in stamps.iter().skip(1) {
            if file_stamp.is_none() {
                continue;
            }
            let file: FileLayer = read_file(path);
            problems.extend(file.problems.iter().cloned());
            let folder = path.parent().unwrap_or(path);
            layers.push(Layer {
                source: ConfigLayerSource::project()
                    .dot_codex_folder(AbsolutePathBuf(folder.to_string_lossy().into_owned()))
                    .build(),
                version: file.version,
                table: file.table,
                disabled_reason: trust.clone().err(),
            });
        }
        let session = Layer {
            source: ConfigLayerSource::SessionFlags,
            version: self.session_version.clone(),
            table: self.session.clone(),
            disabled_reason: None,
        };
        problems.extend(self.session_problems.iter().cloned());

        let mut below_profile = toml::Table::new();
        for layer in layers.iter().filter(|l| l.disabled_reason.is_none()) {
            merge(&mut below_profile, &layer.table);
        }
        let mut selecting = below_profile.clone();
        merge(&mut selecting, &session.table);
        if let Some(name) = selecting.get("profile").and_then(toml::Value::as_str) {
            let profile = selecting
                .get("profiles")
                .and_then(|p| p.get(name))
                .and_then(toml::Value::as_table);
            match profile {
                Some(table) => layers.push(Layer {
                    source: ConfigLayerSource::user()
                        .file(AbsolutePathBuf(
                            self.user_path.to_string_lossy().into_owned(),
                        ))
                        .profile(name.to_owned())
                        .build(),
                    version: user.version.clone(),
                    table: table.clone(),
                    disabled_reason: None,
                }),
                None => problems.push(Problem {
                    key_path: Some("profile".to_owned()),
                    summary: format!("profile `{name}` is not defined"),
                    details: Some(format!(
                        "add a [profiles.{}] table to {}",
                        keys::quote_segment(name),
                        self.user_path.display()
                    )),
                    path: None,
                    range: None,
                    unknown_key: false,
                }),
            }
        }
        layers.push(session);

        let mut merged = toml::Table::new();
        for layer in layers.iter().filter(|l| l.disabled_reason.is_none()) {
            merge(&mut merged, &layer.table);
        }
        let (file, dropped) = typed(&merged);
        if let Some(path) = &file.model_instructions_file
            && let Err(problem) = self.read_instructions_file(path)
        {
            problems.push(*problem);
        }
        merged.retain(|key, _| keys::USED.contains(&key) || keys::CODEX_ONLY.contains(&key));
        for path in &dropped {
            remove_path(&mut merged, path);
        }
        let mut origins = BTreeMap::new();
        for layer in layers.iter().filter(|l| l.disabled_reason.is_none()) {
            let mut leaves = Vec::new();
            leaf_paths(&layer.table, &mut Vec::new(), &mut leaves);
            for (top, path) in leaves {
                if merged.contains_key(&top) {
                    origins.insert(path, layer.metadata());
                }
            }
        }
        Effective {
            file: Arc::new(file),
            merged,
            layers,
            origins,
            problems,
            wire: OnceLock::new(),
        }
    }

    /// The text of `model_instructions_file` `path` (relative to `$AGENTWIRE_HOME`), or the
    /// problem saying why it cannot be used.
    fn read_instructions_file(&self, path: &Path) -> Result<String, Box<Problem>> {
        let home = self.user_path.parent().unwrap_or(Path::new("."));
        let path = home.join(path);
        let problem = |details: String| {
            Box::new(Problem {
                key_path: Some("model_instructions_file".to_owned()),
                summary: format!("cannot read model_instructions_file {}", path.display()),
                details: Some(details),
                path: None,
                range: None,
                unknown_key: false,
            })
        };
        // Only a regular file: reading a FIFO put in its place would hang.
        let meta = std::fs::metadata(&path).map_err(|e| problem(e.to_string()))?;
        if !meta.is_file() {
            return Err(problem("it is not a regular file".to_owned()));
        }
        let bytes = std::fs::read(&path).map_err(|e| problem(e.to_string()))?;
        String::from_utf8(bytes).map_err(|_| problem("the file is not UTF-8".to_owned()))
    }

    /// The thread defaults `config` gives: the built-in ones with what it sets.
    pub fn thread_defaults(&self, config: &ConfigFile) -> ThreadDefaults {
        let mut defaults = self.builtin.clone();
        if let Some(model) = config.model.clone().filter(|m| !m.is_empty()) {
            defaults.model = model;
        }
        if let Some(provider) = config.model_provider.clone().filter(|p| !p.is_empty()) {
            defaults.model_provider = provider;
        }
        // An HTTP provider never gets the fixture's model: its own default, else none (the
        // call asks the server; see `provider::builtin`).
        if defaults.model_provider != FIXTURE && !is_named(&defaults.model) {
            defaults.model = default_model(
                &defaults.model_provider,
                config.model_providers.get(&defaults.model_provider),
            )
            .unwrap_or_default();
        }
        if let Some(policy) = config.approval_policy.clone() {
            defaults.approval_policy = policy;
        }
        if let Some(mode) = config.sandbox_mode {
            defaults.sandbox = mode;
        }
        if let Some(table) = &config.sandbox_workspace_write {
            defaults.sandbox_workspace_write = SandboxWorkspaceWrite::builder()
                .writable_roots(table.writable_roots.clone())
                .network_access(table.network_access)
                .exclude_slash_tmp(table.exclude_slash_tmp)
                .exclude_tmpdir_env_var(table.exclude_tmpdir_env_var)
                .build();
        }
        if let Some(effort) = config
            .model_reasoning_effort
            .clone()
            .filter(|e| !e.0.is_empty())
        {
            defaults.reasoning_effort = Some(effort);
        }
        if config.instructions.is_some() {
            defaults.base_instructions = config.instructions.clone();
        }
        if let Some(path) = &config.model_instructions_file {
            match self.read_instructions_file(path) {
                Ok(text) => defaults.base_instructions = Some(text),
                // Reported as a configuration problem (see `compute`).
                Err(problem) => {
                    tracing::warn!(problem = %problem.text(), "base instructions not read")
                }
            }
        }
        if config.developer_instructions.is_some() {
            defaults.developer_instructions = config.developer_instructions.clone();
        }
        if let Some(max) = config.project_doc_max_bytes {
            defaults.project_doc_max_bytes = max;
        }
        if config.model_auto_compact_token_limit.is_some() {
            defaults.auto_compact_token_limit = config.model_auto_compact_token_limit;
        }
        if config.model_context_window.is_some() {
            defaults.model_context_window = config.model_context_window;
        }
        if config.tool_output_token_limit.is_some() {
            defaults.tool_output_token_limit = config.tool_output_token_limit;
        }
        defaults
    }
}

impl DefaultsSource for Store {
    fn defaults(
        &self,
        cwd: Option<&str>,
        overrides: Option<&BTreeMap<String, serde_json::Value>>,
    ) -> ThreadDefaults {
        let cwd = layers::absolute(cwd.unwrap_or("."));
        let effective = self.effective(Some(&cwd));
        match overrides.filter(|o| !o.is_empty()) {
            None => self.thread_defaults(&effective.file),
            Some(overrides) => {
                self.thread_defaults(&typed(&with_overrides(&effective.merged, Some(overrides))).0)
            }
        }
    }
}

/// Whether the project layers of `dirs` may take effect: `Err` with the reason when not.
fn project_trust(config: &ConfigFile, dirs: &[PathBuf]) -> Result<(), String> {
    let level = |dir: &Path| {
        let plain = dir.to_string_lossy().into_owned();
        let canonical = dir
            .canonicalize()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default();
        [plain, canonical]
            .iter()
            .find_map(|p| config.projects.get(p).and_then(|p| p.trust_level.clone()))
    };
    let levels: Vec<String> = dirs.iter().filter_map(|d| level(d)).collect();
    if levels.iter().any(|l| l == "untrusted") {
        return Err("the project is marked untrusted".to_owned());
    }
    if levels.iter().any(|l| l == "trusted") {
        return Ok(());
    }
    let root = dirs
        .first()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    Err(format!(
        "the project is not trusted; to use its configuration, add \
         [projects.\"{root}\"] with trust_level = \"trusted\" to $AGENTWIRE_HOME/config.toml"
    ))
}

/// Removes the value at `path` of `table`, if there is one.
fn remove_path(table: &mut toml::Table, path: &[String]) {
    match path {
        [] => {}
        [last] => {
            table.remove(last);
        }
        [first, rest @ ..] => {
            if let Some(toml::Value::Table(inner)) = table.get_mut(first) {
                remove_path(inner, rest);
            }
        }
    }
}

/// Every leaf (a value that is not a table) of `table`: its top-level key and dotted path.
fn leaf_paths(table: &toml::Table, prefix: &mut Vec<String>, out: &mut Vec<(String, String)>) {
    for (key, value) in table {
        prefix.push(key.clone());
        match value {
            toml::Value::Table(inner) if !inner.is_empty() => leaf_paths(inner, prefix, out),
            _ => {
                let segments: Vec<&str> = prefix.iter().map(String::as_str).collect();
                let (last, parents) = segments.split_last().unwrap_or((&"", &[]));
                out.push((prefix[0].clone(), keys::dotted(parents, last)));
            }
        }
        prefix.pop();
    }
}

/// `merged` as the wire's [`Config`]; a key whose value does not fit the wire type is left out.
pub(crate) fn wire_config(merged: &toml::Table) -> Config {
    let json = table_to_json(merged);
    if let Ok(config) = serde_json::from_value::<Config>(json.clone()) {
        return config;
    }
    let mut object = json.as_object().cloned().unwrap_or_default();
    let keys: Vec<String> = object.keys().cloned().collect();
    for key in keys {
        let mut single = serde_json::Map::new();
        if let Some(value) = object.get(&key) {
            single.insert(key.clone(), value.clone());
        }
        if serde_json::from_value::<Config>(serde_json::Value::Object(single)).is_err() {
            object.remove(&key);
        }
    }
    serde_json::from_value(serde_json::Value::Object(object)).unwrap_or_else(|_| empty_config())
}

/// A [`Config`] with nothing set.
fn empty_config() -> Config {
    serde_json::from_value(serde_json::json!({})).expect("every member of Config is optional")
}
