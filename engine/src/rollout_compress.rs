//! `rollout/compress`: starts a best-effort background pass that gzips cold rollouts.
//!
//! The answer (`{}`) comes at once and only says the request was taken: a pass is started, or
//! one was running already. With the embedded store the pass compresses every rollout that no
//! connection has loaded and that was not modified for `[store] compress_after_days` days
//! (default 7), see `agentwire_store::compress`; compressed rollouts keep reading, listing,
//! searching, resuming and archiving as before. The PostgreSQL store keeps no local rollout
//! files: there the request is answered and does nothing.

use std::time::Duration;

use agentwire_protocol::RolloutCompressResponse;
use agentwire_protocol::methods::RolloutCompress;
use agentwire_runtime::HandlerError;
use agentwire_store::compress::DEFAULT_AFTER_DAYS;

use crate::Engine;
use crate::pool::blocking;

/// Seconds in a day.
const DAY: u64 = 86_400;

/// `rollout/compress`.
pub(crate) async fn compress(engine: &Engine) -> Result<RolloutCompressResponse, HandlerError> {
    let threads = engine.threads.clone();
    let config = engine.config_store.clone();
    blocking::<RolloutCompress, _, _>(move || {
        let days = config
            .effective(None)
            .file
            .store
            .as_ref()
            .and_then(|store| store.compress_after_days)
            .unwrap_or(DEFAULT_AFTER_DAYS);
        let after = Duration::from_secs(days.saturating_mul(DAY));
        match threads.compress_cold(after) {
            Ok(true) => tracing::info!(days, "rollout compression pass started"),
            Ok(false) => tracing::debug!("rollout compression: a pass runs already, or no files"),
            Err(error) => return Err(error.into_handler("rollout/compress")),
        }
        Ok(RolloutCompressResponse::builder().build())
    })
    .await
}
