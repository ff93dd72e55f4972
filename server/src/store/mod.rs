//! The user-lookup store: projects, users (the User record of spec §2), their wallets,
//! identities and session tokens, and addresses that interacted with a project. Two stores keep
//! the same data and answer the same way ([`UserStore`]): SQLite (one file; devnet's too) and
//! PostgreSQL (one database that several servers share). Secrets (server keys, session tokens)
//! are stored as SHA-256 hashes only.

pub mod import;
pub mod lookup;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod sqlite;
pub mod url;

use std::time::SystemTime;

use serde_json::Value;

pub use self::lookup::{Found, Lookup};
pub use self::url::{DatabaseUrl, redact};
use crate::error::{Error, Result};
use crate::records::{ChainFamily, NewUser, ProjectCredentials, SessionStatus, User};
#[cfg(feature = "postgres")]
use postgres::PgStore;
use sqlite::SqliteStore;

/// The store behind a server: SQLite or PostgreSQL, chosen by the database URL. Clones share
/// the connections. SQLite's blocking calls run on tokio's blocking pool, but for a request's
/// lookup on a free connection ([`lookup`]).
#[derive(Clone, Debug)]
pub enum UserStore {
    /// `sqlite:///path`.
    Sqlite(SqliteStore),
    /// `postgres://…`.
    #[cfg(feature = "postgres")]
    Postgres(PgStore),
}

/// Calls `method` on the store: SQLite's on the blocking pool (with owned copies of the
/// `ref` arguments), PostgreSQL's awaited. `val` arguments are `Copy`.
macro_rules! dispatch {
    ($self:expr, $method:ident($($how:ident $arg:ident),*)) => {
        match $self {
            UserStore::Sqlite(sqlite) => {
                let sqlite = sqlite.clone();
                $(let $arg = dispatch!(@own $how $arg);)*
                blocking(move || sqlite.$method($(dispatch!(@pass $how $arg)),*)).await
            }
            #[cfg(feature = "postgres")]
            UserStore::Postgres(pg) => pg.$method($($arg),*).await,
        }
    };
    (@own ref $arg:ident) => { $arg.to_owned() };
    (@own val $arg:ident) => { $arg };
    (@pass ref $arg:ident) => { &$arg };
    (@pass val $arg:ident) => { $arg };
}

impl UserStore {
    /// Opens the store `url` names: `sqlite:///path` (created with the schema when missing) or
    /// `postgres://user:password@host:port/database` (the schema is created in an empty
    /// database). `max_connections` bounds the pool (SQLite: the connections kept open).
    ///
    /// # Errors
    /// [`Error::DatabaseUrl`] for an unknown scheme; [`Error::Unreachable`] naming the URL
    /// (never its password); [`Error::SchemaVersion`] naming both versions.
    pub async fn open(url: &str, max_connections: usize) -> Result<Self> {
        match DatabaseUrl::parse(url)? {
            DatabaseUrl::Sqlite(path) => {
                let store =
                    blocking(move || SqliteStore::open(&path, max_connections.clamp(1, 16)))
                        .await?;
                Ok(UserStore::Sqlite(store))
            }
            #[cfg(feature = "postgres")]
            DatabaseUrl::Postgres(url) => {
                Ok(UserStore::Postgres(PgStore::connect(&url, max_connections).await?))
            }
            #[cfg(not(feature = "postgres"))]
            DatabaseUrl::Postgres(url) => Err(Error::DatabaseUrl {
                url: redact(&url),
                message: "this build has no PostgreSQL support (feature \"postgres\")".into(),
            }),
        }
    }

    /// Whether `server_key` is the key of `project_id` (constant time in the key).
    ///
    /// # Errors
    /// Database failures only.
    pub async fn verify_server_key(&self, project_id: &str, server_key: &str) -> Result<bool> {
        dispatch!(self, verify_server_key(ref project_id, ref server_key))
    }

    /// Whether `server_key` is `project_id`'s key (constant time in the key) and, when it is,
    /// what `lookup` finds for the project, in one trip to the store ([`lookup`]); `None` when
    /// the key is wrong (nothing is looked up then).
    ///
    /// # Errors
    /// Database failures only.
    pub async fn authenticate_and_look_up(
        &self,
        project_id: &str,
        server_key: &str,
        lookup: &Lookup,
    ) -> Result<Option<Found>> {
        let (accepted, found) = self.look_up_checked(project_id, Some(server_key), lookup).await?;
        Ok(accepted.then_some(found))
    }

    /// What `lookup` finds for `project_id`, whose caller is already authenticated.
    ///
    /// # Errors
    /// Database failures only.
    pub async fn look_up(&self, project_id: &str, lookup: &Lookup) -> Result<Found> {
        Ok(self.look_up_checked(project_id, None, lookup).await?.1)
    }

    async fn look_up_checked(
        &self,
        project_id: &str,
        server_key: Option<&str>,
        lookup: &Lookup,
    ) -> Result<(bool, Found)> {
        match self {
            UserStore::Sqlite(sqlite) => {
                if let Some(answer) = sqlite.look_up_if_free(project_id, server_key, lookup) {
                    return answer;
                }
                let sqlite = sqlite.clone();
                let (project_id, lookup) = (project_id.to_owned(), lookup.clone());
                let server_key = server_key.map(str::to_owned);
                blocking(move || sqlite.look_up(&project_id, server_key.as_deref(), &lookup)).await
            }
            #[cfg(feature = "postgres")]
            UserStore::Postgres(pg) => pg.look_up(project_id, server_key, lookup).await,
        }
    }

    /// The User record of `uuid` when it belongs to `project_id`.
    ///
    /// # Errors
    /// Database failures only.
    pub async fn user(&self, project_id: &str, uuid: &str) -> Result<Option<User>> {
        dispatch!(self, user(ref project_id, ref uuid))
    }

    /// What `token` is for user `uuid` at `now_ms`.
    ///
    /// # Errors
    /// Database failures only.
    pub async fn session_status(
        &self,
        uuid: &str,
        token: &str,
        now_ms: i64,
    ) -> Result<SessionStatus> {
        dispatch!(self, session_status(ref uuid, ref token, val now_ms))
    }

    /// The user of `project_id` with identity (`provider`, `uid`).
    ///
    /// # Errors
    /// Database failures only.
    pub async fn user_by_identity(
        &self,
        project_id: &str,
        provider: &str,
        uid: &str,
    ) -> Result<Option<User>> {
        dispatch!(self, user_by_identity(ref project_id, ref provider, ref uid))
    }

    /// Whether `address` on `chain` is a wallet of the project's users or interacted with it.
    ///
    /// # Errors
    /// Database failures only.
    pub async fn is_project_address(
        &self,
        project_id: &str,
        chain: ChainFamily,
        address: &str,
    ) -> Result<bool> {
        dispatch!(self, is_project_address(ref project_id, val chain, ref address))
    }

    /// The uuids of a project's users, oldest first.
    ///
    /// # Errors
    /// Database failures only.
    pub async fn user_uuids(&self, project_id: &str) -> Result<Vec<String>> {
        dispatch!(self, user_uuids(ref project_id))
    }

    /// Creates a project with a new random server key, returned only now.
    ///
    /// # Errors
    /// An empty or over-long name; database failures.
    pub async fn create_project(&self, name: &str) -> Result<ProjectCredentials> {
        dispatch!(self, create_project(ref name))
    }

    /// Replaces a project's server key (the old one stops working at once).
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown project; database failures.
    pub async fn rotate_server_key(&self, project_id: &str) -> Result<ProjectCredentials> {
        dispatch!(self, rotate_server_key(ref project_id))
    }

    /// Adds a user; returns its uuid.
    ///
    /// # Errors
    /// A malformed uuid or empty email; [`Error::NotFound`] for an unknown project;
    /// [`Error::Conflict`] when the uuid is taken.
    pub async fn add_user(&self, project_id: &str, user: &NewUser) -> Result<String> {
        dispatch!(self, add_user(ref project_id, ref user))
    }

    /// Adds a wallet to a user (again: nothing happens).
    ///
    /// # Errors
    /// An address that is not valid for `chain`; [`Error::NotFound`] for an unknown user.
    pub async fn add_wallet(
        &self,
        user_uuid: &str,
        chain: ChainFamily,
        address: &str,
    ) -> Result<()> {
        dispatch!(self, add_wallet(ref user_uuid, val chain, ref address))
    }

    /// Links an identity to a user.
    ///
    /// # Errors
    /// A malformed provider or uid; [`Error::NotFound`] for an unknown user;
    /// [`Error::Conflict`] when it belongs to another user of the project.
    pub async fn add_identity(&self, user_uuid: &str, provider: &str, uid: &str) -> Result<()> {
        dispatch!(self, add_identity(ref user_uuid, ref provider, ref uid))
    }

    /// Creates a session valid until `expires_at` with `token` (a new random one when `None`);
    /// returns the token, shown only now.
    ///
    /// # Errors
    /// A malformed token; [`Error::NotFound`] for an unknown user; [`Error::Conflict`] when the
    /// token is in use.
    pub async fn add_session(
        &self,
        user_uuid: &str,
        token: Option<&str>,
        expires_at: SystemTime,
    ) -> Result<String> {
        match self {
            UserStore::Sqlite(sqlite) => {
                let (sqlite, user_uuid) = (sqlite.clone(), user_uuid.to_owned());
                let token = token.map(str::to_owned);
                blocking(move || match token {
                    Some(token) => {
                        sqlite.add_session_with_token(&user_uuid, &token, expires_at)?;
                        Ok(token)
                    }
                    None => sqlite.add_session(&user_uuid, expires_at),
                })
                .await
            }
            #[cfg(feature = "postgres")]
            UserStore::Postgres(pg) => pg.add_session(user_uuid, token, expires_at).await,
        }
    }

    /// Records that `address` interacted with a project (`isProjectUser` then answers true).
    ///
    /// # Errors
    /// An address that is not valid for `chain`; [`Error::NotFound`] for an unknown project.
    pub async fn add_interaction(
        &self,
        project_id: &str,
        chain: ChainFamily,
        address: &str,
    ) -> Result<()> {
        dispatch!(self, add_interaction(ref project_id, val chain, ref address))
    }

    /// Imports a JSON array of user records in one transaction ([`import`]); returns the uuids.
    ///
    /// # Errors
    /// [`Error::ImportRecord`] naming the first bad record; [`Error::NotFound`] for an unknown
    /// project.
    pub async fn import_users(&self, project_id: &str, records: &Value) -> Result<Vec<String>> {
        dispatch!(self, import_users(ref project_id, ref records))
    }

    /// Closes the connections (PostgreSQL: the pool; SQLite closes when the last clone goes).
    pub fn close(&self) {
        #[cfg(feature = "postgres")]
        if let UserStore::Postgres(pg) = self {
            pg.close();
        }
    }
}

/// Runs a blocking store call on tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    call: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(call)
        .await
        .map_err(|e| Error::io("store task", std::io::Error::other(e.to_string())))?
}
