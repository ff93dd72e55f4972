//! Durable deposit state: what a client must not forget when its process dies.
//!
//! With `store_path` set, a client keeps in one SQLite file (WAL, `synchronous=NORMAL`: every
//! commit survives the process being killed; only a power loss may lose the last ones; a change
//! of events alone is appended to the file's event journal `<store>-events` with one `write`,
//! which survives the same, and folded into the file in batches):
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
//! Here: the client's view of its store ([`DepositStore`]): the records' and events' encoding,
//! event ids, and what it writes and restores. Below it, the store contract (`contract.rs`,
//! [`OwnerStore`]: rows in, rows out) and its embedded implementation, `sqlite.rs` (`file.rs`
//! opens the file: schema, locks, the unreadable-store rule; `rows.rs` reads and writes its
//! rows; `group.rs` commits the changes that meet on one file in one transaction, each change
//! still all or nothing and each caller answered only once its change is committed;
//! `journal.rs` appends the changes of events alone and folds them into the file);
//! `codec.rs` is the records' JSON.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use super::events::{DepositEvent, RecordedEvent};
use super::model::{RefundResult, SweepResult};
use super::notifications::NotificationRecord;
use super::records::DepositRecord;
use super::watcher::DetectorSnapshot;
use crate::error::{Error, ErrorKind, Result};
use crate::services::QuotePurpose;
use contract::OwnerStore;
use encode::{change_rows, decode_events, event_deposit_id, restore};
use sqlite::SqliteOwnerStore;

mod codec;
pub mod contract;
mod encode;
mod file;
mod group;
mod journal;
mod rows;
mod sqlite;

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
    Durable(Box<dyn OwnerStore>),
    /// The client closed and let the owner go (or lost it to a newer holder): another client
    /// may be writing its rows now, so this one writes nothing more (what it did not save, the
    /// next client resolves from the records, e.g. an attempt's recorded quote). It still reads
    /// the log.
    Released(Box<dyn OwnerStore>),
    /// A newer holder took the owner ([`OwnerStore::owner_lost`]): every later change is
    /// refused with an error — so nothing that must be recorded first (a quote before its
    /// send) goes ahead — and its events are dropped. It still reads the log.
    Lost(Box<dyn OwnerStore>),
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
        DepositStore::durable(Box::new(SqliteOwnerStore::open(path, owner)?))
    }

    /// The client's view of `store` (any store of the contract); event ids continue after the
    /// last stored one.
    ///
    /// # Errors
    /// The store's, when its event log cannot be read.
    pub fn durable(store: Box<dyn OwnerStore>) -> Result<DepositStore> {
        let last = match store.last_event_id() {
            Ok(last) => last,
            Err(error) => {
                store.release();
                return Err(error);
            }
        };
        Ok(DepositStore {
            owner: store.owner().to_owned(),
            backend: Mutex::new(Backend::Durable(store)),
            next_event_id: Mutex::new(last + 1),
        })
    }

    /// The file, when the store is a SQLite file.
    pub fn path(&self) -> Option<PathBuf> {
        match &*lock(&self.backend) {
            Backend::Memory { .. } => None,
            Backend::Durable(store) | Backend::Released(store) | Backend::Lost(store) => {
                store.path()
            }
        }
    }

    /// The id of the last event emitted (0: none yet).
    pub fn last_event_id(&self) -> u64 {
        *lock(&self.next_event_id) - 1
    }

    /// Writes `change` in one transaction and gives its events their ids. The events are
    /// returned even when the write fails (with the error): they still reach the host, and
    /// the failure is the caller's to report — unless the owner was taken by a newer holder
    /// ([`OwnerStore::owner_lost`]): then they are dropped (the new holder reports what happens
    /// from now on) and nothing more is written.
    pub fn commit(&self, change: Change, now: u64) -> (Vec<RecordedEvent>, Option<Error>) {
        let mut next = lock(&self.next_event_id);
        let mut backend = lock(&self.backend);
        if let Backend::Lost(store) = &*backend {
            return (Vec::new(), Some(owner_lost(&**store)));
        }
        let recorded: Vec<RecordedEvent> = change
            .events
            .iter()
            .enumerate()
            .map(|(i, event)| RecordedEvent { id: *next + i as u64, at: now, event: event.clone() })
            .collect();
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
            Backend::Durable(store) => {
                if change.writes_state() || !recorded.is_empty() {
                    store.write(&change_rows(&change, &recorded, now)).err()
                } else {
                    None
                }
            }
            Backend::Released(_) | Backend::Lost(_) => None,
        };
        if error.is_some() && matches!(&*backend, Backend::Durable(store) if store.owner_lost()) {
            let taken = std::mem::replace(
                &mut *backend,
                Backend::Memory { events: VecDeque::new(), capacity: 1 },
            );
            if let Backend::Durable(store) = taken {
                store.release();
                *backend = Backend::Lost(store);
            }
            return (Vec::new(), error);
        }
        *next += recorded.len() as u64;
        (recorded, error)
    }

    /// Events with an id above `cursor`, oldest first, at most `limit`.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when events after `cursor` are no longer kept (in memory only
    /// the last `event_queue_capacity` are); [`ErrorKind::InvalidArgument`] for a cursor past
    /// the last event; the store's error when it cannot be read.
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
            Backend::Durable(store) | Backend::Released(store) | Backend::Lost(store) => {
                decode_events(&**store, store.events_after(cursor, limit)?)
            }
        }
    }

    /// Every stored event of deposit `id` (lifecycle events and refund updates), oldest first;
    /// in memory, those still kept.
    ///
    /// # Errors
    /// The store's error when it cannot be read.
    pub fn deposit_history(&self, id: &str) -> Result<Vec<RecordedEvent>> {
        match &*lock(&self.backend) {
            Backend::Memory { events, .. } => Ok(events
                .iter()
                .filter(|e| event_deposit_id(&e.event).is_some_and(|d| d == id))
                .cloned()
                .collect()),
            Backend::Durable(store) | Backend::Released(store) | Backend::Lost(store) => {
                decode_events(&**store, store.deposit_events(id)?)
            }
        }
    }

    /// Saves the notification records (a no-op without a durable store).
    ///
    /// # Errors
    /// The store's error when it cannot be written.
    pub fn save_notifications(&self, records: &[NotificationRecord], now: u64) -> Result<()> {
        let Backend::Durable(store) = &*lock(&self.backend) else { return Ok(()) };
        let json = serde_json::to_string(records).unwrap_or_else(|_| "[]".to_owned());
        store.save_notifications(&json, now)
    }

    /// Records that `owner` uses account `account_id`; refuses a store that holds another
    /// account for the owner (a store from another service).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] on a mismatch; the store's error on I/O failures.
    pub fn bind_account(&self, account_id: &str, now: u64) -> Result<()> {
        let Backend::Durable(store) = &*lock(&self.backend) else { return Ok(()) };
        store.bind_account(account_id, now)
    }

    /// Everything stored for the owner (empty without a durable store).
    ///
    /// # Errors
    /// The store's error when it cannot be read, or its unreadable-store error for a record this
    /// version cannot read.
    pub fn load(&self) -> Result<Restored> {
        let Backend::Durable(store) = &*lock(&self.backend) else {
            return Ok(Restored::default());
        };
        restore(&**store, store.load(contract::START_RESULTS)?)
    }

    /// Whether the store keeps starts for the owner's next client
    /// ([`OwnerStore::keeps_starts`]): when it does not, a client skips handing its start over.
    pub fn keeps_starts(&self) -> bool {
        matches!(&*lock(&self.backend), Backend::Durable(store) if store.keeps_starts())
    }

    /// What the owner's previous client learnt when it started (nothing unless the store keeps
    /// it: [`OwnerStore::load_start`]).
    ///
    /// # Errors
    /// The store's error when it cannot be read.
    pub fn load_start(&self) -> Result<Option<contract::StartRow>> {
        let Backend::Durable(store) = &*lock(&self.backend) else { return Ok(None) };
        store.load_start()
    }

    /// Keeps what this client learnt when it started for the owner's next client (a no-op
    /// unless the store keeps it: [`OwnerStore::save_start`]).
    ///
    /// # Errors
    /// The store's error when it cannot be written.
    pub fn save_start(&self, start: &contract::StartRow, now: u64) -> Result<()> {
        let Backend::Durable(store) = &*lock(&self.backend) else { return Ok(()) };
        store.save_start(start, now)
    }

    /// Lets another client take the owner (on close). Waits for a write under way; nothing is
    /// written after it.
    pub fn release(&self) {
        release_backend(&mut lock(&self.backend));
    }
}

impl Drop for DepositStore {
    fn drop(&mut self) {
        self.release();
    }
}

/// The error of every change after the owner was lost.
fn owner_lost(store: &dyn OwnerStore) -> Error {
    Error::configuration(format!(
        "owner {} was taken by a newer holder: this client writes and sends nothing more",
        store.owner()
    ))
}

fn release_backend(backend: &mut Backend) {
    let taken =
        std::mem::replace(backend, Backend::Memory { events: VecDeque::new(), capacity: 1 });
    *backend = match taken {
        Backend::Durable(store) => {
            store.release();
            Backend::Released(store)
        }
        other => other,
    };
}
