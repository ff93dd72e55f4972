//! The awaitable forms of `DepositClient`'s blocking methods (`_…_async`) and its event inbox,
//! which `depositkit.AsyncDepositClient` (`depositkit/_aio.py`) awaits.
//!
//! Each is the core client's async form of the call (`…_async`, a [`core::runtime::Task`]: the
//! work runs as a task of the depositkit runtime), started detached from the interpreter and
//! awaited through [`crate::aio::spawn_settled`]: the runtime completes the `asyncio.Future` on
//! the caller's event loop, and no thread waits for it. Cancelling an await drops the `Task`,
//! which stops the wait only where stopping the work could lose or repeat money: a sweep or
//! refund already queued completes in the background and is reported as an event, exactly once
//! (the core's serial executor owns it); an initialization, a poll or a wallet transfer runs to
//! its end; a read is abandoned (`core/src/deposit/client/async_api.rs`).
//!
//! Events: [`PyEventInbox`] is a subscription of the core client whose events wait in a bounded
//! queue (`event_queue_capacity`, oldest dropped and counted) until `next()` takes them; `next()`
//! returns a future completed by the delivery thread when the queue is empty. An event handed to
//! an await that was cancelled meanwhile goes back to the front of the queue, so none is lost.
//! The inbox ends (`next()` answers `None`) once the client closed and the queue is empty.

use std::collections::VecDeque;

use pyo3::IntoPyObjectExt;

use super::*;
use crate::aio::{self, Pending, Settle};

/// `value` as a Python object (a converter of [`aio`]).
fn to_object<T: for<'py> IntoPyObject<'py>>(py: Python<'_>, value: T) -> PyResult<Py<PyAny>> {
    value.into_py_any(py)
}

/// Sets `outcome` on `future` (unless it is done): the value, or the client's error as its
/// exception with `cause` (an exception a wallet provider raised) as `__cause__`.
fn settle_outcome<T: for<'py> IntoPyObject<'py> + Send + 'static>(
    outcome: core::Result<T>,
    failures: Option<(Arc<FailureLog>, u64)>,
) -> Settle {
    Box::new(move |py, future| {
        let cause = failures.and_then(|(log, mark)| log.take_since(py, mark));
        if aio::is_done(future)? {
            return Ok(());
        }
        match outcome.map(|value| to_object(py, value)) {
            Ok(Ok(value)) => aio::set_result(future, value.bind(py)),
            Ok(Err(err)) => aio::set_exception(future, err),
            Err(err) => {
                let err = client_err(py, err);
                err.set_cause(py, cause);
                aio::set_exception(future, err)
            }
        }
    })
}

/// Whether a call's exception gets a provider's exception as its `__cause__`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CallsProviders {
    /// The call never calls the Python wallet or balance providers.
    No,
    /// The call may call them: an exception one raised becomes the `__cause__` of the call's.
    Yes,
}

impl PyDepositClient {
    /// Starts a core call (`start` gets the core client; it runs detached from the interpreter,
    /// as it may take the client's locks and write its store) and returns the awaitable of its
    /// [`Task`](core::runtime::Task)'s outcome, converted by `convert` on the loop's thread.
    fn run_async<'py, T, P>(
        &self,
        py: Python<'py>,
        providers: CallsProviders,
        start: impl FnOnce(&DepositClient) -> core::runtime::Task<T> + Send,
        convert: fn(T) -> P,
    ) -> PyResult<Bound<'py, PyAny>>
    where
        T: Send + 'static,
        P: for<'a> IntoPyObject<'a> + Send + 'static,
    {
        let shared = self.shared(py)?;
        let failures = (providers == CallsProviders::Yes)
            .then(|| (Arc::clone(&self.failures), self.failures.mark()));
        let task = py.detach(|| start(&shared.client));
        aio::spawn_settled(py, task, move |outcome| settle_outcome(outcome.map(convert), failures))
    }
}

/// The same value (a converter of [`PyDepositClient::run_async`]).
fn same<T>(value: T) -> T {
    value
}

/// Each item converted to its Python record.
fn each<T, P: From<T>>(values: Vec<T>) -> Vec<P> {
    values.into_iter().map(P::from).collect()
}

#[pymethods]
impl PyDepositClient {
    fn _initialize_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.run_async(
            py,
            CallsProviders::No,
            DepositClient::initialize_async,
            PyDepositAddresses::from,
        )
    }

    fn _poll_now_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.run_async(
            py,
            CallsProviders::No,
            DepositClient::poll_now_async,
            each::<_, PyLifecycleEvent>,
        )
    }

    fn _sweep_async<'py>(
        &self,
        py: Python<'py>,
        deposit_id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = str_arg(deposit_id, "deposit_id")?.into_owned();
        self.run_async(py, CallsProviders::No, move |c| c.sweep_async(&id), PySweepResult::from)
    }

    #[pyo3(signature = (deposit_id, reason=None))]
    fn _refund_async<'py>(
        &self,
        py: Python<'py>,
        deposit_id: &Bound<'py, PyAny>,
        reason: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = str_arg(deposit_id, "deposit_id")?.into_owned();
        let reason =
            given(reason).map(reason_arg).transpose()?.unwrap_or(RefundReason::UserRequested);
        self.run_async(
            py,
            CallsProviders::No,
            move |c| c.refund_async(&id, reason),
            PyRefundResult::from,
        )
    }

    fn _can_refund_async<'py>(
        &self,
        py: Python<'py>,
        deposit_id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = str_arg(deposit_id, "deposit_id")?.into_owned();
        self.run_async(
            py,
            CallsProviders::No,
            move |c| c.can_refund_async(&id),
            PyRefundEligibility::from,
        )
    }

    fn _stuck_funds_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.run_async(
            py,
            CallsProviders::No,
            DepositClient::stuck_funds_async,
            each::<_, PyDetectedDeposit>,
        )
    }

    fn _recover_funds_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.run_async(
            py,
            CallsProviders::No,
            DepositClient::recover_funds_async,
            each::<_, PyRecoveryResult>,
        )
    }

    #[pyo3(signature = (page=None, page_size=None))]
    fn _get_transactions_async<'py>(
        &self,
        py: Python<'py>,
        page: Option<&Bound<'py, PyAny>>,
        page_size: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let page = page_arg(page, "page")?;
        let page_size = page_arg(page_size, "page_size")?;
        self.run_async(
            py,
            CallsProviders::No,
            move |c| c.get_transactions_async(page, page_size),
            PyTransactionsResponse::from,
        )
    }

    #[pyo3(signature = (chain_id, address, *, page_token=None, page_size=None))]
    fn _get_token_transactions_async<'py>(
        &self,
        py: Python<'py>,
        chain_id: &Bound<'py, PyAny>,
        address: &Bound<'py, PyAny>,
        page_token: Option<&Bound<'py, PyAny>>,
        page_size: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (filter, page_token) =
            token_transactions_args(chain_id, address, page_token, page_size)?;
        self.run_async(
            py,
            CallsProviders::No,
            move |c| c.get_token_transactions_async(&filter, page_token.as_deref()),
            PyTokenTransactionsResponse::from,
        )
    }

    fn _get_transaction_async<'py>(
        &self,
        py: Python<'py>,
        transaction_id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = str_arg(transaction_id, "transaction_id")?.into_owned();
        self.run_async(
            py,
            CallsProviders::No,
            move |c| c.get_transaction_async(&id),
            PyUaTransaction::from,
        )
    }

    fn _connect_evm_wallet_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.run_async(py, CallsProviders::Yes, DepositClient::connect_evm_wallet_async, same)
    }

    fn _evm_accounts_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.run_async(py, CallsProviders::Yes, DepositClient::evm_accounts_async, same)
    }

    fn _prompt_evm_account_selection_async<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.run_async(
            py,
            CallsProviders::Yes,
            DepositClient::prompt_evm_account_selection_async,
            same,
        )
    }

    fn _connect_solana_wallet_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.run_async(py, CallsProviders::Yes, DepositClient::connect_solana_wallet_async, same)
    }

    fn _get_wallet_balances_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.run_async(
            py,
            CallsProviders::Yes,
            DepositClient::get_wallet_balances_async,
            each::<_, PyFundingBalance>,
        )
    }

    #[pyo3(signature = (balance, raw_amount=None))]
    fn _fund_from_wallet_async<'py>(
        &self,
        py: Python<'py>,
        balance: &Bound<'py, PyAny>,
        raw_amount: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let balance = balance_arg(balance)?;
        let raw_amount = raw_amount_arg(raw_amount)?;
        self.run_async(
            py,
            CallsProviders::Yes,
            move |c| c.fund_from_wallet_async(&balance, raw_amount),
            PyFundingTransferResult::from,
        )
    }

    /// Closes the client on the runtime's blocking pool (`close()` waits up to 5 s for the
    /// event lane), then releases the Python callables on the loop's thread. Cancelled, the
    /// close still completes; the callables are then released when the client is collected.
    fn _close_async<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let shared = Arc::clone(slf.get().shared(py)?);
        let client: Py<Self> = slf.unbind();
        let runtime = core::runtime::Runtime::shared().map_err(|e| client_err(py, e))?;
        let closing = runtime.spawn_blocking(move || shared.close());
        aio::spawn_settled(py, closing, move |_closed| -> Settle {
            Box::new(move |py, future| {
                client.get().release_callables();
                drop(client);
                if aio::is_done(future)? {
                    return Ok(());
                }
                aio::set_result(future, &py.None().into_bound(py))
            })
        })
    }

    /// A new inbox of every event from now on (see the module docs).
    fn _event_inbox(&self, py: Python<'_>) -> PyResult<PyEventInbox> {
        let shared = self.shared(py)?;
        let inbox = Arc::new(Inbox::new(shared.event_queue_capacity));
        let feeder = Feeder(Arc::clone(&inbox));
        let subscribed =
            shared.client.subscribe(Box::new(move |event| feeder.0.push(event.clone())));
        if subscribed.is_err() {
            // A closed client: the inbox is empty and ended.
            inbox.close();
        }
        Ok(PyEventInbox { inbox })
    }
}

/// `get_token_transactions`' filter and page token.
pub(super) fn token_transactions_args(
    chain_id: &Bound<'_, PyAny>,
    address: &Bound<'_, PyAny>,
    page_token: Option<&Bound<'_, PyAny>>,
    page_size: Option<&Bound<'_, PyAny>>,
) -> PyResult<(TokenTransactionFilter, Option<String>)> {
    let chain = chain_id_arg(chain_id)?;
    let Some(chain_id) = chain.id else {
        return Err(to_py_err(
            chain_id.py(),
            Error::invalid_argument(format!("unknown chain id {}", chain.text())),
        ));
    };
    let address = str_arg(address, "address")?.into_owned();
    let page_token = text_opt(page_token, "page_token")?;
    let mut filter = TokenTransactionFilter::new(chain_id, address);
    filter.page_size = page_arg(page_size, "page_size")?;
    Ok((filter, page_token))
}

/// The subscription's end of an inbox: dropped by the core when the client closes (it drops
/// every callback then), which ends the inbox.
struct Feeder(Arc<Inbox>);

impl Drop for Feeder {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Events waiting for `next()`, and the `next()` calls waiting for events.
struct Inbox {
    state: Mutex<InboxState>,
    capacity: usize,
}

#[derive(Default)]
struct InboxState {
    events: VecDeque<core::DepositEvent>,
    waiters: VecDeque<(u64, Pending)>,
    next_waiter: u64,
    closed: bool,
    dropped: u64,
}

impl Inbox {
    fn new(capacity: usize) -> Self {
        Inbox { state: Mutex::default(), capacity: capacity.max(1) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, InboxState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new event (from the delivery thread): to the oldest waiter, else to the queue.
    fn push(self: &Arc<Self>, event: core::DepositEvent) {
        let mut state = self.lock();
        if let Some((_, waiter)) = state.waiters.pop_front() {
            drop(state);
            waiter.settle(self.deliver(event));
            return;
        }
        if state.events.len() >= self.capacity {
            state.events.pop_front();
            state.dropped += 1;
        }
        state.events.push_back(event);
    }

    /// Sets `event` on a waiter's future, or gives it back when that await was cancelled.
    fn deliver(self: &Arc<Self>, event: core::DepositEvent) -> Settle {
        let inbox = Arc::clone(self);
        Box::new(move |py, future| {
            if aio::is_done(future)? {
                inbox.give_back(event);
                return Ok(());
            }
            match event_to_py(py, &event) {
                Ok(object) => aio::set_result(future, object.bind(py)),
                Err(err) => aio::set_exception(future, err),
            }
        })
    }

    /// An event whose await was cancelled: to the next waiter, else back to the queue's front.
    fn give_back(self: &Arc<Self>, event: core::DepositEvent) {
        let mut state = self.lock();
        if let Some((_, waiter)) = state.waiters.pop_front() {
            drop(state);
            waiter.settle(self.deliver(event));
        } else {
            state.events.push_front(event);
        }
    }

    /// Hands queued events to the waiters, oldest first, and `None` to every waiter once the
    /// inbox is closed and empty.
    fn hand_over(self: &Arc<Self>) {
        loop {
            let mut state = self.lock();
            let Some((id, waiter)) = state.waiters.pop_front() else { return };
            if let Some(event) = state.events.pop_front() {
                drop(state);
                waiter.settle(self.deliver(event));
                continue;
            }
            state.waiters.push_front((id, waiter));
            let closed = state.closed;
            drop(state);
            if closed {
                self.close();
            }
            return;
        }
    }

    /// No more events will come: every waiter gets `None`.
    fn close(&self) {
        let waiters = {
            let mut state = self.lock();
            state.closed = true;
            std::mem::take(&mut state.waiters)
        };
        for (_, waiter) in waiters {
            waiter.settle(Box::new(|py, future| {
                if aio::is_done(future)? {
                    return Ok(());
                }
                aio::set_result(future, &py.None().into_bound(py))
            }));
        }
    }
}

/// `AsyncDepositClient`'s events: `next()` is an awaitable of the next event, or `None` once the
/// client closed and every event was taken.
#[pyclass(module = "depositkit", name = "_EventInbox", frozen)]
pub(crate) struct PyEventInbox {
    inbox: Arc<Inbox>,
}

#[pymethods]
impl PyEventInbox {
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let queued = {
            let mut state = self.inbox.lock();
            state.events.pop_front().map(Some).or(if state.closed { Some(None) } else { None })
        };
        match queued {
            Some(Some(event)) => return aio::ready(py, event_to_py(py, &event)?.bind(py)),
            Some(None) => return aio::ready(py, &py.None().into_bound(py)),
            None => {}
        }
        let (pending, awaitable) = Pending::new(py)?;
        let id = {
            let mut state = self.inbox.lock();
            let id = state.next_waiter;
            state.next_waiter += 1;
            state.waiters.push_back((id, pending));
            id
        };
        // An event (or the end) that came meanwhile goes to the oldest waiter: this one.
        self.inbox.hand_over();
        // A cancelled await leaves the queue of waiters at once (on the loop's thread).
        let inbox = Arc::downgrade(&self.inbox);
        aio::on_cancel(&awaitable, move || {
            if let Some(inbox) = inbox.upgrade() {
                let mut state = inbox.lock();
                let position = state.waiters.iter().position(|(waiter, _)| *waiter == id);
                let removed = position.and_then(|i| state.waiters.remove(i));
                drop(state);
                if let Some((_, pending)) = removed {
                    pending.settle(Box::new(|_, _| Ok(())));
                }
            }
        })?;
        Ok(awaitable)
    }

    /// Events dropped because the inbox was full (`event_queue_capacity`).
    #[getter]
    fn dropped(&self) -> u64 {
        self.inbox.lock().dropped
    }
}
