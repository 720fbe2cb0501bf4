//! `fs/*`: remote clients browse and edit the workspace, confined to the roots.
//!
//! Module map: `roots` (which directories `fs/*` may use and which paths it never touches),
//! `resolve` (opening a path beneath its root with `openat2`), `error` (failures and their
//! JSON-RPC errors), one module per operation — `read`, `write` (writeFile and
//! createDirectory), `metadata`, `listing`, `remove`, `copy` (its bytes budgeted and
//! its holes kept by `copy_data`; their trees walked by `walk`) — and `watch`
//! (`fs/watch`, `fs/unwatch`, `fs/changed`). `docs/fs.md` states the promises and the tests that
//! hold them.
//!
//! On the wire:
//! - Every path is absolute. It is made absolute lexically (`.` and `..` taken out, as the
//!   reference's `AbsolutePathBuf` is) and must then lie in a root: the working directory or a
//!   writable root of a loaded thread, or the server's working directory while no thread is
//!   loaded. Resolving it must not leave that root (symlinks are followed only while they stay
//!   inside it) and must not reach the agentwire home or another private path.
//! - Refusals are -32602 naming the method, the field (`path`, `sourcePath`,
//!   `destinationPath`, `dataBase64`, `watchId`), the path and the reason, with
//!   `data: {field, path, reason}`; a failure of the server itself (an I/O error that is not
//!   about the request) is -32603. A `watchId` already in use, an unknown one, and too many
//!   watches are -32600.
//! - `fs/readFile` and `fs/writeFile` carry at most `MAX_FILE_BYTES` bytes; writes are atomic.
//!
//! The work runs on Tokio's blocking threads; a `Scope` (roots and private paths) is built for
//! each request from the loaded threads' `Roots` at that moment.

mod copy;
mod copy_data;
mod error;
mod limits;
mod listing;
mod metadata;
mod read;
mod remove;
mod resolve;
mod roots;
mod walk;
mod watch;
mod write;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{
    FsCopy, FsCreateDirectory, FsGetMetadata, FsReadDirectory, FsReadFile, FsRemove, FsUnwatch,
    FsWatch, FsWriteFile,
};
use agentwire_protocol::{
    AbsolutePathBuf, FsCopyParams, FsCopyResponse, FsCreateDirectoryParams,
    FsCreateDirectoryResponse, FsGetMetadataParams, FsGetMetadataResponse, FsReadDirectoryParams,
    FsReadDirectoryResponse, FsReadFileParams, FsReadFileResponse, FsRemoveParams,
    FsRemoveResponse, FsUnwatchParams, FsUnwatchResponse, FsWatchParams, FsWatchResponse,
    FsWriteFileParams, FsWriteFileResponse,
};
use agentwire_runtime::{HandlerError, RequestContext};

use error::FsResult;
use roots::{Private, Root, Scope};

/// Where `fs/*` may work: the roots the engine's loaded threads name, asked per request.
pub trait Roots: Send + Sync + std::fmt::Debug {
    /// The working directories and writable roots of the loaded threads, as they name them
    /// (while none is loaded, the server's working directory is the root).
    fn loaded_roots(&self) -> Vec<String>;
}

/// The `fs/*` state of the server: where the roots come from, the private paths and the
/// watches.
#[derive(Debug)]
pub struct Fs {
    /// The roots of the loaded threads.
    roots: Arc<dyn Roots>,
    /// The agentwire home and the server's other private paths, absolute.
    private: Vec<PathBuf>,
    watches: watch::Watches,
    /// `fs_copy_max_bytes` of `config.toml` at start-up (see [`copy_data`]).
    copy_budget: Option<u64>,
}

impl Fs {
    /// The state for a server whose home is `home`, with `private` paths besides it, working
    /// in the `roots` of its loaded threads.
    pub fn new(home: &Path, private: &[PathBuf], roots: Arc<dyn Roots>) -> Self {
        let private = std::iter::once(home)
            .chain(private.iter().map(PathBuf::as_path))
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()))
            .collect();
        Self {
            roots,
            private,
            watches: watch::Watches::default(),
            copy_budget: None,
        }
    }

    /// The same, with `fs_copy_max_bytes` set to `configured` (`None`: the default budget).
    pub fn with_copy_budget(self, configured: Option<u64>) -> Self {
        Self {
            copy_budget: configured,
            ..self
        }
    }
}

/// What a request's scope is built from: the roots as the engine names them now, and the
/// private paths. Building the scope itself touches the disk, so it happens on the worker.
struct ScopeSource {
    roots: Vec<String>,
    cwd: PathBuf,
    private: Vec<PathBuf>,
}

impl ScopeSource {
    fn new(fs: &Fs) -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let mut roots = fs.roots.loaded_roots();
        if roots.is_empty() {
            roots.push(cwd.display().to_string());
        }
        Self {
            roots,
            cwd,
            private: fs.private.clone(),
        }
    }

    fn build(self) -> Scope {
        let roots = self
            .roots
            .iter()
            .filter_map(|root| Root::new(Path::new(root), &self.cwd))
            .collect();
        Scope::new(roots, Private::new(&self.private))
    }
}

/// Runs `work` under the request's scope on a blocking thread; its failure becomes the error
/// of `M`.
async fn serve<M: Method, T: Send + 'static>(
    fs: &Fs,
    work: impl FnOnce(&Scope) -> FsResult<T> + Send + 'static,
) -> Result<T, HandlerError> {
    let source = ScopeSource::new(fs);
    let done = tokio::task::spawn_blocking(move || work(&source.build())).await;
    match done {
        Ok(result) => result.map_err(|e| e.into_handler(M::NAME)),
        Err(e) => Err(HandlerError::internal(format!(
            "{}: the worker failed: {e}",
            M::NAME
        ))),
    }
}

/// Serves `fs/readFile`.
pub async fn read_file(
    fs: &Fs,
    _context: RequestContext,
    params: FsReadFileParams,
) -> Result<FsReadFileResponse, HandlerError> {
    serve::<FsReadFile, _>(fs, move |scope| read::read_file(scope, &params)).await
}

/// Serves `fs/writeFile`.
pub async fn write_file(
    fs: &Fs,
    _context: RequestContext,
    params: FsWriteFileParams,
) -> Result<FsWriteFileResponse, HandlerError> {
    serve::<FsWriteFile, _>(fs, move |scope| write::write_file(scope, &params)).await
}

/// Serves `fs/createDirectory`.
pub async fn create_directory(
    fs: &Fs,
    _context: RequestContext,
    params: FsCreateDirectoryParams,
) -> Result<FsCreateDirectoryResponse, HandlerError> {
    serve::<FsCreateDirectory, _>(fs, move |scope| write::create_directory(scope, &params)).await
}

/// Serves `fs/getMetadata`.
pub async fn get_metadata(
    fs: &Fs,
    _context: RequestContext,
    params: FsGetMetadataParams,
) -> Result<FsGetMetadataResponse, HandlerError> {
    serve::<FsGetMetadata, _>(fs, move |scope| metadata::get_metadata(scope, &params)).await
}

/// Serves `fs/readDirectory`.
pub async fn read_directory(
    fs: &Fs,
    _context: RequestContext,
    params: FsReadDirectoryParams,
) -> Result<FsReadDirectoryResponse, HandlerError> {
    serve::<FsReadDirectory, _>(fs, move |scope| listing::read_directory(scope, &params)).await
}

/// Serves `fs/remove`.
pub async fn remove(
    fs: &Fs,
    _context: RequestContext,
    params: FsRemoveParams,
) -> Result<FsRemoveResponse, HandlerError> {
    serve::<FsRemove, _>(fs, move |scope| remove::remove(scope, &params)).await
}

/// Serves `fs/copy`.
pub async fn copy(
    fs: &Fs,
    _context: RequestContext,
    params: FsCopyParams,
) -> Result<FsCopyResponse, HandlerError> {
    let budget = copy_data::CopyBudget::new(fs.copy_budget);
    serve::<FsCopy, _>(fs, move |scope| copy::copy(scope, &params, budget)).await
}

/// Serves `fs/watch`.
pub async fn watch(
    fs: &Fs,
    context: RequestContext,
    params: FsWatchParams,
) -> Result<FsWatchResponse, HandlerError> {
    let id = params.watch_id;
    if id.is_empty() || id.len() > watch::MAX_WATCH_ID {
        // `data` as for every refusal of a path: the path is the one the watch was for.
        let data = serde_json::json!({
            "field": "watchId",
            "path": params.path.0,
            "reason": "refused",
        });
        return Err(HandlerError::invalid_params(
            FsWatch::NAME,
            format_args!(
                "`watchId` must be 1 to {} bytes long, not {}",
                watch::MAX_WATCH_ID,
                id.len()
            ),
        )
        .with_data(data));
    }
    let raw = params.path.0;
    let target = serve::<FsWatch, _>(fs, move |scope| watch::target(scope, &raw)).await?;
    let watched = AbsolutePathBuf(target.watched().to_string_lossy().into_owned());
    let watches = fs.watches.clone();
    let peer = context.peer.clone();
    let added = tokio::task::spawn_blocking(move || watches.add(peer, id, target))
        .await
        .map_err(|e| HandlerError::internal(format!("fs/watch: the worker failed: {e}")))??;
    if added {
        fs.watches.start_flusher();
    }
    Ok(FsWatchResponse::builder().path(watched).build())
}

/// Serves `fs/unwatch`.
pub async fn unwatch(
    fs: &Fs,
    context: RequestContext,
    params: FsUnwatchParams,
) -> Result<FsUnwatchResponse, HandlerError> {
    let watches = fs.watches.clone();
    let connection = context.peer.connection_id();
    let id = params.watch_id;
    let removed = {
        let id = id.clone();
        tokio::task::spawn_blocking(move || watches.remove(connection, &id))
            .await
            .map_err(|e| HandlerError::internal(format!("fs/unwatch: the worker failed: {e}")))?
    };
    if !removed {
        return Err(HandlerError::invalid_request(format!(
            "Invalid request for {}: `watchId` {id:?} names no watch of this connection",
            FsUnwatch::NAME
        )));
    }
    Ok(FsUnwatchResponse::builder().build())
}
