//! The fleet's database for callers that await ([`AsyncFleet`]): owners, commands and the one
//! event log as futures, for an async host on a runtime of its own (Python's asyncio face).
//!
//! Every call is a task of the fleet's runtime (where its pooled connections live), awaited
//! through a handle that works from any runtime or executor: no thread waits for it. Dropping
//! the future aborts the task: a command already inserted stays queued (as after a timeout of
//! [`Fleet::request`](crate::Fleet::request)), a read is abandoned.
//!
//! The log's reads take their cursor and return the batch without keeping a position
//! ([`AsyncFleet::read_events`]): the caller advances its cursor only once it holds the batch,
//! so a read cancelled at any point loses nothing (delivery stays at least once). What the
//! fleet keeps across reads is the listening connection of the doorbell, so a cursor-driven
//! loop does not open a connection per read.
//!
//! [`AsyncFleet::of`] shares the pool of a [`Fleet`] (a [`DepositFleet`](crate::DepositFleet)
//! member's, say); connecting one of its own ([`AsyncFleet::connect`]) blocks (it prepares the
//! schema): call it off the threads of any async runtime, once.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use depositkit_core::deposit::DepositAddresses;

use crate::commands::{self, CommandOutcome, FleetCommand};
use crate::db::Db;
use crate::error::{FleetError, Result};
use crate::fleet::Fleet;
use crate::log::{self, EventCursor, FleetEvent, Listener, POLL_EVERY};
use crate::owners::{self, OwnerOptions, owner_address};

/// The fleet's database as futures. Clones share one pool and one doorbell listener.
#[derive(Clone)]
pub struct AsyncFleet {
    db: Db,
    /// The log's doorbell connection, kept across reads (opened by the first read that waits).
    listener: Arc<tokio::sync::Mutex<Option<Listener>>>,
    /// Set by [`AsyncFleet::close`]: waiting reads end at once.
    closed: Arc<tokio::sync::watch::Sender<bool>>,
}

impl std::fmt::Debug for AsyncFleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncFleet").field("db", &self.db).finish_non_exhaustive()
    }
}

impl AsyncFleet {
    /// The same database as `fleet`, awaited: its pool (no connection of its own but the
    /// doorbell listener its first waiting read opens), e.g. a [`DepositFleet`]'s
    /// ([`DepositFleet::fleet`]). Does not block.
    ///
    /// [`DepositFleet`]: crate::DepositFleet
    /// [`DepositFleet::fleet`]: crate::DepositFleet::fleet
    pub fn of(fleet: &Fleet) -> AsyncFleet {
        AsyncFleet::on(fleet.db().clone())
    }

    fn on(db: Db) -> AsyncFleet {
        let closed = Arc::new(tokio::sync::watch::Sender::new(false));
        AsyncFleet { db, listener: Arc::default(), closed }
    }

    /// Connects to the fleet's PostgreSQL database (as [`Fleet::connect`](crate::Fleet::connect),
    /// with a pool of its own; [`AsyncFleet::of`] shares a [`Fleet`]'s instead). Blocks: call it
    /// off the threads of any async runtime.
    ///
    /// # Errors
    /// [`FleetError::DatabaseUrl`], [`FleetError::Unreachable`], [`FleetError::SchemaVersion`].
    pub fn connect(url: &str, max_connections: usize) -> Result<AsyncFleet> {
        Ok(AsyncFleet::on(Db::connect(url, "depositkit-fleet", max_connections)?))
    }

    /// Ends every waiting read at once (with the events it has: none) and closes the kept
    /// doorbell connection; later reads do not wait. For a member that leaves.
    pub fn close(&self) {
        self.closed.send_replace(true);
    }

    /// Runs `work` as a task of the fleet's runtime; the future returned is its outcome, and
    /// dropping it aborts the task.
    fn spawn<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T>> + Send + 'static,
    ) -> Spawned<T> {
        Spawned(self.db.handle().spawn(work))
    }

    /// [`Fleet::add_owner`](crate::Fleet::add_owner), awaited: the owner, lower-case.
    pub fn add_owner(&self, owner: &str, options: OwnerOptions) -> Spawned<String> {
        let (db, owner) = (self.db.clone(), owner_address(owner));
        self.spawn(async move {
            let owner = owner?;
            owners::add(&db, &owner, &options).await?;
            Ok(owner)
        })
    }

    /// [`Fleet::remove_owner`](crate::Fleet::remove_owner), awaited.
    pub fn remove_owner(&self, owner: &str) -> Spawned<()> {
        let (db, owner) = (self.db.clone(), owner_address(owner));
        self.spawn(async move { owners::remove(&db, &owner?).await })
    }

    /// [`Fleet::deposit_addresses`](crate::Fleet::deposit_addresses), awaited.
    pub fn deposit_addresses(&self, owner: &str) -> Spawned<Option<DepositAddresses>> {
        let (db, owner) = (self.db.clone(), owner_address(owner));
        self.spawn(async move { owners::deposit_addresses(&db, &owner?).await })
    }

    /// [`Fleet::owners`](crate::Fleet::owners), awaited.
    pub fn owners(&self) -> Spawned<Vec<String>> {
        let db = self.db.clone();
        self.spawn(async move { owners::list(&db).await })
    }

    /// [`Fleet::request`](crate::Fleet::request), awaited: the holder of `owner` runs
    /// `command`; waits up to `timeout` for how it ended.
    pub fn request(
        &self,
        owner: &str,
        command: FleetCommand,
        timeout: Duration,
    ) -> Spawned<CommandOutcome> {
        let (db, owner) = (self.db.clone(), owner_address(owner));
        self.spawn(async move {
            let id = commands::insert(&db, &owner?, &command).await?;
            commands::wait(&db, id, timeout).await
        })
    }

    /// The log's events after `cursor` (at most `limit`), waiting up to `wait` for some when
    /// there are none (woken by the doorbell, or reading again every [`POLL_EVERY`]). Empty
    /// when none came. The caller keeps the cursor: the last event's
    /// [`FleetEvent::cursor`] is the next one.
    ///
    /// # Errors
    /// [`FleetError::InvalidCursor`] for a cursor of another cluster; database errors.
    pub fn read_events(
        &self,
        cursor: EventCursor,
        limit: usize,
        wait: Duration,
    ) -> Spawned<Vec<FleetEvent>> {
        let (db, listener) = (self.db.clone(), Arc::clone(&self.listener));
        let (sender, mut closed) = (Arc::clone(&self.closed), self.closed.subscribe());
        self.spawn(async move {
            // Kept while reading, so that `changed()` only ends on a change.
            let _sender = sender;
            let deadline = Instant::now() + wait;
            loop {
                if *closed.borrow_and_update() {
                    listener.lock().await.take();
                    return Ok(Vec::new());
                }
                let batch = log::read(&db, &cursor, limit).await?;
                let left = deadline.saturating_duration_since(Instant::now());
                if !batch.is_empty() || left.is_zero() {
                    return Ok(batch);
                }
                // One waiting read at a time uses the kept connection; others poll.
                let Ok(mut kept) = listener.try_lock() else {
                    let _ = tokio::time::timeout(left.min(POLL_EVERY), closed.changed()).await;
                    continue;
                };
                if !kept.as_ref().is_some_and(Listener::alive) {
                    // Listening first, then reading again: nothing committed between is missed.
                    *kept = Listener::open(&db).await.ok();
                    if kept.is_some() {
                        continue;
                    }
                }
                let nap = left.min(POLL_EVERY);
                tokio::select! {
                    () = async {
                        match kept.as_ref() {
                            Some(listening) => listening.wait(nap).await,
                            None => tokio::time::sleep(nap).await,
                        }
                    } => {}
                    _ = closed.changed() => {}
                }
            }
        })
    }
}

/// A call of [`AsyncFleet`] running on the fleet's runtime: await it from any runtime; dropping
/// it aborts the call.
#[derive(Debug)]
pub struct Spawned<T>(tokio::task::JoinHandle<Result<T>>);

impl<T> Future for Spawned<T> {
    type Output = Result<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        Pin::new(&mut self.0).poll(cx).map(|joined| {
            joined.unwrap_or_else(|e| {
                Err(FleetError::Postgres(format!("the fleet's task did not finish: {e}")))
            })
        })
    }
}

impl<T> Drop for Spawned<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
