//! `agentwire app-server`: serve the protocol.

use std::process::ExitCode;

use agentwire_engine::{Engine, EngineConfig};
use agentwire_runtime::{RuntimeConfig, Server};
use clap::Args;

/// How to serve.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to listen: `stdio://` (one JSON message per line on stdin/stdout).
    #[arg(long, value_name = "URL", default_value = "stdio://")]
    listen: String,
    /// Largest message accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024)]
    max_message_bytes: usize,
    /// Requests accepted but not yet answered before new ones get -32001.
    #[arg(long, value_name = "N", default_value_t = 512)]
    max_in_flight: usize,
}

/// Runs the server until its transport ends.
pub fn run(args: ServeArgs) -> Result<ExitCode, String> {
    crate::logging::init();
    let engine_config = EngineConfig::from_env();
    let mut config = RuntimeConfig::new(engine_config.home.clone());
    config.max_message_bytes = args.max_message_bytes;
    config.max_in_flight_requests = args.max_in_flight.max(1);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let server = Server::new(Engine::new(engine_config), config, runtime.handle().clone());
    match args.listen.as_str() {
        "stdio://" | "stdio" => serve_stdio(&server, runtime),
        "off" => Ok(ExitCode::SUCCESS),
        other => Err(format!(
            "unsupported --listen {other:?}: expected stdio:// or off"
        )),
    }
}

fn serve_stdio(
    server: &Server<Engine>,
    runtime: tokio::runtime::Runtime,
) -> Result<ExitCode, String> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    std::thread::scope(|scope| {
        let runtime = &runtime;
        // This thread drives the runtime (timers, I/O, spawned requests) while the calling
        // thread reads stdin.
        let driver = scope.spawn(move || {
            runtime.block_on(async {
                let _ = stopped.await;
            })
        });
        let result =
            agentwire_runtime::stdio::serve(server, |drain| runtime.handle().block_on(drain));
        let _ = stop.send(());
        let _ = driver.join();
        result
            .map(|()| ExitCode::SUCCESS)
            .map_err(|e| e.to_string())
    })
}
