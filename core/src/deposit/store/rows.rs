//! The SQLite file's rows: a [`ChangeRows`] written (in the transaction `group.rs` runs), the
//! event log read back, what a client restores.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::contract::{ChangeRows, EventRow, OwnerRows, StoredDeposit};
use super::file::{SharedDb, store_error};
use super::lock;
use crate::error::Result;

/// Applies `change` of `owner` on `conn`, inside the transaction the caller runs (`group.rs`),
/// through the connection's statement cache (each statement is parsed once per connection).
pub(super) fn write_change(
    conn: &Connection,
    owner: &str,
    change: &ChangeRows,
) -> rusqlite::Result<()> {
    let now = change.now as i64;
    for record in &change.deposits {
        conn.prepare_cached(
            "INSERT INTO deposits (owner, id, seq, state, open, record, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (owner, id) DO UPDATE SET state = ?4, open = ?5, record = ?6,
                 updated_at = ?7",
        )?
        .execute(params![
            owner,
            record.id,
            record.seq as i64,
            record.state,
            record.open,
            record.record,
            now
        ])?;
    }
    if let Some(json) = &change.detector {
        conn.prepare_cached(
            "INSERT INTO clients (owner, detector, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (owner) DO UPDATE SET detector = ?2, updated_at = ?3",
        )?
        .execute(params![owner, json, now])?;
    }
    for attempt in &change.attempts {
        conn.prepare_cached(
            "INSERT INTO attempts (owner, quote_id, deposit_id, purpose, sent_at, outcome,
                 transaction_id, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?5)
             ON CONFLICT (owner, quote_id) DO UPDATE SET
                 outcome = coalesce(?6, outcome),
                 transaction_id = coalesce(?7, transaction_id), updated_at = ?5",
        )?
        .execute(params![
            owner,
            attempt.quote_id,
            attempt.deposit_id,
            attempt.purpose,
            now,
            attempt.outcome,
            attempt.transaction_id
        ])?;
    }
    for result in &change.results {
        conn.prepare_cached(
            "INSERT INTO results (owner, deposit_id, kind, result, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (owner, deposit_id, kind) DO UPDATE SET result = ?4, updated_at = ?5",
        )?
        .execute(params![owner, result.deposit_id, result.kind, result.result, now])?;
    }
    for event in &change.events {
        conn.prepare_cached(
            "INSERT INTO events (owner, id, at, type, deposit_id, event)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            owner,
            event.id as i64,
            event.at as i64,
            event.kind,
            event.deposit_id,
            event.event
        ])?;
    }
    Ok(())
}

pub(super) fn read_events(
    conn: &Connection,
    path: &Path,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<EventRow>> {
    let fail = |e: rusqlite::Error| store_error(path, "reading the event log", e);
    let mut statement = conn.prepare_cached(sql).map_err(fail)?;
    let rows = statement
        .query_map(params, |row| {
            Ok(EventRow {
                id: u64::try_from(row.get::<_, i64>(0)?).unwrap_or(0),
                at: u64::try_from(row.get::<_, i64>(1)?).unwrap_or(0),
                event: row.get(2)?,
                kind: row.get(3)?,
                deposit_id: row.get(4)?,
            })
        })
        .map_err(fail)?;
    rows.map(|row| row.map_err(fail)).collect()
}

/// Everything stored for `owner` in `db`, with at most `results` result rows.
///
/// # Errors
/// [`ErrorKind::Internal`](crate::error::ErrorKind::Internal) when the file cannot be read.
pub(super) fn load(db: &SharedDb, owner: &str, results: usize) -> Result<OwnerRows> {
    let conn = lock(&db.conn);
    let path = &db.path;
    let fail = |what: &str| {
        let what = what.to_owned();
        move |e: rusqlite::Error| store_error(path, &what, e)
    };
    let mut restored = OwnerRows::default();
    let client: Option<(Option<String>, Option<String>, Option<String>)> = conn
        .query_row(
            "SELECT account_id, detector, notifications FROM clients WHERE owner = ?1",
            [owner],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .optional()
        .map_err(fail("reading the client"))?;
    if let Some((account_id, detector, notifications)) = client {
        restored.account_id = account_id;
        restored.detector = detector;
        restored.notifications = notifications;
    }
    let mut statement = conn
        .prepare("SELECT id, open, record, seq FROM deposits WHERE owner = ?1 ORDER BY seq")
        .map_err(fail("reading the deposits"))?;
    let rows = statement
        .query_map([owner], |row| {
            Ok(StoredDeposit {
                id: row.get(0)?,
                open: row.get(1)?,
                record: row.get(2)?,
                seq: u64::try_from(row.get::<_, i64>(3)?).unwrap_or(0),
            })
        })
        .map_err(fail("reading the deposits"))?;
    for row in rows {
        restored.deposits.push(row.map_err(fail("reading the deposits"))?);
    }
    let mut statement = conn
        .prepare(
            "SELECT kind, result FROM results WHERE owner = ?1 ORDER BY updated_at DESC \
             LIMIT ?2",
        )
        .map_err(fail("reading the results"))?;
    let rows = statement
        .query_map(params![owner, i64::try_from(results).unwrap_or(i64::MAX)], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })
        .map_err(fail("reading the results"))?;
    for row in rows {
        restored.results.push(row.map_err(fail("reading the results"))?);
    }
    Ok(restored)
}
