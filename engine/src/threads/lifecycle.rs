//! The requests that create, load or change a thread: `thread/start`, `thread/resume`,
//! `thread/fork`, `thread/archive`, `thread/unarchive` and `thread/name/set`, with their
//! notifications.

use std::sync::{Arc, Mutex};

use agentwire_protocol::methods::{
    ThreadArchived, ThreadNameUpdated, ThreadStarted, ThreadStatusChanged, ThreadTokenUsageUpdated,
    ThreadUnarchived,
};
use agentwire_protocol::{
    AbsolutePathBuf, SessionSource, ThreadArchiveParams, ThreadArchiveResponse,
    ThreadArchivedNotification, ThreadForkParams, ThreadForkResponse, ThreadHistoryMode,
    ThreadNameUpdatedNotification, ThreadResumeParams, ThreadResumeResponse, ThreadSetNameParams,
    ThreadSetNameResponse, ThreadSettingsOverrides, ThreadStartParams, ThreadStartResponse,
    ThreadStartedNotification, ThreadStatus, ThreadStatusChangedNotification,
    ThreadTokenUsageUpdatedNotification, ThreadUnarchiveParams, ThreadUnarchiveResponse,
    ThreadUnarchivedNotification, Turn, TurnStatus,
};
use agentwire_runtime::RequestContext;
use agentwire_store::error::ThreadError;
use agentwire_store::meta::{
    CLI_VERSION, SettingsOverrides, ThreadMeta, ThreadSettings, ThreadSummary, new_id, now,
};
use agentwire_store::record::{RolloutRecord, settle_dangling, settle_records};

use super::catch_up::Known;
use super::{LoadedThread, Threads, lock};
use crate::turns::instructions::instruction_sources;

/// Longest thread name accepted, in bytes.
const MAX_NAME_BYTES: usize = 1024;

/// The settings overrides `thread/start`, `thread/resume` and `thread/fork` carry, with their
/// `cwd` checked (issue #32: it must be an absolute, existing directory).
fn checked_overrides(settings: ThreadSettingsOverrides) -> Result<SettingsOverrides, ThreadError> {
    if let Some(cwd) = settings.cwd.as_deref() {
        agentwire_store::meta::check_cwd("cwd", cwd, true).map_err(ThreadError::InvalidParams)?;
    }
    Ok(SettingsOverrides::from(settings))
}

impl Threads {
    /// `overrides` with a sandbox mode turned into the full policy the configuration details
    /// (`[sandbox_workspace_write]` as seen from the thread's directory).
    fn with_configured_sandbox(&self, mut overrides: SettingsOverrides) -> SettingsOverrides {
        if let Some(mode) = overrides.sandbox.take() {
            let defaults = self
                .defaults
                .defaults(overrides.cwd.as_deref(), overrides.config.as_ref());
            overrides.sandbox_policy = Some(agentwire_config::defaults::sandbox_policy_with(
                mode,
                &defaults.sandbox_workspace_write,
            ));
        }
        overrides
    }

    /// `thread/start`: creates a thread, persists it unless ephemeral, loads it, and sends
    /// `thread/started` to the caller.
    pub(crate) fn start(
        &self,
        context: &RequestContext,
        params: ThreadStartParams,
    ) -> Result<ThreadStartResponse, ThreadError> {
        let mut overrides = checked_overrides(params.settings)?;
        let defaults = self
            .defaults
            .defaults(overrides.cwd.as_deref(), overrides.config.as_ref());
        overrides.dynamic_tools = params.dynamic_tools;
        let mut meta = self.new_meta(ThreadSettings::new(&defaults, overrides));
        meta.thread_source = params.thread_source;
        meta.service_name = params.service_name;
        let summary = ThreadSummary::new(meta, params.ephemeral.unwrap_or(false));
        let thread = self.create(summary, Vec::new())?;
        let settings = thread.summary.meta.settings.clone();
        let wire = thread.to_thread(false);
        self.insert(thread);
        self.subscribers.subscribe(&wire.id, &context.peer);
        announce_start(context, wire.clone());
        agentwire_runtime::telemetry::thread_event("started", &wire.id);
        let sources = instruction_sources(&settings.cwd, defaults.project_doc_max_bytes);
        Ok(ThreadStartResponse::builder()
            .thread(wire)
            .model(settings.model)
            .model_provider(settings.model_provider)
            .maybe_service_tier(settings.service_tier)
            .maybe_reasoning_effort(settings.reasoning_effort)
            .cwd(AbsolutePathBuf(settings.cwd))
            .approval_policy(settings.approval_policy)
            .approvals_reviewer(settings.approvals_reviewer)
            .sandbox(settings.sandbox)
            .instruction_sources(sources)
            .build())
    }

    /// The project docs a thread in `cwd` reads (`instructionSources`), under the
    /// configuration's cap for `cwd`.
    fn instruction_sources(&self, cwd: &str) -> Vec<agentwire_protocol::LegacyAppPathString> {
        let max_bytes = self
            .defaults
            .defaults(Some(cwd), None)
            .project_doc_max_bytes;
        instruction_sources(cwd, max_bytes)
    }

    /// `thread/resume`: loads a persisted thread (or joins it if loaded), applying overrides.
    pub(crate) fn resume(
        &self,
        context: &RequestContext,
        params: ThreadResumeParams,
    ) -> Result<ThreadResumeResponse, ThreadError> {
        let include_turns = !params.exclude_turns.unwrap_or(false);
        let mut overrides = self.with_configured_sandbox(checked_overrides(params.settings)?);
        overrides.dynamic_tools = params.dynamic_tools;
        let thread = match self.loaded(&params.thread_id) {
            Some(thread) => {
                self.refresh_loaded(&params.thread_id, &thread)?;
                thread
            }
            None => {
                let thread = self.load(&params.thread_id, overrides)?;
                let id = params.thread_id.clone();
                let status = lock(&thread).reported_status();
                let hub = context.peer.hub().clone();
                context.after_response(move || {
                    hub.broadcast::<ThreadStatusChanged>(
                        &ThreadStatusChangedNotification::builder()
                            .thread_id(id)
                            .status(status)
                            .build(),
                    );
                });
                thread
            }
        };
        if self.turn_runs_elsewhere(&thread) {
            // Caught up with the turn through the relay, then read again: nothing between the
            // read and what is relayed after it is missed (see `catch_up`).
            let mut catching_up = self.subscribers.catch_up(&params.thread_id, &context.peer);
            catching_up.wait();
            self.reread(&params.thread_id, &thread)?;
            let known = Known::of(&lock(&thread).turns);
            context.after_response(move || catching_up.finish(known));
        } else {
            self.subscribers.subscribe(&params.thread_id, &context.peer);
        }
        agentwire_runtime::telemetry::thread_event("resumed", &params.thread_id);
        let thread = lock(&thread);
        super::usage::after_resume(
            context,
            &params.thread_id,
            &thread.summary,
            Arc::clone(&self.subscribers),
        );
        let settings = thread.summary.meta.settings.clone();
        let sources = self.instruction_sources(&settings.cwd);
        Ok(ThreadResumeResponse::builder()
            .thread(thread.to_thread(include_turns))
            .model(settings.model)
            .model_provider(settings.model_provider)
            .maybe_service_tier(settings.service_tier)
            .maybe_reasoning_effort(settings.reasoning_effort)
            .cwd(AbsolutePathBuf(settings.cwd))
            .approval_policy(settings.approval_policy)
            .approvals_reviewer(settings.approvals_reviewer)
            .sandbox(settings.sandbox)
            .instruction_sources(sources)
            .build())
    }

    /// Loads persisted thread `id`: reads its rollout, settles turns a crash left running,
    /// applies `overrides` and opens the rollout for appending.
    fn load(
        &self,
        id: &str,
        overrides: SettingsOverrides,
    ) -> Result<Arc<Mutex<LoadedThread>>, ThreadError> {
        let row = self.lookup(id)?;
        if row.archived {
            return Err(ThreadError::Conflict(format!(
                "thread {id} is archived; unarchive it before resuming"
            )));
        }
        let replayed = self.read_rollout(&row)?;
        let log = self.store.reopen(&row, &replayed)?;
        let mut turns = replayed.turns;
        let at = now();
        let mut records: Vec<RolloutRecord> = if self.left_open_turns_settle(id, &turns)? {
            settle_records(&mut turns, at)
        } else {
            // A turn runs on another server: it stays open here.
            Vec::new()
        };
        let mut summary = replayed.summary;
        if summary.meta.settings.apply(overrides) {
            records.push(RolloutRecord::Settings {
                at,
                settings: summary.meta.settings.clone(),
            });
        }
        let mut thread = LoadedThread {
            summary,
            log: Some(log),
            turns,
            status: ThreadStatus::Idle,
        };
        if records.is_empty() {
            thread.sync_index();
        } else {
            thread.append(&records, at)?.wait()?;
        }
        Ok(self.insert(thread))
    }

    /// `thread/fork`: copies a thread's finished turns (up to `lastTurnId`) into a new thread,
    /// loads it and sends `thread/started` to the caller.
    pub(crate) fn fork(
        &self,
        context: &RequestContext,
        params: ThreadForkParams,
    ) -> Result<ThreadForkResponse, ThreadError> {
        let overrides = self.with_configured_sandbox(checked_overrides(params.settings)?);
        let (source, turns) = self.snapshot(&params.thread_id)?;
        let mut turns: Vec<Turn> = turns
            .into_iter()
            .filter(|t| t.status != TurnStatus::InProgress)
            .collect();
        if let Some(last) = &params.last_turn_id {
            let Some(position) = turns.iter().position(|t| &t.id == last) else {
                return Err(ThreadError::InvalidParams(format!(
                    "lastTurnId: {last} is not a finished turn of thread {}",
                    params.thread_id
                )));
            };
            turns.truncate(position + 1);
        }
        let mut settings = source.meta.settings.clone();
        settings.apply(overrides);
        let mut meta = self.new_meta(settings);
        meta.thread_source = params.thread_source;
        meta.forked_from_id = Some(source.meta.id.clone());
        meta.git_info = source.meta.git_info.clone();
        meta.history_mode = source.meta.history_mode;
        let mut summary = ThreadSummary::new(meta, params.ephemeral.unwrap_or(false));
        summary.note_turns(&turns);
        // The copy keeps the tokens its history cost (recorded in its rollout by `create`).
        summary.token_usage = source.token_usage.clone();
        let totals = summary.token_usage.clone();
        let thread = self.create(summary, turns)?;
        let settings = thread.summary.meta.settings.clone();
        let wire = thread.to_thread(!params.exclude_turns.unwrap_or(false));
        let announced = thread.to_thread(false);
        self.insert(thread);
        self.subscribers.subscribe(&announced.id, &context.peer);
        let copied = totals.map(|totals| {
            ThreadTokenUsageUpdatedNotification::builder()
                .thread_id(announced.id.clone())
                .turn_id(totals.turn_id)
                .token_usage(totals.usage)
                .build()
        });
        // `thread/started`, then the totals the copy keeps.
        let peer = context.peer.clone();
        context.after_response(move || {
            peer.notify::<ThreadStarted>(
                &ThreadStartedNotification::builder()
                    .thread(announced)
                    .build(),
            );
            if let Some(copied) = copied {
                peer.notify::<ThreadTokenUsageUpdated>(&copied);
            }
        });
        agentwire_runtime::telemetry::thread_event("forked", &wire.id);
        let sources = self.instruction_sources(&settings.cwd);
        Ok(ThreadForkResponse::builder()
            .thread(wire)
            .model(settings.model)
            .model_provider(settings.model_provider)
            .maybe_service_tier(settings.service_tier)
            .maybe_reasoning_effort(settings.reasoning_effort)
            .cwd(AbsolutePathBuf(settings.cwd))
            .approval_policy(settings.approval_policy)
            .approvals_reviewer(settings.approvals_reviewer)
            .sandbox(settings.sandbox)
            .instruction_sources(sources)
            .build())
    }

    /// The summary and turns of thread `id`, loaded or not; turns a crash left running read as
    /// interrupted.
    pub(crate) fn snapshot(&self, id: &str) -> Result<(ThreadSummary, Vec<Turn>), ThreadError> {
        if let Some(thread) = self.loaded(id) {
            let thread = lock(&thread);
            return Ok((thread.summary.clone(), thread.turns.clone()));
        }
        let row = self.lookup(id)?;
        let mut replayed = self.read_rollout(&row)?;
        if self.left_open_turns_settle(id, &replayed.turns)? {
            settle_dangling(&mut replayed.turns);
        }
        Ok((replayed.summary, replayed.turns))
    }

    /// `thread/archive`: moves a persisted thread's rollout to the archive, unloading it first
    /// if loaded; broadcasts `thread/archived`.
    pub(crate) fn archive(
        &self,
        context: &RequestContext,
        params: ThreadArchiveParams,
    ) -> Result<ThreadArchiveResponse, ThreadError> {
        let id = params.thread_id;
        let loaded = self.loaded(&id);
        if let Some(thread) = &loaded {
            let thread = lock(thread);
            if thread.log.is_none() {
                return Err(ThreadError::Conflict(format!(
                    "thread {id} is ephemeral and cannot be archived"
                )));
            }
            if matches!(thread.status, ThreadStatus::Active { .. }) {
                return Err(ThreadError::Conflict(format!(
                    "thread {id} is running a turn; interrupt it before archiving"
                )));
            }
        }
        let mut row = self.lookup(&id)?;
        if row.archived {
            return Err(ThreadError::Conflict(format!(
                "thread {id} is already archived"
            )));
        }
        self.store.set_archived(&mut row, true)?;
        agentwire_runtime::telemetry::thread_event("archived", &id);
        let was_loaded = lock(&self.loaded).remove(&id).is_some();
        let hub = context.peer.hub().clone();
        context.after_response(move || {
            if was_loaded {
                hub.broadcast::<ThreadStatusChanged>(
                    &ThreadStatusChangedNotification::builder()
                        .thread_id(id.clone())
                        .status(ThreadStatus::NotLoaded)
                        .build(),
                );
            }
            hub.broadcast::<ThreadArchived>(
                &ThreadArchivedNotification::builder().thread_id(id).build(),
            );
        });
        Ok(ThreadArchiveResponse::builder().build())
    }

    /// `thread/unarchive`: moves an archived rollout back; broadcasts `thread/unarchived`.
    pub(crate) fn unarchive(
        &self,
        context: &RequestContext,
        params: ThreadUnarchiveParams,
    ) -> Result<ThreadUnarchiveResponse, ThreadError> {
        let id = params.thread_id;
        let mut row = self.lookup(&id)?;
        if !row.archived {
            return Err(ThreadError::Conflict(format!(
                "thread {id} is not archived"
            )));
        }
        self.store.set_archived(&mut row, false)?;
        agentwire_runtime::telemetry::thread_event("unarchived", &id);
        let thread = row
            .summary
            .to_thread(ThreadStatus::NotLoaded, self.path_of(&row), Vec::new());
        let hub = context.peer.hub().clone();
        context.after_response(move || {
            hub.broadcast::<ThreadUnarchived>(
                &ThreadUnarchivedNotification::builder()
                    .thread_id(id)
                    .build(),
            );
        });
        Ok(ThreadUnarchiveResponse::builder().thread(thread).build())
    }

    /// `thread/name/set`: records the new name (an empty one clears it); broadcasts
    /// `thread/name/updated`.
    pub(crate) fn set_name(
        &self,
        context: &RequestContext,
        params: ThreadSetNameParams,
    ) -> Result<ThreadSetNameResponse, ThreadError> {
        let id = params.thread_id;
        let name = params.name.trim();
        if name.len() > MAX_NAME_BYTES {
            return Err(ThreadError::InvalidParams(format!(
                "name: longer than {MAX_NAME_BYTES} bytes"
            )));
        }
        let name = (!name.is_empty()).then(|| name.to_owned());
        let at = now();
        let record = RolloutRecord::Name {
            at,
            name: name.clone(),
        };
        if let Some(thread) = self.loaded(&id) {
            let pending = {
                let mut thread = lock(&thread);
                thread.summary.name = name.clone();
                thread.append(&[record], at)?
            };
            pending.wait()?;
        } else {
            let mut row = self.lookup(&id)?;
            let replayed = self.read_rollout(&row)?;
            self.append_stored(&mut row, replayed, record, at, |summary| {
                summary.name = name.clone();
            })?;
        }
        let hub = context.peer.hub().clone();
        context.after_response(move || {
            hub.broadcast::<ThreadNameUpdated>(
                &ThreadNameUpdatedNotification::builder()
                    .thread_id(id)
                    .maybe_thread_name(name)
                    .build(),
            );
        });
        Ok(ThreadSetNameResponse::builder().build())
    }

    /// Metadata for a new thread with `settings`, created now.
    fn new_meta(&self, settings: ThreadSettings) -> ThreadMeta {
        let id = new_id();
        ThreadMeta {
            session_id: id.clone(),
            id,
            created_at: now(),
            cli_version: CLI_VERSION.to_owned(),
            // What the reference records for app-server clients.
            source: SessionSource::Vscode,
            thread_source: None,
            originator: None,
            service_name: None,
            forked_from_id: None,
            parent_thread_id: None,
            agent_nickname: None,
            agent_role: None,
            git_info: None,
            history_mode: ThreadHistoryMode::Legacy,
            settings,
        }
    }

    /// A new loaded thread with `turns`; it is persisted (with the turns) unless it is
    /// ephemeral.
    pub(super) fn create(
        &self,
        summary: ThreadSummary,
        turns: Vec<Turn>,
    ) -> Result<LoadedThread, ThreadError> {
        let log = if summary.ephemeral {
            None
        } else {
            let meta = &summary.meta;
            let mut records: Vec<RolloutRecord> = turns
                .iter()
                .flat_map(|turn| RolloutRecord::for_turn(turn, meta.created_at))
                .collect();
            // Totals carried over (a fork's) are read back after a restart.
            if let Some(totals) = &summary.token_usage {
                records.push(RolloutRecord::TokenUsage {
                    at: meta.created_at,
                    turn_id: totals.turn_id.clone(),
                    usage: totals.usage.clone(),
                });
            }
            Some(self.store.create(&summary, &records)?)
        };
        Ok(LoadedThread {
            summary,
            log,
            turns,
            status: ThreadStatus::Idle,
        })
    }

    /// Adds a loaded thread to the map; returns it (or the one already there).
    pub(super) fn insert(&self, thread: LoadedThread) -> Arc<Mutex<LoadedThread>> {
        let id = thread.summary.meta.id.clone();
        lock(&self.loaded)
            .entry(id)
            .or_insert_with(|| Arc::new(Mutex::new(thread)))
            .clone()
    }
}

/// Sends `thread/started` for `thread` (with no turns) to the caller once it has its answer.
fn announce_start(context: &RequestContext, thread: agentwire_protocol::Thread) {
    let peer = context.peer.clone();
    context.after_response(move || {
        peer.notify::<ThreadStarted>(&ThreadStartedNotification::builder().thread(thread).build());
    });
}
