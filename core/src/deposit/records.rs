//! The records of the deposits in a client's table: data, and the one way their state changes
//! (a step of the deposit machine). They sit below the store, which persists them, and the
//! engine (client, sweeper, refunds, recovery), which acts on them.

use super::finality::ChainLink;
use super::machine::{self, DepositState, Illegal, Input, Next, Purpose, Step};
use super::model::Destination;
use super::model::{DetectedDeposit, RefundResult};
use crate::observe;
use crate::services::{Quote, QuotePurpose};
use crate::units::U256;

/// A signed quote whose send was attempted.
#[derive(Debug, Clone)]
pub(crate) struct SentQuote {
    pub quote: Quote,
    pub signature: String,
    /// Where it delivers (for a refund: the receiver on the source chain, in the deposit's
    /// token).
    pub destination: Destination,
    pub purpose: QuotePurpose,
    /// For a refund: whether the receiver is the deposit's original sender.
    pub to_sender: bool,
    /// The backend's own data of the quoted transfer (`PreparedTransfer::backend`: Particle's
    /// user operations and signing window; devnet's is null), kept so that a restarted client
    /// can look up and send again the same transfer.
    pub backend: serde_json::Value,
}

/// A refund under way (or the last one tried) of a deposit still in the table.
#[derive(Debug, Clone)]
pub(crate) struct RefundProgress {
    /// Attempts made.
    pub attempts: u32,
    /// Automatic (retried up to `refund.max_attempts`) or manual (one attempt).
    pub auto: bool,
    /// The latest update.
    pub last: RefundResult,
}

#[derive(Debug)]
pub(crate) struct DepositRecord {
    pub deposit: DetectedDeposit,
    /// The range of the account's cumulative `received` it covers (to find its sender).
    pub range: (U256, U256),
    pub seq: u64,
    pub state: DepositState,
    pub attempts: u32,
    /// A signed quote whose send outcome is unknown (a sweep's or a refund's).
    pub unresolved: Option<SentQuote>,
    /// The signed quote of the attempt running now, recorded before it is sent: a client
    /// killed meanwhile resolves this quote when it starts again instead of quoting anew.
    pub in_flight: Option<SentQuote>,
    /// Automatic resolution rounds of `unresolved` so far.
    pub reconcile_rounds: u32,
    /// Whether a sweep of it failed for good.
    pub sweep_failed: bool,
    pub refund: Option<RefundProgress>,
    /// On a chain with a chain watcher: its transfer there, as far as the client knows it
    /// (`deposit/finality/`); `None` on the other chains.
    pub chain: Option<ChainLink>,
}

impl DepositRecord {
    /// A record entering the table in `state`, with no attempt made yet.
    pub(crate) fn new(
        deposit: DetectedDeposit,
        range: (U256, U256),
        seq: u64,
        state: DepositState,
    ) -> DepositRecord {
        DepositRecord {
            deposit,
            range,
            seq,
            state,
            attempts: 0,
            unresolved: None,
            in_flight: None,
            reconcile_rounds: 0,
            sweep_failed: false,
            refund: None,
            chain: None,
        }
    }

    /// What the machine knows of this record: its state and the send that may be out (the
    /// attempt's recorded quote, else the unresolved one).
    pub(crate) fn lifecycle(&self) -> machine::Lifecycle {
        let sent = self.in_flight.as_ref().or(self.unresolved.as_ref());
        machine::Lifecycle { state: self.state, unknown: sent.map(|q| purpose_of(q.purpose)) }
    }

    /// Applies `input` through the machine ([`machine::step`]): the record takes the next
    /// state when it stays in the table; the engine applies the step's effect and removes a
    /// record that ended. An illegal input (a stale job) leaves the record as it is.
    pub(crate) fn advance(&mut self, input: Input) -> std::result::Result<Step, Illegal> {
        self.advance_after(None, input)
    }

    /// [`advance`](DepositRecord::advance) at the end of an attempt whose recorded quote the
    /// engine already took from the record (`sent`): the machine still sees it out.
    pub(crate) fn advance_after(
        &mut self,
        sent: Option<&SentQuote>,
        input: Input,
    ) -> std::result::Result<Step, Illegal> {
        let mut lifecycle = self.lifecycle();
        if let Some(sent) = sent {
            lifecycle.unknown = Some(purpose_of(sent.purpose));
        }
        let step = machine::step(lifecycle, input)?;
        let from = self.state.as_str();
        if let Next::Open(next) = step.next {
            self.state = next.state;
        }
        self.observe(from, input, step.next);
        Ok(step)
    }

    /// Logs a step (INFO; a retry WARN) and counts how the deposit ended.
    fn observe(&self, from: &'static str, input: Input, next: Next) {
        let deposit = &self.deposit;
        let token = deposit.token.symbol();
        let to = match next {
            Next::Open(next) => next.state.as_str(),
            Next::Credited => "credited",
            Next::Refunded => "refunded",
        };
        match next {
            Next::Credited => {
                observe::deposit_ended(deposit.chain_id, token, false, deposit.detected_at);
            }
            Next::Refunded => {
                observe::deposit_ended(deposit.chain_id, token, true, deposit.detected_at);
            }
            Next::Open(next) if next.state == DepositState::Failed && from != to => {
                observe::deposit_failed(deposit.chain_id, token);
            }
            Next::Open(_) => {}
        }
        if let Input::Failed { again: true, .. } = input {
            let purpose = if from.starts_with("refund") { "refund" } else { "sweep" };
            observe::deposit_retry(purpose);
            tracing::warn!(
                deposit_id = %deposit.id,
                chain = deposit.chain_id,
                token,
                from,
                to,
                attempt = self.attempts,
                purpose,
                "deposit attempt failed; retrying"
            );
        } else {
            tracing::info!(
                deposit_id = %deposit.id,
                chain = deposit.chain_id,
                token,
                from,
                to,
                attempt = self.attempts,
                input = ?input,
                "deposit state changed"
            );
        }
    }
}

/// The machine's name of a quote's purpose.
pub(crate) const fn purpose_of(purpose: QuotePurpose) -> Purpose {
    match purpose {
        QuotePurpose::Sweep => Purpose::Sweep,
        QuotePurpose::Refund => Purpose::Refund,
    }
}
