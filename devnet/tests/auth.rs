//! Project credentials: every failure is HTTP 401 with a JSON-RPC error body and a challenge.

mod common;

use common::*;
use depositkit_devnet::codes;
use serde_json::json;

fn assert_unauthorized(reply: &Reply, id: serde_json::Value, reason: &str) {
    assert_eq!(reply.status, 401, "{}", reply.body);
    assert_eq!(reply.header("www-authenticate"), Some("Basic realm=\"depositkit-devnet\""));
    assert!(reply.header("content-type").unwrap().starts_with("application/json"));
    let body = reply.json();
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], id, "{body}");
    let error = expect_error(&body, codes::UNAUTHORIZED);
    assert_eq!(error["message"], "unauthorized");
    assert_eq!(error["data"]["reason"], reason);
}

#[test]
fn bad_credentials_get_401() {
    let f = Fixture::start();
    let url = f.devnet.user_rpc_url();
    let body =
        json!({"jsonrpc": "2.0", "id": 42, "method": "isProjectUser", "params": ["solana", SOL_A]})
            .to_string();
    let rejected = "unknown project id or wrong server key";
    let cases: Vec<(Option<String>, &str)> = vec![
        (Some(basic(&f.a.project_id, "sk_wrong")), rejected),
        // Project b's key does not open project a.
        (Some(basic(&f.a.project_id, &f.b.server_key)), rejected),
        (Some(basic("0b7c5a4e-3f1d-4c2a-9e8b-1a2b3c4d5e6f", &f.a.server_key)), rejected),
        (Some(basic("not-a-uuid", &f.a.server_key)), rejected),
        (Some(basic(&f.a.project_id, "")), rejected),
        (None, "missing Authorization header"),
        (Some(format!("Bearer {}", f.a.server_key)), "the Authorization scheme must be Basic"),
        (
            Some("Basic %%%not-base64%%%".into()),
            "the Basic credentials are not base64 of project_id:server_key",
        ),
        (
            Some(format!("Basic {}", base64_of("no-colon-here"))),
            "the Basic credentials are not base64 of project_id:server_key",
        ),
        (Some("Basic".into()), "the Basic credentials are not base64 of project_id:server_key"),
    ];
    for (auth, reason) in cases {
        let reply = post(&f.agent, &url, auth.as_deref(), Some("application/json"), &body);
        assert_unauthorized(&reply, json!(42), reason);
        assert!(!reply.body.contains(&f.a.server_key) && !reply.body.contains(&f.b.server_key));
    }
}

#[test]
fn unauthorized_bodies_use_a_null_id_when_the_request_has_none() {
    let f = Fixture::start();
    let url = f.devnet.user_rpc_url();
    for body in ["not json", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}]", "{\"id\": 1.5}"] {
        let reply = post(&f.agent, &url, None, Some("application/json"), body);
        assert_unauthorized(&reply, serde_json::Value::Null, "missing Authorization header");
    }
    let reply = post(
        &f.agent,
        &url,
        None,
        Some("application/json"),
        r#"{"jsonrpc":"2.0","id":"abc","method":"x"}"#,
    );
    assert_unauthorized(&reply, json!("abc"), "missing Authorization header");
}

#[test]
fn credentials_are_checked_for_every_method_and_a_rotated_key_stops_working() {
    let f = Fixture::start();
    let old_key = f.a.server_key.clone();
    let rotated = f.devnet.store().rotate_server_key(&f.a.project_id).unwrap();
    let url = f.devnet.user_rpc_url();
    for method in ["getUserInfo", "getUserInfoByIdentity", "isProjectUser"] {
        let body =
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": ["a", "b"]}).to_string();
        let reply = post(
            &f.agent,
            &url,
            Some(&basic(&f.a.project_id, &old_key)),
            Some("application/json"),
            &body,
        );
        assert_eq!(reply.status, 401, "{method}");
        let reply = post(
            &f.agent,
            &url,
            Some(&basic(&f.a.project_id, &rotated.server_key)),
            Some("application/json"),
            &body,
        );
        assert_eq!(reply.status, 200, "{method}");
    }
}

fn base64_of(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}
