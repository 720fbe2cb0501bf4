//! The opaque cursors of `thread/list`: a position in the listing's order.
//!
//! A cursor names the sort key it belongs to, that key's value and the thread id (the
//! tie-breaker) of one thread; a page starts strictly after that thread in the requested
//! direction, so the same cursor walks forwards with one direction and backwards with the
//! other. On the wire it is `v1:<key>:<value>:<id>` in unpadded base64url, which clients must
//! treat as opaque.

/// Which timestamp a listing is ordered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortColumn {
    /// When the thread was created.
    CreatedAt,
    /// When the thread last changed.
    UpdatedAt,
}

impl SortColumn {
    /// The index column.
    pub(crate) fn column(self) -> &'static str {
        match self {
            SortColumn::CreatedAt => "created_at",
            SortColumn::UpdatedAt => "updated_at",
        }
    }

    fn tag(self) -> &'static str {
        match self {
            SortColumn::CreatedAt => "c",
            SortColumn::UpdatedAt => "u",
        }
    }
}

/// A position in a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// The key the listing is sorted by.
    pub column: SortColumn,
    /// That key's value at the position (Unix seconds).
    pub value: i64,
    /// The thread at the position (ties on the key are broken by id).
    pub id: String,
}

/// Why a cursor was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    #[error("invalid cursor")]
    /// Not a cursor this server issued.
    Malformed,
    #[error("the cursor belongs to a listing sorted by another key")]
    /// Issued for a listing sorted by the other key.
    OtherKey,
    #[error("the cursor belongs to another listing (turns and items have their own)")]
    /// Issued for a turns or items listing, not a thread listing.
    OtherListing,
}

impl Cursor {
    /// The wire form.
    pub fn encode(&self) -> String {
        let plain = format!("v1:{}:{}:{}", self.column.tag(), self.value, self.id);
        base64url_encode(plain.as_bytes())
    }

    /// Reads a cursor sent back by a client for a listing sorted by `column`.
    pub fn decode(text: &str, column: SortColumn) -> Result<Self, CursorError> {
        let bytes = base64url_decode(text).ok_or(CursorError::Malformed)?;
        let plain = String::from_utf8(bytes).map_err(|_| CursorError::Malformed)?;
        let mut parts = plain.splitn(4, ':');
        let (Some("v1"), Some(tag), Some(value), Some(id)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(CursorError::Malformed);
        };
        let found = match tag {
            "c" => SortColumn::CreatedAt,
            "u" => SortColumn::UpdatedAt,
            _ => return Err(CursorError::Malformed),
        };
        let value = value.parse().map_err(|_| CursorError::Malformed)?;
        if id.is_empty() || id.len() > 128 {
            return Err(CursorError::Malformed);
        }
        if found != column {
            return Err(CursorError::OtherKey);
        }
        Ok(Self {
            column,
            value,
            id: id.to_owned(),
        })
    }
}

/// A position in a thread's history (`thread/turns/list`, `thread/items/list`): the
/// sequence number of a turn or an item, and whether a page starts at it or just past it.
/// On the wire it is `v1:<t|i>:<seq>:<x|i>` in unpadded base64url.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryCursor {
    /// `true` for an item position, `false` for a turn position.
    pub items: bool,
    /// The position's sequence number in the rollout.
    pub seq: i64,
    /// Whether the position itself is part of the page that starts there.
    pub inclusive: bool,
}

impl HistoryCursor {
    /// The wire form.
    pub fn encode(&self) -> String {
        let plain = format!(
            "v1:{}:{}:{}",
            if self.items { "i" } else { "t" },
            self.seq,
            if self.inclusive { "i" } else { "x" }
        );
        base64url_encode(plain.as_bytes())
    }

    /// Reads a cursor sent back by a client of a turn (`items == false`) or item listing.
    pub fn decode(text: &str, items: bool) -> Result<Self, CursorError> {
        let bytes = base64url_decode(text).ok_or(CursorError::Malformed)?;
        let plain = String::from_utf8(bytes).map_err(|_| CursorError::Malformed)?;
        let parts: Vec<&str> = plain.split(':').collect();
        let [version, kind, seq, edge] = parts[..] else {
            return Err(CursorError::Malformed);
        };
        let found = match kind {
            "t" => false,
            "i" => true,
            _ => return Err(CursorError::Malformed),
        };
        let inclusive = match edge {
            "i" => true,
            "x" => false,
            _ => return Err(CursorError::Malformed),
        };
        let seq: i64 = seq.parse().map_err(|_| CursorError::Malformed)?;
        if version != "v1" || seq < 0 {
            return Err(CursorError::Malformed);
        }
        if found != items {
            return Err(CursorError::OtherListing);
        }
        Ok(Self {
            items,
            seq,
            inclusive,
        })
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64url_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let symbols = chunk.len() + 1;
        for i in 0..symbols {
            let index = (n >> (18 - 6 * i)) & 0x3f;
            out.push(char::from(ALPHABET[index as usize]));
        }
    }
    out
}

fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    if text.len() % 4 == 1 || text.len() > 1024 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, symbol) in chunk.iter().enumerate() {
            let value = ALPHABET.iter().position(|a| a == symbol)?;
            n |= (value as u32) << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    // Reject non-canonical encodings (stray bits in the last symbol).
    (base64url_encode(&out) == text).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip() {
        for (column, value, id) in [
            (
                SortColumn::CreatedAt,
                1_795_967_783,
                "01a22805-92a4-7883-962f-a9117c3e60a2",
            ),
            (SortColumn::UpdatedAt, -5, "x"),
            (SortColumn::CreatedAt, 0, "id:with:colons"),
        ] {
            let cursor = Cursor {
                column,
                value,
                id: id.to_owned(),
            };
            let text = cursor.encode();
            assert!(
                text.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
                "{text} is not url-safe"
            );
            assert_eq!(Cursor::decode(&text, column), Ok(cursor));
        }
    }

    #[test]
    fn history_cursors_round_trip_and_stay_in_their_listing() {
        for (items, seq, inclusive) in [(true, 0, false), (false, 99_999, true)] {
            let cursor = HistoryCursor {
                items,
                seq,
                inclusive,
            };
            assert_eq!(HistoryCursor::decode(&cursor.encode(), items), Ok(cursor));
            assert_eq!(
                HistoryCursor::decode(&cursor.encode(), !items),
                Err(CursorError::OtherListing)
            );
        }
        for plain in [
            "v1:i:-1:x",
            "v2:i:1:x",
            "v1:i:1:y",
            "v1:q:1:x",
            "v1:i:1",
            "v1:i:1:x:z",
        ] {
            assert_eq!(
                HistoryCursor::decode(&base64url_encode(plain.as_bytes()), true),
                Err(CursorError::Malformed),
                "{plain}"
            );
        }
    }

    #[test]
    fn base64url_matches_known_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
            ("\u{ff}\u{fe}", "w7_Dvg"),
        ] {
            assert_eq!(base64url_encode(plain.as_bytes()), encoded);
            assert_eq!(base64url_decode(encoded), Some(plain.as_bytes().to_vec()));
        }
    }

    #[test]
    fn bad_cursors_are_refused() {
        let mut bad: Vec<String> = ["", "!!!!", "Zm9vYmFy", "Zh", "A"]
            .map(str::to_owned)
            .to_vec();
        for plain in ["v2:c:1:x", "v1:z:1:x", "v1:c:one:x", "v1:c:1:", "v1:c:1"] {
            bad.push(base64url_encode(plain.as_bytes()));
        }
        for bad in &bad {
            assert_eq!(
                Cursor::decode(bad, SortColumn::CreatedAt),
                Err(CursorError::Malformed),
                "{bad:?}"
            );
        }
        let updated = Cursor {
            column: SortColumn::UpdatedAt,
            value: 1,
            id: "x".to_owned(),
        };
        assert_eq!(
            Cursor::decode(&updated.encode(), SortColumn::CreatedAt),
            Err(CursorError::OtherKey)
        );
    }
}
