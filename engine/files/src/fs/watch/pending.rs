//! What a watch has to report next: the changed paths gathered since the last `fs/changed`,
//! bounded, so a burst of changes costs one notification of at most [`MAX_PATHS`] paths.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Most paths one `fs/changed` lists; past that it lists only the watched path itself.
pub(crate) const MAX_PATHS: usize = 256;

/// The changes of one watch not yet reported.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    paths: BTreeSet<PathBuf>,
    /// More changed than [`MAX_PATHS`], or the kernel dropped events: report the watched path.
    overflow: bool,
}

impl Pending {
    /// Notes that `path` changed.
    pub(crate) fn add(&mut self, path: PathBuf) {
        if self.overflow {
            return;
        }
        if self.paths.len() == MAX_PATHS && !self.paths.contains(&path) {
            self.overflow();
            return;
        }
        self.paths.insert(path);
    }

    /// Notes that an unknown set of paths changed.
    pub(crate) fn overflow(&mut self) {
        self.overflow = true;
        self.paths.clear();
    }

    /// The paths to report for a watch of `watched` (sorted), leaving nothing pending; `None`
    /// when nothing changed.
    pub(crate) fn take(&mut self, watched: &Path) -> Option<Vec<PathBuf>> {
        if std::mem::take(&mut self.overflow) {
            return Some(vec![watched.to_path_buf()]);
        }
        if self.paths.is_empty() {
            return None;
        }
        Some(std::mem::take(&mut self.paths).into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_changes_to_one_path_are_reported_once() {
        let mut pending = Pending::default();
        for _ in 0..1000 {
            pending.add(PathBuf::from("/w/a"));
        }
        pending.add(PathBuf::from("/w/b"));
        assert_eq!(
            pending.take(Path::new("/w")),
            Some(vec![PathBuf::from("/w/a"), PathBuf::from("/w/b")])
        );
        assert_eq!(pending.take(Path::new("/w")), None);
    }

    #[test]
    fn a_burst_over_the_bound_is_reported_as_the_watched_path() {
        let mut pending = Pending::default();
        for n in 0..=MAX_PATHS {
            pending.add(PathBuf::from(format!("/w/{n}")));
        }
        assert_eq!(
            pending.take(Path::new("/w")),
            Some(vec![PathBuf::from("/w")])
        );
        pending.add(PathBuf::from("/w/again"));
        assert_eq!(
            pending.take(Path::new("/w")),
            Some(vec![PathBuf::from("/w/again")])
        );
    }
}
