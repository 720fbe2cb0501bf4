//! The members of `Thread` and of the `thread/list` result that only the experimental surface
//! declares (`environments`, `canAcceptDirectInput`, `attachedToThreadId`, `readStates`).
//!
//! They are filled in the answers to a connection that negotiated `experimentalApi` and left
//! `null` for the others (and in notifications, which may reach both kinds):
//!
//! - `environments`: a loaded thread runs its commands on this machine, in its working
//!   directory, so it has the one `local` environment, whose workspace root is that directory;
//!   `null` for a thread that is not loaded.
//! - `canAcceptDirectInput`: `true` for a loaded thread that can take `turn/start` input,
//!   `false` for one held in `systemError`, `null` for one that is not loaded.
//! - `attachedToThreadId`: always `null`; this server attaches no thread to another.
//! - `readStates`: the read receipt of each stored (not ephemeral) thread of the page, from
//!   the read marks `thread/readState/update` records in the thread's rollout; a thread whose
//!   history cannot be read is left out.

use std::collections::BTreeMap;
use std::sync::Arc;

use agentwire_protocol::{
    LegacyAppPathString, Thread, ThreadEnvironment, ThreadListResponse, ThreadStatus,
};
use agentwire_runtime::Peer;

use crate::threads::Threads;
use crate::threads::goals::read_state;

/// The id of the one execution environment this server has.
const LOCAL: &str = "local";

/// Fills the experimental members of `threads` for `peer`, when it negotiated them.
pub(crate) fn decorate(peer: &Peer, threads: &mut [Thread]) {
    if !peer.experimental_api() {
        return;
    }
    for thread in threads {
        fill(thread);
    }
}

/// Fills the experimental members of one thread.
fn fill(thread: &mut Thread) {
    let loaded = !matches!(thread.status, ThreadStatus::NotLoaded);
    thread.environments = loaded.then(|| {
        let cwd = LegacyAppPathString(thread.cwd.0.clone());
        vec![
            ThreadEnvironment::builder()
                .cwd(cwd.clone())
                .environment_id(LOCAL)
                .runtime_workspace_roots(vec![cwd])
                .build(),
        ]
    });
    thread.can_accept_direct_input =
        loaded.then_some(!matches!(thread.status, ThreadStatus::SystemError));
    thread.attached_to_thread_id = None;
}

/// Fills the threads of a `thread/list` page and its `readStates` for `peer`, when it
/// negotiated them. Reads each stored thread's history on a blocking thread.
pub(crate) async fn decorate_list(
    peer: &Peer,
    threads: &Arc<Threads>,
    page: &mut ThreadListResponse,
) {
    if !peer.experimental_api() {
        return;
    }
    for thread in &mut page.data {
        fill(thread);
    }
    let ids: Vec<String> = page
        .data
        .iter()
        .filter(|t| !t.ephemeral)
        .map(|t| t.id.clone())
        .collect();
    let threads = threads.clone();
    let states = tokio::task::spawn_blocking(move || {
        let mut states = BTreeMap::new();
        for id in ids {
            match threads.snapshot(&id) {
                Ok((summary, turns)) => {
                    states.insert(id, read_state(&turns, summary.read_mark.as_ref()));
                }
                Err(error) => {
                    tracing::warn!(thread = %id, %error, "thread/list: no read state");
                }
            }
        }
        states
    })
    .await;
    page.read_states = Some(states.unwrap_or_default());
}
