//! One client connection's state: handshake, negotiated capabilities, and the server→client
//! requests waiting for an answer.

// On the async path: no blocking call here (see clippy.toml); code that runs on the blocking
// pool or a thread of its own says so where it allows one.
#![deny(clippy::disallowed_methods)]

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use agentwire_protocol::RequestId;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::handler::ConnectionId;
use crate::outbound::{Closed, Outbound};
use crate::record::{Direction, Recorder};

/// What the client negotiated in `initialize`.
#[derive(Debug, Clone, Default)]
pub struct Negotiated {
    /// `capabilities.experimentalApi`.
    pub experimental: bool,
    /// `capabilities.optOutNotificationMethods`.
    pub opted_out: HashSet<String>,
}

/// Where the handshake stands.
#[derive(Debug, Clone)]
pub enum Handshake {
    /// Nothing but `initialize` is accepted yet.
    New,
    /// `initialize` was answered.
    Initialized(Arc<Negotiated>),
}

/// How the client answered a server→client request.
#[derive(Debug, Clone)]
pub enum ClientAnswer {
    /// `{"result": …}`.
    Result(Value),
    /// `{"error": …}`.
    Error(Value),
}

/// A connection, shared by its transport and by whoever sends to it.
pub struct Connection {
    id: ConnectionId,
    outbound: Box<dyn Outbound>,
    handshake: Mutex<Handshake>,
    next_request_id: AtomicI64,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<ClientAnswer>>>,
    recorder: Option<Arc<Recorder>>,
    /// The transport's name and the `traceparent` its opening carried (telemetry).
    origin: OnceLock<Origin>,
}

/// Where a connection came from, for its requests' spans.
#[derive(Debug)]
struct Origin {
    transport: &'static str,
    traceparent: Option<String>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // No code holding these locks can panic half-way; recover the data if one ever did.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Connection {
    /// A new connection that has not completed the handshake.
    pub fn new(id: ConnectionId, outbound: Box<dyn Outbound>) -> Self {
        Self {
            id,
            outbound,
            handshake: Mutex::new(Handshake::New),
            next_request_id: AtomicI64::new(0),
            pending: Mutex::new(HashMap::new()),
            recorder: None,
            origin: OnceLock::new(),
        }
    }

    /// Says which transport serves the connection (`stdio`, `ws`, `unix`) and the W3C
    /// `traceparent` its opening carried (a websocket upgrade's header), the parent of its
    /// requests' spans when they bring none. Only the first call counts.
    pub fn set_origin(&self, transport: &'static str, traceparent: Option<String>) {
        let _ = self.origin.set(Origin {
            transport,
            traceparent,
        });
    }

    /// The transport serving the connection (`unknown` before [`Self::set_origin`]).
    pub fn transport(&self) -> &'static str {
        self.origin
            .get()
            .map_or("unknown", |origin| origin.transport)
    }

    /// The `traceparent` of the connection's opening, if it had one.
    pub fn traceparent(&self) -> Option<&str> {
        self.origin.get()?.traceparent.as_deref()
    }

    /// Records this connection's messages with `recorder` (`--record`).
    pub fn recorded(mut self, recorder: Option<Arc<Recorder>>) -> Self {
        self.recorder = recorder;
        self
    }

    /// Records a message read from the client, before it is handled.
    pub fn record_inbound(&self, message: &[u8]) {
        if let Some(recorder) = &self.recorder {
            recorder.record(self.id, Direction::Inbound, message);
        }
    }

    /// The connection's id.
    pub fn id(&self) -> ConnectionId {
        self.id
    }

    /// Sends one message.
    pub fn send(&self, message: Vec<u8>) -> Result<(), Closed> {
        if let Some(recorder) = &self.recorder {
            recorder.record(self.id, Direction::Outbound, &message);
        }
        self.outbound.send(message)
    }

    /// What the transport holds for the client and has not written yet (see
    /// [`Backlog`](crate::outbound::Backlog)); `None` when it holds nothing.
    pub fn backlog(&self) -> Option<&crate::outbound::Backlog> {
        self.outbound.backlog()
    }

    /// Closes the connection and fails every server→client request still waiting on it.
    pub fn close(&self) {
        self.outbound.close();
        lock(&self.pending).clear();
    }

    /// What was negotiated, once initialized.
    pub fn negotiated(&self) -> Option<Arc<Negotiated>> {
        match &*lock(&self.handshake) {
            Handshake::Initialized(n) => Some(n.clone()),
            Handshake::New => None,
        }
    }

    /// Completes the handshake; `false` if it was already complete.
    pub fn initialize(&self, negotiated: Negotiated) -> bool {
        let mut handshake = lock(&self.handshake);
        match *handshake {
            Handshake::Initialized(_) => false,
            Handshake::New => {
                *handshake = Handshake::Initialized(Arc::new(negotiated));
                true
            }
        }
    }

    /// Whether a notification of `method` may be sent here.
    pub fn wants_notification(&self, method: &str, experimental: bool) -> bool {
        match self.negotiated() {
            Some(n) => (!experimental || n.experimental) && !n.opted_out.contains(method),
            None => false,
        }
    }

    /// Registers a server→client request and returns its id and the receiver of its answer.
    pub fn register_request(&self) -> (RequestId, oneshot::Receiver<ClientAnswer>) {
        let id = RequestId::Integer(self.next_request_id.fetch_add(1, Ordering::Relaxed));
        let (sender, receiver) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), sender);
        (id, receiver)
    }

    /// Forgets a server→client request (answered elsewhere, timed out or cancelled).
    pub fn forget_request(&self, id: &RequestId) {
        lock(&self.pending).remove(id);
    }

    /// Delivers the client's answer to a server→client request; `false` if no request with that
    /// id is waiting.
    pub fn answer(&self, id: &RequestId, answer: ClientAnswer) -> bool {
        match lock(&self.pending).remove(id) {
            Some(sender) => sender.send(answer).is_ok(),
            None => false,
        }
    }
}
