//! `gitDiffToRemote`: what the working tree changes relative to the remote, as one unified
//! diff, computed with the `git` command.
//!
//! The base is the merge base of `HEAD` with the upstream branch the current branch tracks;
//! without one, with the default branch of the remote (`origin` if there is one, else the first
//! remote: its `HEAD`, else its `main`, else its `master`). `sha` is that merge base. The diff
//! runs from it to the working tree: committed, staged and unstaged changes, and untracked files
//! that are not ignored, shown as new files (listed in a throwaway copy of the index, so the
//! repository's own index is never touched). Paths are relative to the repository's top level.
//!
//! Every `git` runs with `GIT_OPTIONAL_LOCKS=0` (reading never takes the index lock), the
//! file-system monitor off, hooks pointed nowhere, no pager, no external diff or text
//! conversion, and none of the caller's `GIT_DIR`-style variables.
//!
//! Errors: a `cwd` that does not exist or is no directory → -32602; not in a work tree, no
//! remote, no remote branch to compare with, no commit → -32600 (as the reference), each
//! naming `cwd` and saying what to do; `git` missing or failing otherwise → -32603.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::GitDiffToRemote;
use agentwire_protocol::{GitDiffToRemoteParams, GitDiffToRemoteResponse};
use agentwire_runtime::HandlerError;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

/// Variables that would point `git` somewhere else than `cwd`.
const FOREIGN_VARS: [&str; 6] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
];

/// Answers `gitDiffToRemote`.
pub(super) async fn diff_to_remote(
    params: GitDiffToRemoteParams,
) -> Result<GitDiffToRemoteResponse, HandlerError> {
    let cwd = PathBuf::from(&params.cwd);
    let given = params.cwd.as_str();
    match tokio::fs::metadata(&cwd).await {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(bad_cwd(format!("{given} is not a directory"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(bad_cwd(format!("{given} does not exist")));
        }
        Err(e) => return Err(bad_cwd(format!("cannot open {given}: {e}"))),
    }
    let git = Git::new(cwd.clone(), GitDiffToRemote::NAME);
    let top = git
        .run(&["rev-parse", "--show-toplevel"])
        .await?
        .map_err(|stderr| {
            state(format!(
                "cwd: {given} is not inside a git work tree ({stderr})"
            ))
        })?;
    let git = Git::new(
        PathBuf::from(top.trim_end_matches('\n')),
        GitDiffToRemote::NAME,
    );
    let base = base_ref(&git, given).await?;
    let sha = git
        .run(&["merge-base", "HEAD", &base])
        .await?
        .map_err(|stderr| {
            state(format!(
                "cwd: {given}: HEAD has no commit in common with {base} ({stderr})"
            ))
        })?
        .trim()
        .to_owned();
    let diff = git.diff_with_untracked(&sha).await?;
    Ok(GitDiffToRemoteResponse::builder()
        .sha(sha)
        .diff(diff)
        .build())
}

fn bad_cwd(why: String) -> HandlerError {
    HandlerError::invalid_params(GitDiffToRemote::NAME, format!("cwd: {why}"))
}

fn state(message: String) -> HandlerError {
    HandlerError::invalid_request(message)
}

/// The remote branch to compare with: the upstream of the current branch, else the default
/// branch of a remote.
async fn base_ref(git: &Git, given: &str) -> Result<String, HandlerError> {
    if let Ok(upstream) = git
        .run(&[
            "rev-parse",
            "--abbrev-ref",
            "--symbolic-full-name",
            "@{upstream}",
        ])
        .await?
    {
        return Ok(upstream.trim().to_owned());
    }
    let remotes = git.run(&["remote"]).await?.unwrap_or_default();
    let remotes: Vec<&str> = remotes.lines().filter(|l| !l.is_empty()).collect();
    let Some(remote) = remotes
        .iter()
        .find(|r| **r == "origin")
        .or_else(|| remotes.first())
    else {
        return Err(state(format!(
            "cwd: the repository of {given} has no remote; gitDiffToRemote compares the working \
             tree with a remote branch (add one with `git remote add`)"
        )));
    };
    let head = format!("refs/remotes/{remote}/HEAD");
    if let Ok(target) = git.run(&["symbolic-ref", "-q", &head]).await? {
        return Ok(target.trim().to_owned());
    }
    for branch in ["main", "master"] {
        let candidate = format!("refs/remotes/{remote}/{branch}");
        let check = format!("{candidate}^{{commit}}");
        if git
            .run(&["rev-parse", "--verify", "-q", &check])
            .await?
            .is_ok()
        {
            return Ok(candidate);
        }
    }
    Err(state(format!(
        "cwd: in {given} the current branch tracks no upstream and remote {remote:?} has no \
         default branch fetched; run `git fetch {remote}` or set an upstream with \
         `git branch --set-upstream-to`"
    )))
}

/// `git` run in one directory (for `review/start` too), its failures named after `method`.
pub(crate) struct Git {
    dir: PathBuf,
    method: &'static str,
}

impl Git {
    /// `git` in `dir`, serving `method`.
    pub(crate) fn new(dir: PathBuf, method: &'static str) -> Self {
        Self { dir, method }
    }

    fn command(&self, index: Option<&Path>) -> Command {
        let mut command = Command::new("git");
        command
            .arg("-C")
            .arg(&self.dir)
            .args([
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "color.ui=false",
            ])
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_PAGER", "cat")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for var in FOREIGN_VARS {
            command.env_remove(var);
        }
        if let Some(index) = index {
            command.env("GIT_INDEX_FILE", index);
        }
        command
    }

    /// Runs `git args`: `Ok(Ok(stdout))` on success, `Ok(Err(stderr))` when git failed,
    /// `Err` when it could not be run.
    pub(crate) async fn run(&self, args: &[&str]) -> Result<Result<String, String>, HandlerError> {
        Ok(self
            .run_in(args, None, None)
            .await?
            .map(|out| String::from_utf8_lossy(&out).into_owned()))
    }

    async fn run_in(
        &self,
        args: &[&str],
        index: Option<&Path>,
        input: Option<Vec<u8>>,
    ) -> Result<Result<Vec<u8>, String>, HandlerError> {
        let mut command = self.command(index);
        command.args(args);
        if input.is_some() {
            command.stdin(Stdio::piped());
        }
        let method = self.method;
        let mut child = command
            .spawn()
            .map_err(|e| HandlerError::internal(format!("{method}: cannot run git: {e}")))?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            // A failed write shows up as git's own error below.
            let _ = stdin.write_all(&input).await;
            drop(stdin);
        }
        let output = child
            .wait_with_output()
            .await
            .map_err(|e| HandlerError::internal(format!("{method}: git did not finish: {e}")))?;
        if output.status.success() {
            Ok(Ok(output.stdout))
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr);
            Ok(Err(stderr.trim().lines().last().unwrap_or("").to_owned()))
        }
    }

    /// Runs `git args` that must succeed.
    pub(crate) async fn must(
        &self,
        args: &[&str],
        index: Option<&Path>,
        input: Option<Vec<u8>>,
    ) -> Result<Vec<u8>, HandlerError> {
        self.run_in(args, index, input).await?.map_err(|stderr| {
            let command = args.iter().find(|a| !a.starts_with('-')).unwrap_or(&"");
            HandlerError::internal(format!("{}: git {command} failed: {stderr}", self.method))
        })
    }

    /// The diff from `base` to the working tree, untracked files included.
    pub(crate) async fn diff_with_untracked(&self, base: &str) -> Result<String, HandlerError> {
        const DIFF: [&str; 5] = [
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--end-of-options",
        ];
        let untracked = self
            .must(
                &["ls-files", "--others", "--exclude-standard", "-z"],
                None,
                None,
            )
            .await?;
        let mut args = DIFF.to_vec();
        args.push(base);
        if untracked.is_empty() {
            return self.must(&args, None, None).await.map(text);
        }
        let index = self
            .must(&["rev-parse", "--git-path", "index"], None, None)
            .await?;
        let index = self.dir.join(text(index).trim_end_matches('\n'));
        let scratch = ScratchIndex::new();
        if let Err(e) = tokio::fs::copy(&index, &scratch.0).await
            && e.kind() != std::io::ErrorKind::NotFound
        {
            return Err(HandlerError::internal(format!(
                "{}: cannot copy the index {}: {e}",
                self.method,
                index.display()
            )));
        }
        self.must(
            &[
                "--literal-pathspecs",
                "add",
                "--intent-to-add",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ],
            Some(&scratch.0),
            Some(untracked),
        )
        .await?;
        self.must(&args, Some(&scratch.0), None).await.map(text)
    }
}

/// Git's output as text (a diff of non-UTF-8 content keeps replacement characters).
pub(crate) fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A temporary index file, removed when dropped (with the lock file git may leave).
struct ScratchIndex(PathBuf);

impl ScratchIndex {
    fn new() -> Self {
        Self(std::env::temp_dir().join(format!(
            "agentwire-diff-{}-{}.index",
            std::process::id(),
            uuid::Uuid::now_v7()
        )))
    }
}

impl Drop for ScratchIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let mut lock = self.0.clone().into_os_string();
        lock.push(".lock");
        let _ = std::fs::remove_file(lock);
    }
}
