//! Ranking the listed paths against a query with nucleo's matcher, on every core.
//!
//! The query is read the way fzf reads one: words separated by spaces must all match, each
//! fuzzily (its characters in order), and a word may be marked `'exact`, `^prefix`, `suffix$`
//! or `!negated`; lower-case words ignore case, a word with a capital letter does not.
//!
//! Ranking, best first:
//! 1. **Matches inside the file name.** A path whose last component matches the whole query
//!    on its own comes before every path whose match needs its directories: for
//!    `zephquokhand`, `core/net/zephyr_quokka_handler.rs` before `state/zeph/quo/kha/nd.py`,
//!    however well the directory names line up. Among them, nucleo's score of the name alone
//!    decides (contiguous runs and word starts — after `_`, `-`, `.`, a case change — score
//!    highest), and a name that is the query itself, or the query plus an extension
//!    (`widget` → `widget.rs`), gets a bonus on top.
//! 2. **Matches across the path**, by nucleo's score of the whole path with its settings for
//!    file paths (a match right after a `/` counts as a word start).
//!
//! On the wire `score` follows that order: a file-name match scores [`NAME_TIER`] plus its
//! name score, a path match its path score (below [`NAME_TIER`]). Ties go to the shorter
//! path, then to the path that sorts first, then to the earlier root. The name is only scored
//! for paths that matched as a whole (a name match implies a path match), so a query costs at
//! most one more short match per hit.

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
/// The score every match inside the file name starts from: above any score a match across the
/// path can reach (nucleo scores at most `u16::MAX` per query word, and path scores are
/// capped just below this).
pub(super) const NAME_TIER: u32 = 1 << 22;

/// What is matched: for each root, the name to report it by and its paths.
pub(super) struct Corpus {
    pub roots: Vec<(String, Vec<Arc<[Candidate]>>)>,
}

/// A path that matched: its score, whether its file name matched alone, and where it is.
#[derive(Debug, Clone, Copy)]
struct Hit {
    score: u32,
    in_name: bool,
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
                    let Some(path_score) = pattern.score(path, &mut matcher) else {
                        continue;
                    };
                    let file_name = candidate.path.slice(candidate.name_start as usize..);
                    let in_name = candidate.name_start > 0;
                    let name_score = in_name
                        .then(|| pattern.score(file_name, &mut matcher))
                        .flatten();
                    let score = match name_score {
                        Some(score) => NAME_TIER
                            .saturating_add(score)
                            .saturating_add(name.bonus(candidate)),
                        // A name that is the whole path: its path score is its name score.
                        None if !in_name => NAME_TIER
                            .saturating_add(path_score)
                            .saturating_add(name.bonus(candidate)),
                        None => path_score.min(NAME_TIER - 1),
                    };
                    hits.push(Hit {
                        score,
                        in_name: score >= NAME_TIER,
                        root,
                        chunk,
                        index: index as u32,
                    });
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
        if hit.in_name {
            // Where the name matched, as positions of the whole path.
            let start = candidate.name_start;
            let _ = pattern.indices(candidate.path.slice(start as usize..), matcher, indices);
            indices.iter_mut().for_each(|i| *i += start);
        } else {
            let _ = pattern.indices(path, matcher, indices);
        }
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
    fn file_name_matches_come_before_matches_across_directories() {
        // Decoys whose directories spell the query, or part of it, with a word start at
        // every piece: each scores well over the whole path, none matches in its file name.
        let corpus = corpus(&[
            "state/zeph/quo/kha/nd.py",
            "zeph/quo/khand/readme.md",
            "zephyr/quokka/handler/mod.rs",
            "src/zeph_quok/hand/index.ts",
            "z/e/p/h/q/u/o/k/h/a/n/d.txt",
            "core/net/zephyr_quokka_handler.rs",
            "lib/zephquok/hand.rs",
        ]);
        let ranked = paths(&corpus, "zephquokhand");
        assert_eq!(ranked.len(), 7, "{ranked:?}");
        assert_eq!(ranked[0], "core/net/zephyr_quokka_handler.rs", "{ranked:?}");
        let results = corpus
            .search("zephquokhand", LIMIT, &|| false)
            .expect("result");
        assert!(results[0].score >= NAME_TIER, "{:?}", results[0]);
        assert!(
            results[1..].iter().all(|r| r.score < NAME_TIER),
            "only one name matches: {results:?}"
        );
        // Scores on the wire follow the order.
        assert!(results.windows(2).all(|w| w[0].score >= w[1].score));
        // The highlighted characters are in the file name.
        let name_start = "core/net/".len() as u32;
        let indices = results[0].indices.clone().unwrap_or_default();
        assert_eq!(indices.len(), "zephquokhand".len(), "{indices:?}");
        assert!(indices.iter().all(|i| *i >= name_start), "{indices:?}");
    }

    #[test]
    fn among_name_matches_contiguous_and_word_starts_win() {
        let corpus = corpus(&[
            "a/hzaxnydlxer.rs",
            "b/handler.rs",
            "c/hand_ler.rs",
            "d/my_handler_test.rs",
        ]);
        let ranked = paths(&corpus, "handler");
        assert_eq!(ranked[0], "b/handler.rs", "{ranked:?}");
        assert_eq!(
            ranked.last().map(String::as_str),
            Some("a/hzaxnydlxer.rs"),
            "{ranked:?}"
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
