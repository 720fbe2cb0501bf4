//! HTTP failures as turn errors the user can act on.

use agentwire_protocol::CodexErrorInfo;

use super::sse::excerpt;
use crate::call::ProviderEvent;

/// A failed call: the user's message, details, and the failure kind.
pub(crate) fn failure(
    message: String,
    details: Option<String>,
    info: CodexErrorInfo,
) -> ProviderEvent {
    ProviderEvent::Error {
        message,
        details,
        info: Some(info),
    }
}

/// The error for an HTTP `status` answered with `body` by provider `name`, whose key comes
/// from `env_key` (if any), at `url`.
pub(crate) fn http_status(
    name: &str,
    url: &str,
    status: u16,
    body: &str,
    env_key: Option<&str>,
) -> ProviderEvent {
    let details = Some(format!(
        "HTTP {status} from {url}: {}",
        excerpt(body.trim())
    ));
    let lower = body.to_ascii_lowercase();
    let (message, info) = match status {
        401 | 403 => (
            match env_key {
                Some(key) => format!(
                    "{name} refused the credentials (HTTP {status}); check the API key in ${key}."
                ),
                None => format!(
                    "{name} refused the request as unauthorized (HTTP {status}); sign in with \
                     an API key: run `agentwire login --with-api-key` with the key on stdin \
                     (clients: account/login/start), or set `env_key` in its \
                     [model_providers] table to the variable that holds the key."
                ),
            },
            CodexErrorInfo::Unauthorized,
        ),
        404 if lower.contains("model") => (
            format!(
                "{name} does not know the model (HTTP 404); check `model` in config.toml or the \
                 thread's model against the models the server serves."
            ),
            CodexErrorInfo::ModelNotFound,
        ),
        404 => (
            format!(
                "{name} answered HTTP 404 for {url}; check `base_url` (it usually ends in `/v1`)."
            ),
            CodexErrorInfo::BadRequest,
        ),
        400 | 413 | 422
            if lower.contains("context_length_exceeded")
                || lower.contains("maximum context length")
                || lower.contains("context window")
                || lower.contains("context length") =>
        {
            (
                format!(
                    "The conversation no longer fits the model's context window ({name}, HTTP \
                     {status}); start a new thread or use a model with a larger context."
                ),
                CodexErrorInfo::ContextWindowExceeded,
            )
        }
        400..=499 if status != 429 => (
            format!("{name} refused the request as invalid (HTTP {status}); see the details."),
            CodexErrorInfo::BadRequest,
        ),
        429 => (
            format!(
                "{name} is rate limiting requests (HTTP 429) and retries did not help; try again later."
            ),
            CodexErrorInfo::RateLimitExceeded,
        ),
        503 => (
            format!("{name} is overloaded (HTTP 503) and retries did not help; try again later."),
            CodexErrorInfo::ServerOverloaded,
        ),
        _ => (
            format!("{name} failed (HTTP {status}) and retries did not help; see the details."),
            CodexErrorInfo::InternalServerError,
        ),
    };
    failure(message, details, info)
}

/// `error` and its causes, on one line.
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(status: u16, body: &str) -> (String, Option<String>, CodexErrorInfo) {
        match http_status(
            "local",
            "http://h/v1/chat/completions",
            status,
            body,
            Some("KEY"),
        ) {
            ProviderEvent::Error {
                message,
                details,
                info: Some(info),
            } => (message, details, info),
            other => panic!("not an error: {other:?}"),
        }
    }

    #[test]
    fn statuses_map_to_error_kinds() {
        let (message, details, info) = classify(401, "{\"error\":\"bad key\"}");
        assert_eq!(info, CodexErrorInfo::Unauthorized);
        assert!(message.contains("$KEY"), "{message}");
        let details = details.expect("details");
        assert!(
            details.contains("HTTP 401") && details.contains("bad key"),
            "{details}"
        );
        assert_eq!(classify(403, "").2, CodexErrorInfo::Unauthorized);
        assert_eq!(
            classify(404, "model 'x' not found").2,
            CodexErrorInfo::ModelNotFound
        );
        assert_eq!(classify(404, "no route").2, CodexErrorInfo::BadRequest);
        for body in [
            "{\"error\":{\"code\":\"context_length_exceeded\"}}",
            "This model's maximum context length is 8192 tokens",
            "the request exceeds the available context window",
        ] {
            assert_eq!(
                classify(400, body).2,
                CodexErrorInfo::ContextWindowExceeded,
                "{body}"
            );
        }
        assert_eq!(classify(400, "bad json").2, CodexErrorInfo::BadRequest);
        assert_eq!(
            classify(429, "slow down").2,
            CodexErrorInfo::RateLimitExceeded
        );
        assert_eq!(classify(503, "").2, CodexErrorInfo::ServerOverloaded);
        assert_eq!(classify(500, "").2, CodexErrorInfo::InternalServerError);
        assert_eq!(classify(502, "").2, CodexErrorInfo::InternalServerError);
    }

    #[test]
    fn details_quote_a_truncated_body() {
        let body = "x".repeat(10_000);
        let details = classify(500, &body).1.expect("details");
        assert!(details.len() < 1_000, "{}", details.len());
        assert!(details.ends_with('…'));
    }

    #[test]
    fn unauthorized_without_env_key_says_how_to_set_one() {
        let ProviderEvent::Error { message, .. } = http_status("p", "u", 401, "", None) else {
            panic!("not an error");
        };
        assert!(message.contains("env_key"), "{message}");
    }
}
