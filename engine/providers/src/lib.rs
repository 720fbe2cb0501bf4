//! agentwire-providers: what produces a turn's model output.
//!
//! A [`ModelProvider`] turns one model call ([`ModelRequest`]) into a bounded stream of
//! [`ProviderEvent`]s. The engine's turns read the stream, turn it into items and
//! notifications, and drop it to cancel the call (an interrupted turn).
//!
//! A call carries the whole conversation ([`HistoryEntry`]) and the tools the model may call
//! ([`specs`](agentwire_tools::specs)); a model that wants a tool run answers with
//! [`ProviderEvent::ToolCall`], the turn runs it and calls the model again with the result
//! appended.
//!
//! [`build`] makes the providers of the configuration's tables ([`ProviderTables`]), by id:
//! the fixture provider, which replays a scripted conversation (the built-in script or
//! `fixture_script`) so turns work with no network and no account, and for each
//! `[model_providers.<id>]` table a client of any server speaking the OpenAI chat-completions
//! API (`wire_api = "chat"`) or the OpenAI Responses API (`wire_api = "responses"`).
//! [`builtin`] holds the provider entries that exist without a table (`openai`, `ollama`,
//! `oss`, `lmstudio`). The stored API key and the rate limits a response reports go through
//! [`Credentials`], which the engine's accounts implement.
//!
//! Images in user input go to the model as real image parts ([`content`]); a turn's
//! `outputSchema` is sent as structured output and its final message checked against it
//! ([`schema`]).
//!
//! It uses nothing of the engine but `agentwire-support` and `agentwire-tools`; it is an
//! internal crate of agentwire, whose API follows the engine's needs, not semver.

pub mod builtin;
mod call;
pub mod content;
mod credentials;
mod fixture;
mod openai;
pub mod rate_limits;
mod registry;
mod responses;
pub mod schema;
mod script;
pub mod settings;

pub use call::{
    HistoryEntry, ModelProvider, ModelRequest, ModelTool, OutputOptions, ProviderEvent,
    ProviderNotice, ToolCall, user_text,
};
pub use credentials::{Credentials, StoredKey};
pub use openai::Defaults;
pub use registry::{ProviderTables, build};
