//! The one error type of the devnet library and CLI.

use std::io;

/// Everything that can go wrong while seeding the store or running the server.
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
    /// The database file was written by a newer devnet.
    #[error("database schema version {found} is newer than this devnet supports ({supported})")]
    SchemaVersion {
        /// `PRAGMA user_version` of the file.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// SQLite failed.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// Reading a file, binding a socket or starting a thread failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying failure.
        #[source]
        source: io::Error,
    },
    /// Malformed JSON input (an import file, a fault description).
    #[error("{context}: {source}")]
    Json {
        /// What was being parsed.
        context: String,
        /// The parser's complaint.
        #[source]
        source: serde_json::Error,
    },
}

/// `Result` with the devnet [`Error`].
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
