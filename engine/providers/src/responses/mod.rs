//! The OpenAI Responses API wire (`wire_api = "responses"`): what OpenAI's own models and Codex
//! speak.
//!
//! A call is one `POST {base_url}/responses` with `stream: true` and `store: false`: stateless,
//! the whole conversation goes as `input` items every time ([`request`]). The response is a
//! stream of Server-Sent Events whose `data` carries a typed JSON event ([`stream`]): text and
//! reasoning summary deltas, output items (messages, reasoning, function calls) as they start
//! and finish, and `response.completed` with the token usage (or `response.failed` / `error`).
//! Sending, retries, timeouts and HTTP errors are shared with the chat wire
//! ([`crate::openai`]).

pub(crate) mod request;
pub(crate) mod stream;
