//! Logs: `tracing` to stderr, filtered by `RUST_LOG` (default `info`), JSON lines with
//! `LOG_FORMAT=json`. Stdout is reserved for protocol messages. With `--log-file PATH` they go
//! to that file instead, rotated by size (see [`crate::log_file`]).
//!
//! The operational events (turns, model calls, tool runs, approvals, …) carry an `event` field
//! naming them and their values as fields: see `agentwire_runtime::telemetry`. With `[otel]`
//! exporters configured they also leave as OTLP logs, and the spans as traces (`crate::otel`).

use std::path::Path;

use agentwire_runtime::telemetry::{OtelConfig, spans};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{FilterExt, LevelFilter, filter_fn};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::log_file::LogFile;
use crate::otel::{BoxedLayer, Otel};

/// Installs the global subscriber; `default` is the filter used when `RUST_LOG` is unset.
pub fn init_with_default(default: &str) {
    drop(init_with_otel(default, None, &OtelConfig::default()));
}

/// Installs the global subscriber writing to `file` (rotated, and stderr pointed at it) when
/// given, else to stderr; and exports traces, metrics and logs as `otel` (the `[otel]` table) says:
/// the returned [`Otel`] flushes them when dropped. `RUST_LOG` filters the log output only;
/// what is exported is chosen by `crate::otel`.
pub fn init_with_otel(default: &str, file: Option<&Path>, otel: &OtelConfig) -> Otel {
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
    let layer = tracing_subscriber::fmt::layer().with_ansi(false);
    let output: BoxedLayer = match (file, json) {
        (Some(file), true) => layer.with_writer(file).json().boxed(),
        (Some(file), false) => layer.with_writer(file).boxed(),
        (None, true) => layer.with_writer(std::io::stderr).json().boxed(),
        (None, false) => layer.with_writer(std::io::stderr).boxed(),
    };
    // The exported spans stay out of the log lines (and cost nothing when nothing exports).
    // (The hint keeps the filter's own level the subscriber's: without it `and` has none, and
    // every `debug!`/`trace!` call site on a hot path is looked at.)
    let output = output
        .with_filter(
            filter.and(
                filter_fn(|meta| meta.target() != spans::TARGET)
                    .with_max_level_hint(LevelFilter::TRACE),
            ),
        )
        .boxed();
    let started = crate::otel::start(otel);
    let mut layers = vec![output];
    layers.extend(started.layers);
    if let Err(error) = tracing_subscriber::registry().with(layers).try_init() {
        eprintln!("warning: logging not initialised: {error}");
    }
    for problem in &started.problems {
        tracing::warn!(event = "otel.not_exported", problem = %problem, "OpenTelemetry export not set up");
    }
    started.otel
}
