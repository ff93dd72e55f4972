//! The embedded store: one owner's rows in the SQLite file at `storePath` (`file.rs` opens it,
//! `rows.rs` reads and writes it), shared with the other owners of this process that use it.
//! A change of events alone goes to the file's event journal (`journal.rs`) when its ids follow
//! the owner's last one; every other write and every read folds the journal first.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::{OptionalExtension, params};

use super::contract::{ChangeRows, EventRow, OwnerRows, OwnerStore};
use super::file::{SharedDb, shared_db, store_error};
use super::{lock, rows};
use crate::describe::{quote, quote_path};
use crate::error::{Error, Result};

/// One owner's rows in a SQLite file, held by this live client until released.
pub struct SqliteOwnerStore {
    owner: String,
    db: Arc<SharedDb>,
    /// Once released, a later holder of the owner in this process is not this store's to free.
    released: AtomicBool,
    /// The owner's highest stored event id, once read (this store is the owner's only writer
    /// in the process): a change of events alone whose ids follow it is journaled.
    last_event: Mutex<Option<u64>>,
}

impl SqliteOwnerStore {
    /// The store of `owner` in the file at `path` (created if missing).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::error::ErrorKind::Configuration) when the file cannot
    /// be opened or created, is not a depositkit store, is locked by another process, or
    /// `owner` is held by another live client of this process.
    pub fn open(path: &Path, owner: &str) -> Result<SqliteOwnerStore> {
        let db = shared_db(path)?;
        if !lock(&db.owners).insert(owner.to_owned()) {
            return Err(Error::configuration(format!(
                "storePath {} is in use by another live client of owner {} in this process; \
                 close it first",
                quote_path(path),
                owner
            )));
        }
        Ok(SqliteOwnerStore {
            owner: owner.to_owned(),
            db,
            released: AtomicBool::new(false),
            last_event: Mutex::new(None),
        })
    }
}

impl OwnerStore for SqliteOwnerStore {
    fn owner(&self) -> &str {
        &self.owner
    }

    fn path(&self) -> Option<PathBuf> {
        Some(self.db.path.clone())
    }

    fn unreadable(&self, what: &str, detail: &str) -> Error {
        store_error(&self.db.path, what, detail.to_owned())
    }

    fn last_event_id(&self) -> Result<u64> {
        let mut known = lock(&self.last_event);
        let last = self.stored_last_event_id()?;
        *known = Some(last);
        Ok(last)
    }

    fn write(&self, change: &ChangeRows) -> Result<()> {
        let mut known = lock(&self.last_event);
        if only_events(change) {
            let last = match *known {
                Some(last) => last,
                None => self.stored_last_event_id()?,
            };
            *known = Some(last);
            if follows(last, change)
                && self.db.journal.append(&self.db.conn, &self.owner, &change.events)?
            {
                *known = change.events.last().map(|e| e.id);
                return Ok(());
            }
        }
        self.db.fold_journal()?;
        self.db.group.write(&self.db, &self.owner, change)?;
        let written = change.events.iter().map(|e| e.id).max();
        if let (Some(last), Some(written)) = (*known, written) {
            *known = Some(last.max(written));
        }
        Ok(())
    }

    fn events_after(&self, cursor: u64, limit: usize) -> Result<Vec<EventRow>> {
        self.db.fold_journal()?;
        rows::read_events(
            &lock(&self.db.conn),
            &self.db.path,
            "SELECT id, at, event, type, deposit_id FROM events WHERE owner = ?1 AND id > ?2 \
             ORDER BY id LIMIT ?3",
            params![self.owner, cursor as i64, i64::try_from(limit).unwrap_or(i64::MAX)],
        )
    }

    fn deposit_events(&self, deposit_id: &str) -> Result<Vec<EventRow>> {
        self.db.fold_journal()?;
        rows::read_events(
            &lock(&self.db.conn),
            &self.db.path,
            "SELECT id, at, event, type, deposit_id FROM events WHERE owner = ?1 \
             AND deposit_id = ?2 ORDER BY id",
            params![self.owner, deposit_id],
        )
    }

    fn save_notifications(&self, json: &str, now: u64) -> Result<()> {
        self.db.fold_journal()?;
        lock(&self.db.conn)
            .execute(
                "INSERT INTO clients (owner, notifications, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (owner) DO UPDATE SET notifications = ?2, updated_at = ?3",
                params![self.owner, json, now as i64],
            )
            .map(drop)
            .map_err(|e| store_error(&self.db.path, "saving the notifications", e))
    }

    fn bind_account(&self, account_id: &str, now: u64) -> Result<()> {
        let db = &self.db;
        db.fold_journal()?;
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

    fn load(&self, results: usize) -> Result<OwnerRows> {
        self.db.fold_journal()?;
        rows::load(&self.db, &self.owner, results)
    }

    fn release(&self) {
        if !self.released.swap(true, Ordering::SeqCst) {
            let last = {
                let mut owners = lock(&self.db.owners);
                owners.remove(&self.owner);
                owners.is_empty()
            };
            if last {
                // The file's last client closed: its events go into the file now. A fold that
                // fails leaves them journaled, for the next read, write or opening.
                let _ = self.db.fold_journal();
            }
        }
    }
}

impl SqliteOwnerStore {
    /// The owner's highest event id in the file, the journal folded first.
    fn stored_last_event_id(&self) -> Result<u64> {
        self.db.fold_journal()?;
        let last: Option<i64> = lock(&self.db.conn)
            .query_row("SELECT max(id) FROM events WHERE owner = ?1", [&self.owner], |row| {
                row.get(0)
            })
            .map_err(|e| store_error(&self.db.path, "reading the event log", e))?;
        Ok(u64::try_from(last.unwrap_or(0)).unwrap_or(0))
    }
}

/// Whether `change` holds events and nothing else (a journal's record).
fn only_events(change: &ChangeRows) -> bool {
    !change.events.is_empty()
        && change.deposits.is_empty()
        && change.detector.is_none()
        && change.attempts.is_empty()
        && change.results.is_empty()
}

/// Whether `change`'s event ids rise from above `last`: then none is stored yet and the
/// journal may take them (a repeated id goes to SQLite, which refuses the whole change).
fn follows(last: u64, change: &ChangeRows) -> bool {
    let mut previous = last;
    change.events.iter().all(|e| {
        let rises = e.id > previous;
        previous = e.id;
        rises
    })
}

impl Drop for SqliteOwnerStore {
    fn drop(&mut self) {
        self.release();
    }
}
