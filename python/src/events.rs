//! The records and events of the deposit client for Python: `DepositAddresses`,
//! `DetectedDeposit`, `SweepResult` (with `DeliveredAmount`), and the three event classes
//! `DepositLifecycleEvent`, `StatusChangedEvent` and `ErrorEvent`; plus [`CallbackSlot`], how a
//! Python callable is held for the library's event thread.
//!
//! Every class here is frozen (immutable, shareable between threads) and wraps the core's own
//! record, so the attribute values are exactly the core's. `to_dict()` is the core's serde form
//! (the spec's camelCase record), with raw amounts as Python `int`s.

use std::sync::{Arc, Mutex, PoisonError};

use depositkit_core::deposit::{DeliveredAmount, DepositEvent, DepositLifecycleEvent};
use depositkit_core::{
    ClientStatus, DepositAddresses, DetectedDeposit, Error, ErrorKind, SweepResult, U256,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use pyo3::{PyTraverseError, PyVisit, intern};
use serde::Serialize;

use crate::conversions::{json_to_py, u256_to_py};
use crate::errors::to_py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDepositAddresses>()?;
    m.add_class::<PyDetectedDeposit>()?;
    m.add_class::<PyDeliveredAmount>()?;
    m.add_class::<PySweepResult>()?;
    m.add_class::<PyLifecycleEvent>()?;
    m.add_class::<PyStatusChangedEvent>()?;
    m.add_class::<PyErrorEvent>()?;
    Ok(())
}

/// The text of `text` as Python's `repr()` writes it.
pub(crate) fn py_repr(py: Python<'_>, text: &str) -> PyResult<String> {
    Ok(PyString::new(py, text).repr()?.to_string())
}

/// `record`'s serde form as Python objects; `rawAmount` keys (at any depth) become `int`s.
fn to_dict<'py>(py: Python<'py>, record: &impl Serialize) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(record).map_err(|e| {
        to_py_err(py, Error::new(ErrorKind::Internal, format!("record as JSON: {e}")))
    })?;
    let ints = raw_amounts_to_ints(py, &value)?;
    let object = json_to_py(py, &value)?;
    for (path, int) in ints {
        let mut target = object.clone();
        for key in &path[..path.len() - 1] {
            target = target.get_item(key)?;
        }
        target.set_item(&path[path.len() - 1], int)?;
    }
    Ok(object)
}

/// The paths of the `rawAmount` strings in `value`, with their values as Python `int`s.
fn raw_amounts_to_ints<'py>(
    py: Python<'py>,
    value: &serde_json::Value,
) -> PyResult<Vec<(Vec<String>, Bound<'py, PyAny>)>> {
    let mut found = Vec::new();
    let mut stack: Vec<(Vec<String>, &serde_json::Value)> = vec![(Vec::new(), value)];
    while let Some((path, node)) = stack.pop() {
        let serde_json::Value::Object(map) = node else { continue };
        for (key, child) in map {
            let mut child_path = path.clone();
            child_path.push(key.clone());
            match child {
                serde_json::Value::String(text) if key == "rawAmount" => {
                    if let Ok(raw) = text.parse::<U256>() {
                        found.push((child_path, u256_to_py(py, raw)?));
                    }
                }
                serde_json::Value::Object(_) => stack.push((child_path, child)),
                _ => {}
            }
        }
    }
    Ok(found)
}

fn destination_dict<'py>(
    py: Python<'py>,
    address: &str,
    chain_id: u64,
    token: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "address"), address)?;
    dict.set_item(intern!(py, "chain_id"), chain_id)?;
    if let Some(token) = token {
        dict.set_item(intern!(py, "token"), token)?;
    }
    Ok(dict)
}

// --- records ----------------------------------------------------------------------------------

#[pyclass(module = "depositkit", name = "DepositAddresses", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct PyDepositAddresses {
    evm: String,
    solana: String,
}

impl From<DepositAddresses> for PyDepositAddresses {
    fn from(a: DepositAddresses) -> Self {
        PyDepositAddresses { evm: a.evm, solana: a.solana }
    }
}

#[pymethods]
impl PyDepositAddresses {
    #[getter]
    fn evm(&self) -> &str {
        &self.evm
    }

    #[getter]
    fn solana(&self) -> &str {
        &self.solana
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item(intern!(py, "evm"), &self.evm)?;
        dict.set_item(intern!(py, "solana"), &self.solana)?;
        Ok(dict)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.DepositAddresses evm={} solana={}>",
            py_repr(py, &self.evm)?,
            py_repr(py, &self.solana)?
        ))
    }
}

#[pyclass(module = "depositkit", name = "DetectedDeposit", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyDetectedDeposit {
    inner: DetectedDeposit,
}

impl From<DetectedDeposit> for PyDetectedDeposit {
    fn from(inner: DetectedDeposit) -> Self {
        PyDetectedDeposit { inner }
    }
}

#[pymethods]
impl PyDetectedDeposit {
    #[getter]
    fn id(&self) -> &str {
        &self.inner.id
    }

    #[getter]
    fn token(&self) -> &'static str {
        self.inner.token.symbol()
    }

    #[getter]
    fn chain_id(&self) -> u64 {
        self.inner.chain_id
    }

    #[getter]
    fn amount(&self) -> &str {
        &self.inner.amount
    }

    #[getter]
    fn amount_usd(&self) -> f64 {
        self.inner.amount_usd
    }

    #[getter]
    fn raw_amount<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        u256_to_py(py, self.inner.raw_amount)
    }

    #[getter]
    fn decimals(&self) -> u32 {
        self.inner.decimals
    }

    #[getter]
    fn detected_at(&self) -> u64 {
        self.inner.detected_at
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.inner)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.DetectedDeposit id={} {} {} on chain {}>",
            py_repr(py, &self.inner.id)?,
            self.inner.amount,
            self.inner.token.symbol(),
            self.inner.chain_id
        ))
    }
}

#[pyclass(module = "depositkit", name = "DeliveredAmount", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyDeliveredAmount {
    inner: DeliveredAmount,
}

#[pymethods]
impl PyDeliveredAmount {
    #[getter]
    fn chain_id(&self) -> u64 {
        self.inner.chain_id
    }

    #[getter]
    fn token(&self) -> &'static str {
        self.inner.token.symbol()
    }

    #[getter]
    fn address(&self) -> &str {
        &self.inner.address
    }

    #[getter]
    fn raw_amount<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let raw = self.inner.raw_amount.parse::<U256>().map_err(|_| {
            to_py_err(
                py,
                Error::new(
                    ErrorKind::Protocol,
                    format!("delivered raw amount {:?} is not an integer", self.inner.raw_amount),
                ),
            )
        })?;
        u256_to_py(py, raw)
    }

    #[getter]
    fn amount(&self) -> &str {
        &self.inner.amount
    }

    #[getter]
    fn decimals(&self) -> u32 {
        self.inner.decimals
    }

    #[getter]
    fn value_usd(&self) -> f64 {
        self.inner.value_usd
    }

    #[getter]
    fn fees<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let fees = &self.inner.fees;
        let dict = PyDict::new(py);
        dict.set_item(intern!(py, "gas_usd"), fees.gas_usd)?;
        dict.set_item(intern!(py, "lp_usd"), fees.lp_usd)?;
        dict.set_item(intern!(py, "service_usd"), fees.service_usd)?;
        dict.set_item(intern!(py, "total_usd"), fees.total_usd)?;
        Ok(dict)
    }

    #[getter]
    fn quote_id(&self) -> &str {
        &self.inner.quote_id
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.inner)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.DeliveredAmount {} {} to {} on chain {}>",
            self.inner.amount,
            self.inner.token.symbol(),
            py_repr(py, &self.inner.address)?,
            self.inner.chain_id
        ))
    }
}

#[pyclass(module = "depositkit", name = "SweepResult", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PySweepResult {
    inner: SweepResult,
}

impl From<SweepResult> for PySweepResult {
    fn from(inner: SweepResult) -> Self {
        PySweepResult { inner }
    }
}

fn non_empty(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

#[pymethods]
impl PySweepResult {
    #[getter]
    fn deposit_id(&self) -> &str {
        &self.inner.deposit_id
    }

    #[getter]
    fn transaction_id(&self) -> Option<&str> {
        non_empty(&self.inner.transaction_id)
    }

    #[getter]
    fn explorer_url(&self) -> Option<&str> {
        non_empty(&self.inner.explorer_url)
    }

    #[getter]
    fn status(&self) -> &'static str {
        match self.inner.status {
            depositkit_core::SweepStatus::Success => "success",
            depositkit_core::SweepStatus::Failed => "failed",
            depositkit_core::SweepStatus::Pending => "pending",
        }
    }

    #[getter]
    fn error(&self) -> Option<&str> {
        self.inner.error.as_deref()
    }

    #[getter]
    fn delivered(&self) -> Option<PyDeliveredAmount> {
        self.inner.delivered.clone().map(|inner| PyDeliveredAmount { inner })
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.inner)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.SweepResult deposit_id={} status={}>",
            py_repr(py, &self.inner.deposit_id)?,
            py_repr(py, self.status())?
        ))
    }
}

// --- events -----------------------------------------------------------------------------------

#[pyclass(module = "depositkit", name = "DepositLifecycleEvent", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyLifecycleEvent {
    inner: DepositLifecycleEvent,
}

impl From<DepositLifecycleEvent> for PyLifecycleEvent {
    fn from(inner: DepositLifecycleEvent) -> Self {
        PyLifecycleEvent { inner }
    }
}

#[pymethods]
impl PyLifecycleEvent {
    #[getter]
    fn r#type(&self) -> &'static str {
        "deposit:lifecycle"
    }

    #[getter]
    fn id(&self) -> &str {
        &self.inner.id
    }

    #[getter]
    fn phase(&self) -> &'static str {
        self.inner.phase.as_str()
    }

    #[getter]
    fn token(&self) -> &'static str {
        self.inner.token.symbol()
    }

    #[getter]
    fn chain_id(&self) -> u64 {
        self.inner.chain_id
    }

    #[getter]
    fn amount(&self) -> &str {
        &self.inner.amount
    }

    #[getter]
    fn amount_usd(&self) -> f64 {
        self.inner.amount_usd
    }

    #[getter]
    fn destination<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.inner
            .destination
            .as_ref()
            .map(|d| destination_dict(py, &d.address, d.chain_id, None))
            .transpose()
    }

    #[getter]
    fn transaction_id(&self) -> Option<&str> {
        self.inner.transaction_id.as_deref()
    }

    #[getter]
    fn explorer_url(&self) -> Option<&str> {
        self.inner.explorer_url.as_deref()
    }

    #[getter]
    fn error(&self) -> Option<&str> {
        self.inner.error.as_deref()
    }

    #[getter]
    fn timestamp(&self) -> u64 {
        self.inner.timestamp
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.inner)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.DepositLifecycleEvent {} id={} {} {} on chain {}>",
            self.inner.phase.as_str(),
            py_repr(py, &self.inner.id)?,
            self.inner.amount,
            self.inner.token.symbol(),
            self.inner.chain_id
        ))
    }
}

#[pyclass(module = "depositkit", name = "StatusChangedEvent", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct PyStatusChangedEvent {
    status: ClientStatus,
}

#[pymethods]
impl PyStatusChangedEvent {
    #[getter]
    fn r#type(&self) -> &'static str {
        "status:change"
    }

    #[getter]
    fn status(&self) -> &'static str {
        self.status.as_str()
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item(intern!(py, "status"), self.status.as_str())?;
        Ok(dict)
    }

    fn __repr__(&self) -> String {
        format!("<depositkit.StatusChangedEvent status='{}'>", self.status.as_str())
    }
}

#[pyclass(module = "depositkit", name = "ErrorEvent", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct PyErrorEvent {
    kind: ErrorKind,
    message: String,
}

#[pymethods]
impl PyErrorEvent {
    #[getter]
    fn r#type(&self) -> &'static str {
        "error"
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.kind.class_name()
    }

    #[getter]
    fn code(&self) -> u32 {
        self.kind.code()
    }

    #[getter]
    fn message(&self) -> &str {
        &self.message
    }

    /// The exception this error would have raised (not raised, only built).
    fn exception<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        to_py_err(py, Error::new(self.kind, self.message.clone()))
            .into_value(py)
            .into_bound(py)
            .into_any()
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item(intern!(py, "kind"), self.kind.class_name())?;
        dict.set_item(intern!(py, "code"), self.kind.code())?;
        dict.set_item(intern!(py, "message"), &self.message)?;
        Ok(dict)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.ErrorEvent kind='{}' message={}>",
            self.kind.class_name(),
            py_repr(py, &self.message)?
        ))
    }
}

/// `event` as the Python object of its class.
pub(crate) fn event_to_py(py: Python<'_>, event: &DepositEvent) -> PyResult<Py<PyAny>> {
    Ok(match event {
        DepositEvent::Lifecycle(e) => Py::new(py, PyLifecycleEvent::from(e.clone()))?.into_any(),
        DepositEvent::StatusChanged(status) => {
            Py::new(py, PyStatusChangedEvent { status: *status })?.into_any()
        }
        DepositEvent::Error { kind, message } => {
            Py::new(py, PyErrorEvent { kind: *kind, message: message.clone() })?.into_any()
        }
    })
}

/// `get_destination()`'s dict: `{"address", "chain_id", "token"}`.
pub(crate) fn resolved_destination_dict<'py>(
    py: Python<'py>,
    destination: &depositkit_core::Destination,
) -> PyResult<Bound<'py, PyDict>> {
    destination_dict(
        py,
        &destination.address,
        destination.chain_id,
        Some(destination.token.symbol()),
    )
}

// --- callbacks --------------------------------------------------------------------------------

/// A Python callable held for the event thread. The closure the core calls owns an `Arc` of the
/// slot, not the callable itself: the callable is reachable from Python's garbage collector
/// through the client's `__traverse__` ([`CallbackSlot::traverse`]), and `__clear__` (or
/// unsubscribing, or closing) empties the slot, which breaks a cycle callable → client.
pub(crate) struct CallbackSlot {
    callable: Mutex<Option<Py<PyAny>>>,
}

impl CallbackSlot {
    pub(crate) fn new(callable: Py<PyAny>) -> Arc<Self> {
        Arc::new(CallbackSlot { callable: Mutex::new(Some(callable)) })
    }

    /// Visits the callable. A slot locked right now (by a delivery that holds the GIL, hence
    /// never during a traversal on another thread) is skipped, which only makes the collector
    /// keep the objects longer.
    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(callable) = self.callable.try_lock() {
            visit.call(callable.as_ref())?;
        }
        Ok(())
    }

    /// Drops the callable; later events are no longer delivered to it.
    pub(crate) fn clear(&self) -> Option<Py<PyAny>> {
        self.callable.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// Calls the callable with the event `make` builds, on the calling (event) thread, attached
    /// to the interpreter for the call only. An exception goes to `sys.unraisablehook` with the
    /// callable as its object; nothing happens once the slot is empty or while the interpreter
    /// is shutting down.
    pub(crate) fn call(&self, make: impl FnOnce(Python<'_>) -> PyResult<Py<PyAny>>) {
        Python::try_attach(|py| {
            let callable = self
                .callable
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
                .map(|c| c.clone_ref(py));
            let Some(callable) = callable else { return };
            if let Err(err) = make(py).and_then(|event| callable.call1(py, (event,))) {
                err.write_unraisable(py, Some(callable.bind(py)));
            }
        });
    }
}
