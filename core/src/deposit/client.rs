//! [`DepositClient`]: the synchronous facade over the watcher, the sweeper and the events.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::config::{
    DepositClientConfig, Destination, DestinationConfig, ResolvedConfig, resolve_destination,
};
use super::events::{
    DepositEvent, DepositLifecycleEvent, DepositPhase, Dispatcher, EventCallback, EventDestination,
    EventHub, SubscriptionId,
};
use super::model::{DepositAddresses, DetectedDeposit, SweepResult};
use super::status::{ClientStatus, Lifecycle, StatusTracker};
use super::sweeper::{SentQuote, SweepJob};
use super::watcher::{Detector, Finding, Thresholds};
use crate::chains::Chain;
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::runtime::Runtime;
use crate::services::{
    AccountClient, AccountInfo, JwtClient, SessionManager, SignerClient, TransactionsPage,
    with_session,
};
use crate::validate::{evm_address_problem, solana_address_problem};

/// How long `close()` (and drop) waits for the event dispatcher to deliver what is queued.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
const DROP_TIMEOUT: Duration = Duration::from_secs(2);
/// Sweep results kept for [`DepositClient::sweep_result`].
const REMEMBERED_RESULTS: usize = 1000;

/// Where a detected deposit is in its sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DepositState {
    /// Not being swept: auto-sweep is off, or its sweep failed. `sweep(id)` may sweep it.
    Waiting,
    /// In the sweep queue.
    Queued,
    /// Being swept now.
    Sweeping,
    /// Waiting to be tried again after a failure.
    RetryWait,
    /// A send whose outcome is unknown; `sweep(id)` resolves it before anything else.
    Unresolved,
}

impl DepositState {
    fn in_sweep(self) -> bool {
        matches!(self, DepositState::Queued | DepositState::Sweeping | DepositState::RetryWait)
    }
}

#[derive(Debug)]
pub(crate) struct DepositRecord {
    pub deposit: DetectedDeposit,
    pub seq: u64,
    pub state: DepositState,
    pub attempts: u32,
    pub unresolved: Option<SentQuote>,
}

/// Everything mutable of a client, behind one short-held lock (never across an await, never
/// while a callback runs).
pub(crate) struct State {
    pub status: StatusTracker,
    pub account: Option<AccountInfo>,
    pub wallet: Option<String>,
    pub destination: Destination,
    pub deposits: HashMap<String, DepositRecord>,
    next_seq: u64,
    results: HashMap<String, SweepResult>,
    result_order: VecDeque<String>,
    watcher: Option<JoinHandle<()>>,
    pub sweep_tx: Option<mpsc::UnboundedSender<SweepJob>>,
    sweeper: Option<JoinHandle<()>>,
    pub timers: Vec<JoinHandle<()>>,
}

impl State {
    /// Recounts the deposits in a sweep; the new status if it changed.
    pub fn recount(&mut self) -> Option<ClientStatus> {
        let sweeps = self.deposits.values().filter(|r| r.state.in_sweep()).count();
        self.status.set_sweeps(sweeps)
    }

    pub fn remember_result(&mut self, result: SweepResult) {
        let id = result.deposit_id.clone();
        if self.results.insert(id.clone(), result).is_none() {
            self.result_order.push_back(id);
        }
        while self.result_order.len() > REMEMBERED_RESULTS {
            if let Some(old) = self.result_order.pop_front() {
                self.results.remove(&old);
            }
        }
    }
}

/// The shared core of a client; tasks hold it weakly.
pub(crate) struct Inner {
    pub runtime: Arc<Runtime>,
    pub config: ResolvedConfig,
    pub thresholds: Thresholds,
    pub session: SessionManager,
    pub signer: SignerClient,
    pub account: AccountClient,
    pub hub: Arc<EventHub>,
    state: Mutex<State>,
    detector: tokio::sync::Mutex<Detector>,
    closed: AtomicBool,
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

impl Inner {
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub fn emit_status(&self, change: Option<ClientStatus>) {
        if let Some(status) = change {
            self.hub.emit(DepositEvent::StatusChanged(status));
        }
    }

    pub fn emit_error(&self, error: &Error) {
        self.hub
            .emit(DepositEvent::Error { kind: error.kind(), message: error.message().to_owned() });
    }

    /// A lifecycle event of `deposit`.
    pub fn lifecycle(
        phase: DepositPhase,
        deposit: &DetectedDeposit,
        destination: &Destination,
    ) -> DepositLifecycleEvent {
        DepositLifecycleEvent {
            id: deposit.id.clone(),
            phase,
            token: deposit.token,
            chain_id: deposit.chain_id,
            amount: deposit.amount.clone(),
            amount_usd: deposit.amount_usd,
            destination: Some(EventDestination {
                address: destination.address.clone(),
                chain_id: destination.chain_id,
            }),
            transaction_id: None,
            explorer_url: None,
            error: None,
            timestamp: now_ms(),
        }
    }

    pub fn account_id(&self) -> Result<String> {
        self.state().account.as_ref().map(|a| a.account_id.clone()).ok_or_else(not_initialized)
    }

    /// `initialize()`'s network part: session, wallet check, account.
    async fn init_async(self: Arc<Self>) -> Result<(AccountInfo, String)> {
        self.session.get().await?;
        let wallet = with_session(&self.session, |jwt| {
            let signer = &self.signer;
            async move { signer.wallet(&jwt).await }
        })
        .await
        .map_err(|e| match e {
            crate::services::CallError::Service(s) if s.status == 401 => Error::new(
                ErrorKind::Authentication,
                format!("the signer refused the intermediary session: {s}"),
            ),
            other => {
                other.into_error(ErrorKind::Authentication, "Fetching the intermediary wallet")
            }
        })?;
        if let Some(reason) = evm_address_problem(&wallet) {
            return Err(Error::new(
                ErrorKind::Protocol,
                format!(
                    "the signer returned an invalid wallet address {} ({reason})",
                    quote(&wallet)
                ),
            ));
        }
        if let Some(expected) = &self.config.intermediary
            && !expected.eq_ignore_ascii_case(&wallet)
        {
            return Err(Error::configuration(format!(
                "intermediaryAddress {} does not match the signer's wallet {} for this owner",
                quote(expected),
                quote(&wallet)
            )));
        }
        let info = with_session(&self.session, |jwt| {
            let account = &self.account;
            let wallet = wallet.clone();
            async move { account.init_account(&jwt, &wallet).await }
        })
        .await
        .map_err(|e| {
            e.into_error(ErrorKind::UniversalAccount, "Failed to initialize Universal Account")
        })?;
        if let Some(reason) = evm_address_problem(&info.evm_address) {
            return Err(Error::new(
                ErrorKind::UniversalAccount,
                format!(
                    "Failed to get EVM smart account address: {} ({reason})",
                    quote(&info.evm_address)
                ),
            ));
        }
        if let Some(reason) = solana_address_problem(&info.solana_address) {
            return Err(Error::new(
                ErrorKind::UniversalAccount,
                format!(
                    "Failed to get Solana smart account address: {} ({reason})",
                    quote(&info.solana_address)
                ),
            ));
        }
        Ok((info, wallet))
    }

    /// One poll: fetch balances, detect, register and report deposits, queue their sweeps.
    /// Polls never overlap (the detector's lock is held for the whole cycle).
    pub async fn poll_once(self: Arc<Self>) -> Result<Vec<DepositLifecycleEvent>> {
        let mut detector = self.detector.lock().await;
        let account_id = self.account_id()?;
        let balances = with_session(&self.session, |jwt| {
            let account = &self.account;
            let id = account_id.clone();
            async move { account.balances(&jwt, &[id.as_str()], &[]).await }
        })
        .await
        .map_err(|e| e.into_error(ErrorKind::UniversalAccount, "Failed to get balances"))?;
        let lines = balances.get(&account_id).cloned().unwrap_or_default();
        let findings = detector.observe(&account_id, &lines, &self.thresholds, now_ms());
        let mut events = Vec::new();
        let mut status = None;
        {
            let mut state = self.state();
            let destination = state.destination.clone();
            for finding in findings {
                match finding {
                    Finding::Deposit(deposit) => {
                        if state.deposits.contains_key(&deposit.id)
                            || state.results.contains_key(&deposit.id)
                        {
                            continue;
                        }
                        events.push(Inner::lifecycle(
                            DepositPhase::Detected,
                            &deposit,
                            &destination,
                        ));
                        let auto = self.config.auto_sweep && state.sweep_tx.is_some();
                        let seq = state.next_seq;
                        state.next_seq += 1;
                        let id = deposit.id.clone();
                        state.deposits.insert(
                            id.clone(),
                            DepositRecord {
                                deposit,
                                seq,
                                state: if auto {
                                    DepositState::Queued
                                } else {
                                    DepositState::Waiting
                                },
                                attempts: 0,
                                unresolved: None,
                            },
                        );
                        if auto && let Some(tx) = &state.sweep_tx {
                            // The job waits in the queue until the events below are out:
                            // the sweeper needs this lock to start it.
                            let _ = tx.send(SweepJob { deposit_id: id, reply: None });
                        }
                    }
                    Finding::BelowThreshold(deposit, why) => {
                        let mut event =
                            Inner::lifecycle(DepositPhase::BelowThreshold, &deposit, &destination);
                        event.error = Some(why);
                        events.push(event);
                    }
                }
            }
            if !events.is_empty() {
                status = state.recount();
            }
            for event in &events {
                self.hub.emit(DepositEvent::Lifecycle(event.clone()));
            }
        }
        self.emit_status(status);
        drop(detector);
        Ok(events)
    }

    async fn watch_loop(weak: Weak<Inner>, interval: Duration) {
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let Some(inner) = weak.upgrade() else { return };
            if inner.is_closed() {
                return;
            }
            if let Err(error) = Arc::clone(&inner).poll_once().await {
                inner.emit_error(&error);
            }
        }
    }
}

fn not_initialized() -> Error {
    Error::configuration("Client not initialized. Call initialize() first.")
}

/// The deposit client (spec §4): deposit addresses, a watcher, a sweeper that delivers each
/// deposit to the destination, and lifecycle events.
///
/// Every method is synchronous and thread-safe; the work runs on depositkit's shared runtime
/// ([`crate::runtime`]). Blocking methods wait at most `call_timeout_ms`. Many clients in one
/// process share that runtime; each owns one event-dispatcher thread.
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
    inner: Arc<Inner>,
    dispatcher: Mutex<Option<Dispatcher>>,
}

impl std::fmt::Debug for DepositClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DepositClient")
            .field("owner", &self.inner.config.owner)
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

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
        let runtime = Runtime::shared()?;
        let (hub, dispatcher) = EventHub::start(resolved.event_queue_capacity).map_err(|e| {
            Error::new(ErrorKind::Internal, format!("cannot start the event thread: {e}"))
                .with_source(e)
        })?;
        if let Some(callback) = config.on_deposit_event.clone() {
            hub.subscribe(Arc::new(move |event: &DepositEvent| {
                if let DepositEvent::Lifecycle(lifecycle) = event {
                    callback(lifecycle);
                }
            }));
        }
        let jwt = Arc::new(JwtClient::new(&resolved.urls.jwt, &resolved.http));
        let session = SessionManager::new(jwt, &resolved.owner);
        let signer = SignerClient::new(&resolved.urls.signer, &resolved.http);
        let account = AccountClient::new(
            &resolved.urls.account,
            &resolved.http,
            resolved.ua_project_id.as_deref(),
        );
        let thresholds = Thresholds {
            min_value_usd: resolved.min_value_usd,
            supported_tokens: resolved.supported_tokens.clone(),
            supported_chains: resolved.supported_chains.clone(),
        };
        let state = State {
            status: StatusTracker::default(),
            account: None,
            wallet: None,
            destination: resolved.destination.clone(),
            deposits: HashMap::new(),
            next_seq: 0,
            results: HashMap::new(),
            result_order: VecDeque::new(),
            watcher: None,
            sweep_tx: None,
            sweeper: None,
            timers: Vec::new(),
        };
        let inner = Arc::new(Inner {
            runtime,
            config: resolved,
            thresholds,
            session,
            signer,
            account,
            hub,
            state: Mutex::new(state),
            detector: tokio::sync::Mutex::new(Detector::default()),
            closed: AtomicBool::new(false),
        });
        Ok(DepositClient { inner, dispatcher: Mutex::new(Some(dispatcher)) })
    }

    fn ensure_open(&self) -> Result<()> {
        self.inner.runtime.check_process()?;
        if self.inner.is_closed() {
            return Err(Error::new(ErrorKind::DepositSdk, "the client is closed"));
        }
        Ok(())
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
        self.ensure_open()?;
        let change = {
            let mut state = self.inner.state();
            match state.status.lifecycle() {
                Lifecycle::Idle | Lifecycle::Failed => {}
                Lifecycle::Initializing => {
                    return Err(Error::configuration("initialize() is already running"));
                }
                Lifecycle::Ready => return Err(Error::configuration("Client already initialized")),
                Lifecycle::Closed => {
                    return Err(Error::new(ErrorKind::DepositSdk, "the client is closed"));
                }
            }
            state.status.set_lifecycle(Lifecycle::Initializing)
        };
        self.inner.emit_status(change);
        let inner = Arc::clone(&self.inner);
        let outcome = self
            .inner
            .runtime
            .block_on("initialize()", self.inner.config.call_timeout, inner.init_async())
            .and_then(|r| r);
        let mut state = self.inner.state();
        if self.inner.is_closed() {
            return Err(Error::new(
                ErrorKind::DepositSdk,
                "the client was closed during initialize()",
            ));
        }
        match outcome {
            Ok((info, wallet)) => {
                let addresses = DepositAddresses {
                    evm: info.evm_address.clone(),
                    solana: info.solana_address.clone(),
                };
                state.account = Some(info);
                state.wallet = Some(wallet);
                let (tx, rx) = mpsc::unbounded_channel();
                state.sweep_tx = Some(tx);
                let weak = Arc::downgrade(&self.inner);
                state.sweeper = Some(self.inner.runtime.spawn(Inner::sweep_loop(weak, rx)));
                let change = state.status.set_lifecycle(Lifecycle::Ready);
                drop(state);
                self.inner.emit_status(change);
                Ok(addresses)
            }
            Err(error) => {
                let change = state.status.set_lifecycle(Lifecycle::Failed);
                drop(state);
                self.inner.emit_status(change);
                Err(error)
            }
        }
    }

    /// The deposit addresses.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] before [`initialize`](DepositClient::initialize).
    pub fn deposit_addresses(&self) -> Result<DepositAddresses> {
        self.ensure_open()?;
        let state = self.inner.state();
        let account = state.account.as_ref().ok_or_else(not_initialized)?;
        Ok(DepositAddresses {
            evm: account.evm_address.clone(),
            solana: account.solana_address.clone(),
        })
    }

    /// The universal account's id, once initialized.
    pub fn account_id(&self) -> Option<String> {
        self.inner.account_id().ok()
    }

    /// The intermediary wallet (the signer's), once initialized.
    pub fn intermediary_address(&self) -> Option<String> {
        self.inner.state().wallet.clone()
    }

    /// The owner address (lower-case).
    pub fn owner_address(&self) -> &str {
        &self.inner.config.owner
    }

    /// Changes where deposits go; sweeps that start from now on (queued ones and retries
    /// included) use it. A missing address means the owner address, a missing token USDC.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] as for the construction option; the old destination stays.
    pub fn set_destination(&self, destination: DestinationConfig) -> Result<Destination> {
        self.ensure_open()?;
        let resolved = resolve_destination(&destination, &self.inner.config.owner)?;
        self.inner.state().destination = resolved.clone();
        Ok(resolved)
    }

    /// The current destination.
    pub fn get_destination(&self) -> Destination {
        self.inner.state().destination.clone()
    }

    /// Whether the fiat onramp serves the destination chain (spec §4: not X Layer).
    pub fn is_onramp_supported(&self) -> bool {
        Chain::from_id(self.get_destination().chain_id).is_some_and(Chain::is_onramp_chain)
    }

    /// The status.
    pub fn status(&self) -> ClientStatus {
        self.inner.state().status.current()
    }

    /// Whether the watcher runs.
    pub fn is_watching(&self) -> bool {
        self.inner.state().status.watching()
    }

    /// Starts the watcher: one poll now, then one every `polling_interval_ms`, never
    /// overlapping. Does nothing when it already runs.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] before [`initialize`](DepositClient::initialize).
    pub fn start_watching(&self) -> Result<()> {
        self.ensure_open()?;
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
            state.watcher = Some(self.inner.runtime.spawn(Inner::watch_loop(weak, interval)));
            state.status.set_watching(true)
        };
        self.inner.emit_status(change);
        Ok(())
    }

    /// Stops the watcher (a poll under way is abandoned). Sweeps under way go on.
    pub fn stop_watching(&self) {
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
        self.ensure_open()?;
        self.inner.account_id()?;
        let inner = Arc::clone(&self.inner);
        let outcome = self
            .inner
            .runtime
            .block_on("poll_now()", self.inner.config.call_timeout, inner.poll_once())
            .and_then(|r| r);
        if let Err(error) = &outcome {
            self.inner.emit_error(error);
        }
        outcome
    }

    /// Detected deposits that are not delivered yet (queued, being swept, failed, or with an
    /// unknown outcome), oldest first.
    pub fn pending_deposits(&self) -> Vec<DetectedDeposit> {
        let state = self.inner.state();
        let mut records: Vec<&DepositRecord> = state.deposits.values().collect();
        records.sort_by_key(|r| r.seq);
        records.iter().map(|r| r.deposit.clone()).collect()
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
        self.ensure_open()?;
        let (reply_tx, reply_rx) = tokio::sync::oneshot::channel();
        {
            let mut state = self.inner.state();
            if state.account.is_none() {
                return Err(not_initialized());
            }
            let record = state.deposits.get_mut(deposit_id).ok_or_else(|| {
                Error::new(ErrorKind::NotFound, format!("Deposit {} not found", quote(deposit_id)))
            })?;
            if record.state.in_sweep() {
                return Err(Error::new(
                    ErrorKind::Sweep,
                    format!("Deposit {} is already being swept", quote(deposit_id)),
                ));
            }
            record.state = DepositState::Queued;
            let job = SweepJob { deposit_id: deposit_id.to_owned(), reply: Some(reply_tx) };
            let sent = state.sweep_tx.as_ref().is_some_and(|tx| tx.send(job).is_ok());
            if !sent {
                return Err(Error::new(ErrorKind::DepositSdk, "the client is closed"));
            }
            let change = state.recount();
            drop(state);
            self.inner.emit_status(change);
        }
        self.inner
            .runtime
            .block_on("sweep()", self.inner.config.call_timeout, async move {
                reply_rx.await.map_err(|_| {
                    Error::new(ErrorKind::DepositSdk, "the client closed before the sweep finished")
                })
            })
            .and_then(|r| r)
    }

    /// The result of the last sweep of `deposit_id` (automatic or manual), if one finished.
    pub fn sweep_result(&self, deposit_id: &str) -> Option<SweepResult> {
        self.inner.state().results.get(deposit_id).cloned()
    }

    /// A page of the account's transactions (deposits and sweeps), newest first.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::UniversalAccount`].
    pub fn transactions(&self, page: u32, page_size: u32) -> Result<TransactionsPage> {
        self.ensure_open()?;
        let account_id = self.inner.account_id()?;
        let inner = Arc::clone(&self.inner);
        self.inner
            .runtime
            .block_on("transactions()", self.inner.config.call_timeout, async move {
                with_session(&inner.session, |jwt| {
                    let account = &inner.account;
                    let id = account_id.clone();
                    async move { account.transactions(&jwt, &id, page.max(1), page_size.max(1)).await }
                })
                .await
                .map_err(|e| e.into_error(ErrorKind::UniversalAccount, "Failed to get transactions"))
            })
            .and_then(|r| r)
    }

    /// Calls `callback` for every event from now on, on the client's event thread.
    pub fn subscribe(&self, callback: EventCallback) -> SubscriptionId {
        self.inner.hub.subscribe(Arc::from(callback))
    }

    /// Removes a callback; `false` when `id` is not subscribed.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        self.inner.hub.unsubscribe(id)
    }

    /// The oldest queued event, waiting at most `timeout` (zero: do not wait). Events are
    /// queued whether or not callbacks are subscribed; when the queue is full the oldest is
    /// dropped ([`dropped_events`](DepositClient::dropped_events)).
    pub fn next_event(&self, timeout: Duration) -> Option<DepositEvent> {
        self.inner.hub.next_event(timeout)
    }

    /// Events dropped from the pull queue because it was full.
    pub fn dropped_events(&self) -> u64 {
        self.inner.hub.dropped()
    }

    /// Callbacks that panicked so far (each is reported as a [`DepositEvent::Error`]).
    pub fn callback_panics(&self) -> u64 {
        self.inner.hub.callback_panics()
    }

    /// Whether [`close`](DepositClient::close) was called.
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Stops the watcher and the sweeper (a sweep under way is abandoned: its money is either
    /// delivered or still in the account, and a new client finds it), lets the event thread
    /// deliver what is queued for at most 5 s, and drops every callback. Idempotent; the status
    /// becomes `idle` and every later call fails.
    pub fn close(&self) -> Result<()> {
        self.shutdown(CLOSE_TIMEOUT);
        Ok(())
    }

    fn shutdown(&self, timeout: Duration) {
        let first = !self.inner.closed.swap(true, Ordering::AcqRel);
        if first {
            let change = {
                let mut state = self.inner.state();
                for task in [state.watcher.take(), state.sweeper.take()].into_iter().flatten() {
                    task.abort();
                }
                for timer in state.timers.drain(..) {
                    timer.abort();
                }
                state.sweep_tx = None;
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
    }
}

impl Drop for DepositClient {
    fn drop(&mut self) {
        self.shutdown(DROP_TIMEOUT);
    }
}
