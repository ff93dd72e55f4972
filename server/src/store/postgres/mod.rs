//! The PostgreSQL store: a deadpool pool of tokio-postgres connections (TLS by rustls when the
//! server offers it or `sslmode=require` asks for it), statements prepared once per connection
//! and cached. Several servers may share one database: every read goes to the database, so a
//! user added through one is visible through the others at once.

mod read;
mod request;
mod schema;
mod write;

use std::collections::HashSet;
use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio_postgres::error::SqlState;

use super::url::redact;
use crate::error::{Error, Result};

/// How long connecting may take when the URL does not say (`connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a request waits for a free pooled connection.
const POOL_WAIT: Duration = Duration::from_secs(10);

/// The user-lookup store on PostgreSQL. Clones share the pool.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool,
    /// The URL without its password, for errors.
    shown: String,
    /// Credentials found valid lately ([`crate::secret::credential_hash`]): their lookups go
    /// out with the key check, in one round trip; others' wait for the key check. It decides
    /// only that order, never whether a caller is accepted: every request reads the key.
    seen_valid: Arc<Mutex<HashSet<[u8; 32]>>>,
}

/// Credentials remembered in [`PgStore::seen_valid`] at most (then it starts again, empty).
const MAX_SEEN_VALID: usize = 4096;

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("url", &self.shown).finish()
    }
}

impl PgStore {
    /// Connects to `url` with a pool of up to `max_connections`, creates the schema in an
    /// empty database and checks the version of an existing one.
    ///
    /// # Errors
    /// [`Error::DatabaseUrl`] for a URL tokio-postgres cannot read; [`Error::Unreachable`]
    /// naming the URL (without its password) when the server cannot be reached or refuses us;
    /// [`Error::SchemaVersion`] naming both versions.
    pub async fn connect(url: &str, max_connections: usize) -> Result<Self> {
        let shown = redact(url);
        let mut config = tokio_postgres::Config::from_str(url)
            .map_err(|e| Error::DatabaseUrl { url: shown.clone(), message: chain(&e) })?;
        if config.get_application_name().is_none() {
            config.application_name("depositkit-server");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let manager = Manager::from_config(
            config,
            tls(),
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
        let pool = Pool::builder(manager)
            .max_size(max_connections.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(POOL_WAIT))
            .create_timeout(Some(CONNECT_TIMEOUT + Duration::from_secs(1)))
            .build()
            .map_err(|e| Error::DatabaseUrl { url: shown.clone(), message: e.to_string() })?;
        let store = PgStore { pool, shown, seen_valid: Arc::default() };
        let client = store.client().await?;
        schema::prepare(&client, &store.shown).await?;
        Ok(store)
    }

    /// The URL without its password.
    pub fn url(&self) -> &str {
        &self.shown
    }

    /// A pooled connection.
    async fn client(&self) -> Result<Object> {
        self.pool.get().await.map_err(|e| Error::Unreachable {
            url: self.shown.clone(),
            message: match &e {
                deadpool_postgres::PoolError::Backend(e) => chain(e),
                other => other.to_string(),
            },
        })
    }

    /// Whether `credential` was found valid lately.
    fn seen_valid(&self, credential: &[u8; 32]) -> bool {
        self.seen_valid.lock().unwrap_or_else(PoisonError::into_inner).contains(credential)
    }

    /// Remembers whether `credential` was just found valid.
    fn remember(&self, credential: [u8; 32], valid: bool) {
        let mut seen = self.seen_valid.lock().unwrap_or_else(PoisonError::into_inner);
        if !valid {
            seen.remove(&credential);
            return;
        }
        if seen.len() >= MAX_SEEN_VALID {
            seen.clear();
        }
        seen.insert(credential);
    }

    /// Closes the pool: its idle connections now, the others when they come back.
    pub fn close(&self) {
        self.pool.close();
    }
}

/// TLS with rustls (ring) trusting the webpki roots; tokio-postgres uses it as `sslmode` says
/// (`prefer` by default: TLS when the server offers it).
fn tls() -> tokio_postgres_rustls::MakeRustlsConnect {
    // Only ring is compiled in; installing it as the process default is what rustls asks of
    // an application (it fails harmlessly when already installed).
    let _ = rustls::crypto::ring::default_provider().install_default();
    tokio_postgres_rustls::MakeRustlsConnect::with_webpki_roots()
}

/// A driver error and its causes in one line (tokio-postgres never puts the password in them).
fn chain(error: &dyn std::error::Error) -> String {
    crate::error::with_causes(error)
}

/// A query failure: a uniqueness violation becomes [`Error::Conflict`] with `conflict`'s
/// message, anything else [`Error::Postgres`].
fn query_error(e: &tokio_postgres::Error, conflict: impl FnOnce() -> String) -> Error {
    if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
        Error::Conflict(conflict())
    } else {
        Error::Postgres(chain(e))
    }
}

/// A query failure with no expected conflict.
fn db(e: tokio_postgres::Error) -> Error {
    Error::Postgres(chain(&e))
}
