//! Refunds: a deposit that is not delivered goes back on its source chain, in its token, to
//! its original sender or to the owner (spec §4 `refund`, `canRefund`; reference §6 with its
//! defects fixed).
//!
//! - **Receiver.** With `refund.refund_to_sender` the deposit's receipts are read
//!   (`GET /v1/receipts` for the range of `received` the deposit covers): when every incoming
//!   transfer of the range names the same sender and that address fits the source chain's
//!   address type, it receives the refund (`refunded_to_sender`). Otherwise the owner does,
//!   when its (EVM) address fits the source chain; a Solana deposit without a known Solana
//!   sender is `skipped` with reason `address_type_mismatch`.
//! - **Amount.** The whole deposit, quoted with purpose `refund` (`docs/protocol.md` §3): gas
//!   is the only fee; a deposit that does not cover it is `skipped` with reason
//!   `below_minimum`.
//! - **One executor.** Refunds run on the client's serial executor (`sweeper.rs`), never at the
//!   same time as a sweep of any deposit. A deposit leaves the client's table when it is
//!   credited or refunded, under the state lock: a credited deposit cannot be refunded, a
//!   refunded one not refunded again, and a refund request for a deposit being swept is
//!   refused.
//! - **Unknown outcomes.** A refund send without a definite answer is resolved like a sweep's
//!   (`GET /v1/sweeps/{quoteId}`, the same quote re-sent on `NOT_SENT`); while its outcome is
//!   unknown the refund stays `pending`, is resolved again automatically with the same quote,
//!   and is never quoted anew. A deposit whose *sweep* outcome is unknown is refunded only once
//!   that sweep is known not to have been delivered (the service reports it failed, or it was
//!   never executed and its quote has expired, so it never can be); a sweep that turns out
//!   delivered makes the deposit credited.
//! - **Auto-refund** (`refund.enabled`): after an automatic sweep failed for good (its three
//!   attempts; a failed manual `sweep(id)` leaves the decision to the host), wait
//!   `delay_ms`, then try up to `max_attempts` times, `delay_ms` apart (really retried, unlike
//!   the reference). Each attempt is receiver → quote → sign → send. The refund moves
//!   `pending` → `processing` → (`pending` between attempts) → `success`, `failed` or
//!   `skipped`, each reported as a [`DepositEvent::Refund`]. A deposit whose refund failed or
//!   was skipped keeps its money in the account: `sweep(id)`, `refund(id)` or
//!   `recover_funds()` may still move it.
//! - **Manual refund** ([`refund`](super::DepositClient::refund)): always available, one
//!   attempt, with the host's reason (`user_requested` by default in the bindings).
//!
//! Here: requests and the attempt's frame (state, events, watchdog); `receiver.rs` (who
//! receives a refund), `attempt.rs` (one attempt: resolve, quote, sign, send),
//! `outcome.rs` (what an attempt's end does to the deposit), `eligibility.rs`
//! (`can_refund`).

use std::sync::Arc;

use tokio::sync::oneshot;

use super::engine::{Inner, Job, State, not_initialized};
use super::events::DepositEvent;
use super::machine::{Command, DepositState, Input};
use super::model::{DetectedDeposit, RefundReason, RefundResult, RefundStatus};
use super::records::RefundProgress;
use super::send::{Progress, take_progress};
use super::store::Change;
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::services::QuotePurpose;
use attempt::{RefundOutcome, unknown_refund};

mod attempt;
mod eligibility;
mod outcome;
mod receiver;
#[cfg(test)]
mod tests;

impl Inner {
    /// Starts the auto-refund of a deposit whose sweep failed for good, which the machine put
    /// in `RefundWait` (state lock held): `pending`, then an attempt after `delay_ms`. Returns
    /// the update to report.
    pub(crate) fn start_auto_refund(
        self: &Arc<Self>,
        state: &mut State,
        deposit: &DetectedDeposit,
    ) -> Option<RefundResult> {
        let record = state.deposits.get_mut(&deposit.id)?;
        let last = RefundResult::new(deposit, RefundStatus::Pending, RefundReason::SweepFailed);
        record.refund = Some(RefundProgress { attempts: 0, auto: true, last: last.clone() });
        self.schedule_refund(state, &deposit.id);
        Some(last)
    }

    /// A manual refund request: checks and queues it (`pending`).
    pub(crate) fn request_refund(
        &self,
        deposit_id: &str,
        reason: RefundReason,
        reply: Option<oneshot::Sender<Result<RefundResult>>>,
    ) -> Result<()> {
        let mut state = self.state();
        if state.account.is_none() {
            return Err(not_initialized());
        }
        // A deposit that left the table says how it ended.
        if !state.deposits.contains_key(deposit_id)
            && let Some(why) = state.gone_reason(deposit_id)
        {
            return Err(Error::new(ErrorKind::Refund, why));
        }
        // The same answer `can_refund` gives (`machine::admits`).
        let (record, jobs) = state.admit(deposit_id, Command::Refund)?;
        let last = RefundResult::new(&record.deposit, RefundStatus::Pending, reason);
        record.refund = Some(RefundProgress { attempts: 0, auto: false, last: last.clone() });
        // The executor needs this lock to take the job, so it cannot run before the record
        // and its event are saved below; the receiver lives as long as the client.
        let _ = jobs.send(Job::Refund { deposit_id: deposit_id.to_owned(), reply });
        // Saved and reported before the executor can take the job (it needs this lock).
        let records = state.write_of(deposit_id).into_iter().collect();
        self.hub.commit(Change {
            records,
            events: vec![DepositEvent::Refund(last)],
            ..Change::default()
        });
        let change = state.recount();
        drop(state);
        self.emit_status(change);
        Ok(())
    }

    /// One refund attempt of one deposit. `None` for an automatic job that no longer applies.
    pub(crate) async fn run_refund(
        self: Arc<Self>,
        deposit_id: &str,
        manual: bool,
    ) -> Option<Result<RefundResult>> {
        let (deposit, range, prior) = {
            let mut state = self.state();
            let gone = state.gone_reason(deposit_id);
            let Some(record) = state.deposits.get_mut(deposit_id) else {
                let why =
                    gone.unwrap_or_else(|| format!("Deposit {} not found", quote(deposit_id)));
                return manual.then(|| Err(Error::new(ErrorKind::Refund, why)));
            };
            // A refund job starts only a deposit queued for a refund.
            if record.state != DepositState::RefundQueued
                || record.advance(Input::AttemptStarted).is_err()
            {
                let why = format!("Deposit {} is no longer queued for a refund", quote(deposit_id));
                return manual.then(|| Err(Error::new(ErrorKind::Refund, why)));
            }
            let deposit = record.deposit.clone();
            let progress = record.refund.get_or_insert_with(|| RefundProgress {
                attempts: 0,
                auto: !manual,
                last: RefundResult::new(
                    &deposit,
                    RefundStatus::Pending,
                    RefundReason::UserRequested,
                ),
            });
            progress.attempts += 1;
            progress.last.status = RefundStatus::Processing;
            progress.last.attempts = progress.attempts;
            progress.last.error = None;
            let update = progress.last.clone();
            let range = record.range;
            let prior = record.unresolved.take();
            // Still the quote to resolve, should the process die during this attempt.
            record.in_flight = prior.clone();
            let mut events: Vec<DepositEvent> =
                state.recount().map(DepositEvent::StatusChanged).into_iter().collect();
            events.push(DepositEvent::Refund(update));
            let records = state.write_of(deposit_id).into_iter().collect();
            self.hub.commit(Change { records, events, ..Change::default() });
            (deposit, range, prior)
        };
        let progress = Progress::default();
        let limit = self.config.processing_timeout;
        let outcome = match tokio::time::timeout(
            limit,
            self.refund_attempt(&deposit, range, prior, &progress),
        )
        .await
        {
            Ok(outcome) => outcome,
            Err(_) => {
                let ms = limit.as_millis();
                let why = format!("the attempt gave no final answer within {ms} ms (watchdog)");
                match take_progress(&progress) {
                    Some(sent) if sent.purpose == QuotePurpose::Refund => RefundOutcome::Unknown {
                        message: unknown_refund(&sent.quote.quote_id, &why),
                        sent,
                    },
                    Some(sent) => RefundOutcome::SweepUnresolved { message: why, sent },
                    None => RefundOutcome::Failed {
                        message: format!(
                            "Refund attempt ended by the watchdog after {ms} ms; nothing was sent"
                        ),
                    },
                }
            }
        };
        let moved =
            matches!(outcome, RefundOutcome::Refunded { .. } | RefundOutcome::SweepCredited(_));
        let mut detector = self.baseline_lock(moved).await;
        Some(Ok(self.finish_refund(&deposit, manual, outcome, detector.as_deref_mut())))
    }
}
