//! The HTTP face of the user-lookup service: `POST /user-rpc` (JSON-RPC 2.0 with HTTP Basic
//! auth, `docs/user-rpc.md`), and the body reading and JSON responses it shares with devnet.

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{ALLOW, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use http_body_util::BodyExt;
use serde_json::{Value, json};

use crate::auth::{self, AuthFailure};
use crate::methods::{self, Context};
use crate::rpc::{self, RpcError, codes};
use crate::single_call::{self, SingleCall};
use crate::store::{Lookup, UserStore};
use crate::time;

/// Path of the JSON-RPC service.
pub const USER_RPC_PATH: &str = "/user-rpc";
/// How much of an oversize body is read and dropped before answering 413.
const MAX_DRAINED_BYTES: usize = 16 * 1024 * 1024;

/// What the JSON-RPC route needs.
#[derive(Debug, Clone)]
pub struct RpcState {
    /// Where users are looked up.
    pub store: UserStore,
    /// Largest accepted request body, in bytes: larger ones get 413.
    pub max_body_bytes: usize,
    /// Realm of the `WWW-Authenticate` challenge.
    pub realm: &'static str,
}

/// The JSON-RPC method names of a request, attached to its response for the request log
/// (never the params: they hold session tokens).
#[derive(Debug, Clone)]
pub struct RpcMethods(pub Vec<String>);

/// `POST /user-rpc` (any other method: 405).
pub fn user_rpc_router(state: Arc<RpcState>) -> Router {
    Router::new().route(USER_RPC_PATH, any(user_rpc)).with_state(state)
}

/// Answers one HTTP request of the JSON-RPC service.
pub async fn user_rpc(State(app): State<Arc<RpcState>>, request: Request) -> Response {
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
    let header = parts.headers.get(AUTHORIZATION).map(HeaderValue::as_bytes);
    if let Some(call) = SingleCall::parse(&bytes) {
        let methods = vec![rpc::log_name(call.method)];
        let mut response = answer_single(&app, header, call).await;
        response.extensions_mut().insert(RpcMethods(methods));
        return response;
    }
    let parsed = serde_json::from_slice::<Value>(&bytes);
    let reply_id = match &parsed {
        Ok(body @ Value::Object(_)) => rpc::id_of(body),
        _ => Value::Null,
    };
    let methods = parsed.as_ref().map(rpc::method_names).unwrap_or_default();
    let mut response = match answer(&app.store, header, parsed).await {
        Ok(Answer::Reply(Some(reply))) => json_response(StatusCode::OK, &reply),
        Ok(Answer::Reply(None)) => StatusCode::NO_CONTENT.into_response(),
        Ok(Answer::Unauthorized(failure)) => unauthorized(failure, &reply_id, app.realm),
        Err(error) => {
            eprintln!("depositkit-server: internal error: {error}");
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

/// Authenticates, then answers the body. A single request (the common case) takes one trip to
/// the store for both ([`crate::store::lookup`]): its envelope and params are checked first
/// (pure), and whatever they say, a caller whose credentials are wrong only learns that.
async fn answer(
    store: &UserStore,
    header: Option<&[u8]>,
    parsed: serde_json::Result<Value>,
) -> crate::Result<Answer> {
    let credentials = match auth::parse_basic(header) {
        Ok(credentials) => credentials,
        Err(failure) => return Ok(Answer::Unauthorized(failure)),
    };
    let project_id = credentials.lookup_id();
    let key = credentials.server_key();
    let batch = match parsed {
        Ok(one @ Value::Object(_)) => return answer_one(store, &project_id, key, &one).await,
        other => other,
    };
    // A batch (or a body that is not JSON, or not an object): the credentials, then its calls
    // one after the other.
    if store.authenticate_and_look_up(&project_id, key, &Lookup::Nothing).await?.is_none() {
        return Ok(Answer::Unauthorized(AuthFailure::Rejected));
    }
    Ok(Answer::Reply(match batch {
        Ok(body) => rpc::handle(&body, &Context { store, project_id: &project_id }).await,
        Err(e) => Some(rpc::failure(&Value::Null, RpcError::parse_error(&e.to_string()))),
    }))
}

/// One request object: checked, then the credentials and its lookup in one trip to the store.
async fn answer_one(
    store: &UserStore,
    project_id: &str,
    key: &str,
    body: &Value,
) -> crate::Result<Answer> {
    // An invalid request is answered even without an id; a notification gets no answer.
    let (id, planned) = match rpc::parse_request(body) {
        Ok(request) => {
            (request.id, methods::lookup_of(&request.method, &request.params, time::now_ms()))
        }
        Err((id, error)) => (Some(id), Err(error)),
    };
    let lookup = planned.as_ref().unwrap_or(&Lookup::Nothing);
    let Some(found) = store.authenticate_and_look_up(project_id, key, lookup).await? else {
        return Ok(Answer::Unauthorized(AuthFailure::Rejected));
    };
    let outcome = planned
        .and_then(|lookup| methods::answer(&lookup, found))
        .and_then(|answer| methods::answer_json(&answer));
    Ok(Answer::Reply(id.map(|id| rpc::reply(&id, outcome))))
}

/// [`answer_one`] for the common single call, read without a `serde_json::Value`
/// ([`crate::single_call`]) and answered into the response bytes: the same answer, less work.
async fn answer_single(app: &RpcState, header: Option<&[u8]>, call: SingleCall<'_>) -> Response {
    let reply_id = call.id.clone().unwrap_or(Value::Null);
    let credentials = match auth::parse_basic(header) {
        Ok(credentials) => credentials,
        Err(failure) => return unauthorized(failure, &reply_id, app.realm),
    };
    let planned = methods::lookup_of_strings(call.method, call.params, time::now_ms());
    let lookup = planned.as_ref().unwrap_or(&Lookup::Nothing);
    let project_id = credentials.lookup_id();
    let found = app.store.authenticate_and_look_up(&project_id, credentials.server_key(), lookup);
    let found = match found.await {
        Ok(Some(found)) => found,
        Ok(None) => return unauthorized(AuthFailure::Rejected, &reply_id, app.realm),
        Err(error) => {
            eprintln!("depositkit-server: internal error: {error}");
            let error = RpcError::internal();
            return rpc_error_response(StatusCode::INTERNAL_SERVER_ERROR, &reply_id, error);
        }
    };
    let Some(id) = call.id else {
        return StatusCode::NO_CONTENT.into_response();
    };
    match planned.and_then(|lookup| methods::answer(&lookup, found)) {
        Ok(answer) => match single_call::success_bytes(&id, &answer) {
            Ok(bytes) => bytes_response(StatusCode::OK, bytes),
            Err(e) => {
                eprintln!("depositkit-server: internal error: cannot write an answer: {e}");
                json_response(StatusCode::OK, &rpc::failure(&id, RpcError::internal()))
            }
        },
        Err(error) => json_response(StatusCode::OK, &rpc::failure(&id, error)),
    }
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
#[derive(Debug)]
pub enum BodyError {
    /// Larger than the limit.
    TooLarge,
    /// The connection failed or the framing was broken; the message says how.
    Unreadable(String),
}

/// The whole body, or why it was not read.
///
/// An oversize body is still read (and dropped) up to 16 MiB past the limit, so that a client
/// that writes the whole body before reading gets the 413 rather than a broken pipe.
///
/// # Errors
/// [`BodyError::TooLarge`] past `max` bytes; [`BodyError::Unreadable`] when reading fails.
pub async fn read_body(
    headers: &HeaderMap,
    mut body: Body,
    max: usize,
) -> Result<Bytes, BodyError> {
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

fn unauthorized(failure: AuthFailure, id: &Value, realm: &str) -> Response {
    let error = RpcError::new(codes::UNAUTHORIZED, "unauthorized")
        .with_data(json!({ "reason": failure.reason() }));
    let mut response = rpc_error_response(StatusCode::UNAUTHORIZED, id, error);
    if let Ok(value) = HeaderValue::from_str(&format!("Basic realm=\"{realm}\"")) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
}

/// A JSON-RPC error response with HTTP `status`.
pub fn rpc_error_response(status: StatusCode, id: &Value, error: RpcError) -> Response {
    json_response(status, &rpc::failure(id, error))
}

/// `body` as `application/json` with HTTP `status`.
pub fn json_response(status: StatusCode, body: &Value) -> Response {
    bytes_response(status, body.to_string().into_bytes())
}

/// `json`, the bytes of a JSON text, as `application/json` with HTTP `status`.
fn bytes_response(status: StatusCode, json: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(json));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
