//! What the turn engine uses to record a turn's progress on a loaded thread and to move the
//! thread between statuses. Each recording method updates the in-memory turns and queues one
//! rollout record with the committer; the [`Pending`] it returns resolves once the record is
//! durable and the index follows, and the turn engine waits for it before it tells clients. See
//! `agentwire_store::record` for what survives a crash.

use agentwire_protocol::methods::ThreadStatusChanged;
use agentwire_protocol::{ThreadItem, ThreadStatus, ThreadStatusChangedNotification, Turn};
use agentwire_runtime::Hub;
use agentwire_store::committer::Pending;
use agentwire_store::error::ThreadError;
use agentwire_store::meta::{SettingsOverrides, ThreadSettings, now};
use agentwire_store::record::{RolloutRecord, put_item, started_turn};

use super::{LoadedThread, Threads, lock};

impl Threads {
    /// Runs `change` on loaded thread `id`.
    fn with_loaded<T>(
        &self,
        id: &str,
        change: impl FnOnce(&mut LoadedThread) -> Result<T, ThreadError>,
    ) -> Result<T, ThreadError> {
        let Some(thread) = self.loaded(id) else {
            // An id that names no thread at all says so.
            self.lookup(id)?;
            return Err(ThreadError::Conflict(format!(
                "thread {id} is not loaded; resume it first"
            )));
        };
        let mut thread = lock(&thread);
        change(&mut thread)
    }

    /// Records that `turn` began on thread `thread_id` (its items are recorded one by one).
    pub(crate) fn record_turn_started(
        &self,
        thread_id: &str,
        turn: &Turn,
    ) -> Result<Pending, ThreadError> {
        self.with_loaded(thread_id, |thread| {
            if thread.turns.iter().any(|t| t.id == turn.id) {
                return Err(ThreadError::Conflict(format!(
                    "turn {} already exists on thread {thread_id}",
                    turn.id
                )));
            }
            let at = now();
            let record = RolloutRecord::TurnStarted {
                at,
                turn_id: turn.id.clone(),
                root_turn_id: turn.root_turn_id.clone(),
                started_at: turn.started_at,
            };
            let pending = thread.append(&[record], at)?;
            thread.turns.push(started_turn(
                turn.id.clone(),
                turn.root_turn_id.clone(),
                turn.started_at,
            ));
            Ok(pending)
        })
    }

    /// Records `item` of turn `turn_id` in its final state (an item recorded again with the
    /// same id replaces the earlier one). The first user message becomes the preview.
    pub(crate) fn record_item_completed(
        &self,
        thread_id: &str,
        turn_id: &str,
        item: &ThreadItem,
    ) -> Result<Pending, ThreadError> {
        self.with_loaded(thread_id, |thread| {
            if !thread.turns.iter().any(|t| t.id == turn_id) {
                return Err(ThreadError::Conflict(format!(
                    "turn {turn_id} has not started on thread {thread_id}"
                )));
            }
            let at = now();
            let record = RolloutRecord::ItemCompleted {
                at,
                turn_id: turn_id.to_owned(),
                item: item.clone(),
            };
            thread.summary.note_item(&item.kind);
            let pending = thread.append(&[record], at)?;
            if let Some(turn) = thread.turns.iter_mut().rev().find(|t| t.id == turn_id) {
                put_item(turn, item.clone());
            }
            Ok(pending)
        })
    }

    /// Records that `turn` ended: its status, error, end time and duration (its items were
    /// recorded already).
    pub(crate) fn record_turn_completed(
        &self,
        thread_id: &str,
        turn: &Turn,
    ) -> Result<Pending, ThreadError> {
        self.with_loaded(thread_id, |thread| {
            let Some(stored) = thread.turns.iter_mut().rev().find(|t| t.id == turn.id) else {
                return Err(ThreadError::Conflict(format!(
                    "turn {} has not started on thread {thread_id}",
                    turn.id
                )));
            };
            stored.status = turn.status;
            stored.error = turn.error.clone();
            stored.completed_at = turn.completed_at;
            stored.duration_ms = turn.duration_ms;
            let at = now();
            thread.append(&[RolloutRecord::turn_completed(turn, at)], at)
        })
    }

    /// The turns of thread `id`, loaded or not, oldest first.
    #[cfg(test)]
    pub(crate) fn turns(&self, id: &str) -> Result<Vec<Turn>, ThreadError> {
        self.with_turns(id, <[Turn]>::to_vec)
    }

    /// What `read` makes of the turns of thread `id` (loaded or not, oldest first). A loaded
    /// thread's turns are read in place, under its lock, rather than copied first: a turn's
    /// history is built from every item of the thread.
    pub(crate) fn with_turns<T>(
        &self,
        id: &str,
        read: impl FnOnce(&[Turn]) -> T,
    ) -> Result<T, ThreadError> {
        match self.loaded(id) {
            Some(thread) => Ok(read(&lock(&thread).turns)),
            None => self.snapshot(id).map(|(_, turns)| read(&turns)),
        }
    }

    /// Applies `overrides` to the settings of loaded thread `id`; records them when they
    /// changed. Returns the settings now in force. The record is not waited for: the turn that
    /// changes them records its start next, and that record is durable only after this one.
    pub(crate) fn update_settings(
        &self,
        id: &str,
        overrides: SettingsOverrides,
    ) -> Result<ThreadSettings, ThreadError> {
        self.with_loaded(id, |thread| {
            let mut settings = thread.summary.meta.settings.clone();
            if settings.apply(overrides) {
                let at = now();
                let record = RolloutRecord::Settings {
                    at,
                    settings: settings.clone(),
                };
                thread.append(&[record], at)?.detach();
                thread.summary.meta.settings = settings.clone();
            }
            Ok(settings)
        })
    }

    /// The runtime status of thread `id` (`notLoaded` when it is not loaded).
    #[cfg(test)]
    pub(crate) fn status(&self, id: &str) -> ThreadStatus {
        self.status_of(id)
    }

    /// Sets the status of loaded thread `id`; when it changes, broadcasts
    /// `thread/status/changed` through `hub`.
    pub(crate) fn set_status(
        &self,
        hub: &Hub,
        id: &str,
        status: ThreadStatus,
    ) -> Result<(), ThreadError> {
        let changed = self.with_loaded(id, |thread| {
            let changed = thread.status != status;
            thread.status = status.clone();
            Ok(changed)
        })?;
        if changed {
            let params = ThreadStatusChangedNotification::builder()
                .thread_id(id.to_owned())
                .status(status)
                .build();
            hub.broadcast::<ThreadStatusChanged>(&params);
            self.subscribers.publish::<ThreadStatusChanged>(id, &params);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use agentwire_protocol::{
        ThreadItemKind, ThreadListParams, ThreadReadParams, TurnStatus, UserInput,
    };

    use super::*;
    use agentwire_config::defaults::ThreadDefaults;
    use agentwire_store::meta::{SettingsOverrides, ThreadMeta, ThreadSummary};

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("agentwire-engine-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn user_item(id: &str, text: &str) -> ThreadItem {
        ThreadItem::builder()
            .kind(
                ThreadItemKind::user_message()
                    .id(id.to_owned())
                    .content(vec![UserInput::text().text(text.to_owned()).build()])
                    .build(),
            )
            .started_at_ms(1)
            .completed_at_ms(2)
            .build()
    }

    /// A persisted, loaded thread created without a connection.
    fn start(threads: &Threads) -> String {
        let meta = ThreadMeta {
            id: agentwire_store::meta::new_id(),
            session_id: String::new(),
            created_at: now(),
            cli_version: "test".to_owned(),
            source: agentwire_protocol::SessionSource::Vscode,
            thread_source: None,
            originator: None,
            service_name: None,
            forked_from_id: None,
            parent_thread_id: None,
            agent_nickname: None,
            agent_role: None,
            git_info: None,
            history_mode: Default::default(),
            settings: ThreadSettings::new(&ThreadDefaults::default(), SettingsOverrides::default()),
        };
        let id = meta.id.clone();
        let thread = threads
            .create(ThreadSummary::new(meta, false), Vec::new())
            .expect("thread created");
        threads.insert(thread);
        id
    }

    #[test]
    fn recorded_turns_survive_a_restart() {
        let home = scratch("recording");
        let threads = Threads::open(
            agentwire_store::open(&agentwire_store::StoreUrl::Embedded, &home),
            std::sync::Arc::new(ThreadDefaults::default()),
        );
        let id = start(&threads);
        let mut turn = started_turn("t1".to_owned(), None, Some(10));
        threads
            .record_turn_started(&id, &turn)
            .expect("turn started")
            .wait()
            .expect("durable");
        threads
            .record_item_completed(&id, "t1", &user_item("i1", "Say hello."))
            .expect("item recorded")
            .wait()
            .expect("durable");
        turn.status = TurnStatus::Completed;
        turn.completed_at = Some(11);
        turn.duration_ms = Some(1000);
        threads
            .record_turn_completed(&id, &turn)
            .expect("turn completed")
            .wait()
            .expect("durable");
        threads
            .record_turn_started(&id, &started_turn("t2".to_owned(), None, None))
            .expect("second turn started")
            .wait()
            .expect("durable");
        let live = threads.turns(&id).expect("turns");
        drop(threads);

        let reopened = Threads::open(
            agentwire_store::open(&agentwire_store::StoreUrl::Embedded, &home),
            std::sync::Arc::new(ThreadDefaults::default()),
        );
        let listed = reopened
            .list(
                serde_json::from_value::<ThreadListParams>(serde_json::json!({})).expect("params"),
            )
            .expect("list");
        assert_eq!(listed.data.len(), 1);
        assert_eq!(listed.data[0].preview, "Say hello.");
        let read = reopened
            .read(
                ThreadReadParams::builder()
                    .thread_id(id.clone())
                    .include_turns(true)
                    .build(),
            )
            .expect("read");
        assert_eq!(read.thread.turns.len(), 2);
        assert_eq!(read.thread.turns[0], live[0]);
        // The turn the "crash" left running reads back as interrupted.
        assert_eq!(read.thread.turns[1].status, TurnStatus::Interrupted);
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn status_changes_only_on_loaded_threads() {
        let home = scratch("status");
        let threads = Threads::open(
            agentwire_store::open(&agentwire_store::StoreUrl::Embedded, &home),
            std::sync::Arc::new(ThreadDefaults::default()),
        );
        let id = start(&threads);
        let hub = Hub::new(Duration::from_secs(1));
        assert_eq!(threads.status(&id), ThreadStatus::Idle);
        threads
            .set_status(&hub, &id, ThreadStatus::active().build())
            .expect("status set");
        assert!(matches!(threads.status(&id), ThreadStatus::Active { .. }));
        assert!(
            threads
                .set_status(&hub, "missing", ThreadStatus::Idle)
                .is_err()
        );
        assert_eq!(threads.status("missing"), ThreadStatus::NotLoaded);
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn a_kept_page_is_answered_in_place_until_a_record_changes_the_index() {
        let home = scratch("kept-page");
        let threads = Threads::open(
            agentwire_store::open(&agentwire_store::StoreUrl::Embedded, &home),
            std::sync::Arc::new(ThreadDefaults::default()),
        );
        let id = start(&threads);
        let params = || {
            serde_json::from_value::<ThreadListParams>(serde_json::json!({"limit": 5}))
                .expect("params")
        };
        assert!(
            threads.list_kept(&params()).is_none(),
            "nothing is kept before the first read"
        );
        let read = threads.list(params()).expect("list");
        let kept = threads
            .list_kept(&params())
            .expect("the page is kept")
            .expect("answered");
        assert_eq!(kept, read);
        // A record through the committer changes the index: the kept page is dropped with it.
        threads
            .record_turn_started(&id, &started_turn("t1".to_owned(), None, Some(10)))
            .expect("turn started")
            .wait()
            .expect("durable");
        assert!(
            threads.list_kept(&params()).is_none(),
            "a write drops the page"
        );
        // A bad param is refused in place, naming it.
        let bad = serde_json::from_value::<ThreadListParams>(
            serde_json::json!({"cursor": "not a cursor"}),
        )
        .expect("params");
        let error = threads
            .list_kept(&bad)
            .expect("answered")
            .expect_err("refused");
        assert!(error.to_string().contains("cursor"), "{error}");
        let _ = std::fs::remove_dir_all(&home);
    }
}
