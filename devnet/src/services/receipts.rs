//! Receipts (`GET /ua/v1/receipts`): the incoming transfers that make up a range of an
//! account's cumulative `received` on one chain and token — how a deposit's original sender is
//! found. Every incoming transfer is recorded with the line's `received` before and after it.

use depositkit_core::{Chain, TokenType, U256, parse_raw_amount};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Services;
use super::api::{ApiError, ApiResult};
use super::signer::Wallet;
use super::sweeps::owned_account;
use crate::chain::ledger_sync::Scope;
use crate::store::Receipt;

/// The query of `GET /v1/receipts`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptsQuery {
    pub account_id: Option<String>,
    pub chain_id: Option<u64>,
    pub token: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
}

/// The receipts of the account overlapping `(from, to]`, oldest first.
///
/// # Errors
/// 400 for a missing or bad parameter (unknown chain or token, `from` ≥ `to`); 403
/// `NOT_YOUR_ACCOUNT`.
pub fn receipts(services: &Services, wallet: &Wallet, query: &ReceiptsQuery) -> ApiResult {
    let (Some(account_id), Some(chain_id), Some(token), Some(from), Some(to)) = (
        query.account_id.as_deref(),
        query.chain_id,
        query.token.as_deref(),
        query.from.as_deref(),
        query.to.as_deref(),
    ) else {
        return Err(ApiError::invalid(
            "\"accountId\", \"chainId\", \"token\", \"from\" and \"to\" are required",
        ));
    };
    let account = owned_account(services, wallet, account_id)?;
    let chain = Chain::from_id(chain_id)
        .ok_or_else(|| ApiError::invalid(format!("chainId: unknown chain id {chain_id}")))?;
    let token: TokenType = token.parse().map_err(|e: depositkit_core::Error| {
        ApiError::invalid(format!("token: {}", e.message()))
    })?;
    let from = amount("from", from)?;
    let to = amount("to", to)?;
    if from >= to {
        return Err(ApiError::invalid(format!(
            "\"from\" ({from}) must be less than \"to\" ({to})"
        )));
    }
    // What arrived on a chain-backed chain is recorded when the line is read.
    services.observe(&account, Scope::Line(chain.id(), token))?;
    let found = services
        .store
        .ua_receipts(&account.id, chain.id(), token, from, to)
        .map_err(ApiError::internal)?;
    let receipts: Vec<Value> = found.iter().map(receipt).collect();
    Ok(json!({ "receipts": receipts }))
}

/// A receipt as the endpoint answers it.
pub fn receipt(receipt: &Receipt) -> Value {
    json!({
        "txHash": receipt.tx_hash,
        "sender": receipt.sender,
        "rawAmount": receipt.raw_amount.to_string(),
        "receivedBefore": receipt.received_before.to_string(),
        "receivedAfter": receipt.received_after.to_string(),
        "timestamp": receipt.timestamp,
    })
}

fn amount(field: &str, text: &str) -> ApiResult<U256> {
    parse_raw_amount(text).map_err(|e| ApiError::invalid(format!("{field}: {}", e.message())))
}
