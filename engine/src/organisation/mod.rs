//! Organising threads: projects (`project/*`), sections (`threadSection/*`,
//! `thread/section/move` and the `sectionId` filter and `section_position` sort of
//! `thread/list`), attachments (`thread/attachment/*`, `thread/attachmentOwner/list`) and
//! queued user input (`thread/queue/*`).
//!
//! What belongs to one thread is recorded in its rollout ([`crate::threads::organised`]): its
//! attachments, its queue and the section it is in. What spans threads is server-wide state
//! in three files under `$AGENTWIRE_HOME/organisation/` ([`state`]): `projects.json` (the
//! projects in the user's order, each with its threads), `sections.json` (the sections, each
//! with its threads in the user's order) and `attachment_owners.json` (which threads hold each
//! attachment, for the reverse lookup). Clients see a thread's `projectId`, `section` and
//! `sectionEnteredAt` in `thread/read`, `thread/list`, `thread/resume` and `thread/unarchive`.
//!
//! A change to one thread is written to its rollout first, then to the server-wide file. The
//! rollout is the thread's word: when a crash falls between the two, the file is brought back
//! in line the next time the thread's attachments or queue are read ([`Organisation::reconcile`]).
//! These files live in one server's home: servers sharing a PostgreSQL store do not share them.
//!
//! Module map: [`state`] (the files), [`projects`], [`sections`], [`attachments`], [`queue`].

pub(crate) mod attachments;
pub(crate) mod projects;
pub(crate) mod queue;
pub(crate) mod sections;
pub(crate) mod state;

use std::collections::HashMap;
use std::path::Path;

use agentwire_protocol::Thread;
use agentwire_protocol::method::Method;
use agentwire_runtime::HandlerError;
use agentwire_store::error::ThreadError;
use agentwire_store::organised::Organised;
use state::State;

/// Page size when a list request sends no `limit`.
const DEFAULT_PAGE: u32 = 100;
/// Largest page served; a larger `limit` is cut down to it.
const MAX_PAGE: u32 = 500;

/// The server-wide side of organising threads.
#[derive(Debug)]
pub(crate) struct Organisation {
    projects: State<projects::ProjectsFile>,
    sections: State<sections::SectionsFile>,
    owners: State<attachments::OwnersFile>,
    drains: queue::Drains,
}

impl Organisation {
    /// The state kept under `home` (read now; files that do not exist yet read as empty).
    pub(crate) fn open(home: &Path) -> Self {
        let dir = home.join("organisation");
        Self {
            projects: State::open(dir.join("projects.json")),
            sections: State::open(dir.join("sections.json")),
            owners: State::open(dir.join("attachment_owners.json")),
            drains: queue::Drains::default(),
        }
    }

    /// Fills in the project and section of `threads` as this server has filed them. A state
    /// file that does not read leaves them as they are (the failure is logged when the file
    /// is read).
    pub(crate) fn decorate(&self, threads: &mut [Thread]) {
        if threads.is_empty() {
            return;
        }
        let projects: HashMap<String, String> = self
            .projects
            .read(projects::thread_projects)
            .unwrap_or_default();
        let sections = self
            .sections
            .read(sections::thread_sections)
            .unwrap_or_default();
        for thread in threads {
            thread.project_id = projects.get(&thread.id).cloned();
            let (section, entered) = match sections.get(&thread.id) {
                Some((section, entered)) => (Some(section.clone()), Some(*entered)),
                None => (None, None),
            };
            thread.section = section;
            thread.section_entered_at = entered;
        }
    }

    /// Brings the server-wide files in line with what thread `id`'s rollout says of it
    /// (`organised`): the threads holding each attachment, and the section it is in. Logs and
    /// goes on when a file cannot be written.
    pub(crate) fn reconcile(&self, id: &str, organised: &Organised) {
        let owners = self.owners.update(|file| {
            file.hold(id, &organised.attachments);
            Ok(())
        });
        let section = self.sections.update(|file| {
            file.follow(id, organised.section.as_ref());
            Ok(())
        });
        for result in [owners, section] {
            if let Err(error) = result {
                tracing::warn!(thread = id, %error, "organisation state not reconciled");
            }
        }
    }

    /// Takes thread `id`, which was deleted, out of every project, section and attachment
    /// owner list.
    pub(crate) fn forget(&self, id: &str) {
        let results = [
            self.projects.update(|file| {
                file.forget(id);
                Ok(())
            }),
            self.sections.update(|file| {
                file.follow(id, None);
                Ok(())
            }),
            self.owners.update(|file| {
                file.hold(id, &[]);
                Ok(())
            }),
        ];
        for result in results {
            if let Err(error) = result {
                tracing::warn!(thread = id, %error, "deleted thread not taken out of organisation state");
            }
        }
    }
}

/// Runs `work` (disk work answering for `M`) on tokio's blocking pool; its failure is mapped
/// to `M`'s error codes.
pub(crate) async fn run<M, T, W>(work: W) -> Result<T, HandlerError>
where
    M: Method,
    T: Send + 'static,
    W: FnOnce() -> Result<T, ThreadError> + Send + 'static,
{
    crate::pool::blocking::<M, T, _>(move || work().map_err(|e| e.into_handler(M::NAME))).await
}

/// The page size for `limit`.
fn page_size(limit: Option<u32>) -> usize {
    limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE) as usize
}

/// One page of `items` after the item whose key `key` gives is `cursor` (from the start when
/// there is no cursor), with the cursor of the next page. A cursor naming no item is refused:
/// `what` names the items in the error.
fn page_after<T>(
    items: Vec<T>,
    cursor: Option<&str>,
    limit: Option<u32>,
    what: &str,
    key: impl Fn(&T) -> &str,
) -> Result<(Vec<T>, Option<String>), ThreadError> {
    let start = match cursor {
        None => 0,
        Some(cursor) => match items.iter().position(|item| key(item) == cursor) {
            Some(at) => at + 1,
            None => {
                return Err(ThreadError::InvalidParams(format!(
                    "cursor: {what} {cursor} is gone; list again from the start"
                )));
            }
        },
    };
    let size = page_size(limit);
    let mut page: Vec<T> = items.into_iter().skip(start).collect();
    let next = (page.len() > size).then(|| key(&page[size - 1]).to_owned());
    page.truncate(size);
    Ok((page, next))
}

/// Refuses an empty (or blank) `value` of member `field`.
fn not_blank(field: &str, value: &str) -> Result<(), ThreadError> {
    if value.trim().is_empty() {
        return Err(ThreadError::InvalidParams(format!(
            "{field}: must not be empty"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_the_cursor_and_refuse_one_that_names_nothing() {
        let items: Vec<String> = (0..5).map(|i| format!("i{i}")).collect();
        let (page, next) =
            page_after(items.clone(), None, Some(2), "item", |s| s.as_str()).expect("page");
        assert_eq!(page, ["i0", "i1"]);
        assert_eq!(next.as_deref(), Some("i1"));
        let (page, next) = page_after(items.clone(), next.as_deref(), Some(3), "item", |s| {
            s.as_str()
        })
        .expect("page");
        assert_eq!(page, ["i2", "i3", "i4"]);
        assert_eq!(next, None);
        let error =
            page_after(items, Some("gone"), None, "item", |s| s.as_str()).expect_err("refused");
        assert!(error.to_string().contains("item gone"), "{error}");
    }
}
