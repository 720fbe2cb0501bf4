//! End-to-end tests: they spawn the built `agentwire` binary and check what it writes and prints.

mod accounts;
// `agentwire acp`: the engine over the Agent Client Protocol (issue 37).
mod acp;
mod app_server_stdio;
mod app_server_ws;
mod catalog;
mod client;
mod client_side;
mod client_tools;
mod codex_exec;
mod codex_tui;
mod command_exec;
mod common;
mod config;
mod config_problems;
mod conformance;
mod contract;
// The reference site's examples, recorded by the `served` walk.
mod docs_examples;
mod docs_site;
// Issue 32: every test the security and sandbox docs name exists.
mod docs_promises;
mod durable_sync;
mod engine_crash;
mod engine_openai;
mod engine_threads;
mod engine_tools;
mod engine_turns;
// Environment context across restarts (issue 33).
mod env_restart;
// issue 36: `exec` and the CLI as scripts use them (pipelines, completion, help)
mod exec_cli;
mod follow_behind;
mod follow_closed;
mod follow_hops;
mod follow_live;
mod fs;
mod generate;
mod history_search;
mod import_codex;
mod jobs;
// `agentwire login` / `logout` (issue 33).
mod login_cli;
mod mcp_client;
// MCP OAuth sign-in and plugin MCP servers (issue 31).
mod mcp_oauth;
mod mcp_server;
mod memory;
mod mock_model;
mod mock_responses;
// Issue 33 item 2: the tools a real model expects.
mod model_context;
mod model_tools;
// Model families, overrides, unknown-model warning (issue 33).
mod model_metadata;
mod open_models;
mod openrpc;
// OpenTelemetry export (issue 34).
mod organisation;
mod otel;
mod plugins;
// MCP servers of installed plugins (issue 31).
mod plugins_mcp;
mod process_api;
mod provider_responses;
mod providers_features;
mod readme;
mod relay_forged;
mod review;
// `rollout/compress`: cold rollouts gzipped, read as before (0.7.0).
mod rollout_compress;
mod sandbox_escape;
mod sandbox_exec;
mod sandbox_unprivileged;
mod schema_diff;
mod search;
mod security_approvals;
mod security_cwd;
mod security_fifo;
mod security_patch;
mod security_record;
// Issue 32 sandbox: a root server's confinement.
mod security_root;
// Issue 32: a root server's (and an unprivileged one's) turn attacks its sandbox.
mod security_root_turn;
// The last reference requests: thread/sample, elicitation counters, environments (0.6.0).
mod reference_rest;
mod served;
mod shutdown;
mod stdout_stall;
mod store_startup;
mod stores;
mod thread_store;
mod thread_surface;
mod tui;
mod turn_fidelity;
mod turn_panic;
mod wire_contract;
mod ws_budget;
mod ws_buffers;
mod ws_conn;
// hooks and skills area
mod hooks_run;
mod skills_model;
// turn notifications (0.6.0)
mod turn_notifications;
// issue 32: no unauthenticated loopback control across users
mod security_listen;
// issue 32: fs/copy budget and sparse files
mod security_copy;
// issue 32: command/exec output flow control
mod security_exec_flow;
// operations: structured logs, metrics (`GET /metrics`, `--metrics-listen`), `--log-file`
mod telemetry;
// unified exec sessions (0.7.0)
mod unified_exec;
