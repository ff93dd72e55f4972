//! What the client knows of its deposits' transfers on watched chains, and the decisions over
//! it. Pure: the engine applies the chain watcher's signals to a [`ChainView`] and to the
//! records' [`ChainLink`]s, asks [`judge`] where each confirming deposit stands, and steps the
//! deposit machine accordingly.
//!
//! One deposit, one id, whichever source saw it first (`docs/finality.md` §3):
//!
//! - **the chain first**: the transfer's deposit gets the id of the transfer
//!   ([`transfer_deposit_id`](crate::deposit::model::transfer_deposit_id): account, chain,
//!   transaction, position), which a reorg does not change; the balance rise that later shows it
//!   is claimed by it ([`claim_rise`]) and reports no second deposit;
//! - **the balance first**: the rise's deposit keeps the balance's id
//!   ([`deposit_id`](crate::deposit::model::deposit_id)); the transfers the chain reports later
//!   are absorbed by it ([`link_transfer`]) while they fit in what it has not explained yet, and
//!   its first one is the transfer whose finality it follows.
//!
//! A deposit only the balance showed (the chain's endpoint down, or a transfer the watcher
//! cannot see) is final once the balance has shown it for the policy's fallback time
//! ([`FinalityPolicy::fallback_ms`]): polling stays the cross-check, and nothing is missed.

use std::collections::{HashMap, HashSet};

use crate::chain::watch::signal::ChainSignal;
use crate::units::U256;

use super::policy::{FinalityPolicy, Heads, Progress};

/// A deposit's transfer on a watched chain, as far as the client knows it. Kept with the
/// deposit's record (and in the store).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChainLink {
    /// The transaction hash (signature) of the transfer it follows; `None` while only the
    /// balance showed it.
    pub tx: Option<String>,
    /// The transfer's position in its transaction.
    pub index: u32,
    /// The block (slot) holding it; `None` when not reported yet or removed.
    pub height: Option<u64>,
    /// That block's hash.
    pub block_hash: Option<String>,
    /// A reorganisation removed it and it was not included again.
    pub removed: bool,
    /// The balance showed it (the account holds it).
    pub in_balance: bool,
    /// Of a deposit the balance showed first: what no reported transfer explains yet.
    pub unexplained: U256,
    /// The confirmations last reported in an event (0: none yet).
    pub reported: u64,
}

/// Why a confirming deposit became final.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalBy {
    /// Its chain's rule was met.
    Policy,
    /// It is worth less than `finality.instantBelowUsd`.
    Instant,
    /// Only the balance showed it, for the policy's fallback time.
    Fallback,
}

/// Where a confirming deposit stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not final yet; with its progress when its chain reported its transfer.
    Confirming(Option<Progress>),
    /// Final: it goes on as a detected deposit.
    Final(FinalBy),
    /// Its transfer is no longer in the chain.
    Reorged,
}

/// The heads of the watched chains, and which watchers lost their endpoint.
#[derive(Debug, Clone, Default)]
pub struct ChainView {
    heads: HashMap<u64, Heads>,
    down: HashSet<u64>,
}

impl ChainView {
    /// Takes in what a signal says of the chain itself (heads, endpoint down or up, and that a
    /// transfer's block exists); transfers themselves change records, not the view. The chain
    /// the signal is about.
    pub fn apply(&mut self, signal: &ChainSignal) -> u64 {
        match signal {
            ChainSignal::Head { chain_id, latest, safe, finalized } => {
                let heads = self.heads.entry(*chain_id).or_default();
                // Heads only move forward, except `latest` after a reorg to a shorter chain.
                heads.latest = *latest;
                heads.safe = heads.safe.max(*safe);
                heads.finalized = heads.finalized.max(*finalized);
                *chain_id
            }
            ChainSignal::Down { chain_id, .. } => {
                self.down.insert(*chain_id);
                *chain_id
            }
            ChainSignal::Up { chain_id } => {
                self.down.remove(chain_id);
                *chain_id
            }
            ChainSignal::Included(transfer) => {
                // The chain holds at least the transfer's block, whether or not a head said so.
                let heads = self.heads.entry(transfer.chain_id).or_default();
                heads.latest = heads.latest.max(transfer.inclusion.height);
                transfer.chain_id
            }
            ChainSignal::Removed { chain_id, .. } => *chain_id,
        }
    }

    /// The heads of `chain_id` (all 0 before its watcher reported any).
    pub fn heads(&self, chain_id: u64) -> Heads {
        self.heads.get(&chain_id).copied().unwrap_or_default()
    }

    /// Whether the watcher of `chain_id` lost its endpoint.
    pub fn is_down(&self, chain_id: u64) -> bool {
        self.down.contains(&chain_id)
    }
}

/// Where a confirming deposit on `chain_id` worth `amount_usd` stands, the balance having shown
/// it for `in_balance_ms` (0 when it has not).
///
/// A transfer the chain removed is reorged. One the chain holds is final when it is instant or
/// its rule is met, and the balance showed it (the account holds what would be swept). One only
/// the balance showed is final when instant, or after the fallback time.
pub fn judge(
    link: &ChainLink,
    chain_id: u64,
    amount_usd: f64,
    in_balance_ms: u64,
    view: &ChainView,
    policy: &FinalityPolicy,
) -> Verdict {
    if link.removed {
        return Verdict::Reorged;
    }
    let instant = policy.instant(amount_usd);
    match (&link.tx, link.height) {
        (Some(_), Some(height)) => {
            let progress = policy.progress(chain_id, height, &view.heads(chain_id));
            match (link.in_balance, instant || progress.met) {
                (true, true) if instant && !progress.met => Verdict::Final(FinalBy::Instant),
                (true, true) => Verdict::Final(FinalBy::Policy),
                _ => Verdict::Confirming(Some(progress)),
            }
        }
        _ if link.in_balance && instant => Verdict::Final(FinalBy::Instant),
        _ if link.in_balance && in_balance_ms >= policy.fallback_ms(chain_id) => {
            Verdict::Final(FinalBy::Fallback)
        }
        _ => Verdict::Confirming(None),
    }
}

/// Which deposits the chain reported first a balance rise of `rise` shows: of `candidates`
/// (their ids and amounts, oldest first: deposits of the rise's chain and token the balance has
/// not shown yet), each that still fits in what is left of the rise. Those ids, and what is
/// left: a deposit of its own when not zero.
pub fn claim_rise(rise: U256, candidates: &[(String, U256)]) -> (Vec<String>, U256) {
    let mut left = rise;
    let mut claimed = Vec::new();
    for (id, amount) in candidates {
        if *amount <= left && !amount.is_zero() {
            left -= *amount;
            claimed.push(id.clone());
        }
    }
    (claimed, left)
}

/// The deposit the balance showed first that a transfer of `amount` the chain reports belongs
/// to: of `candidates` (ids and what no transfer explains yet, oldest first, of the transfer's
/// chain and token), one that it explains exactly, else the first it fits in.
pub fn link_transfer(amount: U256, candidates: &[(String, U256)]) -> Option<String> {
    candidates
        .iter()
        .find(|(_, unexplained)| *unexplained == amount)
        .or_else(|| candidates.iter().find(|(_, unexplained)| *unexplained > amount))
        .map(|(id, _)| id.clone())
}

#[cfg(test)]
mod tests;
