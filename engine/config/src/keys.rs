//! Checking a configuration file: which keys are known, which values have the right type, and
//! where in the file each problem is (for `configWarning` and for refusing writes).

use std::ops::Range;
use std::path::{Path, PathBuf};

use agentwire_protocol::{TextPosition, TextRange};
use agentwire_providers::settings::FIXTURE;
use toml_edit::{Document, Item, TableLike};

use super::file::ConfigFile;
use super::salvage::{Fault, Salvaged, salvage};

/// Top-level keys agentwire reads (see the module docs of [`super`]).
pub const USED: &[&str] = &[
    "model",
    "model_provider",
    "model_reasoning_effort",
    "model_reasoning_summary",
    "approval_policy",
    "sandbox_mode",
    "sandbox_workspace_write",
    "instructions",
    "model_instructions_file",
    "include_environment_context",
    "developer_instructions",
    "project_doc_max_bytes",
    "model_auto_compact_token_limit",
    // Model metadata overrides (catalog::families).
    "model_context_window",
    "model_supports_reasoning_summaries",
    "tool_output_token_limit",
    "shell_environment_policy",
    "profile",
    "profiles",
    "projects",
    "fixture_script",
    "model_providers",
    "mcp_servers",
    "store",
    // agentwire's own (issue 32 sandbox).
    "sandbox_limits",
    // agentwire's own (issue 32 fs/copy budget).
    "fs_copy_max_bytes",
    // model tools: `[tools.web_search]` (read leniently: Codex's `[tools]` booleans pass).
    "tools",
    // operations: `[otel]` exporters (read at server start) and `log_user_prompt`.
    "otel",
];

/// Top-level keys of Codex's `config.toml` that agentwire does not use: accepted silently and
/// passed through by `config/read`, never type-checked.
pub const CODEX_ONLY: &[&str] = &[
    "agents",
    "analytics",
    "approvals_reviewer",
    "apps",
    "background_terminal_max_timeout",
    "browser_use",
    "chatgpt_base_url",
    "check_for_update_on_startup",
    "cli_auth_credentials_store",
    "client_search_provider",
    "compact_prompt",
    "computer_use",
    "desktop",
    "disable_paste_burst",
    "experimental_compact_prompt_file",
    "experimental_instructions_file",
    "experimental_resume",
    "experimental_use_exec_command_tool",
    "experimental_use_freeform_apply_patch",
    "experimental_use_unified_exec_tool",
    "features",
    "file_opener",
    "forced_chatgpt_workspace_id",
    "forced_login_method",
    "hide_agent_reasoning",
    "history",
    "hooks",
    "include_apply_patch_tool",
    "include_plan_tool",
    "marketplaces",
    "mcp_oauth_credentials_store",
    "memories",
    "model_auto_compact_token_limit_scope",
    "model_max_output_tokens",
    "model_reasoning_summary_format",
    "model_verbosity",
    "notice",
    "notify",
    "oss_provider",
    "personality",
    "plugins",
    "preferred_auth_method",
    "project_doc_fallback_filenames",
    "project_root_markers",
    "review_model",
    "service_tier",
    "show_raw_agent_reasoning",
    "skills",
    "tui",
    "web_search",
    "windows",
    "windows_wsl_setup_acknowledged",
];

/// Keys that make no sense inside a `[profiles.<name>]` table.
const NOT_IN_PROFILE: &[&str] = &["profile", "profiles", "projects"];

/// One problem found in a configuration source.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// The dotted key path at fault; `None` for a syntax error.
    pub key_path: Option<String>,
    /// What is wrong, in one line.
    pub summary: String,
    /// The parser's or deserializer's own words.
    pub details: Option<String>,
    /// The file; `None` for `-c` flags.
    pub path: Option<PathBuf>,
    /// Where in the file.
    pub range: Option<TextRange>,
    /// Whether the key is unknown (rather than its value bad).
    pub unknown_key: bool,
}

impl Problem {
    /// The problem as one line: the summary and the details.
    pub fn text(&self) -> String {
        match &self.details {
            Some(details) => format!("{}: {details}", self.summary),
            None => self.summary.clone(),
        }
    }

    /// The same problem, found in `path`.
    pub(crate) fn in_file(mut self, path: &Path) -> Self {
        self.path = Some(path.to_owned());
        self
    }
}

/// What checking a file's text found.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    /// The parsed table; `None` after a syntax error.
    pub table: Option<toml::Table>,
    /// Every problem, in file order.
    pub problems: Vec<Problem>,
}

/// Parses and checks `text` (a whole `config.toml`).
pub fn check_text(text: &str) -> Checked {
    let document = match Document::parse(text) {
        Ok(document) => document,
        Err(error) => {
            return Checked {
                table: None,
                problems: vec![Problem {
                    key_path: None,
                    summary: "TOML syntax error".to_owned(),
                    details: Some(error.message().to_owned()),
                    path: None,
                    range: error.span().map(|span| range_of(text, span)),
                    unknown_key: false,
                }],
            };
        }
    };
    let table: toml::Table = match text.parse() {
        Ok(table) => table,
        Err(error) => {
            return Checked {
                table: None,
                problems: vec![Problem {
                    key_path: None,
                    summary: "TOML syntax error".to_owned(),
                    details: Some(error.to_string()),
                    path: None,
                    range: None,
                    unknown_key: false,
                }],
            };
        }
    };
    let mut problems = check_table(&table, &[]);
    for problem in &mut problems {
        if let Some(key_path) = &problem.key_path {
            problem.range = span_of(document.as_item(), key_path, problem.details.as_deref())
                .map(|span| range_of(text, span));
        }
    }
    Checked {
        table: Some(table),
        problems,
    }
}

/// The problems of `table`, whose keys sit under `prefix` (empty at the top level, or
/// `["profiles", name]`).
pub(crate) fn check_table(table: &toml::Table, prefix: &[&str]) -> Vec<Problem> {
    let in_profile = !prefix.is_empty();
    let mut problems = Vec::new();
    for (key, value) in table {
        let path = dotted(prefix, key);
        let used =
            USED.contains(&key.as_str()) && !(in_profile && NOT_IN_PROFILE.contains(&&**key));
        if !used {
            if !CODEX_ONLY.contains(&key.as_str()) {
                let hint = closest(key)
                    .map(|k| format!(" (did you mean `{}`?)", dotted(prefix, k)))
                    .unwrap_or_default();
                problems.push(Problem {
                    key_path: Some(path),
                    summary: format!("unknown configuration key `{}`{hint}", dotted(prefix, key)),
                    details: None,
                    path: None,
                    range: None,
                    unknown_key: true,
                });
            }
            continue;
        }
        if key == "profiles" && !in_profile {
            let Some(profiles) = value.as_table() else {
                problems.push(bad_value(path, "expected a table of profiles".to_owned()));
                continue;
            };
            for (name, profile) in profiles {
                match profile.as_table() {
                    Some(profile) => problems.extend(check_table(profile, &["profiles", name])),
                    None => problems.push(bad_value(
                        dotted(&["profiles"], name),
                        "a profile must be a table".to_owned(),
                    )),
                }
            }
            continue;
        }
        let mut at: Vec<String> = prefix.iter().map(|s| (*s).to_owned()).collect();
        at.push(key.clone());
        problems.extend(
            salvaged(key, &at, value)
                .faults
                .into_iter()
                .map(|fault| problem_of(&fault)),
        );
    }
    problems
}

/// What of `value`, the value of used top-level key `key` (at `path`: under a profile, say),
/// reads (see [`salvage`]).
fn salvaged(key: &str, path: &[String], value: &toml::Value) -> Salvaged {
    let check = |candidate: &toml::Value| check_value(key, candidate);
    salvage(path, value, &check, MAPS.contains(&key))
}

/// A key left out as a problem: an unknown key (with the known key closest to it, from the
/// deserializer's list), a bad value, or a table missing a key it needs.
fn problem_of(fault: &Fault) -> Problem {
    let segments: Vec<&str> = fault.path.iter().map(String::as_str).collect();
    let (key, table) = segments.split_last().unwrap_or((&"", &[]));
    let key_path = dotted(table, key);
    let place = if table.is_empty() {
        String::new()
    } else {
        format!(
            " in table [{}]",
            dotted(&table[..table.len() - 1], table[table.len() - 1])
        )
    };
    if fault.unknown {
        let hint = closest_in(key, &expected(&fault.reason))
            .map(|k| format!(" (did you mean `{k}`?)"))
            .unwrap_or_default();
        return Problem {
            key_path: Some(key_path),
            summary: format!("unknown configuration key `{key}`{place}{hint}"),
            details: None,
            path: None,
            range: None,
            unknown_key: true,
        };
    }
    if fault.reason.starts_with("missing field") {
        return Problem {
            summary: format!("table [{key_path}] is left out: it is incomplete"),
            key_path: Some(key_path),
            details: Some(fault.reason.clone()),
            path: None,
            range: None,
            unknown_key: false,
        };
    }
    Problem {
        summary: format!("invalid value for `{key}`{place}"),
        key_path: Some(key_path),
        details: Some(fault.reason.clone()),
        path: None,
        range: None,
        unknown_key: false,
    }
}

/// The keys a deserializer's "unknown field `x`, expected one of `a`, `b`" names as known.
fn expected(reason: &str) -> Vec<&str> {
    reason
        .split_once("expected")
        .map(|(_, list)| list.split('`').skip(1).step_by(2).collect())
        .unwrap_or_default()
}

/// The one of `known` closest to `key` (a likely typo), if one is close.
fn closest_in<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (distance(key, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 5))
        .min()
        .map(|(_, k)| k)
}

/// Checks one used top-level key's value by reading it into [`ConfigFile`].
fn check_value(key: &str, value: &toml::Value) -> Result<(), String> {
    let mut single = toml::Table::new();
    single.insert(key.to_owned(), value.clone());
    if key == "model_providers" {
        agentwire_providers::builtin::overlay(&mut single);
    }
    let config: ConfigFile = toml::Value::Table(single)
        .try_into()
        .map_err(|e: toml::de::Error| e.message().trim().to_owned())?;
    if config.model_providers.contains_key(FIXTURE) {
        return Err(format!(
            "`{FIXTURE}` is the built-in provider and takes no table; pick another id"
        ));
    }
    Ok(())
}

fn bad_value(key_path: String, reason: String) -> Problem {
    Problem {
        summary: format!("invalid value for `{key_path}`"),
        key_path: Some(key_path),
        details: Some(reason),
        path: None,
        range: None,
        unknown_key: false,
    }
}

/// Keys whose value is a table of independent entries (`[model_providers.<id>]` …): a bad
/// entry is left out on its own, the others still apply.
const MAPS: &[&str] = &["model_providers", "mcp_servers", "projects"];

/// The typed configuration of `table`: every used key that reads, and of one that does not,
/// what reads of it ([`salvage`]: only the keys at fault are left out, so one bad key does not
/// take the rest of its table down, and a bad key in a table overriding a built-in provider
/// leaves the built-in settings in place). Also returns the key paths left out.
pub(crate) fn typed(table: &toml::Table) -> (ConfigFile, Vec<Vec<String>>) {
    // The built-in providers are there without a table; a table of the same id merges over one.
    let mut table = table.clone();
    agentwire_providers::builtin::overlay(&mut table);
    let table = &table;
    if let Ok(config) = toml::Value::Table(table.clone()).try_into::<ConfigFile>()
        && !config.model_providers.contains_key(FIXTURE)
    {
        return (config, Vec::new());
    }
    let mut clean = toml::Table::new();
    let mut dropped = Vec::new();
    for (key, value) in table {
        if !USED.contains(&key.as_str()) {
            continue;
        }
        let salvaged = salvaged(key, std::slice::from_ref(key), value);
        if let Some(value) = salvaged.value {
            clean.insert(key.clone(), value);
        }
        dropped.extend(salvaged.faults.into_iter().map(|fault| fault.path));
    }
    let config = toml::Value::Table(clean).try_into().unwrap_or_default();
    (config, dropped)
}

/// `prefix` and `key` joined with dots; segments that are not bare keys are quoted.
pub fn dotted(prefix: &[&str], key: &str) -> String {
    prefix
        .iter()
        .copied()
        .chain(std::iter::once(key))
        .map(quote_segment)
        .collect::<Vec<_>>()
        .join(".")
}

/// A key path segment as written in a dotted path: bare when it can be, quoted otherwise.
pub fn quote_segment(segment: &str) -> String {
    let bare = !segment.is_empty()
        && segment
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        segment.to_owned()
    } else {
        format!("\"{}\"", segment.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// Splits a dotted key path (`a.b`, `projects."/home/me".trust_level`) into its segments.
pub fn split_key_path(path: &str) -> Result<Vec<String>, String> {
    let mut segments = Vec::new();
    let mut chars = path.chars().peekable();
    loop {
        let mut segment = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => segment.extend(chars.next()),
                    Some(c) => segment.push(c),
                    None => return Err(format!("`{path}`: unterminated quoted segment")),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' {
                    break;
                }
                segment.push(c);
                chars.next();
            }
            segment = segment.trim().to_owned();
        }
        if segment.is_empty() {
            return Err(format!("`{path}`: empty key path segment"));
        }
        segments.push(segment);
        match chars.next() {
            None => return Ok(segments),
            Some('.') => {}
            Some(c) => return Err(format!("`{path}`: unexpected `{c}` after a quoted segment")),
        }
    }
}

/// The known top-level key closest to `key` (a likely typo), if one is close.
fn closest(key: &str) -> Option<&'static str> {
    USED.iter()
        .chain(CODEX_ONLY)
        .map(|known| (distance(key, known), *known))
        .filter(|(d, known)| *d <= 2.max(known.len() / 5))
        .min()
        .map(|(_, known)| known)
}

/// Levenshtein distance.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = (previous + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(current + 1);
            previous = current;
        }
    }
    row[b.len()]
}

/// Where `key_path` is in the document: the span of its last key; of a nested key named in
/// `details` (`unknown field \`x\``) when there is one under it.
fn span_of(root: &Item, key_path: &str, details: Option<&str>) -> Option<Range<usize>> {
    let segments = split_key_path(key_path).ok()?;
    let mut item = root;
    let mut span = None;
    for segment in &segments {
        let (key, next) = item.as_table_like()?.get_key_value(segment)?;
        span = key.span().or(span);
        item = next;
    }
    let nested = details
        .and_then(|d| d.split('`').nth(1))
        .and_then(|name| find_key(item, name));
    nested.or(span)
}

/// The span of the first key named `name` at or below `item`.
fn find_key(item: &Item, name: &str) -> Option<Range<usize>> {
    let table = item_table(item)?;
    for (key, value) in table.iter() {
        if key == name
            && let Some((key, _)) = table.get_key_value(key)
            && let Some(span) = key.span()
        {
            return Some(span);
        }
        if let Some(span) = find_key(value, name) {
            return Some(span);
        }
    }
    None
}

fn item_table(item: &Item) -> Option<&dyn TableLike> {
    item.as_table_like()
}

/// 1-based line and column (in characters) of byte offset `at` of `text`.
fn position(text: &str, at: usize) -> TextPosition {
    let at = at.min(text.len());
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    TextPosition::builder()
        .line(line as u64)
        .column(column as u64)
        .build()
}

/// The text range of byte `span` of `text`.
pub(crate) fn range_of(text: &str, span: Range<usize>) -> TextRange {
    TextRange::builder()
        .start(position(text, span.start))
        .end(position(text, span.end))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_and_bad_values_are_found_with_their_place() {
        let text = "model = \"m\"\naproval_policy = \"never\"\n\n[sandbox_workspace_write]\nnetwork_acess = true\n[features]\nanything = 1\n";
        let checked = check_text(text);
        assert!(checked.table.is_some());
        assert_eq!(checked.problems.len(), 2, "{:?}", checked.problems);
        let typo = &checked.problems[0];
        assert_eq!(typo.key_path.as_deref(), Some("aproval_policy"));
        assert!(
            typo.summary.contains("did you mean `approval_policy`"),
            "{typo:?}"
        );
        assert_eq!(typo.range.as_ref().map(|r| r.start.line), Some(2));
        let nested = &checked.problems[1];
        assert_eq!(
            nested.key_path.as_deref(),
            Some("sandbox_workspace_write.network_acess")
        );
        assert_eq!(
            nested.summary,
            "unknown configuration key `network_acess` in table [sandbox_workspace_write] \
             (did you mean `network_access`?)"
        );
        assert_eq!(
            nested
                .range
                .as_ref()
                .map(|r| (r.start.line, r.start.column)),
            Some((5, 1))
        );
    }

    #[test]
    fn syntax_errors_have_a_line() {
        let checked = check_text("model = \"m\"\nsandbox_mode = \n");
        assert!(checked.table.is_none());
        assert_eq!(
            checked.problems[0].range.as_ref().map(|r| r.start.line),
            Some(2)
        );
    }

    #[test]
    fn bad_values_are_dropped_and_the_rest_kept() {
        let table: toml::Table =
            "model = \"m\"\nsandbox_mode = \"everything\"\napproval_policy = 3\n"
                .parse()
                .expect("toml");
        let (config, dropped) = typed(&table);
        assert_eq!(config.model.as_deref(), Some("m"));
        assert_eq!(dropped, vec![vec!["approval_policy"], vec!["sandbox_mode"]]);
        let problems = check_table(&table, &[]);
        assert!(problems[1].text().contains("everything"), "{problems:?}");
    }

    #[test]
    fn a_bad_key_leaves_the_rest_of_its_provider_table_in_effect() {
        let text = "[model_providers.good]\nbase_url = \"http://h\"\n[model_providers.bad]\n\
                    base_url = \"http://b\"\nenv_kye = \"K\"\nwire_api = \"pigeon\"\n\
                    request_max_retries = 1\n[model_providers.nourl]\nname = \"n\"\n";
        let checked = check_text(text);
        let found: Vec<(Option<&str>, Option<u64>, &str)> = checked
            .problems
            .iter()
            .map(|p| {
                (
                    p.key_path.as_deref(),
                    p.range.as_ref().map(|r| r.start.line),
                    p.summary.as_str(),
                )
            })
            .collect();
        assert_eq!(
            found,
            vec![
                (
                    Some("model_providers.bad.env_kye"),
                    Some(5),
                    "unknown configuration key `env_kye` in table [model_providers.bad] \
                     (did you mean `env_key`?)"
                ),
                (
                    Some("model_providers.bad.wire_api"),
                    Some(6),
                    "invalid value for `wire_api` in table [model_providers.bad]"
                ),
                (
                    Some("model_providers.nourl"),
                    Some(8),
                    "table [model_providers.nourl] is left out: it is incomplete"
                ),
            ]
        );
        assert!(checked.problems[2].text().contains("base_url"));
        let (config, dropped) = typed(&checked.table.expect("table"));
        assert!(config.model_providers.contains_key("good"));
        let bad = &config.model_providers["bad"];
        assert_eq!(
            (bad.base_url.as_str(), bad.request_max_retries),
            ("http://b", Some(1))
        );
        assert!(!config.model_providers.contains_key("nourl"));
        assert_eq!(
            dropped,
            vec![
                vec!["model_providers", "bad", "env_kye"],
                vec!["model_providers", "bad", "wire_api"],
                vec!["model_providers", "nourl"],
            ]
        );
    }

    #[test]
    fn a_typo_in_a_built_in_override_keeps_the_built_in_provider() {
        let text = "[model_providers.ollama]\nbsae_url = \"http://elsewhere/v1\"\n\
                    [mcp_servers.s]\ncommand = \"srv\"\n[mcp_servers.s.tools.t]\naproval_mode = \"prompt\"\n";
        let checked = check_text(text);
        let paths: Vec<_> = checked
            .problems
            .iter()
            .filter_map(|p| p.key_path.clone())
            .collect();
        assert_eq!(
            paths,
            vec![
                "mcp_servers.s.tools.t.aproval_mode",
                "model_providers.ollama.bsae_url"
            ]
        );
        assert!(
            checked.problems[0]
                .summary
                .contains("did you mean `approval_mode`")
        );
        let (config, _) = typed(&checked.table.expect("table"));
        assert_eq!(
            config.model_providers["ollama"].base_url,
            "http://localhost:11434/v1"
        );
        assert_eq!(config.mcp_servers["s"].command.as_deref(), Some("srv"));
        assert!(config.mcp_servers["s"].tools.contains_key("t"));
    }

    #[test]
    fn profiles_are_checked_like_the_top_level() {
        let table: toml::Table = "[profiles.fast]\nmodel = \"m\"\nmodle = \"x\"\nprofile = \"y\"\n"
            .parse()
            .expect("toml");
        let problems = check_table(&table, &[]);
        let paths: Vec<_> = problems.iter().filter_map(|p| p.key_path.clone()).collect();
        assert_eq!(paths, vec!["profiles.fast.modle", "profiles.fast.profile"]);
    }

    #[test]
    fn key_paths_split_and_quote() {
        assert_eq!(
            split_key_path("projects.\"/home/me\".trust_level").expect("path"),
            vec!["projects", "/home/me", "trust_level"]
        );
        assert!(split_key_path("a..b").is_err());
        assert_eq!(dotted(&["projects"], "/x"), "projects.\"/x\"");
    }
}
