//! Secrets: generating server keys and session tokens, hashing them for storage, and comparing
//! hashes in constant time. Secrets are only ever stored as SHA-256 hashes.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Prefix of generated project server keys.
pub const SERVER_KEY_PREFIX: &str = "sk_";
/// Prefix of generated session tokens.
pub const SESSION_TOKEN_PREFIX: &str = "st_";

/// SHA-256 of `secret`'s UTF-8 bytes.
pub fn hash(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// SHA-256 of a project id and a server key presented for it: how a server remembers, in
/// memory only, which credentials it found valid lately (never stored, never logged).
pub fn credential_hash(project_id: &str, server_key: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(project_id.as_bytes());
    hasher.update([0u8]);
    hasher.update(server_key.as_bytes());
    hasher.finalize().into()
}

/// Whether two stored hashes are equal, in time independent of where they differ.
pub fn hashes_equal(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

/// Whether `secret` hashes to `stored`. The comparison takes the same time whether or not
/// there is a stored hash (an unknown project costs what a known one does) and wherever the
/// hashes differ.
pub fn matches_stored(secret: &str, stored: Option<&[u8]>) -> bool {
    let presented = hash(secret);
    let known = stored.is_some();
    let placeholder = [0u8; 32];
    hashes_equal(&presented, stored.unwrap_or(&placeholder)) & known
}

/// A new project server key: `sk_` + 32 random bytes in base64url without padding.
pub fn new_server_key() -> String {
    random_secret(SERVER_KEY_PREFIX)
}

/// A new session token: `st_` + 32 random bytes in base64url without padding.
pub fn new_session_token() -> String {
    random_secret(SESSION_TOKEN_PREFIX)
}

fn random_secret(prefix: &str) -> String {
    let bytes: [u8; 32] = rand::random();
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_prefixed_random_and_hash_stably() {
        let (a, b) = (new_server_key(), new_server_key());
        assert!(a.starts_with("sk_") && a.len() == 3 + 43, "{a}");
        assert_ne!(a, b);
        assert!(new_session_token().starts_with("st_"));
        assert!(hashes_equal(&hash(&a), &hash(&a)));
        assert!(!hashes_equal(&hash(&a), &hash(&b)));
        assert!(!hashes_equal(&hash(&a), &[0u8; 31]));
    }
}
