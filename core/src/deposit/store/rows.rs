//! The store's rows: one transaction per [`Change`], the event log read back, what a client
//! restores.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::file::{SharedDb, store_error};
use super::{AttemptOutcome, Change, Restored, lock, record_from_json};
use crate::deposit::events::{DepositEvent, RecordedEvent};
use crate::describe::quote;
use crate::error::Result;

/// Final results restored per kind (as many as the client remembers).
const RESTORED_RESULTS: usize = 1000;

pub(super) fn write(
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

pub(super) fn read_events(
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
pub(super) fn event_deposit_id(event: &DepositEvent) -> Option<&str> {
    match event {
        DepositEvent::Lifecycle(e) => Some(&e.id),
        DepositEvent::Refund(r) => Some(&r.deposit_id),
        _ => None,
    }
}

/// Everything stored for `owner` in `db`.
///
/// # Errors
/// [`ErrorKind::Internal`] when the file cannot be read or holds a record this version
/// cannot read.
pub(super) fn load(db: &SharedDb, owner: &str) -> Result<Restored> {
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
            [owner],
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
        .query_map([owner], |row| {
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
            restored.deposits.push(
                record_from_json(&record).map_err(|e| {
                    store_error(path, &format!("reading deposit {}", quote(&id)), e)
                })?,
            );
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
        .query_map(params![owner, (2 * RESTORED_RESULTS) as i64], |row| {
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
