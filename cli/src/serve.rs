//! `agentwire app-server`: serve the protocol.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agentwire_engine::{Engine, EngineConfig};
use agentwire_runtime::{BearerAuth, Listen, WsListener, default_unix_socket, termination_signal};
use agentwire_runtime::{RuntimeConfig, Server};
use clap::Args;

/// How to serve.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to listen: `stdio://` (one JSON message per line on stdin/stdout), `ws://IP:PORT`
    /// (websocket, one message per text frame; port 0 picks a free port), `unix://` (the same over
    /// `$AGENTWIRE_HOME/app-server-control/app-server.sock`), `unix://PATH`, or `off`.
    #[arg(long, value_name = "URL", default_value = "stdio://")]
    listen: Listen,
    /// Where threads are kept: `embedded` (files and SQLite under `$AGENTWIRE_HOME`) or a
    /// `postgres://` URL shared by several servers. Over `[store] url` in config.toml; the
    /// embedded store when neither says.
    // Checked after parsing, not by clap, whose errors would repeat a password.
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// Largest message accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024)]
    max_message_bytes: usize,
    /// Requests accepted but not yet answered before new ones get -32001.
    #[arg(long, value_name = "N", default_value_t = 512)]
    max_in_flight: usize,
    /// Messages queued for one websocket connection; a peer that stops reading is disconnected
    /// when its queue is full.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    outbound_queue: usize,
    /// stdio://: after answering, keep looking for the client's next message for up to this
    /// many microseconds before sleeping, while the client sends within that time; 0 always
    /// sleeps. Saves a lockstep client the wake-up of a sleeping CPU on every round trip.
    #[arg(long, value_name = "MICROS", default_value_t = 100)]
    stdin_busy_poll_us: u64,
    /// How long a server→client request (an approval, user input, a client tool call) waits
    /// for its answer (milliseconds); past it the request counts as unanswered: an approval is
    /// declined, and `serverRequest/resolved` withdraws it.
    #[arg(long, value_name = "MILLIS", default_value_t = 600_000)]
    server_request_timeout_ms: u64,
    /// ws:// and unix://: ping each connection this often (milliseconds); live clients answer.
    #[arg(long, value_name = "MILLIS", default_value_t = 30_000)]
    ws_ping_interval_ms: u64,
    /// ws:// and unix://: close a connection that sends no frame at all (not even the pong to a
    /// ping) for this long (milliseconds): a peer gone silent, or a frame that stopped arriving.
    #[arg(long, value_name = "MILLIS", default_value_t = 90_000)]
    ws_idle_timeout_ms: u64,
    /// ws:// and unix://: bytes that all connections together may hold in frames still
    /// arriving and messages queued for their peers, beyond 64 KiB per connection and
    /// direction; the connection that would go past it is closed with 1013.
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024 * 1024)]
    ws_memory_budget_bytes: usize,
    /// ws:// and unix://: require `Authorization: Bearer <token>`, the token being this file's
    /// contents without surrounding whitespace.
    #[arg(long, value_name = "PATH", conflicts_with = "ws_auth_token_sha256")]
    ws_auth_token_file: Option<PathBuf>,
    /// ws:// and unix://: require `Authorization: Bearer <token>` for the token whose SHA-256 is
    /// HEX (64 hexadecimal digits).
    #[arg(long, value_name = "HEX")]
    ws_auth_token_sha256: Option<String>,
    /// Write a transcript of every connection to FILE: one JSON object per message,
    /// `{"session", "dir", "line", "ts"}` (see docs/contract.md; `agentwire contract check`
    /// reads it). The file is created or truncated.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Also serve `GET /metrics` (OpenMetrics text, what Prometheus scrapes) on this address,
    /// for any transport (stdio included). A non-loopback address needs a bearer token
    /// (`--ws-auth-token-file` or `--ws-auth-token-sha256`, which then apply to it too);
    /// without one only processes of the server's own user are served.
    #[arg(long, value_name = "IP:PORT")]
    metrics_listen: Option<SocketAddr>,
    /// Write logs to FILE instead of stderr (stderr is pointed at it too), rotated at 10 MiB
    /// with the last 3 files kept as FILE.1 … FILE.3.
    #[arg(long, value_name = "FILE")]
    log_file: Option<PathBuf>,
}

/// Runs the server until its transport ends.
pub fn run(args: ServeArgs, overrides: crate::ConfigOverrides) -> Result<ExitCode, String> {
    // What a confined command must not see besides the home (which the engine always hides):
    // the token file, and a Unix socket placed outside the home.
    // The transcript (`--record`) holds everything the clients said: hidden too, and so is
    // the log file (`--log-file`).
    let mut private_paths: Vec<PathBuf> = args
        .ws_auth_token_file
        .iter()
        .chain(args.record.iter())
        .chain(args.log_file.iter())
        .cloned()
        .collect();
    if let Listen::Unix(Some(path)) = &args.listen {
        private_paths.push(path.clone());
    }
    let engine_config = EngineConfig {
        sandbox_exe: std::env::current_exe().ok(),
        private_paths: private_paths
            .iter()
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
            .collect(),
        config_overrides: overrides.flags(),
        profile: overrides.profile,
        store: args
            .store
            .as_deref()
            .map(agentwire_engine::StoreUrl::parse)
            .transpose()
            .map_err(|e| format!("--store: {e}"))?,
        ..EngineConfig::from_env()
    };
    // Logging and OpenTelemetry export (`[otel]`, read once, now) are set up before anything
    // else logs; the exporters flush when `_otel` is dropped, as this function returns.
    let otel_config = Engine::otel_config(&engine_config).with_home(&engine_config.home);
    let _otel = crate::logging::init_with_otel("info", args.log_file.as_deref(), &otel_config);
    let mut config = RuntimeConfig::new(engine_config.home.clone());
    config.max_message_bytes = args.max_message_bytes;
    if let Some(path) = &args.record {
        let recorder = agentwire_runtime::Recorder::create(path)
            .map_err(|e| format!("--record {}: {e}", path.display()))?;
        config.recorder = Some(Arc::new(recorder));
    }
    config.max_in_flight_requests = args.max_in_flight.max(1);
    config.outbound_queue_messages = args.outbound_queue.max(1);
    config.stdin_busy_poll = Duration::from_micros(args.stdin_busy_poll_us);
    config.server_request_timeout = Duration::from_millis(args.server_request_timeout_ms.max(1));
    config.ws_ping_interval = Duration::from_millis(args.ws_ping_interval_ms.max(1));
    config.ws_idle_timeout = Duration::from_millis(args.ws_idle_timeout_ms.max(1));
    config.ws_memory_budget_bytes = args.ws_memory_budget_bytes;
    let auth = auth(&args)?;
    if let Some(addr) = args.metrics_listen {
        crate::metrics_listen::start(addr, auth.clone())?;
    }
    match &args.listen {
        Listen::Ws(addr) => return serve_socket(Bind::Tcp(*addr), auth, engine_config, config),
        Listen::Unix(path) => {
            let path = path
                .clone()
                .unwrap_or_else(|| default_unix_socket(&config.home));
            return serve_socket(Bind::Unix(path), auth, engine_config, config);
        }
        Listen::Stdio | Listen::Off => {}
    }
    if auth.is_some() && args.metrics_listen.is_none() {
        return Err(
            "--ws-auth-token-file and --ws-auth-token-sha256 apply to ws:// and unix:// only \
             (and to --metrics-listen)"
                .to_owned(),
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let server = Server::new(Engine::new(engine_config), config, runtime.handle().clone());
    match args.listen {
        Listen::Off => Ok(ExitCode::SUCCESS),
        _ => serve_stdio(&server, runtime),
    }
}

fn auth(args: &ServeArgs) -> Result<Option<BearerAuth>, String> {
    let auth = match (&args.ws_auth_token_file, &args.ws_auth_token_sha256) {
        (Some(path), _) => Some(BearerAuth::from_token_file(path)),
        (None, Some(hex)) => Some(BearerAuth::from_sha256_hex(hex)),
        (None, None) => None,
    };
    auth.transpose().map_err(|e| e.to_string())
}

/// Where a socket transport binds.
enum Bind {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

/// Task polls between two looks at the sockets on a busy worker of the socket server (tokio's
/// default is 61). While turns stream as fast as they are read, no worker ever runs out of
/// tasks, so a frame that arrives on an idle connection (a `thread/list`) is seen only at the
/// next look: measured with `sessions-bench --skip-codex --rounds 3`, the `thread/list` p99
/// while 10 turns stream went from 8.4 and 7.9 ms to 6.8 and 6.6 ms with 2, at the same
/// deltas/s and CPU per delta.
const SOCKET_EVENT_INTERVAL: u32 = 2;

/// `ws://` and `unix://`: serves until SIGINT or SIGTERM, then shuts down in order.
fn serve_socket(
    bind: Bind,
    auth: Option<BearerAuth>,
    engine_config: EngineConfig,
    config: RuntimeConfig,
) -> Result<ExitCode, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .event_interval(SOCKET_EVENT_INTERVAL)
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let server = Server::new(Engine::new(engine_config), config, runtime.handle().clone());
    let result = runtime.block_on(async {
        let shutdown = termination_signal();
        let listener = match bind {
            Bind::Tcp(addr) => WsListener::bind_tcp(addr, auth).await,
            Bind::Unix(path) => WsListener::bind_unix(&path, auth).await,
        }
        .map_err(|e| e.to_string())?;
        listener
            .serve(server, shutdown)
            .await
            .map_err(|e| format!("serving failed: {e}"))
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    result.map(|()| ExitCode::SUCCESS)
}

fn serve_stdio(
    server: &Server<Engine>,
    runtime: tokio::runtime::Runtime,
) -> Result<ExitCode, String> {
    // This thread drives the runtime (timers, I/O, spawned requests) and runs the connection's
    // task on it: when stdin is a pipe or a socket the task reads it through the reactor, so a
    // request is read, handled and answered without another thread waking up. Any other stdin
    // (a file, a terminal) is read by a thread of its own.
    // SIGINT and SIGTERM stop the connection as end of input would, except that running
    // turns are interrupted (and recorded) at once instead of being waited for. Both the
    // signals and the end of input are watched on threads of their own, so that a handler
    // stuck on this thread cannot keep the process alive past their deadlines.
    // The watching thread outlives the server: it holds it only until the server is done,
    // so that the engine is dropped (and closes its stores) as usual.
    let stopper = Arc::new(Mutex::new(Some(server.clone())));
    let held = Arc::clone(&stopper);
    crate::stop_watch::watch_signals(
        move || {
            if let Some(server) = held.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
                server.stop();
            }
        },
        crate::stop_watch::signal_deadline(server.config()),
    );
    crate::stop_watch::watch_end_of_input(crate::stop_watch::end_of_input_deadline(
        server.config(),
    ));
    let served = agentwire_runtime::serve_stdio(server, |connection| runtime.block_on(connection));
    drop(
        stopper
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take(),
    );
    // A blocking task still stuck (a read that never returns) must not keep the process from
    // exiting, as dropping the runtime would: the rest gets the shutdown grace to finish.
    runtime.shutdown_timeout(server.config().shutdown_grace);
    served
        .map(|()| ExitCode::SUCCESS)
        .map_err(|e| e.to_string())
}
