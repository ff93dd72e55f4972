//! The chain watchers of a client (`chainRpcUrls`, `docs/finality.md`): a subscription per
//! watched chain to the process's shared watcher of that endpoint (`chain::watch::shared`),
//! following the client's deposit address there; their signals applied to the table on one
//! task, in the order each chain sent them.
//!
//! A transfer the chain shows first is a deposit `seen` under the transfer's id; a balance rise
//! on a watched chain is `seen` under the balance's id unless it is the money of deposits the
//! chain showed first (then it marks them as held: `watch.rs`). Either way the record keeps a
//! [`ChainLink`], and after every signal and every poll each confirming deposit of the chain is
//! judged ([`judge`]): `confirming` with its count, `confirmed` (it goes on as a detected
//! deposit, swept with `autoSweep`), or `reorged`. What is decided here is the finality
//! module's and the machine's; this file applies it and reports it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::chain_balance::Reversal;
use super::{Inner, Job, State};
use crate::chain::watch::shared::{self, Subscription};
use crate::chain::watch::signal::{ChainSignal, TransferSeen};
use crate::chains::{AddressType, get_address_type};
use crate::deposit::events::{DepositEvent, DepositLifecycleEvent, DepositPhase};
use crate::deposit::finality::tracker::FinalBy;
use crate::deposit::finality::{ChainLink, ChainView, Verdict, judge, link_transfer};
use crate::deposit::machine::{self, DepositState, Effect, Input};
use crate::deposit::model::{DetectedDeposit, deposit_id, now_ms, transfer_deposit_id};
use crate::deposit::records::DepositRecord;
use crate::deposit::store::Change;
use crate::deposit::watcher::{DUST_THRESHOLD_USD, meets_token_minimum};
use crate::error::Result;
use crate::tokens::{TokenType, get_token_decimals};
use crate::units::{U256, format_units};

/// The chain watchers of a client and what they showed of their chains.
#[derive(Default)]
pub(crate) struct ChainWatch {
    view: Mutex<ChainView>,
    watchers: Mutex<Vec<Subscription>>,
    task: Mutex<Option<JoinHandle<()>>>,
    /// The last USD price of each (chain, token) a poll read: the value of a deposit the chain
    /// shows before the balance does.
    prices: Mutex<HashMap<(u64, String), f64>>,
    /// The deposit of every transfer linked in this run (chain, transaction, position): a
    /// transfer of a deposit that left the table (credited) and moved to another block is not
    /// a new deposit.
    linked: Mutex<HashMap<(u64, String, u32), String>>,
    /// Deposits the balance had shown that were just reorganised out, for the detector.
    pub(super) reversals: Mutex<Vec<Reversal>>,
}

impl ChainWatch {
    /// Remembers the price of a balance line.
    pub(crate) fn note_price(&self, chain_id: u64, token: &str, price_usd: f64) {
        if price_usd.is_finite() && price_usd > 0.0 {
            let mut prices = self.prices.lock().unwrap_or_else(|e| e.into_inner());
            prices.insert((chain_id, token.to_ascii_uppercase()), price_usd);
        }
    }

    fn link(&self, chain_id: u64, tx: &str, index: u32, id: &str) {
        let mut linked = self.linked.lock().unwrap_or_else(|e| e.into_inner());
        linked.insert((chain_id, tx.to_owned(), index), id.to_owned());
    }

    fn linked(&self, transfer: &TransferSeen) -> Option<String> {
        let linked = self.linked.lock().unwrap_or_else(|e| e.into_inner());
        linked.get(&(transfer.chain_id, transfer.tx.clone(), transfer.index)).cloned()
    }

    fn price(&self, chain_id: u64, token: &str) -> f64 {
        let prices = self.prices.lock().unwrap_or_else(|e| e.into_inner());
        prices.get(&(chain_id, token.to_owned())).copied().unwrap_or(0.0)
    }
}

/// The lifecycle event of a deposit on a watched chain: with its transfer and its count.
pub(crate) fn chain_event(
    phase: DepositPhase,
    record: &DepositRecord,
    state: &State,
    inner: &Inner,
) -> DepositLifecycleEvent {
    let mut event = Inner::lifecycle(phase, &record.deposit, &state.destination);
    if let Some(link) = &record.chain {
        event.source_tx_hash = link.tx.clone();
        if let Some(height) = link.height {
            let heads = inner.chains.view().heads(record.deposit.chain_id);
            let progress = inner.config.finality.progress(record.deposit.chain_id, height, &heads);
            event.confirmations = Some(progress.confirmations);
            event.required_confirmations = progress.required;
        }
    }
    event
}

impl ChainWatch {
    fn view(&self) -> std::sync::MutexGuard<'_, ChainView> {
        self.view.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Inner {
    /// Whether `chain_id` has a chain watcher (a `chainRpcUrls` entry).
    pub(crate) fn watches_chain(&self, chain_id: u64) -> bool {
        self.config.chain_rpc_urls.get(chain_id).is_some()
    }

    /// Subscribes to the shared watcher of every `chainRpcUrls` chain, following the account's deposit
    /// address of that chain's kind, from the lowest block a confirming deposit of it sits in
    /// (so that a restarted client hears of them again). Called by `initialize()` with the
    /// state lock held, after the store's deposits were put back.
    pub(crate) fn start_chain_watch(self: &Arc<Self>, state: &State) -> Result<()> {
        if self.config.chain_rpc_urls.is_empty() {
            return Ok(());
        }
        let Some(account) = &state.account else { return Ok(()) };
        let (tx, rx) = mpsc::unbounded_channel::<ChainSignal>();
        let mut watchers = Vec::new();
        for (chain_id, url) in &self.config.chain_rpc_urls.0 {
            let from_height = state
                .deposits
                .values()
                .filter(|r| r.deposit.chain_id == *chain_id && r.state == DepositState::Confirming)
                .filter_map(|r| r.chain.as_ref().and_then(|link| link.height))
                .min();
            let address = match get_address_type(*chain_id) {
                AddressType::Evm => &account.evm_address,
                AddressType::Solana => &account.solana_address,
            };
            let watcher = shared::subscribe(*chain_id, url, address, from_height, tx.clone())?;
            watchers.push(watcher);
        }
        *self.chains.watchers.lock().unwrap_or_else(|e| e.into_inner()) = watchers;
        let task = self.runtime.spawn(Inner::chain_loop(Arc::downgrade(self), rx));
        *self.chains.task.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
        Ok(())
    }

    /// Ends the subscriptions (`close()`), on a thread of their own: the last one of a chain
    /// stops its watcher, which may be in the middle of a request to its endpoint.
    pub(crate) fn stop_chain_watch(&self) {
        if let Some(task) = self.chains.task.lock().unwrap_or_else(|e| e.into_inner()).take() {
            task.abort();
        }
        let watchers =
            std::mem::take(&mut *self.chains.watchers.lock().unwrap_or_else(|e| e.into_inner()));
        if !watchers.is_empty() {
            let _ = std::thread::Builder::new()
                .name("depositkit-watch-stop".into())
                .spawn(move || drop(watchers));
        }
    }

    async fn chain_loop(weak: Weak<Inner>, mut signals: mpsc::UnboundedReceiver<ChainSignal>) {
        while let Some(signal) = signals.recv().await {
            let Some(inner) = weak.upgrade() else { return };
            if inner.is_closed() {
                return;
            }
            inner.on_chain_signal(signal);
        }
    }

    /// Applies one signal of a chain watcher: the transfer's record updated (or a deposit
    /// `seen`), then every confirming deposit of that chain judged again. Persisted with its
    /// events in one store write.
    pub(crate) fn on_chain_signal(self: &Arc<Self>, signal: ChainSignal) {
        let chain_id = self.chains.view().apply(&signal);
        match &signal {
            ChainSignal::Down { reason, .. } => {
                self.health.record(crate::observe::Service::Chain, Err(reason));
                tracing::warn!(
                    chain = chain_id,
                    reason,
                    "chain watcher lost its endpoint; balance polling covers detection"
                );
            }
            ChainSignal::Up { .. } => {
                self.health.record(crate::observe::Service::Chain, Ok(()));
                tracing::info!(chain = chain_id, "chain watcher reached its endpoint again");
            }
            // A head read is a successful call of the chain's endpoint (`health()`).
            ChainSignal::Head { .. } => self.health.record(crate::observe::Service::Chain, Ok(())),
            _ => {}
        }
        let mut change = Change::default();
        let mut events = Vec::new();
        let reorged;
        let status = {
            let mut state = self.state();
            match signal {
                ChainSignal::Included(transfer) => {
                    self.on_included(&mut state, transfer, &mut events, &mut change);
                }
                ChainSignal::Removed { chain_id, tx, index } => {
                    on_removed(&mut state, chain_id, &tx, index, &mut change);
                }
                _ => {}
            }
            self.judge_chain(&mut state, Some(chain_id), &mut events, &mut change);
            reorged = events.iter().any(|e| e.phase == DepositPhase::Reorged);
            let status = if events.is_empty() { None } else { state.recount() };
            change.events = events.into_iter().map(DepositEvent::Lifecycle).collect();
            self.hub.commit(change);
            status
        };
        self.emit_status(status);
        if reorged {
            // The balance reverses a removed deposit: a poll now sees that fall before a new
            // deposit could hide it (cumulative totals net a fall and a rise between polls).
            let inner = Arc::clone(self);
            self.runtime.spawn(async move { inner.poll_after_reorg().await });
        }
    }

    /// A transfer in a block: the deposit it is (again), one the balance showed first that it
    /// explains, or a deposit `seen` now.
    fn on_included(
        &self,
        state: &mut State,
        transfer: TransferSeen,
        events: &mut Vec<DepositLifecycleEvent>,
        change: &mut Change,
    ) {
        let Some(token) = transfer.token else { return };
        let chain_id = transfer.chain_id;
        if !self.thresholds.supported_chains.contains(&chain_id)
            || !self.thresholds.supported_tokens.contains(&token)
        {
            return;
        }
        let same = |r: &DepositRecord| {
            r.deposit.chain_id == chain_id
                && r.chain.as_ref().is_some_and(|l| {
                    l.tx.as_deref() == Some(transfer.tx.as_str()) && l.index == transfer.index
                })
        };
        let at = (Some(transfer.inclusion.height), Some(transfer.inclusion.hash.clone()));
        if let Some(record) = state.deposits.values_mut().find(|r| same(r)) {
            let link = record.chain.get_or_insert_with(ChainLink::default);
            (link.height, link.block_hash) = at;
            link.removed = false;
            let id = record.deposit.id.clone();
            if record.state == DepositState::Reorged && record.advance(Input::Included).is_ok() {
                events.push(chain_event(DepositPhase::Seen, &state.deposits[&id], state, self));
            }
            change.records.extend(state.write_of(&id));
            return;
        }
        if let Some(id) = self.chains.linked(&transfer) {
            // Its deposit went on and left the table; the transfer only moved.
            tracing::info!(deposit_id = %id, chain = chain_id, "a transfer of a deposit that left the table moved to another block");
            return;
        }
        // A deposit the balance showed first, not yet explained by transfers.
        let mut candidates: Vec<(u64, String, U256)> = state
            .deposits
            .values()
            .filter(|r| r.deposit.chain_id == chain_id && r.deposit.token == token)
            .filter_map(|r| {
                let link = r.chain.as_ref()?;
                (!link.unexplained.is_zero())
                    .then(|| (r.seq, r.deposit.id.clone(), link.unexplained))
            })
            .collect();
        candidates.sort();
        let candidates: Vec<(String, U256)> =
            candidates.into_iter().map(|(_, id, left)| (id, left)).collect();
        if let Some(id) = link_transfer(transfer.raw_amount, &candidates) {
            self.chains.link(chain_id, &transfer.tx, transfer.index, &id);
            if let Some(link) = state.deposits.get_mut(&id).and_then(|r| r.chain.as_mut()) {
                link.unexplained = link.unexplained.saturating_sub(transfer.raw_amount);
                if link.tx.is_none() {
                    link.tx = Some(transfer.tx);
                    link.index = transfer.index;
                    (link.height, link.block_hash) = at;
                }
            }
            change.records.extend(state.write_of(&id));
            return;
        }
        let decimals = u32::from(get_token_decimals(token, Some(chain_id)));
        let price = self.chains.price(chain_id, token.symbol());
        if !could_be_a_deposit(token, transfer.raw_amount, decimals, price) {
            // Below what the balance would take for a deposit (devnet's chain-backed mode sends
            // a deposit address the gas of its collection, for one): not followed.
            tracing::debug!(
                chain = chain_id,
                token = token.symbol(),
                "a transfer below the minimum deposit: not followed"
            );
            return;
        }
        self.seen_on_chain(state, transfer, token, events, change);
    }

    /// A deposit the chain showed before the balance: `seen` under its transfer's id.
    fn seen_on_chain(
        &self,
        state: &mut State,
        transfer: TransferSeen,
        token: TokenType,
        events: &mut Vec<DepositLifecycleEvent>,
        change: &mut Change,
    ) {
        let chain_id = transfer.chain_id;
        let Some(account) = state.account.as_ref() else { return };
        let id = transfer_deposit_id(&account.account_id, chain_id, &transfer.tx, transfer.index);
        if state.results.contains_key(&id) || state.refunds.contains_key(&id) {
            return;
        }
        self.chains.link(chain_id, &transfer.tx, transfer.index, &id);
        let decimals = u32::from(get_token_decimals(token, Some(chain_id)));
        let Ok(amount) = format_units(transfer.raw_amount, decimals) else { return };
        let price = self.chains.price(chain_id, token.symbol());
        let deposit = DetectedDeposit {
            id: id.clone(),
            token,
            chain_id,
            amount_usd: amount.parse::<f64>().unwrap_or(0.0) * price,
            amount,
            raw_amount: transfer.raw_amount,
            decimals,
            detected_at: now_ms(),
        };
        let seq = state.next_seq;
        state.next_seq += 1;
        let mut record =
            DepositRecord::new(deposit, (U256::ZERO, U256::ZERO), seq, machine::seen().state);
        record.chain = Some(ChainLink {
            tx: Some(transfer.tx),
            index: transfer.index,
            height: Some(transfer.inclusion.height),
            block_hash: Some(transfer.inclusion.hash),
            ..ChainLink::default()
        });
        tracing::info!(deposit_id = %id, chain = chain_id, token = token.symbol(), "deposit seen on its chain");
        let event = chain_event(DepositPhase::Seen, &record, state, self);
        if let Some(link) = record.chain.as_mut() {
            link.reported = event.confirmations.unwrap_or(0);
        }
        events.push(event);
        state.deposits.insert(id.clone(), record);
        change.records.extend(state.write_of(&id));
    }

    /// Judges every confirming deposit of `chain` (every watched chain when `None`): reports
    /// its new count, lets a final one go on (its sweep queued with `autoSweep`), sets aside a
    /// reorganised one.
    pub(crate) fn judge_chain(
        &self,
        state: &mut State,
        chain: Option<u64>,
        events: &mut Vec<DepositLifecycleEvent>,
        change: &mut Change,
    ) {
        let now = now_ms();
        let mut ids: Vec<(u64, String)> = state
            .deposits
            .values()
            .filter(|r| r.state == DepositState::Confirming && r.chain.is_some())
            .filter(|r| chain.is_none_or(|c| c == r.deposit.chain_id))
            .map(|r| (r.seq, r.deposit.id.clone()))
            .collect();
        ids.sort();
        let auto = self.config.auto_sweep && state.jobs.is_some();
        let account_id = state.account.as_ref().map(|a| a.account_id.clone()).unwrap_or_default();
        let account_id = account_id.as_str();
        for (_, id) in ids {
            let Some(record) = state.deposits.get_mut(&id) else { continue };
            let Some(link) = record.chain.as_mut() else { continue };
            let deposit = &record.deposit;
            let waited =
                if link.tx.is_none() { now.saturating_sub(deposit.detected_at) } else { 0 };
            let view = self.chains.view();
            let verdict = judge(
                link,
                deposit.chain_id,
                deposit.amount_usd,
                waited,
                &view,
                &self.config.finality,
            );
            drop(view);
            let phase = match verdict {
                Verdict::Confirming(Some(progress)) if progress.confirmations != link.reported => {
                    link.reported = progress.confirmations;
                    DepositPhase::Confirming
                }
                Verdict::Confirming(_) => continue,
                Verdict::Reorged => match record.advance(Input::Reorged) {
                    Ok(_) => {
                        if let Some(link) = record.chain.as_mut().filter(|l| l.in_balance) {
                            // The balance takes it back; if it returns, its rise is claimed
                            // by it again.
                            link.in_balance = false;
                            let d = &record.deposit;
                            let balance_id = deposit_id(
                                account_id,
                                d.chain_id,
                                d.token,
                                record.range.0,
                                record.range.1,
                            );
                            let mut reversals =
                                self.chains.reversals.lock().unwrap_or_else(|e| e.into_inner());
                            reversals.push(Reversal {
                                chain_id: d.chain_id,
                                token: d.token,
                                range: record.range,
                                balance_id,
                            });
                        }
                        DepositPhase::Reorged
                    }
                    Err(_) => continue,
                },
                Verdict::Final(by) => match record.advance(Input::Final { auto_sweep: auto }) {
                    Ok(step) => {
                        if by != FinalBy::Policy {
                            tracing::info!(deposit_id = %id, by = ?by, "deposit taken as final");
                        }
                        if step.effect == Some(Effect::QueueSweep)
                            && let Some(jobs) = &state.jobs
                        {
                            let _ = jobs.send(Job::Sweep { deposit_id: id.clone(), reply: None });
                        }
                        DepositPhase::Confirmed
                    }
                    Err(_) => continue,
                },
            };
            let record = &state.deposits[&id];
            events.push(chain_event(phase, record, state, self));
            change.records.extend(state.write_of(&id));
        }
    }
}

/// A transfer whose block left the chain: the deposit it is, if still confirming, is marked so
/// (then judged `reorged`); one that went on already stays as it is (its chain's rule was met).
fn on_removed(state: &mut State, chain_id: u64, tx: &str, index: u32, change: &mut Change) {
    let found = state.deposits.values_mut().find(|r| {
        r.deposit.chain_id == chain_id
            && r.chain.as_ref().is_some_and(|l| l.tx.as_deref() == Some(tx) && l.index == index)
    });
    let Some(record) = found else { return };
    let id = record.deposit.id.clone();
    if record.state != DepositState::Confirming {
        tracing::warn!(deposit_id = %id, chain = chain_id, state = %record.state, "a final deposit's transfer left its chain; it stays as it is");
        return;
    }
    if let Some(link) = record.chain.as_mut() {
        link.removed = true;
        link.height = None;
        link.block_hash = None;
    }
    change.records.extend(state.write_of(&id));
}

/// Whether a transfer the chain shows first could be a deposit: at least the token's minimum
/// deposit and, once a poll told the token's price, worth more than dust — what the balance
/// would take for one (`watcher::judge`).
fn could_be_a_deposit(token: TokenType, raw: U256, decimals: u32, price_usd: f64) -> bool {
    let worth = format_units(raw, decimals).ok().and_then(|a| a.parse::<f64>().ok());
    let dust = price_usd > 0.0 && worth.is_some_and(|w| w * price_usd <= DUST_THRESHOLD_USD);
    meets_token_minimum(token, raw, decimals) && !dust
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfers_below_the_minimum_deposit_or_dust_are_not_deposits() {
        let wei = |eth: &str| crate::units::parse_units(eth, 18).unwrap();
        // The gas of a collection (0.00005 ETH) is below ETH's minimum deposit, price or not.
        assert!(!could_be_a_deposit(TokenType::ETH, wei("0.00005"), 18, 0.0));
        assert!(could_be_a_deposit(TokenType::ETH, wei("0.001"), 18, 0.0));
        assert!(could_be_a_deposit(TokenType::ETH, wei("0.001"), 18, 2500.0));
        // Dust by its price: 0.5 USDC at 0.1 USD.
        assert!(!could_be_a_deposit(TokenType::USDC, U256::from(500_000u64), 6, 0.1));
        assert!(could_be_a_deposit(TokenType::USDC, U256::from(500_000u64), 6, 1.0));
    }
}
