//! `getConversationSummary`: what a conversation list shows for one thread, found by id or by
//! the path of its rollout.
//!
//! By `conversationId`: the thread as `thread/read` knows it (loaded, or from the index). An
//! ephemeral thread has no rollout; its `path` is `""`. By `rolloutPath`: the file is read
//! itself; the path must lie under `$AGENTWIRE_HOME/sessions` or
//! `$AGENTWIRE_HOME/archived_sessions` (a relative path is taken from `$AGENTWIRE_HOME`), and
//! anything else is refused with -32602 naming `rolloutPath`, without being opened.
//!
//! `preview` is the first user message, `timestamp` and `updatedAt` are RFC 3339 (UTC, whole
//! seconds), `gitInfo` is what was recorded when the thread was created.
//!
//! Both lookups read the disk (the index, the rollout, the path's folders), so the whole lookup
//! runs on the blocking pool.

use std::path::{Path, PathBuf};

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::GetConversationSummary;
use agentwire_protocol::{
    ConversationGitInfo, ConversationSummary, GetConversationSummaryParams,
    GetConversationSummaryResponse, Thread, ThreadReadParams,
};
use agentwire_runtime::HandlerError;
use agentwire_store::error::ThreadError;
use agentwire_store::paths::{ARCHIVED_SESSIONS, SESSIONS};
use agentwire_support::timestamps::rfc3339;

use crate::Engine;
use crate::pool::blocking;
use crate::threads::Threads;

const METHOD: &str = GetConversationSummary::NAME;

/// Answers `getConversationSummary`.
pub(super) async fn get(
    engine: &Engine,
    params: GetConversationSummaryParams,
) -> Result<GetConversationSummaryResponse, HandlerError> {
    let threads = engine.threads.clone();
    let home = engine.config().home.clone();
    blocking::<GetConversationSummary, _, _>(move || look_up(&threads, &home, params)).await
}

/// The summary `params` names, read from the index or the rollout.
fn look_up(
    threads: &Threads,
    home: &Path,
    params: GetConversationSummaryParams,
) -> Result<GetConversationSummaryResponse, HandlerError> {
    let thread = match params {
        GetConversationSummaryParams::ConversationId {
            conversation_id, ..
        } => {
            threads
                .read(
                    ThreadReadParams::builder()
                        .thread_id(conversation_id.clone())
                        .build(),
                )
                .map_err(|e| match e {
                    ThreadError::NotFound(_) => HandlerError::invalid_request(format!(
                        "conversationId: no conversation {conversation_id:?} on this server"
                    )),
                    other => other.into_handler(METHOD),
                })?
                .thread
        }
        GetConversationSummaryParams::RolloutPath { rollout_path, .. } => {
            let path = rollout_inside_home(home, &rollout_path)?;
            threads.read_rollout_at(&path).map_err(|e| match e {
                ThreadError::Storage(reason) => HandlerError::invalid_params(
                    METHOD,
                    format!("rolloutPath: {rollout_path} is not a readable rollout: {reason}"),
                ),
                other => other.into_handler(METHOD),
            })?
        }
        _ => {
            return Err(HandlerError::invalid_params(
                METHOD,
                "params: name the conversation with conversationId or rolloutPath",
            ));
        }
    };
    Ok(GetConversationSummaryResponse::builder()
        .summary(summary_of(thread))
        .build())
}

/// `given` resolved, if it is a file under the home's rollout folders.
fn rollout_inside_home(home: &Path, given: &str) -> Result<PathBuf, HandlerError> {
    let refuse = |why: String| HandlerError::invalid_params(METHOD, format!("rolloutPath: {why}"));
    if given.is_empty() {
        return Err(refuse("an empty path names no rollout".into()));
    }
    let home = std::path::absolute(home).unwrap_or_else(|_| home.to_owned());
    // A compressed rollout is named by its plain path too: its `.gz` is resolved instead.
    let path = agentwire_store::compressed::existing_form(&home.join(given));
    let canonical = path.canonicalize().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => refuse(format!("{given} does not exist")),
        _ => refuse(format!("cannot open {given}: {e}")),
    })?;
    let inside = [SESSIONS, ARCHIVED_SESSIONS].iter().any(|folder| {
        home.join(folder)
            .canonicalize()
            .is_ok_and(|root| canonical.starts_with(root))
    });
    if !inside {
        return Err(refuse(format!(
            "{given} lies outside {} and {}; only rollouts this server keeps can be read",
            home.join(SESSIONS).display(),
            home.join(ARCHIVED_SESSIONS).display()
        )));
    }
    if !canonical.is_file() {
        return Err(refuse(format!("{given} is not a file")));
    }
    Ok(agentwire_store::compressed::plain_path(&canonical).unwrap_or(canonical))
}

fn summary_of(thread: Thread) -> ConversationSummary {
    ConversationSummary::builder()
        .conversation_id(thread.id)
        .path(thread.path.unwrap_or_default())
        .preview(thread.preview)
        .maybe_timestamp(rfc3339(thread.created_at))
        .maybe_updated_at(rfc3339(thread.updated_at))
        .model_provider(thread.model_provider)
        .cwd(thread.cwd.0)
        .cli_version(thread.cli_version)
        .source(thread.source)
        .maybe_git_info(thread.git_info.map(|git| {
            ConversationGitInfo::builder()
                .maybe_sha(git.sha)
                .maybe_branch(git.branch)
                .maybe_origin_url(git.origin_url)
                .build()
        }))
        .build()
}
