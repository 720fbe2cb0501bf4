//! Which server runs turns on a thread: claims (see [`super::store::ThreadStore::claim`]), and
//! what a loaded
//! thread learns from the store before a turn when other servers write to it too.

use std::sync::{Arc, Mutex};

use agentwire_protocol::ThreadStatus;

use super::error::ThreadError;
use super::meta::now;
use super::rollout::settle_records;
use super::store::Claim;
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
            self.read_back(id, &thread, true)?;
        }
        Ok(claim)
    }

    /// Whether a turn that thread `id`'s records leave open was left by a server that is gone
    /// (and so reads as interrupted): always in a store no other server writes to; in a shared
    /// one, unless another server holds the thread's claim (the turn is running there).
    pub(super) fn left_open_turns_settle(&self, id: &str) -> Result<bool, ThreadError> {
        if !self.store.shared() {
            return Ok(true);
        }
        Ok(self.store.claim(id)?.is_some())
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
        let settle = self.left_open_turns_settle(id)?;
        self.read_back(id, thread, settle)
    }

    /// Replaces the turns and summary of loaded thread `id` with what its records say; with
    /// `settle`, a turn they leave open is settled as interrupted and recorded so.
    fn read_back(
        &self,
        id: &str,
        thread: &Arc<Mutex<LoadedThread>>,
        settle: bool,
    ) -> Result<(), ThreadError> {
        let row = self.lookup(id)?;
        let replayed = self.read_rollout(&row)?;
        let mut turns = replayed.turns;
        let at = now();
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
