//! The one event log across owners: every owner's events in `dk_events`, read in commit order
//! from a cursor that survives restarts, without ever skipping an event that committed late.
//!
//! Why not "the highest `pos` seen": a row's `pos` is taken at INSERT but becomes visible at
//! COMMIT, so a row of a long transaction can appear below a cursor that already passed it.
//! Each row records its transaction id (`tx xid8 DEFAULT pg_current_xact_id()`), and a reader
//! only reads rows of transactions older than every transaction still running
//! (`tx < pg_snapshot_xmin(pg_current_snapshot())`), in `(tx, pos)` order: whatever it has
//! not read yet can only come after its cursor. A long transaction anywhere delays readers;
//! it never makes them skip.
//!
//! Wake-ups: a member rings a doorbell (`NOTIFY dk_events`, at most one per
//! [`DOORBELL_EVERY`] per process, on a pooled connection after its commit) and a waiting
//! reader listens on a connection of its own; it also reads again every [`POLL_EVERY`],
//! because notifications sent while it was disconnected are lost.
//!
//! The cursor names its cluster (`v1.<system identifier>.<tx>.<pos>`): transaction ids start
//! again in a restored cluster, so a cursor from another cluster is refused.

use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::db::Db;
use crate::error::{FleetError, Result, pg};

/// At most one doorbell per this, per process.
pub const DOORBELL_EVERY: Duration = Duration::from_millis(50);
/// A waiting reader reads again at least this often (a lost notification costs this much).
pub const POLL_EVERY: Duration = Duration::from_secs(1);

/// The notification channel.
const CHANNEL: &str = "dk_events";

/// One event of the fleet's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetEvent {
    /// The owner it belongs to.
    pub owner: String,
    /// Its id in the owner's log: `(owner, id)` is stable, for de-duplication.
    pub id: u64,
    /// When it was emitted, unix milliseconds.
    pub at: u64,
    /// Its type (`deposit:lifecycle`, …).
    pub kind: String,
    /// The deposit it is about, if any.
    pub deposit_id: Option<String>,
    /// The event's JSON (as `DepositEvent::to_json`).
    pub event: String,
    /// The cursor just after this event.
    pub cursor: EventCursor,
}

/// A position in the fleet's log: `v1.<cluster>.<tx>.<pos>`. [`EventCursor::START`] is before
/// the first event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventCursor {
    cluster: Option<String>,
    tx: u64,
    pos: i64,
}

impl EventCursor {
    /// Before the first event of any cluster.
    pub const START: EventCursor = EventCursor { cluster: None, tx: 0, pos: 0 };
}

impl std::fmt::Display for EventCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cluster = self.cluster.as_deref().unwrap_or("any");
        write!(f, "v1.{cluster}.{}.{}", self.tx, self.pos)
    }
}

impl FromStr for EventCursor {
    type Err = FleetError;

    fn from_str(text: &str) -> Result<EventCursor> {
        let bad = || FleetError::InvalidCursor(format!("'{text}'"));
        let mut parts = text.split('.');
        if parts.next() != Some("v1") {
            return Err(bad());
        }
        let cluster = parts.next().ok_or_else(bad)?;
        let tx = parts.next().and_then(|t| t.parse().ok()).ok_or_else(bad)?;
        let pos = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        if parts.next().is_some() {
            return Err(bad());
        }
        let cluster = (cluster != "any").then(|| cluster.to_owned());
        Ok(EventCursor { cluster, tx, pos })
    }
}

/// The doorbell of one process: rings at most once per [`DOORBELL_EVERY`].
#[derive(Debug, Default)]
pub(crate) struct Doorbell {
    /// When it last rang, milliseconds since `epoch`.
    last: AtomicU64,
    epoch: std::sync::OnceLock<Instant>,
}

impl Doorbell {
    /// Rings (in the background) unless it rang within [`DOORBELL_EVERY`].
    pub fn ring(&self, db: &Db) {
        let epoch = *self.epoch.get_or_init(Instant::now);
        let now = u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX).max(1);
        let last = self.last.load(Ordering::SeqCst);
        let every = u64::try_from(DOORBELL_EVERY.as_millis()).unwrap_or(50);
        if last != 0 && now < last + every {
            return;
        }
        if self.last.compare_exchange(last, now, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            return;
        }
        let db = db.clone();
        db.handle().spawn({
            let db = db.clone();
            async move {
                if let Ok(client) = db.client().await {
                    let _ = client.batch_execute(&format!("NOTIFY {CHANNEL}")).await;
                }
            }
        });
    }
}

/// The cluster's identity, for cursors.
async fn cluster(client: &deadpool_postgres::Object) -> Result<String> {
    let row = client
        .query_one("SELECT system_identifier::text FROM pg_control_system()", &[])
        .await
        .map_err(pg)?;
    Ok(row.get(0))
}

/// Events after `cursor` that no running transaction can still precede, at most `limit`.
pub(crate) async fn read(db: &Db, cursor: &EventCursor, limit: usize) -> Result<Vec<FleetEvent>> {
    let client = db.client().await?;
    let here = cluster(&client).await?;
    if let Some(theirs) = &cursor.cluster
        && *theirs != here
    {
        return Err(FleetError::InvalidCursor(format!(
            "'{cursor}' is from another PostgreSQL cluster ({theirs}; this is {here}): \
             transaction ids differ after a restore, start from a new cursor"
        )));
    }
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    // The order names the table's columns: a bare `tx` would be the output column `tx::text`,
    // and text order puts transaction 1003 before 998 (out of order, and with `LIMIT` a cursor
    // past events not yet returned).
    let rows = client
        .query(
            "SELECT tx::text, pos, owner, id, at, type, deposit_id, event FROM dk_events \
             WHERE (tx, pos) > ($1::text::xid8, $2) \
               AND tx < pg_snapshot_xmin(pg_current_snapshot()) \
             ORDER BY dk_events.tx, dk_events.pos LIMIT $3",
            &[&cursor.tx.to_string(), &cursor.pos, &limit],
        )
        .await
        .map_err(pg)?;
    rows.iter()
        .map(|row| {
            let tx: String = row.get(0);
            Ok(FleetEvent {
                cursor: EventCursor {
                    cluster: Some(here.clone()),
                    tx: tx.parse().map_err(|_| FleetError::Postgres(format!("bad xid8 {tx}")))?,
                    pos: row.get(1),
                },
                owner: row.get(2),
                id: u64::try_from(row.get::<_, i64>(3)).unwrap_or(0),
                at: u64::try_from(row.get::<_, i64>(4)).unwrap_or(0),
                kind: row.get(5),
                deposit_id: row.get(6),
                event: row.get(7),
            })
        })
        .collect()
}

/// A connection listening for the doorbell; each notification leaves a permit in `rung`
/// (one is kept while nobody waits, so a ring between a read and a wait is not lost).
pub(crate) struct Listener {
    rung: Arc<tokio::sync::Notify>,
    _client: tokio_postgres::Client,
    driver: tokio::task::JoinHandle<()>,
}

impl Listener {
    pub(crate) async fn open(db: &Db) -> Result<Listener> {
        let rung = Arc::new(tokio::sync::Notify::new());
        let (client, driver) = db.listen(CHANNEL, Arc::clone(&rung)).await?;
        Ok(Listener { rung, _client: client, driver })
    }

    /// Whether the connection is still up (a dropped one misses rings: open another).
    pub(crate) fn alive(&self) -> bool {
        !self.driver.is_finished()
    }

    /// Waits for a ring, at most `wait`.
    pub(crate) async fn wait(&self, wait: Duration) {
        let _ = tokio::time::timeout(wait, self.rung.notified()).await;
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// Reads the fleet's log from a cursor: at least once (save [`EventReader::cursor`] after
/// handling a batch; after a restart, start from the saved one), de-duplicate by
/// `(owner, id)`.
pub struct EventReader {
    db: Db,
    cursor: EventCursor,
    listener: Option<Listener>,
}

impl std::fmt::Debug for EventReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventReader").field("cursor", &self.cursor).finish_non_exhaustive()
    }
}

impl EventReader {
    pub(crate) fn new(db: Db, cursor: EventCursor) -> EventReader {
        EventReader { db, cursor, listener: None }
    }

    /// The position after the last event returned.
    pub fn cursor(&self) -> &EventCursor {
        &self.cursor
    }

    /// The next events (at most `limit`), waiting up to `wait` for some when there are none:
    /// woken by the doorbell, or reading again every [`POLL_EVERY`]. Empty when none came.
    ///
    /// # Errors
    /// [`FleetError::InvalidCursor`] for a cursor of another cluster; database errors.
    pub fn read(&mut self, limit: usize, wait: Duration) -> Result<Vec<FleetEvent>> {
        let (db, cursor, listener) = (self.db.clone(), self.cursor.clone(), self.listener.take());
        let (batch, listener) = self
            .db
            .block_on(async move { read_waiting(db, cursor, listener, limit, wait).await })?;
        self.listener = listener;
        if let Some(last) = batch.last() {
            self.cursor = last.cursor.clone();
        }
        Ok(batch)
    }
}

async fn read_waiting(
    db: Db,
    cursor: EventCursor,
    mut listener: Option<Listener>,
    limit: usize,
    wait: Duration,
) -> Result<(Vec<FleetEvent>, Option<Listener>)> {
    let deadline = Instant::now() + wait;
    loop {
        let batch = read(&db, &cursor, limit).await?;
        let left = deadline.saturating_duration_since(Instant::now());
        if !batch.is_empty() || left.is_zero() {
            return Ok((batch, listener));
        }
        if !listener.as_ref().is_some_and(Listener::alive) {
            // Listening first, then reading again: nothing committed in between is missed.
            listener = Listener::open(&db).await.ok();
            if listener.is_some() {
                continue;
            }
        }
        match &listener {
            Some(listener) => listener.wait(left.min(POLL_EVERY)).await,
            None => tokio::time::sleep(left.min(POLL_EVERY)).await,
        }
    }
}
