//! State a client keeps on a thread beside its history: its goal (`thread/goal/*`), what the
//! user has read (`thread/readState/update`) and the commands it left running in the background
//! (`thread/backgroundTerminals/*`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::LegacyAppPathString;

/// A thread's goal: an objective the agent works towards across turns, with what it has cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadGoal {
    /// When the goal was set (Unix seconds).
    pub created_at: i64,
    /// What the agent is to achieve, in the user's words.
    pub objective: String,
    /// Where the goal stands.
    pub status: ThreadGoalStatus,
    /// The thread the goal belongs to.
    pub thread_id: String,
    /// Seconds of turns spent on the goal since it was set.
    pub time_used_seconds: i64,
    /// Most tokens the goal may use; `null` for no limit.
    #[serde(default)]
    pub token_budget: Option<i64>,
    /// Tokens the thread's turns used since the goal was set.
    pub tokens_used: i64,
    /// When the goal last changed (Unix seconds).
    pub updated_at: i64,
}

/// Where a goal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadGoalStatus {
    /// Being worked on.
    Active,
    /// Set aside by the user.
    Paused,
    /// The agent cannot go on without help.
    Blocked,
    /// Stopped by the account's usage limits.
    UsageLimited,
    /// Stopped because `tokensUsed` reached `tokenBudget`.
    BudgetLimited,
    /// Achieved.
    Complete,
}

/// Who changes a goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadGoalMutationOrigin {
    /// The user, through the client.
    User,
    /// The agent or the client on its own.
    Automatic,
}

/// Params of `thread/goal/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadGoalGetParams {
    /// The thread whose goal to read.
    pub thread_id: String,
}

/// Result of `thread/goal/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadGoalGetResponse {
    /// The thread's goal; `null` when it has none.
    #[serde(default)]
    pub goal: Option<ThreadGoal>,
}

/// Params of `thread/goal/set`: sets a goal, or changes the one the thread has (members left
/// out keep their value).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadGoalSetParams {
    /// What the agent is to achieve; required when the thread has no goal yet.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub objective: Option<String>,
    /// Who asks for the change.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub origin: Option<ThreadGoalMutationOrigin>,
    /// The goal's new status.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub status: Option<ThreadGoalStatus>,
    /// The thread.
    pub thread_id: String,
    /// Most tokens the goal may use.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub token_budget: Option<i64>,
}

/// Result of `thread/goal/set`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadGoalSetResponse {
    /// The goal as it now is.
    pub goal: ThreadGoal,
}

/// Params of `thread/goal/clear`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadGoalClearParams {
    /// Who asks for the change.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub origin: Option<ThreadGoalMutationOrigin>,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/goal/clear`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadGoalClearResponse {
    /// Whether there was a goal to clear.
    pub cleared: bool,
}

/// Params of `thread/goal/updated`: a thread's goal was set or changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadGoalUpdatedNotification {
    /// The goal as it now is.
    pub goal: ThreadGoal,
    /// The thread.
    pub thread_id: String,
    /// The turn that changed it; `null` when a client did.
    #[serde(default)]
    pub turn_id: Option<String>,
}

/// Params of `thread/goal/cleared`: a thread's goal was cleared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadGoalClearedNotification {
    /// The thread.
    pub thread_id: String,
}

/// What the user has read of a thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadReadState {
    /// The first thing the user has not read; `null` when everything is read.
    #[serde(default)]
    pub first_unread: Option<ThreadUnreadPosition>,
    /// The revision of the thread this state was taken at: send it back as
    /// `expectedRevision`.
    pub revision: String,
}

/// Where unread content begins (`type` on the wire).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadUnreadPosition {
    /// The whole thread is unread.
    ThreadStart,
    /// Everything from this turn on is unread.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Turn {
        /// The first unread turn.
        turn_id: String,
    },
}

impl ThreadUnreadPosition {
    /// Unread from turn `turn_id` on.
    pub fn turn(turn_id: impl Into<String>) -> Self {
        Self::Turn {
            turn_id: turn_id.into(),
        }
    }
}

/// What `thread/readState/update` does (`type` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadReadStateOperation {
    /// Marks everything read.
    Read,
    /// Marks the last turn unread.
    Unread,
}

/// Params of `thread/readState/update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadReadStateUpdateParams {
    /// The revision the user saw (a `revision` this server sent). When the thread moved on
    /// since, the update is refused: the user has not seen what came after.
    pub expected_revision: String,
    /// Mark read or unread.
    pub operation: ThreadReadStateOperation,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/readState/update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadReadStateUpdateResponse {
    /// The thread's read state now.
    pub read_state: ThreadReadState,
}

/// Params of `thread/readState/changed`: a thread's read state changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadReadStateChangedNotification {
    /// The read state now.
    pub read_state: ThreadReadState,
    /// The thread.
    pub thread_id: String,
}

/// A command the agent started in the background that is still running.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadBackgroundTerminal {
    /// The command line.
    pub command: String,
    /// The processor share it uses (percent of one core), when known.
    #[serde(default)]
    pub cpu_percent: Option<f64>,
    /// Its working directory.
    pub cwd: LegacyAppPathString,
    /// The `commandExecution` item that started it.
    pub item_id: String,
    /// The operating system's process id, when known.
    #[serde(default)]
    pub os_pid: Option<u32>,
    /// This server's id for the process.
    pub process_id: String,
    /// Its resident memory in KiB, when known.
    #[serde(default)]
    pub rss_kb: Option<u64>,
}

/// Params of `thread/backgroundTerminals/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadBackgroundTerminalsListParams {
    /// The `nextCursor` of an earlier page; absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Most entries to return in this page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/backgroundTerminals/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadBackgroundTerminalsListResponse {
    /// The thread's background commands still running.
    pub data: Vec<ThreadBackgroundTerminal>,
    /// Send as `cursor` to fetch the following page; `null` when this was the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// Params of `thread/backgroundTerminals/clean`: stops every background command of a thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadBackgroundTerminalsCleanParams {
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/backgroundTerminals/clean`: an empty object once they are stopped.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadBackgroundTerminalsCleanResponse {}

/// Params of `thread/backgroundTerminals/terminate`: stops one background command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadBackgroundTerminalsTerminateParams {
    /// The command's `processId`.
    pub process_id: String,
    /// The thread.
    pub thread_id: String,
}

/// Result of `thread/backgroundTerminals/terminate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ThreadBackgroundTerminalsTerminateResponse {
    /// Whether a running command was stopped.
    pub terminated: bool,
}

/// Params of `thread/prepareApprovedPlan`: a plan the user approved, to be carried out by the
/// first turn of a fresh thread.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadPrepareApprovedPlanParams {
    /// A file on the server holding a copy of the plan, which the prompt may point the agent
    /// to instead of repeating the plan.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub attachment_path: Option<String>,
    /// The plan, in Markdown.
    pub markdown: String,
    /// The fresh thread that is to carry it out.
    pub thread_id: String,
}

/// Result of `thread/prepareApprovedPlan`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadPrepareApprovedPlanResponse {
    /// The first user prompt to send with `turn/start`: it asks the agent to carry out the
    /// plan, which it holds or points to.
    pub prompt: String,
}
