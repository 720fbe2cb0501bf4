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
//! life in this process: the same command line, or patches touching only approved paths, run
//! without asking again.

use std::collections::HashSet;
use std::path::PathBuf;

use agentwire_protocol::AskForApproval;

use crate::tools::safe_commands::is_known_safe;

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

/// Approvals a client gave "for the session" on one thread.
#[derive(Debug, Default)]
pub(crate) struct SessionApprovals {
    /// Command lines accepted for the session (as displayed).
    commands: HashSet<String>,
    /// Paths patches may write without asking again.
    paths: HashSet<PathBuf>,
}

impl SessionApprovals {
    /// Remembers the command line `command`.
    pub(super) fn allow_command(&mut self, command: &str) {
        self.commands.insert(command.to_owned());
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

/// The gate for running `argv` (shown as `display`); `escalate` when the model asked to leave
/// the sandbox.
pub(super) fn command_gate(
    policy: &AskForApproval,
    session: &SessionApprovals,
    argv: &[String],
    display: &str,
    escalate: bool,
) -> CommandGate {
    let escalate = escalate && asks_for_escalation(policy);
    if session.commands.contains(display) {
        return CommandGate::Run {
            sandboxed: !escalate,
        };
    }
    if escalate {
        return CommandGate::Ask { escalate: true };
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

    #[test]
    fn commands_follow_the_policy_table() {
        let none = SessionApprovals::default();
        let gate = |policy: &AskForApproval, line: &str, escalate: bool| {
            command_gate(policy, &none, &argv(line), line, escalate)
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
        let mut session = SessionApprovals::default();
        session.allow_command("make");
        assert_eq!(
            command_gate(&on_request, &session, &argv("make"), "make", true),
            CommandGate::Run { sandboxed: false }
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
