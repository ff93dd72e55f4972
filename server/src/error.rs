//! The one error type of the user-lookup store, server and admin commands (devnet's too).

use std::io;

/// Everything that can go wrong while opening the store, changing it or serving.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A value given to the store (or the CLI) is not acceptable; `field` names it.
    #[error("invalid {field}: {message}")]
    InvalidInput {
        /// The field or parameter at fault, e.g. `email` or `wallets[1].publicAddress`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// A referenced record (project, user) does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The record would duplicate an existing one (same uuid, wallet, identity or token).
    #[error("{0}")]
    Conflict(String),
    /// An import file record is bad; `index` is its position in the file's array.
    #[error("record {index}: {source}")]
    ImportRecord {
        /// Zero-based position of the record in the file.
        index: usize,
        /// What is wrong with it.
        #[source]
        source: Box<Error>,
    },
    /// The database holds another schema version than this build reads and writes.
    #[error(
        "database {database} has {schema} schema version {found}, but this build reads and writes version {expected}"
    )]
    SchemaVersion {
        /// The database, without its password.
        database: String,
        /// Whose schema: `user-lookup` (this crate's tables) or `devnet` (devnet's file).
        schema: &'static str,
        /// The version the database records.
        found: i64,
        /// The version this build knows.
        expected: i64,
    },
    /// The database URL is not one this server opens.
    #[error("invalid database URL {url}: {message}")]
    DatabaseUrl {
        /// The URL, without its password.
        url: String,
        /// What is wrong with it.
        message: String,
    },
    /// The database server could not be reached or refused the connection.
    #[error("cannot connect to database {url}: {message}")]
    Unreachable {
        /// The URL, without its password.
        url: String,
        /// The driver's complaint (it never holds the password).
        message: String,
    },
    /// SQLite failed.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed during a query.
    #[error("database error: {0}")]
    Postgres(String),
    /// Reading a file, binding a socket or starting a thread failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying failure.
        #[source]
        source: io::Error,
    },
    /// Malformed JSON input (an import file).
    #[error("{context}: {source}")]
    Json {
        /// What was being parsed.
        context: String,
        /// The parser's complaint.
        #[source]
        source: serde_json::Error,
    },
}

/// `Result` with the server's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An [`Error::InvalidInput`] for `field`.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidInput { field: field.into(), message: message.into() }
    }

    /// An [`Error::Io`] with what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io { context: context.into(), source }
    }
}

/// `error` and its causes in one line (each cause once).
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message = format!("{message}: {text}");
        }
        source = cause.source();
    }
    message
}
