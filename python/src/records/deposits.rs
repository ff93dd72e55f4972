//! The deposit client's records of deposits and sweeps (spec §2): `DepositAddresses`,
//! `DetectedDeposit`, `SweepResult` and what a sweep delivered, `DeliveredAmount`.

use depositkit_core::deposit::DeliveredAmount;
use depositkit_core::{DepositAddresses, DetectedDeposit, SweepResult, SweepStatus};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{py_repr, raw_text_to_py};
use crate::conversions::u256_to_py;

py_record! {
    /// The deposit addresses of a client's account (spec §2): one EVM address (every EVM chain)
    /// and one Solana address. Immutable, equal when both addresses are equal, hashable.
    ///
    /// ``repr()`` is ``<depositkit.DepositAddresses evm='0x…' solana='…'>``.
    class "DepositAddresses" as PyDepositAddresses(DepositAddresses)
        hash by |a| (&a.evm, &a.solana);
    repr |a, py| {
        Ok(format!(
            "<depositkit.DepositAddresses evm={} solana={}>",
            py_repr(py, &a.evm)?,
            py_repr(py, &a.solana)?
        ))
    }
    getters {
        /// The EVM deposit address, EIP-55 checksummed.
        evm: "str" = |a| -> &str { &a.evm };
        /// The Solana deposit address (base58).
        solana: "str" = |a| -> &str { &a.solana };
    }
    methods {
        /// ``{"evm": ..., "solana": ...}`` (spec §2).
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, str]" = serde;
    }
}

py_record! {
    /// A deposit the watcher found that is not delivered yet (spec §2 ``DetectedDeposit``), as
    /// ``DepositClient.pending_deposits()`` lists it. Immutable; equal when every field is equal.
    class "DetectedDeposit" as PyDetectedDeposit(DetectedDeposit);
    repr |d, py| {
        Ok(format!(
            "<depositkit.DetectedDeposit id={} {} {} on chain {}>",
            py_repr(py, &d.id)?,
            d.amount,
            d.token.symbol(),
            d.chain_id
        ))
    }
    getters {
        /// The deposit's id (``dep_`` and 32 hex digits), the same in every lifecycle event.
        id: "str" = |d| -> &str { &d.id };
        /// The deposited token's symbol.
        token: "str" = |d| -> &'static str { d.token.symbol() };
        /// The chain it arrived on.
        chain_id: "int" = |d| -> u64 { d.chain_id };
        /// The amount, human-readable (``"0.01"``).
        amount: "str" = |d| -> &str { &d.amount };
        /// Its USD value at detection.
        amount_usd: "float" = |d| -> f64 { d.amount_usd };
        /// The amount in smallest units.
        raw_amount: "int" = |d, py| -> PyResult<Bound<'py, PyAny>> {
            u256_to_py(py, d.raw_amount)
        };
        /// Decimals of the token on the chain (USDC and USDT have 18 on BNB Chain).
        decimals: "int" = |d| -> u32 { d.decimals };
        /// When it was detected, unix milliseconds.
        detected_at: "int" = |d| -> u64 { d.detected_at };
    }
    methods {
        /// The spec's record: ``id``, ``token``, ``chainId``, ``amount``, ``amountUSD``,
        /// ``rawAmount`` (an ``int``), ``decimals``, ``detectedAt``.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}

py_record! {
    /// What a successful sweep delivered: the quote's fee-aware amount (``SweepResult.delivered``).
    /// ``value_usd - fees["total_usd"]`` at the destination token's price is the amount, to one
    /// smallest unit.
    class "DeliveredAmount" as PyDeliveredAmount(DeliveredAmount);
    repr |d, py| {
        Ok(format!(
            "<depositkit.DeliveredAmount {} {} to {} on chain {}>",
            d.amount,
            d.token.symbol(),
            py_repr(py, &d.address)?,
            d.chain_id
        ))
    }
    getters {
        /// The destination chain.
        chain_id: "int" = |d| -> u64 { d.chain_id };
        /// The delivered token's symbol.
        token: "str" = |d| -> &'static str { d.token.symbol() };
        /// The receiving address.
        address: "str" = |d| -> &str { &d.address };
        /// Delivered, in smallest units of the destination token.
        raw_amount: "int" = |d, py| -> PyResult<Bound<'py, PyAny>> {
            raw_text_to_py(py, &d.raw_amount, "delivered")
        };
        /// Delivered, human-readable.
        amount: "str" = |d| -> &str { &d.amount };
        /// Decimals of the delivered token on the destination chain.
        decimals: "int" = |d| -> u32 { d.decimals };
        /// The deposit's USD value at the quote's prices.
        value_usd: "float" = |d| -> f64 { d.value_usd };
        /// The quote's fees (a new ``dict`` on each access).
        fees: "_FeesDict" = |d, py| -> PyResult<Bound<'py, PyDict>> {
            let fees = &d.fees;
            let dict = PyDict::new(py);
            dict.set_item(intern!(py, "gas_usd"), fees.gas_usd)?;
            dict.set_item(intern!(py, "lp_usd"), fees.lp_usd)?;
            dict.set_item(intern!(py, "service_usd"), fees.service_usd)?;
            dict.set_item(intern!(py, "total_usd"), fees.total_usd)?;
            Ok(dict)
        };
        /// The executed quote.
        quote_id: "str" = |d| -> &str { &d.quote_id };
    }
    methods {
        /// ``chainId``, ``token``, ``address``, ``rawAmount`` (an ``int``), ``amount``,
        /// ``decimals``, ``valueUSD``, ``fees`` (``gasUSD``, ``lpUSD``, ``serviceUSD``,
        /// ``totalUSD``) and ``quoteId``.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}

py_record! {
    /// The outcome of sweeping one deposit (spec §2 ``SweepResult``), as ``DepositClient.sweep()``
    /// and ``DepositClient.sweep_result()`` return it. Immutable.
    ///
    /// ``status`` is ``"success"`` (delivered: ``transaction_id``, ``explorer_url`` and
    /// ``delivered`` are set), ``"failed"`` (nothing moved; ``error`` says why and the deposit
    /// stays pending for another ``sweep()``), or ``"pending"`` (the outcome of the send is
    /// unknown; ``error`` says so; a later ``sweep()`` of the deposit resolves it with the same
    /// quote, never a new one).
    class "SweepResult" as PySweepResult(SweepResult);
    repr |s, py| {
        Ok(format!(
            "<depositkit.SweepResult deposit_id={} status={}>",
            py_repr(py, &s.deposit_id)?,
            py_repr(py, sweep_status(s.status))?
        ))
    }
    getters {
        /// The deposit swept.
        deposit_id: "str" = |s| -> &str { &s.deposit_id };
        /// The delivering transaction, or ``None`` when there is none.
        transaction_id: "Optional[str]" = |s| -> Option<&str> { non_empty(&s.transaction_id) };
        /// A block-explorer link to it, or ``None``.
        explorer_url: "Optional[str]" = |s| -> Option<&str> { non_empty(&s.explorer_url) };
        /// The outcome.
        status: r#"Literal["success", "failed", "pending"]"# = |s| -> &'static str {
            sweep_status(s.status)
        };
        /// Why it failed or why its outcome is unknown; ``None`` on success.
        error: "Optional[str]" = |s| -> Option<&str> { s.error.as_deref() };
        /// What was delivered (on success), else ``None``.
        delivered: "Optional[DeliveredAmount]" = |s| -> Option<PyDeliveredAmount> {
            s.delivered.clone().map(PyDeliveredAmount::from)
        };
    }
    methods {
        /// The spec's record: ``depositId``, ``transactionId`` and ``explorerUrl`` (``""`` when
        /// there is none), ``status``, ``error`` (only when set) and ``delivered`` (only on
        /// success; see ``DeliveredAmount.to_dict``).
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}

/// `text`, or `None` when it is empty (the spec's `""` for "none").
fn non_empty(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

/// The Python name of a sweep's status.
fn sweep_status(status: SweepStatus) -> &'static str {
    match status {
        SweepStatus::Success => "success",
        SweepStatus::Failed => "failed",
        SweepStatus::Pending => "pending",
    }
}
