//! The write path of the PostgreSQL store: each write is one transaction, fenced, sent to the
//! server in one trip. A write of events alone (most writes: status changes, onramp updates,
//! lifecycle events without a row change) is a single statement that checks the fence and
//! inserts the events; any other write is `BEGIN`, the fence check, its statements and
//! `COMMIT`, pipelined.

use std::future::Future;
use std::pin::Pin;

use depositkit_core::deposit::store_contract::ChangeRows;
use tokio_postgres::types::ToSql;

use super::id;

/// The fence check every write runs first in its transaction.
pub(super) const CHECK_FENCE: &str = "SELECT dk_check_fence($1, $2, $3)";

/// The fence check on its own, for a transaction that is not sent in one trip.
pub(super) async fn check_fence(
    tx: &deadpool_postgres::Transaction<'_>,
    owner: &str,
    node: &str,
    fence: i64,
) -> Result<(), tokio_postgres::Error> {
    let statement = tx.prepare_cached(CHECK_FENCE).await?;
    tx.execute(&statement, &[&owner, &node, &fence]).await.map(drop)
}

/// A statement of a transaction sent in one trip (its affected-row count is not needed).
pub(super) type Step<'a> =
    Pin<Box<dyn Future<Output = Result<u64, tokio_postgres::Error>> + Send + 'a>>;

/// Runs `steps` as one transaction sent at once: `BEGIN`, the steps in order, `COMMIT`, all
/// written before the first answer is read (tokio-postgres sends each request when its future
/// is first polled, and `join_all` polls them in order), so a write is one round trip, not
/// one per statement. When a step fails, the server refuses every later one (the transaction
/// is aborted) and turns the `COMMIT` into a rollback: nothing of it is kept, and the first
/// error, in order, is the one returned (the fence check's, when it refused).
pub(super) async fn in_one_trip(
    client: &tokio_postgres::Client,
    steps: Vec<Step<'_>>,
) -> Result<(), tokio_postgres::Error> {
    let begin: Step<'_> = Box::pin(async { client.batch_execute("BEGIN").await.map(|()| 0) });
    let commit: Step<'_> = Box::pin(async { client.batch_execute("COMMIT").await.map(|()| 0) });
    let all = std::iter::once(begin).chain(steps).chain(std::iter::once(commit));
    for outcome in futures_util::future::join_all(all).await {
        outcome?;
    }
    Ok(())
}

/// The statements of a [`ChangeRows`], prepared once per connection.
const UPSERT_DEPOSIT: &str = "INSERT INTO dk_deposits (owner, id, seq, state, open, record, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7) \
     ON CONFLICT (owner, id) DO UPDATE SET state = $4, open = $5, record = $6, updated_at = $7";
const UPSERT_DETECTOR: &str = "INSERT INTO dk_clients (owner, detector, updated_at) VALUES ($1, $2, $3) \
     ON CONFLICT (owner) DO UPDATE SET detector = $2, updated_at = $3";
const UPSERT_ATTEMPT: &str = "INSERT INTO dk_attempts (owner, quote_id, deposit_id, purpose, sent_at, \
         outcome, transaction_id, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $5) \
     ON CONFLICT (owner, quote_id) DO UPDATE SET \
         outcome = coalesce($6, dk_attempts.outcome), \
         transaction_id = coalesce($7, dk_attempts.transaction_id), updated_at = $5";
const UPSERT_RESULT: &str = "INSERT INTO dk_results (owner, deposit_id, kind, result, updated_at) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (owner, deposit_id, kind) \
     DO UPDATE SET result = $4, updated_at = $5";
const INSERT_EVENT: &str = "INSERT INTO dk_events (owner, id, at, type, deposit_id, event) \
     VALUES ($1, $2, $3, $4, $5, $6)";

/// Events alone, fenced, in one statement (so one transaction of its own): the fence check is
/// the row every event is joined with, so no event is inserted unless it passed, and its error
/// fails the whole statement. `WITH ORDINALITY` keeps the events' order in `pos`.
const INSERT_EVENTS_FENCED: &str = "INSERT INTO dk_events (owner, id, at, type, deposit_id, event) \
     SELECT $1, e.id, e.at, e.type, e.deposit_id, e.event \
     FROM (SELECT dk_check_fence($1, $2, $3)) AS fence, \
          unnest($4::bigint[], $5::bigint[], $6::text[], $7::text[], $8::text[]) \
              WITH ORDINALITY AS e (id, at, type, deposit_id, event, n) \
     ORDER BY e.n";

/// One fenced transaction of `change`, sent in one trip.
pub(super) async fn write_rows(
    client: &deadpool_postgres::Object,
    owner: &str,
    node: &str,
    fence: i64,
    change: &ChangeRows,
) -> Result<(), tokio_postgres::Error> {
    if events_alone(change) {
        return write_events(client, owner, node, fence, change).await;
    }
    let (check, deposit, detector, attempt, result, event) = tokio::try_join!(
        client.prepare_cached(CHECK_FENCE),
        client.prepare_cached(UPSERT_DEPOSIT),
        client.prepare_cached(UPSERT_DETECTOR),
        client.prepare_cached(UPSERT_ATTEMPT),
        client.prepare_cached(UPSERT_RESULT),
        client.prepare_cached(INSERT_EVENT),
    )?;
    let now = id(change.now);
    // Every parameter a step borrows lives here, for as long as the trip.
    let seqs: Vec<i64> = change.deposits.iter().map(|d| id(d.seq)).collect();
    let event_ids: Vec<(i64, i64)> = change.events.iter().map(|e| (id(e.id), id(e.at))).collect();
    let mut params: Vec<(&tokio_postgres::Statement, Vec<&(dyn ToSql + Sync)>)> = Vec::new();
    params.push((&check, vec![&owner, &node, &fence]));
    for (d, seq) in change.deposits.iter().zip(&seqs) {
        params.push((&deposit, vec![&owner, &d.id, seq, &d.state, &d.open, &d.record, &now]));
    }
    if let Some(json) = &change.detector {
        params.push((&detector, vec![&owner, json, &now]));
    }
    for a in &change.attempts {
        params.push((
            &attempt,
            vec![
                &owner,
                &a.quote_id,
                &a.deposit_id,
                &a.purpose,
                &now,
                &a.outcome,
                &a.transaction_id,
            ],
        ));
    }
    for r in &change.results {
        params.push((&result, vec![&owner, &r.deposit_id, &r.kind, &r.result, &now]));
    }
    for (e, (event_id, at)) in change.events.iter().zip(&event_ids) {
        params.push((&event, vec![&owner, event_id, at, &e.kind, &e.deposit_id, &e.event]));
    }
    let steps: Vec<Step<'_>> = params
        .iter()
        .map(|(statement, values)| -> Step<'_> { Box::pin(client.execute(*statement, values)) })
        .collect();
    in_one_trip(client, steps).await
}

/// A change of events and nothing else (and at least one event).
pub(super) fn events_alone(change: &ChangeRows) -> bool {
    !change.events.is_empty()
        && change.deposits.is_empty()
        && change.detector.is_none()
        && change.attempts.is_empty()
        && change.results.is_empty()
}

/// The events of `change`, fenced, in one statement.
async fn write_events(
    client: &deadpool_postgres::Object,
    owner: &str,
    node: &str,
    fence: i64,
    change: &ChangeRows,
) -> Result<(), tokio_postgres::Error> {
    let statement = client.prepare_cached(INSERT_EVENTS_FENCED).await?;
    let events = &change.events;
    let ids: Vec<i64> = events.iter().map(|e| id(e.id)).collect();
    let ats: Vec<i64> = events.iter().map(|e| id(e.at)).collect();
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    let deposits: Vec<Option<&str>> = events.iter().map(|e| e.deposit_id.as_deref()).collect();
    let bodies: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    client
        .execute(&statement, &[&owner, &node, &fence, &ids, &ats, &kinds, &deposits, &bodies])
        .await
        .map(drop)
}
