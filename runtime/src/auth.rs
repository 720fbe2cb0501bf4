//! Bearer-token authentication of websocket listeners.
//!
//! The server keeps only the SHA-256 digest of the token. A presented token is hashed and the
//! two digests are compared in constant time, so neither the comparison's duration nor an early
//! exit reveals how much of a guess was right.

use std::path::Path;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The token clients must present as `Authorization: Bearer <token>`.
#[derive(Clone)]
pub struct BearerAuth {
    digest: [u8; 32],
}

impl std::fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerAuth(..)")
    }
}

/// Why the token could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The token file could not be read.
    #[error("cannot read the token file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The token is empty.
    #[error("the token in {0} is empty")]
    Empty(String),
    /// The digest is not 64 hexadecimal digits.
    #[error("--ws-auth-token-sha256 must be 64 hexadecimal digits (the SHA-256 of the token)")]
    BadDigest,
    /// The digest is that of the empty string: no client could present a token for it.
    #[error(
        "--ws-auth-token-sha256 is the SHA-256 of the empty string; the token must not be empty"
    )]
    EmptyTokenDigest,
}

impl BearerAuth {
    /// Accepts `token`.
    pub fn from_token(token: &str) -> Self {
        Self {
            digest: Sha256::digest(token.as_bytes()).into(),
        }
    }

    /// Accepts the token held in `path` (its contents without surrounding whitespace).
    pub fn from_token_file(path: &Path) -> Result<Self, AuthError> {
        let text = std::fs::read_to_string(path).map_err(|source| AuthError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let token = text.trim();
        if token.is_empty() {
            return Err(AuthError::Empty(path.display().to_string()));
        }
        Ok(Self::from_token(token))
    }

    /// Accepts the token whose SHA-256 is `hex` (64 hexadecimal digits, either case).
    pub fn from_sha256_hex(hex: &str) -> Result<Self, AuthError> {
        let hex = hex.trim().as_bytes();
        if hex.len() != 64 {
            return Err(AuthError::BadDigest);
        }
        let mut digest = [0u8; 32];
        for (byte, pair) in digest.iter_mut().zip(hex.chunks_exact(2)) {
            let high = hex_digit(pair[0]).ok_or(AuthError::BadDigest)?;
            let low = hex_digit(pair[1]).ok_or(AuthError::BadDigest)?;
            *byte = (high << 4) | low;
        }
        let empty: [u8; 32] = Sha256::digest(b"").into();
        if digest == empty {
            return Err(AuthError::EmptyTokenDigest);
        }
        Ok(Self { digest })
    }

    /// Whether an `Authorization` header value carries the token.
    pub fn accepts(&self, authorization: Option<&[u8]>) -> bool {
        let Some(token) = authorization.and_then(bearer_token) else {
            return false;
        };
        let presented: [u8; 32] = Sha256::digest(token).into();
        presented.ct_eq(&self.digest).into()
    }
}

/// The token of `Bearer <token>` (the scheme is case-insensitive).
fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    let (scheme, token) = value.split_at_checked(7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let token = token.trim_ascii();
    (!token.is_empty()).then_some(token)
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // SHA-256 of "secret".
    const SECRET_SHA256: &str = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";

    #[test]
    fn accepts_only_the_token() {
        let auth = BearerAuth::from_token("secret");
        assert!(auth.accepts(Some(b"Bearer secret")));
        assert!(auth.accepts(Some(b"bearer secret ")));
        assert!(!auth.accepts(Some(b"Bearer secreT")));
        assert!(!auth.accepts(Some(b"Bearer ")));
        assert!(!auth.accepts(Some(b"Basic secret")));
        assert!(!auth.accepts(Some(b"secret")));
        assert!(!auth.accepts(None));
    }

    #[test]
    fn digest_form_matches_the_token_form() {
        let auth = BearerAuth::from_sha256_hex(SECRET_SHA256).expect("valid hex");
        assert!(auth.accepts(Some(b"Bearer secret")));
        let upper = BearerAuth::from_sha256_hex(&SECRET_SHA256.to_uppercase()).expect("hex");
        assert!(upper.accepts(Some(b"Bearer secret")));
        assert!(BearerAuth::from_sha256_hex("abc").is_err());
        assert!(BearerAuth::from_sha256_hex(&"g".repeat(64)).is_err());
    }
}
