//! `thread/backgroundTerminals/list`, `clean` and `terminate`: the exec sessions of a thread
//! (commands the model started with `exec_command` that run on; see
//! `tools::exec_sessions`), as clients see and stop them.
//!
//! - `list` gives the running ones, oldest first: `processId` (the session id the model uses),
//!   the command line, its working directory, the item that started it, the process id of
//!   the command's process group leader and its resident memory when the system tells it.
//!   Pages: `cursor` is the position to go on from, as `nextCursor` gave it.
//! - `terminate` kills one session's process group and answers once its command has ended
//!   (its item completed), `terminated: false` when no such session runs.
//! - `clean` does that to every running session of the thread.

use agentwire_protocol::methods::{
    ThreadBackgroundTerminalsClean, ThreadBackgroundTerminalsList,
    ThreadBackgroundTerminalsTerminate,
};
use agentwire_protocol::{
    LegacyAppPathString, ThreadBackgroundTerminal, ThreadBackgroundTerminalsCleanParams,
    ThreadBackgroundTerminalsCleanResponse, ThreadBackgroundTerminalsListParams,
    ThreadBackgroundTerminalsListResponse, ThreadBackgroundTerminalsTerminateParams,
    ThreadBackgroundTerminalsTerminateResponse,
};
use agentwire_runtime::HandlerError;
use agentwire_store::error::ThreadError;

use crate::Engine;
use crate::pool::stored;

/// `thread/backgroundTerminals/list`.
pub(crate) async fn list(
    engine: &Engine,
    params: ThreadBackgroundTerminalsListParams,
) -> Result<ThreadBackgroundTerminalsListResponse, HandlerError> {
    let turns = engine.turns.clone();
    // On the blocking pool: the thread is looked up in the store, and `/proc` is read.
    stored::<ThreadBackgroundTerminalsList, _, _>(engine.threads.clone(), move |t| {
        t.snapshot(&params.thread_id)?;
        let start = match params.cursor.as_deref() {
            None => 0,
            Some(cursor) => cursor.parse::<usize>().map_err(|_| {
                ThreadError::InvalidParams(format!(
                    "cursor: `{cursor}` is not a cursor this method gave"
                ))
            })?,
        };
        let limit = params.limit.map_or(usize::MAX, |limit| {
            usize::try_from(limit.max(1)).unwrap_or(usize::MAX)
        });
        let running = turns.exec_sessions().running(&params.thread_id);
        let page: Vec<ThreadBackgroundTerminal> = running
            .iter()
            .skip(start)
            .take(limit)
            .map(|session| {
                let os_pid = session.os_pid();
                ThreadBackgroundTerminal::builder()
                    .process_id(session.id.to_string())
                    .command(session.info.command.clone())
                    .cwd(LegacyAppPathString(session.info.cwd.clone()))
                    .item_id(session.info.item_id.clone())
                    .maybe_os_pid(os_pid)
                    .maybe_rss_kb(os_pid.and_then(resident_kb))
                    .build()
            })
            .collect();
        let next = start.saturating_add(page.len());
        Ok(ThreadBackgroundTerminalsListResponse::builder()
            .data(page)
            .maybe_next_cursor((next < running.len()).then(|| next.to_string()))
            .build())
    })
    .await
}

/// `thread/backgroundTerminals/clean`.
pub(crate) async fn clean(
    engine: &Engine,
    params: ThreadBackgroundTerminalsCleanParams,
) -> Result<ThreadBackgroundTerminalsCleanResponse, HandlerError> {
    let thread_id = params.thread_id.clone();
    stored::<ThreadBackgroundTerminalsClean, _, _>(engine.threads.clone(), move |t| {
        t.snapshot(&thread_id).map(drop)
    })
    .await?;
    engine.turns.exec_sessions().clean(&params.thread_id).await;
    Ok(ThreadBackgroundTerminalsCleanResponse::builder().build())
}

/// `thread/backgroundTerminals/terminate`.
pub(crate) async fn terminate(
    engine: &Engine,
    params: ThreadBackgroundTerminalsTerminateParams,
) -> Result<ThreadBackgroundTerminalsTerminateResponse, HandlerError> {
    let thread_id = params.thread_id.clone();
    stored::<ThreadBackgroundTerminalsTerminate, _, _>(engine.threads.clone(), move |t| {
        t.snapshot(&thread_id).map(drop)
    })
    .await?;
    let terminated = engine
        .turns
        .exec_sessions()
        .terminate(&params.thread_id, &params.process_id)
        .await;
    Ok(ThreadBackgroundTerminalsTerminateResponse::builder()
        .terminated(terminated)
        .build())
}

/// The resident memory of process `pid` in KiB, as Linux reports it (`VmRSS`); `None`
/// elsewhere or when it cannot be read. Blocking.
fn resident_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kb| kb.parse().ok())
}
