//! Particle's Universal Account JSON-RPC (`particle-ua-wire.md`, the wire protocol of the
//! published SDK `@particle-network/universal-account-sdk@2.0.3`), served at `POST /particle`
//! over devnet's own state: the accounts, deposit addresses, balances, quotes, sweeps and
//! history of the services of `docs/protocol.md` §3 — one ledger, two protocols.
//!
//! - [`rpc`]: the envelope (`{"id", "jsonrpc", "method", "params": [...], "deviceId",
//!   "projectId", "projectClientKey"}`), the credentials in the body, the error codes, and the
//!   dispatch to the methods;
//! - [`accounts`]: the account of an owner (`universal_getUniversalAccount`), its primary
//!   assets, and the EIP-7702 and token-pair calls;
//! - [`create`]: `universal_createTransaction` (transfer, buy, sell, universal, convert) as a
//!   devnet quote with user operations to sign;
//! - [`send`]: `universal_sendTransaction` (the owner's signature checked as the SDK makes it,
//!   [`signing`]) and `universal_getTransaction`;
//! - [`history`]: `universal_getTransactionsV2` and `universal_getTokenTransactions`;
//! - [`assets`]: 18-decimal amounts, assetIds and token objects;
//! - [`log`]: every request received, for tests comparing clients (`GET
//!   /devnet/particle/requests`).

pub mod accounts;
pub mod assets;
pub mod create;
pub mod history;
pub mod log;
pub mod rpc;
pub mod send;
pub mod signing;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::header::{ALLOW, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use serde_json::{Value, json};

use super::api::{self, blocking, json_response};
use super::faults::Service;
use crate::http::AppState;

/// Where the JSON-RPC is served (the SDK posts to its `rpcUrl` as given).
pub const PATH: &str = "/particle";
/// The request log.
pub const REQUESTS_PATH: &str = "/devnet/particle/requests";

/// Arms lost answers (fault injection): `POST {"method": "universal_sendTransaction",
/// "count": 1}`.
pub const LOSE_ANSWERS_PATH: &str = "/devnet/particle/lose-answers";

/// `POST /particle`, the request log and the lost-answer fault.
pub(crate) fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route(PATH, any(endpoint))
        .route(REQUESTS_PATH, get(requests).delete(clear_requests))
        .route(LOSE_ANSWERS_PATH, axum::routing::post(lose_answers))
}

/// A fault the HTTP faults cannot make: the next `count` requests of a method **run**, then
/// their answer is lost (HTTP 504 with an injected-fault error instead of the result), as when
/// a proxy times out after the service acted. A client must look the outcome up before it
/// sends anything again.
#[derive(Debug, Default)]
pub struct LostAnswers {
    armed: std::sync::Mutex<std::collections::HashMap<String, u32>>,
}

impl LostAnswers {
    /// The next `count` answers of `method` are lost (0 disarms).
    pub fn arm(&self, method: &str, count: u32) {
        let mut armed = self.armed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if count == 0 {
            armed.remove(method);
        } else {
            armed.insert(method.to_owned(), count);
        }
    }

    /// Whether the answer of this request of `method` is to be lost (using up one count).
    fn take(&self, method: &str) -> bool {
        let mut armed = self.armed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match armed.get_mut(method) {
            Some(left) => {
                *left -= 1;
                if *left == 0 {
                    armed.remove(method);
                }
                true
            }
            None => false,
        }
    }
}

async fn lose_answers(State(app): State<Arc<AppState>>, body: axum::body::Bytes) -> Response {
    if !app.fault_injection {
        return api::ApiError::new(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            "fault injection is off: start devnet with it",
        )
        .into_response();
    }
    let plan: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = plan.get("method").and_then(Value::as_str);
    let count = plan.get("count").map_or(Some(1), Value::as_u64);
    let (Some(method), Some(Ok(count))) = (method, count.map(u32::try_from)) else {
        return api::ApiError::bad_request(
            "INVALID_REQUEST",
            "the body must be {\"method\": \"universal_…\", \"count\": n}",
        )
        .into_response();
    };
    app.services.particle_lost.arm(method, count);
    json_response(StatusCode::OK, &json!({ "method": method, "count": count }))
}

async fn endpoint(
    State(app): State<Arc<AppState>>,
    method: Method,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if method != Method::POST {
        let error = crate::rpc::RpcError::new(
            crate::rpc::codes::INVALID_REQUEST,
            format!("invalid request: use POST, not {method}"),
        );
        let mut response = json_response(
            StatusCode::METHOD_NOT_ALLOWED,
            &crate::rpc::failure(&Value::Null, error),
        );
        response.headers_mut().insert(ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    // The body was read by crate::http's read_body_first already; this only collects it.
    let bytes = match api::read_body(body, app.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(error) => return error.into_response(),
    };
    let services = Arc::clone(&app.services);
    let request = rpc::Incoming::parse(&bytes);
    services.particle_log.record(&headers, &bytes, &request);
    let planned = services.faults.take(Service::Particle, &format!("/{}", request.method_name()));
    let lose = services.particle_lost.take(request.method_name());
    // A delayed request is served on a task of its own: a client that gives up during the delay
    // does not cancel it (an answer lost), as for the other services.
    let serve = async move {
        if let Some(delay) = planned.delay {
            tokio::time::sleep(delay).await;
        }
        if let Some((status, retry_after)) = planned.status {
            return injected(status, retry_after, request.id());
        }
        let id = request.id();
        let answer = blocking(move || Ok(rpc::answer(&services, request))).await;
        if lose {
            // It ran; its answer never reaches the client.
            return injected(504, None, id);
        }
        let body =
            answer.unwrap_or_else(|_| crate::rpc::failure(&id, crate::rpc::RpcError::internal()));
        json_response(StatusCode::OK, &body)
    };
    tokio::spawn(serve).await.unwrap_or_else(|e| {
        api::ApiError::internal(format!("particle request failed: {e}")).into_response()
    })
}

/// An injected HTTP fault: the status, with a JSON-RPC error body and `Retry-After`.
fn injected(status: u16, retry_after: Option<u64>, id: Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let error = crate::rpc::RpcError::new(
        crate::rpc::codes::INJECTED_FAULT,
        format!("injected fault: HTTP {}", status.as_u16()),
    );
    let mut response = json_response(status, &crate::rpc::failure(&id, error));
    if let Some(seconds) = retry_after {
        response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

async fn requests(State(app): State<Arc<AppState>>) -> Response {
    json_response(StatusCode::OK, &app.services.particle_log.snapshot())
}

async fn clear_requests(State(app): State<Arc<AppState>>) -> Response {
    app.services.particle_log.clear();
    json_response(StatusCode::OK, &json!({ "requests": [], "dropped": 0 }))
}
