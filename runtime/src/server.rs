//! The transport-independent core: what happens to each incoming message.
//!
//! For every line or frame: parse (→ -32700), read the envelope (→ -32600), enforce the
//! handshake (`Not initialized`, `Already initialized`), look the method up in the generated
//! table (→ -32601), gate experimental methods, validate params against the method's schema
//! (→ -32602), take an in-flight slot (→ -32001 when full) and dispatch to the [`Handler`].
//! Requests run concurrently except that requests naming the same `threadId` run in arrival
//! order. A handler that panics answers -32603 and the server keeps serving.

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use agentwire_protocol::jsonrpc::error_codes;
use agentwire_protocol::method::{Direction, Method};
use agentwire_protocol::methods::{self, Initialize, Initialized};
use agentwire_protocol::{InitializeParams, RequestId};
use futures_util::FutureExt;
use serde_json::{Map, Value};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::RuntimeConfig;
use crate::connection::{ClientAnswer, Connection, Negotiated};
use crate::dispatch::{Handler, dispatch_notification, dispatch_request};
use crate::handler::{HandlerError, NotificationContext, RequestContext};
use crate::outbound::{error_message, error_object, result_message};
use crate::peer::{Hub, Peer};
use crate::validate::Validators;

type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The runtime: one per process, shared by every transport and connection.
pub struct Server<H: Handler> {
    shared: Arc<Shared<H>>,
}

impl<H: Handler> Clone for Server<H> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

struct Shared<H> {
    handler: Arc<H>,
    config: RuntimeConfig,
    validators: Validators,
    hub: Arc<Hub>,
    in_flight: Arc<Semaphore>,
    /// Jobs waiting behind a running request on the same thread id; a key is present while a
    /// worker drains it.
    ordered: Mutex<HashMap<String, VecDeque<Job>>>,
    runtime: tokio::runtime::Handle,
}

/// The message could not be handled; what to answer.
struct Refusal {
    id: Option<RequestId>,
    code: i64,
    message: String,
    data: Option<Value>,
}

impl Refusal {
    fn new(id: Option<RequestId>, code: i64, message: impl Into<String>) -> Self {
        Self {
            id,
            code,
            message: message.into(),
            data: None,
        }
    }
}

impl<H: Handler> Server<H> {
    /// A server that dispatches to `handler` and spawns request work on `runtime`.
    pub fn new(handler: H, config: RuntimeConfig, runtime: tokio::runtime::Handle) -> Self {
        let hub = Arc::new(Hub::new(config.server_request_timeout));
        let in_flight = Arc::new(Semaphore::new(config.max_in_flight_requests));
        Self {
            shared: Arc::new(Shared {
                handler: Arc::new(handler),
                validators: Validators::new(),
                config,
                hub,
                in_flight,
                ordered: Mutex::new(HashMap::new()),
                runtime,
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &RuntimeConfig {
        &self.shared.config
    }

    /// Every connection.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.shared.hub
    }

    /// The handler.
    pub fn handler(&self) -> &Arc<H> {
        &self.shared.handler
    }

    /// Answers a line or frame that exceeded the size limit.
    pub fn refuse_oversized(&self, connection: &Connection, bytes: usize) {
        let limit = self.shared.config.max_message_bytes;
        tracing::warn!(
            connection = connection.id().0,
            bytes,
            limit,
            "message over the size limit refused"
        );
        let message = format!("Message of {bytes} bytes exceeds the limit of {limit} bytes");
        self.send_error(
            connection,
            Refusal::new(None, error_codes::INVALID_REQUEST, message),
        );
    }

    /// Handles one complete incoming message of `connection`.
    pub fn handle_message(&self, connection: &Arc<Connection>, bytes: &[u8]) {
        if let Err(refusal) = self.try_handle(connection, bytes) {
            self.send_error(connection, refusal);
        }
    }

    fn send_error(&self, connection: &Connection, refusal: Refusal) {
        let error = error_object(refusal.code, refusal.message, refusal.data);
        if connection
            .send(error_message(refusal.id.as_ref(), &error))
            .is_err()
        {
            self.shared.hub.close(connection.id());
        }
    }

    fn try_handle(&self, connection: &Arc<Connection>, bytes: &[u8]) -> Result<(), Refusal> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            Refusal::new(None, error_codes::PARSE_ERROR, format!("Parse error: {e}"))
        })?;
        let Value::Object(mut object) = value else {
            return Err(Refusal::new(
                None,
                error_codes::INVALID_REQUEST,
                "Invalid request: expected a JSON object",
            ));
        };
        let id = match object.remove("id") {
            None => None,
            Some(raw) => Some(serde_json::from_value::<RequestId>(raw).map_err(|_| {
                Refusal::new(
                    None,
                    error_codes::INVALID_REQUEST,
                    "Invalid request: `id` must be a string or an integer",
                )
            })?),
        };
        let method = match object.remove("method") {
            None => None,
            Some(Value::String(method)) => Some(method),
            Some(_) => {
                return Err(Refusal::new(
                    id,
                    error_codes::INVALID_REQUEST,
                    "Invalid request: `method` must be a string",
                ));
            }
        };
        let params = object.remove("params");
        match (id, method) {
            (Some(id), Some(method)) => self.request(connection, id, method, params),
            (None, Some(method)) => {
                self.notification(connection, &method, params);
                Ok(())
            }
            (Some(id), None) => self.client_answer(connection, id, object),
            (None, None) => Err(Refusal::new(
                None,
                error_codes::INVALID_REQUEST,
                "Invalid request: no `method` and no `id`",
            )),
        }
    }

    fn request(
        &self,
        connection: &Arc<Connection>,
        id: RequestId,
        method: String,
        params: Option<Value>,
    ) -> Result<(), Refusal> {
        if method == Initialize::NAME {
            return self.initialize(connection, id, params);
        }
        let Some(negotiated) = connection.negotiated() else {
            return Err(Refusal::new(
                Some(id),
                error_codes::INVALID_REQUEST,
                "Not initialized",
            ));
        };
        let info = match methods::find(&method) {
            Some(info) if info.direction == Direction::ClientRequest => info,
            _ => {
                return Err(Refusal::new(
                    Some(id),
                    error_codes::METHOD_NOT_FOUND,
                    format!("Method not found: {method}"),
                ));
            }
        };
        if info.experimental && !negotiated.experimental {
            return Err(Refusal::new(
                Some(id),
                error_codes::INVALID_REQUEST,
                format!("{method} requires experimentalApi capability"),
            ));
        }
        if let Err(rejected) = self.shared.validators.check(&method, params.as_ref()) {
            return Err(Refusal {
                data: Some(rejected.to_data(&method)),
                message: format!("Invalid params for {method}: {}", rejected.summary()),
                code: error_codes::INVALID_PARAMS,
                id: Some(id),
            });
        }
        let Ok(permit) = self.shared.in_flight.clone().try_acquire_owned() else {
            tracing::warn!(
                connection = connection.id().0,
                method,
                "ingress full: request refused"
            );
            return Err(Refusal::new(
                Some(id),
                error_codes::SERVER_OVERLOADED,
                "Server overloaded; retry later.",
            ));
        };
        let thread_key = params
            .as_ref()
            .and_then(|p| p.get("threadId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let job = self.request_job(connection.clone(), id, method, params, permit);
        match thread_key {
            Some(key) => self.run_ordered(key, job),
            None => {
                self.shared.runtime.spawn(job);
            }
        }
        Ok(())
    }

    fn request_job(
        &self,
        connection: Arc<Connection>,
        id: RequestId,
        method: String,
        params: Option<Value>,
        permit: OwnedSemaphorePermit,
    ) -> Job {
        let shared = self.shared.clone();
        Box::pin(async move {
            let context = RequestContext {
                peer: Peer::new(shared.hub.clone(), connection.clone()),
                request_id: id.clone(),
            };
            let call = dispatch_request(&*shared.handler, context, &method, params);
            let outcome = AssertUnwindSafe(call).catch_unwind().await;
            let message = match outcome {
                Ok(Ok(result)) => result_message(&id, &result),
                Ok(Err(error)) => error_message(Some(&id), &error.to_error_object()),
                Err(panic) => {
                    let reason = panic_message(&panic);
                    tracing::error!(
                        connection = connection.id().0,
                        method,
                        reason,
                        "handler panicked"
                    );
                    let error = HandlerError::internal(format!(
                        "Internal error: the handler for {method} failed"
                    ));
                    error_message(Some(&id), &error.to_error_object())
                }
            };
            if connection.send(message).is_err() {
                shared.hub.close(connection.id());
            }
            drop(permit);
        })
    }

    /// Runs `job` after every job already queued for `key`.
    fn run_ordered(&self, key: String, job: Job) {
        let mut ordered = self
            .shared
            .ordered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(queue) = ordered.get_mut(&key) {
            queue.push_back(job);
            return;
        }
        ordered.insert(key.clone(), VecDeque::new());
        drop(ordered);
        let shared = self.shared.clone();
        self.shared.runtime.spawn(async move {
            job.await;
            loop {
                let next = {
                    let mut ordered = shared
                        .ordered
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner);
                    match ordered.get_mut(&key).and_then(VecDeque::pop_front) {
                        Some(next) => next,
                        None => {
                            ordered.remove(&key);
                            return;
                        }
                    }
                };
                next.await;
            }
        });
    }

    fn initialize(
        &self,
        connection: &Arc<Connection>,
        id: RequestId,
        params: Option<Value>,
    ) -> Result<(), Refusal> {
        if connection.negotiated().is_some() {
            return Err(Refusal::new(
                Some(id),
                error_codes::INVALID_REQUEST,
                "Already initialized",
            ));
        }
        if let Err(rejected) = self
            .shared
            .validators
            .check(Initialize::NAME, params.as_ref())
        {
            return Err(Refusal {
                data: Some(rejected.to_data(Initialize::NAME)),
                message: format!(
                    "Invalid params for {}: {}",
                    Initialize::NAME,
                    rejected.summary()
                ),
                code: error_codes::INVALID_PARAMS,
                id: Some(id),
            });
        }
        let params: InitializeParams = serde_json::from_value(params.unwrap_or(Value::Null))
            .map_err(|e| {
                Refusal::new(
                    Some(id.clone()),
                    error_codes::INVALID_PARAMS,
                    format!("Invalid params for initialize: {e}"),
                )
            })?;
        let capabilities = params.capabilities.as_ref();
        let negotiated = Negotiated {
            experimental: capabilities.is_some_and(|c| c.experimental_api),
            opted_out: capabilities
                .and_then(|c| c.opt_out_notification_methods.clone())
                .unwrap_or_default()
                .into_iter()
                .collect::<HashSet<_>>(),
        };
        let response = crate::initialize::response(&params.client_info, &self.shared.config.home);
        // Answer first, then mark the connection initialized, so that no notification can
        // overtake the response.
        if connection.send(result_message(&id, &response)).is_err() {
            self.shared.hub.close(connection.id());
            return Ok(());
        }
        connection.initialize(negotiated);
        tracing::info!(connection = connection.id().0, client = %params.client_info.name, version = %params.client_info.version, "initialized");
        Ok(())
    }

    fn notification(&self, connection: &Arc<Connection>, method: &str, params: Option<Value>) {
        if method == Initialized::NAME || connection.negotiated().is_none() {
            return;
        }
        match methods::find(method) {
            Some(info) if info.direction == Direction::ClientNotification => {}
            _ => {
                tracing::debug!(
                    connection = connection.id().0,
                    method,
                    "unknown notification ignored"
                );
                return;
            }
        }
        let shared = self.shared.clone();
        let context = NotificationContext {
            peer: Peer::new(shared.hub.clone(), connection.clone()),
        };
        let method = method.to_owned();
        self.shared.runtime.spawn(async move {
            let call = dispatch_notification(&*shared.handler, context, &method, params);
            match AssertUnwindSafe(call).catch_unwind().await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::warn!(method, %error, "notification refused"),
                Err(panic) => tracing::error!(
                    method,
                    reason = panic_message(&panic),
                    "notification handler panicked"
                ),
            }
        });
    }

    fn client_answer(
        &self,
        connection: &Arc<Connection>,
        id: RequestId,
        mut object: Map<String, Value>,
    ) -> Result<(), Refusal> {
        let answer = match (object.remove("result"), object.remove("error")) {
            (Some(result), None) => ClientAnswer::Result(result),
            (None, Some(error)) => ClientAnswer::Error(error),
            _ => {
                return Err(Refusal::new(
                    Some(id),
                    error_codes::INVALID_REQUEST,
                    "Invalid request: a response needs exactly one of `result` and `error`",
                ));
            }
        };
        if !connection.answer(&id, answer) {
            tracing::warn!(connection = connection.id().0, %id, "answer to an unknown or settled server request ignored");
        }
        Ok(())
    }

    /// Waits until every request in flight has been answered, at most the shutdown grace.
    pub async fn drain(&self) {
        let all = u32::try_from(self.shared.config.max_in_flight_requests).unwrap_or(u32::MAX);
        let wait = self.shared.in_flight.acquire_many(all);
        if tokio::time::timeout(self.shared.config.shutdown_grace, wait)
            .await
            .is_err()
        {
            tracing::warn!("shutdown: requests still running after the grace period");
        }
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
