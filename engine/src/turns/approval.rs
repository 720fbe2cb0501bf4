//! When a tool call needs the client's approval, from the thread's approval policy.
//!
//! | policy       | command                                         | patch                               |
//! |--------------|-------------------------------------------------|-------------------------------------|
//! | `untrusted`  | asks unless known to only read (`safe_commands`) and not escalated | always asks        |
//! | `on-request` | asks only when the model asks to leave the sandbox | asks when it writes outside the writable roots |
//! | `never`      | never asks; runs in the sandbox                  | never asks; writes outside the roots are refused |
//! | `granular`   | as `on-request` when `sandbox_approval`, else as `never` | the same                   |
//!
//! An approved escalation runs the command without the sandbox; an approved patch may write
//! outside the writable roots. `acceptForSession` is remembered for the rest of the thread's
//! life in this process, keyed by exactly what was approved: a command runs again without
//! asking only with the same command line, in the same working directory and under the same
//! sandbox policy ([`CommandKey`]); patches touching only approved paths are applied without
//! asking again.
//!
//! An escalated run (the model asks to leave the sandbox) is never covered by a session
//! approval: it asks every time, unless the policy never asks (then it runs in the sandbox).
//! Accepting one "for the session" remembers only the same command run *inside* the sandbox,
//! which asks for less than what was granted.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use agentwire_protocol::{AskForApproval, SandboxPolicy};
use agentwire_tools::safe_commands::is_known_safe;

/// What to do with a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CommandGate {
    /// Run it without asking; `sandboxed` says whether under the thread's sandbox policy.
    Run {
        /// Run under the sandbox policy.
        sandboxed: bool,
    },
    /// Ask the client first; if it accepts, run it (`escalate`: without the sandbox).
    Ask {
        /// The model asked to leave the sandbox.
        escalate: bool,
    },
}

/// What to do with a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PatchGate {
    /// Apply it; `confined` says whether writes are limited to the writable roots.
    Apply {
        /// Limit writes to the sandbox's writable roots.
        confined: bool,
    },
    /// Ask the client first; if it accepts, apply it without the roots limit.
    Ask,
    /// Refuse it, for this reason (sent to the model).
    Refuse(String),
}

/// What a command approved "for the session" covers: this command line, run in this working
/// directory, confined by this sandbox policy. A run that differs in any of them (another
/// directory, a looser policy, an escalation out of the sandbox) is asked about again.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CommandKey {
    /// The command line, as displayed in the approval request.
    pub command: String,
    /// The directory it runs in (absolute).
    pub cwd: PathBuf,
    /// The sandbox policy it runs under.
    pub sandbox: SandboxPolicy,
}

impl CommandKey {
    /// The key of `command` run in `cwd` under `sandbox`.
    pub(super) fn new(command: &str, cwd: &Path, sandbox: &SandboxPolicy) -> Self {
        Self {
            command: command.to_owned(),
            cwd: cwd.to_path_buf(),
            sandbox: sandbox.clone(),
        }
    }
}

/// Approvals a client gave "for the session" on one thread.
#[derive(Debug, Default)]
pub(crate) struct SessionApprovals {
    /// Commands accepted for the session, each with where and how confined it may run. Only
    /// sandboxed runs are kept: an escalation always asks.
    commands: Vec<CommandKey>,
    /// Paths patches may write without asking again.
    paths: HashSet<PathBuf>,
}

impl SessionApprovals {
    /// Remembers that `key` (a sandboxed run) may run again without asking.
    pub(super) fn allow_command(&mut self, key: CommandKey) {
        if !self.commands.contains(&key) {
            self.commands.push(key);
        }
    }

    /// Remembers `paths` as writable.
    pub(super) fn allow_paths(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        self.paths.extend(paths);
    }
}

/// Whether `policy` asks before leaving the sandbox.
fn asks_for_escalation(policy: &AskForApproval) -> bool {
    match policy {
        AskForApproval::Untrusted | AskForApproval::OnRequest => true,
        AskForApproval::Never => false,
        AskForApproval::Granular {
            sandbox_approval, ..
        } => *sandbox_approval,
        _ => true,
    }
}

/// The gate for running `argv` (shown as `key.command`, in `key.cwd`, under `key.sandbox`);
/// `escalate` when the model asked to leave the sandbox. An escalation asks whatever the
/// session approved (unless `policy` never asks: then it runs in the sandbox); a sandboxed run
/// is covered by a session approval of exactly `key`.
pub(super) fn command_gate(
    policy: &AskForApproval,
    session: &SessionApprovals,
    argv: &[String],
    key: &CommandKey,
    escalate: bool,
) -> CommandGate {
    if escalate && asks_for_escalation(policy) {
        return CommandGate::Ask { escalate: true };
    }
    if session.commands.contains(key) {
        return CommandGate::Run { sandboxed: true };
    }
    match policy {
        AskForApproval::Untrusted if !is_known_safe(argv) => CommandGate::Ask { escalate: false },
        _ => CommandGate::Run { sandboxed: true },
    }
}

/// The gate for a patch writing `written` (resolved paths), of which `outside` lie outside the
/// sandbox's writable roots.
pub(super) fn patch_gate(
    policy: &AskForApproval,
    session: &SessionApprovals,
    written: &[PathBuf],
    outside: &[PathBuf],
) -> PatchGate {
    if !written.is_empty() && written.iter().all(|p| session.paths.contains(p)) {
        return PatchGate::Apply { confined: false };
    }
    if matches!(policy, AskForApproval::Untrusted) {
        return PatchGate::Ask;
    }
    if outside.is_empty() {
        return PatchGate::Apply { confined: true };
    }
    if asks_for_escalation(policy) {
        return PatchGate::Ask;
    }
    agentwire_runtime::telemetry::sandbox_refused("patch");
    let paths: Vec<String> = outside.iter().map(|p| p.display().to_string()).collect();
    PatchGate::Refuse(format!(
        "The patch writes outside the sandbox's writable roots ({}), and the approval policy \
         does not allow asking the user; nothing was changed.",
        paths.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        vec!["bash".to_owned(), "-c".to_owned(), line.to_owned()]
    }

    fn key(line: &str) -> CommandKey {
        CommandKey::new(line, Path::new("/w"), &SandboxPolicy::read_only().build())
    }

    #[test]
    fn commands_follow_the_policy_table() {
        let none = SessionApprovals::default();
        let gate = |policy: &AskForApproval, line: &str, escalate: bool| {
            command_gate(policy, &none, &argv(line), &key(line), escalate)
        };
        let untrusted = AskForApproval::Untrusted;
        assert_eq!(
            gate(&untrusted, "ls", false),
            CommandGate::Run { sandboxed: true }
        );
        assert_eq!(
            gate(&untrusted, "make", false),
            CommandGate::Ask { escalate: false }
        );
        assert_eq!(
            gate(&untrusted, "ls", true),
            CommandGate::Ask { escalate: true }
        );
        let on_request = AskForApproval::OnRequest;
        assert_eq!(
            gate(&on_request, "make", false),
            CommandGate::Run { sandboxed: true }
        );
        assert_eq!(
            gate(&on_request, "make", true),
            CommandGate::Ask { escalate: true }
        );
        let never = AskForApproval::Never;
        assert_eq!(
            gate(&never, "make", true),
            CommandGate::Run { sandboxed: true }
        );
    }

    /// A session approval covers exactly the command, directory and sandbox it was given for,
    /// and never an escalation out of the sandbox (issue #32, finding 2).
    #[test]
    fn session_approvals_cover_exactly_what_was_approved() {
        let untrusted = AskForApproval::Untrusted;
        let mut session = SessionApprovals::default();
        session.allow_command(key("make"));
        let gate = |key: &CommandKey, escalate: bool| {
            command_gate(&untrusted, &session, &argv("make"), key, escalate)
        };
        assert_eq!(
            gate(&key("make"), false),
            CommandGate::Run { sandboxed: true }
        );
        assert_eq!(
            gate(&key("make"), true),
            CommandGate::Ask { escalate: true }
        );
        assert_eq!(
            command_gate(
                &AskForApproval::OnRequest,
                &session,
                &argv("make"),
                &key("make"),
                true
            ),
            CommandGate::Ask { escalate: true }
        );
        let elsewhere = CommandKey::new("make", Path::new("/other"), &key("make").sandbox);
        assert_eq!(
            gate(&elsewhere, false),
            CommandGate::Ask { escalate: false }
        );
        let looser = CommandKey::new("make", Path::new("/w"), &SandboxPolicy::DangerFullAccess);
        assert_eq!(gate(&looser, false), CommandGate::Ask { escalate: false });
        // A policy that never asks does not escalate: the command runs in the sandbox.
        assert_eq!(
            command_gate(
                &AskForApproval::Never,
                &session,
                &argv("make"),
                &key("make"),
                true
            ),
            CommandGate::Run { sandboxed: true }
        );
    }

    #[test]
    fn patches_follow_the_policy_table() {
        let none = SessionApprovals::default();
        let inside = vec![PathBuf::from("/w/a")];
        let outside = vec![PathBuf::from("/etc/x")];
        let on_request = AskForApproval::OnRequest;
        assert_eq!(
            patch_gate(&on_request, &none, &inside, &[]),
            PatchGate::Apply { confined: true }
        );
        assert_eq!(
            patch_gate(&on_request, &none, &outside, &outside),
            PatchGate::Ask
        );
        assert_eq!(
            patch_gate(&AskForApproval::Untrusted, &none, &inside, &[]),
            PatchGate::Ask
        );
        assert!(matches!(
            patch_gate(&AskForApproval::Never, &none, &outside, &outside),
            PatchGate::Refuse(reason) if reason.contains("/etc/x")
        ));
        let mut session = SessionApprovals::default();
        session.allow_paths(outside.clone());
        assert_eq!(
            patch_gate(&AskForApproval::Never, &session, &outside, &outside),
            PatchGate::Apply { confined: false }
        );
    }
}
