//! What both front ends (full-screen and plain lines) ask of the server: threads, turns,
//! interrupts and approval answers, over one [`Connection`].

use serde_json::{Value, json};

use agentwire_client::JsonRpcErrorObject;

use crate::connection::{Connection, Reply, RpcError};

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
    /// What the user is asked, in one line.
    pub question: String,
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
        let result = self.connection.request("thread/start", params).await?;
        let id = thread_id_of(&result)?;
        self.thread_id = Some(id.clone());
        Ok(id)
    }

    /// Loads thread `id` and makes it current; returns the `thread/resume` result.
    pub async fn resume(&mut self, id: &str) -> Result<Value, RpcError> {
        let result = self
            .connection
            .request("thread/resume", json!({"threadId": id}))
            .await?;
        self.thread_id = Some(thread_id_of(&result)?);
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
                self.connection.request("turn/start", params).await?;
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
