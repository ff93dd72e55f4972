//! The SQLite store: one file (WAL mode, foreign keys on), a few connections each behind its own
//! mutex ([`SqlitePool`]). Every method of [`SqliteStore`] blocks; [`super::UserStore`] calls
//! them on tokio's blocking pool.
//!
//! devnet keeps the same tables in its own file (next to its deposit services' tables) and
//! serves the user lookup through [`SqliteStore::over`] on its own pool.

mod read;
pub mod schema;
mod write;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::Connection;

use crate::error::{Error, Result};
use crate::store::lookup::{Found, Lookup};

/// Connections a store opens unless told otherwise: enough for the server's concurrent reads.
pub const DEFAULT_CONNECTIONS: usize = 4;

/// A few connections to one SQLite file; [`SqlitePool::conn`] hands out a free one.
pub struct SqlitePool {
    path: PathBuf,
    connections: Vec<Mutex<Connection>>,
    next: AtomicUsize,
}

impl std::fmt::Debug for SqlitePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlitePool")
            .field("path", &self.path)
            .field("connections", &self.connections.len())
            .finish()
    }
}

impl SqlitePool {
    /// Opens `connections` (at least one) connections to `path`, creating the file when
    /// missing; `prepare` runs on each (pragmas, the schema).
    ///
    /// # Errors
    /// The file cannot be opened or created; what `prepare` returns.
    pub fn open<E: From<Error>>(
        path: &Path,
        connections: usize,
        prepare: impl Fn(&mut Connection) -> Result<(), E>,
    ) -> Result<Self, E> {
        let connections = (0..connections.max(1))
            .map(|_| {
                let mut conn = open_connection(path)?;
                prepare(&mut conn)?;
                Ok(Mutex::new(conn))
            })
            .collect::<Result<Vec<_>, E>>()?;
        Ok(SqlitePool { path: path.to_path_buf(), connections, next: AtomicUsize::new(0) })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many connections the pool holds.
    pub fn size(&self) -> usize {
        self.connections.len()
    }

    /// A free connection if there is one, else waits for the next one in turn.
    pub fn conn(&self) -> MutexGuard<'_, Connection> {
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        if let Some(guard) = self.free_from(start) {
            return guard;
        }
        let all = &self.connections;
        // A panic while a connection was held leaves it usable: SQLite rolls back on its own.
        all[start % all.len()].lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A free connection, or `None` at once when all are in use.
    pub fn try_conn(&self) -> Option<MutexGuard<'_, Connection>> {
        self.free_from(self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// The first free connection from the one numbered `start` on, in turn.
    fn free_from(&self, start: usize) -> Option<MutexGuard<'_, Connection>> {
        let all = &self.connections;
        (0..all.len()).find_map(|i| match all[(start + i) % all.len()].try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        })
    }
}

fn open_connection(path: &Path) -> Result<Connection> {
    Connection::open(path).map_err(|e| match e {
        rusqlite::Error::SqliteFailure(_, _) => Error::io(
            format!("cannot open database {}", path.display()),
            std::io::Error::other(e.to_string()),
        ),
        other => Error::Sqlite(other),
    })
}

/// The user-lookup store on SQLite. Clones share the same connections.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    pool: Arc<SqlitePool>,
}

impl SqliteStore {
    /// Opens (creating when missing, with the schema) the database at `path` with
    /// `connections` connections.
    ///
    /// # Errors
    /// The file cannot be opened or created; [`Error::SchemaVersion`] when it holds another
    /// schema version.
    pub fn open(path: impl AsRef<Path>, connections: usize) -> Result<Self> {
        let pool = SqlitePool::open(path.as_ref(), connections, schema::prepare)?;
        Ok(SqliteStore { pool: Arc::new(pool) })
    }

    /// The store over a pool whose connections already have the tables of
    /// [`schema::TABLES`] (devnet's file, whose schema devnet versions).
    pub fn over(pool: Arc<SqlitePool>) -> Self {
        SqliteStore { pool }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        self.pool.path()
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.pool.conn()
    }

    /// [`read::look_up`] right on the calling thread when a connection is free (it then only
    /// runs point lookups, which do not wait in WAL mode), else `None` without waiting.
    ///
    /// # Errors
    /// Database failures only.
    pub fn look_up_if_free(
        &self,
        project_id: &str,
        server_key: Option<&str>,
        lookup: &Lookup,
    ) -> Option<Result<(bool, Found)>> {
        let conn = self.pool.try_conn()?;
        Some(read::look_up(&conn, project_id, server_key, lookup))
    }
}

/// Maps a uniqueness violation to [`Error::Conflict`] with `message`, other errors unchanged.
pub fn conflict_as(e: rusqlite::Error, message: impl FnOnce() -> String) -> Error {
    match &e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
        {
            Error::Conflict(message())
        }
        _ => Error::Sqlite(e),
    }
}
