//! The legacy v1 requests clients still send: `getConversationSummary` ([`summary`]) and
//! `gitDiffToRemote` ([`git_diff`], whose `git` runner `review/start` uses too).

pub(crate) mod git_diff;
mod summary;

use agentwire_protocol::{
    GetConversationSummaryParams, GetConversationSummaryResponse, GitDiffToRemoteParams,
    GitDiffToRemoteResponse,
};
use agentwire_runtime::{HandlerError, RequestContext};

use crate::Engine;

/// Serves `getConversationSummary`.
pub(crate) async fn get_conversation_summary(
    engine: &Engine,
    context: RequestContext,
    params: GetConversationSummaryParams,
) -> Result<GetConversationSummaryResponse, HandlerError> {
    let _ = context;
    summary::get(engine, params).await
}

/// Serves `gitDiffToRemote`.
pub(crate) async fn git_diff_to_remote(
    engine: &Engine,
    context: RequestContext,
    params: GitDiffToRemoteParams,
) -> Result<GitDiffToRemoteResponse, HandlerError> {
    let _ = (engine, context);
    git_diff::diff_to_remote(params).await
}
