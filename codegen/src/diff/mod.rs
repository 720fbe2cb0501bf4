//! `agentwire schema diff OLD NEW`: classifies every change between two schema bundles as
//! breaking or compatible.
//!
//! The input is two bundles in the format of `docs/artifacts.md` (draft-07, `definitions`, one
//! envelope per method carrying `x-method`, `x-direction`, `x-experimental`). Methods are matched
//! by `x-method` and `x-direction`; each method's params and response are compared structurally,
//! following `$ref`s, after normalization (see the `shape` module: annotations are ignored and
//! equivalent spellings of nullability, `const` and single-`$ref` `allOf`s meet).
//!
//! Severity depends on position. Client-request params, server-request results and
//! client-notification params are *input* (the client sends them); client-request results,
//! server-request params and server-notification params are *output* (the server sends them).
//! Input may become more permissive, output stricter; see [`Rule`] for every rule and its
//! severity in each position. Removing a method, member, enum value or union variant is breaking
//! in either position; adding an enum value or a union variant is compatible in either position,
//! so clients must tolerate values and variants they do not know.
//! Changes on experimental surface (an experimental method, a member or branch marked
//! `x-experimental`) are reported but never breaking. Definitions of the `mcp` namespace are
//! compared by name; their direction is unknown, so a change there is breaking when it would be
//! in either position.
//!
//! Both bundles are checked whole before anything is compared: every schema under `definitions`
//! must be well-formed and every `$ref` must resolve, otherwise the diff fails with a
//! [`DiffError`] naming the bundle and the JSON pointer. Recursion is bounded (64 levels of
//! comparison, 64 levels of schemas inside one definition; real bundles nest about 16 levels
//! deep), so no input makes the classifier exhaust the stack.
//!
//! The module is pure: it reads two [`serde_json::Value`]s and returns a [`DiffReport`].

mod bundle;
mod check;
mod error;
mod report;
mod rules;
mod shape;
mod surface;
mod variants;
mod walk;

#[cfg(test)]
mod tests;

use std::collections::HashSet;

use serde_json::Value;

pub use self::error::DiffError;
pub use self::report::{Change, DiffReport, Severity};
pub use self::rules::Rule;

use self::bundle::{Bundle, Side};
use self::walk::Walker;

/// Compares the bundle `old` with the bundle `new` and classifies every change.
///
/// Fails when either document is not a bundle, or has a dangling or non-local `$ref`, a member
/// of the wrong JSON type, an envelope without its partner or declared twice, or schemas nested
/// too deeply.
pub fn diff_bundles(old: &Value, new: &Value) -> Result<DiffReport, DiffError> {
    let old_bundle = Bundle::parse(old, Side::Old)?;
    let new_bundle = Bundle::parse(new, Side::New)?;
    let mut walker = Walker::new(&old_bundle, &new_bundle);
    walker.compare_methods()?;
    walker.compare_namespaces()?;
    let mut seen = HashSet::new();
    let changes = walker
        .into_changes()
        .into_iter()
        .filter(|change| seen.insert(change.clone()))
        .collect();
    Ok(DiffReport {
        changes,
        old_version: old_bundle.version.clone(),
        new_version: new_bundle.version.clone(),
    })
}
