//! What a `marketplace/add` source names: a folder of this machine, or a git repository.

use std::path::{Path, PathBuf};

/// A marketplace source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// A folder used where it is.
    Local(PathBuf),
    /// A repository cloned under the server's home.
    Git {
        /// Its address, as git takes it.
        url: String,
        /// The branch, tag or commit followed; the default branch when `None`.
        ref_name: Option<String>,
    },
}

/// Reads `source` (with the `refName` of the request, which wins over a `#ref` suffix); paths
/// are taken from `cwd`. A path names a git repository to clone when it ends in `.git`, is a
/// bare repository, or a ref is given; any other path is a local marketplace folder.
pub(crate) fn parse(
    source: &str,
    explicit_ref: Option<String>,
    cwd: &Path,
) -> Result<Source, String> {
    let source = source.trim();
    if source.is_empty() {
        return Err("source: empty".to_owned());
    }
    let (base, suffix_ref) = match source.rsplit_once('#') {
        Some((base, r)) => (base, Some(r.trim().to_owned()).filter(|r| !r.is_empty())),
        None => (source, None),
    };
    let ref_name = explicit_ref
        .map(|r| r.trim().to_owned())
        .filter(|r| !r.is_empty())
        .or(suffix_ref);
    if looks_like_path(base) {
        let path = expand(base, cwd);
        let path = path
            .canonicalize()
            .map_err(|e| format!("source: {}: {e}", path.display()))?;
        if !path.is_dir() {
            return Err(format!(
                "source: {} is a file; give the marketplace's folder",
                path.display()
            ));
        }
        if ref_name.is_some() || is_bare_repository(&path) || base.ends_with(".git") {
            return Ok(Source::Git {
                url: path.display().to_string(),
                ref_name,
            });
        }
        return Ok(Source::Local(path));
    }
    let (base, at_ref) = match base.rsplit_once('@') {
        Some((b, r)) if !base.contains("://") && !base.contains(':') && !r.contains('/') => {
            (b, Some(r.to_owned()))
        }
        _ => (base, None),
    };
    let url = git_address(base)
        .ok_or_else(|| format!("source: {source:?} is neither a folder nor a git repository"))?;
    Ok(Source::Git {
        url,
        ref_name: ref_name.or(at_ref),
    })
}

/// `url` as a git address (GitHub's `owner/repo` made a URL), or `None` when it is not one.
pub(crate) fn git_address(url: &str) -> Option<String> {
    let url = url.trim().trim_end_matches('/');
    if url.starts_with("https://github.com/") && !url.ends_with(".git") {
        return Some(format!("{url}.git"));
    }
    if ["http://", "https://", "ssh://", "git://", "file://"]
        .iter()
        .any(|scheme| url.starts_with(scheme))
        || (url.starts_with("git@") && url.contains(':'))
        || url.starts_with('/')
    {
        return Some(url.to_owned());
    }
    let mut parts = url.split('/');
    let shorthand = matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(owner), Some(repo), None) if [owner, repo].iter().all(|s| {
            !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        })
    );
    shorthand.then(|| format!("https://github.com/{url}.git"))
}

fn looks_like_path(source: &str) -> bool {
    source.starts_with('/')
        || source.starts_with("./")
        || source.starts_with("../")
        || source.starts_with("~/")
        || source == "."
        || source == ".."
}

fn expand(source: &str, cwd: &Path) -> PathBuf {
    if let Some(rest) = source.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(rest);
    }
    cwd.join(source)
}

/// Whether `dir` is a bare git repository (a `HEAD` file and `objects` and `refs` folders,
/// no work tree).
fn is_bare_repository(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_folders_or_repositories() {
        let dir = tempfile::tempdir().expect("dir");
        let cwd = dir.path();
        std::fs::create_dir_all(cwd.join("market")).expect("dir");
        std::fs::create_dir_all(cwd.join("bare.git/objects")).expect("dir");
        std::fs::create_dir_all(cwd.join("bare.git/refs")).expect("dir");
        std::fs::write(cwd.join("bare.git/HEAD"), "ref: refs/heads/main\n").expect("head");
        let market = cwd.join("market").canonicalize().expect("canonical");
        assert_eq!(
            parse("./market", None, cwd),
            Ok(Source::Local(market.clone()))
        );
        assert_eq!(
            parse("./market#v2", None, cwd),
            Ok(Source::Git {
                url: market.display().to_string(),
                ref_name: Some("v2".into())
            })
        );
        let Ok(Source::Git { url, ref_name }) = parse("./bare.git", None, cwd) else {
            panic!("bare repository");
        };
        assert!(url.ends_with("bare.git"));
        assert_eq!(ref_name, None);
        assert_eq!(
            parse("owner/repo@main", None, cwd),
            Ok(Source::Git {
                url: "https://github.com/owner/repo.git".into(),
                ref_name: Some("main".into())
            })
        );
        assert_eq!(
            parse("git@host:team/repo.git", Some("rel".into()), cwd),
            Ok(Source::Git {
                url: "git@host:team/repo.git".into(),
                ref_name: Some("rel".into())
            })
        );
        assert!(parse("./missing", None, cwd).is_err());
        assert!(parse("not a source", None, cwd).is_err());
        assert!(parse(" ", None, cwd).is_err());
    }
}
