//! The store of a server whose configured store could not be opened: every persisted-thread
//! operation fails with the reason, and ephemeral threads still work.

use std::sync::Arc;

use crate::boundary::{ThreadLog, ThreadStore};
use crate::error::ThreadError;
use crate::index::{IndexRow, PageQuery};
use crate::meta::ThreadSummary;
use crate::record::RolloutRecord;
use crate::replay::Replayed;

/// Why the store could not be opened.
#[derive(Debug)]
pub struct Unavailable(pub String);

impl Unavailable {
    fn error(&self) -> ThreadError {
        ThreadError::Storage(self.0.clone())
    }
}

impl ThreadStore for Unavailable {
    fn get(&self, _: &str) -> Result<Option<IndexRow>, ThreadError> {
        Err(self.error())
    }

    fn page(&self, _: &PageQuery) -> Result<Arc<[IndexRow]>, ThreadError> {
        Err(self.error())
    }

    fn kept_page(&self, _: &PageQuery) -> Option<Arc<[IndexRow]>> {
        None
    }

    fn forget(&self, _: &str, _: &str) {}

    fn location(&self, _: &IndexRow) -> Option<String> {
        None
    }

    fn read(&self, _: &IndexRow) -> Result<Replayed, ThreadError> {
        Err(self.error())
    }

    fn create(
        &self,
        _: &ThreadSummary,
        _: &[RolloutRecord],
    ) -> Result<Box<dyn ThreadLog>, ThreadError> {
        Err(self.error())
    }

    fn reopen(&self, _: &IndexRow, _: &Replayed) -> Result<Box<dyn ThreadLog>, ThreadError> {
        Err(self.error())
    }

    fn append(
        &self,
        _: &mut IndexRow,
        _: Replayed,
        _: &[RolloutRecord],
    ) -> Result<(), ThreadError> {
        Err(self.error())
    }

    fn set_archived(&self, _: &mut IndexRow, _: bool) -> Result<(), ThreadError> {
        Err(self.error())
    }

    fn delete(&self, _: &IndexRow) -> Result<(), ThreadError> {
        Err(self.error())
    }
}
