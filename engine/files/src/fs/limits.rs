//! The limits of the `fs/*` requests, in a leaf module of their own so that the request
//! files below `fs/` take them without importing `fs/mod.rs` back.

/// Most bytes `fs/readFile` returns and `fs/writeFile` accepts (16 MiB).
pub(crate) const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Deepest nesting `fs/remove` and `fs/copy` walk into.
pub(crate) const MAX_DEPTH: usize = 256;
/// Most entries one `fs/copy` of a tree copies.
pub(crate) const MAX_TREE_ENTRIES: usize = 100_000;
