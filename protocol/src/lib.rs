//! The agentwire app-server protocol, declared once.
//!
//! Clients (IDEs, desktop apps, web workers, terminal UIs) drive a coding agent through
//! bidirectional JSON-RPC: the client starts **threads** (persistent conversations), starts
//! **turns** on them (one unit of agent work begun by user input), and the server streams the
//! turn's **items** (messages, reasoning, commands, file changes …) back as notifications. The
//! server may also ask the client for approvals and pause the turn until it answers.
//!
//! This crate holds the wire types, one module per protocol area, and [`methods`]: the one table
//! that declares every method. It does no I/O. `agentwire-codegen` derives the JSON Schema bundle,
//! the TypeScript definitions and the runtime's dispatch table from it.
//!
//! Stability: a method is experimental when its row in the table says so; a field is
//! experimental when it carries `#[schemars(extend("x-experimental" = true))]`. Experimental
//! methods and fields are left out of the stable generated surface and are only accepted from
//! connections that negotiated `capabilities.experimentalApi`.
//!
//! Wire conventions: camelCase member names unless a type says otherwise; optional params are
//! absent or `null`; response fields that may be empty are present and `null`; integers are JSON
//! numbers. In code: `#[serde_with::skip_serializing_none]`, placed above the derives so that
//! serde, schemars and ts-rs all see it, leaves a type's `None` members out of the JSON;
//! `#[serialize_always]` marks the members sent as `null`. A type whose `Option` members are
//! mostly sent as `null` keeps `skip_serializing_if = "Option::is_none"` on its few others.
//!
//! Features: `schema` (schemars `JsonSchema` impls) and `ts` (ts-rs `TS` impls) are what codegen
//! needs; a client leaves them off and compiles neither (the derives then come from
//! `agentwire-derive-stub`, which accepts their attributes and emits nothing). `validate`
//! (module `schema_issues`) words what is wrong with a value that fails a JSON Schema, for the runtime
//! and `contract check`.

// Without the features, `use schemars::JsonSchema` and `use ts_rs::TS` in every module resolve
// to the inert derives of the stub crate.
#[cfg(not(feature = "schema"))]
extern crate agentwire_derive_stub as schemars;
#[cfg(not(feature = "ts"))]
extern crate agentwire_derive_stub as ts_rs;

pub mod method;
pub mod methods;
#[cfg(feature = "validate")]
pub mod schema_issues;

mod serde_util;

pub mod account;
pub mod approval;
pub mod apps;
pub mod client_tools;
pub mod command_exec;
pub mod config;
pub mod diagnostics;
pub mod external_agent;
pub mod features;
pub mod feedback;
pub mod fs;
pub mod fuzzy_search;
pub mod hooks;
pub mod initialize;
pub mod item;
pub mod jsonrpc;
pub mod legacy;
pub mod mcp;
pub mod mcp_client;
pub mod mcp_status;
// MCP OAuth sign-in (0.6.0)
pub mod mcp_oauth;
pub mod memory;
pub mod mock;
pub mod model;
pub mod notification;
pub mod permissions;
pub mod plugins;
pub mod process;
pub mod project;
pub mod providers;
pub mod requirements;
pub mod review;
pub mod sandbox;
pub mod skills;
pub mod thread;
pub mod thread_admin;
pub mod thread_attachment;
pub mod thread_history;
pub mod thread_queue;
pub mod thread_search;
pub mod thread_section;
pub mod thread_settings;
pub mod thread_state;
pub mod thread_timeline;
pub mod turn;
pub mod unavailable;
pub mod user_input;
// side samples, elicitation counters, environments (0.6.0)
pub mod environment;
pub mod thread_sample;
// turn notifications: rate limits, reroutes, patch updates, deprecations (0.6.0)
pub mod turn_notices;
// model tools: plan item streaming (0.6.0)
pub mod plan_delta;
// rollout maintenance (0.7.0)
pub mod rollout_compress;
// unified exec sessions (0.7.0)
pub mod terminal_interaction;

pub use account::*;
pub use approval::*;
pub use apps::*;
pub use client_tools::*;
pub use command_exec::*;
pub use config::*;
pub use diagnostics::*;
pub use external_agent::*;
pub use features::*;
pub use feedback::*;
pub use fs::*;
pub use fuzzy_search::*;
pub use hooks::*;
pub use initialize::*;
pub use item::*;
pub use jsonrpc::*;
pub use legacy::*;
pub use mcp_client::*;
pub use mcp_oauth::*;
pub use mcp_status::*;
pub use memory::*;
pub use method::{
    Direction, Method, MethodInfo, MethodVisitor, NoParams, Notification, Request, TypeVisitor,
    Unavailable, WireType,
};
pub use mock::*;
pub use model::*;
pub use notification::*;
pub use permissions::*;
pub use plugins::*;
pub use process::*;
pub use project::*;
pub use providers::*;
pub use requirements::*;
pub use review::*;
pub use sandbox::*;
pub use skills::*;
pub use thread::*;
pub use thread_admin::*;
pub use thread_attachment::*;
pub use thread_history::*;
pub use thread_queue::*;
pub use thread_search::*;
pub use thread_section::*;
pub use thread_settings::*;
pub use thread_state::*;
pub use thread_timeline::*;
pub use turn::*;
pub use unavailable::*;
pub use user_input::*;
// side samples, elicitation counters, environments (0.6.0)
pub use environment::*;
pub use thread_sample::*;
// turn notifications: rate limits, reroutes, patch updates, deprecations (0.6.0)
pub use turn_notices::*;
// model tools: plan item streaming (0.6.0)
pub use plan_delta::*;
// rollout maintenance (0.7.0)
pub use rollout_compress::*;
// unified exec sessions (0.7.0)
pub use terminal_interaction::*;

/// The protocol version this crate declares (semver). Pinned snapshots of every release live in
/// `generated/versions/<version>/`.
pub const PROTOCOL_VERSION: &str = env!("CARGO_PKG_VERSION");
