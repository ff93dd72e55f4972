//! The executor and the sweeper.
//!
//! **One serial executor per client** runs every job that moves money — sweeps, refunds
//! (`refund.rs`) and recoveries (`recovery.rs`) — one at a time, from one unbounded FIFO. A
//! deposit is therefore never swept and refunded at the same time (reference defect 17), and
//! the decision that ends a deposit (credited or refunded) is taken under the state lock by
//! that one task.
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

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::client::{CREDITED, DepositState, Inner, closed_write};
use super::config::{Destination, MAX_SWEEP_ATTEMPTS};
use super::events::{DepositEvent, DepositPhase};
use super::machine::{Effect, Input, Next, Purpose};
use super::model::{
    DeliveredAmount, DetectedDeposit, RecoveryResult, RefundResult, SweepResult, SweepStatus,
    explorer_tx_url,
};
use super::store::{AttemptOutcome, AttemptWrite, Change};
use crate::error::Result;
use crate::services::{
    CallError, Quote, QuoteDestination, QuotePurpose, QuoteRequest, QuoteSource, SendError,
    SendResult, SendStatus, with_session,
};
use crate::units::{U256, format_units, parse_raw_amount};

/// How long a `pending` send is followed before its outcome is declared unknown.
const PENDING_TIMEOUT: Duration = Duration::from_secs(60);
/// How often an ambiguous send is resolved and sent again before giving up.
const SEND_ROUNDS: u32 = 3;
/// The longest wait between two automatic resolutions of an unknown outcome.
const MAX_RECONCILE_INTERVAL: Duration = Duration::from_secs(600);

/// A job of the serial executor.
#[derive(Debug)]
pub(crate) enum Job {
    /// Sweep a deposit. With a reply: a manual sweep, one attempt, its result sent there.
    Sweep { deposit_id: String, reply: Option<oneshot::Sender<SweepResult>> },
    /// Refund a deposit (its reason and mode are in its record). With a reply: a manual
    /// refund.
    Refund { deposit_id: String, reply: Option<oneshot::Sender<Result<RefundResult>>> },
    /// Recover the stuck funds.
    Recover { reply: oneshot::Sender<Result<Vec<RecoveryResult>>> },
}

pub(crate) use super::records::SentQuote;

/// How a send ended.
pub(crate) enum Delivery {
    /// Executed: the final answer (`success`).
    Done(SendResult),
    /// Certainly not executed: no money moved.
    NotExecuted(String),
    /// The outcome could not be learned.
    Unknown(String),
}

/// How one sweep attempt ended.
enum Outcome {
    Credited(SweepResult),
    /// No money moved; may be tried again.
    Failed(String),
    /// The send's outcome is not known; the deposit must be reconciled.
    Unknown(String, SentQuote),
}

/// Where an attempt got to, for the watchdog: the quote being sent, once signed.
pub(crate) type Progress = Mutex<Option<SentQuote>>;

pub(crate) fn set_progress(progress: &Progress, sent: &SentQuote) {
    *progress.lock().unwrap_or_else(|e| e.into_inner()) = Some(sent.clone());
}

pub(crate) fn take_progress(progress: &Progress) -> Option<SentQuote> {
    progress.lock().unwrap_or_else(|e| e.into_inner()).take()
}

impl Inner {
    pub(crate) async fn executor_loop(weak: Weak<Inner>, mut jobs: mpsc::UnboundedReceiver<Job>) {
        while let Some(job) = jobs.recv().await {
            let Some(inner) = weak.upgrade() else { return };
            if inner.is_closed() {
                return;
            }
            match job {
                Job::Sweep { deposit_id, reply } => {
                    let manual = reply.is_some();
                    let result = Arc::clone(&inner).run_sweep(&deposit_id, manual).await;
                    if let (Some(reply), Some(result)) = (reply, result) {
                        let _ = reply.send(result);
                    }
                }
                Job::Refund { deposit_id, reply } => {
                    let manual = reply.is_some();
                    let result = Arc::clone(&inner).run_refund(&deposit_id, manual).await;
                    if let (Some(reply), Some(result)) = (reply, result) {
                        let _ = reply.send(result);
                    }
                }
                Job::Recover { reply } => {
                    let result = Arc::clone(&inner).run_recovery().await;
                    let _ = reply.send(result);
                }
            }
        }
    }

    /// One sweep attempt of one deposit; `None` when the deposit is gone or no longer queued
    /// for a sweep (a refund took it over).
    async fn run_sweep(self: Arc<Self>, deposit_id: &str, manual: bool) -> Option<SweepResult> {
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
                    self.deliver(&deposit, sent).await
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
        Some(self.finish_sweep(&deposit, &destination, manual, outcome))
    }

    fn finish_sweep(
        self: &Arc<Self>,
        deposit: &DetectedDeposit,
        destination: &Destination,
        manual: bool,
        outcome: Outcome,
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
                    if let Some(delivered) = &sweep.delivered {
                        change.attempts.push(attempt_outcome(
                            &delivered.quote_id,
                            &deposit.id,
                            QuotePurpose::Sweep,
                            AttemptOutcome::Success,
                            Some(&sweep.transaction_id),
                        ));
                    }
                    let used = sweep.delivered.as_ref().map_or_else(
                        || destination.clone(),
                        |d| Destination {
                            chain_id: d.chain_id,
                            address: d.address.clone(),
                            token: d.token,
                        },
                    );
                    let mut event = Inner::lifecycle(DepositPhase::Credited, deposit, &used);
                    event.transaction_id = Some(sweep.transaction_id.clone());
                    event.explorer_url =
                        Some(sweep.explorer_url.clone()).filter(|url| !url.is_empty());
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

    /// Resolves `deposit_id`'s unknown outcome again after a while (its sweep's or its
    /// refund's, whichever is unresolved then).
    pub(crate) fn schedule_reconcile(
        self: &Arc<Self>,
        state: &mut super::client::State,
        deposit_id: &str,
        rounds: u32,
    ) {
        if self.is_closed() {
            return;
        }
        let factor = 2u32.saturating_pow(rounds.saturating_sub(1).min(16));
        let delay =
            self.config.reconcile_interval.saturating_mul(factor).min(MAX_RECONCILE_INTERVAL);
        let weak = Arc::downgrade(self);
        let id = deposit_id.to_owned();
        state.after(&self.runtime, delay, async move {
            if let Some(inner) = weak.upgrade() {
                inner.due(&id, &[DepositState::Unresolved, DepositState::RefundUnresolved]);
            }
        });
    }

    /// The sweep of `deposit_id` again after `sweep_retry_delay_ms`.
    pub(crate) fn schedule_retry(
        self: &Arc<Self>,
        state: &mut super::client::State,
        deposit_id: &str,
    ) {
        let weak = Arc::downgrade(self);
        let id = deposit_id.to_owned();
        state.after(&self.runtime, self.config.sweep_retry_delay, async move {
            if let Some(inner) = weak.upgrade() {
                inner.due(&id, &[DepositState::RetryWait]);
            }
        });
    }

    /// A timer armed for `deposit_id` in one of the states `armed_in` fired
    /// ([`Input::Due`]): the machine queues its sweep or refund again. A timer that no longer
    /// applies (the deposit moved on since) does nothing.
    pub(crate) fn due(&self, deposit_id: &str, armed_in: &[DepositState]) {
        let change = {
            let mut state = self.state();
            let Some(tx) = state.jobs.clone() else { return };
            let Some(record) = state.deposits.get_mut(deposit_id) else { return };
            if !armed_in.contains(&record.state) {
                return;
            }
            let job = match record.advance(Input::Due).map(|step| step.effect) {
                Ok(Some(Effect::QueueSweep)) => {
                    Job::Sweep { deposit_id: deposit_id.to_owned(), reply: None }
                }
                Ok(Some(Effect::QueueRefund)) => {
                    Job::Refund { deposit_id: deposit_id.to_owned(), reply: None }
                }
                _ => return,
            };
            let _ = tx.send(job);
            state.recount()
        };
        self.emit_status(change);
    }

    /// Quote, sign, send.
    async fn attempt(
        &self,
        deposit: &DetectedDeposit,
        destination: &Destination,
        progress: &Progress,
    ) -> Outcome {
        let quote = match self
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
            Ok(quote) => quote,
            Err(e) => return Outcome::Failed(format!("Quote failed: {e}")),
        };
        let signature = match self.sign(&quote.root_hash).await {
            Ok(signature) => signature,
            Err(e) => return Outcome::Failed(format!("Signing failed: {e}")),
        };
        let sent = SentQuote {
            quote,
            signature,
            destination: destination.clone(),
            purpose: QuotePurpose::Sweep,
            to_sender: false,
        };
        if let Err(why) = self.record_in_flight(&deposit.id, &sent) {
            return Outcome::Failed(format!("Sweep not sent: {why}"));
        }
        set_progress(progress, &sent);
        self.deliver(deposit, sent).await
    }

    /// A quote of exactly `raw_amount` of `token` on `chain_id` to `destination`.
    pub(crate) async fn quote_for(
        &self,
        chain_id: u64,
        token: &str,
        raw_amount: U256,
        destination: &Destination,
        purpose: QuotePurpose,
        deposit_id: Option<&str>,
    ) -> std::result::Result<Quote, CallError> {
        let account_id = self.account_id().map_err(CallError::Transport)?;
        let request = QuoteRequest {
            account_id,
            source: QuoteSource { chain_id, token: token.to_owned(), raw_amount },
            destination: QuoteDestination {
                chain_id: destination.chain_id,
                token: destination.token.symbol().to_owned(),
                address: destination.address.clone(),
            },
            purpose,
            deposit_id: deposit_id.map(str::to_owned),
        };
        with_session(&self.session, |jwt| {
            let account = &self.account;
            let request = &request;
            async move { account.quote(&jwt, request).await }
        })
        .await
    }

    /// The intermediary's signature of `root_hash`.
    pub(crate) async fn sign(&self, root_hash: &str) -> std::result::Result<String, CallError> {
        with_session(&self.session, |jwt| {
            let signer = &self.signer;
            async move { signer.sign(&jwt, root_hash).await }
        })
        .await
        .map(|s| s.signature)
    }

    /// Sends `sent`, resolving an ambiguous answer through the sweep's status.
    async fn deliver(&self, deposit: &DetectedDeposit, sent: SentQuote) -> Outcome {
        match self.execute(&sent).await {
            Delivery::Done(answer) => Outcome::Credited(credited(deposit, &sent, &answer)),
            Delivery::NotExecuted(error) => Outcome::Failed(error),
            Delivery::Unknown(why) => Outcome::Unknown(unknown(&sent.quote.quote_id, &why), sent),
        }
    }

    /// Sends `sent` and learns its outcome: a send without a definite answer is resolved with
    /// `GET /v1/sweeps/{quoteId}`; `NOT_SENT` sends the same quote again (idempotent), up to
    /// three rounds; a `pending` answer is followed until final (at most 60 s).
    pub(crate) async fn execute(&self, sent: &SentQuote) -> Delivery {
        let quote_id = &sent.quote.quote_id;
        let mut last_error = String::new();
        for _ in 0..SEND_ROUNDS {
            match self.send(sent).await {
                Ok(answer) => return self.follow(sent, answer).await,
                Err(SendError::Refused(e)) => {
                    return Delivery::NotExecuted(format!("Send refused: {e}"));
                }
                Err(SendError::Unknown { error, maybe_sent: false }) => {
                    return Delivery::NotExecuted(format!(
                        "Send failed before reaching the service: {}",
                        error.message()
                    ));
                }
                Err(SendError::Unknown { error, maybe_sent: true }) => {
                    match self.status_of(quote_id).await {
                        Ok(Some(answer)) => return self.follow(sent, answer).await,
                        // Never executed: sending the same quote again is safe (idempotent).
                        Ok(None) => last_error = error.message().to_owned(),
                        Err(status_error) => {
                            return Delivery::Unknown(format!(
                                "the send failed ({}) and its status could not be read ({status_error})",
                                error.message()
                            ));
                        }
                    }
                }
            }
        }
        Delivery::Unknown(format!(
            "the send failed {SEND_ROUNDS} times ({last_error}) while the service reported it NOT_SENT"
        ))
    }

    /// One send with the session, renewed once if refused.
    async fn send(&self, sent: &SentQuote) -> std::result::Result<SendResult, SendError> {
        let not_sent = |e: crate::Error| SendError::Unknown { error: e, maybe_sent: false };
        let session = self.session.get().await.map_err(not_sent)?;
        let id = &sent.quote.quote_id;
        match self.account.send(&session.jwt, id, &sent.signature).await {
            Err(SendError::Refused(e)) if e.status == 401 => {
                let fresh = self.session.refresh(&session.jwt).await.map_err(not_sent)?;
                self.account.send(&fresh.jwt, id, &sent.signature).await
            }
            other => other,
        }
    }

    /// The outcome of a sent quote: `None` when the service never executed it (`NOT_SENT`).
    pub(crate) async fn status_of(
        &self,
        quote_id: &str,
    ) -> std::result::Result<Option<SendResult>, CallError> {
        with_session(&self.session, |jwt| {
            let account = &self.account;
            async move { account.sweep_status(&jwt, quote_id).await }
        })
        .await
    }

    /// Follows a send's answer until it is final.
    pub(crate) async fn follow(&self, sent: &SentQuote, answer: SendResult) -> Delivery {
        let started = Instant::now();
        let mut answer = answer;
        let mut wait = Duration::from_millis(100);
        let label = match sent.purpose {
            QuotePurpose::Sweep => "Sweep",
            QuotePurpose::Refund => "Refund",
        };
        loop {
            match answer.status {
                SendStatus::Success => return Delivery::Done(answer),
                SendStatus::Failed => {
                    return Delivery::NotExecuted(format!(
                        "{label} failed: {}",
                        answer.error.as_deref().unwrap_or("the service gave no reason")
                    ));
                }
                SendStatus::Pending => {}
            }
            if started.elapsed() >= PENDING_TIMEOUT {
                return Delivery::Unknown(format!(
                    "it was still pending after {} s",
                    PENDING_TIMEOUT.as_secs()
                ));
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(2));
            match self.status_of(&sent.quote.quote_id).await {
                Ok(Some(next)) => answer = next,
                Ok(None) => {
                    return Delivery::Unknown(
                        "the service reported it pending, then NOT_SENT".to_owned(),
                    );
                }
                Err(_) => {} // keep following until the deadline
            }
        }
    }
}

/// The final word on an attempt's send, for the store.
pub(crate) fn attempt_outcome(
    quote_id: &str,
    deposit_id: &str,
    purpose: QuotePurpose,
    outcome: AttemptOutcome,
    transaction_id: Option<&str>,
) -> AttemptWrite {
    AttemptWrite {
        quote_id: quote_id.to_owned(),
        deposit_id: deposit_id.to_owned(),
        purpose,
        outcome: Some(outcome),
        transaction_id: transaction_id.map(str::to_owned),
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

/// What a delivered sweep's answer says: the delivered amount (the answer's, else the
/// quote's) and an explorer link.
pub(crate) fn delivered(sent: &SentQuote, answer: &SendResult) -> (DeliveredAmount, String) {
    let raw = answer
        .delivered_raw_amount
        .as_deref()
        .and_then(|text| parse_raw_amount(text).ok())
        .unwrap_or(sent.quote.destination_raw_amount);
    let decimals = sent.quote.destination_decimals;
    let explorer_url = answer
        .explorer_url
        .clone()
        .filter(|url| !url.is_empty())
        .or_else(|| explorer_tx_url(sent.destination.chain_id, &answer.transaction_id))
        .unwrap_or_default();
    let amount = DeliveredAmount {
        chain_id: sent.destination.chain_id,
        token: sent.destination.token,
        address: sent.destination.address.clone(),
        raw_amount: raw.to_string(),
        amount: format_units(raw, decimals).unwrap_or_else(|_| raw.to_string()),
        decimals,
        value_usd: sent.quote.source_value_usd,
        fees: sent.quote.fees,
        quote_id: sent.quote.quote_id.clone(),
    };
    (amount, explorer_url)
}

pub(crate) fn credited(
    deposit: &DetectedDeposit,
    sent: &SentQuote,
    answer: &SendResult,
) -> SweepResult {
    let (amount, explorer_url) = delivered(sent, answer);
    SweepResult {
        deposit_id: deposit.id.clone(),
        transaction_id: answer.transaction_id.clone(),
        explorer_url,
        status: SweepStatus::Success,
        error: None,
        delivered: Some(amount),
    }
}
