//! HTTP routes: `POST /user-rpc` (the JSON-RPC service), `GET /devnet/health`,
//! `/devnet/faults` when fault injection is on, and the deposit services with their
//! administration (`crate::services`).

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{
    ALLOW, AUTHORIZATION, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE,
};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use crate::auth::{self, AuthFailure};
use crate::faults::Faults;
use crate::methods::Context;
use crate::rpc::{self, RpcError, codes};
use crate::services::faults::FaultRequest;
use crate::services::{self, Services};
use crate::store::Store;

/// Path of the JSON-RPC service.
pub const USER_RPC_PATH: &str = "/user-rpc";
/// Realm of the `WWW-Authenticate` challenge.
pub const REALM: &str = "depositkit-devnet";
/// How much of an oversize body is read and dropped before answering 413.
const MAX_DRAINED_BYTES: usize = 16 * 1024 * 1024;
/// Largest body accepted by `/devnet/faults`.
const MAX_FAULT_BODY_BYTES: usize = 64 * 1024;

/// What every handler shares.
pub(crate) struct AppState {
    pub store: Store,
    pub faults: Arc<Faults>,
    pub max_body_bytes: usize,
    pub fault_injection: bool,
    pub services: Arc<Services>,
}

/// The JSON-RPC method names of a request, attached to its response for the request log.
#[derive(Clone)]
struct RpcMethods(Vec<String>);

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
                .merge(services::wallet_balances::router())
                .merge(services::onramp::router())
                .merge(services::particle::router())
                // Before the layer, so that the body of a refused method is read too.
                .method_not_allowed_fallback(services::api::method_not_allowed)
                .layer(middleware::from_fn_with_state(Arc::clone(&state), read_body_first)),
        )
        .merge(crate::observe::router())
        .route_layer(middleware::from_fn(crate::observe::count_requests))
        .fallback(not_found)
        .with_state(state);
    if verbose { router.layer(middleware::from_fn(log_request)) } else { router }
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

async fn user_rpc(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if parts.method != Method::POST {
        let error = RpcError::invalid_request(format!("use POST, not {}", parts.method));
        let mut response = rpc_error_response(StatusCode::METHOD_NOT_ALLOWED, &Value::Null, error);
        response.headers_mut().insert(ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    if !is_json(&parts.headers) {
        let error = RpcError::invalid_request("Content-Type must be application/json");
        return rpc_error_response(StatusCode::UNSUPPORTED_MEDIA_TYPE, &Value::Null, error);
    }
    let bytes = match read_body(&parts.headers, body, app.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(error) => return rpc_body_error(error, app.max_body_bytes),
    };

    let planned = app.faults.take();
    if let Some(delay) = planned.delay {
        tokio::time::sleep(delay).await;
    }
    let parsed = serde_json::from_slice::<Value>(&bytes);
    let reply_id = match &parsed {
        Ok(body @ Value::Object(_)) => rpc::id_of(body),
        _ => Value::Null,
    };
    if let Some((status, retry_after)) = planned.status {
        return fault_response(status, retry_after, &reply_id);
    }

    let methods = parsed.as_ref().map(rpc::method_names).unwrap_or_default();
    let header = parts.headers.get(AUTHORIZATION).map(|v| v.as_bytes().to_vec());
    let store = app.store.clone();
    let outcome =
        tokio::task::spawn_blocking(move || answer(&store, header.as_deref(), parsed)).await;
    let mut response = match outcome {
        Ok(Ok(Answer::Reply(Some(reply)))) => json_response(StatusCode::OK, &reply),
        Ok(Ok(Answer::Reply(None))) => StatusCode::NO_CONTENT.into_response(),
        Ok(Ok(Answer::Unauthorized(failure))) => unauthorized(failure, &reply_id),
        Ok(Err(error)) => {
            eprintln!("depositkit-devnet: internal error: {error}");
            rpc_error_response(StatusCode::INTERNAL_SERVER_ERROR, &reply_id, RpcError::internal())
        }
        Err(join_error) => {
            eprintln!("depositkit-devnet: internal error: request task failed: {join_error}");
            rpc_error_response(StatusCode::INTERNAL_SERVER_ERROR, &reply_id, RpcError::internal())
        }
    };
    response.extensions_mut().insert(RpcMethods(methods));
    response
}

enum Answer {
    /// The JSON-RPC reply, or `None` when there is nothing to send back.
    Reply(Option<Value>),
    Unauthorized(AuthFailure),
}

/// Authenticates, then answers the body. Blocking: runs on the blocking pool.
fn answer(
    store: &Store,
    header: Option<&[u8]>,
    parsed: serde_json::Result<Value>,
) -> crate::Result<Answer> {
    let project_id = match auth::authenticate(store, header)? {
        Ok(project_id) => project_id,
        Err(failure) => return Ok(Answer::Unauthorized(failure)),
    };
    let body = match parsed {
        Ok(body) => body,
        Err(e) => {
            return Ok(Answer::Reply(Some(rpc::failure(
                &Value::Null,
                RpcError::parse_error(&e.to_string()),
            ))));
        }
    };
    let context = Context { store, project_id: &project_id };
    Ok(Answer::Reply(rpc::handle(&body, |method, params| context.call(method, params))))
}

/// Whether the request says its body is JSON (`application/json`, any parameters).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
}

/// Why a body was not read.
enum BodyError {
    /// Larger than the limit.
    TooLarge,
    /// The connection failed or the framing was broken; the message says how.
    Unreadable(String),
}

/// The whole body, or why it was not read.
///
/// An oversize body is still read (and dropped) up to [`MAX_DRAINED_BYTES`], so that a client
/// that writes the whole body before reading gets the 413 rather than a broken pipe.
async fn read_body(headers: &HeaderMap, mut body: Body, max: usize) -> Result<Bytes, BodyError> {
    let declared = headers.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > (max + MAX_DRAINED_BYTES) as u64) {
        return Err(BodyError::TooLarge);
    }
    let mut collected = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| BodyError::Unreadable(e.to_string()))?;
        let Ok(data) = frame.into_data() else { continue };
        seen = seen.saturating_add(data.len());
        if seen <= max {
            collected.extend_from_slice(&data);
        } else if seen > max + MAX_DRAINED_BYTES {
            break;
        }
    }
    if seen > max { Err(BodyError::TooLarge) } else { Ok(Bytes::from(collected)) }
}

/// The JSON-RPC answer of a body that was not read: 413 with `data.maxBodyBytes`, or 400.
fn rpc_body_error(error: BodyError, max: usize) -> Response {
    match error {
        BodyError::TooLarge => {
            let error = RpcError::new(codes::INVALID_REQUEST, "request too large")
                .with_data(json!({ "maxBodyBytes": max }));
            rpc_error_response(StatusCode::PAYLOAD_TOO_LARGE, &Value::Null, error)
        }
        BodyError::Unreadable(e) => {
            let error = RpcError::invalid_request(format!("cannot read the request body: {e}"));
            rpc_error_response(StatusCode::BAD_REQUEST, &Value::Null, error)
        }
    }
}

fn unauthorized(failure: AuthFailure, id: &Value) -> Response {
    let error = RpcError::new(codes::UNAUTHORIZED, "unauthorized")
        .with_data(json!({ "reason": failure.reason() }));
    let mut response = rpc_error_response(StatusCode::UNAUTHORIZED, id, error);
    let challenge = format!("Basic realm=\"{REALM}\"");
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
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

fn rpc_error_response(status: StatusCode, id: &Value, error: RpcError) -> Response {
    json_response(status, &rpc::failure(id, error))
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
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

async fn not_found(request: Request) -> Response {
    json_response(
        StatusCode::NOT_FOUND,
        &json!({
            "error": format!("no route for {}", request.uri().path()),
            "hint": format!("the JSON-RPC service is POST {USER_RPC_PATH}"),
        }),
    )
}

/// One line per request on stderr: HTTP method, path, status, JSON-RPC methods, duration.
/// Never headers, params or bodies: they carry keys and session tokens.
async fn log_request(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    let methods = response
        .extensions()
        .get::<RpcMethods>()
        .map(|m| format!(" [{}]", m.0.join(",")))
        .unwrap_or_default();
    eprintln!(
        "depositkit-devnet: {method} {path} -> {}{methods} in {:.1} ms",
        response.status().as_u16(),
        started.elapsed().as_secs_f64() * 1000.0
    );
    response
}
