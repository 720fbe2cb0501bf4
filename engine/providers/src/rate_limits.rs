//! What a model response's rate-limit headers say, as the wire's [`RateLimitSnapshot`].
//!
//! OpenAI-compatible servers describe their limits with response headers:
//! `x-ratelimit-limit-requests`, `x-ratelimit-remaining-requests`,
//! `x-ratelimit-reset-requests` and the same three ending in `-tokens`. They map onto the
//! wire's [`RateLimitSnapshot`] like this:
//!
//! - `primary` is the requests window, `secondary` the tokens window; each is reported only
//!   when both its `limit` and `remaining` headers are present and numeric.
//! - `usedPercent` = (limit − remaining) / limit × 100, rounded to the nearest integer and kept
//!   within 0–100 (a limit of 0 counts as fully used).
//! - `resetsAt` = the time the response arrived plus the `reset` duration (`1s`, `6m0s`,
//!   `20ms`, `1h2m3.5s`, or a plain number of seconds), in Unix seconds rounded up; `null`
//!   when the header is missing or unreadable.
//! - `windowDurationMins` is `null`: the headers do not say how long a window is.
//! - `limitId` is the provider's id (its key under `[model_providers]`), `limitName` its
//!   `name` (else the id); `rateLimitReachedType` is `rate_limit_reached` when either window
//!   has nothing remaining. Plan, credits and spending caps are `null`: a chat-completions
//!   server reports none of them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agentwire_protocol::{RateLimitReachedType, RateLimitSnapshot, RateLimitWindow};
use reqwest::header::HeaderMap;

/// One window's three headers.
#[derive(Debug, Clone, Copy)]
struct Headers<'a> {
    limit: Option<&'a str>,
    remaining: Option<&'a str>,
    reset: Option<&'a str>,
}

/// What the rate-limit headers of a response from provider `id` (display name `name`) say;
/// `None` when it carries none of them.
pub fn from_headers(id: &str, name: &str, headers: &HeaderMap) -> Option<RateLimitSnapshot> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let window = |kind: &str| Headers {
        limit: get(&format!("x-ratelimit-limit-{kind}")),
        remaining: get(&format!("x-ratelimit-remaining-{kind}")),
        reset: get(&format!("x-ratelimit-reset-{kind}")),
    };
    let requests = window("requests");
    let tokens = window("tokens");
    let any = [requests, tokens]
        .iter()
        .any(|w| w.limit.is_some() || w.remaining.is_some() || w.reset.is_some());
    any.then(|| snapshot(id, name, requests, tokens, SystemTime::now()))
}

fn snapshot(
    id: &str,
    name: &str,
    requests: Headers<'_>,
    tokens: Headers<'_>,
    now: SystemTime,
) -> RateLimitSnapshot {
    let primary = window(requests, now);
    let secondary = window(tokens, now);
    let exhausted = [requests, tokens]
        .iter()
        .any(|w| number(w.remaining) == Some(0));
    RateLimitSnapshot::builder()
        .limit_id(id)
        .limit_name(name)
        .maybe_primary(primary)
        .maybe_secondary(secondary)
        .maybe_rate_limit_reached_type(exhausted.then_some(RateLimitReachedType::RateLimitReached))
        .build()
}

fn number(text: Option<&str>) -> Option<u64> {
    text?.trim().parse().ok()
}

fn window(headers: Headers<'_>, now: SystemTime) -> Option<RateLimitWindow> {
    let limit = number(headers.limit)?;
    let remaining = number(headers.remaining)?;
    let used_percent = if limit == 0 {
        100
    } else {
        let used = limit.saturating_sub(remaining) as f64 / limit as f64 * 100.0;
        used.round().clamp(0.0, 100.0) as i32
    };
    let resets_at = headers
        .reset
        .and_then(parse_duration)
        .and_then(|d| (now + d).duration_since(UNIX_EPOCH).ok())
        .map(|t| {
            let secs = t.as_secs() + u64::from(t.subsec_nanos() > 0);
            i64::try_from(secs).unwrap_or(i64::MAX)
        });
    Some(
        RateLimitWindow::builder()
            .used_percent(used_percent)
            .maybe_resets_at(resets_at)
            .build(),
    )
}

/// A Go-style duration (`1h2m3.5s`, `20ms`, `6m0s`) or a plain number of seconds.
fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if let Ok(secs) = text.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let mut total = 0.0_f64;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += value * scale;
    }
    Duration::try_from_secs_f64(total).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_the_forms_servers_send() {
        assert_eq!(parse_duration("1s"), Some(Duration::from_secs(1)));
        assert_eq!(parse_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(parse_duration("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(
            parse_duration("1h2m3.5s"),
            Some(Duration::from_millis(3_723_500))
        );
        assert_eq!(parse_duration("12"), Some(Duration::from_secs(12)));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration("5y"), None);
        assert_eq!(parse_duration(""), None);
    }

    #[test]
    fn headers_map_onto_the_two_windows() {
        let now = UNIX_EPOCH + Duration::from_secs(1000);
        let requests = Headers {
            limit: Some("100"),
            remaining: Some("75"),
            reset: Some("30s"),
        };
        let tokens = Headers {
            limit: Some("1000"),
            remaining: Some("0"),
            reset: Some("1.5s"),
        };
        let snap = snapshot("local", "Local", requests, tokens, now);
        assert_eq!(snap.limit_id.as_deref(), Some("local"));
        let primary = snap.primary.expect("requests window");
        assert_eq!(primary.used_percent, 25);
        assert_eq!(primary.resets_at, Some(1030));
        assert_eq!(primary.window_duration_mins, None);
        let secondary = snap.secondary.expect("tokens window");
        assert_eq!(secondary.used_percent, 100);
        assert_eq!(secondary.resets_at, Some(1002));
        assert_eq!(
            snap.rate_limit_reached_type,
            Some(RateLimitReachedType::RateLimitReached)
        );
        // A window without a numeric limit is not reported.
        let partial = Headers {
            limit: None,
            remaining: Some("3"),
            reset: None,
        };
        let snap = snapshot("x", "x", partial, partial, now);
        assert_eq!((snap.primary, snap.secondary), (None, None));
        assert_eq!(snap.rate_limit_reached_type, None);
    }

    #[test]
    fn a_response_without_the_headers_says_nothing() {
        assert_eq!(from_headers("a", "a", &HeaderMap::new()), None);
    }
}
