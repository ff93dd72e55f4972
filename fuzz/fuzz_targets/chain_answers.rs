//! A chain node's JSON-RPC answers, read as the EVM and Solana clients read them: the envelope
//! (`result` or `error`), then the result as a quantity, a receipt, logs, token accounts and a
//! signature (`core/src/chain/`).
//!
//! Input: byte 0 picks the HTTP status; the rest, as UTF-8 (lossily), is the body.
//! Properties: no panic; a `result` is taken only from a JSON object without an `error`; a
//! node's error object is an `Rpc` error; no message shows the node URL's path (RPC URLs carry
//! API keys there); a quantity re-encodes to the same value; a token account's raw amount is
//! the decimal string sent; a receipt keeps every log it was sent.
#![no_main]

use depositkit_core::ErrorKind;
use depositkit_core::chain::evm::quantity;
use depositkit_core::chain::read_answer_for_fuzzing;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const STATUSES: [u16; 8] = [200, 200, 200, 201, 400, 429, 500, 503];

fuzz_target!(|data: &[u8]| {
    let [s, rest @ ..] = data else { return };
    let status = STATUSES[usize::from(*s) % STATUSES.len()];
    let body = String::from_utf8_lossy(rest).into_owned();
    let json: Option<Value> = serde_json::from_str(&body).ok();
    let answer = read_answer_for_fuzzing(status, &body);
    match &answer.envelope {
        Ok(result) => {
            let object = json.as_ref().and_then(Value::as_object).expect("a JSON object");
            assert!(object.get("error").is_none_or(Value::is_null));
            assert_eq!(object.get("result"), Some(result));
        }
        Err(err) => {
            // The path is shown only if the node itself sent it.
            if !body.contains("/key") {
                let message = err.message();
                assert!(!message.contains("/key"), "the URL's path leaked: {message}");
            }
            let node_error = json
                .as_ref()
                .and_then(|j| j.get("error"))
                .is_some_and(|e| !e.is_null());
            if err.kind() == ErrorKind::Rpc {
                assert!(node_error);
            }
        }
    }
    let result = answer.envelope.as_ref().ok();
    if let Some(q) = answer.quantity {
        let again = depositkit_core::chain::evm::quantity_u256("x", &Value::String(quantity(q)));
        assert_eq!(again.ok(), Some(q));
    }
    if let Some(receipt) = &answer.receipt {
        let sent = result.and_then(|r| r.get("logs")).and_then(Value::as_array).map_or(0, Vec::len);
        assert_eq!(receipt.logs.len(), sent);
    }
    if let Some(accounts) = &answer.token_accounts {
        let items = result.and_then(|r| r["value"].as_array()).expect("an array of accounts");
        for (account, item) in accounts.iter().zip(items) {
            let sent = item.pointer("/account/data/parsed/info/tokenAmount/amount");
            assert_eq!(sent.and_then(Value::as_str), Some(account.raw_amount.to_string().as_str()));
        }
    }
});
