//! The engine's side of the generated [`Handler`] trait: each implemented method hands its
//! typed params to the part of the engine that serves it, which turns failures into JSON-RPC
//! errors.
//!
//! This file is the routing table: one line per method ([`delegate!`]) naming the function
//! that serves it, and the few methods whose answer is assembled here. The thread lifecycle
//! requests that combine several parts (workspace rules, MCP requirements, the store on the
//! blocking pool, the organisation's decorations) are in [`thread_requests`]; the turn
//! requests in [`turn_requests`]. Disk work runs on the blocking pool through
//! [`crate::pool`].

// On the async path: no blocking call here (see clippy.toml); code that runs on the blocking
// pool or a thread of its own says so where it allows one.
#![deny(clippy::disallowed_methods)]

mod thread_requests;
mod turn_requests;

use std::future::{Future, ready};

use agentwire_files::{fs, search};
use agentwire_protocol::methods::EnvironmentInfo;
use agentwire_protocol::{
    AppsListParams, AppsListResponse, BedrockCheckGovCloudRequirementsParams,
    BedrockCheckGovCloudRequirementsResponse, CancelLoginAccountParams, CancelLoginAccountResponse,
    CollaborationModeListParams, CollaborationModeListResponse, CommandExecParams,
    CommandExecResizeParams, CommandExecResizeResponse, CommandExecResponse,
    CommandExecTerminateParams, CommandExecTerminateResponse, CommandExecWriteParams,
    CommandExecWriteResponse, ConfigBatchWriteParams, ConfigReadParams, ConfigReadResponse,
    ConfigRequirementsReadResponse, ConfigValueWriteParams, ConfigWriteResponse,
    EnvironmentAddParams, EnvironmentAddResponse, EnvironmentInfoParams, EnvironmentInfoResponse,
    EnvironmentStatusParams, EnvironmentStatusResponse, ExperimentalFeatureEnablementSetParams,
    ExperimentalFeatureEnablementSetResponse, ExperimentalFeatureListParams,
    ExperimentalFeatureListResponse, ExternalAgentConfigDetectParams,
    ExternalAgentConfigDetectResponse, ExternalAgentConfigImportHistoriesReadResponse,
    ExternalAgentConfigImportHistoryRecordParams, ExternalAgentConfigImportHistoryRecordResponse,
    ExternalAgentConfigImportParams, ExternalAgentConfigImportResponse, FeedbackSaveParams,
    FeedbackSaveResponse, FsCopyParams, FsCopyResponse, FsCreateDirectoryParams,
    FsCreateDirectoryResponse, FsGetMetadataParams, FsGetMetadataResponse, FsReadDirectoryParams,
    FsReadDirectoryResponse, FsReadFileParams, FsReadFileResponse, FsRemoveParams,
    FsRemoveResponse, FsUnwatchParams, FsUnwatchResponse, FsWatchParams, FsWatchResponse,
    FsWriteFileParams, FsWriteFileResponse, FuzzyFileSearchParams, FuzzyFileSearchResponse,
    FuzzyFileSearchSessionStartParams, FuzzyFileSearchSessionStartResponse,
    FuzzyFileSearchSessionStopParams, FuzzyFileSearchSessionStopResponse,
    FuzzyFileSearchSessionUpdateParams, FuzzyFileSearchSessionUpdateResponse, GetAccountParams,
    GetAccountRateLimitsParams, GetAccountRateLimitsResponse, GetAccountResponse,
    GetAuthStatusParams, GetAuthStatusResponse, GetConversationSummaryParams,
    GetConversationSummaryResponse, GitDiffToRemoteParams, GitDiffToRemoteResponse,
    HooksListParams, HooksListResponse, InitializeResponse, ListMcpServerStatusParams,
    ListMcpServerStatusResponse, LoginAccountParams, LoginAccountResponse, LogoutAccountResponse,
    MarketplaceAddParams, MarketplaceAddResponse, MarketplaceRemoveParams,
    MarketplaceRemoveResponse, MarketplaceUpgradeParams, MarketplaceUpgradeResponse,
    McpResourceReadParams, McpResourceReadResponse, McpServerOauthLoginParams,
    McpServerOauthLoginResponse, McpServerRefreshResponse, McpServerToolCallParams,
    McpServerToolCallResponse, MemoryResetResponse, MemoryStatusParams, MemoryStatusResponse,
    MockExperimentalMethodParams, MockExperimentalMethodResponse, ModelListParams,
    ModelListResponse, ModelProviderCapabilitiesReadParams, ModelProviderCapabilitiesReadResponse,
    ModelProviderConfigWriteParams, ModelProviderConfigWriteResponse,
    ModelProviderDefaultSetParams, ModelProviderListParams, ModelProviderListResponse, NoParams,
    PermissionProfileListParams, PermissionProfileListResponse, PluginInstallParams,
    PluginInstallResponse, PluginInstalledParams, PluginInstalledResponse, PluginListParams,
    PluginListResponse, PluginReadParams, PluginReadResponse, PluginReconcileParams,
    PluginReconcileResponse, PluginSearchParams, PluginSearchResponse, PluginSkillReadParams,
    PluginSkillReadResponse, PluginUninstallParams, PluginUninstallResponse, ProcessKillParams,
    ProcessKillResponse, ProcessResizePtyParams, ProcessResizePtyResponse, ProcessSpawnParams,
    ProcessSpawnResponse, ProcessWriteStdinParams, ProcessWriteStdinResponse, ProjectCreateParams,
    ProjectCreateResponse, ProjectDeleteParams, ProjectDeleteResponse, ProjectImportParams,
    ProjectImportResponse, ProjectListParams, ProjectListResponse, ProjectMoveParams,
    ProjectMoveResponse, ProjectReadParams, ProjectReadResponse, ProjectUpdateParams,
    ProjectUpdateResponse, ReviewStartParams, ReviewStartResponse, RolloutCompressResponse,
    ServerDiagnosticsParams, ServerDiagnosticsResponse, SkillsConfigWriteParams,
    SkillsConfigWriteResponse, SkillsExtraRootsSetParams, SkillsExtraRootsSetResponse,
    SkillsListParams, SkillsListResponse, ThreadArchiveParams, ThreadArchiveResponse,
    ThreadAttachmentAddParams, ThreadAttachmentAddResponse, ThreadAttachmentListParams,
    ThreadAttachmentListResponse, ThreadAttachmentOwnerListParams,
    ThreadAttachmentOwnerListResponse, ThreadAttachmentRemoveParams,
    ThreadAttachmentRemoveResponse, ThreadBackgroundTerminalsCleanParams,
    ThreadBackgroundTerminalsCleanResponse, ThreadBackgroundTerminalsListParams,
    ThreadBackgroundTerminalsListResponse, ThreadBackgroundTerminalsTerminateParams,
    ThreadBackgroundTerminalsTerminateResponse, ThreadCompactStartParams,
    ThreadCompactStartResponse, ThreadDecrementElicitationParams,
    ThreadDecrementElicitationResponse, ThreadDeleteParams, ThreadDeleteResponse, ThreadForkParams,
    ThreadForkResponse, ThreadGoalClearParams, ThreadGoalClearResponse, ThreadGoalGetParams,
    ThreadGoalGetResponse, ThreadGoalSetParams, ThreadGoalSetResponse,
    ThreadIncrementElicitationParams, ThreadIncrementElicitationResponse, ThreadInjectItemsParams,
    ThreadInjectItemsResponse, ThreadItemsListParams, ThreadItemsListResponse,
    ThreadItemsReadParams, ThreadItemsReadResponse, ThreadListParams, ThreadListResponse,
    ThreadLoadedListParams, ThreadLoadedListResponse, ThreadMemoryModeSetParams,
    ThreadMemoryModeSetResponse, ThreadMemoryReadParams, ThreadMemoryReadResponse,
    ThreadMetadataUpdateParams, ThreadMetadataUpdateResponse, ThreadPrepareApprovedPlanParams,
    ThreadPrepareApprovedPlanResponse, ThreadQueueAddParams, ThreadQueueAddResponse,
    ThreadQueueDeleteParams, ThreadQueueDeleteResponse, ThreadQueueListParams,
    ThreadQueueListResponse, ThreadQueueReorderParams, ThreadQueueReorderResponse,
    ThreadQueueStartParams, ThreadQueueStartResponse, ThreadQueueUpdateParams,
    ThreadQueueUpdateResponse, ThreadReadParams, ThreadReadResponse, ThreadReadStateUpdateParams,
    ThreadReadStateUpdateResponse, ThreadResumeParams, ThreadResumeResponse, ThreadRevertParams,
    ThreadRevertResponse, ThreadSampleCancelParams, ThreadSampleCancelResponse, ThreadSampleParams,
    ThreadSampleResponse, ThreadSearchCancelParams, ThreadSearchCancelResponse,
    ThreadSearchOccurrencesParams, ThreadSearchOccurrencesResponse, ThreadSearchParams,
    ThreadSearchResponse, ThreadSectionCreateParams, ThreadSectionCreateResponse,
    ThreadSectionDeleteParams, ThreadSectionDeleteResponse, ThreadSectionListParams,
    ThreadSectionListResponse, ThreadSectionMoveParams, ThreadSectionMoveResponse,
    ThreadSectionUpdateParams, ThreadSectionUpdateResponse, ThreadSetNameParams,
    ThreadSetNameResponse, ThreadSettingsUpdateParams, ThreadSettingsUpdateResponse,
    ThreadShellCommandParams, ThreadShellCommandResponse, ThreadStartParams, ThreadStartResponse,
    ThreadTimelineListParams, ThreadTimelineListResponse, ThreadTurnsListParams,
    ThreadTurnsListResponse, ThreadUnarchiveParams, ThreadUnarchiveResponse,
    ThreadUnsubscribeParams, ThreadUnsubscribeResponse, TurnInterruptParams, TurnInterruptResponse,
    TurnSettingsUpdateParams, TurnSettingsUpdateResponse, TurnStartParams, TurnStartResponse,
    TurnSteerParams, TurnSteerResponse,
};
use agentwire_runtime::{Handler, HandlerError, NotificationContext, RequestContext};

use crate::{
    Engine, accounts, background_terminals, catalog, codex_import, command_exec, config_rpc,
    diagnostics, features, feedback, history_search, legacy, mcp_rpc, mcp_status, memory,
    organisation, permission_profiles, plugins, providers_rpc, rollout_compress, thread_sample,
    thread_settings, thread_surface, turns, workspace_rpc,
};

/// Writes the `Handler` methods that hand their params to the function serving them, without
/// the trait's signature written out for each: the entry
/// `fn name(context, params: Params) -> Response = area::serve(context, params);` is the
/// method `name` answering with `area::serve(self, context, params)` (an argument named with a
/// leading `_` is not passed on). An area that serves with parts of the engine rather than the
/// whole of it names the fields holding them: `= area::serve[a, b](context, params);` answers
/// with `area::serve(&self.a, &self.b, context, params)`.
macro_rules! delegate {
    ($(
        fn $name:ident($context:ident, $params:ident: $p:ty $(,)?) -> $r:ty
            = $($segment:ident)::+ $([$($field:ident),+])? ($($arg:ident),*);
    )*) => {
        $(
            fn $name(
                &self,
                $context: RequestContext,
                $params: $p,
            ) -> impl Future<Output = Result<$r, HandlerError>> + Send {
                delegate!(@call ($($segment)::+) self ($($($field),+)?) ($($arg),*))
            }
        )*
    };
    // What the function serves with: the engine, or the parts of it named in brackets.
    (@call ($($segment:ident)::+) $engine:ident () ($($arg:ident),*)) => {
        $($segment)::+($engine $(, $arg)*)
    };
    (@call ($($segment:ident)::+) $engine:ident ($($field:ident),+) ($($arg:ident),*)) => {
        $($segment)::+($(&$engine.$field,)+ $($arg),*)
    };
}

impl Handler for Engine {
    fn initialize_response(&self, client: &agentwire_protocol::ClientInfo) -> InitializeResponse {
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
        // Blocking by design, not on the blocking pool: messages start in arrival order but do
        // not wait for each other, so only work done here before the first `.await` (on the
        // stdio server: before the next line is read) reaches the client ahead of the answers
        // to its next requests, where `tests/e2e/config.rs` looks for the warnings. It stats and
        // reads the configuration files once per connection (`agentwire_config::Store::effective`).
        config_rpc::send_warnings(&self.config_store, &context);
        // turn notifications area: deprecated keys of the configuration.
        crate::deprecations::send(&self.config_store, &context);
        ready(())
    }

    fn mock_experimental_method(
        &self,
        _context: RequestContext,
        params: MockExperimentalMethodParams,
    ) -> impl Future<Output = Result<MockExperimentalMethodResponse, HandlerError>> + Send {
        ready(Ok(MockExperimentalMethodResponse::builder()
            .maybe_echoed(params.value)
            .build()))
    }

    fn skills_extra_roots_set(
        &self,
        context: RequestContext,
        params: SkillsExtraRootsSetParams,
    ) -> impl Future<Output = Result<SkillsExtraRootsSetResponse, HandlerError>> + Send {
        ready(workspace_rpc::skills_extra_roots_set(
            self, &context, params,
        ))
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

    fn model_provider_capabilities_read(
        &self,
        _context: RequestContext,
        _params: ModelProviderCapabilitiesReadParams,
    ) -> impl Future<Output = Result<ModelProviderCapabilitiesReadResponse, HandlerError>> + Send
    {
        ready(providers_rpc::capabilities_read())
    }

    fn thread_search(
        &self,
        context: RequestContext,
        params: ThreadSearchParams,
    ) -> impl Future<Output = Result<ThreadSearchResponse, HandlerError>> + Send {
        history_search::search(
            &self.threads,
            &self.history_search,
            context,
            params,
            history_search::Kind::Plain,
        )
    }

    fn thread_search_stream(
        &self,
        context: RequestContext,
        params: ThreadSearchParams,
    ) -> impl Future<Output = Result<ThreadSearchResponse, HandlerError>> + Send {
        history_search::search(
            &self.threads,
            &self.history_search,
            context,
            params,
            history_search::Kind::Stream,
        )
    }

    fn thread_search_cancel(
        &self,
        context: RequestContext,
        params: ThreadSearchCancelParams,
    ) -> impl Future<Output = Result<ThreadSearchCancelResponse, HandlerError>> + Send {
        ready(Ok(history_search::cancel(
            &self.history_search,
            &context,
            params,
            history_search::Kind::Plain,
        )))
    }

    fn thread_search_stream_cancel(
        &self,
        context: RequestContext,
        params: ThreadSearchCancelParams,
    ) -> impl Future<Output = Result<ThreadSearchCancelResponse, HandlerError>> + Send {
        ready(Ok(history_search::cancel(
            &self.history_search,
            &context,
            params,
            history_search::Kind::Stream,
        )))
    }

    fn thread_sample_cancel(
        &self,
        context: RequestContext,
        params: ThreadSampleCancelParams,
    ) -> impl Future<Output = Result<ThreadSampleCancelResponse, HandlerError>> + Send {
        ready(Ok(thread_sample::cancel(&self.samples, &context, params)))
    }

    fn thread_increment_elicitation(
        &self,
        _context: RequestContext,
        params: ThreadIncrementElicitationParams,
    ) -> impl Future<Output = Result<ThreadIncrementElicitationResponse, HandlerError>> + Send {
        ready(crate::elicitation_count::increment(
            &self.threads,
            &self.elicitations,
            params,
        ))
    }

    fn thread_decrement_elicitation(
        &self,
        _context: RequestContext,
        params: ThreadDecrementElicitationParams,
    ) -> impl Future<Output = Result<ThreadDecrementElicitationResponse, HandlerError>> + Send {
        ready(crate::elicitation_count::decrement(
            &self.threads,
            &self.elicitations,
            params,
        ))
    }

    fn environment_add(
        &self,
        _context: RequestContext,
        params: EnvironmentAddParams,
    ) -> impl Future<Output = Result<EnvironmentAddResponse, HandlerError>> + Send {
        ready(crate::environment_rpc::add(params))
    }

    fn environment_info(
        &self,
        _context: RequestContext,
        params: EnvironmentInfoParams,
    ) -> impl Future<Output = Result<EnvironmentInfoResponse, HandlerError>> + Send {
        // It looks for the shell in the `PATH` folders: on the blocking pool.
        crate::pool::blocking::<EnvironmentInfo, _, _>(move || crate::environment_rpc::info(params))
    }

    fn environment_status(
        &self,
        _context: RequestContext,
        params: EnvironmentStatusParams,
    ) -> impl Future<Output = Result<EnvironmentStatusResponse, HandlerError>> + Send {
        ready(Ok(crate::environment_rpc::status(params)))
    }

    delegate! {
        fn thread_start(context, params: ThreadStartParams) -> ThreadStartResponse
            = thread_requests::start(context, params);
        fn thread_resume(context, params: ThreadResumeParams) -> ThreadResumeResponse
            = thread_requests::resume(context, params);
        fn thread_fork(context, params: ThreadForkParams) -> ThreadForkResponse
            = thread_requests::fork(context, params);
        fn thread_read(context, params: ThreadReadParams) -> ThreadReadResponse
            = thread_requests::read(context, params);
        fn thread_list(context, params: ThreadListParams) -> ThreadListResponse
            = thread_requests::list(context, params);
        fn thread_loaded_list(_context, params: ThreadLoadedListParams) -> ThreadLoadedListResponse
            = thread_requests::loaded_list(params);
        fn thread_archive(context, params: ThreadArchiveParams) -> ThreadArchiveResponse
            = thread_requests::archive(context, params);
        fn thread_unarchive(context, params: ThreadUnarchiveParams) -> ThreadUnarchiveResponse
            = thread_requests::unarchive(context, params);
        fn thread_set_name(context, params: ThreadSetNameParams) -> ThreadSetNameResponse
            = thread_requests::set_name(context, params);
        fn turn_start(context, params: TurnStartParams) -> TurnStartResponse
            = turn_requests::start(context, params);
        fn turn_steer(_context, params: TurnSteerParams) -> TurnSteerResponse
            = turn_requests::steer(params);
        fn turn_interrupt(_context, params: TurnInterruptParams) -> TurnInterruptResponse
            = turn_requests::interrupt(params);
        fn model_list(context, params: ModelListParams) -> ModelListResponse
            = catalog::model_list(context, params);
        fn collaboration_mode_list(
            context,
            params: CollaborationModeListParams,
        ) -> CollaborationModeListResponse
            = catalog::collaboration_mode_list(context, params);
        fn app_list(context, params: AppsListParams) -> AppsListResponse
            = catalog::app_list(context, params);
        fn config_read(context, params: ConfigReadParams) -> ConfigReadResponse
            = config_rpc::read[config_store](context, params);
        fn config_value_write(context, params: ConfigValueWriteParams) -> ConfigWriteResponse
            = config_rpc::value_write[config_store](context, params);
        fn config_batch_write(context, params: ConfigBatchWriteParams) -> ConfigWriteResponse
            = config_rpc::batch_write[config_store](context, params);
        fn account_read(context, params: GetAccountParams) -> GetAccountResponse
            = accounts::read(context, params);
        fn account_login_start(context, params: LoginAccountParams) -> LoginAccountResponse
            = accounts::login_start(context, params);
        fn account_login_cancel(
            context,
            params: CancelLoginAccountParams,
        ) -> CancelLoginAccountResponse
            = accounts::login_cancel(context, params);
        fn account_logout(context, params: NoParams) -> LogoutAccountResponse
            = accounts::logout(context, params);
        fn account_rate_limits_read(
            context,
            params: Option<GetAccountRateLimitsParams>,
        ) -> GetAccountRateLimitsResponse
            = accounts::rate_limits_read(context, params);
        fn mcp_server_status_list(
            context,
            params: ListMcpServerStatusParams,
        ) -> ListMcpServerStatusResponse
            = mcp_status::list(context, params);
        fn mcp_server_tool_call(
            context,
            params: McpServerToolCallParams,
        ) -> McpServerToolCallResponse
            = mcp_rpc::tool_call(context, params);
        fn mcp_server_resource_read(
            context,
            params: McpResourceReadParams,
        ) -> McpResourceReadResponse
            = mcp_rpc::resource_read(context, params);
        fn mcp_server_reload(context, _params: NoParams) -> McpServerRefreshResponse
            = mcp_rpc::reload(context);
        fn command_exec(context, params: CommandExecParams) -> CommandExecResponse
            = command_exec::exec(context, params);
        fn fuzzy_file_search(context, params: FuzzyFileSearchParams) -> FuzzyFileSearchResponse
            = search::fuzzy_file_search[search](context, params);
        fn fuzzy_file_search_session_start(
            context,
            params: FuzzyFileSearchSessionStartParams,
        ) -> FuzzyFileSearchSessionStartResponse
            = search::session_start[search](context, params);
        fn fuzzy_file_search_session_update(
            context,
            params: FuzzyFileSearchSessionUpdateParams,
        ) -> FuzzyFileSearchSessionUpdateResponse
            = search::session_update[search](context, params);
        fn fuzzy_file_search_session_stop(
            context,
            params: FuzzyFileSearchSessionStopParams,
        ) -> FuzzyFileSearchSessionStopResponse
            = search::session_stop[search](context, params);
        fn get_conversation_summary(
            context,
            params: GetConversationSummaryParams,
        ) -> GetConversationSummaryResponse
            = legacy::get_conversation_summary(context, params);
        fn get_auth_status(context, params: GetAuthStatusParams) -> GetAuthStatusResponse
            = accounts::get_auth_status(context, params);
        fn git_diff_to_remote(context, params: GitDiffToRemoteParams) -> GitDiffToRemoteResponse
            = legacy::git_diff_to_remote(context, params);
        fn command_exec_write(context, params: CommandExecWriteParams) -> CommandExecWriteResponse
            = command_exec::write(context, params);
        fn command_exec_terminate(
            context,
            params: CommandExecTerminateParams,
        ) -> CommandExecTerminateResponse
            = command_exec::terminate(context, params);
        fn thread_delete(context, params: ThreadDeleteParams) -> ThreadDeleteResponse
            = thread_requests::delete(context, params);
        fn thread_unsubscribe(context, params: ThreadUnsubscribeParams) -> ThreadUnsubscribeResponse
            = thread_surface::unsubscribe(context, params);
        fn thread_metadata_update(
            context,
            params: ThreadMetadataUpdateParams,
        ) -> ThreadMetadataUpdateResponse
            = thread_surface::metadata_update(context, params);
        fn thread_turns_list(context, params: ThreadTurnsListParams) -> ThreadTurnsListResponse
            = thread_surface::turns_list(context, params);
        fn thread_items_list(context, params: ThreadItemsListParams) -> ThreadItemsListResponse
            = thread_surface::items_list(context, params);
        fn thread_revert(context, params: ThreadRevertParams) -> ThreadRevertResponse
            = thread_surface::revert(context, params);
        fn thread_shell_command(
            context,
            params: ThreadShellCommandParams,
        ) -> ThreadShellCommandResponse
            = thread_surface::shell_command(context, params);
        fn thread_compact_start(
            context,
            params: ThreadCompactStartParams,
        ) -> ThreadCompactStartResponse
            = thread_surface::compact_start(context, params);
        fn command_exec_resize(
            context,
            params: CommandExecResizeParams,
        ) -> CommandExecResizeResponse
            = command_exec::resize(context, params);
        fn fs_read_file(context, params: FsReadFileParams) -> FsReadFileResponse
            = fs::read_file[fs](context, params);
        fn fs_write_file(context, params: FsWriteFileParams) -> FsWriteFileResponse
            = fs::write_file[fs](context, params);
        fn fs_create_directory(
            context,
            params: FsCreateDirectoryParams,
        ) -> FsCreateDirectoryResponse
            = fs::create_directory[fs](context, params);
        fn fs_get_metadata(context, params: FsGetMetadataParams) -> FsGetMetadataResponse
            = fs::get_metadata[fs](context, params);
        fn fs_read_directory(context, params: FsReadDirectoryParams) -> FsReadDirectoryResponse
            = fs::read_directory[fs](context, params);
        fn fs_remove(context, params: FsRemoveParams) -> FsRemoveResponse
            = fs::remove[fs](context, params);
        fn fs_copy(context, params: FsCopyParams) -> FsCopyResponse = fs::copy[fs](context, params);
        fn fs_watch(context, params: FsWatchParams) -> FsWatchResponse = fs::watch[fs](context, params);
        fn review_start(context, params: ReviewStartParams) -> ReviewStartResponse
            = turns::review::start(context, params);
        fn fs_unwatch(context, params: FsUnwatchParams) -> FsUnwatchResponse
            = fs::unwatch[fs](context, params);
        fn thread_prepare_approved_plan(
            _context,
            params: ThreadPrepareApprovedPlanParams,
        ) -> ThreadPrepareApprovedPlanResponse
            = thread_requests::prepare_approved_plan(params);
        fn config_requirements_read(_context, _params: NoParams) -> ConfigRequirementsReadResponse
            = workspace_rpc::config_requirements_read();
        fn skills_list(_context, params: SkillsListParams) -> SkillsListResponse
            = workspace_rpc::skills_list(params);
        fn skills_config_write(
            context,
            params: SkillsConfigWriteParams,
        ) -> SkillsConfigWriteResponse
            = workspace_rpc::skills_config_write(context, params);
        fn hooks_list(_context, params: HooksListParams) -> HooksListResponse
            = workspace_rpc::hooks_list(params);
        fn plugin_installed(_context, params: PluginInstalledParams) -> PluginInstalledResponse
            = workspace_rpc::plugin_installed(params);
        fn thread_goal_get(_context, params: ThreadGoalGetParams) -> ThreadGoalGetResponse
            = thread_requests::goal_get(params);
        fn thread_goal_set(context, params: ThreadGoalSetParams) -> ThreadGoalSetResponse
            = thread_requests::goal_set(context, params);
        fn thread_goal_clear(context, params: ThreadGoalClearParams) -> ThreadGoalClearResponse
            = thread_requests::goal_clear(context, params);
        fn thread_read_state_update(
            context,
            params: ThreadReadStateUpdateParams,
        ) -> ThreadReadStateUpdateResponse
            = thread_requests::read_state_update(context, params);

        // The exec sessions of the thread (`exec_command` calls that run on): see
        // `background_terminals`.
        fn thread_background_terminals_list(
            _context,
            params: ThreadBackgroundTerminalsListParams,
        ) -> ThreadBackgroundTerminalsListResponse
            = background_terminals::list(params);
        fn thread_background_terminals_clean(
            _context,
            params: ThreadBackgroundTerminalsCleanParams,
        ) -> ThreadBackgroundTerminalsCleanResponse
            = background_terminals::clean(params);
        fn thread_background_terminals_terminate(
            _context,
            params: ThreadBackgroundTerminalsTerminateParams,
        ) -> ThreadBackgroundTerminalsTerminateResponse
            = background_terminals::terminate(params);

        // ---- providers, features, settings and standalone processes (0.6.0) ----
        fn model_provider_list(
            _context,
            _params: ModelProviderListParams,
        ) -> ModelProviderListResponse
            = providers_rpc::list();
        fn model_provider_config_write(
            _context,
            params: ModelProviderConfigWriteParams,
        ) -> ModelProviderConfigWriteResponse
            = providers_rpc::config_write(params);
        fn model_provider_default_set(
            _context,
            params: ModelProviderDefaultSetParams,
        ) -> ConfigWriteResponse
            = providers_rpc::default_set(params);
        fn experimental_feature_list(
            _context,
            params: ExperimentalFeatureListParams,
        ) -> ExperimentalFeatureListResponse
            = features::list[config_store, threads](params);
        fn experimental_feature_enablement_set(
            _context,
            params: ExperimentalFeatureEnablementSetParams,
        ) -> ExperimentalFeatureEnablementSetResponse
            = features::enablement_set[config_store](params);
        fn permission_profile_list(
            _context,
            params: PermissionProfileListParams,
        ) -> PermissionProfileListResponse
            = permission_profiles::list(params);
        fn thread_settings_update(
            context,
            params: ThreadSettingsUpdateParams,
        ) -> ThreadSettingsUpdateResponse
            = thread_settings::thread_update(context, params);
        fn turn_settings_update(
            _context,
            params: TurnSettingsUpdateParams,
        ) -> TurnSettingsUpdateResponse
            = thread_settings::turn_update(params);
        fn process_spawn(context, params: ProcessSpawnParams) -> ProcessSpawnResponse
            = command_exec::process::spawn(context, params);
        fn process_write_stdin(
            context,
            params: ProcessWriteStdinParams,
        ) -> ProcessWriteStdinResponse
            = command_exec::process::write_stdin(context, params);
        fn process_kill(context, params: ProcessKillParams) -> ProcessKillResponse
            = command_exec::process::kill(context, params);
        fn process_resize_pty(context, params: ProcessResizePtyParams) -> ProcessResizePtyResponse
            = command_exec::process::resize_pty(context, params);
        fn server_diagnostics(
            context,
            _params: ServerDiagnosticsParams,
        ) -> ServerDiagnosticsResponse
            = diagnostics::read(context);
        fn feedback_save(_context, params: FeedbackSaveParams) -> FeedbackSaveResponse
            = feedback::save(params);

        // ---- reading and searching thread history ----
        fn thread_items_read(_context, params: ThreadItemsReadParams) -> ThreadItemsReadResponse
            = thread_requests::items_read(params);
        fn thread_timeline_list(
            _context,
            params: ThreadTimelineListParams,
        ) -> ThreadTimelineListResponse
            = thread_requests::timeline_list(params);
        fn thread_search_occurrences(
            _context,
            params: ThreadSearchOccurrencesParams,
        ) -> ThreadSearchOccurrencesResponse
            = history_search::occurrences[threads](params);
        fn thread_inject_items(
            _context,
            params: ThreadInjectItemsParams,
        ) -> ThreadInjectItemsResponse
            = thread_requests::inject_items(params);

        // ---- organising threads: projects, sections, attachments, queued input (0.6.0) ----
        fn project_list(_context, params: ProjectListParams) -> ProjectListResponse
            = organisation::projects::list(params);
        fn project_read(_context, params: ProjectReadParams) -> ProjectReadResponse
            = organisation::projects::read(params);
        fn project_create(context, params: ProjectCreateParams) -> ProjectCreateResponse
            = organisation::projects::create(context, params);
        fn project_import(context, params: ProjectImportParams) -> ProjectImportResponse
            = organisation::projects::import(context, params);
        fn project_update(context, params: ProjectUpdateParams) -> ProjectUpdateResponse
            = organisation::projects::update(context, params);
        fn project_move(context, params: ProjectMoveParams) -> ProjectMoveResponse
            = organisation::projects::move_project(context, params);
        fn project_delete(context, params: ProjectDeleteParams) -> ProjectDeleteResponse
            = organisation::projects::delete(context, params);
        fn thread_section_list(
            _context,
            params: ThreadSectionListParams,
        ) -> ThreadSectionListResponse
            = organisation::sections::list(params);
        fn thread_section_create(
            _context,
            params: ThreadSectionCreateParams,
        ) -> ThreadSectionCreateResponse
            = organisation::sections::create(params);
        fn thread_section_update(
            _context,
            params: ThreadSectionUpdateParams,
        ) -> ThreadSectionUpdateResponse
            = organisation::sections::update(params);
        fn thread_section_delete(
            _context,
            params: ThreadSectionDeleteParams,
        ) -> ThreadSectionDeleteResponse
            = organisation::sections::delete(params);
        fn thread_section_move(
            context,
            params: ThreadSectionMoveParams,
        ) -> ThreadSectionMoveResponse
            = organisation::sections::move_thread(context, params);
        fn thread_attachment_add(
            context,
            params: ThreadAttachmentAddParams,
        ) -> ThreadAttachmentAddResponse
            = organisation::attachments::add(context, params);
        fn thread_attachment_list(
            _context,
            params: ThreadAttachmentListParams,
        ) -> ThreadAttachmentListResponse
            = organisation::attachments::list(params);
        fn thread_attachment_owner_list(
            _context,
            params: ThreadAttachmentOwnerListParams,
        ) -> ThreadAttachmentOwnerListResponse
            = organisation::attachments::owners(params);
        fn thread_attachment_remove(
            context,
            params: ThreadAttachmentRemoveParams,
        ) -> ThreadAttachmentRemoveResponse
            = organisation::attachments::remove(context, params);
        fn thread_queue_add(context, params: ThreadQueueAddParams) -> ThreadQueueAddResponse
            = organisation::queue::add(context, params);
        fn thread_queue_list(_context, params: ThreadQueueListParams) -> ThreadQueueListResponse
            = organisation::queue::list(params);
        fn thread_queue_update(
            context,
            params: ThreadQueueUpdateParams,
        ) -> ThreadQueueUpdateResponse
            = organisation::queue::update(context, params);
        fn thread_queue_delete(
            context,
            params: ThreadQueueDeleteParams,
        ) -> ThreadQueueDeleteResponse
            = organisation::queue::delete(context, params);
        fn thread_queue_reorder(
            context,
            params: ThreadQueueReorderParams,
        ) -> ThreadQueueReorderResponse
            = organisation::queue::reorder(context, params);
        fn thread_queue_start(context, params: ThreadQueueStartParams) -> ThreadQueueStartResponse
            = organisation::queue::start(context, params);

        // ---- plugins and marketplaces ----
        fn marketplace_add(_context, params: MarketplaceAddParams) -> MarketplaceAddResponse
            = plugins::rpc::marketplace_add(params);
        fn marketplace_remove(
            _context,
            params: MarketplaceRemoveParams,
        ) -> MarketplaceRemoveResponse
            = plugins::rpc::marketplace_remove(params);
        fn marketplace_upgrade(
            _context,
            params: MarketplaceUpgradeParams,
        ) -> MarketplaceUpgradeResponse
            = plugins::rpc::marketplace_upgrade(params);
        fn plugin_list(_context, params: PluginListParams) -> PluginListResponse
            = plugins::rpc::list(params);
        fn plugin_search(_context, params: PluginSearchParams) -> PluginSearchResponse
            = plugins::rpc::search(params);
        fn plugin_read(_context, params: PluginReadParams) -> PluginReadResponse
            = plugins::rpc::read(params);
        fn plugin_skill_read(_context, params: PluginSkillReadParams) -> PluginSkillReadResponse
            = plugins::rpc::skill_read(params);
        fn plugin_install(context, params: PluginInstallParams) -> PluginInstallResponse
            = plugins::rpc::install(context, params);
        fn plugin_uninstall(context, params: PluginUninstallParams) -> PluginUninstallResponse
            = plugins::rpc::uninstall(context, params);
        fn plugin_reconcile(context, params: PluginReconcileParams) -> PluginReconcileResponse
            = plugins::rpc::reconcile(context, params);

        // ---- migration from Codex and memory ----
        fn external_agent_config_detect(
            _context,
            params: ExternalAgentConfigDetectParams,
        ) -> ExternalAgentConfigDetectResponse
            = codex_import::rpc::detect(params);
        fn external_agent_config_import(
            context,
            params: ExternalAgentConfigImportParams,
        ) -> ExternalAgentConfigImportResponse
            = codex_import::rpc::import(context, params);
        fn external_agent_config_import_record_history(
            _context,
            params: ExternalAgentConfigImportHistoryRecordParams,
        ) -> ExternalAgentConfigImportHistoryRecordResponse
            = codex_import::rpc::record_history(params);
        fn external_agent_config_import_read_histories(
            _context,
            _params: NoParams,
        ) -> ExternalAgentConfigImportHistoriesReadResponse
            = codex_import::rpc::read_histories();
        fn thread_memory_mode_set(
            _context,
            params: ThreadMemoryModeSetParams,
        ) -> ThreadMemoryModeSetResponse
            = memory::mode_set(params);
        fn thread_memory_read(_context, params: ThreadMemoryReadParams) -> ThreadMemoryReadResponse
            = memory::thread_read(params);
        fn memory_status(_context, params: MemoryStatusParams) -> MemoryStatusResponse
            = memory::status(params);
        fn memory_reset(_context, _params: NoParams) -> MemoryResetResponse = memory::reset_all();

        // ---- rollout maintenance (0.7.0) ----
        fn rollout_compress(_context, _params: NoParams) -> RolloutCompressResponse
            = rollout_compress::compress();

        // ---- MCP OAuth sign-in (0.6.0) ----
        fn mcp_server_oauth_login(
            context,
            params: McpServerOauthLoginParams,
        ) -> McpServerOauthLoginResponse
            = agentwire_mcp::McpManager::oauth_login[mcp](context, params);

        // ---- thread/sample, elicitation counters, environments (0.6.0) ----
        fn thread_sample(context, params: ThreadSampleParams) -> ThreadSampleResponse
            = thread_sample::sample[turns, samples](context, params);
    }
}
