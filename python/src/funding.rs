//! Fund-from-wallet for Python (`docs/funding.md` §3–4): the argument handling of the
//! `DepositClient` methods `set_evm_wallet`, `set_solana_wallet`, `set_balance_provider` and
//! `fund_from_wallet` (the methods themselves sit in `deposit.rs`, pyo3 allowing one
//! `#[pymethods]` block per class). The records `FundingBalance` and `FundingTransferResult` are
//! declared in [`crate::records::funding`].

use depositkit_core::U256;
use depositkit_core::funding::FundingBalance;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::conversions::{given, named_amount_arg, str_arg, type_name};
pub(crate) use crate::records::funding::{PyFundingBalance, PyFundingTransferResult};

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
