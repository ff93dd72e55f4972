//! HTTP faces of the JWT service (`/jwt`), the signer (`/signer`) and the universal-account
//! service (`/ua`), with the per-service fault layer in front of them.

use std::collections::HashSet;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::api::{ApiError, ApiResult, blocking, codes, read_json, reply};
use super::balances::{self, AccountRequest, BATCH_SESSIONS_HEADER, BalancesRequest};
use super::faults::Service;
use super::history::{self, ByTokenQuery, HistoryQuery, TransactionQuery};
use super::jwt::MintRequest;
use super::receipts::{self, ReceiptsQuery};
use super::signer::Wallet;
use super::sweeps::{self, QuoteRequest, SendRequest};
use crate::http::AppState;

/// The header a host with its own project id sends (spec §5.2); it makes sweeps pay 1%.
pub const UA_PROJECT_ID_HEADER: &str = "x-ua-project-id";

/// The routes of the three services.
pub(crate) fn router(state: Arc<AppState>) -> Router<Arc<AppState>> {
    Router::new()
        .route("/jwt/v1/jwt", post(mint))
        .route("/jwt/.well-known/jwks.json", get(jwks))
        .route("/jwt/health", get(health))
        .route("/signer/v1/wallet", get(wallet))
        .route("/signer/v1/sign", post(sign))
        .route("/ua/v1/accounts", post(accounts))
        .route("/ua/v1/balances", post(balances_endpoint))
        .route("/ua/v1/sweeps/quote", post(quote))
        .route("/ua/v1/sweeps/send", post(send))
        .route("/ua/v1/sweeps/{quote_id}", get(sweep_status))
        .route("/ua/v1/transactions", get(transactions))
        .route("/ua/v1/transactions/by-token", get(transactions_by_token))
        .route("/ua/v1/transactions/{transaction_id}", get(transaction))
        .route("/ua/v1/receipts", get(receipts_endpoint))
        .route_layer(middleware::from_fn_with_state(state, inject_faults))
}

/// Applies a pending fault of the request's service: waits, and/or answers the injected status
/// (with `INJECTED_FAULT` and `Retry-After`) instead of serving.
///
/// A delayed request is served on a task of its own: a client that gives up during the delay
/// (its deadline passed) does not cancel it, so it still runs when the delay is over — the
/// model of a request whose answer was lost.
async fn inject_faults(State(app): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let Some((service, path)) = Service::of_path(request.uri().path()) else {
        return next.run(request).await;
    };
    let planned = app.services.faults.take(service, path);
    crate::dashboard::fault_fired(&app.services, service, path, &planned);
    // The body was already read (crate::http's read_body_first): answering without reading it
    // leaves the connection usable.
    if let Some(delay) = planned.delay {
        let status = planned.status;
        let held = tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            match status {
                Some((status, retry_after)) => injected_answer(status, retry_after),
                None => next.run(request).await,
            }
        });
        return held.await.unwrap_or_else(|e| {
            ApiError::internal(format!("delayed request failed: {e}")).into_response()
        });
    }
    if let Some((status, retry_after)) = planned.status {
        return injected_answer(status, retry_after);
    }
    next.run(request).await
}

fn injected_answer(status: u16, retry_after: Option<u64>) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut error = ApiError::new(
        status,
        codes::INJECTED_FAULT,
        format!("injected fault: HTTP {}", status.as_u16()),
    );
    error.retry_after = retry_after;
    error.into_response()
}

async fn health() -> Response {
    reply(Ok(json!({ "status": "ok" })))
}

async fn mint(State(app): State<Arc<AppState>>, body: Body) -> Response {
    let result = async {
        let request: MintRequest = read_json(body, app.max_body_bytes).await?;
        let services = Arc::clone(&app.services);
        blocking(move || services.jwt.mint(&request)).await
    };
    reply(result.await)
}

async fn jwks(State(app): State<Arc<AppState>>) -> Response {
    let services = Arc::clone(&app.services);
    reply(blocking(move || services.jwt.jwks()).await)
}

async fn wallet(State(app): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let services = Arc::clone(&app.services);
    reply(
        blocking(move || {
            let wallet = services.session_wallet(&headers)?;
            Ok(json!({ "address": wallet.checksummed() }))
        })
        .await,
    )
}

#[derive(Deserialize)]
struct SignRequest {
    message: Option<String>,
}

async fn sign(State(app): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    with_session(&app, headers, body, |_, wallet, _, request: SignRequest| {
        let message = request
            .message
            .as_deref()
            .and_then(|m| m.strip_prefix("0x"))
            .and_then(|m| alloy_primitives::hex::decode(m).ok())
            .filter(|bytes| bytes.len() == 32)
            .ok_or_else(|| {
                ApiError::invalid("\"message\" must be 0x + 64 hex digits (32 bytes)")
            })?;
        let signature = wallet.personal_sign(&message).map_err(ApiError::internal)?;
        Ok(json!({
            "signature": format!("0x{}", alloy_primitives::hex::encode(signature)),
            "address": wallet.checksummed(),
        }))
    })
    .await
}

async fn accounts(State(app): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    with_session(&app, headers, body, |services, wallet, _, request: AccountRequest| {
        balances::open_account(services, wallet, &request)
    })
    .await
}

async fn balances_endpoint(
    State(app): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    app.services.stats.balance_request();
    with_session(&app, headers, body, |services, wallet, headers, request: BalancesRequest| {
        let mut owners = HashSet::from([owner_of(wallet)]);
        if let Some(batch) = headers.get(BATCH_SESSIONS_HEADER) {
            let batch =
                batch.to_str().map_err(|_| ApiError::session("X-Batch-Sessions is not ASCII"))?;
            for jwt in batch.split(',').map(str::trim).filter(|jwt| !jwt.is_empty()) {
                let session = services.jwt.verify(jwt)?;
                owners.insert(services.wallet_owner(&session)?);
            }
        }
        let answer = balances::balances(services, &owners, &request)?;
        services.stats.balance_accounts(request.account_ids.len());
        Ok(answer)
    })
    .await
}

async fn quote(State(app): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    with_session(&app, headers, body, |services, wallet, headers, request: QuoteRequest| {
        let service_fee = headers
            .get(UA_PROJECT_ID_HEADER)
            .is_some_and(|v| !v.as_bytes().iter().all(u8::is_ascii_whitespace));
        sweeps::quote(services, wallet, &request, service_fee)
    })
    .await
}

async fn send(State(app): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    with_session(&app, headers, body, |services, wallet, _, request: SendRequest| {
        let sent = sweeps::send(services, wallet, &request);
        crate::dashboard::refused_send(services, &request.quote_id, &sent);
        sent
    })
    .await
}

async fn sweep_status(
    State(app): State<Arc<AppState>>,
    quote_id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    let services = Arc::clone(&app.services);
    reply(
        blocking(move || {
            let wallet = services.session_wallet(&headers)?;
            let quote_id = path_param(quote_id)?;
            sweeps::status(&services, &wallet, &quote_id)
        })
        .await,
    )
}

async fn transactions(
    State(app): State<Arc<AppState>>,
    query: Result<Query<HistoryQuery>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
) -> Response {
    with_session_query(&app, headers, query, move |services, wallet, query| {
        history::transactions(services, wallet, &query)
    })
    .await
}

async fn transactions_by_token(
    State(app): State<Arc<AppState>>,
    query: Result<Query<ByTokenQuery>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
) -> Response {
    with_session_query(&app, headers, query, move |services, wallet, query| {
        history::by_token(services, wallet, &query)
    })
    .await
}

async fn transaction(
    State(app): State<Arc<AppState>>,
    transaction_id: Result<Path<String>, PathRejection>,
    query: Result<Query<TransactionQuery>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
) -> Response {
    with_session_query(&app, headers, query, move |services, wallet, query| {
        let transaction_id = path_param(transaction_id)?;
        history::transaction(services, wallet, &transaction_id, &query)
    })
    .await
}

async fn receipts_endpoint(
    State(app): State<Arc<AppState>>,
    query: Result<Query<ReceiptsQuery>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
) -> Response {
    with_session_query(&app, headers, query, move |services, wallet, query| {
        receipts::receipts(services, wallet, &query)
    })
    .await
}

/// Reads the body, then (on the blocking pool) checks the session and finds its wallet before
/// parsing the body as `T` and running `work`: a request without a valid session gets 401
/// whatever its body.
async fn with_session<T, F>(
    app: &Arc<AppState>,
    headers: HeaderMap,
    body: Body,
    work: F,
) -> Response
where
    T: DeserializeOwned,
    F: FnOnce(&super::Services, &Wallet, &HeaderMap, T) -> ApiResult + Send + 'static,
{
    let services = Arc::clone(&app.services);
    let result = async {
        let value: Value = read_json(body, app.max_body_bytes).await?;
        blocking(move || {
            let wallet = services.session_wallet(&headers)?;
            let request = serde_json::from_value(value)
                .map_err(|e| ApiError::invalid(format!("bad request body: {e}")))?;
            work(&services, &wallet, &headers, request)
        })
        .await
    };
    reply(result.await)
}

/// [`with_session`] for a GET: checks the session (on the blocking pool) before the query
/// string, so a request without a valid session gets 401 whatever its query.
async fn with_session_query<Q, F>(
    app: &Arc<AppState>,
    headers: HeaderMap,
    query: Result<Query<Q>, axum::extract::rejection::QueryRejection>,
    work: F,
) -> Response
where
    Q: Send + 'static,
    F: FnOnce(&super::Services, &Wallet, Q) -> ApiResult + Send + 'static,
{
    let services = Arc::clone(&app.services);
    reply(
        blocking(move || {
            let wallet = services.session_wallet(&headers)?;
            let Query(query) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
            work(&services, &wallet, query)
        })
        .await,
    )
}

/// The value of a path parameter; 400 `INVALID_REQUEST` when it cannot be read (percent-encoded
/// bytes that are not UTF-8), instead of axum's plain-text rejection.
fn path_param(param: Result<Path<String>, PathRejection>) -> ApiResult<String> {
    param.map(|Path(value)| value).map_err(|e| ApiError::invalid(e.body_text()))
}

fn owner_of(wallet: &Wallet) -> String {
    wallet.checksummed().to_ascii_lowercase()
}
