//! `DepositClient`'s refunds and recovery of stuck funds.

use super::*;

impl DepositClient {
    /// Refunds a deposit that is not delivered (spec §4 `refund`): always available, whatever
    /// `refund.enabled` says. One attempt, through the client's serial executor (never at the
    /// same time as a sweep): the receiver is the deposit's original sender when
    /// `refund.refund_to_sender` and exactly one sender of a fitting address type is known,
    /// else the owner when its address type fits the source chain; the money goes back on the
    /// source chain in the deposit's token, less the gas. A deposit whose earlier sweep or
    /// refund has an unknown outcome is resolved with that same quote first: a sweep that
    /// turns out delivered makes the deposit credited, never refunded.
    ///
    /// Returns the refund's final state — `success`, `failed` (nothing moved), `skipped`
    /// (`reason` `address_type_mismatch` or `below_minimum`; nothing moved), or `pending` when
    /// the send's outcome could not be learned (it is then resolved automatically). Events
    /// [`DepositEvent::Refund`] report each status on the way.
    ///
    /// # Errors
    /// [`ErrorKind::Refund`] when the deposit was credited, was already refunded, or is being
    /// swept or refunded now; [`ErrorKind::NotFound`] for an unknown id;
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::Timeout`].
    pub fn refund(&self, deposit_id: &str, reason: RefundReason) -> Result<RefundResult> {
        self.wait_for(self.queue_refund(deposit_id, reason))
    }

    /// Whether [`refund`](DepositClient::refund) would try to send deposit `deposit_id` back
    /// now, and to whom (spec §4 `canRefund`). Reads the deposit's senders and prices the
    /// refund (a quote moves nothing), so `below_minimum` is known. It gives the answer
    /// [`refund`](DepositClient::refund) acts on (both ask the deposit machine's `admits`): a
    /// deposit being swept now, already being refunded, credited or refunded is not eligible
    /// (`message` says why); one whose earlier send's outcome is unknown is eligible, and
    /// `refund` resolves that send with its same quote first (`message` says so).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::UniversalAccount`]
    /// when the senders or the price cannot be read; [`ErrorKind::Timeout`].
    pub fn can_refund(&self, deposit_id: &str) -> Result<RefundEligibility> {
        self.wait_for(self.admit_can_refund(deposit_id))
    }

    /// The latest refund update of `deposit_id` (in progress or final), if it was ever
    /// refunded or tried.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn refund_result(&self, deposit_id: &str) -> Result<Option<RefundResult>> {
        self.inner.guard(ClientCall::RefundResult)?;
        let state = self.inner.state();
        Ok(state
            .deposits
            .get(deposit_id)
            .and_then(|r| r.refund.as_ref().map(|p| p.last.clone()))
            .or_else(|| state.refunds.get(deposit_id).cloned()))
    }

    /// The auto-refund settings.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn refund_config(&self) -> Result<RefundConfig> {
        self.inner.guard(ClientCall::RefundConfig)?;
        Ok(self.inner.config.refund.clone())
    }

    /// Funds in the account that no live deposit of this client explains — left by failed
    /// sweeps, deposits below the thresholds or of unsupported tokens — one entry per chain
    /// and token (id `recovery:<token>:<chainId>`, `amount` human-readable, `raw_amount`, USD
    /// value at the service's price). Deposits still being swept, refunded, or waiting for a
    /// manual sweep are not stuck. Runs a poll first (new deposits are registered, not listed).
    /// Dust is listed too; [`recover_funds`](DepositClient::recover_funds) skips it.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::UniversalAccount`];
    /// [`ErrorKind::Timeout`].
    pub fn stuck_funds(&self) -> Result<Vec<DetectedDeposit>> {
        self.wait_for(self.admit_stuck_funds())
    }

    /// Sweeps every stuck asset ([`stuck_funds`](DepositClient::stuck_funds)) to the current
    /// destination, through the serial executor, and returns one [`RecoveryResult`] per asset:
    /// `success` (with `tx_hash`), `failed` (with `error`), or `skipped` (dust ≤ $0.10, or worth
    /// less than the fees). Deposits whose failed sweeps left the money become `credited`.
    /// Each result is also a [`DepositEvent::Recovery`]; the status is `sweeping` meanwhile.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] before initialization; [`ErrorKind::UniversalAccount`] when
    /// the balances cannot be read; [`ErrorKind::Timeout`] after `call_timeout_ms` (the
    /// recovery goes on in the background).
    pub fn recover_funds(&self) -> Result<Vec<RecoveryResult>> {
        self.wait_for(self.queue_recovery())
    }

    /// Whether a recovery is queued or running.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn is_recovering(&self) -> Result<bool> {
        self.inner.guard(ClientCall::IsRecovering)?;
        Ok(self.inner.state().recovering > 0)
    }
}
