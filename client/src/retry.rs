//! Retries of requests the server refused as overloaded (-32001), with jittered backoff.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// How requests answered -32001 (server overloaded) are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// How many times a request is sent at most (1 = no retry).
    pub max_attempts: u32,
    /// The pause before the first retry (before jitter); it doubles after each retry.
    pub initial_backoff: Duration,
    /// The longest pause between two attempts (before jitter).
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 6,
            initial_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(2),
        }
    }
}

impl RetryPolicy {
    /// No retries: an overloaded answer is returned at once.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The pause before attempt `attempt + 1` (`attempt` counts from 1): the exponential
    /// backoff, capped, then scaled by a random factor in [0.5, 1.0) so that clients refused
    /// together do not come back together.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let doubling = 2u32.saturating_pow(attempt.saturating_sub(1));
        let base = self
            .initial_backoff
            .saturating_mul(doubling)
            .min(self.max_backoff);
        base.mul_f64(0.5 + random_unit() / 2.0)
    }
}

/// A random number in [0, 1): from the standard library's randomly keyed hasher.
fn random_unit() -> f64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_is_capped_and_jittered_within_half() {
        let policy = RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(500),
        };
        for (attempt, base) in [(1, 100), (2, 200), (3, 400), (4, 500), (9, 500)] {
            for _ in 0..50 {
                let pause = policy.backoff(attempt);
                let base = Duration::from_millis(base);
                assert!(pause >= base / 2 && pause < base, "{attempt}: {pause:?}");
            }
        }
        let distinct: std::collections::HashSet<_> = (0..20).map(|_| policy.backoff(3)).collect();
        assert!(distinct.len() > 1, "no jitter: {distinct:?}");
    }
}
