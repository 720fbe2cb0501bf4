//! The parts the benchmark programs share: driving a server over stdio ([`session`]),
//! medians of rounds ([`stats`]), keeping the vCPUs awake while measuring ([`awake`]), and
//! where the programs and the machine stand ([`sibling`], [`load_average`]).

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

/// The program `name` next to the running one (how a bench finds `agentwire` or `echo-floor`
/// in the same `target/` directory).
pub fn sibling(name: &str) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate myself: {e}"))?;
    Ok(exe.with_file_name(name))
}

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` gives them ("unknown" without it).
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}
