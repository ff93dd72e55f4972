//! The JSON-RPC service over HTTP on 127.0.0.1, against both stores: answers, authentication
//! failures and bad input as typed JSON-RPC errors naming the value (`docs/user-rpc.md`).

mod common;

use std::time::{Duration, SystemTime};

use common::{Backend, Database, EVM, SOL, basic, call, get, open, post, runtime};
use depositkit_server::UserStore;
use depositkit_server::rpc::codes;
use depositkit_server::serve::{self, ServeOptions};
use depositkit_server::{ChainFamily, NewUser};
use serde_json::{Value, json};

macro_rules! both_stores {
    ($($test:ident),* $(,)?) => {$(
        mod $test {
            use super::*;
            #[test]
            fn sqlite() {
                super::$test(&Service::start(Backend::Sqlite));
            }
            #[test]
            fn postgres() {
                super::$test(&Service::start(Backend::Postgres));
            }
        }
    )*};
}

both_stores!(
    answers,
    authentication_failures,
    bad_input,
    batches_and_notifications,
    body_limit,
    single_calls_answer_as_the_general_path_does,
);

/// A seeded store served in process on 127.0.0.1 (the server's own routes and options).
struct Service {
    /// Runs the server until the test ends.
    _runtime: tokio::runtime::Runtime,
    url: String,
    base: String,
    project: String,
    key: String,
    user: String,
    token: String,
    expired: String,
    _db: Database,
}

/// Body limit of the in-process service.
const MAX_BODY: usize = 4096;

impl Service {
    fn start(backend: Backend) -> Service {
        let db = Database::new(backend);
        let runtime = runtime();
        let store = open(&runtime, &db);
        let (credentials, user, token, expired) = runtime.block_on(seed(&store));
        let options = ServeOptions { max_body_bytes: MAX_BODY, ..ServeOptions::default() };
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let router = serve::router(store, &options);
        runtime.spawn(serve::serve(
            listener,
            router,
            64,
            Duration::from_secs(1),
            std::future::pending(),
        ));
        Service {
            _runtime: runtime,
            url: format!("{base}/user-rpc"),
            base,
            project: credentials.project_id,
            key: credentials.server_key,
            user,
            token,
            expired,
            _db: db,
        }
    }

    fn call(&self, method: &str, params: Value) -> Value {
        call(&self.url, &self.project, &self.key, method, params).json()
    }
}

async fn seed(
    store: &UserStore,
) -> (depositkit_server::ProjectCredentials, String, String, String) {
    let credentials = store.create_project("shop").await.unwrap();
    let user = store
        .add_user(&credentials.project_id, &NewUser::with_email("a@example.com"))
        .await
        .unwrap();
    store.add_wallet(&user, ChainFamily::Evm, EVM).await.unwrap();
    store.add_identity(&user, "jwt", "uid-1").await.unwrap();
    let hour = Duration::from_secs(3600);
    let token = store.add_session(&user, None, SystemTime::now() + hour).await.unwrap();
    let expired = store.add_session(&user, None, SystemTime::now() - hour).await.unwrap();
    (credentials, user, token, expired)
}

fn error_of(reply: &Value) -> (i64, String) {
    let error = &reply["error"];
    (
        error["code"].as_i64().unwrap_or_else(|| panic!("no error in {reply}")),
        error["message"].as_str().unwrap().to_owned(),
    )
}

fn answers(service: &Service) {
    let reply = service.call("getUserInfo", json!([service.user, service.token]));
    assert_eq!(reply["id"], 7);
    assert_eq!(reply["result"]["uuid"], service.user.as_str(), "{reply}");
    assert_eq!(reply["result"]["email"], "a@example.com");
    assert_eq!(reply["result"]["wallets"][0]["publicAddress"], EVM.to_lowercase());
    let (code, message) =
        error_of(&service.call("getUserInfo", json!([service.user, service.expired])));
    assert_eq!(code, codes::INVALID_TOKEN);
    assert!(message.contains("expired") && !message.contains(&service.expired), "{message}");
    let (code, _) = error_of(&service.call("getUserInfo", json!([service.user, "st_nope"])));
    assert_eq!(code, codes::INVALID_TOKEN);
    let nobody = "00000000-0000-4000-8000-000000000000";
    let (code, message) = error_of(&service.call("getUserInfo", json!([nobody, service.token])));
    assert_eq!((code, message.contains(nobody)), (codes::USER_NOT_FOUND, true), "{message}");

    let reply = service.call("getUserInfoByIdentity", json!(["jwt", "uid-1"]));
    assert_eq!(reply["result"]["uuid"], service.user.as_str());
    let (code, message) = error_of(&service.call("getUserInfoByIdentity", json!(["jwt", "uid-2"])));
    assert_eq!(
        (code, message.contains("\"uid-2\"")),
        (codes::IDENTITY_NOT_FOUND, true),
        "{message}"
    );
    let (code, message) = error_of(&service.call("getUserInfoByIdentity", json!(["google", "x"])));
    assert_eq!(
        (code, message.contains("\"google\"")),
        (codes::UNSUPPORTED_PROVIDER, true),
        "{message}"
    );

    assert_eq!(
        service.call("isProjectUser", json!(["evm_chain", EVM.to_lowercase()]))["result"],
        true
    );
    assert_eq!(service.call("isProjectUser", json!(["solana", SOL]))["result"], false);
    assert_eq!(get(&format!("{}/healthz", service.base)).status, 200);
    assert_eq!(get(&format!("{}/readyz", service.base)).status, 200);
    let missing = get(&format!("{}/devnet/health", service.base));
    assert_eq!(missing.status, 404, "no emulator endpoints");
}

fn authentication_failures(service: &Service) {
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "isProjectUser", "params": ["solana", SOL]})
            .to_string();
    let cases = [
        (None, "missing Authorization header"),
        (Some("Bearer abc".to_owned()), "the Authorization scheme must be Basic"),
        (
            Some("Basic !!!".to_owned()),
            "the Basic credentials are not base64 of project_id:server_key",
        ),
        (Some(basic(&service.project, "sk_wrong")), "unknown project id or wrong server key"),
        (
            Some(basic("00000000-0000-4000-8000-000000000000", &service.key)),
            "unknown project id or wrong server key",
        ),
        (Some(basic("not-a-uuid", &service.key)), "unknown project id or wrong server key"),
    ];
    for (auth, reason) in cases {
        let reply = post(&service.url, auth.as_deref(), &body);
        assert_eq!(reply.status, 401, "{auth:?}: {}", reply.body);
        assert_eq!(reply.header("www-authenticate"), Some("Basic realm=\"depositkit\""));
        let json = reply.json();
        assert_eq!(json["error"]["code"], codes::UNAUTHORIZED);
        assert_eq!(json["error"]["data"]["reason"], reason);
        assert_eq!(json["id"], 1);
        assert!(!reply.body.contains("sk_wrong") && !reply.body.contains(&service.key));
    }
}

fn bad_input(service: &Service) {
    let cases = [
        (
            "getUserInfo",
            json!(["not-a-uuid", "t"]),
            codes::INVALID_PARAMS,
            "\"not-a-uuid\" is not a UUID",
        ),
        ("getUserInfo", json!([service.user]), codes::INVALID_PARAMS, "expects 2 params"),
        (
            "getUserInfo",
            json!({"uuid": service.user, "token": "t"}),
            codes::INVALID_PARAMS,
            "positional params",
        ),
        ("isProjectUser", json!(["bitcoin", SOL]), codes::INVALID_PARAMS, "got \"bitcoin\""),
        (
            "isProjectUser",
            json!(["evm_chain", "0x12"]),
            codes::INVALID_PARAMS,
            "\"0x12\" is not a evm_chain address",
        ),
        (
            "isProjectUser",
            json!(["solana", 5]),
            codes::INVALID_PARAMS,
            "must be a string, got a number",
        ),
        ("deleteUser", json!([]), codes::METHOD_NOT_FOUND, "method \"deleteUser\" not found"),
    ];
    for (method, params, code, text) in cases {
        let (got, message) = error_of(&service.call(method, params.clone()));
        assert_eq!(got, code, "{method} {params}: {message}");
        assert!(message.contains(text), "{message:?} lacks {text:?}");
    }
    let auth = basic(&service.project, &service.key);
    let reply = post(&service.url, Some(&auth), "{not json");
    assert_eq!(reply.json()["error"]["code"], codes::PARSE_ERROR);
    let reply = post(&service.url, Some(&auth), r#"{"jsonrpc": "1.0", "id": 3, "method": "x"}"#);
    assert_eq!(
        (reply.json()["error"]["code"].as_i64(), reply.json()["id"].as_i64()),
        (Some(codes::INVALID_REQUEST), Some(3))
    );
    let wrong_type = common::agent()
        .post(&service.url)
        .header("Authorization", &auth)
        .header("Content-Type", "text/plain")
        .send("{}")
        .unwrap();
    assert_eq!(wrong_type.status().as_u16(), 415);
    assert_eq!(get(&service.url).status, 405);
}

/// A single call with two plain string params is read and answered without `serde_json::Value`
/// trees (`depositkit_server::single_call`); the same call with `"jsonrpc"` written with an
/// escape goes the general way. Both get the same status, headers and bytes.
fn single_calls_answer_as_the_general_path_does(service: &Service) {
    let nobody = "00000000-0000-4000-8000-000000000000";
    let calls = [
        ("getUserInfo", [service.user.as_str(), service.token.as_str()]),
        ("getUserInfo", [&service.user.to_uppercase(), &service.token]),
        ("getUserInfo", [&service.user, &service.expired]),
        ("getUserInfo", [&service.user, "st_nope"]),
        ("getUserInfo", [nobody, &service.token]),
        ("getUserInfo", ["not-a-uuid", "t"]),
        ("isProjectUser", ["evm_chain", EVM]),
        ("isProjectUser", ["solana", SOL]),
        ("isProjectUser", ["bitcoin", SOL]),
        ("getUserInfoByIdentity", ["jwt", "uid-1"]),
        ("getUserInfoByIdentity", ["jwt", "uid-2"]),
        ("getUserInfoByIdentity", ["google", "x"]),
        ("deleteUser", ["a", "b"]),
    ];
    let right = basic(&service.project, &service.key);
    let wrong = basic(&service.project, "sk_wrong");
    for (method, [first, second]) in calls {
        for id in ["7", "\"abc\"", "null", "-1", "18446744073709551615", ""] {
            for auth in [&right, &wrong] {
                let id = if id.is_empty() { String::new() } else { format!(r#""id":{id},"#) };
                let body = |version: &str| {
                    format!(
                        r#"{{"jsonrpc":"{version}",{id}"method":"{method}","params":["{first}","{second}"]}}"#
                    )
                };
                let fast = post(&service.url, Some(auth), &body("2.0"));
                let general = post(&service.url, Some(auth), &body("\\u0032.0"));
                let case = body("2.0");
                assert_eq!(fast.status, general.status, "{case}");
                assert_eq!(fast.body, general.body, "{case}");
                assert_eq!(fast.header("content-type"), general.header("content-type"), "{case}");
                let challenge = "www-authenticate";
                assert_eq!(fast.header(challenge), general.header(challenge), "{case}");
                if auth == &right && id.is_empty() {
                    assert_eq!(fast.status, 204, "{case}: {}", fast.body);
                } else if auth == &right && method == "isProjectUser" && first == "evm_chain" {
                    assert!(fast.body.contains(r#""result":true"#), "{case}: {}", fast.body);
                }
            }
        }
    }
}

fn batches_and_notifications(service: &Service) {
    let auth = basic(&service.project, &service.key);
    let batch = json!([
        {"jsonrpc": "2.0", "id": "a", "method": "isProjectUser", "params": ["evm_chain", EVM]},
        {"jsonrpc": "2.0", "method": "isProjectUser", "params": ["solana", SOL]},
        {"jsonrpc": "2.0", "id": "b", "method": "getUserInfoByIdentity", "params": ["jwt", "uid-1"]}
    ]);
    let reply = post(&service.url, Some(&auth), &batch.to_string()).json();
    let replies = reply.as_array().unwrap();
    assert_eq!(replies.len(), 2, "the notification gets no reply: {reply}");
    assert_eq!(
        (replies[0]["id"].as_str(), replies[0]["result"].as_bool()),
        (Some("a"), Some(true))
    );
    assert_eq!(replies[1]["result"]["uuid"], service.user.as_str());
    let note = json!({"jsonrpc": "2.0", "method": "isProjectUser", "params": ["solana", SOL]});
    assert_eq!(post(&service.url, Some(&auth), &note.to_string()).status, 204);
}

fn body_limit(service: &Service) {
    let auth = basic(&service.project, &service.key);
    let padding = "x".repeat(MAX_BODY);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "isProjectUser", "params": ["solana", SOL], "pad": padding});
    let reply = post(&service.url, Some(&auth), &body.to_string());
    assert_eq!(reply.status, 413, "{}", reply.body);
    assert_eq!(reply.json()["error"]["data"]["maxBodyBytes"], MAX_BODY);
    // The server still answers afterwards.
    assert_eq!(service.call("isProjectUser", json!(["solana", SOL]))["result"], false);
}
