//! The JSON the page reads besides the events: the owners with their deposit addresses and
//! balances, the pending faults and the chain-backed chains (the state), what the forms offer
//! (the catalog), and a chain-backed transaction as the local chain has it. No secret is in any
//! of it: no key, JWT or project credential.

use depositkit_core::{Chain, DEFAULT_SUPPORTED_TOKENS, U256};
use serde_json::{Value, json};

use super::events::human;
use crate::chain::SOLANA_CHAIN_ID;
use crate::http::AppState;
use crate::services::admin;
use crate::services::api::{ApiError, ApiResult};
use crate::store::AccountOverview;

/// The state the page shows beside the events. Blocking.
///
/// # Errors
/// 500 on database failures.
pub(crate) fn state(app: &AppState) -> ApiResult {
    let owners: Vec<Value> = app
        .services
        .store
        .accounts_overview()
        .map_err(ApiError::internal)?
        .iter()
        .map(owner)
        .collect();
    Ok(json!({
        "owners": owners,
        "faults": admin::pending_faults(app),
        "faultInjection": app.fault_injection,
        "chainBacked": app.services.chains.as_deref().map(crate::chain::Chains::chain_ids).unwrap_or_default(),
    }))
}

/// The chains and tokens the forms offer.
pub fn catalog() -> Value {
    let chains: Vec<Value> =
        Chain::ALL.iter().map(|chain| json!({ "id": chain.id(), "name": chain.name() })).collect();
    json!({ "chains": chains, "tokens": DEFAULT_SUPPORTED_TOKENS })
}

fn owner(account: &AccountOverview) -> Value {
    let line = |chain_id: u64, token, raw: U256| {
        json!({
            "chainId": chain_id,
            "chain": Chain::from_id(chain_id).map_or("?", Chain::name),
            "token": token,
            "rawAmount": raw.to_string(),
            "amount": human(raw, token, chain_id),
        })
    };
    let balances: Vec<Value> = account
        .lines
        .iter()
        .map(|&(chain_id, token, held, received)| {
            let mut value = line(chain_id, token, held);
            value["received"] = json!(human(received, token, chain_id));
            value
        })
        .collect();
    let destinations: Vec<Value> = account
        .destinations
        .iter()
        .map(|(address, chain_id, token, raw)| {
            let mut value = line(*chain_id, *token, *raw);
            value["address"] = json!(address);
            value
        })
        .collect();
    json!({
        "accountId": account.id,
        "owner": account.owner,
        "evmAddress": account.evm_address,
        "solanaAddress": account.solana_address,
        "balances": balances,
        "destinations": destinations,
    })
}

/// The transaction `hash` and its receipt as the local chain `chain_id` has them (chain-backed
/// mode). Blocking.
///
/// # Errors
/// 404 when the chain is not chain-backed; 400 for a hash that is not one of the chain's;
/// 502 `CHAIN_UNAVAILABLE` when the chain does not answer.
pub(crate) fn chain_transaction(app: &AppState, chain_id: u64, hash: &str) -> ApiResult {
    let Some(chains) = app.services.chain_backed(chain_id) else {
        return Err(ApiError::new(
            axum::http::StatusCode::NOT_FOUND,
            crate::services::api::codes::NOT_FOUND,
            format!(
                "chain {chain_id} is not chain-backed: its transactions exist only in devnet's \
                 ledger"
            ),
        ));
    };
    let unavailable = |e: depositkit_core::Error| {
        ApiError::from(crate::chain::ChainError::new(chain_id, e.message()))
    };
    if chain_id == SOLANA_CHAIN_ID {
        let valid = bs58::decode(hash).into_vec().is_ok_and(|bytes| bytes.len() == 64);
        if !valid {
            return Err(ApiError::invalid(format!(
                "hash: {} is not a Solana signature",
                crate::describe::quote(hash)
            )));
        }
        let params = json!([hash, {"encoding": "json", "maxSupportedTransactionVersion": 0}]);
        let rpc = chains.solana()?.rpc();
        let transaction = rpc.request("getTransaction", params).map_err(unavailable)?;
        return Ok(json!({ "chainId": chain_id, "hash": hash, "transaction": transaction }));
    }
    let valid = hash
        .strip_prefix("0x")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()));
    if !valid {
        return Err(ApiError::invalid(format!(
            "hash: {} is not 0x and 64 hex digits",
            crate::describe::quote(hash)
        )));
    }
    let rpc = chains.evm(chain_id)?.rpc();
    let transaction =
        rpc.request("eth_getTransactionByHash", json!([hash])).map_err(unavailable)?;
    let receipt = rpc.request("eth_getTransactionReceipt", json!([hash])).map_err(unavailable)?;
    Ok(json!({
        "chainId": chain_id,
        "hash": hash,
        "transaction": transaction,
        "receipt": receipt,
    }))
}
