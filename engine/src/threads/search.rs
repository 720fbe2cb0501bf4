//! Finding text in stored threads: `thread/search` (over the threads of the store) and
//! `thread/searchOccurrences` (every place in one thread).
//!
//! `thread/search` walks the store's list index in the order asked (as `thread/list` does,
//! filters included) and keeps the threads whose name, preview or message text (the user's
//! messages, the agent's messages and plans) contains the term, compared without regard to
//! case. Name and preview are matched from the index row; the messages are read from the
//! thread's records: in memory for a loaded thread, from its rollout file in the embedded store
//! (a file that does not contain the term's bytes at all is not parsed), through the store
//! otherwise. One request looks at no more than [`MAX_LOOKED_AT`] threads and
//! [`MAX_BYTES_READ`] bytes of records: when it stops there, `nextCursor` continues after the
//! last thread it looked at, so a page may hold fewer than `limit` threads and still have a
//! next one. A caller's `cancelled` check runs between threads; `partial` is handed the matches
//! of each batch of threads as they are found.
//!
//! `thread/searchOccurrences` reads one thread's user and agent messages in order (through the
//! position tables of the index in the embedded store) and returns each occurrence of the term
//! with a snippet and the range of the match in it, counted in UTF-16 code units. Its cursor
//! names the last occurrence returned: the message's sequence number and the occurrence's
//! index in it.

use std::ops::Range;

use agentwire_protocol::{
    SortDirection, ThreadItemKind, ThreadSearchOccurrence, ThreadSearchOccurrencesParams,
    ThreadSearchOccurrencesResponse, ThreadSearchParams, ThreadSearchResponse, ThreadSearchResult,
    ThreadSearchSortKey, ThreadSearchTextRange, Turn, UserInput,
};
use agentwire_store::cursor::{Cursor, HistoryCursor, SortColumn};
use agentwire_store::error::ThreadError;
use agentwire_store::index::{IndexRow, PageQuery};
use agentwire_store::positions;
use agentwire_support::lock;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::Threads;
use super::history::{Source, memory_items, read_item};

/// Threads per page when the client sends no `limit`.
const DEFAULT_THREADS: u32 = 25;
/// Largest page of threads.
const MAX_THREADS: u32 = 100;
/// Index rows read at a time while searching.
const BATCH: usize = 50;
/// Most threads one `thread/search` request looks at.
pub(crate) const MAX_LOOKED_AT: usize = 2000;
/// Most bytes of records one `thread/search` request reads.
pub(crate) const MAX_BYTES_READ: u64 = 256 * 1024 * 1024;
/// Matches that make `thread/search/stream` send them at once.
const PARTIAL_BATCH: usize = 10;
/// How long `thread/search/stream` holds a match it found before sending it.
const PARTIAL_EVERY: std::time::Duration = std::time::Duration::from_millis(200);
/// Longest search term, in bytes (after trimming).
const MAX_TERM_BYTES: usize = 64 * 1024;
/// Occurrences per page when the client sends no `limit`.
const DEFAULT_OCCURRENCES: u32 = 50;
/// Largest page of occurrences.
const MAX_OCCURRENCES: u32 = 500;
/// Messages read at a time while looking for occurrences.
const MESSAGE_BATCH: usize = 200;
/// Characters of context kept before a match in a snippet.
const BEFORE: usize = 40;
/// Characters of context kept after a match in a snippet.
const AFTER: usize = 80;
/// Test hook: milliseconds `thread/search` waits after looking at each thread, so that a test
/// through the binary can cancel a search that is still running. Unset means no wait.
const DELAY_VAR: &str = "AGENTWIRE_TEST_SEARCH_DELAY_MS";

/// A search term, checked, with its lower-case form.
#[derive(Debug, Clone)]
pub(crate) struct Term {
    lower: Vec<char>,
    /// The lower-case term as bytes, when a rollout that holds it must hold these bytes in
    /// some case (ASCII, nothing JSON escapes).
    ascii: Option<Vec<u8>>,
}

impl Term {
    /// The term `text` (`field` names it in errors); refused when empty.
    pub(crate) fn new(text: &str, field: &str) -> Result<Self, ThreadError> {
        if text.trim().is_empty() {
            return Err(ThreadError::InvalidParams(format!(
                "{field}: must not be empty"
            )));
        }
        if text.len() > MAX_TERM_BYTES {
            return Err(ThreadError::InvalidParams(format!(
                "{field}: longer than {MAX_TERM_BYTES} bytes"
            )));
        }
        let lower: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
        let plain = text
            .bytes()
            .all(|b| b.is_ascii() && !b.is_ascii_control() && b != b'"' && b != b'\\');
        Ok(Self {
            ascii: plain.then(|| text.to_ascii_lowercase().into_bytes()),
            lower,
        })
    }

    /// The byte ranges of `text` where the term appears, in order, not overlapping.
    pub(crate) fn find_all(&self, text: &str) -> Vec<Range<usize>> {
        let mut found = Vec::new();
        let mut from = 0;
        while let Some(range) = self.find_from(text, from) {
            from = range.end.max(range.start + 1);
            found.push(range);
        }
        found
    }

    /// The first byte range of `text` where the term appears.
    pub(crate) fn find(&self, text: &str) -> Option<Range<usize>> {
        self.find_from(text, 0)
    }

    fn find_from(&self, text: &str, from: usize) -> Option<Range<usize>> {
        let first = *self.lower.first()?;
        for (start, c) in text.get(from..)?.char_indices() {
            let start = from + start;
            if !c.to_lowercase().any(|l| l == first) {
                continue;
            }
            if let Some(end) = self.matches_at(text, start) {
                return Some(start..end);
            }
        }
        None
    }

    /// Where a match starting at byte `start` of `text` ends, if one does.
    fn matches_at(&self, text: &str, start: usize) -> Option<usize> {
        let mut wanted = self.lower.iter();
        for (at, c) in text.get(start..)?.char_indices() {
            for lower in c.to_lowercase() {
                if wanted.next() != Some(&lower) {
                    return None;
                }
            }
            if wanted.as_slice().is_empty() {
                return Some(start + at + c.len_utf8());
            }
        }
        None
    }

    /// Whether `bytes` (a rollout) may hold the term: `false` only when it surely does not.
    fn may_be_in(&self, bytes: &[u8]) -> bool {
        let Some(term) = &self.ascii else {
            return true;
        };
        if term.is_empty() || term.len() > bytes.len() {
            return term.is_empty();
        }
        bytes
            .windows(term.len())
            .any(|window| window.eq_ignore_ascii_case(term))
    }
}

/// `text` around `range` (a match), cut to [`BEFORE`] and [`AFTER`] characters either side with
/// `…` where it was cut, on one line; and where the match lies in it, in UTF-16 code units.
pub(crate) fn snippet(text: &str, range: Range<usize>) -> (String, ThreadSearchTextRange) {
    let start = text[..range.start]
        .char_indices()
        .rev()
        .nth(BEFORE.saturating_sub(1))
        .map_or(0, |(at, _)| at);
    let end = text[range.end..]
        .char_indices()
        .nth(AFTER)
        .map_or(text.len(), |(at, _)| range.end + at);
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let units = |s: &str| u32::try_from(s.encode_utf16().count()).unwrap_or(u32::MAX);
    let one_line = |s: &str| s.replace(['\n', '\r', '\t'], " ");
    out.push_str(&one_line(&text[start..range.start]));
    let from = units(&out);
    out.push_str(&one_line(&text[range.clone()]));
    let to = units(&out);
    out.push_str(&one_line(&text[range.end..end]));
    if end < text.len() {
        out.push('…');
    }
    (
        out,
        ThreadSearchTextRange::builder().start(from).end(to).build(),
    )
}

/// The texts of `kind` a search looks in: a user message's text parts, an agent message, a
/// plan.
fn texts(kind: &ThreadItemKind) -> Vec<&str> {
    match kind {
        ThreadItemKind::UserMessage { content, .. } => content
            .iter()
            .filter_map(|part| match part {
                UserInput::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect(),
        ThreadItemKind::AgentMessage { text, .. } | ThreadItemKind::Plan { text, .. } => {
            vec![text.as_str()]
        }
        _ => Vec::new(),
    }
}

/// The texts of `kind` `thread/searchOccurrences` looks in: the user's and the agent's
/// messages.
fn message_texts(kind: &ThreadItemKind) -> Vec<&str> {
    match kind {
        ThreadItemKind::UserMessage { .. } | ThreadItemKind::AgentMessage { .. } => texts(kind),
        _ => Vec::new(),
    }
}

/// The snippet of the first place `term` appears in the messages of `turns`.
fn first_in_turns(term: &Term, turns: &[Turn]) -> Option<String> {
    turns.iter().flat_map(|t| &t.items).find_map(|item| {
        texts(&item.kind)
            .into_iter()
            .find_map(|text| term.find(text).map(|range| snippet(text, range).0))
    })
}

/// How far one `thread/search` request has looked.
#[derive(Debug, Default)]
struct Budget {
    threads: usize,
    bytes: u64,
}

impl Budget {
    fn spent(&self) -> bool {
        self.threads >= MAX_LOOKED_AT || self.bytes >= MAX_BYTES_READ
    }
}

impl Threads {
    /// `thread/search` (and `thread/search/stream`, whose `partial` sends what each batch of
    /// threads found). `Ok(None)` when `cancelled` said so before the search was done.
    pub(crate) fn search(
        &self,
        params: ThreadSearchParams,
        cancelled: &dyn Fn() -> bool,
        partial: &mut dyn FnMut(Vec<ThreadSearchResult>),
    ) -> Result<Option<ThreadSearchResponse>, ThreadError> {
        let term = Term::new(params.search_term.trim(), "searchTerm")?;
        let column = match params.sort_key {
            Some(ThreadSearchSortKey::UpdatedAt | ThreadSearchSortKey::RecencyAt) => {
                SortColumn::UpdatedAt
            }
            _ => SortColumn::CreatedAt,
        };
        let descending = params.sort_direction != Some(SortDirection::Asc);
        let limit = params
            .limit
            .unwrap_or(DEFAULT_THREADS)
            .clamp(1, MAX_THREADS) as usize;
        let mut after = match &params.cursor {
            None => None,
            Some(text) => {
                let cursor = Cursor::decode(text, column)
                    .map_err(|e| ThreadError::InvalidParams(format!("cursor: {e}")))?;
                Some((cursor.value, cursor.id))
            }
        };
        let delay = std::env::var(DELAY_VAR)
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map(std::time::Duration::from_millis);
        let position = |row: &IndexRow| {
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
        let mut found: Vec<(IndexRow, ThreadSearchResult)> = Vec::new();
        let mut budget = Budget::default();
        let mut last_looked_at: Option<IndexRow> = None;
        let mut cut_short = false;
        // Matches not yet handed to `partial`, and when it was last handed some.
        let mut pending = Vec::new();
        let mut flushed = std::time::Instant::now();
        'pages: loop {
            let query = PageQuery {
                archived: params.archived.unwrap_or(false),
                column: Some(column),
                descending,
                after: after.clone(),
                source_kinds: super::list::source_kinds(params.source_kinds.as_deref()),
                limit: BATCH,
                ..PageQuery::default()
            };
            let rows = self.store.page(&query)?;
            for row in rows.iter() {
                if cancelled() {
                    return Ok(None);
                }
                if found.len() > limit {
                    break 'pages;
                }
                if budget.spent() {
                    cut_short = true;
                    break 'pages;
                }
                budget.threads += 1;
                after = Some(match column {
                    SortColumn::CreatedAt => {
                        (row.summary.meta.created_at, row.summary.meta.id.clone())
                    }
                    SortColumn::UpdatedAt => (row.summary.updated_at, row.summary.meta.id.clone()),
                });
                last_looked_at = Some(row.clone());
                if row.summary.meta.parent_thread_id.is_some() && !params.include_attached_threads {
                    continue;
                }
                if let Some(snippet) = self.match_thread(&term, row, &mut budget)? {
                    let thread = row.summary.to_thread(
                        self.status_of(&row.summary.meta.id),
                        self.path_of(row),
                        Vec::new(),
                    );
                    let result = ThreadSearchResult::builder()
                        .snippet(snippet)
                        .thread(thread)
                        .build();
                    if found.len() < limit {
                        pending.push(result.clone());
                    }
                    found.push((row.clone(), result));
                }
                if !pending.is_empty()
                    && (pending.len() >= PARTIAL_BATCH || flushed.elapsed() >= PARTIAL_EVERY)
                {
                    partial(std::mem::take(&mut pending));
                    flushed = std::time::Instant::now();
                }
                if let Some(delay) = delay {
                    std::thread::sleep(delay);
                }
            }
            if rows.len() < BATCH {
                break;
            }
        }
        if !pending.is_empty() {
            partial(pending);
        }
        let more = found.len() > limit;
        found.truncate(limit);
        let next_cursor = if more {
            found.last().map(|(row, _)| position(row))
        } else if cut_short {
            last_looked_at.as_ref().map(position)
        } else {
            None
        };
        let backwards_cursor = found.first().map(|(row, _)| position(row));
        Ok(Some(
            ThreadSearchResponse::builder()
                .data(found.into_iter().map(|(_, result)| result).collect())
                .maybe_next_cursor(next_cursor)
                .maybe_backwards_cursor(backwards_cursor)
                .build(),
        ))
    }

    /// The snippet of the first place `term` appears in thread `row` (its name, its preview,
    /// then its messages); `None` when it appears nowhere.
    fn match_thread(
        &self,
        term: &Term,
        row: &IndexRow,
        budget: &mut Budget,
    ) -> Result<Option<String>, ThreadError> {
        let summary = &row.summary;
        for text in summary.name.iter().chain([&summary.preview]) {
            if let Some(range) = term.find(text) {
                return Ok(Some(snippet(text, range).0));
            }
        }
        let id = &summary.meta.id;
        if let Some(thread) = self.loaded(id) {
            return Ok(first_in_turns(term, &lock(&thread).turns));
        }
        let turns = match self.store.files() {
            Some(files) => {
                let path = files.layout().rollout(row.archived, &row.relative);
                // Either form; a compressed rollout is decompressed here, up to the most a
                // rollout may hold.
                let bytes = match files.layout().open_reader(&path) {
                    Ok((mut reader, _)) => {
                        let mut bytes = Vec::new();
                        std::io::Read::read_to_end(&mut reader, &mut bytes)
                            .map_err(|e| super::history::read_failed(&path, e))?;
                        bytes
                    }
                    // Gone since the index row was read: nothing to find.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                    Err(e) => return Err(super::history::read_failed(&path, e)),
                };
                budget.bytes += bytes.len() as u64;
                if !term.may_be_in(&bytes) {
                    return Ok(None);
                }
                match agentwire_store::replay::replay(bytes.as_slice(), &path) {
                    Ok(replayed) => replayed.turns,
                    Err(error) => {
                        tracing::warn!(id, %error, "rollout not searched");
                        return Ok(None);
                    }
                }
            }
            None => match self.read_rollout(row) {
                Ok(replayed) => {
                    budget.bytes += row.stamp.len;
                    replayed.turns
                }
                Err(ThreadError::NotFound(_)) => return Ok(None),
                Err(error) => return Err(error),
            },
        };
        Ok(first_in_turns(term, &turns))
    }

    /// `thread/searchOccurrences`: one page of the places a term appears in a thread's
    /// messages, oldest first.
    pub(crate) fn search_occurrences(
        &self,
        params: ThreadSearchOccurrencesParams,
    ) -> Result<ThreadSearchOccurrencesResponse, ThreadError> {
        let id = &params.thread_id;
        let term = Term::new(&params.search_term, "searchTerm")?;
        let limit = params
            .limit
            .unwrap_or(DEFAULT_OCCURRENCES)
            .clamp(1, MAX_OCCURRENCES) as usize;
        let after = params
            .cursor
            .as_deref()
            .map(decode_occurrence_cursor)
            .transpose()?;
        let mut found: Vec<(OccurrenceAt, ThreadSearchOccurrence)> = Vec::new();
        // Adds the occurrences of message `seq` (item `item_id` of turn `turn_id`, numbered
        // `turn_seq`), those after the cursor; whether the page is full.
        let mut take = |seq: i64, turn_seq: i64, turn_id: &str, kind: &ThreadItemKind| -> bool {
            let mut index = 0u32;
            for text in message_texts(kind) {
                for range in term.find_all(text) {
                    let here = OccurrenceAt { seq, index };
                    index += 1;
                    if after.is_some_and(|a| here <= a) {
                        continue;
                    }
                    let (snippet, snippet_match_range) = snippet(text, range);
                    let turn_cursor = HistoryCursor {
                        items: false,
                        seq: turn_seq,
                        inclusive: true,
                    }
                    .encode();
                    found.push((
                        here,
                        ThreadSearchOccurrence::builder()
                            .item_id(kind.id())
                            .snippet(snippet)
                            .snippet_match_range(snippet_match_range)
                            .turn_cursor(turn_cursor)
                            .turn_id(turn_id)
                            .build(),
                    ));
                    if found.len() > limit {
                        return true;
                    }
                }
            }
            false
        };
        match self.source(id)? {
            Source::Memory { turns } => {
                let (numbered, items) = memory_items(&turns);
                let turn_seq = |turn_id: &str| {
                    numbered
                        .iter()
                        .rev()
                        .find(|(_, t)| t.id == turn_id)
                        .map_or(0, |(seq, _)| *seq)
                };
                for (seq, entry) in items {
                    if after.is_some_and(|a| seq < a.seq) {
                        continue;
                    }
                    if take(
                        seq,
                        turn_seq(&entry.turn_id),
                        &entry.turn_id,
                        &entry.item.kind,
                    ) {
                        break;
                    }
                }
            }
            Source::Disk { file, path, .. } => {
                let mut from = after.map(|a| a.seq - 1);
                'batches: loop {
                    let batch = {
                        let mut index = self.positions()?;
                        index.catch_up(id, &file, &path)?;
                        positions::items_of_kinds(
                            index.conn(),
                            id,
                            &["userMessage", "agentMessage"],
                            from,
                            MESSAGE_BATCH,
                        )?
                    };
                    for (pos, turn_seq) in &batch {
                        from = Some(pos.seq);
                        let item = read_item(&file, &path, pos.line)?;
                        if take(pos.seq, *turn_seq, &pos.turn_id, &item.kind) {
                            break 'batches;
                        }
                    }
                    if batch.len() < MESSAGE_BATCH {
                        break;
                    }
                }
            }
        }
        let more = found.len() > limit;
        found.truncate(limit);
        let next_cursor = if more {
            found.last().map(|(at, _)| encode_occurrence_cursor(*at))
        } else {
            None
        };
        Ok(ThreadSearchOccurrencesResponse::builder()
            .data(found.into_iter().map(|(_, o)| o).collect())
            .maybe_next_cursor(next_cursor)
            .build())
    }
}

/// Where an occurrence lies: its message's sequence number and its index in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct OccurrenceAt {
    seq: i64,
    index: u32,
}

fn encode_occurrence_cursor(at: OccurrenceAt) -> String {
    URL_SAFE_NO_PAD.encode(format!("v1:o:{}:{}", at.seq, at.index))
}

fn decode_occurrence_cursor(text: &str) -> Result<OccurrenceAt, ThreadError> {
    let invalid = || {
        ThreadError::InvalidParams(format!(
            "cursor: {text:?} is not a cursor of thread/searchOccurrences"
        ))
    };
    let bytes = URL_SAFE_NO_PAD.decode(text).map_err(|_| invalid())?;
    let plain = String::from_utf8(bytes).map_err(|_| invalid())?;
    let rest = plain.strip_prefix("v1:o:").ok_or_else(invalid)?;
    let (seq, index) = rest.split_once(':').ok_or_else(invalid)?;
    let seq: i64 = seq.parse().map_err(|_| invalid())?;
    if seq < 0 {
        return Err(invalid());
    }
    Ok(OccurrenceAt {
        seq,
        index: index.parse().map_err(|_| invalid())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(text: &str) -> Term {
        Term::new(text, "searchTerm").expect("term")
    }

    #[test]
    fn matches_ignore_case_and_report_byte_ranges_of_the_original() {
        let text = "Straße and STRASSE, Ünïcode and ünïcode";
        assert_eq!(
            term("strasse").find_all(text),
            vec![Range { start: 12, end: 19 }]
        );
        let found = term("ÜNÏ").find_all(text);
        assert_eq!(found.len(), 2);
        assert_eq!(&text[found[0].clone()], "Ünï");
        assert_eq!(&text[found[1].clone()], "ünï");
        assert!(term("absent").find(text).is_none());
        assert_eq!(term("aa").find_all("aaaa"), [0..2, 2..4]);
    }

    #[test]
    fn empty_and_blank_terms_are_refused() {
        for text in ["", "   "] {
            let refused = Term::new(text, "searchTerm").expect_err("refused");
            assert!(refused.to_string().contains("searchTerm"), "{refused}");
        }
    }

    #[test]
    fn a_rollout_without_the_terms_bytes_is_skipped_and_others_are_not() {
        assert!(!term("Banana").may_be_in(b"{\"text\":\"apple\"}"));
        assert!(term("Banana").may_be_in(b"{\"text\":\"a BANANA\"}"));
        // Terms a JSON writer would escape, or that are not ASCII, are never ruled out.
        assert!(term("say \"hi\"").may_be_in(b"nothing"));
        assert!(term("ü").may_be_in(b"nothing"));
    }

    #[test]
    fn snippets_cut_long_text_and_count_the_match_in_utf16_units() {
        let text = format!("{}😀 needle here\nand more", "x".repeat(100));
        let range = term("needle").find(&text).expect("found");
        let (snippet, at) = snippet(&text, range);
        assert!(snippet.starts_with('…'), "{snippet}");
        assert!(!snippet.contains('\n'), "{snippet}");
        let units: Vec<u16> = snippet.encode_utf16().collect();
        let matched =
            String::from_utf16(&units[at.start as usize..at.end as usize]).expect("utf-16");
        assert_eq!(matched, "needle");
        let (whole, at) = snippet_of("short needle", "needle");
        assert_eq!(whole, "short needle");
        assert_eq!((at.start, at.end), (6, 12));
    }

    fn snippet_of(text: &str, needle: &str) -> (String, ThreadSearchTextRange) {
        snippet(text, term(needle).find(text).expect("found"))
    }

    #[test]
    fn occurrence_cursors_round_trip_and_order() {
        let at = OccurrenceAt { seq: 12, index: 3 };
        assert_eq!(
            decode_occurrence_cursor(&encode_occurrence_cursor(at)).expect("decodes"),
            at
        );
        assert!(OccurrenceAt { seq: 12, index: 4 } > at);
        assert!(OccurrenceAt { seq: 13, index: 0 } > at);
        assert!(decode_occurrence_cursor("nonsense").is_err());
    }
}
