//! The generated dispatch table: the [`Handler`] trait and the functions that route a method
//! name to it. The source is `generated/rust/dispatch.rs`, written by `agentwire-codegen`.

include!("../../generated/rust/dispatch.rs");
