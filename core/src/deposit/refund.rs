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

use std::sync::Arc;

use tokio::sync::oneshot;

use super::client::{
    CREDITED, DepositState, Inner, REFUNDED, RefundProgress, closed_write, not_initialized, now_ms,
};
use super::config::Destination;
use super::events::{DepositEvent, DepositPhase};
use super::machine::{self, Admission, Command, Effect, Input, Next, Purpose};
use super::model::{
    DetectedDeposit, RefundEligibility, RefundReason, RefundResult, RefundStatus, SweepResult,
};
use super::store::{AttemptOutcome, Change};
use super::sweeper::{
    Delivery, Job, Progress, SentQuote, attempt_outcome, credited, delivered, set_progress,
    take_progress,
};
use crate::chains::{AddressType, Chain};
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::services::{CallError, QuotePurpose, SendResult, with_session};
use crate::units::U256;
use crate::validate::{evm_address_problem, solana_address_problem};

/// A sweep quote never executed is known never to execute this long after it expired (a
/// margin for the service's and the client's clocks).
const QUOTE_EXPIRY_MARGIN_MS: u64 = 10_000;

/// Who receives a refund.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Receiver {
    /// This address; `to_sender` when it is the deposit's original sender.
    To { address: String, to_sender: bool },
    /// Nobody fits the source chain's address type.
    Mismatch(String),
}

/// How one refund attempt ended.
enum RefundOutcome {
    Refunded {
        sent: SentQuote,
        answer: SendResult,
    },
    /// Not refundable: nothing was sent.
    Skipped {
        reason: RefundReason,
        message: String,
    },
    /// Nothing moved; may be tried again.
    Failed {
        message: String,
    },
    /// The refund send's outcome is not known.
    Unknown {
        message: String,
        sent: SentQuote,
    },
    /// The deposit's earlier sweep, whose outcome was unknown, turned out delivered.
    SweepCredited(SweepResult),
    /// The deposit's earlier sweep still has an unknown outcome: no refund yet.
    SweepUnresolved {
        message: String,
        sent: SentQuote,
    },
}

/// What resolving an earlier sweep said.
enum SweepCheck {
    Delivered(SendResult),
    NotDelivered,
    Unknown(String),
}

fn address_fits(address: &str, kind: AddressType) -> bool {
    match kind {
        AddressType::Evm => evm_address_problem(address).is_none(),
        AddressType::Solana => solana_address_problem(address).is_none(),
    }
}

/// Chooses the receiver of a refund from the deposit's receipts' senders (`None`: not
/// looked up), the owner, and the source chain's address type.
pub(crate) fn choose_receiver(
    chain_id: u64,
    senders: Option<&[Option<String>]>,
    owner: &str,
) -> Receiver {
    let Some(chain) = Chain::from_id(chain_id) else {
        return Receiver::Mismatch(format!("Unknown chain: {chain_id}"));
    };
    let kind = chain.address_type();
    let mut note = String::new();
    if let Some(senders) = senders {
        let known: Vec<&str> = senders.iter().flatten().map(String::as_str).collect();
        let mut distinct: Vec<String> = known
            .iter()
            .map(
                |s| if kind == AddressType::Evm { s.to_ascii_lowercase() } else { (*s).to_owned() },
            )
            .collect();
        distinct.sort();
        distinct.dedup();
        if senders.is_empty() {
            note = "; no incoming transfer of the deposit was found".to_owned();
        } else if known.len() < senders.len() {
            note = "; the sender of the deposit is not known".to_owned();
        } else if distinct.len() > 1 {
            note = format!("; the deposit came from {} different senders", distinct.len());
        } else if address_fits(known[0], kind) {
            return Receiver::To { address: known[0].to_owned(), to_sender: true };
        } else {
            note = format!(
                "; its sender {} is not a valid {} address",
                quote(known[0]),
                kind.as_str()
            );
        }
    }
    if address_fits(owner, kind) {
        return Receiver::To { address: owner.to_owned(), to_sender: false };
    }
    let owner_kind = if evm_address_problem(owner).is_none() { "evm" } else { "solana" };
    Receiver::Mismatch(format!(
        "Address type mismatch: owner address is {owner_kind}, but source chain {} requires {}{note}",
        chain.name(),
        kind.as_str()
    ))
}

/// Whether a quote the service reports `NOT_SENT` can never execute any more: it expired (by
/// the service's clock, with a margin for skew) — a send arriving now would be refused with
/// `410 QUOTE_EXPIRED`. A quote without an expiry never qualifies.
fn can_never_execute(expires_at: u64, now: u64) -> bool {
    expires_at > 0 && now > expires_at.saturating_add(QUOTE_EXPIRY_MARGIN_MS)
}

fn unknown_refund(quote_id: &str, why: &str) -> String {
    format!(
        "The outcome of refund quote {quote_id} is unknown: {why}. It is resolved with the same \
         quote before anything else (never quoted anew)"
    )
}

impl Inner {
    /// Starts the auto-refund of a deposit whose sweep failed for good, which the machine put
    /// in `RefundWait` (state lock held): `pending`, then an attempt after `delay_ms`. Returns
    /// the update to report.
    pub(crate) fn start_auto_refund(
        self: &Arc<Self>,
        state: &mut super::client::State,
        deposit: &DetectedDeposit,
    ) -> Option<RefundResult> {
        let record = state.deposits.get_mut(&deposit.id)?;
        let last = RefundResult::new(deposit, RefundStatus::Pending, RefundReason::SweepFailed);
        record.refund = Some(RefundProgress { attempts: 0, auto: true, last: last.clone() });
        self.schedule_refund(state, &deposit.id);
        Some(last)
    }

    /// The next refund attempt of `deposit_id` after `refund.delay_ms`.
    pub(crate) fn schedule_refund(
        self: &Arc<Self>,
        state: &mut super::client::State,
        deposit_id: &str,
    ) {
        let weak = Arc::downgrade(self);
        let id = deposit_id.to_owned();
        let delay = std::time::Duration::from_millis(self.config.refund.delay_ms);
        state.after(&self.runtime, delay, async move {
            if let Some(inner) = weak.upgrade() {
                inner.due(&id, &[DepositState::RefundWait]);
            }
        });
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
        Some(Ok(self.finish_refund(&deposit, manual, outcome)))
    }

    async fn refund_attempt(
        &self,
        deposit: &DetectedDeposit,
        range: (U256, U256),
        prior: Option<SentQuote>,
        progress: &Progress,
    ) -> RefundOutcome {
        if let Some(prior) = prior {
            set_progress(progress, &prior);
            match prior.purpose {
                QuotePurpose::Refund => {
                    return match self.execute(&prior).await {
                        Delivery::Done(answer) => RefundOutcome::Refunded { sent: prior, answer },
                        Delivery::NotExecuted(message) => RefundOutcome::Failed { message },
                        Delivery::Unknown(why) => RefundOutcome::Unknown {
                            message: unknown_refund(&prior.quote.quote_id, &why),
                            sent: prior,
                        },
                    };
                }
                QuotePurpose::Sweep => match self.check_sweep(&prior).await {
                    SweepCheck::Delivered(answer) => {
                        return RefundOutcome::SweepCredited(credited(deposit, &prior, &answer));
                    }
                    SweepCheck::Unknown(message) => {
                        return RefundOutcome::SweepUnresolved { message, sent: prior };
                    }
                    SweepCheck::NotDelivered => {
                        take_progress(progress);
                    }
                },
            }
        }
        let (address, to_sender) = match self.refund_receiver(deposit, range).await {
            Ok(Receiver::To { address, to_sender }) => (address, to_sender),
            Ok(Receiver::Mismatch(message)) => {
                return RefundOutcome::Skipped {
                    reason: RefundReason::AddressTypeMismatch,
                    message,
                };
            }
            Err(e) => {
                return RefundOutcome::Failed {
                    message: format!("Finding the deposit's sender failed: {}", e.message()),
                };
            }
        };
        let destination = Destination { chain_id: deposit.chain_id, address, token: deposit.token };
        let quote = match self
            .quote_for(
                deposit.chain_id,
                deposit.token.symbol(),
                deposit.raw_amount,
                &destination,
                QuotePurpose::Refund,
                Some(&deposit.id),
            )
            .await
        {
            Ok(quote) => quote,
            Err(CallError::Service(e)) if e.code == "BELOW_MINIMUM" => {
                return RefundOutcome::Skipped {
                    reason: RefundReason::BelowMinimum,
                    message: format!("The deposit does not cover the refund's gas: {e}"),
                };
            }
            Err(e) => {
                return RefundOutcome::Failed { message: format!("Refund quote failed: {e}") };
            }
        };
        let signature = match self.sign(&quote.root_hash).await {
            Ok(signature) => signature,
            Err(e) => return RefundOutcome::Failed { message: format!("Signing failed: {e}") },
        };
        let sent =
            SentQuote { quote, signature, destination, purpose: QuotePurpose::Refund, to_sender };
        if let Err(why) = self.record_in_flight(&deposit.id, &sent) {
            return RefundOutcome::Failed { message: format!("Refund not sent: {why}") };
        }
        set_progress(progress, &sent);
        match self.execute(&sent).await {
            Delivery::Done(answer) => RefundOutcome::Refunded { sent, answer },
            Delivery::NotExecuted(message) => RefundOutcome::Failed { message },
            Delivery::Unknown(why) => {
                RefundOutcome::Unknown { message: unknown_refund(&sent.quote.quote_id, &why), sent }
            }
        }
    }

    /// Whether an earlier sweep whose outcome was unknown was delivered.
    async fn check_sweep(&self, prior: &SentQuote) -> SweepCheck {
        let quote_id = &prior.quote.quote_id;
        match self.status_of(quote_id).await {
            Ok(Some(answer)) => match self.follow(prior, answer).await {
                Delivery::Done(answer) => SweepCheck::Delivered(answer),
                Delivery::NotExecuted(_) => SweepCheck::NotDelivered,
                Delivery::Unknown(why) => SweepCheck::Unknown(format!(
                    "the outcome of its sweep (quote {quote_id}) is still unknown: {why}"
                )),
            },
            Ok(None) => {
                if can_never_execute(prior.quote.expires_at, now_ms()) {
                    SweepCheck::NotDelivered
                } else {
                    SweepCheck::Unknown(format!(
                        "its sweep (quote {quote_id}) was never executed but could still be until \
                         the quote expires; it can be refunded after that, or swept with sweep(id)"
                    ))
                }
            }
            Err(e) => SweepCheck::Unknown(format!(
                "the status of its sweep (quote {quote_id}) could not be read ({e})"
            )),
        }
    }

    /// The receiver of a refund of `deposit` (receipts read when `refund_to_sender`).
    async fn refund_receiver(
        &self,
        deposit: &DetectedDeposit,
        range: (U256, U256),
    ) -> Result<Receiver> {
        let owner = &self.config.owner;
        if !self.config.refund.refund_to_sender || range.0 >= range.1 {
            return Ok(choose_receiver(deposit.chain_id, None, owner));
        }
        let account_id = self.account_id()?;
        let receipts =
            with_session(&self.session, |jwt| {
                let account = &self.account;
                let (id, token) = (&account_id, deposit.token.symbol());
                async move {
                    account.receipts(&jwt, id, deposit.chain_id, token, range.0, range.1).await
                }
            })
            .await
            .map_err(|e| {
                e.into_error(ErrorKind::UniversalAccount, "Reading the deposit's receipts")
            })?;
        let senders: Vec<Option<String>> = receipts.into_iter().map(|r| r.sender).collect();
        Ok(choose_receiver(deposit.chain_id, Some(&senders), owner))
    }

    fn finish_refund(
        self: &Arc<Self>,
        deposit: &DetectedDeposit,
        manual: bool,
        outcome: RefundOutcome,
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
                    let used = sweep.delivered.as_ref().map_or_else(
                        || self.state_destination_fallback(),
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

    fn state_destination_fallback(&self) -> Destination {
        self.config.destination.clone()
    }

    /// `can_refund(id)`.
    pub(crate) async fn eligibility(
        self: Arc<Self>,
        deposit_id: &str,
    ) -> Result<RefundEligibility> {
        let not = |message: String| RefundEligibility {
            eligible: false,
            reason: None,
            message,
            refund_address: None,
            refund_to_sender: None,
        };
        let (deposit, range, sweep_failed, caveat) = {
            let state = self.state();
            let Some(record) = state.deposits.get(deposit_id) else {
                return Ok(not(state
                    .gone_reason(deposit_id)
                    .unwrap_or_else(|| format!("Deposit {} not found", quote(deposit_id)))));
            };
            // The same answer `refund` acts on (`machine::admits`).
            if let Admission::Refuse(why) = machine::admits(record.state, Command::Refund) {
                return Ok(not(why.message(&quote(deposit_id))));
            }
            let caveat = match record.state {
                DepositState::Unresolved => Some(
                    "; its earlier sweep's outcome is unknown: refund() first resolves that sweep \
                     with its same quote and refunds only if it was not delivered (if it was, \
                     the deposit is credited instead)",
                ),
                DepositState::RefundUnresolved => Some(
                    "; its earlier refund's outcome is unknown: refund() resolves it with the same \
                     quote (never a second refund)",
                ),
                _ => None,
            };
            (record.deposit.clone(), record.range, record.sweep_failed, caveat)
        };
        let (address, to_sender) = match self.refund_receiver(&deposit, range).await? {
            Receiver::To { address, to_sender } => (address, to_sender),
            Receiver::Mismatch(message) => {
                return Ok(RefundEligibility {
                    reason: Some(RefundReason::AddressTypeMismatch),
                    ..not(message)
                });
            }
        };
        let destination = Destination {
            chain_id: deposit.chain_id,
            address: address.clone(),
            token: deposit.token,
        };
        match self
            .quote_for(
                deposit.chain_id,
                deposit.token.symbol(),
                deposit.raw_amount,
                &destination,
                QuotePurpose::Refund,
                Some(&deposit.id),
            )
            .await
        {
            Ok(_) => {}
            Err(CallError::Service(e)) if e.code == "BELOW_MINIMUM" => {
                return Ok(RefundEligibility {
                    reason: Some(RefundReason::BelowMinimum),
                    refund_address: Some(address),
                    refund_to_sender: Some(to_sender),
                    ..not(format!("The deposit does not cover the refund's gas: {e}"))
                });
            }
            Err(CallError::Service(e)) => {
                return Ok(not(format!("The refund cannot be priced: {e}")));
            }
            Err(e) => {
                return Err(e.into_error(ErrorKind::UniversalAccount, "Pricing the refund"));
            }
        }
        let whom = if to_sender { "its original sender" } else { "the owner" };
        Ok(RefundEligibility {
            eligible: true,
            reason: Some(if sweep_failed {
                RefundReason::SweepFailed
            } else {
                RefundReason::UserRequested
            }),
            message: format!("Refundable to {whom} {address}{}", caveat.unwrap_or_default()),
            refund_address: Some(address),
            refund_to_sender: Some(to_sender),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWNER: &str = "0x52908400098527886e0f7030069857d2e4169ee7";
    const SENDER: &str = "0xde0b295669a9fd93d5f28d9ec85e40f4cb697bae";
    const SOL: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

    fn some(list: &[&str]) -> Vec<Option<String>> {
        list.iter().map(|s| Some((*s).to_owned())).collect()
    }

    #[test]
    fn the_one_known_sender_of_the_right_type_receives() {
        let senders = some(&[SENDER, &SENDER.to_ascii_uppercase().replace("0X", "0x")]);
        assert_eq!(
            choose_receiver(8453, Some(&senders), OWNER),
            Receiver::To { address: SENDER.to_owned(), to_sender: true }
        );
        let sol = some(&[SOL]);
        assert_eq!(
            choose_receiver(101, Some(&sol), OWNER),
            Receiver::To { address: SOL.to_owned(), to_sender: true }
        );
    }

    #[test]
    fn otherwise_the_owner_on_evm_chains() {
        let owner = Receiver::To { address: OWNER.to_owned(), to_sender: false };
        assert_eq!(choose_receiver(8453, None, OWNER), owner, "refund_to_sender off");
        assert_eq!(choose_receiver(8453, Some(&[]), OWNER), owner, "no receipt");
        assert_eq!(choose_receiver(8453, Some(&[None]), OWNER), owner, "sender unknown");
        let mixed = vec![Some(SENDER.to_owned()), None];
        assert_eq!(choose_receiver(8453, Some(&mixed), OWNER), owner, "partly unknown");
        let two = some(&[SENDER, OWNER]);
        assert_eq!(choose_receiver(8453, Some(&two), OWNER), owner, "two senders");
        let solana_sender = some(&[SOL]);
        assert_eq!(choose_receiver(1, Some(&solana_sender), OWNER), owner, "wrong type");
    }

    #[test]
    fn an_unsent_sweep_quote_is_settled_only_well_after_it_expired() {
        assert!(!can_never_execute(0, u64::MAX), "no expiry: never settled");
        assert!(!can_never_execute(1_000, 1_000));
        assert!(!can_never_execute(1_000, 1_000 + QUOTE_EXPIRY_MARGIN_MS));
        assert!(can_never_execute(1_000, 1_001 + QUOTE_EXPIRY_MARGIN_MS));
    }

    #[test]
    fn a_solana_deposit_without_a_solana_sender_mismatches() {
        match choose_receiver(101, Some(&some(&[SENDER])), OWNER) {
            Receiver::Mismatch(why) => {
                assert!(why.starts_with("Address type mismatch: owner address is evm, but source chain Solana requires solana"), "{why}");
                assert!(why.contains("not a valid solana address"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(choose_receiver(101, None, OWNER), Receiver::Mismatch(_)));
        assert!(
            matches!(choose_receiver(999_999, None, OWNER), Receiver::Mismatch(w) if w.contains("Unknown chain"))
        );
    }
}
