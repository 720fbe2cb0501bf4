//! The schema ids incoming params are validated against. The source is
//! `generated/rust/validators.rs`, written by `agentwire-codegen`.

include!("../../generated/rust/validators.rs");

/// The JSON pointer (into [`BUNDLE_JSON`]) of `method`'s params schema, if it has params, and
/// whether the params may be absent.
pub fn params_schema(method: &str) -> Option<(&'static str, bool)> {
    PARAMS_SCHEMAS.iter().find(|(m, _, _)| *m == method).map(|(_, pointer, optional)| (*pointer, *optional))
}
