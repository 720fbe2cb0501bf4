//! Deleting a thread (`thread/delete`), no longer following one (`thread/unsubscribe`) and
//! patching its stored metadata (`thread/metadata/update`).

use agentwire_protocol::methods::{ThreadClosed, ThreadDeleted, ThreadStatusChanged};
use agentwire_protocol::{
    GitInfo, ThreadClosedNotification, ThreadDeleteParams, ThreadDeleteResponse,
    ThreadDeletedNotification, ThreadMetadataGitInfoUpdateParams, ThreadMetadataUpdateParams,
    ThreadMetadataUpdateResponse, ThreadStatus, ThreadStatusChangedNotification,
    ThreadUnsubscribeParams, ThreadUnsubscribeResponse, ThreadUnsubscribeStatus,
};
use agentwire_runtime::RequestContext;
use agentwire_store::error::ThreadError;
use agentwire_store::meta::now;
use agentwire_store::record::RolloutRecord;
use agentwire_support::lock;

use super::Threads;

/// Longest Git field accepted (a URL, a branch name, a commit hash).
const MAX_GIT_FIELD: usize = 4096;

impl Threads {
    /// `thread/delete`: unloads the thread, removes its rollout (live or archived) and index
    /// row; broadcasts `thread/deleted`. The caller has stopped its running turn.
    pub(crate) fn delete(
        &self,
        context: &RequestContext,
        params: ThreadDeleteParams,
    ) -> Result<ThreadDeleteResponse, ThreadError> {
        let id = params.thread_id;
        let unloaded = lock(&self.loaded).remove(&id);
        let ephemeral = unloaded
            .as_ref()
            .is_some_and(|thread| lock(thread).log.is_none());
        // The log (if any) is closed here; the records are removed below.
        drop(unloaded);
        self.subscribers.forget(&id);
        if !ephemeral {
            let row = self.lookup(&id)?;
            self.store.delete(&row)?;
        }
        let hub = context.peer.hub().clone();
        context.after_response(move || {
            hub.broadcast::<ThreadDeleted>(
                &ThreadDeletedNotification::builder().thread_id(id).build(),
            );
        });
        Ok(ThreadDeleteResponse::builder().build())
    }

    /// `thread/unsubscribe`: this connection stops following the thread. When it was the last
    /// follower and no turn runs (`busy` is false), the thread is unloaded: the caller gets
    /// `thread/closed` and every connection `thread/status/changed` (`notLoaded`).
    pub(crate) fn unsubscribe(
        &self,
        context: &RequestContext,
        params: ThreadUnsubscribeParams,
        busy: bool,
    ) -> Result<ThreadUnsubscribeResponse, ThreadError> {
        let id = params.thread_id;
        let Some(thread) = self.loaded(&id) else {
            // An id that names no thread at all is an error; a persisted one that is not
            // loaded is answered `notLoaded`.
            self.lookup(&id)?;
            return Ok(ThreadUnsubscribeResponse::builder()
                .status(ThreadUnsubscribeStatus::NotLoaded)
                .build());
        };
        let Some(left) = self.subscribers.unsubscribe(&id, &context.peer) else {
            return Ok(ThreadUnsubscribeResponse::builder()
                .status(ThreadUnsubscribeStatus::NotSubscribed)
                .build());
        };
        let idle = !busy && !matches!(lock(&thread).status, ThreadStatus::Active { .. });
        if left == 0 && idle {
            lock(&self.loaded).remove(&id);
            drop(thread);
            let peer = context.peer.clone();
            context.after_response(move || {
                peer.notify::<ThreadClosed>(
                    &ThreadClosedNotification::builder()
                        .thread_id(id.clone())
                        .build(),
                );
                peer.hub().broadcast::<ThreadStatusChanged>(
                    &ThreadStatusChangedNotification::builder()
                        .thread_id(id)
                        .status(ThreadStatus::NotLoaded)
                        .build(),
                );
            });
        }
        Ok(ThreadUnsubscribeResponse::builder()
            .status(ThreadUnsubscribeStatus::Unsubscribed)
            .build())
    }

    /// `thread/metadata/update`: applies the Git metadata patch, durably (a `gitInfo`
    /// record); the thread need not be loaded.
    pub(crate) fn metadata_update(
        &self,
        params: ThreadMetadataUpdateParams,
    ) -> Result<ThreadMetadataUpdateResponse, ThreadError> {
        let id = params.thread_id;
        let patch = params.git_info.unwrap_or_default();
        for (name, value) in [
            ("sha", &patch.sha),
            ("branch", &patch.branch),
            ("originUrl", &patch.origin_url),
        ] {
            if let Some(Some(text)) = value {
                if text.trim().is_empty() {
                    return Err(ThreadError::InvalidParams(format!(
                        "gitInfo.{name}: must not be empty (send null to clear it)"
                    )));
                }
                if text.len() > MAX_GIT_FIELD {
                    return Err(ThreadError::InvalidParams(format!(
                        "gitInfo.{name}: longer than {MAX_GIT_FIELD} bytes"
                    )));
                }
            }
        }
        let changes = patch.sha.is_some() || patch.branch.is_some() || patch.origin_url.is_some();
        let at = now();
        if let Some(thread) = self.loaded(&id) {
            let mut thread = lock(&thread);
            if changes {
                let git_info = patched(thread.summary.meta.git_info.clone(), &patch);
                let record = RolloutRecord::GitInfo {
                    at,
                    git_info: git_info.clone(),
                };
                thread.summary.meta.git_info = git_info;
                let pending = thread.append(&[record], at)?;
                let answer = thread.to_thread(false);
                drop(thread);
                pending.wait()?;
                return Ok(ThreadMetadataUpdateResponse::builder()
                    .thread(answer)
                    .build());
            }
            return Ok(ThreadMetadataUpdateResponse::builder()
                .thread(thread.to_thread(false))
                .build());
        }
        let mut row = self.lookup(&id)?;
        if changes {
            let replayed = self.read_rollout(&row)?;
            let git_info = patched(replayed.summary.meta.git_info.clone(), &patch);
            let record = RolloutRecord::GitInfo {
                at,
                git_info: git_info.clone(),
            };
            self.append_stored(&mut row, replayed, record, at, |summary| {
                summary.meta.git_info = git_info;
            })?;
        }
        let thread = row
            .summary
            .to_thread(ThreadStatus::NotLoaded, self.path_of(&row), Vec::new());
        Ok(ThreadMetadataUpdateResponse::builder()
            .thread(thread)
            .build())
    }
}

/// `current` with `patch` applied; `None` once every field is empty.
fn patched(current: Option<GitInfo>, patch: &ThreadMetadataGitInfoUpdateParams) -> Option<GitInfo> {
    let mut info = current.unwrap_or(GitInfo::builder().build());
    if let Some(sha) = &patch.sha {
        info.sha = sha.clone();
    }
    if let Some(branch) = &patch.branch {
        info.branch = branch.clone();
    }
    if let Some(url) = &patch.origin_url {
        info.origin_url = url.clone();
    }
    (info.sha.is_some() || info.branch.is_some() || info.origin_url.is_some()).then_some(info)
}
