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
//!
//! Here: the client's view of its store ([`DepositStore`]) and what it writes and restores;
//! `file.rs` opens the file (schema, locks, the unreadable-store rule), `rows.rs` reads and
//! writes its rows, `codec.rs` is the records' JSON.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{OptionalExtension, params};

use super::events::{DepositEvent, RecordedEvent};
use super::model::{RefundResult, SweepResult};
use super::notifications::NotificationRecord;
use super::records::DepositRecord;
use super::watcher::DetectorSnapshot;
use crate::describe::{quote, quote_path};
use crate::error::{Error, ErrorKind, Result};
use crate::services::QuotePurpose;
use file::{SharedDb, shared_db, store_error};
use rows::{event_deposit_id, read_events, write};

mod codec;
mod file;
mod rows;

pub(crate) use codec::{record_from_json, record_json};

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
        rows::load(db, &self.owner)
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
