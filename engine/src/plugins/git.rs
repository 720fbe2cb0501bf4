//! The `git` program, run for git marketplaces and git plugin sources: a checkout is made by
//! `git init` + `fetch --depth 1 origin <ref>` + `reset --hard FETCH_HEAD`, so a branch, a tag
//! and a commit are fetched the same way, and an upgrade is the same fetch and reset again.
//! Each run has a time limit, never prompts for credentials, and ignores the repository's
//! hooks and the caller's `GIT_DIR`-like variables.

use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest one git command may run.
const TIMEOUT: Duration = Duration::from_secs(120);
/// Variables of the caller's environment that would point git somewhere else.
const FOREIGN_VARS: [&str; 6] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
];
/// Folders always checked out in a sparse checkout: where a marketplace manifest may be.
const MANIFEST_FOLDERS: [&str; 2] = [".agents/plugins", ".claude-plugin"];

/// Runs `git args` in `dir`; its standard output, or an error with git's own words.
fn run<I, S>(dir: &Path, args: I) -> Result<String, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let shown = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "advice.detachedHead=false",
        ])
        .args(&args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in FOREIGN_VARS {
        command.env_remove(var);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let out = child.stdout.take().map(drain);
    let err = child.stderr.take().map(drain);
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`git {shown}` took longer than {} s",
                    TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("waiting for git: {e}")),
        }
    };
    let stdout = out.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = err.and_then(|h| h.join().ok()).unwrap_or_default();
    if status.success() {
        Ok(stdout)
    } else {
        Err(format!("`git {shown}` failed: {}", stderr.trim()))
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Makes `dest` (which must not exist, or be empty) a checkout of `url` at `ref_name` (a
/// branch, tag or commit; the remote's default branch when `None`), limited to `sparse`
/// folders (plus the manifest folders) when that is not empty. Returns the commit checked out.
pub(crate) fn checkout(
    url: &str,
    ref_name: Option<&str>,
    sparse: &[String],
    dest: &Path,
) -> Result<String, String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    if url.starts_with('-') {
        return Err(format!("{url:?} is not a repository address"));
    }
    if let Some(ref_name) = ref_name {
        check_ref(ref_name)?;
    }
    run(dest, ["init", "--quiet"])?;
    run(dest, ["remote", "add", "--", "origin", url])?;
    if !sparse.is_empty() {
        let mut args = vec![
            "sparse-checkout".to_owned(),
            "set".to_owned(),
            "--".to_owned(),
        ];
        args.extend(MANIFEST_FOLDERS.iter().map(|f| (*f).to_owned()));
        args.extend(sparse.iter().cloned());
        run(dest, args)?;
    }
    update(dest, ref_name)
}

/// Fetches `ref_name` (the remote's default branch when `None`) of the checkout in `root`'s
/// `origin` and moves the checkout to it, dropping any local change. Returns the commit now
/// checked out.
pub(crate) fn update(root: &Path, ref_name: Option<&str>) -> Result<String, String> {
    let wanted = ref_name.unwrap_or("HEAD");
    check_ref(wanted)?;
    run(
        root,
        [
            "fetch",
            "--quiet",
            "--depth",
            "1",
            "--no-tags",
            "--",
            "origin",
            wanted,
        ],
    )?;
    run(root, ["reset", "--quiet", "--hard", "FETCH_HEAD"])?;
    run(root, ["clean", "--quiet", "-ffdx"])?;
    head(root)
}

/// Refuses a branch, tag or commit name git could read as an option or a refspec.
fn check_ref(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 256
        || name.starts_with('-')
        || name.contains("..")
        || name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || ":?*[\\".contains(c))
    {
        return Err(format!("{name:?} is not a branch, tag or commit name"));
    }
    Ok(())
}

/// Moves the checkout in `root` back to `commit` (one it had), dropping any local change.
pub(crate) fn update_to(root: &Path, commit: &str) -> Result<(), String> {
    check_ref(commit)?;
    run(root, ["reset", "--quiet", "--hard", commit, "--"])?;
    run(root, ["clean", "--quiet", "-ffdx"]).map(drop)
}

/// The commit checked out in `root`.
pub(crate) fn head(root: &Path) -> Result<String, String> {
    Ok(run(root, ["rev-parse", "HEAD"])?.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn a_checkout_follows_its_branch_and_reports_the_commit() {
        let dir = tempfile::tempdir().expect("dir");
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join("a")).expect("dirs");
        std::fs::write(repo.join("a/file"), "one").expect("write");
        git(&repo, &["init", "--quiet", "-b", "main"]);
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "--quiet", "-m", "one"]);
        let dest = dir.path().join("clone");
        let first = checkout(&repo.display().to_string(), None, &[], &dest).expect("clones");
        assert_eq!(
            std::fs::read_to_string(dest.join("a/file")).expect("read"),
            "one"
        );
        std::fs::write(repo.join("a/file"), "two").expect("write");
        git(&repo, &["commit", "--quiet", "-am", "two"]);
        std::fs::write(dest.join("stray"), "x").expect("write");
        let second = update(&dest, Some("main")).expect("updates");
        assert_ne!(first, second);
        assert_eq!(
            std::fs::read_to_string(dest.join("a/file")).expect("read"),
            "two"
        );
        assert!(!dest.join("stray").exists());
        let missing = checkout(
            &dir.path().join("nowhere").display().to_string(),
            None,
            &[],
            &dir.path().join("c2"),
        )
        .expect_err("no repository");
        assert!(missing.contains("git fetch"), "{missing}");
        let sparse = checkout(
            &repo.display().to_string(),
            Some("main"),
            &["a".to_owned()],
            &dir.path().join("sparse"),
        )
        .expect("sparse checkout");
        assert_eq!(sparse, second);
        for bad in ["--upload-pack=x", "a b", "x:y", ""] {
            assert!(update(&dest, Some(bad)).is_err(), "{bad:?}");
        }
    }
}
