//! Why an `fs/*` request failed, and the JSON-RPC error it becomes: the message names the
//! method, the params field, the path as the client sent it and the reason; `data` carries the
//! same as `{field, path, reason}` with a machine-readable `reason`.

use std::fmt;

use agentwire_runtime::HandlerError;
use rustix::io::Errno;
use serde_json::json;

/// What went wrong with one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reason {
    /// Not an absolute path.
    NotAbsolute,
    /// A NUL byte, which no path can hold.
    Nul,
    /// Lexically outside every root.
    OutsideRoots,
    /// Inside a root as written, but resolving it leaves the roots (a symlink).
    Escapes,
    /// A symlink loop, or a `/proc` magic link on the way.
    Unresolvable,
    /// The agentwire home (credentials, sessions) or another private path of the server.
    Private,
    /// A root itself, where the operation would destroy or replace it.
    IsARoot,
    NotFound,
    /// The directory that should hold the new entry does not exist.
    ParentNotFound,
    NotADirectory,
    IsADirectory,
    /// Neither a regular file nor a directory (a FIFO, socket or device), where one is needed.
    NotARegularFile,
    AlreadyExists,
    NotEmpty,
    PermissionDenied,
    /// Bigger than the limit, in bytes.
    TooLarge {
        limit: u64,
    },
    /// More entries than the limit allows.
    TooManyEntries {
        limit: usize,
    },
    /// Nested deeper than the limit allows.
    TooDeep {
        limit: usize,
    },
    /// The destination of a copy lies inside its source.
    IntoItself,
    /// Any other refusal, said in words.
    Refused(String),
    /// The server failed (an I/O error that is not about the request).
    Io(String),
}

impl Reason {
    /// The machine-readable name in `data.reason`.
    fn code(&self) -> &'static str {
        match self {
            Self::NotAbsolute => "notAbsolute",
            Self::Nul => "invalidPath",
            Self::OutsideRoots => "outsideRoots",
            Self::Escapes => "escapesRoots",
            Self::Unresolvable => "unresolvable",
            Self::Private => "private",
            Self::IsARoot => "isARoot",
            Self::NotFound => "notFound",
            Self::ParentNotFound => "parentNotFound",
            Self::NotADirectory => "notADirectory",
            Self::IsADirectory => "isADirectory",
            Self::NotARegularFile => "notARegularFile",
            Self::AlreadyExists => "alreadyExists",
            Self::NotEmpty => "notEmpty",
            Self::PermissionDenied => "permissionDenied",
            Self::TooLarge { .. } => "tooLarge",
            Self::TooManyEntries { .. } => "tooManyEntries",
            Self::TooDeep { .. } => "tooDeep",
            Self::IntoItself => "intoItself",
            Self::Refused(_) => "refused",
            Self::Io(_) => "io",
        }
    }

    /// The reason for an error number from a path operation.
    pub(crate) fn from_errno(errno: Errno) -> Self {
        match errno {
            Errno::XDEV => Self::Escapes,
            Errno::LOOP => Self::Unresolvable,
            Errno::NOENT => Self::NotFound,
            Errno::NOTDIR => Self::NotADirectory,
            Errno::ISDIR => Self::IsADirectory,
            Errno::EXIST => Self::AlreadyExists,
            Errno::NOTEMPTY => Self::NotEmpty,
            Errno::ACCESS | Errno::PERM => Self::PermissionDenied,
            Errno::NAMETOOLONG => Self::Refused("a name in it is too long".to_owned()),
            Errno::NOSYS => Self::Io(
                "this kernel lacks openat2 (Linux 5.6 or later is needed for fs/*)".to_owned(),
            ),
            other => Self::Io(other.to_string()),
        }
    }

    /// The reason for an I/O error.
    pub(crate) fn from_io(error: &std::io::Error) -> Self {
        match error.raw_os_error() {
            Some(raw) => Self::from_errno(Errno::from_raw_os_error(raw)),
            None => Self::Io(error.to_string()),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAbsolute => f.write_str("must be an absolute path"),
            Self::Nul => f.write_str("contains a NUL byte"),
            Self::OutsideRoots => f.write_str(
                "is outside the roots fs/* may use (the working directories and writable roots \
                 of the loaded threads, or the server's working directory when none is loaded)",
            ),
            Self::Escapes => f.write_str("leaves the roots through a symlink"),
            Self::Unresolvable => {
                f.write_str("cannot be resolved (a symlink loop, or a /proc magic link)")
            }
            Self::Private => f.write_str(
                "is inside the agentwire home or another private path of the server, which fs/* \
                 never touches",
            ),
            Self::IsARoot => f.write_str("is a root of fs/* itself"),
            Self::NotFound => f.write_str("does not exist"),
            Self::ParentNotFound => f.write_str("is in a directory that does not exist"),
            Self::NotADirectory => f.write_str("is not a directory (or a component of it is not)"),
            Self::IsADirectory => f.write_str("is a directory"),
            Self::NotARegularFile => f.write_str("is not a regular file"),
            Self::AlreadyExists => f.write_str("already exists"),
            Self::NotEmpty => f.write_str("is a directory that is not empty"),
            Self::PermissionDenied => f.write_str("permission denied"),
            Self::TooLarge { limit } => write!(f, "is larger than the limit of {limit} bytes"),
            Self::TooManyEntries { limit } => write!(f, "has more than {limit} entries"),
            Self::TooDeep { limit } => write!(f, "is nested more than {limit} levels deep"),
            Self::IntoItself => f.write_str("lies inside the source of the copy"),
            Self::Refused(why) => f.write_str(why),
            Self::Io(why) => write!(f, "failed: {why}"),
        }
    }
}

/// A failed `fs/*` request: which field, which path, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FsError {
    /// The params member, as on the wire (`path`, `sourcePath`, `dataBase64` …).
    pub(crate) field: &'static str,
    /// The path as the client sent it (or the entry under it that failed).
    pub(crate) path: String,
    pub(crate) reason: Reason,
}

impl FsError {
    pub(crate) fn new(field: &'static str, path: impl Into<String>, reason: Reason) -> Self {
        Self {
            field,
            path: path.into(),
            reason,
        }
    }

    /// The JSON-RPC error for `method`: -32603 when the server failed, -32602 otherwise.
    pub(crate) fn into_handler(self, method: &str) -> HandlerError {
        let data = json!({
            "field": self.field,
            "path": self.path,
            "reason": self.reason.code(),
        });
        let error = match &self.reason {
            Reason::Io(_) => HandlerError::internal(format!(
                "{method}: `{}` {:?}: {}",
                self.field, self.path, self.reason
            )),
            _ => HandlerError::invalid_params(
                method,
                format_args!("`{}` {:?} {}", self.field, self.path, self.reason),
            ),
        };
        error.with_data(data)
    }
}

/// A `Result` whose error is an [`FsError`].
pub(crate) type FsResult<T> = Result<T, FsError>;
