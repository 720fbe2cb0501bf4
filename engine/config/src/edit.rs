//! Editing the user's `config.toml` in place: each edit changes one key path of the parsed
//! document (`toml_edit`), so comments, ordering and formatting outside it stay byte for byte;
//! the result is written atomically.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use agentwire_protocol::{ConfigEdit, MergeStrategy};
use agentwire_support::atomic_file::sync_dir;
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, TableLike, Value};

use super::keys::split_key_path;

/// Applies `edits` to `document` in order; the error names the edit's key path and the reason.
pub fn apply_edits(document: &mut DocumentMut, edits: &[ConfigEdit]) -> Result<(), String> {
    for edit in edits {
        let path = split_key_path(&edit.key_path)?;
        apply(
            document.as_table_mut(),
            &path,
            &edit.value,
            edit.merge_strategy,
        )
        .map_err(|reason| format!("`{}`: {reason}", edit.key_path))?;
    }
    Ok(())
}

/// Applies one edit at `path` below `table`.
fn apply(
    table: &mut dyn TableLike,
    path: &[String],
    value: &serde_json::Value,
    strategy: MergeStrategy,
) -> Result<(), String> {
    let Some((last, parents)) = path.split_last() else {
        return Err("empty key path".to_owned());
    };
    let mut current: &mut dyn TableLike = table;
    let mut inline = false;
    for (depth, segment) in parents.iter().enumerate() {
        if current.get(segment).is_none() {
            if value.is_null() {
                // Removing something under a table that does not exist: nothing to do.
                return Ok(());
            }
            let new = if inline {
                Item::Value(Value::InlineTable(InlineTable::new()))
            } else {
                let mut new = Table::new();
                new.set_implicit(true);
                Item::Table(new)
            };
            current.insert(segment, new);
        }
        inline |= current.get(segment).is_some_and(Item::is_inline_table);
        let Some(next) = current.get_mut(segment).and_then(Item::as_table_like_mut) else {
            return Err(format!(
                "`{}` holds a value, not a table",
                parents[..=depth].join(".")
            ));
        };
        current = next;
    }
    set(current, last, value, strategy, inline)
}

/// Sets (or, for `null`, removes) `key` of `table`.
fn set(
    table: &mut dyn TableLike,
    key: &str,
    value: &serde_json::Value,
    strategy: MergeStrategy,
    inline: bool,
) -> Result<(), String> {
    if value.is_null() {
        remove_keeping_comments(table, key);
        return Ok(());
    }
    match (table.get_mut(key), value) {
        (Some(existing), serde_json::Value::Object(members)) if existing.is_table_like() => {
            let inline = inline || existing.is_inline_table();
            let Some(existing) = existing.as_table_like_mut() else {
                return Ok(());
            };
            if strategy == MergeStrategy::Replace {
                let stale: Vec<String> = existing
                    .iter()
                    .map(|(k, _)| k.to_owned())
                    .filter(|k| !members.contains_key(k))
                    .collect();
                for k in stale {
                    existing.remove(&k);
                }
            }
            for (k, v) in members {
                set(existing, k, v, strategy, inline)?;
            }
            Ok(())
        }
        (Some(Item::Value(old)), _) => {
            let mut new = to_value(value)?;
            *new.decor_mut() = old.decor().clone();
            *old = new;
            Ok(())
        }
        (Some(old), _) => {
            *old = to_item(value, !inline)?;
            Ok(())
        }
        (None, _) => {
            table.insert(key, to_item(value, !inline)?);
            Ok(())
        }
    }
}

/// Removes `key` of `table`; the comment lines above it move to whatever follows it, so that
/// no comment is lost (a header comment of the file stays the header).
fn remove_keeping_comments(table: &mut dyn TableLike, key: &str) {
    let prefix = table
        .key(key)
        .and_then(|k| k.leaf_decor().prefix())
        .and_then(|p| p.as_str())
        .filter(|p| p.contains('#'))
        .map(str::to_owned);
    let next = table
        .iter()
        .map(|(k, _)| k.to_owned())
        .skip_while(|k| k != key)
        .nth(1);
    table.remove(key);
    let (Some(prefix), Some(next)) = (prefix, next) else {
        return;
    };
    let join = |old: Option<&str>| format!("{prefix}{}", old.unwrap_or_default());
    if let Some(Item::Table(next_table)) = table.get_mut(&next) {
        let joined = join(next_table.decor().prefix().and_then(|p| p.as_str()));
        next_table.decor_mut().set_prefix(joined);
    } else if let Some(mut next_key) = table.key_mut(&next) {
        let joined = join(next_key.leaf_decor().prefix().and_then(|p| p.as_str()));
        next_key.leaf_decor_mut().set_prefix(joined);
    }
}

/// `value` as a document item: objects become `[tables]` when `tables` (else inline).
fn to_item(value: &serde_json::Value, tables: bool) -> Result<Item, String> {
    match value {
        serde_json::Value::Object(members) if tables => {
            let mut table = Table::new();
            for (k, v) in members {
                if !v.is_null() {
                    table.insert(k, to_item(v, true)?);
                }
            }
            Ok(Item::Table(table))
        }
        _ => Ok(Item::Value(to_value(value)?)),
    }
}

/// `value` as a TOML value; `null` has no TOML form.
fn to_value(value: &serde_json::Value) -> Result<Value, String> {
    Ok(match value {
        serde_json::Value::Null => return Err("null cannot be written inside a value".to_owned()),
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::from(i),
            (None, Some(f)) => Value::from(f),
            _ => return Err(format!("{n} does not fit a TOML number")),
        },
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => {
            let mut array = Array::new();
            for item in items {
                array.push(to_value(item)?);
            }
            Value::Array(array)
        }
        serde_json::Value::Object(members) => {
            let mut table = InlineTable::new();
            for (k, v) in members {
                if !v.is_null() {
                    table.insert(k, to_value(v)?);
                }
            }
            Value::InlineTable(table)
        }
    })
}

/// Replaces the file at `path` with `text` atomically (see `atomic_file`), with the old file's
/// mode (0600 for a new file), and makes the rename durable. A symlink is followed: its target
/// is replaced. Returns the path written.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<PathBuf> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(path)?,
        _ => path.to_owned(),
    };
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_owned();
    let mode = std::fs::metadata(&target).map_or(0o600, |m| m.permissions().mode() & 0o7777);
    agentwire_support::atomic_file::replace(&target, text.as_bytes(), Some(mode))?;
    sync_dir(&dir)?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn edit(text: &str, key: &str, value: serde_json::Value, strategy: MergeStrategy) -> String {
        let mut document: DocumentMut = text.parse().expect("toml");
        apply_edits(
            &mut document,
            &[ConfigEdit::builder()
                .key_path(key.to_owned())
                .value(value)
                .merge_strategy(strategy)
                .build()],
        )
        .expect("edit");
        document.to_string()
    }

    const FILE: &str = "# my settings\nmodel = \"a\"   # the model\n\n# sandbox\n[sandbox_workspace_write]\nnetwork_access = false # off\nwritable_roots = [\"/x\"]\n\n[features]\nz = 1\n";

    #[test]
    fn a_scalar_keeps_its_comments_and_everything_else() {
        let out = edit(FILE, "model", json!("b"), MergeStrategy::Replace);
        assert_eq!(out, FILE.replace("model = \"a\"", "model = \"b\""));
        let out = edit(
            FILE,
            "sandbox_workspace_write.network_access",
            json!(true),
            MergeStrategy::Upsert,
        );
        assert_eq!(
            out,
            FILE.replace("network_access = false", "network_access = true")
        );
    }

    #[test]
    fn new_keys_and_tables_are_added_and_null_removes() {
        let out = edit(
            FILE,
            "approval_policy",
            json!("never"),
            MergeStrategy::Replace,
        );
        assert!(
            out.starts_with(
                "# my settings\nmodel = \"a\"   # the model\napproval_policy = \"never\"\n"
            ),
            "{out}"
        );
        let out = edit(
            FILE,
            "shell_environment_policy",
            json!({"inherit": "core", "set": {"A": "1"}}),
            MergeStrategy::Replace,
        );
        assert!(out.starts_with(FILE), "{out}");
        assert!(
            out.contains("[shell_environment_policy]\ninherit = \"core\"\n"),
            "{out}"
        );
        assert!(
            out.contains("[shell_environment_policy.set]\nA = \"1\"\n"),
            "{out}"
        );
        let out = edit(
            FILE,
            "model",
            serde_json::Value::Null,
            MergeStrategy::Replace,
        );
        assert_eq!(out, FILE.replace("model = \"a\"   # the model\n", ""));
    }

    #[test]
    fn upsert_merges_tables_and_replace_replaces_them() {
        let upsert = edit(
            FILE,
            "sandbox_workspace_write",
            json!({"exclude_slash_tmp": true}),
            MergeStrategy::Upsert,
        );
        assert!(upsert.contains("network_access = false # off\nwritable_roots = [\"/x\"]\nexclude_slash_tmp = true\n"), "{upsert}");
        let replace = edit(
            FILE,
            "sandbox_workspace_write",
            json!({"exclude_slash_tmp": true}),
            MergeStrategy::Replace,
        );
        assert!(!replace.contains("network_access"), "{replace}");
        assert!(
            replace.contains("# sandbox\n[sandbox_workspace_write]\nexclude_slash_tmp = true\n"),
            "{replace}"
        );
    }

    #[test]
    fn a_value_in_the_way_is_an_error() {
        let mut document: DocumentMut = FILE.parse().expect("toml");
        let error = apply_edits(
            &mut document,
            &[ConfigEdit::builder()
                .key_path("model.inner".to_owned())
                .value(json!(1))
                .merge_strategy(MergeStrategy::Replace)
                .build()],
        )
        .expect_err("not a table");
        assert!(
            error.contains("`model.inner`") && error.contains("`model`"),
            "{error}"
        );
    }

    #[test]
    fn atomic_writes_keep_the_mode() {
        let dir = std::env::temp_dir().join(format!("agentwire-edit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("config.toml");
        std::fs::write(&path, "a = 1\n").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        write_atomically(&path, "a = 2\n").expect("atomic");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "a = 2\n");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let leftovers = std::fs::read_dir(&dir).expect("list").count();
        assert_eq!(leftovers, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
