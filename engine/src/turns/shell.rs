//! `thread/shellCommand`: a command line the user runs in a thread, outside any model call.
//!
//! It runs as a turn of its own (so nothing else runs on the thread meanwhile, `turn/interrupt`
//! stops it and `thread/delete` waits for it): `thread/status/changed` (active),
//! `turn/started`, `item/started` of a `commandExecution` item with `source: "userShell"`,
//! its `item/commandExecution/outputDelta`s, `item/completed`, then `thread/status/changed`
//! (idle) and `turn/completed`, to every connection following the thread; the turn and the
//! item are recorded in the rollout like any other.
//!
//! The command line goes to `/bin/sh -c` in the thread's working directory with the
//! configured command environment, confined by the thread's sandbox policy exactly as the
//! agent's commands are (see `tools::exec`): only `danger-full-access` (or an external sandbox)
//! runs it unconfined. (The reference server runs it unconfined whatever the policy; this
//! server does not widen what the thread's policy allows.)

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentwire_protocol::methods::CommandExecutionOutputDelta;
use agentwire_protocol::{
    CommandExecutionOutputDeltaNotification, CommandExecutionSource, CommandExecutionStatus,
    LegacyAppPathString, ThreadItem, ThreadItemKind, ThreadShellCommandParams,
    ThreadShellCommandResponse, Turn, TurnStatus,
};
use agentwire_runtime::{Peer, RequestContext};
use agentwire_store::error::ThreadError;
use agentwire_store::meta::{SettingsOverrides, ThreadSettings, new_id};
use agentwire_support::timestamps::now_ms;
use agentwire_tools::actions;
use agentwire_tools::exec::{self, ExecRequest};
use tokio::sync::oneshot;

use super::Turns;
use super::job::{self, JobKind, JobLedger};

/// Time limit when the client gives none.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60 * 60);
/// Longest command line accepted.
const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// A shell command on its way.
struct ShellRun {
    turns: Arc<Turns>,
    thread_id: String,
    turn: Turn,
    command: String,
    settings: ThreadSettings,
    timeout: Duration,
    interrupt: oneshot::Receiver<()>,
    peer: Peer,
    /// What the supervisor knows of the job (see [`super::job`]).
    job: Arc<JobLedger>,
}

impl Turns {
    /// `thread/shellCommand`: starts `command` on a loaded thread with nothing running;
    /// answers at once, the command's progress follows as notifications.
    pub(crate) fn shell_command(
        self: &Arc<Self>,
        context: &RequestContext,
        params: ThreadShellCommandParams,
        claim: agentwire_store::Claim,
    ) -> Result<ThreadShellCommandResponse, ThreadError> {
        if params.command.trim().is_empty() {
            return Err(ThreadError::InvalidParams(
                "command: must not be empty".to_owned(),
            ));
        }
        if params.command.len() > MAX_COMMAND_BYTES || params.command.contains('\0') {
            return Err(ThreadError::InvalidParams(format!(
                "command: must be at most {MAX_COMMAND_BYTES} bytes without NUL characters"
            )));
        }
        let timeout = match params.timeout_ms {
            None => DEFAULT_TIMEOUT,
            Some(ms) => Duration::from_millis(u64::try_from(ms).map_err(|_| {
                ThreadError::InvalidParams("timeoutMs: must not be negative".to_owned())
            })?),
        };
        let thread_id = params.thread_id;
        // Fails unless the thread is loaded.
        let settings = self
            .threads
            .update_settings(&thread_id, SettingsOverrides::default())?;
        let (turn, interrupt, job) =
            self.claim_job(JobKind::ShellCommand, &thread_id, claim, &context.peer)?;
        let run = ShellRun {
            turns: self.clone(),
            thread_id,
            turn,
            command: params.command,
            settings,
            timeout,
            interrupt,
            peer: context.peer.clone(),
            job: job.clone(),
        };
        self.spawn_job(context, job, run.run());
        Ok(ThreadShellCommandResponse::builder().build())
    }
}

impl ShellRun {
    fn item(&self, id: &str, status: CommandExecutionStatus) -> ThreadItemKind {
        let argv = self.argv();
        let cwd = self.settings.cwd.clone();
        ThreadItemKind::command_execution()
            .id(id.to_owned())
            .command(self.command.clone())
            .cwd(LegacyAppPathString(cwd.clone()))
            .status(status)
            .source(CommandExecutionSource::UserShell)
            .command_actions(actions::describe(&argv, &self.command, &cwd))
            .build()
    }

    fn argv(&self) -> Vec<String> {
        vec!["/bin/sh".to_owned(), "-c".to_owned(), self.command.clone()]
    }

    async fn run(mut self) {
        let clock = Instant::now();
        let turns = self.turns.clone();
        turns
            .begin_job(self.peer.hub(), &self.job, &mut self.turn)
            .await;
        let item_id = new_id();
        let started_ms = now_ms();
        let started = self.item(&item_id, CommandExecutionStatus::InProgress);
        turns.start_item(&self.job, &self.turn.id, started, started_ms);
        job::fault_point(JobKind::ShellCommand);
        let request = ExecRequest {
            argv: self.argv(),
            cwd: PathBuf::from(&self.settings.cwd),
            timeout: self.timeout,
            sandbox: Some(self.settings.sandbox.clone()),
            sandbox_exe: self.turns.sandbox_exe.clone(),
            env: Some(self.turns.command_environment(&self.settings.cwd)),
        };
        let audience = self.turns.threads.subscribers.audience(&self.thread_id);
        let ids = (
            self.thread_id.clone(),
            self.turn.id.clone(),
            item_id.clone(),
        );
        let mut on_output = move |delta: &str| {
            let params = CommandExecutionOutputDeltaNotification::builder()
                .thread_id(ids.0.clone())
                .turn_id(ids.1.clone())
                .item_id(ids.2.clone())
                .delta(delta.to_owned())
                .build();
            audience.notify::<CommandExecutionOutputDelta>(&params);
        };
        let ran = tokio::select! {
            biased;
            _ = &mut self.interrupt => None,
            ran = exec::run(request, &mut on_output) => Some(ran),
        };
        let mut kind = self.item(&item_id, CommandExecutionStatus::Failed);
        let turn_status = match &ran {
            None => TurnStatus::Interrupted,
            Some(_) => TurnStatus::Completed,
        };
        if let ThreadItemKind::CommandExecution {
            status,
            aggregated_output,
            exit_code,
            duration_ms,
            ..
        } = &mut kind
        {
            match ran {
                None => *aggregated_output = Some("The command was interrupted.".to_owned()),
                Some(Err(error)) => *aggregated_output = Some(error.to_string()),
                Some(Ok(output)) => {
                    if output.exit_code == Some(0) && !output.timed_out {
                        *status = CommandExecutionStatus::Completed;
                    }
                    *exit_code = output.exit_code;
                    *duration_ms =
                        Some(i64::try_from(output.duration.as_millis()).unwrap_or(i64::MAX));
                    *aggregated_output = Some(output.aggregated_output);
                }
            }
        }
        let completed_ms = now_ms().max(started_ms);
        let item = ThreadItem::builder()
            .kind(kind)
            .started_at_ms(started_ms)
            .completed_at_ms(completed_ms)
            .build();
        turns
            .complete_item(&self.job, &self.turn.id, &item, completed_ms)
            .await;
        turns
            .settle_job(
                self.peer.hub(),
                &self.job,
                &mut self.turn,
                (turn_status, None),
                clock,
                (vec![item], true),
            )
            .await;
    }
}
