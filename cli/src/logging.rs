//! Logs: `tracing` to stderr, filtered by `RUST_LOG` (default `info`), JSON lines with
//! `LOG_FORMAT=json`. Stdout is reserved for protocol messages.

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber.
pub fn init() {
    init_with_default("info");
}

/// Installs the global subscriber; `default` is the filter used when `RUST_LOG` is unset.
pub fn init_with_default(default: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let json = std::env::var("LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false);
    let result = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
    if let Err(error) = result {
        eprintln!("warning: logging not initialised: {error}");
    }
}
