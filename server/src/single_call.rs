//! The common request — one JSON-RPC call with two string params, as every method of the
//! service takes — read into borrowed fields instead of a `serde_json::Value` tree, and its
//! success written straight into the response bytes (issue 19, `docs/benchmarks.md`).
//!
//! It only skips work: a body it does not take (a batch, by-name params, a param that is not a
//! string or has escapes, a duplicate key, an invalid envelope, …) goes the general way
//! ([`crate::rpc`]), and for a body it takes, the general way gives the same bytes (tested in
//! `tests/rpc_contract.rs`).

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::rpc;

/// A single call: `{"jsonrpc": "2.0", "id": …, "method": "…", "params": ["…", "…"]}`, its id
/// (when present) a valid one, its strings without escapes.
#[derive(Debug, Deserialize)]
pub struct SingleCall<'a> {
    jsonrpc: &'a str,
    /// `None`: a notification; `Some(Value::Null)`: the id `null`.
    #[serde(default, deserialize_with = "present")]
    pub id: Option<Value>,
    pub method: &'a str,
    #[serde(borrow)]
    pub params: [&'a str; 2],
}

/// A present field, even `null`: `Some` (an absent one is `None` by `default`).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl<'a> SingleCall<'a> {
    /// The call `body` is, or `None` when it is anything else.
    pub fn parse(body: &'a [u8]) -> Option<Self> {
        // serde_json would also read a struct from an array: a batch is not a call.
        if body.trim_ascii_start().first() != Some(&b'{') {
            return None;
        }
        let call: SingleCall<'a> = serde_json::from_slice(body).ok()?;
        let valid = call.jsonrpc == "2.0" && call.id.as_ref().is_none_or(rpc::valid_id);
        valid.then_some(call)
    }
}

/// The success response to the call with `id`: what `rpc::success(id, result)` prints.
///
/// # Errors
/// What `result`'s serialization returns.
pub fn success_bytes(id: &Value, result: &impl Serialize) -> serde_json::Result<Vec<u8>> {
    /// The keys in sorted order, as `serde_json`'s map prints them.
    #[derive(Serialize)]
    struct Success<'a, T> {
        id: &'a Value,
        jsonrpc: &'static str,
        result: &'a T,
    }
    let mut bytes = Vec::with_capacity(1024);
    serde_json::to_writer(&mut bytes, &Success { id, jsonrpc: "2.0", result })?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn takes_single_calls_with_two_plain_strings_only() {
        let call =
            SingleCall::parse(br#" {"jsonrpc":"2.0","id":"a","method":"m","params":["x","y"]}"#)
                .unwrap();
        assert_eq!((call.id, call.method, call.params), (Some(json!("a")), "m", ["x", "y"]));
        let note = SingleCall::parse(br#"{"jsonrpc":"2.0","method":"m","params":["x","y"]}"#);
        assert_eq!(note.unwrap().id, None);
        let null =
            SingleCall::parse(br#"{"jsonrpc":"2.0","id":null,"method":"m","params":["x","y"]}"#);
        assert_eq!(null.unwrap().id, Some(Value::Null));
        for other in [
            r#"["2.0",1,"m",["x","y"]]"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"m","params":["x","y"]}]"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"m","params":["x","y"]}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m","params":["x","y"]}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"m","params":["x","y"]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":["x"]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":["x","y","z"]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":["x",2]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":["x\n","y"]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"x","b":"y"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m","params":["x","y"]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":["x","y"]} x"#,
        ] {
            assert!(SingleCall::parse(other.as_bytes()).is_none(), "{other}");
        }
    }

    #[test]
    fn success_is_printed_as_its_value_would_be() {
        for id in [json!(7), json!(-3), json!(u64::MAX), json!("a\"b\u{e9}"), Value::Null] {
            let result = json!({"b": [1, "x"], "a": null});
            let bytes = success_bytes(&id, &result).unwrap();
            assert_eq!(String::from_utf8(bytes).unwrap(), rpc::success(&id, result).to_string());
        }
    }
}
