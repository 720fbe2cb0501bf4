//! File change items: the changes of a patch and how applying it went.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One file touched by a file change item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FileUpdateChange {
    /// Path of the file (for a move, its path before the move).
    pub path: String,
    /// Whether the file is created, deleted or edited.
    pub kind: PatchChangeKind,
    /// The change as text: a unified diff for edits, the whole content for added or deleted
    /// files.
    pub diff: String,
}

/// Progress of a file change item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum PatchApplyStatus {
    /// The patch is being applied (or waits for approval).
    InProgress,
    /// The patch was applied.
    Completed,
    /// Applying the patch failed.
    Failed,
    /// The approval was refused, so nothing was written.
    Declined,
}

/// What a file change does to one file; discriminated by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum PatchChangeKind {
    /// The file is created.
    Add,
    /// The file is removed.
    Delete,
    /// The file is edited, and possibly renamed.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Update {
        /// New path when the file is also moved (snake_case `move_path` on the wire); `null`
        /// when it stays in place.
        #[serde(rename = "move_path", default)]
        move_path: Option<String>,
    },
}

#[bon::bon]
impl PatchChangeKind {
    /// Starts building [`PatchChangeKind::Update`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn update(move_path: Option<String>) -> Self {
        Self::Update { move_path }
    }
}
