//! `thread/increment_elicitation` and `thread/decrement_elicitation`: per loaded thread, how
//! many questions a helper outside the server has put to the user and not yet had answered.
//! While the count is above zero the thread is `paused`: the helper is telling the server that
//! the time spent waiting is the user's, not the agent's. The counts live in memory only; a
//! restarted server starts every thread at zero.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{ThreadDecrementElicitation, ThreadIncrementElicitation};
use agentwire_protocol::{
    ThreadDecrementElicitationParams, ThreadDecrementElicitationResponse,
    ThreadIncrementElicitationParams, ThreadIncrementElicitationResponse,
};
use agentwire_runtime::HandlerError;
use agentwire_store::meta::SettingsOverrides;
use agentwire_support::lock;

use crate::threads::Threads;

/// The counts above zero, by thread id.
#[derive(Debug, Default)]
pub(crate) struct Elicitations {
    counts: Mutex<HashMap<String, i64>>,
}

impl Elicitations {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, i64>> {
        lock(&self.counts)
    }

    /// Whether thread `id` waits on the user through a helper now.
    #[cfg(test)]
    pub(crate) fn paused(&self, id: &str) -> bool {
        self.lock().get(id).is_some_and(|count| *count > 0)
    }

    /// Adds one to the count of `id`; the new count.
    fn increment(&self, id: &str) -> Result<i64, String> {
        let mut counts = self.lock();
        let count = counts.entry(id.to_owned()).or_insert(0);
        *count = count
            .checked_add(1)
            .ok_or_else(|| format!("the elicitation count of thread {id} would overflow"))?;
        Ok(*count)
    }

    /// Takes one from the count of `id`; the new count. Refused at zero.
    fn decrement(&self, id: &str) -> Result<i64, String> {
        let mut counts = self.lock();
        let Some(count) = counts.get_mut(id).filter(|c| **c > 0) else {
            return Err(format!(
                "thread {id} has no pending elicitation: its count is already zero"
            ));
        };
        *count -= 1;
        let now = *count;
        if now == 0 {
            counts.remove(id);
        }
        Ok(now)
    }
}

/// Fails unless thread `id` is loaded.
fn check_loaded(threads: &Threads, method: &str, id: &str) -> Result<(), HandlerError> {
    threads
        .update_settings(id, SettingsOverrides::default())
        .map(|_| ())
        .map_err(|e| e.into_handler(method))
}

/// `thread/increment_elicitation`.
pub(crate) fn increment(
    threads: &Threads,
    elicitations: &Elicitations,
    params: ThreadIncrementElicitationParams,
) -> Result<ThreadIncrementElicitationResponse, HandlerError> {
    let method = ThreadIncrementElicitation::NAME;
    check_loaded(threads, method, &params.thread_id)?;
    let count = elicitations
        .increment(&params.thread_id)
        .map_err(HandlerError::invalid_request)?;
    Ok(ThreadIncrementElicitationResponse::builder()
        .count(count)
        .paused(count > 0)
        .build())
}

/// `thread/decrement_elicitation`.
pub(crate) fn decrement(
    threads: &Threads,
    elicitations: &Elicitations,
    params: ThreadDecrementElicitationParams,
) -> Result<ThreadDecrementElicitationResponse, HandlerError> {
    let method = ThreadDecrementElicitation::NAME;
    check_loaded(threads, method, &params.thread_id)?;
    let count = elicitations
        .decrement(&params.thread_id)
        .map_err(|reason| HandlerError::invalid_request(format!("{method}: {reason}")))?;
    Ok(ThreadDecrementElicitationResponse::builder()
        .count(count)
        .paused(count > 0)
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_go_up_and_down_and_never_below_zero() {
        let e = Elicitations::default();
        assert!(e.decrement("t").is_err());
        assert_eq!(e.increment("t"), Ok(1));
        assert_eq!(e.increment("t"), Ok(2));
        assert!(e.paused("t"));
        assert!(!e.paused("other"));
        assert_eq!(e.decrement("t"), Ok(1));
        assert_eq!(e.decrement("t"), Ok(0));
        assert!(!e.paused("t"));
        let err = e.decrement("t").expect_err("zero");
        assert!(err.contains("already zero"), "{err}");
    }
}
