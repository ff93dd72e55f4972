//! [`Fleet`], the fleet's database (owners, members, stores), and [`DepositFleet`], a process of
//! the fleet running a `DepositClient` for each owner it holds.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use depositkit_core::deposit::store_contract::{EventRow, OwnerStore, START_RESULTS};
use depositkit_core::deposit::{DepositAddresses, DepositClient, DepositClientConfig};

use crate::commands::{self, CommandOutcome, FleetCommand};
use crate::db::Db;
use crate::error::{FleetError, Result};
use crate::lease::{HeldOwner, LeaseSettings, Member};
use crate::log::{EventCursor, EventReader};
use crate::owners::{self, OwnerOptions, owner_address};
use crate::store::PgOwnerStore;
use crate::store::prefetch::{self, Prefetched};

/// The fleet's database: owners, members and their stores. Clones share one pool.
#[derive(Debug, Clone)]
pub struct Fleet {
    db: Db,
}

impl Fleet {
    /// Connects to the fleet's PostgreSQL database (`postgres://…`), creating its tables in an
    /// empty database.
    ///
    /// # Errors
    /// [`FleetError::DatabaseUrl`], [`FleetError::Unreachable`], [`FleetError::SchemaVersion`].
    pub fn connect(url: &str, max_connections: usize) -> Result<Fleet> {
        Ok(Fleet { db: Db::connect(url, "depositkit-fleet", max_connections)? })
    }

    /// The fleet's database (its pool and runtime), for the crate's other faces to share
    /// ([`AsyncFleet::of`](crate::AsyncFleet::of)).
    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    /// Runs `work` on the fleet's runtime and waits for it (e.g. a [`Member`]'s steps).
    ///
    /// # Errors
    /// `work`'s.
    pub fn run<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T>> + Send + 'static,
    ) -> Result<T> {
        self.db.block_on(work)
    }

    /// Registers `owner` (an EVM address; stored lower-case) with its options.
    ///
    /// # Errors
    /// [`FleetError::InvalidOwner`]; [`FleetError::DuplicateOwner`] when already registered.
    pub fn add_owner(&self, owner: &str, options: OwnerOptions) -> Result<String> {
        let owner = owner_address(owner)?;
        let (db, name) = (self.db.clone(), owner.clone());
        self.run(async move { owners::add(&db, &name, &options).await })?;
        Ok(owner)
    }

    /// Removes `owner`: its holder stops its client within a tick; its state stays.
    ///
    /// # Errors
    /// [`FleetError::UnknownOwner`].
    pub fn remove_owner(&self, owner: &str) -> Result<()> {
        let (db, owner) = (self.db.clone(), owner_address(owner)?);
        self.run(async move { owners::remove(&db, &owner).await })
    }

    /// Replaces the options of `owner`; its client is restarted with them (under a new fence).
    ///
    /// # Errors
    /// [`FleetError::UnknownOwner`].
    pub fn set_owner_options(&self, owner: &str, options: OwnerOptions) -> Result<()> {
        let (db, owner) = (self.db.clone(), owner_address(owner)?);
        self.run(async move { owners::set_options(&db, &owner, &options).await })
    }

    /// The options of `owner`.
    ///
    /// # Errors
    /// [`FleetError::UnknownOwner`].
    pub fn owner_options(&self, owner: &str) -> Result<OwnerOptions> {
        let (db, owner) = (self.db.clone(), owner_address(owner)?);
        self.run(async move { owners::options(&db, &owner).await })
    }

    /// Every registered owner, sorted.
    ///
    /// # Errors
    /// When the database cannot be read.
    pub fn owners(&self) -> Result<Vec<String>> {
        let db = self.db.clone();
        self.run(async move { owners::list(&db).await })
    }

    /// The member holding `owner` now (its node id), and the owner's fencing token.
    ///
    /// # Errors
    /// [`FleetError::UnknownOwner`].
    pub fn holder(&self, owner: &str) -> Result<(Option<String>, i64)> {
        let (db, owner) = (self.db.clone(), owner_address(owner)?);
        self.run(async move { owners::holder(&db, &owner).await })
    }

    /// The deposit addresses of `owner`'s account, read from the database by any process
    /// (kept by the owner's holder when its client started): `None` until a client of the owner
    /// has started once (within a tick of its registration while members run).
    ///
    /// # Errors
    /// [`FleetError::InvalidOwner`], [`FleetError::UnknownOwner`].
    pub fn deposit_addresses(&self, owner: &str) -> Result<Option<DepositAddresses>> {
        let (db, owner) = (self.db.clone(), owner_address(owner)?);
        self.run(async move { owners::deposit_addresses(&db, &owner).await })
    }

    /// The event log of `owner` after event id `after` (at most `limit`), as stored: readable
    /// from any process, whoever holds the owner.
    ///
    /// # Errors
    /// When the database cannot be read.
    pub fn owner_events(&self, owner: &str, after: u64, limit: usize) -> Result<Vec<EventRow>> {
        let owner = owner_address(owner)?;
        // Reads are not fenced: a store that holds no lease reads like any other.
        PgOwnerStore::new(self.db.clone(), &owner, "", -1)
            .events_after(after, limit)
            .map_err(|e| FleetError::Postgres(e.message().to_owned()))
    }

    /// Asks the holder of `owner` to run `command`, and waits up to `timeout` for how it
    /// ended. The command stays queued after a timeout (its holder may still run it).
    ///
    /// # Errors
    /// [`FleetError::UnknownOwner`]; [`FleetError::CommandTimeout`].
    pub fn request(
        &self,
        owner: &str,
        command: FleetCommand,
        timeout: Duration,
    ) -> Result<CommandOutcome> {
        let (db, owner) = (self.db.clone(), owner_address(owner)?);
        self.run(async move {
            let id = commands::insert(&db, &owner, &command).await?;
            commands::wait(&db, id, timeout).await
        })
    }

    /// A reader of the one event log across owners, from `cursor` ([`EventCursor::START`]
    /// for the beginning, or a saved [`EventReader::cursor`]).
    pub fn event_reader(&self, cursor: EventCursor) -> EventReader {
        EventReader::new(self.db.clone(), cursor)
    }

    /// Joins the fleet as a member named `name`.
    ///
    /// # Errors
    /// When the database cannot be written.
    pub fn join(&self, name: &str, settings: LeaseSettings) -> Result<Member> {
        let (db, name) = (self.db.clone(), name.to_owned());
        self.run(async move { Member::join(db, &name, settings).await })
    }

    /// The store of `held` for `member`, its writes fenced by `held.fence`.
    pub fn store(&self, member: &Member, held: &HeldOwner) -> PgOwnerStore {
        PgOwnerStore::new(self.db.clone(), &held.owner, member.node_id(), held.fence)
    }

    /// The stores of `held` for `member`, as [`store`](Self::store) gives them, with what
    /// their clients read first (the last event id, the handed-over start, the rows) read for
    /// all of them at once (one trip per 500 owners): a takeover's.
    ///
    /// # Errors
    /// When the database cannot be read.
    pub fn taken_over_stores(
        &self,
        member: &Member,
        held: &[HeldOwner],
    ) -> Result<Vec<PgOwnerStore>> {
        let mut stores = Vec::with_capacity(held.len());
        for batch in held.chunks(prefetch::PREFETCH_BATCH) {
            let (db, owners) = (self.db.clone(), batch.iter().map(|h| h.owner.clone()).collect());
            let mut read = self.run(async move { read_owners(&db, owners).await })?;
            stores.extend(batch.iter().map(|held| {
                let store = self.store(member, held);
                match read.remove(&held.owner) {
                    Some(read) => store.with_prefetched(read),
                    None => store,
                }
            }));
        }
        Ok(stores)
    }
}

/// How a [`DepositFleet`] member runs.
#[derive(Debug, Clone)]
pub struct FleetOptions {
    /// The member's name (operators see it in `dk_nodes`).
    pub name: String,
    /// Lease timing and balance limits.
    pub lease: LeaseSettings,
    /// Pooled connections. Default 8.
    pub max_connections: usize,
}

impl Default for FleetOptions {
    fn default() -> Self {
        FleetOptions {
            name: "depositkit".to_owned(),
            lease: LeaseSettings::default(),
            max_connections: 8,
        }
    }
}

struct Running {
    client: Arc<DepositClient>,
    fence: i64,
    lost: Arc<AtomicBool>,
}

struct Shared {
    fleet: Fleet,
    template: DepositClientConfig,
    member: Mutex<Member>,
    clients: Mutex<HashMap<String, Running>>,
    stopped: AtomicBool,
    /// Set by the renewer when the lease could not be renewed in time: the main loop stops
    /// every client and joins again.
    lease_lost: AtomicBool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A process of the fleet: holds a balanced share of the registered owners and runs a
/// `DepositClient` for each (its state in PostgreSQL, fenced by the lease), takes over the
/// owners of members that died, and stops the clients of owners it lost.
pub struct DepositFleet {
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
    renewer: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for DepositFleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DepositFleet").field("node_id", &self.node_id()).finish_non_exhaustive()
    }
}

impl DepositFleet {
    /// Joins the fleet at `url`. Each owner's client is built from `template` (services URL,
    /// polling, …) with the owner's address and, when the owner has one, its destination.
    ///
    /// # Errors
    /// As [`Fleet::connect`] and [`Fleet::join`].
    pub fn join(url: &str, template: DepositClientConfig, options: FleetOptions) -> Result<Self> {
        let fleet = Fleet::connect(url, options.max_connections)?;
        let member = fleet.join(&options.name, options.lease)?;
        let shared = Arc::new(Shared {
            fleet: fleet.clone(),
            template,
            member: Mutex::new(member),
            clients: Mutex::new(HashMap::new()),
            stopped: AtomicBool::new(false),
            lease_lost: AtomicBool::new(false),
        });
        let task = fleet.db.handle().spawn(run(Arc::clone(&shared)));
        let renewer = fleet.db.handle().spawn(renew(Arc::clone(&shared)));
        Ok(DepositFleet { shared, task, renewer })
    }

    /// The fleet's database.
    pub fn fleet(&self) -> &Fleet {
        &self.shared.fleet
    }

    /// This member's node id.
    pub fn node_id(&self) -> String {
        lock(&self.shared.member).node_id().to_owned()
    }

    /// The owners whose clients run here now, sorted.
    pub fn running_owners(&self) -> Vec<String> {
        let mut owners: Vec<String> = lock(&self.shared.clients).keys().cloned().collect();
        owners.sort();
        owners
    }

    /// How many owners' clients run here now ([`running_owners`](Self::running_owners)'
    /// length, without listing them).
    pub fn running_count(&self) -> usize {
        lock(&self.shared.clients).len()
    }

    /// The client of `owner`, when it runs here.
    pub fn client(&self, owner: &str) -> Option<Arc<DepositClient>> {
        let owner = owner_address(owner).ok()?;
        lock(&self.shared.clients).get(&owner).map(|r| Arc::clone(&r.client))
    }

    /// Leaves gracefully: stops every client, then gives every owner back at once (others take
    /// them on their next tick).
    ///
    /// # Errors
    /// When the database cannot be written (the lease then runs out by itself).
    pub fn leave(self) -> Result<()> {
        self.halt_clients();
        let member = lock(&self.shared.member).clone();
        self.shared.fleet.run(async move { member.leave().await })
    }

    /// Stops the member's work and clients without giving anything back, as a killed process
    /// would: its owners pass to others once its lease runs out.
    pub fn halt(self) {
        self.halt_clients();
    }

    fn halt_clients(&self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        self.task.abort();
        self.renewer.abort();
        let running: Vec<Running> = lock(&self.shared.clients).drain().map(|(_, r)| r).collect();
        for running in running {
            let _ = running.client.close();
        }
    }
}

impl Drop for DepositFleet {
    fn drop(&mut self) {
        if !self.shared.stopped.load(Ordering::SeqCst) {
            self.halt_clients();
        }
    }
}

/// The renewer: pushes the lease forward every `renew_every`, on a task of its own so that
/// clients being started or stopped never delay it.
async fn renew(shared: Arc<Shared>) {
    let every = lock(&shared.member).settings().renew_every;
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !shared.stopped.load(Ordering::SeqCst) {
        ticker.tick().await;
        if shared.lease_lost.load(Ordering::SeqCst) {
            continue;
        }
        let member = lock(&shared.member).clone();
        match member.renew().await {
            Ok(()) => {}
            Err(FleetError::LeaseLost(_)) => shared.lease_lost.store(true, Ordering::SeqCst),
            Err(error) => tracing::warn!(%error, "renewing the fleet lease failed"),
        }
    }
}

/// The member's loop: balance, reconcile the running clients, every `renew_every`;
/// run the commands for its owners whenever the commands' doorbell rings, and at each tick.
async fn run(shared: Arc<Shared>) {
    let every = lock(&shared.member).settings().renew_every;
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let rung = Arc::new(tokio::sync::Notify::new());
    let mut listening = None;
    while !shared.stopped.load(Ordering::SeqCst) {
        if listening
            .as_ref()
            .is_none_or(|(_, driver): &(_, tokio::task::JoinHandle<()>)| driver.is_finished())
        {
            listening = shared.fleet.db.listen(commands::CHANNEL, Arc::clone(&rung)).await.ok();
        }
        let ticked = tokio::select! {
            _ = ticker.tick() => true,
            () = rung.notified() => false,
        };
        if ticked && let Err(error) = tick(&shared).await {
            tracing::warn!(%error, "fleet tick failed");
        }
        if let Err(error) = run_commands(&shared).await {
            tracing::warn!(%error, "fleet commands failed");
        }
    }
}

/// Claims and runs the pending commands of the owners whose clients run here.
async fn run_commands(shared: &Arc<Shared>) -> Result<()> {
    let node = lock(&shared.member).node_id().to_owned();
    let running: Vec<String> = lock(&shared.clients).keys().cloned().collect();
    if running.is_empty() {
        return Ok(());
    }
    for claimed in commands::claim(&shared.fleet.db, &node, &running).await? {
        let client = lock(&shared.clients).get(&claimed.owner).map(|r| Arc::clone(&r.client));
        let mut destination = None;
        let outcome = match (claimed.command, client) {
            (Err(why), _) => Err(format!("the command cannot be read: {why}")),
            (Ok(_), None) => Err(format!("owner {} stopped running here", claimed.owner)),
            (Ok(command), Some(client)) => {
                if let FleetCommand::SetDestination(to) = &command {
                    destination = Some(to.clone());
                }
                let again = claimed.again;
                tokio::task::spawn_blocking(move || {
                    if again { command.execute_again(&client) } else { command.execute(&client) }
                })
                .await
                .unwrap_or_else(|_| Err("the command panicked".to_owned()))
            }
        };
        let db = &shared.fleet.db;
        commands::finish(db, &node, claimed.id, &outcome, destination.as_ref()).await?;
        crate::metrics::command_finished(outcome.is_ok());
    }
    Ok(())
}

async fn tick(shared: &Arc<Shared>) -> Result<()> {
    let member = lock(&shared.member).clone();
    if shared.lease_lost.load(Ordering::SeqCst) {
        tracing::warn!(node = member.node_id(), "the fleet lease was lost: stopping every client");
        stop_clients(shared, |_| true).await;
        let mut renewed = member.clone();
        renewed.rejoin().await?;
        *lock(&shared.member) = renewed;
        shared.lease_lost.store(false, Ordering::SeqCst);
        return Ok(());
    }
    let balance = member.balance().await?;
    for surplus in balance.surplus {
        let owner = surplus.owner.clone();
        stop_clients(shared, move |o| o == owner).await;
        member.release(&surplus.owner, surplus.fence).await?;
    }
    let held = member.held().await?;
    // By owner: a member holds tens of thousands, and every tick looks each one up.
    let fences: HashMap<&str, i64> = held.iter().map(|h| (h.owner.as_str(), h.fence)).collect();
    // A client of an owner no longer held here, whose write was refused, or that runs under
    // an older fence, stops.
    let stale: std::collections::HashSet<String> = lock(&shared.clients)
        .iter()
        .filter(|(owner, r)| {
            r.lost.load(Ordering::SeqCst)
                || fences.get(owner.as_str()).is_none_or(|fence| *fence != r.fence)
        })
        .map(|(owner, _)| owner.clone())
        .collect();
    if !stale.is_empty() {
        stop_clients(shared, |owner| stale.contains(owner)).await;
    }
    let starting: Vec<HeldOwner> = {
        let clients = lock(&shared.clients);
        held.into_iter().filter(|h| !clients.contains_key(&h.owner)).collect()
    };
    // Many at a time: taking over thousands of owners is bound by each start's round trips
    // (session, account, store), not by the CPU, when they run one after another. Their
    // first reads are made for a batch of owners at once.
    let mut starts = tokio::task::JoinSet::new();
    let mut starting = starting;
    while !starting.is_empty() {
        let batch: Vec<HeldOwner> =
            starting.drain(..starting.len().min(prefetch::PREFETCH_BATCH)).collect();
        let mut read = read_ahead(shared, &batch).await;
        for owner in batch {
            while starts.len() >= STARTS_AT_ONCE {
                starts.join_next().await;
            }
            let (shared, member) = (Arc::clone(shared), member.clone());
            let read = read.remove(&owner.owner);
            starts.spawn(async move { start_client(&shared, &member, owner, read).await });
        }
    }
    while starts.join_next().await.is_some() {}
    Ok(())
}

/// The first reads of `batch`'s clients, in one trip; none when it fails (each client then
/// reads its own).
async fn read_ahead(shared: &Shared, batch: &[HeldOwner]) -> HashMap<String, Prefetched> {
    let owners: Vec<String> = batch.iter().map(|held| held.owner.clone()).collect();
    read_owners(&shared.fleet.db, owners).await.unwrap_or_else(|error| {
        tracing::warn!(%error, "reading the owners taken over failed: each client reads its own");
        HashMap::new()
    })
}

/// What the clients of `owners` read first, as their start reads it.
async fn read_owners(db: &Db, owners: Vec<String>) -> Result<HashMap<String, Prefetched>> {
    let results = i64::try_from(START_RESULTS).unwrap_or(i64::MAX);
    prefetch::read(db, &owners, results).await
}

/// How many owners' clients a member starts at once.
const STARTS_AT_ONCE: usize = 16;

async fn stop_clients(shared: &Arc<Shared>, which: impl Fn(&str) -> bool) {
    let stopping: Vec<Running> = {
        let mut clients = lock(&shared.clients);
        let owners: Vec<String> = clients.keys().filter(|o| which(o)).cloned().collect();
        owners.iter().filter_map(|o| clients.remove(o)).collect()
    };
    for running in stopping {
        let _ = tokio::task::spawn_blocking(move || running.client.close()).await;
    }
}

async fn start_client(
    shared: &Arc<Shared>,
    member: &Member,
    held: HeldOwner,
    read: Option<Prefetched>,
) {
    let mut store = shared.fleet.store(member, &held);
    if let Some(read) = read {
        store = store.with_prefetched(read);
    }
    let lost = store.lost_flag();
    // The start's status changes go to the log together, when it ends.
    let start_events = store.hold_start_events();
    let mut config = shared.template.clone();
    config.owner_address.clone_from(&held.owner);
    if let Some(destination) = &held.options.destination {
        config.destination = destination.clone();
    }
    let owner = held.owner.clone();
    let started = tokio::task::spawn_blocking(move || -> Result<DepositClient> {
        let start = || -> Result<DepositClient> {
            let client = DepositClient::with_store(config, Box::new(store))
                .map_err(|e| FleetError::Client { owner: owner.clone(), message: e.to_string() })?;
            let failed = |e: depositkit_core::Error| FleetError::Client {
                owner: owner.clone(),
                message: e.to_string(),
            };
            client.initialize().map_err(failed)?;
            client.start_watching().map_err(failed)?;
            Ok(client)
        };
        let started = start();
        start_events.finish();
        started
    })
    .await;
    match started {
        Ok(Ok(client)) => {
            let running = Running { client: Arc::new(client), fence: held.fence, lost };
            lock(&shared.clients).insert(held.owner, running);
        }
        Ok(Err(error)) => tracing::warn!(%error, "a fleet owner's client did not start"),
        Err(error) => tracing::warn!(%error, "a fleet owner's client start panicked"),
    }
}
