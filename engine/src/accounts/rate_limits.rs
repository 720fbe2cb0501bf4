//! What the providers' rate-limit headers said on the last model call (read by
//! `account/rateLimits/read`); the headers are read by `agentwire_providers::rate_limits`.

use std::collections::BTreeMap;
use std::sync::Mutex;

use agentwire_protocol::RateLimitSnapshot;
use agentwire_support::lock;

/// The snapshots recorded so far.
#[derive(Debug, Default)]
pub(crate) struct RateLimits {
    state: Mutex<Recorded>,
}

#[derive(Debug, Default)]
struct Recorded {
    /// The provider id of the last call that carried rate-limit headers.
    last: Option<String>,
    /// The latest snapshot of each provider, by id.
    by_provider: BTreeMap<String, RateLimitSnapshot>,
}

impl RateLimits {
    /// Records what a response from provider `id` said.
    pub(crate) fn record(&self, id: &str, snapshot: RateLimitSnapshot) {
        let mut state = lock(&self.state);
        state.last = Some(id.to_owned());
        state.by_provider.insert(id.to_owned(), snapshot);
    }

    /// The last call's snapshot (all `null` before any call reported limits) and every
    /// provider's latest (`None` before any).
    pub(crate) fn read(
        &self,
    ) -> (
        RateLimitSnapshot,
        Option<BTreeMap<String, RateLimitSnapshot>>,
    ) {
        let state = lock(&self.state);
        let last = state
            .last
            .as_ref()
            .and_then(|id| state.by_provider.get(id))
            .cloned()
            .unwrap_or_else(empty);
        let all = (!state.by_provider.is_empty()).then(|| state.by_provider.clone());
        (last, all)
    }
}

/// A snapshot that reports nothing.
pub(crate) fn empty() -> RateLimitSnapshot {
    RateLimitSnapshot::builder().build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_call_and_each_providers_latest_are_read() {
        let limits = RateLimits::default();
        assert_eq!(limits.read(), (empty(), None));
        let snapshot = |id: &str| RateLimitSnapshot::builder().limit_id(id).build();
        limits.record("a", snapshot("a"));
        limits.record("b", snapshot("b"));
        let (last, all) = limits.read();
        assert_eq!(last, snapshot("b"));
        assert_eq!(
            all.map(|all| all.into_keys().collect::<Vec<_>>()),
            Some(vec!["a".to_owned(), "b".to_owned()])
        );
    }
}
