//! Ranking the listed paths against a query with nucleo's matcher, on every core.
//!
//! The query is read the way fzf reads one: words separated by spaces must all match, each
//! fuzzily (its characters in order), and a word may be marked `'exact`, `^prefix`, `suffix$`
//! or `!negated`; lower-case words ignore case, a word with a capital letter does not. Paths
//! are scored with nucleo's settings for file paths (a match right after a `/` counts as a
//! word start). On top of nucleo's score, a path whose last component is the query itself, or
//! the query plus an extension (`widget` → `widget.rs`), gets a bonus that puts it before
//! paths that merely contain the query. Ties go to the shorter path, then to the path that
//! sorts first, then to the earlier root.

use std::cmp::Ordering;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

use agentwire_protocol::{FuzzyFileSearchMatchType, FuzzyFileSearchResult};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

use super::listing::Candidate;

/// Most results of one search, over all its roots (as the reference server).
pub(super) const LIMIT: usize = 50;
/// Below this many paths, matching stays on one thread.
const PARALLEL_FROM: usize = 8 * 1024;
/// Most matching threads.
const MAX_THREADS: usize = 8;

/// What is matched: for each root, the name to report it by and its paths.
pub(super) struct Corpus {
    pub roots: Vec<(String, Vec<Arc<[Candidate]>>)>,
}

/// A path that matched: its score and where it is.
#[derive(Debug, Clone, Copy)]
struct Hit {
    score: u32,
    root: u32,
    chunk: u32,
    index: u32,
}

fn config() -> Config {
    Config::DEFAULT.match_paths()
}

impl Corpus {
    fn candidate(&self, hit: &Hit) -> &Candidate {
        &self.roots[hit.root as usize].1[hit.chunk as usize][hit.index as usize]
    }

    /// The best `limit` matches of `query`, best first; `None` when `cancelled` said so
    /// before the end. An empty query matches nothing.
    pub(super) fn search(
        &self,
        query: &str,
        limit: usize,
        cancelled: &(dyn Fn() -> bool + Sync),
    ) -> Option<Vec<FuzzyFileSearchResult>> {
        let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
        if pattern.atoms.is_empty() || limit == 0 {
            return Some(Vec::new());
        }
        let name = NameBonus::new(query);
        let work: Vec<(u32, u32)> = self
            .roots
            .iter()
            .enumerate()
            .flat_map(|(r, (_, chunks))| (0..chunks.len()).map(move |c| (r as u32, c as u32)))
            .collect();
        let total: usize = self
            .roots
            .iter()
            .flat_map(|(_, chunks)| chunks.iter().map(|c| c.len()))
            .sum();
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(MAX_THREADS)
            .min(total / PARALLEL_FROM + 1);
        let next = AtomicUsize::new(0);
        let scan = || -> Option<Vec<Hit>> {
            let mut matcher = Matcher::new(config());
            let mut hits = Vec::new();
            loop {
                let at = next.fetch_add(1, AtomicOrdering::Relaxed);
                let Some(&(root, chunk)) = work.get(at) else {
                    return Some(hits);
                };
                if cancelled() {
                    return None;
                }
                let candidates = &self.roots[root as usize].1[chunk as usize];
                for (index, candidate) in candidates.iter().enumerate() {
                    let path = candidate.path.slice(..);
                    if let Some(score) = pattern.score(path, &mut matcher) {
                        hits.push(Hit {
                            score: score + name.bonus(candidate),
                            root,
                            chunk,
                            index: index as u32,
                        });
                    }
                }
            }
        };
        let mut hits = if threads <= 1 {
            scan()?
        } else {
            std::thread::scope(|scope| {
                let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(scan)).collect();
                let mut all = scan();
                for helper in helpers {
                    match (helper.join().ok().flatten(), all.as_mut()) {
                        (Some(hits), Some(all)) => all.extend(hits),
                        _ => all = None,
                    }
                }
                all
            })?
        };
        let order = |a: &Hit, b: &Hit| self.order(a, b);
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_unstable_by(order);
        let mut matcher = Matcher::new(config());
        let mut indices = Vec::new();
        Some(
            hits.iter()
                .map(|hit| self.result(hit, &pattern, &mut matcher, &mut indices))
                .collect(),
        )
    }

    /// Best first: higher score, then shorter path, then the path that sorts first, then the
    /// earlier root.
    fn order(&self, a: &Hit, b: &Hit) -> Ordering {
        b.score.cmp(&a.score).then_with(|| {
            let (pa, pb) = (&self.candidate(a).path, &self.candidate(b).path);
            pa.len()
                .cmp(&pb.len())
                .then_with(|| pa.slice(..).chars().cmp(pb.slice(..).chars()))
                .then_with(|| a.root.cmp(&b.root))
        })
    }

    fn result(
        &self,
        hit: &Hit,
        pattern: &Pattern,
        matcher: &mut Matcher,
        indices: &mut Vec<u32>,
    ) -> FuzzyFileSearchResult {
        let candidate = self.candidate(hit);
        let path = candidate.path.slice(..);
        indices.clear();
        let _ = pattern.indices(path, matcher, indices);
        indices.sort_unstable();
        indices.dedup();
        FuzzyFileSearchResult::builder()
            .root(self.roots[hit.root as usize].0.clone())
            .path(text(path))
            .file_name(text(candidate.path.slice(candidate.name_start as usize..)))
            .match_type(if candidate.is_dir {
                FuzzyFileSearchMatchType::Directory
            } else {
                FuzzyFileSearchMatchType::File
            })
            .score(hit.score)
            .indices(indices.clone())
            .build()
    }
}

fn text(s: Utf32Str<'_>) -> String {
    s.chars().collect()
}

/// The bonus for a last path component that is the query itself (or the query plus an
/// extension); only for a one-word query without special characters.
struct NameBonus {
    /// The query, lower-cased; `None` when it does not qualify.
    query: Option<Vec<char>>,
    bonus: u32,
}

impl NameBonus {
    fn new(query: &str) -> Self {
        let plain = !query.is_empty()
            && !query
                .chars()
                .any(|c| c.is_whitespace() || matches!(c, '\'' | '^' | '$' | '!' | '\\' | '/'));
        let chars: Vec<char> = query.chars().flat_map(char::to_lowercase).collect();
        // As much again as a perfect match of the query would score on its own.
        let bonus = 16 * chars.len() as u32;
        Self {
            query: plain.then_some(chars),
            bonus,
        }
    }

    fn bonus(&self, candidate: &Candidate) -> u32 {
        let Some(query) = &self.query else {
            return 0;
        };
        let name = candidate.path.slice(candidate.name_start as usize..);
        if name.len() < query.len() {
            return 0;
        }
        let mut chars = name.chars();
        let same = query.iter().all(|q| {
            chars
                .next()
                .is_some_and(|c| c.to_lowercase().eq(std::iter::once(*q)))
        });
        if !same {
            return 0;
        }
        match chars.next() {
            None => self.bonus,
            Some('.') if !candidate.is_dir => self.bonus,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use nucleo_matcher::Utf32String;

    use super::*;

    fn corpus(paths: &[&str]) -> Corpus {
        let candidates: Vec<Candidate> = paths
            .iter()
            .map(|p| Candidate {
                path: Utf32String::from(*p),
                name_start: p.rfind('/').map_or(0, |i| p[..=i].chars().count() as u32),
                is_dir: p.ends_with("dir"),
            })
            .collect();
        Corpus {
            roots: vec![("/r".into(), vec![Arc::from(candidates)])],
        }
    }

    fn paths(corpus: &Corpus, query: &str) -> Vec<String> {
        corpus
            .search(query, LIMIT, &|| false)
            .expect("not cancelled")
            .into_iter()
            .map(|r| r.path)
            .collect()
    }

    #[test]
    fn the_exact_name_comes_first_then_shorter_paths() {
        let corpus = corpus(&[
            "src/widgetry/helpers.rs",
            "deep/down/below/widget.rs",
            "widget_factory.rs",
            "src/wi/dg/et.rs",
        ]);
        assert_eq!(
            paths(&corpus, "widget"),
            [
                "deep/down/below/widget.rs",
                "widget_factory.rs",
                "src/widgetry/helpers.rs",
                "src/wi/dg/et.rs"
            ]
        );
    }

    #[test]
    fn indices_point_at_the_matched_characters() {
        let corpus = corpus(&["ab/cd.txt"]);
        let results = corpus.search("acd", LIMIT, &|| false).expect("result");
        assert_eq!(results[0].indices.as_deref(), Some(&[0, 3, 4][..]));
        assert_eq!(results[0].file_name, "cd.txt");
    }

    #[test]
    fn empty_query_matches_nothing_and_cancel_stops() {
        let corpus = corpus(&["a", "b"]);
        assert!(paths(&corpus, "").is_empty());
        assert!(corpus.search("a", LIMIT, &|| true).is_none());
    }

    #[test]
    fn results_are_capped() {
        let names: Vec<String> = (0..120).map(|i| format!("file{i}.txt")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(paths(&corpus(&refs), "file").len(), LIMIT);
    }
}
