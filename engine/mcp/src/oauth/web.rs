//! The HTTP requests of an OAuth sign-in: a client with time limits, bounded JSON bodies,
//! form bodies, and the rule that OAuth endpoints are `https://` unless they are on this
//! machine.

use std::time::Duration;

use reqwest::Url;

/// Time limit of one request to an authorization server or to the MCP server's probe.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest metadata, registration or token answer read.
const MAX_BODY: usize = 256 * 1024;

/// The HTTP client of sign-ins (no cookies; redirects followed for metadata reads).
pub(crate) fn client() -> Result<reqwest::Client, String> {
    agentwire_support::tls::install_crypto_provider();
    reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))
}

/// Whether `url` may carry OAuth traffic: `https://`, or `http://` to a loopback host.
pub(crate) fn check_endpoint(what: &str, url: &str) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|e| format!("{what} {url:?} is not a URL: {e}"))?;
    let host = parsed.host_str().unwrap_or_default();
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        _ => Err(format!(
            "{what} {url:?} must be an https:// URL (plain http only on this machine)"
        )),
    }
}

/// The body of `response`, at most [`MAX_BODY`] bytes.
pub(crate) async fn body(mut response: reqwest::Response, what: &str) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("reading {what} failed: {e}"))?
    {
        if bytes.len() + chunk.len() > MAX_BODY {
            return Err(format!("{what} is larger than {MAX_BODY} bytes"));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// The JSON object of a successful `response`; an HTTP error is reported with the start of
/// its body (OAuth errors carry `error` and `error_description`).
pub(crate) async fn json(
    response: reqwest::Response,
    what: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let status = response.status();
    let bytes = body(response, what).await?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&bytes);
        let detail = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| {
                let error = v.get("error")?.as_str()?.to_owned();
                Some(match v.get("error_description").and_then(|d| d.as_str()) {
                    Some(description) => format!("{error}: {description}"),
                    None => error,
                })
            })
            .unwrap_or_else(|| text.chars().take(200).collect());
        return Err(format!("{what} answered HTTP {status}: {detail}"));
    }
    match serde_json::from_slice(&bytes) {
        Ok(serde_json::Value::Object(object)) => Ok(object),
        Ok(_) => Err(format!("{what} is not a JSON object")),
        Err(e) => Err(format!("{what} is not JSON: {e}")),
    }
}

/// `pairs` as an `application/x-www-form-urlencoded` body.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    // The URL parser's query serializer is the form encoder (`application/x-www-form-urlencoded`).
    let Ok(mut carrier) = Url::parse("http://form.invalid/") else {
        return String::new();
    };
    carrier.query_pairs_mut().extend_pairs(pairs);
    carrier.query().unwrap_or_default().to_owned()
}

/// POSTs `pairs` as a form to `endpoint`; the JSON answer.
pub(crate) async fn post_form(
    client: &reqwest::Client,
    endpoint: &str,
    pairs: &[(&str, &str)],
    what: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let response = client
        .post(endpoint)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(reqwest::header::ACCEPT, "application/json")
        .body(form(pairs))
        .send()
        .await
        .map_err(|e| format!("{what} at {endpoint} failed: {e}"))?;
    json(response, what).await
}

/// A string member of `object`.
pub(crate) fn string(
    object: &serde_json::Map<String, serde_json::Value>,
    key: &str,
) -> Option<String> {
    object
        .get(key)
        .and_then(serde_json::Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A list of strings member of `object` (other entries skipped).
pub(crate) fn strings(
    object: &serde_json::Map<String, serde_json::Value>,
    key: &str,
) -> Option<Vec<String>> {
    let list = object.get(key)?.as_array()?;
    Some(
        list.iter()
            .filter_map(serde_json::Value::as_str)
            .map(str::to_owned)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_https_or_loopback_http() {
        assert!(check_endpoint("token endpoint", "https://as.example/token").is_ok());
        assert!(check_endpoint("token endpoint", "http://127.0.0.1:9/token").is_ok());
        assert!(check_endpoint("token endpoint", "http://localhost/token").is_ok());
        assert!(check_endpoint("token endpoint", "http://[::1]:8/t").is_ok());
        let error = check_endpoint("token endpoint", "http://as.example/token")
            .expect_err("plain http elsewhere");
        assert!(error.contains("token endpoint"), "{error}");
        assert!(check_endpoint("x", "file:///etc/passwd").is_err());
    }

    #[test]
    fn forms_are_url_encoded() {
        assert_eq!(
            form(&[
                ("a", "b c"),
                ("redirect_uri", "http://127.0.0.1:1/callback")
            ]),
            "a=b+c&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcallback"
        );
    }
}
