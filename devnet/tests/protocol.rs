//! JSON-RPC 2.0 envelopes and HTTP-level rules over real HTTP.

mod common;

use common::*;
use depositkit_devnet::codes;
use serde_json::{Value, json};

#[test]
fn malformed_json_is_a_parse_error_with_null_id() {
    let f = Fixture::start();
    for body in ["{\"jsonrpc\": \"2.0\", \"id\": 1, ", "", "nope", "{\"id\": 1}}"] {
        let reply = f.post(body);
        assert_eq!(reply.status, 200, "{body:?}: {}", reply.body);
        let response = reply.json();
        expect_error(&response, codes::PARSE_ERROR);
        assert_eq!(response["id"], Value::Null);
        assert_eq!(response["error"]["message"], "parse error");
    }
}

#[test]
fn invalid_requests() {
    let f = Fixture::start();
    let cases = [
        (json!({"jsonrpc": "1.0", "id": 1, "method": "isProjectUser", "params": []}), json!(1)),
        (json!({"id": 2, "method": "isProjectUser", "params": []}), json!(2)),
        (json!({"jsonrpc": "2.0", "id": 3, "params": []}), json!(3)),
        (json!({"jsonrpc": "2.0", "id": 4, "method": 7}), json!(4)),
        (
            json!({"jsonrpc": "2.0", "id": 6, "method": "isProjectUser", "params": "solana"}),
            json!(6),
        ),
        (json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "isProjectUser"}), Value::Null),
        (json!({"jsonrpc": "2.0", "id": true, "method": "isProjectUser"}), Value::Null),
        (json!({"jsonrpc": "2.0", "id": 1.5, "method": "isProjectUser"}), Value::Null),
        (json!("just a string"), Value::Null),
        (json!(17), Value::Null),
    ];
    for (request, id) in cases {
        let reply = f.post(&request.to_string());
        assert_eq!(reply.status, 200);
        let response = reply.json();
        expect_error(&response, codes::INVALID_REQUEST);
        assert_eq!(response["id"], id, "{request}");
    }
}

#[test]
fn ids_are_echoed_exactly() {
    let f = Fixture::start();
    for id in [
        json!(0),
        json!(-12),
        json!(9_007_199_254_740_993_u64),
        json!("req-1"),
        json!(""),
        Value::Null,
    ] {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "isProjectUser", "params": ["solana", SOL_A]});
        let response = f.post(&request.to_string()).json();
        assert_eq!(response, json!({"jsonrpc": "2.0", "id": id, "result": true}));
    }
    // Large integers keep every digit on the wire.
    let reply = f.post(r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"isProjectUser","params":["solana","11111111111111111111111111111111"]}"#);
    assert!(reply.body.contains("18446744073709551615"), "{}", reply.body);
}

#[test]
fn notifications_get_no_response() {
    let f = Fixture::start();
    for body in [
        json!({"jsonrpc": "2.0", "method": "isProjectUser", "params": ["solana", SOL_A]}),
        json!({"jsonrpc": "2.0", "method": "noSuchMethod"}),
        json!({"jsonrpc": "2.0", "method": "getUserInfo", "params": [1]}),
    ] {
        let reply = f.post(&body.to_string());
        assert_eq!(reply.status, 204, "{body}: {}", reply.body);
        assert!(reply.body.is_empty());
    }
}

#[test]
fn batches() {
    let f = Fixture::start();
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "isProjectUser", "params": ["solana", SOL_A]},
        {"jsonrpc": "2.0", "method": "isProjectUser", "params": ["solana", SOL_A]},
        {"jsonrpc": "2.0", "id": "two", "method": "getUserInfo", "params": [f.a.user, f.a.token]},
        {"jsonrpc": "2.0", "id": 3, "method": "nope"},
        {"jsonrpc": "2.0", "id": 4, "method": "isProjectUser", "params": ["btc", "x"]},
        5,
        {"jsonrpc": "2.0", "id": 6, "method": "getUserInfoByIdentity", "params": ["jwt", f.a.jwt_uid]},
    ]);
    let reply = f.post(&batch.to_string());
    assert_eq!(reply.status, 200);
    let responses = reply.json();
    let responses = responses.as_array().unwrap();
    assert_eq!(responses.len(), 6, "{responses:?}");
    assert_eq!(responses[0], json!({"jsonrpc": "2.0", "id": 1, "result": true}));
    assert_eq!(responses[1]["id"], "two");
    assert_eq!(responses[1]["result"]["uuid"], f.a.user);
    expect_error(&responses[2], codes::METHOD_NOT_FOUND);
    expect_error(&responses[3], codes::INVALID_PARAMS);
    expect_error(&responses[4], codes::INVALID_REQUEST);
    assert_eq!(responses[4]["id"], Value::Null);
    assert_eq!(responses[5]["result"]["uuid"], f.a.user);
}

#[test]
fn empty_and_all_notification_batches() {
    let f = Fixture::start();
    let reply = f.post("[]");
    assert_eq!(reply.status, 200);
    let response = reply.json();
    assert!(response.is_object(), "an empty batch gets one error, not an array: {response}");
    expect_error(&response, codes::INVALID_REQUEST);
    assert_eq!(response["id"], Value::Null);

    let notes = json!([
        {"jsonrpc": "2.0", "method": "isProjectUser", "params": ["solana", SOL_A]},
        {"jsonrpc": "2.0", "method": "getUserInfo", "params": []},
    ]);
    let reply = f.post(&notes.to_string());
    assert_eq!(reply.status, 204);
    assert!(reply.body.is_empty());
}

#[test]
fn oversize_bodies_get_413() {
    let f = Fixture::start_with(|mut config| {
        config.max_body_bytes = 1024;
        config
    });
    let padding = "x".repeat(2000);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "isProjectUser", "params": ["solana", padding]}).to_string();
    let reply = f.post(&body);
    assert_eq!(reply.status, 413);
    let response = reply.json();
    let error = expect_error(&response, codes::INVALID_REQUEST);
    assert_eq!(error["message"], "request too large");
    assert_eq!(error["data"]["maxBodyBytes"], 1024);

    // Just under the limit is fine.
    let small =
        json!({"jsonrpc": "2.0", "id": 1, "method": "isProjectUser", "params": ["solana", SOL_A]});
    assert_eq!(f.post(&small.to_string()).status, 200);
}

#[test]
fn default_limit_is_one_mebibyte() {
    let f = Fixture::start();
    let padding = "x".repeat(1024 * 1024);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "isProjectUser", "params": ["solana", padding]}).to_string();
    assert_eq!(f.post(&body).status, 413);
}

#[test]
fn wrong_http_method_and_content_type() {
    let f = Fixture::start();
    let url = f.devnet.user_rpc_url();
    let reply = get(&f.agent, &url);
    assert_eq!(reply.status, 405);
    assert_eq!(reply.header("allow"), Some("POST"));
    expect_error(&reply.json(), codes::INVALID_REQUEST);

    let auth = basic(&f.a.project_id, &f.a.server_key);
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "isProjectUser", "params": ["solana", SOL_A]})
            .to_string();
    for content_type in [Some("text/plain"), Some("application/x-www-form-urlencoded"), None] {
        let reply = post(&f.agent, &url, Some(&auth), content_type, &body);
        assert_eq!(reply.status, 415, "{content_type:?}");
        let error = expect_error(&reply.json(), codes::INVALID_REQUEST).clone();
        assert!(error["message"].as_str().unwrap().contains("application/json"));
    }
    let reply = post(&f.agent, &url, Some(&auth), Some("Application/JSON; charset=utf-8"), &body);
    assert_eq!(reply.status, 200);
}

#[test]
fn health_and_unknown_paths() {
    let f = Fixture::start();
    let reply = get(&f.agent, &format!("{}/devnet/health", f.devnet.base_url()));
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json(), json!({"status": "ok"}));
    let reply = get(&f.agent, &format!("{}/nope", f.devnet.base_url()));
    assert_eq!(reply.status, 404);
    assert!(reply.json()["hint"].as_str().unwrap().contains("/user-rpc"));
}
