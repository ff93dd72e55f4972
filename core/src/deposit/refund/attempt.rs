//! One refund attempt: an earlier send whose outcome is unknown is resolved first (with its
//! same quote), then receiver → quote → sign → send.

use super::Inner;
use super::receiver::Receiver;
use crate::deposit::config::Destination;
use crate::deposit::model::{DetectedDeposit, RefundReason, SweepResult, now_ms};
use crate::deposit::send::{Delivery, Progress, SentQuote, credited, set_progress, take_progress};
use crate::services::{BELOW_MINIMUM, CallError, PreparedTransfer, QuotePurpose, SendResult};
use crate::units::U256;

/// A sweep quote never executed is known never to execute this long after it expired (a
/// margin for the service's and the client's clocks).
pub(super) const QUOTE_EXPIRY_MARGIN_MS: u64 = 10_000;

/// How one refund attempt ended.
pub(super) enum RefundOutcome {
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

/// Whether a quote the service reports `NOT_SENT` can never execute any more: it expired (by
/// the service's clock, with a margin for skew) — a send arriving now would be refused with
/// `410 QUOTE_EXPIRED`. A quote without an expiry never qualifies.
pub(super) fn can_never_execute(expires_at: u64, now: u64) -> bool {
    expires_at > 0 && now > expires_at.saturating_add(QUOTE_EXPIRY_MARGIN_MS)
}

pub(super) fn unknown_refund(quote_id: &str, why: &str) -> String {
    format!(
        "The outcome of refund quote {quote_id} is unknown: {why}. It is resolved with the same \
         quote before anything else (never quoted anew)"
    )
}

impl Inner {
    pub(super) async fn refund_attempt(
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
                    return match self.services().resolve(&prior).await {
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
        let PreparedTransfer { quote, backend } =
            match self.refund_quote(deposit, &destination).await {
                Ok(transfer) => transfer,
                Err(CallError::Service(e)) if e.code == BELOW_MINIMUM => {
                    return RefundOutcome::Skipped {
                        reason: RefundReason::BelowMinimum,
                        message: format!("The deposit does not cover the refund's gas: {e}"),
                    };
                }
                Err(e) => {
                    return RefundOutcome::Failed { message: format!("Refund quote failed: {e}") };
                }
            };
        let signature = match self.services().sign(&quote).await {
            Ok(signature) => signature,
            Err(e) => return RefundOutcome::Failed { message: e.message().to_owned() },
        };
        let sent = SentQuote {
            quote,
            signature,
            destination,
            purpose: QuotePurpose::Refund,
            to_sender,
            backend,
        };
        if let Err(why) = self.record_in_flight(&deposit.id, &sent) {
            return RefundOutcome::Failed { message: format!("Refund not sent: {why}") };
        }
        set_progress(progress, &sent);
        match self.services().execute(&sent).await {
            Delivery::Done(answer) => RefundOutcome::Refunded { sent, answer },
            Delivery::NotExecuted(message) => RefundOutcome::Failed { message },
            Delivery::Unknown(why) => {
                RefundOutcome::Unknown { message: unknown_refund(&sent.quote.quote_id, &why), sent }
            }
        }
    }

    /// A refund quote of the whole `deposit` to `destination` (its own chain and token).
    pub(super) async fn refund_quote(
        &self,
        deposit: &DetectedDeposit,
        destination: &Destination,
    ) -> std::result::Result<PreparedTransfer, CallError> {
        let (chain_id, token) = (deposit.chain_id, deposit.token.symbol());
        let refund = QuotePurpose::Refund;
        self.quote_for(chain_id, token, deposit.raw_amount, destination, refund, Some(&deposit.id))
            .await
    }

    /// Whether an earlier sweep whose outcome was unknown was delivered.
    async fn check_sweep(&self, prior: &SentQuote) -> SweepCheck {
        let quote_id = &prior.quote.quote_id;
        match self.services().status_of(prior).await {
            Ok(Some(answer)) => match self.services().follow(prior, answer).await {
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
}
