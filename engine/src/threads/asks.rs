//! Server requests (approvals, user input, client tool calls) across the servers of a shared
//! store. The server running a turn asks its own followers of the thread and, through the relay,
//! those on the other servers: each of them puts the request to its followers (under request
//! ids of its own) and answers with the first well-formed result, or why there is none. The first
//! answer from anywhere wins; the rest are withdrawn (`serverRequest/resolved` everywhere).
//! A connection here that starts following the thread while another server's request is being
//! put to the followers here is asked too ([`Asks::joined`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use agentwire_protocol::method::{MethodInfo, MethodVisitor, Notification, Request};
use agentwire_runtime::{ConnectionId, Peer};
use agentwire_store::Relay;
use agentwire_support::lock;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{Notify, mpsc};

/// Answers one ask may get (one per server following the thread, at most).
const ANSWERS: usize = 64;

/// Asks from other servers being put to the followers here at once; more are refused.
const MAX_ASKING: usize = 1024;

/// Another server's answer to an ask: a result to check, or why it has none.
type Answer = Result<Value, String>;

/// Per ask of this server, where the other servers' answers go.
type Waiting = Arc<Mutex<HashMap<String, mpsc::Sender<Answer>>>>;

/// The asks of this server and of the others.
#[derive(Debug, Default)]
pub(crate) struct Asks {
    /// Asked here: where the other servers' answers to each ask go.
    waiting: Waiting,
    /// Asked elsewhere and put to the followers here: the task asking them, per ask.
    asking: Arc<Mutex<HashMap<String, Putting>>>,
    /// The runtime the followers here are served on (taken when the first one subscribes).
    runtime: OnceLock<tokio::runtime::Handle>,
}

/// Another server's ask being put to the followers here.
#[derive(Debug)]
struct Putting {
    thread_id: String,
    task: tokio::task::AbortHandle,
    joiners: Arc<Joiners>,
}

/// Connections that started following a thread while an ask of it is being put here: the task
/// putting it asks them too. Each connection is held once, so this is bounded by the
/// connections.
#[derive(Debug, Default)]
struct Joiners {
    peers: Mutex<Vec<Peer>>,
    arrived: Notify,
}

impl Joiners {
    fn add(&self, peers: impl IntoIterator<Item = Peer>) {
        let mut held = lock(&self.peers);
        for peer in peers {
            if !held
                .iter()
                .any(|p| p.connection_id() == peer.connection_id())
            {
                held.push(peer);
            }
        }
        drop(held);
        self.arrived.notify_one();
    }

    fn take(&self) -> Vec<Peer> {
        std::mem::take(&mut *lock(&self.peers))
    }
}

/// An ask of this server waiting for the other servers' answers. Dropping it withdraws it.
#[derive(Debug)]
pub(crate) struct RemoteAsk {
    id: String,
    thread_id: String,
    /// The request put to the other servers' followers and its encoded params; `None` for a
    /// steer, which only the server running the turn answers (nothing to put again or withdraw).
    request: Option<(&'static str, Vec<u8>)>,
    relay: Arc<dyn Relay>,
    answers: mpsc::Receiver<Answer>,
    waiting: Waiting,
}

impl RemoteAsk {
    /// The next answer of another server: a result to check, or why it has none.
    pub(crate) async fn next(&mut self) -> Option<Answer> {
        self.answers.recv().await
    }

    /// Asks again, for a server that started following the thread since.
    pub(crate) fn again(&self) {
        if let Some((method, params)) = &self.request {
            self.relay
                .ask(&self.thread_id, &self.id, method, params.clone());
        }
    }
}

impl Drop for RemoteAsk {
    fn drop(&mut self) {
        lock(&self.waiting).remove(&self.id);
        if self.request.is_some() {
            self.relay.withdraw(&self.thread_id, &self.id);
        }
    }
}

impl Asks {
    /// Remembers the runtime the caller runs on, for the asks of other servers.
    pub(crate) fn note_runtime(&self) {
        if self.runtime.get().is_none()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            let _ = self.runtime.set(handle);
        }
    }

    /// Asks the other servers' followers of `thread_id` the request `method` with the encoded
    /// `params`, through `relay`.
    pub(crate) fn ask(
        &self,
        relay: Arc<dyn Relay>,
        thread_id: &str,
        method: &'static str,
        params: Vec<u8>,
    ) -> RemoteAsk {
        let ask = self.open(relay, thread_id, Some((method, params)));
        ask.again();
        ask
    }

    /// Passes `turn/steer` (`params`, encoded) of `thread_id` to the other servers through
    /// `relay`; the one running the turn answers.
    pub(crate) fn steer(
        &self,
        relay: Arc<dyn Relay>,
        thread_id: &str,
        params: Vec<u8>,
    ) -> RemoteAsk {
        let ask = self.open(relay, thread_id, None);
        ask.relay.steer(thread_id, &ask.id, params);
        ask
    }

    /// A new ask of `thread_id` (putting `request` to followers, if any), registered for the
    /// other servers' answers before anything is published.
    fn open(
        &self,
        relay: Arc<dyn Relay>,
        thread_id: &str,
        request: Option<(&'static str, Vec<u8>)>,
    ) -> RemoteAsk {
        let id = agentwire_store::meta::new_id();
        let (answer, answers) = mpsc::channel(ANSWERS);
        lock(&self.waiting).insert(id.clone(), answer);
        RemoteAsk {
            id,
            thread_id: thread_id.to_owned(),
            request,
            relay,
            answers,
            waiting: Arc::clone(&self.waiting),
        }
    }

    /// Another server's answer to ask `ask` of this one.
    pub(crate) fn answered(&self, ask: &str, answer: Answer) {
        if let Some(waiting) = lock(&self.waiting).get(ask) {
            let _ = waiting.try_send(answer);
        }
    }

    /// Puts ask `ask` of another server (the request `method` with `params`) to `peers`, the
    /// followers of `thread_id` here, and answers it through `relay` with the first well-formed
    /// result or why there is none. An ask already being put is not put twice: those of `peers`
    /// not asked yet are asked too.
    pub(crate) fn put(
        &self,
        relay: Arc<dyn Relay>,
        thread_id: &str,
        (ask, method, params): (String, &'static MethodInfo, Box<RawValue>),
        peers: Vec<Peer>,
    ) {
        let mut asking = lock(&self.asking);
        if let Some(putting) = asking.get(&ask) {
            putting.joiners.add(peers);
            return;
        }
        let refused = if peers.is_empty() {
            Some("no client follows the thread on that server")
        } else if asking.len() >= MAX_ASKING {
            Some("that server has too many requests from other servers open")
        } else {
            None
        };
        let runtime = match (refused, self.runtime.get()) {
            (None, Some(runtime)) => runtime,
            (refused, _) => {
                let why = refused.unwrap_or("that server has no runtime to ask on");
                relay.answer(thread_id, &ask, Err(why.to_owned()));
                return;
            }
        };
        let joiners = Arc::new(Joiners::default());
        joiners.add(peers);
        let registry = Arc::clone(&self.asking);
        let id = ask.clone();
        let (thread, from) = (thread_id.to_owned(), Arc::clone(&joiners));
        // The task removes itself once done; `asking` is held until it is registered.
        // Cleaned up after a panic: the ask is forgotten here and the asking server is
        // answered with an error, so neither waits for an answer that never comes.
        let cleanup = {
            let (registry, id, thread, relay) = (
                Arc::clone(&registry),
                id.clone(),
                thread.clone(),
                relay.clone(),
            );
            move || {
                lock(&registry).remove(&id);
                relay.answer(
                    &thread,
                    &id,
                    Err("the server asked failed while putting the request".to_owned()),
                );
            }
        };
        let task = agentwire_support::supervised::spawn_on(
            runtime,
            "relayed ask",
            async move {
                let answer = first_answer(method, &thread, &params, &from).await;
                lock(&registry).remove(&id);
                relay.answer(&thread, &id, answer);
            },
            cleanup,
        );
        let putting = Putting {
            thread_id: thread_id.to_owned(),
            task: task.abort_handle(),
            joiners,
        };
        asking.insert(ask, putting);
    }

    /// `peer`'s connection started following `thread_id` and has its answer: the asks of other
    /// servers being put to the thread's followers here are put to it too.
    pub(crate) fn joined(&self, thread_id: &str, peer: &Peer) {
        for putting in lock(&self.asking).values() {
            if putting.thread_id == thread_id {
                putting.joiners.add([peer.clone()]);
            }
        }
    }

    /// Ask `ask` of another server has its answer: its requests here are withdrawn.
    pub(crate) fn withdraw(&self, ask: &str) {
        if let Some(putting) = lock(&self.asking).remove(ask) {
            putting.task.abort();
        }
    }
}

/// Puts the request `method` with `params` of `thread_id` to every connection `joiners` holds,
/// now or later, each once: the first well-formed result, or why there is none once every
/// connection asked has failed (a result that does not decode as the method's response
/// counts as a failure, not the answer). The requests still waiting are withdrawn when it returns.
async fn first_answer(
    method: &'static MethodInfo,
    thread_id: &str,
    params: &RawValue,
    joiners: &Joiners,
) -> Answer {
    let mut asked: Vec<ConnectionId> = Vec::new();
    let mut pending = FuturesUnordered::new();
    let mut last = String::from("no client answered");
    loop {
        // Armed before the joiners are taken, so that none added after is missed.
        let arrived = joiners.arrived.notified();
        for peer in joiners.take() {
            if !asked.contains(&peer.connection_id()) {
                asked.push(peer.connection_id());
                pending.push(async move { peer.request_encoded(method, thread_id, params).await });
            }
        }
        if pending.is_empty() {
            return Err(format!("{}: {last}", method.name));
        }
        tokio::select! {
            Some(answer) = pending.next() => match answer {
                // A malformed result is not the answer: another connection's may still come.
                Ok(result) => match malformed(method, &result) {
                    None => return Ok(result),
                    Some(error) => last = format!("a client's answer is malformed: {error}"),
                },
                Err(error) => last = error.to_string(),
            },
            () = arrived => {}
        }
    }
}

/// Why `result` is not a well-formed answer to the server request `method` (it does not
/// decode as the method's response type), or `None` when it is one.
fn malformed(method: &MethodInfo, result: &Value) -> Option<String> {
    /// Decodes `result` as the response of the server request named `name`, once found.
    struct Check<'a> {
        name: &'a str,
        result: &'a Value,
        verdict: Option<Option<String>>,
    }
    impl MethodVisitor for Check<'_> {
        fn server_request<M: Request>(&mut self) {
            if M::NAME == self.name {
                let decoded = M::Response::deserialize(self.result);
                self.verdict = Some(decoded.err().map(|e| e.to_string()));
            }
        }
        fn client_request<M: Request>(&mut self) {}
        fn server_notification<M: Notification>(&mut self) {}
        fn client_notification<M: Notification>(&mut self) {}
    }
    let mut check = Check {
        name: method.name,
        result,
        verdict: None,
    };
    agentwire_protocol::methods::visit_methods(&mut check);
    check
        .verdict
        .unwrap_or_else(|| Some(format!("{} is not a server request", method.name)))
}

#[cfg(test)]
mod tests {
    use agentwire_protocol::methods::{
        CommandExecutionRequestApproval, ThreadList, ToolRequestUserInput,
    };
    use serde_json::json;

    use super::malformed;

    #[test]
    fn an_answer_counts_only_when_it_decodes_as_the_requests_response() {
        let approval = &CommandExecutionRequestApproval::INFO;
        assert_eq!(malformed(approval, &json!({"decision": "accept"})), None);
        for bad in [json!({"decision": "maybe"}), json!("accept"), json!(null)] {
            let why = malformed(approval, &bad).expect("malformed");
            assert!(!why.is_empty(), "{bad}");
        }
        // The same decision is no answer to another request.
        assert!(malformed(&ToolRequestUserInput::INFO, &json!({"decision": "accept"})).is_some());
        let why = malformed(&ThreadList::INFO, &json!({})).expect("not a server request");
        assert!(why.contains("thread/list is not a server request"), "{why}");
    }
}
