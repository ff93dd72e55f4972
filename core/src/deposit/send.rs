//! The send protocol: quote → sign → send → follow, over the client's services.
//!
//! A quote prices exactly one transfer; the owner's signer signs its `rootHash` and the quote
//! is sent once, both through the client's account backend (`services::backend`). A send without a definite answer (timeout, reset, 429, 5xx) is never repeated
//! blindly: its status is asked (`GET /v1/sweeps/{quoteId}`), a known outcome is taken, and
//! only `NOT_SENT` (never executed) sends the same quote again (idempotent per `quoteId`). A
//! `pending` answer is followed until final. A refused session (HTTP 401) is renewed once per
//! request. What to do with the outcome is the engine's (`sweeper.rs`, `refund/`,
//! `recovery.rs`); this module knows no deposit table.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::model::{DeliveredAmount, DetectedDeposit, SweepResult, SweepStatus, explorer_tx_url};
use super::store::{AttemptOutcome, AttemptWrite};
use crate::services::{
    AccountBackend, BackendAccount, PreparedTransfer, Quote, QuotePurpose, SendFailure, SendResult,
    SendStatus,
};
use crate::units::{format_units, parse_raw_amount};

pub(crate) use super::records::SentQuote;

/// How long a `pending` send is followed before its outcome is declared unknown.
const PENDING_TIMEOUT: Duration = Duration::from_secs(60);
/// How often an ambiguous send is resolved and sent again before giving up.
const SEND_ROUNDS: u32 = 3;

/// How a send ended.
pub(crate) enum Delivery {
    /// Executed: the final answer (`success`).
    Done(SendResult),
    /// Certainly not executed: no money moved.
    NotExecuted(String),
    /// The outcome could not be learned.
    Unknown(String),
}

/// Where an attempt got to, for the watchdog: the quote being sent, once signed.
pub(crate) type Progress = Mutex<Option<SentQuote>>;

pub(crate) fn set_progress(progress: &Progress, sent: &SentQuote) {
    *progress.lock().unwrap_or_else(|e| e.into_inner()) = Some(sent.clone());
}

pub(crate) fn take_progress(progress: &Progress) -> Option<SentQuote> {
    progress.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// The services one send talks to: the client's [`AccountBackend`] with the owner's account at
/// it, which quotes (`Inner::quote_for`), signs, sends once and reads a send's status.
#[derive(Clone)]
pub(crate) struct Services<'a> {
    pub backend: &'a dyn AccountBackend,
    pub owner: BackendAccount,
}

impl Services<'_> {
    /// The owner's signature of `quote`'s root hash, through the backend ("Signing failed: …"
    /// when it fails).
    pub(crate) async fn sign(&self, quote: &Quote) -> crate::Result<String> {
        let transfer = PreparedTransfer { quote: quote.clone(), backend: serde_json::Value::Null };
        self.backend.sign(&self.owner, &transfer).await
    }

    /// Sends `sent` and learns its outcome: a send without a definite answer is resolved with
    /// `GET /v1/sweeps/{quoteId}`; `NOT_SENT` sends the same quote again (idempotent), up to
    /// three rounds; a `pending` answer is followed until final (at most 60 s).
    pub(crate) async fn execute(&self, sent: &SentQuote) -> Delivery {
        let mut last_error = String::new();
        for _ in 0..SEND_ROUNDS {
            match self.send(sent).await {
                Ok(answer) => return self.follow(sent, answer).await,
                Err(SendFailure::Refused(e)) => {
                    return Delivery::NotExecuted(e.message().to_owned());
                }
                Err(SendFailure::Unknown { error, maybe_sent: false }) => {
                    return Delivery::NotExecuted(format!(
                        "Send failed before reaching the service: {}",
                        error.message()
                    ));
                }
                Err(SendFailure::Unknown { error, maybe_sent: true }) => {
                    match self.status_of(sent).await {
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

    /// Resolves `sent`, a quote whose send may already have happened (an earlier attempt's
    /// outcome was unknown, or the process stopped during it). On devnet's protocol the same
    /// quote is sent again, which the service treats idempotently per `quoteId`. On a backend
    /// without that contract (Particle) its status is asked first, by the transaction id: a
    /// known outcome is taken, and it is sent again only when it never executed.
    pub(crate) async fn resolve(&self, sent: &SentQuote) -> Delivery {
        if self.backend.name() != "devnet" {
            match self.status_of(sent).await {
                Ok(Some(answer)) => return self.follow(sent, answer).await,
                Ok(None) => {}
                Err(error) => {
                    return Delivery::Unknown(format!(
                        "its status could not be read ({}); it was not sent again",
                        error.message()
                    ));
                }
            }
        }
        self.execute(sent).await
    }

    /// One send through the backend (devnet's: with the session, renewed once if refused).
    async fn send(&self, sent: &SentQuote) -> std::result::Result<SendResult, SendFailure> {
        self.backend.send_once(&self.owner, &transfer_of(sent), &sent.signature).await
    }

    /// The outcome of a sent quote, through the backend: `None` when the service never
    /// executed it (`NOT_SENT`).
    pub(crate) async fn status_of(&self, sent: &SentQuote) -> crate::Result<Option<SendResult>> {
        self.backend.send_status(&self.owner, &transfer_of(sent)).await
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
            match self.status_of(sent).await {
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

/// The backend's transfer of a signed quote.
fn transfer_of(sent: &SentQuote) -> PreparedTransfer {
    PreparedTransfer { quote: sent.quote.clone(), backend: sent.backend.clone() }
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
