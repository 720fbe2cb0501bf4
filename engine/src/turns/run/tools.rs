//! Running the tool calls of a model call: each becomes an item (`commandExecution` or
//! `fileChange`), passes the approval gate, runs, and yields the result the next model call
//! sees.
//!
//! A call the engine cannot make sense of (unknown tool, bad arguments, unparsable patch)
//! makes no item: its error goes back to the model as the call's result, so the model can
//! correct itself. The client's `cancel` ends the turn as `interrupted`, like
//! `turn/interrupt`. `update_plan` makes a `plan` item and sends `turn/plan/updated`;
//! `view_image` and `web_search` are in [`super::media_tools`].
//!
//! An approval request goes to every connection following the thread (each under its own
//! request id), and to any that joins while it waits; the first well-formed answer decides,
//! and the others are withdrawn (`serverRequest/resolved`). While it waits the thread's status
//! carries `waitingOnApproval`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use agentwire_protocol::method::{Method, Request};
use agentwire_protocol::methods::{
    CommandExecutionOutputDelta, CommandExecutionRequestApproval, FileChangeRequestApproval,
    PlanDelta, TurnDiffUpdated, TurnPlanUpdated,
};
use agentwire_protocol::{
    CommandExecutionApprovalDecision, CommandExecutionApprovalKind,
    CommandExecutionOutputDeltaNotification, CommandExecutionRequestApprovalParams,
    CommandExecutionSource, CommandExecutionStatus, FileChangeApprovalDecision,
    FileChangeRequestApprovalParams, FileUpdateChange, LegacyAppPathString, PatchApplyStatus,
    PatchChangeKind, SandboxPolicy, ThreadItemKind,
};
use agentwire_protocol::{
    PlanDeltaNotification, TurnDiffUpdatedNotification, TurnPlanUpdatedNotification,
};
use agentwire_providers::{HistoryEntry, ToolCall};
use agentwire_tools::exec::{self, ExecRequest};
use agentwire_tools::sandbox::SandboxHelper;
use agentwire_tools::truncate::middle_cut;
use agentwire_tools::{
    self as tools, Invocation, SandboxPermissions, ShellArgs, actions, patch, sandbox,
};
// turn notifications area: a patch whose written change set differs from the announced one.
use agentwire_protocol::FileChangePatchUpdatedNotification;
use agentwire_protocol::methods::FileChangePatchUpdated;
use agentwire_runtime::Decline;

use super::super::approval::{
    CommandGate, CommandKey, PatchGate, SessionApprovals, command_gate, patch_gate,
};
use super::super::diff::TurnDiff;
use super::{CallEnd, TurnRun, now_ms};

/// Time limit of a command when the model gives none.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest time limit a model may ask for.
const MAX_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// What the client decided.
enum Decision {
    /// Go ahead (and remember it for the session when `for_session`).
    Accept {
        /// `acceptForSession`.
        for_session: bool,
    },
    /// Do not run this call; the turn goes on.
    Decline,
    /// Do not run it, and stop the turn.
    Cancel,
}

impl Decision {
    /// The decision's name in the tool call's span (`approval.decision`).
    fn name(&self) -> &'static str {
        match self {
            Decision::Accept { for_session: false } => "accept",
            Decision::Accept { for_session: true } => "acceptForSession",
            Decision::Decline => "decline",
            Decision::Cancel => "cancel",
        }
    }
}

/// How one tool call ended.
pub(super) struct Outcome {
    /// The result text for the model.
    pub(super) result: String,
    /// Set when the turn must end (interrupt or cancel).
    pub(super) end: Option<CallEnd>,
}

impl Outcome {
    pub(super) fn result(result: impl Into<String>) -> Self {
        Self {
            result: result.into(),
            end: None,
        }
    }
}

/// The result a call of a built-in tool the thread withholds gets (the model was not offered
/// it, but models call familiar tools anyway).
fn withheld(name: &str) -> String {
    format!("The tool `{name}` is not available in this session. Use the tools you were offered.")
}

impl TurnRun {
    /// Runs `calls` in order and appends their results to the history. Returns how the turn
    /// must end, if a call ended it.
    pub(super) async fn run_tools(&mut self, calls: Vec<ToolCall>) -> Option<CallEnd> {
        // Images `view_image` attached: they follow the results of this call's tools.
        let mut images = Vec::new();
        for call in calls {
            // Between calls, let the runtime read what the client sent (a `turn/interrupt`
            // while a series of patches applies must not wait for the series), and stop if it
            // asked to.
            tokio::task::yield_now().await;
            if self.interrupt.try_recv().is_ok() {
                return Some(CallEnd::Interrupted);
            }
            self.telemetry
                .tool_started((&self.thread_id, &self.turn.id), &call.name);
            // `PreToolUse` hooks may refuse the call (see `hook_points`).
            let refused = self.pre_tool_hooks(&call).await;
            let outcome = if let Some(refused) = &refused {
                Outcome::result(refused.clone())
            } else if let Some((result, end)) = self.client_tool(&call).await {
                Outcome { result, end }
            } else if let Some((server, tool)) = self.mcp_target(&call.name) {
                let (result, end) = self.mcp_call(server, tool, &call.arguments).await;
                Outcome { result, end }
            } else if !self.builtins.allows(&call.name) {
                Outcome::result(withheld(&call.name))
            } else {
                match tools::parse(&call.name, &call.arguments) {
                    Err(error) => Outcome::result(error),
                    Ok(Invocation::Shell(args)) => self.shell(args).await,
                    Ok(Invocation::WriteStdin(args)) => self.write_stdin(args).await,
                    Ok(Invocation::ApplyPatch { input }) => self.apply_patch(&input).await,
                    Ok(Invocation::UpdatePlan(args)) => self.update_plan(&args).await,
                    Ok(Invocation::ViewImage { path }) => {
                        let (result, image) = self.view_image(&path).await;
                        images.extend(image);
                        Outcome::result(result)
                    }
                    Ok(Invocation::WebSearch { query }) => {
                        Outcome::result(self.web_search(&query).await)
                    }
                }
            };
            // `PostToolUse` hooks may add to the result (see `hook_points`).
            let output = match refused {
                Some(_) => outcome.result,
                None => self.post_tool_hooks(&call, outcome.result).await,
            };
            self.history.push(HistoryEntry::ToolResult {
                call_id: call.call_id,
                output,
            });
            self.telemetry.tool_ended();
            if outcome.end.is_some() {
                self.attach_images(images);
                return outcome.end;
            }
        }
        self.attach_images(images);
        None
    }

    /// Waits for `future` unless the turn is interrupted first (`None`).
    pub(super) async fn unless_interrupted<T>(
        &mut self,
        future: impl Future<Output = T>,
    ) -> Option<T> {
        tokio::select! {
            biased;
            _ = &mut self.interrupt => None,
            value = future => Some(value),
        }
    }

    /// Asks the connections following the thread with the approval request `M` and reads the
    /// first well-formed answer with `decide` (none: declined, with the last error as the
    /// reason). A connection that joins the thread while the request waits is asked too, once
    /// it has its `thread/resume` answer. An interrupt while waiting withdraws the requests and
    /// counts as `cancel`. The caller has marked the thread `waitingOnApproval`; this clears
    /// the mark once every request is settled (each settled request sends
    /// `serverRequest/resolved` to its connection).
    async fn ask<M>(
        &mut self,
        params: &M::Params,
        decide: impl FnOnce(M::Response) -> Decision,
    ) -> Decision
    where
        M: Request,
        M::Response: Decline,
    {
        let asked = std::time::Instant::now();
        let answer = self.ask_followers::<M>(params).await;
        self.waiting_on_approval(false);
        let decision = match answer {
            None => Decision::Cancel,
            Some(Ok(answer)) => decide(answer),
            Some(Err(reason)) => {
                tracing::warn!(method = <M as Method>::NAME, %reason, "approval declined: no well-formed answer");
                decide(M::Response::decline(&reason))
            }
        };
        self.telemetry.approval(asked.elapsed(), decision.name());
        decision
    }

    /// An `update_plan` call: the plan goes to the clients as a `plan` item (its text
    /// streamed line by line as `item/plan/delta`) and as `turn/plan/updated`.
    async fn update_plan(&mut self, args: &tools::plan::PlanArgs) -> Outcome {
        let id = agentwire_store::meta::new_id();
        let started_ms = now_ms();
        let text = args.markdown();
        let kind = |text: &str| {
            ThreadItemKind::plan()
                .id(id.clone())
                .text(text.to_owned())
                .build()
        };
        self.started(kind(""), started_ms);
        for line in text.split_inclusive('\n') {
            self.notify::<PlanDelta>(
                &PlanDeltaNotification::builder()
                    .thread_id(self.thread_id.clone())
                    .turn_id(self.turn.id.clone())
                    .item_id(id.clone())
                    .delta(line)
                    .build(),
            );
        }
        self.complete(kind(&text), started_ms).await;
        self.notify::<TurnPlanUpdated>(
            &TurnPlanUpdatedNotification::builder()
                .thread_id(self.thread_id.clone())
                .turn_id(self.turn.id.clone())
                .plan(args.steps())
                .maybe_explanation(args.explanation.clone())
                .build(),
        );
        Outcome::result(tools::plan::PLAN_TAKEN)
    }

    /// Runs `work` on the turn's diff on a blocking thread (it reads files), off the runtime
    /// that serves every connection. `None` if the diff is gone (an earlier run failed).
    async fn with_diff<T: Send + 'static>(
        &mut self,
        work: impl FnOnce(&mut TurnDiff) -> T + Send + 'static,
    ) -> Option<T> {
        let mut diff = self.diff.take()?;
        let done = tokio::task::spawn_blocking(move || {
            let out = work(&mut diff);
            (diff, out)
        })
        .await;
        match done {
            Ok((diff, out)) => {
                self.diff = Some(diff);
                Some(out)
            }
            Err(error) => {
                tracing::warn!(%error, "the turn diff stopped; no more turn/diff/updated");
                None
            }
        }
    }

    /// Sends the turn's whole diff so far, unless it is empty.
    async fn diff_updated(&mut self) {
        let Some(diff) = self.with_diff(|diff| diff.render()).await else {
            return;
        };
        if !diff.is_empty() {
            self.notify::<TurnDiffUpdated>(
                &TurnDiffUpdatedNotification::builder()
                    .thread_id(self.thread_id.clone())
                    .turn_id(self.turn.id.clone())
                    .diff(diff)
                    .build(),
            );
        }
    }

    /// Runs `change` on the thread's session approvals.
    fn with_session<T>(&self, change: impl FnOnce(&mut SessionApprovals) -> T) -> T {
        let session = self.turns.session(&self.thread_id);
        let mut session = agentwire_support::lock(&session);
        change(&mut session)
    }

    /// A `shell` call.
    async fn shell(&mut self, args: ShellArgs) -> Outcome {
        let argv = args.command.argv();
        let display = args.command.display();
        let cwd = resolve(Path::new(&self.settings.cwd), args.workdir.as_deref());
        let cwd_text = cwd.display().to_string();
        let escalate = args.sandbox_permissions == Some(SandboxPermissions::RequireEscalated);
        let policy = self.settings.approval_policy.clone();
        // What a session approval must match: this line, here, under this sandbox policy.
        let key = CommandKey::new(&display, &cwd, &self.settings.sandbox);
        let gate =
            self.with_session(|session| command_gate(&policy, session, &argv, &key, escalate));
        let id = agentwire_store::meta::new_id();
        let started_ms = now_ms();
        // An `exec_command` may go on as an exec session: its item carries the session's id.
        let session_id = args
            .yield_time
            .map(|_| self.turns.exec_sessions().next_id());
        let item = CommandItem {
            id: id.clone(),
            command: display.clone(),
            cwd: cwd_text.clone(),
            actions: actions::describe(&argv, &display, &cwd_text),
            process_id: session_id.map(|id| id.to_string()),
        };
        if matches!(gate, CommandGate::Ask { .. }) {
            self.waiting_on_approval(true);
        }
        self.started(
            item.kind(CommandExecutionStatus::InProgress, None),
            started_ms,
        );
        let sandboxed = match gate {
            CommandGate::Run { sandboxed } => sandboxed,
            CommandGate::Ask { escalate } => {
                let reason = if escalate {
                    args.justification.clone().or_else(|| {
                        Some("The model asks to run this command outside the sandbox.".to_owned())
                    })
                } else {
                    Some("The approval policy asks before running this command.".to_owned())
                };
                let params = CommandExecutionRequestApprovalParams::builder()
                    .thread_id(self.thread_id.clone())
                    .turn_id(self.turn.id.clone())
                    .item_id(id.clone())
                    .kind(CommandExecutionApprovalKind::Command)
                    .command(display.clone())
                    .cwd(LegacyAppPathString(cwd_text.clone()))
                    .command_actions(item.actions.clone())
                    .maybe_reason(reason)
                    .started_at_ms(started_ms)
                    .build();
                let decision = self
                    .ask::<CommandExecutionRequestApproval>(&params, |a| {
                        command_decision(a.decision)
                    })
                    .await;
                match decision {
                    Decision::Accept { for_session } => {
                        // Remembered as a sandboxed run only: an escalation asks every time.
                        if for_session {
                            self.with_session(|session| session.allow_command(key));
                        }
                        !escalate
                    }
                    Decision::Decline | Decision::Cancel => {
                        let cancel = matches!(decision, Decision::Cancel);
                        self.complete(
                            item.kind(CommandExecutionStatus::Declined, None),
                            started_ms,
                        )
                        .await;
                        return Outcome {
                            result: "The user declined to run this command.".to_owned(),
                            end: cancel.then_some(CallEnd::Interrupted),
                        };
                    }
                }
            }
        };
        let timeout = args
            .timeout_ms
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis)
            .min(MAX_TIMEOUT);
        let mut request = ExecRequest {
            argv,
            cwd,
            timeout,
            sandbox: sandboxed.then(|| self.settings.sandbox.clone()),
            sandbox_exe: self.turns.sandbox_exe.clone(),
            env: Some(self.turns.command_environment(&self.settings.cwd)),
        };
        if let (Some(session_id), Some(yield_time)) = (session_id, args.yield_time) {
            request.timeout = super::exec_session::SESSION_LIFETIME;
            let start = super::exec_session::SessionStart {
                session_id,
                item,
                started_ms,
                request,
                yield_time,
                max_output_bytes: args.max_output_bytes,
            };
            return self.exec_session(start).await;
        }
        let audience = self.audience();
        let delta_ids = (self.thread_id.clone(), self.turn.id.clone(), id.clone());
        let mut on_output = move |delta: &str| {
            let params = CommandExecutionOutputDeltaNotification::builder()
                .thread_id(delta_ids.0.clone())
                .turn_id(delta_ids.1.clone())
                .item_id(delta_ids.2.clone())
                .delta(delta.to_owned())
                .build();
            audience.notify::<CommandExecutionOutputDelta>(&params);
        };
        let ran = self
            .unless_interrupted(exec::run(request, &mut on_output))
            .await;
        if let Some(Err(exec::ExecError::Sandbox(_))) = &ran {
            agentwire_runtime::telemetry::sandbox_refused("command");
        }
        let (status, report, result, end) = match ran {
            None => (
                CommandExecutionStatus::Failed,
                Report::default(),
                "The command was interrupted.".to_owned(),
                Some(CallEnd::Interrupted),
            ),
            Some(ran) => {
                let limit = args
                    .max_output_bytes
                    .unwrap_or_else(|| self.tool_output_bytes());
                let (status, report, result) = command_result(&ran, timeout, limit);
                (status, report, result, None)
            }
        };
        self.complete(item.kind(status, Some(report)), started_ms)
            .await;
        Outcome { result, end }
    }

    /// An `apply_patch` call.
    async fn apply_patch(&mut self, input: &str) -> Outcome {
        let cwd = PathBuf::from(&self.settings.cwd);
        let parsed = match patch::parse(input) {
            Ok(parsed) => parsed,
            Err(error) => return Outcome::result(format!("The patch was not applied: {error}")),
        };
        let changes = match patch::preview(&parsed, &cwd) {
            Ok(changes) => changes,
            Err(error) => return Outcome::result(format!("The patch was not applied: {error}")),
        };
        let roots = sandbox::writable_roots(&self.settings.sandbox, &cwd);
        let outside = roots
            .as_deref()
            .map(|roots| patch::outside_roots(&parsed, &cwd, roots))
            .unwrap_or_default();
        let written = written_paths(&changes);
        let policy = self.settings.approval_policy.clone();
        let gate = self.with_session(|session| patch_gate(&policy, session, &written, &outside));
        let id = agentwire_store::meta::new_id();
        let started_ms = now_ms();
        let kind = |status| {
            ThreadItemKind::file_change()
                .id(id.clone())
                .status(status)
                .changes(changes.clone())
                .build()
        };
        if gate == PatchGate::Ask {
            self.waiting_on_approval(true);
        }
        self.started(kind(PatchApplyStatus::InProgress), started_ms);
        // Whether the client approved these paths (now, or for the session): the patch is then
        // written by the server, exactly at them (`patch::apply_approved`).
        let approved = matches!(gate, PatchGate::Ask | PatchGate::Apply { confined: false })
            && roots.is_some();
        let confined = match gate {
            PatchGate::Apply { confined } => confined,
            PatchGate::Refuse(reason) => {
                self.complete(kind(PatchApplyStatus::Declined), started_ms)
                    .await;
                return Outcome::result(reason);
            }
            PatchGate::Ask => {
                let grant_root = outside
                    .first()
                    .and_then(|p| p.parent())
                    .map(|p| p.display().to_string());
                let params = FileChangeRequestApprovalParams::builder()
                    .thread_id(self.thread_id.clone())
                    .turn_id(self.turn.id.clone())
                    .item_id(id.clone())
                    .reason(if outside.is_empty() {
                        "The approval policy asks before changing files.".to_owned()
                    } else {
                        "The patch writes outside the sandbox's writable roots.".to_owned()
                    })
                    .maybe_grant_root(grant_root)
                    .started_at_ms(started_ms)
                    .build();
                let decision = self
                    .ask::<FileChangeRequestApproval>(&params, |a| patch_decision(a.decision))
                    .await;
                match decision {
                    Decision::Accept { for_session } => {
                        if for_session {
                            self.with_session(|session| {
                                session.allow_paths(written.iter().cloned());
                            });
                        }
                        false
                    }
                    Decision::Decline | Decision::Cancel => {
                        let cancel = matches!(decision, Decision::Cancel);
                        self.complete(kind(PatchApplyStatus::Declined), started_ms)
                            .await;
                        return Outcome {
                            result: "The user declined the patch; nothing was changed.".to_owned(),
                            end: cancel.then_some(CallEnd::Interrupted),
                        };
                    }
                }
            }
        };
        let tracked = changes.clone();
        self.with_diff(move |diff| diff.track(&tracked)).await;
        let applied = match (confined, roots, self.turns.sandbox_exe.as_ref()) {
            // Confined: written by `agentwire apply-patch` inside the sandbox, where the kernel
            // checks every write (see `patch::confined`).
            (true, Some(roots), Some(helper)) => {
                let policy = self.settings.sandbox.clone();
                patch_confined(helper, &policy, &cwd, &roots, input).await
            }
            (true, Some(_), None) => Err(patch::PatchError(
                "the sandbox policy confines this patch, but no sandbox program \
                 (`agentwire sandbox-exec`) is configured, so it was not applied"
                    .to_owned(),
            )),
            // Approved (the client saw these paths; the policy confines): written by the
            // server exactly where approved, no symbolic link followed on the way, so a link
            // swapped in while the approval waited makes it fail instead of writing elsewhere.
            (false, Some(roots), _) if approved => {
                tokio::task::spawn_blocking(move || patch::apply_approved(&parsed, &cwd, &roots))
                    .await
                    .unwrap_or_else(|join| {
                        Err(patch::PatchError(format!(
                            "applying it stopped unexpectedly ({join})"
                        )))
                    })
            }
            // Unconfined (a policy that confines nothing): written by the server, on a
            // blocking thread rather than on the runtime that serves every connection.
            _ => tokio::task::spawn_blocking(move || patch::apply(&parsed, &cwd, None))
                .await
                .unwrap_or_else(|join| {
                    Err(patch::PatchError(format!(
                        "applying it stopped unexpectedly ({join})"
                    )))
                }),
        };
        match applied {
            Ok(applied) => {
                // turn notifications area: the files changed while the approval waited, so
                // what was written differs from what the item announced.
                if applied != changes {
                    self.notify::<FileChangePatchUpdated>(
                        &FileChangePatchUpdatedNotification::builder()
                            .thread_id(self.thread_id.clone())
                            .turn_id(self.turn.id.clone())
                            .item_id(id.clone())
                            .changes(applied.clone())
                            .build(),
                    );
                }
                let summary: Vec<String> = applied.iter().map(describe_change).collect();
                self.complete(
                    ThreadItemKind::file_change()
                        .id(id.clone())
                        .status(PatchApplyStatus::Completed)
                        .changes(applied)
                        .build(),
                    started_ms,
                )
                .await;
                self.diff_updated().await;
                Outcome::result(format!("The patch was applied:\n{}", summary.join("\n")))
            }
            Err(error) => {
                self.complete(kind(PatchApplyStatus::Failed), started_ms)
                    .await;
                Outcome::result(format!("The patch was not applied: {error}"))
            }
        }
    }
}

/// What a finished command reports in its item.
#[derive(Default)]
pub(super) struct Report {
    exit_code: Option<i32>,
    duration_ms: Option<i64>,
    output: Option<String>,
}

/// How a command that ran (or could not start) ended: its item's status and report, and the
/// result text for the model (the output cut to `max_output_bytes`: the call's own
/// `max_output_tokens`, else the model's budget).
pub(super) fn command_result(
    ran: &Result<exec::ExecOutput, exec::ExecError>,
    timeout: Duration,
    max_output_bytes: usize,
) -> (CommandExecutionStatus, Report, String) {
    match ran {
        Err(error) => (
            CommandExecutionStatus::Failed,
            Report {
                output: Some(error.to_string()),
                ..Report::default()
            },
            format!("The command did not run: {error}"),
        ),
        Ok(output) => {
            let status = if output.exit_code == Some(0) {
                CommandExecutionStatus::Completed
            } else {
                CommandExecutionStatus::Failed
            };
            let seconds = output.duration.as_secs_f64();
            let exit = match (output.exit_code, output.timed_out) {
                (_, true) => format!("timed out after {} ms", timeout.as_millis()),
                (Some(code), _) => code.to_string(),
                (None, _) => "killed by a signal".to_owned(),
            };
            let shown = middle_cut(&output.aggregated_output, max_output_bytes);
            let result =
                format!("Exit code: {exit}\nWall time: {seconds:.1} seconds\nOutput:\n{shown}");
            let report = Report {
                exit_code: output.exit_code,
                duration_ms: Some(i64::try_from(output.duration.as_millis()).unwrap_or(i64::MAX)),
                output: Some(output.aggregated_output.clone()),
            };
            (status, report, result)
        }
    }
}

/// The fixed parts of a `commandExecution` item.
#[derive(Clone)]
pub(super) struct CommandItem {
    pub(super) id: String,
    pub(super) command: String,
    pub(super) cwd: String,
    actions: Vec<agentwire_protocol::CommandAction>,
    /// The exec session's id, for a command started by `exec_command`.
    pub(super) process_id: Option<String>,
}

impl CommandItem {
    pub(super) fn kind(
        &self,
        status: CommandExecutionStatus,
        report: Option<Report>,
    ) -> ThreadItemKind {
        let report = report.unwrap_or_default();
        ThreadItemKind::command_execution()
            .id(self.id.clone())
            .command(self.command.clone())
            .cwd(LegacyAppPathString(self.cwd.clone()))
            .status(status)
            .source(CommandExecutionSource::default())
            .command_actions(self.actions.clone())
            .maybe_aggregated_output(report.output)
            .maybe_exit_code(report.exit_code)
            .maybe_duration_ms(report.duration_ms)
            .maybe_process_id(self.process_id.clone())
            .build()
    }
}

/// `workdir` resolved against `cwd` (`cwd` itself when absent).
fn resolve(cwd: &Path, workdir: Option<&str>) -> PathBuf {
    match workdir {
        Some(dir) => std::path::absolute(cwd.join(dir)).unwrap_or_else(|_| cwd.join(dir)),
        None => cwd.to_path_buf(),
    }
}

/// Every path `changes` write: targets and move destinations.
fn written_paths(changes: &[FileUpdateChange]) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for change in changes {
        paths.push(PathBuf::from(&change.path));
        if let PatchChangeKind::Update {
            move_path: Some(to),
            ..
        } = &change.kind
        {
            paths.push(PathBuf::from(to));
        }
    }
    paths
}

/// One line per applied change, for the model.
fn describe_change(change: &FileUpdateChange) -> String {
    match &change.kind {
        PatchChangeKind::Add => format!("A {}", change.path),
        PatchChangeKind::Delete => format!("D {}", change.path),
        PatchChangeKind::Update {
            move_path: Some(to),
            ..
        } => format!("M {} -> {to}", change.path),
        PatchChangeKind::Update {
            move_path: None, ..
        } => format!("M {}", change.path),
        _ => format!("? {}", change.path),
    }
}

fn command_decision(decision: CommandExecutionApprovalDecision) -> Decision {
    match decision {
        CommandExecutionApprovalDecision::Accept
        | CommandExecutionApprovalDecision::ApplyNetworkPolicyAmendment { .. } => {
            Decision::Accept { for_session: false }
        }
        CommandExecutionApprovalDecision::AcceptForSession
        | CommandExecutionApprovalDecision::AcceptWithExecpolicyAmendment { .. } => {
            Decision::Accept { for_session: true }
        }
        CommandExecutionApprovalDecision::Decline => Decision::Decline,
        CommandExecutionApprovalDecision::Cancel => Decision::Cancel,
        // A decision this server does not know runs nothing.
        _ => Decision::Decline,
    }
}

fn patch_decision(decision: FileChangeApprovalDecision) -> Decision {
    match decision {
        FileChangeApprovalDecision::Accept => Decision::Accept { for_session: false },
        FileChangeApprovalDecision::AcceptForSession => Decision::Accept { for_session: true },
        FileChangeApprovalDecision::Decline => Decision::Decline,
        FileChangeApprovalDecision::Cancel => Decision::Cancel,
        // A decision this server does not know applies nothing.
        _ => Decision::Decline,
    }
}

/// Applies `input` with `agentwire apply-patch` run through `sandbox-exec` under `policy`:
/// the changes it made, or why it could not.
async fn patch_confined(
    helper: &SandboxHelper,
    policy: &SandboxPolicy,
    cwd: &Path,
    roots: &[PathBuf],
    input: &str,
) -> Result<Vec<FileUpdateChange>, patch::PatchError> {
    use tokio::io::AsyncWriteExt;

    let failed = |what: String| patch::PatchError(what);
    let mut argv = vec![
        helper.exe.to_string_lossy().into_owned(),
        "apply-patch".to_owned(),
        "--cwd".to_owned(),
        cwd.to_string_lossy().into_owned(),
    ];
    for root in roots {
        argv.push("--root".to_owned());
        argv.push(root.to_string_lossy().into_owned());
    }
    let mut command = exec::sandbox_exec_command(helper, policy, cwd, &argv, false)
        .map_err(|e| failed(e.to_string()))?;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|e| failed(format!("cannot start the patch helper: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(input.as_bytes())
            .await
            .map_err(|e| failed(format!("cannot hand the patch to its helper: {e}")))?;
    }
    let output = child
        .wait_with_output()
        .await
        .map_err(|e| failed(format!("the patch helper failed: {e}")))?;
    if output.status.success() {
        patch::confined::read_changes(&output.stdout).map_err(failed)
    } else {
        let reason = String::from_utf8_lossy(&output.stderr);
        let reason = reason.trim().trim_start_matches("agentwire apply-patch: ");
        Err(failed(reason.to_owned()))
    }
}
