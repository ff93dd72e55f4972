//! The deposit client's records of refunds, recovery and notifications (spec §2):
//! `RefundResult`, `RefundEligibility`, `RecoveryResult` and `Notification`.

use depositkit_core::deposit::{
    NotificationRecord, RecoveryResult, RefundEligibility, RefundResult,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::deposits::PyDeliveredAmount;
use super::events::{PyLifecycleEvent, event_destination};
use super::{py_repr, py_repr_or_none, raw_text_to_py, records_list};

py_record! {
    /// A refund of one deposit (spec §2 ``RefundResult``), as ``DepositClient.refund()`` and
    /// ``refund_result()`` return it and ``RefundEvent.result`` reports each of its updates.
    /// Immutable; equal when every field is equal.
    ///
    /// The refund goes back on the deposit's own chain (``source_chain_id``) in its own token, less
    /// the gas; ``delivered_amount`` is what the receiver got.
    ///
    /// ``repr()`` is ``<depositkit.RefundResult deposit_id='dep_…' status='success'
    /// reason='sweep_failed'>``.
    class "RefundResult" as PyRefundResult(RefundResult);
    repr |r, py| {
        Ok(format!(
            "<depositkit.RefundResult deposit_id={} status={} reason={}>",
            py_repr(py, &r.deposit_id)?,
            py_repr(py, r.status.as_str())?,
            py_repr(py, r.reason.as_str())?
        ))
    }
    getters {
        /// The deposit refunded.
        deposit_id: "str" = |r| -> &str { &r.deposit_id };
        /// The deposit's token symbol (refunded in the same token).
        token: "str" = |r| -> &'static str { r.token.symbol() };
        /// The deposit's chain (refunded on the same chain).
        source_chain_id: "int" = |r| -> u64 { r.source_chain_id };
        /// The deposit's amount, human-readable: what leaves the account.
        amount: "str" = |r| -> &str { &r.amount };
        /// Its USD value at detection.
        amount_usd: "float" = |r| -> f64 { r.amount_usd };
        /// Where the refund is.
        status: "_RefundStatusName" = |r| -> &'static str { r.status.as_str() };
        /// Why it is refunded (``sweep_failed``, ``user_requested``) or why it was skipped
        /// (``address_type_mismatch``, ``below_minimum``).
        reason: "_RefundReasonName" = |r| -> &'static str { r.reason.as_str() };
        /// The refund's transaction, on ``success``.
        tx_hash: "Optional[str]" = |r| -> Option<&str> { r.tx_hash.as_deref() };
        /// What went wrong: on ``failed`` and ``skipped``, and on a ``pending`` update after a
        /// failed attempt (``"… attempt 1 of 3 failed …"``) or an unknown send outcome
        /// (``"… is unknown …"``).
        error: "Optional[str]" = |r| -> Option<&str> { r.error.as_deref() };
        /// The receiver, once chosen: the original sender or the owner.
        refunded_to: "Optional[str]" = |r| -> Option<&str> { r.refunded_to.as_deref() };
        /// Whether ``refunded_to`` is the deposit's original sender (else the owner).
        refunded_to_sender: "Optional[bool]" = |r| -> Option<bool> { r.refunded_to_sender };
        /// Attempts made so far (depositkit's addition).
        attempts: "int" = |r| -> u32 { r.attempts };
        /// What the receiver got, human-readable, after the gas; on ``success`` (depositkit's
        /// addition).
        delivered_amount: "Optional[str]" = |r| -> Option<&str> { r.delivered_amount.as_deref() };
        /// A block-explorer link to ``tx_hash`` when the chain has one (depositkit's addition).
        explorer_url: "Optional[str]" = |r| -> Option<&str> { r.explorer_url.as_deref() };
        /// The refund quote last sent (depositkit's addition). A ``pending`` refund with an
        /// unknown outcome is resolved with this same quote, never a new one.
        quote_id: "Optional[str]" = |r| -> Option<&str> { r.quote_id.as_deref() };
    }
    methods {
        /// The spec's record, camelCase: ``depositId``, ``token``, ``sourceChainId``, ``amount``,
        /// ``amountUSD``, ``status``, ``reason``, ``attempts``, and when set ``txHash``, ``error``,
        /// ``refundedTo``, ``refundedToSender``, ``deliveredAmount``, ``explorerUrl``, ``quoteId``.
        /// JSON-ready.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}

py_record! {
    /// Whether a deposit can be refunded now, and to whom (spec §4 ``canRefund``), as
    /// ``DepositClient.can_refund()`` answers it. Immutable.
    ///
    /// ``repr()`` is ``<depositkit.RefundEligibility eligible=True reason='user_requested'
    /// message='…'>``.
    class "RefundEligibility" as PyRefundEligibility(RefundEligibility);
    repr |e, py| {
        Ok(format!(
            "<depositkit.RefundEligibility eligible={} reason={} message={}>",
            if e.eligible { "True" } else { "False" },
            py_repr_or_none(py, e.reason.map(|r| r.as_str()))?,
            py_repr(py, &e.message)?
        ))
    }
    getters {
        /// Whether ``refund(id)`` would try to send the money back now.
        eligible: "bool" = |e| -> bool { e.eligible };
        /// When eligible: the reason a refund would carry (``sweep_failed`` after a failed sweep,
        /// else ``user_requested``). When not: ``address_type_mismatch`` or ``below_minimum`` if
        /// one of them is why, else ``None`` (``message`` says why: being swept, credited, already
        /// refunded, unknown sweep outcome, not found).
        reason: "Optional[_RefundReasonName]" = |e| -> Option<&'static str> {
            e.reason.map(|r| r.as_str())
        };
        /// Why, in words (always set when not eligible).
        message: "str" = |e| -> &str { &e.message };
        /// Who would receive the refund.
        refund_address: "Optional[str]" = |e| -> Option<&str> { e.refund_address.as_deref() };
        /// Whether that is the deposit's original sender (else the owner).
        refund_to_sender: "Optional[bool]" = |e| -> Option<bool> { e.refund_to_sender };
    }
    methods {
        /// The spec's record, camelCase: ``eligible``, ``message``, and when set ``reason``,
        /// ``refundAddress``, ``refundToSender``.
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}

py_record! {
    /// The recovery of one asset's stuck funds (spec §2 ``RecoveryResult``), as
    /// ``DepositClient.recover_funds()`` returns it and ``RecoveryEvent.result`` reports it.
    /// Immutable.
    ///
    /// ``status`` is ``"success"`` (swept to the destination: ``tx_hash`` and ``delivered`` are
    /// set), ``"failed"`` (``error`` says why; the money stays in the account) or ``"skipped"``
    /// (dust worth $0.10 or less — ``error`` starts ``"Dust"`` —, or worth less than the fees —
    /// ``"Below minimum"``).
    ///
    /// ``repr()`` is ``<depositkit.RecoveryResult 4 USDC on chain 8453 status='success'>``.
    class "RecoveryResult" as PyRecoveryResult(RecoveryResult);
    repr |r, py| {
        Ok(format!(
            "<depositkit.RecoveryResult {} {} on chain {} status={}>",
            r.amount,
            r.token.symbol(),
            r.chain_id,
            py_repr(py, r.status.as_str())?
        ))
    }
    getters {
        /// The token's symbol.
        token: "str" = |r| -> &'static str { r.token.symbol() };
        /// The chain it sat on.
        chain_id: "int" = |r| -> u64 { r.chain_id };
        /// The stuck amount, human-readable.
        amount: "str" = |r| -> &str { &r.amount };
        /// Its USD value.
        amount_usd: "float" = |r| -> f64 { r.amount_usd };
        /// The stuck amount in smallest units (depositkit's addition).
        raw_amount: "int" = |r, py| -> PyResult<Bound<'py, PyAny>> {
            raw_text_to_py(py, &r.raw_amount, "recovered")
        };
        /// The outcome.
        status: "_RecoveryStatusName" = |r| -> &'static str { r.status.as_str() };
        /// Why it failed or was skipped.
        error: "Optional[str]" = |r| -> Option<&str> { r.error.as_deref() };
        /// The sweep's transaction, on ``success``.
        tx_hash: "Optional[str]" = |r| -> Option<&str> { r.tx_hash.as_deref() };
        /// What was delivered, on ``success`` (depositkit's addition).
        delivered: "Optional[DeliveredAmount]" = |r| -> Option<PyDeliveredAmount> {
            r.delivered.clone().map(PyDeliveredAmount::from)
        };
    }
    methods {
        /// The spec's record, camelCase: ``token``, ``chainId``, ``amount``, ``amountUSD``,
        /// ``status``, ``rawAmount`` (an ``int``), and when set ``error``, ``txHash``,
        /// ``delivered`` (see ``DeliveredAmount.to_dict``).
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}

py_record! {
    /// One deposit's notification record: the headless equivalent of a toast of the spec's
    /// ``DepositNotifications`` (spec §2), as ``DepositClient.notifications()`` lists them and
    /// ``subscribe_notifications()`` callbacks receive them. Immutable.
    ///
    /// A record is the deposit's latest lifecycle event (its fields are the record's attributes)
    /// plus ``created_at``, ``updated_at`` and the deposit's latest refund update. There is one
    /// record per deposit, updated in place as the deposit moves through its phases; at most
    /// ``max`` records are kept (a new deposit beyond that drops the oldest record); a *terminal*
    /// record (``credited``, ``failed`` or ``below_threshold``, with no refund pending or
    /// processing) is dismissed ``duration_ms`` after its last update (``0``: never);
    /// ``dismiss_notification(id)`` removes one at once, and a later event of that deposit creates
    /// a new record.
    ///
    /// ``repr()`` is ``<depositkit.Notification failed id='dep_…' 5 USDC on chain 8453
    /// refund='success'>``.
    class "Notification" as PyNotification(NotificationRecord);
    repr |n, py| {
        let refund = match &n.refund {
            Some(refund) => format!(" refund={}", py_repr(py, refund.status.as_str())?),
            None => String::new(),
        };
        Ok(format!(
            "<depositkit.Notification {} id={} {} {} on chain {}{refund}>",
            n.event.phase.as_str(),
            py_repr(py, &n.event.id)?,
            n.event.amount,
            n.event.token.symbol(),
            n.event.chain_id
        ))
    }
    getters {
        /// The deposit's id.
        id: "str" = |n| -> &str { &n.event.id };
        /// The deposit's latest phase.
        phase: "_DepositPhase" = |n| -> &'static str { n.event.phase.as_str() };
        /// The deposited token's symbol.
        token: "str" = |n| -> &'static str { n.event.token.symbol() };
        /// The chain it arrived on.
        chain_id: "int" = |n| -> u64 { n.event.chain_id };
        /// The deposited amount, human-readable.
        amount: "str" = |n| -> &str { &n.event.amount };
        /// Its USD value at detection.
        amount_usd: "float" = |n| -> f64 { n.event.amount_usd };
        /// Where it goes, or ``None``.
        destination: "Optional[_EventDestinationDict]"
            = |n, py| -> PyResult<Option<Bound<'py, PyDict>>> { event_destination(py, &n.event) };
        /// The delivering transaction; set once ``credited``.
        transaction_id: "Optional[str]" = |n| -> Option<&str> { n.event.transaction_id.as_deref() };
        /// A block-explorer link to it.
        explorer_url: "Optional[str]" = |n| -> Option<&str> { n.event.explorer_url.as_deref() };
        /// Why the sweep failed, or why the deposit is below the threshold.
        error: "Optional[str]" = |n| -> Option<&str> { n.event.error.as_deref() };
        /// When the latest phase was entered, unix milliseconds.
        timestamp: "int" = |n| -> u64 { n.event.timestamp };
        /// When the record was created, unix milliseconds.
        created_at: "int" = |n| -> u64 { n.created_at };
        /// When it last changed (a phase or a refund update), unix milliseconds.
        updated_at: "int" = |n| -> u64 { n.updated_at };
        /// The deposit's latest refund update, if it is being (or was) refunded (depositkit's
        /// addition).
        refund: "Optional[RefundResult]" = |n| -> Option<PyRefundResult> {
            n.refund.clone().map(PyRefundResult::from)
        };
        /// The deposit's latest lifecycle event itself.
        event: "DepositLifecycleEvent" = |n| -> PyLifecycleEvent {
            PyLifecycleEvent::from(n.event.clone())
        };
        /// Whether the deposit's story is over (so the record is due for auto-dismissal).
        is_terminal: "bool" = |n| -> bool { n.is_terminal() };
    }
    methods {
        /// The spec's record, camelCase: the lifecycle event's fields (see
        /// ``DepositLifecycleEvent.to_dict``) plus ``createdAt``, ``updatedAt`` and, when set,
        /// ``refund`` (see ``RefundResult.to_dict``).
        ///
        /// Returns:
        ///     A new ``dict``.
        to_dict: "dict[str, Any]" = serde;
    }
}

/// The records as a Python `list` of `Notification`s (what a notifications callback gets).
pub(crate) fn notifications_to_py<'py>(
    py: Python<'py>,
    records: &[NotificationRecord],
) -> PyResult<Bound<'py, PyList>> {
    records_list::<_, PyNotification>(py, records)
}
