//! The opening handshake (RFC 6455 §4.2): an HTTP/1.1 `GET` asking to switch to the websocket
//! protocol, answered `101 Switching Protocols`, after which the connection speaks frames.
//!
//! Done here on hyper's upgrade rather than by axum's extractor so that the server owns the
//! websocket layer under and over it: inbound frames are re-cut before the layer buffers them
//! ([`super::split_frames`]) and large outbound messages leave as continuation frames
//! (`connection.rs`), so neither of the layer's buffers grows to a whole large message and
//! stays that size for the connection's life.
//!
//! A request that is not a valid handshake is answered without switching: 405 for a method
//! other than `GET`, 426 (with `Upgrade: websocket`) for one that does not ask for the
//! websocket protocol, 426 (with `Sec-WebSocket-Version: 13`) for another protocol version,
//! 400 for a missing `Sec-WebSocket-Key`.

use std::future::Future;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper::upgrade::{OnUpgrade, Upgraded};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

use super::split_frames::SplitFrames;

/// An upgraded connection, speaking websocket frames.
pub(super) type Socket = WebSocketStream<SplitFrames<TokioIo<Upgraded>>>;

/// A request that asked for the websocket protocol as RFC 6455 §4.2.1 requires.
pub(super) struct Handshake {
    /// `Sec-WebSocket-Accept` of the answer: the client's key, hashed with the protocol's GUID.
    accept: HeaderValue,
    /// Resolves to the raw connection once the 101 answer has been written.
    upgrade: OnUpgrade,
    /// The request's W3C `traceparent` header (telemetry: the parent of the connection's
    /// request spans), when it is short printable text.
    traceparent: Option<String>,
}

impl<S: Sync> FromRequestParts<S> for Handshake {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        if parts.method != Method::GET {
            return Err((
                StatusCode::METHOD_NOT_ALLOWED,
                [(header::ALLOW, "GET")],
                "a websocket handshake is a GET request\n",
            )
                .into_response());
        }
        let headers = &parts.headers;
        if !has_token(headers, &header::CONNECTION, "upgrade")
            || !has_token(headers, &header::UPGRADE, "websocket")
        {
            return Err((
                StatusCode::UPGRADE_REQUIRED,
                [(header::UPGRADE, "websocket")],
                "this endpoint speaks websocket: send `Connection: Upgrade` and \
                 `Upgrade: websocket`\n",
            )
                .into_response());
        }
        if headers
            .get(header::SEC_WEBSOCKET_VERSION)
            .is_none_or(|version| version.as_bytes() != b"13")
        {
            return Err((
                StatusCode::UPGRADE_REQUIRED,
                [(header::SEC_WEBSOCKET_VERSION, "13")],
                "unsupported Sec-WebSocket-Version: this server speaks version 13\n",
            )
                .into_response());
        }
        let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY) else {
            return Err((
                StatusCode::BAD_REQUEST,
                "missing Sec-WebSocket-Key header\n",
            )
                .into_response());
        };
        let accept = HeaderValue::from_str(&derive_accept_key(key.as_bytes()))
            .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())?;
        // hyper puts it there for HTTP/1.1 connections served with upgrades (axum::serve's are).
        let upgrade = parts.extensions.remove::<OnUpgrade>().ok_or_else(|| {
            (
                StatusCode::UPGRADE_REQUIRED,
                "this connection cannot switch protocols\n",
            )
                .into_response()
        })?;
        let traceparent = headers
            .get("traceparent")
            .and_then(|value| value.to_str().ok())
            .filter(|value| value.len() <= 256)
            .map(str::to_owned);
        Ok(Self {
            accept,
            upgrade,
            traceparent,
        })
    }
}

impl Handshake {
    /// The upgrade request's `traceparent` header, if it had one.
    pub(super) fn traceparent(&self) -> Option<String> {
        self.traceparent.clone()
    }

    /// Answers 101 and, once the answer is out, serves the connection with `serve` on a task of
    /// its own. Inbound data frames larger than a piece are re-cut, unless they announce more
    /// than `max_frame_bytes`, which the websocket layer then refuses from the header alone.
    pub(super) fn accept<C, F>(
        self,
        config: WebSocketConfig,
        max_frame_bytes: usize,
        serve: C,
    ) -> Response
    where
        C: FnOnce(Socket) -> F + Send + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        let Self {
            accept, upgrade, ..
        } = self;
        tokio::spawn(async move {
            match upgrade.await {
                Ok(upgraded) => {
                    let io = SplitFrames::new(TokioIo::new(upgraded), max_frame_bytes);
                    let socket =
                        WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await;
                    serve(socket).await;
                }
                // `serve` is dropped unused, and whatever it owns with it.
                Err(error) => tracing::warn!(%error, "websocket upgrade failed"),
            }
        });
        (
            StatusCode::SWITCHING_PROTOCOLS,
            [
                (header::CONNECTION, HeaderValue::from_static("upgrade")),
                (header::UPGRADE, HeaderValue::from_static("websocket")),
                (header::SEC_WEBSOCKET_ACCEPT, accept),
            ],
        )
            .into_response()
    }
}

/// Whether a comma-separated header (any of its occurrences) lists `token`, in any case.
fn has_token(headers: &HeaderMap, name: &HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|listed| listed.trim().eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_found_in_lists_in_any_case() {
        let mut headers = HeaderMap::new();
        headers.append(header::CONNECTION, HeaderValue::from_static("keep-alive"));
        headers.append(header::CONNECTION, HeaderValue::from_static("TE, Upgrade "));
        assert!(has_token(&headers, &header::CONNECTION, "upgrade"));
        assert!(!has_token(&headers, &header::CONNECTION, "close"));
        assert!(!has_token(&headers, &header::UPGRADE, "websocket"));
    }
}
