//! Where `agentwire mcp-server` listens: `stdio://` or `http://IP:PORT/PATH`.

use std::net::SocketAddr;
use std::str::FromStr;

/// A `--listen` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpListen {
    /// One JSON-RPC message per line on stdin and stdout.
    Stdio,
    /// The streamable HTTP transport, served at `path` on `addr` (port 0 picks a free port).
    Http {
        /// The address to bind.
        addr: SocketAddr,
        /// The endpoint's path, starting with `/`.
        path: String,
    },
}

impl FromStr for McpListen {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        if value == "stdio://" || value == "stdio" {
            return Ok(McpListen::Stdio);
        }
        let Some(rest) = value.strip_prefix("http://") else {
            return Err(format!(
                "unsupported listen URL {value:?}: use stdio:// or http://IP:PORT/PATH"
            ));
        };
        let (authority, path) = match rest.find('/') {
            Some(slash) => (&rest[..slash], &rest[slash..]),
            None => (rest, "/mcp"),
        };
        let addr: SocketAddr = authority.parse().map_err(|e| {
            format!("invalid address {authority:?} in {value:?} (an IP and a port, e.g. 127.0.0.1:8080): {e}")
        })?;
        if path.contains(['?', '#']) || path.len() < 2 {
            return Err(format!(
                "invalid path {path:?} in {value:?}: give a plain path such as /mcp"
            ));
        }
        Ok(McpListen::Http {
            addr,
            path: path.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stdio_and_http() {
        assert_eq!("stdio://".parse(), Ok(McpListen::Stdio));
        assert_eq!(
            "http://127.0.0.1:0/mcp".parse(),
            Ok(McpListen::Http {
                addr: "127.0.0.1:0".parse().expect("addr"),
                path: "/mcp".to_owned()
            })
        );
        assert_eq!(
            "http://[::1]:8080".parse::<McpListen>().map(|l| match l {
                McpListen::Http { path, .. } => path,
                McpListen::Stdio => String::new(),
            }),
            Ok("/mcp".to_owned())
        );
        assert!("ws://127.0.0.1:1".parse::<McpListen>().is_err());
        assert!("http://localhost:1/mcp".parse::<McpListen>().is_err());
        assert!("http://127.0.0.1:1/".parse::<McpListen>().is_err());
    }
}
