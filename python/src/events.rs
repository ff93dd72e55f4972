//! The records and events of the deposit client for Python: `DepositAddresses`,
//! `DetectedDeposit`, `SweepResult` (with `DeliveredAmount`), `RefundResult`,
//! `RefundEligibility`, `RecoveryResult`, `Notification`, the history records `UATransaction`,
//! `TransactionsResponse` and `TokenTransactionsResponse`, and the five event classes
//! `DepositLifecycleEvent`, `StatusChangedEvent`, `ErrorEvent`, `RefundEvent` and
//! `RecoveryEvent`; plus [`CallbackSlot`], how a Python callable is held for the library's event
//! thread, over [`HeldCallable`], which the wallet providers use too.
//!
//! Every class here is frozen (immutable, shareable between threads) and wraps the core's own
//! record, so the attribute values are exactly the core's. `to_dict()` is the core's serde form
//! (the spec's camelCase record), with raw amounts (`rawAmount`, at any depth) as Python `int`s.
//! The large history record `UATransaction` exposes its scalar fields as attributes and its
//! nested objects (`target_token`, `change`, `detail`) as snake_case dicts.

use std::sync::{Arc, Mutex, PoisonError};

use depositkit_core::deposit::{
    DeliveredAmount, DepositEvent, DepositLifecycleEvent, NotificationRecord, NotificationsConfig,
    RecoveryResult, RefundConfig, RefundEligibility, RefundResult, UaTransaction,
};
use depositkit_core::describe::quote;
use depositkit_core::{
    ClientStatus, DepositAddresses, DetectedDeposit, Error, ErrorKind, SweepResult,
    TokenTransactionsResponse, TransactionsResponse, U256,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use pyo3::{PyTraverseError, PyVisit, intern};
use serde::Serialize;

use crate::conversions::u256_to_py;
use crate::errors::to_py_err;
use crate::onramp::{PyOnrampCompleteEvent, PyOnrampEvent};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDepositAddresses>()?;
    m.add_class::<PyDetectedDeposit>()?;
    m.add_class::<PyDeliveredAmount>()?;
    m.add_class::<PySweepResult>()?;
    m.add_class::<PyLifecycleEvent>()?;
    m.add_class::<PyStatusChangedEvent>()?;
    m.add_class::<PyErrorEvent>()?;
    m.add_class::<PyRefundResult>()?;
    m.add_class::<PyRefundEligibility>()?;
    m.add_class::<PyRecoveryResult>()?;
    m.add_class::<PyNotification>()?;
    m.add_class::<PyUaTransaction>()?;
    m.add_class::<PyTransactionsResponse>()?;
    m.add_class::<PyTokenTransactionsResponse>()?;
    m.add_class::<PyRefundEvent>()?;
    m.add_class::<PyRecoveryEvent>()?;
    Ok(())
}

/// The text of `text` as Python's `repr()` writes it.
pub(crate) fn py_repr(py: Python<'_>, text: &str) -> PyResult<String> {
    Ok(PyString::new(py, text).repr()?.to_string())
}

/// `record`'s serde form as Python objects; `rawAmount` strings (at any depth, lists included)
/// become `int`s.
fn to_dict<'py>(py: Python<'py>, record: &impl Serialize) -> PyResult<Bound<'py, PyAny>> {
    record_to_dict(py, record)
}

/// `record`'s serde form as Python objects, `rawAmount` strings as `int`s: the `to_dict()` of
/// every record class.
pub(crate) fn record_to_dict<'py>(
    py: Python<'py>,
    record: &impl Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(record).map_err(|e| {
        to_py_err(py, Error::new(ErrorKind::Internal, format!("record as JSON: {e}")))
    })?;
    json_with_ints(py, &value)
}

/// A JSON value as Python objects, as [`crate::conversions::json_to_py`] makes them, except that
/// a `rawAmount` string holding an integer becomes an `int`.
fn json_with_ints<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                let raw = match item {
                    Value::String(text) if key == "rawAmount" => text.parse::<U256>().ok(),
                    _ => None,
                };
                match raw {
                    Some(raw) => dict.set_item(key, u256_to_py(py, raw)?)?,
                    None => dict.set_item(key, json_with_ints(py, item)?)?,
                }
            }
            Ok(dict.into_any())
        }
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_with_ints(py, item)?)?;
            }
            Ok(list.into_any())
        }
        other => crate::conversions::json_to_py(py, other),
    }
}

pub(crate) fn destination_dict<'py>(
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
                    format!(
                        "delivered raw amount {} is not an integer",
                        quote(&self.inner.raw_amount)
                    ),
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

// --- refunds, recovery, notifications -----------------------------------------------------------

#[pyclass(module = "depositkit", name = "RefundResult", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyRefundResult {
    inner: RefundResult,
}

impl From<RefundResult> for PyRefundResult {
    fn from(inner: RefundResult) -> Self {
        PyRefundResult { inner }
    }
}

#[pymethods]
impl PyRefundResult {
    #[getter]
    fn deposit_id(&self) -> &str {
        &self.inner.deposit_id
    }

    #[getter]
    fn token(&self) -> &'static str {
        self.inner.token.symbol()
    }

    #[getter]
    fn source_chain_id(&self) -> u64 {
        self.inner.source_chain_id
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
    fn status(&self) -> &'static str {
        self.inner.status.as_str()
    }

    #[getter]
    fn reason(&self) -> &'static str {
        self.inner.reason.as_str()
    }

    #[getter]
    fn tx_hash(&self) -> Option<&str> {
        self.inner.tx_hash.as_deref()
    }

    #[getter]
    fn error(&self) -> Option<&str> {
        self.inner.error.as_deref()
    }

    #[getter]
    fn refunded_to(&self) -> Option<&str> {
        self.inner.refunded_to.as_deref()
    }

    #[getter]
    fn refunded_to_sender(&self) -> Option<bool> {
        self.inner.refunded_to_sender
    }

    #[getter]
    fn attempts(&self) -> u32 {
        self.inner.attempts
    }

    #[getter]
    fn delivered_amount(&self) -> Option<&str> {
        self.inner.delivered_amount.as_deref()
    }

    #[getter]
    fn explorer_url(&self) -> Option<&str> {
        self.inner.explorer_url.as_deref()
    }

    #[getter]
    fn quote_id(&self) -> Option<&str> {
        self.inner.quote_id.as_deref()
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.inner)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.RefundResult deposit_id={} status={} reason={}>",
            py_repr(py, &self.inner.deposit_id)?,
            py_repr(py, self.inner.status.as_str())?,
            py_repr(py, self.inner.reason.as_str())?
        ))
    }
}

#[pyclass(module = "depositkit", name = "RefundEligibility", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyRefundEligibility {
    inner: RefundEligibility,
}

impl From<RefundEligibility> for PyRefundEligibility {
    fn from(inner: RefundEligibility) -> Self {
        PyRefundEligibility { inner }
    }
}

#[pymethods]
impl PyRefundEligibility {
    #[getter]
    fn eligible(&self) -> bool {
        self.inner.eligible
    }

    #[getter]
    fn reason(&self) -> Option<&'static str> {
        self.inner.reason.map(|r| r.as_str())
    }

    #[getter]
    fn message(&self) -> &str {
        &self.inner.message
    }

    #[getter]
    fn refund_address(&self) -> Option<&str> {
        self.inner.refund_address.as_deref()
    }

    #[getter]
    fn refund_to_sender(&self) -> Option<bool> {
        self.inner.refund_to_sender
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.inner)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.RefundEligibility eligible={} reason={} message={}>",
            if self.inner.eligible { "True" } else { "False" },
            match self.inner.reason {
                Some(reason) => py_repr(py, reason.as_str())?,
                None => "None".to_owned(),
            },
            py_repr(py, &self.inner.message)?
        ))
    }
}

#[pyclass(module = "depositkit", name = "RecoveryResult", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyRecoveryResult {
    inner: RecoveryResult,
}

impl From<RecoveryResult> for PyRecoveryResult {
    fn from(inner: RecoveryResult) -> Self {
        PyRecoveryResult { inner }
    }
}

#[pymethods]
impl PyRecoveryResult {
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
        raw_text_to_py(py, &self.inner.raw_amount, "recovered")
    }

    #[getter]
    fn status(&self) -> &'static str {
        self.inner.status.as_str()
    }

    #[getter]
    fn error(&self) -> Option<&str> {
        self.inner.error.as_deref()
    }

    #[getter]
    fn tx_hash(&self) -> Option<&str> {
        self.inner.tx_hash.as_deref()
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
            "<depositkit.RecoveryResult {} {} on chain {} status={}>",
            self.inner.amount,
            self.inner.token.symbol(),
            self.inner.chain_id,
            py_repr(py, self.inner.status.as_str())?
        ))
    }
}

#[pyclass(module = "depositkit", name = "Notification", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyNotification {
    inner: NotificationRecord,
}

impl From<NotificationRecord> for PyNotification {
    fn from(inner: NotificationRecord) -> Self {
        PyNotification { inner }
    }
}

/// The records as a Python `list` of `Notification`s (what a notifications callback gets).
pub(crate) fn notifications_to_py<'py>(
    py: Python<'py>,
    records: &[NotificationRecord],
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for record in records {
        list.append(Py::new(py, PyNotification::from(record.clone()))?)?;
    }
    Ok(list)
}

#[pymethods]
impl PyNotification {
    #[getter]
    fn id(&self) -> &str {
        &self.inner.event.id
    }

    #[getter]
    fn phase(&self) -> &'static str {
        self.inner.event.phase.as_str()
    }

    #[getter]
    fn token(&self) -> &'static str {
        self.inner.event.token.symbol()
    }

    #[getter]
    fn chain_id(&self) -> u64 {
        self.inner.event.chain_id
    }

    #[getter]
    fn amount(&self) -> &str {
        &self.inner.event.amount
    }

    #[getter]
    fn amount_usd(&self) -> f64 {
        self.inner.event.amount_usd
    }

    #[getter]
    fn destination<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.inner
            .event
            .destination
            .as_ref()
            .map(|d| destination_dict(py, &d.address, d.chain_id, None))
            .transpose()
    }

    #[getter]
    fn transaction_id(&self) -> Option<&str> {
        self.inner.event.transaction_id.as_deref()
    }

    #[getter]
    fn explorer_url(&self) -> Option<&str> {
        self.inner.event.explorer_url.as_deref()
    }

    #[getter]
    fn error(&self) -> Option<&str> {
        self.inner.event.error.as_deref()
    }

    #[getter]
    fn timestamp(&self) -> u64 {
        self.inner.event.timestamp
    }

    #[getter]
    fn created_at(&self) -> u64 {
        self.inner.created_at
    }

    #[getter]
    fn updated_at(&self) -> u64 {
        self.inner.updated_at
    }

    #[getter]
    fn refund(&self) -> Option<PyRefundResult> {
        self.inner.refund.clone().map(PyRefundResult::from)
    }

    #[getter]
    fn event(&self) -> PyLifecycleEvent {
        PyLifecycleEvent::from(self.inner.event.clone())
    }

    #[getter]
    fn is_terminal(&self) -> bool {
        self.inner.is_terminal()
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.inner)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let refund = match &self.inner.refund {
            Some(refund) => format!(" refund={}", py_repr(py, refund.status.as_str())?),
            None => String::new(),
        };
        Ok(format!(
            "<depositkit.Notification {} id={} {} {} on chain {}{refund}>",
            self.inner.event.phase.as_str(),
            py_repr(py, &self.inner.event.id)?,
            self.inner.event.amount,
            self.inner.event.token.symbol(),
            self.inner.event.chain_id
        ))
    }
}

/// `DepositClient.refund_config`: `{"enabled", "delay_ms", "max_attempts", "refund_to_sender"}`.
pub(crate) fn refund_config_dict<'py>(
    py: Python<'py>,
    config: &RefundConfig,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "enabled"), config.enabled)?;
    dict.set_item(intern!(py, "delay_ms"), config.delay_ms)?;
    dict.set_item(intern!(py, "max_attempts"), config.max_attempts)?;
    dict.set_item(intern!(py, "refund_to_sender"), config.refund_to_sender)?;
    Ok(dict)
}

/// `DepositClient.notifications_config`: `{"position", "theme", "duration_ms", "max",
/// "class_name"}`.
pub(crate) fn notifications_config_dict<'py>(
    py: Python<'py>,
    config: &NotificationsConfig,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "position"), config.position.as_str())?;
    dict.set_item(intern!(py, "theme"), config.theme.as_str())?;
    dict.set_item(intern!(py, "duration_ms"), config.duration_ms)?;
    dict.set_item(intern!(py, "max"), config.max)?;
    dict.set_item(intern!(py, "class_name"), config.class_name.as_deref())?;
    Ok(dict)
}

/// A decimal string of smallest units from the core as a Python `int`.
fn raw_text_to_py<'py>(py: Python<'py>, text: &str, what: &str) -> PyResult<Bound<'py, PyAny>> {
    let raw = text.parse::<U256>().map_err(|_| {
        to_py_err(
            py,
            Error::new(
                ErrorKind::Protocol,
                format!("{what} raw amount {} is not an integer", quote(text)),
            ),
        )
    })?;
    u256_to_py(py, raw)
}

// --- transaction history ------------------------------------------------------------------------

#[pyclass(module = "depositkit", name = "UATransaction", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyUaTransaction {
    inner: UaTransaction,
}

impl From<UaTransaction> for PyUaTransaction {
    fn from(inner: UaTransaction) -> Self {
        PyUaTransaction { inner }
    }
}

fn transactions_list<'py>(
    py: Python<'py>,
    transactions: &[UaTransaction],
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for transaction in transactions {
        list.append(Py::new(py, PyUaTransaction::from(transaction.clone()))?)?;
    }
    Ok(list)
}

#[pymethods]
impl PyUaTransaction {
    #[getter]
    fn transaction_id(&self) -> &str {
        &self.inner.transaction_id
    }

    #[getter]
    fn tag(&self) -> &str {
        &self.inner.tag
    }

    #[getter]
    fn status(&self) -> i64 {
        self.inner.status
    }

    #[getter]
    fn created_at(&self) -> &str {
        &self.inner.created_at
    }

    #[getter]
    fn updated_at(&self) -> &str {
        &self.inner.updated_at
    }

    // `from_chains` in Python; the Rust name avoids clippy's `from_*` convention.
    #[getter(from_chains)]
    fn source_chains(&self) -> Vec<u64> {
        self.inner.from_chains.clone()
    }

    #[getter]
    fn to_chains(&self) -> Vec<u64> {
        self.inner.to_chains.clone()
    }

    #[getter]
    fn quote_id(&self) -> Option<&str> {
        self.inner.quote_id.as_deref()
    }

    #[getter]
    fn deposit_id(&self) -> Option<&str> {
        self.inner.deposit_id.as_deref()
    }

    #[getter]
    fn target_token<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = &self.inner.target_token;
        let dict = PyDict::new(py);
        dict.set_item(intern!(py, "name"), &t.name)?;
        dict.set_item(intern!(py, "type"), &t.token_type)?;
        dict.set_item(intern!(py, "image"), &t.image)?;
        dict.set_item(intern!(py, "price"), t.price)?;
        dict.set_item(intern!(py, "symbol"), &t.symbol)?;
        dict.set_item(intern!(py, "address"), &t.address)?;
        dict.set_item(intern!(py, "asset_id"), &t.asset_id)?;
        dict.set_item(intern!(py, "chain_id"), t.chain_id)?;
        dict.set_item(intern!(py, "decimals"), t.decimals)?;
        dict.set_item(intern!(py, "real_decimals"), t.real_decimals)?;
        dict.set_item(intern!(py, "is_primary_token"), t.is_primary_token)?;
        dict.set_item(intern!(py, "is_smart_router_supported"), t.is_smart_router_supported)?;
        Ok(dict)
    }

    #[getter]
    fn change<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = &self.inner.change;
        let dict = PyDict::new(py);
        dict.set_item(intern!(py, "amount"), &c.amount)?;
        dict.set_item(intern!(py, "amount_in_usd"), &c.amount_in_usd)?;
        dict.set_item(intern!(py, "from"), &c.from)?;
        dict.set_item(intern!(py, "to"), &c.to)?;
        let raw = match c.raw_amount.as_deref() {
            Some(text) => Some(raw_text_to_py(py, text, "the transaction's")?),
            None => None,
        };
        dict.set_item(intern!(py, "raw_amount"), raw)?;
        Ok(dict)
    }

    #[getter]
    fn detail<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item(intern!(py, "red_packet_count"), self.inner.detail.red_packet_count)?;
        Ok(dict)
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.inner)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.UATransaction {} {} {} {} on chain {} status={}>",
            py_repr(py, &self.inner.tag)?,
            py_repr(py, &self.inner.transaction_id)?,
            self.inner.change.amount,
            self.inner.target_token.symbol,
            self.inner.target_token.chain_id,
            self.inner.status
        ))
    }
}

#[pyclass(module = "depositkit", name = "TransactionsResponse", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyTransactionsResponse {
    inner: TransactionsResponse,
}

impl From<TransactionsResponse> for PyTransactionsResponse {
    fn from(inner: TransactionsResponse) -> Self {
        PyTransactionsResponse { inner }
    }
}

#[pymethods]
impl PyTransactionsResponse {
    #[getter]
    fn transactions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        transactions_list(py, &self.inner.transactions)
    }

    #[getter]
    fn page(&self) -> u32 {
        self.inner.page
    }

    #[getter]
    fn page_size(&self) -> u32 {
        self.inner.page_size
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.inner)
    }

    fn __len__(&self) -> usize {
        self.inner.transactions.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<depositkit.TransactionsResponse page={} page_size={} with {} transactions>",
            self.inner.page,
            self.inner.page_size,
            self.inner.transactions.len()
        )
    }
}

#[pyclass(module = "depositkit", name = "TokenTransactionsResponse", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyTokenTransactionsResponse {
    inner: TokenTransactionsResponse,
}

impl From<TokenTransactionsResponse> for PyTokenTransactionsResponse {
    fn from(inner: TokenTransactionsResponse) -> Self {
        PyTokenTransactionsResponse { inner }
    }
}

#[pymethods]
impl PyTokenTransactionsResponse {
    #[getter]
    fn transactions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        transactions_list(py, &self.inner.transactions)
    }

    #[getter]
    fn next_page_token(&self) -> Option<&str> {
        self.inner.next_page_token.as_deref()
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.inner)
    }

    fn __len__(&self) -> usize {
        self.inner.transactions.len()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let next = match &self.inner.next_page_token {
            Some(token) => py_repr(py, token)?,
            None => "None".to_owned(),
        };
        Ok(format!(
            "<depositkit.TokenTransactionsResponse with {} transactions next_page_token={next}>",
            self.inner.transactions.len()
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

#[pyclass(module = "depositkit", name = "RefundEvent", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyRefundEvent {
    result: RefundResult,
}

#[pymethods]
impl PyRefundEvent {
    #[getter]
    fn r#type(&self) -> &'static str {
        "refund:update"
    }

    #[getter]
    fn result(&self) -> PyRefundResult {
        PyRefundResult::from(self.result.clone())
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.result)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.RefundEvent deposit_id={} status={}>",
            py_repr(py, &self.result.deposit_id)?,
            py_repr(py, self.result.status.as_str())?
        ))
    }
}

#[pyclass(module = "depositkit", name = "RecoveryEvent", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyRecoveryEvent {
    result: RecoveryResult,
}

#[pymethods]
impl PyRecoveryEvent {
    #[getter]
    fn r#type(&self) -> &'static str {
        "recovery:result"
    }

    #[getter]
    fn result(&self) -> PyRecoveryResult {
        PyRecoveryResult::from(self.result.clone())
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.result)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.RecoveryEvent {} {} on chain {} status={}>",
            self.result.amount,
            self.result.token.symbol(),
            self.result.chain_id,
            py_repr(py, self.result.status.as_str())?
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
        DepositEvent::Refund(result) => {
            Py::new(py, PyRefundEvent { result: result.clone() })?.into_any()
        }
        DepositEvent::Recovery(result) => {
            Py::new(py, PyRecoveryEvent { result: result.clone() })?.into_any()
        }
        DepositEvent::Onramp { name, payload } => {
            Py::new(py, PyOnrampEvent::new(*name, payload.clone()))?.into_any()
        }
        DepositEvent::OnrampComplete(order) => {
            Py::new(py, PyOnrampCompleteEvent::from(order.clone()))?.into_any()
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

/// A Python callable that Rust holds on behalf of a client (an event callback, a wallet
/// provider), visible to Python's garbage collector: the client's `__traverse__` visits it
/// ([`HeldCallable::traverse`]) and `__clear__` (or closing) drops it ([`HeldCallable::clear`]),
/// which breaks a cycle callable → client.
pub(crate) struct HeldCallable(Mutex<Option<Py<PyAny>>>);

impl HeldCallable {
    pub(crate) fn new(callable: Py<PyAny>) -> Self {
        HeldCallable(Mutex::new(Some(callable)))
    }

    /// Visits the callable. One locked right now (by a call that holds the GIL, hence never
    /// during a traversal on another thread) is skipped, which only makes the collector keep
    /// the objects longer.
    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(callable) = self.0.try_lock() {
            visit.call(callable.as_ref())?;
        }
        Ok(())
    }

    /// Drops the callable (returned, to be released attached); `get` then finds nothing.
    pub(crate) fn clear(&self) -> Option<Py<PyAny>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// A new reference to the callable, `None` once cleared. The lock is not held past this
    /// call: the callable may release the GIL, and a garbage collection on another thread may
    /// then need the lock (`__clear__`).
    pub(crate) fn get(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).as_ref().map(|c| c.clone_ref(py))
    }
}

/// A Python callable held for the event thread. The closure the core calls owns an `Arc` of the
/// slot, not the callable itself: the callable is reachable from Python's garbage collector
/// through the client's `__traverse__` ([`CallbackSlot::traverse`]), and `__clear__` (or
/// unsubscribing, or closing) empties the slot, which breaks a cycle callable → client.
pub(crate) struct CallbackSlot {
    callable: HeldCallable,
}

impl CallbackSlot {
    pub(crate) fn new(callable: Py<PyAny>) -> Arc<Self> {
        Arc::new(CallbackSlot { callable: HeldCallable::new(callable) })
    }

    /// Visits the callable (see [`HeldCallable::traverse`]).
    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.callable.traverse(visit)
    }

    /// Drops the callable; later events are no longer delivered to it.
    pub(crate) fn clear(&self) -> Option<Py<PyAny>> {
        self.callable.clear()
    }

    /// Calls the callable with the event `make` builds, on the calling (event) thread, attached
    /// to the interpreter for the call only. An exception goes to `sys.unraisablehook` with the
    /// callable as its object; nothing happens once the slot is empty or while the interpreter
    /// is shutting down.
    pub(crate) fn call(&self, make: impl FnOnce(Python<'_>) -> PyResult<Py<PyAny>>) {
        Python::try_attach(|py| {
            let Some(callable) = self.callable.get(py) else { return };
            if let Err(err) = make(py).and_then(|event| callable.call1(py, (event,))) {
                err.write_unraisable(py, Some(callable.bind(py)));
            }
        });
    }
}
