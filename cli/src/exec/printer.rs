//! What `exec` shows: the agent's text on stdout (or, with `--json`, every notification as a
//! JSON line), and on stderr one line per action — commands with the last lines of their
//! output, patches, approvals, warnings, MCP servers that failed to start — and each error
//! once, with its details.

use std::io::{ErrorKind, Write};

use agentwire_client::Notification;
use agentwire_protocol::TurnError;
use agentwire_protocol::methods::{AgentMessageDelta, ErrorEvent};
use serde_json::{Value, json};

use crate::stdout::note;

/// The most lines of a command's output shown (its last ones).
pub const OUTPUT_LINES: usize = 20;
/// The most characters of one output line shown.
const LINE_CHARS: usize = 400;

/// Stdout cannot take more: nothing more can be shown.
#[derive(Debug)]
pub enum StdoutError {
    /// Its reader has gone (`exec … | head -1`).
    Gone,
    /// Writing failed otherwise (a full disk, a closed descriptor): the reason.
    Failed(String),
}

/// Writes what the turn does, and remembers what its end needs: the last agent message and
/// the error that ended it.
pub struct Printer {
    json: bool,
    /// Whether agent text was printed without its final newline yet.
    open_message: bool,
    /// The text of the last completed agent message.
    pub last_message: Option<String>,
    /// The last error notification that was not followed by a retry: shown once, when the
    /// turn ends, with the turn's own error.
    pub last_error: Option<TurnError>,
}

impl Printer {
    /// A printer of the agent's text, or of JSON lines when `json`.
    pub fn new(json: bool) -> Self {
        Self {
            json,
            open_message: false,
            last_message: None,
            last_error: None,
        }
    }

    /// Shows one notification.
    pub fn show(&mut self, notification: &Notification) -> Result<(), StdoutError> {
        let params = &notification.params;
        let item = &params["item"];
        if notification.method == "item/completed" && item["type"] == "agentMessage" {
            self.last_message = item["text"].as_str().map(str::to_owned);
        }
        if let Some(Ok(error)) = notification.parse::<ErrorEvent>() {
            if error.will_retry {
                note(&format!("warning: {} (retrying)", one_error(&error.error)));
            } else {
                self.last_error = Some(error.error);
            }
        }
        if notification.method == "mcpServer/startupStatus/updated" && params["status"] == "failed"
        {
            let name = params["name"].as_str().unwrap_or("?");
            match params["error"].as_str().filter(|e| !e.is_empty()) {
                Some(error) => note(&format!(
                    "warning: MCP server {name} failed to start: {error}"
                )),
                None => note(&format!("warning: MCP server {name} failed to start")),
            }
        }
        if self.json {
            let line = json!({"method": notification.method, "params": notification.params});
            return write_stdout(&format!("{line}\n"));
        }
        if let Some(Ok(delta)) = notification.parse::<AgentMessageDelta>() {
            write_stdout(&delta.delta)?;
            self.open_message = !delta.delta.is_empty() || self.open_message;
            return Ok(());
        }
        let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
        match (notification.method.as_str(), item["type"].as_str()) {
            ("item/started", Some("commandExecution")) => {
                self.end_message()?;
                note(&format!("$ {}", text(&item["command"])));
            }
            ("item/completed", Some("commandExecution")) => {
                if let Some(output) = item["aggregatedOutput"].as_str() {
                    for line in tail(output, OUTPUT_LINES) {
                        note(&line);
                    }
                }
                match item["exitCode"].as_i64() {
                    Some(code) => note(&format!("(exit {code})")),
                    None => note(&format!("({})", text(&item["status"]))),
                }
            }
            ("item/completed", Some("fileChange")) => {
                let paths: Vec<String> = item["changes"]
                    .as_array()
                    .map(|changes| changes.iter().map(|c| text(&c["path"])).collect())
                    .unwrap_or_default();
                note(&format!(
                    "patch {}: {}",
                    text(&item["status"]),
                    paths.join(", ")
                ));
            }
            ("item/completed", Some("agentMessage")) => {
                if !self.open_message {
                    // No deltas came: the whole text is in the item.
                    let whole = text(&item["text"]);
                    if !whole.is_empty() {
                        write_stdout(&format!("{whole}\n"))?;
                    }
                }
                self.end_message()?;
            }
            ("warning", _) => note(&format!("warning: {}", text(&params["message"]))),
            ("configWarning", _) => note(&format!("warning: {}", config_warning(params))),
            _ => {}
        }
        Ok(())
    }

    /// Ends a streamed agent message with its newline.
    pub fn end_message(&mut self) -> Result<(), StdoutError> {
        if self.open_message {
            self.open_message = false;
            write_stdout("\n")?;
        }
        Ok(())
    }
}

/// Writes to stdout and flushes (a script reading the stream sees each piece as it comes).
fn write_stdout(text: &str) -> Result<(), StdoutError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == ErrorKind::BrokenPipe => Err(StdoutError::Gone),
        Err(error) => Err(StdoutError::Failed(error.to_string())),
    }
}

/// An error as one line: its message, then its details when it has any the message does not
/// already hold ("… see the details: HTTP 500 from …").
pub fn one_error(error: &TurnError) -> String {
    let mut line = error.message.clone();
    if let Some(details) = error
        .additional_details
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty() && !error.message.contains(d))
    {
        line = format!("{}: {details}", line.trim_end().trim_end_matches('.'));
    }
    line
}

/// The last `lines` lines of `output` (each cut at [`LINE_CHARS`] characters), after a line
/// saying how many came before when some did.
pub fn tail(output: &str, lines: usize) -> Vec<String> {
    let all: Vec<&str> = output.lines().collect();
    let skipped = all.len().saturating_sub(lines);
    let mut shown = Vec::with_capacity(lines + 1);
    if skipped > 0 {
        shown.push(format!("… ({skipped} earlier lines)"));
    }
    for line in &all[skipped..] {
        match line.char_indices().nth(LINE_CHARS) {
            Some((cut, _)) => shown.push(format!("{}…", &line[..cut])),
            None => shown.push((*line).to_owned()),
        }
    }
    shown
}

/// A `configWarning` as one line: where (`FILE:LINE:COLUMN: `, as much of it as is known),
/// what, and the details.
fn config_warning(params: &Value) -> String {
    let mut place = params["path"].as_str().unwrap_or_default().to_owned();
    let start = &params["range"]["start"];
    if let (Some(line), Some(column)) = (start["line"].as_u64(), start["column"].as_u64()) {
        place.push_str(&format!(":{line}:{column}"));
    }
    if !place.is_empty() {
        place.push_str(": ");
    }
    let summary = params["summary"].as_str().unwrap_or_default();
    match params["details"].as_str().filter(|d| !d.is_empty()) {
        Some(details) => format!("{place}{summary}: {details}"),
        None => format!("{place}{summary}"),
    }
}

#[cfg(test)]
mod tests {
    use super::{one_error, tail};

    #[test]
    fn an_error_is_its_message_then_its_details_once() {
        let error = |value: serde_json::Value| {
            serde_json::from_value::<agentwire_protocol::TurnError>(value).expect("TurnError")
        };
        let with_details = error(serde_json::json!({
            "message": "it failed (HTTP 500); see the details.",
            "additionalDetails": "HTTP 500 from http://m/v1: boom"}));
        assert_eq!(
            one_error(&with_details),
            "it failed (HTTP 500); see the details: HTTP 500 from http://m/v1: boom"
        );
        let repeated = error(serde_json::json!({
            "message": "boom: the whole story", "additionalDetails": "the whole story"}));
        assert_eq!(one_error(&repeated), "boom: the whole story");
        let bare = error(serde_json::json!({"message": "bare"}));
        assert_eq!(one_error(&bare), "bare");
    }

    #[test]
    fn tail_keeps_the_last_lines_and_says_how_many_came_before() {
        let output: String = (1..=25).map(|i| format!("line {i}\n")).collect();
        let shown = tail(&output, 20);
        assert_eq!(shown.len(), 21);
        assert_eq!(shown[0], "… (5 earlier lines)");
        assert_eq!(shown[1], "line 6");
        assert_eq!(shown[20], "line 25");
        assert_eq!(tail("a\nb", 20), ["a", "b"]);
        let long = "é".repeat(500);
        assert_eq!(tail(&long, 20)[0].chars().count(), 401);
    }
}
