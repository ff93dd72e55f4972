//! Every request the Particle JSON-RPC receives, kept in memory (the last [`CAPACITY`]) for tests
//! that compare what two clients send (`GET /devnet/particle/requests`,
//! `RunningDevnet::particle_requests`): the method, the params, the envelope's other fields and
//! the order of its keys, and the HTTP headers — without secrets: `projectClientKey` shows as
//! `"<redacted>"`, and headers that carry credentials (`Authorization`, `Cookie`, any name with
//! `key`, `secret`, `token` or `auth`) are left out.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Mutex, PoisonError};

use axum::http::HeaderMap;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value, json};

use super::rpc::Incoming;
use crate::time;

/// How many requests are kept (the oldest are dropped first).
pub const CAPACITY: usize = 2000;
/// What a secret is replaced by.
pub const REDACTED: &str = "<redacted>";

/// The log.
#[derive(Debug, Default)]
pub struct RequestLog {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: VecDeque<Value>,
    next_seq: u64,
    dropped: u64,
}

impl RequestLog {
    /// Records a request: its headers, its body and what was read from it.
    pub fn record(&self, headers: &HeaderMap, body: &[u8], incoming: &Incoming) {
        let mut entry = match incoming {
            Incoming::Request { request, body: fields } => {
                let mut envelope = Map::new();
                for (key, value) in fields {
                    let shown =
                        if key == "projectClientKey" { json!(REDACTED) } else { value.clone() };
                    envelope.insert(key.clone(), shown);
                }
                json!({
                    "method": request.method,
                    "params": fields.get("params").cloned().unwrap_or(Value::Null),
                    "envelope": envelope,
                    "bodyKeys": key_order(body),
                })
            }
            Incoming::Invalid { error, .. } => json!({ "method": null, "error": error }),
        };
        entry["headers"] = shown_headers(headers);
        entry["receivedAt"] = json!(time::now_ms());
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.next_seq += 1;
        entry["seq"] = json!(state.next_seq);
        if state.entries.len() == CAPACITY {
            state.entries.pop_front();
            state.dropped += 1;
        }
        state.entries.push_back(entry);
    }

    /// `{"requests": [...oldest first], "dropped": n}`.
    pub fn snapshot(&self) -> Value {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        json!({ "requests": state.entries, "dropped": state.dropped })
    }

    /// The recorded requests, oldest first.
    pub fn entries(&self) -> Vec<Value> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.entries.iter().cloned().collect()
    }

    /// Forgets every request (the sequence numbers go on).
    pub fn clear(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.entries.clear();
        state.dropped = 0;
    }
}

/// Headers every HTTP client sets its own way, left out of a [`shape`].
pub const TRANSPORT_HEADERS: [&str; 6] =
    ["host", "content-length", "connection", "user-agent", "accept", "accept-encoding"];

/// The shape of a logged request, to compare what two clients send for one operation: the
/// method; the body's keys in order; the params with each value replaced by its kind (`"0x"`
/// for `0x` hex, `"string"`, `"integer"`, `"number"`, `"boolean"`, `"null"`; objects key by key,
/// arrays element by element); and the headers other than [`TRANSPORT_HEADERS`] (names, with
/// `content-type`'s value). Volatile values (ids, device ids, amounts, addresses) drop out;
/// a missing, extra or differently typed field does not.
pub fn shape(entry: &Value) -> Value {
    fn kinds(value: &Value) -> Value {
        match value {
            Value::Null => json!("null"),
            Value::Bool(_) => json!("boolean"),
            Value::Number(n) if n.is_i64() || n.is_u64() => json!("integer"),
            Value::Number(_) => json!("number"),
            Value::String(s) if s.starts_with("0x") => json!("0x"),
            Value::String(_) => json!("string"),
            Value::Array(items) => Value::Array(items.iter().map(kinds).collect()),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), kinds(v))).collect())
            }
        }
    }
    let mut headers = Map::new();
    if let Some(Value::Object(all)) = entry.get("headers") {
        for (name, value) in all {
            if TRANSPORT_HEADERS.contains(&name.as_str()) {
                continue;
            }
            let shown = if name == "content-type" { value.clone() } else { json!(true) };
            headers.insert(name.clone(), shown);
        }
    }
    json!({
        "method": entry.get("method").cloned().unwrap_or(Value::Null),
        "bodyKeys": entry.get("bodyKeys").cloned().unwrap_or(Value::Null),
        "params": kinds(entry.get("params").unwrap_or(&Value::Null)),
        "headers": headers,
    })
}

/// Whether a header may carry a credential.
fn secret_header(name: &str) -> bool {
    ["authorization", "cookie", "key", "secret", "token", "auth"]
        .iter()
        .any(|word| name.contains(word))
}

/// The headers by lower-case name, secrets left out.
fn shown_headers(headers: &HeaderMap) -> Value {
    let mut shown = Map::new();
    for (name, value) in headers {
        let name = name.as_str().to_ascii_lowercase();
        if secret_header(&name) {
            continue;
        }
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        match shown.get_mut(&name) {
            Some(Value::String(existing)) => {
                existing.push_str(", ");
                existing.push_str(&value);
            }
            _ => {
                shown.insert(name, json!(value));
            }
        }
    }
    Value::Object(shown)
}

/// The top-level keys of a JSON object body, in the order they were sent.
fn key_order(body: &[u8]) -> Vec<String> {
    serde_json::from_slice::<KeyOrder>(body).map(|k| k.0).unwrap_or_default()
}

struct KeyOrder(Vec<String>);

impl<'de> Deserialize<'de> for KeyOrder {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = KeyOrder;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KeyOrder, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(KeyOrder(keys))
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn records_the_envelope_in_order_without_secrets() {
        let log = RequestLog::default();
        let body = concat!(
            r#"{"id":1,"jsonrpc":"2.0","method":"universal_getPrimaryAssets","#,
            r#""params":[{"ownerAddress":"0x1"}],"deviceId":"d","projectId":"p","#,
            r#""projectClientKey":"ck_secret"}"#
        )
        .as_bytes();
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        headers.insert("authorization", HeaderValue::from_static("Bearer x"));
        headers.insert("x-api-key", HeaderValue::from_static("k"));
        log.record(&headers, body, &Incoming::parse(body));
        log.record(&headers, b"{", &Incoming::parse(b"{"));
        let entries = log.entries();
        assert_eq!(entries.len(), 2);
        let first = &entries[0];
        assert_eq!(first["method"], "universal_getPrimaryAssets");
        assert_eq!(first["params"][0]["ownerAddress"], "0x1");
        assert_eq!(
            first["bodyKeys"],
            json!([
                "id",
                "jsonrpc",
                "method",
                "params",
                "deviceId",
                "projectId",
                "projectClientKey"
            ])
        );
        assert_eq!(first["envelope"]["projectClientKey"], REDACTED);
        assert_eq!(first["headers"], json!({ "content-type": "application/json" }));
        assert!(!first.to_string().contains("ck_secret"));
        assert_eq!((first["seq"].as_u64(), entries[1]["seq"].as_u64()), (Some(1), Some(2)));
        assert!(entries[1]["method"].is_null() && entries[1]["error"]["code"] == -32700);
        let shape = shape(first);
        assert_eq!(shape["params"], json!([{ "ownerAddress": "0x" }]));
        assert_eq!(shape["headers"], json!({ "content-type": "application/json" }));
        assert_eq!(shape["bodyKeys"], first["bodyKeys"]);
        log.clear();
        assert_eq!(log.snapshot()["requests"], json!([]));
    }
}
