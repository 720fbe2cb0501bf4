//! The loopback listener the browser is redirected to after signing in: `127.0.0.1` on a
//! port the system picks, path `/callback`. Requests for other paths, and redirects whose
//! `state` is not this sign-in's, are answered with an error page and waited past; the first
//! redirect with the right `state` ends the wait with its `code` (or the authorization
//! server's `error`).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The path of the redirect URI.
pub(crate) const PATH: &str = "/callback";
/// Largest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;
/// How long one browser connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// What the redirect carried.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// The authorization code.
    Code(String),
    /// The authorization server's refusal (`error`, `error_description`), as one sentence.
    Refused(String),
}

/// A bound listener and the redirect URI that reaches it.
pub(crate) struct Listener {
    listener: TcpListener,
    /// `http://127.0.0.1:<port>/callback`.
    pub redirect_uri: String,
}

impl Listener {
    /// Binds `127.0.0.1:0`.
    pub(crate) async fn bind() -> Result<Self, String> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| format!("cannot listen on 127.0.0.1 for the sign-in redirect: {e}"))?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("cannot read the redirect listener's port: {e}"))?
            .port();
        Ok(Self {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{PATH}"),
        })
    }

    /// Waits for the redirect carrying `state` (the caller bounds the wait), runs `finish` on
    /// what it carried, and answers the browser with a page saying how that went.
    pub(crate) async fn wait<F, Fut>(self, state: &str, finish: F) -> Result<(), String>
    where
        F: FnOnce(Outcome) -> Fut,
        Fut: Future<Output = Result<(), String>>,
    {
        loop {
            let (mut stream, _) = self
                .listener
                .accept()
                .await
                .map_err(|e| format!("the redirect listener failed: {e}"))?;
            let target = match tokio::time::timeout(READ_TIMEOUT, read_target(&mut stream)).await {
                Ok(Some(target)) => target,
                _ => {
                    respond(&mut stream, 400, "Bad request.").await;
                    continue;
                }
            };
            let Some(outcome) = parse(&target, state) else {
                respond(
                    &mut stream,
                    404,
                    "Not the sign-in redirect this server waits for.",
                )
                .await;
                continue;
            };
            let result = finish(outcome).await;
            match &result {
                Ok(()) => {
                    respond(
                        &mut stream,
                        200,
                        "Signed in. You can close this window and go back to your client.",
                    )
                    .await;
                }
                Err(error) => {
                    respond(&mut stream, 400, &format!("Sign-in failed: {error}")).await;
                }
            }
            return result;
        }
    }
}

/// The request target (`/callback?…`) of the request on `stream`, if it reads as
/// `GET <target> HTTP/1.x` within [`MAX_HEAD`] bytes.
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = stream.read(&mut buffer).await.ok()?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&buffer[..read]);
        if head.len() > MAX_HEAD {
            return None;
        }
    }
    let text = String::from_utf8_lossy(&head);
    let line = text.lines().next()?;
    let mut parts = line.split(' ');
    let (method, target) = (parts.next()?, parts.next()?);
    (method == "GET" && parts.next()?.starts_with("HTTP/1.")).then(|| target.to_owned())
}

/// The outcome a request target carries for the sign-in with `state`; `None` when it is not
/// that redirect (another path, a missing or different `state`).
pub(crate) fn parse(target: &str, state: &str) -> Option<Outcome> {
    let url = reqwest::Url::parse(&format!("http://127.0.0.1{target}")).ok()?;
    if url.path() != PATH {
        return None;
    }
    let get = |name: &str| {
        url.query_pairs()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.into_owned())
    };
    if get("state")? != state {
        return None;
    }
    if let Some(error) = get("error") {
        return Some(Outcome::Refused(match get("error_description") {
            Some(description) => {
                format!("the authorization server refused: {error}: {description}")
            }
            None => format!("the authorization server refused: {error}"),
        }));
    }
    match get("code") {
        Some(code) if !code.is_empty() => Some(Outcome::Code(code)),
        _ => Some(Outcome::Refused(
            "the redirect carried neither a code nor an error".to_owned(),
        )),
    }
}

async fn respond(stream: &mut TcpStream, status: u16, message: &str) {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let escaped = message
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>agentwire</title></head>\
         <body><p>{escaped}</p></body></html>"
    );
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_callback_with_this_state_counts() {
        assert_eq!(
            parse("/callback?code=abc&state=s1", "s1"),
            Some(Outcome::Code("abc".to_owned()))
        );
        assert_eq!(parse("/callback?code=abc&state=other", "s1"), None);
        assert_eq!(parse("/callback?code=abc", "s1"), None);
        assert_eq!(parse("/favicon.ico", "s1"), None);
        assert!(matches!(
            parse("/callback?error=access_denied&error_description=no%20way&state=s1", "s1"),
            Some(Outcome::Refused(text)) if text.contains("access_denied: no way")
        ));
        assert!(matches!(
            parse("/callback?state=s1", "s1"),
            Some(Outcome::Refused(_))
        ));
    }
}
