//! [`DepositClient`]: the synchronous facade over the watcher, the sweeper and the events.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::config::{
    DepositClientConfig, Destination, DestinationConfig, NotificationsConfig, RefundConfig,
    ResolvedConfig, resolve_destination,
};
use super::events::{
    DepositEvent, DepositLifecycleEvent, DepositPhase, Dispatcher, EventCallback, EventDestination,
    EventHub, NotificationsCallback, RecordedEvent, RecordedEventCallback, SubscriptionId,
};
use super::history::{DEFAULT_PAGE_SIZE, HistoryCaches, MAX_PAGE_SIZE, TokenTransactionFilter};
use super::machine::{self, Admission, Command, Effect, Input};
use super::model::{
    DepositAddresses, DetectedDeposit, RecoveryResult, RefundEligibility, RefundReason,
    RefundResult, RefundStatus, SweepResult, SweepStatus,
};
use super::notifications::{NotificationRecord, NotificationStore};
use super::poller::{BalancePoller, Batched, next_tick};
use super::status::{ClientCall, ClientStatus, Lifecycle, StatusTracker};
use super::store::{self, AttemptWrite, Change, DepositStore, RecordWrite, Restored};
use super::sweeper::Job;
use super::watcher::{Detector, Finding, Thresholds};
use crate::chains::Chain;
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::funding::Funding;
use crate::onramp::OnrampOrder;
use crate::runtime::Runtime;
use crate::services::{
    AccountClient, AccountInfo, BalanceLine, CallError, JwtClient, SessionManager, SignerClient,
    TokenTransactionsResponse, TransactionsResponse, UaTransaction, with_session,
};
use crate::validate::{evm_address_problem, solana_address_problem};

/// How long `close()` (and drop) waits for the event dispatcher to deliver what is queued.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
const DROP_TIMEOUT: Duration = Duration::from_secs(2);
/// Sweep and refund results kept for [`DepositClient::sweep_result`] and
/// [`DepositClient::refund_result`].
const REMEMBERED_RESULTS: usize = 1000;

// The deposit lifecycle lives in `machine`: every state change below is a step of it.
pub(crate) use super::machine::DepositState;

pub(crate) use super::records::{DepositRecord, RefundProgress, SentQuote};

/// How a deposit that left the table ended, in the store.
pub(crate) const CREDITED: &str = "credited";
/// See [`CREDITED`].
pub(crate) const REFUNDED: &str = "refunded";

/// The store write of a record in the table.
pub(crate) fn open_write(record: &DepositRecord) -> RecordWrite {
    RecordWrite {
        id: record.deposit.id.clone(),
        seq: record.seq,
        state: record.state.as_str(),
        open: true,
        record: store::record_json(record),
    }
}

/// The store write of a record that left the table, ending as `end` ([`CREDITED`] or
/// [`REFUNDED`]).
pub(crate) fn closed_write(record: &DepositRecord, end: &'static str) -> RecordWrite {
    RecordWrite {
        id: record.deposit.id.clone(),
        seq: record.seq,
        state: end,
        open: false,
        record: store::record_json(record),
    }
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
    pub results: HashMap<String, SweepResult>,
    result_order: VecDeque<String>,
    /// Final refund results of deposits that left the table (and skipped/failed ones).
    pub refunds: HashMap<String, RefundResult>,
    refund_order: VecDeque<String>,
    watcher: Option<JoinHandle<()>>,
    pub jobs: Option<mpsc::UnboundedSender<Job>>,
    executor: Option<JoinHandle<()>>,
    notes_timer: Option<JoinHandle<()>>,
    pub timers: Vec<JoinHandle<()>>,
    /// A recovery is queued or running.
    pub recovering: usize,
}

impl State {
    /// Recounts the deposits whose money moves; the new status if it changed.
    pub fn recount(&mut self) -> Option<ClientStatus> {
        let busy = self.deposits.values().filter(|r| r.state.busy()).count() + self.recovering;
        self.status.set_sweeps(busy)
    }

    /// The store write of deposit `id` while it is in the table.
    pub fn write_of(&self, id: &str) -> Option<RecordWrite> {
        self.deposits.get(id).map(open_write)
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

    pub fn remember_refund(&mut self, result: RefundResult) {
        let id = result.deposit_id.clone();
        if self.refunds.insert(id.clone(), result).is_none() {
            self.refund_order.push_back(id);
        }
        while self.refund_order.len() > REMEMBERED_RESULTS {
            if let Some(old) = self.refund_order.pop_front() {
                self.refunds.remove(&old);
            }
        }
    }

    /// Why deposit `id`, which is not in the table, cannot be swept or refunded.
    pub fn gone_reason(&self, id: &str) -> Option<String> {
        if let Some(refund) = self.refunds.get(id).filter(|r| r.status == RefundStatus::Success) {
            return Some(format!(
                "Deposit {} was already refunded{}",
                quote(id),
                refund
                    .tx_hash
                    .as_deref()
                    .map(|t| format!(" (transaction {t})"))
                    .unwrap_or_default()
            ));
        }
        if let Some(sweep) = self.results.get(id).filter(|r| r.status == SweepStatus::Success) {
            return Some(format!(
                "Deposit {} was credited (transaction {}); a credited deposit cannot be refunded",
                quote(id),
                sweep.transaction_id
            ));
        }
        None
    }

    /// Spawns `work` after `delay`, kept so that `close()` can abort it.
    pub fn after(
        &mut self,
        runtime: &Runtime,
        delay: Duration,
        work: impl Future<Output = ()> + Send + 'static,
    ) {
        self.timers.retain(|t| !t.is_finished());
        self.timers.push(runtime.spawn(async move {
            tokio::time::sleep(delay).await;
            work.await;
        }));
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
    /// The process's batcher of balance polls for this client's account service.
    pub(crate) poller: Arc<BalancePoller>,
    pub hub: Arc<EventHub>,
    state: Mutex<State>,
    pub(crate) detector: tokio::sync::Mutex<Detector>,
    pub(crate) history: Mutex<HistoryCaches>,
    /// Fund from wallet: settings, wallets, node clients (`crate::funding`).
    pub(crate) funding: Arc<Funding>,
    /// The last completed onramp order (`crate::onramp`).
    pub(crate) onramp_order: Mutex<Option<OnrampOrder>>,
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

    /// The one guard of the client's own lifecycle: fails in a forked child, and after
    /// `close()` unless [`ClientCall::answers_when_closed`] says `call` still answers.
    pub(crate) fn guard(&self, call: ClientCall) -> Result<()> {
        self.runtime.check_process()?;
        if self.is_closed() && !call.answers_when_closed() {
            return Err(Error::new(ErrorKind::DepositSdk, "the client is closed"));
        }
        Ok(())
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

    /// Empties the history caches (the client changed the history).
    pub fn invalidate_history(&self) {
        self.history.lock().unwrap_or_else(|e| e.into_inner()).invalidate();
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
        let (events, _) = self.poll_locked(&mut detector).await?;
        drop(detector);
        Ok(events)
    }

    /// The account's balance lines, read in a batch with other clients' polls of the same
    /// service ([`super::poller`]); alone, with the session renewed once on a 401, when the
    /// service refused the batch.
    pub async fn balance_lines(&self, account_id: &str) -> Result<Vec<BalanceLine>> {
        let failed =
            |e: CallError| e.into_error(ErrorKind::UniversalAccount, "Failed to get balances");
        let session = self.session.get().await.map_err(|e| failed(CallError::Session(e)))?;
        match self.poller.lines(account_id, &session.jwt).await {
            Batched::Lines(lines) => return Ok(lines),
            Batched::Failed(error) => return Err(failed(error)),
            Batched::Refused => {}
        }
        let balances = with_session(&self.session, |jwt| {
            let account = &self.account;
            async move { account.balances(&jwt, &[account_id], &[]).await }
        })
        .await
        .map_err(failed)?;
        Ok(balances.get(account_id).cloned().unwrap_or_default())
    }

    /// A poll with the detector held by the caller; also returns the balance lines read.
    pub async fn poll_locked(
        self: &Arc<Self>,
        detector: &mut Detector,
    ) -> Result<(Vec<DepositLifecycleEvent>, Vec<BalanceLine>)> {
        let account_id = self.account_id()?;
        let lines = self.balance_lines(&account_id).await?;
        let version = detector.version();
        let findings = detector.observe(&account_id, &lines, &self.thresholds, now_ms());
        // New deposits and the baselines that found them are saved together: a restart neither
        // loses them nor reports them again.
        let mut change = Change {
            detector: (detector.version() != version).then(|| detector.snapshot()),
            ..Change::default()
        };
        let mut events = Vec::new();
        let mut status = None;
        {
            let mut state = self.state();
            let destination = state.destination.clone();
            for finding in findings {
                match finding {
                    Finding::Deposit(deposit, range) => {
                        if state.deposits.contains_key(&deposit.id)
                            || state.results.contains_key(&deposit.id)
                            || state.refunds.contains_key(&deposit.id)
                        {
                            continue;
                        }
                        events.push(Inner::lifecycle(
                            DepositPhase::Detected,
                            &deposit,
                            &destination,
                        ));
                        let auto = self.config.auto_sweep && state.jobs.is_some();
                        let seq = state.next_seq;
                        state.next_seq += 1;
                        let id = deposit.id.clone();
                        state.deposits.insert(
                            id.clone(),
                            DepositRecord {
                                deposit,
                                range,
                                seq,
                                state: machine::detected(auto).0.state,
                                attempts: 0,
                                unresolved: None,
                                in_flight: None,
                                reconcile_rounds: 0,
                                sweep_failed: false,
                                refund: None,
                            },
                        );
                        change.records.extend(state.write_of(&id));
                        if machine::detected(auto).1 == Some(Effect::QueueSweep)
                            && let Some(tx) = &state.jobs
                        {
                            // The job waits in the queue until the events below are out:
                            // the executor needs this lock to start it.
                            let _ = tx.send(Job::Sweep { deposit_id: id, reply: None });
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
                self.invalidate_history();
            }
            change.events = events.iter().cloned().map(DepositEvent::Lifecycle).collect();
            self.hub.commit(change);
        }
        self.emit_status(status);
        Ok((events, lines))
    }

    /// Records `sent` as the attempt of deposit `id` now under way, durably, before it is
    /// sent. `Err` (why) when it cannot be recorded: then it must not be sent.
    pub(crate) fn record_in_flight(
        &self,
        id: &str,
        sent: &SentQuote,
    ) -> std::result::Result<(), String> {
        let mut state = self.state();
        let Some(record) = state.deposits.get_mut(id) else {
            return Err(format!("deposit {id} left the table"));
        };
        record.in_flight = Some(sent.clone());
        let change = Change {
            records: state.write_of(id).into_iter().collect(),
            attempts: vec![AttemptWrite {
                quote_id: sent.quote.quote_id.clone(),
                deposit_id: id.to_owned(),
                purpose: sent.purpose,
                outcome: None,
                transaction_id: None,
            }],
            ..Change::default()
        };
        match self.hub.store().commit(change, now_ms()) {
            (_, None) => Ok(()),
            (_, Some(error)) => {
                if let Some(record) = state.deposits.get_mut(id) {
                    record.in_flight = None;
                }
                Err(format!(
                    "nothing was sent: the attempt could not be recorded ({})",
                    error.message()
                ))
            }
        }
    }

    /// Reads what an earlier run of this client left in the store (nothing without one).
    fn load_store(&self, account_id: &str) -> Result<Restored> {
        let store = self.hub.store();
        store.bind_account(account_id, now_ms())?;
        store.load()
    }

    /// Puts an earlier run's state back and restarts its work: every deposit where it was,
    /// each quote that may have been sent resolved with that same quote. Called by
    /// `initialize()` with the executor running and the state lock held.
    fn resume(self: &Arc<Self>, state: &mut State, restored: Restored) -> Result<()> {
        if let Some(snapshot) = &restored.detector {
            let mut detector = self.detector.try_lock().map_err(|_| {
                Error::new(ErrorKind::Internal, "the watcher ran while the client was starting")
            })?;
            *detector = Detector::restore(snapshot, &restored.known_ids);
        }
        for result in restored.sweep_results {
            state.remember_result(result);
        }
        for result in restored.refund_results {
            state.remember_refund(result);
        }
        state.next_seq = state.next_seq.max(restored.next_seq);
        self.hub.restore_notifications(restored.notifications);
        let Some(jobs) = state.jobs.clone() else { return Ok(()) };
        for mut record in restored.deposits {
            let id = record.deposit.id.clone();
            // A quote that may have been sent is resolved with that same quote, first: the
            // attempt that resumes finds it as the record's unresolved quote.
            let sent = record.in_flight.take().or_else(|| record.unresolved.take());
            record.unresolved = sent;
            let Ok(step) = record.advance(Input::Restarted) else { continue };
            state.deposits.insert(id.clone(), record);
            match step.effect {
                Some(Effect::QueueSweep) => {
                    drop(jobs.send(Job::Sweep { deposit_id: id, reply: None }));
                }
                Some(Effect::QueueRefund) => {
                    drop(jobs.send(Job::Refund { deposit_id: id, reply: None }));
                }
                Some(Effect::ScheduleRetry) => self.schedule_retry(state, &id),
                Some(Effect::ScheduleRefund) => self.schedule_refund(state, &id),
                _ => {}
            }
        }
        Ok(())
    }

    /// One poll now, then one at every multiple of `interval` on the process-wide grid
    /// ([`next_tick`]), so that the polls of all clients with this interval share batches. A
    /// poll longer than the interval skips the ticks it missed (polls never overlap).
    async fn watch_loop(weak: Weak<Inner>, interval: Duration) {
        let mut ticker = tokio::time::interval_at(next_tick(interval), interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut first = true;
        loop {
            if !std::mem::take(&mut first) {
                ticker.tick().await;
            }
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

pub(crate) fn not_initialized() -> Error {
    Error::configuration("Client not initialized. Call initialize() first.")
}

fn check_page_size(page_size: Option<u32>) -> Result<u32> {
    let size = page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if size == 0 || size > MAX_PAGE_SIZE {
        return Err(Error::invalid_argument(format!(
            "page size must be between 1 and {MAX_PAGE_SIZE}, got {size}"
        )));
    }
    Ok(size)
}

/// A history call's failure: 404 `NOT_FOUND` is [`ErrorKind::NotFound`], the rest
/// [`ErrorKind::UniversalAccount`] (401 after a renewal: [`ErrorKind::Jwt`]).
pub(crate) fn history_error(error: CallError, what: &str) -> Error {
    match error {
        CallError::Service(e) if e.status == 404 && e.code == "NOT_FOUND" => {
            Error::new(ErrorKind::NotFound, format!("{what}: {e}"))
        }
        CallError::Service(e) if e.status == 401 => {
            Error::new(ErrorKind::Jwt, format!("{what}: the service refused the session ({e})"))
        }
        CallError::Service(e) => Error::new(ErrorKind::UniversalAccount, format!("{what}: {e}")),
        CallError::Session(e) => {
            Error::new(e.kind(), format!("{what}: {}", e.message())).with_source(e)
        }
        CallError::Transport(e) => {
            Error::new(ErrorKind::UniversalAccount, format!("{what}: {}", e.message()))
                .with_source(e)
        }
    }
}

/// Dismisses expired notification records when they are due.
async fn notifications_timer(hub: Arc<EventHub>) {
    loop {
        let next = hub.expire_notifications(now_ms());
        match next {
            Some(at) => {
                let wait = Duration::from_millis(at.saturating_sub(now_ms()).max(1));
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = hub.notifications_changed() => {}
                }
            }
            None => hub.notifications_changed().await,
        }
    }
}

/// The deposit client (spec §4): deposit addresses, a watcher, a sweeper that delivers each
/// deposit to the destination, and lifecycle events.
///
/// Every method is synchronous and thread-safe; the work runs on depositkit's shared runtime
/// ([`crate::runtime`]). Blocking methods wait at most `call_timeout_ms`. Many clients in one
/// process share that runtime, one pool of event-delivery threads ([`super::dispatch`]) and
/// one batched balance poll per service ([`super::poller`]).
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
        let runtime = Runtime::shared()?;
        let store = Arc::new(DepositStore::open(
            resolved.store_path.as_deref(),
            &resolved.owner,
            resolved.event_queue_capacity,
        )?);
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
        let session = SessionManager::new(jwt, &resolved.owner);
        let signer = SignerClient::new(&resolved.urls.signer, &resolved.http);
        let account = AccountClient::new(
            &resolved.urls.account,
            &resolved.http,
            resolved.ua_project_id.as_deref(),
        );
        let poller = BalancePoller::shared(
            &resolved.urls.account,
            &resolved.http,
            resolved.ua_project_id.as_deref(),
        );
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
        let state = State {
            status: StatusTracker::default(),
            account: None,
            wallet: None,
            destination: resolved.destination.clone(),
            deposits: HashMap::new(),
            next_seq: 0,
            results: HashMap::new(),
            result_order: VecDeque::new(),
            refunds: HashMap::new(),
            refund_order: VecDeque::new(),
            watcher: None,
            jobs: None,
            executor: None,
            notes_timer: None,
            timers: Vec::new(),
            recovering: 0,
        };
        let inner = Arc::new(Inner {
            runtime,
            config: resolved,
            thresholds,
            session,
            signer,
            account,
            poller,
            hub,
            state: Mutex::new(state),
            detector: tokio::sync::Mutex::new(Detector::default()),
            history: Mutex::new(HistoryCaches::default()),
            funding,
            onramp_order: Mutex::new(None),
            closed: AtomicBool::new(false),
        });
        if inner.hub.has_notifications() {
            let hub = Arc::clone(&inner.hub);
            let timer = inner.runtime.spawn(notifications_timer(hub));
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
        self.inner.guard(ClientCall::Initialize)?;
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
            .and_then(|r| r)
            .and_then(|(info, wallet)| {
                let restored = self.inner.load_store(&info.account_id)?;
                Ok((info, wallet, restored))
            });
        let mut state = self.inner.state();
        if self.inner.is_closed() {
            return Err(Error::new(
                ErrorKind::DepositSdk,
                "the client was closed during initialize()",
            ));
        }
        match outcome {
            Ok((info, wallet, restored)) => {
                let addresses = DepositAddresses {
                    evm: info.evm_address.clone(),
                    solana: info.solana_address.clone(),
                };
                state.account = Some(info);
                state.wallet = Some(wallet);
                let (tx, rx) = mpsc::unbounded_channel();
                state.jobs = Some(tx);
                let weak = Arc::downgrade(&self.inner);
                state.executor = Some(self.inner.runtime.spawn(Inner::executor_loop(weak, rx)));
                if let Err(error) = self.inner.resume(&mut state, restored) {
                    let change = state.status.set_lifecycle(Lifecycle::Failed);
                    drop(state);
                    self.inner.emit_status(change);
                    return Err(error);
                }
                state.recount();
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
        self.inner.guard(ClientCall::DepositAddresses)?;
        let state = self.inner.state();
        let account = state.account.as_ref().ok_or_else(not_initialized)?;
        Ok(DepositAddresses {
            evm: account.evm_address.clone(),
            solana: account.solana_address.clone(),
        })
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
            state.watcher = Some(self.inner.runtime.spawn(Inner::watch_loop(weak, interval)));
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
        self.inner.guard(ClientCall::PollNow)?;
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
        self.inner.guard(ClientCall::Sweep)?;
        let (reply_tx, reply_rx) = tokio::sync::oneshot::channel();
        {
            let mut state = self.inner.state();
            if state.account.is_none() {
                return Err(not_initialized());
            }
            if !state.deposits.contains_key(deposit_id) {
                let why = state
                    .gone_reason(deposit_id)
                    .unwrap_or_else(|| format!("Deposit {} not found", quote(deposit_id)));
                return Err(Error::new(ErrorKind::NotFound, why));
            }
            let Some(record) = state.deposits.get_mut(deposit_id) else {
                return Err(Error::new(ErrorKind::Internal, "deposit table changed"));
            };
            if let Admission::Refuse(why) = machine::admits(record.state, Command::Sweep) {
                return Err(Error::new(ErrorKind::Sweep, why.message(&quote(deposit_id))));
            }
            let Some(jobs) = state.jobs.clone().filter(|tx| !tx.is_closed()) else {
                return Err(Error::new(ErrorKind::DepositSdk, "the client is closed"));
            };
            let Some(record) = state.deposits.get_mut(deposit_id) else {
                return Err(Error::new(ErrorKind::Internal, "deposit table changed"));
            };
            // Admitted: the step queues the sweep (an unresolved send is resolved first).
            let queued = record.advance(Input::Requested(Command::Sweep));
            let job = Job::Sweep { deposit_id: deposit_id.to_owned(), reply: Some(reply_tx) };
            if queued.is_err() || jobs.send(job).is_err() {
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
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn sweep_result(&self, deposit_id: &str) -> Result<Option<SweepResult>> {
        self.inner.guard(ClientCall::SweepResult)?;
        Ok(self.inner.state().results.get(deposit_id).cloned())
    }

    /// A page of the account's transactions (deposits, sweeps, refunds), newest first; `page`
    /// and `page_size` below 1 are taken as 1. Same as
    /// [`get_transactions`](DepositClient::get_transactions).
    ///
    /// # Errors
    /// As [`get_transactions`](DepositClient::get_transactions).
    pub fn transactions(&self, page: u32, page_size: u32) -> Result<TransactionsResponse> {
        self.get_transactions(Some(page.max(1)), Some(page_size.max(1)))
    }

    /// A page of the account's transactions (spec §2 `TransactionsResponse`): deposits
    /// (`receive`), sweeps (`sweep`) and refunds (`refund`), newest first. `page` defaults to
    /// 1, `page_size` to 10 (at most 100). Answers are cached 30 s (see [`super::history`]).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for page 0 or a page size outside 1..=100;
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::UniversalAccount`]
    /// ("Failed to get transactions: …"); [`ErrorKind::Timeout`].
    pub fn get_transactions(
        &self,
        page: Option<u32>,
        page_size: Option<u32>,
    ) -> Result<TransactionsResponse> {
        self.inner.guard(ClientCall::GetTransactions)?;
        let page = page.unwrap_or(1);
        let page_size = check_page_size(page_size)?;
        if page == 0 {
            return Err(Error::invalid_argument("page must be at least 1, got 0"));
        }
        let account_id = self.inner.account_id()?;
        let key = HistoryCaches::page_key(page, page_size);
        let generation = {
            let mut caches = self.history();
            if let Some(hit) = caches.pages.get(&key, now_ms()) {
                return Ok(hit);
            }
            caches.generation
        };
        let inner = Arc::clone(&self.inner);
        let answer = self
            .inner
            .runtime
            .block_on("get_transactions()", self.inner.config.call_timeout, async move {
                with_session(&inner.session, |jwt| {
                    let account = &inner.account;
                    let id = account_id.clone();
                    async move { account.transactions(&jwt, &id, page, page_size).await }
                })
                .await
                .map_err(|e| history_error(e, "Failed to get transactions"))
            })
            .and_then(|r| r)?;
        let mut caches = self.history();
        if caches.generation == generation {
            caches.pages.set(&key, answer.clone(), now_ms());
        }
        Ok(answer)
    }

    /// One token's transactions on one chain (spec §2 `TokenTransactionsResponse`), newest
    /// first, from the cursor `page_token` (`None`: the first page); `next_page_token` is the
    /// cursor of the next page, absent on the last. Cached 30 s.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for an empty address or a page size outside 1..=100;
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::UniversalAccount`]
    /// ("Failed to get token transactions: …", also for an unknown or stale `page_token`);
    /// [`ErrorKind::Timeout`].
    pub fn get_token_transactions(
        &self,
        filter: &TokenTransactionFilter,
        page_token: Option<&str>,
    ) -> Result<TokenTransactionsResponse> {
        self.inner.guard(ClientCall::GetTokenTransactions)?;
        let page_size = check_page_size(filter.page_size)?;
        if filter.address.trim().is_empty() {
            return Err(Error::invalid_argument("filter.address is empty"));
        }
        let account_id = self.inner.account_id()?;
        let key = HistoryCaches::token_key(filter, page_size, page_token);
        let generation = {
            let mut caches = self.history();
            if let Some(hit) = caches.tokens.get(&key, now_ms()) {
                return Ok(hit);
            }
            caches.generation
        };
        let inner = Arc::clone(&self.inner);
        let chain_id = filter.chain_id;
        let address = filter.address.clone();
        let cursor = page_token.map(str::to_owned);
        let answer = self
            .inner
            .runtime
            .block_on("get_token_transactions()", self.inner.config.call_timeout, async move {
                with_session(&inner.session, |jwt| {
                    let account = &inner.account;
                    let (id, address, cursor) = (&account_id, &address, cursor.as_deref());
                    async move {
                        account
                            .token_transactions(&jwt, id, chain_id, address, cursor, page_size)
                            .await
                    }
                })
                .await
                .map_err(|e| history_error(e, "Failed to get token transactions"))
            })
            .and_then(|r| r)?;
        let mut caches = self.history();
        if caches.generation == generation {
            caches.tokens.set(&key, answer.clone(), now_ms());
        }
        Ok(answer)
    }

    /// One transaction of the account (spec §2 `UATransaction`). Cached 30 s.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when the account has no such transaction;
    /// [`ErrorKind::InvalidArgument`] for an empty id; [`ErrorKind::Configuration`] before
    /// initialization; [`ErrorKind::UniversalAccount`] ("Failed to get transaction: …");
    /// [`ErrorKind::Timeout`].
    pub fn get_transaction(&self, transaction_id: &str) -> Result<UaTransaction> {
        self.inner.guard(ClientCall::GetTransaction)?;
        if transaction_id.trim().is_empty() {
            return Err(Error::invalid_argument("transaction id is empty"));
        }
        let account_id = self.inner.account_id()?;
        let generation = {
            let mut caches = self.history();
            if let Some(hit) = caches.single.get(transaction_id, now_ms()) {
                return Ok(hit);
            }
            caches.generation
        };
        let inner = Arc::clone(&self.inner);
        let id = transaction_id.to_owned();
        let answer = self
            .inner
            .runtime
            .block_on("get_transaction()", self.inner.config.call_timeout, async move {
                with_session(&inner.session, |jwt| {
                    let account = &inner.account;
                    let (account_id, id) = (&account_id, &id);
                    async move { account.transaction(&jwt, account_id, id).await }
                })
                .await
                .map_err(|e| history_error(e, "Failed to get transaction"))
            })
            .and_then(|r| r)?;
        let mut caches = self.history();
        if caches.generation == generation {
            caches.single.set(transaction_id, answer.clone(), now_ms());
        }
        Ok(answer)
    }

    fn history(&self) -> MutexGuard<'_, HistoryCaches> {
        self.inner.history.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Refunds a deposit that is not delivered (spec §4 `refund`): always available, whatever
    /// `refund.enabled` says. One attempt, through the client's serial executor (never at the
    /// same time as a sweep): the receiver is the deposit's original sender when
    /// `refund.refund_to_sender` and exactly one sender of a fitting address type is known,
    /// else the owner when its address type fits the source chain; the money goes back on the
    /// source chain in the deposit's token, less the gas. A deposit whose earlier sweep or
    /// refund has an unknown outcome is resolved with that same quote first: a sweep that
    /// turns out delivered makes the deposit credited, never refunded.
    ///
    /// Returns the refund's final state — `success`, `failed` (nothing moved), `skipped`
    /// (`reason` `address_type_mismatch` or `below_minimum`; nothing moved), or `pending` when
    /// the send's outcome could not be learned (it is then resolved automatically). Events
    /// [`DepositEvent::Refund`] report each status on the way.
    ///
    /// # Errors
    /// [`ErrorKind::Refund`] when the deposit was credited, was already refunded, or is being
    /// swept or refunded now; [`ErrorKind::NotFound`] for an unknown id;
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::Timeout`].
    pub fn refund(&self, deposit_id: &str, reason: RefundReason) -> Result<RefundResult> {
        self.inner.guard(ClientCall::Refund)?;
        let (reply_tx, reply_rx) = tokio::sync::oneshot::channel();
        self.inner.request_refund(deposit_id, reason, Some(reply_tx))?;
        self.inner
            .runtime
            .block_on("refund()", self.inner.config.call_timeout, async move {
                reply_rx.await.map_err(|_| {
                    Error::new(
                        ErrorKind::DepositSdk,
                        "the client closed before the refund finished",
                    )
                })
            })
            .and_then(|r| r)
            .and_then(|r| r)
    }

    /// Whether [`refund`](DepositClient::refund) would try to send deposit `deposit_id` back
    /// now, and to whom (spec §4 `canRefund`). Reads the deposit's senders and prices the
    /// refund (a quote moves nothing), so `below_minimum` is known. It gives the answer
    /// [`refund`](DepositClient::refund) acts on (both ask the deposit machine's `admits`): a
    /// deposit being swept now, already being refunded, credited or refunded is not eligible
    /// (`message` says why); one whose earlier send's outcome is unknown is eligible, and
    /// `refund` resolves that send with its same quote first (`message` says so).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::UniversalAccount`]
    /// when the senders or the price cannot be read; [`ErrorKind::Timeout`].
    pub fn can_refund(&self, deposit_id: &str) -> Result<RefundEligibility> {
        self.inner.guard(ClientCall::CanRefund)?;
        self.inner.account_id()?;
        let inner = Arc::clone(&self.inner);
        let id = deposit_id.to_owned();
        self.inner
            .runtime
            .block_on("can_refund()", self.inner.config.call_timeout, async move {
                inner.eligibility(&id).await
            })
            .and_then(|r| r)
    }

    /// The latest refund update of `deposit_id` (in progress or final), if it was ever
    /// refunded or tried.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn refund_result(&self, deposit_id: &str) -> Result<Option<RefundResult>> {
        self.inner.guard(ClientCall::RefundResult)?;
        let state = self.inner.state();
        Ok(state
            .deposits
            .get(deposit_id)
            .and_then(|r| r.refund.as_ref().map(|p| p.last.clone()))
            .or_else(|| state.refunds.get(deposit_id).cloned()))
    }

    /// The auto-refund settings.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn refund_config(&self) -> Result<RefundConfig> {
        self.inner.guard(ClientCall::RefundConfig)?;
        Ok(self.inner.config.refund.clone())
    }

    /// Funds in the account that no live deposit of this client explains — left by failed
    /// sweeps, deposits below the thresholds or of unsupported tokens — one entry per chain
    /// and token (id `recovery:<token>:<chainId>`, `amount` human-readable, `raw_amount`, USD
    /// value at the service's price). Deposits still being swept, refunded, or waiting for a
    /// manual sweep are not stuck. Runs a poll first (new deposits are registered, not listed).
    /// Dust is listed too; [`recover_funds`](DepositClient::recover_funds) skips it.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::UniversalAccount`];
    /// [`ErrorKind::Timeout`].
    pub fn stuck_funds(&self) -> Result<Vec<DetectedDeposit>> {
        self.inner.guard(ClientCall::StuckFunds)?;
        self.inner.account_id()?;
        let inner = Arc::clone(&self.inner);
        self.inner
            .runtime
            .block_on("stuck_funds()", self.inner.config.call_timeout, async move {
                inner.scan_stuck().await
            })
            .and_then(|r| r)
    }

    /// Sweeps every stuck asset ([`stuck_funds`](DepositClient::stuck_funds)) to the current
    /// destination, through the serial executor, and returns one [`RecoveryResult`] per asset:
    /// `success` (with `tx_hash`), `failed` (with `error`), or `skipped` (dust ≤ $0.10, or worth
    /// less than the fees). Deposits whose failed sweeps left the money become `credited`.
    /// Each result is also a [`DepositEvent::Recovery`]; the status is `sweeping` meanwhile.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::UniversalAccount`] when
    /// the balances cannot be read; [`ErrorKind::Timeout`] after `call_timeout_ms` (the
    /// recovery goes on in the background).
    pub fn recover_funds(&self) -> Result<Vec<RecoveryResult>> {
        self.inner.guard(ClientCall::RecoverFunds)?;
        let (reply_tx, reply_rx) = tokio::sync::oneshot::channel();
        {
            let mut state = self.inner.state();
            if state.account.is_none() {
                return Err(not_initialized());
            }
            let sent = state
                .jobs
                .as_ref()
                .is_some_and(|tx| tx.send(Job::Recover { reply: reply_tx }).is_ok());
            if !sent {
                return Err(Error::new(ErrorKind::DepositSdk, "the client is closed"));
            }
            state.recovering += 1;
            let change = state.recount();
            drop(state);
            self.inner.emit_status(change);
        }
        self.inner
            .runtime
            .block_on("recover_funds()", self.inner.config.call_timeout, async move {
                reply_rx.await.map_err(|_| {
                    Error::new(
                        ErrorKind::DepositSdk,
                        "the client closed before the recovery finished",
                    )
                })
            })
            .and_then(|r| r)
            .and_then(|r| r)
    }

    /// Whether a recovery is queued or running.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn is_recovering(&self) -> Result<bool> {
        self.inner.guard(ClientCall::IsRecovering)?;
        Ok(self.inner.state().recovering > 0)
    }

    /// The notification records (spec §2: the deposit's lifecycle event plus `createdAt` and
    /// `updatedAt`), oldest first; empty when `notifications` is not configured. See
    /// [`super::notifications`] for the rules.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn notifications(&self) -> Result<Vec<NotificationRecord>> {
        self.inner.guard(ClientCall::Notifications)?;
        Ok(self.inner.hub.notifications())
    }

    /// Dismisses deposit `deposit_id`'s notification; whether there was one.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn dismiss_notification(&self, deposit_id: &str) -> Result<bool> {
        self.inner.guard(ClientCall::DismissNotification)?;
        Ok(self.inner.hub.dismiss_notification(deposit_id))
    }

    /// Calls `callback` with every record after each change of the notification records, on
    /// the client's delivery lane (a depositkit thread; one call at a time, in order). Remove
    /// it with [`unsubscribe`](DepositClient::unsubscribe).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when `notifications` is not configured;
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn subscribe_notifications(
        &self,
        callback: NotificationsCallback,
    ) -> Result<SubscriptionId> {
        self.inner.guard(ClientCall::SubscribeNotifications)?;
        self.inner.hub.subscribe_notifications(Arc::from(callback)).ok_or_else(|| {
            Error::configuration("notifications are not configured (set the notifications option)")
        })
    }

    /// The notifications configuration as given (`position`, `theme`, `class_name` are for a
    /// host UI), or `None` when notifications are off.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn notifications_config(&self) -> Result<Option<NotificationsConfig>> {
        self.inner.guard(ClientCall::NotificationsConfig)?;
        Ok(self.inner.config.notifications.clone())
    }

    /// Calls `callback` for every event from now on, on the client's delivery lane (a
    /// depositkit thread of the process-wide pool; one call at a time, in order).
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed (nothing is registered).
    pub fn subscribe(&self, callback: EventCallback) -> Result<SubscriptionId> {
        self.inner.guard(ClientCall::Subscribe)?;
        Ok(self
            .inner
            .hub
            .subscribe(Arc::new(move |recorded: &RecordedEvent| callback(&recorded.event))))
    }

    /// Like [`subscribe`](DepositClient::subscribe), with each event's id in the event log (the
    /// cursor of [`events_since`](DepositClient::events_since)).
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed (nothing is registered).
    pub fn subscribe_recorded(&self, callback: RecordedEventCallback) -> Result<SubscriptionId> {
        self.inner.guard(ClientCall::SubscribeRecorded)?;
        Ok(self.inner.hub.subscribe(Arc::from(callback)))
    }

    /// The events after `cursor` (an event id; 0 for the start), oldest first, at most
    /// `limit`: what a host missed — while it was down, or because its pull queue overflowed.
    /// With a `store_path` every event the client ever emitted is kept, with the same ids
    /// across restarts; without one, the last `event_queue_capacity`.
    ///
    /// A host that must not miss a credit keeps the id of the last event it handled and, after
    /// a restart, handles `events_since(that id)` before new events.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when events after `cursor` are no longer kept (in memory only);
    /// [`ErrorKind::InvalidArgument`] for a cursor past [`last_event_id`]; [`ErrorKind::Internal`]
    /// when the store cannot be read.
    ///
    /// [`last_event_id`]: DepositClient::last_event_id
    pub fn events_since(&self, cursor: u64, limit: usize) -> Result<Vec<RecordedEvent>> {
        self.inner.guard(ClientCall::EventsSince)?;
        self.inner.hub.store().events_since(cursor, limit)
    }

    /// The id of the last event the client emitted (0: none yet).
    pub fn last_event_id(&self) -> u64 {
        self.inner.hub.store().last_event_id()
    }

    /// Deposit `deposit_id`'s phase history: its lifecycle events and refund updates, oldest
    /// first, with their ids. Complete with a `store_path`; without one, what is still in the
    /// in-memory log.
    ///
    /// # Errors
    /// [`ErrorKind::Internal`] when the store cannot be read.
    pub fn deposit_history(&self, deposit_id: &str) -> Result<Vec<RecordedEvent>> {
        self.inner.guard(ClientCall::DepositHistory)?;
        self.inner.hub.store().deposit_history(deposit_id)
    }

    /// The SQLite file of the client's durable state (`store_path`), if it has one.
    pub fn store_path(&self) -> Option<std::path::PathBuf> {
        self.inner.hub.store().path()
    }

    /// Removes a callback; `false` when `id` is not subscribed.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        self.inner.hub.unsubscribe(id)
    }

    /// The oldest queued event, waiting at most `timeout` (zero: do not wait). Events are
    /// queued whether or not callbacks are subscribed; when the queue is full the oldest is
    /// dropped ([`dropped_events`](DepositClient::dropped_events)).
    pub fn next_event(&self, timeout: Duration) -> Option<DepositEvent> {
        self.inner.hub.next_event(timeout).map(|recorded| recorded.event)
    }

    /// [`next_event`](DepositClient::next_event) with the event's id in the event log.
    pub fn next_recorded_event(&self, timeout: Duration) -> Option<RecordedEvent> {
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
        let first = !self.inner.closed.swap(true, Ordering::AcqRel);
        if first {
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
