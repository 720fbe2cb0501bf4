//! End-to-end tests: they spawn the built `agentwire` binary and check what it writes and prints.

mod common;
mod generate;
mod schema_diff;
