//! The `web_search` tool: a query sent to a SearXNG-compatible JSON search endpoint named in
//! `config.toml`, its top results returned to the model.
//!
//! ```toml
//! [tools.web_search]
//! endpoint = "http://127.0.0.1:8888/search"
//! ```
//!
//! The tool is offered only when `endpoint` is set (off by default). A call is
//! `GET {endpoint}?q={query}&format=json`; the answer's `results` (each `title`, `url`,
//! `content`) are read from a bounded body, at most `MAX_RESULTS` of them, each field cut
//! to a bounded length. Codex's own `[tools]` keys (`web_search = true`, `view_image`) are
//! accepted and mean nothing here: there is no hosted search without an endpoint.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

/// Most results returned to the model.
pub(crate) const MAX_RESULTS: usize = 5;
/// Largest search answer read.
const MAX_BODY: usize = 2 * 1024 * 1024;
/// Time limit of one search.
const TIMEOUT: Duration = Duration::from_secs(20);
/// Longest title or URL kept, in characters.
const MAX_FIELD: usize = 300;
/// Longest snippet kept, in characters.
const MAX_SNIPPET: usize = 600;

/// The `[tools]` table as agentwire reads it: only `web_search.endpoint`. Anything else (Codex's
/// booleans included) is accepted and ignored, so this never makes the configuration invalid.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolsToml {
    /// The search endpoint (`[tools.web_search] endpoint`), when set to a non-empty string.
    pub web_search_endpoint: Option<String>,
}

impl<'de> Deserialize<'de> for ToolsToml {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = toml::Value::deserialize(deserializer)?;
        let endpoint = value
            .get("web_search")
            .and_then(|w| w.get("endpoint"))
            .and_then(toml::Value::as_str)
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(str::to_owned);
        Ok(Self {
            web_search_endpoint: endpoint,
        })
    }
}

/// One search result as the model gets it.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The page title.
    pub title: String,
    /// The page address.
    pub url: String,
    /// A snippet of the page.
    pub snippet: String,
}

/// Asks `endpoint` for `query`: the top results, or why not (a sentence for the model).
pub async fn search(endpoint: &str, query: &str) -> Result<Vec<Hit>, String> {
    let mut url = reqwest::Url::parse(endpoint)
        .map_err(|e| format!("the search endpoint {endpoint:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "the search endpoint {endpoint:?} must be an http:// or https:// URL"
        ));
    }
    url.query_pairs_mut()
        .append_pair("q", query)
        .append_pair("format", "json");
    agentwire_support::tls::install_crypto_provider();
    let client = reqwest::Client::builder()
        .timeout(TIMEOUT)
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
    let mut response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("the search endpoint did not answer: {e}"))?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("the search answer was cut off: {e}"))?
    {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(format!(
                "the search answer is over {MAX_BODY} bytes; it was not read"
            ));
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        return Err(format!("the search endpoint answered HTTP {status}"));
    }
    let answer: Value =
        serde_json::from_slice(&body).map_err(|e| format!("the search answer is not JSON: {e}"))?;
    hits(&answer)
}

/// The top results of a SearXNG answer (`results[]`).
pub(crate) fn hits(answer: &Value) -> Result<Vec<Hit>, String> {
    let results = answer
        .get("results")
        .and_then(Value::as_array)
        .ok_or("the search answer has no `results` array")?;
    Ok(results
        .iter()
        .filter_map(|result| {
            let field = |name: &str, limit: usize| {
                result
                    .get(name)
                    .and_then(Value::as_str)
                    .map(|text| cut(text.trim(), limit))
                    .unwrap_or_default()
            };
            let url = field("url", MAX_FIELD);
            (!url.is_empty()).then(|| Hit {
                title: field("title", MAX_FIELD),
                url,
                snippet: field("content", MAX_SNIPPET),
            })
        })
        .take(MAX_RESULTS)
        .collect())
}

/// The results as text for the model.
pub fn render(query: &str, hits: &[Hit]) -> String {
    if hits.is_empty() {
        return format!("No results for {query:?}.");
    }
    let mut text = format!("Results for {query:?}:\n");
    for (index, hit) in hits.iter().enumerate() {
        text.push_str(&format!(
            "\n{}. {}\n   {}\n   {}\n",
            index + 1,
            hit.title,
            hit.url,
            hit.snippet
        ));
    }
    text
}

/// `text` cut to at most `limit` characters (an ellipsis marks the cut).
fn cut(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_endpoint_and_ignores_codex_keys() {
        let tools: ToolsToml =
            toml::from_str("[web_search]\nendpoint = \"http://127.0.0.1:8888/search\"\nother = 1")
                .expect("parses");
        assert_eq!(
            tools.web_search_endpoint.as_deref(),
            Some("http://127.0.0.1:8888/search")
        );
        let codex: ToolsToml = toml::from_str("web_search = true\nview_image = false")
            .expect("Codex's booleans are accepted");
        assert_eq!(codex, ToolsToml::default());
    }

    #[test]
    fn keeps_the_top_results_bounded() {
        let many: Vec<Value> = (0..9)
            .map(|i| json!({"title": format!("t{i}"), "url": format!("https://e/{i}"), "content": "x".repeat(2000)}))
            .chain([json!({"title": "no url"})])
            .collect();
        let top = hits(&json!({"results": many})).expect("results");
        assert_eq!(top.len(), MAX_RESULTS);
        assert_eq!(top[0].url, "https://e/0");
        assert_eq!(top[0].snippet.chars().count(), MAX_SNIPPET + 1);
        assert!(hits(&json!({"answers": []})).is_err_and(|e| e.contains("`results`")));
        let text = render("q", &top[..1]);
        assert!(text.contains("1. t0\n   https://e/0"), "{text}");
    }
}
