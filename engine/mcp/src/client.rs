//! The MCP client side of a connection ([`ClientSide`], an [`rmcp::ClientHandler`]):
//!
//! - `notifications/progress` goes to the call whose progress token it names
//!   ([`Shared::subscribe`]); a slow reader loses progress messages rather than growing a
//!   queue;
//! - `elicitation/create` is forwarded to the app-server client of the request running on the
//!   server ([`Shared::enter`]) as `mcpServer/elicitation/request`; its answer goes back. No
//!   caller, a failed or malformed answer: the elicitation is declined.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agentwire_protocol::methods::McpServerElicitationRequest;
use agentwire_protocol::{
    McpServerElicitationAction, McpServerElicitationForm, McpServerElicitationRequestParams,
};
use agentwire_support::lock;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, Implementation, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use tokio::sync::mpsc;

use crate::vocabulary::Caller;

/// Most progress messages waiting for a call to read them.
const PROGRESS_QUEUE: usize = 64;

/// What the connection's handler and the calls share.
pub(crate) struct Shared {
    server: String,
    /// The callers of the requests running now, newest last.
    callers: Mutex<Vec<(u64, Caller)>>,
    next_caller: std::sync::atomic::AtomicU64,
    progress: Mutex<HashMap<ProgressToken, mpsc::Sender<String>>>,
    /// Set when the server says its tools changed; cleared when they are listed again.
    pub tools_changed: std::sync::atomic::AtomicBool,
}

impl Shared {
    pub(crate) fn new(server: &str) -> Self {
        Self {
            server: server.to_owned(),
            callers: Mutex::new(Vec::new()),
            next_caller: std::sync::atomic::AtomicU64::new(0),
            progress: Mutex::new(HashMap::new()),
            tools_changed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Makes `caller` the recipient of the server's elicitations until the guard drops.
    pub(crate) fn enter(self: &Arc<Self>, caller: Caller) -> CallerGuard {
        let id = self
            .next_caller
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lock(&self.callers).push((id, caller));
        CallerGuard {
            shared: self.clone(),
            id,
        }
    }

    /// The progress messages sent under `token`, until the subscription drops.
    pub(crate) fn subscribe(self: &Arc<Self>, token: ProgressToken) -> ProgressSubscription {
        let (sender, receiver) = mpsc::channel(PROGRESS_QUEUE);
        lock(&self.progress).insert(token.clone(), sender);
        ProgressSubscription {
            shared: self.clone(),
            token,
            receiver,
        }
    }

    fn caller(&self) -> Option<Caller> {
        lock(&self.callers).last().map(|(_, c)| c.clone())
    }
}

/// Keeps a caller registered (see [`Shared::enter`]).
pub(crate) struct CallerGuard {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for CallerGuard {
    fn drop(&mut self) {
        lock(&self.shared.callers).retain(|(id, _)| *id != self.id);
    }
}

/// The progress messages of one call (see [`Shared::subscribe`]).
pub(crate) struct ProgressSubscription {
    shared: Arc<Shared>,
    token: ProgressToken,
    receiver: mpsc::Receiver<String>,
}

impl ProgressSubscription {
    /// The next message.
    pub(crate) async fn recv(&mut self) -> Option<String> {
        self.receiver.recv().await
    }

    /// A message already waiting.
    pub(crate) fn try_recv(&mut self) -> Result<String, mpsc::error::TryRecvError> {
        self.receiver.try_recv()
    }
}

impl Drop for ProgressSubscription {
    fn drop(&mut self) {
        lock(&self.shared.progress).remove(&self.token);
    }
}

/// `progress` as one line of text: the server's message, with `progress/total` when given.
pub(crate) fn progress_text(progress: &ProgressNotificationParam) -> String {
    let amount = match progress.total {
        Some(total) => format!("{}/{}", progress.progress, total),
        None => progress.progress.to_string(),
    };
    match &progress.message {
        Some(message) if !message.trim().is_empty() => format!("{message} ({amount})"),
        _ => amount,
    }
}

/// The handler of one MCP connection.
pub(crate) struct ClientSide {
    pub shared: Arc<Shared>,
}

fn declined() -> ElicitResult {
    ElicitResult::new(ElicitationAction::Decline)
}

impl ClientHandler for ClientSide {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ElicitationCapability::default());
        let mut info = Implementation::new("agentwire", env!("CARGO_PKG_VERSION"));
        info.title = Some("agentwire".to_owned());
        ClientConfig::new(capabilities, info)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let sender = lock(&self.shared.progress)
            .get(&params.progress_token)
            .cloned();
        if let Some(sender) = sender {
            // A full queue drops the message: progress is advisory.
            let _ = sender.try_send(progress_text(&params));
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.shared
            .tools_changed
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let Some(caller) = self.shared.caller() else {
            tracing::info!(server = %self.shared.server, "elicitation with no request running: declined");
            return Ok(declined());
        };
        let form = serde_json::to_value(&request).ok().and_then(|mut value| {
            // The wire's form schema has these members only (a `title` or `description` of
            // the whole form is dropped; the message says what is asked).
            if let Some(schema) = value
                .get_mut("requestedSchema")
                .and_then(serde_json::Value::as_object_mut)
            {
                schema.retain(|k, _| {
                    matches!(k.as_str(), "$schema" | "type" | "properties" | "required")
                });
            }
            serde_json::from_value::<McpServerElicitationForm>(value).ok()
        });
        let Some(form) = form else {
            tracing::warn!(server = %self.shared.server, "elicitation the client cannot be shown: declined");
            return Ok(declined());
        };
        let params = McpServerElicitationRequestParams::builder()
            .thread_id(caller.thread_id.clone())
            .maybe_turn_id(caller.turn_id.clone())
            .server_name(self.shared.server.clone())
            .request(form)
            .build();
        match caller
            .peer
            .request::<McpServerElicitationRequest>(&params)
            .await
        {
            Ok(answer) => {
                let action = match answer.action {
                    McpServerElicitationAction::Accept => "accept",
                    McpServerElicitationAction::Decline => "decline",
                    McpServerElicitationAction::Cancel => "cancel",
                    _ => "decline",
                };
                let mut result = serde_json::json!({ "action": action });
                if let Some(content) = answer.content.filter(|c| !c.is_null()) {
                    result["content"] = content;
                }
                if let Some(meta) = answer._meta.filter(|m| m.is_object()) {
                    result["_meta"] = meta;
                }
                Ok(serde_json::from_value(result).unwrap_or_else(|_| declined()))
            }
            Err(error) => {
                tracing::info!(server = %self.shared.server, %error, "elicitation not answered: declined");
                Ok(declined())
            }
        }
    }
}
