//! The balance-data provider and the host's proxy in front of it (`docs/funding.md` §3):
//! `POST {servicesUrl}/balances/v1/wallet-balances` (only with `X-API-Key` = the configured key)
//! and `POST {servicesUrl}/balance-proxy/v1/wallet-balances` (no key: the proxy adds it).
//!
//! Request `{"evmAddress": "0x…" | null, "solanaAddress": "…" | null, "chainIds": [1, …]}`;
//! answer `{"balances": [{"chainId", "token", "tokenAddress" (null for the native asset),
//! "decimals", "rawAmount", "priceUSD", "valueUSD"}]}` — chain-backed chains read from the
//! chain, the others from devnet's ledger (what `POST /devnet/deposits` credited an address, or
//! an account's `rawAmount` for its deposit address), priced with the price table, lines of
//! zero left out, in the order of `chainIds` then the token table's.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use depositkit_core::{
    AddressType, Chain, DEFAULT_SUPPORTED_TOKENS, TokenType, U256, get_token_decimals, token_info,
    validate_address_for_chain,
};
use serde::Deserialize;
use serde_json::{Value, json};
use subtle::ConstantTimeEq;

use super::Services;
use super::api::{ApiError, ApiResult, blocking, codes, read_json, reply};
use super::fees;
use crate::chain::Asset;
use crate::http::AppState;

/// The header carrying the balance API's key.
pub const API_KEY_HEADER: &str = "x-api-key";
/// Chains asked when a request names none: the chains funding serves.
pub const DEFAULT_CHAIN_IDS: [u64; 5] = [1, 56, 8453, 42161, 101];
/// Most chain ids one request may name.
const MAX_CHAIN_IDS: usize = 32;

/// The two routes.
pub(crate) fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/balances/v1/wallet-balances", post(provider))
        .route("/balance-proxy/v1/wallet-balances", post(proxy))
}

/// The request body.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WalletBalancesRequest {
    pub evm_address: Option<String>,
    pub solana_address: Option<String>,
    pub chain_ids: Option<Vec<u64>>,
}

/// The balance lines of the request's addresses. Blocking (chain reads).
///
/// # Errors
/// 400 `INVALID_REQUEST` for a bad address or chain id; 502 `CHAIN_UNAVAILABLE`.
pub fn wallet_balances(services: &Services, request: &WalletBalancesRequest) -> ApiResult {
    let evm = address(request.evm_address.as_deref(), 1, "evmAddress")?;
    let solana = address(request.solana_address.as_deref(), 101, "solanaAddress")?;
    if evm.is_none() && solana.is_none() {
        return Err(ApiError::invalid("give \"evmAddress\" or \"solanaAddress\" (or both)"));
    }
    let requested = request.chain_ids.clone().unwrap_or_else(|| DEFAULT_CHAIN_IDS.to_vec());
    if requested.len() > MAX_CHAIN_IDS {
        return Err(ApiError::invalid(format!("at most {MAX_CHAIN_IDS} chain ids")));
    }
    let mut chain_ids: Vec<u64> = Vec::new();
    for id in requested {
        if Chain::from_id(id).is_none() {
            return Err(ApiError::invalid(format!("chainIds: unknown chain id {id}")));
        }
        if !chain_ids.contains(&id) {
            chain_ids.push(id);
        }
    }
    let mut lines = Vec::new();
    for chain_id in chain_ids {
        let owner = match Chain::from_id(chain_id).map(Chain::address_type) {
            Some(AddressType::Solana) => solana,
            _ => evm,
        };
        let Some(owner) = owner else { continue };
        for (token, token_address) in tokens(services, chain_id) {
            let raw = match services.chain_backed(chain_id) {
                Some(chains) => chains.balance(owner, chain_id, token)?,
                None => services
                    .store
                    .ledger_amount(owner, chain_id, token)
                    .map_err(ApiError::internal)?,
            };
            if raw.is_zero() {
                continue;
            }
            lines.push(line(services, chain_id, token, token_address, raw));
        }
    }
    Ok(json!({ "balances": lines }))
}

/// The tokens of `chain_id` with their contract (`None` for the native asset): those of the
/// chains file on a chain-backed chain, else those of depositkit's table.
fn tokens(services: &Services, chain_id: u64) -> Vec<(TokenType, Option<String>)> {
    if let Some(chains) = services.chain_backed(chain_id) {
        return chains
            .config()
            .tokens(chain_id)
            .into_iter()
            .filter_map(|token| match chains.config().asset(chain_id, token)? {
                Asset::Native => Some((token, None)),
                Asset::Token(config) => Some((token, Some(config.address.clone()))),
            })
            .collect();
    }
    let Some(chain) = Chain::from_id(chain_id) else { return Vec::new() };
    DEFAULT_SUPPORTED_TOKENS
        .into_iter()
        .filter_map(|token| {
            let info = token_info(token, chain)?;
            Some((token, info.contract.map(str::to_owned)))
        })
        .collect()
}

fn line(
    services: &Services,
    chain_id: u64,
    token: TokenType,
    address: Option<String>,
    raw: U256,
) -> Value {
    let decimals = get_token_decimals(token, Some(chain_id));
    let price = services.prices.usd(token);
    let value = fees::value(raw, decimals, price).map_or(f64::MAX, fees::usd_f64);
    json!({
        "chainId": chain_id,
        "token": token,
        "tokenAddress": address,
        "decimals": decimals,
        "rawAmount": raw.to_string(),
        "priceUSD": price,
        "valueUSD": value,
    })
}

/// A present, non-blank address, checked for `chain_id`'s type.
fn address<'a>(text: Option<&'a str>, chain_id: u64, field: &str) -> ApiResult<Option<&'a str>> {
    match text.map(str::trim).filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(text) => {
            validate_address_for_chain(text, chain_id)
                .map_err(|e| ApiError::invalid(format!("{field}: {}", e.message())))?;
            Ok(Some(text))
        }
    }
}

/// 401 `INVALID_API_KEY` unless `X-API-Key` is the configured key (compared in constant time).
fn check_key(services: &Services, headers: &HeaderMap) -> ApiResult<()> {
    let given = headers.get(API_KEY_HEADER).map(|v| v.as_bytes()).unwrap_or_default();
    let expected = services.balance_api_key.as_bytes();
    if !given.is_empty() && bool::from(given.ct_eq(expected)) {
        Ok(())
    } else {
        let why = if given.is_empty() { "missing X-API-Key" } else { "wrong X-API-Key" };
        Err(ApiError::new(StatusCode::UNAUTHORIZED, codes::INVALID_API_KEY, why))
    }
}

async fn provider(State(app): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    let result = async {
        check_key(&app.services, &headers)?;
        answer(&app, body).await
    };
    reply(result.await)
}

async fn proxy(State(app): State<Arc<AppState>>, body: Body) -> Response {
    reply(answer(&app, body).await)
}

async fn answer(app: &Arc<AppState>, body: Body) -> ApiResult {
    let request: WalletBalancesRequest = read_json(body, app.max_body_bytes).await?;
    let services = Arc::clone(&app.services);
    blocking(move || wallet_balances(&services, &request)).await
}
