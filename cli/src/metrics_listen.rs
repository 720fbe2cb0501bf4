//! `--metrics-listen IP:PORT`: `GET /metrics` on a listener of its own (see
//! `agentwire_runtime::MetricsListener`), for stdio and `mcp-server` deployments. It runs
//! on a thread and runtime of its own, so that it answers whatever the server's runtime does,
//! and lives as long as the process.

use std::net::SocketAddr;

use agentwire_runtime::{BearerAuth, MetricsListener};

/// Binds `addr` (a non-loopback address needs `auth`) and serves metrics there from now on.
pub fn start(addr: SocketAddr, auth: Option<BearerAuth>) -> Result<(), String> {
    let (bound, bound_rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(error) => {
                    let _ = bound.send(Err(format!("cannot start its runtime: {error}")));
                    return;
                }
            };
            runtime.block_on(async move {
                match MetricsListener::bind(addr, auth).await {
                    Ok(listener) => {
                        let _ = bound.send(Ok(()));
                        if let Err(error) = listener.serve(std::future::pending()).await {
                            tracing::warn!(%error, "metrics listener failed");
                        }
                    }
                    Err(error) => {
                        let _ = bound.send(Err(error.to_string()));
                    }
                }
            });
        })
        .map_err(|e| format!("--metrics-listen {addr}: cannot start its thread: {e}"))?;
    match bound_rx.recv() {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(format!("--metrics-listen {addr}: {error}")),
        Err(_) => Err(format!(
            "--metrics-listen {addr}: the listener thread ended"
        )),
    }
}
