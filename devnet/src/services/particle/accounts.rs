//! The account of an owner and what it holds: `universal_getUniversalAccount`,
//! `universal_getPrimaryAssets`, and the calls around them (`universal_getTokenPair`,
//! `universal_createAssetRouter`, `universal_getEIP7702Deployments`,
//! `universal_createEIP7702DelegationAuth`).
//!
//! The account is devnet's universal account of the owner (`crate::services::account`): the
//! same deposit addresses, the same balance lines, as `POST /ua/v1/accounts` and
//! `POST /ua/v1/balances` give the intermediary wallet that owns it.

use alloy_primitives::{Address, U256};
use depositkit_core::{AddressType, Chain, TokenType, get_address_type, get_token_decimals};
use serde_json::{Value, json};

use super::assets::{self, PRIMARY_TYPES};
use super::rpc::{Call, internal, invalid};
use crate::chain::ledger_sync::Scope;
use crate::rpc::RpcError;
use crate::services::fees;

/// The EVM chains of the SDK's universal accounts (`CHAIN_ID` without Solana).
pub const EVM_CHAINS: [u64; 5] = [1, 8453, 42161, 56, 196];
/// The contract devnet names as the EIP-7702 delegate of every account.
pub const DELEGATE: Address = Address::repeat_byte(0x77);

/// `universal_getUniversalAccount [ACCT]` → `[{ownerAddress, name, version,
/// smartAccountAddress, solanaSmartAccountAddress}]`: the account's EVM and Solana deposit
/// addresses.
///
/// # Errors
/// -32602 for a bad account object.
pub fn universal_account(call: &Call<'_>) -> Result<Value, RpcError> {
    let account = call.account(0)?;
    let object = call.object(0)?;
    let owner: Address = account.owner.parse().map_err(internal)?;
    Ok(json!([{
        "ownerAddress": owner.to_checksum(None),
        "name": object.get("name").cloned().unwrap_or(json!("UNIVERSAL")),
        "version": object.get("version").cloned().unwrap_or(json!("2.0.1")),
        "smartAccountAddress": account.evm_address,
        "solanaSmartAccountAddress": account.solana_address,
    }]))
}

/// `universal_getPrimaryAssets [ACCT]` → `{totalAmountInUSD, assets: [{tokenType, price,
/// amount, amountInUSD, chainAggregation: [{token, amount, amountInUSD}]}]}`: every balance line
/// the account holds (chain-backed lines read from the chains first), grouped by token type —
/// the SDK's five primary types always, in its order, then BTC when held. Amounts and USD
/// values are 18-decimal hex; a line's `rawAmount` is what the SDK computes from `amount` and
/// `token.realDecimals`.
///
/// # Errors
/// -32602 for a bad account object; -32659 when a chain fails.
pub fn primary_assets(call: &Call<'_>) -> Result<Value, RpcError> {
    let account = call.account(0)?;
    let services = call.services;
    services.observe(&account, Scope::All).map_err(super::rpc::from_api)?;
    let lines = services.store.ua_balances(&account.id).map_err(internal)?;
    let mut types: Vec<TokenType> = PRIMARY_TYPES.to_vec();
    if lines.iter().any(|l| l.token == TokenType::BTC && !l.raw_amount.is_zero()) {
        types.push(TokenType::BTC);
    }
    let mut total = U256::ZERO;
    let mut assets_out = Vec::new();
    for token in types {
        let price = services.prices.usd(token);
        let (mut amount, mut usd) = (U256::ZERO, U256::ZERO);
        let mut aggregation = Vec::new();
        for line in lines.iter().filter(|l| l.token == token && !l.raw_amount.is_zero()) {
            let decimals = get_token_decimals(token, Some(line.chain_id));
            let line_amount = assets::to_18(line.raw_amount, decimals);
            let line_usd = fees::value(line.raw_amount, decimals, price).unwrap_or(U256::MAX);
            amount = amount.saturating_add(line_amount);
            usd = usd.saturating_add(line_usd);
            aggregation.push(json!({
                "token": assets::token_object(token, line.chain_id),
                "amount": assets::hex(line_amount),
                "amountInUSD": assets::hex(line_usd),
            }));
        }
        total = total.saturating_add(usd);
        assets_out.push(json!({
            "tokenType": assets::type_name(token),
            "price": price,
            "amount": assets::hex(amount),
            "amountInUSD": assets::hex(usd),
            "chainAggregation": aggregation,
        }));
    }
    Ok(json!({ "totalAmountInUSD": assets::hex(total), "assets": assets_out }))
}

/// The token of `{assetId, chainId}` at parameter `index`.
fn asset_on_chain(call: &Call<'_>, index: usize) -> Result<(String, u64, TokenType), RpcError> {
    let object = call.object(index)?;
    let asset_id = object
        .get("assetId")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(index, "needs assetId"))?;
    let chain_id = object
        .get("chainId")
        .and_then(Value::as_u64)
        .filter(|id| Chain::from_id(*id).is_some())
        .ok_or_else(|| invalid(index, "needs the chainId of a chain devnet knows"))?;
    let token = assets::parse_asset_id(asset_id)
        .and_then(|asset| asset.on(chain_id))
        .map_err(|e| invalid(index, e))?;
    if !assets::exists_on(token, chain_id) {
        return Err(invalid(index, format!("{token} is not on chain {chain_id}")));
    }
    Ok((asset_id.to_owned(), chain_id, token))
}

/// `universal_getTokenPair [ACCT, {assetId, chainId}]` → `{assetId, chainId, token, price}`.
///
/// # Errors
/// -32602 for an unknown asset.
pub fn token_pair(call: &Call<'_>) -> Result<Value, RpcError> {
    call.account(0)?;
    let (asset_id, chain_id, token) = asset_on_chain(call, 1)?;
    Ok(json!({
        "assetId": asset_id,
        "chainId": chain_id,
        "token": assets::token_object(token, chain_id),
        "price": call.services.prices.usd(token),
    }))
}

/// `universal_createAssetRouter [ACCT, {assetId, chainId}]` (the SDK's `warmUpToken`) →
/// `{assetId, chainId, ready: true}`: devnet routes every token it knows at once.
///
/// # Errors
/// -32602 for an unknown asset.
pub fn asset_router(call: &Call<'_>) -> Result<Value, RpcError> {
    call.account(0)?;
    let (asset_id, chain_id, _) = asset_on_chain(call, 1)?;
    Ok(json!({ "assetId": asset_id, "chainId": chain_id, "ready": true }))
}

/// `universal_getEIP7702Deployments [ACCT]` → `[{chainId, address, isDelegated: false}]` on
/// the SDK's EVM chains: devnet's accounts are never delegated.
///
/// # Errors
/// -32602 for a bad account object.
pub fn eip7702_deployments(call: &Call<'_>) -> Result<Value, RpcError> {
    let account = call.account(0)?;
    let list: Vec<Value> = EVM_CHAINS
        .iter()
        .map(|chain_id| {
            json!({ "chainId": chain_id, "address": account.evm_address, "isDelegated": false })
        })
        .collect();
    Ok(Value::Array(list))
}

/// `universal_createEIP7702DelegationAuth [ACCT, {chainIds}]` → `[{chainId, address, nonce}]`:
/// what to sign to delegate the owner's address to devnet's delegate on each EVM chain.
///
/// # Errors
/// -32602 for a chain id that is not an EVM chain devnet knows.
pub fn eip7702_auth(call: &Call<'_>) -> Result<Value, RpcError> {
    call.account(0)?;
    let chain_ids = call
        .object(1)?
        .get("chainIds")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid(1, "needs chainIds, an array"))?;
    let mut list = Vec::new();
    for chain_id in chain_ids {
        let id = chain_id
            .as_u64()
            .filter(|id| Chain::from_id(*id).is_some() && get_address_type(*id) == AddressType::Evm)
            .ok_or_else(|| invalid(1, format!("chainIds: {chain_id} is not an EVM chain id")))?;
        list.push(json!({ "chainId": id, "address": DELEGATE.to_checksum(None), "nonce": 0 }));
    }
    Ok(Value::Array(list))
}
