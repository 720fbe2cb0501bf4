//! What both front ends (full-screen and plain lines) ask of the server: threads, turns,
//! interrupts, settings, compaction, reviews, MCP server status and approval answers, over one
//! [`Connection`]; and what the current thread runs with ([`InUse`]), kept up to date from the
//! server's answers and `thread/settings/updated`.

use std::collections::HashMap;

use serde_json::{Value, json};

use agentwire_client::JsonRpcErrorObject;

use crate::connection::{Connection, Reply, RpcError};
use crate::policy::{ApprovalPolicy, SandboxMode};
use crate::settings::InUse;

/// The client's side of a session with one app-server.
#[derive(Debug)]
pub struct Session {
    connection: Connection,
    /// The thread turns go to.
    pub thread_id: Option<String>,
    /// The model for the next turns (`None`: the thread's own).
    pub model: Option<String>,
    /// The working directory new threads get (`None`: the server's).
    pub cwd: Option<String>,
    /// The approval policy new threads get (`None`: the server's configuration).
    pub approval_policy: Option<ApprovalPolicy>,
    /// The sandbox new threads get (`None`: the server's configuration).
    pub sandbox: Option<SandboxMode>,
    /// What the current thread runs with, as the server reported it.
    pub in_use: InUse,
    /// Each model's default reasoning effort (from `model/list`), once asked.
    default_efforts: Option<HashMap<String, String>>,
    /// Settings to send with the next `turn/start` (for a server without
    /// `thread/settings/update`).
    deferred: serde_json::Map<String, Value>,
}

/// One server request waiting for the user's answer.
#[derive(Debug, Clone)]
pub struct Approval {
    /// The request id (as `serverRequest/resolved` names it).
    pub id: Value,
    /// Where the answer goes.
    pub reply: Reply,
    /// The request's method.
    pub method: String,
    /// What the user is asked, in one line (the screen wraps it).
    pub question: String,
    /// The command or file change item the approval is for, when the request names one.
    pub item_id: Option<String>,
}

/// How the user answered an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Yes, this once.
    Accept,
    /// Yes, and for the rest of the session.
    AcceptForSession,
    /// No; the turn goes on.
    Decline,
    /// No, and stop the turn.
    Cancel,
}

impl Decision {
    /// The decision for a key (`y`, `a`, `n`, `c`) or a typed word.
    pub fn from_answer(answer: &str) -> Option<Self> {
        match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Some(Self::Accept),
            "a" | "always" => Some(Self::AcceptForSession),
            "n" | "no" => Some(Self::Decline),
            "c" | "cancel" => Some(Self::Cancel),
            _ => None,
        }
    }

    fn wire(self) -> &'static str {
        match self {
            Self::Accept => "accept",
            Self::AcceptForSession => "acceptForSession",
            Self::Decline => "decline",
            Self::Cancel => "cancel",
        }
    }
}

impl Approval {
    /// The approval a server request asks for, or `None` for requests this client does not
    /// answer with a decision (they are refused with [`Session::refuse`]).
    pub fn of(id: Value, method: &str, params: &Value, reply: &Reply) -> Option<Self> {
        let text = |key: &str| params.get(key).and_then(Value::as_str);
        let reason = text("reason").map_or(String::new(), |r| format!(" ({r})"));
        let question = match method {
            "item/commandExecution/requestApproval" => {
                let command = text("command").unwrap_or("a command");
                match text("cwd") {
                    Some(cwd) => format!("Run `{command}` in {cwd}?{reason}"),
                    None => format!("Run `{command}`?{reason}"),
                }
            }
            "item/fileChange/requestApproval" => format!("Apply these file changes?{reason}"),
            _ => return None,
        };
        Some(Self {
            id,
            reply: reply.clone(),
            method: method.to_owned(),
            question,
            item_id: text("itemId").map(str::to_owned),
        })
    }
}

impl Session {
    /// A session over `connection` (already initialized).
    pub fn new(connection: Connection, model: Option<String>, cwd: Option<String>) -> Self {
        Self {
            connection,
            thread_id: None,
            model,
            cwd,
            approval_policy: None,
            sandbox: None,
            in_use: InUse::default(),
            default_efforts: None,
            deferred: serde_json::Map::new(),
        }
    }

    /// Starts a new thread and makes it current; returns its id.
    pub async fn start_thread(&mut self) -> Result<String, RpcError> {
        let mut params = json!({});
        if let Some(cwd) = &self.cwd {
            params["cwd"] = json!(cwd);
        }
        if let Some(model) = &self.model {
            params["model"] = json!(model);
        }
        if let Some(policy) = self.approval_policy {
            params["approvalPolicy"] = json!(policy.wire());
        }
        if let Some(sandbox) = self.sandbox {
            params["sandbox"] = json!(sandbox.name());
        }
        let result = self.connection.request("thread/start", params).await?;
        let id = thread_id_of(&result)?;
        self.thread_id = Some(id.clone());
        self.in_use = InUse::from_thread_answer(&result);
        self.load_default_efforts().await;
        Ok(id)
    }

    /// The reasoning effort the current model uses when none is chosen, when `model/list`
    /// says.
    pub fn default_effort(&self) -> Option<&str> {
        let model = self.in_use.model.as_deref()?;
        self.default_efforts
            .as_ref()?
            .get(model)
            .map(String::as_str)
    }

    /// Asks `model/list` once for each model's default effort (nothing is shown if it fails).
    async fn load_default_efforts(&mut self) {
        if self.default_efforts.is_some() {
            return;
        }
        let Ok(result) = self.connection.request("model/list", json!({})).await else {
            self.default_efforts = Some(HashMap::new());
            return;
        };
        let efforts = result
            .get("data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|m| {
                let model = m.get("model").or_else(|| m.get("id"))?.as_str()?;
                let effort = m.get("defaultReasoningEffort")?.as_str()?;
                Some((model.to_owned(), effort.to_owned()))
            })
            .collect();
        self.default_efforts = Some(efforts);
    }

    /// Takes note of a notification that changes what the current thread runs with
    /// (`thread/settings/updated`); returns whether it did.
    pub fn observe(&mut self, method: &str, params: &Value) -> bool {
        if method != "thread/settings/updated"
            || params.get("threadId").and_then(Value::as_str) != self.thread_id.as_deref()
        {
            return false;
        }
        match params.get("threadSettings") {
            Some(settings) => {
                self.in_use = InUse::from_thread_settings(settings);
                true
            }
            None => false,
        }
    }

    /// Changes the current thread's settings for its later turns (`thread/settings/update`
    /// with `changes`: `model`, `effort`, `approvalPolicy`, `sandboxPolicy` …). What the
    /// status shows follows the server's `thread/settings/updated`; it is updated here too, so
    /// it is right before that notification is read.
    pub async fn update_settings(&mut self, changes: Value) -> Result<(), RpcError> {
        let thread = self.current_thread()?;
        let mut params = changes.clone();
        params["threadId"] = json!(thread);
        self.connection
            .request("thread/settings/update", params)
            .await?;
        self.assume(&changes);
        Ok(())
    }

    /// Shows `changes` (in `thread/settings/update` form) as in use.
    fn assume(&mut self, changes: &Value) {
        let text = |key: &str| changes.get(key).and_then(Value::as_str).map(str::to_owned);
        if let Some(model) = text("model") {
            self.in_use.model = Some(model);
        }
        if let Some(effort) = text("effort") {
            self.in_use.effort = Some(effort);
        }
        if let Some(policy) = text("approvalPolicy") {
            self.in_use.approval = Some(policy);
        }
        if let Some(sandbox) = changes.get("sandboxPolicy") {
            let settings = json!({"sandboxPolicy": sandbox});
            self.in_use.sandbox = InUse::from_thread_settings(&settings).sandbox;
        }
    }

    /// Keeps `changes` (members of `thread/settings/update` that `turn/start` takes too:
    /// `model`, `effort`, `approvalPolicy`, `sandboxPolicy`) for the next turn, and shows them
    /// as in use from then on.
    pub fn defer(&mut self, changes: Value) {
        self.assume(&changes);
        if let Value::Object(changes) = changes {
            self.deferred.extend(changes);
        }
    }

    /// Compacts the current thread (`thread/compact/start`); the compaction runs as a turn.
    pub async fn compact(&self) -> Result<(), RpcError> {
        let thread = self.current_thread()?;
        self.connection
            .request("thread/compact/start", json!({"threadId": thread}))
            .await
            .map(drop)
    }

    /// Starts a review of the uncommitted changes in the thread's working directory
    /// (`review/start`); the review runs as a turn.
    pub async fn review_uncommitted(&self) -> Result<(), RpcError> {
        let thread = self.current_thread()?;
        self.connection
            .request(
                "review/start",
                json!({"threadId": thread, "target": {"type": "uncommittedChanges"}}),
            )
            .await
            .map(drop)
    }

    /// The configured MCP servers (`mcpServerStatus/list`), as the server reports them.
    pub async fn mcp_servers(&self) -> Result<Vec<Value>, RpcError> {
        let mut params = json!({"detail": "toolsAndAuthOnly"});
        if let Some(thread) = &self.thread_id {
            params["threadId"] = json!(thread);
        }
        let result = self
            .connection
            .request("mcpServerStatus/list", params)
            .await?;
        Ok(result
            .get("data")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default())
    }

    /// Whether `path` (absolute, on the server's machine) is a file, by `fs/getMetadata`;
    /// `false` when the server cannot say.
    pub async fn is_file(&self, path: &str) -> bool {
        self.connection
            .request("fs/getMetadata", json!({"path": path}))
            .await
            .is_ok_and(|meta| meta.get("isFile").and_then(Value::as_bool) == Some(true))
    }

    fn current_thread(&self) -> Result<String, RpcError> {
        self.thread_id.clone().ok_or_else(|| RpcError {
            code: -32600,
            message: "there is no thread yet (send a message or /new first)".to_owned(),
        })
    }

    /// Loads thread `id` and makes it current; returns the `thread/resume` result.
    pub async fn resume(&mut self, id: &str) -> Result<Value, RpcError> {
        let result = self
            .connection
            .request("thread/resume", json!({"threadId": id}))
            .await?;
        self.thread_id = Some(thread_id_of(&result)?);
        self.in_use = InUse::from_thread_answer(&result);
        self.load_default_efforts().await;
        Ok(result)
    }

    /// The most recent threads: (id, preview).
    pub async fn list_threads(&self) -> Result<Vec<(String, String)>, RpcError> {
        let result = self
            .connection
            .request("thread/list", json!({"limit": 20}))
            .await?;
        Ok(result
            .get("data")
            .and_then(Value::as_array)
            .map(|threads| {
                threads
                    .iter()
                    .filter_map(|t| {
                        let id = t.get("id")?.as_str()?.to_owned();
                        let preview = t.get("preview").and_then(Value::as_str).unwrap_or("");
                        Some((id, preview.to_owned()))
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The models the server offers: (id, is default).
    pub async fn list_models(&self) -> Result<Vec<(String, bool)>, RpcError> {
        let result = self.connection.request("model/list", json!({})).await?;
        Ok(result
            .get("data")
            .and_then(Value::as_array)
            .map(|models| {
                models
                    .iter()
                    .filter_map(|m| {
                        let id = m.get("model").or_else(|| m.get("id"))?.as_str()?.to_owned();
                        let default = m.get("isDefault").and_then(Value::as_bool) == Some(true);
                        Some((id, default))
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Sends the user's text: a new turn, or steering of `running` when a turn runs.
    pub async fn send(&mut self, text: &str, running: Option<&str>) -> Result<(), RpcError> {
        let thread = match &self.thread_id {
            Some(id) => id.clone(),
            None => self.start_thread().await?,
        };
        let input = json!([{"type": "text", "text": text}]);
        match running {
            Some(turn) => {
                self.connection
                    .request(
                        "turn/steer",
                        json!({"threadId": thread, "input": input, "expectedTurnId": turn}),
                    )
                    .await?;
            }
            None => {
                let mut params = json!({"threadId": thread, "input": input});
                if let Some(model) = &self.model {
                    params["model"] = json!(model);
                }
                for (key, value) in &self.deferred {
                    params[key] = value.clone();
                }
                self.connection.request("turn/start", params).await?;
                self.deferred.clear();
            }
        }
        Ok(())
    }

    /// Asks the server to interrupt `turn`.
    pub async fn interrupt(&self, turn: &str) -> Result<(), RpcError> {
        let thread = self.thread_id.clone().unwrap_or_default();
        self.connection
            .request(
                "turn/interrupt",
                json!({"threadId": thread, "turnId": turn}),
            )
            .await
            .map(drop)
    }

    /// Answers an approval.
    pub fn decide(approval: &Approval, decision: Decision) {
        approval
            .reply
            .send(Ok(json!({"decision": decision.wire()})));
    }

    /// Refuses a server request this client cannot answer (so the turn does not wait).
    pub fn refuse(reply: &Reply, method: &str) {
        reply.send(Err(JsonRpcErrorObject::builder()
            .code(-32601)
            .message(format!(
                "the agentwire terminal client does not answer {method}"
            ))
            .build()));
    }
}

fn thread_id_of(result: &Value) -> Result<String, RpcError> {
    result
        .pointer("/thread/id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| RpcError {
            code: -32603,
            message: "the server's answer has no thread.id".to_owned(),
        })
}
