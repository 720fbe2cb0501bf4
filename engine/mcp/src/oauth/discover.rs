//! Finding the authorization server of an MCP server reached at a URL:
//!
//! 1. the MCP server is asked (an `initialize` POST without a token); a `401` names its
//!    protected-resource metadata in `WWW-Authenticate: Bearer resource_metadata="…"` (and may
//!    name the `scope` wanted);
//! 2. the protected-resource metadata (RFC 9728) is read from that address, else from
//!    `/.well-known/oauth-protected-resource` (with the URL's path, then without); it names
//!    the authorization servers, the scopes and the resource;
//! 3. the first authorization server's metadata (RFC 8414) is read from
//!    `/.well-known/oauth-authorization-server` (then OpenID Connect's
//!    `/.well-known/openid-configuration`), the issuer's path appended as RFC 8414 says; when
//!    the MCP server publishes no resource metadata, its own origin is taken as the issuer.

use reqwest::Url;

use super::web;

/// What a sign-in needs to know about the authorization server.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Discovered {
    /// Where the user is sent to sign in.
    pub authorization_endpoint: String,
    /// Where codes and refresh tokens are exchanged.
    pub token_endpoint: String,
    /// Where a client registers itself (RFC 7591), if the server allows it.
    pub registration_endpoint: Option<String>,
    /// The scopes the resource asks for (`WWW-Authenticate` `scope`, else its metadata).
    pub scopes: Vec<String>,
    /// The resource indicator (RFC 8707) for the token requests.
    pub resource: String,
}

/// The parameters of a `WWW-Authenticate: Bearer …` challenge, by lower-case name.
pub(crate) fn challenge_params(header: &str) -> Vec<(String, String)> {
    let Some(rest) = header
        .trim()
        .strip_prefix("Bearer")
        .or_else(|| header.trim().strip_prefix("bearer"))
    else {
        return Vec::new();
    };
    let mut params = Vec::new();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let name: String = chars
            .by_ref()
            .take_while(|c| *c != '=')
            .collect::<String>()
            .trim()
            .to_ascii_lowercase();
        if name.is_empty() {
            break;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '"' => break,
                    c => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.peek().copied() {
                if c == ',' || c.is_whitespace() {
                    break;
                }
                value.push(c);
                chars.next();
            }
        }
        params.push((name, value));
    }
    params
}

/// `/.well-known/<suffix>` on the origin of `url`, with `url`'s path appended (RFC 8414 and
/// RFC 9728 insert the suffix before the path); without the path when `with_path` is false.
fn well_known(url: &Url, suffix: &str, with_path: bool) -> Option<String> {
    let path = url.path().trim_end_matches('/');
    let mut at = url.clone();
    at.set_query(None);
    at.set_fragment(None);
    if with_path {
        if path.is_empty() {
            return None;
        }
        at.set_path(&format!("/.well-known/{suffix}{path}"));
    } else {
        at.set_path(&format!("/.well-known/{suffix}"));
    }
    Some(at.to_string())
}

/// The first of `candidates` that answers a JSON object, with the errors of those tried.
async fn first_json(
    client: &reqwest::Client,
    candidates: &[String],
    what: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, Vec<String>> {
    let mut errors = Vec::new();
    for candidate in candidates {
        let result = match client
            .get(candidate)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
        {
            Ok(response) => web::json(response, &format!("{what} {candidate}")).await,
            Err(e) => Err(format!("{what} {candidate}: {e}")),
        };
        match result {
            Ok(object) => return Ok(object),
            Err(error) => errors.push(error),
        }
    }
    Err(errors)
}

/// Asks the MCP server at `url` without a token; the parameters of its challenge (empty when
/// it sent none).
async fn probe(client: &reqwest::Client, url: &str) -> Vec<(String, String)> {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "agentwire", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let Ok(response) = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .body(body.to_string())
        .send()
        .await
    else {
        return Vec::new();
    };
    response
        .headers()
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(challenge_params)
        .collect()
}

/// Discovers the authorization server of the MCP server at `mcp_url`; `resource` overrides
/// the resource indicator.
pub(crate) async fn discover(
    client: &reqwest::Client,
    mcp_url: &str,
    resource: Option<&str>,
) -> Result<Discovered, String> {
    let url = web::check_endpoint("the MCP server's url", mcp_url)?;
    let challenge = probe(client, mcp_url).await;
    let param = |name: &str| {
        challenge
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let mut candidates = Vec::new();
    if let Some(metadata) = param("resource_metadata") {
        web::check_endpoint("resource_metadata", &metadata)?;
        candidates.push(metadata);
    }
    candidates.extend(well_known(&url, "oauth-protected-resource", true));
    candidates.extend(well_known(&url, "oauth-protected-resource", false));
    let protected = first_json(client, &candidates, "protected-resource metadata")
        .await
        .ok();
    let issuer = match protected
        .as_ref()
        .and_then(|p| web::strings(p, "authorization_servers"))
        .and_then(|servers| servers.into_iter().next())
    {
        Some(issuer) => issuer,
        None => url.origin().ascii_serialization(),
    };
    let issuer_url = web::check_endpoint("the authorization server", &issuer)?;
    let mut candidates = Vec::new();
    for suffix in ["oauth-authorization-server", "openid-configuration"] {
        candidates.extend(well_known(&issuer_url, suffix, true));
    }
    if issuer_url.path().trim_end_matches('/').is_empty() {
        for suffix in ["oauth-authorization-server", "openid-configuration"] {
            candidates.extend(well_known(&issuer_url, suffix, false));
        }
    } else {
        candidates.push(format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        ));
    }
    let metadata = first_json(client, &candidates, "authorization server metadata")
        .await
        .map_err(|errors| {
            format!(
                "found no OAuth authorization server metadata for {mcp_url} (issuer {issuer}): {}",
                errors.join("; ")
            )
        })?;
    let endpoint = |key: &str| -> Result<Option<String>, String> {
        match web::string(&metadata, key) {
            Some(value) => web::check_endpoint(key, &value).map(|_| Some(value)),
            None => Ok(None),
        }
    };
    let authorization_endpoint = endpoint("authorization_endpoint")?
        .ok_or("the authorization server metadata has no authorization_endpoint")?;
    let token_endpoint = endpoint("token_endpoint")?
        .ok_or("the authorization server metadata has no token_endpoint")?;
    let registration_endpoint = endpoint("registration_endpoint")?;
    if let Some(methods) = web::strings(&metadata, "code_challenge_methods_supported")
        && !methods.iter().any(|m| m == "S256")
    {
        return Err(format!(
            "the authorization server {issuer} does not support PKCE with S256 (it offers {methods:?})"
        ));
    }
    let scopes = param("scope")
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .or_else(|| {
            protected
                .as_ref()
                .and_then(|p| web::strings(p, "scopes_supported"))
        })
        .unwrap_or_default();
    let resource = resource
        .map(str::to_owned)
        .or_else(|| protected.as_ref().and_then(|p| web::string(p, "resource")))
        .unwrap_or_else(|| mcp_url.to_owned());
    Ok(Discovered {
        authorization_endpoint,
        token_endpoint,
        registration_endpoint,
        scopes,
        resource,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_parameters_are_read_quoted_or_not() {
        let params = challenge_params(
            r#"Bearer error="invalid_token", resource_metadata="http://127.0.0.1:5/.well-known/oauth-protected-resource/mcp", scope=files:read"#,
        );
        assert_eq!(
            params,
            [
                ("error".to_owned(), "invalid_token".to_owned()),
                (
                    "resource_metadata".to_owned(),
                    "http://127.0.0.1:5/.well-known/oauth-protected-resource/mcp".to_owned()
                ),
                ("scope".to_owned(), "files:read".to_owned()),
            ]
        );
        assert!(challenge_params("Basic realm=\"x\"").is_empty());
        assert!(challenge_params("Bearer").is_empty());
    }

    #[test]
    fn well_known_addresses_put_the_suffix_before_the_path() {
        let url = Url::parse("https://mcp.example/v1/mcp?x=1").expect("url");
        assert_eq!(
            well_known(&url, "oauth-protected-resource", true).as_deref(),
            Some("https://mcp.example/.well-known/oauth-protected-resource/v1/mcp")
        );
        assert_eq!(
            well_known(&url, "oauth-authorization-server", false).as_deref(),
            Some("https://mcp.example/.well-known/oauth-authorization-server")
        );
        let root = Url::parse("https://as.example").expect("url");
        assert_eq!(well_known(&root, "openid-configuration", true), None);
    }
}
