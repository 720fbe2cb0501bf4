//! Cursor pagination for `model/list` and `app/list`.
//!
//! A cursor is the position of the first entry of the next page, written as a decimal number;
//! clients treat it as opaque. A cursor past the end (the list shrank since the last page)
//! gives an empty last page; anything that is not a position is refused.

use agentwire_runtime::HandlerError;

/// Most entries in a page when the client sets no `limit`.
pub(crate) const DEFAULT_LIMIT: usize = 200;

/// The page of `items` that `cursor` and `limit` select, and the cursor of the next page
/// (`None` on the last). A `limit` of 0 counts as 1.
pub(crate) fn page<T>(
    method: &str,
    mut items: Vec<T>,
    cursor: Option<&str>,
    limit: Option<u32>,
) -> Result<(Vec<T>, Option<String>), HandlerError> {
    let start = match cursor {
        None => 0,
        Some(text) => text.parse::<usize>().map_err(|_| {
            HandlerError::invalid_params(
                method,
                format!(
                    "cursor: {text:?} is not a cursor this server returned; pass the \
                     `nextCursor` of the previous page, or leave `cursor` out for the first page"
                ),
            )
        })?,
    };
    let limit = limit.map_or(DEFAULT_LIMIT, |l| {
        usize::try_from(l).unwrap_or(usize::MAX).max(1)
    });
    let start = start.min(items.len());
    let end = start.saturating_add(limit).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    items.truncate(end);
    let page = items.split_off(start);
    Ok((page, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_walk_the_list_and_bad_cursors_name_the_field() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page("m", items.clone(), None, Some(2)).expect("first");
        assert_eq!((first, next.as_deref()), (vec![0, 1], Some("2")));
        let (second, next) = page("m", items.clone(), Some("2"), Some(2)).expect("second");
        assert_eq!((second, next.as_deref()), (vec![2, 3], Some("4")));
        let (last, next) = page("m", items.clone(), Some("4"), Some(2)).expect("last");
        assert_eq!((last, next), (vec![4], None));
        let (past, next) = page("m", items.clone(), Some("9"), None).expect("past the end");
        assert_eq!((past, next), (Vec::<u32>::new(), None));
        let (one, _) = page("m", items.clone(), None, Some(0)).expect("limit 0");
        assert_eq!(one, vec![0]);
        let error = page("m", items, Some("abc"), None).expect_err("bad cursor");
        assert_eq!(error.code, -32602);
        assert!(error.message.contains("cursor"), "{}", error.message);
    }
}
