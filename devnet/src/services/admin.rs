//! Devnet administration of the deposit services (`docs/protocol.md` §4): crediting deposits,
//! reading the ledger, setting prices, the chain-backed chains, request counters (always on), and the fault
//! endpoints (sweep faults, JWT forging and expiry; only with fault injection).
//! `POST /devnet/jwt/rotate` is always on.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use depositkit_core::{
    Chain, TokenType, U256, get_token_decimals, parse_raw_amount, parse_units,
    validate_address_for_chain,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Services;
use super::api::{ApiError, ApiResult, blocking, codes, read_json, reply};
use super::faults::{FaultRequest, Service, SweepFaultMode};
use super::prices::Prices;
use crate::http::AppState;
use crate::store::{Credit, Credited, Store};

/// Longest accepted sender.
const MAX_SENDER_CHARS: usize = 128;

/// The always-on and the fault-injection routes under `/devnet` (besides `/devnet/faults`).
pub(crate) fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/devnet/deposits", post(deposits))
        .route("/devnet/ledger", get(ledger))
        .route("/devnet/chains", get(chains))
        .route("/devnet/stats", get(stats))
        .route("/devnet/prices", get(prices).put(set_prices))
        .route("/devnet/faults/sweeps", post(sweep_faults))
        .route("/devnet/jwt/rotate", post(rotate))
        .route("/devnet/jwt/forge", post(forge))
        .route("/devnet/jwt/expire", post(expire))
}

/// A `POST /devnet/deposits` body: `amount` in whole tokens (a string or a number) or
/// `rawAmount` in smallest units.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DepositRequest {
    pub address: String,
    pub chain_id: u64,
    pub token: String,
    pub amount: Option<Value>,
    pub raw_amount: Option<String>,
    pub sender: Option<String>,
}

/// Credits an incoming transfer (see [`crate::store::Store::credit`]); `prices` give the USD
/// value recorded in the history. Returns the credit, the raw amount and the decimals.
///
/// # Errors
/// 400 naming the bad field.
pub fn deposit(
    store: &Store,
    prices: &Prices,
    request: &DepositRequest,
) -> ApiResult<(Credited, U256, u8)> {
    let chain = Chain::from_id(request.chain_id).ok_or_else(|| {
        ApiError::invalid(format!("chainId: unknown chain id {}", request.chain_id))
    })?;
    let token: TokenType = request.token.parse().map_err(|e: depositkit_core::Error| {
        ApiError::invalid(format!("token: {}", e.message()))
    })?;
    validate_address_for_chain(&request.address, chain.id())
        .map_err(|e| ApiError::invalid(format!("address: {}", e.message())))?;
    if let Some(sender) = &request.sender
        && (sender.is_empty()
            || sender.chars().count() > MAX_SENDER_CHARS
            || !sender.bytes().all(|b| b.is_ascii_graphic()))
    {
        return Err(ApiError::invalid(format!(
            "sender: at most {MAX_SENDER_CHARS} printable ASCII characters"
        )));
    }
    let decimals = get_token_decimals(token, Some(chain.id()));
    let raw = match (&request.amount, &request.raw_amount) {
        (Some(amount), None) => {
            let text = match amount {
                Value::String(text) => text.clone(),
                Value::Number(number) => number.to_string(),
                _ => return Err(ApiError::invalid("amount: expected a decimal string or number")),
            };
            parse_units(&text, u32::from(decimals))
                .map_err(|e| ApiError::invalid(format!("amount: {}", e.message())))?
        }
        (None, Some(raw)) => parse_raw_amount(raw)
            .map_err(|e| ApiError::invalid(format!("rawAmount: {}", e.message())))?,
        _ => return Err(ApiError::invalid("give exactly one of \"amount\" and \"rawAmount\"")),
    };
    if raw.is_zero() {
        return Err(ApiError::invalid("the amount must be positive"));
    }
    let credited = store.credit(&Credit {
        address: &request.address,
        chain_id: chain.id(),
        token,
        raw_amount: raw,
        sender: request.sender.as_deref(),
        price_usd: prices.usd(token),
    })?;
    Ok((credited, raw, decimals))
}

/// 400 `CHAIN_BACKED` when `chain_id` is chain-backed: money arrives there only by real
/// transfers.
///
/// # Errors
/// As said.
pub fn refuse_chain_backed(services: &Services, chain_id: u64) -> ApiResult<()> {
    if services.chain_backed(chain_id).is_none() {
        return Ok(());
    }
    let name = Chain::from_id(chain_id).map_or("the chain", Chain::name);
    Err(ApiError::bad_request(
        codes::CHAIN_BACKED,
        format!(
            "{name} (chain {chain_id}) is chain-backed: send a real transfer to the address \
             instead"
        ),
    ))
}

/// `GET /devnet/chains`: the chain-backed chain ids and the vault's addresses (`{"chains": []}`
/// in ledger mode).
pub fn chains_info(services: &Services) -> Value {
    match services.chains.as_deref() {
        None => json!({ "chains": [] }),
        Some(chains) => json!({
            "chains": chains.chain_ids(),
            "vault": {
                "evm": chains.vault().evm_address(),
                "solana": chains.vault().solana_address(),
            },
        }),
    }
}

/// A `GET /devnet/ledger` query.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerQuery {
    pub address: Option<String>,
    pub chain_id: Option<u64>,
    pub token: Option<String>,
}

/// What an address holds, and the token's decimals there.
///
/// # Errors
/// 400 for a missing or bad parameter.
pub fn ledger_balance(services: &Services, query: &LedgerQuery) -> ApiResult<(U256, u8)> {
    let (Some(address), Some(chain_id), Some(token)) =
        (&query.address, query.chain_id, &query.token)
    else {
        return Err(ApiError::invalid("address, chainId and token are required"));
    };
    let chain = Chain::from_id(chain_id)
        .ok_or_else(|| ApiError::invalid(format!("chainId: unknown chain id {chain_id}")))?;
    let token: TokenType = token.parse().map_err(|e: depositkit_core::Error| {
        ApiError::invalid(format!("token: {}", e.message()))
    })?;
    let raw = match services.chain_backed(chain.id()) {
        // A chain-backed chain is read from the chain, for any address.
        Some(chains) => {
            validate_address_for_chain(address, chain.id())
                .map_err(|e| ApiError::invalid(format!("address: {}", e.message())))?;
            chains.balance(address, chain.id(), token)?
        }
        None => {
            services.store.ledger_amount(address, chain.id(), token).map_err(ApiError::internal)?
        }
    };
    Ok((raw, get_token_decimals(token, Some(chain.id()))))
}

/// Arms a `POST /devnet/faults` fault: the user-lookup one without `service` (or with
/// `"user-rpc"`), else the named deposit service's.
///
/// # Errors
/// A message saying what is wrong.
pub(crate) fn inject_fault(app: &AppState, request: &FaultRequest) -> Result<(), String> {
    let fault = request.fault();
    match request.service.unwrap_or(Service::UserRpc) {
        Service::UserRpc if request.path.is_some() => {
            Err("\"path\" is not supported for user-rpc: it has one path".into())
        }
        Service::UserRpc => app.faults.inject(&fault),
        service => app.services.faults.inject(service, request.path.as_deref(), &fault),
    }
}

/// What `GET /devnet/faults` shows: `pending` (user-rpc faults as they always were, then the
/// services' with `service` and `path`), `sweeps` and `forgedJwts`.
pub(crate) fn pending_faults(app: &AppState) -> Value {
    let mut pending: Vec<Value> = app.faults.pending().iter().map(|f| json!(f)).collect();
    pending.extend(app.services.faults.pending());
    json!({
        "pending": pending,
        "sweeps": app.services.sweep_faults.pending(),
        "forgedJwts": app.services.jwt.forged_pending(),
    })
}

/// Disarms every fault of every service (expired sessions stay expired).
pub(crate) fn clear_faults(app: &AppState) {
    app.faults.clear();
    app.services.faults.clear();
    app.services.sweep_faults.clear();
    app.services.jwt.clear_forged();
}

async fn deposits(State(app): State<Arc<AppState>>, body: Body) -> Response {
    let result = async {
        let request: DepositRequest = read_json(body, app.max_body_bytes).await?;
        let services = Arc::clone(&app.services);
        blocking(move || {
            refuse_chain_backed(&services, request.chain_id)?;
            let (credited, raw, decimals) = deposit(&services.store, &services.prices, &request)?;
            crate::simchain::record_deposit(&services, &request, &credited.tx_hash, raw);
            Ok(json!({
                "txHash": credited.tx_hash,
                "accountId": credited.account_id,
                "rawAmount": raw.to_string(),
                "decimals": decimals,
            }))
        })
        .await
    };
    reply(result.await)
}

async fn ledger(
    State(app): State<Arc<AppState>>,
    query: Result<Query<LedgerQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let services = Arc::clone(&app.services);
    reply(
        blocking(move || {
            let Query(query) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
            let (raw, decimals) = ledger_balance(&services, &query)?;
            Ok(json!({ "rawAmount": raw.to_string(), "decimals": decimals }))
        })
        .await,
    )
}

async fn chains(State(app): State<Arc<AppState>>) -> Response {
    reply(Ok(chains_info(&app.services)))
}

async fn stats(State(app): State<Arc<AppState>>) -> Response {
    reply(Ok(json!(app.services.stats.snapshot())))
}

async fn prices(State(app): State<Arc<AppState>>) -> Response {
    reply(Ok(app.services.prices.snapshot()))
}

async fn set_prices(State(app): State<Arc<AppState>>, body: Body) -> Response {
    let result = async {
        let body: Value = read_json(body, app.max_body_bytes).await?;
        app.services.prices.apply(&body).map_err(ApiError::invalid)?;
        Ok(app.services.prices.snapshot())
    };
    reply(result.await)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFaultRequest {
    count: u32,
    mode: SweepFaultMode,
}

async fn sweep_faults(State(app): State<Arc<AppState>>, body: Body) -> Response {
    let result = async {
        fault_injection_on(&app)?;
        let request: SweepFaultRequest = read_json(body, app.max_body_bytes).await?;
        app.services.sweep_faults.arm(request.mode, request.count);
        Ok(json!({ "sweeps": app.services.sweep_faults.pending() }))
    };
    reply(result.await)
}

async fn rotate(State(app): State<Arc<AppState>>) -> Response {
    let services = Arc::clone(&app.services);
    reply(
        blocking(move || {
            let kid = services.jwt.rotate().map_err(ApiError::internal)?;
            let jwks = services.jwt.jwks()?;
            Ok(json!({ "kid": kid, "keys": jwks["keys"] }))
        })
        .await,
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ForgeRequest {
    count: u32,
}

async fn forge(State(app): State<Arc<AppState>>, body: Body) -> Response {
    let result = async {
        fault_injection_on(&app)?;
        let request: ForgeRequest = read_json(body, app.max_body_bytes).await?;
        let services = Arc::clone(&app.services);
        blocking(move || {
            services.jwt.forge_next(request.count).map_err(ApiError::internal)?;
            Ok(json!({ "forgedJwts": services.jwt.forged_pending() }))
        })
        .await
    };
    reply(result.await)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExpireRequest {
    user_id: Option<String>,
}

async fn expire(State(app): State<Arc<AppState>>, body: Body) -> Response {
    let result = async {
        fault_injection_on(&app)?;
        let request: ExpireRequest = read_json(body, app.max_body_bytes).await?;
        app.services.jwt.expire(request.user_id.as_deref());
        Ok(
            json!({ "expired": request.user_id.map_or_else(|| "all".to_owned(), |u| u.trim().to_lowercase()) }),
        )
    };
    reply(result.await)
}

fn fault_injection_on(app: &AppState) -> ApiResult<()> {
    if app.fault_injection {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::NOT_FOUND,
            codes::FAULT_INJECTION_OFF,
            "fault injection is off; start the server with --enable-fault-injection",
        ))
    }
}
