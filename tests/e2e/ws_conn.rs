//! One of several connections to one server over its websocket, driven synchronously like
//! [`crate::client::Client`] drives a stdio server.

use std::collections::VecDeque;
use std::net::SocketAddr;

use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::app_server_ws::{initialize, next_json, open};

/// One of several connections to the same server (a websocket), driven synchronously like
/// [`crate::client::Client`].
pub(crate) struct Conn {
    runtime: tokio::runtime::Runtime,
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: i64,
    backlog: VecDeque<Value>,
}

impl Conn {
    pub(crate) fn open(addr: SocketAddr) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let mut ws = runtime.block_on(open(addr, None)).expect("upgrade");
        runtime.block_on(initialize(&mut ws));
        Self {
            runtime,
            ws,
            next_id: 100,
            backlog: VecDeque::new(),
        }
    }

    /// What was received and not yet taken, in order.
    pub(crate) fn backlog(&self) -> &VecDeque<Value> {
        &self.backlog
    }

    /// Sends `message` as one text frame.
    pub(crate) fn send(&mut self, message: &Value) {
        self.runtime
            .block_on(self.ws.send(Message::text(message.to_string())))
            .expect("send");
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"id": id, "method": method, "params": params}));
        loop {
            let message = self.runtime.block_on(next_json(&mut self.ws));
            if message["id"] == id && message.get("method").is_none() {
                return match message.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(message["result"].clone()),
                };
            }
            self.backlog.push_back(message);
        }
    }

    pub(crate) fn call(&mut self, method: &str, params: Value) -> Value {
        self.request(method, params)
            .unwrap_or_else(|error| panic!("{method} failed: {error}"))
    }

    pub(crate) fn call_err(&mut self, method: &str, params: Value) -> Value {
        match self.request(method, params) {
            Ok(result) => panic!("{method} should have failed, got {result}"),
            Err(error) => error,
        }
    }

    /// The params of the first notification `method` (waiting for it); removed from the backlog.
    pub(crate) fn notification(&mut self, method: &str) -> Value {
        self.first(|n| n["method"] == json!(method))["params"].clone()
    }

    /// The id and params of the first server request `method` (waiting for it); removed from
    /// the backlog.
    pub(crate) fn server_request(&mut self, method: &str) -> (Value, Value) {
        let found = self.first(|n| n["method"] == json!(method) && n.get("id").is_some());
        (found["id"].clone(), found["params"].clone())
    }

    /// The first message `wanted` picks (waiting for it), removed from the backlog.
    fn first(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            if let Some(at) = self.backlog.iter().position(&wanted) {
                return self.backlog.remove(at).expect("position is valid");
            }
            let message = self.runtime.block_on(next_json(&mut self.ws));
            self.backlog.push_back(message);
        }
    }

    /// Every message up to and including `turn/completed`, in order.
    pub(crate) fn until_turn_completed(&mut self) -> Vec<Value> {
        let completed = self.notification("turn/completed");
        let mut all: Vec<Value> = self.backlog.drain(..).collect();
        all.push(json!({"method": "turn/completed", "params": completed}));
        all
    }

    pub(crate) fn start_turn(&mut self, thread: &str, text: &str) -> String {
        let answer = self.call(
            "turn/start",
            json!({"threadId": thread, "input": [{"type": "text", "text": text}]}),
        );
        answer["turn"]["id"].as_str().expect("turn id").to_owned()
    }
}
