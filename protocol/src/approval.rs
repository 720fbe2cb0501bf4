use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ApplyPatchApprovalParams {
    pub call_id: String,
    pub conversation_id: ThreadId,
    pub file_changes: BTreeMap<String, FileChange>,
    #[serde(default)]
    pub grant_root: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ApplyPatchApprovalResponse {
    pub decision: ReviewDecision,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalsReviewer {
    User,
    AutoReview,
    GuardianSubagent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "kebab-case")]
pub enum AskForApproval {
    Untrusted,
    OnRequest,
    Never,
    Granular {
        #[serde(rename = "mcp_elicitations")]
        mcp_elicitations: bool,
        #[serde(rename = "request_permissions", default)]
        #[ts(as = "Option<bool>", optional)]
        request_permissions: bool,
        rules: bool,
        #[serde(rename = "sandbox_approval")]
        sandbox_approval: bool,
        #[serde(rename = "skill_approval", default)]
        #[ts(as = "Option<bool>", optional)]
        skill_approval: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionApprovalDecision {
    Accept,
    AcceptForSession,
    AcceptWithExecpolicyAmendment {
        #[serde(rename = "execpolicy_amendment")]
        execpolicy_amendment: Vec<String>,
    },
    ApplyNetworkPolicyAmendment {
        #[serde(rename = "network_policy_amendment")]
        network_policy_amendment: NetworkPolicyAmendment,
    },
    Decline,
    Cancel,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionApprovalKind {
    #[default]
    Command,
    WriteStdin,
    HumanCommand,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionRequestApprovalParams {
    #[serde(default)]
    pub approval_id: Option<String>,
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub command_actions: Option<Vec<CommandAction>>,
    #[serde(default)]
    pub cwd: Option<LegacyAppPathString>,
    #[serde(default)]
    pub environment_id: Option<String>,
    pub item_id: String,
    #[serde(default)]
    pub kind: CommandExecutionApprovalKind,
    #[serde(default)]
    pub network_approval_context: Option<NetworkApprovalContext>,
    #[serde(default)]
    pub proposed_execpolicy_amendment: Option<Vec<String>>,
    #[serde(default)]
    pub proposed_network_policy_amendments: Option<Vec<NetworkPolicyAmendment>>,
    #[serde(default)]
    pub reason: Option<String>,
    pub started_at_ms: i64,
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionRequestApprovalResponse {
    pub decision: CommandExecutionApprovalDecision,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExecCommandApprovalParams {
    #[serde(default)]
    pub approval_id: Option<String>,
    pub call_id: String,
    pub command: Vec<String>,
    pub conversation_id: ThreadId,
    pub cwd: String,
    pub parsed_cmd: Vec<ParsedCommand>,
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExecCommandApprovalResponse {
    pub decision: ReviewDecision,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum FileChange {
    #[serde(rename_all = "camelCase")]
    Add {
        content: String,
    },
    #[serde(rename_all = "camelCase")]
    Delete {
        content: String,
    },
    #[serde(rename_all = "camelCase")]
    Update {
        #[serde(rename = "move_path", default)]
        move_path: Option<String>,
        #[serde(rename = "unified_diff")]
        unified_diff: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum FileChangeApprovalDecision {
    Accept,
    AcceptForSession,
    Decline,
    Cancel,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeRequestApprovalParams {
    #[serde(default)]
    pub grant_root: Option<String>,
    pub item_id: String,
    #[serde(default)]
    pub reason: Option<String>,
    pub started_at_ms: i64,
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeRequestApprovalResponse {
    pub decision: FileChangeApprovalDecision,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct NetworkApprovalContext {
    pub host: String,
    pub protocol: NetworkApprovalProtocol,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum NetworkApprovalProtocol {
    Http,
    Https,
    Socks5Tcp,
    Socks5Udp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicyAmendment {
    pub action: NetworkPolicyRuleAction,
    pub host: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum NetworkPolicyRuleAction {
    Allow,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ParsedCommand {
    #[serde(rename_all = "camelCase")]
    Read {
        cmd: String,
        name: String,
        path: String,
    },
    #[serde(rename_all = "camelCase")]
    ListFiles {
        cmd: String,
        #[serde(default)]
        path: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Search {
        cmd: String,
        #[serde(default)]
        path: Option<String>,
        #[serde(default)]
        query: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Unknown {
        cmd: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum ReviewDecision {
    Approved,
    ApprovedExecpolicyAmendment {
        #[serde(rename = "proposed_execpolicy_amendment")]
        proposed_execpolicy_amendment: Vec<String>,
    },
    ApprovedForSession,
    ApprovedMcpPolicyAmendment,
    NetworkPolicyAmendment {
        #[serde(rename = "network_policy_amendment")]
        network_policy_amendment: NetworkPolicyAmendment,
    },
    Denied {
        rejection: String,
    },
    TimedOut,
    Abort,
}

