//! Logs: `tracing` to stderr, filtered by `RUST_LOG` (default `info`), JSON lines with
//! `LOG_FORMAT=json`. Stdout is reserved for protocol messages. With `--log-file PATH` they go
//! to that file instead, rotated by size (see [`crate::log_file`]).
//!
//! The operational events (turns, model calls, tool runs, approvals, …) carry an `event` field
//! naming them and their values as fields: see `agentwire_runtime::telemetry`.

use std::path::Path;

use tracing_subscriber::EnvFilter;

use crate::log_file::LogFile;

/// Installs the global subscriber; `default` is the filter used when `RUST_LOG` is unset.
pub fn init_with_default(default: &str) {
    init_to(default, None);
}

/// Installs the global subscriber writing to `file` (rotated, and stderr pointed at it) when
/// given, else to stderr.
pub fn init_to(default: &str, file: Option<&Path>) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let json = std::env::var("LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    let file = match file.map(|path| {
        LogFile::open(
            path,
            crate::log_file::MAX_BYTES,
            crate::log_file::KEEP,
            true,
        )
        .map_err(|error| (path, error))
    }) {
        Some(Ok(file)) => Some(file),
        Some(Err((path, error))) => {
            eprintln!(
                "warning: cannot log to {}: {error}; logging to stderr",
                path.display()
            );
            None
        }
        None => None,
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false);
    let result = match (file, json) {
        (Some(file), true) => builder.with_writer(file).json().try_init(),
        (Some(file), false) => builder.with_writer(file).try_init(),
        (None, true) => builder.with_writer(std::io::stderr).json().try_init(),
        (None, false) => builder.with_writer(std::io::stderr).try_init(),
    };
    if let Err(error) = result {
        eprintln!("warning: logging not initialised: {error}");
    }
}
