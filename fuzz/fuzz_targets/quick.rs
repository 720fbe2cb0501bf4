//! The handler the runtime targets serve: answers at once, and talks back through the peer
//! (a notification, a server request) the way an engine does.

use agentwire_protocol::methods::{CommandExecutionRequestApproval, Warning};
use agentwire_protocol::{
    AbsolutePathBuf, ClientInfo, CommandExecParams, CommandExecResponse,
    CommandExecutionRequestApprovalParams, InitializeResponse, ThreadListParams,
    ThreadListResponse, ThreadSetNameParams, ThreadSetNameResponse, WarningNotification,
};
use agentwire_runtime::{Handler, HandlerError, RequestContext};

/// Answers at once; talks back through the peer the way an engine does.
pub struct Quick;

impl Handler for Quick {
    fn initialize_response(&self, client: &ClientInfo) -> InitializeResponse {
        InitializeResponse::builder()
            .user_agent(format!("agentwire-fuzz/0 ({})", client.name))
            .codex_home(AbsolutePathBuf("/nonexistent/agentwire-fuzz".to_owned()))
            .platform_family(std::env::consts::FAMILY.to_owned())
            .platform_os(std::env::consts::OS.to_owned())
            .build()
    }

    async fn thread_list(
        &self,
        _context: RequestContext,
        _params: ThreadListParams,
    ) -> Result<ThreadListResponse, HandlerError> {
        Ok(ThreadListResponse::builder().build())
    }

    async fn thread_set_name(
        &self,
        context: RequestContext,
        params: ThreadSetNameParams,
    ) -> Result<ThreadSetNameResponse, HandlerError> {
        context.peer.notify::<Warning>(
            &WarningNotification::builder()
                .thread_id(params.thread_id)
                .message(params.name)
                .build(),
        );
        Ok(ThreadSetNameResponse::builder().build())
    }

    async fn command_exec(
        &self,
        context: RequestContext,
        params: CommandExecParams,
    ) -> Result<CommandExecResponse, HandlerError> {
        let approval: CommandExecutionRequestApprovalParams =
            serde_json::from_value(serde_json::json!({
                "threadId": params.command.first().cloned().unwrap_or_default(),
                "turnId": "turn",
                "itemId": "item",
                "startedAtMs": 0,
            }))
            .map_err(|e| HandlerError::internal(e.to_string()))?;
        let response = context
            .peer
            .request_or_decline::<CommandExecutionRequestApproval>(&approval)
            .await;
        Ok(CommandExecResponse::builder()
            .exit_code(0)
            .stdout(format!("{:?}", response.decision))
            .stderr(String::new())
            .build())
    }
}
