//! agentwire-store: where the engine's persisted threads live, behind one boundary.
//!
//! The engine's `threads` module holds the rules (what each request does to a thread, which
//! notifications follow); a [`ThreadStore`] holds the threads. Two stores implement it:
//!
//! - [`embedded`], the default, which needs nothing: one append-only JSON Lines rollout per
//!   thread under the home and a SQLite index beside them;
//! - [`postgres`], for several app-server workers sharing their threads: records and the list
//!   index in one PostgreSQL database (`[store] url = "postgres://…"` in `config.toml`).
//!
//! Both speak in the same terms: a thread is its sequence of rollout records plus an index row
//! ([`IndexRow`](index::IndexRow)) that `thread/list` pages through. A loaded thread appends
//! through its [`ThreadLog`], whose records are committed in groups off the async path and
//! acknowledged through a [`Pending`](committer::Pending) once durable.
//!
//! Module map, leaves first:
//!
//! - the vocabulary: [`meta`] (a thread's metadata, settings and summary), [`organised`] (its
//!   attachments, queue and section), [`record`] (the rollout format, one record per line),
//!   [`stamp`] (a file's length and modification time), [`error`], [`cursor`] (list and
//!   history cursors);
//! - reading and writing rollouts: [`replay`] (records back into turns), [`writer`]
//!   (appending), [`positions`] (where each turn and item lies, for paging), [`paths`] (the
//!   layout under the home) and [`compressed`] (the plain and gzipped forms);
//! - the embedded store's machinery: [`index`] (SQLite), [`page_cache`] (pages served lately),
//!   [`committer`] (the thread that makes records durable in groups), [`compress`] (the
//!   `rollout/compress` pass);
//! - the boundary and the stores: [`boundary`], [`embedded`], [`postgres`], and [`open`].
//!
//! It is an internal crate of agentwire: its API follows the engine's needs, not semver.

pub mod boundary;
pub mod committer;
pub mod compress;
pub mod compressed;
pub mod cursor;
pub mod embedded;
pub mod error;
pub mod index;
pub mod meta;
pub mod organised;
pub mod page_cache;
pub mod paths;
pub mod positions;
pub mod postgres;
pub mod record;
pub mod replay;
pub mod stamp;
mod unavailable;
pub mod writer;

use std::path::Path;
use std::sync::Arc;

pub use boundary::{Claim, ClaimGuard, Deliver, Relay, Relayed, StoreUrl, ThreadLog, ThreadStore};
pub(crate) use embedded::EmbeddedStore;
pub use unavailable::Unavailable;

/// Opens the store `url` names for the home `home`. A store that cannot be opened is logged
/// and kept as [`Unavailable`]: the engine still serves, and persisted-thread requests answer
/// with the reason.
pub fn open(url: &StoreUrl, home: &Path) -> Arc<dyn ThreadStore> {
    let opened: Result<Arc<dyn ThreadStore>, String> = match url {
        StoreUrl::Embedded => EmbeddedStore::open(home).map(|s| Arc::new(s) as _),
        StoreUrl::Postgres(url) => postgres::PostgresStore::open(url).map(|s| Arc::new(s) as _),
    };
    opened.unwrap_or_else(|error| {
        tracing::error!(error, "thread storage unavailable");
        Arc::new(Unavailable(error))
    })
}
