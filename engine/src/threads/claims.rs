//! Which server runs turns on a thread: claims (see [`agentwire_store::ThreadStore::claim`]), and
//! what a loaded thread learns from the store before a turn when other servers write to it too.

use std::sync::{Arc, Mutex};

use agentwire_protocol::{ThreadStatus, Turn, TurnStatus};
use agentwire_store::Claim;
use agentwire_store::error::ThreadError;
use agentwire_store::meta::now;
use agentwire_store::record::settle_records;

use super::{LoadedThread, Threads, lock};

impl Threads {
    /// Claims thread `id` for a turn on this server until the claim is dropped. In a store
    /// other servers write to, the loaded thread is first read back, so the turn starts from
    /// every turn recorded anywhere (and a turn left open by a server that died is settled as
    /// interrupted). Refused while another server runs a turn on the thread. A thread that is
    /// not loaded, or ephemeral, needs no claim: starting the turn reports what is wrong.
    pub(crate) fn claim_turn(&self, id: &str) -> Result<Claim, ThreadError> {
        let Some(thread) = self.loaded(id) else {
            return Ok(Claim::granted());
        };
        if lock(&thread).log.is_none() {
            return Ok(Claim::granted());
        }
        let claim = self.store.claim(id)?.ok_or_else(|| {
            ThreadError::Conflict(format!(
                "thread {id} is running a turn on another server; wait for it to complete"
            ))
        })?;
        if self.store.shared() {
            self.read_back(id, &thread, Settle::Always)?;
        }
        Ok(claim)
    }

    /// Whether turn `turn_id` of loaded thread `id` runs on another server, as far as this one
    /// knows: the store is shared and the thread, as last read back, has the turn in progress
    /// while no turn of it runs here.
    pub(crate) fn runs_elsewhere(&self, id: &str, turn_id: &str) -> bool {
        if !self.store.shared() {
            return false;
        }
        let Some(thread) = self.loaded(id) else {
            return false;
        };
        let thread = lock(&thread);
        !matches!(thread.status, ThreadStatus::Active { .. })
            && thread
                .turns
                .iter()
                .any(|turn| turn.id == turn_id && turn.status == TurnStatus::InProgress)
    }

    /// Whether loaded `thread` has a turn that runs on another server: one its records leave
    /// open that does not run here.
    pub(super) fn turn_runs_elsewhere(&self, thread: &Arc<Mutex<LoadedThread>>) -> bool {
        self.store.shared() && lock(thread).runs_elsewhere()
    }

    /// Reads loaded thread `id` again from its records: a turn that runs elsewhere has moved
    /// on since it was read.
    pub(super) fn reread(
        &self,
        id: &str,
        thread: &Arc<Mutex<LoadedThread>>,
    ) -> Result<(), ThreadError> {
        self.read_back(id, thread, Settle::IfUnclaimed)
    }

    /// Whether the turns of thread `id` that its records leave open (in `turns`) were left by
    /// a server that is gone, and so read as interrupted: always in a store no other server
    /// writes to; in a shared one, unless another server holds the thread's claim (the turn is
    /// running there). The claim is only asked about when a turn is open.
    pub(super) fn left_open_turns_settle(
        &self,
        id: &str,
        turns: &[Turn],
    ) -> Result<bool, ThreadError> {
        if !self.store.shared() {
            return Ok(true);
        }
        if !turns
            .iter()
            .any(|turn| turn.status == TurnStatus::InProgress)
        {
            return Ok(false);
        }
        // Taken for a moment only, and given back in place: a turn starting on another server
        // right after is not refused for it.
        Ok(match self.store.claim(id)? {
            Some(claim) => {
                claim.release();
                true
            }
            None => false,
        })
    }

    /// In a store other servers write to, brings loaded thread `id` up to date with its
    /// records before it is read, unless a turn runs on it here (then this server is the one
    /// writing them). Another server may have run turns on it since it was loaded.
    pub(super) fn refresh_loaded(
        &self,
        id: &str,
        thread: &Arc<Mutex<LoadedThread>>,
    ) -> Result<(), ThreadError> {
        {
            let loaded = lock(thread);
            if !self.store.shared()
                || loaded.log.is_none()
                || matches!(loaded.status, ThreadStatus::Active { .. })
            {
                return Ok(());
            }
        }
        self.read_back(id, thread, Settle::IfUnclaimed)
    }

    /// Replaces the turns and summary of loaded thread `id` with what its records say; a turn
    /// they leave open is settled as interrupted and recorded so, as `settle` says.
    fn read_back(
        &self,
        id: &str,
        thread: &Arc<Mutex<LoadedThread>>,
        settle: Settle,
    ) -> Result<(), ThreadError> {
        let row = self.lookup(id)?;
        let replayed = self.read_rollout(&row)?;
        let mut turns = replayed.turns;
        let at = now();
        let settle = match settle {
            Settle::Always => true,
            Settle::IfUnclaimed => self.left_open_turns_settle(id, &turns)?,
        };
        let records = if settle {
            settle_records(&mut turns, at)
        } else {
            Vec::new()
        };
        let pending = {
            let mut loaded = lock(thread);
            loaded.turns = turns;
            loaded.summary = replayed.summary;
            if records.is_empty() {
                return Ok(());
            }
            loaded.append(&records, at)?
        };
        pending.wait()
    }
}

/// When [`Threads::read_back`] settles the turns a thread's records leave open.
#[derive(Debug, Clone, Copy)]
enum Settle {
    /// This server holds the claim: any turn left open was left by a server that is gone.
    Always,
    /// Only if no server holds the claim (see [`Threads::left_open_turns_settle`]).
    IfUnclaimed,
}
