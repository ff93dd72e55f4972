//! Fund-from-wallet for Python (`docs/funding.md` §3–4): the records `FundingBalance` and
//! `FundingTransferResult`, and the argument handling of the `DepositClient` methods
//! `set_evm_wallet`, `set_solana_wallet`, `set_balance_provider` and `fund_from_wallet` (the
//! methods themselves sit in `deposit.rs`, pyo3 allowing one `#[pymethods]` block per class).
//!
//! `FundingBalance` has no constructor: only `get_wallet_balances()` makes one, and only the
//! client that made it accepts it back (the core checks; another client's balance is an
//! `InvalidArgumentError`).

use depositkit_core::U256;
use depositkit_core::funding::{FundingBalance, FundingTransferResult};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::conversions::{given, named_amount_arg, str_arg, type_name, u256_to_py};
use crate::events::{py_repr, record_to_dict};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyFundingBalance>()?;
    m.add_class::<PyFundingTransferResult>()?;
    Ok(())
}

/// What `set_evm_wallet` was given as its provider.
pub(crate) enum EvmProviderArg {
    /// A JSON-RPC URL of a node holding the wallet's unlocked account.
    Url(String),
    /// A callable `(method, params) -> result`.
    Callable(Py<PyAny>),
}

/// `set_evm_wallet`'s provider: a URL (`str`) or a callable.
pub(crate) fn evm_provider_arg(obj: &Bound<'_, PyAny>) -> PyResult<EvmProviderArg> {
    if obj.is_instance_of::<PyString>() {
        return Ok(EvmProviderArg::Url(str_arg(obj, "provider")?.into_owned()));
    }
    if obj.is_callable() {
        return Ok(EvmProviderArg::Callable(obj.clone().unbind()));
    }
    Err(PyTypeError::new_err(format!(
        "provider must be a JSON-RPC URL (str) or a callable (method, params) -> result, not {}",
        type_name(obj)
    )))
}

/// A provider that must be callable (`set_solana_wallet`, `set_balance_provider`).
pub(crate) fn callable_arg(obj: &Bound<'_, PyAny>, shape: &str) -> PyResult<Py<PyAny>> {
    if obj.is_callable() {
        return Ok(obj.clone().unbind());
    }
    Err(PyTypeError::new_err(format!(
        "provider must be a callable {shape}, not {}",
        type_name(obj)
    )))
}

/// `fund_from_wallet`'s balance: a `FundingBalance`.
pub(crate) fn balance_arg(obj: &Bound<'_, PyAny>) -> PyResult<FundingBalance> {
    match obj.cast::<PyFundingBalance>() {
        Ok(balance) => Ok(balance.get().inner.clone()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "balance must be a FundingBalance from get_wallet_balances(), not {}",
            type_name(obj)
        ))),
    }
}

/// `fund_from_wallet`'s amount: `None` (the maximum) or an `int` from 0 to 2^256 - 1.
pub(crate) fn raw_amount_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<U256>> {
    given(obj).map(|o| named_amount_arg(o, "raw_amount")).transpose()
}

// --- records ----------------------------------------------------------------------------------

#[pyclass(module = "depositkit", name = "FundingBalance", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyFundingBalance {
    inner: FundingBalance,
}

impl From<FundingBalance> for PyFundingBalance {
    fn from(inner: FundingBalance) -> Self {
        PyFundingBalance { inner }
    }
}

#[pymethods]
impl PyFundingBalance {
    #[getter]
    fn chain_id(&self) -> u64 {
        self.inner.chain_id()
    }

    #[getter]
    fn token(&self) -> &'static str {
        self.inner.token().symbol()
    }

    #[getter]
    fn token_address(&self) -> Option<&str> {
        self.inner.token_address()
    }

    #[getter]
    fn is_native(&self) -> bool {
        self.inner.is_native()
    }

    #[getter]
    fn decimals(&self) -> u8 {
        self.inner.decimals()
    }

    #[getter]
    fn raw_amount<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        u256_to_py(py, self.inner.raw_amount())
    }

    #[getter]
    fn amount(&self) -> &str {
        self.inner.amount()
    }

    #[getter]
    fn price_usd(&self) -> Option<f64> {
        self.inner.price_usd()
    }

    #[getter]
    fn value_usd(&self) -> Option<f64> {
        self.inner.value_usd()
    }

    #[getter]
    fn wallet_address(&self) -> &str {
        self.inner.wallet_address()
    }

    #[getter]
    fn source(&self) -> &'static str {
        self.inner.source().as_str()
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        record_to_dict(py, &self.inner)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.FundingBalance {} {} on chain {} wallet={} source={}>",
            self.inner.amount(),
            self.inner.token().symbol(),
            self.inner.chain_id(),
            py_repr(py, self.inner.wallet_address())?,
            py_repr(py, self.inner.source().as_str())?
        ))
    }
}

#[pyclass(module = "depositkit", name = "FundingTransferResult", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyFundingTransferResult {
    inner: FundingTransferResult,
}

impl From<FundingTransferResult> for PyFundingTransferResult {
    fn from(inner: FundingTransferResult) -> Self {
        PyFundingTransferResult { inner }
    }
}

#[pymethods]
impl PyFundingTransferResult {
    #[getter]
    fn tx_hash(&self) -> &str {
        &self.inner.tx_hash
    }

    #[getter]
    fn chain_id(&self) -> u64 {
        self.inner.chain_id
    }

    #[getter]
    fn token(&self) -> &'static str {
        self.inner.token.symbol()
    }

    #[getter]
    fn raw_amount<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        u256_to_py(py, self.inner.raw_amount)
    }

    #[getter]
    fn amount(&self) -> &str {
        &self.inner.amount
    }

    #[getter(from_address)]
    fn sender(&self) -> &str {
        &self.inner.from
    }

    #[getter(to_address)]
    fn receiver(&self) -> &str {
        &self.inner.to
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        record_to_dict(py, &self.inner)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.FundingTransferResult {} {} on chain {} tx_hash={}>",
            self.inner.amount,
            self.inner.token.symbol(),
            self.inner.chain_id,
            py_repr(py, &self.inner.tx_hash)?
        ))
    }
}
