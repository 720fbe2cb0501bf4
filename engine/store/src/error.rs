//! Why a thread operation failed, and the JSON-RPC error each reason becomes.

use agentwire_runtime::HandlerError;

use crate::record::RolloutError;

/// A failed thread operation.
#[derive(Debug, thiserror::Error)]
pub enum ThreadError {
    /// No thread has this id (neither loaded nor persisted). → -32600
    #[error("thread not found: {0}")]
    NotFound(String),
    /// The params ask for something impossible (bad cursor, unknown turn …). → -32602
    #[error("{0}")]
    InvalidParams(String),
    /// The thread is not in a state that allows the operation. → -32600
    #[error("{0}")]
    Conflict(String),
    /// Reading or writing the rollouts or the index failed. → -32603
    #[error("thread storage failed: {0}")]
    Storage(String),
}

impl ThreadError {
    /// The JSON-RPC error answering a request for `method`.
    pub fn into_handler(self, method: &str) -> HandlerError {
        match self {
            ThreadError::InvalidParams(reason) => HandlerError::invalid_params(method, reason),
            ThreadError::NotFound(_) | ThreadError::Conflict(_) => {
                HandlerError::invalid_request(self.to_string())
            }
            ThreadError::Storage(_) => {
                tracing::error!(method, error = %self, "thread storage failed");
                HandlerError::internal(self.to_string())
            }
        }
    }
}

impl From<std::io::Error> for ThreadError {
    fn from(error: std::io::Error) -> Self {
        ThreadError::Storage(error.to_string())
    }
}

impl From<rusqlite::Error> for ThreadError {
    fn from(error: rusqlite::Error) -> Self {
        ThreadError::Storage(format!("index: {error}"))
    }
}

impl From<RolloutError> for ThreadError {
    fn from(error: RolloutError) -> Self {
        ThreadError::Storage(error.to_string())
    }
}
