//! JSON-RPC 2.0 envelopes: validating requests, single and batch calls, notifications, and
//! building responses. Independent of HTTP and of the methods, which come in as a closure.

use serde::Serialize;
use serde_json::{Map, Value, json};

/// Error codes: the JSON-RPC 2.0 ones and the service's own, shared with the client in
/// `depositkit-core` so the two sides cannot disagree (documented in `docs/user-rpc.md`).
pub mod codes {
    pub use depositkit_core::users::codes::*;
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error without `data`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError { code, message: message.into(), data: None }
    }

    /// The same error with `data`.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32700 for a body that is not JSON; `detail` is the parser's complaint.
    pub fn parse_error(detail: &str) -> Self {
        RpcError::new(codes::PARSE_ERROR, "parse error").with_data(json!({ "detail": detail }))
    }

    /// -32600 saying what is wrong with the request.
    pub fn invalid_request(what: impl Into<String>) -> Self {
        RpcError::new(codes::INVALID_REQUEST, format!("invalid request: {}", what.into()))
    }

    /// -32602 about positional parameter `index`.
    pub fn invalid_param(index: usize, what: impl Into<String>) -> Self {
        RpcError::new(codes::INVALID_PARAMS, what).with_data(json!({ "param": index }))
    }

    /// -32603, without details (they go to the server's stderr).
    pub fn internal() -> Self {
        RpcError::new(codes::INTERNAL_ERROR, "internal error")
    }
}

/// The params of a valid request (JSON-RPC 2.0 §4.2): positional (an array; an omitted `params`
/// is no positional params) or by name (an object). Which shapes a method takes is the method's
/// business: a known method given a shape it does not take answers -32602, an unknown method
/// -32601 whatever the shape.
#[derive(Debug, Clone, PartialEq)]
pub enum Params {
    Positional(Vec<Value>),
    ByName(Map<String, Value>),
}

impl Params {
    /// The positional params, or `None` for by-name params.
    pub fn positional(&self) -> Option<&[Value]> {
        match self {
            Params::Positional(params) => Some(params),
            Params::ByName(_) => None,
        }
    }
}

/// A valid request: `id` is `None` for a notification.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub id: Option<Value>,
    pub method: String,
    pub params: Params,
}

/// A success response echoing `id`.
pub fn success(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// An error response echoing `id` (`null` when it could not be read).
pub fn failure(id: &Value, error: RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

/// Whether `id` is an allowed request id: an integer, a string or null.
pub fn valid_id(id: &Value) -> bool {
    match id {
        Value::Null | Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// The id to put into an error about `value`: its id when it is a valid one, else null.
pub fn id_of(value: &Value) -> Value {
    match value.get("id") {
        Some(id) if valid_id(id) => id.clone(),
        _ => Value::Null,
    }
}

/// Validates one request object.
///
/// # Errors
/// The id to answer with (null when unreadable) and the -32600 error.
pub fn parse_request(value: &Value) -> Result<Request, (Value, RpcError)> {
    let Value::Object(object) = value else {
        return Err((Value::Null, RpcError::invalid_request("a request must be a JSON object")));
    };
    let id = match object.get("id") {
        Some(id) if !valid_id(id) => {
            return Err((
                Value::Null,
                RpcError::invalid_request("\"id\" must be an integer, a string or null"),
            ));
        }
        id => id.cloned(),
    };
    let reply_id = id.clone().unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((reply_id, RpcError::invalid_request("\"jsonrpc\" must be \"2.0\"")));
    }
    let method = match object.get("method") {
        Some(Value::String(m)) => m.clone(),
        Some(_) => {
            return Err((reply_id, RpcError::invalid_request("\"method\" must be a string")));
        }
        None => return Err((reply_id, RpcError::invalid_request("\"method\" is missing"))),
    };
    // Only the shape is checked here: whether the method exists, and whether it takes params of
    // this shape, is up to `call` (so an unknown method is -32601 whatever its params are).
    let params = match object.get("params") {
        None => Params::Positional(Vec::new()),
        Some(Value::Array(params)) => Params::Positional(params.clone()),
        Some(Value::Object(params)) => Params::ByName(params.clone()),
        Some(_) => {
            return Err((
                reply_id,
                RpcError::invalid_request(
                    "\"params\" must be an array (positional) or an object (by name)",
                ),
            ));
        }
    };
    Ok(Request { id, method, params })
}

/// What runs the methods of a service.
pub trait Methods: Sync {
    /// Runs `method` with `params`: -32601 for an unknown method (before looking at the
    /// params), -32602 for params it does not take.
    fn call(
        &self,
        method: &str,
        params: &Params,
    ) -> impl Future<Output = Result<Value, RpcError>> + Send;
}

/// Answers a parsed body: one request or a batch (its calls run one after the other, in order).
/// Returns `None` when nothing is to be sent back (a notification, or a batch of only
/// notifications).
pub async fn handle(body: &Value, methods: &impl Methods) -> Option<Value> {
    match body {
        Value::Array(batch) if batch.is_empty() => {
            Some(failure(&Value::Null, RpcError::invalid_request("empty batch")))
        }
        Value::Array(batch) => {
            let mut replies = Vec::new();
            for one in batch {
                replies.extend(handle_one(one, methods).await);
            }
            (!replies.is_empty()).then_some(Value::Array(replies))
        }
        one => handle_one(one, methods).await,
    }
}

async fn handle_one(value: &Value, methods: &impl Methods) -> Option<Value> {
    let request = match parse_request(value) {
        Ok(request) => request,
        Err((id, error)) => return Some(failure(&id, error)),
    };
    let outcome = methods.call(&request.method, &request.params).await;
    Some(reply(&request.id?, outcome))
}

/// The response to a call with `id` that ended with `outcome`.
pub fn reply(id: &Value, outcome: Result<Value, RpcError>) -> Value {
    match outcome {
        Ok(result) => success(id, result),
        Err(error) => failure(id, error),
    }
}

/// The method names of a body, for the request log (never the params: they hold tokens).
/// Names are cut to 64 characters and anything but printable ASCII becomes `?`, so a request
/// cannot forge log lines.
pub fn method_names(body: &Value) -> Vec<String> {
    let name = |v: &Value| log_name(v.get("method").and_then(Value::as_str).unwrap_or("?"));
    match body {
        Value::Array(batch) => batch.iter().map(name).collect(),
        one => vec![name(one)],
    }
}

/// A method name as [`method_names`] logs it.
pub fn log_name(method: &str) -> String {
    method.chars().take(64).map(|c| if c.is_ascii_graphic() { c } else { '?' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;

    impl Methods for Echo {
        async fn call(&self, method: &str, params: &Params) -> Result<Value, RpcError> {
            echo(method, params)
        }
    }

    /// [`handle`] with [`echo`], run to completion.
    fn handle(body: &Value, _echo: fn(&str, &Params) -> Result<Value, RpcError>) -> Option<Value> {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(super::handle(body, &Echo))
    }

    /// `echo` takes positional params only; `named` takes both shapes.
    fn echo(method: &str, params: &Params) -> Result<Value, RpcError> {
        match (method, params) {
            ("echo", Params::Positional(params)) => Ok(Value::Array(params.clone())),
            ("echo", Params::ByName(_)) => {
                Err(RpcError::new(codes::INVALID_PARAMS, "echo takes positional params"))
            }
            ("named", Params::Positional(params)) => Ok(json!({ "positional": params })),
            ("named", Params::ByName(params)) => Ok(json!({ "byName": params })),
            _ => Err(RpcError::new(codes::METHOD_NOT_FOUND, format!("method {method} not found"))),
        }
    }

    #[test]
    fn echoes_ids_exactly() {
        for id in [json!(7), json!("abc"), json!(null), json!(-3), json!(u64::MAX)] {
            let reply = handle(
                &json!({"jsonrpc": "2.0", "id": id, "method": "echo", "params": ["x"]}),
                echo,
            )
            .unwrap();
            assert_eq!(reply, json!({"jsonrpc": "2.0", "id": id, "result": ["x"]}));
        }
    }

    #[test]
    fn rejects_invalid_envelopes() {
        let cases = [
            (json!(5), json!(null), "must be a JSON object"),
            (
                json!({"jsonrpc": "1.0", "id": 1, "method": "echo"}),
                json!(1),
                "\"jsonrpc\" must be \"2.0\"",
            ),
            (json!({"jsonrpc": "2.0", "id": 1}), json!(1), "\"method\" is missing"),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": 3}),
                json!(1),
                "\"method\" must be a string",
            ),
            (json!({"jsonrpc": "2.0", "id": 1.5, "method": "echo"}), json!(null), "\"id\" must be"),
            (json!({"jsonrpc": "2.0", "id": [1], "method": "echo"}), json!(null), "\"id\" must be"),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": "a"}),
                json!(1),
                "\"params\" must be an array (positional) or an object (by name)",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": 3}),
                json!(1),
                "\"params\" must be an array",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": true}),
                json!(1),
                "\"params\" must be an array",
            ),
            // A present `params` must be structured; null is not (omit it instead).
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": null}),
                json!(1),
                "\"params\" must be an array",
            ),
            // The shape is checked before the method is looked up.
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": "nope", "params": "a"}),
                json!(1),
                "\"params\" must be an array",
            ),
            // Invalid requests are answered even without an id.
            (json!({"jsonrpc": "2.0", "method": 1}), json!(null), "\"method\" must be a string"),
        ];
        for (request, id, message) in cases {
            let reply = handle(&request, echo).unwrap();
            assert_eq!(reply["id"], id, "{request}");
            assert_eq!(reply["error"]["code"], codes::INVALID_REQUEST, "{request}");
            let text = reply["error"]["message"].as_str().unwrap();
            assert!(text.contains(message), "{text} lacks {message}");
        }
    }

    #[test]
    fn by_name_params_reach_the_method() {
        let call = |request: Value| handle(&request, echo).unwrap();
        let named = call(json!({"jsonrpc": "2.0", "id": 1, "method": "named", "params": {"a": 1}}));
        assert_eq!(named, json!({"jsonrpc": "2.0", "id": 1, "result": {"byName": {"a": 1}}}));
        let empty = call(json!({"jsonrpc": "2.0", "id": 2, "method": "named", "params": {}}));
        assert_eq!(empty["result"], json!({"byName": {}}));
        let omitted = call(json!({"jsonrpc": "2.0", "id": 3, "method": "named"}));
        assert_eq!(omitted["result"], json!({"positional": []}));
        // A method that takes positional params only: -32602.
        let positional = call(json!({"jsonrpc": "2.0", "id": 4, "method": "echo", "params": {}}));
        assert_eq!(positional["id"], 4);
        assert_eq!(positional["error"]["code"], codes::INVALID_PARAMS);
        // An unknown method: -32601, whatever the params.
        let unknown =
            call(json!({"jsonrpc": "2.0", "id": 5, "method": "nope", "params": {"a": [1]}}));
        assert_eq!(unknown["id"], 5);
        assert_eq!(unknown["error"]["code"], codes::METHOD_NOT_FOUND);
        // By-name notifications run and get no reply.
        assert_eq!(handle(&json!({"jsonrpc": "2.0", "method": "named", "params": {}}), echo), None);
        assert_eq!(handle(&json!({"jsonrpc": "2.0", "method": "echo", "params": {}}), echo), None);
        assert_eq!(handle(&json!({"jsonrpc": "2.0", "method": "nope", "params": {}}), echo), None);
    }

    #[test]
    fn logged_method_names_are_sanitized() {
        let body = json!([{"method": "getUserInfo"}, {"method": "a\nforged line"}, {}]);
        assert_eq!(method_names(&body), ["getUserInfo", "a?forged?line", "?"]);
    }

    #[test]
    fn notifications_and_batches() {
        assert_eq!(handle(&json!({"jsonrpc": "2.0", "method": "echo"}), echo), None);
        assert_eq!(handle(&json!({"jsonrpc": "2.0", "method": "nope"}), echo), None);
        let empty = handle(&json!([]), echo).unwrap();
        assert_eq!(empty["error"]["code"], codes::INVALID_REQUEST);
        assert!(empty["id"].is_null());
        let all_notes =
            json!([{"jsonrpc": "2.0", "method": "echo"}, {"jsonrpc": "2.0", "method": "echo"}]);
        assert_eq!(handle(&all_notes, echo), None);
        let mixed = json!([
            {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": ["a"]},
            {"jsonrpc": "2.0", "method": "echo"},
            {"jsonrpc": "2.0", "id": "b", "method": "nope"},
            7
        ]);
        let replies = handle(&mixed, echo).unwrap();
        let replies = replies.as_array().unwrap();
        assert_eq!(replies.len(), 3);
        assert_eq!(replies[0]["result"], json!(["a"]));
        assert_eq!(replies[1]["error"]["code"], codes::METHOD_NOT_FOUND);
        assert_eq!(replies[2]["error"]["code"], codes::INVALID_REQUEST);
    }
}
