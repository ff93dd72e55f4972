//! Opening accounts and reading balances (`POST /ua/v1/accounts`, `POST /ua/v1/balances`),
//! including batches across wallets authorised by `X-Batch-Sessions`.

use std::collections::HashSet;

use axum::http::StatusCode;
use depositkit_core::get_token_decimals;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::Services;
use super::api::{ApiError, ApiResult, codes};
use super::fees;
use super::signer::Wallet;
use crate::chain::ledger_sync::Scope;
use crate::store::BalanceLine;
use crate::time;

/// Most account ids one balances request may name.
pub const MAX_ACCOUNTS: usize = 1000;
/// The header carrying one JWT per wallet of a batch, comma-separated.
pub const BATCH_SESSIONS_HEADER: &str = "x-batch-sessions";

/// `POST /v1/accounts`'s body.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountRequest {
    pub owner_address: Option<String>,
}

/// `POST /v1/balances`'s body.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BalancesRequest {
    pub account_ids: Vec<String>,
}

/// Opens (or finds) the account of the session's wallet.
///
/// # Errors
/// 400 without `ownerAddress`, 403 `OWNER_MISMATCH` when it is not the session's wallet.
pub fn open_account(services: &Services, wallet: &Wallet, request: &AccountRequest) -> ApiResult {
    let owner = request
        .owner_address
        .as_deref()
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .ok_or_else(|| ApiError::invalid("\"ownerAddress\" is required"))?;
    let expected = wallet.checksummed();
    if !owner.eq_ignore_ascii_case(&expected) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            codes::OWNER_MISMATCH,
            format!(
                "ownerAddress {} is not the session's wallet {expected}",
                crate::describe::quote(owner)
            ),
        ));
    }
    let account = services.accounts.open(&services.store, owner).map_err(ApiError::internal)?;
    Ok(json!({
        "accountId": account.id,
        "ownerAddress": expected,
        "evmAddress": account.evm_address,
        "solanaAddress": account.solana_address,
    }))
}

/// The balances of `request.accountIds`, every one of which must be owned by one of `owners`
/// (lower-case wallet addresses).
///
/// # Errors
/// 400 `TOO_MANY_ACCOUNTS`; 403 `NOT_YOUR_ACCOUNT` naming the first account not owned.
pub fn balances(
    services: &Services,
    owners: &HashSet<String>,
    request: &BalancesRequest,
) -> ApiResult {
    if request.account_ids.len() > MAX_ACCOUNTS {
        return Err(ApiError::bad_request(
            codes::TOO_MANY_ACCOUNTS,
            format!(
                "at most {MAX_ACCOUNTS} account ids per request, got {}",
                request.account_ids.len()
            ),
        ));
    }
    let found = services
        .accounts
        .find(&services.store, &request.account_ids)
        .map_err(ApiError::internal)?;
    for id in &request.account_ids {
        let account = found
            .get(id)
            .filter(|a| owners.contains(&a.owner))
            .ok_or_else(|| ApiError::not_yours(id))?;
        // Chain-backed lines are read from the chains first.
        services.observe(account, Scope::All)?;
    }
    // Then every account's lines in one read (a poll names up to a thousand accounts).
    let lines_of =
        services.store.ua_balances_of(&request.account_ids).map_err(ApiError::internal)?;
    let mut accounts = Map::new();
    for id in &request.account_ids {
        let lines: Vec<Value> = lines_of
            .get(id.as_str())
            .into_iter()
            .flatten()
            .filter(|l| !(l.raw_amount.is_zero() && l.received.is_zero()))
            .map(|l| line(services, l))
            .collect();
        accounts.insert(id.clone(), json!({ "balances": lines }));
    }
    Ok(json!({ "accounts": accounts, "asOf": time::now_ms() }))
}

fn line(services: &Services, line: &BalanceLine) -> Value {
    let decimals = get_token_decimals(line.token, Some(line.chain_id));
    let price = services.prices.usd(line.token);
    let value = fees::value(line.raw_amount, decimals, price).map_or(f64::MAX, fees::usd_f64);
    json!({
        "chainId": line.chain_id,
        "token": line.token,
        "decimals": decimals,
        "rawAmount": line.raw_amount.to_string(),
        "received": line.received.to_string(),
        "priceUSD": price,
        "valueUSD": value,
    })
}
