//! Administrator requirements (`configRequirements/read`), from `requirements.toml`:
//!
//! ```toml
//! allowed_approval_policies = ["untrusted", "on-request"]   # approval_policy / approvalPolicy
//! allowed_sandbox_modes = ["read-only", "workspace-write"]  # sandbox_mode / sandbox
//! allowed_web_search_modes = ["disabled"]                   # web_search
//! model_provider = "local"                                  # the one provider threads use
//! ```
//!
//! Read from `/etc/agentwire/requirements.toml` (the machine's administrator) and
//! `$AGENTWIRE_HOME/requirements.toml`; where both set a key, the machine's file wins. No file
//! (or no key) means no requirement, and `configRequirements/read` answers `null`.
//!
//! Enforced, whatever a client shows: `thread/start`, `thread/resume`, `thread/fork` and
//! `turn/start` refuse an approval policy, sandbox mode or model provider outside what is
//! allowed (-32600 naming the requirement and the file), and so do `config/value/write` and
//! `config/batchWrite` for `approval_policy`, `sandbox_mode`, `web_search` and `model_provider`.
//! A file that does not read is a problem of its own: every request it would govern is refused
//! until it is fixed (failing closed), with the parse error in the message.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use agentwire_protocol::{AskForApproval, ConfigRequirements, SandboxMode, WebSearchMode};
use agentwire_support::lock;
use serde::Deserialize;

use crate::layers::{Stamp, stamp};

/// The machine-wide requirements file.
const SYSTEM_FILE: &str = "/etc/agentwire/requirements.toml";
/// The requirements file of a home.
const HOME_FILE: &str = "requirements.toml";
/// Largest requirements file read.
const MAX_BYTES: u64 = 256 * 1024;

/// One requirements file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequirementsFile {
    allowed_approval_policies: Option<Vec<AskForApproval>>,
    allowed_sandbox_modes: Option<Vec<SandboxMode>>,
    allowed_web_search_modes: Option<Vec<WebSearchMode>>,
    model_provider: Option<String>,
}

/// The requirements in force and where they come from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Requirements {
    /// What is allowed; `None` when no file sets anything.
    pub allowed: Option<ConfigRequirements>,
    /// The files read (for messages).
    pub files: Vec<PathBuf>,
}

/// The files' identities (and modification times) a loaded result was read from.
type Key = Vec<(PathBuf, Stamp)>;

/// The last files read and what they said: a request only costs a `stat` of each file until
/// one of them changes (is written, replaced, created or removed).
static LAST: Mutex<Option<(Key, Result<Requirements, String>)>> = Mutex::new(None);

/// The requirements for the home `home`; the error names the file that does not read and why.
/// Reads the disk (a `stat` per file while they are unchanged): call it off the async workers.
pub fn load(home: &Path) -> Result<Requirements, String> {
    let files = [PathBuf::from(SYSTEM_FILE), home.join(HOME_FILE)];
    let key: Key = files.iter().map(|f| (f.clone(), stamp(f))).collect();
    let mut last = lock(&LAST);
    if let Some((cached, loaded)) = last.as_ref()
        && *cached == key
    {
        return loaded.clone();
    }
    let loaded = load_from(&files);
    *last = Some((key, loaded.clone()));
    loaded
}

/// The requirements of `files`, the first winning key by key.
fn load_from(files: &[PathBuf]) -> Result<Requirements, String> {
    let mut merged = RequirementsFile::default();
    let mut read = Vec::new();
    for file in files {
        let bytes = match agentwire_support::regular_file::read_regular(file, MAX_BYTES) {
            Ok((_, true)) => {
                return Err(format!("{}: larger than {MAX_BYTES} bytes", file.display()));
            }
            Ok((bytes, false)) => bytes,
            Err(_) if !file.exists() => continue,
            Err(reason) => return Err(format!("{}: cannot read it: {reason}", file.display())),
        };
        let text =
            String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8", file.display()))?;
        let parsed: RequirementsFile =
            toml::from_str(&text).map_err(|e| format!("{}: {}", file.display(), e.message()))?;
        merged.allowed_approval_policies = merged
            .allowed_approval_policies
            .or(parsed.allowed_approval_policies);
        merged.allowed_sandbox_modes = merged
            .allowed_sandbox_modes
            .or(parsed.allowed_sandbox_modes);
        merged.allowed_web_search_modes = merged
            .allowed_web_search_modes
            .or(parsed.allowed_web_search_modes);
        merged.model_provider = merged.model_provider.or(parsed.model_provider);
        read.push(file.clone());
    }
    let any = merged.allowed_approval_policies.is_some()
        || merged.allowed_sandbox_modes.is_some()
        || merged.allowed_web_search_modes.is_some()
        || merged.model_provider.is_some();
    Ok(Requirements {
        allowed: any.then(|| {
            ConfigRequirements::builder()
                .maybe_allowed_approval_policies(merged.allowed_approval_policies)
                .maybe_allowed_sandbox_modes(merged.allowed_sandbox_modes)
                .maybe_allowed_web_search_modes(merged.allowed_web_search_modes)
                .maybe_model_provider(merged.model_provider)
                .build()
        }),
        files: read,
    })
}

/// What a request or a configuration write asks for, as far as requirements govern it.
#[derive(Debug, Default)]
pub struct Asked<'a> {
    /// The approval policy asked for (`approvalPolicy`, `approval_policy`).
    pub approval_policy: Option<&'a AskForApproval>,
    /// The sandbox mode asked for (`sandbox`, `sandbox_mode`).
    pub sandbox_mode: Option<SandboxMode>,
    /// The web search mode asked for (`web_search`).
    pub web_search_mode: Option<WebSearchMode>,
    /// The model provider asked for (`modelProvider`, `model_provider`).
    pub model_provider: Option<&'a str>,
}

impl Requirements {
    /// Refuses what `asked` asks for beyond what is allowed; the error names the setting, the
    /// value and the file.
    pub fn check(&self, asked: &Asked<'_>) -> Result<(), String> {
        let Some(allowed) = &self.allowed else {
            return Ok(());
        };
        let files = self
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let refuse = |setting: &str, value: String, allowed: String| {
            Err(format!(
                "{setting} {value} is not allowed by the administrator's requirements ({files}): \
                 allowed are {allowed}"
            ))
        };
        if let (Some(asked), Some(list)) =
            (asked.approval_policy, &allowed.allowed_approval_policies)
            && !list.contains(asked)
        {
            return refuse("approval policy", json(asked), json(list));
        }
        if let (Some(asked), Some(list)) = (asked.sandbox_mode, &allowed.allowed_sandbox_modes)
            && !list.contains(&asked)
        {
            return refuse("sandbox mode", json(&asked), json(list));
        }
        if let (Some(asked), Some(list)) =
            (asked.web_search_mode, &allowed.allowed_web_search_modes)
            && !list.contains(&asked)
        {
            return refuse("web search mode", json(&asked), json(list));
        }
        if let (Some(asked), Some(required)) = (asked.model_provider, &allowed.model_provider)
            && asked != required
        {
            return refuse("model provider", json(&asked), json(required));
        }
        Ok(())
    }
}

/// Refuses configuration edits that set `approval_policy`, `sandbox_mode`, `web_search` or
/// `model_provider` to what the requirements of `home` do not allow.
pub fn check_edits(
    home: &Path,
    edits: &[agentwire_protocol::ConfigEdit],
) -> Result<(), (String, String)> {
    let governed = |key: &str| {
        matches!(
            key,
            "approval_policy" | "sandbox_mode" | "web_search" | "model_provider"
        )
    };
    if !edits.iter().any(|e| governed(&e.key_path)) {
        return Ok(());
    }
    let loaded = load(home).map_err(|reason| (String::new(), reason))?;
    for edit in edits {
        let value = edit.value.clone();
        let approval: Option<AskForApproval> = (edit.key_path == "approval_policy")
            .then(|| serde_json::from_value(value.clone()).ok())
            .flatten();
        let asked = Asked {
            approval_policy: approval.as_ref(),
            sandbox_mode: (edit.key_path == "sandbox_mode")
                .then(|| serde_json::from_value(value.clone()).ok())
                .flatten(),
            web_search_mode: (edit.key_path == "web_search")
                .then(|| serde_json::from_value(value.clone()).ok())
                .flatten(),
            model_provider: (edit.key_path == "model_provider")
                .then(|| value.as_str())
                .flatten(),
        };
        loaded
            .check(&asked)
            .map_err(|reason| (edit.key_path.clone(), reason))?;
    }
    Ok(())
}

/// `value` as JSON text, for messages.
fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(texts: &[&str]) -> (tempfile::TempDir, Vec<PathBuf>) {
        let dir = tempfile::tempdir().expect("scratch");
        let paths = texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let path = dir.path().join(format!("r{i}.toml"));
                std::fs::write(&path, text).expect("write");
                path
            })
            .collect();
        (dir, paths)
    }

    #[test]
    fn no_file_means_no_requirement_and_the_first_file_wins_key_by_key() {
        let none = load_from(&[PathBuf::from("/nonexistent/requirements.toml")]).expect("loads");
        assert_eq!(none.allowed, None);
        let (_dir, paths) = files(&[
            "allowed_sandbox_modes = [\"read-only\"]\n",
            "allowed_sandbox_modes = [\"danger-full-access\"]\nallowed_approval_policies = [\"untrusted\"]\n",
        ]);
        let loaded = load_from(&paths).expect("loads");
        let allowed = loaded.allowed.clone().expect("some");
        assert_eq!(
            allowed.allowed_sandbox_modes,
            Some(vec![SandboxMode::ReadOnly])
        );
        assert_eq!(
            allowed.allowed_approval_policies,
            Some(vec![AskForApproval::Untrusted])
        );
        let refused = loaded
            .check(&Asked {
                sandbox_mode: Some(SandboxMode::DangerFullAccess),
                ..Asked::default()
            })
            .expect_err("refused");
        assert!(refused.contains("\"danger-full-access\""), "{refused}");
        assert!(
            loaded
                .check(&Asked {
                    sandbox_mode: Some(SandboxMode::ReadOnly),
                    approval_policy: Some(&AskForApproval::Untrusted),
                    ..Asked::default()
                })
                .is_ok()
        );
    }

    #[test]
    fn a_file_that_does_not_read_names_itself_and_the_key() {
        let (_dir, paths) = files(&["allowed_sandbox_mode = [\"read-only\"]\n"]);
        let error = load_from(&paths).expect_err("unknown key");
        assert!(error.contains("allowed_sandbox_mode"), "{error}");
        assert!(error.contains("r0.toml"), "{error}");
    }
}
