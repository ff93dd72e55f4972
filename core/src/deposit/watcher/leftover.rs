//! What a rise of a line without a `received` total holds when a delivered sweep or refund of
//! that line may have left something behind (Particle): the deposits its receive history shows,
//! and the rest, what the sweep's fees left, which is no deposit.
//!
//! A sweep leaves up to about $0.01 or 0.1% of what it moved in the account. The detector
//! lowers its held baseline by the whole deposit ([`Detector::spent`](super::Detector::spent)),
//! so that leftover shows as a rise at the next poll. When a new deposit arrived before that
//! poll, the rise is the deposit plus the leftover: counted whole, the deposit's amount would
//! match none of its transfers and its refund would not find its sender. Such a rise is
//! therefore split here ([`attribute`]) with the account's receive history: the newest receive
//! transfers of the line not attributed yet are the deposit when their sum is at most the rise
//! and the rest is dust; the rest is absorbed into the held baseline.

use std::collections::HashSet;

use crate::services::UaTransaction;
use crate::units::{U256, format_units, parse_raw_amount};

use super::DUST_THRESHOLD_USD;

/// A rise of a line without a `received` total that may hold a sweep's or refund's leftover:
/// the engine reads the account's receive history and [`attribute`]s it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unsettled {
    pub chain_id: u64,
    /// The line's token symbol, upper case.
    pub token: String,
    pub decimals: u32,
    pub price_usd: f64,
    /// How much the balance rose over the held baseline.
    pub rise: U256,
}

/// How much of an [`Unsettled`] rise is deposits: the sum of `transfers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attribution {
    pub chain_id: u64,
    /// The line's token symbol, upper case.
    pub token: String,
    /// What the rise holds of deposits (the rest of it is leftover).
    pub deposit: U256,
    /// The ids of the receive transfers of the line the history showed: the ones `deposit`
    /// counts and the older ones, counted before. None of them is attributed again.
    pub seen: Vec<String>,
}

/// Splits `unsettled` with `transactions` (the account's history, newest first): the shortest
/// run of the newest receive transfers of its line, stopping at the first already
/// `attributed`, whose sum is at most the rise and leaves a rest worth at most
/// [`DUST_THRESHOLD_USD`]. `None` when the history shows no such run (not yet, or the rest is
/// more than dust, or a transfer has no amount, or the price is unknown): the whole rise is
/// then counted as a deposit.
pub(crate) fn attribute(
    unsettled: &Unsettled,
    transactions: &[UaTransaction],
    attributed: &HashSet<String>,
) -> Option<Attribution> {
    let price = unsettled.price_usd;
    if !(price.is_finite() && price > 0.0) {
        return None;
    }
    let is_dust = |rest: U256| {
        format_units(rest, unsettled.decimals)
            .ok()
            .and_then(|human| human.parse::<f64>().ok())
            .is_some_and(|whole| whole * price <= DUST_THRESHOLD_USD)
    };
    let receives: Vec<&UaTransaction> = transactions
        .iter()
        .filter(|t| receives_on(t, unsettled.chain_id, &unsettled.token))
        .collect();
    let mut deposit = U256::ZERO;
    let mut found = is_dust(unsettled.rise);
    for transfer in &receives {
        if found || attributed.contains(&transfer.transaction_id) {
            break;
        }
        let raw = transfer.change.raw_amount.as_deref().and_then(|r| parse_raw_amount(r).ok())?;
        let sum = deposit.checked_add(raw).filter(|sum| *sum <= unsettled.rise)?;
        deposit = sum;
        found = is_dust(unsettled.rise - deposit);
    }
    found.then(|| Attribution {
        chain_id: unsettled.chain_id,
        token: unsettled.token.clone(),
        deposit,
        seen: receive_ids(transactions, unsettled),
    })
}

/// The ids of the receive transfers of `unsettled`'s line in `transactions`: what a rise
/// counted whole (no [`Attribution`]) covered, so that none is attributed again.
pub(crate) fn receive_ids(transactions: &[UaTransaction], unsettled: &Unsettled) -> Vec<String> {
    transactions
        .iter()
        .filter(|t| {
            receives_on(t, unsettled.chain_id, &unsettled.token) && !t.transaction_id.is_empty()
        })
        .map(|t| t.transaction_id.clone())
        .collect()
}

/// Whether `transfer` is an incoming transfer (`receive`) of `symbol` on `chain_id`.
pub(crate) fn receives_on(transfer: &UaTransaction, chain_id: u64, symbol: &str) -> bool {
    let token = &transfer.target_token;
    transfer.tag == "receive"
        && token.chain_id == chain_id
        && (token.symbol.eq_ignore_ascii_case(symbol)
            || token.token_type.eq_ignore_ascii_case(symbol))
}
