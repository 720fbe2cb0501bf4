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
    // Bound, made private, and only then listening: until `listen` a connection is refused, so
    // none can be made while the socket still has the mode the umask gave it.
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
    let socket = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
        None,
    )
    .map_err(|e| io_error("cannot create a socket for", path, e.into()))?;
    let address = SocketAddrUnix::new(path).map_err(|e| io_error("cannot bind", path, e.into()))?;
    rustix::net::bind(&socket, &address).map_err(|e| io_error("cannot bind", path, e.into()))?;
    let meta = std::fs::symlink_metadata(path).map_err(|e| io_error("cannot inspect", path, e))?;
    // From here on, dropping `file` (on an error too) removes the socket.
    let file = SocketFile {
        path: path.to_owned(),
        identity: (meta.dev(), meta.ino()),
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| io_error("cannot set the mode of", path, e))?;
    rustix::net::listen(&socket, BACKLOG)
        .map_err(|e| io_error("cannot listen on", path, e.into()))?;
    let listener = UnixListener::from_std(std::os::unix::net::UnixListener::from(socket))
        .map_err(|e| io_error("cannot listen on", path, e))?;
    Ok((listener, file))
}

/// Connections the kernel queues before they are accepted (what `std` asks for too).
const BACKLOG: i32 = 128;
