//! The transport-independent core: what happens to each incoming message.
//!
//! For every line or frame: parse (→ -32700), read the envelope (→ -32600), enforce the
//! handshake (`Not initialized`, `Already initialized`), look the method up in the generated
//! table (→ -32601), gate experimental methods, validate params against the method's schema
//! (→ -32602), take an in-flight slot (→ -32001 when full) and dispatch to the [`Handler`].
//! Requests run concurrently except that requests naming the same `threadId` run in arrival
//! order. A handler that panics answers -32603 and the server keeps serving.
//!
//! Starting a request's work: [`Server::handle_message`] spawns it onto the runtime. A
//! transport that runs as a task on the server's own current-thread runtime (stdio) uses
//! [`Server::handle_message_inline`] instead: the work is polled once right there and only
//! spawned if it is not finished. Cheap requests then complete without crossing threads or
//! queueing a task, and their answers reach the transport while it is still handling the
//! chunk of input they came in, so it can write them together.

// On the async path: no blocking call here (see clippy.toml); code that runs on the blocking
// pool or a thread of its own says so where it allows one.
#![deny(clippy::disallowed_methods)]

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Waker};
use std::time::Duration;

use agentwire_protocol::jsonrpc::error_codes;
use agentwire_protocol::method::{Direction, Method};
use agentwire_protocol::methods::{self, Initialize};
use agentwire_protocol::{InitializeParams, RequestId};
use futures_util::FutureExt;
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::RuntimeConfig;
use crate::connection::{ClientAnswer, Connection, Negotiated};
use crate::dispatch::{Handler, dispatch_notification, dispatch_request};
use crate::envelope::{self, Envelope, Unreadable};
use crate::handler::{Answered, HandlerError, NotificationContext, RequestContext, SettleOnDrop};
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

/// How the work of a request or notification is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// Spawned onto the runtime.
    Spawn,
    /// Polled once by the caller, a task of the server's current-thread runtime; spawned only
    /// if still pending. On a current-thread runtime nothing else runs while the caller polls,
    /// so tasks the handler spawns (e.g. notifications it sends after its answer) still run
    /// after the answer is sent, exactly as when the work itself is spawned.
    Inline,
}

/// Polls `job` once; `true` if it finished. A pending job is spawned afterwards and polled
/// again by the runtime with a real waker, so the no-op waker used here loses nothing: any
/// future re-registers its waker on each poll.
fn poll_once(job: &mut Job) -> bool {
    let mut context = Context::from_waker(Waker::noop());
    job.as_mut().poll(&mut context).is_ready()
}

/// The message could not be handled; what to answer.
struct Refusal {
    id: Option<RequestId>,
    code: i64,
    message: String,
    data: Option<Value>,
}

impl Refusal {
    /// -32602 for params that failed `method`'s schema, with every issue in `data`.
    fn invalid_params(
        id: RequestId,
        method: &str,
        rejected: &crate::validate::ParamsRejected,
    ) -> Self {
        Self {
            data: Some(rejected.to_data(method)),
            message: format!("Invalid params for {method}: {}", rejected.summary()),
            code: error_codes::INVALID_PARAMS,
            id: Some(id),
        }
    }

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
        if let Some(recorder) = &config.recorder {
            hub.record_with(recorder.clone());
        }
        let in_flight = Arc::new(Semaphore::new(config.max_in_flight_requests));
        let handler = Arc::new(handler);
        // Weak: the handler keeps peers, and so the hub, alive.
        let told = Arc::downgrade(&handler);
        hub.on_close(runtime.clone(), move |connection| {
            if let Some(handler) = told.upgrade() {
                handler.connection_closed(connection);
            }
        });
        Self {
            shared: Arc::new(Shared {
                handler,
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

    /// The runtime request work is spawned on.
    pub fn runtime(&self) -> &tokio::runtime::Handle {
        &self.shared.runtime
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

    /// Handles one complete incoming message of `connection`; request and notification work is
    /// spawned onto the runtime.
    pub fn handle_message(&self, connection: &Arc<Connection>, bytes: &[u8]) {
        connection.record_inbound(bytes);
        if let Err(refusal) = self.try_handle(connection, bytes, Start::Spawn) {
            self.send_error(connection, refusal);
        }
    }

    /// Like [`Server::handle_message`], for a caller running as a task on this server's
    /// runtime: when that runtime is current-thread, request and notification work is polled
    /// once here and only spawned if it is still pending (see `Start::Inline`). Work that
    /// finishes at once has answered by the time this returns. Anywhere else (a multi-thread
    /// runtime, no runtime at all) it behaves exactly like [`Server::handle_message`].
    pub fn handle_message_inline(&self, connection: &Arc<Connection>, bytes: &[u8]) {
        connection.record_inbound(bytes);
        use tokio::runtime::{Handle, RuntimeFlavor};
        // Inside a task of a current-thread runtime: the thread polling us is the only one
        // that runs that runtime's tasks.
        let current_thread =
            |handle: &Handle| handle.runtime_flavor() == RuntimeFlavor::CurrentThread;
        let on_own_runtime = current_thread(&self.shared.runtime)
            && Handle::try_current().is_ok_and(|handle| current_thread(&handle))
            && tokio::task::try_id().is_some();
        let start = if on_own_runtime {
            Start::Inline
        } else {
            Start::Spawn
        };
        if let Err(refusal) = self.try_handle(connection, bytes, start) {
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

    fn try_handle(
        &self,
        connection: &Arc<Connection>,
        bytes: &[u8],
        start: Start,
    ) -> Result<(), Refusal> {
        let envelope = Envelope::read(bytes).map_err(|unreadable| {
            let code = match unreadable {
                Unreadable::NotJson(_) => error_codes::PARSE_ERROR,
                Unreadable::NotAnObject => error_codes::INVALID_REQUEST,
            };
            Refusal::new(None, code, unreadable.to_string())
        })?;
        let id = match envelope.id {
            None => None,
            Some(raw) => Some(envelope::request_id(raw).ok_or_else(|| {
                Refusal::new(
                    None,
                    error_codes::INVALID_REQUEST,
                    "Invalid request: `id` must be a string or an integer",
                )
            })?),
        };
        let method = match envelope.method {
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
        let params = envelope.params;
        match (id, method) {
            (Some(id), Some(method)) => self.request(connection, id, method, params, start),
            (None, Some(method)) => {
                self.notification(connection, &method, params, start);
                Ok(())
            }
            (Some(id), None) => self.client_answer(connection, id, envelope.result, envelope.error),
            (None, None) => Err(Refusal::new(
                None,
                error_codes::INVALID_REQUEST,
                "Invalid request: no `method` and no `id`",
            )),
        }
    }

    /// A request: its span (exported as a trace when `[otel] trace_exporter` is set) covers
    /// it from arrival to answer, refusals included.
    fn request(
        &self,
        connection: &Arc<Connection>,
        id: RequestId,
        method: String,
        params: Option<Value>,
        start: Start,
    ) -> Result<(), Refusal> {
        let name = methods::find(&method).map_or("unknown", |info| info.name);
        let span = crate::telemetry::spans::request_span(
            name,
            &id,
            (connection.id().0, connection.transport()),
            params.as_ref(),
            connection.traceparent(),
        );
        if method == Initialize::NAME {
            let arrived = std::time::Instant::now();
            let result = span.in_scope(|| self.initialize(connection, id, params));
            let code = result.as_ref().err().map(|refusal| refusal.code);
            crate::telemetry::request_answered(Initialize::NAME, code, arrived.elapsed());
            crate::telemetry::spans::request_ended(&span, code);
            return result;
        }
        let result =
            span.in_scope(|| self.routed_request(connection, id, method, params, start, &span));
        if let Err(refusal) = &result {
            crate::telemetry::spans::request_ended(&span, Some(refusal.code));
        }
        result
    }

    fn routed_request(
        &self,
        connection: &Arc<Connection>,
        id: RequestId,
        method: String,
        params: Option<Value>,
        start: Start,
        span: &tracing::Span,
    ) -> Result<(), Refusal> {
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
                crate::telemetry::request_answered(
                    "unknown",
                    Some(error_codes::METHOD_NOT_FOUND),
                    Duration::ZERO,
                );
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
        if !negotiated.experimental
            && let Some(member) = crate::validate::experimental_member_used(
                crate::validate::EXPERIMENTAL_PARAMS,
                &method,
                params.as_ref(),
            )
        {
            return Err(Refusal::new(
                Some(id),
                error_codes::INVALID_REQUEST,
                format!("{member} requires experimentalApi capability"),
            ));
        }
        if let Err(rejected) = self.shared.validators.check(&method, params.as_ref()) {
            crate::telemetry::request_answered(
                info.name,
                Some(error_codes::INVALID_PARAMS),
                Duration::ZERO,
            );
            return Err(Refusal::invalid_params(id, &method, &rejected));
        }
        let Ok(permit) = self.shared.in_flight.clone().try_acquire_owned() else {
            tracing::warn!(
                connection = connection.id().0,
                method,
                "ingress full: request refused"
            );
            crate::telemetry::request_overloaded(info.name);
            return Err(Refusal::new(
                Some(id),
                error_codes::SERVER_OVERLOADED,
                "Server overloaded; retry later.",
            ));
        };
        let queued = crate::telemetry::request_queued(connection.transport());
        // Requests about one thread (the method table's ordering member) run in arrival order.
        let thread_key = crate::dispatch::ordering_key(&method, params.as_ref()).map(str::to_owned);
        let job = self.request_job(
            connection.clone(),
            id,
            (info.name, method),
            params,
            (permit, queued, span.clone()),
        );
        match thread_key {
            Some(key) => self.run_ordered(key, job, start),
            None => self.start(job, start),
        }
        Ok(())
    }

    /// Starts work that need not wait for anything.
    fn start(&self, mut job: Job, start: Start) {
        if start == Start::Inline && poll_once(&mut job) {
            return;
        }
        self.shared.runtime.spawn(job);
    }

    fn request_job(
        &self,
        connection: Arc<Connection>,
        id: RequestId,
        (name, method): (&'static str, String),
        params: Option<Value>,
        (permit, queued, span): (
            OwnedSemaphorePermit,
            crate::telemetry::QueuedRequest,
            tracing::Span,
        ),
    ) -> Job {
        let shared = self.shared.clone();
        let arrived = std::time::Instant::now();
        let answered_span = span.clone();
        let job = async move {
            let answered = Answered::new();
            let settle = SettleOnDrop(answered.clone());
            let context = RequestContext {
                peer: Peer::new(shared.hub.clone(), connection.clone()),
                request_id: id.clone(),
                answered,
            };
            let call = dispatch_request(&*shared.handler, context, &method, params);
            let outcome = AssertUnwindSafe(call).catch_unwind().await;
            let code = match &outcome {
                Ok(Ok(_)) => None,
                Ok(Err(error)) => Some(error.code),
                Err(_) => Some(error_codes::INTERNAL_ERROR),
            };
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
            // Counted answered before the client can see the answer (and look at the gauge).
            drop(queued);
            if connection.send(message).is_err() {
                shared.hub.close(connection.id());
            }
            crate::telemetry::request_answered(name, code, arrived.elapsed());
            crate::telemetry::spans::request_ended(&answered_span, code);
            drop(settle);
            drop(permit);
        };
        Box::pin(tracing::Instrument::instrument(job, span))
    }

    /// Runs `job` after every job already queued for `key`.
    fn run_ordered(&self, key: String, mut job: Job, start: Start) {
        let mut ordered = self
            .shared
            .ordered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(queue) = ordered.get_mut(&key) {
            queue.push_back(job);
            return;
        }
        // The key is taken while `job` runs, so that later jobs for it queue up behind it.
        ordered.insert(key.clone(), VecDeque::new());
        drop(ordered);
        if start == Start::Inline && poll_once(&mut job) {
            // Finished at once. Release the key, unless a job was queued behind it meanwhile
            // (from another connection's thread): that one runs next, on a worker.
            let mut ordered = self
                .shared
                .ordered
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            match ordered.get_mut(&key).and_then(VecDeque::pop_front) {
                Some(next) => job = next,
                None => {
                    ordered.remove(&key);
                    return;
                }
            }
        }
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
            return Err(Refusal::invalid_params(id, Initialize::NAME, &rejected));
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
        let response = self.shared.handler.initialize_response(&params.client_info);
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

    fn notification(
        &self,
        connection: &Arc<Connection>,
        method: &str,
        params: Option<Value>,
        start: Start,
    ) {
        // `initialized` reaches the handler too (it may greet the connection, e.g. with
        // configuration warnings); like every notification, only after `initialize`.
        if connection.negotiated().is_none() {
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
        // Started like requests, so that the work of messages starts in arrival order either way.
        self.start(
            Box::pin(async move {
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
            }),
            start,
        );
    }

    fn client_answer(
        &self,
        connection: &Arc<Connection>,
        id: RequestId,
        result: Option<Value>,
        error: Option<Value>,
    ) -> Result<(), Refusal> {
        let answer = match (result, error) {
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

    /// Waits until every request in flight has been answered (at most the shutdown grace),
    /// then for the background work they left (notifications due after an answer, running
    /// turns): up to [`RuntimeConfig::background_grace`] for it to finish on its own, then it
    /// is told to stop and gets the shutdown grace to wind down. A server told to stop
    /// ([`Server::stop`]) skips the first wait.
    pub async fn drain(&self) {
        let config = &self.shared.config;
        let all = u32::try_from(config.max_in_flight_requests).unwrap_or(u32::MAX);
        let wait = self.shared.in_flight.acquire_many(all);
        if tokio::time::timeout(config.shutdown_grace, wait)
            .await
            .is_err()
        {
            tracing::warn!("shutdown: requests still running after the grace period");
        }
        let grace = if self.hub().is_stopping() {
            Duration::ZERO
        } else {
            config.background_grace
        };
        self.hub()
            .settle_background(grace, config.shutdown_grace)
            .await;
        // The `--record` transcript holds every message recorded so far.
        if let Some(recorder) = &config.recorder {
            recorder.flush().await;
        }
    }

    /// Tells the server to stop: transports stop reading, running turns are interrupted and
    /// recorded; [`Server::drain`] then waits for them to wind down.
    pub fn stop(&self) {
        self.hub().stop();
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
