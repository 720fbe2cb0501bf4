//! The byte-level links: JSON lines over a child's stdio (the runtime's line framer), and one
//! message per text frame over a websocket (TCP, TLS or a Unix socket).

use std::path::Path;
use std::sync::Arc;

use agentwire_runtime::{FrameEvent, LineFramer};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{Connector, WebSocketStream};

use crate::Error;
use crate::core::{Core, Outgoing};

/// Bytes of queued messages gathered into one write.
const BATCH_BYTES: usize = 256 * 1024;

/// Reads JSON lines from `read` and writes them to `write`; returns the two tasks.
pub(crate) fn lines<R, W>(
    mut read: R,
    mut write: W,
    limit: usize,
    core: Arc<Core>,
    mut out: mpsc::Receiver<Outgoing>,
) -> [JoinHandle<()>; 2]
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let writer = {
        let core = core.clone();
        tokio::spawn(async move {
            let mut batch = String::new();
            let mut open = true;
            while open {
                let Some(outgoing) = out.recv().await else {
                    break;
                };
                // Everything queued meanwhile goes out in one write (up to a bound).
                let mut next = Some(outgoing);
                while let Some(outgoing) = next.take() {
                    match outgoing {
                        Outgoing::Message(line) => {
                            batch.push_str(&line);
                            batch.push('\n');
                        }
                        Outgoing::Close => open = false,
                    }
                    if open && batch.len() < BATCH_BYTES {
                        next = out.try_recv().ok();
                    }
                }
                let written = async {
                    write.write_all(batch.as_bytes()).await?;
                    write.flush().await
                };
                if let Err(error) = written.await {
                    core.close(format!("cannot write to the server: {error}"));
                    return;
                }
                batch.clear();
            }
            let _ = write.shutdown().await;
        })
    };
    let reader = tokio::spawn(async move {
        let mut framer = LineFramer::new(limit);
        let mut buffer = vec![0u8; 64 * 1024];
        let mut lines: Vec<Vec<u8>> = Vec::new();
        let reason = loop {
            match read.read(&mut buffer).await {
                Ok(0) => {
                    framer.finish(gather(&mut lines, limit));
                    break "the server closed its output".to_owned();
                }
                Ok(n) => framer.push(&buffer[..n], gather(&mut lines, limit)),
                Err(error) => break format!("cannot read from the server: {error}"),
            }
            for line in lines.drain(..) {
                core.incoming(&line).await;
            }
        };
        for line in lines.drain(..) {
            core.incoming(&line).await;
        }
        core.close(reason);
    });
    [writer, reader]
}

/// Collects the framer's complete lines into `lines`; an oversized one is logged and dropped.
fn gather(lines: &mut Vec<Vec<u8>>, limit: usize) -> impl FnMut(FrameEvent<'_>) + '_ {
    move |event| match event {
        FrameEvent::Message(line) => lines.push(line.to_vec()),
        FrameEvent::TooLarge { bytes } => {
            tracing::warn!(
                bytes,
                limit,
                "the server sent a line over the limit; dropped"
            )
        }
    }
}

/// Exchanges one message per text frame over `socket`; returns the two tasks.
pub(crate) fn websocket<S>(
    socket: WebSocketStream<S>,
    core: Arc<Core>,
    mut out: mpsc::Receiver<Outgoing>,
) -> [JoinHandle<()>; 2]
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sink, mut stream) = socket.split();
    let writer = {
        let core = core.clone();
        tokio::spawn(async move {
            while let Some(outgoing) = out.recv().await {
                let frame = match outgoing {
                    Outgoing::Message(text) => Message::text(text),
                    Outgoing::Close => Message::Close(None),
                };
                let close = matches!(frame, Message::Close(_));
                if let Err(error) = sink.send(frame).await {
                    core.close(format!("cannot write to the server: {error}"));
                    return;
                }
                if close {
                    break;
                }
            }
        })
    };
    let reader = tokio::spawn(async move {
        let reason = loop {
            match stream.next().await {
                Some(Ok(Message::Text(text))) => core.incoming(text.as_bytes()).await,
                Some(Ok(Message::Binary(bytes))) => core.incoming(&bytes).await,
                Some(Ok(Message::Close(frame))) => {
                    break match frame {
                        Some(frame) => format!(
                            "the server closed the websocket ({}: {})",
                            u16::from(frame.code),
                            frame.reason.as_str()
                        ),
                        None => "the server closed the websocket".to_owned(),
                    };
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => break format!("websocket error: {error}"),
                None => break "the websocket ended".to_owned(),
            }
        };
        core.close(reason);
    });
    [writer, reader]
}

/// The websocket limits for messages of at most `limit` bytes.
fn ws_config(limit: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(limit))
        .max_frame_size(Some(limit))
}

/// The handshake request for `url`, with `Authorization: Bearer TOKEN` when given.
fn handshake_request(
    url: &str,
    token: Option<&str>,
) -> Result<tokio_tungstenite::tungstenite::handshake::client::Request, Error> {
    let fail = |reason: String| Error::Connect {
        target: url.to_owned(),
        reason,
    };
    let mut request = url
        .into_client_request()
        .map_err(|e| fail(format!("not a websocket URL: {e}")))?;
    if let Some(token) = token {
        let value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| fail("the bearer token is not a valid header value".to_owned()))?;
        request.headers_mut().insert("authorization", value);
    }
    Ok(request)
}

/// Opens a websocket to a `ws://` or `wss://` URL.
pub(crate) async fn connect_tcp(
    url: &str,
    token: Option<&str>,
    limit: usize,
) -> Result<WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>, Error> {
    let request = handshake_request(url, token)?;
    let connector = if url.starts_with("wss://") {
        Some(Connector::Rustls(tls_config().map_err(|reason| {
            Error::Connect {
                target: url.to_owned(),
                reason,
            }
        })?))
    } else {
        None
    };
    let (socket, _) = tokio_tungstenite::connect_async_tls_with_config(
        request,
        Some(ws_config(limit)),
        true,
        connector,
    )
    .await
    .map_err(|e| Error::Connect {
        target: url.to_owned(),
        reason: e.to_string(),
    })?;
    Ok(socket)
}

/// Opens the websocket of an app-server's Unix control socket at `path`.
pub(crate) async fn connect_unix(
    path: &Path,
    token: Option<&str>,
    limit: usize,
) -> Result<WebSocketStream<tokio::net::UnixStream>, Error> {
    let target = format!("unix://{}", path.display());
    let fail = |reason: String| Error::Connect {
        target: target.clone(),
        reason,
    };
    let stream = tokio::net::UnixStream::connect(path)
        .await
        .map_err(|e| fail(e.to_string()))?;
    let request = handshake_request("ws://localhost/", token)?;
    let (socket, _) =
        tokio_tungstenite::client_async_with_config(request, stream, Some(ws_config(limit)))
            .await
            .map_err(|e| fail(e.to_string()))?;
    Ok(socket)
}

/// TLS with the `ring` provider and the platform's certificate verifier.
fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))?
        .with_platform_verifier()
        .map_err(|e| format!("TLS setup: {e}"))?
        .with_no_client_auth();
    Ok(Arc::new(config))
}
