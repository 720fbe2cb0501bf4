//! Projects (`project/list|read|create|import|update|move|delete`), kept in
//! `organisation/projects.json` in the user's order, each with the threads filed under it. A
//! project's `recencyAt` is worked out when it is read, from the index rows of its threads
//! that are not archived. `project/changed` follows every change of a project;
//! `thread/project/updated` every thread filed under a project or taken out of one.

use std::collections::{BTreeMap, HashMap};

use agentwire_protocol::methods::{
    ProjectChanged, ProjectCreate, ProjectDelete, ProjectImport, ProjectList, ProjectMove,
    ProjectRead, ProjectUpdate, ThreadProjectUpdated,
};
use agentwire_protocol::{
    Project, ProjectChangeType, ProjectChangedNotification, ProjectCreateParams,
    ProjectCreateResponse, ProjectDeleteParams, ProjectDeleteResponse, ProjectImportParams,
    ProjectImportResponse, ProjectListParams, ProjectListResponse, ProjectMoveParams,
    ProjectMoveResponse, ProjectReadParams, ProjectReadResponse, ProjectRoot, ProjectSortKey,
    ProjectUpdateParams, ProjectUpdateResponse, SortDirection, ThreadProjectUpdatedNotification,
};
use agentwire_runtime::{HandlerError, Hub, RequestContext};
use agentwire_store::error::ThreadError;
use agentwire_store::meta::{check_cwd, new_id, now};
use serde::{Deserialize, Serialize};

use super::state::{VERSION, Versioned};
use super::{not_blank, page_after, run};
use crate::Engine;
use crate::threads::Threads;

/// `organisation/projects.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProjectsFile {
    version: u32,
    /// The projects in the user's order.
    #[serde(default)]
    projects: Vec<StoredProject>,
}

impl Default for ProjectsFile {
    fn default() -> Self {
        Self {
            version: VERSION,
            projects: Vec::new(),
        }
    }
}

impl Versioned for ProjectsFile {
    fn version(&self) -> u32 {
        self.version
    }
}

/// One project as the file keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredProject {
    id: String,
    name: String,
    roots: Vec<String>,
    #[serde(default)]
    metadata: BTreeMap<String, String>,
    created_at: i64,
    updated_at: i64,
    /// The key of the `project/create` or `project/import` that made it.
    idempotency_key: String,
    /// The threads filed under it, in the order they were filed.
    #[serde(default)]
    threads: Vec<String>,
}

impl ProjectsFile {
    /// Takes thread `id` out of every project; the projects it was in.
    pub(crate) fn forget(&mut self, id: &str) -> Vec<String> {
        let mut left = Vec::new();
        for project in &mut self.projects {
            if project.threads.iter().any(|t| t == id) {
                project.threads.retain(|t| t != id);
                left.push(project.id.clone());
            }
        }
        left
    }

    fn find(&self, id: &str) -> Result<&StoredProject, ThreadError> {
        self.projects
            .iter()
            .find(|p| p.id == id)
            .ok_or_else(|| unknown(id))
    }

    fn find_mut(&mut self, id: &str) -> Result<&mut StoredProject, ThreadError> {
        self.projects
            .iter_mut()
            .find(|p| p.id == id)
            .ok_or_else(|| unknown(id))
    }
}

/// Which project each thread is filed under.
pub(crate) fn thread_projects(file: &ProjectsFile) -> HashMap<String, String> {
    file.projects
        .iter()
        .flat_map(|p| p.threads.iter().map(|t| (t.clone(), p.id.clone())))
        .collect()
}

fn unknown(id: &str) -> ThreadError {
    ThreadError::InvalidParams(format!("projectId: no project {id}"))
}

/// The project `stored` as the wire shows it, its `recencyAt` from its threads' index rows.
fn wire(threads: &Threads, stored: &StoredProject) -> Result<Project, ThreadError> {
    let mut recency = None;
    for id in &stored.threads {
        if let Some(standing) = threads.standing(id)?
            && !standing.archived
        {
            recency = recency.max(Some(standing.updated_at));
        }
    }
    Ok(Project::builder()
        .created_at(stored.created_at)
        .id(stored.id.clone())
        .metadata(stored.metadata.clone())
        .name(stored.name.clone())
        .maybe_recency_at(recency)
        .roots(stored.roots.iter().map(ProjectRoot::at).collect())
        .updated_at(stored.updated_at)
        .build())
}

/// Checks `roots` (absolute, each once) and gives their paths.
fn checked_roots(roots: &[ProjectRoot]) -> Result<Vec<String>, ThreadError> {
    let mut paths: Vec<String> = Vec::with_capacity(roots.len());
    for (at, root) in roots.iter().enumerate() {
        let path = &root.path.0;
        check_cwd(&format!("roots[{at}].path"), path, false).map_err(ThreadError::InvalidParams)?;
        if paths.contains(path) {
            return Err(ThreadError::InvalidParams(format!(
                "roots[{at}].path: {path} is listed twice"
            )));
        }
        paths.push(path.clone());
    }
    Ok(paths)
}

/// What `project/create` and `project/import` ask for.
struct NewProject {
    idempotency_key: String,
    name: String,
    roots: Vec<ProjectRoot>,
    metadata: Option<BTreeMap<String, String>>,
    threads: Vec<String>,
}

/// What making a project did: the project, whether it is new, and the threads filed under it.
struct Made {
    project: Project,
    created: bool,
    filed: Vec<String>,
}

/// Makes the project `new` asks for, or finds the one made before with its key.
fn make(
    threads: &Threads,
    file: &super::State<ProjectsFile>,
    new: NewProject,
) -> Result<Made, ThreadError> {
    not_blank("idempotencyKey", &new.idempotency_key)?;
    not_blank("name", &new.name)?;
    let roots = checked_roots(&new.roots)?;
    let mut filed: Vec<String> = Vec::new();
    for (at, id) in new.threads.iter().enumerate() {
        if threads.standing(id)?.is_none() {
            return Err(ThreadError::InvalidParams(format!(
                "threads[{at}]: no thread {id}"
            )));
        }
        if !filed.contains(id) {
            filed.push(id.clone());
        }
    }
    let (stored, created) = file.update(|file| {
        if let Some(made) = file
            .projects
            .iter()
            .find(|p| p.idempotency_key == new.idempotency_key)
        {
            return Ok((made.clone(), false));
        }
        for id in &filed {
            file.forget(id);
        }
        let at = now();
        let stored = StoredProject {
            id: new_id(),
            name: new.name.trim().to_owned(),
            roots,
            metadata: new.metadata.unwrap_or_default(),
            created_at: at,
            updated_at: at,
            idempotency_key: new.idempotency_key,
            threads: filed.clone(),
        };
        file.projects.push(stored.clone());
        Ok((stored, true))
    })?;
    Ok(Made {
        project: wire(threads, &stored)?,
        created,
        filed: if created { filed } else { Vec::new() },
    })
}

/// Sends `project/changed` for `project_id` once the request is answered.
fn changed(context: &RequestContext, project_id: String, change: ProjectChangeType) {
    let hub = context.peer.hub().clone();
    context.after_response(move || {
        hub.broadcast::<ProjectChanged>(
            &ProjectChangedNotification::builder()
                .change_type(change)
                .project_id(project_id)
                .build(),
        );
    });
}

/// Sends `thread/project/updated` for each of `threads`.
fn filed(hub: &Hub, threads: &[String], project_id: Option<&str>) {
    for thread_id in threads {
        hub.broadcast::<ThreadProjectUpdated>(
            &ThreadProjectUpdatedNotification::builder()
                .thread_id(thread_id.clone())
                .maybe_project_id(project_id.map(str::to_owned))
                .build(),
        );
    }
}

/// `project/list`.
pub(crate) async fn list(
    engine: &Engine,
    params: ProjectListParams,
) -> Result<ProjectListResponse, HandlerError> {
    let (threads, organisation) = (engine.threads.clone(), engine.organisation.clone());
    run::<ProjectList, _, _>(move || {
        if params.sort_key.is_none() && params.sort_direction.is_some() {
            return Err(ThreadError::InvalidParams(
                "sortDirection: only with sortKey".to_owned(),
            ));
        }
        let stored = organisation.projects.read(|file| file.projects.clone())?;
        let mut projects = stored
            .iter()
            .map(|p| wire(&threads, p))
            .collect::<Result<Vec<_>, _>>()?;
        match params.sort_key {
            Some(ProjectSortKey::RecencyAt) => {
                let descending = params.sort_direction != Some(SortDirection::Asc);
                // A stable sort keeps the user's order among equals; empty projects go last
                // whichever the direction.
                projects.sort_by(|a, b| match (a.recency_at, b.recency_at) {
                    (Some(a), Some(b)) if descending => b.cmp(&a),
                    (Some(a), Some(b)) => a.cmp(&b),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                });
            }
            _ => {
                if params.sort_direction == Some(SortDirection::Desc) {
                    projects.reverse();
                }
            }
        }
        let (data, next) = page_after(
            projects,
            params.cursor.as_deref(),
            params.limit,
            "project",
            |p| p.id.as_str(),
        )?;
        Ok(ProjectListResponse::builder()
            .data(data)
            .maybe_next_cursor(next)
            .build())
    })
    .await
}

/// `project/read`.
pub(crate) async fn read(
    engine: &Engine,
    params: ProjectReadParams,
) -> Result<ProjectReadResponse, HandlerError> {
    let (threads, organisation) = (engine.threads.clone(), engine.organisation.clone());
    run::<ProjectRead, _, _>(move || {
        let stored = organisation
            .projects
            .read(|file| file.find(&params.project_id).cloned())??;
        Ok(ProjectReadResponse::builder()
            .project(wire(&threads, &stored)?)
            .build())
    })
    .await
}

/// `project/create`: broadcasts `project/changed` when a project was made.
pub(crate) async fn create(
    engine: &Engine,
    context: RequestContext,
    params: ProjectCreateParams,
) -> Result<ProjectCreateResponse, HandlerError> {
    let (threads, organisation) = (engine.threads.clone(), engine.organisation.clone());
    run::<ProjectCreate, _, _>(move || {
        let made = make(
            &threads,
            &organisation.projects,
            NewProject {
                idempotency_key: params.idempotency_key,
                name: params.name,
                roots: params.roots,
                metadata: params.metadata,
                threads: Vec::new(),
            },
        )?;
        if made.created {
            changed(
                &context,
                made.project.id.clone(),
                ProjectChangeType::Created,
            );
        }
        Ok(ProjectCreateResponse::builder()
            .project(made.project)
            .build())
    })
    .await
}

/// `project/import`: a new project broadcasts `project/changed`, then
/// `thread/project/updated` for each thread filed under it.
pub(crate) async fn import(
    engine: &Engine,
    context: RequestContext,
    params: ProjectImportParams,
) -> Result<ProjectImportResponse, HandlerError> {
    let (threads, organisation) = (engine.threads.clone(), engine.organisation.clone());
    run::<ProjectImport, _, _>(move || {
        let made = make(
            &threads,
            &organisation.projects,
            NewProject {
                idempotency_key: params.idempotency_key,
                name: params.name,
                roots: params.roots,
                metadata: params.metadata,
                threads: params.threads.unwrap_or_default(),
            },
        )?;
        if made.created {
            let id = made.project.id.clone();
            let hub = context.peer.hub().clone();
            let moved = made.filed;
            context.after_response(move || {
                hub.broadcast::<ProjectChanged>(
                    &ProjectChangedNotification::builder()
                        .change_type(ProjectChangeType::Created)
                        .project_id(id.clone())
                        .build(),
                );
                filed(&hub, &moved, Some(&id));
            });
        }
        Ok(ProjectImportResponse::builder()
            .project(made.project)
            .build())
    })
    .await
}

/// `project/update`: broadcasts `project/changed`.
pub(crate) async fn update(
    engine: &Engine,
    context: RequestContext,
    params: ProjectUpdateParams,
) -> Result<ProjectUpdateResponse, HandlerError> {
    let (threads, organisation) = (engine.threads.clone(), engine.organisation.clone());
    run::<ProjectUpdate, _, _>(move || {
        if let Some(name) = &params.name {
            not_blank("name", name)?;
        }
        let roots = params.roots.as_deref().map(checked_roots).transpose()?;
        let stored = organisation.projects.update(|file| {
            let project = file.find_mut(&params.project_id)?;
            if let Some(name) = params.name {
                project.name = name.trim().to_owned();
            }
            if let Some(roots) = roots {
                project.roots = roots;
            }
            if let Some(metadata) = params.metadata {
                project.metadata = metadata;
            }
            project.updated_at = now();
            Ok(project.clone())
        })?;
        changed(&context, stored.id.clone(), ProjectChangeType::Updated);
        Ok(ProjectUpdateResponse::builder()
            .project(wire(&threads, &stored)?)
            .build())
    })
    .await
}

/// `project/move`: broadcasts `project/changed`.
pub(crate) async fn move_project(
    engine: &Engine,
    context: RequestContext,
    params: ProjectMoveParams,
) -> Result<ProjectMoveResponse, HandlerError> {
    let organisation = engine.organisation.clone();
    run::<ProjectMove, _, _>(move || {
        let id = params.project_id;
        organisation.projects.update(|file| {
            let from = file
                .projects
                .iter()
                .position(|p| p.id == id)
                .ok_or_else(|| unknown(&id))?;
            if params.before_project_id.as_deref() == Some(id.as_str()) {
                return Err(ThreadError::InvalidParams(format!(
                    "beforeProjectId: project {id} cannot be moved before itself"
                )));
            }
            let project = file.projects.remove(from);
            let to = match &params.before_project_id {
                None => file.projects.len(),
                Some(before) => file
                    .projects
                    .iter()
                    .position(|p| p.id == *before)
                    .ok_or_else(|| {
                        ThreadError::InvalidParams(format!("beforeProjectId: no project {before}"))
                    })?,
            };
            file.projects.insert(to, project);
            Ok(())
        })?;
        changed(&context, id, ProjectChangeType::Updated);
        Ok(ProjectMoveResponse::builder().build())
    })
    .await
}

/// `project/delete`: broadcasts `project/changed`, then `thread/project/updated` (`null`) for
/// each of its threads.
pub(crate) async fn delete(
    engine: &Engine,
    context: RequestContext,
    params: ProjectDeleteParams,
) -> Result<ProjectDeleteResponse, HandlerError> {
    let organisation = engine.organisation.clone();
    run::<ProjectDelete, _, _>(move || {
        let id = params.project_id;
        let removed = organisation.projects.update(|file| {
            let at = file
                .projects
                .iter()
                .position(|p| p.id == id)
                .ok_or_else(|| unknown(&id))?;
            Ok(file.projects.remove(at))
        })?;
        let hub = context.peer.hub().clone();
        context.after_response(move || {
            hub.broadcast::<ProjectChanged>(
                &ProjectChangedNotification::builder()
                    .change_type(ProjectChangeType::Deleted)
                    .project_id(removed.id)
                    .build(),
            );
            filed(&hub, &removed.threads, None);
        });
        Ok(ProjectDeleteResponse::builder().build())
    })
    .await
}

/// The threads of the organisation's projects, for tests.
#[cfg(test)]
pub(crate) fn members(file: &ProjectsFile) -> Vec<(String, Vec<String>)> {
    file.projects
        .iter()
        .map(|p| (p.name.clone(), p.threads.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(name: &str, threads: &[&str]) -> StoredProject {
        StoredProject {
            id: format!("id-{name}"),
            name: name.to_owned(),
            roots: Vec::new(),
            metadata: BTreeMap::new(),
            created_at: 1,
            updated_at: 1,
            idempotency_key: name.to_owned(),
            threads: threads.iter().map(|t| (*t).to_owned()).collect(),
        }
    }

    #[test]
    fn a_thread_is_filed_under_one_project_and_forgotten_everywhere() {
        let mut file = ProjectsFile {
            version: VERSION,
            projects: vec![project("a", &["t1", "t2"]), project("b", &["t3"])],
        };
        let map = thread_projects(&file);
        assert_eq!(map.get("t2").map(String::as_str), Some("id-a"));
        assert_eq!(map.get("t3").map(String::as_str), Some("id-b"));
        assert_eq!(file.forget("t2"), vec!["id-a".to_owned()]);
        assert_eq!(
            members(&file),
            vec![
                ("a".into(), vec!["t1".into()]),
                ("b".into(), vec!["t3".into()])
            ]
        );
    }

    #[test]
    fn roots_must_be_absolute_and_listed_once() {
        assert_eq!(
            checked_roots(&[ProjectRoot::at("/a"), ProjectRoot::at("/b")]).expect("fine"),
            vec!["/a".to_owned(), "/b".to_owned()]
        );
        let twice = checked_roots(&[ProjectRoot::at("/a"), ProjectRoot::at("/a")])
            .expect_err("refused")
            .to_string();
        assert!(twice.contains("roots[1].path"), "{twice}");
        let relative = checked_roots(&[ProjectRoot::at("a")])
            .expect_err("refused")
            .to_string();
        assert!(relative.contains("absolute"), "{relative}");
    }
}
