//! An account's history (`GET /ua/v1/transactions`) in the spec's `UATransaction` shape.

use depositkit_core::{
    AddressType, Chain, TokenType, format_units, get_address_type, get_token_decimals, token_info,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Services;
use super::api::{ApiError, ApiResult};
use super::fees;
use super::signer::Wallet;
use super::sweeps::owned_account;
use crate::store::TxRecord;
use crate::time;

/// Largest page size.
pub const MAX_PAGE_SIZE: u32 = 100;
/// Page size when none is given.
pub const DEFAULT_PAGE_SIZE: u32 = 10;

/// The query of `GET /v1/transactions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryQuery {
    pub account_id: Option<String>,
    pub page: Option<u32>,
    pub page_size: Option<u32>,
}

/// One page of the history of an account the session's wallet owns.
///
/// # Errors
/// 400 for a missing account id or a bad page; 403 `NOT_YOUR_ACCOUNT`.
pub fn transactions(services: &Services, wallet: &Wallet, query: &HistoryQuery) -> ApiResult {
    let account_id = query
        .account_id
        .as_deref()
        .ok_or_else(|| ApiError::invalid("\"accountId\" is required"))?;
    let page = query.page.unwrap_or(1);
    let page_size = query.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if page == 0 || page_size == 0 || page_size > MAX_PAGE_SIZE {
        return Err(ApiError::invalid(format!(
            "\"page\" must be at least 1 and \"pageSize\" 1 to {MAX_PAGE_SIZE}"
        )));
    }
    let account = owned_account(services, wallet, account_id)?;
    let records =
        services.store.ua_transactions(&account.id, page, page_size).map_err(ApiError::internal)?;
    let transactions: Vec<Value> = records.iter().map(ua_transaction).collect();
    Ok(json!({ "transactions": transactions, "page": page, "pageSize": page_size }))
}

/// A history entry as a `UATransaction`. `change.amount` is in whole tokens (unsigned: `tag`
/// says the direction); `change.rawAmount` and `quoteId` (sweeps) are devnet additions.
pub fn ua_transaction(record: &TxRecord) -> Value {
    let decimals = get_token_decimals(record.token, Some(record.chain_id));
    let amount = format_units(record.raw_amount, u32::from(decimals)).unwrap_or_default();
    let usd =
        fees::value(record.raw_amount, decimals, record.price_usd).map_or(f64::MAX, fees::usd_f64);
    let at = time::format_ms(record.created_at);
    let mut value = json!({
        "transactionId": record.id,
        "tag": record.tag,
        "createdAt": at,
        "updatedAt": at,
        "targetToken": target_token(record.token, record.chain_id, record.price_usd),
        "change": {
            "amount": amount,
            "amountInUSD": usd.to_string(),
            "rawAmount": record.raw_amount.to_string(),
            "from": record.from_address,
            "to": record.to_address,
        },
        "detail": { "redPacketCount": 0 },
        "status": record.status,
        "fromChains": [record.chain_id],
        "toChains": [record.to_chain_id],
    });
    if let Some(quote_id) = &record.quote_id {
        value["quoteId"] = json!(quote_id);
    }
    value
}

fn target_token(token: TokenType, chain_id: u64, price: f64) -> Value {
    let decimals = get_token_decimals(token, Some(chain_id));
    let native = match get_address_type(chain_id) {
        AddressType::Solana => "11111111111111111111111111111111",
        AddressType::Evm => "0x0000000000000000000000000000000000000000",
    };
    let address = Chain::from_id(chain_id)
        .and_then(|chain| token_info(token, chain))
        .and_then(|info| info.contract)
        .unwrap_or(native);
    let kind = token.symbol().to_ascii_lowercase();
    json!({
        "name": name(token),
        "type": kind,
        "image": "",
        "price": price,
        "symbol": token.symbol(),
        "address": address,
        "assetId": kind,
        "chainId": chain_id,
        "decimals": decimals,
        "realDecimals": decimals,
        "isPrimaryToken": true,
        "isSmartRouterSupported": true,
    })
}

fn name(token: TokenType) -> &'static str {
    match token {
        TokenType::ETH => "Ethereum",
        TokenType::USDC => "USD Coin",
        TokenType::USDT => "Tether USD",
        TokenType::BTC => "Bitcoin",
        TokenType::SOL => "Solana",
        TokenType::BNB => "BNB",
    }
}
