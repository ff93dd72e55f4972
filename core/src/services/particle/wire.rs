//! The envelope (`particle-ua-wire.md` §1–2) and what an answer means.
//!
//! A request is one compact JSON object, keys in the SDK's order: `id` (the time in
//! milliseconds), `jsonrpc`, `method`, `params` (always positional), `deviceId` (a new UUID v4
//! per request), `projectId`, `projectClientKey`. No auth header, no query. An answer is read
//! from its `error` and `result` members only; an error is typed by [`ErrorClass`].

use serde::Serialize;
use serde_json::Value;

use super::config::Credentials;
use crate::describe::{bound_message, json_kind, quote};
use crate::error::{Error, ErrorKind, Result, RpcErrorObject};
use crate::http::Reply;

/// The JSON-RPC methods.
pub mod methods {
    /// The account's deposit addresses (`getSmartAccountOptions`).
    pub const GET_UNIVERSAL_ACCOUNT: &str = "universal_getUniversalAccount";
    /// The account's balances (`getPrimaryAssets`).
    pub const GET_PRIMARY_ASSETS: &str = "universal_getPrimaryAssets";
    /// A transfer, buy, sell, universal or convert transaction, to be signed.
    pub const CREATE_TRANSACTION: &str = "universal_createTransaction";
    /// A signed transaction, executed.
    pub const SEND_TRANSACTION: &str = "universal_sendTransaction";
    /// One transaction.
    pub const GET_TRANSACTION: &str = "universal_getTransaction";
    /// A page of the account's transactions (`getTransactions`).
    pub const GET_TRANSACTIONS: &str = "universal_getTransactionsV2";
    /// One token's transactions (`getTokenTransactions`).
    pub const GET_TOKEN_TRANSACTIONS: &str = "universal_getTokenTransactions";
}

/// One request's body, keys in the SDK's order.
#[derive(Serialize)]
struct Envelope<'a, P: Serialize> {
    id: u64,
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
    #[serde(rename = "deviceId")]
    device_id: &'a str,
    #[serde(rename = "projectId")]
    project_id: &'a str,
    #[serde(rename = "projectClientKey")]
    project_client_key: &'a str,
}

/// The body of a `method` request with positional `params` (a tuple or a slice: it must
/// serialize as a JSON array), request `id` and `device_id`.
pub(super) fn body<P: Serialize>(
    method: &str,
    params: &P,
    credentials: &Credentials,
    id: u64,
    device_id: &str,
) -> Result<String> {
    let envelope = Envelope {
        id,
        jsonrpc: "2.0",
        method,
        params,
        device_id,
        project_id: credentials.project_id(),
        project_client_key: credentials.client_key(),
    };
    serde_json::to_string(&envelope).map_err(|e| {
        Error::new(ErrorKind::Internal, format!("the {method} request could not be written: {e}"))
    })
}

/// A new request's `id` and `deviceId`: the time in milliseconds (as `Date.now()`) and a
/// random UUID v4.
pub(super) fn fresh_ids() -> (u64, String) {
    (now_ms(), uuid::Uuid::new_v4().to_string())
}

/// The time in unix milliseconds (`Date.now()`).
pub(super) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

/// What kind of failure a service error is (`docs/particle.md` §3 has the table of codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// The project's credentials were refused: -32001, 40102, HTTP 401 or 403.
    Authentication,
    /// Too many requests: -32005, HTTP 429.
    RateLimited,
    /// The request was malformed or named something unknown: -32600, -32602, 10002, 40103.
    InvalidParameters,
    /// The account cannot pay: -32653 ("Insufficient primary token balance"), 40104.
    InsufficientFunds,
    /// The owner's signature was refused: devnet's -32655.
    SignatureRejected,
    /// No such transaction: devnet's -32657.
    NotFound,
    /// Anything else the service failed with (-32603, 10001, …).
    Service,
}

impl ErrorClass {
    /// The class of a JSON-RPC error `code`.
    pub fn of_code(code: i64) -> ErrorClass {
        match code {
            -32001 | 40102 => ErrorClass::Authentication,
            -32005 => ErrorClass::RateLimited,
            -32600 | -32602 | 10002 | 40103 => ErrorClass::InvalidParameters,
            -32653 | 40104 => ErrorClass::InsufficientFunds,
            -32655 => ErrorClass::SignatureRejected,
            -32657 => ErrorClass::NotFound,
            _ => ErrorClass::Service,
        }
    }

    /// The class of an HTTP status the service answered instead of a JSON-RPC answer.
    pub fn of_status(status: u16) -> ErrorClass {
        match status {
            401 | 403 => ErrorClass::Authentication,
            429 => ErrorClass::RateLimited,
            400 | 404 | 405 | 413 | 422 => ErrorClass::InvalidParameters,
            _ => ErrorClass::Service,
        }
    }

    /// The class of an error this module made from a service's answer, if it was one.
    pub fn of(error: &Error) -> Option<ErrorClass> {
        error.rpc_error().map(|rpc| ErrorClass::of_code(rpc.code))
    }

    /// The depositkit error kind of this class.
    pub fn kind(self) -> ErrorKind {
        match self {
            ErrorClass::Authentication | ErrorClass::SignatureRejected => ErrorKind::Authentication,
            ErrorClass::RateLimited => ErrorKind::Network,
            ErrorClass::InvalidParameters => ErrorKind::InvalidArgument,
            ErrorClass::NotFound => ErrorKind::NotFound,
            ErrorClass::InsufficientFunds | ErrorClass::Service => ErrorKind::UniversalAccount,
        }
    }

    /// Whether a send refused this way certainly did not execute (anything but a service
    /// failure, which may have happened after the service acted).
    pub fn is_definite_refusal(self) -> bool {
        self != ErrorClass::Service
    }
}

/// An answer of the service, read.
#[derive(Debug)]
pub(super) enum Answer {
    /// Its `result`.
    Result(Value),
    /// A JSON-RPC error, as an [`Error`] of its class's kind carrying the object.
    Failed(Error),
}

/// Reads a reply to `method`: any status but 2xx is a failure of its [`ErrorClass`] (the
/// SDK's axios throws on it; a JSON-RPC error in its body is kept); a 2xx body must be JSON
/// with a truthy `error` or a `result`. Service text passes through `credentials.scrub`.
///
/// # Errors
/// [`ErrorKind::Protocol`] for a body that is not JSON or has neither member.
pub(super) fn read(method: &str, reply: &Reply, credentials: &Credentials) -> Result<Answer> {
    let parsed: Option<Value> = serde_json::from_str(&reply.body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error")).filter(|e| truthy(e));
    if !(200..300).contains(&reply.status) {
        let class = ErrorClass::of_status(reply.status);
        let what = match error.map(|e| rpc_object(e, credentials)) {
            Some(object) => format!("JSON-RPC error {}: {}", object.code, object.message),
            None => {
                let body = reply.body.trim();
                if body.is_empty() { "no body".to_owned() } else { quote(&credentials.scrub(body)) }
            }
        };
        return Ok(Answer::Failed(Error::new(
            class.kind(),
            format!("{method} failed: the service answered HTTP {}: {what}", reply.status),
        )));
    }
    let Some(value) = &parsed else {
        return Err(Error::new(
            ErrorKind::Protocol,
            format!(
                "{method}: the answer is not JSON: {}",
                quote(&credentials.scrub(reply.body.trim()))
            ),
        ));
    };
    if let Some(error) = error {
        let object = rpc_object(error, credentials);
        let class = ErrorClass::of_code(object.code);
        return Ok(Answer::Failed(Error::rpc(class.kind(), method, object)));
    }
    match value.get("result") {
        Some(result) if !result.is_null() => Ok(Answer::Result(result.clone())),
        _ => Err(Error::new(
            ErrorKind::Protocol,
            format!("{method}: the answer has no result (got {})", describe_keys(value)),
        )),
    }
}

/// Whether JS would take `value` as true (`if (response.error)`).
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// The error member as a JSON-RPC error object, its text scrubbed: a bare string or an object
/// without a code (which the SDK turns into an error with no code) gets code 0.
fn rpc_object(error: &Value, credentials: &Credentials) -> RpcErrorObject {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(|s| credentials.scrub(s));
    let (code, message, data) = match error {
        Value::String(s) => (0, credentials.scrub(s), None),
        Value::Object(map) => (
            map.get("code").and_then(Value::as_i64).unwrap_or(0),
            text(map.get("message")).unwrap_or_default(),
            map.get("data").map(|d| scrub_value(d, credentials)),
        ),
        other => (0, format!("an error member that is {}", json_kind(other)), None),
    };
    let message =
        if message.is_empty() { "no message".to_owned() } else { bound_message(&message) };
    RpcErrorObject { code, message, data }
}

fn scrub_value(value: &Value, credentials: &Credentials) -> Value {
    let text = value.to_string();
    let scrubbed = credentials.scrub(&text);
    if scrubbed == text {
        value.clone()
    } else {
        serde_json::from_str(&scrubbed).unwrap_or(Value::Null)
    }
}

/// "an object with keys a, b" / "an array" — what an answer was, for messages.
fn describe_keys(value: &Value) -> String {
    match value {
        Value::Object(map) if map.is_empty() => "an empty object".to_owned(),
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().take(8).map(|k| quote(k)).collect();
            format!("an object with {}", keys.join(", "))
        }
        other => json_kind(other).to_owned(),
    }
}

/// `error` with the credentials taken out of its message (the URL of a transport error, text a
/// proxy echoed).
pub(super) fn scrubbed(error: Error, credentials: &Credentials) -> Error {
    let message = credentials.scrub(error.message());
    if message == error.message() {
        return error;
    }
    Error::new(error.kind(), message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn credentials() -> Credentials {
        Credentials::new("PID-123", "CKEY-456").unwrap()
    }

    fn reply(status: u16, body: &str) -> Reply {
        Reply { status, body: body.to_owned() }
    }

    /// The body recorded in `particle-ua-wire.md` §1, byte for byte.
    #[test]
    fn the_envelope_is_the_recorded_body() {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Account {
            owner_address: &'static str,
            name: &'static str,
            version: &'static str,
        }
        let account = Account {
            owner_address: "0x1111111111111111111111111111111111111111",
            name: "UNIVERSAL",
            version: "2.0.1",
        };
        let body = body(
            methods::GET_UNIVERSAL_ACCOUNT,
            &(account,),
            &credentials(),
            1_795_628_706_320,
            "a451019c-5c92-4e7d-ba3b-7f4f935e2c74",
        )
        .unwrap();
        assert_eq!(
            body,
            r#"{"id":1795628706320,"jsonrpc":"2.0","method":"universal_getUniversalAccount","params":[{"ownerAddress":"0x1111111111111111111111111111111111111111","name":"UNIVERSAL","version":"2.0.1"}],"deviceId":"a451019c-5c92-4e7d-ba3b-7f4f935e2c74","projectId":"PID-123","projectClientKey":"CKEY-456"}"#
        );
    }

    #[test]
    fn ids_are_milliseconds_and_device_ids_fresh_v4_uuids() {
        let (id, device) = fresh_ids();
        let (_, other) = fresh_ids();
        assert!(id > 1_700_000_000_000, "{id}");
        assert_ne!(device, other);
        let parsed = uuid::Uuid::parse_str(&device).unwrap();
        assert_eq!(parsed.get_version_num(), 4);
        assert_eq!(device.len(), 36);
    }

    #[test]
    fn results_and_errors_are_read_from_their_members_only() {
        let c = credentials();
        let ok =
            read("m", &reply(200, r#"{"jsonrpc":"1.0","id":"x","result":{"a":1}}"#), &c).unwrap();
        assert!(matches!(ok, Answer::Result(v) if v == json!({"a": 1})));
        // Falsy errors are no errors.
        let ok = read("m", &reply(200, r#"{"error":null,"result":[]}"#), &c).unwrap();
        assert!(matches!(ok, Answer::Result(v) if v == json!([])));
        for body in [r#"{"result":null}"#, r#"{}"#, r#"{"error":""}"#] {
            assert_eq!(read("m", &reply(200, body), &c).unwrap_err().kind(), ErrorKind::Protocol);
        }
        let e = read("m", &reply(200, "<html>"), &c).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol);
        assert!(e.message().contains("not JSON"), "{e}");
    }

    /// The mapping of `docs/particle.md` §3.
    #[test]
    fn errors_map_to_their_class_and_kind() {
        let c = credentials();
        let cases = [
            (-32001, ErrorClass::Authentication, ErrorKind::Authentication),
            (40102, ErrorClass::Authentication, ErrorKind::Authentication),
            (-32005, ErrorClass::RateLimited, ErrorKind::Network),
            (-32602, ErrorClass::InvalidParameters, ErrorKind::InvalidArgument),
            (10002, ErrorClass::InvalidParameters, ErrorKind::InvalidArgument),
            (-32653, ErrorClass::InsufficientFunds, ErrorKind::UniversalAccount),
            (40104, ErrorClass::InsufficientFunds, ErrorKind::UniversalAccount),
            (-32655, ErrorClass::SignatureRejected, ErrorKind::Authentication),
            (-32657, ErrorClass::NotFound, ErrorKind::NotFound),
            (-32603, ErrorClass::Service, ErrorKind::UniversalAccount),
            (10001, ErrorClass::Service, ErrorKind::UniversalAccount),
        ];
        for (code, class, kind) in cases {
            let body =
                json!({"error": {"code": code, "message": "nope", "data": {"x": 1}}}).to_string();
            let Answer::Failed(e) = read("universal_x", &reply(200, &body), &c).unwrap() else {
                panic!("{code}")
            };
            assert_eq!((ErrorClass::of(&e), e.kind()), (Some(class), kind), "{code}");
            assert_eq!(e.message(), format!("universal_x failed: JSON-RPC error {code}: nope"));
            assert_eq!(e.rpc_error().unwrap().data, Some(json!({"x": 1})));
        }
        // A bare string error: no code, as the SDK's UniversalError has none.
        let Answer::Failed(e) = read("m", &reply(200, r#"{"error":"boom"}"#), &c).unwrap() else {
            panic!()
        };
        assert_eq!((e.rpc_error().unwrap().code, e.kind()), (0, ErrorKind::UniversalAccount));
        for (status, kind) in [
            (401, ErrorKind::Authentication),
            (403, ErrorKind::Authentication),
            (400, ErrorKind::InvalidArgument),
            (418, ErrorKind::UniversalAccount),
        ] {
            let body = r#"{"error":{"code":-32001,"message":"who are you"}}"#;
            let Answer::Failed(e) = read("m", &reply(status, body), &c).unwrap() else { panic!() };
            assert_eq!(e.kind(), kind, "{status}");
            assert!(
                e.message().contains(&format!("HTTP {status}"))
                    && e.message().contains("who are you"),
                "{e}"
            );
        }
    }

    #[test]
    fn echoed_credentials_never_reach_a_message() {
        let c = credentials();
        let echo = r#"{"error":{"code":-32602,"message":"bad body {\"projectClientKey\":\"CKEY-456\"}","data":{"projectId":"PID-123"}}}"#;
        let Answer::Failed(e) = read("m", &reply(200, echo), &c).unwrap() else { panic!() };
        let all = format!("{e} {e:?} {}", serde_json::to_string(e.rpc_error().unwrap()).unwrap());
        assert!(!all.contains("CKEY-456") && !all.contains("PID-123"), "{all}");
        for body in [r#"oops CKEY-456"#, r#"{"x":"CKEY-456"}"#] {
            let e = read("m", &reply(200, body), &c).unwrap_err();
            assert!(!e.message().contains("CKEY-456"), "{e}");
            let Answer::Failed(e) = read("m", &reply(502, body), &c).unwrap() else { panic!() };
            assert!(!e.message().contains("CKEY-456"), "{e}");
        }
        let e =
            scrubbed(Error::new(ErrorKind::Network, "request to http://h/?k=CKEY-456 failed"), &c);
        assert_eq!(e.message(), "request to http://h/?k=<redacted> failed");
    }
}
