//! Project authentication (spec §5): `Authorization: Basic base64(project_id:server_key)`.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::error::Result;
use crate::records::normalize_uuid;
use crate::store::UserStore;

/// The credentials of an `Authorization` header. `Debug` hides the key.
pub struct Credentials {
    /// The username: the project id.
    pub project_id: String,
    server_key: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("project_id", &self.project_id)
            .field("server_key", &"<redacted>")
            .finish()
    }
}

/// Why a request was not authenticated. Each reason is safe to show to the caller: none tells
/// whether the project exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFailure {
    /// No `Authorization` header.
    Missing,
    /// A scheme other than `Basic`.
    NotBasic,
    /// Not base64 of UTF-8 `username:password`.
    Malformed,
    /// Unknown project or wrong server key.
    Rejected,
}

impl AuthFailure {
    /// A sentence for the error object's `data.reason`.
    pub fn reason(self) -> &'static str {
        match self {
            AuthFailure::Missing => "missing Authorization header",
            AuthFailure::NotBasic => "the Authorization scheme must be Basic",
            AuthFailure::Malformed => {
                "the Basic credentials are not base64 of project_id:server_key"
            }
            AuthFailure::Rejected => "unknown project id or wrong server key",
        }
    }
}

/// Parses the raw `Authorization` header value.
///
/// # Errors
/// The [`AuthFailure`] describing what is wrong with the header.
pub fn parse_basic(header: Option<&[u8]>) -> Result<Credentials, AuthFailure> {
    let header = header.ok_or(AuthFailure::Missing)?;
    let header = std::str::from_utf8(header).map_err(|_| AuthFailure::Malformed)?.trim();
    let (scheme, encoded) = header.split_once(' ').unwrap_or((header, ""));
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(AuthFailure::NotBasic);
    }
    let decoded = STANDARD.decode(encoded.trim()).map_err(|_| AuthFailure::Malformed)?;
    let decoded = String::from_utf8(decoded).map_err(|_| AuthFailure::Malformed)?;
    let (project_id, server_key) = decoded.split_once(':').ok_or(AuthFailure::Malformed)?;
    Ok(Credentials { project_id: project_id.to_owned(), server_key: server_key.to_owned() })
}

impl Credentials {
    /// The project id to look up: lower-case when it is a UUID. One that is not a UUID cannot
    /// exist, but is still looked up, so that it costs the comparison a known one does.
    pub fn lookup_id(&self) -> String {
        normalize_uuid("project", &self.project_id).unwrap_or_else(|_| self.project_id.clone())
    }

    /// The presented server key.
    pub fn server_key(&self) -> &str {
        &self.server_key
    }
}

/// Checks the header against the store and returns the authenticated project id.
///
/// # Errors
/// Outer: database failures. Inner: why the caller is not authenticated.
pub async fn authenticate(
    store: &UserStore,
    header: Option<&[u8]>,
) -> Result<Result<String, AuthFailure>> {
    let credentials = match parse_basic(header) {
        Ok(c) => c,
        Err(failure) => return Ok(Err(failure)),
    };
    let project_id = credentials.lookup_id();
    if store.verify_server_key(&project_id, &credentials.server_key).await? {
        Ok(Ok(project_id))
    } else {
        Ok(Err(AuthFailure::Rejected))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(user_pass: &str) -> Vec<u8> {
        format!("Basic {}", STANDARD.encode(user_pass)).into_bytes()
    }

    #[test]
    fn parses_basic_credentials() {
        let c = parse_basic(Some(&header("proj:sk_key:with:colons"))).unwrap();
        assert_eq!(c.project_id, "proj");
        assert_eq!(c.server_key, "sk_key:with:colons");
        assert!(!format!("{c:?}").contains("sk_key"));
        let lower = format!("basic {}", STANDARD.encode("p:k"));
        assert!(parse_basic(Some(lower.as_bytes())).is_ok());
    }

    #[test]
    fn reports_what_is_wrong() {
        assert_eq!(parse_basic(None).unwrap_err(), AuthFailure::Missing);
        assert_eq!(parse_basic(Some(b"Bearer abc")).unwrap_err(), AuthFailure::NotBasic);
        assert_eq!(parse_basic(Some(b"Basic !!!")).unwrap_err(), AuthFailure::Malformed);
        assert_eq!(parse_basic(Some(&header("no-colon"))).unwrap_err(), AuthFailure::Malformed);
        assert_eq!(parse_basic(Some(b"Basic")).unwrap_err(), AuthFailure::Malformed);
    }
}
