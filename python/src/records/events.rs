//! The deposit client's events (spec §2): `DepositLifecycleEvent` (`deposit:lifecycle`),
//! `StatusChangedEvent` (`status:change`), `ErrorEvent` (`error`), `RefundEvent`
//! (`refund:update`) and `RecoveryEvent` (`recovery:result`). `crate::events::event_to_py` makes
//! the one of an event; the onramp's events are in [`super::onramp`].

use depositkit_core::deposit::{DepositLifecycleEvent, RecoveryResult, RefundResult};
use depositkit_core::{ClientStatus, Error, ErrorKind};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::refunds::{PyRecoveryResult, PyRefundResult};
use super::{destination_dict, py_repr};
use crate::errors::to_py_err;

/// What an `error` event reports: the kind of the failure and its message.
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct ErrorReport {
    pub(crate) kind: ErrorKind,
    pub(crate) message: String,
}

/// A lifecycle event's destination as `{"address", "chain_id"}`, or `None`.
pub(crate) fn event_destination<'py>(
    py: Python<'py>,
    event: &DepositLifecycleEvent,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    event
        .destination
        .as_ref()
        .map(|d| destination_dict(py, &d.address, d.chain_id, None))
        .transpose()
}

py_record! {
    /// A deposit entering a phase (spec §2 ``DepositLifecycleEvent``; the ``deposit:lifecycle``
    /// event). ``id`` is the same in every phase of one deposit. Immutable.
    ///
    /// A deposit goes ``detected`` → ``processing`` (again at each retry of its sweep) →
    /// ``credited`` or ``failed``; a deposit worth less than the minimum is reported
    /// ``below_threshold`` instead and never swept. On a chain with a chain watcher
    /// (``chain_rpc_urls``; ``docs/finality.md``) it goes ``seen`` → ``confirming`` (with
    /// ``confirmations``) → ``confirmed`` → ``processing`` → …, or ``reorged`` when a
    /// reorganisation removed its transfer first (never swept or credited).
    ///
    /// ``repr()`` is
    /// ``<depositkit.DepositLifecycleEvent credited id='dep_…' 0.01 ETH on chain 8453>``.
    class "DepositLifecycleEvent" as PyLifecycleEvent(DepositLifecycleEvent);
    repr |e, py| {
        Ok(format!(
            "<depositkit.DepositLifecycleEvent {} id={} {} {} on chain {}>",
            e.phase.as_str(),
            py_repr(py, &e.id)?,
            e.amount,
            e.token.symbol(),
            e.chain_id
        ))
    }
    getters {
        /// The event's type.
        r#type: r#"Literal["deposit:lifecycle"]"# = |_e| -> &'static str { "deposit:lifecycle" };
        /// The deposit's id.
        id: "str" = |e| -> &str { &e.id };
        /// The phase the deposit entered.
        phase: "_DepositPhase" = |e| -> &'static str { e.phase.as_str() };
        /// The deposited token's symbol.
        token: "str" = |e| -> &'static str { e.token.symbol() };
        /// The chain it arrived on.
        chain_id: "int" = |e| -> u64 { e.chain_id };
        /// The deposited amount, human-readable.
        amount: "str" = |e| -> &str { &e.amount };
        /// Its USD value at detection.
        amount_usd: "float" = |e| -> f64 { e.amount_usd };
        /// Where it goes (the destination at the time of the event), or ``None``.
        destination: "Optional[_EventDestinationDict]"
            = |e, py| -> PyResult<Option<Bound<'py, PyDict>>> { event_destination(py, e) };
        /// The delivering transaction; set on ``credited``.
        transaction_id: "Optional[str]" = |e| -> Option<&str> { e.transaction_id.as_deref() };
        /// A block-explorer link to it; set on ``credited`` when the chain has an explorer.
        explorer_url: "Optional[str]" = |e| -> Option<&str> { e.explorer_url.as_deref() };
        /// Why the sweep failed (``failed``) or why the deposit is below the threshold.
        error: "Optional[str]" = |e| -> Option<&str> { e.error.as_deref() };
        /// When the phase was entered, unix milliseconds.
        timestamp: "int" = |e| -> u64 { e.timestamp };
        /// On a watched chain: the blocks (slots) over its transfer, its own counted, when its
        /// chain reported the transfer; else ``None``.
        confirmations: "Optional[int]" = |e| -> Option<u64> { e.confirmations };
        /// On a watched chain: the confirmations its chain's rule asks for; ``None`` for a rule
        /// of the chain's ``safe`` / ``finalized`` head, and off watched chains.
        required_confirmations: "Optional[int]" = |e| -> Option<u64> { e.required_confirmations };
        /// On a watched chain: the transaction (signature) that brought it, when its chain
        /// reported it; else ``None``.
        source_tx_hash: "Optional[str]" = |e| -> Option<&str> { e.source_tx_hash.as_deref() };
    }
    methods {
        /// The spec's record, camelCase: ``id``, ``phase``, ``token``, ``chainId``, ``amount``,
        /// ``amountUSD``, ``timestamp``, and when set ``destination`` (``{"address", "chainId"}``),
        /// ``transactionId``, ``explorerUrl``, ``error``, ``confirmations``,
        /// ``requiredConfirmations``, ``sourceTxHash``. JSON-ready.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}

py_record! {
    /// The client's status changed (the ``status:change`` event). Immutable, hashable.
    class "StatusChangedEvent" as PyStatusChangedEvent(ClientStatus) hash by |s| s;
    repr |s| {
        Ok(format!("<depositkit.StatusChangedEvent status='{}'>", s.as_str()))
    }
    getters {
        /// The event's type.
        r#type: r#"Literal["status:change"]"# = |_s| -> &'static str { "status:change" };
        /// The new status.
        status: "_ClientStatusName" = |s| -> &'static str { s.as_str() };
    }
    methods {
        /// ``{"status": ...}``.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, str]" = |s, py| -> PyResult<Bound<'py, PyDict>> {
            let dict = PyDict::new(py);
            dict.set_item(intern!(py, "status"), s.as_str())?;
            Ok(dict)
        };
    }
}

py_record! {
    /// Something failed in the background (the ``error`` event): a poll of the watcher, or a
    /// ``poll_now()`` (which also raises). Immutable, hashable.
    class "ErrorEvent" as PyErrorEvent(ErrorReport) hash by |e| e;
    repr |e, py| {
        Ok(format!(
            "<depositkit.ErrorEvent kind='{}' message={}>",
            e.kind.class_name(),
            py_repr(py, &e.message)?
        ))
    }
    getters {
        /// The event's type.
        r#type: r#"Literal["error"]"# = |_e| -> &'static str { "error" };
        /// The name of the exception class of the failure (``"UniversalAccountError"``).
        kind: "str" = |e| -> &'static str { e.kind.class_name() };
        /// The stable code of that class (``DepositSDKError.code``).
        code: "int" = |e| -> u32 { e.kind.code() };
        /// What failed and why.
        message: "str" = |e| -> &str { &e.message };
    }
    methods {
        /// The exception of ``kind`` with ``message``, built (not raised), for example to
        /// re-raise it.
        exception: "DepositSDKError" = |e, py| -> Bound<'py, PyAny> {
            to_py_err(py, Error::new(e.kind, e.message.clone()))
                .into_value(py)
                .into_bound(py)
                .into_any()
        };
        /// ``{"kind": ..., "code": ..., "message": ...}``.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = |e, py| -> PyResult<Bound<'py, PyDict>> {
            let dict = PyDict::new(py);
            dict.set_item(intern!(py, "kind"), e.kind.class_name())?;
            dict.set_item(intern!(py, "code"), e.kind.code())?;
            dict.set_item(intern!(py, "message"), &e.message)?;
            Ok(dict)
        };
    }
}

py_record! {
    /// A refund changed status (the ``refund:update`` event): ``pending`` → ``processing`` →
    /// (``pending`` → ``processing`` … for automatic retries) → ``success``, ``failed`` or
    /// ``skipped``. Immutable.
    ///
    /// ``repr()`` is ``<depositkit.RefundEvent deposit_id='dep_…' status='processing'>``.
    class "RefundEvent" as PyRefundEvent(RefundResult);
    repr |r, py| {
        Ok(format!(
            "<depositkit.RefundEvent deposit_id={} status={}>",
            py_repr(py, &r.deposit_id)?,
            py_repr(py, r.status.as_str())?
        ))
    }
    getters {
        /// The event's type.
        r#type: r#"Literal["refund:update"]"# = |_r| -> &'static str { "refund:update" };
        /// The refund as it is now.
        result: "RefundResult" = |r| -> PyRefundResult { PyRefundResult::from(r.clone()) };
    }
    methods {
        /// The refund's record: ``result.to_dict()``.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}

py_record! {
    /// One asset of ``recover_funds()`` is done (the ``recovery:result`` event), in the order
    /// of the returned list. Immutable.
    ///
    /// ``repr()`` is ``<depositkit.RecoveryEvent 4 USDC on chain 8453 status='success'>``.
    class "RecoveryEvent" as PyRecoveryEvent(RecoveryResult);
    repr |r, py| {
        Ok(format!(
            "<depositkit.RecoveryEvent {} {} on chain {} status={}>",
            r.amount,
            r.token.symbol(),
            r.chain_id,
            py_repr(py, r.status.as_str())?
        ))
    }
    getters {
        /// The event's type.
        r#type: r#"Literal["recovery:result"]"# = |_r| -> &'static str { "recovery:result" };
        /// The asset's recovery.
        result: "RecoveryResult" = |r| -> PyRecoveryResult { PyRecoveryResult::from(r.clone()) };
    }
    methods {
        /// The recovery's record: ``result.to_dict()``.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}
