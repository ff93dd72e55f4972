//! The PostgreSQL store of the store contract: one owner's rows in the fleet's tables, every
//! write fenced by the lease under which this member holds the owner.
//!
//! Each write is one transaction that first runs `dk_check_fence(owner, node, fence)`: when a
//! newer holder took the owner, or this member's lease passed, the server refuses it
//! (SQLSTATE `DKF01`), nothing is written, and the store reports the owner lost
//! ([`OwnerStore::owner_lost`]): the client writes nothing more and drops the refused write's
//! events. A write that failed otherwise (connection cut, server restarting) reports the owner
//! lost too, so the fleet restarts its client from what the store holds. Reads need no fence.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use depositkit_core::deposit::store_contract::{
    ChangeRows, EventRow, OwnerRows, OwnerStore, START_RESULTS, StartRow,
};
use depositkit_core::{Error, ErrorKind};
use tokio_postgres::types::ToSql;

use crate::db::Db;
use crate::error::{FleetError, with_causes};
use crate::schema::FENCE_LOST;

pub(crate) mod prefetch;
mod read;
mod write;

use write::{CHECK_FENCE, check_fence, events_alone, in_one_trip, write_rows};

/// One owner's deposit state in PostgreSQL, written under a fencing token.
#[derive(Debug)]
pub struct PgOwnerStore {
    db: Db,
    owner: Arc<str>,
    node: Arc<str>,
    fence: i64,
    lost: Arc<AtomicBool>,
    read_ahead: ReadAhead,
    holding: Arc<Holding>,
}

/// What was read before the client asked (with the handed-over start, or a takeover's batch
/// read: [`prefetch`]), kept for the start's reads, each taken once. A write of anything but
/// events drops the rows first: what `load` returns is what the store holds (only this store
/// writes the owner's rows while it holds the fence).
#[derive(Debug, Default)]
struct ReadAhead(Mutex<Kept>);

#[derive(Debug, Default)]
struct Kept {
    last_event_id: Option<u64>,
    /// `Some(None)`: read, and no start was handed over.
    start: Option<Option<StartRow>>,
    rows: Option<OwnerRows>,
}

impl ReadAhead {
    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn keep(&self, rows: OwnerRows) {
        self.kept().rows = Some(rows);
    }

    fn take(&self) -> Option<OwnerRows> {
        self.kept().rows.take()
    }

    /// A write happened: the last event id read is past, and so are the rows unless the write
    /// was of events alone.
    fn written(&self, events_alone: bool) {
        let mut kept = self.kept();
        kept.last_event_id = None;
        if !events_alone {
            kept.rows = None;
        }
    }

    fn forget(&self) {
        self.written(false);
    }

    /// The account the rows read ahead bind the owner to.
    fn bound_account(&self) -> Option<String> {
        self.kept().rows.as_ref().and_then(|rows| rows.account_id.clone())
    }
}

/// The events of a starting client, held until its start ends ([`StartEvents::finish`]) and
/// then written in one statement, instead of one fenced write per status change
/// (`initializing`, `ready`, `watching`). `None`: not holding (every write goes out at once).
#[derive(Debug, Default)]
struct Holding(Mutex<Option<Vec<EventRow>>>);

impl Holding {
    fn events(&self) -> std::sync::MutexGuard<'_, Option<Vec<EventRow>>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What becomes of `change`: held, or written with the held events before its own (in
    /// the same transaction), or written as it is. Any write of rows ends the holding.
    fn take(&self, change: &ChangeRows) -> Outgoing {
        let mut held = self.events();
        let Some(events) = held.as_mut() else { return Outgoing::AsIs };
        if events_alone(change) {
            events.extend(change.events.iter().cloned());
            return Outgoing::Held;
        }
        let mut merged = change.clone();
        merged.events.splice(0..0, held.take().unwrap_or_default());
        Outgoing::WithHeld(merged)
    }

    /// Writes the held events with `write` (one change) and ends the holding. The lock is kept
    /// until the write is done: a write of this store that comes meanwhile waits for it, and
    /// none overtakes the held events (they have the lower ids; the log is in commit order).
    fn flush(
        &self,
        write: impl FnOnce(ChangeRows) -> depositkit_core::Result<()>,
    ) -> depositkit_core::Result<()> {
        let mut held = self.events();
        let Some(events) = held.take().filter(|events| !events.is_empty()) else {
            return Ok(());
        };
        let now = events.iter().map(|e| e.at).max().unwrap_or(0);
        let written = write(ChangeRows { now, events, ..ChangeRows::default() });
        drop(held);
        written
    }
}

/// What a write sends ([`Holding::take`]).
enum Outgoing {
    Held,
    WithHeld(ChangeRows),
    AsIs,
}

/// The handle of a starting client's held events ([`PgOwnerStore::hold_start_events`]).
#[derive(Debug)]
pub(crate) struct StartEvents(PgOwnerStore);

impl StartEvents {
    /// Writes the events held while the client started (one fenced statement) and ends the
    /// holding. A refused or failed write reports the owner lost, as any write does.
    pub(crate) fn finish(&self) {
        if let Err(error) = self.0.holding.flush(|change| self.0.write_now(change)) {
            tracing::debug!(%error, "a started client's status events were not written");
        }
    }
}

impl PgOwnerStore {
    pub(crate) fn new(db: Db, owner: &str, node: &str, fence: i64) -> PgOwnerStore {
        PgOwnerStore {
            db,
            owner: owner.into(),
            node: node.into(),
            fence,
            lost: Arc::new(AtomicBool::new(false)),
            read_ahead: ReadAhead::default(),
            holding: Arc::default(),
        }
    }

    /// This store answering its client's first reads (last event id, handed-over start,
    /// rows) from `read`, a takeover's batch read of them.
    pub(crate) fn with_prefetched(self, read: prefetch::Prefetched) -> PgOwnerStore {
        *self.read_ahead.kept() = Kept {
            last_event_id: Some(read.last_event_id),
            start: Some(read.start),
            rows: Some(read.rows),
        };
        self
    }

    /// Holds the events the client writes from now until the returned handle's
    /// [`finish`](StartEvents::finish): they are written together, in one statement, when
    /// its start ends. Reading the event log writes them first; a process that dies before
    /// leaves none of them (its start never finished: the next holder's start writes its own).
    pub(crate) fn hold_start_events(&self) -> StartEvents {
        *self.holding.events() = Some(Vec::new());
        StartEvents(PgOwnerStore {
            db: self.db.clone(),
            owner: Arc::clone(&self.owner),
            node: Arc::clone(&self.node),
            fence: self.fence,
            lost: Arc::clone(&self.lost),
            read_ahead: ReadAhead::default(),
            holding: Arc::clone(&self.holding),
        })
    }

    /// Writes what a starting client held, before a read of the event log.
    fn write_held(&self) -> depositkit_core::Result<()> {
        self.holding.flush(|change| self.write_now(change))
    }

    /// One fenced transaction of `change`, in one trip.
    fn write_now(&self, change: ChangeRows) -> depositkit_core::Result<()> {
        let (owner, node, fence) = (Arc::clone(&self.owner), Arc::clone(&self.node), self.fence);
        self.read_ahead.written(events_alone(&change));
        let events = change.events.len();
        self.written(self.run("writing", move |client| {
            Box::pin(async move { write_rows(&client, &owner, &node, fence, &change).await })
        }))?;
        if events > 0 {
            crate::metrics::events_written(events);
            self.db.ring();
        }
        Ok(())
    }

    /// The fencing token this store's writes carry.
    pub fn fence(&self) -> i64 {
        self.fence
    }

    /// The flag [`OwnerStore::owner_lost`] reads (shared with the fleet, which stops the
    /// owner's client when it is set).
    pub(crate) fn lost_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.lost)
    }

    fn failure(&self, what: &str, e: &tokio_postgres::Error) -> Error {
        if e.code().is_some_and(|code| code.code() == FENCE_LOST) {
            self.lost.store(true, Ordering::SeqCst);
            let lost = FleetError::FenceLost { owner: self.owner.to_string(), fence: self.fence };
            return Error::configuration(lost.to_string());
        }
        // No SQLSTATE: the connection failed (a network matter); any other refusal is ours.
        let kind = if e.code().is_none() { ErrorKind::Network } else { ErrorKind::Internal };
        Error::new(
            kind,
            format!(
                "fleet store {} of owner {}: {what}: {}",
                self.db.shown(),
                self.owner,
                with_causes(e)
            ),
        )
    }

    /// A write that failed for any reason (the connection cut, the server restarting, a
    /// refused fence) may have left the client's memory ahead of the store: the owner is
    /// reported lost, so the client drops the write's events and changes nothing more, and
    /// the fleet starts it again from the stored state (under the same fence when it still
    /// holds the owner). Otherwise a later write could store part of what this one missed
    /// (a detector baseline past a deposit whose record was never written: a lost deposit).
    fn written<T>(&self, outcome: depositkit_core::Result<T>) -> depositkit_core::Result<T> {
        if outcome.is_err() {
            self.lost.store(true, Ordering::SeqCst);
        }
        outcome
    }

    /// One fenced transaction of one statement, `sql` with `params`.
    fn fenced_statement(
        &self,
        what: &str,
        sql: &'static str,
        params: Params,
    ) -> depositkit_core::Result<()> {
        let (owner, node, fence) = (Arc::clone(&self.owner), Arc::clone(&self.node), self.fence);
        self.run(what, move |client| {
            Box::pin(async move {
                let (check, statement) = tokio::try_join!(
                    client.prepare_cached(CHECK_FENCE),
                    client.prepare_cached(sql)
                )?;
                let params: Vec<&(dyn ToSql + Sync)> =
                    params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
                let fence_params: [&(dyn ToSql + Sync); 3] = [&&*owner, &&*node, &fence];
                in_one_trip(
                    &client,
                    vec![
                        Box::pin(client.execute(&check, &fence_params)),
                        Box::pin(client.execute(&statement, &params)),
                    ],
                )
                .await
            })
        })
    }

    /// The account the owner is bound to, binding it to `account_id` when it is bound to none.
    fn store_account(&self, account_id: &str, now: u64) -> depositkit_core::Result<Option<String>> {
        self.read_ahead.forget();
        let (owner, node, fence) = (Arc::clone(&self.owner), Arc::clone(&self.node), self.fence);
        let account = account_id.to_owned();
        self.written(self.run("saving the account", move |mut client| {
            Box::pin(async move {
                // Bound already (every start but an owner's first, e.g. each takeover): one
                // read, no write.
                let statement = client
                    .prepare_cached("SELECT account_id FROM dk_clients WHERE owner = $1")
                    .await?;
                let bound = client
                    .query_opt(&statement, &[&&*owner])
                    .await?
                    .and_then(|row| row.get::<_, Option<String>>(0));
                if bound.is_some() {
                    return Ok(bound);
                }
                let tx = client.transaction().await?;
                check_fence(&tx, &owner, &node, fence).await?;
                tx.execute(
                    "INSERT INTO dk_clients (owner, account_id, updated_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (owner) DO UPDATE \
                     SET account_id = coalesce(dk_clients.account_id, $2), updated_at = $3",
                    &[&&*owner, &account, &id(now)],
                )
                .await?;
                let row = tx
                    .query_one("SELECT account_id FROM dk_clients WHERE owner = $1", &[&&*owner])
                    .await?;
                let stored: Option<String> = row.get(0);
                if stored.as_deref() == Some(account.as_str()) {
                    tx.commit().await?;
                }
                Ok(stored)
            })
        }))
    }

    fn unavailable(&self, e: &FleetError) -> Error {
        Error::new(ErrorKind::Network, format!("fleet store of owner {}: {e}", self.owner))
    }

    /// Runs `work` with a pooled connection on the fleet's runtime.
    fn run<T: Send + 'static>(
        &self,
        what: &str,
        work: impl FnOnce(deadpool_postgres::Object) -> Work<T> + Send + 'static,
    ) -> depositkit_core::Result<T> {
        let db = self.db.clone();
        let outcome = self.db.block_on(async move { Ok(work(db.client().await?).await) });
        match outcome {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(self.failure(what, &e)),
            Err(e) => Err(self.unavailable(&e)),
        }
    }
}

/// A statement's parameters, owned to cross onto the fleet's runtime.
type Params = Vec<Box<dyn ToSql + Sync + Send>>;

/// A query's future, boxed to cross onto the fleet's runtime.
type Work<T> = Pin<Box<dyn Future<Output = Result<T, tokio_postgres::Error>> + Send>>;

fn id(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn event_row(row: &tokio_postgres::Row) -> EventRow {
    EventRow {
        id: u64::try_from(row.get::<_, i64>(0)).unwrap_or(0),
        at: u64::try_from(row.get::<_, i64>(1)).unwrap_or(0),
        event: row.get(2),
        kind: row.get(3),
        deposit_id: row.get(4),
    }
}

impl OwnerStore for PgOwnerStore {
    fn owner(&self) -> &str {
        &self.owner
    }

    fn unreadable(&self, what: &str, detail: &str) -> Error {
        Error::configuration(format!(
            "the fleet store {} holds state of owner {} this version cannot read: {what}: {detail}",
            self.db.shown(),
            self.owner
        ))
    }

    fn last_event_id(&self) -> depositkit_core::Result<u64> {
        if let Some(last) = self.read_ahead.kept().last_event_id.take() {
            return Ok(last);
        }
        self.write_held()?;
        let owner = Arc::clone(&self.owner);
        self.run("reading the event log", move |client| {
            Box::pin(async move {
                let statement = client
                    .prepare_cached("SELECT coalesce(max(id), 0) FROM dk_events WHERE owner = $1")
                    .await?;
                let row = client.query_one(&statement, &[&&*owner]).await?;
                Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
            })
        })
    }

    fn write(&self, change: &ChangeRows) -> depositkit_core::Result<()> {
        match self.holding.take(change) {
            Outgoing::Held => {
                self.read_ahead.written(true);
                Ok(())
            }
            Outgoing::WithHeld(merged) => self.write_now(merged),
            Outgoing::AsIs => self.write_now(change.clone()),
        }
    }

    fn events_after(&self, cursor: u64, limit: usize) -> depositkit_core::Result<Vec<EventRow>> {
        self.write_held()?;
        let owner = Arc::clone(&self.owner);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.run("reading the event log", move |client| {
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT id, at, event, type, deposit_id FROM dk_events \
                         WHERE owner = $1 AND id > $2 ORDER BY id LIMIT $3",
                        &[&&*owner, &id(cursor), &limit],
                    )
                    .await?;
                Ok(rows.iter().map(event_row).collect())
            })
        })
    }

    fn deposit_events(&self, deposit_id: &str) -> depositkit_core::Result<Vec<EventRow>> {
        self.write_held()?;
        let owner = Arc::clone(&self.owner);
        let deposit_id = deposit_id.to_owned();
        self.run("reading the event log", move |client| {
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT id, at, event, type, deposit_id FROM dk_events \
                         WHERE owner = $1 AND deposit_id = $2 ORDER BY id",
                        &[&&*owner, &deposit_id],
                    )
                    .await?;
                Ok(rows.iter().map(event_row).collect())
            })
        })
    }

    fn save_notifications(&self, json: &str, now: u64) -> depositkit_core::Result<()> {
        self.read_ahead.forget();
        self.written(self.fenced_statement(
            "saving the notifications",
            "INSERT INTO dk_clients (owner, notifications, updated_at) VALUES ($1, $2, $3) \
             ON CONFLICT (owner) DO UPDATE SET notifications = $2, updated_at = $3",
            vec![Box::new(self.owner.to_string()), Box::new(json.to_owned()), Box::new(id(now))],
        ))
    }

    fn bind_account(&self, account_id: &str, now: u64) -> depositkit_core::Result<()> {
        // Read with the start already, when the start was handed over: no trip at all.
        let stored = match self.read_ahead.bound_account() {
            Some(bound) => Some(bound),
            None => self.store_account(account_id, now)?,
        };
        match stored {
            Some(stored) if stored != account_id => Err(Error::configuration(format!(
                "the fleet store {} holds account '{}' of owner {}, but the service gave account \
                 '{}': it is the state of another service",
                self.db.shown(),
                stored,
                self.owner,
                account_id
            ))),
            _ => Ok(()),
        }
    }
    fn load(&self, results: usize) -> depositkit_core::Result<OwnerRows> {
        if results == START_RESULTS
            && let Some(rows) = self.read_ahead.take()
        {
            return Ok(rows);
        }
        let owner = Arc::clone(&self.owner);
        let results = id(results as u64);
        self.run("reading the owner's state", move |client| {
            Box::pin(async move { read::owner_rows(&client, &owner, results).await })
        })
    }

    fn release(&self) {
        // The lease is the fleet's to give back (after the client stopped).
    }

    fn keeps_starts(&self) -> bool {
        true
    }

    fn load_start(&self) -> depositkit_core::Result<Option<StartRow>> {
        if let Some(start) = self.read_ahead.kept().start.take() {
            return Ok(start);
        }
        let owner = Arc::clone(&self.owner);
        let results = id(START_RESULTS as u64);
        let (start, rows) = self.run("reading the handed-over start", move |client| {
            Box::pin(async move { read::start_and_rows(&client, &owner, results).await })
        })?;
        self.read_ahead.keep(rows);
        Ok(start)
    }

    fn save_start(&self, start: &StartRow, now: u64) -> depositkit_core::Result<()> {
        self.read_ahead.kept().start = None;
        // Not `written`: a start that was not kept leaves the client's state as it was (the
        // next client starts the full way); a refused fence still reports the owner lost.
        self.fenced_statement(
            "keeping the start for the next holder",
            "INSERT INTO dk_clients (owner, start_account, session_jwt, session_expires_at, \
                 updated_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (owner) DO UPDATE SET start_account = $2, session_jwt = $3, \
                 session_expires_at = $4, updated_at = $5 \
             WHERE dk_clients.start_account IS DISTINCT FROM $2 \
                OR coalesce(dk_clients.session_expires_at, 0) <= $4",
            vec![
                Box::new(self.owner.to_string()),
                Box::new(start.account.clone()),
                Box::new(start.session_jwt.clone()),
                Box::new(id(start.session_expires_at)),
                Box::new(id(now)),
            ],
        )
    }

    fn owner_lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests;
