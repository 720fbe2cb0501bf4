//! The socket file of a `unix://` listener: created with mode 0600 in a parent directory made on
//! demand (mode 0700), a stale file from a dead server replaced, and removed again on shutdown.

use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::net::UnixListener;

use super::BindError;

/// A bound socket file; dropping it removes the file if it is still this listener's.
#[derive(Debug)]
pub(super) struct SocketFile {
    path: PathBuf,
    /// Device and inode of the file this listener created.
    identity: (u64, u64),
}

impl SocketFile {
    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let ours = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|meta| (meta.dev(), meta.ino()) == self.identity);
        if ours && let Err(error) = std::fs::remove_file(&self.path) {
            tracing::warn!(path = %self.path.display(), %error, "cannot remove the socket file");
        }
    }
}

fn io_error(what: &str, path: &Path, source: std::io::Error) -> BindError {
    BindError::Io {
        what: format!("{what} {}", path.display()),
        source,
    }
}

/// Binds a listener at `path`. Must run inside a tokio runtime.
pub(super) async fn bind(path: &Path) -> Result<(UnixListener, SocketFile), BindError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.exists()
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|e| io_error("cannot create the directory", parent, e))?;
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => {
            let probe = tokio::net::UnixStream::connect(path);
            match tokio::time::timeout(Duration::from_secs(1), probe).await {
                Ok(Err(_)) => {
                    std::fs::remove_file(path)
                        .map_err(|e| io_error("cannot remove the stale socket", path, e))?;
                    tracing::info!(path = %path.display(), "removed a stale socket file");
                }
                Ok(Ok(_)) | Err(_) => return Err(BindError::InUse(path.to_owned())),
            }
        }
        Ok(_) => return Err(BindError::NotASocket(path.to_owned())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(io_error("cannot inspect", path, error)),
    }
    let listener = UnixListener::bind(path).map_err(|e| io_error("cannot bind", path, e))?;
    let meta = std::fs::symlink_metadata(path).map_err(|e| io_error("cannot inspect", path, e))?;
    // From here on, dropping `file` (on an error too) removes the socket.
    let file = SocketFile {
        path: path.to_owned(),
        identity: (meta.dev(), meta.ino()),
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| io_error("cannot set the mode of", path, e))?;
    Ok((listener, file))
}
