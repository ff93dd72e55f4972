//! An account's history through the Particle JSON-RPC: `universal_getTransactionsV2
//! [{sender, solanaSender, tag?}, {page, limit}]` and `universal_getTokenTransactions [assetId,
//! {sender, solanaSender}, {pageToken}]`. The account is the one whose deposit addresses
//! `sender` (EVM) and `solanaSender` are; the entries are exactly those `GET /ua/v1/transactions`
//! lists for it, in the same `UATransaction` shape
//! ([`crate::services::history::ua_transaction`]).
//!
//! A `pageToken` is base64url (no padding) of `p1:<accountId>:<assetId>:<seq>`, `seq` the
//! history number of the page's last entry: good only for the query it came from, and stable
//! while new transactions arrive (they are numbered higher).

use serde_json::{Map, Value, json};

use super::assets::{self, AssetRef};
use super::rpc::{Call, internal, invalid};
use crate::rpc::RpcError;
use crate::services::history::{
    DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PageTokenRefused, page_token, page_token_seq, ua_transaction,
};
use crate::store::UaAccount;

/// Entries per page of `universal_getTokenTransactions` (the SDK sends no size).
pub const TOKEN_PAGE_SIZE: u32 = DEFAULT_PAGE_SIZE;

/// The account whose deposit addresses `senders` (params[`index`]) names.
fn account_of(call: &Call<'_>, index: usize) -> Result<UaAccount, RpcError> {
    let senders: &Map<String, Value> = call.object(index)?;
    let address =
        |field: &str| senders.get(field).and_then(Value::as_str).filter(|a| !a.is_empty());
    let store = &call.services.store;
    let account_at = |field: &str, chain_id: u64| -> Result<Option<UaAccount>, RpcError> {
        let Some(address) = address(field) else { return Ok(None) };
        let account = store.ua_account_by_deposit_address(address, chain_id).map_err(internal)?;
        account
            .map(Some)
            .ok_or_else(|| invalid(index, format!("{field} {address} is no universal account's")))
    };
    let (by_evm, by_solana) = (account_at("sender", 1)?, account_at("solanaSender", 101)?);
    match (by_evm, by_solana) {
        (Some(a), Some(b)) if a.id != b.id => {
            Err(invalid(index, "sender and solanaSender are different accounts'"))
        }
        (Some(account), _) | (None, Some(account)) => Ok(account),
        (None, None) => Err(invalid(index, "needs sender or solanaSender")),
    }
}

/// `universal_getTransactionsV2` → `{transactions, page, pageSize}`: page `page` (from 1) of
/// `limit` (1 to 100; 1 and 20 by default) entries, newest first, only those of `tag` when it
/// is a non-empty string (`receive`, `sweep`, `refund`).
///
/// # Errors
/// -32602 for unknown senders or a bad page.
pub fn transactions(call: &Call<'_>) -> Result<Value, RpcError> {
    let account = account_of(call, 0)?;
    let tag = call.object(0)?.get("tag").and_then(Value::as_str).filter(|t| !t.is_empty());
    let paging = call.params.get(1).and_then(Value::as_object);
    let number = |field: &str, default: u64| {
        paging.and_then(|p| p.get(field)).map_or(Some(default), Value::as_u64)
    };
    let (Some(page), Some(limit)) = (number("page", 1), number("limit", 20)) else {
        return Err(invalid(1, "page and limit must be positive integers"));
    };
    let (Ok(page), Ok(limit)) = (u32::try_from(page), u32::try_from(limit)) else {
        return Err(invalid(1, "page or limit is too large"));
    };
    if page == 0 || limit == 0 || limit > MAX_PAGE_SIZE {
        return Err(invalid(1, format!("page must be at least 1 and limit 1 to {MAX_PAGE_SIZE}")));
    }
    let records = call
        .services
        .store
        .ua_transactions_tagged(&account.id, tag, page, limit)
        .map_err(internal)?;
    let transactions: Vec<Value> = records.iter().map(ua_transaction).collect();
    Ok(json!({ "transactions": transactions, "page": page, "pageSize": limit }))
}

/// `universal_getTokenTransactions` → `{transactions, nextPageToken?}`: the entries of the token
/// (a type: on every chain; `<chainId>_<address>`: on that chain), newest first,
/// [`TOKEN_PAGE_SIZE`] a page; `nextPageToken` is absent on the last page.
///
/// # Errors
/// -32602 for an unknown asset, unknown senders or a page token this query did not issue.
pub fn token_transactions(call: &Call<'_>) -> Result<Value, RpcError> {
    let asset_id = call.param(0)?.as_str().ok_or_else(|| invalid(0, "must be an assetId"))?;
    let asset = assets::parse_asset_id(asset_id).map_err(|e| invalid(0, e))?;
    let account = account_of(call, 1)?;
    let prefix = format!("p1:{}:{asset_id}:", account.id);
    let token = call
        .params
        .get(2)
        .and_then(|p| p.get("pageToken"))
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty());
    let before = token.map(|token| read_page_token(token, &prefix)).transpose()?;
    let (token_type, chain_id) = match asset {
        AssetRef::Type(token) => (token, None),
        AssetRef::OnChain(chain_id, token) => (token, Some(chain_id)),
    };
    let mut records = call
        .services
        .store
        .ua_transactions_of_token(&account.id, token_type, chain_id, before, TOKEN_PAGE_SIZE + 1)
        .map_err(internal)?;
    let more = records.len() > TOKEN_PAGE_SIZE as usize;
    records.truncate(TOKEN_PAGE_SIZE as usize);
    let transactions: Vec<Value> = records.iter().map(|(_, r)| ua_transaction(r)).collect();
    let mut body = json!({ "transactions": transactions });
    if more && let Some((seq, _)) = records.last() {
        body["nextPageToken"] = json!(page_token(&prefix, *seq));
    }
    Ok(body)
}

fn read_page_token(token: &str, prefix: &str) -> Result<i64, RpcError> {
    page_token_seq(token, prefix).map_err(|refused| {
        let why = match refused {
            PageTokenRefused::Foreign => "not a page token of this service",
            PageTokenRefused::OtherQuery => "issued for another account or asset",
        };
        invalid(2, format!("pageToken: {why}; start again without it"))
    })
}
