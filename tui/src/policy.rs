//! The approval policies and sandbox modes a user names: on the command line
//! (`--ask-for-approval POLICY`, `--sandbox MODE`, Codex's flags and value names, the same as
//! `agentwire exec` takes) and in `/approvals`.

use serde_json::{Value, json};

/// When the agent asks before acting (`--ask-for-approval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalPolicy {
    /// `untrusted`: ask before any command that is not known to be harmless.
    Untrusted,
    /// `on-failure`: accepted for Codex scripts; the protocol no longer has it, so it is sent
    /// as `on-request`.
    OnFailure,
    /// `on-request`: run freely inside the sandbox; the agent asks when it needs more.
    OnRequest,
    /// `never`: never ask; what would need approval fails and the agent is told.
    Never,
}

/// The names `--ask-for-approval` and `/approvals` take, in Codex's order.
pub const APPROVAL_NAMES: &[&str] = &["untrusted", "on-failure", "on-request", "never"];

impl ApprovalPolicy {
    /// The policy a name (one of [`APPROVAL_NAMES`]) stands for.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "untrusted" => Self::Untrusted,
            "on-failure" => Self::OnFailure,
            "on-request" => Self::OnRequest,
            "never" => Self::Never,
            _ => return None,
        })
    }

    /// The value of `approvalPolicy` on the wire (`thread/start`, `thread/settings/update`).
    pub fn wire(self) -> &'static str {
        match self {
            Self::Untrusted => "untrusted",
            Self::OnFailure | Self::OnRequest => "on-request",
            Self::Never => "never",
        }
    }
}

/// Where the agent's commands run (`--sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxMode {
    /// `read-only`: commands may read, not write.
    ReadOnly,
    /// `workspace-write`: commands may also write inside the working directory.
    WorkspaceWrite,
    /// `danger-full-access`: no sandbox.
    DangerFullAccess,
}

/// The names `--sandbox` and `/approvals` take.
pub const SANDBOX_NAMES: &[&str] = &["read-only", "workspace-write", "danger-full-access"];

impl SandboxMode {
    /// The mode a name (one of [`SANDBOX_NAMES`]) stands for.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "read-only" => Self::ReadOnly,
            "workspace-write" => Self::WorkspaceWrite,
            "danger-full-access" => Self::DangerFullAccess,
            _ => return None,
        })
    }

    /// The mode's name, which is also `thread/start`'s `sandbox` value.
    pub fn name(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::DangerFullAccess => "danger-full-access",
        }
    }

    /// The full policy `thread/settings/update`'s `sandboxPolicy` takes for this mode (no extra
    /// writable roots, no network).
    pub fn policy(self) -> Value {
        match self {
            Self::ReadOnly => json!({"type": "readOnly"}),
            Self::WorkspaceWrite => json!({"type": "workspaceWrite"}),
            Self::DangerFullAccess => json!({"type": "dangerFullAccess"}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_and_on_failure_is_sent_as_on_request() {
        for name in APPROVAL_NAMES {
            let policy = ApprovalPolicy::parse(name).expect("a listed name parses");
            let expected = if *name == "on-failure" {
                "on-request"
            } else {
                name
            };
            assert_eq!(policy.wire(), expected);
        }
        for name in SANDBOX_NAMES {
            assert_eq!(SandboxMode::parse(name).map(SandboxMode::name), Some(*name));
        }
        assert_eq!(ApprovalPolicy::parse("on_request"), None);
        assert_eq!(SandboxMode::parse("workspace"), None);
        assert_eq!(
            SandboxMode::WorkspaceWrite.policy(),
            json!({"type": "workspaceWrite"})
        );
    }
}
