//! Code review as a turn: `review/start` runs a review of a diff (uncommitted changes, the
//! changes since a base branch, one commit) or of free-form instructions on a thread. The turn's
//! items open with `enteredReviewMode` and close with `exitedReviewMode` (see `ThreadItemKind`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::Turn;

/// What a review looks at; discriminated by `type`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ReviewTarget {
    /// The working tree against `HEAD`: staged, unstaged and untracked (not ignored) files.
    UncommittedChanges,
    /// Everything the current branch (with the working tree) changes since it left `branch`:
    /// the diff from their merge base.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    BaseBranch {
        /// The branch to compare with (a local or remote-tracking branch name).
        branch: String,
    },
    /// What one commit changed.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Commit {
        /// The commit (a full or abbreviated hash, or any revision `git` resolves to a commit).
        sha: String,
        /// A label for user interfaces, such as the commit's subject line.
        #[serde(default)]
        #[ts(optional = nullable)]
        title: Option<String>,
    },
    /// A review guided by the user's own instructions instead of a diff chosen here.
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    Custom {
        /// What to review and how.
        instructions: String,
    },
}

#[bon::bon]
impl ReviewTarget {
    /// Starts building [`ReviewTarget::BaseBranch`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn base_branch(branch: String) -> Self {
        Self::BaseBranch { branch }
    }

    /// Starts building [`ReviewTarget::Commit`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn commit(sha: String, title: Option<String>) -> Self {
        Self::Commit { sha, title }
    }

    /// Starts building [`ReviewTarget::Custom`] (its fields can grow; see `docs/rust-api.md`).
    #[builder(finish_fn = build, on(String, into))]
    pub fn custom(instructions: String) -> Self {
        Self::Custom { instructions }
    }
}

/// Where a review's turn runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ReviewDelivery {
    /// On the thread named by `threadId`, as its next turn.
    Inline,
}

/// Params of `review/start`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ReviewStartParams {
    /// The loaded, idle thread the review runs on; its `cwd` is the repository reviewed.
    pub thread_id: String,
    /// What to review.
    pub target: ReviewTarget,
    /// Where the review runs; only `inline` (the default when absent or `null`). To keep a
    /// review apart from a conversation, start or fork a thread for it and pass that id.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub delivery: Option<ReviewDelivery>,
}

/// Result of `review/start`: the review's turn, which then streams like any turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ReviewStartResponse {
    /// The turn running the review (in progress; `turn/completed` follows).
    pub turn: Turn,
    /// The thread the review runs on: the `threadId` of the request.
    pub review_thread_id: String,
}
