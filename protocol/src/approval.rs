//! Approvals: the server→client requests that hold a turn until the client says whether the
//! agent may run a command or change files, and the decisions the client answers with
//! (`item/commandExecution/requestApproval`, `item/fileChange/requestApproval` and the legacy
//! `execCommandApproval` / `applyPatchApproval`). Also the approval settings (`approvalPolicy`,
//! `approvalsReviewer`) that `thread/*` and `turn/start` accept and report.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Params of the legacy `applyPatchApproval` request: may the agent apply these file edits?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ApplyPatchApprovalParams {
    /// The thread (legacy: conversation) the edits belong to.
    pub conversation_id: ThreadId,
    /// Id of the agent's patch call; the events that report the patch being applied carry the
    /// same id.
    pub call_id: String,
    /// The proposed edits, keyed by file path.
    #[builder(default)]
    pub file_changes: BTreeMap<String, FileChange>,
    /// Why the agent asks, e.g. because it needs to write outside the writable roots; `null`
    /// when it gives no reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// A directory under which the agent also asks to write freely for the rest of the session;
    /// `null` when it asks for no such grant.
    #[serde(default)]
    pub grant_root: Option<String>,
}

/// Result of `applyPatchApproval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ApplyPatchApprovalResponse {
    /// What the client decided about the edits.
    pub decision: ReviewDecision,
}

/// Who answers a thread's approval requests (snake_case on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalsReviewer {
    /// A person, through the approval requests the server sends the client; the default.
    User,
    /// A reviewing agent that looks into the request and approves or denies it by its risk,
    /// without asking the client.
    AutoReview,
    /// Older name for `auto_review`, still accepted.
    GuardianSubagent,
}

/// The approval policy: when the agent has to ask before acting. The plain policies are
/// kebab-case strings; the fine-grained one is `{"granular": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum AskForApproval {
    /// Ask before any command that is not known to be harmless.
    Untrusted,
    /// Run freely inside the sandbox; the agent asks when it needs more (e.g. to leave it).
    OnRequest,
    /// Never ask; anything that would need approval fails and the agent is told.
    Never,
    /// Per kind of prompt: `true` lets that kind reach the reviewer, `false` refuses such
    /// requests without asking. The inner keys are snake_case.
    #[non_exhaustive]
    Granular {
        /// Requests to run a command outside the sandbox.
        #[serde(rename = "sandbox_approval")]
        sandbox_approval: bool,
        /// Prompts demanded by exec-policy rules.
        rules: bool,
        /// Questions that MCP servers put to the user (elicitations).
        #[serde(rename = "mcp_elicitations")]
        mcp_elicitations: bool,
        /// Requests for additional permissions; absent means `false`.
        #[serde(rename = "request_permissions", default)]
        #[ts(as = "Option<bool>", optional)]
        request_permissions: bool,
        /// Prompts raised by skills; absent means `false`.
        #[serde(rename = "skill_approval", default)]
        #[ts(as = "Option<bool>", optional)]
        skill_approval: bool,
    },
}

#[bon::bon]
impl AskForApproval {
    /// Starts building [`AskForApproval::Granular`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn granular(
        sandbox_approval: bool,
        rules: bool,
        mcp_elicitations: bool,
        #[builder(default)] request_permissions: bool,
        #[builder(default)] skill_approval: bool,
    ) -> Self {
        Self::Granular {
            sandbox_approval,
            rules,
            mcp_elicitations,
            request_permissions,
            skill_approval,
        }
    }
}

/// The client's answer to `item/commandExecution/requestApproval`. The plain answers are
/// strings; the two that save a rule are single-key objects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CommandExecutionApprovalDecision {
    /// Run the command, this time only.
    Accept,
    /// Run it, and run requests the session would treat as the same without asking again.
    AcceptForSession,
    /// Run it, and save an exec-policy rule so that matching commands never need asking.
    #[non_exhaustive]
    AcceptWithExecpolicyAmendment {
        /// The command prefix the rule allows, normally the request's
        /// `proposedExecpolicyAmendment`.
        #[serde(rename = "execpolicy_amendment")]
        execpolicy_amendment: Vec<String>,
    },
    /// Save an allow or deny rule for the host the command wants to reach.
    #[non_exhaustive]
    ApplyNetworkPolicyAmendment {
        /// The rule, normally one of the request's `proposedNetworkPolicyAmendments`.
        #[serde(rename = "network_policy_amendment")]
        network_policy_amendment: NetworkPolicyAmendment,
    },
    /// Don't run it; the agent hears so and carries on with the turn.
    Decline,
    /// Don't run it, and interrupt the turn.
    Cancel,
}

#[bon::bon]
impl CommandExecutionApprovalDecision {
    /// Starts building [`CommandExecutionApprovalDecision::AcceptWithExecpolicyAmendment`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn accept_with_execpolicy_amendment(
        #[builder(default)] execpolicy_amendment: Vec<String>,
    ) -> Self {
        Self::AcceptWithExecpolicyAmendment {
            execpolicy_amendment,
        }
    }

    /// Starts building [`CommandExecutionApprovalDecision::ApplyNetworkPolicyAmendment`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn apply_network_policy_amendment(
        network_policy_amendment: NetworkPolicyAmendment,
    ) -> Self {
        Self::ApplyNetworkPolicyAmendment {
            network_policy_amendment,
        }
    }
}

/// What a command approval request is about.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CommandExecutionApprovalKind {
    /// Starting a new command; assumed when the field is absent.
    #[default]
    Command,
    /// Typing input into a command that is already running in a terminal.
    WriteStdin,
    /// A checkpoint a person must decide on its own merits: answer only `accept`, `decline` or
    /// `cancel`. Sent only to clients that set the `requiredHumanApproval` capability, and it
    /// does not start a command item by itself.
    HumanCommand,
}

/// Params of `item/commandExecution/requestApproval`: the agent wants to run a command and the
/// turn waits for the client's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandExecutionRequestApprovalParams {
    /// Thread of the turn that waits.
    pub thread_id: String,
    /// Turn that waits for the decision.
    pub turn_id: String,
    /// The `commandExecution` item the request is about.
    pub item_id: String,
    /// Tells apart several requests for one item (sub-commands of one shell call, input
    /// written to a running command); `null` for an ordinary single request.
    #[serde(default)]
    pub approval_id: Option<String>,
    /// What is to be approved; absent (older servers) means `command`.
    #[serde(default)]
    #[builder(default)]
    pub kind: CommandExecutionApprovalKind,
    /// The command line, for display; `null` when the server does not send it.
    #[serde(default)]
    pub command: Option<String>,
    /// Directory the command would run in; `null` when the server does not send it.
    #[serde(default)]
    pub cwd: Option<LegacyAppPathString>,
    /// Best-effort breakdown of what the command does (reads, listings, searches), for a
    /// friendlier display; `null` when not worked out.
    #[serde(default)]
    pub command_actions: Option<Vec<CommandAction>>,
    /// Execution environment the command would run in; `null` when not reported.
    #[serde(default)]
    pub environment_id: Option<String>,
    /// Why the agent asks, e.g. because the command needs the network; `null` when it gives no
    /// reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// Set when the question is about network access: which host and protocol the command
    /// tried; `null` otherwise.
    #[serde(default)]
    pub network_approval_context: Option<NetworkApprovalContext>,
    /// A command prefix the client may offer to allow from now on (answered with
    /// `acceptWithExecpolicyAmendment`); `null` when none is proposed.
    #[serde(default)]
    pub proposed_execpolicy_amendment: Option<Vec<String>>,
    /// Host rules the client may offer to save (answered with `applyNetworkPolicyAmendment`);
    /// `null` when none are proposed.
    #[serde(default)]
    pub proposed_network_policy_amendments: Option<Vec<NetworkPolicyAmendment>>,
    /// When the server raised the request, in Unix milliseconds.
    pub started_at_ms: i64,
}

/// Result of `item/commandExecution/requestApproval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct CommandExecutionRequestApprovalResponse {
    /// What the client decided about the command.
    pub decision: CommandExecutionApprovalDecision,
}

/// Params of the legacy `execCommandApproval` request: may the agent run this command?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExecCommandApprovalParams {
    /// The thread (legacy: conversation) the command belongs to.
    pub conversation_id: ThreadId,
    /// Id of the agent's exec call; the events that report the command starting and ending
    /// carry the same id.
    pub call_id: String,
    /// Tells apart several requests for one call; `null` for an ordinary single request.
    #[serde(default)]
    pub approval_id: Option<String>,
    /// The command as an argv array.
    #[builder(default)]
    pub command: Vec<String>,
    /// Directory the command would run in.
    pub cwd: String,
    /// Best-effort breakdown of what the command does, for display.
    #[builder(default)]
    pub parsed_cmd: Vec<ParsedCommand>,
    /// Why the agent asks; `null` when it gives no reason.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Result of `execCommandApproval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ExecCommandApprovalResponse {
    /// What the client decided about the command.
    pub decision: ReviewDecision,
}

/// One proposed edit of one file in `applyPatchApproval`, tagged by `type`; the inner keys of
/// `update` are snake_case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum FileChange {
    /// Create the file.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Add {
        /// Full text of the new file.
        content: String,
    },
    /// Remove the file.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Delete {
        /// Text of the file being removed.
        content: String,
    },
    /// Change the file's text, and possibly move it.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Update {
        /// The change as a unified diff.
        #[serde(rename = "unified_diff")]
        unified_diff: String,
        /// Where the file moves to; `null` when it stays where it is.
        #[serde(rename = "move_path", default)]
        move_path: Option<String>,
    },
}

#[bon::bon]
impl FileChange {
    /// Starts building [`FileChange::Add`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn add(content: String) -> Self {
        Self::Add { content }
    }

    /// Starts building [`FileChange::Delete`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn delete(content: String) -> Self {
        Self::Delete { content }
    }

    /// Starts building [`FileChange::Update`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn update(unified_diff: String, move_path: Option<String>) -> Self {
        Self::Update {
            unified_diff,
            move_path,
        }
    }
}

/// The client's answer to `item/fileChange/requestApproval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum FileChangeApprovalDecision {
    /// Apply the changes, this time only.
    Accept,
    /// Apply them, and apply later changes to the same files this session without asking.
    AcceptForSession,
    /// Don't apply them; the agent hears so and carries on with the turn.
    Decline,
    /// Don't apply them, and interrupt the turn.
    Cancel,
}

/// Params of `item/fileChange/requestApproval`: the agent wants to change files and the turn
/// waits for the client's decision. The changes themselves are on the item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FileChangeRequestApprovalParams {
    /// Thread of the turn that waits.
    pub thread_id: String,
    /// Turn that waits for the decision.
    pub turn_id: String,
    /// The `fileChange` item whose changes need approval.
    pub item_id: String,
    /// Why the agent asks, e.g. because it needs to write outside the writable roots; `null`
    /// when it gives no reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// Unstable: a directory under which the agent also asks to write freely for the rest of
    /// the session; `null` when it asks for no such grant.
    #[serde(default)]
    pub grant_root: Option<String>,
    /// When the server raised the request, in Unix milliseconds.
    pub started_at_ms: i64,
}

/// Result of `item/fileChange/requestApproval`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FileChangeRequestApprovalResponse {
    /// What the client decided about the changes.
    pub decision: FileChangeApprovalDecision,
}

/// The network access a command approval is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct NetworkApprovalContext {
    /// Host name the command tried to reach.
    pub host: String,
    /// How it tried to connect.
    pub protocol: NetworkApprovalProtocol,
}

/// Protocol of a network connection that needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum NetworkApprovalProtocol {
    /// Plain HTTP.
    Http,
    /// HTTPS.
    Https,
    /// A TCP connection through a SOCKS5 proxy.
    Socks5Tcp,
    /// UDP traffic through a SOCKS5 proxy.
    Socks5Udp,
}

/// A lasting network rule for one host, proposed by the server or chosen by the client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct NetworkPolicyAmendment {
    /// Host name the rule is for.
    pub host: String,
    /// Whether connections to it are let through or blocked.
    pub action: NetworkPolicyRuleAction,
}

/// What a network rule does with connections to its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum NetworkPolicyRuleAction {
    /// Let them through without asking.
    Allow,
    /// Block them without asking.
    Deny,
}

/// Best-effort reading of what a shell command does, shown in `execCommandApproval`; tagged by
/// `type` (snake_case).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ParsedCommand {
    /// Prints or reads a file.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Read {
        /// The part of the command line that does this.
        cmd: String,
        /// The file's name, for display.
        name: String,
        /// Path of the file, absolute when it could be worked out, else relative to the
        /// command's `cwd`.
        path: String,
    },
    /// Lists a directory.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    ListFiles {
        /// The part of the command line that does this.
        cmd: String,
        /// The directory listed; `null` when it could not be worked out.
        #[serde(default)]
        path: Option<String>,
    },
    /// Searches file names or contents.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Search {
        /// The part of the command line that does this.
        cmd: String,
        /// What is searched for; `null` when it could not be worked out.
        #[serde(default)]
        query: Option<String>,
        /// Where it searches; `null` when it could not be worked out.
        #[serde(default)]
        path: Option<String>,
    },
    /// Anything the server could not classify.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Unknown {
        /// The command text.
        cmd: String,
    },
}

#[bon::bon]
impl ParsedCommand {
    /// Starts building [`ParsedCommand::Read`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn read(cmd: String, name: String, path: String) -> Self {
        Self::Read { cmd, name, path }
    }

    /// Starts building [`ParsedCommand::ListFiles`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn list_files(cmd: String, path: Option<String>) -> Self {
        Self::ListFiles { cmd, path }
    }

    /// Starts building [`ParsedCommand::Search`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn search(cmd: String, query: Option<String>, path: Option<String>) -> Self {
        Self::Search { cmd, query, path }
    }

    /// Starts building [`ParsedCommand::Unknown`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn unknown(cmd: String) -> Self {
        Self::Unknown { cmd }
    }
}

/// The client's answer to the legacy `execCommandApproval` and `applyPatchApproval` requests.
/// The plain answers are snake_case strings; the others are single-key objects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReviewDecision {
    /// Go ahead, this time only.
    Approved,
    /// Go ahead, and save an exec-policy rule so that matching commands never need asking.
    #[non_exhaustive]
    ApprovedExecpolicyAmendment {
        /// The command prefix the rule allows.
        #[serde(rename = "proposed_execpolicy_amendment")]
        proposed_execpolicy_amendment: Vec<String>,
    },
    /// Go ahead, and approve requests the session treats as the same without asking again.
    ApprovedForSession,
    /// Go ahead with this MCP tool call, and approve matching calls automatically in later
    /// sessions too.
    ApprovedMcpPolicyAmendment,
    /// Save an allow or deny rule for the host the command wants to reach.
    #[non_exhaustive]
    NetworkPolicyAmendment {
        /// The rule to save.
        #[serde(rename = "network_policy_amendment")]
        network_policy_amendment: NetworkPolicyAmendment,
    },
    /// Refuse; the agent carries on and may try another way.
    #[non_exhaustive]
    Denied {
        /// Explanation handed back to the agent.
        rejection: String,
    },
    /// No decision was reached in time (an automatic review ran out of time).
    TimedOut,
    /// Refuse, and stop: the agent does nothing more until the user's next message.
    Abort,
}

#[bon::bon]
impl ReviewDecision {
    /// Starts building [`ReviewDecision::ApprovedExecpolicyAmendment`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn approved_execpolicy_amendment(
        #[builder(default)] proposed_execpolicy_amendment: Vec<String>,
    ) -> Self {
        Self::ApprovedExecpolicyAmendment {
            proposed_execpolicy_amendment,
        }
    }

    /// Starts building [`ReviewDecision::NetworkPolicyAmendment`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn network_policy_amendment(network_policy_amendment: NetworkPolicyAmendment) -> Self {
        Self::NetworkPolicyAmendment {
            network_policy_amendment,
        }
    }

    /// Starts building [`ReviewDecision::Denied`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn denied(rejection: String) -> Self {
        Self::Denied { rejection }
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::*;

    /// Deserializes `value` into `T`, serializes it back and checks nothing changed.
    fn round_trip<T: Serialize + DeserializeOwned>(value: Value) -> T {
        let parsed: T = serde_json::from_value(value.clone()).expect("value deserializes");
        let back = serde_json::to_value(&parsed).expect("value serializes");
        assert_eq!(back, value);
        parsed
    }

    #[test]
    fn command_approval_request_round_trips() {
        let params: CommandExecutionRequestApprovalParams = round_trip(json!({
            "threadId": "01a22805-92a4-7883-962f-a9117c3e60a2",
            "turnId": "01a22805-9b1c-7f30-8d1e-2f7c55a0c001",
            "itemId": "call_8XQ2",
            "approvalId": null,
            "kind": "command",
            "command": "curl -sS https://example.com",
            "cwd": "/home/user/work",
            "commandActions": null,
            "environmentId": null,
            "reason": "needs network access",
            "networkApprovalContext": {"host": "example.com", "protocol": "https"},
            "proposedExecpolicyAmendment": ["curl"],
            "proposedNetworkPolicyAmendments": [{"host": "example.com", "action": "allow"}],
            "startedAtMs": 1795967783650_i64
        }));
        assert_eq!(params.kind, CommandExecutionApprovalKind::Command);
    }

    #[test]
    fn command_approval_kind_defaults_to_command() {
        let params: CommandExecutionRequestApprovalParams = serde_json::from_value(json!({
            "threadId": "t",
            "turnId": "u",
            "itemId": "i",
            "startedAtMs": 0
        }))
        .expect("minimal params deserialize");
        assert_eq!(params.kind, CommandExecutionApprovalKind::Command);
        assert_eq!(params.command, None);
    }

    #[test]
    fn command_approval_decisions_round_trip() {
        for plain in ["accept", "acceptForSession", "decline", "cancel"] {
            round_trip::<CommandExecutionRequestApprovalResponse>(json!({"decision": plain}));
        }
        let response: CommandExecutionRequestApprovalResponse = round_trip(json!({
            "decision": {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["cargo", "test"]}}
        }));
        assert_eq!(
            response.decision,
            CommandExecutionApprovalDecision::AcceptWithExecpolicyAmendment {
                execpolicy_amendment: vec!["cargo".to_owned(), "test".to_owned()]
            }
        );
        round_trip::<CommandExecutionRequestApprovalResponse>(json!({
            "decision": {"applyNetworkPolicyAmendment": {
                "network_policy_amendment": {"host": "example.com", "action": "deny"}
            }}
        }));
    }

    #[test]
    fn file_change_approval_round_trips() {
        round_trip::<FileChangeRequestApprovalParams>(json!({
            "threadId": "01a22805-92a4-7883-962f-a9117c3e60a2",
            "turnId": "01a22805-9b1c-7f30-8d1e-2f7c55a0c001",
            "itemId": "call_P4tc",
            "reason": null,
            "grantRoot": null,
            "startedAtMs": 1795967783700_i64
        }));
        round_trip::<FileChangeRequestApprovalResponse>(json!({"decision": "acceptForSession"}));
    }

    #[test]
    fn approval_policies_round_trip() {
        for plain in ["untrusted", "on-request", "never"] {
            round_trip::<AskForApproval>(json!(plain));
        }
        round_trip::<AskForApproval>(json!({"granular": {
            "sandbox_approval": true,
            "rules": false,
            "mcp_elicitations": true,
            "request_permissions": false,
            "skill_approval": true
        }}));
        let older: AskForApproval = serde_json::from_value(json!({"granular": {
            "sandbox_approval": true,
            "rules": true,
            "mcp_elicitations": false
        }}))
        .expect("granular policy without the newer keys deserializes");
        assert_eq!(
            older,
            AskForApproval::Granular {
                sandbox_approval: true,
                rules: true,
                mcp_elicitations: false,
                request_permissions: false,
                skill_approval: false
            }
        );
        round_trip::<ApprovalsReviewer>(json!("guardian_subagent"));
    }

    #[test]
    fn legacy_patch_approval_round_trips() {
        round_trip::<ApplyPatchApprovalParams>(json!({
            "conversationId": "01a22805-92a4-7883-962f-a9117c3e60a2",
            "callId": "call_P4tc",
            "fileChanges": {
                "/home/user/work/NOTES.md": {"type": "add", "content": "hello\n"},
                "/home/user/work/old.txt": {"type": "delete", "content": "bye\n"},
                "/home/user/work/src/lib.rs": {
                    "type": "update",
                    "unified_diff": "@@ -1 +1 @@\n-a\n+b\n",
                    "move_path": null
                }
            },
            "reason": null,
            "grantRoot": "/home/user/work"
        }));
        for decision in [
            json!("approved"),
            json!("approved_for_session"),
            json!("approved_mcp_policy_amendment"),
            json!("timed_out"),
            json!("abort"),
            json!({"denied": {"rejection": "not in this repository"}}),
            json!({"approved_execpolicy_amendment": {"proposed_execpolicy_amendment": ["ls"]}}),
            json!({"network_policy_amendment": {
                "network_policy_amendment": {"host": "example.com", "action": "allow"}
            }}),
        ] {
            round_trip::<ApplyPatchApprovalResponse>(json!({"decision": decision}));
        }
    }

    #[test]
    fn legacy_exec_approval_round_trips() {
        round_trip::<ExecCommandApprovalParams>(json!({
            "conversationId": "01a22805-92a4-7883-962f-a9117c3e60a2",
            "callId": "call_8XQ2",
            "approvalId": null,
            "command": ["bash", "-lc", "cat README.md | grep agent"],
            "cwd": "/home/user/work",
            "parsedCmd": [
                {"type": "read", "cmd": "cat README.md", "name": "README.md", "path": "README.md"},
                {"type": "search", "cmd": "grep agent", "query": "agent", "path": null},
                {"type": "list_files", "cmd": "ls", "path": null},
                {"type": "unknown", "cmd": "make"}
            ],
            "reason": null
        }));
    }
}
