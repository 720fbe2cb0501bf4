//! The statements of the PostgreSQL store, shared by its request paths and its committer.

use std::path::PathBuf;

use postgres::GenericClient;
use postgres::types::ToSql;

use super::db::Fault;
use crate::cursor::SortColumn;
use crate::index::{IndexRow, Listed, PageQuery, source_kind};
use crate::stamp::FileStamp;

const COLUMNS: &str = "id, archived, updated_at, name, preview, meta";

/// Writes the summary columns of `row` (inserting the thread with no records if it is new).
/// The archive flag is written only on insert: it changes through [`set_archived`] alone.
pub(super) fn write_row(client: &mut impl GenericClient, row: &IndexRow) -> Result<(), Fault> {
    let summary = &row.summary;
    let meta = serde_json::to_string(&summary.meta).map_err(|e| {
        Fault::Other(format!(
            "cannot encode the metadata of {}: {e}",
            summary.meta.id
        ))
    })?;
    let search = format!(
        "{}\n{}",
        summary.name.as_deref().unwrap_or(""),
        summary.preview
    )
    .to_lowercase();
    client.execute(
        "INSERT INTO agentwire_threads (id, archived, created_at, updated_at, cwd, model_provider, \
         source_kind, name, preview, search, meta, next_seq) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0) \
         ON CONFLICT (id) DO UPDATE SET updated_at = EXCLUDED.updated_at, cwd = EXCLUDED.cwd, \
         model_provider = EXCLUDED.model_provider, source_kind = EXCLUDED.source_kind, \
         name = EXCLUDED.name, preview = EXCLUDED.preview, search = EXCLUDED.search, \
         meta = EXCLUDED.meta",
        &[
            &summary.meta.id,
            &row.archived,
            &summary.meta.created_at,
            &summary.updated_at,
            &summary.meta.settings.cwd,
            &summary.meta.settings.model_provider,
            &source_kind(&summary.meta.source),
            &summary.name,
            &summary.preview,
            &search,
            &meta,
        ],
    )?;
    Ok(())
}

/// Appends `lines` to the records of thread `id`, after its last one. The thread's row is
/// locked for the rest of the transaction, so appends from several workers stay in order.
/// `false` when the thread is gone.
pub(super) fn append_lines(
    client: &mut impl GenericClient,
    id: &str,
    lines: &[String],
) -> Result<bool, Fault> {
    if lines.is_empty() {
        return Ok(true);
    }
    let count = i64::try_from(lines.len()).unwrap_or(i64::MAX);
    let Some(next) = client.query_opt(
        "UPDATE agentwire_threads SET next_seq = next_seq + $2 WHERE id = $1 RETURNING next_seq",
        &[&id, &count],
    )?
    else {
        return Ok(false);
    };
    let first = next.try_get::<_, i64>(0)? - count;
    client.execute(
        "INSERT INTO agentwire_records (thread_id, seq, line) \
         SELECT $1, $2 + t.ord - 1, t.line FROM unnest($3::text[]) WITH ORDINALITY AS t(line, ord)",
        &[&id, &first, &lines],
    )?;
    Ok(true)
}

/// The records of thread `id`, in order, as rollout lines; `None` when it has none.
pub(super) fn read_lines(
    client: &mut impl GenericClient,
    id: &str,
) -> Result<Option<Vec<u8>>, Fault> {
    let rows = client.query(
        "SELECT line FROM agentwire_records WHERE thread_id = $1 ORDER BY seq",
        &[&id],
    )?;
    if rows.is_empty() {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    for row in rows {
        bytes.extend_from_slice(row.try_get::<_, &str>(0)?.as_bytes());
        bytes.push(b'\n');
    }
    Ok(Some(bytes))
}

/// The row of thread `id`.
pub(super) fn get(client: &mut impl GenericClient, id: &str) -> Result<Option<IndexRow>, Fault> {
    let row = client.query_opt(
        &format!("SELECT {COLUMNS} FROM agentwire_threads WHERE id = $1"),
        &[&id],
    )?;
    Ok(match row {
        Some(row) => read_row(&row)?,
        None => None,
    })
}

/// The values bound to a statement built piece by piece.
#[derive(Default)]
struct Params(Vec<Box<dyn ToSql + Sync + Send>>);

impl Params {
    /// Binds `value`; returns its placeholder.
    fn bind(&mut self, value: impl ToSql + Sync + Send + 'static) -> String {
        self.0.push(Box::new(value));
        format!("${}", self.0.len())
    }

    /// ` AND column = ANY($n)` (or `<> ALL` when `negate`).
    fn any_of(&mut self, column: &str, items: Vec<String>, negate: bool) -> String {
        let mark = self.bind(items);
        let test = if negate { "<> ALL" } else { "= ANY" };
        format!(" AND {column} {test}({mark}::text[])")
    }

    fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.0.iter().map(|v| &**v as &(dyn ToSql + Sync)).collect()
    }
}

/// One page of rows for `query`: the same filters, order and keyset as the embedded index.
pub(super) fn page(
    client: &mut impl GenericClient,
    query: &PageQuery,
) -> Result<Vec<IndexRow>, Fault> {
    let column = query.column.unwrap_or(SortColumn::CreatedAt).column();
    let mut params = Params::default();
    let mut sql = format!(
        "SELECT {COLUMNS} FROM agentwire_threads WHERE archived = {}",
        params.bind(query.archived)
    );
    if !query.source_kinds.is_empty() {
        let kinds = query.source_kinds.iter().map(|k| (*k).to_owned()).collect();
        sql += &params.any_of("source_kind", kinds, false);
    }
    if !query.cwds.is_empty() {
        sql += &params.any_of("cwd", query.cwds.clone(), false);
    }
    if !query.providers.is_empty() {
        sql += &params.any_of("model_provider", query.providers.clone(), false);
    }
    if let Some(included) = &query.included {
        sql += &params.any_of("id", included.clone(), false);
    }
    if !query.excluded.is_empty() {
        sql += &params.any_of("id", query.excluded.clone(), true);
    }
    if let Some(search) = &query.search {
        sql += &format!(" AND strpos(search, {}) > 0", params.bind(search.clone()));
    }
    let (order, compare) = if query.descending {
        ("DESC", "<")
    } else {
        ("ASC", ">")
    };
    if let Some((value, id)) = &query.after {
        let (value, id) = (params.bind(*value), params.bind(id.clone()));
        sql += &format!(" AND ({column}, id) {compare} ({value}, {id})");
    }
    let limit = params.bind(i64::try_from(query.limit).unwrap_or(i64::MAX));
    sql += &format!(" ORDER BY {column} {order}, id {order} LIMIT {limit}");
    let rows = client.query(&sql, &params.refs())?;
    let mut page = Vec::with_capacity(rows.len());
    for row in rows {
        if let Some(row) = read_row(&row)? {
            page.push(row);
        }
    }
    Ok(page)
}

/// Marks thread `id` archived or not; `false` when it is gone.
pub(super) fn set_archived(
    client: &mut impl GenericClient,
    id: &str,
    archived: bool,
) -> Result<bool, Fault> {
    Ok(client.execute(
        "UPDATE agentwire_threads SET archived = $2 WHERE id = $1",
        &[&id, &archived],
    )? > 0)
}

/// Removes thread `id` and its records.
pub(super) fn delete(client: &mut impl GenericClient, id: &str) -> Result<(), Fault> {
    client.execute("DELETE FROM agentwire_threads WHERE id = $1", &[&id])?;
    Ok(())
}

/// Reads a row; `None` (with a warning) for a row whose stored metadata no longer parses.
fn read_row(row: &postgres::Row) -> Result<Option<IndexRow>, Fault> {
    let listed = Listed {
        id: row.try_get(0)?,
        archived: row.try_get(1)?,
        updated_at: row.try_get(2)?,
        name: row.try_get(3)?,
        preview: row.try_get(4)?,
        meta: row.try_get(5)?,
    };
    // No file: the embedded store's locator stays empty here.
    Ok(listed.into_row(PathBuf::new(), FileStamp::default()))
}
