//! Database URLs: which store a URL names, and the URL as it may be shown (without its
//! password) in errors and logs.

use std::path::PathBuf;

use crate::error::{Error, Result};

/// The store a database URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// `sqlite:///absolute/path` or `sqlite://relative/path`: a SQLite file.
    Sqlite(PathBuf),
    /// `postgres://…` or `postgresql://…`: the URL as given (libpq's URI form).
    Postgres(String),
}

impl DatabaseUrl {
    /// Reads `url`.
    ///
    /// # Errors
    /// [`Error::DatabaseUrl`] for an unknown scheme or an empty path.
    pub fn parse(url: &str) -> Result<Self> {
        if let Some(path) = url.strip_prefix("sqlite://") {
            if path.is_empty() {
                return Err(Error::DatabaseUrl {
                    url: url.to_owned(),
                    message: "the path is missing (sqlite:///absolute/path.sqlite)".into(),
                });
            }
            return Ok(DatabaseUrl::Sqlite(PathBuf::from(path)));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(DatabaseUrl::Postgres(url.to_owned()));
        }
        Err(Error::DatabaseUrl {
            url: redact(url),
            message: "expected sqlite:///path/to/file.sqlite or postgres://user@host:port/database"
                .into(),
        })
    }
}

/// `url` with the password (of the user info, or a `password=` parameter) replaced by `***`.
pub fn redact(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme_end) = out.find("://") {
        let rest_start = scheme_end + 3;
        let authority_end =
            out[rest_start..].find(['/', '?']).map_or(out.len(), |i| rest_start + i);
        if let Some(at) = out[rest_start..authority_end].rfind('@') {
            let user_info = &out[rest_start..rest_start + at];
            if let Some(colon) = user_info.find(':') {
                let start = rest_start + colon + 1;
                out.replace_range(start..rest_start + at, "***");
            }
        }
    }
    if let Some(query_start) = out.find('?') {
        let (head, query) = out.split_at(query_start + 1);
        let redacted: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                _ => pair.to_owned(),
            })
            .collect();
        out = format!("{head}{}", redacted.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(
            redact("postgres://app:s3cret@db.example:5432/users"),
            "postgres://app:***@db.example:5432/users"
        );
        assert_eq!(
            redact("postgres://app@db/users?password=s3cret&sslmode=require"),
            "postgres://app@db/users?password=***&sslmode=require"
        );
        assert_eq!(redact("postgres://db/users"), "postgres://db/users");
        assert_eq!(redact("postgres://a:b:c@h/d"), "postgres://a:***@h/d");
    }

    #[test]
    fn urls_name_their_store() {
        assert_eq!(
            DatabaseUrl::parse("sqlite:///var/lib/users.sqlite").unwrap(),
            DatabaseUrl::Sqlite(PathBuf::from("/var/lib/users.sqlite"))
        );
        assert!(matches!(
            DatabaseUrl::parse("postgresql://h/d").unwrap(),
            DatabaseUrl::Postgres(_)
        ));
        let err = DatabaseUrl::parse("mysql://u:pw@h/d").unwrap_err().to_string();
        assert!(err.contains("mysql://u:***@h/d") && !err.contains("pw"), "{err}");
        assert!(DatabaseUrl::parse("sqlite://").is_err());
    }
}
