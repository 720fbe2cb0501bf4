//! Thread attachments (`thread/attachment/add|list|remove`, broadcasting
//! `thread/attachment/updated`) and the reverse lookup (`thread/attachmentOwner/list`).
//!
//! A thread's attachments are rollout records of the thread; `organisation/attachment_owners.json`
//! lists, for each attachment type and key, the threads holding one, in the order they took
//! it. The owner list leaves out threads that no longer exist, and reads whether each is
//! archived from the index.

use agentwire_protocol::methods::{
    ThreadAttachmentAdd, ThreadAttachmentList, ThreadAttachmentOwnerList, ThreadAttachmentRemove,
    ThreadAttachmentUpdated,
};
use agentwire_protocol::{
    ThreadAttachment, ThreadAttachmentAddOutcome, ThreadAttachmentAddParams,
    ThreadAttachmentAddResponse, ThreadAttachmentListParams, ThreadAttachmentListResponse,
    ThreadAttachmentOperation, ThreadAttachmentOwner, ThreadAttachmentOwnerListParams,
    ThreadAttachmentOwnerListResponse, ThreadAttachmentRemoveParams,
    ThreadAttachmentRemoveResponse, ThreadAttachmentUpdatedNotification,
};
use agentwire_runtime::{HandlerError, RequestContext};
use agentwire_store::meta::{new_id, now};
use agentwire_store::record::RolloutRecord;
use serde::{Deserialize, Serialize};

use super::state::{VERSION, Versioned};
use super::{not_blank, page_after, run};
use crate::Engine;

/// Longest attachment type or key accepted, in bytes.
const MAX_NAME_BYTES: usize = 4 * 1024;

/// `organisation/attachment_owners.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OwnersFile {
    version: u32,
    #[serde(default)]
    owners: Vec<Owners>,
}

impl Default for OwnersFile {
    fn default() -> Self {
        Self {
            version: VERSION,
            owners: Vec::new(),
        }
    }
}

impl Versioned for OwnersFile {
    fn version(&self) -> u32 {
        self.version
    }
}

/// The threads holding an attachment of one type and key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Owners {
    attachment_type: String,
    identity_key: String,
    /// In the order they took it.
    threads: Vec<String>,
}

impl OwnersFile {
    /// Makes the file say that thread `id` holds exactly `attachments`.
    pub(crate) fn hold(&mut self, id: &str, attachments: &[ThreadAttachment]) {
        for owners in &mut self.owners {
            let holds = attachments.iter().any(|a| {
                a.attachment_type == owners.attachment_type && a.identity_key == owners.identity_key
            });
            let listed = owners.threads.iter().any(|t| t == id);
            if listed && !holds {
                owners.threads.retain(|t| t != id);
            }
        }
        for attachment in attachments {
            self.take(id, &attachment.attachment_type, &attachment.identity_key);
        }
        self.owners.retain(|o| !o.threads.is_empty());
    }

    /// Lists thread `id` among the holders of (`kind`, `key`), last, unless it is there.
    fn take(&mut self, id: &str, kind: &str, key: &str) {
        match self
            .owners
            .iter_mut()
            .find(|o| o.attachment_type == kind && o.identity_key == key)
        {
            Some(owners) => {
                if !owners.threads.iter().any(|t| t == id) {
                    owners.threads.push(id.to_owned());
                }
            }
            None => self.owners.push(Owners {
                attachment_type: kind.to_owned(),
                identity_key: key.to_owned(),
                threads: vec![id.to_owned()],
            }),
        }
    }

    /// Takes thread `id` off the holders of (`kind`, `key`).
    fn give_up(&mut self, id: &str, kind: &str, key: &str) {
        for owners in &mut self.owners {
            if owners.attachment_type == kind && owners.identity_key == key {
                owners.threads.retain(|t| t != id);
            }
        }
        self.owners.retain(|o| !o.threads.is_empty());
    }

    /// The holders of (`kind`, `key`).
    fn holders(&self, kind: &str, key: &str) -> Vec<String> {
        self.owners
            .iter()
            .find(|o| o.attachment_type == kind && o.identity_key == key)
            .map(|o| o.threads.clone())
            .unwrap_or_default()
    }
}

/// Refuses an empty or oversized type or key.
fn check_name(field: &str, value: &str) -> Result<(), agentwire_store::error::ThreadError> {
    not_blank(field, value)?;
    if value.len() > MAX_NAME_BYTES {
        return Err(agentwire_store::error::ThreadError::InvalidParams(format!(
            "{field}: longer than {MAX_NAME_BYTES} bytes"
        )));
    }
    Ok(())
}

/// Sends `thread/attachment/updated` once the request is answered.
fn updated(
    context: &RequestContext,
    thread_id: String,
    attachment: &ThreadAttachment,
    operation: ThreadAttachmentOperation,
) {
    let hub = context.peer.hub().clone();
    let notification = ThreadAttachmentUpdatedNotification::builder()
        .attachment_id(attachment.id.clone())
        .attachment_type(attachment.attachment_type.clone())
        .identity_key(attachment.identity_key.clone())
        .operation(operation)
        .thread_id(thread_id)
        .build();
    context.after_response(move || hub.broadcast::<ThreadAttachmentUpdated>(&notification));
}

/// `thread/attachment/add`: broadcasts `thread/attachment/updated` when the attachment is
/// new.
pub(crate) async fn add(
    engine: &Engine,
    context: RequestContext,
    params: ThreadAttachmentAddParams,
) -> Result<ThreadAttachmentAddResponse, HandlerError> {
    let (threads, organisation) = (engine.threads.clone(), engine.organisation.clone());
    run::<ThreadAttachmentAdd, _, _>(move || {
        check_name("attachmentType", &params.attachment_type)?;
        check_name("identityKey", &params.identity_key)?;
        let id = params.thread_id;
        let (attachment, created) = threads.organise(&id, |organised| {
            if let Some(existing) = organised.attachments.iter().find(|a| {
                a.attachment_type == params.attachment_type && a.identity_key == params.identity_key
            }) {
                return Ok(((existing.clone(), false), None));
            }
            let attachment = ThreadAttachment::builder()
                .attachment_type(params.attachment_type)
                .created_at(now())
                .id(new_id())
                .identity_key(params.identity_key)
                .payload(params.payload)
                .build();
            let record = RolloutRecord::AttachmentAdded {
                attachment: attachment.clone(),
            };
            agentwire_store::replay::apply_organised(organised, &record);
            Ok(((attachment, true), Some(record)))
        })?;
        if created {
            organisation.owners.update(|file| {
                file.take(&id, &attachment.attachment_type, &attachment.identity_key);
                Ok(())
            })?;
            updated(
                &context,
                id,
                &attachment,
                ThreadAttachmentOperation::Created,
            );
        }
        let outcome = if created {
            ThreadAttachmentAddOutcome::Created
        } else {
            ThreadAttachmentAddOutcome::Existing
        };
        Ok(ThreadAttachmentAddResponse::builder()
            .attachment(attachment)
            .outcome(outcome)
            .build())
    })
    .await
}

/// `thread/attachment/list`: the thread's attachments, oldest first, paged by id.
pub(crate) async fn list(
    engine: &Engine,
    params: ThreadAttachmentListParams,
) -> Result<ThreadAttachmentListResponse, HandlerError> {
    let (threads, organisation) = (engine.threads.clone(), engine.organisation.clone());
    run::<ThreadAttachmentList, _, _>(move || {
        let organised = threads.organised(&params.thread_id)?;
        organisation.reconcile(&params.thread_id, &organised);
        let (data, next) = page_after(
            organised.attachments,
            params.cursor.as_deref(),
            params.limit,
            "attachment",
            |a| a.id.as_str(),
        )?;
        Ok(ThreadAttachmentListResponse::builder()
            .data(data)
            .maybe_next_cursor(next)
            .build())
    })
    .await
}

/// `thread/attachment/remove`: broadcasts `thread/attachment/updated` when the thread had it.
pub(crate) async fn remove(
    engine: &Engine,
    context: RequestContext,
    params: ThreadAttachmentRemoveParams,
) -> Result<ThreadAttachmentRemoveResponse, HandlerError> {
    let (threads, organisation) = (engine.threads.clone(), engine.organisation.clone());
    run::<ThreadAttachmentRemove, _, _>(move || {
        let id = params.thread_id;
        let removed = threads.organise(&id, |organised| {
            let Some(existing) = organised.attachments.iter().find(|a| {
                a.attachment_type == params.attachment_type && a.identity_key == params.identity_key
            }) else {
                return Ok((None, None));
            };
            let existing = existing.clone();
            let record = RolloutRecord::AttachmentRemoved {
                attachment_type: params.attachment_type,
                identity_key: params.identity_key,
            };
            agentwire_store::replay::apply_organised(organised, &record);
            Ok((Some(existing), Some(record)))
        })?;
        if let Some(attachment) = removed {
            organisation.owners.update(|file| {
                file.give_up(&id, &attachment.attachment_type, &attachment.identity_key);
                Ok(())
            })?;
            updated(
                &context,
                id,
                &attachment,
                ThreadAttachmentOperation::Deleted,
            );
        }
        Ok(ThreadAttachmentRemoveResponse::builder().build())
    })
    .await
}

/// `thread/attachmentOwner/list`: the threads holding an attachment of the type and key, in
/// the order they took it, paged by thread id.
pub(crate) async fn owners(
    engine: &Engine,
    params: ThreadAttachmentOwnerListParams,
) -> Result<ThreadAttachmentOwnerListResponse, HandlerError> {
    let (threads, organisation) = (engine.threads.clone(), engine.organisation.clone());
    run::<ThreadAttachmentOwnerList, _, _>(move || {
        let holders = organisation
            .owners
            .read(|file| file.holders(&params.attachment_type, &params.identity_key))?;
        let mut found = Vec::with_capacity(holders.len());
        for id in holders {
            let Some(standing) = threads.standing(&id)? else {
                continue;
            };
            if params
                .archived
                .is_none_or(|archived| archived == standing.archived)
            {
                found.push(
                    ThreadAttachmentOwner::builder()
                        .archived(standing.archived)
                        .thread_id(id)
                        .build(),
                );
            }
        }
        let (data, next) = page_after(
            found,
            params.cursor.as_deref(),
            params.limit,
            "thread",
            |o| o.thread_id.as_str(),
        )?;
        Ok(ThreadAttachmentOwnerListResponse::builder()
            .data(data)
            .maybe_next_cursor(next)
            .build())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attachment(kind: &str, key: &str) -> ThreadAttachment {
        ThreadAttachment::builder()
            .attachment_type(kind)
            .identity_key(key)
            .id(format!("{kind}-{key}"))
            .created_at(1)
            .payload(serde_json::Value::Null)
            .build()
    }

    #[test]
    fn holders_follow_what_each_thread_holds() {
        let mut file = OwnersFile::default();
        file.take("t1", "pr", "1");
        file.take("t2", "pr", "1");
        file.take("t1", "pr", "1");
        assert_eq!(file.holders("pr", "1"), ["t1", "t2"]);
        file.hold("t1", &[attachment("issue", "9")]);
        assert_eq!(file.holders("pr", "1"), ["t2"]);
        assert_eq!(file.holders("issue", "9"), ["t1"]);
        file.give_up("t2", "pr", "1");
        assert!(file.holders("pr", "1").is_empty());
        assert_eq!(file.owners.len(), 1, "empty entries are dropped");
    }
}
