//! Projects: named groups of threads with the folders they work in, kept by the server in a
//! user-chosen order (`project/list|read|create|import|update|move|delete`). `project/changed`
//! says a project was created, changed or deleted; `thread/project/updated` says a thread was
//! filed under a project or taken out of one.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{AbsolutePathBuf, SortDirection};

/// A project as the server keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct Project {
    /// When the project was made (Unix seconds).
    pub created_at: i64,
    /// The server's id for the project (a UUIDv7); it never changes.
    pub id: String,
    /// Free-form string pairs the client keeps with the project.
    pub metadata: BTreeMap<String, String>,
    /// The name shown for the project.
    pub name: String,
    /// The latest `recencyAt` of the project's threads that are not archived (Unix seconds);
    /// `null` when it has none.
    #[serde(default)]
    pub recency_at: Option<i64>,
    /// The folders the project works in, in the order given.
    pub roots: Vec<ProjectRoot>,
    /// When the project's name, roots or metadata last changed (Unix seconds).
    pub updated_at: i64,
}

/// One folder of a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ProjectRoot {
    /// The folder: an absolute path on the server's machine (it need not exist).
    pub path: AbsolutePathBuf,
}

impl ProjectRoot {
    /// The root at `path`.
    pub fn at(path: impl Into<String>) -> Self {
        Self {
            path: AbsolutePathBuf(path.into()),
        }
    }
}

/// What `project/list` orders by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ProjectSortKey {
    /// The order the user gave the projects (`project/move`); new projects come last.
    Position,
    /// The projects' `recencyAt`; projects without threads come after all the others.
    RecencyAt,
}

/// How a project changed (`project/changed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ProjectChangeType {
    /// It was made (`project/create`, `project/import`).
    Created,
    /// Its name, roots or metadata changed, or it moved in the order.
    Updated,
    /// It was deleted.
    Deleted,
}

/// Params of `project/list`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProjectListParams {
    /// The `nextCursor` of an earlier page (with the same sort); absent for the first page.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub cursor: Option<String>,
    /// Most projects in this page; absent lets the server choose.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub limit: Option<u32>,
    /// Which way to order; only with `sortKey`. Absent means `asc` for `position` and `desc`
    /// for `recencyAt`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sort_direction: Option<SortDirection>,
    /// What to order by; absent means `position`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sort_key: Option<ProjectSortKey>,
}

/// Result of `project/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ProjectListResponse {
    /// The projects of this page, in the order asked for.
    pub data: Vec<Project>,
    /// Send as `cursor` (with the same sort) for the next page; `null` when this was the last.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// Params of `project/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProjectReadParams {
    /// The project to read.
    pub project_id: String,
}

/// Result of `project/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ProjectReadResponse {
    /// The project.
    pub project: Project,
}

/// Params of `project/create`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProjectCreateParams {
    /// The client's key for this creation: asking again with a key the server already made a
    /// project for answers that project and makes no other.
    pub idempotency_key: String,
    /// String pairs to keep with the project; absent for none.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub metadata: Option<BTreeMap<String, String>>,
    /// The project's name; must not be empty.
    pub name: String,
    /// The project's folders (absolute paths, each at most once).
    pub roots: Vec<ProjectRoot>,
}

/// Result of `project/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ProjectCreateResponse {
    /// The project made (or, for a key used before, the one made then).
    pub project: Project,
}

/// Params of `project/import`: makes a project as `project/create` does and files existing
/// threads under it.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProjectImportParams {
    /// As for `project/create`.
    pub idempotency_key: String,
    /// As for `project/create`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub metadata: Option<BTreeMap<String, String>>,
    /// As for `project/create`.
    pub name: String,
    /// As for `project/create`.
    pub roots: Vec<ProjectRoot>,
    /// Threads to file under the project (taking each out of any project it was in); absent
    /// for none. Every one must exist.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub threads: Option<Vec<String>>,
}

/// Result of `project/import`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ProjectImportResponse {
    /// The project made, with its threads counted in `recencyAt`.
    pub project: Project,
}

/// Params of `project/update`: members left out keep their value.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProjectUpdateParams {
    /// New metadata, replacing all of it (`{}` clears it).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub metadata: Option<BTreeMap<String, String>>,
    /// New name; must not be empty.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub name: Option<String>,
    /// The project to change.
    pub project_id: String,
    /// New folders, replacing all of them.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub roots: Option<Vec<ProjectRoot>>,
}

/// Result of `project/update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ProjectUpdateResponse {
    /// The project as it now is.
    pub project: Project,
}

/// Params of `project/move`: changes the project's place in the user's order.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProjectMoveParams {
    /// The project to put it just before; absent or `null` puts it last.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub before_project_id: Option<String>,
    /// The project to move.
    pub project_id: String,
}

/// Result of `project/move`: an empty object once the order is saved.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ProjectMoveResponse {}

/// Params of `project/delete`: deletes the project; its threads stay, filed under none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProjectDeleteParams {
    /// The project to delete.
    pub project_id: String,
}

/// Result of `project/delete`: an empty object once it is gone.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
pub struct ProjectDeleteResponse {}

/// Params of `project/changed`: a project was made, changed or deleted; read it (or the list)
/// again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ProjectChangedNotification {
    /// What happened to it.
    pub change_type: ProjectChangeType,
    /// The project.
    pub project_id: String,
}

/// Params of `thread/project/updated`: a thread was filed under a project or taken out of one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = thread_project_updated_required_nullable)]
#[non_exhaustive]
#[derive(bon::Builder)]
#[builder(on(String, into))]
pub struct ThreadProjectUpdatedNotification {
    /// The project the thread is filed under now; always sent, `null` when none.
    pub project_id: Option<String>,
    /// The thread.
    pub thread_id: String,
}

#[cfg(feature = "schema")]
/// Schema transform: `projectId` of [`ThreadProjectUpdatedNotification`] is always present,
/// possibly `null`.
fn thread_project_updated_required_nullable(schema: &mut schemars::Schema) {
    crate::serde_util::require_nullable(schema, &["projectId"]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_serialises_with_null_recency_and_reads_back() {
        let project = Project::builder()
            .created_at(1)
            .id("p")
            .metadata(BTreeMap::from([("k".to_owned(), "v".to_owned())]))
            .name("P")
            .roots(vec![ProjectRoot::at("/a")])
            .updated_at(2)
            .build();
        let json = serde_json::to_value(&project).expect("serialises");
        assert_eq!(
            json,
            serde_json::json!({"createdAt":1,"id":"p","metadata":{"k":"v"},"name":"P",
                "recencyAt":null,"roots":[{"path":"/a"}],"updatedAt":2})
        );
        let back: Project = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, project);
    }

    #[test]
    fn optional_params_are_left_out_and_the_thread_project_is_always_sent() {
        let params = ProjectUpdateParams::builder().project_id("p").build();
        assert_eq!(
            serde_json::to_value(&params).expect("serialises"),
            serde_json::json!({"projectId":"p"})
        );
        let note = ThreadProjectUpdatedNotification::builder()
            .thread_id("t")
            .build();
        assert_eq!(
            serde_json::to_value(&note).expect("serialises"),
            serde_json::json!({"projectId":null,"threadId":"t"})
        );
        let key: ProjectSortKey = serde_json::from_str("\"recencyAt\"").expect("reads");
        assert_eq!(key, ProjectSortKey::RecencyAt);
    }
}
