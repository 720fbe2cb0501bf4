//! The OAuth credentials of MCP servers, kept in `$AGENTWIRE_HOME/mcp-oauth.json` (mode 0600,
//! replaced atomically): per configured server name, the URL signed in to, the client, the
//! token endpoint and the tokens. Credentials are used only while the server's `url` is the
//! one they were obtained for.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use agentwire_support::lock;
use serde::{Deserialize, Serialize};

/// The file, under the home.
pub(crate) const FILE: &str = "mcp-oauth.json";
/// Largest file read.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Serialises read-modify-write of the file within this process.
static WRITES: Mutex<()> = Mutex::new(());

/// The credentials of one server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Credentials {
    /// The MCP server's URL when they were obtained.
    pub url: String,
    /// The OAuth client.
    pub client_id: String,
    /// Its secret, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// Where tokens are refreshed.
    pub token_endpoint: String,
    /// The resource indicator sent with refreshes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The bearer token.
    pub access_token: String,
    /// The token that obtains a new access token, if the server gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires (Unix seconds), if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// The scopes granted (or asked for).
    #[serde(default)]
    pub scopes: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    #[serde(default)]
    servers: BTreeMap<String, Credentials>,
}

/// The path of the file in `home`.
pub(crate) fn path(home: &Path) -> PathBuf {
    home.join(FILE)
}

fn read(home: &Path) -> Result<File, String> {
    let path = path(home);
    let (bytes, longer) = match agentwire_support::regular_file::read_regular(&path, MAX_FILE_BYTES)
    {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(File::default()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    if longer {
        return Err(format!(
            "{} is larger than {MAX_FILE_BYTES} bytes",
            path.display()
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("{} is not valid: {e}", path.display()))
}

/// The stored credentials of server `name`, if they were obtained for `url`. Reads the disk.
pub(crate) fn load(home: &Path, name: &str, url: &str) -> Result<Option<Credentials>, String> {
    Ok(read(home)?
        .servers
        .remove(name)
        .filter(|credentials| credentials.url == url))
}

/// Stores the credentials of server `name` (replacing earlier ones). Writes the disk.
pub(crate) fn store(home: &Path, name: &str, credentials: Credentials) -> Result<(), String> {
    let _guard = lock(&WRITES);
    // A file that does not read is replaced rather than blocking every sign-in.
    let mut file = read(home).unwrap_or_default();
    file.servers.insert(name.to_owned(), credentials);
    let text = serde_json::to_vec_pretty(&file)
        .map_err(|e| format!("cannot serialise the credentials: {e}"))?;
    let path = path(home);
    agentwire_support::atomic_file::replace(&path, &text, Some(0o600))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Now, in Unix seconds.
pub(crate) fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Credentials {
    /// Whether the access token has expired or expires within `margin` seconds.
    pub(crate) fn expires_within(&self, margin: i64) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now().saturating_add(margin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn sample(url: &str) -> Credentials {
        Credentials {
            url: url.to_owned(),
            client_id: "c".to_owned(),
            client_secret: None,
            token_endpoint: "http://127.0.0.1:1/token".to_owned(),
            resource: None,
            access_token: "a".to_owned(),
            refresh_token: Some("r".to_owned()),
            expires_at: Some(now() + 3600),
            scopes: vec!["s".to_owned()],
        }
    }

    #[test]
    fn stored_credentials_are_private_and_bound_to_the_url() {
        let home = tempfile::tempdir().expect("home");
        assert_eq!(load(home.path(), "docs", "http://x/mcp"), Ok(None));
        // One sample: two made a second apart would expire a second apart.
        let stored = sample("http://x/mcp");
        store(home.path(), "docs", stored.clone()).expect("store");
        store(home.path(), "other", sample("http://y/mcp")).expect("store");
        let mode = std::fs::metadata(path(home.path()))
            .expect("file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load(home.path(), "docs", "http://x/mcp"), Ok(Some(stored)));
        assert_eq!(load(home.path(), "docs", "http://elsewhere/mcp"), Ok(None));
        assert!(load(home.path(), "other", "http://y/mcp").is_ok_and(|c| c.is_some()));
    }

    #[test]
    fn expiry_has_a_margin() {
        let mut credentials = sample("u");
        assert!(!credentials.expires_within(60));
        credentials.expires_at = Some(now() + 30);
        assert!(credentials.expires_within(60));
        credentials.expires_at = None;
        assert!(!credentials.expires_within(60));
    }
}
