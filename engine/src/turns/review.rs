//! `review/start`: a code review run as a turn on a thread.
//!
//! The target becomes the review's input: for `uncommittedChanges` the diff from `HEAD` to the
//! working tree (staged, unstaged and untracked files; from the empty tree before the first
//! commit); for `baseBranch` the diff from the merge base of `HEAD` and the branch to the
//! working tree; for `commit` what `git show` prints for it (message and patch); for `custom`
//! the user's instructions alone. Diffs come from the `git` runner of `gitDiffToRemote`
//! (`legacy::git_diff`), in the thread's `cwd`, and are cut at [`MAX_DIFF_BYTES`]. The model
//! gets review instructions ([`INSTRUCTIONS`]) and the diff as the turn's input.
//!
//! The turn then runs like any other (`turn/started`, the model's items, `turn/completed`, all
//! recorded), except that it opens with an `enteredReviewMode` item (its `review`: what is
//! reviewed, for display) in place of the user message and closes with an `exitedReviewMode`
//! item holding the review (the final agent message); see `run::review_mode`.
//!
//! Only inline delivery exists (as the reference defines `ReviewDelivery`): the review runs on
//! the thread given, which is also `reviewThreadId`. Errors: an unknown or unloaded thread, a
//! busy thread, a `cwd` outside any git work tree → -32600; an unknown commit or branch, empty
//! instructions → -32602; each message names the field (`threadId`, `target`, `target.sha`,
//! `target.branch`, `target.instructions`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::ReviewStart;
use agentwire_protocol::{ReviewStartParams, ReviewStartResponse, ReviewTarget, TurnStartParams};
use agentwire_runtime::{HandlerError, RequestContext};
use agentwire_store::error::ThreadError;
use agentwire_store::meta::SettingsOverrides;

use super::Turns;
use super::run::ReviewMode;
use crate::Engine;
use crate::legacy::git_diff::Git;

/// Most bytes of diff given to the model; the rest is left out with a note saying so.
pub(crate) const MAX_DIFF_BYTES: usize = 512 * 1024;

/// What the model is asked to do with the changes.
pub(crate) const INSTRUCTIONS: &str = "Review the code changes below as a careful senior \
engineer would before approving them. Look for bugs, wrong or missing error handling, security \
problems, races, performance traps, and code that does not do what its names or comments say. \
Report only problems worth fixing, the most serious first; for each give the file and line, \
what is wrong, why it matters, and how to fix it. Do not comment on style alone. If you find \
nothing worth fixing, say that the changes look correct. Do not change any files.";

/// A review's input and its description for display.
#[derive(Debug)]
struct Prepared {
    /// What is reviewed, for the `enteredReviewMode` item.
    hint: String,
    /// The review's input for the model.
    prompt: String,
}

/// Serves `review/start`.
pub(crate) async fn start(
    engine: &Engine,
    context: RequestContext,
    params: ReviewStartParams,
) -> Result<ReviewStartResponse, HandlerError> {
    engine.turns.review_start(&context, params).await
}

impl Turns {
    /// `review/start`: prepares the target's diff and starts the review turn.
    async fn review_start(
        self: &Arc<Self>,
        context: &RequestContext,
        params: ReviewStartParams,
    ) -> Result<ReviewStartResponse, HandlerError> {
        let thread_id = params.thread_id;
        let settings = self
            .threads
            .update_settings(&thread_id, SettingsOverrides::default())
            .map_err(|e| named("threadId", e).into_handler(ReviewStart::NAME))?;
        if self.is_running(&thread_id) {
            return Err(HandlerError::invalid_request(format!(
                "threadId: thread {thread_id} is running a turn; wait for it or interrupt it \
                 before starting a review"
            )));
        }
        let claim = {
            let id = thread_id.clone();
            crate::pool::stored::<ReviewStart, _, _>(self.threads.clone(), move |threads| {
                threads.claim_turn(&id)
            })
            .await?
        };
        let prepared = prepare(&params.target, Path::new(&settings.cwd)).await?;
        let input: TurnStartParams = serde_json::from_value(serde_json::json!({
            "threadId": thread_id,
            "input": [{"type": "text", "text": prepared.prompt, "text_elements": []}],
        }))
        .map_err(|e| HandlerError::internal(format!("review/start: building the turn: {e}")))?;
        let review = ReviewMode {
            hint: prepared.hint,
        };
        let started = self
            .start_off_thread(context, input, Some(review), claim)
            .await
            .map_err(|e| named("threadId", e).into_handler(ReviewStart::NAME))?;
        Ok(ReviewStartResponse::builder()
            .turn(started.turn)
            .review_thread_id(thread_id)
            .build())
    }
}

/// `error` with its message prefixed by the field it is about.
fn named(field: &str, error: ThreadError) -> ThreadError {
    match error {
        ThreadError::NotFound(id) => {
            ThreadError::Conflict(format!("{field}: thread not found: {id}"))
        }
        ThreadError::Conflict(message) => ThreadError::Conflict(format!("{field}: {message}")),
        other => other,
    }
}

fn invalid(field: &str, why: String) -> HandlerError {
    HandlerError::invalid_params(ReviewStart::NAME, format!("{field}: {why}"))
}

/// The input and description of a review of `target` in `cwd`.
async fn prepare(target: &ReviewTarget, cwd: &Path) -> Result<Prepared, HandlerError> {
    if let ReviewTarget::Custom { instructions, .. } = target {
        if instructions.trim().is_empty() {
            return Err(invalid(
                "target.instructions",
                "must not be empty".to_owned(),
            ));
        }
        return Ok(Prepared {
            hint: instructions.trim().to_owned(),
            prompt: format!("{INSTRUCTIONS}\n\nWhat to review:\n{instructions}"),
        });
    }
    let git = work_tree(target, cwd).await?;
    let (hint, scope, diff) = match target {
        ReviewTarget::UncommittedChanges => {
            let base = match git
                .run(&["rev-parse", "--verify", "-q", "HEAD^{commit}"])
                .await?
            {
                Ok(_) => "HEAD".to_owned(),
                Err(_) => empty_tree(&git).await?,
            };
            let diff = git.diff_with_untracked(&base).await?;
            (
                "uncommitted changes".to_owned(),
                "The changes are the uncommitted ones in the working tree: staged, unstaged and \
                 untracked files."
                    .to_owned(),
                diff,
            )
        }
        ReviewTarget::BaseBranch { branch, .. } => {
            let tip = resolve(&git, "target.branch", branch, "a branch").await?;
            let base = git
                .run(&["merge-base", "HEAD", &tip])
                .await?
                .map_err(|stderr| {
                    invalid(
                        "target.branch",
                        format!("HEAD has no commit in common with {branch} ({stderr})"),
                    )
                })?
                .trim()
                .to_owned();
            let diff = git.diff_with_untracked(&base).await?;
            (
                format!("changes against {branch}"),
                format!(
                    "The changes are everything the current branch and its working tree change \
                     since they left {branch} (merge base {base})."
                ),
                diff,
            )
        }
        ReviewTarget::Commit { sha, title, .. } => {
            let full = resolve(&git, "target.sha", sha, "a commit").await?;
            let shown = git
                .must(
                    &[
                        "show",
                        "--no-color",
                        "--no-ext-diff",
                        "--no-textconv",
                        "--format=medium",
                        &full,
                    ],
                    None,
                    None,
                )
                .await
                .map(crate::legacy::git_diff::text)?;
            let short: String = full.chars().take(7).collect();
            let hint = match title.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
                Some(title) => format!("commit {short}: {title}"),
                None => format!("commit {short}"),
            };
            (
                hint,
                format!("The changes are those of commit {full}."),
                shown,
            )
        }
        ReviewTarget::Custom { .. } => {
            return Err(HandlerError::internal(
                "review/start: a custom target has no diff",
            ));
        }
        _ => return Err(unknown_target()),
    };
    Ok(Prepared {
        hint,
        prompt: format!("{INSTRUCTIONS}\n\n{scope}\n\n{}", fenced(&diff)),
    })
}

/// The git work tree holding `cwd`, for a target that needs one.
/// A target kind this server does not know (the protocol may add some).
fn unknown_target() -> HandlerError {
    HandlerError::invalid_params(
        ReviewStart::NAME,
        "target: a kind of review this server does not know",
    )
}

async fn work_tree(target: &ReviewTarget, cwd: &Path) -> Result<Git, HandlerError> {
    let kind = match target {
        ReviewTarget::UncommittedChanges => "uncommittedChanges",
        ReviewTarget::BaseBranch { .. } => "baseBranch",
        ReviewTarget::Commit { .. } => "commit",
        ReviewTarget::Custom { .. } => "custom",
        _ => return Err(unknown_target()),
    };
    let shown = cwd.display();
    match tokio::fs::metadata(cwd).await {
        Ok(meta) if meta.is_dir() => {}
        _ => {
            return Err(HandlerError::invalid_request(format!(
                "target: a {kind} review reads the thread's repository, and its cwd {shown} is \
                 not a directory"
            )));
        }
    }
    let top = Git::new(cwd.to_owned(), ReviewStart::NAME)
        .run(&["rev-parse", "--show-toplevel"])
        .await?
        .map_err(|stderr| {
            HandlerError::invalid_request(format!(
                "target: a {kind} review needs a git repository, and the thread's cwd {shown} \
                 is not inside a git work tree ({stderr}); use a `custom` target or a thread \
                 in a repository"
            ))
        })?;
    Ok(Git::new(
        PathBuf::from(top.trim_end_matches('\n')),
        ReviewStart::NAME,
    ))
}

/// The full hash of the commit `revision` names; an error naming `field` when it names none.
async fn resolve(
    git: &Git,
    field: &str,
    revision: &str,
    what: &str,
) -> Result<String, HandlerError> {
    if revision.trim().is_empty() {
        return Err(invalid(field, "must not be empty".to_owned()));
    }
    if revision.starts_with('-') {
        return Err(invalid(
            field,
            format!("{revision:?} is not {what}: it may not start with `-`"),
        ));
    }
    let spec = format!("{revision}^{{commit}}");
    match git.run(&["rev-parse", "--verify", "-q", &spec]).await? {
        Ok(full) => Ok(full.trim().to_owned()),
        Err(_) => Err(invalid(
            field,
            format!("{revision:?} is not {what} of the repository"),
        )),
    }
}

/// The id of the empty tree in this repository's hash (for a diff before the first commit).
async fn empty_tree(git: &Git) -> Result<String, HandlerError> {
    let id = git
        .must(
            &["hash-object", "-t", "tree", "--stdin"],
            None,
            Some(Vec::new()),
        )
        .await?;
    Ok(crate::legacy::git_diff::text(id).trim().to_owned())
}

/// `diff` in a fenced block, cut at [`MAX_DIFF_BYTES`] (on a character boundary) with a note.
fn fenced(diff: &str) -> String {
    if diff.trim().is_empty() {
        return "The diff is empty: there are no changes to review.".to_owned();
    }
    let mut end = diff.len().min(MAX_DIFF_BYTES);
    while !diff.is_char_boundary(end) {
        end -= 1;
    }
    let mut text = format!("```diff\n{}", &diff[..end]);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("```");
    if end < diff.len() {
        text.push_str(&format!(
            "\n\nThe diff was cut at {MAX_DIFF_BYTES} bytes of {}; read the rest of the changes \
             from the repository if you need them.",
            diff.len()
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_diff_is_cut_on_a_character_boundary_with_a_note() {
        let diff = "é".repeat(MAX_DIFF_BYTES);
        let text = fenced(&diff);
        assert!(text.starts_with("```diff\n"));
        assert!(
            text.contains("The diff was cut at"),
            "{}",
            &text[text.len() - 200..]
        );
        assert!(text.len() < MAX_DIFF_BYTES + 300);
        assert_eq!(
            fenced("  \n"),
            "The diff is empty: there are no changes to review."
        );
        assert_eq!(fenced("+a\n"), "```diff\n+a\n```");
    }
}
