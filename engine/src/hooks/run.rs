//! Running lifecycle hooks: a configured command gets the event as one JSON object on its
//! stdin, runs in the thread's working directory under the thread's sandbox policy (the same
//! `sandbox-exec` path as the agent's shell commands) within its timeout, and answers with its
//! exit status and output, in the shape Codex (and Claude Code before it) gives hooks:
//!
//! - exit 0: the action goes on. Stdout that is a JSON object may say more: `decision:
//!   "block"` with `reason` refuses the action; `continue: false` with `stopReason` stops the
//!   turn; `systemMessage` is a warning for the user; `hookSpecificOutput.permissionDecision:
//!   "deny"` with `permissionDecisionReason` refuses a tool call; and
//!   `hookSpecificOutput.additionalContext` is text for the model. Plain stdout of a
//!   `UserPromptSubmit` or `SessionStart` hook is text for the model.
//! - exit 2: the action is refused; stderr says why (the model is told).
//! - any other exit, a timeout, or a command that cannot start: the hook failed, and the
//!   action goes on.
//!
//! Each run is announced with `hook/started` and reported with `hook/completed` (see
//! [`Notice`]). An `async` hook runs detached: the action never waits for it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use agentwire_protocol::{
    HookEventName, HookExecutionMode, HookHandlerMetadata, HookHandlerType, HookMetadata,
    HookOutputEntry, HookOutputEntryKind, HookRunStatus, HookRunSummary, HookScope,
    LegacyAppPathString, SandboxPolicy,
};
use agentwire_tools::exec::{self, GroupKiller};
use agentwire_tools::sandbox::SandboxHelper;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// Most bytes of a hook's stdout (and, apart, of its stderr) that are read; the rest is
/// drained and dropped.
const MAX_OUTPUT: usize = 64 * 1024;
/// Most bytes of text one hook adds to the model's context.
const MAX_CONTEXT: usize = 16 * 1024;
/// The exit status with which a command hook refuses the action.
const BLOCKING_EXIT: i32 = 2;

/// Where and how a thread's hooks run, and who they run for.
#[derive(Debug, Clone)]
pub(crate) struct HookEnv {
    /// The thread (`session_id` in the payload).
    pub thread_id: String,
    /// The turn, when the event belongs to one.
    pub turn_id: Option<String>,
    /// The working directory the hook runs in.
    pub cwd: String,
    /// The model the thread uses.
    pub model: String,
    /// The approval policy in effect, as its wire name (`permission_mode`).
    pub permission_mode: String,
    /// The policy hooks run under.
    pub sandbox: SandboxPolicy,
    /// The program that confines commands (see `ExecRequest::sandbox_exe`).
    pub sandbox_exe: Option<SandboxHelper>,
    /// The hook's whole environment; `None` passes the server's on.
    pub env: Option<BTreeMap<String, String>>,
}

/// An event that hooks run for: its name, the tool it is about (matched against each group's
/// `matcher`), and the members its payload adds to the common ones.
#[derive(Debug, Clone)]
pub(crate) struct HookEvent {
    pub name: HookEventName,
    pub tool_name: Option<String>,
    pub fields: Map<String, Value>,
}

/// A run going out to the clients.
#[derive(Debug, Clone)]
pub(crate) enum Notice {
    /// `hook/started`.
    Started(HookRunSummary),
    /// `hook/completed`.
    Completed(HookRunSummary),
}

/// Where the runs' notices go.
pub(crate) type Notify = std::sync::Arc<dyn Fn(Notice) + Send + Sync>;

/// What the hooks of one event decided, all runs together.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    /// Set when a hook refused the action: why, for the model.
    pub blocked: Option<String>,
    /// The id of the run that refused it.
    pub blocked_by: Option<String>,
    /// Set when a hook asked for the turn to stop: why.
    pub stop: Option<String>,
    /// Text the hooks added for the model: (run id, text).
    pub context: Vec<(String, String)>,
}

/// The hooks of `declared` that run for `event`: enabled command hooks of its event whose
/// matcher (a regular expression; absent, empty or `*` matches everything) matches its tool.
pub(crate) fn matching<'a>(
    declared: &'a [HookMetadata],
    event: &HookEvent,
) -> Vec<&'a HookMetadata> {
    declared
        .iter()
        .filter(|hook| hook.enabled && hook.event_name == event.name)
        .filter(|hook| matches!(hook.handler, HookHandlerMetadata::Command { .. }))
        .filter(|hook| matcher_accepts(hook.matcher.as_deref(), event.tool_name.as_deref()))
        .collect()
}

/// Whether `matcher` accepts `tool`: an event about no tool is accepted by every matcher; a
/// matcher that is not a valid expression accepts nothing.
fn matcher_accepts(matcher: Option<&str>, tool: Option<&str>) -> bool {
    let (Some(matcher), Some(tool)) = (matcher.map(str::trim), tool) else {
        return true;
    };
    if matcher.is_empty() || matcher == "*" {
        return true;
    }
    regex::Regex::new(&format!("^(?:{matcher})$")).is_ok_and(|re| re.is_match(tool))
}

/// Runs the hooks of `declared` that match `event`, in order, telling `notify` about each
/// run; a refusal or stop ends the series.
pub(crate) async fn run_event(
    declared: &[HookMetadata],
    env: &HookEnv,
    event: &HookEvent,
    notify: &Notify,
) -> Verdict {
    let mut verdict = Verdict::default();
    for hook in matching(declared, event) {
        let HookHandlerMetadata::Command {
            command, is_async, ..
        } = &hook.handler
        else {
            continue;
        };
        let mut summary = summary(hook, env, event.name, *is_async);
        notify(Notice::Started(summary.clone()));
        let payload = payload(env, event);
        if *is_async {
            let (command, env, timeout) = (
                command.clone(),
                env.clone(),
                Duration::from_secs(hook.timeout_sec),
            );
            let (name, notify) = (event.name, notify.clone());
            // Cleaned up after a panic: the run is reported as failed, so that clients do not
            // show it running forever (its child, if any, is killed as the task unwinds).
            let cleanup = {
                let (mut failed, notify) = (summary.clone(), notify.clone());
                move || {
                    let why = "the hook's task stopped on an internal error".to_owned();
                    let _ = settle(
                        &mut failed,
                        name,
                        (Ran::NotStarted(why), Duration::ZERO),
                        timeout,
                    );
                    notify(Notice::Completed(failed));
                }
            };
            let work = async move {
                let ran = execute(&command, &env, &payload, timeout).await;
                let _ = settle(&mut summary, name, ran, timeout);
                notify(Notice::Completed(summary));
            };
            agentwire_support::supervised::spawn("async hook", work, cleanup);
            continue;
        }
        let timeout = Duration::from_secs(hook.timeout_sec);
        let ran = execute(command, env, &payload, timeout).await;
        let decided = settle(&mut summary, event.name, ran, timeout);
        notify(Notice::Completed(summary.clone()));
        if let Some(text) = decided.context {
            verdict.context.push((summary.id.clone(), text));
        }
        if let Some(reason) = decided.stop {
            verdict.stop = Some(reason);
            break;
        }
        if let Some(reason) = decided.blocked {
            verdict.blocked = Some(reason);
            verdict.blocked_by = Some(summary.id.clone());
            break;
        }
    }
    verdict
}

/// A run as it starts.
fn summary(
    hook: &HookMetadata,
    env: &HookEnv,
    event: HookEventName,
    is_async: bool,
) -> HookRunSummary {
    let scope = if event == HookEventName::SessionStart || env.turn_id.is_none() {
        HookScope::Thread
    } else {
        HookScope::Turn
    };
    HookRunSummary::builder()
        .display_order(hook.display_order)
        .entries(Vec::new())
        .event_name(event)
        .execution_mode(if is_async {
            HookExecutionMode::Async
        } else {
            HookExecutionMode::Sync
        })
        .handler_type(HookHandlerType::Command)
        .id(agentwire_store::meta::new_id())
        .scope(scope)
        .source(hook.source)
        .source_path(LegacyAppPathString(hook.source_path.0.clone()))
        .started_at(unix_seconds())
        .status(HookRunStatus::Running)
        .maybe_status_message(hook.status_message.clone())
        .build()
}

/// The JSON the hook reads on its stdin: the common members, then the event's own.
fn payload(env: &HookEnv, event: &HookEvent) -> Vec<u8> {
    let mut object = Map::new();
    object.insert("session_id".into(), json!(env.thread_id));
    object.insert("turn_id".into(), json!(env.turn_id));
    object.insert("transcript_path".into(), Value::Null);
    object.insert("cwd".into(), json!(env.cwd));
    object.insert("hook_event_name".into(), json!(pascal_name(event.name)));
    object.insert("model".into(), json!(env.model));
    object.insert("permission_mode".into(), json!(env.permission_mode));
    for (key, value) in &event.fields {
        object.insert(key.clone(), value.clone());
    }
    serde_json::to_vec(&Value::Object(object)).unwrap_or_default()
}

/// The configuration spelling of an event (`PreToolUse`).
fn pascal_name(event: HookEventName) -> String {
    let wire = serde_json::to_value(event)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut chars = wire.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// How a command hook ended.
#[derive(Debug)]
enum Ran {
    Exited {
        code: Option<i32>,
        stdout: String,
        stderr: String,
    },
    TimedOut,
    NotStarted(String),
}

/// What one run decided.
#[derive(Debug, Default)]
struct Decided {
    blocked: Option<String>,
    stop: Option<String>,
    context: Option<String>,
}

/// Completes `summary` from how the run ended, and says what it decided.
fn settle(
    summary: &mut HookRunSummary,
    event: HookEventName,
    (ran, elapsed): (Ran, Duration),
    timeout: Duration,
) -> Decided {
    summary.completed_at = Some(unix_seconds());
    summary.duration_ms = Some(i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX));
    let mut decided = Decided::default();
    let entry = |kind, text: &str| HookOutputEntry::builder().kind(kind).text(text).build();
    match ran {
        Ran::NotStarted(reason) => {
            summary.status = HookRunStatus::Failed;
            summary
                .entries
                .push(entry(HookOutputEntryKind::Error, &reason));
        }
        Ran::TimedOut => {
            summary.status = HookRunStatus::Failed;
            summary.entries.push(entry(
                HookOutputEntryKind::Error,
                &format!(
                    "the hook did not finish within {} s and was stopped",
                    timeout.as_secs()
                ),
            ));
        }
        Ran::Exited {
            code: Some(BLOCKING_EXIT),
            stderr,
            ..
        } => {
            let reason = non_empty(stderr.trim())
                .unwrap_or("a hook refused it")
                .to_owned();
            summary.status = HookRunStatus::Blocked;
            summary
                .entries
                .push(entry(HookOutputEntryKind::Feedback, &reason));
            decided.blocked = Some(reason);
        }
        Ran::Exited {
            code: Some(0),
            stdout,
            ..
        } => {
            summary.status = HookRunStatus::Completed;
            let text = stdout.trim();
            match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(answer)) => read_answer(summary, &answer, &mut decided),
                _ if matches!(
                    event,
                    HookEventName::UserPromptSubmit | HookEventName::SessionStart
                ) =>
                {
                    decided.context = non_empty(text).map(bounded);
                }
                _ => {}
            }
            if let Some(text) = &decided.context {
                summary
                    .entries
                    .push(entry(HookOutputEntryKind::Context, text));
            }
        }
        Ran::Exited { code, stderr, .. } => {
            summary.status = HookRunStatus::Failed;
            let how = code.map_or_else(
                || "was killed by a signal".to_owned(),
                |c| format!("exited with status {c}"),
            );
            let text = match non_empty(stderr.trim()) {
                Some(err) => format!("the hook {how}: {err}"),
                None => format!("the hook {how}"),
            };
            summary
                .entries
                .push(entry(HookOutputEntryKind::Error, &text));
        }
    }
    decided
}

/// Reads a JSON answer on stdout into `summary` and `decided`.
fn read_answer(summary: &mut HookRunSummary, answer: &Map<String, Value>, decided: &mut Decided) {
    let text = |value: Option<&Value>| {
        value
            .and_then(Value::as_str)
            .and_then(|s| non_empty(s.trim()))
            .map(str::to_owned)
    };
    let entry = |kind, text: &str| HookOutputEntry::builder().kind(kind).text(text).build();
    let specific = answer.get("hookSpecificOutput").and_then(Value::as_object);
    if let Some(message) = text(answer.get("systemMessage")) {
        summary
            .entries
            .push(entry(HookOutputEntryKind::Warning, &message));
    }
    decided.context = text(specific.and_then(|s| s.get("additionalContext"))).map(|t| bounded(&t));
    if answer.get("continue") == Some(&Value::Bool(false)) {
        let reason =
            text(answer.get("stopReason")).unwrap_or_else(|| "a hook stopped the turn".to_owned());
        summary.status = HookRunStatus::Stopped;
        summary
            .entries
            .push(entry(HookOutputEntryKind::Stop, &reason));
        decided.stop = Some(reason);
        return;
    }
    let denied = specific
        .and_then(|s| s.get("permissionDecision"))
        .and_then(Value::as_str)
        .is_some_and(|d| d == "deny");
    let blocked = answer.get("decision").and_then(Value::as_str) == Some("block");
    if denied || blocked {
        let reason = if denied {
            text(specific.and_then(|s| s.get("permissionDecisionReason")))
        } else {
            None
        }
        .or_else(|| text(answer.get("reason")))
        .unwrap_or_else(|| "a hook refused it".to_owned());
        summary.status = HookRunStatus::Blocked;
        summary
            .entries
            .push(entry(HookOutputEntryKind::Feedback, &reason));
        decided.blocked = Some(reason);
    }
}

fn non_empty(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

/// `text` cut to [`MAX_CONTEXT`] bytes (on a character boundary).
fn bounded(text: &str) -> String {
    if text.len() <= MAX_CONTEXT {
        return text.to_owned();
    }
    let mut end = MAX_CONTEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

fn unix_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Runs `command` with `/bin/sh -c` for `env`, `payload` on its stdin, within `timeout`: how
/// it ended, and how long it took.
async fn execute(
    command: &str,
    env: &HookEnv,
    payload: &[u8],
    timeout: Duration,
) -> (Ran, Duration) {
    let started = Instant::now();
    let ran = execute_timed(command, env, payload, timeout).await;
    (ran, started.elapsed())
}

async fn execute_timed(command: &str, env: &HookEnv, payload: &[u8], timeout: Duration) -> Ran {
    let cwd = PathBuf::from(&env.cwd);
    if !cwd.is_dir() {
        return Ran::NotStarted(format!(
            "the working directory `{}` does not exist",
            env.cwd
        ));
    }
    let argv = vec!["/bin/sh".to_owned(), "-c".to_owned(), command.to_owned()];
    let mut child = match spawn(&argv, &cwd, env) {
        Ok(child) => child,
        Err(reason) => return Ran::NotStarted(reason),
    };
    // Leaving this function in any way kills the hook's process group.
    let mut group = GroupKiller::new(child.id());
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let work = async {
        let feed = async {
            if let Some(mut stdin) = stdin {
                // A hook that does not read its stdin closes the pipe: not an error.
                let _ = stdin.write_all(payload).await;
            }
        };
        let (_, out, err, status) = tokio::join!(
            feed,
            read_bounded(stdout),
            read_bounded(stderr),
            child.wait()
        );
        (out, err, status)
    };
    let ran = match tokio::time::timeout(timeout, work).await {
        Err(_) => Ran::TimedOut,
        Ok((out, err, status)) => Ran::Exited {
            code: status.ok().and_then(|s| s.code()),
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
        },
    };
    group.kill();
    group.disarm();
    ran
}

/// Starts `argv` in `cwd`: unconfined when the policy confines nothing, else through the
/// sandbox program (refused when none is configured, never run unconfined).
fn spawn(argv: &[String], cwd: &Path, env: &HookEnv) -> Result<tokio::process::Child, String> {
    let mut command = match (&env.sandbox, &env.sandbox_exe) {
        (SandboxPolicy::DangerFullAccess | SandboxPolicy::ExternalSandbox { .. }, _) => {
            let mut command = tokio::process::Command::new(&argv[0]);
            command.args(&argv[1..]);
            command
        }
        (policy, Some(helper)) => exec::sandbox_exec_command(helper, policy, cwd, argv, false)
            .map_err(|e| e.to_string())?,
        (_, None) => {
            return Err(
                "the sandbox policy confines hooks, but no sandbox program is \
                        configured, so the hook was not run"
                    .to_owned(),
            );
        }
    };
    if let Some(vars) = &env.env {
        command.env_clear().envs(vars);
    }
    command
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    command
        .spawn()
        .map_err(|e| format!("cannot start the hook: {e}"))
}

/// Reads `reader` to its end, keeping at most [`MAX_OUTPUT`] bytes.
async fn read_bounded<R: AsyncRead + Unpin>(reader: Option<R>) -> Vec<u8> {
    let Some(mut reader) = reader else {
        return Vec::new();
    };
    let mut kept = Vec::new();
    let mut buffer = vec![0; 8 * 1024];
    loop {
        match reader.read(&mut buffer).await {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = MAX_OUTPUT.saturating_sub(kept.len());
                kept.extend_from_slice(&buffer[..n.min(room)]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary_for(event: HookEventName) -> HookRunSummary {
        HookRunSummary::builder()
            .display_order(0)
            .entries(Vec::new())
            .event_name(event)
            .execution_mode(HookExecutionMode::Sync)
            .handler_type(HookHandlerType::Command)
            .id("r")
            .scope(HookScope::Turn)
            .source(agentwire_protocol::HookSource::User)
            .source_path(LegacyAppPathString("/c".into()))
            .started_at(0)
            .status(HookRunStatus::Running)
            .build()
    }

    fn exited(code: i32, stdout: &str, stderr: &str) -> Ran {
        Ran::Exited {
            code: Some(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn exit_2_blocks_with_stderr_and_a_deny_decision_blocks_with_its_reason() {
        let t = Duration::from_secs(1);
        let mut s = summary_for(HookEventName::PreToolUse);
        let d = settle(
            &mut s,
            HookEventName::PreToolUse,
            (exited(2, "", "no rm\n"), t),
            t,
        );
        assert_eq!(d.blocked.as_deref(), Some("no rm"));
        assert_eq!(s.status, HookRunStatus::Blocked);
        let mut s = summary_for(HookEventName::PreToolUse);
        let answer = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not here"}}"#;
        let d = settle(
            &mut s,
            HookEventName::PreToolUse,
            (exited(0, answer, ""), t),
            t,
        );
        assert_eq!(d.blocked.as_deref(), Some("not here"));
        assert_eq!(s.entries[0].kind, HookOutputEntryKind::Feedback);
    }

    #[test]
    fn plain_prompt_hook_output_is_context_and_other_failures_let_the_action_go_on() {
        let t = Duration::from_secs(1);
        let mut s = summary_for(HookEventName::UserPromptSubmit);
        let d = settle(
            &mut s,
            HookEventName::UserPromptSubmit,
            (exited(0, "ctx\n", ""), t),
            t,
        );
        assert_eq!(d.context.as_deref(), Some("ctx"));
        assert_eq!(s.status, HookRunStatus::Completed);
        let mut s = summary_for(HookEventName::PreToolUse);
        let d = settle(
            &mut s,
            HookEventName::PreToolUse,
            (exited(1, "", "oops"), t),
            t,
        );
        assert!(d.blocked.is_none());
        assert_eq!(s.status, HookRunStatus::Failed);
        let mut s = summary_for(HookEventName::Stop);
        let d = settle(
            &mut s,
            HookEventName::Stop,
            (
                exited(0, r#"{"continue":false,"stopReason":"enough"}"#, ""),
                t,
            ),
            t,
        );
        assert_eq!(d.stop.as_deref(), Some("enough"));
        assert_eq!(s.status, HookRunStatus::Stopped);
    }

    #[test]
    fn matchers_are_anchored_expressions_and_a_bad_one_matches_nothing() {
        assert!(matcher_accepts(Some("shell|exec_command"), Some("shell")));
        assert!(!matcher_accepts(Some("she"), Some("shell")));
        assert!(matcher_accepts(Some("*"), Some("x")));
        assert!(matcher_accepts(None, Some("x")));
        assert!(!matcher_accepts(Some("("), Some("x")));
        assert_eq!(pascal_name(HookEventName::PreToolUse), "PreToolUse");
    }
}
