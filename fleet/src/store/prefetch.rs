//! What a takeover's clients read first, read for many owners at once: a member that claims
//! thousands of owners reads each one's handed-over start, rows and last event id in one trip
//! per batch (five statements for up to [`PREFETCH_BATCH`] owners), instead of two trips and
//! five statements per owner. Each store then answers its client's `last_event_id`,
//! `load_start` and `load` from what was read (see `ReadAhead` in the parent module).
//!
//! Read after the claim committed: only the new holder writes the owners' rows from then on
//! (a write of the previous holder's is refused by its fence), so what is read stays what the
//! store holds until this member writes.

use std::collections::HashMap;

use depositkit_core::deposit::store_contract::{OwnerRows, StartRow};
use tokio_postgres::types::ToSql;

use super::read::{handed_start, stored_deposit};
use crate::db::Db;
use crate::error::{Result, pg};

/// How many owners one batch reads.
pub(crate) const PREFETCH_BATCH: usize = 500;

const SELECT_CLIENTS: &str = "SELECT owner, account_id, detector, notifications, start_account, \
     session_jwt, session_expires_at FROM dk_clients WHERE owner = ANY($1)";
const SELECT_DEPOSITS: &str = "SELECT owner, id, open, record, seq FROM dk_deposits \
     WHERE owner = ANY($1) ORDER BY owner, seq";
/// Each owner's newest `$2` results (an index walk per owner, as the one-owner read).
const SELECT_RESULTS: &str = "SELECT o.owner, r.kind, r.result FROM unnest($1::text[]) AS o(owner) \
     CROSS JOIN LATERAL (SELECT kind, result, updated_at FROM dk_results \
         WHERE owner = o.owner ORDER BY updated_at DESC LIMIT $2) AS r \
     ORDER BY o.owner, r.updated_at DESC";
/// Each owner's last event id (the primary key's last entry per owner).
const SELECT_LAST_EVENTS: &str = "SELECT o.owner, \
     (SELECT coalesce(max(id), 0) FROM dk_events WHERE owner = o.owner) \
     FROM unnest($1::text[]) AS o(owner)";

/// One owner's reads, taken by its store one at a time.
#[derive(Debug, Default)]
pub(crate) struct Prefetched {
    pub(crate) last_event_id: u64,
    pub(crate) start: Option<StartRow>,
    pub(crate) rows: OwnerRows,
}

/// The reads of `owners` (at most [`PREFETCH_BATCH`] for one trip), by owner; every owner
/// asked for has an entry.
pub(crate) async fn read(
    db: &Db,
    owners: &[String],
    results: i64,
) -> Result<HashMap<String, Prefetched>> {
    let client = db.client().await?;
    let (clients, deposits, by_result, last) = tokio::try_join!(
        client.prepare_cached(SELECT_CLIENTS),
        client.prepare_cached(SELECT_DEPOSITS),
        client.prepare_cached(SELECT_RESULTS),
        client.prepare_cached(SELECT_LAST_EVENTS),
    )
    .map_err(pg)?;
    let by_owners: [&(dyn ToSql + Sync); 1] = [&owners];
    let with_limit: [&(dyn ToSql + Sync); 2] = [&owners, &results];
    let (clients, deposits, result_rows, last) = tokio::try_join!(
        client.query(&clients, &by_owners),
        client.query(&deposits, &by_owners),
        client.query(&by_result, &with_limit),
        client.query(&last, &by_owners),
    )
    .map_err(pg)?;
    let mut read: HashMap<String, Prefetched> =
        owners.iter().map(|owner| (owner.clone(), Prefetched::default())).collect();
    for row in &last {
        read.entry(row.get(0)).or_default().last_event_id =
            u64::try_from(row.get::<_, i64>(1)).unwrap_or(0);
    }
    for row in &clients {
        let found = read.entry(row.get(0)).or_default();
        found.rows.account_id = row.get(1);
        found.rows.detector = row.get(2);
        found.rows.notifications = row.get(3);
        found.start = handed_start(row, 4);
    }
    for row in &deposits {
        read.entry(row.get(0)).or_default().rows.deposits.push(stored_deposit(row, 1));
    }
    for row in &result_rows {
        read.entry(row.get(0)).or_default().rows.results.push((row.get(1), row.get(2)));
    }
    Ok(read)
}
