//! The client's unit tests: arguments, envelopes and batch answers (pure), and the batch and
//! async calls against an in-process devnet.

use base64::Engine as _;
use serde_json::{Value, json};

use super::*;

fn client() -> UserRpcClient {
    UserRpcClient::new(
        "http://127.0.0.1:9/user-rpc",
        "proj",
        "sk_secret",
        UserRpcClientOptions::default(),
    )
    .unwrap()
}

#[test]
fn debug_never_shows_the_key() {
    let text = format!("{:?}", client());
    assert!(!text.contains("sk_secret"), "{text}");
    assert!(!text.contains(&base64::engine::general_purpose::STANDARD.encode("proj:sk_secret")));
    assert!(text.contains("<redacted>"));
}

#[test]
fn constructor_rejects_bad_config() {
    let o = UserRpcClientOptions::default;
    let e = UserRpcClient::new("ftp://x", "p", "k", o()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Configuration);
    assert!(e.message().contains("ftp://x"));
    let e = UserRpcClient::new("http://me:sk_secret@host/", "p", "k", o()).unwrap_err();
    assert!(!e.message().contains("sk_secret"), "{e}");
    assert!(UserRpcClient::new("http://h/", "", "k", o()).is_err());
    assert!(
        UserRpcClient::new("http://h/", "a:b", "k", o()).unwrap_err().message().contains("\"a:b\"")
    );
    assert!(UserRpcClient::new("http://h/", "p", "", o()).is_err());
    assert!(UserRpcClient::new("http:///x", "p", "k", o()).is_err());
}

#[test]
fn arguments_are_checked_before_any_request() {
    // Port 9 (discard) on loopback is closed: reaching the network would be a Network error.
    let c = client();
    let e = c.get_user_info("not-a-uuid", "tok").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Configuration);
    assert!(e.message().contains("\"not-a-uuid\""));
    let e = c.get_user_info("0b0c1a9e8f7d4e3a9b2c1d0e9f8a7b6c", "tok").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Configuration, "the hyphen-less form is not accepted");
    let e = c.get_user_info("0b0c1a9e-8f7d-4e3a-9b2c-1d0e9f8a7b6c", "").unwrap_err();
    assert_eq!(e.message(), "session token is empty");
    let e = c.get_user_info_by_identity("google", "u1").unwrap_err();
    assert!(e.message().contains("\"google\""));
    let e = c.is_project_user("bitcoin", "x").unwrap_err();
    assert!(e.message().contains("\"bitcoin\""));
    let e = c.is_project_user("evm_chain", "0x123").unwrap_err();
    assert!(e.message().contains("\"0x123\""), "{e}");
    let e = c.is_project_user("solana", "0x52908400098527886E0F7030069857D2E4169EE7").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Configuration);
}

#[test]
fn interprets_envelopes() {
    let c = client();
    let reply = |status, body: &str| Reply { status, body: body.into() };
    let ok = c.inner.interpret(
        "isProjectUser",
        5,
        reply(200, r#"{"jsonrpc":"2.0","id":5,"result":true}"#),
    );
    assert_eq!(ok.unwrap(), Value::Bool(true));
    let e = c
        .inner
        .interpret("m", 5, reply(200, r#"{"jsonrpc":"2.0","id":6,"result":true}"#))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol);
    assert!(e.message().contains("response id 6 does not match request id 5"), "{e}");
    let e = c.inner.interpret("m", 5, reply(200, "<html>")).unwrap_err();
    assert!(e.message().contains("not JSON"), "{e}");
    let body = r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32010,"message":"user x not found","data":{"uuid":"x"}}}"#;
    let e = c.inner.interpret("getUserInfo", 5, reply(200, body)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    let rpc = e.rpc_error().unwrap();
    assert_eq!((rpc.code, rpc.message.as_str()), (-32010, "user x not found"));
    assert_eq!(rpc.data, Some(json!({"uuid": "x"})));
    let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"unauthorized"}}"#;
    let e = c.inner.interpret("getUserInfo", 5, reply(401, body)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication);
    let body = r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"bad params"}}"#;
    assert_eq!(c.inner.interpret("m", 5, reply(200, body)).unwrap_err().kind(), ErrorKind::Rpc);
}

#[test]
fn user_records() {
    let mut record = json!({
        "uuid": "0b0c1a9e-8f7d-4e3a-9b2c-1d0e9f8a7b6c", "email": "a@b.c", "phone": null,
        "createdAt": "2022-06-08T07:47:54.000Z", "updatedAt": "2022-06-08T07:47:54.000Z",
        "wallets": [{"chain": "evm_chain", "publicAddress": "0x52908400098527886E0F7030069857D2E4169EE7"}],
        "someFutureField": 1
    });
    let user = User::from_result("getUserInfo", record.clone()).unwrap();
    assert_eq!(user.created_at, "2022-06-08T07:47:54.000Z");
    assert_eq!(user.created_at_time().unwrap().timestamp_millis(), 1_654_674_474_000);
    assert_eq!(user.wallets[0].public_address, "0x52908400098527886E0F7030069857D2E4169EE7");
    assert_eq!(user.to_json()["createdAt"], "2022-06-08T07:47:54.000Z");
    record.as_object_mut().unwrap().remove("email");
    let e = User::from_result("getUserInfo", record.clone()).unwrap_err();
    assert!(e.message().contains("missing field `email`"), "{e}");
    record["email"] = json!("a@b.c");
    record["createdAt"] = json!("yesterday");
    let e = User::from_result("getUserInfo", record).unwrap_err();
    assert!(e.message().contains("createdAt \"yesterday\""), "{e}");
}

#[test]
fn interprets_batch_answers_in_request_order() {
    let batch =
        |status, body: &str| interpret_batch_reply("proj", "getUserInfo", &[7, 8, 9], status, body);
    // Answers out of order, one error, one missing: outcomes in request order, typed per item.
    let body = r#"[
        {"jsonrpc":"2.0","id":9,"result":{"n":9}},
        {"jsonrpc":"2.0","id":7,"error":{"code":-32010,"message":"user not found"}}
    ]"#;
    let outcomes = batch(200, body).unwrap();
    assert_eq!(outcomes.len(), 3);
    assert_eq!(outcomes[0].as_ref().unwrap_err().kind(), ErrorKind::NotFound);
    let missing = outcomes[1].as_ref().unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::Protocol);
    assert!(missing.message().contains("no answer to id 8"), "{missing}");
    assert_eq!(outcomes[2].as_ref().unwrap(), &json!({"n": 9}));
    let body = r#"[{"jsonrpc":"2.0","id":7,"error":{"code":-32011,"message":"bad token"}}]"#;
    assert_eq!(
        batch(200, body).unwrap()[0].as_ref().unwrap_err().kind(),
        ErrorKind::Authentication
    );
    // Errors of the whole batch.
    let e = batch(401, r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"no"}}"#)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication);
    let e =
        batch(200, r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"too large"}}"#)
            .unwrap_err();
    assert_eq!((e.kind(), e.rpc_error().unwrap().code), (ErrorKind::Rpc, -32600));
    let e = batch(200, r#"{"jsonrpc":"2.0","id":7,"result":1}"#).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol);
    let e = batch(200, "[1]").unwrap_err();
    assert!(e.message().contains("a batch response item is a number"), "{e}");
    assert_eq!(batch(200, "nope").unwrap_err().kind(), ErrorKind::Protocol);
    assert_eq!(batch(500, "[]").unwrap_err().kind(), ErrorKind::Protocol);
}

/// A devnet with one project and two users with sessions: (devnet, project, key, [(uuid, token)]).
fn devnet_users() -> (depositkit_devnet::RunningDevnet, String, String, Vec<(String, String)>) {
    use depositkit_devnet::{Devnet, DevnetConfig, NewUser};
    let dir = std::env::temp_dir().join(format!(
        "depositkit-users-unit-{}-{}",
        std::process::id(),
        next_dir()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let devnet = Devnet::start(DevnetConfig::new(dir.join("devnet.sqlite"))).unwrap();
    let store = devnet.store();
    let project = store.create_project("batch").unwrap();
    let expires = std::time::SystemTime::now() + Duration::from_secs(3600);
    let users = ["ada@example.com", "bob@example.com"]
        .iter()
        .map(|email| {
            let user = store.add_user(&project.project_id, &NewUser::with_email(*email)).unwrap();
            let token = store.add_session(&user, expires).unwrap();
            (user, token)
        })
        .collect();
    (devnet, project.project_id, project.server_key, users)
}

fn next_dir() -> u32 {
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed) as u32
}

#[test]
fn a_batch_is_one_request_with_typed_outcomes_in_order() {
    let (devnet, project, key, users) = devnet_users();
    let client =
        UserRpcClient::new(&devnet.user_rpc_url(), &project, &key, UserRpcClientOptions::default())
            .unwrap();
    let unknown = "0b0c1a9e-8f7d-4e3a-9b2c-1d0e9f8a7b6c";
    let requests = [
        (users[1].0.as_str(), users[1].1.as_str()),
        ("not-a-uuid", "x"),
        (unknown, "tok"),
        (users[0].0.as_str(), users[0].1.as_str()),
        (users[0].0.as_str(), users[1].1.as_str()),
    ];
    let outcomes = client.get_users_info(&requests).unwrap();
    assert_eq!(outcomes.len(), 5);
    assert_eq!(outcomes[0].as_ref().unwrap().email, "bob@example.com");
    assert_eq!(outcomes[1].as_ref().unwrap_err().kind(), ErrorKind::Configuration);
    assert_eq!(outcomes[2].as_ref().unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(outcomes[3].as_ref().unwrap().email, "ada@example.com");
    assert_eq!(outcomes[4].as_ref().unwrap_err().kind(), ErrorKind::Authentication);
    assert!(client.get_users_info::<&str, &str>(&[]).unwrap().is_empty());
    // Wrong credentials fail the whole batch.
    let bad = UserRpcClient::new(&devnet.user_rpc_url(), &project, "sk_wrong", Default::default())
        .unwrap();
    let e = bad.get_users_info(&requests).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication);
}

#[test]
fn async_calls_run_on_the_runtime_and_answer_like_the_sync_ones() {
    let (devnet, project, key, users) = devnet_users();
    let client =
        UserRpcClient::new(&devnet.user_rpc_url(), &project, &key, UserRpcClientOptions::default())
            .unwrap();
    let (uuid, token) = users[0].clone();
    let lookups: Vec<_> = (0..50).map(|_| client.get_user_info_async(&uuid, &token)).collect();
    let batch = client.get_users_info_async(users.clone());
    let bad = client.get_user_info_async("nope", "x");
    // Polled by another runtime: the futures only wait for the depositkit runtime's pool.
    let other = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    other.block_on(async move {
        for lookup in lookups {
            assert_eq!(lookup.await.unwrap().email, "ada@example.com");
        }
        let outcomes = batch.await.unwrap();
        assert_eq!(outcomes[1].as_ref().unwrap().email, "bob@example.com");
        assert_eq!(bad.await.unwrap_err().kind(), ErrorKind::Configuration);
    });
    let member = other.block_on(
        client.is_project_user_async("evm_chain", "0x52908400098527886E0F7030069857D2E4169EE7"),
    );
    assert!(!member.unwrap());
    let e = other.block_on(client.get_user_info_by_identity_async("jwt", "nobody")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
}
