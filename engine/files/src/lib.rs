//! agentwire-files: the client's view of the files under the workspace, served as requests.
//!
//! - [`fs`]: `fs/*` (read, write, create, stat, list, remove, copy, watch), confined to the
//!   roots of the loaded threads ([`fs::Roots`], which the engine's threads implement) and
//!   never reaching the server's private paths;
//! - [`search`]: `fuzzyFileSearch` and its sessions, paths under a set of roots ranked
//!   against a query.
//!
//! Each request function takes its area's state ([`fs::Fs`], [`search::Search`]) rather than
//! the whole engine. It uses nothing of the engine but `agentwire-support`; it is an internal
//! crate of agentwire, whose API follows the engine's needs, not semver.

pub mod fs;
pub mod search;
