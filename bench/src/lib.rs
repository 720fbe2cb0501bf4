//! The parts the benchmark programs share: driving a server over stdio ([`session`]),
//! medians of rounds ([`stats`]) and keeping the vCPUs awake while measuring ([`awake`]).

pub mod awake;
pub mod session;
pub mod stats;

use std::path::PathBuf;

/// Where `scripts/install-bench-tools.sh` puts the reference server, under the bench crate.
const CODEX_IN_BENCH: &str =
    "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex";

/// The reference server to run: `explicit` when given, else the one the install script put
/// under the bench crate.
pub fn reference_server(explicit: Option<PathBuf>) -> PathBuf {
    explicit.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(CODEX_IN_BENCH))
}
