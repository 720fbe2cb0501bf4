//! Thread sections (`threadSection/list|create|update|delete`), the threads filed in them
//! (`thread/section/move`, broadcasting `thread/section/changed`) and `thread/list` limited to
//! a section (`sectionId`, with the `section_position` sort).
//!
//! `organisation/sections.json` holds the sections in the order they were made, each with its
//! threads in the user's order; a thread's rollout records which section it is in and since
//! when (a `section` record). A new home starts with one section, "Pinned", under the id Codex
//! clients know it by.
//!
//! Deleting a section takes its threads out of it (each gets a `section` record saying none)
//! without `thread/section/changed`: clients drop the section and its threads' marks with it.

use std::collections::HashMap;

use agentwire_protocol::methods::{
    ThreadList, ThreadSectionChanged, ThreadSectionCreate, ThreadSectionDelete, ThreadSectionList,
    ThreadSectionMove, ThreadSectionUpdate,
};
use agentwire_protocol::{
    SortDirection, ThreadListParams, ThreadListResponse, ThreadSection, ThreadSectionAppearance,
    ThreadSectionChangedNotification, ThreadSectionCreateParams, ThreadSectionCreateResponse,
    ThreadSectionDeleteParams, ThreadSectionDeleteResponse, ThreadSectionListParams,
    ThreadSectionListResponse, ThreadSectionMoveParams, ThreadSectionMoveResponse,
    ThreadSectionUpdateParams, ThreadSectionUpdateResponse, ThreadSortKey,
};
use agentwire_runtime::{HandlerError, RequestContext};
use agentwire_store::error::ThreadError;
use agentwire_store::meta::{new_id, now};
use agentwire_store::organised::SectionMark;
use agentwire_store::record::RolloutRecord;
use serde::{Deserialize, Serialize};

use super::state::{VERSION, Versioned};
use super::{not_blank, page_after, run};
use crate::Engine;

/// The id of the section a new home starts with; Codex clients show it as their pinned
/// threads.
pub(crate) const PINNED_ID: &str = "01984de2-8f74-7c91-a3b2-5c5e937cf318";

/// `organisation/sections.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SectionsFile {
    version: u32,
    /// The sections in the order they were made.
    #[serde(default)]
    sections: Vec<StoredSection>,
}

impl Default for SectionsFile {
    fn default() -> Self {
        Self {
            version: VERSION,
            sections: vec![StoredSection {
                id: PINNED_ID.to_owned(),
                name: "Pinned".to_owned(),
                appearance: None,
                created_at: 0,
                threads: Vec::new(),
            }],
        }
    }
}

impl Versioned for SectionsFile {
    fn version(&self) -> u32 {
        self.version
    }
}

/// One section as the file keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredSection {
    id: String,
    name: String,
    #[serde(default)]
    appearance: Option<ThreadSectionAppearance>,
    created_at: i64,
    /// Its threads in the user's order.
    #[serde(default)]
    threads: Vec<Member>,
}

/// A thread in a section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Member {
    thread_id: String,
    /// When it entered the section (Unix seconds).
    entered_at: i64,
}

impl StoredSection {
    fn wire(&self) -> ThreadSection {
        ThreadSection::builder()
            .id(self.id.clone())
            .name(self.name.clone())
            .maybe_appearance(self.appearance.clone())
            .build()
    }
}

impl SectionsFile {
    /// Makes the file say that thread `id` is in the section `mark` names (keeping its place
    /// when it is there already, else last), or in none when `mark` is `None` or names a
    /// section that no longer exists.
    pub(crate) fn follow(&mut self, id: &str, mark: Option<&SectionMark>) {
        let target = mark.filter(|m| self.sections.iter().any(|s| s.id == m.section_id));
        for section in &mut self.sections {
            let here = target.is_some_and(|m| m.section_id == section.id);
            match section.threads.iter_mut().find(|t| t.thread_id == id) {
                Some(member) if here => {
                    member.entered_at = target.map_or(member.entered_at, |m| m.entered_at);
                }
                Some(_) => section.threads.retain(|t| t.thread_id != id),
                None if here => section.threads.push(Member {
                    thread_id: id.to_owned(),
                    entered_at: target.map_or(0, |m| m.entered_at),
                }),
                None => {}
            }
        }
    }

    /// The section `id` and the threads in it, in order.
    fn members(&self, id: &str) -> Option<Vec<String>> {
        self.sections
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.threads.iter().map(|t| t.thread_id.clone()).collect())
    }

    /// Where thread `id` is: its section and when it entered it.
    fn mark_of(&self, id: &str) -> Option<SectionMark> {
        self.sections.iter().find_map(|s| {
            s.threads
                .iter()
                .find(|t| t.thread_id == id)
                .map(|t| SectionMark {
                    section_id: s.id.clone(),
                    entered_at: t.entered_at,
                })
        })
    }

    fn find_mut(&mut self, id: &str) -> Result<&mut StoredSection, ThreadError> {
        self.sections
            .iter_mut()
            .find(|s| s.id == id)
            .ok_or_else(|| ThreadError::InvalidParams(format!("sectionId: no section {id}")))
    }
}

/// Each filed thread's section and when it entered it.
pub(crate) fn thread_sections(file: &SectionsFile) -> HashMap<String, (ThreadSection, i64)> {
    file.sections
        .iter()
        .flat_map(|s| {
            let wire = s.wire();
            s.threads
                .iter()
                .map(move |t| (t.thread_id.clone(), (wire.clone(), t.entered_at)))
        })
        .collect()
}

/// `threadSection/list`: sections in the order they were made.
pub(crate) async fn list(
    engine: &Engine,
    params: ThreadSectionListParams,
) -> Result<ThreadSectionListResponse, HandlerError> {
    let organisation = engine.organisation.clone();
    run::<ThreadSectionList, _, _>(move || {
        let sections = organisation.sections.read(|file| {
            file.sections
                .iter()
                .map(StoredSection::wire)
                .collect::<Vec<_>>()
        })?;
        let (data, next) = page_after(
            sections,
            params.cursor.as_deref(),
            params.limit,
            "section",
            |s| s.id.as_str(),
        )?;
        Ok(ThreadSectionListResponse::builder()
            .data(data)
            .maybe_next_cursor(next)
            .build())
    })
    .await
}

/// `threadSection/create`.
pub(crate) async fn create(
    engine: &Engine,
    params: ThreadSectionCreateParams,
) -> Result<ThreadSectionCreateResponse, HandlerError> {
    let organisation = engine.organisation.clone();
    run::<ThreadSectionCreate, _, _>(move || {
        not_blank("name", &params.name)?;
        let section = StoredSection {
            id: new_id(),
            name: params.name.trim().to_owned(),
            appearance: params.appearance,
            created_at: now(),
            threads: Vec::new(),
        };
        let wire = section.wire();
        organisation.sections.update(|file| {
            file.sections.push(section);
            Ok(())
        })?;
        Ok(ThreadSectionCreateResponse::builder().section(wire).build())
    })
    .await
}

/// `threadSection/update`.
pub(crate) async fn update(
    engine: &Engine,
    params: ThreadSectionUpdateParams,
) -> Result<ThreadSectionUpdateResponse, HandlerError> {
    let organisation = engine.organisation.clone();
    run::<ThreadSectionUpdate, _, _>(move || {
        not_blank("name", &params.name)?;
        let section = organisation.sections.update(|file| {
            let section = file.find_mut(&params.section_id)?;
            section.name = params.name.trim().to_owned();
            if let Some(appearance) = params.appearance {
                section.appearance = appearance;
            }
            Ok(section.wire())
        })?;
        Ok(ThreadSectionUpdateResponse::builder()
            .section(section)
            .build())
    })
    .await
}

/// `threadSection/delete`: the section goes, then each of its threads records that it is in
/// no section.
pub(crate) async fn delete(
    engine: &Engine,
    params: ThreadSectionDeleteParams,
) -> Result<ThreadSectionDeleteResponse, HandlerError> {
    let (threads, organisation) = (engine.threads.clone(), engine.organisation.clone());
    run::<ThreadSectionDelete, _, _>(move || {
        let removed = organisation.sections.update(|file| {
            let at = file
                .sections
                .iter()
                .position(|s| s.id == params.section_id)
                .ok_or_else(|| {
                    ThreadError::InvalidParams(format!(
                        "sectionId: no section {}",
                        params.section_id
                    ))
                })?;
            Ok(file.sections.remove(at))
        })?;
        for member in removed.threads {
            let id = member.thread_id;
            let cleared = threads.organise(&id, |organised| {
                if organised.section.is_none() {
                    return Ok(((), None));
                }
                organised.section = None;
                Ok(((), Some(RolloutRecord::Section { section: None })))
            });
            if let Err(error) = cleared {
                tracing::warn!(thread = %id, %error, "thread of a deleted section not updated");
            }
        }
        Ok(ThreadSectionDeleteResponse::builder().build())
    })
    .await
}

/// `thread/section/move`: broadcasts `thread/section/changed`.
pub(crate) async fn move_thread(
    engine: &Engine,
    context: RequestContext,
    params: ThreadSectionMoveParams,
) -> Result<ThreadSectionMoveResponse, HandlerError> {
    let (threads, organisation) = (engine.threads.clone(), engine.organisation.clone());
    run::<ThreadSectionMove, _, _>(move || {
        let id = params.thread_id;
        if threads.standing(&id)?.is_none() {
            return Err(ThreadError::NotFound(id));
        }
        let target = match &params.section_id {
            None => None,
            Some(section_id) => {
                let (members, current) = organisation
                    .sections
                    .read(|file| (file.members(section_id), file.mark_of(&id)))?;
                let members = members.ok_or_else(|| {
                    ThreadError::InvalidParams(format!("sectionId: no section {section_id}"))
                })?;
                if let Some(before) = &params.before_thread_id {
                    if *before == id {
                        return Err(ThreadError::InvalidParams(format!(
                            "beforeThreadId: thread {id} cannot be moved before itself"
                        )));
                    }
                    if !members.contains(before) {
                        return Err(ThreadError::InvalidParams(format!(
                            "beforeThreadId: thread {before} is not in section {section_id}"
                        )));
                    }
                }
                // Moving within its section keeps the time the thread entered it.
                Some(match current {
                    Some(mark) if mark.section_id == *section_id => mark,
                    _ => SectionMark {
                        section_id: section_id.clone(),
                        entered_at: now(),
                    },
                })
            }
        };
        let recorded = target.clone();
        threads.organise(&id, |organised| {
            if organised.section == recorded {
                return Ok(((), None));
            }
            organised.section = recorded.clone();
            Ok(((), Some(RolloutRecord::Section { section: recorded })))
        })?;
        organisation.sections.update(|file| {
            file.follow(&id, None);
            if let Some(mark) = &target {
                let before = params.before_thread_id.as_deref();
                let section = file.find_mut(&mark.section_id)?;
                let at = before
                    .and_then(|b| section.threads.iter().position(|t| t.thread_id == b))
                    .unwrap_or(section.threads.len());
                section.threads.insert(
                    at,
                    Member {
                        thread_id: id.clone(),
                        entered_at: mark.entered_at,
                    },
                );
            }
            Ok(())
        })?;
        let hub = context.peer.hub().clone();
        let notification = ThreadSectionChangedNotification::builder()
            .thread_id(id)
            .maybe_section_id(target.map(|m| m.section_id))
            .build();
        context.after_response(move || hub.broadcast::<ThreadSectionChanged>(&notification));
        Ok(ThreadSectionMoveResponse::builder().build())
    })
    .await
}

/// Whether `thread/list` with `params` is limited to a section (or sorted by section
/// position), so that [`list_threads`] answers it.
pub(crate) fn by_section(params: &ThreadListParams) -> bool {
    params.section_id.is_some() || params.sort_key == Some(ThreadSortKey::SectionPosition)
}

/// `thread/list` limited to the section `sectionId`: by the usual sort keys through the index,
/// or in the section's own order (`section_position`, ascending unless asked otherwise),
/// paged by thread id. An unknown section lists nothing; `sectionId: null` lists the threads
/// in no section.
pub(crate) async fn list_threads(
    engine: &Engine,
    params: ThreadListParams,
) -> Result<ThreadListResponse, HandlerError> {
    let (threads, organisation) = (engine.threads.clone(), engine.organisation.clone());
    run::<ThreadList, _, _>(move || {
        let by_position = params.sort_key == Some(ThreadSortKey::SectionPosition);
        let section_id = match params.section_id.clone() {
            Some(Some(section_id)) => section_id,
            Some(None) if !by_position => {
                let filed = organisation.sections.read(|file| {
                    file.sections
                        .iter()
                        .flat_map(|s| s.threads.iter().map(|t| t.thread_id.clone()))
                        .collect::<Vec<_>>()
                })?;
                return threads.list_among(params, None, &filed);
            }
            _ => {
                return Err(ThreadError::InvalidParams(
                    "sortKey: section_position needs a sectionId naming a section".to_owned(),
                ));
            }
        };
        let Some(members) = organisation
            .sections
            .read(|file| file.members(&section_id))?
        else {
            return Ok(ThreadListResponse::builder().build());
        };
        if !by_position {
            return threads.list_among(params, Some(&members), &[]);
        }
        // Every thread of the section that passes the other filters, then the section's order.
        let mut all = Vec::new();
        let mut query = params.clone();
        query.sort_key = Some(ThreadSortKey::CreatedAt);
        query.sort_direction = None;
        query.cursor = None;
        query.limit = Some(u32::MAX);
        loop {
            let page = threads.list_among(query.clone(), Some(&members), &[])?;
            all.extend(page.data);
            match page.next_cursor {
                Some(next) => query.cursor = Some(next),
                None => break,
            }
        }
        let position: HashMap<&str, usize> = members
            .iter()
            .enumerate()
            .map(|(at, id)| (id.as_str(), at))
            .collect();
        all.sort_by_key(|t| position.get(t.id.as_str()).copied().unwrap_or(usize::MAX));
        if params.sort_direction == Some(SortDirection::Desc) {
            all.reverse();
        }
        let (data, next) = page_after(
            all,
            params.cursor.as_deref(),
            params.limit.or(Some(25)),
            "thread",
            |t| t.id.as_str(),
        )?;
        // The page before this one: the same cursor, read the other way.
        let backwards = data.first().map(|t| t.id.clone());
        Ok(ThreadListResponse::builder()
            .data(data)
            .maybe_next_cursor(next)
            .maybe_backwards_cursor(backwards)
            .build())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(section: &str, at: i64) -> SectionMark {
        SectionMark {
            section_id: section.to_owned(),
            entered_at: at,
        }
    }

    #[test]
    fn a_new_home_has_the_pinned_section() {
        let file = SectionsFile::default();
        assert_eq!(file.sections[0].id, PINNED_ID);
        assert_eq!(file.sections[0].name, "Pinned");
    }

    #[test]
    fn following_a_rollout_keeps_a_place_moves_a_thread_and_drops_unknown_sections() {
        let mut file = SectionsFile::default();
        file.sections.push(StoredSection {
            id: "s".into(),
            name: "S".into(),
            appearance: None,
            created_at: 1,
            threads: Vec::new(),
        });
        file.follow("a", Some(&mark("s", 5)));
        file.follow("b", Some(&mark("s", 6)));
        file.follow("a", Some(&mark("s", 5)));
        assert_eq!(file.members("s"), Some(vec!["a".into(), "b".into()]));
        file.follow("a", Some(&mark(PINNED_ID, 7)));
        assert_eq!(file.members("s"), Some(vec!["b".into()]));
        assert_eq!(file.mark_of("a"), Some(mark(PINNED_ID, 7)));
        file.follow("b", Some(&mark("gone", 8)));
        assert_eq!(file.mark_of("b"), None);
        let marks = thread_sections(&file);
        assert_eq!(
            marks.get("a").map(|(s, at)| (s.name.as_str(), *at)),
            Some(("Pinned", 7))
        );
    }
}
