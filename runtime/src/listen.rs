//! The `--listen URL` values: where the server takes its connections.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Where to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// `stdio://`: one connection over stdin/stdout, one JSON message per line.
    Stdio,
    /// `ws://IP:PORT`: websocket over TCP, one JSON message per text frame.
    Ws(SocketAddr),
    /// `unix://` or `unix://PATH`: the websocket protocol over a Unix socket; `None` is the
    /// default path under the server's home (see [`default_unix_socket`]).
    Unix(Option<PathBuf>),
    /// `off`: serve nothing.
    Off,
}

/// A `--listen` value that is not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --listen {value:?}: {reason}")]
pub struct ListenError {
    value: String,
    reason: String,
}

impl ListenError {
    fn new(value: &str, reason: impl Into<String>) -> Self {
        Self {
            value: value.to_owned(),
            reason: reason.into(),
        }
    }
}

const EXPECTED: &str = "expected stdio://, ws://IP:PORT (for example ws://127.0.0.1:4500), \
                        unix://, unix://PATH or off";

impl FromStr for Listen {
    type Err = ListenError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        if value == "off" {
            return Ok(Self::Off);
        }
        if value == "stdio://" || value == "stdio" {
            return Ok(Self::Stdio);
        }
        if let Some(rest) = value.strip_prefix("ws://") {
            let authority = rest.strip_suffix('/').unwrap_or(rest);
            if authority.contains('/') {
                return Err(ListenError::new(
                    value,
                    "a ws:// listener takes no path; the websocket is served on every path \
                     except /readyz and /healthz",
                ));
            }
            return authority.parse::<SocketAddr>().map(Self::Ws).map_err(|_| {
                ListenError::new(
                    value,
                    "ws:// needs an IP address and a port, for example ws://127.0.0.1:4500 \
                         or ws://[::1]:0 (host names are not resolved)",
                )
            });
        }
        if let Some(path) = value.strip_prefix("unix://") {
            return Ok(Self::Unix(if path.is_empty() {
                None
            } else {
                Some(PathBuf::from(path))
            }));
        }
        if value.starts_with("wss://") {
            return Err(ListenError::new(
                value,
                "TLS is not served; use ws:// behind a TLS-terminating proxy",
            ));
        }
        Err(ListenError::new(value, EXPECTED))
    }
}

impl fmt::Display for Listen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stdio => f.write_str("stdio://"),
            Self::Ws(addr) => write!(f, "ws://{addr}"),
            Self::Unix(None) => f.write_str("unix://"),
            Self::Unix(Some(path)) => write!(f, "unix://{}", path.display()),
            Self::Off => f.write_str("off"),
        }
    }
}

/// The socket `unix://` listens on: `HOME/app-server-control/app-server.sock`.
pub fn default_unix_socket(home: &Path) -> PathBuf {
    home.join("app-server-control").join("app-server.sock")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!("stdio://".parse(), Ok(Listen::Stdio));
        assert_eq!("off".parse(), Ok(Listen::Off));
        assert_eq!(
            "ws://127.0.0.1:0".parse(),
            Ok(Listen::Ws("127.0.0.1:0".parse().expect("addr")))
        );
        assert_eq!(
            "ws://[::1]:4500/".parse(),
            Ok(Listen::Ws("[::1]:4500".parse().expect("addr")))
        );
        assert_eq!("unix://".parse(), Ok(Listen::Unix(None)));
        assert_eq!(
            "unix:///tmp/a.sock".parse(),
            Ok(Listen::Unix(Some(PathBuf::from("/tmp/a.sock"))))
        );
    }

    #[test]
    fn refuses_the_rest_with_a_reason() {
        for bad in [
            "",
            "tcp://127.0.0.1:1",
            "ws://localhost:4500",
            "ws://127.0.0.1",
            "ws://127.0.0.1:1/socket",
            "wss://127.0.0.1:1",
            "http://127.0.0.1:1",
        ] {
            let error = bad.parse::<Listen>().expect_err(bad).to_string();
            assert!(error.starts_with("invalid --listen"), "{error}");
        }
    }
}
