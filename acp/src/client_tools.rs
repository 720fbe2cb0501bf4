//! The editor's file system and terminals as tools of the model.
//!
//! When the client's `initialize` offers `fs.readTextFile`, `fs.writeTextFile` or `terminal`,
//! `session/new` declares matching *dynamic tools* on the thread (`thread/start`'s
//! `dynamicTools`); the engine then sends each call of one as `item/tool/call`, which this
//! module answers through the client:
//!
//! | tool               | client requests                                                     | shown as                       |
//! |--------------------|---------------------------------------------------------------------|--------------------------------|
//! | `read_text_file`   | `fs/read_text_file`                                                 | `tool_call` `read`, location   |
//! | `write_text_file`  | `fs/read_text_file` (old text, when offered), `fs/write_text_file`  | `tool_call` `edit`, a `diff`   |
//! | `run_in_terminal`  | `terminal/create` (`sh -c`), `terminal/wait_for_exit`, `terminal/output`, `terminal/release` (`terminal/kill` on timeout or cancel) | `tool_call` `execute`, the terminal |
//!
//! The editor sees unsaved buffers and shows the terminals. Writes ask
//! `session/request_permission` in the `ask` and `read-only` modes, commands in every mode but
//! `full-access` (the client's terminals run outside the engine's sandbox); *allow always*
//! holds for the rest of the session. The engine's own shell and patch tools stay offered
//! (no `thread/start` setting withholds built-in tools); the tools' descriptions tell the model
//! to prefer these.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, CreateTerminalRequest, Diff, KillTerminalRequest, ReadTextFileRequest,
    ReleaseTerminalRequest, RequestPermissionRequest, SessionId, SessionNotification,
    SessionUpdate, Terminal, TerminalOutputRequest, ToolCallContent, ToolCallLocation,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind, WaitForTerminalExitRequest,
    WriteTextFileRequest,
};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::modes::Mode;
use crate::updates::absolute;

/// The tool that reads a file through the editor.
pub const READ_TEXT_FILE: &str = "read_text_file";
/// The tool that writes a file through the editor.
pub const WRITE_TEXT_FILE: &str = "write_text_file";
/// The tool that runs a command in an editor terminal.
pub const RUN_IN_TERMINAL: &str = "run_in_terminal";

/// Most bytes of a terminal's output the client keeps (and the model gets).
const TERMINAL_OUTPUT_BYTES: u64 = 256 * 1024;
/// How long a terminal command may run when the model gives no `timeout_ms`.
const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The longest `timeout_ms` honoured.
const MAX_TIMEOUT_MS: u64 = 600_000;

/// What the client offers of its file system and terminals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientOffer {
    /// `fs.readTextFile`.
    pub read: bool,
    /// `fs.writeTextFile`.
    pub write: bool,
    /// `terminal`.
    pub terminal: bool,
}

impl ClientOffer {
    /// What `capabilities` (from `initialize`) offer.
    pub fn of(capabilities: &ClientCapabilities) -> Self {
        Self {
            read: capabilities.fs.read_text_file,
            write: capabilities.fs.write_text_file,
            terminal: capabilities.terminal,
        }
    }

    /// The configuration overrides that withhold the engine's own tools the client replaces:
    /// the command tools when it offers a terminal (`features.shell_tool`), `apply_patch`
    /// when it writes files (`features.apply_patch_tool`). So the model has one way to run a
    /// command and one to write a file, and the editor sees both. Only `false` is ever set, so
    /// a user's configuration that withholds a tool still does.
    pub fn withheld_builtins(self) -> serde_json::Map<String, Value> {
        let mut config = serde_json::Map::new();
        if self.terminal {
            config.insert("features.shell_tool".to_owned(), Value::Bool(false));
        }
        if self.write {
            config.insert("features.apply_patch_tool".to_owned(), Value::Bool(false));
        }
        config
    }

    /// The dynamic tools (`thread/start`'s `dynamicTools`) for what the client offers.
    pub fn tool_specs(self) -> Vec<Value> {
        let mut tools = Vec::new();
        if self.read {
            tools.push(json!({
                "type": "function",
                "name": READ_TEXT_FILE,
                "description": "Reads a text file through the user's editor, which sees unsaved \
                    changes. Prefer it to shell commands such as cat or sed for reading files.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "The file: absolute, or relative to the working directory."},
                        "line": {"type": "integer", "minimum": 1, "description": "The first line to read (1-based); the whole file when left out."},
                        "limit": {"type": "integer", "minimum": 1, "description": "Most lines to read."}
                    },
                    "required": ["path"],
                    "additionalProperties": false
                }
            }));
        }
        if self.write {
            tools.push(json!({
                "type": "function",
                "name": WRITE_TEXT_FILE,
                "description": "Writes a whole text file through the user's editor (creates it \
                    or replaces its content); the user sees the change as a diff. Prefer it to \
                    shell redirections for writing files.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "The file: absolute, or relative to the working directory."},
                        "content": {"type": "string", "description": "The file's complete new content."}
                    },
                    "required": ["path", "content"],
                    "additionalProperties": false
                }
            }));
        }
        if self.terminal {
            tools.push(json!({
                "type": "function",
                "name": RUN_IN_TERMINAL,
                "description": "Runs a shell command (sh -c) in a terminal the user's editor \
                    shows, waits for it to exit and returns its output and exit status.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "command": {"type": "string", "description": "The command line."},
                        "cwd": {"type": "string", "description": "Where to run it: absolute, or relative to the working directory; the working directory when left out."},
                        "timeout_ms": {"type": "integer", "minimum": 1, "description": "Stop it after this many milliseconds (120000 when left out, 600000 at most)."}
                    },
                    "required": ["command"],
                    "additionalProperties": false
                }
            }));
        }
        tools
    }
}

/// Whether `tool` is one of the client tools.
pub fn is_client_tool(tool: &str) -> bool {
    matches!(tool, READ_TEXT_FILE | WRITE_TEXT_FILE | RUN_IN_TERMINAL)
}

/// The ACP kind and title of a call of client tool `tool` with `arguments`, and where it
/// points; `None` for other tools.
pub fn presentation(
    cwd: &Path,
    tool: &str,
    arguments: &Value,
) -> Option<(ToolKind, String, Vec<ToolCallLocation>)> {
    let path = arguments["path"].as_str().map(|p| absolute(cwd, p));
    let location = || {
        path.clone()
            .map(|p| vec![ToolCallLocation::new(p)])
            .unwrap_or_default()
    };
    let shown = || {
        path.as_ref()
            .map_or_else(|| "a file".to_owned(), |p| p.display().to_string())
    };
    match tool {
        READ_TEXT_FILE => Some((ToolKind::Read, format!("Read {}", shown()), location())),
        WRITE_TEXT_FILE => Some((ToolKind::Edit, format!("Write {}", shown()), location())),
        RUN_IN_TERMINAL => Some((
            ToolKind::Execute,
            arguments["command"]
                .as_str()
                .unwrap_or("a command")
                .to_owned(),
            Vec::new(),
        )),
        _ => None,
    }
}

/// The `item/tool/call` answer: `text` for the model, and whether the call succeeded.
pub fn answer(text: impl Into<String>, success: bool) -> Value {
    json!({"contentItems": [{"type": "inputText", "text": text.into()}], "success": success})
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    path: String,
    #[serde(default)]
    line: Option<u32>,
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TerminalArgs {
    command: String,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

/// Which kinds of call the user allowed for the rest of the session (*allow always*).
#[derive(Debug, Default)]
pub struct Allowed(Mutex<HashSet<&'static str>>);

impl Allowed {
    fn has(&self, tool: &'static str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tool)
    }

    fn add(&self, tool: &'static str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(tool);
    }
}

/// One call of a client tool: the session it runs in and what it needs.
pub struct Call<'a> {
    /// The connection to the client.
    pub cx: &'a ConnectionTo<Client>,
    /// The session (thread).
    pub session_id: &'a SessionId,
    /// The session's working directory.
    pub cwd: &'a Path,
    /// The session's mode (decides whether to ask).
    pub mode: Mode,
    /// What the client offers.
    pub offer: ClientOffer,
    /// The session's *allow always* answers.
    pub allowed: &'a Allowed,
    /// The tool call (the engine's item id).
    pub call_id: &'a str,
    /// Cancelled when the prompt is cancelled.
    pub cancel: &'a CancellationToken,
}

/// Sends the client a `tool_call_update` of call `call_id` in session `session_id` (a client
/// that has gone is logged, not an error).
pub fn send_update(
    cx: &ConnectionTo<Client>,
    session_id: &SessionId,
    call_id: &str,
    fields: ToolCallUpdateFields,
) {
    let update = SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call_id.to_owned(), fields));
    if let Err(e) = cx.send_notification(SessionNotification::new(session_id.clone(), update)) {
        tracing::debug!(error = ?e, "tool call update not delivered");
    }
}

impl Call<'_> {
    fn update(&self, fields: ToolCallUpdateFields) {
        send_update(self.cx, self.session_id, self.call_id, fields);
    }

    /// Whether the user lets the call run: asked unless the mode or an earlier *allow always*
    /// allows it.
    async fn permitted(&self, tool: &'static str, ask: bool, fields: ToolCallUpdateFields) -> bool {
        if !ask || self.allowed.has(tool) {
            return true;
        }
        let request = RequestPermissionRequest::new(
            self.session_id.clone(),
            ToolCallUpdate::new(self.call_id.to_owned(), fields),
            crate::turn::options(),
        );
        let answer = self
            .cx
            .send_request(request)
            .block_task()
            .await
            .map(|response| response.outcome);
        match crate::turn::decision(answer) {
            agentwire_mcp_server::approvals::HostDecision::Accept => true,
            agentwire_mcp_server::approvals::HostDecision::AcceptForSession => {
                self.allowed.add(tool);
                true
            }
            _ => false,
        }
    }

    /// Runs client tool `tool` with `arguments`; the `item/tool/call` answer.
    pub async fn run(&self, tool: &str, arguments: Value) -> Value {
        let result = match tool {
            READ_TEXT_FILE => self.read(arguments).await,
            WRITE_TEXT_FILE => self.write(arguments).await,
            RUN_IN_TERMINAL => self.terminal(arguments).await,
            other => Err(format!("`{other}` is not a tool of the editor")),
        };
        match result {
            Ok(answer) => answer,
            Err(reason) => {
                self.update(
                    ToolCallUpdateFields::new()
                        .content(vec![ToolCallContent::from(reason.clone())]),
                );
                answer(reason, false)
            }
        }
    }

    fn parse<T: for<'de> Deserialize<'de>>(tool: &str, arguments: Value) -> Result<T, String> {
        serde_json::from_value(arguments)
            .map_err(|e| format!("invalid arguments for `{tool}`: {e}"))
    }

    async fn read(&self, arguments: Value) -> Result<Value, String> {
        let args: ReadArgs = Self::parse(READ_TEXT_FILE, arguments)?;
        if !self.offer.read {
            return Err("the editor does not offer reading files (fs.readTextFile)".to_owned());
        }
        let path = absolute(self.cwd, &args.path);
        let request = ReadTextFileRequest::new(self.session_id.clone(), path.clone())
            .line(args.line)
            .limit(args.limit);
        let read = self
            .cx
            .send_request(request)
            .block_task()
            .await
            .map_err(|e| {
                format!(
                    "the editor could not read {}: {}",
                    path.display(),
                    e.message
                )
            })?;
        Ok(answer(read.content, true))
    }

    async fn write(&self, arguments: Value) -> Result<Value, String> {
        let args: WriteArgs = Self::parse(WRITE_TEXT_FILE, arguments)?;
        if !self.offer.write {
            return Err("the editor does not offer writing files (fs.writeTextFile)".to_owned());
        }
        let path = absolute(self.cwd, &args.path);
        // The text before, for the diff: the editor's buffer when it offers reads.
        let old = if self.offer.read {
            self.cx
                .send_request(ReadTextFileRequest::new(
                    self.session_id.clone(),
                    path.clone(),
                ))
                .block_task()
                .await
                .ok()
                .map(|read| read.content)
        } else {
            let disk = path.clone();
            tokio::task::spawn_blocking(move || std::fs::read_to_string(disk).ok())
                .await
                .ok()
                .flatten()
        };
        let diff = Diff::new(path.clone(), args.content.clone()).old_text(old);
        let content = vec![ToolCallContent::Diff(diff)];
        let locations = vec![ToolCallLocation::new(path.clone())];
        let ask = matches!(self.mode, Mode::Ask | Mode::ReadOnly);
        let shown = ToolCallUpdateFields::new()
            .content(content.clone())
            .locations(locations.clone());
        if !self.permitted(WRITE_TEXT_FILE, ask, shown.clone()).await {
            return Err(format!(
                "the user declined writing {}; do not retry it without asking",
                path.display()
            ));
        }
        self.cx
            .send_request(WriteTextFileRequest::new(
                self.session_id.clone(),
                path.clone(),
                args.content.clone(),
            ))
            .block_task()
            .await
            .map_err(|e| {
                format!(
                    "the editor could not write {}: {}",
                    path.display(),
                    e.message
                )
            })?;
        self.update(shown);
        Ok(answer(
            format!("Wrote {} bytes to {}.", args.content.len(), path.display()),
            true,
        ))
    }

    async fn terminal(&self, arguments: Value) -> Result<Value, String> {
        let args: TerminalArgs = Self::parse(RUN_IN_TERMINAL, arguments)?;
        if !self.offer.terminal {
            return Err("the editor does not offer terminals".to_owned());
        }
        let cwd = args
            .cwd
            .as_deref()
            .map_or_else(|| self.cwd.to_owned(), |c| absolute(self.cwd, c));
        let ask = self.mode != Mode::FullAccess;
        let shown = ToolCallUpdateFields::new()
            .kind(ToolKind::Execute)
            .title(args.command.clone())
            .raw_input(json!({"command": args.command, "cwd": cwd}));
        if !self.permitted(RUN_IN_TERMINAL, ask, shown).await {
            return Err(format!(
                "the user declined running `{}`; do not retry it without asking",
                args.command
            ));
        }
        let created = self
            .cx
            .send_request(
                CreateTerminalRequest::new(self.session_id.clone(), "sh")
                    .args(vec!["-c".to_owned(), args.command.clone()])
                    .cwd(cwd.clone())
                    .output_byte_limit(TERMINAL_OUTPUT_BYTES),
            )
            .block_task()
            .await
            .map_err(|e| format!("the editor could not open a terminal: {}", e.message))?;
        let id = created.terminal_id;
        self.update(
            ToolCallUpdateFields::new()
                .content(vec![ToolCallContent::Terminal(Terminal::new(id.clone()))]),
        );
        let timeout = Duration::from_millis(
            args.timeout_ms
                .unwrap_or(DEFAULT_TIMEOUT_MS)
                .clamp(1, MAX_TIMEOUT_MS),
        );
        let waited = self.cx.send_request(WaitForTerminalExitRequest::new(
            self.session_id.clone(),
            id.clone(),
        ));
        let stopped = tokio::select! {
            exit = waited.block_task() => match exit {
                Ok(_) => None,
                Err(e) => Some(format!("waiting for the command failed: {}", e.message)),
            },
            () = tokio::time::sleep(timeout) => Some(format!(
                "the command was stopped after {} ms", timeout.as_millis()
            )),
            () = self.cancel.cancelled() => Some("the user cancelled the command".to_owned()),
        };
        if stopped.is_some() {
            let kill = KillTerminalRequest::new(self.session_id.clone(), id.clone());
            if let Err(e) = self.cx.send_request(kill).block_task().await {
                tracing::debug!(error = ?e, "terminal/kill failed");
            }
        }
        let output = self
            .cx
            .send_request(TerminalOutputRequest::new(
                self.session_id.clone(),
                id.clone(),
            ))
            .block_task()
            .await;
        let release = ReleaseTerminalRequest::new(self.session_id.clone(), id);
        if let Err(e) = self.cx.send_request(release).block_task().await {
            tracing::debug!(error = ?e, "terminal/release failed");
        }
        let output = output.map_err(|e| format!("the command's output was lost: {}", e.message))?;
        let exit_code = output.exit_status.as_ref().and_then(|s| s.exit_code);
        let signal = output.exit_status.as_ref().and_then(|s| s.signal.clone());
        self.update(ToolCallUpdateFields::new().raw_output(json!({
            "exitCode": exit_code,
            "signal": signal,
            "output": output.output,
            "truncated": output.truncated,
        })));
        let mut text = output.output;
        if output.truncated {
            text.insert_str(0, "[the start of the output was cut]\n");
        }
        let status = match (&stopped, exit_code, &signal) {
            (Some(reason), _, _) => reason.clone(),
            (None, Some(code), _) => format!("exit code {code}"),
            (None, None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None, None) => "exit status unknown".to_owned(),
        };
        let success = stopped.is_none() && exit_code == Some(0);
        Ok(answer(format!("{text}\n[{status}]"), success))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tools_follow_the_offer() {
        let names = |offer: ClientOffer| -> Vec<String> {
            offer
                .tool_specs()
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        };
        assert!(names(ClientOffer::default()).is_empty());
        let all = ClientOffer {
            read: true,
            write: true,
            terminal: true,
        };
        assert_eq!(
            names(all),
            [READ_TEXT_FILE, WRITE_TEXT_FILE, RUN_IN_TERMINAL]
        );
        // The engine withholds what the client replaces, and nothing else.
        assert!(ClientOffer::default().withheld_builtins().is_empty());
        assert_eq!(
            Value::Object(all.withheld_builtins()),
            json!({"features.shell_tool": false, "features.apply_patch_tool": false})
        );
        let reader = ClientOffer {
            read: true,
            ..ClientOffer::default()
        };
        assert!(reader.withheld_builtins().is_empty());
        // Every spec reads as the engine's dynamic tool.
        for spec in all.tool_specs() {
            let parsed: agentwire_protocol::DynamicToolSpec =
                serde_json::from_value(spec.clone()).expect("a dynamic tool spec");
            assert!(matches!(
                parsed,
                agentwire_protocol::DynamicToolSpec::Function { .. }
            ));
        }
        let answer: agentwire_protocol::DynamicToolCallResponse =
            serde_json::from_value(answer("hi", true)).expect("an item/tool/call answer");
        assert!(answer.success);
    }

    #[test]
    fn calls_are_shown_by_kind_with_absolute_paths() {
        let (kind, title, locations) =
            presentation(Path::new("/w"), WRITE_TEXT_FILE, &json!({"path": "a.txt"}))
                .expect("a client tool");
        assert_eq!(kind, ToolKind::Edit);
        assert_eq!(title, "Write /w/a.txt");
        assert_eq!(locations[0].path, std::path::PathBuf::from("/w/a.txt"));
        let (kind, title, _) = presentation(
            Path::new("/w"),
            RUN_IN_TERMINAL,
            &json!({"command": "ls -l"}),
        )
        .expect("a client tool");
        assert_eq!((kind, title.as_str()), (ToolKind::Execute, "ls -l"));
        assert!(presentation(Path::new("/w"), "other", &json!({})).is_none());
    }
}
