//! Which app-server the terminal client drives: a child it spawns (the default), or a remote one
//! named by `--remote`.

use std::net::IpAddr;
use std::path::PathBuf;

/// Why `--remote-auth-token-env` is refused without `--remote`.
pub const TOKEN_WITHOUT_REMOTE: &str = "--remote-auth-token-env requires --remote";

/// Why `--remote-auth-token-env` is refused for a URL that would send the token in clear text to
/// another machine.
pub const TOKEN_NEEDS_SECURE_URL: &str =
    "--remote-auth-token-env requires a wss:// URL or a loopback ws:// URL";

/// Where the client's app-server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Spawn `program args…` and speak over its stdin and stdout.
    Spawn {
        /// The program (normally this very binary).
        program: PathBuf,
        /// Its arguments (`app-server` and any `-c` overrides).
        args: Vec<String>,
    },
    /// A websocket listener (`ws://` or `wss://`), with a bearer token when one is given.
    WebSocket {
        /// The URL as given.
        url: String,
        /// Sent as `Authorization: Bearer …`.
        token: Option<String>,
    },
    /// The app-server's Unix control socket.
    Unix(PathBuf),
}

/// Resolves `--remote URL` and `--remote-auth-token-env VAR` into a remote target, or `None`
/// when no `--remote` is given (the caller spawns a local server). `env` reads a variable.
pub fn remote(
    url: Option<&str>,
    token_env: Option<&str>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Target>, String> {
    let Some(url) = url else {
        return match token_env {
            Some(_) => Err(TOKEN_WITHOUT_REMOTE.to_owned()),
            None => Ok(None),
        };
    };
    if let Some(path) = url.strip_prefix("unix://") {
        if token_env.is_some() {
            return Err(TOKEN_NEEDS_SECURE_URL.to_owned());
        }
        if path.is_empty() {
            return Err(format!("--remote {url}: a unix:// URL needs a socket path"));
        }
        return Ok(Some(Target::Unix(PathBuf::from(path))));
    }
    let secure = if url.starts_with("wss://") {
        true
    } else if let Some(rest) = url.strip_prefix("ws://") {
        is_loopback(host_of(rest))
    } else {
        return Err(format!(
            "--remote {url}: expected ws://HOST:PORT, wss://HOST:PORT or unix://PATH"
        ));
    };
    let token = match token_env {
        None => None,
        Some(_) if !secure => return Err(TOKEN_NEEDS_SECURE_URL.to_owned()),
        Some(var) => Some(env(var).filter(|t| !t.is_empty()).ok_or_else(|| {
            format!("--remote-auth-token-env {var}: the variable is not set or empty")
        })?),
    };
    Ok(Some(Target::WebSocket {
        url: url.to_owned(),
        token,
    }))
}

/// The host part of `host:port/path` (brackets of an IPv6 literal removed).
fn host_of(authority_and_path: &str) -> &str {
    let authority = authority_and_path
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    authority
        .rsplit_once(':')
        .map_or(authority, |(host, _)| host)
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(url: Option<&str>, var: Option<&str>) -> Result<Option<Target>, String> {
        remote(url, var, |name| {
            (name == "TOKEN").then(|| "s3cret".to_owned())
        })
    }

    #[test]
    fn a_token_needs_a_remote_and_a_url_that_does_not_leak_it() {
        assert_eq!(resolve(None, None), Ok(None));
        assert_eq!(
            resolve(None, Some("TOKEN")),
            Err(TOKEN_WITHOUT_REMOTE.into())
        );
        for url in [
            "ws://example.com:4000",
            "ws://10.0.0.2:4000",
            "unix:///tmp/s",
        ] {
            assert_eq!(
                resolve(Some(url), Some("TOKEN")),
                Err(TOKEN_NEEDS_SECURE_URL.into()),
                "{url}"
            );
        }
        for url in [
            "wss://example.com:4000",
            "ws://127.0.0.1:4000",
            "ws://localhost:4000/",
            "ws://[::1]:4000",
        ] {
            assert_eq!(
                resolve(Some(url), Some("TOKEN")),
                Ok(Some(Target::WebSocket {
                    url: url.into(),
                    token: Some("s3cret".into())
                })),
                "{url}"
            );
        }
    }

    #[test]
    fn remotes_without_a_token_and_bad_urls() {
        assert_eq!(
            resolve(Some("ws://example.com:4000"), None),
            Ok(Some(Target::WebSocket {
                url: "ws://example.com:4000".into(),
                token: None
            }))
        );
        assert_eq!(
            resolve(Some("unix:///run/aw.sock"), None),
            Ok(Some(Target::Unix("/run/aw.sock".into())))
        );
        let error = resolve(Some("http://x"), None).expect_err("http is not a remote");
        assert!(error.contains("ws://HOST:PORT"), "{error}");
        let error = resolve(Some("wss://x:1"), Some("UNSET")).expect_err("unset variable");
        assert!(error.contains("UNSET"), "{error}");
    }
}
