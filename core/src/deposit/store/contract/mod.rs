//! The store contract: what a durable store keeps for one owner, as rows.
//!
//! A client's durable state goes through [`OwnerStore`]. The embedded default is the SQLite file
//! at `storePath` (`sqlite.rs`); fleet mode (`depositkit-fleet`) keeps the same rows in
//! PostgreSQL, every write fenced by the owner's lease. A store only keeps and returns rows: the
//! records' JSON, event ids and the exactly-once rules stay in `DepositStore` (`mod.rs`), so every
//! store behaves the same. What a store must do (the contract suite,
//! `depositkit_core::deposit::store_contract::suite`, checks it against each one):
//! - [`write`](OwnerStore::write) applies a [`ChangeRows`] in one transaction, all or nothing;
//!   a deposit row is upserted by id, an attempt by quote id (a later outcome never erased by
//!   a missing one), a result by deposit and kind; events are appended, never replaced;
//! - reads return what committed writes left, per owner: another owner's rows never show;
//! - [`last_event_id`](OwnerStore::last_event_id) is the highest stored event id (0: none);
//! - [`bind_account`](OwnerStore::bind_account) refuses an owner's second, different account
//!   with a [`Configuration`](crate::error::ErrorKind::Configuration) error;
//! - after [`release`](OwnerStore::release) the owner may be taken by another client at once;
//! - a fenced store refuses every write once a newer holder took the owner, and says so
//!   ([`owner_lost`](OwnerStore::owner_lost));
//! - a store may keep what the owner's client learnt when it started ([`StartRow`]: the account
//!   and the session), for the owner's next client ([`save_start`](OwnerStore::save_start),
//!   [`load_start`](OwnerStore::load_start)); one that does not returns nothing. The fleet's
//!   store keeps it, so a takeover starts without asking the services again; the SQLite store
//!   does not (a JWT stays out of the file).

use std::path::PathBuf;

#[cfg(feature = "store-contract-suite")]
pub mod suite;

use crate::error::{Error, Result};

pub use super::sqlite::SqliteOwnerStore;

/// One deposit row: a record's current state, or that it left the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepositRow {
    /// The deposit id.
    pub id: String,
    /// The record's order of arrival (restored oldest first).
    pub seq: u64,
    /// `DepositState::as_str()`, or `credited` / `refunded` once it left the table.
    pub state: String,
    /// Whether the record is still in the client's table.
    pub open: bool,
    /// The record's JSON.
    pub record: String,
}

/// One attempt row: recorded (outcome `None`) before its send, updated after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRow {
    /// The quote sent.
    pub quote_id: String,
    /// The deposit it is for.
    pub deposit_id: String,
    /// `sweep` or `refund`.
    pub purpose: String,
    /// `success`, `failed` or `unknown`; `None` keeps the stored one.
    pub outcome: Option<String>,
    /// The transaction id, when known; `None` keeps the stored one.
    pub transaction_id: Option<String>,
}

/// One final result of a deposit: kind `sweep` or `refund`, its JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultRow {
    /// The deposit.
    pub deposit_id: String,
    /// `sweep` or `refund`.
    pub kind: String,
    /// The result's JSON.
    pub result: String,
}

/// One event of the owner's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    /// The event's id (1, 2, … per owner, never reused).
    pub id: u64,
    /// When it was emitted, unix milliseconds.
    pub at: u64,
    /// The event's type name (`deposit:detected`, …).
    pub kind: String,
    /// The deposit it is about, if any (its history).
    pub deposit_id: Option<String>,
    /// The event's JSON.
    pub event: String,
}

/// One transaction's worth of rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeRows {
    /// When, unix milliseconds (`updated_at`).
    pub now: u64,
    /// Deposit rows to upsert.
    pub deposits: Vec<DepositRow>,
    /// The watcher's snapshot (JSON), when it changed.
    pub detector: Option<String>,
    /// Attempt rows to upsert.
    pub attempts: Vec<AttemptRow>,
    /// Result rows to upsert.
    pub results: Vec<ResultRow>,
    /// Events to append.
    pub events: Vec<EventRow>,
}

/// A stored deposit row, as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDeposit {
    /// The deposit id.
    pub id: String,
    /// Whether it is still in the table.
    pub open: bool,
    /// The record's JSON.
    pub record: String,
    /// Its order of arrival.
    pub seq: u64,
}

/// The result rows a client asks [`OwnerStore::load`] for when it starts (the final results
/// it remembers: 1,000 of each kind, sweeps and refunds). A store may read them ahead, with the start
/// ([`OwnerStore::load_start`]), when it knows the client asks next.
pub const START_RESULTS: usize = 2000;

/// Everything stored for one owner.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnerRows {
    /// The account the owner is bound to.
    pub account_id: Option<String>,
    /// The watcher's snapshot (JSON).
    pub detector: Option<String>,
    /// The notification records (JSON).
    pub notifications: Option<String>,
    /// Every deposit row, ordered by `seq`.
    pub deposits: Vec<StoredDeposit>,
    /// Result rows (`kind`, JSON), newest first, at most the number asked for.
    pub results: Vec<(String, String)>,
}

/// What an owner's client learnt when it started, handed to the owner's next client (a fleet
/// takeover) so that it need not ask the services again.
#[derive(Clone, PartialEq, Eq)]
pub struct StartRow {
    /// The account's JSON (its id, deposit addresses and intermediary wallet), as the client
    /// encodes it. No secret.
    pub account: String,
    /// The session JWT, when the client had one. A secret: never printed by `Debug`.
    pub session_jwt: Option<String>,
    /// When the session expires, unix seconds (0 without one).
    pub session_expires_at: u64,
}

impl std::fmt::Debug for StartRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StartRow")
            .field("account", &self.account)
            .field("session_jwt", &self.session_jwt.as_ref().map(|_| "<redacted>"))
            .field("session_expires_at", &self.session_expires_at)
            .finish()
    }
}

/// A durable store of one owner's deposit state (the store contract, module docs).
///
/// Methods may block on I/O; they are called from the client's threads, one at a time per
/// owner.
pub trait OwnerStore: Send + Sync {
    /// The owner whose rows this is (lower-case).
    fn owner(&self) -> &str;

    /// The SQLite file, for stores that are one.
    fn path(&self) -> Option<PathBuf> {
        None
    }

    /// The error for stored data this version cannot read (`what` was being read).
    fn unreadable(&self, what: &str, detail: &str) -> Error;

    /// The highest stored event id, 0 when there is none.
    ///
    /// # Errors
    /// When the store cannot be read.
    fn last_event_id(&self) -> Result<u64>;

    /// Applies `change` in one transaction.
    ///
    /// # Errors
    /// When nothing was written (the store's error says why).
    fn write(&self, change: &ChangeRows) -> Result<()>;

    /// Events with an id above `cursor`, oldest first, at most `limit`.
    ///
    /// # Errors
    /// When the store cannot be read.
    fn events_after(&self, cursor: u64, limit: usize) -> Result<Vec<EventRow>>;

    /// Every event of deposit `deposit_id`, oldest first.
    ///
    /// # Errors
    /// When the store cannot be read.
    fn deposit_events(&self, deposit_id: &str) -> Result<Vec<EventRow>>;

    /// Replaces the notification records (JSON).
    ///
    /// # Errors
    /// When nothing was written.
    fn save_notifications(&self, json: &str, now: u64) -> Result<()>;

    /// Records the owner's account; refuses a store holding another account for the owner.
    ///
    /// # Errors
    /// [`Configuration`](crate::error::ErrorKind::Configuration) on a mismatch; others when the
    /// store cannot be used.
    fn bind_account(&self, account_id: &str, now: u64) -> Result<()>;

    /// Everything stored for the owner, with at most `results` result rows.
    ///
    /// # Errors
    /// When the store cannot be read.
    fn load(&self, results: usize) -> Result<OwnerRows>;

    /// Lets another client take the owner (on close). Nothing is written after it.
    fn release(&self);

    /// Whether the store keeps a start for the owner's next client ([`save_start`] and
    /// [`load_start`] do something): the default keeps nothing, and a client of a store that
    /// keeps nothing does not try.
    ///
    /// [`save_start`]: OwnerStore::save_start
    /// [`load_start`]: OwnerStore::load_start
    fn keeps_starts(&self) -> bool {
        false
    }

    /// What the owner's previous client learnt when it started, when the store keeps it (the
    /// default keeps nothing).
    ///
    /// # Errors
    /// When the store cannot be read.
    fn load_start(&self) -> Result<Option<StartRow>> {
        Ok(None)
    }

    /// Keeps `start` for the owner's next client, replacing what was kept — unless that is of
    /// the same account with a session that expires later (writes may land out of order). A
    /// no-op in stores that keep nothing (the default). Written like every other change (a fenced store refuses it
    /// once a newer holder took the owner).
    ///
    /// # Errors
    /// When nothing was written.
    fn save_start(&self, start: &StartRow, now: u64) -> Result<()> {
        let _ = (start, now);
        Ok(())
    }

    /// Whether a newer holder took the owner (a fenced store refused a write for it). The
    /// client then writes nothing more and drops the events of the refused write: the new
    /// holder reports what happens from now on.
    fn owner_lost(&self) -> bool {
        false
    }
}
