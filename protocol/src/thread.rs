//! Threads: the persistent conversations a client creates, reloads, copies, lists, names and
//! archives. Holds the params and results of `thread/start`, `thread/resume`, `thread/fork`,
//! `thread/read`, `thread/list`, `thread/loaded/list`, `thread/archive`, `thread/unarchive` and
//! `thread/name/set`, the `thread/*` notifications, and the [`Thread`] record they all carry.

use std::collections::BTreeMap;

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

/// Order of a listing by its sort key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub enum SortDirection {
    /// Smallest (oldest) key first.
    Asc,
    /// Largest (newest) key first; what `thread/list` uses when no direction is given.
    Desc,
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

/// Params of `thread/archive`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadArchiveParams {
    /// The thread to move to the archive.
    pub thread_id: String,
}

/// Result of `thread/archive`: an empty object once the thread is archived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadArchiveResponse {}

/// Params of `thread/archived`: a thread was moved to the archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadArchivedNotification {
    /// The thread that is now archived.
    pub thread_id: String,
}

/// Params of `thread/fork`: the thread to copy and overrides for the copy. Each override left
/// out keeps the value the source thread (or the configuration) gives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadForkParams {
    /// The thread whose history is copied.
    pub thread_id: String,
    /// Copy history up to and including this turn and drop the later ones; absent copies it
    /// all. The turn must have finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub last_turn_id: Option<String>,
    /// `true` to return the fork with an empty `turns` array (the client fetches history some
    /// other way); absent means `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub exclude_turns: Option<bool>,
    /// `true` to keep the fork in memory only, never on disk; absent means `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub ephemeral: Option<bool>,
    /// Analytics label to record on the fork as its `threadSource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub thread_source: Option<ThreadSource>,
    /// Model slug for the fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub model: Option<String>,
    /// Model provider id for the fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub model_provider: Option<String>,
    /// Provider service tier the fork's model requests ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub service_tier: Option<String>,
    /// Working directory for the fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    /// When the agent on the fork must ask before acting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub approval_policy: Option<AskForApproval>,
    /// Who answers approval requests on the fork from now on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// Sandbox mode for the commands the agent runs on the fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub sandbox: Option<SandboxMode>,
    /// Further configuration overrides: config key paths (dotted, as on the `-c` command line)
    /// mapped to JSON values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub config: Option<BTreeMap<String, serde_json::Value>>,
    /// Text that replaces the built-in system instructions for the fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub base_instructions: Option<String>,
    /// Extra developer-role instructions added to the fork's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub developer_instructions: Option<String>,
}

/// Result of `thread/fork`: the new thread and the settings it actually runs with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadForkResponse {
    /// The fork, a new thread with its own id; `turns` is filled unless `excludeTurns` was set.
    pub thread: Thread,
    /// Model slug in effect.
    pub model: String,
    /// Model provider id in effect.
    pub model_provider: String,
    /// Service tier in effect; `null` when the provider's default applies.
    #[serde(default)]
    pub service_tier: Option<String>,
    /// Reasoning effort in effect; `null` when the model's default applies.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Absolute working directory in effect.
    pub cwd: AbsolutePathBuf,
    /// Approval policy in effect.
    pub approval_policy: AskForApproval,
    /// Who answers approval requests on this thread.
    pub approvals_reviewer: ApprovalsReviewer,
    /// Sandbox in effect, as a full policy rather than a mode.
    pub sandbox: SandboxPolicy,
    /// Instruction files (such as `AGENTS.md`) loaded into the thread, as paths on the server's
    /// machine; absent or empty when none were loaded.
    #[serde(default)]
    #[builder(default)]
    pub instruction_sources: Vec<LegacyAppPathString>,
    /// Ids of plugins the user has switched off; informational only for now. Absent means none.
    #[serde(default)]
    #[builder(default)]
    pub disabled_plugin_ids: Vec<String>,
}

/// How a thread's history is stored; chosen when the thread is created and never changed.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadHistoryMode {
    /// The original layout, read back as a whole; assumed when the field is absent.
    #[default]
    Legacy,
    /// A layout that lets clients page through turns and items instead of loading everything.
    Paginated,
}

/// A thread id as a bare string; the legacy API calls it a conversation id.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(transparent)]
pub struct ThreadId(pub String);

/// The `cwd` filter of `thread/list`: a single directory or a list of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ThreadListCwdFilter {
    /// Only threads whose working directory is exactly this path.
    Text(String),
    /// Only threads whose working directory is exactly one of these paths.
    List(Vec<String>),
}

/// Params of `thread/list`. Every member is optional; a filter that is absent does not narrow
/// the listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ThreadListParams {
    /// The `nextCursor` (or `backwardsCursor`) of an earlier page; absent for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Most threads to return in this page; absent lets the server pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    /// Which timestamp to order by; absent means `created_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub sort_key: Option<ThreadSortKey>,
    /// Ordering direction; absent means `desc`, newest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub sort_direction: Option<SortDirection>,
    /// `true` lists archived threads only; `false`, `null` or absent lists unarchived ones only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub archived: Option<bool>,
    /// Only threads whose working directory matches exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub cwd: Option<ThreadListCwdFilter>,
    /// Only threads whose title contains this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub search_term: Option<String>,
    /// Only threads filed in this section; `null` lists only the threads in no section; absent
    /// does not filter by section.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_util::present_or_null"
    )]
    #[schemars(with = "Option<String>")]
    #[ts(as = "Option<String>", optional = nullable)]
    pub section_id: Option<Option<String>>,
    /// Only threads started by these kinds of source; absent or empty means the interactive
    /// kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub source_kinds: Option<Vec<ThreadSourceKind>>,
    /// Only threads recorded under these model provider ids; absent or empty means any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub model_providers: Option<Vec<String>>,
    /// Only threads whose `originator` equals one of these; absent or empty means any. A local
    /// server refuses a non-empty list (hosted backends only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub originators: Option<Vec<String>>,
    /// Limit the listing to these thread ids (100 at most), before paging; `[]` matches nothing,
    /// absent means no limit. Repeat the same list on every page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub included_thread_ids: Option<Vec<String>>,
    /// Thread ids to leave out (100 at most; a longer list or a bad id is an error, not cut
    /// short). Repeat the same list on every page; absent or empty leaves nothing out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub excluded_thread_ids: Option<Vec<String>>,
    /// `true` to show only local history visible to the signed-in ChatGPT account; absent means
    /// `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub current_account_only: Option<bool>,
    /// `true` to answer from the server's thread index alone, skipping the scan of rollout files
    /// that keeps it repaired: faster, possibly stale. Absent means `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub use_state_db_only: Option<bool>,
}

/// Result of `thread/list`: one page of threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ThreadListResponse {
    /// The threads of this page in the requested order, each with an empty `turns` array.
    #[builder(default)]
    pub data: Vec<Thread>,
    /// Send as `cursor` to fetch the following page; `null` when this was the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
    /// Send as `cursor` together with the opposite `sortDirection` to walk back from the start
    /// of this page; `null` when the page is empty.
    #[serde(default)]
    pub backwards_cursor: Option<String>,
    /// Read receipts of this page's stored threads, keyed by thread id (an ephemeral thread has
    /// no key); absent when the connection did not negotiate `experimentalApi`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-experimental" = true))]
    #[ts(optional = nullable)]
    pub read_states: Option<BTreeMap<String, ThreadReadState>>,
}

/// Params of `thread/loaded/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ThreadLoadedListParams {
    /// The `nextCursor` of an earlier page; absent for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Most ids to return in this page; absent returns them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
}

/// Result of `thread/loaded/list`: one page of loaded thread ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ThreadLoadedListResponse {
    /// Ids of the threads this server currently holds in memory.
    #[builder(default)]
    pub data: Vec<String>,
    /// Send as `cursor` to fetch the following page; `null` when this was the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// Params of `thread/name/updated`: a thread's title changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadNameUpdatedNotification {
    /// The renamed thread.
    pub thread_id: String,
    /// Its new title; `null` or absent when the title was removed.
    #[serde(default)]
    pub thread_name: Option<String>,
}

/// Params of `thread/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadReadParams {
    /// The thread to read; it does not need to be loaded and is not loaded by this call.
    pub thread_id: String,
    /// `true` to also return the stored turns with their items; absent means metadata only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub include_turns: Option<bool>,
}

/// Result of `thread/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadReadResponse {
    /// The thread; its `turns` are filled only when `includeTurns` was `true`.
    pub thread: Thread,
}

/// Params of `thread/resume`: the thread to load and overrides for its settings. Each override
/// left out keeps the stored (or configured) value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadResumeParams {
    /// The thread to load; if it is already loaded the client joins it as it is.
    pub thread_id: String,
    /// `true` to return the thread with an empty `turns` array (the client fetches history some
    /// other way); absent means `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub exclude_turns: Option<bool>,
    /// Model slug to continue with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub model: Option<String>,
    /// Model provider id to continue with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub model_provider: Option<String>,
    /// Provider service tier the thread's model requests ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub service_tier: Option<String>,
    /// Deprecated: its values no longer change the agent's style, and setting it leaves the
    /// thread's existing instructions as they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub personality: Option<Personality>,
    /// Working directory to continue in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    /// When the agent must ask before acting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub approval_policy: Option<AskForApproval>,
    /// Who answers approval requests on the thread from now on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// Sandbox mode for the commands the agent runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub sandbox: Option<SandboxMode>,
    /// Further configuration overrides: config key paths (dotted, as on the `-c` command line)
    /// mapped to JSON values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub config: Option<BTreeMap<String, serde_json::Value>>,
    /// Text that replaces the built-in system instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub base_instructions: Option<String>,
    /// Extra developer-role instructions added to the context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub developer_instructions: Option<String>,
}

/// Result of `thread/resume`: the loaded thread and the settings it now runs with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadResumeResponse {
    /// The thread, with its turns unless `excludeTurns` was set.
    pub thread: Thread,
    /// Model slug in effect.
    pub model: String,
    /// Model provider id in effect.
    pub model_provider: String,
    /// Service tier in effect; `null` when the provider's default applies.
    #[serde(default)]
    pub service_tier: Option<String>,
    /// Reasoning effort in effect; `null` when the model's default applies.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Collaboration mode in effect; `null` or absent when the server does not report one.
    #[serde(default)]
    pub collaboration_mode: Option<CollaborationMode>,
    /// Absolute working directory in effect.
    pub cwd: AbsolutePathBuf,
    /// Approval policy in effect.
    pub approval_policy: AskForApproval,
    /// Who answers approval requests on this thread.
    pub approvals_reviewer: ApprovalsReviewer,
    /// Sandbox in effect, as a full policy rather than a mode.
    pub sandbox: SandboxPolicy,
    /// Instruction files (such as `AGENTS.md`) loaded into the thread, as paths on the server's
    /// machine; absent or empty when none were loaded.
    #[serde(default)]
    #[builder(default)]
    pub instruction_sources: Vec<LegacyAppPathString>,
    /// Ids of plugins the user has switched off; informational only for now. Absent means none.
    #[serde(default)]
    #[builder(default)]
    pub disabled_plugin_ids: Vec<String>,
    /// For paginated threads: cursor from which to page backwards (newest first) through the
    /// thread's turns, starting with the turn it names; `null` when not offered.
    #[serde(default)]
    pub turns_backwards_cursor: Option<String>,
    /// For paginated threads: cursor from which to page backwards (newest first) through the
    /// thread's items, starting with the item it names; `null` when not offered.
    #[serde(default)]
    pub items_backwards_cursor: Option<String>,
}

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

/// Params of `thread/name/set`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSetNameParams {
    /// The thread to rename.
    pub thread_id: String,
    /// The title to show for the thread from now on.
    pub name: String,
}

/// Result of `thread/name/set`: an empty object; clients learn of the change through
/// `thread/name/updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadSetNameResponse {}

/// Which value `thread/list` orders threads by (snake_case on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ThreadSortKey {
    /// The thread's `createdAt`; the default.
    CreatedAt,
    /// The thread's `updatedAt`.
    UpdatedAt,
    /// The thread's `recencyAt`.
    RecencyAt,
    /// The order the user arranged threads in within their section.
    SectionPosition,
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

/// Params of `thread/start`. Every member is optional; each one left out takes the server's
/// configured value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct ThreadStartParams {
    /// Working directory for the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub cwd: Option<String>,
    /// Model slug to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub model: Option<String>,
    /// Model provider id to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub model_provider: Option<String>,
    /// Provider service tier the thread's model requests ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub service_tier: Option<String>,
    /// Deprecated: its values no longer change the agent's style.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub personality: Option<Personality>,
    /// When the agent must ask before acting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub approval_policy: Option<AskForApproval>,
    /// Who answers the thread's approval requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// Sandbox mode for the commands the agent runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub sandbox: Option<SandboxMode>,
    /// Further configuration overrides: config key paths (dotted, as on the `-c` command line)
    /// mapped to JSON values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub config: Option<BTreeMap<String, serde_json::Value>>,
    /// Text that replaces the built-in system instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub base_instructions: Option<String>,
    /// Extra developer-role instructions added to the context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub developer_instructions: Option<String>,
    /// `true` to keep the thread in memory only, never on disk; `null` or absent means `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub ephemeral: Option<bool>,
    /// Name of the calling service, recorded with the thread for attribution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub service_name: Option<String>,
    /// What made the client open a new session (its own start-up, or the user clearing the
    /// previous conversation); passed on to session-start hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub session_start_source: Option<ThreadStartSource>,
    /// Analytics label to record on the thread as its `threadSource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional = nullable)]
    pub thread_source: Option<ThreadSource>,
    /// Tools the client runs itself, offered to the model on every turn of the thread (kept
    /// with the thread, so a resumed thread still has them); a call of one reaches the client
    /// as `item/tool/call` (experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-experimental" = true))]
    #[ts(optional = nullable)]
    pub dynamic_tools: Option<Vec<DynamicToolSpec>>,
}

/// Result of `thread/start`: the new thread and the settings it runs with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadStartResponse {
    /// The new thread, loaded and idle, with an empty `turns` array.
    pub thread: Thread,
    /// Model slug in effect.
    pub model: String,
    /// Model provider id in effect.
    pub model_provider: String,
    /// Service tier in effect; `null` when the provider's default applies.
    #[serde(default)]
    pub service_tier: Option<String>,
    /// Reasoning effort in effect; `null` when the model's default applies.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Absolute working directory in effect.
    pub cwd: AbsolutePathBuf,
    /// Approval policy in effect.
    pub approval_policy: AskForApproval,
    /// Who answers approval requests on this thread.
    pub approvals_reviewer: ApprovalsReviewer,
    /// Sandbox in effect, as a full policy rather than a mode.
    pub sandbox: SandboxPolicy,
    /// Instruction files (such as `AGENTS.md`) loaded into the thread, as paths on the server's
    /// machine; absent or empty when none were loaded.
    #[serde(default)]
    #[builder(default)]
    pub instruction_sources: Vec<LegacyAppPathString>,
    /// Ids of plugins the user has switched off; informational only for now. Absent means none.
    #[serde(default)]
    #[builder(default)]
    pub disabled_plugin_ids: Vec<String>,
}

/// What made a client open a new session with `thread/start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ThreadStartSource {
    /// The client has just started up.
    Startup,
    /// The user cleared the previous conversation to begin afresh.
    Clear,
}

/// Params of `thread/started`: a thread was created by `thread/start` or `thread/fork` and is
/// loaded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadStartedNotification {
    /// The new thread, with an empty `turns` array.
    pub thread: Thread,
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

/// Params of `thread/unarchive`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadUnarchiveParams {
    /// The archived thread to bring back.
    pub thread_id: String,
}

/// Result of `thread/unarchive`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadUnarchiveResponse {
    /// The restored thread as it now stands.
    pub thread: Thread,
}

/// Params of `thread/unarchived`: a thread was taken out of the archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadUnarchivedNotification {
    /// The thread that is no longer archived.
    pub thread_id: String,
}

#[cfg(feature = "schema")]
/// Schema transform: marks the always-present nullable fields of [`Thread`] required.
fn thread_required_nullable(schema: &mut schemars::Schema) {
    serde_util::require_nullable(schema, &["projectId"]);
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

    /// The thread of the `thread/start` answer in the 0.171.0 turn transcript, restricted to
    /// the members this crate declares.
    fn transcript_thread() -> Value {
        json!({
            "id": "01a22805-92a4-7883-962f-a9117c3e60a2",
            "sessionId": "01a22805-92a4-7883-962f-a9117c3e60a2",
            "forkedFromId": null,
            "parentThreadId": null,
            "preview": "",
            "ephemeral": false,
            "section": null,
            "sectionEnteredAt": null,
            "projectId": null,
            "historyMode": "paginated",
            "modelProvider": "mock",
            "model": "mock-model",
            "reasoningEffort": null,
            "createdAt": 1795967783,
            "updatedAt": 1795967783,
            "recencyAt": 1795967783,
            "status": {"type": "idle"},
            "path": "/home/user/.codex/sessions/2026/11/29/rollout-2026-11-29T15-56-23-01a22805-92a4-7883-962f-a9117c3e60a2.jsonl",
            "cwd": "/home/user/work",
            "cliVersion": "0.171.0",
            "originator": "turn_probe",
            "source": "vscode",
            "threadSource": null,
            "agentNickname": null,
            "agentRole": null,
            "gitInfo": null,
            "name": null,
            "environments": [{"environmentId": "local", "cwd": "/home/user/work",
                              "runtimeWorkspaceRoots": ["/home/user/work"]}],
            "canAcceptDirectInput": true,
            "attachedToThreadId": null,
            "turns": []
        })
    }

    #[test]
    fn thread_start_response_from_transcript_round_trips() {
        let response: ThreadStartResponse = round_trip(json!({
            "thread": transcript_thread(),
            "model": "mock-model",
            "modelProvider": "mock",
            "serviceTier": null,
            "disabledPluginIds": [],
            "cwd": "/home/user/work",
            "instructionSources": [],
            "approvalPolicy": "never",
            "approvalsReviewer": "user",
            "sandbox": {"type": "readOnly", "networkAccess": false},
            "reasoningEffort": null
        }));
        assert_eq!(response.thread.status, ThreadStatus::Idle);
        assert_eq!(response.thread.source, SessionSource::Vscode);
        assert_eq!(response.thread.history_mode, ThreadHistoryMode::Paginated);
        assert_eq!(response.approval_policy, AskForApproval::Never);
        assert_eq!(
            response.sandbox,
            SandboxPolicy::ReadOnly {
                network_access: false
            }
        );
    }

    #[test]
    fn thread_defaults_fill_members_older_servers_leave_out() {
        let mut value = transcript_thread();
        let object = value.as_object_mut().expect("thread is an object");
        for key in [
            "historyMode",
            "section",
            "sectionEnteredAt",
            "recencyAt",
            "gitInfo",
        ] {
            object.remove(key);
        }
        let thread: Thread = serde_json::from_value(value).expect("thread deserializes");
        assert_eq!(thread.history_mode, ThreadHistoryMode::Legacy);
        assert_eq!(thread.section, None);
        // `projectId` is always written, even when it is null.
        let back = serde_json::to_value(&thread).expect("thread serializes");
        assert_eq!(back["projectId"], Value::Null);
    }

    #[test]
    fn thread_status_variants_round_trip() {
        round_trip::<ThreadStatusChangedNotification>(json!({
            "threadId": "01a22805-92a4-7883-962f-a9117c3e60a2",
            "status": {"type": "active", "activeFlags": []}
        }));
        let status: ThreadStatus = round_trip(json!({
            "type": "active",
            "activeFlags": ["waitingOnApproval", "waitingOnUserInput"]
        }));
        assert_eq!(
            status,
            ThreadStatus::Active {
                active_flags: vec![
                    ThreadActiveFlag::WaitingOnApproval,
                    ThreadActiveFlag::WaitingOnUserInput
                ]
            }
        );
        round_trip::<ThreadStatus>(json!({"type": "notLoaded"}));
        round_trip::<ThreadStatus>(json!({"type": "systemError"}));
    }

    #[test]
    fn session_sources_round_trip() {
        round_trip::<SessionSource>(json!("appServer"));
        round_trip::<SessionSource>(json!({"custom": "my-bot"}));
        round_trip::<SessionSource>(json!({"subAgent": "memory_consolidation"}));
        round_trip::<SessionSource>(json!({"subAgent": {"other": "triage"}}));
        let spawned: SessionSource = round_trip(json!({"subAgent": {"thread_spawn": {
            "parent_thread_id": "01a22805-92a4-7883-962f-a9117c3e60a2",
            "depth": 1,
            "agent_nickname": "Ada",
            "agent_role": "explorer",
            "agent_path": "/root/explorer"
        }}}));
        let SessionSource::SubAgent(SubAgentSource::ThreadSpawn { depth, .. }) = spawned else {
            panic!("expected a spawned sub-agent, got {spawned:?}");
        };
        assert_eq!(depth, 1);
    }

    #[test]
    fn thread_start_params_leave_unset_members_out() {
        let params: ThreadStartParams = round_trip(json!({"cwd": "/home/user/work"}));
        assert_eq!(params.cwd.as_deref(), Some("/home/user/work"));
        let back = serde_json::to_value(&params).expect("params serialize");
        let object = back.as_object().expect("params are an object");
        for key in [
            "model",
            "sandbox",
            "approvalPolicy",
            "config",
            "ephemeral",
            "threadSource",
        ] {
            assert!(!object.contains_key(key), "{key} should be absent");
        }

        round_trip::<ThreadStartParams>(json!({
            "cwd": "/home/user/work",
            "model": "gpt-5",
            "approvalPolicy": {"granular": {
                "sandbox_approval": true,
                "rules": true,
                "mcp_elicitations": false,
                "request_permissions": false,
                "skill_approval": false
            }},
            "approvalsReviewer": "auto_review",
            "sandbox": "workspace-write",
            "config": {"model_reasoning_effort": "high"},
            "ephemeral": true,
            "sessionStartSource": "clear",
            "threadSource": "quick-chat"
        }));
    }

    #[test]
    fn thread_list_params_leave_unset_filters_out() {
        let params: ThreadListParams = round_trip(json!({}));
        assert_eq!(params.limit, None);
        let params: ThreadListParams = round_trip(json!({
            "limit": 20,
            "sortKey": "updated_at",
            "sortDirection": "asc",
            "cwd": ["/home/user/work", "/home/user/other"],
            "sourceKinds": ["vscode", "subAgentThreadSpawn"],
            "archived": false
        }));
        assert_eq!(
            params.cwd,
            Some(ThreadListCwdFilter::List(vec![
                "/home/user/work".to_owned(),
                "/home/user/other".to_owned()
            ]))
        );
        let back = serde_json::to_value(&params).expect("params serialize");
        let object = back.as_object().expect("params are an object");
        for key in [
            "cursor",
            "searchTerm",
            "sectionId",
            "useStateDbOnly",
            "excludedThreadIds",
        ] {
            assert!(!object.contains_key(key), "{key} should be absent");
        }
        let single: ThreadListParams = round_trip(json!({"cwd": "/home/user/work"}));
        assert_eq!(
            single.cwd,
            Some(ThreadListCwdFilter::Text("/home/user/work".to_owned()))
        );
    }

    #[test]
    fn thread_list_response_keeps_null_cursors() {
        round_trip::<ThreadListResponse>(json!({
            "data": [transcript_thread()],
            "nextCursor": null,
            "backwardsCursor": "eyJ0cyI6MTc5NTk2Nzc4M30",
            "readStates": {"01a22805-92a4-7883-962f-a9117c3e60a2":
                {"firstUnread": {"type": "threadStart"}, "revision": "1:t:done"}}
        }));
        // A connection without `experimentalApi` does not get them (the stable shape).
        round_trip::<ThreadListResponse>(json!({
            "data": [],
            "nextCursor": null,
            "backwardsCursor": null
        }));
    }
}
