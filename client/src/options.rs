//! How a client connects and behaves: [`ClientOptions`], built with its builder
//! (`ClientOptions::builder().request_timeout(..).build()`) or taken as
//! [`ClientOptions::default`] and adjusted field by field. It is `#[non_exhaustive]`, so a new
//! option is never a breaking change.

use std::time::Duration;

use agentwire_protocol::{ClientInfo, InitializeCapabilities};

use crate::retry::RetryPolicy;
use crate::server_requests::{self, ServerRequestHandler};

fn default_client_info() -> ClientInfo {
    ClientInfo::builder()
        .name("agentwire-client".to_owned())
        .version(env!("CARGO_PKG_VERSION").to_owned())
        .build()
}

/// How a client connects and behaves.
#[derive(Clone, bon::Builder)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Who the client is, sent in `initialize`.
    #[builder(default = default_client_info())]
    pub client_info: ClientInfo,
    /// The capabilities offered in `initialize` (`experimentalApi`, notification opt-outs).
    pub capabilities: Option<InitializeCapabilities>,
    /// How long the server may take to answer `initialize`.
    #[builder(default = Duration::from_secs(20))]
    pub initialize_timeout: Duration,
    /// How long any other request may take; `None` waits as long as the connection lives.
    pub request_timeout: Option<Duration>,
    /// Retries of requests refused as overloaded (-32001).
    #[builder(default)]
    pub retry: RetryPolicy,
    /// The largest message accepted from the server, in bytes; longer ones are dropped.
    #[builder(default = 64 * 1024 * 1024)]
    pub max_message_bytes: usize,
    /// Notifications queued for [`Client::next_notification`](crate::Client::next_notification);
    /// when the queue is full the client stops reading (the server sees backpressure). 0
    /// discards every notification.
    #[builder(default = 4096)]
    pub notification_buffer: usize,
    /// `ws://`, `wss://` and `unix://`: sent as `Authorization: Bearer TOKEN`.
    pub bearer_token: Option<String>,
    /// Answers the server's requests; [`server_requests::decline_all`] by default.
    #[builder(default = server_requests::decline_all())]
    pub server_requests: ServerRequestHandler,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("client_info", &self.client_info)
            .field("capabilities", &self.capabilities)
            .field("initialize_timeout", &self.initialize_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("retry", &self.retry)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("notification_buffer", &self.notification_buffer)
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self::builder().build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builder_defaults_are_the_documented_defaults() {
        let options = ClientOptions::default();
        assert_eq!(options.client_info.name, "agentwire-client");
        assert_eq!(options.initialize_timeout, Duration::from_secs(20));
        assert_eq!(options.request_timeout, None);
        assert_eq!(options.retry, RetryPolicy::default());
        assert_eq!(options.max_message_bytes, 64 * 1024 * 1024);
        assert_eq!(options.notification_buffer, 4096);
        let set = ClientOptions::builder()
            .request_timeout(Duration::from_secs(3))
            .bearer_token("t".to_owned())
            .build();
        assert_eq!(set.request_timeout, Some(Duration::from_secs(3)));
        assert!(
            !format!("{set:?}").contains("\"t\""),
            "the token is not shown"
        );
    }
}
