//! What the end of a refund attempt does to its deposit: the machine's step, the store's
//! writes and the events, under the state lock; the next attempt or reconciliation armed.

use std::sync::Arc;

use super::Inner;
use super::attempt::RefundOutcome;
use crate::deposit::engine::{CREDITED, REFUNDED, closed_write, lower_baseline};
use crate::deposit::events::DepositEvent;
use crate::deposit::machine::{Effect, Input, Next, Purpose};
use crate::deposit::model::{DetectedDeposit, RefundReason, RefundResult, RefundStatus};
use crate::deposit::records::RefundProgress;
use crate::deposit::send::{attempt_outcome, delivered};
use crate::deposit::store::{AttemptOutcome, Change};
use crate::deposit::watcher::Detector;
use crate::services::QuotePurpose;

impl Inner {
    pub(super) fn finish_refund(
        self: &Arc<Self>,
        deposit: &DetectedDeposit,
        manual: bool,
        outcome: RefundOutcome,
        detector: Option<&mut Detector>,
    ) -> RefundResult {
        let mut events = Vec::new();
        let mut change = Change::default();
        let max_attempts = self.config.refund.max_attempts;
        let mut update;
        let status = {
            let mut state = self.state();
            let in_flight =
                state.deposits.get_mut(&deposit.id).and_then(|record| record.in_flight.take());
            let attempt = |outcome: AttemptOutcome, tx: Option<&str>| {
                in_flight.as_ref().map(|sent| {
                    attempt_outcome(&sent.quote.quote_id, &deposit.id, sent.purpose, outcome, tx)
                })
            };
            let mut progress =
                state.deposits.get_mut(&deposit.id).and_then(|r| r.refund.take()).unwrap_or_else(
                    || RefundProgress {
                        attempts: 1,
                        auto: !manual,
                        last: RefundResult::new(
                            deposit,
                            RefundStatus::Processing,
                            RefundReason::UserRequested,
                        ),
                    },
                );
            update = progress.last.clone();
            update.attempts = progress.attempts;
            // What happened, for the machine (a refund that cannot be made by default).
            let mut input = Input::Skipped;
            let mut unresolved = None;
            match outcome {
                RefundOutcome::Refunded { sent, answer } => {
                    lower_baseline(detector, deposit, &mut change);
                    change.attempts.push(attempt_outcome(
                        &sent.quote.quote_id,
                        &deposit.id,
                        QuotePurpose::Refund,
                        AttemptOutcome::Success,
                        Some(&answer.transaction_id),
                    ));
                    let (amount, explorer_url) = delivered(&sent, &answer);
                    update.status = RefundStatus::Success;
                    update.tx_hash = Some(answer.transaction_id.clone());
                    update.refunded_to = Some(sent.destination.address.clone());
                    update.refunded_to_sender = Some(sent.to_sender);
                    update.delivered_amount = Some(amount.amount);
                    update.explorer_url = Some(explorer_url).filter(|u| !u.is_empty());
                    update.quote_id = Some(sent.quote.quote_id.clone());
                    update.error = None;
                    input = Input::Refunded;
                }
                RefundOutcome::Skipped { reason, message } => {
                    update.status = RefundStatus::Skipped;
                    update.reason = reason;
                    update.error = Some(message);
                }
                RefundOutcome::Failed { message } => {
                    change.attempts.extend(attempt(AttemptOutcome::Failed, None));
                    let again = progress.auto
                        && !manual
                        && progress.attempts < max_attempts
                        && !self.is_closed();
                    if again {
                        update.status = RefundStatus::Pending;
                        update.error = Some(format!(
                            "attempt {} of {max_attempts} failed: {message}",
                            progress.attempts
                        ));
                        input = Input::Failed { again: true, auto_refund: false };
                    } else {
                        input = Input::Failed { again: false, auto_refund: false };
                        update.status = RefundStatus::Failed;
                        update.error = Some(if progress.auto {
                            format!("{message} (after {} attempts)", progress.attempts)
                        } else {
                            message
                        });
                    }
                }
                RefundOutcome::Unknown { message, sent } => {
                    change.attempts.push(attempt_outcome(
                        &sent.quote.quote_id,
                        &deposit.id,
                        QuotePurpose::Refund,
                        AttemptOutcome::Unknown,
                        None,
                    ));
                    update.status = RefundStatus::Pending;
                    update.error = Some(message);
                    update.refunded_to = Some(sent.destination.address.clone());
                    update.refunded_to_sender = Some(sent.to_sender);
                    update.quote_id = Some(sent.quote.quote_id.clone());
                    input = Input::OutcomeUnknown(Purpose::Refund);
                    unresolved = Some(sent);
                }
                RefundOutcome::SweepCredited(sweep) => {
                    lower_baseline(detector, deposit, &mut change);
                    change.attempts.extend(attempt(
                        AttemptOutcome::Success,
                        Some(sweep.transaction_id.as_str()),
                    ));
                    change.sweep_results.push(sweep.clone());
                    update.status = RefundStatus::Skipped;
                    update.error = Some(format!(
                        "Not refunded: its earlier sweep turned out delivered (transaction {}); the deposit is credited",
                        sweep.transaction_id
                    ));
                    let event = Inner::credited_event(deposit, &sweep, &self.config.destination);
                    events.push(DepositEvent::Lifecycle(event));
                    state.remember_result(sweep);
                    input = Input::Delivered;
                }
                RefundOutcome::SweepUnresolved { message, sent } => {
                    update.status = RefundStatus::Failed;
                    update.error = Some(format!(
                        "Not refunded: {message}. It is resolved automatically; try again later"
                    ));
                    input = Input::OutcomeUnknown(Purpose::Sweep);
                    unresolved = Some(sent);
                }
            }
            progress.last = update.clone();
            let stepped = state.deposits.get_mut(&deposit.id).and_then(|record| {
                let sent = unresolved.as_ref().or(in_flight.as_ref());
                record.advance_after(sent, input).ok()
            });
            // Money that moved ends the deposit even if the table lost track of it.
            let ended = match stepped.map(|s| s.next) {
                Some(Next::Open(_)) => false,
                Some(Next::Credited | Next::Refunded) => true,
                None => matches!(input, Input::Refunded | Input::Delivered),
            };
            let effect = stepped.and_then(|s| s.effect);
            match ended {
                true => {
                    if let Some(mut record) = state.deposits.remove(&deposit.id) {
                        record.refund = Some(progress);
                        // A refund sent it back; a sweep found delivered credited it.
                        let end = if update.status == RefundStatus::Success {
                            REFUNDED
                        } else {
                            CREDITED
                        };
                        change.records.push(closed_write(&record, end));
                    }
                    state.remember_refund(update.clone());
                    change.refund_results.push(update.clone());
                }
                false => {
                    let rounds = state.deposits.get_mut(&deposit.id).map(|record| {
                        record.refund = Some(progress);
                        if unresolved.is_some() {
                            record.unresolved = unresolved;
                            record.reconcile_rounds += 1;
                        }
                        record.reconcile_rounds
                    });
                    if update.status.is_terminal() {
                        state.remember_refund(update.clone());
                        change.refund_results.push(update.clone());
                    }
                    change.records.extend(state.write_of(&deposit.id));
                    match effect {
                        Some(Effect::ScheduleRefund) => {
                            self.schedule_refund(&mut state, &deposit.id);
                        }
                        Some(Effect::ScheduleReconcile) => {
                            if let Some(rounds) = rounds {
                                self.schedule_reconcile(&mut state, &deposit.id, rounds);
                            }
                        }
                        _ => {}
                    }
                }
            }
            events.push(DepositEvent::Refund(update.clone()));
            self.invalidate_history();
            // Saved and out before the lock is released (see `finish_sweep`).
            change.events = events;
            self.hub.commit(change);
            state.recount()
        };
        self.emit_status(status);
        update
    }
}
