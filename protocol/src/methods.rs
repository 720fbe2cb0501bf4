//! The one table of every method in the protocol.
//!
//! Each row declares a method once: marker type, wire name, direction, params type (`params:`, or
//! `optional_params:` when the member may be left out), response type (requests only),
//! experimental flag and the protocol version that added it; optionally the params member that
//! orders it (`ordered_by: field = "wireName"`, see [`Method::ORDERED_BY`]) and, for a server
//! request, the answer that declines it (`decline: |reason| expr`, see [`Decline`]); for a client
//! request that only means something against a service this server does not reach, why it is
//! refused (`unavailable: Reason`, see [`Unavailable`]). The schema bundle,
//! TypeScript unions, `meta.json`, the runtime's dispatch table and its validators are all derived
//! from this table by `agentwire-codegen`; no other list of methods exists.

use crate::method::{
    Decline, Direction, Method, MethodInfo, MethodVisitor, NoParams, Notification, OrderingKey,
    Request, Unavailable,
};
use crate::*;

macro_rules! methods {
    ( $(
        $(#[doc = $doc:literal])*
        $kind:ident $marker:ident = $wire:literal {
            $params_key:ident: $params:ty,
            $(response: $response:ty,)?
            experimental: $experimental:literal,
            since: $since:literal
            $(, ordered_by: $key_field:ident = $key_wire:literal)?
            $(, decline: |$reason:ident| $decline:expr)?
            $(, unavailable: $why:ident)?
            $(,)?
        }
    )* ) => {
        $(
            $(#[doc = $doc])*
            #[derive(Debug)]
            pub enum $marker {}

            impl Method for $marker {
                const NAME: &'static str = $wire;
                const DIRECTION: Direction = methods!(@direction $kind);
                const EXPERIMENTAL: bool = $experimental;
                const SINCE: &'static str = $since;
                const PARAMS_OPTIONAL: bool = methods!(@is_optional $params_key);
                const DOC: &'static str = concat!($($doc, "\n",)*);
                type Params = methods!(@params_type $params_key $params);
                const ORDERED_BY: Option<&'static str> = methods!(@option $($key_wire)?);
                $(
                    fn ordering_key(params: &Self::Params) -> Option<&str> {
                        methods!(@key $params_key params $key_field)
                    }
                )?
            }

            impl $marker {
                /// The method's row of [`METHODS`].
                pub const INFO: MethodInfo = MethodInfo {
                    name: $wire,
                    direction: methods!(@direction $kind),
                    experimental: $experimental,
                    since: $since,
                    params: methods!(@params_name $params),
                    params_optional: methods!(@is_optional $params_key),
                    response: methods!(@response_name $($response)?),
                    marker: stringify!($marker),
                    ordered_by: methods!(@option $($key_wire)?),
                    declines: methods!(@present $($reason)?),
                };
            }

            methods!(@answer $kind $marker $(, $response)?);
            $( methods!(@decline $kind $marker, |$reason| $decline); )?
        )*

        /// Every method, in declaration order.
        pub const METHODS: &[MethodInfo] = &[ $( $marker::INFO, )* ];

        /// Looks a method up by its wire name.
        pub fn find(name: &str) -> Option<&'static MethodInfo> {
            match name {
                $( $wire => Some(&$marker::INFO), )*
                _ => None,
            }
        }

        /// Why the method named `name` (a client request) is refused instead of served, when
        /// the table declares it `unavailable:` (see [`MethodInfo::unavailable`]).
        pub fn unavailable(name: &str) -> Option<Unavailable> {
            match name {
                $( $wire => methods!(@unavailable $($why)?), )*
                _ => None,
            }
        }

        /// Calls the visitor once for every method, in declaration order, with its marker type.
        pub fn visit_methods<V: MethodVisitor>(visitor: &mut V) {
            $( methods!(@visit $kind visitor $marker); )*
        }
    };

    (@direction client_request) => { Direction::ClientRequest };
    (@direction server_request) => { Direction::ServerRequest };
    (@direction server_notification) => { Direction::ServerNotification };
    (@direction client_notification) => { Direction::ClientNotification };

    (@answer client_request $marker:ident, $response:ty) => {
        impl Request for $marker { type Response = $response; }
    };
    (@answer server_request $marker:ident, $response:ty) => {
        impl Request for $marker { type Response = $response; }
    };
    (@answer server_notification $marker:ident) => { impl Notification for $marker {} };
    (@answer client_notification $marker:ident) => { impl Notification for $marker {} };

    (@option) => { None };
    (@option $value:literal) => { Some($value) };
    (@unavailable) => { None };
    (@unavailable $why:ident) => { Some(Unavailable::$why) };
    (@present) => { false };
    (@present $reason:ident) => { true };
    (@key params $params:ident $field:ident) => { OrderingKey::ordering_key(&$params.$field) };
    (@key optional_params $params:ident $field:ident) => {
        $params.as_ref().and_then(|p| OrderingKey::ordering_key(&p.$field))
    };
    (@decline server_request $marker:ident, |$reason:ident| $decline:expr) => {
        impl Decline for <$marker as Request>::Response {
            fn decline($reason: &str) -> Self {
                let _ = $reason;
                $decline
            }
        }
    };

    (@params_type params $params:ty) => { $params };
    (@params_type optional_params $params:ty) => { Option<$params> };
    (@is_optional params) => { false };
    (@is_optional optional_params) => { true };

    (@params_name NoParams) => { None };
    (@params_name $params:ty) => { Some(stringify!($params)) };
    (@response_name) => { None };
    (@response_name $response:ty) => { Some(stringify!($response)) };

    (@visit client_request $v:ident $marker:ident) => { $v.client_request::<$marker>() };
    (@visit server_request $v:ident $marker:ident) => { $v.server_request::<$marker>() };
    (@visit server_notification $v:ident $marker:ident) => { $v.server_notification::<$marker>() };
    (@visit client_notification $v:ident $marker:ident) => { $v.client_notification::<$marker>() };
}

methods! {
    // ---- client → server requests -------------------------------------------------------------

    /// Opens a connection: identifies the client, negotiates capabilities. Must come first.
    client_request Initialize = "initialize" {
        params: InitializeParams, response: InitializeResponse, experimental: false, since: "0.1.0",
    }
    /// Creates a new thread and loads it.
    client_request ThreadStart = "thread/start" {
        params: ThreadStartParams, response: ThreadStartResponse, experimental: false, since: "0.1.0",
    }
    /// Loads a persisted thread so that turns can run on it again.
    client_request ThreadResume = "thread/resume" {
        params: ThreadResumeParams, response: ThreadResumeResponse, experimental: false, since: "0.1.0",
        ordered_by: thread_id = "threadId",
    }
    /// Copies a thread's history into a new thread and loads the copy.
    client_request ThreadFork = "thread/fork" {
        params: ThreadForkParams, response: ThreadForkResponse, experimental: false, since: "0.1.0",
        ordered_by: thread_id = "threadId",
    }
    /// Reads a thread's metadata and, on request, its turns, without loading it.
    client_request ThreadRead = "thread/read" {
        params: ThreadReadParams, response: ThreadReadResponse, experimental: false, since: "0.1.0",
        ordered_by: thread_id = "threadId",
    }
    /// Lists persisted threads, one page at a time.
    client_request ThreadList = "thread/list" {
        params: ThreadListParams, response: ThreadListResponse, experimental: false, since: "0.1.0",
    }
    /// Lists the ids of the threads loaded in this server.
    client_request ThreadLoadedList = "thread/loaded/list" {
        params: ThreadLoadedListParams, response: ThreadLoadedListResponse, experimental: false, since: "0.1.0",
    }
    /// Moves a thread to the archive.
    client_request ThreadArchive = "thread/archive" {
        params: ThreadArchiveParams, response: ThreadArchiveResponse, experimental: false, since: "0.1.0",
        ordered_by: thread_id = "threadId",
    }
    /// Brings an archived thread back.
    client_request ThreadUnarchive = "thread/unarchive" {
        params: ThreadUnarchiveParams, response: ThreadUnarchiveResponse, experimental: false, since: "0.1.0",
        ordered_by: thread_id = "threadId",
    }
    /// Sets or clears a thread's user-facing name.
    client_request ThreadSetName = "thread/name/set" {
        params: ThreadSetNameParams, response: ThreadSetNameResponse, experimental: false, since: "0.1.0",
        ordered_by: thread_id = "threadId",
    }
    /// Starts a turn: user input in, agent work streamed back as notifications.
    client_request TurnStart = "turn/start" {
        params: TurnStartParams, response: TurnStartResponse, experimental: false, since: "0.1.0",
        ordered_by: thread_id = "threadId",
    }
    /// Adds input to the turn that is running.
    client_request TurnSteer = "turn/steer" {
        params: TurnSteerParams, response: TurnSteerResponse, experimental: false, since: "0.1.0",
        ordered_by: thread_id = "threadId",
    }
    /// Stops the turn that is running.
    client_request TurnInterrupt = "turn/interrupt" {
        params: TurnInterruptParams, response: TurnInterruptResponse, experimental: false, since: "0.1.0",
        ordered_by: thread_id = "threadId",
    }
    /// Lists the models the user can pick.
    client_request ModelList = "model/list" {
        params: ModelListParams, response: ModelListResponse, experimental: false, since: "0.1.0",
    }
    /// Lists the collaboration-mode presets.
    client_request CollaborationModeList = "collaborationMode/list" {
        params: CollaborationModeListParams, response: CollaborationModeListResponse, experimental: true, since: "0.1.0",
    }
    /// Lists the apps (connectors) available to the user.
    client_request AppList = "app/list" {
        params: AppsListParams, response: AppsListResponse, experimental: false, since: "0.1.0",
        ordered_by: thread_id = "threadId",
    }
    /// Reads the effective configuration and, on request, the layers it came from.
    client_request ConfigRead = "config/read" {
        params: ConfigReadParams, response: ConfigReadResponse, experimental: false, since: "0.1.0",
    }
    /// Writes one configuration value.
    client_request ConfigValueWrite = "config/value/write" {
        params: ConfigValueWriteParams, response: ConfigWriteResponse, experimental: false, since: "0.1.0",
    }
    /// Writes several configuration values at once.
    client_request ConfigBatchWrite = "config/batchWrite" {
        params: ConfigBatchWriteParams, response: ConfigWriteResponse, experimental: false, since: "0.1.0",
    }
    /// Reads the signed-in account.
    client_request AccountRead = "account/read" {
        params: GetAccountParams, response: GetAccountResponse, experimental: false, since: "0.1.0",
    }
    /// Starts a sign-in.
    client_request AccountLoginStart = "account/login/start" {
        params: LoginAccountParams, response: LoginAccountResponse, experimental: false, since: "0.1.0",
    }
    /// Cancels a sign-in that has not completed.
    client_request AccountLoginCancel = "account/login/cancel" {
        params: CancelLoginAccountParams, response: CancelLoginAccountResponse, experimental: false, since: "0.1.0",
    }
    /// Signs out.
    client_request AccountLogout = "account/logout" {
        params: NoParams, response: LogoutAccountResponse, experimental: false, since: "0.1.0",
    }
    /// Reads the account's rate-limit windows.
    client_request AccountRateLimitsRead = "account/rateLimits/read" {
        optional_params: GetAccountRateLimitsParams, response: GetAccountRateLimitsResponse, experimental: false, since: "0.1.0",
    }
    /// Lists the configured MCP servers with their tools and status.
    client_request McpServerStatusList = "mcpServerStatus/list" {
        params: ListMcpServerStatusParams, response: ListMcpServerStatusResponse, experimental: false, since: "0.1.0",
        ordered_by: thread_id = "threadId",
    }
    /// Runs one command outside any thread and returns its output.
    client_request CommandExec = "command/exec" {
        params: CommandExecParams, response: CommandExecResponse, experimental: false, since: "0.1.0",
    }
    /// Writes to the stdin of a running `command/exec` process, or closes it.
    client_request CommandExecWrite = "command/exec/write" {
        params: CommandExecWriteParams, response: CommandExecWriteResponse, experimental: false, since: "0.2.0",
    }
    /// Kills a running `command/exec` process.
    client_request CommandExecTerminate = "command/exec/terminate" {
        params: CommandExecTerminateParams, response: CommandExecTerminateResponse, experimental: false, since: "0.2.0",
    }
    /// Resizes the pseudo-terminal of a running `command/exec` process.
    client_request CommandExecResize = "command/exec/resize" {
        params: CommandExecResizeParams, response: CommandExecResizeResponse, experimental: false, since: "0.2.0",
    }
    /// Searches file names under the given roots in one shot.
    client_request FuzzyFileSearch = "fuzzyFileSearch" {
        params: FuzzyFileSearchParams, response: FuzzyFileSearchResponse, experimental: false, since: "0.1.0",
    }
    /// Opens a search session whose results stream as the query changes.
    client_request FuzzyFileSearchSessionStart = "fuzzyFileSearch/sessionStart" {
        params: FuzzyFileSearchSessionStartParams, response: FuzzyFileSearchSessionStartResponse, experimental: true, since: "0.1.0",
    }
    /// Changes the query of a search session.
    client_request FuzzyFileSearchSessionUpdate = "fuzzyFileSearch/sessionUpdate" {
        params: FuzzyFileSearchSessionUpdateParams, response: FuzzyFileSearchSessionUpdateResponse, experimental: true, since: "0.1.0",
    }
    /// Closes a search session.
    client_request FuzzyFileSearchSessionStop = "fuzzyFileSearch/sessionStop" {
        params: FuzzyFileSearchSessionStopParams, response: FuzzyFileSearchSessionStopResponse, experimental: true, since: "0.1.0",
    }
    /// Legacy: a one-line summary of a persisted conversation.
    client_request GetConversationSummary = "getConversationSummary" {
        params: GetConversationSummaryParams, response: GetConversationSummaryResponse, experimental: false, since: "0.1.0",
    }
    /// Legacy: how the server is authenticated.
    client_request GetAuthStatus = "getAuthStatus" {
        params: GetAuthStatusParams, response: GetAuthStatusResponse, experimental: false, since: "0.1.0",
    }
    /// Legacy: the diff between the working tree and the remote branch it tracks.
    client_request GitDiffToRemote = "gitDiffToRemote" {
        params: GitDiffToRemoteParams, response: GitDiffToRemoteResponse, experimental: false, since: "0.1.0",
    }
    // Thread surface added in 0.3.0: metadata, history pages, shell, revert, unsubscribe, delete.
    /// Patches a thread's stored metadata (its Git information).
    client_request ThreadMetadataUpdate = "thread/metadata/update" {
        params: ThreadMetadataUpdateParams, response: ThreadMetadataUpdateResponse, experimental: false, since: "0.3.0",
        ordered_by: thread_id = "threadId",
    }
    /// Lists a thread's turns, one page at a time.
    client_request ThreadTurnsList = "thread/turns/list" {
        params: ThreadTurnsListParams, response: ThreadTurnsListResponse, experimental: false, since: "0.3.0",
        ordered_by: thread_id = "threadId",
    }
    /// Lists a thread's items (of one turn or of all), one page at a time.
    client_request ThreadItemsList = "thread/items/list" {
        params: ThreadItemsListParams, response: ThreadItemsListResponse, experimental: false, since: "0.3.0",
        ordered_by: thread_id = "threadId",
    }
    /// Runs a user's shell command in a thread, recorded as a `commandExecution` item.
    client_request ThreadShellCommand = "thread/shellCommand" {
        params: ThreadShellCommandParams, response: ThreadShellCommandResponse, experimental: false, since: "0.3.0",
        ordered_by: thread_id = "threadId",
    }
    /// Drops a turn and every later one from a thread's history.
    client_request ThreadRevert = "thread/revert" {
        params: ThreadRevertParams, response: ThreadRevertResponse, experimental: false, since: "0.3.0",
        ordered_by: thread_id = "threadId",
    }
    /// Summarises a thread's history so later model calls see the summary instead.
    client_request ThreadCompactStart = "thread/compact/start" {
        params: ThreadCompactStartParams, response: ThreadCompactStartResponse, experimental: false, since: "0.3.0",
        ordered_by: thread_id = "threadId",
    }
    /// Stops this connection following a thread; the last follower leaving unloads it.
    client_request ThreadUnsubscribe = "thread/unsubscribe" {
        params: ThreadUnsubscribeParams, response: ThreadUnsubscribeResponse, experimental: false, since: "0.3.0",
        ordered_by: thread_id = "threadId",
    }
    /// Deletes a thread for good: stops its running turn, removes its rollout and index entry.
    client_request ThreadDelete = "thread/delete" {
        params: ThreadDeleteParams, response: ThreadDeleteResponse, experimental: false, since: "0.3.0",
        ordered_by: thread_id = "threadId",
    }
    /// Reads a file inside the roots `fs/*` may use, base64-encoded.
    client_request FsReadFile = "fs/readFile" {
        params: FsReadFileParams, response: FsReadFileResponse, experimental: false, since: "0.3.0",
    }
    /// Replaces or creates a file inside the roots, atomically.
    client_request FsWriteFile = "fs/writeFile" {
        params: FsWriteFileParams, response: FsWriteFileResponse, experimental: false, since: "0.3.0",
    }
    /// Creates a directory inside the roots (and its parents, unless told not to).
    client_request FsCreateDirectory = "fs/createDirectory" {
        params: FsCreateDirectoryParams, response: FsCreateDirectoryResponse, experimental: false, since: "0.3.0",
    }
    /// Describes a path inside the roots: file or directory, symlink, times.
    client_request FsGetMetadata = "fs/getMetadata" {
        params: FsGetMetadataParams, response: FsGetMetadataResponse, experimental: false, since: "0.3.0",
    }
    /// Lists a directory inside the roots.
    client_request FsReadDirectory = "fs/readDirectory" {
        params: FsReadDirectoryParams, response: FsReadDirectoryResponse, experimental: false, since: "0.3.0",
    }
    /// Removes a file, symlink or directory tree inside the roots.
    client_request FsRemove = "fs/remove" {
        params: FsRemoveParams, response: FsRemoveResponse, experimental: false, since: "0.3.0",
    }
    /// Copies a file or directory tree within the roots.
    client_request FsCopy = "fs/copy" {
        params: FsCopyParams, response: FsCopyResponse, experimental: false, since: "0.3.0",
    }
    /// Subscribes this connection to changes of a file or directory inside the roots.
    client_request FsWatch = "fs/watch" {
        params: FsWatchParams, response: FsWatchResponse, experimental: false, since: "0.3.0",
    }
    /// Ends a watch of this connection.
    client_request FsUnwatch = "fs/unwatch" {
        params: FsUnwatchParams, response: FsUnwatchResponse, experimental: false, since: "0.3.0",
    }

    // ---- server → client requests -------------------------------------------------------------

    /// Asks the client to approve a command before the agent runs it.
    server_request CommandExecutionRequestApproval = "item/commandExecution/requestApproval" {
        params: CommandExecutionRequestApprovalParams, response: CommandExecutionRequestApprovalResponse, experimental: false, since: "0.1.0",
        ordered_by: thread_id = "threadId",
        decline: |_reason| CommandExecutionRequestApprovalResponse {
            decision: CommandExecutionApprovalDecision::Decline,
        },
    }
    /// Asks the client to approve file changes before the agent applies them.
    server_request FileChangeRequestApproval = "item/fileChange/requestApproval" {
        params: FileChangeRequestApprovalParams, response: FileChangeRequestApprovalResponse, experimental: false, since: "0.1.0",
        ordered_by: thread_id = "threadId",
        decline: |_reason| FileChangeRequestApprovalResponse {
            decision: FileChangeApprovalDecision::Decline,
        },
    }
    /// Legacy form of the command approval request.
    server_request ExecCommandApproval = "execCommandApproval" {
        params: ExecCommandApprovalParams, response: ExecCommandApprovalResponse, experimental: false, since: "0.1.0",
        decline: |reason| ExecCommandApprovalResponse {
            decision: ReviewDecision::Denied { rejection: reason.to_owned() },
        },
    }
    /// Legacy form of the patch approval request.
    server_request ApplyPatchApproval = "applyPatchApproval" {
        params: ApplyPatchApprovalParams, response: ApplyPatchApprovalResponse, experimental: false, since: "0.1.0",
        decline: |reason| ApplyPatchApprovalResponse {
            decision: ReviewDecision::Denied { rejection: reason.to_owned() },
        },
    }

    // ---- server → client notifications --------------------------------------------------------

    /// An error the user should see; `willRetry` says whether the turn goes on.
    server_notification ErrorEvent = "error" {
        params: ErrorNotification, experimental: false, since: "0.1.0",
    }
    /// A warning the user should see.
    server_notification Warning = "warning" {
        params: WarningNotification, experimental: false, since: "0.1.0",
    }
    /// A problem found in the configuration.
    server_notification ConfigWarning = "configWarning" {
        params: ConfigWarningNotification, experimental: false, since: "0.1.0",
    }
    /// A thread was created (by start or fork) and loaded.
    server_notification ThreadStarted = "thread/started" {
        params: ThreadStartedNotification, experimental: false, since: "0.1.0",
    }
    /// A loaded thread changed status (idle, active, …).
    server_notification ThreadStatusChanged = "thread/status/changed" {
        params: ThreadStatusChangedNotification, experimental: false, since: "0.1.0",
    }
    /// A thread was archived.
    server_notification ThreadArchived = "thread/archived" {
        params: ThreadArchivedNotification, experimental: false, since: "0.1.0",
    }
    /// A thread was unarchived.
    server_notification ThreadUnarchived = "thread/unarchived" {
        params: ThreadUnarchivedNotification, experimental: false, since: "0.1.0",
    }
    /// A thread's name was set or cleared.
    server_notification ThreadNameUpdated = "thread/name/updated" {
        params: ThreadNameUpdatedNotification, experimental: false, since: "0.1.0",
    }
    /// Token usage of a thread changed.
    server_notification ThreadTokenUsageUpdated = "thread/tokenUsage/updated" {
        params: ThreadTokenUsageUpdatedNotification, experimental: false, since: "0.1.0",
    }
    /// A turn began.
    server_notification TurnStarted = "turn/started" {
        params: TurnStartedNotification, experimental: false, since: "0.1.0",
    }
    /// A turn ended: completed, interrupted or failed.
    server_notification TurnCompleted = "turn/completed" {
        params: TurnCompletedNotification, experimental: false, since: "0.1.0",
    }
    /// The combined diff of the turn's file changes so far.
    server_notification TurnDiffUpdated = "turn/diff/updated" {
        params: TurnDiffUpdatedNotification, experimental: false, since: "0.1.0",
    }
    /// The agent's plan for the turn changed.
    server_notification TurnPlanUpdated = "turn/plan/updated" {
        params: TurnPlanUpdatedNotification, experimental: false, since: "0.1.0",
    }
    /// An item began.
    server_notification ItemStarted = "item/started" {
        params: ItemStartedNotification, experimental: false, since: "0.1.0",
    }
    /// An item finished; carries its final state.
    server_notification ItemCompleted = "item/completed" {
        params: ItemCompletedNotification, experimental: false, since: "0.1.0",
    }
    /// More text of an agent message.
    server_notification AgentMessageDelta = "item/agentMessage/delta" {
        params: AgentMessageDeltaNotification, experimental: false, since: "0.1.0",
    }
    /// More raw reasoning text.
    server_notification ReasoningTextDelta = "item/reasoning/textDelta" {
        params: ReasoningTextDeltaNotification, experimental: false, since: "0.1.0",
    }
    /// More reasoning summary text.
    server_notification ReasoningSummaryTextDelta = "item/reasoning/summaryTextDelta" {
        params: ReasoningSummaryTextDeltaNotification, experimental: false, since: "0.1.0",
    }
    /// More output of a command the agent runs.
    server_notification CommandExecutionOutputDelta = "item/commandExecution/outputDelta" {
        params: CommandExecutionOutputDeltaNotification, experimental: false, since: "0.1.0",
    }
    /// More output of a `command/exec` command.
    server_notification CommandExecOutputDelta = "command/exec/outputDelta" {
        params: CommandExecOutputDeltaNotification, experimental: false, since: "0.1.0",
    }
    /// A server→client request was answered, timed out or withdrawn.
    server_notification ServerRequestResolved = "serverRequest/resolved" {
        params: ServerRequestResolvedNotification, experimental: false, since: "0.1.0",
    }
    /// The signed-in account changed.
    server_notification AccountUpdated = "account/updated" {
        params: AccountUpdatedNotification, experimental: false, since: "0.1.0",
    }
    /// A sign-in finished.
    server_notification AccountLoginCompleted = "account/login/completed" {
        params: AccountLoginCompletedNotification, experimental: false, since: "0.1.0",
    }
    /// An MCP server's start-up state changed.
    server_notification McpServerStartupStatusUpdated = "mcpServer/startupStatus/updated" {
        params: McpServerStatusUpdatedNotification, experimental: false, since: "0.1.0",
    }
    /// New results of a fuzzy file search session.
    server_notification FuzzyFileSearchSessionUpdated = "fuzzyFileSearch/sessionUpdated" {
        params: FuzzyFileSearchSessionUpdatedNotification, experimental: false, since: "0.1.0",
    }
    /// A fuzzy file search session finished searching.
    server_notification FuzzyFileSearchSessionCompleted = "fuzzyFileSearch/sessionCompleted" {
        params: FuzzyFileSearchSessionCompletedNotification, experimental: false, since: "0.1.0",
    }
    // Thread surface added in 0.3.0.
    /// A thread was deleted.
    server_notification ThreadDeleted = "thread/deleted" {
        params: ThreadDeletedNotification, experimental: false, since: "0.3.0",
    }
    /// A thread was unloaded: its last follower left.
    server_notification ThreadClosed = "thread/closed" {
        params: ThreadClosedNotification, experimental: false, since: "0.3.0",
    }
    /// A thread's history was shortened by `thread/revert`.
    server_notification ThreadReverted = "thread/reverted" {
        params: ThreadRevertedNotification, experimental: false, since: "0.3.0",
    }
    /// A thread's history was compacted (summarised) by `thread/compact/start`.
    server_notification ThreadCompacted = "thread/compacted" {
        params: ContextCompactedNotification, experimental: false, since: "0.3.0",
    }
    /// Something changed under a watch this connection made with `fs/watch`.
    server_notification FsChanged = "fs/changed" {
        params: FsChangedNotification, experimental: false, since: "0.3.0",
    }

    // ---- client → server notifications --------------------------------------------------------

    /// The client has processed the `initialize` response.
    client_notification Initialized = "initialized" {
        params: NoParams, experimental: false, since: "0.1.0",
    }

    // ---- MCP servers as tools of the engine (0.3.0) ------------------------------------------

    /// Calls one tool of a configured MCP server, outside any turn.
    client_request McpServerToolCall = "mcpServer/tool/call" {
        params: McpServerToolCallParams, response: McpServerToolCallResponse, experimental: false, since: "0.3.0",
        ordered_by: thread_id = "threadId",
    }
    /// Reads one resource of a configured MCP server.
    client_request McpServerResourceRead = "mcpServer/resource/read" {
        params: McpResourceReadParams, response: McpResourceReadResponse, experimental: false, since: "0.3.0",
        ordered_by: thread_id = "threadId",
    }
    /// Reloads the MCP servers from the configuration: changed or removed servers are stopped.
    client_request McpServerReload = "config/mcpServer/reload" {
        params: NoParams, response: McpServerRefreshResponse, experimental: false, since: "0.3.0",
    }
    /// An MCP server asks the user for input; the answer goes back to that server.
    server_request McpServerElicitationRequest = "mcpServer/elicitation/request" {
        params: McpServerElicitationRequestParams, response: McpServerElicitationRequestResponse, experimental: false, since: "0.3.0",
        ordered_by: thread_id = "threadId",
    }
    /// An MCP server reported progress of a running `mcpToolCall` item.
    server_notification McpToolCallProgress = "item/mcpToolCall/progress" {
        params: McpToolCallProgressNotification, experimental: false, since: "0.3.0",
    }

    // ---- Reviews and reasoning summary parts (0.4.0) ------------------------------------------

    /// Runs a code review (of a diff or of free-form instructions) as a turn on a thread.
    client_request ReviewStart = "review/start" {
        params: ReviewStartParams, response: ReviewStartResponse, experimental: false, since: "0.4.0",
        ordered_by: thread_id = "threadId",
    }
    /// A new section of a reasoning summary began.
    server_notification ReasoningSummaryPartAdded = "item/reasoning/summaryPartAdded" {
        params: ReasoningSummaryPartAddedNotification, experimental: false, since: "0.4.0",
    }
    // ---- tools the client answers (0.4.0) -----------------------------------------------------

    /// The model asks the user questions (its `request_user_input` tool); the answers go back
    /// to the model.
    server_request ToolRequestUserInput = "item/tool/requestUserInput" {
        params: ToolRequestUserInputParams, response: ToolRequestUserInputResponse, experimental: false, since: "0.4.0",
        ordered_by: thread_id = "threadId",
    }
    /// The model calls a dynamic tool the client declared on `thread/start`; the client runs it
    /// and answers with its result.
    server_request DynamicToolCall = "item/tool/call" {
        params: DynamicToolCallParams, response: DynamicToolCallResponse, experimental: false, since: "0.4.0",
        ordered_by: thread_id = "threadId",
    }

    // ---- Codex clients' start-up and session state (0.6.0) ----------------------------------

    /// Reads the administrator's requirements (`requirements.toml`): the approval policies,
    /// sandbox modes, web search modes and model provider users may choose.
    client_request ConfigRequirementsRead = "configRequirements/read" {
        params: NoParams, response: ConfigRequirementsReadResponse, experimental: false, since: "0.6.0",
    }
    /// Lists the skills (`SKILL.md` folders) that apply in each working directory.
    client_request SkillsList = "skills/list" {
        params: SkillsListParams, response: SkillsListResponse, experimental: false, since: "0.6.0",
    }
    /// Sets the folders searched for skills beside the usual ones.
    client_request SkillsExtraRootsSet = "skills/extraRoots/set" {
        params: SkillsExtraRootsSetParams, response: SkillsExtraRootsSetResponse, experimental: false, since: "0.6.0",
    }
    /// Enables or disables one skill in the user's configuration.
    client_request SkillsConfigWrite = "skills/config/write" {
        params: SkillsConfigWriteParams, response: SkillsConfigWriteResponse, experimental: false, since: "0.6.0",
    }
    /// Lists the lifecycle hooks that apply in each working directory.
    client_request HooksList = "hooks/list" {
        params: HooksListParams, response: HooksListResponse, experimental: false, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Lists the plugin marketplaces with their installed plugins.
    client_request PluginInstalled = "plugin/installed" {
        params: PluginInstalledParams, response: PluginInstalledResponse, experimental: false, since: "0.6.0",
    }
    /// Says whether the Amazon Bedrock sign-in in use is a GovCloud one that needs a warning.
    client_request AccountBedrockCheckGovCloudRequirements = "account/bedrock/checkGovCloudRequirements" {
        params: BedrockCheckGovCloudRequirementsParams, response: BedrockCheckGovCloudRequirementsResponse, experimental: true, since: "0.6.0",
    }
    /// Reads a thread's goal.
    client_request ThreadGoalGet = "thread/goal/get" {
        params: ThreadGoalGetParams, response: ThreadGoalGetResponse, experimental: false, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Sets or changes a thread's goal.
    client_request ThreadGoalSet = "thread/goal/set" {
        params: ThreadGoalSetParams, response: ThreadGoalSetResponse, experimental: false, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Clears a thread's goal.
    client_request ThreadGoalClear = "thread/goal/clear" {
        params: ThreadGoalClearParams, response: ThreadGoalClearResponse, experimental: false, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Marks a thread read or unread.
    client_request ThreadReadStateUpdate = "thread/readState/update" {
        params: ThreadReadStateUpdateParams, response: ThreadReadStateUpdateResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Lists the commands a thread left running in the background.
    client_request ThreadBackgroundTerminalsList = "thread/backgroundTerminals/list" {
        params: ThreadBackgroundTerminalsListParams, response: ThreadBackgroundTerminalsListResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Stops every command a thread left running in the background.
    client_request ThreadBackgroundTerminalsClean = "thread/backgroundTerminals/clean" {
        params: ThreadBackgroundTerminalsCleanParams, response: ThreadBackgroundTerminalsCleanResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Stops one command a thread left running in the background.
    client_request ThreadBackgroundTerminalsTerminate = "thread/backgroundTerminals/terminate" {
        params: ThreadBackgroundTerminalsTerminateParams, response: ThreadBackgroundTerminalsTerminateResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Turns a plan the user approved into the first prompt of a fresh thread.
    client_request ThreadPrepareApprovedPlan = "thread/prepareApprovedPlan" {
        params: ThreadPrepareApprovedPlanParams, response: ThreadPrepareApprovedPlanResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Echoes its params: a method that exists only behind `experimentalApi`, for client tests.
    client_request MockExperimentalMethod = "mock/experimentalMethod" {
        params: MockExperimentalMethodParams, response: MockExperimentalMethodResponse, experimental: true, since: "0.6.0",
    }
    /// Skills were added, removed or changed: list them again.
    server_notification SkillsChanged = "skills/changed" {
        params: SkillsChangedNotification, experimental: false, since: "0.6.0",
    }
    /// A thread's goal was set or changed.
    server_notification ThreadGoalUpdated = "thread/goal/updated" {
        params: ThreadGoalUpdatedNotification, experimental: false, since: "0.6.0",
    }
    /// A thread's goal was cleared.
    server_notification ThreadGoalCleared = "thread/goal/cleared" {
        params: ThreadGoalClearedNotification, experimental: false, since: "0.6.0",
    }
    /// A thread's read state changed.
    server_notification ThreadReadStateChanged = "thread/readState/changed" {
        params: ThreadReadStateChangedNotification, experimental: false, since: "0.6.0",
    }

    // ---- Declared and refused: they need a service or platform this server does not reach ----
    // (0.6.0). Each answers -32004 with `data.reason`; see docs/unavailable-methods.md.

    /// Reads whether the ChatGPT account has verified its identity.
    client_request UserVerificationStatus = "userVerification/status" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: ChatgptAccount,
    }
    /// Enrols the ChatGPT account in identity verification.
    client_request UserVerificationEnroll = "userVerification/enroll" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: ChatgptAccount,
    }
    /// Deletes the ChatGPT account's identity verification.
    client_request UserVerificationDelete = "userVerification/delete" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: ChatgptAccount,
    }
    /// Verifies the ChatGPT account's identity.
    client_request UserVerificationVerify = "userVerification/verify" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: ChatgptAccount,
    }
    /// Cancels an identity verification in progress.
    client_request UserVerificationCancel = "userVerification/cancel" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: ChatgptAccount,
    }
    /// Lists the ChatGPT account sessions signed in on this machine.
    client_request AccountSessionList = "accountSession/list" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: ChatgptAccount,
    }
    /// Switches to another ChatGPT account session.
    client_request AccountSessionSwitch = "accountSession/switch" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: ChatgptAccount,
    }
    /// Reads the ChatGPT account's security set-up.
    client_request AccountSecuritySetupRead = "account/securitySetup/read" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: ChatgptAccount,
    }
    /// Spends a ChatGPT plan's credit to reset a rate limit.
    client_request AccountRateLimitResetCreditConsume = "account/rateLimitResetCredit/consume" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: ChatgptAccount,
    }
    /// Reads the ChatGPT account's token usage.
    client_request AccountUsageRead = "account/usage/read" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: ChatgptAccount,
    }
    /// Reads the messages of the ChatGPT account's workspace.
    client_request AccountWorkspaceMessagesRead = "account/workspaceMessages/read" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: ChatgptAccount,
    }
    /// Asks the ChatGPT workspace's owner by email to add credits.
    client_request AccountSendAddCreditsNudgeEmail = "account/sendAddCreditsNudgeEmail" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: ChatgptAccount,
    }
    /// Lets OpenAI's remote control service drive this server.
    client_request RemoteControlEnable = "remoteControl/enable" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Stops OpenAI's remote control service driving this server.
    client_request RemoteControlDisable = "remoteControl/disable" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Reads the remote control status.
    client_request RemoteControlStatusRead = "remoteControl/status/read" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Pairs a device for remote control.
    client_request RemoteControlPairingStart = "remoteControl/pairing/start" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Reads the state of a remote control pairing.
    client_request RemoteControlPairingStatus = "remoteControl/pairing/status" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Lists the devices paired for remote control.
    client_request RemoteControlClientList = "remoteControl/client/list" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Revokes a device paired for remote control.
    client_request RemoteControlClientRevoke = "remoteControl/client/revoke" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Publishes a plugin to OpenAI's plugin sharing service.
    client_request PluginShareSave = "plugin/share/save" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Changes who a shared plugin is shared with.
    client_request PluginShareUpdateTargets = "plugin/share/updateTargets" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Lists the plugins shared with the account.
    client_request PluginShareList = "plugin/share/list" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Fetches a shared plugin.
    client_request PluginShareCheckout = "plugin/share/checkout" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Stops sharing a plugin.
    client_request PluginShareDelete = "plugin/share/delete" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Uploads feedback with logs to OpenAI.
    client_request FeedbackUpload = "feedback/upload" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Reads the sign-in to OpenAI's gateway.
    client_request AccountGatewayOauthRead = "account/gatewayOAuth/read" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Signs in to OpenAI's gateway.
    client_request AccountGatewayOauthLogin = "account/gatewayOAuth/login" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Cancels a sign-in to OpenAI's gateway.
    client_request AccountGatewayOauthCancel = "account/gatewayOAuth/cancel" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Asks OpenAI's prediction service what the user will type next.
    client_request ThreadPredictionRequest = "thread/prediction/request" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Reads one app of OpenAI's apps directory.
    client_request AppRead = "app/read" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Lists the apps of OpenAI's apps directory the account installed.
    client_request AppInstalled = "app/installed" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Starts a realtime voice session on a thread.
    client_request ThreadRealtimeStart = "thread/realtime/start" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: RealtimeVoice,
    }
    /// Sends audio to a realtime voice session.
    client_request ThreadRealtimeAppendAudio = "thread/realtime/appendAudio" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: RealtimeVoice,
    }
    /// Sends text to a realtime voice session.
    client_request ThreadRealtimeAppendText = "thread/realtime/appendText" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: RealtimeVoice,
    }
    /// Sends speech to a realtime voice session.
    client_request ThreadRealtimeAppendSpeech = "thread/realtime/appendSpeech" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: RealtimeVoice,
    }
    /// Stops a realtime voice session.
    client_request ThreadRealtimeStop = "thread/realtime/stop" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: RealtimeVoice,
    }
    /// Lists a thread's realtime voice sessions.
    client_request ThreadRealtimeList = "thread/realtime/list" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: RealtimeVoice,
    }
    /// Lists the voices of the realtime voice service.
    client_request ThreadRealtimeListVoices = "thread/realtime/listVoices" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: RealtimeVoice,
    }
    /// Discovers the Amazon Bedrock accounts and regions the machine can sign in to.
    client_request AccountBedrockDiscover = "account/bedrock/discover" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: CloudProviderSetup,
    }
    /// Sets up an Amazon Bedrock sign-in.
    client_request AccountBedrockSetup = "account/bedrock/setup" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: CloudProviderSetup,
    }
    /// Sets up a Google Cloud sign-in.
    client_request AccountGcpSetup = "account/gcp/setup" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: CloudProviderSetup,
    }
    /// Starts setting up the Windows sandbox.
    client_request WindowsSandboxSetupStart = "windowsSandbox/setupStart" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: WindowsOnly,
    }
    /// Reads whether the Windows sandbox is set up.
    client_request WindowsSandboxReadiness = "windowsSandbox/readiness" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: WindowsOnly,
    }

    // ---- providers, features, settings and standalone processes (0.6.0) ----

    /// Lists the model providers the configuration knows and which one new threads use.
    client_request ModelProviderList = "modelProvider/list" {
        params: ModelProviderListParams, response: ModelProviderListResponse, experimental: false, since: "0.6.0",
    }
    /// Adds a custom model provider to the user's configuration, or edits one.
    client_request ModelProviderConfigWrite = "modelProvider/config/write" {
        params: ModelProviderConfigWriteParams, response: ModelProviderConfigWriteResponse, experimental: false, since: "0.6.0",
    }
    /// Makes a configured model provider the one new threads use.
    client_request ModelProviderDefaultSet = "modelProvider/default/set" {
        params: ModelProviderDefaultSetParams, response: ConfigWriteResponse, experimental: false, since: "0.6.0",
    }
    /// Says which hosted tools turns on the default model provider can use.
    client_request ModelProviderCapabilitiesRead = "modelProvider/capabilities/read" {
        params: ModelProviderCapabilitiesReadParams, response: ModelProviderCapabilitiesReadResponse, experimental: false, since: "0.6.0",
    }
    /// Lists this server's experimental features and whether each is on.
    client_request ExperimentalFeatureList = "experimentalFeature/list" {
        params: ExperimentalFeatureListParams, response: ExperimentalFeatureListResponse, experimental: false, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Turns experimental features on or off in the user's configuration.
    client_request ExperimentalFeatureEnablementSet = "experimentalFeature/enablement/set" {
        params: ExperimentalFeatureEnablementSetParams, response: ExperimentalFeatureEnablementSetResponse, experimental: false, since: "0.6.0",
    }
    /// Lists the permission profiles (sandbox presets) a thread may select.
    client_request PermissionProfileList = "permissionProfile/list" {
        params: PermissionProfileListParams, response: PermissionProfileListResponse, experimental: false, since: "0.6.0",
    }
    /// Changes a loaded thread's settings for its later turns.
    client_request ThreadSettingsUpdate = "thread/settings/update" {
        params: ThreadSettingsUpdateParams, response: ThreadSettingsUpdateResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Changes a running turn's settings for its remaining model calls.
    client_request TurnSettingsUpdate = "turn/settings/update" {
        params: TurnSettingsUpdateParams, response: TurnSettingsUpdateResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Starts a standalone process; its output and end arrive as notifications.
    client_request ProcessSpawn = "process/spawn" {
        params: ProcessSpawnParams, response: ProcessSpawnResponse, experimental: true, since: "0.6.0",
    }
    /// Writes to a standalone process's stdin, or ends it.
    client_request ProcessWriteStdin = "process/writeStdin" {
        params: ProcessWriteStdinParams, response: ProcessWriteStdinResponse, experimental: true, since: "0.6.0",
    }
    /// Resizes a standalone process's pseudo-terminal.
    client_request ProcessResizePty = "process/resizePty" {
        params: ProcessResizePtyParams, response: ProcessResizePtyResponse, experimental: true, since: "0.6.0",
    }
    /// Kills a standalone process.
    client_request ProcessKill = "process/kill" {
        params: ProcessKillParams, response: ProcessKillResponse, experimental: true, since: "0.6.0",
    }
    /// Reports facts about the server process and its load.
    client_request ServerDiagnostics = "server/diagnostics" {
        params: ServerDiagnosticsParams, response: ServerDiagnosticsResponse, experimental: true, since: "0.6.0",
    }
    /// Writes a feedback report, with a thread and logs if asked, as a ZIP file on the
    /// server's machine.
    client_request FeedbackSave = "feedback/save" {
        params: FeedbackSaveParams, response: FeedbackSaveResponse, experimental: false, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// A thread's settings changed.
    server_notification ThreadSettingsUpdated = "thread/settings/updated" {
        params: ThreadSettingsUpdatedNotification, experimental: false, since: "0.6.0",
    }
    /// A chunk of a streaming standalone process's output.
    server_notification ProcessOutputDelta = "process/outputDelta" {
        params: ProcessOutputDeltaNotification, experimental: false, since: "0.6.0",
    }
    /// A standalone process has ended.
    server_notification ProcessExited = "process/exited" {
        params: ProcessExitedNotification, experimental: false, since: "0.6.0",
    }

    // ---- reading and searching thread history (0.6.0) ----

    /// Lists a thread's turn starts, items and turn ends in stored order, one page at a time.
    client_request ThreadTimelineList = "thread/timeline/list" {
        params: ThreadTimelineListParams, response: ThreadTimelineListResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Reads some items of one turn of a thread, by id.
    client_request ThreadItemsRead = "thread/items/read" {
        params: ThreadItemsReadParams, response: ThreadItemsReadResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Finds the stored threads whose name, preview or messages contain a term.
    client_request ThreadSearch = "thread/search" {
        params: ThreadSearchParams, response: ThreadSearchResponse, experimental: true, since: "0.6.0",
    }
    /// Like `thread/search`, sending `thread/search/partial` with matches as they are found.
    client_request ThreadSearchStream = "thread/search/stream" {
        params: ThreadSearchParams, response: ThreadSearchResponse, experimental: true, since: "0.6.0",
    }
    /// Stops a `thread/search` of this connection.
    client_request ThreadSearchCancel = "thread/search/cancel" {
        params: ThreadSearchCancelParams, response: ThreadSearchCancelResponse, experimental: true, since: "0.6.0",
    }
    /// Stops a `thread/search/stream` of this connection.
    client_request ThreadSearchStreamCancel = "thread/search/stream/cancel" {
        params: ThreadSearchCancelParams, response: ThreadSearchCancelResponse, experimental: true, since: "0.6.0",
    }
    /// Finds every place a term appears in the messages of one thread.
    client_request ThreadSearchOccurrences = "thread/searchOccurrences" {
        params: ThreadSearchOccurrencesParams, response: ThreadSearchOccurrencesResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Adds items to what the model sees of a thread, without starting a turn.
    client_request ThreadInjectItems = "thread/inject_items" {
        params: ThreadInjectItemsParams, response: ThreadInjectItemsResponse, experimental: false, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Matches a `thread/search/stream` has found so far.
    server_notification ThreadSearchPartial = "thread/search/partial" {
        params: ThreadSearchPartialNotification, experimental: true, since: "0.6.0",
    }

    // ---- organising threads: projects, sections, attachments, queued input (0.6.0) ----

    /// Lists the projects, in the user's order or by their threads' recency.
    client_request ProjectList = "project/list" {
        params: ProjectListParams, response: ProjectListResponse, experimental: true, since: "0.6.0",
    }
    /// Reads one project.
    client_request ProjectRead = "project/read" {
        params: ProjectReadParams, response: ProjectReadResponse, experimental: true, since: "0.6.0",
    }
    /// Makes a project (once per idempotency key).
    client_request ProjectCreate = "project/create" {
        params: ProjectCreateParams, response: ProjectCreateResponse, experimental: true, since: "0.6.0",
    }
    /// Makes a project and files existing threads under it.
    client_request ProjectImport = "project/import" {
        params: ProjectImportParams, response: ProjectImportResponse, experimental: true, since: "0.6.0",
    }
    /// Changes a project's name, folders or metadata.
    client_request ProjectUpdate = "project/update" {
        params: ProjectUpdateParams, response: ProjectUpdateResponse, experimental: true, since: "0.6.0",
    }
    /// Moves a project in the user's order.
    client_request ProjectMove = "project/move" {
        params: ProjectMoveParams, response: ProjectMoveResponse, experimental: true, since: "0.6.0",
    }
    /// Deletes a project; its threads stay, filed under none.
    client_request ProjectDelete = "project/delete" {
        params: ProjectDeleteParams, response: ProjectDeleteResponse, experimental: true, since: "0.6.0",
    }
    /// Lists the thread sections.
    client_request ThreadSectionList = "threadSection/list" {
        params: ThreadSectionListParams, response: ThreadSectionListResponse, experimental: false, since: "0.6.0",
    }
    /// Makes a thread section.
    client_request ThreadSectionCreate = "threadSection/create" {
        params: ThreadSectionCreateParams, response: ThreadSectionCreateResponse, experimental: false, since: "0.6.0",
    }
    /// Renames a thread section or changes its look.
    client_request ThreadSectionUpdate = "threadSection/update" {
        params: ThreadSectionUpdateParams, response: ThreadSectionUpdateResponse, experimental: false, since: "0.6.0",
    }
    /// Deletes a thread section; its threads stay, in no section.
    client_request ThreadSectionDelete = "threadSection/delete" {
        params: ThreadSectionDeleteParams, response: ThreadSectionDeleteResponse, experimental: false, since: "0.6.0",
    }
    /// Files a thread in a section at a given place, or takes it out of its section.
    client_request ThreadSectionMove = "thread/section/move" {
        params: ThreadSectionMoveParams, response: ThreadSectionMoveResponse, experimental: false, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Adds an attachment to a thread (unless it has one of that type and key).
    client_request ThreadAttachmentAdd = "thread/attachment/add" {
        params: ThreadAttachmentAddParams, response: ThreadAttachmentAddResponse, experimental: false, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Lists a thread's attachments.
    client_request ThreadAttachmentList = "thread/attachment/list" {
        params: ThreadAttachmentListParams, response: ThreadAttachmentListResponse, experimental: false, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Finds the threads holding an attachment of a type and key.
    client_request ThreadAttachmentOwnerList = "thread/attachmentOwner/list" {
        params: ThreadAttachmentOwnerListParams, response: ThreadAttachmentOwnerListResponse, experimental: false, since: "0.6.0",
    }
    /// Removes an attachment from a thread.
    client_request ThreadAttachmentRemove = "thread/attachment/remove" {
        params: ThreadAttachmentRemoveParams, response: ThreadAttachmentRemoveResponse, experimental: false, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Puts user input at the end of a thread's queue.
    client_request ThreadQueueAdd = "thread/queue/add" {
        params: ThreadQueueAddParams, response: ThreadQueueAddResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Lists a thread's queued input.
    client_request ThreadQueueList = "thread/queue/list" {
        params: ThreadQueueListParams, response: ThreadQueueListResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Replaces a queued input's content.
    client_request ThreadQueueUpdate = "thread/queue/update" {
        params: ThreadQueueUpdateParams, response: ThreadQueueUpdateResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Drops a queued input.
    client_request ThreadQueueDelete = "thread/queue/delete" {
        params: ThreadQueueDeleteParams, response: ThreadQueueDeleteResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Puts a thread's queue in a new order.
    client_request ThreadQueueReorder = "thread/queue/reorder" {
        params: ThreadQueueReorderParams, response: ThreadQueueReorderResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Starts a queued input as a turn now.
    client_request ThreadQueueStart = "thread/queue/start" {
        params: ThreadQueueStartParams, response: ThreadQueueStartResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// A project was made, changed or deleted.
    server_notification ProjectChanged = "project/changed" {
        params: ProjectChangedNotification, experimental: false, since: "0.6.0",
    }
    /// A thread was filed under a project or taken out of one.
    server_notification ThreadProjectUpdated = "thread/project/updated" {
        params: ThreadProjectUpdatedNotification, experimental: false, since: "0.6.0",
    }
    /// A thread moved into, within or out of a section.
    server_notification ThreadSectionChanged = "thread/section/changed" {
        params: ThreadSectionChangedNotification, experimental: false, since: "0.6.0",
    }
    /// An attachment was added to a thread or removed.
    server_notification ThreadAttachmentUpdated = "thread/attachment/updated" {
        params: ThreadAttachmentUpdatedNotification, experimental: false, since: "0.6.0",
    }
    /// A thread's queue changed.
    server_notification ThreadQueueChanged = "thread/queue/changed" {
        params: ThreadQueueChangedNotification, experimental: false, since: "0.6.0",
    }

    // ---- plugins and marketplaces (0.6.0) ----

    /// Registers a marketplace: a folder of this machine, or a git repository cloned under the
    /// server's home.
    client_request MarketplaceAdd = "marketplace/add" {
        params: MarketplaceAddParams, response: MarketplaceAddResponse, experimental: false, since: "0.6.0",
    }
    /// Brings git marketplaces up to date with the branch or tag they follow.
    client_request MarketplaceUpgrade = "marketplace/upgrade" {
        params: MarketplaceUpgradeParams, response: MarketplaceUpgradeResponse, experimental: false, since: "0.6.0",
    }
    /// Lists the known marketplaces with all their plugins.
    client_request PluginList = "plugin/list" {
        params: PluginListParams, response: PluginListResponse, experimental: false, since: "0.6.0",
    }
    /// Finds the plugins whose name, description or keywords contain a term.
    client_request PluginSearch = "plugin/search" {
        params: PluginSearchParams, response: PluginSearchResponse, experimental: true, since: "0.6.0",
    }
    /// Reads one plugin: its summary, skills and MCP servers.
    client_request PluginRead = "plugin/read" {
        params: PluginReadParams, response: PluginReadResponse, experimental: false, since: "0.6.0",
    }
    /// Reads the text of one skill of a plugin.
    client_request PluginSkillRead = "plugin/skill/read" {
        params: PluginSkillReadParams, response: PluginSkillReadResponse, experimental: false, since: "0.6.0",
    }
    /// Installs a plugin of a marketplace: copies it under the server's home and enables it.
    client_request PluginInstall = "plugin/install" {
        params: PluginInstallParams, response: PluginInstallResponse, experimental: false, since: "0.6.0",
    }
    /// Uninstalls a plugin: deletes its copy and its settings.
    client_request PluginUninstall = "plugin/uninstall" {
        params: PluginUninstallParams, response: PluginUninstallResponse, experimental: false, since: "0.6.0",
    }
    /// Brings the installed plugins in line with their marketplaces.
    client_request PluginReconcile = "plugin/reconcile" {
        params: PluginReconcileParams, response: PluginReconcileResponse, experimental: false, since: "0.6.0",
    }
    /// Forgets a registered marketplace (and deletes its clone).
    client_request MarketplaceRemove = "marketplace/remove" {
        params: MarketplaceRemoveParams, response: MarketplaceRemoveResponse, experimental: false, since: "0.6.0",
    }

    // ---- migration from Codex and memory (0.6.0) ----

    /// Lists what of another agent's set-up (here: a Codex home) could be imported.
    client_request ExternalAgentConfigDetect = "externalAgentConfig/detect" {
        params: ExternalAgentConfigDetectParams, response: ExternalAgentConfigDetectResponse, experimental: false, since: "0.6.0",
    }
    /// Imports the chosen items; the work goes on after the answer and is reported by
    /// `externalAgentConfig/import/progress` and `externalAgentConfig/import/completed`.
    client_request ExternalAgentConfigImport = "externalAgentConfig/import" {
        params: ExternalAgentConfigImportParams, response: ExternalAgentConfigImportResponse, experimental: false, since: "0.6.0",
    }
    /// Adds an import done elsewhere to the history of imports.
    client_request ExternalAgentConfigImportRecordHistory = "externalAgentConfig/import/recordHistory" {
        params: ExternalAgentConfigImportHistoryRecordParams, response: ExternalAgentConfigImportHistoryRecordResponse, experimental: false, since: "0.6.0",
    }
    /// Reads the history of imports.
    client_request ExternalAgentConfigImportReadHistories = "externalAgentConfig/import/readHistories" {
        params: NoParams, response: ExternalAgentConfigImportHistoriesReadResponse, experimental: false, since: "0.6.0",
    }
    /// One kind of item of an import is done.
    server_notification ExternalAgentConfigImportProgress = "externalAgentConfig/import/progress" {
        params: ExternalAgentConfigImportProgressNotification, experimental: false, since: "0.6.0",
    }
    /// An import is over.
    server_notification ExternalAgentConfigImportCompleted = "externalAgentConfig/import/completed" {
        params: ExternalAgentConfigImportCompletedNotification, experimental: false, since: "0.6.0",
    }
    /// Turns a thread's part in memory on or off.
    client_request ThreadMemoryModeSet = "thread/memoryMode/set" {
        params: ThreadMemoryModeSetParams, response: ThreadMemoryModeSetResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Reads the memory summary as a thread sees it.
    client_request ThreadMemoryRead = "thread/memory/read" {
        params: ThreadMemoryReadParams, response: ThreadMemoryReadResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Says how many threads the memory summary was built from and whether it is ready.
    client_request MemoryStatus = "memory/status" {
        params: MemoryStatusParams, response: MemoryStatusResponse, experimental: true, since: "0.6.0",
    }
    /// Forgets the memory summary and what it was built from.
    client_request MemoryReset = "memory/reset" {
        params: NoParams, response: MemoryResetResponse, experimental: true, since: "0.6.0",
    }

    // ---- hooks that run (0.6.0) ----

    /// A lifecycle hook began to run.
    server_notification HookStarted = "hook/started" {
        params: HookStartedNotification, experimental: false, since: "0.6.0",
    }
    /// A lifecycle hook finished, with its outcome.
    server_notification HookCompleted = "hook/completed" {
        params: HookCompletedNotification, experimental: false, since: "0.6.0",
    }

    // ---- MCP OAuth sign-in (0.6.0) ----

    /// Starts an OAuth sign-in to a streamable-HTTP MCP server; answers the address to open in
    /// a browser, the end is reported by `mcpServer/oauthLogin/completed`.
    client_request McpServerOauthLogin = "mcpServer/oauth/login" {
        params: McpServerOauthLoginParams, response: McpServerOauthLoginResponse, experimental: false, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// An MCP server sign-in ended: tokens stored, or why not.
    server_notification McpServerOauthLoginCompleted = "mcpServer/oauthLogin/completed" {
        params: McpServerOauthLoginCompletedNotification, experimental: false, since: "0.6.0",
    }

    // ---- side samples, elicitation counters, environments (0.6.0) ----

    /// Asks the thread's model one question after the thread's conversation, without adding
    /// anything to the thread.
    client_request ThreadSample = "thread/sample" {
        params: ThreadSampleParams, response: ThreadSampleResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Stops a `thread/sample` of this connection.
    client_request ThreadSampleCancel = "thread/sample/cancel" {
        params: ThreadSampleCancelParams, response: ThreadSampleCancelResponse, experimental: true, since: "0.6.0",
    }
    /// A helper outside the server waits on the user for this thread: its time limits stop.
    client_request ThreadIncrementElicitation = "thread/increment_elicitation" {
        params: ThreadIncrementElicitationParams, response: ThreadIncrementElicitationResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Such a wait is over; the time limits run again once none is left.
    client_request ThreadDecrementElicitation = "thread/decrement_elicitation" {
        params: ThreadDecrementElicitationParams, response: ThreadDecrementElicitationResponse, experimental: true, since: "0.6.0",
        ordered_by: thread_id = "threadId",
    }
    /// Registers a remote execution server (refused here: only the local environment exists).
    client_request EnvironmentAdd = "environment/add" {
        params: EnvironmentAddParams, response: EnvironmentAddResponse, experimental: true, since: "0.6.0",
    }
    /// Describes an execution environment: its shell and working directory.
    client_request EnvironmentInfo = "environment/info" {
        params: EnvironmentInfoParams, response: EnvironmentInfoResponse, experimental: true, since: "0.6.0",
    }
    /// Says whether an execution environment can run commands now.
    client_request EnvironmentStatus = "environment/status" {
        params: EnvironmentStatusParams, response: EnvironmentStatusResponse, experimental: true, since: "0.6.0",
    }
    /// Has the approval reviewer model judge the thread's last injected command (refused: the
    /// reviewer is OpenAI's hosted auto-review model).
    client_request ThreadGuardianReview = "thread/guardianReview" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Overrules a denial of the approval reviewer model (refused, as `thread/guardianReview`).
    client_request ThreadApproveGuardianDeniedAction = "thread/approveGuardianDeniedAction" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: false, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Subscribes to an event stream of a hosted app (refused: hosted apps are OpenAI's).
    client_request McpServerEventStreamStart = "mcpServer/event/stream/start" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: OpenaiCloud,
    }
    /// Ends such a subscription (refused, as `mcpServer/event/stream/start`).
    client_request McpServerEventStreamStop = "mcpServer/event/stream/stop" {
        optional_params: UnavailableParams, response: UnavailableResponse, experimental: true, since: "0.6.0",
        unavailable: OpenaiCloud,
    }

    // ---- turn notifications (0.6.0) ----

    /// The model provider's rate limits, as its response headers gave them on a model call.
    server_notification AccountRateLimitsUpdated = "account/rateLimits/updated" {
        params: AccountRateLimitsUpdatedNotification, experimental: false, since: "0.6.0",
    }
    /// A model call of a turn was answered by another model than the one asked for.
    server_notification ModelRerouted = "model/rerouted" {
        params: ModelReroutedNotification, experimental: false, since: "0.6.0",
    }
    /// The change set of a running `fileChange` item was revised.
    server_notification FileChangePatchUpdated = "item/fileChange/patchUpdated" {
        params: FileChangePatchUpdatedNotification, experimental: false, since: "0.6.0",
    }
    /// Something the client or its configuration relies on is deprecated.
    server_notification DeprecationNotice = "deprecationNotice" {
        params: DeprecationNoticeNotification, experimental: false, since: "0.6.0",
    }

    // ---- model tools (0.6.0) ----

    /// More text of a `plan` item as the model's plan is written (a preview; the completed
    /// item is what counts).
    server_notification PlanDelta = "item/plan/delta" {
        params: PlanDeltaNotification, experimental: true, since: "0.6.0",
    }

    // ---- rollout maintenance (0.7.0) ----

    /// Starts a background pass that gzips the rollouts of cold threads (not loaded, untouched
    /// for a while); answers at once, before the pass does anything. Compressed rollouts read,
    /// resume, list, search and archive as before. A store without local rollout files does
    /// nothing.
    client_request RolloutCompress = "rollout/compress" {
        params: NoParams, response: RolloutCompressResponse, experimental: true, since: "0.7.0",
    }

    // ---- unified exec sessions (0.7.0) ----

    /// The model wrote to the standard input of a command that runs on as a session
    /// (`write_stdin`): the item, its session `processId` and the text written.
    server_notification CommandExecutionTerminalInteraction = "item/commandExecution/terminalInteraction" {
        params: TerminalInteractionNotification, experimental: false, since: "0.7.0",
    }
}
