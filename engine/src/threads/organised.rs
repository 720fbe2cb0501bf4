//! What a client files on a thread beside its history: its attachments
//! (`thread/attachment/*`), the user input queued for it (`thread/queue/*`) and the section it
//! is in (`thread/section/move`). The requests themselves are served by
//! [`crate::organisation`]; this module keeps the thread's side.
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

use agentwire_protocol::{QueuedSubmission, ThreadAttachment, TurnStatus};
use serde::{Deserialize, Serialize};

use super::error::ThreadError;
use super::rollout::RolloutRecord;
use super::{Threads, lock};

/// A thread's attachments, queue and section, as its rollout records them (the index does not
/// hold them).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Organised {
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
pub(crate) struct SectionMark {
    /// The section's id.
    pub section_id: String,
    /// When the thread entered it (Unix seconds).
    pub entered_at: i64,
}

/// What the server knows of a thread when it files or lists it: whether it is archived and
/// when it last changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Standing {
    /// Whether the thread is in the archive.
    pub archived: bool,
    /// Unix seconds of its last change (its `recencyAt`).
    pub updated_at: i64,
}

/// Makes `organised` say what `record` says (for the records of this module).
pub(crate) fn apply(organised: &mut Organised, record: &RolloutRecord) {
    match record {
        RolloutRecord::AttachmentAdded { attachment } => {
            organised.attachments.retain(|a| {
                a.attachment_type != attachment.attachment_type
                    || a.identity_key != attachment.identity_key
            });
            organised.attachments.push(attachment.clone());
        }
        RolloutRecord::AttachmentRemoved {
            attachment_type,
            identity_key,
        } => organised
            .attachments
            .retain(|a| a.attachment_type != *attachment_type || a.identity_key != *identity_key),
        RolloutRecord::Queue { queue } => organised.queue = queue.clone(),
        RolloutRecord::Section { section } => organised.section = section.clone(),
        _ => {}
    }
}

impl Threads {
    /// The attachments, queue and section of thread `id` (loaded or not).
    pub(crate) fn organised(&self, id: &str) -> Result<Organised, ThreadError> {
        if let Some(thread) = self.loaded(id) {
            return Ok(lock(&thread).summary.organised.clone());
        }
        let row = self.lookup(id)?;
        Ok(self.read_rollout(&row)?.summary.organised)
    }

    /// Whether thread `id` is archived and when it last changed; `None` when there is no such
    /// thread. Reads the index only.
    pub(crate) fn standing(&self, id: &str) -> Result<Option<Standing>, ThreadError> {
        if let Some(thread) = self.loaded(id) {
            let thread = lock(&thread);
            return Ok(Some(Standing {
                archived: false,
                updated_at: thread.summary.updated_at,
            }));
        }
        Ok(self.store.get(id)?.map(|row| Standing {
            archived: row.archived,
            updated_at: row.summary.updated_at,
        }))
    }

    /// Whether thread `id` is loaded and its last turn (if any) completed normally: a thread
    /// whose last turn was interrupted or failed waits for the user before its queue moves on.
    pub(crate) fn ready_for_queue(&self, id: &str) -> bool {
        self.loaded(id).is_some_and(|thread| {
            let thread = lock(&thread);
            matches!(thread.status, agentwire_protocol::ThreadStatus::Idle)
                && thread
                    .turns
                    .last()
                    .is_none_or(|turn| turn.status == TurnStatus::Completed)
        })
    }

    /// Changes what is filed on thread `id`: `change` gets its current state and answers the
    /// result and, when something changed, the record that says so (which it has already
    /// applied to the state it got). The record is appended and durable before this returns.
    pub(crate) fn organise<R>(
        &self,
        id: &str,
        change: impl FnOnce(&mut Organised) -> Result<(R, Option<RolloutRecord>), ThreadError>,
    ) -> Result<R, ThreadError> {
        if let Some(thread) = self.loaded(id) {
            let (answer, pending) = {
                let mut thread = lock(&thread);
                let mut organised = thread.summary.organised.clone();
                let (answer, record) = change(&mut organised)?;
                let Some(record) = record else {
                    return Ok(answer);
                };
                thread.summary.organised = organised;
                let at = thread.summary.updated_at;
                (answer, thread.append(&[record], at)?)
            };
            pending.wait()?;
            return Ok(answer);
        }
        let mut row = self.lookup(id)?;
        let replayed = self.read_rollout(&row)?;
        let mut organised = replayed.summary.organised.clone();
        let (answer, record) = change(&mut organised)?;
        let Some(record) = record else {
            return Ok(answer);
        };
        let at = replayed.summary.updated_at;
        self.append_stored(&mut row, replayed, record, at, |summary| {
            summary.organised = organised;
        })?;
        Ok(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attachment(kind: &str, key: &str, id: &str) -> ThreadAttachment {
        ThreadAttachment::builder()
            .attachment_type(kind)
            .identity_key(key)
            .id(id)
            .created_at(1)
            .payload(serde_json::json!({"n": id}))
            .build()
    }

    #[test]
    fn records_replay_to_the_attachments_queue_and_section_they_name() {
        let mut organised = Organised::default();
        for record in [
            RolloutRecord::AttachmentAdded {
                attachment: attachment("pr", "1", "a"),
            },
            RolloutRecord::AttachmentAdded {
                attachment: attachment("issue", "1", "b"),
            },
            RolloutRecord::AttachmentRemoved {
                attachment_type: "pr".into(),
                identity_key: "1".into(),
            },
            RolloutRecord::Section {
                section: Some(SectionMark {
                    section_id: "s".into(),
                    entered_at: 7,
                }),
            },
        ] {
            apply(&mut organised, &record);
        }
        assert_eq!(organised.attachments, vec![attachment("issue", "1", "b")]);
        assert_eq!(
            organised.section.as_ref().map(|s| s.section_id.as_str()),
            Some("s")
        );
        apply(&mut organised, &RolloutRecord::Section { section: None });
        assert_eq!(organised.section, None);
    }

    #[test]
    fn the_records_read_back_from_their_lines() {
        let line = r#"{"type":"section","section":{"sectionId":"s","enteredAt":3}}"#;
        let record: RolloutRecord = serde_json::from_str(line).expect("reads");
        assert_eq!(
            record,
            RolloutRecord::Section {
                section: Some(SectionMark {
                    section_id: "s".into(),
                    entered_at: 3
                })
            }
        );
        assert_eq!(serde_json::to_string(&record).expect("writes"), line);
        let removed = RolloutRecord::AttachmentRemoved {
            attachment_type: "pr".into(),
            identity_key: "k".into(),
        };
        assert_eq!(
            serde_json::to_string(&removed).expect("writes"),
            r#"{"type":"attachmentRemoved","attachmentType":"pr","identityKey":"k"}"#
        );
        assert_eq!(record.at(), None);
    }
}
