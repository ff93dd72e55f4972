//! An account's history in the spec's `UATransaction` shape: by page
//! (`GET /ua/v1/transactions`), one token's by cursor (`GET /ua/v1/transactions/by-token`), and
//! one transaction (`GET /ua/v1/transactions/{transactionId}`).
//!
//! A `pageToken` is base64url (no padding) of `v1:<accountId>:<chainId>:<address>:<seq>`, `seq`
//! being the history row number of the last entry of the page: the next page is the entries
//! numbered below it, so entries added meanwhile (always numbered higher) never shift a page.
//! A token is only good for the query it came from (same account, chain and token address).

use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use depositkit_core::{
    AddressType, Chain, DEFAULT_SUPPORTED_TOKENS, TokenType, format_units, get_address_type,
    get_token_decimals, token_info, validate_address_for_chain,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Services;
use super::api::{ApiError, ApiResult, codes};
use super::fees;
use super::signer::Wallet;
use super::sweeps::owned_account;
use crate::describe::quote as quoted;
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

/// The query of `GET /v1/transactions/by-token`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ByTokenQuery {
    pub account_id: Option<String>,
    pub chain_id: Option<u64>,
    pub address: Option<String>,
    pub page_token: Option<String>,
    pub page_size: Option<u32>,
}

/// One page of the transactions of one token (named by its address, as in
/// `targetToken.address`) on one chain, newest first, with `nextPageToken` unless it is the last.
///
/// # Errors
/// 400 for a missing or bad parameter or a `pageToken` this query did not issue; 403
/// `NOT_YOUR_ACCOUNT`.
pub fn by_token(services: &Services, wallet: &Wallet, query: &ByTokenQuery) -> ApiResult {
    let (Some(account_id), Some(chain_id), Some(address)) =
        (query.account_id.as_deref(), query.chain_id, query.address.as_deref())
    else {
        return Err(ApiError::invalid("\"accountId\", \"chainId\" and \"address\" are required"));
    };
    let page_size = query.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if page_size == 0 || page_size > MAX_PAGE_SIZE {
        return Err(ApiError::invalid(format!("\"pageSize\" must be 1 to {MAX_PAGE_SIZE}")));
    }
    let account = owned_account(services, wallet, account_id)?;
    let chain = Chain::from_id(chain_id)
        .ok_or_else(|| ApiError::invalid(format!("chainId: unknown chain id {chain_id}")))?;
    validate_address_for_chain(address, chain.id())
        .map_err(|e| ApiError::invalid(format!("address: {}", e.message())))?;
    let key = address_key(address, chain.id());
    let tokens: Vec<TokenType> = DEFAULT_SUPPORTED_TOKENS
        .into_iter()
        .filter(|t| address_key(token_address(*t, chain.id()), chain.id()) == key)
        .collect();
    let cursor_prefix = format!("v1:{}:{}:{key}:", account.id, chain.id());
    let before = match query.page_token.as_deref().filter(|t| !t.is_empty()) {
        None => None,
        Some(token) => Some(read_page_token(token, &cursor_prefix)?),
    };
    let mut records = services
        .store
        .ua_transactions_by_token(&account.id, chain.id(), &tokens, before, page_size + 1)
        .map_err(ApiError::internal)?;
    let more = records.len() > page_size as usize;
    records.truncate(page_size as usize);
    let transactions: Vec<Value> =
        records.iter().map(|(_, record)| ua_transaction(record)).collect();
    let mut body = json!({ "transactions": transactions });
    if more && let Some((seq, _)) = records.last() {
        body["nextPageToken"] = json!(page_token(&cursor_prefix, *seq));
    }
    Ok(body)
}

/// The query of `GET /v1/transactions/{transactionId}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransactionQuery {
    pub account_id: Option<String>,
}

/// The history entry `transaction_id` of the account.
///
/// # Errors
/// 400 without `accountId`; 403 `NOT_YOUR_ACCOUNT`; 404 `NOT_FOUND`.
pub fn transaction(
    services: &Services,
    wallet: &Wallet,
    transaction_id: &str,
    query: &TransactionQuery,
) -> ApiResult {
    let account_id = query
        .account_id
        .as_deref()
        .ok_or_else(|| ApiError::invalid("\"accountId\" is required"))?;
    let account = owned_account(services, wallet, account_id)?;
    // Transaction ids are 0x + lower-case hex.
    let id = transaction_id.trim().to_ascii_lowercase();
    let record =
        services.store.ua_transaction(&account.id, &id).map_err(ApiError::internal)?.ok_or_else(
            || {
                ApiError::new(
                    StatusCode::NOT_FOUND,
                    codes::NOT_FOUND,
                    format!("account {} has no transaction {}", account.id, quoted(transaction_id)),
                )
            },
        )?;
    Ok(ua_transaction(&record))
}

/// The row number a page token issued for `prefix` carries.
fn read_page_token(token: &str, prefix: &str) -> ApiResult<i64> {
    page_token_seq(token, prefix).map_err(|refused| {
        let why = match refused {
            PageTokenRefused::Foreign => "not a page token of this service",
            PageTokenRefused::OtherQuery => "issued for another account, chain or token",
        };
        ApiError::invalid(format!("pageToken: {why}; start again without it"))
    })
}

/// Why a page token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PageTokenRefused {
    /// Not a token of this format.
    Foreign,
    /// A token of another query.
    OtherQuery,
}

/// The page token of the entry numbered `seq` for a query named by `prefix`
/// (`<format>:<query…>:`): base64url of the two.
pub(crate) fn page_token(prefix: &str, seq: i64) -> String {
    URL_SAFE_NO_PAD.encode(format!("{prefix}{seq}"))
}

/// The entry number a [`page_token`] issued for `prefix` carries.
pub(crate) fn page_token_seq(token: &str, prefix: &str) -> Result<i64, PageTokenRefused> {
    let format = prefix.split_inclusive(':').next().unwrap_or_default();
    let text = URL_SAFE_NO_PAD
        .decode(token.trim())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .filter(|text| text.starts_with(format))
        .ok_or(PageTokenRefused::Foreign)?;
    let seq = text.strip_prefix(prefix).ok_or(PageTokenRefused::OtherQuery)?;
    seq.parse::<i64>().ok().filter(|seq| *seq > 0).ok_or(PageTokenRefused::Foreign)
}

/// How addresses compare on `chain_id`: EVM case-insensitively, Solana exactly.
fn address_key(address: &str, chain_id: u64) -> String {
    match get_address_type(chain_id) {
        AddressType::Solana => address.to_owned(),
        AddressType::Evm => address.to_ascii_lowercase(),
    }
}

/// A history entry as a `UATransaction`. `change.amount` is in whole tokens (unsigned: `tag`
/// says the direction); `change.rawAmount`, `quoteId` (sweeps and refunds) and `depositId` (when
/// the quote named one) are devnet additions.
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
    if let Some(deposit_id) = &record.deposit_id {
        value["depositId"] = json!(deposit_id);
    }
    value
}

/// The address `targetToken` shows for `token` on `chain_id`: its contract, or the zero address
/// (the system program on Solana) for a native asset or a token without a known contract there.
pub fn token_address(token: TokenType, chain_id: u64) -> &'static str {
    let native = match get_address_type(chain_id) {
        AddressType::Solana => "11111111111111111111111111111111",
        AddressType::Evm => "0x0000000000000000000000000000000000000000",
    };
    Chain::from_id(chain_id)
        .and_then(|chain| token_info(token, chain))
        .and_then(|info| info.contract)
        .unwrap_or(native)
}

fn target_token(token: TokenType, chain_id: u64, price: f64) -> Value {
    let decimals = get_token_decimals(token, Some(chain_id));
    let address = token_address(token, chain_id);
    let kind = token.symbol().to_ascii_lowercase();
    json!({
        "name": token_name(token),
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

/// The token's display name (`USD Coin`).
pub(crate) fn token_name(token: TokenType) -> &'static str {
    match token {
        TokenType::ETH => "Ethereum",
        TokenType::USDC => "USD Coin",
        TokenType::USDT => "Tether USD",
        TokenType::BTC => "Bitcoin",
        TokenType::SOL => "Solana",
        TokenType::BNB => "BNB",
    }
}
