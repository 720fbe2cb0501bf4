//! What a tool call sends to the MCP host, through rmcp: `codex/event` notifications and
//! `elicitation/create` requests.

use agentwire_protocol::RequestId;
use agentwire_protocol::mcp::{
    CODEX_EVENT_METHOD, CodexApprovalElicitationParams, CodexEventMeta, CodexEventMsg,
    CodexEventNotificationParams, ELICITATION_CREATE_METHOD,
};
use rmcp::RoleServer;
use rmcp::model::{CustomNotification, CustomRequest, ServerNotification, ServerRequest};
use rmcp::service::Peer;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The host of one tool call.
pub struct Host {
    peer: Peer<RoleServer>,
    request_id: RequestId,
    /// Cancelled once the host's input has ended: rmcp then no longer carries messages to
    /// the host, and waiting on it would hold the call (and the server's exit) for nothing.
    gone: CancellationToken,
}

impl Host {
    /// The host that sent `tools/call` `request_id`, reached through `peer` until `gone`.
    pub fn new(peer: Peer<RoleServer>, request_id: RequestId, gone: CancellationToken) -> Self {
        Self {
            peer,
            request_id,
            gone,
        }
    }

    /// The `tools/call` request's id.
    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }

    /// Sends one `codex/event` about `thread_id`; `id` is the turn's (empty for events of the
    /// session itself). A host that has gone away is not an error: the turn runs to its end.
    pub async fn event(&self, thread_id: &str, id: &str, msg: CodexEventMsg) {
        let params = CodexEventNotificationParams::builder()
            .meta(
                CodexEventMeta::builder()
                    .request_id(self.request_id.clone())
                    .thread_id(thread_id.to_owned())
                    .build(),
            )
            .id(id.to_owned())
            .msg(msg)
            .build();
        let params = match serde_json::to_value(&params) {
            Ok(params) => params,
            Err(e) => {
                tracing::warn!(error = %e, "codex/event not serialisable; skipped");
                return;
            }
        };
        let notification = CustomNotification::new(CODEX_EVENT_METHOD, Some(params));
        let sent = self
            .peer
            .send_notification(ServerNotification::CustomNotification(notification));
        tokio::select! {
            sent = sent => {
                if let Err(e) = sent {
                    tracing::debug!(error = %e, "codex/event not delivered");
                }
            }
            () = self.gone.cancelled() => tracing::debug!("codex/event dropped: the host has gone"),
        }
    }

    /// Sends an approval `elicitation/create` and waits for the host's answer; `Err` says why
    /// there is none (an error answer, a closed connection, a host whose input has ended).
    pub async fn elicit(&self, params: &CodexApprovalElicitationParams) -> Result<Value, String> {
        let params = serde_json::to_value(params).map_err(|e| e.to_string())?;
        let request = CustomRequest::new(ELICITATION_CREATE_METHOD, Some(params));
        let asked = self
            .peer
            .send_request(ServerRequest::CustomRequest(request));
        let answer = tokio::select! {
            answer = asked => answer.map_err(|e| e.to_string())?,
            () = self.gone.cancelled() => return Err("the host's input has ended".to_owned()),
        };
        serde_json::to_value(answer).map_err(|e| e.to_string())
    }
}
