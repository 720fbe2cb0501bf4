//! `config/read`, `config/value/write`, `config/batchWrite`, and the `configWarning`s sent
//! after the handshake.
//!
//! Writes edit only the user file, `$AGENTWIRE_HOME/config.toml` (a `filePath` naming any other
//! file is refused: project files belong to their repository). A refused write changes
//! nothing; its error is `-32600` with `data.config_write_error_code` one of
//! `configLayerReadonly` (another file), `configVersionConflict` (`expectedVersion` is not the
//! file's version), `configSchemaUnknownKey` (the result would hold an unknown key) or
//! `configValidationError` (a value of the wrong type, a bad key path, a file that does not
//! parse), and `data.keyPath` the key at fault. A file that cannot be written is `-32603`
//! naming it. Writers are serialised, in this process by a mutex and across processes by an
//! advisory lock on `.config.toml.lock` beside the file, so a version check and the write that
//! follows it cannot interleave with another writer.

// On the async path: no blocking call here (see clippy.toml); code that runs on the blocking
// pool or a thread of its own says so where it allows one.
#![deny(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentwire_config::edit::{apply_edits, write_atomically};
use agentwire_config::keys::{Problem, check_text, split_key_path};
use agentwire_config::layers::{absolute, version_of};
use agentwire_config::overrides::toml_to_json;
use agentwire_config::store::Store;
use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{ConfigBatchWrite, ConfigRead, ConfigValueWrite, ConfigWarning};
use agentwire_protocol::{
    AbsolutePathBuf, ConfigBatchWriteParams, ConfigEdit, ConfigLayer, ConfigLayerSource,
    ConfigReadParams, ConfigReadResponse, ConfigValueWriteParams, ConfigWarningNotification,
    ConfigWriteResponse, OverriddenMetadata, WriteStatus,
};
use agentwire_runtime::{HandlerError, NotificationContext, RequestContext};
use serde_json::json;
use toml_edit::DocumentMut;

/// Serves `config/read`.
pub(crate) async fn read(
    store: &Arc<Store>,
    _context: RequestContext,
    params: ConfigReadParams,
) -> Result<ConfigReadResponse, HandlerError> {
    let cwd = params.cwd.as_deref().map(absolute);
    // The layers' files are looked at (and read when they changed) on the blocking pool.
    let store = store.clone();
    let effective =
        crate::pool::blocking::<ConfigRead, _, _>(move || Ok(store.effective(cwd.as_deref())))
            .await?;
    let layers = params.include_layers.unwrap_or(false).then(|| {
        effective
            .layers
            .iter()
            .rev()
            .map(|layer| {
                ConfigLayer::builder()
                    .name(layer.source.clone())
                    .version(layer.version.clone())
                    .config(agentwire_config::overrides::table_to_json(&layer.table))
                    .maybe_disabled_reason(layer.disabled_reason.clone())
                    .build()
            })
            .collect()
    });
    Ok(ConfigReadResponse::builder()
        .config(effective.wire_config())
        .origins(effective.origins.clone())
        .maybe_layers(layers)
        .build())
}

/// Serves `config/value/write`.
pub(crate) async fn value_write(
    store: &Arc<Store>,
    _context: RequestContext,
    params: ConfigValueWriteParams,
) -> Result<ConfigWriteResponse, HandlerError> {
    let edit = ConfigEdit::builder()
        .key_path(params.key_path)
        .value(params.value)
        .merge_strategy(params.merge_strategy)
        .build();
    let store = store.clone();
    crate::pool::blocking::<ConfigValueWrite, _, _>(move || {
        write(
            &store,
            ConfigValueWrite::NAME,
            &[edit],
            params.file_path.as_deref(),
            params.expected_version.as_deref(),
        )
    })
    .await
}

/// Serves `config/batchWrite`.
pub(crate) async fn batch_write(
    store: &Arc<Store>,
    _context: RequestContext,
    params: ConfigBatchWriteParams,
) -> Result<ConfigWriteResponse, HandlerError> {
    let store = store.clone();
    crate::pool::blocking::<ConfigBatchWrite, _, _>(move || {
        write(
            &store,
            ConfigBatchWrite::NAME,
            &params.edits,
            params.file_path.as_deref(),
            params.expected_version.as_deref(),
        )
    })
    .await
}

/// A refused write: `-32600` with the reason code and the key path in `data`.
fn refused(code: &str, key_path: Option<&str>, message: String) -> HandlerError {
    HandlerError::invalid_request(message)
        .with_data(json!({"config_write_error_code": code, "keyPath": key_path}))
}

/// Applies `edits` to the user file and writes it, or refuses and writes nothing. Takes locks
/// and touches the disk: call it off the async workers.
#[allow(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: every caller goes through `pool::blocking`"
)]
pub(crate) fn write(
    store: &Store,
    method: &str,
    edits: &[ConfigEdit],
    file_path: Option<&str>,
    expected_version: Option<&str>,
) -> Result<ConfigWriteResponse, HandlerError> {
    let user_path = store.user_path().to_owned();
    if let Some(requested) = file_path
        && !same_file(Path::new(requested), &user_path)
    {
        return Err(refused(
            "configLayerReadonly",
            None,
            format!(
                "{method}: filePath {requested} is not writable through this method; only the \
                 user configuration {} is",
                user_path.display()
            ),
        ));
    }
    for edit in edits {
        split_key_path(&edit.key_path).map_err(|reason| {
            refused(
                "configValidationError",
                Some(&edit.key_path),
                format!("{method}: keyPath {reason}"),
            )
        })?;
    }
    if let Some(home) = user_path.parent() {
        agentwire_config::requirements::check_edits(home, edits).map_err(|(key, reason)| {
            refused(
                "configValidationError",
                (!key.is_empty()).then_some(key.as_str()),
                format!("{method}: refused, nothing written: {reason}"),
            )
        })?;
    }
    let _writer = store.write_guard();
    // Other processes writing the same file (a second server on this home) wait too.
    let _file_lock = lock_file(&user_path);
    let current = match std::fs::read(&user_path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => {
            return Err(HandlerError::internal(format!(
                "{method}: cannot read {}: {error}",
                user_path.display()
            )));
        }
    };
    let version = version_of(&current);
    if let Some(expected) = expected_version
        && expected != version
    {
        return Err(refused(
            "configVersionConflict",
            None,
            format!(
                "{method}: {} changed since version {expected} was read (it is now {version}); \
                 read it again and retry",
                user_path.display()
            ),
        ));
    }
    let text = String::from_utf8(current).map_err(|_| {
        refused(
            "configValidationError",
            None,
            format!("{method}: {} is not UTF-8", user_path.display()),
        )
    })?;
    let before = check_text(&text);
    if before.table.is_none() {
        let problem = before
            .problems
            .first()
            .map(Problem::text)
            .unwrap_or_default();
        return Err(refused(
            "configValidationError",
            None,
            format!(
                "{method}: {} does not parse ({problem}); fix it by hand first",
                user_path.display()
            ),
        ));
    }
    let mut document: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        refused("configValidationError", None, format!("{method}: {e}"))
    })?;
    apply_edits(&mut document, edits)
        .map_err(|reason| refused("configValidationError", None, format!("{method}: {reason}")))?;
    let new_text = document.to_string();
    let after = check_text(&new_text);
    let new_problem = after.problems.iter().find(|p| {
        !before.problems.iter().any(|old| {
            old.key_path == p.key_path && old.summary == p.summary && old.details == p.details
        })
    });
    if let Some(problem) = new_problem {
        let code = if problem.unknown_key {
            "configSchemaUnknownKey"
        } else {
            "configValidationError"
        };
        return Err(refused(
            code,
            problem.key_path.as_deref(),
            format!("{method}: refused, nothing written: {}", problem.text()),
        ));
    }
    let written = write_atomically(&user_path, &new_text).map_err(|error| {
        HandlerError::internal(format!(
            "{method}: cannot write {}: {error}",
            user_path.display()
        ))
    })?;
    store.invalidate();
    drop(_writer);
    let overridden_metadata = overridden(store, edits);
    Ok(ConfigWriteResponse::builder()
        .status(if overridden_metadata.is_some() {
            WriteStatus::OkOverridden
        } else {
            WriteStatus::Ok
        })
        .file_path(AbsolutePathBuf(written.to_string_lossy().into_owned()))
        .version(version_of(new_text.as_bytes()))
        .maybe_overridden_metadata(overridden_metadata)
        .build())
}

/// Which higher layer (profile, `-c` flag) decides the first written key that it sets.
fn overridden(store: &Store, edits: &[ConfigEdit]) -> Option<OverriddenMetadata> {
    let effective = store.effective(None);
    for edit in edits {
        let Ok(path) = split_key_path(&edit.key_path) else {
            continue;
        };
        let Some((last, parents)) = path.split_last() else {
            continue;
        };
        let parents: Vec<&str> = parents.iter().map(String::as_str).collect();
        let dotted = agentwire_config::keys::dotted(&parents, last);
        let overriding = effective.origins.iter().find(|(key, origin)| {
            (**key == dotted || key.starts_with(&format!("{dotted}.")))
                && !matches!(origin.name, ConfigLayerSource::User { profile: None, .. })
        });
        if let Some((_, origin)) = overriding {
            let mut value = Some(toml::Value::Table(effective.merged.clone()));
            for segment in &path {
                value = value.and_then(|v| v.get(segment).cloned());
            }
            return Some(
                OverriddenMetadata::builder()
                    .message(format!(
                        "`{}` was written, but {} sets it, and that wins",
                        edit.key_path,
                        describe(&origin.name)
                    ))
                    .overriding_layer(origin.clone())
                    .effective_value(value.as_ref().map_or(serde_json::Value::Null, toml_to_json))
                    .build(),
            );
        }
    }
    None
}

/// A layer in words.
fn describe(source: &ConfigLayerSource) -> String {
    match source {
        ConfigLayerSource::SessionFlags => "a -c flag of the server's command line".to_owned(),
        ConfigLayerSource::User {
            profile: Some(profile),
            ..
        } => format!("the selected profile `{profile}`"),
        ConfigLayerSource::Project {
            dot_codex_folder, ..
        } => {
            format!("the project configuration in {}", dot_codex_folder.0)
        }
        other => format!("the {other:?} layer"),
    }
}

/// An exclusive advisory lock on `<dir>/.config.toml.lock` beside `path`, held while the
/// returned file is open; `None` when it cannot be taken (the write then relies on the
/// in-process lock and `expectedVersion`).
#[allow(
    clippy::disallowed_methods,
    reason = "called by `write`, on the blocking pool"
)]
fn lock_file(path: &Path) -> Option<std::fs::File> {
    let dir = path.parent()?;
    std::fs::create_dir_all(dir).ok()?;
    let name = path.file_name()?.to_string_lossy();
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(format!(".{name}.lock")))
        .ok()?;
    file.lock().ok()?;
    Some(file)
}

/// Whether `requested` names the same file as `user` (after making it absolute and resolving
/// symlinks where the files exist).
#[allow(
    clippy::disallowed_methods,
    reason = "called by `write`, on the blocking pool"
)]
fn same_file(requested: &Path, user: &Path) -> bool {
    let resolve = |p: &Path| -> PathBuf {
        let p = absolute(&p.to_string_lossy());
        std::fs::canonicalize(&p)
            .or_else(|_| {
                p.parent()
                    .and_then(|d| Some(std::fs::canonicalize(d).ok()?.join(p.file_name()?)))
                    .ok_or(())
            })
            .unwrap_or(p)
    };
    resolve(requested) == resolve(user)
}

/// Sends a `configWarning` to the connection for every problem in the configuration as the
/// server sees it (its own working directory's project layers included).
pub(crate) fn send_warnings(store: &Store, context: &NotificationContext) {
    let cwd = absolute(".");
    let effective = store.effective(Some(&cwd));
    for problem in &effective.problems {
        context.peer.notify::<ConfigWarning>(
            &ConfigWarningNotification::builder()
                .summary(problem.summary.clone())
                .maybe_details(problem.details.clone())
                .maybe_path(
                    problem
                        .path
                        .as_ref()
                        .map(|p| p.to_string_lossy().into_owned()),
                )
                .maybe_range(problem.range.clone())
                .build(),
        );
    }
}
