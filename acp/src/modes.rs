//! The session modes `agentwire acp` offers: each is an approval policy and a sandbox preset,
//! the same pairs the TUI's `/approvals` picker offers.
//!
//! | mode id       | approval policy | sandbox              |
//! |---------------|-----------------|----------------------|
//! | `ask`         | `untrusted`     | `workspace-write`    |
//! | `read-only`   | `on-request`    | `read-only`          |
//! | `auto`        | `on-request`    | `workspace-write`    |
//! | `full-access` | `never`         | `danger-full-access` |

use agent_client_protocol::v1::schema::{SessionMode, SessionModeId, SessionModeState};
use agentwire_protocol::{AskForApproval, SandboxMode, SandboxPolicy};
use serde_json::{Value, json};

/// One mode of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Ask before any command not known to be harmless; write inside the workspace.
    Ask,
    /// Read anywhere, write nowhere; ask to go further.
    ReadOnly,
    /// Work inside the workspace freely; ask to go further.
    Auto,
    /// No sandbox and no questions.
    FullAccess,
}

impl Mode {
    /// Every mode, in the order a client lists them.
    pub const ALL: [Mode; 4] = [Mode::Ask, Mode::ReadOnly, Mode::Auto, Mode::FullAccess];

    /// The mode's id on the wire.
    pub fn id(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::ReadOnly => "read-only",
            Mode::Auto => "auto",
            Mode::FullAccess => "full-access",
        }
    }

    /// The mode's name, for people.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Ask => "Ask",
            Mode::ReadOnly => "Read only",
            Mode::Auto => "Auto",
            Mode::FullAccess => "Full access",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Mode::Ask => {
                "Asks before running any command that is not known to be harmless; edits inside the workspace."
            }
            Mode::ReadOnly => {
                "Reads files and runs read-only commands; asks before writing or using the network."
            }
            Mode::Auto => {
                "Reads, edits and runs commands inside the workspace; asks before going further."
            }
            Mode::FullAccess => {
                "Edits and runs anything, network included, without asking. Use with care."
            }
        }
    }

    /// The mode named `id`, if there is one.
    pub fn from_id(id: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|mode| mode.id() == id)
    }

    /// The approval policy the mode runs turns with.
    pub fn approval_policy(self) -> AskForApproval {
        match self {
            Mode::Ask => AskForApproval::Untrusted,
            Mode::ReadOnly | Mode::Auto => AskForApproval::OnRequest,
            Mode::FullAccess => AskForApproval::Never,
        }
    }

    /// The sandbox mode the mode runs commands in.
    pub fn sandbox(self) -> SandboxMode {
        match self {
            Mode::ReadOnly => SandboxMode::ReadOnly,
            Mode::Ask | Mode::Auto => SandboxMode::WorkspaceWrite,
            Mode::FullAccess => SandboxMode::DangerFullAccess,
        }
    }

    /// The sandbox policy `turn/start` takes for the mode (`turn/start` takes a policy, not a
    /// mode): the plain policy of the mode, without extra writable roots.
    pub fn sandbox_policy(self) -> Value {
        match self.sandbox() {
            SandboxMode::ReadOnly => json!({"type": "readOnly"}),
            SandboxMode::DangerFullAccess => json!({"type": "dangerFullAccess"}),
            _ => json!({"type": "workspaceWrite"}),
        }
    }

    /// The mode closest to what a thread runs with: `untrusted` is `ask`, a read-only sandbox
    /// `read-only`, no sandbox with no questions `full-access`, anything else `auto`.
    pub fn of_thread(approval: &AskForApproval, sandbox: &SandboxPolicy) -> Mode {
        match (approval, sandbox) {
            (AskForApproval::Untrusted, _) => Mode::Ask,
            (_, SandboxPolicy::ReadOnly { .. }) => Mode::ReadOnly,
            (AskForApproval::Never, SandboxPolicy::DangerFullAccess) => Mode::FullAccess,
            _ => Mode::Auto,
        }
    }

    /// The modes as `session/new` and `session/load` announce them, `self` current.
    pub fn state(self) -> SessionModeState {
        let modes = Mode::ALL
            .into_iter()
            .map(|mode| {
                SessionMode::new(SessionModeId::new(mode.id()), mode.name())
                    .description(mode.description().to_owned())
            })
            .collect();
        SessionModeState::new(SessionModeId::new(self.id()), modes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_round_trips_through_its_id() {
        for mode in Mode::ALL {
            assert_eq!(Mode::from_id(mode.id()), Some(mode));
        }
        assert_eq!(Mode::from_id("yolo"), None);
        let state = serde_json::to_value(Mode::Auto.state()).expect("serialises");
        assert_eq!(state["currentModeId"], "auto");
        assert_eq!(state["availableModes"].as_array().map(Vec::len), Some(4));
    }

    #[test]
    fn sandbox_policies_parse_as_the_engine_reads_them() {
        for mode in Mode::ALL {
            let policy: SandboxPolicy =
                serde_json::from_value(mode.sandbox_policy()).expect("a sandbox policy");
            assert_eq!(
                Mode::of_thread(&mode.approval_policy(), &policy),
                mode,
                "{mode:?}"
            );
        }
    }
}
