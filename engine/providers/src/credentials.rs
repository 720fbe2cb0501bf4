//! What a provider needs of the engine's sign-in: the stored API key, and somewhere to put
//! what a response's rate-limit headers said. The engine's accounts implement it; the
//! providers know nothing else of them.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;

use agentwire_protocol::RateLimitSnapshot;

/// The stored key, read now: `Ok(None)` when none is stored, `Err` with a message for the user
/// when the store cannot be read.
pub type StoredKey<'a> = Pin<Box<dyn Future<Output = Result<Option<String>, String>> + Send + 'a>>;

/// The sign-in state a provider uses (see the module docs).
pub trait Credentials: Send + Sync + Debug {
    /// The stored API key, sent as the bearer token by providers that name no `env_key`.
    fn stored_key(&self) -> StoredKey<'_>;

    /// A response from provider `id` carried rate-limit headers saying `snapshot`.
    fn record_rate_limits(&self, id: &str, snapshot: RateLimitSnapshot);
}
