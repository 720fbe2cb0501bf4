//! The one table of every method in the protocol.
//!
//! Each row declares a method once: marker type, wire name, direction, params type (`params:`, or
//! `optional_params:` when the member may be left out), response type (requests only),
//! experimental flag and the protocol version that added it; optionally the params member that
//! orders it (`ordered_by: field = "wireName"`, see [`Method::ORDERED_BY`]) and, for a server
//! request, the answer that declines it (`decline: |reason| expr`, see [`Decline`]). The schema bundle,
//! TypeScript unions, `meta.json`, the runtime's dispatch table and its validators are all derived
//! from this table by `agentwire-codegen`; no other list of methods exists.

use crate::method::{
    Decline, Direction, Method, MethodInfo, MethodVisitor, NoParams, Notification, OrderingKey,
    Request,
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
}
