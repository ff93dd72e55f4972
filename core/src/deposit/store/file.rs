//! The store's file: opened once per process and shared by its clients, its schema, the locks
//! that keep one process per file, its event journal (`journal.rs`: recovered on opening,
//! folded when the last client closes), and the rule that a file this version cannot read is
//! the caller's configuration to fix.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension};

use super::group::GroupCommit;
use super::journal::EventJournal;
use crate::describe::{quote, quote_path};
use crate::error::{Error, ErrorKind, Result};
use crate::registry::WeakRegistry;

/// The schema this code writes (`meta.schema_version`). Version 2 came with the event journal
/// (`<store>-events`, `journal.rs`): a file of version 2 may have acknowledged events in its
/// journal that a reader of version 1 would not see, so such a reader refuses it.
const SCHEMA_VERSION: i64 = 2;

/// The earlier schema this code brings up to [`SCHEMA_VERSION`] when it opens a file (nothing
/// to change but the number: the partial index below replaces the old one either way).
const UPGRADES_FROM: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS clients (
    owner TEXT PRIMARY KEY, account_id TEXT, detector TEXT, notifications TEXT,
    updated_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS deposits (
    owner TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL, state TEXT NOT NULL,
    open INTEGER NOT NULL, record TEXT NOT NULL, updated_at INTEGER NOT NULL,
    PRIMARY KEY (owner, id));
CREATE TABLE IF NOT EXISTS attempts (
    owner TEXT NOT NULL, quote_id TEXT NOT NULL, deposit_id TEXT NOT NULL,
    purpose TEXT NOT NULL, sent_at INTEGER NOT NULL, outcome TEXT, transaction_id TEXT,
    updated_at INTEGER NOT NULL, PRIMARY KEY (owner, quote_id));
CREATE TABLE IF NOT EXISTS results (
    owner TEXT NOT NULL, deposit_id TEXT NOT NULL, kind TEXT NOT NULL, result TEXT NOT NULL,
    updated_at INTEGER NOT NULL, PRIMARY KEY (owner, deposit_id, kind));
CREATE TABLE IF NOT EXISTS events (
    owner TEXT NOT NULL, id INTEGER NOT NULL, at INTEGER NOT NULL, type TEXT NOT NULL,
    deposit_id TEXT, event TEXT NOT NULL, PRIMARY KEY (owner, id));
-- A deposit's history (`deposit_events`); events of no deposit (most of them: status, onramp)
-- stay out of it, so appending them writes one index less. It replaced `events_by_deposit`, the
-- same index over every event.
DROP INDEX IF EXISTS events_by_deposit;
CREATE INDEX IF NOT EXISTS events_of_deposits ON events (owner, deposit_id, id)
    WHERE deposit_id IS NOT NULL;
";

/// The SQLite file shared by the clients of one process.
pub(super) struct SharedDb {
    pub(super) path: PathBuf,
    pub(super) conn: Mutex<Connection>,
    /// Owners held by a live client.
    pub(super) owners: Mutex<HashSet<String>>,
    /// The writes of every owner on this file, committed in groups.
    pub(super) group: GroupCommit,
    /// The changes of events alone, appended here and folded into the file in batches.
    pub(super) journal: EventJournal,
}

impl SharedDb {
    /// Folds the event journal: before every other write and every read, so they see (and
    /// come after) every acknowledged event.
    pub(super) fn fold_journal(&self) -> Result<()> {
        self.journal.fold(&self.conn)
    }
}

impl Drop for SharedDb {
    /// The last client of the file closed: what the journal holds goes into the file.
    fn drop(&mut self) {
        self.journal.close(&self.conn);
    }
}

/// The files open in this process, by canonical path (weakly held: a file closes with the last
/// client using it).
static OPEN_FILES: WeakRegistry<PathBuf, SharedDb> = WeakRegistry::new();

/// Why reading or writing the store failed, as far as the message's kind goes: a file that is
/// not a store this version can read (damaged pages, a record it cannot parse) is the caller's
/// configuration to fix; anything else (a full disk, an I/O error) is internal.
pub(super) trait StoreCause: std::fmt::Display {
    fn unreadable(&self) -> bool;
}

impl StoreCause for rusqlite::Error {
    fn unreadable(&self) -> bool {
        matches!(
            self.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
        )
    }
}

impl StoreCause for serde_json::Error {
    fn unreadable(&self) -> bool {
        true
    }
}

impl StoreCause for &str {
    fn unreadable(&self) -> bool {
        true
    }
}

impl StoreCause for String {
    fn unreadable(&self) -> bool {
        true
    }
}

/// The event journal's reads and writes: a full disk or an I/O error, not a file to fix.
impl StoreCause for std::io::Error {
    fn unreadable(&self) -> bool {
        false
    }
}

/// The one message for "this file is not a store I can read", wherever it is found out.
fn unreadable_store(shown: &str, detail: impl std::fmt::Display) -> Error {
    Error::configuration(format!(
        "storePath {shown} is not a depositkit store this version can read: {detail}"
    ))
}

pub(super) fn store_error(path: &Path, what: &str, cause: impl StoreCause) -> Error {
    let shown = quote_path(path);
    if cause.unreadable() {
        return unreadable_store(&shown, format_args!("{what}: {cause}"));
    }
    Error::new(ErrorKind::Internal, format!("deposit store {shown}: {what}: {cause}"))
}

/// The open file at `path`, shared within the process.
pub(super) fn shared_db(path: &Path) -> Result<Arc<SharedDb>> {
    // The same file under two spellings is still one file: key by the canonical path when it
    // exists.
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    OPEN_FILES.get_or_try_insert(key, || open_db(path))
}

/// How long a process waits for another one to finish opening the same store, and for
/// SQLite's lock of a store another process holds (one that is closing, say).
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// Serialises the opening of `path` across processes, through an OS lock on a file beside it
/// (`<store>-lock`).
///
/// Why: with `locking_mode=EXCLUSIVE` the first read of a connection takes SQLite's shared lock
/// and keeps it. Two processes opening one store at the same moment could each take that shared
/// lock, then each wait for the other to let it go to write — and both be refused after the
/// wait, leaving no owner. Opening one at a time, the first takes SQLite's exclusive lock
/// before the second reads anything; the second then waits for it like any later process and
/// is refused alone. The gate is released as soon as the store is open (a long-held OS lock
/// would be inherited by a forked child and outlive the process that took it), and it lives
/// in its own file because closing any descriptor of the store itself would drop SQLite's own
/// POSIX locks.
fn open_gate(path: &Path, shown: &str) -> Result<std::fs::File> {
    let mut gate_path = path.as_os_str().to_owned();
    gate_path.push("-lock");
    let gate = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&gate_path)
        .map_err(|e| {
            Error::configuration(format!("storePath {shown} cannot be opened or created: {e}"))
        })?;
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        match gate.try_lock() {
            Ok(()) => return Ok(gate),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::configuration(format!(
                    "storePath {shown} is in use by another process (one client process per \
                     store)"
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(Error::configuration(format!(
                    "storePath {shown} cannot be locked: {e}"
                )));
            }
        }
    }
}

/// Opens (or creates) the store at `path` and checks its schema.
fn open_db(path: &Path) -> Result<SharedDb> {
    let shown = quote_path(path);
    // Held until this connection has its lock; dropped (and released) at the end of `open_db`.
    let _gate = open_gate(path, &shown)?;
    let conn = Connection::open(path).map_err(|e| {
        Error::configuration(format!("storePath {shown} cannot be opened or created: {e}"))
    })?;
    let setup = || -> rusqlite::Result<()> {
        conn.busy_timeout(LOCK_WAIT)?;
        // Held for the connection's life: no other process works on this state meanwhile.
        conn.pragma_update(None, "locking_mode", "EXCLUSIVE")?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // Room for every statement of the write path (`rows.rs`, `group.rs`) and the reads.
        conn.set_prepared_statement_cache_capacity(64);
        conn.execute_batch(SCHEMA)?;
        Ok(())
    };
    setup().map_err(|e| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
            Error::configuration(format!(
                "storePath {shown} is in use by another process (one client process per store)"
            ))
        }
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt) => {
            unreadable_store(&shown, e)
        }
        _ => Error::configuration(format!("storePath {shown} cannot be used: {e}")),
    })?;
    let version: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |row| row.get(0))
        .optional()
        .map_err(|e| store_error(path, "reading the schema version", e))?;
    match version.as_deref().map(str::parse::<i64>) {
        None => {
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
                [SCHEMA_VERSION.to_string()],
            )
            .map_err(|e| store_error(path, "writing the schema version", e))?;
        }
        Some(Ok(SCHEMA_VERSION)) => {}
        Some(Ok(UPGRADES_FROM)) => {
            conn.execute(
                "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
                [SCHEMA_VERSION.to_string()],
            )
            .map_err(|e| store_error(path, "upgrading the schema version", e))?;
        }
        Some(Ok(newer)) => {
            return Err(Error::configuration(format!(
                "storePath {shown} has schema version {newer}; this depositkit reads version \
                 {SCHEMA_VERSION}"
            )));
        }
        Some(Err(_)) => {
            let stored = version.as_deref().unwrap_or_default();
            return Err(unreadable_store(
                &shown,
                format_args!("its schema version {} is not a number", quote(stored)),
            ));
        }
    }
    // What a process that died left in the journal goes into the file before anyone reads it.
    let journal = EventJournal::recover(path, &conn)?;
    Ok(SharedDb {
        path: path.to_path_buf(),
        conn: Mutex::new(conn),
        owners: Mutex::new(HashSet::new()),
        group: GroupCommit::default(),
        journal,
    })
}
