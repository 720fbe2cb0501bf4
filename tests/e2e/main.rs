//! End-to-end tests: they spawn the built `agentwire` binary and check what it writes and prints.

mod accounts;
mod app_server_stdio;
mod app_server_ws;
mod catalog;
mod client;
mod command_exec;
mod common;
mod config;
mod engine_crash;
mod engine_openai;
mod engine_threads;
mod engine_tools;
mod engine_turns;
mod fs;
mod generate;
mod mock_model;
mod sandbox_escape;
mod sandbox_exec;
mod schema_diff;
mod search;
mod served;
mod shutdown;
