//! A Codex rollout's `event_msg` lines rebuilt into turns and wire items (see
//! [`super::sessions`] for the file format and which events are read): the turn builder, the
//! conversion of Codex's item shapes, and the RFC 3339 times the lines carry.

use std::collections::HashMap;

use agentwire_protocol::{ThreadItem, ThreadTokenUsage, Turn, TurnStatus};
use agentwire_store::record::started_turn;
use serde_json::{Value, json};

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
pub(super) struct Builder {
    /// Whether items come from `item_completed` (else from the older events).
    pub(super) item_mode: bool,
    turns: Vec<Turn>,
    open: Option<OpenTurn>,
    /// The model of the last `turn_context`.
    pub(super) model: Option<String>,
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
    pub(super) fn new(created_at: i64) -> Self {
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

    pub(super) fn line(&mut self, line: &Value) {
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

    pub(super) fn finish(mut self) -> (Vec<Turn>, Option<(String, ThreadTokenUsage)>) {
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
pub(super) fn path_of(text: &str) -> String {
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
pub(super) fn shell_join<'a>(argv: impl Iterator<Item = &'a str>) -> String {
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
