//! The fleet's errors: each a class a caller can match, with a message naming the value.

/// A fleet failure.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// The database URL cannot be read.
    #[error("database URL {url} cannot be used: {message}")]
    DatabaseUrl {
        /// The URL without its password.
        url: String,
        /// Why.
        message: String,
    },
    /// The database cannot be reached or refused us.
    #[error("PostgreSQL at {url} is unreachable: {message}")]
    Unreachable {
        /// The URL without its password.
        url: String,
        /// Why.
        message: String,
    },
    /// The database holds a fleet schema of another version.
    #[error(
        "PostgreSQL at {url} has fleet schema version {found}; this depositkit uses version {expected}"
    )]
    SchemaVersion {
        /// The URL without its password.
        url: String,
        /// The stored version.
        found: String,
        /// Ours.
        expected: i64,
    },
    /// A query failed.
    #[error("PostgreSQL: {0}")]
    Postgres(String),
    /// `add_owner` for an owner already registered.
    #[error("owner {0} is already registered in the fleet")]
    DuplicateOwner(String),
    /// An owner the fleet does not know.
    #[error("owner {0} is not registered in the fleet")]
    UnknownOwner(String),
    /// An owner address that is not one.
    #[error("owner {owner} is not an owner address: {message}")]
    InvalidOwner {
        /// The value given.
        owner: String,
        /// Why.
        message: String,
    },
    /// A write under a lease a newer holder has replaced (or that expired): refused.
    #[error(
        "owner {owner} is no longer held by this fleet member under fence {fence}: a newer holder took it, or the lease expired"
    )]
    FenceLost {
        /// The owner.
        owner: String,
        /// The fence the write carried.
        fence: i64,
    },
    /// This member's lease expired or it was removed from the fleet: it holds nothing.
    #[error("fleet member {0} lost its lease")]
    LeaseLost(String),
    /// A command did not end within the requester's timeout (it may still run later).
    #[error("command {id} did not end within {} ms", timeout.as_millis())]
    CommandTimeout {
        /// The command's id.
        id: i64,
        /// How long the requester waited.
        timeout: std::time::Duration,
    },
    /// An event cursor that is not one, or names another PostgreSQL cluster.
    #[error("event cursor {0} cannot be used")]
    InvalidCursor(String),
    /// Starting a deposit client for an owner failed.
    #[error("the deposit client of owner {owner} cannot start: {message}")]
    Client {
        /// The owner.
        owner: String,
        /// Why.
        message: String,
    },
}

impl FleetError {
    /// The class of this failure among depositkit's error kinds: what the C status and the
    /// Python exception class of every face are.
    pub fn kind(&self) -> depositkit_core::ErrorKind {
        use depositkit_core::ErrorKind;
        match self {
            FleetError::DatabaseUrl { .. } | FleetError::SchemaVersion { .. } => {
                ErrorKind::Configuration
            }
            FleetError::Unreachable { .. } | FleetError::Postgres(_) => ErrorKind::Network,
            FleetError::DuplicateOwner(_)
            | FleetError::InvalidOwner { .. }
            | FleetError::InvalidCursor(_) => ErrorKind::InvalidArgument,
            FleetError::UnknownOwner(_) => ErrorKind::NotFound,
            FleetError::CommandTimeout { .. } => ErrorKind::Timeout,
            FleetError::FenceLost { .. } | FleetError::LeaseLost(_) | FleetError::Client { .. } => {
                ErrorKind::DepositSdk
            }
        }
    }
}

/// `Result` with [`FleetError`].
pub type Result<T> = std::result::Result<T, FleetError>;

/// An error and its causes in one line (tokio-postgres never puts the password in them).
pub(crate) fn with_causes(error: &dyn std::error::Error) -> String {
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

/// A query failure.
pub(crate) fn pg(e: tokio_postgres::Error) -> FleetError {
    FleetError::Postgres(with_causes(&e))
}
