//! The sweeper: delivers each detected deposit to the destination, one sweep at a time per
//! client (a serial queue task).
//!
//! One attempt: read the destination (at execution time, so changes apply to queued sweeps and
//! retries), quote exactly the deposit (its chain, token and raw amount), have the signer sign
//! the quote's `rootHash`, send. A refused session (HTTP 401) is renewed once per request.
//!
//! Failures where no money moved — the quote or the signature failed, the send was refused
//! (400, 409, 410), the service reported `failed` — are retried: three attempts in total,
//! `sweep_retry_delay_ms` apart (reference §8.6), then the deposit is `failed` and waits for a
//! manual [`sweep`](super::DepositClient::sweep).
//!
//! A send without a definite answer (timeout, reset, 429, 5xx) is never repeated blindly: the
//! sweeper asks `GET /v1/sweeps/{quoteId}`. A known outcome is taken; 404 `NOT_SENT` means the
//! service never executed it, and the same quote (idempotent per `quoteId`) is sent again. If
//! the outcome stays unknown the deposit is reported `failed` with an error saying so; it is
//! never quoted again automatically (no double spend) and a manual `sweep(id)` first resolves
//! that same quote.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::client::{DepositState, Inner};
use super::config::{Destination, MAX_SWEEP_ATTEMPTS};
use super::events::{DepositEvent, DepositPhase};
use super::model::{DeliveredAmount, DetectedDeposit, SweepResult, SweepStatus, explorer_tx_url};
use crate::services::{
    Quote, QuoteDestination, QuoteRequest, QuoteSource, SendError, SendResult, SendStatus,
    with_session,
};
use crate::units::{format_units, parse_raw_amount};

/// How long a `pending` send is followed before its outcome is declared unknown.
const PENDING_TIMEOUT: Duration = Duration::from_secs(60);
/// How often an ambiguous send is resolved and sent again before giving up.
const SEND_ROUNDS: u32 = 3;

/// A sweep waiting in the queue.
#[derive(Debug)]
pub(crate) struct SweepJob {
    pub deposit_id: String,
    /// Set for a manual sweep: one attempt, its result sent here.
    pub reply: Option<oneshot::Sender<SweepResult>>,
}

/// A signed quote whose send was attempted.
#[derive(Debug, Clone)]
pub(crate) struct SentQuote {
    pub quote: Quote,
    pub signature: String,
    pub destination: Destination,
}

/// How one attempt ended.
enum Outcome {
    Credited(SweepResult),
    /// No money moved; may be tried again.
    Failed(String),
    /// The send's outcome is not known; the deposit must be reconciled.
    Unknown(String, SentQuote),
}

impl Inner {
    pub(crate) async fn sweep_loop(weak: Weak<Inner>, mut jobs: mpsc::UnboundedReceiver<SweepJob>) {
        while let Some(job) = jobs.recv().await {
            let Some(inner) = weak.upgrade() else { return };
            if inner.is_closed() {
                return;
            }
            let manual = job.reply.is_some();
            let result = Arc::clone(&inner).run_job(&job.deposit_id, manual).await;
            if let (Some(reply), Some(result)) = (job.reply, result) {
                let _ = reply.send(result);
            }
        }
    }

    /// One attempt of one deposit; `None` when the deposit is gone (delivered or unknown).
    async fn run_job(self: Arc<Self>, deposit_id: &str, manual: bool) -> Option<SweepResult> {
        let (deposit, prior, destination, change) = {
            let mut state = self.state();
            let destination = state.destination.clone();
            let record = state.deposits.get_mut(deposit_id)?;
            record.state = DepositState::Sweeping;
            record.attempts += 1;
            let taken = (record.deposit.clone(), record.unresolved.take());
            let change = state.recount();
            (taken.0, taken.1, destination, change)
        };
        self.emit_status(change);
        self.hub.emit(DepositEvent::Lifecycle(Inner::lifecycle(
            DepositPhase::Processing,
            &deposit,
            prior.as_ref().map_or(&destination, |p| &p.destination),
        )));
        let outcome = match prior {
            Some(sent) => self.deliver(&deposit, sent).await,
            None => self.attempt(&deposit, &destination).await,
        };
        Some(self.finish(&deposit, &destination, manual, outcome))
    }

    fn finish(
        self: &Arc<Self>,
        deposit: &DetectedDeposit,
        destination: &Destination,
        manual: bool,
        outcome: Outcome,
    ) -> SweepResult {
        let mut events = Vec::new();
        let result;
        let change = {
            let mut state = self.state();
            match outcome {
                Outcome::Credited(sweep) => {
                    state.deposits.remove(&deposit.id);
                    state.remember_result(sweep.clone());
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
                    events.push(event);
                    result = sweep;
                }
                Outcome::Failed(error) => {
                    let retry = !manual
                        && !self.is_closed()
                        && state
                            .deposits
                            .get(&deposit.id)
                            .is_some_and(|r| r.attempts < MAX_SWEEP_ATTEMPTS);
                    if let Some(record) = state.deposits.get_mut(&deposit.id) {
                        if retry {
                            record.state = DepositState::RetryWait;
                        } else {
                            record.state = DepositState::Waiting;
                            record.attempts = 0;
                        }
                    }
                    let attempts_note = if manual {
                        String::new()
                    } else {
                        format!(" (after {MAX_SWEEP_ATTEMPTS} attempts)")
                    };
                    result = SweepResult {
                        deposit_id: deposit.id.clone(),
                        transaction_id: String::new(),
                        explorer_url: String::new(),
                        status: SweepStatus::Failed,
                        error: Some(error.clone()),
                        delivered: None,
                    };
                    if retry {
                        let weak = Arc::downgrade(self);
                        let delay = self.config.sweep_retry_delay;
                        let id = deposit.id.clone();
                        state.timers.retain(|t| !t.is_finished());
                        state.timers.push(self.runtime.spawn(async move {
                            tokio::time::sleep(delay).await;
                            if let Some(inner) = weak.upgrade() {
                                inner.requeue(&id);
                            }
                        }));
                    } else {
                        state.remember_result(result.clone());
                        let mut event =
                            Inner::lifecycle(DepositPhase::Failed, deposit, destination);
                        event.error = Some(format!("{error}{attempts_note}"));
                        events.push(event);
                    }
                }
                Outcome::Unknown(error, sent) => {
                    if let Some(record) = state.deposits.get_mut(&deposit.id) {
                        record.state = DepositState::Unresolved;
                        record.attempts = 0;
                        record.unresolved = Some(sent.clone());
                    }
                    result = SweepResult {
                        deposit_id: deposit.id.clone(),
                        transaction_id: String::new(),
                        explorer_url: String::new(),
                        status: SweepStatus::Pending,
                        error: Some(error.clone()),
                        delivered: None,
                    };
                    state.remember_result(result.clone());
                    let mut event =
                        Inner::lifecycle(DepositPhase::Failed, deposit, &sent.destination);
                    event.error = Some(error);
                    events.push(event);
                }
            }
            state.recount()
        };
        for event in events {
            self.hub.emit(DepositEvent::Lifecycle(event));
        }
        self.emit_status(change);
        result
    }

    /// Puts a deposit waiting for its retry back in the queue.
    fn requeue(&self, deposit_id: &str) {
        let mut state = self.state();
        let Some(tx) = state.sweep_tx.clone() else { return };
        if let Some(record) = state.deposits.get_mut(deposit_id)
            && record.state == DepositState::RetryWait
        {
            record.state = DepositState::Queued;
            let _ = tx.send(SweepJob { deposit_id: deposit_id.to_owned(), reply: None });
        }
    }

    /// Quote, sign, send.
    async fn attempt(&self, deposit: &DetectedDeposit, destination: &Destination) -> Outcome {
        let account_id = match self.account_id() {
            Ok(id) => id,
            Err(e) => return Outcome::Failed(e.message().to_owned()),
        };
        let request = QuoteRequest {
            account_id,
            source: QuoteSource {
                chain_id: deposit.chain_id,
                token: deposit.token.symbol().to_owned(),
                raw_amount: deposit.raw_amount,
            },
            destination: QuoteDestination {
                chain_id: destination.chain_id,
                token: destination.token.symbol().to_owned(),
                address: destination.address.clone(),
            },
        };
        let quote = match with_session(&self.session, |jwt| {
            let account = &self.account;
            let request = &request;
            async move { account.quote(&jwt, request).await }
        })
        .await
        {
            Ok(quote) => quote,
            Err(e) => return Outcome::Failed(format!("Quote failed: {e}")),
        };
        let signature = match with_session(&self.session, |jwt| {
            let signer = &self.signer;
            let root = quote.root_hash.clone();
            async move { signer.sign(&jwt, &root).await }
        })
        .await
        {
            Ok(signature) => signature.signature,
            Err(e) => return Outcome::Failed(format!("Signing failed: {e}")),
        };
        let sent = SentQuote { quote, signature, destination: destination.clone() };
        self.deliver(deposit, sent).await
    }

    /// Sends `sent`, resolving an ambiguous answer through the sweep's status.
    async fn deliver(&self, deposit: &DetectedDeposit, sent: SentQuote) -> Outcome {
        let quote_id = sent.quote.quote_id.clone();
        let mut last_error = String::new();
        for _ in 0..SEND_ROUNDS {
            match self.send(&sent).await {
                Ok(answer) => return self.settle(deposit, sent, answer).await,
                Err(SendError::Refused(e)) => return Outcome::Failed(format!("Send refused: {e}")),
                Err(SendError::Unknown { error, maybe_sent: false }) => {
                    return Outcome::Failed(format!(
                        "Send failed before reaching the service: {}",
                        error.message()
                    ));
                }
                Err(SendError::Unknown { error, maybe_sent: true }) => {
                    match self.status_of(&quote_id).await {
                        Ok(Some(answer)) => return self.settle(deposit, sent, answer).await,
                        // Never executed: sending the same quote again is safe (idempotent).
                        Ok(None) => last_error = error.message().to_owned(),
                        Err(status_error) => {
                            return Outcome::Unknown(
                                unknown(
                                    &quote_id,
                                    &format!(
                                        "the send failed ({}) and its status could not be read ({status_error})",
                                        error.message()
                                    ),
                                ),
                                sent,
                            );
                        }
                    }
                }
            }
        }
        let why = format!(
            "the send failed {SEND_ROUNDS} times ({last_error}) while the service reported it NOT_SENT"
        );
        Outcome::Unknown(unknown(&quote_id, &why), sent)
    }

    /// One send with the session, renewed once if refused.
    async fn send(&self, sent: &SentQuote) -> Result<SendResult, SendError> {
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

    async fn status_of(
        &self,
        quote_id: &str,
    ) -> Result<Option<SendResult>, crate::services::CallError> {
        with_session(&self.session, |jwt| {
            let account = &self.account;
            async move { account.sweep_status(&jwt, quote_id).await }
        })
        .await
    }

    /// Turns a send's answer into an outcome, following a `pending` one.
    async fn settle(
        &self,
        deposit: &DetectedDeposit,
        sent: SentQuote,
        answer: SendResult,
    ) -> Outcome {
        let started = Instant::now();
        let mut answer = answer;
        let mut wait = Duration::from_millis(100);
        loop {
            match answer.status {
                SendStatus::Success => return Outcome::Credited(credited(deposit, &sent, &answer)),
                SendStatus::Failed => {
                    return Outcome::Failed(format!(
                        "Sweep failed: {}",
                        answer.error.as_deref().unwrap_or("the service gave no reason")
                    ));
                }
                SendStatus::Pending => {}
            }
            if started.elapsed() >= PENDING_TIMEOUT {
                let why = format!("it was still pending after {} s", PENDING_TIMEOUT.as_secs());
                return Outcome::Unknown(unknown(&sent.quote.quote_id, &why), sent);
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(2));
            match self.status_of(&sent.quote.quote_id).await {
                Ok(Some(next)) => answer = next,
                Ok(None) => {
                    let why = "the service reported it pending, then NOT_SENT";
                    return Outcome::Unknown(unknown(&sent.quote.quote_id, why), sent);
                }
                Err(_) => {} // keep following until the deadline
            }
        }
    }
}

fn unknown(quote_id: &str, why: &str) -> String {
    format!(
        "The outcome of sweep quote {quote_id} is unknown: {why}. The deposit must be reconciled \
         before it is swept again (sweep(id) resolves this quote; it is never quoted anew)"
    )
}

fn credited(deposit: &DetectedDeposit, sent: &SentQuote, answer: &SendResult) -> SweepResult {
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
    SweepResult {
        deposit_id: deposit.id.clone(),
        transaction_id: answer.transaction_id.clone(),
        explorer_url,
        status: SweepStatus::Success,
        error: None,
        delivered: Some(DeliveredAmount {
            chain_id: sent.destination.chain_id,
            token: sent.destination.token,
            address: sent.destination.address.clone(),
            raw_amount: raw.to_string(),
            amount: format_units(raw, decimals).unwrap_or_else(|_| raw.to_string()),
            decimals,
            value_usd: sent.quote.source_value_usd,
            fees: sent.quote.fees,
            quote_id: sent.quote.quote_id.clone(),
        }),
    }
}
