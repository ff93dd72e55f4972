//! The reads of a client's start: the owner's rows (`load`) and the start its previous holder
//! handed over (`load_start`). A takeover asks for both, one after the other, so the start's
//! read sends the rows' queries with it (one round trip instead of three: the start, the
//! account binding's check and the rows); the rows are then kept for the `load` that follows
//! (see `ReadAhead` in the parent module).

use depositkit_core::deposit::store_contract::{OwnerRows, StartRow, StoredDeposit};
use tokio_postgres::types::ToSql;

const SELECT_CLIENT: &str =
    "SELECT account_id, detector, notifications FROM dk_clients WHERE owner = $1";
const SELECT_DEPOSITS: &str =
    "SELECT id, open, record, seq FROM dk_deposits WHERE owner = $1 ORDER BY seq";
const SELECT_RESULTS: &str =
    "SELECT kind, result FROM dk_results WHERE owner = $1 ORDER BY updated_at DESC LIMIT $2";
const SELECT_START: &str = "SELECT start_account, session_jwt, session_expires_at FROM dk_clients \
     WHERE owner = $1 AND start_account IS NOT NULL";

/// The owner's rows, with at most `results` result rows: three queries, prepared once per
/// connection and sent together (pipelined).
pub(super) async fn owner_rows(
    client: &deadpool_postgres::Object,
    owner: &str,
    results: i64,
) -> Result<OwnerRows, tokio_postgres::Error> {
    let (by_client, by_deposit, by_result) = tokio::try_join!(
        client.prepare_cached(SELECT_CLIENT),
        client.prepare_cached(SELECT_DEPOSITS),
        client.prepare_cached(SELECT_RESULTS),
    )?;
    let owner: &(dyn ToSql + Sync) = &owner;
    let (by_owner, with_limit) = ([owner], [owner, &results]);
    let (client_row, deposits, results) = tokio::try_join!(
        client.query_opt(&by_client, &by_owner),
        client.query(&by_deposit, &by_owner),
        client.query(&by_result, &with_limit),
    )?;
    let mut rows = OwnerRows::default();
    if let Some(row) = client_row {
        rows.account_id = row.get(0);
        rows.detector = row.get(1);
        rows.notifications = row.get(2);
    }
    rows.deposits = deposits.iter().map(|row| stored_deposit(row, 0)).collect();
    rows.results = results.iter().map(|row| (row.get(0), row.get(1))).collect();
    Ok(rows)
}

/// The handed-over start and the owner's rows (with `results` result rows), in one trip.
pub(super) async fn start_and_rows(
    client: &deadpool_postgres::Object,
    owner: &str,
    results: i64,
) -> Result<(Option<StartRow>, OwnerRows), tokio_postgres::Error> {
    let by_start = client.prepare_cached(SELECT_START).await?;
    let by_owner: [&(dyn ToSql + Sync); 1] = [&owner];
    let (start, rows) = tokio::try_join!(
        client.query_opt(&by_start, &by_owner),
        owner_rows(client, owner, results),
    )?;
    Ok((start.and_then(|row| handed_start(&row, 0)), rows))
}

/// A deposit row from `id, open, record, seq` at column `first` of `row` (the one-owner and the
/// batch reads select them alike).
pub(super) fn stored_deposit(row: &tokio_postgres::Row, first: usize) -> StoredDeposit {
    StoredDeposit {
        id: row.get(first),
        open: row.get(first + 1),
        record: row.get(first + 2),
        seq: u64::try_from(row.get::<_, i64>(first + 3)).unwrap_or(0),
    }
}

/// The handed-over start from `start_account, session_jwt, session_expires_at` at column
/// `first` of `row`: none without an account.
pub(super) fn handed_start(row: &tokio_postgres::Row, first: usize) -> Option<StartRow> {
    Some(StartRow {
        account: row.get::<_, Option<String>>(first)?,
        session_jwt: row.get(first + 1),
        session_expires_at: row
            .get::<_, Option<i64>>(first + 2)
            .and_then(|at| u64::try_from(at).ok())
            .unwrap_or(0),
    })
}
