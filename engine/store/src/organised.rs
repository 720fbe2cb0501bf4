//! What a client files on a thread beside its history: its attachments
//! (`thread/attachment/*`), the user input queued for it (`thread/queue/*`) and the section it
//! is in (`thread/section/move`). The requests themselves are served by the engine's
//! `organisation`; this module keeps the records' side (they are replayed by
//! [`crate::replay::apply_organised`]).
//!
//! Each change is a rollout record, so it persists in whichever store holds the thread and
//! comes back when the thread is read again:
//!
//! ```text
//! {"type":"attachmentAdded","attachment":{"id":…,"attachmentType":…,"identityKey":…,"payload":…,"createdAt":…}}
//! {"type":"attachmentRemoved","attachmentType":…,"identityKey":…}
//! {"type":"queue","queue":[{"id":…,"clientUserMessageId":…,"input":[…],"responsesapiClientMetadata":…},…]}
//! {"type":"section","section":{"sectionId":…,"enteredAt":…}}          (`null`: in none)
//! ```
//!
//! A `queue` record holds the whole queue as it is after the change (a queue is short). None
//! of them is a change of the thread's conversation, so none moves its update time (or its
//! place in `thread/list`). Older builds skip these records.
//!
//! A change reads the thread's current state and appends its record under the loaded
//! thread's lock, so a queued input the server takes to start a turn and one a client adds at
//! the same moment never overwrite each other.

use agentwire_protocol::{QueuedSubmission, ThreadAttachment};
use serde::{Deserialize, Serialize};

/// A thread's attachments, queue and section, as its rollout records them (the index does not
/// hold them).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Organised {
    /// Attachments in the order they were added; at most one per type and key.
    pub attachments: Vec<ThreadAttachment>,
    /// Queued input, next to start first.
    pub queue: Vec<QueuedSubmission>,
    /// The section the thread is in, and since when; `None` when in none.
    pub section: Option<SectionMark>,
}

/// The section a thread is in (a `section` record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SectionMark {
    /// The section's id.
    pub section_id: String,
    /// When the thread entered it (Unix seconds).
    pub entered_at: i64,
}
