//! `exec_command` as an exec session, and `write_stdin` (see `tools::exec_sessions`).
//!
//! An approved `exec_command` starts its command as a session of the thread and waits up to
//! its yield time. If the command ends by then, the call's result is the one a command that
//! ran to its end gives (exit code, wall time, output) and its item completes. Otherwise the
//! result says it still runs, with its `session_id`, and the output so far; the item stays
//! `inProgress` (its `processId` is the session id) while its output keeps streaming as
//! `item/commandExecution/outputDelta`, whichever turn is running by then.
//!
//! `write_stdin` writes to a session (announced as `item/commandExecution/terminalInteraction`
//! when it writes anything), waits up to its yield time or until the command ends, and gives
//! back the output since the last read. The item of a session completes (`item/completed`,
//! recorded in the turn that started it) as soon as its command ends, however it ends: on its
//! own, killed to make room, by `thread/backgroundTerminals/*`, or because its thread was
//! unloaded or the server stopped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentwire_protocol::methods::{
    CommandExecutionOutputDelta, CommandExecutionTerminalInteraction, ItemCompleted,
};
use agentwire_protocol::{
    CommandExecutionOutputDeltaNotification, ItemCompletedNotification,
    TerminalInteractionNotification, ThreadItem, ThreadItemKind,
};
use agentwire_tools::exec::ExecRequest;
use agentwire_tools::exec_sessions::{
    self, Ended, Launch, Session, SessionInfo, WRITE_YIELD_DEFAULT, WriteStdinArgs,
};
use agentwire_tools::truncate::middle_cut;

use super::tools::{CommandItem, Outcome, command_result};
use super::{CallEnd, TurnRun, now_ms};
use crate::threads::Threads;
use crate::threads::subscribers::Audience;
use crate::turns::Turns;

/// The time limit of a session's command: none to speak of (it ends when it ends, or is
/// killed).
pub(super) const SESSION_LIFETIME: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// An approved `exec_command`, about to start as a session.
pub(super) struct SessionStart {
    pub(super) session_id: i64,
    /// Its item, already started (`processId` set).
    pub(super) item: CommandItem,
    pub(super) started_ms: i64,
    pub(super) request: ExecRequest,
    pub(super) yield_time: Duration,
    pub(super) max_output_bytes: Option<usize>,
}

impl TurnRun {
    /// Starts an approved `exec_command` as a session and waits up to its yield time.
    pub(super) async fn exec_session(&mut self, start: SessionStart) -> Outcome {
        let SessionStart {
            session_id,
            item,
            started_ms,
            request,
            yield_time,
            max_output_bytes,
        } = start;
        let began = Instant::now();
        let info = SessionInfo {
            thread_id: self.thread_id.clone(),
            turn_id: self.turn.id.clone(),
            item_id: item.id.clone(),
            command: item.command.clone(),
            cwd: item.cwd.clone(),
        };
        let launch = Launch {
            request,
            on_output: deltas(
                self.turns.threads.clone(),
                &self.thread_id,
                &self.turn.id,
                &item.id,
            ),
            alive: {
                let threads = self.turns.threads.clone();
                let thread_id = self.thread_id.clone();
                Box::new(move || threads.is_loaded(&thread_id))
            },
            stopping: Box::pin(self.peer.hub().stopping()),
            finish: {
                let turns = self.turns.clone();
                let (thread_id, turn_id) = (self.thread_id.clone(), self.turn.id.clone());
                Box::new(move |ran| {
                    Box::pin(async move {
                        if let Err(agentwire_tools::exec::ExecError::Sandbox(_)) = &ran {
                            agentwire_runtime::telemetry::sandbox_refused("command");
                        }
                        // Only the item is made here: nobody reads the text.
                        let (status, report, _) =
                            command_result(&ran, SESSION_LIFETIME, usize::MAX);
                        let kind = item.kind(status, Some(report));
                        Some(
                            complete_detached(&turns, &thread_id, &turn_id, kind, started_ms).await,
                        )
                    })
                })
            },
        };
        let started = self.turns.exec_sessions().start(session_id, info, launch);
        let session = started.session;
        let evicted = started.evicted.map(|(id, command)| {
            format!(
                "Session {id} (`{command}`) was killed to make room: at most {} sessions run at \
                 once per thread.\n",
                exec_sessions::MAX_SESSIONS
            )
        });
        let Some(waited) = self.unless_interrupted(session.wait(yield_time)).await else {
            session.kill();
            if let Some(ended) = session.wait(exec_sessions::KILL_WAIT).await {
                self.ended_here(&session, &ended);
            }
            self.turns
                .exec_sessions()
                .forget(&self.thread_id, session_id);
            return Outcome {
                result: "The command was interrupted.".to_owned(),
                end: Some(CallEnd::Interrupted),
            };
        };
        let mut result = evicted.unwrap_or_default();
        match waited {
            Some(ended) => {
                // Ended within the yield: the result a command run to its end gives.
                self.ended_here(&session, &ended);
                self.turns
                    .exec_sessions()
                    .forget(&self.thread_id, session_id);
                let limit = max_output_bytes.unwrap_or_else(|| self.tool_output_bytes());
                let (_, _, text) = command_result(&ended.result, SESSION_LIFETIME, limit);
                result.push_str(&text);
            }
            None => {
                let output = session.take_unread();
                let limit = max_output_bytes.unwrap_or_else(|| self.tool_output_bytes());
                result.push_str(&format!(
                    "{}\nWall time: {:.1} seconds\nOutput:\n{}",
                    exec_sessions::still_running(session_id),
                    began.elapsed().as_secs_f64(),
                    middle_cut(&output, limit)
                ));
            }
        }
        Outcome::result(result)
    }

    /// A `write_stdin` call.
    pub(super) async fn write_stdin(&mut self, args: WriteStdinArgs) -> Outcome {
        let began = Instant::now();
        let session = args
            .session_id
            .number()
            .and_then(|id| self.turns.exec_sessions().find(&self.thread_id, id));
        let Some(session) = session else {
            let running: Vec<String> = self
                .turns
                .exec_sessions()
                .running(&self.thread_id)
                .iter()
                .map(|s| s.id.to_string())
                .collect();
            let known = if running.is_empty() {
                "none runs now".to_owned()
            } else {
                format!("the running ones are {}", running.join(", "))
            };
            return Outcome::result(format!(
                "write_stdin failed: there is no session {} in this thread ({known}). Sessions \
                 come from exec_command calls whose command was still running when they \
                 returned; a session is gone once its exit was reported.",
                args.session_id.shown()
            ));
        };
        let mut notes = String::new();
        if !args.chars.is_empty() {
            match session.write(&args.chars) {
                Ok(()) => self.notify::<CommandExecutionTerminalInteraction>(
                    &TerminalInteractionNotification::builder()
                        .thread_id(self.thread_id.clone())
                        .turn_id(session.info.turn_id.clone())
                        .item_id(session.info.item_id.clone())
                        .process_id(session.id.to_string())
                        .stdin(args.chars.clone())
                        .build(),
                ),
                Err(reason) => notes.push_str(&format!("The input was not written: {reason}.\n")),
            }
        }
        let wait = exec_sessions::yield_time(args.yield_time_ms, WRITE_YIELD_DEFAULT);
        let Some(ended) = self.unless_interrupted(session.wait(wait)).await else {
            return Outcome {
                result: format!(
                    "The wait was interrupted; session {} keeps running.",
                    session.id
                ),
                end: Some(CallEnd::Interrupted),
            };
        };
        let output = session.take_unread();
        let limit = agentwire_tools::output_budget(args.max_output_tokens)
            .unwrap_or_else(|| self.tool_output_bytes());
        let shown = middle_cut(&output, limit);
        let seconds = began.elapsed().as_secs_f64();
        let status = match &ended {
            None => exec_sessions::still_running(session.id),
            Some(ended) => {
                self.ended_here(&session, ended);
                self.turns
                    .exec_sessions()
                    .forget(&self.thread_id, session.id);
                match &ended.result {
                    Ok(output) => format!(
                        "Process exited. Exit code: {}",
                        output
                            .exit_code
                            .map_or_else(|| "killed by a signal".to_owned(), |c| c.to_string())
                    ),
                    Err(error) => format!("The command did not run: {error}"),
                }
            }
        };
        Outcome::result(format!(
            "{notes}{status}\nWall time: {seconds:.1} seconds\nOutput:\n{shown}"
        ))
    }

    /// A session ended while this turn watched it: its completed item joins this turn's
    /// items when this turn started it.
    fn ended_here(&mut self, session: &Session, ended: &Ended) {
        if session.info.turn_id == self.turn.id
            && let Some(item) = &ended.item
        {
            self.turn.items.push(item.clone());
        }
    }
}

/// Streams a session's output as `item/commandExecution/outputDelta` of its item to the
/// followers of its thread as they are at each piece (the session outlives its turn).
fn deltas(
    threads: Arc<Threads>,
    thread_id: &str,
    turn_id: &str,
    item_id: &str,
) -> Box<dyn FnMut(&str) + Send> {
    let (thread_id, turn_id, item_id) =
        (thread_id.to_owned(), turn_id.to_owned(), item_id.to_owned());
    let mut audience: (u64, Audience) = (u64::MAX, Audience::default());
    Box::new(move |delta: &str| {
        let version = threads.subscribers.version();
        if audience.0 != version {
            audience = (version, threads.subscribers.audience(&thread_id));
        }
        audience.1.notify::<CommandExecutionOutputDelta>(
            &CommandExecutionOutputDeltaNotification::builder()
                .thread_id(thread_id.clone())
                .turn_id(turn_id.clone())
                .item_id(item_id.clone())
                .delta(delta.to_owned())
                .build(),
        );
    })
}

/// Completes an item of turn `turn_id` from outside that turn's run: recorded (durably) in
/// the turn, then `item/completed` to the thread's followers. Gives the completed item.
async fn complete_detached(
    turns: &Turns,
    thread_id: &str,
    turn_id: &str,
    kind: ThreadItemKind,
    started_ms: i64,
) -> ThreadItem {
    let completed_ms = now_ms().max(started_ms);
    let item = ThreadItem::builder()
        .kind(kind)
        .started_at_ms(started_ms)
        .completed_at_ms(completed_ms)
        .build();
    crate::turns::recorded::durable(
        "exec session item completed",
        turns
            .threads
            .record_item_completed(thread_id, turn_id, &item),
    )
    .await;
    turns
        .threads
        .subscribers
        .audience(thread_id)
        .notify::<ItemCompleted>(
            &ItemCompletedNotification::builder()
                .thread_id(thread_id.to_owned())
                .turn_id(turn_id.to_owned())
                .item(item.clone())
                .completed_at_ms(completed_ms)
                .build(),
        );
    item
}
