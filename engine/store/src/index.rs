//! The thread index: an embedded SQLite database (`state.sqlite`) that answers `thread/list`
//! without reading any rollout.
//!
//! The index is a cache. The rollouts are the truth: at start-up the index is checked
//! (`PRAGMA quick_check`), thrown away and rebuilt if it is missing, unreadable, corrupt or of
//! another schema version, and then reconciled with the files on disk — every rollout whose
//! length or modification time differs from what the index recorded is read again, and rows
//! whose file is gone are dropped. Each write to a rollout is followed by an update of its row,
//! so the index is in step while the server runs; an update lost to a crash is repaired by the
//! next start's reconciliation. The database runs in WAL mode with `synchronous=NORMAL`.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentwire_protocol::{SessionSource, SubAgentSource};
use rusqlite::config::DbConfig;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use crate::cursor::SortColumn;
use crate::error::ThreadError;
use crate::meta::{ThreadMeta, ThreadSummary};
use crate::page_cache::PageCache;
use crate::paths::{Layout, is_plain_relative};
use crate::positions;
use crate::replay::replay;
use crate::stamp::FileStamp;

/// Bumped whenever the table layout changes; an index of another version is rebuilt.
const SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE threads (
    id TEXT PRIMARY KEY NOT NULL,
    rel_path TEXT NOT NULL,
    archived INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    cwd TEXT NOT NULL,
    model_provider TEXT NOT NULL,
    source_kind TEXT NOT NULL,
    name TEXT,
    preview TEXT NOT NULL,
    search TEXT NOT NULL,
    meta TEXT NOT NULL,
    file_len INTEGER NOT NULL,
    file_mtime INTEGER NOT NULL
) STRICT;
CREATE INDEX threads_by_created ON threads (archived, created_at, id);
CREATE INDEX threads_by_updated ON threads (archived, updated_at, id);
";

const COLUMNS: &str =
    "id, rel_path, archived, updated_at, name, preview, meta, file_len, file_mtime";

/// One row: a persisted thread's summary and where its rollout is.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexRow {
    /// The thread's summary as of the row's last write.
    pub summary: ThreadSummary,
    /// Path of the rollout relative to its root (`sessions/` or `archived_sessions/`).
    pub relative: PathBuf,
    /// Whether the rollout is in the archive (`archived_sessions/`).
    pub archived: bool,
    /// The rollout's length and modification time when the row was written.
    pub stamp: FileStamp,
}

/// One page request, already checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageQuery {
    /// List archived threads instead of live ones.
    pub archived: bool,
    /// The key to sort by (`None`: the update time).
    pub column: Option<SortColumn>,
    /// Newest first.
    pub descending: bool,
    /// Start strictly after this (key value, id).
    pub after: Option<(i64, String)>,
    /// Source kinds (see `source_kind`) to keep; empty keeps all.
    pub source_kinds: Vec<&'static str>,
    /// Working directories to keep; empty keeps all.
    pub cwds: Vec<String>,
    /// Model providers to keep; empty keeps all.
    pub providers: Vec<String>,
    /// Lower-cased text that the name or preview must contain.
    pub search: Option<String>,
    /// Only these thread ids (`None`: no such filter).
    pub included: Option<Vec<String>>,
    /// Thread ids to leave out.
    pub excluded: Vec<String>,
    /// At most this many rows.
    pub limit: usize,
}

/// The index database.
pub struct Index {
    conn: Connection,
    /// Pages served lately; cleared by every write.
    pages: RefCell<PageCache>,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index").finish_non_exhaustive()
    }
}

impl Index {
    /// Opens the index at `path`, rebuilding it from scratch when it is unusable, and
    /// reconciles it with the rollouts of `layout`.
    pub(crate) fn open(path: &Path, layout: &Layout) -> rusqlite::Result<Self> {
        let mut index = match Self::open_checked(path) {
            Ok(index) => index,
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "thread index unusable; rebuilding it from the rollouts");
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    let mut file = path.as_os_str().to_owned();
                    file.push(suffix);
                    let _ = std::fs::remove_file(PathBuf::from(file));
                }
                Self::open_checked(path)?
            }
        };
        index.reconcile(layout)?;
        Ok(index)
    }

    /// An index that lives only in memory (tests).
    #[cfg(test)]
    pub(crate) fn in_memory() -> rusqlite::Result<Self> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(SCHEMA)?;
        conn.execute_batch(positions::SCHEMA)?;
        Ok(Self {
            conn,
            pages: RefCell::new(PageCache::new(None)),
        })
    }

    fn open_checked(path: &Path) -> rusqlite::Result<Self> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let check: String = conn.query_row("PRAGMA quick_check", [], |row| row.get(0))?;
        if check != "ok" {
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
                Some(format!("quick_check: {check}")),
            ));
        }
        let _: String = conn.query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        if version != SCHEMA_VERSION {
            if version != 0 {
                tracing::info!(
                    found = version,
                    expected = SCHEMA_VERSION,
                    "thread index of another version; rebuilding"
                );
            }
            conn.execute_batch(&format!(
                "BEGIN; DROP TABLE IF EXISTS threads; {} {SCHEMA} {} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;",
                positions::DROP,
                positions::SCHEMA,
            ))?;
        }
        conn.set_prepared_statement_cache_capacity(64);
        // Keep cached statements compiled: without the query planner stability guarantee,
        // binding a new value to a parameter that meets an indexed column makes SQLite
        // recompile the statement on every run (the bundled build has STAT4).
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        Ok(Self {
            conn,
            pages: RefCell::new(PageCache::new(Some(PathBuf::from(wal)))),
        })
    }

    /// Brings the index in line with the rollout files: reads new and changed files, drops
    /// rows of files that are gone. Returns how many files were read.
    pub(crate) fn reconcile(&mut self, layout: &Layout) -> rusqlite::Result<usize> {
        self.pages.get_mut().clear();
        let read = self.reconcile_rows(layout);
        self.pages.get_mut().clear();
        read
    }

    /// [`Index::reconcile`] without the page cache.
    fn reconcile_rows(&mut self, layout: &Layout) -> rusqlite::Result<usize> {
        let mut known: HashMap<(bool, String), FileStamp> = HashMap::new();
        {
            let mut statement = self
                .conn
                .prepare("SELECT archived, rel_path, file_len, file_mtime FROM threads")?;
            let rows = statement.query_map([], |row| {
                Ok((
                    (row.get::<_, bool>(0)?, row.get::<_, String>(1)?),
                    FileStamp {
                        len: u64::try_from(row.get::<_, i64>(2)?).unwrap_or(0),
                        mtime_ns: row.get(3)?,
                    },
                ))
            })?;
            for row in rows {
                let (key, stamp) = row?;
                known.insert(key, stamp);
            }
        }
        let transaction = self.conn.transaction()?;
        let mut seen = HashSet::new();
        let mut read = 0;
        for archived in [false, true] {
            for (relative, metadata) in layout.scan(archived) {
                let key = (archived, relative.to_string_lossy().into_owned());
                let Ok(stamp) = FileStamp::of(&metadata) else {
                    continue;
                };
                let unchanged = known.get(&key) == Some(&stamp);
                seen.insert(key);
                if unchanged {
                    continue;
                }
                read += 1;
                let path = layout.rollout(archived, &relative);
                let replayed = layout
                    .open_reader(&path)
                    .map_err(|error| error.to_string())
                    .and_then(|(file, _)| replay(file, &path).map_err(|e| e.to_string()));
                match replayed {
                    Ok(replayed) => upsert_with(
                        &transaction,
                        &IndexRow {
                            summary: replayed.summary,
                            relative,
                            archived,
                            stamp,
                        },
                    )?,
                    Err(error) => {
                        // A row from before the file went bad must not keep listing a thread
                        // that cannot be read.
                        tracing::warn!(path = %path.display(), error, "rollout not indexed");
                        transaction.execute(
                            "DELETE FROM threads WHERE archived = ?1 AND rel_path = ?2",
                            params![archived, relative.to_string_lossy()],
                        )?;
                    }
                }
            }
        }
        for key in known.keys().filter(|k| !seen.contains(*k)) {
            transaction.execute(
                "DELETE FROM threads WHERE archived = ?1 AND rel_path = ?2",
                params![key.0, key.1],
            )?;
        }
        positions::forget_unlisted(&transaction)?;
        transaction.commit()?;
        if read > 0 {
            tracing::info!(files = read, "thread index updated from rollouts");
        }
        Ok(read)
    }

    /// Gives the row of the rollout at (`archived`, `relative`) stamp `after` instead of
    /// `before`: its file was swapped for another form of the same records (compressed, see
    /// [`crate::compress`]). A row stamped otherwise is stale and left for the next
    /// reconciliation to read.
    pub(crate) fn restamp(
        &self,
        archived: bool,
        relative: &Path,
        before: FileStamp,
        after: FileStamp,
    ) -> rusqlite::Result<()> {
        let len = |stamp: FileStamp| i64::try_from(stamp.len).unwrap_or(i64::MAX);
        self.conn.execute(
            "UPDATE threads SET file_len = ?1, file_mtime = ?2 \
             WHERE archived = ?3 AND rel_path = ?4 AND file_len = ?5 AND file_mtime = ?6",
            params![
                len(after),
                after.mtime_ns,
                archived,
                relative.to_string_lossy(),
                len(before),
                before.mtime_ns
            ],
        )?;
        self.pages.borrow_mut().clear();
        Ok(())
    }

    /// Drops the row of thread `id` (its rollout is gone or cannot be read).
    pub(crate) fn remove(&self, id: &str) -> rusqlite::Result<()> {
        self.conn
            .execute("DELETE FROM threads WHERE id = ?1", [id])?;
        positions::forget(&self.conn, id)?;
        self.pages.borrow_mut().clear();
        Ok(())
    }

    /// The database, for the position tables (see [`positions`]).
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Brings the positions of thread `id` up to date with its rollout `file` at `path`.
    pub fn catch_up(
        &mut self,
        id: &str,
        file: &std::fs::File,
        path: &Path,
    ) -> rusqlite::Result<()> {
        positions::catch_up(&mut self.conn, id, file, path)
    }

    /// Writes `row` and brings its thread's turn and item positions up to date with its
    /// rollout at `path`. Failures are logged, not returned: the rollout is durable already,
    /// and the next start's reconciliation repairs the index.
    pub(crate) fn record(&mut self, row: &IndexRow, path: &Path) {
        let id = &row.summary.meta.id;
        if let Err(error) = self.upsert(row) {
            tracing::warn!(id, %error, "thread index not updated");
            return;
        }
        self.refresh_positions(id, path);
    }

    /// Brings the turn and item positions of thread `id` (rollout at `path`) up to date. A
    /// failure is logged: the next page request tries again.
    pub(crate) fn refresh_positions(&mut self, id: &str, path: &Path) {
        let refreshed = std::fs::File::open(path)
            .map_err(ThreadError::from)
            .and_then(|file| Ok(self.catch_up(id, &file, path)?));
        if let Err(error) = refreshed {
            tracing::warn!(id, %error, "thread positions not updated");
        }
    }

    /// Inserts or replaces the row of `row.summary.meta.id`.
    pub(crate) fn upsert(&self, row: &IndexRow) -> rusqlite::Result<()> {
        let written = upsert_with(&self.conn, row);
        self.pages.borrow_mut().clear();
        written
    }

    /// The row of thread `id`.
    pub(crate) fn get(&self, id: &str) -> rusqlite::Result<Option<IndexRow>> {
        let mut statement = self
            .conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM threads WHERE id = ?1"))?;
        statement
            .query_row([id], read_row)
            .optional()
            .map(Option::flatten)
    }

    /// One page of rows in the requested order; `query.limit` rows at most. A page asked for
    /// again before the index changed is answered from memory (see [`PageCache`]).
    pub(crate) fn page(&self, query: &PageQuery) -> rusqlite::Result<Arc<[IndexRow]>> {
        let mut pages = self.pages.borrow_mut();
        if let Some(rows) = pages.get(query) {
            return Ok(rows);
        }
        let before = pages.before_read();
        let rows: Arc<[IndexRow]> = self.read_page(query)?.into();
        pages.put(query, &rows, before);
        Ok(rows)
    }

    /// The page answering `query` if it is kept in memory and still current; never reads the
    /// database.
    pub(crate) fn kept_page(&self, query: &PageQuery) -> Option<Arc<[IndexRow]>> {
        self.pages.borrow_mut().get(query)
    }

    /// [`Index::page`] from the database.
    fn read_page(&self, query: &PageQuery) -> rusqlite::Result<Vec<IndexRow>> {
        read_page(&self.conn, query)
    }
}

/// A read-only connection to the index at `path`, for pages read while the writer holds the
/// index (in WAL mode a reader sees the last commit and never waits for the writer).
pub(crate) fn open_reader(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.set_prepared_statement_cache_capacity(64);
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(conn)
}

/// One page of rows for `query` read on `conn` (see [`Index::page`]).
pub(crate) fn read_page(conn: &Connection, query: &PageQuery) -> rusqlite::Result<Vec<IndexRow>> {
    let column = query.column.unwrap_or(SortColumn::CreatedAt).column();
    let mut sql = format!("SELECT {COLUMNS} FROM threads WHERE archived = ?");
    let mut values: Vec<Value> = vec![Value::Integer(i64::from(query.archived))];
    let mut any_of = |sql: &mut String, column: &str, items: Vec<Value>, negate: bool| {
        let marks = vec!["?"; items.len()].join(", ");
        let not = if negate { "NOT " } else { "" };
        sql.push_str(&format!(" AND {column} {not}IN ({marks})"));
        values.extend(items);
    };
    let text = |items: &[String]| items.iter().cloned().map(Value::Text).collect::<Vec<_>>();
    if !query.source_kinds.is_empty() {
        let kinds = query
            .source_kinds
            .iter()
            .map(|k| Value::Text((*k).to_owned()))
            .collect();
        any_of(&mut sql, "source_kind", kinds, false);
    }
    if !query.cwds.is_empty() {
        any_of(&mut sql, "cwd", text(&query.cwds), false);
    }
    if !query.providers.is_empty() {
        any_of(&mut sql, "model_provider", text(&query.providers), false);
    }
    if let Some(included) = &query.included {
        any_of(&mut sql, "id", text(included), false);
    }
    if !query.excluded.is_empty() {
        any_of(&mut sql, "id", text(&query.excluded), true);
    }
    if let Some(search) = &query.search {
        sql.push_str(" AND instr(search, ?) > 0");
        values.push(Value::Text(search.clone()));
    }
    let (order, compare) = if query.descending {
        ("DESC", "<")
    } else {
        ("ASC", ">")
    };
    if let Some((value, id)) = &query.after {
        sql.push_str(&format!(" AND ({column}, id) {compare} (?, ?)"));
        values.push(Value::Integer(*value));
        values.push(Value::Text(id.clone()));
    }
    sql.push_str(&format!(" ORDER BY {column} {order}, id {order} LIMIT ?"));
    values.push(Value::Integer(
        i64::try_from(query.limit).unwrap_or(i64::MAX),
    ));
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params_from_iter(values), read_row)?;
    let mut page = Vec::with_capacity(query.limit);
    for row in rows {
        if let Some(row) = row? {
            page.push(row);
        }
    }
    Ok(page)
}

fn upsert_with(conn: &Connection, row: &IndexRow) -> rusqlite::Result<()> {
    let summary = &row.summary;
    let meta = serde_json::to_string(&summary.meta)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    let search = format!(
        "{}\n{}",
        summary.name.as_deref().unwrap_or(""),
        summary.preview
    )
    .to_lowercase();
    let mut statement = conn.prepare_cached(
        "INSERT OR REPLACE INTO threads (id, rel_path, archived, created_at, updated_at, cwd, \
         model_provider, source_kind, name, preview, search, meta, file_len, file_mtime) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?;
    statement.execute(params![
        summary.meta.id,
        row.relative.to_string_lossy(),
        row.archived,
        summary.meta.created_at,
        summary.updated_at,
        summary.meta.settings.cwd,
        summary.meta.settings.model_provider,
        source_kind(&summary.meta.source),
        summary.name,
        summary.preview,
        search,
        meta,
        i64::try_from(row.stamp.len).unwrap_or(i64::MAX),
        row.stamp.mtime_ns,
    ])?;
    Ok(())
}

/// Reads a row; `None` (with a warning) for a row whose stored metadata no longer parses or
/// whose path is not a plain relative path.
fn read_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Option<IndexRow>> {
    let listed = Listed {
        id: row.get(0)?,
        archived: row.get(2)?,
        updated_at: row.get(3)?,
        name: row.get(4)?,
        preview: row.get(5)?,
        meta: row.get(6)?,
    };
    let relative = PathBuf::from(row.get::<_, String>(1)?);
    if !is_plain_relative(&relative) {
        tracing::warn!(id = listed.id, path = %relative.display(), "index row with an unsafe path skipped");
        return Ok(None);
    }
    let stamp = FileStamp {
        len: u64::try_from(row.get::<_, i64>(7)?).unwrap_or(0),
        mtime_ns: row.get(8)?,
    };
    Ok(listed.into_row(relative, stamp))
}

/// The list columns of an index row as a store reads them back (SQLite here, or PostgreSQL).
pub(crate) struct Listed {
    pub id: String,
    pub archived: bool,
    pub updated_at: i64,
    pub name: Option<String>,
    pub preview: String,
    /// The thread's [`ThreadMeta`] as JSON.
    pub meta: String,
}

impl Listed {
    /// The row these columns describe, its records at `relative` (empty where there is no file)
    /// as of `stamp`; `None`, logged, when the metadata does not parse.
    pub(crate) fn into_row(self, relative: PathBuf, stamp: FileStamp) -> Option<IndexRow> {
        let meta = match serde_json::from_str::<ThreadMeta>(&self.meta) {
            Ok(meta) => meta,
            Err(error) => {
                tracing::warn!(id = self.id, %error, "index row with unreadable metadata skipped");
                return None;
            }
        };
        Some(IndexRow {
            summary: ThreadSummary {
                meta,
                name: self.name,
                preview: self.preview,
                updated_at: self.updated_at,
                ephemeral: false,
                token_usage: None,
                goal: None,
                read_mark: None,
                organised: Default::default(),
                memory_mode: None,
                injected: Default::default(),
                environment_blocks: Default::default(),
            },
            relative,
            archived: self.archived,
            stamp,
        })
    }
}

/// The `thread/list` source kind of a thread's source, as stored in the index.
pub(crate) fn source_kind(source: &SessionSource) -> &'static str {
    match source {
        SessionSource::Cli => "cli",
        SessionSource::Vscode => "vscode",
        SessionSource::Exec => "exec",
        SessionSource::AppServer => "appServer",
        SessionSource::Unknown => "unknown",
        SessionSource::Custom(_) => "custom",
        SessionSource::SubAgent(SubAgentSource::Review) => "subAgentReview",
        SessionSource::SubAgent(SubAgentSource::Compact) => "subAgentCompact",
        SessionSource::SubAgent(SubAgentSource::ThreadSpawn { .. }) => "subAgentThreadSpawn",
        SessionSource::SubAgent(_) => "subAgentOther",
        _ => "unknown",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::meta::ThreadSettings;
    use agentwire_config::defaults::ThreadDefaults;

    /// A row for thread `id` created at `created_at`, named `name`.
    pub(crate) fn row(id: &str, created_at: i64, name: Option<&str>) -> IndexRow {
        let meta = ThreadMeta {
            id: id.to_owned(),
            session_id: id.to_owned(),
            created_at,
            cli_version: "0.1.0".to_owned(),
            source: SessionSource::Vscode,
            thread_source: None,
            originator: None,
            service_name: None,
            forked_from_id: None,
            parent_thread_id: None,
            agent_nickname: None,
            agent_role: None,
            git_info: None,
            history_mode: Default::default(),
            settings: ThreadSettings::new(&ThreadDefaults::default(), Default::default()),
        };
        let mut summary = ThreadSummary::new(meta, false);
        summary.name = name.map(str::to_owned);
        IndexRow {
            summary,
            relative: PathBuf::from(format!("2026/01/01/rollout-{id}.jsonl")),
            archived: false,
            stamp: FileStamp::default(),
        }
    }

    fn ids(rows: &[IndexRow]) -> Vec<&str> {
        rows.iter().map(|r| r.summary.meta.id.as_str()).collect()
    }

    #[test]
    fn pages_follow_the_key_then_the_id() {
        let index = Index::in_memory().expect("index opens");
        for (id, at) in [("a", 1), ("b", 2), ("c", 2), ("d", 3)] {
            index.upsert(&row(id, at, None)).expect("row stored");
        }
        let mut query = PageQuery {
            descending: true,
            limit: 2,
            ..PageQuery::default()
        };
        assert_eq!(ids(&index.page(&query).expect("page")), ["d", "c"]);
        query.after = Some((2, "c".to_owned()));
        assert_eq!(ids(&index.page(&query).expect("page")), ["b", "a"]);
        query.descending = false;
        assert_eq!(ids(&index.page(&query).expect("page")), ["d"]);
    }

    #[test]
    fn search_matches_name_or_preview_case_insensitively() {
        let index = Index::in_memory().expect("index opens");
        index
            .upsert(&row("a", 1, Some("Fix the BUILD")))
            .expect("row stored");
        let mut with_preview = row("b", 2, None);
        with_preview.summary.preview = "Ünïcode question".to_owned();
        index.upsert(&with_preview).expect("row stored");
        let query = |term: &str| PageQuery {
            search: Some(term.to_lowercase()),
            limit: 10,
            ..PageQuery::default()
        };
        assert_eq!(ids(&index.page(&query("build")).expect("page")), ["a"]);
        assert_eq!(ids(&index.page(&query("ÜNÏ")).expect("page")), ["b"]);
        assert!(index.page(&query("nothing")).expect("page").is_empty());
    }

    #[test]
    fn kept_pages_follow_every_write_here_and_elsewhere() {
        let dir = std::env::temp_dir().join(format!(
            "agentwire-engine-{}-page-cache",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let path = dir.join("state.sqlite");
        let index = Index::open_checked(&path).expect("index opens");
        let query = PageQuery {
            descending: true,
            limit: 10,
            ..PageQuery::default()
        };
        index.upsert(&row("a", 1, None)).expect("row stored");
        assert_eq!(ids(&index.page(&query).expect("page")), ["a"]);
        // Served again from memory: the very same rows.
        let first = index.page(&query).expect("page");
        assert!(Arc::ptr_eq(&first, &index.page(&query).expect("page")));

        // A write through this index drops the kept page.
        index.upsert(&row("b", 2, None)).expect("row stored");
        assert_eq!(ids(&index.page(&query).expect("page")), ["b", "a"]);
        let mut renamed = row("a", 1, Some("renamed"));
        renamed.summary.updated_at = 9;
        index.upsert(&renamed).expect("row stored");
        assert_eq!(
            index.page(&query).expect("page")[1].summary.name.as_deref(),
            Some("renamed")
        );

        // So does a commit by another connection (another process), once the look at the
        // write-ahead log that stands for a while has expired.
        let settle = || std::thread::sleep(crate::page_cache::RECHECK * 2);
        let other = Connection::open(&path).expect("second connection");
        upsert_with(&other, &row("c", 3, None)).expect("row stored elsewhere");
        settle();
        assert_eq!(ids(&index.page(&query).expect("page")), ["c", "b", "a"]);
        other
            .execute("DELETE FROM threads WHERE id = 'b'", [])
            .expect("row removed elsewhere");
        settle();
        assert_eq!(ids(&index.page(&query).expect("page")), ["c", "a"]);
        drop(other);
        drop(index);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn rows_round_trip() {
        let index = Index::in_memory().expect("index opens");
        let original = row("x", 5, Some("n"));
        index.upsert(&original).expect("row stored");
        assert_eq!(index.get("x").expect("read"), Some(original));
        assert_eq!(index.get("y").expect("read"), None);
    }
}
