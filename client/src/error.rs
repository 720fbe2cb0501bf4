//! What can go wrong talking to a server, with the server's own error preserved.

use std::time::Duration;

use agentwire_protocol::jsonrpc::JsonRpcErrorObject;

/// An error from the client. `#[non_exhaustive]`, like each of its variants: match with `..`
/// and a wildcard arm, so that a new kind of failure or a new detail is not a breaking change.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered the request with a JSON-RPC error; code, message and data are kept
    /// as the server sent them.
    #[error("{method}: the server answered {code}: {message}", code = error.code, message = error.message)]
    #[non_exhaustive]
    Rpc {
        /// The method of the request.
        method: String,
        /// The `error` member of the answer.
        error: JsonRpcErrorObject,
    },
    /// No answer came in time.
    #[error("{method}: no answer within {after:?}")]
    #[non_exhaustive]
    Timeout {
        /// The method of the request.
        method: String,
        /// How long the client waited.
        after: Duration,
    },
    /// The connection ended before the answer came (or before the request could be sent).
    #[error("{method}: the connection is closed ({reason})")]
    #[non_exhaustive]
    Closed {
        /// The method of the request.
        method: String,
        /// Why the connection ended, as far as the client knows.
        reason: String,
    },
    /// The params could not be encoded, or the result did not decode as the method's type.
    #[error("{method}: {what}: {source}")]
    #[non_exhaustive]
    Json {
        /// The method of the request or notification.
        method: String,
        /// What was being encoded or decoded, e.g. `the result`.
        what: &'static str,
        /// The serde error (it names the field).
        source: serde_json::Error,
    },
    /// The server could not be started or reached.
    #[error("cannot connect to {target}: {reason}")]
    #[non_exhaustive]
    Connect {
        /// The command or URL.
        target: String,
        /// What failed.
        reason: String,
    },
}

impl Error {
    /// The JSON-RPC error the server answered with, if that is what this is.
    pub fn rpc(&self) -> Option<&JsonRpcErrorObject> {
        match self {
            Error::Rpc { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The JSON-RPC error code the server answered with, if any.
    pub fn code(&self) -> Option<i64> {
        self.rpc().map(|error| error.code)
    }
}
