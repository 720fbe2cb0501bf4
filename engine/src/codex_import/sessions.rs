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

use agentwire_protocol::{GitInfo, SessionSource};
use serde_json::Value;

use super::session_events::{Builder, parse_time_ms};
use crate::threads::imported::ImportedThread;

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
    let Ok((bytes, _)) = agentwire_support::regular_file::read_regular(&path, MAX_INDEX_BYTES)
    else {
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
    let (file, _) =
        agentwire_support::regular_file::open_regular(path).map_err(|e| e.to_string())?;
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
    let (file, size) =
        agentwire_support::regular_file::open_regular(path).map_err(|e| e.to_string())?;
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
            .unwrap_or_else(|| agentwire_store::meta::CLI_VERSION.to_owned()),
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

#[cfg(test)]
mod tests {
    use super::super::session_events::{path_of, shell_join};
    use super::*;
    use agentwire_protocol::ThreadItemKind;
    use agentwire_protocol::TurnStatus;
    use serde_json::json;

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
