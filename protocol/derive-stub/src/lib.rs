//! Inert stand-ins for the `schemars::JsonSchema` and `ts_rs::TS` derives.
//!
//! `agentwire-protocol` derives both on every wire type, with `#[schemars(…)]` and `#[ts(…)]`
//! attributes. A client needs neither (they only feed codegen), so behind the protocol crate's
//! `schema` and `ts` features the real crates are optional; without them the crate root binds
//! the names `schemars` and `ts_rs` to this crate, whose derives accept the same attributes and
//! emit nothing. The wire types' serde behaviour is the same either way.

use proc_macro::TokenStream;

/// Accepts `#[derive(JsonSchema)]` and its attributes; emits nothing.
#[proc_macro_derive(JsonSchema, attributes(schemars, validate, garde))]
pub fn json_schema(_: TokenStream) -> TokenStream {
    TokenStream::new()
}

/// Accepts `#[derive(TS)]` and its attributes; emits nothing.
#[proc_macro_derive(TS, attributes(ts))]
pub fn ts(_: TokenStream) -> TokenStream {
    TokenStream::new()
}
