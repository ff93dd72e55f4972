//! Durable deposit state: what a client must not forget when its process dies.
//!
//! With `store_path` set, a client keeps in one SQLite file (WAL, `synchronous=NORMAL`: every
//! commit survives the process being killed; only a power loss may lose the last ones):
//! - its **deposit records** — the table the client works from, each record with its state,
//!   attempts, the signed quote of a send that may have happened, and its refund progress;
//!   records that left the table stay as `credited` or `refunded`;
//! - the **watcher's snapshot** — the last `received` of every balance line;
//! - every **attempt** that reached a send (its quote id, purpose and outcome);
//! - the final **sweep and refund results**;
//! - the **event log** — every event the client emitted, with its id, in order;
//! - the **notification records**.
//!
//! The rule that makes restarts exactly-once: a state change and the events that report it are
//! one transaction, committed before the events reach the host; and a quote is recorded
//! *before* it is sent. A client started again on the store finds every deposit where it was,
//! resolves every quote that may have been sent with that same quote (never a new one), and
//! continues the event ids where they stopped.
//!
//! Without a path the same code keeps the event log in memory (the last
//! `event_queue_capacity` events) and writes nothing else: the records live in the client.
//!
//! One file may hold the state of several owners (rows are keyed by owner). Within a process
//! the clients on one file share one connection; an owner is held by one live client at a time.
//! Across processes the file is locked (`locking_mode=EXCLUSIVE`): a second process gets a
//! `Configuration` error naming the file instead of two clients sweeping one account. Opening is
//! serialised across processes by an OS lock beside the file (`open_gate`), so that processes
//! starting at the same moment leave exactly one owner. A file this version cannot read is a
//! `Configuration` error naming the path, wherever that is found out (`StoreCause`).

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::events::{DepositEvent, RecordedEvent};
use super::model::{RefundResult, SweepResult};
use super::notifications::NotificationRecord;
use super::records::DepositRecord;
use super::watcher::DetectorSnapshot;
use crate::describe::{quote, quote_path};
use crate::error::{Error, ErrorKind, Result};
use crate::registry::WeakRegistry;
use crate::services::QuotePurpose;

mod codec;

pub(crate) use codec::{record_from_json, record_json};

/// The schema this code writes (`meta.schema_version`).
const SCHEMA_VERSION: i64 = 1;

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
CREATE INDEX IF NOT EXISTS events_by_deposit ON events (owner, deposit_id, id);
";

/// Final results restored per kind (as many as the client remembers).
const RESTORED_RESULTS: usize = 1000;

/// One write of a deposit record: its current state, or that it left the table.
#[derive(Debug)]
pub(crate) struct RecordWrite {
    pub id: String,
    pub seq: u64,
    /// `DepositState::as_str()`, or `credited` / `refunded` once it left the table.
    pub state: &'static str,
    pub open: bool,
    pub record: String,
}

/// What an attempt's send came to (`attempts.outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttemptOutcome {
    Success,
    Failed,
    Unknown,
}

impl AttemptOutcome {
    fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Success => "success",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::Unknown => "unknown",
        }
    }
}

/// A row of `attempts`: recorded (outcome `None`) before the send, updated after.
#[derive(Debug)]
pub(crate) struct AttemptWrite {
    pub quote_id: String,
    pub deposit_id: String,
    pub purpose: QuotePurpose,
    pub outcome: Option<AttemptOutcome>,
    pub transaction_id: Option<String>,
}

/// One transaction's worth of changes. Empty parts write nothing.
#[derive(Debug, Default)]
pub(crate) struct Change {
    pub records: Vec<RecordWrite>,
    pub detector: Option<DetectorSnapshot>,
    pub attempts: Vec<AttemptWrite>,
    pub sweep_results: Vec<SweepResult>,
    pub refund_results: Vec<RefundResult>,
    pub events: Vec<DepositEvent>,
}

impl Change {
    /// Only events.
    pub fn events(events: Vec<DepositEvent>) -> Change {
        Change { events, ..Change::default() }
    }

    fn writes_state(&self) -> bool {
        !self.records.is_empty()
            || self.detector.is_some()
            || !self.attempts.is_empty()
            || !self.sweep_results.is_empty()
            || !self.refund_results.is_empty()
    }
}

/// What a client finds in the store when it starts again.
#[derive(Debug, Default)]
pub(crate) struct Restored {
    pub account_id: Option<String>,
    pub detector: Option<DetectorSnapshot>,
    /// The open records, oldest first.
    pub deposits: Vec<DepositRecord>,
    /// Ids of every deposit the store knows (open or closed): never reported again.
    pub known_ids: Vec<String>,
    pub sweep_results: Vec<SweepResult>,
    pub refund_results: Vec<RefundResult>,
    pub notifications: Vec<NotificationRecord>,
    pub next_seq: u64,
}

/// The SQLite file shared by the clients of one process.
struct SharedDb {
    path: PathBuf,
    conn: Mutex<Connection>,
    /// Owners held by a live client.
    owners: Mutex<HashSet<String>>,
}

/// The files open in this process, by canonical path (weakly held: a file closes with the last
/// client using it).
static OPEN_FILES: WeakRegistry<PathBuf, SharedDb> = WeakRegistry::new();

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

enum Backend {
    /// The event log only, the last `capacity` events.
    Memory {
        events: VecDeque<RecordedEvent>,
        capacity: usize,
    },
    Sqlite(Arc<SharedDb>),
    /// The client closed and let the owner go: another client may be writing its rows now, so
    /// this one writes nothing more (what it did not save, the next client resolves from the
    /// records, e.g. an attempt's recorded quote). It still reads the log.
    Released(Arc<SharedDb>),
}

/// One client's view of its store.
pub(crate) struct DepositStore {
    owner: String,
    backend: Mutex<Backend>,
    /// The id the next event gets (ids start at 1 and never repeat for an owner).
    next_event_id: Mutex<u64>,
}

impl std::fmt::Debug for DepositStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DepositStore")
            .field("owner", &self.owner)
            .field("path", &self.path())
            .finish_non_exhaustive()
    }
}

/// Why reading or writing the store failed, as far as the message's kind goes: a file that is
/// not a store this version can read (damaged pages, a record it cannot parse) is the caller's
/// configuration to fix; anything else (a full disk, an I/O error) is internal.
trait StoreCause: std::fmt::Display {
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

/// The one message for "this file is not a store I can read", wherever it is found out.
fn unreadable_store(shown: &str, detail: impl std::fmt::Display) -> Error {
    Error::configuration(format!(
        "storePath {shown} is not a depositkit store this version can read: {detail}"
    ))
}

fn store_error(path: &Path, what: &str, cause: impl StoreCause) -> Error {
    let shown = quote_path(path);
    if cause.unreadable() {
        return unreadable_store(&shown, format_args!("{what}: {cause}"));
    }
    Error::new(ErrorKind::Internal, format!("deposit store {shown}: {what}: {cause}"))
}

impl DepositStore {
    /// The store of `owner` (lower-case): in the SQLite file at `path` (created if missing),
    /// or in memory keeping the last `memory_capacity` events.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when the file cannot be opened or created, is not a
    /// depositkit store, is locked by another process, or `owner` is held by another live
    /// client of this process.
    pub fn open(path: Option<&Path>, owner: &str, memory_capacity: usize) -> Result<DepositStore> {
        let Some(path) = path else {
            return Ok(DepositStore {
                owner: owner.to_owned(),
                backend: Mutex::new(Backend::Memory {
                    events: VecDeque::new(),
                    capacity: memory_capacity.max(1),
                }),
                next_event_id: Mutex::new(1),
            });
        };
        let db = shared_db(path)?;
        if !lock(&db.owners).insert(owner.to_owned()) {
            return Err(Error::configuration(format!(
                "storePath {} is in use by another live client of owner {} in this process; \
                 close it first",
                quote_path(path),
                owner
            )));
        }
        let last: Option<i64> = lock(&db.conn)
            .query_row("SELECT max(id) FROM events WHERE owner = ?1", [owner], |row| row.get(0))
            .map_err(|e| store_error(path, "reading the event log", e))?;
        Ok(DepositStore {
            owner: owner.to_owned(),
            backend: Mutex::new(Backend::Sqlite(db)),
            next_event_id: Mutex::new(u64::try_from(last.unwrap_or(0)).unwrap_or(0) + 1),
        })
    }

    /// The file, when the store is durable.
    pub fn path(&self) -> Option<PathBuf> {
        match &*lock(&self.backend) {
            Backend::Memory { .. } => None,
            Backend::Sqlite(db) => Some(db.path.clone()),
            Backend::Released(db) => Some(db.path.clone()),
        }
    }

    /// The id of the last event emitted (0: none yet).
    pub fn last_event_id(&self) -> u64 {
        *lock(&self.next_event_id) - 1
    }

    /// Writes `change` in one transaction and gives its events their ids. The events are
    /// returned even when the write fails (with the error): they still reach the host, and
    /// the failure is the caller's to report.
    pub fn commit(&self, change: Change, now: u64) -> (Vec<RecordedEvent>, Option<Error>) {
        let mut next = lock(&self.next_event_id);
        let recorded: Vec<RecordedEvent> = change
            .events
            .iter()
            .enumerate()
            .map(|(i, event)| RecordedEvent { id: *next + i as u64, at: now, event: event.clone() })
            .collect();
        *next += recorded.len() as u64;
        let mut backend = lock(&self.backend);
        let error = match &mut *backend {
            Backend::Memory { events, capacity } => {
                for event in &recorded {
                    if events.len() >= *capacity {
                        events.pop_front();
                    }
                    events.push_back(event.clone());
                }
                None
            }
            Backend::Sqlite(db) => {
                if change.writes_state() || !recorded.is_empty() {
                    write(db, &self.owner, &change, &recorded, now).err()
                } else {
                    None
                }
            }
            Backend::Released(_) => None,
        };
        (recorded, error)
    }

    /// Events with an id above `cursor`, oldest first, at most `limit`.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when events after `cursor` are no longer kept (in memory only
    /// the last `event_queue_capacity` are); [`ErrorKind::InvalidArgument`] for a cursor past
    /// the last event; [`ErrorKind::Internal`] when the file cannot be read.
    pub fn events_since(&self, cursor: u64, limit: usize) -> Result<Vec<RecordedEvent>> {
        let last = self.last_event_id();
        if cursor > last {
            return Err(Error::invalid_argument(format!(
                "cursor {cursor} is past the last event id {last}"
            )));
        }
        match &*lock(&self.backend) {
            Backend::Memory { events, capacity } => {
                let oldest = events.front().map_or(last + 1, |e| e.id);
                if cursor + 1 < oldest {
                    return Err(Error::new(
                        ErrorKind::NotFound,
                        format!(
                            "events after {cursor} are no longer kept: the oldest kept is {oldest} \
                             (without storePath only the last {capacity} events are kept)"
                        ),
                    ));
                }
                Ok(events.iter().filter(|e| e.id > cursor).take(limit).cloned().collect())
            }
            Backend::Sqlite(db) | Backend::Released(db) => {
                let conn = lock(&db.conn);
                let limit = i64::try_from(limit).unwrap_or(i64::MAX);
                read_events(
                    &conn,
                    &db.path,
                    "SELECT id, at, event FROM events WHERE owner = ?1 AND id > ?2 ORDER BY id \
                     LIMIT ?3",
                    params![self.owner, cursor as i64, limit],
                )
            }
        }
    }

    /// Every stored event of deposit `id` (lifecycle events and refund updates), oldest first;
    /// empty without a file.
    ///
    /// # Errors
    /// [`ErrorKind::Internal`] when the file cannot be read.
    pub fn deposit_history(&self, id: &str) -> Result<Vec<RecordedEvent>> {
        match &*lock(&self.backend) {
            Backend::Memory { events, .. } => Ok(events
                .iter()
                .filter(|e| event_deposit_id(&e.event).is_some_and(|d| d == id))
                .cloned()
                .collect()),
            Backend::Sqlite(db) | Backend::Released(db) => {
                let conn = lock(&db.conn);
                read_events(
                    &conn,
                    &db.path,
                    "SELECT id, at, event FROM events WHERE owner = ?1 AND deposit_id = ?2 \
                     ORDER BY id",
                    params![self.owner, id],
                )
            }
        }
    }

    /// Saves the notification records (a no-op without a file).
    ///
    /// # Errors
    /// [`ErrorKind::Internal`] when the file cannot be written.
    pub fn save_notifications(&self, records: &[NotificationRecord], now: u64) -> Result<()> {
        let Backend::Sqlite(db) = &*lock(&self.backend) else { return Ok(()) };
        let json = serde_json::to_string(records).unwrap_or_else(|_| "[]".to_owned());
        lock(&db.conn)
            .execute(
                "INSERT INTO clients (owner, notifications, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (owner) DO UPDATE SET notifications = ?2, updated_at = ?3",
                params![self.owner, json, now as i64],
            )
            .map(drop)
            .map_err(|e| store_error(&db.path, "saving the notifications", e))
    }

    /// Records that `owner` uses account `account_id`; refuses a store that holds another
    /// account for the owner (a store from another service).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] on a mismatch; [`ErrorKind::Internal`] on I/O failures.
    pub fn bind_account(&self, account_id: &str, now: u64) -> Result<()> {
        let Backend::Sqlite(db) = &*lock(&self.backend) else { return Ok(()) };
        let conn = lock(&db.conn);
        let stored: Option<Option<String>> = conn
            .query_row("SELECT account_id FROM clients WHERE owner = ?1", [&self.owner], |row| {
                row.get(0)
            })
            .optional()
            .map_err(|e| store_error(&db.path, "reading the account", e))?;
        match stored.flatten() {
            Some(stored) if stored != account_id => Err(Error::configuration(format!(
                "storePath {} holds account {} of owner {}, but the service gave account {}: \
                 it is the store of another service; use another storePath",
                quote_path(&db.path),
                quote(&stored),
                self.owner,
                quote(account_id)
            ))),
            Some(_) => Ok(()),
            None => conn
                .execute(
                    "INSERT INTO clients (owner, account_id, updated_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT (owner) DO UPDATE SET account_id = ?2, updated_at = ?3",
                    params![self.owner, account_id, now as i64],
                )
                .map(drop)
                .map_err(|e| store_error(&db.path, "saving the account", e)),
        }
    }

    /// Everything stored for the owner (empty without a file).
    ///
    /// # Errors
    /// [`ErrorKind::Internal`] when the file cannot be read or holds a record this version
    /// cannot read.
    pub fn load(&self) -> Result<Restored> {
        let Backend::Sqlite(db) = &*lock(&self.backend) else { return Ok(Restored::default()) };
        let conn = lock(&db.conn);
        let path = &db.path;
        let fail = |what: &str| {
            let what = what.to_owned();
            move |e: rusqlite::Error| store_error(path, &what, e)
        };
        let mut restored = Restored::default();
        let client: Option<(Option<String>, Option<String>, Option<String>)> = conn
            .query_row(
                "SELECT account_id, detector, notifications FROM clients WHERE owner = ?1",
                [&self.owner],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .optional()
            .map_err(fail("reading the client"))?;
        if let Some((account_id, detector, notifications)) = client {
            restored.account_id = account_id;
            if let Some(json) = detector {
                restored.detector = Some(
                    serde_json::from_str(&json)
                        .map_err(|e| store_error(path, "reading the watcher snapshot", e))?,
                );
            }
            if let Some(json) = notifications {
                restored.notifications = serde_json::from_str(&json)
                    .map_err(|e| store_error(path, "reading the notifications", e))?;
            }
        }
        let mut statement = conn
            .prepare("SELECT id, open, record, seq FROM deposits WHERE owner = ?1 ORDER BY seq")
            .map_err(fail("reading the deposits"))?;
        let rows = statement
            .query_map([&self.owner], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, bool>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, i64>(3)?,
                ))
            })
            .map_err(fail("reading the deposits"))?;
        for row in rows {
            let (id, open, record, seq) = row.map_err(fail("reading the deposits"))?;
            restored.next_seq = restored.next_seq.max(u64::try_from(seq).unwrap_or(0) + 1);
            if open {
                restored.deposits.push(record_from_json(&record).map_err(|e| {
                    store_error(path, &format!("reading deposit {}", quote(&id)), e)
                })?);
            }
            restored.known_ids.push(id);
        }
        let mut statement = conn
            .prepare(
                "SELECT kind, result FROM results WHERE owner = ?1 ORDER BY updated_at DESC \
                 LIMIT ?2",
            )
            .map_err(fail("reading the results"))?;
        let rows = statement
            .query_map(params![self.owner, (2 * RESTORED_RESULTS) as i64], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(fail("reading the results"))?;
        for row in rows {
            let (kind, json) = row.map_err(fail("reading the results"))?;
            let bad = |e: serde_json::Error| store_error(path, "reading a result", e);
            match kind.as_str() {
                "sweep" => restored.sweep_results.push(serde_json::from_str(&json).map_err(bad)?),
                _ => restored.refund_results.push(serde_json::from_str(&json).map_err(bad)?),
            }
        }
        // Oldest first, as they were remembered.
        restored.sweep_results.reverse();
        restored.refund_results.reverse();
        Ok(restored)
    }

    /// Lets another client take the owner (on close). Waits for a write under way; nothing is
    /// written after it.
    pub fn release(&self) {
        let mut backend = lock(&self.backend);
        if let Backend::Sqlite(db) = &*backend {
            lock(&db.owners).remove(&self.owner);
            let db = Arc::clone(db);
            *backend = Backend::Released(db);
        }
    }
}

impl Drop for DepositStore {
    fn drop(&mut self) {
        self.release();
    }
}

/// The open file at `path`, shared within the process.
fn shared_db(path: &Path) -> Result<Arc<SharedDb>> {
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
    Ok(SharedDb {
        path: path.to_path_buf(),
        conn: Mutex::new(conn),
        owners: Mutex::new(HashSet::new()),
    })
}

fn write(
    db: &SharedDb,
    owner: &str,
    change: &Change,
    events: &[RecordedEvent],
    now: u64,
) -> Result<()> {
    let mut conn = lock(&db.conn);
    let fail = |e: rusqlite::Error| store_error(&db.path, "writing", e);
    let tx = conn.transaction().map_err(fail)?;
    let now = now as i64;
    for record in &change.records {
        tx.execute(
            "INSERT INTO deposits (owner, id, seq, state, open, record, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (owner, id) DO UPDATE SET state = ?4, open = ?5, record = ?6,
                 updated_at = ?7",
            params![
                owner,
                record.id,
                record.seq as i64,
                record.state,
                record.open,
                record.record,
                now
            ],
        )
        .map_err(fail)?;
    }
    if let Some(snapshot) = &change.detector {
        let json = serde_json::to_string(snapshot).unwrap_or_default();
        tx.execute(
            "INSERT INTO clients (owner, detector, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (owner) DO UPDATE SET detector = ?2, updated_at = ?3",
            params![owner, json, now],
        )
        .map_err(fail)?;
    }
    for attempt in &change.attempts {
        tx.execute(
            "INSERT INTO attempts (owner, quote_id, deposit_id, purpose, sent_at, outcome,
                 transaction_id, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?5)
             ON CONFLICT (owner, quote_id) DO UPDATE SET
                 outcome = coalesce(?6, outcome),
                 transaction_id = coalesce(?7, transaction_id), updated_at = ?5",
            params![
                owner,
                attempt.quote_id,
                attempt.deposit_id,
                attempt.purpose.as_str(),
                now,
                attempt.outcome.map(AttemptOutcome::as_str),
                attempt.transaction_id
            ],
        )
        .map_err(fail)?;
    }
    let results = change
        .sweep_results
        .iter()
        .map(|r| ("sweep", &r.deposit_id, serde_json::to_string(r)))
        .chain(
            change
                .refund_results
                .iter()
                .map(|r| ("refund", &r.deposit_id, serde_json::to_string(r))),
        );
    for (kind, deposit_id, json) in results {
        tx.execute(
            "INSERT INTO results (owner, deposit_id, kind, result, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (owner, deposit_id, kind) DO UPDATE SET result = ?4, updated_at = ?5",
            params![owner, deposit_id, kind, json.unwrap_or_default(), now],
        )
        .map_err(fail)?;
    }
    for event in events {
        tx.execute(
            "INSERT INTO events (owner, id, at, type, deposit_id, event)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                owner,
                event.id as i64,
                event.at as i64,
                event.event.type_name(),
                event_deposit_id(&event.event),
                event.event.to_json().to_string()
            ],
        )
        .map_err(fail)?;
    }
    tx.commit().map_err(fail)
}

fn read_events(
    conn: &Connection,
    path: &Path,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<RecordedEvent>> {
    let fail = |e: rusqlite::Error| store_error(path, "reading the event log", e);
    let mut statement = conn.prepare_cached(sql).map_err(fail)?;
    let rows = statement
        .query_map(params, |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?, row.get::<_, String>(2)?))
        })
        .map_err(fail)?;
    let mut events = Vec::new();
    for row in rows {
        let (id, at, json) = row.map_err(fail)?;
        let value: Value = serde_json::from_str(&json)
            .map_err(|e| store_error(path, &format!("reading event {id}"), e))?;
        let event = DepositEvent::from_json(&value).ok_or_else(|| {
            store_error(path, &format!("reading event {id}"), "an event this version cannot read")
        })?;
        events.push(RecordedEvent {
            id: u64::try_from(id).unwrap_or(0),
            at: u64::try_from(at).unwrap_or(0),
            event,
        });
    }
    Ok(events)
}

/// The deposit an event is about, for its phase history.
fn event_deposit_id(event: &DepositEvent) -> Option<&str> {
    match event {
        DepositEvent::Lifecycle(e) => Some(&e.id),
        DepositEvent::Refund(r) => Some(&r.deposit_id),
        _ => None,
    }
}
