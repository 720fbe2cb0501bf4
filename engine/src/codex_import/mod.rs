//! Bringing a Codex home over into this server's home: the work behind
//! `externalAgentConfig/detect` and `externalAgentConfig/import` ([`rpc`]) and behind
//! `agentwire import codex [--dry-run]` ([`Engine::import_codex`]).
//!
//! The Codex home is `$CODEX_HOME`, else `~/.codex`; this server's is `$AGENTWIRE_HOME`. What
//! is brought over, one migration item per kind:
//!
//! | item | from the Codex home | to this home |
//! |---|---|---|
//! | `CONFIG` | `config.toml` (every key but `mcp_servers`) and the API key of `auth.json` | the user `config.toml`, through the configuration write path; `auth.json` (0600), as `account/login/start` stores it |
//! | `MCP_SERVER_CONFIG` | `[mcp_servers.*]` of `config.toml` | `[mcp_servers.*]` of the user `config.toml` |
//! | `SKILLS` | `skills/<name>/` (with a `SKILL.md`) | `skills/<name>/` |
//! | `MEMORY` | `memories/` (`memory_summary.md` and what it was built from) | `memories/` (see [`crate::memory`]) |
//! | `SESSIONS` | `sessions/YYYY/MM/DD/rollout-*.jsonl`, named by `session_index.jsonl` | one thread each, in the thread store, under the session's own id ([`sessions`]) |
//!
//! Merging never overwrites what this home already has: a setting of `config.toml` is added
//! when this home's file lacks it, and a table (`model_providers`, `profiles`, …) gains the
//! entries it lacks; an MCP server, skill, memory or API key already here under the same name
//! is left as it is (reported as a failure when it differs). Keys of Codex's configuration that
//! this server does not use (see `agentwire_config::keys::CODEX_ONLY`) are brought over too, so the file
//! keeps working for Codex; keys neither knows are reported and left out. So importing twice
//! changes nothing the second time: a session already in the store (same id) is not copied
//! again, and detection lists only what is left to import.
//!
//! Repository set-up (`cwds` of detection, items with a `cwd`) is not copied: this server
//! reads a repository's `.codex/config.toml` and `.codex/skills/` where they are. Codex has no
//! home-wide `AGENTS.md` counterpart here, and no plugins, hooks, commands or sub-agents to
//! bring over; items of those kinds are answered with a failure saying so.
//!
//! Every finished import is added to the history ([`history`],
//! `$AGENTWIRE_HOME/external_agent_imports.json`).

pub(crate) mod config;
pub(crate) mod files;
pub(crate) mod history;
pub(crate) mod rpc;
mod session_events;
pub(crate) mod sessions;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentwire_protocol::{
    ExternalAgentConfigImportHistory, ExternalAgentConfigImportItemTypeFailure,
    ExternalAgentConfigImportItemTypeSuccess, ExternalAgentConfigImportTypeResult,
    ExternalAgentConfigMigrationItem, ExternalAgentConfigMigrationItemType as ItemType,
    MigrationDetails, SessionMigration,
};
use agentwire_support::timestamps::now_ms;

use crate::Engine;
use crate::threads::Threads;
use crate::threads::imported::Imported;

/// Sessions detection lists when the client sets no limit.
const DEFAULT_MAX_SESSIONS: u32 = 1000;

/// The Codex home to import from: `$CODEX_HOME` when set and not empty, else `~/.codex`.
pub(crate) fn codex_home() -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".codex"))
        })
}

/// What an import reads and writes.
#[derive(Debug, Clone)]
pub(crate) struct Importer {
    /// This server's home (`$AGENTWIRE_HOME`).
    pub home: PathBuf,
    /// The Codex home.
    pub codex: PathBuf,
    /// The configuration, written through its write path.
    pub config: Arc<agentwire_config::Store>,
    /// The thread store sessions become threads in.
    pub threads: Arc<Threads>,
}

/// Limits on the sessions detection lists.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SessionLimits {
    /// At most this many, newest first (`None`: [`DEFAULT_MAX_SESSIONS`]).
    pub max_sessions: Option<u32>,
    /// Only those changed within this many days (`None`: any age).
    pub max_age_days: Option<u32>,
}

/// The results of one migration item being built: its successes and failures.
#[derive(Debug, Clone)]
pub(crate) struct Tally {
    item_type: ItemType,
    successes: Vec<ExternalAgentConfigImportItemTypeSuccess>,
    failures: Vec<ExternalAgentConfigImportItemTypeFailure>,
}

impl Tally {
    fn new(item_type: ItemType) -> Self {
        Self {
            item_type,
            successes: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// `source` was brought over as `target` (or found already there).
    fn ok(&mut self, source: impl Into<String>, target: impl Into<String>, title: Option<String>) {
        self.successes.push(
            ExternalAgentConfigImportItemTypeSuccess::builder()
                .item_type(self.item_type)
                .source(source)
                .target(target)
                .maybe_title(title)
                .build(),
        );
    }

    /// `source` could not be brought over at step `stage` (`error_type` names the error).
    fn fail(
        &mut self,
        stage: &str,
        error_type: &str,
        source: Option<String>,
        message: impl Into<String>,
    ) {
        self.failures.push(
            ExternalAgentConfigImportItemTypeFailure::builder()
                .item_type(self.item_type)
                .failure_stage(stage)
                .error_type(error_type)
                .maybe_source(source)
                .message(message)
                .build(),
        );
    }

    fn into_wire(self) -> ExternalAgentConfigImportTypeResult {
        ExternalAgentConfigImportTypeResult::builder()
            .item_type(self.item_type)
            .successes(self.successes)
            .failures(self.failures)
            .build()
    }
}

impl Importer {
    /// The importer of `engine`'s home from `codex`.
    pub(crate) fn new(engine: &Engine, codex: PathBuf) -> Self {
        Self {
            home: engine.config.home.clone(),
            codex,
            config: engine.config_store.clone(),
            threads: engine.threads.clone(),
        }
    }

    /// Refuses a Codex home that is missing or is this server's home itself.
    fn check_homes(&self) -> Result<(), String> {
        if !self.codex.is_dir() {
            return Err(format!(
                "there is no Codex home at {}",
                self.codex.display()
            ));
        }
        let same = match (self.codex.canonicalize(), self.home.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if same {
            return Err(format!(
                "the Codex home {} is this server's home: there is nothing to import",
                self.codex.display()
            ));
        }
        Ok(())
    }

    /// What is left to import from the Codex home, one item per kind (none when there is no
    /// Codex home). Reads the disk and the thread store: call it off the async workers.
    pub(crate) fn detect(&self, limits: SessionLimits) -> Vec<ExternalAgentConfigMigrationItem> {
        if self.check_homes().is_err() {
            return Vec::new();
        }
        let codex = self.codex.display().to_string();
        let mut items = Vec::new();
        let pending = config::pending(self);
        if !pending.keys.is_empty() || pending.api_key {
            let mut what = Vec::new();
            if !pending.keys.is_empty() {
                what.push(format!(
                    "{} setting{} of {codex}/config.toml ({})",
                    pending.keys.len(),
                    plural(pending.keys.len()),
                    pending.keys.join(", ")
                ));
            }
            if pending.api_key {
                what.push(format!("the API key of {codex}/auth.json"));
            }
            items.push(
                ExternalAgentConfigMigrationItem::builder()
                    .item_type(ItemType::Config)
                    .description(format!("Import {}", what.join(" and ")))
                    .build(),
            );
        }
        if !pending.mcp_servers.is_empty() {
            items.push(
                ExternalAgentConfigMigrationItem::builder()
                    .item_type(ItemType::McpServerConfig)
                    .description(format!(
                        "Import the MCP server{} {} of {codex}/config.toml",
                        plural(pending.mcp_servers.len()),
                        pending.mcp_servers.join(", ")
                    ))
                    .details(
                        MigrationDetails::builder()
                            .mcp_servers(
                                pending
                                    .mcp_servers
                                    .iter()
                                    .map(|name| {
                                        agentwire_protocol::McpServerMigration::builder()
                                            .name(name.clone())
                                            .build()
                                    })
                                    .collect(),
                            )
                            .build(),
                    )
                    .build(),
            );
        }
        let skills = files::pending_skills(self);
        if !skills.is_empty() {
            items.push(
                ExternalAgentConfigMigrationItem::builder()
                    .item_type(ItemType::Skills)
                    .description(format!(
                        "Import the skill{} {} from {codex}/skills",
                        plural(skills.len()),
                        skills.join(", ")
                    ))
                    .details(
                        MigrationDetails::builder()
                            .skills(
                                skills
                                    .iter()
                                    .map(|name| {
                                        agentwire_protocol::SkillMigration::builder()
                                            .name(name.clone())
                                            .build()
                                    })
                                    .collect(),
                            )
                            .build(),
                    )
                    .build(),
            );
        }
        if let Some(memory) = files::pending_memory(self) {
            items.push(
                ExternalAgentConfigMigrationItem::builder()
                    .item_type(ItemType::Memory)
                    .description(format!("Import the memories of {codex}/memories"))
                    .details(MigrationDetails::builder().memory(memory).build())
                    .build(),
            );
        }
        let sessions = self.pending_sessions(limits);
        if !sessions.is_empty() {
            items.push(
                ExternalAgentConfigMigrationItem::builder()
                    .item_type(ItemType::Sessions)
                    .description(format!(
                        "Import {} session{} from {codex}/sessions as threads",
                        sessions.len(),
                        plural(sessions.len())
                    ))
                    .details(MigrationDetails::builder().sessions(sessions).build())
                    .build(),
            );
        }
        items
    }

    /// The Codex sessions not in the thread store yet, newest first, within `limits`.
    fn pending_sessions(&self, limits: SessionLimits) -> Vec<SessionMigration> {
        let names = sessions::session_names(&self.codex);
        let max = limits.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS) as usize;
        let oldest = limits.max_age_days.map(|days| {
            agentwire_store::meta::now().saturating_sub(i64::from(days).saturating_mul(86_400))
        });
        let mut found = Vec::new();
        for path in sessions::rollout_files(&self.codex) {
            if found.len() >= max {
                break;
            }
            let Ok(head) = sessions::head(&path, &names) else {
                continue;
            };
            if oldest.is_some_and(|oldest| head.modified < oldest) {
                continue;
            }
            if self.threads.has_thread(&head.id).unwrap_or(false) {
                continue;
            }
            found.push(
                SessionMigration::builder()
                    .cwd(head.cwd)
                    .path(head.path.display().to_string())
                    .maybe_title(head.title)
                    .build(),
            );
        }
        found
    }

    /// Imports `item`. Reads and writes the disk and the thread store: call it off the async
    /// workers.
    pub(crate) fn import(
        &self,
        item: &ExternalAgentConfigMigrationItem,
    ) -> ExternalAgentConfigImportTypeResult {
        let mut tally = Tally::new(item.item_type);
        if let Some(cwd) = item.cwd.as_deref().filter(|c| !c.is_empty()) {
            tally.fail(
                "detect",
                "repository_item",
                Some(cwd.to_owned()),
                format!(
                    "{cwd}: a repository's Codex set-up is not copied: this server reads its \
                     .codex/config.toml and .codex/skills/ where they are"
                ),
            );
            return tally.into_wire();
        }
        if let Err(reason) = self.check_homes() {
            tally.fail(
                "detect",
                "codex_home",
                Some(self.codex.display().to_string()),
                reason,
            );
            return tally.into_wire();
        }
        let details = item.details.clone().unwrap_or_default();
        match item.item_type {
            ItemType::Config => config::import_config(self, &mut tally),
            ItemType::McpServerConfig => {
                let names: Option<BTreeSet<String>> = (!details.mcp_servers.is_empty())
                    .then(|| details.mcp_servers.iter().map(|s| s.name.clone()).collect());
                config::import_mcp_servers(self, names.as_ref(), &mut tally);
            }
            ItemType::Skills => {
                let names: Option<BTreeSet<String>> = (!details.skills.is_empty())
                    .then(|| details.skills.iter().map(|s| s.name.clone()).collect());
                files::import_skills(self, names.as_ref(), &mut tally);
            }
            ItemType::Memory => files::import_memory(self, &mut tally),
            ItemType::Sessions => self.import_sessions(&details.sessions, &mut tally),
            other => {
                let kind = kind_name(other);
                tally.fail(
                    "import",
                    "unsupported_item",
                    None,
                    format!(
                        "{kind}: a Codex home import brings over CONFIG, MCP_SERVER_CONFIG, \
                         SKILLS, MEMORY and SESSIONS only"
                    ),
                );
            }
        }
        tally.into_wire()
    }

    /// Imports the sessions `wanted` (every Codex session when empty) as threads.
    fn import_sessions(&self, wanted: &[SessionMigration], tally: &mut Tally) {
        let names = sessions::session_names(&self.codex);
        let paths: Vec<PathBuf> = if wanted.is_empty() {
            sessions::rollout_files(&self.codex)
        } else {
            let root = self.codex.join("sessions").canonicalize().ok();
            let mut seen = BTreeSet::new();
            wanted
                .iter()
                .filter_map(|session| {
                    let path = Path::new(&session.path);
                    let inside = path
                        .canonicalize()
                        .ok()
                        .filter(|p| root.as_ref().is_some_and(|root| p.starts_with(root)))
                        .filter(|p| sessions::is_rollout_name(p));
                    match inside {
                        Some(path) => seen.insert(path.clone()).then_some(path),
                        None => {
                            tally.fail(
                                "validate",
                                "session_missing",
                                Some(session.path.clone()),
                                format!(
                                    "{}: not a Codex session under {}/sessions",
                                    session.path,
                                    self.codex.display()
                                ),
                            );
                            None
                        }
                    }
                })
                .collect()
        };
        for path in paths {
            self.import_session(&path, &names, tally);
        }
    }

    fn import_session(&self, path: &Path, names: &HashMap<String, String>, tally: &mut Tally) {
        let source = path.display().to_string();
        let head = match sessions::head(path, names) {
            Ok(head) => head,
            Err(reason) => {
                tally.fail(
                    "read",
                    "session_unreadable",
                    Some(source.clone()),
                    format!("{source}: {reason}"),
                );
                return;
            }
        };
        let title = head.title.clone();
        let thread = match sessions::read(path, head.title) {
            Ok(thread) => thread,
            Err(reason) => {
                tally.fail(
                    "convert",
                    "session_unreadable",
                    Some(source.clone()),
                    format!("{source}: {reason}"),
                );
                return;
            }
        };
        let id = thread.id.clone();
        match self.threads.import(thread) {
            Ok(Imported::Created | Imported::AlreadyThere) => tally.ok(source, id, title),
            Err(error) => tally.fail(
                "write",
                "thread_store",
                Some(source.clone()),
                format!("{source}: {error}"),
            ),
        }
    }
}

/// `""` or `"s"` for `n` things.
fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The history entry of a finished import.
pub(crate) fn history_entry(
    import_id: String,
    provider_id: Option<String>,
    results: &[ExternalAgentConfigImportTypeResult],
) -> ExternalAgentConfigImportHistory {
    ExternalAgentConfigImportHistory::builder()
        .import_id(import_id)
        .completed_at_ms(now_ms())
        .maybe_provider_id(provider_id)
        .successes(results.iter().flat_map(|r| r.successes.clone()).collect())
        .failures(results.iter().flat_map(|r| r.failures.clone()).collect())
        .build()
}

/// What `agentwire import codex` did (or, with `--dry-run`, would do).
#[derive(Debug, Clone)]
pub struct ImportReport {
    /// The report to print, one line per entry.
    pub text: String,
    /// Whether some entry could not be brought over (settings this server does not know,
    /// left out, do not count).
    pub failed: bool,
}

impl Engine {
    /// `agentwire import codex [--dry-run]`: imports everything the Codex home (`$CODEX_HOME`,
    /// else `~/.codex`) has that this home lacks, or with `dry_run` only says what that is.
    /// Blocks on the disk and the thread store: call it outside an async runtime.
    pub fn import_codex(&self, dry_run: bool) -> Result<ImportReport, String> {
        let codex = codex_home().ok_or("neither CODEX_HOME nor HOME is set")?;
        let importer = Importer::new(self, codex);
        importer.check_homes()?;
        let limits = SessionLimits {
            max_sessions: Some(u32::MAX),
            max_age_days: None,
        };
        let items = importer.detect(limits);
        let mut text = format!(
            "Codex home {} into {}\n",
            importer.codex.display(),
            importer.home.display()
        );
        if items.is_empty() {
            text.push_str("Nothing to import: everything is here already.\n");
            return Ok(ImportReport {
                text,
                failed: false,
            });
        }
        if dry_run {
            for item in &items {
                text.push_str(&format!(
                    "would import  {}: {}\n",
                    kind_name(item.item_type),
                    item.description
                ));
                for session in item.details.iter().flat_map(|d| &d.sessions) {
                    text.push_str(&format!("    {}", session.path));
                    if let Some(title) = &session.title {
                        text.push_str(&format!(" ({title})"));
                    }
                    text.push('\n');
                }
            }
            text.push_str("Nothing written (--dry-run).\n");
            return Ok(ImportReport {
                text,
                failed: false,
            });
        }
        let results: Vec<ExternalAgentConfigImportTypeResult> =
            items.iter().map(|item| importer.import(item)).collect();
        let import_id = uuid::Uuid::now_v7().to_string();
        let mut imported = 0;
        let mut failed = 0;
        for result in &results {
            for success in &result.successes {
                imported += 1;
                text.push_str(&format!(
                    "imported  {}: {} -> {}\n",
                    kind_name(result.item_type),
                    success.source.as_deref().unwrap_or_default(),
                    success.target.as_deref().unwrap_or_default()
                ));
            }
            for failure in &result.failures {
                // A setting this server does not know is left out as documented, not a failure
                // of the import.
                let left_out = failure.error_type.as_deref() == Some("unknown_key");
                if !left_out {
                    failed += 1;
                }
                text.push_str(&format!(
                    "{}  {}: {}\n",
                    if left_out { "left out" } else { "failed  " },
                    kind_name(result.item_type),
                    failure.message
                ));
            }
        }
        if let Err(error) = history::append(
            &importer.home,
            history_entry(import_id.clone(), None, &results),
        ) {
            text.push_str(&format!(
                "warning: the import history could not be written: {error}\n"
            ));
        }
        text.push_str(&format!(
            "{imported} imported, {failed} failed (import {import_id}).\n"
        ));
        Ok(ImportReport {
            text,
            failed: failed > 0,
        })
    }
}

/// The wire name of an item kind (`SESSIONS` …).
fn kind_name(kind: ItemType) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}
