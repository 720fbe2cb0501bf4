//! Signing in from the terminal (`agentwire login`, `agentwire logout`, `agentwire login
//! status`): the same checks and the same `auth.json` (0600) as `account/login/start` and
//! `account/logout`, on a home directory, without a server. A server running on that home
//! reads the file on its next model call.

use std::path::Path;

use super::{check_key, store};

/// How `agentwire login status` describes the sign-in of a home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignIn {
    /// No API key is stored.
    SignedOut,
    /// An API key is stored: `masked` shows its start and end only.
    ApiKey {
        /// The key with its middle hidden (see [`mask_key`]).
        masked: String,
    },
}

/// Stores `key` (surrounding whitespace, such as the newline of piped input, taken off) in
/// `home`'s `auth.json` exactly as `account/login/start` with an `apiKey` does. The error
/// says why, never quoting the key.
pub fn store_api_key(home: &Path, key: &str) -> Result<(), String> {
    let key = key.trim();
    check_key(key).map_err(|reason| format!("the API key {reason}"))?;
    std::fs::create_dir_all(home)
        .map_err(|e| format!("cannot create the home directory {}: {e}", home.display()))?;
    store::write_key(home, key).map_err(|e| {
        format!(
            "cannot store the API key in {}: {e}",
            store::path(home).display()
        )
    })?;
    tracing::info!("signed in with an API key");
    Ok(())
}

/// Removes `home`'s stored API key as `account/logout` does; whether there was one.
pub fn remove_api_key(home: &Path) -> Result<bool, String> {
    store::remove(home).map_err(|e| {
        format!(
            "cannot remove the stored credentials {}: {e}",
            store::path(home).display()
        )
    })
}

/// The sign-in stored in `home`; the error when `auth.json` cannot be read.
pub fn sign_in(home: &Path) -> Result<SignIn, String> {
    match store::read_key(home).map_err(|e| e.0)? {
        Some(key) => Ok(SignIn::ApiKey {
            masked: mask_key(&key),
        }),
        None => Ok(SignIn::SignedOut),
    }
}

/// `key` with all but its first 8 and last 5 characters replaced by `***`; a key of 13
/// characters or fewer is shown as `***` alone.
pub fn mask_key(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 13 {
        return "***".to_owned();
    }
    let head: String = chars[..8].iter().collect();
    let tail: String = chars[chars.len() - 5..].iter().collect();
    format!("{head}***{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_masked_in_the_middle() {
        assert_eq!(mask_key("sk-proj-abcdefghijklmnop"), "sk-proj-***lmnop");
        assert_eq!(mask_key("sk-short"), "***");
        assert_eq!(mask_key("1234567890123"), "***");
        assert_eq!(mask_key("12345678901234"), "12345678***01234");
    }

    #[test]
    fn a_key_is_stored_checked_and_removed() {
        let home = tempfile::tempdir().expect("tempdir");
        let home = home.path().join("home");
        assert_eq!(sign_in(&home), Ok(SignIn::SignedOut));
        let error = store_api_key(&home, "sk bad key").expect_err("spaces refused");
        assert!(!error.contains("bad key"), "{error}");
        store_api_key(&home, "sk-test-0123456789\n").expect("stored");
        assert_eq!(
            sign_in(&home),
            Ok(SignIn::ApiKey {
                masked: "sk-test-***56789".to_owned()
            })
        );
        assert_eq!(remove_api_key(&home), Ok(true));
        assert_eq!(remove_api_key(&home), Ok(false));
        assert_eq!(sign_in(&home), Ok(SignIn::SignedOut));
    }
}
