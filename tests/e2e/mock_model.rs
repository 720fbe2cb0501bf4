//! A local mock of an OpenAI-compatible chat-completions server that streams real SSE.
