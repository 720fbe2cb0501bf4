//! Requests the server sends the client (approvals, elicitations), and how they are answered.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use agentwire_protocol::jsonrpc::{JsonRpcErrorObject, RequestId, error_codes};
use agentwire_protocol::method::{Method, Request};
use agentwire_protocol::methods::{
    ApplyPatchApproval, CommandExecutionRequestApproval, ExecCommandApproval,
    FileChangeRequestApproval, McpServerElicitationRequest,
};
use agentwire_protocol::{
    ApplyPatchApprovalResponse, CommandExecutionApprovalDecision,
    CommandExecutionRequestApprovalResponse, ExecCommandApprovalResponse,
    FileChangeApprovalDecision, FileChangeRequestApprovalResponse, McpServerElicitationAction,
    McpServerElicitationRequestResponse, ReviewDecision,
};
use agentwire_runtime::Decline;
use serde_json::Value;

use crate::Error;

/// A request from the server, waiting for the client's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerRequest {
    /// The id the answer must carry (the client answers it for you).
    pub id: RequestId,
    /// The method, e.g. `item/commandExecution/requestApproval`.
    pub method: String,
    /// The params as sent (`null` when absent).
    pub params: Value,
}

/// The answer to a server request: its `result`, or a JSON-RPC error.
pub type Answer = Result<Value, JsonRpcErrorObject>;

/// A boxed future of an [`Answer`].
pub type AnswerFuture = Pin<Box<dyn Future<Output = Answer> + Send>>;

/// What answers the server's requests: called once per request, on its own task.
pub type ServerRequestHandler = Arc<dyn Fn(ServerRequest) -> AnswerFuture + Send + Sync>;

impl ServerRequest {
    /// Whether this is a request of method `M`.
    pub fn is<M: Request>(&self) -> bool {
        self.method == M::NAME
    }

    /// The params as `M`'s type; `None` when this is another method.
    pub fn parse<M: Request>(&self) -> Option<Result<M::Params, Error>> {
        self.is::<M>().then(|| {
            serde_json::from_value(self.params.clone()).map_err(|source| Error::Json {
                method: self.method.clone(),
                what: "the server request's params",
                source,
            })
        })
    }

    /// The refusal of this request: `decline` (or `denied`, `decline` for elicitations) for the
    /// approval methods of the protocol, a -32601 error for any other method.
    pub fn decline(&self, reason: &str) -> Answer {
        match self.method.as_str() {
            m if m == CommandExecutionRequestApproval::NAME => {
                typed(CommandExecutionRequestApprovalResponse::decline(reason))
            }
            m if m == FileChangeRequestApproval::NAME => {
                typed(FileChangeRequestApprovalResponse::decline(reason))
            }
            m if m == ExecCommandApproval::NAME => {
                typed(ExecCommandApprovalResponse::decline(reason))
            }
            m if m == ApplyPatchApproval::NAME => {
                typed(ApplyPatchApprovalResponse::decline(reason))
            }
            m if m == McpServerElicitationRequest::NAME => {
                typed(elicitation(McpServerElicitationAction::Decline))
            }
            _ => Err(unsupported(&self.method)),
        }
    }

    /// The approval of this request for the approval methods of the protocol (an elicitation,
    /// which would need a filled-in form, is declined); a -32601 error for any other method.
    pub fn accept(&self) -> Answer {
        match self.method.as_str() {
            m if m == CommandExecutionRequestApproval::NAME => typed(
                CommandExecutionRequestApprovalResponse::builder()
                    .decision(CommandExecutionApprovalDecision::Accept)
                    .build(),
            ),
            m if m == FileChangeRequestApproval::NAME => typed(
                FileChangeRequestApprovalResponse::builder()
                    .decision(FileChangeApprovalDecision::Accept)
                    .build(),
            ),
            m if m == ExecCommandApproval::NAME => typed(
                ExecCommandApprovalResponse::builder()
                    .decision(ReviewDecision::Approved)
                    .build(),
            ),
            m if m == ApplyPatchApproval::NAME => typed(
                ApplyPatchApprovalResponse::builder()
                    .decision(ReviewDecision::Approved)
                    .build(),
            ),
            _ => self.decline("accepting needs an answer this client cannot give"),
        }
    }
}

fn elicitation(action: McpServerElicitationAction) -> McpServerElicitationRequestResponse {
    McpServerElicitationRequestResponse::builder()
        .action(action)
        .build()
}

fn typed<T: serde::Serialize>(response: T) -> Answer {
    serde_json::to_value(response).map_err(|e| {
        JsonRpcErrorObject::builder()
            .code(error_codes::INTERNAL_ERROR)
            .message(format!("the client could not encode its answer: {e}"))
            .build()
    })
}

/// The error for a server request this client does not handle.
pub fn unsupported(method: &str) -> JsonRpcErrorObject {
    JsonRpcErrorObject::builder()
        .code(error_codes::METHOD_NOT_FOUND)
        .message(format!(
            "this client does not handle the server request {method}"
        ))
        .build()
}

/// The default handler: declines every approval and refuses everything else.
pub fn decline_all() -> ServerRequestHandler {
    Arc::new(|request: ServerRequest| {
        let answer = request.decline("declined by the client");
        Box::pin(async move { answer })
    })
}

/// A handler that approves every approval request (elicitations are declined).
pub fn accept_all() -> ServerRequestHandler {
    Arc::new(|request: ServerRequest| {
        let answer = request.accept();
        Box::pin(async move { answer })
    })
}

/// A handler from a synchronous function.
pub fn handler_fn(
    f: impl Fn(&ServerRequest) -> Answer + Send + Sync + 'static,
) -> ServerRequestHandler {
    Arc::new(move |request: ServerRequest| {
        let answer = f(&request);
        Box::pin(async move { answer })
    })
}
