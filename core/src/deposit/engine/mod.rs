//! The engine of a client ([`Inner`]): what runs behind the facade. It holds the client's
//! table of deposits ([`State`], behind one short-held lock), its services, its event hub and
//! its tasks, and applies the machine's effects: it queues jobs on the serial executor
//! (`executor.rs`), arms timers, polls and detects (`watch.rs`), and starts from what the store
//! kept (`start.rs`). The jobs themselves are the sweeper (`sweeper.rs`), refunds
//! (`refund/`) and recovery (`recovery.rs`), which talk to the services through the send
//! protocol (`send.rs`).
//!
//! The engine imports nothing of the facade (`client/`): the facade drives it.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::config::{Destination, ResolvedBackend, ResolvedConfig};
use super::events::{DepositEvent, DepositLifecycleEvent, DepositPhase, EventDestination};
use super::history::HistoryCaches;
use super::hub::EventHub;
use super::machine::{self, Admission, Command, Input};
use super::model::{
    DepositAddresses, DetectedDeposit, RefundResult, RefundStatus, SweepResult, SweepStatus, now_ms,
};
use super::poller::BalancePoller;
use super::port::ClientPort;
use super::records::{DepositRecord, SentQuote};
use super::send::Services;
use super::status::{ClientCall, ClientStatus, StatusTracker};
use super::store::{self, AttemptWrite, Change, RecordWrite};
use super::watcher::{Detector, Thresholds};
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::funding::Funding;
use crate::onramp::Onramp;
use crate::runtime::Runtime;
use crate::services::{
    AccountBackend, AccountClient, AccountInfo, BackendAccount, CallError, PreparedTransfer,
    QuoteDestination, QuotePurpose, QuoteRequest, QuoteSource, SessionManager, SignerClient,
    service_error_of,
};
use crate::units::U256;

mod chain;
mod chain_balance;
mod executor;
mod handover;
mod health;
mod start;
mod watch;

pub(crate) use chain::ChainWatch;
pub(crate) use executor::Job;

/// Sweep and refund results kept for [`DepositClient::sweep_result`] and
/// [`DepositClient::refund_result`].
///
/// [`DepositClient::sweep_result`]: super::DepositClient::sweep_result
/// [`DepositClient::refund_result`]: super::DepositClient::refund_result
const REMEMBERED_RESULTS: usize = 1000;

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
    pub(super) next_seq: u64,
    pub results: HashMap<String, SweepResult>,
    result_order: VecDeque<String>,
    /// Final refund results of deposits that left the table (and skipped/failed ones).
    pub refunds: HashMap<String, RefundResult>,
    refund_order: VecDeque<String>,
    pub(in crate::deposit) watcher: Option<JoinHandle<()>>,
    pub jobs: Option<mpsc::UnboundedSender<Job>>,
    pub(in crate::deposit) executor: Option<JoinHandle<()>>,
    pub(in crate::deposit) notes_timer: Option<JoinHandle<()>>,
    pub timers: Vec<JoinHandle<()>>,
    /// A recovery is queued or running.
    pub recovering: usize,
}

impl State {
    /// The state of a client that has not started: nothing known, deposits going to
    /// `destination`.
    pub fn new(destination: Destination) -> State {
        State {
            status: StatusTracker::default(),
            account: None,
            wallet: None,
            destination,
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
        }
    }

    /// Admits `command` for deposit `deposit_id` (in the table) — the one answer of
    /// [`machine::admits`] — and takes the admitted step; the record and the queue to send its
    /// job to.
    pub fn admit(
        &mut self,
        deposit_id: &str,
        command: Command,
    ) -> Result<(&mut DepositRecord, mpsc::UnboundedSender<Job>)> {
        let record = self.deposits.get_mut(deposit_id).ok_or_else(|| {
            Error::new(ErrorKind::NotFound, format!("Deposit {} not found", quote(deposit_id)))
        })?;
        if let Admission::Refuse(why) = machine::admits(record.state, command) {
            let kind = match command {
                Command::Sweep => ErrorKind::Sweep,
                Command::Refund => ErrorKind::Refund,
            };
            return Err(Error::new(kind, why.message(&quote(deposit_id))));
        }
        let Some(jobs) = self.jobs.clone().filter(|tx| !tx.is_closed()) else {
            return Err(Error::new(ErrorKind::DepositSdk, "the client is closed"));
        };
        // Admitted: the step queues the job (an unresolved send is resolved first).
        record.advance(Input::Requested(command)).map_err(|_| {
            Error::new(ErrorKind::Internal, "the deposit machine admitted, then refused")
        })?;
        Ok((record, jobs))
    }

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

/// A backend's error as the call error the engine's callers read: the service's refusal when
/// it carries one, else the transport's or the session's own error.
fn call_error_of(error: Error) -> CallError {
    if let Some(refusal) = service_error_of(&error) {
        return CallError::Service(refusal.clone());
    }
    let cause = std::error::Error::source(&error).and_then(|s| s.downcast_ref::<Error>());
    match cause {
        Some(cause) if matches!(cause.kind(), ErrorKind::Jwt | ErrorKind::Authentication) => {
            CallError::Session(Error::new(cause.kind(), cause.message()))
        }
        Some(cause) => CallError::Transport(Error::new(cause.kind(), cause.message())),
        None => CallError::Transport(error),
    }
}

/// Lowers `detector`'s held baseline of `deposit`'s line by the deposit's amount, which just
/// left the account, and saves the new snapshot with `change` (see [`Inner::baseline_lock`]).
pub(crate) fn lower_baseline(
    detector: Option<&mut Detector>,
    deposit: &DetectedDeposit,
    change: &mut Change,
) {
    if let Some(detector) = detector
        && detector.spent(deposit.chain_id, deposit.token, deposit.raw_amount)
    {
        change.detector = Some(detector.snapshot());
    }
}

/// The shared core of a client; tasks hold it weakly.
pub(crate) struct Inner {
    pub runtime: Arc<Runtime>,
    pub config: ResolvedConfig,
    pub thresholds: Thresholds,
    pub session: Arc<SessionManager>,
    pub signer: Arc<SignerClient>,
    pub account: Arc<AccountClient>,
    /// The account backend (`backend` option): devnet's `ProtocolBackend` over the same
    /// session and clients, or `ParticleBackend`. Quotes, signatures, sends and their status go
    /// through it (`send.rs`); so do the start, polls and history on Particle.
    pub backend: Arc<dyn AccountBackend>,
    /// The process's batcher of balance polls for this client's account service (devnet's
    /// protocol only: `X-Batch-Sessions`); `None` on Particle.
    pub(crate) poller: Option<Arc<BalancePoller>>,
    pub hub: Arc<EventHub>,
    pub(in crate::deposit) state: Mutex<State>,
    pub(crate) detector: tokio::sync::Mutex<Detector>,
    pub(crate) history: Mutex<HistoryCaches>,
    /// Fund from wallet: settings, wallets, node clients (`crate::funding`).
    pub(crate) funding: Arc<Funding>,
    /// The fiat onramp: its settings and the last completed order (`crate::onramp`).
    pub(crate) onramp: Onramp,
    pub(in crate::deposit) closed: AtomicBool,
    /// The last calls to each service, for `health()`.
    pub(crate) health: crate::observe::HealthTracker,
    /// The chain watchers (`chainRpcUrls`) and what they showed (`chain.rs`).
    pub(crate) chains: ChainWatch,
}

// Its answer before `initialize()` is the port's: funding and the onramp give it too.
pub(crate) use super::port::not_initialized;

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
            confirmations: None,
            required_confirmations: None,
            source_tx_hash: None,
        }
    }

    /// The `credited` event of `deposit`, delivered by `sweep`: to where the sweep's answer
    /// says, else to `fallback`.
    pub fn credited_event(
        deposit: &DetectedDeposit,
        sweep: &SweepResult,
        fallback: &Destination,
    ) -> DepositLifecycleEvent {
        let used = sweep.delivered.as_ref().map_or_else(
            || fallback.clone(),
            |d| Destination { chain_id: d.chain_id, address: d.address.clone(), token: d.token },
        );
        let mut event = Inner::lifecycle(DepositPhase::Credited, deposit, &used);
        event.transaction_id = Some(sweep.transaction_id.clone());
        event.explorer_url = Some(sweep.explorer_url.clone()).filter(|url| !url.is_empty());
        event
    }

    pub fn account_id(&self) -> Result<String> {
        self.state().account.as_ref().map(|a| a.account_id.clone()).ok_or_else(not_initialized)
    }

    /// The client's services, for one send (`send.rs`).
    pub fn services(&self) -> Services<'_> {
        let owner = {
            let state = self.state();
            let account = state.account.as_ref();
            let field =
                |f: fn(&AccountInfo) -> &String| account.map(f).cloned().unwrap_or_default();
            BackendAccount {
                account_id: field(|a| &a.account_id),
                owner: self.session.owner().to_owned(),
                signer_address: state.wallet.clone().unwrap_or_default(),
                evm_address: field(|a| &a.evm_address),
                solana_address: field(|a| &a.solana_address),
            }
        };
        Services { backend: self.backend.as_ref(), owner }
    }

    /// Ends the client's engine; `true` the first time.
    pub fn close(&self) -> bool {
        !self.closed.swap(true, Ordering::AcqRel)
    }

    /// The detector, locked, when money of the account was just delivered (`moved`) and
    /// deposits are detected from balance increases (Particle): its held baseline must go down
    /// by what left, in the same store write as the outcome ([`lower_baseline`]). Taken before
    /// the state lock, as a poll takes them.
    pub(crate) async fn baseline_lock(
        &self,
        moved: bool,
    ) -> Option<tokio::sync::MutexGuard<'_, Detector>> {
        if moved && !self.speaks_protocol() { Some(self.detector.lock().await) } else { None }
    }

    /// Whether the client runs on devnet's protocol (`backend = "devnet"`), not Particle.
    pub fn speaks_protocol(&self) -> bool {
        matches!(self.config.backend, ResolvedBackend::Devnet)
    }

    /// A quote of exactly `raw_amount` of `token` on `chain_id` to `destination`, for this
    /// client's account, through the backend ([`AccountBackend::quote`]). The service's refusal
    /// (`BELOW_MINIMUM`, …) comes back as [`CallError::Service`], as the callers read it.
    pub(crate) async fn quote_for(
        &self,
        chain_id: u64,
        token: &str,
        raw_amount: U256,
        destination: &Destination,
        purpose: QuotePurpose,
        deposit_id: Option<&str>,
    ) -> std::result::Result<PreparedTransfer, CallError> {
        let account_id = self.account_id().map_err(CallError::Transport)?;
        let request = QuoteRequest {
            account_id,
            source: QuoteSource { chain_id, token: token.to_owned(), raw_amount },
            destination: QuoteDestination {
                chain_id: destination.chain_id,
                token: destination.token.symbol().to_owned(),
                address: destination.address.clone(),
            },
            purpose,
            deposit_id: deposit_id.map(str::to_owned),
        };
        let services = self.services();
        services.backend.quote(&services.owner, &request).await.map_err(call_error_of)
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
}

/// What funding and the onramp may ask of the client (`port.rs`).
impl ClientPort for Inner {
    fn admit(&self, call: ClientCall) -> Result<()> {
        self.guard(call)
    }

    fn deposit_addresses(&self) -> Result<DepositAddresses> {
        let state = self.state();
        let account = state.account.as_ref().ok_or_else(not_initialized)?;
        Ok(DepositAddresses {
            evm: account.evm_address.clone(),
            solana: account.solana_address.clone(),
        })
    }

    fn destination(&self) -> Destination {
        self.state().destination.clone()
    }

    fn emit(&self, event: DepositEvent) {
        self.hub.emit(event);
    }

    fn call_timeout(&self) -> Duration {
        self.config.call_timeout
    }

    fn run_blocking<T: Send + 'static>(
        &self,
        what: &str,
        work: impl FnOnce() -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let runtime = Arc::clone(&self.runtime);
        let task_name = what.to_owned();
        self.runtime
            .block_on(what, self.config.call_timeout, async move {
                runtime.spawn_blocking(work).await.map_err(|e| {
                    Error::new(
                        ErrorKind::Internal,
                        format!("{task_name} failed: its task ended: {e}"),
                    )
                })
            })
            .and_then(|r| r)
            .and_then(|r| r)
    }
}
