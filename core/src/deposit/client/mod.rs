//! [`DepositClient`]: the facade over the watcher, the sweeper and the events — blocking
//! methods, and their `…_async` twins (`async_api.rs`, which both forms share).

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tracing::Instrument;

use super::config::{
    DepositClientConfig, Destination, DestinationConfig, NotificationsConfig, RefundConfig,
    ResolvedBackend, ResolvedConfig, resolve_destination,
};
use super::engine::{Inner, Job, State};
use super::events::{
    DepositEvent, DepositLifecycleEvent, EventCallback, NotificationsCallback, RecordedEvent,
    RecordedEventCallback, SubscriptionId,
};
use super::history::{DEFAULT_PAGE_SIZE, HistoryCaches, MAX_PAGE_SIZE, TokenTransactionFilter};
use super::hub::{Dispatcher, EventHub};
use super::machine::Command;
use super::model::{
    DepositAddresses, DetectedDeposit, RecoveryResult, RefundEligibility, RefundReason,
    RefundResult, SweepResult, now_ms,
};
use super::notifications::{NotificationRecord, NotificationStore};
use super::poller::BalancePoller;
use super::port::{ClientPort, not_initialized};
use super::records::DepositRecord;
use super::status::{ClientCall, ClientStatus, Lifecycle};
use super::store::DepositStore;
use super::store::contract::OwnerStore;
use super::watcher::{Detector, Thresholds};
use crate::chains::Chain;
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::funding::Funding;
use crate::onramp::Onramp;
use crate::runtime::Runtime;
use crate::services::particle::{ParticleBackend, ParticleClient, ParticleConfig};
use crate::services::{
    AccountBackend, AccountClient, CallError, JwtClient, ProtocolBackend, SessionManager,
    SignerClient, TokenTransactionsResponse, TransactionsResponse, UaTransaction, with_session,
};

mod async_api;
mod call;
mod funding;
mod history;
mod history_reads;
mod observe;
mod onramp;
mod refunds;

/// How long `close()` (and drop) waits for the event dispatcher to deliver what is queued.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
const DROP_TIMEOUT: Duration = Duration::from_secs(2);
/// The deposit client (spec §4): deposit addresses, a watcher, a sweeper that delivers each
/// deposit to the destination, and lifecycle events.
///
/// Every method is thread-safe; the work runs on depositkit's shared runtime
/// ([`crate::runtime`]). Blocking methods wait at most `call_timeout_ms`, on the calling
/// thread (never one of the runtime's: called there they fail with [`ErrorKind::Internal`]).
/// Each call that does I/O or waits has an async twin of the same name with `_async`
/// ([`initialize_async`](DepositClient::initialize_async),
/// [`sweep_async`](DepositClient::sweep_async),
/// [`recover_funds_async`](DepositClient::recover_funds_async),
/// [`get_transactions_async`](DepositClient::get_transactions_async), …): it checks and admits
/// the call at once and returns a [`Task`](crate::runtime::Task), a future of the same answer
/// (the same errors, `call_timeout_ms` included) that any executor may await without a
/// thread waiting for it. Many clients in one process share that runtime, one pool of
/// event-delivery threads ([`super::dispatch`]) and one batched balance poll per service
/// ([`super::poller`]).
///
/// ```no_run
/// use std::time::Duration;
/// use depositkit_core::deposit::{DepositClient, DepositClientConfig, DestinationConfig};
///
/// let config = DepositClientConfig::new(
///     "0x52908400098527886E0F7030069857D2E4169EE7",
///     DestinationConfig::chain(42161),
/// )
/// .with_services_url("http://127.0.0.1:7420");
/// let client = DepositClient::new(config)?;
/// let addresses = client.initialize()?;
/// println!("send funds to {} or {}", addresses.evm, addresses.solana);
/// client.start_watching()?;
/// while let Some(event) = client.next_event(Duration::from_secs(30)) {
///     println!("{}", event.to_json());
/// }
/// client.close()?;
/// # Ok::<(), depositkit_core::Error>(())
/// ```
///
/// A callback that keeps the client alive (an `Arc` of it) makes a cycle that `close()`
/// breaks: closing drops every callback.
pub struct DepositClient {
    pub(crate) inner: Arc<Inner>,
    dispatcher: Mutex<Option<Dispatcher>>,
}

impl std::fmt::Debug for DepositClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the onramp partner key nor the balance API key.
        f.debug_struct("DepositClient")
            .field("owner", &self.inner.config.owner)
            .field("status", &self.status())
            .field("funding.enabled", &self.inner.config.funding.enabled)
            .field("onramp.enabled", &self.inner.config.onramp.enabled)
            .finish_non_exhaustive()
    }
}

// These calls have no error to return, so the lifecycle table must let a closed client answer
// them (every other public method calls `Inner::guard` with its own `ClientCall`).
const _: () = {
    use ClientCall::*;
    let infallible = [
        Close,
        IsClosed,
        Status,
        OwnerAddress,
        StorePath,
        LastEventId,
        NextEvent,
        NextRecordedEvent,
        DroppedEvents,
        CallbackPanics,
        Unsubscribe,
        ClearFundingWallet,
    ];
    let mut i = 0;
    while i < infallible.len() {
        assert!(infallible[i].answers_when_closed());
        i += 1;
    }
};

impl DepositClient {
    /// Validates `config` and builds a client (no network yet; see [`initialize`]).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] naming the bad option and value;
    /// [`ErrorKind::Internal`] when threads cannot be started.
    ///
    /// [`initialize`]: DepositClient::initialize
    pub fn new(config: DepositClientConfig) -> Result<DepositClient> {
        let resolved = config.resolve()?;
        let store = DepositStore::open(
            resolved.store_path.as_deref(),
            &resolved.owner,
            resolved.event_queue_capacity,
        )?;
        DepositClient::build(config, resolved, store)
    }

    /// Like [`new`](DepositClient::new), with the client's durable state in `store` (any store of
    /// the store contract, e.g. depositkit-fleet's fenced PostgreSQL store) instead of a
    /// `storePath` file.
    ///
    /// # Errors
    /// As [`new`](DepositClient::new); [`ErrorKind::Configuration`] when `config` also sets
    /// `storePath` or `store` keeps another owner; the store's error when it cannot be read.
    pub fn with_store(
        config: DepositClientConfig,
        store: Box<dyn OwnerStore>,
    ) -> Result<DepositClient> {
        let resolved = config.resolve()?;
        if resolved.store_path.is_some() {
            return Err(Error::configuration(
                "storePath is set, but the client was given a store: set one or the other",
            ));
        }
        if store.owner() != resolved.owner {
            return Err(Error::configuration(format!(
                "the store keeps owner {}, but ownerAddress is {}",
                store.owner(),
                resolved.owner
            )));
        }
        DepositClient::build(config, resolved, DepositStore::durable(store)?)
    }

    fn build(
        config: DepositClientConfig,
        resolved: ResolvedConfig,
        store: DepositStore,
    ) -> Result<DepositClient> {
        let runtime = Runtime::shared()?;
        let store = Arc::new(store);
        let notes = resolved.notifications.clone().map(NotificationStore::new);
        let (hub, dispatcher) = EventHub::start_with(resolved.event_queue_capacity, notes, store)
            .map_err(|e| {
            Error::new(ErrorKind::Internal, format!("cannot start the event thread: {e}"))
                .with_source(e)
        })?;
        if let Some(callback) = config.on_deposit_event.clone() {
            hub.subscribe(Arc::new(move |recorded: &RecordedEvent| {
                if let DepositEvent::Lifecycle(lifecycle) = &recorded.event {
                    callback(lifecycle);
                }
            }));
        }
        let jwt = Arc::new(JwtClient::new(&resolved.urls.jwt, &resolved.http));
        let session = Arc::new(SessionManager::new(jwt, &resolved.owner));
        let signer = Arc::new(SignerClient::new(&resolved.urls.signer, &resolved.http));
        let account = Arc::new(AccountClient::new(
            &resolved.urls.account,
            &resolved.http,
            resolved.ua_project_id.as_deref(),
        ));
        let (backend, poller): (Arc<dyn AccountBackend>, _) = match &resolved.backend {
            ResolvedBackend::Devnet => (
                Arc::new(ProtocolBackend::new(
                    Arc::clone(&session),
                    Arc::clone(&signer),
                    Arc::clone(&account),
                )),
                Some(BalancePoller::shared(
                    &resolved.urls.account,
                    &resolved.http,
                    resolved.ua_project_id.as_deref(),
                )),
            ),
            ResolvedBackend::Particle { client, signers } => {
                // The client's HTTP options apply to Particle's service too.
                let client = ParticleConfig {
                    timeout: resolved.http.timeout,
                    retry: resolved.http.retry,
                    ..(**client).clone()
                };
                let client = ParticleClient::new(client)?;
                (Arc::new(ParticleBackend::new(client, Arc::clone(signers))), None)
            }
        };
        let thresholds = Thresholds {
            min_value_usd: resolved.min_value_usd,
            supported_tokens: resolved.supported_tokens.clone(),
            supported_chains: resolved.supported_chains.clone(),
        };
        let funding = Arc::new(Funding::new(
            resolved.funding.clone(),
            resolved.min_value_usd,
            resolved.http.clone(),
        ));
        let onramp = Onramp::new(resolved.onramp.clone());
        let state = State::new(resolved.destination.clone());
        let inner = Arc::new(Inner {
            runtime,
            config: resolved,
            thresholds,
            session,
            signer,
            account,
            backend,
            poller,
            hub,
            state: Mutex::new(state),
            detector: tokio::sync::Mutex::new(Detector::default()),
            history: Mutex::new(HistoryCaches::default()),
            funding,
            onramp,
            closed: AtomicBool::new(false),
            health: crate::observe::HealthTracker::default(),
            chains: super::engine::ChainWatch::default(),
        });
        let source: Arc<dyn crate::observe::BacklogSource> = inner.clone();
        crate::observe::register_source(Arc::downgrade(&source));
        if inner.hub.has_notifications() {
            let hub = Arc::clone(&inner.hub);
            let timer = inner.runtime.spawn(observe::notifications_timer(hub));
            inner.state().notes_timer = Some(timer);
        }
        Ok(DepositClient { inner, dispatcher: Mutex::new(Some(dispatcher)) })
    }

    /// Opens the intermediary session (JWT service), checks the signer's wallet against
    /// `intermediary_address`, and initializes the account: its deposit addresses.
    ///
    /// A failed initialization leaves the status `error` and may be retried.
    ///
    /// # Errors
    /// [`ErrorKind::Jwt`] when the JWT service is unreachable or its token fails verification;
    /// [`ErrorKind::Authentication`] when credentials or the session are refused;
    /// [`ErrorKind::Configuration`] when `intermediary_address` is not the signer's wallet, or
    /// the client is already initialized; [`ErrorKind::UniversalAccount`] when the account
    /// cannot be initialized; [`ErrorKind::Timeout`] after `call_timeout_ms`.
    pub fn initialize(&self) -> Result<DepositAddresses> {
        self.wait_for(self.admit_initialize())
    }

    /// The deposit addresses.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] before [`initialize`](DepositClient::initialize).
    pub fn deposit_addresses(&self) -> Result<DepositAddresses> {
        self.inner.guard(ClientCall::DepositAddresses)?;
        self.inner.deposit_addresses()
    }

    /// The universal account's id, once initialized.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn account_id(&self) -> Result<Option<String>> {
        self.inner.guard(ClientCall::AccountId)?;
        Ok(self.inner.account_id().ok())
    }

    /// The intermediary wallet (the signer's), once initialized.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn intermediary_address(&self) -> Result<Option<String>> {
        self.inner.guard(ClientCall::IntermediaryAddress)?;
        Ok(self.inner.state().wallet.clone())
    }

    /// The owner address (lower-case). Answers after `close()` too.
    pub fn owner_address(&self) -> &str {
        &self.inner.config.owner
    }

    /// Changes where deposits go; sweeps that start from now on (queued ones and retries
    /// included) use it. A missing address means the owner address, a missing token USDC.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] as for the construction option; the old destination stays.
    pub fn set_destination(&self, destination: DestinationConfig) -> Result<Destination> {
        self.inner.guard(ClientCall::SetDestination)?;
        let resolved = resolve_destination(&destination, &self.inner.config.owner)?;
        self.inner.state().destination = resolved.clone();
        Ok(resolved)
    }

    /// The current destination.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn get_destination(&self) -> Result<Destination> {
        self.inner.guard(ClientCall::GetDestination)?;
        Ok(self.inner.state().destination.clone())
    }

    /// Whether the fiat onramp serves the destination chain (spec §4: not X Layer).
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn is_onramp_supported(&self) -> Result<bool> {
        self.inner.guard(ClientCall::IsOnrampSupported)?;
        let chain_id = self.inner.state().destination.chain_id;
        Ok(Chain::from_id(chain_id).is_some_and(Chain::is_onramp_chain))
    }

    /// The status (`idle` once closed; answers after `close()` too).
    pub fn status(&self) -> ClientStatus {
        self.inner.state().status.current()
    }

    /// The client's health: the last success and failure of each service it called, the last
    /// successful poll, the backlog (deposits not yet credited or refunded), the deposits in
    /// the table for longer than `stuck_after_ms` (default
    /// [`DEFAULT_STUCK_AFTER_MS`](crate::observe::DEFAULT_STUCK_AFTER_MS), 15 min), whether
    /// the session is valid. Answers after `close()` too (`ready` false).
    pub fn health(&self, stuck_after_ms: Option<u64>) -> crate::observe::Health {
        debug_assert!(ClientCall::Health.answers_when_closed());
        self.inner.health(stuck_after_ms.unwrap_or(crate::observe::DEFAULT_STUCK_AFTER_MS))
    }

    /// Whether the watcher runs.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn is_watching(&self) -> Result<bool> {
        self.inner.guard(ClientCall::IsWatching)?;
        Ok(self.inner.state().status.watching())
    }

    /// Starts the watcher: one poll now, then one every `polling_interval_ms`, never
    /// overlapping. Does nothing when it already runs.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] before [`initialize`](DepositClient::initialize).
    pub fn start_watching(&self) -> Result<()> {
        self.inner.guard(ClientCall::StartWatching)?;
        let change = {
            let mut state = self.inner.state();
            if state.status.lifecycle() != Lifecycle::Ready {
                return Err(Error::configuration("Client must be initialized before watching"));
            }
            if state.watcher.is_some() {
                return Ok(());
            }
            let weak = Arc::downgrade(&self.inner);
            let interval = self.inner.config.polling_interval;
            state.watcher = Some(
                self.inner
                    .runtime
                    .spawn(Inner::watch_loop(weak, interval).instrument(self.inner.span())),
            );
            state.status.set_watching(true)
        };
        self.inner.emit_status(change);
        Ok(())
    }

    /// Stops the watcher (a poll under way is abandoned). Sweeps under way go on.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed (`close()` stopped it).
    pub fn stop_watching(&self) -> Result<()> {
        self.inner.guard(ClientCall::StopWatching)?;
        let change = {
            let mut state = self.inner.state();
            match state.watcher.take() {
                Some(task) => {
                    task.abort();
                    state.status.set_watching(false)
                }
                None => None,
            }
        };
        self.inner.emit_status(change);
        Ok(())
    }

    /// Runs one poll now (waiting for a poll under way to finish first) and returns the
    /// lifecycle events it produced (`detected`, `below_threshold`), which are already queued
    /// and handed to the callbacks when this returns. Detected deposits are queued for their
    /// sweep when auto-sweep is on.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::UniversalAccount`] (or
    /// [`ErrorKind::Jwt`]) when the balances cannot be read; [`ErrorKind::Timeout`].
    pub fn poll_now(&self) -> Result<Vec<DepositLifecycleEvent>> {
        self.wait_for(self.admit_poll())
    }

    /// Detected deposits that are not delivered yet (queued, being swept, failed, or with an
    /// unknown outcome), oldest first.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn pending_deposits(&self) -> Result<Vec<DetectedDeposit>> {
        self.inner.guard(ClientCall::PendingDeposits)?;
        let state = self.inner.state();
        let mut records: Vec<&DepositRecord> = state.deposits.values().collect();
        records.sort_by_key(|r| r.seq);
        Ok(records.iter().map(|r| r.deposit.clone()).collect())
    }

    /// Sweeps one pending deposit now (one attempt, through the client's serial sweep queue)
    /// and returns the result; lifecycle events follow as for automatic sweeps. A deposit
    /// whose last send has an unknown outcome is first resolved (its quote is sent again,
    /// which the service treats idempotently), never quoted anew.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] for an unknown (or already delivered) id;
    /// [`ErrorKind::Sweep`] when the deposit is already being swept;
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::Timeout`].
    pub fn sweep(&self, deposit_id: &str) -> Result<SweepResult> {
        self.wait_for(self.queue_sweep(deposit_id))
    }

    /// The result of the last sweep of `deposit_id` (automatic or manual), if one finished.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn sweep_result(&self, deposit_id: &str) -> Result<Option<SweepResult>> {
        self.inner.guard(ClientCall::SweepResult)?;
        Ok(self.inner.state().results.get(deposit_id).cloned())
    }

    /// Whether [`close`](DepositClient::close) was called.
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Stops the watcher and the sweeper (a sweep under way is abandoned: its money is either
    /// delivered or still in the account, and a new client finds it), lets the delivery lane
    /// deliver what is queued for at most 5 s, and drops every callback. Idempotent; the status
    /// becomes `idle`.
    ///
    /// Afterwards every call fails with [`ErrorKind::DepositSdk`] "the client is closed",
    /// except what stays true after closing: `close`, `is_closed`, `status`, `owner_address`,
    /// `store_path`, the event log (`events_since`, `deposit_history`, `last_event_id`), the
    /// pull queue (`next_event`, `next_recorded_event`: the events left in it can still be
    /// taken) and its counters (`dropped_events`, `callback_panics`), and the releases closing
    /// already did (`unsubscribe`, `clear_funding_wallet`).
    pub fn close(&self) -> Result<()> {
        self.shutdown(CLOSE_TIMEOUT);
        Ok(())
    }

    fn shutdown(&self, timeout: Duration) {
        if self.inner.close() {
            let change = {
                let mut state = self.inner.state();
                let tasks = [state.watcher.take(), state.executor.take(), state.notes_timer.take()];
                for task in tasks.into_iter().flatten() {
                    task.abort();
                }
                for timer in state.timers.drain(..) {
                    timer.abort();
                }
                state.jobs = None;
                self.inner.stop_chain_watch();
                state.status.set_watching(false);
                state.status.set_lifecycle(Lifecycle::Closed)
            };
            self.inner.emit_status(change);
        }
        let dispatcher = self.dispatcher.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut dispatcher) = dispatcher {
            dispatcher.stop(&self.inner.hub, timeout);
        }
        self.inner.hub.clear_subscribers();
        // Another client of this owner may open the store now.
        self.inner.hub.store().release();
        // Host providers may hold the client: dropping them breaks the cycle, as for callbacks.
        self.inner.funding.clear_wallets();
        self.inner.funding.set_balance_provider(None);
    }
}

impl Drop for DepositClient {
    fn drop(&mut self) {
        self.shutdown(DROP_TIMEOUT);
    }
}
