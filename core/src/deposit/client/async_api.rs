//! `DepositClient`'s async face: every call that does I/O or waits, as a [`Task`] — the work
//! runs as a task of depositkit's runtime and the `Task` is a future of its outcome that any
//! executor may await (tokio, the Python asyncio faces, `futures::executor`), with no thread
//! waiting for it.
//!
//! Each `…_async` method checks and admits the call at once, on the calling thread (so calls
//! are admitted in the order they are made, and a refused call's `Task` answers its error
//! without starting anything), and never blocks. Its outcome and errors are those of the
//! synchronous method of the same name, `call_timeout_ms` included: both forms of a call share
//! its admission and its work ([`Admitted`]); the synchronous one waits for the work on the
//! calling thread ([`Runtime::block_on`], which refuses a runtime thread), the async one runs it
//! as a [`Task`] ([`Runtime::run`] under [`Runtime::within`]).
//!
//! Dropping a `Task` before its end (a cancelled await) stops the wait, never a movement of
//! money half way:
//! - `sweep_async`, `refund_async`, `recover_funds_async` wait for the client's serial executor,
//!   which owns the sweep, refund or recovery: it finishes, is recorded and reported by its
//!   events (`credited`, refund updates, recovery results) exactly once, and
//!   `sweep_result`/`refund_result` have it; only the wait is dropped.
//! - `initialize_async`, `poll_now_async` and the funding calls run to their end in the
//!   background ([`WhenDropped::Finish`]): a client is never left half initialized, a poll's
//!   detections are queued and reported, a wallet transfer already sent is confirmed (the
//!   watcher then detects it as any deposit).
//! - the reads (`can_refund_async`, `stuck_funds_async`, history) are abandoned.

use tokio::sync::oneshot;

use super::call::{Admitted, awaiting_reply};
use super::*;
use crate::funding::{FundingBalance, FundingTransferResult};
use crate::runtime::{Task, WhenDropped};
use crate::services::AccountInfo;
use crate::units::U256;

impl DepositClient {
    /// [`initialize`](DepositClient::initialize) as a [`Task`]. Dropped before its end, the
    /// initialization still completes (or fails) in the background and sets the status.
    pub fn initialize_async(&self) -> Task<DepositAddresses> {
        self.task_for(self.admit_initialize())
    }

    /// `initialize()`: refused unless idle or failed; else the status becomes `initializing`,
    /// the work opens the session and the account, and the finish loads the store and starts
    /// the executor (or sets the status `error`).
    pub(super) fn admit_initialize(
        &self,
    ) -> Result<Admitted<(AccountInfo, String), DepositAddresses>> {
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
        Ok(Admitted::finished_by(
            "initialize()",
            WhenDropped::Finish,
            Arc::clone(&self.inner).init_async(),
            move |outcome| finish_initialize(&inner, outcome),
        ))
    }

    /// [`poll_now`](DepositClient::poll_now) as a [`Task`]. Dropped before its end, the poll
    /// still finishes and its events are reported.
    pub fn poll_now_async(&self) -> Task<Vec<DepositLifecycleEvent>> {
        self.task_for(self.admit_poll())
    }

    /// `poll_now()`: one poll; its failure is also reported as an error event.
    pub(super) fn admit_poll(&self) -> Result<Admitted<Vec<DepositLifecycleEvent>>> {
        self.inner.guard(ClientCall::PollNow)?;
        self.inner.account_id()?;
        let inner = Arc::clone(&self.inner);
        Ok(Admitted::finished_by(
            "poll_now()",
            WhenDropped::Finish,
            Arc::clone(&self.inner).poll_once(),
            move |outcome| {
                if let Err(error) = &outcome {
                    inner.emit_error(error);
                }
                outcome
            },
        ))
    }

    /// [`sweep`](DepositClient::sweep) as a [`Task`]: the sweep is admitted and queued at once;
    /// the `Task` waits for its result. Dropped, the sweep goes on (see the module).
    pub fn sweep_async(&self, deposit_id: &str) -> Task<SweepResult> {
        self.task_for(self.queue_sweep(deposit_id))
    }

    /// `sweep()`: the sweep admitted and queued for the executor; the work waits for its result.
    pub(super) fn queue_sweep(&self, deposit_id: &str) -> Result<Admitted<SweepResult>> {
        self.inner.guard(ClientCall::Sweep)?;
        let (reply_tx, reply_rx) = oneshot::channel();
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
            let (_, jobs) = state.admit(deposit_id, Command::Sweep)?;
            let job = Job::Sweep { deposit_id: deposit_id.to_owned(), reply: Some(reply_tx) };
            if jobs.send(job).is_err() {
                return Err(Error::new(ErrorKind::DepositSdk, "the client is closed"));
            }
            let change = state.recount();
            drop(state);
            self.inner.emit_status(change);
        }
        Ok(awaiting_reply("sweep()", "sweep", reply_rx, Ok))
    }

    /// [`refund`](DepositClient::refund) as a [`Task`]: the refund is admitted and queued at
    /// once; the `Task` waits for its result. Dropped, the refund goes on (see the module).
    pub fn refund_async(&self, deposit_id: &str, reason: RefundReason) -> Task<RefundResult> {
        self.task_for(self.queue_refund(deposit_id, reason))
    }

    /// `refund()`: the refund admitted and queued for the executor; the work waits for it.
    pub(super) fn queue_refund(
        &self,
        deposit_id: &str,
        reason: RefundReason,
    ) -> Result<Admitted<RefundResult>> {
        self.inner.guard(ClientCall::Refund)?;
        let (reply_tx, reply_rx) = oneshot::channel();
        self.inner.request_refund(deposit_id, reason, Some(reply_tx))?;
        Ok(awaiting_reply("refund()", "refund", reply_rx, |r| r))
    }

    /// [`recover_funds`](DepositClient::recover_funds) as a [`Task`]: the recovery is queued at
    /// once; the `Task` waits for its results. Dropped, the recovery goes on.
    pub fn recover_funds_async(&self) -> Task<Vec<RecoveryResult>> {
        self.task_for(self.queue_recovery())
    }

    /// `recover_funds()`: the recovery queued for the executor; the work waits for its results.
    pub(super) fn queue_recovery(&self) -> Result<Admitted<Vec<RecoveryResult>>> {
        self.inner.guard(ClientCall::RecoverFunds)?;
        let (reply_tx, reply_rx) = oneshot::channel();
        {
            let mut state = self.inner.state();
            if state.account.is_none() {
                return Err(not_initialized());
            }
            let queued = state
                .jobs
                .as_ref()
                .is_some_and(|tx| tx.send(Job::Recover { reply: reply_tx }).is_ok());
            if !queued {
                return Err(Error::new(ErrorKind::DepositSdk, "the client is closed"));
            }
            state.recovering += 1;
            let change = state.recount();
            drop(state);
            self.inner.emit_status(change);
        }
        Ok(awaiting_reply("recover_funds()", "recovery", reply_rx, |r| r))
    }

    /// [`can_refund`](DepositClient::can_refund) as a [`Task`].
    pub fn can_refund_async(&self, deposit_id: &str) -> Task<RefundEligibility> {
        self.task_for(self.admit_can_refund(deposit_id))
    }

    /// `can_refund()`: a read.
    pub(super) fn admit_can_refund(&self, deposit_id: &str) -> Result<Admitted<RefundEligibility>> {
        let inner = Arc::clone(&self.inner);
        let id = deposit_id.to_owned();
        self.admit_read(ClientCall::CanRefund, "can_refund()", async move {
            inner.eligibility(&id).await
        })
    }

    /// [`stuck_funds`](DepositClient::stuck_funds) as a [`Task`].
    pub fn stuck_funds_async(&self) -> Task<Vec<DetectedDeposit>> {
        self.task_for(self.admit_stuck_funds())
    }

    /// `stuck_funds()`: a read.
    pub(super) fn admit_stuck_funds(&self) -> Result<Admitted<Vec<DetectedDeposit>>> {
        let inner = Arc::clone(&self.inner);
        self.admit_read(
            ClientCall::StuckFunds,
            "stuck_funds()",
            async move { inner.scan_stuck().await },
        )
    }

    /// A call that only reads, admitted when the client answers `call` and is initialized;
    /// dropping its [`Task`] abandons the read.
    pub(super) fn admit_read<T: Send + 'static>(
        &self,
        call: ClientCall,
        what: &'static str,
        work: impl Future<Output = Result<T>> + Send + 'static,
    ) -> Result<Admitted<T>> {
        self.inner.guard(call)?;
        self.inner.account_id()?;
        Ok(Admitted::new(what, WhenDropped::Abort, work))
    }

    /// [`get_transactions`](DepositClient::get_transactions) as a [`Task`] (the same 30 s
    /// cache: a cached page answers at once).
    pub fn get_transactions_async(
        &self,
        page: Option<u32>,
        page_size: Option<u32>,
    ) -> Task<TransactionsResponse> {
        self.cached_task(self.admit_transactions(page, page_size))
    }

    /// [`get_token_transactions`](DepositClient::get_token_transactions) as a [`Task`] (the
    /// same 30 s cache).
    pub fn get_token_transactions_async(
        &self,
        filter: &TokenTransactionFilter,
        page_token: Option<&str>,
    ) -> Task<TokenTransactionsResponse> {
        self.cached_task(self.admit_token_transactions(filter, page_token))
    }

    /// [`get_transaction`](DepositClient::get_transaction) as a [`Task`] (the same 30 s
    /// cache).
    pub fn get_transaction_async(&self, transaction_id: &str) -> Task<UaTransaction> {
        self.cached_task(self.admit_transaction(transaction_id))
    }

    /// [`connect_evm_wallet`](DepositClient::connect_evm_wallet) as a [`Task`].
    pub fn connect_evm_wallet_async(&self) -> Task<String> {
        self.funding_task(
            ClientCall::ConnectEvmWallet,
            "connect_evm_wallet()",
            Funding::connect_evm_wallet,
        )
    }

    /// [`evm_accounts`](DepositClient::evm_accounts) as a [`Task`].
    pub fn evm_accounts_async(&self) -> Task<Vec<String>> {
        self.funding_task(ClientCall::EvmAccounts, "evm_accounts()", Funding::evm_accounts)
    }

    /// [`prompt_evm_account_selection`](DepositClient::prompt_evm_account_selection) as a
    /// [`Task`].
    pub fn prompt_evm_account_selection_async(&self) -> Task<Vec<String>> {
        self.funding_task(
            ClientCall::PromptEvmAccountSelection,
            "prompt_evm_account_selection()",
            Funding::prompt_evm_account_selection,
        )
    }

    /// [`connect_solana_wallet`](DepositClient::connect_solana_wallet) as a [`Task`].
    pub fn connect_solana_wallet_async(&self) -> Task<String> {
        self.funding_task(
            ClientCall::ConnectSolanaWallet,
            "connect_solana_wallet()",
            Funding::connect_solana_wallet,
        )
    }

    /// [`get_wallet_balances`](DepositClient::get_wallet_balances) as a [`Task`].
    pub fn get_wallet_balances_async(&self) -> Task<Vec<FundingBalance>> {
        self.funding_task(
            ClientCall::GetWalletBalances,
            "get_wallet_balances()",
            Funding::wallet_balances,
        )
    }

    /// [`fund_from_wallet`](DepositClient::fund_from_wallet) as a [`Task`]: checked at once;
    /// dropped before its end, a transfer already sent is still confirmed.
    pub fn fund_from_wallet_async(
        &self,
        balance: &FundingBalance,
        raw_amount: Option<U256>,
    ) -> Task<FundingTransferResult> {
        match self.inner.funding.fund_from_wallet_work(&*self.inner, balance, raw_amount) {
            Ok(work) => self.funding_task(ClientCall::FundFromWallet, "fund_from_wallet()", work),
            Err(error) => Task::failed(error),
        }
    }

    /// A funding call as a [`Task`]: the wallets and nodes are called synchronously (a host
    /// provider may block), so `work` runs on the runtime's blocking pool, under
    /// `call_timeout_ms`; dropped, it runs to its end.
    fn funding_task<T: Send + 'static>(
        &self,
        call: ClientCall,
        what: &'static str,
        work: impl FnOnce(&Funding) -> Result<T> + Send + 'static,
    ) -> Task<T> {
        if let Err(error) = self.inner.funding.admit(&*self.inner, call) {
            return Task::failed(error);
        }
        let funding = Arc::clone(&self.inner.funding);
        let timeout = self.inner.config.call_timeout;
        self.inner.runtime.run(what, WhenDropped::Finish, async move {
            let joined = tokio::task::spawn_blocking(move || work(&funding));
            Runtime::within(what, timeout, joined).await?.map_err(|e| {
                Error::new(ErrorKind::Internal, format!("{what} failed: its task ended: {e}"))
            })?
        })
    }
}

/// `initialize()`'s end, after its work (on the caller's thread for `initialize()`, on the
/// runtime for `initialize_async()`): the store loaded, the account and the executor on
/// success, the status `error` on failure.
fn finish_initialize(
    inner: &Arc<Inner>,
    outcome: Result<(AccountInfo, String)>,
) -> Result<DepositAddresses> {
    let outcome = outcome.and_then(|(info, wallet)| {
        let restored = inner.load_store(&info.account_id)?;
        Ok((info, wallet, restored))
    });
    let mut state = inner.state();
    if inner.is_closed() {
        return Err(Error::new(ErrorKind::DepositSdk, "the client was closed during initialize()"));
    }
    let (info, wallet, restored) = match outcome {
        Ok(started) => started,
        Err(error) => {
            let change = state.status.set_lifecycle(Lifecycle::Failed);
            drop(state);
            inner.emit_status(change);
            return Err(error);
        }
    };
    let addresses =
        DepositAddresses { evm: info.evm_address.clone(), solana: info.solana_address.clone() };
    state.account = Some(info);
    state.wallet = Some(wallet);
    let (tx, rx) = mpsc::unbounded_channel();
    state.jobs = Some(tx);
    let weak = Arc::downgrade(inner);
    state.executor =
        Some(inner.runtime.spawn(Inner::executor_loop(weak, rx).instrument(inner.span())));
    if let Err(error) = inner.resume(&mut state, restored) {
        let change = state.status.set_lifecycle(Lifecycle::Failed);
        drop(state);
        inner.emit_status(change);
        return Err(error);
    }
    if let Err(error) = inner.start_chain_watch(&state) {
        let change = state.status.set_lifecycle(Lifecycle::Failed);
        drop(state);
        inner.emit_status(change);
        return Err(error);
    }
    state.recount();
    let change = state.status.set_lifecycle(Lifecycle::Ready);
    drop(state);
    inner.emit_status(change);
    Ok(addresses)
}
