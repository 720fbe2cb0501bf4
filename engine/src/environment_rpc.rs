//! `environment/info`, `environment/status` and `environment/add`: the execution environments
//! commands run in. This server has exactly one, [`LOCAL`]: the machine it runs on, with
//! commands run by `bash -c`. It does not connect to remote exec-servers, so `environment/add`
//! is refused with the reason (-32600).

use std::path::{Path, PathBuf};

use agentwire_protocol::method::Method;
use agentwire_protocol::methods::{EnvironmentAdd, EnvironmentInfo};
use agentwire_protocol::{
    EnvironmentAddParams, EnvironmentAddResponse, EnvironmentInfoParams, EnvironmentInfoResponse,
    EnvironmentShellInfo, EnvironmentStatusKind, EnvironmentStatusParams,
    EnvironmentStatusResponse, PathUri,
};
use agentwire_runtime::HandlerError;

/// The id of the environment of this machine.
pub(crate) const LOCAL: &str = "local";

/// The shell the command tools run command lines with.
const SHELL: &str = "bash";

/// `environment/info`: the local environment's shell and the server's working directory.
pub(crate) fn info(params: EnvironmentInfoParams) -> Result<EnvironmentInfoResponse, HandlerError> {
    if params.environment_id != LOCAL {
        return Err(HandlerError::invalid_request(format!(
            "{}: unknown environment id `{}` (this server has only `{LOCAL}`)",
            EnvironmentInfo::NAME,
            params.environment_id
        )));
    }
    let path = std::env::var_os("PATH")
        .and_then(|dirs| find_program(&dirs, SHELL))
        .map_or_else(|| SHELL.to_owned(), |p| p.to_string_lossy().into_owned());
    let cwd = std::env::current_dir()
        .ok()
        .map(|dir| PathUri(file_uri(&dir)));
    Ok(EnvironmentInfoResponse::builder()
        .maybe_cwd(cwd)
        .shell(
            EnvironmentShellInfo::builder()
                .name(SHELL)
                .path(path)
                .build(),
        )
        .build())
}

/// `environment/status`: `ready` for the local environment, `unknown` for any other id.
pub(crate) fn status(params: EnvironmentStatusParams) -> EnvironmentStatusResponse {
    if params.environment_id == LOCAL {
        return EnvironmentStatusResponse::builder()
            .status(EnvironmentStatusKind::Ready)
            .build();
    }
    EnvironmentStatusResponse::builder()
        .status(EnvironmentStatusKind::Unknown)
        .error(format!(
            "unknown environment id `{}` (this server has only `{LOCAL}`)",
            params.environment_id
        ))
        .build()
}

/// `environment/add`: refused, naming what was asked.
pub(crate) fn add(params: EnvironmentAddParams) -> Result<EnvironmentAddResponse, HandlerError> {
    Err(HandlerError::invalid_request(format!(
        "{}: environment `{}` at {} cannot be added: this server runs commands only in its own \
         environment (`{LOCAL}`) and does not connect to remote exec-servers",
        EnvironmentAdd::NAME,
        params.environment_id,
        params.exec_server_url
    )))
}

/// The first executable file named `name` in the directories of `path_var`.
fn find_program(path_var: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path_var)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// `dir` as a `file://` URI: bytes other than unreserved characters and `/` percent-encoded.
fn file_uri(dir: &Path) -> String {
    let text = dir.to_string_lossy();
    let mut uri = String::from("file://");
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_file_uris() {
        assert_eq!(
            file_uri(Path::new("/tmp/a b/é")),
            "file:///tmp/a%20b/%C3%A9"
        );
        assert_eq!(file_uri(Path::new("/w/x-y_z.1")), "file:///w/x-y_z.1");
    }

    #[test]
    fn only_the_local_environment_exists() {
        let ready = status(
            EnvironmentStatusParams::builder()
                .environment_id(LOCAL)
                .build(),
        );
        assert_eq!(ready.status, EnvironmentStatusKind::Ready);
        assert_eq!(ready.error, None);
        let other = status(
            EnvironmentStatusParams::builder()
                .environment_id("gpu")
                .build(),
        );
        assert_eq!(other.status, EnvironmentStatusKind::Unknown);
        assert!(other.error.is_some_and(|e| e.contains("`gpu`")));
        let info = info(
            EnvironmentInfoParams::builder()
                .environment_id(LOCAL)
                .build(),
        )
        .expect("local info");
        assert_eq!(info.shell.name, "bash");
        assert!(info.cwd.is_some_and(|c| c.0.starts_with("file:///")));
    }
}
