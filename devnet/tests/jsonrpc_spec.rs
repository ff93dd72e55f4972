//! The examples of the JSON-RPC 2.0 specification (§7), adapted to the user-lookup methods, over
//! real HTTP against a devnet on loopback (issue 20: by-name params). The three methods take
//! positional params, so the spec's by-name call answers -32602 here; an unknown method is -32601
//! whatever its params.

mod common;

use common::*;
use depositkit_devnet::codes;
use serde_json::{Value, json};

/// POSTs `body` as project `a`; asserts HTTP 200 and returns the JSON answer.
fn answer(f: &Fixture, body: &str) -> Value {
    let reply = f.post(body);
    assert_eq!(reply.status, 200, "{body}: {}", reply.body);
    reply.json()
}

/// Asserts an error response with `code` and `id`, and returns its error object.
fn expect_error_with_id(response: &Value, code: i64, id: &Value) -> Value {
    assert_eq!(response["jsonrpc"], "2.0", "{response}");
    let error = expect_error(response, code).clone();
    assert_eq!(&response["id"], id, "{response}");
    assert!(error["message"].is_string(), "{response}");
    error
}

/// Asserts that `body` is answered with HTTP 204 and no body (a notification).
fn expect_no_response(f: &Fixture, body: &str) {
    let reply = f.post(body);
    assert_eq!(reply.status, 204, "{body}: {}", reply.body);
    assert_eq!(reply.body, "", "{body}");
}

#[test]
fn call_with_positional_params() {
    let f = Fixture::start();
    let reply = answer(
        &f,
        &json!({"jsonrpc": "2.0", "method": "isProjectUser", "params": ["solana", SOL_A], "id": 1})
            .to_string(),
    );
    assert_eq!(reply, json!({"jsonrpc": "2.0", "result": true, "id": 1}));
    let reply = answer(
        &f,
        &json!({"jsonrpc": "2.0", "method": "isProjectUser", "params": ["evm_chain", EVM_UNKNOWN], "id": 2})
            .to_string(),
    );
    assert_eq!(reply, json!({"jsonrpc": "2.0", "result": false, "id": 2}));
    let reply = answer(
        &f,
        &json!({"jsonrpc": "2.0", "method": "getUserInfo", "params": [f.a.user, f.a.token], "id": "u"})
            .to_string(),
    );
    assert_eq!(reply["id"], "u");
    assert_eq!(reply["result"]["uuid"], f.a.user.as_str());
}

#[test]
fn call_with_by_name_params_is_invalid_params_for_the_positional_methods() {
    let f = Fixture::start();
    let cases = [
        (json!(3), "isProjectUser", json!({"chain": "solana", "address": SOL_A}), 2),
        (json!("4"), "getUserInfo", json!({"uuid": f.a.user, "token": f.a.token}), 2),
        (json!(null), "getUserInfoByIdentity", json!({"provider": "jwt", "uid": f.a.jwt_uid}), 2),
        // Even an empty object, and an object with the wrong names.
        (json!(6), "isProjectUser", json!({}), 2),
        (json!(7), "getUserInfo", json!({"subtrahend": 23, "minuend": 42}), 2),
    ];
    for (id, method, params, expected) in cases {
        let body = json!({"jsonrpc": "2.0", "method": method, "params": params, "id": id});
        let reply = f.post(&body.to_string());
        assert_eq!(reply.status, 200, "{body}: {}", reply.body);
        // The object is caller input (here a session token): it is never echoed.
        assert!(!reply.body.contains(&f.a.token), "{}", reply.body);
        let error = expect_error_with_id(&reply.json(), codes::INVALID_PARAMS, &id);
        let message = error["message"].as_str().unwrap();
        assert!(message.starts_with(&format!("{method} takes positional params [")), "{message}");
        assert!(message.contains("not by-name params"), "{message}");
        assert_eq!(error["data"]["expected"], expected, "{error}");
    }
}

#[test]
fn notifications_get_no_response() {
    let f = Fixture::start();
    for body in [
        json!({"jsonrpc": "2.0", "method": "isProjectUser", "params": ["solana", SOL_A]}),
        json!({"jsonrpc": "2.0", "method": "foobar"}),
        // Notifications with by-name params, known method or not.
        json!({"jsonrpc": "2.0", "method": "isProjectUser", "params": {"chain": "solana"}}),
        json!({"jsonrpc": "2.0", "method": "foobar", "params": {"name": "myself"}}),
    ] {
        expect_no_response(&f, &body.to_string());
    }
}

#[test]
fn non_existent_method() {
    let f = Fixture::start();
    let reply = answer(&f, r#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#);
    let error = expect_error_with_id(&reply, codes::METHOD_NOT_FOUND, &json!("1"));
    assert_eq!(
        error["data"]["methods"],
        json!(["getUserInfo", "getUserInfoByIdentity", "isProjectUser"])
    );
    // The method is looked up before the params' shape: by-name params to an unknown method are
    // -32601, not -32602.
    let reply = answer(
        &f,
        r#"{"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": 5}"#,
    );
    expect_error_with_id(&reply, codes::METHOD_NOT_FOUND, &json!(5));
    let reply = answer(&f, r#"{"jsonrpc": "2.0", "method": "foo.get", "params": [], "id": null}"#);
    expect_error_with_id(&reply, codes::METHOD_NOT_FOUND, &Value::Null);
}

#[test]
fn error_messages_stay_bounded() {
    let f = Fixture::start();
    let long = "x".repeat(100_000);
    let cases = [
        (
            json!({"jsonrpc": "2.0", "method": long, "params": {long.as_str(): long}, "id": 1}),
            codes::METHOD_NOT_FOUND,
        ),
        (
            json!({"jsonrpc": "2.0", "method": "getUserInfo", "params": {long.as_str(): long}, "id": 1}),
            codes::INVALID_PARAMS,
        ),
        (
            json!({"jsonrpc": "2.0", "method": "getUserInfo", "params": long, "id": 1}),
            codes::INVALID_REQUEST,
        ),
    ];
    for (body, code) in cases {
        let reply = f.post(&body.to_string());
        assert_eq!(reply.status, 200);
        assert!(reply.body.len() < 1000, "{} bytes", reply.body.len());
        expect_error_with_id(&reply.json(), code, &json!(1));
    }
}

#[test]
fn invalid_json_is_a_parse_error_with_null_id() {
    let f = Fixture::start();
    let reply = answer(&f, r#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#);
    let error = expect_error_with_id(&reply, codes::PARSE_ERROR, &Value::Null);
    assert_eq!(error["message"], "parse error");
}

#[test]
fn invalid_request_object() {
    let f = Fixture::start();
    let reply = answer(&f, r#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#);
    expect_error_with_id(&reply, codes::INVALID_REQUEST, &Value::Null);
    // `params`, when present, must be structured (an array or an object): anything else is
    // -32600 — for a known method, an unknown one, and in a notification too.
    for (params, method) in [
        (json!("bar"), "isProjectUser"),
        (json!(42), "isProjectUser"),
        (json!(true), "getUserInfo"),
        (json!(null), "getUserInfoByIdentity"),
        (json!("bar"), "foobar"),
    ] {
        let reply = answer(
            &f,
            &json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 8}).to_string(),
        );
        let error = expect_error_with_id(&reply, codes::INVALID_REQUEST, &json!(8));
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(r#""params" must be an array"#), "{message}");
        let reply =
            answer(&f, &json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string());
        expect_error_with_id(&reply, codes::INVALID_REQUEST, &Value::Null);
    }
}

#[test]
fn batch_with_invalid_json() {
    let f = Fixture::start();
    let reply = answer(
        &f,
        r#"[
            {"jsonrpc": "2.0", "method": "isProjectUser", "params": ["solana", "x"], "id": "1"},
            {"jsonrpc": "2.0", "method"
        ]"#,
    );
    assert!(reply.is_object(), "{reply}");
    expect_error_with_id(&reply, codes::PARSE_ERROR, &Value::Null);
}

#[test]
fn empty_batch_is_one_invalid_request() {
    let f = Fixture::start();
    let reply = answer(&f, "[]");
    assert!(reply.is_object(), "an empty batch is answered with one object, not an array: {reply}");
    expect_error_with_id(&reply, codes::INVALID_REQUEST, &Value::Null);
}

#[test]
fn batches_of_non_requests() {
    let f = Fixture::start();
    for (body, n) in [("[1]", 1), ("[1,2,3]", 3)] {
        let reply = answer(&f, body);
        let replies = reply.as_array().unwrap_or_else(|| panic!("{body}: not an array: {reply}"));
        assert_eq!(replies.len(), n, "{reply}");
        for one in replies {
            expect_error_with_id(one, codes::INVALID_REQUEST, &Value::Null);
        }
    }
}

#[test]
fn mixed_batch() {
    let f = Fixture::start();
    let body = json!([
        {"jsonrpc": "2.0", "method": "isProjectUser", "params": ["solana", SOL_A], "id": "1"},
        {"jsonrpc": "2.0", "method": "isProjectUser", "params": ["evm_chain", EVM_A]},
        {"jsonrpc": "2.0", "method": "getUserInfoByIdentity", "params": ["jwt", f.a.jwt_uid], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "getUserInfo", "params": {"uuid": f.a.user, "token": f.a.token}, "id": "7"},
        {"jsonrpc": "2.0", "method": "getUserInfo", "params": [f.a.user, f.a.token], "id": "9"}
    ]);
    let reply = answer(&f, &body.to_string());
    let replies = reply.as_array().unwrap_or_else(|| panic!("not an array: {reply}"));
    // Responses to the six non-notifications, in request order.
    assert_eq!(replies.len(), 6, "{reply}");
    assert_eq!(replies[0], json!({"jsonrpc": "2.0", "result": true, "id": "1"}));
    assert_eq!(replies[1]["id"], "2");
    assert_eq!(replies[1]["result"]["uuid"], f.a.user.as_str(), "{}", replies[1]);
    expect_error_with_id(&replies[2], codes::INVALID_REQUEST, &Value::Null);
    expect_error_with_id(&replies[3], codes::METHOD_NOT_FOUND, &json!("5"));
    expect_error_with_id(&replies[4], codes::INVALID_PARAMS, &json!("7"));
    assert_eq!(replies[5]["id"], "9");
    assert_eq!(replies[5]["result"]["uuid"], f.a.user.as_str(), "{}", replies[5]);
}

#[test]
fn batch_of_notifications_gets_no_response() {
    let f = Fixture::start();
    let body = json!([
        {"jsonrpc": "2.0", "method": "isProjectUser", "params": ["solana", SOL_A]},
        {"jsonrpc": "2.0", "method": "getUserInfo", "params": {"uuid": f.a.user}},
        {"jsonrpc": "2.0", "method": "foobar", "params": {"name": "myself"}}
    ]);
    expect_no_response(&f, &body.to_string());
}

#[test]
fn by_name_params_still_need_credentials() {
    let f = Fixture::start();
    let body = json!({"jsonrpc": "2.0", "method": "isProjectUser", "params": {"chain": "solana"}, "id": 11});
    let url = f.devnet.user_rpc_url();
    for auth in [None, Some(basic(&f.a.project_id, "sk_wrong"))] {
        let reply =
            post(&f.agent, &url, auth.as_deref(), Some("application/json"), &body.to_string());
        assert_eq!(reply.status, 401, "{}", reply.body);
        expect_error_with_id(&reply.json(), codes::UNAUTHORIZED, &json!(11));
    }
}
