//! The sweeper: one sweep attempt of one deposit, a job of the client's serial executor
//! (`engine/executor.rs`), and what its outcome does to the deposit.
//!
//! A sweep attempt: read the destination (at execution time, so changes apply to queued sweeps
//! and retries), quote exactly the deposit (its chain, token and raw amount), have the signer
//! sign the quote's `rootHash`, send. A refused session (HTTP 401) is renewed once per request.
//!
//! Failures where no money moved — the quote or the signature failed, the send was refused
//! (400, 409, 410), the service reported `failed` — are retried: three attempts in total,
//! `sweep_retry_delay_ms` apart (reference §8.6), then the deposit is `failed`. With
//! `refund.enabled` its auto-refund starts (`refund.rs`); else it waits for a manual
//! [`sweep`](super::DepositClient::sweep), [`refund`](super::DepositClient::refund) or
//! [`recover_funds`](super::DepositClient::recover_funds).
//!
//! A send without a definite answer (timeout, reset, 429, 5xx) is never repeated blindly: the
//! executor asks `GET /v1/sweeps/{quoteId}`. A known outcome is taken; 404 `NOT_SENT` means the
//! service never executed it, and the same quote (idempotent per `quoteId`) is sent again. If
//! the outcome stays unknown the deposit is reported `failed` with an error saying so; it is
//! never quoted again while the outcome is unknown. The same quote is resolved again
//! automatically after `reconcile_interval_ms` (doubling per round, at most ten minutes), or at
//! once by a manual `sweep(id)`: so a client whose service was down recovers by itself.
//!
//! **Watchdog**: an attempt running longer than `processing_timeout_ms` is ended. If no send
//! was under way it is a failed attempt (nothing moved; retried as above); if a send was under
//! way its outcome is unknown and resolved as above. No deposit stays `processing` silently.

use std::sync::Arc;

use super::config::{Destination, MAX_SWEEP_ATTEMPTS};
use super::engine::{CREDITED, Inner, closed_write, lower_baseline};
use super::events::{DepositEvent, DepositPhase};
use super::machine::{DepositState, Effect, Input, Next, Purpose};
use super::model::{DetectedDeposit, SweepResult, SweepStatus};
use super::send::{
    Delivery, Progress, SentQuote, attempt_outcome, credited, set_progress, take_progress,
};
use super::store::{AttemptOutcome, Change};
use super::watcher::Detector;
use crate::services::{PreparedTransfer, QuotePurpose};

/// How one sweep attempt ended.
enum Outcome {
    Credited(SweepResult),
    /// No money moved; may be tried again.
    Failed(String),
    /// The send's outcome is not known; the deposit must be reconciled.
    Unknown(String, SentQuote),
}

impl Inner {
    /// One sweep attempt of one deposit; `None` when the deposit is gone or no longer queued
    /// for a sweep (a refund took it over).
    pub(crate) async fn run_sweep(
        self: Arc<Self>,
        deposit_id: &str,
        manual: bool,
    ) -> Option<SweepResult> {
        let (deposit, prior, destination) = {
            let mut state = self.state();
            let destination = state.destination.clone();
            let record = state.deposits.get_mut(deposit_id)?;
            // A sweep job starts only a deposit queued for a sweep.
            if record.state != DepositState::Queued
                || record.advance(Input::AttemptStarted).is_err()
            {
                let why = format!(
                    "Deposit {deposit_id} is no longer queued for a sweep (a refund took it over)"
                );
                return manual.then(|| failed_result(deposit_id, why));
            }
            record.attempts += 1;
            let prior = record.unresolved.take();
            // Still the quote to resolve, should the process die during this attempt.
            record.in_flight = prior.clone();
            let deposit = record.deposit.clone();
            let mut events: Vec<DepositEvent> =
                state.recount().map(DepositEvent::StatusChanged).into_iter().collect();
            events.push(DepositEvent::Lifecycle(Inner::lifecycle(
                DepositPhase::Processing,
                &deposit,
                prior.as_ref().map_or(&destination, |p| &p.destination),
            )));
            let records = state.write_of(deposit_id).into_iter().collect();
            self.hub.commit(Change { records, events, ..Change::default() });
            (deposit, prior, destination)
        };
        let progress = Progress::default();
        let work = async {
            match prior {
                Some(sent) => {
                    set_progress(&progress, &sent);
                    self.deliver(&deposit, sent, true).await
                }
                None => self.attempt(&deposit, &destination, &progress).await,
            }
        };
        let limit = self.config.processing_timeout;
        let outcome = match tokio::time::timeout(limit, work).await {
            Ok(outcome) => outcome,
            Err(_) => {
                let ms = limit.as_millis();
                match take_progress(&progress) {
                    Some(sent) => Outcome::Unknown(
                        unknown(
                            &sent.quote.quote_id,
                            &format!("the attempt gave no final answer within {ms} ms (watchdog)"),
                        ),
                        sent,
                    ),
                    None => Outcome::Failed(format!(
                        "Sweep attempt ended by the watchdog after {ms} ms; nothing was sent"
                    )),
                }
            }
        };
        let mut detector = self.baseline_lock(matches!(outcome, Outcome::Credited(_))).await;
        Some(self.finish_sweep(&deposit, &destination, manual, outcome, detector.as_deref_mut()))
    }

    fn finish_sweep(
        self: &Arc<Self>,
        deposit: &DetectedDeposit,
        destination: &Destination,
        manual: bool,
        outcome: Outcome,
        detector: Option<&mut Detector>,
    ) -> SweepResult {
        let mut events = Vec::new();
        let mut change = Change::default();
        let result;
        let status = {
            let mut state = self.state();
            let in_flight =
                state.deposits.get_mut(&deposit.id).and_then(|record| record.in_flight.take());
            match outcome {
                Outcome::Credited(sweep) => {
                    if let Some(record) = state.deposits.get_mut(&deposit.id) {
                        // Delivered money is credited whatever the table said.
                        let credited = record.advance_after(in_flight.as_ref(), Input::Delivered);
                        debug_assert!(credited.is_ok_and(|s| s.next == Next::Credited));
                    }
                    if let Some(record) = state.deposits.remove(&deposit.id) {
                        change.records.push(closed_write(&record, CREDITED));
                    }
                    state.remember_result(sweep.clone());
                    change.sweep_results.push(sweep.clone());
                    lower_baseline(detector, deposit, &mut change);
                    if let Some(delivered) = &sweep.delivered {
                        change.attempts.push(attempt_outcome(
                            &delivered.quote_id,
                            &deposit.id,
                            QuotePurpose::Sweep,
                            AttemptOutcome::Success,
                            Some(&sweep.transaction_id),
                        ));
                    }
                    let event = Inner::credited_event(deposit, &sweep, destination);
                    events.push(DepositEvent::Lifecycle(event));
                    result = sweep;
                }
                Outcome::Failed(error) => {
                    if let Some(sent) = &in_flight {
                        change.attempts.push(attempt_outcome(
                            &sent.quote.quote_id,
                            &deposit.id,
                            sent.purpose,
                            AttemptOutcome::Failed,
                            None,
                        ));
                    }
                    let retry = !manual
                        && !self.is_closed()
                        && state
                            .deposits
                            .get(&deposit.id)
                            .is_some_and(|r| r.attempts < MAX_SWEEP_ATTEMPTS);
                    result = failed_result(&deposit.id, error.clone());
                    let auto_refund =
                        !retry && !manual && self.config.refund.enabled && !self.is_closed();
                    let stepped = state.deposits.get_mut(&deposit.id).and_then(|record| {
                        let failed = Input::Failed { again: retry, auto_refund };
                        record.advance_after(in_flight.as_ref(), failed).ok()
                    });
                    let effect = stepped.and_then(|s| s.effect);
                    if retry {
                        if effect == Some(Effect::ScheduleRetry) {
                            self.schedule_retry(&mut state, &deposit.id);
                        }
                    } else {
                        state.remember_result(result.clone());
                        change.sweep_results.push(result.clone());
                        let attempts_note = if manual {
                            String::new()
                        } else {
                            format!(" (after {MAX_SWEEP_ATTEMPTS} attempts)")
                        };
                        let mut event =
                            Inner::lifecycle(DepositPhase::Failed, deposit, destination);
                        event.error = Some(format!("{error}{attempts_note}"));
                        events.push(DepositEvent::Lifecycle(event));
                        if let Some(record) = state.deposits.get_mut(&deposit.id) {
                            record.attempts = 0;
                            record.sweep_failed = true;
                        }
                        if effect == Some(Effect::ScheduleRefund)
                            && let Some(update) = self.start_auto_refund(&mut state, deposit)
                        {
                            events.push(DepositEvent::Refund(update));
                        }
                    }
                    change.records.extend(state.write_of(&deposit.id));
                }
                Outcome::Unknown(error, sent) => {
                    change.attempts.push(attempt_outcome(
                        &sent.quote.quote_id,
                        &deposit.id,
                        sent.purpose,
                        AttemptOutcome::Unknown,
                        None,
                    ));
                    let rounds = state.deposits.get_mut(&deposit.id).map(|record| {
                        let unknown = Input::OutcomeUnknown(Purpose::Sweep);
                        // Sweeping takes it in any case: the deposit is Unresolved now.
                        let _ = record.advance_after(Some(&sent), unknown);
                        record.attempts = 0;
                        record.unresolved = Some(sent.clone());
                        record.reconcile_rounds += 1;
                        record.reconcile_rounds
                    });
                    change.records.extend(state.write_of(&deposit.id));
                    result = SweepResult {
                        deposit_id: deposit.id.clone(),
                        transaction_id: String::new(),
                        explorer_url: String::new(),
                        status: SweepStatus::Pending,
                        error: Some(error.clone()),
                        delivered: None,
                    };
                    state.remember_result(result.clone());
                    change.sweep_results.push(result.clone());
                    let mut event =
                        Inner::lifecycle(DepositPhase::Failed, deposit, &sent.destination);
                    event.error = Some(error);
                    events.push(DepositEvent::Lifecycle(event));
                    if let Some(rounds) = rounds {
                        self.schedule_reconcile(&mut state, &deposit.id, rounds);
                    }
                }
            }
            // The history changed: the caches go before anyone hears of it.
            self.invalidate_history();
            // Saved and out before the lock is released: a job started next (a retry, a
            // refund) cannot report before them, and a restart finds the deposit where the
            // events say it is.
            change.events = events;
            self.hub.commit(change);
            state.recount()
        };
        self.emit_status(status);
        result
    }

    /// Quote, sign, send.
    async fn attempt(
        &self,
        deposit: &DetectedDeposit,
        destination: &Destination,
        progress: &Progress,
    ) -> Outcome {
        let PreparedTransfer { quote, backend } = match self
            .quote_for(
                deposit.chain_id,
                deposit.token.symbol(),
                deposit.raw_amount,
                destination,
                QuotePurpose::Sweep,
                None,
            )
            .await
        {
            Ok(transfer) => transfer,
            Err(e) => return Outcome::Failed(format!("Quote failed: {e}")),
        };
        let signature = match self.services().sign(&quote).await {
            Ok(signature) => signature,
            Err(e) => return Outcome::Failed(e.message().to_owned()),
        };
        let sent = SentQuote {
            quote,
            signature,
            destination: destination.clone(),
            purpose: QuotePurpose::Sweep,
            to_sender: false,
            backend,
        };
        if let Err(why) = self.record_in_flight(&deposit.id, &sent) {
            return Outcome::Failed(format!("Sweep not sent: {why}"));
        }
        set_progress(progress, &sent);
        self.deliver(deposit, sent, false).await
    }

    /// Sends `sent`, resolving an ambiguous answer through the sweep's status; a quote whose
    /// send may already have happened (`resumed`) is resolved first (`Services::resolve`).
    async fn deliver(&self, deposit: &DetectedDeposit, sent: SentQuote, resumed: bool) -> Outcome {
        let services = self.services();
        let delivery =
            if resumed { services.resolve(&sent).await } else { services.execute(&sent).await };
        match delivery {
            Delivery::Done(answer) => Outcome::Credited(credited(deposit, &sent, &answer)),
            Delivery::NotExecuted(error) => Outcome::Failed(error),
            Delivery::Unknown(why) => Outcome::Unknown(unknown(&sent.quote.quote_id, &why), sent),
        }
    }
}

fn failed_result(deposit_id: &str, error: String) -> SweepResult {
    SweepResult {
        deposit_id: deposit_id.to_owned(),
        transaction_id: String::new(),
        explorer_url: String::new(),
        status: SweepStatus::Failed,
        error: Some(error),
        delivered: None,
    }
}

pub(crate) fn unknown(quote_id: &str, why: &str) -> String {
    format!(
        "The outcome of sweep quote {quote_id} is unknown: {why}. The deposit must be reconciled \
         before it is swept again (sweep(id) resolves this quote; it is never quoted anew)"
    )
}
