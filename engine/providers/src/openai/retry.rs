//! When to retry a failed request, and how long to wait first.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// Retries when the provider sets no `request_max_retries`.
pub(crate) const DEFAULT_MAX_RETRIES: u32 = 4;
/// The wait before the first retry; it doubles with each further one.
const BASE_DELAY: Duration = Duration::from_millis(200);
/// The longest computed wait.
const MAX_DELAY: Duration = Duration::from_secs(10);
/// The longest wait a server's `Retry-After` can ask for.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Whether a response with `status` is worth retrying: rate limits and server failures.
pub(crate) fn retryable_status(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// The wait before retry number `attempt` (0 for the first): the server's `Retry-After`
/// seconds when it gave any (capped), else an exponential backoff with jitter.
pub(crate) fn delay(attempt: u32, retry_after: Option<&str>) -> Duration {
    if let Some(seconds) = retry_after.and_then(|v| v.trim().parse::<u64>().ok()) {
        return Duration::from_secs(seconds).min(MAX_RETRY_AFTER);
    }
    let backoff = BASE_DELAY
        .saturating_mul(2u32.saturating_pow(attempt.min(16)))
        .min(MAX_DELAY);
    // Between half and all of the backoff, so clients that failed together spread out.
    let half = backoff / 2;
    let jitter_ms = u64::try_from(half.as_millis()).unwrap_or(u64::MAX);
    half + Duration::from_millis(random() % jitter_ms.saturating_add(1))
}

/// A random number (from the standard library's randomly keyed hasher).
fn random() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limits_and_server_failures_are_retried() {
        for status in [429, 500, 502, 503, 504] {
            assert!(retryable_status(status), "{status}");
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(!retryable_status(status), "{status}");
        }
    }

    #[test]
    fn backoff_grows_with_jitter_and_is_capped() {
        for attempt in 0..5 {
            let full = BASE_DELAY * 2u32.pow(attempt);
            let wait = delay(attempt, None);
            assert!(
                wait >= full / 2 && wait <= full,
                "attempt {attempt}: {wait:?}"
            );
        }
        assert!(delay(30, None) <= MAX_DELAY);
    }

    #[test]
    fn retry_after_seconds_are_honoured_and_capped() {
        assert_eq!(delay(0, Some("3")), Duration::from_secs(3));
        assert_eq!(delay(0, Some("0")), Duration::ZERO);
        assert_eq!(delay(0, Some("86400")), MAX_RETRY_AFTER);
        // An HTTP date is not understood; the backoff applies.
        assert!(delay(0, Some("Wed, 21 Oct 2015 07:28:00 GMT")) <= BASE_DELAY);
    }
}
