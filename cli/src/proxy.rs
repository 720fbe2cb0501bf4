//! `agentwire app-server proxy`: bridges stdin/stdout (JSON lines) to the daemon's Unix control
//! socket (one message per websocket text frame), so a stdio-only client shares the daemon.

use std::path::PathBuf;
use std::process::ExitCode;

use agentwire_runtime::{FrameEvent, LineFramer};
use clap::Args;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

/// `agentwire app-server proxy`.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// The server's socket (default: the daemon's, under `$AGENTWIRE_HOME`).
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Send `Authorization: Bearer <token>`, the token being this file's contents without
    /// surrounding whitespace (for a server started with `--ws-auth-token-file`).
    #[arg(long, value_name = "PATH")]
    auth_token_file: Option<PathBuf>,
    /// Largest message passed either way, in bytes; a longer line from stdin is dropped (and
    /// reported on stderr).
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024)]
    max_message_bytes: usize,
}

/// Collects the complete lines of stdin; one that is over the limit or not UTF-8 is dropped
/// and reported on stderr.
fn gather(lines: &mut Vec<String>) -> impl FnMut(FrameEvent<'_>) + '_ {
    move |event| match event {
        FrameEvent::Message(line) => match std::str::from_utf8(line) {
            Ok(text) => lines.push(text.to_owned()),
            Err(_) => eprintln!("proxy: a line from stdin is not UTF-8; dropped"),
        },
        FrameEvent::TooLarge { bytes } => {
            eprintln!("proxy: a line of {bytes} bytes from stdin is over the limit; dropped")
        }
    }
}

/// Bridges until stdin ends (then the socket is closed) or the server closes the socket.
pub fn run(args: ProxyArgs) -> Result<ExitCode, String> {
    let socket = args
        .socket
        .clone()
        .unwrap_or_else(|| crate::daemon::DaemonPaths::new().socket);
    let token = match &args.auth_token_file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| format!("--auth-token-file {}: {e}", path.display()))?
                .trim()
                .to_owned(),
        ),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let result = runtime.block_on(bridge(socket, token, args.max_message_bytes));
    // A read of stdin may still be blocked in its thread: do not wait for it.
    runtime.shutdown_background();
    result
}

async fn bridge(socket: PathBuf, token: Option<String>, limit: usize) -> Result<ExitCode, String> {
    let websocket = agentwire_client::connect_unix_websocket(&socket, token.as_deref(), limit)
        .await
        .map_err(|e| format!("{e} (is the daemon running? `agentwire app-server daemon start`)"))?;
    let (mut sink, mut stream) = websocket.split();
    let upstream = async move {
        let mut stdin = tokio::io::stdin();
        let mut framer = LineFramer::new(limit);
        let mut buffer = vec![0u8; 64 * 1024];
        let mut lines: Vec<String> = Vec::new();
        loop {
            let n = match stdin.read(&mut buffer).await {
                Ok(0) | Err(_) => 0,
                Ok(n) => n,
            };
            if n == 0 {
                framer.finish(gather(&mut lines));
            } else {
                framer.push(&buffer[..n], gather(&mut lines));
            }
            for line in lines.drain(..) {
                if sink.send(Message::text(line)).await.is_err() {
                    return;
                }
            }
            if n == 0 {
                let _ = sink.send(Message::Close(None)).await;
                return;
            }
        }
    };
    let downstream = async move {
        let mut stdout = tokio::io::stdout();
        while let Some(frame) = stream.next().await {
            let payload = match frame {
                Ok(Message::Text(text)) => text.as_bytes().to_vec(),
                Ok(Message::Binary(bytes)) => bytes.to_vec(),
                Ok(Message::Close(_)) => break,
                Ok(_) => continue,
                Err(error) => return Err(format!("the socket failed: {error}")),
            };
            let written = async {
                stdout.write_all(&payload).await?;
                stdout.write_all(b"\n").await?;
                stdout.flush().await
            };
            if written.await.is_err() {
                // The client stopped reading: nothing left to bridge.
                break;
            }
        }
        Ok(())
    };
    // Stdin's end closes the socket; the server's close frame then ends the downstream.
    let upstream = tokio::spawn(upstream);
    let result = downstream.await;
    upstream.abort();
    result.map(|()| ExitCode::SUCCESS)
}
