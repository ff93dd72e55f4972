//! Accounts and their balance lines (`POST /v1/accounts`, `POST /v1/balances`).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::amount;
use crate::http::Reply;
use crate::services::{CallError, decode};
use crate::units::U256;

/// An initialized account (`POST /v1/accounts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountInfo {
    /// The service's id of the account (`acc_…`).
    pub account_id: String,
    /// The intermediary wallet owning it.
    pub owner_address: String,
    /// The EVM deposit address.
    pub evm_address: String,
    /// The Solana deposit address.
    pub solana_address: String,
}

/// One balance line of an account (`POST /v1/balances`).
#[derive(Debug, Clone, PartialEq)]
pub struct BalanceLine {
    /// Chain id.
    pub chain_id: u64,
    /// Token symbol as sent (`"USDC"`); unknown symbols are kept so the caller can skip them.
    pub token: String,
    /// Decimals of `raw_amount` and `received`.
    pub decimals: u32,
    /// What the account holds now.
    pub raw_amount: U256,
    /// The cumulative total ever deposited from outside; only grows.
    pub received: U256,
    /// USD price of one whole token.
    pub price_usd: f64,
    /// USD value of `raw_amount`.
    pub value_usd: f64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBalanceLine {
    chain_id: u64,
    token: String,
    decimals: u32,
    raw_amount: String,
    received: String,
    #[serde(rename = "priceUSD", default)]
    price_usd: f64,
    #[serde(rename = "valueUSD", default)]
    value_usd: f64,
}

#[derive(Deserialize)]
struct RawAccountBalances {
    balances: Vec<RawBalanceLine>,
}

#[derive(Deserialize)]
struct RawBalances {
    accounts: HashMap<String, RawAccountBalances>,
}

// Parsed apart from the HTTP so that it is pure: an entry point of the fuzz targets (`fuzz/`),
// not part of the API. It takes the HTTP status and body.

/// The answer of `POST /v1/balances`: each account's balance lines.
#[doc(hidden)]
pub fn parse_balances(
    status: u16,
    body: String,
) -> Result<HashMap<String, Vec<BalanceLine>>, CallError> {
    const WHAT: &str = "balances";
    let raw: RawBalances = decode(WHAT, Reply { status, body })?;
    let mut accounts = HashMap::with_capacity(raw.accounts.len());
    for (id, lines) in raw.accounts {
        let mut out = Vec::with_capacity(lines.balances.len());
        for line in lines.balances {
            out.push(BalanceLine {
                chain_id: line.chain_id,
                raw_amount: amount(WHAT, "rawAmount", &line.raw_amount)?,
                received: amount(WHAT, "received", &line.received)?,
                token: line.token,
                decimals: line.decimals,
                price_usd: line.price_usd,
                value_usd: line.value_usd,
            });
        }
        accounts.insert(id, out);
    }
    Ok(accounts)
}
