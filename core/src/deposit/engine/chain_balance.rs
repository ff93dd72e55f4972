//! The balance's side of watched chains (`chain.rs`, `docs/finality.md` §3–4): a balance rise
//! on a watched chain is the money of deposits the chain showed first, or a deposit `seen` by
//! the balance; a deposit reorganised out is taken back by the detector, and a poll runs at
//! once so that a new deposit is a rise again.

use std::sync::Arc;

use super::chain::chain_event;
use super::{Inner, State};
use crate::deposit::events::{DepositLifecycleEvent, DepositPhase};
use crate::deposit::finality::{ChainLink, claim_rise};
use crate::deposit::machine::{self, DepositState};
use crate::deposit::model::{DetectedDeposit, deposit_id};
use crate::deposit::records::DepositRecord;
use crate::deposit::store::Change;
use crate::tokens::TokenType;
use crate::units::{U256, format_units};

/// A deposit the balance had shown that was reorganised out: what the detector takes back
/// ([`Detector::reverse`](crate::deposit::watcher::Detector::reverse)).
pub(super) struct Reversal {
    pub chain_id: u64,
    pub token: TokenType,
    /// The range of the line's `received` it covered.
    pub range: (U256, U256),
    /// The id the balance gave that range.
    pub balance_id: String,
}

impl Inner {
    /// A balance rise on a watched chain: first the money of deposits the chain showed before
    /// (each now held: it may go on once final, at the balance's price), then, for what is
    /// left, a deposit `seen` by the balance under the id of that part of the rise.
    pub(crate) fn seen_by_balance(
        &self,
        state: &mut State,
        account_id: &str,
        found: (DetectedDeposit, (U256, U256)),
        events: &mut Vec<DepositLifecycleEvent>,
        change: &mut Change,
    ) {
        let (deposit, range) = found;
        let (chain_id, token) = (deposit.chain_id, deposit.token);
        // The same range again: a reorganised-out deposit coming back (the balance re-credits
        // it, maybe before its chain reports it again).
        let back = state.deposits.values_mut().find(|r| {
            r.deposit.chain_id == chain_id
                && r.deposit.token == token
                && r.range == range
                && r.chain.as_ref().is_some_and(|l| !l.in_balance)
        });
        if let Some(record) = back {
            if let Some(link) = record.chain.as_mut() {
                link.in_balance = true;
            }
            let id = record.deposit.id.clone();
            change.records.extend(state.write_of(&id));
            return;
        }
        let mut candidates: Vec<(u64, String, U256)> = state
            .deposits
            .values()
            .filter(|r| r.deposit.chain_id == chain_id && r.deposit.token == token)
            .filter(|r| r.chain.as_ref().is_some_and(|l| l.tx.is_some() && !l.in_balance))
            .filter(|r| r.state != DepositState::Reorged)
            .map(|r| (r.seq, r.deposit.id.clone(), r.deposit.raw_amount))
            .collect();
        candidates.sort();
        let candidates: Vec<(String, U256)> =
            candidates.into_iter().map(|(_, id, raw)| (id, raw)).collect();
        let (claimed, left) = claim_rise(deposit.raw_amount, &candidates);
        let whole: f64 = deposit.amount.parse().unwrap_or(0.0);
        let price = if whole > 0.0 { deposit.amount_usd / whole } else { 0.0 };
        let mut low = range.0;
        for id in claimed {
            let Some(record) = state.deposits.get_mut(&id) else { continue };
            let raw = record.deposit.raw_amount;
            record.range = (low, low.saturating_add(raw));
            low = low.saturating_add(raw);
            record.deposit.amount_usd = record.deposit.amount.parse::<f64>().unwrap_or(0.0) * price;
            if let Some(link) = record.chain.as_mut() {
                link.in_balance = true;
            }
            change.records.extend(state.write_of(&id));
        }
        if left.is_zero() {
            return;
        }
        let range = (range.1.saturating_sub(left), range.1);
        let deposit = if left == deposit.raw_amount {
            deposit
        } else {
            let Ok(amount) = format_units(left, deposit.decimals) else { return };
            DetectedDeposit {
                id: deposit_id(account_id, chain_id, token, range.0, range.1),
                amount_usd: amount.parse::<f64>().unwrap_or(0.0) * price,
                amount,
                raw_amount: left,
                ..deposit
            }
        };
        let id = deposit.id.clone();
        if state.deposits.contains_key(&id)
            || state.results.contains_key(&id)
            || state.refunds.contains_key(&id)
        {
            return;
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        let mut record = DepositRecord::new(deposit, range, seq, machine::seen().state);
        record.chain =
            Some(ChainLink { in_balance: true, unexplained: left, ..ChainLink::default() });
        tracing::info!(deposit_id = %id, chain = chain_id, token = token.symbol(), "deposit seen in the balance");
        events.push(chain_event(DepositPhase::Seen, &record, state, self));
        state.deposits.insert(id.clone(), record);
        change.records.extend(state.write_of(&id));
    }

    /// The balance's side of a reorganisation: the detector takes back what the removed
    /// deposits had raised (on devnet's protocol, whose `received` follows the chain), then a
    /// poll runs at once.
    pub(super) async fn poll_after_reorg(self: Arc<Self>) {
        if self.is_closed() {
            return;
        }
        let mut detector = self.detector.lock().await;
        let reversals =
            std::mem::take(&mut *self.chains.reversals.lock().unwrap_or_else(|e| e.into_inner()));
        if self.speaks_protocol() {
            for r in reversals {
                detector.reverse(r.chain_id, r.token, r.range, &r.balance_id);
            }
        }
        if let Err(error) = self.poll_locked(&mut detector).await {
            tracing::debug!(error = %error, "poll after a reorganisation failed");
        }
    }
}
