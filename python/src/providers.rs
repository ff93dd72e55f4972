//! Host wallet providers written in Python (`docs/funding.md` §4): the EVM wallet, the Solana
//! wallet and the balance provider a `DepositClient` calls back.
//!
//! A [`ProviderSlot`] holds the Python callable; [`PyProvider`] is the core's
//! [`WalletProvider`] over it. The core calls it on one of its own threads (the runtime's
//! blocking pool), never twice at once for one provider, while the Python caller of the
//! blocking method waits detached from the interpreter ([`crate::blocking`]): so the call
//! attaches ([`Python::try_attach`]) and runs. The answer goes back as JSON; a raised
//! `depositkit.ProviderError(code, message)` becomes the core's [`ProviderError`] with that
//! code, any other exception an internal error (-32603) carrying the exception's `repr()`, and
//! an answer that is not JSON an internal error saying what it was.
//!
//! Every exception a provider raised is kept in the client's [`FailureLog`], so that the
//! exception the blocking call then raises can carry it as `__cause__`.
//!
//! The client's `__traverse__` visits the callables and `__clear__` empties the slots, so a
//! provider that refers to its client is collected with it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use depositkit_core::funding::{ProviderError, WalletProvider};
use pyo3::exceptions::PyBaseException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyTuple, PyType};
use pyo3::{PyTraverseError, PyVisit, intern};
use serde_json::Value;

use crate::conversions::{json_to_py, py_to_json};
use crate::events::HeldCallable;

/// Where `ProviderError` is defined.
const FUNDING_MODULE: &str = "depositkit._funding";

/// The longest text of a host exception carried in a message.
const MAX_REPR: usize = 200;

static PROVIDER_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `depositkit.ProviderError`, imported on first use.
pub(crate) fn provider_error_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    PROVIDER_ERROR.import(py, FUNDING_MODULE, "ProviderError")
}

/// What a slot serves, which decides how the callable is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProviderRole {
    /// `provider(method, params)`: an EIP-1193 EVM wallet.
    EvmWallet,
    /// `provider(method, params)`: a Phantom-style Solana wallet.
    SolanaWallet,
    /// `provider(request)`: a balance provider, asked only `getWalletBalances`.
    Balances,
}

impl ProviderRole {
    fn describe(self) -> &'static str {
        match self {
            ProviderRole::EvmWallet => "the EVM wallet provider",
            ProviderRole::SolanaWallet => "the Solana wallet provider",
            ProviderRole::Balances => "the balance provider",
        }
    }
}

/// The exceptions the providers of one client raised, newest last, each with a sequence
/// number: a blocking call notes [`FailureLog::mark`] before it starts and, when it fails,
/// chains the newest exception raised since.
#[derive(Default)]
pub(crate) struct FailureLog {
    sequence: AtomicU64,
    last: Mutex<Option<(u64, Py<PyBaseException>)>>,
}

impl FailureLog {
    /// The current position, for [`FailureLog::take_since`].
    pub(crate) fn mark(&self) -> u64 {
        self.sequence.load(Ordering::Acquire)
    }

    fn record(&self, py: Python<'_>, err: PyErr) {
        let value = err.into_value(py);
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let n = self.sequence.fetch_add(1, Ordering::AcqRel) + 1;
        let previous = last.replace((n, value));
        drop(last);
        drop(previous);
    }

    /// The newest exception recorded after `mark`, taken out of the log.
    pub(crate) fn take_since(&self, py: Python<'_>, mark: u64) -> Option<PyErr> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let taken = match &*last {
            Some((n, _)) if *n > mark => last.take(),
            _ => None,
        };
        drop(last);
        taken.map(|(_, value)| PyErr::from_value(value.into_bound(py).into_any()))
    }

    /// Visits the kept exception (its traceback may reach the client).
    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(last) = self.last.try_lock() {
            visit.call(last.as_ref().map(|(_, value)| value))?;
        }
        Ok(())
    }

    /// Forgets the kept exception (the client is closing or being collected); returns it, to
    /// be dropped attached.
    pub(crate) fn clear(&self) -> Option<Py<PyBaseException>> {
        self.last.lock().unwrap_or_else(PoisonError::into_inner).take().map(|(_, value)| value)
    }
}

/// A Python callable serving as one provider of a client.
pub(crate) struct ProviderSlot {
    callable: HeldCallable,
    role: ProviderRole,
    failures: Arc<FailureLog>,
}

impl ProviderSlot {
    pub(crate) fn new(
        callable: Py<PyAny>,
        role: ProviderRole,
        failures: Arc<FailureLog>,
    ) -> Arc<ProviderSlot> {
        Arc::new(ProviderSlot { callable: HeldCallable::new(callable), role, failures })
    }

    /// The core's view of this slot.
    pub(crate) fn provider(self: &Arc<Self>) -> Arc<dyn WalletProvider> {
        Arc::new(PyProvider(Arc::clone(self)))
    }

    /// Visits the callable (see [`HeldCallable::traverse`]).
    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.callable.traverse(visit)
    }

    /// Drops the callable: later requests fail as "dropped".
    pub(crate) fn clear(&self) -> Option<Py<PyAny>> {
        self.callable.clear()
    }

    /// Runs one request, attached.
    fn call(&self, py: Python<'_>, method: &str, params: &Value) -> Result<Value, ProviderError> {
        let Some(callable) = self.callable.get(py) else {
            return Err(ProviderError::new(
                ProviderError::INTERNAL,
                format!("{} was dropped (its client was closed)", self.role.describe()),
            ));
        };
        if self.role == ProviderRole::Balances && method != "getWalletBalances" {
            return Err(ProviderError::new(
                ProviderError::UNSUPPORTED_METHOD,
                format!("a balance provider serves getWalletBalances only, not {method}"),
            ));
        }
        let params = match json_to_py(py, params) {
            Ok(params) => params,
            Err(err) => return Err(self.failed(py, err, method)),
        };
        let args = match self.role {
            ProviderRole::Balances => PyTuple::new(py, [params]),
            ProviderRole::EvmWallet | ProviderRole::SolanaWallet => {
                PyTuple::new(py, [PyString::new(py, method).into_any(), params])
            }
        };
        let answer = match args.and_then(|args| callable.bind(py).call1(args)) {
            Ok(answer) => answer,
            Err(err) => return Err(self.failed(py, err, method)),
        };
        py_to_json(&answer).map_err(|what| {
            let message = format!(
                "{} answered {method} with {what}, which is not JSON (return None, bool, int, float, str, lists and dicts with str keys)",
                self.role.describe()
            );
            self.failures.record(py, pyo3::exceptions::PyTypeError::new_err(message.clone()));
            ProviderError::new(ProviderError::INTERNAL, message)
        })
    }

    /// The core's error for an exception the callable raised (kept for chaining).
    fn failed(&self, py: Python<'_>, err: PyErr, method: &str) -> ProviderError {
        let converted = convert_exception(py, &err, self.role, method);
        self.failures.record(py, err);
        converted
    }
}

/// A raised `ProviderError` keeps its code and message; anything else is an internal error
/// with the exception's `repr()` (cut to [`MAX_REPR`] characters).
fn convert_exception(
    py: Python<'_>,
    err: &PyErr,
    role: ProviderRole,
    method: &str,
) -> ProviderError {
    let value = err.value(py);
    if let Ok(class) = provider_error_class(py)
        && value.is_instance(class).unwrap_or(false)
    {
        let code = value.getattr(intern!(py, "code")).and_then(|c| c.extract::<i64>());
        let message = value
            .getattr(intern!(py, "message"))
            .and_then(|m| m.str().map(|s| s.to_string_lossy().into_owned()));
        match (code, message) {
            (Ok(code), Ok(message)) => return ProviderError::new(code, message),
            _ => {
                return ProviderError::new(
                    ProviderError::INTERNAL,
                    format!(
                        "{} raised a ProviderError whose code is not a 64-bit int or whose message is unreadable in {method}",
                        role.describe()
                    ),
                );
            }
        }
    }
    let text = value
        .repr()
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "<an exception whose repr() fails>".to_owned());
    ProviderError::new(
        ProviderError::INTERNAL,
        format!("{} raised {} in {method}", role.describe(), cut(&text)),
    )
}

/// `text`, cut to [`MAX_REPR`] characters (an ellipsis marks the cut).
pub(crate) fn cut(text: &str) -> String {
    if text.chars().count() > MAX_REPR {
        let head: String = text.chars().take(MAX_REPR).collect();
        format!("{head}…")
    } else {
        text.to_owned()
    }
}

/// The [`WalletProvider`] the core holds.
struct PyProvider(Arc<ProviderSlot>);

impl WalletProvider for PyProvider {
    fn request(&self, method: &str, params: &Value) -> Result<Value, ProviderError> {
        Python::try_attach(|py| self.0.call(py, method, params)).unwrap_or_else(|| {
            Err(ProviderError::new(
                ProviderError::INTERNAL,
                "the Python interpreter is shutting down",
            ))
        })
    }
}

/// The three provider slots of one client.
#[derive(Default)]
pub(crate) struct Providers {
    pub(crate) evm: Option<Arc<ProviderSlot>>,
    pub(crate) solana: Option<Arc<ProviderSlot>>,
    pub(crate) balances: Option<Arc<ProviderSlot>>,
}

impl Providers {
    pub(crate) fn slots(&self) -> impl Iterator<Item = &Arc<ProviderSlot>> {
        [&self.evm, &self.solana, &self.balances].into_iter().flatten()
    }

    /// Empties every slot and forgets them; returns the callables, to be dropped attached.
    pub(crate) fn clear(&mut self) -> Vec<Py<PyAny>> {
        let slots = [self.evm.take(), self.solana.take(), self.balances.take()];
        slots.into_iter().flatten().filter_map(|slot| slot.clear()).collect()
    }
}
