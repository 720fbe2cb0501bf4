//! The requests that only look: `thread/read`, `thread/list` and `thread/loaded/list`.
//!
//! `thread/list` is answered from the index alone (one prepared, keyset-paginated query; no
//! rollout is read), so it stays cheap however many threads there are.

use agentwire_protocol::{
    SortDirection, ThreadListCwdFilter, ThreadListParams, ThreadListResponse,
    ThreadLoadedListParams, ThreadLoadedListResponse, ThreadReadParams, ThreadReadResponse,
    ThreadSortKey, ThreadSourceKind, ThreadStatus,
};
use agentwire_store::cursor::{Cursor, SortColumn};
use agentwire_store::error::ThreadError;
use agentwire_store::index::PageQuery;
use agentwire_store::record::settle_dangling;
use agentwire_support::lock;

use super::Threads;

/// Page size when the client sends no `limit`.
const DEFAULT_PAGE: u32 = 25;
/// Largest page served; a larger `limit` is cut down to it.
const MAX_PAGE: u32 = 500;
/// Most ids accepted in `includedThreadIds` / `excludedThreadIds`.
const MAX_ID_FILTER: usize = 100;

impl Threads {
    /// `thread/read`: a thread's metadata and, with `includeTurns`, its turns. Does not load
    /// the thread.
    pub(crate) fn read(&self, params: ThreadReadParams) -> Result<ThreadReadResponse, ThreadError> {
        let include_turns = params.include_turns.unwrap_or(false);
        if let Some(thread) = self.loaded(&params.thread_id) {
            self.refresh_loaded(&params.thread_id, &thread)?;
            return Ok(ThreadReadResponse::builder()
                .thread(lock(&thread).to_thread(include_turns))
                .build());
        }
        let row = self.lookup(&params.thread_id)?;
        let path = self.path_of(&row);
        let thread = if include_turns {
            let mut replayed = self.read_rollout(&row)?;
            if self.left_open_turns_settle(&params.thread_id, &replayed.turns)? {
                settle_dangling(&mut replayed.turns);
            }
            replayed
                .summary
                .to_thread(ThreadStatus::NotLoaded, path, replayed.turns)
        } else {
            row.summary
                .to_thread(ThreadStatus::NotLoaded, path, Vec::new())
        };
        Ok(ThreadReadResponse::builder().thread(thread).build())
    }

    /// The thread whose rollout is the file at `path` (which must lie under the home), read
    /// from that file: metadata only, no turns. For `getConversationSummary` by path.
    pub(crate) fn read_rollout_at(
        &self,
        path: &std::path::Path,
    ) -> Result<agentwire_protocol::Thread, ThreadError> {
        let Some(files) = self.store.files() else {
            return Err(ThreadError::NotFound(path.display().to_string()));
        };
        let (reader, _) = files.layout().open_reader(path)?;
        let replayed = agentwire_store::replay::replay(reader, path)?;
        let status = self.status_of(&replayed.summary.meta.id);
        Ok(replayed.summary.to_thread(
            status,
            Some(path.to_string_lossy().into_owned()),
            Vec::new(),
        ))
    }

    /// `thread/list`: one page of persisted threads from the index.
    pub(crate) fn list(&self, params: ThreadListParams) -> Result<ThreadListResponse, ThreadError> {
        match PagePlan::of(params)? {
            None => Ok(ThreadListResponse::builder().build()),
            Some(plan) => {
                let page = self.store.page(&plan.query)?;
                Ok(self.list_answer(&plan, &page))
            }
        }
    }

    /// `thread/list` limited to the threads `among` (when given) and leaving out those of
    /// `except`: a section filter the caller resolved to its threads (see
    /// `organisation::sections`), with every other filter and the sort and paging of
    /// [`Threads::list`].
    pub(crate) fn list_among(
        &self,
        mut params: ThreadListParams,
        among: Option<&[String]>,
        except: &[String],
    ) -> Result<ThreadListResponse, ThreadError> {
        params.section_id = None;
        if params.sort_key == Some(ThreadSortKey::SectionPosition) {
            params.sort_key = None;
        }
        let asked = params.included_thread_ids.take();
        if asked.as_ref().is_some_and(|ids| ids.len() > MAX_ID_FILTER) {
            return Err(ThreadError::InvalidParams(format!(
                "includedThreadIds: more than {MAX_ID_FILTER} ids"
            )));
        }
        let Some(mut plan) = PagePlan::of(params)? else {
            return Ok(ThreadListResponse::builder().build());
        };
        plan.query.included = match (among, asked) {
            (Some(among), asked) => Some(
                among
                    .iter()
                    .filter(|id| asked.as_ref().is_none_or(|asked| asked.contains(id)))
                    .cloned()
                    .collect(),
            ),
            (None, asked) => asked,
        };
        plan.query.excluded.extend(except.iter().cloned());
        let page = self.store.page(&plan.query)?;
        Ok(self.list_answer(&plan, &page))
    }

    /// `thread/list` answered from memory when its page is kept (see
    /// [`agentwire_store::page_cache`]) and the index is not busy: no SQLite, no disk, so it can be
    /// answered in place. `None` when the page must be read ([`Threads::list`]).
    pub(crate) fn list_kept(
        &self,
        params: &ThreadListParams,
    ) -> Option<Result<ThreadListResponse, ThreadError>> {
        let plan = match PagePlan::of(params.clone()) {
            Ok(Some(plan)) => plan,
            Ok(None) => return Some(Ok(ThreadListResponse::builder().build())),
            Err(error) => return Some(Err(error)),
        };
        let page = self.store.kept_page(&plan.query)?;
        Some(Ok(self.list_answer(&plan, &page)))
    }

    /// The answer made of `page`, the rows read for `plan` (one more than its limit when there
    /// is a next page).
    fn list_answer(
        &self,
        plan: &PagePlan,
        page: &[agentwire_store::index::IndexRow],
    ) -> ThreadListResponse {
        let (column, limit) = (plan.column, plan.limit);
        let more = page.len() > limit;
        let rows = &page[..page.len().min(limit)];
        let position = |row: &agentwire_store::index::IndexRow| {
            let value = match column {
                SortColumn::CreatedAt => row.summary.meta.created_at,
                SortColumn::UpdatedAt => row.summary.updated_at,
            };
            Cursor {
                column,
                value,
                id: row.summary.meta.id.clone(),
            }
            .encode()
        };
        let next_cursor = if more {
            rows.last().map(position)
        } else {
            None
        };
        let backwards_cursor = rows.first().map(position);
        let data = rows
            .iter()
            .map(|row| {
                row.summary.to_thread(
                    self.status_of(&row.summary.meta.id),
                    self.path_of(row),
                    Vec::new(),
                )
            })
            .collect();
        ThreadListResponse::builder()
            .data(data)
            .maybe_next_cursor(next_cursor)
            .maybe_backwards_cursor(backwards_cursor)
            .build()
    }

    /// `thread/loaded/list`: the ids of loaded threads in id (creation) order, paged.
    pub(crate) fn loaded_list(&self, params: ThreadLoadedListParams) -> ThreadLoadedListResponse {
        let mut ids: Vec<String> = lock(&self.loaded).keys().cloned().collect();
        ids.sort_unstable();
        if let Some(cursor) = &params.cursor {
            ids.retain(|id| id > cursor);
        }
        let limit = params.limit.map_or(usize::MAX, |l| l.max(1) as usize);
        let next_cursor = (ids.len() > limit).then(|| ids[limit - 1].clone());
        ids.truncate(limit);
        ThreadLoadedListResponse::builder()
            .data(ids)
            .maybe_next_cursor(next_cursor)
            .build()
    }
}

impl agentwire_files::fs::Roots for Threads {
    /// The directories `fs/*` may use because of the loaded threads: each one's working
    /// directory, and its `writableRoots` when its sandbox is `workspaceWrite`.
    fn loaded_roots(&self) -> Vec<String> {
        let loaded: Vec<_> = lock(&self.loaded).values().cloned().collect();
        let mut roots = Vec::new();
        for thread in loaded {
            let thread = lock(&thread);
            let settings = &thread.summary.meta.settings;
            roots.push(settings.cwd.clone());
            if let agentwire_protocol::SandboxPolicy::WorkspaceWrite { writable_roots, .. } =
                &settings.sandbox
            {
                roots.extend(writable_roots.iter().map(|root| root.0.clone()));
            }
        }
        roots
    }
}

/// The index source kinds a `sourceKinds` filter selects; absent or empty selects the
/// interactive kinds (`cli`, `vscode`).
/// The page of the index a `thread/list` asks for, checked.
struct PagePlan {
    query: PageQuery,
    column: SortColumn,
    /// Rows answered at most (the query reads one more, to know whether there is a next page).
    limit: usize,
}

impl PagePlan {
    /// The page to read for `params`; `None` for a listing that is empty whatever the index
    /// holds (a section not yet resolved to its threads).
    fn of(params: ThreadListParams) -> Result<Option<Self>, ThreadError> {
        let column = match params.sort_key {
            None | Some(ThreadSortKey::CreatedAt) | Some(ThreadSortKey::SectionPosition) => {
                SortColumn::CreatedAt
            }
            Some(ThreadSortKey::UpdatedAt) | Some(ThreadSortKey::RecencyAt) => {
                SortColumn::UpdatedAt
            }
            Some(_) => SortColumn::CreatedAt,
        };
        let descending = params.sort_direction != Some(SortDirection::Asc);
        let limit = params.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE) as usize;
        let after = match &params.cursor {
            None => None,
            Some(text) => {
                let cursor = Cursor::decode(text, column)
                    .map_err(|e| ThreadError::InvalidParams(format!("cursor: {e}")))?;
                Some((cursor.value, cursor.id))
            }
        };
        if params.originators.as_ref().is_some_and(|o| !o.is_empty()) {
            return Err(ThreadError::InvalidParams(
                "originators: filtering by originator is not supported by a local server"
                    .to_owned(),
            ));
        }
        for (name, ids) in [
            ("includedThreadIds", &params.included_thread_ids),
            ("excludedThreadIds", &params.excluded_thread_ids),
        ] {
            if ids.as_ref().is_some_and(|ids| ids.len() > MAX_ID_FILTER) {
                return Err(ThreadError::InvalidParams(format!(
                    "{name}: more than {MAX_ID_FILTER} ids"
                )));
            }
        }
        if params.section_id.is_some() {
            // A section is resolved to its threads first (`Threads::list_among`); a plan that
            // still names one has not been, and lists nothing.
            return Ok(None);
        }
        let query = PageQuery {
            archived: params.archived.unwrap_or(false),
            column: Some(column),
            descending,
            after,
            source_kinds: source_kinds(params.source_kinds.as_deref()),
            cwds: match params.cwd {
                None => Vec::new(),
                Some(ThreadListCwdFilter::Text(cwd)) => vec![cwd],
                Some(ThreadListCwdFilter::List(cwds)) => cwds,
                Some(_) => Vec::new(),
            },
            providers: params.model_providers.unwrap_or_default(),
            search: params
                .search_term
                .filter(|t| !t.is_empty())
                .map(|t| t.to_lowercase()),
            included: params.included_thread_ids,
            excluded: params.excluded_thread_ids.unwrap_or_default(),
            limit: limit + 1,
        };
        Ok(Some(PagePlan {
            query,
            column,
            limit,
        }))
    }
}

pub(super) fn source_kinds(kinds: Option<&[ThreadSourceKind]>) -> Vec<&'static str> {
    let kinds = match kinds {
        Some(kinds) if !kinds.is_empty() => kinds,
        _ => return vec!["cli", "vscode"],
    };
    let mut names = Vec::new();
    for kind in kinds {
        names.extend_from_slice(match kind {
            ThreadSourceKind::Cli => &["cli"][..],
            ThreadSourceKind::Vscode => &["vscode"],
            ThreadSourceKind::Exec => &["exec"],
            ThreadSourceKind::AppServer => &["appServer"],
            ThreadSourceKind::SubAgent => &[
                "subAgentReview",
                "subAgentCompact",
                "subAgentThreadSpawn",
                "subAgentOther",
            ],
            ThreadSourceKind::SubAgentReview => &["subAgentReview"],
            ThreadSourceKind::SubAgentCompact => &["subAgentCompact"],
            ThreadSourceKind::SubAgentThreadSpawn => &["subAgentThreadSpawn"],
            ThreadSourceKind::SubAgentOther => &["subAgentOther"],
            ThreadSourceKind::Unknown => &["unknown"],
            _ => &["unknown"],
        });
    }
    names.sort_unstable();
    names.dedup();
    names
}
