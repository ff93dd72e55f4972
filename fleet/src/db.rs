//! The fleet's connection to PostgreSQL: a deadpool pool of tokio-postgres connections (TLS by
//! rustls when the server offers it or `sslmode=require` asks for it; statements prepared once
//! per connection and cached), on a tokio runtime of the fleet's own, and the bridge that lets
//! the deposit clients' synchronous threads wait for it.

use std::future::Future;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};

use crate::error::{FleetError, Result, with_causes};
use crate::schema;

/// How long connecting may take when the URL does not say (`connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a caller waits for a free pooled connection.
const POOL_WAIT: Duration = Duration::from_secs(10);
/// Session limits, below the lease: a member paused inside a transaction is cut off by the
/// server (its share lock on an owner must not hold a takeover up), and no statement hangs.
const SESSION_OPTIONS: &str =
    "-c idle_in_transaction_session_timeout=3000 -c statement_timeout=5000 -c lock_timeout=2000";

/// TLS by rustls (ring) trusting the webpki roots; used as `sslmode` says (`prefer` by
/// default: TLS when the server offers it).
fn tls() -> tokio_postgres_rustls::MakeRustlsConnect {
    // Only ring is compiled in; installing it as the process default is what rustls asks of
    // an application (it fails harmlessly when already installed).
    let _ = rustls::crypto::ring::default_provider().install_default();
    tokio_postgres_rustls::MakeRustlsConnect::with_webpki_roots()
}

/// The fleet's runtime: one per process, never dropped (a runtime must not be dropped from
/// inside one, and fleet tasks may hold the last reference to anything).
fn runtime() -> Result<tokio::runtime::Handle> {
    static RUNTIME: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> =
        OnceLock::new();
    let built = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("depositkit-fleet")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    });
    match built {
        Ok(runtime) => Ok(runtime.handle().clone()),
        Err(e) => Err(FleetError::Postgres(format!("cannot start the fleet's runtime: {e}"))),
    }
}

/// A pool on the fleet's runtime. Clones share it. Clones share both.
#[derive(Clone)]
pub(crate) struct Db {
    pool: Pool,
    /// For connections outside the pool (a listener).
    config: tokio_postgres::Config,
    /// The process's doorbell for new events (`log.rs`).
    doorbell: Arc<crate::log::Doorbell>,
    runtime: tokio::runtime::Handle,
    /// Where, without the password: `host:port/database`.
    shown: Arc<str>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("at", &self.shown).finish_non_exhaustive()
    }
}

/// `host:port/database` of `config`: what errors show (never the password).
fn shown(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", config.get_dbname().unwrap_or("postgres"))
}

impl Db {
    /// Connects to `url` (pool of up to `max_connections`, `application_name` as given),
    /// creates the fleet schema in an empty database and checks the version of an existing
    /// one.
    ///
    /// # Errors
    /// [`FleetError::DatabaseUrl`], [`FleetError::Unreachable`], [`FleetError::SchemaVersion`].
    pub fn connect(url: &str, application_name: &str, max_connections: usize) -> Result<Db> {
        let mut config = tokio_postgres::Config::from_str(url).map_err(|e| {
            FleetError::DatabaseUrl { url: "(not shown)".to_owned(), message: with_causes(&e) }
        })?;
        let shown: Arc<str> = shown(&config).into();
        config.application_name(application_name);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_options().is_none() {
            config.options(SESSION_OPTIONS);
        }
        let runtime = runtime()?;
        let tls = tls();
        let manager = Manager::from_config(
            config.clone(),
            tls,
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
        let pool = Pool::builder(manager)
            .max_size(max_connections.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(POOL_WAIT))
            .create_timeout(Some(CONNECT_TIMEOUT + Duration::from_secs(1)))
            .build()
            .map_err(|e| FleetError::DatabaseUrl {
                url: shown.to_string(),
                message: e.to_string(),
            })?;
        let db = Db { pool, config, doorbell: Arc::default(), runtime, shown };
        let prepared = db.clone();
        db.block_on(async move {
            let client = prepared.client().await?;
            schema::prepare(&client, &prepared.shown).await
        })?;
        Ok(db)
    }

    /// Where the database is, without the password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// A pooled connection.
    pub async fn client(&self) -> Result<Object> {
        self.pool.get().await.map_err(|e| FleetError::Unreachable {
            url: self.shown.to_string(),
            message: match &e {
                deadpool_postgres::PoolError::Backend(e) => with_causes(e),
                other => other.to_string(),
            },
        })
    }

    /// A connection of its own, outside the pool, listening on `channel`: each notification
    /// leaves a permit in `rung`. Returns the client (keep it: dropping it closes the
    /// connection) and the task driving the connection (finished when it dropped).
    pub async fn listen(
        &self,
        channel: &str,
        rung: Arc<tokio::sync::Notify>,
    ) -> Result<(tokio_postgres::Client, tokio::task::JoinHandle<()>)> {
        let (client, driver) = self.own_connection(Some(rung)).await?;
        client.batch_execute(&format!("LISTEN {channel}")).await.map_err(crate::error::pg)?;
        Ok((client, driver))
    }

    /// A connection of its own, outside the pool (a session that must stay one: a listener,
    /// a member's lease session). Notifications leave a permit in `rung`, when given. Returns
    /// the client (dropping it closes the connection) and the task driving the connection
    /// (finished once the connection dropped, from either side).
    pub async fn own_connection(
        &self,
        rung: Option<Arc<tokio::sync::Notify>>,
    ) -> Result<(tokio_postgres::Client, tokio::task::JoinHandle<()>)> {
        let (client, connection) = self.config.connect(tls()).await.map_err(|e| {
            FleetError::Unreachable { url: self.shown.to_string(), message: with_causes(&e) }
        })?;
        Ok((client, tokio::spawn(drive(connection, rung))))
    }

    /// Rings the doorbell for new events (throttled; in the background).
    pub fn ring(&self) {
        self.doorbell.ring(self);
    }

    /// The fleet's runtime.
    pub fn handle(&self) -> tokio::runtime::Handle {
        self.runtime.clone()
    }

    /// Runs `work` on the fleet's runtime and waits for it: callable from any thread that is
    /// not one of the fleet runtime's own workers (the deposit clients' threads are not).
    pub fn block_on<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T>> + Send + 'static,
    ) -> Result<T> {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        self.runtime.spawn(async move {
            let _ = sender.send(work.await);
        });
        receiver.recv().unwrap_or_else(|_| {
            Err(FleetError::Postgres("the fleet's runtime stopped during a query".to_owned()))
        })
    }
}

/// Drives a connection of its own until it drops, turning notifications into permits.
async fn drive<S, T>(
    mut connection: tokio_postgres::Connection<S, T>,
    rung: Option<Arc<tokio::sync::Notify>>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    while let Some(message) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
        match message {
            Ok(tokio_postgres::AsyncMessage::Notification(_)) => {
                if let Some(rung) = &rung {
                    rung.notify_one();
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
}
