//! The engine's side of the generated [`Handler`] trait: each implemented method hands its
//! typed params to the part of the engine that serves it and turns failures into JSON-RPC
//! errors.

use std::future::{Future, ready};
use std::sync::Arc;

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    ThreadArchive, ThreadFork, ThreadList, ThreadRead, ThreadResume, ThreadSetName, ThreadStart,
    ThreadUnarchive, TurnInterrupt, TurnStart, TurnSteer,
};
use agentwire_protocol::methods::{
    ThreadGoalClear, ThreadGoalGet, ThreadGoalSet, ThreadReadStateUpdate,
};
use agentwire_protocol::{
    AppsListParams, AppsListResponse, CancelLoginAccountParams, CancelLoginAccountResponse,
    CollaborationModeListParams, CollaborationModeListResponse, CommandExecParams,
    CommandExecResizeParams, CommandExecResizeResponse, CommandExecResponse,
    CommandExecTerminateParams, CommandExecTerminateResponse, CommandExecWriteParams,
    CommandExecWriteResponse, ConfigBatchWriteParams, ConfigReadParams, ConfigReadResponse,
    ConfigValueWriteParams, ConfigWriteResponse, FuzzyFileSearchParams, FuzzyFileSearchResponse,
    FuzzyFileSearchSessionStartParams, FuzzyFileSearchSessionStartResponse,
    FuzzyFileSearchSessionStopParams, FuzzyFileSearchSessionStopResponse,
    FuzzyFileSearchSessionUpdateParams, FuzzyFileSearchSessionUpdateResponse, GetAccountParams,
    GetAccountRateLimitsParams, GetAccountRateLimitsResponse, GetAccountResponse,
    GetAuthStatusParams, GetAuthStatusResponse, GetConversationSummaryParams,
    GetConversationSummaryResponse, GitDiffToRemoteParams, GitDiffToRemoteResponse,
    ListMcpServerStatusParams, ListMcpServerStatusResponse, LoginAccountParams,
    LoginAccountResponse, LogoutAccountResponse, McpResourceReadParams, McpResourceReadResponse,
    McpServerRefreshResponse, McpServerToolCallParams, McpServerToolCallResponse, ModelListParams,
    ModelListResponse, NoParams, ThreadArchiveParams, ThreadArchiveResponse, ThreadForkParams,
    ThreadForkResponse, ThreadListParams, ThreadListResponse, ThreadLoadedListParams,
    ThreadLoadedListResponse, ThreadReadParams, ThreadReadResponse, ThreadResumeParams,
    ThreadResumeResponse, ThreadSetNameParams, ThreadSetNameResponse, ThreadStartParams,
    ThreadStartResponse, ThreadUnarchiveParams, ThreadUnarchiveResponse, TurnInterruptParams,
    TurnInterruptResponse, TurnStartParams, TurnStartResponse, TurnSteerParams, TurnSteerResponse,
};
use agentwire_protocol::{
    BedrockCheckGovCloudRequirementsParams, BedrockCheckGovCloudRequirementsResponse,
    ConfigRequirementsReadResponse, HooksListParams, HooksListResponse, PluginInstalledParams,
    PluginInstalledResponse, SkillsConfigWriteParams, SkillsConfigWriteResponse,
    SkillsExtraRootsSetParams, SkillsExtraRootsSetResponse, SkillsListParams, SkillsListResponse,
    ThreadBackgroundTerminalsCleanParams, ThreadBackgroundTerminalsCleanResponse,
    ThreadBackgroundTerminalsListParams, ThreadBackgroundTerminalsListResponse,
    ThreadBackgroundTerminalsTerminateParams, ThreadBackgroundTerminalsTerminateResponse,
    ThreadGoalClearParams, ThreadGoalClearResponse, ThreadGoalGetParams, ThreadGoalGetResponse,
    ThreadGoalSetParams, ThreadGoalSetResponse, ThreadReadStateUpdateParams,
    ThreadReadStateUpdateResponse,
};
use agentwire_protocol::{
    FsCopyParams, FsCopyResponse, FsCreateDirectoryParams, FsCreateDirectoryResponse,
    FsGetMetadataParams, FsGetMetadataResponse, FsReadDirectoryParams, FsReadDirectoryResponse,
    FsReadFileParams, FsReadFileResponse, FsRemoveParams, FsRemoveResponse, FsUnwatchParams,
    FsUnwatchResponse, FsWatchParams, FsWatchResponse, FsWriteFileParams, FsWriteFileResponse,
};
use agentwire_runtime::{Handler, HandlerError, NotificationContext, RequestContext};

use crate::Engine;
use crate::threads::Threads;
use crate::threads::error::ThreadError;

/// The answer for `M`, with failures mapped to its error codes.
fn answer<M: Method, T>(
    result: Result<T, ThreadError>,
) -> impl Future<Output = Result<T, HandlerError>> + Send
where
    T: Send,
{
    ready(result.map_err(|e| e.into_handler(M::NAME)))
}

/// Runs `work`, a thread-store operation (it reads and writes rollouts and the SQLite index,
/// and may wait for the rollout committer), on tokio's blocking pool, so that no async worker
/// waits on the disk; its failure is mapped to `M`'s error codes.
pub(crate) async fn stored<M, T, W>(threads: Arc<Threads>, work: W) -> Result<T, HandlerError>
where
    M: Method,
    T: Send + 'static,
    W: FnOnce(&Threads) -> Result<T, ThreadError> + Send + 'static,
{
    blocking::<M, T, _>(move || work(&threads).map_err(|e| e.into_handler(M::NAME))).await
}

/// Runs `work`, which touches the disk and answers for `M` itself, on tokio's blocking pool. A
/// panic in `work` is resumed here, where the runtime answers it with -32603 as it does for any
/// handler.
pub(crate) async fn blocking<M, T, W>(work: W) -> Result<T, HandlerError>
where
    M: Method,
    T: Send + 'static,
    W: FnOnce() -> Result<T, HandlerError> + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(error) => match error.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(error) => Err(HandlerError::internal(format!("{}: {error}", M::NAME))),
        },
    }
}

impl Handler for Engine {
    fn initialize_response(
        &self,
        client: &agentwire_protocol::ClientInfo,
    ) -> agentwire_protocol::InitializeResponse {
        crate::initialize::response(client, &self.config.home)
    }

    fn connection_closed(&self, connection: agentwire_runtime::ConnectionId) {
        self.threads.subscribers.closed(connection);
    }

    fn initialized(
        &self,
        context: NotificationContext,
        _params: NoParams,
    ) -> impl Future<Output = ()> + Send {
        crate::config::rpc::send_warnings(self, &context);
        // turn notifications area: deprecated keys of the configuration.
        crate::deprecations::send(self, &context);
        ready(())
    }

    async fn thread_start(
        &self,
        context: RequestContext,
        params: ThreadStartParams,
    ) -> Result<ThreadStartResponse, HandlerError> {
        crate::workspace_rpc::enforce::<ThreadStart>(
            self,
            params.approval_policy.clone(),
            params.sandbox,
            params.model_provider.clone(),
        )
        .await?;
        crate::mcp::rpc::require::<ThreadStart>(self, &context).await?;
        let peer = context.peer.clone();
        let mut started =
            stored::<ThreadStart, _, _>(self.threads.clone(), move |t| t.start(&context, params))
                .await?;
        crate::thread_extras::decorate(&peer, std::slice::from_mut(&mut started.thread));
        Ok(started)
    }

    async fn thread_resume(
        &self,
        context: RequestContext,
        params: ThreadResumeParams,
    ) -> Result<ThreadResumeResponse, HandlerError> {
        crate::workspace_rpc::enforce::<ThreadResume>(
            self,
            params.approval_policy.clone(),
            params.sandbox,
            params.model_provider.clone(),
        )
        .await?;
        let peer = context.peer.clone();
        let mut resumed =
            stored::<ThreadResume, _, _>(self.threads.clone(), move |t| t.resume(&context, params))
                .await?;
        self.organisation
            .decorate(std::slice::from_mut(&mut resumed.thread));
        crate::thread_extras::decorate(&peer, std::slice::from_mut(&mut resumed.thread));
        Ok(resumed)
    }

    async fn thread_fork(
        &self,
        context: RequestContext,
        params: ThreadForkParams,
    ) -> Result<ThreadForkResponse, HandlerError> {
        crate::workspace_rpc::enforce::<ThreadFork>(
            self,
            params.approval_policy.clone(),
            params.sandbox,
            params.model_provider.clone(),
        )
        .await?;
        let peer = context.peer.clone();
        let mut forked =
            stored::<ThreadFork, _, _>(self.threads.clone(), move |t| t.fork(&context, params))
                .await?;
        crate::thread_extras::decorate(&peer, std::slice::from_mut(&mut forked.thread));
        Ok(forked)
    }

    fn thread_read(
        &self,
        context: RequestContext,
        params: ThreadReadParams,
    ) -> impl Future<Output = Result<ThreadReadResponse, HandlerError>> + Send {
        let organisation = self.organisation.clone();
        let read = stored::<ThreadRead, _, _>(self.threads.clone(), move |t| t.read(params));
        async move {
            let mut read = read.await?;
            organisation.decorate(std::slice::from_mut(&mut read.thread));
            crate::thread_extras::decorate(&context.peer, std::slice::from_mut(&mut read.thread));
            Ok(read)
        }
    }

    fn thread_list(
        &self,
        context: RequestContext,
        params: ThreadListParams,
    ) -> impl Future<Output = Result<ThreadListResponse, HandlerError>> + Send {
        // A page kept in memory is answered in place; any other goes to the blocking pool. A
        // listing of a section is resolved to the section's threads first.
        let by_section = crate::organisation::sections::by_section(&params);
        let kept = (!by_section)
            .then(|| self.threads.list_kept(&params))
            .flatten();
        let threads = self.threads.clone();
        let extras_threads = self.threads.clone();
        let organisation = self.organisation.clone();
        let sectioned =
            by_section.then(|| crate::organisation::sections::list_threads(self, params.clone()));
        async move {
            let mut listed = match (kept, sectioned) {
                (_, Some(sectioned)) => sectioned.await?,
                (Some(answer), None) => answer.map_err(|e| e.into_handler(ThreadList::NAME))?,
                (None, None) => {
                    stored::<ThreadList, _, _>(threads, move |t| t.list(params)).await?
                }
            };
            organisation.decorate(&mut listed.data);
            crate::thread_extras::decorate_list(&context.peer, &extras_threads, &mut listed).await;
            Ok(listed)
        }
    }

    fn thread_loaded_list(
        &self,
        _context: RequestContext,
        params: ThreadLoadedListParams,
    ) -> impl Future<Output = Result<ThreadLoadedListResponse, HandlerError>> + Send {
        ready(Ok(self.threads.loaded_list(params)))
    }

    fn thread_archive(
        &self,
        context: RequestContext,
        params: ThreadArchiveParams,
    ) -> impl Future<Output = Result<ThreadArchiveResponse, HandlerError>> + Send {
        stored::<ThreadArchive, _, _>(self.threads.clone(), move |t| t.archive(&context, params))
    }

    fn thread_unarchive(
        &self,
        context: RequestContext,
        params: ThreadUnarchiveParams,
    ) -> impl Future<Output = Result<ThreadUnarchiveResponse, HandlerError>> + Send {
        let organisation = self.organisation.clone();
        let unarchived = stored::<ThreadUnarchive, _, _>(self.threads.clone(), move |t| {
            t.unarchive(&context, params)
        });
        async move {
            let mut unarchived = unarchived.await?;
            organisation.decorate(std::slice::from_mut(&mut unarchived.thread));
            Ok(unarchived)
        }
    }

    fn thread_set_name(
        &self,
        context: RequestContext,
        params: ThreadSetNameParams,
    ) -> impl Future<Output = Result<ThreadSetNameResponse, HandlerError>> + Send {
        stored::<ThreadSetName, _, _>(self.threads.clone(), move |t| t.set_name(&context, params))
    }

    async fn turn_start(
        &self,
        context: RequestContext,
        params: TurnStartParams,
    ) -> Result<TurnStartResponse, HandlerError> {
        crate::workspace_rpc::enforce::<TurnStart>(
            self,
            params.approval_policy.clone(),
            params
                .sandbox_policy
                .as_ref()
                .and_then(crate::workspace_rpc::mode_of),
            None,
        )
        .await?;
        crate::mcp::rpc::require::<TurnStart>(self, &context).await?;
        let id = params.thread_id.clone();
        let claim =
            stored::<TurnStart, _, _>(self.threads.clone(), move |threads| threads.claim_turn(&id))
                .await?;
        answer::<TurnStart, _>(self.turns.start(&context, params, claim)).await
    }

    fn turn_steer(
        &self,
        _context: RequestContext,
        params: TurnSteerParams,
    ) -> impl Future<Output = Result<TurnSteerResponse, HandlerError>> + Send {
        let turns = self.turns.clone();
        async move {
            turns
                .steer_anywhere(params)
                .await
                .map_err(|e| e.into_handler(TurnSteer::NAME))
        }
    }

    fn turn_interrupt(
        &self,
        _context: RequestContext,
        params: TurnInterruptParams,
    ) -> impl Future<Output = Result<TurnInterruptResponse, HandlerError>> + Send {
        answer::<TurnInterrupt, _>(self.turns.interrupt(params))
    }

    fn model_list(
        &self,
        context: RequestContext,
        params: ModelListParams,
    ) -> impl Future<Output = Result<ModelListResponse, HandlerError>> + Send {
        crate::catalog::model_list(self, context, params)
    }

    fn collaboration_mode_list(
        &self,
        context: RequestContext,
        params: CollaborationModeListParams,
    ) -> impl Future<Output = Result<CollaborationModeListResponse, HandlerError>> + Send {
        crate::catalog::collaboration_mode_list(self, context, params)
    }

    fn app_list(
        &self,
        context: RequestContext,
        params: AppsListParams,
    ) -> impl Future<Output = Result<AppsListResponse, HandlerError>> + Send {
        crate::catalog::app_list(self, context, params)
    }

    fn config_read(
        &self,
        context: RequestContext,
        params: ConfigReadParams,
    ) -> impl Future<Output = Result<ConfigReadResponse, HandlerError>> + Send {
        crate::config::rpc::read(self, context, params)
    }

    fn config_value_write(
        &self,
        context: RequestContext,
        params: ConfigValueWriteParams,
    ) -> impl Future<Output = Result<ConfigWriteResponse, HandlerError>> + Send {
        crate::config::rpc::value_write(self, context, params)
    }

    fn config_batch_write(
        &self,
        context: RequestContext,
        params: ConfigBatchWriteParams,
    ) -> impl Future<Output = Result<ConfigWriteResponse, HandlerError>> + Send {
        crate::config::rpc::batch_write(self, context, params)
    }

    fn account_read(
        &self,
        context: RequestContext,
        params: GetAccountParams,
    ) -> impl Future<Output = Result<GetAccountResponse, HandlerError>> + Send {
        crate::accounts::read(self, context, params)
    }

    fn account_login_start(
        &self,
        context: RequestContext,
        params: LoginAccountParams,
    ) -> impl Future<Output = Result<LoginAccountResponse, HandlerError>> + Send {
        crate::accounts::login_start(self, context, params)
    }

    fn account_login_cancel(
        &self,
        context: RequestContext,
        params: CancelLoginAccountParams,
    ) -> impl Future<Output = Result<CancelLoginAccountResponse, HandlerError>> + Send {
        crate::accounts::login_cancel(self, context, params)
    }

    fn account_logout(
        &self,
        context: RequestContext,
        params: NoParams,
    ) -> impl Future<Output = Result<LogoutAccountResponse, HandlerError>> + Send {
        crate::accounts::logout(self, context, params)
    }

    fn account_rate_limits_read(
        &self,
        context: RequestContext,
        params: Option<GetAccountRateLimitsParams>,
    ) -> impl Future<Output = Result<GetAccountRateLimitsResponse, HandlerError>> + Send {
        crate::accounts::rate_limits_read(self, context, params)
    }

    fn mcp_server_status_list(
        &self,
        context: RequestContext,
        params: ListMcpServerStatusParams,
    ) -> impl Future<Output = Result<ListMcpServerStatusResponse, HandlerError>> + Send {
        crate::mcp_status::list(self, context, params)
    }

    fn mcp_server_tool_call(
        &self,
        context: RequestContext,
        params: McpServerToolCallParams,
    ) -> impl Future<Output = Result<McpServerToolCallResponse, HandlerError>> + Send {
        crate::mcp::rpc::tool_call(self, context, params)
    }

    fn mcp_server_resource_read(
        &self,
        context: RequestContext,
        params: McpResourceReadParams,
    ) -> impl Future<Output = Result<McpResourceReadResponse, HandlerError>> + Send {
        crate::mcp::rpc::resource_read(self, context, params)
    }

    fn mcp_server_reload(
        &self,
        context: RequestContext,
        _params: NoParams,
    ) -> impl Future<Output = Result<McpServerRefreshResponse, HandlerError>> + Send {
        crate::mcp::rpc::reload(self, context)
    }

    fn command_exec(
        &self,
        context: RequestContext,
        params: CommandExecParams,
    ) -> impl Future<Output = Result<CommandExecResponse, HandlerError>> + Send {
        crate::command_exec::exec(self, context, params)
    }

    fn fuzzy_file_search(
        &self,
        context: RequestContext,
        params: FuzzyFileSearchParams,
    ) -> impl Future<Output = Result<FuzzyFileSearchResponse, HandlerError>> + Send {
        crate::search::fuzzy_file_search(self, context, params)
    }

    fn fuzzy_file_search_session_start(
        &self,
        context: RequestContext,
        params: FuzzyFileSearchSessionStartParams,
    ) -> impl Future<Output = Result<FuzzyFileSearchSessionStartResponse, HandlerError>> + Send
    {
        crate::search::session_start(self, context, params)
    }

    fn fuzzy_file_search_session_update(
        &self,
        context: RequestContext,
        params: FuzzyFileSearchSessionUpdateParams,
    ) -> impl Future<Output = Result<FuzzyFileSearchSessionUpdateResponse, HandlerError>> + Send
    {
        crate::search::session_update(self, context, params)
    }

    fn fuzzy_file_search_session_stop(
        &self,
        context: RequestContext,
        params: FuzzyFileSearchSessionStopParams,
    ) -> impl Future<Output = Result<FuzzyFileSearchSessionStopResponse, HandlerError>> + Send {
        crate::search::session_stop(self, context, params)
    }

    fn get_conversation_summary(
        &self,
        context: RequestContext,
        params: GetConversationSummaryParams,
    ) -> impl Future<Output = Result<GetConversationSummaryResponse, HandlerError>> + Send {
        crate::legacy::get_conversation_summary(self, context, params)
    }

    fn get_auth_status(
        &self,
        context: RequestContext,
        params: GetAuthStatusParams,
    ) -> impl Future<Output = Result<GetAuthStatusResponse, HandlerError>> + Send {
        crate::accounts::get_auth_status(self, context, params)
    }

    fn git_diff_to_remote(
        &self,
        context: RequestContext,
        params: GitDiffToRemoteParams,
    ) -> impl Future<Output = Result<GitDiffToRemoteResponse, HandlerError>> + Send {
        crate::legacy::git_diff_to_remote(self, context, params)
    }

    fn command_exec_write(
        &self,
        context: RequestContext,
        params: CommandExecWriteParams,
    ) -> impl Future<Output = Result<CommandExecWriteResponse, HandlerError>> + Send {
        crate::command_exec::write(self, context, params)
    }

    fn command_exec_terminate(
        &self,
        context: RequestContext,
        params: CommandExecTerminateParams,
    ) -> impl Future<Output = Result<CommandExecTerminateResponse, HandlerError>> + Send {
        crate::command_exec::terminate(self, context, params)
    }

    fn thread_delete(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadDeleteParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadDeleteResponse, HandlerError>> + Send
    {
        let organisation = self.organisation.clone();
        let id = params.thread_id.clone();
        let deleted = crate::thread_surface::delete(self, context, params);
        async move {
            let deleted = deleted.await?;
            // The thread is gone: take it out of projects, sections and attachment owners.
            blocking::<agentwire_protocol::methods::ThreadDelete, _, _>(move || {
                organisation.forget(&id);
                Ok(())
            })
            .await?;
            Ok(deleted)
        }
    }

    fn thread_unsubscribe(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadUnsubscribeParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadUnsubscribeResponse, HandlerError>> + Send
    {
        crate::thread_surface::unsubscribe(self, context, params)
    }

    fn thread_metadata_update(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadMetadataUpdateParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadMetadataUpdateResponse, HandlerError>>
    + Send {
        crate::thread_surface::metadata_update(self, context, params)
    }

    fn thread_turns_list(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadTurnsListParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadTurnsListResponse, HandlerError>> + Send
    {
        crate::thread_surface::turns_list(self, context, params)
    }

    fn thread_items_list(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadItemsListParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadItemsListResponse, HandlerError>> + Send
    {
        crate::thread_surface::items_list(self, context, params)
    }

    fn thread_revert(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadRevertParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadRevertResponse, HandlerError>> + Send
    {
        crate::thread_surface::revert(self, context, params)
    }

    fn thread_shell_command(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadShellCommandParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadShellCommandResponse, HandlerError>> + Send
    {
        crate::thread_surface::shell_command(self, context, params)
    }

    fn thread_compact_start(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadCompactStartParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadCompactStartResponse, HandlerError>> + Send
    {
        crate::thread_surface::compact_start(self, context, params)
    }

    fn command_exec_resize(
        &self,
        context: RequestContext,
        params: CommandExecResizeParams,
    ) -> impl Future<Output = Result<CommandExecResizeResponse, HandlerError>> + Send {
        crate::command_exec::resize(self, context, params)
    }

    fn fs_read_file(
        &self,
        context: RequestContext,
        params: FsReadFileParams,
    ) -> impl Future<Output = Result<FsReadFileResponse, HandlerError>> + Send {
        crate::fs::read_file(self, context, params)
    }

    fn fs_write_file(
        &self,
        context: RequestContext,
        params: FsWriteFileParams,
    ) -> impl Future<Output = Result<FsWriteFileResponse, HandlerError>> + Send {
        crate::fs::write_file(self, context, params)
    }

    fn fs_create_directory(
        &self,
        context: RequestContext,
        params: FsCreateDirectoryParams,
    ) -> impl Future<Output = Result<FsCreateDirectoryResponse, HandlerError>> + Send {
        crate::fs::create_directory(self, context, params)
    }

    fn fs_get_metadata(
        &self,
        context: RequestContext,
        params: FsGetMetadataParams,
    ) -> impl Future<Output = Result<FsGetMetadataResponse, HandlerError>> + Send {
        crate::fs::get_metadata(self, context, params)
    }

    fn fs_read_directory(
        &self,
        context: RequestContext,
        params: FsReadDirectoryParams,
    ) -> impl Future<Output = Result<FsReadDirectoryResponse, HandlerError>> + Send {
        crate::fs::read_directory(self, context, params)
    }

    fn fs_remove(
        &self,
        context: RequestContext,
        params: FsRemoveParams,
    ) -> impl Future<Output = Result<FsRemoveResponse, HandlerError>> + Send {
        crate::fs::remove(self, context, params)
    }

    fn fs_copy(
        &self,
        context: RequestContext,
        params: FsCopyParams,
    ) -> impl Future<Output = Result<FsCopyResponse, HandlerError>> + Send {
        crate::fs::copy(self, context, params)
    }

    fn fs_watch(
        &self,
        context: RequestContext,
        params: FsWatchParams,
    ) -> impl Future<Output = Result<FsWatchResponse, HandlerError>> + Send {
        crate::fs::watch(self, context, params)
    }

    fn review_start(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ReviewStartParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ReviewStartResponse, HandlerError>> + Send
    {
        crate::turns::review::start(self, context, params)
    }

    fn fs_unwatch(
        &self,
        context: RequestContext,
        params: FsUnwatchParams,
    ) -> impl Future<Output = Result<FsUnwatchResponse, HandlerError>> + Send {
        crate::fs::unwatch(self, context, params)
    }

    fn thread_prepare_approved_plan(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadPrepareApprovedPlanParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::ThreadPrepareApprovedPlanResponse, HandlerError>,
    > + Send {
        stored::<agentwire_protocol::methods::ThreadPrepareApprovedPlan, _, _>(
            self.threads.clone(),
            move |t| t.prepare_approved_plan(params),
        )
    }

    fn mock_experimental_method(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::MockExperimentalMethodParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::MockExperimentalMethodResponse, HandlerError>,
    > + Send {
        ready(Ok(
            agentwire_protocol::MockExperimentalMethodResponse::builder()
                .maybe_echoed(params.value)
                .build(),
        ))
    }

    fn config_requirements_read(
        &self,
        _context: RequestContext,
        _params: NoParams,
    ) -> impl Future<Output = Result<ConfigRequirementsReadResponse, HandlerError>> + Send {
        crate::workspace_rpc::config_requirements_read(self)
    }

    fn skills_list(
        &self,
        _context: RequestContext,
        params: SkillsListParams,
    ) -> impl Future<Output = Result<SkillsListResponse, HandlerError>> + Send {
        crate::workspace_rpc::skills_list(self, params)
    }

    fn skills_extra_roots_set(
        &self,
        context: RequestContext,
        params: SkillsExtraRootsSetParams,
    ) -> impl Future<Output = Result<SkillsExtraRootsSetResponse, HandlerError>> + Send {
        ready(crate::workspace_rpc::skills_extra_roots_set(
            self, &context, params,
        ))
    }

    fn skills_config_write(
        &self,
        context: RequestContext,
        params: SkillsConfigWriteParams,
    ) -> impl Future<Output = Result<SkillsConfigWriteResponse, HandlerError>> + Send {
        crate::workspace_rpc::skills_config_write(self, context, params)
    }

    fn hooks_list(
        &self,
        _context: RequestContext,
        params: HooksListParams,
    ) -> impl Future<Output = Result<HooksListResponse, HandlerError>> + Send {
        crate::workspace_rpc::hooks_list(self, params)
    }

    fn plugin_installed(
        &self,
        _context: RequestContext,
        params: PluginInstalledParams,
    ) -> impl Future<Output = Result<PluginInstalledResponse, HandlerError>> + Send {
        crate::workspace_rpc::plugin_installed(self, params)
    }

    fn account_bedrock_check_gov_cloud_requirements(
        &self,
        _context: RequestContext,
        _params: BedrockCheckGovCloudRequirementsParams,
    ) -> impl Future<Output = Result<BedrockCheckGovCloudRequirementsResponse, HandlerError>> + Send
    {
        // No provider of this server signs in to Amazon Bedrock, so none resolves to GovCloud.
        ready(Ok(BedrockCheckGovCloudRequirementsResponse::builder()
            .is_gov_cloud(false)
            .should_warn(false)
            .build()))
    }

    fn thread_goal_get(
        &self,
        _context: RequestContext,
        params: ThreadGoalGetParams,
    ) -> impl Future<Output = Result<ThreadGoalGetResponse, HandlerError>> + Send {
        stored::<ThreadGoalGet, _, _>(self.threads.clone(), move |t| t.goal_get(params))
    }

    fn thread_goal_set(
        &self,
        context: RequestContext,
        params: ThreadGoalSetParams,
    ) -> impl Future<Output = Result<ThreadGoalSetResponse, HandlerError>> + Send {
        stored::<ThreadGoalSet, _, _>(self.threads.clone(), move |t| t.goal_set(&context, params))
    }

    fn thread_goal_clear(
        &self,
        context: RequestContext,
        params: ThreadGoalClearParams,
    ) -> impl Future<Output = Result<ThreadGoalClearResponse, HandlerError>> + Send {
        stored::<ThreadGoalClear, _, _>(self.threads.clone(), move |t| {
            t.goal_clear(&context, params)
        })
    }

    fn thread_read_state_update(
        &self,
        context: RequestContext,
        params: ThreadReadStateUpdateParams,
    ) -> impl Future<Output = Result<ThreadReadStateUpdateResponse, HandlerError>> + Send {
        stored::<ThreadReadStateUpdate, _, _>(self.threads.clone(), move |t| {
            t.read_state_update(&context, params)
        })
    }

    // The exec sessions of the thread (`exec_command` calls that run on): see
    // `background_terminals`.

    async fn thread_background_terminals_list(
        &self,
        _context: RequestContext,
        params: ThreadBackgroundTerminalsListParams,
    ) -> Result<ThreadBackgroundTerminalsListResponse, HandlerError> {
        crate::background_terminals::list(self, params).await
    }

    async fn thread_background_terminals_clean(
        &self,
        _context: RequestContext,
        params: ThreadBackgroundTerminalsCleanParams,
    ) -> Result<ThreadBackgroundTerminalsCleanResponse, HandlerError> {
        crate::background_terminals::clean(self, params).await
    }

    async fn thread_background_terminals_terminate(
        &self,
        _context: RequestContext,
        params: ThreadBackgroundTerminalsTerminateParams,
    ) -> Result<ThreadBackgroundTerminalsTerminateResponse, HandlerError> {
        crate::background_terminals::terminate(self, params).await
    }

    // ---- providers, features, settings and standalone processes (0.6.0) ----

    fn model_provider_list(
        &self,
        _context: RequestContext,
        _params: agentwire_protocol::ModelProviderListParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ModelProviderListResponse, HandlerError>> + Send
    {
        crate::providers_rpc::list(self)
    }

    fn model_provider_config_write(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ModelProviderConfigWriteParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::ModelProviderConfigWriteResponse, HandlerError>,
    > + Send {
        crate::providers_rpc::config_write(self, params)
    }

    fn model_provider_default_set(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ModelProviderDefaultSetParams,
    ) -> impl Future<Output = Result<ConfigWriteResponse, HandlerError>> + Send {
        crate::providers_rpc::default_set(self, params)
    }

    fn model_provider_capabilities_read(
        &self,
        _context: RequestContext,
        _params: agentwire_protocol::ModelProviderCapabilitiesReadParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::ModelProviderCapabilitiesReadResponse, HandlerError>,
    > + Send {
        ready(crate::providers_rpc::capabilities_read())
    }

    fn experimental_feature_list(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ExperimentalFeatureListParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::ExperimentalFeatureListResponse, HandlerError>,
    > + Send {
        crate::features::list(self, params)
    }

    fn experimental_feature_enablement_set(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ExperimentalFeatureEnablementSetParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::ExperimentalFeatureEnablementSetResponse, HandlerError>,
    > + Send {
        crate::features::enablement_set(self, params)
    }

    fn permission_profile_list(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::PermissionProfileListParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::PermissionProfileListResponse, HandlerError>,
    > + Send {
        crate::permission_profiles::list(self, params)
    }

    fn thread_settings_update(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadSettingsUpdateParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadSettingsUpdateResponse, HandlerError>>
    + Send {
        crate::thread_settings::thread_update(self, context, params)
    }

    fn turn_settings_update(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::TurnSettingsUpdateParams,
    ) -> impl Future<Output = Result<agentwire_protocol::TurnSettingsUpdateResponse, HandlerError>> + Send
    {
        crate::thread_settings::turn_update(self, params)
    }

    fn process_spawn(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ProcessSpawnParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ProcessSpawnResponse, HandlerError>> + Send
    {
        crate::command_exec::process::spawn(self, context, params)
    }

    fn process_write_stdin(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ProcessWriteStdinParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ProcessWriteStdinResponse, HandlerError>> + Send
    {
        crate::command_exec::process::write_stdin(self, context, params)
    }

    fn process_kill(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ProcessKillParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ProcessKillResponse, HandlerError>> + Send
    {
        crate::command_exec::process::kill(self, context, params)
    }

    fn process_resize_pty(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ProcessResizePtyParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ProcessResizePtyResponse, HandlerError>> + Send
    {
        crate::command_exec::process::resize_pty(self, context, params)
    }

    fn server_diagnostics(
        &self,
        context: RequestContext,
        _params: agentwire_protocol::ServerDiagnosticsParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ServerDiagnosticsResponse, HandlerError>> + Send
    {
        crate::diagnostics::read(self, context)
    }

    fn feedback_save(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::FeedbackSaveParams,
    ) -> impl Future<Output = Result<agentwire_protocol::FeedbackSaveResponse, HandlerError>> + Send
    {
        crate::feedback::save(self, params)
    }

    // ---- reading and searching thread history ----

    fn thread_items_read(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadItemsReadParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadItemsReadResponse, HandlerError>> + Send
    {
        stored::<agentwire_protocol::methods::ThreadItemsRead, _, _>(
            self.threads.clone(),
            move |t| t.items_read(params),
        )
    }

    fn thread_timeline_list(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadTimelineListParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadTimelineListResponse, HandlerError>> + Send
    {
        stored::<agentwire_protocol::methods::ThreadTimelineList, _, _>(
            self.threads.clone(),
            move |t| t.timeline_list(params),
        )
    }

    fn thread_search(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadSearchParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadSearchResponse, HandlerError>> + Send
    {
        crate::history_search::search(self, context, params, crate::history_search::Kind::Plain)
    }

    fn thread_search_stream(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadSearchParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadSearchResponse, HandlerError>> + Send
    {
        crate::history_search::search(self, context, params, crate::history_search::Kind::Stream)
    }

    fn thread_search_cancel(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadSearchCancelParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadSearchCancelResponse, HandlerError>> + Send
    {
        ready(Ok(crate::history_search::cancel(
            self,
            &context,
            params,
            crate::history_search::Kind::Plain,
        )))
    }

    fn thread_search_stream_cancel(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadSearchCancelParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadSearchCancelResponse, HandlerError>> + Send
    {
        ready(Ok(crate::history_search::cancel(
            self,
            &context,
            params,
            crate::history_search::Kind::Stream,
        )))
    }

    fn thread_search_occurrences(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadSearchOccurrencesParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::ThreadSearchOccurrencesResponse, HandlerError>,
    > + Send {
        crate::history_search::occurrences(self, params)
    }

    fn thread_inject_items(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadInjectItemsParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadInjectItemsResponse, HandlerError>> + Send
    {
        stored::<agentwire_protocol::methods::ThreadInjectItems, _, _>(
            self.threads.clone(),
            move |t| t.inject_items(params),
        )
    }

    // ---- organising threads: projects, sections, attachments, queued input (0.6.0) ----

    fn project_list(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ProjectListParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ProjectListResponse, HandlerError>> + Send
    {
        crate::organisation::projects::list(self, params)
    }

    fn project_read(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ProjectReadParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ProjectReadResponse, HandlerError>> + Send
    {
        crate::organisation::projects::read(self, params)
    }

    fn project_create(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ProjectCreateParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ProjectCreateResponse, HandlerError>> + Send
    {
        crate::organisation::projects::create(self, context, params)
    }

    fn project_import(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ProjectImportParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ProjectImportResponse, HandlerError>> + Send
    {
        crate::organisation::projects::import(self, context, params)
    }

    fn project_update(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ProjectUpdateParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ProjectUpdateResponse, HandlerError>> + Send
    {
        crate::organisation::projects::update(self, context, params)
    }

    fn project_move(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ProjectMoveParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ProjectMoveResponse, HandlerError>> + Send
    {
        crate::organisation::projects::move_project(self, context, params)
    }

    fn project_delete(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ProjectDeleteParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ProjectDeleteResponse, HandlerError>> + Send
    {
        crate::organisation::projects::delete(self, context, params)
    }

    fn thread_section_list(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadSectionListParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadSectionListResponse, HandlerError>> + Send
    {
        crate::organisation::sections::list(self, params)
    }

    fn thread_section_create(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadSectionCreateParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadSectionCreateResponse, HandlerError>> + Send
    {
        crate::organisation::sections::create(self, params)
    }

    fn thread_section_update(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadSectionUpdateParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadSectionUpdateResponse, HandlerError>> + Send
    {
        crate::organisation::sections::update(self, params)
    }

    fn thread_section_delete(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadSectionDeleteParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadSectionDeleteResponse, HandlerError>> + Send
    {
        crate::organisation::sections::delete(self, params)
    }

    fn thread_section_move(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadSectionMoveParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadSectionMoveResponse, HandlerError>> + Send
    {
        crate::organisation::sections::move_thread(self, context, params)
    }

    fn thread_attachment_add(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadAttachmentAddParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadAttachmentAddResponse, HandlerError>> + Send
    {
        crate::organisation::attachments::add(self, context, params)
    }

    fn thread_attachment_list(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadAttachmentListParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadAttachmentListResponse, HandlerError>>
    + Send {
        crate::organisation::attachments::list(self, params)
    }

    fn thread_attachment_owner_list(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadAttachmentOwnerListParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::ThreadAttachmentOwnerListResponse, HandlerError>,
    > + Send {
        crate::organisation::attachments::owners(self, params)
    }

    fn thread_attachment_remove(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadAttachmentRemoveParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::ThreadAttachmentRemoveResponse, HandlerError>,
    > + Send {
        crate::organisation::attachments::remove(self, context, params)
    }

    fn thread_queue_add(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadQueueAddParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadQueueAddResponse, HandlerError>> + Send
    {
        crate::organisation::queue::add(self, context, params)
    }

    fn thread_queue_list(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadQueueListParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadQueueListResponse, HandlerError>> + Send
    {
        crate::organisation::queue::list(self, params)
    }

    fn thread_queue_update(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadQueueUpdateParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadQueueUpdateResponse, HandlerError>> + Send
    {
        crate::organisation::queue::update(self, context, params)
    }

    fn thread_queue_delete(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadQueueDeleteParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadQueueDeleteResponse, HandlerError>> + Send
    {
        crate::organisation::queue::delete(self, context, params)
    }

    fn thread_queue_reorder(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadQueueReorderParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadQueueReorderResponse, HandlerError>> + Send
    {
        crate::organisation::queue::reorder(self, context, params)
    }

    fn thread_queue_start(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadQueueStartParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadQueueStartResponse, HandlerError>> + Send
    {
        crate::organisation::queue::start(self, context, params)
    }

    // ---- plugins and marketplaces ----

    fn marketplace_add(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::MarketplaceAddParams,
    ) -> impl Future<Output = Result<agentwire_protocol::MarketplaceAddResponse, HandlerError>> + Send
    {
        crate::plugins::rpc::marketplace_add(self, params)
    }

    fn marketplace_remove(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::MarketplaceRemoveParams,
    ) -> impl Future<Output = Result<agentwire_protocol::MarketplaceRemoveResponse, HandlerError>> + Send
    {
        crate::plugins::rpc::marketplace_remove(self, params)
    }

    fn marketplace_upgrade(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::MarketplaceUpgradeParams,
    ) -> impl Future<Output = Result<agentwire_protocol::MarketplaceUpgradeResponse, HandlerError>> + Send
    {
        crate::plugins::rpc::marketplace_upgrade(self, params)
    }

    fn plugin_list(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::PluginListParams,
    ) -> impl Future<Output = Result<agentwire_protocol::PluginListResponse, HandlerError>> + Send
    {
        crate::plugins::rpc::list(self, params)
    }

    fn plugin_search(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::PluginSearchParams,
    ) -> impl Future<Output = Result<agentwire_protocol::PluginSearchResponse, HandlerError>> + Send
    {
        crate::plugins::rpc::search(self, params)
    }

    fn plugin_read(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::PluginReadParams,
    ) -> impl Future<Output = Result<agentwire_protocol::PluginReadResponse, HandlerError>> + Send
    {
        crate::plugins::rpc::read(self, params)
    }

    fn plugin_skill_read(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::PluginSkillReadParams,
    ) -> impl Future<Output = Result<agentwire_protocol::PluginSkillReadResponse, HandlerError>> + Send
    {
        crate::plugins::rpc::skill_read(self, params)
    }

    fn plugin_install(
        &self,
        context: RequestContext,
        params: agentwire_protocol::PluginInstallParams,
    ) -> impl Future<Output = Result<agentwire_protocol::PluginInstallResponse, HandlerError>> + Send
    {
        crate::plugins::rpc::install(self, context, params)
    }

    fn plugin_uninstall(
        &self,
        context: RequestContext,
        params: agentwire_protocol::PluginUninstallParams,
    ) -> impl Future<Output = Result<agentwire_protocol::PluginUninstallResponse, HandlerError>> + Send
    {
        crate::plugins::rpc::uninstall(self, context, params)
    }

    fn plugin_reconcile(
        &self,
        context: RequestContext,
        params: agentwire_protocol::PluginReconcileParams,
    ) -> impl Future<Output = Result<agentwire_protocol::PluginReconcileResponse, HandlerError>> + Send
    {
        crate::plugins::rpc::reconcile(self, context, params)
    }

    // ---- migration from Codex and memory ----

    fn external_agent_config_detect(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ExternalAgentConfigDetectParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::ExternalAgentConfigDetectResponse, HandlerError>,
    > + Send {
        crate::codex_import::rpc::detect(self, params)
    }

    fn external_agent_config_import(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ExternalAgentConfigImportParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::ExternalAgentConfigImportResponse, HandlerError>,
    > + Send {
        crate::codex_import::rpc::import(self, context, params)
    }

    fn external_agent_config_import_record_history(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ExternalAgentConfigImportHistoryRecordParams,
    ) -> impl Future<
        Output = Result<
            agentwire_protocol::ExternalAgentConfigImportHistoryRecordResponse,
            HandlerError,
        >,
    > + Send {
        crate::codex_import::rpc::record_history(self, params)
    }

    fn external_agent_config_import_read_histories(
        &self,
        _context: RequestContext,
        _params: NoParams,
    ) -> impl Future<
        Output = Result<
            agentwire_protocol::ExternalAgentConfigImportHistoriesReadResponse,
            HandlerError,
        >,
    > + Send {
        crate::codex_import::rpc::read_histories(self)
    }

    fn thread_memory_mode_set(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadMemoryModeSetParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadMemoryModeSetResponse, HandlerError>> + Send
    {
        crate::memory::mode_set(self, params)
    }

    fn thread_memory_read(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadMemoryReadParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadMemoryReadResponse, HandlerError>> + Send
    {
        crate::memory::thread_read(self, params)
    }

    fn memory_status(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::MemoryStatusParams,
    ) -> impl Future<Output = Result<agentwire_protocol::MemoryStatusResponse, HandlerError>> + Send
    {
        crate::memory::status(self, params)
    }

    fn memory_reset(
        &self,
        _context: RequestContext,
        _params: NoParams,
    ) -> impl Future<Output = Result<agentwire_protocol::MemoryResetResponse, HandlerError>> + Send
    {
        crate::memory::reset_all(self)
    }

    // ---- rollout maintenance (0.7.0) ----

    fn rollout_compress(
        &self,
        _context: RequestContext,
        _params: NoParams,
    ) -> impl Future<Output = Result<agentwire_protocol::RolloutCompressResponse, HandlerError>> + Send
    {
        crate::rollout_compress::compress(self)
    }

    // ---- MCP OAuth sign-in (0.6.0) ----

    fn mcp_server_oauth_login(
        &self,
        context: RequestContext,
        params: agentwire_protocol::McpServerOauthLoginParams,
    ) -> impl Future<Output = Result<agentwire_protocol::McpServerOauthLoginResponse, HandlerError>> + Send
    {
        crate::mcp::oauth::login(self, context, params)
    }

    // ---- thread/sample, elicitation counters, environments (0.6.0) ----

    fn thread_sample(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadSampleParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadSampleResponse, HandlerError>> + Send
    {
        crate::thread_sample::sample(self, context, params)
    }

    fn thread_sample_cancel(
        &self,
        context: RequestContext,
        params: agentwire_protocol::ThreadSampleCancelParams,
    ) -> impl Future<Output = Result<agentwire_protocol::ThreadSampleCancelResponse, HandlerError>> + Send
    {
        ready(Ok(crate::thread_sample::cancel(self, &context, params)))
    }

    fn thread_increment_elicitation(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadIncrementElicitationParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::ThreadIncrementElicitationResponse, HandlerError>,
    > + Send {
        ready(crate::elicitation_count::increment(self, params))
    }

    fn thread_decrement_elicitation(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::ThreadDecrementElicitationParams,
    ) -> impl Future<
        Output = Result<agentwire_protocol::ThreadDecrementElicitationResponse, HandlerError>,
    > + Send {
        ready(crate::elicitation_count::decrement(self, params))
    }

    fn environment_add(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::EnvironmentAddParams,
    ) -> impl Future<Output = Result<agentwire_protocol::EnvironmentAddResponse, HandlerError>> + Send
    {
        ready(crate::environment_rpc::add(params))
    }

    fn environment_info(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::EnvironmentInfoParams,
    ) -> impl Future<Output = Result<agentwire_protocol::EnvironmentInfoResponse, HandlerError>> + Send
    {
        ready(crate::environment_rpc::info(params))
    }

    fn environment_status(
        &self,
        _context: RequestContext,
        params: agentwire_protocol::EnvironmentStatusParams,
    ) -> impl Future<Output = Result<agentwire_protocol::EnvironmentStatusResponse, HandlerError>> + Send
    {
        ready(Ok(crate::environment_rpc::status(params)))
    }
}
