//! Threads: the persistent conversations a client creates, reloads, copies, lists, names and
//! archives. Holds the params and results of `thread/start`, `thread/resume`, `thread/fork`,
//! `thread/read`, `thread/list`, `thread/loaded/list`, `thread/archive`, `thread/unarchive` and
//! `thread/name/set`, the `thread/*` notifications, and the [`Thread`] record they all carry.
//!
//! The thread itself and its status are here; requests are split by family: `start.rs` (start, resume, fork), `list.rs` (list, loaded list, read), `archive.rs` (archive, unarchive, name).

mod archive;
mod list;
mod start;

pub use self::archive::*;
pub use self::list::*;
pub use self::start::*;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// Where a spawned sub-agent sits in its session's tree of agents, as an opaque path string.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(transparent)]
pub struct AgentPath(pub String);

/// Git state of a thread's working directory, recorded when the thread was created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct GitInfo {
    /// Commit hash `HEAD` pointed at; `null` when it could not be read.
    #[serde(default)]
    pub sha: Option<String>,
    /// Name of the checked-out branch; `null` on a detached `HEAD` or when unknown.
    #[serde(default)]
    pub branch: Option<String>,
    /// URL of the `origin` remote; `null` when the repository has no such remote.
    #[serde(default)]
    pub origin_url: Option<String>,
}

/// What kind of client or process started a thread. The plain kinds are bare strings
/// (`"cli"`, `"vscode"`, …); `custom` and `subAgent` are single-key objects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SessionSource {
    /// The interactive terminal UI.
    Cli,
    /// The IDE extension; also what app-server clients are normally recorded as.
    Vscode,
    /// A non-interactive `exec` run.
    Exec,
    /// A client of the app-server API that is recorded as such.
    AppServer,
    /// The origin was not recorded or is not one this protocol knows.
    Unknown,
    /// A client-chosen label, sent as `{"custom": "<label>"}`.
    Custom(String),
    /// Started by another agent rather than by a client, sent as `{"subAgent": …}`.
    SubAgent(SubAgentSource),
}

/// Why a sub-agent thread exists. The plain kinds are snake_case strings; `thread_spawn` and
/// `other` are single-key objects whose inner keys are snake_case too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SubAgentSource {
    /// A code-review pass run for the parent thread.
    Review,
    /// A run that condenses (compacts) the parent's history.
    Compact,
    /// A background run that consolidates the agent's stored memories.
    MemoryConsolidation,
    /// A helper agent that another thread's agent spawned on purpose.
    #[non_exhaustive]
    ThreadSpawn {
        /// The thread whose agent spawned this one.
        #[serde(rename = "parent_thread_id")]
        parent_thread_id: ThreadId,
        /// Nesting level below the top-level thread: 1 for a direct child, 2 for a grandchild …
        depth: i32,
        /// Display nickname given to the spawned agent; `null` when it has none.
        #[serde(rename = "agent_nickname", default)]
        agent_nickname: Option<String>,
        /// Role the spawner assigned to the agent; `null` when none was given.
        #[serde(rename = "agent_role", default)]
        agent_role: Option<String>,
        /// The agent's position in the agent tree; `null` when not recorded.
        #[serde(rename = "agent_path", default)]
        agent_path: Option<AgentPath>,
    },
    /// Any other kind of sub-agent, by name, sent as `{"other": "<name>"}`.
    Other(String),
}

#[bon::bon]
impl SubAgentSource {
    /// Starts building [`SubAgentSource::ThreadSpawn`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn thread_spawn(
        parent_thread_id: ThreadId,
        depth: i32,
        agent_nickname: Option<String>,
        agent_role: Option<String>,
        agent_path: Option<AgentPath>,
    ) -> Self {
        Self::ThreadSpawn {
            parent_thread_id,
            depth,
            agent_nickname,
            agent_role,
            agent_path,
        }
    }
}

/// A thread as the server reports it: identity, origin, the settings it runs with, timestamps,
/// runtime status and, in some results, its turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = thread_required_nullable)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct Thread {
    /// The thread's id (a UUIDv7 when the server made it); every `threadId` refers to this.
    pub id: String,
    /// Id of the session tree the thread belongs to: a top-level thread carries its own id, and
    /// the sub-agent threads it spawns carry the same value.
    pub session_id: String,
    /// Title the user gave the thread with `thread/name/set`; `null` while it has none.
    #[serde(default)]
    pub name: Option<String>,
    /// Short text for thread lists, normally the first user message; `""` before any input.
    pub preview: String,
    /// Whether the thread is loaded in this server and what it is doing.
    pub status: ThreadStatus,
    /// The kind of client or process that started the thread.
    pub source: SessionSource,
    /// Analytics label the client attached when starting or forking; `null` when none was sent.
    #[serde(default)]
    pub thread_source: Option<ThreadSource>,
    /// Name of the client that created the thread (its `clientInfo.name`), kept even when other
    /// clients use it later; `null` when not recorded.
    #[serde(default)]
    pub originator: Option<String>,
    /// Absolute working directory of the agent.
    pub cwd: AbsolutePathBuf,
    /// Version of the server software that created the thread.
    pub cli_version: String,
    /// Id of the model provider the thread talks to, e.g. `openai`.
    pub model_provider: String,
    /// Model slug: the configured one while the thread is loaded, otherwise the last one stored;
    /// `null` when unknown. Not a record of which model ran a particular turn.
    #[serde(default)]
    pub model: Option<String>,
    /// Reasoning effort, resolved like `model`; `null` when unset or unknown.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// `true` when the thread lives only in memory and is never written to disk.
    pub ephemeral: bool,
    /// How the thread's history is stored, fixed at creation; absent (older servers) means
    /// `legacy`.
    #[serde(default)]
    #[builder(default)]
    pub history_mode: ThreadHistoryMode,
    /// When the thread was created, in Unix seconds.
    pub created_at: i64,
    /// When the thread last changed, in Unix seconds.
    pub updated_at: i64,
    /// Unix seconds that `thread/list` sorts by for `sortKey: "recency_at"`; `null` when not
    /// tracked.
    #[serde(default)]
    pub recency_at: Option<i64>,
    /// The thread this one was copied from by `thread/fork`; `null` for threads not made by a
    /// fork.
    #[serde(default)]
    pub forked_from_id: Option<String>,
    /// The thread whose agent spawned this one; `null` unless this is a sub-agent thread.
    #[serde(default)]
    pub parent_thread_id: Option<String>,
    /// Nickname of the sub-agent that runs this thread; `null` for ordinary threads.
    #[serde(default)]
    pub agent_nickname: Option<String>,
    /// Role assigned to the sub-agent that runs this thread; `null` for ordinary threads.
    #[serde(default)]
    pub agent_role: Option<String>,
    /// Project the server has filed the thread under; always sent, `null` when there is none.
    pub project_id: Option<String>,
    /// User-defined section the thread is filed in; `null` when it is in none.
    #[serde(default)]
    pub section: Option<ThreadSection>,
    /// When the thread entered its current section, in Unix seconds; `null` when it is in none
    /// or the time is unknown.
    #[serde(default)]
    pub section_entered_at: Option<i64>,
    /// Git state captured at creation; `null` outside a repository or when nothing was captured.
    #[serde(default)]
    pub git_info: Option<GitInfo>,
    /// Unstable: where the thread's rollout file lies on the server's disk; `null` when it has
    /// none to report.
    #[serde(default)]
    pub path: Option<String>,
    // ---- turn notifications area: fields of the experimental surface (0.6.0) ----
    /// Where the loaded thread's commands run, the primary environment first (here always the
    /// one `local` environment, in the thread's working directory); `null` when the thread is
    /// not loaded or the connection did not negotiate `experimentalApi`. Says nothing about
    /// whether the environment is reachable.
    #[serde(default)]
    #[schemars(extend("x-experimental" = true))]
    #[ts(optional = nullable)]
    pub environments: Option<Vec<ThreadEnvironment>>,
    /// Whether `turn/start` input is accepted for this loaded thread now (`false` while its
    /// turn runs on another server sharing the store); `null` for a thread that is not loaded,
    /// or when the connection did not negotiate `experimentalApi`.
    #[serde(default)]
    #[schemars(extend("x-experimental" = true))]
    #[ts(optional = nullable)]
    pub can_accept_direct_input: Option<bool>,
    /// The thread that owns this one as an attached thread, whatever it was forked or spawned
    /// from; `null` for a thread attached to none (this server attaches no threads).
    #[serde(default)]
    #[schemars(extend("x-experimental" = true))]
    #[ts(optional = nullable)]
    pub attached_to_thread_id: Option<String>,
    /// The thread's turns, oldest first. Filled only in the results of `thread/resume`,
    /// `thread/fork` and `thread/read` with `includeTurns`; an empty array everywhere else.
    #[builder(default)]
    pub turns: Vec<Turn>,
}

/// Something an active thread is blocked on, waiting for the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadActiveFlag {
    /// An approval request sent to the client has not been answered yet.
    WaitingOnApproval,
    /// The agent asked the user a question and waits for the reply.
    WaitingOnUserInput,
}

/// A thread id as a bare string; the legacy API calls it a conversation id.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(transparent)]
pub struct ThreadId(pub String);

/// A named group of threads that the user defines; clients show threads under it and keep it
/// in step across devices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSection {
    /// Opaque, stable id of the section (a UUIDv7); renaming does not change it.
    pub id: String,
    /// The section's display name.
    pub name: String,
    /// How to draw the section; `null` or absent for the default look.
    #[serde(default)]
    pub appearance: Option<ThreadSectionAppearance>,
}

/// Visual styling of a thread section, shared by every client that shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ThreadSectionAppearance {
    /// Colour to draw the section in, as a string the client interprets; `null` for the default.
    #[serde(default)]
    pub color: Option<String>,
    /// Icon to show beside the section, as a name the client interprets; `null` for none.
    #[serde(default)]
    pub icon: Option<String>,
}

/// Free-form analytics label a client puts on a thread to say which feature or entry point
/// created it.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(transparent)]
pub struct ThreadSource(pub String);

/// A `thread/list` filter value: one kind of [`SessionSource`], with sub-agents also selectable
/// by why they were started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadSourceKind {
    /// Threads whose source is `cli`.
    Cli,
    /// Threads whose source is `vscode`.
    Vscode,
    /// Threads whose source is `exec`.
    Exec,
    /// Threads whose source is `appServer`.
    AppServer,
    /// Sub-agent threads of every kind.
    SubAgent,
    /// Sub-agent threads of kind `review`.
    SubAgentReview,
    /// Sub-agent threads of kind `compact`.
    SubAgentCompact,
    /// Sub-agent threads of kind `thread_spawn`.
    SubAgentThreadSpawn,
    /// Sub-agent threads of any kind not listed above (`other` and the like).
    SubAgentOther,
    /// Threads whose source is `unknown`.
    Unknown,
}

/// Runtime state of a thread, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadStatus {
    /// Stored but not loaded in this server; `thread/resume` loads it.
    NotLoaded,
    /// Loaded, with no turn running.
    Idle,
    /// Loaded, but an internal failure keeps it from running turns.
    SystemError,
    /// Loaded and running a turn.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Active {
        /// What the running turn is waiting on the client for; empty while the agent works on
        /// its own.
        active_flags: Vec<ThreadActiveFlag>,
    },
}

#[bon::bon]
impl ThreadStatus {
    /// Starts building [`ThreadStatus::Active`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn active(#[builder(default)] active_flags: Vec<ThreadActiveFlag>) -> Self {
        Self::Active { active_flags }
    }
}

/// Params of `thread/status/changed`: a loaded thread moved to another status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadStatusChangedNotification {
    /// The thread whose status changed.
    pub thread_id: String,
    /// Its status from now on.
    pub status: ThreadStatus,
}

#[cfg(feature = "schema")]
/// Schema transform: marks the always-present nullable fields of [`Thread`] required.
fn thread_required_nullable(schema: &mut schemars::Schema) {
    serde_util::require_nullable(schema, &["projectId"]);
}

#[cfg(test)]
mod tests;
