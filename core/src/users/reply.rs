//! What the client makes of the service's answers: one JSON-RPC response, or the array that
//! answers a batch. Pure functions (the fuzz targets call them), no I/O.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::record::User;
use crate::describe::{json_kind, quote};
use crate::error::{Error, ErrorKind, Result, RpcErrorObject};

/// Error codes of the user-lookup service: JSON-RPC 2.0's own and the service's application
/// codes (documented in `docs/user-rpc.md`; the devnet server uses the same constants).
pub mod codes {
    /// The body is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid JSON-RPC 2.0 request (also: empty batch, body too large, wrong HTTP method or
    /// content type).
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Wrong number or type of params, or a malformed value.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Missing or wrong project credentials (sent with HTTP 401).
    pub const UNAUTHORIZED: i64 = -32001;
    /// No user with that uuid in the calling project.
    pub const USER_NOT_FOUND: i64 = -32010;
    /// The session token is wrong, expired, or not the user's.
    pub const INVALID_TOKEN: i64 = -32011;
    /// An identity provider other than `jwt`.
    pub const UNSUPPORTED_PROVIDER: i64 = -32012;
    /// No user with that identity in the calling project.
    pub const IDENTITY_NOT_FOUND: i64 = -32013;
}

/// What a call of `method` with request id `id`, made as project `project_id`, makes of the
/// HTTP answer `status` with `body`: the JSON-RPC `result`, or the error it stands for.
///
/// Pure: the parsing entry point of the fuzz targets (`fuzz/`), not part of the API.
#[doc(hidden)]
pub fn interpret_reply(
    project_id: &str,
    method: &str,
    id: u64,
    status: u16,
    body: &str,
) -> Result<Value> {
    let envelope = parse_body(project_id, method, status, body)?;
    let Some(object) = envelope.as_object() else {
        return Err(protocol(
            method,
            format!("the response is {}, not an object", json_kind(&envelope)),
        ));
    };
    let result = interpret_response(method, object, Some(id));
    if status != 200 && result.is_ok() {
        return Err(protocol(method, format!("unexpected HTTP {status} with a result")));
    }
    result
}

/// What a batch of `method` calls with request ids `ids`, made as project `project_id`, makes of
/// the HTTP answer `status` with `body`: one outcome per id, in the order of `ids` — the
/// `result` or the error its response carries (a missing response is a `Protocol` error of that
/// item) — or the error of the whole batch (credentials refused, a body that is not JSON, one
/// error object answering the whole array, HTTP other than 200).
///
/// Pure: the parsing entry point of the fuzz targets (`fuzz/`), not part of the API.
#[doc(hidden)]
pub fn interpret_batch_reply(
    project_id: &str,
    method: &str,
    ids: &[u64],
    status: u16,
    body: &str,
) -> Result<Vec<Result<Value>>> {
    let envelope = parse_body(project_id, method, status, body)?;
    let responses = match envelope {
        Value::Array(responses) => responses,
        // The server refused the batch as a whole (a parse error, a body too large …).
        Value::Object(object) => {
            interpret_response(method, &object, None)?;
            return Err(protocol(method, "a batch was answered by one result".into()));
        }
        other => {
            return Err(protocol(
                method,
                format!("the batch response is {}, not an array", json_kind(&other)),
            ));
        }
    };
    if status != 200 {
        return Err(protocol(method, format!("unexpected HTTP {status} with a batch response")));
    }
    let mut by_id: HashMap<u64, Map<String, Value>> = HashMap::with_capacity(responses.len());
    for response in responses {
        let Value::Object(object) = response else {
            return Err(protocol(
                method,
                format!("a batch response item is {}, not an object", json_kind(&response)),
            ));
        };
        // An item without a usable id (an error the server could not attribute) names no
        // request: the requests it may stand for are reported as unanswered below.
        if let Some(id) = object.get("id").and_then(Value::as_u64) {
            by_id.insert(id, object);
        }
    }
    Ok(ids
        .iter()
        .map(|&id| match by_id.remove(&id) {
            Some(object) => interpret_response(method, &object, Some(id)),
            None => Err(protocol(method, format!("the batch response has no answer to id {id}"))),
        })
        .collect())
}

/// The body as JSON, after the answers that need no parsing: refused credentials, and a body
/// that is not JSON.
fn parse_body(project_id: &str, method: &str, status: u16, body: &str) -> Result<Value> {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    if status == 401 || status == 403 {
        let rpc_error =
            parsed.as_ref().and_then(|v| v.get("error")).and_then(RpcErrorObject::from_json);
        let detail = rpc_error.map(|e| format!(": {}", e.message)).unwrap_or_default();
        return Err(Error::new(
            ErrorKind::Authentication,
            format!(
                "{method}: the service rejected the credentials of project {} (HTTP {status}{detail})",
                quote(project_id)
            ),
        ));
    }
    parsed.ok_or_else(|| {
        Error::new(
            ErrorKind::Protocol,
            format!("{method}: HTTP {status} response is not JSON: {}", quote(body.trim())),
        )
    })
}

/// One JSON-RPC response object: its `result`, or the error it carries. `id` is the request id
/// it must answer; `None` accepts only an error (the answer to a whole batch).
fn interpret_response(method: &str, object: &Map<String, Value>, id: Option<u64>) -> Result<Value> {
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(protocol(method, "the response lacks \"jsonrpc\": \"2.0\"".into()));
    }
    if let Some(error) = object.get("error") {
        let Some(error) = RpcErrorObject::from_json(error) else {
            return Err(protocol(
                method,
                format!("malformed error object {}", quote(&error.to_string())),
            ));
        };
        return Err(Error::rpc(rpc_kind(error.code), method, error));
    }
    let Some(id) = id else {
        return Err(protocol(method, "the response is neither an array nor an error".into()));
    };
    match object.get("id") {
        Some(Value::Number(n)) if n.as_u64() == Some(id) => {}
        Some(other) => {
            return Err(protocol(
                method,
                format!("response id {other} does not match request id {id}"),
            ));
        }
        None => return Err(protocol(method, "the response has no id".into())),
    }
    object
        .get("result")
        .cloned()
        .ok_or_else(|| protocol(method, "the response has neither result nor error".into()))
}

/// `isProjectUser`'s `result` as its answer.
///
/// Pure: a parsing entry point of the fuzz targets (`fuzz/`), not part of the API.
#[doc(hidden)]
pub fn project_user_answer(result: Value) -> Result<bool> {
    match result {
        Value::Bool(answer) => Ok(answer),
        other => Err(Error::new(
            ErrorKind::Protocol,
            format!("isProjectUser returned {} where a boolean was expected", json_kind(&other)),
        )),
    }
}

/// The `result` of `getUserInfo` or `getUserInfoByIdentity` (`method`) as a [`User`].
///
/// Pure: a parsing entry point of the fuzz targets (`fuzz/`), not part of the API.
#[doc(hidden)]
pub fn user_from_result(method: &str, result: Value) -> Result<User> {
    User::from_result(method, result)
}

fn protocol(method: &str, what: String) -> Error {
    Error::new(ErrorKind::Protocol, format!("{method}: malformed JSON-RPC response: {what}"))
}

fn rpc_kind(code: i64) -> ErrorKind {
    match code {
        codes::UNAUTHORIZED | codes::INVALID_TOKEN => ErrorKind::Authentication,
        codes::USER_NOT_FOUND | codes::IDENTITY_NOT_FOUND => ErrorKind::NotFound,
        _ => ErrorKind::Rpc,
    }
}
