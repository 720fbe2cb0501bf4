//! `fs/*`: remote clients browse and edit the workspace through the server. Every path is
//! absolute and must lie inside the roots the server lets `fs/*` use (the working directories
//! and writable roots of the loaded threads); file contents travel base64-encoded. `fs/watch`
//! subscribes the connection to changes of a file or directory, reported as `fs/changed`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::AbsolutePathBuf;

/// Params of `fs/readFile`: read a whole regular file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsReadFileParams {
    /// The file to read, as an absolute path.
    pub path: AbsolutePathBuf,
}

/// Result of `fs/readFile`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsReadFileResponse {
    /// The file's bytes, base64-encoded.
    pub data_base64: String,
}

/// Params of `fs/writeFile`: replace (or create) a file with new contents, atomically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsWriteFileParams {
    /// The file to write, as an absolute path; its directory must exist.
    pub path: AbsolutePathBuf,
    /// The new contents, base64-encoded.
    pub data_base64: String,
}

/// Result of `fs/writeFile`: empty; the new contents are in place.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsWriteFileResponse {}

/// Params of `fs/createDirectory`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsCreateDirectoryParams {
    /// The directory to create, as an absolute path.
    pub path: AbsolutePathBuf,
    /// `true` (the default when absent) to create missing parents too and accept a directory
    /// that already exists; `false` to create exactly one new directory.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub recursive: Option<bool>,
}

/// Result of `fs/createDirectory`: empty; the directory exists.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsCreateDirectoryResponse {}

/// Params of `fs/getMetadata`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsGetMetadataParams {
    /// The path to describe, as an absolute path.
    pub path: AbsolutePathBuf,
}

/// Result of `fs/getMetadata`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsGetMetadataResponse {
    /// Whether the path, symlinks followed, is a directory.
    pub is_directory: bool,
    /// Whether the path, symlinks followed, is a regular file.
    pub is_file: bool,
    /// Whether the path's last component is itself a symbolic link.
    pub is_symlink: bool,
    /// Creation (birth) time in Unix milliseconds; `0` where the filesystem does not record it.
    pub created_at_ms: i64,
    /// Last modification time in Unix milliseconds; `0` when unknown.
    pub modified_at_ms: i64,
}

/// Params of `fs/readDirectory`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsReadDirectoryParams {
    /// The directory to list, as an absolute path.
    pub path: AbsolutePathBuf,
}

/// One entry of a directory listed by `fs/readDirectory`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsReadDirectoryEntry {
    /// The entry's own name (no directory part).
    pub file_name: String,
    /// Whether the entry, symlinks followed, is a directory.
    pub is_directory: bool,
    /// Whether the entry, symlinks followed, is a regular file.
    pub is_file: bool,
}

/// Result of `fs/readDirectory`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
#[derive(Default)]
pub struct FsReadDirectoryResponse {
    /// The directory's entries, `.` and `..` left out.
    #[builder(default)]
    pub entries: Vec<FsReadDirectoryEntry>,
}

/// Params of `fs/remove`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsRemoveParams {
    /// The file, symlink or directory to remove, as an absolute path. A symlink is removed
    /// itself, never what it points to.
    pub path: AbsolutePathBuf,
    /// `true` (the default when absent) to remove a directory with everything in it; `false`
    /// removes only an empty directory.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub recursive: Option<bool>,
    /// `true` (the default when absent) to succeed when nothing exists at `path`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub force: Option<bool>,
}

/// Result of `fs/remove`: empty; nothing exists at the path any more.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsRemoveResponse {}

/// Params of `fs/copy`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsCopyParams {
    /// What to copy: a file, or a directory tree, as an absolute path.
    pub source_path: AbsolutePathBuf,
    /// Where the copy goes, as an absolute path; its directory must exist.
    pub destination_path: AbsolutePathBuf,
    /// Must be `true` to copy a directory; has no effect on a file.
    #[serde(default)]
    #[schemars(with = "bool")]
    #[ts(optional)]
    pub recursive: Option<bool>,
}

/// Result of `fs/copy`: empty; the copy is in place.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsCopyResponse {}

/// Params of `fs/watch`: subscribe this connection to changes of a file or directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsWatchParams {
    /// Id the client picks for the watch, unique among this connection's watches; it names
    /// the watch in `fs/changed` and `fs/unwatch`.
    pub watch_id: String,
    /// The file or directory to watch, as an absolute path.
    pub path: AbsolutePathBuf,
}

/// Result of `fs/watch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsWatchResponse {
    /// The watched path with every symlink resolved: `fs/changed` reports paths under it.
    pub path: AbsolutePathBuf,
}

/// Params of `fs/unwatch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsUnwatchParams {
    /// The id this connection gave the watch in `fs/watch`.
    pub watch_id: String,
}

/// Result of `fs/unwatch`: empty; no `fs/changed` for the watch follows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsUnwatchResponse {}

/// Params of `fs/changed`: something changed under a watch of this connection. Changes that
/// come in a burst are gathered into one notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct FsChangedNotification {
    /// The id the connection gave the watch in `fs/watch`.
    pub watch_id: String,
    /// The paths that changed: the watched file, or entries of the watched directory (the
    /// directory itself when too many changed at once to list).
    #[builder(default)]
    pub changed_paths: Vec<AbsolutePathBuf>,
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::*;

    /// Deserializes `value` into `T`, serializes it back and checks nothing changed.
    fn round_trip<T: Serialize + DeserializeOwned>(value: Value) -> T {
        let parsed: T = serde_json::from_value(value.clone()).expect("value deserializes");
        let back = serde_json::to_value(&parsed).expect("value serializes");
        assert_eq!(back, value);
        parsed
    }

    #[test]
    fn optional_flags_are_left_out_when_absent() {
        let params: FsRemoveParams = round_trip(json!({"path": "/w/a"}));
        assert_eq!((params.recursive, params.force), (None, None));
        let params: FsCopyParams =
            round_trip(json!({"sourcePath": "/w/a", "destinationPath": "/w/b", "recursive": true}));
        assert_eq!(params.recursive, Some(true));
        round_trip::<FsCreateDirectoryParams>(json!({"path": "/w/d", "recursive": false}));
    }

    #[test]
    fn responses_use_the_wire_names() {
        round_trip::<FsGetMetadataResponse>(json!({
            "isDirectory": false, "isFile": true, "isSymlink": false,
            "createdAtMs": 1, "modifiedAtMs": 2,
        }));
        round_trip::<FsReadDirectoryResponse>(json!({
            "entries": [{"fileName": "a", "isDirectory": true, "isFile": false}],
        }));
        round_trip::<FsChangedNotification>(json!({"watchId": "w", "changedPaths": ["/w/a"]}));
        assert_eq!(
            serde_json::to_value(FsCopyResponse {}).expect("serializes"),
            json!({})
        );
    }
}
