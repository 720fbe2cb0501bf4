//! `$AGENTWIRE_HOME/auth.json`: the stored API key.
//!
//! The file is a JSON object in the shape Codex writes for an API-key sign-in:
//!
//! ```json
//! {"auth_mode": "apikey", "OPENAI_API_KEY": "sk-…"}
//! ```
//!
//! It is created with mode 0600 (never wider, not even for a moment: the temporary file is
//! created with that mode), written to a temporary file in the same directory, flushed to disk
//! and renamed over the old one, so a reader sees the old file or the new one, never half of
//! one. Other members are ignored when read. The key is never logged, and errors about the file
//! never quote its contents.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use agentwire_support::atomic_file::sync_dir;

/// The file name under `$AGENTWIRE_HOME`.
pub(crate) const AUTH_FILE: &str = "auth.json";

/// What `auth.json` holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct AuthFile {
    /// How the key was given (`apikey`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    auth_mode: Option<String>,
    /// The API key.
    #[serde(rename = "OPENAI_API_KEY", default)]
    openai_api_key: Option<String>,
}

/// Why the stored key could not be read; the message names the file and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct AuthFileError(pub String);

/// The path of `auth.json` under `home`.
pub(crate) fn path(home: &Path) -> PathBuf {
    home.join(AUTH_FILE)
}

/// The stored API key: `None` when there is no `auth.json` or it holds no key.
pub(crate) fn read_key(home: &Path) -> Result<Option<String>, AuthFileError> {
    let path = path(home);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(AuthFileError(format!(
                "cannot read the stored credentials {}: {e}; fix its permissions, or sign in \
                 again with `agentwire login` (clients: account/login/start)",
                path.display()
            )));
        }
    };
    // serde_json's message names only the position, never the text around it.
    let file: AuthFile = serde_json::from_slice(&bytes).map_err(|e| {
        AuthFileError(format!(
            "the stored credentials {} are not a valid auth.json ({}, line {} column {}); sign \
             in again with `agentwire login` or account/login/start (which replace the file), \
             or sign out with `agentwire logout` or account/logout (which remove it)",
            path.display(),
            match e.classify() {
                serde_json::error::Category::Io => "unreadable",
                serde_json::error::Category::Syntax => "not JSON",
                serde_json::error::Category::Data => "not the expected object",
                serde_json::error::Category::Eof => "cut short",
            },
            e.line(),
            e.column()
        ))
    })?;
    Ok(file.openai_api_key.filter(|k| !k.is_empty()))
}

/// Stores `key` atomically with mode 0600.
pub(crate) fn write_key(home: &Path, key: &str) -> std::io::Result<()> {
    let file = AuthFile {
        auth_mode: Some("apikey".to_owned()),
        openai_api_key: Some(key.to_owned()),
    };
    let mut bytes = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    agentwire_support::atomic_file::replace(&path(home), &bytes, Some(0o600))?;
    sync_dir(home)
}

/// Removes `auth.json`; whether there was one.
pub(crate) fn remove(home: &Path) -> std::io::Result<bool> {
    match std::fs::remove_file(path(home)) {
        Ok(()) => {
            sync_dir(home)?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("agentwire-auth-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create home");
        dir
    }

    #[test]
    fn a_written_key_reads_back_and_is_private() {
        let home = home("roundtrip");
        assert_eq!(read_key(&home), Ok(None));
        write_key(&home, "sk-one").expect("write");
        write_key(&home, "sk-two").expect("overwrite");
        assert_eq!(read_key(&home), Ok(Some("sk-two".to_owned())));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path(&home))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(&home)
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(AUTH_FILE)]);
        assert!(remove(&home).expect("remove"));
        assert!(!remove(&home).expect("remove again"));
        assert_eq!(read_key(&home), Ok(None));
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn a_corrupt_file_is_reported_without_its_contents() {
        let home = home("corrupt");
        std::fs::write(path(&home), "{\"OPENAI_API_KEY\": \"sk-secret").expect("write");
        let error = read_key(&home).expect_err("corrupt");
        assert!(error.0.contains("auth.json"), "{error}");
        assert!(error.0.contains("cut short"), "{error}");
        assert!(!error.0.contains("sk-secret"), "{error}");
        std::fs::write(path(&home), "[1]").expect("write");
        let error = read_key(&home).expect_err("not an object");
        assert!(error.0.contains("not the expected object"), "{error}");
        let _ = std::fs::remove_dir_all(&home);
    }
}
