//! HTTP routes: `POST /user-rpc` (the JSON-RPC service), `GET /devnet/health`,
//! `/devnet/faults` when fault injection is on, and the deposit services with their
//! administration (`crate::services`).

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{ALLOW, CONNECTION, RETRY_AFTER};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
pub use depositkit_server::http::USER_RPC_PATH;
use depositkit_server::http::{BodyError, RpcState, json_response, read_body, rpc_error_response};
use serde_json::{Value, json};

use crate::faults::Faults;
use crate::rpc::{self, RpcError, codes};
use crate::services::faults::FaultRequest;
use crate::services::{self, Services};
use crate::store::Store;

/// Realm of the `WWW-Authenticate` challenge.
pub const REALM: &str = "depositkit-devnet";
/// Largest body accepted by `/devnet/faults`.
const MAX_FAULT_BODY_BYTES: usize = 64 * 1024;

/// What every handler shares.
pub(crate) struct AppState {
    pub store: Store,
    pub faults: Arc<Faults>,
    pub max_body_bytes: usize,
    pub fault_injection: bool,
    pub services: Arc<Services>,
    /// The user-lookup service (depositkit-server's) over `store`.
    pub rpc: Arc<RpcState>,
}

/// The routes; with `verbose`, one line per request goes to stderr.
pub(crate) fn router(state: Arc<AppState>, verbose: bool) -> Router {
    let router = Router::new()
        .route(USER_RPC_PATH, any(user_rpc))
        .route("/devnet/health", get(health).fallback(health_method_not_allowed))
        .route("/devnet/faults", any(faults_endpoint))
        .merge(
            Router::new()
                .merge(services::routes::router(Arc::clone(&state)))
                .merge(services::admin::router())
                .merge(crate::simchain::routes::router())
                .merge(services::wallet_balances::router())
                .merge(services::onramp::router())
                .merge(services::particle::router())
                // Before the layer, so that the body of a refused method is read too.
                .method_not_allowed_fallback(services::api::method_not_allowed)
                .layer(middleware::from_fn_with_state(Arc::clone(&state), read_body_first)),
        )
        .merge(crate::observe::router())
        .merge(crate::dashboard::router())
        .route_layer(middleware::from_fn(crate::observe::count_requests))
        .fallback(depositkit_server::serve::not_found)
        .with_state(state);
    if verbose {
        router.layer(middleware::from_fn(|request, next| {
            depositkit_server::serve::log_request("depositkit-devnet", request, next)
        }))
    } else {
        router
    }
}

/// Reads the whole request body before a service handler runs. Handlers answer some requests
/// without reading the body (a refused JWT or API key is checked first); hyper closes a
/// connection whose request body was left unread, and a client reusing it from its pool would see
/// its next request fail with a reset instead of an answer. A body over the limit is 413
/// `TOO_LARGE`, one that cannot be read (cut short, badly chunked) 400 `INVALID_REQUEST`, both
/// on a connection marked for closing.
async fn read_body_first(
    State(app): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    match services::api::read_body(body, app.max_body_bytes).await {
        Ok(bytes) => next.run(Request::from_parts(parts, Body::from(bytes))).await,
        Err(error) => {
            let mut response = error.into_response();
            response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
            response
        }
    }
}

/// `/user-rpc`: depositkit-server's handler, after the faults armed for it (a delay, then
/// an HTTP status instead of an answer).
async fn user_rpc(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let planned = app.faults.take();
    if let Some(delay) = planned.delay {
        tokio::time::sleep(delay).await;
    }
    if let Some((status, retry_after)) = planned.status {
        // The error echoes the request's id, as the real service's errors do.
        let (parts, body) = request.into_parts();
        let id = match read_body(&parts.headers, body, app.max_body_bytes).await {
            Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(body @ Value::Object(_)) => rpc::id_of(&body),
                _ => Value::Null,
            },
            Err(_) => Value::Null,
        };
        return fault_response(status, retry_after, &id);
    }
    depositkit_server::http::user_rpc(State(Arc::clone(&app.rpc)), request).await
}

fn fault_response(status: u16, retry_after: Option<u64>, id: &Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let error = RpcError::new(codes::INJECTED_FAULT, format!("injected fault: HTTP {status}"))
        .with_data(json!({ "status": status.as_u16(), "retryAfter": retry_after }));
    let mut response = rpc_error_response(status, id, error);
    if let Some(seconds) = retry_after {
        response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

async fn health() -> Response {
    json_response(StatusCode::OK, &json!({ "status": "ok" }))
}

/// 405 for `/devnet/health` with another method than GET, in the error shape of the routes of
/// `docs/user-rpc.md` (the method router adds `Allow`).
async fn health_method_not_allowed(method: Method) -> Response {
    json_response(
        StatusCode::METHOD_NOT_ALLOWED,
        &json!({ "error": format!("{method} is not allowed on /devnet/health; use GET") }),
    )
}

async fn faults_endpoint(State(app): State<Arc<AppState>>, request: Request) -> Response {
    if !app.fault_injection {
        return json_response(
            StatusCode::NOT_FOUND,
            &json!({ "error": "fault injection is off; start the server with --enable-fault-injection" }),
        );
    }
    let (parts, body) = request.into_parts();
    match parts.method {
        Method::GET => {}
        Method::DELETE => services::admin::clear_faults(&app),
        Method::POST => {
            let bytes = match read_body(&parts.headers, body, MAX_FAULT_BODY_BYTES).await {
                Ok(bytes) => bytes,
                // This endpoint's error body: `{"error": "<message>"}`.
                Err(BodyError::TooLarge) => {
                    let message = format!("the body is larger than {MAX_FAULT_BODY_BYTES} bytes");
                    return json_response(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        &json!({ "error": message }),
                    );
                }
                Err(BodyError::Unreadable(e)) => {
                    return json_response(
                        StatusCode::BAD_REQUEST,
                        &json!({ "error": format!("cannot read the request body: {e}") }),
                    );
                }
            };
            let injected = serde_json::from_slice::<FaultRequest>(&bytes)
                .map_err(|e| {
                    format!("expected a fault like {{\"status\": 429, \"count\": 1}}: {e}")
                })
                .and_then(|fault| services::admin::inject_fault(&app, &fault));
            if let Err(message) = injected {
                return json_response(StatusCode::BAD_REQUEST, &json!({ "error": message }));
            }
        }
        _ => {
            let mut response = json_response(
                StatusCode::METHOD_NOT_ALLOWED,
                &json!({ "error": "use GET, POST or DELETE" }),
            );
            response.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            return response;
        }
    }
    json_response(StatusCode::OK, &services::admin::pending_faults(&app))
}
