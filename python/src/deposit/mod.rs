//! The deposit client for Python: `depositkit.DepositClient` over
//! `depositkit_core::deposit::DepositClient`.
//!
//! - **Options** are keyword arguments in snake_case, each mapped to one field of
//!   [`DepositClientConfig`] (see [`build_config`]); the nested ones (`refund`, `notifications`,
//!   `funding`, `onramp`) are dicts whose keys may be snake_case or the spec's camelCase. A value
//!   of the wrong type raises `TypeError`; a bad value `ConfigurationError` (a `ValueError`),
//!   whose message names the option by its Python name (see [`pythonize`]).
//! - **Blocking calls** (`initialize`, `poll_now`, `sweep`, `refund`, `can_refund`,
//!   `stuck_funds`, `recover_funds`, `transactions`, `get_transactions`,
//!   `get_token_transactions`, `get_transaction`, and the funding calls `connect_evm_wallet`,
//!   `evm_accounts`, `prompt_evm_account_selection`, `connect_solana_wallet`,
//!   `get_wallet_balances`, `fund_from_wallet`) run on a worker thread while the caller waits
//!   with the GIL released and stays interruptible by Ctrl-C ([`crate::blocking`]).
//! - **Wallet providers** (`set_evm_wallet`, `set_solana_wallet`, `set_balance_provider`) are
//!   Python callables the core calls from its threads ([`crate::providers`]); the exception a
//!   provider raised during a funding call becomes the `__cause__` of that call's exception.
//!   The records and argument rules are in [`crate::funding`] and [`crate::onramp`].
//!   `next_event` and iteration wait in 100 ms slices, detached. The other methods only read or
//!   change the client's state under a short lock.
//! - **Callbacks** (`on_deposit_event=`, `subscribe`, `subscribe_notifications`) are held in
//!   [`CallbackSlot`]s: the core's event thread calls them attached to the interpreter, and
//!   their exceptions go to `sys.unraisablehook`. The client's `__traverse__`/`__clear__`
//!   expose them (and the wallet providers) to the garbage collector, so a callback that refers
//!   to its client is collected with it.
//! - **Signer** (`signer=`, the `particle` backend): a `depositkit.CallbackSigner`
//!   ([`crate::signer`]), whose callable the core calls on its blocking pool; the client keeps
//!   the object for the collector (`__traverse__`) until it closes.
//! - **Awaitables** (`_…_async`, and `_event_inbox()`): what `depositkit.AsyncDepositClient`
//!   awaits ([`aio`]): the core client's async calls (tasks of its runtime, no thread waiting),
//!   completing an `asyncio.Future` on the caller's loop; the events through an inbox
//!   subscribed to the core.
//! - **Files**: this one holds the class, its construction, state and lifecycle; `args.rs` the
//!   arguments, `observe.rs` events and notifications, `history.rs`, `refunds.rs` (and recovery),
//!   `wallet.rs` (funding and onramp) their methods, `aio.rs` the awaitable forms.
//! - **Lifecycle**: `close()` (also `with`, dropping the object, and the `atexit` hook
//!   [`close_all`]) stops the client with the GIL released, so that the event thread can finish a
//!   callback that is waiting for the GIL.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use depositkit_core as core;
use depositkit_core::deposit::{
    DepositClient, NotificationRecord, RecordedEvent, RefundReason, SubscriptionId,
    TokenTransactionFilter,
};
use depositkit_core::funding::EvmProvider;
use depositkit_core::{Error, ErrorKind};
use pyo3::exceptions::{PyStopIteration, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt};
use pyo3::{PyTraverseError, PyVisit, intern};

use crate::blocking::{wait_for_raw, wait_sliced};
use crate::conversions::{chain_id_arg, given, json_to_py, str_arg, text_opt, type_name};
use crate::errors::{as_option_error, option_type_error, to_py_err};
use crate::events::{
    CallbackSlot, PyDepositAddresses, PyDetectedDeposit, PyLifecycleEvent, PyNotification,
    PyRecoveryResult, PyRefundEligibility, PyRefundResult, PySweepResult,
    PyTokenTransactionsResponse, PyTransactionsResponse, PyUaTransaction, event_to_py,
    notifications_config_dict, notifications_to_py, py_repr, refund_config_dict,
    resolved_destination_dict,
};
use crate::fork::Origin;
use crate::funding::{
    EvmProviderArg, PyFundingBalance, PyFundingTransferResult, balance_arg, callable_arg,
    evm_provider_arg, raw_amount_arg,
};
use crate::onramp::{PyOnrampOrder, fiat_amount_arg, message_arg};
use crate::options::{build_config, client_err, destination_arg, shown};
use crate::providers::{FailureLog, ProviderRole, ProviderSlot, Providers};
use crate::signer::{PyCallbackSigner, signer_arg};

mod aio;
mod args;
mod events_batch;
mod health;
mod history;
mod observe;
mod refunds;
mod wallet;

use args::{count_arg, page_arg, reason_arg, recorded_to_py, timeout_arg};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDepositClient>()?;
    m.add_class::<aio::PyEventInbox>()
}

/// The class name in the messages of [`crate::fork`].
const CLASS: &str = "DepositClient";

/// A core client and whether its `close()` has returned.
struct Shared {
    client: DepositClient,
    /// The process that created the client: in a forked child it is neither used nor closed.
    origin: Origin,
    /// Set once `close()` returned: every event the client will ever produce is queued by then
    /// (the core's own flag is set at the start of `close()`, before its last status change).
    closed: AtomicBool,
    /// The pull queue's bound, also that of `AsyncDepositClient`'s event inbox.
    event_queue_capacity: usize,
}

impl Shared {
    fn close(&self) {
        let _ = self.client.close();
        self.closed.store(true, Ordering::Release);
    }

    fn finished(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

/// Every client not yet dropped, for [`close_all`].
static LIVE: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());

/// Closes every client still alive (the package's `atexit` hook): their event threads stop
/// before the interpreter finalizes. Runs detached from the interpreter.
pub(crate) fn close_all(py: Python<'_>) {
    let live: Vec<Arc<Shared>> = LIVE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .drain(..)
        .filter_map(|weak| weak.upgrade())
        .filter(|shared| shared.origin.is_here())
        .collect();
    py.detach(move || {
        for shared in live {
            shared.close();
        }
    });
}

fn remember(client: &Arc<Shared>) {
    let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    live.retain(|weak| weak.strong_count() > 0);
    live.push(Arc::downgrade(client));
}

// --- the client -------------------------------------------------------------------------------

/// What [`PyDepositClient::wait_event`] found.
enum Next {
    Event(Box<core::DepositEvent>),
    Closed,
}

#[pyclass(module = "depositkit", name = "DepositClient", frozen)]
pub(crate) struct PyDepositClient {
    shared: Arc<Shared>,
    /// The Python callables the core's event thread calls: `(subscription id, slot)`, with no id
    /// for `on_deposit_event`.
    callbacks: Mutex<Vec<(Option<SubscriptionId>, Arc<CallbackSlot>)>>,
    /// The Python wallet and balance providers the core calls back (for the collector).
    providers: Mutex<Providers>,
    /// The exceptions those providers raised, for chaining onto the call that failed.
    failures: Arc<FailureLog>,
    /// The `signer=` the core signs with (for the collector; released on close).
    signer: Mutex<Option<Py<PyCallbackSigner>>>,
}

/// Keeps `slot` under the id the core gave it (in the list, locked since before the
/// subscription, so that `unsubscribe(id)` from its first call finds it), or releases it when
/// the core refused.
fn keep_subscription(
    py: Python<'_>,
    mut callbacks: std::sync::MutexGuard<'_, Vec<(Option<SubscriptionId>, Arc<CallbackSlot>)>>,
    slot: Arc<CallbackSlot>,
    subscribed: core::Result<SubscriptionId>,
) -> PyResult<SubscriptionId> {
    match subscribed {
        Ok(id) => {
            callbacks.push((Some(id), slot));
            Ok(id)
        }
        Err(err) => {
            drop(callbacks);
            drop(slot.clear());
            Err(client_err(py, err))
        }
    }
}

impl PyDepositClient {
    /// The client's state, after checking that this is the process that created it
    /// ([`crate::fork`]). Every method goes through here (or [`Self::client`]) first.
    fn shared(&self, py: Python<'_>) -> PyResult<&Arc<Shared>> {
        self.shared.origin.check(py, CLASS)?;
        Ok(&self.shared)
    }

    /// The core client, after the check of [`Self::shared`].
    fn client(&self, py: Python<'_>) -> PyResult<&DepositClient> {
        Ok(&self.shared(py)?.client)
    }

    /// Asks the core client one thing that does not block (the core decides what a closed
    /// client still answers): its error raised as the Python exception of its kind.
    fn ask<T>(
        &self,
        py: Python<'_>,
        call: impl FnOnce(&DepositClient) -> core::Result<T>,
    ) -> PyResult<T> {
        call(self.client(py)?).map_err(|e| client_err(py, e))
    }

    fn callbacks(
        &self,
    ) -> std::sync::MutexGuard<'_, Vec<(Option<SubscriptionId>, Arc<CallbackSlot>)>> {
        self.callbacks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn providers(&self) -> std::sync::MutexGuard<'_, Providers> {
        self.providers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// [`Self::run`] for a call that may call the Python providers: when it fails, the newest
    /// exception a provider raised during it becomes the raised exception's `__cause__`.
    fn run_calling_providers<T: Send + 'static>(
        &self,
        py: Python<'_>,
        call: impl FnOnce(&DepositClient) -> core::Result<T> + Send + 'static,
    ) -> PyResult<T> {
        let mark = self.failures.mark();
        let result = self.run(py, call);
        let cause = self.failures.take_since(py, mark);
        if let (Err(err), Some(cause)) = (&result, cause) {
            err.set_cause(py, Some(cause));
        }
        result
    }

    /// A slot holding `callable` as the client's provider of `role`.
    fn provider_slot(&self, callable: Py<PyAny>, role: ProviderRole) -> Arc<ProviderSlot> {
        ProviderSlot::new(callable, role, Arc::clone(&self.failures))
    }

    /// Puts `slot` in the provider slot `which` picks, after `set` (detached) accepted it.
    fn set_provider(
        &self,
        py: Python<'_>,
        which: fn(&mut Providers) -> &mut Option<Arc<ProviderSlot>>,
        slot: Option<Arc<ProviderSlot>>,
        set: impl FnOnce(&DepositClient) -> core::Result<()> + Send,
    ) -> PyResult<()> {
        let client = self.client(py)?;
        // Locked across the change, so that the slot held is the one the core holds. The
        // core's change runs detached: it drops the previous provider, whose callable must not
        // be released (and a `__del__` run) while this lock is held.
        let mut providers = self.providers();
        py.detach(|| set(client)).map_err(|e| client_err(py, e))?;
        let previous = std::mem::replace(which(&mut providers), slot);
        drop(providers);
        drop(previous);
        Ok(())
    }

    /// Runs `call` with the core client on a worker thread, waiting detached (see
    /// [`wait_for_raw`]).
    fn run<T: Send + 'static>(
        &self,
        py: Python<'_>,
        call: impl FnOnce(&DepositClient) -> core::Result<T> + Send + 'static,
    ) -> PyResult<T> {
        let shared = Arc::clone(self.shared(py)?);
        wait_for_raw(py, move || call(&shared.client))?.map_err(|err| client_err(py, err))
    }

    /// The next event, waiting at most `timeout` (`None`: until one comes or the client is
    /// closed), detached and interruptible. A closed client still hands out what was queued.
    fn wait_event(&self, py: Python<'_>, timeout: Option<Duration>) -> PyResult<Option<Next>> {
        let shared = self.shared(py)?;
        wait_sliced(py, timeout, |slice| match shared.client.next_event(slice) {
            Some(event) => Some(Next::Event(Box::new(event))),
            None if shared.finished() => Some(
                shared
                    .client
                    .next_event(Duration::ZERO)
                    .map_or(Next::Closed, |event| Next::Event(Box::new(event))),
            ),
            None => None,
        })
    }

    fn ensure_open(&self, py: Python<'_>) -> PyResult<()> {
        if self.client(py)?.is_closed() {
            return Err(to_py_err(py, Error::new(ErrorKind::DepositSdk, "the client is closed")));
        }
        Ok(())
    }

    fn shutdown(&self, py: Python<'_>) -> PyResult<()> {
        let shared = Arc::clone(self.shared(py)?);
        // Detached: the event thread may be waiting for the GIL to finish a callback, and close()
        // waits for it (at most 5 s).
        py.detach(move || shared.close());
        self.release_callables();
        Ok(())
    }

    /// Drops every Python object the client holds for the core (callbacks, providers, kept
    /// exceptions), closing or being collected.
    fn release_callables(&self) {
        let slots: Vec<_> = self.callbacks().drain(..).collect();
        for (_, slot) in slots {
            drop(slot.clear());
        }
        let providers = self.providers().clear();
        drop(providers);
        drop(self.failures.clear());
        drop(self.signer.lock().unwrap_or_else(PoisonError::into_inner).take());
    }
}

impl Drop for PyDepositClient {
    fn drop(&mut self) {
        if !self.shared.origin.is_here() {
            // Inherited through fork: closing would wait for threads that do not exist here,
            // and dropping the core client would close it. Leaked on purpose.
            std::mem::forget(Arc::clone(&self.shared));
            return;
        }
        if self.shared.finished() {
            return;
        }
        let shared = Arc::clone(&self.shared);
        let close = move || shared.close();
        // Dropped while attached (deallocation): detach for the close, as in `close()`.
        if Python::try_attach(|py| py.detach(close.clone())).is_none() {
            close();
        }
    }
}

#[pymethods]
impl PyDepositClient {
    #[new]
    #[pyo3(
        signature = (owner_address, destination, *, on_deposit_event=None, signer=None, **options),
        // BEGIN generated text_signature (core/tests/option_table.rs)
        text_signature = "(owner_address, destination, *, on_deposit_event=None, signer=None, intermediary_address=None, ua_project_id=None, min_value_usd=0.5, supported_tokens=None, supported_chains=None, polling_interval_ms=3000, auto_sweep=True, refund=None, notifications=None, funding=None, onramp=None, chain_rpc_urls=None, finality=None, backend=None, particle=None, services_url=None, jwt_service_url=None, signer_url=None, account_service_url=None, sweep_retry_delay_ms=5000, reconcile_interval_ms=10000, processing_timeout_ms=300000, min_polling_interval_ms=2000, request_timeout_ms=10000, http_retries=3, http_initial_backoff_ms=100, call_timeout_ms=60000, event_queue_capacity=1024, store_path=None)"
        // END generated text_signature
    )]
    fn new(
        py: Python<'_>,
        owner_address: &Bound<'_, PyAny>,
        destination: &Bound<'_, PyAny>,
        on_deposit_event: Option<&Bound<'_, PyAny>>,
        signer: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let mut config = build_config(owner_address, destination, options)?;
        let signer = signer_arg(py, signer)?;
        if let Some(signer) = &signer {
            config = config.with_signer_source(Arc::new(signer.get().core()));
        }
        let mut callbacks = Vec::new();
        if let Some(callback) = given(on_deposit_event) {
            if !callback.is_callable() {
                return Err(option_type_error(
                    py,
                    format!("on_deposit_event must be callable, not {}", type_name(callback)),
                ));
            }
            let slot = CallbackSlot::new(callback.clone().unbind());
            let held = Arc::clone(&slot);
            config.on_deposit_event = Some(Arc::new(move |event: &core::DepositLifecycleEvent| {
                held.call(|py| Ok(Py::new(py, PyLifecycleEvent::from(event.clone()))?.into_any()));
            }));
            callbacks.push((None, slot));
        }
        // Starting the client opens its store and its delivery lane (and the runtime and the
        // delivery pool on first use).
        let event_queue_capacity = config.event_queue_capacity;
        let client =
            py.detach(move || DepositClient::new(config)).map_err(|e| client_err(py, e))?;
        let shared = Arc::new(Shared {
            client,
            origin: Origin::here(),
            closed: AtomicBool::new(false),
            event_queue_capacity,
        });
        remember(&shared);
        Ok(PyDepositClient {
            shared,
            callbacks: Mutex::new(callbacks),
            providers: Mutex::new(Providers::default()),
            failures: Arc::new(FailureLog::default()),
            signer: Mutex::new(signer),
        })
    }

    fn initialize(&self, py: Python<'_>) -> PyResult<PyDepositAddresses> {
        self.run(py, DepositClient::initialize).map(Into::into)
    }

    #[getter]
    fn deposit_addresses(&self, py: Python<'_>) -> PyResult<PyDepositAddresses> {
        self.client(py)?.deposit_addresses().map(Into::into).map_err(|e| client_err(py, e))
    }

    #[pyo3(signature = (destination=None, /, *, chain_id=None, address=None, token=None))]
    fn set_destination<'py>(
        &self,
        py: Python<'py>,
        destination: Option<&Bound<'py, PyAny>>,
        chain_id: Option<&Bound<'py, PyAny>>,
        address: Option<&Bound<'py, PyAny>>,
        token: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let keywords = [chain_id, address, token].iter().any(|k| given(*k).is_some());
        let config = match given(destination) {
            Some(_) if keywords => {
                return Err(PyTypeError::new_err(
                    "set_destination() takes a destination or chain_id/address/token keywords, not both",
                ));
            }
            Some(destination) => {
                destination_arg(destination).map_err(|e| as_option_error(py, e))?
            }
            None => {
                if given(chain_id).is_none() {
                    return Err(PyTypeError::new_err(
                        "set_destination() needs a destination (or chain_id=...)",
                    ));
                }
                let dict = PyDict::new(py);
                dict.set_item(intern!(py, "chain_id"), chain_id)?;
                dict.set_item(intern!(py, "address"), address)?;
                dict.set_item(intern!(py, "token"), token)?;
                destination_arg(dict.as_any()).map_err(|e| as_option_error(py, e))?
            }
        };
        let client = self.client(py)?;
        let resolved =
            py.detach(|| client.set_destination(config)).map_err(|e| client_err(py, e))?;
        resolved_destination_dict(py, &resolved)
    }

    fn get_destination<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        resolved_destination_dict(py, &self.ask(py, DepositClient::get_destination)?)
    }

    #[getter]
    fn status(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(self.client(py)?.status().as_str())
    }

    #[getter]
    fn is_watching(&self, py: Python<'_>) -> PyResult<bool> {
        self.ask(py, DepositClient::is_watching)
    }

    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.client(py)?.is_closed())
    }

    #[getter]
    fn owner_address<'py>(&'py self, py: Python<'py>) -> PyResult<&'py str> {
        Ok(self.client(py)?.owner_address())
    }

    #[getter]
    fn intermediary_address(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.ask(py, DepositClient::intermediary_address)
    }

    #[getter]
    fn account_id(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.ask(py, DepositClient::account_id)
    }

    #[getter]
    fn dropped_events(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.client(py)?.dropped_events())
    }

    /// The id of the last event the client emitted (0: none yet).
    #[getter]
    fn last_event_id(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.client(py)?.last_event_id())
    }

    /// The SQLite file of the client's durable state, or None.
    #[getter]
    fn store_path(&self, py: Python<'_>) -> PyResult<Option<String>> {
        Ok(self.client(py)?.store_path().map(|p| p.display().to_string()))
    }

    /// The events after `cursor` as `(event_id, event)` pairs, oldest first.
    #[getter]
    fn callback_panics(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.client(py)?.callback_panics())
    }

    fn is_onramp_supported(&self, py: Python<'_>) -> PyResult<bool> {
        self.ask(py, DepositClient::is_onramp_supported)
    }

    fn start_watching(&self, py: Python<'_>) -> PyResult<()> {
        let client = self.client(py)?;
        py.detach(|| client.start_watching()).map_err(|e| client_err(py, e))
    }

    fn stop_watching(&self, py: Python<'_>) -> PyResult<()> {
        let client = self.client(py)?;
        py.detach(|| client.stop_watching()).map_err(|e| client_err(py, e))
    }

    fn poll_now(&self, py: Python<'_>) -> PyResult<Vec<PyLifecycleEvent>> {
        let events = self.run(py, DepositClient::poll_now)?;
        Ok(events.into_iter().map(PyLifecycleEvent::from).collect())
    }

    fn pending_deposits(&self, py: Python<'_>) -> PyResult<Vec<PyDetectedDeposit>> {
        let pending = self.ask(py, DepositClient::pending_deposits)?;
        Ok(pending.into_iter().map(PyDetectedDeposit::from).collect())
    }

    fn sweep(&self, py: Python<'_>, deposit_id: &Bound<'_, PyAny>) -> PyResult<PySweepResult> {
        let id = str_arg(deposit_id, "deposit_id")?.into_owned();
        self.run(py, move |client| client.sweep(&id)).map(Into::into)
    }

    fn sweep_result(
        &self,
        py: Python<'_>,
        deposit_id: &Bound<'_, PyAny>,
    ) -> PyResult<Option<PySweepResult>> {
        let id = str_arg(deposit_id, "deposit_id")?;
        Ok(self.ask(py, |client| client.sweep_result(&id))?.map(Into::into))
    }

    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.shutdown(py)
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        slf.ensure_open(slf.py())?;
        Ok(slf)
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        self.shutdown(py)?;
        Ok(false)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // try_lock: a traversal must not block; a list locked right now is skipped (the
        // collector then keeps these objects a while longer).
        if let Ok(callbacks) = self.callbacks.try_lock() {
            for (_, slot) in callbacks.iter() {
                slot.traverse(&visit)?;
            }
        }
        if let Ok(providers) = self.providers.try_lock() {
            for slot in providers.slots() {
                slot.traverse(&visit)?;
            }
        }
        if let Ok(signer) = self.signer.try_lock() {
            visit.call(signer.as_ref())?;
        }
        self.failures.traverse(&visit)
    }

    fn __clear__(&self) {
        // In a forked child the lists' locks may have been held by a thread of the parent:
        // the callables are leaked with the client.
        if !self.shared.origin.is_here() {
            return;
        }
        self.release_callables();
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        // Never a key: the owner, the status and where deposits go. In a forked child, none of
        // the client's state (its locks may be held by the parent's threads).
        if !self.shared.origin.is_here() {
            return Ok(format!(
                "<depositkit.DepositClient created in process {}>",
                self.shared.origin.pid()
            ));
        }
        let owner = py_repr(py, self.shared.client.owner_address())?;
        let status = py_repr(py, self.shared.client.status().as_str())?;
        // A closed client has no destination any more (`get_destination()` raises).
        let Ok(destination) = self.shared.client.get_destination() else {
            return Ok(format!("<depositkit.DepositClient owner={owner} status={status} closed>"));
        };
        Ok(format!(
            "<depositkit.DepositClient owner={owner} status={status} destination={}>",
            py_repr(
                py,
                &format!(
                    "{} to {} on {}",
                    destination.token.symbol(),
                    destination.address,
                    core::get_chain_name(destination.chain_id)
                )
            )?
        ))
    }
}
