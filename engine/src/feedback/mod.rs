//! `feedback/save`: a feedback report written as a ZIP file at `savePath` on the server's
//! machine (the reference server uploads the same report with `feedback/upload`; this one
//! leaves sending it to the user).
//!
//! The archive holds:
//! - `report.json`: the classification, the reason, the tags, the thread id, when and by which
//!   server the report was made, and the platform;
//! - `thread.json`, when `threadId` names a thread: its metadata and settings as
//!   `thread/read` and `thread/settings/updated` show them, and every turn with its items;
//! - `attachments/NNNN/<name>`: with `includeLogs`, the thread's rollout file (its full
//!   history on disk, where the store keeps one); and each of `extraLogFiles`;
//! - `manifest.json`: one entry per attachment (entry, file name, content type, where it came
//!   from, whether it was cut at [`MAX_ATTACHMENT_BYTES`]).
//!
//! `savePath` must be absolute, and nothing may be there yet: the archive is written to a
//! temporary file beside it and linked into place, so it appears whole or not at all and never
//! replaces a file. `extraLogFiles` must be absolute paths of regular files outside the
//! agentwire home and the server's other private paths (where sign-in secrets live).
//! Refusals name the member at fault: -32600 for `savePath` (as the reference server), -32602
//! for `extraLogFiles[i]`; a thread that does not exist is -32600 naming it.

mod archive;

use std::path::{Path, PathBuf};

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::FeedbackSave;
use agentwire_protocol::{
    FeedbackSaveParams, FeedbackSaveResponse, LegacyAppPathString, ThreadReadParams,
};
use agentwire_runtime::HandlerError;
use serde_json::{Value, json};

use crate::Engine;
use crate::pool::{blocking, stored};

/// Most bytes of one attached file put in the report (the first ones).
pub(crate) const MAX_ATTACHMENT_BYTES: u64 = 64 * 1024 * 1024;

/// One attached file.
struct Attachment {
    file_name: String,
    content_type: &'static str,
    source: String,
    bytes: Vec<u8>,
    truncated: bool,
}

/// The content type a log file is shown as.
fn content_type(name: &str) -> &'static str {
    if name.ends_with(".json") {
        "application/json"
    } else if name.ends_with(".jsonl") {
        "application/jsonl"
    } else if name.ends_with(".gz") {
        "application/gzip"
    } else {
        "text/plain"
    }
}

/// Reads `path` (a regular file) for the report.
fn attach(path: &Path, field: &str) -> Result<Attachment, HandlerError> {
    let (bytes, truncated) =
        agentwire_support::regular_file::read_regular(path, MAX_ATTACHMENT_BYTES).map_err(
            |error| {
                HandlerError::invalid_params(
                    FeedbackSave::NAME,
                    format!(
                        "{field}: {} cannot be read as a regular file: {error}",
                        path.display()
                    ),
                )
            },
        )?;
    let file_name = path
        .file_name()
        .map_or_else(|| "file".to_owned(), |n| n.to_string_lossy().into_owned());
    Ok(Attachment {
        content_type: content_type(&file_name),
        file_name,
        source: path.display().to_string(),
        bytes,
        truncated,
    })
}

/// Whether `path` is, or is inside, one of `private` (both resolved where they exist).
fn is_private(path: &Path, private: &[PathBuf]) -> bool {
    let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    private.iter().any(|p| {
        let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        resolved.starts_with(&p) || path.starts_with(&p)
    })
}

/// Writes `bytes` at `path`, which must not exist: through a temporary file beside it, linked
/// into place (so the file appears whole, and an existing one is never replaced).
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = path.parent().unwrap_or(Path::new("/"));
    let temporary = dir.join(format!(".feedback-{}.tmp", uuid::Uuid::now_v7()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::hard_link(&temporary, path)
    })();
    let _ = std::fs::remove_file(&temporary);
    result
}

/// The platform, for the report.
fn platform() -> Value {
    json!({"os": std::env::consts::OS, "arch": std::env::consts::ARCH, "family": std::env::consts::FAMILY})
}

/// Now, in Unix seconds.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// `feedback/save`.
pub(crate) async fn save(
    engine: &Engine,
    params: FeedbackSaveParams,
) -> Result<FeedbackSaveResponse, HandlerError> {
    let method = FeedbackSave::NAME;
    let save_path = PathBuf::from(&params.save_path.0);
    if !save_path.is_absolute() || params.save_path.0.contains('\0') {
        return Err(HandlerError::invalid_request(format!(
            "{method}: savePath {:?} is not an absolute path on the server's machine",
            params.save_path.0
        )));
    }
    let extra: Vec<PathBuf> = params
        .extra_log_files
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(PathBuf::from)
        .collect();
    if let Some((i, path)) = extra.iter().enumerate().find(|(_, p)| !p.is_absolute()) {
        return Err(HandlerError::invalid_params(
            method,
            format!(
                "extraLogFiles[{i}]: {} is not an absolute path",
                path.display()
            ),
        ));
    }
    // The thread, as `thread/read` shows it with its turns, and its settings.
    let thread = match params.thread_id.clone() {
        Some(id) => Some(
            stored::<FeedbackSave, _, _>(engine.threads.clone(), move |t| {
                let settings = t
                    .snapshot(&id)
                    .map(|(summary, _)| crate::thread_settings::wire(&summary.meta.settings))?;
                let read = t.read(
                    ThreadReadParams::builder()
                        .thread_id(id)
                        .include_turns(true)
                        .build(),
                )?;
                Ok((read.thread, settings))
            })
            .await?,
        ),
        None => None,
    };
    let mut private = vec![engine.config.home.clone()];
    private.extend(engine.config.private_paths.iter().cloned());
    let report_id = params
        .thread_id
        .clone()
        .unwrap_or_else(|| format!("no-active-thread-{}", uuid::Uuid::now_v7()));
    blocking::<FeedbackSave, _, _>(move || {
        let mut attachments = Vec::new();
        if params.include_logs
            && let Some(rollout) = thread.as_ref().and_then(|(t, _)| t.path.clone())
        {
            // A compressed rollout is attached as its `.gz`.
            let rollout = agentwire_store::compressed::existing_form(Path::new(&rollout));
            attachments.push(attach(&rollout, "threadId")?);
        }
        for (i, path) in extra.iter().enumerate() {
            let field = format!("extraLogFiles[{i}]");
            if is_private(path, &private) {
                return Err(HandlerError::invalid_params(
                    method,
                    format!(
                        "{field}: {} is inside the server's private files (its home holds \
                         sign-in secrets) and is not put in reports",
                        path.display()
                    ),
                ));
            }
            attachments.push(attach(path, &field)?);
        }
        let at = now();
        let report = json!({
            "id": report_id,
            "classification": params.classification,
            "reason": params.reason,
            "tags": params.tags.clone().unwrap_or_default(),
            "threadId": params.thread_id,
            "includeLogs": params.include_logs,
            "createdAt": at,
            "server": {"name": "agentwire", "version": env!("CARGO_PKG_VERSION")},
            "platform": platform(),
        });
        let mut zip = archive::Archive::new(at);
        let unwritable = |error: archive::ArchiveError| {
            HandlerError::internal(format!(
                "{method}: cannot write the report archive: {error}"
            ))
        };
        let pretty = |value: &Value| serde_json::to_vec_pretty(value).unwrap_or_default();
        zip.add("report.json", &pretty(&report))
            .map_err(unwritable)?;
        if let Some((thread, settings)) = &thread {
            let value = json!({"thread": thread, "settings": settings});
            zip.add("thread.json", &pretty(&value))
                .map_err(unwritable)?;
        }
        let mut manifest = Vec::new();
        for (n, attachment) in attachments.iter().enumerate() {
            let entry = format!("attachments/{n:04}/{}", attachment.file_name);
            zip.add(&entry, &attachment.bytes).map_err(unwritable)?;
            manifest.push(json!({
                "entry": entry,
                "filename": attachment.file_name,
                "contentType": attachment.content_type,
                "source": attachment.source,
                "truncated": attachment.truncated,
            }));
        }
        zip.add("manifest.json", &pretty(&Value::Array(manifest)))
            .map_err(unwritable)?;
        let bytes = zip.finish().map_err(unwritable)?;
        write_new(&save_path, &bytes).map_err(|error| {
            let message = if error.kind() == std::io::ErrorKind::AlreadyExists {
                format!(
                    "{method}: savePath {} already exists; give a path where nothing is yet",
                    save_path.display()
                )
            } else {
                format!(
                    "{method}: savePath {} cannot be written: {error}",
                    save_path.display()
                )
            };
            HandlerError::invalid_request(message)
        })?;
        Ok(FeedbackSaveResponse::builder()
            .saved_path(LegacyAppPathString(save_path.display().to_string()))
            .thread_id(report_id)
            .build())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_never_replaces_one() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("r.zip");
        write_new(&path, b"one").expect("first");
        let again = write_new(&path, b"two").expect_err("exists");
        assert_eq!(again.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&path).expect("read"), b"one");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 1, "no temporary file is left: {left:?}");
    }

    #[test]
    fn private_paths_are_recognised() {
        let dir = tempfile::tempdir().expect("dir");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::write(home.join("auth.json"), "{}").expect("auth");
        let private = vec![home.clone()];
        assert!(is_private(&home.join("auth.json"), &private));
        assert!(is_private(&home.join("missing"), &private));
        assert!(!is_private(&dir.path().join("log.txt"), &private));
    }
}
