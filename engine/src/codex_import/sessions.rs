//! Codex's saved sessions: finding them (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`,
//! names from `$CODEX_HOME/session_index.jsonl`) and reading one into an
//! [`ImportedThread`].
//!
//! A Codex rollout is one JSON object a line, `{"timestamp", "type", "payload"}`; the first is
//! `session_meta` (the session's id, working directory, start time, versions). What a thread
//! is made of comes from the `event_msg` lines:
//!
//! - `task_started` / `task_complete` / `turn_aborted` open and close turns;
//! - `item_completed` carries each finished item (`UserMessage`, `AgentMessage`, `Reasoning`,
//!   `CommandExecution`, `FileChange`) in Codex's own item shapes, converted here to the wire
//!   items; kinds with no counterpart here (web searches, MCP calls, images generated …) are
//!   left out;
//! - `token_count` carries the running token totals;
//! - `thread_rolled_back` takes the last `num_turns` turns back.
//!
//! Rollouts written before Codex recorded `item_completed` (its versions of 2025) hold the
//! older events instead (`user_message`, `agent_message`, `agent_reasoning`,
//! `exec_command_begin`/`_end`, `patch_apply_begin`/`_end`), read when a file has no
//! `item_completed` at all; turns there may have no `task_started`, and then each user message
//! begins one. The model's own transcript (`response_item` lines) is not read: the events say
//! the same in the shapes a client is shown.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use agentwire_protocol::{GitInfo, SessionSource, ThreadItem, ThreadTokenUsage, Turn, TurnStatus};
use serde_json::{Value, json};

use crate::threads::imported::ImportedThread;
use crate::threads::rollout::started_turn;

/// Largest rollout read, in bytes.
const MAX_ROLLOUT_BYTES: u64 = 512 * 1024 * 1024;
/// Longest first line read when only the session's header is wanted, in bytes.
const MAX_HEAD_BYTES: u64 = 8 * 1024 * 1024;
/// Largest `session_index.jsonl` read, in bytes.
const MAX_INDEX_BYTES: u64 = 64 * 1024 * 1024;

/// A saved session as a listing shows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SessionHead {
    /// The rollout file.
    pub path: PathBuf,
    /// The session's id (the thread's id once imported).
    pub id: String,
    /// Its working directory.
    pub cwd: String,
    /// Its name, from the session index.
    pub title: Option<String>,
    /// When the file last changed (Unix seconds).
    pub modified: i64,
}

/// Every rollout file under `codex/sessions`, newest first (their names begin with the time
/// they were started). Folders are not followed through symbolic links.
pub(crate) fn rollout_files(codex: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() && depth < 3 {
                walk(&path, depth + 1, out);
            } else if kind.is_file() && depth == 3 && is_rollout_name(&path) {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&codex.join("sessions"), 0, &mut files);
    files.sort_by(|a, b| b.file_name().cmp(&a.file_name()).then_with(|| b.cmp(a)));
    files
}

/// Whether `path` is named as Codex names its rollouts.
pub(crate) fn is_rollout_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
}

/// The names Codex gave its sessions: the last `thread_name` of each id in
/// `codex/session_index.jsonl`.
pub(crate) fn session_names(codex: &Path) -> HashMap<String, String> {
    let mut names = HashMap::new();
    let path = codex.join("session_index.jsonl");
    let Ok((bytes, _)) = crate::regular_file::read_regular(&path, MAX_INDEX_BYTES) else {
        return names;
    };
    for line in bytes.split(|b| *b == b'\n') {
        let Ok(entry) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let (Some(id), Some(name)) = (entry["id"].as_str(), entry["thread_name"].as_str()) else {
            continue;
        };
        let name = name.trim();
        if name.is_empty() {
            names.remove(id);
        } else {
            names.insert(id.to_owned(), name.to_owned());
        }
    }
    names
}

/// The header of the rollout at `path`: its `session_meta` line.
pub(crate) fn head(path: &Path, names: &HashMap<String, String>) -> Result<SessionHead, String> {
    let (file, _) = crate::regular_file::open_regular(path).map_err(|e| e.to_string())?;
    let modified = file
        .metadata()
        .ok()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let mut line = Vec::new();
    BufReader::new(file.take(MAX_HEAD_BYTES))
        .read_until(b'\n', &mut line)
        .map_err(|e| e.to_string())?;
    let meta = session_meta(&line)?;
    Ok(SessionHead {
        path: path.to_owned(),
        title: names.get(&meta.id).cloned(),
        id: meta.id,
        cwd: meta.cwd,
        modified,
    })
}

/// What a `session_meta` line says.
#[derive(Debug, Clone)]
struct Meta {
    id: String,
    session_id: String,
    created_at: i64,
    cwd: String,
    cli_version: Option<String>,
    originator: Option<String>,
    source: SessionSource,
    model_provider: Option<String>,
    git_info: Option<GitInfo>,
}

/// Reads the `session_meta` line `line`.
fn session_meta(line: &[u8]) -> Result<Meta, String> {
    let value: Value =
        serde_json::from_slice(line).map_err(|e| format!("the first line is not JSON ({e})"))?;
    if value["type"] != "session_meta" {
        return Err("the first line is not a `session_meta` record: not a Codex rollout".into());
    }
    let payload = &value["payload"];
    // Older rollouts nest the metadata one level down.
    let payload = if payload["meta"].is_object() {
        &payload["meta"]
    } else {
        payload
    };
    let id = payload["id"]
        .as_str()
        .ok_or("`session_meta` has no `id`")?
        .to_owned();
    crate::threads::imported::check_id(&id)?;
    let cwd = payload["cwd"]
        .as_str()
        .filter(|c| Path::new(c).is_absolute())
        .ok_or("`session_meta` has no absolute `cwd`")?
        .to_owned();
    let created_at = payload["timestamp"]
        .as_str()
        .or(value["timestamp"].as_str())
        .and_then(parse_time_ms)
        .map(|ms| ms.div_euclid(1000))
        .ok_or("`session_meta` has no readable `timestamp`")?;
    let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
    let git = &value["payload"]["git"];
    let git_info = git.is_object().then(|| {
        GitInfo::builder()
            .maybe_sha(text(&git["commit_hash"]))
            .maybe_branch(text(&git["branch"]))
            .maybe_origin_url(text(&git["repository_url"]))
            .build()
    });
    Ok(Meta {
        session_id: text(&payload["session_id"]).unwrap_or_else(|| id.clone()),
        id,
        created_at,
        cwd,
        cli_version: text(&payload["cli_version"]),
        originator: text(&payload["originator"]),
        source: serde_json::from_value(payload["source"].clone()).unwrap_or(SessionSource::Unknown),
        model_provider: text(&payload["model_provider"]),
        git_info,
    })
}

/// Reads the rollout at `path` into a thread to import; `name` is the session's name, if any.
pub(crate) fn read(path: &Path, name: Option<String>) -> Result<ImportedThread, String> {
    let (file, size) = crate::regular_file::open_regular(path).map_err(|e| e.to_string())?;
    if size > MAX_ROLLOUT_BYTES {
        return Err(format!(
            "{size} bytes: larger than the {MAX_ROLLOUT_BYTES} bytes read"
        ));
    }
    let mut lines = Vec::new();
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut first = None;
    loop {
        line.clear();
        if reader
            .read_until(b'\n', &mut line)
            .map_err(|e| e.to_string())?
            == 0
        {
            break;
        }
        if first.is_none() {
            first = Some(session_meta(&line)?);
            continue;
        }
        // A torn or foreign line is skipped, as Codex itself does.
        if let Ok(value) = serde_json::from_slice::<Value>(&line) {
            lines.push(value);
        }
    }
    let meta = first.ok_or("the file is empty")?;
    let mut builder = Builder::new(meta.created_at);
    builder.item_mode = lines
        .iter()
        .any(|l| l["type"] == "event_msg" && l["payload"]["type"] == "item_completed");
    for line in &lines {
        builder.line(line);
    }
    let model = builder.model.take();
    let (turns, token_usage) = builder.finish();
    Ok(ImportedThread {
        id: meta.id,
        session_id: meta.session_id,
        created_at: meta.created_at,
        cli_version: meta
            .cli_version
            .unwrap_or_else(|| crate::threads::meta::CLI_VERSION.to_owned()),
        source: meta.source,
        originator: meta.originator,
        git_info: meta.git_info,
        cwd: meta.cwd,
        model,
        model_provider: meta.model_provider,
        name,
        turns,
        token_usage,
    })
}

/// A turn being rebuilt.
#[derive(Debug)]
struct OpenTurn {
    turn: Turn,
    /// Opened by a user message, not by `task_started`: it ends where the next one begins.
    implicit: bool,
    /// Whether it holds a user message yet.
    has_user_message: bool,
}

/// Rebuilds turns line by line.
#[derive(Debug)]
struct Builder {
    /// Whether items come from `item_completed` (else from the older events).
    item_mode: bool,
    turns: Vec<Turn>,
    open: Option<OpenTurn>,
    /// The model of the last `turn_context`.
    model: Option<String>,
    /// The last token totals, and the turn they were reported in.
    usage: Option<(String, ThreadTokenUsage)>,
    /// `exec_command_begin` and `patch_apply_begin` events waiting for their end, by call id.
    begun: HashMap<String, Value>,
    /// Numbers ids made up for turns and items that have none.
    next_id: u64,
    /// Time of the last line (Unix milliseconds).
    now_ms: i64,
}

impl Builder {
    fn new(created_at: i64) -> Self {
        Self {
            item_mode: false,
            turns: Vec::new(),
            open: None,
            model: None,
            usage: None,
            begun: HashMap::new(),
            next_id: 0,
            now_ms: created_at.saturating_mul(1000),
        }
    }

    fn made_up_id(&mut self, kind: &str) -> String {
        self.next_id += 1;
        format!("imported-{kind}-{}", self.next_id)
    }

    fn line(&mut self, line: &Value) {
        if let Some(ms) = line["timestamp"].as_str().and_then(parse_time_ms) {
            self.now_ms = ms;
        }
        let payload = &line["payload"];
        match line["type"].as_str() {
            Some("turn_context") => {
                if let Some(model) = payload["model"].as_str().filter(|m| !m.is_empty()) {
                    self.model = Some(model.to_owned());
                }
            }
            Some("event_msg") => self.event(payload),
            _ => {}
        }
    }

    fn event(&mut self, event: &Value) {
        let now_s = self.now_ms.div_euclid(1000);
        match event["type"].as_str().unwrap_or_default() {
            "task_started" | "turn_started" => {
                self.close(None);
                let id = match event["turn_id"].as_str() {
                    Some(id) if !id.is_empty() => id.to_owned(),
                    _ => self.made_up_id("turn"),
                };
                let started = event["started_at"].as_i64().unwrap_or(now_s);
                self.open = Some(OpenTurn {
                    turn: started_turn(id, None, Some(started)),
                    implicit: false,
                    has_user_message: false,
                });
            }
            "task_complete" | "turn_complete" => {
                if let Some(open) = &mut self.open {
                    open.turn.completed_at = Some(event["completed_at"].as_i64().unwrap_or(now_s));
                    open.turn.duration_ms = event["duration_ms"].as_i64();
                }
                self.close(Some(TurnStatus::Completed));
            }
            "turn_aborted" => {
                if let Some(open) = &mut self.open {
                    open.turn.completed_at = Some(now_s);
                }
                self.close(Some(TurnStatus::Interrupted));
            }
            "thread_rolled_back" => {
                // The user took the last turns back: they are not part of the thread.
                self.close(None);
                let n = event["num_turns"].as_u64().unwrap_or(0);
                let keep = self
                    .turns
                    .len()
                    .saturating_sub(usize::try_from(n).unwrap_or(usize::MAX));
                self.turns.truncate(keep);
            }
            "token_count" => self.token_count(&event["info"]),
            "item_completed" if self.item_mode => {
                let started = event["started_at_ms"].as_i64();
                let completed = event["completed_at_ms"].as_i64();
                let turn_id = event["turn_id"].as_str().map(str::to_owned);
                if let Some(item) = convert_item(&event["item"], started, completed) {
                    let is_user = matches!(
                        item.kind,
                        agentwire_protocol::ThreadItemKind::UserMessage { .. }
                    );
                    self.push(item, is_user, turn_id);
                }
            }
            kind if !self.item_mode => self.older_event(kind, event),
            _ => {}
        }
    }

    /// The events of rollouts written before `item_completed`.
    fn older_event(&mut self, kind: &str, event: &Value) {
        let at = Some(self.now_ms);
        let wire = match kind {
            "user_message" => {
                let mut content = Vec::new();
                if let Some(text) = event["message"].as_str().filter(|t| !t.is_empty()) {
                    content.push(json!({"type": "text", "text": text, "text_elements": []}));
                }
                for url in event["images"].as_array().into_iter().flatten() {
                    if let Some(url) = url.as_str() {
                        content.push(json!({"type": "image", "url": url}));
                    }
                }
                for path in event["local_images"].as_array().into_iter().flatten() {
                    if let Some(path) = path.as_str() {
                        content.push(json!({"type": "localImage", "path": path}));
                    }
                }
                if content.is_empty() {
                    return;
                }
                let id = self.made_up_id("item");
                json!({"type": "userMessage", "id": id, "content": content, "clientId": null})
            }
            "agent_message" => {
                let Some(text) = event["message"].as_str() else {
                    return;
                };
                let id = self.made_up_id("item");
                json!({"type": "agentMessage", "id": id, "text": text})
            }
            "agent_reasoning" => {
                let Some(text) = event["text"].as_str() else {
                    return;
                };
                let id = self.made_up_id("item");
                json!({"type": "reasoning", "id": id, "summary": [text], "content": []})
            }
            "exec_command_begin" | "patch_apply_begin" => {
                if let Some(call) = event["call_id"].as_str() {
                    self.begun.insert(call.to_owned(), event.clone());
                }
                return;
            }
            "exec_command_end" => {
                let call = event["call_id"].as_str().unwrap_or_default().to_owned();
                let begin = self.begun.remove(&call).unwrap_or(Value::Null);
                let id = if call.is_empty() {
                    self.made_up_id("item")
                } else {
                    call
                };
                let command = if event["command"].is_null() {
                    &begin["command"]
                } else {
                    &event["command"]
                };
                let cwd = if event["cwd"].is_null() {
                    &begin["cwd"]
                } else {
                    &event["cwd"]
                };
                let exit = event["exit_code"].as_i64();
                let output = event["aggregated_output"]
                    .as_str()
                    .map(str::to_owned)
                    .or_else(|| {
                        let out = event["stdout"].as_str().unwrap_or_default();
                        let err = event["stderr"].as_str().unwrap_or_default();
                        (!out.is_empty() || !err.is_empty()).then(|| format!("{out}{err}"))
                    });
                let status = if exit == Some(0) {
                    "completed"
                } else {
                    "failed"
                };
                command_item(
                    &id,
                    command,
                    cwd,
                    status,
                    output,
                    exit,
                    duration_ms(&event["duration"]),
                    &begin["parsed_cmd"],
                )
            }
            "patch_apply_end" => {
                let call = event["call_id"].as_str().unwrap_or_default().to_owned();
                let begin = self.begun.remove(&call).unwrap_or(Value::Null);
                let id = if call.is_empty() {
                    self.made_up_id("item")
                } else {
                    call
                };
                let changes = if event["changes"].is_object() {
                    &event["changes"]
                } else {
                    &begin["changes"]
                };
                let status = if event["success"].as_bool() == Some(false) {
                    "failed"
                } else {
                    "completed"
                };
                json!({"type": "fileChange", "id": id, "status": status, "changes": file_changes(changes)})
            }
            _ => return,
        };
        if let Some(item) = to_item(wire, at, at) {
            let is_user = kind == "user_message";
            self.push(item, is_user, None);
        }
    }

    /// Adds `item` to the open turn, opening one when there is none (or, for a user message,
    /// when the open turn was opened by a user message of its own).
    fn push(&mut self, item: ThreadItem, is_user: bool, turn_id: Option<String>) {
        let starts_new = match &self.open {
            None => true,
            Some(open) => {
                (is_user && open.implicit && open.has_user_message)
                    || turn_id.as_ref().is_some_and(|id| *id != open.turn.id)
            }
        };
        if starts_new {
            self.close(Some(TurnStatus::Completed));
            let id = match turn_id {
                Some(id) if !id.is_empty() => id,
                _ => self.made_up_id("turn"),
            };
            self.open = Some(OpenTurn {
                turn: started_turn(id, None, Some(self.now_ms.div_euclid(1000))),
                implicit: true,
                has_user_message: false,
            });
        }
        if let Some(open) = &mut self.open {
            open.has_user_message |= is_user;
            open.turn.items.push(item);
        }
    }

    /// Ends the open turn: `status` for one opened by a user message (which ends where the
    /// next begins) or when the rollout says so; one opened by `task_started` that never
    /// finished was interrupted.
    fn close(&mut self, status: Option<TurnStatus>) {
        let Some(open) = self.open.take() else {
            return;
        };
        let mut turn = open.turn;
        turn.status = match status {
            Some(status) => status,
            None if open.implicit => TurnStatus::Completed,
            None => TurnStatus::Interrupted,
        };
        if turn.completed_at.is_none() && turn.status == TurnStatus::Completed {
            turn.completed_at = Some(self.now_ms.div_euclid(1000));
        }
        self.turns.push(turn);
    }

    /// A `token_count` event's `info`: the running totals.
    fn token_count(&mut self, info: &Value) {
        let breakdown = |u: &Value| {
            let n = |key: &str| u[key].as_i64().unwrap_or(0);
            json!({
                "inputTokens": n("input_tokens"),
                "cachedInputTokens": n("cached_input_tokens"),
                "cacheWriteInputTokens": n("cache_write_input_tokens"),
                "outputTokens": n("output_tokens"),
                "reasoningOutputTokens": n("reasoning_output_tokens"),
                "totalTokens": n("total_tokens"),
            })
        };
        if !info["total_token_usage"].is_object() {
            return;
        }
        let usage = json!({
            "total": breakdown(&info["total_token_usage"]),
            "last": breakdown(&info["last_token_usage"]),
            "modelContextWindow": info["model_context_window"].as_i64(),
        });
        let Ok(usage) = serde_json::from_value::<ThreadTokenUsage>(usage) else {
            return;
        };
        let turn = self
            .open
            .as_ref()
            .map(|o| o.turn.id.clone())
            .or_else(|| self.turns.last().map(|t| t.id.clone()));
        if let Some(turn) = turn {
            self.usage = Some((turn, usage));
        }
    }

    fn finish(mut self) -> (Vec<Turn>, Option<(String, ThreadTokenUsage)>) {
        self.close(None);
        let turns: Vec<Turn> = self
            .turns
            .into_iter()
            .filter(|t| !t.items.is_empty())
            .collect();
        let usage = self
            .usage
            .filter(|(turn, _)| turns.iter().any(|t| t.id == *turn));
        (turns, usage)
    }
}

/// One of Codex's items (the `item` of `item_completed`) as a wire item; `None` for kinds
/// with no counterpart here.
fn convert_item(
    item: &Value,
    started_ms: Option<i64>,
    completed_ms: Option<i64>,
) -> Option<ThreadItem> {
    let id = item["id"].as_str().filter(|id| !id.is_empty())?;
    let wire = match item["type"].as_str()? {
        "UserMessage" => {
            let content: Vec<Value> = item["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(user_input)
                .collect();
            json!({"type": "userMessage", "id": id, "content": content, "clientId": null})
        }
        "AgentMessage" => {
            let text: String = item["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|part| part["text"].as_str())
                .collect();
            json!({"type": "agentMessage", "id": id, "text": text})
        }
        "Reasoning" => json!({
            "type": "reasoning",
            "id": id,
            "summary": strings(&item["summary_text"]),
            "content": strings(&item["raw_content"]),
        }),
        "CommandExecution" => {
            let status = match item["status"].as_str() {
                Some("declined") => "declined",
                Some("completed") => "completed",
                _ => "failed",
            };
            command_item(
                id,
                &item["command"],
                &item["cwd"],
                status,
                item["aggregated_output"].as_str().map(str::to_owned),
                item["exit_code"].as_i64(),
                duration_ms(&item["duration"]),
                &item["parsed_cmd"],
            )
        }
        "FileChange" => {
            let status = match item["status"].as_str() {
                Some("declined") => "declined",
                Some("completed") => "completed",
                _ => "failed",
            };
            json!({"type": "fileChange", "id": id, "status": status, "changes": file_changes(&item["changes"])})
        }
        _ => return None,
    };
    to_item(wire, started_ms, completed_ms)
}

/// `wire` (a wire item without its times) as a [`ThreadItem`], or `None` if it is not one.
fn to_item(
    mut wire: Value,
    started_ms: Option<i64>,
    completed_ms: Option<i64>,
) -> Option<ThreadItem> {
    wire["startedAtMs"] = json!(started_ms);
    wire["completedAtMs"] = json!(completed_ms.or(started_ms));
    match serde_json::from_value(wire) {
        Ok(item) => Some(item),
        Err(error) => {
            tracing::debug!(%error, "Codex item left out");
            None
        }
    }
}

/// One part of a Codex user message as a wire input part.
fn user_input(part: &Value) -> Option<Value> {
    Some(match part["type"].as_str()? {
        "text" => json!({"type": "text", "text": part["text"].as_str()?, "text_elements": []}),
        "image" => json!({"type": "image", "url": part["image_url"].as_str()?}),
        "local_image" => json!({"type": "localImage", "path": part["path"].as_str()?}),
        _ => return None,
    })
}

/// A wire `commandExecution` item.
#[allow(clippy::too_many_arguments)]
fn command_item(
    id: &str,
    command: &Value,
    cwd: &Value,
    status: &str,
    output: Option<String>,
    exit_code: Option<i64>,
    duration_ms: Option<i64>,
    parsed: &Value,
) -> Value {
    let line = match command {
        Value::Array(argv) => shell_join(argv.iter().filter_map(Value::as_str)),
        Value::String(line) => line.clone(),
        _ => String::new(),
    };
    let cwd = cwd.as_str().map(path_of).unwrap_or_default();
    let mut actions: Vec<Value> = parsed
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|action| {
            let part = action["cmd"].as_str()?;
            Some(match action["type"].as_str()? {
                "read" => json!({"type": "read", "command": part, "name": action["name"].as_str().unwrap_or_default(), "path": action["path"].as_str().unwrap_or_default()}),
                "list_files" => json!({"type": "listFiles", "command": part, "path": action["path"]}),
                "search" => json!({"type": "search", "command": part, "query": action["query"], "path": action["path"]}),
                _ => json!({"type": "unknown", "command": part}),
            })
        })
        .collect();
    if actions.is_empty() {
        actions.push(json!({"type": "unknown", "command": line}));
    }
    json!({
        "type": "commandExecution",
        "id": id,
        "command": line,
        "cwd": cwd,
        "status": status,
        "commandActions": actions,
        "aggregatedOutput": output,
        "exitCode": exit_code,
        "durationMs": duration_ms,
    })
}

/// Codex's file changes (`{path: change}`, in either of its two shapes) as wire changes.
fn file_changes(changes: &Value) -> Vec<Value> {
    let Some(changes) = changes.as_object() else {
        return Vec::new();
    };
    changes
        .iter()
        .filter_map(|(path, change)| {
            // `{"type": "add", …}` now; `{"add": {…}}` in older rollouts.
            let (kind, body) = match change["type"].as_str() {
                Some(kind) => (kind.to_owned(), change),
                None => {
                    let (kind, body) = change.as_object()?.iter().next()?;
                    (kind.clone(), body)
                }
            };
            Some(match kind.as_str() {
                "add" => json!({"path": path, "kind": {"type": "add"}, "diff": body["content"].as_str().unwrap_or_default()}),
                "delete" => json!({"path": path, "kind": {"type": "delete"}, "diff": body["content"].as_str().unwrap_or_default()}),
                "update" => json!({
                    "path": path,
                    "kind": {"type": "update", "move_path": body["move_path"]},
                    "diff": body["unified_diff"].as_str().unwrap_or_default(),
                }),
                _ => return None,
            })
        })
        .collect()
}

/// Strings of a JSON array (others left out).
fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// A Codex duration (`{"secs", "nanos"}`, or milliseconds) in milliseconds.
fn duration_ms(duration: &Value) -> Option<i64> {
    if let Some(ms) = duration.as_i64() {
        return Some(ms);
    }
    let secs = duration["secs"].as_i64()?;
    let nanos = duration["nanos"].as_i64().unwrap_or(0);
    Some(secs.saturating_mul(1000).saturating_add(nanos / 1_000_000))
}

/// A path Codex may write as a `file://` URL, as a plain path.
fn path_of(text: &str) -> String {
    let Some(rest) = text.strip_prefix("file://") else {
        return text.to_owned();
    };
    // Percent-decoding: the URL escapes spaces and the like.
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = rest.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `argv` as one shell command line, quoting what needs it.
fn shell_join<'a>(argv: impl Iterator<Item = &'a str>) -> String {
    argv.map(|arg| {
        let plain = !arg.is_empty()
            && arg
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b));
        if plain {
            arg.to_owned()
        } else {
            format!("'{}'", arg.replace('\'', r"'\''"))
        }
    })
    .collect::<Vec<_>>()
    .join(" ")
}

/// An RFC 3339 time (`2026-12-06T02:53:11.240Z`, or with an offset) in Unix milliseconds.
pub(crate) fn parse_time_ms(text: &str) -> Option<i64> {
    let text = text.trim();
    let (date, time) = text.split_once(['T', 't', ' '])?;
    let mut date_parts = date.splitn(3, '-');
    let year: i64 = date_parts.next()?.parse().ok()?;
    let month: i64 = date_parts.next()?.parse().ok()?;
    let day: i64 = date_parts.next()?.parse().ok()?;
    let (clock, offset_s) = if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        (clock, 0)
    } else {
        let at = time.rfind(['+', '-'])?;
        let (clock, offset) = time.split_at(at);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let (h, m) = offset.get(1..)?.split_once(':')?;
        let offset: i64 = h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60;
        (clock, sign * offset)
    };
    let (hms, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    let mut hms_parts = hms.splitn(3, ':');
    let hour: i64 = hms_parts.next()?.parse().ok()?;
    let minute: i64 = hms_parts.next()?.parse().ok()?;
    let second: i64 = hms_parts.next()?.parse().ok()?;
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let millis: i64 = if fraction.is_empty() {
        0
    } else {
        let digits: String = fraction.chars().take(3).collect();
        if !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        format!("{digits:0<3}").parse().ok()?
    };
    // Days since 1970-01-01 of the civil date (proleptic Gregorian).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_s;
    Some(seconds * 1000 + millis)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentwire_protocol::ThreadItemKind;

    #[test]
    fn rfc3339_times_read_as_unix_milliseconds() {
        assert_eq!(parse_time_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_time_ms("2026-12-06T02:53:11.240Z"),
            Some(1_796_525_591_240)
        );
        assert_eq!(
            parse_time_ms("2026-12-06T03:53:11.240+01:00"),
            Some(1_796_525_591_240)
        );
        assert_eq!(parse_time_ms("2000-02-29T12:00:00Z"), Some(951_825_600_000));
        assert_eq!(parse_time_ms("yesterday"), None);
        assert_eq!(parse_time_ms("2026-13-01T00:00:00Z"), None);
    }

    #[test]
    fn commands_are_joined_as_a_shell_would_read_them() {
        assert_eq!(
            shell_join(["/bin/bash", "-lc", "echo hi"].into_iter()),
            "/bin/bash -lc 'echo hi'"
        );
        assert_eq!(shell_join(["echo", "it's"].into_iter()), r"echo 'it'\''s'");
        assert_eq!(path_of("file:///tmp/a%20b"), "/tmp/a b");
    }

    fn write(dir: &Path, lines: &[Value]) -> PathBuf {
        let path = dir.join("rollout-2026-12-06T02-53-11-x.jsonl");
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).expect("write rollout");
        path
    }

    fn meta() -> Value {
        json!({"timestamp": "2026-12-06T02:53:11.167Z", "type": "session_meta", "payload": {
            "id": "01a24945-0a7d-7332-a0c6-5899fe5fd39a", "timestamp": "2026-12-06T02:53:11.167Z",
            "cwd": "/work", "originator": "codex_cli_rs", "cli_version": "0.171.0", "source": "cli",
            "model_provider": "openai", "git": {"commit_hash": "abc", "branch": "main"}}})
    }

    #[test]
    fn a_current_rollout_becomes_turns_of_wire_items() {
        let dir = tempfile::tempdir().expect("dir");
        let ev = |ts: &str, payload: Value| json!({"timestamp": ts, "type": "event_msg", "payload": payload});
        let path = write(
            dir.path(),
            &[
                meta(),
                ev(
                    "2026-12-06T02:53:11.200Z",
                    json!({"type": "task_started", "turn_id": "t1", "started_at": 1796525591}),
                ),
                json!({"timestamp": "2026-12-06T02:53:11.210Z", "type": "turn_context", "payload": {"model": "gpt-5.1-codex"}}),
                ev(
                    "2026-12-06T02:53:11.239Z",
                    json!({"type": "item_completed", "turn_id": "t1", "item": {"type": "UserMessage", "id": "u1", "content": [{"type": "text", "text": "say hi", "text_elements": []}]}, "started_at_ms": 1796525591239_i64, "completed_at_ms": 1796525591239_i64}),
                ),
                ev(
                    "2026-12-06T02:53:11.331Z",
                    json!({"type": "item_completed", "turn_id": "t1", "item": {"type": "Reasoning", "id": "rs_1", "summary_text": ["**Thinking**"], "raw_content": []}}),
                ),
                ev(
                    "2026-12-06T02:53:11.402Z",
                    json!({"type": "item_completed", "turn_id": "t1", "item": {"type": "CommandExecution", "id": "call_1", "command": ["/bin/bash", "-lc", "echo hi"], "cwd": "file:///work", "parsed_cmd": [{"type": "unknown", "cmd": "echo hi"}], "status": "completed", "aggregated_output": "hi\n", "exit_code": 0, "duration": {"secs": 0, "nanos": 31576}}}),
                ),
                ev(
                    "2026-12-06T02:53:11.420Z",
                    json!({"type": "item_completed", "turn_id": "t1", "item": {"type": "FileChange", "id": "call_2", "changes": {"/work/hello.txt": {"type": "add", "content": "hi there\n"}}, "status": "completed"}}),
                ),
                ev(
                    "2026-12-06T02:53:11.430Z",
                    json!({"type": "item_completed", "turn_id": "t1", "item": {"type": "WebSearch", "id": "ws", "query": "x"}}),
                ),
                ev(
                    "2026-12-06T02:53:11.447Z",
                    json!({"type": "item_completed", "turn_id": "t1", "item": {"type": "AgentMessage", "id": "msg_2", "content": [{"type": "Text", "text": "Hello "}, {"type": "Text", "text": "there."}]}}),
                ),
                ev(
                    "2026-12-06T02:53:11.450Z",
                    json!({"type": "token_count", "info": {"total_token_usage": {"input_tokens": 20, "cached_input_tokens": 0, "output_tokens": 10, "reasoning_output_tokens": 0, "total_tokens": 30}, "last_token_usage": {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 5, "reasoning_output_tokens": 0, "total_tokens": 15}, "model_context_window": 258400}}),
                ),
                ev(
                    "2026-12-06T02:53:11.460Z",
                    json!({"type": "task_complete", "turn_id": "t1", "completed_at": 1796525591, "duration_ms": 263}),
                ),
                ev(
                    "2026-12-06T02:53:11.500Z",
                    json!({"type": "task_started", "turn_id": "gone"}),
                ),
                ev(
                    "2026-12-06T02:53:11.510Z",
                    json!({"type": "item_completed", "turn_id": "gone", "item": {"type": "UserMessage", "id": "u-gone", "content": [{"type": "text", "text": "oops"}]}}),
                ),
                ev(
                    "2026-12-06T02:53:11.520Z",
                    json!({"type": "task_complete", "turn_id": "gone"}),
                ),
                ev(
                    "2026-12-06T02:53:11.530Z",
                    json!({"type": "thread_rolled_back", "num_turns": 1}),
                ),
                ev(
                    "2026-12-06T02:53:12.000Z",
                    json!({"type": "task_started", "turn_id": "t2"}),
                ),
                ev(
                    "2026-12-06T02:53:12.100Z",
                    json!({"type": "item_completed", "turn_id": "t2", "item": {"type": "UserMessage", "id": "u2", "content": [{"type": "text", "text": "again"}]}}),
                ),
                json!("a line that is not an object"),
            ],
        );
        let thread = read(&path, Some("Named".into())).expect("read");
        assert_eq!(thread.id, "01a24945-0a7d-7332-a0c6-5899fe5fd39a");
        assert_eq!(thread.cwd, "/work");
        assert_eq!(thread.created_at, 1_796_525_591);
        assert_eq!(thread.model.as_deref(), Some("gpt-5.1-codex"));
        assert_eq!(thread.source, SessionSource::Cli);
        assert_eq!(
            thread.git_info.as_ref().and_then(|g| g.sha.as_deref()),
            Some("abc")
        );
        assert_eq!(thread.turns.len(), 2);
        let first = &thread.turns[0];
        assert_eq!(first.status, TurnStatus::Completed);
        assert_eq!(first.duration_ms, Some(263));
        let kinds: Vec<&str> = first
            .items
            .iter()
            .map(|i| match &i.kind {
                ThreadItemKind::UserMessage { .. } => "user",
                ThreadItemKind::Reasoning { .. } => "reasoning",
                ThreadItemKind::CommandExecution { .. } => "command",
                ThreadItemKind::FileChange { .. } => "patch",
                ThreadItemKind::AgentMessage { .. } => "agent",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["user", "reasoning", "command", "patch", "agent"]);
        let wire = serde_json::to_value(&first.items[2]).expect("serialize");
        assert_eq!(wire["command"], "/bin/bash -lc 'echo hi'");
        assert_eq!(wire["cwd"], "/work");
        assert_eq!(wire["durationMs"], 0);
        let agent = serde_json::to_value(&first.items[4]).expect("serialize");
        assert_eq!(agent["text"], "Hello there.");
        // The second turn never finished: it was interrupted.
        assert_eq!(thread.turns[1].status, TurnStatus::Interrupted);
        let (turn, usage) = thread.token_usage.expect("totals");
        assert_eq!(turn, "t1");
        assert_eq!(usage.total.total_tokens, 30);
        assert_eq!(usage.model_context_window, Some(258_400));
    }

    #[test]
    fn an_older_rollout_gets_a_turn_per_user_message() {
        let dir = tempfile::tempdir().expect("dir");
        let ev = |payload: Value| json!({"timestamp": "2025-06-01T10:00:00Z", "type": "event_msg", "payload": payload});
        let path = write(
            dir.path(),
            &[
                meta(),
                ev(json!({"type": "user_message", "message": "first"})),
                ev(json!({"type": "agent_reasoning", "text": "hmm"})),
                ev(
                    json!({"type": "exec_command_begin", "call_id": "c1", "command": ["ls", "-la"], "cwd": "/work", "parsed_cmd": [{"type": "list_files", "cmd": "ls -la", "path": null}]}),
                ),
                ev(
                    json!({"type": "exec_command_end", "call_id": "c1", "stdout": "a\n", "stderr": "", "exit_code": 2, "duration": {"secs": 1, "nanos": 500000000}}),
                ),
                ev(
                    json!({"type": "patch_apply_begin", "call_id": "p1", "changes": {"/work/a.txt": {"update": {"unified_diff": "@@ -1 +1 @@\n-a\n+b\n", "move_path": null}}}}),
                ),
                ev(json!({"type": "patch_apply_end", "call_id": "p1", "success": true})),
                ev(json!({"type": "agent_message", "message": "done"})),
                ev(json!({"type": "user_message", "message": "second"})),
                ev(json!({"type": "agent_message", "message": "ok"})),
            ],
        );
        let thread = read(&path, None).expect("read");
        assert_eq!(thread.turns.len(), 2);
        assert!(
            thread
                .turns
                .iter()
                .all(|t| t.status == TurnStatus::Completed)
        );
        assert_eq!(thread.turns[0].items.len(), 5);
        let command = serde_json::to_value(&thread.turns[0].items[2]).expect("serialize");
        assert_eq!(command["status"], "failed");
        assert_eq!(command["exitCode"], 2);
        assert_eq!(command["durationMs"], 1500);
        assert_eq!(command["commandActions"][0]["type"], "listFiles");
        let patch = serde_json::to_value(&thread.turns[0].items[3]).expect("serialize");
        assert_eq!(patch["changes"][0]["kind"]["type"], "update");
        assert_eq!(patch["changes"][0]["path"], "/work/a.txt");
    }

    #[test]
    fn a_file_that_is_not_a_codex_rollout_is_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let path = write(dir.path(), &[json!({"type": "thread", "version": 1})]);
        assert!(
            read(&path, None)
                .expect_err("not a rollout")
                .contains("session_meta")
        );
        let path = write(
            dir.path(),
            &[
                json!({"type": "session_meta", "payload": {"id": "../x", "cwd": "/w", "timestamp": "2026-01-01T00:00:00Z"}}),
            ],
        );
        assert!(read(&path, None).is_err());
    }

    #[test]
    fn sessions_are_listed_newest_first_with_their_names() {
        let codex = tempfile::tempdir().expect("codex");
        let day = |d: &str| {
            let dir = codex.path().join("sessions/2026/12").join(d);
            std::fs::create_dir_all(&dir).expect("day");
            dir
        };
        std::fs::write(day("05").join("rollout-2026-12-05T10-00-00-a.jsonl"), "").expect("a");
        std::fs::write(day("06").join("rollout-2026-12-06T10-00-00-b.jsonl"), "").expect("b");
        std::fs::write(day("06").join("notes.txt"), "").expect("other");
        let files = rollout_files(codex.path());
        let names: Vec<_> = files
            .iter()
            .filter_map(|p| p.file_name()?.to_str())
            .collect();
        assert_eq!(
            names,
            [
                "rollout-2026-12-06T10-00-00-b.jsonl",
                "rollout-2026-12-05T10-00-00-a.jsonl"
            ]
        );
        std::fs::write(
            codex.path().join("session_index.jsonl"),
            "{\"id\":\"b\",\"thread_name\":\"old\"}\n{\"id\":\"b\",\"thread_name\":\"New name\"}\nnot json\n",
        )
        .expect("index");
        assert_eq!(
            session_names(codex.path()).get("b").map(String::as_str),
            Some("New name")
        );
    }
}
