//! The three methods over real HTTP: successes and every application error.

mod common;

use common::*;
use depositkit_devnet::codes;
use depositkit_devnet::{NewUser, User};
use serde_json::{Value, json};

#[test]
fn get_user_info_returns_the_user_record() {
    let f = Fixture::start();
    let response = f.call("getUserInfo", json!([f.a.user, f.a.token]));
    assert_eq!(response["jsonrpc"], "2.0");
    assert_eq!(response["id"], 1);
    let result = &response["result"];
    let expected_keys = [
        "uuid",
        "phone",
        "email",
        "name",
        "avatar",
        "facebookId",
        "facebookEmail",
        "googleId",
        "googleEmail",
        "appleId",
        "appleEmail",
        "twitterId",
        "twitterEmail",
        "telegramId",
        "telegramPhone",
        "discordId",
        "discordEmail",
        "githubId",
        "githubEmail",
        "twitchId",
        "twitchEmail",
        "microsoftId",
        "microsoftEmail",
        "linkedinId",
        "linkedinEmail",
        "createdAt",
        "updatedAt",
        "wallets",
    ];
    let mut keys: Vec<&str> = result.as_object().unwrap().keys().map(String::as_str).collect();
    let mut expected_keys = expected_keys.to_vec();
    keys.sort_unstable();
    expected_keys.sort_unstable();
    assert_eq!(keys, expected_keys);
    assert_eq!(result["uuid"], f.a.user);
    assert_eq!(result["email"], "a@example.com");
    assert_eq!(result["googleId"], "google-a");
    assert_eq!(result["googleEmail"], "a@gmail.example");
    assert_eq!(result["phone"], Value::Null);
    assert_eq!(result["telegramPhone"], Value::Null);
    assert_eq!(
        result["wallets"],
        json!([
            {"chain": "evm_chain", "publicAddress": EVM_A.to_lowercase()},
            {"chain": "solana", "publicAddress": SOL_A},
        ])
    );
    for stamp in ["createdAt", "updatedAt"] {
        let text = result[stamp].as_str().unwrap();
        assert_eq!(text.len(), "2022-06-08T07:47:54.000Z".len(), "{text}");
        assert!(text.ends_with('Z') && text.as_bytes()[19] == b'.', "{text}");
        chrono::DateTime::parse_from_rfc3339(text).unwrap();
    }
    let user: User = serde_json::from_value(result.clone()).unwrap();
    assert_eq!(user.uuid, f.a.user);
}

#[test]
fn get_user_info_accepts_an_upper_case_uuid() {
    let f = Fixture::start();
    let response = f.call("getUserInfo", json!([f.a.user.to_uppercase(), f.a.token]));
    assert_eq!(response["result"]["uuid"], f.a.user);
}

#[test]
fn get_user_info_rejects_bad_tokens_without_echoing_them() {
    let f = Fixture::start();
    let cases = [
        ("st_not-a-real-token", "unknown"),
        (f.a.expired_token.as_str(), "expired"),
        // A valid token, but of another user (in another project).
        (f.b.token.as_str(), "unknown"),
        ("", "unknown"),
    ];
    for (token, reason) in cases {
        let response = f.call("getUserInfo", json!([f.a.user, token]));
        let error = expect_error(&response, codes::INVALID_TOKEN);
        assert_eq!(error["data"]["reason"], reason, "{response}");
        assert_eq!(response["id"], 1);
        if !token.is_empty() {
            assert!(!response.to_string().contains(token), "token echoed: {response}");
        }
    }
}

#[test]
fn token_of_another_user_of_the_same_project_is_rejected() {
    let f = Fixture::start();
    let store = f.devnet.store();
    let other = store.add_user(&f.a.project_id, &NewUser::with_email("other@example.com")).unwrap();
    let response = f.call("getUserInfo", json!([other, f.a.token]));
    expect_error(&response, codes::INVALID_TOKEN);
}

#[test]
fn unknown_users_and_users_of_other_projects_are_not_found() {
    let f = Fixture::start();
    let missing = "0b7c5a4e-3f1d-4c2a-9e8b-1a2b3c4d5e6f";
    let response = f.call("getUserInfo", json!([missing, f.a.token]));
    let error = expect_error(&response, codes::USER_NOT_FOUND);
    assert_eq!(error["message"], format!("user {missing} not found"));

    // User b exists, with a valid token, but belongs to project b.
    let response = f.call("getUserInfo", json!([f.b.user, f.b.token]));
    let error = expect_error(&response, codes::USER_NOT_FOUND);
    assert_eq!(error["message"], format!("user {} not found", f.b.user));
    // ... and project b sees it.
    let response = f.call_as(&f.b, "getUserInfo", json!([f.b.user, f.b.token]));
    assert_eq!(response["result"]["email"], "b@example.com");
}

#[test]
fn get_user_info_by_identity() {
    let f = Fixture::start();
    let response = f.call("getUserInfoByIdentity", json!(["jwt", f.a.jwt_uid]));
    assert_eq!(response["result"]["uuid"], f.a.user);
    assert_eq!(response["result"]["wallets"].as_array().unwrap().len(), 2);

    let response = f.call("getUserInfoByIdentity", json!(["google", f.a.jwt_uid]));
    let error = expect_error(&response, codes::UNSUPPORTED_PROVIDER);
    assert_eq!(error["message"], "provider \"google\" is not supported; only \"jwt\"");

    let response = f.call("getUserInfoByIdentity", json!(["jwt", "nobody"]));
    expect_error(&response, codes::IDENTITY_NOT_FOUND);

    // Project b's identity is invisible to project a.
    let response = f.call("getUserInfoByIdentity", json!(["jwt", f.b.jwt_uid]));
    expect_error(&response, codes::IDENTITY_NOT_FOUND);
}

#[test]
fn is_project_user_checks_wallets_and_interactions() {
    let f = Fixture::start();
    let cases = [
        ("evm_chain", EVM_A.to_string(), true),
        ("evm_chain", EVM_A.to_lowercase(), true),
        ("evm_chain", format!("0x{}", EVM_A[2..].to_uppercase()), true),
        ("evm_chain", EVM_INTERACTED.to_lowercase(), true),
        ("evm_chain", EVM_UNKNOWN.to_string(), false),
        // Project b's wallet is not project a's.
        ("evm_chain", EVM_B.to_string(), false),
        ("solana", SOL_A.to_string(), true),
        ("solana", SOL_INTERACTED.to_string(), true),
        ("solana", SOL_UNKNOWN.to_string(), false),
        ("solana", SOL_B.to_string(), false),
        // Solana addresses compare exactly.
        ("solana", format!("{}w", &SOL_A[..SOL_A.len() - 1]), false),
        ("evm_chain", format!("0x{}", "0".repeat(40)), false),
    ];
    for (chain, address, expected) in cases {
        let response = f.call("isProjectUser", json!([chain, address]));
        assert_eq!(response["result"], expected, "{chain} {address}: {response}");
    }
    let response = f.call_as(&f.b, "isProjectUser", json!(["evm_chain", EVM_B.to_lowercase()]));
    assert_eq!(response["result"], true);
}

#[test]
fn is_project_user_rejects_bad_chains_and_addresses() {
    let f = Fixture::start();
    let cases = [
        (json!(["bitcoin", EVM_A]), 0, "param 0 (chain) must be \"solana\" or \"evm_chain\""),
        (json!(["EVM_CHAIN", EVM_A]), 0, "param 0 (chain)"),
        (json!(["evm_chain", "0x1234"]), 1, "param 1 (address)"),
        (json!(["solana", EVM_A]), 1, "is not a solana address"),
        (json!(["solana", "0OIl"]), 1, "param 1 (address)"),
    ];
    for (params, param, message) in cases {
        let response = f.call("isProjectUser", params.clone());
        let error = expect_error(&response, codes::INVALID_PARAMS);
        assert_eq!(error["data"]["param"], param, "{params}");
        let text = error["message"].as_str().unwrap();
        assert!(text.contains(message), "{text} lacks {message}");
    }
}

#[test]
fn wrong_param_counts_and_types_are_invalid_params() {
    let f = Fixture::start();
    let cases = [
        ("getUserInfo", json!([f.a.user]), "getUserInfo expects 2 params [uuid, token], got 1"),
        ("getUserInfo", json!([]), "got 0"),
        ("getUserInfo", json!([f.a.user, f.a.token, "x"]), "got 3"),
        ("getUserInfo", json!([f.a.user, 5]), "param 1 (token) must be a string, got a number"),
        ("getUserInfo", json!([null, f.a.token]), "param 0 (uuid) must be a string, got null"),
        (
            "getUserInfo",
            json!(["not-a-uuid", f.a.token]),
            "param 0 (uuid) \"not-a-uuid\" is not a UUID",
        ),
        ("getUserInfoByIdentity", json!(["jwt"]), "expects 2 params [provider, uid]"),
        (
            "getUserInfoByIdentity",
            json!([["jwt"], "u"]),
            "param 0 (provider) must be a string, got an array",
        ),
        (
            "isProjectUser",
            json!(["solana", SOL_A, SOL_A]),
            "expects 2 params [chain, address], got 3",
        ),
        ("isProjectUser", json!([{"chain": "solana"}, SOL_A]), "got an object"),
    ];
    for (method, params, message) in cases {
        let response = f.call(method, params.clone());
        let error = expect_error(&response, codes::INVALID_PARAMS);
        let text = error["message"].as_str().unwrap();
        assert!(text.contains(message), "{method} {params}: {text:?} lacks {message:?}");
    }
    // Missing params count as none.
    let reply = f.post(r#"{"jsonrpc":"2.0","id":9,"method":"isProjectUser"}"#);
    expect_error(&reply.json(), codes::INVALID_PARAMS);
}

#[test]
fn unknown_method() {
    let f = Fixture::start();
    let response = f.call("getUserinfo", json!([]));
    let error = expect_error(&response, codes::METHOD_NOT_FOUND);
    assert_eq!(error["message"], "method \"getUserinfo\" not found");
    assert_eq!(
        error["data"]["methods"],
        json!(["getUserInfo", "getUserInfoByIdentity", "isProjectUser"])
    );
}
